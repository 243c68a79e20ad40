"""What operators see: the ``scarguard`` logger's records and the OpenTelemetry signals."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from scarguard import FailureMemory, telemetry

MISSING = "FileNotFoundError: [Errno 2] No such file or directory: 'gone.txt'"


def _records(caplog: pytest.LogCaptureFixture, event: str) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "scarguard" and getattr(r, "event", None) == event
    ]


@pytest.fixture
def memory() -> Iterator[FailureMemory]:
    with FailureMemory(":memory:", workspace="acme", project="web") as m:
        yield m


def test_a_refusal_is_logged_at_info_with_tool_kind_and_constraint_id(
    memory: FailureMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """The refused call's record names tool, kind and id, in the message and in extra."""
    caplog.set_level(logging.INFO, logger="scarguard")
    memory.record("read_file", {"path": "gone.txt"}, error=MISSING)
    decision = memory.check("read_file", {"path": "gone.txt"})
    assert not decision.allowed
    (record,) = _records(caplog, "refused")
    constraint = decision.violations[0].constraint
    assert record.levelno == logging.INFO
    assert record.tool == "read_file"  # type: ignore[attr-defined]
    assert record.kind == constraint.kind.value  # type: ignore[attr-defined]
    assert record.constraint_id == constraint.id  # type: ignore[attr-defined]
    assert (record.workspace, record.project) == ("acme", "web")  # type: ignore[attr-defined]
    assert constraint.id in record.getMessage() and "read_file" in record.getMessage()


