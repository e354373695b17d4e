"""What a graph holds, read back from the library: the snapshot types
(``TensorInfo``, ``OpInfo``, ``Diagnostic``) and ``GraphQueries``, the
read-only queries of ``qairt.Graph`` (names, counts, tensors, ops,
attributes, topological order, JSON summary). ``graph.py`` builds on it.
"""

import ctypes
import json
from dataclasses import dataclass
from typing import List, Optional, Union

from . import _ffi
from .errors import BufferTooSmallError, InvalidArgumentError, NotFoundError
from .library import INVALID_ID, _dec, _enc, _name_of_dtype_code
from .op_attrs import _read_attr

_ROLE_NAMES = {1: "input", 2: "output", 3: "input_output", 4: "static", 5: "activation"}
_SEVERITY_NAMES = {1: "error", 2: "warning", 3: "note"}
_DIAG_KIND_NAMES = {
    1: "cycle", 2: "duplicate_tensor_name", 3: "duplicate_op_name", 4: "dangling_tensor",
    5: "missing_producer", 6: "multiple_producers", 7: "dtype_mismatch", 8: "shape_mismatch",
    9: "arity", 10: "attribute", 11: "unknown_op_type", 12: "invalid_encoding", 13: "no_outputs",
    14: "static_data",
}



@dataclass
class Diagnostic:
    """One problem, from any part of the library: graph validation,
    processing (ProcessResult.diagnostics), a conversion
    (ConvertResult.diagnostics).

    severity: "error" | "warning" | "note"; code: the stable rule id (e.g.
    "shape-mismatch", "no-kernel", "unknown-tensor"); field: e.g. "inputs[1]"
    ("" if none). Graph validation also gives kind (e.g. "shape_mismatch")
    and the op / tensor ids (None otherwise); op_name / tensor_name name them
    whenever known; file, line, column locate a problem in a source file
    (0 = no location).
    """

    severity: str
    kind: str
    op: Optional[int]
    tensor: Optional[int]
    field: str
    message: str
    code: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    op_name: str = ""
    tensor_name: str = ""
    suggestion: str = ""

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


TensorRef = Union[int, str]


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
            code=_dec(d.code),
            file=_dec(d.file),
            line=int(d.line),
            column=int(d.column),
            op_name=_dec(d.op_name),
            tensor_name=_dec(d.tensor_name),
            suggestion=_dec(d.suggestion),
        ))
    return out


_REPORT_FORMATS = {"text": 1, "json": 2, "sarif": 3}  # qairt_report_format


class DiagnosticList(list):
    """Diagnostics of a result (a list of Diagnostic) that also renders them
    as the library does: ``render("sarif")`` is a SARIF 2.1.0 log for an IDE
    or code-scanning tool, ``render("json")`` / ``render("text")`` the other
    forms of qairt_diagnostics_render."""

    def __init__(self, items=(), rendered=None):
        super().__init__(items)
        self._rendered = rendered or {}

    def render(self, fmt: str = "text") -> str:
        if fmt not in _REPORT_FORMATS:
            raise InvalidArgumentError("format must be text, json or sarif, got %r" % (fmt,))
        return self._rendered.get(fmt, "")


def _read_diagnostic_list(dh) -> DiagnosticList:
    """Copies a borrowed qairt_diagnostics_t* (ABI 1.8) with its renderings."""
    rendered = {}
    for name, code in _REPORT_FORMATS.items():
        n = ctypes.c_size_t(0)
        _ffi.qairt_diagnostics_render(dh, code, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _ffi.qairt_diagnostics_render(dh, code, buf, n.value + 1, ctypes.byref(n))
        rendered[name] = buf.raw[:n.value].decode("utf-8")
    return DiagnosticList(_read_diagnostics(dh), rendered)



class GraphQueries:
    """The read-only queries of a Graph (a base class of qairt.Graph, which
    provides ``handle``, ``_tensor_id`` and ``_op_id``)."""

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
