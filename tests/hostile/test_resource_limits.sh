#!/usr/bin/env bash
# Resource limits of `qairt convert`, each run under RLIMIT_AS = 1 GiB
# (ulimit -v): a model input with a 2^40-element dimension, a
# ConstantOfShape of 2^40 elements and one of 1 GiB, If subgraphs nested 20
# and 40 deep, an input_list of 10^6 lines and one over the 2^20-sample
# limit. Each is converted within the memory limit or refused with a message
# naming what is too large; none crashes (no exit status from a signal).
#   test_resource_limits.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
# shellcheck source=../cli/common.sh
. "$(dirname "$0")/../cli/common.sh"

/usr/bin/python3 - "$tmp" <<'PY' || { echo "FAIL: cannot generate the models"; exit 1; }
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
def save(nodes, name, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, name + ".onnx"))
f = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
save([helper.make_node("Relu", ["x"], ["y"])], "huge_dim", [f("x", [1, 1 << 40])], [f("y", [1, 1 << 40])])
for name, dims in (("fill_4t", [1 << 20, 1 << 20]), ("fill_1g", [1 << 14, 1 << 14])):
    shape = numpy_helper.from_array(np.array(dims, np.int64), "shape")
    save([helper.make_node("ConstantOfShape", ["shape"], ["c"],
                           value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
          helper.make_node("Add", ["x", "c"], ["y"])], name, [f("x", [1, 1])], [f("y", None)], [shape])
def nested(depth, name):
    out = "o%d" % depth
    leaf = lambda n: helper.make_graph([helper.make_node("Relu", ["x"], [out])], n, [], [f(out, [1, 4])])  # noqa: E731
    if depth == 0:
        return leaf(name)
    return helper.make_graph([helper.make_node("If", ["cond"], [out], then_branch=nested(depth - 1, name + "t"),
                                               else_branch=leaf(name + "e"))], name, [], [f(out, [1, 4])])
for depth in (20, 40):
    top = nested(depth, "g")
    save(list(top.node), "if_%d" % depth, [f("x", [1, 4]), helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
         [f("o%d" % depth, [1, 4])])
save([helper.make_node("Relu", ["x"], ["y"])], "small", [f("x", [1, 4])], [f("y", [1, 4])])
np.arange(4, dtype="<f4").tofile(os.path.join(d, "s.raw"))
with open(os.path.join(d, "million.txt"), "w") as out:
    out.write("x:=s.raw\n" * 1000000)
with open(os.path.join(d, "too_many.txt"), "w") as out:
    out.write("x:=s.raw\n" * ((1 << 20) + 1))
PY

# limited NAME WANT_RC ARGS...: convert under RLIMIT_AS = 1 GiB.
limited() {
  local name=$1 want=$2; shift 2
  (ulimit -v 1048576; exec "$qairt" convert "$@" --target htp_v73 --no_progress) > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ge 128 ]; then
    echo "FAIL $name: killed by signal $((rc - 128))"; sed -n 1,10p "$tmp/err"; fail=1; return
  fi
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; sed -n 1,10p "$tmp/err"; fail=1; return
  fi
  echo "ok: $name (exit $rc)"
}

limited "input dim of 2^40 elements, no samples" 0 -i "$tmp/huge_dim.onnx" -o "$tmp/huge.qairt"
limited "input dim of 2^40 elements, with a sample" 1 -i "$tmp/huge_dim.onnx" --input_list "$tmp/million.txt" \
  -o "$tmp/huge2.qairt"
contains "huge input named" "$tmp/err" "input .x.: file .*s.raw. has 16 bytes, but a float32 tensor of shape \\[1, 1099511627776\\] needs 4398046511104"
limited "ConstantOfShape of 2^40 elements" 1 -i "$tmp/fill_4t.onnx" -o "$tmp/x.qairt"
contains "fill size named" "$tmp/err" "the constant of shape \[1048576, 1048576\] would take 4398046511104 bytes"
limited "ConstantOfShape of 1 GiB under a 1 GiB limit" 1 -i "$tmp/fill_1g.onnx" -o "$tmp/x.qairt"
contains "out of memory names the node" "$tmp/err" "node 'ConstantOfShape_0' \(ConstantOfShape\): out of memory while importing it"
limited "If nested 20 deep" 0 -i "$tmp/if_20.onnx" -o "$tmp/if20.qairt"
limited "If nested 40 deep" 1 -i "$tmp/if_40.onnx" -o "$tmp/x.qairt"
contains "nesting named" "$tmp/err" "nested deeper than 100 message levels"
limited "input_list of 10^6 lines" 0 -i "$tmp/small.onnx" --input_list "$tmp/million.txt" -o "$tmp/m.qairt"
contains "10^6 samples calibrated" "$tmp/out" "^calibration: 1000000 samples"
limited "input_list over 2^20 samples" 1 -i "$tmp/small.onnx" --input_list "$tmp/too_many.txt" -o "$tmp/x.qairt"
contains "sample limit named" "$tmp/err" "line 1048577: more than 1048576 samples"
[ ! -e "$tmp/x.qairt" ] || { echo "FAIL: a refused conversion wrote its output"; fail=1; }

[ "$fail" -eq 0 ] && echo "resource limits: all checks passed"
exit "$fail"
