"""Shell commands: the words, files and manifests they name, and how they read.

A shell command's targets are rarely declared, so what the engine knows about one comes from
its words: the programs it runs, the files it names, and the build manifests whose change can
change what any command does. What a command changes is judged in
:mod:`scarguard.adapters._shell_changes`, what a test run selects in
:mod:`scarguard.adapters._test_runs`.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "GIT_STATE",
    "HEREDOC_START",
    "MANIFESTS",
    "REDIRECT",
    "SEGMENTS",
    "SHELL_PROGRAMS",
    "command_files",
    "command_text",
    "command_words",
    "error_files",
    "git_user_config",
    "manifests_for",
    "names_program",
    "reports_no_change",
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
        "Dockerfile",
        "compose.yaml",
        "compose.yml",
        "docker-compose.yaml",
        "docker-compose.yml",
        ".env",
        ".tool-versions",
        ".python-version",
        ".node-version",
        ".nvmrc",
    }
)
"""Files whose change can change what any command does (build and dependency manifests, the
image and service definitions ``docker`` builds and runs, and the version pins that choose
which interpreter runs: ``pyenv local``, ``asdf``, ``nvm``)."""

_PYTHON: Final = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "tox.ini", "pytest.ini", ".env",
     ".python-version", ".tool-versions"}
)  # fmt: skip
_NODE: Final = frozenset(
    {"package.json", "package-lock.json", "tsconfig.json", ".env", ".node-version", ".nvmrc",
     ".tool-versions"}
)  # fmt: skip
GIT_STATE: Final = frozenset(
    {".git/HEAD", ".git/config", ".git/index", ".git/packed-refs", ".git/FETCH_HEAD",
     ".git/refs/heads", ".git/refs/tags", ".git/refs/remotes", ".git/refs/remotes/origin",
     ".git/refs/stash", ".gitignore", ".gitmodules", ".pre-commit-config.yaml"}
)  # fmt: skip
"""A repository's state, relative to its work tree (see :data:`_GIT`)."""


