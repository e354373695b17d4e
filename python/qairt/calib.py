"""Post-training calibration and accuracy comparison (include/qairt/qairt_calib.h).

    import numpy as np, qairt
    from qairt.calib import calibrate, compare_input_list

    g, _ = qairt.import_onnx("model.onnx", define_symbols={"batch": 1})
    float_g = g.clone()
    samples = ({"x": np.load(p)} for p in paths)      # any iterable of {input: array}
    report = calibrate(g, samples, act_bitwidth=16, per_channel=True)
    # or: calibrate(g, input_list="calib/input_list.txt", ...)

Calibration fills every tensor without an encoding (overrides and Q-DQ
encodings are kept); the graph is changed in place. In-memory samples are
copied into one contiguous batch first (the C library then streams them one
at a time through the executor).
"""
import ctypes
from ctypes import POINTER, c_char_p, c_double, c_size_t, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass, field
from typing import Iterable, List, Mapping, Optional

from . import _ffi, errors

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

_P = POINTER
METHODS = {"min-max": 0, "sqnr": 1, "mse": 2, "percentile": 3, "seqmse": 4}
SCHEMAS = {"asymmetric": 0, "symmetric": 1, "unsignedsymmetric": 3}
PER_CHANNEL, PER_ROW, LPBQ, ADAPTIVE_ROUNDING = 1, 2, 4, 8
BIAS_CORRECTION = 32
WIDE_FIXED_RANGES = 64  # QAIRT_CALIBRATION_WIDE_FIXED_RANGES (1.18; needs a target)
COMPARE_PER_LAYER = 1


# qairt_progress_fn: void (*)(void* user_data, const char* phase, size_t done, size_t total)
ProgressFn = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_size_t, c_size_t)


def _progress_fn(progress):
    """A C callback calling progress(phase, done, total), or a NULL one."""
    if progress is None:
        return ProgressFn()
    return ProgressFn(lambda _user, phase, done, total: progress(_dec(phase), done, total))


class CalibrationOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("flags", c_uint32), ("act_method", c_uint32), ("param_method", c_uint32),
        ("act_schema", c_uint32), ("param_schema", c_uint32), ("act_bitwidth", c_uint32),
        ("weights_bitwidth", c_uint32), ("block_size", c_uint32), ("histogram_bins", c_uint32),
        ("num_threads", c_uint32), ("reserved", c_uint32), ("percentile", c_double),
        ("num_float_inputs", c_size_t), ("float_inputs", _P(c_char_p)),
        ("progress", ProgressFn), ("progress_user_data", c_void_p),
    ]


class Accuracy(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("reserved", c_uint32), ("name", c_char_p), ("sqnr_db", c_double),
        ("cosine", c_double), ("max_abs", c_double), ("argmax_agree", c_uint64),
        # ABI 1.19; an older library leaves them 0 (it writes no more than its own struct).
        ("argmax_positions", c_uint64), ("argmax_positions_agree", c_uint64),
    ]


class _Report(ctypes.Structure):
    pass


class _Compare(ctypes.Structure):
    pass


ReportP = _P(_Report)
CompareP = _P(_Compare)

