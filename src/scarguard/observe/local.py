"""The default observer: the local filesystem under the memory's root.

A token is ``os.stat`` data (kind, size, ``mtime_ns``, inode) and, for files up to
:data:`HASH_LIMIT` bytes, a digest of their content. Comparing stat data costs one system
call per path; the digest is read only when the stat data differs, so a file rewritten with
the same content (``touch``, a checkout of the same version) is not a change, and a change
within the filesystem's timestamp granularity still is.

What is read is remembered, and trusted again only while the stat data says it still holds:
a file's digest while its stat data is the same, a directory's names while the directory's
stat data is (adding, removing or renaming an entry moves its ``mtime``). Only what had
settled when it was read is remembered (last modified :data:`SETTLED_NS` before): a file
rewritten within one timestamp tick of its last change keeps its stat data, and is read
again every time, as it would be without remembering.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import time
from collections.abc import Mapping, Sequence

import attrs

from scarguard.observe.protocol import MISSING

__all__ = ["HASH_LIMIT", "READ_LIMIT", "SETTLED_NS", "LocalObserver"]

HASH_LIMIT = 64 * 1024
"""Files up to this size carry a digest of their content in their token."""
READ_LIMIT = 1024 * 1024
"""Files up to this size can be read to judge a condition (larger ones cannot: stale)."""
SETTLED_NS = 2_000_000_000
"""How long before a read a file or directory must have last changed for the read to be
remembered (nanoseconds): longer than any filesystem's timestamp tick (FAT's is 2 s), so a
later change always moves its ``mtime``."""
_REMEMBERED = 4096
"""Digests and directory listings remembered per observer (all forgotten when full)."""
_PLANS = 256
"""Sets of paths observed together whose layout is remembered, per observer."""


def _root(value: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.fspath(value))


@attrs.frozen
class LocalObserver:
    """Observe paths on the local filesystem, relative ones under ``root``.

    Args:
        root: The directory relative paths are resolved against (the agent's workspace).
    """

    root: str = attrs.field(converter=_root)
    _seen: _Seen = attrs.field(factory=lambda: _Seen(), init=False, eq=False, repr=False)

    def _path(self, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(self.root, path)

    def _stat(self, path: str) -> os.stat_result | None:
        try:
            return os.stat(self._path(path))
        except (FileNotFoundError, NotADirectoryError):
            return None

    @staticmethod
    def _head(info: os.stat_result) -> str:
        kind = "d" if stat.S_ISDIR(info.st_mode) else "f"
        return f"{kind}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"

    def _digest(self, path: str, info: os.stat_result, head: str | None = None) -> str:
        if not stat.S_ISREG(info.st_mode) or info.st_size > HASH_LIMIT:
            return ""
        head = head or self._head(info)
        digests = self._seen.digests
        known = digests.get(path)
        if known is not None and known[0] == head:
            return known[1]
        with open(self._path(path), "rb") as handle:
            digest = hashlib.blake2b(handle.read(HASH_LIMIT + 1), digest_size=12).hexdigest()
        if _settled(info):
            if len(digests) >= _REMEMBERED:
                digests.clear()
            digests[path] = (head, digest)
        return digest

    def token(self, path: str) -> str | None:
        """Return the token of one path (``None`` when it cannot be read)."""
        return self.observe([path]).get(path)

    def read(self, path: str) -> str | None:
        """Return a file's text (at most :data:`READ_LIMIT` bytes); ``None`` if unreadable.

        Optional for observers: conditions that name what a failure lacked (a Makefile
        target, an edit's search text) are judged on the content.
        """
        try:
            with open(self._path(path), "rb") as handle:
                data = handle.read(READ_LIMIT + 1)
        except OSError:
            return None
        return None if len(data) > READ_LIMIT else data.decode("utf-8", "replace")

    def which(self, program: str) -> bool:
        """Return whether ``program`` is on ``PATH`` or is a file under the root.

        Optional for observers: a ``command not found`` ban holds while this is ``False``.
        """
        if os.sep in program or (os.altsep and os.altsep in program):
            return os.path.exists(self._path(program))
        return shutil.which(program) is not None or os.path.exists(self._path(program))

    def _present(self, paths: Sequence[str]) -> _Listing:
        """Return a lookup telling, per directory listed once, which names exist.

        Most paths a failure depends on do not exist (the manifests of other ecosystems, a
        missing file): one listing per directory answers for all of them, where a failed
        ``stat`` per path would cost a raised exception each.
        """
        return _Listing(self, paths)

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        """Return the token of every path that can be read (missing ones as ``MISSING``)."""
        listing = self._present(paths)
        tokens = {}
        for path in paths:
            try:
                info = self._stat(path) if listing.may_exist(path) else None
                if info is None:
                    tokens[path] = MISSING
                else:
                    head = self._head(info)
                    tokens[path] = f"{head}:{self._digest(path, info, head)}"
            except OSError:
                continue  # unreadable: no token, so no change will ever be seen for it
        return tokens

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        """Return the paths whose state differs from ``tokens``."""
        listing = self._present(list(tokens))
        changed = []
        for path, old in tokens.items():
            try:
                info = self._stat(path) if listing.may_exist(path) else None
                if info is None:
                    if old != MISSING:
                        changed.append(path)
                    continue
                if old == MISSING:
                    changed.append(path)
                    continue
                head, _, digest = old.rpartition(":")
                now = self._head(info)
                if head == now:
                    continue
                if not digest or digest != self._digest(path, info, now):
                    changed.append(path)
            except OSError:
                continue  # unreadable now: not evidence of a change
        return changed


class _Listing:
    """The names in each directory of some paths, listed once per directory."""

    def __init__(self, observer: LocalObserver, paths: Sequence[str]) -> None:
        self._observer = observer
        self._names: dict[str, frozenset[str] | None] = {}
        self._parts, self._listed = observer._seen.plan(paths)

    def may_exist(self, path: str) -> bool:
        """Return ``False`` only when the path's directory was listed without it."""
        folder, name = self._parts.get(path) or _split(path)
        if folder not in self._listed:
            return True
        if folder not in self._names:
            where = self._observer._path(folder) if folder else self._observer.root
            self._names[folder] = self._observer._seen.names(where)
        names = self._names[folder]
        return names is None or name in names


def _split(path: str) -> tuple[str, str]:
    """Return ``os.path.split(path)`` (inlined for POSIX: it runs for every path observed)."""
    if os.altsep is not None or os.sep != "/":
        return os.path.split(path)
    cut = path.rfind("/") + 1
    head, tail = path[:cut], path[cut:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def _settled(info: os.stat_result) -> bool:
    """Return whether what was just read last changed :data:`SETTLED_NS` ago or more."""
    return info.st_mtime_ns <= time.time_ns() - SETTLED_NS


class _Seen:
    """What an observer read and may trust again while the stat data is unchanged."""

    __slots__ = ("digests", "listings", "parts", "plans")

    def __init__(self) -> None:
        self.digests: dict[str, tuple[str, str]] = {}  # path: (stat head, digest)
        self.listings: dict[str, tuple[tuple[int, int, int], frozenset[str]]] = {}
        self.parts: dict[str, tuple[str, str]] = {}  # path: (its folder, its name)
        # paths observed together: (each one's folder and name, the folders worth listing)
        self.plans: dict[tuple[str, ...], tuple[dict[str, tuple[str, str]], set[str]]] = {}

    def plan(self, paths: Sequence[str]) -> tuple[dict[str, tuple[str, str]], set[str]]:
        """Return each path's folder and name, and the folders holding more than one of them.

        A failure's dependencies are the same paths again and again (the manifests of its
        command): the answer is remembered per tuple of paths.
        """
        key = tuple(paths)
        plan = self.plans.get(key)
        if plan is None:
            parts = {path: self.split(path) for path in key}
            counts: dict[str, int] = {}
            for folder, _ in parts.values():
                counts[folder] = counts.get(folder, 0) + 1
            plan = (parts, {folder for folder, n in counts.items() if n > 1})
            if len(self.plans) >= _PLANS:
                self.plans.clear()
            self.plans[key] = plan
        return plan

    def split(self, path: str) -> tuple[str, str]:
        """Return ``os.path.split(path)`` (the same paths are observed again and again)."""
        parts = self.parts.get(path)
        if parts is None:
            if len(self.parts) >= _REMEMBERED:
                self.parts.clear()
            parts = self.parts[path] = _split(path)
        return parts

    def names(self, folder: str) -> frozenset[str] | None:
        """Return the names in ``folder`` (``None`` when it cannot be listed)."""
        try:
            info = os.stat(folder)
            key = (info.st_mtime_ns, info.st_ino, info.st_size)
            known = self.listings.get(folder)
            if known is not None and known[0] == key:
                return known[1]
            names = frozenset(os.listdir(folder))
        except OSError:
            return None
        if _settled(info):
            if len(self.listings) >= _REMEMBERED:
                self.listings.clear()
            self.listings[folder] = (key, names)
        return names
