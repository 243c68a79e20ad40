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
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any

import attrs

from scarguard.model import Call, Constraint, ConstraintKind, Level, Violation
from scarguard.policy import Policy

__all__ = [
    "LOOP_SIGNATURE",
    "NO_RESULT",
    "ProgressTracker",
    "changes_results",
    "may_change",
    "result_digest",
]


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
    {
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "ls",
        "tree",
        "find",
        "grep",
        "rg",
        "ag",
        "wc",
        "pwd",
        "echo",
        "stat",
        "file",
        "du",
        "df",
        "ps",
        "which",
        "env",
        "printenv",
        "date",
    }
)
"""Programs whose runs change nothing; any other shell command may change the workspace."""
_SHELL_ARGS = ("command", "cmd", "script")


def may_change(call: Call, mutating: bool) -> bool:
    """Return whether a successful call may have changed what other calls return.

    Mutating calls do; so does a shell command unless it only runs a reader (``cat``,
    ``ls``, ``grep``...): a script, a build or a generator can change any file without naming
    it, and a missed warning costs less than a false one.
    """
    return changes_results(call.action_class, call.args, mutating)


def changes_results(action_class: str | None, args: Mapping[str, Any], mutating: bool) -> bool:
    """:func:`may_change` of a call not described yet (its action class and arguments)."""
    if mutating:
        return True
    if action_class != "shell_exec":
        return False
    for key in _SHELL_ARGS:
        command = args.get(key)
        if isinstance(command, str):
            words = command.split()
            return (
                not words
                or words[0].rsplit("/", 1)[-1] not in _READERS
                or any(sep in command for sep in ("|", ";", "&", ">", "`", "$("))
            )
    return True


def result_digest(result: Any) -> Hashable | None:
    """Return a cheap identity of a tool's result, or ``None`` when it cannot be taken.

    Text and bytes are hashed whole; anything else through its ``repr`` (so an object whose
    ``repr`` shows a memory address never matches another: a missed loop, never a false
    one). The identity lives in this process only and is never stored, so Python's own
    hashing (the string hash is cached on the object) is enough and costs almost nothing.
    """
    kind = type(result)
    if kind is int or kind is bool:  # (a count, a flag: common, and their value is their text)
        return ("i" if kind is int else "b", result)
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
    tool: str = ""


def _drop(counts: Counter[str], key: str) -> None:
    counts[key] -= 1
    if counts[key] <= 0:
        del counts[key]


def _clock_time(at: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(at))


