try:  # First, before qairt: the binding must coexist with onnx (protobuf) in one process.
    import onnx
    from onnx import helper as onnx_helper, numpy_helper as onnx_numpy_helper
except ImportError:  # pragma: no cover - Debian's python3-onnx is expected
    onnx = None

# Tests of the qairt Python binding (python/qairt) over libqairt.so.
#
# Run:  QAIRT_LIBRARY=<build>/libqairt.so PYTHONPATH=<repo>/python \
#           /usr/bin/python3 -m unittest discover -s tests/python -v
# Without QAIRT_LIBRARY the binding falls back to <repo>/build/libqairt.so;
# without PYTHONPATH this file adds <repo>/python itself.

import array
import copy
import gc
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import abi_check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
if not any(os.path.isfile(os.path.join(p, "qairt", "__init__.py")) for p in sys.path if p):
    sys.path.insert(0, os.path.join(REPO, "python"))
if "QAIRT_LIBRARY" not in os.environ:
    _fallback = os.path.join(REPO, "build", "libqairt.so")
    if os.path.exists(_fallback):
        os.environ["QAIRT_LIBRARY"] = _fallback

import qairt  # noqa: E402
from qairt import _ffi, errors  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

# Under CTest (QAIRT_TEST_STRICT=1) nothing may be skipped: a missing
# dependency or build product is a failure, not a silent pass.
STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"
if STRICT:
    if onnx is None or np is None:
        raise ImportError("QAIRT_TEST_STRICT=1 needs Debian's python3-onnx and python3-numpy")

    def _no_skip(self, reason):
        self.fail("test would be skipped under QAIRT_TEST_STRICT=1: " + reason)

    unittest.TestCase.skipTest = _no_skip

HEADER = os.path.join(REPO, "include", "qairt", "qairt.h")
EXPORTS = os.path.join(REPO, "capi", "qairt.exports")


# Headers whose functions _ffi declares (its DECLARED_BY_HEADER), each with its
# export list: qairt.h -> capi/qairt.exports, qairt_NAME.h -> capi/NAME.exports.
# (qairt_target.h is declared by qairt.targets and checked in test_targets.py.)
def exports_of(header):
    stem = header[:-2]
    return os.path.join(REPO, "capi", ("qairt" if stem == "qairt" else stem[len("qairt_"):]) + ".exports")


FFI_HEADERS = {h: exports_of(h) for h in _ffi.DECLARED_BY_HEADER}


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def f32_bytes(values):
    return array.array("f", values).tobytes()


def small_cnn(batch="batch"):
    """image[batch,3,8,8] -> Conv2d -> Relu -> PoolMax2d -> out. Returns (graph, ids)."""
    g = qairt.Graph(name="cnn")
    ids = {}
    ids["image"] = g.add_input("image", "float32", [batch, 3, 8, 8])
    ids["w"] = g.add_constant("conv.w", "float32", [4, 3, 3, 3], f32_bytes([0.5] * 108))
    ids["b"] = g.add_constant("conv.b", "float32", [4], f32_bytes([0.0, 0.1, 0.2, 0.3]))
    ids["conv"] = g.add_op("Conv2d", "conv", ["image", "conv.w", "conv.b"], ["conv.out"],
                           attrs={"strides": [1, 1], "pads": [1, 1, 1, 1]},
                           source_name="/conv/Conv", source_op_type="Conv")
    ids["relu"] = g.add_op("Relu", "relu", ["conv.out"], ["relu.out"], source_op_type="Relu")
    ids["pool"] = g.add_op("PoolMax2d", "pool", ["relu.out"], ["out"],
                           attrs={"kernel_shape": [2, 2], "strides": [2, 2]})
    g.mark_output("out")
    return g, ids


# ---------------------------------------------------------------------------
# Module level
# ---------------------------------------------------------------------------

class ModuleTest(unittest.TestCase):
    def test_abi_and_version(self):
        major, minor = qairt.abi_version()
        self.assertEqual(major, 1)
        self.assertGreaterEqual(minor, 0)
        self.assertRegex(qairt.version(), r"^\d+\.\d+\.\d+")
        self.assertTrue(os.path.exists(qairt.library_path) or "/" not in qairt.library_path)

    def test_library_located_by_env(self):
        env = os.environ.get("QAIRT_LIBRARY")
        if not env:
            self.skipTest("QAIRT_LIBRARY not set")
        self.assertEqual(os.path.realpath(qairt.library_path), os.path.realpath(env))

    def test_bad_library_path_raises_import_error(self):
        code = ("import sys\n"
                "try:\n    import qairt\nexcept ImportError as e:\n"
                "    print('IMPORTERROR', e); sys.exit(0)\n"
                "sys.exit(3)\n")
        env = dict(os.environ, QAIRT_LIBRARY="/nonexistent/libqairt.so",
                   PYTHONPATH=os.path.join(REPO, "python"))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("QAIRT_LIBRARY=/nonexistent/libqairt.so", r.stdout)

    def test_op_types(self):
        types = qairt.op_types()
        for t in ("Conv2d", "Relu", "PoolMax2d", "FullyConnected", "Softmax", "ElementWiseAdd"):
            self.assertIn(t, types)
        self.assertEqual(len(types), len(set(types)))

    def test_dtypes(self):
        names = qairt.dtype_names()
        self.assertEqual(names[0], "undefined")
        self.assertEqual(names[1], "float32")
        for n in ("float16", "int8", "uint4", "sfixed_point_8", "ufixed_point_16", "bool"):
            self.assertIn(n, names)
        self.assertEqual(qairt.dtype_name("s8"), "sfixed_point_8")
        self.assertEqual(qairt.dtype_name("f32"), "float32")
        self.assertEqual(qairt.dtype_short_name("ufixed_point_8"), "u8")
        self.assertEqual(qairt.dtype_bitwidth("uint4"), 4)
        self.assertEqual(qairt.dtype_bitwidth("sfixed_point_16"), 16)
        self.assertEqual(qairt.dtype_name(1), "float32")
        for name in names:
            self.assertEqual(qairt.dtype_name(name), name)
            self.assertEqual(qairt.dtype_name(qairt.dtype_short_name(name)), name)
        with self.assertRaises(qairt.QairtError) as cm:
            qairt.dtype_name("float33")
        self.assertIn("float33", str(cm.exception))
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.dtype_name(10_000)
        if np is not None:
            self.assertEqual(qairt.dtype_name(np.float16), "float16")
            self.assertEqual(qairt.dtype_name(np.dtype("int8")), "int8")


