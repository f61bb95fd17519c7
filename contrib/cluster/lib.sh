# shellcheck shell=bash disable=SC2034
# Shared by start.sh and stop.sh (sourced, not run). Bash only.
#
# Everything the test cluster owns lives under ONE directory, $STATE:
#   etc/    slurm.conf cgroup.conf mpi.conf plugstack.conf job_container.conf (generated)
#   munge/  munge.key munged.pid munged.log munged.seed munge.socket.2
#   log/    slurmctld.log slurmd.nK.log
#   run/    slurmctld.pid slurmd.nK.pid plugin.stamp
#   spool/  ctld/ (StateSaveLocation), slurmd.nK/ (SlurmdSpoolDir)
#   pmix-cli/  mount point; each slurmd has its own private tmpfs here
#   env.sh  what callers source (SLURM_CONF, Open MPI settings)

# STEPMAP_SLURM_PREFIX: run a Slurm installed under its own prefix
# (contrib/slurm/build-release.sh) instead of Debian's; its state lives in a
# directory of its own.
SLURM_PREFIX=${STEPMAP_SLURM_PREFIX:-}
if [ -n "$SLURM_PREFIX" ]; then
	PATH=$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH
	export PATH
	# Not under /tmp: with EntireStepInNS (24.11+) slurmstepd runs in the
	# job's private /tmp and must still reach its spool and log directories.
	STATE=${STEPMAP_CLUSTER_DIR:-/var/tmp/stepmap-cluster-$(basename "$SLURM_PREFIX")}
else
	STATE=${STEPMAP_CLUSTER_DIR:-/var/tmp/stepmap-cluster}
fi
CONF=$STATE/etc/slurm.conf
MUNGE_SOCKET=$STATE/munge/munge.socket.2
TEST_USER=smuser
NODES=(n1 n2 n3 n4)
# slurmctld listens on CTLD_PORT, node nK on CTLD_PORT+K.
CTLD_PORT=${STEPMAP_CLUSTER_PORT:-17000}
TIMEOUT=${STEPMAP_CLUSTER_TIMEOUT:-30}
CGROOT=/sys/fs/cgroup

_prog=$(basename "$0")
say() { echo "$_prog: $*" >&2; }
die() { echo "$_prog: error: $*" >&2; exit 1; }

# Serialise start.sh/stop.sh runs (tests may call them concurrently). fd 9
# must not leak into the daemons: they are started with 9>&-.
lock_state() {
	mkdir -p "$STATE"
	exec 9>"$STATE/.lock"
	flock -w 120 9 || die "timed out waiting for $STATE/.lock (another start.sh/stop.sh?)"
}

