"""Rendering for the ``scarguard`` command: durations, times, tables that fit the terminal."""

from __future__ import annotations

import pytest

from scarguard.cli.rendering import (
    ago,
    args_text,
    blame_word,
    parse_duration,
    parse_since,
    plural,
    size_text,
    table,
    until,
)


def test_parse_since_reads_durations_and_iso() -> None:
    """Durations count back from now; ISO times are absolute."""
    assert parse_since("2h", 10_000.0) == 10_000.0 - 7200
    assert parse_since("3d", 1e6) == 1e6 - 3 * 86400
    assert parse_since("2026-01-01T00:00:00Z", 0) == 1767225600.0


@pytest.mark.parametrize(("text", "seconds"), [("90m", 5400), ("12h", 43200), ("2w", 1209600)])
def test_durations_are_read_in_their_unit(text: str, seconds: float) -> None:
    """``90m``, ``12h``, ``2w`` are that many seconds."""
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0d", "soon", "-3h", ""])
def test_a_duration_must_be_positive_and_have_a_unit(text: str) -> None:
    """Zero, a negative span, no unit or no number at all is refused, naming the forms."""
    with pytest.raises(ValueError, match="90m, 12h, 30d or 2w"):
        parse_duration(text)


def test_times_read_as_people_say_them() -> None:
    """Ages, lapses, blame words, plurals and sizes in the words people read."""
    assert (ago(45), ago(200), ago(4 * 86400), ago(0.2), ago(-180)) == (
        "45s ago",
        "3m ago",
        "4d ago",
        "just now",
        "in 3m",
    )
    assert (until(None, 0), until(10, 20), until(7 * 86400, 0)) == ("never", "expired", "in 7d")
    assert (blame_word("harness"), blame_word("agent")) == ("infrastructure", "agent")
    assert (plural(1, "constraint"), plural(2, "success", "successes")) == (
        "1 constraint",
        "2 successes",
    )
    assert (size_text(812), size_text(12 * 1024), size_text(3 * 1024**3)) == (
        "812 B",
        "12.0 KiB",
        "3.0 GiB",
    )


def test_a_table_fits_its_width_by_cutting_the_shrinkable_columns() -> None:
    """Shrinkable columns give up room, cut with an ellipsis; the others keep theirs."""
    rows = [["3f9a1c2b7d4e", "x" * 120, "refuse"]]
    text = table(["id", "target", "does"], rows, size=60, shrink=["target"])
    lines = text.splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert "3f9a1c2b7d4e" in lines[2] and "refuse" in lines[2]
    assert "…" in lines[2]


def test_table_cells_are_one_line_without_terminal_escapes() -> None:
    """A cell's newlines collapse and control characters (escapes) print as ``?``."""
    text = table(["tool"], [["make\n\x1b[31mred"]], size=80)
    assert text.splitlines()[2] == "make ?[31mred"
    assert args_text({"path": "a.py", "n": 3}) == 'path="a.py", n=3'
