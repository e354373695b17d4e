"""Test-built ONNX models for the import -> export round trip (fixed seeds).

Each builder returns an onnx.ModelProto; MODELS maps a name to its builder.
Run as a script to write them all into a folder:

    /usr/bin/python3 tests/ort/models.py OUT_DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


class Builder:
    """A GraphProto under construction with deterministic random weights."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.count = 0

    def _fresh(self, base):
        self.count += 1
        return "%s_%d" % (base, self.count)

    def input(self, name, shape, elem=F):
        self.inputs.append(helper.make_tensor_value_info(name, elem, shape))
        return name

    def output(self, name, elem=F, shape=None):
        self.outputs.append(helper.make_tensor_value_info(name, elem, shape))

    def const(self, array, base="c"):
        name = self._fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, shape, scale=None, base="w"):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.const((self.rng.standard_normal(shape) * s).astype(np.float32), base)

    def ints(self, values, base="i"):
        return self.const(np.asarray(values, dtype=np.int64), base)

    def node(self, op, inputs, n_out=1, out=None, domain=None, **attrs):
        outs = out if isinstance(out, list) else [out] if out else [self._fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self._fresh("n_" + op), domain=domain, **attrs))
        return outs[0] if len(outs) == 1 else outs

    def model(self, opset):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="qairt-tests")
        m.ir_version = 8 if opset <= 18 else 10 if opset >= 21 else 9
        if opset <= 17:  # outputs declared without a shape get the inferred one
            g = onnx.shape_inference.infer_shapes(m).graph
            inferred = {v.name: v for v in list(g.value_info) + list(g.output)}
            for o in m.graph.output:
                if not o.type.tensor_type.HasField("shape") and o.name in inferred:
                    o.CopyFrom(inferred[o.name])
        if opset <= 17:  # Debian's onnx 1.12 checker knows opsets up to 17
            onnx.checker.check_model(m)
        return m


def cnn():
    b = Builder("cnn", 1)
    x = b.input("image", [1, 3, 32, 32])
    c = b.node("Conv", [x, b.weight([8, 3, 3, 3]), b.weight([8], 0.1)], pads=[1, 1, 1, 1])
    bn = b.node("BatchNormalization", [c, b.const(np.linspace(0.5, 1.5, 8, dtype=np.float32)),
                                       b.weight([8], 0.1), b.weight([8], 0.1),
                                       b.const(np.linspace(0.5, 2.0, 8, dtype=np.float32))], epsilon=1e-3)
    r = b.node("Relu", [bn])
    p = b.node("MaxPool", [r], kernel_shape=[2, 2], strides=[2, 2])                       # 8x16x16
    dw = b.node("Conv", [p, b.weight([8, 1, 3, 3])], group=8, pads=[1, 1, 1, 1])          # depthwise
    cl = b.node("Clip", [dw, b.const(np.float32(0.0)), b.const(np.float32(6.0))])
    ct = b.node("ConvTranspose", [cl, b.weight([8, 4, 2, 2]), b.weight([4], 0.1)], strides=[2, 2])  # 4x32x32
    lr = b.node("LeakyRelu", [ct], alpha=0.1)
    ap = b.node("AveragePool", [lr], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 4x16x16
    c2 = b.node("Conv", [ap, b.weight([16, 4, 3, 3])], strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2])
    bn2 = b.node("BatchNormalization", [b.node("HardSwish", [c2]), b.const(np.linspace(0.8, 1.2, 16, dtype=np.float32)),
                                        b.weight([16], 0.1), b.weight([16], 0.1),
                                        b.const(np.linspace(0.5, 1.5, 16, dtype=np.float32))])
    sig = b.node("Mul", [bn2, b.node("Sigmoid", [bn2])])
    g = b.node("GlobalAveragePool", [sig])
    f = b.node("Flatten", [g], axis=1)
    fc = b.node("Gemm", [f, b.weight([16, 10]), b.weight([10], 0.1)])
    b.node("Softmax", [fc], out="probs", axis=-1)
    b.output("probs", shape=[1, 10])
    b.node("Identity", [p], out="features")
    b.output("features", shape=[1, 8, 16, 16])
    return b.model(17)


