"""Repair benchmark: is a call refused after the world was repaired? (real tools)

Each scenario runs a real command that fails (``git checkout feature`` with no such branch,
``ls build``, a failing ``pytest`` whose code under test is wrong...), records it as a
guarded tool would until the memory refuses it, then repairs the world in one of two ways:

- **by the agent**: the repair runs through the same guarded ``bash`` tool;
- **by hand**: the repair runs outside the guard (a person, another process, an unguarded
  tool), so only observation can lift the ban.

After the repair the command is checked, then run for real. A **false refusal** is a call
still refused although it now succeeds; a scenario whose command still fails may stay
refused. Nothing here is timed.

Run ``python bench/repairs.py`` (``--quick`` for the first scenarios only). It prints a table
and writes ``bench/results/repairs.json``. Needs ``bash`` and ``git``; the ``node``
scenario is skipped without ``node``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine, write_result

from scarguard import FailureMemory, ToolBlocked, guarded_tool
from scarguard.testing import FakeClock

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
_REPO = "git init -q -b main && git commit -q --allow-empty -m start"
_REMOTE = f"{_REPO} && git init -q --bare ../remote.git && git remote add origin ../remote.git"
_CONFIG_APP = (
    "printf 'import json\\nPATH = \"config.json\"\\ns = json.load(open(PATH))\\n"
    "print(s[\"port\"])\\n' > app.py && echo '{}' > config.json"
)
_TESTED = (
    "mkdir -p pkg tests && touch pkg/__init__.py && printf 'LIMIT = 2\\n' > pkg/consts.py && "
    "printf 'from .consts import LIMIT\\ndef limit():\\n    return LIMIT\\n' > pkg/calc.py && "
    "printf 'from pkg.calc import limit\\ndef test_limit():\\n    assert limit() == 3\\n'"
    " > tests/test_calc.py"
)
_NODE_TESTED = (
    "mkdir -p src test && printf 'export const add = (a, b) => a - b;\\n' > src/calc.mjs && "
    "printf \"import { test } from 'node:test';\\nimport assert from 'node:assert';\\n"
    "import { add } from '../src/calc.mjs';\\ntest('add', () => assert.strictEqual(add(1, 2),"
    " 3));\\n\" > test/calc.test.mjs"
)


@dataclass(frozen=True)
class Scenario:
    """A failing command, the world it fails in, and the repair that makes it succeed."""

    name: str
    setup: str
    command: str
    repair: str
    needs: str = "bash"


SCENARIOS = [
    Scenario("git: missing branch", _REPO, "git checkout -q feature", "git branch feature"),
    Scenario("git: missing tag", _REPO, "git show -q v1.0", "git tag v1.0"),
    Scenario("git: merge a missing branch", _REPO, "git merge -q topic", "git branch topic"),
    Scenario("git: no upstream", _REMOTE, "git push -q", "git push -q -u origin main"),
    Scenario(
        "git: no tracking branch",
        f"{_REMOTE} && git push -q origin main",
        "git pull -q",
        "git branch -q --set-upstream-to=origin/main",
    ),
    Scenario(
        "git: missing remote branch", _REMOTE, "git log -1 origin/main", "git push -q origin main"
    ),
    Scenario("shell: missing folder", "true", "ls build", "mkdir build"),
    Scenario("shell: cd into a missing folder", "true", "cd src && ls", "mkdir src"),
    Scenario("shell: missing file", "true", "cat README", "echo hello > README"),
    Scenario("shell: missing parent folder", "true", "touch logs/today", "mkdir logs"),
    Scenario(
        "shell: missing file after cd", "mkdir sub", "cd sub && cat notes", "echo x > sub/notes"
    ),
    Scenario("shell: not executable", "echo 'echo ok' > run.sh", "./run.sh", "chmod +x run.sh"),
    Scenario(
        "make: missing rule",
        "printf 'all:\\n\\t@true\\n' > Makefile",
        "make test",
        "printf 'all:\\n\\t@true\\ntest:\\n\\t@true\\n' > Makefile",
        needs="make",
    ),
    Scenario(
        "python: configuration the script reads",
        _CONFIG_APP,
        "python3 app.py",
        "echo '{\"port\": 8000}' > config.json",
    ),
    Scenario(
        "pytest: the code under test, two imports away",
        _TESTED,
        "python3 -m pytest -q -p no:cacheprovider tests/test_calc.py",
        "printf 'LIMIT = 3\\n' > pkg/consts.py",
    ),
    Scenario(
        "python: missing module of the workspace",
        "true",
        "python3 -c 'import helper'",
        "echo 'X = 1' > helper.py",
    ),
    Scenario(
        "npm: the program a script runs, installed",
        "echo '{\"name\": \"app\", \"scripts\": {\"build\": \"made-up-tsc\"}}' > package.json",
        "npm run build",
        "mkdir -p node_modules/.bin && printf '#!/bin/sh\\nexit 0\\n'"
        " > node_modules/.bin/made-up-tsc && chmod +x node_modules/.bin/made-up-tsc",
        needs="npm",
    ),
    Scenario(
        "make: the C source a test is built from",
        "printf 'int add(int a, int b) { return a - b; }\\n' > calc.c && printf '#include"
        " <assert.h>\\nint add(int, int);\\nint main(void) { assert(add(2, 2) == 4); }\\n'"
        " > test.c && printf 'OBJS = calc.o test.o\\ntest: calc_test\\n\\t./calc_test\\n"
        "calc_test: $(OBJS)\\n\\tcc -o $@ $^\\n' > Makefile",
        "make test",
        "sed -i 's/a - b/a + b/' calc.c",
        needs="make",
    ),
    Scenario(
        "shell: the script a script runs",
        "printf '#!/bin/sh\\n./step.sh\\n' > run.sh && printf '#!/bin/sh\\nexit 1\\n' > step.sh"
        " && chmod +x run.sh step.sh",
        "./run.sh",
        "printf '#!/bin/sh\\nexit 0\\n' > step.sh",
    ),
    Scenario("shell: a folder tested", "true", "test -d build", "mkdir build"),
    Scenario(
        "python: a folder the script lists",
        "mkdir inbox && printf 'import os\\nassert os.listdir(\"inbox\")\\n' > check.py",
        "python3 check.py",
        "touch inbox/mail",
    ),
    Scenario(
        "make: the script a recipe runs",
        "printf 'check:\\n\\t@./run-checks.sh\\n' > Makefile && printf '#!/bin/sh\\nexit 1\\n'"
        " > run-checks.sh && chmod +x run-checks.sh",
        "make check",
        "printf '#!/bin/sh\\nexit 0\\n' > run-checks.sh",
        needs="make",
    ),
    Scenario(
        "cmake: a source its CMakeLists.txt names",
        "mkdir src && printf 'cmake_minimum_required(VERSION 3.10)\\nproject(p C)\\n"
        "add_executable(app src/main.c src/util.c)\\n' > CMakeLists.txt && printf 'int add(int,"
        " int);\\nint main(void) { return add(1, 1) - 2; }\\n' > src/main.c && printf 'int"
        " sub(int a, int b) { return a - b; }\\n' > src/util.c && cmake -S . -B build > /dev/null",
        "cmake --build build",
        "printf 'int add(int a, int b) { return a + b; }\\n' > src/util.c",
        needs="cmake",
    ),
    Scenario(
        "java: a class on the class path",
        "mkdir out && printf 'class B { static int v() { return 1; } }\\n' > B.java && printf"
        " 'class A { public static void main(String[] a) { if (B.v() != 2) System.exit(1); }"
        " }\\n' > A.java && javac -d out A.java B.java",
        "java -cp out A",
        "sed -i 's/return 1/return 2/' B.java && javac -d out B.java",
        needs="java",
    ),
    Scenario(
        "pytest: a data file beside the test",
        "mkdir -p tests/data && echo 2 > tests/data/input.txt && printf 'from pathlib import"
        " Path\\ndef test_data():\\n    text = (Path(__file__).parent / \"data\" /"
        " \"input.txt\").read_text()\\n    assert text.strip() == \"3\"\\n'"
        " > tests/test_data.py",
        "python3 -m pytest -q -p no:cacheprovider tests/test_data.py",
        "echo 3 > tests/data/input.txt",
    ),
    Scenario(
        "python: a heredoc's code, the module it imports",
        _TESTED,
        "python3 - <<'EOF'\nfrom pkg.calc import limit\nassert limit() == 3\nEOF",
        "printf 'LIMIT = 3\\n' > pkg/consts.py",
    ),
    Scenario(
        "python: a here-string's code, the module it imports",
        _TESTED,
        'python3 <<< "from pkg.calc import limit; assert limit() == 3"',
        "printf 'LIMIT = 3\\n' > pkg/consts.py",
    ),
    Scenario(
        "sqlite3: a table created",
        "true",
        "sqlite3 app.db 'select * from t'",
        "sqlite3 app.db 'create table t (a int)'",
        needs="sqlite3",
    ),
    Scenario(
        "pytest: the code a collected test imports",
        _TESTED,
        "python3 -m pytest -q -p no:cacheprovider -rN --tb=no",  # (its output names no file)
        "printf 'LIMIT = 3\\n' > pkg/consts.py",
    ),
    Scenario(
        "pytest: through a launcher",
        _TESTED,
        "timeout 120 python3 -m pytest -q -p no:cacheprovider -rN --tb=no tests",
        "printf 'LIMIT = 3\\n' > pkg/consts.py",
    ),
    Scenario("shell: a glob in the root", "true", "wc -l *.txt", "echo one > a.txt"),
    Scenario(
        "node: the module a test imports",
        _NODE_TESTED,
        "node --test test/",
        "printf 'export const add = (a, b) => a + b;\\n' > src/calc.mjs",
        needs="node",
    ),
]


def sh(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_GIT_ENV}
    return subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, env=env, timeout=120
    )


def run(scenario: Scenario, by_hand: bool) -> dict[str, Any]:
    """Fail, get refused, repair, and say whether the repaired call is allowed and succeeds."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "workspace"
        root.mkdir()
        if sh(root, scenario.setup).returncode != 0:
            return {"outcome": "setup failed"}
        memory = FailureMemory(":memory:", root=root, clock=FakeClock())

        @guarded_tool(memory, name="bash")
        def bash(command: str) -> str:
            done = sh(root, command)
            if done.returncode:
                raise RuntimeError(f"exit {done.returncode}: {done.stderr or done.stdout}")
            return done.stdout

        refused = False
        for _ in range(3):  # a failure or two, then the refusal
            memory.clock.advance(5)  # type: ignore[attr-defined]
            try:
                bash(scenario.command)
                return {"outcome": "the command did not fail"}
            except ToolBlocked:
                refused = True
                break
            except RuntimeError:
                continue
        if not refused:
            return {"outcome": "never refused"}
        memory.clock.advance(5)  # type: ignore[attr-defined]
        if by_hand:
            repaired = sh(root, scenario.repair).returncode == 0
        else:
            try:
                bash(scenario.repair)
                repaired = True
            except (RuntimeError, ToolBlocked):
                repaired = False
        if not repaired:
            return {"outcome": "repair failed"}
        memory.clock.advance(5)  # type: ignore[attr-defined]
        allowed = memory.check("bash", {"command": scenario.command}).allowed
        succeeds = sh(root, scenario.command).returncode == 0
        outcome = "allowed" if allowed else "false refusal" if succeeds else "refused (still fails)"
        return {"outcome": outcome, "allowed": allowed, "succeeds": succeeds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the first four scenarios only")
    parser.add_argument("--out", help="the JSON's path (default bench/results/repairs.json)")
    args = parser.parse_args()
    scenarios = SCENARIOS[:4] if args.quick else SCENARIOS
    rows: list[dict[str, Any]] = []
    print(f"{'scenario':48s} {'by the agent':>16s} {'by hand':>16s}")
    for scenario in scenarios:
        if shutil.which(scenario.needs) is None or shutil.which("git") is None:
            print(f"{scenario.name:48s} {'(skipped: needs ' + scenario.needs + ')':>33s}")
            continue
        agent, hand = run(scenario, by_hand=False), run(scenario, by_hand=True)
        rows.append({"scenario": scenario.name, "by_agent": agent, "by_hand": hand})
        print(f"{scenario.name:48s} {agent['outcome']:>16s} {hand['outcome']:>16s}")
    false = {
        mode: sum(row[mode]["outcome"] == "false refusal" for row in rows)
        for mode in ("by_agent", "by_hand")
    }
    print(
        f"\nFalse refusals after a repair: {false['by_agent']} of {len(rows)} by the agent,"
        f" {false['by_hand']} of {len(rows)} by hand"
    )
    payload = {
        "benchmark": "repairs",
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "scenarios": rows,
        "false_refusals": false,
    }
    print(f"wrote {write_result('repairs', payload, args.out)}")


if __name__ == "__main__":
    main()
