"""Text output for the command line: colours, aligned tables, times and durations.

Colour is used only when the stream is a terminal and ``NO_COLOR`` is unset
(https://no-color.org); everything else is plain text that reads the same in a log file.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

__all__ = [
    "Style",
    "ago",
    "args_text",
    "blame_word",
    "parse_duration",
    "parse_since",
    "plural",
    "size_text",
    "table",
    "until",
    "when",
    "width",
    "wrap",
]

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


def width(default: int = 80, *, most: int = 120) -> int:
    """Return the width output should fit: the terminal's, else ``$COLUMNS``, else ``default``.

    Never below 60 columns nor above ``most`` (long lines read badly even on wide screens).
    """
    columns = shutil.get_terminal_size((default, 24)).columns
    return max(60, min(columns, most))


def wrap(
    text: str, size: int, *, indent: str = "", hang: str | None = None, breaks: bool = True
) -> list[str]:
    """Return ``text`` wrapped to ``size`` columns, continuation lines under its first word.

    Args:
        text: One paragraph (runs of whitespace are collapsed).
        size: The longest line, ``indent`` included.
        indent: What the first line starts with.
        hang: What continuation lines start with (default: spaces as wide as ``indent``, plus
            two more when the text is a ``- `` bullet).
        breaks: Break a word longer than a line (``False`` keeps paths whole, overlong).
    """
    words = " ".join(text.split())
    if hang is None:
        hang = " " * len(indent) + ("  " if words.startswith("- ") else "")
    return textwrap.wrap(
        words,
        max(size, len(hang) + 20),
        initial_indent=indent,
        subsequent_indent=hang,
        break_long_words=breaks,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _cell(value: object, limit: int) -> str:
    """Return ``value`` on one line, unprintable characters (terminal escapes) as ``?``."""
    text = "".join(c if c.isprintable() else "?" for c in " ".join(str(value).split()))
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def args_text(args: Mapping[str, Any]) -> str:
    """Return a call's arguments as ``path="a.py", n=3`` (values as JSON, escapes kept)."""
    return ", ".join(
        f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)}"
        for k, v in args.items()
    )


def _fit(natural: list[int], floors: list[int], shrink: Sequence[int], room: int) -> list[int]:
    """Narrow the shrinkable columns, widest first, until the widths fit in ``room``."""
    widths = list(natural)
    while sum(widths) > room:
        candidates = [i for i in shrink if widths[i] > floors[i]]
        if not candidates:
            break
        widest = max(candidates, key=lambda i: widths[i])
        widths[widest] -= 1
    return widths


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    size: int | None = None,
    shrink: Mapping[str, int] | Sequence[str] = (),
    notes: Sequence[str] | None = None,
) -> str:
    """Return rows as an aligned plain-text table that fits in ``size`` columns.

    Args:
        headers: The column titles.
        rows: The cells, one sequence per row.
        size: The width to fit (default: :func:`width`).
        shrink: The columns (by title) that give up room when the table is too wide, widest
            first, down to the width given (a mapping) or their title's; their cells are cut
            with ``…``. The others keep their width.
        notes: One text per row, printed wrapped and indented under it (a reason, say).
    """
    size = size or width()
    cells = [[_cell(v, 400) for v in row] for row in rows]
    natural = [len(h) for h in headers]
    for row in cells:
        natural = [max(w, len(c)) for w, c in zip(natural, row, strict=True)]
    least = shrink if isinstance(shrink, Mapping) else dict.fromkeys(shrink, 0)
    floors = [max(len(h), 6, least.get(h, 0)) for h in headers]
    room = size - 2 * (len(headers) - 1)
    widths = _fit(natural, floors, [headers.index(h) for h in shrink], room)

    def line(values: Sequence[str]) -> str:
        return "  ".join(_cell(v, w).ljust(w) for v, w in zip(values, widths, strict=True))

    lines = [line(headers).rstrip(), "  ".join("-" * w for w in widths)]
    for index, row in enumerate(cells):
        lines.append(line(row).rstrip())
        if notes is not None and notes[index]:
            lines += wrap(notes[index], size, indent="    ")
    return "\n".join(lines)


def _span(seconds: float) -> str:
    for unit, length in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= length:
            return f"{int(seconds // length)}{unit}"
    return f"{int(seconds)}s"


def ago(seconds: float) -> str:
    """Return how long ago something happened: ``45s ago``, ``3m ago``, ``4d ago``.

    A time in the future (another machine's clock, say) reads ``in 3m``, never ``0s ago``.
    """
    if seconds < 0:
        return f"in {_span(-seconds)}" if seconds <= -1 else "just now"
    return "just now" if seconds < 1 else f"{_span(seconds)} ago"


def until(at: float | None, now: float) -> str:
    """Return when something lapses: ``in 7d``, ``in 3h``, ``expired`` or ``never``."""
    if at is None:
        return "never"
    return f"in {_span(at - now)}" if at > now else "expired"


def when(at: float | None, now: float) -> str:
    """Return a time as local ``YYYY-MM-DD HH:MM`` (``never`` for ``None``)."""
    if at is None:
        return "never"
    return datetime.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def blame_word(blame: str) -> str:
    """Return the word users read for a blame: ``agent``, ``infrastructure`` or ``unknown``.

    The stored value of infrastructure faults is ``harness`` (the API and JSON keep it);
    everything printed for people says ``infrastructure``.
    """
    return "infrastructure" if blame == "harness" else blame


def plural(count: int, noun: str, many: str | None = None) -> str:
    """Return ``1 constraint``, ``2 constraints`` (``many`` for irregular plurals)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


def parse_duration(text: str) -> float:
    """Return the seconds ``text`` names: ``90m``, ``12h``, ``30d``, ``2w`` (more than zero).

    Raises:
        ValueError: ``text`` is not such a duration.
    """
    match = _DURATION.match(text)
    seconds = float(match.group(1)) * _UNITS[match.group(2).lower()] if match else 0.0
    if not seconds > 0:
        raise ValueError(f"expected a duration such as 90m, 12h, 30d or 2w, got {text!r}")
    return seconds


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
