"""Test models for `qairt prepare --target aic100`.

Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy). Each
function writes one model and returns its path; the weights come from a
seeded generator so the models are the same on every run.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
S, D = 8, 16


def _save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="qairt-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def transformer_mask(path, seed=1):
    """A self-attention block whose causal mask is an additive fp32-min
    constant (what exporters write for -inf): scores + mask -> Softmax."""
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
    mask = np.triu(np.full((1, S, S), np.finfo(np.float32).min, np.float32), 1)
    inits = [
        numpy_helper.from_array(np.ones(D, np.float32), "ln_scale"),
        numpy_helper.from_array(np.zeros(D, np.float32), "ln_bias"),
        numpy_helper.from_array(w(D, D), "wq"), numpy_helper.from_array(w(D, D), "wk"),
        numpy_helper.from_array(w(D, D), "wv"), numpy_helper.from_array(w(D, D), "wo"),
        numpy_helper.from_array(np.array(1.0 / np.sqrt(D), np.float32), "inv_sqrt_d"),
        numpy_helper.from_array(mask, "causal_mask"),
    ]
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln_scale", "ln_bias"], ["ln"], name="ln", axis=-1),
        helper.make_node("MatMul", ["ln", "wq"], ["q"], name="q_proj"),
        helper.make_node("MatMul", ["ln", "wk"], ["k"], name="k_proj"),
        helper.make_node("MatMul", ["ln", "wv"], ["v"], name="v_proj"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"], name="qk"),
        helper.make_node("Mul", ["qk", "inv_sqrt_d"], ["scores"], name="scale"),
        helper.make_node("Add", ["scores", "causal_mask"], ["masked"], name="mask_add"),
        helper.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "v"], ["ctx"], name="ctx"),
        helper.make_node("MatMul", ["ctx", "wo"], ["attn"], name="o_proj"),
        helper.make_node("Add", ["x", "attn"], ["y"], name="residual"),
    ]
    g = helper.make_graph(nodes, "transformer_mask",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", S, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", S, D])], inits)
    return _save(g, path)


def residual_overflow(path, seed=2, blocks=4, gain=15000.0):
    """A pre-norm residual stream that grows past 65504 with inputs in
    [-1, 1]: h_{i+1} = h_i + LayerNorm(h_i) @ W_i (W_i large), then a final
    LayerNorm and projection (the output itself stays small)."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    inits.append(numpy_helper.from_array(np.ones(D, np.float32), "ones"))
    inits.append(numpy_helper.from_array(np.zeros(D, np.float32), "zeros"))
    h = "x"
    for i in range(blocks):
        inits.append(numpy_helper.from_array((rng.standard_normal((D, D)) * gain / np.sqrt(D)).astype(np.float32), f"w{i}"))
        nodes.append(helper.make_node("LayerNormalization", [h, "ones", "zeros"], [f"ln{i}_out"], name=f"ln{i}", axis=-1))
        nodes.append(helper.make_node("MatMul", [f"ln{i}_out", f"w{i}"], [f"mlp{i}_out"], name=f"mlp{i}"))
        nodes.append(helper.make_node("Add", [h, f"mlp{i}_out"], [f"res{i}_out"], name=f"res{i}"))
        h = f"res{i}_out"
    inits.append(numpy_helper.from_array((rng.standard_normal((D, 4)) * 0.25).astype(np.float32), "w_head"))
    nodes.append(helper.make_node("LayerNormalization", [h, "ones", "zeros"], ["ln_f_out"], name="ln_f", axis=-1))
    nodes.append(helper.make_node("MatMul", ["ln_f_out", "w_head"], ["y"], name="head"))
    g = helper.make_graph(nodes, "residual_overflow",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, 4])], inits)
    return _save(g, path)


def tiny_weights(path, seed=3):
    """A layer whose weights are ~1e-30 (all flush to zero in fp16) next to a
    normal one."""
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array((rng.standard_normal((D, D)) * 1e-30).astype(np.float32), "w_tiny"),
        numpy_helper.from_array((rng.standard_normal((D, D)) * 0.2).astype(np.float32), "w_normal"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w_normal"], ["a"], name="normal"),
        helper.make_node("MatMul", ["x", "w_tiny"], ["b"], name="tiny"),
        helper.make_node("Add", ["a", "b"], ["y"], name="sum"),
    ]
    g = helper.make_graph(nodes, "tiny_weights", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, D])], inits)
    return _save(g, path)


def slice_int64(path):
    """Slice with an int64 end of 2^31-1 ("to the end", as exporters write it)
    next to a float bound of 1e5 that is beyond fp16: only the float one may
    be clipped."""
    inits = [
        numpy_helper.from_array(np.array([1], np.int64), "starts"),
        numpy_helper.from_array(np.array([2**31 - 1], np.int64), "ends"),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
        numpy_helper.from_array(np.array(1e5, np.float32), "upper"),
    ]
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["sliced"], name="slice"),
        helper.make_node("Min", ["sliced", "upper"], ["y"], name="bound"),
    ]
    g = helper.make_graph(nodes, "slice_int64", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S - 1, D])], inits)
    return _save(g, path)


def where_inf(path):
    """A causal mask applied with Where(mask, -inf, scores) (the select form
    the compiler runs as ElementWiseSelect): the -inf fill must be kept. A
    second -inf constant, a Max floor after the Softmax, feeds no select and
    may be clipped (probabilities are >= 0, so clipping it changes nothing)."""
    cond = np.triu(np.ones((1, S, S), bool), 1)
    inits = [
        numpy_helper.from_array(cond, "causal"),
        numpy_helper.from_array(np.array([-np.inf], np.float32), "fill"),
        numpy_helper.from_array(np.array([-np.inf], np.float32), "floor"),
    ]
    nodes = [
        helper.make_node("Where", ["causal", "fill", "x"], ["masked"], name="select"),
        helper.make_node("Softmax", ["masked"], ["probs"], name="softmax", axis=-1),
        helper.make_node("Max", ["probs", "floor"], ["y"], name="floor_max"),
    ]
    g = helper.make_graph(nodes, "where_inf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, S])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, S])], inits)
    return _save(g, path)


def bf16(path):
    """A bfloat16 initializer and a bfloat16 graph input (AI 100 has no bf16),
    both cast to float32 before use."""
    w = helper.make_tensor("w_bf16", TensorProto.BFLOAT16, [D], np.linspace(-1, 1, D).astype(np.float32).tolist())
    nodes = [
        helper.make_node("Cast", ["w_bf16"], ["w"], name="cast_w", to=TensorProto.FLOAT),
        helper.make_node("Cast", ["x_bf16"], ["xb"], name="cast_x", to=TensorProto.FLOAT),
        helper.make_node("Add", ["x", "w"], ["a"], name="add_w"),
        helper.make_node("Add", ["a", "xb"], ["y"], name="add_x"),
    ]
    g = helper.make_graph(nodes, "bf16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D]),
                                          helper.make_tensor_value_info("x_bf16", TensorProto.BFLOAT16, [1, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, D])], [w])
    return _save(g, path)


def two_symbols(path, seed=4):
    """A projection over a symbolic batch and sequence: x[batch, seq, D]."""
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array((rng.standard_normal((D, D)) * 0.2).astype(np.float32), "w")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")]
    g = helper.make_graph(nodes, "two_symbols", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", D])], inits)
    return _save(g, path)


def reduce_prod(path):
    """ReduceProd, which the importer and executor handle but the aic100
    descriptor has no kernel for."""
    nodes = [helper.make_node("ReduceProd", ["x"], ["y"], name="prod", axes=[1], keepdims=1)]
    g = helper.make_graph(nodes, "reduce_prod", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])])
    return _save(g, path)


def write_input_list(folder, name, shapes, count, seed=7, low=-1.0, high=1.0):
    """Raw float32 samples and the input_list naming them; returns the list path."""
    rng = np.random.default_rng(seed)
    lines = []
    for k in range(count):
        entries = []
        for inp, shape in shapes.items():
            f = os.path.join(folder, f"{name}_{inp}_{k}.raw")
            rng.uniform(low, high, shape).astype(np.float32).tofile(f)
            entries.append(f"{inp}:={f}")
        lines.append(" ".join(entries))
    p = os.path.join(folder, f"{name}_input_list.txt")
    with open(p, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return p


if __name__ == "__main__":
    import sys
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    for fn in (transformer_mask, residual_overflow, tiny_weights, slice_int64, where_inf, bf16, two_symbols, reduce_prod):
        print(fn(os.path.join(out, fn.__name__ + ".onnx")))
