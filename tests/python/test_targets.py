"""Target descriptors through the Python binding (python/qairt/targets.py)."""
import json
import os
import sys
import tempfile
import threading
import unittest

import abi_check

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))

import qairt  # noqa: E402
from qairt import targets  # noqa: E402

STRICT = os.environ.get("QAIRT_TEST_STRICT") == "1"
if STRICT:
    def _no_skip(self, reason):
        self.fail("test would be skipped under QAIRT_TEST_STRICT=1: " + reason)

    unittest.TestCase.skipTest = _no_skip

ACME = {
    "schema_version": 1, "min_reader_version": 1, "name": "acme_npu", "backend": "Custom",
    "description": "made-up NPU", "default_float_dtype": "f32",
    "capabilities": {"int16_activations": True},
    "ops": [
        {"op": "FullyConnected", "kernels": [{
            "name": "a16w8",
            "inputs": [{"role": "activation", "dtypes": ["u16"]},
                       {"role": "weight", "dtypes": ["s8"], "symmetries": ["symmetric"],
                        "granularities": ["per_channel"], "channel_axis": 0},
                       {"role": "bias", "optional": True, "dtypes": ["s32"], "scale_rule": "product_of_inputs"}],
            "outputs": [{"role": "activation", "dtypes": ["u16"]}]}]},
        {"op": "Tanh", "kernels": [{
            "name": "a16", "inputs": [{"role": "activation", "dtypes": ["u16"]}],
            "outputs": [{"role": "activation", "dtypes": ["u16"],
                         "fixed_encodings": [{"dtype": "u16", "offset": -32768, "scale": 1.0 / 32768}]}]}]},
    ],
    "super_groups": [{"ops": ["FullyConnected", "Tanh"]}],
}


