"""The JSON store's files: a small state document and two append-only journals.

* ``<path>`` (the state): counters and constraints of every tenant, the next failure id,
  the receipt chain's head, an epoch bumped by ``wipe()``, and the *committed* length of
  each journal. It is rewritten atomically (temp file, fsync, ``os.replace``, fsync of the
  folder), and that rename is the commit point of a transaction.
* ``<stem>.failures.jsonl``: one failure per line (plus ``clear`` markers), append-only.
* ``<stem>.receipts.jsonl``: one receipt per line, append-only.

Bytes of a journal beyond its committed length belong to a transaction that never
committed (a writer killed between appending and renaming, or a torn last line): readers
ignore them and the next writer truncates them away. So an acknowledged record is always
there, and an unacknowledged one never half-appears.
"""

from __future__ import annotations

import datetime
import glob
import itertools
import json
import os
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from scarguard.model import Constraint, Failure
from scarguard.receipts import Receipt
from scarguard.stores._files import fsync_dir
from scarguard.stores.protocol import CounterValue

__all__ = [
    "FORMAT",
    "MARKER",
    "State",
    "TenantState",
    "dump_state",
    "parse_state",
    "quarantine",
    "read_lines",
    "rebuild",
    "sweep_temps",
]

FORMAT = 1
"""The state format this scarguard writes; a higher one is refused."""
MARKER = "scarguard-json-store"
"""The value of the state's ``"scarguard"`` key, so a foreign JSON file is never taken."""
HEAD = b'{"scarguard":"' + MARKER.encode() + b'"'
"""How every state document this store writes begins (``dump_state`` puts the marker first)."""

Tenant = tuple[str, str]


@attrs.define
class TenantState:
    """One tenant's counters and constraints (constraints in insertion order)."""

    counters: dict[str, CounterValue] = attrs.field(factory=dict)
    constraints: dict[str, Constraint] = attrs.field(factory=dict)

    def copy(self) -> TenantState:
        """Return a copy a transaction may change freely."""
        return TenantState(dict(self.counters), dict(self.constraints))


@attrs.define
class State:
    """Everything the state document holds."""

    next_id: int = 1
    epoch: int = 0
    failures_bytes: int = 0
    receipts_bytes: int = 0
    receipt_seq: int = 0
    receipt_head: str | None = None
    tenants: dict[Tenant, TenantState] = attrs.field(factory=dict)
    damage: tuple[str, ...] = ()
    """What was found damaged and not yet acknowledged (verification fails until then)."""

    def evolve(self, **changes: Any) -> State:
        """Return a shallow copy with ``changes``."""
        return attrs.evolve(self, **changes)


class CorruptState(ValueError):
    """The state document cannot be read (quarantined by the store)."""


class NewerFormat(ValueError):
    """The state document was written by a newer scarguard."""

    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found


class ForeignFile(ValueError):
    """The file is valid JSON but not a scarguard state document."""


