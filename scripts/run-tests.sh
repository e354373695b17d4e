#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything with warnings as errors
# and runs the whole test suite. Extra arguments go to ctest (e.g. -L unit).
# QAIRT_SANITIZERS=1 (set by .ci/run) also builds the library and its C/C++
# tests with clang, AddressSanitizer + UndefinedBehaviorSanitizer and the
# libFuzzer targets in build-asan/ and runs the tests there, builds the
# library and its concurrency tests with clang ThreadSanitizer in build-tsan/
# and runs those, then runs each fuzz target for QAIRT_FUZZ_SECONDS
# (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/setup-npm.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQAIRT_WERROR=ON >/dev/null
cmake --build build
(cd build && ctest --output-on-failure -j"$(nproc)" "$@")

if [ "${QAIRT_SANITIZERS:-0}" = "1" ]; then
  # One clang build serves the sanitizer suite and the fuzzers: the library
  # and tests are built with ASan + UBSan and libFuzzer's coverage
  # instrumentation (-fsanitize=fuzzer-no-link, QAIRT_FUZZ=ON), the fuzz
  # targets in tests/fuzz link against that same library. No third build.
  echo "== ASan + UBSan + libFuzzer build (clang, build-asan/)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DQAIRT_WERROR=ON \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DQAIRT_SANITIZE=address,undefined -DQAIRT_FUZZ=ON -DQAIRT_FUZZ_SECONDS="${QAIRT_FUZZ_SECONDS:-60}" \
    -DQAIRT_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-asan
  # Tests hosted by uninstrumented interpreters (Python, node; the encodings
  # CLI test drives Python) are left to the normal build. Everything native
  # runs instrumented.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$(nproc)" -LE "python|ort|fuzz" -E cli_encodings)
  # ThreadSanitizer cannot share a build with ASan: a third build, of the
  # library and the [threads] tests only (-O1, line tables: TSan needs
  # optimisation to run at a usable speed, not full debug info).
  echo "== ThreadSanitizer build (clang, build-tsan/, concurrency tests only)"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DQAIRT_WERROR=ON \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DQAIRT_SANITIZE=thread -DQAIRT_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-tsan --target qairt_tsan_tests
  (cd build-tsan && ctest --output-on-failure -L concurrency)
  echo "== fuzz targets, ${QAIRT_FUZZ_SECONDS:-60} s each (docs/TESTING.md)"
  (cd build-asan && ctest --output-on-failure -j"$(nproc)" -L fuzz)
fi
