"""What a failure's own wording says it depends on, and which changes can end it.

Most failures name what was missing: ``No rule to make target 'deploy'``, ``bad: command not
found``, ``server.js:1 SyntaxError``, ``File exists: 'a.py'``, an edit's search text not in
the file. For those kinds a ban does not need to go stale on every change of the workspace:

- ``make_target``: holds while no Makefile under the root defines the target, the target is
  not a file there, and no file appeared that make's built-in rules build it from
  (``greet.sh`` or ``greet.c`` for ``greet``: :func:`~scarguard.learning._make.make_sources`);
  an edit of the Makefile lifts it only if the text it put in may define the target;
- ``program``: holds while the program is neither on ``PATH`` nor a file under the root, and
  did not appear in the root's usual bin folders (``.venv/bin``, ``node_modules/.bin``...:
  a tool's shell may have them on its ``PATH`` when this process does not); a success lifts
  it only if it installs something, changes the shell's environment or names the program.
  Only when the command itself names the program: a script it runs that lacks one (``./run.sh``
  failing at a line of its own) is fixed by changing the script;
- ``named_files``: a syntax error in files the error names holds while those files and the
  manifests of the program that ran are unchanged (a Makefile edit does not fix
  ``node server.js``);
- ``exists``: a create that conflicted with an existing file holds while the file exists;
- ``port``: a server that found its port in use holds while a process of this machine still
  holds it (the observer's optional ``port_held``), and the files it watches are unchanged;
- ``listener``: a client that failed to reach a local port nothing listened on (``curl -s
  http://127.0.0.1:8000/``, which prints no error) holds while nothing listens there and
  the files it watches are unchanged: a server started by hand lifts it;
- ``absent_text``: an edit whose search text was not in the file holds while it still is not;
- ``make_rule`` (a refinement, not a condition): any other failure of ``make X`` depends on
  the Makefile only through the rules ``X`` reaches and the Makefile's variables and
  directives; an edit of another rule or a comment does not make it stale. Everything else it
  depends on stays as for any command, and it is not deterministic.
- ``tests`` (a refinement, not a condition): a test run that selects tests (``pytest
  test_a.py``) and whose output says tests failed; a success of the same runner without a
  selection, or with one that holds every test it selects (a folder or file above them), in
  the same place, ran them all, so it counts as a success of it (``covered_by``).
  Everything else stays as for any command, and it is not deterministic.

A condition is only put in force when the observer confirmed it when the failure was
recorded (the Makefile is here and lacks the target, the named file is here, the program is
not found here): for files the observer cannot see (a tool acting on another machine) the
constraint is learned, revalidated and lifted exactly as without it. A condition the
observer cannot judge later (a file it cannot read) makes the constraint stale: it only
ever lifts.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final

import attrs

from scarguard.adapters._arguments import SHELL_ARGS
from scarguard.adapters._shell import MANIFESTS, command_words, error_files
from scarguard.adapters._shell_changes import installs
from scarguard.adapters._test_runs import reports_failed_tests, selected_tests
from scarguard.canonical import canonical_json
from scarguard.learning._make import (
    MAKEFILES,
    make_defines,
    make_goals,
    make_reach,
    make_sources,
    missing_make_target,
)
from scarguard.learning._ports import connected_port, held_port
from scarguard.learning._programs import missing_program, program_paths
from scarguard.observe.protocol import MISSING, Observer

__all__ = [
    "DETERMINISTIC_WHILE_HELD",
    "Evidence",
    "condition",
    "condition_stale",
    "covered_by",
    "kept_tokens",
    "lifted_by_change",
]

MAKE_TARGET, PROGRAM, NAMED_FILES, EXISTS, ABSENT_TEXT, MAKE_RULE, TESTS = (
    "make_target",
    "program",
    "named_files",
    "exists",
    "absent_text",
    "make_rule",
    "tests",
)
PORT: Final = "port"
LISTENER: Final = "listener"
_REFINEMENTS: Final = frozenset({MAKE_RULE, TESTS})
"""Kinds that narrow what lifts a ban without making its failure deterministic."""
DETERMINISTIC_WHILE_HELD: Final = frozenset(
    {MAKE_TARGET, PROGRAM, NAMED_FILES, EXISTS, ABSENT_TEXT}
)
"""Conditions under which the identical call must fail identically."""

_SORTED_MAKEFILES: Final = tuple(sorted(MAKEFILES))
_EXISTS: Final = re.compile(r"(?i:\b(?:file|directory|path)? ?(?:already )?exists\b)")

_ELSEWHERE_WORDS: Final = frozenset(
    {"cd", "pushd", "chdir", "-C", "--cwd", "--prefix", "--directory", "--dir", "ssh", "exec"}
)
_ELSEWHERE_KEYS: Final = frozenset(
    {"cwd", "workdir", "working_dir", "working_directory", "directory", "dir", "host",
     "container", "sandbox", "machine", "remote"}
)  # fmt: skip


def runs_elsewhere(call_args: Mapping[str, Any]) -> bool:
    """Return whether a command may run outside the root.

    ``cd sub && ...``, a ``cwd=``, container or host argument: what it names is then not
    judged under the root.
    """
    if not _ELSEWHERE_KEYS.isdisjoint(call_args):
        return True
    words = command_words(call_args)
    # (-Csub: the directory attached to the option, as make and tar read it)
    return not _ELSEWHERE_WORDS.isdisjoint(words) or any(_attached_directory(w) for w in words)


def _attached_directory(word: str) -> bool:
    return len(word) > 2 and word.startswith("-C")


def _root_path(root: str, name: str) -> str:
    """Return ``name`` joined with ``root``, normalised (remembered: the same names recur)."""
    if len(name) <= 1024:
        return _joined(root, name)
    return os.path.normpath(os.path.join(root, name))


@functools.lru_cache(maxsize=4096)
def _joined(root: str, name: str) -> str:
    return os.path.normpath(os.path.join(root, name))


def _present(observed: Mapping[str, str], path: str) -> bool:
    token = observed.get(path)
    return token is not None and token != MISSING


@attrs.frozen
class Evidence:
    """What is known of one failure as it is recorded.

    Attributes:
        signature: The failure kind's name.
        call_args: The call's arguments.
        targets: The call's path targets, normalised.
        error: The error text.
        observed: The observer's tokens of what it depends on, by absolute path.
        root: The root relative names are joined with.
        search: The edit's search text, if any (and nothing to redact in it).
        program: The program the call ran (``make``...), if known.
    """

    signature: str
    call_args: Mapping[str, Any]
    targets: Sequence[str]
    error: str | None
    observed: Mapping[str, str]
    root: str
    search: str | None = None
    program: str | None = None


def condition(evidence: Evidence, observer: Observer) -> tuple[str, ...]:
    """Return the condition a failure depends on, if its wording names one (confirmed).

    ``()`` when it names none or the observer did not confirm it: the generic dependency on
    tokens then applies. The result is ``(kind, subject...)``: the make target, the
    program, the named files, or the ``make_rule`` refinement of a failing ``make X``.
    """
    found = _named(evidence, observer) or _tests(evidence)
    goals = make_goals(evidence.call_args, evidence.program)
    read = getattr(observer, "read", None)
    if found or not goals or read is None or runs_elsewhere(evidence.call_args):
        return found
    for name in ("GNUmakefile", "makefile", "Makefile"):  # the one make reads
        path = _root_path(evidence.root, name)
        if _present(evidence.observed, path):
            text = read(path)
            return () if text is None else (MAKE_RULE, make_reach(text, goals)[0], *goals)
    return ()


_NOT_WHAT_RUNS: Final = frozenset(
    {"command", "cmd", "timeout", "timeout_ms", "timeout_s", "timeout_seconds", "description"}
)
"""A command call's arguments that do not choose what it runs (how long it may take, what
it is for): a suite run with a longer timeout ran the same tests."""


def _other_args(call_args: Mapping[str, Any]) -> str:
    """Return a digest of a command call's arguments that may choose what it runs (``cwd``...)."""
    rest = {k: v for k, v in call_args.items() if k not in _NOT_WHAT_RUNS}
    return hashlib.blake2b(canonical_json(rest).encode(), digest_size=8).hexdigest()


