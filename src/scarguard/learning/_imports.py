"""The workspace's modules a failing source file imports, and what they import in turn.

A failing test names its test file (``tests/test_calc.py:3: AssertionError``), not the code
under test: ``pkg/calc.py``, fixed by hand or by a tool the memory does not guard, left
``pytest tests/test_calc.py`` refused. The source files a failure depends on are therefore
followed through their imports to the modules that resolve under the root, breadth first, a
few levels deep and a bounded number of files:

- Python: ``import a.b``, ``from a.b import c``, ``from .c import d``, also under ``src/``;
  the standard library and installed packages resolve to nothing here and are not followed;
- JavaScript and TypeScript: the relative specifiers of ``import ... from './calc'``,
  ``require('../lib/x')``, ``export ... from``, ``import('./y')``, resolved as Node and
  TypeScript do (``./calc`` to ``calc.ts``, ``calc.js``..., ``calc/index.js``; ``./calc.js``
  to ``calc.ts`` too); packages are not followed;
- Go: the other ``.go`` files of the folder, the package a file belongs to;
- Rust: the crate's root (``src/lib.rs``, ``src/main.rs``) for a file of it or of its
  ``tests``, ``benches`` or ``examples``, and the files its ``mod x;`` declarations load.

Code run inline is followed the same way: a code tool's ``code`` argument
(``execute_python(code="from pkg.calc import add; ...")``), ``python -c "..."``, ``node -e
"require('./lib/calc')"``, code piped into an interpreter or written in a heredoc.

Existence is judged from folder listings (one per folder, remembered by the observer while
the folder is unchanged), so a module that is not in the workspace costs no failed ``stat``.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, NamedTuple

from scarguard.adapters._shell import HEREDOC_START
from scarguard.adapters._shell_scan import run_words, segments

__all__ = ["SOURCES", "code_imports", "imported_files", "inline_code"]

_IMPORT: Final = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+\(?[ \t]*([\w, \t*]*)"
    r"|import[ \t]+([\w., \t]+))",
    re.MULTILINE,
)
_JS_IMPORT: Final = re.compile(
    r"""(?:\bfrom|\bimport|\brequire\s*\()\s*\(?\s*['"](\.{1,2}/[^'"\n]{0,200})['"]"""
)
_JS: Final = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
SOURCES: Final = (".py", ".go", ".rs", *_JS)
"""What the files whose imports are followed end with."""
_STDLIB: Final = frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__"}
_ROOTS: Final = (".", "src")
_FILES: Final = 24
"""At most this many modules are followed per failure."""
_DEPTH: Final = 3
_READ: Final = 64 * 1024
"""Only the first 64 KiB of a module are searched for imports."""

_CODE_ARGS: Final = ("code", "python_code", "source_code", "script", "python", "source")
"""The arguments a code tool is given its Python in (smolagents' and most agents' ``code``)."""
_INTERPRETER: Final = re.compile(r"^(?:python|pypy|node|deno|bun)[\d.]*$")
_EVALUATES: Final = frozenset({"-c", "-e", "--eval", "-p", "--print"})
"""The options an interpreter is given code to run with (``python -c``, ``node -e``)."""
"""A here-document's start and its word (``python3 - <<'EOF'``)."""
_HERESTRING: Final = re.compile(r"""<<<[ \t]*(?:'([^']*)'|"((?:[^"\\]|\\.)*)"|([^\s;&|<>]+))""")
"""A here-string and its text, quoted or one word (``python3 <<< "import x"``)."""

Read = Callable[[str], str | None]
Names = Callable[[str], frozenset[str] | None]


def inline_code(call_args: Mapping[str, Any]) -> str | None:
    """Return the code a call runs inline, if it imports anything (first 64 KiB).

    A code tool's ``code`` argument (or ``script``, ``source``...); or, in a command, the
    code given to ``python -c``, ``node -e``/``--eval``/``-p``, piped into an interpreter
    (``echo '...' | python3``), written into a heredoc (``python3 - <<'EOF'``) or a
    here-string (``python3 <<< "import pkg"``).
    """
    for key in _CODE_ARGS:
        value = call_args.get(key)
        if isinstance(value, str) and ("import" in value or "require" in value):
            return value[:_READ]
    for key in ("command", "cmd"):
        command = call_args.get(key)
        if isinstance(command, str) and ("import" in command or "require" in command):
            return _inline(command[:_READ])
    return None


def _inline(command: str) -> str | None:
    """The code a command's interpreters are given inline, joined (``None``: none)."""
    codes: list[str] = []
    echoed: list[str] = []  # what the segment before printed, if it was echo or printf
    runs = False
    for words, stdin in segments(command):
        texts = run_words(w.text for w in words)
        if not texts:
            continue
        program = os.path.basename(texts[0])
        if _INTERPRETER.match(program):
            runs = True
            given, reads_stdin = _evaluated(texts)
            if given is not None:
                codes.append(given)
            elif reads_stdin and stdin:
                codes.extend(echoed)
        echoed = texts[1:] if program in ("echo", "printf") else []
    if runs and "<<<" in command:
        codes.extend(_herestrings(command))
    if runs and "<<" in command.replace("<<<", ""):
        codes.extend(_heredocs(command))
    return "\n".join(codes) or None


def _herestrings(command: str) -> Iterator[str]:
    """The texts of a command's first two here-strings (``<<< "..."``, ``<<<'...'``)."""
    for match in itertools.islice(_HERESTRING.finditer(command), 2):
        single, double, bare = match.groups()
        if double is not None:
            yield re.sub(r"\\(.)", r"\1", double)
        else:
            yield single if single is not None else bare


def _heredocs(command: str) -> Iterator[str]:
    """The bodies of a command's first two here-documents (a string search each)."""
    for match in itertools.islice(HEREDOC_START.finditer(command), 2):
        start = command.find("\n", match.end())
        if start < 0:
            return
        word = match.group(3)
        end = command.find(f"\n{word}\n", start)
        end = end if end >= 0 else command.find(f"\n{word}", start)
        yield command[start + 1 : end if end >= 0 else len(command)]


def _evaluated(words: list[str]) -> tuple[str | None, bool]:
    """The code an interpreter's words give it, and whether it reads its standard input."""
    for i, word in enumerate(words[1:], 1):
        if word in _EVALUATES:
            return (words[i + 1] if i + 1 < len(words) else None), False
        if word == "-":
            return None, True
        if word in ("-m", "--module") or not word.startswith("-"):
            return None, False  # a module's or a script's name: it runs that
    return None, True


def code_imports(code: str, read: Read, names: Names, where: str = ".") -> tuple[str, ...]:
    """Return the workspace modules inline code imports, directly or not.

    As :func:`imported_files` does for a file: its Python imports and its JavaScript
    relative specifiers (``require('./lib/calc')``), from ``where``, the folder the code
    runs in.
    """
    roots = _ROOTS if where == "." else (where, os.path.join(where, "src"), *_ROOTS)
    statements = _statements(code.replace(";", "\n"))  # (import a; from b import c)
    here = "_.py" if where == "." else os.path.join(where, "_.py")
    first = _resolved(here, statements, names, roots)
    first += [f for spec in _specifiers(code) for f in _script(where, spec, names)]
    if not first:
        return ()
    found = dict.fromkeys(first)
    found.update(dict.fromkeys(imported_files(list(found), read, names, where)))
    return tuple(found)[:_FILES]


def imported_files(
    starts: Iterable[str], read: Read, names: Names, where: str = "."
) -> tuple[str, ...]:
    """Return the workspace modules the source files ``starts`` import, directly or not.

    Args:
        starts: Paths relative to the root (``.py``, ``.ts``, ``.go``, ``.rs``... files;
            others are ignored).
        read: Returns a file's text (``None`` when it cannot be read).
        names: Lists a folder relative to the root (``None`` when it cannot be).
        where: The folder the command ran in (``cd app && pytest``), relative to the root:
            Python's absolute imports resolve there (and under its ``src/``) first.

    Returns:
        Up to 24 paths relative to the root, nearest first, ``starts`` left out.
    """
    queue = tuple(s for s in dict.fromkeys(starts) if s.endswith(SOURCES) and not os.path.isabs(s))
    if not queue:
        return ()
    roots = _ROOTS if where == "." else (where, os.path.join(where, "src"), *_ROOTS)
    key = (getattr(read, "__self__", read), queue, roots)
    known = _WALKS.get(key)
    if known is not None and _holds(known, read, names):
        return known.found
    walk = _walk(queue, read, names, roots)
    if len(_WALKS) >= _REMEMBERED:
        _WALKS.clear()
    _WALKS[key] = walk
    return walk.found


class _Walk(NamedTuple):
    """A walk's answer and what it read: it holds while every listing and text does.

    A text is kept as its length and hash, not itself: a remembered walk holds no file.
    """

    found: tuple[str, ...]
    listings: tuple[tuple[str, frozenset[str] | None], ...]
    texts: tuple[tuple[str, tuple[int, int] | None], ...]


_WALKS: dict[tuple[object, tuple[str, ...], tuple[str, ...]], _Walk] = {}
_REMEMBERED: Final = 128
"""Walks remembered (by observer and starting files): a failing test fails again."""


def _holds(walk: _Walk, read: Read, names: Names) -> bool:
    """Return whether nothing the walk read changed (a ``stat`` per folder and file)."""
    return all(names(f) == listing for f, listing in walk.listings) and all(
        _print(read(p)) == text for p, text in walk.texts
    )


def _print(text: str | None) -> tuple[int, int] | None:
    return None if text is None else (len(text), hash(text))


def _walk(queue: tuple[str, ...], read: Read, names: Names, roots: tuple[str, ...]) -> _Walk:
    listed: dict[str, frozenset[str] | None] = {}  # (each folder listed once per walk)
    texts: dict[str, tuple[int, int] | None] = {}

    def names_once(folder: str) -> frozenset[str] | None:
        if folder not in listed:
            listed[folder] = names(folder)
        return listed[folder]

    seen = set(queue)
    found: list[str] = []
    for _ in range(_DEPTH):
        following: list[str] = []
        for path in queue:
            text = read(path)
            texts[path] = _print(text)
            if text is None:
                continue
            for module in _imports(path, text[:_READ], names_once, roots):
                if module not in seen:
                    seen.add(module)
                    found.append(module)
                    following.append(module)
                    if len(found) >= _FILES:
                        return _Walk(tuple(found), tuple(listed.items()), tuple(texts.items()))
        queue = tuple(following)
    return _Walk(tuple(found), tuple(listed.items()), tuple(texts.items()))


def _imports(path: str, text: str, names: Names, roots: tuple[str, ...]) -> list[str]:
    """Return the workspace files the source file at ``path`` imports."""
    if path.endswith(".py"):
        return _resolved(path, _statements(text), names, roots)
    if path.endswith(".rs"):
        return _rust(path, text, names)
    if path.endswith(".go"):
        folder = os.path.dirname(path)
        listing = names(folder or ".") or ()
        return sorted(_joined(folder, (n for n in listing if n.endswith(".go"))))
    folder = os.path.dirname(path)
    return [f for spec in _specifiers(text) for f in _script(folder, spec, names)]


@functools.lru_cache(maxsize=64)
def _specifiers(text: str) -> tuple[str, ...]:
    """Return the relative module specifiers of a JavaScript or TypeScript file's text."""
    return tuple(dict.fromkeys(_JS_IMPORT.findall(text)))


def _script(folder: str, spec: str, names: Names) -> list[str]:
    """Return the file a relative specifier resolves to, as Node and TypeScript look."""
    path = os.path.normpath(os.path.join(folder, spec))
    if path.startswith(".."):
        return []
    parent, name = os.path.split(path)
    listing = names(parent or ".")
    if not listing:
        return []
    stem, suffix = os.path.splitext(name)
    tries = [name] if suffix in _JS else []
    if suffix in (".js", ".jsx", ".mjs", ".cjs"):  # TypeScript's ./calc.js is calc.ts
        tries += [stem + ext for ext in _JS if ext.startswith((".t", ".m", ".c"))]
    tries += [name + ext for ext in _JS]
    for candidate in tries:
        if candidate in listing:
            return _joined(parent, (candidate,))
    if name in listing:
        inner = names(path) or ()
        for ext in _JS:
            if f"index{ext}" in inner:
                return [os.path.join(path, f"index{ext}")]
    return []


_MOD: Final = re.compile(
    r"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.MULTILINE
)
_CRATE_PARTS: Final = ("src", "tests", "benches", "examples")


def _rust(path: str, text: str, names: Names) -> list[str]:
    """Return the crate roots above a Rust file and the modules its ``mod x;`` load."""
    out: list[str] = []
    parts = path.split("/")
    at = next((i for i, part in enumerate(parts[:-1]) if part in _CRATE_PARTS), None)
    if at is not None:  # crates/app/tests/it.rs: crates/app/src/lib.rs, main.rs
        src = "/".join([*parts[:at], "src"])
        listing = names(src) or ()
        out += [f"{src}/{n}" for n in ("lib.rs", "main.rs") if n in listing]
    folder, name = os.path.split(path)
    if name not in ("lib.rs", "main.rs", "mod.rs"):
        folder = os.path.join(folder, name[:-3])  # a.rs declares its modules in a/
    for module in _MOD.findall(text):
        listing = names(folder or ".") or ()
        if f"{module}.rs" in listing:
            out.append(os.path.join(folder, f"{module}.rs"))
        elif module in listing and "mod.rs" in (names(os.path.join(folder, module)) or ()):
            out.append(os.path.join(folder, module, "mod.rs"))
    return out


def _joined(folder: str, names: Iterable[str]) -> list[str]:
    return [os.path.join(folder, n) if folder and folder != "." else n for n in names]


_Statement = tuple[int, str, tuple[str, ...]]
"""One import: its level (dots), the module (``a.b``, or ``""``), the names it imports."""


@functools.lru_cache(maxsize=64)
def _statements(text: str) -> tuple[_Statement, ...]:
    """Return the import statements of a module's text (remembered: the same files recur)."""
    out: list[_Statement] = []
    for match in _IMPORT.finditer(text):
        source, imported, plain = match.groups()
        if plain is not None:
            for module in plain.split(","):
                name = module.strip().split(" ")[0]
                if name:
                    out.append((0, name, ()))
            continue
        level = len(source) - len(source.lstrip("."))
        members = (m.strip().split(" ")[0] for m in imported.split(","))
        out.append((level, source[level:], tuple(m for m in members if m and m != "*")))
    return tuple(out)


def _resolved(
    path: str, statements: tuple[_Statement, ...], names: Names, roots: tuple[str, ...]
) -> list[str]:
    """Return the workspace files the imports of the module at ``path`` name."""
    out: list[str] = []
    package = os.path.dirname(path)
    for level, base, members in statements:
        if level:
            folder = package
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            stem = os.path.join(folder, *base.split(".")) if base else folder
            found = _file(stem, names)
            out.extend(found)
            if not base or (found and found[0].endswith("__init__.py")):
                out.extend(f for m in members for f in _file(os.path.join(stem, m), names))
        elif base:
            found = _module(base, names, roots)
            out.extend(found)
            if found and found[0].endswith("__init__.py"):  # c may be a module of package a.b
                folder = os.path.dirname(found[0])
                out.extend(f for m in members for f in _file(os.path.join(folder, m), names))
    return out


def _module(dotted: str, names: Names, roots: tuple[str, ...]) -> list[str]:
    """Return the file of an absolute module under the root or ``src/`` (none: not ours)."""
    parts = dotted.split(".")
    if not parts[0] or parts[0] in _STDLIB:
        return []
    for top in roots:
        found = _file(os.path.join(top, *parts) if top != "." else os.path.join(*parts), names)
        if found:
            return found
    return []


def _file(stem: str, names: Names) -> list[str]:
    """Return ``stem.py`` or ``stem/__init__.py`` if the listings show one."""
    folder, name = os.path.split(os.path.normpath(stem))
    listing = names(folder or ".")
    if not listing:
        return []
    if f"{name}.py" in listing:
        return [os.path.join(folder, f"{name}.py") if folder else f"{name}.py"]
    if name in listing:
        inner = names(os.path.join(folder, name) if folder else name)
        if inner and "__init__.py" in inner:
            init = os.path.join(folder, name, "__init__.py") if folder else f"{name}/__init__.py"
            return [init]
    return []
