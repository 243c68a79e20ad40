"""The files a failing command's programs read without naming them.

A failure depends on what its programs read. The command names some of it (``pytest
tests/test_a.py``), the error text some more; the rest is read through the program's own
knowledge, and a fix there, by hand or by a tool the memory does not guard, left the call
refused:

- ``make test``: the prerequisites of the goals, through the Makefile's rules, variables
  and wildcards (``learning._prerequisites``), the makefiles it includes, and what the
  goals' recipes name and read (``./check.sh``, ``test -f out``, ``$(MAKE) -C sub``);
- ``javac *.java``, ``cc src/*.c``: the files a glob expands to, and its folder (a new file
  matches too);
- ``cmake --build build``, ``ctest``, ``make`` in a folder CMake generated: the sources the
  project's ``CMakeLists.txt`` files name (``learning._builds``);
- ``java -cp out Main``: the class files of the main class's folder on the class path;
- ``cargo test``: the crate (``src/lib.rs``, ``src/main.rs``, ``src/bin``, ``tests``,
  ``build.rs``), whose modules the import walk follows;
- ``go test ./...``: the ``.go`` files of the packages named (``./...``: the folder's and
  those of its folders, one level down);
- ``pytest``, ``python -m pytest tests``: the test files it collects from the folders
  named (none named: the folder it runs in and its ``tests``/``test`` folder), two levels
  down, whose imports the import walk follows to the code under test;
- ``bash check.sh``, ``python3 check.py``, ``npm test``: what the script names, or the
  ``package.json`` script runs (``learning._scripts``);
- ``test -d build``, ``[ -f out.txt ]``: the path tested;
- ``grep -r TODO src``, ``rg TODO src``: the files under the folders searched (two levels).

Paths are relative to the root; all work is bounded (a few listings and reads, at most
:data:`_MAX` paths), and what cannot be followed (a variable, a ``cd`` to somewhere unknown)
is left out: watching less only lifts less.
"""

from __future__ import annotations

import fnmatch
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from scarguard.adapters._shell import command_files
from scarguard.learning._builds import (
    cmake_build,
    cmake_project,
    generated_by_cmake,
    java_classes,
)
from scarguard.learning._directories import READ, program_directory, programs
from scarguard.learning._prerequisites import prerequisites
from scarguard.learning._scripts import PACKAGE_MANAGERS, package_script, script_names

__all__ = ["program_inputs"]

Read = Callable[[str], str | None]
Names = Callable[[str], frozenset[str] | None]

_MAX: Final = 32
"""At most this many paths per failure."""
_PER_FOLDER: Final = 24
"""At most this many files taken from one folder (a glob's, a package's, a search's)."""
_LISTED: Final = 1000
"""A folder with more names than this is not looked into."""
_KEYWORDS: Final = frozenset({"if", "then", "elif", "else", "while", "until", "do", "!", "time"})
"""Words of the shell's own before a program (``if [ -d build ]; then``)."""
_MAKES: Final = frozenset({"make", "gmake"})
_NESTED: Final = 2
"""Recipes are followed this deep (a recipe's ``$(MAKE) -C sub``'s recipes, not theirs)."""
_MAKEFILES: Final = ("GNUmakefile", "makefile", "Makefile")
"""The makefiles GNU make looks for, in its order."""
_MAKE_VALUED: Final = frozenset(
    {"-C", "-f", "-I", "-o", "-W", "--directory", "--file", "--makefile", "--include-dir",
     "--old-file", "--what-if"}
)  # fmt: skip
"""make's options whose value is the next word."""
_CARGO_BUILDS: Final = frozenset(
    {"build", "b", "test", "t", "run", "r", "check", "c", "clippy", "bench", "doc", "nextest"}
)
_GO_BUILDS: Final = frozenset({"build", "test", "run", "vet", "install", "generate"})
_PYTESTS: Final = frozenset({"pytest", "py.test"})
_PYTEST_VALUED: Final = frozenset(
    {"-k", "-m", "-p", "-c", "-o", "-W", "-n", "--rootdir", "--ignore", "--ignore-glob",
     "--deselect", "--confcutdir", "--basetemp", "--maxfail", "--tb", "--junitxml",
     "--junit-xml", "--cov", "--cov-report", "--durations", "--override-ini", "--log-level",
     "--numprocesses", "--dist", "--reruns", "--timeout", "--import-mode", "--config-file"}
)  # fmt: skip
"""pytest's options whose value is the next word (``-k expr``: not a folder to collect)."""
_TEST_FOLDERS: Final = ("tests", "test")
"""Where a bare ``pytest`` usually finds its tests, besides the folder it runs in."""
_SOURCING: Final = frozenset({"source", "."})
_SCRIPTS: Final = (".sh", ".bash", ".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".rb", ".pl",
                   ".php", ".lua")  # fmt: skip
