#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints what
# the plugin costs a step it does not serve (tests/bench/unserved_tax.py).
#   contrib/bench/unserved-tax.sh [--rounds N]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/unserved_tax.py" "$@"
