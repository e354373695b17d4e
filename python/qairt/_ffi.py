"""Low-level ctypes declarations for libqairt (include/qairt/qairt.h).

Every function of the header is declared here with its exact argtypes and
restype, so a wrong call raises a ctypes.ArgumentError instead of corrupting
memory. Every function returning ``qairt_status_t*`` gets an ``errcheck`` that
converts a non-NULL status into a Python exception (see ``errors.py``) after
freeing the status, so no caller can leak one.

This module is private: use the classes in ``qairt`` instead.
"""

import ctypes
import ctypes.util
import glob
import os
import sys

from . import errors

ABI_MAJOR = 1  # QAIRT_ABI_MAJOR this binding was written against
ABI_MINOR = 5
INVALID_ID = 0xFFFFFFFF
CONSTANT_BORROW = 1

# --------------------------------------------------------------------------
# C types
# --------------------------------------------------------------------------

c_size_t = ctypes.c_size_t
c_uint32 = ctypes.c_uint32
c_int32 = ctypes.c_int32
c_int64 = ctypes.c_int64
c_uint64 = ctypes.c_uint64
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
POINTER = ctypes.POINTER


class Status(ctypes.Structure):
    """Opaque qairt_status_t."""


class GraphHandle(ctypes.Structure):
    """Opaque qairt_graph_t."""


class EncodingHandle(ctypes.Structure):
    """Opaque qairt_encoding_t."""


class DiagnosticsHandle(ctypes.Structure):
    """Opaque qairt_diagnostics_t."""


StatusP = POINTER(Status)
GraphP = POINTER(GraphHandle)
EncodingP = POINTER(EncodingHandle)
DiagnosticsP = POINTER(DiagnosticsHandle)

qairt_tensor_id = c_uint32
qairt_op_id = c_uint32
qairt_code_t = c_int32
qairt_dtype_t = c_uint32
qairt_tensor_role_t = c_uint32
qairt_attr_type_t = c_uint32
qairt_encoding_kind_t = c_uint32
qairt_symmetry_t = c_uint32
qairt_severity_t = c_uint32
qairt_diag_kind_t = c_uint32


class GraphOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("name", c_char_p),
    ]


class TensorDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("dtype", qairt_dtype_t),
        ("name", c_char_p),
        ("rank", c_size_t),
        ("dims", POINTER(c_int64)),
        ("dim_symbols", POINTER(c_char_p)),
        ("rank_known", c_uint32),
        ("reserved", c_uint32),
    ]


class Attr(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("type", qairt_attr_type_t),
        ("reserved", c_uint32),
        ("count", c_size_t),
        ("data", c_void_p),
    ]


class OpDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("type", c_char_p),
        ("name", c_char_p),
        ("num_inputs", c_size_t),
        ("inputs", POINTER(qairt_tensor_id)),
        ("num_outputs", c_size_t),
        ("outputs", POINTER(qairt_tensor_id)),
        ("num_attrs", c_size_t),
        ("attrs", POINTER(Attr)),
        ("source_name", c_char_p),
        ("source_op_type", c_char_p),
    ]


class Diagnostic(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("severity", qairt_severity_t),
        ("kind", qairt_diag_kind_t),
        ("op", qairt_op_id),
        ("tensor", qairt_tensor_id),
        ("reserved", c_uint32),
        ("field", c_char_p),
        ("message", c_char_p),
        # 1.8
        ("code", c_char_p),
        ("file", c_char_p),
        ("line", c_uint32),
        ("column", c_uint32),
        ("op_name", c_char_p),
        ("tensor_name", c_char_p),
        ("suggestion", c_char_p),
    ]


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("dtype", qairt_dtype_t),
        ("name", c_char_p),
        ("role", qairt_tensor_role_t),
        ("rank_known", c_uint32),
        ("rank", c_size_t),
        ("dims", POINTER(c_int64)),
        ("producer", qairt_op_id),
        ("producer_slot", c_uint32),
        ("num_consumers", c_size_t),
        ("has_encoding", c_uint32),
        ("static_data_borrowed", c_uint32),
        ("static_data_size", c_size_t),
    ]


class OpInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("reserved", c_uint32),
        ("type", c_char_p),
        ("name", c_char_p),
        ("source_name", c_char_p),
        ("source_op_type", c_char_p),
        ("num_inputs", c_size_t),
        ("inputs", POINTER(qairt_tensor_id)),
        ("num_outputs", c_size_t),
        ("outputs", POINTER(qairt_tensor_id)),
        ("num_attrs", c_size_t),
    ]



class ImportReportHandle(ctypes.Structure):
    """Opaque qairt_import_report_t (qairt_import.h)."""


ImportReportP = POINTER(ImportReportHandle)


class ImportOptions(ctypes.Structure):
    """qairt_import_options (qairt_import.h)."""
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("num_define_symbols", c_size_t),
        ("define_symbol_names", POINTER(c_char_p)),
        ("define_symbol_values", POINTER(c_int64)),
        ("num_input_dims", c_size_t),
        ("input_dim_names", POINTER(c_char_p)),
        ("input_dim_ranks", POINTER(c_size_t)),
        ("input_dims", POINTER(POINTER(c_int64))),
    ]


IMPORT_NO_BATCHNORM_FOLD = 1
IMPORT_REQUIRE_STATIC = 2
IMPORT_INT64_TO_INT32 = 4  # since ABI 1.6


class OnnxExportOptions(ctypes.Structure):
    """qairt_onnx_export_options (qairt_export.h)."""
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("opset", c_int64),
        ("producer_name", c_char_p),
        ("graph_name", c_char_p),
        ("num_metadata_props", c_size_t),
        ("metadata_props", c_void_p),  # const qairt_onnx_metadata_prop*
        ("external_data_threshold", ctypes.c_uint64),  # since ABI 1.10
        ("external_data_name", c_char_p),
    ]


class OnnxMetadataProp(ctypes.Structure):
    """qairt_onnx_metadata_prop (qairt_export.h)."""
    _fields_ = [("key", c_char_p), ("value", c_char_p)]


EXPORT_VALUE_INFO = 1
EXPORT_QDQ_MS_DOMAIN = 2
EXPORT_EXTERNAL_DATA = 4  # since ABI 1.10
# qairt_write_fn: int32_t (*)(void* user_data, const void* data, size_t size)
WriteFn = ctypes.CFUNCTYPE(c_int32, c_void_p, c_void_p, c_size_t)

def new_struct(cls):
    """An instance of a public struct with struct_size set (as the *_init do)."""
    s = cls()
    if "struct_size" in dict(cls._fields_):
        s.struct_size = ctypes.sizeof(cls)
    return s


# --------------------------------------------------------------------------
# Locating and loading the library
# --------------------------------------------------------------------------

def _candidate_paths():
    env = os.environ.get("QAIRT_LIBRARY")
    if env:
        # An explicit choice is final: do not silently load another library.
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    paths = []
    # `cmake --install` records the library it installed beside the package;
    # pip copies that record along with the package.
    try:
        from . import _installed_library
        paths.append(_installed_library.LIBRARY)
    except ImportError:
        pass
    paths.append(os.path.normpath(os.path.join(here, "..", "..", "build", "libqairt.so")))
    # Installed (cmake --install): PREFIX/share/qairt/python/qairt beside
    # PREFIX/lib[/<multiarch>]/libqairt.so.<major>.
    prefix = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
    for libdir in [os.path.join(prefix, "lib")] + sorted(glob.glob(os.path.join(prefix, "lib", "*-linux-gnu"))):
        paths.append(os.path.join(libdir, "libqairt.so.%d" % ABI_MAJOR))
    # A package installed apart from the library: the standard folders.
    for root in dict.fromkeys([sys.prefix, "/usr/local", "/usr"]):
        for libdir in [os.path.join(root, "lib")] + sorted(glob.glob(os.path.join(root, "lib", "*-linux-gnu"))):
            paths.append(os.path.join(libdir, "libqairt.so.%d" % ABI_MAJOR))
    found = ctypes.util.find_library("qairt")
    if found:
        paths.append(found)
    return paths, False


