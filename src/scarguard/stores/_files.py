"""File helpers shared by the persistent stores: atomic replacement and key ranges.

A file that other processes read is never written in place: the new content goes to a
temporary file in the same folder (so the rename cannot cross file systems), is flushed to
disk, renamed over the old file with :func:`os.replace` (atomic on POSIX), and the folder is
flushed so that the rename itself survives a power cut. A reader therefore sees the old
file or the new one, never half of either.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from typing import IO

__all__ = [
    "ShortFile",
    "append_committed",
    "atomic_write",
    "fsync_dir",
    "open_private",
    "prefix_end",
    "temp_name",
]

_LAST_CHAR = "\U0010ffff"


def open_private(path: str, mode: str) -> IO[bytes]:
    """Open ``path`` for writing (``"wb"`` or ``"ab"``), creating it readable by its owner only.

    Failures hold error texts and arguments: a file scarguard creates is ``0600``.
    """
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    flags |= getattr(os, "O_BINARY", 0)
    handle: IO[bytes] = os.fdopen(os.open(path, flags, 0o600), mode)
    return handle


def temp_name(path: str) -> str:
    """Return a fresh temporary name beside ``path``: ``<path>.tmp-<pid>-<random>``."""
    return f"{path}.tmp-{os.getpid()}-{secrets.token_hex(4)}"


def fsync_dir(folder: str) -> None:
    """Flush a folder's entries (renames, creations) to disk, where the platform allows."""
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms that cannot open folders (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - file systems that refuse to fsync folders
        pass
    finally:
        os.close(fd)


def atomic_write(path: str, data: bytes, *, mtime_ns: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Args:
        path: The file to replace.
        data: Its new content.
        mtime_ns: A modification time to give the new file (the JSON store makes it
            strictly increase, so that a stat of the file tells every commit apart).

    The temporary file is removed if anything fails before the rename, without masking the
    error in flight.
    """
    tmp = temp_name(path)
    try:
        with open_private(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mtime_ns is not None:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(os.path.dirname(path))


class ShortFile(ValueError):
    """A journal holds fewer bytes than were committed to it (cut off, or an older copy)."""

    def __init__(self, path: str, found: int, committed: int) -> None:
        super().__init__(f"{path} holds {found} bytes, {committed - found} fewer than committed")
        self.found = found
        self.committed = committed


def append_committed(path: str, committed: int, data: bytes, *, short_ok: bool = False) -> int:
    """Cut ``path`` back to ``committed`` bytes, append ``data``, flush; return the new length.

    Bytes past ``committed`` are a torn line or a transaction that never committed. A file
    shorter than ``committed`` lost committed bytes: :class:`ShortFile` is raised, unless
    ``short_ok``; then ``data`` goes after what is left, on a fresh line (never after a run
    of zero bytes, which is what extending the file would give).
    """
    with open_private(path, "ab") as handle:
        found = handle.tell()
        if found < committed:
            if not short_ok:
                raise ShortFile(path, found, committed)
            committed = found
            if found:
                with open(path, "rb") as reader:
                    reader.seek(found - 1)
                    if reader.read(1) != b"\n":
                        data = b"\n" + data
        elif found != committed:
            handle.truncate(committed)
        if data:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    return committed + len(data)


def prefix_end(prefix: str) -> str | None:
    """Return the smallest string greater than every string that starts with ``prefix``.

    ``key >= prefix AND key < prefix_end(prefix)`` selects exactly the keys starting with
    ``prefix`` (an index range, unlike ``LIKE``, which also treats ``%`` and ``_`` as
    wildcards). ``None`` means there is no upper bound (an empty prefix, or one made only
    of the last code point). SQLite compares UTF-8 bytes, whose order is code point order.
    """
    head = prefix.rstrip(_LAST_CHAR)
    if not head:
        return None
    following = ord(head[-1]) + 1
    if 0xD800 <= following <= 0xDFFF:  # surrogates cannot be encoded: skip the block
        following = 0xE000
    return head[:-1] + chr(following)
