"""Shared checks of the C boundary for the Python tests: the functions a
header declares and the symbols an export list names (not a test module:
`unittest discover` puts this folder on sys.path)."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def header_functions(header, status_only=False):
    """Functions include/qairt/HEADER declares (only those returning
    qairt_status_t* with status_only)."""
    with open(os.path.join(REPO, "include", "qairt", header)) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    pattern = r"QAIRT_API\s+qairt_status_t\*\s*(qairt_\w+)\s*\(" if status_only else r"QAIRT_API[^;(]*?\b(qairt_\w+)\s*\("
    return set(re.findall(pattern, text))


def exported_symbols(exports):
    """Symbols capi/EXPORTS lists."""
    with open(os.path.join(REPO, "capi", exports)) as f:
        return {line.strip() for line in f if line.startswith("qairt_")}


def assert_declared_matches(test, header, exports, declared):
    """The binding declares exactly what the header declares and the library exports."""
    test.assertEqual(header_functions(header), set(declared))
    test.assertEqual(exported_symbols(exports), set(declared))


def assert_layouts_match_c(test, headers, structs):
    """sizeof/offsetof of each C struct (name -> ctypes class), compiled as
    C99 against include/qairt/HEADERS, equal the ctypes layout. Skips without
    a C compiler (fails under QAIRT_TEST_STRICT)."""
    import ctypes
    import shutil
    import subprocess
    import tempfile
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        if os.environ.get("QAIRT_TEST_STRICT"):
            test.fail("no C compiler (cc/gcc) for the layout check")
        test.skipTest("no C compiler")
    lines = ["#include <stdio.h>", "#include <stddef.h>"]
    lines += ['#include "qairt/%s"' % h for h in headers]
    lines.append("int main(void) {")
    expected = []
    for cname, cls in structs.items():
        lines.append('printf("%%zu\\n", sizeof(%s));' % cname)
        expected.append(ctypes.sizeof(cls))
        for fname, _ in cls._fields_:
            lines.append('printf("%%zu\\n", offsetof(%s, %s));' % (cname, fname))
            expected.append(getattr(cls, fname).offset)
    lines += ["return 0;", "}"]
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        r = subprocess.run([cc, "-std=c99", "-Wall", "-pedantic", "-Werror", "-I", os.path.join(REPO, "include"),
                            src, "-o", exe], capture_output=True, text=True, timeout=120)
        test.assertEqual(r.returncode, 0, r.stderr)
        out = subprocess.run([exe], capture_output=True, text=True, timeout=60).stdout.split()
    test.assertEqual([int(x) for x in out], expected)
