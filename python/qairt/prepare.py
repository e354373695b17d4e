"""Cloud AI 100 preparation (include/qairt/qairt_prepare.h), since ABI 1.5.

    from qairt.prepare import prepare
    r = prepare("model.onnx", "out/", define_symbols={"batch": 1},
                input_list="calib/input_list.txt", clip_fp16_constants=True, fp32_nodes="auto")
    r.ok, r.findings, r.json["fp16_error"], r.text

Errors found by the audit do not raise: the report comes back with ok=False
and nothing written. Bad options or an unreadable model raise qairt.Error.
"""
import ctypes
import json as _json
from ctypes import POINTER, c_char_p, c_double, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence

from . import _ffi, errors

_P = POINTER
CLIP_FP16_CONSTANTS, FIX_ADDITIVE_MASKS, FORCE, NAMED_SPECIALIZATIONS, NO_DESCRIPTOR_CHECK = 1, 2, 4, 8, 16
SEVERITIES = ("info", "warning", "error")


class PrepareOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("model_path", c_char_p), ("output_dir", c_char_p),
                ("target", c_char_p), ("num_define_symbols", c_size_t), ("define_symbol_names", _P(c_char_p)),
                ("define_symbol_values", _P(c_int64)), ("num_input_dims", c_size_t),
                ("input_dim_names", _P(c_char_p)), ("input_dim_ranks", _P(c_size_t)), ("input_dims", _P(c_int64)),
                ("batch_size", c_int64), ("specializations_path", c_char_p), ("input_list_path", c_char_p),
                ("fp32_nodes", c_char_p), ("supported_ops_path", c_char_p), ("fp16_min_abs", c_double),
                ("mask_value", c_double), ("tolerance", c_double), ("fp16_budget", c_double),
                ("external_data_threshold", c_uint64), ("max_samples", c_uint32), ("reserved", c_uint32)]


class PrepareFinding(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("severity", c_uint32), ("code", c_char_p), ("subject", c_char_p),
                ("message", c_char_p)]


class ReportHandle(ctypes.Structure):
    """Opaque qairt_prepare_report_t."""


ReportP = _P(ReportHandle)

