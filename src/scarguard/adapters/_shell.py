"""Shell commands: which change the workspace, which words and files they name.

A shell command's targets are rarely declared, so what the engine knows about one comes from
its words: the programs it runs, the files it names, and the build manifests whose change can
change what any command does.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "MANIFESTS",
    "SHELL_PROGRAMS",
    "command_files",
    "command_text",
    "command_words",
    "error_files",
    "installs",
    "manifests_for",
    "names_program",
    "reports_failed_tests",
    "reports_no_change",
    "selected_tests",
    "shell_changes_workspace",
]

MANIFESTS = frozenset(
    {
        "Makefile",
        "makefile",
        "GNUmakefile",
        "package.json",
        "package-lock.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "Cargo.toml",
        "go.mod",
        "tsconfig.json",
        "CMakeLists.txt",
        ".env",
        ".tool-versions",
        ".python-version",
        ".node-version",
        ".nvmrc",
    }
)
"""Files whose change can change what any command does (build and dependency manifests, and
the version pins that choose which interpreter runs: ``pyenv local``, ``asdf``, ``nvm``)."""

_PYTHON: Final = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini", "pytest.ini", ".env",
     ".python-version", ".tool-versions"}
)  # fmt: skip
_NODE: Final = frozenset(
    {"package.json", "package-lock.json", "tsconfig.json", ".env", ".node-version", ".nvmrc",
     ".tool-versions"}
)  # fmt: skip
_OWN_MANIFESTS: Final[Mapping[str, frozenset[str]]] = {
    **dict.fromkeys(("pytest", "python", "python3", "mypy", "ruff", "flake8"), _PYTHON),
    **dict.fromkeys(("node", "jest", "vitest", "mocha", "tsc", "eslint", "prettier"), _NODE),
    "cargo": frozenset({"Cargo.toml", ".env"}),
    "rustc": frozenset({"Cargo.toml"}),
    "go": frozenset({"go.mod", ".env"}),
}
"""The manifests a program reads itself (a test runner, an interpreter, a compiler).

