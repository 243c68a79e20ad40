"""Open the right store for a path, URL or store object.

==============================  ============================================
``None``                        ``$SCARGUARD_PATH``, else ``.scarguard/memory.db`` in the CWD
``":memory:"``                  :class:`~scarguard.stores.MemoryStore`
``*.db``, ``*.sqlite(3)``       :class:`~scarguard.stores.SQLiteStore`
``*.json``                      :class:`~scarguard.stores.JSONStore`
``postgresql://…``              :class:`~scarguard.stores.PostgresStore` (also
                                ``postgres://``; ``?schema=name`` picks the
                                schema; needs ``scarguard[postgres]``)
a :class:`Store`                itself
==============================  ============================================

Only the built-in default falls back: when SQLite cannot be imported, the JSON store beside
it (``.scarguard/memory.json``) is used, announced by exactly one
:class:`~scarguard.errors.StoreFallbackWarning` and one log line; that JSON store is then
used as long as no ``memory.db`` exists beside it, so the memory stays in one place. A default
database that exists but cannot be opened (corrupt, unreadable) raises
:class:`~scarguard.errors.StoreError` naming the file and what to do, as does a path the
caller chose (argument or ``SCARGUARD_PATH``): silently writing somewhere else would split the
memory, while the command line keeps reading the database.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from scarguard._warnings import warn
from scarguard.errors import (
    ConfigurationError,
    SchemaVersionError,
    StoreError,
    StoreFallbackWarning,
)
from scarguard.stores.json import JSONStore
from scarguard.stores.memory import MemoryStore
from scarguard.stores.protocol import Store

if TYPE_CHECKING:
    from scarguard.stores.sqlite import SQLiteStore

_SQLite: type[SQLiteStore] | None
try:
    # Imported here, not at first use: an import still running in one thread when another
    # forks leaves the child waiting forever on the import lock.
    from scarguard.stores.sqlite import SQLiteStore as _SQLite
except ImportError:  # a Python built without sqlite3: the JSON store is the fallback
    _SQLite = None

__all__ = ["DEFAULT_PATH", "PATH_ENV", "default_path", "open_store"]

DEFAULT_PATH = os.path.join(".scarguard", "memory.db")
"""Where the memory lives when no path is given, relative to the working directory."""
PATH_ENV = "SCARGUARD_PATH"
"""The environment variable that overrides :data:`DEFAULT_PATH`."""

_log = logging.getLogger(__name__)
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_POSTGRES = ("postgresql://", "postgres://")
_FORMS = "None, ':memory:', a *.db / *.sqlite / *.sqlite3 or *.json path, a postgresql:// URL"


def default_path() -> Path:
    """Return ``$SCARGUARD_PATH`` (``~`` expanded), else ``.scarguard/memory.db`` in the CWD.

    A file's path: a URL in the variable (``postgresql://...``) is opened by
    :func:`open_store` as written, not through this path.
    """
    configured = os.environ.get(PATH_ENV)
    return Path(configured).expanduser() if configured else Path.cwd() / DEFAULT_PATH


def open_store(
    path: str | os.PathLike[str] | Store | None = None,
    *,
    durable: bool = False,
    receipts: bool | None = None,
    receipt_key: bytes | str | None = None,
) -> Store:
    """Open the store ``path`` names (see the module docstring for the accepted forms).

    Args:
        path: A path, URL, ``":memory:"``, a store, or ``None`` for the default.
        durable: SQLite only: ``synchronous=FULL`` (PostgreSQL commits durably anyway).
        receipts: Keep the receipt chain (default: on for files, off in memory).
        receipt_key: HMAC key for the chain (default: ``SCARGUARD_RECEIPT_KEY``).

    Raises:
        ConfigurationError: ``path`` is of no accepted form.
        StoreError: An explicitly named store cannot be opened.
    """
    if path is None:
        configured = os.environ.get(PATH_ENV)
        if configured:
            # as given (``~`` expanded), not as a Path: a URL's "//" must survive
            return open_store(
                os.path.expanduser(configured),
                durable=durable,
                receipts=receipts,
                receipt_key=receipt_key,
            )
        return _open_default(durable=durable, receipts=receipts, receipt_key=receipt_key)
    if not isinstance(path, (str, os.PathLike)):
        if isinstance(path, Store):
            return path
        raise ConfigurationError(f"cannot open a store from {path!r}; give one of: {_FORMS}")
    text = os.fspath(path)
    keep = True if receipts is None else receipts
    if text == ":memory:":
        return MemoryStore(receipts=bool(receipts), receipt_key=receipt_key)
    if text.lower().startswith(_POSTGRES):
        return _open_postgres(text, receipts=keep, receipt_key=receipt_key)
    suffix = os.path.splitext(text)[1].lower()
    if suffix in _SQLITE_SUFFIXES:
        if _SQLite is None:
            raise StoreError(f"{text}: this Python was built without the sqlite3 module", path=text)
        return _SQLite(text, durable=durable, receipts=keep, receipt_key=receipt_key)
    if suffix == ".json":
        return JSONStore(text, receipts=keep, receipt_key=receipt_key)
    raise ConfigurationError(f"cannot open a store from {text!r}; give one of: {_FORMS}")


def _open_postgres(url: str, *, receipts: bool, receipt_key: bytes | str | None) -> Store:
    try:
        from scarguard.stores.postgres import PostgresStore  # imports psycopg
    except ImportError as exc:
        if not (exc.name or "").startswith("psycopg"):
            raise
        raise ConfigurationError(
            "the PostgreSQL store needs psycopg 3, which is not installed:"
            ' pip install "scarguard[postgres]"'
        ) from exc
    # an agent must start while the database is down: its tools then fail open per call
    return PostgresStore(url, receipts=receipts, receipt_key=receipt_key, defer_connect=True)


_GITIGNORE = "# Created by scarguard: its failure memory stays out of version control.\n*\n"


def _private_folder(folder: Path) -> None:
    """Create the default store's folder (``0700``) with a ``.gitignore`` of its own.

    As ``.pytest_cache`` does: an agent's ``git add -A`` then never commits the memory
    (error texts, arguments). An existing folder keeps its mode; it gains the
    ``.gitignore`` if it has none. Failing to write either never stops the store opening.
    """
    with contextlib.suppress(OSError):
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True)
            os.chmod(folder, 0o700)  # mkdir's mode is filtered by the umask
        ignore = folder / ".gitignore"
        if not ignore.exists():
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(_GITIGNORE)


def _open_default(
    *, durable: bool, receipts: bool | None, receipt_key: bytes | str | None
) -> Store:
    target = default_path()
    keep = True if receipts is None else receipts
    _private_folder(target.parent)
    fallback = target.with_suffix(".json")
    if fallback.exists() and not target.exists():  # an earlier fallback: one memory, one place
        return JSONStore(fallback, receipts=keep, receipt_key=receipt_key)
    try:
        importlib.import_module("sqlite3")
        if _SQLite is None:
            raise ImportError("scarguard's SQLite store could not be imported")
    except ImportError as exc:
        reason = f"{type(exc).__name__}: {exc}"
    else:
        try:
            return _SQLite(target, durable=durable, receipts=keep, receipt_key=receipt_key)
        except SchemaVersionError:
            raise  # a newer scarguard's data: falling back would split the memory
        except StoreError as exc:
            if not target.is_file():  # nothing there to split from: it cannot be created
                reason = f"{type(exc).__name__}: {exc}"
                return _fallback(target, fallback, reason, keep, receipt_key)
            raise StoreError(
                f"{exc}. scarguard does not fall back to another file for a database it cannot"
                f" open (the memory would split): move {target} aside (for example to"
                f" {target.name}.broken) to start a fresh memory, or restore it from a backup",
                path=str(target),
            ) from exc
    return _fallback(target, fallback, reason, keep, receipt_key)


def _fallback(
    target: Path, fallback: Path, reason: str, keep: bool, receipt_key: bytes | str | None
) -> Store:
    message = (
        f"scarguard could not use the SQLite store {target} ({reason}); using the JSON store"
        f" {fallback} instead"
    )
    _log.warning(message)
    warn(message, StoreFallbackWarning, stacklevel=4, logged=True)
    return JSONStore(fallback, receipts=keep, receipt_key=receipt_key)
