"""The parser of the ``scarguard`` command: its commands, options, defaults and bad values."""

from __future__ import annotations

import pytest

from scarguard.cli.parser import build_parser

COMMANDS = ("demo", "show", "guard", "forget", "verify", "export", "import", "purge", "stats")


def parse(*argv: str):
    return build_parser().parse_args(list(argv))


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_parses_and_has_examples_in_its_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command is known to the parser and its help ends with examples."""
    with pytest.raises(SystemExit) as stop:
        parse(command, "--help")
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert f"scarguard {command}" in out
    assert "examples:" in out


def test_store_options_default_to_the_default_workspace() -> None:
    """Without options a command reads the default workspace, its project left to the store."""
    args = parse("show")
    assert (args.command, args.path, args.workspace, args.project, args.json) == (
        "show",
        None,
        "default",
        None,
        False,
    )
    assert args.limit == 20


def test_options_of_the_commands_are_read() -> None:
    """Each command's own options reach its arguments, with their types."""
    assert parse("show", "--tool", "make", "--limit", "5", "--json").limit == 5
    forget = parse("forget", "abc", "def", "--yes", "-w", "demo")
    assert (forget.ids, forget.yes, forget.workspace) == (["abc", "def"], True, "demo")
    assert parse("purge", "--older-than", "2h").older_than == 7200
    assert parse("stats", "--price-per-call", "$0.02").price_per_call == 0.02
    assert parse("import").file == "-"
    assert parse("guard").max_chars == 2000


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["show", "--limit", "0"], "expected a number >= 1"),
        (["show", "--limit", "many"], "expected a whole number"),
        (["stats", "--price-per-call", "-1"], "expected a price >= 0"),
        (["stats", "--price-per-call", "cheap"], "expected a price such as 0.02"),
        (["purge"], "--older-than"),
        (["purge", "--older-than", "soon"], "soon"),
        (["nonsense"], "invalid choice"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_problem(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad value exits with the usage code 2 and a message naming it."""
    with pytest.raises(SystemExit) as stop:
        parse(*argv)
    assert stop.value.code == 2
    assert says in capsys.readouterr().err


def test_demo_takes_no_store_tenancy_options(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo has its own store; it takes --path but not a workspace."""
    assert parse("demo", "--path", "x.db", "--steps", "3").steps == 3
    with pytest.raises(SystemExit):
        parse("demo", "-w", "x")
    capsys.readouterr()


@pytest.mark.parametrize("argv", [(), *((c,) for c in (*COMMANDS, "mcp", "hook"))])
def test_every_help_fits_an_80_column_terminal(
    argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``scarguard [command] --help`` in an 80-column terminal: no line wraps."""
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--help"])
    lines = capsys.readouterr().out.splitlines()
    assert lines and max(len(line) for line in lines) < 80
