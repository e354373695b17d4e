#!/usr/bin/python3
"""Whole-program conversion of one large MatMul against numpy quantizing its weight.

    /usr/bin/python3 benchmarks/convert_matmul.py [--dim 8192] [--repeats 3]

Writes an ONNX model y = x @ W with W a DIMxDIM float32 weight in external
data (8192: 256 MB), activation encodings for x and y in an AIMET 0.6.1
overrides file, then measures in one run:
  * numpy quantizing W per output channel to int8 the way ONNX Runtime's
    quantizer formulates it (max |w| per channel, scale = max / 127,
    round(w / scale), clip, cast), W already in memory;
  * `qairt convert -i model.onnx --target htp_v73
    --quantization_overrides enc.json --use_per_row_quantization
    --float_fallback -o out` as a user runs it (no samples: the weight is
    encoded from its values, per output row, int8): a fresh process, the
    model files in the page cache (read once before timing), wall time and
    peak RSS.
Best of --repeats for each. Target: the whole convert at least 3x faster
than numpy's quantization alone. Needs the build (build/qairt).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QAIRT = os.environ.get("QAIRT_CLI", os.path.join(REPO, "build", "qairt"))


def write_model(d, dim):
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((dim, dim), dtype=np.float32) * 0.02).astype(np.float32)
    w[:, ::97] *= 8  # some output channels with a wider range (per-channel scales differ)
    init = TensorProto()
    init.name = "W"
    init.data_type = TensorProto.FLOAT
    init.dims.extend(w.shape)
    init.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "model.data"), ("offset", "0"), ("length", str(w.nbytes))):
        e = init.external_data.add()
        e.key, e.value = k, v
    with open(os.path.join(d, "model.data"), "wb") as f:
        f.write(w.tobytes())
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"], name="proj")], "matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, dim])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, dim])], [init])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(m, os.path.join(d, "model.onnx"))

    def act(lo, hi):
        scale = (hi - lo) / 65535.0
        return [{"bitwidth": 16, "dtype": "int", "is_symmetric": "False", "min": lo, "max": hi,
                 "offset": int(round(lo / scale)), "scale": scale}]
    with open(os.path.join(d, "enc.json"), "w") as f:
        json.dump({"activation_encodings": {"x": act(-4.0, 4.0), "y": act(-20.0, 20.0)}, "param_encodings": {}}, f)
    return w


def numpy_quantize(w):
    """ONNX Runtime's per-channel symmetric int8 (axis: output channel = column of [K, N])."""
    rmax = np.max(np.abs(w), axis=0)
    scale = rmax / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if not os.path.exists(QAIRT):
        sys.exit("convert_matmul: %s is missing (build first: cmake --build build)" % QAIRT)
    with tempfile.TemporaryDirectory(prefix="qairt_bench_mm_") as d:
        w = write_model(d, a.dim)
        for name in ("model.onnx", "model.data", "enc.json"):  # warm page cache
            with open(os.path.join(d, name), "rb") as f:
                while f.read(1 << 24):
                    pass
        best_np = float("inf")
        for _ in range(a.repeats):
            t = time.perf_counter()
            numpy_quantize(w)
            best_np = min(best_np, time.perf_counter() - t)
        del w
        cmd = [QAIRT, "convert", "-i", os.path.join(d, "model.onnx"), "--target", "htp_v73",
               "--quantization_overrides", os.path.join(d, "enc.json"), "--use_per_row_quantization", "--float_fallback",
               "-o", os.path.join(d, "out.qairt")]
        # As a user runs it (the default: every core) and with --num_threads 1,
        # alternating so both see the same drift of the VM.
        variants = [("default", []), ("--num_threads 1", ["--num_threads", "1"])]
        best = {name: (float("inf"), 0) for name, _ in variants}
        for _ in range(a.repeats):
            for name, extra in variants:
                out = os.path.join(d, "out.qairt")
                if os.path.exists(out):
                    os.remove(out)
                t = time.perf_counter()
                r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd + extra, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                dt = time.perf_counter() - t
                if r.returncode != 0:
                    sys.exit("convert_matmul: qairt convert failed:\n" + r.stderr)
                rss = int(r.stderr.strip().splitlines()[-1])
                if dt < best[name][0]:
                    best[name] = (dt, rss)
                print("qairt convert (%s): %.3f s, peak RSS %.0f MB" % (name, dt, rss / 1024), flush=True)
        mb = a.dim * a.dim * 4 / 1e6
        for name, _ in variants:
            best_q, rss = best[name]
            ratio = best_np / best_q
            print("weight %dx%d (%.0f MB): numpy quantize %.3f s, qairt convert %s (whole process) %.3f s, peak RSS "
                  "%.0f MB: %.2fx numpy (target >= 3x) %s" % (a.dim, a.dim, mb, best_np, name, best_q, rss / 1024,
                                                             ratio, "PASS" if ratio >= 3 else "FAIL"))
        return 0


if __name__ == "__main__":
    sys.exit(main())
