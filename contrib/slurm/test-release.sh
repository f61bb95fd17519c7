#!/usr/bin/env bash
# Runs stepmap's end-to-end suite against a Slurm release built from its
# tarball into its own prefix (Debian's Slurm stays the default and is left
# alone): builds that Slurm once (cached, contrib/slurm/build-release.sh),
# builds stepmap against it in a build directory of its own, starts the
# local 4-node cluster with that Slurm and runs the e2e suite.
#   contrib/slurm/test-release.sh [TARBALL] [-- meson test arguments]
# TARBALL defaults to ../shared/slurm/slurm-26.05.3.tar.xz next to the
# checkout. Run as root on Debian 12.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tarball=
if [ $# -gt 0 ] && [ "$1" != -- ]; then tarball=$1; shift; fi
[ "${1:-}" != -- ] || shift
[ "$(id -u)" -eq 0 ] || { echo "test-release.sh: run as root (it builds Slurm and starts a cluster)" >&2; exit 1; }

prefix=$("$repo/contrib/slurm/build-release.sh" ${tarball:+"$tarball"})
release=$(basename "$prefix")
build=$(STEPMAP_BUILD_SUFFIX=-$release "$repo/contrib/build.sh" -Dslurm_prefix="$prefix")

export STEPMAP_SLURM_PREFIX=$prefix
export PATH=$prefix/bin:$prefix/sbin:$PATH
trap '"$repo/contrib/cluster/stop.sh" >/dev/null 2>&1 || true' EXIT
echo "test-release.sh: end-to-end suite against $("$prefix/sbin/slurmctld" -V)" >&2
meson test -C "$build" --suite e2e --print-errorlogs --num-processes 2 "$@"
