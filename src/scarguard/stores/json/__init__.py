"""The JSON store (:class:`JSONStore`): the fallback when SQLite is unavailable (POSIX only).

Its modules: ``_store`` (the store's writes, its discipline described there), ``_reads`` (its
files read under the lock, reloaded, recovered; the contract's reads), ``_state`` (the file
layout: state file and journals), ``_tx`` (transactions on a copy of the state),
``_retention`` (purging failures, compacting receipts) and ``_locking`` (``flock`` locks
shared by threads). Atomic file replacement is in ``scarguard.stores._files``.
"""

from __future__ import annotations

from scarguard.stores.json._store import JSONStore

__all__ = ["JSONStore"]