"""What the scripts whose text is read end with (``learning._scripts``)."""
_INTERPRETER: Final = re.compile(
    r"^(?:python|pypy|node|deno|bun|tsx|ts-node|ruby|perl|php|lua|sh|bash|zsh|dash)[\d.]*$"
)
"""A program that runs the script it is given (``python3.12 app.py``, ``bash run.sh``)."""
_TESTS: Final = frozenset({"test", "[", "[["})
_FILE_TESTS: Final = frozenset(
    {"-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-p", "-S", "-b", "-c", "-g", "-u",
     "-k", "-O", "-G", "-N"}
)  # fmt: skip
_SEARCHES: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
_RECURSIVE: Final = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--recursive$|^--dereference-recursive$")
_GLOB: Final = re.compile(r"[*?[]")


def program_inputs(call_args: Mapping[str, Any], read: Read, names: Names) -> tuple[str, ...]:
    """Return the files a command's programs read that neither it nor its error names.

    Args:
        call_args: The call's arguments; the command is its ``command`` (or ``cmd``) text.
        read: Returns a file's text, relative to the root (``None`` when it cannot be read).
        names: Lists a folder relative to the root (``None`` when it cannot be listed).

    Returns:
        Up to 32 paths relative to the root (or absolute, where the command names an
        absolute directory), in the order the programs run.
    """
    command = _command(call_args)
    if command is None:
        return ()
    found: dict[str, None] = {}
    for path in _of_command(command, ".", read, names, scripts=True, depth=0):
        found[os.path.normpath(path)] = None
        if len(found) >= _MAX:
            break
    return tuple(found)


def _of_command(
    command: str, start: str, read: Read, names: Names, *, scripts: bool, depth: int
) -> Iterator[str]:
    """What the programs of ``command``, run in ``start``, read (``scripts``: and npm's).

    ``depth`` counts the recipes and package scripts this command is inside of.
    """
    for where, words in programs(command):
        if where is None:
            return  # somewhere this cannot follow
        while words and words[0] in _KEYWORDS:
            words = words[1:]
        words = _launched(words)  # timeout 60 npm test: npm's words
        if not words:
            continue
        where = os.path.normpath(_joined(start, where))
        yield from _read_by(where, words, read, names, depth)
        if not scripts or os.path.basename(words[0]) not in PACKAGE_MANAGERS:
            continue
        package, _ = program_directory(where, words[1:], make=False)
        script = package_script(package, words, read)
        if script is not None:  # npm test: its script's command, run in the package folder
            yield from (_joined(package, f) for f in command_files({"command": script}))
            yield from _of_command(script, package, read, names, scripts=False, depth=depth + 1)


def _command(call_args: Mapping[str, Any]) -> str | None:
    for key in ("command", "cmd"):
        value = call_args.get(key)
        if isinstance(value, str):
            return value[:READ]
    return None


def _read_by(
    where: str, words: list[str], read: Read, names: Names, depth: int
) -> Iterator[str]:
    """Yield what one program (its words past any launcher, run in ``where``) reads."""
    program = os.path.basename(words[0])
    for word in words[1:]:
        if _GLOB.search(word) and "$" not in word and not word.startswith("-"):
            yield from _globbed(where, word, names)
    if program in _MAKES:
        yield from _make_inputs(where, words, read, names, depth)
    elif program == "cargo" and len(words) > 1 and words[1] in _CARGO_BUILDS:
        yield from _crate(where, names)
    elif program == "go" and len(words) > 1 and words[1] in _GO_BUILDS:
        yield from _packages(where, words[2:], names)
    elif program in _PYTESTS:
        yield from _collected(where, words[1:], read, names)
    elif _INTERPRETER.match(program) and words[1:3] == ["-m", "pytest"]:
        yield from _collected(where, words[3:], read, names)
    elif program == "cmake":
        yield from _cmake(where, words, read, names)
    elif program == "ctest":
        build = _value_of(words, "--test-dir")
        yield from cmake_build(_joined(where, build or "."), read, names)
    elif program == "java":
        yield from java_classes(where, words, names)
    elif program in _TESTS:
        yield from _tested(where, words)
    elif program in _SEARCHES:
        yield from _searched(where, words, names, always=program in ("rg", "ag", "ack"))
    if program in _SOURCING:
        named = words[1:2]
    elif _INTERPRETER.match(program):
        named = [w for w in words[1:] if w.endswith(_SCRIPTS)]
    else:
        named = [words[0]] if words[0].endswith(_SCRIPTS) else []  # ./run.sh
    for script in named[:2]:
        if "$" not in script and not os.path.isabs(script):
            yield from script_names(where, _joined(where, script), read, names)


