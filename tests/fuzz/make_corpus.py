#!/usr/bin/python3
"""Regenerates the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/).

Deterministic: running it twice gives the same files. Seeds are small on
purpose (the repo keeps them): test models and fixtures, plus a few inputs
that reach each parser's deeper paths. Usage:
    /usr/bin/python3 tests/fuzz/make_corpus.py [QAIRT_CLI]
QAIRT_CLI (a built `qairt`) is needed for the .qairt container seeds only.
"""
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def ramp(shape, step=0.01):
    n = int(np.prod(shape))
    return (((np.arange(n) * 7) % 23 - 11) * step).astype(np.float32).reshape(shape)


def conv_model(c=4, hw=8, opset=17):
    o = 2 * c
    inits = [numpy_helper.from_array(ramp((o, c, 3, 3), 0.02), "conv.w"),
             numpy_helper.from_array(ramp((o,)), "conv.b"),
             numpy_helper.from_array(ramp((10, o), 0.05), "fc.w"),
             numpy_helper.from_array(ramp((10,)), "fc.b")]
    nodes = [helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["conv_out"], "conv", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3]),
             helper.make_node("Relu", ["conv_out"], ["relu_out"], "relu"),
             helper.make_node("GlobalAveragePool", ["relu_out"], ["gap_out"], "gap"),
             helper.make_node("Flatten", ["gap_out"], ["flat"], "flatten"),
             helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], "fc", transB=1)]
    g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def qdq_model():
    w = numpy_helper.from_array(((np.arange(72) % 11) - 5).astype(np.int8).reshape(8, 1, 3, 3), "w_q")
    inits = [w, numpy_helper.from_array(np.array(0.05, np.float32), "s"),
             numpy_helper.from_array(np.array(0, np.uint8), "zp"),
             numpy_helper.from_array(np.full((8,), 0.01, np.float32), "ws"),
             numpy_helper.from_array(np.zeros((8,), np.int8), "wzp")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w_q", "ws", "wzp"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["y"], group=1, pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["y", "shape"], ["out"])]
    inits.append(numpy_helper.from_array(np.array([1, -1], np.int64), "shape"))
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def shape_chain_model():
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["b"], axis=0),
             helper.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
             helper.make_node("Concat", ["bu", "m1"], ["ns"], axis=0),
             helper.make_node("Reshape", ["x", "ns"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=-1)]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
             numpy_helper.from_array(np.array([0], np.int64), "ax"),
             numpy_helper.from_array(np.array([-1], np.int64), "m1")]
    g = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def external_model(location, offset=None, length=None):
    t = numpy_helper.from_array(ramp((4, 4)), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "ext",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [t])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def fdp_string(s):
    """Encodes s for FuzzedDataProvider::ConsumeRandomLengthString."""
    if isinstance(s, str):
        s = s.encode()
    return s.replace(b"\\", b"\\\\") + b"\\n"


