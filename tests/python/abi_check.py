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
