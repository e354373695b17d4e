"""The executor against onnxruntime-node (tests/exec/ort_exec.js, single thread).

Float models: max |ours - ORT| <= 1e-4 x (max - min of ORT's output), per output.
Q-DQ model: ORT with graph optimizations disabled (it then runs every
QuantizeLinear/DequantizeLinear as written); ours imports the model (Q-DQ
folded into encodings) and simulates quantization; every output value within
one quantization step of the output encoding.
Q-DQ model with 16-bit activations over the ops whose summation order the
executor copies from ONNX Runtime (lib/exec/gemm.cpp): bit-identical, with
ORT's graph optimizations disabled and enabled.
Writes the measured differences to $QAIRT_EXEC_REPORT (JSON) when set.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import exec_models  # noqa: E402
import qairt  # noqa: E402

REPO = exec_models.REPO
NODE = os.environ.get("QAIRT_NODE", "node")
RESULTS = {}


def random_inputs(model, seed, shapes=None):
    rng = np.random.default_rng(seed)
    out = {}
    inits = {t.name for t in model.graph.initializer}
    for i in model.graph.input:
        if i.name in inits:
            continue
        dims = (shapes or {}).get(i.name) or [d.dim_value for d in i.type.tensor_type.shape.dim]
        out[i.name] = rng.uniform(-1, 1, size=dims).astype(np.float32)
    return out


class ExecVsOrt(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="qairt-exec-ort-")
        cls.cases = {}  # name -> (model path, inputs, tolerance kind)
        t = cls.tmp.name

        def add(name, model, inputs, kind="float", opt="all", step=None):
            path = os.path.join(t, name + ".onnx")
            onnx.save(model, path)
            cls.cases[name] = dict(path=path, inputs=inputs, kind=kind, opt=opt, step=step)

        if os.path.exists(exec_models.CLS_MODEL):
            m = onnx.load(exec_models.CLS_MODEL)
            add("cls", m, random_inputs(m, 1, {"x": [1, 3, 48, 192]}))
        for name in exec_models.light_names():
            m = exec_models.light_model(exec_models.light_path(name))
            add(name, m, random_inputs(m, 2))
        m = exec_models.mobilenet_like()
        add("mobilenet_like", m, random_inputs(m, 6))
        m = exec_models.encoder_layer()
        add("encoder_layer", m, random_inputs(m, 3))
        m = exec_models.recurrent()
        add("lstm_gru", m, random_inputs(m, 4))
        m, step = exec_models.qdq_cnn()
        add("qdq_cnn", m, random_inputs(m, 5), kind="qdq", opt="disabled", step=step)
        m, steps = exec_models.qdq16_mlas_order()
        for opt in ("disabled", "all"):
            add("qdq16_mlas_order_" + opt, m, random_inputs(m, 8), kind="exact", opt=opt, step=steps)
        jobs = []
        for name, c in cls.cases.items():
            c["in_files"] = {}
            for k, v in c["inputs"].items():
                f = os.path.join(t, "%s_in_%s.npy" % (name, k.replace("/", "_")))
                np.save(f, v)
                c["in_files"][k] = f
            jobs.append({"model": c["path"], "inputs": c["in_files"], "out": os.path.join(t, name + "_ort"), "opt": c["opt"]})
        with open(os.path.join(t, "jobs.json"), "w") as f:
            json.dump(jobs, f)
        r = subprocess.run([NODE, os.path.join(HERE, "ort_exec.js"), os.path.join(t, "jobs.json")], capture_output=True,
                           text=True, timeout=1200)
        cls.ort_log = r.stderr

    @classmethod
    def tearDownClass(cls):
        report = os.environ.get("QAIRT_EXEC_REPORT")
        if report:
            with open(report, "w") as f:
                json.dump(RESULTS, f, indent=1, sort_keys=True)
        cls.tmp.cleanup()

    def check(self, name):
        if name not in self.cases:
            self.skipTest("%s is not available" % name)
        c = self.cases[name]
        res_file = os.path.join(self.tmp.name, name + "_ort", "result.json")
        self.assertTrue(os.path.exists(res_file), "onnxruntime failed on %s: %s" % (name, self.ort_log))
        with open(res_file) as f:
            ort = json.load(f)
        dims = {k: list(v.shape) for k, v in c["inputs"].items()}
        g, _ = qairt.import_onnx(c["path"], input_dims=dims)
        with g, qairt.Executor(g) as ex:
            got = ex.run(c["inputs"])
            if c["kind"] in ("qdq", "exact"):
                # The simulation must matter: the same graph run in float gives other values.
                with qairt.Executor(g, simulate_quantization=False) as fl:
                    plain = list(fl.run(c["inputs"]).values())
                self.assertGreater(max(float(np.abs(a - b).max()) for a, b in zip(plain, got.values())), 0.0)
        got_list = list(got.values())
        self.assertEqual(len(got_list), len(ort["outputs"]))
        for o, ours in zip(ort["outputs"], got_list):
            ref = np.load(o["file"]).astype(np.float64)
            self.assertEqual(tuple(ref.shape), tuple(ours.shape), "%s output %s" % (name, o["name"]))
            diff = float(np.abs(ref - ours.astype(np.float64)).max())
            rng = float(ref.max() - ref.min())
            if c["kind"] == "exact":
                bound = 0.0
                step = c["step"][o["name"]]
                RESULTS["%s/%s" % (name, o["name"])] = {"max_abs_diff": diff, "step": step, "steps": diff / step}
                # Not vacuous: the output spans many steps of its 16-bit grid.
                self.assertGreater(rng / step, 50, "%s output %s spans %.1f steps" % (name, o["name"], rng / step))
            elif c["kind"] == "qdq":
                bound = c["step"] * (1 + 1e-6)
                RESULTS["%s/%s" % (name, o["name"])] = {"max_abs_diff": diff, "step": c["step"], "steps": diff / c["step"]}
            else:
                bound = 1e-4 * rng
                RESULTS["%s/%s" % (name, o["name"])] = {"max_abs_diff": diff, "range": rng,
                                                        "ratio": diff / rng if rng else None}
                self.assertGreater(rng, 0.0, "%s output %s is constant: the check would be vacuous" % (name, o["name"]))
            self.assertLessEqual(diff, bound, "%s output %s: max abs diff %.3g > %.3g (range %.3g)" % (
                name, o["name"], diff, bound, rng))


def _make(name):
    return lambda self: self.check(name)


for _n in ["cls", "mobilenet_like", "encoder_layer", "lstm_gru", "qdq_cnn", "qdq16_mlas_order_disabled",
           "qdq16_mlas_order_all"] + exec_models.light_names():
    setattr(ExecVsOrt, "test_" + _n, _make(_n))

if __name__ == "__main__":
    unittest.main()
