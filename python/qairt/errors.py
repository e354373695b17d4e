"""Exceptions raised by the qairt binding: one class per qairt_code."""

OK = 0
INVALID_ARGUMENT = 1
NOT_FOUND = 2
UNSUPPORTED = 3
PARSE_ERROR = 4
OUT_OF_MEMORY = 5
INTERNAL = 6
VALIDATION_FAILED = 7
IO_ERROR = 8
BUFFER_TOO_SMALL = 9

CODE_NAMES = {
    OK: "ok",
    INVALID_ARGUMENT: "invalid_argument",
    NOT_FOUND: "not_found",
    UNSUPPORTED: "unsupported",
    PARSE_ERROR: "parse_error",
    OUT_OF_MEMORY: "out_of_memory",
    INTERNAL: "internal",
    VALIDATION_FAILED: "validation_failed",
    IO_ERROR: "io_error",
    BUFFER_TOO_SMALL: "buffer_too_small",
}


class QairtError(Exception):
    """An error reported by libqairt (a non-NULL qairt_status_t*).

    Attributes:
        code: the qairt_code value (int).
        code_name: its lower-case name, e.g. "invalid_argument".
        message: the library's message (names the file/tensor/op/field at fault).
        function: the C function that failed, if known.
    """

    default_code = INTERNAL

    def __init__(self, message, code=None, function=None):
        super().__init__(message)
        self.message = message
        self.code = self.default_code if code is None else code
        self.code_name = CODE_NAMES.get(self.code, "unknown(%d)" % self.code)
        self.function = function

    def __str__(self):
        return self.message


class InvalidArgumentError(QairtError, ValueError):
    default_code = INVALID_ARGUMENT


class NotFoundError(QairtError, LookupError):
    default_code = NOT_FOUND


class UnsupportedError(QairtError):
    default_code = UNSUPPORTED


class ParseError(QairtError, ValueError):
    default_code = PARSE_ERROR


class OutOfMemoryError(QairtError, MemoryError):
    default_code = OUT_OF_MEMORY


class InternalError(QairtError):
    default_code = INTERNAL


class ValidationError(QairtError):
    """The graph or an encoding is inconsistent.

    ``diagnostics`` lists every problem (qairt.Diagnostic objects) when the
    error comes from Graph.validate(); it is empty for other calls (e.g. a
    rejected set_encoding, whose message names the tensor and field).
    """

    default_code = VALIDATION_FAILED

    def __init__(self, message, code=None, function=None, diagnostics=None):
        super().__init__(message, code, function)
        self.diagnostics = list(diagnostics or [])


class IoError(QairtError, OSError):
    default_code = IO_ERROR

    def __init__(self, message, code=None, function=None):
        QairtError.__init__(self, message, code, function)

    def __str__(self):
        return self.message


class BufferTooSmallError(QairtError):
    default_code = BUFFER_TOO_SMALL


_BY_CODE = {
    INVALID_ARGUMENT: InvalidArgumentError,
    NOT_FOUND: NotFoundError,
    UNSUPPORTED: UnsupportedError,
    PARSE_ERROR: ParseError,
    OUT_OF_MEMORY: OutOfMemoryError,
    INTERNAL: InternalError,
    VALIDATION_FAILED: ValidationError,
    IO_ERROR: IoError,
    BUFFER_TOO_SMALL: BufferTooSmallError,
}


def from_code(code, message, function=None):
    """The exception for a status code (unknown codes give a plain QairtError)."""
    cls = _BY_CODE.get(code, QairtError)
    return cls(message, code=code, function=function)
