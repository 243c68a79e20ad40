"""The files a ``make`` goal is made from, read from the Makefile as make would read them.

``make test`` fails in ``calc.c``; its Makefile names the file through a rule
(``calc_test: calc.c test.c``), a variable (``OBJS = $(SRCS:.c=.o)``), a wildcard
(``SRCS := $(wildcard *.c)``), a pattern rule (``%.o: %.c``) or make's built-in rules (a
``calc.o`` with no rule of its own is made from ``calc.c``). This reads the rules the goals
reach through their prerequisites, with the variables, substitution references and
``wildcard`` expanded, and gives the files among them, the included makefiles too, and the
commands of the recipes the goals run (``test: ; ./check.sh``: what ``check.sh`` reads is a
prerequisite in all but name).

A small reader, not make: what it cannot expand (a function other than ``wildcard``, a
variable of the environment) expands to nothing, so it only ever watches less than make
reads. All work is bounded (lines, expansion depth, files).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple

from scarguard.learning._make import make_sources

__all__ = ["Goals", "prerequisites"]

Names = Callable[[str], frozenset[str] | None]

_LINES: Final = 2000
"""At most this many lines of a makefile are read."""
_DEPTH: Final = 8
"""Variables are expanded this many levels deep at most."""
_MAX: Final = 48
_ASSIGN: Final = re.compile(
    r"^(?:override\s+|export\s+)?([\w.-]+)\s*(::?=|:::=|\+=|\?=|!=|=)\s*(.*)$"
)
"""A variable's assignment (``=``, ``:=``, ``::=``, ``:::=``, ``+=``, ``?=``, ``!=``)."""
_REF: Final = re.compile(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\}|([^({]))")
"""An innermost reference: ``$(NAME)``, ``${NAME}``, ``$(fn args)``, ``$@``."""
_INCLUDE: Final = re.compile(r"^\s*-?s?include\s+(.+)$")
_RECIPES: Final = 16
"""At most this many recipe lines are given, the goals' first."""
_AUTOMATIC: Final = re.compile(r"\$(?:[@<^+*?|]|\([@<^+*?][DF]?\))")
"""An automatic variable (``$@``, ``$<``, ``$^``, ``$(@D)``...), set per rule."""


class Goals(NamedTuple):
    """What ``make goals`` reads and runs, as its makefile says."""

    prerequisites: list[str]
    """The files reached (goals left out), nearest first, relative to the make directory."""
    included: list[str]
    """The makefiles the text includes."""
    recipes: list[str]
    """The commands of the reached rules' recipes, expanded (``@``, ``-``, ``+`` dropped)."""


def prerequisites(text: str, goals: list[str], names: Names, directory: str = ".") -> Goals:
    """Return the files ``make goals`` is made from, the included makefiles, and the recipes.

    Args:
        text: The makefile's text.
        goals: The goals (none: the default goal, the first rule's first target).
        names: Lists a folder relative to the root (``None`` when it cannot be listed).
        directory: The folder make runs in, relative to the root.

    Returns:
        The :class:`Goals`.
    """
    variables: dict[str, str] = {"MAKE": "make"}
    rules: dict[str, list[str]] = {}
    recipes: dict[str, list[str]] = {}
    recipe_of: list[str] = []  # the targets of the rule whose recipe lines come next
    patterns: list[tuple[str, list[str]]] = []
    included: list[str] = []
    first: str | None = None

    listed: dict[str, frozenset[str]] = {}

    def listing(folder: str) -> frozenset[str]:  # (each folder listed once)
        if folder not in listed:
            where = directory if folder in ("", ".") else os.path.join(directory, folder)
            listed[folder] = names(os.path.normpath(where)) or frozenset()
        return listed[folder]

    def expand(value: str) -> str:
        for _ in range(_DEPTH):
            if "$" not in value:
                break
            value = _REF.sub(lambda m: _reference(m, variables, listing), value)
        return value

    for line in _logical_lines(text):
        if line.startswith("\t"):
            for target in recipe_of:
                recipes.setdefault(target, []).append(line[1:])
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        recipe_of = []
        line = line.split("#", 1)[0].rstrip()
        assignment = _ASSIGN.match(line.strip())
        if assignment is not None:
            name, op, value = assignment.groups()
            if op == "+=":
                variables[name] = f"{variables.get(name, '')} {value}".strip()
            elif op == "?=":
                variables.setdefault(name, value)
            elif op != "!=":  # (a shell command's output: not run)
                variables[name] = expand(value) if op.startswith(":") else value
            continue
        include = _INCLUDE.match(line)
        if include is not None:
            included.extend(expand(include.group(1)).split())
            continue
        expanded = expand(line)
        colon = _rule_colon(expanded)
        if colon < 0:
            continue
        targets = expanded[:colon].split()
        listed_needs, semicolon, inline = expanded[colon:].lstrip(":").partition(";")
        needs = listed_needs.replace("|", " ").split()
        recipe_of = [t for t in targets if "%" not in t]
        if semicolon:  # (a recipe on the rule's line: target: needs ; command)
            line_recipe = line.split(";", 1)[1] if ";" in line else inline
            for target in recipe_of:
                recipes.setdefault(target, []).append(line_recipe)
        for target in targets:
            if "%" in target:
                patterns.append((target, needs))
            else:
                rules.setdefault(target, []).extend(needs)
                if first is None and not target.startswith("."):
                    first = target
    goals = goals or ([first] if first else [])
    found: dict[str, None] = {}
    todo = list(goals)
    seen = set(todo)
    while todo and len(found) < _MAX:
        name = todo.pop(0)
        needs = rules.get(name) or _by_pattern(name, patterns) + _built_in(name, listing)
        for need in needs:
            if need not in seen:
                seen.add(need)
                found[need] = None
                todo.append(need)
    ran = []
    for target in (*goals, *found):
        for command in recipes.get(target, ()):
            ran.append(_recipe_command(command, target, rules.get(target, []), expand))
        if len(ran) >= _RECIPES:
            break
    reached = [n for n in found if n not in goals][:_MAX]
    return Goals(reached, included, [c for c in ran[:_RECIPES] if c])


def _recipe_command(
    line: str, target: str, needs: list[str], expand: Callable[[str], str]
) -> str:
    """A recipe line as the shell gets it: prefixes dropped, ``$@`` ``$<`` ``$^`` set."""
    command = line.strip().lstrip("@-+").strip()
    automatic = {"@": target, "<": needs[0] if needs else "", "^": " ".join(needs)}

    def value(match: re.Match[str]) -> str:
        name = match.group(0).strip("$()")
        words = automatic.get(name[:1], "").split()
        if name.endswith("D"):
            words = [os.path.dirname(w) or "." for w in words]
        elif name.endswith("F"):
            words = [os.path.basename(w) for w in words]
        return " ".join(words)

    return expand(_AUTOMATIC.sub(value, command)).strip()


def _logical_lines(text: str) -> list[str]:
    """The makefile's lines, a backslash-newline joining two (the first lines only)."""
    return text.replace("\\\n", " ").splitlines()[:_LINES]


def _rule_colon(line: str) -> int:
    """Where a rule line's targets end (``-1``: not a rule)."""
    colon = line.find(":")
    if colon <= 0 or line[colon + 1 : colon + 2] == "=":
        return -1
    return colon


def _reference(
    match: re.Match[str], variables: Mapping[str, str], listing: Callable[[str], frozenset[str]]
) -> str:
    """What one reference expands to (nothing, for what this reader does not know)."""
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    if inner is None:
        return "$" if match.group(3) == "$" else ""  # ($@, $^, $<: automatic, in recipes)
    if inner.startswith("wildcard "):
        return " ".join(_wildcard(inner[len("wildcard ") :].split(), listing))
    name, _, substitution = inner.partition(":")
    if " " in name:
        return ""  # another function
    value = variables.get(name, "")
    if substitution and "=" in substitution:
        old, new = substitution.split("=", 1)
        old, new = (old, new) if "%" in old else (f"%{old}", f"%{new}")
        value = " ".join(_substituted(w, old, new) for w in value.split())
    return value


def _substituted(word: str, old: str, new: str) -> str:
    prefix, suffix = old.split("%", 1)
    if not (word.startswith(prefix) and word.endswith(suffix)) or len(word) < len(old) - 1:
        return word
    stem = word[len(prefix) : len(word) - len(suffix)]
    return new.replace("%", stem, 1)


def _wildcard(patterns: list[str], listing: Callable[[str], frozenset[str]]) -> list[str]:
    found: list[str] = []
    for pattern in patterns[:8]:
        folder, name = os.path.split(pattern)
        if "*" in folder or "?" in folder:
            continue
        for match in sorted(n for n in listing(folder) if fnmatch.fnmatchcase(n, name)):
            found.append(os.path.join(folder, match) if folder else match)
    return found[:_MAX]


def _by_pattern(name: str, patterns: list[tuple[str, list[str]]]) -> list[str]:
    """The prerequisites a pattern rule (``%.o: %.c``) gives ``name``."""
    for target, needs in patterns:
        prefix, suffix = target.split("%", 1)
        if name.startswith(prefix) and name.endswith(suffix) and len(name) > len(target) - 1:
            stem = name[len(prefix) : len(name) - len(suffix)]
            return [n.replace("%", stem) for n in needs]
    return []


def _built_in(name: str, listing: Callable[[str], frozenset[str]]) -> list[str]:
    """The sources make's built-in rules would make ``name`` from, among the files there."""
    return [s for s in make_sources(name) if os.path.basename(s) in listing(os.path.dirname(s))]
