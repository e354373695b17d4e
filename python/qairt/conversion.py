"""The whole conversion in one call (include/qairt/qairt_convert.h), as
``qairt convert`` runs it::

    import qairt
    r = qairt.convert("model.onnx", "htp_v73", "model.qairt", input_list="calib/input_list.txt",
                      act_bitwidth=16, export_encodings="model.json", export_qdq_onnx="model.qdq.onnx")
    if not r.ok:
        print(r.errors[0])      # "<stage>: ...", e.g. "quantization overrides: ..."
    print(r.summary)            # what the CLI prints on stdout

The pipeline: legalize for the target -> quantization overrides -> kernel
check -> rewrites -> calibration (or mixed precision) -> target-specific
processing -> outputs (.qairt container, Q-DQ ONNX, encodings, quantizer log)
-> accuracy on the evaluation samples. The same options as the CLI's give
byte-identical outputs (the CLI calls the same C function).

Bad options raise (InvalidArgumentError, from the library's status; nothing
is written then). Everything that depends on the model or the data is
reported in the result's ``errors`` instead, and then no output exists except
the quantizer log. Outputs are all or none.

The functions of qairt_convert.h (libqairt ABI 1.16) are resolved on the first
call, so the rest of the package keeps working with an older library; with
one, ``convert`` raises UnsupportedError.
"""

import ctypes
import math
import os
from ctypes import POINTER, c_char_p, c_double, c_int64, c_size_t, c_uint32, c_void_p
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple, Union

from . import _ffi, calib, errors
from .graph import Graph
from .graph_info import _read_diagnostic_list
from .targets import Target, TargetP

_P = POINTER

# The ABI minor version this module's functions of qairt_convert.h need. The
# package as a whole needs _ffi.ABI_MINOR; only this module needs 16 (7 + the
# diagnostics list in 8 + the phase times in 16), checked on first use.
ABI_MINOR = 16

# qairt_convert_options.flags
NO_REWRITES = 1      # QAIRT_CONVERT_NO_REWRITES
VERIFY_REWRITES = 2  # QAIRT_CONVERT_VERIFY_REWRITES
QUANTIZED_IO = 4     # QAIRT_CONVERT_QUANTIZED_IO
CHECK_ONLY = 8       # QAIRT_CONVERT_CHECK_ONLY (1.8)
NO_BIAS_AWARE_WEIGHT_SCALES = 16  # QAIRT_CONVERT_NO_BIAS_AWARE_WEIGHT_SCALES (1.8)
QDQ_EXTERNAL_DATA = 32  # QAIRT_CONVERT_QDQ_EXTERNAL_DATA (1.10)
PARAMS_FROM_VALUES = 64  # QAIRT_CONVERT_PARAMS_FROM_VALUES (1.11)
KEEP_REWRITES = 128  # QAIRT_CONVERT_KEEP_REWRITES (1.14)
AUTO_QUANT = 256  # QAIRT_CONVERT_AUTO_QUANT (1.18)
MIXED_PROMOTIONS_ONLY = 512  # QAIRT_CONVERT_MIXED_PROMOTIONS_ONLY (1.20)

LOG_LEVELS = {"NONE": 0, "INFO": 1, "TRACE": 2}                   # qairt_quantizer_log_level
MIXED_MODES = {"off": 0, "budget": 1, "percent": 2}                # qairt_mixed_mode
ENCODINGS_VERSIONS = {"2.0.0": 3, "1.0.0": 2, "0.6.1": 1}         # qairt_encodings_version (0 = 2.0.0)


class ConvertOptions(ctypes.Structure):
    """qairt_convert_options (qairt_convert.h), field for field."""
    _fields_ = [
        ("struct_size", c_uint32),
        ("flags", c_uint32),
        ("target", TargetP),
        ("float_bitwidth", c_uint32),
        ("act_bitwidth", c_uint32),
        ("weights_bitwidth", c_uint32),
        ("bias_bitwidth", c_uint32),
        ("log_level", c_uint32),
        ("num_threads", c_uint32),
        ("stop_after", c_char_p),
        ("quantization_overrides", c_char_p),
        ("input_list", c_char_p),
        ("eval_input_list", c_char_p),
        ("calibration", _P(calib.CalibrationOptions)),
        ("mixed_mode", c_uint32),
        ("reserved", c_uint32),
        ("mixed_value", c_double),
        ("disabled_rewrites", _P(c_char_p)),
        ("num_disabled_rewrites", c_size_t),
        ("output_path", c_char_p),
        ("qdq_onnx_path", c_char_p),
        ("qdq_opset", c_int64),
        ("encodings_path", c_char_p),
        ("encodings_version", c_uint32),
        ("reserved2", c_uint32),
        ("quantizer_log_path", c_char_p),
        ("progress", calib.ProgressFn),
        ("progress_user_data", c_void_p),
        ("report_path", c_char_p),  # 1.9
        ("calibration_stats", c_char_p),  # 1.10
        ("stats_output", c_char_p),
        ("stats_ranges", c_char_p),
        ("shard_index", c_uint32),
        ("shard_count", c_uint32),
    ]


