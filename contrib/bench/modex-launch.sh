#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin, profiles its four
# nodes and prints launch times per --modex mode against Slurm's own
# mpi/pmix (tests/bench/modex_launch.py).
#   contrib/bench/modex-launch.sh [--rounds N] [--ranks 4,8,16] [--network-model "delay=0.02 rate=10000"]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/modex_launch.py" "$@"
