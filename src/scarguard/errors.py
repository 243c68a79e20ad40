"""Exceptions and warnings raised by scarguard.

The tree::

    ScarguardError                 every error scarguard raises on its own account
    ├── ConfigurationError         a bad policy, adapter, path or option (also a ValueError)
    ├── StoreError                 the store cannot be opened, read or written
    │   └── SchemaVersionError     the store was written by a newer scarguard; left untouched
    └── ToolBlocked                a guarded call was refused; carries ``.decision``

    ScarguardWarning               bookkeeping trouble that never breaks a tool call
    ├── StoreFallbackWarning       the default SQLite store was unavailable; JSON is used
    └── StoreCorruptionWarning     a corrupt store file was moved aside and rebuilt

A tool's own exception is never wrapped in any of these: it reaches the caller unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scarguard.model import Decision

__all__ = [
    "ConfigurationError",
    "ScarguardError",
    "ScarguardWarning",
    "SchemaVersionError",
    "StoreCorruptionWarning",
    "StoreError",
    "StoreFallbackWarning",
    "ToolBlocked",
]


class ScarguardError(Exception):
    """Root of every exception scarguard raises on its own account."""


class ConfigurationError(ScarguardError, ValueError):
    """A policy value, option or path is invalid; raised at construction, before any work."""


class StoreError(ScarguardError):
    """The store cannot be opened, read or written.

    Attributes:
        path: The file or URL of the store, when there is one.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class SchemaVersionError(StoreError):
    """The store was written by a newer scarguard; it is left untouched."""


class ToolBlocked(ScarguardError):
    """A guarded tool call was refused because it is known to fail again.

    ``str(exc)`` is the message written for the LLM: what was refused, why, and what to do
    instead. It never contains raw error text.

    Attributes:
        decision: The :class:`~scarguard.Decision` that refused the call.
    """

    def __init__(self, decision: Decision) -> None:
        super().__init__(decision.message)
        self.decision = decision

    def __reduce__(self) -> tuple[type[ToolBlocked], tuple[Decision]]:
        return (type(self), (self.decision,))


class ScarguardWarning(UserWarning):
    """Bookkeeping trouble (a store hiccup, a skipped record) that never breaks a tool call."""


class StoreFallbackWarning(ScarguardWarning):
    """The default SQLite store could not be used, so the JSON store took its place."""


class StoreCorruptionWarning(ScarguardWarning):
    """A store file could not be read; it was moved aside (never overwritten) and rebuilt."""
