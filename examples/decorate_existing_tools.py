"""Guard tools you already have, without touching their code, and read what they saw.

``guarded_tool(memory)(fn)`` wraps an existing function; the wrapper keeps its name,
signature and docstring, so agent frameworks build the same tool schema from it.
"""

import subprocess
import sys

from scarguard import FailureMemory, ToolBlocked, guarded_tool
from scarguard.testing import FakeClock


def read_file(path: str) -> str:
    """Return a file's text (an existing tool, written without scarguard in mind)."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write_file(path: str, text: str) -> str:
    """Create or overwrite a file."""
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return f"wrote {path}"


def run_command(command: list[str]) -> str:
    """Run a command and return its output; raise on a non-zero exit."""
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"exit code {done.returncode}: {done.stderr.strip()[:200]}")
    return done.stdout


# An agent takes seconds per step; identical failures within two seconds count once, so
# this script moves a fake clock instead of sleeping.
clock = FakeClock()
memory = FailureMemory(":memory:", clock=clock)
tools = [guarded_tool(memory)(fn) for fn in (read_file, write_file, run_command)]
guarded_read, guarded_write, guarded_run = tools

for _ in range(3):
    clock.advance(seconds=10)
    try:
        guarded_read("todo.md")
    except FileNotFoundError as error:
        print("read failed:", error.strerror)
    except ToolBlocked as blocked:
        print("refused:", blocked.decision.violations[0].reason)

command = [sys.executable, "-c", "import sys; sys.exit(3)"]
for _ in range(3):
    clock.advance(seconds=10)
    try:
        guarded_run(command)
    except RuntimeError as error:
        print("command failed:", error)
    except ToolBlocked as blocked:
        print("refused:", blocked.decision.violations[0].reason)

print(guarded_write("todo.md", "- ship it\n"))
print("a successful write lifts the missing-file fact; reading is allowed again:", end=" ")
print(memory.check("read_file", {"path": "todo.md"}).allowed)

print("name and docstring kept:", guarded_read.__name__, "-", guarded_read.__doc__.splitlines()[0])
for tool in tools:
    print(f"{tool.__name__}: {tool.stats}")
