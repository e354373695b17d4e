#!/usr/bin/python3
"""LLM-scale conversion and calibration, measured in one run (driver of benchmarks/llm_scale.sh).

    /usr/bin/python3 benchmarks/llm_scale.py [--dim 2048 --layers 16 --heads 32 --kv_heads 8 --ffn 5632]
                                             [--seq 128 --samples 4] [--work DIR] [--keep]

Generates (Debian's python3-torch) a Llama-architecture decoder as the model
corpus writes it (tests/models/corpus_transformers.py: RMSNorm, rotary, GQA,
vocab 32000), random weights from a fixed seed, exported at opset 17 with
external data; the defaults are about 0.85 B parameters (3.4 GB). Then:
  (a) `qairt convert` W4 LPBQ (block 64) / A16 for htp_v75 with activation
      encodings from an overrides file, no samples (--float_fallback: the
      weights are encoded from their values), against `cat` of the weight
      files (warm page cache): wall time and peak RSS;
  (b) the same with calibration on --samples samples of --seq tokens (int64
      ids from raw files): time per sample against onnxruntime-node
      single-threaded on the float model;
  (c) the `--export_qdq_onnx` model of (b) (external data) loads and runs in
      onnxruntime-node.
The overrides of (a) are (b)'s activation encodings, so (b) runs first.
Targets (issue text): (a) at most 2x cat, peak anonymous memory under 1 GB;
(b) at most 1.5x ORT per sample.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QAIRT = os.environ.get("QAIRT_CLI", os.path.join(REPO, "build", "qairt"))
ORT_EXEC = os.path.join(REPO, "tests", "exec", "ort_exec.js")


def generate(work, a):
    sys.path.insert(0, os.path.join(REPO, "tests", "models"))
    import torch
    import corpus_transformers as ct
    torch.manual_seed(0)
    c = dict(vocab=32000, dim=a.dim, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads, ffn=a.ffn,
             max_pos=max(a.seq, 64))
    model = ct._init_llama(ct.LlamaDecoder(c), None).eval()
    params = sum(p.numel() for p in model.parameters())
    ids = torch.randint(1, c["vocab"], (1, a.seq), dtype=torch.int64)
    path = os.path.join(work, "model", "model.onnx")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    t = time.perf_counter()
    with torch.no_grad():
        torch.onnx.export(model, (ids,), path, input_names=["input_ids"], output_names=["logits"], opset_version=17,
                          do_constant_folding=True)
    size = sum(os.path.getsize(os.path.join(os.path.dirname(path), f)) for f in os.listdir(os.path.dirname(path)))
    if size < 2 ** 31 and not any(f != "model.onnx" for f in os.listdir(os.path.dirname(path))):
        # Small configurations: torch writes the weights inline; move them to external data as large exports are.
        import onnx
        m = onnx.load(path)
        onnx.save(m, path, save_as_external_data=True, all_tensors_to_one_file=False, size_threshold=1024)
    print("model: %.2f B parameters, %d files, %.2f GB, exported in %.0f s"
          % (params / 1e9, len(os.listdir(os.path.dirname(path))), size / 1e9, time.perf_counter() - t), flush=True)
    rng = np.random.default_rng(1)
    data = os.path.join(work, "data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(work, "list.txt"), "w") as f:
        for s in range(a.samples):
            x = rng.integers(1, c["vocab"], size=(1, a.seq)).astype(np.int64)
            x.tofile(os.path.join(data, "ids_%d.raw" % s))
            np.save(os.path.join(data, "ids_%d.npy" % s), x)
            # The converted model takes int32 ids (qairt narrows int64 inputs; HTP has no int64).
            np.save(os.path.join(data, "ids_%d_i32.npy" % s), x.astype(np.int32))
            f.write("input_ids:=data/ids_%d.raw\n" % s)
    return path, params


def run(cmd, what):
    """(seconds, peak RSS MB) of a fresh process."""
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("llm_scale: %s failed (rc %d):\n%s\n%s" % (what, r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return dt, int(r.stderr.strip().splitlines()[-1]) / 1024, r.stdout


def run_sampled(cmd, what):
    """(seconds, peak RSS MB, peak anonymous MB) of a fresh process; the
    anonymous figure (RssAnon: memory the process allocated, not the mapped
    model files) is sampled every 20 ms."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    anon = 0
    while p.poll() is None:
        try:
            with open("/proc/%d/status" % p.pid) as f:
                for line in f:
                    if line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.02)
    dt = time.perf_counter() - t
    err = p.stderr.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit("llm_scale: %s failed (rc %d):\n%s" % (what, p.returncode, err[-3000:]))
    return dt, anon / 1024


