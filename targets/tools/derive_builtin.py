#!/usr/bin/env python3
"""Derives the built-in descriptors (targets/builtin/*.json) from public facts.

Inputs: the AIMET quantsim configs in tests/data/aimet_configs/ (kernel lists
per op) and the rules written out below, each with its source (the same
sources as targets/README.md). Output: one JSON file per target, in the
FlatBuffers JSON form of targets/schema/target.fbs.

The JSON files are the maintained source; this script records how their first
version was derived and can regenerate them after a rule changes:

    python3 targets/tools/derive_builtin.py          # rewrite targets/builtin/*.json
    python3 targets/tools/derive_builtin.py --check  # exit 1 if they differ

Standard library only.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
CONFIGS = os.path.join(REPO, "tests", "data", "aimet_configs")
OUT = os.path.join(REPO, "targets", "builtin")
SCHEMA_VERSION = 1
MIN_READER_VERSION = 1

# ---------------------------------------------------------------------------
# The IR's op vocabulary and arities, read from lib/ir/ops/*.cpp tables.
# ---------------------------------------------------------------------------

def ir_ops():
    ops = {}
    ops_dir = os.path.join(REPO, "lib", "ir", "ops")
    for fn in sorted(os.listdir(ops_dir)):
        if not fn.endswith(".cpp"):
            continue
        text = open(os.path.join(ops_dir, fn)).read()
        for m in re.finditer(r'\{"(\w+)",\s*(\d+),\s*(\d+|kVariadic),\s*(\d+),\s*(\d+|kVariadic),', text):
            name, a, b, c, d = m.groups()
            ops[name] = (int(a), -1 if b == "kVariadic" else int(b), int(c), -1 if d == "kVariadic" else int(d))
        # elementwise.cpp registers unary (1 in) and binary (2 in) tables in loops
        for table, n in (("kUnary", 1), ("kBinary", 2)):
            m = re.search(table + r"\[\] = \{(.*?)\n\};", text, re.S)
            if m:
                for name in re.findall(r'\{"(\w+)",', m.group(1)):
                    ops[name] = (n, n, 1, 1)
    return ops

IR = ir_ops()

# ---------------------------------------------------------------------------
# Slot layouts (IR input order; ONNX layouts: Conv weight OIHW, ConvTranspose IOHW)
# ---------------------------------------------------------------------------

CONV = {"Conv1d": 0, "Conv2d": 0, "Conv3d": 0, "DepthWiseConv2d": 0, "TransposeConv1d": 1,
        "TransposeConv2d": 1, "TransposeConv3d": 1, "FullyConnected": 0}
NORMS = {"Batchnorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RmsNorm"}
INDEX_IN = {"Gather": [1], "GatherElements": [1], "GatherNd": [1], "ScatterNd": [1], "ScatterElements": [1]}
COMPARE = {"ElementWiseEqual", "ElementWiseNotEqual", "ElementWiseGreater", "ElementWiseGreaterEqual",
           "ElementWiseLess", "ElementWiseLessEqual"}
LOGICAL = {"ElementWiseAnd", "ElementWiseOr", "ElementWiseXor", "ElementWiseNot"}
INDEX_OUT = {"Argmax", "Argmin", "NonZero", "Shape"}
CONVERSION_OPS = {"Cast", "Convert", "Quantize", "Dequantize"}

A = {"i8": ["u8", "s8"], "i16": ["u16", "s16"], "i32": ["s32"], "f16": ["f16"], "f32": ["f32"]}


def slot(role, dtypes, **kw):
    s = {"role": role, "dtypes": list(dtypes)}
    s.update({k: v for k, v in kw.items() if not (v is None or v is False or v == [])})
    return s


def act_slot(p, per_tensor_only):
    if p.startswith("f"):
        return slot("activation", A[p], granularities=["unquantized"])
    return slot("activation", A[p], granularities=["per_tensor"] if per_tensor_only else [])


def kernel_name(a, w=None):
    an = {"i8": "a8", "i16": "a16", "i32": "a32", "f16": "fp16", "f32": "fp32"}[a]
    if w is None:
        return an
    if a.startswith("f") and w.startswith("f"):
        return an if a == w else "%s_w%s" % (an, w[1:])
    return "%sw%s" % (an, w[1:])


# ---------------------------------------------------------------------------
# Per-target rules
# ---------------------------------------------------------------------------

class Rules:
    backend = "HTP"
    per_tensor_acts = True
    float_accuracy = {"f16": True, "f32": True}
    float_kernels = True
    index_dtype = ["is32"]

    def keep_kernel(self, op, a, w):
        return True

    def weight_slot(self, op, a, w):
        if w.startswith("f"):
            return slot("weight", A[w], granularities=["unquantized"])
        if w == "i8":
            return slot("weight", ["u8", "s8"], granularities=["per_tensor", "per_channel"],
                        channel_axis=CONV.get(op))
        if w == "i16":
            return slot("weight", ["s16"], symmetries=["symmetric", "strict_symmetric"],
                        granularities=["per_tensor"])
        if w == "i4":
            return slot("weight", ["s4"], symmetries=["symmetric", "strict_symmetric"],
                        granularities=["per_channel", "lpbq"], channel_axis=CONV.get(op))
        raise ValueError(w)

    def bias_slot(self, op, a, w):
        if a.startswith("f"):
            return slot("bias", A[w], optional=True, granularities=["unquantized"])
        return slot("bias", ["s32"], optional=True, symmetries=["symmetric"],
                    granularities=["per_tensor", "per_channel"], scale_rule="product_of_inputs")

    def output_extra(self, op, a, out):
        return out


def weighted_kernel(rules, op, a, w):
    ins = [act_slot(a, rules.per_tensor_acts)]
    wslot = rules.weight_slot(op, a, w)
    if op in NORMS:
        wslot["granularities"] = ["unquantized"] if w.startswith("f") else ["per_tensor"]
        wslot.pop("channel_axis", None)
        wslot.pop("symmetries", None)
        if IR[op][0] < 2:
            wslot["optional"] = True
    ins.append(wslot)
    if op == "MatMul":
        ins[1]["granularities"] = (["unquantized"] if w.startswith("f") else
                                   ["lpbq"] if w == "i4" else ["per_tensor"])
        ins[1].pop("channel_axis", None)
    elif IR[op][1] >= 3:
        b = rules.bias_slot(op, a, w)
        if op in NORMS and not a.startswith("f"):
            b.pop("scale_rule", None)
            b["granularities"] = ["per_tensor"]
        ins.append(b)
    out = rules.output_extra(op, a, act_slot(a, rules.per_tensor_acts))
    return {"name": kernel_name(a, w), "inputs": ins, "outputs": [out]}


def act_kernel(rules, op, a):
    n_in, max_in, n_out, _ = IR[op]
    ins = []
    for i in range(n_in):
        if i in INDEX_IN.get(op, []):
            ins.append(slot("index", rules.index_dtype))
        elif op == "ElementWiseSelect" and i == 0:
            ins.append(slot("activation", ["b8"]))
        elif op in LOGICAL:
            ins.append(slot("activation", ["b8"]))
        elif op == "Prelu" and i == 1:
            s = act_slot(a, rules.per_tensor_acts)
            s["role"] = "weight"
            ins.append(s)
        else:
            ins.append(act_slot(a, rules.per_tensor_acts))
    outs = []
    for i in range(n_out):
        if op in COMPARE or op in LOGICAL:
            outs.append(slot("activation", ["b8"]))
        elif op in INDEX_OUT or (op == "TopK" and i == 1):
            outs.append(slot("index", rules.index_dtype))
        else:
            outs.append(rules.output_extra(op, a, act_slot(a, rules.per_tensor_acts)))
    if op in INDEX_OUT and a == "i32":
        return None  # handled by the index-output kernels below
    k = {"name": kernel_name(a), "inputs": ins, "outputs": outs}
    if max_in == -1:
        k["variadic_inputs"] = True
    return k


def index_out_kernels(rules, op, precisions):
    """Argmax & co: quantized or float input, int32 index output (HTP op supplement, formats §4.6)."""
    ks = []
    for a in precisions:
        ks.append({"name": kernel_name(a), "inputs": [act_slot(a, rules.per_tensor_acts)],
                   "outputs": [slot("index", rules.index_dtype)]})
    return ks


def conversion_kernels(op, conv):
    """Cast/Convert/Quantize/Dequantize kernels follow the target's conversion matrix."""
    ks = []
    for rule in conv:
        if rule["via"] != op:
            continue
        ks.append({"name": "%s_to_%s" % ("_".join(rule["from"]), "_".join(rule["to"])),
                   "inputs": [slot("activation", rule["from"])], "outputs": [slot("activation", rule["to"])]})
    return ks


