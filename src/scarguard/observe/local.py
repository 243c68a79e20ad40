"""The default observer: the local filesystem under the memory's root.

A token is ``os.stat`` data (kind, size, ``mtime_ns``, inode) and, for files up to
:data:`HASH_LIMIT` bytes, a digest of their content. Comparing stat data costs one system
call per path; the digest is read only when the stat data differs, so a file rewritten with
the same content (``touch``, a checkout of the same version) is not a change, and a change
within the filesystem's timestamp granularity still is.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Mapping, Sequence

import attrs

from scarguard.observe.protocol import MISSING

__all__ = ["HASH_LIMIT", "READ_LIMIT", "LocalObserver"]

HASH_LIMIT = 64 * 1024
"""Files up to this size carry a digest of their content in their token."""
READ_LIMIT = 1024 * 1024
"""Files up to this size can be read to judge a condition (larger ones cannot: stale)."""


def _root(value: str | os.PathLike[str]) -> str:
    return os.path.abspath(os.fspath(value))


@attrs.frozen
class LocalObserver:
    """Observe paths on the local filesystem, relative ones under ``root``.

    Args:
        root: The directory relative paths are resolved against (the agent's workspace).
    """

    root: str = attrs.field(converter=_root)

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

    def _digest(self, path: str, info: os.stat_result) -> str:
        if not stat.S_ISREG(info.st_mode) or info.st_size > HASH_LIMIT:
            return ""
        with open(self._path(path), "rb") as handle:
            return hashlib.blake2b(handle.read(HASH_LIMIT + 1), digest_size=12).hexdigest()

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
                tokens[path] = (
                    MISSING if info is None else f"{self._head(info)}:{self._digest(path, info)}"
                )
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
                if head == self._head(info):
                    continue
                if not digest or digest != self._digest(path, info):
                    changed.append(path)
            except OSError:
                continue  # unreadable now: not evidence of a change
        return changed


class _Listing:
    """The names in each directory of some paths, listed once per directory."""

    def __init__(self, observer: LocalObserver, paths: Sequence[str]) -> None:
        self._observer = observer
        self._names: dict[str, frozenset[str] | None] = {}
        counts: dict[str, int] = {}
        for path in paths:
            folder = os.path.dirname(path)
            counts[folder] = counts.get(folder, 0) + 1
        self._listed = {folder for folder, n in counts.items() if n > 1}

    def may_exist(self, path: str) -> bool:
        """Return ``False`` only when the path's directory was listed without it."""
        folder, name = os.path.split(path)
        if folder not in self._listed:
            return True
        if folder not in self._names:
            try:
                where = self._observer._path(folder) if folder else self._observer.root
                self._names[folder] = frozenset(os.listdir(where))
            except OSError:
                self._names[folder] = None
        names = self._names[folder]
        return names is None or name in names
