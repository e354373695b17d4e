"""Writes a QAIRT 2.0.0 encodings file covering every real-valued tensor of a
model except conv/FC biases (left for the quantizer to compute):
activations uint8 over [-8, 8]; conv weights int8 symmetric per output
channel from their data; MatMul weights int8 symmetric per tensor; other
constants uint8 over their data range (widened to contain 0).

    make_cls_encodings.py MODEL OUT.json [NAME=VALUE define_symbols...]
Needs QAIRT_LIBRARY and PYTHONPATH=python (the qairt binding)."""
import json
import sys

import numpy as np

import qairt


def main():
    model, out = sys.argv[1], sys.argv[2]
    syms = {k: int(v) for k, v in (a.split("=", 1) for a in sys.argv[3:])}
    g, _ = qairt.import_onnx(model, define_symbols=syms)
    ops = g.ops()
    entries = []
    for t in g.tensors():
        if t.dtype not in ("float32", "float16"):
            continue
        if t.role != "static":
            entries.append({"name": t.name, "output_dtype": "uint8", "y_scale": 16.0 / 255, "y_zero_point": 128})
            continue
        uses = [(ops[o].type, s) for o, s in zip(t.consumers, t.consumer_slots)]
        data = np.frombuffer(g.tensor_data(t.id), dtype=np.float32 if t.dtype == "float32" else np.float16)
        data = data.astype(np.float64).reshape([d for d in t.shape])
        if any(s == 2 and ty in ("Conv2d", "DepthWiseConv2d", "TransposeConv2d", "FullyConnected")
               for ty, s in uses):
            continue  # bias: computed as input scale x weight scale
        if any(s == 1 and ty in ("Conv2d", "DepthWiseConv2d", "TransposeConv2d") for ty, s in uses):
            amax = np.abs(data.reshape(data.shape[0], -1)).max(axis=1)
            scales = [float(max(a, 1e-8) / 127) for a in amax]
            entries.append({"name": t.name, "output_dtype": "int8", "y_scale": scales,
                            "y_zero_point": [0] * len(scales), "axis": 0})
            continue
        if any(s == 1 and ty in ("MatMul", "FullyConnected") for ty, s in uses):
            amax = float(np.abs(data).max())
            entries.append({"name": t.name, "output_dtype": "int8", "y_scale": max(amax, 1e-8) / 127,
                            "y_zero_point": 0})
            continue
        lo, hi = min(0.0, float(data.min())), max(0.0, float(data.max()))
        scale = max(hi - lo, 1e-4) / 255
        entries.append({"name": t.name, "output_dtype": "uint8", "y_scale": scale,
                        "y_zero_point": int(round(-lo / scale))})
    with open(out, "w") as f:
        json.dump({"version": "2.0.0", "encodings": entries}, f, indent=1)


if __name__ == "__main__":
    main()
