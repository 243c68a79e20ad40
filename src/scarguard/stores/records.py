"""The one export format shared by every store: JSON lines of typed records.

``export()`` of any store followed by ``import_()`` into any other gives the same history,
so a tenant can move from JSON to SQLite to PostgreSQL without loss.

Format 2 (this one) writes plain JSON values: a failure's ``args`` is an object and its
``targets`` a list, a constraint's ``params`` an object. Format 1 carried them as JSON text
inside the JSON; it still imports. Import is a merge that can be repeated: a failure already
stored is skipped, a counter takes the larger of its stored and imported values, and a
constraint replaces the stored one only when it has more occurrences. Importing one export
twice therefore leaves the tenant as importing it once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Protocol

from scarguard.canonical import storable_text
from scarguard.errors import StoreError
from scarguard.model import Constraint, Failure
from scarguard.stores.protocol import CounterValue, Transaction, failure_identity

__all__ = ["FORMAT_VERSION", "ImportTransaction", "export_records", "import_records"]

FORMAT_VERSION = 2
"""The version :func:`export_records` writes in its header; every older one still imports."""


def export_records(
    failures: Iterable[Failure],
    counters: Mapping[str, CounterValue],
    constraints: Iterable[Constraint],
) -> Iterator[dict[str, Any]]:
    """Yield a header, then failures (oldest first), counters and constraints as records."""
    from scarguard._version import __version__

    yield {"record": "header", "format": FORMAT_VERSION, "scarguard": __version__}
    for failure in sorted(failures, key=lambda f: (f.at, f.id or 0)):
        row = failure.to_row()
        row.pop("id", None)
        row.update(args=json.loads(row["args"]), targets=json.loads(row["targets"]))
        yield {"record": "failure", **row}
    for key in sorted(counters):
        value = counters[key]
        yield {"record": "counter", "key": key, "count": value.count, "last_at": value.last_at}
    for constraint in sorted(constraints, key=lambda c: (c.created_at, c.key)):
        row = constraint.to_row()
        row["params"] = json.loads(row["params"])
        yield {"record": "constraint", **row}


class ImportTransaction(Transaction, Protocol):
    """A transaction that can also tell which failures its tenant already holds."""

    def failure_identities(self, since: float, until: float) -> set[tuple[Any, ...]]:
        """Return the :func:`failure_identity` of each tenant failure recorded in a time range.

        Import asks for it to skip failures already stored, so that importing one export
        twice leaves the tenant as importing it once.

        Args:
            since: The earliest ``at``, inclusive.
            until: The latest ``at``, inclusive.
        """
        ...


def _finite(value: Any) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def _whole(value: Any) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"{value!r} is not a whole number")
    return int(value)


def import_records(tx: ImportTransaction, records: Iterable[Mapping[str, Any]]) -> int:
    """Merge exported records into ``tx``'s tenant; return how many changed it.

    A failure already stored (same time, session, tool, fingerprint and failure kind) is
    skipped; a counter is raised to the imported value when that is larger; a constraint
    replaces a stored one with the same key only when it has more occurrences. So the merge
    can be repeated, and counts never exceed what either side saw.

    Raises:
        StoreError: A record is malformed or of a newer format; nothing of the batch is kept
            when the caller's transaction rolls back.
    """
    records = list(records)
    seen = _stored_identities(tx, records)
    applied = 0
    for number, record in enumerate(records, start=1):
        kind = record.get("record")
        body = {k: v for k, v in record.items() if k != "record"}
        try:
            if kind == "header":
                if int(body.get("format", 0)) > FORMAT_VERSION:
                    raise StoreError(
                        f"record {number}: export format {body.get('format')} is newer than"
                        f" this scarguard reads ({FORMAT_VERSION})"
                    )
                continue
            if kind == "failure":
                failure = Failure.from_row(body)
                if failure_identity(failure) in seen:
                    continue
                tx.add_failure(failure)
                seen.add(failure_identity(failure))
            elif kind == "counter":
                key, count = storable_text(str(body["key"])), _whole(body["count"])
                last_at = _finite(body["last_at"])
                stored = tx.count(key)
                if count <= stored:
                    continue
                tx.bump(key, last_at, count - stored)
            elif kind == "constraint":
                incoming = Constraint.from_row(body)
                existing = tx.constraint(incoming.key)
                if existing is not None and existing.occurrences >= incoming.occurrences:
                    continue
                tx.put_constraint(incoming)
            else:
                raise StoreError(f"record {number}: unknown record type {kind!r}")
        except StoreError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(f"record {number}: malformed {kind} record ({exc})") from exc
        applied += 1
    return applied


def _stored_identities(
    tx: ImportTransaction, records: list[Mapping[str, Any]]
) -> set[tuple[Any, ...]]:
    """Return the identities of stored failures in the time span of the imported ones."""
    times = []
    for record in records:
        if record.get("record") == "failure":
            try:
                times.append(_finite(record["at"]))
            except (KeyError, TypeError, ValueError):
                continue  # reported as a malformed record when it is applied
    return tx.failure_identities(min(times), max(times)) if times else set()
