"""What GNU make reads: which Makefile rules a goal reaches, and what can end a missing target.

The knowledge of make behind the ``make_target`` condition and the ``make_rule`` refinement of
:mod:`scarguard.learning.semantic`: the target a ``No rule to make target`` error names,
whether a Makefile's text may define a target, the files make's built-in rules make one from,
the goals of a ``make X`` call, and a digest of the rules those goals reach.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from scarguard.adapters._shell import command_words

__all__ = [
    "MAKEFILES",
    "make_defines",
    "make_goals",
    "make_reach",
    "make_sources",
    "missing_make_target",
]

MAKEFILES: Final = frozenset({"Makefile", "makefile", "GNUmakefile"})
"""The files GNU make reads by default."""

_NO_RULE: Final = re.compile(
    r"No rule to make target [`'\u2018\"]([^'\u2019\"\n]{1,200})['\u2019\"]"
)
_MAKE_OPTIONS: Final = frozenset({"-C", "-f", "--directory", "--file", "--makefile", "-I"})
_ATTACHED: Final = ("-C", "-f", "-I")
"""The short options whose value may be attached (``-Csub``): the word starts with one."""


def missing_make_target(error: str | None) -> str | None:
    """Return the target a ``No rule to make target 'X'`` error names."""
    found = _NO_RULE.search(error or "")
    return found.group(1) if found else None


_BUILT_IN: Final[Mapping[str, tuple[str, ...]]] = {
    "": (".c", ".cc", ".cpp", ".C", ".o", ".sh", ".s", ".S", ".f", ".F", ".p", ".r", ".m",
         ".mod"),
    ".o": (".c", ".cc", ".cpp", ".C", ".s", ".S", ".f", ".F", ".p", ".r", ".m", ".mod"),
    ".c": (".y", ".l", ".w"), ".f": (".F", ".r"), ".r": (".l",), ".s": (".S",),
    ".p": (".web",), ".m": (".ym",), ".sym": (".def",), ".tex": (".w", ".web"),
    ".ln": (".c", ".y", ".l"), ".dvi": (".tex", ".texi", ".texinfo", ".txinfo"),
    ".info": (".texi", ".texinfo", ".txinfo"),
}  # fmt: skip
"""GNU make's built-in rules (``make -p -f /dev/null``): a suffix, and the suffixes of the
files that make a file with it (``""``: a name without a suffix, ``%: %.c``...)."""


def make_sources(target: str) -> tuple[str, ...]:
    """Return the files make's built-in rules can make ``target`` from (relative paths).

    Its sources one and two rules away (``greet`` from ``greet.c``, which ``greet.y`` makes)
    and the version-control files make checks out (``RCS/greet,v``...): when one appears,
    ``make greet`` may succeed without a rule of its own. Nothing for a name make expands.
    """
    if not target or "$" in target or "%" in target:
        return ()
    folder, name = os.path.split(target)
    stem, suffix = os.path.splitext(name)
    if suffix not in _BUILT_IN:  # no suffix make knows: the rules that make any file
        stem, suffix = name, ""
    found: dict[str, None] = {}
    for first in _BUILT_IN[suffix]:
        found[stem + first] = None
        for second in _BUILT_IN.get(first, ()):
            found[stem + second] = None
    names = [*found, f"{name},v", f"RCS/{name},v", f"RCS/{name}", f"SCCS/s.{name}", f"s.{name}"]
    return tuple(os.path.join(folder, n) if folder else n for n in names)


_RULE: Final = re.compile(r"^ *([^\s:=#][^:=#]*?)\s*::?(?![=:])")
"""A rule's targets (GNU make reads a rule line indented with spaces; a tab starts a recipe)."""
_INCLUDE: Final = re.compile(r"^\s*-?s?include\s")


def make_defines(text: str, target: str) -> bool:
    """Return whether a Makefile's text may define ``target``.

    ``True`` when a rule names it, or when the text cannot be judged without running make
    (an ``include``, a pattern rule, a target list built from variables).
    """
    for line in text.splitlines():
        if line.startswith(("\t", "#")):
            continue
        if _INCLUDE.match(line):
            return True
        rule = _RULE.match(line)
        if rule is None:
            continue
        names = rule.group(1).split()
        if target in names or any("%" in n or "$" in n for n in names):
            return True
    return False


_DIRECTIVE: Final = re.compile(
    r"^\s*(?:-?s?include|ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|export|unexport"
    r"|override|vpath|\$\()"
)
_ASSIGN: Final = re.compile(r"^\s*[\w.\-]+\s*(?:::|[:+?!])?=")


_RECURSES: Final = re.compile(r"\$[({]MAKE[)}]|(?:^|[\s;&|(])make(?:\s|$)")
"""A recipe line that runs make again (``$(MAKE) lint``): it may reach any rule."""


def make_reach(text: str, goals: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """Return a digest of what ``make goals`` reads from a Makefile, and the rules it reaches.

    The digest covers the variables, directives, special and pattern rules (they may apply to
    any target) and the rules reachable from ``goals`` through prerequisites, recipes
    included; other rules and comments are left out, so editing them changes nothing here.
    When what is reached cannot be told without make (a prerequisite from a variable,
    ``build: $(OBJS)``, or a recipe that runs make again), every rule is covered.
    """
    rules: dict[str, list[list[str]]] = {}
    prerequisites: dict[str, list[str]] = {}
    shared: list[str] = []
    block: list[str] = shared
    for line in text.splitlines():
        if line.startswith("\t"):
            block.append(line)
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        rule = None if _DIRECTIVE.match(line) or _ASSIGN.match(line) else _RULE.match(line)
        names = rule.group(1).split() if rule else []
        if not rule or any(n.startswith(".") or "%" in n or "$" in n for n in names):
            shared.append(stripped)
            block = shared
            continue
        block = [stripped]  # its recipe lines follow
        for name in names:
            rules.setdefault(name, []).append(block)
            prerequisites.setdefault(name, []).extend(line[rule.end() :].split(";")[0].split())
    reached: set[str] = set()
    todo = list(goals)
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        todo.extend(prerequisites.get(name, ()))
    if any("$" in n for n in reached) or any(
        _RECURSES.search(line) for n in reached for block in rules.get(n, ()) for line in block
    ):
        reached.update(rules)
    parts = [shared, *(rules.get(n, []) for n in sorted(reached))]
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()
    return digest, tuple(sorted(reached))


def make_goals(call_args: Mapping[str, Any], program: str | None) -> tuple[str, ...]:
    """Return the targets a ``make`` call asks for (nothing: not a plain ``make X`` call)."""
    if program != "make":
        return ()
    words = command_words(call_args)
    if _MAKE_OPTIONS & set(words) or any(w.startswith(_ATTACHED) for w in words):
        return ()  # another directory or makefile (-C sub, -Csub, -f x.mk, -fx.mk)
    return tuple(w for w in words if w != "make" and not w.startswith("-") and "=" not in w)
