"""The adapter for agent tool loops: action classes, targets and fingerprints of tool calls.

A tool's name is split into words (``snake_case``, ``camelCase``, ``PascalCase``,
``dash-case``, ``dot.notation``) and the words, never substrings, are looked up in a table:
``thread_dump`` is not a read and ``overview`` is not a view. When the name says nothing, the
shape of the arguments decides (``command`` means a shell command, ``old_string`` with
``new_string`` an edit, a path alone a read).

Decisions the engine relies on:

- ``write`` means create-or-overwrite, so ``write_file`` is ``file_create``: it does not need
  the target to exist.
- ``shell_exec`` is not mutating: a shell command's targets are rarely known, so its success
  is no evidence about any file.
- ``cwd`` is not a target: a shell command does not act on its working directory.
- URLs are kept verbatim (a trailing slash can name another resource); paths are normalised
  with :func:`os.path.normpath` (``./a/../b.py`` becomes ``b.py``).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import attrs

from scarguard import canonical
from scarguard.adapters._actions import (
    API_CALL,
    EDITOR_COMMANDS,
    FILE_CLASSES,
    FILE_CREATE,
    FILE_EDIT,
    FILE_READ,
    MUTATING,
    NEEDS_TARGET,
    PATCH_OPERATIONS,
    SEARCH,
    SHELL_EXEC,
    class_from_name,
    tool_words,
)
from scarguard.adapters._arguments import (
    CONTENT_ARGS,
    NEW_ARGS,
    OLD_ARGS,
    SEARCH_ARGS,
    SHELL_ARGS,
    URL_KEYS,
    command_strings,
    normalise_path,
    safe_value,
    string_targets,
    strings,
)
from scarguard.adapters._shell import command_text, names_program
from scarguard.adapters._shell_changes import shell_changes_workspace
from scarguard.model import Blame, Call, Outcome

if TYPE_CHECKING:
    from scarguard.naming._signature import Signature

__all__ = ["DEFAULT_TARGET_KEYS", "DEFAULT_VOLATILE_KEYS", "Screen", "ToolCallAdapter"]

DEFAULT_TARGET_KEYS: Final = frozenset(
    {
        "path", "paths", "file", "files", "file_path", "file_paths", "filepath", "filename",
        "target_file", "target_path", "target_directory", "notebook_path", "dir",
        "directory", "folder", "destination", "dest", "url", "urls", "uri", "uris",
        "relative_path", "absolute_path", "dir_path", "directory_path", "folder_path",
        # the CamelCase names some coding agents' file tools use
        "TargetFile", "AbsolutePath", "FilePath", "DirectoryPath", "SearchPath",
        "SearchDirectory",
    }
)  # fmt: skip
"""Argument names whose values are targets. ``cwd`` is deliberately absent.

