#!/usr/bin/env bash
# Builds stepmap and prints what one node server (stepmap-stepd) costs from
# the plan text to ready as the step grows from 64 to 1M ranks, time and
# peak memory, each against a 1-node step (tests/bench/node_ready_bench.cpp).
# Needs no cluster; as root the server runs as nobody (it refuses root).
#   contrib/bench/node-ready.sh [--nodes 1,16,256,2048,16384] [--reps 3]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec "$build/tests/bench/node_ready_bench" --server "$STEPMAP_SERVER" "$@"
