"""The ``scarguard`` command: the demo, and inspection and maintenance of a memory.

``main(argv)`` parses the arguments, runs one command and returns its exit code (it never
calls :func:`sys.exit` itself, so tests run it in-process); the console script and
``python -m scarguard`` pass that code to :func:`sys.exit`.

The package: :mod:`~scarguard.cli.parser` (commands, options, help texts),
:mod:`~scarguard.cli.commands` (the command table) over the commands by group
(:mod:`~scarguard.cli.inspection`: ``show``, ``guard``; :mod:`~scarguard.cli.stats`;
:mod:`~scarguard.cli.upkeep`: ``forget``, ``verify``, ``export``, ``import``;
:mod:`~scarguard.cli.purge`) and what they share (``_common``: opening a store, errors,
JSON, tables), :mod:`~scarguard.cli.rendering` (tables, colours, times),
:mod:`~scarguard.cli.demo` (the scripted offline demo) and :mod:`~scarguard.cli.agents`
(``mcp`` and ``hook``).

Exit codes: 0 ok, 1 the receipt chain is broken (``verify``), 2 usage error, 3 the store is
missing or cannot be read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from scarguard.cli import agents
from scarguard.cli.parser import EXIT_BROKEN, EXIT_OK, EXIT_STORE, EXIT_USAGE, build_parser
from scarguard.errors import ScarguardError

__all__ = ["EXIT_BROKEN", "EXIT_OK", "EXIT_STORE", "EXIT_USAGE", "build_parser", "main"]


def _fail(command: str, exc: BaseException) -> None:
    """Print an error as one line (driver messages can span several)."""
    print(f"scarguard {command}: {' '.join(str(exc).split())}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``scarguard`` command and return its exit code.

    Args:
        argv: The arguments (default: ``sys.argv[1:]``).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    from scarguard.cli import commands  # the engine loads only for a command (--help is fast)
    from scarguard.cli._common import CommandError

    try:
        handled = agents.run(args)
        return handled if handled is not None else commands.run(args)
    except CommandError as exc:
        _fail(args.command, exc)
        return exc.code
    except ScarguardError as exc:
        _fail(args.command, exc)
        return EXIT_STORE
    except BrokenPipeError:  # `scarguard export | head`
        return EXIT_OK
    except OSError as exc:  # a full disk, a file that went away: one line, not a traceback
        _fail(args.command, exc)
        return EXIT_STORE
    except KeyboardInterrupt:
        print(f"scarguard {args.command}: interrupted", file=sys.stderr)
        return 130

