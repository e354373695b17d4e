#!/usr/bin/python3
"""ONNX operator conformance of the reference executor.

Builds ONNX's backend node test cases in memory from Debian's python3-onnx
(onnx.backend.test.case.node), imports each model with qairt, runs it on the
executor and compares every output with ONNX's expected values at the case's
tolerances (rtol 1e-3, atol 1e-7 unless the case says otherwise).

A case is *in scope* when the importer lowers all its ops (an "unsupported
op" import error puts it out of scope; any other import error is a failure).
Exit status 1 when the pass rate of in-scope cases is below --min-pass.

    QAIRT_LIBRARY=build/libqairt.so PYTHONPATH=python \
        /usr/bin/python3 tests/exec/onnx_conformance.py [--min-pass 0.97] [--markdown OUT.md] [-k FILTER]
"""
import argparse
import os
import re
import sys
import traceback

import numpy as np

# onnx 1.12's case generators still use numpy's removed aliases (np.float, ...).
for _alias, _builtin in (("float", float), ("int", int), ("bool", bool), ("object", object), ("complex", complex),
                         ("str", str)):
    if _alias not in np.__dict__:
        setattr(np, _alias, _builtin)

import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
from onnx.backend.test.case import node as node_cases  # noqa: E402

import qairt  # noqa: E402


def collect():
    cases = node_cases.collect_testcases(None) if node_cases.collect_testcases.__code__.co_argcount else \
        node_cases.collect_testcases()
    return sorted(cases, key=lambda c: c.name)


# The importer's words for an op it has no lowering for, or an opset outside its range.
UNSUPPORTED = re.compile(r"\bop [A-Za-z0-9_.]+ is not supported|opset \d+ is not supported")


def classify_import_error(msg):
    """'out_of_scope' when the model uses an op the importer does not lower."""
    if UNSUPPORTED.search(msg) or "not in the importer" in msg:
        return "out_of_scope"
    return "import_error"


def compare(name, expected, got, rtol, atol):
    if got is None:
        return "output '%s' missing" % name
    if tuple(expected.shape) != tuple(got.shape):
        return "output '%s' shape %s, expected %s" % (name, tuple(got.shape), tuple(expected.shape))
    if expected.dtype.kind in "biu" or expected.dtype == np.bool_:
        if not np.array_equal(expected.astype(np.int64), got.astype(np.int64)):
            bad = int(np.sum(expected.astype(np.int64) != got.astype(np.int64)))
            return "output '%s': %d of %d values differ" % (name, bad, expected.size)
        return None
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    nan_mismatch = np.isnan(e) != np.isnan(g)
    close = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    if nan_mismatch.any() or not close.all():
        d = np.abs(g - e)
        d[np.isnan(d)] = np.inf
        k = int(np.argmax(d))
        return "output '%s': %d of %d values outside rtol=%g atol=%g (max abs diff %.3g at flat index %d: got %r, expected %r)" % (
            name, int((~close).sum()), e.size, rtol, atol, float(d.flat[k]), k, g.flat[k], e.flat[k])
    return None


FROZEN = set()

# Why each known executor failure happens (checked by hand; a case that fails for
# another reason shows the measured difference only).
WHY = {
    "test_cast_FLOAT_to_BFLOAT16": "the executor rounds to nearest even (the ONNX spec, and ONNX Runtime); onnx "
                                   "1.12's expected values truncate the low 16 bits",
}


def import_model(model, feeds):
    try:
        g, _report = qairt.import_onnx(model.SerializeToString(), input_dims={k: list(v.shape) for k, v in feeds.items()})
        return g, ""
    except qairt.QairtError as e:
        msg = str(e)
        rep = getattr(e, "report", None)
        if rep:
            msg += " " + " | ".join(d.get("message", "") for d in rep.get("diagnostics", []) if isinstance(d, dict))
        return None, msg


def static_shapes(g):
    """False if some tensor's shape depends on a non-constant input (e.g. Reshape's shape)."""
    try:
        with qairt.Executor(g):
            return True
    except qairt.QairtError as e:
        return "not static" not in str(e)


def bf16_to_f32(a):
    return (a.astype(np.uint32) << 16).view(np.float32)


