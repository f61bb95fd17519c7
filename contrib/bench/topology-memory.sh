#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints the
# memory of N local clients: shared-memory topology vs each parsing the XML.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$("$repo/contrib/build.sh")
export STEPMAP_SOURCE_ROOT=$repo
export STEPMAP_PLUGIN=$build/spank_plugin/stepmap.so
export STEPMAP_SERVER=$build/stepd_server/stepmap-stepd
export STEPMAP_PMIX_CLIENT=$build/tests/e2e/pmix_topo_client
exec python3 "$repo/tests/bench/topology_memory.py" "$@"