def test_learned_and_forgotten_constraints_are_logged_at_info(
    memory: FailureMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """Learning a constraint and forgetting it each leave one INFO record with its id."""
    caplog.set_level(logging.INFO, logger="scarguard")
    result = memory.record("read_file", {"path": "gone.txt"}, error=MISSING)
    learned_ids = {c.id for c in result.new_constraints}
    assert learned_ids
    assert {r.constraint_id for r in _records(caplog, "learned")} == learned_ids  # type: ignore[attr-defined]
    memory.forget(all=True)
    assert {r.constraint_id for r in _records(caplog, "forgotten")} == learned_ids  # type: ignore[attr-defined]


def test_a_lift_by_success_is_logged(
    memory: FailureMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """A success that disproves a constraint logs it as lifted."""
    caplog.set_level(logging.INFO, logger="scarguard")
    memory.record("read_file", {"path": "gone.txt"}, error=MISSING)
    memory.check("write_file", {"path": "gone.txt", "content": "x"})
    lifted = memory.record("write_file", {"path": "gone.txt", "content": "x"}, ok=True).lifted
    assert lifted
    assert {r.constraint_id for r in _records(caplog, "lifted")} == {c.id for c in lifted}  # type: ignore[attr-defined]


def test_decisions_are_logged_at_debug_only(
    memory: FailureMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """Allowed decisions appear at DEBUG and not at INFO."""
    caplog.set_level(logging.INFO, logger="scarguard")
    memory.check("read_file", {"path": "a.txt"})
    assert not _records(caplog, "decision")
    caplog.set_level(logging.DEBUG, logger="scarguard")
    memory.check("read_file", {"path": "a.txt"})
    (record,) = _records(caplog, "decision")
    assert record.levelno == logging.DEBUG and record.decision == "allowed"  # type: ignore[attr-defined]


def test_bookkeeping_trouble_is_logged_at_warning(caplog: pytest.LogCaptureFixture) -> None:
    """bookkeeping() writes one WARNING with the tool and the error's type."""
    caplog.set_level(logging.WARNING, logger="scarguard")
    telemetry.bookkeeping("could not record", "read_file", None, OSError("disk"))
    (record,) = _records(caplog, "bookkeeping")
    assert record.levelno == logging.WARNING
    assert record.error_type == "OSError" and record.tool == "read_file"  # type: ignore[attr-defined]


def test_log_records_strip_control_characters_from_tool_names(
    memory: FailureMemory, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool name with a newline cannot forge a second log line."""
    caplog.set_level(logging.INFO, logger="scarguard")
    tool = "read\nINFO fake line"
    memory.record(tool, {"path": "gone.txt"}, error=MISSING)
    memory.check(tool, {"path": "gone.txt"})
    (record,) = _records(caplog, "refused")
    assert "\n" not in record.getMessage()


# -- OpenTelemetry -------------------------------------------------------------------------

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)


@pytest.fixture
def otel() -> Iterator[tuple[Any, InMemorySpanExporter, InMemoryMetricReader]]:
    spans = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    telemetry.instrument(meter_provider=MeterProvider(metric_readers=[reader]))
    yield provider.get_tracer("agent"), spans, reader
    telemetry.uninstrument()
    telemetry._state = "auto"  # the default for the tests that follow


def _points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], int]]]:
    found: dict[str, list[tuple[dict[str, Any], int]]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found[metric.name] = [
                    (dict(p.attributes or {}), int(p.value)) for p in metric.data.data_points
                ]
    return found


def test_guarded_calls_add_span_events_and_counters(
    memory: FailureMemory, otel: tuple[Any, InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    """Each check and record adds an event to the current span; the counters count them."""
    tracer, spans, reader = otel
    with tracer.start_as_current_span("agent step"):
        memory.check("read_file", {"path": "gone.txt"})
        memory.record("read_file", {"path": "gone.txt"}, error=MISSING)
        refused = memory.check("read_file", {"path": "gone.txt"})
    (span,) = spans.get_finished_spans()
    events = [(e.name, dict(e.attributes or {})) for e in span.events]
    assert [name for name, _ in events] == [
        "scarguard.decision", "scarguard.outcome", "scarguard.decision",
    ]  # fmt: skip
    assert events[0][1]["scarguard.decision"] == "allowed"
    assert events[1][1]["scarguard.blame"] == "agent"
    assert events[1][1]["scarguard.signature"] == "file_not_found"
    constraint_id = refused.violations[0].constraint.id
    assert events[2][1]["scarguard.decision"] == "refused"
    assert constraint_id in events[2][1]["scarguard.constraint_ids"]
    points = _points(reader)
    calls = {p[0]["decision"]: p[1] for p in points["scarguard.calls"]}
    assert calls == {"allowed": 1, "refused": 1}
    assert [(a["signature"], a["blame"], n) for a, n in points["scarguard.failures"]] == [
        ("file_not_found", "agent", 1)
    ]
    assert sum(n for a, n in points["scarguard.refusals"] if a["enforced"]) >= 1


def test_shadow_refusals_proven_wrong_are_counted(
    otel: tuple[Any, InMemorySpanExporter, InMemoryMetricReader],
) -> None:
    """In shadow mode a would-be refusal whose call succeeds bumps scarguard.refusals.wrong."""
    _, _, reader = otel
    with FailureMemory(":memory:", project="web", enforce=False) as memory:
        memory.record("read_file", {"path": "late.txt"}, error=MISSING)
        assert memory.check("read_file", {"path": "late.txt"}).shadow
        memory.record("read_file", {"path": "late.txt"}, ok=True)
    points = _points(reader)
    assert [n for _, n in points["scarguard.refusals.wrong"]] == [1]
    assert {p[0]["decision"] for p in points["scarguard.calls"]} == {"would_refuse"}
    assert all(not a["enforced"] for a, _ in points["scarguard.refusals"])


def test_no_span_events_outside_a_recording_span(
    memory: FailureMemory, otel: tuple[Any, InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    """Without a current span nothing fails and counters still count."""
    _, spans, reader = otel
    memory.check("read_file", {"path": "a.txt"})
    assert spans.get_finished_spans() == ()
    assert _points(reader)["scarguard.calls"] == [({"tool": "read_file", "decision": "allowed"}, 1)]


def test_uninstrument_stops_the_signals(
    memory: FailureMemory, otel: tuple[Any, InMemorySpanExporter, InMemoryMetricReader]
) -> None:
    """After uninstrument() no event is added, even inside a recording span."""
    tracer, spans, _ = otel
    telemetry.uninstrument()
    with tracer.start_as_current_span("agent step"):
        memory.check("read_file", {"path": "a.txt"})
    (span,) = spans.get_finished_spans()
    assert span.events == ()


@pytest.mark.slow
def test_opentelemetry_is_not_imported_unless_used() -> None:
    """A process that never imports opentelemetry runs guarded calls without importing it."""
    code = (
        "import sys\n"
        "from scarguard import FailureMemory, guarded_tool\n"
        "m = FailureMemory(':memory:', project='p')\n"
        "@guarded_tool(m)\n"
        "def read(path: str) -> str:\n"
        "    raise FileNotFoundError(path)\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        read('x')\n"
        "    except Exception:\n"
        "        pass\n"
        "print(sorted(n for n in sys.modules if n.startswith('opentelemetry')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_instrument_without_opentelemetry_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """instrument() names the extra to install when opentelemetry cannot be imported."""
    monkeypatch.setitem(sys.modules, "opentelemetry.metrics", None)
    with pytest.raises(telemetry.ConfigurationError, match=r"scarguard\[otel\]"):
        telemetry.instrument()
    assert trace.get_current_span() is not None


AUTO = """
import sys
from opentelemetry import trace
from scarguard import FailureMemory, telemetry
m = FailureMemory(':memory:', project='p')
print("before a provider:", telemetry._otel() is None)
if sys.argv[1] == "sdk":
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(provider)
    telemetry._asked_at = float("-inf")  # do not wait out the once-a-second look
    with trace.get_tracer("agent").start_as_current_span("step"):
        m.check("read_file", {"path": "a"})
    print("events:", [e.name for s in spans.get_finished_spans() for e in s.events])
else:
    print("after import only:", telemetry._otel() is None)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("sdk", ["before a provider: True", "events: ['scarguard.decision']"]),
        ("api", ["before a provider: True", "after import only: True"]),
    ],
)
def test_signals_start_by_themselves_once_the_application_sets_a_provider(
    mode: str, expected: list[str]
) -> None:
    """Auto mode: no signal while only the API is imported; span events once an SDK is set."""
    done = subprocess.run(
        [sys.executable, "-c", AUTO, mode], capture_output=True, text=True, timeout=60,
        check=True,
    )  # fmt: skip
    assert done.stdout.splitlines() == expected
