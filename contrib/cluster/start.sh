#!/usr/bin/env bash
# Start (or keep) a 4-node Slurm test cluster on this one machine.
#
#   contrib/cluster/start.sh [--plugin PATH_TO_stepmap.so] [--plugin-args "k=v ..."]
#                            [--namespace none|tmpfs|tmpfs-entire-step]
#                            [--contain-spank] [--network hosts|shared] [--mpi-ports]
#                            [--restart]
#
# --network hosts (the default): each node is a host of its own: its own
# network namespace (eth0 = 198.18.0.1K on a bridge), hostname, /tmp,
# /dev/shm and /run/munge; slurmctld and srun ("the login node") are
# 198.18.0.1 in the namespace stepmap-head (run commands there with
# contrib/cluster/login). --network shared: the old layout, every node on
# 127.0.0.1 of this machine's network, for machines that cannot make
# network namespaces. --mpi-ports: MpiParams=ports=12000-12999 (Slurm then
# reserves ports for every step; hosts only).
# --namespace: the job's private /tmp and /dev/shm (job_container/tmpfs, or
# namespace/tmpfs from 25.11; tmpfs-entire-step adds EntireStepInNS, 24.11+).
# --contain-spank: SlurmdParameters=contain_spank (with a namespace, SPANK's
# user_init, task_post_fork and task_exit run in a clone inside it).
# STEPMAP_SLURM_PREFIX=/opt/slurm-X runs that Slurm instead of Debian's.
# Idempotent: if the cluster already runs with the same configuration it only
# checks the nodes and returns; a changed plugin path/args only rewrites
# plugstack.conf (see README.md). All state is under
# ${STEPMAP_CLUSTER_DIR:-/var/tmp/stepmap-cluster}. Prints the environment a caller
# needs on stdout (eval "$(start.sh)") and writes it to $STATE/env.sh.
# Progress and errors go to stderr. --restart forces a full restart. Run as root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() {
	if [ "${1:-0}" -eq 0 ]; then sed -n '2,27s/^# \{0,1\}//p' "$0"
	else sed -n '2,27s/^# \{0,1\}//p' "$0" >&2; fi
	exit "${1:-0}"
}

plugin="" plugin_args="" restart=no namespace=none contain_spank=no network=hosts mpi_ports=no
while [ $# -gt 0 ]; do
	case $1 in
	--plugin) [ $# -ge 2 ] || die "--plugin needs a path"; plugin=$2; shift 2 ;;
	--plugin=*) plugin=${1#*=}; shift ;;
	--plugin-args) [ $# -ge 2 ] || die "--plugin-args needs a value"; plugin_args=$2; shift 2 ;;
	--plugin-args=*) plugin_args=${1#*=}; shift ;;
	--restart) restart=yes; shift ;;
	--namespace) [ $# -ge 2 ] || die "--namespace needs none, tmpfs or tmpfs-entire-step"; namespace=$2; shift 2 ;;
	--namespace=*) namespace=${1#*=}; shift ;;
	--contain-spank) contain_spank=yes; shift ;;
	--mpi-ports) mpi_ports=yes; shift ;;
	--network) [ $# -ge 2 ] || die "--network needs hosts or shared"; network=$2; shift 2 ;;
	--network=*) network=${1#*=}; shift ;;
	-h|--help) usage 0 ;;
	*) echo "$_prog: unknown argument: $1" >&2; usage 2 ;;
	esac
done
[ -z "$plugin_args" ] || [ -n "$plugin" ] || die "--plugin-args given without --plugin"
case $namespace in none|tmpfs|tmpfs-entire-step) ;; *) die "--namespace $namespace: use none, tmpfs or tmpfs-entire-step" ;; esac
case $network in hosts|shared) ;; *) die "--network $network: use hosts or shared" ;; esac

# ---------------------------------------------------------------- checks ---
[ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd)"
for c in munged munge slurmctld slurmd slurmstepd sinfo scontrol squeue unshare nsenter mount runuser useradd ip; do
	command -v "$c" >/dev/null ||
		die "'$c' not found; install the packages with contrib/install-deps.sh"
