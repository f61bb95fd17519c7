# Sourced by the benchmark drivers: builds stepmap and exports where the
# build's plugin, server and test programs are, for tests/e2e/cluster.py.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$("$repo/contrib/build.sh")
export STEPMAP_SOURCE_ROOT=$repo
export STEPMAP_PLUGIN=$build/spank_plugin/stepmap.so
export STEPMAP_SERVER=$build/stepd_server/stepmap-stepd
export STEPMAP_MPI_HELLO=$build/tests/e2e/mpi_hello
export STEPMAP_PMIX_CLIENT=$build/tests/e2e/pmix_topo_client
export STEPMAP_PMIX_FENCE=$build/tests/e2e/pmix_fence
export STEPMAP_MPI_EXCHANGE=$build/tests/e2e/mpi_exchange
export STEPMAP_PROFILE_TOOL=$build/tools/stepmap-profile/stepmap-profile
