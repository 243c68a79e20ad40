"""Shared helpers of the benchmark suites: the PRNG, statistics, machine facts, JSON output.

Not part of the package: run the suites as ``python bench/cost.py`` and
``python bench/effect.py`` from the repository root.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"

if str(ROOT / "src") not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT / "src"))

_MASK = 0xFFFFFFFF


def _imul(a: int, b: int) -> int:
    """JavaScript ``Math.imul``: the low 32 bits of the product, as an unsigned int."""
    return ((a & _MASK) * (b & _MASK)) & _MASK


def mulberry32(seed: int) -> Callable[[], float]:
    """Return the Mulberry32 generator seeded with ``seed``: floats in ``[0, 1)``.

    A bit-exact port of the JavaScript closure (``Math.imul``, ``>>>``, ``| 0``), so that a
    simulation draws the same numbers as the published TypeScript benchmark.
    """
    state = seed & _MASK

    def draw() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _MASK
        a = state
        t = _imul(a ^ (a >> 15), 1 | a)
        t = ((t + _imul(t ^ (t >> 7), 61 | t)) & _MASK) ^ t
        return ((t ^ (t >> 14)) & _MASK) / 4294967296

    return draw


Proposal = tuple[str, dict[str, Any]]


def forgetful_proposal(
    rng: Callable[[], float],
    seen: Sequence[tuple[str, dict[str, Any], bool]],
    window: int,
    draw: Callable[[Callable[[], float]], Proposal],
) -> Proposal:
    """The forgetful agent of the effectiveness worlds: one proposal.

    It sees its last ``window`` outcomes. If failures have scrolled out of view, with
    probability 0.30 it replays one of them; otherwise it asks ``draw`` for a call (the world's
    menu, drawing from ``rng``), redrawing up to five times while the call is a failure it
    can still see. The order of draws is the published simulation's.
    """
    visible = seen[-window:] if window > 0 else []
    visible_failures = {(t, tuple(a.items())) for t, a, ok in visible if not ok}
    forgotten = [(t, a) for t, a, ok in seen[: max(0, len(seen) - window)] if not ok]
    if forgotten and rng() < 0.30:
        tool, args = forgotten[int(rng() * len(forgotten))]
        return tool, dict(args)
    attempts = 0
    while True:
        tool, args = draw(rng)
        if (tool, tuple(args.items())) not in visible_failures:
            break
        attempts += 1
        if attempts >= 5:
            break
    return tool, args


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100) of ``values`` by nearest rank."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary(samples_s: Sequence[float]) -> dict[str, float]:
    """Return median, p99, mean and max of samples in seconds, as microseconds."""
    micros = [s * 1e6 for s in samples_s]
    return {
        "n": len(micros),
        "p50_us": round(statistics.median(micros), 3),
        "p99_us": round(percentile(micros, 99), 3),
        "mean_us": round(statistics.fmean(micros), 3),
        "max_us": round(max(micros), 3),
    }


def machine() -> dict[str, Any]:
    """Describe the machine and software the benchmark ran on."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    commit = ""
    with contextlib.suppress(OSError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "sched_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "loadavg": [round(x, 2) for x in load],
        "git_commit": commit,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def write_result(name: str, payload: dict[str, Any], out: str | os.PathLike[str] | None) -> Path:
    """Write ``payload`` as pretty JSON to ``out`` (default ``bench/results/<name>.json``)."""
    path = Path(out) if out else RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    return path
