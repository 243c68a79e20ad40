"""What each ``scarguard`` command does (the parser is :mod:`scarguard.cli.parser`).

Every command but ``demo`` (and ``import --create``) opens an existing store only: the path
is checked before the store is opened, so a typo never leaves an empty database behind.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from scarguard.cli.parser import EXIT_BROKEN, EXIT_OK, EXIT_STORE, EXIT_USAGE
from scarguard.cli.rendering import (
    Style,
    ago,
    args_text,
    blame_word,
    parse_since,
    plural,
    size_text,
    table,
    until,
)
from scarguard.errors import ConfigurationError
from scarguard.memory import FailureMemory
from scarguard.model import Constraint, ConstraintKind, Failure, Pattern
from scarguard.refusals import RefusalStats
from scarguard.stores.factory import DEFAULT_PATH, PATH_ENV
from scarguard.stores.protocol import VERIFY_COVERS, VERIFY_NOT_COVERED
from scarguard.tenancy import project_root

__all__ = ["EXIT_BROKEN", "EXIT_OK", "EXIT_STORE", "EXIT_USAGE", "CommandError", "run"]

_KINDS = ", ".join(k.value for k in ConstraintKind)


class CommandError(Exception):
    """A command cannot go on; the message is printed as one line, ``code`` is the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def store_path(given: str | None) -> str:
    """Return the store a command means: ``--path``, ``$SCARGUARD_PATH`` or the default.

    A leading ``~`` is expanded (the stores expand it too, so the check that the store
    exists looks where the store would be opened).
    """
    configured = given or os.environ.get(PATH_ENV)
    if configured:
        return configured if "://" in configured else os.path.expanduser(configured)
    default = Path.cwd() / DEFAULT_PATH
    fallback = default.with_suffix(".json")  # where the default store falls back to
    return str(fallback if not default.exists() and fallback.exists() else default)


@contextlib.contextmanager
def open_memory(args: argparse.Namespace, *, create: bool = False) -> Iterator[FailureMemory]:
    """Open the tenant's memory in the store ``args`` name, refusing to create a missing one.

    Raises:
        CommandError: The store is missing (unless ``create``) or cannot be opened.
    """
    path = store_path(args.path)
    remote = path.startswith(("postgresql://", "postgres://"))
    if path == ":memory:" or ("://" in path and not remote):
        raise CommandError(f"{path} cannot be inspected from the command line", EXIT_STORE)
    if not remote and not create and not os.path.exists(path):
        raise CommandError(
            f"no scarguard memory at {path} (run `scarguard demo` to make one, or give --path)",
            EXIT_STORE,
        )
    if not remote and os.path.isdir(path):
        raise CommandError(f"{path} is a directory, not a scarguard store", EXIT_STORE)
    if remote and not create:
        _require_postgres_schema(path)
    try:
        memory = FailureMemory(path, workspace=args.workspace, project=args.project)
    except (ConfigurationError, OSError) as exc:
        raise CommandError(f"cannot open {path}: {exc}", EXIT_STORE) from None
    try:
        yield memory
    finally:
        memory.close()


def _tenant(args: argparse.Namespace, memory: FailureMemory) -> str:
    """Return the line naming the tenant, and where a derived project came from."""
    scope = memory.scope
    line = f"workspace {scope.workspace!r}, project {scope.project!r}"
    if args.project is None:
        root = project_root()
        origin = "the git top level" if (root / ".git").exists() else "this directory"
        line += f" (from {origin})"
    return line


def _require_postgres_schema(url: str) -> None:
    """Refuse a PostgreSQL URL whose schema holds no scarguard store (nothing is created).

    Raises:
        CommandError: The schema or its tables are missing, or the server cannot be reached.
    """
    try:
        import psycopg
    except ImportError:
        return  # opening the store says how to install the driver
    from scarguard.stores.postgres._conn import redact_url, split_url

    try:
        bare, schema = split_url(url)
    except ValueError:
        return  # opening the store names what is wrong with the URL
    schema = schema or "scarguard"
    where = f"{redact_url(bare)} (schema {schema})"
    try:
        with psycopg.connect(bare, connect_timeout=10, application_name="scarguard") as conn:
            name = psycopg.sql.Identifier(schema).as_string(conn) + ".meta"
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        secret_free = first.replace(url, where).replace(bare, redact_url(bare))
        raise CommandError(f"cannot reach {where}: {secret_free}", EXIT_STORE) from None
    if not (row and row[0]):
        raise CommandError(
            f"no scarguard memory at {where} (check ?schema=; inspection never creates one)",
            EXIT_STORE,
        )