def run_case(case):
    model = case.model
    graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    results = []
    for inputs, outputs in case.data_sets:
        # numpy scalars (Clip's min/max, Range's start) are 0-d tensors.
        inputs = [np.asarray(a) if isinstance(a, np.generic) else a for a in inputs]
        outputs = [np.asarray(a) if isinstance(a, np.generic) else a for a in outputs]
        if any(not isinstance(a, np.ndarray) for a in list(inputs) + list(outputs)):
            return "out_of_scope", "sequence/optional inputs or outputs (no tensor type in the IR)"
        if any(a.dtype.kind in "OUSc" for a in list(inputs) + list(outputs)):
            return "out_of_scope", "string or complex tensors"
        feeds = dict(zip(graph_inputs, inputs))
        g, msg = import_model(model, feeds)
        if g is not None and not static_shapes(g):
            g.close()
            g, msg = None, "non-static shapes: parameter inputs must be constant"
        if g is None and "constant" in msg:
            # QNN-style graphs take shapes, axes, scales, ... as static tensors: run the case
            # again with every input read at an operand slot > 0 frozen into an initializer.
            frozen = {n.input[k] for n in model.graph.node for k in range(1, len(n.input))} & set(feeds)
            if frozen:
                m2 = onnx.ModelProto()
                m2.CopyFrom(model)
                keep = [i for i in m2.graph.input if i.name not in frozen]
                del m2.graph.input[:]
                m2.graph.input.extend(keep)
                for name in sorted(frozen):
                    m2.graph.initializer.append(onnx.numpy_helper.from_array(feeds.pop(name), name))
                g, msg2 = import_model(m2, feeds)
                FROZEN.add(case.name)
                msg = msg2 if g is None else msg
        if g is None:
            return classify_import_error(msg), "import: " + msg.replace("\n", " ")[:400]
        try:
            with qairt.Executor(g) as ex:
                ins = {}
                for spec in ex.inputs:
                    if spec.name not in feeds:
                        return "fail", "executor input '%s' has no data" % spec.name
                    ins[spec.name] = feeds[spec.name]
                got = ex.run(ins)
        except qairt.QairtError as e:
            return "fail", "run: " + str(e).replace("\n", " ")[:400]
        finally:
            g.close()
        rtol = getattr(case, "rtol", 1e-3) or 1e-3
        atol = getattr(case, "atol", 1e-7) or 1e-7
        # Outputs by position: the IR may name a graph output after the tensor it aliases.
        got_list = list(got.values())
        if len(got_list) != len(model.graph.output):
            return "fail", "%d outputs, expected %d" % (len(got_list), len(model.graph.output))
        for o, exp, val in zip(model.graph.output, outputs, got_list):
            exp = np.asarray(exp)
            if o.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16:
                exp = bf16_to_f32(exp)
            err = compare(o.name, exp, val, rtol, atol)
            if err:
                return "fail", err
        results.append(True)
    return "pass", ""


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-pass", type=float, default=0.97)
    ap.add_argument("--markdown", help="write the summary and the failure list here")
    ap.add_argument("-k", dest="filter", help="only cases whose name contains this")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args(argv)
    cases = collect()
    if args.filter:
        cases = [c for c in cases if args.filter in c.name]
    status = {}
    for case in cases:
        try:
            st, why = run_case(case)
        except Exception:  # a crash in the binding is a failure, not an abort of the suite
            st, why = "fail", "exception: " + traceback.format_exc().splitlines()[-1]
        status[case.name] = (st, why)
        if args.v or st in ("fail", "import_error"):
            print("%-60s %s %s" % (case.name, st, why[:300]))
    counts = {k: sum(1 for s, _ in status.values() if s == k) for k in ("pass", "fail", "import_error", "out_of_scope")}
    executed = counts["pass"] + counts["fail"]
    in_scope = executed + counts["import_error"]
    rate = counts["pass"] / executed if executed else 0.0
    broad = counts["pass"] / in_scope if in_scope else 0.0
    summary = ("ONNX node cases: %d total; %d out of scope (op not lowered / opset / non-tensor types); %d refused by "
               "the importer; %d executed: %d pass, %d fail -> executor pass rate %.2f%% (%.2f%% counting importer "
               "refusals as failures); %d cases ran with parameter inputs frozen into initializers"
               % (len(cases), counts["out_of_scope"], counts["import_error"], executed, counts["pass"], counts["fail"],
                  100 * rate, 100 * broad, len(FROZEN & {n for n, (st, _) in status.items() if st in ("pass", "fail")})))
    print(summary)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("# Executor: ONNX operator conformance\n\n")
            f.write("Generated by `tests/exec/onnx_conformance.py --markdown docs/exec-conformance.md` (the ctest entry "
                    "`exec_onnx_conformance` runs the same cases and fails below a 97%% executor pass rate) from the "
                    "backend node test cases of Debian's python3-onnx %s, at each case's tolerances (rtol 1e-3, atol "
                    "1e-7 by default).\n\n" % onnx.__version__)
            f.write("| cases | out of scope | refused by the importer | executed | pass | fail | executor pass rate | "
                    "pass rate incl. importer refusals |\n|---|---|---|---|---|---|---|---|\n")
            f.write("| %d | %d | %d | %d | %d | %d | %.2f%% | %.2f%% |\n\n" % (
                len(cases), counts["out_of_scope"], counts["import_error"], executed, counts["pass"], counts["fail"],
                100 * rate, 100 * broad))
            f.write("* **Out of scope**: the case uses an op the ONNX importer does not lower, an opset outside its "
                    "range (7-21), or sequence/optional/string tensors.\n"
                    "* **Refused by the importer**: every op is lowered in general but the importer rejects this "
                    "variant (an attribute value, a non-constant parameter even after freezing, a constant graph "
                    "output); these never reach the executor and are listed below with the importer's message.\n"
                    "* **Frozen parameters**: QNN-style graphs take shapes, axes, scales, pads, ... as static "
                    "tensors, so when an import fails because such an input is not constant, the case runs again "
                    "with every input read at an operand slot > 0 turned into an initializer holding the case's "
                    "data (%d executed cases).\n\n" % len(FROZEN & {n for n, (st, _) in status.items() if st in ("pass", "fail")}))
            for title, kind in (("Executor failures", "fail"), ("Refused by the importer", "import_error")):
                f.write("## %s\n\n| case | measured | why |\n|---|---|---|\n" % title)
                for name, (st, why) in sorted(status.items()):
                    if st == kind:
                        f.write("| %s | %s | %s |\n" % (name, why.replace("|", "\\|")[:300],
                                                      WHY.get(name, "importer limitation" if kind == "import_error" else "")))
                f.write("\n")
            f.write("## Out of scope\n\n")
            oos = sorted(n for n, (s, _) in status.items() if s == "out_of_scope")
            f.write(", ".join("`%s`" % n for n in oos) + "\n")
    return 0 if rate >= args.min_pass else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
