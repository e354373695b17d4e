"""A Q-DQ model quantized the way ONNX Runtime's quantizer does it (MatMul
weights per output channel: DequantizeLinear axis 1 of [K, N]) converts for
HTP, whose MatMul takes per-tensor weights only: the projection becomes a
FullyConnected whose per-channel weight keeps the model's integers and
scales, and the converted model computes what the Q-DQ model computes.
"""
import os
import tempfile
import unittest

import abi_check  # noqa: F401  (sets up the library path)

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import qairt


def write_qdq_model(path):
    rng = np.random.default_rng(3)
    q = rng.integers(-127, 128, size=(16, 8)).astype(np.int8)
    scales = (rng.uniform(0.5, 2.0, size=8) / 127).astype(np.float32)
    inits = [
        numpy_helper.from_array(q, "w_q"), numpy_helper.from_array(scales, "w_scale"),
        numpy_helper.from_array(np.zeros(8, np.int8), "w_zp"),
        numpy_helper.from_array(np.array(4.0 / 65535, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(32768, np.uint16), "x_zp"),
        numpy_helper.from_array(np.array(64.0 / 65535, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(32768, np.uint16), "y_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["x_q"], domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_dq"], domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_dq"], axis=1),
        helper.make_node("MatMul", ["x_dq", "w_dq"], ["y_f"], name="proj"),
        helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zp"], ["y_q"], domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zp"], ["y"], domain="com.microsoft"),
    ]
    graph = helper.make_graph(nodes, "qdq_matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return q, scales


class QdqMatMulTest(unittest.TestCase):
    def test_per_channel_matmul_weights_convert_for_htp(self):
        with tempfile.TemporaryDirectory() as d:
            model = os.path.join(d, "m.onnx")
            q, scales = write_qdq_model(model)
            out = os.path.join(d, "m.qairt")
            r = qairt.convert(model, "htp_v73", out)
            self.assertTrue(r.ok, r.errors)
            g = qairt.Container.load(out).graph
            fc = [op for op in g.ops() if op.name == "proj"]
            self.assertEqual(len(fc), 1)
            self.assertEqual(fc[0].type, "FullyConnected")
            w = g.tensor(fc[0].inputs[1])
            self.assertEqual(w.shape, [8, 16])
            self.assertEqual(w.dtype, "sfixed_point_8")  # an a16w8 kernel with per-channel weights, no fallback
            stored = np.frombuffer(g.tensor_data(w.id), dtype=np.int8).reshape(8, 16)
            np.testing.assert_array_equal(stored, q.T)


if __name__ == "__main__":
    unittest.main()
