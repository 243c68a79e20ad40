"""Report bookkeeping trouble once per kind, as a warning that never breaks a tool call.

Each occurrence is also logged on the ``scarguard`` logger: the first of a kind at WARNING,
repeats at DEBUG (a store that is down would otherwise log every call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scarguard._warnings import warn
from scarguard.errors import ScarguardWarning
from scarguard.telemetry import bookkeeping

if TYPE_CHECKING:
    from scarguard.guard.tally import Tally

__all__ = ["TROUBLE", "Reporter", "exception_text"]

TROUBLE = {
    "check": "check the call (it ran unguarded)",
    "refused": "check the call (it was refused: fail_closed=True)",
    "record": "record the outcome (the result went to the caller unchanged)",
    "failure_when": "apply failure_when (the result was taken as a success)",
    "targets": "compute the targets (the call was checked without them)",
}
"""What could not be done, by phase, as the warning says it."""


def exception_text(exc: BaseException) -> str:
    """Return ``"TypeName: message"``, even for an exception whose ``__str__`` raises."""
    try:
        message = str(exc)
    except Exception:
        message = "<unprintable>"
    if len(message) > 500:
        message = message[:500] + "…"
    return f"{type(exc).__name__}: {message}"


class Reporter:
    """Warn about bookkeeping trouble once per phase and exception type.

    Args:
        name: The tool the trouble is about.
        fail_closed: Whether a failed check refuses the call (the warning says so).
        tally: Counts each trouble as a bookkeeping error, if given.
    """

    def __init__(self, name: str, *, fail_closed: bool = False, tally: Tally | None = None) -> None:
        self.name = name
        self.fail_closed = fail_closed
        self.tally = tally
        self._warned: set[tuple[str, str]] = set()

    def __call__(self, phase: str, exc: BaseException) -> None:
        """Count the trouble and warn about it if this kind is new.

        Args:
            phase: ``check``, ``record``, ``failure_when`` or ``targets``.
            exc: What went wrong.
        """
        if self.tally is not None:
            self.tally.bump("bookkeeping_errors")
        key = (phase, type(exc).__name__)
        first = key not in self._warned
        what = TROUBLE["refused" if phase == "check" and self.fail_closed else phase]
        message = f"scarguard could not {what} of tool {self.name!r}: {exception_text(exc)}"
        # logged every time (the first at WARNING, repeats at DEBUG), warned about once
        bookkeeping(message, self.name, None, exc, repeat=not first)
        if not first:
            return
        self._warned.add(key)
        # never raised, even under -W error: a warning must not replace the call or its result
        warn(message, ScarguardWarning, stacklevel=4, logged=True)