_DECLS = [
    ("qairt_calibration_options_init", None, [_P(CalibrationOptions)]),
    ("qairt_calibrate_input_list", _ffi.StatusP, [_ffi.GraphP, c_char_p, _P(CalibrationOptions), _P(ReportP)]),
    ("qairt_calibrate_buffers", _ffi.StatusP,
     [_ffi.GraphP, c_size_t, _P(c_void_p), _P(c_size_t), _P(CalibrationOptions), _P(ReportP)]),
    ("qairt_calibration_report_destroy", None, [ReportP]),
    ("qairt_calibration_report_samples", c_size_t, [ReportP]),
    ("qairt_calibration_report_activation_count", c_size_t, [ReportP]),
    ("qairt_calibration_report_param_count", c_size_t, [ReportP]),
    ("qairt_calibration_report_tensor", c_char_p, [ReportP, c_size_t]),
    ("qairt_calibration_report_warning_count", c_size_t, [ReportP]),
    ("qairt_calibration_report_warning", c_char_p, [ReportP, c_size_t]),
    ("qairt_compare_input_list", _ffi.StatusP, [_ffi.GraphP, _ffi.GraphP, c_char_p, c_uint32, _P(CompareP)]),
    ("qairt_compare_input_list_progress", _ffi.StatusP,
     [_ffi.GraphP, _ffi.GraphP, c_char_p, c_uint32, ProgressFn, c_void_p, _P(CompareP)]),
    ("qairt_compare_report_destroy", None, [CompareP]),
    ("qairt_compare_report_output_count", c_size_t, [CompareP]),
    ("qairt_compare_report_output", _ffi.StatusP, [CompareP, c_size_t, _P(Accuracy)]),
    ("qairt_compare_report_layer_count", c_size_t, [CompareP]),
    ("qairt_compare_report_layer", _ffi.StatusP, [CompareP, c_size_t, _P(Accuracy)]),
    ("qairt_compare_report_render", _ffi.StatusP, [CompareP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
]
# Functions of qairt_calib.h declared here (tests compare them with the
# header and capi/calib.exports).
_DECLS_1_9 = [("qairt_compare_report_samples", c_size_t, [CompareP])]
_DECLS_1_11 = [("qairt_calibrate_params", _ffi.StatusP, [_ffi.GraphP, _P(CalibrationOptions), _P(ReportP)])]
_DECLS_1_13 = [("qairt_calibration_report_note_count", c_size_t, [ReportP]),
               ("qairt_calibration_report_note", c_char_p, [ReportP, c_size_t])]
from .stats import DECLARED as _STATS_DECLARED  # noqa: E402 (qairt_calib.h's statistics functions, ABI 1.10)

DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_9 + _DECLS_1_11 + _DECLS_1_13) + _STATS_DECLARED

try:
    _fn = {name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS}
    if (_ffi.qairt_abi_version() & 0xFFFF) >= 9:
        _fn.update({name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS_1_9})
    if (_ffi.qairt_abi_version() & 0xFFFF) >= 13:
        _fn.update({name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS_1_13})
except AttributeError as _e:
    raise ImportError("qairt: %s does not export the calibration API of qairt_calib.h (ABI 1.4): %s"
                      % (_ffi.library_path, _e)) from None

_dec = _ffi.decode


@dataclass
class CalibrationReport:
    samples: int = 0
    activations: List[str] = field(default_factory=list)
    params: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)  # decisions (the seqmse summary); ABI >= 1.13


@dataclass
class AccuracyEntry:
    name: str
    sqnr_db: float
    cosine: float
    max_abs: float
    argmax_agree: int  # samples whose argmax over the whole output matches
    # Outputs: positions of the leading axes (a sequence's steps, an LLM's
    # tokens) over all samples, and those whose argmax along the last axis
    # matches; 0 where the shape is unknown.
    argmax_positions: int = 0
    argmax_positions_agree: int = 0


def _samples(h):
    f = _fn.get("qairt_compare_report_samples")
    return int(f(h)) if f else 0


@dataclass
class CompareReport:
    outputs: List[AccuracyEntry] = field(default_factory=list)
    layers: List[AccuracyEntry] = field(default_factory=list)
    text: str = ""
    summary: str = ""
    samples: int = 0  # samples compared (0 with a library before ABI 1.9)