done
if ! [ -d "$CGROOT/cpuset" ] || ! [ -d "$CGROOT/freezer" ] ||
	[ "$(stat -f -c %T "$CGROOT/cpuset")" != cgroupfs ]; then
	die "needs cgroup v1 with the cpuset and freezer controllers mounted at $CGROOT/{cpuset,freezer}"
fi
case $STATE in /*) ;; *) die "STEPMAP_CLUSTER_DIR must be an absolute path: $STATE" ;; esac
if [ $network = hosts ]; then
	case $STATE/ in /tmp/*|/dev/shm/*) die "STEPMAP_CLUSTER_DIR=$STATE: with --network hosts every node has its own /tmp and /dev/shm; put the state directory elsewhere (the default is /var/tmp/stepmap-cluster)" ;; esac
fi
[ ${#MUNGE_SOCKET} -lt 100 ] || die "state dir path too long for a unix socket: $MUNGE_SOCKET"

if [ -n "$plugin" ]; then
	p=$(realpath -e -- "$plugin" 2>/dev/null) || die "plugin not found: $plugin"
	plugin=$p
	[ -f "$plugin" ] || die "plugin is not a file: $plugin"
	case $plugin_args in *$'\n'*) die "--plugin-args must be one line" ;; esac
fi

lock_state  # held until exit

# ------------------------------------------------------------- test user ---
if ! id -u "$TEST_USER" >/dev/null 2>&1; then
	useradd -m -s /bin/bash "$TEST_USER" || die "useradd $TEST_USER failed"
	say "created user $TEST_USER"
fi
if [ -n "$plugin" ]; then
	runuser -u "$TEST_USER" -- test -r "$plugin" ||
		die "$TEST_USER cannot read $plugin (srun runs as $TEST_USER and loads it); fix the permissions of its directories"
fi

# ----------------------------------------------------------- directories ---
chmod 0755 "$STATE"
for d in etc log run munge spool spool/ctld pmix-cli; do
	mkdir -p "$STATE/$d"
	chmod 0755 "$STATE/$d"
done
for n in "${NODES[@]}"; do
	mkdir -p "$STATE/spool/slurmd.$n"
	chmod 0755 "$STATE/spool/slurmd.$n"
done
runuser -u "$TEST_USER" -- test -r "$STATE/etc" -a -x "$STATE/etc" -a -x "$STATE/munge" ||
	die "$TEST_USER cannot reach $STATE (a parent directory is not world-searchable?)"

# --------------------------------------------------------------- configs ---
# The hardware as slurmd sees it (hwloc); every fake node declares all of it
# (cpusets are really constrained, so never declare more than exists).
hw=$(env -u SLURM_CONF slurmd -C 2>/dev/null | head -1) || die "slurmd -C failed"
hwval() { sed -n "s/.*[[:space:]]$1=\([0-9]*\).*/\1/p" <<<"$hw"; }
cpus=$(hwval CPUs) sockets=$(hwval SocketsPerBoard) cores=$(hwval CoresPerSocket) threads=$(hwval ThreadsPerCore)
if [ -z "$cpus" ] || [ -z "$sockets" ] || [ -z "$cores" ] || [ -z "$threads" ]; then
	die "cannot parse 'slurmd -C' output: $hw"
fi

