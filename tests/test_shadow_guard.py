"""Shadow mode through the guard step: ``guarded_tool(enforce=False)``, sync and async."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scarguard import FailureMemory, ToolBlocked, guarded_tool

MISSING = "No such file or directory: '{}'"


class World:
    """Files in a dictionary (nothing on disk that scarguard could observe)."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.runs = 0

    def read(self, path: str) -> str:
        self.runs += 1
        if path not in self.files:
            raise FileNotFoundError(MISSING.format(path))
        return self.files[path]


SCRIPT = ["notes.md", "notes.md", "notes.md", "GENERATE", "notes.md", "other.md", "other.md"]


def _tools(memory: FailureMemory, world: World, **options: Any) -> tuple[Any, Any]:
    @guarded_tool(memory, name="read_file", on_block="return", **options)
    def read_file(path: str) -> str:
        return world.read(path)

    @guarded_tool(memory, name="read_file", on_block="return", **options)
    async def read_file_async(path: str) -> str:
        return world.read(path)

    return read_file, read_file_async


def _play(tool: Callable[[str], Any], world: World) -> None:
    for step in SCRIPT:
        if step == "GENERATE":
            world.files["notes.md"] = "made by a generator"
            continue
        try:
            result = tool(step)
        except FileNotFoundError:
            continue
        if asyncio.iscoroutine(result):
            try:
                asyncio.run(result)
            except FileNotFoundError:
                continue


@pytest.fixture
def memories(tmp_path: Path) -> Iterator[Callable[..., FailureMemory]]:
    opened: list[FailureMemory] = []

    def open_one(**options: Any) -> FailureMemory:
        memory = FailureMemory(tmp_path / f"m{len(opened)}.db", project="web", **options)
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_guarded_tool_in_shadow_mode_runs_every_call_and_counts_what_enforcing_refuses(
    memories: Callable[..., FailureMemory], flavour: str
) -> None:
    """enforce=False on the decorator: every call runs; would-refuse equals the refusals."""
    pick = 0 if flavour == "sync" else 1
    strict_memory, strict_world = memories(), World()
    strict = _tools(strict_memory, strict_world)[pick]
    _play(strict, strict_world)
    shadow_memory, shadow_world = memories(), World()
    shadow = _tools(shadow_memory, shadow_world, enforce=False)[pick]
    _play(shadow, shadow_world)
    calls = sum(1 for step in SCRIPT if step != "GENERATE")
    assert shadow_world.runs == calls
    refused = strict.stats.blocked
    assert refused == 4 and strict_world.runs == calls - refused
    assert shadow.stats.blocked == 0 and shadow.stats.would_block == refused
    enforced, measured = strict_memory.stats().refusals, shadow_memory.stats().refusals
    assert enforced.refused == measured.would_refuse == refused
    assert measured.refused == 0
    assert dict(measured.verdicts) == {"right": 3, "wrong": 1, "other": 0}
    if flavour == "sync":  # (asyncio.run keeps its context, and last_decision, to itself)
        assert shadow.last_decision is not None and shadow.last_decision.shadow


def test_a_tool_can_enforce_inside_a_shadow_memory(memories: Callable[..., FailureMemory]) -> None:
    """guarded_tool(enforce=True) refuses even when the memory measures in shadow mode."""
    memory, world = memories(enforce=False), World()
    read_file = _tools(memory, world, enforce=True)[0]
    _play(read_file, world)
    assert read_file.stats.blocked == 4
    assert memory.stats().refusals.refused == 4


def test_shadow_mode_never_raises_tool_blocked(memories: Callable[..., FailureMemory]) -> None:
    """With on_block="raise", a shadow-mode tool still runs the call and raises its own error."""
    memory, world = memories(), World()

    @guarded_tool(memory, name="read_file", enforce=False)
    def read_file(path: str) -> str:
        return world.read(path)

    for _ in range(3):
        with pytest.raises(FileNotFoundError):
            read_file("gone.md")
    assert world.runs == 3
    assert memory.stats().refusals.would_refuse == 2


def test_an_enforcing_tool_raises_tool_blocked(memories: Callable[..., FailureMemory]) -> None:
    """The same tool enforcing raises ToolBlocked on the repeat (the guard is really on)."""
    memory, world = memories(), World()

    @guarded_tool(memory, name="read_file")
    def read_file(path: str) -> str:
        return world.read(path)

    with pytest.raises(FileNotFoundError):
        read_file("gone.md")
    with pytest.raises(ToolBlocked):
        read_file("gone.md")


def test_bookkeeping_trouble_is_logged_once_at_warning_then_at_debug(
    memories: Callable[..., FailureMemory], caplog: pytest.LogCaptureFixture
) -> None:
    """A record that fails logs WARNING the first time, DEBUG after; the call is unaffected."""
    memory = memories()

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk gone")

    memory.record = broken  # type: ignore[method-assign]

    @guarded_tool(memory, name="read_file")
    def read_file(path: str) -> str:
        return "text"

    caplog.set_level(logging.DEBUG, logger="scarguard")
    with pytest.warns(Warning, match="could not record"):
        assert read_file("a.md") == "text"
    assert read_file("a.md") == "text"
    logged = [r for r in caplog.records if getattr(r, "event", None) == "bookkeeping"]
    assert [r.levelno for r in logged] == [logging.WARNING, logging.DEBUG]
    assert logged[0].tool == "read_file"  # type: ignore[attr-defined]
    assert logged[0].error_type == "OSError"  # type: ignore[attr-defined]
    assert "disk gone" in logged[0].getMessage()
