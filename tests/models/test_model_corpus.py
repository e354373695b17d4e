#!/usr/bin/python3
"""Model-corpus acceptance: every corpus model (tests/models/corpus.py)
imports, runs equal to a float reference and converts, through the CLI.

    /usr/bin/python3 tests/models/test_model_corpus.py [--qairt build/qairt] [--work build/model-corpus]
        [--markdown docs/model-conformance.md] [-k FILTER] [--jobs 2] [--regenerate]

Per model:
  import   `qairt inspect MODEL` succeeds.
  float    `qairt run` on the evaluation samples equals the reference within
           1e-4 x (max - min of the reference output), per output: onnxruntime-node
           (tests/exec/ort_exec.js) for ONNX models, Arm NN CpuRef for TFLite
           (tests/models/tflite_ref.py) within 1e-3 x range: qairt sums in ONNX
           Runtime's order, not Arm NN's, and the two drift apart by ~1e-7 of the
           activations' scale per layer (2e-5 after MediaPipe selfie segmentation's
           130 layers), which its final sigmoid, saturating a +-275 range into
           [0, 1], magnifies tenfold. Integer outputs (argmax classes, topk
           indices) must equal the reference exactly, read in the dtype
           `qairt inspect` reports for them (the executor may narrow int64).
  w8a16    `qairt convert --target htp_v73`, 16-bit activations, 8-bit per-channel
           weights, 32-bit biases, calibrated on the calibration samples, with
           --export_qdq_onnx; onnxruntime-node runs the Q-DQ model (graph
           optimizations disabled, so every Q/DQ runs as written, and enabled);
           its output SQNR against the float reference is recorded and must reach
           5 dB, a floor that only a broken conversion misses. An SQNR of class
           ids is meaningless: integer outputs are scored instead by the share of
           values equal to the float reference's, which must reach 50% (unrelated
           ids agree at chance level, 1 / classes).
  lpbq     transformer families only: the same on htp_v75 with 4-bit LPBQ weights
           (blocks of 64 along the input dim; per-channel where a weight has no
           such dim) and 16-bit activations.
A stage runs even when an earlier one failed (its own error is the useful one),
except that nothing runs after a failed import. Exit 1 unless every stage of
every model passes; the failures are listed per model with the first error.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import OrderedDict
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import corpus  # noqa: E402  (exits with a clear message when torch is missing)

ORT_EXEC = os.path.join(REPO, "tests", "exec", "ort_exec.js")
ORT_DIR = os.path.join(REPO, "third_party", "npm", "node_modules", "onnxruntime-node")
FLOAT_TOL = {"onnx": 1e-4, "tflite": 1e-3}
# A floor that only a broken conversion misses (an output unrelated to the float one scores 0 dB or less).
# Sound conversions measure far lower than their calibration-set figures here: held-out samples outside the
# ranges 8 calibration samples saw cost a random-weight ViT 22 dB of its 36 (clipped logits), and MediaPipe's
# selfie mask is near empty on synthetic images, so a few boundary pixels make its error (9.6 dB).
SQNR_FLOOR = {"w8a16": 5.0, "lpbq": 5.0}
# The same for integer outputs: a sound conversion moves at most near-ties of a topk or argmax.
AGREEMENT_FLOOR = 0.5
RECIPES = {
    "w8a16": ["--target", "htp_v73", "--act_bitwidth", "16", "--weights_bitwidth", "8", "--bias_bitwidth", "32",
              "--use_per_channel_quantization"],
    "lpbq": ["--target", "htp_v75", "--act_bitwidth", "16", "--weights_bitwidth", "4", "--weights_block_size", "64",
             "--use_lpbq", "--use_per_channel_quantization", "--bias_bitwidth", "32"],
}
STAGES = ("import", "float", "w8a16", "lpbq")
NP_DTYPE = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "bool": np.bool_}
ONNX_DTYPE = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
              10: np.float16, 4: np.uint16}


def first_error(text):
    """The first line that says what went wrong: the first "error:" line of a list (or error diagnostic of a
    --json report), else the CLI's own message (the line after it when it is a header ending in ':'), else the
    last line; with the count of further distinct errors."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    errors = list(dict.fromkeys(l[len("error:"):].strip() for l in lines if l.startswith("error:")))
    for l in lines:
        if l.startswith("{"):
            try:
                diags = json.loads(l).get("diagnostics", [])
            except (ValueError, AttributeError):
                continue
            errors += [d.get("message", "") for d in diags if d.get("severity") == "error"]
    errors = list(dict.fromkeys(errors))
    if errors:
        more = len(errors) - 1
        return errors[0][:400] + (" (+%d more)" % more if more else "")
    for k, l in enumerate(lines):
        if l.startswith("qairt "):
            if l.endswith(":") and k + 1 < len(lines):
                return lines[k + 1][:400]
            return l[:400]
    return (lines[-1] if lines else "(no message)")[:400]


