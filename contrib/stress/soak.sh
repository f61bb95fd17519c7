#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and runs many
# steps in a row that end every way a step can (success, abort, a dying
# rank, a killed server, a killed srun), checking that nothing is left or
# grows (tests/e2e/soak.py).
#   contrib/stress/soak.sh [--steps 200]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../bench/common.sh"
export PYTHONPATH=$repo/tests/e2e PYTHONDONTWRITEBYTECODE=1
exec python3 "$repo/tests/e2e/soak.py" "$@"
