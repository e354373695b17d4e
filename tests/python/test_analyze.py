"""Rewrites, sensitivity and mixed precision through the Python binding."""
import ctypes
import os
import struct
import tempfile
import unittest

import abi_check

import numpy as np

import qairt
from qairt import analyze, calib


def affine_fc():
    """x[1,16] -> FullyConnected -> * 0.5 -> + 1 -> Relu -> y (the Mul/Add fold into the FC)."""
    g = qairt.Graph("affine")
    x = g.add_input("x", "float32", [1, 16])
    w = g.add_constant("w", "float32", [8, 16], struct.pack("128f", *[((i * 5) % 13 - 6) / 9 for i in range(128)]))
    fc = g.add_op("FullyConnected", "fc", [x, w], ["h"])
    half = g.add_constant("half", "float32", [1], struct.pack("f", 0.5))
    one = g.add_constant("one", "float32", [1], struct.pack("f", 1.0))
    m = g.add_op("ElementWiseMultiply", "mul", [g.op(fc).outputs[0], half], ["hm"])
    a = g.add_op("ElementWiseAdd", "add", [g.op(m).outputs[0], one], ["ha"])
    r = g.add_op("Relu", "relu", [g.op(a).outputs[0]], ["y"])
    g.mark_output(g.op(r).outputs[0])
    return g


def write_list(d, n, seed=3):
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        rng.normal(size=(1, 16)).astype("<f4").tofile(os.path.join(d, "s%d.raw" % i))
        lines.append("x:=s%d.raw\n" % i)
    path = os.path.join(d, "list.txt")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


class AnalyzeTest(unittest.TestCase):
    def test_declarations_match_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_analyze.h", "analyze.exports", analyze.DECLARED)

    def test_struct_sizes_match_the_library(self):
        # The *_init functions write struct_size = sizeof(the C struct).
        for cls, init in ((analyze.RewriteOptions, "qairt_rewrite_options_init"),
                          (analyze.AnalysisOptions, "qairt_analysis_options_init")):
            s = cls()
            analyze._fn[init](ctypes.byref(s))
            self.assertEqual(s.struct_size, ctypes.sizeof(cls), cls.__name__)

    def test_rewrite_folds_and_reports(self):
        g = affine_fc()
        self.assertIn("fold-affine-into-conv", analyze.rewrite_names())
        r = analyze.rewrite(g)
        fold = [o for o in r.rewrites if o.name == "fold-affine-into-conv"][0]
        self.assertEqual(fold.fired, 2)
        self.assertFalse(fold.rolled_back)
        self.assertGreaterEqual(fold.cosine, 0.999999)
        self.assertEqual((r.ops_before, r.ops_after), (4, 2))
        self.assertIn("'fc' (FullyConnected) absorbed 'mul'", r.text)
        self.assertEqual(g.op_count, 2)

    def test_rewrite_rejects_unknown_names(self):
        with self.assertRaises(qairt.QairtError) as e:
            analyze.rewrite(affine_fc(), disabled=["fuse-everything"])
        self.assertIn("fuse-everything", str(e.exception))

    def test_choose_calibration(self):
        """The configurations tried, each with a held-out score, one chosen, returned as convert's keywords."""
        with tempfile.TemporaryDirectory() as d:
            path = write_list(d, 8)
            g = affine_fc()
            before = g.clone()
            a = analyze.choose_calibration(g, path, per_channel=True, target="htp_v73")
            self.assertEqual(a.samples, 8)
            self.assertGreaterEqual(len(a.trials), 6)
            self.assertEqual(a.trials[0][0], "none (the options as given)")
            self.assertEqual(len({t[0] for t in a.trials}), len(a.trials))
            self.assertEqual(a.text.count("<- chosen"), 1)
            chosen_label = a.text.split("<- chosen")[0].splitlines()[-1].strip()
            self.assertTrue(any(chosen_label.startswith(t[0]) for t in a.trials), chosen_label)
            self.assertEqual(set(a.chosen), {"act_method", "param_method", "adaptive_rounding", "bias_correction",
                                             "wide_fixed_ranges"})
            self.assertEqual(a.chosen["bias_correction"], "bias correction" in chosen_label)
            self.assertEqual(a.chosen["param_method"] == "seqmse", "seqmse" in chosen_label)
            self.assertAlmostEqual(a.sqnr_chosen_db, max(t[1] for t in a.trials), delta=0.05)
            self.assertEqual(g, before)  # the graph is not calibrated
            calibrated = g.clone()
            calib.calibrate(calibrated, input_list=path)
            self.assertNotEqual(calibrated, before)  # (which the comparison would see)
            self.assertIn('"trials":[', a.json)

    def test_sensitivity_and_mixed_precision(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_list(d, 8)
            g = affine_fc()
            s = analyze.sensitivity(g, path)
            self.assertEqual(s.samples, 8)
            self.assertGreater(len(s.units), 0)
            self.assertGreater(s.sqnr_high_db, s.sqnr_base_db)
            self.assertTrue(s.svg.startswith("<svg"))
            self.assertIn('"units":[', s.json)
            m = analyze.mixed_precision(g, path, percent=100, target="htp_v73")
            self.assertGreater(len(m.promoted), 0)
            self.assertIn("mixed precision:", m.text)
            # The model as returned: its median sample and its worst samples, by place in the input list.
            self.assertEqual(len(m.worst_samples), 3)
            self.assertTrue(all(0 <= i < 8 for i, _ in m.worst_samples))
            self.assertEqual(len({i for i, _ in m.worst_samples}), 3)
            dbs = [db for _, db in m.worst_samples]
            self.assertEqual(dbs, sorted(dbs))
            self.assertGreaterEqual(m.median_db, dbs[-1])
            self.assertIn("from 0): #%d %.2f dB" % m.worst_samples[0], m.text)
            with self.assertRaises(ValueError):
                analyze.mixed_precision(g, path)
            # A budget out of reach, promotions only: the warning says so and what can still meet it.
            far = analyze.mixed_precision(affine_fc(), path, budget_db=400, promotions_only=True)
            (warning,) = [w for w in far.warnings if "is not met" in w]
            self.assertIn("the budget of 400.00 dB is not met", warning)
            self.assertIn("at most 20% of the units", warning)
            self.assertIn("Fix: raise the base it promotes from (--bias_correction --adaptive_rounding", warning)
            self.assertIn("--mixed_precision percent=P", warning)
            self.assertNotIn("the promotions alone:", far.text)
            # By default the techniques are measured first; the base to raise is then not suggested.
            raised = analyze.mixed_precision(affine_fc(), path, budget_db=400)
            self.assertIn("the promotions alone:", raised.text)
            self.assertIn("auto quant:", raised.text)
            self.assertIn('"techniques":{', raised.json)
            (warning,) = [w for w in raised.warnings if "is not met" in w]
            self.assertNotIn("raise the base", warning)
            self.assertIn("--mixed_precision percent=P", warning)


if __name__ == "__main__":
    unittest.main()
