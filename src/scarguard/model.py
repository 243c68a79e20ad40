"""Frozen value classes shared by the engine, the stores and the public API.

Every store reads and writes these through one serialiser (``to_row``/``from_row``), so
identical history gives identical values whatever the backend.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs

from scarguard._constraint_params import ConstraintParams
from scarguard._fields import (
    TextEnum,
    as_opt_text,
    as_params,
    as_str_tuple,
    as_text,
    as_text_tuple,
    finite_or_none,
)
from scarguard._frozen import EMPTY, freeze_mapping
from scarguard._json import compact

__all__ = [
    "Blame",
    "Call",
    "Constraint",
    "ConstraintKind",
    "Decision",
    "Direction",
    "Failure",
    "Level",
    "Outcome",
    "Scope",
    "Violation",
]


class Blame(str, enum.Enum):
    """Who caused a failure, which decides whether scarguard may learn from it."""

    AGENT = "agent"
    """The agent's choice caused it (a bad edit, a missing file): learn from it."""
    HARNESS = "harness"
    """Infrastructure caused it (timeout, rate limit, 5xx, disk full): never learn from it."""
    UNKNOWN = "unknown"
    """Unclear: learn only that the identical call fails."""


class ConstraintKind(str, enum.Enum):
    """The rungs of the learning ladder, narrowest first."""

    EXACT_CALL = "exact_call"
    """The identical call (same fingerprint) failed with the same signature."""
    MISSING_TARGET = "missing_target"
    """A target (a path) is known not to exist; calls that need it are refused."""
    TOOL_TARGET = "tool_target"
    """One tool keeps failing the same way on one target with varying arguments."""
    BANNED_STRATEGY = "banned_strategy"
    """An action class keeps failing the same way across several targets."""
    PARAMETER_BAN = "parameter_ban"
    """A parameter value that was changed to and then failed (ML adapter)."""
    DOMINANCE_BAN = "dominance_ban"
    """Every configuration at least as large as one that ran out of memory (ML adapter)."""
    RADIUS_LIMIT = "radius_limit"
    """A cap on how many targets one call may touch."""
    NO_PROGRESS = "no_progress"
    """The identical call keeps returning the identical result with nothing changed (kept
    in the memory of one session, never stored)."""


class Level(str, enum.Enum):
    """What a matching constraint does to a call."""

    WARN = "warn"
    """Allow the call, with a warning in the decision's message."""
    BLOCK = "block"
    """Refuse the call."""


class Direction(TextEnum):
    """Which way a score improves (:attr:`~scarguard.Policy.direction`); each equals its name."""

    MINIMIZE = "minimize"
    """Lower is better (a loss, a latency)."""
    MAXIMIZE = "maximize"
    """Higher is better (an accuracy, a reward)."""


@attrs.frozen
class Scope:
    """Where records belong: tenancy (workspace, project) and the writing process's session."""

    workspace: str = "default"
    project: str = "default"
    session: str = ""


@attrs.frozen
class Call:
    """What the agent wants to do, as the adapter understands it.

    Attributes:
        tool: The tool's name.
        args: The arguments, bound by name (``self`` and injected context left out).
        targets: The files, URLs or other resources the call touches, in argument order.
        action_class: The adapter's class for the call (``file_edit``, ``scale_up_width``...).
        fingerprint: Hash of the tool and the canonical JSON of its normalised arguments.
        params: Numeric configuration the ML adapter tracks (empty for tool calls).
        changed: Parameter keys that differ from the previous successful call (ML adapter).
    """

    tool: str
    args: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze_mapping)
    targets: tuple[str, ...] = attrs.field(default=(), converter=as_str_tuple)
    action_class: str | None = None
    fingerprint: str = ""
    params: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze_mapping)
    changed: tuple[str, ...] = attrs.field(default=(), converter=as_str_tuple)

    @classmethod
    def described(
        cls,
        tool: str,
        args: Mapping[str, Any],
        targets: tuple[str, ...],
        action_class: str | None,
        fingerprint: str,
    ) -> Call:
        """Return the call an adapter described: ``Call(tool, args, targets, ...)``.

        For targets that are a tuple of strings already (what adapters make), without
        converting them again: this runs on every described call. ``args`` are frozen as
        always.
        """
        call = object.__new__(cls)
        put = object.__setattr__
        put(call, "tool", tool)
        put(call, "args", freeze_mapping(args))
        put(call, "targets", targets)
        put(call, "action_class", action_class)
        put(call, "fingerprint", fingerprint)
        put(call, "params", EMPTY)
        put(call, "changed", ())
        return call


