"""File helpers of the persistent stores: atomic replacement, committed appends, key ranges."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scarguard.stores._files import (
    ShortFile,
    append_committed,
    atomic_write,
    open_private,
    prefix_end,
    temp_name,
)


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    """The new content replaces the old; nothing else is left in the folder."""
    path = tmp_path / "memory.json"
    path.write_bytes(b"old")
    atomic_write(str(path), b"new", mtime_ns=1_700_000_000_123_456_789)
    assert path.read_bytes() == b"new"
    assert os.stat(path).st_mtime_ns == 1_700_000_000_123_456_789
    assert os.listdir(tmp_path) == ["memory.json"]


def test_a_failed_atomic_write_keeps_the_old_file_and_removes_the_temporary(
    tmp_path: Path,
) -> None:
    """If the rename cannot happen, the old content stays and the error is the real one."""
    target = tmp_path / "folder"
    target.mkdir()
    (target / "keep").write_text("x")  # a non-empty folder cannot be replaced by a file
    with pytest.raises(OSError):
        atomic_write(str(target), b"new")
    assert sorted(os.listdir(tmp_path)) == ["folder"]
    assert (target / "keep").read_text() == "x"


def test_files_scarguard_creates_are_private(tmp_path: Path) -> None:
    """A created file is readable and writable by its owner only."""
    path = tmp_path / "memory.json"
    with open_private(str(path), "wb") as handle:
        handle.write(b"x")
    atomic_write(str(tmp_path / "other.json"), b"y")
    for name in ("memory.json", "other.json"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600


def test_temporary_names_sit_beside_the_file_and_differ() -> None:
    """Two temporary names of one path are in its folder and never the same."""
    first, second = temp_name("/data/memory.json"), temp_name("/data/memory.json")
    assert first.startswith(f"/data/memory.json.tmp-{os.getpid()}-")
    assert first != second


def test_append_committed_cuts_what_never_committed(tmp_path: Path) -> None:
    """Bytes past the committed length (a torn line) are cut before the append."""
    path = tmp_path / "journal"
    path.write_bytes(b"one\ntorn")
    assert append_committed(str(path), 4, b"two\n") == 8
    assert path.read_bytes() == b"one\ntwo\n"


def test_a_journal_shorter_than_committed_is_refused_or_continued_on_a_fresh_line(
    tmp_path: Path,
) -> None:
    """Lost committed bytes raise ShortFile; with ``short_ok`` the append starts a new line."""
    path = tmp_path / "journal"
    path.write_bytes(b"one\ntw")
    with pytest.raises(ShortFile) as short:
        append_committed(str(path), 10, b"three\n")
    assert (short.value.found, short.value.committed) == (6, 10)
    assert path.read_bytes() == b"one\ntw"
    assert append_committed(str(path), 10, b"three\n", short_ok=True) == 13
    assert path.read_bytes() == b"one\ntw\nthree\n"


@pytest.mark.parametrize("prefix", ["x:", "a%_", "ft:tool", "é", "\ud7ff"])
def test_prefix_end_bounds_exactly_the_keys_with_the_prefix(prefix: str) -> None:
    """Keys in ``[prefix, prefix_end)`` are exactly those that start with ``prefix``."""
    end = prefix_end(prefix)
    assert end is not None
    keys = [prefix, prefix + "a", prefix + "\U0010ffff", prefix[:-1], end, prefix[:-1] + "~"]
    inside = [k for k in keys if prefix <= k < end]
    assert inside == [k for k in keys if k.startswith(prefix)]
    end.encode("utf-8")  # never a lone surrogate


def test_prefix_end_has_no_bound_for_an_empty_or_last_prefix() -> None:
    """An empty prefix, or one of only the last code point, has no upper bound."""
    assert prefix_end("") is None
    assert prefix_end("\U0010ffff\U0010ffff") is None
    assert prefix_end("a\U0010ffff") == "b"
