"""A repair made outside the guarded tools lifts the ban it ends (real git, real shell).

A person, another agent or a script run by hand can supply what a failure lacked: a branch,
a tag, an upstream, a directory. Nothing passes through the guard then, so only observation
can lift the ban. Each case runs the real command before and after the repair, so a ban kept
after it is a refusal of a call that would now succeed; and each checks that a change which
cannot help does not lift it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from shlex import quote as shlex_quote

import pytest

from helpers.engine import fail, memory_in
from helpers.git import git
from scarguard import FailureMemory, ToolBlocked, guarded_tool
from scarguard.adapters._shell import GIT_STATE, MANIFESTS, error_files, manifests_for
from scarguard.learning._beside import beside_files
from scarguard.learning._imports import imported_files
from scarguard.learning._missing import missing_paths
from scarguard.learning._ports import connected_port
from scarguard.observe import LocalObserver

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def sh(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **IDENTITY}
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, env=env
    )


def banned(memory: FailureMemory, root: Path, command: str) -> dict[str, str]:
    """Run ``command`` for real (it fails), record it twice, expect it refused."""
    done = sh(root, command)
    assert done.returncode != 0, done.stdout
    args = {"command": command}
    for _ in range(2):
        fail(memory, "bash", args, f"exit {done.returncode}: {done.stderr or done.stdout}")
    assert not memory.check("bash", args).allowed
    return args


def repository(root: Path, *, remote: bool = False) -> None:
    git(root, "init", "-q", "-b", "main")
    git(root, "commit", "-q", "--allow-empty", "-m", "start")
    if remote:
        bare = root.parent / f"{root.name}-remote.git"
        git(root.parent, "init", "-q", "--bare", str(bare))
        git(root, "remote", "add", "origin", str(bare))


GIT_CASES = [
    # (failing command, the repair made by hand, needs a remote)
    ("git checkout feature", "git branch feature", False),
    ("git merge topic", "git branch topic", False),
    ("git rebase develop", "git branch develop", False),
    ("git diff release..main", "git branch release", False),
    ("git show v1.0", "git tag v1.0", False),
    ("git push", "git push -q -u origin main", True),
    ("git pull", "git push -q origin main && git branch -q --set-upstream-to=origin/main", True),
    ("git log origin/main", "git push -q origin main", True),
    ("git stash pop", "echo changed > tracked && git stash -q", False),
]


@needs_git
@pytest.mark.parametrize(("command", "repair", "remote"), GIT_CASES)
def test_a_git_repair_by_hand_lifts_the_ban(
    tmp_path: Path, command: str, repair: str, remote: bool
) -> None:
    """Branches, tags, upstreams, remote branches and the stash are watched for git."""
    root = tmp_path / "repo"
    root.mkdir()
    repository(root, remote=remote)
    (root / "tracked").write_text("one\n")
    git(root, "add", "tracked")
    git(root, "commit", "-q", "-m", "tracked")
    memory = memory_in(root)
    args = banned(memory, root, command)
    (root / "notes.txt").write_text("a change no git command reads\n")
    assert not memory.check("bash", args).allowed
    assert sh(root, repair).returncode == 0
    assert memory.check("bash", args).allowed
    assert sh(root, command).returncode == 0


SHELL_CASES = [
    ("ls build", "mkdir build"),
    ("cd src && ls", "mkdir src"),
    ("cat README", "echo hello > README"),
    ("touch logs/today", "mkdir logs"),
    ("python3 -c 'open(\"data\").read()'", "echo 1 > data"),
]


@pytest.mark.parametrize(("command", "repair"), SHELL_CASES)
def test_creating_the_missing_path_by_hand_lifts_the_ban(
    tmp_path: Path, command: str, repair: str
) -> None:
    """A path the command names plainly (no dot, no slash) is watched: its error names it."""
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / "other").mkdir()  # something else created: the named path is still missing
    assert not memory.check("bash", args).allowed
    assert sh(tmp_path, repair).returncode == 0
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


@pytest.mark.parametrize(
    ("tool", "key", "absolute"),
    [
        ("read_file", "relative_path", False),  # Serena's MCP tools
        ("read_file", "absolute_path", True),  # Gemini CLI
        ("view_file", "AbsolutePath", True),  # Windsurf
        ("replace_file_content", "TargetFile", True),
        ("read_file", "path", False),
    ],
)
def test_a_file_tool_s_path_argument_is_its_target_and_a_file_made_by_hand_lifts(
    tmp_path: Path, tool: str, key: str, absolute: bool
) -> None:
    """The path arguments of popular agents' file tools are targets, so the file is watched:
    created by hand, a read refused as missing runs again; another file created does not lift.
    """
    memory = memory_in(tmp_path)
    path = str(tmp_path / "notes.md") if absolute else "notes.md"
    args = {key: path}
    assert memory.describe(tool, args).targets == ("notes.md",)
    for _ in range(2):
        fail(memory, tool, args, "Error: file not found: notes.md")
    assert not memory.check(tool, args).allowed
    (tmp_path / "other.md").write_text("x\n")
    assert not memory.check(tool, args).allowed
    (tmp_path / "notes.md").write_text("# notes\n")
    assert memory.check(tool, args).allowed


@pytest.mark.parametrize(
    ("error", "paths"),
    [
        ("ls: cannot access 'build': No such file or directory", ("build",)),
        ("bash: line 1: cd: src: No such file or directory", ("src",)),
        ("cd: no such file or directory: src", ("src",)),  # zsh
        ("cat: README: No such file or directory", ("README",)),
        ("sed: can't read conf.ini: No such file or directory", ("conf.ini",)),
        ("touch: cannot touch 'a/b': No such file or directory", ("a/b", "a")),
        ("FileNotFoundError: [Errno 2] No such file or directory: 'data/x.csv'",
         ("data/x.csv", "data")),
        ("Error: ENOENT: no such file or directory, open '/srv/app/config.json'",
         ("/srv/app/config.json", "/srv/app")),
        ("python3: can't open file '/w/tool.py': [Errno 2] No such file or directory",
         ("/w/tool.py", "/w")),
        ("ls: cannot access 'my dir/x': No such file or directory", ("my dir/x", "my dir")),
        ("ls: cannot access \u2018build\u2019: No such file or directory", ("build",)),
        ("make: *** No rule to make target 'x'.  Stop.", ()),
        ("", ()),
        ("No such file or directory", ()),
    ],
)  # fmt: skip
def test_the_paths_an_error_says_are_missing(error: str, paths: tuple[str, ...]) -> None:
    assert missing_paths(error) == paths


def test_at_most_eight_paths_are_taken_from_a_long_error() -> None:
    error = "\n".join(f"cat: f{i}: No such file or directory" for i in range(50))
    assert missing_paths(error) == tuple(f"f{i}" for i in range(8))


READS_CONFIG = (
    'import json\nPATH = {!r}\nsettings = json.load(open(PATH))\nprint(settings["port"])\n'
)
"""A script reading its configuration: the line that fails (in the traceback) names no file."""
BESIDE_CASES = [
    # (the script run, the file it reads)
    ("app.py", "config.json"),
    ("tools/run.py", "tools/settings.json"),
    ("tools/run.py", "tools/config/app.json"),
    ("report.py", "data/input.json"),
    ("report.py", "app.yaml"),
]


@pytest.mark.parametrize(("script", "config"), BESIDE_CASES)
def test_fixing_the_configuration_a_script_reads_lifts_its_ban(
    tmp_path: Path, script: str, config: str
) -> None:
    """A script failing on its configuration (``KeyError: 'port'``), which neither its
    command nor its error names, is allowed again once the file beside it is fixed."""
    for name, text in ((script, ""), (config, "{}\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    # the script names its file itself: only listing the folders finds it
    (tmp_path / script).write_text(READS_CONFIG.format(config))
    command = f"{shlex_quote(sys.executable)} {script}"
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / "app.log").write_text("a log line\n")  # what the program itself writes
    (tmp_path / "notes.md").write_text("notes\n")
    assert not memory.check("bash", args).allowed
    (tmp_path / config).write_text('{"port": 8080}\n')
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).stdout.strip() == "8080"


def test_a_crowded_folder_is_not_looked_into(tmp_path: Path) -> None:
    """A folder of more than a thousand names is a data dump: none of its files is watched."""
    (tmp_path / "app.py").write_text("")
    (tmp_path / "data").mkdir()
    for i in range(1001):
        (tmp_path / "data" / f"row{i}.json").write_text("{}")
    (tmp_path / "config.yaml").write_text("a: 1\n")
    observer = LocalObserver(tmp_path)
    assert beside_files(["app.py"], observer.names) == ("config.yaml",)
    (tmp_path / "data" / "row0.json").unlink()
    assert beside_files(["app.py"], observer.names)[:2] == ("config.yaml", "data/row1.json")


CODE_UNDER_TEST = {
    # layout: (the test's import, the module files, the one whose fix makes the test pass)
    "flat": ("from calc import limit", {"calc.py": "from consts import LIMIT\n"
             "def limit():\n    return LIMIT\n", "consts.py": "LIMIT = 2\n"}, "consts.py"),
    "package": ("from pkg.calc import limit", {"pkg/__init__.py": "", "pkg/calc.py":
                "from .consts import LIMIT\ndef limit():\n    return LIMIT\n",
                "pkg/consts.py": "LIMIT = 2\n"}, "pkg/consts.py"),
    "src layout": ("from pkg import calc\nlimit = calc.limit", {"src/pkg/__init__.py": "",
                   "src/pkg/calc.py": "from pkg.consts import (\n    LIMIT,\n)\n"
                   "def limit():\n    return LIMIT\n", "src/pkg/consts.py": "LIMIT = 2\n"},
                   "src/pkg/consts.py"),
}  # fmt: skip


@pytest.mark.parametrize("layout", list(CODE_UNDER_TEST))
def test_fixing_the_code_under_test_by_hand_lifts_the_test_run(
    tmp_path: Path, layout: str
) -> None:
    """A failing test names its test file only; the modules it imports, and theirs, are
    watched, so a fix of the code under test lets the same test run again."""
    imports, modules, culprit = CODE_UNDER_TEST[layout]
    for name, text in {**modules, "unused.py": "X = 1\n"}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_limit.py").write_text(
        f"import os\nimport pytest\n{imports}\n\ndef test_limit():\n    assert limit() == 3\n"
    )
    path = "src" if layout == "src layout" else "."
    python = shlex_quote(sys.executable)
    command = f"PYTHONPATH={path} {python} -m pytest -q -p no:cacheprovider tests/test_limit.py"
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / "unused.py").write_text("X = 2\n")  # a module the test does not import
    assert not memory.check("bash", args).allowed
    (tmp_path / culprit).write_text("LIMIT = 3\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


SUITE_RUNS = [
    # how the suite is run: no test file named, so pytest collects them
    "{python} -m pytest -q -p no:cacheprovider",
    "{python} -m pytest -q -p no:cacheprovider tests",
    "{python} -m pytest -q -p no:cacheprovider -k limit tests/unit",
    "cd tests && {python} -m pytest -q -p no:cacheprovider .",
]


@pytest.mark.parametrize("run", SUITE_RUNS)
def test_fixing_the_code_a_collected_test_imports_lifts_the_suite_run(
    tmp_path: Path, run: str
) -> None:
    """``pytest`` names no test file: the files it collects from the folders it is given
    (none: its defaults) are watched, and their imports, so a fix of the code under test by
    hand lets the suite run again; a file made beside them does not."""
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("LIMIT = 2\n")
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_limit.py").write_text(
        "from pkg import LIMIT\n\ndef test_limit():\n    assert LIMIT == 3\n"
    )
    command = run.format(python=shlex_quote(sys.executable))
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / "notes.md").write_text("what I tried\n")  # beside the tests: cannot help
    assert not memory.check("bash", args).allowed
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("LIMIT = 3\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


def test_a_suite_with_no_tests_runs_again_once_a_test_file_is_made(tmp_path: Path) -> None:
    """``pytest`` in a folder with no tests (exit 5) runs again once a test file is made."""
    command = f"{shlex_quote(sys.executable)} -m pytest -q -p no:cacheprovider"
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / "test_new.py").write_text("def test_new():\n    assert True\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


@pytest.mark.parametrize("glob", ["*.txt", "data/*.txt"])
def test_a_glob_runs_again_once_a_file_matches(tmp_path: Path, glob: str) -> None:
    """``wc -l *.txt`` with nothing matching: a matching file made by hand lifts it, in the
    root as in a folder (the root was watched as a name no listing holds: never changed)."""
    (tmp_path / "data").mkdir()
    command = f"wc -l {glob}"
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (tmp_path / glob.replace("*", "a")).write_text("one\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


def test_writing_into_a_missing_folder_is_allowed_once_it_is_made(tmp_path: Path) -> None:
    """``write_file("out/report.txt")`` failing for a missing ``out`` is lifted by ``mkdir
    out``: the file is still missing then, its folder is not."""
    memory = memory_in(tmp_path)

    @guarded_tool(memory)
    def write_file(path: str, content: str) -> str:
        (tmp_path / path).write_text(content)
        return "written"

    with pytest.raises(FileNotFoundError):
        write_file("out/report.txt", "total: 3")
    with pytest.raises(ToolBlocked):  # (a missing path: refused after one failure)
        write_file("out/report.txt", "total: 3")
    (tmp_path / "elsewhere").mkdir()
    assert not memory.check("write_file", {"path": "out/report.txt", "content": "total: 3"}).allowed
    (tmp_path / "out").mkdir()
    assert write_file("out/report.txt", "total: 3") == "written"


def _tree(root: Path, files: dict[str, str]) -> LocalObserver:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return LocalObserver(root)


def test_imports_are_followed_to_workspace_modules_only(tmp_path: Path) -> None:
    observer = _tree(tmp_path, {
        "t.py": "import os, json\nimport a.b as ab\nfrom c import *\nfrom d import (\n  x,\n)\n"
                "from numpy import array\n    from e import f  # indented: still an import\n",
        "a/__init__.py": "", "a/b.py": "from . import sibling\nfrom ..top import y\n",
        "a/sibling.py": "", "top.py": "", "c.py": "", "d/__init__.py": "from .x import z\n",
        "d/x.py": "", "e.py": "", "os.py": "",  # (a module named like the standard one)
    })  # fmt: skip
    found = imported_files(["t.py"], observer.read, observer.names)
    # (x is imported from d on the next line: found through d/__init__.py, a level later)
    # (from . import sibling: the package's __init__.py and the module sibling)
    assert found == ("a/b.py", "c.py", "d/__init__.py", "e.py", "a/__init__.py", "a/sibling.py",
                     "top.py", "d/x.py")  # fmt: skip
    assert imported_files(["/abs/t.py", "notes.md"], observer.read, observer.names) == ()


def test_the_import_walk_is_bounded(tmp_path: Path) -> None:
    """Three levels deep and 24 modules at most: a large project costs a bounded walk."""
    chain = {f"m{i}.py": f"import m{i + 1}\n" for i in range(10)}
    observer = _tree(tmp_path, chain)
    assert imported_files(["m0.py"], observer.read, observer.names) == ("m1.py", "m2.py", "m3.py")
    wide = {"w.py": "".join(f"import n{i}\n" for i in range(40))}
    wide.update({f"n{i}.py": "" for i in range(40)})
    observer = _tree(tmp_path, wide)
    assert len(imported_files(["w.py"], observer.read, observer.names)) == 24


def test_a_remembered_walk_follows_a_new_import_and_a_new_module(tmp_path: Path) -> None:
    """A walk is remembered only while every file and folder it read is unchanged."""
    observer = _tree(tmp_path, {"t.py": "import a\nimport later\n", "a.py": ""})
    assert imported_files(["t.py"], observer.read, observer.names) == ("a.py",)
    (tmp_path / "later.py").write_text("")  # the module it imports now exists
    assert imported_files(["t.py"], observer.read, observer.names) == ("a.py", "later.py")
    (tmp_path / "t.py").write_text("import b\n")  # its imports changed
    (tmp_path / "b.py").write_text("")
    assert imported_files(["t.py"], observer.read, observer.names) == ("b.py",)


needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


@needs_node
def test_fixing_the_module_a_node_test_imports_lifts_the_test_run(tmp_path: Path) -> None:
    """``node --test`` names its test file as a ``file://`` URL in the stack; the module the
    test imports (``../src/calc.mjs``) is watched through the test's imports."""
    (tmp_path / "src").mkdir()
    (tmp_path / "test").mkdir()
    (tmp_path / "src" / "calc.mjs").write_text("export function add(a, b) { return a - b; }\n")
    (tmp_path / "src" / "other.mjs").write_text("export const x = 1;\n")
    (tmp_path / "test" / "calc.test.mjs").write_text(
        "import { test } from 'node:test';\nimport assert from 'node:assert';\n"
        "import { add } from '../src/calc.mjs';\n"
        "test('add', () => { assert.strictEqual(add(1, 2), 3); });\n"
    )
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, "node --test test/")
    (tmp_path / "src" / "other.mjs").write_text("export const x = 2;\n")
    assert not memory.check("bash", args).allowed
    (tmp_path / "src" / "calc.mjs").write_text("export function add(a, b) { return a + b; }\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, "node --test test/").returncode == 0


def test_javascript_and_typescript_imports_resolve_as_node_and_tsc_do(tmp_path: Path) -> None:
    observer = _tree(tmp_path, {
        "test/a.test.ts": "import { add } from '../src/calc.js';\nimport x from 'lodash';\n"
                          "const lib = require('../lib');\nexport * from \"./helpers\";\n"
                          "const later = await import('../src/late');\n",
        "src/calc.ts": "import './side.mjs'\n", "src/side.mjs": "", "lib/index.js": "",
        "test/helpers.tsx": "", "src/late.cjs": "", "node_modules/lodash/index.js": "",
    })  # fmt: skip
    found = imported_files(["test/a.test.ts"], observer.read, observer.names)
    assert found == ("src/calc.ts", "lib/index.js", "test/helpers.tsx", "src/late.cjs",
                     "src/side.mjs")  # fmt: skip


def test_a_go_file_depends_on_its_package_s_files(tmp_path: Path) -> None:
    """Go's package is its folder: a failing ``calc_test.go`` watches ``calc.go`` beside it."""
    observer = _tree(tmp_path, {
        "calc/calc_test.go": "package calc\n", "calc/calc.go": "package calc\n",
        "calc/util.go": "package calc\n", "calc/README.md": "", "main.go": "package main\n",
    })  # fmt: skip
    found = imported_files(["calc/calc_test.go"], observer.read, observer.names)
    assert found == ("calc/calc.go", "calc/util.go")


def test_node_stack_traces_name_their_files_as_urls() -> None:
    trace = (
        "    at TestContext.<anonymous> (file:///srv/app/test/a%20b.test.mjs:4:28)\n"
        "    at Test.run (node:internal/test_runner/test:796:25)\n"
        "    at file:///srv/app/src/calc.mjs:2:3\n"
    )
    files = error_files(trace)
    assert "/srv/app/test/a b.test.mjs" in files and "/srv/app/src/calc.mjs" in files
    assert not any(f.startswith(("node:", "file:")) for f in files)


def test_paths_named_after_a_cd_are_the_folder_s(tmp_path: Path) -> None:
    """``cd sub && cat notes``: the error's ``notes`` is ``sub/notes``; ``cd app && pytest``:
    the test file its failure names, and the module it imports, are under ``app``."""
    (tmp_path / "sub").mkdir()
    memory = memory_in(tmp_path)
    missing = banned(memory, tmp_path, "cd sub && cat notes")
    (tmp_path / "sub" / "other").write_text("not the file it reads\n")
    assert not memory.check("bash", missing).allowed
    (tmp_path / "sub" / "notes").write_text("found\n")
    assert memory.check("bash", missing).allowed
    pushed = banned(memory, tmp_path, "pushd sub && cat later")
    (tmp_path / "sub" / "later").write_text("found\n")
    assert memory.check("bash", pushed).allowed

    app = tmp_path / "app"
    (app / "tests").mkdir(parents=True)
    (app / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (app / "tests" / "test_calc.py").write_text(
        "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    python = shlex_quote(sys.executable)
    command = f"cd app && PYTHONPATH=. {python} -m pytest -q -p no:cacheprovider tests"
    run = banned(memory, tmp_path, command)
    (app / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    assert memory.check("bash", run).allowed
    assert sh(tmp_path, command).returncode == 0


@needs_git
def test_a_git_tool_watches_the_repository_it_is_given(tmp_path: Path) -> None:
    """``git_checkout(repo_path=...)`` (an MCP git server's shape) and ``git -C repo``, run
    from another folder: that repository's branches are watched, not the root's."""
    repo = tmp_path / "repo"
    repo.mkdir()
    repository(repo)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    memory = memory_in(workspace)

    @guarded_tool(memory)
    def git_checkout(repo_path: str, branch_name: str) -> str:
        done = subprocess.run(
            ["git", "checkout", "-q", branch_name], cwd=repo_path, capture_output=True, text=True
        )
        if done.returncode:
            raise RuntimeError(f"git checkout failed: {done.stderr}")
        return f"on {branch_name}"

    tool_args = {"repo_path": str(repo), "branch_name": "feature"}
    with pytest.raises(RuntimeError):
        git_checkout(**tool_args)
    with pytest.raises(ToolBlocked):
        git_checkout(**tool_args)
    args = banned(memory, workspace, f"git -C {shlex_quote(str(repo))} show v2")
    git(repo, "branch", "feature")
    git(repo, "tag", "v2")
    assert git_checkout(**tool_args) == "on feature"
    assert memory.check("bash", args).allowed


@needs_git
@pytest.mark.parametrize("where", ["~/.gitconfig", "$XDG_CONFIG_HOME/git/config"])
def test_a_git_identity_set_by_hand_lifts_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``git commit`` with no identity ("Please tell me who you are") is allowed again once
    ``git config --global user.email ...`` is run by hand: the user's git files are watched."""
    home, xdg, repo = tmp_path / "home", tmp_path / "xdg", tmp_path / "repo"
    for folder in (home, xdg, repo):
        folder.mkdir()
    for name in (*IDENTITY, "EMAIL", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)

    run("git init -q -b main && echo a > a && git add a")
    memory = memory_in(repo)
    command = "git commit -qm first"
    args = {"command": command}
    for _ in range(2):
        done = run(command)
        assert done.returncode != 0 and "who you are" in done.stderr
        fail(memory, "bash", args, f"exit {done.returncode}: {done.stderr}")
    assert not memory.check("bash", args).allowed
    run("echo '# notes' > notes.txt")  # a change a commit's outcome does not depend on
    assert not memory.check("bash", args).allowed
    config = "--global" if where.startswith("~") else f"--file {xdg}/git/config"
    if not where.startswith("~"):
        (xdg / "git").mkdir()
    run(f"git config {config} user.email me@example.com && git config {config} user.name me")
    assert memory.check("bash", args).allowed
    assert run(command).returncode == 0


def test_an_install_into_the_interpreter_outside_the_workspace_lifts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python3 -c 'import left_pad'`` refused for ``No module named`` is allowed again once
    the module is installed into that interpreter's ``site-packages`` (a virtual
    environment outside the workspace, first on ``PATH``), as ``pip install`` in a terminal
    would."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    monkeypatch.setenv("PATH", f"{env / 'bin'}{os.pathsep}{os.environ['PATH']}")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    memory = memory_in(workspace)
    args = banned(memory, workspace, "python3 -c 'import left_pad'")
    (tmp_path / "unrelated").mkdir()
    assert not memory.check("bash", args).allowed
    (site,) = env.glob("lib/python3*/site-packages")
    (site / "left_pad.py").write_text("")
    assert memory.check("bash", args).allowed
    assert sh(workspace, "python3 -c 'import left_pad'").returncode == 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_server_refused_for_a_port_in_use_is_allowed_once_the_port_is_free(
    tmp_path: Path,
) -> None:
    """``python3 -m http.server PORT`` failing with ``Address already in use`` (a real
    server holds the port) is refused while it does, and allowed once that server stops,
    stopped outside the guarded tools."""
    port = _free_port()
    holder = subprocess.Popen(
        [sys.executable, "-c", READY.format(port=port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "listening"
        command = f"{shlex_quote(sys.executable)} -m http.server {port} --bind 127.0.0.1"
        memory = memory_in(tmp_path)
        args = banned(memory, tmp_path, command)
        (ban,) = memory.constraints()
        assert ban.params.depends == ("port", str(port))
        assert not memory.check("bash", args).allowed  # still held: still refused
    finally:
        holder.kill()
        holder.wait()
    assert memory.check("bash", args).allowed


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_a_client_refused_while_nothing_listens_is_allowed_once_a_server_does(
    tmp_path: Path,
) -> None:
    """``curl -s http://127.0.0.1:PORT/`` fails silently (exit 7) while nothing listens: it
    stays refused through an unrelated change, and is allowed once a server started outside
    the guarded tools listens on the port."""
    port = _free_port()
    command = f"curl -s -o /dev/null -m 5 http://127.0.0.1:{port}/"
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, command)
    (ban,) = memory.constraints()
    assert ban.params.depends == ("listener", str(port))
    (tmp_path / "notes.txt").write_text("unrelated")
    assert not memory.check("bash", args).allowed
    holder = subprocess.Popen(
        [sys.executable, "-c", READY.format(port=port)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "listening"
        assert memory.check("bash", args).allowed
    finally:
        holder.kill()
        holder.wait()


def test_the_local_port_a_client_connects_to() -> None:
    def port(command: str) -> int | None:
        args = {"command": command}
        return connected_port(args, frozenset(command.replace("/", " ").split()))

    assert port("curl -s http://localhost:8000/health") == 8000
    assert port("curl -sf 127.0.0.1:5000 && echo up") == 5000
    assert port("nc -z localhost 5432") == 5432
    assert port("wget -q -O- http://[::1]:9000/x") == 9000
    assert port("curl http://example.com:8000/") is None  # not this machine
    assert port("curl localhost:8000 localhost:9000") is None  # which one failed?
    assert port("python3 -m http.server 8000 --bind 127.0.0.1") is None  # a server
    assert port("python3 client.py --url http://localhost:8000") is None  # not a client


READY = (
    "import socket, sys, time\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(('127.0.0.1', {port})); s.listen(); print('listening', flush=True); time.sleep(60)\n"
)
"""A process that holds a port until it is killed."""


def test_a_rust_file_depends_on_its_crate_and_its_modules(tmp_path: Path) -> None:
    """``tests/it.rs`` failing (``cargo test``) watches ``src/lib.rs`` and the modules it
    declares (``mod calc;``: ``src/calc.rs``; ``mod util;`` in ``calc.rs``: ``src/calc/
    util.rs``), in this crate and in one under ``crates/``."""
    observer = _tree(tmp_path, {
        "Cargo.toml": "", "tests/it.rs": "use app::add;\n", "src/lib.rs": "pub mod calc;\n",
        "src/calc.rs": "mod util;\nmod gone;\n", "src/calc/util.rs": "", "src/main.rs": "",
        "crates/web/tests/api.rs": "", "crates/web/src/lib.rs": "mod routes;\n",
        "crates/web/src/routes/mod.rs": "",
    })  # fmt: skip
    assert imported_files(["tests/it.rs"], observer.read, observer.names) == (
        "src/lib.rs", "src/main.rs", "src/calc.rs", "src/calc/util.rs"
    )  # fmt: skip
    assert imported_files(["crates/web/tests/api.rs"], observer.read, observer.names) == (
        "crates/web/src/lib.rs", "crates/web/src/routes/mod.rs"
    )  # fmt: skip


def test_a_tool_or_a_versioned_program_reads_what_its_program_reads() -> None:
    """``git_checkout`` reads what ``git`` reads, ``python3.12`` what ``python`` does; a
    program merely starting like one (``go-task``, ``pip-compile``) keeps every manifest."""
    assert manifests_for("git_checkout") == manifests_for("git") >= GIT_STATE
    assert manifests_for("python3.12") == manifests_for("/usr/bin/python3.11")
    assert "pyproject.toml" in manifests_for("python3.12")
    assert "Makefile" not in manifests_for("python3.12")
    assert manifests_for("go-task") is MANIFESTS and manifests_for("pip-compile") is MANIFESTS


needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")


@needs_npm
def test_an_npm_script_s_missing_program_installed_by_hand_lifts_the_ban(tmp_path: Path) -> None:
    """``npm run build`` whose script's program is missing (dash's ``sh: 1: tool: not
    found``, before ``npm install``) is allowed again once the program is in
    ``node_modules/.bin``, although ``package.json`` and its lock did not change."""
    (tmp_path / "package.json").write_text(
        '{"name": "app", "version": "1.0.0", "scripts": {"build": "made-up-compiler"}}\n'
    )
    memory = memory_in(tmp_path)
    args = banned(memory, tmp_path, "npm run build")
    assert memory.constraints()[0].signature == "command_not_found"
    (tmp_path / "notes.md").write_text("a change that cannot help\n")
    assert not memory.check("bash", args).allowed
    bin_folder = tmp_path / "node_modules" / ".bin"
    bin_folder.mkdir(parents=True)
    (bin_folder / "made-up-compiler").write_text("#!/bin/sh\nexit 0\n")
    (bin_folder / "made-up-compiler").chmod(0o755)
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, "npm run build").returncode == 0