def _options(act_method, param_method, act_schema, param_schema, act_bitwidth, weights_bitwidth, per_channel,
             per_row, block_size, lpbq, percentile, float_inputs, num_threads, progress, keep, adaptive_rounding=False,
             bias_correction=False):
    for what, value, table in (("act_method", act_method, METHODS), ("param_method", param_method, METHODS),
                               ("act_schema", act_schema, SCHEMAS), ("param_schema", param_schema, SCHEMAS)):
        if value not in table:
            raise errors.InvalidArgumentError("%s must be one of %s, got %r" % (what, sorted(table), value),
                                              code=errors.INVALID_ARGUMENT)
    o = CalibrationOptions()
    _fn["qairt_calibration_options_init"](ctypes.byref(o))
    o.act_method, o.param_method = METHODS[act_method], METHODS[param_method]
    o.act_schema, o.param_schema = SCHEMAS[act_schema], SCHEMAS[param_schema]
    o.act_bitwidth, o.weights_bitwidth = act_bitwidth, weights_bitwidth
    o.flags = (PER_CHANNEL if per_channel else 0) | (PER_ROW if per_row else 0) | (LPBQ if lpbq else 0) | \
        (ADAPTIVE_ROUNDING if adaptive_rounding else 0) | (BIAS_CORRECTION if bias_correction else 0)
    o.block_size, o.percentile, o.num_threads = block_size, percentile, num_threads
    names = (c_char_p * max(1, len(float_inputs)))(*[_ffi.encode(n) for n in float_inputs])
    keep.append(names)
    o.num_float_inputs, o.float_inputs = len(float_inputs), names
    callback = _progress_fn(progress)
    keep.append(callback)
    o.progress = callback
    return o


def _report(h) -> CalibrationReport:
    try:
        r = CalibrationReport(samples=_fn["qairt_calibration_report_samples"](h))
        na = _fn["qairt_calibration_report_activation_count"](h)
        npar = _fn["qairt_calibration_report_param_count"](h)
        names = [_dec(_fn["qairt_calibration_report_tensor"](h, i)) for i in range(na + npar)]
        r.activations, r.params = names[:na], names[na:]
        r.warnings = [_dec(_fn["qairt_calibration_report_warning"](h, i))
                      for i in range(_fn["qairt_calibration_report_warning_count"](h))]
        if "qairt_calibration_report_note" in _fn:
            r.notes = [_dec(_fn["qairt_calibration_report_note"](h, i))
                       for i in range(_fn["qairt_calibration_report_note_count"](h))]
        return r
    finally:
        _fn["qairt_calibration_report_destroy"](h)


def _check_sample(index, tensor, arr):
    """A sample array must have its input's dtype and (static) shape: the
    library sees only bytes, so a float64 or transposed array of the right
    size would otherwise calibrate on garbage."""
    try:
        want = np.dtype(tensor.dtype) if tensor.dtype else None
    except TypeError:  # fixed-point inputs: numpy has no name for them
        want = None
    if want is not None and arr.dtype != want:
        raise errors.InvalidArgumentError("sample %d, input %r: dtype %s, but the input is %s (convert with "
                                          ".astype(%r))" % (index, tensor.name, arr.dtype, want, want.name),
                                          code=errors.INVALID_ARGUMENT)
    shape = tensor.shape
    if shape is not None and all(isinstance(d, int) for d in shape) and tuple(arr.shape) != tuple(shape):
        raise errors.InvalidArgumentError("sample %d, input %r: shape %s, but the input is %s"
                                          % (index, tensor.name, tuple(arr.shape), tuple(shape)),
                                          code=errors.INVALID_ARGUMENT)