def transformer():
    b = Builder("transformer_block", 2)
    seq, dim, heads = 8, 32, 4
    hd = dim // heads
    x = b.input("tokens", [1, seq, dim])

    def linear(t, n_in, n_out):
        return b.node("Add", [b.node("MatMul", [t, b.weight([n_in, n_out])]), b.weight([n_out], 0.1)])

    ln1 = b.node("LayerNormalization", [x, b.const(np.linspace(0.9, 1.1, dim, dtype=np.float32)), b.weight([dim], 0.1)],
                 axis=-1, epsilon=1e-5)
    q = b.node("Transpose", [b.node("Reshape", [linear(ln1, dim, dim), b.ints([1, seq, heads, hd])])], perm=[0, 2, 1, 3])
    k = b.node("Transpose", [b.node("Reshape", [linear(ln1, dim, dim), b.ints([1, seq, heads, hd])])], perm=[0, 2, 1, 3])
    v = b.node("Transpose", [b.node("Reshape", [linear(ln1, dim, dim), b.ints([0, 0, heads, hd])])], perm=[0, 2, 1, 3])
    # q @ k^T written as Einsum (imports as MatMul with transpose_in1).
    s = b.node("Einsum", [q, k], equation="bhid,bhjd->bhij")
    s = b.node("Div", [s, b.const(np.float32(np.sqrt(hd)))])
    mask = np.triu(np.full((seq, seq), -1e4, dtype=np.float32), 1).reshape(1, 1, seq, seq)
    a = b.node("Softmax", [b.node("Add", [s, b.const(mask)])], axis=-1)
    o = b.node("Transpose", [b.node("MatMul", [a, v])], perm=[0, 2, 1, 3])
    o = b.node("Reshape", [o, b.ints([1, seq, dim])])
    h = b.node("Add", [x, linear(o, dim, dim)])
    ln2 = b.node("LayerNormalization", [h, b.const(np.linspace(1.1, 0.9, dim, dtype=np.float32)), b.weight([dim], 0.1)],
                 axis=2, epsilon=1e-6)
    f = linear(ln2, dim, 2 * dim)
    # GELU as PyTorch exports it below opset 20: x * 0.5 * (1 + erf(x / sqrt 2)).
    e = b.node("Erf", [b.node("Div", [f, b.const(np.float32(np.sqrt(2.0)))])])
    gelu = b.node("Mul", [b.node("Mul", [f, b.node("Add", [e, b.const(np.float32(1.0))])]), b.const(np.float32(0.5))])
    b.node("Add", [h, linear(gelu, 2 * dim, dim)], out="hidden")
    b.output("hidden", shape=[1, seq, dim])
    b.node("ReduceMean", [a], out="attention_mean", axes=[1], keepdims=0)
    b.output("attention_mean", shape=[1, seq, seq])
    return b.model(17)


def lstm():
    b = Builder("lstm", 3)
    seq, batch, n_in, hidden = 5, 2, 4, 8
    x = b.input("sequence", [seq, batch, n_in])
    ys = b.node("LSTM", [x, b.weight([2, 4 * hidden, n_in]), b.weight([2, 4 * hidden, hidden]), b.weight([2, 8 * hidden], 0.1),
                         "", b.weight([2, batch, hidden], 0.1), b.weight([2, batch, hidden], 0.1)],
                out=["lstm_y", "lstm_h", "lstm_c"], hidden_size=hidden, direction="bidirectional")
    b.output("lstm_h", shape=[2, batch, hidden])
    b.output("lstm_c", shape=[2, batch, hidden])
    # Y [seq, 2, batch, H] -> [seq, batch, 2H] -> GRU
    y = b.node("Reshape", [b.node("Transpose", [ys[0]], perm=[0, 2, 1, 3]), b.ints([seq, batch, 2 * hidden])])
    b.node("GRU", [y, b.weight([1, 3 * hidden, 2 * hidden]), b.weight([1, 3 * hidden, hidden]), b.weight([1, 6 * hidden], 0.1)],
           out=["gru_y", "gru_h"], hidden_size=hidden, linear_before_reset=1)
    b.output("gru_y", shape=[seq, 1, batch, hidden])
    b.output("gru_h", shape=[1, batch, hidden])
    return b.model(14)