def _load():
    paths, explicit = _candidate_paths()
    errs = []
    for path in paths:
        if not explicit and os.sep in path and not os.path.exists(path):
            errs.append("%s: no such file" % path)
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errs.append("%s: %s" % (path, e))
    hint = ("set QAIRT_LIBRARY to the full path of libqairt.so, or build the "
            "library into <repo>/build")
    if explicit:
        raise ImportError("qairt: cannot load QAIRT_LIBRARY=%s (%s)" % (paths[0], "; ".join(errs)))
    raise ImportError("qairt: libqairt.so not found (tried %s); %s" % ("; ".join(errs) or "nothing", hint))


lib, library_path = _load()


# --------------------------------------------------------------------------
# Status handling
# --------------------------------------------------------------------------

def _status_errcheck(result, func, args):
    if result:  # non-NULL qairt_status_t*
        try:
            code = lib.qairt_status_code(result)
            raw = lib.qairt_status_message(result)
            message = raw.decode("utf-8", "replace") if raw else ""
        finally:
            lib.qairt_status_free(result)
        raise errors.from_code(code, message, func.__name__)
    return args


def _declare(name, restype, argtypes):
    fn = getattr(lib, name)  # AttributeError here = symbol missing from the library
    fn.restype = restype
    fn.argtypes = argtypes
    if restype is StatusP:
        fn.errcheck = _status_errcheck
    return fn


def _declare_header(decls, what, header, abi_minor):
    """{name: function} of a header's declarations, for a module that resolves them on first use:
    UnsupportedError naming `what`, the header and both ABI versions when the library lacks one."""
    try:
        return {name: _declare(name, restype, argtypes) for name, restype, argtypes in decls}
    except AttributeError as e:
        abi = lib.qairt_abi_version()
        raise errors.UnsupportedError(
            "%s needs libqairt ABI %d.%d (%s); %s has ABI %d.%d: %s"
            % (what, ABI_MAJOR, abi_minor, header, library_path, abi >> 16, abi & 0xFFFF, e),
            code=errors.UNSUPPORTED) from None