class Stage:
    def __init__(self, ok=None, msg="", **values):
        self.ok, self.msg, self.values = ok, msg, values

    def __repr__(self):
        return "Stage(%r, %r, %r)" % (self.ok, self.msg, self.values)


def sh(cmd, log, timeout=900):
    """(exit code, stdout + stderr); the command line and its output are appended to LOG."""
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rc, out = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        rc, out = -1, "timed out after %d s" % timeout
    with open(log, "a") as f:
        f.write("$ %s\n[exit %d, %.1f s]\n%s\n" % (" ".join(cmd), rc, time.time() - t0, out))
    return rc, out


def read_list(path):
    """[{input name: file}] of an input_list written by corpus.py (name:=file, relative to the list)."""
    base = os.path.dirname(path)
    samples = []
    for line in open(path):
        if line.strip():
            samples.append({e.split(":=")[0]: os.path.join(base, e.split(":=")[1]) for e in line.split()})
    return samples


def load_inputs(m, split):
    specs = {i["name"]: i for i in m["inputs"]}
    out = []
    for s in read_list(m[split + "_list"]):
        out.append({n: np.fromfile(f, NP_DTYPE[specs[n]["dtype"]]).reshape(specs[n]["shape"]) for n, f in s.items()})
    return out


def run_ort(jobs, work, tag):
    """Runs JOBS in one onnxruntime-node process; {job out dir: [(name, array)] or error text}."""
    if not jobs:
        return {}
    jobs_file = os.path.join(work, "ort_jobs_%s.json" % tag)
    with open(jobs_file, "w") as f:
        json.dump(jobs, f)
    r = subprocess.run(["node", ORT_EXEC, jobs_file], capture_output=True, text=True, timeout=3600)
    errors = {}
    for line in r.stderr.splitlines():
        model, _, msg = line.partition(": ")
        errors.setdefault(model, msg)
    results = {}
    for job in jobs:
        res = os.path.join(job["out"], "result.json")
        if os.path.exists(res):
            with open(res) as f:
                results[job["out"]] = [(o["name"], np.load(o["file"])) for o in json.load(f)["outputs"]]
        else:
            results[job["out"]] = errors.get(job["model"], "onnxruntime-node failed: %s" % r.stderr[-400:])
    return results


def save_npy(arrays, folder, prefix):
    os.makedirs(folder, exist_ok=True)
    files = {}
    for k, (name, a) in enumerate(arrays.items()):
        files[name] = os.path.join(folder, "%s_%d.npy" % (prefix, k))
        np.save(files[name], a)
    return files


def ort_jobs(model_path, samples, folder, tag, opt):
    """One ort_exec.js job per sample."""
    return [{"model": model_path, "inputs": save_npy(s, os.path.join(folder, "npy"), "%s_%d" % (tag, i)),
             "out": os.path.join(folder, "%s_%s_%d" % (tag, opt, i)), "opt": opt} for i, s in enumerate(samples)]


def collect(results, jobs):
    """[[(name, array)] per sample], or the first error."""
    outs = []
    for job in jobs:
        r = results[job["out"]]
        if isinstance(r, str):
            return r
        outs.append(r)
    return outs


