"""What a failure depends on, and whether the workspace still says it holds.

A learned constraint keeps the state tokens of the paths its failure depends on: the call's
path targets; for shell-like calls (build, test and run commands) also the files the command
names, the files the error text names and the workspace's build manifests. Before the
constraint refuses, :class:`Revalidator` asks the observer whether any of them changed; a
change makes it stale, and the call runs. Its count is kept, so the same failure again is
refused at once (the next failure stores fresh tokens).

Observation only ever lifts: a path the observer cannot see keeps its token, and a broken
observer keeps every constraint as it is.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

import attrs

from scarguard.adapters._arguments import EDITS_ARG, OLD_ARGS, search_text
from scarguard.adapters._shell import (
    GIT_STATE,
    MANIFESTS,
    command_files,
    command_words,
    error_files,
    git_user_config,
    manifests_for,
)
from scarguard.errors import ScarguardWarning
from scarguard.learning._beside import beside_files
from scarguard.learning._directories import elsewhere_files, ran_in
from scarguard.learning._imports import SOURCES, code_imports, imported_files, inline_code
from scarguard.learning._inputs import program_inputs
from scarguard.learning._make import make_sources, missing_make_target
from scarguard.learning._missing import missing_paths
from scarguard.learning._modules import interpreter_site_packages, module_paths
from scarguard.learning._programs import missing_program, program_paths
from scarguard.learning.semantic import Evidence, condition, condition_stale
from scarguard.model import Call, Constraint
from scarguard.observe.local import LocalObserver
from scarguard.observe.protocol import Observer
from scarguard.redact import Redactor

__all__ = ["COMMAND_FAILURES", "Revalidator", "dependencies", "is_shell_like", "with_read_files"]

COMMAND_FAILURES = frozenset(
    {
        "command_failed",
        "command_not_found",
        "compile_failure",
        "make_target_missing",
        "module_not_found",
        "esm_cjs_mismatch",
        "port_in_use",
        "nothing_to_commit",
        "git_push_rejected",
        "package_not_found",
    }
)
"""Failure kinds that are failures of a command: a tool failing so is shell-like."""
_MAX_PATHS = 64
"""The paths a failure watches at most: a missing make target's come to 48 (itself, the
manifests, the sources of make's built-in rules), and a command run elsewhere adds its own."""


def is_shell_like(call: Call, signature: str, stale_classes: frozenset[str]) -> bool:
    """Return whether a failed call is a command whose bans go stale when the world changes.

    Calls of an action class in ``Policy.stale_after_change`` (shell commands, and tools
    named for a build or run program such as ``make`` or ``pytest``), and calls whose
    failure is a command failure (:data:`COMMAND_FAILURES`).
    """
    return call.action_class in stale_classes or signature in COMMAND_FAILURES


def _is_path(target: str) -> bool:
    return "://" not in target


def dependencies(
    call: Call,
    error: str | None,
    *,
    shell_like: bool,
    normalise: Callable[[str], str],
    signature: str = "",
) -> tuple[str, ...]:
    """Return the paths a failure of ``call`` depends on, normalised like targets.

    A missing make target is also a path (a rule's prerequisite can be a file), and so are
    the files make's built-in rules make it from, and the places under the root where an
    install may put a program not found, and the paths a "no such file" error names (with
    their folders). What the failure's condition is decided by (the
    target, the Makefiles and those sources; the program's places) comes first, so that the
    bound on the number of paths drops only files the error text or the command named.
    """
    found: dict[str, None] = {}
    if shell_like:
        # first: the makefiles and manifests of another directory it ran in (make -C sub,
        # cd sub && ...), which decide a failure there as the root's decide one here
        for name in elsewhere_files(call.args):
            found[normalise(name)] = None
        target = missing_make_target(error) if signature == "make_target_missing" else None
        program = missing_program(error) if signature == "command_not_found" else None
        if target:
            found[normalise(target)] = None
            found.update(_in_order(manifests_for(program_of(call))))
            for name in _make_sources(target):
                found[normalise(name)] = None
        for name in program_paths(program) if program else ():
            found[normalise(name)] = None
        if signature == "module_not_found":
            for name in module_paths(error):
                found[normalise(name)] = None
            for name in interpreter_site_packages(program_of(call)):  # pip install outside
                found[name] = None
        if signature == "file_not_found":  # (after cd sub, the path is sub's, or cd's own)
            where = ran_in(call.args)
            for name in missing_paths(error):
                if where != "." and not os.path.isabs(name):
                    found[normalise(os.path.join(where, name))] = None
                found[normalise(name)] = None
    found.update(dict.fromkeys(t for t in call.targets if _is_path(t)))
    if signature == "file_not_found":  # a file written into a missing folder: the folder
        found.update(dict.fromkeys(_folders(t for t in call.targets if _is_path(t))))
    if shell_like:
        named = (*command_files(call.args), *error_files(error))
        for name in named:
            found[normalise(name)] = None
        where = ran_in(call.args) if named else "."
        if where != ".":  # cd sub && pytest: the files it and its errors name are in sub
            for name in named:
                if not os.path.isabs(name):
                    found[normalise(os.path.join(where, name))] = None
        if _runs_pytest(call):  # its fixtures and hooks live in conftest.py files
            found.update(dict.fromkeys(_conftests(found)))
        manifests = manifests_for(program_of(call))
        found.update(_in_order(manifests))
        if ".git/HEAD" in manifests:  # git -C /repo, git_checkout(repo_path=...): its state
            named = (*call.targets, *command_files(call.args))
            folders = [t for t in dict.fromkeys(named) if _is_path(t) and _looks_like_folder(t)]
            for folder in folders[:2]:
                found.update((normalise(os.path.join(folder, n)), None) for n in sorted(GIT_STATE))
            found.update(dict.fromkeys(git_user_config()))  # (an identity set by hand)
    return tuple(found)[:_MAX_PATHS]


