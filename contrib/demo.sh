#!/usr/bin/env bash
# The demo: installs what is missing, builds what it runs (the plugin, the
# node server and an Open MPI program; the tests build with the test
# command, contrib/run-tests.sh), starts a 4-node Slurm cluster on this
# machine, and runs a real srun with stepmap's placement options and that
# program, showing the plan and where each rank ran.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (it installs packages and starts a Slurm cluster)" >&2; exit 1; }
# What the demo runs, as ninja targets: srun loads stepmap.so, which loads
# stepmap_core.so next to it; the plugin starts stepmap-stepd on each node.
plugin=spank_plugin/stepmap.so core=spank_plugin/stepmap_core.so
server=stepd_server/stepmap-stepd hello=tests/e2e/mpi_hello
build=$(STEPMAP_BUILD_TARGETS="$plugin $core $server $hello" \
	STEPMAP_BUILD_WHAT="the plugin, the node server and the demo's MPI program" \
	"$repo/contrib/build.sh")
# The nodes have /tmp of their own and see this machine's other files, as
# a cluster's nodes see a shared file system: what they run goes there.
shared=/var/tmp/stepmap-demo
mkdir -p "$shared"
cp "$build/$plugin" "$build/$core" "$build/$server" "$build/$hello" "$shared/"
chmod 0755 "$shared" "$shared"/*
echo "demo.sh: starting the cluster (munge, slurmctld and 4 slurmd on this machine)..." >&2
"$repo/contrib/cluster/start.sh" --plugin "$shared/$(basename "$plugin")" \
	--plugin-args "server=$shared/$(basename "$server")" >/dev/null
. "${STEPMAP_CLUSTER_DIR:-/var/tmp/stepmap-cluster}/env.sh"
hello=$shared/$(basename "$hello")

# srun runs on the cluster's login side (contrib/cluster/login), as smuser.
run() {
	echo
	echo "\$ srun $*"
	(cd /tmp && "$repo/contrib/cluster/login" runuser -u smuser -- srun "$@") 2>&1 | sort -k2n -s || true
}
echo "A 4-node Slurm cluster runs on this machine: n1..n4 (2 CPUs each) are hosts of"
echo "their own on a private network (198.18.0.11-14); jobs run as 'smuser'."
run -n 6 --map-by node --display-map "$hello"
# mpirun's --host inside an allocation: a name is one slot, name:N is N.
run --host n2:2,n3 -n 3 --display-map "$hello"
# ParaStation's placement: 10 processes for the 6 CPUs of n2-n4, spread.
run --host '!^n1' --overbook -n 10 "$hello"
# ParaStation's round robin over the nodes; each process pinned to its
# CPU-slot (the map's Bound column, physical cores first).
run --loop-nodes-first -n 8 --display-map "$hello"
echo
echo "A node that is not in the cluster: refused before anything is allocated."
run --host n9 -n 2 "$hello"
echo
echo "Each line: the MPI rank, the Slurm node it ran on, and the PMIx namespace of"
echo "stepmap's per-node server that served it. Stop the cluster with contrib/cluster/stop.sh."
