#!/usr/bin/env python3
"""Writes the test-built models of the rewrite / sensitivity / mixed-precision
tests (float ONNX, opset 13) with calibration and evaluation samples:

  make_rewrite_models.py OUT_DIR [SAMPLES=16]

OUT_DIR/mobile_block.onnx   x [1,8,24,24]: Conv -> per-channel Mul/Add (an
    affine block an exporter left behind) -> x * HardSigmoid(x) (alpha 1/6)
    -> depthwise Conv -> Div 2 / Sub 0.3 -> x * relu6(x + 3) / 6 -> squeeze-
    excite (GlobalAveragePool, Conv, Relu, Conv, HardSigmoid 0.2/0.5, Mul) ->
    Conv -> BatchNormalization (separate: its conv output is a graph output
    too, so the importer cannot fold it) -> GlobalAveragePool -> Gemm -> y
OUT_DIR/norm_block.onnx     x [1,16,64]: decomposed LayerNorm (ReduceMean,
    Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) -> MatMul + bias -> Erf
    Gelu (Div 1.4142 form) -> MatMul -> residual Add -> decomposed RMSNorm
    (Mul x x, ReduceMean, Add, Sqrt, Div, Mul gamma) -> y
OUT_DIR/sensitive.onnx      x [1,8,16,16]: Conv -> Relu -> 'sensitive_conv'
    (one weight 400x the others: per-tensor 8-bit weights wipe out the rest)
    -> Relu -> Conv -> y
Each with OUT_DIR/<name>_{calib,eval}_list.txt of seeded float32 samples.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, rng):
        self.rng, self.inits, self.nodes = rng, [], []

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
        return name

    def node(self, op, ins, out, **attrs):
        self.nodes.append(helper.make_node(op, ins, [out], name=out + "_" + op, **attrs))
        return out

    def conv(self, x, name, cin, cout, k, group=1, scale=1.0):
        w = self.rng.normal(0, scale / np.sqrt(cin // group * k * k), (cout, cin // group, k, k))
        b = self.rng.normal(0, 0.1, cout)
        return self.node("Conv", [x, self.const(name + "_w", w), self.const(name + "_b", b)], name,
                         kernel_shape=[k, k], pads=[k // 2] * 4, group=group)

    def save(self, path, inputs, outputs):
        g = helper.make_graph(self.nodes, os.path.basename(path)[:-5], inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="qairt-tests")
        m.ir_version = 7
        onnx.checker.check_model(m)
        onnx.save(m, path)


def mobile_block(path, rng):
    b = Builder(rng)
    c1 = b.conv("x", "conv1", 8, 16, 3)
    s = b.node("Mul", [c1, b.const("aff_s", rng.uniform(0.5, 2.0, (1, 16, 1, 1)))], "aff_mul")
    a = b.node("Add", [s, b.const("aff_b", rng.normal(0, 0.5, (1, 16, 1, 1)))], "aff_add")
    hs = b.node("HardSigmoid", [a], "hsig1", alpha=1 / 6, beta=0.5)
    h1 = b.node("Mul", [a, hs], "hswish1")
    c2 = b.conv(h1, "dw2", 16, 16, 3, group=16)
    d = b.node("Div", [c2, b.const("two", 2.0)], "dw2_div")
    d = b.node("Sub", [d, b.const("shift", 0.3)], "dw2_sub")
    p3 = b.node("Add", [d, b.const("three", 3.0)], "hs2_add")
    r6 = b.node("Clip", [p3, b.const("zero", 0.0), b.const("six", 6.0)], "hs2_clip")
    m = b.node("Mul", [d, r6], "hs2_mul")
    h2 = b.node("Div", [m, b.const("six_d", 6.0)], "hswish2")
    gp = b.node("GlobalAveragePool", [h2], "se_pool")
    se = b.node("Relu", [b.conv(gp, "se_conv1", 16, 8, 1)], "se_relu")
    se = b.node("HardSigmoid", [b.conv(se, "se_conv2", 8, 16, 1)], "se_gate", alpha=0.2, beta=0.5)
    x3 = b.node("Mul", [h2, se], "se_scale")
    c4 = b.conv(x3, "conv4", 16, 32, 1)
    bn = b.node("BatchNormalization", [c4, b.const("bn_g", rng.uniform(0.5, 1.5, 32)),
                                       b.const("bn_b", rng.normal(0, 0.2, 32)),
                                       b.const("bn_m", rng.normal(0, 0.2, 32)),
                                       b.const("bn_v", rng.uniform(0.5, 2.0, 32))], "bn4", epsilon=1e-5)
    r = b.node("Relu", [bn], "relu4")
    gp2 = b.node("Flatten", [b.node("GlobalAveragePool", [r], "pool4")], "flat")
    b.node("Gemm", [gp2, b.const("fc_w", rng.normal(0, 0.2, (10, 32))), b.const("fc_b", np.zeros(10))], "y",
           transB=1)
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 24, 24])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
            helper.make_tensor_value_info("conv4", TensorProto.FLOAT, [1, 32, 24, 24])])
    return [1, 8, 24, 24]


def norm_block(path, rng):
    b = Builder(rng)
    dim = 64
    mu = b.node("ReduceMean", ["x"], "ln_mean", axes=[-1], keepdims=1)
    dx = b.node("Sub", ["x", mu], "ln_sub")
    sq = b.node("Pow", [dx, b.const("two", 2.0)], "ln_pow")
    var = b.node("ReduceMean", [sq], "ln_var", axes=[-1], keepdims=1)
    ve = b.node("Add", [var, b.const("eps", 1e-5)], "ln_add_eps")
    sd = b.node("Sqrt", [ve], "ln_sqrt")
    n = b.node("Div", [dx, sd], "ln_div")
    n = b.node("Mul", [n, b.const("ln_g", rng.uniform(0.5, 1.5, dim))], "ln_mul_g")
    n = b.node("Add", [n, b.const("ln_b", rng.normal(0, 0.1, dim))], "ln")
    h = b.node("MatMul", [n, b.const("w1", rng.normal(0, 1 / np.sqrt(dim), (dim, 2 * dim)))], "ff1_mm")
    h = b.node("Add", [h, b.const("b1", rng.normal(0, 0.1, 2 * dim))], "ff1")
    e = b.node("Erf", [b.node("Div", [h, b.const("sqrt2", np.sqrt(2.0))], "gelu_div")], "gelu_erf")
    e = b.node("Add", [e, b.const("one", 1.0)], "gelu_add")
    g = b.node("Mul", [b.node("Mul", [h, e], "gelu_mul"), b.const("half", 0.5)], "gelu")
    f = b.node("MatMul", [g, b.const("w2", rng.normal(0, 1 / np.sqrt(2 * dim), (2 * dim, dim)))], "ff2")
    r = b.node("Add", ["x", f], "res")
    sq2 = b.node("Mul", [r, r], "rms_sq")
    ms = b.node("ReduceMean", [sq2], "rms_mean", axes=[-1], keepdims=1)
    ms = b.node("Add", [ms, b.const("eps2", 1e-6)], "rms_eps")
    rt = b.node("Sqrt", [ms], "rms_sqrt")
    y = b.node("Div", [r, rt], "rms_div")
    b.node("Mul", [y, b.const("rms_g", rng.uniform(0.5, 1.5, dim))], "y")
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, dim])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, dim])])
    return [1, 16, dim]


def sensitive(path, rng):
    b = Builder(rng)
    h = b.node("Relu", [b.conv("x", "conv_a", 8, 16, 3)], "relu_a")
    w = rng.normal(0, 1 / np.sqrt(16 * 9), (16, 16, 3, 3))
    w[3, 5, 1, 1] = 400 * np.abs(w).mean()  # the outlier
    bias = rng.normal(0, 0.1, 16)
    s = b.node("Conv", [h, b.const("sensitive_conv_w", w), b.const("sensitive_conv_b", bias)], "sensitive_conv",
               kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    h = b.node("Relu", [s], "relu_b")
    b.conv(h, "y", 16, 8, 3)
    b.save(path, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])])
    return [1, 8, 16, 16]


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1129)
    for name, make in (("mobile_block", mobile_block), ("norm_block", norm_block), ("sensitive", sensitive)):
        shape = make(os.path.join(out, name + ".onnx"), rng)
        for split in ("calib", "eval"):
            lines = []
            for i in range(n):
                f = "%s_%s_%03d.raw" % (name, split, i)
                rng.normal(0, 1, shape).astype("<f4").tofile(os.path.join(out, f))
                lines.append("x:=%s\n" % f)
            with open(os.path.join(out, "%s_%s_list.txt" % (name, split)), "w") as fl:
                fl.writelines(lines)


if __name__ == "__main__":
    main()
