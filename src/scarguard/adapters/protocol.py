"""The adapter contract: how a domain's calls become :class:`~scarguard.Call` values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from scarguard.model import Blame, Call, Outcome

if TYPE_CHECKING:
    from scarguard.naming._signature import Signature

__all__ = ["Adapter"]


@runtime_checkable
class Adapter(Protocol):
    """Translate a domain's calls and failures into scarguard's vocabulary.

    Implementations: :class:`~scarguard.adapters.ToolCallAdapter` (any agent tool loop) and
    :class:`~scarguard.adapters.MLTrainingAdapter` (hyper-parameter search).
    """

    # Read-only members: frozen implementations (attrs) and plain attributes both satisfy them.
    @property
    def name(self) -> str:
        """A short name for reports."""
        ...

    @property
    def scaling_keys(self) -> frozenset[str]:
        """Parameters whose growth grows memory use.

        A resource failure bans every configuration at least as large in all of them
        (empty: no dominance bans).
        """
        ...

    def describe(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None = None,
        previous: Call | None = None,
    ) -> Call:
        """Return the call: targets, action class, fingerprint, tracked parameters.

        Args:
            tool: The tool's name.
            args: The arguments by name.
            targets: Explicit targets; ``None`` extracts them from the arguments.
            previous: The last successful call of the same tool, for parameter deltas.
        """
        ...

    def blame(self, signature: Signature, outcome: Outcome) -> Blame | None:
        """Return a blame that overrides the signature's, or ``None`` to keep it."""
        ...

    def mutating(self, call: Call) -> bool:
        """Return whether a success of ``call`` changes its targets (lifts target facts)."""
        ...

    def requires_existing_target(self, call: Call) -> bool:
        """Return whether ``call`` fails when its target does not exist (read, edit, delete)."""
        ...
