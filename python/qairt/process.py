"""Target-specific processing (include/qairt/qairt_process.h).

    import qairt
    from qairt.targets import load_target
    from qairt.process import process

    g, _ = qairt.import_onnx("model.onnx")
    r = process(g, load_target("htp_v73"), log_level="TRACE")
    print(r.stats)            # [MISSING ENC.] ... [PRUNED CONVERTS]
    for e in r.errors: ...    # in order of occurrence, first one first

The graph is processed in place. The result's options / op_annotations /
tensor_notes go straight to qairt.container.write_container.
"""
import ctypes
from ctypes import POINTER, c_char_p, c_size_t, c_uint32
from dataclasses import dataclass, field
from typing import List, Optional

from . import _ffi, errors
from .container import ContainerOption, OpAnnotation, TensorNote
from .graph_info import _read_diagnostic_list
from .targets import Target, TargetP

_P = POINTER

LOG_LEVELS = {"NONE": 0, "INFO": 1, "TRACE": 2}
QUANTIZED_IO = 1
NO_BIAS_AWARE_WEIGHT_SCALES = 2  # QAIRT_PROCESS_NO_BIAS_AWARE_WEIGHT_SCALES (1.8)


class ProcessOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("flags", c_uint32), ("target", TargetP), ("float_bitwidth", c_uint32),
        ("act_bitwidth", c_uint32), ("weights_bitwidth", c_uint32), ("bias_bitwidth", c_uint32),
        ("log_level", c_uint32), ("stop_after", c_char_p),
    ]


class _ResultHandle(ctypes.Structure):
    pass


ResultP = _P(_ResultHandle)

