"""Hook benchmark: process start to answer of ``scarguard hook claude-code``, per event kind.

Claude Code starts the hook as a new process for every tool event and waits for it, so its
whole cost is interpreter start, imports, opening the store, one check or record, and exit.
Each case runs as a fresh process with the event on stdin, timed from just before the spawn
to the process's exit; cases are interleaved in rounds so the ratios hold on a noisy machine.

Baselines in the same run: ``python -c pass`` (the interpreter alone) and
``python -c "import scarguard"`` (the package import). Cases: an allowed ``PreToolUse`` (no
output), a refused one (the deny JSON), a ``PostToolUse`` (a success recorded) and a
``PostToolUseFailure`` (a failure recorded).

Bytecode: an installed package has its ``.pyc`` files, so the children run with bytecode
cached in a temporary ``PYTHONPYCACHEPREFIX`` (written by a warm-up run), whatever
``PYTHONDONTWRITEBYTECODE`` says here. ``--no-bytecode`` measures the other case, every
process compiling every module from source (an editable install on a machine that writes no
bytecode).

Run ``python bench/hook.py`` (``--rounds N``, default 15; ``--quick`` for 3). Prints medians
and p99 in milliseconds, each as a ratio to the interpreter alone and to the import, and writes
``bench/results/hook.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, machine, summary, write_result

SESSION = "bench-session"


def _event(root: Path, kind: str, command: str, n: int, **extra: Any) -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(root / "transcript.jsonl"),
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": kind,
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": f"toolu_{n}",
            **extra,
        }
    )


def _environment(bytecode: Path | None) -> dict[str, str]:
    """The children's environment: bytecode cached under ``bytecode``, or never written."""
    env = dict(os.environ)
    if bytecode is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(bytecode)
    return env


ENV: dict[str, str] = dict(os.environ)


def _time(argv: list[str], stdin: str, cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, env=ENV)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr}")
    return elapsed, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    parser.add_argument("--out", help="result file (default: bench/results/hook.json)")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="every process compiles from source"
    )
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    python = sys.executable
    hook = [python, "-m", "scarguard", "hook", "claude-code"]
    global ENV
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        root.mkdir()
        ENV = _environment(None if options.no_bytecode else Path(folder) / "pycache")
        (root / ".git").mkdir()
        (root / "transcript.jsonl").write_text("")
        failing = "npm run deploy"
        error = 'Exit code 1\nnpm ERR! Missing script: "deploy"'
        for n in (1, 2):  # teach the refusal, and create the store
            _time(hook, _event(root, "PostToolUseFailure", failing, n, error=error), root)
        _, denied = _time(hook, _event(root, "PreToolUse", failing, 3), root)
        assert "deny" in denied, denied
        cases: dict[str, tuple[list[str], str]] = {
            "python -c pass": ([python, "-c", "pass"], ""),
            "import scarguard": ([python, "-c", "import scarguard"], ""),
            "PreToolUse allowed": (hook, _event(root, "PreToolUse", "ls", 10)),
            "PreToolUse refused": (hook, _event(root, "PreToolUse", failing, 11)),
            "PostToolUse": (hook, _event(root, "PostToolUse", "ls", 12, tool_response={})),
            "PostToolUseFailure": (
                hook,
                _event(root, "PostToolUseFailure", "make nope", 13, error="Exit code 2"),
            ),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(rounds):
            for name, (argv, stdin) in cases.items():
                samples[name].append(_time(argv, stdin, root)[0])
    stats = {name: summary(values) for name, values in samples.items()}
    floor = stats["python -c pass"]["p50_us"]
    package = stats["import scarguard"]["p50_us"]
    bytecode = "compiled from source" if options.no_bytecode else "bytecode cached"
    print(f"scarguard hook claude-code: process start to answer, {rounds} rounds, {bytecode} (ms)")
    print(f"{'case':<22}{'p50':>9}{'p99':>9}{'x python':>10}{'x import':>10}")
    for name, s in stats.items():
        p50, p99 = s["p50_us"] / 1e3, s["p99_us"] / 1e3
        ratios = f"{s['p50_us'] / floor:>10.2f}{s['p50_us'] / package:>10.2f}"
        print(f"{name:<22}{p50:>9.1f}{p99:>9.1f}{ratios}")
    payload = {
        "machine": machine(),
        "rounds": rounds,
        "bytecode": not options.no_bytecode,
        "cases": stats,
        "root": str(ROOT),
    }
    print(f"wrote {write_result('hook', payload, options.out)}")


if __name__ == "__main__":
    main()
