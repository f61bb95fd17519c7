#!/usr/bin/env bash
# Fuzzes every target of tests/fuzz with libFuzzer under ASan and UBSan
# (clang), each for a fixed time, and prints a table: target, executions,
# coverage, crashes. Installs what is missing (apt); builds in its own
# directory, $STEPMAP_FUZZ_BUILD_DIR (default: <repo>/build-fuzz).
#   contrib/fuzz.sh [--merge] [SECONDS_PER_TARGET [TARGET...]]
#     SECONDS_PER_TARGET  default 60
#     TARGET              e.g. plan_decode wire_frames; default: all
#     --merge             add the new inputs that reach new coverage to
#                         tests/fuzz/corpus/<target>/ (review, then commit)
# Crashing, slow and memory-hungry inputs land in
# <build>/fuzz-runs/<target>/artifacts/; reproduce one with
#   <build>/tests/fuzz/fuzz_<target> FILE
# and, once fixed, keep it in tests/fuzz/regressions/<target>/.
# Exit status: 0 when no target found anything, 1 otherwise.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

merge=false
if [ "${1:-}" = --merge ]; then
	merge=true
	shift
fi
seconds=${1:-60}
shift || true
case $seconds in '' | *[!0-9]*) echo "usage: $0 [--merge] [SECONDS_PER_TARGET [TARGET...]]" >&2; exit 2 ;; esac

# What the build needs, then clang with libFuzzer and the sanitizer runtimes,
# and llvm-symbolizer for readable stack traces.
"$repo/contrib/install-deps.sh" --clang >&2

build=${STEPMAP_FUZZ_BUILD_DIR:-$repo/build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
	# fuzzer-no-link on every library: libFuzzer needs their coverage too.
	CC=clang-14 CXX=clang++-14 meson setup "$build" "$repo" -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		"-Dcpp_args=['-fsanitize=fuzzer-no-link','-fno-sanitize-recover=undefined']" >&2
fi
all=$(ninja -C "$build" -t targets all | sed -n 's|^\(tests/fuzz/fuzz_[a-z0-9_]*\):.*|\1|p' | sort -u)
targets=()
if [ $# -gt 0 ]; then
	for t in "$@"; do targets+=("tests/fuzz/fuzz_$t"); done
else
	read -r -a targets <<<"$(echo $all)"
fi
ninja -C "$build" -j"$(nproc)" "${targets[@]}" >&2

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
limits=(-max_len=4096 -timeout=10 -rss_limit_mb=2048)

# What an input that failed hit, to group the many inputs one bug gives:
# the failed check, the sanitizer's summary, or for a timeout or an
# out-of-memory the first frame in stepmap's own code.
signature() {
	local log start
	start=$(date +%s)
	log=$(timeout 120 "$1" "${limits[@]}" "$2" 2>&1 || true)
	case $2 in */slow-unit-*)
		echo "slow: $(($(date +%s) - start)) s on replay"
		return
		;;
	esac
	grep -m1 -o 'fuzz check failed: .*' <<<"$log" && return
	grep -m1 -o 'SUMMARY: [A-Za-z]*Sanitizer: .*' <<<"$log" && return
	local kind frame
	kind=$(grep -m1 -o 'ERROR: libFuzzer: [a-z-]*' <<<"$log" || echo 'no failure on replay')
	frame=$(grep -m1 -oE ' in [^ ].* [^ ]*/(mapper|topology|os|protocol|modexless|site|spank_plugin|stepd_server)/[^ ]*' <<<"$log" || true)
	echo "$kind$frame"
}

found=0
table=$build/fuzz-table.txt
findings=$build/fuzz-findings.txt
printf '%-18s %11s %6s %6s %8s %8s %5s %8s\n' target executions cov ft crashes timeouts ooms distinct >"$table"
: >"$findings"
for target in "${targets[@]}"; do
	name=${target#tests/fuzz/fuzz_}
	run=$build/fuzz-runs/$name
	rm -rf "$run"
	mkdir -p "$run/corpus" "$run/artifacts"
	seeds=()
	for dir in corpus regressions; do
		[ -d "$repo/tests/fuzz/$dir/$name" ] && seeds+=("$repo/tests/fuzz/$dir/$name")
	done
	echo "fuzz.sh: $name for ${seconds}s" >&2
	# One job at a time, continuing after a crash so that the whole budget
	# is used; new inputs go to $run/corpus, the seeds stay as they are.
	"$build/$target" "$run/corpus" "${seeds[@]}" "${limits[@]}" \
		-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
		-max_total_time="$seconds" -artifact_prefix="$run/artifacts/" >"$run/log" 2>&1 || true
	# The last status line: "#N: cov: C ft: F corp: ..."
	status=$(grep -E '^#[0-9]+: cov:' "$run/log" | tail -n 1 || true)
	execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<<"$status")
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")
	count() { find "$run/artifacts" -name "$1-*" | wc -l; }
	crashes=$(($(count crash) + $(count leak)))
	timeouts=$(($(count timeout) + $(count slow-unit)))
	ooms=$(count oom)
	# Group the first 50 inputs by what they hit; one example of each.
	: >"$run/signatures"
	for input in $(find "$run/artifacts" -type f | sort | head -n 50); do
		printf '%s\t%s\n' "$(signature "$build/$target" "$input")" "$input" >>"$run/signatures"
	done
	sort -t "$(printf '\t')" -k1,1 -u "$run/signatures" | sed "s|^|$name: |" >>"$findings"
	distinct=$(cut -f1 "$run/signatures" | sort -u | wc -l)
	[ "$distinct" -eq 0 ] || found=1
	printf '%-18s %11s %6s %6s %8s %8s %5s %8s\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
		"$crashes" "$timeouts" "$ooms" "$distinct" >>"$table"
	if $merge; then
		"$build/$target" -merge=1 "$repo/tests/fuzz/corpus/$name" "$run/corpus" "${limits[@]}" \
			>"$run/merge.log" 2>&1 || echo "fuzz.sh: merging $name failed, see $run/merge.log" >&2
	fi
done
cat "$table"
if [ $found -ne 0 ]; then
	echo
	echo "Distinct findings (what failed, an input that shows it):"
	cat "$findings"
fi
exit $found
