#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds qairt and runs the main job on the
# bundled example model: `qairt inspect` (what is in it) and a dry run of the
# conversion (will it convert: ops, static shapes, problems), then the C API
# example that builds a small graph by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target example_build_graph qairt_cli
./build/qairt version
echo; echo "== qairt inspect examples/models/squeezenet_light.onnx"
./build/qairt inspect examples/models/squeezenet_light.onnx
echo; echo "== qairt convert -i examples/models/squeezenet_light.onnx --dry_run"
./build/qairt convert -i examples/models/squeezenet_light.onnx --dry_run
echo; echo "== examples/build_graph.c"
./build/example_build_graph
