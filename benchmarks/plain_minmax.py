"""A plain min-max quantization of an ONNX model, written independently of
qairt, as the reference qairt's accuracy is held to: the formulation of ONNX
Runtime's static QDQ quantizer with its defaults.

* Activations: every float tensor a node produces, and every float graph
  input, gets QuantizeLinear/DequantizeLinear with an asymmetric min-max
  encoding (range widened to include 0) from the float model's values on the
  calibration samples, unsigned 8 or 16 bits.
* Weights: the constant weight of Conv, ConvTranspose, Gemm and MatMul,
  per-channel symmetric int8 (scale = max|w| / 127 per output channel). The
  4-bit form (weight_bits=4, block_size=B) is its blockwise counterpart:
  symmetric int4 per block of B input channels of each output channel
  (scale = max|w| / 7 per block, float scales), the way weight-only int4
  quantizers block LLM weights; those weights are stored already dequantized
  (q x scale in float32, what DequantizeLinear computes), as opset 21's
  blocked int4 DequantizeLinear is not needed to run them.
* Biases: the constant bias of Conv and Gemm, int32 with scale = input scale
  x weight scale (per channel; for blocked weights the channel's largest
  block scale).
* Everything else (other constants) stays float.

The float model's intermediate values come from onnxruntime-node
(tests/exec/ort_exec.js), so the reference depends on neither qairt's
importer nor its executor.
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORT_EXEC = os.path.join(REPO, "tests", "exec", "ort_exec.js")

# (op type, weight input, bias input or None, channel axis of the weight or None = from the op)
MS = "com.microsoft"
WEIGHT_OPS = {"Conv": (1, 2, 0), "ConvTranspose": (1, 2, 1), "Gemm": (1, 2, None), "MatMul": (1, None, None)}


def read_input_list(path, shapes, dtypes=None):
    """[{input name: array}] of a qairt/qnn input_list (name:=file lines or bare paths, raw little-endian
    data: float32, or dtypes[name])."""
    folder = os.path.dirname(os.path.abspath(path))
    names = list(shapes)
    samples = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            sample = {}
            for k, entry in enumerate(line.split()):
                name, sep, file = entry.partition(":=")
                if not sep:
                    name, file = names[k], entry
                file = file if os.path.isabs(file) else os.path.join(folder, file)
                dtype = np.dtype((dtypes or {}).get(name, "float32")).newbyteorder("<")
                sample[name] = np.fromfile(file, dtype=dtype).reshape(shapes[name])
            samples.append(sample)
    return samples


def run_ort(model_path, samples, work):
    """Runs `model_path` in onnxruntime-node on each sample; [{output name: array}] in sample order."""
    work = os.path.abspath(work)
    os.makedirs(work, exist_ok=True)
    jobs = []
    for i, sample in enumerate(samples):
        out = os.path.join(work, "s%d" % i)
        os.makedirs(out, exist_ok=True)
        inputs = {}
        for name, value in sample.items():
            file = os.path.join(out, "in_%s.npy" % len(inputs))
            np.save(file, value)
            inputs[name] = file
        # Graph optimizations off: Q/DQ nodes run as written (no QLinear fusion, which
        # also needs opset >= 10), the float ops exactly as the model says.
        jobs.append({"model": model_path, "out": out, "inputs": inputs, "opt": "disabled"})
    batch = os.path.join(work, "jobs.json")
    with open(batch, "w") as f:
        json.dump(jobs, f)
    r = subprocess.run(["node", ORT_EXEC, batch], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("onnxruntime-node failed on %s:\n%s" % (model_path, r.stderr[-3000:]))
    results = []
    for job in jobs:
        with open(os.path.join(job["out"], "result.json")) as f:
            meta = json.load(f)
        results.append({o["name"]: np.load(o["file"] if os.path.isabs(o["file"]) else
                                           os.path.join(job["out"], o["file"])) for o in meta["outputs"]})
    return results


def float_tensors(model):
    """Names of the float32 tensors the graph's nodes produce, with the float graph inputs, in graph order."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in
             list(inferred.graph.value_info) + list(inferred.graph.output) + list(inferred.graph.input)}
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits and types.get(i.name) == TensorProto.FLOAT]
    for node in model.graph.node:
        if node.op_type == "Constant":
            continue
        names += [o for o in node.output if o and types.get(o) == TensorProto.FLOAT]
    return names


