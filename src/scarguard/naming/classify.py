"""Understanding an error: its text, exception types and status code, then its signature.

Exceptions are read as ``"TypeName: message"`` plus the names of their classes (most specific
first) and any HTTP status code they carry (``.status_code``, ``.response.status_code``), so
an SDK's ``RateLimitError`` and a plain ``"429 Too Many Requests"`` string classify alike.
A process error that captured its output (``subprocess.run(..., capture_output=True,
check=True)``) reads as its message and then the last 2,000 characters of its stderr (of its
stdout when stderr is empty: pytest reports there): they say what failed (``No rule to make
target``, ``FAILED tests/test_a.py::test_x``). Tracebacks are never formatted here: this
runs on the failure path of every tool call.
"""

from __future__ import annotations

import attrs

from scarguard.model import Blame
from scarguard.naming._signature import Signature

__all__ = ["Classification", "error_parts"]

_OUTPUT_TAIL = 2000
"""The end of a process error's captured output that its text keeps (the result's bound)."""


@attrs.frozen
class Classification:
    """How an error is understood before anything is recorded.

    Attributes:
        signature: The matching signature (or the fallback for unrecognised errors).
        blame: Who is to blame.
        retry_after: Seconds the error asks to wait before retrying, if it says.
    """

    signature: Signature
    blame: Blame
    retry_after: float | None


def error_parts(
    error: str | BaseException | None,
) -> tuple[str | None, tuple[str, ...], int | None]:
    """Return the text, exception type names (most specific first) and a status code."""
    if error is None or isinstance(error, str):
        return error, (), None
    kinds = tuple(c.__name__ for c in type(error).__mro__ if c not in (object, BaseException))
    status = getattr(error, "status_code", None)
    if not isinstance(status, int):
        status = getattr(getattr(error, "response", None), "status_code", None)
    try:
        message = str(error)
    except Exception:  # an exception that cannot print itself is still a failure to record
        message = ""
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    output = _captured_output(error)
    if output:
        text += f"\n{output[-_OUTPUT_TAIL:]}"
    return text, kinds, status if isinstance(status, int) else None


def _captured_output(error: BaseException) -> str | None:
    """Return what a process error (it has a ``returncode``) captured: stderr, else stdout."""
    try:
        if not hasattr(error, "returncode"):
            return None
        for name in ("stderr", "stdout"):
            output = getattr(error, name, None)
            if isinstance(output, bytes):
                output = output.decode("utf-8", "replace")
            if isinstance(output, str) and output.strip():
                return output
    except Exception:  # an exception whose attributes fail is still a failure to record
        return None
    return None
