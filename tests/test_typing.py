"""Guarded tools type-check in users' code under mypy --strict, with their signatures kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs mypy

pytest.importorskip("mypy", reason="mypy is part of the test extra")

USER_CODE = '''
import asyncio
from scarguard import Decision, FailureMemory, GuardedCallable, ToolStats, guarded_tool

memory = FailureMemory(":memory:")


@guarded_tool(memory)
def edit(path: str, old: str, new: str) -> int:
    return 1


@guarded_tool(memory, on_block="return")
def read(path: str) -> bytes:
    return b""


@guarded_tool
def bare(x: int) -> float:
    return 1.0


@guarded_tool(memory, on_block="return")
async def fetch(url: str) -> dict[str, int]:
    return {}


class Repo:
    @guarded_tool(memory)
    def commit(self, message: str) -> str:
        return message


n: int = edit("a.py", "x", "y")
stats: ToolStats = edit.stats
last: Decision | None = edit.last_decision
edit.enabled = False
on: bool = edit.enabled
owner: FailureMemory = edit.memory
name: str = edit.__name__
typed: GuardedCallable[[str, str, str], int] = edit
reveal_type(read("a"))
reveal_type(bare(3))
reveal_type(asyncio.run(fetch("u")))
reveal_type(Repo().commit("m"))
'''

MISUSE = '''
from scarguard import FailureMemory, guarded_tool

memory = FailureMemory(":memory:")


@guarded_tool(memory)
def edit(path: str, old: str, new: str) -> int:
    return 1


edit(3)
wrong: str = edit("a", "b", "c")
edit.stats.nope
'''


def _mypy(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    script = folder / "user_code.py"
    script.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(script)],
        capture_output=True, text=True, timeout=300, cwd=folder, check=False,
    )  # fmt: skip


def test_documented_attributes_and_return_types_check_in_user_code(tmp_path: Path) -> None:
    """stats, last_decision, enabled, memory type-check; on_block="return" admits str."""
    done = _mypy(tmp_path, USER_CODE)
    assert done.returncode == 0, done.stdout
    revealed = [line.split("Revealed type is ")[1] for line in done.stdout.splitlines()
                if "Revealed type is" in line]  # fmt: skip
    assert revealed == ['"bytes | str"', '"float"', '"dict[str, int] | str"', '"str"']


def test_the_signature_is_kept_so_mistakes_are_caught(tmp_path: Path) -> None:
    """A wrong argument, a wrong return type or an unknown attribute is a mypy error."""
    done = _mypy(tmp_path, MISUSE)
    assert done.returncode == 1
    assert 'Argument 1 to "__call__" of "GuardedCallable" has incompatible type "int"' in (
        done.stdout
    )
    assert 'expression has type "int", variable has type "str"' in done.stdout
    assert '"ToolStats" has no attribute "nope"' in done.stdout