class _ResultHandle(ctypes.Structure):
    """Opaque qairt_convert_result_t."""


ResultP = _P(_ResultHandle)

_DECLS = [
    ("qairt_convert_options_init", None, [_P(ConvertOptions)]),
    ("qairt_convert_graph", _ffi.StatusP, [_ffi.GraphP, _P(ConvertOptions), _P(ResultP)]),
    ("qairt_convert_file", _ffi.StatusP, [c_char_p, _P(_ffi.ImportOptions), _P(ConvertOptions), _P(ResultP)]),
    ("qairt_convert_result_destroy", None, [ResultP]),
    ("qairt_convert_result_summary", c_char_p, [ResultP]),
    ("qairt_convert_result_error_count", c_size_t, [ResultP]),
    ("qairt_convert_result_error", c_char_p, [ResultP, c_size_t]),
    ("qairt_convert_result_warning_count", c_size_t, [ResultP]),
    ("qairt_convert_result_warning", c_char_p, [ResultP, c_size_t]),
    ("qairt_convert_result_log", c_char_p, [ResultP]),
    # Borrowed qairt_process_result_t* (read with qairt.process, imported on demand).
    ("qairt_convert_result_process", c_void_p, [ResultP]),
    ("qairt_convert_result_accuracy", calib.CompareP, [ResultP]),
    ("qairt_convert_result_diagnostics", _ffi.DiagnosticsP, [ResultP]),  # 1.8
    ("qairt_convert_result_phase_count", c_size_t, [ResultP]),  # 1.16
    ("qairt_convert_result_phase_name", c_char_p, [ResultP, c_size_t]),
    ("qairt_convert_result_phase_seconds", c_double, [ResultP, c_size_t]),
]
# Functions of qairt_convert.h declared here (tests compare them with the
# header and capi/convert.exports).
DECLARED = tuple(d[0] for d in _DECLS)

_fn = None
_dec = _ffi.decode


def _functions():
    """The declared functions of qairt_convert.h, resolved on first use."""
    global _fn
    if _fn is None:
        _fn = _ffi._declare_header(_DECLS, "qairt.convert", "qairt_convert.h", ABI_MINOR)
    return _fn


