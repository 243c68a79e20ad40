"""No-progress loops: the identical call returning the identical result, nothing changed.

An agent that reads the same file a thousand times, or asks for the same status again and
again, fails nothing, so no failure rule sees it. This module counts, per call fingerprint,
how many times in a row the call returned the identical result (an identity of what
``record(..., result=...)`` was given, see :func:`result_digest`), and forgets the count when
anything suggests the world changed: a different result, a failure of the call, or any
successful mutating call (an edit, a write, a shell command other than a reader such as
``cat``). Other arguments are other fingerprints, so pagination never counts.

From :attr:`Policy.loop_warn` repeats the call carries a warning; from
:attr:`Policy.loop_block` (opt-in: polling legitimately returns the same status) it is
refused. The counts live in the memory of one process and are never stored: a loop is a
property of one session.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Hashable
from typing import Any

import attrs

from scarguard.model import Call, Constraint, ConstraintKind, Level, Violation
from scarguard.policy import Policy

__all__ = ["LOOP_SIGNATURE", "NO_RESULT", "ProgressTracker", "may_change", "result_digest"]


class _NoResult(enum.Enum):
    NO_RESULT = "no result"


NO_RESULT = _NoResult.NO_RESULT
"""What ``record(..., result=)`` defaults to: no result was given (``None`` is a result)."""

LOOP_SIGNATURE = "no_progress"
"""The signature name no-progress warnings and refusals carry."""
_HINT = (
    "Use what the call already returned, or change something first (the arguments, the code, "
    "the workspace) instead of repeating it."
)
_ENTRIES = 1024
"""Calls whose latest result is remembered, per memory (least recently used dropped first)."""


_READERS = frozenset(
    {"cat", "head", "tail", "less", "more", "ls", "tree", "find", "grep", "rg", "ag", "wc",
     "pwd", "echo", "stat", "file", "du", "df", "ps", "which", "env", "printenv", "date"}
)
"""Programs whose runs change nothing; any other shell command may change the workspace."""
_SHELL_ARGS = ("command", "cmd", "script")


def may_change(call: Call, mutating: bool) -> bool:
    """Return whether a successful call may have changed what other calls return.

    Mutating calls do; so does a shell command unless it only runs a reader (``cat``,
    ``ls``, ``grep``...): a script, a build or a generator can change any file without naming
    it, and a missed warning costs less than a false one.
    """
    if mutating:
        return True
    if call.action_class != "shell_exec":
        return False
    for key in _SHELL_ARGS:
        command = call.args.get(key)
        if isinstance(command, str):
            words = command.split()
            return not words or words[0].rsplit("/", 1)[-1] not in _READERS or any(
                sep in command for sep in ("|", ";", "&", ">", "`", "$(")
            )
    return True


def result_digest(result: Any) -> Hashable | None:
    """Return a cheap identity of a tool's result, or ``None`` when it cannot be taken.

    Text and bytes are hashed whole; anything else through its ``repr`` (so an object whose
    ``repr`` shows a memory address never matches another: a missed loop, never a false
    one). The identity lives in this process only and is never stored, so Python's own
    hashing (the string hash is cached on the object) is enough and costs almost nothing.
    """
    try:
        if isinstance(result, str):
            return ("s", len(result), hash(result))
        if isinstance(result, (bytes, bytearray, memoryview)):
            data = bytes(result)
            return ("b", len(data), hash(data))
        text = repr(result)
        return ("r", len(text), hash(text))
    except Exception:  # an unprintable result must never break the call that returned it
        return None


@attrs.define
class _Run:
    digest: Hashable
    count: int
    since: float


def _clock_time(at: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(at))


class ProgressTracker:
    """Count identical results of identical calls, and say when one is looping.

    Args:
        policy: Supplies ``loop_warn`` and ``loop_block``.
    """

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self._runs: dict[str, _Run] = {}
        self._hot = 0
        """How many remembered calls are at or over ``loop_warn`` (0: nothing to check)."""

    @property
    def hot(self) -> bool:
        """Whether any call is looping now (lets ``check`` skip the lookup otherwise)."""
        return self._hot > 0

    def returned(self, fingerprint: str, digest: Hashable, now: float) -> int:
        """Count one result of a call; return how many times in a row it returned it."""
        run = self._runs.pop(fingerprint, None)
        if run is not None and run.digest == digest:
            run.count += 1
            if run.count == self.policy.loop_warn:
                self._hot += 1
        else:
            if run is not None:
                self._cool(run)
            run = _Run(digest, 1, now)
            if self.policy.loop_warn == 1:
                self._hot += 1
        self._runs[fingerprint] = run  # newest last: the oldest is the first to go
        if len(self._runs) > _ENTRIES:
            self._cool(self._runs.pop(next(iter(self._runs))))
        return run.count

    def since(self, fingerprint: str) -> float | None:
        """Return when the call's current run of identical results began, if it has one."""
        run = self._runs.get(fingerprint)
        return None if run is None else run.since

    def forget(self, fingerprint: str) -> None:
        """Forget a call's run (it failed: its result changed)."""
        run = self._runs.pop(fingerprint, None)
        if run is not None:
            self._cool(run)

    def changed(self) -> None:
        """Forget every run: something changed the world (a mutating call succeeded)."""
        self._runs.clear()
        self._hot = 0

    def _cool(self, run: _Run) -> None:
        if run.count >= self.policy.loop_warn:
            self._hot -= 1

    def reason(self, count: int, since: float) -> str:
        """Return the sentence a looping call is warned or refused with."""
        return (
            f"this call returned the same result {count} times since {_clock_time(since)};"
            " nothing has changed"
        )

    def violation(self, call: Call, now: float) -> Violation | None:
        """Return the warning (or, past ``loop_block``, the refusal) a looping call runs into."""
        run = self._runs.get(call.fingerprint)
        if run is None or run.count < self.policy.loop_warn:
            return None
        block = self.policy.loop_block is not None and run.count >= self.policy.loop_block
        reason = self.reason(run.count, run.since)
        constraint = Constraint(
            kind=ConstraintKind.NO_PROGRESS,
            key=f"loop:{call.fingerprint}",
            signature=LOOP_SIGNATURE,
            reason=reason,
            hint=_HINT,
            level=Level.BLOCK if block else Level.WARN,
            occurrences=run.count,
            created_at=run.since,
            updated_at=now,
            tool=call.tool,
            fingerprint=call.fingerprint,
        )
        return Violation(constraint, reason)
