"""Drive a memory as a model would: one failure per turn of a fake clock; async tools awaited.

``memory_in(root)`` is a memory watching a workspace on disk (the world-lift tests).
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

from scarguard import FailureMemory, RecordResult
from scarguard.testing import FakeClock

EDIT = {"path": "app.py", "old_string": "def main(", "new_string": "def run("}
MAKE_FAILED = "cc1: error: unknown option\nmake: *** [Makefile:12: build] Error 1"


def memory_in(root: Path, clock: FakeClock | None = None, **options: object) -> FailureMemory:
    """An in-memory memory whose workspace is ``root``, on ``clock`` (else a new FakeClock)."""
    return FailureMemory(":memory:", root=root, clock=clock or FakeClock(), **options)  # type: ignore[arg-type]


def fail(
    memory: FailureMemory, tool: str, args: dict[str, object], error: str, **kw: object
) -> RecordResult:
    """Record a failure, advancing the fake clock by one model turn first."""
    clock = memory.clock
    assert isinstance(clock, FakeClock)
    clock.advance(5)
    return memory.record(tool, args, error=error, **kw)  # type: ignore[arg-type]


def run(value: Any) -> Any:
    """Await ``value`` if it is awaitable (async tools), else return it."""
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return asyncio.run(wait())
    return value