_P = POINTER
_DECLS = [
    # Version and status
    ("qairt_abi_version", c_uint32, []),
    ("qairt_version_string", c_char_p, []),
    ("qairt_status_code", qairt_code_t, [StatusP]),
    ("qairt_status_message", c_char_p, [StatusP]),
    ("qairt_status_free", None, [StatusP]),
    # Data types and op vocabulary
    ("qairt_dtype_name", c_char_p, [qairt_dtype_t]),
    ("qairt_dtype_short_name", c_char_p, [qairt_dtype_t]),
    ("qairt_dtype_bitwidth", c_uint32, [qairt_dtype_t]),
    ("qairt_dtype_from_name", StatusP, [c_char_p, _P(qairt_dtype_t)]),
    ("qairt_op_type_count", c_size_t, []),
    ("qairt_op_type_name", c_char_p, [c_size_t]),
    # Graph construction
    ("qairt_graph_options_init", None, [_P(GraphOptions)]),
    ("qairt_graph_create", StatusP, [_P(GraphOptions), _P(GraphP)]),
    ("qairt_graph_clone", StatusP, [GraphP, _P(GraphP)]),
    ("qairt_graph_destroy", None, [GraphP]),
    ("qairt_tensor_desc_init", None, [_P(TensorDesc)]),
    ("qairt_graph_add_input", StatusP, [GraphP, _P(TensorDesc), _P(qairt_tensor_id)]),
    ("qairt_graph_add_constant", StatusP,
     [GraphP, _P(TensorDesc), c_void_p, c_size_t, c_uint32, _P(qairt_tensor_id)]),
    ("qairt_graph_add_constant_mapped", StatusP,
     [GraphP, _P(TensorDesc), c_char_p, c_uint64, c_uint64, _P(qairt_tensor_id)]),
    ("qairt_graph_add_tensor", StatusP, [GraphP, _P(TensorDesc), _P(qairt_tensor_id)]),
    ("qairt_graph_mark_output", StatusP, [GraphP, qairt_tensor_id]),
    ("qairt_op_desc_init", None, [_P(OpDesc)]),
    ("qairt_graph_add_op", StatusP, [GraphP, _P(OpDesc), _P(qairt_op_id)]),
    ("qairt_graph_set_op_input", StatusP, [GraphP, qairt_op_id, c_size_t, qairt_tensor_id]),
    ("qairt_graph_infer_shapes", StatusP, [GraphP]),
    # Validation and diagnostics
    ("qairt_graph_validate", StatusP, [GraphP, _P(DiagnosticsP)]),
    ("qairt_diagnostics_count", c_size_t, [DiagnosticsP]),
    ("qairt_diagnostics_get", StatusP, [DiagnosticsP, c_size_t, _P(Diagnostic)]),
    ("qairt_diagnostics_destroy", None, [DiagnosticsP]),
    # Introspection
    ("qairt_graph_name", c_char_p, [GraphP]),
    ("qairt_graph_tensor_count", c_size_t, [GraphP]),
    ("qairt_graph_op_count", c_size_t, [GraphP]),
    ("qairt_graph_input_count", c_size_t, [GraphP]),
    ("qairt_graph_output_count", c_size_t, [GraphP]),
    ("qairt_graph_input", qairt_tensor_id, [GraphP, c_size_t]),
    ("qairt_graph_output", qairt_tensor_id, [GraphP, c_size_t]),
    ("qairt_graph_find_tensor", StatusP, [GraphP, c_char_p, _P(qairt_tensor_id)]),
    ("qairt_graph_find_op", StatusP, [GraphP, c_char_p, _P(qairt_op_id)]),
    ("qairt_graph_tensor_info", StatusP, [GraphP, qairt_tensor_id, _P(TensorInfo)]),
    ("qairt_graph_tensor_dim_symbol", StatusP, [GraphP, qairt_tensor_id, c_size_t, _P(c_char_p)]),
    ("qairt_graph_tensor_consumer", StatusP,
     [GraphP, qairt_tensor_id, c_size_t, _P(qairt_op_id), _P(c_uint32)]),
    ("qairt_graph_tensor_data", StatusP, [GraphP, qairt_tensor_id, _P(c_void_p), _P(c_size_t)]),
    ("qairt_graph_op_info", StatusP, [GraphP, qairt_op_id, _P(OpInfo)]),
    ("qairt_graph_op_attr", StatusP, [GraphP, qairt_op_id, c_size_t, _P(Attr)]),
    ("qairt_graph_op_find_attr", StatusP, [GraphP, qairt_op_id, c_char_p, _P(Attr)]),
    ("qairt_graph_topological_order", StatusP, [GraphP, _P(qairt_op_id), c_size_t, _P(c_size_t)]),
    ("qairt_graph_summary_json", StatusP, [GraphP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_graph_compare", StatusP, [GraphP, GraphP, _P(c_int32), c_char_p, c_size_t]),
    # Encodings
    ("qairt_encoding_create", StatusP, [qairt_encoding_kind_t, qairt_dtype_t, _P(EncodingP)]),
    ("qairt_encoding_clone", StatusP, [EncodingP, _P(EncodingP)]),
    ("qairt_encoding_destroy", None, [EncodingP]),
    ("qairt_encoding_set_bitwidth", StatusP, [EncodingP, c_uint32]),
    ("qairt_encoding_set_symmetry", StatusP, [EncodingP, qairt_symmetry_t]),
    ("qairt_encoding_set_overridden", StatusP, [EncodingP, c_int32]),
    ("qairt_encoding_set_axis", StatusP, [EncodingP, c_int32]),
    ("qairt_encoding_set_scales", StatusP, [EncodingP, _P(ctypes.c_float), c_size_t]),
    ("qairt_encoding_set_offsets", StatusP, [EncodingP, _P(c_int32), c_size_t]),
    ("qairt_encoding_set_float_offsets", StatusP, [EncodingP, _P(ctypes.c_float), c_size_t]),
    ("qairt_encoding_set_block_sizes", StatusP, [EncodingP, _P(c_int64), c_size_t]),
    ("qairt_encoding_set_lpbq", StatusP, [EncodingP, _P(c_int32), c_size_t, c_uint32]),
    ("qairt_encoding_set_index_tensor", StatusP, [EncodingP, c_char_p]),
    ("qairt_encoding_add_sub_encoding", StatusP, [EncodingP, EncodingP]),
    ("qairt_encoding_kind", qairt_encoding_kind_t, [EncodingP]),
    ("qairt_encoding_dtype", qairt_dtype_t, [EncodingP]),
    ("qairt_encoding_bitwidth", c_uint32, [EncodingP]),
    ("qairt_encoding_symmetry", qairt_symmetry_t, [EncodingP]),
    ("qairt_encoding_overridden", c_int32, [EncodingP]),
    ("qairt_encoding_axis", c_int32, [EncodingP]),
    ("qairt_encoding_decompressed_bitwidth", c_uint32, [EncodingP]),
    ("qairt_encoding_scales", None, [EncodingP, _P(_P(ctypes.c_float)), _P(c_size_t)]),
    ("qairt_encoding_offsets", None, [EncodingP, _P(_P(c_int32)), _P(c_size_t)]),
    ("qairt_encoding_float_offsets", None, [EncodingP, _P(_P(ctypes.c_float)), _P(c_size_t)]),
    ("qairt_encoding_block_sizes", None, [EncodingP, _P(_P(c_int64)), _P(c_size_t)]),
    ("qairt_encoding_block_int_scales", None, [EncodingP, _P(_P(c_int32)), _P(c_size_t)]),
    ("qairt_encoding_index_tensor", c_char_p, [EncodingP]),
    ("qairt_encoding_sub_encoding_count", c_size_t, [EncodingP]),
    ("qairt_encoding_sub_encoding", EncodingP, [EncodingP, c_size_t]),
    ("qairt_encoding_equal", c_int32, [EncodingP, EncodingP]),
    ("qairt_graph_set_encoding", StatusP, [GraphP, qairt_tensor_id, EncodingP]),
    ("qairt_graph_get_encoding", StatusP, [GraphP, qairt_tensor_id, _P(EncodingP)]),
    ("qairt_graph_clear_encoding", StatusP, [GraphP, qairt_tensor_id]),
]

# qairt_import.h
_IMPORT_DECLS = [
    ("qairt_import_options_init", None, [_P(ImportOptions)]),
    ("qairt_import_onnx_file", StatusP, [c_char_p, _P(ImportOptions), _P(GraphP), _P(ImportReportP)]),
    ("qairt_import_onnx_bytes", StatusP,
     [c_void_p, c_size_t, _P(ImportOptions), _P(GraphP), _P(ImportReportP)]),
    ("qairt_import_tflite_file", StatusP, [c_char_p, _P(ImportOptions), _P(GraphP), _P(ImportReportP)]),
    ("qairt_import_tflite_bytes", StatusP,
     [c_void_p, c_size_t, _P(ImportOptions), _P(GraphP), _P(ImportReportP)]),
    ("qairt_import_report_ok", c_int32, [ImportReportP]),
    ("qairt_import_report_json", StatusP, [ImportReportP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_import_report_text", StatusP, [ImportReportP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_import_report_destroy", None, [ImportReportP]),
]

# qairt_export.h
_EXPORT_DECLS = [
    ("qairt_onnx_export_options_init", None, [_P(OnnxExportOptions)]),
    ("qairt_export_onnx_file", StatusP, [GraphP, c_char_p, _P(OnnxExportOptions)]),
    ("qairt_export_onnx_bytes", StatusP, [GraphP, _P(OnnxExportOptions), c_void_p, c_size_t, _P(c_size_t)]),
    ("qairt_export_onnx_write", StatusP, [GraphP, _P(OnnxExportOptions), WriteFn, c_void_p]),
]

# qairt_exec.h (the reference executor; python/qairt/exec.py wraps it)
class ExecutorHandle(ctypes.Structure):
    pass


class ExecutorOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("num_threads", c_uint32), ("reserved", c_uint32)]


class ExecTensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("rank", c_uint32), ("name", c_char_p), ("dtype", c_uint32),
                ("reserved", c_uint32), ("dims", _P(c_int64)), ("byte_size", ctypes.c_uint64)]


class ExecStats(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32), ("op_count", ctypes.c_uint64),
                ("arena_bytes", ctypes.c_uint64), ("unplanned_bytes", ctypes.c_uint64),
                ("static_copied_bytes", ctypes.c_uint64), ("static_borrowed_bytes", ctypes.c_uint64)]