_DECLS = [
    ("qairt_prepare_options_init", None, [_P(PrepareOptions)]),
    ("qairt_prepare_run", _ffi.StatusP, [_P(PrepareOptions), _P(ReportP)]),
    ("qairt_prepare_report_destroy", None, [ReportP]),
    ("qairt_prepare_report_text", _ffi.StatusP, [ReportP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_prepare_report_json", _ffi.StatusP, [ReportP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_prepare_report_finding_count", c_size_t, [ReportP]),
    ("qairt_prepare_report_finding", _ffi.StatusP, [ReportP, c_size_t, _P(PrepareFinding)]),
]
# Since ABI 1.7 (the naming table's spelling of the text/json pair above).
_DECLS_1_7 = [
    ("qairt_prepare_report_render", _ffi.StatusP, [ReportP, ctypes.c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
]
DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_7)

# qairt_prepare_run's status is read here (the report must be kept on
# failure), so it is declared without the raising errcheck.
try:
    _fn = {}
    for _name, _restype, _argtypes in _DECLS:
        if _name == "qairt_prepare_run":
            _f = getattr(_ffi.lib, _name)
            _f.restype, _f.argtypes = _restype, _argtypes
            _fn[_name] = _f
        else:
            _fn[_name] = _ffi._declare(_name, _restype, _argtypes)
except AttributeError as _e:
    raise ImportError("qairt.prepare: %s does not export qairt_prepare.h (ABI 1.5): %s"
                      % (_ffi.library_path, _e)) from None
if (_ffi.lib.qairt_abi_version() & 0xFFFF) >= 7:
    for _name, _restype, _argtypes in _DECLS_1_7:
        _fn[_name] = _ffi._declare(_name, _restype, _argtypes)


@dataclass
class Finding:
    severity: str
    code: str
    subject: str
    message: str


@dataclass
class PrepareReport:
    ok: bool
    error: Optional[str]   # the failure message when ok is False
    text: str
    json: dict
    findings: List[Finding]


def _string(fn, handle):
    n = c_size_t(0)
    fn(handle, None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    fn(handle, buf, n.value + 1, ctypes.byref(n))
    return buf.value.decode("utf-8", "replace")


def prepare(model: str, output_dir: Optional[str] = None, target: str = "aic100",
            define_symbols: Optional[Mapping[str, int]] = None,
            input_dims: Optional[Mapping[str, Sequence[int]]] = None, batch_size: int = 0,
            specializations: Optional[str] = None, named_specializations: bool = False,
            input_list: Optional[str] = None, max_samples: int = 0, clip_fp16_constants: bool = False,
            fp16_min_abs: float = 0.0, fix_additive_masks: bool = False, mask_value: float = -10000.0,
            tolerance: float = 1e-4, force: bool = False, fp32_nodes: Optional[str] = None,
            fp16_budget: float = 1e-2, supported_ops: Optional[str] = None,
            external_data_threshold: int = 0) -> PrepareReport:
    """Runs `qairt prepare`; output_dir=None audits without writing."""
    o = PrepareOptions()
    _fn["qairt_prepare_options_init"](ctypes.byref(o))
    enc = _ffi.encode
    keep = []  # C strings and arrays referenced by o stay alive until the call returns
    o.model_path = enc(str(model))
    o.output_dir = enc(None if output_dir is None else str(output_dir))
    o.target = enc(target)
    syms = dict(define_symbols or {})
    names = (c_char_p * max(1, len(syms)))(*[enc(k) for k in syms])
    values = (c_int64 * max(1, len(syms)))(*syms.values())
    keep += [names, values]
    o.num_define_symbols, o.define_symbol_names, o.define_symbol_values = len(syms), names, values
    dims = dict(input_dims or {})
    dnames = (c_char_p * max(1, len(dims)))(*[enc(k) for k in dims])
    ranks = (c_size_t * max(1, len(dims)))(*[len(v) for v in dims.values()])
    flat = [int(x) for v in dims.values() for x in v]
    dvals = (c_int64 * max(1, len(flat)))(*flat)
    keep += [dnames, ranks, dvals]
    o.num_input_dims, o.input_dim_names, o.input_dim_ranks, o.input_dims = len(dims), dnames, ranks, dvals
    o.batch_size = batch_size
    o.specializations_path = enc(specializations and str(specializations))
    o.input_list_path = enc(input_list and str(input_list))
    o.fp32_nodes = enc(fp32_nodes and str(fp32_nodes))
    o.supported_ops_path = enc(supported_ops and str(supported_ops))
    o.fp16_min_abs, o.mask_value, o.tolerance, o.fp16_budget = fp16_min_abs, mask_value, tolerance, fp16_budget
    o.external_data_threshold = external_data_threshold
    o.max_samples = max_samples
    o.flags = ((CLIP_FP16_CONSTANTS if clip_fp16_constants else 0) | (FIX_ADDITIVE_MASKS if fix_additive_masks else 0)
               | (FORCE if force else 0) | (NAMED_SPECIALIZATIONS if named_specializations else 0))
    report = ReportP()
    status = _fn["qairt_prepare_run"](ctypes.byref(o), ctypes.byref(report))
    error = None
    if status:
        code = _ffi.qairt_status_code(status)
        error = _ffi.decode(_ffi.qairt_status_message(status))
        _ffi.qairt_status_free(status)
        if code != 7 or not report:  # anything but QAIRT_VALIDATION_FAILED (error findings) raises
            if report:
                _fn["qairt_prepare_report_destroy"](report)
            raise errors.from_code(code, error, "qairt_prepare_run")
    try:
        text = _string(_fn["qairt_prepare_report_text"], report)
        js = _json.loads(_string(_fn["qairt_prepare_report_json"], report))
        findings = []
        for i in range(_fn["qairt_prepare_report_finding_count"](report)):
            f = PrepareFinding()
            f.struct_size = ctypes.sizeof(PrepareFinding)
            _fn["qairt_prepare_report_finding"](report, i, ctypes.byref(f))
            findings.append(Finding(SEVERITIES[f.severity] if f.severity < 3 else str(f.severity),
                                    _ffi.decode(f.code), _ffi.decode(f.subject), _ffi.decode(f.message)))
    finally:
        _fn["qairt_prepare_report_destroy"](report)
    return PrepareReport(ok=error is None, error=error, text=text, json=js, findings=findings)
