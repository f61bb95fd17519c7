#!/usr/bin/env bash
# The test command: installs what is missing (apt), builds (Open MPI 5 too,
# once, when its source tree is there), and runs every suite (unit,
# conformance against PRRTE's goldens and Open MPI 5's mpirun, integration
# and the end-to-end ones on a real local Slurm cluster, which it starts and
# stops); then (a full run, without arguments) it builds the Debian package,
# installs it and runs the end-to-end suite again against the installed
# files (contrib/package/test-installed.sh).
# Run as root on Debian 12.
#   contrib/run-tests.sh [meson test arguments, e.g. --suite unit]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run-tests.sh: run as root (it installs packages and starts a Slurm cluster)" >&2; exit 1; }
# Open MPI 5 (mpirun for the live PRRTE conformance suite, its clients for
# the e2e suite, and its PMIx 5, which the server is built with so that it
# serves PMIx groups, i.e. MPI-4 sessions): built once from the workplace's
# source tree (about 10 minutes on 2 cores, then cached in /opt); without
# that tree those tests skip, saying so, and the server hosts Debian's PMIx.
if [ -z "${STEPMAP_PRRTE_MPIRUN:-}" ]; then
	if ompi5=$("$repo/contrib/openmpi/build-openmpi5.sh" 2>/tmp/stepmap-openmpi5-build.log); then
		export STEPMAP_PRRTE_MPIRUN=$ompi5/bin/mpirun STEPMAP_OMPI5_PREFIX=$ompi5
	else
		echo "run-tests.sh: no Open MPI 5 ($(tail -n 1 /tmp/stepmap-openmpi5-build.log)); its tests will skip" >&2
	fi
fi
# Every target, tests included (STEPMAP_BUILD_TARGETS would narrow it).
build=$(STEPMAP_BUILD_TARGETS='' STEPMAP_PMIX_PREFIX="${STEPMAP_OMPI5_PREFIX:-}" "$repo/contrib/build.sh")
trap '"$repo/contrib/cluster/stop.sh" >/dev/null 2>&1 || true' EXIT
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
if [ $# -eq 0 ]; then
	"$repo/contrib/package/test-installed.sh" "$build"
fi