def parse_aimet(path):
    d = json.load(open(path))
    table = {}
    for name, v in d["op_type"].items():
        ks = []
        for e in v.get("supported_kernels", []):
            a = e["activation"]
            p = e.get("param")
            ak = ("f" if a["dtype"] == "float" else "i") + str(a["bitwidth"])
            pk = None if not p else ("f" if p["dtype"] == "float" else "i") + str(p["bitwidth"])
            ks.append((ak, pk))
        table[name] = ks
    # The kernel tables key the normalizations by their ONNX names
    # (formats.md 2.3); the IR uses the QNN ones.
    for onnx_name, ir_name in (("LayerNormalization", "LayerNorm"), ("GroupNormalization", "GroupNorm"),
                               ("InstanceNormalization", "InstanceNorm")):
        if onnx_name in table and ir_name not in table:
            table[ir_name] = table[onnx_name]
    return d, table


def build_ops(rules, table, conversions, extra_float_all=False):
    ops = []
    for op in sorted(IR):
        if op in CONVERSION_OPS:
            ks = conversion_kernels(op, conversions)
            if ks:
                ops.append({"op": op, "kernels": ks})
            continue
        entry = table.get(op)
        if entry is None and not extra_float_all:
            continue
        pairs = list(entry or [])
        if extra_float_all and not any(a == "f32" for a, _ in pairs):
            pairs.append(("f32", "f32" if (op in CONV or op == "MatMul" or op in NORMS) else None))
        kernels = []
        if op in INDEX_OUT:
            precs = ["i8", "i16"] + (["f16", "f32"] if rules.float_kernels else [])
            precs = [p for p in precs if p in rules.index_input_precisions] if hasattr(
                rules, "index_input_precisions") else precs
            kernels = index_out_kernels(rules, op, precs)
        else:
            seen = set()
            for a, w in pairs:
                if a.startswith("f") and not rules.float_kernels:
                    continue
                weighted = op in CONV or op == "MatMul" or op in NORMS
                if weighted:
                    w = w or a
                    if not rules.keep_kernel(op, a, w):
                        continue
                    k = weighted_kernel(rules, op, a, w)
                else:
                    if not rules.keep_kernel(op, a, None):
                        continue
                    k = act_kernel(rules, op, a)
                if k is None or k["name"] in seen:
                    continue
                seen.add(k["name"])
                if a == "f32" and not rules.float_accuracy["f32"]:
                    k["accuracy_preserving"] = False
                    k["note"] = rules.f32_note
                kernels.append(k)
            kernels += rules.extra_kernels(op) if hasattr(rules, "extra_kernels") else []
        if kernels:
            ops.append({"op": op, "kernels": kernels})
    return ops


