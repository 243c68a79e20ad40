"""The default tenant derives from the project root: git top level, else the directory."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli import main
from scarguard.tenancy import derive_project, project_root

MISSING = "FileNotFoundError: [Errno 2] No such file or directory: 'notes.md'"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=folder, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def new_repo(folder: Path) -> Path:
    folder.mkdir(parents=True)
    git(folder, "init", "-q")
    return folder


@needs_git
def test_the_project_is_the_git_top_level_from_any_subdirectory(tmp_path: Path) -> None:
    """Deep inside a repository the project root is what `git rev-parse` says it is."""
    repo = new_repo(tmp_path / "web")
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    top = git(deep, "rev-parse", "--show-toplevel")
    assert project_root(deep) == Path(top).resolve()
    assert derive_project(deep) == str(Path(top).resolve())


@needs_git
def test_a_git_worktree_is_its_own_project(tmp_path: Path) -> None:
    """A linked worktree (whose .git is a file) is a root of its own, as git sees it."""
    repo = new_repo(tmp_path / "web")
    git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty",
        "-m", "start")  # fmt: skip
    git(repo, "worktree", "add", "-q", str(tmp_path / "web-fix"))
    inside = tmp_path / "web-fix"
    assert (inside / ".git").is_file()
    assert project_root(inside) == Path(git(inside, "rev-parse", "--show-toplevel")).resolve()
    assert derive_project(inside) != derive_project(repo)


def test_without_git_the_working_directory_is_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside any repository the project is the working directory, resolved."""
    folder = tmp_path / "plain"
    folder.mkdir()
    (tmp_path / "link").symlink_to(folder)
    monkeypatch.chdir(tmp_path / "link")
    assert derive_project() == str(folder.resolve())
    with FailureMemory(":memory:") as memory:
        assert memory.scope.project == str(folder.resolve())
        assert memory.scope.workspace == "default"


@needs_git
def test_a_shared_store_keeps_repositories_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ban learned in one repository refuses nothing in another, everything in itself."""
    shared = tmp_path / "shared.db"
    web, api = new_repo(tmp_path / "web"), new_repo(tmp_path / "api")
    (web / "docs").mkdir()
    args = {"path": "notes.md"}
    monkeypatch.chdir(web)
    with FailureMemory(shared) as memory:
        memory.record("read_file", args, error=MISSING)
        assert not memory.check("read_file", args).allowed
    monkeypatch.chdir(api)
    with FailureMemory(shared) as memory:
        assert memory.check("read_file", args).allowed
    monkeypatch.chdir(web / "docs")
    with FailureMemory(shared) as memory:
        assert not memory.check("read_file", args).allowed
    with FailureMemory(shared, project="explicit") as memory:
        assert memory.check("read_file", args).allowed


@needs_git
def test_scarguard_show_names_the_derived_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`scarguard show` in a repository reads that repository's tenant and says so."""
    repo = new_repo(tmp_path / "web")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    with FailureMemory() as memory:
        memory.record("read_file", {"path": "notes.md"}, error=MISSING)
    assert main(["show"]) == 0
    out = capsys.readouterr().out
    assert f"project {str(repo.resolve())!r} (from the git top level)" in out
    assert "notes.md" in out
    assert main(["show", "-p", "other"]) == 0
    out = capsys.readouterr().out
    assert "project 'other'" in out and "from the git top level" not in out
    assert "notes.md" not in out
