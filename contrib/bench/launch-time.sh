#!/usr/bin/env bash
# Builds stepmap, starts the local cluster with the plugin and prints the
# launch-time comparison with Slurm's own mpi/pmix (tests/bench/launch_time.py).
#   contrib/bench/launch-time.sh [--reps N]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$("$repo/contrib/build.sh")
export STEPMAP_SOURCE_ROOT=$repo
export STEPMAP_PLUGIN=$build/spank_plugin/stepmap.so
export STEPMAP_SERVER=$build/stepd_server/stepmap-stepd
export STEPMAP_MPI_HELLO=$build/tests/e2e/mpi_hello
exec python3 "$repo/tests/bench/launch_time.py" "$@"