SG_MAP = {"Conv": "Conv2d", "ConvTranspose": "TransposeConv2d", "Gemm": "FullyConnected", "Add": "ElementWiseAdd",
          "Relu": "Relu", "Clip": "ReluMinMax", "HardSwish": "HardSwish", "PRelu": "Prelu", "LeakyRelu": "Prelu",
          "BatchNormalization": "Batchnorm", "Transpose": "Transpose", "Sigmoid": "Sigmoid",
          "Mul": "ElementWiseMultiply", "MatMul": "MatMul", "Softplus": "ElementWiseSoftplus", "Tanh": "Tanh"}


def super_groups(aimet_doc, note):
    out, seen = [], set()
    for sg in aimet_doc.get("supergroups", []):
        ops = [SG_MAP[o] for o in sg["op_list"]]
        if tuple(ops) in seen:
            continue
        seen.add(tuple(ops))
        out.append({"ops": ops, "note": note})
    return out


def conv_rules(fixed, floats_in, floats_out, casts):
    rules = []
    if fixed:
        rules.append({"from": fixed, "to": fixed, "via": "Convert"})
    if floats_in:
        rules.append({"from": floats_in, "to": fixed, "via": "Quantize"})
    if floats_out:
        rules.append({"from": fixed, "to": floats_out, "via": "Dequantize"})
    if casts:
        rules.append({"from": casts, "to": casts, "via": "Cast"})
    return rules


# ---------------------------------------------------------------------------
# HTP
# ---------------------------------------------------------------------------

