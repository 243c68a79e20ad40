"""The default observer: the local filesystem under the memory's root.

A token is ``os.stat`` data (kind, whether it may be run, size, ``mtime_ns``, inode) and, for
files up to :data:`HASH_LIMIT` bytes, a digest of their content. Comparing stat data costs
one system call per path; the digest is read only when the stat data differs, so a file
rewritten with the same content (``touch``, a checkout of the same version) is not a change,
and a change within the filesystem's timestamp granularity still is. A file made executable
(or no longer) is a change whatever its content: ``chmod +x`` can end a failure.

What is read is remembered, and trusted again only while the stat data says it still holds:
a file's digest while its stat data is the same, a directory's names while the directory's
stat data is (adding, removing or renaming an entry moves its ``mtime``), a small file's text
(:meth:`LocalObserver.read`) while its stat data and inode change time are. Only what had
settled when it was read is remembered (last modified :data:`SETTLED_NS` before): a file
rewritten within one timestamp tick of its last change keeps its stat data, and is read
again every time, as it would be without remembering.
"""

from __future__ import annotations

import hashlib
import operator
import os
import shutil
import stat
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

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
_TEXTS = 64
"""Texts of files (at most :data:`HASH_LIMIT` bytes each) remembered per observer."""


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
        # (x: a file anyone may run: chmod +x changes no mtime, and can end a failure)
        kind = "d" if stat.S_ISDIR(info.st_mode) else "x" if info.st_mode & 0o111 else "f"
        return f"{kind}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"

    def _digest(self, path: str, info: os.stat_result, head: str | None = None) -> str:
        if not stat.S_ISREG(info.st_mode) or info.st_size > HASH_LIMIT:
            return ""
        head = head or self._head(info)
        digests = self._seen.digests
        known = digests.get(path)
        if known is not None and known[0] == head:
            return known[1]
        data = _read_head(self._path(path), HASH_LIMIT)
        digest = hashlib.blake2b(data, digest_size=12).hexdigest()
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
        where = self._path(path)
        texts = self._seen.texts
        try:
            info = os.stat(where)
            key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_mode)
            known = texts.get(where)
            if known is not None and known[0] == key:
                return known[1]
            data = _read_head(where, READ_LIMIT)
        except OSError:
            return None
        if len(data) > READ_LIMIT:
            return None
        text = data.decode("utf-8", "replace")
        # remembered once settled, inode change included (a chmod or a rewrite moves it)
        settled = max(info.st_mtime_ns, info.st_ctime_ns) <= time.time_ns() - SETTLED_NS
        if settled and stat.S_ISREG(info.st_mode) and len(data) == info.st_size <= HASH_LIMIT:
            if len(texts) >= _TEXTS:
                texts.clear()
            texts[where] = (key, text)
        return text

    def names(self, folder: str) -> frozenset[str] | None:
        """Return the names in a folder (``None`` when it cannot be listed).

        Optional for observers: the configuration and data files beside what a failing
        command ran are found by listing its folder. Remembered while the folder's stat data
        holds.
        """
        return self._seen.names(self._path(folder))

    def port_held(self, port: int) -> bool | None:
        """Return whether a process on this machine listens on ``port`` (``None``: unknown).

        Optional for observers: a server refused for ``address already in use`` is allowed
        again once the port is free. Judged by binding it, as a server would (with
        ``SO_REUSEADDR``, so connections closing do not hold it), and closing at once.
        """
        import errno
        import socket

        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(("", port))
        except OSError as exc:
            return True if exc.errno == errno.EADDRINUSE else None
        return False

    def which(self, program: str) -> bool:
        """Return whether ``program`` is on ``PATH`` or is a file under the root.

        Optional for observers: a ``command not found`` ban holds while this is ``False``.
        """
        if os.sep in program or (os.altsep and os.altsep in program):
            return os.path.exists(self._path(program))
        return shutil.which(program) is not None or os.path.exists(self._path(program))

    def _judged(self, paths: Sequence[str]) -> _Judged:
        """Return which of ``paths`` the listings of their folders, read now, say are absent.

        Most paths a failure depends on do not exist (the manifests of other ecosystems, a
        missing file): one listing per directory answers for all of them, where a failed
        ``stat`` per path would cost a raised exception each.
        """
        seen = self._seen
        plan = seen.plan(paths, self)
        listings = tuple(map(seen.names, plan.wheres))
        judged = plan.judged  # one read: another thread may judge the plan meanwhile
        if judged is None or not all(map(operator.is_, judged.listings, listings)):
            judged = plan.judge(listings)  # a listing changed or was not remembered
        return judged

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        """Return the token of every path that can be read (missing ones as ``MISSING``)."""
        judged = self._judged(paths)
        tokens = judged.template.copy()  # every path in order, the absent ones MISSING
        digests = self._seen.digests
        for path, where in judged.candidates:
            try:
                info = os.stat(where)
            except (FileNotFoundError, NotADirectoryError):
                continue  # MISSING
            except OSError:
                del tokens[path]  # unreadable: no token, so no change will ever be seen for it
                continue
            head = self._head(info)
            known = digests.get(path)  # what _digest would answer first (the head has the kind)
            if known is not None and known[0] == head:
                tokens[path] = f"{head}:{known[1]}"
                continue
            try:
                tokens[path] = f"{head}:{self._digest(path, info, head)}"
            except OSError:
                del tokens[path]
        return tokens

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        """Return the paths whose state differs from ``tokens``."""
        judged = self._judged(list(tokens))
        absent, full = judged.absent, judged.full
        changed = []
        for path, old in tokens.items():
            try:
                info = None if path in absent else self._stat(full[path])
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
                # another kind (a file made executable is one) is a change, the same bytes
                # or not; otherwise only other bytes are
                if head[:1] != now[:1] or not digest or digest != self._digest(path, info, now):
                    changed.append(path)
            except OSError:
                continue  # unreadable now: not evidence of a change
        return changed


