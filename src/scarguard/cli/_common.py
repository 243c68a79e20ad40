"""What the ``scarguard`` commands share: opening a store, errors, JSON and tables.

Every command but ``demo`` (and ``import --create``) opens an existing store only: the path
is checked before the store is opened, so a typo never leaves an empty database behind.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scarguard._results import Pattern
from scarguard.cli.parser import EXIT_STORE, EXIT_USAGE
from scarguard.cli.rendering import parse_since, table, until
from scarguard.errors import ConfigurationError
from scarguard.memory import FailureMemory
from scarguard.model import Constraint, ConstraintKind, Failure
from scarguard.stores.factory import DEFAULT_PATH, PATH_ENV
from scarguard.tenancy import project_root

__all__ = [
    "KINDS",
    "CommandError",
    "constraint_json",
    "constraints_table",
    "emit_json",
    "failure_json",
    "known_signature",
    "label_of",
    "open_memory",
    "pattern_json",
    "since_of",
    "store_path",
    "tenant_line",
]

KINDS = ", ".join(k.value for k in ConstraintKind)


class CommandError(Exception):
    """A command cannot go on; the message is printed as one line, ``code`` is the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def store_path(given: str | None) -> str:
    """Return the store a command means: ``--path``, ``$SCARGUARD_PATH`` or the default.

    A leading ``~`` is expanded (the stores expand it too, so the check that the store
    exists looks where the store would be opened).
    """
    configured = given or os.environ.get(PATH_ENV)
    if configured:
        return configured if "://" in configured else os.path.expanduser(configured)
    default = Path.cwd() / DEFAULT_PATH
    fallback = default.with_suffix(".json")  # where the default store falls back to
    return str(fallback if not default.exists() and fallback.exists() else default)


@contextlib.contextmanager
def open_memory(args: argparse.Namespace, *, create: bool = False) -> Iterator[FailureMemory]:
    """Open the tenant's memory in the store ``args`` name, refusing to create a missing one.

    Raises:
        CommandError: The store is missing (unless ``create``) or cannot be opened.
    """
    path = store_path(args.path)
    remote = path.startswith(("postgresql://", "postgres://"))
    if path == ":memory:" or ("://" in path and not remote):
        raise CommandError(f"{path} cannot be inspected from the command line", EXIT_STORE)
    if not remote and not create and not os.path.exists(path):
        raise CommandError(
            f"no scarguard memory at {path} (run `scarguard demo` to make one, or give --path)",
            EXIT_STORE,
        )
    if not remote and os.path.isdir(path):
        raise CommandError(f"{path} is a directory, not a scarguard store", EXIT_STORE)
    if remote and not create:
        _require_postgres_schema(path)
    try:
        memory = FailureMemory(path, workspace=args.workspace, project=args.project)
    except (ConfigurationError, OSError) as exc:
        raise CommandError(f"cannot open {path}: {exc}", EXIT_STORE) from None
    try:
        yield memory
    finally:
        memory.close()


def tenant_line(args: argparse.Namespace, memory: FailureMemory) -> str:
    """Return the line naming the tenant, and where a derived project came from."""
    scope = memory.scope
    line = f"workspace {scope.workspace!r}, project {scope.project!r}"
    if args.project is None:
        root = project_root()
        origin = "the git top level" if (root / ".git").exists() else "this directory"
        line += f" (from {origin})"
    return line


def _require_postgres_schema(url: str) -> None:
    """Refuse a PostgreSQL URL whose schema holds no scarguard store (nothing is created).

    Raises:
        CommandError: The schema or its tables are missing, or the server cannot be reached.
    """
    try:
        import psycopg
    except ImportError:
        return  # opening the store says how to install the driver
    from scarguard.stores.postgres._conn import redact_url, split_url

    try:
        bare, schema = split_url(url)
    except ValueError:
        return  # opening the store names what is wrong with the URL
    schema = schema or "scarguard"
    where = f"{redact_url(bare)} (schema {schema})"
    try:
        with psycopg.connect(bare, connect_timeout=10, application_name="scarguard") as conn:
            name = psycopg.sql.Identifier(schema).as_string(conn) + ".meta"
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        secret_free = first.replace(url, where).replace(bare, redact_url(bare))
        raise CommandError(f"cannot reach {where}: {secret_free}", EXIT_STORE) from None
    if not (row and row[0]):
        raise CommandError(
            f"no scarguard memory at {where} (check ?schema=; inspection never creates one)",
            EXIT_STORE,
        )


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON with sorted keys."""
    print(json.dumps(value, indent=2, sort_keys=True, default=str))


def since_of(args: argparse.Namespace) -> float | None:
    """Return the time ``--since`` means, or ``None`` when it is not given.

    Raises:
        CommandError: ``--since`` cannot be read (a usage error).
    """
    if not getattr(args, "since", None):
        return None
    try:
        return parse_since(args.since, time.time())
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


def known_signature(memory: FailureMemory, name: str) -> bool:
    """Whether ``name`` is a failure kind of the bank or one this tenant has recorded."""
    key = f"s:{name}"
    return memory.signatures.get(name) is not None or key in memory.store.counters(
        memory.scope, key
    )


def label_of(memory: FailureMemory, signature: str) -> str:
    """Return the label of a failure kind (the kind itself when the bank does not know it)."""
    known = memory.signatures.get(signature)
    return known.label if known else signature


def constraint_json(c: Constraint) -> dict[str, Any]:
    """Return a constraint as a JSON-ready mapping."""
    row = c.to_row()
    row["params"] = dict(c.params)
    return {"id": c.id, **row}


def failure_json(f: Failure) -> dict[str, Any]:
    """Return a failure as a JSON-ready mapping."""
    row = f.to_row()
    row.update(targets=list(f.targets), args=dict(f.args))
    return row


def pattern_json(p: Pattern) -> dict[str, Any]:
    """Return a pattern as a JSON-ready mapping."""
    return {
        "signature": p.signature, "label": p.label, "count": p.count, "blame": p.blame.value,
        "hint": p.hint, "last_seen": p.last_seen, "tools": list(p.tools),
        "targets": list(p.targets),
    }  # fmt: skip


def constraints_table(constraints: list[Constraint], now: float) -> str:
    """The constraints, one row each with its reason wrapped underneath."""
    rows = [
        [c.id, c.kind.value, "refuse" if c.level.value == "block" else "warn", c.tool or "-",
         c.target or "-", c.occurrences, until(c.expires_at, now)]
        for c in constraints
    ]  # fmt: skip
    headers = ["id", "kind", "does", "tool", "target", "seen", "expires"]
    notes = [c.reason for c in constraints]
    return table(headers, rows, shrink=["target", "tool", "kind"], notes=notes)
