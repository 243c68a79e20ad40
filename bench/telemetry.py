"""What visibility costs on the hot path: logging, OpenTelemetry and refusal counting.

Run ``python bench/telemetry.py`` from the repository root. Every case is measured in this
one process against a baseline in the same run (the telemetry hooks replaced by no-ops), and
printed as the median per call over repeated rounds with its ratio to the baseline:

- ``check`` of an allowed call on a tool the memory knows nothing about (the common case),
  with the ``scarguard`` logger at WARNING (the default) and OpenTelemetry not imported;
- the same with the OpenTelemetry API imported but no provider set (a library pulled it in);
- the same with an SDK ``TracerProvider`` and ``MeterProvider`` set and a recording span
  (the signals really go out);
- a refused ``check`` (the refusal is counted for the next batched write).

Use ``--rounds`` and ``--number`` for a longer run; ``--out`` writes the JSON result. The
machine is shared: run it a few times and read the medians, not one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any

from _common import machine, write_result

from scarguard import FailureMemory
from scarguard.guard import _checking as engine

MISSING = "FileNotFoundError: [Errno 2] No such file or directory: 'gone.txt'"


def _median_us(fn: Callable[[], object], rounds: int, number: int) -> float:
    times = timeit.repeat(fn, number=number, repeat=rounds)
    return statistics.median(times) / number * 1e6


def _without_hooks(fn: Callable[[], object], rounds: int, number: int) -> float:
    real = engine.decision_signals
    engine.decision_signals = lambda *a, **k: None  # type: ignore[assignment]
    try:
        return _median_us(fn, rounds, number)
    finally:
        engine.decision_signals = real


def run(rounds: int, number: int) -> dict[str, Any]:
    allowed_memory = FailureMemory(":memory:", project="bench")
    allowed = allowed_memory.describe("read_file", {"path": "a.py"})
    refusing = FailureMemory(":memory:", project="bench", success_batch=1_000_000)
    refusing.record("read_file", {"path": "gone.txt"}, error=MISSING)
    refused = refusing.describe("read_file", {"path": "gone.txt"})

    def check_allowed() -> object:
        return allowed_memory.check(allowed)

    def check_refused() -> object:
        return refusing.check(refused)

    results: dict[str, Any] = {}
    base = _without_hooks(check_allowed, rounds, number)
    results["allowed_baseline_us"] = base
    results["allowed_us"] = _median_us(check_allowed, rounds, number)
    refused_base = _without_hooks(check_refused, rounds, number)
    results["refused_baseline_us"] = refused_base
    results["refused_us"] = _median_us(check_refused, rounds, number)
    refusing._pending_counts.clear()  # the benchmark's refusals are not worth a write

    import opentelemetry.metrics
    import opentelemetry.trace

    results["allowed_otel_api_only_us"] = _median_us(check_allowed, rounds, number)
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        print("opentelemetry-sdk is not installed: the SDK case is skipped", file=sys.stderr)
    else:
        from scarguard import telemetry

        opentelemetry.trace.set_tracer_provider(TracerProvider())
        opentelemetry.metrics.set_meter_provider(MeterProvider())
        telemetry._asked_at = float("-inf")
        tracer = opentelemetry.trace.get_tracer("bench")
        with tracer.start_as_current_span("agent step"):
            results["allowed_otel_sdk_us"] = _median_us(check_allowed, rounds, number // 10)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--quick", action="store_true", help="a short run (for smoke tests)")
    parser.add_argument("--out", help="write the JSON result here")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.number = 2, 200
    results = run(args.rounds, args.number)
    base, refused_base = results["allowed_baseline_us"], results["refused_baseline_us"]
    print(f"check, allowed, no constraints, hooks off (baseline): {base:7.2f} us")
    for key, label in (
        ("allowed_us", "default (logger at WARNING, no OpenTelemetry)"),
        ("allowed_otel_api_only_us", "OpenTelemetry API imported, no provider"),
        ("allowed_otel_sdk_us", "OpenTelemetry SDK set, in a recording span"),
    ):
        if key in results:
            value = results[key]
            print(f"  {label:48} {value:7.2f} us  {value / base:5.2f}x  +{value - base:.2f} us")
    value = results["refused_us"]
    print(f"check, refused, hooks off (baseline):                 {refused_base:7.2f} us")
    print(f"  {'counted and logged (logger at WARNING)':48} {value:7.2f} us"
          f"  {value / refused_base:5.2f}x  +{value - refused_base:.2f} us")  # fmt: skip
    if args.out:
        write_result("telemetry", {"machine": machine(), "results": results}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
