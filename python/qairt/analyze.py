"""Rewrites, per-layer sensitivity and mixed precision (include/qairt/qairt_analyze.h).

    import qairt
    from qairt import analyze
    from qairt.calib import CalibrationOptions

    g, _ = qairt.import_onnx("model.onnx")
    r = analyze.rewrite(g, input_list="calib/list.txt")      # fuse/fold, verified
    print(r.text)
    s = analyze.sensitivity(g, "calib/list.txt", act_bitwidth=8)
    s.units[0].name, s.units[0].sqnr_only_quantized
    open("sensitivity.svg", "w").write(s.svg)
    m = analyze.mixed_precision(g, "calib/list.txt", budget_db=30, target="htp_v73")
    m.promoted          # the units given the high precision; g is calibrated in place
    a = analyze.choose_calibration(g, "calib/list.txt", act_bitwidth=8, target="htp_v73")
    a.trials, a.chosen  # each configuration's held-out SQNR; the chosen techniques (keywords of qairt.convert)
"""
import ctypes
from ctypes import POINTER, c_char_p, c_double, c_size_t, c_uint32, c_uint64, c_void_p
import json as _json
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from . import _ffi, calib, errors

_P = POINTER
MIXED_OFF, MIXED_BUDGET, MIXED_PERCENT = 0, 1, 2
FORMAT_TEXT, FORMAT_JSON, FORMAT_SVG, FORMAT_TEXT_DETAILED = 1, 2, 3, 4


class RewriteOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("num_threads", c_uint32), ("input_list", c_char_p),
        ("disabled", _P(c_char_p)), ("num_disabled", c_size_t), ("min_cosine", c_double), ("target", c_void_p),
        ("enabled", _P(c_char_p)), ("num_enabled", c_size_t), ("flags", c_uint32),
        ("quantized_judge", c_void_p),  # 1.14: const qairt_calibration_options* (NULL here: not judged)
    ]


REWRITE_NO_VERIFY = 1


class AnalysisOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("num_threads", c_uint32), ("calibration", _P(calib.CalibrationOptions)),
        ("high_act_bitwidth", c_uint32), ("high_weights_bitwidth", c_uint32), ("target", c_void_p),
        ("mixed_mode", c_uint32), ("reserved", c_uint32), ("mixed_value", c_double),
        ("shard_index", c_uint32), ("shard_count", c_uint32), ("mixed_gains", c_void_p),  # since 1.11
        ("mixed_flags", c_uint32), ("reserved2", c_uint32),  # since 1.20
    ]


MIXED_PROMOTIONS_ONLY = 1  # QAIRT_MIXED_PROMOTIONS_ONLY (1.20)


class Summary(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("kind", c_uint32), ("samples", c_size_t), ("synthetic", c_uint32),
        ("ops_before", c_size_t), ("ops_after", c_size_t), ("sqnr_base_db", c_double), ("sqnr_high_db", c_double),
        ("sqnr_chosen_db", c_double), ("budget_met", c_uint32), ("units", c_size_t), ("boundaries", c_size_t),
    ]


class Item(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("rolled_back", c_uint32), ("name", c_char_p), ("op_type", c_char_p),
        ("count", c_uint64), ("value", c_double), ("value_high", c_double),
        ("quantized_without_db", c_double), ("quantized_with_db", c_double), ("kept_off", c_uint32),  # 1.14
    ]


class _Report(ctypes.Structure):
    pass


ReportP = _P(_Report)

