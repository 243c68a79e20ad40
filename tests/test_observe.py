"""Observation: constraints go stale when the workspace changes, on real files and git repos."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from conftest import dispose, make_store
from helpers.engine import memory_in
from helpers.git import git
from scarguard import FailureMemory, PromptGuard, ToolBlocked, guarded_tool
from scarguard.observe import MISSING, LocalObserver, Observer
from scarguard.observe import local as local_observer
from scarguard.testing import FakeClock

NO_BUILD = "make: *** No rule to make target 'build'.  Stop."


def tools(memory: FailureMemory, root: Path):
    """The coding agent's tools, guarded, acting on real files under ``root``."""

    @guarded_tool(memory)
    def read_file(path: str) -> str:
        return (root / path).read_text()

    @guarded_tool(memory)
    def edit_file(path: str, old_string: str, new_string: str) -> str:
        text = (root / path).read_text()
        if old_string not in text:
            raise ValueError(f"old_string not found in {path}")
        (root / path).write_text(text.replace(old_string, new_string, 1))
        return "edited"

    @guarded_tool(memory)
    def run(command: str) -> str:
        done = subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{done.stdout}{done.stderr}\nexit code {done.returncode}")
        return done.stdout

    @guarded_tool(memory)
    def make(target: str) -> str:
        done = subprocess.run(["make", target], cwd=root, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(done.stderr or done.stdout)
        return done.stdout

    return read_file, edit_file, run, make


def refused(call, *args: object, **kwargs: object) -> bool:
    try:
        call(*args, **kwargs)
    except ToolBlocked:
        return True
    except Exception:
        return False
    return False


def test_make_target_added_to_the_makefile_lifts_the_ban(tmp_path: Path) -> None:
    """`make(target="build")` refused after it failed runs again once the Makefile gains it."""
    (tmp_path / "Makefile").write_text("test:\n\t@echo testing\n")
    memory = memory_in(tmp_path)
    _, _, _, make = tools(memory, tmp_path)
    with pytest.raises(RuntimeError, match="No rule"):
        make("build")
    assert refused(make, "build")
    # an edit outside scarguard's tools (the agent's editor, a human): seen by observation
    (tmp_path / "Makefile").write_text("test:\n\t@echo testing\nbuild:\n\t@echo built\n")
    assert make("build").strip() == "built"
    assert memory.check("make", {"target": "build"}).allowed


def test_make_tool_ban_goes_stale_on_change_and_comes_back_at_once(tmp_path: Path) -> None:
    """A change makes the make ban stale; failing the same way again refuses it at once."""
    (tmp_path / "Makefile").write_text("test:\n\t@echo testing\n")
    memory = memory_in(tmp_path)
    _, _, _, make = tools(memory, tmp_path)
    with pytest.raises(RuntimeError):
        make("build")
    assert refused(make, "build")
    # a change that may define the target (a pattern rule make itself must resolve)
    (tmp_path / "Makefile").write_text("test:\n\t@echo testing\n%.o: %.c\n\tcc -c $<\n")
    with pytest.raises(RuntimeError, match="No rule"):
        make("build")  # the change allowed one run
    assert refused(make, "build")  # the same failure again: refused at once
    assert len(memory.recent_failures()) == 2


def test_a_make_tool_is_a_shell_command() -> None:
    """A tool named for a build program gets the shell action class."""
    memory = FailureMemory(":memory:")
    assert memory.describe("make", {"target": "build"}).action_class == "shell_exec"
    assert memory.describe("pytest", {"args": "-q"}).action_class == "shell_exec"
    assert memory.describe("go_to_definition", {"symbol": "x"}).action_class is None


def test_file_created_by_a_generator_lifts_the_missing_path(tmp_path: Path) -> None:
    """A read refused for a missing file runs once `python gen_notes.py` created it."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "gen_notes.py").write_text(
        "from pathlib import Path\nPath('docs/NOTES.md').write_text('# Notes\\n')\n"
    )
    memory = memory_in(tmp_path)
    read_file, _, run, _ = tools(memory, tmp_path)
    with pytest.raises(FileNotFoundError):
        read_file("docs/NOTES.md")
    assert refused(read_file, "docs/NOTES.md")
    run(f"{sys.executable} gen_notes.py")  # names no path the read needs
    assert read_file("docs/NOTES.md") == "# Notes\n"
    assert memory.constraints() == []




def test_file_brought_by_git_merge_lifts_the_missing_path(tmp_path: Path) -> None:
    """A read refused for spec/SPEC.md runs once `git merge` brought the file."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README.md").write_text("hello\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    git(tmp_path, "checkout", "-qb", "spec")
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("the spec\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "spec")
    git(tmp_path, "checkout", "-q", "main")
    memory = memory_in(tmp_path)
    read_file, _, _, _ = tools(memory, tmp_path)
    with pytest.raises(FileNotFoundError):
        read_file("spec/SPEC.md")
    assert refused(read_file, "spec/SPEC.md")
    git(tmp_path, "merge", "-q", "spec")  # outside the agent's tools altogether
    assert read_file("spec/SPEC.md") == "the spec\n"


def test_edit_whose_search_text_an_earlier_edit_inserted_runs(tmp_path: Path) -> None:
    """An edit refused for a missing search text runs once another edit inserted the text."""
    (tmp_path / "app.py").write_text("def main():\n    pass\n")
    memory = memory_in(tmp_path)
    _, edit_file, _, _ = tools(memory, tmp_path)
    with pytest.raises(ValueError):
        edit_file("app.py", "    return 1\n", "    return 2\n")
    assert refused(edit_file, "app.py", "    return 1\n", "    return 2\n")
    edit_file("app.py", "    pass\n", "    return 1\n")
    assert edit_file("app.py", "    return 1\n", "    return 2\n") == "edited"
    assert (tmp_path / "app.py").read_text() == "def main():\n    return 2\n"


def multi_edit_tool(memory: FailureMemory, root: Path):
    """The MCP filesystem server's ``edit_file``: its edits in order, each text found once."""

    @guarded_tool(memory)
    def edit_file(path: str, edits: list[dict[str, str]], dryRun: bool = False) -> str:
        text = (root / path).read_text()
        for edit in edits:
            if edit["oldText"] not in text:
                raise ValueError(f"Could not find exact match for edit:\n{edit['oldText']}")
            text = text.replace(edit["oldText"], edit["newText"], 1)
        (root / path).write_text(text)
        return "edited"

    return edit_file


def test_a_multi_edit_is_refused_at_its_repeat_until_its_search_text_is_there(
    tmp_path: Path,
) -> None:
    """The filesystem server's edit whose ``oldText`` is not in the file is refused at its
    first repeat; a change by hand that leaves the text out does not lift it, one that puts
    it in does. Of several edits, which failed is not known: any change of the file lifts."""
    app = tmp_path / "app.py"
    app.write_text("def main():\n    pass\n")
    memory = memory_in(tmp_path)
    edit_file = multi_edit_tool(memory, tmp_path)
    one = [{"oldText": "    return 1\n", "newText": "    return 2\n"}]
    with pytest.raises(ValueError, match="Could not find exact match"):
        edit_file("app.py", one)
    assert refused(edit_file, "app.py", one)
    app.write_text(app.read_text() + "# notes\n")
    assert refused(edit_file, "app.py", one)
    app.write_text("def main():\n    return 1\n")
    assert edit_file("app.py", one) == "edited"
    assert app.read_text() == "def main():\n    return 2\n"

    two = [{"oldText": "def main", "newText": "def run"}, {"oldText": "pass", "newText": "x"}]
    with pytest.raises(ValueError, match="Could not find exact match"):
        edit_file("app.py", two)
    assert refused(edit_file, "app.py", two)
    app.write_text("def main():\n    pass\n")
    assert edit_file("app.py", two) == "edited"


def test_a_successful_edit_lifts_edit_bans_it_disproves_without_observation(
    tmp_path: Path,
) -> None:
    """Tool evidence alone (a remote file) lifts the edit whose search text the edit put in."""
    memory = memory_in(tmp_path, observer=_Blind())
    args = {"path": "/remote/app.py", "old_string": "return 1", "new_string": "return 2"}
    memory.record("edit_file", args, error="old_string not found in /remote/app.py")
    assert not memory.check("edit_file", args).allowed
    other = {"path": "/remote/app.py", "old_string": "pass", "new_string": "print()"}
    memory.record("edit_file", other, ok=True)
    assert not memory.check("edit_file", args).allowed  # that edit put in other text
    memory.record(
        "edit_file", {"path": "/remote/app.py", "old_string": "pass", "new_string": "return 1"}
    )
    assert memory.check("edit_file", args).allowed


@pytest.mark.parametrize("spelling", ["./a.py", "x/../a.py", "a.py", "{root}/a.py"])
def test_one_path_one_call_however_spelled(tmp_path: Path, spelling: str) -> None:
    """`./a.py`, `a.py`, `x/../a.py` and the absolute path under the root are one call."""
    memory = memory_in(tmp_path)
    edit = {"path": "./a.py", "old_string": "x", "new_string": "y"}
    memory.record("edit_file", edit, error="old_string not found")
    other = {**edit, "path": spelling.format(root=tmp_path)}
    assert memory.describe("edit_file", other).fingerprint == memory.describe(
        "edit_file", edit
    ).fingerprint
    assert not memory.check("edit_file", other).allowed


def test_shell_commands_compare_by_their_words(tmp_path: Path) -> None:
    """`make  deploy` and `make deploy` are one call; quoted blanks still count."""
    memory = memory_in(tmp_path)
    assert memory.describe("bash", {"command": "make  deploy "}).fingerprint == (
        memory.describe("bash", {"command": "make deploy"}).fingerprint
    )
    assert memory.describe("bash", {"command": "echo 'a  b'"}).fingerprint != (
        memory.describe("bash", {"command": "echo 'a b'"}).fingerprint
    )


def test_error_text_files_and_manifests_make_a_shell_ban_stale(tmp_path: Path) -> None:
    """A failing `node server.js` goes stale when the file its error names changes."""
    (tmp_path / "server.js").write_text("const x = ;\n")
    memory = memory_in(tmp_path)
    args = {"command": "npm start"}
    error = "server.js:1\nconst x = ;\nSyntaxError: Unexpected token ';'"
    memory.record("bash", args, error=error)
    assert not memory.check("bash", args).allowed
    (ban,) = memory.constraints()
    names = {str(tmp_path / n) for n in ("server.js", "package.json", "Makefile")}
    assert names <= set(ban.params.observed)
    (tmp_path / "server.js").write_text("const x = 1;\n")
    assert memory.check("bash", args).allowed
    assert memory.constraints() == []  # the guard block states no contradicted fact
    assert memory.constraints(include_stale=True) == [ban]


def test_a_typescript_error_s_file_is_watched(tmp_path: Path) -> None:
    """tsc writes `src/a.ts(3,5): error TS2304`: fixing src/a.ts lifts the `npx tsc` ban."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.ts").write_text("let y = x;\n")
    memory = memory_in(tmp_path)
    args = {"command": "npx tsc --noEmit"}
    error = "src/a.ts(1,9): error TS2304: Cannot find name 'x'.\nFound 1 error."
    for _ in range(3):
        memory.record("bash", args, error=error)
    assert not memory.check("bash", args).allowed
    assert str(tmp_path / "src" / "a.ts") in memory.constraints()[0].params.observed
    (tmp_path / "src" / "a.ts").write_text("let y = 1;\n")
    assert memory.check("bash", args).allowed


@pytest.mark.parametrize(
    ("command", "manifest", "error"),
    [
        ("docker build -t app .", "Dockerfile",
         'ERROR: failed to solve: process "/bin/sh -c exit 1" did not complete successfully'),
        ("docker compose up -d", "compose.yaml",
         'service "web" refers to undefined volume data: invalid compose project'),
    ],
)  # fmt: skip
def test_a_fixed_dockerfile_or_compose_file_lifts_the_ban(
    tmp_path: Path, command: str, manifest: str, error: str
) -> None:
    """docker's errors name no file: the image and service definitions are manifests."""
    (tmp_path / manifest).write_text("broken\n")
    (tmp_path / "notes.txt").write_text("a\n")
    memory = memory_in(tmp_path)
    args = {"command": command}
    for _ in range(3):
        memory.record("bash", args, error=error)
    assert not memory.check("bash", args).allowed
    (tmp_path / "notes.txt").write_text("b\n")  # a change that cannot help
    assert not memory.check("bash", args).allowed
    (tmp_path / manifest).write_text("fixed\n")
    assert memory.check("bash", args).allowed


def test_guard_block_states_no_fact_the_workspace_contradicts(tmp_path: Path) -> None:
    """Once the missing file exists, the guard block no longer says it does not."""
    memory = memory_in(tmp_path)
    memory.record("read_file", {"path": "notes.md"}, error="No such file or directory: notes.md")
    assert "notes.md" in PromptGuard(memory).block()
    (tmp_path / "notes.md").write_text("hi\n")
    assert "notes.md" not in PromptGuard(memory).block()


class _Blind:
    """An observer that sees nothing (a tool acting on another machine)."""

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        return {}

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        return []


def _script(memory: FailureMemory, root: Path) -> list[bool]:
    """A remote tool's calls, with unrelated local changes in between; the decisions."""
    decisions = []
    remote = {"path": "data/remote.csv"}
    edit = {"path": "/srv/app.py", "old_string": "a", "new_string": "b"}
    for n in range(3):
        decisions.append(memory.check("sandbox_read", remote).allowed)
        memory.record("sandbox_read", remote, error="No such file or directory: data/remote.csv")
        decisions.append(memory.check("sandbox_edit", edit).allowed)
        memory.record("sandbox_edit", edit, error="old_string not found in /srv/app.py")
        (root / f"local{n}.txt").write_text("unrelated\n")  # local changes beside the root
        (root / "data").mkdir(exist_ok=True)
    return decisions


def test_tools_on_another_filesystem_are_refused_exactly_as_without_observation(
    tmp_path: Path,
) -> None:
    """Paths that do not exist under the root: the same refusals as with a blind observer."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    observed = _script(memory_in(tmp_path / "a"), tmp_path / "a")
    blind = _script(memory_in(tmp_path / "b", observer=_Blind()), tmp_path / "b")
    assert observed == blind == [True, True, False, False, False, False]


class _Counting:
    """The local observer, counting how often it is asked."""

    def __init__(self, root: Path) -> None:
        self.inner = LocalObserver(root)
        self.calls = 0

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        self.calls += 1
        return self.inner.observe(paths)

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        self.calls += 1
        return self.inner.changed(tokens)


def test_no_filesystem_call_on_the_clean_hot_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An allowed call on a tool without constraints neither observes nor stats a file."""
    observer = _Counting(tmp_path)
    memory = memory_in(tmp_path, observer=observer)
    memory.record("edit_file", {"path": "a.py", "old_string": "x"}, error="old_string not found")
    assert memory.constraints()  # another tool has constraints: the index is not empty
    observer.calls = 0
    stats: list[str] = []
    real_stat = os.stat

    def counting_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        stats.append(str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    @guarded_tool(memory)
    def read_file(path: str) -> str:
        return "content"

    monkeypatch.setattr(os, "stat", counting_stat)
    for _ in range(3):
        assert read_file("b.py") == "content"
    monkeypatch.undo()
    assert observer.calls == 0
    assert stats == []


def test_a_memory_opened_from_another_directory_revalidates_the_same_files(
    tmp_path: Path,
) -> None:
    """Tokens are kept by absolute path: a memory with another root judges the same files."""
    (tmp_path / "ws").mkdir()
    store = tmp_path / "m.db"
    with FailureMemory(store, root=tmp_path / "ws", clock=FakeClock()) as agent:
        agent.record("bash", {"command": "make x"}, error=NO_BUILD.replace("build", "x"))
    with FailureMemory(store, root=tmp_path, clock=FakeClock()) as elsewhere:
        assert len(elsewhere.constraints()) == 1  # nothing changed in the agent's workspace
        (tmp_path / "ws" / "Makefile").write_text("x:\n\techo x\n")
        assert elsewhere.constraints() == []


def test_local_observer_tokens(tmp_path: Path) -> None:
    """Tokens change with content, not with a rewrite of the same bytes; missing is MISSING."""
    observer = LocalObserver(tmp_path)
    assert isinstance(observer, Observer)
    (tmp_path / "a.txt").write_text("one")
    tokens = observer.observe(["a.txt", "gone.txt"])
    assert tokens["gone.txt"] == MISSING
    assert observer.changed(tokens) == []
    (tmp_path / "a.txt").write_text("one")  # same bytes again
    assert observer.changed(tokens) == []
    (tmp_path / "a.txt").write_text("two")
    (tmp_path / "gone.txt").write_text("here")
    assert sorted(observer.changed(tokens)) == ["a.txt", "gone.txt"]


def test_a_broken_observer_only_keeps_constraints(tmp_path: Path) -> None:
    """An observer that raises warns once and refuses as without observation."""

    class Broken(_Blind):
        def changed(self, tokens: Mapping[str, str]) -> list[str]:
            raise OSError("sandbox API down")

        def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
            return {p: "t" for p in paths}

    memory = memory_in(tmp_path, observer=Broken())
    memory.record("read_file", {"path": "x.md"}, error="No such file or directory: x.md")
    with pytest.warns(Warning, match="observer failed"):
        assert not memory.check("read_file", {"path": "x.md"}).allowed


@pytest.mark.parametrize("kind", ["memory", "sqlite", "json", "postgres"])
def test_state_tokens_persist_in_every_store(tmp_path: Path, kind: str) -> None:
    """A new process's memory on the same store sees the tokens and goes stale on change."""
    store = make_store(kind, tmp_path)
    try:
        (tmp_path / "ws").mkdir()
        first = FailureMemory(store, root=tmp_path / "ws", clock=FakeClock())
        first.record("read_file", {"path": "n.md"}, error="No such file or directory: n.md")
        second = FailureMemory(store, root=tmp_path / "ws", clock=FakeClock())
        (fact,) = second.constraints()
        assert fact.params.observed == {str(tmp_path / "ws" / "n.md"): MISSING}
        assert not second.check("read_file", {"path": "n.md"}).allowed
        (tmp_path / "ws" / "n.md").write_text("now here\n")
        assert second.check("read_file", {"path": "n.md"}).allowed
    finally:
        dispose(store)


def test_a_path_carrying_a_secret_is_not_kept(tmp_path: Path) -> None:
    """File names from the error text are stored only when redaction leaves them as they are."""
    memory = memory_in(tmp_path)
    secret = "sk-proj-" + "A" * 40
    error = f"/tmp/{secret}.json:1: SyntaxError: Unexpected token\nserver.js:2: error"
    memory.record("bash", {"command": "node server.js"}, error=error)
    (ban,) = memory.constraints()
    assert str(tmp_path / "server.js") in ban.params.observed
    assert not any(secret in path for path in ban.params.observed)


def test_an_object_that_is_not_an_observer_is_refused(tmp_path: Path) -> None:
    """observer= must implement the Observer protocol."""
    from scarguard import ConfigurationError

    with pytest.raises(ConfigurationError, match="observer"):
        FailureMemory(":memory:", root=tmp_path, observer=object())  # type: ignore[arg-type]


def test_async_tools_see_the_workspace_change_too(tmp_path: Path) -> None:
    """An async guarded read refused for a missing file runs once the file exists."""
    import asyncio

    memory = memory_in(tmp_path)

    @guarded_tool(memory)
    async def read_file(path: str) -> str:
        return (tmp_path / path).read_text()

    async def script() -> str:
        with pytest.raises(FileNotFoundError):
            await read_file("late.md")
        with pytest.raises(ToolBlocked):
            await read_file("late.md")
        (tmp_path / "late.md").write_text("arrived\n")
        return await read_file("late.md")

    assert asyncio.run(script()) == "arrived\n"


PYTEST_FAILED = "FAILED tests/test_x.py::test_a - assert 1 == 2\nexit code 1"


def _settle(*paths: Path) -> None:
    """Date ``paths`` an hour back: what is read of them now may be remembered."""
    past = time.time_ns() - 3600 * 10**9
    for path in paths:
        os.utime(path, ns=(past, past))


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the files the local observer opens and the directories it lists."""
    counts = {"open": 0, "listdir": 0}
    real_open, real_listdir = open, os.listdir

    def counting_open(*args: object, **kwargs: object) -> object:
        counts["open"] += 1
        return real_open(*args, **kwargs)  # type: ignore[call-overload]

    def counting_listdir(path: str) -> list[str]:
        counts["listdir"] += 1
        return real_listdir(path)

    monkeypatch.setattr(local_observer, "open", counting_open, raising=False)
    monkeypatch.setattr(os, "listdir", counting_listdir)
    return counts


def test_a_remembered_read_is_not_trusted_once_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A settled file is read once; a change to it (same size) is seen, and it is read again."""
    observer = LocalObserver(tmp_path)
    manifest = tmp_path / "pyproject.toml"
    manifest.write_text("[project]\nname = 'a'\n")
    _settle(manifest)
    counts = _counting(monkeypatch)
    first = observer.observe([str(manifest)])
    assert observer.observe([str(manifest)]) == first
    assert counts["open"] == 1  # the second token came from the remembered digest
    manifest.write_text("[project]\nname = 'b'\n")
    assert observer.changed(first) == [str(manifest)]
    assert observer.observe([str(manifest)]) != first


def test_a_file_rewritten_within_one_timestamp_tick_is_read_every_time(tmp_path: Path) -> None:
    """Same size, same mtime, same inode, new bytes: a recent file is never taken as read."""
    observer = LocalObserver(tmp_path)
    makefile = tmp_path / "Makefile"
    makefile.write_text("a:\n")
    recent = time.time_ns()
    os.utime(makefile, ns=(recent, recent))
    first = observer.observe([str(makefile)])
    makefile.write_text("b:\n")
    os.utime(makefile, ns=(recent, recent))
    assert observer.observe([str(makefile)]) != first


def test_a_remembered_listing_sees_a_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Missing paths of a settled directory are listed once, until an entry is added."""
    observer = LocalObserver(tmp_path)
    paths = [str(tmp_path / "Cargo.toml"), str(tmp_path / "go.mod")]
    _settle(tmp_path)
    counts = _counting(monkeypatch)
    for _ in range(2):
        assert observer.observe(paths) == dict.fromkeys(paths, MISSING)
    assert counts["listdir"] == 1
    (tmp_path / "go.mod").write_text("module x\n")
    tokens = observer.observe(paths)
    assert tokens[paths[0]] == MISSING
    assert tokens[paths[1]] != MISSING
    assert observer.changed(dict.fromkeys(paths, MISSING)) == [paths[1]]


@pytest.mark.parametrize("change", ["edit", "create"])
def test_a_settled_workspace_still_lifts_when_a_manifest_changes(
    tmp_path: Path, change: str
) -> None:
    """Repeated failures over remembered reads: editing or adding a manifest still lifts."""
    manifest = tmp_path / "pyproject.toml"
    manifest.write_text("[project]\nname = 'a'\n")
    _settle(manifest, tmp_path)
    memory = memory_in(tmp_path)
    for _ in range(3):
        memory.record("bash", {"command": "pytest -q"}, error=PYTEST_FAILED)
    assert len(memory.constraints()) == 1
    if change == "edit":
        manifest.write_text("[project]\nname = 'b'\n")
    else:
        (tmp_path / "tox.ini").write_text("[tox]\n")
    assert memory.constraints() == []
    memory.record("bash", {"command": "pytest -q"}, error=PYTEST_FAILED)
    assert len(memory.constraints()) == 1  # counted, with fresh tokens: refused at once


def test_one_observer_answers_each_set_of_paths_on_its_own(tmp_path: Path) -> None:
    """Sets of paths sharing folders, asked in turn, each get their own tokens."""
    observer = LocalObserver(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "sub" / "b.txt").write_text("b")
    _settle(tmp_path, tmp_path / "sub", tmp_path / "a.txt")
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "sub" / "b.txt")
    gone, gone_too = str(tmp_path / "gone"), str(tmp_path / "sub" / "gone")
    for _ in range(2):
        both = observer.observe([a, gone, b, gone_too])
        assert both[gone] == both[gone_too] == MISSING
        assert MISSING not in (both[a], both[b])
        assert observer.observe([gone_too, b]) == {gone_too: MISSING, b: both[b]}
        assert observer.observe([a]) == {a: both[a]}