def git_user_config() -> tuple[str, ...]:
    """Return the user's own git configuration files, absolute (``~/.gitconfig``...).

    ``git config --global user.email ...`` run by hand ends "Please tell me who you are";
    the global file is ``$GIT_CONFIG_GLOBAL`` when set, else ``~/.gitconfig`` and
    ``$XDG_CONFIG_HOME/git/config`` (``~/.config/git/config``), both read by git.
    """
    named = os.environ.get("GIT_CONFIG_GLOBAL")
    if named:
        return (os.path.abspath(os.path.expanduser(named)),)
    home = os.path.expanduser("~")
    if home == "~":  # no home to find it in
        return ()
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return (os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config"))


_GIT: Final = MANIFESTS | GIT_STATE
"""What a ``git`` command's outcome depends on besides the files it names: the branch checked
out, the remotes and upstreams configured, the branches, tags and remote-tracking branches
(a directory's token moves when one is added, removed or rewritten), what is staged, the
stash, what is ignored, the hooks' configuration; and, since a hook can run anything, every
manifest."""
_OWN_MANIFESTS: Final[Mapping[str, frozenset[str]]] = {
    **dict.fromkeys(("pytest", "python", "python3", "mypy", "ruff", "flake8"), _PYTHON),
    **dict.fromkeys(("node", "jest", "vitest", "mocha", "tsc", "eslint", "prettier"), _NODE),
    "cargo": frozenset({"Cargo.toml", ".env"}),
    "rustc": frozenset({"Cargo.toml"}),
    "go": frozenset({"go.mod", ".env"}),
    "git": _GIT,
}
"""The manifests a program reads itself (a test runner, an interpreter, a compiler).

Programs that run recipes or scripts of any kind (``make``, ``npm run``, ``sh``) are not
here: any manifest can change what they do.
"""


def manifests_for(program: str | None) -> frozenset[str]:
    """Return the build manifests whose change can change what ``program`` does.

    ``program`` is a command's first word, or a tool's name: a tool named for a program
    (``git_checkout``) reads what the program reads, and so does a versioned one
    (``python3.12``).
    """
    if not program:
        return MANIFESTS
    name = os.path.basename(program)
    own = _OWN_MANIFESTS.get(name)
    if own is None:  # python3.12, git_checkout
        own = _OWN_MANIFESTS.get(_VERSION.sub("", name.split("_", 1)[0]), MANIFESTS)
    return own


_VERSION: Final = re.compile(r"(?<=[a-z])[\d.]+$")
"""A version after a program's name (``python3.12``: ``python``)."""


_SPLIT = re.compile(r"""[\s'"`=;|&()<>,]+""")
_MAX_WORDS = 64
_CACHED_VALUE = 1024
"""Arguments up to this long have their words and files remembered (commands repeat)."""


def command_words(args: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the words of a call's string arguments, with the basenames of path-like ones.

    They tell which files a shell command names, so that changing one of them (or creating a
    path the command needs) can lift what was learned about the command.
    """
    strings = [value for value in args.values() if isinstance(value, str)]
    if len(strings) == 1 and len(strings[0]) <= _CACHED_VALUE:
        return _words_of_one(strings[0])  # a command's words, asked for again and again
    return _words(strings)


def _words(strings: Iterable[str]) -> tuple[str, ...]:
    words: dict[str, None] = {}
    for value in strings:
        for word in _SPLIT.split(value):
            if not word or len(word) > 200:
                continue
            words[os.path.normpath(word) if "/" in word else word] = None
            if "/" in word:
                words[os.path.basename(word.rstrip("/"))] = None
            if len(words) >= _MAX_WORDS:
                return tuple(words)
    return tuple(words)


@functools.lru_cache(maxsize=1024)
def _words_of_one(value: str) -> tuple[str, ...]:
    return _words((value,))


SEGMENTS: Final = re.compile(r"&&|\|\||[;|\n]")
"""What separates the commands of one shell line (``&&``, ``||``, ``;``, ``|``, a newline)."""
REDIRECT: Final = re.compile(
    r"(?<![0-9&])>{1,2}\s*(?!&)(?!/dev/(?:null|stdout|stderr|tty)(?![\w/.-]))[^\s>]"
)
"""Output redirected into a file (``> out.txt``, ``>> log``; not ``2>&1``)."""


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


HEREDOC_START: Final = re.compile(r"(?<!<)<<(?!<)(-?)[ \t]*(['\"]?)([^\s'\"<>|&;()]{1,64})\2")
"""A here-document's operator and its delimiter word (``<<EOF``, ``<<-'END'``): groups
``-`` (or nothing), the quote, the word."""


@functools.lru_cache(maxsize=4096)
def command_text(command: str) -> str:
    """Return a command as its words: runs of blanks outside quotes collapse to one space.

    ``make  deploy`` and ``make deploy`` are one command; ``echo 'a  b'`` keeps its quoted
    blanks. What a program reads is kept as written: a here-document's body (``python3 -
    <<EOF`` ... ``EOF``), and the indentation of every line after the first (a ``script``
    argument may be Python). Leading and trailing blanks go.
    """
    if "  " not in command and "\t" not in command and command == command.strip(" \t"):
        return command
    out: list[str] = []
    quote = ""
    escaped = False
    pending = False
    heredocs: list[tuple[str, bool]] = []  # the delimiters of the bodies after this line
    indenting = False  # at the start of a line after the first: its blanks are kept
    i, size = 0, len(command)
    while i < size:
        ch = command[i]
        if indenting and ch in _BLANK:
            out.append(ch)
            i += 1
            continue
        indenting = False
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
            i += 1
            continue
        elif ch == "<" and "<<" in command:
            found = HEREDOC_START.match(command, i)
            if found is not None:
                heredocs.append((found.group(3), found.group(1) == "-"))
        elif ch == "\n":
            indenting = True
            if heredocs:
                end = _after_bodies(command, i + 1, heredocs)
                out.append(command[i:end])  # the newline, the bodies and their delimiters
                heredocs, pending, i = [], False, end
                continue
        if pending:
            out.append(" ")
            pending = False
        out.append(ch)
        i += 1
    return "".join(out).rstrip(" \t")


def _after_bodies(command: str, start: int, heredocs: list[tuple[str, bool]]) -> int:
    """Return where the here-document bodies starting at ``start`` end.

    After the last one's delimiter line; the command's end when a body is never closed.
    """
    at = start
    for word, strip_tabs in heredocs:
        while at < len(command):
            newline = command.find("\n", at)
            end = len(command) if newline < 0 else newline + 1
            line = command[at:end].rstrip("\n")
            at = end
            if (line.lstrip("\t") if strip_tabs else line) == word:
                break
    return at


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
    # a file-like word holds a "." or a "/": a value without either names no file
    strings = [v for v in args.values() if isinstance(v, str) and ("." in v or "/" in v)]
    if not strings:
        return ()
    if len(strings) == 1 and len(strings[0]) <= _CACHED_VALUE:
        return _files_of_one(strings[0])
    return _files(strings)


def _files(strings: Iterable[str]) -> tuple[str, ...]:
    files: dict[str, None] = {}
    for value in strings:
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


@functools.lru_cache(maxsize=1024)
def _files_of_one(value: str) -> tuple[str, ...]:
    return _files((value,))


_ERROR_FILE: Final = re.compile(
    r"""(?:^|(?<=[\s"'(\[<]))"""
    r"((?:/?[\w.@+-]+/)*[\w@+-][\w.@+-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
    r"|(?:/?[\w.@+-]+/)*(?:GNUmakefile|[Mm]akefile|Dockerfile))"
    r"""(?=[:"'),\]>]|\s|$|\(\d+,\d+\))"""  # (tsc: src/a.ts(3,5): error TS2304)
)


def error_files(text: str | None) -> tuple[str, ...]:
    """Return the files an error text names (``server.js:1: SyntaxError``, ``File "a.py"``)."""
    if not text:
        return ()
    if len(text) <= _CACHED_ERROR:
        return _error_files_cached(text)  # an agent repeating a mistake repeats its error
    return _error_files(text)


_CACHED_ERROR = 4096
"""Error texts up to this long have their files remembered."""


_FILE_URL: Final = re.compile(r"\bfile://(/[^\s:'\"()<>]{1,300}\.[A-Za-z][A-Za-z0-9]{0,9})(?=[:'\")\s]|$)")
"""A file URL, as Node's stack traces write a module's path (``file:///app/a.mjs:4:28``)."""


def _error_files(text: str) -> tuple[str, ...]:
    files: dict[str, None] = {}
    head = text[:8192]
    for match in _ERROR_FILE.finditer(head):
        files[match.group(1)] = None
        if len(files) >= _MAX_FILES:
            return tuple(files)
    if "file://" in head:
        for match in _FILE_URL.finditer(head):
            path = match.group(1)
            if "%" in path:  # (a URL escapes spaces and the like: rare, urllib only then)
                from urllib.parse import unquote

                path = unquote(path)
            files[path] = None
            if len(files) >= _MAX_FILES:
                break
    return tuple(files)


_error_files_cached = functools.lru_cache(maxsize=256)(_error_files)
