"""Running the ``scarguard`` command in-process, in a clean directory, on a learned store."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli import main


def run(*argv: str) -> int:
    """Run ``scarguard <argv>`` in this process and return its exit code."""
    return main(list(argv))


def clean_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work in ``tmp_path``, with no ``$SCARGUARD_PATH`` and no colours."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


def learned_store(tmp_path: Path) -> Path:
    """A store with two agent mistakes learned and one rate limit in workspace acme/web."""
    path = tmp_path / "memory.db"
    start = int(time.time()) - 2 * 86400  # two days ago: rules still active, --since 1h empty
    clock = iter(range(start, start + 1_000_000, 10))
    with FailureMemory(path, workspace="acme", project="web", clock=lambda: next(clock)) as m:
        for _ in range(2):
            m.record("edit_file", {"path": "a.py", "old": "x", "new": "y"},
                     error="search string not found in a.py")  # fmt: skip
            m.record("run_command", {"command": "make build"},
                     error="make: *** No rule to make target 'build'.  Stop.")  # fmt: skip
            m.record("call_api", {"url": "https://api.example.com"}, error="HTTP 429",
                     status_code=429)  # fmt: skip
    return path
