#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds everything with warnings as errors
# and runs the whole test suite. Extra arguments go to ctest (e.g. -L unit).
# QAIRT_SANITIZERS=1 (set by .ci/run) also builds the library and its C/C++
# tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ and
# runs them there.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/setup-npm.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQAIRT_WERROR=ON >/dev/null
cmake --build build
(cd build && ctest --output-on-failure -j"$(nproc)" "$@")

if [ "${QAIRT_SANITIZERS:-0}" = "1" ]; then
  echo "== ASan + UBSan build (build-asan/)"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DQAIRT_WERROR=ON \
    -DQAIRT_SANITIZE=address,undefined -DQAIRT_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build build-asan
  # Tests hosted by uninstrumented interpreters (Python, node; the encodings
  # CLI test drives Python) are left to the normal build. Everything native
  # runs instrumented.
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$(nproc)" -LE "python|ort" -E cli_encodings)
fi
