#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints what
# allocation first costs next to plain srun (tests/bench/allocation_first.py).
#   contrib/bench/allocation-first.sh [--reps N]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/allocation_first.py" "$@"