Programs that run recipes or scripts of any kind (``make``, ``npm run``, ``sh``) are not
here: any manifest can change what they do.
"""


def manifests_for(program: str | None) -> frozenset[str]:
    """Return the build manifests whose change can change what ``program`` does."""
    return _OWN_MANIFESTS.get(os.path.basename(program), MANIFESTS) if program else MANIFESTS


_SPLIT = re.compile(r"""[\s'"`=;|&()<>,]+""")
_MAX_WORDS = 64


def command_words(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the words of a call's string arguments, with the basenames of path-like ones.

    They tell which files a shell command names, so that changing one of them (or creating a
    path the command needs) can lift what was learned about the command.
    """
    words: dict[str, None] = {}
    for value in args.values():
        if not isinstance(value, str):
            continue
        for word in _SPLIT.split(value):
            if not word or len(word) > 200:
                continue
            words[os.path.normpath(word) if "/" in word else word] = None
            if "/" in word:
                words[os.path.basename(word.rstrip("/"))] = None
            if len(words) >= _MAX_WORDS:
                return tuple(words)
    return tuple(words)


_CHANGING_PROGRAMS: Final = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "mkdir",
        "touch",
        "ln",
        "chmod",
        "chown",
        "truncate",
        "patch",
        "unzip",
        "install",
        "kill",
        "pkill",
        "killall",
        "fuser",
        "tee",
        "dd",
    }
)
"""Shell programs that change files or processes whatever their arguments."""
_CHANGING_SUBCOMMANDS: Final[Mapping[str, frozenset[str]]] = {
    "git": frozenset(
        {
            "checkout",
            "switch",
            "reset",
            "restore",
            "stash",
            "pull",
            "merge",
            "rebase",
            "apply",
            "am",
            "cherry-pick",
            "revert",
            "commit",
            "clone",
            "clean",
            "worktree",
            "init",
            "rm",
            "mv",
        }
    ),
    "pip": frozenset({"install", "uninstall"}),
    "pip3": frozenset({"install", "uninstall"}),
    "uv": frozenset({"pip", "add", "remove", "sync", "venv"}),
    "poetry": frozenset({"add", "remove", "install", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "uninstall", "remove", "rm", "update", "link"}),
    "yarn": frozenset({"add", "remove", "install", "upgrade"}),
    "pnpm": frozenset({"add", "remove", "install", "i", "update"}),
    "cargo": frozenset({"add", "remove", "install", "update", "clean"}),
    "go": frozenset({"get", "install", "mod"}),
    "apt": frozenset({"install", "remove", "purge"}),
    "apt-get": frozenset({"install", "remove", "purge"}),
    "brew": frozenset({"install", "uninstall", "upgrade"}),
    "conda": frozenset({"install", "remove", "create", "update"}),
    "docker": frozenset({"stop", "rm", "kill", "run", "restart", "compose", "pull"}),
    "systemctl": frozenset({"start", "stop", "restart", "reload"}),
    "service": frozenset({"start", "stop", "restart", "reload"}),
    "make": frozenset({"clean", "install", "distclean"}),
    "sed": frozenset({"-i"}),
}
"""Programs that change the workspace with one of these words (``git checkout``...)."""
_PREFIXES: Final = frozenset({"sudo", "env", "nohup", "time", "exec", "command", "xargs"})
_SEGMENTS: Final = re.compile(r"&&|\|\||[;|\n]")
_REDIRECT: Final = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&)[^\s>]")


_MODULE_RUNNERS: Final = frozenset({"python", "python3", "py"})
"""Interpreters that run a tool as a module (``python -m pip install``: pip's words decide)."""


def shell_changes_workspace(command: str) -> bool:
    """Return whether a shell command changes files or processes (so earlier failures may not hold).

    A command counts when any of its segments runs a changing program (``rm``, ``kill``...),
    a changing subcommand (``git checkout``, ``pip install``, ``sed -i``...), or redirects
    output into a file. Reading commands (``ls``, ``cat``, ``npm test``) do not.
    """
    if _REDIRECT.search(command):
        return True
    for segment in _SEGMENTS.split(command):
        words = [w for w in segment.split() if "=" not in w or w.startswith("-")]
        while words and words[0] in _PREFIXES:
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in _MODULE_RUNNERS and words[1:2] == ["-m"] and len(words) > 2:
            words = words[2:]  # python -m pip install ...
            program = words[0]
        if program in _CHANGING_PROGRAMS:
            return True
        changing = _CHANGING_SUBCOMMANDS.get(program)
        if changing and any(w in changing for w in words[1:3]):
            return True
    return False


_INSTALLERS: Final = frozenset(
    {"pip", "pip3", "pipx", "uv", "poetry", "npm", "yarn", "pnpm", "bun", "cargo", "go", "apt",
     "apt-get", "brew", "conda", "mamba", "gem", "composer", "dnf", "yum", "apk", "pacman",
     "snap", "nix", "asdf", "mise", "rustup", "nvm", "pyenv", "make", "dotnet"}
)  # fmt: skip
_INSTALL_WORDS: Final = frozenset({"install", "i", "add", "sync", "get", "use", "global", "link"})
_INSTALLS_ALSO: Final[Mapping[str, frozenset[str]]] = {
    "npm": frozenset({"ci"}), "bundle": frozenset({"install"}), "corepack": frozenset({"enable"}),
    "nix-env": frozenset({"-i", "--install"}), "deno": frozenset({"install"}),
}  # fmt: skip
"""Installs of programs whose install word is their own (``npm ci``, ``nix-env -i``)."""
_BARE_INSTALLERS: Final = frozenset({"yarn", "bundle", "bun"})
"""Package managers that install when run without a subcommand (``yarn``)."""
_PIPED_INSTALLER: Final = re.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh(?:\s+-s\b[^|;&]*)?\s*(?:$|[;&|])"
)
"""An installer script piped into a shell (``curl -fsSL https://…/install.sh | sh``)."""
_ENVIRONMENT: Final = frozenset({"source", ".", "export", "activate", "alias", "hash", "rehash"})


def installs(command: str) -> bool:
    """Return whether a shell command may put a program on ``PATH``.

    An install by a package or tool manager (``pip install``, ``npm i -g``, ``brew
    install``, ``make install``, ``python -m pip install``, ``npm ci``, an installer script
    piped into a shell...), or a change of the shell's environment (``source
    .venv/bin/activate``, ``export PATH=...``).
    """
    if _PIPED_INSTALLER.search(command):
        return True
    for segment in _SEGMENTS.split(command):
        words = segment.split()
        while words and (words[0] in _PREFIXES or ("=" in words[0] and words[0][0] != "-")):
            if words[0].startswith("PATH="):
                return True
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in _MODULE_RUNNERS and words[1:2] == ["-m"] and len(words) > 2:
            words = words[2:]  # python -m pip install ...
            program = words[0]
        if program in _ENVIRONMENT or program.endswith("activate"):
            return True
        if program in _INSTALLERS and any(w in _INSTALL_WORDS for w in words[1:3]):
            return True
        if any(w in _INSTALLS_ALSO.get(program, ()) for w in words[1:3]):
            return True
        if program in _BARE_INSTALLERS and len(words) == 1:
            return True
    return False


_NO_CHANGE: Final = re.compile(
    r"(?:Already up[ -]to[ -]date\.?|Everything up-to-date|nothing to commit, working tree clean"
    r"|Current branch \S+ is up to date\.|up to date, audited \d+ packages? in [\d.]+m?s"
    r"|found 0 vulnerabilities|0 upgraded, 0 newly installed, 0 to remove and \d+ not upgraded\.)"
)


def reports_no_change(result: object) -> bool:
    """Return whether a command's whole output says it changed nothing.

    ``git merge`` / ``git pull`` answering ``Already up to date.``, ``git push``'s
    ``Everything up-to-date``, ``npm install``'s ``up to date, audited N packages``: the
    command is one that may change the workspace, but this run did not.
    """
    if not isinstance(result, str) or len(result) > 2000:
        return False
    lines = [line.strip() for line in result.strip().splitlines() if line.strip()]
    return bool(lines) and all(_NO_CHANGE.fullmatch(line) for line in lines)


_BLANK: Final = frozenset(" \t")


@functools.lru_cache(maxsize=4096)
def command_text(command: str) -> str:
    """Return a command as its words: runs of blanks outside quotes collapse to one space.

    ``make  deploy`` and ``make deploy`` are one command; ``echo 'a  b'`` keeps its quoted
    blanks. Leading and trailing blanks go.
    """
    if "  " not in command and "\t" not in command and command == command.strip(" \t"):
        return command
    out: list[str] = []
    quote = ""
    escaped = False
    pending = False
    for ch in command:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch in _BLANK:
            pending = bool(out)
            continue
        if pending:
            out.append(" ")
            pending = False
        out.append(ch)
    return "".join(out)


SHELL_PROGRAMS: Final = frozenset(
    {
        "make", "cmake", "ninja", "bazel", "npm", "npx", "yarn", "pnpm", "bun", "deno",
        "node", "pytest", "tox", "nox", "cargo", "rustc", "go", "gradle", "gradlew", "mvn",
        "git", "gh", "docker", "podman", "kubectl", "helm", "terraform", "pip", "pip3", "uv",
        "poetry", "python", "python3", "ruby", "rake", "bundle", "dotnet", "jest", "vitest",
        "mocha", "tsc", "eslint", "ruff", "mypy", "flake8", "prettier", "composer", "mix",
    }
)  # fmt: skip
"""Build, test and run programs: a tool named for one is a shell command in disguise."""
_AMBIGUOUS: Final = frozenset({"go", "make", "node", "bundle", "mix"})
"""Programs that are also common words (``go_to_definition``, ``make_request``)."""
_PROGRAM_VERBS: Final = frozenset(
    {
        "build", "test", "tests", "run", "target", "install", "clean", "check", "vet", "fmt",
        "mod", "get", "lint", "deploy", "all", "exec", "command", "cmd",
    }
)  # fmt: skip


def names_program(words: tuple[str, ...]) -> bool:
    """Return whether a tool's name words name a build, test or run program (``make``)."""
    if not words or words[0] not in SHELL_PROGRAMS:
        return False
    return words[0] not in _AMBIGUOUS or len(words) == 1 or words[1] in _PROGRAM_VERBS


_URLISH: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_FILEISH: Final = re.compile(r"[^/]\.[A-Za-z][A-Za-z0-9]{0,9}$|/")
_MAX_FILES = 16


def command_files(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the words of a call's string arguments that look like files (``src/a.py``)."""
    files: dict[str, None] = {}
    for value in args.values():
        if not isinstance(value, str):
            continue
        for word in _SPLIT.split(value):
            if (
                not word
                or len(word) > 200
                or word.startswith("-")
                or _URLISH.match(word)
                or not _FILEISH.search(word)
            ):
                continue
            files[word.rstrip("/") or word] = None
            if len(files) >= _MAX_FILES:
                return tuple(files)
    return tuple(files)


_ERROR_FILE: Final = re.compile(
    r"""(?:^|(?<=[\s"'(\[<]))"""
    r"((?:/?[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
    r"|(?:/?[\w.@+-]+/)*(?:GNUmakefile|[Mm]akefile|Dockerfile))"
    r"""(?=[:"'),\]>]|\s|$)"""
)


def error_files(text: str | None) -> tuple[str, ...]:
    """Return the files an error text names (``server.js:1: SyntaxError``, ``File "a.py"``)."""
    if not text:
        return ()
    files: dict[str, None] = {}
    for match in _ERROR_FILE.finditer(text[:8192]):
        files[match.group(1)] = None
        if len(files) >= _MAX_FILES:
            break
    return tuple(files)


_RUNNERS: Final[Mapping[tuple[str, ...], str]] = {
    ("pytest",): "pytest",
    ("py.test",): "pytest",
    ("python", "-m", "pytest"): "pytest",
    ("python3", "-m", "pytest"): "pytest",
    ("cargo", "test"): "cargo test",
    ("jest",): "jest",
    ("npx", "jest"): "jest",
}
"""Test runners whose run without a selection runs every test a selection can name."""
_QUIET_OPTIONS: Final = frozenset(
    {"-q", "-qq", "-v", "-vv", "-vvv", "-x", "-s", "-l", "--quiet", "--verbose", "--exitfirst",
     "--showlocals", "--no-header", "--silent", "--ci"}
)  # fmt: skip
"""Options that change how a test run reports, not which tests it runs."""
_QUIET_PREFIXES: Final = ("--tb=", "--color=", "--colors", "--durations=")
_PYTEST_FILE: Final = re.compile(
    r"^(?:[\w.@+-]+/)*(?:test_[\w.-]*|[\w.-]*_test)\.py(?:::[\w\[\].:-]+)?$"
)
_PYTEST_FOLDER: Final = re.compile(r"^(?:\.|\./)?(?:[\w@+-][\w.@+-]*/)*(?:[\w@+-]+/?)?$")
"""A folder pytest collects test files in (``tests``, ``tests/unit/``, ``.``): no suffix."""
_SCANNED: Final = 8192
"""Characters of a test run's output searched for its verdict, at its start and at its end."""
_TESTS_FAILED: Final = re.compile(
    r"(?m)^FAILED \S|\b\d+ failed\b|^test result: FAILED\b|^Tests:\s.*\b\d+ failed\b"
)


def selected_tests(args: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """Return the test runner a command runs and the tests it selects, if it is a test run.

    ``pytest tests/test_a.py::test_x`` is ``("pytest", ("tests/test_a.py::test_x",))``;
    ``python -m pytest -q`` is ``("pytest", ())``, a run of every test. Only a single command
    of a known runner (``pytest``, ``cargo test``, ``jest``) whose options change how it
    reports, not what it runs, and whose selection a run without one covers (pytest: files
    named as pytest collects them by default, ``test_*.py`` or ``*_test.py``, and folders):
    anything else is ``None``.
    """
    command = next((args[k] for k in ("command", "cmd") if isinstance(args.get(k), str)), None)
    if command is None or _SEGMENTS.search(command) or _REDIRECT.search(command):
        return None
    words = command.split()
    prefix = next((p for p in _RUNNERS if tuple(words[: len(p)]) == p), None)
    if prefix is None:
        return None
    runner = _RUNNERS[prefix]
    selection: list[str] = []
    for word in words[len(prefix) :]:
        if word in _QUIET_OPTIONS or word.startswith(_QUIET_PREFIXES):
            continue
        if word.startswith("-") or "=" in word or "$" in word:
            return None  # an option that may choose what runs (or an unexpanded word)
        if runner == "pytest" and not (_PYTEST_FILE.match(word) or _PYTEST_FOLDER.match(word)):
            return None
        selection.append(word)
    return runner, tuple(selection)


def reports_failed_tests(error: str | None) -> bool:
    """Return whether a test run's output says tests ran and failed (not a usage error).

    pytest's ``FAILED a.py::t`` and ``1 failed``, cargo's ``test result: FAILED``, jest's
    ``Tests: 1 failed``.
    """
    if error is None:
        return False
    if _TESTS_FAILED.search(error[:_SCANNED]) is not None:
        return True
    # the runners sum up at the end, after tracebacks and captured output of any length
    return len(error) > _SCANNED and _TESTS_FAILED.search(error[-_SCANNED:]) is not None
