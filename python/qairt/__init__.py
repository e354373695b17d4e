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

import ctypes
import os
import json
import numbers
import struct
from dataclasses import dataclass, field
from typing import List, Optional, Tuple, Union

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

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None

__all__ = [
    "Graph", "Encoding", "TensorInfo", "OpInfo", "Diagnostic",
    "QairtError", "InvalidArgumentError", "NotFoundError", "UnsupportedError", "ParseError",
    "OutOfMemoryError", "InternalError", "ValidationError", "IoError", "BufferTooSmallError",
    "abi_version", "version", "op_types", "dtype_names", "dtype_name", "dtype_short_name",
    "dtype_bitwidth", "INVALID_ID", "library_path",
]

INVALID_ID = _ffi.INVALID_ID
library_path = _ffi.library_path

_lib = _ffi.lib
_dec = _ffi.decode
_enc = _ffi.encode

# --------------------------------------------------------------------------
# Enumerations <-> strings
# --------------------------------------------------------------------------

_ROLE_NAMES = {1: "input", 2: "output", 3: "input_output", 4: "static", 5: "activation"}
_ATTR_INT, _ATTR_FLOAT, _ATTR_STRING, _ATTR_INTS, _ATTR_FLOATS, _ATTR_STRINGS = range(1, 7)
_KIND_CODES = {"float": 1, "per_tensor": 2, "per_channel": 3, "per_block": 4, "lpbq": 5, "array_of": 6}
_KIND_NAMES = {v: k for k, v in _KIND_CODES.items()}
_SYMMETRY_CODES = {"asymmetric": 0, "symmetric": 1, "strict_symmetric": 2, "unsigned_symmetric": 3}
_SYMMETRY_NAMES = {v: k for k, v in _SYMMETRY_CODES.items()}
_SEVERITY_NAMES = {1: "error", 2: "warning", 3: "note"}
_DIAG_KIND_NAMES = {
    1: "cycle", 2: "duplicate_tensor_name", 3: "duplicate_op_name", 4: "dangling_tensor",
    5: "missing_producer", 6: "multiple_producers", 7: "dtype_mismatch", 8: "shape_mismatch",
    9: "arity", 10: "attribute", 11: "unknown_op_type", 12: "invalid_encoding", 13: "no_outputs",
    14: "static_data",
}


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


# --------------------------------------------------------------------------
# Value types
# --------------------------------------------------------------------------

@dataclass
class Diagnostic:
    """One problem found by validation.

    severity: "error" | "warning" | "note"; kind: e.g. "shape_mismatch";
    op / tensor: ids or None; field: e.g. "inputs[1]" ("" if none).
    """

    severity: str
    kind: str
    op: Optional[int]
    tensor: Optional[int]
    field: str
    message: str

    def __str__(self):
        return "%s: %s" % (self.severity, self.message)


@dataclass
class TensorInfo:
    """Snapshot of one tensor.

    shape: None when the rank is unknown, else a list whose entries are ints,
    None (unknown) or a str (symbolic dim name).
    """

    id: int
    name: str
    dtype: Optional[str]  # None for "undefined"
    role: str  # "input" | "output" | "input_output" | "static" | "activation"
    shape: Optional[list]
    producer: Optional[int]
    producer_slot: Optional[int]
    consumers: List[int]  # op ids, one per use (in insertion order)
    consumer_slots: List[int]  # input slot of each use
    has_encoding: bool
    static_data_size: int = 0
    static_data_borrowed: bool = False


@dataclass
class OpInfo:
    """Snapshot of one op. inputs hold None for absent optional inputs."""

    id: int
    type: str
    name: str
    inputs: List[Optional[int]]
    outputs: List[int]
    attrs: dict
    source_name: Optional[str] = None
    source_op_type: Optional[str] = None


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", float(x)))[0]


