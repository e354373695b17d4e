#!/usr/bin/env bash
# Longer local fuzzing that keeps what it finds.
#   scripts/fuzz.sh [-t SECONDS] [TARGET ...]      (default: 600 s, every target)
# Builds the clang ASan + UBSan + libFuzzer build in build-fuzz/ (or
# $QAIRT_FUZZ_BUILD), runs each target for SECONDS on its checked-in seeds
# plus a working corpus kept in build-fuzz/fuzz-work/<target>/ (so runs
# continue where the last one stopped), then minimises: libFuzzer's -merge
# keeps, next to the named seeds and regress_* inputs, only the found inputs
# (hash names) that add coverage, and tests/fuzz/corpus/<target>/ is updated
# to that set. Review `git status tests/fuzz/corpus` and commit what is worth
# keeping. A crash, leak, sanitizer report, OOM or timeout stops with the
# artifact's path and how to replay it; exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
if [ "${1:-}" = "-t" ]; then seconds=$2; shift 2; fi
build=${QAIRT_FUZZ_BUILD:-build-fuzz}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(sed -n 's/^set(QAIRT_FUZZ_TARGETS \(.*\))$/\1/p' tests/fuzz/CMakeLists.txt | tr ' ' '\n')
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DQAIRT_SANITIZE=address,undefined -DQAIRT_FUZZ=ON -DQAIRT_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
status=0
for t in "${targets[@]}"; do
  seeds=tests/fuzz/corpus/$t
  work=$build/fuzz-work/$t
  artifacts=$build/fuzz-artifacts
  mkdir -p "$seeds" "$work" "$artifacts"
  echo "== fuzz_$t: $seconds s"
  if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
       -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/$t-" "$work" "$seeds" > "$work.log" 2>&1; then
    echo "FINDING in fuzz_$t (log: $work.log):"
    grep -E "ERROR|SUMMARY|artifact_prefix|Test unit written" "$work.log" > "$work.findings" || true
    cat "$work.findings"
    echo "Replay: $build/tests/fuzz/fuzz_$t <artifact>; then add a regression test (tests/hostile/test_fuzz_regressions.cpp)"
    echo "and the input as $seeds/regress_<what>, and fix the bug."
    status=1
    continue
  fi
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work.log" || true

  # Minimise: start from the named seeds (kept as they are), add what adds coverage.
  keep=$(mktemp -d)
  find "$seeds" -regextype posix-extended -maxdepth 1 -type f ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$keep/" \;
  "$build/tests/fuzz/fuzz_$t" -merge=1 -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    "$keep" "$seeds" "$work" > "$work.merge.log" 2>&1
  find "$seeds" -regextype posix-extended -maxdepth 1 -type f -regex '.*/[0-9a-f]{40}' -delete
  find "$keep" -regextype posix-extended -maxdepth 1 -type f -regex '.*/[0-9a-f]{40}' -exec cp {} "$seeds/" \;
  rm -rf "$keep"
  kept=$(find "$seeds" -regextype posix-extended -maxdepth 1 -type f -regex '.*/[0-9a-f]{40}' | wc -l)
  echo "   corpus: $kept found inputs kept in $seeds ($(du -sh "$seeds" | cut -f1) in all)"
done
exit "$status"
