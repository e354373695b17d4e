"""Target descriptors (include/qairt/qairt_target.h) from Python.

A target describes what a backend can execute: per QNN op type, the kernels
(precision configurations) with the dtypes and constraints of each slot, plus
data-movement ops, super groups, conversions and capability flags::

    import qairt
    t = qairt.Target.load("htp_v73")          # built-in name or a file
    t.capabilities["fp16_compute"]             # True
    [k.name for k in t.kernels("MatMul")]      # ['a8w8', 'a16w8', 'a16w16', ...]
    qairt.Target.for_soc("SM8550").name        # 'htp_v73'
    print(qairt.Target.load("htp_v68").diff(t))

Targets are immutable; a Target object may be shared between threads.
"""

import ctypes
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import _ffi, errors

__all__ = ["Target", "Kernel", "KernelSlot", "FixedEncoding", "builtin_targets", "CAPABILITIES"]

_P = ctypes.POINTER
c_size_t, c_uint32, c_int32, c_uint64, c_char_p = (ctypes.c_size_t, ctypes.c_uint32, ctypes.c_int32,
                                                   ctypes.c_uint64, ctypes.c_char_p)
qairt_dtype_t = _ffi.qairt_dtype_t


class TargetHandle(ctypes.Structure):
    """Opaque qairt_target_t."""


TargetP = _P(TargetHandle)


class TargetInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("backend", c_uint32), ("name", c_char_p), ("description", c_char_p),
        ("origin", c_char_p), ("arch_version", c_uint32), ("schema_version", c_uint32),
        ("min_reader_version", c_uint32), ("default_float_dtype", qairt_dtype_t), ("capabilities", c_uint64),
        ("num_ops", c_size_t), ("num_socs", c_size_t), ("num_data_movement_ops", c_size_t),
        ("num_super_groups", c_size_t), ("num_sources", c_size_t),
    ]


class TargetSoc(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("soc_model", c_uint32), ("name", c_char_p), ("vtcm_mb", c_uint32),
                ("reserved", c_uint32)]


class SuperGroup(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32), ("num_ops", c_size_t),
                ("ops", _P(c_char_p)), ("note", c_char_p)]


class KernelInfo(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("accuracy_preserving", c_uint32), ("name", c_char_p),
                ("num_inputs", c_size_t), ("num_outputs", c_size_t), ("variadic_inputs", c_uint32),
                ("reserved", c_uint32), ("note", c_char_p)]


class KernelSlotC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("role", c_uint32), ("optional", c_uint32), ("symmetry_mask", c_uint32),
        ("granularity_mask", c_uint32), ("channel_axis", c_int32), ("num_dtypes", c_size_t),
        ("dtypes", _P(qairt_dtype_t)), ("block_size_min", c_uint32), ("block_size_multiple", c_uint32),
        ("scale_rule", c_uint32), ("has_value_range", c_uint32), ("range_min", ctypes.c_double),
        ("range_max", ctypes.c_double), ("num_fixed_encodings", c_size_t), ("note", c_char_p),
    ]


class FixedEncodingC(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", qairt_dtype_t), ("offset", c_int32), ("reserved", c_uint32),
                ("scale", ctypes.c_double)]


