"""Sharded calibration and sensitivity analysis on a Dask cluster (``dask.distributed``).

    from dask.distributed import Client, LocalCluster
    import qairt.distributed as qd

    with Client(LocalCluster(n_workers=2, threads_per_worker=1)) as client:
        stats = qd.calibrate(client, "model.onnx", "htp_v73", "calib/list.txt",
                             act_method="mse", act_bitwidth=16)
        result = qd.convert(client, "model.onnx", "htp_v73", "model.qairt", "calib/list.txt",
                            act_method="mse", act_bitwidth=16)

        report = qd.sensitivity(client, "model.onnx", "calib/list.txt", act_bitwidth=8)
        graph, mixed = qd.mixed_precision(client, "model.onnx", "calib/list.txt", budget_db=30)

Nothing here schedules: Dask does. Each task runs ``qairt.convert`` in a
worker process with ``stats_output`` and ``shard=(k, n)`` (convert's
pipeline up to calibration, so the graph observed is the one convert
calibrates) and returns the statistics as bytes; the client merges them
exactly (qairt.stats.merge). Histogram methods (mse, sqnr, percentile) run
a second round on the merged ranges, shipped to the workers as bytes. The
result is byte-identical to a single-process convert for any number of
shards and workers. ``sensitivity`` gives each task a share of the units
(every task calibrates the same way, so a unit's scores do not depend on
where it is evaluated); the shards' reports travel as JSON with exact
scores and qairt.analyze.merge_sensitivity joins them into the report of
the local analysis, score for score. ``mixed_precision`` does the same for
the candidates' gains (one evaluation each, the costly step of the search);
the greedy choice then runs on the client on the merged gains and equals
the local one.

What workers need: the qairt Python package and libqairt.so (the same
build as the client), and the model and the input_list (with its raw files)
at the same paths as the client sees them (a shared file system, or one
host). Only paths, options and statistics bytes travel; no C handle is
pickled.
"""
import os
import tempfile
from typing import Optional

from . import errors
from . import stats as _stats

# act_method values that need the second (histogram) round.
_HISTOGRAM_METHODS = ("mse", "sqnr", "percentile")
# Options the driver sets itself.
_RESERVED = ("stats_output", "stats_ranges", "shard", "calibration_stats", "input_list")
# Options of the final conversion only: the shard tasks write statistics, nothing else.
_OUTPUT_OPTIONS = ("export_encodings", "encodings_version", "export_qdq_onnx", "qdq_opset", "qdq_external_data",
                   "quantizer_log", "log_level", "report", "eval_input_list", "progress")


