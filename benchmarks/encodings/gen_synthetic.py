#!/usr/bin/env python3
"""Writes a synthetic LLM-scale QAIRT 2.0.0 encodings file and the matching
tensor list for bench_encodings.

  gen_synthetic.py OUT.json OUT.tensors [--activations 199760] [--weights 240]

Activations: per-tensor uint16 entries named like a decoder's tensors.
Weights: [1024, 4096] int4 block-quantized along axis 1 (block 128), so each
y_scale is a nested 1024 x 32 array; every fourth weight is LPBQ instead
(per_channel_float_scale [1024, 1] + per_block_int_scale [1024, 32]).
The .tensors file lists "name d0,d1,..." per line.
Deterministic (fixed seed): the same bytes on every run.
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json_out")
    ap.add_argument("tensors_out")
    ap.add_argument("--activations", type=int, default=199760)
    ap.add_argument("--weights", type=int, default=240)
    a = ap.parse_args()
    rng = random.Random(20261129)
    rows, cols, block = 1024, 4096, 128
    nb = cols // block
    with open(a.json_out, "w") as out, open(a.tensors_out, "w") as shapes:
        out.write('{"version": "2.0.0", "encodings": [\n')
        first = True

        def emit(s):
            nonlocal first
            out.write(s if first else ",\n" + s)
            first = False

        for i in range(a.weights):
            name = "model.layers.%d.mlp.%s_proj.weight" % (i // 4, ("gate", "up", "down", "o")[i % 4])
            shapes.write("%s %d,%d\n" % (name, rows, cols))
            if i % 4 == 3:
                pc = ",".join("[%.7g]" % rng.uniform(1e-4, 1e-2) for _ in range(rows))
                pb = ",".join("[" + ",".join(str(rng.randint(1, 16)) for _ in range(nb)) + "]" for _ in range(rows))
                emit('{"name": %s, "output_dtype": "int4", "per_channel_float_scale": [%s], '
                     '"per_block_int_scale": [%s], "axis": 1, "block_size": %d}' % (json.dumps(name), pc, pb, block))
            else:
                ys = ",".join("[" + ",".join("%.7g" % rng.uniform(1e-4, 1e-2) for _ in range(nb)) + "]"
                              for _ in range(rows))
                emit('{"name": %s, "output_dtype": "int4", "y_scale": [%s], "axis": 1, "block_size": %d}'
                     % (json.dumps(name), ys, block))
        for i in range(a.activations):
            name = "/model/layers.%d/block_%d/act_output_%d" % (i // 1000, (i // 10) % 100, i)
            shapes.write("%s 1,%d\n" % (name, 1 + i % 4096))
            emit('{"name": %s, "output_dtype": "uint16", "y_scale": %.7g, "y_zero_point": %d}'
                 % (json.dumps(name), rng.uniform(1e-6, 1e-2), rng.randint(0, 65535)))
        out.write("\n]}\n")


if __name__ == "__main__":
    main()
