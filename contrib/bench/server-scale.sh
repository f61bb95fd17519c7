#!/usr/bin/env bash
# Builds stepmap and runs the node-server scaling harness on this machine
# (no cluster: srun's hub in-process, one stepmap-stepd per pretend node, one
# PMIx client per rank): fence, fence with data, direct modex, step start
# and stop as the node count doubles, with ratios and fitted growth.
#   contrib/bench/server-scale.sh [--nodes 8,16,32,64,128] [--repeat 3] ...
# (options: tests/bench/server_scale.cpp; figures: docs/scaling.md)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export STEPMAP_STEPD=$STEPMAP_SERVER
export STEPMAP_SCALE_CLIENT=$build/tests/bench/scale_client
export STEPMAP_SCALE_TOPOLOGY=$repo/tests/fixtures/topologies/24em64t-2n6c2t-pci.xml
exec "$build/tests/bench/server_scale" "$@"
