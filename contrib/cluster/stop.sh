#!/usr/bin/env bash
# Stop the test cluster started by start.sh: running jobs, slurmd x4,
# slurmctld, munged; remove the cluster's cgroups (/slurm_nK) and network
# namespaces (stepmap-head, stepmap-nK). Idempotent.
#
#   contrib/cluster/stop.sh [--purge]
#
# --purge also deletes the state directory
# ${STEPMAP_CLUSTER_DIR:-/var/tmp/stepmap-cluster} (logs included). Run as root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

purge=no
while [ $# -gt 0 ]; do
	case $1 in
	--purge) purge=yes; shift ;;
	-h|--help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) die "unknown argument: $1 (usage: stop.sh [--purge])" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "must run as root"

if [ -d "$STATE" ]; then lock_state; fi
stop_all
left=$(cluster_pids munged; cluster_pids slurmctld; cluster_pids slurmd; cluster_pids slurmstepd; cgroup_pids)
[ -z "$left" ] || die "processes still running: $(tr '\n' ' ' <<<"$left")"
if [ $purge = yes ] && [ -d "$STATE" ]; then
	rm -rf -- "$STATE"
	say "stopped; removed $STATE"
else
	say "stopped"
fi
