"""qairt.import_onnx / qairt.export_onnx / Graph.export_onnx (qairt/onnx.py).

Numerical round trips against onnxruntime live in tests/ort; these check the
binding: options, the report, errors, bytes/file/path-like, and that the
exported model is a valid ONNX model (Debian's python3-onnx checker).
"""

import os
import pathlib
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import qairt  # noqa: E402

STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"
try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover
    if STRICT:
        raise
    onnx = None

if STRICT:
    def _no_skip(self, reason):
        self.fail("test would be skipped under QAIRT_TEST_STRICT=1: " + reason)

    unittest.TestCase.skipTest = _no_skip


def small_model(opset=13):
    """x[N,3,8,8] -> Conv -> Relu -> GlobalAveragePool -> Flatten -> Gemm."""
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    fc = numpy_helper.from_array(rng.standard_normal((2, 4)).astype(np.float32), "fc")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("GlobalAveragePool", ["r"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "fc"], ["y"], name="gemm", transB=1)]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])], [w, fc])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


class OnnxBindingTest(unittest.TestCase):
    def setUp(self):
        if onnx is None:
            self.skipTest("python3-onnx/numpy not installed")
        self.bytes = small_model().SerializeToString()
        self.dir = tempfile.mkdtemp(prefix="qairt_onnx_py_")
        self.path = os.path.join(self.dir, "small.onnx")
        with open(self.path, "wb") as f:
            f.write(self.bytes)

    def tearDown(self):
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)

    def test_import_bytes_and_path(self):
        for source in (self.bytes, self.path, pathlib.Path(self.path)):
            g, report = qairt.import_onnx(source, define_symbols={"N": 2})
            with g:
                self.assertEqual([o["shape"] for o in report["outputs"]], [[2, 2]])
                self.assertEqual(report["outputs"][0]["name"], "y")
                self.assertEqual(g.op_count, 5)
                self.assertEqual(report["dynamic_dims"], [])

    def test_input_dims_and_dynamic(self):
        g, report = qairt.import_onnx(self.bytes, input_dims={"x": [3, 3, 8, 8]})
        self.assertEqual(report["outputs"][0]["shape"], [3, 2])
        g.close()
        g, report = qairt.import_onnx(self.bytes)
        self.assertEqual(report["outputs"][0]["shape"], ["N", 2])
        self.assertTrue(report["dynamic_dims"])
        g.close()
        with self.assertRaises(qairt.ValidationError) as cm:
            qairt.import_onnx(self.bytes, require_static=True)
        self.assertIn("dynamic", str(cm.exception))
        self.assertIsNotNone(cm.exception.report)
        self.assertTrue(cm.exception.report["dynamic_dims"])

    def test_import_errors(self):
        with self.assertRaises(qairt.ParseError) as cm:
            qairt.import_onnx(b"\x08\x07not a model")
        self.assertIsNotNone(cm.exception.report)
        with self.assertRaises(qairt.IoError) as cm:
            qairt.import_onnx(os.path.join(self.dir, "missing.onnx"))
        self.assertIn("missing.onnx", str(cm.exception))
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.import_onnx(12345)

    def test_export_bytes_file_and_method(self):
        g, _ = qairt.import_onnx(self.bytes, define_symbols={"N": 1})
        with g:
            data = qairt.export_onnx(g)
            model = onnx.load_from_string(data)
            onnx.checker.check_model(model)
            self.assertEqual(model.opset_import[0].version, qairt.onnx.DEFAULT_OPSET)
            # The source model's GlobalAveragePool and Gemm come back as such
            # (ONNX Runtime sums them differently from AveragePool / MatMul).
            self.assertEqual([n.op_type for n in model.graph.node],
                             ["Conv", "Relu", "GlobalAveragePool", "Reshape", "Gemm"])
            out = os.path.join(self.dir, "exported.onnx")
            self.assertIsNone(g.export_onnx(out, opset=13, producer_name="tests", graph_name="renamed"))
            model = onnx.load(out)
            onnx.checker.check_model(model)
            self.assertEqual(model.producer_name, "tests")
            self.assertEqual(model.graph.name, "renamed")
            self.assertEqual(model.opset_import[0].version, 13)
            self.assertEqual(sorted(os.listdir(self.dir)), ["exported.onnx", "small.onnx"])
            self.assertEqual(g.export_onnx(None), data)
            g2, report = qairt.import_onnx(data)
            with g2:
                self.assertEqual(report["outputs"][0]["shape"], [1, 2])
            with_info = onnx.load_from_string(g.export_onnx(value_info=True))
            self.assertGreater(len(with_info.graph.value_info), 2)

    def test_export_errors(self):
        g, _ = qairt.import_onnx(self.bytes, define_symbols={"N": 1})
        with g:
            with self.assertRaises(qairt.InvalidArgumentError) as cm:
                g.export_onnx(opset=99)
            self.assertIn("opset 99", str(cm.exception))
            target = os.path.join(self.dir, "no", "such", "dir", "m.onnx")
            with self.assertRaises(qairt.IoError) as cm:
                g.export_onnx(target)
            self.assertIn(target, str(cm.exception))
        with qairt.Graph(name="odd") as odd:
            x = odd.add_input("x", "float32", [1, 4, 2, 2])
            odd.add_op("ChannelShuffle", "shuffle", [x], ["y"], attrs={"num_groups": 2})
            odd.mark_output("y")
            with self.assertRaises(qairt.UnsupportedError) as cm:
                odd.export_onnx()
            self.assertIn("shuffle", str(cm.exception))

    def test_export_external_data(self):
        g, _ = qairt.import_onnx(self.bytes, define_symbols={"N": 1})
        with g:
            out = os.path.join(self.dir, "ext.onnx")
            g.export_onnx(out, external_data=True, external_data_threshold=16)
            self.assertEqual(sorted(os.listdir(self.dir)), ["ext.onnx", "ext.onnx.data", "small.onnx"])
            model = onnx.load(out, load_external_data=False)
            external = [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
            self.assertTrue(external)
            loaded = onnx.load(out)  # Debian's onnx resolves the data file
            onnx.checker.check_model(loaded)
            inline = onnx.load_from_string(g.export_onnx())
            self.assertEqual({t.name: t.raw_data for t in loaded.graph.initializer},
                             {t.name: t.raw_data for t in inline.graph.initializer})
            with self.assertRaises(qairt.InvalidArgumentError) as cm:
                g.export_onnx(None, external_data=True)
            self.assertIn("external data", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