class AbiDeclarationTest(unittest.TestCase):
    """Every function of qairt.h, qairt_import.h and qairt_export.h is declared in _ffi with matching types."""

    @classmethod
    def setUpClass(cls):
        cls.header_functions = set(abi_check.header_functions("qairt.h"))
        cls.by_header = {h: abi_check.header_functions(h) for h in FFI_HEADERS}

    def test_every_header_function_declared(self):
        self.assertGreater(len(self.header_functions), 70)
        all_declared = set(_ffi.DECLARED)
        all_headers = set().union(*self.by_header.values())
        self.assertEqual(all_headers - all_declared, set(), "header functions missing from _ffi")
        self.assertEqual(all_declared - all_headers, set(), "functions in _ffi not in the headers")
        for header, functions in self.by_header.items():
            self.assertEqual(set(_ffi.DECLARED_BY_HEADER[header]), functions, header)
        for name in all_declared:
            fn = getattr(_ffi, name)
            self.assertIsNotNone(fn.argtypes, name)

    def test_exports_list_matches(self):
        for header, exports in FFI_HEADERS.items():
            if not os.path.exists(exports):
                self.skipTest("no " + exports)
            with open(exports) as f:
                exported = {line.strip() for line in f if line.startswith("qairt_")}
            self.assertEqual(exported, set(_ffi.DECLARED_BY_HEADER[header]), exports)

    def test_status_functions_have_errcheck(self):
        fallible = set().union(*(abi_check.header_functions(h, status_only=True) for h in FFI_HEADERS))
        self.assertGreaterEqual(len(fallible), 40)
        for name in fallible:
            self.assertIs(getattr(_ffi, name).restype, _ffi.StatusP, name)
            self.assertIsNotNone(getattr(_ffi, name).errcheck, name)

    def test_struct_layouts_match_c(self):
        """sizeof/offsetof of each public struct, compiled C vs ctypes."""
        abi_check.assert_layouts_match_c(self, ["qairt.h", "qairt_import.h", "qairt_export.h"], {
            "qairt_graph_options": _ffi.GraphOptions, "qairt_tensor_desc": _ffi.TensorDesc,
            "qairt_attr": _ffi.Attr, "qairt_op_desc": _ffi.OpDesc, "qairt_diagnostic": _ffi.Diagnostic,
            "qairt_tensor_info": _ffi.TensorInfo, "qairt_op_info": _ffi.OpInfo,
            "qairt_import_options": _ffi.ImportOptions, "qairt_onnx_export_options": _ffi.OnnxExportOptions,
            "qairt_onnx_metadata_prop": _ffi.OnnxMetadataProp,
        })


# ---------------------------------------------------------------------------
# Graph construction and introspection
# ---------------------------------------------------------------------------

class GraphTest(unittest.TestCase):
    def setUp(self):
        self.g, self.ids = small_cnn()

    def tearDown(self):
        self.g.close()

    def test_counts_and_name(self):
        g = self.g
        self.assertEqual(g.name, "cnn")
        self.assertEqual(g.tensor_count, 6)
        self.assertEqual(g.op_count, 3)
        self.assertEqual(g.inputs, [self.ids["image"]])
        self.assertEqual(g.outputs, [g.find_tensor("out")])
        self.assertIn("cnn", repr(g))
        with qairt.Graph() as unnamed:
            self.assertEqual(unnamed.name, "graph")

    def test_valid_graph_validates(self):
        self.assertEqual(self.g.validate(), [])
        self.assertEqual(self.g.diagnostics(), [])
        self.assertTrue(self.g.is_valid())

    def test_tensor_info(self):
        g = self.g
        image = g.tensor("image")
        self.assertEqual(image.id, self.ids["image"])
        self.assertEqual(image.name, "image")
        self.assertEqual(image.dtype, "float32")
        self.assertEqual(image.role, "input")
        self.assertEqual(image.shape, ["batch", 3, 8, 8])
        self.assertIsNone(image.producer)
        self.assertEqual(image.consumers, [self.ids["conv"]])
        self.assertEqual(image.consumer_slots, [0])
        self.assertFalse(image.has_encoding)

        w = g.tensor(self.ids["w"])
        self.assertEqual(w.role, "static")
        self.assertEqual(w.shape, [4, 3, 3, 3])
        self.assertEqual(w.static_data_size, 108 * 4)
        self.assertFalse(w.static_data_borrowed)
        self.assertEqual(g.tensor("conv.b").consumer_slots, [2])
        self.assertEqual(g.tensor_data("conv.b"), f32_bytes([0.0, 0.1, 0.2, 0.3]))

        conv_out = g.tensor("conv.out")
        self.assertEqual(conv_out.role, "activation")
        self.assertEqual(conv_out.dtype, "float32")  # inferred
        self.assertEqual(conv_out.shape, ["batch", 4, 8, 8])  # inferred, symbol propagated
        self.assertEqual(conv_out.producer, self.ids["conv"])
        self.assertEqual(conv_out.producer_slot, 0)
        self.assertEqual(conv_out.consumers, [self.ids["relu"]])

        out = g.tensor("out")
        self.assertEqual(out.role, "output")
        self.assertEqual(out.shape, ["batch", 4, 4, 4])
        self.assertEqual(out.consumers, [])
        self.assertEqual([t.name for t in g.tensors()],
                         ["image", "conv.w", "conv.b", "conv.out", "relu.out", "out"])

    def test_op_info(self):
        g = self.g
        conv = g.op("conv")
        self.assertEqual(conv.id, self.ids["conv"])
        self.assertEqual(conv.type, "Conv2d")
        self.assertEqual(conv.name, "conv")
        self.assertEqual(conv.inputs, [self.ids["image"], self.ids["w"], self.ids["b"]])
        self.assertEqual(conv.outputs, [g.find_tensor("conv.out")])
        self.assertEqual(conv.attrs, {"pads": [1, 1, 1, 1], "strides": [1, 1]})
        self.assertEqual(conv.source_name, "/conv/Conv")
        self.assertEqual(conv.source_op_type, "Conv")
        relu = g.op(self.ids["relu"])
        self.assertIsNone(relu.source_name)
        self.assertEqual(relu.source_op_type, "Relu")
        self.assertEqual([o.name for o in g.ops()], ["conv", "relu", "pool"])
        self.assertEqual(g.find_op("pool"), self.ids["pool"])
        self.assertEqual(g.op_attr("pool", "kernel_shape"), [2, 2])

    def test_topological_order(self):
        g = qairt.Graph(name="topo")
        x = g.add_input("x", "float32", [2])
        # Ops added consumer-first: the order must still be producer-first.
        g.add_tensor("a")
        g.add_op("Relu", "second", ["a"], ["b"])
        g.add_op("Relu", "first", [x], ["a"])
        g.add_op("ElementWiseAdd", "third", ["a", "b"], ["c"])
        g.mark_output("c")
        self.assertEqual(g.topological_order(), [1, 0, 2])
        # "second" was added before "a" had a shape: re-run inference in order.
        self.assertIsNone(g.tensor("b").shape)
        g.infer_shapes()
        self.assertEqual(g.tensor("b").shape, [2])
        self.assertEqual(g.tensor("c").shape, [2])
        self.assertEqual(g.validate(), [])
        self.assertEqual(self.g.topological_order(), [0, 1, 2])
        g.close()

    def test_absent_optional_input(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [1, 3, 4, 4])
        g.add_constant("w", "float32", [2, 3, 1, 1], f32_bytes([1.0] * 6))
        op = g.add_op("Conv2d", "conv", [x, "w", None], ["y"])
        g.mark_output("y")
        self.assertEqual(g.op(op).inputs, [x, 1, None])
        self.assertEqual(g.tensor("y").shape, [1, 2, 4, 4])
        g.validate()
        # Rewire: set the absent bias, then remove it again.
        g.add_constant("bias", "float32", [2], f32_bytes([0.0, 1.0]))
        g.set_op_input(op, 2, "bias")
        self.assertEqual(g.op(op).inputs[2], g.find_tensor("bias"))
        g.set_op_input("conv", 2, None)
        self.assertIsNone(g.op(op).inputs[2])
        g.close()

    def test_outputs_given_as_existing_ids_and_names(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [3])
        y = g.add_tensor("y", "float32", [3])
        g.add_op("Relu", "r1", [x], [y])
        g.add_tensor("z")
        g.add_op("Relu", "r2", [y], ["z"])  # existing name: reused, not duplicated
        g.mark_output("z")
        self.assertEqual(g.tensor_count, 3)
        self.assertEqual(g.tensor("z").producer, 1)
        g.validate()
        g.close()

    def test_infer_shapes(self):
        g = qairt.Graph()
        x = g.add_input("x", "float16", [5, 7])
        g.add_op("Relu", "r", [x], ["y"])
        g.mark_output("y")
        g.infer_shapes()
        y = g.tensor("y")
        self.assertEqual((y.dtype, y.shape), ("float16", [5, 7]))
        g.close()

    def test_lookup_errors(self):
        with self.assertRaises(qairt.NotFoundError) as cm:
            self.g.find_tensor("nope")
        self.assertIn("nope", str(cm.exception))
        self.assertEqual(cm.exception.code, errors.NOT_FOUND)
        self.assertIsInstance(cm.exception, LookupError)
        with self.assertRaises(qairt.NotFoundError):
            self.g.find_op("nope")
        with self.assertRaises(qairt.NotFoundError):
            self.g.tensor(1000)
        with self.assertRaises(qairt.NotFoundError):
            self.g.op(1000)
        with self.assertRaises(qairt.NotFoundError):
            self.g.op_attr("conv", "no_such_attr")
        self.assertFalse(self.g.has_tensor("nope"))
        self.assertTrue(self.g.has_tensor("out"))


