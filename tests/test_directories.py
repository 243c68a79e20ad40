"""A command run in another directory is judged by that directory's files (real ``make``).

``cd sub && make build``, ``make -C sub build`` (and ``-Csub``, ``--directory=sub``) and
``make -f sub/Makefile build`` read ``sub``'s makefile, not the root's: adding the missing
rule there must lift the ban, or the repaired call stays refused. Each case runs ``make`` for
real before and after the change, and checks that a change elsewhere does not lift.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers.engine import memory_in
from scarguard import ToolBlocked, guarded_tool
from scarguard.learning._directories import _words, elsewhere_files
from scarguard.learning.observed import dependencies
from scarguard.model import Call

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")

IN_SUB = [
    "cd sub && make build",
    "bash -c 'cd sub && make build'",
    "make -C sub build",
    "make -Csub build",
    "make --directory=sub build",
    "make --directory sub build",
    "make -f sub/Makefile build",
    "make --file=sub/Makefile build",
]


def sh(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True)


@needs_make
@pytest.mark.parametrize("command", IN_SUB)
def test_a_rule_added_in_the_subdirectory_lifts_the_ban(tmp_path: Path, command: str) -> None:
    """Refused while sub/Makefile lacks the rule; allowed, and it runs, once it has it."""
    (tmp_path / "Makefile").write_text("all:\n\t@true\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "Makefile").write_text("other:\n\t@true\n")
    (tmp_path / "notes.txt").write_text("a\n")
    memory = memory_in(tmp_path)
    args = {"command": command}
    done = sh(tmp_path, command)
    assert done.returncode != 0 and "No rule to make target" in done.stderr
    memory.record("bash", args, error=done.stderr)
    memory.record("bash", args, error=done.stderr)
    assert not memory.check("bash", args).allowed
    (tmp_path / "notes.txt").write_text("b\n")  # a change that cannot help
    assert not memory.check("bash", args).allowed
    (tmp_path / "sub" / "Makefile").write_text("other:\n\t@true\nbuild:\n\t@true\n")
    assert memory.check("bash", args).allowed
    assert sh(tmp_path, command).returncode == 0


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("make build", ()),
        ("make -C sub build", ("sub/GNUmakefile", "sub/Makefile", "sub/makefile")),
        ("make -Csub -C deeper", ("sub/deeper/GNUmakefile", "sub/deeper/Makefile",
                                  "sub/deeper/makefile")),
        ("make -f other.mk -C sub t", ("sub/other.mk",)),
        ("make -fx.mk --makefile=y.mk", ("x.mk", "y.mk")),
        ("FOO=1 gmake --file x.mk", ("x.mk",)),
        ("cd a; cd b && make", ("a/b/GNUmakefile", "a/b/Makefile", "a/b/makefile")),
        ("(cd sub && make test)", ("sub/GNUmakefile", "sub/Makefile", "sub/makefile")),
        ("cd /srv/app && make", ("/srv/app/GNUmakefile", "/srv/app/Makefile",
                                 "/srv/app/makefile")),
        ("pushd sub && make", ("sub/GNUmakefile", "sub/Makefile", "sub/makefile")),
        ("bash -c 'cd sub && make build'", ("sub/GNUmakefile", "sub/Makefile",
                                            "sub/makefile")),
        ("sh -c 'make -C sub' extra", ()),  # (not the one command sh runs)
        ("go -C svc test ./...", ("svc/.env", "svc/go.mod")),
        ("ls -la", ()),
        ("cd $HOME && make", ()),
        ("cd && make", ()),
        ("cd - && make -C x", ()),
        ("make 'unclosed", ()),
    ],
)  # fmt: skip
def test_the_makefiles_a_make_call_reads(command: str, files: tuple[str, ...]) -> None:
    """Directories and -f files in every spelling; a cd that cannot be followed ends it."""
    assert elsewhere_files({"command": command}) == files


@pytest.mark.parametrize(
    "command",
    ["cd web && npm run build", "npm --prefix web run build", "yarn --cwd web build",
     "pnpm -C web build", "pnpm --dir=web build"],
)  # fmt: skip
def test_a_script_added_to_the_subdirectory_s_package_json_lifts_the_ban(
    tmp_path: Path, command: str
) -> None:
    """npm's missing script, run for web/: adding it to web/package.json lifts the ban."""
    (tmp_path / "web").mkdir()
    (tmp_path / "package.json").write_text('{"scripts": {}}')
    (tmp_path / "web" / "package.json").write_text('{"scripts": {}}')
    memory = memory_in(tmp_path)
    args = {"command": command}
    error = 'npm ERR! Missing script: "build"\nnpm ERR! To see a list of scripts, run:\n'
    for _ in range(3):
        memory.record("bash", args, error=error)
    assert not memory.check("bash", args).allowed
    (tmp_path / "notes.txt").write_text("b\n")  # a change that cannot help
    assert not memory.check("bash", args).allowed
    (tmp_path / "web" / "package.json").write_text('{"scripts": {"build": "true"}}')
    assert memory.check("bash", args).allowed