@dataclass(eq=False)
class Encoding:
    """A quantization encoding (Python-side value, converted to/from qairt_encoding_t).

    kind: "float" | "per_tensor" | "per_channel" | "per_block" | "lpbq" | "array_of".
    dtype: the quantized dtype name ("sfixed_point_8", "u8", ...) or a float dtype for "float".
    bitwidth: None = the dtype's. axis: None = none. Offsets follow QNN
    (real = (q + offset) * scale, offset = -zero_point).

    Equality compares values as the library stores them (scales as float32,
    bitwidth None equal to the dtype's).
    """

    kind: str = "per_tensor"
    dtype: Optional[str] = None
    bitwidth: Optional[int] = None
    symmetry: str = "asymmetric"
    overridden: bool = False
    axis: Optional[int] = None
    scales: List[float] = field(default_factory=list)
    offsets: List[int] = field(default_factory=list)
    float_offsets: List[float] = field(default_factory=list)
    block_sizes: List[int] = field(default_factory=list)
    block_int_scales: List[int] = field(default_factory=list)
    decompressed_bitwidth: Optional[int] = None
    index_tensor: Optional[str] = None
    sub_encodings: List["Encoding"] = field(default_factory=list)

    # ---- convenience constructors -------------------------------------------
    @classmethod
    def floating(cls, dtype="float16", **kw):
        return cls(kind="float", dtype=dtype, **kw)

    @classmethod
    def per_tensor(cls, dtype, scale, offset=0, **kw):
        return cls(kind="per_tensor", dtype=dtype, scales=[scale], offsets=[offset], **kw)

    @classmethod
    def per_channel(cls, dtype, axis, scales, offsets=None, **kw):
        scales = list(scales)
        offsets = [0] * len(scales) if offsets is None else list(offsets)
        return cls(kind="per_channel", dtype=dtype, axis=axis, scales=scales, offsets=offsets, **kw)

    @classmethod
    def per_block(cls, dtype, axis, block_sizes, scales, offsets=None, float_offsets=None, **kw):
        return cls(kind="per_block", dtype=dtype, axis=axis, block_sizes=list(block_sizes),
                   scales=list(scales), offsets=list(offsets or []),
                   float_offsets=list(float_offsets or []), **kw)

    @classmethod
    def lpbq(cls, dtype, axis, block_sizes, scales, block_int_scales, decompressed_bitwidth,
             offsets=None, **kw):
        scales = list(scales)
        offsets = [0] * len(scales) if offsets is None else list(offsets)
        return cls(kind="lpbq", dtype=dtype, axis=axis, block_sizes=list(block_sizes), scales=scales,
                   offsets=offsets, block_int_scales=list(block_int_scales),
                   decompressed_bitwidth=decompressed_bitwidth, **kw)

    @classmethod
    def array_of(cls, dtype, index_tensor, sub_encodings, **kw):
        return cls(kind="array_of", dtype=dtype, index_tensor=index_tensor,
                   sub_encodings=list(sub_encodings), **kw)

    # ---- comparison ---------------------------------------------------------------
    @property
    def effective_bitwidth(self) -> int:
        return self.bitwidth or (dtype_bitwidth(self.dtype) if self.dtype else 0)

    def _key(self):
        return (
            self.kind, dtype_name(self.dtype) if self.dtype is not None else None,
            self.effective_bitwidth, self.symmetry, bool(self.overridden),
            -1 if self.axis is None else int(self.axis),
            tuple(_f32(s) for s in self.scales), tuple(int(o) for o in self.offsets),
            tuple(_f32(o) for o in self.float_offsets), tuple(int(b) for b in self.block_sizes),
            tuple(int(b) for b in self.block_int_scales), int(self.decompressed_bitwidth or 0),
            self.index_tensor or "", tuple(s._key() for s in self.sub_encodings),
        )

    def __eq__(self, other):
        if not isinstance(other, Encoding):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None

    # ---- conversion -------------------------------------------------------------
    def _to_handle(self):
        """A new owned qairt_encoding_t* (caller destroys it)."""
        kind = _KIND_CODES.get(self.kind)
        if kind is None:
            raise _invalid("unknown encoding kind %r (expected one of %s)"
                           % (self.kind, ", ".join(_KIND_CODES)))
        symmetry = _SYMMETRY_CODES.get(self.symmetry)
        if symmetry is None:
            raise _invalid("unknown symmetry %r (expected one of %s)"
                           % (self.symmetry, ", ".join(_SYMMETRY_CODES)))
        handle = _ffi.EncodingP()
        _ffi.qairt_encoding_create(kind, _dtype_code(self.dtype), ctypes.byref(handle))
        try:
            self._fill(handle, symmetry)
        except BaseException:
            _ffi.qairt_encoding_destroy(handle)
            raise
        return handle

    def _fill(self, h, symmetry):
        if self.bitwidth:
            _ffi.qairt_encoding_set_bitwidth(h, int(self.bitwidth))
        if symmetry:
            _ffi.qairt_encoding_set_symmetry(h, symmetry)
        if self.overridden:
            _ffi.qairt_encoding_set_overridden(h, 1)
        if self.axis is not None:
            _ffi.qairt_encoding_set_axis(h, int(self.axis))
        if self.block_sizes:
            arr = (_ffi.c_int64 * len(self.block_sizes))(*[int(b) for b in self.block_sizes])
            _ffi.qairt_encoding_set_block_sizes(h, arr, len(arr))
        if self.scales:
            arr = (ctypes.c_float * len(self.scales))(*[float(s) for s in self.scales])
            _ffi.qairt_encoding_set_scales(h, arr, len(arr))
        if self.offsets:
            arr = (_ffi.c_int32 * len(self.offsets))(*[int(o) for o in self.offsets])
            _ffi.qairt_encoding_set_offsets(h, arr, len(arr))
        if self.float_offsets:
            arr = (ctypes.c_float * len(self.float_offsets))(*[float(o) for o in self.float_offsets])
            _ffi.qairt_encoding_set_float_offsets(h, arr, len(arr))
        if self.block_int_scales or self.decompressed_bitwidth:
            arr = (_ffi.c_int32 * len(self.block_int_scales))(*[int(s) for s in self.block_int_scales])
            _ffi.qairt_encoding_set_lpbq(h, arr, len(arr), int(self.decompressed_bitwidth or 0))
        if self.index_tensor:
            _ffi.qairt_encoding_set_index_tensor(h, _enc(self.index_tensor))
        for sub in self.sub_encodings:
            if not isinstance(sub, Encoding):
                raise _invalid("sub_encodings must hold Encoding objects, got %s" % type(sub).__name__)
            sh = sub._to_handle()
            try:
                _ffi.qairt_encoding_add_sub_encoding(h, sh)
            finally:
                _ffi.qairt_encoding_destroy(sh)

    @classmethod
    def _from_handle(cls, h) -> "Encoding":
        """Reads a qairt_encoding_t* (borrowed; not destroyed here)."""

        def array(getter, ctype):
            ptr = ctypes.POINTER(ctype)()
            n = ctypes.c_size_t(0)
            getter(h, ctypes.byref(ptr), ctypes.byref(n))
            return [ptr[i] for i in range(n.value)] if n.value and ptr else []

        kind_code = _ffi.qairt_encoding_kind(h)
        symmetry_code = _ffi.qairt_encoding_symmetry(h)
        axis = _ffi.qairt_encoding_axis(h)
        decompressed = _ffi.qairt_encoding_decompressed_bitwidth(h)
        subs = []
        for i in range(_ffi.qairt_encoding_sub_encoding_count(h)):
            sh = _ffi.qairt_encoding_sub_encoding(h, i)
            if sh:
                subs.append(cls._from_handle(sh))
        return cls(
            kind=_KIND_NAMES.get(kind_code, "unknown(%d)" % kind_code),
            dtype=_name_of_dtype_code(_ffi.qairt_encoding_dtype(h)),
            bitwidth=int(_ffi.qairt_encoding_bitwidth(h)) or None,
            symmetry=_SYMMETRY_NAMES.get(symmetry_code, "unknown(%d)" % symmetry_code),
            overridden=bool(_ffi.qairt_encoding_overridden(h)),
            axis=None if axis == -1 else int(axis),
            scales=[float(x) for x in array(_ffi.qairt_encoding_scales, ctypes.c_float)],
            offsets=[int(x) for x in array(_ffi.qairt_encoding_offsets, _ffi.c_int32)],
            float_offsets=[float(x) for x in array(_ffi.qairt_encoding_float_offsets, ctypes.c_float)],
            block_sizes=[int(x) for x in array(_ffi.qairt_encoding_block_sizes, _ffi.c_int64)],
            block_int_scales=[int(x) for x in array(_ffi.qairt_encoding_block_int_scales, _ffi.c_int32)],
            decompressed_bitwidth=int(decompressed) or None,
            index_tensor=_dec(_ffi.qairt_encoding_index_tensor(h)) or None,
            sub_encodings=subs,
        )

    def roundtrip(self) -> "Encoding":
        """This encoding as the library stores it (create handle, read back)."""
        h = self._to_handle()
        try:
            return Encoding._from_handle(h)
        finally:
            _ffi.qairt_encoding_destroy(h)


