"""What a tool call's arguments hold: the texts an edit moves, the targets, odd values.

The argument names that mark a shell command, an edit's search and replacement, a write's
content or a search's query; the strings of target values; paths normalised against a
root (URLs verbatim); a value that does not serialise, described by its type.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from typing import Any, Final

from scarguard import canonical

__all__ = [
    "CONTENT_ARGS",
    "EDITS_ARG",
    "NEW_ARGS",
    "OLD_ARGS",
    "SEARCH_ARGS",
    "SHELL_ARGS",
    "URL_KEYS",
    "command_strings",
    "inserted_text",
    "normalise_path",
    "safe_value",
    "search_text",
    "string_targets",
    "strings",
]

URL_KEYS: Final = frozenset({"url", "urls", "uri", "uris"})
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
SHELL_ARGS: Final = frozenset({"command", "cmd", "script", "shell_command"})
OLD_ARGS: Final = frozenset({"old_string", "old_str", "old_text", "oldText", "old", "search"})
NEW_ARGS: Final = frozenset(
    {"new_string", "new_str", "new_text", "newText", "new", "replace", "replacement"}
)
EDITS_ARG: Final = "edits"
"""The list of edits of a multi-edit tool (Claude Code's ``MultiEdit``, the MCP filesystem
server's ``edit_file``: ``[{"oldText": ..., "newText": ...}]``)."""
CONTENT_ARGS: Final = frozenset({"content", "contents", "text", "file_text", "data", "body"})
SEARCH_ARGS: Final = frozenset({"query", "pattern", "regex", "q", "search", "keywords"})


def _text_of(args: Mapping[str, Any], keys: frozenset[str]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


_ARGV: Final = 256
"""An argument vector of more words than this is no command line (it is left as it is)."""


def command_strings(args: Mapping[str, Any]) -> Mapping[str, Any]:
    """Return ``args`` with a command given as an argument vector spelt as a command line.

    ``{"command": ["bash", "-lc", "git checkout main"]}`` (how some shell tools take their
    command) becomes ``{"command": "bash -lc 'git checkout main'"}``, quoted as the shell
    would need it, so that it is read, fingerprinted and judged as the same command given
    as text. ``args`` itself is returned when no command is a vector of strings.
    """
    changed: dict[str, Any] | None = None
    for key in SHELL_ARGS:
        value = args.get(key)
        if (
            isinstance(value, (list, tuple))
            and 0 < len(value) <= _ARGV
            and all(isinstance(word, str) for word in value)
        ):
            if changed is None:
                changed = dict(args)
            changed[key] = shlex.join(value)
    return args if changed is None else changed


def _only_edit(args: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return the one edit of a multi-edit call that makes a single edit, else ``None``.

    Of several edits, which one failed is not known from the arguments: none is taken.
    """
    edits = args.get(EDITS_ARG)
    if isinstance(edits, (list, tuple)) and len(edits) == 1 and isinstance(edits[0], Mapping):
        return edits[0]
    return None


def search_text(args: Mapping[str, Any]) -> str | None:
    """Return the text an edit looks for (``old_string``, ``search``...), if it names one.

    A multi-edit call's, when it makes one edit (``edits=[{"oldText": ...}]``).
    """
    found = _text_of(args, OLD_ARGS)
    if found is None and EDITS_ARG in args:
        edit = _only_edit(args)
        found = None if edit is None else _text_of(edit, OLD_ARGS)
    return found


def inserted_text(args: Mapping[str, Any]) -> str | None:
    """Return the text an edit or a write puts in (``new_string``, ``content``...), if any."""
    found = _text_of(args, NEW_ARGS) or _text_of(args, CONTENT_ARGS)
    if found is None and EDITS_ARG in args:
        edit = _only_edit(args)
        found = None if edit is None else _text_of(edit, NEW_ARGS)
    return found


@functools.lru_cache(maxsize=4096)
def normalise_path(target: str, root: str | None = None) -> str:
    """Return a path through ``normpath``, relative to ``root`` when under it; URLs verbatim.

    Cached: paths repeat.
    """
    if _URL.match(target):
        return target
    path = os.path.normpath(target)
    if root is not None and os.path.isabs(path):
        inside = os.path.relpath(path, root)
        if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
            return inside
    return path


def string_targets(args: Mapping[str, Any], keys: frozenset[str]) -> tuple[str, ...] | None:
    """Return the non-empty string values of target keys, without repeats, in order.

    ``None`` when a target value is not a string (lists, paths: the general walk).
    """
    # (most calls have one target: no list is built for it; this runs on every described call)
    first: str | None = None
    more: list[str] | None = None
    for key, value in args.items():
        if key in keys:
            if type(value) is not str:
                return None
            if value:
                if first is None:
                    first = value
                elif value != first:
                    if more is None:
                        more = [first]
                    more.append(value)
    if more is not None:
        return tuple(dict.fromkeys(more))
    return () if first is None else (first,)


def strings(values: Any) -> Iterator[str]:
    """Yield the strings in ``values``: lists and tuples flattened, sets sorted, paths as text."""
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, os.PathLike):
            path = os.fspath(value)
            if isinstance(path, str):
                yield path
        elif isinstance(value, (list, tuple)):
            yield from strings(value)
        elif isinstance(value, (set, frozenset)):
            yield from sorted(strings(value))


def safe_value(value: Any) -> Any:
    """Return ``value`` if it serialises canonically, else a description by its type alone."""
    try:
        canonical.canonical_json(value)
    except Exception:  # whatever went wrong, the type alone still describes it
        cls = type(value)
        return {"<type>": f"{cls.__module__}.{cls.__qualname__}", "<unrepresentable>": True}
    return value
