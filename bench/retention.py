"""Retention benchmark: what a store holds on disk before and after a purge.

Records ``--failures`` distinct agent failures spread evenly over ``--days`` simulated days
through ``FailureMemory.record`` (receipts on, the default), then purges everything older
than ``--keep`` days with ``FailureMemory.purge``. It prints the SQLite file size (database
plus WAL), the stored failures and receipts at each stage, and the size after ``VACUUM``
(a purge frees pages for reuse; only ``VACUUM`` gives them back to the file system). The
chain is verified after the purge.

Run ``python bench/retention.py`` (about a minute here; ``--quick`` for a smoke run). It
prints a table and writes ``bench/results/retention.json``.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

from scarguard import FailureMemory
from scarguard.policy import DAY
from scarguard.testing import FakeClock

_ERROR = "bash: line 1: {word}: command not found\n  at run_step (agent/loop.py:{n})"


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _rows(path: Path, table: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _stage(name: str, path: Path) -> dict[str, object]:
    with sqlite3.connect(path) as conn:  # the WAL folded into the file, as at a quiet moment
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {
        "stage": name,
        "bytes": _size(path),
        "failures": _rows(path, "failures"),
        "receipts": _rows(path, "receipts"),
    }


def run(failures: int, days: float, keep: float) -> dict[str, object]:
    """Fill a store, purge it, and return the sizes at each stage."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.db"
        clock = FakeClock()
        step = days * DAY / failures
        with FailureMemory(path, clock=clock) as memory:
            for n in range(failures):
                word = f"tool{n}"
                args = {"command": f"{word} build --target web --jobs 4", "cwd": "/srv/app"}
                memory.record("shell", args, error=_ERROR.format(word=word, n=n % 400))
                clock.advance(step)
            memory.flush()
            stages = [_stage("filled", path)]
            report = memory.purge(keep * DAY)
            valid = memory.verify().valid
        stages.append(_stage(f"purge --older-than {keep:g}d", path))
        with sqlite3.connect(path) as conn:
            conn.execute("VACUUM")
        stages.append(_stage("after VACUUM", path))
    return {
        "failures": failures,
        "days": days,
        "keep_days": keep,
        "deleted_failures": report.failures,
        "deleted_receipts": report.receipts,
        "chain_valid_after_purge": valid,
        "stages": stages,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", type=int, default=20_000)
    parser.add_argument("--days", type=float, default=60.0)
    parser.add_argument("--keep", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="500 failures, for a smoke run")
    default_out = Path(__file__).parent / "results" / "retention.json"
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args(argv)
    result = run(500 if args.quick else args.failures, args.days, args.keep)
    print(f"{result['failures']} failures over {result['days']:g} days, receipts on")
    print(f"{'stage':<26} {'size':>10} {'failures':>9} {'receipts':>9}")
    for s in result["stages"]:  # type: ignore[attr-defined]
        mib = f"{s['bytes'] / 2**20:.1f} MiB"
        print(f"{s['stage']:<26} {mib:>10} {s['failures']:>9} {s['receipts']:>9}")
    print(f"chain verifies after the purge: {result['chain_valid_after_purge']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