# The Slurm release run (slurmctld -V: "slurm 26.05.3" or "slurm-wlm 22.05.8").
release=$(slurmctld -V | awk '{print $2}')
release_major=${release%%.*}
release_minor=${release#*.}; release_minor=${release_minor%%.*}
release_num=$((10#$release_major * 100 + 10#$release_minor))
if [ "$namespace" = tmpfs-entire-step ] && [ $release_num -lt 2411 ]; then
	die "--namespace tmpfs-entire-step needs Slurm 24.11 or later (EntireStepInNS); this is $release"
fi

if [ $network = hosts ]; then ctld_host="head($HEAD_ADDR)"; else ctld_host=localhost; fi

# Name resolution on the nodes (bound on their /etc/hosts): what
# gethostname() says there resolves to the node's own address, as on a
# cluster, so Open MPI and PMIx find the interface a name stands for.
gen_hosts() {
	[ $network = hosts ] || return 0
	echo "# Generated by contrib/cluster/start.sh; edits are overwritten."
	echo "127.0.0.1 localhost"
	echo "$HEAD_ADDR head"
	for n in "${NODES[@]}"; do echo "$(node_addr "$n") $n"; done
}

# With nodes of their own, srun's ports (and with them stepmap's hub) in
# SrunPortRange; with --mpi-ports, ports Slurm reserves for every step
# (MpiParams=ports; SLURM_STEP_RESV_PORTS), which stepmap's --modex=profile
# takes instead of its own range. On one shared network the nodes'
# reserved ports would collide.
gen_port_lines() {
	[ $network = hosts ] || return 0
	echo "SrunPortRange=60001-60999"
	[ $mpi_ports = no ] || echo "MpiParams=ports=12000-12999"
}

gen_slurm_conf() {
	cat <<EOF
# Generated by contrib/cluster/start.sh; edits are overwritten.
ClusterName=stepmap-test
SlurmctldHost=$ctld_host
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$STATE/spool/ctld
SlurmdSpoolDir=$STATE/spool/slurmd.%n
SlurmctldPidFile=$STATE/run/slurmctld.pid
SlurmdPidFile=$STATE/run/slurmd.%n.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=verbose
SlurmctldSyslogDebug=quiet
SlurmdSyslogDebug=quiet
PlugStackConfig=$STATE/etc/plugstack.conf
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides${contain_spank/#yes/,contain_spank}
ReturnToService=2
MessageTimeout=5
SlurmctldTimeout=10
SlurmdTimeout=30
InactiveLimit=0
KillWait=1
MinJobAge=60
Waittime=0
MailProg=/bin/true
$(gen_namespace_lines)
$(gen_port_lines)
NodeName=DEFAULT CPUs=$cpus Sockets=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads RealMemory=1024 State=UNKNOWN
EOF
	for n in "${NODES[@]}"; do
		if [ $network = hosts ]; then
			echo "NodeName=$n NodeHostname=$n NodeAddr=$(node_addr "$n") Port=$CTLD_PORT"
		else
			echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$(node_port "$n")"
		fi
	done
	echo "PartitionName=debug Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP"
	# A partition of the last two nodes: the scheduler must keep a step to it.
	echo "PartitionName=small Nodes=${NODES[-2]},${NODES[-1]} MaxTime=INFINITE State=UP"
}

# The namespaces' base: not under /tmp or /dev/shm (the private directories).
NS_BASE=/var/tmp/stepmap-cluster-ns/$(basename "$STATE")
mkdir -p "$NS_BASE"

gen_namespace_lines() {
	[ "$namespace" != none ] || return 0
	echo "PrologFlags=Contain"
	if [ $release_num -ge 2511 ]; then echo "NamespaceType=namespace/tmpfs"
	else echo "JobContainerType=job_container/tmpfs"; fi
}

gen_job_container_conf() {
	[ "$namespace" != none ] || return 0
	cat <<EOF
# Generated by contrib/cluster/start.sh; edits are overwritten.
AutoBasePath=true
BasePath=$NS_BASE
EOF
	[ "$namespace" != tmpfs-entire-step ] || echo "EntireStepInNS=true"
}

gen_cgroup_conf() {
	cat <<EOF
# Generated by contrib/cluster/start.sh; edits are overwritten.
# Each slurmd -N nK uses its own hierarchy /slurm_nK (CgroupPrepend=/slurm_%n).
CgroupPlugin=cgroup/v1
$([ $release_num -ge 2411 ] || echo CgroupAutomount=no)
CgroupMountpoint=$CGROOT
ConstrainCores=yes
ConstrainDevices=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
EOF
}

gen_mpi_conf() {
	cat <<EOF
# Generated by contrib/cluster/start.sh; edits are overwritten.
# Every slurmd runs in its own mount namespace with a private tmpfs here, so
# the fake nodes do not collide on spmix_appdir_<uid>_<job>.<step>.
PMIxCliTmpDirBase=$STATE/pmix-cli
EOF
}

gen_plugstack_conf() {
	[ -z "$plugin" ] || echo "required $plugin${plugin_args:+ $plugin_args}"
}

# write_if_changed FILE CONTENT -> 0 if the file was (re)written
write_if_changed() {
	if [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]; then return 1; fi
	printf '%s\n' "$2" >"$1.tmp"
	chmod 0644 "$1.tmp"
	mv -f "$1.tmp" "$1"
}

# srun, every slurmstepd and the job prolog/epilog read plugstack.conf afresh
# each time. Only slurmd itself loads the plugins once, at its start: it calls
# slurm_spank_init in S_CTX_SLURMD (with the args of that time) and
# slurm_spank_slurmd_exit at shutdown (Slurm 22.05). So a running slurmd is
# stale only for a plugin that works in slurmd context; restart the slurmds
# when the old or new plugin exports slurm_spank_slurmd_exit (the hook only
# such a plugin has). stepmap returns at once in S_CTX_SLURMD and has none.
# A plugin that does work in slurm_spank_init under S_CTX_SLURMD alone:
# use --restart.
has_slurmd_hooks() {
	[ -f "$1" ] || return 1
	nm -D --defined-only "$1" 2>/dev/null | grep -qE ' slurm_spank_slurmd_exit$'
}
# What the running slurmds loaded: plugstack line + plugin checksum.
plugin_stamp() {
	[ -z "$plugin" ] || echo "$(gen_plugstack_conf) sha256=$(sha256sum <"$plugin" | cut -d' ' -f1)"
}

gen_ompi_env() {
	if [ $network = hosts ]; then
		cat <<EOF
# Open MPI between the nodes over their eth0 (198.18.0.0/24).
export OMPI_MCA_btl_tcp_if_include=$NET_PREFIX.0/24
export OMPI_MCA_oob_tcp_if_include=$NET_PREFIX.0/24
EOF
	else
		cat <<EOF
# Open MPI ranks on different fake nodes of one host: no shared memory
# transport (it assumes one host per node name), TCP over loopback.
export OMPI_MCA_btl=self,tcp
export OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_pml=ob1
EOF
	fi
}

write_env() {
	local env
	env=$(cat <<EOF
export STEPMAP_CLUSTER_DIR=$STATE
export STEPMAP_CLUSTER_USER=$TEST_USER
export SLURM_CONF=$CONF
export STEPMAP_SLURM_RELEASE=$release
export STEPMAP_CLUSTER_NAMESPACE=$namespace
export STEPMAP_CLUSTER_CONTAIN_SPANK=$contain_spank
export STEPMAP_CLUSTER_NETWORK=$network${SLURM_PREFIX:+
export PATH=$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin}
$(gen_ompi_env)
EOF
)
	write_if_changed "$STATE/env.sh" "$env" || true
	printf '%s\n' "$env"
}

# Wait until every node answers; $1 = accepted states (regex on sinfo %t).
wait_nodes() {
	local ok=$1 end=$((SECONDS + TIMEOUT)) out bad n
	while :; do
		for n in "${NODES[@]}"; do
			[ -n "$(slurmd_pid "$n")" ] ||
				die "slurmd for $n is not running; see $STATE/log/slurmd.$n.log:
$(tail -n 15 "$STATE/log/slurmd.$n.log" 2>/dev/null)"
		done
		[ -n "$(cluster_pids slurmctld)" ] ||
			die "slurmctld is not running; see $STATE/log/slurmctld.log:
$(tail -n 15 "$STATE/log/slurmctld.log" 2>/dev/null)"
		out=$(SLURM_CONF=$CONF on_login sinfo -h -N -p debug -o '%N %t' 2>&1) || true
		bad=$(awk -v ok="^($ok)\$" 'NF != 2 || $2 !~ ok' <<<"$out")
		if [ -z "$bad" ] && [ "$(wc -l <<<"$out")" -eq ${#NODES[@]} ]; then
			return 0
		fi
		if [ $SECONDS -ge $end ]; then
			die "nodes not ready after ${TIMEOUT}s (sinfo: $(tr '\n' ' ' <<<"$out"))
see $STATE/log/slurmctld.log and $STATE/log/slurmd.nK.log; last slurmctld lines:
$(tail -n 10 "$STATE/log/slurmctld.log" 2>/dev/null)"
		fi
		sleep 0.2
	done
}

start_slurmd() {
	local n=$1
	# Own mount namespace + private tmpfs on PMIxCliTmpDirBase; slurmd
	# daemonizes and stays in it (with its slurmstepds and tasks).
	# shellcheck disable=SC2016
	# munged's socket appears at its default place there too, where PMIx's
	# munge security (libmunge) looks for it.
	mkdir -p /run/munge
	local enter=() hosts=none
	if [ $network = hosts ]; then
		# A host of its own: network, hostname, /tmp, /dev/shm, /etc/hosts.
		enter=(nsenter "--net=/run/netns/$(node_ns "$n")" --)
		hosts=$STATE/etc/hosts
	fi
	SLURM_CONF=$CONF "${enter[@]}" unshare -m -u --propagation private -- /bin/sh -c '
		mount -t tmpfs -o mode=1777,size=256m stepmap-pmix-cli "$1" || exit 1
		mount --bind "$3" /run/munge || exit 1
		if [ "$4" != none ]; then
			hostname "$2" || exit 1
			mount -t tmpfs -o mode=1777,size=1g "$2-tmp" /tmp || exit 1
			mount -t tmpfs -o mode=1777,size=1g "$2-shm" /dev/shm || exit 1
			mount --bind "$4" /etc/hosts || exit 1
			# sysfs shows the network of whoever mounted it: a fresh one
			# for this node (/sys/class/net = its lo and eth0), with the
			# machine'"'"'s cgroup hierarchies carried over.
			mkdir -p "$5" && mount --rbind /sys/fs/cgroup "$5" &&
				mount -t sysfs "$2-sys" /sys && mount --rbind "$5" /sys/fs/cgroup &&
				umount -l "$5" || exit 1
		fi
		exec slurmd -N "$2"' sh "$STATE/pmix-cli" "$n" "$STATE/munge" "$hosts" "$STATE/run/cgroup.$n" \
		</dev/null >>"$STATE/log/slurmd.$n.log" 2>&1 9>&- ||
		die "slurmd -N $n failed to start; see $STATE/log/slurmd.$n.log:
$(tail -n 15 "$STATE/log/slurmd.$n.log" 2>/dev/null)"
}

start_slurmds() {
	local n
	for n in "${NODES[@]}"; do start_slurmd "$n"; done
	plugin_stamp >"$STATE/run/plugin.stamp"
}

# Does the running cluster's network have the layout asked for?
network_matches() {
	if [ $network = hosts ]; then netns_exists "$HEAD_NS"; else ! netns_exists "$HEAD_NS"; fi
}

# The private network of --network hosts: the bridge in the head's
# namespace and one veth pair per node, nothing else. No address outside
# 198.18.0.0/24, no route off the bridge, no interface of this machine's
# own namespace touched.
make_network() {
	remove_network
	[ $network = hosts ] || return 0
	local n ns
	ip netns add "$HEAD_NS" || die "cannot create network namespace $HEAD_NS (needs CAP_NET_ADMIN; or use --network shared)"
	ip -n "$HEAD_NS" link set lo up
	ip -n "$HEAD_NS" link add "$BRIDGE" type bridge
	ip -n "$HEAD_NS" addr add "$HEAD_ADDR/24" dev "$BRIDGE"
	ip -n "$HEAD_NS" link set "$BRIDGE" up
	for n in "${NODES[@]}"; do
		ns=$(node_ns "$n")
		ip netns add "$ns"
		ip -n "$ns" link set lo up
		ip -n "$HEAD_NS" link add "$n" type veth peer name eth0 netns "$ns"
		ip -n "$HEAD_NS" link set "$n" master "$BRIDGE" up
		ip -n "$ns" addr add "$(node_addr "$n")/24" dev eth0
		ip -n "$ns" link set eth0 up
	done
}

# ------------------------------------------------------- fast path: keep ---
slurm_conf=$(gen_slurm_conf)
cgroup_conf=$(gen_cgroup_conf)
job_container_conf=$(gen_job_container_conf)
mpi_conf=$(gen_mpi_conf)
hosts_conf=$(gen_hosts)
plugstack_conf=$(gen_plugstack_conf)

running=yes
[ -n "$(cluster_pids munged)" ] && [ -n "$(cluster_pids slurmctld)" ] || running=no
# A node whose slurmd died (a test killed it) boots again below: a new
# slurmd in new mount and UTS namespaces (a fresh /tmp), on its network.
nodes_down=()
for n in "${NODES[@]}"; do [ -n "$(slurmd_pid "$n")" ] || nodes_down+=("$n"); done
[ ${#nodes_down[@]} -lt ${#NODES[@]} ] || running=no
same() { if [ -f "$1" ]; then [ "$(cat "$1")" = "$2" ]; else [ -z "$2" ]; fi; }
if [ $running = yes ] && [ $restart = no ] && same "$CONF" "$slurm_conf" &&
	same "$STATE/etc/cgroup.conf" "$cgroup_conf" && same "$STATE/etc/mpi.conf" "$mpi_conf" &&
	same "$STATE/etc/job_container.conf" "$job_container_conf" &&
	same "$STATE/etc/hosts" "$hosts_conf" && network_matches &&
	SLURM_CONF=$CONF on_login timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; then
	old_plugin=$(awk '$1 == "required" || $1 == "optional" {print $2; exit}' \
		"$STATE/etc/plugstack.conf" 2>/dev/null || true)
	old_stamp=$(cat "$STATE/run/plugin.stamp" 2>/dev/null || true)
	if write_if_changed "$STATE/etc/plugstack.conf" "$plugstack_conf"; then
		say "plugstack.conf updated: ${plugstack_conf:-(empty)}"
	fi
	new_stamp=$(plugin_stamp)
	if [ "$old_stamp" != "$new_stamp" ]; then
		if { [ -n "$old_plugin" ] && has_slurmd_hooks "$old_plugin"; } ||
			{ [ -n "$plugin" ] && has_slurmd_hooks "$plugin"; }; then
			say "old or new plugin exports slurm_spank_slurmd_exit: restarting the slurmds"
			stop_slurmds
			start_slurmds
		else
			# Nothing to do: srun and every new slurmstepd read it afresh.
			printf '%s\n' "$new_stamp" >"$STATE/run/plugin.stamp"
		fi
	fi
	for n in "${nodes_down[@]}"; do
		say "slurmd of $n is not running: starting it (the node boots again)"
		start_slurmd "$n"
	done
	# Nodes left drained/down by an earlier test come back here.
	if SLURM_CONF=$CONF on_login sinfo -h -N -p debug -o '%t' | grep -qvE '^(idle|mix|alloc|comp)$'; then
		SLURM_CONF=$CONF on_login scontrol update NodeName="$(IFS=,; echo "${NODES[*]}")" State=RESUME 2>/dev/null || true
	fi
	wait_nodes 'idle|mix|alloc|comp'
	say "cluster already running ($STATE)"
	write_env
	exit 0
fi

# ---------------------------------------------------- slow path: (re)start ---
if [ -n "$(cluster_pids munged; cluster_pids slurmctld; cluster_pids slurmd)" ]; then
	if [ $restart = yes ]; then say "restarting (--restart)"
	else say "configuration changed or cluster incomplete: restarting"; fi
fi
stop_all
# One cluster on this machine at a time: another state directory's cluster
# (e.g. another Slurm release's) holds the same ports.
for other in /tmp/stepmap-cluster /tmp/stepmap-cluster-* /var/tmp/stepmap-cluster /var/tmp/stepmap-cluster-*; do
	[ "$other" != "$STATE" ] && [ -f "$other/etc/slurm.conf" ] || continue
	if pgrep -x slurmctld >/dev/null && grep -lqzxF -- "SLURM_CONF=$other/etc/slurm.conf" \
		$(for p in $(pgrep -x slurmctld); do echo "/proc/$p/environ"; done) 2>/dev/null; then
		say "stopping the cluster in $other first (one at a time)"
		STEPMAP_CLUSTER_DIR=$other "$here/stop.sh" >&2 || true
	fi
done
for p in "$CTLD_PORT" $(for n in "${NODES[@]}"; do node_port "$n"; done); do
	if ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; then
		die "TCP port $p is already in use (another test cluster with a different STEPMAP_CLUSTER_DIR? stop it first, or set STEPMAP_CLUSTER_PORT)"
	fi
done

# Job ids start afresh: namespaces a previous cluster left must not clash.
rm -rf -- "${NS_BASE:?}"/* 2>/dev/null || true

# Fresh logs for a fresh cluster; the previous ones are kept as *.old.
for f in "$STATE"/log/*.log "$STATE/munge/munged.log"; do
	if [ -f "$f" ]; then mv -f "$f" "$f.old"; fi
done
write_if_changed "$CONF" "$slurm_conf" || true
write_if_changed "$STATE/etc/cgroup.conf" "$cgroup_conf" || true
write_if_changed "$STATE/etc/mpi.conf" "$mpi_conf" || true
write_if_changed "$STATE/etc/job_container.conf" "$job_container_conf" || true
write_if_changed "$STATE/etc/plugstack.conf" "$plugstack_conf" || true
if [ $network = hosts ]; then write_if_changed "$STATE/etc/hosts" "$hosts_conf" || true
else rm -f "$STATE/etc/hosts"; fi
make_network

# munge: own key, socket, pid file and log under $STATE/munge.
if [ ! -s "$STATE/munge/munge.key" ]; then
	( umask 077; dd if=/dev/urandom of="$STATE/munge/munge.key" bs=1024 count=1 status=none )
fi
chmod 0400 "$STATE/munge/munge.key"
munged --socket="$MUNGE_SOCKET" --key-file="$STATE/munge/munge.key" \
	--pid-file="$STATE/munge/munged.pid" --log-file="$STATE/munge/munged.log" \
	--seed-file="$STATE/munge/munged.seed" --num-threads=4 </dev/null >/dev/null 2>&1 9>&- ||
	die "munged failed to start; see $STATE/munge/munged.log:
$(tail -n 10 "$STATE/munge/munged.log" 2>/dev/null)"
munge -n -S "$MUNGE_SOCKET" | unmunge -S "$MUNGE_SOCKET" >/dev/null ||
	die "munge does not work on $MUNGE_SOCKET; see $STATE/munge/munged.log"

# slurmctld, with its saved state cleared (-c): every start is a fresh cluster.
if [ $network = hosts ]; then
	# The head node: the bridge's address, hostname "head" (slurmctld
	# checks that it runs on the SlurmctldHost it is configured for).
	SLURM_CONF=$CONF nsenter "--net=/run/netns/$HEAD_NS" -- unshare -u -- /bin/sh -c \
		'hostname head && exec slurmctld -c' </dev/null >>"$STATE/log/slurmctld.log" 2>&1 9>&-
else
	SLURM_CONF=$CONF slurmctld -c </dev/null >>"$STATE/log/slurmctld.log" 2>&1 9>&-
fi ||
	die "slurmctld failed to start; see $STATE/log/slurmctld.log:
$(tail -n 15 "$STATE/log/slurmctld.log" 2>/dev/null)"
end=$((SECONDS + TIMEOUT))
until SLURM_CONF=$CONF on_login scontrol ping 2>/dev/null | grep -q 'is UP'; do
	[ -n "$(cluster_pids slurmctld)" ] || die "slurmctld exited; see $STATE/log/slurmctld.log:
$(tail -n 15 "$STATE/log/slurmctld.log" 2>/dev/null)"
	[ $SECONDS -lt $end ] || die "slurmctld does not answer after ${TIMEOUT}s; see $STATE/log/slurmctld.log"
	sleep 0.1
done

start_slurmds
wait_nodes 'idle'
say "cluster up: ${#NODES[@]} nodes, state in $STATE"
write_env
