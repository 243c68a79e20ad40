"""The local observer's plans: paths observed together, judged by their folders' listings."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from scarguard.observe import MISSING, LocalObserver
from scarguard.observe import local as local_observer
from scarguard.observe.local import HASH_LIMIT, _read_head


def _settle(*paths: Path) -> None:
    """Date ``paths`` an hour back: what is read of them now may be remembered."""
    past = time.time_ns() - 3600 * 10**9
    for path in paths:
        os.utime(path, ns=(past, past))


def test_tokens_follow_the_order_of_the_paths_every_time(tmp_path: Path) -> None:
    """Present and absent paths of one folder come back in the order asked, as fresh copies."""
    (tmp_path / "b.txt").write_text("b")
    (tmp_path / "d.txt").write_text("d")
    _settle(tmp_path / "b.txt", tmp_path / "d.txt", tmp_path)
    paths = [str(tmp_path / name) for name in ("a", "b.txt", "c", "d.txt")]
    observer = LocalObserver(tmp_path)
    first = observer.observe(paths)
    assert list(first) == paths
    assert [first[p] == MISSING for p in paths] == [True, False, True, False]
    first[paths[0]] = "spoiled"  # type: ignore[index]
    assert observer.observe(paths)[paths[0]] == MISSING


def test_a_path_that_cannot_be_read_has_no_token_that_time_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``stat`` refused is no token, the next observation of the same paths has it again."""
    (tmp_path / "a.txt").write_text("a")
    _settle(tmp_path / "a.txt", tmp_path)
    paths = [str(tmp_path / "a.txt"), str(tmp_path / "gone")]
    observer = LocalObserver(tmp_path)
    whole = observer.observe(paths)
    real_stat = os.stat

    def refusing(path: str, *args: object, **kwargs: object) -> os.stat_result:
        if path == paths[0]:
            raise PermissionError(path)
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", refusing)
    assert observer.observe(paths) == {paths[1]: MISSING}
    assert observer.changed(whole) == []  # unreadable now: not evidence of a change
    monkeypatch.setattr(os, "stat", real_stat)
    assert observer.observe(paths) == whole


def test_a_file_created_in_a_recently_changed_folder_is_seen(tmp_path: Path) -> None:
    """A listing not yet settled is read again every time: a new file is never judged absent."""
    paths = [str(tmp_path / "go.mod"), str(tmp_path / "Cargo.toml")]
    observer = LocalObserver(tmp_path)
    recent = time.time_ns()
    os.utime(tmp_path, ns=(recent, recent))
    absent = observer.observe(paths)
    assert absent == dict.fromkeys(paths, MISSING)
    (tmp_path / "go.mod").write_text("module x\n")
    os.utime(tmp_path, ns=(recent, recent))  # the folder's stat data as it was
    assert observer.observe(paths)[paths[0]] != MISSING
    assert observer.changed(absent) == [paths[0]]


def test_paths_under_a_file_or_a_missing_folder_are_missing(tmp_path: Path) -> None:
    """A folder that cannot be listed (a file, or nothing) leaves its paths to ``stat``."""
    (tmp_path / "file").write_text("x")
    paths = [str(tmp_path / "file" / "a"), str(tmp_path / "file" / "b")]
    paths += [str(tmp_path / "none" / "a"), str(tmp_path / "none" / "b")]
    observer = LocalObserver(tmp_path)
    for _ in range(2):
        assert observer.observe(paths) == dict.fromkeys(paths, MISSING)
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "b").write_text("b")
    assert observer.observe(paths)[paths[3]] != MISSING


@pytest.mark.parametrize("size", [0, 1, 100, 8191, 8192, 8193, 20_000, 99_999, 100_000, 100_001])
def test_a_file_is_read_up_to_one_byte_past_the_limit(tmp_path: Path, size: int) -> None:
    """What is read of a file of any size is what one buffered read of the limit gives."""
    path = tmp_path / "f"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"x" * (size % 256))
    for limit in (0, 10, 8192, 99_999, 100_000):
        with open(path, "rb") as handle:
            assert _read_head(str(path), limit) == handle.read(limit + 1)


def test_a_file_read_while_it_grows_is_read_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file larger than its size said (it grew, or a special file says 0) is read on."""
    path = tmp_path / "f"
    path.write_bytes(b"y" * 50_000)
    monkeypatch.setattr(os, "fstat", lambda fd: os.stat_result((0,) * 10))  # "size 0"
    assert _read_head(str(path), 40_000) == b"y" * 40_001
    assert _read_head(str(path), 60_000) == b"y" * 50_000
    assert LocalObserver(tmp_path).read(str(path)) == "y" * 50_000


def _counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real_open = open

    def counting_open(file: str, *args: object, **kwargs: object) -> object:
        opened.append(file)
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(local_observer, "open", counting_open, raising=False)
    return opened


def test_a_settled_file_is_read_once_until_its_inode_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small file settled (its change time too) is read once; a rewrite is read again."""
    makefile = tmp_path / "Makefile"
    makefile.write_text("all:\n\techo a\n")
    _settle(makefile)
    later = time.time_ns() + 3600 * 10**9  # an hour on: the change time has settled too
    monkeypatch.setattr(time, "time_ns", lambda: later)
    opened = _counting_opens(monkeypatch)
    observer = LocalObserver(tmp_path)
    assert observer.read("Makefile") == observer.read("Makefile") == "all:\n\techo a\n"
    assert len(opened) == 1
    makefile.write_text("all:\n\techo b\n")  # the same size, its mtime put back
    _settle(makefile)
    assert observer.read("Makefile") == "all:\n\techo b\n"
    makefile.chmod(0o644)
    assert observer.read("Makefile") == "all:\n\techo b\n"
    assert len(opened) == 3  # a chmod moves the change time: read again


def test_a_file_changed_lately_is_read_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose mtime settled but whose inode changed just now is not remembered."""
    makefile = tmp_path / "Makefile"
    makefile.write_text("all:\n")
    _settle(makefile)  # mtime an hour back, change time now
    opened = _counting_opens(monkeypatch)
    observer = LocalObserver(tmp_path)
    for _ in range(3):
        assert observer.read("Makefile") == "all:\n"
    assert len(opened) == 3
    (tmp_path / "big").write_bytes(b"z" * (HASH_LIMIT + 1))
    assert observer.read("big") == observer.read("big") == "z" * (HASH_LIMIT + 1)
    assert observer.read("missing") is None


def test_a_folder_named_with_a_trailing_dot_is_the_folder(tmp_path: Path) -> None:
    """``<root>/.`` (the folder a root glob or search looks in) is observed as the folder:
    a file made in it changes its token; it is never judged missing."""
    observer = LocalObserver(tmp_path)
    paths = [f"{tmp_path}/.", f"{tmp_path}/"]
    before = observer.observe(paths)
    assert all(token != MISSING for token in before.values())
    (tmp_path / "new.txt").write_text("x")
    assert sorted(observer.changed(before)) == sorted(paths)
