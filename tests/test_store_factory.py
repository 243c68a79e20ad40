"""open_store: each accepted form, the default path, and the one announced JSON fallback."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from scarguard.errors import ConfigurationError, StoreError, StoreFallbackWarning
from scarguard.model import Scope
from scarguard.stores import (
    DEFAULT_PATH,
    JSONStore,
    MemoryStore,
    SQLiteStore,
    default_path,
    open_store,
)
from scarguard.stores.factory import PATH_ENV


@pytest.fixture(autouse=True)
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PATH_ENV, raising=False)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("m.db", SQLiteStore),
        ("m.sqlite", SQLiteStore),
        ("m.SQLITE3", SQLiteStore),
        ("m.json", JSONStore),
    ],
)
def test_paths_open_the_store_their_suffix_names(tmp_path: Path, name: str, kind: type) -> None:
    """*.db / *.sqlite / *.sqlite3 open SQLite, *.json opens JSON, str or Path alike."""
    for path in (tmp_path / name, str(tmp_path / name)):
        store = open_store(path)
        assert isinstance(store, kind) and store.location == str(tmp_path / name)
        store.close()


def test_memory_and_store_instances() -> None:
    """ ":memory:" opens a MemoryStore; a store instance is returned as is."""
    memory = open_store(":memory:")
    assert isinstance(memory, MemoryStore) and not memory.receipts
    assert open_store(memory) is memory
    assert open_store(":memory:", receipts=True).receipts  # type: ignore[attr-defined]


def test_options_reach_the_store(tmp_path: Path) -> None:
    """durable, receipts and receipt_key are passed to the store."""
    store = open_store(tmp_path / "d.db", durable=True, receipts=False, receipt_key="k")
    assert isinstance(store, SQLiteStore) and not store.receipts and store._key == "k"
    assert store._db.get().execute("PRAGMA synchronous").fetchone()[0] == 2


@pytest.mark.parametrize("bad", ["memory.txt", "noext", 42])
def test_anything_else_names_the_accepted_forms(bad: object) -> None:
    """Unknown forms raise ConfigurationError listing what is accepted."""
    with pytest.raises(ConfigurationError, match=r"\.json"):
        open_store(bad)  # type: ignore[arg-type]


def test_default_path_is_under_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None opens .scarguard/memory.db under the working directory, without any warning."""
    monkeypatch.chdir(tmp_path)
    assert default_path() == tmp_path / DEFAULT_PATH
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = open_store()
    assert isinstance(store, SQLiteStore) and store.location == str(tmp_path / DEFAULT_PATH)


def test_scarguard_path_overrides_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SCARGUARD_PATH names the store used for None, of whatever kind."""
    monkeypatch.setenv(PATH_ENV, str(tmp_path / "env.json"))
    store = open_store()
    assert isinstance(store, JSONStore) and store.location == str(tmp_path / "env.json")


def test_scarguard_path_may_be_a_postgresql_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``postgresql://`` URL in SCARGUARD_PATH opens that database (its "//" kept)."""
    from helpers.postgres import drop_schema, new_schema, require_postgres, url_for

    require_postgres()
    schema = new_schema()
    monkeypatch.setenv(PATH_ENV, url_for(schema))
    store = open_store()
    try:
        assert type(store).__name__ == "PostgresStore"
        assert schema in store.location
    finally:
        store.close()
        drop_schema(schema)


