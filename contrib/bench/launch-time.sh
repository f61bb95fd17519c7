#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints the
# launch-time comparison with Slurm's own mpi/pmix (tests/bench/launch_time.py).
#   contrib/bench/launch-time.sh [--rounds N] [--ranks 4,8,16,32] [--network-model "delay=0.02 rate=10000"]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/launch_time.py" "$@"