_LAUNCHERS: Final = {
    # a program that runs the command after it: the options it takes a value with
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "nohup": frozenset(),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "-h", "-p", "-r", "-t"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "xvfb-run": frozenset({"-n", "-s", "-f", "-e", "-p"}),
}
_RUNNERS: Final = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye", "pixi"})
"""Environment managers whose ``run`` runs the command after it (``uv run pytest``)."""
_RUNNER_VALUED: Final = frozenset(
    {"--with", "--python", "-p", "--env-file", "--group", "--extra", "--package", "--project",
     "--directory", "--env", "-e", "--environment"}
)  # fmt: skip
_COVERAGE_VALUED: Final = frozenset({"--rcfile", "--source", "--include", "--omit", "--context"})
_TIMEOUTS: Final = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


def _launched(words: list[str]) -> list[str]:
    """Return the words of the program a launcher runs (``timeout 60 make test``: make's).

    ``env``, ``timeout``, ``nice``, ``nohup``, ``sudo``, ``stdbuf``, ``ionice``,
    ``xvfb-run`` and the ``run`` of an environment manager (``uv``, ``poetry``, ``pipenv``,
    ``pdm``, ``hatch``, ``rye``, ``pixi``), nested; ``coverage run`` as the interpreter it
    stands for (``coverage run -m pytest``). Any other command's words come back as they are.
    """
    for _ in range(4):  # (timeout 60 uv run pytest: a few launchers deep at most)
        if not words:
            return words
        program = os.path.basename(words[0])
        valued = _LAUNCHERS.get(program)
        if valued is not None:
            rest = _after_options(words[1:], valued)
            if program == "env":
                while rest and "=" in rest[0] and not rest[0].startswith("="):
                    rest = rest[1:]
            elif program == "timeout" and rest and _TIMEOUTS.match(rest[0]):
                rest = rest[1:]
            words = rest
        elif program in _RUNNERS and len(words) > 1 and words[1] == "run":
            words = _after_options(words[2:], _RUNNER_VALUED)
        elif program == "coverage" and len(words) > 1 and words[1] == "run":
            words = ["python", *_after_options(words[2:], _COVERAGE_VALUED, keep="-m")]
        elif _INTERPRETER.match(program) and words[1:4] == ["-m", "coverage", "run"]:
            words = words[2:]  # coverage run ...
        else:
            return words
    return words


def _after_options(words: list[str], valued: frozenset[str], *, keep: str = "") -> list[str]:
    """Return ``words`` from the first one that is not an option (or an option's value).

    ``keep``: an option that is the launched command's own (``coverage run -m pytest``).
    """
    at = 0
    while at < len(words) and words[at].startswith("-") and words[at] not in ("-", keep):
        at += 2 if words[at] in valued else 1
    return words[at:]


def _joined(where: str, name: str) -> str:
    return name if where == "." or os.path.isabs(name) else os.path.join(where, name)


def _listing(names: Names, folder: str) -> frozenset[str] | None:
    listing = names(folder)
    return None if listing is None or len(listing) > _LISTED else listing


def _globbed(where: str, word: str, names: Names) -> Iterator[str]:
    """The folder of a glob (``src/*.c``) and the names it matches there."""
    folder, pattern = os.path.split(word)
    if not pattern or _GLOB.search(folder):
        return  # (a glob in a folder's name: not followed)
    folder = _joined(where, folder or ".")
    listing = _listing(names, folder)
    if listing is None:
        return
    yield folder
    hidden = pattern.startswith(".")
    matched = sorted(n for n in listing if fnmatch.fnmatchcase(n, pattern))
    for name in [n for n in matched if hidden or not n.startswith(".")][:_PER_FOLDER]:
        yield _joined(folder, name)