def _samples_in(input_list) -> int:
    """Sample lines of an input_list (comments, blank lines and %output lines excluded)."""
    n = 0
    with open(input_list, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if s and not s.startswith("#") and not s.startswith("%"):
                n += 1
    return n


def _collect_shard(shard, model, target, input_list, options, ranges_bytes=None):
    """Runs in a worker: statistics of one shard, as bytes."""
    import qairt  # the worker's own import of the binding
    options = {k: v for k, v in options.items() if k not in _OUTPUT_OPTIONS}
    with tempfile.TemporaryDirectory(prefix="qairt_shard_") as tmp:
        ranges_path = None
        if ranges_bytes is not None:
            ranges_path = os.path.join(tmp, "ranges.stats")
            with open(ranges_path, "wb") as f:
                f.write(ranges_bytes)
        out = os.path.join(tmp, "shard.stats")
        r = qairt.convert(model, target, input_list=input_list, stats_output=out, stats_ranges=ranges_path,
                          shard=shard, **options)
        if not r.ok:
            raise errors.QairtError("shard %d/%d: %s" % (shard[0], shard[1], "; ".join(r.errors)))
        with open(out, "rb") as f:
            return f.read()


def _round(client, shards, model, target, input_list, options, ranges_bytes=None):
    ranges = client.scatter(ranges_bytes, broadcast=True) if ranges_bytes is not None else None
    futures = [client.submit(_collect_shard, (k, shards), model, target, input_list, options, ranges,
                             key="qairt-calibrate-%d-%d-of-%d" % (2 if ranges_bytes else 1, k, shards), pure=False)
               for k in range(shards)]
    parts = [_stats.CalibrationStats.from_bytes(b) for b in client.gather(futures)]
    return _stats.merge(parts)


def calibrate(client, model, target, input_list, shards: Optional[int] = None, **options) -> _stats.CalibrationStats:
    """Complete calibration statistics of `model` for `target` over the
    samples of `input_list`, observed in `shards` shards (default: one per
    worker, at most one per sample) on the cluster of `client`. options:
    those of qairt.convert (calibration, precision, rewrites, shapes are
    fixed by the model file) -- give the final convert the same."""
    for k in _RESERVED:
        if k in options:
            raise TypeError("qairt.distributed.calibrate sets %s itself" % k)
    # As given: the container records input_list as the local convert would.
    model, input_list = os.fspath(model), os.fspath(input_list)
    target = target if isinstance(target, str) else os.fspath(target)
    samples = _samples_in(input_list)
    if samples == 0:
        raise errors.InvalidArgumentError("%s has no samples" % input_list, code=errors.INVALID_ARGUMENT)
    if shards is None:
        shards = max(1, len(client.scheduler_info().get("workers", {})))
    shards = max(1, min(int(shards), samples))
    merged = _round(client, shards, model, target, input_list, options)
    if options.get("act_method", "min-max") in _HISTOGRAM_METHODS:
        merged = _round(client, shards, model, target, input_list, options, merged.to_bytes())
    return merged


def convert(client, model, target, output, input_list, shards: Optional[int] = None, **options):
    """qairt.convert with its calibration sharded over the cluster: the same
    outputs as ``qairt.convert(model, target, output, input_list=...,
    keep_rewrites=True, **options)`` (the container records input_list as that
    call would; judging the rewrites on the quantized model needs the samples
    in one process, so the sharded flow keeps them as they fire)."""
    import qairt
    st = calibrate(client, model, target, input_list, shards, **options)
    with tempfile.TemporaryDirectory(prefix="qairt_merged_") as tmp:
        path = os.path.join(tmp, "merged.stats")
        st.save(path)
        return qairt.convert(model, target, output, calibration_stats=path, **options)


def _import(model, import_options):
    import qairt
    if str(model).lower().endswith(".tflite"):
        return qairt.import_tflite(model, **import_options)[0]
    return qairt.import_onnx(model, **import_options)[0]


def _sensitivity_shard(shard, model, input_list, import_options, options):
    """Runs in a worker: the sensitivity report of one shard of the units, as JSON."""
    from . import analyze
    graph = _import(model, import_options)
    return analyze.sensitivity(graph, input_list, shard=shard, **options).json


def sensitivity(client, model, input_list, shards: Optional[int] = None, import_options=None, **options):
    """qairt.analyze.sensitivity of the model file `model` (ONNX, or .tflite)
    with its units spread over the cluster of `client` in `shards` shards
    (default: one per worker): the same Report as
    ``analyze.sensitivity(qairt.import_onnx(model, **import_options)[0], input_list, **options)``.
    options: those of qairt.analyze.sensitivity (target as a name or a
    descriptor path, not a handle)."""
    from . import analyze
    if "shard" in options:
        raise TypeError("qairt.distributed.sensitivity sets shard itself")
    model, input_list = os.fspath(model), os.fspath(input_list)
    import_options = dict(import_options or {})
    if shards is None:
        shards = max(1, len(client.scheduler_info().get("workers", {})))
    shards = max(1, int(shards))
    futures = [client.submit(_sensitivity_shard, (k, shards), model, input_list, import_options, options,
                             key="qairt-sensitivity-%d-of-%d" % (k, shards), pure=False)
               for k in range(shards)]
    return analyze.merge_sensitivity(client.gather(futures))


def _gains_shard(shard, model, input_list, import_options, options):
    """Runs in a worker: the mixed-precision gains of one shard of the candidates, as JSON."""
    from . import analyze
    graph = _import(model, import_options)
    return analyze.mixed_precision(graph, input_list, shard=shard, **options).json


def mixed_precision(client, model, input_list, shards: Optional[int] = None, import_options=None, **options):
    """qairt.analyze.mixed_precision of the model file `model` with the
    candidates' gains (one evaluation each: the costly step) spread over the
    cluster in `shards` shards (default: one per worker, at least 2); the
    search then runs here on the merged gains. Returns (graph, report): the
    graph imported here and calibrated as
    ``analyze.mixed_precision(qairt.import_onnx(model, **import_options)[0], input_list, **options)``
    calibrates it, with the same report. options: budget_db or percent and
    the other options of qairt.analyze.mixed_precision."""
    from . import analyze
    for k in ("shard", "gains"):
        if k in options:
            raise TypeError("qairt.distributed.mixed_precision sets %s itself" % k)
    model, input_list = os.fspath(model), os.fspath(input_list)
    import_options = dict(import_options or {})
    if shards is None:
        shards = len(client.scheduler_info().get("workers", {}))
    shards = max(2, int(shards))
    futures = [client.submit(_gains_shard, (k, shards), model, input_list, import_options, options,
                             key="qairt-mixed-gains-%d-of-%d" % (k, shards), pure=False)
               for k in range(shards)]
    parts = client.gather(futures)
    graph = _import(model, import_options)
    return graph, analyze.mixed_precision(graph, input_list, gains=parts, **options)
