"""The files a command reads in another directory than the root: ``cd sub && ...``, ``make -C``.

A failure depends on the manifests of the directory its command ran in. The engine watches
the root's (``adapters._shell.manifests_for``); a command that changes directory first
(``cd pkg && npm test``), or a ``make`` told where to look (``make -C sub build``,
``make --directory=sub``, ``make -f other.mk``), reads others, also inside ``bash -c '...'``,
and a change of those must lift what it taught too: without them, adding the missing rule
to ``sub/Makefile`` left ``make -C sub build`` refused.

The paths are relative to the directory the command starts in (the root), or absolute where
the command names an absolute directory; a ``cd`` that cannot be followed (``cd``, ``cd -``,
``cd ~``, a variable) ends the walk, as what comes after runs somewhere unknown.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Iterator, Mapping
from typing import Any, Final

from scarguard.adapters._shell import SEGMENTS, manifests_for
from scarguard.learning._make import MAKEFILES

__all__ = ["READ", "elsewhere_files", "program_directory", "programs", "ran_in"]

_MAKES: Final = frozenset({"make", "gmake"})
_CHDIR: Final = frozenset({"cd", "pushd"})
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash"})
_DIRECTORY: Final = ("-C", "--directory", "--dir", "--prefix", "--cwd", "--project")
"""A directory option: the short one, then the long ones (see :func:`_options`)."""
_FILE: Final = ("-f", "--file", "--makefile")
_HINTS: Final = ("cd", "pushd", "make", "-C", *_DIRECTORY[1:])
"""A command without any of these stays in the root."""
_QUOTING: Final = frozenset("'\"\\")
"""What shlex reads other than spaces: a segment without any, nor tabs, splits on spaces."""
_CACHED: Final = 1024
"""Commands up to this long have their answer remembered (agents repeat commands)."""
READ: Final = 4096
"""How much of a longer command is read (the words are split in Python: bounded work)."""


def elsewhere_files(call_args: Mapping[str, Any]) -> tuple[str, ...]:
    """Return the manifests and makefiles a command reads outside the root's own, in order.

    Args:
        call_args: The call's arguments; the command is its ``command`` (or ``cmd``) text.

    Returns:
        ``sub/Makefile``... for ``make -C sub``, the ``-f`` files (in the ``-C`` directory),
        and for a program run after ``cd sub``, its manifests there. Nothing for a command
        that stays in the root.
    """
    for key in ("command", "cmd"):
        value = call_args.get(key)
        if isinstance(value, str):
            if len(value) <= _CACHED:
                return _files(value)
            return _files.__wrapped__(value[:READ])  # (a long command: its start)
    return ()


@functools.lru_cache(maxsize=512)
def _files(command: str) -> tuple[str, ...]:
    if not any(hint in command for hint in _HINTS):
        return ()  # (most commands: no word this reads)
    found: dict[str, None] = {}
    for where, words in programs(command):
        if where is None:
            break  # somewhere this cannot follow
        program = os.path.basename(words[0])
        directory, files = program_directory(where, words[1:], make=program in _MAKES)
        if program in _MAKES:
            found.update(dict.fromkeys(_makefiles(directory, files)))
        elif directory != ".":
            found.update(dict.fromkeys(_joined(directory, sorted(manifests_for(program)))))
    return tuple(found)


def ran_in(call_args: Mapping[str, Any]) -> str:
    """Return the directory a command's last ``cd`` (or ``pushd``) left it in.

    Relative to the root (``"."`` for the root itself, or when a ``cd`` cannot be followed),
    or absolute: the paths its programs print are relative to it.
    """
    for key in ("command", "cmd"):
        value = call_args.get(key)
        if isinstance(value, str):
            return _where(value[:READ]) if "cd" in value or "pushd" in value else "."
    return "."


@functools.lru_cache(maxsize=512)
def _where(command: str) -> str:
    where: str | None = "."
    for where, _ in programs(command, chdirs=True):
        if where is None:
            return "."  # somewhere this cannot follow: the paths are taken as they are
    return where or "."


def programs(command: str, *, chdirs: bool = False) -> Iterator[tuple[str | None, list[str]]]:
    """Yield each program a command runs, as its words, with the directory it runs in.

    Through ``bash -c '...'``; ``cd`` and ``pushd`` move the directory (yielded themselves
    with ``chdirs``, as the directory they lead to). A ``cd`` that cannot be followed yields
    ``None`` and ends the walk.
    """
    inner = _shell_c(command)
    if inner is not None:  # bash -c "cd sub && make build": the command it runs
        yield from programs(inner, chdirs=chdirs)
        return
    where = "."
    for segment in SEGMENTS.split(command):
        words = _words(segment)
        if not words:
            continue
        if words[0] in _CHDIR:
            if len(words) != 2 or words[1].startswith(("-", "~", "$")):
                yield None, words
                return
            where = os.path.normpath(os.path.join(where, words[1]))
            if chdirs:
                yield where, words
            continue
        yield where, words


def _shell_c(command: str) -> str | None:
    """Return the command of ``bash -c '...'`` (``sh``, ``zsh``, ``dash``), else ``None``."""
    first = command.lstrip().split(None, 1)
    if not first or os.path.basename(first[0]) not in _SHELLS:
        return None
    words = _words(command)
    if len(words) == 3 and words[1] == "-c":
        return words[2]
    return None


def _words(segment: str) -> list[str]:
    """Return a command's words, its leading variable assignments and brackets left out."""
    if segment.isprintable() and not _QUOTING.intersection(segment):
        words = [w for w in segment.split(" ") if w]  # (what shlex gives, a tenth the cost)
    else:
        try:
            words = shlex.split(segment)
        except ValueError:  # an unclosed quote: as the shell would not run it, split it plainly
            words = segment.split()
    words = [w.strip("()") for w in words]
    while words and "=" in words[0] and not words[0].startswith(("-", "=")):
        words.pop(0)  # FOO=1 make ...
    return [w for w in words if w]