class AttributeTest(unittest.TestCase):
    def test_round_trip_every_type(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [2, 2])
        attrs = {
            "i": 7, "neg": -3, "big": 2**40, "f": 0.25, "s": "héllo", "flag": True, "off": False,
            "ints": [1, -2, 3], "floats": [0.5, -1.5], "mixed": [1, 2.5], "strs": ["a", "", "ü"],
            "empty": [], "tuple": (4, 5),
        }
        op = g.add_op("Relu", "r", [x], ["y"], attrs=attrs)
        got = g.op(op).attrs
        self.assertEqual(list(got), sorted(attrs))  # name order
        self.assertEqual(got["i"], 7)
        self.assertEqual(got["neg"], -3)
        self.assertEqual(got["big"], 2**40)
        self.assertEqual(got["f"], 0.25)
        self.assertIsInstance(got["f"], float)
        self.assertEqual(got["s"], "héllo")
        self.assertEqual(got["flag"], 1)  # bool -> INT
        self.assertEqual(got["off"], 0)
        self.assertEqual(got["ints"], [1, -2, 3])
        self.assertEqual(got["floats"], [0.5, -1.5])
        self.assertEqual(got["mixed"], [1.0, 2.5])  # ints mixed with floats -> FLOATS
        self.assertTrue(all(isinstance(v, float) for v in got["mixed"]))
        self.assertEqual(got["strs"], ["a", "", "ü"])
        self.assertEqual(got["empty"], [])
        self.assertEqual(got["tuple"], [4, 5])
        self.assertEqual(g.op_attr(op, "s"), "héllo")
        self.assertEqual(g.summary()["ops"][0]["attrs"]["strs"], ["a", "", "ü"])
        g.close()

    @unittest.skipIf(np is None, "numpy not available")
    def test_numpy_attribute_values(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [2])
        op = g.add_op("Relu", "r", [x], ["y"], attrs={
            "a": np.array([1, 2, 3], dtype=np.int32), "b": np.float32(0.5), "c": np.int64(9),
            "d": np.array([0.25, 0.5])})
        got = g.op(op).attrs
        self.assertEqual(got, {"a": [1, 2, 3], "b": 0.5, "c": 9, "d": [0.25, 0.5]})
        g.close()

    def test_bad_attribute_values(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [2])
        for bad in ({"a": [1, "x"]}, {"a": None}, {"a": {"k": 1}}, {"a": [[1]]}, {"a": b"raw"}):
            with self.assertRaises(qairt.InvalidArgumentError, msg=repr(bad)) as cm:
                g.add_op("Relu", "r", [x], ["y"], attrs=bad)
            self.assertIn("'a'", str(cm.exception))
        # Nothing was added by the failed calls.
        self.assertEqual((g.tensor_count, g.op_count), (1, 0))
        g.close()


class SymbolicShapeTest(unittest.TestCase):
    def test_symbols_unknowns_and_scalars(self):
        g = qairt.Graph()
        a = g.add_input("a", "float32", ["batch", 3, None, -1])
        self.assertEqual(g.tensor(a).shape, ["batch", 3, None, None])
        g.add_input("scalar", "int32", [])
        self.assertEqual(g.tensor("scalar").shape, [])
        t = g.add_tensor("unknown")
        info = g.tensor(t)
        self.assertIsNone(info.shape)
        self.assertIsNone(info.dtype)
        g.add_op("Relu", "r", [a], ["r.out"])
        self.assertEqual(g.tensor("r.out").shape, ["batch", 3, None, None])
        summary = g.summary()
        self.assertEqual(summary["inputs"][0]["shape"], ["batch", 3, None, None])
        self.assertEqual(summary["tensors"][t]["shape"], None)
        g.close()

    def test_symbol_broadcast(self):
        g = qairt.Graph()
        g.add_input("a", "float32", ["batch", "seq", 16])
        g.add_input("b", "float32", [1, 16])
        g.add_op("ElementWiseAdd", "add", ["a", "b"], ["c"])
        g.mark_output("c")
        self.assertEqual(g.tensor("c").shape, ["batch", "seq", 16])
        g.validate()
        g.close()

    def test_bad_shapes(self):
        g = qairt.Graph()
        for bad in ("abc", [1.5], [True], [""], 3):
            with self.assertRaises(qairt.InvalidArgumentError, msg=repr(bad)):
                g.add_input("x", "float32", bad)
        self.assertEqual(g.tensor_count, 0)
        g.close()


