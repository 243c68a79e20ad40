"""Shell commands that change the workspace, and those that may put a program on ``PATH``.

A command is judged by its words, segment by segment (the segments and redirections are
:mod:`scarguard.adapters._shell`'s): the program each segment runs, past prefixes such as
``sudo`` and ``python -m``, and the subcommand it is given; a database client's, by the SQL
it runs (:mod:`scarguard.adapters._database_clients`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Final

from scarguard.adapters._database_clients import database_changes
from scarguard.adapters._shell import REDIRECT, SEGMENTS
from scarguard.adapters._shell_scan import inner_scripts, segments, unquoted_command

__all__ = ["installs", "shell_changes_workspace"]

_CHANGING_PROGRAMS: Final = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "cp",
        "mkdir",
        "touch",
        "ln",
        "chmod",
        "chown",
        "truncate",
        "patch",
        "unzip",
        "install",
        "kill",
        "pkill",
        "killall",
        "fuser",
        "tee",
        "dd",
        "createdb",
        "dropdb",
        "createuser",
        "dropuser",
        "pg_restore",
        "mysqlimport",
        "mongoimport",
        "mongorestore",
    }
)
"""Shell programs that change files, processes or a database whatever their arguments."""
_CONTAINER_VERBS: Final = frozenset(
    {
        "stop",
        "rm",
        "kill",
        "run",
        "restart",
        "compose",
        "pull",
        "build",
        "buildx",
        "image",
        "create",
        "start",
        "tag",
        "load",
        "network",
        "volume",
        "exec",
    }
)
"""What ``docker``, ``podman`` and ``nerdctl`` change the world with (``exec``: whatever
runs in the container)."""

_CHANGING_SUBCOMMANDS: Final[Mapping[str, frozenset[str]]] = {
    "git": frozenset(
        {
            "checkout",
            "switch",
            "reset",
            "restore",
            "stash",
            "pull",
            "merge",
            "rebase",
            "apply",
            "am",
            "cherry-pick",
            "revert",
            "commit",
            "clone",
            "clean",
            "worktree",
            "init",
            "rm",
            "mv",
            "fetch",
            "submodule",
        }
    ),
    "pip": frozenset({"install", "uninstall"}),
    "pip3": frozenset({"install", "uninstall"}),
    "uv": frozenset({"pip", "add", "remove", "sync", "venv"}),
    "poetry": frozenset({"add", "remove", "install", "update", "lock"}),
    "npm": frozenset({"install", "i", "ci", "uninstall", "remove", "rm", "update", "link"}),
    "yarn": frozenset({"add", "remove", "install", "upgrade"}),
    "pnpm": frozenset({"add", "remove", "install", "i", "update"}),
    "cargo": frozenset({"add", "remove", "install", "update", "clean"}),
    "go": frozenset({"get", "install", "mod"}),
    "apt": frozenset({"install", "remove", "purge"}),
    "apt-get": frozenset({"install", "remove", "purge"}),
    "brew": frozenset({"install", "uninstall", "upgrade"}),
    "conda": frozenset({"install", "remove", "create", "update"}),
    "docker": _CONTAINER_VERBS,
    "podman": _CONTAINER_VERBS,
    "nerdctl": _CONTAINER_VERBS,
    "docker-compose": frozenset({"up", "down", "build", "run", "start", "stop", "restart"}),
    "alembic": frozenset({"upgrade", "downgrade", "stamp"}),
    "prisma": frozenset({"migrate", "db"}),
    "rails": frozenset({"db:migrate", "db:setup", "db:create", "db:seed", "db:reset"}),
    "rake": frozenset({"db:migrate", "db:setup", "db:create", "db:seed", "db:reset"}),
    "terraform": frozenset({"apply", "destroy", "import", "init"}),
    "kubectl": frozenset(
        {
            "apply",
            "create",
            "delete",
            "patch",
            "replace",
            "scale",
            "rollout",
            "set",
            "expose",
            "run",
            "label",
            "annotate",
        }
    ),
    "helm": frozenset({"install", "upgrade", "uninstall", "rollback"}),
    "manage.py": frozenset({"migrate", "loaddata", "flush", "createsuperuser"}),
    "systemctl": frozenset({"start", "stop", "restart", "reload"}),
    "service": frozenset({"start", "stop", "restart", "reload"}),
    "make": frozenset({"clean", "install", "distclean"}),
    "sed": frozenset({"-i"}),
}
"""Programs that change the workspace with one of these words (``git checkout``...), or the
world it runs against: an image built, a branch fetched, a schema migrated, a deployment
applied. Builds of the workspace itself (``make build``, ``npm run build``) are not: what
they make is a file, which the observer sees."""
_PREFIXES: Final = frozenset(
    {"sudo", "env", "nohup", "time", "exec", "command", "xargs", "npx", "bunx", "pnpx"}
)

_MODULE_RUNNERS: Final = frozenset({"python", "python3", "py"})
"""Interpreters that run a tool as a module (``python -m pip install``: pip's words decide)."""


_INNER: Final = re.compile(
    r"(?<![\w.-])(?:(?:ba|z|da|k)?sh\s+-\w*c|su\s|eval\s|ssh\s"
    r"|(?:kubectl|oc)\s+(?:\S+\s+){0,3}exec\s)"
)
"""A shell handed a script (``bash -c``, ``sh -lc``, ``su -c``, ``eval``), another host
(``ssh host '...'``) or a container a command (``kubectl exec pod -- ...``): what it runs
decides."""
_DEPTH: Final = 3
"""How many shells deep a script is read."""


def _in_shells(command: str, depth: int, judge: Callable[[str, int], bool]) -> bool:
    """Return whether ``judge`` says yes of a script the command hands a shell."""
    if depth >= _DEPTH or not _INNER.search(command):
        return False
    for scanned, _ in segments(command):
        for script in inner_scripts([w.text for w in scanned]):
            if judge(script, depth + 1):
                return True
    return False


def shell_changes_workspace(command: str, depth: int = 0) -> bool:
    """Return whether a shell command changes files or processes (so earlier failures may not hold).

    A command counts when any of its segments runs a changing program (``rm``, ``kill``...),
    a changing subcommand (``git checkout``, ``pip install``, ``sed -i``...), a database
    client that changes a schema or data (``psql -c 'create table t (id int)'``), or
    redirects output into a file (not ``/dev/null``, not a ``>`` quoted: ``grep "=>" src``),
    also in a script it hands a shell (``bash -c 'git checkout main'``, ``eval "..."``).
    Reading commands (``ls``, ``cat``, ``npm test``, ``psql -c 'select 1'``) do not.
    """
    changes, command = database_changes(command)  # (a client's quoted SQL blanked out)
    if changes:
        return True
    if _in_shells(command, depth, shell_changes_workspace):
        return True
    if REDIRECT.search(command) and (
        ("'" not in command and '"' not in command) or REDIRECT.search(unquoted_command(command))
    ):
        return True
    for segment in SEGMENTS.split(command):
        words = [w for w in segment.split() if "=" not in w or w.startswith("-")]
        while words and words[0] in _PREFIXES:
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in _MODULE_RUNNERS and words[1:2] == ["-m"] and len(words) > 2:
            words = words[2:]  # python -m pip install ...
            program = words[0]
        elif program in _MODULE_RUNNERS and len(words) > 2 and words[1].endswith("manage.py"):
            words = words[1:]  # python manage.py migrate: Django's command decides
            program = "manage.py"
        if program in _CHANGING_PROGRAMS:
            return True
        changing = _CHANGING_SUBCOMMANDS.get(program)
        if changing and any(w in changing for w in words[1:3]):
            return True
    return False


_INSTALLERS: Final = frozenset(
    {"pip", "pip3", "pipx", "uv", "poetry", "npm", "yarn", "pnpm", "bun", "cargo", "go", "apt",
     "apt-get", "brew", "conda", "mamba", "gem", "composer", "dnf", "yum", "apk", "pacman",
     "snap", "nix", "asdf", "mise", "rustup", "nvm", "pyenv", "make", "dotnet"}
)  # fmt: skip
_INSTALL_WORDS: Final = frozenset({"install", "i", "add", "sync", "get", "use", "global", "link"})
_INSTALLS_ALSO: Final[Mapping[str, frozenset[str]]] = {
    "npm": frozenset({"ci"}), "bundle": frozenset({"install"}), "corepack": frozenset({"enable"}),
    "nix-env": frozenset({"-i", "--install"}), "deno": frozenset({"install"}),
}  # fmt: skip
"""Installs of programs whose install word is their own (``npm ci``, ``nix-env -i``)."""
_BARE_INSTALLERS: Final = frozenset({"yarn", "bundle", "bun"})
"""Package managers that install when run without a subcommand (``yarn``)."""
_PIPED_INSTALLER: Final = re.compile(
    r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh(?:\s+-s\b[^|;&]*)?\s*(?:$|[;&|])"
)
"""An installer script piped into a shell (``curl -fsSL https://…/install.sh | sh``)."""
_ENVIRONMENT: Final = frozenset({"source", ".", "export", "activate", "alias", "hash", "rehash"})


def installs(command: str, depth: int = 0) -> bool:
    """Return whether a shell command may put a program on ``PATH``.

    An install by a package or tool manager (``pip install``, ``npm i -g``, ``brew
    install``, ``make install``, ``python -m pip install``, ``npm ci``, an installer script
    piped into a shell...), or a change of the shell's environment (``source
    .venv/bin/activate``, ``export PATH=...``), also in a script handed to a shell (``bash
    -lc 'pip install x'``).
    """
    if _PIPED_INSTALLER.search(command):
        return True
    if _in_shells(command, depth, installs):
        return True
    for segment in SEGMENTS.split(command):
        words = segment.split()
        while words and (words[0] in _PREFIXES or ("=" in words[0] and words[0][0] != "-")):
            if words[0].startswith("PATH="):
                return True
            words = words[1:]
        if not words:
            continue
        program = os.path.basename(words[0])
        if program in _MODULE_RUNNERS and words[1:2] == ["-m"] and len(words) > 2:
            words = words[2:]  # python -m pip install ...
            program = words[0]
        if program in _ENVIRONMENT or program.endswith("activate"):
            return True
        if program in _INSTALLERS and any(w in _INSTALL_WORDS for w in words[1:3]):
            return True
        if any(w in _INSTALLS_ALSO.get(program, ()) for w in words[1:3]):
            return True
        if program in _BARE_INSTALLERS and len(words) == 1:
            return True
    return False
