"""qairt.report and qairt.convert(report=...) (include/qairt/qairt_report.h):
the report of a conversion holds one data-op element per op of the converted
graph and per-op accuracy; the report of a container has its stats summary;
float_graph + compare add per-op accuracy; bad arguments raise and leave no
file. The page itself is rendered in Chromium by tests/cli/test_report.sh.
"""
import os
import re
import tempfile
import unittest

import abi_check  # noqa: F401  (sets up the library path)

import qairt
from test_convert_parity import write_model, write_samples


def data_ops(html):
    return re.findall(r'data-op="([^"]*)"', html)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.model = os.path.join(d, "m.onnx")
        write_model(cls.model)
        cls.samples = write_samples(d)
        cls.container = os.path.join(d, "m.qairt")
        cls.html = os.path.join(d, "convert.html")
        cls.result = qairt.convert(cls.model, "htp_v73", cls.container, input_list=cls.samples,
                                   eval_input_list=cls.samples, act_bitwidth=16, per_channel=True, report=cls.html)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_convert_writes_the_report(self):
        self.assertTrue(self.result.ok, self.result.errors)
        with open(self.html, encoding="utf-8") as f:
            html = f.read()
        container = qairt.Container.load(self.container)
        names = sorted(op.name for op in container.graph.ops())
        self.assertEqual(sorted(data_ops(html)), names)
        self.assertIn('class="op p-int16', html)
        self.assertRegex(html, r'<span class="acc (good|fair|poor)">')  # accuracy on the eval (= calibration) samples
        self.assertIn("[PRUNED CONVERTS]", html)

    def test_report_of_a_container(self):
        container = qairt.Container.load(self.container)
        self.assertIn("[PRUNED CONVERTS]", container.stats_summary)
        html = qairt.report.render(self.container)
        self.assertEqual(len(data_ops(html)), len(container.graph.ops()))
        self.assertIn("<title>qairt report: %s</title>" % self.container, html)
        self.assertIn("[PRUNED CONVERTS]", html)
        self.assertNotIn('class="acc ', html)
        float_graph, _ = qairt.import_onnx(self.model)
        with_accuracy = qairt.report.render(self.container, float_graph=float_graph, compare=self.samples,
                                            title="with samples")
        self.assertRegex(with_accuracy, r'<span class="acc (good|fair|poor)">')
        self.assertIn("Accuracy against float (4 samples)", with_accuracy)
        out = os.path.join(self.tmp.name, "written.html")
        qairt.report.write(self.container, out, title="with samples", float_graph=float_graph, compare=self.samples)
        with open(out, encoding="utf-8") as f:
            self.assertEqual(f.read(), with_accuracy)

    def test_report_of_a_graph(self):
        float_graph, _ = qairt.import_onnx(self.model)
        html = qairt.report.render(float_graph)
        self.assertEqual(len(data_ops(html)), len(float_graph.ops()))
        self.assertIn('class="op p-fp32', html)

    def test_bad_arguments_raise_and_write_nothing(self):
        out = os.path.join(self.tmp.name, "bad.html")
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.report.write(self.container, out, compare=self.samples)  # no float_graph
        with self.assertRaises(qairt.QairtError):
            qairt.report.write(self.model, out)  # not a container
        with self.assertRaises(qairt.QairtError):
            qairt.report.write(self.container, os.path.join(self.tmp.name, "no", "such", "dir.html"))
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
