"""The demo's simulated world: a workspace of files, make targets and a throttled API.

What the scripted agent of :mod:`scarguard.cli.demo` acts on, through guarded tools, and the
clock the demo runs on (real time, the retries' waits skipped).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import tenacity

from scarguard.guard.decorator import guarded_tool
from scarguard.guard.retrying import Retry
from scarguard.memory import FailureMemory

__all__ = ["DemoClock", "RateLimitedError", "Workspace", "build_tools"]

APP_PY = """from web import route


@route("/orders")
def handle_request(request):
    return list_orders(request.user)
"""
MAKEFILE = """test:
\tpytest -q

lint:
\truff check .

deploy: test
\t./deploy.sh
"""


class DemoClock:
    """The real time, strictly increasing; the retries' waits are skipped, not slept.

    Every time the demo stores is a real one, never ahead of the wall clock, so
    ``scarguard show`` afterwards reads "2m ago", not a time in the future.

    Args:
        clock: The real clock.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self.now = clock()

    def __call__(self) -> float:
        """Return the real time, a microsecond past the last reading if it did not move."""
        self.now = max(self._clock(), self.now + 1e-6)
        return self.now

    def sleep(self, seconds: float) -> None:
        """Skip the wait (the retry of a rate-limited call would wait here)."""


class RateLimitedError(Exception):
    """What the fake API raises while it is throttling: an HTTP 429."""

    status_code = 429


class Workspace:
    """The simulated world the agent acts on: files, make targets and a throttled API.

    Args:
        throttled_calls: How many API calls answer 429 before the API answers.
    """

    def __init__(self, throttled_calls: int = 2) -> None:
        self.files = {"app.py": APP_PY, "Makefile": MAKEFILE}
        self.targets = {"test": "12 passed in 0.41s", "lint": "All checks passed!"}
        self.throttled = throttled_calls

    def read_file(self, path: str) -> str:
        """Return a file's text."""
        if path not in self.files:
            raise FileNotFoundError(f"[Errno 2] No such file or directory: {path!r}")
        return self.files[path]

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace ``old`` by ``new`` in a file."""
        text = self.read_file(path)
        if old not in text:
            raise ValueError(f"search string not found in {path}")
        self.files[path] = text.replace(old, new, 1)
        return f"edited {path}"

    def search(self, query: str) -> str:
        """Return the lines that contain ``query``."""
        hits = [
            f"{name}:{number}: {line.strip()}"
            for name, text in sorted(self.files.items())
            for number, line in enumerate(text.splitlines(), 1)
            if query in line
        ]
        return "\n".join(hits) or "no matches"

    def make(self, target: str) -> str:
        """Run a Makefile target."""
        if target not in self.targets:
            raise RuntimeError(f"make: *** No rule to make target '{target}'.  Stop.")
        return self.targets[target]

    def call_api(self, method: str, endpoint: str) -> str:
        """Call the fake deployment API."""
        if self.throttled > 0:
            self.throttled -= 1
            raise RateLimitedError("429 Too Many Requests: rate limit exceeded, retry after 3s")
        return '200 {"deploy": 42, "status": "live"}'


def build_tools(memory: FailureMemory, world: Workspace, clock: DemoClock) -> dict[str, Any]:
    """Return the workspace's operations as guarded tools, by name."""
    guard = guarded_tool(memory, on_block="return")
    retry = Retry(stop=tenacity.stop_after_attempt(4), wait=lambda _: 1.0, sleep=clock.sleep)

    @guard
    def read_file(path: str) -> str:
        return world.read_file(path)

    @guard
    def edit_file(path: str, old: str, new: str) -> str:
        return world.edit_file(path, old, new)

    @guard
    def search(query: str) -> str:
        return world.search(query)

    @guard
    def make(target: str) -> str:
        return world.make(target)

    @guarded_tool(memory, on_block="return", retry=retry)
    def call_api(method: str, endpoint: str) -> str:
        return world.call_api(method, endpoint)

    return {f.__name__: f for f in (read_file, edit_file, search, make, call_api)}