def is_integer(a):
    return a.dtype.kind in "iub"


def agreement(ref, test):
    """The share of values of TEST equal to those of REF (integer outputs)."""
    same = sum(int((r.reshape(-1) == t.reshape(-1)).sum()) for r, t in zip(ref, test))
    return same / max(1, sum(r.size for r in ref))


def sqnr(ref, test):
    num = sum(float((r.astype(np.float64) ** 2).sum()) for r in ref)
    den = sum(float(((r.astype(np.float64) - t.astype(np.float64).reshape(r.shape)) ** 2).sum())
              for r, t in zip(ref, test))
    return float("inf") if den == 0 else 10 * np.log10(max(num, 1e-30) / den)


def raw_name(name):
    """qairt run's output file name for a tensor name (tools/cmd_run.cpp FileName)."""
    s = re.sub(r"[/\\:\x00-\x1f]", "_", name or "_")
    return ("_" + s[1:] if s.startswith(".") else s) + ".raw"


class Driver:
    def __init__(self, args):
        self.a = args
        self.qairt = os.path.abspath(args.qairt)
        self.work = os.path.abspath(args.work)

    def dims(self, m):
        out = []
        for name, shape in m["dims"].items():
            out += ["-d", name, ",".join(str(d) for d in shape)]
        return out

    def folder(self, m):
        return os.path.join(self.work, "results", m["name"])

    # -- float references ---------------------------------------------------------------------------------------
    def references(self, models):
        """{model name: [[(output, array)] per eval sample] or error text}."""
        refs, jobs = {}, {}
        for m in models:
            samples = load_inputs(m, "eval")
            if m["format"] == "onnx":
                jobs[m["name"]] = ort_jobs(m["path"], samples, self.folder(m), "float", "all")
            elif m.get("reference_onnx"):
                twin = m["reference_onnx"]
                renamed = [OrderedDict((twin["inputs"][k], v) for k, v in s.items()) for s in samples]
                jobs[m["name"]] = ort_jobs(twin["path"], renamed, self.folder(m), "float", "all")
            else:
                import tflite_ref
                try:
                    tmp = tempfile.mkdtemp(dir=self.folder(m))
                    ref_model = tflite_ref.reference_copy(m["path"], tmp)
                    refs[m["name"]] = [list(tflite_ref.run(ref_model, s).items()) for s in samples]
                except Exception as e:  # a reference that cannot run is a failed check, not a crash
                    refs[m["name"]] = "Arm NN reference: %s" % e
        results = run_ort([j for js in jobs.values() for j in js], self.work, "float")
        for name, js in jobs.items():
            refs[name] = collect(results, js)
            twin = next((m.get("reference_onnx") for m in models if m["name"] == name), None)
            if twin and not isinstance(refs[name], str):  # the twin's outputs under the model's own names
                refs[name] = [[(twin["outputs"][k], a) for k, (_, a) in enumerate(outs)] for outs in refs[name]]
        return refs

    # -- qairt stages -------------------------------------------------------------------------------------------
    def qairt_stages(self, m):
        """Runs the CLI stages of one model; {stage: Stage} (float/recipes without the ORT comparison yet)."""
        d, log = self.folder(m), os.path.join(self.folder(m), "qairt.log")
        st = {}
        t0 = time.time()
        rc, out = sh([self.qairt, "inspect", m["path"]] + self.dims(m) + ["--json"], log)
        st["import"] = Stage(rc == 0, "" if rc == 0 else first_error(out))
        if rc == 0:
            try:
                st["import"].values["report"] = json.loads(out)
            except ValueError:
                pass
        if not st["import"].ok:
            for s in STAGES[1:]:
                st[s] = Stage(False, "not run: import failed") if s != "lpbq" or m["transformer"] else None
            return st, time.time() - t0
        run_dir = os.path.join(d, "run")
        rc, out = sh([self.qairt, "run", m["path"]] + self.dims(m) +
                     ["--input_list", m["eval_list"], "--output_dir", run_dir, "--num_threads", "1"], log)
        st["float"] = Stage(rc == 0, "" if rc == 0 else first_error(out))
        for recipe, flags in RECIPES.items():
            if recipe == "w8a16" and m.get("w8a16_flags"):
                flags = m["w8a16_flags"]
            if (recipe == "lpbq" and not m["transformer"]) or recipe in m.get("skip_recipes", ()):
                st[recipe] = None
                continue
            qdq = os.path.join(d, recipe + "_qdq.onnx")
            rc, out = sh([self.qairt, "convert", "-i", m["path"]] + self.dims(m) + flags +
                         ["--input_list", m["calib_list"], "--export_qdq_onnx", qdq, "-o",
                          os.path.join(d, recipe + ".qairt"), "--no_progress", "--num_threads", "1"], log)
            msg = first_error(out) if rc != 0 else "" if os.path.exists(qdq) else "exit 0 but no Q-DQ model written"
            if not msg and any(i.get("dtype") == "int64" for i in m.get("inputs") or []):
                # The converted model's inputs are int32 (int64 narrowed, as the vendor converter does); its
                # simulation still reads the model's own int64 raw files.
                rc, out = sh([self.qairt, "run", os.path.join(d, recipe + ".qairt"), "--input_list", m["eval_list"],
                              "--output_dir", os.path.join(d, recipe + "_run"), "--num_threads", "1"], log)
                msg = "" if rc == 0 else "qairt run of the .qairt on the int64 input files: " + first_error(out)
            st[recipe] = Stage(not msg, msg, qdq=qdq)
        return st, time.time() - t0

    def compare_float(self, m, stage, ref, report):
        """Per output over the evaluation samples: max |qairt - ref| against (max - min) of the reference; an
        integer output must equal the reference, read in the dtype REPORT (`qairt inspect --json`) gives it."""
        if not stage.ok:
            return
        if isinstance(ref, str):
            stage.ok, stage.msg = False, "float reference failed: " + ref
            return
        worst, tol = 0.0, FLOAT_TOL[m["format"]]
        declared = {o["name"]: o["dtype"] for o in report.get("outputs", [])}
        for k, (name, _) in enumerate(ref[0]):
            integer = is_integer(ref[0][k][1])
            dtype = np.dtype(declared.get(name, ref[0][k][1].dtype.name)) if integer else np.dtype(np.float32)
            refs, ours = [r[k][1].astype(np.int64 if integer else np.float64).reshape(-1) for r in ref], []
            for i, r in enumerate(refs):
                f = os.path.join(self.folder(m), "run", "Result_%d" % i, raw_name(name))
                if not os.path.exists(f):
                    got = sorted(os.listdir(os.path.dirname(f))) if os.path.isdir(os.path.dirname(f)) else []
                    stage.ok = False
                    stage.msg = "output '%s' missing from qairt run (wrote %s)" % (name, ", ".join(got))
                    return
                ours.append(np.fromfile(f, dtype))
                if ours[-1].size != r.size:
                    stage.ok = False
                    stage.msg = "output '%s': %d %s values, reference has %d" % (name, ours[-1].size, dtype, r.size)
                    return
            r, o = np.concatenate(refs), np.concatenate(ours)
            if integer:
                bad = np.flatnonzero(r != o.astype(np.int64))
                if bad.size and stage.ok:
                    stage.ok = False
                    stage.msg = "output '%s': %d of %d integer values differ from the reference (first: %d, not %d)" % (
                        name, bad.size, r.size, o[bad[0]], r[bad[0]])
                continue
            rng = float(r.max() - r.min())
            if rng == 0:
                stage.ok, stage.msg = False, "output '%s' is constant in the reference: the check is vacuous" % name
                return
            diff = float(np.abs(r - o).max()) if np.isfinite(o).all() else float("inf")
            worst = max(worst, diff / rng)
            if diff > tol * rng and stage.ok:
                stage.ok = False
                stage.msg = "output '%s': max |qairt - ref| %.3g > %.0e x range %.3g" % (name, diff, tol, rng)
        stage.values["err"] = worst

    def qdq_jobs(self, m, recipe, stage, samples):
        """ORT jobs for a recipe's Q-DQ model, inputs cast to the exported model's own input types."""
        import onnx
        qm = onnx.load(stage.values["qdq"], load_external_data=False)
        inits = {t.name for t in qm.graph.initializer}
        decl = {i.name: i.type.tensor_type for i in qm.graph.input if i.name not in inits}
        cast = []
        for s in samples:
            c = {}
            for name, a in s.items():
                if name not in decl:
                    raise ValueError("Q-DQ model has no input '%s' (inputs: %s)" % (name, ", ".join(decl)))
                t = decl[name]
                c[name] = a.astype(ONNX_DTYPE.get(t.elem_type, np.float32)).reshape(
                    [dd.dim_value for dd in t.shape.dim] or a.shape)
            cast.append(c)
        folder = os.path.join(self.folder(m), recipe + "_ort")
        return {opt: ort_jobs(stage.values["qdq"], cast, folder, "qdq", opt) for opt in ("disabled", "all")}

    def score(self, recipe, stage, ref, results, jobs):
        if not stage or not stage.ok:
            return
        if isinstance(ref, str):
            stage.ok, stage.msg = False, "float reference failed: " + ref
            return
        outs = {}
        for opt in ("disabled", "all"):  # both must run; the SQNR is the one of the Q/DQ nodes as written
            outs[opt] = collect(results, jobs[opt])
            if isinstance(outs[opt], str):
                stage.ok, stage.msg = False, "Q-DQ model in onnxruntime (optimizations %s): %s" % (opt, outs[opt])
                return
        worst, agree = None, None
        for k, (name, _) in enumerate(ref[0]):
            # By name, else by position: an export may name a graph output after the tensor it aliases.
            got = [dict(o).get(name, o[k][1] if k < len(o) else None) for o in outs["disabled"]]
            if any(g is None or g.size != r[k][1].size for g, r in zip(got, ref)):
                stage.ok, stage.msg = False, "Q-DQ output '%s' missing or of another size" % name
                return
            if is_integer(ref[0][k][1]):
                a = agreement([r[k][1] for r in ref], got)
                if agree is None or a < agree[0]:
                    agree = (a, name)
                continue
            s = sqnr([r[k][1] for r in ref], got)
            worst = s if worst is None else min(worst, s)
        stage.values["sqnr"] = worst
        if agree is not None:
            stage.values["agree"] = agree[0]
        if worst is not None and worst < SQNR_FLOOR[recipe]:
            stage.ok, stage.msg = False, "output SQNR %.1f dB < %.0f dB" % (worst, SQNR_FLOOR[recipe])
        elif agree is not None and agree[0] < AGREEMENT_FLOOR:
            stage.ok = False
            stage.msg = "output '%s': %.0f%% of integer values equal the float reference's < %.0f%%" % (
                agree[1], 100 * agree[0], 100 * AGREEMENT_FLOOR)

    # -- the whole run ------------------------------------------------------------------------------------------
    def run(self):
        t_start = time.time()
        for what, path in (("qairt", self.qairt), ("onnxruntime-node (scripts/setup-npm.sh)", ORT_DIR)):
            if not os.path.exists(path):
                raise SystemExit("model corpus: %s not found at %s" % (what, path))
        if shutil.which("node") is None:
            raise SystemExit("model corpus: node not found (scripts/setup-npm.sh installs it)")
        manifest = corpus.generate(os.path.join(self.work, "corpus"), self.a.calib, self.a.eval,
                                   force=self.a.regenerate)
        gen_s = time.time() - t_start
        models = [m for m in manifest["models"] if not self.a.filter or self.a.filter in m["name"]]
        if not models:
            raise SystemExit("model corpus: no model matches -k %s" % self.a.filter)
        for m in models:
            shutil.rmtree(self.folder(m), ignore_errors=True)
            os.makedirs(self.folder(m))
        t0 = time.time()
        refs = self.references(models)
        ref_s = time.time() - t0
        stages, seconds = {}, {}
        with concurrent.futures.ThreadPoolExecutor(self.a.jobs) as pool:
            futures = {pool.submit(self.qairt_stages, m): m for m in models}
            for fut in concurrent.futures.as_completed(futures):
                m = futures[fut]
                stages[m["name"]], seconds[m["name"]] = fut.result()
                s = stages[m["name"]]
                print("model corpus: %-32s %5.1f s  %s" % (m["name"], seconds[m["name"]], "  ".join(
                    "%s %s" % (k, "ok" if v.ok else "FAIL") for k, v in s.items() if v is not None)), flush=True)
        t1 = time.time()
        jobs, all_jobs = {}, []
        for m in models:
            self.compare_float(m, stages[m["name"]]["float"], refs[m["name"]],
                               stages[m["name"]]["import"].values.get("report", {}))
            for recipe in RECIPES:
                st = stages[m["name"]].get(recipe)
                if st and st.ok:
                    try:
                        jobs[m["name"], recipe] = self.qdq_jobs(m, recipe, st, load_inputs(m, "eval"))
                    except Exception as e:  # an unreadable export is this stage's failure
                        st.ok, st.msg = False, "Q-DQ model: %s" % e
                        continue
                    all_jobs += jobs[m["name"], recipe]["disabled"] + jobs[m["name"], recipe]["all"]
        results = run_ort(all_jobs, self.work, "qdq")
        for (name, recipe), js in jobs.items():
            self.score(recipe, stages[name][recipe], refs[name], results, js)
        total = time.time() - t_start
        timing = dict(generation=gen_s, references=ref_s, qairt=t1 - t0 - ref_s, qdq_ort=time.time() - t1, total=total)
        self.report(models, stages, seconds, timing)
        return 0 if all(s is None or s.ok for st in stages.values() for s in st.values()) else 1

    # -- reporting ----------------------------------------------------------------------------------------------
    @staticmethod
    def cell(stage, key=None, fmt="%.1f"):
        if stage is None:
            return "—"
        v = stage.values.get(key) if key else None
        text = None if v is None else fmt % v
        if key == "sqnr" and stage.values.get("agree") is not None:  # integer outputs: the share that agrees
            text = ("%s, " % text if text else "") + "ids %.0f%%" % (100 * stage.values["agree"])
        if not stage.ok:
            return "**fail**" + (" (" + text + ")" if text else "")
        return "ok" if text is None else text

    def report(self, models, stages, seconds, timing):
        failures = []
        for m in models:
            for s in STAGES:
                st = stages[m["name"]].get(s)
                if st is not None and not st.ok:
                    failures.append((m["name"], s, st.msg))
        n_stages = sum(1 for st in stages.values() for s in st.values() if s is not None)
        passed = sum(1 for st in stages.values() for s in st.values() if s is not None and s.ok)
        ok_models = sum(1 for st in stages.values() if all(s is None or s.ok for s in st.values()))
        print("\nmodel corpus: %d models, %d pass every stage; %d of %d stages pass "
              "(corpus %.0f s, references %.0f s, qairt %.0f s, Q-DQ in ORT %.0f s, total %.0f s)" % (
                  len(models), ok_models, passed, n_stages, timing["generation"], timing["references"],
                  timing["qairt"], timing["qdq_ort"], timing["total"]))
        if failures:
            print("\nFailures (model, stage: first error):")
            for name, s, msg in failures:
                print("  %-32s %-7s %s" % (name, s, msg))
        print("%d passed, %d failed" % (ok_models, len(models) - ok_models))
        if self.a.markdown:
            self.markdown(models, stages, failures, timing, ok_models)

    def markdown(self, models, stages, failures, timing, ok_models):
        def esc(msg):  # repository-relative paths: the page must not depend on where it was generated
            return msg.replace(REPO + os.sep, "").replace("|", "\\|")
        with open(self.a.markdown, "w") as f:
            f.write("# Model corpus conformance\n\n")
            f.write("Generated by `tests/models/test_model_corpus.py --markdown docs/model-conformance.md` (the ctest "
                    "entry `model_corpus` runs the same checks and fails unless every stage of every model passes). "
                    "The corpus (`tests/models/corpus.py`) is exported by Debian's python3-torch %s / "
                    "python3-torchvision %s with random weights, plus the real models of `third_party/npm`; "
                    "%d calibration and %d evaluation samples per model.\n\n" % (
                        corpus.torch.__version__, corpus.torchvision.__version__, self.a.calib, self.a.eval))
            f.write("* **import**: `qairt inspect`.\n"
                    "* **float error**: `qairt run` against onnxruntime-node (Arm NN CpuRef for TFLite), the worst "
                    "max |difference| / (max - min of the reference) over outputs and samples; must be <= 1e-4 "
                    "(1e-3 against Arm NN, whose summation order qairt does not copy); integer outputs (class "
                    "ids, topk indices) must equal the reference.\n"
                    "* **W8A16 htp_v73**: 16-bit activations, 8-bit per-channel weights, 32-bit biases; output "
                    "SQNR (dB, worst output) of the `--export_qdq_onnx` model run in onnxruntime-node against the "
                    "float reference; must reach %.0f dB. Integer outputs are scored by the share of ids equal to "
                    "the float reference's (\"ids\"), which must reach %.0f%%.\n"
                    "* **W4 LPBQ A16 htp_v75** (transformer families): 4-bit LPBQ weights in blocks of 64, 16-bit "
                    "activations; must reach %.0f dB.\n\n" % (SQNR_FLOOR["w8a16"], 100 * AGREEMENT_FLOOR,
                                                               SQNR_FLOOR["lpbq"]))
            f.write("%d of %d models pass every stage.\n\n" % (ok_models, len(models)))
            f.write("| model | family | source | opset | import | float error | W8A16 htp_v73 SQNR | "
                    "W4 LPBQ A16 htp_v75 SQNR |\n|---|---|---|---|---|---|---|---|\n")
            notes = [m for m in models if m.get("note")]
            for m in models:
                st = stages[m["name"]]
                mark = "<sup>%d</sup>" % (notes.index(m) + 1) if m in notes else ""
                f.write("| %s%s | %s | %s | %s | %s | %s | %s | %s |\n" % (
                    m["name"], mark, m["family"], m["source"], m["opset"] or m["format"], self.cell(st["import"]),
                    self.cell(st["float"], "err", "%.1e"), self.cell(st["w8a16"], "sqnr"),
                    self.cell(st.get("lpbq"), "sqnr")))
            for k, m in enumerate(notes):
                f.write("\n<sup>%d</sup> %s: %s." % (k + 1, m["name"], m["note"]))
            f.write("\n\n## Failures\n\n")
            if not failures:
                f.write("None.\n")
            else:
                f.write("| model | stage | first error |\n|---|---|---|\n")
                for name, s, msg in failures:
                    f.write("| %s | %s | %s |\n" % (name, s, esc(msg)))
            f.write("\n## Op types\n\nThe source model's ops (ONNX node types, TFLite builtin/custom codes).\n\n"
                    "| model | ops |\n|---|---|\n")
            for m in models:
                ops = m["ops"] or sorted(stages[m["name"]]["import"].values.get("report", {}).get("onnx_ops", {}))
                f.write("| %s | %s |\n" % (m["name"], ", ".join(ops)))
            f.write("\nRun time on this machine: %.0f s (corpus generation %.0f s).\n" % (
                timing["total"], timing["generation"]))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qairt", default=os.path.join(REPO, "build", "qairt"))
    ap.add_argument("--work", default=os.path.join(REPO, "build", "model-corpus"))
    ap.add_argument("--markdown", help="write the conformance table here (docs/model-conformance.md)")
    ap.add_argument("-k", dest="filter", help="only models whose name contains this")
    ap.add_argument("--jobs", type=int, default=2, help="models converted in parallel")
    ap.add_argument("--calib", type=int, default=8, help="calibration samples per model")
    ap.add_argument("--eval", type=int, default=4, help="evaluation samples per model")
    ap.add_argument("--regenerate", action="store_true", help="export the corpus again even when up to date")
    return Driver(ap.parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