def test_a_program_run_after_cd_is_judged_by_the_manifests_there() -> None:
    """`cd pkg && pytest` depends on pkg's pyproject.toml, as well as the root's."""
    call = Call("bash", {"command": "cd pkg && pytest -q"})
    found = dependencies(call, "1 failed", shell_like=True, normalise=lambda p: p)
    assert "pkg/pyproject.toml" in found and "pkg/package.json" not in found
    assert "pyproject.toml" in found
    assert elsewhere_files({"cmd": "cd pkg && npm test"})[:2] == (
        "pkg/.env",
        "pkg/.node-version",
    )
    assert elsewhere_files({"path": "cd pkg && make"}) == ()  # not a command argument


def test_a_long_command_is_read_from_its_start_only() -> None:
    """The words are split in Python: past 4,096 characters a command is not read further."""
    tail = " && make -C sub"
    assert elsewhere_files({"command": "make -C sub && " + "x" * 5000})[:1] == ("sub/GNUmakefile",)
    assert elsewhere_files({"command": "x" * 5000 + tail}) == ()
    assert elsewhere_files({"command": "x" * 900 + tail})[:1] == ("sub/GNUmakefile",)


@pytest.mark.parametrize(
    "segment",
    [
        "make -C sub build",
        "  FOO=1  make   test ",
        "cd 'my dir'",
        'cd "a b" ',
        "cd a\\ b",
        "make\t-C sub",
        "echo (x)",
        "cd src\u00a0x",
        "echo 'unclosed",
        "",
    ],
)
def test_words_split_as_shlex_does(segment: str) -> None:
    """The quick split of a plain segment gives shlex's words; others go through shlex."""
    try:
        expected = shlex.split(segment)
    except ValueError:
        expected = segment.split()
    expected = [w.strip("()") for w in expected]
    while expected and "=" in expected[0] and not expected[0].startswith(("-", "=")):
        expected.pop(0)
    assert _words(segment) == [w for w in expected if w]


MISINDENTED = "python3 - <<'EOF'\nif True:\n        total = 1\n    total += 1\nprint(total)\nEOF"
"""A heredoc Python whose last indented line unindents to no outer level."""


def test_a_heredoc_fixed_only_in_its_indentation_runs(tmp_path: Path) -> None:
    """A guarded bash tool: the heredoc whose Python fails to indent runs again once its
    indentation alone is fixed (its body's blanks are what python reads), and succeeds."""
    memory = memory_in(tmp_path)
    ran: list[str] = []

    @guarded_tool(memory)
    def bash(command: str) -> str:
        ran.append(command)
        done = subprocess.run(
            ["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, check=True
        )
        return done.stdout

    for _ in range(2):
        with pytest.raises((subprocess.CalledProcessError, ToolBlocked)):
            bash(MISINDENTED)
    assert len(ran) == 1  # the identical repeat is refused
    (failure,) = memory.recent_failures(tool="bash")
    assert "IndentationError" in (failure.error or "")
    fixed = MISINDENTED.replace("\n    total += 1", "\n        total += 1")
    assert bash(fixed) == "2\n"
    assert ran == [MISINDENTED, fixed]
