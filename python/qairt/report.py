"""The HTML report of a converted model (include/qairt/qairt_report.h)::

    import qairt
    # of a conversion, with per-op accuracy on the evaluation samples:
    qairt.convert("model.onnx", "htp_v73", "model.qairt", input_list="calib/input_list.txt", report="model.html")
    # of a container, later, with per-op accuracy against the float model:
    float_graph, _ = qairt.import_onnx("model.onnx")
    qairt.report.write("model.qairt", "model.html", float_graph=float_graph, compare="calib/input_list.txt")

One self-contained HTML file (no network): the graph top to bottom with ops
coloured by precision, converts and float fallbacks marked, super groups
outlined; clicking an op shows its encodings, kernel and reasons; per-op SQNR
against float when samples are compared; the stats summary and the options.
Each op is an element with ``data-op="<op name>"``.

Needs libqairt ABI 1.9; with an older library the functions raise
UnsupportedError.
"""
import ctypes
import os
from ctypes import POINTER, c_char_p, c_size_t, c_uint32, c_void_p
from typing import Callable, Optional, Union

from . import _ffi, calib, errors
from .graph import Graph

ABI_MINOR = 9


class HtmlReportOptions(ctypes.Structure):
    """qairt_html_report_options (qairt_report.h), field for field."""
    _fields_ = [
        ("struct_size", c_uint32), ("flags", c_uint32), ("title", c_char_p), ("container", _ffi.ContainerP),
        ("process", c_void_p), ("accuracy", calib.CompareP), ("sensitivity", c_void_p),
        ("diagnostics", _ffi.DiagnosticsP), ("target_name", c_char_p),
    ]


_DECLS = [
    ("qairt_html_report_options_init", None, [POINTER(HtmlReportOptions)]),
    ("qairt_html_report_render", _ffi.StatusP,
     [_ffi.GraphP, POINTER(HtmlReportOptions), c_char_p, c_size_t, POINTER(c_size_t)]),
    ("qairt_html_report_write_file", _ffi.StatusP, [_ffi.GraphP, POINTER(HtmlReportOptions), c_char_p]),
]
DECLARED = tuple(d[0] for d in _DECLS)
_fn = None


def _functions():
    global _fn
    if _fn is None:
        _fn = _ffi._declare_header(_DECLS, "qairt.report", "qairt_report.h", ABI_MINOR)
    return _fn


def _run(model, float_graph, compare, title, progress, emit):
    """Loads what `model` names, compares if asked, and calls emit(graph_handle, options)."""
    fn = _functions()
    if (float_graph is None) != (compare is None):
        raise errors.InvalidArgumentError("float_graph and compare go together: the samples run through both models",
                                          code=errors.INVALID_ARGUMENT)
    if float_graph is not None and not isinstance(float_graph, Graph):
        raise errors.InvalidArgumentError("float_graph must be a qairt.Graph, got %s" % type(float_graph).__name__,
                                          code=errors.INVALID_ARGUMENT)
    o = HtmlReportOptions()
    fn["qairt_html_report_options_init"](ctypes.byref(o))
    container = _ffi.ContainerP()
    graph = _ffi.GraphP()
    owned_graph = False
    cmp = calib.CompareP()
    try:
        if isinstance(model, Graph):
            handle = model.handle
        elif isinstance(model, (str, bytes, os.PathLike)):
            _ffi.qairt_container_load_file(os.fsencode(model), ctypes.byref(container))
            _ffi.qairt_container_get_graph(container, ctypes.byref(graph))
            owned_graph = True
            handle = graph
            o.container = container
            if title is None:
                title = os.fsdecode(model)
        else:
            raise errors.InvalidArgumentError("model must be a .qairt path or a qairt.Graph, got %s"
                                              % type(model).__name__, code=errors.INVALID_ARGUMENT)
        if compare is not None:
            callback = calib._progress_fn(progress)
            calib._fn["qairt_compare_input_list_progress"](float_graph.handle, handle, os.fsencode(compare),
                                                           calib.COMPARE_PER_LAYER, callback, None, ctypes.byref(cmp))
            o.accuracy = cmp
        o.title = _ffi.encode(title)
        return emit(fn, handle, o)
    finally:
        if cmp:
            calib._fn["qairt_compare_report_destroy"](cmp)
        if owned_graph:
            _ffi.qairt_graph_destroy(graph)
        if container:
            _ffi.qairt_container_destroy(container)


def render(model: Union[str, "os.PathLike[str]", Graph], *, float_graph: Optional[Graph] = None,
           compare: Optional[Union[str, "os.PathLike[str]"]] = None, title: Optional[str] = None,
           progress: Optional[Callable[[str, int, int], None]] = None) -> str:
    """The report as a string. model: a .qairt container path (its graph, kernels, reasons, options and
    stats) or a qairt.Graph (the graph and its encodings). float_graph + compare (an input_list): per-op
    accuracy against the float model. title: the heading (default: the container path or graph name)."""
    def emit(fn, handle, o):
        n = c_size_t()
        fn["qairt_html_report_render"](handle, ctypes.byref(o), None, 0, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value + 1)
        fn["qairt_html_report_render"](handle, ctypes.byref(o), buf, n.value + 1, ctypes.byref(n))
        return buf.raw[:n.value].decode("utf-8")
    return _run(model, float_graph, compare, title, progress, emit)


def write(model: Union[str, "os.PathLike[str]", Graph], output: Union[str, "os.PathLike[str]"], *,
          float_graph: Optional[Graph] = None, compare: Optional[Union[str, "os.PathLike[str]"]] = None,
          title: Optional[str] = None, progress: Optional[Callable[[str, int, int], None]] = None) -> None:
    """Writes the report (see render) to `output` atomically: on error nothing is left there."""
    path = os.fsencode(output)
    return _run(model, float_graph, compare, title, progress,
                lambda fn, handle, o: fn["qairt_html_report_write_file"](handle, ctypes.byref(o), path))
