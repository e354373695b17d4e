#!/usr/bin/env bash
# A model whose external weight data exceeds 2 GiB converts (the file is
# created sparse here, never stored): a Gemm with a [131104, 4096] float32
# weight (2.15 GB) whose first and last rows hold values (the last one past
# the 2^31 byte offset), the rest zeros; no samples, the weight encoded from
# its values (--float_fallback, per row). The per-row int8 scales of both
# rows must be numpy's. A Constant node's value in external data (torch
# writes those for models above 2 GB) is read from the model's folder. On a
# small model, external data and inline data give byte-identical outputs.
#   test_large_external_data.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/cli/common.sh"

# make MODEL_DIR N K external|inline: model.onnx (+ model.data), enc.json, rows.npy (the nonzero rows)
make() {
  $py - "$@" <<'PY'
import json, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper
d, n, k, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(3)
first = rng.standard_normal(k).astype(np.float32) * 0.1
last = rng.standard_normal(k).astype(np.float32) * 2.0
np.save(os.path.join(d, "rows.npy"), np.stack([first, last]))
w = TensorProto()
w.name, w.data_type = "W", TensorProto.FLOAT
w.dims.extend([n, k])
if mode == "external":
    size = n * k * 4
    with open(os.path.join(d, "model.data"), "wb") as f:
        f.truncate(size)  # sparse: only the two rows below take disk space
        f.seek(0)
        f.write(first.tobytes())
        f.seek(size - 4 * k)
        f.write(last.tobytes())
    w.data_location = TensorProto.EXTERNAL
    for key, v in (("location", "model.data"), ("offset", "0"), ("length", str(size))):
        e = w.external_data.add()
        e.key, e.value = key, v
else:
    full = np.zeros((n, k), np.float32)
    full[0], full[-1] = first, last
    w.raw_data = full.tobytes()
# A Constant node whose value tensor is external data too, as torch writes
# every constant of a model above 2 GB.
cvals = (np.arange(n, dtype=np.float32) % 7 - 3) * 0.01
c = TensorProto()
c.name, c.data_type = "c", TensorProto.FLOAT
c.dims.extend([n])
if mode == "external":
    with open(os.path.join(d, "c.data"), "wb") as f:
        f.write(cvals.tobytes())
    c.data_location = TensorProto.EXTERNAL
    for key, v in (("location", "c.data"), ("offset", "0"), ("length", str(4 * n))):
        e = c.external_data.add()
        e.key, e.value = key, v
else:
    c.raw_data = cvals.tobytes()
nodes = [helper.make_node("Gemm", ["x", "W"], ["g"], name="proj", transB=1),
         helper.make_node("Constant", [], ["c"], name="shift", value=c),
         helper.make_node("Add", ["g", "c"], ["y"], name="add")]
g = helper.make_graph(nodes, "big",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, k])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, n])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
def act(lo, hi):
    s = (hi - lo) / 65535.0
    return [{"bitwidth": 16, "dtype": "int", "is_symmetric": "False", "min": lo, "max": hi,
             "offset": int(round(lo / s)), "scale": s}]
json.dump({"activation_encodings": {"x": act(-4.0, 4.0), "g": act(-50.0, 50.0), "y": act(-50.0, 50.0)},
           "param_encodings": {}},
          open(os.path.join(d, "enc.json"), "w"))
PY
}

convert() {  # DIR
  check "convert $1" 0 "$qairt" convert -i "$1/model.onnx" --target htp_v73 --quantization_overrides "$1/enc.json" \
    --float_fallback --use_per_row_quantization -o "$1/out.qairt" --export_encodings "$1/out.json" \
    --encodings_format 1.0.0
}

make "$tmp/big" 131104 4096 external || { echo "FAIL: generator"; exit 1; }
bytes=$(stat -c %s "$tmp/big/model.data")
[ "$bytes" -gt 2147483648 ] || { echo "FAIL: the weight data is $bytes bytes, not > 2 GiB"; fail=1; }
convert "$tmp/big"
$py - "$tmp/big" <<'PY' || fail=1
import json, os, sys
import numpy as np
d = sys.argv[1]
rows = np.load(os.path.join(d, "rows.npy"))
enc = {p["name"]: p for p in json.load(open(os.path.join(d, "out.json")))["param_encodings"]}
w = [p for name, p in enc.items() if p["enc_type"] == "PER_CHANNEL" and p["bw"] == 8]
if len(w) != 1 or len(w[0]["scale"]) != 131104:
    sys.exit("FAIL large: want one per-row int8 weight encoding with 131104 scales, got %r"
             % [(p["name"], len(p["scale"])) for p in w])
scales = np.array(w[0]["scale"], np.float64)
for i, row in ((0, rows[0]), (131103, rows[1])):
    want = float(np.abs(row).max()) / 127
    if abs(scales[i] - want) > 1e-6 * want:
        sys.exit("FAIL large: row %d scale %r, numpy's max|w|/127 is %r" % (i, scales[i], want))
size = os.path.getsize(os.path.join(d, "out.qairt"))
if size < 131104 * 4096:
    sys.exit("FAIL large: the container has %d bytes, less than the int8 weight" % size)
print("large external data: converted, %d-byte container, row scales match numpy" % size)
PY

# Small: the same model with external and with inline data, byte for byte.
make "$tmp/ext" 48 64 external && make "$tmp/inl" 48 64 inline || { echo "FAIL: generator"; exit 1; }
convert "$tmp/ext"
convert "$tmp/inl"
cmp -s "$tmp/ext/out.json" "$tmp/inl/out.json" || { echo "FAIL: encodings differ between external and inline data"; fail=1; }
cmp -s "$tmp/ext/out.qairt" "$tmp/inl/out.qairt" || { echo "FAIL: containers differ between external and inline data"; fail=1; }

[ "$fail" = 0 ] && echo "test_large_external_data: OK"
exit "$fail"