_DECLS = [
    ("qairt_process_options_init", None, [_P(ProcessOptions)]),
    ("qairt_process_pipeline", _ffi.StatusP, [c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_process", _ffi.StatusP, [_ffi.GraphP, _P(ProcessOptions), _P(ResultP)]),
    ("qairt_process_result_destroy", None, [ResultP]),
    ("qairt_process_result_error_count", c_size_t, [ResultP]),
    ("qairt_process_result_error", c_char_p, [ResultP, c_size_t]),
    ("qairt_process_result_warning_count", c_size_t, [ResultP]),
    ("qairt_process_result_warning", c_char_p, [ResultP, c_size_t]),
    ("qairt_process_result_log", c_char_p, [ResultP]),
    ("qairt_process_result_stats", c_char_p, [ResultP]),
    ("qairt_process_result_options", _P(_ffi.ContainerOption), [ResultP, _P(c_size_t)]),
    ("qairt_process_result_op_annotations", _P(_ffi.ContainerOpAnnotation), [ResultP, _P(c_size_t)]),
    ("qairt_process_result_tensor_notes", _P(_ffi.ContainerTensorNote), [ResultP, _P(c_size_t)]),
    ("qairt_graph_legalize", _ffi.StatusP, [_ffi.GraphP, TargetP, _P(c_size_t)]),
]

# Functions of qairt_process.h declared here (tests compare them with the
# header and capi/process.exports).
_DECLS_1_8 = [("qairt_process_result_diagnostics", _ffi.DiagnosticsP, [ResultP])]
DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_8)

try:
    _fn = {name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS}
    if (_ffi.qairt_abi_version() & 0xFFFF) >= 8:
        _fn.update({name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS_1_8})
except AttributeError as _e:
    raise ImportError("qairt: %s does not export the processing API of qairt_process.h (ABI 1.6): %s"
                      % (_ffi.library_path, _e)) from None

_dec = _ffi.decode
_SOURCES = {0: "default", 1: "user", 2: "target"}


@dataclass
class ProcessResult:
    errors: List[str] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    log: str = ""
    stats: str = ""
    options: List[ContainerOption] = field(default_factory=list)
    op_annotations: List[OpAnnotation] = field(default_factory=list)
    tensor_notes: List[TensorNote] = field(default_factory=list)
    # The errors and warnings as records (rule id, op, tensor), in order; a
    # DiagnosticList (render("sarif")). Empty with a library before ABI 1.8.
    diagnostics: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def pipeline() -> str:
    """The registered passes, one per line."""
    n = c_size_t(0)
    _fn["qairt_process_pipeline"](None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    _fn["qairt_process_pipeline"](buf, len(buf), ctypes.byref(n))
    return buf.value.decode()


def legalize(graph, target: Target) -> int:
    """Rewrites, in place, the ops `target` has no kernel for but runs in an
    equivalent form (Conv1d as Conv2d between ExpandDims and Squeeze), as
    `process` does first. Returns how many ops were rewritten."""
    n = c_size_t(0)
    _fn["qairt_graph_legalize"](graph.handle, target._handle(), ctypes.byref(n))
    return n.value


def process(graph, target: Target, *, float_bitwidth: int = 0, act_bitwidth: int = 0, weights_bitwidth: int = 0,
            bias_bitwidth: int = 0, log_level: str = "NONE", stop_after: Optional[str] = None,
            quantized_io: bool = False, bias_aware_weight_scales: bool = True) -> ProcessResult:
    """Runs target-specific processing on `graph` in place. Raises for bad
    options; processing errors are in the result's `errors`."""
    if log_level not in LOG_LEVELS:
        raise errors.InvalidArgumentError("log_level must be NONE, INFO or TRACE, got %r" % (log_level,),
                                          code=errors.INVALID_ARGUMENT)
    o = ProcessOptions()
    _fn["qairt_process_options_init"](ctypes.byref(o))
    o.target = target._handle()
    o.float_bitwidth, o.act_bitwidth = float_bitwidth, act_bitwidth
    o.weights_bitwidth, o.bias_bitwidth = weights_bitwidth, bias_bitwidth
    o.log_level = LOG_LEVELS[log_level]
    o.stop_after = _ffi.encode(stop_after)
    o.flags = (QUANTIZED_IO if quantized_io else 0) | (0 if bias_aware_weight_scales else NO_BIAS_AWARE_WEIGHT_SCALES)
    h = ResultP()
    _fn["qairt_process"](graph.handle, ctypes.byref(o), ctypes.byref(h))
    try:
        return _read_result(h)
    finally:
        _fn["qairt_process_result_destroy"](h)


def _read_result(h) -> ProcessResult:
    """Reads a qairt_process_result_t* (not destroyed here: qairt.convert's is borrowed)."""
    r = ProcessResult()
    r.errors = [_dec(_fn["qairt_process_result_error"](h, i))
                for i in range(_fn["qairt_process_result_error_count"](h))]
    r.warnings = [_dec(_fn["qairt_process_result_warning"](h, i))
                  for i in range(_fn["qairt_process_result_warning_count"](h))]
    r.log = _dec(_fn["qairt_process_result_log"](h))
    r.stats = _dec(_fn["qairt_process_result_stats"](h))
    n = c_size_t(0)
    p = _fn["qairt_process_result_options"](h, ctypes.byref(n))
    r.options = [ContainerOption(_dec(p[i].key), _dec(p[i].value), _SOURCES.get(p[i].source, "?"))
                 for i in range(n.value)]
    p = _fn["qairt_process_result_op_annotations"](h, ctypes.byref(n))
    r.op_annotations = [OpAnnotation(_dec(p[i].op_name), _dec(p[i].kernel), int(p[i].super_group),
                                     bool(p[i].adapted)) for i in range(n.value)]
    p = _fn["qairt_process_result_tensor_notes"](h, ctypes.byref(n))
    r.tensor_notes = [TensorNote(_dec(p[i].tensor_name), _dec(p[i].reasons)) for i in range(n.value)]
    if "qairt_process_result_diagnostics" in _fn:
        r.diagnostics = _read_diagnostic_list(_fn["qairt_process_result_diagnostics"](h))
    return r
