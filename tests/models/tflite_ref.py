"""Float reference for the corpus's TFLite models, which onnxruntime cannot run:
Debian's Arm NN TFLite parser + CpuRef backend (python3-pyarmnn), as in
tests/python/test_tflite.py.

Arm NN 20.08 ignores RESIZE_BILINEAR's half_pixel_centers (added in 20.11):
the corpus uses a copy of such a model with the flag cleared on both sides
(without_half_pixel_centers; tests/python/test_tflite.py checks qairt's
half-pixel mapping against TensorFlow's formula). It reads neither FLOAT16
constants nor MediaPipe's custom ops, so it runs a rewritten copy of the model
(flatc JSON round trip against qairt's schema subset) that computes the same
function:
* each FLOAT16 constant + DEQUANTIZE becomes the exactly converted float32 constant;
* MediaPipe's Convolution2DTransposeBias (custom options: TfLiteTransposeConvParams
  {padding, stride_width, stride_height} as three little-endian int32) becomes the
  builtin TRANSPOSE_CONV followed by an ADD of the bias.
"""
import contextlib
import io
import json
import os
import struct
import subprocess

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = os.path.join(REPO, "lib", "tflite", "schema", "tflite_subset.fbs")
DEQUANTIZE, ADD, TRANSPOSE_CONV = 6, 0, 67
# TfLitePadding (the C API enum of the custom options) -> the schema's Padding
C_PADDING = {1: "SAME", 2: "VALID"}


def _to_json(path, folder):
    subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "--defaults-json", "-o", folder, SCHEMA, "--",
                    path], check=True, capture_output=True)
    with open(os.path.join(folder, os.path.splitext(os.path.basename(path))[0] + ".json")) as f:
        return json.load(f)


def _to_binary(model, folder, stem):
    json_path = os.path.join(folder, stem + ".json")
    with open(json_path, "w") as f:
        json.dump(model, f)
    subprocess.run(["flatc", "-b", "-o", folder, SCHEMA, json_path], check=True, capture_output=True)
    return os.path.join(folder, stem + ".tflite")


def without_half_pixel_centers(path, folder):
    """PATH itself when no RESIZE_BILINEAR uses half_pixel_centers, else a copy in FOLDER without it."""
    model = _to_json(path, folder)
    changed = False
    for op in model["subgraphs"][0]["operators"]:
        opts = op.get("builtin_options") or {}
        if op.get("builtin_options_type") == "ResizeBilinearOptions" and opts.get("half_pixel_centers"):
            opts["half_pixel_centers"] = False
            changed = True
    return _to_binary(model, folder, "model") if changed else path


def _code(c):
    return max(c.get("builtin_code", 0), c.get("deprecated_builtin_code", 0))


def _opcode(model, builtin):
    for i, c in enumerate(model["operator_codes"]):
        if not c.get("custom_code") and _code(c) == builtin:
            return i
    model["operator_codes"].append({"builtin_code": builtin, "deprecated_builtin_code": min(builtin, 127),
                                    "version": 1})
    return len(model["operator_codes"]) - 1


def _transpose_conv_bias(model, sg, op):
    """[TRANSPOSE_CONV, ADD] replacing one Convolution2DTransposeBias."""
    x, w, b = op["inputs"]
    (out,) = op["outputs"]
    padding, stride_w, stride_h = struct.unpack("<3i", bytes(op["custom_options"][:12]))
    model["buffers"].append({"data": np.asarray(sg["tensors"][out]["shape"], "<i4").view(np.uint8).tolist()})
    sg["tensors"].append({"name": sg["tensors"][out]["name"] + "/output_shape", "shape": [4], "type": "INT32",
                          "buffer": len(model["buffers"]) - 1})
    shape_t = len(sg["tensors"]) - 1
    sg["tensors"].append({"name": sg["tensors"][out]["name"] + "/no_bias", "shape": sg["tensors"][out]["shape"],
                          "type": "FLOAT32", "buffer": 0})
    conv_out = len(sg["tensors"]) - 1
    conv = {"opcode_index": _opcode(model, TRANSPOSE_CONV), "inputs": [shape_t, w, x], "outputs": [conv_out],
            "builtin_options_type": "TransposeConvOptions",
            "builtin_options": {"padding": C_PADDING[padding], "stride_w": stride_w, "stride_h": stride_h}}
    add = {"opcode_index": _opcode(model, ADD), "inputs": [conv_out, b], "outputs": [out],
           "builtin_options_type": "AddOptions", "builtin_options": {"fused_activation_function": "NONE"}}
    return [conv, add]


def reference_copy(path, folder):
    """Writes the Arm NN-readable copy of PATH into FOLDER and returns its path."""
    model = _to_json(path, folder)
    sg = model["subgraphs"][0]
    codes = model["operator_codes"]
    ops = []
    for op in sg["operators"]:
        code = codes[op.get("opcode_index", 0)]
        src = sg["tensors"][op["inputs"][0]] if op.get("inputs") else None
        if _code(code) == DEQUANTIZE and src and src.get("type") == "FLOAT16" and src.get("buffer", 0):
            half = np.asarray(model["buffers"][src["buffer"]]["data"], dtype=np.uint8).view(np.float16)
            model["buffers"].append({"data": half.astype(np.float32).view(np.uint8).tolist()})
            sg["tensors"][op["outputs"][0]]["buffer"] = len(model["buffers"]) - 1
        elif code.get("custom_code") == "Convolution2DTransposeBias":
            ops += _transpose_conv_bias(model, sg, op)
        else:
            ops.append(op)
    sg["operators"] = ops
    return _to_binary(model, folder, os.path.splitext(os.path.basename(path))[0] + "_armnn")


def run(path, feeds):
    """{output name: array} of the model at PATH on FEEDS ({input name: array}) in Arm NN CpuRef."""
    with contextlib.redirect_stdout(io.StringIO()):
        import pyarmnn as ann
    parser = ann.ITfLiteParser()
    net = parser.CreateNetworkFromBinaryFile(path)
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    rt = ann.IRuntime(ann.CreationOptions())
    opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], rt.GetDeviceSpec(), ann.OptimizerOptions())
    nid, _ = rt.LoadNetwork(opt)
    ins = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    outs = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    it = ann.make_input_tensors(ins, [np.ascontiguousarray(feeds[n], np.float32) for n in in_names])
    ot = ann.make_output_tensors(outs)
    rt.EnqueueWorkload(nid, it, ot)
    shapes = {n: list(o[1].GetShape()) for n, o in zip(out_names, outs)}
    return {n: a.reshape(shapes[n]) for n, a in zip(out_names, ann.workload_tensors_to_ndarray(ot))}
