"""Text output for the command line: colours, aligned tables, times and durations.

Colour is used only when the stream is a terminal and ``NO_COLOR`` is unset
(https://no-color.org); everything else is plain text that reads the same in a log file.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
from collections.abc import Sequence
from typing import TextIO

__all__ = ["Style", "ago", "parse_since", "size_text", "table", "when", "width"]

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*$", re.IGNORECASE)


class Style:
    """Wrap text in ANSI colours when the stream is a terminal and ``NO_COLOR`` is unset.

    Args:
        stream: The stream the text is written to.
        color: Force colours on or off (default: decide from the stream and environment).
    """

    def __init__(self, stream: TextIO, color: bool | None = None) -> None:
        if color is None:
            isatty = getattr(stream, "isatty", None)
            color = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
        self.color = color

    def __call__(self, text: str, *styles: str) -> str:
        """Return ``text`` in the given styles (``bold``, ``dim``, ``red``...)."""
        if not self.color or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\033[{codes}m{text}\033[0m"


def width(default: int = 100) -> int:
    """Return the terminal's width, at most ``default`` (tables and wrapped text fit in it)."""
    return min(shutil.get_terminal_size((default, 24)).columns, default)


def _cell(value: object, limit: int) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, limit: int = 60) -> str:
    """Return rows as an aligned plain-text table (cells cut at ``limit`` characters)."""
    cells = [[_cell(v, limit) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    return "\n".join(lines)


def ago(seconds: float) -> str:
    """Return a past duration as ``45s ago``, ``3m ago``, ``2h ago`` or ``4d ago``."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return f"{int(seconds)}s ago"


def when(at: float | None, now: float) -> str:
    """Return a time as local ``YYYY-MM-DD HH:MM`` (``never`` for ``None``)."""
    if at is None:
        return "never"
    return datetime.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def parse_since(text: str, now: float) -> float:
    """Return the time ``text`` names: a duration back from ``now`` (``2h``, ``3d``) or ISO time.

    Raises:
        ValueError: ``text`` is neither.
    """
    match = _DURATION.match(text)
    if match:
        return now - float(match.group(1)) * _UNITS[match.group(2).lower()]
    try:
        parsed = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"--since takes a duration such as 30m, 2h, 3d, 1w or an ISO time, got {text!r}"
        ) from None
    return parsed.timestamp()  # a naive time is local time, as the tables show it


def size_text(size: int) -> str:
    """Return a byte count as ``812 B``, ``12.0 KiB`` or ``3.4 MiB``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover
