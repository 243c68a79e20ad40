"""What scarguard tells operators: log records and, when in use, OpenTelemetry signals.

Logging goes through the ``scarguard`` logger (``logging.getLogger("scarguard")``):

- ``INFO``: a refused call, a call shadow mode would have refused, a learned, lifted or
  forgotten constraint (with the tool, the constraint kind and id);
- ``WARNING``: bookkeeping trouble (a check or record that failed; the tool call went on);
- ``DEBUG``: every decision.

Every record carries its fields in ``extra`` as attributes of the
:class:`logging.LogRecord`: ``event`` (``"refused"``, ``"would_refuse"``, ``"learned"``,
``"lifted"``, ``"forgotten"``, ``"decision"``, ``"outcome"``, ``"bookkeeping"``),
``tool``, ``kind``, ``constraint_id``, ``signature``, ``blame``, ``workspace`` and
``project``, as far as they apply. Nothing in a log record is raw agent input: tool names
and targets are stripped of control characters and redacted, errors are not logged.

OpenTelemetry is optional (``pip install "scarguard[otel]"``: the API package only; the
application brings its SDK). scarguard never imports it by itself: signals are emitted once
the application uses OpenTelemetry (it imported ``opentelemetry`` and set a tracer or meter
provider), or after :func:`instrument`; :func:`uninstrument` stops them. Each check adds a
``scarguard.decision`` event to the current span, each record a ``scarguard.outcome``
event, and four counters count:

=============================  ===========================================================
``scarguard.calls``            checks, by ``tool`` and ``decision`` (``allowed``,
                               ``refused``, ``would_refuse``)
``scarguard.refusals``         refusals by ``tool``, ``kind`` and ``enforced`` (``False``:
                               shadow mode)
``scarguard.failures``         recorded failures by ``tool``, ``signature`` and ``blame``
``scarguard.refusals.wrong``   shadow-mode refusals proven wrong (the call then succeeded),
                               by ``tool`` and ``kind``
=============================  ===========================================================
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from scarguard.errors import ConfigurationError
from scarguard.model import Constraint, Scope

__all__ = [
    "LOGGER",
    "bookkeeping",
    "decision_signals",
    "emit",
    "instrument",
    "log_constraints",
    "outcome_signals",
    "shadow_signals",
    "uninstrument",
]

LOGGER = logging.getLogger("scarguard")
"""The logger every scarguard record goes to."""

_AUTO = "auto"
_state: str = _AUTO
"""``"auto"`` (on once the application imported opentelemetry), ``"on"`` or ``"off"``."""
_meter_provider: Any = None
_signals: _Signals | None = None
_signals_lock = threading.Lock()
_ASK_EVERY = 1.0
"""Seconds between two looks at whether the application set an OpenTelemetry provider."""
_asked_at = float("-inf")
_live = False


class _Signals:
    """The OpenTelemetry instruments, created once (imports opentelemetry)."""

    def __init__(self, meter_provider: Any) -> None:
        from opentelemetry import metrics, trace

        from scarguard._version import __version__

        self.trace = trace
        if meter_provider is None:
            meter = metrics.get_meter("scarguard", __version__)
        else:
            meter = meter_provider.get_meter("scarguard", __version__)
        self.calls = meter.create_counter(
            "scarguard.calls", unit="{call}", description="Guarded calls checked"
        )
        self.refusals = meter.create_counter(
            "scarguard.refusals", unit="{call}", description="Calls refused (or would-be, shadow)"
        )
        self.failures = meter.create_counter(
            "scarguard.failures", unit="{call}", description="Failures recorded"
        )
        self.wrong = meter.create_counter(
            "scarguard.refusals.wrong",
            unit="{call}",
            description="Shadow-mode refusals proven wrong: the call then succeeded",
        )

    def event(self, name: str, attributes: Mapping[str, Any]) -> None:
        span = self.trace.get_current_span()
        if span.is_recording():
            span.add_event(name, attributes=dict(attributes))


def instrument(*, meter_provider: Any = None) -> None:
    """Emit OpenTelemetry span events and counters, whether or not the app imported it.

    Args:
        meter_provider: The ``MeterProvider`` counters are created with (default: the
            global one, as set by ``opentelemetry.metrics.set_meter_provider``).

    Raises:
        ConfigurationError: ``opentelemetry-api`` is not installed.
    """
    global _state, _meter_provider, _signals
    try:
        import opentelemetry.metrics
        import opentelemetry.trace  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(
            'OpenTelemetry is not installed: pip install "scarguard[otel]"'
        ) from exc
    with _signals_lock:
        _state, _meter_provider, _signals = "on", meter_provider, None


def uninstrument() -> None:
    """Stop emitting OpenTelemetry signals (even when the application uses OpenTelemetry)."""
    global _state, _meter_provider, _signals
    with _signals_lock:
        _state, _meter_provider, _signals = "off", None, None


def _configured() -> bool:
    """Return whether the application set a tracer or meter provider (an SDK's)."""
    trace = sys.modules.get("opentelemetry.trace")
    metrics = sys.modules.get("opentelemetry.metrics")
    unset = {"ProxyTracerProvider", "NoOpTracerProvider", "_ProxyMeterProvider",
             "NoOpMeterProvider"}  # fmt: skip
    providers = [
        getattr(module, getter)()
        for module, getter in ((trace, "get_tracer_provider"), (metrics, "get_meter_provider"))
        if module is not None
    ]
    return any(type(p).__name__ not in unset for p in providers)


def _in_use() -> bool:
    """Return whether the application uses OpenTelemetry (re-asked at most once a second).

    Imported but without a provider set (a library pulled the API in), every signal would
    be a no-op costing microseconds per call: skip them until a provider is set.
    """
    global _asked_at, _live
    if "opentelemetry" not in sys.modules:
        return False
    now = time.monotonic()
    if now - _asked_at >= _ASK_EVERY:
        _asked_at, _live = now, _configured()
    return _live


def _unheard() -> bool:
    """Return whether a routine signal reaches nobody: no DEBUG log, OpenTelemetry unused.

    The first test of every decision and outcome signal (twice per guarded call), so the
    common case (OpenTelemetry never imported) is answered without another call.
    """
    if _state != "off" and ("opentelemetry" in sys.modules or _state != _AUTO):
        return False
    return not LOGGER.isEnabledFor(logging.DEBUG)


def _otel() -> _Signals | None:
    """Return the instruments, or ``None`` when OpenTelemetry is not in use."""
    global _signals
    if _state == "off":
        return None
    # (not imported at all, the common case, is answered without a call: signals run twice
    # per guarded call)
    if _state == _AUTO and ("opentelemetry" not in sys.modules or not _in_use()):
        return None
    signals = _signals
    if signals is None:
        with _signals_lock:
            if _signals is None:
                try:
                    _signals = _Signals(_meter_provider)
                except ImportError:  # a partial install: stay quiet rather than fail calls
                    return None
            signals = _signals
    return signals


def _fields(scope: Scope, **fields: Any) -> dict[str, Any]:
    return {"workspace": scope.workspace, "project": scope.project, **fields}


def emit(
    level: int,
    event: str,
    message: str,
    scope: Scope,
    **fields: Any,
) -> None:
    """Log one record with its structured fields in ``extra`` (only when enabled)."""
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, message, extra=_fields(scope, event=event, **fields))


def log_constraints(event: str, constraints: Iterable[Constraint], scope: Scope) -> None:
    """Log learned, lifted or forgotten constraints at INFO, one record each."""
    if not LOGGER.isEnabledFor(logging.INFO):
        return
    for c in constraints:
        tool = _safe(c.tool or c.action_class or "any call")
        LOGGER.info(
            "%s %s constraint %s on %s (%s)",
            event,
            c.kind.value,
            c.id,
            tool,
            c.level.value,
            extra=_fields(
                scope,
                event=event,
                tool=c.tool,
                kind=c.kind.value,
                constraint_id=c.id,
                signature=c.signature,
                level=c.level.value,
            ),
        )


_redactor: Any = None


def _safe_line(text: str) -> str:
    """Return ``text`` redacted, on one line, without control characters (no forged lines)."""
    global _redactor
    from scarguard.redact import Redactor, strip_control

    if _redactor is None:
        _redactor = Redactor()
    return " ".join(strip_control(_redactor(text)).split())


def _safe(text: str) -> str:
    """Return ``text`` on one line, without control characters, at most 80 long."""
    from scarguard.redact import strip_control

    text = " ".join(strip_control(text).split())
    return text if len(text) <= 80 else text[:79] + "…"


def decision_signals(
    tool: str, decision: str, blocking: Sequence[Constraint], scope: Scope
) -> None:
    """Log a decision and send its OpenTelemetry signals.

    Args:
        tool: The tool's name.
        decision: ``"allowed"``, ``"refused"`` or ``"would_refuse"``.
        blocking: The block-level constraints behind a refusal (empty when allowed).
        scope: The memory's tenant.
    """
    if not blocking and _unheard():
        return  # the allowed call nobody listens for: what nearly every call is
    if blocking and LOGGER.isEnabledFor(logging.INFO):
        first = blocking[0]
        verb = "refused" if decision == "refused" else "would refuse (shadow mode)"
        LOGGER.info(
            "%s %s call: %s constraint %s%s",
            verb,
            _safe(tool),
            first.kind.value,
            first.id,
            f" (+{len(blocking) - 1} more)" if len(blocking) > 1 else "",
            extra=_fields(
                scope,
                event=decision,
                tool=tool,
                kind=first.kind.value,
                constraint_id=first.id,
                constraint_ids=[c.id for c in blocking],
                signature=first.signature,
            ),
        )
    elif LOGGER.isEnabledFor(logging.DEBUG):
        LOGGER.debug(
            "%s %s call",
            decision,
            _safe(tool),
            extra=_fields(scope, event="decision", tool=tool, decision=decision),
        )
    otel = _otel()
    if otel is None:
        return
    otel.calls.add(1, {"tool": tool, "decision": decision})
    for c in blocking:
        otel.refusals.add(
            1, {"tool": tool, "kind": c.kind.value, "enforced": decision == "refused"}
        )
    otel.event(
        "scarguard.decision",
        {
            "scarguard.tool": tool,
            "scarguard.decision": decision,
            "scarguard.constraint_ids": [c.id for c in blocking],
            "scarguard.kinds": [c.kind.value for c in blocking],
        },
    )


