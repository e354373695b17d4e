"""Encodings files through the Python binding (python/qairt/encodings.py)."""
import json
import os
import struct
import sys
import tempfile
import unittest

import abi_check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import qairt  # noqa: E402
from qairt import encodings  # noqa: E402

STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"
if STRICT:
    def _no_skip(self, reason):
        self.fail("test would be skipped under QAIRT_TEST_STRICT=1: " + reason)

    unittest.TestCase.skipTest = _no_skip

DATA = os.path.join(REPO, "tests", "data", "encodings")
CLS = os.path.join(REPO, "third_party", "npm", "node_modules", "@gutenye", "ocr-models", "assets",
                   "ch_ppocr_mobile_v2.0_cls_infer.onnx")
CLS_SYMBOLS = {"p2o.DynamicDimension.0": 1, "p2o.DynamicDimension.1": 48, "p2o.DynamicDimension.2": 192}


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def small_graph():
    g = qairt.Graph(name="small")
    x = g.add_input("x", "float32", [1, 2, 4, 4])
    w = g.add_constant("conv1.weight", "float32", [3, 2, 1, 1], bytes(4 * 6))
    g.add_op("Conv2d", "conv1", [x, w], ["c"])
    m = g.add_input("m", "float32", [1, 6])
    mw = g.add_constant("mm.weight", "float32", [6, 8], bytes(4 * 48))
    g.add_op("MatMul", "mm", [m, mw], ["mm_out"])
    return g


class DeclarationTest(unittest.TestCase):
    def test_declared_matches_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_encodings.h", "encodings.exports", encodings.DECLARED)

    def test_struct_sizes(self):
        import ctypes
        self.assertEqual(ctypes.sizeof(encodings.DiagnosticC), 72)
        self.assertEqual(ctypes.sizeof(encodings.LoadOptions), 24)
        self.assertEqual(ctypes.sizeof(encodings.ApplyOptions), 8)
        self.assertEqual(ctypes.sizeof(encodings.WriteOptions), 16)


class LoadTest(unittest.TestCase):
    def test_fixtures(self):
        e = qairt.Encodings.load(os.path.join(DATA, "aimet_0.6.1__xLPMG_fashionmnist-quantized.encodings"))
        self.assertEqual(e.version, "0.6.1")
        self.assertEqual(len(e), 7)
        w = e.encoding("linear1.weight")
        self.assertEqual(w.kind, "per_tensor")
        self.assertEqual(w.symmetry, "symmetric")
        self.assertEqual(w.offsets, [0])
        self.assertEqual(w.scales[0], f32(0.002037044585220457))
        a = e.encoding("24")
        self.assertEqual(a.offsets, [-82])
        v2 = qairt.Encodings.load(os.path.join(DATA, "qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json"))
        self.assertEqual(v2.version, "2.0.0")
        self.assertEqual(v2.encoding("conv2.weight").kind, "lpbq")
        self.assertEqual(v2.encoding("mux_output").kind, "array_of")
        self.assertEqual(v2.encoding("activation").offsets, [-128])

    def test_hostile(self):
        with self.assertRaises(qairt.ParseError) as cm:
            qairt.Encodings.loads(b"\xef\xbb\xbf{}", name="bom.json")
        self.assertEqual(cm.exception.diagnostics[0].code, "file-encoding")
        text = '{"version": "2.0.0", "encodings": [\n{"name": "a", "output_dtype": "uint8", "y_scale": NaN}]}'
        e = qairt.Encodings.loads(text, name="nan.json")
        self.assertEqual(len(e), 0)
        d = e.diagnostics[0]
        self.assertEqual((d.severity, d.code, d.line, d.tensor, d.field), ("error", "json-non-finite", 2, "a", "y_scale"))
        self.assertIn("nan.json:2:", str(d))
        with self.assertRaises(qairt.ParseError) as cm:
            qairt.Encodings.loads(text, name="nan.json", strict=True)
        self.assertIn("nan.json:2:", str(cm.exception))
        with self.assertRaises(qairt.IoError):
            qairt.Encodings.load("/nonexistent/file.json")
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.Encodings.loads("{}", version="3.0.0")