# ---------------------------------------------------------------------------
# Constants
# ---------------------------------------------------------------------------

class ConstantTest(unittest.TestCase):
    def test_bytes_like(self):
        g = qairt.Graph()
        data = f32_bytes([1.0, 2.0, 3.0, 4.0])
        for i, buf in enumerate([data, bytearray(data), memoryview(data), memoryview(bytearray(data)),
                                 memoryview(array.array("f", [1.0, 2.0, 3.0, 4.0]))]):
            t = g.add_constant("c%d" % i, "float32", [2, 2], buf)
            self.assertEqual(g.tensor_data(t), data, type(buf).__name__)
            self.assertEqual(g.tensor(t).static_data_size, 16)
        # A non-contiguous memoryview is copied into a contiguous buffer.
        src = bytearray(range(16))
        t = g.add_constant("strided", "uint8", [8], memoryview(src)[::2])
        self.assertEqual(g.tensor_data(t), bytes(range(0, 16, 2)))
        # Sub-byte types are packed: 5 int4 values -> 3 bytes.
        t = g.add_constant("packed", "int4", [5], b"\x21\x43\x05")
        self.assertEqual(g.tensor(t).static_data_size, 3)
        # Empty tensor.
        t = g.add_constant("empty", "float32", [0], b"")
        self.assertEqual(g.tensor_data(t), b"")
        g.close()

    def test_copy_is_independent_of_caller_buffer(self):
        g = qairt.Graph()
        buf = bytearray(f32_bytes([1.0, 2.0]))
        t = g.add_constant("c", "float32", [2], buf)
        buf[:] = bytes(8)
        self.assertEqual(g.tensor_data(t), f32_bytes([1.0, 2.0]))
        g.close()

    def test_borrowed_data(self):
        g = qairt.Graph()
        buf = bytearray(f32_bytes([1.0, 2.0]))
        t = g.add_constant("c", "float32", [2], buf, borrow=True)
        info = g.tensor(t)
        self.assertTrue(info.static_data_borrowed)
        buf[0:4] = f32_bytes([9.0])  # borrowed: the graph sees the change
        self.assertEqual(g.tensor_data(t), f32_bytes([9.0, 2.0]))
        del buf
        gc.collect()
        clone = g.clone()
        g.close()
        gc.collect()
        self.assertEqual(clone.tensor_data("c"), f32_bytes([9.0, 2.0]))  # kept alive by the clone
        clone.close()

    def test_wrong_data_size_rejected(self):
        g = qairt.Graph()
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            g.add_constant("w", "float32", [2, 2], b"\x00" * 15)
        self.assertIn("'w'", str(cm.exception))
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_constant("w", "float32", [2, 2], "not bytes")
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_constant("w", None, [2], b"12345678")
        self.assertEqual(g.tensor_count, 0)
        g.close()

    @unittest.skipIf(np is None, "numpy not available")
    def test_numpy_arrays(self):
        g = qairt.Graph()
        a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        t = g.add_constant("a", data=a)  # dtype and shape from the array
        info = g.tensor(t)
        self.assertEqual((info.dtype, info.shape), ("float32", [2, 3, 4]))
        self.assertEqual(g.tensor_data(t), a.tobytes())
        # Non-contiguous view (transpose) is made contiguous first.
        at = a.transpose(2, 1, 0)
        t = g.add_constant("at", data=at)
        self.assertEqual(g.tensor(t).shape, [4, 3, 2])
        self.assertEqual(g.tensor_data(t), np.ascontiguousarray(at).tobytes())
        # Explicit fixed-point dtype over int8 storage.
        q = np.array([-128, 0, 127], dtype=np.int8)
        t = g.add_constant("q", "sfixed_point_8", None, q)
        self.assertEqual((g.tensor(t).dtype, g.tensor(t).shape), ("sfixed_point_8", [3]))
        self.assertEqual(np.frombuffer(g.tensor_data(t), dtype=np.int8).tolist(), [-128, 0, 127])
        for dt in (np.float16, np.float64, np.int32, np.int64, np.uint8, np.bool_):
            arr = np.ones((2,), dtype=dt)
            t = g.add_constant("x_" + np.dtype(dt).name, data=arr)
            self.assertEqual(g.tensor(t).dtype, np.dtype(dt).name)
        scalar = g.add_constant("scalar", data=np.array(3.5, dtype=np.float32))
        self.assertEqual(g.tensor(scalar).shape, [])
        g.close()

    def test_works_without_numpy(self):
        """The binding imports and builds graphs when numpy cannot be imported."""
        code = (
            "import sys\n"
            "sys.modules['numpy'] = None  # makes 'import numpy' fail\n"
            "import qairt, array\n"
            "assert qairt._np is None\n"
            "g = qairt.Graph()\n"
            "x = g.add_input('x', 'float32', [2])\n"
            "g.add_constant('c', 'float32', [2], array.array('f', [1, 2]).tobytes())\n"
            "g.add_op('ElementWiseAdd', 'add', [x, 'c'], ['y'], attrs={'k': [1, 2]})\n"
            "g.mark_output('y')\n"
            "g.validate()\n"
            "g.set_encoding('c', qairt.Encoding.per_tensor('u8', 0.1))\n"
            "assert g.get_encoding('c').kind == 'per_tensor'\n"
            "print('OK', g.summary()['counts']['ops'])\n"
        )
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.join(REPO, "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("OK 1", r.stdout)


# ---------------------------------------------------------------------------
# Encodings
# ---------------------------------------------------------------------------

class EncodingTest(unittest.TestCase):
    def setUp(self):
        g = qairt.Graph(name="enc")
        self.g = g
        g.add_input("x", "float32", [1, 16])
        g.add_constant("w", "float32", [4, 16], f32_bytes([0.1] * 64))
        g.add_constant("idx", "int32", [1], array.array("i", [0]).tobytes())
        g.add_op("FullyConnected", "fc", ["x", "w"], ["y"])
        g.mark_output("y")

    def tearDown(self):
        self.g.close()

    def round_trip(self, tensor, enc):
        self.g.set_encoding(tensor, enc)
        self.assertTrue(self.g.tensor(tensor).has_encoding)
        got = self.g.get_encoding(tensor)
        self.assertEqual(got, enc)
        self.assertEqual(got, enc.roundtrip())
        self.g.validate()
        return got

    def test_per_tensor(self):
        enc = qairt.Encoding.per_tensor("ufixed_point_8", scale=0.05, offset=-128)
        got = self.round_trip("y", enc)
        self.assertEqual(got.kind, "per_tensor")
        self.assertEqual(got.dtype, "ufixed_point_8")
        self.assertEqual(got.effective_bitwidth, 8)
        self.assertEqual(got.scales, [f32(0.05)])
        self.assertEqual(got.offsets, [-128])
        self.assertIsNone(got.axis)
        self.assertFalse(got.overridden)

    def test_per_tensor_short_dtype_bitwidth_and_overridden(self):
        enc = qairt.Encoding.per_tensor("s16", scale=1e-3, offset=0, symmetry="symmetric", overridden=True)
        got = self.round_trip("x", enc)
        self.assertEqual(got.dtype, "sfixed_point_16")
        self.assertEqual(got.symmetry, "symmetric")
        self.assertTrue(got.overridden)
        enc4 = qairt.Encoding.per_tensor("s8", scale=0.5, offset=0, bitwidth=4, symmetry="strict_symmetric")
        got = self.round_trip("x", enc4)
        self.assertEqual(got.bitwidth, 4)
        self.assertEqual(got.effective_bitwidth, 4)
        self.assertEqual(got.symmetry, "strict_symmetric")
        enc_u = qairt.Encoding.per_tensor("u8", scale=0.5, offset=0, symmetry="unsigned_symmetric")
        self.assertEqual(self.round_trip("x", enc_u).symmetry, "unsigned_symmetric")

    def test_per_channel(self):
        enc = qairt.Encoding.per_channel("sfixed_point_8", axis=0, scales=[0.1, 0.2, 0.3, 0.4],
                                         symmetry="symmetric")
        got = self.round_trip("w", enc)
        self.assertEqual(got.kind, "per_channel")
        self.assertEqual(got.axis, 0)
        self.assertEqual(got.scales, [f32(v) for v in (0.1, 0.2, 0.3, 0.4)])
        self.assertEqual(got.offsets, [0, 0, 0, 0])
        enc1 = qairt.Encoding.per_channel("u8", axis=1, scales=[0.01 * (i + 1) for i in range(16)],
                                          offsets=[-i for i in range(16)])
        self.assertEqual(self.round_trip("w", enc1).offsets, [-i for i in range(16)])

    def test_per_block_int_offsets(self):
        # [4, 16] blocked along axis 1 in blocks of 8: grid 4 x 2 = 8 scales.
        enc = qairt.Encoding.per_block("u8", axis=1, block_sizes=[1, 8],
                                       scales=[0.1 * (i + 1) for i in range(8)],
                                       offsets=[-i for i in range(8)])
        got = self.round_trip("w", enc)
        self.assertEqual(got.kind, "per_block")
        self.assertEqual(got.block_sizes, [1, 8])
        self.assertEqual(got.offsets, [-i for i in range(8)])
        self.assertEqual(got.float_offsets, [])

    def test_per_block_float_offsets(self):
        enc = qairt.Encoding.per_block("sfixed_point_4", axis=1, block_sizes=[1, 4],
                                       scales=[0.5] * 16, float_offsets=[0.25 * i - 2 for i in range(16)])
        got = self.round_trip("w", enc)
        self.assertEqual(got.float_offsets, [0.25 * i - 2 for i in range(16)])
        self.assertEqual(got.offsets, [])
        self.assertEqual(got.dtype, "sfixed_point_4")

    def test_lpbq(self):
        # 4 channels (axis 0 kept), blocks of 4 along axis 1: 4 x 4 int scales, 4 float scales.
        enc = qairt.Encoding.lpbq("sfixed_point_4", axis=1, block_sizes=[1, 4], scales=[0.01, 0.02, 0.03, 0.04],
                                  block_int_scales=[1 + (i % 16) for i in range(16)], decompressed_bitwidth=8,
                                  symmetry="symmetric")
        got = self.round_trip("w", enc)
        self.assertEqual(got.kind, "lpbq")
        self.assertEqual(got.decompressed_bitwidth, 8)
        self.assertEqual(got.block_int_scales, [1 + (i % 16) for i in range(16)])
        self.assertEqual(got.block_sizes, [1, 4])
        self.assertEqual(got.axis, 1)

    def test_array_of(self):
        subs = [qairt.Encoding.per_channel("s8", axis=0, scales=[0.1 * (k + i + 1) for i in range(4)],
                                           symmetry="symmetric") for k in range(3)]
        enc = qairt.Encoding.array_of("sfixed_point_8", index_tensor="idx", sub_encodings=subs)
        got = self.round_trip("w", enc)
        self.assertEqual(got.kind, "array_of")
        self.assertEqual(got.index_tensor, "idx")
        self.assertEqual(len(got.sub_encodings), 3)
        self.assertEqual(got.sub_encodings[2], subs[2])
        self.assertEqual(got.sub_encodings[1].kind, "per_channel")
        summary_enc = self.g.summary()["tensors"][self.g.find_tensor("w")]["encoding"]
        self.assertEqual(summary_enc["kind"], "array_of")
        self.assertEqual(len(summary_enc["sub_encodings"]), 3)

    def test_float(self):
        for dt in ("float16", "float32", "bfloat16"):
            got = self.round_trip("y", qairt.Encoding.floating(dt))
            self.assertEqual((got.kind, got.dtype), ("float", dt))
            self.assertEqual(got.scales, [])

    def test_clear_and_replace(self):
        self.assertIsNone(self.g.get_encoding("y"))
        self.g.set_encoding("y", qairt.Encoding.per_tensor("u8", 0.1))
        self.g.set_encoding("y", qairt.Encoding.per_tensor("u16", 0.2))  # replaces
        self.assertEqual(self.g.get_encoding("y").dtype, "ufixed_point_16")
        self.g.clear_encoding("y")
        self.assertIsNone(self.g.get_encoding("y"))
        self.assertFalse(self.g.tensor("y").has_encoding)

    def test_equality_semantics(self):
        a = qairt.Encoding.per_tensor("s8", 0.1)
        self.assertEqual(a, qairt.Encoding.per_tensor("sfixed_point_8", f32(0.1), bitwidth=8))
        self.assertNotEqual(a, qairt.Encoding.per_tensor("s8", 0.1, offset=1))
        self.assertNotEqual(a, qairt.Encoding.per_tensor("s8", 0.1, overridden=True))
        self.assertNotEqual(a, "per_tensor")

    def assert_rejected(self, tensor, enc, *fragments):
        before = self.g.get_encoding(tensor)
        with self.assertRaises(qairt.ValidationError) as cm:
            self.g.set_encoding(tensor, enc)
        e = cm.exception
        self.assertEqual(e.code, errors.VALIDATION_FAILED)
        self.assertIn("'%s'" % tensor, e.message)  # names the tensor
        for frag in fragments:
            self.assertIn(frag, e.message)  # ... and the field
        self.assertEqual(self.g.get_encoding(tensor), before)  # nothing attached
        return e

    def test_invalid_encodings_rejected(self):
        self.assert_rejected("y", qairt.Encoding.per_tensor("u8", 0.0), "scale")
        self.assert_rejected("y", qairt.Encoding.per_tensor("u8", -1.0), "scale")
        self.assert_rejected("y", qairt.Encoding.per_tensor("u8", float("nan")), "scale")
        self.assert_rejected("y", qairt.Encoding.per_tensor("u8", float("inf")), "scale")
        self.assert_rejected("y", qairt.Encoding.per_tensor("u8", 0.1, offset=5), "offsets[0]")
        self.assert_rejected("y", qairt.Encoding(kind="per_tensor", dtype="u8", scales=[0.1, 0.2]), "scales")
        self.assert_rejected("w", qairt.Encoding.per_channel("s8", axis=0, scales=[0.1, 0.2, 0.0, 0.4]),
                             "scales[2]")
        self.assert_rejected("w", qairt.Encoding.per_channel("s8", axis=0, scales=[0.1] * 3), "scales")
        self.assert_rejected("w", qairt.Encoding.per_channel("s8", axis=5, scales=[0.1] * 4), "axis")
        self.assert_rejected("w", qairt.Encoding.per_block("u8", axis=1, block_sizes=[1, 5], scales=[0.1] * 16),
                             "block_sizes[1]")
        self.assert_rejected("w", qairt.Encoding.lpbq("s4", axis=1, block_sizes=[1, 4], scales=[0.1] * 4,
                                                      block_int_scales=[17] * 16, decompressed_bitwidth=8),
                             "block_int_scales[0]")
        self.assert_rejected("w", qairt.Encoding.array_of("s8", "idx", []), "sub_encodings")
        self.assert_rejected("y", qairt.Encoding.floating("int8"), "dtype")
        self.assert_rejected("w", qairt.Encoding.array_of(
            "s8", "idx", [qairt.Encoding.per_channel("s8", 0, [0.1, 0.1, -0.1, 0.1])]),
            "sub_encodings[0]", "scales[2]")

    def test_invalid_python_side_values(self):
        with self.assertRaises(qairt.InvalidArgumentError):
            self.g.set_encoding("y", qairt.Encoding(kind="per_row", dtype="u8", scales=[1.0]))
        with self.assertRaises(qairt.InvalidArgumentError):
            self.g.set_encoding("y", qairt.Encoding(kind="per_tensor", dtype="u8", scales=[1.0], symmetry="odd"))
        with self.assertRaises(qairt.InvalidArgumentError):
            self.g.set_encoding("y", {"kind": "per_tensor"})
        with self.assertRaises(qairt.QairtError):
            self.g.set_encoding("y", qairt.Encoding(kind="per_tensor", dtype="nope", scales=[1.0]))
        with self.assertRaises(qairt.InvalidArgumentError):  # bitwidth beyond the dtype's (rejected on create)
            self.g.set_encoding("y", qairt.Encoding.per_tensor("u8", 0.1, bitwidth=9))
        with self.assertRaises(qairt.NotFoundError):
            self.g.set_encoding("no_such_tensor", qairt.Encoding.per_tensor("u8", 0.1))
        self.assertIsNone(self.g.get_encoding("y"))


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

class ValidationTest(unittest.TestCase):
    def test_every_injected_defect_reported(self):
        g = qairt.Graph(name="broken")
        x = g.add_input("x", "float32", [2, 3])
        g.add_input("x", "float32", [2, 3])                       # duplicate tensor name
        g.add_op("Relu", "r", [x], ["a"])
        g.add_op("Relu", "r", ["a"], ["b"])                      # duplicate op name
        g.add_op("NoSuchOp", "mystery", [x], ["c"])              # unknown op type
        g.add_tensor("ghost")
        g.add_op("Relu", "reads_ghost", ["ghost"], ["d"])        # dangling tensor
        g.add_tensor("orphan")                                   # missing producer
        g.add_op("Relu", "two_in", [x, x], ["e"])                # arity
        g.add_constant("w", "float32", [2, 3, 1, 1], f32_bytes([1.0] * 6))
        g.add_op("Conv2d", "no_weight", ["x", None], ["f"])      # required input absent
        g.add_input("m", "float32", [4, 5])
        g.add_op("ElementWiseAdd", "bad_add", ["x", "m"], ["h"])  # shape mismatch
        g.add_tensor("p")
        g.add_op("Relu", "cyc1", ["p"], ["q"])                   # cycle p -> q -> p
        g.add_op("Relu", "cyc2", ["q"], ["p"])
        g.add_op("Relu", "writes_input", ["a"], ["m"])           # writes a graph input
        g.mark_output("b")

        with self.assertRaises(qairt.ValidationError) as cm:
            g.validate()
        err = cm.exception
        self.assertEqual(err.code, errors.VALIDATION_FAILED)
        self.assertIn("broken", err.message)
        kinds = [d.kind for d in err.diagnostics]
        for kind in ("duplicate_tensor_name", "duplicate_op_name", "unknown_op_type", "dangling_tensor",
                     "missing_producer", "arity", "shape_mismatch", "cycle", "multiple_producers"):
            self.assertIn(kind, kinds)
        self.assertTrue(all(d.severity == "error" for d in err.diagnostics))
        # Every diagnostic is also a line of the status message.
        for d in err.diagnostics:
            self.assertIn(d.message, err.message)

        def find(kind, **where):
            for d in err.diagnostics:
                if d.kind == kind and all(getattr(d, k) == v for k, v in where.items()):
                    return d
            self.fail("no %s diagnostic with %r in %r" % (kind, where, err.diagnostics))

        d = find("duplicate_tensor_name", tensor=1)
        self.assertIn("'x'", d.message)
        self.assertEqual(d.field, "name")
        d = find("duplicate_op_name", op=1)
        self.assertIn("'r'", d.message)
        d = find("unknown_op_type", op=g.find_op("mystery"))
        self.assertIn("NoSuchOp", d.message)
        d = find("dangling_tensor", tensor=g.find_tensor("ghost"))
        self.assertEqual(d.op, g.find_op("reads_ghost"))
        self.assertEqual(d.field, "inputs[0]")
        find("missing_producer", tensor=g.find_tensor("orphan"))
        find("arity", op=g.find_op("two_in"))
        d = find("arity", op=g.find_op("no_weight"), field="inputs[1]")
        find("shape_mismatch", op=g.find_op("bad_add"))
        find("multiple_producers", tensor=g.find_tensor("m"))
        self.assertRegex(find("cycle").message, "cyc1|cyc2")

        # diagnostics() returns the same list without raising.
        self.assertEqual(g.diagnostics(), err.diagnostics)
        self.assertFalse(g.is_valid())
        with self.assertRaises(qairt.ValidationError):
            g.topological_order()  # cycle
        g.close()

    def test_no_outputs(self):
        g = qairt.Graph(name="empty")
        with self.assertRaises(qairt.ValidationError) as cm:
            g.validate()
        self.assertEqual([d.kind for d in cm.exception.diagnostics], ["no_outputs"])
        self.assertEqual(cm.exception.diagnostics[0].field, "outputs")
        g.close()


# ---------------------------------------------------------------------------
# Summary, clone, compare, lifetime, errors
# ---------------------------------------------------------------------------

class SummaryTest(unittest.TestCase):
    def test_summary_content(self):
        g, ids = small_cnn()
        g.set_encoding("conv.w", qairt.Encoding.per_channel("s8", 0, [0.1, 0.2, 0.3, 0.4], symmetry="symmetric"))
        g.set_encoding("relu.out", qairt.Encoding.per_tensor("u8", 0.02))
        text = g.summary_json()
        self.assertIsInstance(text, str)
        s = g.summary()
        self.assertEqual(s, json.loads(text))
        self.assertEqual(g.summary_json(), text)  # deterministic
        self.assertEqual(s["name"], "cnn")
        self.assertEqual(s["counts"], {"tensors": 6, "ops": 3, "inputs": 1, "outputs": 1, "static_tensors": 2,
                                       "static_bytes": 108 * 4 + 16, "encoded_tensors": 2})
        self.assertEqual(s["op_types"], {"Conv2d": 1, "PoolMax2d": 1, "Relu": 1})
        self.assertEqual(s["inputs"], [{"name": "image", "dtype": "float32", "shape": ["batch", 3, 8, 8]}])
        self.assertEqual(s["outputs"], [{"name": "out", "dtype": "float32", "shape": ["batch", 4, 4, 4]}])
        w = s["tensors"][ids["w"]]
        self.assertEqual((w["name"], w["role"], w["static_bytes"]), ("conv.w", "STATIC", 432))
        self.assertEqual(w["encoding"]["kind"], "per_channel")
        self.assertEqual(w["encoding"]["axis"], 0)
        self.assertEqual(w["encoding"]["symmetry"], "symmetric")
        self.assertEqual(len(w["encoding"]["scales"]), 4)
        self.assertEqual(s["tensors"][g.find_tensor("relu.out")]["encoding"]["dtype"], "ufixed_point_8")
        self.assertIsNone(s["tensors"][ids["image"]]["encoding"])
        conv = s["ops"][ids["conv"]]
        self.assertEqual(conv["type"], "Conv2d")
        self.assertEqual(conv["inputs"], ["image", "conv.w", "conv.b"])
        self.assertEqual(conv["outputs"], ["conv.out"])
        self.assertEqual(conv["attrs"], {"pads": [1, 1, 1, 1], "strides": [1, 1]})
        self.assertEqual(conv["source_op_type"], "Conv")
        g.close()

    def test_large_summary(self):
        # Query-then-fill with a result far beyond any fixed buffer.
        g = qairt.Graph(name="big")
        prev = g.add_input("x", "float32", [1, 8])
        for i in range(300):
            g.add_op("Relu", "relu_%d" % i, [prev], ["t_%d" % i], attrs={"note": "n" * 50})
            prev = "t_%d" % i
        g.mark_output(prev)
        s = g.summary()
        self.assertEqual(s["counts"]["ops"], 300)
        self.assertGreater(len(g.summary_json()), 30000)
        self.assertEqual(len(g.topological_order()), 300)
        g.close()


class CloneCompareTest(unittest.TestCase):
    def test_clone_and_compare(self):
        g, ids = small_cnn()
        g.set_encoding("conv.w", qairt.Encoding.per_channel("s8", 0, [0.1] * 4))
        c = g.clone()
        self.assertEqual(c, g)
        self.assertEqual(g.compare(c), (True, ""))
        self.assertIsNot(c.handle, g.handle)
        self.assertEqual(copy.copy(g), g)
        self.assertEqual(copy.deepcopy(g), g)

        # The clone is independent.
        c.set_encoding("conv.w", qairt.Encoding.per_channel("s8", 0, [0.2] * 4))
        equal, diff = g.compare(c)
        self.assertFalse(equal)
        self.assertIn("conv.w", diff)
        self.assertNotEqual(g, c)
        self.assertEqual(g.get_encoding("conv.w").scales, [f32(0.1)] * 4)

        d = g.clone()
        d.add_op("Relu", "extra", ["out"], ["out2"])
        self.assertFalse(g.compare(d)[0])
        self.assertTrue(g.compare(d)[1])
        e = g.clone()
        g.close()
        self.assertEqual(e.tensor("conv.out").shape, ["batch", 4, 8, 8])  # survives the original
        e.validate()
        for x in (c, d, e):
            x.close()

    def test_compare_detects_attrs_and_data(self):
        def make(stride, value):
            g = qairt.Graph(name="m")
            x = g.add_input("x", "float32", [1, 1, 4, 4])
            g.add_constant("w", "float32", [1, 1, 1, 1], f32_bytes([value]))
            g.add_op("Conv2d", "c", [x, "w"], ["y"], attrs={"strides": [stride, stride]})
            g.mark_output("y")
            return g

        a, b, c = make(1, 1.0), make(2, 1.0), make(1, 2.0)
        self.assertEqual(a, make(1, 1.0))
        eq, diff = a.compare(b)
        self.assertFalse(eq)
        self.assertTrue(diff)
        eq, diff = a.compare(c)
        self.assertFalse(eq)
        self.assertIn("w", diff)
        self.assertFalse(a == "graph")
        with self.assertRaises(qairt.InvalidArgumentError):
            a.compare("graph")
        truncated = a.compare(b, max_diff=8)[1]
        self.assertLessEqual(len(truncated), 8)


class LifetimeAndErrorTest(unittest.TestCase):
    def test_context_manager_and_close(self):
        with qairt.Graph(name="ctx") as g:
            g.add_input("x", "float32", [1])
            self.assertFalse(g.closed)
        self.assertTrue(g.closed)
        g.close()  # idempotent
        self.assertIn("closed", repr(g))
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_input("y", "float32", [1])
        with self.assertRaises(qairt.InvalidArgumentError):
            _ = g.name

    def test_many_graphs_freed(self):
        for i in range(200):
            g, _ = small_cnn()
            g.set_encoding("conv.w", qairt.Encoding.per_channel("s8", 0, [0.1] * 4))
            g.get_encoding("conv.w")
            g.diagnostics()
            if i % 2:
                g.close()
            del g
        gc.collect()

    def test_error_classes(self):
        cases = {
            errors.INVALID_ARGUMENT: qairt.InvalidArgumentError, errors.NOT_FOUND: qairt.NotFoundError,
            errors.UNSUPPORTED: qairt.UnsupportedError, errors.PARSE_ERROR: qairt.ParseError,
            errors.OUT_OF_MEMORY: qairt.OutOfMemoryError, errors.INTERNAL: qairt.InternalError,
            errors.VALIDATION_FAILED: qairt.ValidationError, errors.IO_ERROR: qairt.IoError,
            errors.BUFFER_TOO_SMALL: qairt.BufferTooSmallError,
        }
        for code, cls in cases.items():
            e = errors.from_code(code, "msg %d" % code, "qairt_fn")
            self.assertIs(type(e), cls)
            self.assertIsInstance(e, qairt.QairtError)
            self.assertEqual((e.code, e.message, str(e), e.function), (code, "msg %d" % code, "msg %d" % code,
                                                                       "qairt_fn"))
        self.assertIs(type(errors.from_code(99, "x")), qairt.QairtError)
        self.assertEqual(qairt.ValidationError("x").diagnostics, [])

    def test_library_errors_map_to_exceptions(self):
        g = qairt.Graph()
        x = g.add_input("x", "float32", [2])
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            g.add_constant("c", "float32", [3], b"\x00" * 4)
        self.assertEqual(cm.exception.code, errors.INVALID_ARGUMENT)
        self.assertEqual(cm.exception.function, "qairt_graph_add_constant")
        self.assertIn("'c'", cm.exception.message)
        with self.assertRaises(qairt.NotFoundError) as cm:
            g.mark_output(77)
        self.assertEqual(cm.exception.function, "qairt_graph_mark_output")
        with self.assertRaises(qairt.QairtError):
            g.set_op_input(0, 0, x)  # no op 0
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_op("Relu", "r", [x, 12345], ["y"])  # bad input id
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_op("Relu", "", [x], ["y"])  # empty op name
        with self.assertRaises(qairt.InvalidArgumentError):
            g.add_input("", "float32", [1])
        with self.assertRaises(qairt.InvalidArgumentError):
            g.find_tensor(5.5)
        # The error carries the library's message verbatim and the status was freed.
        with self.assertRaises(qairt.QairtError) as cm:
            qairt.dtype_name("nope")
        self.assertIn("nope", cm.exception.message)
        g.close()


# ---------------------------------------------------------------------------
# onnx in the same process, examples
# ---------------------------------------------------------------------------

@unittest.skipIf(onnx is None or np is None, "python3-onnx not available")
class OnnxCoexistenceTest(unittest.TestCase):
    """onnx (and its protobuf) was imported before qairt; both keep working."""

    def test_onnx_model_to_qairt(self):
        self.assertIn("onnx", sys.modules)
        w = onnx_numpy_helper.from_array(np.full((4, 3, 3, 3), 0.5, dtype=np.float32), name="W")
        nodes = [
            onnx_helper.make_node("Conv", ["X", "W"], ["C"], name="conv0", pads=[1, 1, 1, 1], strides=[1, 1]),
            onnx_helper.make_node("Relu", ["C"], ["Y"], name="relu0"),
        ]
        graph = onnx_helper.make_graph(
            nodes, "tiny",
            [onnx_helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, ["N", 3, 8, 8])],
            [onnx_helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, ["N", 4, 8, 8])], initializer=[w])
        model = onnx_helper.make_model(graph)
        onnx.checker.check_model(model)
        model = onnx.load_from_string(model.SerializeToString())

        # A toy importer: ONNX node -> qairt op, initializers as constants.
        op_map = {"Conv": "Conv2d", "Relu": "Relu"}
        with qairt.Graph(name=model.graph.name) as g:
            for vi in model.graph.input:
                dims = [d.dim_param if d.dim_param else d.dim_value for d in vi.type.tensor_type.shape.dim]
                g.add_input(vi.name, "float32", dims)
            for init in model.graph.initializer:
                g.add_constant(init.name, data=onnx_numpy_helper.to_array(init))
            for node in model.graph.node:
                attrs = {a.name: onnx_helper.get_attribute_value(a) for a in node.attribute}
                g.add_op(op_map[node.op_type], node.name, list(node.input), list(node.output), attrs=attrs,
                         source_name=node.name, source_op_type=node.op_type)
            for vi in model.graph.output:
                g.mark_output(vi.name)
            g.validate()
            self.assertEqual(g.tensor("Y").shape, ["N", 4, 8, 8])
            self.assertEqual(g.op("conv0").source_op_type, "Conv")
            self.assertEqual(g.op("conv0").attrs["pads"], [1, 1, 1, 1])
        # onnx still fine after qairt did its work.
        onnx.checker.check_model(model)
        self.assertEqual(onnx.helper.printable_graph(model.graph).count("Conv"), 1)


