"""qairt.Executor: numpy in/out, observers, errors (python/qairt/exec.py)."""
import os
import unittest

import numpy as np

import qairt

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError:  # pragma: no cover
    onnx = None


def conv_model():
    w = (np.arange(2 * 3 * 3 * 3, dtype=np.float32).reshape(2, 3, 3, 3) - 27) / 20
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"]),
         helper.make_node("ArgMax", ["y"], ["k"], axis=1, keepdims=0)],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1, 4, 4])],
        [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m, w


def conv_ref(x, w):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, 2, 4, 4), np.float64)
    for o in range(2):
        for i in range(4):
            for j in range(4):
                out[0, o, i, j] = np.sum(xp[0, :, i:i + 3, j:j + 3] * w[o])
    return np.maximum(out, 0)


@unittest.skipIf(onnx is None, "needs onnx")
class ExecutorTest(unittest.TestCase):
    def setUp(self):
        m, self.w = conv_model()
        self.g, _ = qairt.import_onnx(m.SerializeToString())

    def tearDown(self):
        self.g.close()

    def test_run_matches_numpy(self):
        x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 4, 4)).astype(np.float32)
        with qairt.Executor(self.g) as ex:
            self.assertEqual([s.name for s in ex.inputs], ["x"])
            self.assertEqual(ex.inputs[0].shape, (1, 3, 4, 4))
            out = ex.run({"x": x})
            out2 = ex.run([x])
        ref = conv_ref(x, self.w)
        np.testing.assert_allclose(out["y"], ref, atol=1e-5)
        self.assertEqual(out["k"].dtype, np.int64)
        np.testing.assert_array_equal(out["k"], np.argmax(ref, axis=1))
        np.testing.assert_array_equal(out["y"], out2["y"])

    def test_observer_streams_each_op_output(self):
        seen = {}
        x = np.ones((1, 3, 4, 4), np.float32)
        with qairt.Executor(self.g) as ex:
            ex.run({"x": x}, observer=lambda name, a: seen.__setitem__(name, a.copy()))
            stats = ex.stats()
        self.assertEqual(set(seen), {"c", "y", "k"})
        np.testing.assert_allclose(seen["y"], np.maximum(seen["c"], 0))
        self.assertGreater(stats["arena_bytes"], 0)
        self.assertEqual(stats["op_count"], 3)

    def test_observer_exception_stops_the_run(self):
        def boom(name, a):
            raise ValueError("stop at " + name)
        with qairt.Executor(self.g) as ex:
            with self.assertRaisesRegex(ValueError, "stop at c"):
                ex.run({"x": np.zeros((1, 3, 4, 4), np.float32)}, observer=boom)
            # The executor stays usable.
            self.assertEqual(ex.run({"x": np.zeros((1, 3, 4, 4), np.float32)})["y"].shape, (1, 2, 4, 4))

    def test_bad_inputs_raise_named_errors(self):
        with qairt.Executor(self.g) as ex:
            with self.assertRaisesRegex(qairt.QairtError, "shape"):
                ex.run({"x": np.zeros((1, 3, 4, 5), np.float32)})
            with self.assertRaisesRegex(qairt.QairtError, "float32"):
                ex.run({"x": np.zeros((1, 3, 4, 4), np.float64)})
            with self.assertRaisesRegex(qairt.QairtError, "unknown input"):
                ex.run({"x": np.zeros((1, 3, 4, 4), np.float32), "z": np.zeros(1)})

    def test_dynamic_graph_is_refused(self):
        m, _ = conv_model()
        m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
        g, _ = qairt.import_onnx(m.SerializeToString())
        with g:
            with self.assertRaisesRegex(qairt.QairtError, "not static"):
                qairt.Executor(g)
        g2, _ = qairt.import_onnx(m.SerializeToString(), define_symbols={"batch": 1})
        with g2, qairt.Executor(g2) as ex:
            self.assertEqual(ex.inputs[0].shape, (1, 3, 4, 4))


if __name__ == "__main__":
    unittest.main()