HTP_SOCS = {
    68: [("SM8350", 30, 4), ("SA8295", 39, 8), ("SA8540", 62, 8), ("QCM6490", 93, 2), ("QCS6490", 0, 2)],
    69: [("SM8450", 36, 8), ("SM8475", 42, 8), ("SXR2230P", 53, 8)],
    73: [("SM8550", 43, 8), ("SA8255", 52, 8), ("QCS9100", 77, 8), ("SSG2115P", 46, 2), ("SSG2125P", 58, 2),
         ("SXR1230P", 45, 2), ("SM8635", 68, 0)],
    75: [("SM8650", 57, 8)],
    79: [("SM8750", 69, 8), ("SXR2330P", 75, 8), ("SM8735", 85, 0)],
    81: [("SM8850", 87, 8), ("SM8845", 97, 8), ("SA8797", 72, 16), ("SAR2230P", 95, 4), ("SW6100", 96, 4)],
}

HTP_DATA_MOVEMENT = ["Gather", "GatherElements", "GatherNd", "TopK", "BatchToSpace", "ChannelShuffle",
                     "SpaceToBatch", "Tile"]

HTP_SG_V73 = [["ElementWiseAdd", "Relu"], ["Conv2d", "HardSwish"], ["Conv2d", "Prelu"], ["Conv2d", "ReluMinMax"],
              ["Conv2d", "Relu"], ["TransposeConv2d", "Relu"], ["FullyConnected", "Relu"]]

FIXED_16 = {"Sigmoid": [{"dtype": "u16", "offset": 0, "scale": 1.0 / 65536},
                        {"dtype": "s16", "offset": 0, "scale": 1.0 / 32768}],
            "Tanh": [{"dtype": "u16", "offset": -32768, "scale": 1.0 / 32768},
                     {"dtype": "s16", "offset": 0, "scale": 1.0 / 32768}]}


class HtpRules(Rules):
    f32_note = "HTP has no fp32 math: fp32 tensors are computed in fp16"

    def __init__(self, arch):
        self.arch = arch
        self.float_kernels = arch >= 69
        self.float_accuracy = {"f16": True, "f32": False}

    def keep_kernel(self, op, a, w):
        if w == "i16" and a == "i16" and self.arch < 73:
            return False  # 16x16 needs V73
        return True

    def weight_slot(self, op, a, w):
        s = Rules.weight_slot(self, op, a, w)
        if op == "MatMul" and w == "i8" and self.arch < 73:
            s["symmetries"] = ["symmetric", "strict_symmetric"]
        return s

    def output_extra(self, op, a, out):
        if op in FIXED_16 and a == "i16":
            out["fixed_encodings"] = FIXED_16[op]
        if op == "Tanh" and not a.startswith("f"):
            out["value_range"] = {"min": -1.0, "max": 1.0}
        if op in ("Sigmoid", "Softmax") and self.arch >= 73 and not a.startswith("f"):
            out["value_range"] = {"min": 0.0, "max": 1.0}
        if op in HTP_DATA_MOVEMENT and not a.startswith("f"):
            out["scale_rule"] = "same_as_input"
        return out

    def extra_kernels(self, op):
        if self.arch < 69 or op not in ("Conv2d", "FullyConnected", "MatMul"):
            return []
        k = weighted_kernel(self, op, "i16", "i4")
        k["note"] = "4-bit weights (LPBQ requires V69+)"
        return [k]


