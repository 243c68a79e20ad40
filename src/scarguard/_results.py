"""What the memory reports back: a record's result, a session's convergence, a repeated kind.

Frozen values like those of :mod:`scarguard.model`, which they are built from: what
``FailureMemory.record`` did (:class:`RecordResult`), whether the agent makes progress
(:class:`Convergence`, :class:`ConvergenceStatus`), and a failure kind that repeats
(:class:`Pattern`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from scarguard._fields import TextEnum, as_str_tuple
from scarguard.model import Blame, Constraint, Failure

if TYPE_CHECKING:
    from scarguard.naming.classify import Classification

__all__ = ["Convergence", "ConvergenceStatus", "Pattern", "RecordResult"]


class ConvergenceStatus(TextEnum):
    """Where a session stands (:attr:`Convergence.status`); each compares equal to its name."""

    PROGRESSING = "progressing"
    """Calls are still making progress."""
    PLATEAU = "plateau"
    """Scored: no improvement within the window."""
    STUCK = "stuck"
    """The recent calls all failed or were refused."""
    EXHAUSTED = "exhausted"
    """Every action class in use is blocked."""
    LOOPING = "looping"
    """The latest call returned the identical result again, with nothing changed in between."""


@attrs.frozen
class Convergence:
    """Whether the agent is making progress.

    Attributes:
        status: ``progressing``, ``plateau`` (scored: no improvement within the window),
            ``stuck`` (recent calls all failed or were refused), ``exhausted`` (every action
            class in use is blocked) or ``looping`` (the latest call returned the identical
            result again, with nothing changed in between).
        done: Whether the loop should stop (plateau, stuck, exhausted or looping; never
            merely because calls succeed).
        attempts: Calls recorded in this session.
        failures: Failures recorded in this session.
        blocked: Calls refused in this session.
        best_score: Best score seen (scored domains).
        since_improvement: Scored attempts since the best score last improved.
        reason: One sentence saying why the status is what it is.
    """

    status: ConvergenceStatus = attrs.field(converter=ConvergenceStatus)
    done: bool
    attempts: int
    failures: int
    blocked: int
    best_score: float | None = None
    since_improvement: int = 0
    reason: str = ""


@attrs.frozen
class RecordResult:
    """What ``FailureMemory.record`` did.

    Attributes:
        failure: The stored failure (``None`` for a success).
        new_constraints: Constraints learned or escalated by this record.
        lifted: Constraints this record lifted (evidence that they no longer hold).
        convergence: The session's convergence after the record (computed when first read).
        classification: How the failure was understood while it was recorded (signature,
            blame, retry hint); ``None`` for a success. Retries use it instead of
            classifying the error again.
    """

    failure: Failure | None
    new_constraints: tuple[Constraint, ...]
    lifted: tuple[Constraint, ...]
    _convergence: Convergence | Callable[[], Convergence] = attrs.field(
        alias="convergence", eq=False, repr=False
    )
    classification: Classification | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def convergence(self) -> Convergence:
        """The session's convergence after the record."""
        value = self._convergence
        if not isinstance(value, Convergence):
            value = value()
            object.__setattr__(self, "_convergence", value)
        return value

    @property
    def blame(self) -> Blame | None:
        """The failure's blame, or ``None`` for a success."""
        return self.failure.blame if self.failure else None

    @property
    def signature(self) -> str | None:
        """The failure's signature, or ``None`` for a success."""
        return self.failure.signature if self.failure else None


@attrs.frozen
class Pattern:
    """A failure kind that repeats, as ``patterns()`` and ``PromptGuard`` report it.

    Attributes:
        signature: The failure kind.
        label: A short human label for it.
        count: How many times it failed.
        blame: Who is to blame.
        hint: What to do instead (fixed text from the signature bank).
        last_seen: When it last failed.
        tools: The tools it failed in, most frequent first.
        targets: The targets it failed on, most frequent first.
        example: The latest redacted error excerpt (never shown unless asked for).
    """

    signature: str
    label: str
    count: int
    blame: Blame = attrs.field(converter=Blame)
    hint: str
    last_seen: float
    tools: tuple[str, ...] = attrs.field(default=(), converter=as_str_tuple)
    targets: tuple[str, ...] = attrs.field(default=(), converter=as_str_tuple)
    example: str | None = None
