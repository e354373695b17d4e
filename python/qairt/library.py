"""What the loaded library knows: its ABI and release versions, the op-type
vocabulary and the element types (names, TRACE-log tokens, bit widths), plus
the dtype parser every other module uses to accept a dtype given as a name,
an enum value or a numpy dtype.

The package re-exports the public names: use ``qairt.dtype_name`` etc.
"""

import ctypes
import numbers
from typing import List, Optional, Tuple

from . import _ffi
from .errors import InvalidArgumentError

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

INVALID_ID = _ffi.INVALID_ID
library_path = _ffi.library_path

_lib = _ffi.lib
_dec = _ffi.decode
_enc = _ffi.encode


def _invalid(msg):
    return InvalidArgumentError(msg)


# --------------------------------------------------------------------------
# Module functions
# --------------------------------------------------------------------------

def abi_version() -> Tuple[int, int]:
    """(major, minor) ABI version of the loaded library."""
    v = _ffi.qairt_abi_version()
    return (v >> 16, v & 0xFFFF)


def version() -> str:
    """Library release string, e.g. "0.1.0"."""
    return _dec(_ffi.qairt_version_string())


def op_types() -> List[str]:
    """Names of the registered op types ("Conv2d", "ElementWiseAdd", ...)."""
    out = []
    for i in range(_ffi.qairt_op_type_count()):
        name = _ffi.qairt_op_type_name(i)
        if name is not None:
            out.append(_dec(name))
    return out


def _dtype_codes():
    codes = []
    code = 0
    while True:
        name = _ffi.qairt_dtype_name(code)
        if name is None or name == b"invalid":
            return codes
        codes.append(code)
        code += 1


def dtype_names() -> List[str]:
    """Every dtype name known to the library, in enum order ("undefined", "float32", ...)."""
    return [_dec(_ffi.qairt_dtype_name(c)) for c in _dtype_codes()]


_dtype_cache = {}


def _dtype_code(dtype) -> int:
    """A dtype given as a name ("float32", "s8"), an enum value or a numpy dtype -> enum value."""
    if dtype is None:
        return 0
    if isinstance(dtype, bool):
        raise _invalid("dtype must be a name, got a bool")
    if isinstance(dtype, numbers.Integral):
        code = int(dtype)
        if code < 0 or _ffi.qairt_dtype_name(code) in (None, b"invalid"):
            raise _invalid("unknown dtype value %d" % code)
        return code
    if not isinstance(dtype, str):
        if _np is not None:
            try:
                dtype = _np.dtype(dtype).name
            except TypeError:
                raise _invalid("cannot interpret %r as a dtype" % (dtype,)) from None
        else:
            raise _invalid("cannot interpret %r as a dtype" % (dtype,))
    code = _dtype_cache.get(dtype)
    if code is None:
        out = _ffi.qairt_dtype_t()
        _ffi.qairt_dtype_from_name(_enc(dtype), ctypes.byref(out))
        code = out.value
        _dtype_cache[dtype] = code
    return code


def dtype_name(dtype) -> str:
    """Canonical name of a dtype ("s8" -> "sfixed_point_8")."""
    return _dec(_ffi.qairt_dtype_name(_dtype_code(dtype)))


def dtype_short_name(dtype) -> str:
    """TRACE-log token of a dtype ("sfixed_point_8" -> "s8")."""
    return _dec(_ffi.qairt_dtype_short_name(_dtype_code(dtype)))


def dtype_bitwidth(dtype) -> int:
    """Bits per element (0 for "undefined")."""
    return int(_ffi.qairt_dtype_bitwidth(_dtype_code(dtype)))


def _name_of_dtype_code(code: int) -> Optional[str]:
    return None if code == 0 else _dec(_ffi.qairt_dtype_name(code))