def _emit(value: Any) -> None:
    print(json.dumps(value, indent=2, sort_keys=True, default=str))


def _since(args: argparse.Namespace) -> float | None:
    if not getattr(args, "since", None):
        return None
    try:
        return parse_since(args.since, time.time())
    except ValueError as exc:
        raise CommandError(str(exc), EXIT_USAGE) from None


def _known_signature(memory: FailureMemory, name: str) -> bool:
    """Whether ``name`` is a failure kind of the bank or one this tenant has recorded."""
    key = f"s:{name}"
    return memory.signatures.get(name) is not None or key in memory.store.counters(
        memory.scope, key
    )


def _label(memory: FailureMemory, signature: str) -> str:
    known = memory.signatures.get(signature)
    return known.label if known else signature


def _constraint_json(c: Constraint) -> dict[str, Any]:
    row = c.to_row()
    row["params"] = dict(c.params)
    return {"id": c.id, **row}


def _failure_json(f: Failure) -> dict[str, Any]:
    row = f.to_row()
    row.update(targets=list(f.targets), args=dict(f.args))
    return row


def _pattern_json(p: Pattern) -> dict[str, Any]:
    return {
        "signature": p.signature, "label": p.label, "count": p.count, "blame": p.blame.value,
        "hint": p.hint, "last_seen": p.last_seen, "tools": list(p.tools),
        "targets": list(p.targets),
    }  # fmt: skip


def _constraints_table(constraints: list[Constraint], now: float) -> str:
    """The constraints, one row each with its reason wrapped underneath."""
    rows = [
        [c.id, c.kind.value, "refuse" if c.level.value == "block" else "warn", c.tool or "-",
         c.target or "-", c.occurrences, until(c.expires_at, now)]
        for c in constraints
    ]  # fmt: skip
    headers = ["id", "kind", "does", "tool", "target", "seen", "expires"]
    notes = [c.reason for c in constraints]
    return table(headers, rows, shrink=["target", "tool", "kind"], notes=notes)


def cmd_show(args: argparse.Namespace) -> int:
    """Print recent failures, repeated patterns and active constraints."""
    since = _since(args)
    kind = args.kind
    constraint_kind = kind if kind in {k.value for k in ConstraintKind} else None
    signature = kind if kind and constraint_kind is None else None
    with open_memory(args) as memory:
        if signature and not _known_signature(memory, signature):
            raise CommandError(
                f"unknown kind {signature!r}: a constraint kind ({_KINDS}) or a failure kind"
                " (`scarguard stats` lists the ones seen)",
                EXIT_USAGE,
            )
        now = memory.clock()
        failures = memory.store.failures(
            memory.scope, limit=args.limit, since=since, tool=args.tool, signature=signature
        )
        patterns = [
            p
            for p in memory.patterns(since=since)
            if (args.tool is None or args.tool in p.tools)
            and (signature is None or p.signature == signature)
        ]
        constraints = memory.constraints(tool=args.tool, kind=constraint_kind)
        if signature:
            constraints = [c for c in constraints if c.signature == signature]
        if args.json:
            _emit({
                "failures": [_failure_json(f) for f in failures],
                "patterns": [_pattern_json(p) for p in patterns],
                "constraints": [_constraint_json(c) for c in constraints],
            })  # fmt: skip
            return EXIT_OK
        style = Style(sys.stdout)
        print(style(f"scarguard memory {memory.store.location}", "bold"))
        print(_tenant(args, memory))
        print()
        print(style(f"Recent failures ({len(failures)})", "bold"))
        rows: list[list[object]]
        if failures:
            rows = [
                [ago(now - f.at), f.tool, _label(memory, f.signature), blame_word(f.blame.value),
                 args_text(f.args) or ", ".join(f.targets) or "-"]
                for f in failures
            ]  # fmt: skip
            headers = ["when", "tool", "failure", "blame", "arguments"]
            print(table(headers, rows, shrink={"arguments": 30, "failure": 12, "tool": 9}))
        print()
        print(style(f"Repeated patterns ({len(patterns)})", "bold"))
        if patterns:
            rows = [
                [p.label, p.count, blame_word(p.blame.value), ago(now - p.last_seen),
                 ", ".join(p.tools)]
                for p in patterns
            ]  # fmt: skip
            headers = ["failure", "count", "blame", "last seen", "tools"]
            print(table(headers, rows, shrink=["tools", "failure"]))
        print()
        print(style(f"Active constraints ({len(constraints)})", "bold"))
        if constraints:
            print(_constraints_table(constraints, now))
            print(style("lift one with: scarguard forget <id>", "dim"))
        return EXIT_OK