class BuiltinTest(unittest.TestCase):
    def test_builtin_names(self):
        names = targets.builtin_targets()
        for n in ("htp_v68", "htp_v69", "htp_v73", "htp_v75", "htp_v79", "htp_v81", "lpai_v6", "cpu", "aic100"):
            self.assertIn(n, names)

    def test_v68_v73_lpai_facts(self):
        v68, v73, lpai = (qairt.Target.load(n) for n in ("htp_v68", "htp_v73", "lpai_v6"))
        self.assertEqual(v68.backend, "HTP")
        self.assertFalse(v68.capabilities["fp16_compute"])
        self.assertTrue(v73.capabilities["fp16_compute"])
        self.assertIsNone(v68.default_float_dtype)
        self.assertEqual(v73.default_float_dtype, "f16")
        self.assertEqual([k.name for k in v68.kernels("MatMul")], ["a8w8", "a16w8"])
        mm16 = [k for k in v73.kernels("MatMul") if k.name == "a16w16"][0]
        self.assertEqual(mm16.inputs[1].dtypes, ["s16"])
        self.assertIn("symmetric", mm16.inputs[1].symmetries)
        conv = [k for k in v73.kernels("Conv2d") if k.name == "a8w8"][0]
        self.assertEqual([s.role for s in conv.inputs], ["activation", "weight", "bias"])
        self.assertEqual(conv.inputs[2].scale_rule, "product_of_inputs")
        self.assertEqual(conv.inputs[1].granularities, ["per_tensor", "per_channel"])
        sig = [k for k in v73.kernels("Sigmoid") if k.name == "a16"][0]
        self.assertEqual(sig.outputs[0].fixed_encodings[0], targets.FixedEncoding("u16", 1.0 / 65536, 0))
        self.assertEqual(sig.outputs[0].value_range, (0.0, 1.0))
        self.assertEqual([k.name for k in lpai.kernels("ElementWiseAdd")], ["a8", "a16", "a32"])
        self.assertEqual([k.name for k in lpai.kernels("FullyConnected")], ["a8w8", "a8w16", "a16w8", "a16w16"])
        self.assertEqual(v73.find_kernel("Conv2d", ["u16", "s16", None], ["u16"]), "a16w16")
        self.assertIsNone(v68.find_kernel("Conv2d", ["u16", "s16", None], ["u16"]))
        self.assertEqual(v73.conversion_ops("f32", "u8"), ["Quantize"])
        self.assertTrue(v73.is_data_movement("TopK"))
        self.assertIn(["Conv2d", "HardSwish"], v73.super_groups)
        self.assertIn(("SM8550", 43, 8), v73.socs)
        self.assertTrue(v73.sources)
        with self.assertRaises(qairt.NotFoundError):
            v73.kernels("NoSuchOp")
        self.assertEqual(v73.kernels("IsNan"), [])  # registered op, no HTP kernel

    def test_soc(self):
        self.assertEqual(qairt.Target.for_soc("SM8550").name, "htp_v73")
        self.assertEqual(qairt.Target.for_soc(57).name, "htp_v75")
        with self.assertRaises(qairt.NotFoundError) as cm:
            qairt.Target.for_soc("SM1234")
        self.assertIn("SM1234", str(cm.exception))

    def test_diff(self):
        d = qairt.Target.load("htp_v68").diff(qairt.Target.load("htp_v73"), as_json=True)
        self.assertFalse(d["equal"])
        kinds = {(c["kind"], c["item"]): c for c in d["changes"]}
        self.assertEqual(kinds[("capability", "fp16_compute")]["b"], "true")
        self.assertIsNone(kinds[("kernel", "MatMul a16w16")]["a"])
        self.assertTrue(any(k == "super_group" for k, _ in kinds))
        text = qairt.Target.load("htp_v75").diff(qairt.Target.load("htp_v75"))
        self.assertIn("no differences", text)

    def test_json_round_trip(self):
        t = qairt.Target.load("lpai_v6")
        dumped = t.to_json()
        self.assertEqual(dumped["name"], "lpai_v6")
        back = qairt.Target.from_bytes(dumped)
        self.assertTrue(t.diff(back, as_json=True)["equal"])
        self.assertEqual(t.to_json("Sigmoid")["op"], "Sigmoid")

    def test_threads(self):
        errs = []

        def work():
            try:
                for _ in range(10):
                    t = qairt.Target.load("htp_v79")
                    t.kernels("Conv2d")
                    t.close()
            except Exception as e:  # pragma: no cover
                errs.append(e)

        ts = [threading.Thread(target=work) for _ in range(4)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
        self.assertEqual(errs, [])


class UserDescriptorTest(unittest.TestCase):
    def test_made_up_npu(self):
        t = qairt.Target.from_bytes(ACME)
        self.assertEqual((t.name, t.backend, t.origin), ("acme_npu", "Custom", "<bytes>"))
        self.assertEqual(t.ops, ["FullyConnected", "Tanh"])
        k = t.kernels("FullyConnected")[0]
        self.assertEqual(k.inputs[1].channel_axis, 0)
        self.assertTrue(k.inputs[2].optional)
        self.assertEqual(t.find_kernel("FullyConnected", ["u16", "s8"], ["u16"]), "a16w8")
        self.assertIsNone(t.find_kernel("FullyConnected", ["u8", "s8"], ["u8"]))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "acme.json")
            with open(path, "w") as f:
                json.dump(ACME, f)
            self.assertEqual(qairt.Target.load(path).origin, path)
            self.assertEqual(qairt.Target.from_file(path).name, "acme_npu")

    def test_hostile(self):
        bad = dict(ACME, min_reader_version=9)
        with self.assertRaises(qairt.UnsupportedError) as cm:
            qairt.Target.from_bytes(bad)
        self.assertIn("min_reader_version is 9", str(cm.exception))
        bad = json.loads(json.dumps(ACME))
        bad["ops"][1]["op"] = "Tanhh"
        with self.assertRaises(qairt.ValidationError) as cm:
            qairt.Target.from_bytes(bad)
        self.assertIn("unknown op type 'Tanhh'", str(cm.exception))
        with self.assertRaises(qairt.ParseError):
            qairt.Target.from_bytes(b"\x10\x00\x00\x00NOPE" + b"\x00" * 24)
        with self.assertRaises(qairt.ParseError):
            qairt.Target.from_bytes(json.dumps(ACME)[:200])
        with self.assertRaises(qairt.NotFoundError):
            qairt.Target.load("/nonexistent/x.qatd")


class AbiTest(unittest.TestCase):
    def test_declared_match_header_and_exports(self):
        abi_check.assert_declared_matches(self, "qairt_target.h", "target.exports", targets.DECLARED)

    def test_struct_layouts_match_c(self):
        abi_check.assert_layouts_match_c(self, ["qairt_target.h"], {
            "qairt_target_info": targets.TargetInfo, "qairt_target_soc": targets.TargetSoc,
            "qairt_super_group": targets.SuperGroup, "qairt_kernel_info": targets.KernelInfo,
            "qairt_kernel_slot": targets.KernelSlotC, "qairt_fixed_encoding": targets.FixedEncodingC})


if __name__ == "__main__":
    unittest.main()
