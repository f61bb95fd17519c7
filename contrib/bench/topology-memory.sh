#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints the
# memory of N local clients: shared-memory topology vs each parsing the XML.
#   contrib/bench/topology-memory.sh [--clients N ...]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
exec python3 "$repo/tests/bench/topology_memory.py" "$@"
