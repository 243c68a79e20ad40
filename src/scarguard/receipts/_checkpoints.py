"""The checkpoint of a verified head: its MAC, and a file beside the store holding it."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from typing import Any, Protocol

import attrs

from scarguard.receipts._chain import VerifyReport, _key


def checkpoint_mac(seq: int, head: str, key: bytes | str | None = None) -> str | None:
    """Return the HMAC of a ``(seq, hash)`` checkpoint, or ``None`` without a key.

    With a key, a checkpoint without this MAC (or with a wrong one) is refused, so cutting
    the end off the chain and rewriting the checkpoint to match needs the key too.
    """
    secret = _key(key)
    if secret is None:
        return None
    return hmac.new(secret, f"checkpoint:{seq}:{head}".encode(), hashlib.sha256).hexdigest()


def check_checkpoint(
    seq: int, head: str, mac: object, key: bytes | str | None, where: str
) -> tuple[int, str]:
    """Return ``(seq, head)`` if its MAC is right (or no key is set).

    Raises:
        ValueError: A key is set and the MAC is missing or wrong.
    """
    expected = checkpoint_mac(seq, head, key)
    if expected is not None and not (isinstance(mac, str) and hmac.compare_digest(mac, expected)):
        raise ValueError(
            f"the checkpoint {where} has no valid MAC for the receipt key (written without"
            " the key, or forged)"
        )
    return seq, head


def load_checkpoint(path: str, key: bytes | str | None = None) -> tuple[int, str] | None:
    """Return the ``(seq, hash)`` checkpoint stored at ``path``, or ``None`` if there is none.

    Raises:
        ValueError: The file exists but cannot be read as a checkpoint, or (with a key) its
            MAC is missing or wrong. A damaged checkpoint must not pass for a missing one: a
            truncated chain would then verify.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        seq, head = int(data["seq"]), str(data["hash"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the checkpoint {path} is damaged ({type(exc).__name__})") from exc
    return check_checkpoint(seq, head, data.get("mac"), key, path)


def save_checkpoint(path: str, seq: int, head: str, key: bytes | str | None = None) -> str:
    """Write the checkpoint as :func:`write_checkpoint` does; return what went wrong, if anything.

    A checkpoint that cannot be written (a full disk, a read-only folder) never makes a
    valid chain fail: the chain was checked; only the next truncation check is weaker. The
    returned text (empty when saved) says so, for the report.
    """
    try:
        write_checkpoint(path, seq, head, key)
    except OSError as exc:
        return f"the checkpoint {path} could not be saved ({exc.strerror or exc})"
    return ""


def damaged_checkpoint(problem: ValueError) -> VerifyReport:
    """Return the report for a chain whose checkpoint cannot be read."""
    return VerifyReport(
        False,
        0,
        None,
        f"{problem}: truncation cannot be ruled out; restore the file, or delete it to accept"
        " the current head",
    )


def write_checkpoint(path: str, seq: int, head: str, key: bytes | str | None = None) -> None:
    """Atomically write a ``(seq, hash)`` checkpoint to ``path`` (with its MAC, given a key).

    The temporary file is unique per process and thread, so concurrent writers never
    share one; it is removed if anything fails before the rename.
    """
    tmp = f"{path}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    record: dict[str, Any] = {"seq": seq, "hash": head}
    mac = checkpoint_mac(seq, head, key)
    if mac is not None:
        record["mac"] = mac
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
            json.dump(record, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class Checkpoints(Protocol):
    """Where a store keeps the checkpoint of its verified head."""

    def load(self) -> tuple[int, str] | None:
        """Return the ``(seq, hash)`` saved, or ``None``; ``ValueError`` when damaged."""

    def save(self, seq: int, head: str) -> str:
        """Save ``(seq, head)``; return why it could not be saved (empty when it was)."""


@attrs.frozen
class FileCheckpoint:
    """The checkpoint in a file beside the store (``<path>.head``), with its MAC given a key."""

    path: str
    key: bytes | str | None = None

    def load(self) -> tuple[int, str] | None:
        """Return the saved ``(seq, hash)`` (see :func:`load_checkpoint`)."""
        return load_checkpoint(self.path, self.key)

    def save(self, seq: int, head: str) -> str:
        """Write it atomically (see :func:`save_checkpoint`)."""
        return save_checkpoint(self.path, seq, head, self.key)