def _looks_like_folder(path: str) -> bool:
    """Return whether a path has no suffix (``/repos/app``, not ``src/a.py``)."""
    return not os.path.splitext(path.rstrip("/"))[1]


def with_read_files(
    call: Call,
    paths: tuple[str, ...],
    normalise: Callable[[str], str],
    observer: Observer,
    *,
    conditioned: bool,
) -> tuple[str, ...]:
    """Return ``paths`` and the files the failing command's code may have read.

    What its programs read without the command naming it (``learning._inputs``: a make
    goal's prerequisites, a glob's files, a cargo crate...), and the workspace modules its
    source files and its inline Python import (``learning._imports``), when the observer
    can read files and list folders; and for a failure with no condition
    (``conditioned`` false), the configuration-like files beside what it ran
    (``learning._beside``). The bound on the number of paths drops these first.
    """
    read = getattr(observer, "read", None)
    names = getattr(observer, "names", None)
    if names is None or len(paths) >= _MAX_PATHS:
        return paths
    try:
        extra: tuple[str, ...] = ()
        inputs = program_inputs(call.args, read, names) if read is not None else ()
        starts = _sources((*paths, *inputs)) if inputs else _sources(paths)
        if read is not None and starts:
            extra = imported_files(starts, read, names, ran_in(call.args))
        code = inline_code(call.args)
        if read is not None and code is not None:  # execute_python(code=...), python -c...
            extra += code_imports(code, read, names, ran_in(call.args))
        extra = inputs + extra
        if not conditioned:
            extra += beside_files(command_files(call.args), names)
    except Exception:  # an observer's read or listing failed: watching less only lifts less
        return paths
    if not extra or (len(extra) == 1 and extra[0] in paths):  # (pyproject.toml: watched)
        return paths
    found = dict.fromkeys(paths)
    found.update(dict.fromkeys(map(normalise, extra)))
    return tuple(found)[:_MAX_PATHS]


