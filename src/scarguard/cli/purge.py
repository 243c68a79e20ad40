"""``scarguard purge``: retention by hand (or from cron) for one workspace and project."""

from __future__ import annotations

import argparse
import json
import sys

from scarguard.cli._common import CommandError, open_memory
from scarguard.cli.parser import EXIT_OK, EXIT_USAGE
from scarguard.cli.rendering import plural, when, width, wrap

__all__ = ["cmd_purge"]


def cmd_purge(args: argparse.Namespace) -> int:
    """Delete the tenant's failures older than ``--older-than`` and compact older receipts."""
    with open_memory(args) as memory:
        before = memory.clock() - args.older_than
        scope = memory.scope
        what = f"failures of workspace {scope.workspace!r}, project {scope.project!r}"
        if not args.keep_receipts:
            what += " and the store's receipts"
        plan = f"purge deletes the {what} recorded before {when(before, 0)}."
        question = "\n".join(wrap(plan, width())) + "\nDelete them? [y/N] "
        if not args.yes:
            if not sys.stdin.isatty():
                raise CommandError(
                    "purge deletes records; not a terminal, so confirm with --yes", EXIT_USAGE
                )
            if input(question).strip().lower() not in ("y", "yes"):
                print("nothing purged", file=sys.stderr)
                return EXIT_OK
        report = memory.purge(args.older_than, receipts=not args.keep_receipts)
        if args.json:
            print(json.dumps({
                "failures": report.failures, "receipts": report.receipts,
                "failures_before": report.failures_before,
                "receipts_before": report.receipts_before,
            }, indent=2, sort_keys=True))  # fmt: skip
            return EXIT_OK
        print(f"deleted {plural(report.failures, 'failure')} recorded before {when(before, 0)}")
        if report.receipts:
            done = (
                f"compacted {plural(report.receipts, 'receipt')} behind a compact receipt;"
                " `scarguard verify` checks the chain from there"
            )
            print("\n".join(wrap(done, width(), hang="  ")))
        elif not args.keep_receipts:
            print("no receipt old enough to compact")
        return EXIT_OK
