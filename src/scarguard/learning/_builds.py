"""The files a CMake build compiles and a ``java`` launch loads, named by neither.

``cmake --build build`` fails to link (``undefined reference to `add'``): the sources are
named only by the project's ``CMakeLists.txt`` (``add_executable(app src/main.c
src/util.c)``), whose folder the build folder's ``CMakeCache.txt`` gives. ``java -cp out
Main`` exits 1 because a class ``Main`` loads returns the wrong value: the classes are files
of the class path (``out/Calc.class``). A fix there, by hand or by a tool the memory does not
guard, left the call refused although it would now succeed.

A small reader, not CMake or the JVM: a word of a ``CMakeLists.txt`` that names an existing
file is a source, its ``file(GLOB ...)`` patterns are globs, its ``add_subdirectory`` folders
are read one level down; a class path's folders give their class files. All work is bounded.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["cmake_build", "cmake_project", "generated_by_cmake", "java_classes"]

Read = Callable[[str], str | None]
Names = Callable[[str], frozenset[str] | None]

_LINES: Final = 2000
"""At most this many lines of a ``CMakeLists.txt`` are read."""
_SUBDIRECTORIES: Final = 8
"""At most this many ``add_subdirectory`` folders are read."""
_PER_FOLDER: Final = 24
_WORD: Final = re.compile(r'[^\s()"#;]+')
_SUBDIRECTORY: Final = re.compile(r"add_subdirectory\s*\(\s*\"?([^\s)\"$]+)", re.IGNORECASE)
_HOME: Final = re.compile(r"^CMAKE_HOME_DIRECTORY:INTERNAL=(.+)$", re.MULTILINE)
_GENERATED: Final = "# CMAKE generated file"
"""How a Makefile that CMake generated begins (its rules name CMake's files, not sources)."""
_JAVA_VALUED: Final = frozenset(
    {"-cp", "-classpath", "--class-path", "-p", "--module-path", "--add-modules",
     "--add-opens", "--add-exports", "-javaagent", "--enable-native-access"}
)  # fmt: skip
"""``java``'s options whose value is the next word."""


def cmake_build(build: str, read: Read, names: Names) -> Iterator[str]:
    """What building the CMake build folder ``build`` compiles: its project's sources.

    Args:
        build: The build folder (``cmake --build build``, ``ctest --test-dir build``, or the
            folder of a CMake-generated Makefile), relative to the root.
        read: Returns a file's text (``None`` when it cannot be read).
        names: Lists a folder (``None`` when it cannot be listed).
    """
    cache = read(os.path.join(build, "CMakeCache.txt"))
    home = _HOME.search(cache[:200_000]) if cache else None
    if home is not None:
        source = home.group(1).strip()
    else:  # not configured yet, or no cache: the build folder inside the project
        source = os.path.dirname(os.path.normpath(build)) or "."
    yield from cmake_project(source, read, names)


def generated_by_cmake(makefile: str) -> bool:
    """Whether a Makefile's text is one CMake generated (its build folder is CMake's)."""
    return makefile.startswith(_GENERATED)


def cmake_project(source: str, read: Read, names: Names) -> Iterator[str]:
    """The ``CMakeLists.txt`` files of a project, and the files and globs they name."""
    folders = [source]
    for depth in range(2):
        subdirectories: list[str] = []
        for folder in folders:
            lists = os.path.join(folder, "CMakeLists.txt") if folder != "." else "CMakeLists.txt"
            text = read(lists)
            if text is None:
                continue
            yield lists
            text = "\n".join(text.splitlines()[:_LINES])
            yield from _named(folder, text, names)
            if depth == 0:
                for match in _SUBDIRECTORY.finditer(text):
                    subdirectories.append(_joined(folder, match.group(1)))
        folders = subdirectories[:_SUBDIRECTORIES]


def _named(folder: str, text: str, names: Names) -> Iterator[str]:
    """The words of a ``CMakeLists.txt`` that name files there (a glob: its matches)."""
    listed: dict[str, frozenset[str]] = {}
    taken = 0
    for line in text.splitlines():
        for word in _WORD.findall(line.split("#", 1)[0]):
            if "${" in word or "$<" in word or word.startswith("-") or not _fileish(word):
                continue
            path = _joined(folder, word)
            inside, name = os.path.split(path)
            if inside not in listed:
                listed[inside] = names(inside or ".") or frozenset()
            if "*" in name or "?" in name:
                matched = sorted(n for n in listed[inside] if _matches(n, name))
                found = [_joined(inside, n) for n in matched[:_PER_FOLDER]]
                if found:
                    found.insert(0, inside or ".")
            else:
                found = [path] if name in listed[inside] else []
            for path in found:
                yield path
                taken += 1
                if taken >= _PER_FOLDER * 2:
                    return


def _fileish(word: str) -> bool:
    return "/" in word or "." in word.lstrip(".") or "*" in word


def _matches(name: str, pattern: str) -> bool:
    return not name.startswith(".") and fnmatch.fnmatchcase(name, pattern)


def _joined(folder: str, name: str) -> str:
    if os.path.isabs(name) or folder in ("", "."):
        return os.path.normpath(name)
    return os.path.normpath(os.path.join(folder, name))


def java_classes(where: str, words: list[str], names: Names) -> Iterator[str]:
    """The class files ``java [options] Main`` loads from the folders of its class path.

    The main class's file and the other class files of its package folder, in each folder
    of ``-cp``/``-classpath``/``--class-path`` (default: the folder it runs in). A source
    file launch (``java Main.java``) and ``-jar app.jar`` name their file: nothing more.
    """
    classpath, main, i = ".", None, 1
    while i < len(words):
        word = words[i]
        if word in ("-jar", "--source"):
            return
        if word in ("-cp", "-classpath", "--class-path") and i + 1 < len(words):
            classpath = words[i + 1]
        elif word.startswith("--class-path="):
            classpath = word.split("=", 1)[1]
        if word in _JAVA_VALUED:
            i += 2
            continue
        if not word.startswith("-"):
            main = word
            break
        i += 1
    if main is None or main.endswith(".java") or "$" in main or "$" in classpath:
        return
    package, _, _ = main.replace(".", "/").rpartition("/")
    for entry in classpath.split(os.pathsep)[:4]:
        if not entry or entry.endswith((".jar", ".zip", "*")):
            continue
        folder = _joined(_joined(where, entry), package) if package else _joined(where, entry)
        listing = names(folder)
        if listing is None:
            continue
        classes = sorted(n for n in listing if n.endswith(".class"))
        for name in classes[:_PER_FOLDER]:
            yield _joined(folder, name)