def resize():
    b = Builder("resize", 4)
    x = b.input("image", [1, 3, 8, 8])
    b.node("Resize", [x, "", b.const(np.array([1, 1, 2, 2], np.float32))], out="nearest_x2",
           mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    b.node("Resize", [x, "", "", b.ints([1, 3, 12, 20])], out="linear_sizes", mode="linear",
           coordinate_transformation_mode="half_pixel")
    b.node("Resize", [x, "", b.const(np.array([1, 1, 1.5, 2.5], np.float32))], out="cubic_scales", mode="cubic",
           coordinate_transformation_mode="pytorch_half_pixel", cubic_coeff_a=-0.5)
    b.node("Resize", [x, "", b.const(np.array([1, 1, 0.5, 0.5], np.float32))], out="linear_down", mode="linear",
           coordinate_transformation_mode="align_corners")
    for name, shape in (("nearest_x2", [1, 3, 16, 16]), ("linear_sizes", [1, 3, 12, 20]),
                        ("cubic_scales", [1, 3, 12, 20]), ("linear_down", [1, 3, 4, 4])):
        b.output(name, shape=shape)
    return b.model(13)


def upsample9():
    b = Builder("upsample9", 5)
    x = b.input("image", [1, 2, 5, 7])
    b.node("Upsample", [x, b.const(np.array([1, 1, 2, 3], np.float32))], out="up", mode="nearest")
    b.output("up", shape=[1, 2, 10, 21])
    return b.model(9)


def pad():
    b = Builder("pad", 6)
    x = b.input("image", [1, 2, 5, 6])
    b.node("Pad", [x, b.ints([0, 0, 1, 2, 0, 0, 2, 1]), b.const(np.float32(0.5))], out="constant")
    b.node("Pad", [x, b.ints([0, 0, 2, 2, 0, 0, 2, 2])], out="reflect", mode="reflect")
    b.node("Pad", [x, b.ints([0, 1, 1, 0, 0, 0, 0, 3])], out="edge", mode="edge")
    # Pad-18 with axes, feeding a conv.
    p = b.node("Pad", [x, b.ints([1, 1, 1, 1]), "", b.ints([2, 3])])
    b.node("Conv", [p, b.weight([3, 2, 3, 3])], out="padded_conv")
    for name, shape in (("constant", [1, 2, 8, 9]), ("reflect", [1, 2, 9, 10]), ("edge", [1, 3, 6, 9]),
                        ("padded_conv", [1, 3, 5, 6])):
        b.output(name, shape=shape)
    return b.model(18)


def gather():
    b = Builder("gather", 7)
    data = b.input("data", [4, 6, 5])
    ids = b.input("ids", [2, 3], I64)
    table = b.weight([10, 4], 1.0)
    b.node("Gather", [table, ids], out="embedding", axis=0)
    b.node("Gather", [data, b.ints([[0, 2], [5, -1]])], out="gather_axis1", axis=1)
    b.node("Gather", [data, b.const(np.int64(2))], out="gather_scalar", axis=0)
    idx = np.random.default_rng(70).integers(0, 6, size=(4, 3, 5)).astype(np.int64)
    b.node("GatherElements", [data, b.const(idx)], out="gather_elements", axis=1)
    b.node("GatherND", [data, b.ints([[0, 1], [3, 5], [2, 2]])], out="gather_nd")
    for name, shape in (("embedding", [2, 3, 4]), ("gather_axis1", [4, 2, 2, 5]), ("gather_scalar", [6, 5]),
                        ("gather_elements", [4, 3, 5]), ("gather_nd", [3, 5])):
        b.output(name, shape=shape)
    return b.model(13)


def misc():
    """Data movement, reductions, indexing and elementwise ops."""
    b = Builder("misc", 8)
    x = b.input("x", [2, 8, 4, 6])
    b.node("Slice", [x, b.ints([0, 1]), b.ints([2, 4]), b.ints([1, 3]), b.ints([1, 2])], out="sliced")
    s0, s1 = b.node("Split", [x, b.ints([3, 5])], n_out=2, axis=1)
    b.node("Concat", [s1, s0], out="concat", axis=1)
    b.node("Tile", [s0, b.ints([1, 2, 1, 1])], out="tiled")
    u = b.node("Unsqueeze", [b.node("ReduceMean", [x], axes=[2], keepdims=0), b.ints([0])])
    b.node("Squeeze", [u, b.ints([0])], out="reduce_mean")
    b.node("ReduceSum", [x, b.ints([1, 3])], out="reduce_sum", keepdims=1)
    b.node("ReduceMax", [x], out="reduce_max", axes=[-1], keepdims=0)
    vals, idx = b.node("TopK", [x, b.ints([2])], n_out=2, axis=-1)
    b.node("Add", [vals, b.node("Cast", [idx], to=F)], out="topk")
    b.node("Cast", [b.node("ArgMax", [x], axis=1, keepdims=0)], out="argmax", to=F)
    b.node("CumSum", [x, b.const(np.int64(2))], out="cumsum")
    b.node("Where", [b.node("Greater", [x, b.const(np.float32(0.1))]), x, b.node("Neg", [x])], out="where")
    b.node("Transpose", [x], out="transposed", perm=[0, 2, 3, 1])
    b.node("Expand", [b.node("Slice", [x, b.ints([0]), b.ints([1]), b.ints([0])]), b.ints([3, 8, 4, 6])], out="expanded")
    a = b.node("Abs", [x])
    m = b.node("Max", [b.node("Sqrt", [a]), b.node("Exp", [x]), b.node("Log", [b.node("Add", [a, b.const(np.float32(1))])])])
    m = b.node("Mean", [m, b.node("Pow", [a, b.const(np.float32(1.5))]), b.node("Reciprocal", [b.node("Add", [a, b.const(np.float32(2))])])])
    m = b.node("Min", [m, b.node("Tanh", [x]), b.node("Elu", [x], alpha=0.7)])
    m = b.node("Sum", [m, b.node("HardSigmoid", [x]), b.node("Sin", [x]), b.node("Cos", [x])])
    b.node("Sub", [m, b.node("Softplus", [x])], out="elementwise")
    d2s = b.node("DepthToSpace", [x], blocksize=2, mode="CRD")
    b.node("SpaceToDepth", [d2s], out="depth_space", blocksize=2)
    b.node("DepthToSpace", [x], out="d2s_dcr", blocksize=2, mode="DCR")
    b.node("LRN", [x], out="lrn", size=3, alpha=1e-3, beta=0.75, bias=1.5)
    b.node("InstanceNormalization", [x, b.weight([8], 1.0), b.weight([8], 0.1)], out="instance_norm", epsilon=1e-4)
    b.node("LogSoftmax", [x], out="log_softmax", axis=1)
    b.node("MatMul", [x, b.weight([6, 3])], out="matmul")
    for name in ("sliced", "concat", "tiled", "reduce_mean", "reduce_sum", "reduce_max", "topk", "argmax", "cumsum",
                 "where", "transposed", "expanded", "elementwise", "depth_space", "d2s_dcr", "lrn", "instance_norm",
                 "log_softmax", "matmul"):
        b.output(name)
    return b.model(17)


def norms18():
    """GroupNormalization (opset 18: per-group scale/bias) and a 3-D Gemm-free FC."""
    b = Builder("norms18", 9)
    x = b.input("x", [2, 6, 4, 4])
    b.node("GroupNormalization", [x, b.weight([3], 1.0), b.weight([3], 0.1)], out="group_norm", num_groups=3,
           epsilon=1e-5)
    b.output("group_norm", shape=[2, 6, 4, 4])
    ln = b.node("LayerNormalization", [x, b.weight([4, 4], 1.0)], axis=2)
    b.node("Gemm", [b.node("Reshape", [ln, b.ints([12, 16])]), b.weight([7, 16]), b.weight([7], 0.1)],
           out="gemm_t", transB=1, alpha=0.5, beta=2.0)
    b.output("gemm_t", shape=[12, 7])
    return b.model(18)


MODELS = {
    "cnn": cnn,
    "transformer": transformer,
    "lstm": lstm,
    "resize": resize,
    "upsample9": upsample9,
    "pad": pad,
    "gather": gather,
    "misc": misc,
    "norms18": norms18,
}


def main(argv):
    if len(argv) != 2:
        print("usage: models.py OUT_DIR", file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), os.path.join(argv[1], name + ".onnx"))
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
