"""Embedding: libqairt.so loaded through ctypes into a Python
process that has already imported Debian's `onnx` module (the same
libprotobuf / libonnx_proto in one process), used for a whole conversion,
with `onnx` still working afterwards; and a host locale with a comma decimal
does not change the bytes written.

Each scenario runs in a fresh interpreter so the import order is the one
under test (unittest discover may already have imported qairt).
"""

import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SCRIPT = textwrap.dedent(r"""
    import locale, sys
    import numpy as np
    import onnx                                   # first: the host's onnx and its protobuf
    from onnx import TensorProto, helper, numpy_helper
    if len(sys.argv) > 1:
        locale.setlocale(locale.LC_ALL, sys.argv[1])
        assert locale.str(0.5) == "0,5", locale.str(0.5)
    import qairt                                  # then libqairt.so via ctypes
    import qairt.calib
    import qairt.process

    w = numpy_helper.from_array((np.arange(36, dtype=np.float32).reshape(4, 1, 3, 3) - 18) / 20, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "emb", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], [w])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)

    graph, _report = qairt.import_onnx(model.SerializeToString())
    samples = [np.sin(np.arange(16, dtype=np.float32) + s).reshape(1, 1, 4, 4) for s in range(3)]
    qairt.calib.calibrate(graph, [{"x": s} for s in samples])
    result = qairt.process.process(graph, qairt.Target.builtin("htp_v73"), log_level="INFO")
    assert not result.errors, result.errors
    blob = qairt.write_container(graph, target="htp_v73")
    exported = qairt.export_onnx(graph)

    # onnx still works after qairt loaded and ran: parse what qairt exported.
    back = onnx.load_from_string(exported)
    onnx.checker.check_model(back)
    sys.stdout.buffer.write(blob + b"\n--log--\n" + result.log.encode())
""")


def run(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    return subprocess.run([sys.executable, "-c", SCRIPT, *args], env=env, capture_output=True, timeout=300)


class EmbeddingTest(unittest.TestCase):
    def test_after_onnx_import(self):
        p = run()
        self.assertEqual(p.returncode, 0, p.stderr.decode(errors="replace"))
        self.assertNotIn(b"conflicts", p.stderr)
        self.assertGreater(len(p.stdout), 1000)

    def test_comma_decimal_locale(self):
        c = run()
        de = run("de_DE.UTF-8")
        self.assertEqual(c.returncode, 0, c.stderr.decode(errors="replace"))
        self.assertEqual(de.returncode, 0, de.stderr.decode(errors="replace"))
        self.assertIn(b"0.", c.stdout.split(b"--log--")[1])  # decimals in the log: the comparison can fail
        self.assertEqual(c.stdout, de.stdout)


if __name__ == "__main__":
    unittest.main()
