"""Durable refusal counts: what scarguard refused (or, in shadow mode, would have refused).

Refusals are materialised counters like every other count, so every store keeps them (the
in-memory, SQLite, JSON and PostgreSQL stores share the counters table's contract), export
and import carry them, and reading them costs the same with ten or a million stored calls.
Their keys, one family per question ``scarguard stats`` answers (``SEP`` between parts):

================================  =========================================================
``gr:<tool>``                     calls refused, per tool
``grk:<tool>␟<kind>␟<id>``        refusals per constraint (a call refused by two counts
                                  for both)
``grd:<YYYY-MM-DD>``              calls refused per day (UTC, by the memory's clock)
``gw:`` ``gwk:`` ``gwd:``         the same for calls shadow mode would have refused
``gv:<verdict>␟<tool>``           those calls by what really happened: ``right`` (failed
                                  the same way), ``wrong`` (succeeded), ``other`` (failed
                                  another way)
``gvk:<verdict>␟<tool>␟<kind>␟<id>``  the same per constraint
================================  =========================================================
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from scarguard._frozen import freeze_mapping
from scarguard.learning.keys import SEP
from scarguard.model import Scope
from scarguard.stores.protocol import Store

__all__ = ["ConstraintRefusals", "RefusalStats", "build_refusal_stats"]

VERDICTS = ("right", "wrong", "other")
"""The real outcomes of a call shadow mode would have refused."""


@attrs.frozen
class ConstraintRefusals:
    """How often one constraint refused calls (or would have, in shadow mode).

    Attributes:
        tool: The tool whose calls it refused.
        kind: The constraint's kind.
        constraint_id: The constraint's id (``scarguard forget <id>`` lifts it).
        refused: Calls it refused while enforcing.
        would_refuse: Calls it would have refused in shadow mode.
        right: Of those, calls that then failed the same way.
        wrong: Of those, calls that then succeeded.
    """

    tool: str
    kind: str
    constraint_id: str
    refused: int = 0
    would_refuse: int = 0
    right: int = 0
    wrong: int = 0


@attrs.frozen
class RefusalStats:
    """What scarguard refused in one workspace and project, from durable counters.

    Attributes:
        refused_by_tool: Calls refused per tool (enforcing).
        refused_by_day: Calls refused per UTC day (``YYYY-MM-DD``), oldest first.
        would_refuse_by_tool: Calls shadow mode would have refused, per tool.
        would_refuse_by_day: The same per UTC day.
        verdicts: What the would-be-refused calls really did: ``right`` (failed the same
            way), ``wrong`` (succeeded), ``other`` (failed another way).
        by_constraint: Per constraint, most refusals first.
    """

    refused_by_tool: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    refused_by_day: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    would_refuse_by_tool: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    would_refuse_by_day: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    verdicts: Mapping[str, int] = attrs.field(converter=freeze_mapping)
    by_constraint: tuple[ConstraintRefusals, ...]

    @property
    def refused(self) -> int:
        """Calls refused while enforcing: calls saved."""
        return sum(self.refused_by_tool.values())

    @property
    def would_refuse(self) -> int:
        """Calls shadow mode would have refused."""
        return sum(self.would_refuse_by_tool.values())

    @property
    def precision(self) -> float | None:
        """Share of shadow-mode refusals that would have been right (``None``: none yet).

        A call that failed another way counts as right: refusing it saved a failing call.
        """
        judged = sum(self.verdicts.values())
        if not judged:
            return None
        return (judged - self.verdicts.get("wrong", 0)) / judged


def _unescape(part: str) -> str:
    return part.replace("\\x1f", SEP)


def build_refusal_stats(store: Store, scope: Scope) -> RefusalStats:
    """Return the tenant's refusal statistics from its counters."""

    def plain(prefix: str) -> dict[str, int]:
        values = store.counters(scope, prefix)
        return dict(sorted((_unescape(k[len(prefix) :]), v.count) for k, v in values.items()))

    rows: dict[tuple[str, str, str], dict[str, int]] = {}

    def per_constraint(prefix: str, field: str, verdict: str | None = None) -> None:
        for key, value in store.counters(scope, prefix).items():
            parts = key[len(prefix) :].split(SEP)
            if verdict is not None:
                if parts[0] != verdict:
                    continue
                parts = parts[1:]
            if len(parts) != 3:
                continue
            row = rows.setdefault((_unescape(parts[0]), parts[1], parts[2]), {})
            row[field] = row.get(field, 0) + value.count

    per_constraint("grk:", "refused")
    per_constraint("gwk:", "would_refuse")
    for verdict in ("right", "wrong"):
        per_constraint("gvk:", verdict, verdict)
    verdicts = dict.fromkeys(VERDICTS, 0)
    for key, count in plain("gv:").items():
        name = key.split(SEP, 1)[0]
        if name in verdicts:
            verdicts[name] += count
    by_constraint = sorted(
        (
            ConstraintRefusals(tool, kind, cid, **counts)
            for (tool, kind, cid), counts in rows.items()
        ),
        key=lambda r: (-(r.refused + r.would_refuse), r.tool, r.constraint_id),
    )
    return RefusalStats(
        refused_by_tool=plain("gr:"),
        refused_by_day=plain("grd:"),
        would_refuse_by_tool=plain("gw:"),
        would_refuse_by_day=plain("gwd:"),
        verdicts=verdicts,
        by_constraint=tuple(by_constraint),
    )
