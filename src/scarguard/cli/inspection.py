"""``scarguard show`` and ``guard``: what a memory learned, as people and as the LLM read it."""

from __future__ import annotations

import argparse
import sys

from scarguard.cli._common import (
    KINDS,
    CommandError,
    constraint_json,
    constraints_table,
    emit_json,
    failure_json,
    known_signature,
    label_of,
    open_memory,
    pattern_json,
    since_of,
    tenant_line,
)
from scarguard.cli.parser import EXIT_OK, EXIT_USAGE
from scarguard.cli.rendering import Style, ago, args_text, blame_word, table
from scarguard.errors import ConfigurationError
from scarguard.model import ConstraintKind

__all__ = ["cmd_guard", "cmd_show"]


def cmd_show(args: argparse.Namespace) -> int:
    """Print recent failures, repeated patterns and active constraints."""
    since = since_of(args)
    kind = args.kind
    constraint_kind = kind if kind in {k.value for k in ConstraintKind} else None
    signature = kind if kind and constraint_kind is None else None
    with open_memory(args) as memory:
        if signature and not known_signature(memory, signature):
            raise CommandError(
                f"unknown kind {signature!r}: a constraint kind ({KINDS}) or a failure kind"
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
            emit_json({
                "failures": [failure_json(f) for f in failures],
                "patterns": [pattern_json(p) for p in patterns],
                "constraints": [constraint_json(c) for c in constraints],
            })  # fmt: skip
            return EXIT_OK
        style = Style(sys.stdout)
        print(style(f"scarguard memory {memory.store.location}", "bold"))
        print(tenant_line(args, memory))
        print()
        print(style(f"Recent failures ({len(failures)})", "bold"))
        rows: list[list[object]]
        if failures:
            rows = [
                [ago(now - f.at), f.tool, label_of(memory, f.signature), blame_word(f.blame.value),
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
            print(constraints_table(constraints, now))
            print(style("lift one with: scarguard forget <id>", "dim"))
        return EXIT_OK


def cmd_guard(args: argparse.Namespace) -> int:
    """Print the PromptGuard block."""
    from scarguard.prompt import PromptGuard

    since = since_of(args)
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
            emit_json({"block": block})
        elif block:
            print(block)
        else:
            print("nothing repeats and nothing is refused: the guard block is empty",
                  file=sys.stderr)  # fmt: skip
        return EXIT_OK