@attrs.frozen
class Outcome:
    """What happened when a call ran.

    Attributes:
        ok: Whether the call succeeded.
        error: The error text (never shown raw to the LLM).
        exception_type: Qualified name of the exception's type, when one was raised.
        status_code: An HTTP-like status code, when the tool reports one.
        duration_ms: How long the call took.
        score: A score for scored domains (ML training).
        agent: Which agent made the call.
        provider: Which model provider the agent used.
    """

    ok: bool
    error: str | None = None
    exception_type: str | None = None
    status_code: int | None = None
    duration_ms: float | None = attrs.field(default=None, converter=finite_or_none)
    score: float | None = attrs.field(default=None, converter=finite_or_none)
    agent: str | None = None
    provider: str | None = None


_FAILURE_JSON_FIELDS = ("targets", "args")
_ROW_LIST = compact()
_ROW_MAPPING = compact(sort_keys=True)
"""How a failure row writes its targets and arguments (``json.dumps`` with these options)."""


@attrs.frozen
class Failure:
    """A recorded failed outcome: the scar.

    Attributes:
        tool: The tool that failed.
        fingerprint: The call's fingerprint.
        signature: The named failure kind, or ``error:<hash>`` for unmatched errors.
        blame: Who caused it.
        at: When it was recorded (seconds since the epoch, from the memory's clock).
        session: The session id of the process that recorded it.
        action_class: The adapter's class for the call.
        targets: The call's targets.
        args: The redacted, size-bounded arguments.
        error: A redacted, size-bounded excerpt of the error text.
        status_code: The status code, when there was one.
        duration_ms: How long the call took.
        agent: Which agent made the call.
        provider: Which model provider the agent used.
        id: The store's sequence number for the record (``None`` until stored).
    """

    tool: str = attrs.field(converter=as_text)
    fingerprint: str
    signature: str = attrs.field(converter=as_text)
    blame: Blame = attrs.field(converter=Blame)
    at: float
    session: str = attrs.field(default="", converter=as_text)
    action_class: str | None = attrs.field(default=None, converter=as_opt_text)
    targets: tuple[str, ...] = attrs.field(default=(), converter=as_text_tuple)
    args: Mapping[str, Any] = attrs.field(default=EMPTY, converter=freeze_mapping)
    error: str | None = attrs.field(default=None, converter=as_opt_text)
    status_code: int | None = None
    duration_ms: float | None = attrs.field(default=None, converter=finite_or_none)
    agent: str | None = attrs.field(default=None, converter=as_opt_text)
    provider: str | None = attrs.field(default=None, converter=as_opt_text)
    id: int | None = None

    def to_row(self) -> dict[str, Any]:
        """Return a flat, JSON-safe row (lists and mappings as JSON text), fields in order."""
        global _last_row
        last = _last_row
        if last[0] is self:  # the row just written of this very failure (or of its id-less self)
            return dict(last[1])
        row = {
            "tool": self.tool,
            "fingerprint": self.fingerprint,
            "signature": self.signature,
            "blame": self.blame.value,
            "at": self.at,
            "session": self.session,
            "action_class": self.action_class,
            "targets": _ROW_LIST(self.targets),
            "args": _ROW_MAPPING(self.args),
            "error": self.error,
            "status_code": self.status_code,
            "duration_ms": self.duration_ms,
            "agent": self.agent,
            "provider": self.provider,
            "id": self.id,
        }
        _last_row = (self, dict(row))
        return row

    def _with_id(self, id: int | None) -> Failure:
        """Return this failure with the store's ``id``: ``attrs.evolve(self, id=id)``.

        Without calling the converters again (every value already went through them): a
        store does this for every failure it writes. A row just made of this failure is
        the stored one's too, with the id (the receipt's payload is that row).
        """
        global _last_row
        stored = object.__new__(Failure)
        for name in _FAILURE_FIELDS:
            object.__setattr__(stored, name, getattr(self, name))
        object.__setattr__(stored, "id", id)
        last = _last_row
        if last[0] is self:
            row = dict(last[1])
            row["id"] = id
            _last_row = (stored, row)
        return stored

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Failure:
        """Build a failure from a row written by :meth:`to_row` (extra columns are ignored)."""
        values = {f.name: row[f.name] for f in attrs.fields(cls) if f.name in row}
        for name in _FAILURE_JSON_FIELDS:
            if isinstance(values.get(name), str):
                values[name] = json.loads(values[name])
        return cls(**values)


