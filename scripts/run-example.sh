#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds qairt and runs the bundled example:
# a small CNN built through the C API, validated, summarised as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target example_build_graph qairt_cli
./build/qairt version
./build/example_build_graph