@functools.lru_cache(maxsize=256)
def _sources(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Return the workspace's own source files among ``paths`` (not a manifest: setup.py).

    Remembered: the same paths recur (a program's manifests, the files a command names).
    """
    return tuple(p for p in paths if p.endswith(SOURCES) and os.path.basename(p) not in MANIFESTS)


def _folders(paths: Iterable[str]) -> list[str]:
    """Return the folder of each path that has one (not the root, not ``/``)."""
    out = []
    for path in paths:
        folder = os.path.dirname(path.rstrip("/"))
        if folder and folder not in ("/", "."):
            out.append(folder)
    return out


_PYTEST: Final = frozenset({"pytest", "py.test"})


def _runs_pytest(call: Call) -> bool:
    return call.tool in _PYTEST or not _PYTEST.isdisjoint(command_words(call.args))


def _conftests(paths: Iterable[str]) -> list[str]:
    """Return the ``conftest.py`` files pytest reads for these paths.

    The root's, and those of the folders of the Python files named under the root (three
    levels up at most).
    """
    found = {"conftest.py": None}
    for path in paths:
        if not path.endswith(".py") or os.path.isabs(path) or path.startswith(".."):
            continue
        folder = os.path.dirname(path)
        for _ in range(3):
            if not folder:
                break
            found[os.path.join(folder, "conftest.py")] = None
            folder = os.path.dirname(folder)
    return list(found)


_make_sources = functools.lru_cache(maxsize=256)(make_sources)
"""What make's built-in rules make a target from (remembered: a missing target recurs)."""


@functools.lru_cache(maxsize=64)
def _in_order(manifests: frozenset[str]) -> dict[str, None]:
    """Return the manifests sorted, as dictionary keys (a few sets recur on every failure)."""
    return dict.fromkeys(sorted(manifests))


def _unredacted(redact: Callable[[str], str], text: str) -> bool:
    """Return whether redacting ``text`` leaves it as it is.

    A redactor's verdict on a text no longer than it keeps or stores whole is its remembered
    one for targets (``target(t) == t`` exactly when redacting ``t`` changes nothing): a
    condition's words recur.
    """
    if type(redact) is Redactor and len(text) <= min(redact.max_value, redact.max_text):
        return redact.target(text) == text
    return redact(text) == text


def program_of(call: Call) -> str | None:
    """Return the program a shell-like call runs.

    Its command's first word, or the tool's name for a tool named for one (``pytest``).
    """
    for key in ("command", "cmd"):
        value = call.args.get(key)
        if isinstance(value, str):
            words = value.split(None, 1)
            return words[0] if words else None
    return call.tool


@attrs.define
class Revalidator:
    """Ask an observer whether constraints still hold, remembering the ones gone stale.

    A stale verdict holds for the tokens it was found with (a new failure writes fresh ones),
    so a stale constraint costs its observation once, not once per check.
    """

    observer: Observer
    _stale: dict[str, tuple[Mapping[str, str], float]] = attrs.field(factory=dict)
    _warned: bool = False

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        """Return the tokens of ``paths`` (nothing when the observer fails: it only lifts)."""
        if not paths:
            return {}
        try:
            tokens = self.observer.observe(paths)
            # the local observer's answer is a new dictionary: a copy is for other observers
            return tokens if type(self.observer) is LocalObserver else dict(tokens)
        except Exception as exc:  # bookkeeping must never break the agent's call
            self._warn(exc)
            return {}

    def condition(
        self,
        call: Call,
        signature: str,
        error: str | None,
        observed: Mapping[str, str],
        root: str,
        redact: Callable[[str], str],
    ) -> tuple[str, ...]:
        """Return the condition a failure's wording names, confirmed by the observer.

        Nothing when a part of it would need redacting (it is stored), or when the observer
        fails: the constraint then depends on its tokens, as any other.
        """
        searches = not OLD_ARGS.isdisjoint(call.args) or EDITS_ARG in call.args
        search = search_text(call.args) if searches else None
        if search is not None and not _unredacted(redact, search):
            search = None
        try:
            evidence = Evidence(
                signature, call.args, call.targets, error, observed, root, search, program_of(call)
            )
            found = condition(evidence, self.observer)
        except Exception as exc:  # bookkeeping must never break the agent's call
            self._warn(exc)
            return ()
        return found if all(_unredacted(redact, part) for part in found) else ()

    def needs_observation(self, constraint: Constraint) -> bool:
        """Return whether :meth:`stale` would ask the observer (it has no verdict yet)."""
        params = constraint.params
        verdict = (params.observed, constraint.updated_at)
        watched = bool(params.observed or params.depends)
        return watched and self._stale.get(constraint.key) != verdict

    def stale(self, constraint: Constraint) -> bool:
        """Return whether the workspace changed since ``constraint`` was learned.

        A constraint with a condition (:attr:`ConstraintParams.depends`) is stale only when
        the condition ends; any other one when a path it depends on changed.
        """
        params = constraint.params
        tokens = params.observed
        if not tokens and not params.depends:
            return False
        verdict = (tokens, constraint.updated_at)
        if self._stale.get(constraint.key) == verdict:
            return True
        try:
            if params.depends:
                changed = condition_stale(self.observer, params.depends, tokens, params.search)
            else:
                changed = bool(self.observer.changed(tokens))
        except Exception as exc:  # a broken observer keeps the constraint as it is
            self._warn(exc)
            return False
        if changed:
            if len(self._stale) > 4096:
                self._stale.clear()
            self._stale[constraint.key] = verdict
        return changed

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(
                f"scarguard: the observer failed ({type(exc).__name__}: {exc}); constraints"
                " are kept as they are",
                ScarguardWarning,
                stacklevel=4,
            )
