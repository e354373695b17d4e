"""TFLite import (include/qairt/qairt_import.h: qairt_import_tflite_file/bytes).

::

    import qairt
    g, report = qairt.import_tflite("model.tflite")
    print(report["outputs"])

Quantized tensors become encodings (offset = -zero_point); activations are
float tensors with an encoding, weights keep their integer bytes. A failed
import raises a QairtError whose ``report`` attribute holds the import report.
"""

import ctypes
import json
import os
from typing import Dict, Tuple, Union

from . import _ffi
from .onnx import _report_string

__all__ = ["import_tflite"]


def import_tflite(model: Union[str, os.PathLike, bytes], require_static: bool = False) -> Tuple["Graph", Dict]:
    """Imports a .tflite model (path or bytes). Returns (graph, report dict)."""
    from . import Graph  # the package imports this module at its end

    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, (str, bytes, bytearray, memoryview)):
        raise _ffi.errors.InvalidArgumentError(
            "import_tflite: expected a path or bytes, got %s" % type(model).__name__,
            code=_ffi.errors.INVALID_ARGUMENT)
    opts = _ffi.new_struct(_ffi.ImportOptions)
    _ffi.qairt_import_options_init(ctypes.byref(opts))
    opts.flags = _ffi.IMPORT_REQUIRE_STATIC if require_static else 0
    handle = _ffi.GraphP()
    report = _ffi.ImportReportP()
    error = None
    try:
        if isinstance(model, str):
            _ffi.qairt_import_tflite_file(model.encode("utf-8"), ctypes.byref(opts), ctypes.byref(handle),
                                          ctypes.byref(report))
        else:
            data = bytes(model)
            buf = ctypes.create_string_buffer(data, len(data))
            _ffi.qairt_import_tflite_bytes(buf, len(data), ctypes.byref(opts), ctypes.byref(handle),
                                           ctypes.byref(report))
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
