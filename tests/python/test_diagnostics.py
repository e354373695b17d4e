"""Diagnostics are one family (qairt.h, ABI 1.8): graph validation, encodings
files, target processing and a whole conversion hand out the same record
(rule id, file:line:col, op, tensor) through one list type, rendered as text,
JSON or SARIF 2.1.0 by one renderer; `qairt convert --diagnostics FILE`
writes them even when the conversion fails.

Environment as test_convert_parity.py (QAIRT_CLI for the CLI case).
"""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import abi_check
from test_convert_parity import CLI, write_model

import qairt
from qairt import _ffi, conversion, process
from qairt import encodings as qenc
from qairt.library import INVALID_ID


def sarif_results(text):
    log = json.loads(text)
    run = log["runs"][0]
    rules = {r["id"]: r["shortDescription"]["text"] for r in run["tool"]["driver"]["rules"]}
    return rules, run["results"]


class DiagnosticsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="qairt_diagnostics_")
        cls.model = os.path.join(cls.tmp, "model.onnx")
        write_model(cls.model)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_record_layout_matches_c(self):
        abi_check.assert_layouts_match_c(self, ["qairt.h"], {"qairt_diagnostic": _ffi.Diagnostic})

    def test_declarations_match_headers(self):
        abi_check.assert_declared_matches(self, "qairt_process.h", "process.exports", process.DECLARED)
        abi_check.assert_declared_matches(self, "qairt_convert.h", "convert.exports", conversion.DECLARED)

    def test_processing_errors_name_rule_and_op(self):
        # htp_v68 has no float compute: without calibration nothing has a kernel.
        out = os.path.join(self.tmp, "v68.qairt")
        r = qairt.convert(self.model, "htp_v68", out)
        self.assertFalse(r.ok)
        self.assertFalse(os.path.exists(out))
        no_kernel = [d for d in r.diagnostics if d.code == "no-kernel"]
        self.assertTrue(no_kernel, [str(d) for d in r.diagnostics])
        for d in no_kernel:
            self.assertEqual(d.severity, "error")
            self.assertTrue(d.op_name, d)
            self.assertIn(d.op_name, d.message)
        # The process result carries the same records.
        self.assertEqual([d.message for d in r.process.diagnostics],
                         [d.message for d in r.diagnostics if d.code not in ("rewrites", "calibration")])
        # Errors as strings and as records agree in number.
        self.assertEqual(len([d for d in r.diagnostics if d.severity == "error"]), len(r.errors))
        rules, results = sarif_results(r.diagnostics.render("sarif"))
        self.assertIn("no-kernel", rules)
        for code, text in rules.items():
            self.assertNotEqual(text, "Diagnostic.", "rule %r is missing from the catalogue" % code)
        first = next(x for x in results if x["ruleId"] == "no-kernel")
        self.assertEqual(first["level"], "error")
        names = [loc["name"] for loc in first["locations"][0]["logicalLocations"]]
        self.assertEqual(names, [no_kernel[0].op_name])
        summary = json.loads(r.diagnostics.render("json"))
        self.assertEqual(summary["errors"], len(r.errors))
        self.assertTrue(r.diagnostics.render("text").endswith("warning%s, 0 notes\n" % (
            "" if len(r.warnings) == 1 else "s")))

    def test_overrides_records_keep_file_line_and_suggestion(self):
        bad = os.path.join(self.tmp, "bad_overrides.json")
        with open(bad, "w") as f:
            f.write('{"version": "2.0.0", "encodings": [\n'
                    '{"name": "relu_outx", "output_dtype": "uint8", "y_scale": 0.0125, "y_zero_point": 3}\n]}\n')
        r = qairt.convert(self.model, "htp_v73", os.path.join(self.tmp, "o.qairt"), quantization_overrides=bad)
        self.assertFalse(r.ok)
        d = next(x for x in r.diagnostics if x.code == "unknown-tensor")
        self.assertEqual((d.file, d.line, d.tensor_name, d.suggestion), (bad, 2, "relu_outx", "relu_out"))
        rules, results = sarif_results(r.diagnostics.render("sarif"))
        loc = next(x for x in results if x["ruleId"] == "unknown-tensor")["locations"][0]
        self.assertEqual(loc["physicalLocation"]["region"]["startLine"], 2)
        # No summary record duplicates the file's own errors.
        self.assertNotIn("quantization-overrides", rules)

    def test_check_only_runs_every_check_and_writes_nothing(self):
        # Neg has no kernel on lpai_v6; the overrides file has an unknown tensor.
        from onnx import TensorProto, helper, save
        neg = os.path.join(self.tmp, "neg.onnx")
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
        g = helper.make_graph([helper.make_node("Neg", ["x"], ["y"], name="negate")], "neg", [x], [y])
        save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), neg)
        bad = os.path.join(self.tmp, "neg_overrides.json")
        with open(bad, "w") as f:
            f.write('{"version": "2.0.0", "encodings": [\n'
                    '{"name": "yy", "output_dtype": "uint8", "y_scale": 0.01, "y_zero_point": 0}\n]}\n')
        r = qairt.convert(neg, "lpai_v6", check_only=True, quantization_overrides=bad)
        self.assertFalse(r.ok)
        self.assertIsNone(r.process)
        codes = [d.code for d in r.diagnostics]
        self.assertIn("no-kernel", codes)
        self.assertIn("unknown-tensor", codes)  # the overrides were checked although the kernel check failed
        d = next(d for d in r.diagnostics if d.code == "no-kernel")
        self.assertEqual((d.field, d.op_name), ("ElementWiseNeg", "negate"))
        self.assertIn("target: lpai_v6: 1 op types have no kernel:\n  error: ElementWiseNeg (1 ops) has no kernel "
                      "on lpai_v6\n", r.summary)
        # The unknown name is tried after the rewrites (on a copy of the graph) before it is an error.
        self.assertIn("quantization overrides: %s: 1 error(s) in the entries applied after the rewrites" % bad,
                      r.summary)
        # Without a target only the overrides are checked; output paths are refused.
        r = qairt.convert(neg, None, check_only=True, quantization_overrides=bad)
        codes = set(d.code for d in r.diagnostics)
        self.assertIn("unknown-tensor", codes)
        self.assertNotIn("no-kernel", codes)
        with self.assertRaises(qairt.InvalidArgumentError):
            qairt.convert(neg, "lpai_v6", os.path.join(self.tmp, "neg.qairt"), check_only=True)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "neg.qairt")))
        if os.path.exists(CLI):  # --dry_run --json carries the same records
            p = subprocess.run([CLI, "convert", "-i", neg, "--target", "lpai_v6", "--dry_run", "--json",
                                "--quantization_overrides", bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            def unique_keys(pairs):
                keys = [k for k, _ in pairs]
                self.assertEqual(len(keys), len(set(keys)), "duplicate JSON keys: %s" % keys)
                return dict(pairs)
            j = json.loads(p.stdout, object_pairs_hook=unique_keys)
            self.assertEqual(j["target"]["ops_without_kernels"], ["ElementWiseNeg"])
            self.assertEqual(j["checks"]["errors"], 2)
            self.assertIsInstance(j["diagnostics"], list)  # the import report's own records
            self.assertEqual(j["quantization_overrides"], {"file": bad, "ignored": False})

    def test_import_failure_is_a_record(self):
        r = qairt.convert(os.path.join(self.tmp, "missing.onnx"), "htp_v73", os.path.join(self.tmp, "m.qairt"))
        self.assertFalse(r.ok)
        self.assertEqual([d.code for d in r.diagnostics], ["import"])
        self.assertTrue(r.errors[0].startswith("import: "))

    def test_validation_records_name_tensor(self):
        g = qairt.Graph("bad")
        x = g.add_input("x", "float32", [1, 4])
        g.add_op("Relu", "relu", [x, x], ["y"])  # Relu takes one input
        g.mark_output("y")
        diags = g.diagnostics()
        arity = [d for d in diags if d.kind == "arity"]
        self.assertTrue(arity, [str(d) for d in diags])
        self.assertEqual(arity[0].code, "arity")
        self.assertEqual(arity[0].op_name, "relu")
        self.assertEqual(arity[0].op, 0)

    def test_encodings_collector_is_the_same_list(self):
        # A file with a repeated key, loaded through the encodings API; the
        # qairt.h functions read the same collector.
        enc_path = os.path.join(self.tmp, "dup.json")
        with open(enc_path, "w") as f:
            f.write('{"version": "2.0.0", "version": "2.0.0", "encodings": []}\n')
        h = _ffi.DiagnosticsP()
        _ffi.qairt_diagnostics_create(ctypes.byref(h))
        try:
            out = qenc.EncodingsP()
            # Lenient loading reports the repeated key as an error and goes on.
            qenc._fn["qairt_encodings_load_file"](enc_path.encode(), None, h, ctypes.byref(out))
            qenc._fn["qairt_encodings_destroy"](out)
            self.assertGreaterEqual(_ffi.qairt_diagnostics_count(h), 1)
            self.assertEqual(_ffi.qairt_diagnostics_count(h), qenc._fn["qairt_encodings_diagnostics_count"](h))
            d = _ffi.new_struct(_ffi.Diagnostic)
            _ffi.qairt_diagnostics_get(h, 0, ctypes.byref(d))
            self.assertEqual((d.code, d.file, d.line), (b"json-duplicate-key", enc_path.encode(), 1))
            self.assertEqual(d.kind, 0)
            self.assertEqual(d.op, INVALID_ID)
            self.assertEqual(_ffi.qairt_diagnostics_count_severity(h, 1), 1)
            _ffi.qairt_diagnostics_clear(h)
            self.assertEqual(_ffi.qairt_diagnostics_count(h), 0)
        finally:
            _ffi.qairt_diagnostics_destroy(h)

    def test_v1_record_size_is_not_overrun(self):
        # A caller compiled against 1.0 passes struct_size 40: the 1.8 fields
        # must not be written (the sentinel stays).
        g = qairt.Graph("v1")
        g.add_input("x", "float32", [1])  # no outputs: one diagnostic
        h = _ffi.DiagnosticsP()
        try:
            _ffi.qairt_graph_validate(g.handle, ctypes.byref(h))
        except qairt.ValidationError:
            pass
        try:
            self.assertGreaterEqual(_ffi.qairt_diagnostics_count(h), 1)
            d = _ffi.new_struct(_ffi.Diagnostic)
            d.struct_size = _ffi.Diagnostic.code.offset
            d.code = b"sentinel"
            _ffi.qairt_diagnostics_get(h, 0, ctypes.byref(d))
            self.assertEqual(d.code, b"sentinel")
            self.assertTrue(d.message)
        finally:
            _ffi.qairt_diagnostics_destroy(h)

    def test_cli_writes_sarif_even_when_conversion_fails(self):
        if not os.path.exists(CLI):
            self.skipTest("no CLI at %s" % CLI)
        sarif = os.path.join(self.tmp, "v68.sarif")
        out = os.path.join(self.tmp, "cli_v68.qairt")
        p = subprocess.run([CLI, "convert", "-i", self.model, "--target", "htp_v68", "-o", out,
                            "--diagnostics", sarif], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertFalse(os.path.exists(out))
        with open(sarif) as f:
            rules, _ = sarif_results(f.read())
        self.assertIn("no-kernel", rules)
        # The CLI writes what the library renders for the same conversion.
        r = qairt.convert(self.model, "htp_v68", out)
        with open(sarif) as f:
            self.assertEqual(f.read(), r.diagnostics.render("sarif"))
        # --dry_run has no conversion to report on: refused, not ignored.
        p = subprocess.run([CLI, "convert", "-i", self.model, "--target", "htp_v73", "--dry_run",
                            "--diagnostics", sarif], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("--diagnostics", p.stderr)


if __name__ == "__main__":
    unittest.main()
