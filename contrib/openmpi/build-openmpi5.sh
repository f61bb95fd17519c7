#!/usr/bin/env bash
# Builds Open MPI 5 (with the PRRTE and OpenPMIx it pins) from the source
# tree kept in the workplace's shared/openmpi, into its own prefix next to
# Debian's Open MPI 4.1 (which stays the default). What it gives:
#   - PRRTE's mpirun, the reference the mapper imitates, runnable offline
#     (tests/conformance/prrte_live.py);
#   - Open MPI 5 clients (a PMIx 5 client library) to run through stepmap's
#     PMIx server (the e2e suite's Open MPI 5 test).
# The build is cached: a prefix holding a build of the same tarball (same
# SHA-256) with the same flags is reused and nothing is compiled.
#   contrib/openmpi/build-openmpi5.sh [TARBALL]   -> prints the prefix on stdout
# TARBALL defaults to $STEPMAP_OMPI5_TARBALL or ../shared/openmpi/openmpi-5.0.10-git.tar.xz
# next to the checkout. The prefix is /opt/openmpi-<version> unless
# STEPMAP_OMPI5_PREFIX names another. About 10 minutes on 2 cores, once.
# Run as root on Debian 12.
set -euo pipefail

main() {
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	local tarball=${1:-${STEPMAP_OMPI5_TARBALL:-}}
	if [ -z "$tarball" ]; then
		for d in "$repo/.." "$repo/../.." /work; do
			[ -f "$d/shared/openmpi/openmpi-5.0.10-git.tar.xz" ] && { tarball=$d/shared/openmpi/openmpi-5.0.10-git.tar.xz; break; }
		done
	fi
	[ -n "$tarball" ] && [ -f "$tarball" ] || { echo "build-openmpi5.sh: no Open MPI 5 source tarball (shared/openmpi/openmpi-5.0.10-git.tar.xz): pass its path as the first argument" >&2; exit 1; }
	local name version
	name=$(basename "$tarball"); name=${name%.tar.*}; name=${name%-git}   # openmpi-5.0.10
	version=${name#openmpi-}
	case $version in 5.[0-9]*.[0-9]*) ;; *) echo "build-openmpi5.sh: $tarball is not named openmpi-5.X.Y[-git].tar.*" >&2; exit 1 ;; esac
	prefix=${STEPMAP_OMPI5_PREFIX:-/opt/openmpi-$version}
	# Its own PMIx and PRRTE, named explicitly: otherwise configure finds
	# Debian's PMIx 4.2.2 through pkg-config and PRRTE refuses it. The
	# network components left out need libraries this machine lacks.
	local flags=(--with-pmix=internal --with-prrte=internal --with-hwloc=external
		--with-libevent=external --disable-mpi-fortran --disable-oshmem
		--enable-mca-no-build=btl-uct,pml-ucx,osc-ucx,mtl-ofi,btl-ofi)
	local sum stamp
	sum="$(sha256sum "$tarball" | cut -d' ' -f1) ${flags[*]} psec=munge"
	stamp=$prefix/.stepmap-build
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ] && [ -x "$prefix/bin/mpirun" ]; then
		echo "build-openmpi5.sh: Open MPI $version already built in $prefix (cached)" >&2
		echo "$prefix"; return 0
	fi
	[ "$(id -u)" -eq 0 ] || { echo "build-openmpi5.sh: run as root (it installs build packages and writes $prefix)" >&2; exit 1; }

	# libmunge-dev: its PMIx's psec/munge, which stepmap's servers use to
	# check their clients (client_auth=munge, the default).
	"$repo/contrib/install-deps.sh" autoconf automake libtool flex libevent-dev libhwloc-dev \
		libmunge-dev perl python3 xz-utils build-essential >&2

	local work=/var/tmp/stepmap-openmpi-build-$version
	rm -rf "$work"; mkdir -p "$work"
	tar -C "$work" -xf "$tarball"
	local src
	src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
	echo "build-openmpi5.sh: building Open MPI $version into $prefix (about 10 minutes on 2 cores)" >&2
	local start
	start=$(date +%s)
	(
		cd "$src"
		./autogen.pl --no-3rdparty=hwloc,libevent >"$work/autogen.log" 2>&1 ||
			{ tail -30 "$work/autogen.log" >&2; exit 1; }
		./configure --prefix="$prefix" "${flags[@]}" >"$work/configure.log" 2>&1 ||
			{ tail -30 "$work/configure.log" >&2; exit 1; }
		make -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
		rm -rf "$prefix"
		make install >"$work/install.log" 2>&1 || { tail -30 "$work/install.log" >&2; exit 1; }
		# libtool's relink at install time can pick Debian's libopen-pal.so
		# (Open MPI 4.1, from libopenmpi-dev) for libmpi: put the build
		# tree's own library back when it did.
		local lib
		for lib in "$prefix"/lib/libmpi.so.*.*.*; do
			if readelf -d "$lib" | grep -q 'libopen-pal.so.40\]'; then
				cp "ompi/.libs/$(basename "$lib")" "$lib"
			fi
		done
	)
	local linked
	linked=$(ldd "$prefix/lib/libpmix.so" "$prefix"/lib/pmix/*.so 2>/dev/null || true)
	if [[ $linked != *libmunge* ]]; then
		echo "build-openmpi5.sh: its PMIx was built without psec/munge (libmunge-dev missing?)" >&2
		exit 1
	fi
	if readelf -d "$prefix"/lib/libmpi.so | grep -q 'libopen-pal.so.40\]'; then
		echo "build-openmpi5.sh: $prefix/lib/libmpi.so links Open MPI 4's libopen-pal.so.40" >&2
		exit 1
	fi
	echo "$sum" >"$stamp"
	rm -rf "$work"
	echo "build-openmpi5.sh: Open MPI $version built in $(( $(date +%s) - start )) s" >&2
	echo "$prefix"
}

main "$@"