def calibrate(graph, samples: Optional[Iterable[Mapping[str, object]]] = None, *, input_list: Optional[str] = None,
              act_method="min-max", param_method="min-max", act_schema="asymmetric", param_schema="symmetric",
              act_bitwidth=8, weights_bitwidth=8, per_channel=False, per_row=False, block_size=0, lpbq=False,
              percentile=99.99, float_inputs=(), num_threads=1, progress=None,
              adaptive_rounding=False, bias_correction=False) -> CalibrationReport:
    """Calibrates `graph` in place from `samples` (an iterable of {input name: numpy array}) or an input_list
    file. Raises a QairtError naming the sample, input or file on bad data. progress: optional
    callable(phase, done, total), called after each sample of each pass. param_method="seqmse" and
    adaptive_rounding=True choose weight grids and roundings by each op's output error (ABI >= 1.13);
    bias_correction=True moves FullyConnected and convolution biases so each output channel's mean on the
    samples is the float model's (ABI >= 1.15)."""
    if (samples is None) == (input_list is None):
        raise errors.InvalidArgumentError("give samples or input_list (one of them)", code=errors.INVALID_ARGUMENT)
    keep = []
    o = _options(act_method, param_method, act_schema, param_schema, act_bitwidth, weights_bitwidth, per_channel,
                 per_row, block_size, lpbq, percentile, list(float_inputs), num_threads, progress, keep,
                 adaptive_rounding, bias_correction)
    h = ReportP()
    if input_list is not None:
        _fn["qairt_calibrate_input_list"](graph.handle, _ffi.encode(str(input_list)), ctypes.byref(o),
                                          ctypes.byref(h))
        return _report(h)
    if np is None:  # pragma: no cover
        raise ImportError("calibrate(samples=...) needs numpy")
    inputs = [t for t in graph.tensors() if t.role in ("input", "input_output")]
    bufs = []
    for s, sample in enumerate(samples):
        for t in inputs:
            if t.name not in sample:
                raise errors.InvalidArgumentError("sample %d has no input %r" % (s, t.name),
                                                  code=errors.INVALID_ARGUMENT)
            arr = np.asarray(sample[t.name])
            _check_sample(s, t, arr)
            bufs.append(np.ascontiguousarray(arr))
    n = len(bufs) // max(1, len(inputs))
    ptrs = (c_void_p * max(1, len(bufs)))(*[b.ctypes.data for b in bufs])
    sizes = (c_size_t * max(1, len(bufs)))(*[b.nbytes for b in bufs])
    _fn["qairt_calibrate_buffers"](graph.handle, n, ptrs, sizes, ctypes.byref(o), ctypes.byref(h))
    return _report(h)


def calibrate_params(graph, param_method="min-max", param_schema="symmetric", weights_bitwidth=8, per_channel=False,
                     per_row=False, block_size=0, lpbq=False, percentile=99.99) -> CalibrationReport:
    """Encodes only `graph`'s static float tensors that have no encoding, from their values (no samples;
    activations are left as they are): what ``--float_fallback`` does for the weights an encodings file
    leaves out. ABI 1.11."""
    fn = _ffi._declare_header(_DECLS_1_11, "qairt.calib.calibrate_params", "qairt_calib.h", 11)
    keep = []
    o = _options("min-max", param_method, "asymmetric", param_schema, 8, weights_bitwidth, per_channel, per_row,
                 block_size, lpbq, percentile, [], 1, None, keep)
    h = ReportP()
    fn["qairt_calibrate_params"](graph.handle, ctypes.byref(o), ctypes.byref(h))
    return _report(h)


def _entries(h, count_fn, get_fn):
    out = []
    for i in range(_fn[count_fn](h)):
        a = Accuracy()
        a.struct_size = ctypes.sizeof(Accuracy)
        _fn[get_fn](h, i, ctypes.byref(a))
        out.append(AccuracyEntry(_dec(a.name), a.sqnr_db, a.cosine, a.max_abs, int(a.argmax_agree),
                                 int(a.argmax_positions), int(a.argmax_positions_agree)))
    return out


def _render(h, fmt):
    n = c_size_t(0)
    _fn["qairt_compare_report_render"](h, fmt, None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    _fn["qairt_compare_report_render"](h, fmt, buf, len(buf), ctypes.byref(n))
    return buf.value.decode()


def compare_input_list(float_graph, quantized_graph, input_list: str, per_layer: bool = False,
                       progress=None) -> CompareReport:
    """Runs both graphs on the input_list's samples; per output cosine, SQNR (dB), max abs error.
    progress: optional callable("compare", done, total), called after each sample."""
    h = CompareP()
    callback = _progress_fn(progress)
    _fn["qairt_compare_input_list_progress"](float_graph.handle, quantized_graph.handle,
                                             _ffi.encode(str(input_list)), COMPARE_PER_LAYER if per_layer else 0,
                                             callback, None, ctypes.byref(h))
    try:
        return CompareReport(outputs=_entries(h, "qairt_compare_report_output_count", "qairt_compare_report_output"),
                             layers=_entries(h, "qairt_compare_report_layer_count", "qairt_compare_report_layer"),
                             text=_render(h, 1), summary=_render(h, 3), samples=_samples(h))
    finally:
        _fn["qairt_compare_report_destroy"](h)
