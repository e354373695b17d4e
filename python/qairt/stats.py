"""Calibration statistics (qairt_calib.h, "Calibration statistics"; ABI 1.10).

Calibration split over processes or hosts and merged exactly: shard k of n
observes samples k, k+n, ... of an input_list; round 1 holds ranges, round 2
(for the mse, sqnr and percentile methods) histograms on the merged ranges.
Statistics are values: bytes that travel between processes (no C handle is
ever pickled), merged on any host, and used by
``qairt.convert(..., calibration_stats=PATH)``.

    from qairt import convert, stats
    for k in range(3):   # e.g. three batch jobs
        convert("m.onnx", "htp_v73", input_list="list.txt", stats_output="s%d.stats" % k, shard=(k, 3))
    stats.merge([stats.load("s%d.stats" % k) for k in range(3)]).save("merged.stats")
    convert("m.onnx", "htp_v73", "m.qairt", calibration_stats="merged.stats")
"""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_uint32, c_uint64, c_void_p
from typing import Sequence, Union

from . import _ffi

_P = POINTER


class _Stats(ctypes.Structure):
    pass


StatsP = _P(_Stats)

_DECLS = [
    ("qairt_calibration_stats_merge", _ffi.StatusP, [_P(StatsP), c_size_t, _P(StatsP)]),
    ("qairt_calibration_stats_load_file", _ffi.StatusP, [c_char_p, _P(StatsP)]),
    ("qairt_calibration_stats_load_bytes", _ffi.StatusP, [c_void_p, c_size_t, _P(StatsP)]),
    ("qairt_calibration_stats_write_file", _ffi.StatusP, [StatsP, c_char_p]),
    ("qairt_calibration_stats_write_bytes", _ffi.StatusP, [StatsP, c_void_p, c_size_t, _P(c_size_t)]),
    ("qairt_calibration_stats_destroy", None, [StatsP]),
    ("qairt_calibration_stats_round", c_uint32, [StatsP]),
    ("qairt_calibration_stats_complete", c_int, [StatsP]),
    ("qairt_calibration_stats_samples", c_uint64, [StatsP]),
    ("qairt_calibration_stats_input_list", c_char_p, [StatsP]),
    # On a graph as given (qairt.convert's stats_output / calibration_stats
    # use the graph convert calibrates, after its rewrites).
    ("qairt_calibration_stats_collect", _ffi.StatusP,
     [_ffi.GraphP, c_char_p, c_void_p, c_uint32, c_uint32, StatsP, _P(StatsP)]),
    ("qairt_calibrate_from_stats", _ffi.StatusP, [_ffi.GraphP, StatsP, c_void_p, _P(c_void_p)]),
]
DECLARED = tuple(d[0] for d in _DECLS)

_fn = {}


def _functions():
    if not _fn:
        if (_ffi.qairt_abi_version() & 0xFFFF) < 10:
            raise ImportError("qairt.stats needs libqairt ABI 1.10; %s is older" % _ffi.library_path)
        _fn.update({name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS})
    return _fn


class CalibrationStats:
    """Statistics of some shards of one round. Picklable (as its bytes)."""

    def __init__(self, _handle):
        self._h = _handle

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _fn:
            _fn["qairt_calibration_stats_destroy"](h)

    @classmethod
    def from_bytes(cls, data: bytes) -> "CalibrationStats":
        fn = _functions()
        h = StatsP()
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        fn["qairt_calibration_stats_load_bytes"](buf, len(data), ctypes.byref(h))
        return cls(h)

    def to_bytes(self) -> bytes:
        fn = _functions()
        n = c_size_t()
        fn["qairt_calibration_stats_write_bytes"](self._h, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        fn["qairt_calibration_stats_write_bytes"](self._h, buf, n.value, ctypes.byref(n))
        return buf.raw[:n.value]

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Writes the .stats file atomically."""
        _functions()["qairt_calibration_stats_write_file"](self._h, _ffi.encode(os.fspath(path)))

    @property
    def round(self) -> int:
        return int(_functions()["qairt_calibration_stats_round"](self._h))

    @property
    def complete(self) -> bool:
        """Every shard merged in."""
        return bool(_functions()["qairt_calibration_stats_complete"](self._h))

    @property
    def samples(self) -> int:
        return int(_functions()["qairt_calibration_stats_samples"](self._h))

    @property
    def input_list(self) -> str:
        return _ffi.decode(_functions()["qairt_calibration_stats_input_list"](self._h))

    def __reduce__(self):
        return (CalibrationStats.from_bytes, (self.to_bytes(),))


def load(path: Union[str, os.PathLike]) -> CalibrationStats:
    """Reads and verifies a .stats file (errors name the file and the field)."""
    fn = _functions()
    h = StatsP()
    fn["qairt_calibration_stats_load_file"](_ffi.encode(os.fspath(path)), ctypes.byref(h))
    return CalibrationStats(h)


def merge(parts: Sequence[CalibrationStats]) -> CalibrationStats:
    """Merges disjoint shards of one round (refuses overlapping shards, other
    rounds, models or options, naming the part)."""
    fn = _functions()
    parts = list(parts)
    arr = (StatsP * max(1, len(parts)))(*[p._h for p in parts])
    h = StatsP()
    fn["qairt_calibration_stats_merge"](arr, len(parts), ctypes.byref(h))
    return CalibrationStats(h)


def _calibration_options(options, keep):
    from . import calib
    defaults = dict(act_method="min-max", param_method="min-max", act_schema="asymmetric",
                    param_schema="symmetric", act_bitwidth=8, weights_bitwidth=8, per_channel=False, per_row=False,
                    block_size=0, lpbq=False, percentile=99.99, float_inputs=(), num_threads=1, progress=None)
    unknown = set(options) - set(defaults)
    if unknown:
        raise TypeError("unknown calibration option(s): %s" % ", ".join(sorted(unknown)))
    defaults.update(options)
    defaults["float_inputs"] = list(defaults["float_inputs"])
    return calib._options(keep=keep, **defaults)


def collect(graph, input_list: Union[str, os.PathLike], shard=(0, 1), ranges: "CalibrationStats" = None,
            **options) -> CalibrationStats:
    """Statistics of shard=(k, n) of input_list's samples on `graph` as given
    (round 2 on the merged round 1 `ranges` when given). options: those of
    qairt.calib.calibrate."""
    fn = _functions()
    keep = []
    o = _calibration_options(options, keep)
    h = StatsP()
    fn["qairt_calibration_stats_collect"](graph.handle, _ffi.encode(os.fspath(input_list)), ctypes.byref(o),
                                          int(shard[0]), int(shard[1]), ranges._h if ranges is not None else None,
                                          ctypes.byref(h))
    return CalibrationStats(h)


def calibrate(graph, stats: CalibrationStats, **options):
    """Calibrates `graph` in place from complete statistics; returns a
    qairt.calib.CalibrationReport."""
    from . import calib
    fn = _functions()
    keep = []
    o = _calibration_options(options, keep)
    h = calib.ReportP()
    fn["qairt_calibrate_from_stats"](graph.handle, stats._h, ctypes.byref(o), ctypes.cast(ctypes.byref(h), _P(c_void_p)))
    return calib._report(h)
