#!/usr/bin/env bash
# The test command: installs what is missing (apt), builds, and runs every
# suite (unit, conformance, integration and the end-to-end ones on a real
# local Slurm cluster, which it starts and stops), then (a full run, without
# arguments) builds the Debian package, installs it and runs the end-to-end
# suite again against the installed files (contrib/package/test-installed.sh).
# Run as root on Debian 12.
#   contrib/run-tests.sh [meson test arguments, e.g. --suite unit]
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ "$(id -u)" -eq 0 ] || { echo "run-tests.sh: run as root (it installs packages and starts a Slurm cluster)" >&2; exit 1; }
build=$("$repo/contrib/build.sh")
trap '"$repo/contrib/cluster/stop.sh" >/dev/null 2>&1 || true' EXIT
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
if [ $# -eq 0 ]; then
	"$repo/contrib/package/test-installed.sh" "$build"
fi
