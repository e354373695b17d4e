#!/usr/bin/python3
"""Reference executor vs onnxruntime-node: time per inference and peak memory.

Single thread on both sides, random inputs, median of N runs after 5 warm-up
runs, ONNX Runtime with all graph optimizations. Each engine runs each model
in a fresh process; peak memory = VmHWM at the end minus VmHWM before the
model is loaded (interpreter baselines excluded).

    QAIRT_LIBRARY=build/libqairt.so PYTHONPATH=python /usr/bin/python3 benchmarks/exec_vs_ort.py [-n 100] [--json OUT]
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
sys.path.insert(0, os.path.join(REPO, "tests", "exec"))

OURS = r'''
import json, sys, time, numpy as np
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
import qairt
path, inputs, n = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
feeds = {k: np.load(v) for k, v in inputs.items()}
base = hwm()
g, _ = qairt.import_onnx(path, input_dims={k: list(v.shape) for k, v in feeds.items()})
ex = qairt.Executor(g, num_threads=1)
g.close()
for _ in range(5):
    ex.run(feeds)
times = []
for _ in range(n):
    t0 = time.perf_counter(); ex.run(feeds); times.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"times_ms": times, "base_hwm_mb": base, "hwm_mb": hwm(), "stats": ex.stats()}))
'''


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    import onnx
    import exec_models
    tmp = tempfile.TemporaryDirectory(prefix="qairt-exec-bench-")
    models = {}
    if os.path.exists(exec_models.CLS_MODEL):
        models["cls [1,3,48,192]"] = (onnx.load(exec_models.CLS_MODEL), {"x": [1, 3, 48, 192]})
    models["resnet50 [1,3,224,224]"] = (exec_models.resnet50(), {"x": [1, 3, 224, 224]})
    models["mobilenet_like [1,3,224,224]"] = (exec_models.mobilenet_like(), {"x": [1, 3, 224, 224]})
    models["encoder_layer [1,16,64]"] = (exec_models.encoder_layer(), {"x": [1, 16, 64]})
    rows = []
    for k, (name, (model, shapes)) in enumerate(models.items()):
        path = os.path.join(tmp.name, "m%d.onnx" % k)
        onnx.save(model, path)
        rng = np.random.default_rng(k)
        inputs = {}
        for iname, dims in shapes.items():
            f = os.path.join(tmp.name, "m%d_%s.npy" % (k, iname))
            np.save(f, rng.uniform(-1, 1, dims).astype(np.float32))
            inputs[iname] = f
        r = subprocess.run([sys.executable, "-c", OURS, path, json.dumps(inputs), str(args.n)], capture_output=True,
                           text=True, check=True)
        ours = json.loads(r.stdout.strip().splitlines()[-1])
        jobs = os.path.join(tmp.name, "jobs%d.json" % k)
        with open(jobs, "w") as f:
            json.dump([{"model": path, "inputs": inputs, "out": os.path.join(tmp.name, "ort%d" % k), "opt": "all",
                        "bench": args.n}], f)
        subprocess.run(["node", os.path.join(REPO, "tests", "exec", "ort_exec.js"), jobs], check=True,
                       capture_output=True)
        with open(os.path.join(tmp.name, "ort%d" % k, "result.json")) as f:
            ort = json.load(f)
        row = {"model": name, "ours_ms": statistics.median(ours["times_ms"]), "ort_ms": statistics.median(ort["times_ms"]),
               "ours_mem_mb": ours["hwm_mb"] - ours["base_hwm_mb"], "ort_mem_mb": ort["hwm_mb"] - ort["base_hwm_mb"],
               "arena_mb": ours["stats"]["arena_bytes"] / 2**20,
               "unplanned_mb": ours["stats"]["unplanned_bytes"] / 2**20}
        row["time_ratio"] = row["ours_ms"] / row["ort_ms"]
        row["mem_ratio"] = row["ours_mem_mb"] / row["ort_mem_mb"] if row["ort_mem_mb"] > 0 else float("nan")
        rows.append(row)
        print("%-30s ours %8.2f ms  ORT %8.2f ms  x%.2f | peak +%.0f MB vs +%.0f MB  x%.2f | arena %.1f MB (%.1f MB without reuse)"
              % (name, row["ours_ms"], row["ort_ms"], row["time_ratio"], row["ours_mem_mb"], row["ort_mem_mb"],
                 row["mem_ratio"], row["arena_mb"], row["unplanned_mb"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