class ApplyWriteTest(unittest.TestCase):
    def test_apply_axis_inference_and_suggestions(self):
        g = small_graph()
        text = json.dumps({"version": "0.6.1", "param_encodings": {
            "conv1.weight": [{"bitwidth": 8, "dtype": "int", "is_symmetric": "True", "offset": -128, "scale": 0.1}] * 3,
            "mm.weight": [{"bitwidth": 8, "dtype": "int", "is_symmetric": "True", "offset": -128, "scale": 0.2}] * 8},
            "activation_encodings": {}})
        diags = qairt.Encodings.loads(text).apply(g, report_missing=False)
        self.assertEqual(diags, [])
        self.assertEqual(g.get_encoding("conv1.weight").axis, 0)
        self.assertEqual(g.get_encoding("mm.weight").axis, 1)
        self.assertTrue(g.get_encoding("mm.weight").overridden)
        bad = '{"version": "2.0.0", "encodings": [\n{"name": "mm_outt", "output_dtype": "uint8", "y_scale": 0.5}]}'
        with self.assertRaises(qairt.ValidationError) as cm:
            qairt.Encodings.loads(bad, name="bad.json").apply(g)
        errs = [d for d in cm.exception.diagnostics if d.severity == "error"]
        self.assertEqual(len(errs), 1)
        self.assertEqual((errs[0].suggestion, errs[0].line, errs[0].column), ("mm_out", 2, 1))

    def test_apply_file_equals_load_then_apply(self):
        # Large enough (> 4 windows of 64 KiB) to be applied as it is read.
        n = 4000
        entries = [{"name": "t%d" % i, "output_dtype": "uint16", "y_scale": 0.001 * (i + 1), "y_zero_point": i % 7,
                    "note": i} for i in range(n)]  # an unknown key: a warning per entry
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "big.json")

            def write(names):
                for e, name in zip(entries, names):
                    e["name"] = name
                with open(path, "w") as f:
                    f.write('{"version": "2.0.0", "encodings": [\n')
                    f.write(",\n".join(json.dumps(e) for e in entries))
                    f.write("\n]}\n")
                self.assertGreater(os.path.getsize(path), 4 * 65536)

            def graph():
                g = qairt.Graph(name="g")
                for i in range(n):
                    g.add_input("t%d" % i, "float32", [1, 4])
                return g

            def outcome(call):
                g = graph()
                try:
                    diags, error = call(g), None
                except qairt.QairtError as e:
                    diags, error = e.diagnostics, type(e)
                encs = [g.get_encoding("t%d" % i) for i in range(0, n, 397)]
                return [tuple(vars(x).values()) for x in diags], error, [e and (e.scales, e.offsets) for e in encs]

            def load_then_apply(g):  # the diagnostics of both steps, as apply_file returns them
                e = qairt.Encodings.load(path)
                try:
                    return e.diagnostics + e.apply(g)
                except qairt.QairtError as x:
                    x.diagnostics = e.diagnostics + x.diagnostics
                    raise

            write(["t%d" % i for i in range(n)])
            one = outcome(lambda g: qairt.Encodings.apply_file(path, g))
            two = outcome(load_then_apply)
            self.assertEqual(one, two)
            self.assertIsNone(one[1])
            self.assertEqual(len([x for x in one[0] if x[0] == "warning"]), n)
            self.assertAlmostEqual(one[2][1][0][0], 0.001 * 398, places=6)
            # A name the graph lacks, late in the file: an error, nothing applied, the same diagnostics.
            write(["t%d" % i for i in range(n - 3)] + ["t%dx" % (n - 3), "t%d" % (n - 2), "t%d" % (n - 1)])
            one = outcome(lambda g: qairt.Encodings.apply_file(path, g))
            two = outcome(load_then_apply)
            self.assertEqual(one, two)
            self.assertIs(one[1], qairt.ValidationError)
            self.assertEqual(one[2], [None] * len(one[2]))
            self.assertEqual([x for x in one[0] if x[0] == "error"][0][8], "t%d" % (n - 3))  # the suggestion
            with self.assertRaises(qairt.IoError):
                qairt.Encodings.apply_file(os.path.join(d, "missing.json"), graph())

    def test_write_versions_and_round_trip(self):
        src = qairt.Encodings.load(os.path.join(DATA, "aimet_0.6.1_w4a4__xLPMG_10_1_4.encodings"))
        v2 = src.dumps("2.0.0")
        self.assertEqual(json.loads(v2)["version"], "2.0.0")
        back = json.loads(qairt.Encodings.loads(v2).dumps("0.6.1"))
        orig = json.load(open(os.path.join(DATA, "aimet_0.6.1_w4a4__xLPMG_10_1_4.encodings")))
        for sec in ("activation_encodings", "param_encodings"):
            for name, encs in orig[sec].items():
                got = back[sec][name][0]
                self.assertEqual(got["offset"], encs[0]["offset"])
                self.assertEqual(f32(got["scale"]), f32(encs[0]["scale"]))
                self.assertEqual(got["is_symmetric"], encs[0]["is_symmetric"])
        doc = qairt.Encodings.load(os.path.join(DATA, "qairt_2.0.0__seed000_doc_examples_TRANSCRIBED.json"))
        with self.assertRaises(qairt.UnsupportedError) as cm:
            doc.dumps("0.6.1")
        self.assertTrue(any(d.code == "format-limit" for d in cm.exception.diagnostics))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "x.json")
            with self.assertRaises(qairt.UnsupportedError):
                doc.dump(out, "0.6.1")
            self.assertEqual(os.listdir(tmp), [])
            doc.dump(out, "2.0.0")
            self.assertEqual(qairt.Encodings.load(out).names(), doc.names())

    def test_cls_model(self):
        if not os.path.exists(CLS):
            self.skipTest("cls model missing: run scripts/setup-npm.sh")
        g, _ = qairt.import_onnx(CLS, define_symbols=CLS_SYMBOLS)
        names = [t.name for t in g.tensors() if t.dtype in ("float32", "float16")]
        self.assertGreater(len(names), 50)
        entries = [{"name": n, "output_dtype": "uint8", "y_scale": 0.5, "y_zero_point": 1} for n in names]
        diags = qairt.Encodings.loads(json.dumps({"version": "2.0.0", "encodings": entries})).apply(g)
        self.assertEqual(diags, [])
        for n in names:
            self.assertEqual(g.get_encoding(n).offsets, [-1])
        text = qairt.Encodings.write(g, "2.0.0")
        g2, _ = qairt.import_onnx(CLS, define_symbols=CLS_SYMBOLS)
        qairt.Encodings.loads(text).apply(g2)
        self.assertEqual(qairt.Encodings.write(g2, "2.0.0"), text)