def _tests(evidence: Evidence) -> tuple[str, ...]:
    """Return the ``tests`` refinement of a failing test run that selects tests, if it is one."""
    run = selected_tests(evidence.call_args)
    if run is None or not run[1] or runs_elsewhere(evidence.call_args):
        return ()
    if not reports_failed_tests(evidence.error):
        return ()  # a usage error (no such test file...) is not disproved by a run of all
    return (TESTS, run[0], _other_args(evidence.call_args), *run[1])


def covered_by(depends: tuple[str, ...], call_args: Mapping[str, Any]) -> bool:
    """Return whether a success of ``call_args`` ran every test the failing run selected.

    The same runner without a selection, the other arguments equal, in the same place.
    """
    if not depends or depends[0] != TESTS or runs_elsewhere(call_args):
        return False
    run = selected_tests(call_args)
    if run is None or (TESTS, run[0], _other_args(call_args)) != depends[:3]:
        return False
    if not run[1]:
        return True  # every test
    return all(any(_holds(above, test) for above in run[1]) for test in depends[3:])


def _holds(above: str, test: str) -> bool:
    """Return whether running the selection ``above`` runs the selected ``test``.

    A folder runs the tests in it, a file its tests (``a.py`` runs ``a.py::test_x``), a test
    its parametrised cases (``a.py::test_x`` runs ``a.py::test_x[1]``).
    """
    above, test = _plain(above), _plain(test)
    return above in (".", test) or test.startswith((above + "/", above + "::", above + "["))


