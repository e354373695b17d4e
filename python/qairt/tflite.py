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
import os
from typing import Dict, Mapping, Optional, Sequence, Tuple, Union

from . import _ffi
from .onnx import _run_import, _set_input_dims

__all__ = ["import_tflite"]


def import_tflite(model: Union[str, os.PathLike, bytes], require_static: bool = False,
                  input_dims: Optional[Mapping[str, Sequence[int]]] = None) -> Tuple["Graph", Dict]:
    """Imports a .tflite model (path or bytes). Returns (graph, report dict).

    input_dims: input tensor name -> shape (``-d/--input_dim``), resizing an
    input as TFLite's ResizeInputTensor does (meant for the dims its
    shape_signature marks -1, such as a sample count).
    """
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, (str, bytes, bytearray, memoryview)):
        raise _ffi.errors.InvalidArgumentError(
            "import_tflite: expected a path or bytes, got %s" % type(model).__name__,
            code=_ffi.errors.INVALID_ARGUMENT)
    opts = _ffi.new_struct(_ffi.ImportOptions)
    _ffi.qairt_import_options_init(ctypes.byref(opts))
    opts.flags = _ffi.IMPORT_REQUIRE_STATIC if require_static else 0
    keep = []  # ctypes arrays must outlive the call
    _set_input_dims(opts, input_dims, keep)
    data = None if isinstance(model, str) else bytes(model)
    return _run_import(_ffi.qairt_import_tflite_file, _ffi.qairt_import_tflite_bytes,
                       model if isinstance(model, str) else None, data, opts)