def htp(arch, v75_doc, v75_table, plain_doc):
    rules = HtpRules(arch)
    fixed = ["u8", "s8", "u16", "s16"]
    floats = ["f16", "f32"] if arch >= 69 else ["f32"]
    casts = ["is32", "f16", "f32"] if arch >= 69 else ["is32"]
    conversions = conv_rules(fixed, floats, floats, casts if len(casts) > 1 else None)
    ops = build_ops(rules, v75_table, conversions)
    if arch >= 73:
        sgs = [{"ops": o, "note": "QAIRT HTP super group (spec Appendix D)"} for o in HTP_SG_V73]
    else:
        sgs = super_groups(plain_doc, "AIMET htp_quantsim_config_v%d supergroup" % arch)
    d = plain_doc["defaults"]
    return {
        "schema_version": SCHEMA_VERSION,
        "min_reader_version": MIN_READER_VERSION,
        "name": "htp_v%d" % arch,
        "description": "Qualcomm Hexagon NPU (HTP) V%d" % arch,
        "backend": "HTP",
        "arch_version": arch,
        "socs": [{"name": n, "soc_model": i, "vtcm_mb": v} for n, i, v in HTP_SOCS[arch]],
        "capabilities": {
            "fp16_compute": arch >= 69, "fp32_compute": False, "int16_activations": True,
            "a16w16": arch >= 73, "int4_weights": arch >= 69, "per_channel_weights": True,
            "block_weights": False, "lpbq_weights": arch >= 69,
        },
        "default_float_dtype": "f16" if arch >= 69 else "und",
        "quant_defaults": quant_defaults(d, plain_doc),
        "ops": ops,
        "data_movement_ops": HTP_DATA_MOVEMENT,
        "super_groups": sgs,
        "conversions": conversions,
        "sources": [
            "kernels: AIMET backend_aware_htp_quantsim_config_v75.json (only public HTP kernel table), gated per arch",
            "fp16 compute from V69; no fp32 math (formats.md 3.2: ORT QNN EP tests, QNN HTP docs)",
            "16-bit x 16-bit Conv/MatMul from V73 (AIMET quantsim.py exception rules; executorch htp_rules.py)",
            "LPBQ / 4-bit weights from V69 (executorch htp_rules.py); int4 symmetric only (ORT qnn_model_wrapper.cc)",
            "int32 bias, scale = in0 x weight (ORT base_op_builder.cc); int16 weights symmetric per-tensor (ORT conv_op_builder.cc)",
            "fixed 16-bit Sigmoid/Tanh encodings (ORT simple_op_builder.cc); output ranges (AIMET htp_quantsim_config_v%d)" % arch,
            "data movement ops: QAIRT spec Appendix E; super groups: %s" % (
                "QAIRT spec Appendix D" if arch >= 73 else "AIMET htp_quantsim_config_v%d" % arch),
            "SoCs: executorch qc_schema.py _soc_info_table (QNN_SOC_MODEL ids, VTCM MB)",
        ],
    }


def quant_defaults(d, doc):
    t = lambda v: str(v) == "True"
    params = doc.get("params", {})
    return {
        "activations_symmetric": t(d.get("ops", {}).get("is_symmetric", "False")),
        "params_symmetric": t(d.get("params", {}).get("is_symmetric", "False")),
        "strict_symmetric": t(d.get("strict_symmetric", "False")),
        "unsigned_symmetric": t(d.get("unsigned_symmetric", "False")),
        "per_channel": t(d.get("per_channel_quantization", "False")),
        "bias_quantized": t(params.get("bias", {}).get("is_quantized", "True")),
    }


# ---------------------------------------------------------------------------
# LPAI, CPU, AIC100
# ---------------------------------------------------------------------------

class IntOnlyRules(Rules):
    float_kernels = False
    per_tensor_acts = True
    index_input_precisions = ["i8", "i16"]


def lpai(doc, table):
    rules = IntOnlyRules()
    fixed = ["u8", "s8", "u16", "s16"]
    conversions = conv_rules(fixed, ["f32"], ["f32"], None)
    ops = build_ops(rules, table, conversions)
    return {
        "schema_version": SCHEMA_VERSION, "min_reader_version": MIN_READER_VERSION,
        "name": "lpai_v6", "description": "Qualcomm Low Power AI (LPAI, eNPU) V6",
        "backend": "LPAI", "arch_version": 6,
        "socs": [{"name": "SM8850", "soc_model": 87}, {"name": "SAR2230P", "soc_model": 95}],
        "capabilities": {"fp16_compute": False, "fp32_compute": False, "int16_activations": True, "a16w16": True,
                         "int4_weights": False, "per_channel_weights": False, "block_weights": False,
                         "lpbq_weights": False},
        "default_float_dtype": "und",
        "quant_defaults": quant_defaults(doc["defaults"], doc),
        "ops": ops,
        "data_movement_ops": [],
        "super_groups": super_groups(doc, "AIMET backend_aware_lpai_quantsim_config supergroup"),
        "conversions": conversions,
        "sources": [
            "kernels, supergroups, defaults: AIMET backend_aware_lpai_quantsim_config.json (integer only)",
            "Quantize/Dequantize at the float boundary: LPAI API version history (QNN docs 80-63442-50)",
            "SoCs with LPAI v6: executorch qc_schema.py; DEFAULT hw version V6: QnnLpaiBackend.h",
        ],
    }


class CpuRules(Rules):
    per_tensor_acts = True
    float_kernels = True
    index_dtype = ["is32", "is64"]


