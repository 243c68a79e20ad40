"""The text a decision shows the LLM: what was refused, why, and what to do instead.

It is built only from safe pieces: the tool's name, signature labels and fixed hints from the
signature bank, targets and tool names quoted, sanitised and withheld when they read like
instructions (:func:`scarguard.redact.excerpt`), and the ids of the constraints behind a
refusal with the command that lifts them. Raw error text never appears here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scarguard.model import Call, ConstraintKind, Violation
from scarguard.redact import WITHHELD, excerpt, reads_like_instructions, strip_control

__all__ = ["decision_message", "tool_name"]

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,60}")


def _dedupe(violations: Sequence[Violation]) -> list[Violation]:
    seen: set[str] = set()
    unique = []
    for violation in violations:
        if violation.constraint.key not in seen:
            seen.add(violation.constraint.key)
            unique.append(violation)
    return unique


def _one_line(text: str, limit: int) -> str:
    """Return ``text`` without control characters, on one line, at most ``limit`` long.

    Reasons and tool names are built by scarguard, but can hold an argument's name or a
    tool's name from elsewhere; no newline may let them start a line of their own.
    """
    if reads_like_instructions(text):
        return WITHHELD
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_name(name: str) -> str:
    """Return a tool's name fit to show the LLM: plain names as they are, others quoted.

    A tool's name comes from the agent's tool list or from the LLM itself (a tool it made
    up): anything but a plain identifier is quoted, truncated and withheld when it reads
    like instructions, as targets are.
    """
    if _PLAIN_NAME.fullmatch(name) and not reads_like_instructions(name):
        return name
    return excerpt(name, limit=60)


def _lines(violations: Sequence[Violation], *, ids: bool = False) -> list[str]:
    lines = []
    hints: set[str] = set()
    for violation in _dedupe(violations):
        hint = violation.constraint.hint
        reason = _one_line(violation.reason, 400)
        text = f"- {reason[:1].upper()}{reason[1:]}"
        stored = violation.constraint.kind is not ConstraintKind.NO_PROGRESS
        text += f" (constraint {violation.constraint.id})." if ids and stored else "."
        if hint and hint not in hints:
            hints.add(hint)
            text += f" Hint: {hint}"
        lines.append(text)
    return lines


def decision_message(call: Call, blocks: Sequence[Violation], warnings: Sequence[Violation]) -> str:
    """Return the LLM-facing message for a decision (empty when there is nothing to say)."""
    if not blocks and not warnings:
        return ""
    where = f" on {excerpt(call.targets[0], limit=80)}" if call.targets else ""
    parts: list[str] = []
    if blocks:
        tool = tool_name(call.tool)
        stored = [v for v in blocks if v.constraint.kind is not ConstraintKind.NO_PROGRESS]
        why = "it is known to fail again" if stored else "it keeps returning the same result"
        parts.append(f"scarguard refused this {tool} call{where}: {why}.")
        parts.extend(_lines(blocks, ids=True))
        parts.append(
            "Do not retry it unchanged. Change the arguments or the approach, or gather new"
            " evidence first (for example, read the file or list the directory)."
        )
        if stored:
            ids = " ".join(dict.fromkeys(v.constraint.id for v in stored))
            parts.append(
                f"If this refusal is wrong, an operator can lift it: scarguard forget {ids}"
            )
        else:
            parts.append("It runs again once something changes (an edit, a write, a command).")
    if warnings:
        parts.append("Also noted:" if blocks else "Caution from scarguard (the call was allowed):")
        parts.extend(_lines(warnings))
    return "\n".join(p for p in parts if p)
