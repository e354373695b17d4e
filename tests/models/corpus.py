#!/usr/bin/python3
"""The model corpus: architectures users bring to a converter, as today's
exporters write them, with calibration and evaluation inputs.

    /usr/bin/python3 tests/models/corpus.py OUT_DIR [--calib N] [--eval N] [-k FILTER] [--force]

* torchvision architectures (corpus_vision.py), hand-written transformer
  and audio modules (corpus_transformers.py) and hand-written modules that
  reproduce exporter patterns of models users bring (corpus_patterns.py, the
  pat_* models), random weights from a fixed seed, exported by Debian's
  python3-torch with torch.onnx.export at opset 17 (static shapes); a subset
  again at opset 13 (LayerNorm, GELU, ... are then decomposed by the
  exporter).
* the real models of third_party/npm (corpus_npm.py; scripts/setup-npm.sh); a
  TFLite model whose bilinear resizes use half-pixel centers is used as a copy
  without them, which its float reference computes (tflite_ref.py).

Writes OUT_DIR/<model>/model.onnx (torch models; the npm models are used
where they are installed), OUT_DIR/<model>/data/{calib,eval}_NNN_<input>.raw in
each input's own dtype (int64 token ids stay int64), {calib,eval}_list.txt in
qnn-net-run's input_list layout (name:=file, relative to the list) and
OUT_DIR/manifest.json describing every model. A manifest written from the same
corpus sources is reused as it is unless --force.
"""
import argparse
import hashlib
import json
import os
import sys
import time
import warnings
import zlib
from collections import OrderedDict

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
    import torchvision
except ImportError as e:  # the corpus is part of the test suite: no torch is a broken setup, not a skip
    raise SystemExit("corpus: %s; scripts/setup-deps.sh installs python3-torch and python3-torchvision" % e)

import corpus_npm  # noqa: E402
import corpus_patterns  # noqa: E402
import corpus_transformers  # noqa: E402
import corpus_vision  # noqa: E402
import tflite_ref  # noqa: E402

# Also exported at opset 13: CNNs and transformers whose exports differ most between the two opsets.
OPSET13 = ("convnext_tiny", "mobilenet_v3_small", "efficientnet_b0", "vit_b_16", "llama", "bert", "whisper_encoder")
def seed_of(name):
    return zlib.crc32(name.encode())


def write_samples(mdir, feeds_fn, model, rng, counts):
    """{split: list file name}; each split's raws in data/, one line per sample."""
    os.makedirs(os.path.join(mdir, "data"), exist_ok=True)
    lists = {}
    for split, n in counts.items():
        lines = []
        for i in range(n):
            feeds = feeds_fn(model, rng)
            entries = []
            for name, value in feeds.items():
                f = "data/%s_%03d_%s.raw" % (split, i, name.replace("/", "_"))
                value.astype(value.dtype.newbyteorder("<")).tofile(os.path.join(mdir, f))
                entries.append("%s:=%s" % (name, f))
            lines.append(" ".join(entries) + "\n")
        path = os.path.join(mdir, split + "_list.txt")
        with open(path, "w") as fh:
            fh.writelines(lines)
        lists[split] = path
    return lists


def onnx_summary(path):
    import onnx
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    dtype = {1: "float32", 6: "int32", 7: "int64", 9: "bool"}
    ins = [dict(name=i.name, dtype=dtype.get(i.type.tensor_type.elem_type, str(i.type.tensor_type.elem_type)),
                shape=[d.dim_value if d.HasField("dim_value") else d.dim_param for d in i.type.tensor_type.shape.dim])
           for i in m.graph.input if i.name not in inits]
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in m.graph.node})
    opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=None)
    return dict(inputs=ins, outputs=[o.name for o in m.graph.output], ops=ops, opset=opset)


def torch_entries(out, counts, only):
    models = [(n, b, fam, tr, "torchvision") for n, (b, fam, tr) in corpus_vision.MODELS.items()]
    models += [(n, b, fam, True, "torch") for n, (b, fam) in corpus_transformers.MODELS.items()]
    models += [(n, b, fam, tr, "torch") for n, (b, fam, tr) in corpus_patterns.MODELS.items()]
    entries = []
    for name, builder, family, transformer, source in models:
        wanted = [(name, 17)] + ([(name + "_op13", 13)] if name in OPSET13 else [])
        wanted = [w for w in wanted if only(w[0])]
        if not wanted:
            continue
        t0 = time.time()
        torch.manual_seed(seed_of(name))
        built = builder()
        module, inputs, outputs = built[:3]
        feeds_fn = built[3] if len(built) > 3 else corpus_vision.vision_feeds(inputs)
        corpus_vision.randomize_norms(module, torch.Generator().manual_seed(seed_of(name)))
        module.eval()
        mdir = os.path.join(out, name)
        rng = np.random.default_rng(seed_of(name))
        example = feeds_fn(module, np.random.default_rng(0))
        lists = write_samples(mdir, feeds_fn, module, rng, counts)
        for model_name, opset in wanted:
            path = os.path.join(mdir, "model.onnx" if opset == 17 else "model_op%d.onnx" % opset)
            # Exported with autograd on: nn.MultiheadAttention then takes its composite path, which exports,
            # rather than the fused inference kernel, which does not.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(module, tuple(torch.from_numpy(v) for v in example.values()), path,
                                  opset_version=opset, input_names=[i[0] for i in inputs], output_names=outputs,
                                  do_constant_folding=True)
            e = dict(name=model_name, family=family, transformer=transformer, source=source, format="onnx",
                     path=path, dims={}, calib_list=lists["calib"], eval_list=lists["eval"])
            e.update(onnx_summary(path))
            e["opset"] = opset
            entries.append(e)
        print("corpus: %-32s %5.1f s" % (name, time.time() - t0), flush=True)
    return entries