class _Judged(NamedTuple):
    """Which paths of a plan some listings say are absent."""

    listings: tuple[frozenset[str] | None, ...]
    """The listings judged by, one per listed folder (``None``: it could not be listed)."""
    absent: frozenset[str]
    template: dict[str, str]
    """Every path, in order, as ``MISSING`` (a copy is filled in with the tokens)."""
    candidates: tuple[tuple[str, str], ...]
    """The paths that may exist, in order, each with its absolute form."""
    full: Mapping[str, str]
    """Each path's absolute form."""


class _Plan:
    """Paths observed together: their folders, and which of them the listings say are absent.

    A failure's dependencies are the same paths again and again (the manifests of its
    command): the folders holding more than one of them are listed, and the judgement of
    their listings is kept for as long as the listings are the same objects (a remembered
    listing is returned only while its folder's stat data is unchanged; one not remembered
    is a new object every time, so the paths are judged again).
    """

    __slots__ = ("full", "judged", "names", "wheres")

    def __init__(self, observer: LocalObserver, paths: tuple[str, ...], seen: _Seen) -> None:
        parts = {path: seen.split(path) for path in paths}
        counts: dict[str, int] = {}
        for folder, _ in parts.values():
            counts[folder] = counts.get(folder, 0) + 1
        listed = [folder for folder, n in counts.items() if n > 1]
        self.wheres = tuple(observer._path(f) if f else observer.root for f in listed)
        index = {folder: i for i, folder in enumerate(listed)}
        # each path, the index of its folder's listing (-1: not listed) and its name
        self.names = tuple((path, index.get(f, -1), name) for path, (f, name) in parts.items())
        self.full = {path: observer._path(path) for path in paths}
        self.judged: _Judged | None = None

    def judge(self, listings: tuple[frozenset[str] | None, ...]) -> _Judged:
        """Judge which paths are absent by ``listings`` (one per listed folder), and keep it."""
        absent = set()
        for path, at, name in self.names:
            names = listings[at] if at >= 0 else None
            if names is not None and name not in names:
                absent.add(path)
        template = dict.fromkeys((path for path, _, _ in self.names), MISSING)
        candidates = tuple((p, self.full[p]) for p, _, _ in self.names if p not in absent)
        judged = _Judged(listings, frozenset(absent), template, candidates, self.full)
        self.judged = judged
        return judged


def _split(path: str) -> tuple[str, str]:
    """Return ``os.path.split(path)`` (inlined for POSIX: it runs for every path observed).

    Of the normalised path when its last part is ``.``, ``..`` or empty (``/repo/.``, the
    root a glob or a search looks in): the folder is then found in its parent's listing,
    not judged missing for a name no listing holds.
    """
    if os.altsep is not None or os.sep != "/":
        head, tail = os.path.split(path)
        return os.path.split(os.path.normpath(path)) if tail in ("", ".", "..") else (head, tail)
    cut = path.rfind("/") + 1
    head, tail = path[:cut], path[cut:]
    if tail in ("", ".", "..") and os.path.normpath(path) != path:
        return _split(os.path.normpath(path))
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


_CHUNK = 8192


def _read_head(where: str, limit: int) -> bytes:
    """Return a file's first ``limit + 1`` bytes, as ``open(where, "rb").read(limit + 1)`` does.

    Unbuffered, and without allocating ``limit + 1`` bytes for a small file (a megabyte,
    for a Makefile of a few lines): chunks as large as the file, to its end or the limit.
    """
    with open(where, "rb", buffering=0) as handle:
        left = limit + 1
        step = min(max(os.fstat(handle.fileno()).st_size + 1, _CHUNK), left)
        chunks = []
        while left > 0:
            chunk = handle.read(min(step, left))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _settled(info: os.stat_result) -> bool:
    """Return whether what was just read last changed :data:`SETTLED_NS` ago or more."""
    return info.st_mtime_ns <= time.time_ns() - SETTLED_NS


class _Seen:
    """What an observer read and may trust again while the stat data is unchanged."""

    __slots__ = ("digests", "listings", "parts", "plans", "texts")

    def __init__(self) -> None:
        self.digests: dict[str, tuple[str, str]] = {}  # path: (stat head, digest)
        self.texts: dict[str, tuple[tuple[int, ...], str]] = {}  # path: (stat data, text)
        self.listings: dict[str, tuple[tuple[int, int, int], frozenset[str]]] = {}
        self.parts: dict[str, tuple[str, str]] = {}  # path: (its folder, its name)
        self.plans: dict[tuple[str, ...], _Plan] = {}  # paths observed together

    def plan(self, paths: Sequence[str], observer: LocalObserver) -> _Plan:
        """Return the plan of ``paths`` (remembered per tuple of paths: they recur)."""
        key = tuple(paths)
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= _PLANS:
                self.plans.clear()
            plan = self.plans[key] = _Plan(observer, key, self)
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
