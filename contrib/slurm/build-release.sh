#!/usr/bin/env bash
# Builds a Slurm release from its source tarball into its own prefix, so the
# end-to-end suite can run against it next to Debian's Slurm (which stays the
# default). The build is cached: a prefix that already holds a build of the
# same tarball (same SHA-256) is reused and nothing is compiled.
#   contrib/slurm/build-release.sh [TARBALL]   -> prints the prefix on stdout
# TARBALL defaults to $STEPMAP_SLURM_TARBALL or ../shared/slurm/slurm-26.05.3.tar.xz
# next to the checkout. The prefix is /opt/slurm-<version> unless
# STEPMAP_SLURM_PREFIX names another. Run as root on Debian 12.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tarball=${1:-${STEPMAP_SLURM_TARBALL:-$repo/../shared/slurm/slurm-26.05.3.tar.xz}}
[ -f "$tarball" ] || { echo "build-release.sh: no Slurm tarball at $tarball: pass its path as the first argument" >&2; exit 1; }
name=$(basename "$tarball"); name=${name%.tar.*}            # slurm-26.05.3
version=${name#slurm-}
case $version in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "build-release.sh: $tarball is not named slurm-X.Y.Z.tar.*" >&2; exit 1 ;; esac
prefix=${STEPMAP_SLURM_PREFIX:-/opt/slurm-$version}
# Several slurmd on one host (slurmd -N nK, the test cluster) need
# --enable-multiple-slurmd, as Debian's package is built.
configure_flags=(--with-munge --with-hwloc --disable-static --disable-debug --enable-multiple-slurmd)
sum="$(sha256sum "$tarball" | cut -d' ' -f1) ${configure_flags[*]}"
stamp=$prefix/.stepmap-build
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && [ -x "$prefix/sbin/slurmd" ]; then
	echo "build-release.sh: Slurm $version already built in $prefix (cached)" >&2
	echo "$prefix"; exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "build-release.sh: run as root (it installs build packages and writes $prefix)" >&2; exit 1; }

"$repo/contrib/install-deps.sh" libmunge-dev libdbus-1-dev libjson-c-dev libhttp-parser-dev \
	flex libtool xz-utils >&2

work=/var/tmp/stepmap-slurm-build-$version
rm -rf "$work"; mkdir -p "$work"
tar -C "$work" -xf "$tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
pmix=$(dirname "$(find /usr/lib -name libpmix.so -path '*pmix2*' | head -1)")
pmix=${pmix%/lib}
echo "build-release.sh: building Slurm $version into $prefix (about 20 minutes on 2 cores)" >&2
start=$(date +%s)
(
	cd "$src"
	./configure --prefix="$prefix" --sysconfdir="$prefix/etc" \
		--with-pmix="$pmix" "${configure_flags[@]}" >"$work/configure.log" 2>&1 ||
		{ tail -30 "$work/configure.log" >&2; exit 1; }
	make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
	rm -rf "$prefix"
	make install >"$work/install.log" 2>&1 || { tail -30 "$work/install.log" >&2; exit 1; }
)
mkdir -p "$prefix/etc"
echo "$sum" >"$stamp"
rm -rf "$work"
echo "build-release.sh: Slurm $version built in $(( $(date +%s) - start )) s" >&2
echo "$prefix"