# --------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------

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


# --------------------------------------------------------------------------
# Graph
# --------------------------------------------------------------------------

TensorRef = Union[int, str]


def _as_buffer(data):
    """(pointer usable as const void*, size, object to keep alive) for constant data."""
    if _np is not None and isinstance(data, _np.ndarray):
        arr = _np.ascontiguousarray(data)
        return ctypes.c_void_p(arr.ctypes.data if arr.nbytes else 0), arr.nbytes, arr
    if isinstance(data, bytes):
        return data, len(data), data
    if isinstance(data, (bytearray, memoryview)):
        mv = memoryview(data)
        if not mv.c_contiguous:
            b = mv.tobytes()
            return b, len(b), b
        mv = mv.cast("B")
        n = mv.nbytes
        if n == 0:
            return None, 0, mv
        if mv.readonly:
            b = mv.tobytes()
            return b, n, b
        buf = (ctypes.c_char * n).from_buffer(mv)
        return ctypes.cast(buf, ctypes.c_void_p), n, (mv, buf)
    raise _invalid("constant data must be bytes, bytearray, memoryview%s, got %s"
                   % (" or a numpy array" if _np is not None else "", type(data).__name__))


class Graph:
    """A qairt graph (owns a qairt_graph_t*). Free it with close() or a `with` block."""

    def __init__(self, name: Optional[str] = None, *, _handle=None):
        self._keepalive = []  # buffers of constants added with borrow=True
        if _handle is not None:
            self._h = _handle
            return
        opts = _ffi.new_struct(_ffi.GraphOptions)
        _ffi.qairt_graph_options_init(ctypes.byref(opts))
        opts.name = _enc(name)
        h = _ffi.GraphP()
        _ffi.qairt_graph_create(ctypes.byref(opts), ctypes.byref(h))
        self._h = h

    # ---- lifetime -----------------------------------------------------------------
    _destroy = staticmethod(_ffi.qairt_graph_destroy)  # still reachable at interpreter exit

    def close(self):
        """Frees the graph (idempotent). The object is unusable afterwards."""
        h, self._h = getattr(self, "_h", None), None
        if h:
            self._destroy(h)
        self._keepalive = []

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @property
    def closed(self) -> bool:
        return not self._h

    @property
    def handle(self):
        """The qairt_graph_t* (ctypes pointer); raises if closed."""
        if not self._h:
            raise InvalidArgumentError("the graph is closed")
        return self._h

    def clone(self) -> "Graph":
        """A deep copy (borrowed constant data stays borrowed and is kept alive)."""
        h = _ffi.GraphP()
        _ffi.qairt_graph_clone(self.handle, ctypes.byref(h))
        g = Graph(_handle=h)
        g._keepalive = list(self._keepalive)
        return g

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()

    # ---- construction -------------------------------------------------------------
    @staticmethod
    def _desc(name, dtype, shape, keep):
        d = _ffi.new_struct(_ffi.TensorDesc)
        _ffi.qairt_tensor_desc_init(ctypes.byref(d))
        if not isinstance(name, str) or not name:
            raise _invalid("tensor name must be a non-empty string, got %r" % (name,))
        d.name = _enc(name)
        d.dtype = _dtype_code(dtype)
        if shape is None:
            d.rank_known = 0
            d.rank = 0
            return d
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise _invalid("tensor '%s': shape must be a list, got %r" % (name, shape))
        dims, symbols = [], []
        for i, x in enumerate(shape):
            if x is None:
                dims.append(-1)
                symbols.append(None)
            elif isinstance(x, str):
                if not x:
                    raise _invalid("tensor '%s': shape[%d] is an empty symbol" % (name, i))
                dims.append(-1)
                symbols.append(_enc(x))
            elif _is_int(x) and not isinstance(x, bool):
                dims.append(int(x))
                symbols.append(None)
            else:
                raise _invalid("tensor '%s': shape[%d] must be an int, None or a str, got %r"
                               % (name, i, x))
        d.rank_known = 1
        d.rank = len(dims)
        if dims:
            dims_arr = (_ffi.c_int64 * len(dims))(*dims)
            keep.append(dims_arr)
            d.dims = dims_arr
            if any(s is not None for s in symbols):
                sym_arr = (ctypes.c_char_p * len(symbols))(*symbols)
                keep.append(sym_arr)
                d.dim_symbols = sym_arr
        return d

    def add_input(self, name: str, dtype, shape) -> int:
        """Adds a graph input; shape entries: int, None/-1 (unknown) or str (symbolic)."""
        keep = []
        d = self._desc(name, dtype, shape, keep)
        out = _ffi.qairt_tensor_id()
        _ffi.qairt_graph_add_input(self.handle, ctypes.byref(d), ctypes.byref(out))
        return out.value

    def add_constant(self, name: str, dtype=None, shape=None, data=b"", *, borrow: bool = False) -> int:
        """Adds a static tensor.

        data: bytes / bytearray / memoryview, or a numpy array (then dtype and
        shape default to the array's). With borrow=True the library keeps a
        pointer to the buffer instead of a copy; this Graph (and its clones)
        keep the buffer alive.
        """
        if _np is not None and isinstance(data, _np.ndarray):
            if shape is None:
                shape = list(data.shape)
            if dtype is None:
                dtype = data.dtype.name
        if dtype is None:
            raise _invalid("constant '%s': dtype is required" % name)
        ptr, size, owner = _as_buffer(data)
        keep = []
        d = self._desc(name, dtype, shape, keep)
        out = _ffi.qairt_tensor_id()
        flags = _ffi.CONSTANT_BORROW if borrow else 0
        _ffi.qairt_graph_add_constant(self.handle, ctypes.byref(d), ptr, size, flags, ctypes.byref(out))
        if borrow:
            self._keepalive.append(owner)
        return out.value

    def add_constant_from_file(self, name: str, dtype, shape, path: str, offset: int = 0, length=None) -> int:
        """Adds a static tensor whose bytes are memory-mapped from `path` (no copy).

        length defaults to the rest of the file after offset.
        """
        if length is None:
            length = os.path.getsize(path) - offset
        keep = []
        d = self._desc(name, dtype, shape, keep)
        out = _ffi.qairt_tensor_id()
        _ffi.qairt_graph_add_constant_mapped(self.handle, ctypes.byref(d), os.fsencode(path), int(offset),
                                             int(length), ctypes.byref(out))
        return out.value

    def add_tensor(self, name: str, dtype=None, shape=None) -> int:
        """Declares an activation tensor (dtype/shape may be unknown: inferred by add_op)."""
        keep = []
        d = self._desc(name, dtype, shape, keep)
        out = _ffi.qairt_tensor_id()
        _ffi.qairt_graph_add_tensor(self.handle, ctypes.byref(d), ctypes.byref(out))
        return out.value

    def _tensor_id(self, ref, what="tensor") -> int:
        if isinstance(ref, str):
            return self.find_tensor(ref)
        if isinstance(ref, TensorInfo):
            return ref.id
        if _is_int(ref) and not isinstance(ref, bool):
            return int(ref)
        raise _invalid("%s must be a tensor id or name, got %r" % (what, ref))

    def _op_id(self, ref) -> int:
        if isinstance(ref, str):
            return self.find_op(ref)
        if isinstance(ref, OpInfo):
            return ref.id
        if _is_int(ref) and not isinstance(ref, bool):
            return int(ref)
        raise _invalid("op must be an op id or name, got %r" % (ref,))

    def add_op(self, type: str, name: str, inputs=(), outputs=(), attrs=None,
               source_name: Optional[str] = None, source_op_type: Optional[str] = None) -> int:
        """Adds an op and returns its id.

        inputs: tensor ids or names (None = absent optional input).
        outputs: tensor ids, or names: an existing tensor of that name is used,
        otherwise an activation is declared (dtype/shape filled by inference).
        attrs: dict of int/bool/float/str or lists of ints/floats/strs.
        """
        # Everything that can fail on the Python side is checked before output
        # tensors are declared (the C API cannot remove a tensor again).
        in_ids = [INVALID_ID if x is None else self._tensor_id(x, "op input") for x in inputs]
        count = self.tensor_count
        for i, t in enumerate(in_ids):
            if t != INVALID_ID and t >= count:
                raise InvalidArgumentError("failed to add op '%s' (%s): inputs[%d]=%d is not a tensor of graph '%s'"
                                    % (name, type, i, t, self.name))
        keep = []
        attr_list = [_build_attr(k, v, keep) for k, v in (attrs or {}).items()]
        outputs = list(outputs)
        for x in outputs:
            if not isinstance(x, str):
                t = self._tensor_id(x, "op output")
                if t >= count:
                    raise InvalidArgumentError("failed to add op '%s' (%s): output tensor id %d is not in graph '%s'"
                                        % (name, type, t, self.name))
        out_ids = []
        for x in outputs:
            if isinstance(x, str):
                out = _ffi.qairt_tensor_id()
                try:
                    _ffi.qairt_graph_find_tensor(self.handle, _enc(x), ctypes.byref(out))
                    out_ids.append(out.value)
                except NotFoundError:
                    out_ids.append(self.add_tensor(x))
            else:
                out_ids.append(self._tensor_id(x, "op output"))
        d = _ffi.new_struct(_ffi.OpDesc)
        _ffi.qairt_op_desc_init(ctypes.byref(d))
        d.type = _enc(type)
        d.name = _enc(name)
        in_arr = (_ffi.qairt_tensor_id * len(in_ids))(*in_ids)
        out_arr = (_ffi.qairt_tensor_id * len(out_ids))(*out_ids)
        attr_arr = (_ffi.Attr * len(attr_list))(*attr_list)
        d.num_inputs, d.inputs = len(in_ids), in_arr
        d.num_outputs, d.outputs = len(out_ids), out_arr
        d.num_attrs, d.attrs = len(attr_list), attr_arr
        d.source_name = _enc(source_name)
        d.source_op_type = _enc(source_op_type)
        out = _ffi.qairt_op_id()
        _ffi.qairt_graph_add_op(self.handle, ctypes.byref(d), ctypes.byref(out))
        return out.value

    def mark_output(self, tensor: TensorRef) -> None:
        """Marks a tensor (id or name) as a graph output; call order = output order."""
        _ffi.qairt_graph_mark_output(self.handle, self._tensor_id(tensor))

    def set_op_input(self, op, slot: int, tensor: Optional[TensorRef]) -> None:
        """Rewires input `slot` of `op` (None = absent)."""
        t = INVALID_ID if tensor is None else self._tensor_id(tensor)
        _ffi.qairt_graph_set_op_input(self.handle, self._op_id(op), int(slot), t)

    def infer_shapes(self) -> None:
        _ffi.qairt_graph_infer_shapes(self.handle)

    # ---- validation -----------------------------------------------------------------
    def _validate(self):
        """(diagnostics list, ValidationError or None)."""
        dh = _ffi.DiagnosticsP()
        err = None
        try:
            _ffi.qairt_graph_validate(self.handle, ctypes.byref(dh))
        except ValidationError as e:
            err = e
        try:
            diags = _read_diagnostics(dh) if dh else []
        finally:
            _ffi.qairt_diagnostics_destroy(dh)
        if err is not None:
            if not diags:  # library left out_diagnostics unset: fall back on the message
                diags = [Diagnostic("error", "unknown", None, None, "", line)
                         for line in err.message.splitlines() if line.strip()]
            err.diagnostics = diags
        return diags, err

    def validate(self) -> List[Diagnostic]:
        """Checks the whole graph. Raises ValidationError (with .diagnostics)
        on any error-severity problem; otherwise returns the diagnostics
        (warnings and notes, possibly empty)."""
        diags, err = self._validate()
        if err is not None:
            raise err
        return diags

    def diagnostics(self) -> List[Diagnostic]:
        """Every diagnostic of validation, never raising for an invalid graph."""
        return self._validate()[0]

    def is_valid(self) -> bool:
        return self._validate()[1] is None

    # ---- introspection ---------------------------------------------------------------
    @property
    def name(self) -> str:
        return _dec(_ffi.qairt_graph_name(self.handle))

    @property
    def tensor_count(self) -> int:
        return int(_ffi.qairt_graph_tensor_count(self.handle))

    @property
    def op_count(self) -> int:
        return int(_ffi.qairt_graph_op_count(self.handle))

    @property
    def inputs(self) -> List[int]:
        """Graph input tensor ids, in order."""
        h = self.handle
        return [int(_ffi.qairt_graph_input(h, i)) for i in range(_ffi.qairt_graph_input_count(h))]

    @property
    def outputs(self) -> List[int]:
        """Graph output tensor ids, in order."""
        h = self.handle
        return [int(_ffi.qairt_graph_output(h, i)) for i in range(_ffi.qairt_graph_output_count(h))]

    def find_tensor(self, name: str) -> int:
        """Id of the tensor called `name`; raises NotFoundError."""
        out = _ffi.qairt_tensor_id()
        _ffi.qairt_graph_find_tensor(self.handle, _enc(name), ctypes.byref(out))
        return out.value

    def find_op(self, name: str) -> int:
        """Id of the op called `name`; raises NotFoundError."""
        out = _ffi.qairt_op_id()
        _ffi.qairt_graph_find_op(self.handle, _enc(name), ctypes.byref(out))
        return out.value

    def has_tensor(self, name: str) -> bool:
        try:
            self.find_tensor(name)
            return True
        except NotFoundError:
            return False

    def tensor(self, tensor: TensorRef) -> TensorInfo:
        """TensorInfo of a tensor given by id or name."""
        h = self.handle
        tid = self._tensor_id(tensor)
        info = _ffi.new_struct(_ffi.TensorInfo)
        _ffi.qairt_graph_tensor_info(h, tid, ctypes.byref(info))
        shape = None
        if info.rank_known:
            shape = []
            for i in range(info.rank):
                v = int(info.dims[i])
                if v >= 0:
                    shape.append(v)
                    continue
                sym = ctypes.c_char_p()
                _ffi.qairt_graph_tensor_dim_symbol(h, tid, i, ctypes.byref(sym))
                shape.append(_dec(sym.value) if sym.value else None)
        consumers, slots = [], []
        op, slot = _ffi.qairt_op_id(), ctypes.c_uint32()
        for i in range(info.num_consumers):
            _ffi.qairt_graph_tensor_consumer(h, tid, i, ctypes.byref(op), ctypes.byref(slot))
            consumers.append(op.value)
            slots.append(slot.value)
        has_producer = info.producer != INVALID_ID
        return TensorInfo(
            id=tid,
            name=_dec(info.name),
            dtype=_name_of_dtype_code(info.dtype),
            role=_ROLE_NAMES.get(info.role, "unknown(%d)" % info.role),
            shape=shape,
            producer=int(info.producer) if has_producer else None,
            producer_slot=int(info.producer_slot) if has_producer else None,
            consumers=consumers,
            consumer_slots=slots,
            has_encoding=bool(info.has_encoding),
            static_data_size=int(info.static_data_size),
            static_data_borrowed=bool(info.static_data_borrowed),
        )

    def tensor_data(self, tensor: TensorRef) -> bytes:
        """A copy of a static tensor's bytes."""
        ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
        _ffi.qairt_graph_tensor_data(self.handle, self._tensor_id(tensor), ctypes.byref(ptr),
                                     ctypes.byref(size))
        return ctypes.string_at(ptr.value, size.value) if size.value else b""

    def op(self, op) -> OpInfo:
        """OpInfo of an op given by id or name."""
        h = self.handle
        oid = self._op_id(op)
        info = _ffi.new_struct(_ffi.OpInfo)
        _ffi.qairt_graph_op_info(h, oid, ctypes.byref(info))
        attrs = {}
        a = _ffi.Attr()
        for i in range(info.num_attrs):
            _ffi.qairt_graph_op_attr(h, oid, i, ctypes.byref(a))
            attrs[_dec(a.name)] = _read_attr(a)
        return OpInfo(
            id=oid,
            type=_dec(info.type),
            name=_dec(info.name),
            inputs=[None if info.inputs[i] == INVALID_ID else int(info.inputs[i])
                    for i in range(info.num_inputs)],
            outputs=[int(info.outputs[i]) for i in range(info.num_outputs)],
            attrs=attrs,
            source_name=_dec(info.source_name) or None,
            source_op_type=_dec(info.source_op_type) or None,
        )

    def op_attr(self, op, name: str):
        """One attribute's value; raises NotFoundError if the op lacks it."""
        a = _ffi.Attr()
        _ffi.qairt_graph_op_find_attr(self.handle, self._op_id(op), _enc(name), ctypes.byref(a))
        return _read_attr(a)

    def tensors(self) -> List[TensorInfo]:
        return [self.tensor(i) for i in range(self.tensor_count)]

    def ops(self) -> List[OpInfo]:
        return [self.op(i) for i in range(self.op_count)]

    def topological_order(self) -> List[int]:
        """Op ids in a stable topological order; raises ValidationError on a cycle."""
        h = self.handle
        while True:
            n = ctypes.c_size_t(0)
            _ffi.qairt_graph_topological_order(h, None, 0, ctypes.byref(n))
            cap = n.value
            buf = (_ffi.qairt_op_id * max(cap, 1))()
            try:
                _ffi.qairt_graph_topological_order(h, buf, cap, ctypes.byref(n))
            except BufferTooSmallError:  # cannot happen single-threaded; be safe
                continue
            return [int(buf[i]) for i in range(n.value)]

    def summary_json(self) -> str:
        """The library's JSON summary (qairt_graph_summary_json)."""
        h = self.handle
        while True:
            n = ctypes.c_size_t(0)
            _ffi.qairt_graph_summary_json(h, None, 0, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value + 1)
            try:
                _ffi.qairt_graph_summary_json(h, buf, n.value + 1, ctypes.byref(n))
            except BufferTooSmallError:
                continue
            return buf.raw[:n.value].decode("utf-8")

    def summary(self) -> dict:
        """The JSON summary parsed into a dict."""
        return json.loads(self.summary_json())

    # ---- comparison -------------------------------------------------------------
    def compare(self, other: "Graph", max_diff: int = 4096) -> Tuple[bool, str]:
        """(equal, first difference or "")."""
        if not isinstance(other, Graph):
            raise _invalid("can only compare with a Graph, got %s" % type(other).__name__)
        eq = ctypes.c_int32(0)
        buf = ctypes.create_string_buffer(max_diff)
        _ffi.qairt_graph_compare(self.handle, other.handle, ctypes.byref(eq), buf, max_diff)
        return bool(eq.value), _dec(buf.value)

    def __eq__(self, other):
        if not isinstance(other, Graph):
            return NotImplemented
        if self is other:
            return True
        return self.compare(other)[0]

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    __hash__ = None

    # ---- encodings ---------------------------------------------------------------
    def set_encoding(self, tensor: TensorRef, encoding: Encoding) -> None:
        """Validates `encoding` against the tensor and attaches a copy.
        Raises ValidationError whose message names the tensor and field."""
        if not isinstance(encoding, Encoding):
            raise _invalid("set_encoding needs a qairt.Encoding, got %s" % type(encoding).__name__)
        tid = self._tensor_id(tensor)
        eh = encoding._to_handle()
        try:
            _ffi.qairt_graph_set_encoding(self.handle, tid, eh)
        finally:
            _ffi.qairt_encoding_destroy(eh)

    def get_encoding(self, tensor: TensorRef) -> Optional[Encoding]:
        """The tensor's encoding, or None."""
        eh = _ffi.EncodingP()
        _ffi.qairt_graph_get_encoding(self.handle, self._tensor_id(tensor), ctypes.byref(eh))
        if not eh:
            return None
        try:
            return Encoding._from_handle(eh)
        finally:
            _ffi.qairt_encoding_destroy(eh)

    def clear_encoding(self, tensor: TensorRef) -> None:
        _ffi.qairt_graph_clear_encoding(self.handle, self._tensor_id(tensor))

    def __repr__(self):
        if not self._h:
            return "<qairt.Graph (closed)>"
        return "<qairt.Graph %r: %d tensors, %d ops>" % (self.name, self.tensor_count, self.op_count)


def _read_diagnostics(dh) -> List[Diagnostic]:
    out = []
    d = _ffi.new_struct(_ffi.Diagnostic)
    for i in range(_ffi.qairt_diagnostics_count(dh)):
        d.struct_size = ctypes.sizeof(_ffi.Diagnostic)
        _ffi.qairt_diagnostics_get(dh, i, ctypes.byref(d))
        out.append(Diagnostic(
            severity=_SEVERITY_NAMES.get(d.severity, "unknown(%d)" % d.severity),
            kind=_DIAG_KIND_NAMES.get(d.kind, "unknown(%d)" % d.kind),
            op=None if d.op == INVALID_ID else int(d.op),
            tensor=None if d.tensor == INVALID_ID else int(d.tensor),
            field=_dec(d.field),
            message=_dec(d.message),
        ))
    return out


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
