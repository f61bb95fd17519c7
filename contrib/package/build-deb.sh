#!/usr/bin/env bash
# Builds stepmap's Debian package from the working tree's tracked files:
# copies them into a temporary directory with contrib/debian as debian/, runs
# dpkg-buildpackage -us -uc -b there (the unit and package test suites run
# during the build), checks the result with lintian and prints the .deb's
# path. Debian 12, as root (it installs what is missing with apt-get).
#   contrib/package/build-deb.sh [OUTDIR]   (default /var/tmp/stepmap-deb)
# Quiet on success; on failure the build log's end is printed and the
# temporary tree kept for a look.
set -euo pipefail

# The whole script is read before it runs: the build takes long enough for
# the file to change under a running shell (a git checkout, an edit).
main() {
	[ "$(id -u)" -eq 0 ] || { echo "build-deb.sh: run as root (it installs the build's packages with apt-get)" >&2; exit 1; }
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	out=$(mkdir -p "${1:-/var/tmp/stepmap-deb}" && cd "${1:-/var/tmp/stepmap-deb}" && pwd)

	"$repo/contrib/install-deps.sh" dpkg-dev debhelper lintian fakeroot >&2

	# The package's version is the project's: the changelog must say so.
	version=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$repo/meson.build" | head -1)
	debian_version=$(dpkg-parsechangelog -l "$repo/contrib/debian/changelog" -S Version)
	if [ "${debian_version%-*}" != "$version" ]; then
		echo "build-deb.sh: contrib/debian/changelog is at $debian_version but meson.build's version is $version: add a changelog entry ($version-1)" >&2
		exit 1
	fi

	work=$(mktemp -d /var/tmp/stepmap-deb-build.XXXXXX)
	src="$work/stepmap-$version"
	mkdir "$src"
	git -C "$repo" ls-files -z | while IFS= read -r -d '' f; do
		if [ -e "$repo/$f" ]; then printf '%s\0' "$f"; fi
	done | tar -C "$repo" --null -T - -cf - | tar -C "$src" -xf -
	cp -a "$src/contrib/debian" "$src/debian"

	log="$out/build.log"
	case " ${DEB_BUILD_OPTIONS:-} " in
	*" parallel="*) ;;
	*) export DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:+$DEB_BUILD_OPTIONS }parallel=$(nproc)" ;;
	esac
	if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$log" 2>&1; then
		tail -n 60 "$log" >&2
		echo "build-deb.sh: dpkg-buildpackage failed; the whole log: $log, the tree: $src" >&2
		exit 1
	fi

	changes=$(ls "$work"/stepmap_"$debian_version"_*.changes)
	if ! lintian -i --fail-on error,warning "$changes" >"$out/lintian.log" 2>&1; then
		cat "$out/lintian.log" >&2
		echo "build-deb.sh: lintian found problems (above; $out/lintian.log); the tree: $src" >&2
		exit 1
	fi

	rm -f "$out"/stepmap_*.deb "$out"/stepmap-dbgsym_*.deb "$out"/stepmap_*.changes "$out"/stepmap_*.buildinfo
	mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
	rm -rf "$work"
	ls "$out"/stepmap_*.deb
}

main "$@"