if __name__ == "__main__":
    unittest.main()


class DocstringExampleTest(unittest.TestCase):
    """The usage example at the top of qairt/encodings.py runs as written."""

    def test_module_example_runs(self):
        if not os.path.exists(CLS):
            self.skipTest("PaddleOCR classifier not installed (scripts/setup-npm.sh)")
        doc = encodings.__doc__
        example = doc[doc.index("    import qairt"):doc.index("\n\n", doc.index("    import qairt"))]
        code = "\n".join(line[4:] for line in example.splitlines())
        with tempfile.TemporaryDirectory() as d:
            # The example's files: the classifier (static dims) and an
            # overrides file for its input 'x'.
            with open(os.path.join(d, "overrides.json"), "w") as f:
                json.dump({"version": "2.0.0", "encodings": [
                    {"name": "x", "output_dtype": "uint8", "y_scale": 0.05, "y_zero_point": 128}]}, f)
            code = code.replace('"model.onnx"', repr(CLS) + ", define_symbols=%r" % (CLS_SYMBOLS,))
            code = code.replace('"overrides.json"', repr(os.path.join(d, "overrides.json")))
            scope = {}
            exec(compile(code, "qairt/encodings.py docstring", "exec"), scope)
            self.assertIn("encodings", scope["text"])
