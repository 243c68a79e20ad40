"""Convergence: is this session's agent making progress, spinning, or out of moves?

Scored domains (ML training) converge on a plateau: no improvement of the best score by more
than the tolerance, in the policy's direction, for a window of scored attempts. Unscored tool
loops are ``stuck`` when the most recent calls all failed or were refused, ``exhausted``
when every action class in use had its latest call refused, and ``looping`` when the latest
call returned the identical result as often as ``Policy.loop_warn`` with nothing changed in
between (see :mod:`scarguard.learning.progress`). A run of successes is never "done": that is
the anchor design's bug this module exists to avoid.
"""

from __future__ import annotations

import enum

import attrs

from scarguard._results import Convergence
from scarguard.policy import Policy

__all__ = ["Event", "SessionTracker"]


class Event(str, enum.Enum):
    """What happened to one call."""

    OK = "ok"
    FAILED = "failed"
    BLOCKED = "blocked"


# the members ok() compares with, looked up once: looking a member up costs about as much as
# the rest of ok() on Python 3.11
_OK = Event.OK
_BLOCKED = Event.BLOCKED


@attrs.define
class SessionTracker:
    """Keep the per-session counts that convergence is judged on, updated incrementally.

    Nothing here grows with the session's length: the tail is a run length, the classes a
    dictionary of each class's latest event.
    """

    policy: Policy
    attempts: int = 0
    failures: int = 0
    blocked: int = 0
    best_score: float | None = None
    since_improvement: int = 0
    scored: int = 0
    bad_run: int = 0
    last_by_class: dict[str, Event] = attrs.field(factory=dict)
    blocked_classes: int = 0
    loop_reason: str = ""
    """Why the latest call is a no-progress repeat ("" when it is not)."""

    def ok(self, action_class: str | None) -> None:
        """Add one unscored success (``note(Event.OK, action_class)``, the common case)."""
        self.loop_reason = ""
        self.attempts += 1
        self.bad_run = 0
        if action_class:
            before = self.last_by_class.get(action_class)
            if before is not _OK:  # (a class's calls succeed in a row: nothing to change)
                self.last_by_class[action_class] = _OK
                if before is _BLOCKED:
                    self.blocked_classes -= 1

    def note(self, event: Event, action_class: str | None, score: float | None = None) -> None:
        """Add one call's fate to the history."""
        self.loop_reason = ""
        if event is Event.BLOCKED:
            self.blocked += 1
        else:
            self.attempts += 1
            if event is Event.FAILED:
                self.failures += 1
        self.bad_run = 0 if event is Event.OK else self.bad_run + 1
        if action_class:
            before = self.last_by_class.get(action_class)
            self.last_by_class[action_class] = event
            self.blocked_classes += (event is Event.BLOCKED) - (before is Event.BLOCKED)
        if score is not None:
            self._score(score)

    def _score(self, score: float) -> None:
        self.scored += 1
        best = self.best_score
        sign = 1.0 if self.policy.direction == "maximize" else -1.0
        if best is None or sign * (score - best) > self.policy.plateau_tolerance:
            self.best_score = score
            self.since_improvement = 0
        else:
            self.since_improvement += 1

    def convergence(self) -> Convergence:
        """Return the session's convergence now."""
        status, reason = "progressing", "calls are still making progress"
        window = self.policy.stuck_window
        if self.scored and self.since_improvement >= self.policy.plateau_window:
            status = "plateau"
            reason = (
                f"the best score has not improved by more than {self.policy.plateau_tolerance}"
                f" for {self.since_improvement} scored attempts"
            )
        elif self.last_by_class and self.blocked_classes == len(self.last_by_class):
            status = "exhausted"
            reason = "the latest call of every action class in use was refused"
        elif self.bad_run >= window:
            status = "stuck"
            reason = f"the last {window} calls all failed or were refused"
        elif self.loop_reason:
            status, reason = "looping", self.loop_reason
        return Convergence(
            status=status,
            done=status != "progressing",
            attempts=self.attempts,
            failures=self.failures,
            blocked=self.blocked,
            best_score=self.best_score,
            since_improvement=self.since_improvement,
            reason=reason,
        )