def test_an_unusable_default_falls_back_to_json_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """When SQLite cannot open the default, JSON beside it is used: one warning, one log line."""
    monkeypatch.chdir(tmp_path)

    def refuse(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", refuse)
    with caplog.at_level(logging.WARNING), pytest.warns(StoreFallbackWarning) as caught:
        store = open_store()
    assert len(caught) == 1
    assert "memory.db" in str(caught[0].message) and "unable to open" in str(caught[0].message)
    assert isinstance(store, JSONStore)
    assert store.location == str(tmp_path / ".scarguard" / "memory.json")
    assert len([r for r in caplog.records if "JSON store" in r.getMessage()]) == 1


def test_a_folder_at_the_default_path_falls_back_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder where the default database should be also falls back to JSON."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / DEFAULT_PATH).mkdir(parents=True)
    with pytest.warns(StoreFallbackWarning):
        assert isinstance(open_store(), JSONStore)


def test_an_explicit_path_that_fails_raises(tmp_path: Path) -> None:
    """An explicit path that cannot be opened raises StoreError; no silent fallback."""
    (tmp_path / "x.db").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(StoreError):
            open_store(tmp_path / "x.db")


@pytest.mark.parametrize("name", ["memory.db", "memory.json"])
def test_a_tilde_path_opens_under_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """``~/...`` (argument or SCARGUARD_PATH) means the home folder, not a folder named ``~``."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    store = open_store(f"~/{name}")
    assert store.location == str(tmp_path / "home" / name)
    store.close()
    monkeypatch.setenv(PATH_ENV, f"~/env-{name}")
    assert default_path() == tmp_path / "home" / f"env-{name}"
    store = open_store()
    assert store.location == str(tmp_path / "home" / f"env-{name}")
    store.close()
    assert not (tmp_path / "~").exists()


@pytest.mark.slow
def test_opening_a_sqlite_store_imports_nothing_new() -> None:
    """Reaching FailureMemory loads the whole engine with the SQLite store, so opening a
    store starts no scarguard import that a fork in another thread could catch in flight."""
    code = (
        "import sys, tempfile, os\n"
        "import scarguard\n"
        "FailureMemory = scarguard.FailureMemory\n"
        "before = set(sys.modules)\n"
        "FailureMemory(os.path.join(tempfile.mkdtemp(), 'm.db')).close()\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('scarguard')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_corrupt_default_database_is_a_clear_error_not_a_second_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A default memory.db that exists but is not a database: StoreError naming the file and
    what to do; no memory.json appears beside it (the CLI would go on reading the .db)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    db = tmp_path / DEFAULT_PATH
    db.parent.mkdir()
    db.write_bytes(b"this is not a database" * 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(StoreError, match=r"memory\.db.*move .*memory\.db aside"):
            open_store()
    assert not db.with_suffix(".json").exists()


def test_an_earlier_json_fallback_stays_the_default_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With memory.json from an earlier fallback and no memory.db, the default is the JSON."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    json_path = (tmp_path / DEFAULT_PATH).with_suffix(".json")
    json_path.parent.mkdir()
    earlier = JSONStore(json_path)
    with earlier.transaction(Scope()) as tx:
        tx.bump("k", 1.0)
    earlier.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = open_store()
    assert isinstance(store, JSONStore) and store.location == str(json_path)
    assert not (tmp_path / DEFAULT_PATH).exists()


_NO_FORK_NO_FCNTL = """
import os, sys
del os.register_at_fork, os.fork  # as on Windows (the standard library checks os.fork)
sys.modules["fcntl"] = None      # import fcntl -> ImportError, as on Windows
import scarguard
from scarguard import FailureMemory, StoreError
memory = FailureMemory(sys.argv[1])
memory.record("read_file", {"path": "gone.txt"}, error="No such file or directory")
assert not memory.check("read_file", {"path": "gone.txt"}).allowed
memory.close()
try:
    FailureMemory(sys.argv[2])
except StoreError as exc:
    print("JSON:", exc)
print("OK")
"""


@pytest.mark.slow
def test_import_and_the_sqlite_store_work_without_fork_hooks_or_fcntl(tmp_path: Path) -> None:
    """Where os.register_at_fork and fcntl do not exist (Windows), import and SQLite work and
    the JSON store says clearly that it needs POSIX file locks."""
    done = subprocess.run(
        [sys.executable, "-c", _NO_FORK_NO_FCNTL, str(tmp_path / "m.db"), str(tmp_path / "m.json")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("OK")
    assert "needs POSIX file locks (fcntl)" in done.stdout and "SQLite store" in done.stdout


def test_the_default_folder_keeps_the_memory_out_of_git_and_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default .scarguard/ is 0700 with a .gitignore of its own; its files are 0600; an
    agent's `git add -A` commits none of it."""
    import shutil
    import stat

    from scarguard import FailureMemory

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    with FailureMemory() as memory:
        memory.record("read_file", {"path": "gone.txt"}, error="No such file or directory")
        assert memory.verify().valid
    folder = tmp_path / ".scarguard"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    for child in folder.iterdir():
        if child.name != ".gitignore":
            assert stat.S_IMODE(child.stat().st_mode) == 0o600, child.name
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "app.py").write_text("print('hi')\n")
    for command in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *command], cwd=tmp_path, check=True, capture_output=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=tmp_path, check=True,
        capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert staged == ["app.py"]


def test_json_store_files_are_private(tmp_path: Path) -> None:
    """The JSON store's state, journals, lock and checkpoint are created 0600."""
    import stat

    from scarguard import FailureMemory

    with FailureMemory(tmp_path / "m.json") as memory:
        memory.record("run", {"n": 1}, error="boom")
        assert memory.verify().valid
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir()}
    assert modes and set(modes.values()) == {0o600}, modes
