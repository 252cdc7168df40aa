#!/bin/bash
# Fuzzes the scene and lesson loaders, the placeholders of lesson texts
# (parsed and computed) and the CLI's argument parsing with libFuzzer
# (clang, ASan + UBSan + LSan) within a total budget of SECONDS (default 60):
#   tests/fuzz/run.sh [SECONDS]
# It builds the four targets in build-fuzz/ (kept between runs, so only
# the first run pays for a full build), then runs them at once for whatever
# the build left of the budget (at least 10 s). Every input must finish
# within -timeout seconds and -rss_limit_mb of memory; the lesson-text
# target, which computes, gets tighter limits. The corpora grow in
# build-fuzz/fuzz-corpus/, seeded from data/presets/, data/lessons/,
# tests/fuzz/cli-seeds/ and tests/fuzz/lesson-text-seeds/ on every run. A
# crash, leak, UB report, timeout or memory overrun fails the run and
# leaves its input in build-fuzz/fuzz-artifacts/: fix the bug, then copy the
# input to tests/fuzz/regressions/{scene,lesson,lesson-text,cli}/ so
# test-robustness replays it from then on.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
budget=${1:-60}
case $budget in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac
start=$SECONDS
build=$root/build-fuzz

if [ ! -f "$build/build.ninja" ]; then
	CC=clang meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debugoptimized >"$root/build-fuzz.log" 2>&1 ||
		{ cat "$root/build-fuzz.log"; echo "fuzz: meson setup failed (is clang installed?)"; exit 1; }
fi
ninja -C "$build" tests/fuzz/fuzz-scene tests/fuzz/fuzz-lesson tests/fuzz/fuzz-lesson-text tests/fuzz/fuzz-cli \
	>"$build/fuzz-build.log" 2>&1 ||
	{ cat "$build/fuzz-build.log"; echo "fuzz: build failed"; exit 1; }

seconds=$((budget - (SECONDS - start)))
[ "$seconds" -lt 10 ] && seconds=10
corpus=$build/fuzz-corpus
artifacts=$build/fuzz-artifacts
work=$build/fuzz-work # the CLI target's working directory: empty, so relative names find nothing
mkdir -p "$corpus/scene" "$corpus/lesson" "$corpus/lesson-text" "$corpus/cli" "$artifacts" "$work"
cp "$root"/data/presets/*.json "$corpus/scene/"
cp "$root"/data/lessons/*.json "$corpus/lesson/"
cp "$root"/tests/fuzz/lesson-text-seeds/* "$corpus/lesson-text/"
cp "$root"/tests/fuzz/cli-seeds/* "$corpus/cli/"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp
common=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1)

echo "fuzz: four targets for ${seconds} s (build took $((SECONDS - start)) s of the ${budget} s budget)"
"$build/tests/fuzz/fuzz-scene" "${common[@]}" -max_len=65536 -dict="$root/tests/fuzz/scene.dict" \
	-artifact_prefix="$artifacts/scene-" "$corpus/scene" >"$build/fuzz-scene.log" 2>&1 &
scene_pid=$!
"$build/tests/fuzz/fuzz-lesson" "${common[@]}" -max_len=65536 -dict="$root/tests/fuzz/scene.dict" \
	-artifact_prefix="$artifacts/lesson-" "$corpus/lesson" >"$build/fuzz-lesson.log" 2>&1 &
lesson_pid=$!
# computes every input: 64 MB of memory budget (set by the target), 5 s and 1 GB at most
"$build/tests/fuzz/fuzz-lesson-text" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	-max_len=2048 -dict="$root/tests/fuzz/lesson-text.dict" -artifact_prefix="$artifacts/lesson-text-" \
	"$corpus/lesson-text" >"$build/fuzz-lesson-text.log" 2>&1 &
text_pid=$!
# the CLI prints a message for every bad command line: stderr is closed
# (libFuzzer keeps its own and the sanitizers' reports)
(cd "$work" && exec "$build/tests/fuzz/fuzz-cli" "${common[@]}" -max_len=4096 -close_fd_mask=2 \
	-dict="$root/tests/fuzz/cli.dict" -artifact_prefix="$artifacts/cli-" "$corpus/cli") >"$build/fuzz-cli.log" 2>&1 &
cli_pid=$!
rc=0
wait $scene_pid || rc=1
wait $lesson_pid || rc=1
wait $text_pid || rc=1
wait $cli_pid || rc=1

for target in scene lesson lesson-text cli; do
	log=$build/fuzz-$target.log
	runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$')
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	echo "fuzz-$target: ${runs:-?} inputs, ${cov:-cov: ?}, corpus $(find "$corpus/$target" -type f | wc -l) files"
	if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|deadly signal' "$log"; then
		rc=1
		grep -E 'ERROR:|runtime error|SUMMARY|Test unit written' "$log" | head -20
	fi
done
[ $rc -eq 0 ] && echo "fuzz: no crash, leak or undefined behaviour found" ||
	echo "fuzz: FAILED; inputs in $artifacts (logs: $build/fuzz-*.log)"
exit $rc
