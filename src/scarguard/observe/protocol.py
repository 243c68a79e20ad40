"""The observer contract: state tokens of paths, and which of them changed.

A learned constraint keeps the tokens of what its failure depends on (the call's files, the
files a command or its error names, the build manifests). Before it refuses, the engine asks
the observer which of them changed; a change makes the constraint stale, and the call runs.
Observation only ever lifts: a path the observer cannot see (it lives on another machine)
keeps its token, so the constraint refuses exactly as it would without observation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

__all__ = ["MISSING", "Observer"]

MISSING = "-"
"""The token of a path that does not exist."""


@runtime_checkable
class Observer(Protocol):
    """Report cheap state tokens of paths, and which ones changed since.

    Paths are absolute (the memory joins relative ones with its root, so a memory opened
    from another directory revalidates the same files). Tokens are opaque strings;
    :data:`MISSING` means the path does not exist. Implement it
    over a remote sandbox's API to observe files the agent's tools see elsewhere.
    """

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        """Return a state token per path (a path the observer cannot judge may be left out)."""
        ...

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        """Return the paths whose state differs from the tokens ``observe`` returned."""
        ...