def _example_env():
    paths = [os.path.join(REPO, "python")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(paths))


class ExampleTest(unittest.TestCase):
    def test_python_example_runs(self):
        script = os.path.join(REPO, "examples", "build_graph.py")
        r = subprocess.run([sys.executable, script], env=_example_env(), cwd=REPO,
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = r.stdout
        self.assertIn("small_cnn", out)
        for t in ("Conv2d", "Relu", "PoolMax2d", "Reshape", "FullyConnected", "Softmax"):
            self.assertIn(t, out)
        self.assertIn("image float32 [batch, 3, 32, 32]", out)
        self.assertIn("probs float32 [batch, 10]", out)
        self.assertIn("conv1.weight: per_channel sfixed_point_8", out)
        self.assertIn("relu1.out: per_tensor ufixed_point_8", out)
        self.assertEqual(r.stderr, "")

    def test_c_example_runs(self):
        lib = os.environ.get("QAIRT_LIBRARY")
        exe = os.path.join(os.path.dirname(lib), "example_build_graph") if lib else None
        if not exe or not os.access(exe, os.X_OK):
            self.skipTest("example_build_graph not built next to QAIRT_LIBRARY")
        r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        start = r.stdout.index("{")
        summary = json.loads(r.stdout[start:r.stdout.rindex("}") + 1])
        self.assertEqual(summary["name"], "small_cnn")
        self.assertEqual(summary["counts"]["encoded_tensors"], 2)
        self.assertEqual(summary["outputs"][0]["shape"], ["batch", 10])


class MappedConstantTest(unittest.TestCase):
    def test_constant_is_mapped_from_file(self):
        values = struct.pack("<4f", 1.0, -2.0, 3.0, 0.5)
        with tempfile.NamedTemporaryFile(delete=False) as f:
            f.write(b"HEADER__" + values)
            path = f.name
        try:
            with qairt.Graph(name="mapped") as g:
                t = g.add_constant_from_file("w", "float32", [4], path, offset=8)
                self.assertEqual(g.tensor_data(t), values)
                with self.assertRaises(qairt.QairtError) as cm:
                    g.add_constant_from_file("w2", "float32", [4], path, offset=16, length=16)
                self.assertIn(path, str(cm.exception))
        finally:
            os.unlink(path)


if __name__ == "__main__":
    unittest.main()
