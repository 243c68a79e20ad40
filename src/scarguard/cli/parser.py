"""The argument parser of the ``scarguard`` command: its commands, options and help texts."""

from __future__ import annotations

import argparse

from scarguard.cli import agents

EXIT_OK = 0
EXIT_BROKEN = 1
EXIT_USAGE = 2
EXIT_STORE = 3


__all__ = ["build_parser"]

_DESCRIPTION = """\
scarguard: a failure memory for tool-calling AI agents.

Run the offline demo first; then inspect, prune, verify and move what a memory
has learned. Every command but `demo` reads an existing store and never creates
one."""

_EPILOG = """\
examples:
  scarguard demo                       watch repeated mistakes get refused
  scarguard show -w demo -p webapp     what the demo's memory learned
  scarguard guard                      the block PromptGuard puts in the prompt
  scarguard verify                     check the receipt chain

The store is --path, else $SCARGUARD_PATH, else .scarguard/memory.db in the
current directory.
exit codes: 0 ok, 1 receipt chain broken (verify), 2 usage error, 3 store
missing or unreadable"""

_PATH_HELP = "the store (default: $SCARGUARD_PATH or .scarguard/memory.db)"
_EXAMPLES = {
    "demo": """\
examples:
  scarguard demo                 run it twice: the second refuses the repeats
  scarguard demo --fresh         start from an empty memory
  scarguard demo --quiet         only the summary
  scarguard demo --path /tmp/demo.db --steps 5""",
    "show": """\
examples:
  scarguard show                         failures, patterns, constraints
  scarguard show -w demo -p webapp       another workspace and project
  scarguard show --tool edit_file --since 2h
  scarguard show --kind exact_call       a constraint or failure kind
  scarguard show --json | jq '.constraints[].id'""",
    "guard": """\
examples:
  scarguard guard                         the guard block, as the LLM sees it
  scarguard guard --since 3d --max-chars 800
  scarguard guard --json""",
    "forget": """\
examples:
  scarguard forget 3f9a1c2b7d4e          lift one by id (from `scarguard show`)
  scarguard forget --tool make           every constraint on a tool
  scarguard forget --kind exact_call --yes
  scarguard forget --all --yes           all this workspace and project learned""",
    "verify": """\
examples:
  scarguard verify                       0 if intact, else 1 and what broke
  scarguard verify --path memory.db --json""",
    "export": """\
examples:
  scarguard export > memory.jsonl        this tenant's records as JSON lines
  scarguard export -w demo -p webapp -o demo.jsonl""",
    "import": """\
examples:
  scarguard import memory.jsonl          add them to this workspace and project
  cat memory.jsonl | scarguard import --path other.db --create""",
    "stats": """\
examples:
  scarguard stats                        refusals, counts per tool, kind, blame
  scarguard stats --price-per-call 0.02  with what the refusals saved
  scarguard stats --json""",
    "purge": """\
examples:
  scarguard purge --older-than 30d       failures, receipts over 30 days (asks)
  scarguard purge --older-than 2w --yes  the same without asking (cron)
  scarguard purge --older-than 90d --keep-receipts
  scarguard purge --older-than 30d -w demo -p webapp --json""",
}


def _store_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("store")
    group.add_argument("--path", help=_PATH_HELP)
    group.add_argument("-w", "--workspace", default="default", help="tenant workspace")
    group.add_argument(
        "-p", "--project", help="tenant project (default: the git top level or this directory)"
    )
    group.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parent


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``scarguard`` command."""
    from scarguard._version import __version__

    parser = argparse.ArgumentParser(
        prog="scarguard",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"scarguard {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    store = _store_options()

    def command(name: str, summary: str, *, parents: bool = True) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=summary,
            description=summary,
            epilog=_EXAMPLES[name],
            parents=[store] if parents else [],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    demo = command("demo", "run the scripted offline demo (no API key)", parents=False)
    demo.add_argument("--path", help=_PATH_HELP)
    demo.add_argument("--fresh", action="store_true", help="start from an empty demo memory")
    demo.add_argument("--steps", type=_positive, metavar="N", help="run only the first N steps")
    demo.add_argument("--quiet", action="store_true", help="print only the summary")

    show = command("show", "show recent failures, repeated patterns and active constraints")
    show.add_argument("--tool", help="only this tool")
    show.add_argument("--kind", help="a constraint kind (exact_call...) or failure kind")
    show.add_argument("--since", help="only failures since: 30m, 2h, 3d, 1w or an ISO time")
    show.add_argument("--limit", type=_positive, default=20, help="recent failures shown (20)")

    guard = command("guard", "print the block PromptGuard puts in the prompt")
    guard.add_argument("--since", help="only failures since: 30m, 2h, 3d, 1w or an ISO time")
    guard.add_argument("--max-chars", type=_positive, default=2000, help="longest block (2000)")
    guard.add_argument(
        "--include-errors", action="store_true", help="add redacted error excerpts (opt-in)"
    )

    forget = command("forget", "lift learned constraints by hand")
    forget.add_argument("ids", nargs="*", help="constraint ids, as `scarguard show` lists them")
    forget.add_argument("--tool", help="every constraint on this tool")
    forget.add_argument("--kind", help="every constraint of this kind (exact_call...)")
    forget.add_argument("--target", help="every constraint on this target")
    forget.add_argument("--signature", help="every constraint learned from this failure kind")
    forget.add_argument("--all", action="store_true", help="every constraint of the tenant")
    forget.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")

    command("verify", "check the tamper-evident receipt chain")

    export = command("export", "write the tenant's records as JSON lines")
    export.add_argument("-o", "--output", help="file to write (default: stdout)")

    load = command("import", "add records written by `scarguard export`")
    load.add_argument("file", nargs="?", default="-", help="JSON lines file (default: stdin)")
    load.add_argument("--create", action="store_true", help="create the store if it is missing")

    purge = command("purge", "delete old failures and compact old receipts (retention)")
    purge.add_argument(
        "--older-than", required=True, type=_age, metavar="AGE", help="30d, 12h, 2w, 90m..."
    )
    purge.add_argument(
        "--keep-receipts", action="store_true", help="delete failures only, keep every receipt"
    )
    purge.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")

    stats = command("stats", "calls refused (saved), counts per tool, failure kind and blame")
    stats.add_argument(
        "--price-per-call",
        type=_price,
        metavar="USD",
        help="what one tool call costs, to show what the refused calls would have cost",
    )
    stats.add_argument("--days", type=_positive, default=14, help="days in the series (14)")
    agents.add_commands(sub)
    return parser


def _age(text: str) -> float:
    from scarguard.cli.rendering import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


def _price(text: str) -> float:
    try:
        value = float(text.lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a price such as 0.02, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a price >= 0, got {text!r}")
    return value
