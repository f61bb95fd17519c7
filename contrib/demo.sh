#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts a 4-node Slurm cluster on
# this machine, and runs a real srun with stepmap's placement options and an
# Open MPI program, showing the plan and where each rank ran.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it installs packages and starts a Slurm cluster)" >&2; exit 1; }
build=$("$repo/contrib/build.sh")
"$repo/contrib/cluster/start.sh" --plugin "$build/spank_plugin/stepmap.so" \
	--plugin-args "server=$build/stepd_server/stepmap-stepd" >/dev/null
. "${STEPMAP_CLUSTER_DIR:-/tmp/stepmap-cluster}/env.sh"
hello=$build/tests/e2e/mpi_hello

run() {
	echo
	echo "\$ srun $*"
	(cd /tmp && runuser -u smuser -- srun "$@") 2>&1 | sort -k2n -s || true
}
echo "A 4-node Slurm cluster (n1..n4, 2 CPUs each) runs on this machine; jobs run as 'smuser'."
run -n 6 --map-by node --display-map "$hello"
run --host n2,n3 -n 3 --display-map "$hello"
run --host '!^n1' --overbook -n 10 "$hello"
run --host n9 -n 2 "$hello"
echo
echo "Each line: the MPI rank, the Slurm node it ran on, and the PMIx namespace of"
echo "stepmap's per-node server that served it. Stop the cluster with contrib/cluster/stop.sh."
