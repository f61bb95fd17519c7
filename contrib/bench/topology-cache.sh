#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and compares a
# step's node-server start with and without the node's topology cache
# (tests/bench/topology_cache.py).
#   contrib/bench/topology-cache.sh [--rounds N]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/topology_cache.py" "$@"
