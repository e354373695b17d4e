"""The naming table's spellings (include/qairt/README.md, since ABI 1.7) give
exactly what the older names they alias give."""
import ctypes
import os
import tempfile
import unittest

import qairt
from qairt import _ffi

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:  # pragma: no cover - Debian's python3-onnx is a test dependency
    onnx = None


def _tiny_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _fill(fn, *args):
    n = ctypes.c_size_t()
    fn(*args, None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    fn(*args, buf, n.value + 1, ctypes.byref(n))
    return buf.value


@unittest.skipIf(onnx is None, "python3-onnx is not installed")
class NamingAliasTest(unittest.TestCase):
    def test_import_report_render_matches_text_and_json(self):
        data = _tiny_model()
        opts = _ffi.new_struct(_ffi.ImportOptions)
        _ffi.qairt_import_options_init(ctypes.byref(opts))
        graph, report = _ffi.GraphP(), _ffi.ImportReportP()
        buf = ctypes.create_string_buffer(data, len(data))
        _ffi.qairt_import_onnx_bytes(buf, len(data), ctypes.byref(opts), ctypes.byref(graph), ctypes.byref(report))
        try:
            text = _fill(_ffi.qairt_import_report_text, report)
            js = _fill(_ffi.qairt_import_report_json, report)
            self.assertIn(b"Relu", text)
            self.assertEqual(_fill(_ffi.qairt_import_report_render, report, 1), text)
            self.assertEqual(_fill(_ffi.qairt_import_report_render, report, 2), js)
            with self.assertRaises(qairt.QairtError):
                _fill(_ffi.qairt_import_report_render, report, 3)  # no SARIF form
        finally:
            _ffi.qairt_import_report_destroy(report)
            _ffi.qairt_graph_destroy(graph)

    def test_container_getters_match_the_at_spellings(self):
        g, _ = qairt.import_onnx(_tiny_model())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.qairt")
            qairt.write_container(g, path, options=[("k1", "v1"), ("k2", "v2")])
            handle = _ffi.ContainerP()
            _ffi.qairt_container_load_file(path.encode(), ctypes.byref(handle))
            try:
                for i in range(2):
                    a, b = _ffi.ContainerOption(), _ffi.ContainerOption()
                    _ffi.qairt_container_option_at(handle, i, ctypes.byref(a))
                    _ffi.qairt_container_get_option(handle, i, ctypes.byref(b))
                    self.assertEqual((a.key, a.value, a.source), (b.key, b.value, b.source))
                with self.assertRaises(qairt.QairtError):
                    _ffi.qairt_container_get_option(handle, 2, ctypes.byref(_ffi.ContainerOption()))
            finally:
                _ffi.qairt_container_destroy(handle)


if __name__ == "__main__":
    unittest.main()