def _make_inputs(
    where: str, words: list[str], read: Read, names: Names, depth: int
) -> Iterator[str]:
    """The prerequisites of a ``make``'s goals, as its makefile's rules reach them.

    Then what the goals' recipes name and read, as if each were a command run in the make
    directory (to :data:`_NESTED` levels of recipes).
    """
    directory, files = program_directory(where, words[1:], make=True)
    text = None
    for name in files or _MAKEFILES:  # (-f files are read in the -C directory, as make does)
        text = read(_joined(directory, name))
        if text is not None:
            break
    if text is None:
        return
    if generated_by_cmake(text):  # cd build && make: the project's sources, not CMake's rules
        yield from cmake_build(directory, read, names)
        return
    goals = prerequisites(text, _make_goals(words[1:]), names, directory)
    for name in (*goals.included, *goals.prerequisites):
        if "$" not in name and "%" not in name:
            yield _joined(directory, name)
    if depth >= _NESTED:
        return
    for recipe in goals.recipes:
        yield from (_joined(directory, f) for f in command_files({"command": recipe}))
        yield from _of_command(recipe, directory, read, names, scripts=True, depth=depth + 1)


def _cmake(where: str, words: list[str], read: Read, names: Names) -> Iterator[str]:
    """``cmake --build build``: the project's sources; ``cmake -S src -B build``: its lists."""
    build = _value_of(words, "--build")
    if build is not None:
        yield from cmake_build(_joined(where, build), read, names)
        return
    source = _value_of(words, "-S")
    operands = [w for w in words[1:] if not w.startswith("-")]
    if source is None and len(operands) == 1 and _value_of(words, "-B") is None:
        source = operands[0]  # cmake .. (the source folder, given alone)
    elif source is None and _value_of(words, "-B") is not None:
        source = "."  # cmake -B build: the source folder is where it runs
    if source is not None:  # (not cmake -E, cmake --version...)
        yield from cmake_project(_joined(where, source), read, names)


def _value_of(words: list[str], option: str) -> str | None:
    """The value of ``option`` (``--build dir``, ``--build=dir``, ``-Sdir``), if given."""
    for word, following in zip(words, [*words[1:], None], strict=True):
        if word == option:
            return following
        if word.startswith(f"{option}="):
            return word.split("=", 1)[1]
        if len(option) == 2 and word.startswith(option) and len(word) > 2:
            return word[2:]
    return None


def _operands(words: list[str], valued: frozenset[str]) -> list[str]:
    """Return the words that are neither options nor the values of ``valued`` options."""
    found, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in valued:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
    return found


def _make_goals(words: list[str]) -> list[str]:
    # (a number after -j or -l is make's, not a goal: it names no rule anyway)
    return [w for w in _operands(words, _MAKE_VALUED) if "=" not in w]


def _crate(where: str, names: Names) -> Iterator[str]:
    """A cargo package's crate roots, binaries, integration tests and build script."""
    root = _listing(names, where) or frozenset()
    if "build.rs" in root:
        yield _joined(where, "build.rs")
    src = _joined(where, "src")
    listing = _listing(names, src) if "src" in root else None
    for name in ("lib.rs", "main.rs"):
        if listing is not None and name in listing:
            yield _joined(src, name)
    for folder in ((src, "bin"), (where, "tests")):
        inside = _joined(*folder)
        rust = sorted(n for n in (_listing(names, inside) or ()) if n.endswith(".rs"))
        for name in rust[:_PER_FOLDER]:
            yield _joined(inside, name)


def _packages(where: str, words: list[str], names: Names) -> Iterator[str]:
    """The ``.go`` files of the packages a ``go`` command names (none: the folder's)."""
    patterns = [w for w in words if not w.startswith("-")] or ["."]
    for pattern in patterns[:4]:
        if pattern.endswith(".go"):
            continue  # (a file: the command names it)
        deep = pattern.endswith("/...")
        folder = _joined(where, pattern[: -len("/...")] if deep else pattern)
        listing = _listing(names, folder)
        if listing is None:
            continue
        yield from _go_files(folder, listing)
        if deep:
            for sub in sorted(n for n in listing if "." not in n)[:_PER_FOLDER]:
                inner = _joined(folder, sub)
                yield from _go_files(inner, _listing(names, inner) or frozenset())


