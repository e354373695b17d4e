"""Calibration and comparison through the Python binding."""
import os
import struct
import tempfile
import unittest

import abi_check

import numpy as np

import qairt
from qairt import calib


def mlp(bias=False):
    g = qairt.Graph("mlp")
    x = g.add_input("x", "float32", [1, 8])
    w = g.add_constant("w", "float32", [4, 8], struct.pack("32f", *[((i * 7) % 11 - 5) / 10 for i in range(32)]))
    inputs = [x, w] + ([g.add_constant("b", "float32", [4], struct.pack("4f", 0.1, -0.2, 0.3, 0.0))] if bias else [])
    fc = g.add_op("FullyConnected", "fc", inputs, ["h"])
    r = g.add_op("Relu", "relu", [g.op(fc).outputs[0]], ["y"])
    g.mark_output(g.op(r).outputs[0])
    return g


def samples(n):
    rng = np.random.default_rng(7)
    return [{"x": rng.normal(size=(1, 8)).astype(np.float32)} for _ in range(n)]


class CalibTest(unittest.TestCase):
    def test_declarations_match_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_calib.h", "calib.exports", calib.DECLARED)

    def test_calibrate_from_numpy_then_compare(self):
        g = mlp()
        f = g.clone()
        r = calib.calibrate(g, samples(6), act_bitwidth=16, per_row=True)
        self.assertEqual(r.samples, 6)
        self.assertEqual(set(r.activations), {"x", "h", "y"})
        self.assertEqual(r.params, ["w"])
        with tempfile.TemporaryDirectory() as d:
            lines = []
            for i, s in enumerate(samples(3)):
                s["x"].astype("<f4").tofile(os.path.join(d, "s%d.raw" % i))
                lines.append("x:=s%d.raw\n" % i)
            with open(os.path.join(d, "list.txt"), "w") as fl:
                fl.writelines(lines)
            c = calib.compare_input_list(f, g, os.path.join(d, "list.txt"), per_layer=True)
            self.assertEqual(len(c.outputs), 1)
            self.assertGreater(c.outputs[0].sqnr_db, 40)  # 16-bit activations
            self.assertTrue(c.summary.startswith("accuracy on 3 samples: y SQNR"))
            # y is [1, 8]: one argmax position per sample (ABI 1.19's fields).
            self.assertEqual(c.outputs[0].argmax_positions, 3)
            self.assertEqual(c.outputs[0].argmax_positions_agree, c.outputs[0].argmax_agree)
            g2 = mlp()
            r2 = calib.calibrate(g2, input_list=os.path.join(d, "list.txt"), act_method="mse")
            self.assertEqual(r2.samples, 3)

    def test_seqmse_weights(self):
        """param_method="seqmse": the weights' encodings are searched (notes
        carry the summary), never from values alone."""
        g = mlp()
        r = calib.calibrate(g, samples(6), act_bitwidth=16, weights_bitwidth=4, per_row=True, param_method="seqmse")
        self.assertEqual(len(r.notes), 1)
        self.assertTrue(r.notes[0].startswith("sequential MSE: 1 weight in 1 level"), r.notes)
        self.assertIsNotNone(g.get_encoding("w"))
        with self.assertRaises(qairt.QairtError) as e:
            calib.calibrate_params(mlp(), param_method="seqmse")
        self.assertIn("seqmse", str(e.exception))
        g2 = mlp()
        r2 = calib.calibrate(g2, samples(6), act_bitwidth=16, weights_bitwidth=4, per_row=True, adaptive_rounding=True)
        self.assertTrue(r2.notes[0].startswith("sequential MSE: 1 weight in 1 level"), r2.notes)

    def test_bias_correction(self):
        """bias_correction=True: the bias moves (notes carry the summary); without samples it is refused."""
        g = mlp(bias=True)
        r = calib.calibrate(g, samples(6), weights_bitwidth=4, per_row=True, bias_correction=True)
        self.assertTrue(r.notes[-1].startswith("bias correction: 1 bias in 1 level"), r.notes)
        plain = mlp(bias=True)
        calib.calibrate(plain, samples(6), weights_bitwidth=4, per_row=True)
        self.assertEqual(g.get_encoding("w"), plain.get_encoding("w"))
        self.assertNotEqual(g.tensor_data("b"), plain.tensor_data("b"))
        with self.assertRaises(qairt.QairtError) as e:
            calib.calibrate(mlp(bias=True), [], bias_correction=True)
        self.assertIn("sample", str(e.exception))

    def test_calibrate_params_without_samples(self):
        full, g = mlp(), mlp()
        calib.calibrate(full, samples(4), per_row=True)
        r = calib.calibrate_params(g, per_row=True)
        self.assertEqual((r.samples, r.activations, r.params), (0, [], ["w"]))
        self.assertIsNotNone(g.get_encoding("w"))
        self.assertEqual(g.get_encoding("w"), full.get_encoding("w"))
        self.assertIsNone(g.get_encoding("h"))

    def test_progress_then_process_and_qdq_export(self):
        """The whole flow from Python: calibrate with a progress callback,
        process for htp_v73, export a Q-DQ ONNX model with the options as
        metadata (parsed by Debian's onnx here; tests/calib runs such models
        in onnxruntime-node)."""
        from qairt import process as proc
        from qairt.targets import Target
        g = mlp()
        seen = []
        calib.calibrate(g, samples(5), act_bitwidth=16, progress=lambda *a: seen.append(a))
        self.assertEqual(seen, [("ranges", i, 5) for i in range(1, 6)])
        r = proc.process(g, Target.load("htp_v73"), act_bitwidth=16, bias_bitwidth=32)
        self.assertTrue(r.ok, r.errors)
        meta = {"qairt." + o.key: o.value for o in r.options}
        data = qairt.export_onnx(g, metadata=meta)
        import onnx
        m = onnx.ModelProto()
        m.ParseFromString(data)
        ops = [n.op_type for n in m.graph.node]
        self.assertEqual(m.opset_import[0].version, 21)  # 16-bit activations
        self.assertIn("QuantizeLinear", ops)
        self.assertEqual({p.key: p.value for p in m.metadata_props}["qairt.act_bitwidth"], "16")
        # The com.microsoft Q/DQ keep a lower opset.
        ms = onnx.ModelProto()
        ms.ParseFromString(qairt.export_onnx(g, opset=13, qdq_ms_domain=True))
        self.assertEqual(ms.opset_import[0].version, 13)
        self.assertTrue(all(n.domain == "com.microsoft" for n in ms.graph.node
                            if n.op_type in ("QuantizeLinear", "DequantizeLinear")))
        # compare_input_list reports progress per sample.
        with tempfile.TemporaryDirectory() as d:
            for i, s in enumerate(samples(2)):
                s["x"].astype("<f4").tofile(os.path.join(d, "s%d.raw" % i))
            with open(os.path.join(d, "list.txt"), "w") as fl:
                fl.write("x:=s0.raw\nx:=s1.raw\n")
            seen.clear()
            c = calib.compare_input_list(mlp(), g, os.path.join(d, "list.txt"), progress=lambda *a: seen.append(a))
            self.assertEqual(seen, [("compare", 1, 2), ("compare", 2, 2)])
            self.assertGreater(c.outputs[0].sqnr_db, 30)

    def test_bad_data_raises_with_names(self):
        g = mlp()
        with self.assertRaises(qairt.InvalidArgumentError):
            calib.calibrate(g, [{"y": np.zeros((1, 8), np.float32)}])
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            calib.calibrate(g, [{"x": np.zeros((1, 4), np.float32)}])
        self.assertIn("sample 0, input 'x': shape (1, 4), but the input is (1, 8)", str(cm.exception))
        # The byte count matches but the data is not the input's: refused
        # (the library sees only bytes).
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            calib.calibrate(g, samples(1) + [{"x": np.zeros((1, 4), np.float64)}])
        self.assertIn("sample 1, input 'x': dtype float64, but the input is float32", str(cm.exception))
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            calib.calibrate(g, [{"x": np.zeros((8, 1), np.float32)}])
        self.assertIn("shape (8, 1), but the input is (1, 8)", str(cm.exception))
        with self.assertRaises(qairt.InvalidArgumentError):
            calib.calibrate(g, samples(1), act_method="best")
        with self.assertRaises(qairt.QairtError) as cm:
            calib.calibrate(g, input_list="/nonexistent/list.txt")
        self.assertIn("/nonexistent/list.txt", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