def activation_ranges(model_path, samples, work):
    """{tensor: (min, max)} over the samples, each range widened to include 0."""
    model = onnx.load(model_path)
    names = float_tensors(model)
    outputs = {o.name for o in model.graph.output}
    model.graph.output.extend(helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
                              for n in names if n not in outputs)
    probe = os.path.join(work, "probe.onnx")
    onnx.save(model, probe)
    ranges = {}
    for result in run_ort(probe, samples, os.path.join(work, "probe")):
        for name, value in result.items():
            lo, hi = float(np.min(value)), float(np.max(value))
            old = ranges.get(name, (0.0, 0.0))
            ranges[name] = (min(old[0], lo), max(old[1], hi))
    for sample in samples:  # graph inputs are not outputs of the probe; token ids stay integers
        for name, value in sample.items():
            if value.dtype != np.float32:
                continue
            old = ranges.get(name, (0.0, 0.0))
            ranges[name] = (min(old[0], float(value.min())), max(old[1], float(value.max())))
    return ranges


def _activation_params(lo, hi, bits):
    qmax = (1 << bits) - 1
    scale = (hi - lo) / qmax if hi > lo else 1.0
    zero_point = int(np.clip(round(-lo / scale), 0, qmax))
    return np.float32(scale), zero_point


def _blocked_int4(w, out_axis, in_axis, block_size, lpbq=False):
    """Symmetric int4 min-max per block of block_size input channels (along in_axis) of each output channel
    (out_axis); returns the dequantized weight and each output channel's largest block scale. lpbq: each
    block's scale rounded to a multiple (1..16) of its channel's largest block scale / 16, the form HTP's
    LPBQ weights take (the comparison that isolates what the integer block scales cost)."""
    moved = np.moveaxis(w, (out_axis, in_axis), (0, 1))
    o, i = moved.shape[:2]
    flat = moved.reshape(o, i, -1)
    starts = list(range(0, i, block_size))
    scales = np.stack([np.max(np.abs(flat[:, s:s + block_size, :]), axis=(1, 2)) / 7.0 for s in starts], 1)
    scales = scales.astype(np.float32)
    scales[scales < 1e-20] = 1.0
    if lpbq:
        channel = scales.max(axis=1) / 16.0
        scales = (np.clip(np.round(scales / channel[:, None]), 1, 16) * channel[:, None]).astype(np.float32)
    deq = np.empty_like(flat)
    for b, start in enumerate(starts):
        blk = flat[:, start:start + block_size, :]
        scale = scales[:, b]
        q = np.clip(np.round(blk / scale[:, None, None]), -8 if lpbq else -7, 7)
        deq[:, start:start + block_size, :] = (q * scale[:, None, None]).astype(np.float32)
    return np.moveaxis(deq.reshape(moved.shape), (0, 1), (out_axis, in_axis)), scales.max(axis=1)


