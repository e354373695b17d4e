"""Target-specific processing through the Python binding."""
import struct
import unittest

import abi_check

import qairt
from qairt import process as proc
from qairt.container import Container, write_container
from qairt.targets import Target


def conv_relu(encode=True):
    g = qairt.Graph("convrelu")
    x = g.add_input("x", "float32", [1, 4, 4, 4])
    w = g.add_constant("w", "float32", [4, 4, 1, 1], struct.pack("16f", *[i / 16 - 0.5 for i in range(16)]))
    b = g.add_constant("b", "float32", [4], struct.pack("4f", 0.1, -0.2, 0.3, -0.4))
    conv = g.add_op("Conv2d", "conv", [x, w, b], ["c"])
    relu = g.add_op("Relu", "relu", [g.op(conv).outputs[0]], ["y"])
    y = g.op(relu).outputs[0]
    g.mark_output(y)
    if encode:
        g.set_encoding(x, qairt.Encoding.per_tensor("ufixed_point_8", 0.02, -128))
        g.set_encoding(w, qairt.Encoding.per_channel("sfixed_point_8", 0, [0.01, 0.02, 0.03, 0.04],
                                                     symmetry="symmetric"))
        g.set_encoding(y, qairt.Encoding.per_tensor("ufixed_point_8", 0.01, 0))
    return g


class ProcessTest(unittest.TestCase):
    def test_declarations_match_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_process.h", "process.exports", proc.DECLARED)

    def test_pipeline_lists_the_passes_in_order(self):
        p = proc.pipeline()
        self.assertLess(p.index("propagate-encodings"), p.index("select-kernels"))
        self.assertLess(p.index("select-kernels"), p.index("quantize-static-tensors"))

    def test_process_and_write_container(self):
        g = conv_relu()
        t = Target.load("htp_v73")
        r = proc.process(g, t, log_level="TRACE")
        self.assertTrue(r.ok, r.errors)
        self.assertIn("[SUPER GROUP] Conv2d + Relu", r.log)
        self.assertIn("[BIAS FXP] 1", r.stats)
        ann = {a.op_name: a for a in r.op_annotations}
        self.assertEqual(ann["conv"].kernel, "a8w8")
        self.assertEqual(ann["conv"].super_group, ann["relu"].super_group)
        self.assertEqual(dict((o.key, o.value) for o in r.options)["target"], "htp_v73")
        data = write_container(g, target="htp_v73", options=r.options, op_annotations=r.op_annotations,
                               tensor_notes=r.tensor_notes)
        c = Container.from_bytes(data)
        self.assertEqual(c.target, "htp_v73")
        bias = [ti for ti in c.graph.tensors() if ti.name == "b"][0]
        self.assertEqual(bias.dtype, "sfixed_point_32")

    def test_errors_are_returned_not_raised(self):
        g = conv_relu(encode=False)
        r = proc.process(g, Target.load("htp_v68"))
        self.assertFalse(r.ok)
        self.assertTrue(r.errors[0].startswith("No accuracy preserving kernels found for conv"))
        self.assertIn("FP16 audit", r.errors[-1])

    def test_bad_options_raise(self):
        g = conv_relu()
        with self.assertRaises(qairt.InvalidArgumentError):
            proc.process(g, Target.load("htp_v73"), float_bitwidth=32)
        with self.assertRaises(qairt.InvalidArgumentError):
            proc.process(g, Target.load("htp_v73"), stop_after="nope")
        with self.assertRaises(qairt.InvalidArgumentError):
            proc.process(g, Target.load("htp_v73"), log_level="LOUD")


if __name__ == "__main__":
    unittest.main()


class LegalizeTest(unittest.TestCase):
    def _conv1d_graph(self):
        import numpy as np
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        w = numpy_helper.from_array(np.linspace(-1, 1, 4 * 2 * 3, dtype=np.float32).reshape(4, 2, 3), "w")
        node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1], name="conv1d")
        g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        graph, _ = qairt.import_onnx(m.SerializeToString())
        return graph

    def test_conv1d_runs_as_conv2d_on_htp(self):
        g = self._conv1d_graph()
        self.assertEqual(proc.legalize(g, Target.load("htp_v73")), 1)
        types = [op.type for op in g.ops()]
        self.assertNotIn("Conv1d", types)
        self.assertEqual(types, ["ExpandDims", "Conv2d", "Squeeze"])
        self.assertEqual(proc.legalize(g, Target.load("htp_v73")), 0)

    def test_cpu_keeps_conv1d(self):
        g = self._conv1d_graph()
        self.assertEqual(proc.legalize(g, Target.load("cpu")), 0)
        self.assertEqual([op.type for op in g.ops()], ["Conv1d"])