def cpu(doc, table):
    rules = CpuRules()
    fixed = ["u8", "s8", "u16", "s16"]
    conversions = conv_rules(fixed, ["f32"], ["f32"], ["f32", "f16", "is8", "is16", "is32", "is64", "iu8", "b8"])
    ops = build_ops(rules, table, conversions, extra_float_all=True)
    return {
        "schema_version": SCHEMA_VERSION, "min_reader_version": MIN_READER_VERSION,
        "name": "cpu", "description": "qairt reference CPU: fp32 for every op, int8/int16 where the QNN CPU backend has them",
        "backend": "CPU", "arch_version": 0, "socs": [],
        "capabilities": {"fp16_compute": False, "fp32_compute": True, "int16_activations": True, "a16w16": False,
                         "int4_weights": False, "per_channel_weights": True, "block_weights": False,
                         "lpbq_weights": False},
        "default_float_dtype": "f32",
        "quant_defaults": quant_defaults(doc["defaults"], doc),
        "ops": ops,
        "data_movement_ops": [],
        "super_groups": super_groups(doc, "AIMET backend_aware_cpu_quantsim_config supergroup"),
        "conversions": conversions,
        "sources": [
            "int8/int16/fp32 kernels: AIMET backend_aware_cpu_quantsim_config.json",
            "fp32 kernel for every other IR op: qairt's own reference executor",
        ],
    }


class AicRules(Rules):
    per_tensor_acts = True
    float_kernels = True


def aic100(doc, table, per_channel_doc):
    rules = AicRules()
    fixed = ["u8", "s8"]
    conversions = conv_rules(fixed, ["f16", "f32"], ["f16", "f32"], ["f16", "f32", "is8", "is32"])
    ops = build_ops(rules, table, conversions)
    return {
        "schema_version": SCHEMA_VERSION, "min_reader_version": MIN_READER_VERSION,
        "name": "aic100", "description": "Qualcomm Cloud AI 100 (fp16 compute, int8)",
        "backend": "AIC", "arch_version": 0, "socs": [],
        "capabilities": {"fp16_compute": True, "fp32_compute": True, "int16_activations": False, "a16w16": False,
                         "int4_weights": False, "per_channel_weights": True, "block_weights": False,
                         "lpbq_weights": False},
        "default_float_dtype": "f16",
        "quant_defaults": quant_defaults(doc["defaults"], doc),
        "ops": ops,
        "data_movement_ops": [],
        "super_groups": super_groups(per_channel_doc, "AIMET aic100 quantsim config supergroup"),
        "conversions": conversions,
        "sources": [
            "kernels: AIMET backend_aware_aic100_quantsim_config.json",
            "fp16 compute (-convert-to-fp16), fp32 islands (-node-precision-info): Cloud AI docs 80-99100-3, research/aic100.md",
        ],
    }


def pretty(v, indent=0):
    """JSON with one line per slot, kernel header or list of scalars."""
    pad = "  " * indent
    if isinstance(v, dict):
        if "role" in v or "dtype" in v or "min" in v or "soc_model" in v or "via" in v or (
                "ops" in v and "note" in v):
            return json.dumps(v)
        items = ['%s  %s: %s' % (pad, json.dumps(k), pretty(x, indent + 1)) for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if all(not isinstance(x, (dict, list)) for x in v):
            return json.dumps(v)
        return "[\n" + ",\n".join(pad + "  " + pretty(x, indent + 1) for x in v) + "\n" + pad + "]"
    return json.dumps(v)


def main():
    cfg = lambda n: parse_aimet(os.path.join(CONFIGS, n + ".json"))
    v75_doc, v75_table = cfg("backend_aware_htp_quantsim_config_v75")
    targets = []
    for arch in (68, 69, 73, 75, 79, 81):
        plain_doc, _ = cfg("htp_quantsim_config_v%d" % arch)
        targets.append(htp(arch, v75_doc, v75_table, plain_doc))
    lp_doc, lp_table = cfg("backend_aware_lpai_quantsim_config")
    targets.append(lpai(lp_doc, lp_table))
    cpu_doc, cpu_table = cfg("backend_aware_cpu_quantsim_config")
    targets.append(cpu(cpu_doc, cpu_table))
    aic_doc, aic_table = cfg("backend_aware_aic100_quantsim_config")
    targets.append(aic100(aic_doc, aic_table, aic_doc))
    check = "--check" in sys.argv
    differ = []
    for t in targets:
        text = pretty(t) + "\n"
        path = os.path.join(OUT, t["name"] + ".json")
        if check:
            if not os.path.exists(path) or open(path).read() != text:
                differ.append(path)
        else:
            with open(path, "w") as f:
                f.write(text)
    if differ:
        print("out of date: " + ", ".join(differ))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