node_port() { echo $((CTLD_PORT + ${1#n})); }

# --network hosts: every node is a host of its own on a private network,
# 198.18.0.0/24 (RFC 2544's benchmarking range, never routed off the
# machine). The network namespace "stepmap-head" holds the bridge, slurmctld
# and the login side (srun); node nK has the namespace stepmap-nK with one
# interface, eth0, cabled to the bridge by a veth pair.
NET_PREFIX=198.18.0
HEAD_NS=stepmap-head
HEAD_ADDR=$NET_PREFIX.1
BRIDGE=smbr0
node_ns() { echo "stepmap-$1"; }
node_addr() { echo "$NET_PREFIX.$((10 + ${1#n}))"; }
netns_exists() { [ -e "/run/netns/$1" ]; }

# Runs a command on the login side: in the head's network namespace when
# the nodes are hosts of their own (that is where slurmctld listens).
on_login() {
	if netns_exists "$HEAD_NS"; then nsenter "--net=/run/netns/$HEAD_NS" -- "$@"; else "$@"; fi
}

# Removes the namespaces (and with them every veth and the bridge). Their
# processes must be gone: a namespace with a process in it lives on. The
# link emulators of link.sh go first.
remove_network() {
	local ns f p
	for f in "$STATE"/run/link.*.pid; do
		[ -f "$f" ] || continue
		p=$(cat "$f")
		if alive "$p" && grep -qa link_emulator "/proc/$p/cmdline" 2>/dev/null; then
			term_wait 5 "$p"
		fi
		rm -f "$f"
	done
	pkill -KILL -f "^$STATE/run/link_emulator " 2>/dev/null || true
	for ns in "$HEAD_NS" $(for n in "${NODES[@]}"; do node_ns "$n"; done); do
		if netns_exists "$ns"; then ip netns del "$ns" 2>/dev/null || say "warning: could not remove network namespace $ns"; fi
	done
}

# Processes of this cluster with the given command name. The daemons are
# started with SLURM_CONF=$CONF in their environment (slurmstepd inherits it
# from slurmd); munged is recognised by its socket on the command line.
cluster_pids() {
	local comm=$1 p
	for p in $(pgrep -x -- "$comm" || true); do
		if [ "$comm" = munged ]; then
			grep -qzxF -- "--socket=$MUNGE_SOCKET" "/proc/$p/cmdline" 2>/dev/null || continue
		else
			grep -qzxF -- "SLURM_CONF=$CONF" "/proc/$p/environ" 2>/dev/null || continue
		fi
		echo "$p"
	done
}

# PID of the slurmd serving node $1 (empty if none).
slurmd_pid() {
	local p
	for p in $(cluster_pids slurmd); do
		grep -qzxF -- "$1" "/proc/$p/cmdline" 2>/dev/null && { echo "$p"; return; }
	done
	return 0
}

# All processes in this cluster's cgroups (/slurm_nK in every v1 hierarchy).
cgroup_pids() {
	local n f
	for n in "${NODES[@]}"; do
		for f in "$CGROOT"/*/slurm_"$n"; do
			[ -d "$f" ] || continue
			find "$f" -name cgroup.procs -exec cat {} + 2>/dev/null
		done
	done | sort -un
}

# Is PID alive? A zombie counts as gone: PID 1 here may reap orphans late.
alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# wait_gone TIMEOUT PID... : wait until none of the PIDs is alive.
wait_gone() {
	local t=$1 p left end
	shift
	end=$((SECONDS + t))
	while :; do
		left=
		for p in "$@"; do alive "$p" && left+=" $p"; done
		[ -z "$left" ] && return 0
		[ $SECONDS -ge $end ] && return 1
		sleep 0.1
	done
}

# term_wait TIMEOUT PID... : SIGTERM, wait, then SIGKILL what is left.
term_wait() {
	local t=$1
	shift
	[ $# -eq 0 ] && return 0
	kill -TERM "$@" 2>/dev/null || true
	wait_gone "$t" "$@" && return 0
	say "still alive after ${t}s, sending SIGKILL: $*"
	kill -KILL "$@" 2>/dev/null || true
	wait_gone 5 "$@"
}

stop_slurmds() {
	local pids
	pids=$(cluster_pids slurmd)
	# shellcheck disable=SC2086
	term_wait 10 $pids
}

# Kill what is left of jobs: slurmstepd and anything still in our cgroups.
kill_steps() {
	local pids _
	for _ in 1 2 3; do
		pids=$( (cluster_pids slurmstepd; cgroup_pids) | sort -un)
		[ -z "$pids" ] && return 0
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		# shellcheck disable=SC2086
		wait_gone 5 $pids && return 0
	done
	say "warning: processes left in the cluster's cgroups: $pids"
}

# Remove the /slurm_nK cgroup trees (deepest first). Needs them empty.
remove_cgroups() {
	local n f
	for n in "${NODES[@]}"; do
		for f in "$CGROOT"/*/slurm_"$n"; do
			[ -d "$f" ] || continue
			find "$f" -depth -type d -exec rmdir {} + 2>/dev/null ||
				say "warning: could not remove all of $f"
		done
	done
}

stop_all() {
	local pids jobs
	# Let slurmctld end the jobs cleanly first (KillWait=1), then make sure.
	if [ -n "$(cluster_pids slurmctld)" ] && [ -n "$(cluster_pids slurmd)" ]; then
		jobs=$(SLURM_CONF=$CONF on_login timeout 5 squeue -h -o %i 2>/dev/null || true)
		if [ -n "$jobs" ]; then
			# shellcheck disable=SC2086
			SLURM_CONF=$CONF on_login timeout 5 scancel $jobs >/dev/null 2>&1 || true
			pids=$(cluster_pids slurmstepd)
			# shellcheck disable=SC2086
			[ -z "$pids" ] || wait_gone 5 $pids || true
		fi
	fi
	stop_slurmds
	kill_steps
	pids=$(cluster_pids slurmctld)
	# shellcheck disable=SC2086
	term_wait 10 $pids
	pids=$(cluster_pids munged)
	# shellcheck disable=SC2086
	term_wait 5 $pids
	remove_cgroups
	remove_network
	rm -f "$STATE"/run/*.pid "$STATE"/munge/munged.pid "$STATE"/run/plugin.stamp 2>/dev/null || true
}