def _collected(where: str, words: list[str], read: Read, names: Names) -> Iterator[str]:
    """The test files pytest collects from the folders it is given (none: its defaults).

    A folder named (``pytest tests``; ``tests/unit::x`` is its file's) gives itself (a new
    test file is collected too), its ``test_*.py`` and ``*_test.py`` files, and those of
    its folders one level down; a file named is the command's own. None named: the
    ``testpaths`` its configuration in that folder sets, as if named; else the test files
    of the folder it runs in, and its ``tests`` or ``test`` folder as if named (the folder
    it runs in is watched itself only when it has neither: any file made there would change
    its listing).
    """
    operands = [
        w.split("::", 1)[0]
        for w in _operands(words, _PYTEST_VALUED)
        if "$" not in w and not _GLOB.search(w)
    ]
    folders = [_joined(where, w) for w in operands if not w.endswith(".py")]
    configured = [] if operands else _testpaths(where, read)
    if configured:
        folders = [_joined(where, f) for f in configured]
    elif not operands:
        here = _listing(names, where) or frozenset()
        yield from _test_files(where, here)
        folders = [_joined(where, f) for f in _TEST_FOLDERS if f in here]
        if not folders:
            yield where
    for folder in folders[:4]:
        listing = _listing(names, folder)
        if listing is None:
            continue
        yield folder
        yield from _test_files(folder, listing)
        for sub in sorted(n for n in listing if "." not in n and n != "__pycache__"):
            inner = _joined(folder, sub)
            yield from _test_files(inner, _listing(names, inner) or frozenset())


_PYTEST_CONFIGS: Final = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_TESTPATHS: Final = re.compile(
    r"^[ \t]*testpaths[ \t]*=[ \t]*(\[[^\]]*\]|.*(?:\n[ \t]+\S.*)*)", re.MULTILINE
)
"""A ``testpaths`` setting: a TOML array, or an ini value continued on indented lines."""
_QUOTED: Final = re.compile(r"""["']([^"'\n]+)["']""")


def _testpaths(where: str, read: Read) -> list[str]:
    """Return the ``testpaths`` pytest's configuration in ``where`` sets (none: ``[]``).

    ``testpaths = ["tests", "integration"]`` (``pyproject.toml``) or ``testpaths = tests
    integration`` (an ini file, continued on indented lines); the first file that sets it,
    in pytest's order. Globs and variables are left out.
    """
    for name in _PYTEST_CONFIGS:
        text = read(_joined(where, name))
        found = _TESTPATHS.search(text) if text is not None and "testpaths" in text else None
        if found is None:
            continue
        value = found.group(1)
        paths = _QUOTED.findall(value) if value.startswith("[") else value.split()
        return [p for p in paths if "$" not in p and not _GLOB.search(p)][:4]
    return []


def _test_files(folder: str, listing: frozenset[str]) -> Iterator[str]:
    """The files pytest collects in a folder by default (``test_*.py``, ``*_test.py``)."""
    tests = sorted(n for n in listing if n.endswith(".py") and _is_test_file(n))
    for name in tests[:_PER_FOLDER]:
        yield _joined(folder, name)


def _is_test_file(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test.py")


def _go_files(folder: str, listing: frozenset[str]) -> Iterator[str]:
    for name in sorted(n for n in listing if n.endswith(".go"))[:_PER_FOLDER]:
        yield _joined(folder, name)


def _tested(where: str, words: list[str]) -> Iterator[str]:
    """The paths ``test -f out.txt`` and ``[ -d build ]`` test."""
    for option, operand in itertools.pairwise(words):
        if option in _FILE_TESTS and operand not in ("]", "]]") and "$" not in operand:
            yield _joined(where, operand)


def _searched(where: str, words: list[str], names: Names, *, always: bool) -> Iterator[str]:
    """The files under the folders a recursive search looks in, two levels down."""
    options = [w for w in words[1:] if w.startswith("-")]
    if not always and not any(_RECURSIVE.match(w) for w in options):
        return
    operands = [w for w in words[1:] if not w.startswith("-")]
    pattern_given = any(w in ("-e", "--regexp", "-f", "--file") for w in options)
    for operand in operands[0 if pattern_given else 1 :][:4]:
        if "$" in operand or _GLOB.search(operand):
            continue
        yield from _under(_joined(where, operand), names)


def _under(folder: str, names: Names) -> Iterator[str]:
    """A folder, its files and folders, and theirs (a file added to any of them lifts too)."""
    listing = _listing(names, folder)
    if listing is None:
        return
    yield folder
    taken = 0
    for name in sorted(n for n in listing if not n.startswith(".")):
        path = _joined(folder, name)
        inner = _listing(names, path) if "." not in name else None
        inside = sorted(_joined(path, n) for n in inner or () if not n.startswith("."))
        for found in (path, *inside):
            yield found
            taken += 1
            if taken >= _PER_FOLDER:
                return