class ProgressTracker:
    """Count identical results of identical calls, and say when one is looping.

    Calls allowed on the fast path are not described, so they have no fingerprint: their
    results are kept per tool, keyed by the result's digest, with the raw arguments
    (:meth:`returned_raw`). A call is only counted by fingerprint once that can matter: when
    one of the tool's results repeats (any of its calls could be looping), when the tool
    fails or returns nothing (a run may end), or when a call of the tool goes through the
    full path. Then the tool's kept results are replayed, in order, through the
    fingerprinted count (:meth:`returned`), with the fingerprint computed for each only
    then. The counts are the same as if every call had been fingerprinted when it returned.

    Args:
        policy: Supplies ``loop_warn`` and ``loop_block``.
        fingerprint: Returns the fingerprint of a tool's call from its raw arguments (the
            memory's adapter); without it every call must be counted by fingerprint.
    """

    def __init__(
        self,
        policy: Policy,
        fingerprint: Callable[[str, Mapping[str, Any]], str] | None = None,
    ) -> None:
        self.policy = policy
        self._fingerprint = fingerprint
        # (ordered dicts: the least recently used entry is dropped at every new call once
        # full, and a plain dict's first live entry is found past the ones deleted before)
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        self._hot = 0
        """How many remembered calls are at or over ``loop_warn`` (0: nothing to check)."""
        self._hot_tools: Counter[str] = Counter()
        self._tools: Counter[str] = Counter()
        """Remembered (fingerprinted) runs per tool."""
        self._raw: dict[str, OrderedDict[Hashable, tuple[dict[str, Any], float]]] = {}
        """Per tool, results of calls not fingerprinted yet: digest -> (arguments, when)."""

    @property
    def hot(self) -> bool:
        """Whether any call is looping now (lets ``check`` skip the lookup otherwise)."""
        return self._hot > 0

    def hot_for(self, tool: str) -> bool:
        """Whether a call of ``tool`` is looping now (its calls need the full check)."""
        return tool in self._hot_tools

    def returned_raw(
        self, tool: str, args: Mapping[str, Any], digest: Hashable | None, now: float
    ) -> bool:
        """Count a result of a call that was not described, if that needs no fingerprint.

        ``digest`` is ``None`` when the call returned nothing to compare. Returns ``False``
        when the call must be counted by fingerprint instead (:meth:`returned` or
        :meth:`forget`), its tool's kept results replayed first.
        """
        if self._fingerprint is None or self.policy.loop_warn <= 1 or tool in self._tools:
            return False
        kept = self._raw.get(tool)
        if digest is None:
            if kept:
                self.resolve(tool)  # a run of this call may end here
                return False
            return True  # nothing remembered of this tool: nothing to forget
        if kept is None:
            kept = self._raw[tool] = OrderedDict()
        elif digest in kept:
            self.resolve(tool)  # a result repeats: this call may be looping
            return False
        kept[digest] = (dict(args), now)
        if len(kept) > _ENTRIES:
            kept.popitem(last=False)
        return True

    def resolve(self, tool: str) -> None:
        """Count the kept results of ``tool``'s calls by fingerprint, in the order returned."""
        kept = self._raw.pop(tool, None)
        if not kept or self._fingerprint is None:
            return
        for digest, (args, at) in kept.items():
            try:
                fingerprint = self._fingerprint(tool, args)
            except Exception:
                continue
            self.returned(fingerprint, digest, at, tool=tool)

    def returned(self, fingerprint: str, digest: Hashable, now: float, *, tool: str = "") -> int:
        """Count one result of a call; return how many times in a row it returned it."""
        if tool and tool in self._raw:
            self.resolve(tool)
        runs = self._runs
        warn = self.policy.loop_warn
        run = runs.get(fingerprint)
        if run is not None:
            runs.move_to_end(fingerprint)  # newest last: the oldest is the first to go
            if run.digest == digest:
                run.count += 1
                if run.count == warn:
                    self._heat(run)
                return run.count
            self._cool(run)
        new = runs[fingerprint] = _Run(digest, 1, now, tool)
        if warn == 1:
            self._heat(new)
        if run is None and len(runs) > _ENTRIES:
            oldest = runs.popitem(last=False)[1]
            if oldest.tool == tool and oldest.count < warn:
                return 1  # one run of the tool for another, neither looping: counts unchanged
            self._cool(oldest)
        self._tools[tool] += 1
        return 1

    def since(self, fingerprint: str) -> float | None:
        """Return when the call's current run of identical results began, if it has one."""
        run = self._runs.get(fingerprint)
        return None if run is None else run.since

    def forget(self, fingerprint: str, *, tool: str = "") -> None:
        """Forget a call's run (it failed: its result changed)."""
        if tool and tool in self._raw:
            self.resolve(tool)
        run = self._runs.pop(fingerprint, None)
        if run is not None:
            self._cool(run)

    def changed(self) -> None:
        """Forget every run: something changed the world (a mutating call succeeded)."""
        if not self._runs and not self._raw:
            return  # nothing remembered (the common case for a shell-like tool)
        self._runs.clear()
        self._raw.clear()
        self._tools.clear()
        self._hot_tools.clear()
        self._hot = 0

    def _heat(self, run: _Run) -> None:
        self._hot += 1
        self._hot_tools[run.tool] += 1

    def _cool(self, run: _Run) -> None:
        """Account for a run that is dropped or replaced."""
        _drop(self._tools, run.tool)
        if run.count >= self.policy.loop_warn:
            self._hot -= 1
            _drop(self._hot_tools, run.tool)

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