def main():
    qairt_cli = sys.argv[1] if len(sys.argv) > 1 else None
    # Only the named seeds are (re)written: the inputs scripts/fuzz.sh kept
    # (hash names) and the regress_* inputs of fixed findings stay.

    # ONNX: generated models (the tests/data/onnx-light models are small files
    # but their weights are materialized at import: hundreds of MB, too slow
    # for fuzzing).
    put("onnx", "conv.onnx", conv_model().SerializeToString())
    put("onnx", "conv_opset11.onnx", conv_model(2, 2, 11).SerializeToString())
    put("onnx", "qdq.onnx", qdq_model().SerializeToString())
    put("onnx", "shape_chain.onnx", shape_chain_model().SerializeToString())

    # ONNX with external data: [u32 model length][model][weights.bin].
    weights = ramp((4, 4)).tobytes()
    for name, loc, off, ln in (("plain", "weights.bin", None, None), ("offset", "weights.bin", 16, 64),
                               ("sub", "sub/w.bin", 0, 64), ("escape", "../weights.bin", None, None),
                               ("short", "weights.bin", 32, 64)):
        m = external_model(loc, off, ln).SerializeToString()
        data = (b"\0" * 16 + weights) if off == 16 else weights
        put("onnx_external", name, struct.pack("<I", len(m)) + m + data)

    # Encodings: the fixtures, and files naming the fuzz graph's tensors.
    enc_dir = os.path.join(ROOT, "tests", "data", "encodings")
    for name in sorted(os.listdir(enc_dir)):
        path = os.path.join(enc_dir, name)
        if name.endswith(".md") or os.path.getsize(path) > 65536:
            continue
        with open(path, "rb") as f:
            put("encodings", name, f.read())
    put("encodings", "small_2.0.0.json", json.dumps({
        "version": "2.0.0",
        "encodings": [{"name": "relu_out", "output_dtype": "uint8", "y_scale": 0.05, "y_zero_point": 0},
                      {"name": "x", "output_dtype": "uint16", "y_scale": 0.001, "y_zero_point": 100},
                      {"name": "conv.w", "output_dtype": "int8", "axis": 0,
                       "y_scale": [0.01] * 8, "y_zero_point": [0] * 8},
                      {"name": "fc.w", "output_dtype": "int4", "y_scale": 0.1, "y_zero_point": 0}]}))
    # Applied as it is read (the one-pass check): read warnings (unknown
    # keys) and a name the graph lacks, kept in the usual order.
    put("encodings", "stream_small_conv_warnings.json", json.dumps({
        "version": "2.0.0",
        "encodings": [{"name": "x", "output_dtype": "uint8", "y_scale": 0.02, "y_zero_point": 128,
                       "note": "an unknown key: a warning"},
                      {"name": "conv.w", "output_dtype": "int8", "y_scale": 0.01},
                      {"name": "relu_out", "output_dtype": "uint8", "y_scale": 0.01, "y_zero_point": 0, "comment": 1},
                      {"name": "logits", "output_dtype": "uint16", "y_scale": 0.001, "y_zero_point": 30000},
                      {"name": "nowhere", "output_dtype": "uint16", "y_scale": 0.5, "y_zero_point": 0}]}))
    put("encodings", "small_1.0.0.json", json.dumps({
        "version": "1.0.0",
        "activation_encodings": [{"name": "conv_out", "dtype": "INT", "bw": 8, "is_sym": False,
                                  "enc_type": "PER_TENSOR", "scale": [0.1], "offset": [-128]}],
        "param_encodings": [{"name": "conv.w", "dtype": "INT", "bw": 4, "is_sym": True,
                             "enc_type": "PER_BLOCK", "scale": [0.1] * 16, "offset": [-8] * 16, "block_size": 18}]}))
    put("encodings", "small_0.6.1.json", json.dumps({
        "activation_encodings": {"logits": [{"bitwidth": 16, "dtype": "int", "is_symmetric": "False",
                                             "max": 4.0, "min": -4.0, "offset": -32768, "scale": 0.000122}]},
        "param_encodings": {"fc.b": [{"bitwidth": 32, "dtype": "int", "is_symmetric": "True",
                                      "max": 1.0, "min": -1.0, "offset": 0, "scale": 4.6e-10}]},
        "version": "0.6.1"}))

    # input_list: list text, a.raw, b.raw, sub/c.raw (FuzzedDataProvider strings), threads byte.
    sample = np.linspace(-1, 1, 8, dtype=np.float32).tobytes()
    for name, text, raws in (
            ("named", "x:=a.raw\nx:=b.raw\n", (sample, sample[::-1], b"")),
            ("bare", "# comment\n%logits\na.raw\nsub/c.raw\n", (sample, b"", sample)),
            ("crlf", "x:=a.raw\r\n\r\nx:=sub/c.raw\r\n", (sample, b"", sample)),
            ("short_raw", "x:=a.raw\n", (sample[:30], b"", b"")),
            ("nan", "x:=b.raw\n", (b"", np.array([np.nan] * 8, np.float32).tobytes(), b"")),
            ("escape", "x:=../a.raw\nx:=/etc/passwd\n", (sample, b"", b""))):
        put("input_list", name, fdp_string(text) + b"".join(fdp_string(r) for r in raws) + b"\x01")

    # Target descriptors: a trimmed JSON source (a few ops) per backend, and compiled forms.
    for name, ops in (("cpu", ("Conv2d", "Relu", "FullyConnected")), ("htp_v73", ("Conv2d", "Softmax", "Concat")),
                      ("lpai_v6", ("Conv2d", "ElementWiseAdd"))):
        with open(os.path.join(ROOT, "targets", "builtin", name + ".json")) as f:
            d = json.load(f)
        d["ops"] = [o for o in d["ops"] if o["op"] in ops]
        d["super_groups"] = d.get("super_groups", [])[:2]
        d["sources"] = d.get("sources", [])[:2]
        d["data_movement_ops"] = [o for o in d.get("data_movement_ops", []) if o in ops]
        text = json.dumps(d, indent=1, sort_keys=False)
        put("target", name + ".json", text)
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, name + ".json")
            with open(src, "w") as f:
                f.write(text)
            subprocess.run(["flatc", "-b", "-o", tmp, os.path.join(ROOT, "targets", "schema", "target.fbs"), src],
                           check=True)
            with open(os.path.join(tmp, name + ".qatd" if os.path.exists(os.path.join(tmp, name + ".qatd"))
                                   else os.path.join(tmp, name + ".bin")), "rb") as f:
                put("target", name + ".qatd", f.read())

    # .qairt containers: written by the CLI from the small models. The
    # corpus also keeps schema2_*.qairt, the same models as the schema-2
    # writer wrote them (bytes inside the FlatBuffer, no data section): the
    # reader still reads those, and no writer makes them any more.
    if qairt_cli:
        with tempfile.TemporaryDirectory() as tmp:
            for name, model, target in (("conv_cpu", conv_model(2, 2), "cpu"), ("conv_htp", conv_model(2, 4), "htp_v73"),
                                        ("qdq_htp", qdq_model(), "htp_v73")):
                src = os.path.join(tmp, name + ".onnx")
                onnx.save(model, src)
                out = os.path.join(tmp, name + ".qairt")
                subprocess.run([qairt_cli, "convert", "-i", src, "--target", target, "-o", out], check=True,
                               stdout=subprocess.DEVNULL)
                with open(out, "rb") as f:
                    put("container", name + ".qairt", f.read())
            # W4 LPBQ weights calibrated on two samples: integer scales
            # stored as bytes (schema 4, min reader 3).
            src = os.path.join(tmp, "lpbq.onnx")
            onnx.save(conv_model(8, 4), src)
            rng = np.random.default_rng(0)
            lines = []
            for i in range(2):
                raw = os.path.join(tmp, "in%d.raw" % i)
                rng.random((1, 8, 4, 4), dtype=np.float32).tofile(raw)
                lines.append(raw)
            with open(os.path.join(tmp, "list.txt"), "w") as f:
                f.write("\n".join(lines) + "\n")
            out = os.path.join(tmp, "lpbq_htp.qairt")
            subprocess.run([qairt_cli, "convert", "-i", src, "--target", "htp_v75", "--weights_bitwidth", "4",
                            "--weights_block_size", "8", "--use_lpbq", "--use_per_channel_quantization",
                            "--use_per_row_quantization", "--input_list", os.path.join(tmp, "list.txt"), "-o", out],
                           check=True, stdout=subprocess.DEVNULL)
            with open(out, "rb") as f:
                put("container", "lpbq_htp.qairt", f.read())

    # Calibration statistics: rounds 1 and 2 (mse) of the small conv model,
    # two shards and their merge, written by `qairt calibrate`.
    if qairt_cli:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "conv.onnx")
            onnx.save(conv_model(2, 2), src)
            rng = np.random.default_rng(5)
            with open(os.path.join(tmp, "list.txt"), "w") as f:
                for i in range(3):
                    raw = os.path.join(tmp, "x%d.raw" % i)
                    rng.standard_normal((1, 2, 2, 2)).astype(np.float32).tofile(raw)
                    f.write("x:=%s\n" % raw)
            base = [qairt_cli, "calibrate", "-i", src, "--target", "htp_v73", "--input_list",
                    os.path.join(tmp, "list.txt"), "--act_quantizer_calibration", "mse", "--no_progress"]
            run = lambda args: subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            for k in range(2):
                run(base + ["--shard", "%d/2" % k, "-o", os.path.join(tmp, "r1_%d.stats" % k)])
            run([qairt_cli, "calibrate", "--merge", os.path.join(tmp, "r1_0.stats"), os.path.join(tmp, "r1_1.stats"),
                 "-o", os.path.join(tmp, "r1.stats")])
            run(base + ["--ranges", os.path.join(tmp, "r1.stats"), "-o", os.path.join(tmp, "r2.stats")])
            for name in ("r1_0", "r1", "r2"):
                with open(os.path.join(tmp, name + ".stats"), "rb") as f:
                    put("stats", name + ".stats", f.read())

    # TFLite: the regression inputs of earlier findings and a sparse-constant
    # seed (seed_sparse_csr: a CSR weight read through DENSIFY).
    for name in sorted(os.listdir(os.path.join(ROOT, "tests", "data", "tflite"))):
        with open(os.path.join(ROOT, "tests", "data", "tflite", name), "rb") as f:
            put("tflite", name, f.read())

    # prepare: specializations file, FP32 node list, then (read from the end)
    # whether outputs are written and the d2, d0 --define_symbol values.
    for name, specs, fp32, tail in (
            ("flat", '[{"d0": 2, "d2": 3}, {"d0": 1, "d2": 8}]', "", b"\x00\x02\x05"),
            ("named", '{"specializations": [{"name": "short", "symbols": {"d2": 4}}]}', "relu\n", b"\x01\x04\x02"),
            ("yaml", "", "FP32NodeInstanceNames:\n  - scaled\n  - y\n", b"\x00\x03\x04"),
            ("unknown_symbol", '[{"batch": 2}]', "", b"\x00\x03\x03"),
            ("negative", '[{"d0": -1, "d2": 0}]', "- nowhere\n", b"\x01\x00\x00")):
        put("prepare", name, fdp_string(specs) + fdp_string(fp32) + tail)

    # C-API call sequences: arbitrary but fixed byte programs.
    for i in range(8):
        put("capi", "seq%d" % i, hashlib.sha512(b"qairt-capi-%d" % i).digest() * (i + 1))


if __name__ == "__main__":
    main()
