"""The ``scarguard mcp`` and ``scarguard hook`` commands (the rest of the CLI is elsewhere).

Each command imports what it drives only when it runs, so the other commands, and the
hooks, never import the MCP SDK.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_commands", "run"]

_MCP_EXAMPLES = """\
examples:
  scarguard mcp -- npx -y @modelcontextprotocol/server-filesystem .
  scarguard mcp --path ~/.scarguard/fleet.db -p web -- python my_server.py
  scarguard mcp --url http://127.0.0.1:8000/mcp

The memory is --path, else $SCARGUARD_PATH, else .scarguard/memory.db at the
project root (the git top level of the working directory, else the directory)."""

_HOOK_EXAMPLES = """\
examples:
  scarguard hook install claude-code          hooks into .claude/settings.json
  scarguard hook install claude-code --user   into ~/.claude/settings.json
  scarguard hook claude-code < event.json     what Claude Code runs per event

A hook that fails for its own reasons prints nothing and exits 0: it never
blocks a tool."""

AGENTS = ("claude-code",)
_MCP_DESCRIPTION = """\
Serve MCP on stdio in front of an upstream MCP server started as a child (or
reached at --url). Every tools/call is checked against the memory and recorded;
a call known to fail again gets an isError result with the reason instead."""
_HOOK_DESCRIPTION = """\
Answer an agent CLI's tool hooks: refuse a call known to fail again, record
what each call did."""


def add_commands(sub: Any) -> None:
    """Add ``mcp`` and ``hook`` to the ``scarguard`` subparsers ``sub``."""
    mcp = sub.add_parser(
        "mcp",
        help="serve MCP in front of an MCP server, refusing known repeat failures",
        description=_MCP_DESCRIPTION,
        epilog=_MCP_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _memory_options(mcp, long_project=True)
    mcp.add_argument("--url", help="a Streamable HTTP upstream instead of a command")
    mcp.add_argument(
        "upstream",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND [ARGS...]",
        help="the upstream MCP server's command",
    )

    hook = sub.add_parser(
        "hook",
        help="guard an agent CLI's own tools through its hooks (Claude Code)",
        description=_HOOK_DESCRIPTION,
        epilog=_HOOK_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    agents = hook.add_subparsers(dest="agent", metavar="agent", required=True)
    answer = agents.add_parser(
        "claude-code", help="answer one Claude Code hook event read from stdin"
    )
    _memory_options(answer, long_project=True)
    install = agents.add_parser(
        "install", help="write the hook entries into an agent CLI's settings"
    )
    install.add_argument("target", choices=AGENTS, help="the agent CLI")
    where = install.add_mutually_exclusive_group()
    where.add_argument(
        "--project",
        dest="scope",
        action="store_const",
        const="project",
        default="project",
        help="this project's .claude/settings.json (default)",
    )
    where.add_argument(
        "--user",
        dest="scope",
        action="store_const",
        const="user",
        help="your ~/.claude/settings.json",
    )
    _memory_options(install, long_project=False)


def _memory_options(parser: argparse.ArgumentParser, *, long_project: bool) -> None:
    group = parser.add_argument_group("memory")
    group.add_argument("--path", help="the store (default: the project's .scarguard/memory.db)")
    group.add_argument("-w", "--workspace", default="default", help="tenant workspace")
    names = ["-p", "--project"] if long_project else ["-p", "--tenant-project"]
    group.add_argument(
        *names,
        dest="tenant",
        metavar="NAME",
        help="tenant project (default: the git top level or this directory)",
    )
    mode = group.add_mutually_exclusive_group()
    mode.add_argument(
        "--enforce",
        dest="enforce",
        action="store_true",
        default=True,
        help="refuse calls known to fail again (default)",
    )
    mode.add_argument(
        "--observe",
        dest="enforce",
        action="store_false",
        help="shadow mode: decide and count, refuse nothing",
    )


def run(args: argparse.Namespace) -> int | None:
    """Run ``mcp`` or ``hook`` if ``args`` names one; ``None`` for any other command."""
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "hook":
        if args.agent == "install":
            from scarguard.integrations import hook_install

            return hook_install.main(args.target, args.scope, _store_options(args))
        from scarguard.integrations import claude_code

        return claude_code.main(
            sys.stdin,
            sys.stdout,
            path=args.path,
            workspace=args.workspace,
            project=args.tenant,
            enforce=args.enforce,
        )
    return None


def _store_options(args: argparse.Namespace) -> list[str]:
    options = []
    if args.path:
        options += ["--path", args.path]
    if args.workspace != "default":
        options += ["-w", args.workspace]
    if args.tenant:
        options += ["-p", args.tenant]
    if not args.enforce:
        options += ["--observe"]
    return options


def _mcp(args: argparse.Namespace) -> int:
    command = list(args.upstream)
    if command and command[0] == "--":
        command = command[1:]
    if bool(command) == bool(args.url):
        print(
            "scarguard mcp: give the upstream server as `-- COMMAND [ARGS...]` or as --url",
            file=sys.stderr,
        )
        return 2
    try:
        from scarguard.integrations import mcp_proxy
    except ImportError as exc:
        print(
            f"scarguard mcp: the MCP SDK is missing ({exc}); pip install 'scarguard[mcp]'",
            file=sys.stderr,
        )
        return 2
    from scarguard.integrations._project import open_project_memory

    memory = open_project_memory(
        args.path, workspace=args.workspace, project=args.tenant, enforce=args.enforce
    )
    return mcp_proxy.run(memory, mcp_proxy.Upstream(command=tuple(command), url=args.url))
