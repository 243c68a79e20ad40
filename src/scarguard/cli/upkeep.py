"""``scarguard forget``, ``verify``, ``export``, ``import``: lift, check and move the records."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scarguard.cli._common import (
    KINDS,
    CommandError,
    constraint_json,
    constraints_table,
    emit_json,
    open_memory,
    store_path,
)
from scarguard.cli.parser import EXIT_BROKEN, EXIT_OK, EXIT_USAGE
from scarguard.cli.rendering import plural
from scarguard.model import Constraint, ConstraintKind
from scarguard.stores.protocol import VERIFY_COVERS, VERIFY_NOT_COVERED

__all__ = ["cmd_export", "cmd_forget", "cmd_import", "cmd_verify"]


def _chosen(args: argparse.Namespace) -> Callable[[Constraint], bool]:
    def chosen(c: Constraint) -> bool:
        return args.all or (
            (not args.ids or c.id in args.ids)
            and (args.tool is None or c.tool == args.tool)
            and (args.kind is None or c.kind.value == args.kind)
            and (args.target is None or c.target == args.target)
            and (args.signature is None or c.signature == args.signature)
        )

    return chosen


def cmd_forget(args: argparse.Namespace) -> int:
    """Lift constraints by id, tool, kind, target or signature, or all of them."""
    if not (args.ids or args.tool or args.kind or args.target or args.signature or args.all):
        raise CommandError("name what to forget: ids, --tool, --kind, --target,"
                           " --signature or --all", EXIT_USAGE)  # fmt: skip
    if args.kind and args.kind not in {k.value for k in ConstraintKind}:
        raise CommandError(f"unknown constraint kind {args.kind!r}; one of: {KINDS}", EXIT_USAGE)
    with open_memory(args) as memory:
        active = memory.constraints(include_stale=True)
        unknown = sorted(set(args.ids) - {c.id for c in active})
        if unknown:
            raise CommandError(
                f"no active constraint has id {', '.join(unknown)} (ids: `scarguard show`)",
                EXIT_USAGE,
            )
        doomed = [c for c in active if _chosen(args)(c)]
        if not doomed:
            print("no active constraint matches: nothing to forget", file=sys.stderr)
            if args.json:
                emit_json({"lifted": []})
            return EXIT_OK
        if not args.yes:
            if not sys.stdin.isatty():
                raise CommandError(f"would lift {plural(len(doomed), 'constraint')}; not a"
                                   " terminal, so confirm with --yes", EXIT_USAGE)  # fmt: skip
            print(constraints_table(doomed, memory.clock()))
            these = "this constraint" if len(doomed) == 1 else f"these {len(doomed)} constraints"
            answer = input(f"Lift {these}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing forgotten", file=sys.stderr)
                return EXIT_OK
        ids = [c.id for c in doomed]
        lifted = memory.forget(all=True) if args.all else memory.forget(*ids)
        if args.json:
            emit_json({"lifted": [constraint_json(c) for c in lifted]})
        else:
            print(f"lifted {plural(len(lifted), 'constraint')}")
        return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Check the receipt chain: 0 when intact, 1 when broken."""
    with open_memory(args) as memory:
        report = memory.verify()
        if args.json:
            emit_json({"valid": report.valid, "count": report.count, "head": report.head,
                   "first_broken": report.first_broken, "reason": report.reason,
                   "covers": VERIFY_COVERS, "not_covered": VERIFY_NOT_COVERED,
                   "start": report.start})  # fmt: skip
        elif report.valid:
            head = f", head {report.head[:12]}" if report.head else ""
            noun = "receipt" if report.count == 1 else "receipts"
            start = ""
            if report.start > 1:
                start = f" from receipt {report.start} (older ones compacted)"
            text = f"receipt chain intact: {report.count} {noun}{start}{head}"
            print(textwrap.fill(text, 79, subsequent_indent="  "))
            if report.reason:  # the checkpoint could not be saved
                print(f"note: {report.reason}")
            for label, text in (("covers", VERIFY_COVERS), ("not covered", VERIFY_NOT_COVERED)):
                print(textwrap.fill(f"{label}: {text}", 79, subsequent_indent="  "))
        elif report.first_broken is None:
            print(f"receipt chain cannot be verified: {report.reason}")
        else:
            print(f"receipt chain BROKEN at receipt {report.first_broken}: {report.reason}")
        return EXIT_OK if report.valid else EXIT_BROKEN


def cmd_export(args: argparse.Namespace) -> int:
    """Write the tenant's records as JSON lines."""
    with open_memory(args) as memory:
        records = memory.export()
        if args.output:
            try:
                with open(args.output, "w", encoding="utf-8") as out:
                    count = sum(out.write(json.dumps(r, sort_keys=True) + "\n") > 0
                                for r in records)  # fmt: skip
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise CommandError(f"cannot write {args.output}: {reason}", EXIT_USAGE) from None
            print(f"exported {plural(count, 'record')} to {args.output}", file=sys.stderr)
        else:
            for record in records:
                sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
        return EXIT_OK


def _read_records(source: str) -> list[dict[str, Any]]:
    try:
        if source == "-":
            lines = sys.stdin.read().splitlines()
        else:
            lines = Path(source).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CommandError(f"cannot read {source}: {exc.strerror or exc}", EXIT_USAGE) from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CommandError(f"{source}:{number}: not JSON ({exc.msg})", EXIT_USAGE) from None
        if not isinstance(record, dict):
            raise CommandError(f"{source}:{number}: not a record", EXIT_USAGE)
        records.append(record)
    return records


def _check_records(source: str, records: list[dict[str, Any]]) -> None:
    """Refuse malformed records as bad input (exit 2) before the store is opened.

    They are applied to a throwaway in-memory store by the same code the real store runs,
    so a record the store would refuse is refused here, and the store is never touched.
    """
    from scarguard.errors import StoreError
    from scarguard.model import Scope
    from scarguard.stores.memory import MemoryStore

    try:
        MemoryStore().import_(Scope("check", "check"), records)
    except StoreError as exc:
        raise CommandError(f"{source}: {exc}", EXIT_USAGE) from None


def cmd_import(args: argparse.Namespace) -> int:
    """Add exported records to the tenant."""
    if not args.create and not os.path.exists(store_path(args.path)):
        with open_memory(args):  # raises the one-line "no store" error before reading input
            pass
    records = _read_records(args.file)
    _check_records(args.file, records)
    with open_memory(args, create=args.create) as memory:
        count = memory.import_(records)
        given = sum(1 for r in records if r.get("record") != "header")
        if args.json:
            emit_json({"imported": count, "already_present": given - count})
        else:
            known = f" ({given - count} already present)" if given > count else ""
            print(f"imported {plural(count, 'record')}{known} into {memory.store.location}")
        return EXIT_OK
