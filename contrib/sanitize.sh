#!/usr/bin/env bash
# Builds the whole tree with ASan and UBSan in its own directory and runs the
# unit and integration suites (not the end-to-end ones: they need the local
# Slurm cluster). Installs what is missing (apt).
#   contrib/sanitize.sh [gcc|clang] [meson test arguments]
# Builds in $STEPMAP_SANITIZE_BUILD_DIR (default: <repo>/build-asan, or
# <repo>/build-asan-clang with clang). Any leak or undefined behaviour fails
# the test that hit it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

compiler=gcc
case ${1:-} in gcc | clang) compiler=$1; shift ;; esac

"$repo/contrib/install-deps.sh" $([ "$compiler" = clang ] && echo --clang) >&2
if [ "$compiler" = clang ]; then
	export CC=clang-14 CXX=clang++-14
	build=${STEPMAP_SANITIZE_BUILD_DIR:-$repo/build-asan-clang}
else
	export CC=gcc CXX=g++
	build=${STEPMAP_SANITIZE_BUILD_DIR:-$repo/build-asan}
fi

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" "$repo" -Db_sanitize=address,undefined -Db_lundef=false \
		-Dcpp_args=-fno-sanitize-recover=undefined >&2
fi
ninja -C "$build" -j"$(nproc)" >&2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo/contrib/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# hwloc loads its PCI plugin, and with it libpciaccess, for a live topology
# and unloads both with the last topology; LSan then reports libpciaccess'
# global state as 1016 bytes leaked from an unknown module (any program that
# loads a topology with I/O does). Keeping the library loaded lets LSan see
# that the memory is still referenced.
pciaccess=$(ldconfig -p | sed -n 's/^[[:space:]]*libpciaccess\.so\.0 .*=> //p' | head -n 1)
if [ -n "$pciaccess" ]; then
	export LD_PRELOAD=$pciaccess${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0
fi
meson test -C "$build" --no-rebuild --print-errorlogs --num-processes "$(nproc)" \
	--suite unit --suite integration "$@"