def outcome_signals(
    tool: str,
    signature: str | None,
    blame: str | None,
    learned: Sequence[Constraint],
    lifted: Sequence[Constraint],
    scope: Scope,
) -> None:
    """Log what a record learned or lifted and send its OpenTelemetry signals."""
    if not learned and not lifted and _unheard():
        return
    if learned:
        log_constraints("learned", learned, scope)
    if lifted:
        log_constraints("lifted", lifted, scope)
    if LOGGER.isEnabledFor(logging.DEBUG):
        LOGGER.debug(
            "recorded %s %s",
            _safe(tool),
            "success" if signature is None else f"failure {signature} (blame {blame})",
            extra=_fields(scope, event="outcome", tool=tool, signature=signature, blame=blame),
        )
    otel = _otel()
    if otel is None:
        return
    if signature is not None:
        otel.failures.add(1, {"tool": tool, "signature": signature, "blame": blame or ""})
    otel.event(
        "scarguard.outcome",
        {
            "scarguard.tool": tool,
            "scarguard.ok": signature is None,
            "scarguard.signature": signature or "",
            "scarguard.blame": blame or "",
            "scarguard.learned": [c.id for c in learned],
            "scarguard.lifted": [c.id for c in lifted],
        },
    )


def shadow_signals(
    tool: str, verdict: str, constraints: Sequence[Constraint], scope: Scope
) -> None:
    """Log and count the real outcome of a call shadow mode would have refused.

    Args:
        tool: The tool's name.
        verdict: ``"right"`` (it failed the same way), ``"wrong"`` (it succeeded) or
            ``"other"`` (it failed another way).
        constraints: The constraints that would have refused it.
        scope: The memory's tenant.
    """
    if LOGGER.isEnabledFor(logging.INFO):
        LOGGER.info(
            "shadow mode: refusing %s would have been %s",
            _safe(tool),
            {"right": "right (it failed the same way)", "wrong": "wrong (it succeeded)"}.get(
                verdict, "right, for another reason (it failed another way)"
            ),
            extra=_fields(
                scope,
                event="shadow_verdict",
                tool=tool,
                verdict=verdict,
                constraint_ids=[c.id for c in constraints],
            ),
        )
    if verdict != "wrong":
        return
    otel = _otel()
    if otel is not None:
        for c in constraints:
            otel.wrong.add(1, {"tool": tool, "kind": c.kind.value})


def bookkeeping(
    message: str,
    tool: str | None,
    scope: Scope | None,
    error: BaseException,
    *,
    repeat: bool = False,
) -> None:
    """Log bookkeeping trouble at WARNING, or DEBUG for a ``repeat`` of a kind logged before.

    The tool call went on unaffected; the message holds no agent input but the tool's name.
    """
    level = logging.DEBUG if repeat else logging.WARNING
    if LOGGER.isEnabledFor(level):
        fields: dict[str, Any] = {"event": "bookkeeping", "tool": tool,
                                  "error_type": type(error).__name__}  # fmt: skip
        if scope is not None:
            fields = _fields(scope, **fields)
        LOGGER.log(level, "%s", _safe_line(message), extra=fields)