ExecutorP = _P(ExecutorHandle)
ExecObserverFn = ctypes.CFUNCTYPE(c_int32, c_void_p, c_char_p, c_uint32, c_uint32, _P(c_int64), c_void_p, c_size_t)
_EXEC_DECLS = [
    ("qairt_executor_options_init", None, [_P(ExecutorOptions)]),
    ("qairt_executor_create", StatusP, [GraphP, _P(ExecutorOptions), _P(ExecutorP)]),
    ("qairt_executor_destroy", None, [ExecutorP]),
    ("qairt_executor_input_count", c_size_t, [ExecutorP]),
    ("qairt_executor_output_count", c_size_t, [ExecutorP]),
    ("qairt_executor_input_info", StatusP, [ExecutorP, c_size_t, _P(ExecTensorInfo)]),
    ("qairt_executor_output_info", StatusP, [ExecutorP, c_size_t, _P(ExecTensorInfo)]),
    ("qairt_executor_set_observer", StatusP, [ExecutorP, ExecObserverFn, c_void_p]),
    ("qairt_executor_run", StatusP, [ExecutorP, _P(c_void_p), _P(c_size_t), c_size_t]),
    ("qairt_executor_get_output", StatusP, [ExecutorP, c_size_t, c_void_p, c_size_t, _P(c_size_t)]),
    ("qairt_executor_stats", StatusP, [ExecutorP, _P(ExecStats)]),
]