def npm_entries(out, counts, only):
    entries = []
    for name, (path, family, transformer, dims, maker) in corpus_npm.MODELS.items():
        if not only(name):
            continue
        if not os.path.exists(path):
            raise SystemExit("corpus: %s missing (run scripts/setup-npm.sh)" % path)
        mdir = os.path.join(out, name)
        lists = write_samples(mdir, lambda _m, rng, f=maker: f(rng), None, np.random.default_rng(seed_of(name)),
                              counts)
        fmt = "tflite" if path.endswith(".tflite") else "onnx"
        e = dict(name=name, family=family, transformer=transformer, source="npm", format=fmt, path=path,
                 dims=dims, calib_list=lists["calib"], eval_list=lists["eval"])
        if name in corpus_npm.FLOAT_ONLY:
            e["skip_recipes"], e["note"] = corpus_npm.FLOAT_ONLY[name]
        if name in corpus_npm.RECIPE_OVERRIDES:
            flags, why = corpus_npm.RECIPE_OVERRIDES[name]
            e["w8a16_flags"] = flags
            e["note"] = why
        if fmt == "onnx":
            e.update(onnx_summary(path))
            for i in e["inputs"]:
                i["shape"] = dims.get(i["name"], i["shape"])
        elif name in corpus_npm.ONNX_TWINS:
            twin, renames, outputs = corpus_npm.ONNX_TWINS[name]
            e.update(reference_onnx=dict(path=twin, inputs=renames, outputs=outputs),
                     note="float reference: its ONNX twin in onnxruntime (Arm NN 20.08 cannot resize the "
                          "dynamic input)",
                     inputs=[dict(name=k, dtype="float32", shape=v) for k, v in dims.items()], outputs=None,
                     ops=None, opset=None)
        else:
            e["path"] = tflite_ref.without_half_pixel_centers(path, mdir)
            if e["path"] != path:
                e["note"] = "RESIZE_BILINEAR half_pixel_centers cleared (Arm NN 20.08, the float reference, ignores it)"
            e.update(inputs=[dict(name=k, dtype="float32", shape=v) for k, v in dims.items()], outputs=None,
                     ops=None, opset=None)
        entries.append(e)
    return entries


def fingerprint(counts):
    h = hashlib.sha256()
    for f in sorted(os.listdir(HERE)):
        if (f.startswith("corpus") and f.endswith(".py")) or f == "tflite_ref.py":
            with open(os.path.join(HERE, f), "rb") as fh:
                h.update(f.encode() + fh.read())
    h.update(json.dumps([torch.__version__, torchvision.__version__, counts], sort_keys=True).encode())
    return h.hexdigest()


def generate(out, calib=8, evals=4, filt=None, force=False):
    """Returns the manifest (dict with "models"), generating what is missing or stale."""
    counts = OrderedDict([("calib", calib), ("eval", evals)])
    manifest_path = os.path.join(out, "manifest.json")
    fp = fingerprint(counts)
    if not force and not filt and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        if manifest.get("fingerprint") == fp and all(os.path.exists(m["path"]) for m in manifest["models"]):
            print("corpus: %d models in %s are up to date" % (len(manifest["models"]), out))
            return manifest
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    only = (lambda n: filt in n) if filt else (lambda n: True)
    models = torch_entries(out, counts, only) + npm_entries(out, counts, only)
    if filt and os.path.exists(manifest_path):
        # A partial run replaces its models in the manifest and marks it stale for the next full run.
        with open(manifest_path) as f:
            done = {m["name"] for m in models}
            models = [m for m in json.load(f)["models"] if m["name"] not in done] + models
    manifest = dict(fingerprint=None if filt else fp, generation_seconds=round(time.time() - t0, 1),
                    torch=torch.__version__, torchvision=torchvision.__version__, models=models)
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, manifest_path)
    print("corpus: %d models generated in %.1f s" % (len(models), time.time() - t0))
    return manifest


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--calib", type=int, default=8, help="calibration samples per model")
    ap.add_argument("--eval", type=int, default=4, help="evaluation samples per model")
    ap.add_argument("-k", dest="filter", help="only models whose name contains this")
    ap.add_argument("--force", action="store_true", help="regenerate even when the manifest is up to date")
    a = ap.parse_args(argv)
    generate(a.out, a.calib, a.eval, a.filter, a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
