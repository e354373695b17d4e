#!/usr/bin/env python3
"""Writes a small pre-LN transformer encoder layer (float ONNX, opset 17) and
calibration / evaluation samples for the LPBQ test:

  make_transformer.py OUT_DIR [SEQ=16] [DIM=128] [SAMPLES=8]

OUT_DIR/transformer.onnx: input x [1, SEQ, DIM] -> LayerNorm -> Q/K/V
MatMuls (DIM x DIM) -> softmax(QK^T / sqrt(DIM)) V -> output MatMul ->
residual Add -> LayerNorm -> MatMul (DIM x 2 DIM) -> Gelu (Erf form) ->
MatMul (2 DIM x DIM) -> residual Add -> y. Weights: seeded normal with a few
larger output channels per matrix (what makes per-channel/LPBQ scales
matter). OUT_DIR/{calib,eval}_list.txt with float32 raw samples (seeded
normal activations, like token embeddings).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    seq = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    dim = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261129)
    inits, nodes = [], []

    def weight(name, rows, cols):
        w = rng.normal(0, 1 / np.sqrt(rows), (rows, cols)).astype(np.float32)
        w[:, rng.choice(cols, 4, replace=False)] *= 4  # a few wide output channels
        inits.append(numpy_helper.from_array(w, name))
        return name

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_" + op, **attrs))
        return outs[0]

    const("ln1_g", np.ones(dim)); const("ln1_b", np.zeros(dim))
    const("ln2_g", np.ones(dim)); const("ln2_b", np.zeros(dim))
    h = node("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["ln1"], axis=-1, epsilon=1e-5)
    q = node("MatMul", [h, weight("wq", dim, dim)], ["q"])
    k = node("MatMul", [h, weight("wk", dim, dim)], ["k"])
    v = node("MatMul", [h, weight("wv", dim, dim)], ["v"])
    kt = node("Transpose", [k], ["kt"], perm=[0, 2, 1])
    s = node("MatMul", [q, kt], ["scores"])
    s = node("Mul", [s, const("inv_sqrt_d", 1 / np.sqrt(dim))], ["scaled"])
    p = node("Softmax", [s], ["probs"], axis=-1)
    a = node("MatMul", [p, v], ["attn"])
    o = node("MatMul", [a, weight("wo", dim, dim)], ["attn_out"])
    r1 = node("Add", ["x", o], ["res1"])
    h2 = node("LayerNormalization", [r1, "ln2_g", "ln2_b"], ["ln2"], axis=-1, epsilon=1e-5)
    f1 = node("MatMul", [h2, weight("w1", dim, 2 * dim)], ["ff1"])
    # Gelu, Erf form: 0.5 x (1 + erf(x / sqrt 2))
    e = node("Erf", [node("Mul", [f1, const("inv_sqrt2", 1 / np.sqrt(2))], ["ff1_s"])], ["ff1_erf"])
    g = node("Mul", [node("Mul", [f1, const("half", 0.5)], ["ff1_h"]),
                     node("Add", [e, const("one", 1.0)], ["ff1_e1"])], ["gelu"])
    f2 = node("MatMul", [g, weight("w2", 2 * dim, dim)], ["ff2"])
    node("Add", [r1, f2], ["y"])
    graph = helper.make_graph(nodes, "transformer_layer",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, dim])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, dim])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="qairt-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "transformer.onnx"))
    for split, count in (("calib", n), ("eval", n)):
        lines = []
        for i in range(count):
            f = "%s_%03d.raw" % (split, i)
            rng.normal(0, 1, (1, seq, dim)).astype("<f4").tofile(os.path.join(out, f))
            lines.append("x:=%s\n" % f)
        open(os.path.join(out, split + "_list.txt"), "w").writelines(lines)


if __name__ == "__main__":
    main()