# qairt_container.h (the .qairt container; python/qairt/container.py wraps it)
class ContainerHandle(ctypes.Structure):
    """Opaque qairt_container_t."""


ContainerP = POINTER(ContainerHandle)


class ContainerOption(ctypes.Structure):
    _fields_ = [("key", c_char_p), ("value", c_char_p), ("source", c_uint32), ("reserved", c_uint32)]


class ContainerOpAnnotation(ctypes.Structure):
    _fields_ = [("op_name", c_char_p), ("kernel", c_char_p), ("super_group", c_int32), ("adapted", c_uint32)]


class ContainerTensorNote(ctypes.Structure):
    _fields_ = [("tensor_name", c_char_p), ("reasons", c_char_p)]


class ContainerWriteOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("flags", c_uint32), ("target_name", c_char_p),
        ("num_options", c_size_t), ("options", POINTER(ContainerOption)),
        ("num_op_annotations", c_size_t), ("op_annotations", POINTER(ContainerOpAnnotation)),
        ("num_tensor_notes", c_size_t), ("tensor_notes", POINTER(ContainerTensorNote)),
        ("stats_summary", c_char_p),
    ]


class ContainerInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("schema_version", c_uint32), ("min_reader_version", c_uint32),
        ("reserved", c_uint32), ("producer", c_char_p), ("target_name", c_char_p),
        ("num_options", c_size_t), ("num_op_annotations", c_size_t), ("num_tensor_notes", c_size_t),
        ("stats_summary", c_char_p),
    ]


_CONTAINER_DECLS = [
    ("qairt_container_write_options_init", None, [_P(ContainerWriteOptions)]),
    ("qairt_container_write_file", StatusP, [GraphP, c_char_p, _P(ContainerWriteOptions)]),
    ("qairt_container_write_bytes", StatusP,
     [GraphP, _P(ContainerWriteOptions), c_void_p, c_size_t, _P(c_size_t)]),
    ("qairt_container_load_file", StatusP, [c_char_p, _P(ContainerP)]),
    ("qairt_container_load_bytes", StatusP, [c_void_p, c_size_t, _P(ContainerP)]),
    ("qairt_container_destroy", None, [ContainerP]),
    ("qairt_container_get_info", StatusP, [ContainerP, _P(ContainerInfo)]),
    ("qairt_container_get_graph", StatusP, [ContainerP, _P(GraphP)]),
    ("qairt_container_option_at", StatusP, [ContainerP, c_size_t, _P(ContainerOption)]),
    ("qairt_container_find_option", StatusP, [ContainerP, c_char_p, _P(ContainerOption)]),
    ("qairt_container_op_annotation_at", StatusP, [ContainerP, c_size_t, _P(ContainerOpAnnotation)]),
    ("qairt_container_tensor_note_at", StatusP, [ContainerP, c_size_t, _P(ContainerTensorNote)]),
    ("qairt_option_source_name", c_char_p, [c_uint32]),
]

