"""The .qairt container (include/qairt/qairt_container.h) from Python.

A container holds a processed graph (every tensor, encoding, quantized and
packed static byte) plus what the converter decided: the target name, the
resolved options namespace (each option's final value and whether it came
from the default, the user or the target), the kernel selected per op and
why each tensor was touched::

    import qairt
    qairt.write_container(graph, "model.qairt", target="htp_v73",
                          options=[("act_bitwidth", "8", "user")])
    c = qairt.Container.load("model.qairt")
    c.target, c.option("act_bitwidth").source     # 'htp_v73', 'user'
    c.graph == graph                               # True: lossless

Writing is deterministic and atomic; loading checks every field and raises a
QairtError subclass naming it (ParseError, UnsupportedError, ValidationError).
"""

import ctypes
from dataclasses import dataclass
from typing import List, Optional

from . import _ffi, errors

__all__ = ["Container", "ContainerOption", "OpAnnotation", "TensorNote", "write_container", "OPTION_SOURCES"]

OPTION_SOURCES = ("default", "user", "target")
_dec = _ffi.decode
_enc = _ffi.encode


@dataclass
class ContainerOption:
    """One entry of the resolved options namespace."""

    key: str
    value: str = ""
    source: str = "default"  # "default" | "user" | "target"


@dataclass
class OpAnnotation:
    """What kernel selection decided for one op (super_group -1 = none)."""

    op_name: str
    kernel: str = ""
    super_group: int = -1
    adapted: bool = False


@dataclass
class TensorNote:
    """Why the passes touched a tensor ('^'-joined reason tokens)."""

    tensor_name: str
    reasons: str = ""


def _as_option(o) -> ContainerOption:
    if isinstance(o, ContainerOption):
        return o
    if isinstance(o, (tuple, list)) and 1 <= len(o) <= 3:
        return ContainerOption(*o)
    raise errors.InvalidArgumentError("an option must be a ContainerOption or (key, value[, source]), got %r" % (o,))


def _source_code(source: str) -> int:
    try:
        return OPTION_SOURCES.index(source)
    except ValueError:
        raise errors.InvalidArgumentError("option source must be one of %s, got %r"
                                          % (", ".join(OPTION_SOURCES), source)) from None


def _write_options(target, options, op_annotations, tensor_notes, keep, stats_summary=""):
    """A filled qairt_container_write_options; `keep` holds the buffers alive."""
    if isinstance(options, dict):
        options = [ContainerOption(k, v, "user") for k, v in options.items()]
    opts = [_as_option(o) for o in (options or [])]
    anns = [a if isinstance(a, OpAnnotation) else OpAnnotation(*a) for a in (op_annotations or [])]
    notes = [n if isinstance(n, TensorNote) else TensorNote(*n) for n in (tensor_notes or [])]
    o_arr = (_ffi.ContainerOption * max(len(opts), 1))()
    for i, o in enumerate(opts):
        o_arr[i].key = _enc(o.key)
        o_arr[i].value = _enc(str(o.value))
        o_arr[i].source = _source_code(o.source)
    a_arr = (_ffi.ContainerOpAnnotation * max(len(anns), 1))()
    for i, a in enumerate(anns):
        a_arr[i].op_name = _enc(a.op_name)
        a_arr[i].kernel = _enc(a.kernel or "")
        a_arr[i].super_group = int(a.super_group)
        a_arr[i].adapted = 1 if a.adapted else 0
    n_arr = (_ffi.ContainerTensorNote * max(len(notes), 1))()
    for i, n in enumerate(notes):
        n_arr[i].tensor_name = _enc(n.tensor_name)
        n_arr[i].reasons = _enc(n.reasons or "")
    keep.extend([o_arr, a_arr, n_arr])
    w = _ffi.new_struct(_ffi.ContainerWriteOptions)
    _ffi.qairt_container_write_options_init(ctypes.byref(w))
    # A qairt.Target names itself; a string is the name as given.
    w.target_name = _enc(target if target is None or isinstance(target, str) else target.name)
    w.num_options, w.options = len(opts), o_arr
    w.num_op_annotations, w.op_annotations = len(anns), a_arr
    w.num_tensor_notes, w.tensor_notes = len(notes), n_arr
    w.stats_summary = _enc(stats_summary) if stats_summary else None
    return w


