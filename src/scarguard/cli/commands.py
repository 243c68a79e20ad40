"""What each ``scarguard`` command does: the command table (the parser: :mod:`~.parser`).

The commands live by group: :mod:`~scarguard.cli.inspection` (``show``, ``guard``),
:mod:`~scarguard.cli.stats`, :mod:`~scarguard.cli.upkeep` (``forget``, ``verify``,
``export``, ``import``), :mod:`~scarguard.cli.purge` and :mod:`~scarguard.cli.demo`, over
what they share in :mod:`~scarguard.cli._common` (opening a store, errors, JSON, tables).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from scarguard.cli.inspection import cmd_guard, cmd_show
from scarguard.cli.purge import cmd_purge
from scarguard.cli.stats import cmd_stats
from scarguard.cli.upkeep import cmd_export, cmd_forget, cmd_import, cmd_verify

__all__ = ["run"]


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
    "purge": cmd_purge,
}


def run(args: argparse.Namespace) -> int:
    """Run the command ``args.command`` and return its exit code."""
    return _COMMANDS[args.command](args)
