"""Models for the executor's cross-checks and benchmark (fixed seeds).

light_model(path): an onnx-light architecture (tests/data/onnx-light or
../shared/models/onnx-light) whose ConstantOfShape weight placeholders are
replaced by deterministic random initializers, so outputs are not constant.
encoder_layer(), recurrent(), qdq_cnn(), mobilenet_like(), resnet50(): test-built models.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LIGHT_DIRS = [os.path.join(REPO, "tests", "data", "onnx-light"),
              os.path.join(os.path.dirname(REPO), "shared", "models", "onnx-light")]
CLS_MODEL = os.path.join(REPO, "third_party", "npm", "node_modules", "@gutenye", "ocr-models", "assets",
                         "ch_ppocr_mobile_v2.0_cls_infer.onnx")


def light_path(name):
    for d in LIGHT_DIRS:
        p = os.path.join(d, name + ".onnx")
        if os.path.exists(p):
            return p
    return None


def light_names():
    names = set()
    for d in LIGHT_DIRS:
        if os.path.isdir(d):
            names |= {f[:-5] for f in os.listdir(d) if f.startswith("light_") and f.endswith(".onnx")}
    return sorted(names)


def light_model(path, seed=0):
    m = onnx.load(path)
    rng = np.random.default_rng(seed)
    inits = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    consts = {}
    for n in m.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    consts[n.output[0]] = numpy_helper.to_array(a.t)
    keep = []
    for n in m.graph.node:
        shape = inits.get(n.input[0]) if n.op_type == "ConstantOfShape" and n.input else None
        if shape is None and n.op_type == "ConstantOfShape" and n.input:
            shape = consts.get(n.input[0])
        if shape is None:
            keep.append(n)
            continue
        shape = [int(v) for v in shape]
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            w = rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))
        else:  # biases, BN scale/shift/mean/variance: positive and moderate
            w = rng.uniform(0.5, 1.5, size=shape)
        m.graph.initializer.append(numpy_helper.from_array(w.astype(np.float32), n.output[0]))
    del m.graph.node[:]
    m.graph.node.extend(keep)
    # A saturated final softmax would hide differences: the logits are an output too.
    if keep and keep[-1].op_type == "Softmax" and keep[-1].input[0] not in {o.name for o in m.graph.output}:
        m.graph.output.append(helper.make_empty_tensor_value_info(keep[-1].input[0]))
        m.graph.output[-1].type.tensor_type.elem_type = F
    return m


class B:
    def __init__(self, name, seed):
        self.name, self.rng = name, np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs, self.k = [], [], [], [], 0

    def fresh(self, base):
        self.k += 1
        return "%s_%d" % (base, self.k)

    def const(self, a, base="c"):
        n = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(a), n))
        return n

    def w(self, shape, scale=None):
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else int(shape[0])
        s = scale if scale is not None else 1.0 / np.sqrt(max(fan_in, 1))
        return self.const((self.rng.standard_normal(shape) * s).astype(np.float32), "w")

    def node(self, op, ins, n_out=1, out=None, **attrs):
        outs = [out] if out else [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, ins, outs, name=self.fresh("n_" + op), **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, opset=17):
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="qairt-exec-tests")
        m.ir_version = 8
        return m


def encoder_layer(seq=16, dim=64, heads=4, ffn=256, seed=3):
    """Pre-norm transformer encoder layer: LayerNorm, multi-head attention, Gelu (erf form) FFN, residuals."""
    b = B("encoder_layer", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [1, seq, dim]))
    hd = dim // heads

    def lin(t, i, o):
        return b.node("Add", [b.node("MatMul", [t, b.w([i, o])]), b.w([o], 0.1)])

    def heads_of(t):
        return b.node("Transpose", [b.node("Reshape", [t, b.const(np.array([1, seq, heads, hd], np.int64))])],
                      perm=[0, 2, 1, 3])

    ln1 = b.node("LayerNormalization", ["x", b.const(np.linspace(0.8, 1.2, dim, dtype=np.float32)), b.w([dim], 0.1)],
                 axis=-1, epsilon=1e-5)
    q, k, v = heads_of(lin(ln1, dim, dim)), heads_of(lin(ln1, dim, dim)), heads_of(lin(ln1, dim, dim))
    kt = b.node("Transpose", [k], perm=[0, 1, 3, 2])
    s = b.node("Div", [b.node("MatMul", [q, kt]), b.const(np.float32(np.sqrt(hd)))])
    a = b.node("Softmax", [s], axis=-1)
    ctx = b.node("Reshape", [b.node("Transpose", [b.node("MatMul", [a, v])], perm=[0, 2, 1, 3]),
                             b.const(np.array([1, seq, dim], np.int64))])
    h1 = b.node("Add", ["x", lin(ctx, dim, dim)])
    ln2 = b.node("LayerNormalization", [h1, b.const(np.linspace(0.9, 1.1, dim, dtype=np.float32)), b.w([dim], 0.1)],
                 axis=-1, epsilon=1e-5)
    f = lin(ln2, dim, ffn)
    gelu = b.node("Mul", [b.node("Mul", [f, b.const(np.float32(0.5))]),
                          b.node("Add", [b.node("Erf", [b.node("Div", [f, b.const(np.float32(np.sqrt(2.0)))])]),
                                         b.const(np.float32(1.0))])])
    b.node("Add", [h1, lin(gelu, ffn, dim)], out="y")
    b.outputs.append(helper.make_tensor_value_info("y", F, [1, seq, dim]))
    return b.model()


def recurrent(seq=12, batch=2, inp=16, hidden=24, seed=4):
    """Bidirectional LSTM (with peepholes and initial states) and a GRU (linear_before_reset=1), then reverse GRU."""
    b = B("recurrent", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [seq, batch, inp]))
    y, yh, yc = b.node("LSTM", ["x", b.w([2, 4 * hidden, inp]), b.w([2, 4 * hidden, hidden]), b.w([2, 8 * hidden], 0.1),
                                "", b.w([2, batch, hidden], 0.5), b.w([2, batch, hidden], 0.5), b.w([2, 3 * hidden], 0.3)],
                       n_out=3, hidden_size=hidden, direction="bidirectional")
    b.node("Identity", [yh], out="lstm_h")
    b.node("Identity", [yc], out="lstm_c")
    flat = b.node("Reshape", [b.node("Transpose", [y], perm=[0, 2, 1, 3]),
                              b.const(np.array([seq, batch, 2 * hidden], np.int64))])
    gy, gh = b.node("GRU", [flat, b.w([1, 3 * hidden, 2 * hidden]), b.w([1, 3 * hidden, hidden]), b.w([1, 6 * hidden], 0.1)],
                    n_out=2, hidden_size=hidden, linear_before_reset=1)
    b.node("Identity", [gy], out="gru_y")
    ry, rh = b.node("GRU", [flat, b.w([1, 3 * hidden, 2 * hidden]), b.w([1, 3 * hidden, hidden])], n_out=2,
                    hidden_size=hidden, direction="reverse")
    b.node("Identity", [rh], out="gru_rev_h")
    for name, shape in (("lstm_h", [2, batch, hidden]), ("lstm_c", [2, batch, hidden]),
                        ("gru_y", [seq, 1, batch, hidden]), ("gru_rev_h", [1, batch, hidden])):
        b.outputs.append(helper.make_tensor_value_info(name, F, shape))
    return b.model(14)


def qdq_cnn(seed=5):
    """Q-DQ model as exported by quantization tools: uint8 activations, per-channel int8 conv weights,
    int32 biases, a per-tensor int8 FC weight. Returns (model, output scale)."""
    b = B("qdq_cnn", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [1, 3, 16, 16]))
    rng = b.rng

    def qdq(t, scale, zp):
        s, z = b.const(np.float32(scale)), b.const(np.uint8(zp))
        return b.node("DequantizeLinear", [b.node("QuantizeLinear", [t, s, z]), s, z])

    def qweight(shape, axis_scales, per_channel=True):
        w = rng.integers(-100, 101, size=shape).astype(np.int8)
        s = np.asarray(axis_scales, np.float32)
        z = np.zeros(s.shape, np.int8)
        attrs = {"axis": 0} if per_channel else {}
        return b.node("DequantizeLinear", [b.const(w), b.const(s), b.const(z)], **attrs), s

    def qbias(n, scale):
        q = rng.integers(-500, 501, size=[n]).astype(np.int32)
        attrs = {"axis": 0} if np.ndim(scale) else {}
        return b.node("DequantizeLinear", [b.const(q), b.const(np.asarray(scale, np.float32)),
                                           b.const(np.zeros(np.shape(scale), np.int32))], **attrs)

    s_in = 2.0 / 255
    x = qdq("x", s_in, 128)
    w1, ws1 = qweight([8, 3, 3, 3], np.linspace(0.002, 0.004, 8))
    c1 = b.node("Conv", [x, w1, qbias(8, s_in * ws1)], pads=[1, 1, 1, 1])
    r1 = qdq(b.node("Relu", [c1]), 0.02, 0)
    w2, ws2 = qweight([16, 8, 3, 3], np.linspace(0.001, 0.003, 16))
    c2 = b.node("Conv", [r1, w2, qbias(16, 0.02 * ws2)], strides=[2, 2], pads=[1, 1, 1, 1])
    r2 = qdq(b.node("Relu", [c2]), 0.03, 0)
    p = qdq(b.node("GlobalAveragePool", [r2]), 0.03, 0)
    # Classifier as a 1x1 conv with a per-tensor weight (the importer does not take a quantized Gemm bias yet).
    wf, _ = qweight([10, 16, 1, 1], [0.01], per_channel=False)
    g = b.node("Flatten", [b.node("Conv", [p, wf, qbias(10, [0.03 * 0.01] * 10)])], axis=1)
    out_scale = 0.05
    b.node("Identity", [qdq(g, out_scale, 128)], out="y")
    b.outputs.append(helper.make_tensor_value_info("y", F, [1, 10]))
    return b.model(13), out_scale


def qdq16_mlas_order(seed=8):
    """Q-DQ model with 16-bit activations built to meet every summation order the executor copies from ONNX
    Runtime's CPU kernels (lib/exec/gemm.cpp): depthwise 3x3 and strided 5x5 with padding, a channel
    multiplier of 2, a conv with one output channel (M = 1) and one over K = 288 (two K blocks), squeeze-
    excitation 1x1 convs on a 1x1 map (N = 1, 6 and 7 output channels: every reduction block), MatMul with
    M = 1 and with N = 1, Gemm(transB) with a bias, HardSwish, global average pooling and a dilated 7x1
    depthwise (the general depthwise path). With 16-bit
    activations one rounding of difference shows as a step. Returns (model, {output: scale})."""
    b = B("qdq16_mlas_order", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [1, 8, 48, 64]))
    rng = b.rng
    scales = {}

    def qdq(t, scale, out=None):
        s, z = b.const(np.float32(scale)), b.const(np.uint16(32768))
        dq = b.node("DequantizeLinear", [b.node("QuantizeLinear", [t, s, z]), s, z])
        if out:
            b.node("Identity", [dq], out=out)
            scales[out] = float(scale)
        return dq

    def qweight(shape, axis=0):
        w = rng.integers(-127, 128, size=shape).astype(np.int8)
        fan_in = int(np.prod(shape)) // shape[axis]  # weights ~ 1 / sqrt(fan_in): activations stay ~1
        s = (rng.uniform(0.5, 1.5, size=[shape[axis]]) / (127 * np.sqrt(fan_in))).astype(np.float32)
        return b.node("DequantizeLinear", [b.const(w), b.const(s), b.const(np.zeros(s.shape, np.int8))], axis=axis)

    def qbias(n):
        q = rng.integers(-30000, 30001, size=[n]).astype(np.int32)
        s = np.full([n], 1e-5, np.float32)
        return b.node("DequantizeLinear", [b.const(q), b.const(s), b.const(np.zeros([n], np.int32))], axis=0)

    x = qdq("x", 2.0 / 65535)
    d1 = qdq(b.node("HardSwish", [b.node("Conv", [x, qweight([8, 1, 3, 3]), qbias(8)], group=8, pads=[1] * 4)]),
             3.6e-5)
    d2 = qdq(b.node("Relu", [b.node("Conv", [d1, qweight([8, 1, 5, 5]), qbias(8)], group=8, pads=[2] * 4,
                                    strides=[2, 2])]), 1.7e-5)
    m2 = qdq(b.node("Conv", [d2, qweight([16, 1, 3, 3]), qbias(16)], group=8, pads=[1] * 4), 1.6e-5)
    # Dilated 7x1 taps: the depthwise loop's general (one tap row at a time) path.
    qdq(b.node("Conv", [d2, qweight([8, 1, 7, 1]), qbias(8)], group=8, pads=[6, 0, 6, 0], dilations=[2, 1]), 1.8e-5,
        out="dw_dilated")
    qdq(b.node("Conv", [m2, qweight([1, 16, 3, 3]), qbias(1)], pads=[1] * 4), 1e-5, out="one_channel")
    c32 = qdq(b.node("Conv", [m2, qweight([32, 16, 3, 3]), qbias(32)], pads=[1] * 4), 1.6e-5)
    qdq(b.node("Conv", [c32, qweight([8, 32, 3, 3]), qbias(8)], pads=[1] * 4), 1.6e-5, out="k288")
    gap = qdq(b.node("GlobalAveragePool", [m2]), 1.2e-5)
    se1 = qdq(b.node("Relu", [b.node("Conv", [gap, qweight([6, 16, 1, 1]), qbias(6)])]), 1.2e-5)
    qdq(b.node("Conv", [se1, qweight([7, 6, 1, 1]), qbias(7)]), 1e-5, out="se")
    flat = b.node("Flatten", [gap], axis=1)
    qdq(b.node("MatMul", [flat, qweight([16, 5], axis=1)]), 4e-6, out="matmul_m1")
    rows = b.node("Reshape", [m2, b.const(np.array([-1, 16], np.int64))])
    qdq(b.node("MatMul", [rows, qweight([16, 1], axis=1)]), 6e-6, out="matmul_n1")
    qdq(b.node("Gemm", [flat, qweight([3, 16]), b.const(rng.uniform(-0.5, 0.5, size=[3]).astype(np.float32))],
               transB=1), 2e-5, out="gemm_bias")
    for name, shape in (("dw_dilated", [1, 8, 24, 32]), ("one_channel", [1, 1, 24, 32]), ("k288", [1, 8, 24, 32]),
                        ("se", [1, 7, 1, 1]),
                        ("matmul_m1", [1, 5]), ("matmul_n1", [768, 1]), ("gemm_bias", [1, 3])):
        b.outputs.append(helper.make_tensor_value_info(name, F, shape))
    m = b.model(21)
    m.ir_version = 10
    return m, scales


def _conv_bn_relu(b, x, cin, cout, k, stride=1, group=1, relu=True):
    c = b.node("Conv", [x, b.w([cout, cin // group, k, k], np.sqrt(2.0 / (cin // group * k * k))), b.w([cout], 0.05)],
               pads=[k // 2] * 4, strides=[stride, stride], group=group)
    return b.node("Relu", [c]) if relu else c


def mobilenet_like(seed=6):
    """MobileNet-v2-like: inverted residual blocks with depthwise 3x3 convs, [1,3,224,224] -> 1000."""
    b = B("mobilenet_like", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [1, 3, 224, 224]))
    t = _conv_bn_relu(b, "x", 3, 32, 3, 2)
    cin = 32
    for expand, cout, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                               (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            stride = s if i == 0 else 1
            hid = cin * expand
            h = _conv_bn_relu(b, t, cin, hid, 1) if expand != 1 else t
            h = _conv_bn_relu(b, h, hid, hid, 3, stride, group=hid)
            h = _conv_bn_relu(b, h, hid, cout, 1, relu=False)
            t = b.node("Add", [t, h]) if stride == 1 and cin == cout else h
            cin = cout
    t = _conv_bn_relu(b, t, cin, 1280, 1)
    f = b.node("Flatten", [b.node("GlobalAveragePool", [t])])
    b.node("Gemm", [f, b.w([1000, 1280]), b.w([1000], 0.05)], out="y", transB=1)
    b.outputs.append(helper.make_tensor_value_info("y", F, [1, 1000]))
    return b.model()


def resnet50(seed=7):
    """ResNet-50 (bottleneck blocks 3-4-6-3), [1,3,224,224] -> 1000, random weights."""
    b = B("resnet50", seed)
    b.inputs.append(helper.make_tensor_value_info("x", F, [1, 3, 224, 224]))
    t = _conv_bn_relu(b, "x", 3, 64, 7, 2)
    t = b.node("MaxPool", [t], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, n, s in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(n):
            stride = s if i == 0 else 1
            h = _conv_bn_relu(b, t, cin, width, 1)
            h = _conv_bn_relu(b, h, width, width, 3, stride)
            h = _conv_bn_relu(b, h, width, width * 4, 1, relu=False)
            sc = t if (stride == 1 and cin == width * 4) else _conv_bn_relu(b, t, cin, width * 4, 1, stride, relu=False)
            t = b.node("Relu", [b.node("Add", [sc, h])])
            cin = width * 4
    f = b.node("Flatten", [b.node("GlobalAveragePool", [t])])
    b.node("Gemm", [f, b.w([1000, 2048]), b.w([1000], 0.05)], out="y", transB=1)
    b.outputs.append(helper.make_tensor_value_info("y", F, [1, 1000]))
    return b.model()