def write_container(graph, path: Optional[str] = None, *, target=None, options=(),
                    op_annotations=(), tensor_notes=(), stats_summary: str = ""):
    """Writes `graph` and the metadata as a .qairt container to `path`
    (atomically) and returns None, or returns the bytes when path is None.

    target: the target's name, a qairt.Target, or None.
    options: ContainerOption objects, (key, value[, source]) tuples, or a dict
    {key: value} (source "user"), in namespace order. op_annotations /
    tensor_notes: OpAnnotation / TensorNote objects or tuples.
    stats_summary: the processing's stats summary to keep with the graph (ABI 1.9).
    """
    keep = []
    w = _write_options(target, options, op_annotations, tensor_notes, keep, stats_summary)
    if path is not None:
        _ffi.qairt_container_write_file(graph.handle, _enc(str(path)), ctypes.byref(w))
        return None
    while True:
        n = ctypes.c_size_t(0)
        _ffi.qairt_container_write_bytes(graph.handle, ctypes.byref(w), None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(max(n.value, 1))
        try:
            _ffi.qairt_container_write_bytes(graph.handle, ctypes.byref(w), buf, n.value, ctypes.byref(n))
        except errors.BufferTooSmallError:  # pragma: no cover - sizes are deterministic
            continue
        return buf.raw[:n.value]


class Container:
    """A loaded .qairt container (immutable snapshot).

    graph: a qairt.Graph (its own copy; static data shared with the file's
    mapping). target, producer, schema_version, min_reader_version; options,
    op_annotations, tensor_notes: lists in stored order.
    """

    def __init__(self, handle):
        from . import Graph  # late: qairt/__init__ imports this module
        try:
            info = _ffi.new_struct(_ffi.ContainerInfo)
            _ffi.qairt_container_get_info(handle, ctypes.byref(info))
            self.producer = _dec(info.producer)
            self.target = _dec(info.target_name)
            self.schema_version = int(info.schema_version)
            self.min_reader_version = int(info.min_reader_version)
            # The processing's stats summary ("" if none, or from a library before ABI 1.9).
            self.stats_summary = _dec(info.stats_summary) or ""
            self.options: List[ContainerOption] = []
            o = _ffi.ContainerOption()
            for i in range(info.num_options):
                _ffi.qairt_container_option_at(handle, i, ctypes.byref(o))
                self.options.append(ContainerOption(_dec(o.key), _dec(o.value) or "",
                                                    _dec(_ffi.qairt_option_source_name(o.source))))
            self.op_annotations: List[OpAnnotation] = []
            a = _ffi.ContainerOpAnnotation()
            for i in range(info.num_op_annotations):
                _ffi.qairt_container_op_annotation_at(handle, i, ctypes.byref(a))
                self.op_annotations.append(OpAnnotation(_dec(a.op_name), _dec(a.kernel) or "", int(a.super_group),
                                                        bool(a.adapted)))
            self.tensor_notes: List[TensorNote] = []
            n = _ffi.ContainerTensorNote()
            for i in range(info.num_tensor_notes):
                _ffi.qairt_container_tensor_note_at(handle, i, ctypes.byref(n))
                self.tensor_notes.append(TensorNote(_dec(n.tensor_name), _dec(n.reasons) or ""))
            g = _ffi.GraphP()
            _ffi.qairt_container_get_graph(handle, ctypes.byref(g))
            self.graph = Graph(_handle=g)
        finally:
            _ffi.qairt_container_destroy(handle)

    @classmethod
    def load(cls, path) -> "Container":
        """Loads a .qairt file (static data memory-mapped)."""
        h = _ffi.ContainerP()
        _ffi.qairt_container_load_file(_enc(str(path)), ctypes.byref(h))
        return cls(h)

    @classmethod
    def from_bytes(cls, data: bytes) -> "Container":
        """Loads a container from bytes (copied)."""
        data = bytes(data)
        h = _ffi.ContainerP()
        _ffi.qairt_container_load_bytes(data, len(data), ctypes.byref(h))
        return cls(h)

    def option(self, key: str) -> ContainerOption:
        """The option called `key`; raises NotFoundError."""
        for o in self.options:
            if o.key == key:
                return o
        raise errors.NotFoundError("the container has no option %r" % key)

    @property
    def options_dict(self) -> dict:
        """{key: value} in namespace order."""
        return {o.key: o.value for o in self.options}

    def __repr__(self):
        return "<qairt.Container target=%r: %d tensors, %d ops, %d options>" % (
            self.target, self.graph.tensor_count, self.graph.op_count, len(self.options))