def quantize(model_path, ranges, act_bits, out_path, weight_bits=8, block_size=None, lpbq=False):
    """Writes the plain min-max Q-DQ model to out_path. The Q/DQ nodes are ONNX Runtime's com.microsoft ones
    (uint16, per-axis and int32 at any opset), so the model keeps its own opset."""
    model = onnx.load(model_path)
    graph = model.graph
    # Constants: initializers and Constant nodes (exporters such as paddle2onnx use the latter for weights).
    inits = {i.name: i for i in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] not in inits:
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                inits[node.output[0]] = value
    zp_np = np.uint16 if act_bits == 16 else np.uint8
    new_inits, act_scale = [], {}
    qdq_nodes = {}  # tensor -> nodes that produce tensor + "_dq"
    for name, (lo, hi) in ranges.items():
        scale, zp = _activation_params(lo, hi, act_bits)
        act_scale[name] = scale
        new_inits += [numpy_helper.from_array(np.array(scale, np.float32), name + "_scale"),
                      numpy_helper.from_array(np.array(zp, zp_np), name + "_zp")]
        qdq_nodes[name] = [
            helper.make_node("QuantizeLinear", [name, name + "_scale", name + "_zp"], [name + "_q"], domain=MS),
            helper.make_node("DequantizeLinear", [name + "_q", name + "_scale", name + "_zp"], [name + "_dq"],
                             domain=MS)]

    # Weights and biases: per-channel int8 / int32 Q-DQ, one per use.
    weight_nodes = []
    for k, node in enumerate(graph.node):
        spec = WEIGHT_OPS.get(node.op_type)
        if not spec or len(node.input) <= spec[0] or node.input[spec[0]] not in inits:
            continue
        w_name = node.input[spec[0]]
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
        if node.op_type == "Gemm":
            trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
            axis = 0 if trans_b else 1
        elif node.op_type == "MatMul":
            axis = w.ndim - 1
        else:
            axis = spec[2]
        tag = "%s_w%d" % (w_name, k)
        if weight_bits == 4 and w.ndim >= 2:
            in_axis = {"Conv": 1, "ConvTranspose": 0, "Gemm": 1 - axis}.get(node.op_type, w.ndim - 2)
            deq, w_scale = _blocked_int4(w, axis, in_axis, block_size, lpbq)
            new_inits.append(numpy_helper.from_array(deq.astype(np.float32), tag + "_dq"))
        else:
            reduce = tuple(d for d in range(w.ndim) if d != axis)
            w_scale = (np.max(np.abs(w), axis=reduce) / 127.0).astype(np.float32)
            # A channel of (near) zero weights: any scale holds it; 1 keeps its bias scale representable.
            w_scale[w_scale < 1e-20] = 1.0
            new_inits += [numpy_helper.from_array(w_scale, tag + "_scale"),
                          numpy_helper.from_array(np.zeros(w_scale.shape, np.int8), tag + "_zp")]
            shape = [1] * w.ndim
            shape[axis] = -1
            q = np.clip(np.round(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
            new_inits.append(numpy_helper.from_array(q, tag + "_q"))
            weight_nodes.append(helper.make_node("DequantizeLinear", [tag + "_q", tag + "_scale", tag + "_zp"],
                                                 [tag + "_dq"], axis=axis, domain=MS))
        node.input[spec[0]] = tag + "_dq"
        b_index = spec[1]
        if b_index is not None and len(node.input) > b_index and node.input[b_index] in inits \
                and node.input[0] in act_scale:
            b_name = node.input[b_index]
            b = numpy_helper.to_array(inits[b_name]).astype(np.float64)
            b_scale = (act_scale[node.input[0]] * w_scale).astype(np.float32)
            bq = np.clip(np.round(b / b_scale), -2**31, 2**31 - 1).astype(np.int32)
            btag = "%s_b%d" % (b_name, k)
            new_inits += [numpy_helper.from_array(bq, btag + "_q"), numpy_helper.from_array(b_scale, btag + "_scale"),
                          numpy_helper.from_array(np.zeros(b_scale.shape, np.int32), btag + "_zp")]
            weight_nodes.append(helper.make_node("DequantizeLinear", [btag + "_q", btag + "_scale", btag + "_zp"],
                                                 [btag + "_dq"], axis=0, domain=MS))
            node.input[b_index] = btag + "_dq"

    # Every consumer reads the dequantized activation; graph outputs too.
    for node in graph.node:
        for i, name in enumerate(node.input):
            if name in qdq_nodes:
                node.input[i] = name + "_dq"
    # A graph output keeps its name: its producer writes NAME_f, the DequantizeLinear writes NAME.
    inputs = {i.name for i in graph.input}
    for name in [o.name for o in graph.output if o.name in qdq_nodes and o.name not in inputs]:
        raw = name + "_f"
        for node in graph.node:
            node.output[:] = [raw if o == name else o for o in node.output]
            node.input[:] = [name if i == name + "_dq" else i for i in node.input]
        q, dq = qdq_nodes.pop(name)
        q.input[0] = raw
        dq.output[0] = name
        qdq_nodes[raw] = [q, dq]
    # Q-DQ pairs right after their producer keep the node list topological.
    ordered = list(weight_nodes)
    for name in [i.name for i in graph.input]:
        ordered += qdq_nodes.get(name, [])
    for node in graph.node:
        ordered.append(node)
        for o in node.output:
            ordered += qdq_nodes.get(o, [])
    del graph.node[:]
    graph.node.extend(ordered)
    graph.initializer.extend(new_inits)
    if not any(imp.domain == MS for imp in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS, 1))
    del graph.value_info[:]
    onnx.save(model, out_path)


def build(model_path, calib_samples, act_bits, out_path, work=None, weight_bits=8, block_size=None, lpbq=False):
    """Calibrates on calib_samples and writes the plain min-max Q-DQ model."""
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        ranges = activation_ranges(model_path, calib_samples, tmp)
    quantize(model_path, ranges, act_bits, out_path, weight_bits, block_size, lpbq)