_DECLS = [
    ("qairt_rewrite_options_init", None, [_P(RewriteOptions)]),
    ("qairt_rewrite_count", c_size_t, []),
    ("qairt_rewrite_name", c_char_p, [c_size_t]),
    ("qairt_rewrite_description", c_char_p, [c_size_t]),
    ("qairt_rewrite_on_by_default", ctypes.c_int, [c_size_t]),
    ("qairt_rewrite_graph", _ffi.StatusP, [_ffi.GraphP, _P(RewriteOptions), _P(ReportP)]),
    ("qairt_analysis_options_init", None, [_P(AnalysisOptions)]),
    ("qairt_analyze_sensitivity", _ffi.StatusP, [_ffi.GraphP, c_char_p, _P(AnalysisOptions), _P(ReportP)]),
    ("qairt_mixed_precision", _ffi.StatusP, [_ffi.GraphP, c_char_p, _P(AnalysisOptions), _P(ReportP)]),
    ("qairt_analysis_report_destroy", None, [ReportP]),
    ("qairt_analysis_report_summary", _ffi.StatusP, [ReportP, _P(Summary)]),
    ("qairt_analysis_report_item_count", c_size_t, [ReportP]),
    ("qairt_analysis_report_item", _ffi.StatusP, [ReportP, c_size_t, _P(Item)]),
    ("qairt_analysis_report_warning_count", c_size_t, [ReportP]),
    ("qairt_analysis_report_warning", c_char_p, [ReportP, c_size_t]),
    ("qairt_analysis_report_render", _ffi.StatusP, [ReportP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
]
# Since ABI 1.11 (sharded sensitivity), resolved on first use.
_DECLS_1_11 = [
    ("qairt_analysis_report_read_json", _ffi.StatusP, [c_char_p, c_size_t, _P(ReportP)]),
    ("qairt_analysis_report_merge", _ffi.StatusP, [_P(ReportP), c_size_t, _P(ReportP)]),
]
# Since ABI 1.18 (calibration techniques by measurement), resolved on first use.
_DECLS_1_18 = [
    ("qairt_choose_calibration", _ffi.StatusP,
     [_ffi.GraphP, c_char_p, _P(AnalysisOptions), _P(calib.CalibrationOptions), _P(ReportP)]),
]
# Functions of qairt_analyze.h declared here (tests compare them with the
# header and capi/analyze.exports).
DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_11 + _DECLS_1_18)
_fn_1_11 = {}
_fn_1_18 = {}


def _functions_1_18():
    if not _fn_1_18:
        _fn_1_18.update(_ffi._declare_header(_DECLS_1_18, "calibration techniques by measurement", "qairt_analyze.h",
                                             18))
    return _fn_1_18


def _functions_1_11():
    if not _fn_1_11:
        _fn_1_11.update(_ffi._declare_header(_DECLS_1_11, "sharded sensitivity", "qairt_analyze.h", 11))
    return _fn_1_11

try:
    _fn = {name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS}
except AttributeError as _e:
    raise ImportError("qairt: %s does not export the analysis API of qairt_analyze.h (ABI 1.5): %s"
                      % (_ffi.library_path, _e)) from None

_dec = _ffi.decode


def rewrite_names() -> List[str]:
    return [_dec(_fn["qairt_rewrite_name"](i)) for i in range(_fn["qairt_rewrite_count"]())]


@dataclass
class RewriteOutcome:
    name: str
    fired: int
    rolled_back: bool
    cosine: float
    # Judged on the quantized model (convert with input_list): output SQNR without / with it, and whether
    # that kept it off. NaN when not judged.
    quantized_without_db: float = float("nan")
    quantized_with_db: float = float("nan")
    kept_off: bool = False


@dataclass
class Unit:
    name: str
    op_type: str
    depth: int
    sqnr_only_quantized: float
    sqnr_only_high: float


@dataclass
class Report:
    samples: int = 0
    rewrites: List[RewriteOutcome] = field(default_factory=list)
    ops_before: int = 0
    ops_after: int = 0
    units: List[Unit] = field(default_factory=list)  # sensitivity: graph order
    promoted: List[str] = field(default_factory=list)  # mixed precision
    gains: List[Tuple[str, float]] = field(default_factory=list)  # mixed gains: (candidate, dB; NaN: other shard)
    sqnr_base_db: float = 0.0
    sqnr_high_db: float = 0.0
    sqnr_chosen_db: float = 0.0
    budget_met: bool = False
    boundaries: int = 0
    warnings: List[str] = field(default_factory=list)
    text: str = ""
    json: str = ""
    svg: str = ""
    # choose_calibration: (techniques, held-out SQNR dB (NaN: no kernels), seconds) of each configuration tried,
    # and the chosen techniques as keywords of qairt.convert / calib.calibrate.
    trials: List[Tuple[str, float, float]] = field(default_factory=list)
    chosen: dict = field(default_factory=dict)
    # mixed precision, the model as returned: its median sample's SQNR (dB) and its worst samples,
    # (index in the input list from 0, dB), worst first.
    median_db: float = 0.0
    worst_samples: List[Tuple[int, float]] = field(default_factory=list)


def _render(r, fmt):
    n = c_size_t(0)
    _fn["qairt_analysis_report_render"](r, fmt, None, 0, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value + 1)
    _fn["qairt_analysis_report_render"](r, fmt, buf, n.value + 1, ctypes.byref(n))
    return _dec(buf.value)


def _collect(r, kind):
    try:
        s = _ffi.new_struct(Summary)
        _fn["qairt_analysis_report_summary"](r, ctypes.byref(s))
        out = Report(samples=s.samples, ops_before=s.ops_before, ops_after=s.ops_after, sqnr_base_db=s.sqnr_base_db,
                     sqnr_high_db=s.sqnr_high_db, sqnr_chosen_db=s.sqnr_chosen_db, budget_met=bool(s.budget_met),
                     boundaries=s.boundaries)
        for i in range(_fn["qairt_analysis_report_item_count"](r)):
            it = _ffi.new_struct(Item)
            _fn["qairt_analysis_report_item"](r, i, ctypes.byref(it))
            if kind == "rewrites":
                out.rewrites.append(RewriteOutcome(_dec(it.name), it.count, bool(it.rolled_back), it.value,
                                                   it.quantized_without_db, it.quantized_with_db, bool(it.kept_off)))
            elif kind == "sensitivity":
                out.units.append(Unit(_dec(it.name), _dec(it.op_type), it.count, it.value, it.value_high))
            elif kind == "mixed_gains":
                out.gains.append((_dec(it.name), it.value))
            elif kind == "auto_quant":
                out.trials.append((_dec(it.name), it.value, it.value_high))
            else:
                out.promoted.append(_dec(it.name))
        out.warnings = [_dec(_fn["qairt_analysis_report_warning"](r, i))
                        for i in range(_fn["qairt_analysis_report_warning_count"](r))]
        out.text = _render(r, FORMAT_TEXT_DETAILED if kind == "rewrites" else FORMAT_TEXT)
        out.json = _render(r, FORMAT_JSON)
        if kind == "sensitivity":
            out.svg = _render(r, FORMAT_SVG)
        if kind == "mixed":
            j = _json.loads(out.json)
            out.median_db = j.get("returned_median_sqnr_db") or 0.0
            out.worst_samples = [(w["sample"], float("inf") if w["sqnr_db"] is None else w["sqnr_db"])
                                 for w in j.get("returned_worst_samples", [])]
        return out
    finally:
        _fn["qairt_analysis_report_destroy"](r)


def rewrite(graph, input_list: Optional[str] = None, disabled: Sequence[str] = (), min_cosine: float = 0.999999,
            target=None, num_threads: int = 1, enabled: Sequence[str] = (), verify: bool = True) -> Report:
    """Rewrites `graph` in place, verified against the original on the samples
    (`verify=False`: applied without running the model, as `qairt convert`
    does unless --verify_rewrites)."""
    o = _ffi.new_struct(RewriteOptions)
    _fn["qairt_rewrite_options_init"](ctypes.byref(o))
    if target is not None:
        from . import targets as _targets
        target = _targets.Target.load(target) if isinstance(target, str) else target
        o.target = ctypes.cast(target._h, c_void_p)
    o.input_list = _ffi.encode(input_list) if input_list else None
    names = (c_char_p * max(1, len(disabled)))(*[_ffi.encode(d) for d in disabled])
    o.disabled = names
    o.num_disabled = len(disabled)
    on = (c_char_p * max(1, len(enabled)))(*[_ffi.encode(e) for e in enabled])
    o.enabled = on
    o.num_enabled = len(enabled)
    o.min_cosine = min_cosine
    o.num_threads = num_threads
    o.flags = 0 if verify else REWRITE_NO_VERIFY
    r = ReportP()
    _fn["qairt_rewrite_graph"](graph.handle, ctypes.byref(o), ctypes.byref(r))
    return _collect(r, "rewrites")


def _analysis_options(calibration, high_act_bitwidth, high_weights_bitwidth, target, mode, value, num_threads, keep):
    a = _ffi.new_struct(AnalysisOptions)
    _fn["qairt_analysis_options_init"](ctypes.byref(a))
    if calibration is not None:
        keep.append(calibration)
        a.calibration = ctypes.pointer(calibration)
    a.high_act_bitwidth = high_act_bitwidth
    a.high_weights_bitwidth = high_weights_bitwidth
    if target is not None:
        from . import targets as _targets
        t = _targets.Target.load(target) if isinstance(target, str) else target
        keep.append(t)
        a.target = ctypes.cast(t._h, c_void_p)
    a.mixed_mode = mode
    a.mixed_value = value
    a.num_threads = num_threads
    return a


def _calibration(act_bitwidth, weights_bitwidth, per_channel):
    c = _ffi.new_struct(calib.CalibrationOptions)
    calib._fn["qairt_calibration_options_init"](ctypes.byref(c))
    c.act_bitwidth = act_bitwidth
    c.weights_bitwidth = weights_bitwidth
    c.flags = calib.PER_CHANNEL if per_channel else 0
    return c


def sensitivity(graph, input_list: str, act_bitwidth: int = 8, weights_bitwidth: int = 8, per_channel: bool = False,
                high_act_bitwidth: int = 16, high_weights_bitwidth: int = 16, target=None,
                num_threads: int = 1, shard: Optional[Tuple[int, int]] = None) -> Report:
    """Per-unit output SQNR: only this unit quantized / everything but this unit at the high precision.

    shard=(k, n) evaluates only units k, k+n, ... (the others are listed
    with NaN scores); merge_sensitivity() joins the shards' ``json`` into the
    unsharded report (qairt.distributed.sensitivity does this on Dask)."""
    keep = []
    a = _analysis_options(_calibration(act_bitwidth, weights_bitwidth, per_channel), high_act_bitwidth,
                          high_weights_bitwidth, target, MIXED_OFF, 0.0, num_threads, keep)
    if shard is not None:
        k, n = (int(v) for v in shard)
        if not (n >= 1 and 0 <= k < n):
            raise ValueError("shard must be (k, n) with 0 <= k < n, got %r" % (shard,))
        _functions_1_11()  # a library without sharding would ignore the fields
        a.shard_index, a.shard_count = k, n
    r = ReportP()
    _fn["qairt_analyze_sensitivity"](graph.handle, _ffi.encode(input_list), ctypes.byref(a), ctypes.byref(r))
    return _collect(r, "sensitivity")


def mixed_precision(graph, input_list: str, budget_db: Optional[float] = None, percent: Optional[float] = None,
                    act_bitwidth: int = 8, weights_bitwidth: int = 8, per_channel: bool = False,
                    high_act_bitwidth: int = 16, high_weights_bitwidth: int = 16, target=None,
                    num_threads: int = 1, shard: Optional[Tuple[int, int]] = None,
                    gains: Optional[Sequence[str]] = None, promotions_only: bool = False) -> Report:
    """Calibrates `graph` in place with per-unit precisions meeting `budget_db` (or promoting `percent`%).

    A budget the promotions (at most 20% of the layers) miss makes the search
    measure the calibration techniques (as choose_calibration does) and run
    again from the best (ABI 1.20; the report's text and json say so);
    promotions_only=True keeps to promotions from the given calibration.

    Sharded (qairt.distributed.mixed_precision does this on Dask):
    shard=(k, n) computes only the gains of candidates k, k+n, ... (the
    costly step: one evaluation each) and returns them (``gains``, ``json``)
    without touching `graph`; gains=[json of every shard] then uses them
    instead, and the choice equals the unsharded one."""
    if (budget_db is None) == (percent is None):
        raise ValueError("give exactly one of budget_db and percent")
    if shard is not None and gains is not None:
        raise ValueError("give shard (compute one share of the gains) or gains (use them), not both")
    mode, value = (MIXED_BUDGET, budget_db) if budget_db is not None else (MIXED_PERCENT, percent)
    keep = []
    a = _analysis_options(_calibration(act_bitwidth, weights_bitwidth, per_channel), high_act_bitwidth,
                          high_weights_bitwidth, target, mode, float(value), num_threads, keep)
    if promotions_only:
        if (_ffi.qairt_abi_version() & 0xFFFF) < 20:
            raise errors.UnsupportedError("mixed_precision(promotions_only=True) needs libqairt ABI 1.20; %s is older"
                                          % _ffi.library_path, code=errors.UNSUPPORTED)
        a.mixed_flags = MIXED_PROMOTIONS_ONLY
    merged = None
    if shard is not None:
        k, n = (int(v) for v in shard)
        if not (n >= 2 and 0 <= k < n):
            raise ValueError("shard must be (k, n) with 0 <= k < n and n >= 2 (without a shard the search runs "
                             "whole), got %r" % (shard,))
        _functions_1_11()
        a.shard_index, a.shard_count = k, n
    r = ReportP()
    try:
        if gains is not None:
            merged = _merged_handle(gains)
            a.mixed_gains = ctypes.cast(merged, c_void_p)
        _fn["qairt_mixed_precision"](graph.handle, _ffi.encode(input_list), ctypes.byref(a), ctypes.byref(r))
    finally:
        if merged is not None:
            _fn["qairt_analysis_report_destroy"](merged)
    return _collect(r, "mixed_gains" if shard is not None else "mixed")


def _merged_handle(parts: Sequence[str]):
    """A report handle merged from the JSON of every shard (the caller destroys it)."""
    fn = _functions_1_11()
    handles = []
    try:
        for text in parts:
            b = _ffi.encode(text)
            r = ReportP()
            fn["qairt_analysis_report_read_json"](b, len(b), ctypes.byref(r))
            handles.append(r)
        arr = (ReportP * max(1, len(handles)))(*handles)
        out = ReportP()
        fn["qairt_analysis_report_merge"](arr, len(handles), ctypes.byref(out))
        return out
    finally:
        for r in handles:
            _fn["qairt_analysis_report_destroy"](r)


def merge_sensitivity(parts: Sequence[str]) -> Report:
    """The unsharded sensitivity Report from the ``json`` of shards 0..n-1
    (any order); refused when a shard is missing or twice or a part is of
    another model, samples or precision."""
    return _collect(_merged_handle(parts), "sensitivity")


def choose_calibration(graph, input_list: str, act_bitwidth: int = 8, weights_bitwidth: int = 8,
                       per_channel: bool = False, per_row: bool = False, block_size: int = 0, lpbq: bool = False,
                       target=None, num_threads: int = 1) -> Report:
    """Which calibration techniques to use, by measurement (``qairt convert --auto_quant``; ABI 1.18).

    Bias correction, seqmse with adaptive rounding, both, mse activation ranges and all of them (then, with 8-bit
    activations and a target that fixes some outputs' range, the best with those outputs at 16 bits), each
    calibrated on one half of the samples and scored as `target` runs it on the other, both ways. ``trials``:
    (techniques, held-out SQNR, seconds) of each; ``chosen``: the best as keywords of qairt.convert (act_method,
    param_method, adaptive_rounding, bias_correction, wide_fixed_ranges). `graph` is not modified."""
    fn = _functions_1_18()
    keep = []
    c = _calibration(act_bitwidth, weights_bitwidth, per_channel)
    c.flags |= (calib.PER_ROW if per_row else 0) | (calib.LPBQ if lpbq else 0)
    c.block_size = block_size
    a = _analysis_options(c, 16, 16, target, MIXED_OFF, 0.0, num_threads, keep)
    chosen = _ffi.new_struct(calib.CalibrationOptions)
    calib._fn["qairt_calibration_options_init"](ctypes.byref(chosen))
    r = ReportP()
    fn["qairt_choose_calibration"](graph.handle, _ffi.encode(input_list), ctypes.byref(a), ctypes.byref(chosen),
                                   ctypes.byref(r))
    out = _collect(r, "auto_quant")
    methods = {v: k for k, v in calib.METHODS.items()}
    out.chosen = {"act_method": methods[chosen.act_method], "param_method": methods[chosen.param_method],
                  "adaptive_rounding": bool(chosen.flags & calib.ADAPTIVE_ROUNDING),
                  "bias_correction": bool(chosen.flags & calib.BIAS_CORRECTION),
                  "wide_fixed_ranges": bool(chosen.flags & calib.WIDE_FIXED_RANGES)}
    return out
