"""Python binding of libqairt, the qairt quantization compiler library.

A thin ctypes layer over the stable C ABI (include/qairt/qairt.h). The shared
library is found, in order, at:

1. the path in the ``QAIRT_LIBRARY`` environment variable;
2. ``<repo>/build/libqairt.so`` (relative to this package: ``../../build``);
3. ``ctypes.util.find_library("qairt")``.

Its ABI major version must be 1, otherwise importing raises ImportError.

Example::

    import qairt
    with qairt.Graph(name="net") as g:
        x = g.add_input("x", "float32", ["batch", 16])
        g.add_op("Relu", "relu", [x], ["y"])
        g.mark_output("y")
        g.validate()
        print(g.summary()["ops"])

numpy is optional: when it is importable, constants may be numpy arrays.
"""

# The package is split by responsibility; every name below stays reachable as
# qairt.X (private ones too: other modules and tests use a few of them).
#
#   library.py          the loaded library: versions, op types, dtypes
#   tensor_encoding.py  Encoding (one tensor's quantization encoding)
#   op_attrs.py         op attributes <-> Python values
#   graph_info.py       TensorInfo, OpInfo, Diagnostic; Graph's read-only queries
#   graph.py            Graph: lifetime, construction, validation, encodings
#   onnx.py, tflite.py  import / export
#   encodings.py        encodings files (qairt_encodings.h)
#   targets.py          target descriptors
#   exec.py             the reference executor
#   container.py        the .qairt container
#   conversion.py       convert(): the whole conversion in one call (qairt_convert.h)
#   calib.py            calibration and comparison (imported by conversion.py)
#   report.py           the HTML report (qairt_report.h): qairt.report.write / render
#   process.py, analyze.py, prepare.py: imported on demand (import qairt.process)

# qairt.ctypes, qairt.List, ... have always been reachable: kept so that no
# public name disappears.
import ctypes  # noqa: F401
import os  # noqa: F401
import json  # noqa: F401
import numbers  # noqa: F401
import struct  # noqa: F401
from dataclasses import dataclass, field  # noqa: F401
from typing import List, Optional, Tuple, Union  # noqa: F401

from . import _ffi
from .errors import (  # noqa: F401  (re-exported)
    BufferTooSmallError,
    InternalError,
    InvalidArgumentError,
    IoError,
    NotFoundError,
    OutOfMemoryError,
    ParseError,
    QairtError,
    UnsupportedError,
    ValidationError,
)

__all__ = [
    "Graph", "Encoding", "TensorInfo", "OpInfo", "Diagnostic", "DiagnosticList",
    "QairtError", "InvalidArgumentError", "NotFoundError", "UnsupportedError", "ParseError",
    "OutOfMemoryError", "InternalError", "ValidationError", "IoError", "BufferTooSmallError",
    "abi_version", "version", "op_types", "dtype_names", "dtype_name", "dtype_short_name",
    "dtype_bitwidth", "INVALID_ID", "library_path",
]

from .library import (  # noqa: F401
    INVALID_ID,
    _dec,
    _dtype_cache,
    _dtype_code,
    _dtype_codes,
    _enc,
    _invalid,
    _lib,
    _name_of_dtype_code,
    _np,
    abi_version,
    dtype_bitwidth,
    dtype_name,
    dtype_names,
    dtype_short_name,
    library_path,
    op_types,
    version,
)
from .tensor_encoding import (  # noqa: F401
    Encoding,
    _KIND_CODES,
    _KIND_NAMES,
    _SYMMETRY_CODES,
    _SYMMETRY_NAMES,
    _f32,
)
from .op_attrs import (  # noqa: F401
    _ATTR_FLOAT,
    _ATTR_FLOATS,
    _ATTR_INT,
    _ATTR_INTS,
    _ATTR_STRING,
    _ATTR_STRINGS,
    _build_attr,
    _is_float,
    _is_int,
    _read_attr,
)
from .graph_info import (  # noqa: F401
    Diagnostic,
    DiagnosticList,
    OpInfo,
    TensorInfo,
    TensorRef,
    _DIAG_KIND_NAMES,
    _ROLE_NAMES,
    _SEVERITY_NAMES,
    _read_diagnostics,
)
from .graph import Graph, _as_buffer  # noqa: F401

# The classes are documented as qairt.X (repr, pickling, help).
for _cls in (Diagnostic, DiagnosticList, TensorInfo, OpInfo, Encoding, Graph):
    _cls.__module__ = __name__
del _cls


# ONNX import/export (qairt_import.h, qairt_export.h): python/qairt/onnx.py.
from .onnx import export_onnx, import_onnx  # noqa: E402


def _graph_export_onnx(self, path=None, opset=0, **kwargs):
    """Writes the graph as an ONNX model to `path` (atomically), or returns the
    bytes when path is None. See qairt.export_onnx."""
    return export_onnx(self, path, opset=opset, **kwargs)


Graph.export_onnx = _graph_export_onnx
__all__ += ["import_onnx", "export_onnx"]

# TFLite import (qairt_import.h): python/qairt/tflite.py.
from .tflite import import_tflite  # noqa: E402

__all__ += ["import_tflite"]

# Target descriptors (qairt_target.h): python/qairt/targets.py.
from .targets import Target, builtin_targets  # noqa: E402
__all__ += ["Target", "builtin_targets"]
from .encodings import Encodings, EncodingsDiagnostic  # noqa: E402,F401  (qairt_encodings.h)
from .exec import Executor  # noqa: E402,F401  (qairt_exec.h)
__all__ += ["Executor"]
# The .qairt container (qairt_container.h): python/qairt/container.py.
from .container import Container, ContainerOption, OpAnnotation, TensorNote, write_container  # noqa: E402
__all__ += ["Container", "ContainerOption", "OpAnnotation", "TensorNote", "write_container"]

# The whole conversion in one call (qairt_convert.h, ABI 1.7): python/qairt/conversion.py.
from .conversion import ConvertResult, convert  # noqa: E402
__all__ += ["convert", "ConvertResult"]

# The HTML report (qairt_report.h, ABI 1.9): python/qairt/report.py.
from . import report  # noqa: E402
__all__ += ["report"]
