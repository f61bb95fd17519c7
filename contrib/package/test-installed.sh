#!/usr/bin/env bash
# The end-to-end suite against the installed Debian package instead of the
# build tree: builds the .deb (contrib/package/build-deb.sh, without the unit
# tests the build tree already ran), installs it with apt-get, runs every e2e
# test with the plugin, server and profile tool from their installed paths,
# and purges the package again. As root, on Debian 12.
#   contrib/package/test-installed.sh BUILD_DIR [meson test arguments]
# BUILD_DIR: a configured build tree (contrib/build.sh's), whose test
# programs (the MPI hello, the PMIx clients) the suite runs.
set -euo pipefail

main() {
	[ "$(id -u)" -eq 0 ] || { echo "test-installed.sh: run as root" >&2; exit 1; }
	[ $# -ge 1 ] && [ -f "$1/build.ninja" ] || { echo "usage: test-installed.sh BUILD_DIR [meson test arguments]" >&2; exit 2; }
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	build=$1
	shift
	# A stepmap package this machine knows in any state (installed, or its
	# conffiles left) is the admin's: never purge it.
	if dpkg-query -W -f='${Status}' stepmap >/dev/null 2>&1; then
		echo "test-installed.sh: dpkg knows a stepmap package here already ($(dpkg-query -W -f='${Status}' stepmap)); not touching it" >&2
		exit 1
	fi
	out=$(mktemp -d /var/tmp/stepmap-installed-deb.XXXXXX)
	trap 'rm -rf "$out"' EXIT
	deb=$(DEB_BUILD_OPTIONS=nocheck "$repo/contrib/package/build-deb.sh" "$out" | tail -n 1)
	trap 'dpkg -P stepmap >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb" >/dev/null
	local multiarch
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	echo "test-installed.sh: e2e suite against $(dpkg-query -W -f='stepmap ${Version}' stepmap) (installed from $deb)"
	STEPMAP_INSTALLED_PLUGIN=/usr/lib/$multiarch/slurm-wlm/stepmap.so \
	STEPMAP_INSTALLED_SERVER=/usr/libexec/stepmap/stepmap-stepd \
	STEPMAP_INSTALLED_PROFILE_TOOL=/usr/bin/stepmap-profile \
		meson test -C "$build" --print-errorlogs --num-processes 1 --suite e2e "$@"
}

main "$@"
