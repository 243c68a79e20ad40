"""The demo's simulated world makes the classic mistakes fail as a real workspace would."""

from __future__ import annotations

import pytest

from scarguard.cli._demo_world import DemoClock, RateLimitedError, Workspace, build_tools
from scarguard.memory import FailureMemory


def test_the_workspace_fails_like_files_make_and_a_throttled_api() -> None:
    """A missing file, a stale search string, an unknown target; the API answers the third call."""
    world = Workspace()
    with pytest.raises(FileNotFoundError):
        world.read_file("missing.py")
    with pytest.raises(ValueError, match="search string not found in app"):
        world.edit_file("app.py", "def handler(req):", "x")
    assert world.edit_file("app.py", "def handle_request(request):", "def h(r):") == "edited app.py"
    with pytest.raises(RuntimeError, match="No rule to make target 'build'"):
        world.make("build")
    assert world.make("test") == "12 passed in 0.41s"
    assert world.search("/orders") == 'app.py:4: @route("/orders")'
    for _ in range(2):
        with pytest.raises(RateLimitedError):
            world.call_api("GET", "/deploys/latest")
    assert world.call_api("GET", "/deploys/latest").startswith("200")


def test_the_demo_clock_is_real_time_strictly_increasing() -> None:
    """A clock that does not move still gives later times; the retries' sleep returns at once."""
    clock = DemoClock(lambda: 100.0)
    first, second = clock(), clock()
    assert 100.0 <= first < second
    clock.sleep(3600)
    assert clock() < 100.1


def test_the_tools_are_guarded_and_the_api_is_retried() -> None:
    """Every operation is a guarded tool; the throttled API succeeds after its retries."""
    clock = DemoClock()
    memory = FailureMemory(":memory:", clock=clock)
    tools = build_tools(memory, Workspace(), clock)
    assert sorted(tools) == ["call_api", "edit_file", "make", "read_file", "search"]
    assert tools["call_api"]("GET", "/deploys/latest").startswith("200")
    memory.close()