_DECLS = [
    ("qairt_target_builtin_count", c_size_t, []),
    ("qairt_target_builtin_name", c_char_p, [c_size_t]),
    ("qairt_target_load_builtin", _ffi.StatusP, [c_char_p, _P(TargetP)]),
    ("qairt_target_load_file", _ffi.StatusP, [c_char_p, _P(TargetP)]),
    ("qairt_target_load_bytes", _ffi.StatusP, [ctypes.c_void_p, c_size_t, _P(TargetP)]),
    ("qairt_target_load", _ffi.StatusP, [c_char_p, _P(TargetP)]),
    ("qairt_target_for_soc", _ffi.StatusP, [c_char_p, _P(TargetP)]),
    ("qairt_target_destroy", None, [TargetP]),
    ("qairt_target_get_info", _ffi.StatusP, [TargetP, _P(TargetInfo)]),
    ("qairt_target_op_name", c_char_p, [TargetP, c_size_t]),
    ("qairt_target_data_movement_op", c_char_p, [TargetP, c_size_t]),
    ("qairt_target_source", c_char_p, [TargetP, c_size_t]),
    ("qairt_target_is_data_movement", c_int32, [TargetP, c_char_p]),
    ("qairt_target_conversion_ops", c_uint32, [TargetP, qairt_dtype_t, qairt_dtype_t]),
    ("qairt_target_get_soc", _ffi.StatusP, [TargetP, c_size_t, _P(TargetSoc)]),
    ("qairt_target_get_super_group", _ffi.StatusP, [TargetP, c_size_t, _P(SuperGroup)]),
    ("qairt_target_kernel_count", _ffi.StatusP, [TargetP, c_char_p, _P(c_size_t)]),
    ("qairt_target_kernel_info", _ffi.StatusP, [TargetP, c_char_p, c_size_t, _P(KernelInfo)]),
    ("qairt_target_kernel_slot", _ffi.StatusP, [TargetP, c_char_p, c_size_t, c_uint32, c_size_t, _P(KernelSlotC)]),
    ("qairt_target_kernel_fixed_encoding", _ffi.StatusP,
     [TargetP, c_char_p, c_size_t, c_uint32, c_size_t, c_size_t, _P(FixedEncodingC)]),
    ("qairt_target_find_kernel", _ffi.StatusP,
     [TargetP, c_char_p, _P(qairt_dtype_t), c_size_t, _P(qairt_dtype_t), c_size_t, _P(c_int32), _P(c_size_t)]),
    ("qairt_target_to_json", _ffi.StatusP, [TargetP, c_char_p, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_target_diff", _ffi.StatusP, [TargetP, TargetP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
]

# Names of the functions of qairt_target.h declared here (tests compare them
# with the header and capi/target.exports).
DECLARED = tuple(d[0] for d in _DECLS)

try:
    _fn = {name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS}
except AttributeError as _e:
    raise ImportError("qairt: %s does not export the target API of qairt_target.h (ABI 1.1): %s"
                      % (_ffi.library_path, _e)) from None

BACKENDS = {0: "unknown", 1: "HTP", 2: "LPAI", 3: "CPU", 4: "AIC", 5: "Custom"}
ROLES = {0: "activation", 1: "weight", 2: "bias", 3: "index"}
SCALE_RULES = {0: "none", 1: "product_of_inputs", 2: "same_as_input"}
SYMMETRIES = {0: "asymmetric", 1: "symmetric", 2: "strict_symmetric", 3: "unsigned_symmetric"}
GRANULARITIES = {1: "float", 2: "per_tensor", 3: "per_channel", 4: "per_block", 5: "lpbq", 6: "array_of"}
CONVERT_OPS = {0: "Convert", 1: "Cast", 2: "Quantize", 3: "Dequantize"}
CAPABILITIES = ("fp16_compute", "fp32_compute", "int16_activations", "a16w16", "int4_weights",
                "per_channel_weights", "block_weights", "lpbq_weights")
_SLOT_INPUT, _SLOT_OUTPUT = 0, 1


def _dec(b):
    return _ffi.decode(b)


def _short(code):
    return _dec(_ffi.qairt_dtype_short_name(code))


def _dtype(d):
    from . import _dtype_code  # the package's dtype parser (names, tokens, numpy dtypes)
    return _dtype_code(d)


def _mask(mask, names):
    return [n for bit, n in sorted(names.items()) if mask & (1 << bit)]


def builtin_targets() -> List[str]:
    """Names of the built-in descriptors."""
    return [_dec(_fn["qairt_target_builtin_name"](i)) for i in range(_fn["qairt_target_builtin_count"]())]


@dataclass
class FixedEncoding:
    dtype: str      # TRACE token, e.g. "u16"
    scale: float
    offset: int


@dataclass
class KernelSlot:
    """One input or output slot of a kernel. Empty symmetries/granularities mean "any"."""
    role: str
    dtypes: List[str]
    optional: bool = False
    symmetries: List[str] = field(default_factory=list)
    granularities: List[str] = field(default_factory=list)
    channel_axis: Optional[int] = None
    block_size_min: int = 0
    block_size_multiple: int = 0
    scale_rule: str = "none"
    value_range: Optional[Tuple[float, float]] = None
    fixed_encodings: List[FixedEncoding] = field(default_factory=list)
    note: str = ""


@dataclass
class Kernel:
    name: str
    inputs: List[KernelSlot]
    outputs: List[KernelSlot]
    variadic_inputs: bool = False
    accuracy_preserving: bool = True
    note: str = ""


class Target:
    """An immutable, loaded target descriptor."""

    def __init__(self, handle):
        self._h = handle
        info = _ffi.new_struct(TargetInfo)
        _fn["qairt_target_get_info"](self._h, ctypes.byref(info))
        self._info = info

    # -- construction -------------------------------------------------------
    @classmethod
    def _make(cls, fn, *args):
        h = TargetP()
        fn(*args, ctypes.byref(h))
        return cls(h)

    @classmethod
    def load(cls, name_or_path) -> "Target":
        """A built-in target by name, else a descriptor file (.qatd or .json)."""
        return cls._make(_fn["qairt_target_load"], _ffi.encode(str(name_or_path)))

    @classmethod
    def builtin(cls, name: str) -> "Target":
        return cls._make(_fn["qairt_target_load_builtin"], _ffi.encode(name))

    @classmethod
    def from_file(cls, path) -> "Target":
        return cls._make(_fn["qairt_target_load_file"], _ffi.encode(str(path)))

    @classmethod
    def from_bytes(cls, data) -> "Target":
        """From a compiled descriptor or JSON text (bytes, bytearray, str or dict)."""
        if isinstance(data, dict):
            data = json.dumps(data)
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
        return cls._make(_fn["qairt_target_load_bytes"], data, len(data))

    @classmethod
    def for_soc(cls, soc) -> "Target":
        """The built-in target of a SoC ("SM8550" or its QNN soc model number)."""
        return cls._make(_fn["qairt_target_for_soc"], _ffi.encode(str(soc)))

    def close(self):
        if self._h:
            _fn["qairt_target_destroy"](self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise errors.InvalidArgumentError("target is closed", code=errors.INVALID_ARGUMENT)
        return self._h

    # -- properties ---------------------------------------------------------
    name = property(lambda self: _dec(self._info.name))
    description = property(lambda self: _dec(self._info.description))
    origin = property(lambda self: _dec(self._info.origin))
    backend = property(lambda self: BACKENDS.get(self._info.backend, "unknown"))
    arch_version = property(lambda self: int(self._info.arch_version))
    schema_version = property(lambda self: int(self._info.schema_version))
    min_reader_version = property(lambda self: int(self._info.min_reader_version))

    @property
    def default_float_dtype(self) -> Optional[str]:
        code = self._info.default_float_dtype
        return None if code == 0 else _short(code)

    @property
    def capabilities(self) -> Dict[str, bool]:
        return {n: bool(self._info.capabilities >> i & 1) for i, n in enumerate(CAPABILITIES)}

    @property
    def ops(self) -> List[str]:
        h = self._handle()
        return [_dec(_fn["qairt_target_op_name"](h, i)) for i in range(self._info.num_ops)]

    @property
    def data_movement_ops(self) -> List[str]:
        h = self._handle()
        return [_dec(_fn["qairt_target_data_movement_op"](h, i)) for i in range(self._info.num_data_movement_ops)]

    @property
    def sources(self) -> List[str]:
        h = self._handle()
        return [_dec(_fn["qairt_target_source"](h, i)) for i in range(self._info.num_sources)]

    @property
    def socs(self) -> List[Tuple[str, int, int]]:
        """(name, QNN soc model id, VTCM MB) per SoC."""
        out = []
        for i in range(self._info.num_socs):
            s = _ffi.new_struct(TargetSoc)
            _fn["qairt_target_get_soc"](self._handle(), i, ctypes.byref(s))
            out.append((_dec(s.name), int(s.soc_model), int(s.vtcm_mb)))
        return out

    @property
    def super_groups(self) -> List[List[str]]:
        out = []
        for i in range(self._info.num_super_groups):
            g = _ffi.new_struct(SuperGroup)
            _fn["qairt_target_get_super_group"](self._handle(), i, ctypes.byref(g))
            out.append([_dec(g.ops[k]) for k in range(g.num_ops)])
        return out

    def is_data_movement(self, op_type: str) -> bool:
        return bool(_fn["qairt_target_is_data_movement"](self._handle(), _ffi.encode(op_type)))

    def conversion_ops(self, from_dtype, to_dtype) -> List[str]:
        """QNN ops that convert from_dtype to to_dtype on this target ([] if none)."""
        mask = _fn["qairt_target_conversion_ops"](self._handle(), _dtype(from_dtype), _dtype(to_dtype))
        return _mask(mask, CONVERT_OPS)

    # -- kernels ------------------------------------------------------------
    def kernels(self, op_type: str) -> List[Kernel]:
        """Kernels of an op ([] if the target has none). NotFoundError for an unknown op type."""
        h, op = self._handle(), _ffi.encode(op_type)
        n = c_size_t()
        _fn["qairt_target_kernel_count"](h, op, ctypes.byref(n))
        out = []
        for k in range(n.value):
            info = _ffi.new_struct(KernelInfo)
            _fn["qairt_target_kernel_info"](h, op, k, ctypes.byref(info))
            slots = []
            for direction, count in ((_SLOT_INPUT, info.num_inputs), (_SLOT_OUTPUT, info.num_outputs)):
                slots.append([self._slot(h, op, k, direction, i) for i in range(count)])
            out.append(Kernel(_dec(info.name), slots[0], slots[1], bool(info.variadic_inputs),
                              bool(info.accuracy_preserving), _dec(info.note)))
        return out

    def _slot(self, h, op, k, direction, i) -> KernelSlot:
        s = _ffi.new_struct(KernelSlotC)
        _fn["qairt_target_kernel_slot"](h, op, k, direction, i, ctypes.byref(s))
        fixed = []
        for e in range(s.num_fixed_encodings):
            fe = _ffi.new_struct(FixedEncodingC)
            _fn["qairt_target_kernel_fixed_encoding"](h, op, k, direction, i, e, ctypes.byref(fe))
            fixed.append(FixedEncoding(_short(fe.dtype), fe.scale, fe.offset))
        return KernelSlot(
            role=ROLES.get(s.role, "unknown"), dtypes=[_short(s.dtypes[j]) for j in range(s.num_dtypes)],
            optional=bool(s.optional), symmetries=_mask(s.symmetry_mask, SYMMETRIES),
            granularities=_mask(s.granularity_mask, GRANULARITIES),
            channel_axis=None if s.channel_axis < 0 else s.channel_axis, block_size_min=s.block_size_min,
            block_size_multiple=s.block_size_multiple, scale_rule=SCALE_RULES.get(s.scale_rule, "unknown"),
            value_range=(s.range_min, s.range_max) if s.has_value_range else None, fixed_encodings=fixed,
            note=_dec(s.note))

    def find_kernel(self, op_type: str, inputs, outputs=()) -> Optional[str]:
        """Name of the first kernel whose dtype sets take these dtypes (None = absent input), or None."""
        ins = (qairt_dtype_t * max(1, len(inputs)))(*[0 if d is None else _dtype(d) for d in inputs])
        outs = (qairt_dtype_t * max(1, len(outputs)))(*[_dtype(d) for d in outputs])
        found, index = c_int32(), c_size_t()
        _fn["qairt_target_find_kernel"](self._handle(), _ffi.encode(op_type), ins, len(inputs), outs, len(outputs),
                                        ctypes.byref(found), ctypes.byref(index))
        if not found.value:
            return None
        info = _ffi.new_struct(KernelInfo)
        _fn["qairt_target_kernel_info"](self._handle(), _ffi.encode(op_type), index.value, ctypes.byref(info))
        return _dec(info.name)

    # -- dumps --------------------------------------------------------------
    @staticmethod
    def _query(fn, *args) -> str:
        n = c_size_t()
        fn(*args, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        fn(*args, buf, len(buf), ctypes.byref(n))
        return buf.value.decode("utf-8")

    def to_json(self, op_type: Optional[str] = None) -> dict:
        """The descriptor (or one op's kernels) as a dict in the schema's JSON form."""
        return json.loads(self._query(_fn["qairt_target_to_json"], self._handle(), _ffi.encode(op_type)))

    def diff(self, other: "Target", as_json: bool = False):
        """What changes from self to other: text, or a dict when as_json."""
        text = self._query(_fn["qairt_target_diff"], self._handle(), other._handle(), 1 if as_json else 0)
        return json.loads(text) if as_json else text

    def __repr__(self):
        return "Target(%r, backend=%s, arch=%d, %d ops)" % (self.name, self.backend, self.arch_version,
                                                            self._info.num_ops)
