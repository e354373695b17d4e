"""Quantization encodings files (include/qairt/qairt_encodings.h) from Python.

Reads QAIRT 2.0.0, AIMET 1.0.0 and AIMET 0.4/0.5/0.6.1 files, applies them to
a graph and writes 2.0.0, 1.0.0 or 0.6.1::

    import qairt
    g, report = qairt.import_onnx("model.onnx")
    enc = qairt.Encodings.load("overrides.json")      # version detected
    diags = enc.apply(g, keep_going=True)              # list of EncodingsDiagnostic
    for d in diags:
        print(d)                                       # file:line:col: error: ...
    text = qairt.Encodings.write(graph=g, version="0.6.1")

(tests/python/test_encodings.py runs this example.)

Every problem is an ``EncodingsDiagnostic`` (severity, code, file, line,
column, tensor, field, message, suggestion). Loading raises ``ParseError``
when the file is not JSON or not an encodings document (the diagnostics are
on the exception as ``.diagnostics``); bad entries are dropped and reported
unless ``strict=True``.
"""

import ctypes
import os
from dataclasses import dataclass
from typing import List, Optional

from . import _ffi, errors

__all__ = ["Encodings", "EncodingsDiagnostic", "VERSIONS", "DECLARED"]

_P = ctypes.POINTER
c_size_t, c_uint32, c_uint64, c_int32, c_char_p, c_void_p = (ctypes.c_size_t, ctypes.c_uint32, ctypes.c_uint64,
                                                             ctypes.c_int32, ctypes.c_char_p, ctypes.c_void_p)


class EncodingsHandle(ctypes.Structure):
    """Opaque qairt_encodings_t."""


# qairt_encodings_diagnostics_t is the library's one diagnostics list
# (qairt_diagnostics_t): one ctypes type for both.
EncodingsDiagnosticsHandle = _ffi.DiagnosticsHandle
EncodingsP = _P(EncodingsHandle)
DiagsP = _ffi.DiagnosticsP


class DiagnosticC(ctypes.Structure):
    _fields_ = [
        ("struct_size", c_uint32), ("severity", c_uint32), ("line", c_uint32), ("column", c_uint32),
        ("byte_offset", c_uint64), ("code", c_char_p), ("file", c_char_p), ("tensor", c_char_p),
        ("field", c_char_p), ("message", c_char_p), ("suggestion", c_char_p),
    ]


class LoadOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("version", c_uint32), ("max_depth", c_uint32),
                ("max_bytes", c_uint64)]


class ApplyOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32)]


class WriteOptions(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("flags", c_uint32), ("version", c_uint32), ("reserved", c_uint32)]


LOAD_STRICT = 1
APPLY_ALLOW_UNMATCHED, APPLY_KEEP_GOING, APPLY_NO_MISSING_NOTE = 1, 2, 4
VERSIONS = {"auto": 0, "0.6.1": 1, "1.0.0": 2, "2.0.0": 3}
_VERSION_NAMES = {v: k for k, v in VERSIONS.items()}
_FORMATS = {"text": 1, "json": 2, "sarif": 3}
_SEVERITIES = {1: "error", 2: "warning", 3: "note"}