def cmd_guard(args: argparse.Namespace) -> int:
    """Print the PromptGuard block."""
    from scarguard.prompt import PromptGuard

    since = _since(args)
    with open_memory(args) as memory:
        window = None if since is None else max(memory.clock() - since, 1.0)
        try:
            guard = PromptGuard(
                memory, since=window, max_chars=args.max_chars, include_errors=args.include_errors
            )
        except ConfigurationError as exc:
            raise CommandError(str(exc), EXIT_USAGE) from None
        block = guard.block()
        if args.json:
            _emit({"block": block})
        elif block:
            print(block)
        else:
            print("nothing repeats and nothing is refused: the guard block is empty",
                  file=sys.stderr)  # fmt: skip
        return EXIT_OK


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
        raise CommandError(f"unknown constraint kind {args.kind!r}; one of: {_KINDS}", EXIT_USAGE)
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
                _emit({"lifted": []})
            return EXIT_OK
        if not args.yes:
            if not sys.stdin.isatty():
                raise CommandError(f"would lift {plural(len(doomed), 'constraint')}; not a"
                                   " terminal, so confirm with --yes", EXIT_USAGE)  # fmt: skip
            print(_constraints_table(doomed, memory.clock()))
            these = "this constraint" if len(doomed) == 1 else f"these {len(doomed)} constraints"
            answer = input(f"Lift {these}? [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing forgotten", file=sys.stderr)
                return EXIT_OK
        ids = [c.id for c in doomed]
        lifted = memory.forget(all=True) if args.all else memory.forget(*ids)
        if args.json:
            _emit({"lifted": [_constraint_json(c) for c in lifted]})
        else:
            print(f"lifted {plural(len(lifted), 'constraint')}")
        return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Check the receipt chain: 0 when intact, 1 when broken."""
    with open_memory(args) as memory:
        report = memory.verify()
        if args.json:
            _emit({"valid": report.valid, "count": report.count, "head": report.head,
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
            _emit({"imported": count, "already_present": given - count})
        else:
            known = f" ({given - count} already present)" if given > count else ""
            print(f"imported {plural(count, 'record')}{known} into {memory.store.location}")
        return EXIT_OK


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
            _emit({
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
        print(_tenant(args, memory))
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
             [[_label(memory, s), s, n] for s, n in sorted(
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


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the scripted demo."""
    from scarguard.cli.demo import run_demo

    return run_demo(args.path, fresh=args.fresh, steps=args.steps, quiet=args.quiet, out=sys.stdout)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": cmd_demo,
    "show": cmd_show,
    "guard": cmd_guard,
    "forget": cmd_forget,
    "verify": cmd_verify,
    "export": cmd_export,
    "import": cmd_import,
    "stats": cmd_stats,
    "purge": lambda args: _purge(args),
}


def _purge(args: argparse.Namespace) -> int:
    from scarguard.cli.purge import cmd_purge

    return cmd_purge(args)


def run(args: argparse.Namespace) -> int:
    """Run the command ``args.command`` and return its exit code."""
    return _COMMANDS[args.command](args)