def _plain(selection: str) -> str:
    """A selection without a leading ``./`` or a trailing ``/`` (``.`` for the root)."""
    while selection.startswith("./"):
        selection = selection[2:]
    return selection.rstrip("/") or "."


def _named(evidence: Evidence, observer: Observer) -> tuple[str, ...]:
    signature, call_args, targets = evidence.signature, evidence.call_args, evidence.targets
    error, observed, root, search = (
        evidence.error, evidence.observed, evidence.root, evidence.search
    )  # fmt: skip
    read = getattr(observer, "read", None)
    if signature == "port_in_use":  # (the port is this machine's only if it is held here)
        port = held_port(error, call_args)
        held = getattr(observer, "port_held", None)
        if port is None or held is None or held(port) is not True:
            return ()
        return (PORT, str(port))
    shell = signature in ("make_target_missing", "command_not_found", "syntax_error")
    if shell and runs_elsewhere(call_args):
        return ()
    if signature == "make_target_missing":
        target = missing_make_target(error)
        if target is None or not make_goals(call_args, evidence.program) or read is None:
            return ()
        makefiles = [_root_path(root, m) for m in _SORTED_MAKEFILES]
        here = [m for m in makefiles if _present(observed, m)]
        texts = [read(m) for m in here]
        if not here or any(t is None or make_defines(t, target) for t in texts):
            return ()
        return (MAKE_TARGET, target)
    if signature == "command_not_found":
        program = missing_program(error)
        which = getattr(observer, "which", None)
        if program is None or which is None or which(program) is not False:
            return ()
        if program != evidence.program and program not in command_words(call_args):
            return ()  # a script or recipe the command runs lacks it: a change of it may help
        return (PROGRAM, program)
    if signature == "syntax_error":
        named = [n for n in error_files(error) if _present(observed, _root_path(root, n))]
        return (NAMED_FILES, *named) if named else ()
    command = next((v for k, v in call_args.items() if k in SHELL_ARGS and type(v) is str), None)
    port = None  # (only a command runs a client: an edit's texts are not split for one)
    if command is not None:
        port = connected_port({"command": command}, frozenset(command_words({"c": command})))
    if port is not None:  # (a client's own error naming the refusal is blamed on the harness)
        held = getattr(observer, "port_held", None)
        if held is not None and held(port) is False:
            return (LISTENER, str(port))
    if not targets or not _present(observed, _root_path(root, targets[0])):
        return ()
    if signature == "conflict" and _EXISTS.search(error or ""):
        return (EXISTS,)
    if signature == "edit_failed" and search and read is not None:
        text = read(_root_path(root, targets[0]))
        if text is not None and not _contains(text, search):
            return (ABSENT_TEXT,)
    return ()


def kept_tokens(
    depends: tuple[str, ...], observed: Mapping[str, str], root: str, targets: Sequence[str]
) -> dict[str, str]:
    """Return the tokens a constraint under ``depends`` keeps (only what can end it)."""
    if not depends or depends[0] in _REFINEMENTS or depends[0] in (PORT, LISTENER):
        return dict(observed)  # (a port: the configuration may choose another)
    kind = depends[0]
    wanted: Collection[str]
    if kind == PROGRAM:  # where an install under the root may put it
        wanted = {_root_path(root, p) for p in program_paths(depends[1])}
        return {p: t for p, t in observed.items() if p in wanted}
    if kind == MAKE_TARGET:  # the Makefiles, the target, what built-in rules make it from
        wanted = _make_target_paths(root, depends[1])
    elif kind == NAMED_FILES:  # and the manifests of the program that ran (npm: package.json)
        wanted = {_root_path(root, n) for n in depends[1:]}
        wanted |= {p for p in observed if os.path.basename(p) in MANIFESTS}
    else:
        wanted = {_root_path(root, t) for t in targets[:1]}
    return {p: t for p, t in observed.items() if p in wanted}


