#!/usr/bin/env python3
"""Runs a Q-DQ ONNX model written by `qairt convert --export_qdq_onnx` in
onnxruntime-node and checks it against qairt's own simulation of the .qairt:

  qdq_ort_check.py --model QDQ.onnx --input_list LIST --ours DIR [--float DIR]
                   [--reported_sqnr DB] [--steps 1] [--work DIR]

--input_list: the evaluation input_list (name:=file.raw lines or bare paths;
float32 raw files). --ours / --float: `qairt run --output_dir` directories
(Result_<i>/<output>.raw) of the .qairt and of the float model.

Checks, per output: |ORT - ours| <= STEPS quantization steps, the step being
the scale of the DequantizeLinear that produces the output in the exported
model, with ORT's graph optimizations disabled (the Q/DQ nodes evaluated as
written) and enabled (QLinear* integer kernels where ORT fuses). The fused
integer kernels are ORT's own and not exact everywhere (on x86 hosts without
AVX-VNNI MLAS's u8s8 kernels saturate 16-bit pair sums), so with
optimizations enabled qairt may be as far from ORT as ORT's fused run is
from its own unfused run, plus STEPS steps. With
--float and --reported_sqnr: ORT's SQNR against the float outputs equals the
reported one within 0.5 dB. Prints the measured figures; exit 1 on failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_list(path, names):
    base = os.path.dirname(os.path.abspath(path))
    samples = []
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entries = line.split()
        sample = {}
        for k, e in enumerate(entries):
            name, _, f = e.rpartition(":=")
            sample[name or names[k]] = f if os.path.isabs(f) else os.path.join(base, f)
        samples.append(sample)
    return samples


def output_steps(model):
    """Scale (max over channels) of the DequantizeLinear behind each graph output."""
    producer = {o: n for n in model.graph.node for o in n.output}
    # Scales only (float): int4 initializers are beyond Debian's numpy_helper.
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT}
    steps = {}
    for out in model.graph.output:
        n = producer.get(out.name)
        while n is not None and n.op_type in ("Identity", "Reshape", "Squeeze", "Unsqueeze"):
            n = producer.get(n.input[0])
        if n is None or n.op_type != "DequantizeLinear" or n.input[1] not in inits:
            raise SystemExit("FAIL: output %s is not produced by a DequantizeLinear" % out.name)
        steps[out.name] = float(np.max(inits[n.input[1]]))
    return steps


def sqnr(ref, test):
    num = sum(float((a.astype(np.float64) ** 2).sum()) for a in ref)
    den = sum(float(((a.astype(np.float64) - b) ** 2).sum()) for a, b in zip(ref, test))
    return 10 * np.log10(num / max(den, 1e-30))


def run_ort(model, samples, inputs, work, opt):
    jobs = []
    for i, s in enumerate(samples):
        feeds = {}
        for name, shape in inputs.items():
            f = os.path.join(work, "in_%d_%s.npy" % (i, len(feeds)))
            np.save(f, np.fromfile(s[name], dtype="<f4").reshape(shape))
            feeds[name] = f
        jobs.append({"model": model, "inputs": feeds, "out": os.path.join(work, "%s_%d" % (opt, i)), "opt": opt})
    jobs_file = os.path.join(work, "jobs_%s.json" % opt)
    json.dump(jobs, open(jobs_file, "w"))
    r = subprocess.run(["node", os.path.join(REPO, "tests", "exec", "ort_exec.js"), jobs_file],
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        raise SystemExit("FAIL: onnxruntime-node could not run %s (%s):\n%s" % (model, opt, r.stderr[-3000:]))
    results = []
    for job in jobs:
        res = json.load(open(os.path.join(job["out"], "result.json")))
        results.append({o["name"]: np.load(o["file"]) for o in res["outputs"]})
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--input_list", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--float")
    ap.add_argument("--reported_sqnr", type=float)
    ap.add_argument("--steps", type=float, default=1.0)
    ap.add_argument("--work")
    a = ap.parse_args()
    # (Debian's onnx 1.12 predates opset 21 / IR 10, so no onnx.checker here:
    # onnxruntime-node loading and running the model is the check.)
    model = onnx.load(a.model)
    init_names = {t.name for t in model.graph.initializer}
    inputs = {}
    for i in model.graph.input:
        if i.name in init_names:
            continue
        inputs[i.name] = [d.dim_value for d in i.type.tensor_type.shape.dim]
    steps = output_steps(model)
    samples = read_list(a.input_list, list(inputs))
    work = a.work or tempfile.mkdtemp(prefix="qdq_ort_")
    os.makedirs(work, exist_ok=True)
    fail = False
    ort = {}
    for opt in ("disabled", "all"):
        ort[opt] = run_ort(os.path.abspath(a.model), samples, inputs, work, opt)
        for name, step in steps.items():
            worst = own = 0.0
            for i, res in enumerate(ort[opt]):
                ours = np.fromfile(os.path.join(a.ours, "Result_%d" % i, name + ".raw"), dtype=np.float32)
                worst = max(worst, float(np.max(np.abs(res[name].reshape(-1) - ours))))
                own = max(own, float(np.max(np.abs(res[name] - ort["disabled"][i][name]))))
            print("Q-DQ %s (ORT optimizations %s): max |ORT - qairt| = %.3g = %.3f quantization steps (step %.3g) "
                  "over %d samples" % (name, opt, worst, worst / step, step, len(samples)))
            allowed = a.steps * step
            if opt == "all" and own > 0:
                print("  ORT's fused kernels differ from its unfused run by %.3f steps on this host" % (own / step))
                allowed += own
            if worst > allowed * (1 + 1e-6):
                print("FAIL: %s differs from qairt's simulation by more than %g step(s)%s"
                      % (name, a.steps, " beyond ORT's own difference" if opt == "all" and own > 0 else ""))
                fail = True
    if a.float and a.reported_sqnr is not None:
        for name in steps:
            ref = [np.fromfile(os.path.join(a.float, "Result_%d" % i, name + ".raw"), dtype=np.float32)
                   for i in range(len(samples))]
            got = sqnr(ref, [r[name].reshape(-1) for r in ort["disabled"]])
            print("Q-DQ %s: SQNR of ORT's outputs vs float %.2f dB (qairt reported %.2f dB)"
                  % (name, got, a.reported_sqnr))
            if abs(got - a.reported_sqnr) > 0.5:
                print("FAIL: ORT's SQNR on the Q-DQ model differs from the report by more than 0.5 dB")
                fail = True
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
