"""The .qairt container through the Python binding (python/qairt/container.py)."""
import os
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import qairt  # noqa: E402
from qairt import ContainerOption, OpAnnotation, TensorNote  # noqa: E402


def build_graph():
    g = qairt.Graph(name="py_container")
    x = g.add_input("x", "float32", ["batch", 3, 16])
    w = g.add_constant("w", "s4", [3, 16], bytes(range(24)))
    g.set_encoding(w, qairt.Encoding.per_channel("s4", 0, [0.5, 0.25, 0.125]))
    g.set_encoding(x, qairt.Encoding.per_tensor("u8", 0.02, -7))
    d = g.add_op("Convert", "deq", [w], ["w_f"], attrs={"output_dtype": 1})
    g.add_op("ElementWiseAdd", "add", [x, g.op(d).outputs[0]], ["y"],
             attrs={"note": "hi", "ints": [1, 2], "floats": [0.5], "names": ["a", "b"], "f": 1.5})
    g.mark_output("y")
    return g


OPTIONS = [ContainerOption("act_bitwidth", "8", "default"), ("weights_bitwidth", "4", "user"),
           ("float_bitwidth", "16", "target")]


class ContainerTest(unittest.TestCase):
    def test_round_trip_file_and_bytes(self):
        g = build_graph()
        data = qairt.write_container(g, target="htp_v73", options=OPTIONS,
                                     op_annotations=[OpAnnotation("add", "a8w8", 2, True)],
                                     tensor_notes=[("w_f", "OP_ADAPTATION^PRUNED")])
        self.assertEqual(data[4:8], b"QAIR")
        # A qairt.Target is accepted where its name is.
        with qairt.Target.load("htp_v73") as t:
            self.assertEqual(data, qairt.write_container(g, target=t, options=OPTIONS,
                                                         op_annotations=[OpAnnotation("add", "a8w8", 2, True)],
                                                         tensor_notes=[("w_f", "OP_ADAPTATION^PRUNED")]))
        # Deterministic: the same call gives the same bytes.
        self.assertEqual(data, qairt.write_container(g, target="htp_v73", options=OPTIONS,
                                                     op_annotations=[OpAnnotation("add", "a8w8", 2, True)],
                                                     tensor_notes=[("w_f", "OP_ADAPTATION^PRUNED")]))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.qairt")
            self.assertIsNone(qairt.write_container(g, path, target="htp_v73", options=OPTIONS,
                                                    op_annotations=[OpAnnotation("add", "a8w8", 2, True)],
                                                    tensor_notes=[("w_f", "OP_ADAPTATION^PRUNED")]))
            self.assertEqual(sorted(os.listdir(d)), ["m.qairt"])
            with open(path, "rb") as f:
                self.assertEqual(f.read(), data)
            for c in (qairt.Container.load(path), qairt.Container.from_bytes(data)):
                self.assertEqual(c.target, "htp_v73")
                self.assertTrue(c.producer.startswith("qairt "))
                self.assertEqual(c.schema_version, 4)
                self.assertEqual([o.key for o in c.options], ["act_bitwidth", "weights_bitwidth", "float_bitwidth"])
                self.assertEqual(c.option("weights_bitwidth"), ContainerOption("weights_bitwidth", "4", "user"))
                self.assertEqual(c.option("float_bitwidth").source, "target")
                self.assertEqual(c.options_dict["act_bitwidth"], "8")
                with self.assertRaises(qairt.NotFoundError):
                    c.option("nope")
                self.assertEqual(c.op_annotations, [OpAnnotation("add", "a8w8", 2, True)])
                self.assertEqual(c.tensor_notes, [TensorNote("w_f", "OP_ADAPTATION^PRUNED")])
                equal, diff = g.compare(c.graph)
                self.assertTrue(equal, diff)
                self.assertEqual(c.graph.tensor("x").shape, ["batch", 3, 16])
                self.assertEqual(c.graph.tensor_data("w"), bytes(range(24)))
                self.assertEqual(c.graph.get_encoding("w"), g.get_encoding("w"))
                # The loaded graph writes back to the same bytes.
                self.assertEqual(qairt.write_container(c.graph, target=c.target, options=c.options,
                                                       op_annotations=c.op_annotations,
                                                       tensor_notes=c.tensor_notes), data)

    def test_dict_options_and_errors(self):
        g = build_graph()
        c = qairt.Container.from_bytes(qairt.write_container(g, options={"a": "1", "b": "2"}))
        self.assertEqual(c.options, [ContainerOption("a", "1", "user"), ContainerOption("b", "2", "user")])
        self.assertEqual(c.target, "")
        with self.assertRaises(qairt.ValidationError) as e:
            qairt.write_container(g, op_annotations=[("ghost", "k")])
        self.assertIn("op_annotations[0].op_name 'ghost'", e.exception.message)
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.write_container(g, options=[("k", "v", "sometimes")])
        with self.assertRaises(qairt.ParseError) as e:
            qairt.Container.from_bytes(b"\0" * 64)
        self.assertIn("file identifier", e.exception.message)
        data = bytearray(qairt.write_container(g))
        # min_reader_version lives in the root table; find it through the vtable.
        root = struct.unpack_from("<I", data, 0)[0]
        vtable = root - struct.unpack_from("<i", data, root)[0]
        field = struct.unpack_from("<H", data, vtable + 4 + 2 * 1)[0]  # id 1
        self.assertNotEqual(field, 0)
        struct.pack_into("<I", data, root + field, 99)
        with self.assertRaises(qairt.UnsupportedError) as e:
            qairt.Container.from_bytes(bytes(data))
        self.assertIn("min_reader_version is 99", e.exception.message)
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(qairt.NotFoundError):
                qairt.Container.load(os.path.join(d, "missing.qairt"))
            bad = os.path.join(d, "bad.qairt")
            whole = qairt.write_container(g)
            with open(bad, "wb") as f:
                f.write(whole[: len(whole) // 2])
            with self.assertRaises(qairt.ParseError):
                qairt.Container.load(bad)
            # A failed write leaves nothing behind.
            out = os.path.join(d, "out.qairt")
            with self.assertRaises(qairt.ValidationError):
                qairt.write_container(g, out, tensor_notes=[("ghost", "")])
            self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
