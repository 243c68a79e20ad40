"""bench/telemetry.py still runs in its short mode and reports every case (not timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs a benchmark

ROOT = Path(__file__).resolve().parent.parent


def test_the_telemetry_bench_reports_every_case(tmp_path: Path) -> None:
    """Each case is a positive time; the baseline is measured in the same run."""
    out = tmp_path / "telemetry.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "telemetry.py"), "--quick", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    cases = {"allowed_baseline_us", "allowed_us", "refused_baseline_us", "refused_us",
             "allowed_otel_api_only_us", "allowed_otel_sdk_us"}  # fmt: skip
    assert set(results) == cases
    assert all(value > 0 for value in results.values())
    assert "baseline" in done.stdout and "x  +" in done.stdout