# Since ABI 1.7: the naming table's spellings (include/qairt/README.md) of
# functions above. Declared when the library has them; the binding itself
# calls the older names, which every 1.x library exports.
_DECLS_1_7 = [
    ("qairt_import_report_render", StatusP, [ImportReportP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_container_get_option", StatusP, [ContainerP, c_size_t, _P(ContainerOption)]),
    ("qairt_container_get_op_annotation", StatusP, [ContainerP, c_size_t, _P(ContainerOpAnnotation)]),
    ("qairt_container_get_tensor_note", StatusP, [ContainerP, c_size_t, _P(ContainerTensorNote)]),
]

# The one diagnostics list (qairt.h, ABI 1.8).
_DECLS_1_8 = [
    ("qairt_diagnostics_create", StatusP, [_P(DiagnosticsP)]),
    ("qairt_diagnostics_count_severity", c_size_t, [DiagnosticsP, c_uint32]),
    ("qairt_diagnostics_render", StatusP, [DiagnosticsP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_diagnostics_clear", None, [DiagnosticsP]),
]

# Since ABI 1.9.
_DECLS_1_9 = [("qairt_import_report_diagnostics", DiagnosticsP, [ImportReportP])]
# Since ABI 1.10.
_DECLS_1_10 = [("qairt_write_file_atomically", StatusP, [c_char_p, c_void_p, c_size_t])]

# Declarations per public header: tests/python/test_binding.py compares each
# list with its header and with capi/<name>.exports. A new header's functions
# go in a list of their own and an entry here.
DECLARED_BY_HEADER = {
    "qairt.h": tuple(d[0] for d in _DECLS + _DECLS_1_8 + _DECLS_1_10),
    "qairt_import.h": tuple(d[0] for d in _IMPORT_DECLS) + ("qairt_import_report_render",
                                                            "qairt_import_report_diagnostics"),
    "qairt_export.h": tuple(d[0] for d in _EXPORT_DECLS),
    "qairt_container.h": tuple(d[0] for d in _CONTAINER_DECLS) + tuple(
        d[0] for d in _DECLS_1_7 if d[0].startswith("qairt_container_")),
    "qairt_exec.h": tuple(d[0] for d in _EXEC_DECLS),
}
_DECLS = _DECLS + _IMPORT_DECLS + _EXPORT_DECLS + _EXEC_DECLS + _CONTAINER_DECLS

# Names of every function declared (tests compare this with the header).
DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_7 + _DECLS_1_8 + _DECLS_1_9 + _DECLS_1_10)

try:
    for _name, _restype, _argtypes in _DECLS:
        globals()[_name] = _declare(_name, _restype, _argtypes)
except AttributeError as _e:
    raise ImportError("qairt: %s does not export a symbol of qairt.h ABI %d.%d: %s"
                      % (library_path, ABI_MAJOR, ABI_MINOR, _e)) from None

_abi = lib.qairt_abi_version()
if (_abi >> 16) != ABI_MAJOR:
    raise ImportError(
        "qairt: %s has ABI version %d.%d but this binding needs major version %d"
        % (library_path, _abi >> 16, _abi & 0xFFFF, ABI_MAJOR))
if (_abi & 0xFFFF) >= 7:
    for _name, _restype, _argtypes in _DECLS_1_7:
        globals()[_name] = _declare(_name, _restype, _argtypes)
if (_abi & 0xFFFF) >= 8:
    for _name, _restype, _argtypes in _DECLS_1_8:
        globals()[_name] = _declare(_name, _restype, _argtypes)
if (_abi & 0xFFFF) >= 9:
    for _name, _restype, _argtypes in _DECLS_1_9:
        globals()[_name] = _declare(_name, _restype, _argtypes)
if (_abi & 0xFFFF) >= 10:
    for _name, _restype, _argtypes in _DECLS_1_10:
        globals()[_name] = _declare(_name, _restype, _argtypes)


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------

def encode(s):
    """str -> UTF-8 bytes for a const char* argument (None stays NULL)."""
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise errors.InvalidArgumentError(
            "expected a string, got %s" % type(s).__name__, code=errors.INVALID_ARGUMENT)
    return s.encode("utf-8")


def decode(b):
    """const char* result (bytes or None) -> str ("" for NULL)."""
    if b is None:
        return ""
    return b.decode("utf-8", "replace")
