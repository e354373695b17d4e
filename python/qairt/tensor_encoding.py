"""The encoding of one tensor: ``qairt.Encoding``, a Python value converted
to and from the library's qairt_encoding_t (include/qairt/qairt.h).

Encodings *files* (AIMET / QAIRT JSON, qairt_encodings.h) are in
``encodings.py``.
"""

import ctypes
import struct
from dataclasses import dataclass, field
from typing import List, Optional

from . import _ffi
from .library import _dec, _dtype_code, _enc, _invalid, _name_of_dtype_code, dtype_bitwidth, dtype_name

_KIND_CODES = {"float": 1, "per_tensor": 2, "per_channel": 3, "per_block": 4, "lpbq": 5, "array_of": 6}
_KIND_NAMES = {v: k for k, v in _KIND_CODES.items()}
_SYMMETRY_CODES = {"asymmetric": 0, "symmetric": 1, "strict_symmetric": 2, "unsigned_symmetric": 3}
_SYMMETRY_NAMES = {v: k for k, v in _SYMMETRY_CODES.items()}


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
