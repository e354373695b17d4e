"""``qairt.Graph``: a qairt_graph_t owned by Python, with its lifetime
(close / ``with``, clone), construction (inputs, constants, tensors, ops,
outputs, shape inference), validation, comparison and per-tensor encodings.
The read-only queries come from ``graph_info.GraphQueries``.
"""

import ctypes
import os
from typing import List, Optional, Tuple

from . import _ffi
from .errors import InvalidArgumentError, NotFoundError, ValidationError
from .graph_info import Diagnostic, GraphQueries, OpInfo, TensorInfo, TensorRef, _read_diagnostics
from .library import INVALID_ID, _dec, _dtype_code, _enc, _invalid, _np
from .op_attrs import _build_attr, _is_int
from .tensor_encoding import Encoding


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


class Graph(GraphQueries):
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
