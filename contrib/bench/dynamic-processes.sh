#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints the
# MPI_Comm_spawn (1, 4, 8 children), MPI-4 sessions' communicator and
# connect/accept comparison with Open MPI 5's mpirun
# (tests/bench/dynamic_processes.py; needs Open MPI 5, built by
# contrib/openmpi/build-openmpi5.sh).
#   contrib/bench/dynamic-processes.sh [--rounds N] [--ranks 4,8] [--only accept|spawn|sessions]
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export STEPMAP_OMPI5_PREFIX=${STEPMAP_OMPI5_PREFIX:-/opt/openmpi-5.0.10}
exec python3 "$repo/tests/bench/dynamic_processes.py" "$@"
