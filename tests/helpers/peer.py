"""Another process on the same memory file, driven one statement at a time.

:class:`Peer` starts ``python peer.py PATH`` and sends it Python statements, one JSON line
each; the child runs each in one namespace holding ``m`` (a ``FailureMemory`` on ``PATH``,
opened at start), ``sqlite3``, ``os`` and ``path``, and answers with the ``repr`` of the
name ``result`` (``None`` when unset) or ``ERROR <traceback>``. So a test can make another
process checkpoint the WAL, record a failure or lift a ban exactly when it wants, and
knows the statement committed when the answer comes back. ``m`` is closed at ``quit``.

A memory in this process trusts its change token for ``FRESH_FOR`` (1 ms) without reading
the WAL-index header; the peer answers faster than that. Tests of what the next check sees
after the peer's statement use the ``header_read_at_every_check`` fixture (conftest): the
check then reads the header as it does once the bound has passed.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import traceback
from pathlib import Path
from types import TracebackType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_SCRIPT = Path(__file__).resolve()


class Peer:
    """A child process holding a ``FailureMemory`` on ``path`` (see the module's notes).

    Args:
        path: The memory's file.
        opened: Open ``m`` at start (``False``: ``m`` is ``None`` until a statement opens it).
    """

    def __init__(self, path: str | Path, *, opened: bool = True) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(_SCRIPT), str(path), "1" if opened else "0"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._answer() == "READY"

    def _answer(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"peer ended (status {self.process.wait()})")
        return str(json.loads(line))

    def run(self, code: str) -> str:
        """Run ``code`` in the child; return ``repr(result)``; raise what it raised."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(code) + "\n")
        self.process.stdin.flush()
        answer = self._answer()
        if answer.startswith("ERROR "):
            raise AssertionError(f"peer failed: {answer[6:]}")
        return answer

    def close(self) -> None:
        """Close the child's memory and wait for it to end."""
        if self.process.poll() is None:
            with contextlib.suppress(AssertionError, RuntimeError, BrokenPipeError):
                self.run("quit")
            self.process.wait(timeout=30)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def main() -> int:
    import os
    import sqlite3

    from scarguard import FailureMemory

    path = sys.argv[1]
    memory = FailureMemory(path) if sys.argv[2] == "1" else None
    space: dict[str, object] = {"m": memory, "sqlite3": sqlite3, "os": os, "path": path}
    print(json.dumps("READY"), flush=True)
    for line in sys.stdin:
        code = json.loads(line)
        if code == "quit":
            held = space.get("m")
            if held is not None:
                held.close()  # type: ignore[attr-defined]
            print(json.dumps("BYE"), flush=True)
            return 0
        space["result"] = None
        try:
            exec(code, space)
            answer = repr(space["result"])
        except Exception:
            answer = "ERROR " + traceback.format_exc()
        print(json.dumps(answer), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
