#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and runs Open MPI
# launches with direct modex (async modex, no data collection) under CPU
# load; exits non-zero if any launch failed (tests/e2e/modex_stress.py).
#   contrib/stress/direct-modex.sh [--runs 300] [--load 3] [--ranks 6]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../bench/common.sh"
export PYTHONPATH=$repo/tests/e2e PYTHONDONTWRITEBYTECODE=1
exec python3 "$repo/tests/e2e/modex_stress.py" "$@"
