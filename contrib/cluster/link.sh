#!/usr/bin/env bash
# Changes a node's link on the test cluster of separate hosts (start.sh
# --network hosts), as a network would fail or slow down. Run as root.
#
#   link.sh NODE shape [delay=MS] [jitter=MS] [loss=PERCENT] [rate=MBIT]
#       the node's link gets that one-way delay (each direction), jitter,
#       random loss and rate: user space carries its frames (link_emulator;
#       this kernel has no sch_netem). Again to change it.
#   link.sh NODE down | up
#       the switch port of the node goes down (the node sees no carrier and
#       its frames go nowhere, silently) or comes back.
#   link.sh partition NODE_A NODE_B | heal NODE_A NODE_B
#       A and B cannot reach each other (the switch silently drops what one
#       sends the other: established connections hang, new ones time out);
#       both still reach everyone else.
#   link.sh NODE clear       the node's link as start.sh made it
#   link.sh clear            every link as start.sh made it
#   link.sh show             what is changed now
#
# Delays are in milliseconds and may have decimals (delay=0.02 is 20 us).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

usage() { sed -n '2,21s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
[ "$(id -u)" -eq 0 ] || die "must run as root"
[ $# -ge 1 ] || usage 2
netns_exists "$HEAD_NS" ||
	die "no cluster of separate hosts runs (network namespace $HEAD_NS): start it with start.sh (--network hosts)"

is_node() {
	local n
	for n in "${NODES[@]}"; do [ "$n" = "$1" ] && return 0; done
	return 1
}
need_node() { is_node "$1" || die "$1: not a node of the cluster (${NODES[*]})"; }

emulator_pid_file() { echo "$STATE/run/link.$1.pid"; }

# Builds the emulator once per source change (a single C file, no library).
emulator() {
	local bin=$STATE/run/link_emulator src=$here/link_emulator.c
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		cc -O2 -o "$bin.tmp" "$src" || die "cannot build $src (needs a C compiler)"
		mv -f "$bin.tmp" "$bin"
	fi
	echo "$bin"
}

# ms (decimals allowed) -> whole microseconds.
micros() {
	[[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$2=$1: expected milliseconds, e.g. 5 or 0.02"
	awk -v ms="$1" 'BEGIN { printf "%d", ms * 1000 + 0.5 }'
}

# The node's cable straight on the bridge again, no emulator.
unshape() {
	local n=$1 pidf p
	pidf=$(emulator_pid_file "$n")
	if [ -f "$pidf" ]; then
		p=$(cat "$pidf")
		if alive "$p" && grep -qa link_emulator "/proc/$p/cmdline" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait_gone 5 "$p" || kill -KILL "$p" 2>/dev/null || true
		fi
		rm -f "$pidf"
	fi
	# And any the pid file lost (a run interrupted between start and write).
	pkill -TERM -f "^$STATE/run/link_emulator $n $n-w " 2>/dev/null || true
	ip -n "$HEAD_NS" link del "$n-w" 2>/dev/null || true
	ip -n "$HEAD_NS" link set "$n" master "$BRIDGE" up 2>/dev/null || true
}

shape() {
	local n=$1 delay=0 jitter=0 loss=0 rate=0 kv
	shift
	for kv in "$@"; do
		case $kv in
		delay=*) delay=$(micros "${kv#*=}" delay) ;;
		jitter=*) jitter=$(micros "${kv#*=}" jitter) ;;
		loss=*) loss=${kv#*=}
			[[ $loss =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v l="$loss" 'BEGIN { exit !(l <= 100) }' ||
				die "loss=$loss: expected a percentage 0-100" ;;
		rate=*) rate=${kv#*=}
			[[ $rate =~ ^[1-9][0-9]*$ ]] || die "rate=$rate: expected Mbit/s, a whole number" ;;
		*) die "$kv: expected delay=MS, jitter=MS, loss=PERCENT or rate=MBIT" ;;
		esac
	done
	local bin
	bin=$(emulator)
	unshape "$n"
	# node eth0 <-> nK (head) --emulator-- nK-w <-> nK-b on the bridge
	ip -n "$HEAD_NS" link set "$n" nomaster
	ip -n "$HEAD_NS" link add "$n-w" type veth peer name "$n-b"
	ip -n "$HEAD_NS" link set "$n-b" master "$BRIDGE" up
	ip -n "$HEAD_NS" link set "$n-w" up
	ip -n "$HEAD_NS" link set "$n" up
	: >"$STATE/log/link.$n.log"
	# ip netns exec execs the emulator: $! is the emulator itself.
	ip netns exec "$HEAD_NS" "$bin" "$n" "$n-w" --delay-us "$delay" --jitter-us "$jitter" \
		--loss "$loss" --rate-mbit "$rate" </dev/null >>"$STATE/log/link.$n.log" 2>&1 9>&- &
	local pid=$!
	# A cable does not wait for a CPU: on a machine whose cores the ranks
	# keep busy (Open MPI polls), the emulator goes first, or a loss of 5%
	# becomes seconds of silence that the dead-link timeout reads as a cut.
	renice -n -15 -p "$pid" >/dev/null 2>&1 || true
	echo "$pid" >"$(emulator_pid_file "$n")"
	sleep 0.2
	alive "$pid" && grep -qa link_emulator "/proc/$pid/cmdline" ||
		die "link_emulator for $n did not start; see $STATE/log/link.$n.log"
	say "$n: delay ${delay} us, jitter ${jitter} us, loss ${loss}%, rate ${rate} Mbit/s (0: unlimited)"
}

# What the bridge sends out of a node's port passes through an htb whose
# class 1:2 drops everything (pfifo limit 0); a classic-BPF filter per cut
# pair sends there the IPv4 frames from the other node. The drop is silent,
# as on a switch that lost a route: established connections hang, new ones
# time out (a blackhole route in the nodes would fail them at once).
port_filters() {
	local port=$1
	tc -n "$HEAD_NS" qdisc show dev "$port" | grep -q '^qdisc htb 1:' && return 0
	tc -n "$HEAD_NS" qdisc replace dev "$port" root handle 1: htb default 1 r2q 100000
	tc -n "$HEAD_NS" class add dev "$port" parent 1: classid 1:1 htb rate 100gbit
	tc -n "$HEAD_NS" class add dev "$port" parent 1: classid 1:2 htb rate 100gbit
	tc -n "$HEAD_NS" qdisc add dev "$port" parent 1:2 handle 2: pfifo limit 0
}

# The cBPF program: an IPv4 frame (ethertype 0x0800 at byte 12) whose
# source address (byte 26) is $1 (dotted) goes to class 1:2, the rest on.
drop_from_program() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	local ip=$(( (a << 24) | (b << 16) | (c << 8) | d ))
	# ldh [12]; jeq #0x800 ? next : pass; ld [26]; jeq #ip ? drop : pass;
	# drop: ret #0x10002 (classid 1:2); pass: ret #0
	echo "6,40 0 0 12,21 0 3 2048,32 0 0 26,21 0 1 $ip,6 0 0 65538,6 0 0 0"
}

partition() {
	local a=$1 b=$2 verb=$3
	need_node "$a"
	need_node "$b"
	[ "$a" != "$b" ] || die "partition $a $b: two different nodes"
	local to from
	for to in "$a" "$b"; do
		from=$b
		[ "$to" = "$a" ] || from=$a
		if [ "$verb" = add ]; then
			port_filters "$to"
			tc -n "$HEAD_NS" filter replace dev "$to" parent 1: protocol all prio "${from#n}" \
				bpf bytecode "$(drop_from_program "$(node_addr "$from")")"
		else
			tc -n "$HEAD_NS" filter del dev "$to" parent 1: prio "${from#n}" 2>/dev/null || true
		fi
	done
}

# Nodes a node's port drops frames from.
cut_off_from() {
	tc -n "$HEAD_NS" filter show dev "$1" parent 1: 2>/dev/null |
		sed -n 's/.* pref \([0-9]*\) bpf.*/n\1/p' | sort -u | tr '\n' ' '
}

clear_node() {
	local n=$1
	unshape "$n"
	ip -n "$HEAD_NS" link set "$n" up
	tc -n "$HEAD_NS" qdisc del dev "$n" root 2>/dev/null || true
}

show() {
	local n what flags holes
	for n in "${NODES[@]}"; do
		what=""
		flags=$(ip -n "$HEAD_NS" -o link show "$n" | sed -n 's/.*<\([^>]*\)>.*/\1/p')
		case ,$flags, in *,UP,*) ;; *) what+=" switch port down" ;; esac
		[ ! -f "$(emulator_pid_file "$n")" ] ||
			what+=" shaped: $(head -n 1 "$STATE/log/link.$n.log" 2>/dev/null)"
		holes=$(cut_off_from "$n")
		[ -z "$holes" ] || what+=" cut off from ${holes% }"
		echo "$n:${what:- as start.sh made it}"
	done
}

lock_state
case $1 in
clear) [ $# -eq 1 ] || usage 2; for n in "${NODES[@]}"; do clear_node "$n"; done ;;
show) show ;;
partition|heal)
	[ $# -eq 3 ] || usage 2
	if [ "$1" = partition ]; then partition "$2" "$3" add; else partition "$2" "$3" del; fi ;;
-h|--help) usage 0 ;;
*)
	need_node "$1"
	[ $# -ge 2 ] || usage 2
	case $2 in
	shape) n=$1; shift 2; shape "$n" "$@" ;;
	down) ip -n "$HEAD_NS" link set "$1" down ;;
	up) ip -n "$HEAD_NS" link set "$1" up ;;
	clear) clear_node "$1" ;;
	*) die "$2: expected shape, down, up or clear" ;;
	esac ;;
esac
