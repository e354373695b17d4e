"""The reference CPU executor (include/qairt/qairt_exec.h) with numpy arrays.

    import qairt, numpy as np
    g, _ = qairt.import_onnx("model.onnx", define_symbols={"batch": 1})
    with qairt.Executor(g) as ex:
        outs = ex.run({"image": np.zeros((1, 3, 224, 224), np.float32)})  # name -> array

Inputs are given in each graph input's dtype (``ex.inputs`` lists names,
dtypes and shapes); outputs come back as numpy arrays in their dtype, with
fixed-point and bfloat16 outputs returned as float32. ``observer`` is called
after each op for each output tensor with (name, array); the array is a copy
only if you keep it (it is a view of the executor's buffer during the call).
"""

import ctypes
from collections import OrderedDict
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _ffi
from .errors import QairtError

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

__all__ = ["Executor", "NO_QUANT_SIM"]

NO_QUANT_SIM = 1

# dtype enum value -> numpy dtype name (the executor's external dtypes).
_NP = {1: "float32", 2: "float16", 4: "float64", 5: "bool", 8: "int8", 9: "int16", 10: "int32", 11: "int64",
       14: "uint8", 15: "uint16", 16: "uint32", 17: "uint64"}


def _need_numpy():
    if np is None:
        raise ImportError("qairt.Executor needs numpy")


class TensorSpec:
    """Name, dtype (numpy) and shape of an executor input or output."""

    def __init__(self, name, dtype_code, shape, byte_size):
        self.name = name
        self.dtype_code = dtype_code
        self.dtype = _NP.get(dtype_code)
        self.shape = tuple(shape)
        self.byte_size = byte_size

    def __repr__(self):
        return "TensorSpec(%r, %s, %s)" % (self.name, self.dtype or "dtype#%d" % self.dtype_code, self.shape)


class Executor:
    """Runs a qairt.Graph on the CPU. Close it with close() or a `with` block."""

    def __init__(self, graph, num_threads: int = 1, simulate_quantization: bool = True):
        _need_numpy()
        opts = _ffi.new_struct(_ffi.ExecutorOptions)
        _ffi.qairt_executor_options_init(ctypes.byref(opts))
        opts.num_threads = int(num_threads)
        opts.flags = 0 if simulate_quantization else NO_QUANT_SIM
        h = _ffi.ExecutorP()
        _ffi.qairt_executor_create(graph._h, ctypes.byref(opts), ctypes.byref(h))
        self._h = h
        self._observer_ref = None
        self.inputs = [self._info(_ffi.qairt_executor_input_info, i)
                       for i in range(_ffi.qairt_executor_input_count(h))]
        self.outputs = [self._info(_ffi.qairt_executor_output_info, i)
                        for i in range(_ffi.qairt_executor_output_count(h))]

    def _info(self, fn, i):
        info = _ffi.new_struct(_ffi.ExecTensorInfo)
        fn(self._h, i, ctypes.byref(info))
        return TensorSpec(_ffi.decode(info.name), info.dtype, [info.dims[k] for k in range(info.rank)],
                          info.byte_size)

    _destroy = staticmethod(_ffi.qairt_executor_destroy)

    def close(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            self._destroy(h)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def stats(self) -> dict:
        """Memory plan: op_count, arena_bytes, unplanned_bytes, static_copied_bytes, static_borrowed_bytes."""
        st = _ffi.new_struct(_ffi.ExecStats)
        _ffi.qairt_executor_stats(self._h, ctypes.byref(st))
        return {k: getattr(st, k) for k, _ in _ffi.ExecStats._fields_ if k not in ("struct_size", "reserved")}

    def run(self, inputs: Union[Mapping[str, "np.ndarray"], Sequence["np.ndarray"]],
            observer: Optional[Callable[[str, "np.ndarray"], None]] = None) -> "OrderedDict[str, np.ndarray]":
        """Runs one inference; returns output name -> numpy array (in graph-output order)."""
        if self._h is None:
            raise QairtError("the executor is closed")
        if isinstance(inputs, Mapping):
            names = [s.name for s in self.inputs]
            unknown = sorted(set(inputs) - set(names))
            if unknown:
                raise QairtError("unknown input name(s) %s; the graph's inputs are %s" % (unknown, names))
            missing = [n for n in names if n not in inputs]
            if missing:
                raise QairtError("missing input(s) %s" % missing)
            arrays = [inputs[n] for n in names]
        else:
            arrays = list(inputs)
            if len(arrays) != len(self.inputs):
                raise QairtError("the graph has %d inputs but %d arrays were given" % (len(self.inputs), len(arrays)))
        keep = []
        for spec, a in zip(self.inputs, arrays):
            a = np.asarray(a)
            if spec.dtype is not None and a.dtype != np.dtype(spec.dtype):
                raise QairtError("input '%s' must be %s, got %s" % (spec.name, spec.dtype, a.dtype))
            if tuple(a.shape) != spec.shape:
                raise QairtError("input '%s' must have shape %s, got %s" % (spec.name, spec.shape, tuple(a.shape)))
            keep.append(np.ascontiguousarray(a))
        n = len(keep)
        ptrs = (ctypes.c_void_p * max(n, 1))(*[a.ctypes.data for a in keep])
        sizes = (ctypes.c_size_t * max(n, 1))(*[a.nbytes for a in keep])
        errors = []
        if observer is not None:
            def _cb(_user, name, dtype, rank, dims, data, size):
                try:
                    shape = tuple(dims[k] for k in range(rank))
                    buf = (ctypes.c_char * size).from_address(data) if size else b""
                    arr = np.frombuffer(buf, dtype=_NP.get(dtype, "uint8")).reshape(shape)
                    observer(_ffi.decode(name), arr)
                    return 0
                except BaseException as e:  # reported after the run
                    errors.append(e)
                    return 1
            cb = _ffi.ExecObserverFn(_cb)
        else:
            cb = _ffi.ExecObserverFn()
        _ffi.qairt_executor_set_observer(self._h, cb, None)
        try:
            _ffi.qairt_executor_run(self._h, ptrs, sizes, n)
        except QairtError:
            if errors:
                raise errors[0]
            raise
        finally:
            _ffi.qairt_executor_set_observer(self._h, _ffi.ExecObserverFn(), None)
        out = OrderedDict()
        for i, spec in enumerate(self.outputs):
            arr = np.empty(spec.shape, dtype=spec.dtype or "float32")
            size = ctypes.c_size_t(0)
            _ffi.qairt_executor_get_output(self._h, i, arr.ctypes.data if arr.nbytes else None, arr.nbytes,
                                           ctypes.byref(size))
            out[spec.name] = arr
        return out
