"""The failure row of a recorded failure, and the paths it keeps: redacted, built once.

A mixin of :class:`~scarguard.FailureMemory` (through the failure side,
``learning._recording``): what is stored of a failed call is redacted first (its
arguments, its error text), and the paths the failure depends on are kept only when they
need no redaction. Agents repeat their mistakes, so the redacted error texts and the
answers about paths are remembered, per redactor (and root).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from scarguard._frozen import EMPTY
from scarguard.model import Blame, Call, Failure, Outcome, Scope
from scarguard.naming._signature import Signature
from scarguard.redact import Redactor

__all__ = ["FailureRows"]

_NO_DETAILS = Outcome(ok=False)
"""The details of a shadowed call's failure: none (its arguments and error are not kept)."""
_REDACTED_ERRORS = 256
"""Redacted error texts (and dependency paths) remembered per memory (see
``_redacted_error`` and ``_kept_paths``)."""


class FailureRows:
    """Building a failure's row and choosing the dependency paths it keeps."""

    scope: Scope
    redactor: Redactor
    root: str
    _redacted: dict[str, str]
    _redacted_by: Redactor
    _kept: (
        tuple[Redactor, str, dict[str, str | None], dict[tuple[str, ...], tuple[str, ...]]]
        | None
    ) = None

    def _failure(
        self,
        call: Call,
        signature: Signature,
        blame: Blame,
        now: float,
        outcome: Outcome | None = None,
    ) -> Failure:
        """Build the failure record of ``call``: redacted, with the outcome's details if any.

        A shadowed call's real failure is counted without its arguments and error text.
        """
        details = _NO_DETAILS if outcome is None else outcome
        return Failure(  # keywords, not a dictionary of details: this runs on every failure
            tool=call.tool,
            fingerprint=call.fingerprint,
            signature=signature.name,
            blame=blame,
            at=now,
            session=self.scope.session,
            action_class=call.action_class,
            targets=call.targets,
            args=EMPTY if outcome is None else self.redactor.args(call.args),
            error=self._redacted_error(details.error) if details.error else None,
            status_code=details.status_code,
            duration_ms=details.duration_ms,
            agent=details.agent,
            provider=details.provider,
        )

    def _redacted_error(self, text: str) -> str:
        """Return the redacted error text; a text seen lately is not scanned again.

        An agent repeating a mistake repeats its error text, and redaction is a pattern
        scan of the whole text: the last few hundred answers are kept (by the raw text).
        """
        redactor = self.redactor
        if self._redacted_by is not redactor:  # a new redactor: its own answers
            self._redacted, self._redacted_by = {}, redactor
        known = self._redacted.get(text)
        if known is None:
            known = redactor(text)
            if len(self._redacted) >= _REDACTED_ERRORS:
                self._redacted.clear()
            self._redacted[text] = known
        return known

    def _kept_paths(self, paths: Sequence[str]) -> tuple[str, ...]:
        """Return the absolute form of the dependency paths that need no redaction.

        The same paths recur on every failure (the manifests a command may read): each
        one's answer, and the answer for each set of them, is remembered, for this redactor
        and root.
        """
        kept = self._kept
        if kept is None or kept[0] is not self.redactor or kept[1] != self.root:
            kept = self._kept = (self.redactor, self.root, {}, {})
        together = kept[3]
        key = tuple(paths)
        out = together.get(key)
        if out is None:
            known = kept[2]
            out = tuple(f for f in (self._kept_path(known, p) for p in key) if f is not None)
            if len(together) >= _REDACTED_ERRORS:
                together.clear()
            together[key] = out
        return out

    def _kept_path(self, known: dict[str, str | None], path: str) -> str | None:
        if path in known:
            return known[path]
        full = os.path.join(self.root, path) if self._storable_path(path) else None
        if len(known) >= _REDACTED_ERRORS:
            known.clear()
        known[path] = full
        return full

    def _storable_path(self, path: str) -> bool:
        """Return whether a dependency path needs no redaction (one that does is not kept).

        The same paths recur on every failure (the manifests a command may read), so the
        answer is the redactor's cached one for targets: ``target(p) == p`` exactly when
        redacting ``p`` changes nothing and ``p`` is at most ``max_value`` long.
        """
        if len(path) <= self.redactor.max_value:
            return self.redactor.target(path) == path
        return self.redactor(path) == path
