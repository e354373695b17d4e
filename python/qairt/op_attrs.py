"""Op attributes: a Python value (int, bool, float, str or a list of them)
to a qairt_attr for qairt_graph_add_op, and a qairt_attr read back from the
library to a Python value."""

import ctypes
import numbers

from . import _ffi
from .errors import InternalError
from .library import _dec, _enc, _invalid, _np

_ATTR_INT, _ATTR_FLOAT, _ATTR_STRING, _ATTR_INTS, _ATTR_FLOATS, _ATTR_STRINGS = range(1, 7)


def _is_int(v):
    return isinstance(v, numbers.Integral)  # bool included (bool -> INT)


def _is_float(v):
    return isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral)


def _build_attr(name, value, keep):
    """Fills a qairt_attr for one Python value; `keep` holds the buffers alive."""
    if _np is not None and isinstance(value, _np.ndarray):
        value = value.tolist()
    a = _ffi.Attr()
    a.name = _enc(name)
    keep.append(a.name)
    a.reserved = 0
    if isinstance(value, str):
        buf = ctypes.c_char_p(_enc(value))
        keep.append(buf)
        a.type, a.count, a.data = _ATTR_STRING, 1, ctypes.cast(buf, ctypes.c_void_p)
    elif _is_int(value):
        buf = _ffi.c_int64(int(value))
        keep.append(buf)
        a.type, a.count, a.data = _ATTR_INT, 1, ctypes.cast(ctypes.pointer(buf), ctypes.c_void_p)
    elif _is_float(value):
        buf = ctypes.c_double(float(value))
        keep.append(buf)
        a.type, a.count, a.data = _ATTR_FLOAT, 1, ctypes.cast(ctypes.pointer(buf), ctypes.c_void_p)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if all(_is_int(v) for v in items):  # also the empty list -> INTS
            buf = (_ffi.c_int64 * len(items))(*[int(v) for v in items])
            kind = _ATTR_INTS
        elif all(_is_int(v) or _is_float(v) for v in items):
            buf = (ctypes.c_double * len(items))(*[float(v) for v in items])
            kind = _ATTR_FLOATS
        elif all(isinstance(v, str) for v in items):
            encoded = [_enc(v) for v in items]
            keep.append(encoded)
            buf = (ctypes.c_char_p * len(items))(*encoded)
            kind = _ATTR_STRINGS
        else:
            raise _invalid("attribute '%s': a list must hold only ints, only numbers or only strings"
                           % name)
        keep.append(buf)
        a.type, a.count = kind, len(items)
        a.data = ctypes.cast(buf, ctypes.c_void_p) if items else None
    else:
        raise _invalid("attribute '%s': unsupported value type %s" % (name, type(value).__name__))
    return a


def _read_attr(a):
    n = a.count
    if a.type == _ATTR_INT:
        return int(ctypes.cast(a.data, ctypes.POINTER(_ffi.c_int64))[0])
    if a.type == _ATTR_FLOAT:
        return float(ctypes.cast(a.data, ctypes.POINTER(ctypes.c_double))[0])
    if a.type == _ATTR_STRING:
        return _dec(ctypes.cast(a.data, ctypes.c_char_p).value)
    if n == 0 or not a.data:
        return []
    if a.type == _ATTR_INTS:
        p = ctypes.cast(a.data, ctypes.POINTER(_ffi.c_int64))
        return [int(p[i]) for i in range(n)]
    if a.type == _ATTR_FLOATS:
        p = ctypes.cast(a.data, ctypes.POINTER(ctypes.c_double))
        return [float(p[i]) for i in range(n)]
    if a.type == _ATTR_STRINGS:
        p = ctypes.cast(a.data, ctypes.POINTER(ctypes.c_char_p))
        return [_dec(p[i]) for i in range(n)]
    raise InternalError("attribute '%s' has unknown type %d" % (_dec(a.name), a.type))