def calibration_seconds(summary):
    """The calibration time a convert's summary reports."""
    for line in summary.splitlines():
        if line.startswith("calibration time: "):
            return float(line.split()[2])
    sys.exit("llm_scale: the convert's summary has no 'calibration time' line:\n" + summary[-2000:])


def cat_seconds(model_dir):
    files = [os.path.join(model_dir, f) for f in sorted(os.listdir(model_dir))]
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - t)
    return best


def ort(jobs_path, jobs):
    with open(jobs_path, "w") as f:
        json.dump(jobs, f)
    subprocess.run(["node", ORT_EXEC, jobs_path], check=True, capture_output=True)
    out = []
    for j in jobs:
        with open(os.path.join(j["out"], "result.json")) as f:
            out.append(json.load(f))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv_heads", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=5632)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--work", default="/tmp/qairt_llm_scale")
    ap.add_argument("--keep", action="store_true", help="keep WORK (the model is reused when present)")
    a = ap.parse_args()
    if not os.path.exists(QAIRT):
        sys.exit("llm_scale: %s is missing (build first)" % QAIRT)
    os.makedirs(a.work, exist_ok=True)
    model_dir = os.path.join(a.work, "model")
    stamp = os.path.join(a.work, "config.json")
    config = json.dumps(vars(a), sort_keys=True)
    if os.path.exists(stamp) and open(stamp).read() == config:
        model, params = os.path.join(model_dir, "model.onnx"), json.load(open(os.path.join(a.work, "params.json")))
        print("model: reused from %s" % a.work)
    else:
        shutil.rmtree(a.work, ignore_errors=True)
        os.makedirs(a.work)
        model, params = generate(a.work, a)
        json.dump(params, open(os.path.join(a.work, "params.json"), "w"))
        open(stamp, "w").write(config)
    lst = os.path.join(a.work, "list.txt")
    w4 = ["--target", "htp_v75", "--act_bitwidth", "16", "--weights_bitwidth", "4", "--weights_block_size", "64",
          "--use_lpbq", "--use_per_row_quantization", "--use_per_channel_quantization"]

    # (b) calibration: the same convert on all samples and on one (the
    # difference is the per-sample cost); then, untimed, once more with the
    # Q-DQ export for (c) and the encodings for (a). The difference is taken
    # of the calibration time each convert reports (the whole processes'
    # times are printed too): import and write vary by seconds on a shared
    # VM, which would swamp a per-sample difference.
    calib_out = os.path.join(a.work, "calib")
    os.makedirs(calib_out, exist_ok=True)
    _write_head(lst, 1)
    # One thread, as onnxruntime-node's run it is compared with (convert
    # uses every core by default).
    one = ["--num_threads", "1"]
    # Two rounds, alternating, and the fastest of each (ORT's figure is its
    # fastest of two runs too): the difference of two single runs carried
    # the VM's drift between them.
    cal = cal1 = tb = tb1 = float("inf")
    rss_b = 0
    for _ in range(2):
        t, rss, out = run([QAIRT, "convert", "-i", model] + w4 + one + [
            "--input_list", lst, "--no_progress", "-o", os.path.join(calib_out, "m.qairt")], "calibrated convert")
        cal, tb, rss_b = min(cal, calibration_seconds(out)), min(tb, t), max(rss_b, rss)
        t, _, out = run([QAIRT, "convert", "-i", model] + w4 + one + [
            "--input_list", os.path.join(a.work, "list1.txt"), "--no_progress", "-o",
            os.path.join(calib_out, "m1.qairt")], "calibrated convert, 1 sample")
        cal1, tb1 = min(cal1, calibration_seconds(out)), min(tb1, t)
    run([QAIRT, "convert", "-i", model] + w4 + [
        "--input_list", lst, "--no_progress", "-o", os.path.join(calib_out, "m.qairt"),
        "--export_encodings", os.path.join(calib_out, "enc.json"), "--encodings_format", "1.0.0",
        "--export_qdq_onnx", os.path.join(calib_out, "qdq.onnx"), "--qdq_external_data"], "calibrated convert + exports")
    per_sample = (cal - cal1) / max(1, a.samples - 1)
    jobs = [{"model": model, "inputs": {"input_ids": os.path.join(a.work, "data", "ids_0.npy")},
             "out": os.path.join(a.work, "ort_float"), "opt": "all", "bench": 2},
            {"model": os.path.join(calib_out, "qdq.onnx"),
             "inputs": {"input_ids": os.path.join(a.work, "data", "ids_0_i32.npy")},
             "out": os.path.join(a.work, "ort_qdq"), "opt": "all"}]
    ort_float, ort_qdq = ort(os.path.join(a.work, "jobs.json"), jobs)
    ort_ms = min(ort_float["times_ms"])

    # (a) no samples: activation encodings from (b)'s file, weights from their values.
    # Of the exported activation encodings, those of the model's own tensors
    # (the export also names tensors the conversion created: converts,
    # fused ops' outputs).
    import onnx
    g = onnx.load(model, load_external_data=False).graph
    names = {i.name for i in g.input} | {o for n in g.node for o in n.output}
    enc = json.load(open(os.path.join(calib_out, "enc.json")))
    # Float entries describe where the converted graph hands floats to the
    # application (its outputs), not activation ranges.
    enc["activation_encodings"] = [e for e in enc["activation_encodings"]
                                   if e["name"] in names and e.get("dtype") != "FLOAT"]
    enc["param_encodings"] = []
    overrides = os.path.join(a.work, "acts.json")
    json.dump(enc, open(overrides, "w"))
    cat_s = cat_seconds(model_dir)
    best_a, rss_a = float("inf"), 0
    a_cmd = [QAIRT, "convert", "-i", model] + w4 + [
        "--quantization_overrides", overrides, "--float_fallback", "-o", os.path.join(a.work, "a.qairt")]
    a_out = os.path.join(a.work, "a.qairt")
    best_a_one = float("inf")  # --num_threads 1: every pass on one core
    for _ in range(2):
        # A fresh output each time, as convert_matmul.py: replacing the last
        # run's 0.7 GB file frees it inside the timed rename (0.2 s here).
        # The default (every core) and one-thread runs alternate.
        if os.path.exists(a_out):
            os.remove(a_out)
        ta, rss, _ = run(a_cmd, "convert without samples")
        if ta < best_a:
            best_a, rss_a = ta, rss
        os.remove(a_out)
        ta_one, _, _ = run(a_cmd + one, "convert without samples, --num_threads 1")
        best_a_one = min(best_a_one, ta_one)
    if os.path.exists(a_out):
        os.remove(a_out)
    _, anon_a = run_sampled(a_cmd, "convert without samples")

    gb = sum(os.path.getsize(os.path.join(model_dir, f)) for f in os.listdir(model_dir)) / 1e9
    print("(a) convert W4 LPBQ/A16 htp_v75, overrides, no samples: %.2f s, peak RSS %.0f MB (mapped weights "
          "included), peak anonymous %.0f MB (target < 1024); cat of the %.2f GB of weights %.2f s: %.2fx cat "
          "(target <= 2x); with --num_threads 1 %.2f s: %.2fx cat"
          % (best_a, rss_a, anon_a, gb, cat_s, best_a / cat_s, best_a_one, best_a_one / cat_s))
    print("(b) calibration: %.2f s per sample of %d tokens (calibration %d samples %.1f s, 1 sample %.1f s; whole "
          "converts %.1f s and %.1f s), peak RSS %.0f MB; onnxruntime-node 1 thread %.2f s: %.2fx ORT (target <= 1.5x)"
          % (per_sample, a.seq, a.samples, cal, cal1, tb, tb1, rss_b, ort_ms / 1e3, per_sample / (ort_ms / 1e3)))
    print("(c) Q-DQ export (external data) runs in onnxruntime-node: %d outputs" % len(ort_qdq["outputs"]))
    if not a.keep:
        shutil.rmtree(a.work, ignore_errors=True)
    return 0


def _write_head(lst, n):
    with open(lst) as f:
        lines = f.readlines()[:n]
    with open(os.path.join(os.path.dirname(lst), "list1.txt"), "w") as f:
        f.writelines(lines)
    return True


if __name__ == "__main__":
    sys.exit(main())
