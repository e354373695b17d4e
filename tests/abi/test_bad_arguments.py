"""Calls every function of the C ABI with bad arguments and checks its rules.

The prototypes are read from include/qairt/*.h, so a function added later is
covered without editing this test. Each function is called with every
pointer argument NULL (handles, options, strings, buffers) and every number
0, except its out parameters (named out_*), which point to buffers filled
with a sentinel byte. The rules (include/qairt/qairt.h, "Errors"):

  - no crash, abort or exception for any argument (the process survives);
  - a function returning qairt_status_t* that fails leaves its out
    parameters untouched (the sentinel is intact);
  - a status carries a code and a non-empty message.

Run: QAIRT_LIBRARY=build/libqairt.so /usr/bin/python3 tests/abi/test_bad_arguments.py include/qairt
"""
import ctypes
import glob
import os
import re
import sys

SENTINEL = 0xA5
# qairt.h's documented exception: the import report explains a failed import,
# so these deliver out_report on failure too (their out_graph stays untouched).
REPORT_ON_FAILURE = {
    "qairt_import_onnx_file", "qairt_import_onnx_bytes", "qairt_import_tflite_file", "qairt_import_tflite_bytes",
}
OUT_BYTES = 512  # larger than any out struct


def prototypes(include_dir):
    protos = []
    for path in sorted(glob.glob(os.path.join(include_dir, "qairt*.h"))):
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        for m in re.finditer(r"QAIRT_API\s+([^;{]*?)\b(qairt_\w+)\s*\(([^;]*?)\)\s*;", text, flags=re.S):
            ret, name, params = " ".join(m.group(1).split()), m.group(2), " ".join(m.group(3).split())
            args = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
            protos.append((name, ret, args, os.path.basename(path)))
    return protos


def classify(param):
    """('out'|'ptr'|'int'|'float', name) for one C parameter."""
    if "(*" in param:
        return "ptr", re.search(r"\(\*\s*(\w+)", param).group(1)
    name = re.findall(r"(\w+)\s*(?:\[\])?$", param)[0]
    if "*" in param:
        return ("out" if name.startswith("out_") else "ptr"), name
    if re.search(r"\b(double|float)\b", param):
        return "float", name
    return "int", name


def ctype_for(kind, param):
    if kind in ("out", "ptr"):
        return ctypes.c_void_p
    if kind == "float":
        return ctypes.c_double
    if re.search(r"\b(int64_t|uint64_t|size_t)\b", param):
        return ctypes.c_uint64
    return ctypes.c_uint32


def main():
    include_dir = sys.argv[1] if len(sys.argv) > 1 else "include/qairt"
    lib = ctypes.CDLL(os.environ["QAIRT_LIBRARY"])
    # A second handle for the status helpers: the loop below sets argtypes on
    # every function of `calls`, these included.
    calls = ctypes.CDLL(os.environ["QAIRT_LIBRARY"])
    lib.qairt_status_message.restype = ctypes.c_char_p
    lib.qairt_status_message.argtypes = [ctypes.c_void_p]
    lib.qairt_status_code.restype = ctypes.c_int32
    lib.qairt_status_code.argtypes = [ctypes.c_void_p]
    lib.qairt_status_free.argtypes = [ctypes.c_void_p]

    protos = prototypes(include_dir)
    failures = []
    called = errors_checked = 0
    for name, ret, params, header in protos:
        fn = getattr(calls, name, None)
        if fn is None:
            failures.append("%s (%s): declared but not exported" % (name, header))
            continue
        kinds = [classify(p) for p in params]
        fn.argtypes = [ctype_for(k, p) for (k, _), p in zip(kinds, params)]
        returns_status = ret.replace(" ", "") == "qairt_status_t*"
        fn.restype = ctypes.c_void_p if ("*" in ret or returns_status) else (
            None if ret == "void" else ctypes.c_uint64)
        buffers, args = [], []
        for kind, _ in kinds:
            if kind == "out":
                buf = ctypes.create_string_buffer(bytes([SENTINEL]) * OUT_BYTES, OUT_BYTES)
                buffers.append(buf)
                args.append(ctypes.addressof(buf))
            elif kind == "float":
                args.append(0.0)
            else:
                args.append(None if kind == "ptr" else 0)
        result = fn(*args)  # a crash here fails the test (the process dies)
        called += 1
        if not returns_status or not result:
            continue  # success with only NULLs is allowed (defaults, queries)
        errors_checked += 1
        message = lib.qairt_status_message(result) or b""
        if lib.qairt_status_code(result) == 0 or not message.strip():
            failures.append("%s: error status without a code or message" % name)
        lib.qairt_status_free(result)
        for (kind, pname), buf in zip([k for k in kinds if k[0] == "out"], buffers):
            if name in REPORT_ON_FAILURE and pname == "out_report":
                continue
            if buf.raw != bytes([SENTINEL]) * OUT_BYTES:
                failures.append("%s: failed (%s) but wrote its out parameter %s"
                                % (name, message.decode(errors="replace"), pname))
    print("called %d functions from %d prototypes; %d failed as expected and were checked"
          % (called, len(protos), errors_checked))
    # The harness itself must have run: a header parse that finds nothing, or
    # a library that accepts NULL everywhere, is a failure too.
    if len(protos) < 150 or errors_checked < 80:
        failures.append("too few functions exercised (%d prototypes, %d errors)" % (len(protos), errors_checked))
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
