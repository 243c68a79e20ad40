"""Drive a memory as a model would: one failure per turn of a fake clock; async tools awaited."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from scarguard import FailureMemory, RecordResult
from scarguard.testing import FakeClock

EDIT = {"path": "app.py", "old_string": "def main(", "new_string": "def run("}
MAKE_FAILED = "cc1: error: unknown option\nmake: *** [Makefile:12: build] Error 1"


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