def program_directory(where: str, words: list[str], *, make: bool) -> tuple[str, list[str]]:
    """Return the directory a program runs in after its options, and make's ``-f`` files.

    The directory options of the programs agents run: ``make -C``, ``pnpm -C``/``--dir``,
    ``go -C``, ``poetry -C``/``--directory``, ``npm --prefix``, ``yarn --cwd``, ``uv
    --directory``/``--project``; each spelt ``-C sub``, ``-Csub``, ``--dir sub`` or
    ``--dir=sub``.
    """
    directory, files = where, []
    i = 0
    while i < len(words):
        word = words[i]
        following = words[i + 1] if i + 1 < len(words) else None
        value, taken = _option(word, following, _DIRECTORY)
        if value is not None:
            directory = os.path.normpath(os.path.join(directory, value))
        elif make:
            value, taken = _option(word, following, _FILE)
            if value is not None:
                files.append(value)
        i += taken
    return directory, files


def _makefiles(directory: str, files: list[str]) -> list[str]:
    """Return the makefiles a ``make`` reads, when not the root's own."""
    if files:  # read in the -C directory, as make changes into it first
        return [os.path.normpath(os.path.join(directory, f)) for f in files]
    if directory == ".":
        return []
    return _joined(directory, sorted(MAKEFILES))


def _option(word: str, following: str | None, names: tuple[str, ...]) -> tuple[str | None, int]:
    """Return the value an option of ``names`` gives, and how many words it takes.

    ``names`` is a short option and long ones: ``-C sub``, ``-Csub``, ``--dir sub`` and
    ``--dir=sub``. Any other word gives nothing and takes one.
    """
    short, *longs = names
    for name in longs:
        if word == name:
            return following, 2
        if word.startswith(name + "="):
            return word[len(name) + 1 :] or None, 1
    if word == short:
        return following, 2
    if word.startswith(short) and not word.startswith("--"):
        return word[len(short) :], 1
    return None, 1


def _joined(directory: str, names: list[str]) -> list[str]:
    return [os.path.normpath(os.path.join(directory, n)) for n in names]
