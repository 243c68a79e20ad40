"""``scarguard stats``: calls refused (and what they would have cost), counts, size on disk."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from typing import Any

import attrs

from scarguard.cli._common import emit_json, label_of, open_memory, tenant_line
from scarguard.cli.parser import EXIT_OK
from scarguard.cli.rendering import Style, blame_word, plural, size_text, table
from scarguard.refusals import RefusalStats

__all__ = ["cmd_stats"]


def _disk_size(location: str) -> int:
    names = [location, location + "-wal", location + "-shm", location + ".head"]
    return sum(os.path.getsize(n) for n in names if os.path.isfile(n))


def _days(series: dict[str, int], *others: dict[str, int], last: int, now: float) -> list[str]:
    """Return the UTC days of a series: the latest ``last`` up to today, gaps included."""
    seen = sorted(set(series).union(*others))
    if not seen:
        return []
    today = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).date()
    first = max(datetime.date.fromisoformat(seen[0]), today - datetime.timedelta(days=last - 1))
    days = [first + datetime.timedelta(days=n) for n in range((today - first).days + 1)]
    return [d.isoformat() for d in days]


def _money(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 or amount == 0 else f"${amount:.4g}"


def _refusal_lines(refusals: RefusalStats, price: float | None) -> list[str]:
    saved = f"{plural(refusals.refused, 'call')} refused"
    if price is not None:
        saved += f" (saved {_money(refusals.refused * price)} at {_money(price)} a call)"
    lines = [saved]
    if refusals.would_refuse:
        v = refusals.verdicts
        head = f"shadow mode: {plural(refusals.would_refuse, 'call')} would have been refused"
        if refusals.precision is not None:
            head += f" (precision {refusals.precision:.0%})"
        detail = (
            f"  of the {sum(v.values())} that ran, {v['right']} failed the same way,"
            f" {v['wrong']} succeeded"
        )
        if v["other"]:
            detail += f", {v['other']} failed another way"
        lines += [head, detail]
    return lines


def _refusals_json(refusals: RefusalStats, price: float | None) -> dict[str, Any]:
    return {
        "refused": refusals.refused, "refused_by_tool": dict(refusals.refused_by_tool),
        "refused_by_day": dict(refusals.refused_by_day),
        "saved_usd": None if price is None else refusals.refused * price,
        "would_refuse": refusals.would_refuse,
        "would_refuse_by_tool": dict(refusals.would_refuse_by_tool),
        "would_refuse_by_day": dict(refusals.would_refuse_by_day),
        "shadow_verdicts": dict(refusals.verdicts), "shadow_precision": refusals.precision,
        "by_constraint": [attrs.asdict(r) for r in refusals.by_constraint],
    }  # fmt: skip


def cmd_stats(args: argparse.Namespace) -> int:
    """Print calls refused, counts per tool, failure kind, blame and constraint kind, size."""
    price = getattr(args, "price_per_call", None)
    with open_memory(args) as memory:
        stats = memory.stats()
        refusals = stats.refusals
        size = _disk_size(memory.store.location)
        if args.json:
            emit_json({
                "failures": stats.failures, "successes": stats.successes,
                "failures_by_tool": dict(stats.failures_by_tool),
                "successes_by_tool": dict(stats.successes_by_tool),
                "failures_by_signature": dict(stats.failures_by_signature),
                "failures_by_blame": dict(stats.failures_by_blame),
                "constraints_by_kind": dict(stats.constraints_by_kind),
                "store": memory.store.location, "size_bytes": size,
                "workspace": memory.scope.workspace, "project": memory.scope.project,
                **_refusals_json(refusals, price),
            })  # fmt: skip
            return EXIT_OK
        style = Style(sys.stdout)
        print(style(f"{memory.store.location}: {size_text(size)} on disk", "bold"))
        print(tenant_line(args, memory))
        for line in _refusal_lines(refusals, price):
            print(line)
        successes = plural(stats.successes, "success", "successes")
        print(f"{plural(stats.failures, 'failure')}, {successes} recorded")
        by_day, shadow_days = dict(refusals.refused_by_day), dict(refusals.would_refuse_by_day)
        days = _days(by_day, shadow_days, last=args.days, now=time.time())
        tools = sorted(set(stats.failures_by_tool) | set(stats.successes_by_tool))
        shadow = ["would refuse", "right", "wrong"] if refusals.would_refuse else []
        for title, headers, rows in (
            ("Refused per day (UTC)", ["day", "refused", *shadow[:1]],
             [[d, by_day.get(d, 0), shadow_days.get(d, 0)][: 2 + len(shadow[:1])]
              for d in days]),
            ("Refused per constraint (lift one: scarguard forget <id>)",
             ["id", "kind", "tool", "refused", *shadow],
             [[r.constraint_id, r.kind, r.tool, r.refused, r.would_refuse, r.right, r.wrong]
              [: 4 + len(shadow)] for r in refusals.by_constraint[:20]]),
            ("Per tool", ["tool", "failures", "successes", "refused"],
             [[t, stats.failures_by_tool.get(t, 0), stats.successes_by_tool.get(t, 0),
               refusals.refused_by_tool.get(t, 0)] for t in tools]),
            ("Per failure kind", ["failure", "signature", "count"],
             [[label_of(memory, s), s, n] for s, n in sorted(
                 stats.failures_by_signature.items(), key=lambda kv: (-kv[1], kv[0]))]),
            ("Per blame", ["blame", "failures"],
             [[blame_word(b), n] for b, n in stats.failures_by_blame.items()]),
            ("Active constraints", ["kind", "count"],
             [list(kv) for kv in stats.constraints_by_kind.items()]),
        ):  # fmt: skip
            if not rows and title.startswith("Refused"):
                continue
            print()
            print(style(title, "bold"))
            if rows:
                print(table(headers, rows, shrink=headers[:2]))
        return EXIT_OK
