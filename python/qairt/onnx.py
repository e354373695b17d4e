"""ONNX import and export (include/qairt/qairt_import.h, qairt_export.h).

::

    import qairt
    g, report = qairt.import_onnx("model.onnx", define_symbols={"batch": 1})
    print(report["outputs"])              # names, dtypes, static shapes
    g.export_onnx("roundtrip.onnx")       # runnable ONNX (opset 17 by default)
    data = qairt.export_onnx(g)           # the same as bytes

A failed import raises a QairtError whose ``report`` attribute holds the
import report (every problem found), when one was produced.
"""

import ctypes
import json
import os
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

from . import _ffi

__all__ = ["import_onnx", "export_onnx", "AUTO_OPSET", "DEFAULT_OPSET", "MIN_OPSET", "MAX_OPSET"]

# AUTO_OPSET: DEFAULT_OPSET, or 21 when a Q/DQ node needs it (4/16-bit, blocks).
AUTO_OPSET = 0
DEFAULT_OPSET = 17
MIN_OPSET = 11
MAX_OPSET = 21

_enc = _ffi.encode
_dec = _ffi.decode


def _report_string(fn, report) -> str:
    n = ctypes.c_size_t(0)
    fn(report, None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    fn(report, buf, len(buf), ctypes.byref(n))
    return _dec(buf.value)


def _path_or_bytes(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return None, bytes(model)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str):
        return model, None
    raise _ffi.errors.InvalidArgumentError(
        "import_onnx: expected a path or bytes, got %s" % type(model).__name__, code=_ffi.errors.INVALID_ARGUMENT)


def import_onnx(model: Union[str, os.PathLike, bytes], define_symbols: Optional[Mapping[str, int]] = None,
                input_dims: Optional[Mapping[str, Sequence[int]]] = None, require_static: bool = False,
                fold_batchnorm: bool = True, int64_to_int32: bool = False) -> Tuple["Graph", Dict]:
    """Imports an ONNX model (path or serialized bytes).

    define_symbols: symbolic dim name -> value (``--define_symbol``).
    input_dims: graph input name -> full shape (``-d/--input_dim``).
    require_static: fail if any dimension stays dynamic (as ``--dry_run``).
    int64_to_int32: int64 inputs, index constants and casts become int32, as
    ``qairt convert`` does unless ``--keep_int64_inputs`` (HTP has no int64).
    Returns (graph, report) where report is the import report as a dict.
    """
    from . import Graph  # the package imports this module at its end

    path, data = _path_or_bytes(model)
    opts = _ffi.new_struct(_ffi.ImportOptions)
    _ffi.qairt_import_options_init(ctypes.byref(opts))
    flags = 0
    if not fold_batchnorm:
        flags |= _ffi.IMPORT_NO_BATCHNORM_FOLD
    if require_static:
        flags |= _ffi.IMPORT_REQUIRE_STATIC
    if int64_to_int32:
        flags |= _ffi.IMPORT_INT64_TO_INT32
    opts.flags = flags
    keep = []  # ctypes arrays must outlive the call
    if define_symbols:
        names = [_enc(k) for k in define_symbols]
        values = [int(v) for v in define_symbols.values()]
        name_arr = (ctypes.c_char_p * len(names))(*names)
        value_arr = (ctypes.c_int64 * len(values))(*values)
        keep += [name_arr, value_arr]
        opts.num_define_symbols = len(names)
        opts.define_symbol_names = name_arr
        opts.define_symbol_values = value_arr
    _set_input_dims(opts, input_dims, keep)

    return _run_import(_ffi.qairt_import_onnx_file, _ffi.qairt_import_onnx_bytes, path, data, opts)


def _set_input_dims(opts, input_dims, keep):
    """Puts input name -> shape into the import options; the ctypes arrays
    go into `keep`, which must outlive the import call."""
    if not input_dims:
        return
    names = [_enc(k) for k in input_dims]
    dims = [(ctypes.c_int64 * len(v))(*[int(d) for d in v]) for v in input_dims.values()]
    name_arr = (ctypes.c_char_p * len(names))(*names)
    rank_arr = (ctypes.c_size_t * len(dims))(*[len(d) for d in dims])
    ptr_arr = (ctypes.POINTER(ctypes.c_int64) * len(dims))(
        *[ctypes.cast(d, ctypes.POINTER(ctypes.c_int64)) for d in dims])
    keep += [names, dims, name_arr, rank_arr, ptr_arr]
    opts.num_input_dims = len(names)
    opts.input_dim_names = name_arr
    opts.input_dim_ranks = rank_arr
    opts.input_dims = ptr_arr


def _run_import(file_fn, bytes_fn, path, data, opts):
    """Calls an importer (file or bytes form); returns (Graph, report dict) or
    raises its QairtError with the report attached. Shared by ONNX and TFLite."""
    from . import Graph  # the package imports this module at its end

    handle = _ffi.GraphP()
    report = _ffi.ImportReportP()
    error = None
    try:
        if path is not None:
            file_fn(_enc(path), ctypes.byref(opts), ctypes.byref(handle), ctypes.byref(report))
        else:
            buf = ctypes.create_string_buffer(data, len(data))
            bytes_fn(buf, len(data), ctypes.byref(opts), ctypes.byref(handle), ctypes.byref(report))
    except _ffi.errors.QairtError as e:
        error = e
    try:
        report_dict = json.loads(_report_string(_ffi.qairt_import_report_json, report)) if report else None
    finally:
        if report:
            _ffi.qairt_import_report_destroy(report)
    if error is not None:
        error.report = report_dict
        raise error
    return Graph(_handle=handle), report_dict


def _export_options(opset, producer_name, graph_name, value_info, qdq_ms_domain, metadata,
                    external_data=False, external_data_threshold=0, external_data_name=None):
    opts = _ffi.new_struct(_ffi.OnnxExportOptions)
    _ffi.qairt_onnx_export_options_init(ctypes.byref(opts))
    opts.opset = int(opset)
    opts.producer_name = _enc(producer_name)
    opts.graph_name = _enc(graph_name)
    opts.flags = ((_ffi.EXPORT_VALUE_INFO if value_info else 0) |
                  (_ffi.EXPORT_QDQ_MS_DOMAIN if qdq_ms_domain else 0) |
                  (_ffi.EXPORT_EXTERNAL_DATA if external_data else 0))
    opts.external_data_threshold = int(external_data_threshold)
    opts.external_data_name = _enc(external_data_name)
    items = list((metadata or {}).items())
    props = (_ffi.OnnxMetadataProp * max(1, len(items)))()
    for k, (key, value) in enumerate(items):
        props[k].key = _enc(str(key))
        props[k].value = _enc(str(value))
    opts.num_metadata_props = len(items)
    opts.metadata_props = ctypes.cast(props, ctypes.c_void_p)
    opts._keepalive = props  # the array must outlive the call
    return opts


def export_onnx(graph, path: Optional[Union[str, os.PathLike]] = None, opset: int = AUTO_OPSET,
                producer_name: Optional[str] = None, graph_name: Optional[str] = None,
                value_info: bool = False, qdq_ms_domain: bool = False,
                metadata: Optional[dict] = None, external_data: bool = False,
                external_data_threshold: int = 0,
                external_data_name: Optional[str] = None) -> Optional[bytes]:
    """Writes `graph` as an ONNX model: to `path` (atomically) or, when path is
    None, returned as bytes. Quantization is written as Q/DQ nodes the way the
    executor simulates it (see qairt_export.h); opset AUTO_OPSET picks 21 only
    when a Q/DQ node needs it. qdq_ms_domain: com.microsoft Q/DQ (16-bit grids
    below opset 21). metadata: ModelProto.metadata_props. external_data (a
    path only): initializers of at least external_data_threshold bytes (0:
    1024) go to external_data_name (None: "<file name>.data") next to the
    model; always so above 1 GiB of weights."""
    opts = _export_options(opset, producer_name, graph_name, value_info, qdq_ms_domain, metadata,
                           external_data, external_data_threshold, external_data_name)
    if path is not None:
        _ffi.qairt_export_onnx_file(graph.handle, _enc(os.fspath(path)), ctypes.byref(opts))
        return None
    chunks = []

    def write(_user, data, size):
        chunks.append(ctypes.string_at(data, size))
        return 0

    callback = _ffi.WriteFn(write)
    _ffi.qairt_export_onnx_write(graph.handle, ctypes.byref(opts), callback, None)
    return b"".join(chunks)