@functools.lru_cache(maxsize=256)
def _make_target_paths(root: str, target: str) -> frozenset[str]:
    """Return the paths whose change can end a missing make target (remembered: it recurs)."""
    return frozenset(_root_path(root, n) for n in (*MAKEFILES, target, *make_sources(target)))


def _contains(text: str, search: str) -> bool:
    """Return whether ``text`` may hold ``search`` as an edit tool would look for it.

    Loosely: blanks collapsed, and also with the escapes backslash-n and backslash-t read as
    the characters they stand for (tools differ in both).
    """
    squashed = _squash(text)
    unescaped = search.replace("\\n", "\n").replace("\\t", "\t")
    return any(_squash(s) in squashed for s in {search, unescaped})


def _squash(text: str) -> str:
    """Whitespace runs as one blank: an edit tool may match loosely, so judge loosely."""
    return " ".join(text.split())


def condition_stale(
    observer: Observer, depends: tuple[str, ...], tokens: Mapping[str, str], search: str | None
) -> bool:
    """Return whether the workspace no longer supports the condition ``depends``."""
    kind = depends[0]
    if kind == PORT:  # stale once the port is free, or the configuration changed
        held = getattr(observer, "port_held", None)
        if held is None or held(int(depends[1])) is not True:
            return True
        return bool(observer.changed(tokens)) if tokens else False
    if kind == LISTENER:  # stale once something listens on the port, or files changed
        held = getattr(observer, "port_held", None)
        if held is None or held(int(depends[1])) is not False:
            return True
        return bool(observer.changed(tokens)) if tokens else False
    if kind == PROGRAM:
        which = getattr(observer, "which", None)
        if which is None or which(depends[1]) is not False:
            return True
        return bool(observer.changed(tokens)) if tokens else False  # installed under the root
    changed = observer.changed(tokens) if tokens else []
    if not changed or kind in (NAMED_FILES, TESTS):
        return bool(changed)
    if kind == MAKE_RULE and any(os.path.basename(p) not in MAKEFILES for p in changed):
        return True
    if kind == EXISTS:
        now = observer.observe(changed)
        return any(now.get(p, MISSING) == MISSING for p in changed)
    read = getattr(observer, "read", None)
    if read is None:
        return True
    for path in changed:
        text = read(path)
        if text is None:
            return True  # gone or unreadable: it cannot be judged, so it is not kept
        if kind == ABSENT_TEXT and (not search or _contains(text, search)):
            return True
        if kind == MAKE_TARGET:
            name = os.path.basename(path)
            if name not in MAKEFILES or make_defines(text, depends[1]):
                return True  # the Makefile may define it now, or the target file appeared
        if kind == MAKE_RULE and make_reach(text, depends[2:])[0] != depends[1]:
            return True
    return False


def lifted_by_change(
    depends: tuple[str, ...],
    changed: frozenset[str],
    call_args: Mapping[str, Any],
    tool_words: Sequence[str],
    inserted: str | None,
    watched: frozenset[str] = frozenset(),
) -> bool | None:
    """Return whether a successful change can end the condition ``depends``.

    ``changed`` holds the paths (and basenames) the change declared (empty for a command
    whose effects are unknown: then the observer judges, since the condition was seen to
    hold in the workspace it watches); ``watched`` the basenames of the paths the constraint
    keeps tokens of. ``None``: decide as for any command (a ``tests`` refinement; a
    ``make_rule`` one unless the change touched only Makefiles: their rules are judged by the
    observer).
    """
    kind = depends[0]
    if kind in (TESTS, PORT, LISTENER):
        return None
    if kind == MAKE_RULE:
        only_makefiles = bool(changed) and all(os.path.basename(n) in MAKEFILES for n in changed)
        return False if only_makefiles else None
    if kind == PROGRAM:
        program = depends[1]
        words = command_words(call_args)
        command = next((v for v in call_args.values() if isinstance(v, str)), "")
        return (
            program in words or program in changed or "install" in tool_words or installs(command)
        )
    if not changed:
        return False
    if kind == MAKE_TARGET:
        sources = make_sources(depends[1])
        if depends[1] in changed or changed & {*sources, *map(os.path.basename, sources)}:
            return True
        if changed & MAKEFILES:
            return inserted is None or make_defines(inserted, depends[1])
        return False
    if kind == NAMED_FILES:
        names = {*depends[1:], *(os.path.basename(n) for n in depends[1:]), *watched}
        return bool(changed & names)
    return True
