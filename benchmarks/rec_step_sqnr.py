#!/usr/bin/env python3
"""Per-output-step accuracy of the PaddleOCR recognizer under one qairt configuration.

The recognizer's CTC output has one softmax row per step (40 for its 48 x 320 input). A string
changes when one step's decision flips, and the aggregate SQNR hides which step that is. This
script renders text lines as accuracy_vs_plain.py does, converts with the given flags, runs the
Q-DQ export and the float model in ONNX Runtime on the held-out half, and prints the SQNR of each
step over all held-out lines, the strings kept, and for every missed string its first step's two
leading classes in float and quantized.

    /usr/bin/python3 benchmarks/rec_step_sqnr.py [--lines 48] [--act_bitwidth 8] -- [qairt convert flags]

Example: `-- --weights_bitwidth 8 --use_per_row_quantization --mixed_precision budget=25`.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import accuracy_vs_plain as A  # noqa: E402
import plain_minmax  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qairt", default=os.path.join(A.REPO, "build", "qairt"))
    ap.add_argument("--lines", type=int, default=48, help="rendered text lines: half calibrate, half evaluate")
    ap.add_argument("--act_bitwidth", default="8")
    ap.add_argument("flags", nargs=argparse.REMAINDER, help="after --: qairt convert flags")
    args = ap.parse_args()
    flags = [f for f in args.flags if f != "--"]
    import textlines
    model, input_name, shape, _, _ = A.MODELS["rec"]
    with tempfile.TemporaryDirectory() as tmp:
        pngs = textlines.render_rec(os.path.join(tmp, "png"), args.lines)
        half = args.lines // 2
        data = os.path.join(tmp, "data")
        calib = textlines.prepare(data, pngs[:half], "calib_list.txt", textlines.REC_WIDTH)
        evals = textlines.prepare(data, pngs[half:], "eval_list.txt", textlines.REC_WIDTH)
        samples = plain_minmax.read_input_list(evals, {input_name: shape}, None)
        float_outs = plain_minmax.run_ort(model, samples, os.path.join(tmp, "float"))
        qdq = os.path.join(tmp, "qdq.onnx")
        cmd = [args.qairt, "convert", "-i", model, "-d", input_name, ",".join(map(str, shape)), "--target",
               "htp_v73", "--input_list", calib, "--act_bitwidth", args.act_bitwidth, "--no_progress",
               "--export_qdq_onnx", qdq, "-o", os.path.join(tmp, "x.qairt")] + flags
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("qairt convert failed:\n" + r.stderr[-2000:])
        quant_outs = plain_minmax.run_ort(qdq, A.as_inputs_of(qdq, samples), os.path.join(tmp, "quant"))
    f = np.stack([list(o.values())[0][0] for o in float_outs])  # [lines, steps, classes]
    q = np.stack([list(o.values())[0][0] for o in quant_outs])
    step_db = 10 * np.log10((f ** 2).sum(axis=(0, 2)) / np.maximum(((f - q) ** 2).sum(axis=(0, 2)), 1e-30))
    db, agree, texts = A.score("ctc", float_outs, quant_outs)
    print("flags: %s" % " ".join(flags))
    print("median line SQNR %.1f dB; strings %d/%d; texts %d" % (db, agree, len(samples), texts))
    print("SQNR per step (dB): " + " ".join("%.1f" % v for v in step_db))
    print("worst step %d: %.1f dB; median step %.1f dB" % (int(np.argmin(step_db)), float(step_db.min()),
                                                         float(np.median(step_db))))
    for i in range(len(samples)):
        if A.ctc(f[i][None]) == A.ctc(q[i][None]):
            continue
        top = np.argsort(-f[i][0])[:2]
        fmt = lambda p: "[" + ", ".join("%.3f" % v for v in p) + "]"  # noqa: E731
        print("missed line %d: step 0 classes %s, float p %s, quantized p %s" % (
            i, top.tolist(), fmt(f[i][0][top]), fmt(q[i][0][top])))


if __name__ == "__main__":
    main()