Besides the common ones, the names of popular agents' file tools: ``relative_path``
(Serena's MCP tools), ``absolute_path`` (Gemini CLI's ``read_file``), ``TargetFile`` and
``AbsolutePath`` (Windsurf's). A call with no target is banned as a whole, and a file
created or fixed by hand cannot lift it: no file is watched."""

DEFAULT_VOLATILE_KEYS: Final = frozenset(
    {"request_id", "trace_id", "span_id", "correlation_id", "idempotency_key", "timestamp", "nonce"}
)
"""Argument names left out of every fingerprint: they differ on every call."""

def _frozen_keys(value: Collection[str]) -> frozenset[str]:
    return frozenset(value)


def _volatile(
    value: Collection[str] | Mapping[str, Collection[str]],
) -> Mapping[str, frozenset[str]]:
    if isinstance(value, Mapping):
        per_tool = {str(tool): frozenset(keys) for tool, keys in value.items()}
        per_tool.setdefault("*", DEFAULT_VOLATILE_KEYS)
        return per_tool
    return {"*": frozenset(value)}


def _abspath(value: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.fspath(value))


def _blames(value: Mapping[str, Blame | str]) -> Mapping[str, Blame]:
    return {name: Blame(blame) for name, blame in value.items()}


@attrs.frozen(kw_only=True, eq=False)
class ToolCallAdapter:
    """Describe the calls of any agent tool loop.

    Args:
        target_keys: Argument names whose values are targets (strings or lists of strings).
        volatile_keys: Argument names left out of fingerprints: a collection applies to
            every tool; a mapping names them per tool, where the key ``"*"`` applies to every
            tool and defaults to :data:`DEFAULT_VOLATILE_KEYS`.
        action_classes: Explicit tool name to action class; checked before the name and the
            arguments.
        blame_overrides: Signature name to the blame to use instead of the signature's.
        normalise_paths: Normalise path targets with :func:`os.path.normpath`.
        root: The workspace paths are normalised against: an absolute path under it becomes
            relative to it, so ``/ws/a.py``, ``a.py``, ``./a.py`` and ``x/../a.py`` are one
            target and one call (``FailureMemory`` sets its own root when this is ``None``).
    """

    target_keys: frozenset[str] = attrs.field(default=DEFAULT_TARGET_KEYS, converter=_frozen_keys)
    volatile_keys: Mapping[str, frozenset[str]] = attrs.field(
        default=DEFAULT_VOLATILE_KEYS, converter=_volatile
    )
    action_classes: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    blame_overrides: Mapping[str, Blame] = attrs.field(factory=dict, converter=_blames)
    normalise_paths: bool = True
    root: str | None = attrs.field(default=None, converter=attrs.converters.optional(_abspath))
    name: str = attrs.field(default="tool_call", init=False)
    scaling_keys: frozenset[str] = attrs.field(default=frozenset(), init=False)
    _volatile_cache: dict[str, frozenset[str]] = attrs.field(
        factory=dict, init=False, repr=False, eq=False
    )
    _program_cache: dict[str, bool] = attrs.field(factory=dict, init=False, repr=False, eq=False)
    _own_targets: bool = attrs.field(init=False, repr=False, eq=False)
    """Whether targets are normalised by this class's own :meth:`normalise_target`."""

    @_own_targets.default
    def _normalised_here(self) -> bool:
        return type(self).normalise_target is ToolCallAdapter.normalise_target

    def classify_action(self, tool: str, args: Mapping[str, Any]) -> str | None:
        """Return the action class of a call, or ``None`` when neither name nor args tell.

        The explicit ``action_classes`` come first, then the words of the tool's name, then
        the shape of the arguments. A multi-command editor (``str_replace_editor``) is
        classified by its ``command`` argument, an apply_patch tool by its operation's
        ``type`` (``create_file`` creates, ``delete_file`` deletes).
        """
        explicit = self.action_classes.get(tool)
        if explicit is not None:
            return explicit
        by_name = class_from_name(tool)
        if by_name is None or by_name in FILE_CLASSES:
            chosen = self._file_operation(by_name, args)
            if chosen is not None:
                return chosen
        return by_name if by_name is not None else self._class_from_args(args)

    def _file_operation(self, by_name: str | None, args: Mapping[str, Any]) -> str | None:
        """Return the class an editor's ``command`` or a patch's ``type`` says, if any.

        Only for a file tool, or a tool whose name says nothing and that is given a path;
        a ``type`` only for an editing one (a reader's ``type`` is no patch operation).
        """
        command = args.get("command")
        chosen = EDITOR_COMMANDS.get(command) if isinstance(command, str) else None
        if chosen is None and by_name in (FILE_EDIT, None):
            operation = args.get("type")
            chosen = PATCH_OPERATIONS.get(operation) if isinstance(operation, str) else None
        if chosen is None or (by_name is None and not self._has_path(args)):
            return None
        return chosen

    def _has_path(self, args: Mapping[str, Any]) -> bool:
        paths = (v for k, v in args.items() if k in self.target_keys and k not in URL_KEYS)
        return any(strings(paths))

    def _class_from_args(self, args: Mapping[str, Any]) -> str | None:
        keys = set(args)
        if keys & OLD_ARGS and keys & NEW_ARGS:
            return FILE_EDIT
        if keys & SHELL_ARGS:
            return SHELL_EXEC
        if keys & URL_KEYS:
            return API_CALL
        has_path = self._has_path(args)
        if has_path and keys & CONTENT_ARGS:
            return FILE_CREATE
        if keys & SEARCH_ARGS:
            return SEARCH
        return FILE_READ if has_path else None

    def extract_targets(self, args: Mapping[str, Any]) -> tuple[str, ...]:
        """Return every target in ``args``: in argument order, normalised, without repeats.

        Only strings (and path-like objects) count; lists of them are flattened.
        """
        keys = self.target_keys
        found: list[str] = []
        for key, value in args.items():
            if key in keys:
                if type(value) is not str:  # lists, paths, other values: the general walk
                    return self.normalise_targets(v for k, v in args.items() if k in keys)
                if value:
                    found.append(self.normalise_target(value))
        return tuple(dict.fromkeys(found)) if found else ()

    def normalise_target(self, target: str) -> str:
        """Return ``target`` normalised: URLs verbatim, paths through ``normpath``.

        An absolute path under :attr:`root` becomes relative to it.
        """
        if not self.normalise_paths:
            return target
        return normalise_path(target, self.root)

    def normalise_targets(self, targets: Iterable[str]) -> tuple[str, ...]:
        """Return ``targets`` normalised, in order, without repeats or empty strings."""
        values = [targets] if isinstance(targets, str) else targets
        normalised = (self.normalise_target(t) for t in strings(values) if t)
        return tuple(dict.fromkeys(normalised))

    def volatile_for(self, tool: str) -> frozenset[str]:
        """Return the argument names left out of ``tool``'s fingerprints."""
        cached = self._volatile_cache.get(tool)
        if cached is None:
            everywhere = self.volatile_keys.get("*", frozenset())
            cached = everywhere | self.volatile_keys.get(tool, frozenset())
            self._volatile_cache[tool] = cached
        return cached

    def normalise_args(self, args: Mapping[str, Any]) -> Mapping[str, Any]:
        """Return ``args`` as fingerprints see them: one spelling per path and per command.

        Path arguments are normalised like targets; shell commands are compared by their
        words (:func:`~scarguard.adapters._shell.command_text`). ``args`` itself is returned
        when nothing changes.
        """
        changed: dict[str, Any] | None = None
        for key, value in args.items():
            if key in self.target_keys and self.normalise_paths:
                if type(value) is str and self._own_targets:  # (normalise_target, inline)
                    new = normalise_path(value, self.root) if value else value
                else:
                    new = self._normal_path_value(value)
            elif key in SHELL_ARGS and isinstance(value, str):
                new = command_text(value)
            else:
                continue
            if new is not value and new != value:
                if changed is None:
                    changed = dict(args)
                changed[key] = new
        return args if changed is None else changed

    def _normal_path_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.normalise_target(value) if value else value
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value):
            return [self.normalise_target(v) for v in value]
        return value

    def fingerprint(self, tool: str, args: Mapping[str, Any]) -> str:
        """Return the call's fingerprint: deterministic, and never raising on odd arguments.

        Arguments are normalised first (:meth:`normalise_args`), so one call has one
        fingerprint however its paths and commands are spelled.
        """
        return self._fingerprint_normalised(tool, self.normalise_args(args))

    def _fingerprint_normalised(self, tool: str, args: Mapping[str, Any]) -> str:
        """:meth:`fingerprint` of arguments :meth:`normalise_args` returned."""
        volatile = self.volatile_for(tool)
        kept = (
            args
            if volatile.isdisjoint(args)
            else {k: v for k, v in args.items() if k not in volatile}
        )
        try:
            return canonical.fingerprint(tool, kept)
        except Exception:  # a misbehaving __str__ or mapping must not break the agent's call
            return canonical.fingerprint(tool, {k: safe_value(v) for k, v in kept.items()})

    def describe(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None = None,
        previous: Call | None = None,
    ) -> Call:
        """Return the call: targets, action class and fingerprint.

        Args:
            tool: The tool's name.
            args: The arguments by name.
            targets: Explicit targets (normalised like extracted ones); ``None`` extracts them.
            previous: Unused: tool calls carry no parameter deltas.
        """
        if not SHELL_ARGS.isdisjoint(args):  # ["bash", "-lc", "..."]: one command line
            args = command_strings(args)
        normalised = self.normalise_args(args)
        found: tuple[str, ...] | None = None
        if targets is not None:
            found = self.normalise_targets(targets)
        elif self.normalise_paths:  # string targets are normalised in ``normalised`` already
            found = string_targets(normalised, self.target_keys)
        if found is None:
            found = self.extract_targets(args)
        fingerprint = self._fingerprint_normalised(tool, normalised)
        return Call.described(tool, args, found, self.classify_action(tool, args), fingerprint)

    def blame(self, signature: Signature, outcome: Outcome) -> Blame | None:
        """Return the configured override for the signature's name, if any."""
        return self.blame_overrides.get(signature.name)

    def mutating(self, call: Call) -> bool:
        """Return whether a success changes the world.

        Edits, creations and deletions do, and so do shell commands that change files or
        processes (see :func:`shell_changes_workspace`).
        """
        return self._mutates(call.tool, call.action_class, call.args)

    def _mutates(self, tool: str, action_class: str | None, args: Mapping[str, Any]) -> bool:
        if action_class in MUTATING:
            return True
        if action_class != SHELL_EXEC:
            return False
        if not SHELL_ARGS.isdisjoint(args):
            args = command_strings(args)
        commands = [v for k, v in args.items() if k in SHELL_ARGS and isinstance(v, str)]
        if not commands and names_program(tool_words(tool)):
            # a tool named for a program (``git(args="merge x")``): its words and arguments
            words = [*tool_words(tool)[:1], *(v for v in args.values() if isinstance(v, str))]
            commands = [" ".join(words)]
        return any(_changes_workspace(command) for command in commands)

    def mutates(self, tool: str, action_class: str | None, args: Mapping[str, Any]) -> bool:
        """:meth:`mutating` of a call not described yet (its action class and arguments)."""
        if action_class == SHELL_EXEC:
            for value in args.values():
                if isinstance(value, str):
                    break
            else:
                return self._runs_changing(tool)  # no command text: the tool's name alone
        return self._mutates(tool, action_class, args)

    def _runs_changing(self, tool: str) -> bool:
        known = self._program_cache.get(tool)
        if known is None:
            known = self._program_cache[tool] = self._mutates(tool, SHELL_EXEC, {})
        return known

    def screen(self, tool: str, args: Mapping[str, Any]) -> Screen:
        """Return what the fast path needs to know of a call, without describing it.

        No fingerprint, no target normalisation, no :class:`Call`: the action class, whether
        any argument is named like a target (then it may have targets), and whether a
        success would change the world (:meth:`mutating`).
        """
        action_class = self.classify_action(tool, args)
        return Screen(
            action_class,
            not self.target_keys.isdisjoint(args),
            self._mutates(tool, action_class, args),
        )

    def screen_of_names(self, tool: str, names: Collection[str]) -> Screen | None:
        """Return :meth:`screen` of every call of ``tool`` with these argument names.

        ``None`` when the screen depends on the arguments' values: a shell command (is it a
        reader?), an editor's ``command``, or a path argument that decides the action class.
        Otherwise every call with these names screens the same, so the answer can be kept,
        except that whether a command-line tool's success changes the world (a tool named
        for a program, its arguments the program's) is left unknown (``mutating=None``).
        A subclass may classify by values: ``None`` unless it says otherwise.
        """
        if type(self) is not ToolCallAdapter:
            return None
        action_class = self.action_classes.get(tool)
        if action_class is None:
            action_class = class_from_name(tool)
            if "command" in names and (action_class is None or action_class in FILE_CLASSES):
                return None  # an editor command, or the shape of the arguments, decides
            if "type" in names and (
                action_class == FILE_EDIT
                or (action_class is None and not self.target_keys.isdisjoint(names))
            ):
                return None  # a patch operation's type may decide (create_file, delete_file)
            if action_class is None:
                keys = set(names)
                decided = bool(keys & OLD_ARGS and keys & NEW_ARGS) or bool(keys & SHELL_ARGS)
                decided = decided or bool(keys & URL_KEYS)
                if not decided and keys & (self.target_keys - URL_KEYS):
                    return None  # whether a path is given decides
                action_class = self._class_from_args(dict.fromkeys(names))
        may_target = not self.target_keys.isdisjoint(names)
        if action_class == SHELL_EXEC:
            if not SHELL_ARGS.isdisjoint(names):  # (loop detection's command arguments too)
                return None  # what the command runs decides how the call is seen
            # the program's arguments decide whether it changes anything; without a command
            # argument its success always may change what other calls return
            return Screen(action_class, may_target, None, True)
        mutating = action_class in MUTATING
        return Screen(action_class, may_target, mutating, mutating)

    def requires_existing_target(self, call: Call) -> bool:
        """Return whether the call fails on a missing target: reads, edits and deletions."""
        return call.action_class in NEEDS_TARGET


class Screen(NamedTuple):
    """What :meth:`ToolCallAdapter.screen` tells of a call without describing it."""

    action_class: str | None
    """The call's action class."""
    may_target: bool
    """Whether an argument is named like a target (the call may have targets)."""
    mutating: bool | None
    """Whether a success of the call changes the world (``None``, from
    :meth:`ToolCallAdapter.screen_of_names` only: it depends on the arguments' values; ask
    :meth:`ToolCallAdapter.screen`)."""
    changes: bool | None = None
    """Whether a success may change what other calls return (``None``: not worked out;
    :func:`~scarguard.learning.progress.changes_results` tells)."""


_changes_workspace = functools.lru_cache(maxsize=4096)(shell_changes_workspace)
""":func:`shell_changes_workspace`, cached: a tool's commands repeat."""
