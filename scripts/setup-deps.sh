#!/usr/bin/env bash
# Installs everything qairt needs to build and test on a fresh Debian 12 machine.
# Package sources: Debian's apt only (npm is used later for the ONNX Runtime cross-check).
# Idempotent: packages already present are skipped quickly.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  clang llvm libclang-rt-14-dev
  libflatbuffers-dev flatbuffers-compiler
  libprotobuf-dev protobuf-compiler
  libonnx-dev
  libsimdjson-dev libfmt-dev libabsl-dev
  catch2 libbenchmark-dev
  python3 python3-numpy python3-onnx
  python3-torch python3-torchvision  # the model corpus: real torch.onnx.export output (tests/models)
  python3-pil fonts-dejavu-core  # calibration test images: rendered text lines (tests/calib)
  python3-distributed  # sharded calibration on a Dask cluster (python/qairt/distributed.py, its tests)
  python3-pyarmnn  # independent TFLite reference (Arm NN CpuRef) for tests/python/test_tflite.py
  libarmnn-cpuref-backend22  # its CpuRef backend: only a Recommends of python3-pyarmnn, and this script skips those
  binutils
  libopenblas0-pthread  # GEMM of the reference executor (lib/exec, loaded at run time)
  chromium  # renders the HTML report in tests/cli/test_report.sh (headless)
  locales  # de_DE.UTF-8 (comma decimal) for the locale-independence test (tests/hostile)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# The locale test needs a comma-decimal locale; generate it once.
ensure_locale() {
  grep -qi '^de_DE\.utf-\?8$' <<<"$(locale -a 2>/dev/null)" && return 0
  echo "setup-deps: generating the de_DE.UTF-8 locale"
  $SUDO sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^de_DE.UTF-8 UTF-8' /etc/locale.gen || echo 'de_DE.UTF-8 UTF-8' | $SUDO tee -a /etc/locale.gen >/dev/null
  $SUDO locale-gen >/dev/null
}

missing=()
for p in "${PACKAGES[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PACKAGES[@]} packages present"
  ensure_locale
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
ensure_locale