def parse_state(data: bytes) -> State:
    """Parse a state document.

    Raises:
        CorruptState: It is not valid JSON or its fields are malformed.
        NewerFormat: It was written by a newer scarguard.
        ForeignFile: It is JSON, but not ours.
    """
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise CorruptState(f"not valid JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("scarguard") != MARKER:
        raise ForeignFile("not a scarguard JSON store")
    try:
        if int(doc["format"]) > FORMAT:
            raise NewerFormat(int(doc["format"]))
        tenants = {}
        for entry in doc["tenants"]:
            counters = {str(k): CounterValue(int(c), v) for k, (c, v) in entry["counters"].items()}
            constraints = [Constraint.from_row(row) for row in entry["constraints"]]
            tenants[(str(entry["workspace"]), str(entry["project"]))] = TenantState(
                counters, {c.key: c for c in constraints}
            )
        head = doc["receipts"]
        return State(
            next_id=int(doc["next_id"]),
            epoch=int(doc["epoch"]),
            failures_bytes=int(doc["failures_bytes"]),
            receipts_bytes=int(doc["receipts_bytes"]),
            receipt_seq=int(head["seq"]),
            receipt_head=None if head["head"] is None else str(head["head"]),
            tenants=tenants,
            damage=tuple(str(d) for d in doc.get("damage", ())),
        )
    except NewerFormat:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CorruptState(f"malformed state ({exc!r})") from exc


def dump_state(state: State) -> bytes:
    """Serialise ``state`` (tenants without records are left out)."""
    tenants = [
        {
            "workspace": workspace,
            "project": project,
            "counters": {k: [v.count, v.last_at] for k, v in data.counters.items()},
            "constraints": [c.to_row() for c in data.constraints.values()],
        }
        for (workspace, project), data in state.tenants.items()
        if data.counters or data.constraints
    ]
    doc = {
        "scarguard": MARKER,
        "format": FORMAT,
        "next_id": state.next_id,
        "epoch": state.epoch,
        "failures_bytes": state.failures_bytes,
        "receipts_bytes": state.receipts_bytes,
        "receipts": {"seq": state.receipt_seq, "head": state.receipt_head},
        "tenants": tenants,
    }
    if state.damage:
        doc["damage"] = list(state.damage)
    return json.dumps(doc, separators=(",", ":")).encode()


def failure_line(tenant: Tenant, failure: Failure) -> bytes:
    """Return the journal line of a stored failure."""
    row = {"workspace": tenant[0], "project": tenant[1], **failure.to_row()}
    return json.dumps(row, separators=(",", ":")).encode() + b"\n"


def clear_line(tenant: Tenant) -> bytes:
    """Return the journal line that forgets a tenant's earlier failures."""
    return json.dumps({"clear": list(tenant)}, separators=(",", ":")).encode() + b"\n"


def wiped_line(next_id: int) -> bytes:
    """Return the line an emptied journal starts with: the next id, so ids are never reused."""
    return json.dumps({"wiped": next_id}, separators=(",", ":")).encode() + b"\n"


def receipt_line(receipt: Receipt) -> bytes:
    """Return the journal line of a receipt."""
    return json.dumps(receipt.to_row(), separators=(",", ":")).encode() + b"\n"


def read_lines(data: bytes, start: int = 0) -> Iterator[tuple[int, Mapping[str, Any] | None]]:
    """Yield ``(end offset, record)`` for each complete line; ``None`` for an unreadable one.

    A last line without its newline (torn by a crash) is not yielded.
    """
    offset = start
    while True:
        end = data.find(b"\n", offset)
        if end < 0:
            return
        try:
            record = json.loads(data[offset:end])
        except (UnicodeDecodeError, ValueError):
            record = None
        yield end + 1, record if isinstance(record, dict) else None
        offset = end + 1


def rebuild(failures: bytes, receipts: bytes, *, epoch: int) -> State:
    """Rebuild a state from the journals alone (the state file is missing or corrupt).

    Failures, the next id and the receipt chain survive; counters and constraints are
    relearned by the engine. A torn last line is left out of the committed length.
    """
    state = State(epoch=epoch)
    for end, record in read_lines(failures):
        if record is not None:
            state.failures_bytes = end
            if isinstance(record.get("id"), int):
                state.next_id = max(state.next_id, record["id"] + 1)
            elif isinstance(record.get("wiped"), int):
                state.next_id = max(state.next_id, record["wiped"])
    for end, record in read_lines(receipts):
        try:
            seq, head = int(record["seq"]), str(record["hash"])  # type: ignore[index]
        except (KeyError, TypeError, ValueError):
            break
        state.receipts_bytes, state.receipt_seq, state.receipt_head = end, seq, head
    return state


def sweep_temps(path: str, *, now: float, stale_after: float) -> int:
    """Remove ``<path>.*tmp-<pid>-*`` files of dead processes or older than ``stale_after``."""
    removed = 0
    for tmp in glob.glob(glob.escape(path) + ".*tmp-*"):
        try:
            pid = int(tmp.rsplit(".tmp-", 1)[1].split("-")[0])
            if now - os.stat(tmp).st_mtime > stale_after or not _alive(pid):
                os.unlink(tmp)
                removed += 1
        except (ValueError, IndexError, OSError):
            continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return True


def quarantine(path: str, *, now: float) -> str:
    """Move ``path`` aside to ``<path>.corrupt-<UTC time>`` (never over another); return it."""
    stamp = datetime.datetime.fromtimestamp(now, datetime.timezone.utc)
    base = f"{path}.corrupt-{stamp.strftime('%Y%m%dT%H%M%S%fZ')}"
    aside = base
    for n in itertools.count(1):
        if not os.path.exists(aside):
            break
        aside = f"{base}-{n}"
    os.replace(path, aside)
    fsync_dir(os.path.dirname(path))
    return aside