_FAILURE_FIELDS = tuple(f.name for f in attrs.fields(Failure) if f.name != "id")
_last_row: tuple[Failure | None, dict[str, Any]] = (None, {})
"""The failure whose row was made last, and that row (a copy is handed out).

A failure's row is asked for twice as it is recorded: by the store that writes it, and for
its receipt. A failure is immutable, so the row of the very same object is the same; a
thread that replaces this pair in between only makes the next call compute the row.
"""


@attrs.frozen
class Constraint:
    """A learned rule.

    Attributes:
        kind: Which rung of the ladder learned it.
        key: The scope key, unique per workspace and project (``exact:<fp>:<sig>``...).
        signature: The failure kind that taught it.
        reason: Why it exists, in words safe to show an LLM.
        hint: What to do instead.
        level: Whether it warns or blocks.
        occurrences: How many failures corroborate it.
        created_at: When it was learned.
        updated_at: When it was last corroborated.
        expires_at: When it lapses (``None``: never).
        tool: The tool it applies to, if one.
        target: The target it applies to, if one.
        action_class: The action class it applies to, if one.
        fingerprint: The call fingerprint it applies to, if one.
        params: Kind-specific data (:class:`ConstraintParams`: the counter, the banned value,
            the dominated configuration, the radius, the observed state tokens).
    """

    kind: ConstraintKind = attrs.field(converter=ConstraintKind)
    key: str = attrs.field(converter=as_text)
    signature: str = attrs.field(converter=as_text)
    reason: str = attrs.field(converter=as_text)
    hint: str = attrs.field(converter=as_text)
    level: Level = attrs.field(converter=Level)
    occurrences: int
    created_at: float
    updated_at: float
    expires_at: float | None = None
    tool: str | None = attrs.field(default=None, converter=as_opt_text)
    target: str | None = attrs.field(default=None, converter=as_opt_text)
    action_class: str | None = attrs.field(default=None, converter=as_opt_text)
    fingerprint: str | None = None
    params: ConstraintParams = attrs.field(factory=ConstraintParams, converter=as_params)

    @property
    def id(self) -> str:
        """A short stable id derived from the key, for ``forget()`` and the CLI."""
        return hashlib.sha256(self.key.encode()).hexdigest()[:12]

    def active(self, now: float) -> bool:
        """Return whether the constraint is still in force at ``now``."""
        return self.expires_at is None or now < self.expires_at

    def to_row(self) -> dict[str, Any]:
        """Return a flat, JSON-safe row (params as JSON text)."""
        row = attrs.asdict(self, recurse=False)
        row["kind"] = self.kind.value
        row["level"] = self.level.value
        row["params"] = json.dumps(self.params.to_dict(), sort_keys=True, separators=(",", ":"))
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Constraint:
        """Build a constraint from a row written by :meth:`to_row`."""
        values = {f.name: row[f.name] for f in attrs.fields(cls) if f.name in row}
        if isinstance(values.get("params"), str):
            values["params"] = json.loads(values["params"])
        return cls(**values)


@attrs.frozen
class Violation:
    """One constraint a call runs into.

    Attributes:
        constraint: The constraint.
        reason: A sentence for the LLM: what is refused (or warned about) and why.
    """

    constraint: Constraint
    reason: str

    @property
    def kind(self) -> ConstraintKind:
        """The kind of the constraint."""
        return self.constraint.kind


@attrs.frozen
class Decision:
    """The answer of ``FailureMemory.check``.

    Attributes:
        allowed: Whether the call may run.
        call: The call as the adapter described it.
        violations: Blocking constraints the call runs into (empty when allowed, except in
            shadow mode).
        warnings: Warning-level constraints the call runs into.
        message: Text for the LLM: empty when allowed without warnings.
        shadow: The call would have been refused, but the memory is in shadow mode
            (``enforce=False``): ``allowed`` is true and ``violations`` says what would
            have refused it.
    """

    allowed: bool
    call: Call
    violations: tuple[Violation, ...] = ()
    warnings: tuple[Violation, ...] = ()
    message: str = ""
    shadow: bool = False

    def __bool__(self) -> bool:
        return self.allowed
