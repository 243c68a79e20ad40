"""Action classes of tool calls, and what a tool's name says of its action.

A tool's name is split into words (:func:`tool_words`) and the words, never substrings, are
looked up in a table (:func:`class_from_name`): ``thread_dump`` is not a read and
``overview`` is not a view. :class:`~scarguard.adapters.ToolCallAdapter` asks the name first
and the shape of the arguments when the name says nothing.
"""

from __future__ import annotations

import functools
import re
from typing import Final

from scarguard.adapters._shell import names_program

__all__ = [
    "API_CALL",
    "DELETE",
    "EDITOR_COMMANDS",
    "FILE_CLASSES",
    "FILE_CREATE",
    "FILE_EDIT",
    "FILE_READ",
    "MUTATING",
    "NEEDS_TARGET",
    "PATCH_OPERATIONS",
    "SEARCH",
    "SHELL_EXEC",
    "TOOL_ACTION_CLASSES",
    "class_from_name",
    "tool_words",
]

FILE_READ: Final = "file_read"
FILE_EDIT: Final = "file_edit"
FILE_CREATE: Final = "file_create"
SHELL_EXEC: Final = "shell_exec"
SEARCH: Final = "search"
API_CALL: Final = "api_call"
DELETE: Final = "delete"
TOOL_ACTION_CLASSES: Final = (
    FILE_READ,
    FILE_EDIT,
    FILE_CREATE,
    SHELL_EXEC,
    SEARCH,
    API_CALL,
    DELETE,
)
"""Every action class :class:`~scarguard.adapters.ToolCallAdapter` can return."""

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# First matching row wins. Transport words come first, so ``http_delete`` and
# ``requests.patch`` are API calls, not a deletion or an edit; edits come before searches,
# so ``search_replace`` is an edit.
_NAME_TABLE: Final[tuple[tuple[str, frozenset[str]], ...]] = (
    (API_CALL, frozenset({
        "http", "https", "api", "request", "requests", "curl", "wget", "fetch", "url", "uri",
        "webhook", "graphql", "rest", "httpx", "aiohttp", "urllib", "download", "upload",
        "post", "browse", "browser",
    })),
    (DELETE, frozenset({
        "delete", "del", "remove", "rm", "rmdir", "rmtree", "unlink", "erase", "trash",
        "purge", "destroy",
    })),
    (FILE_EDIT, frozenset({
        "edit", "editor", "replace", "patch", "modify", "update", "insert", "append",
        "appendfile", "sed", "rewrite", "amend", "move", "mv", "rename",
    })),
    (FILE_CREATE, frozenset({
        "create", "write", "writefile", "writelines", "overwrite", "touch", "mkdir",
        "makedirs", "save", "copy", "cp",
    })),
    (SHELL_EXEC, frozenset({
        "bash", "sh", "zsh", "shell", "powershell", "pwsh", "terminal", "console", "exec",
        "execute", "run", "cmd", "command", "repl", "subprocess", "spawn",
    })),
    (SEARCH, frozenset({
        "search", "grep", "rg", "ripgrep", "find", "glob", "query", "lookup", "locate",
    })),
    (FILE_READ, frozenset({
        "read", "readfile", "readlines", "view", "viewer", "cat", "head", "tail", "less",
        "ls", "listdir", "stat",
    })),
)  # fmt: skip

# Sub-commands of multi-command editor tools (``str_replace_editor``: view, create, ...).
EDITOR_COMMANDS: Final = {
    "view": FILE_READ,
    "create": FILE_CREATE,
    "str_replace": FILE_EDIT,
    "insert": FILE_EDIT,
    "undo_edit": FILE_EDIT,
}
# Operations of an apply_patch tool (its ``type`` argument), as the OpenAI Agents SDK's
# ``ApplyPatchOperation`` names them: creating a file does not need it to exist.
PATCH_OPERATIONS: Final = {
    "create_file": FILE_CREATE,
    "update_file": FILE_EDIT,
    "delete_file": DELETE,
}
FILE_CLASSES: Final = frozenset({FILE_READ, FILE_EDIT, FILE_CREATE})
"""The action classes of calls on files."""
MUTATING: Final = frozenset({FILE_EDIT, FILE_CREATE, DELETE})
"""The action classes whose success changes the world."""
NEEDS_TARGET: Final = frozenset({FILE_READ, FILE_EDIT, DELETE})
"""The action classes that fail on a missing target."""


@functools.lru_cache(maxsize=4096)
def tool_words(tool: str) -> tuple[str, ...]:
    """Split a tool name into lower-case words, whatever its naming convention.

    Example: ``tool_words("fs.writeFile") == ("fs", "write", "file")``.
    """
    return tuple(word.lower() for word in _WORD.findall(tool))


@functools.lru_cache(maxsize=4096)
def class_from_name(tool: str) -> str | None:
    """Return the action class the words of a tool's name say, if they say one."""
    words = tool_words(tool)
    found = set(words)
    for action_class, vocabulary in _NAME_TABLE:
        if found & vocabulary:
            return action_class
    # a tool named for a build, test or run program (make, npm, pytest...) runs a command
    return SHELL_EXEC if names_program(words) else None
