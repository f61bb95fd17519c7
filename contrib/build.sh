#!/usr/bin/env bash
# Installs what is missing, then configures and builds stepmap.
#   contrib/build.sh [meson setup options]
#       -> builds in $STEPMAP_BUILD_DIR (default: <repo>/build$STEPMAP_BUILD_SUFFIX)
# Prints the build directory on stdout, and each step (installing packages,
# configuring, building) on stderr. The options apply when the build
# directory is first set up (e.g. -Dslurm_prefix=/opt/slurm-26.05.3).
#   STEPMAP_BUILD_TARGETS="spank_plugin/stepmap.so ..." builds only these
#       (ninja targets in the build directory) and what they need; unset or
#       empty: everything, tests included;
#   STEPMAP_BUILD_WHAT="the plugin ..." names them in the progress line.
#   STEPMAP_PMIX_PREFIX=DIR: the server hosts the PMIx installed in DIR
#       (-Dpmix_prefix; a PMIx 5 serves groups); set but empty: the
#       system's; unset: as the build directory was configured.
#
# The local cluster's test user loads the plugin and runs the test programs
# from the build tree, so the build tree must be reachable by other users;
# if the checkout is not (e.g. under /root), the build goes to
# /var/tmp/stepmap-build-<hash of the checkout path> instead.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$repo/contrib/install-deps.sh" >&2

suffix=${STEPMAP_BUILD_SUFFIX:-}
build=${STEPMAP_BUILD_DIR:-$repo/build$suffix}
reachable() {
	local d=$1
	while [ "$d" != / ]; do
		case $(stat -c %A "$d" | cut -c10) in x|t) ;; *) return 1 ;; esac
		d=$(dirname "$d")
	done
}
if [ -z "${STEPMAP_BUILD_DIR:-}" ] && ! reachable "$repo"; then
	build=/var/tmp/stepmap-build-$(printf %s "$repo" | md5sum | cut -c1-8)$suffix
	echo "build.sh: $repo is not reachable by other users; building in $build" >&2
fi
# The compat suite's Slurm header sets (one folder per release): the
# project's shared/slurm/headers, above the checkout or the workplace's.
header_sets=
for d in "$repo/.." "$repo/../.." /work; do
	[ -d "$d/shared/slurm/headers" ] && { header_sets=$(cd "$d/shared/slurm/headers" && pwd); break; }
done
pmix_option=()
[ -z "${STEPMAP_PMIX_PREFIX+set}" ] || pmix_option=(-Dpmix_prefix="$STEPMAP_PMIX_PREFIX")
if [ ! -f "$build/build.ninja" ]; then
	echo "build.sh: configuring $build (meson setup)..." >&2
	meson setup "$build" "$repo" ${header_sets:+-Dslurm_header_sets="$header_sets"} "${pmix_option[@]}" "$@" >&2
elif [ ${#pmix_option[@]} -gt 0 ]; then
	meson configure "$build" "${pmix_option[@]}" >&2
fi
read -ra targets <<<"${STEPMAP_BUILD_TARGETS:-}"
what="everything, tests included"
[ ${#targets[@]} -eq 0 ] || what=${STEPMAP_BUILD_WHAT:-${targets[*]}}
plan=$(ninja -C "$build" -n "${targets[@]}")
steps=$(grep -c '^\[' <<<"$plan") || true
if [ "$steps" -gt 0 ]; then
	echo "build.sh: building $what ($steps build steps)..." >&2
else
	echo "build.sh: $what: up to date" >&2
fi
ninja -C "$build" "${targets[@]}" >&2
chmod -R o+rX "$build"
echo "$build"