_DECLS = [
    ("qairt_encodings_diagnostics_create", _ffi.StatusP, [_P(DiagsP)]),
    ("qairt_encodings_diagnostics_destroy", None, [DiagsP]),
    ("qairt_encodings_diagnostics_count", c_size_t, [DiagsP]),
    ("qairt_encodings_diagnostics_count_severity", c_size_t, [DiagsP, c_uint32]),
    ("qairt_encodings_diagnostics_get", _ffi.StatusP, [DiagsP, c_size_t, _P(DiagnosticC)]),
    ("qairt_encodings_diagnostics_render", _ffi.StatusP, [DiagsP, c_uint32, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_encodings_diagnostics_clear", None, [DiagsP]),
    ("qairt_encodings_load_options_init", None, [_P(LoadOptions)]),
    ("qairt_encodings_load_file", _ffi.StatusP, [c_char_p, _P(LoadOptions), DiagsP, _P(EncodingsP)]),
    ("qairt_encodings_load_bytes", _ffi.StatusP,
     [c_void_p, c_size_t, c_char_p, _P(LoadOptions), DiagsP, _P(EncodingsP)]),
    ("qairt_encodings_destroy", None, [EncodingsP]),
    ("qairt_encodings_version", c_uint32, [EncodingsP]),
    ("qairt_encodings_entry_count", c_size_t, [EncodingsP]),
    ("qairt_encodings_entry_name", c_char_p, [EncodingsP, c_size_t]),
    ("qairt_encodings_entry_encoding", _ffi.StatusP, [EncodingsP, c_size_t, _P(_ffi.EncodingP)]),
    ("qairt_encodings_apply_options_init", None, [_P(ApplyOptions)]),
    ("qairt_encodings_apply", _ffi.StatusP, [EncodingsP, _ffi.GraphP, _P(ApplyOptions), DiagsP]),
    ("qairt_encodings_write_options_init", None, [_P(WriteOptions)]),
    ("qairt_encodings_write_bytes", _ffi.StatusP,
     [EncodingsP, _ffi.GraphP, _P(WriteOptions), DiagsP, c_char_p, c_size_t, _P(c_size_t)]),
    ("qairt_encodings_write_file", _ffi.StatusP, [EncodingsP, _ffi.GraphP, c_char_p, _P(WriteOptions), DiagsP]),
]

# Since ABI 1.17, resolved on first use.
_DECLS_1_17 = [
    ("qairt_encodings_apply_file", _ffi.StatusP, [c_char_p, _P(LoadOptions), _ffi.GraphP, _P(ApplyOptions), DiagsP]),
]

# Names of the functions of qairt_encodings.h declared here (tests compare them
# with the header and capi/encodings.exports).
DECLARED = tuple(d[0] for d in _DECLS + _DECLS_1_17)
_fn_1_17 = {}


def _functions_1_17():
    if not _fn_1_17:
        _fn_1_17.update(_ffi._declare_header(_DECLS_1_17, "Encodings.apply_file", "qairt_encodings.h", 17))
    return _fn_1_17

try:
    _fn = {name: _ffi._declare(name, restype, argtypes) for name, restype, argtypes in _DECLS}
except AttributeError as _e:
    raise ImportError("qairt: %s does not export the encodings API of qairt_encodings.h: %s"
                      % (_ffi.library_path, _e)) from None


@dataclass
class EncodingsDiagnostic:
    """One problem in an encodings file or in applying it.

    severity: "error" | "warning" | "note"; code: stable rule id (e.g.
    "unknown-tensor"); line/column: 1-based (0 = no location).
    """

    severity: str
    code: str
    file: str
    line: int
    column: int
    tensor: str
    field: str
    message: str
    suggestion: str = ""

    def __str__(self):
        loc = self.file or "<encodings>"
        if self.line:
            loc += ":%d:%d" % (self.line, self.column)
        s = "%s: %s: " % (loc, self.severity)
        if self.tensor:
            s += "tensor '%s': " % self.tensor
        if self.field:
            s += "field '%s': " % self.field
        s += self.message
        if self.suggestion:
            s += " (did you mean '%s'?)" % self.suggestion
        return s


class _Diags:
    """Owns a qairt_encodings_diagnostics_t."""

    def __init__(self):
        self.h = DiagsP()
        _fn["qairt_encodings_diagnostics_create"](ctypes.byref(self.h))

    def close(self):
        if self.h:
            _fn["qairt_encodings_diagnostics_destroy"](self.h)
            self.h = DiagsP()

    def __del__(self):
        self.close()

    def items(self) -> List[EncodingsDiagnostic]:
        out = []
        d = DiagnosticC()
        for i in range(_fn["qairt_encodings_diagnostics_count"](self.h)):
            ctypes.memset(ctypes.byref(d), 0, ctypes.sizeof(d))
            d.struct_size = ctypes.sizeof(d)
            _fn["qairt_encodings_diagnostics_get"](self.h, i, ctypes.byref(d))
            dec = _ffi.decode
            out.append(EncodingsDiagnostic(
                severity=_SEVERITIES.get(d.severity, "unknown"), code=dec(d.code), file=dec(d.file), line=d.line,
                column=d.column, tensor=dec(d.tensor), field=dec(d.field), message=dec(d.message),
                suggestion=dec(d.suggestion)))
        return out

    def render(self, fmt="text") -> str:
        code = _FORMATS.get(fmt)
        if code is None:
            raise errors.InvalidArgumentError("format must be one of %s, got %r" % (", ".join(_FORMATS), fmt))
        n = c_size_t(0)
        _fn["qairt_encodings_diagnostics_render"](self.h, code, None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        _fn["qairt_encodings_diagnostics_render"](self.h, code, buf, n.value + 1, ctypes.byref(n))
        return buf.raw[:n.value].decode("utf-8")


def _version_code(version) -> int:
    code = VERSIONS.get(version)
    if code is None:
        raise errors.InvalidArgumentError("version must be one of %s, got %r" % (", ".join(VERSIONS), version))
    return code


def _attach(exc, diags):
    exc.diagnostics = diags.items()
    return exc


class Encodings:
    """A loaded encodings file (immutable; may be shared between threads).

    ``diagnostics`` holds the warnings and dropped-entry errors of the load.
    """

    def __init__(self, handle, diagnostics):
        self._h = handle
        self.diagnostics = diagnostics

    # -- loading ------------------------------------------------------------
    @staticmethod
    def _load_options(version, strict, max_bytes):
        opts = LoadOptions()
        _fn["qairt_encodings_load_options_init"](ctypes.byref(opts))
        opts.version = _version_code(version)
        opts.flags = LOAD_STRICT if strict else 0
        opts.max_bytes = int(max_bytes or 0)
        return opts

    @staticmethod
    def _apply_options(allow_unmatched, keep_going, report_missing):
        opts = ApplyOptions()
        _fn["qairt_encodings_apply_options_init"](ctypes.byref(opts))
        opts.flags = ((APPLY_ALLOW_UNMATCHED if allow_unmatched else 0) | (APPLY_KEEP_GOING if keep_going else 0)
                      | (0 if report_missing else APPLY_NO_MISSING_NOTE))
        return opts

    @classmethod
    def _load(cls, call, version, strict, max_bytes):
        opts = cls._load_options(version, strict, max_bytes)
        diags = _Diags()
        h = EncodingsP()
        try:
            call(ctypes.byref(opts), diags.h, ctypes.byref(h))
        except errors.QairtError as e:
            raise _attach(e, diags)
        return cls(h, diags.items())

    @classmethod
    def load(cls, path, version="auto", strict=False, max_bytes=0) -> "Encodings":
        """Loads a file; raises IoError / ParseError (with ``.diagnostics``)."""
        p = _ffi.encode(os.fspath(path))
        return cls._load(lambda o, d, out: _fn["qairt_encodings_load_file"](p, o, d, out), version, strict, max_bytes)

    @classmethod
    def loads(cls, data, name="<bytes>", version="auto", strict=False, max_bytes=0) -> "Encodings":
        """Loads from ``bytes`` or ``str`` (UTF-8)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray)):
            raise errors.InvalidArgumentError("loads needs bytes or str, got %s" % type(data).__name__)
        buf = ctypes.create_string_buffer(bytes(data), len(data))
        n = _ffi.encode(name)
        return cls._load(lambda o, d, out: _fn["qairt_encodings_load_bytes"](buf, len(data), n, o, d, out),
                         version, strict, max_bytes)

    def close(self):
        if self._h:
            _fn["qairt_encodings_destroy"](self._h)
            self._h = EncodingsP()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- contents ---------------------------------------------------------------
    @property
    def version(self) -> str:
        return _VERSION_NAMES.get(_fn["qairt_encodings_version"](self._h), "auto")

    def __len__(self):
        return _fn["qairt_encodings_entry_count"](self._h)

    def names(self) -> List[str]:
        return [_ffi.decode(_fn["qairt_encodings_entry_name"](self._h, i)) for i in range(len(self))]

    def encoding(self, index_or_name):
        """The entry's encoding as read (a qairt.Encoding)."""
        from . import Encoding
        if isinstance(index_or_name, str):
            names = self.names()
            if index_or_name not in names:
                raise errors.NotFoundError("no entry named %r" % index_or_name)
            index = names.index(index_or_name)
        else:
            index = int(index_or_name)
        h = _ffi.EncodingP()
        _fn["qairt_encodings_entry_encoding"](self._h, index, ctypes.byref(h))
        try:
            return Encoding._from_handle(h)
        finally:
            _ffi.qairt_encoding_destroy(h)

    # -- applying -----------------------------------------------------------------
    def apply(self, graph, allow_unmatched=False, keep_going=False, report_missing=True) -> List[EncodingsDiagnostic]:
        """Applies the entries to ``graph`` (overrides win over Q-DQ encodings).

        Returns the diagnostics; raises ValidationError (with ``.diagnostics``)
        if any is an error. Without keep_going the graph is then unchanged.
        """
        opts = self._apply_options(allow_unmatched, keep_going, report_missing)
        diags = _Diags()
        try:
            _fn["qairt_encodings_apply"](self._h, graph.handle, ctypes.byref(opts), diags.h)
        except errors.QairtError as e:
            raise _attach(e, diags)
        return diags.items()

    @classmethod
    def apply_file(cls, path, graph, version="auto", strict=False, max_bytes=0, allow_unmatched=False,
                   keep_going=False, report_missing=True) -> List[EncodingsDiagnostic]:
        """``load(path, ...)`` then ``apply(graph, ...)`` in one call (libqairt ABI 1.17): the same graph,
        diagnostics and exceptions; a large file's entries are applied as they are read, never all held
        in memory. Returns the diagnostics of both steps."""
        fn = _functions_1_17()["qairt_encodings_apply_file"]
        load = cls._load_options(version, strict, max_bytes)
        apply = cls._apply_options(allow_unmatched, keep_going, report_missing)
        diags = _Diags()
        try:
            fn(_ffi.encode(os.fspath(path)), ctypes.byref(load), graph.handle, ctypes.byref(apply), diags.h)
        except errors.QairtError as e:
            raise _attach(e, diags)
        return diags.items()

    # -- writing --------------------------------------------------------------------
    @staticmethod
    def _write(encodings, graph, version, path):
        opts = WriteOptions()
        _fn["qairt_encodings_write_options_init"](ctypes.byref(opts))
        opts.version = _version_code(version)
        eh = encodings._h if encodings is not None else None
        gh = graph.handle if graph is not None else None
        if eh is None and gh is None:
            raise errors.InvalidArgumentError("write needs encodings, a graph or both")
        diags = _Diags()
        try:
            if path is not None:
                _fn["qairt_encodings_write_file"](eh, gh, _ffi.encode(os.fspath(path)), ctypes.byref(opts), diags.h)
                return None
            n = c_size_t(0)
            _fn["qairt_encodings_write_bytes"](eh, gh, ctypes.byref(opts), diags.h, None, 0, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value + 1)
            _fn["qairt_encodings_write_bytes"](eh, gh, ctypes.byref(opts), None, buf, n.value + 1, ctypes.byref(n))
            return buf.raw[:n.value].decode("utf-8")
        except errors.QairtError as e:
            raise _attach(e, diags)

    def dumps(self, version="2.0.0", graph=None) -> str:
        """This file as ``version`` (with ``graph``, axes and block shapes come from its tensors)."""
        return Encodings._write(self, graph, version, None)

    def dump(self, path, version="2.0.0", graph=None) -> None:
        """Writes atomically to ``path``; on error the path is untouched."""
        Encodings._write(self, graph, version, path)

    @staticmethod
    def write(graph, version="2.0.0", path=None) -> Optional[str]:
        """Every encoding of ``graph`` as ``version``: the text, or written to ``path``."""
        return Encodings._write(None, graph, version, path)

    def __repr__(self):
        if not self._h:
            return "<qairt.Encodings (closed)>"
        return "<qairt.Encodings %s: %d entries>" % (self.version, len(self))


def render_diagnostics(diagnostics: List[EncodingsDiagnostic]) -> str:
    """Text form of diagnostics, one per line."""
    return "".join(str(d) + "\n" for d in diagnostics)
