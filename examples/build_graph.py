#!/usr/bin/env python3
"""Builds a small CNN with the qairt Python binding, attaches quantization
encodings, validates it and prints a short summary.

    image[batch,3,32,32] -> Conv2d(3x3, 8 filters, pad 1) -> Relu
      -> PoolMax2d(2x2, stride 2) -> Reshape[batch, 2048]
      -> FullyConnected(10) -> Softmax -> probs[batch,10]

The conv weight gets a per-channel symmetric int8 encoding and the Relu output
a per-tensor uint8 one. Layouts and attribute names follow ONNX (NCHW
activations, OIHW weights).

Run after building the library:  python3 examples/build_graph.py
(libqairt.so is found via $QAIRT_LIBRARY, then <repo>/build/libqairt.so).
"""

import array
import os
import sys

try:
    import qairt
except ImportError as e:
    if "No module named 'qairt'" not in str(e):
        raise
    # Not installed: use the package in <repo>/python.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    import qairt

FILTERS, IN_CH, K, HW, CLASSES = 8, 3, 3, 32, 10
FEATURES = FILTERS * (HW // 2) * (HW // 2)  # 2048


def floats(values):
    """float32 bytes without needing numpy."""
    return array.array("f", values).tobytes()


def build():
    g = qairt.Graph(name="small_cnn")
    conv_w = [((i % 17) - 8) / (64.0 * (1 + i // 27)) for i in range(FILTERS * IN_CH * K * K)]
    fc_w = [((i % 13) - 6) / 512.0 for i in range(CLASSES * FEATURES)]

    image = g.add_input("image", "float32", ["batch", IN_CH, HW, HW])
    g.add_constant("conv1.weight", "float32", [FILTERS, IN_CH, K, K], floats(conv_w))
    g.add_constant("conv1.bias", "float32", [FILTERS], floats(0.01 * i for i in range(FILTERS)))
    g.add_constant("fc.weight", "float32", [CLASSES, FEATURES], floats(fc_w))
    g.add_constant("fc.bias", "float32", [CLASSES], floats([0.0] * CLASSES))
    g.add_constant("flatten.shape", "int64", [2], array.array("q", [0, FEATURES]).tobytes())

    g.add_op("Conv2d", "conv1", [image, "conv1.weight", "conv1.bias"], ["conv1.out"],
             attrs={"strides": [1, 1], "pads": [1, 1, 1, 1]}, source_name="conv1", source_op_type="Conv")
    g.add_op("Relu", "relu1", ["conv1.out"], ["relu1.out"], source_op_type="Relu")
    g.add_op("PoolMax2d", "pool1", ["relu1.out"], ["pool1.out"],
             attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, source_op_type="MaxPool")
    g.add_op("Reshape", "flatten", ["pool1.out", "flatten.shape"], ["flatten.out"], source_op_type="Flatten")
    g.add_op("FullyConnected", "fc", ["flatten.out", "fc.weight", "fc.bias"], ["fc.out"],
             source_op_type="Gemm")
    g.add_op("Softmax", "softmax", ["fc.out"], ["probs"], attrs={"axis": -1}, source_op_type="Softmax")
    g.mark_output("probs")

    # Per output channel (axis 0 of OIHW), symmetric int8: scale = max|w| / 127.
    per_channel = K * K * IN_CH
    scales = [max(abs(v) for v in conv_w[c * per_channel:(c + 1) * per_channel]) / 127.0
              for c in range(FILTERS)]
    g.set_encoding("conv1.weight", qairt.Encoding.per_channel(
        "sfixed_point_8", axis=0, scales=scales, symmetry="symmetric"))
    # Relu output in [0, 6]: per-tensor asymmetric uint8.
    g.set_encoding("relu1.out", qairt.Encoding.per_tensor("ufixed_point_8", scale=6.0 / 255.0, offset=0))
    return g


def fmt_shape(shape):
    if shape is None:
        return "[?]"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def print_summary(g):
    s = g.summary()
    c = s["counts"]
    print("graph '%s': %d tensors (%d static, %d bytes), %d ops, %d encoded tensors"
          % (s["name"], c["tensors"], c["static_tensors"], c["static_bytes"], c["ops"], c["encoded_tensors"]))
    print("op types: " + ", ".join("%s x%d" % (t, n) for t, n in sorted(s["op_types"].items())))
    print("order:    " + " -> ".join(g.op(i).name for i in g.topological_order()))
    for label, ids in (("input ", g.inputs), ("output", g.outputs)):
        for t in ids:
            info = g.tensor(t)
            print("%s    %s %s %s" % (label, info.name, info.dtype, fmt_shape(info.shape)))
    for info in g.tensors():
        if not info.has_encoding:
            continue
        e = g.get_encoding(info.id)
        values = ", ".join("%.4g" % x for x in e.scales[:3]) + (", ..." if len(e.scales) > 3 else "")
        axis = "" if e.axis is None else " axis=%d" % e.axis
        print("encoding  %s: %s %s %d-bit %s%s scales=[%s]"
              % (info.name, e.kind, e.dtype, e.effective_bitwidth, e.symmetry, axis, values))


def main():
    print("qairt %s (ABI %d.%d)" % ((qairt.version(),) + qairt.abi_version()))
    with build() as g:
        for d in g.validate():  # raises qairt.ValidationError when invalid
            print(d)
        print_summary(g)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except qairt.QairtError as e:
        print("error: %s" % e, file=sys.stderr)
        sys.exit(1)