@dataclass
class ConvertResult:
    """What a conversion did: ``summary`` is what the CLI prints on stdout,
    ``errors`` each start with their stage ("import: ", "quantization
    overrides: ", "target: ", "rewrites: ", "calibration: ", "processing: ",
    "output: "), first one first; ``log`` is the quantizer log ("" at NONE).
    ``process`` is the processing result (a qairt.process.ProcessResult, None
    when the conversion stopped before processing); ``accuracy`` the
    comparison on the evaluation samples (a qairt.calib.CompareReport, None
    without samples or when the comparison failed: a warning says why)."""
    summary: str = ""
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    log: str = ""
    process: Optional[object] = None
    accuracy: Optional[calib.CompareReport] = None
    # Every error and warning as a Diagnostic (rule id, file:line:col, op,
    # tensor), in order; a DiagnosticList: render("sarif") for an IDE.
    diagnostics: list = field(default_factory=list)
    # Where the wall time went: (stage, seconds) in the order the stages ran
    # ("import", "legalization", "overrides", "kernels", "rewrites",
    # "calibration", "processing", "outputs", ...).
    phases: List[Tuple[str, float]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the conversion succeeded (no errors)."""
        return not self.errors


def _invalid(message):
    return errors.InvalidArgumentError(message, code=errors.INVALID_ARGUMENT)


def _path(what, p):
    """A path argument (str, bytes or os.PathLike) as the bytes the CLI would get; None stays NULL."""
    if p is None:
        return None
    try:
        return os.fsencode(p)
    except TypeError:
        raise _invalid("%s must be a path, got %s" % (what, type(p).__name__)) from None


def _mixed(spec):
    """(qairt_mixed_mode, value) of None, "off", "budget=DB", "percent=P" or a (mode, value) tuple."""
    if spec is None:
        return 0, 0.0
    usage = "mixed_precision must be None, 'off', 'budget=<dB>', 'percent=<0..100>' or a (mode, value) tuple, got %r"
    if isinstance(spec, str):
        if spec == "off":
            return 0, 0.0
        mode, sep, text = spec.partition("=")
        if not sep:
            raise _invalid(usage % (spec,))
        try:
            value = float(text)
        except ValueError:
            raise _invalid(usage % (spec,)) from None
    else:
        try:
            mode, value = spec
            value = float(value)
        except (TypeError, ValueError):
            raise _invalid(usage % (spec,)) from None
    if mode not in ("budget", "percent") or not math.isfinite(value) or \
            (mode == "percent" and not 0 <= value <= 100):
        raise _invalid(usage % (spec,))
    return MIXED_MODES[mode], value


def _encodings_version(v):
    if v is None:
        return 0
    if isinstance(v, str):
        if v not in ENCODINGS_VERSIONS:
            raise _invalid("encodings_version must be one of %s, got %r" % (", ".join(ENCODINGS_VERSIONS), v))
        return ENCODINGS_VERSIONS[v]
    if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1, 2, 3):
        return v
    raise _invalid("encodings_version must be '2.0.0', '1.0.0', '0.6.1' or a qairt_encodings_version, got %r" % (v,))


def _read(fn, h) -> ConvertResult:
    r = ConvertResult()
    r.summary = _dec(fn["qairt_convert_result_summary"](h))
    r.errors = [_dec(fn["qairt_convert_result_error"](h, i)) for i in range(fn["qairt_convert_result_error_count"](h))]
    r.warnings = [_dec(fn["qairt_convert_result_warning"](h, i))
                  for i in range(fn["qairt_convert_result_warning_count"](h))]
    r.log = _dec(fn["qairt_convert_result_log"](h))
    r.diagnostics = _read_diagnostic_list(fn["qairt_convert_result_diagnostics"](h))
    r.phases = [(_dec(fn["qairt_convert_result_phase_name"](h, i)), fn["qairt_convert_result_phase_seconds"](h, i))
                for i in range(fn["qairt_convert_result_phase_count"](h))]
    p = fn["qairt_convert_result_process"](h)
    if p:
        from . import process  # qairt_process.h (ABI 1.6)
        r.process = process._read_result(ctypes.cast(p, process.ResultP))
    a = fn["qairt_convert_result_accuracy"](h)
    if a:
        r.accuracy = calib.CompareReport(
            outputs=calib._entries(a, "qairt_compare_report_output_count", "qairt_compare_report_output"),
            layers=calib._entries(a, "qairt_compare_report_layer_count", "qairt_compare_report_layer"),
            text=calib._render(a, 1), summary=calib._render(a, 3), samples=calib._samples(a))
    return r


PathLike = Union[str, "os.PathLike[str]"]


def convert(model: Union[PathLike, Graph], target: Union[str, "os.PathLike[str]", Target, None],
            output: Optional[PathLike] = None, *, input_list: Optional[PathLike] = None,
            eval_input_list: Optional[PathLike] = None, quantization_overrides: Optional[PathLike] = None,
            export_encodings: Optional[PathLike] = None, encodings_version: Union[str, int, None] = None,
            export_qdq_onnx: Optional[PathLike] = None, qdq_opset: int = 0, qdq_external_data: bool = False,
            quantizer_log: Optional[PathLike] = None, log_level: Optional[str] = None, act_bitwidth: int = 0,
            weights_bitwidth: int = 0, bias_bitwidth: int = 0, float_bitwidth: int = 0, quantized_io: bool = False,
            rewrites: bool = True, verify_rewrites: bool = False, disabled_rewrites: Sequence[str] = (),
            keep_rewrites: bool = False,
            act_method: str = "min-max", param_method: str = "min-max", act_schema: str = "asymmetric",
            param_schema: str = "symmetric", per_channel: bool = False, per_row: bool = False, block_size: int = 0,
            lpbq: bool = False, percentile: float = 99.99, float_inputs: Sequence[str] = (),
            mixed_precision: Union[str, Tuple[str, float], None] = None, num_threads: int = 1,
            stop_after: Optional[str] = None, progress: Optional[Callable[[str, int, int], None]] = None,
            check_only: bool = False, bias_aware_weight_scales: bool = True,
            report: Optional[PathLike] = None, calibration_stats: Optional[PathLike] = None,
            stats_output: Optional[PathLike] = None, stats_ranges: Optional[PathLike] = None,
            adaptive_rounding: bool = False, bias_correction: bool = False,
            shard: Optional[Tuple[int, int]] = None, float_fallback: bool = False,
            auto_quant: bool = False, wide_fixed_ranges: bool = False,
            mixed_promotions_only: bool = False) -> ConvertResult:
    """Converts `model` for `target` as ``qairt convert`` does; returns a ConvertResult.

    model: a path (.tflite: TFLite, otherwise ONNX; imported with the CLI's
    defaults: static shapes required, int64 inputs narrowed to int32) or a
    qairt.Graph (converted in place). target: a built-in target name
    ("htp_v73"), a descriptor file, or a qairt.Target. output: the .qairt
    container (required unless stop_after).

    The keywords are the CLI's options: input_list (--input_list; turns
    calibration on), eval_input_list (the samples the accuracy summary is
    measured on; None: no accuracy is measured), quantization_overrides,
    export_encodings + encodings_version ("2.0.0", "1.0.0", "0.6.1"),
    export_qdq_onnx + qdq_opset (0 automatic, 13 or 21) + qdq_external_data
    (--qdq_external_data: weights in "<export_qdq_onnx>.data"), quantizer_log +
    log_level ("NONE", "INFO", "TRACE"; None = "NONE"), the bit widths (0 =
    default), quantized_io, rewrites (False = --no_rewrites),
    verify_rewrites, disabled_rewrites (names), keep_rewrites (no judgement of
    the rewrites on the quantized model, which calibrating from input_list
    otherwise runs; ABI >= 1.14), the calibration settings of
    qairt.calib.calibrate (act_method, param_method, act_schema,
    param_schema, per_channel, per_row, block_size, lpbq, percentile,
    float_inputs = --input_encoding NAME other, adaptive_rounding, bias_correction
    (ABI >= 1.15)), mixed_precision ("budget=25",
    "percent=10" or ("budget", 25.0)), num_threads (0 = every core) and
    stop_after (a pass of qairt.process.pipeline()). progress: optional
    callable(phase, done, total), phase "<stage>: <step>". check_only: the
    checks of ``qairt convert --dry_run`` only (legalization, kernel check,
    overrides; target may be None); nothing is written, so no output paths.
    bias_aware_weight_scales=False is --no_bias_aware_weight_scales.
    report: the HTML report (--report; qairt.report), written whenever
    processing ran, with per-op accuracy when there are evaluation samples.
    Sharded calibration (qairt.stats, qairt.distributed; ABI 1.10):
    calibration_stats (--calibration_stats) calibrates from merged
    statistics instead of input_list; stats_output (qairt calibrate -o)
    observes shard=(k, n) of input_list -- round 2 on stats_ranges when
    given -- writes the statistics there and stops (no output).
    float_fallback (--float_fallback; ABI 1.11): without input_list, the
    weights without an encoding are encoded from their values with the
    weight settings (per_channel, per_row, ...); activations without one
    stay float.
    auto_quant (--auto_quant; ABI 1.18): the calibration techniques chosen
    by measurement on input_list before calibrating (the summary lists each
    configuration tried and its score); wide_fixed_ranges
    (--wide_fixed_ranges; ABI 1.18): with 8-bit activations, 16-bit outputs
    for the ops whose range the target fixes (HTP Softmax, Sigmoid).
    mixed_promotions_only (--mixed_precision_promotions_only; ABI 1.20):
    a budget mixed_precision promotes only, from the calibration as given
    (by default, a budget the promotions miss makes it measure the
    calibration techniques and search again from the best).

    Raises InvalidArgumentError for bad options (nothing written); errors of
    the conversion itself are in the result (``ok`` is False, no outputs).
    """
    fn = _functions()
    if isinstance(target, Target):
        tgt = target
    elif isinstance(target, (str, os.PathLike)):
        tgt = Target.load(os.fspath(target))
    elif target is None and check_only:
        tgt = None
    else:
        raise _invalid("target must be a target name, a descriptor path or a qairt.Target, got %s"
                       % type(target).__name__)
    if not isinstance(model, Graph) and not isinstance(model, (str, bytes, os.PathLike)):
        raise _invalid("model must be a path or a qairt.Graph, got %s" % type(model).__name__)
    if log_level is None:
        log_level = "NONE"
    if log_level not in LOG_LEVELS:
        raise _invalid("log_level must be NONE, INFO or TRACE, got %r" % (log_level,))
    if isinstance(disabled_rewrites, (str, bytes)):
        raise _invalid("disabled_rewrites must be a list of rewrite names, got a string")
    mixed_mode, mixed_value = _mixed(mixed_precision)

    keep = []  # buffers the options point to
    # The calibration settings as the CLI passes them: bit widths 0 = 8.
    cal = calib._options(act_method, param_method, act_schema, param_schema, act_bitwidth or 8,
                         weights_bitwidth or 8, per_channel, per_row, block_size, lpbq, percentile,
                         list(float_inputs), num_threads, None, keep, adaptive_rounding, bias_correction)
    names = [_ffi.encode(n) for n in disabled_rewrites]
    disabled = (c_char_p * max(1, len(names)))(*names)

    o = ConvertOptions()
    fn["qairt_convert_options_init"](ctypes.byref(o))
    o.target = tgt._handle() if tgt is not None else None
    o.flags = (0 if rewrites else NO_REWRITES) | (VERIFY_REWRITES if verify_rewrites else 0) | \
        (QUANTIZED_IO if quantized_io else 0) | (CHECK_ONLY if check_only else 0) | \
        (0 if bias_aware_weight_scales else NO_BIAS_AWARE_WEIGHT_SCALES) | \
        (QDQ_EXTERNAL_DATA if qdq_external_data else 0) | (PARAMS_FROM_VALUES if float_fallback else 0) | \
        (KEEP_REWRITES if keep_rewrites else 0) | (AUTO_QUANT if auto_quant else 0) | \
        (MIXED_PROMOTIONS_ONLY if mixed_promotions_only else 0)
    if mixed_promotions_only and (_ffi.qairt_abi_version() & 0xFFFF) < 20:
        raise errors.UnsupportedError("convert(mixed_promotions_only=True) needs libqairt ABI 1.20; %s is older"
                                      % _ffi.library_path, code=errors.UNSUPPORTED)
    if (auto_quant or wide_fixed_ranges) and (_ffi.qairt_abi_version() & 0xFFFF) < 18:
        raise errors.UnsupportedError("convert(auto_quant=..., wide_fixed_ranges=...) needs libqairt ABI 1.18; %s is "
                                      "older" % _ffi.library_path, code=errors.UNSUPPORTED)
    if wide_fixed_ranges:
        cal.flags |= calib.WIDE_FIXED_RANGES
    if float_fallback and input_list is not None:
        raise errors.InvalidArgumentError("float_fallback cannot be used with input_list (calibration encodes every "
                                          "tensor)", code=errors.INVALID_ARGUMENT)
    o.float_bitwidth, o.act_bitwidth = float_bitwidth, act_bitwidth
    o.weights_bitwidth, o.bias_bitwidth = weights_bitwidth, bias_bitwidth
    o.log_level = LOG_LEVELS[log_level]
    o.num_threads = num_threads
    o.stop_after = _ffi.encode(stop_after)
    o.quantization_overrides = _path("quantization_overrides", quantization_overrides)
    o.input_list = _path("input_list", input_list)
    o.eval_input_list = _path("eval_input_list", eval_input_list)
    o.calibration = ctypes.pointer(cal)
    o.mixed_mode, o.mixed_value = mixed_mode, mixed_value
    o.disabled_rewrites, o.num_disabled_rewrites = disabled, len(names)
    o.output_path = _path("output", output)
    o.qdq_onnx_path = _path("export_qdq_onnx", export_qdq_onnx)
    o.qdq_opset = qdq_opset
    o.encodings_path = _path("export_encodings", export_encodings)
    o.encodings_version = _encodings_version(encodings_version)
    o.quantizer_log_path = _path("quantizer_log", quantizer_log)
    if report is not None and (_ffi.qairt_abi_version() & 0xFFFF) < 9:
        raise errors.UnsupportedError("convert(report=...) needs libqairt ABI 1.9; %s is older" % _ffi.library_path,
                                      code=errors.UNSUPPORTED)
    o.report_path = _path("report", report)
    sharding = (calibration_stats, stats_output, stats_ranges, shard)
    if any(v is not None for v in sharding) and (_ffi.qairt_abi_version() & 0xFFFF) < 10:
        raise errors.UnsupportedError("sharded calibration needs libqairt ABI 1.10; %s is older" % _ffi.library_path,
                                      code=errors.UNSUPPORTED)
    o.calibration_stats = _path("calibration_stats", calibration_stats)
    o.stats_output = _path("stats_output", stats_output)
    o.stats_ranges = _path("stats_ranges", stats_ranges)
    if shard is not None:
        o.shard_index, o.shard_count = int(shard[0]), int(shard[1])
    callback = calib._progress_fn(progress)
    o.progress = callback

    h = ResultP()
    if isinstance(model, Graph):
        fn["qairt_convert_graph"](model.handle, ctypes.byref(o), ctypes.byref(h))
    else:
        fn["qairt_convert_file"](_path("model", model), None, ctypes.byref(o), ctypes.byref(h))
    try:
        return _read(fn, h)
    finally:
        fn["qairt_convert_result_destroy"](h)
