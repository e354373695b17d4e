"""qairt.distributed: sharded calibration on Dask (Debian's python3-distributed).

A LocalCluster of 2 worker processes, and a scheduler plus 2 workers started
as separate processes on localhost (scheduler file), calibrate the PaddleOCR
direction classifier, a small transformer layer and the model corpus's
torch-exported Llama-style decoder (int64 token ids): the container and
encodings written from the merged statistics must equal, byte for byte, a
single-process qairt.convert with input_list (min-max, percentile, mse and
sqnr; 1, 2 and 3 shards). Statistics travel as bytes (the
CalibrationStats pickle is its bytes), and a round mismatch is refused.
Sharded sensitivity analysis equals the local one, score for score.
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

import pickle  # noqa: E402

import qairt  # noqa: E402
import qairt.distributed as qd  # noqa: E402
from qairt import analyze, stats  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

CLS = os.path.join(REPO, "third_party", "npm", "node_modules", "@gutenye", "ocr-models", "assets",
                   "ch_ppocr_mobile_v2.0_cls_infer.onnx")


def read(path):
    with open(path, "rb") as f:
        return f.read()


class DistributedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="qairt_dask_")
        d = cls.tmp.name
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "calib", "make_textline_samples.py"),
                        os.path.join(d, "cls"), "12"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(REPO, "tests", "calib", "make_transformer.py"),
                        os.path.join(d, "tf"), "8", "32", "5"], check=True, stdout=subprocess.DEVNULL)
        # qairt.convert imports a path with static shapes required: the
        # classifier with its input fixed to [1, 3, 48, 192] (what -d does).
        import onnx
        cls_model = onnx.load(CLS)
        for dim, v in zip(cls_model.graph.input[0].type.tensor_type.shape.dim, (1, 3, 48, 192)):
            dim.ClearField("dim_param")
            dim.dim_value = v
        cls_path = os.path.join(d, "cls.onnx")
        onnx.save(cls_model, cls_path)
        # A transformer of the model corpus as torch exports it (Llama-style
        # decoder: RMSNorm, rotary, GQA; int64 token ids).
        sys.path.insert(0, os.path.join(REPO, "tests", "models"))
        import corpus
        manifest = corpus.generate(os.path.join(d, "corpus"), calib=6, evals=1, filt="llama")
        llama = next(x for x in manifest["models"] if x["name"] == "llama")
        cls.models = {
            "cls": dict(model=cls_path, target="htp_v73", input_list=os.path.join(d, "cls", "calib_list.txt"),
                        options=dict(act_bitwidth=16, per_channel=True)),
            "transformer": dict(model=os.path.join(d, "tf", "transformer.onnx"), target="htp_v75",
                                input_list=os.path.join(d, "tf", "calib_list.txt"),
                                options=dict(act_bitwidth=16, per_row=True)),
            "llama": dict(model=llama["path"], target="htp_v75", input_list=llama["calib_list"],
                          options=dict(act_bitwidth=16, per_row=True)),
        }
        cls.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        cls.client = Client(cls.cluster)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.cluster.close()
        cls.tmp.cleanup()

    def local(self, name, method):
        m = self.models[name]
        out = os.path.join(self.tmp.name, "local_%s_%s" % (name, method))
        r = qairt.convert(m["model"], m["target"], out + ".qairt", input_list=m["input_list"], act_method=method,
                          export_encodings=out + ".json", keep_rewrites=True, **m["options"])
        self.assertTrue(r.ok, r.errors)
        return read(out + ".qairt"), read(out + ".json")

    def sharded(self, client, name, method, shards):
        m = self.models[name]
        out = os.path.join(self.tmp.name, "dask_%s_%s_%d" % (name, method, shards))
        r = qd.convert(client, m["model"], m["target"], out + ".qairt", m["input_list"], shards=shards,
                       act_method=method, export_encodings=out + ".json", **m["options"])
        self.assertTrue(r.ok, r.errors)
        return read(out + ".qairt"), read(out + ".json")

    def test_local_cluster_matches_single_process(self):
        # Every method at 2 shards, every shard count with mse (two rounds);
        # the full method x shard-count matrix runs in-process in
        # tests/calib/test_stats.cpp.
        runs = [("cls", m, 2) for m in ("min-max", "percentile", "mse", "sqnr")]
        runs += [("cls", "mse", 1), ("cls", "mse", 3), ("transformer", "min-max", 3), ("transformer", "mse", 2)]
        runs += [("llama", m, s) for m, s in (("min-max", 1), ("percentile", 2), ("mse", 3), ("sqnr", 2))]
        wanted = {}
        for name, method, shards in runs:
            with self.subTest(model=name, method=method, shards=shards):
                if (name, method) not in wanted:
                    wanted[name, method] = self.local(name, method)
                want = wanted[name, method]
                got = self.sharded(self.client, name, method, shards)
                self.assertEqual(got[1], want[1], "encodings differ")
                self.assertEqual(got[0], want[0], "container differs")

    def local_sensitivity(self, name):
        m = self.models[name]
        g = qairt.import_onnx(m["model"])[0]
        return analyze.sensitivity(g, m["input_list"], **self.sensitivity_options)

    sensitivity_options = dict(act_bitwidth=8, per_channel=True)

    def assert_same_report(self, got, want):
        self.assertGreater(len(want.units), 3)
        self.assertEqual(got.units, want.units)  # exact scores (no NaN: every unit evaluated)
        self.assertEqual((got.samples, got.sqnr_base_db, got.sqnr_high_db),
                         (want.samples, want.sqnr_base_db, want.sqnr_high_db))
        self.assertEqual(got.json, want.json)
        self.assertEqual(got.text, want.text)
        self.assertEqual(got.svg, want.svg)

    def test_sharded_sensitivity_matches_local(self):
        for name, shard_counts in (("transformer", (1, 2, 3)), ("cls", (2,)), ("llama", (3,))):
            want = self.local_sensitivity(name)
            for shards in shard_counts:
                with self.subTest(model=name, shards=shards):
                    got = qd.sensitivity(self.client, self.models[name]["model"], self.models[name]["input_list"],
                                         shards=shards, **self.sensitivity_options)
                    self.assert_same_report(got, want)

    def test_sensitivity_shards_are_checked(self):
        m = self.models["transformer"]
        g = qairt.import_onnx(m["model"])[0]
        parts = [analyze.sensitivity(g, m["input_list"], shard=(k, 3), **self.sensitivity_options) for k in range(3)]
        # A shard lists every unit and scores only its own.
        self.assertEqual(sum(u.sqnr_only_quantized == u.sqnr_only_quantized for u in parts[1].units),
                         len(parts[1].units[1::3]))
        self.assertIn("units evaluated here", parts[1].text)
        merged = analyze.merge_sensitivity([p.json for p in reversed(parts)])
        self.assert_same_report(merged, self.local_sensitivity("transformer"))
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            analyze.merge_sensitivity([parts[0].json, parts[2].json])
        self.assertIn("shard 1 of 3 is missing", str(cm.exception))
        with self.assertRaises(qairt.QairtError) as cm:
            analyze.merge_sensitivity([parts[0].json[:-9], parts[1].json, parts[2].json])
        self.assertIn("sensitivity report", str(cm.exception))

    def test_sharded_mixed_precision_matches_local(self):
        # The classifier at W8A8 per tensor: a budget between everything at
        # W8A8 and everything at W16A16 makes the search rank and promote.
        m = self.models["cls"]
        opts = dict(budget_db=20.0, act_bitwidth=8)
        local_graph = qairt.import_onnx(m["model"])[0]
        want = analyze.mixed_precision(local_graph, m["input_list"], **opts)
        self.assertLess(want.sqnr_base_db, opts["budget_db"])
        self.assertGreater(want.sqnr_high_db, opts["budget_db"])
        self.assertTrue(want.promoted)
        for shards in (2,):
            with self.subTest(shards=shards):
                graph, got = qd.mixed_precision(self.client, m["model"], m["input_list"], shards=shards, **opts)
                self.assertEqual(got.promoted, want.promoted)
                self.assertEqual(got.sqnr_chosen_db, want.sqnr_chosen_db)
                self.assertEqual((got.budget_met, got.boundaries), (want.budget_met, want.boundaries))
                out_local = os.path.join(self.tmp.name, "mp_local_%d.onnx" % shards)
                out_dask = os.path.join(self.tmp.name, "mp_dask_%d.onnx" % shards)
                local_graph.export_onnx(out_local)
                graph.export_onnx(out_dask)
                self.assertEqual(read(out_dask), read(out_local), "the calibrated graphs differ")
        # A shard's gains are a value; gains of another search are refused.
        part = analyze.mixed_precision(qairt.import_onnx(m["model"])[0], m["input_list"], shard=(0, 2), **opts)
        self.assertGreater(len(part.gains), len(want.promoted))
        self.assertEqual(sum(g != g for _, g in part.gains), len(part.gains) // 2)  # NaN: the other shard's
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            analyze.mixed_precision(qairt.import_onnx(m["model"])[0], m["input_list"], gains=[part.json], **opts)
        self.assertIn("shard 1 of 2 is missing", str(cm.exception))

    def test_statistics_are_values(self):
        m = self.models["transformer"]
        st = qd.calibrate(self.client, m["model"], m["target"], m["input_list"], shards=2, act_method="mse",
                          **m["options"])
        self.assertEqual((st.round, st.complete, st.samples), (2, True, 5))
        again = pickle.loads(pickle.dumps(st))
        self.assertEqual(again.to_bytes(), st.to_bytes())
        path = os.path.join(self.tmp.name, "t.stats")
        st.save(path)
        self.assertEqual(stats.load(path).to_bytes(), st.to_bytes())
        with self.assertRaises(qairt.InvalidArgumentError) as cm:
            stats.merge([st, st])
        self.assertIn("already in the merge", str(cm.exception))
        with self.assertRaises(qairt.QairtError) as cm:
            stats.CalibrationStats.from_bytes(st.to_bytes()[:40])
        self.assertIn("calibration statistics", str(cm.exception))

    def test_scheduler_and_workers_as_processes(self):
        sched_file = os.path.join(self.tmp.name, "scheduler.json")
        env = dict(os.environ)
        procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", "0", "--no-dashboard", "--scheduler-file", sched_file], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            for _ in range(300):
                if os.path.exists(sched_file):
                    break
                time.sleep(0.1)
            for _ in range(2):
                procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--nthreads", "1",
                                               "--no-dashboard", "--scheduler-file", sched_file], env=env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with Client(scheduler_file=sched_file, timeout=60) as client:
                client.wait_for_workers(2, timeout=120)
                want = self.local("cls", "mse")
                got = self.sharded(client, "cls", "mse", 2)
                self.assertEqual(got, want)
                m = self.models["transformer"]
                self.assert_same_report(qd.sensitivity(client, m["model"], m["input_list"], **self.sensitivity_options),
                                        self.local_sensitivity("transformer"))
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()


if __name__ == "__main__":
    unittest.main()
