"""qairt.convert (the binding of include/qairt/qairt_convert.h) against
`qairt convert`: the same options give byte-identical outputs (container,
encodings, Q-DQ ONNX) and the same summary; a conversion that fails is
reported in the result with no output left; bad options raise.

Environment (tests/CMakeLists.txt, test "python"): QAIRT_LIBRARY and
PYTHONPATH as for every test here, QAIRT_CLI the qairt binary of the same
build (default <repo>/build/qairt).
"""
import ctypes
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import abi_check

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import qairt
from qairt import conversion

REPO = abi_check.REPO
CLI = os.environ.get("QAIRT_CLI") or os.path.join(REPO, "build", "qairt")
STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"
OUTPUTS = ("m.qairt", "e.json", "q.onnx")


def write_model(path):
    """A small float model: Conv + Relu + Flatten + MatMul + Add, static shapes."""
    rng = np.random.default_rng(11)
    inits = [
        numpy_helper.from_array(rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "conv_w"),
        numpy_helper.from_array(rng.normal(0, 0.1, (4,)).astype(np.float32), "conv_b"),
        numpy_helper.from_array(rng.normal(0, 0.05, (4 * 8 * 8, 10)).astype(np.float32), "fc_w"),
        numpy_helper.from_array(rng.normal(0, 0.1, (10,)).astype(np.float32), "fc_b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["conv_out"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv_out"], ["relu_out"], name="relu"),
        helper.make_node("Flatten", ["relu_out"], ["flat"], name="flatten", axis=1),
        helper.make_node("MatMul", ["flat", "fc_w"], ["mm_out"], name="matmul"),
        helper.make_node("Add", ["mm_out", "fc_b"], ["y"], name="add"),
    ]
    graph = helper.make_graph(nodes, "parity", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def write_samples(folder, n=4):
    """n raw float32 samples of x and their input_list (paths relative to the list)."""
    rng = np.random.default_rng(5)
    lines = []
    for i in range(n):
        rng.normal(0, 1, (1, 3, 8, 8)).astype("<f4").tofile(os.path.join(folder, "s%d.raw" % i))
        lines.append("x:=s%d.raw\n" % i)
    path = os.path.join(folder, "list.txt")
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def without_times(summary):
    """The summary with its measured durations (seconds) blanked: two runs agree on everything else."""
    return re.sub(r"\d+\.\d+ s\b", "T s", summary)


def read(path):
    with open(path, "rb") as f:
        return f.read()


class ConvertBindingTest(unittest.TestCase):
    """The binding's declarations and struct layout (need no convert symbols)."""

    def test_declarations_match_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_convert.h", "convert.exports", conversion.DECLARED)

    def test_phases_of_no_result_and_out_of_range(self):
        fn = conversion._functions()
        self.assertEqual(fn["qairt_convert_result_phase_count"](None), 0)
        self.assertIsNone(fn["qairt_convert_result_phase_name"](None, 0))
        self.assertEqual(fn["qairt_convert_result_phase_seconds"](None, 0), 0.0)

    def test_options_layout_matches_c(self):
        abi_check.assert_layouts_match_c(self, ["qairt_convert.h"],
                                         {"qairt_convert_options": conversion.ConvertOptions})


class ConvertParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="qairt_convert_parity_")
        data = os.path.join(cls.tmp, "data")
        os.mkdir(data)
        cls.model = os.path.join(data, "model.onnx")
        write_model(cls.model)
        cls.input_list = write_samples(data)  # one path for both runs: it is recorded in the outputs

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        if not os.access(CLI, os.X_OK):
            if STRICT:
                self.fail("QAIRT_CLI=%s is not an executable (the qairt binary)" % CLI)
            self.skipTest("no qairt binary at %s (set QAIRT_CLI)" % CLI)

    def folder(self, name):
        path = os.path.join(self.tmp, name)
        os.mkdir(path)
        return path

    def run_cli(self, out, *extra):
        cmd = [CLI, "convert", "-i", self.model, "--target", "htp_v73", "--input_list", self.input_list,
               "--eval_input_list", self.input_list, "--act_bitwidth", "16", "--export_encodings", os.path.join(out, "e.json"),
               "--export_qdq_onnx", os.path.join(out, "q.onnx"), "-o", os.path.join(out, "m.qairt"),
               "--no_progress"] + list(extra)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600)

    def run_python(self, model, out, **extra):
        return qairt.convert(model, "htp_v73", os.path.join(out, "m.qairt"), input_list=self.input_list,
                             eval_input_list=self.input_list, act_bitwidth=16, export_encodings=os.path.join(out, "e.json"),
                             export_qdq_onnx=os.path.join(out, "q.onnx"), **extra)

    def assert_same_outputs(self, a, b):
        for name in OUTPUTS:
            pa, pb = os.path.join(a, name), os.path.join(b, name)
            self.assertTrue(os.path.isfile(pa), pa)
            self.assertTrue(os.path.isfile(pb), pb)
            self.assertGreater(os.path.getsize(pa), 0, pa)
            self.assertTrue(read(pa) == read(pb), "%s differs between %s and %s" % (name, a, b))

    def test_auto_quant_cli_and_python_agree(self):
        """--auto_quant / auto_quant=True: the configurations tried are in the summary, the chosen techniques
        calibrate the model, both front ends write the same files and record the option."""
        cli_out, py_out = self.folder("auto_cli"), self.folder("auto_py")
        cli = self.run_cli(cli_out, "--auto_quant", "--wide_fixed_ranges")
        self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)
        r = self.run_python(self.model, py_out, auto_quant=True, wide_fixed_ranges=True)
        self.assertTrue(r.ok, r.errors)
        self.assertIn("auto quant: ", r.summary)
        self.assertEqual(r.summary.count("<- chosen"), 1, r.summary)
        summary = cli.stdout[:cli.stdout.rindex("time:")]
        self.assertEqual(without_times(r.summary), without_times(summary))
        self.assert_same_outputs(cli_out, py_out)
        from qairt.container import Container
        opts = Container.load(os.path.join(py_out, "m.qairt")).options_dict
        self.assertEqual(opts["auto_quant"], "true")
        self.assertEqual(opts["wide_fixed_ranges"], "true")
        # Without samples there is nothing to measure on: refused before any work.
        bad = subprocess.run([CLI, "convert", "-i", self.model, "--target", "htp_v73", "--auto_quant", "-o",
                              os.path.join(self.tmp, "none.qairt")], capture_output=True, text=True, timeout=60)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("--auto_quant needs --input_list", bad.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "none.qairt")))
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.convert(self.model, "htp_v73", os.path.join(self.tmp, "none.qairt"), auto_quant=True)

    def test_options_init(self):
        o = conversion.ConvertOptions()
        conversion._functions()["qairt_convert_options_init"](ctypes.byref(o))
        self.assertEqual(o.struct_size, ctypes.sizeof(conversion.ConvertOptions))
        self.assertEqual(o.num_threads, 1)
        self.assertEqual((o.flags, o.act_bitwidth, o.qdq_opset, o.mixed_mode), (0, 0, 0, 0))

    def test_cli_and_python_write_identical_files(self):
        cli_out, py_out, graph_out = self.folder("cli"), self.folder("py"), self.folder("graph")
        cli = self.run_cli(cli_out)
        self.assertEqual(cli.returncode, 0, cli.stdout + cli.stderr)

        seen = []
        r = self.run_python(self.model, py_out, progress=lambda *a: seen.append(a))
        self.assertIsInstance(r, qairt.ConvertResult)
        self.assertTrue(r.ok, r.errors)
        self.assertEqual(r.errors, [])
        # The CLI prints the same summary, then where the time went, nothing else (durations are
        # measured, so they may differ).
        summary, time_line = cli.stdout[:cli.stdout.rindex("time:")], cli.stdout[cli.stdout.rindex("time:"):]
        self.assertRegex(time_line, r"^time:(,? [a-z ]+ \d+\.\d\d s)* \(\d+\.\d\d s in all\)\n$")
        self.assertEqual(without_times(r.summary), without_times(summary))
        # The stages that ran, in order, with their times: those of the CLI's line among them.
        names = [name for name, _ in r.phases]
        self.assertEqual(names[0], "import")
        for earlier, later in (("import", "calibration"), ("calibration", "processing"), ("processing", "outputs"),
                               ("outputs", "evaluation")):
            self.assertLess(names.index(earlier), names.index(later), names)
        self.assertTrue(all(s >= 0 for _, s in r.phases), r.phases)
        self.assertEqual(len(set(names)), len(names), names)  # a stage run twice in a row is one entry
        for name, _ in re.findall(r"[:,] ([a-z ]+) (\d+\.\d\d) s", time_line):
            self.assertIn(name, names, time_line)
        self.assertNotEqual(without_times(r.summary), r.summary)  # the durations were there to blank
        self.assertIn("calibration: 4 samples", r.summary)
        self.assertEqual(r.log, "")  # log level NONE
        self.assertIsNotNone(r.process)
        self.assertTrue(r.process.ok)
        self.assertIsNotNone(r.accuracy)  # on the input_list samples, given as eval_input_list
        self.assertEqual([o.name for o in r.accuracy.outputs], ["y"])
        self.assertIn("calibration", {phase.split(": ")[0] for phase, _, _ in seen}, seen)  # "<stage>: <step>"
        self.assert_same_outputs(cli_out, py_out)

        # An imported Graph (the CLI's import defaults) converts to the same bytes too.
        g, _ = qairt.import_onnx(self.model, require_static=True, int64_to_int32=True)
        rg = self.run_python(g, graph_out)
        self.assertTrue(rg.ok, rg.errors)
        self.assertEqual(without_times(rg.summary), without_times(r.summary))  # durations are measured
        self.assertNotIn("import", [name for name, _ in rg.phases])  # the Graph was imported before
        self.assert_same_outputs(cli_out, graph_out)

        # The outputs are what was asked for (not two identical wrong files).
        from qairt.container import Container
        c = Container.load(os.path.join(py_out, "m.qairt"))
        self.assertEqual(c.target, "htp_v73")
        self.assertEqual(c.options_dict["input_list"], self.input_list)
        self.assertEqual(c.options_dict["act_bitwidth"], "16")
        q = onnx.load(os.path.join(py_out, "q.onnx"))
        meta = {p.key: p.value for p in q.metadata_props}
        self.assertEqual(meta["qairt.input_list"], self.input_list)
        self.assertIn("QuantizeLinear", [n.op_type for n in q.graph.node])

    def test_accuracy_is_measured_only_when_asked(self):
        # Calibration alone runs the model once per sample; the accuracy
        # summary (two more runs per sample) needs eval_input_list.
        out = self.folder("no_eval")
        r = qairt.convert(self.model, "htp_v73", os.path.join(out, "m.qairt"), input_list=self.input_list,
                          act_bitwidth=16)
        self.assertTrue(r.ok, r.errors)
        self.assertIsNone(r.accuracy)
        self.assertIn("accuracy: not measured (--eval_input_list LIST measures it", r.summary)
        self.assertNotIn("SQNR", r.summary)

    def test_failed_conversion_is_reported_and_writes_nothing(self):
        bad = os.path.join(self.tmp, "bad_overrides.json")
        with open(bad, "w") as f:  # an encoding for a tensor the model lacks ("relu_out" is there)
            f.write('{"version": "2.0.0", "encodings": [\n'
                    '{"name": "relu_outx", "output_dtype": "uint8", "y_scale": 0.0125, "y_zero_point": 3}\n]}\n')
        cli_out, py_out = self.folder("cli_bad"), self.folder("py_bad")
        r = self.run_python(self.model, py_out, quantization_overrides=bad)
        self.assertFalse(r.ok)
        self.assertTrue(r.errors)
        self.assertTrue(r.errors[0].startswith("quantization overrides: "), r.errors)
        self.assertIn("relu_outx", r.errors[0])
        self.assertIsNone(r.process)
        self.assertEqual(os.listdir(py_out), [])
        # The CLI fails the same way (exit 1, the same first error) and writes nothing either.
        cli = self.run_cli(cli_out, "--quantization_overrides", bad)
        self.assertEqual(cli.returncode, 1, cli.stdout + cli.stderr)
        self.assertIn("error: " + r.errors[0].splitlines()[0], cli.stderr)
        self.assertEqual(os.listdir(cli_out), [])

    def test_bad_options_raise(self):
        out = self.folder("py_options")
        with self.assertRaises(qairt.InvalidArgumentError) as e:
            self.run_python(self.model, out, qdq_opset=7)
        self.assertIn("qdq_opset", str(e.exception))
        with self.assertRaises(qairt.InvalidArgumentError):  # a log level needs a log file
            self.run_python(self.model, out, log_level="TRACE")
        with self.assertRaises(qairt.InvalidArgumentError):  # an unknown rewrite
            self.run_python(self.model, out, disabled_rewrites=["no-such-rewrite"])
        with self.assertRaises(qairt.InvalidArgumentError):  # checked by the binding
            self.run_python(self.model, out, mixed_precision="budget")
        with self.assertRaises(qairt.QairtError):  # no output and no stop_after
            qairt.convert(self.model, "htp_v73", input_list=self.input_list)
        self.assertEqual(os.listdir(out), [])


if __name__ == "__main__":
    unittest.main()
