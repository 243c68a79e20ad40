"""Guard options: every option of @guarded_tool is validated when decorating."""

from __future__ import annotations

from typing import Any

import pytest

from scarguard.errors import ConfigurationError
from scarguard.guard.decorator import guarded_tool
from scarguard.guard.options import MEMORY_UNAVAILABLE, GuardOptions
from scarguard.guard.retrying import Retry
from scarguard.memory import FailureMemory


@pytest.mark.parametrize(
    "options",
    [
        {"on_block": "ignore"},
        {"retry": "three"},
        {"retry": 0},
        {"targets": ["nope"]},
        {"failure_when": 3},
        {"name": ""},
        {"ignore_args": "ctx"},
    ],
)
def test_bad_options_raise_at_decoration(memory: FailureMemory, options: dict[str, Any]) -> None:
    """Invalid options raise ConfigurationError when decorating, not when calling."""

    def tool(path: str) -> str:
        return path

    with pytest.raises(ConfigurationError):
        guarded_tool(memory, **options)(tool)


def test_warnings_option_is_validated(memory: FailureMemory) -> None:
    """warnings= takes None or "append"; anything else is a ConfigurationError."""
    with pytest.raises(ConfigurationError, match="warnings"):
        guarded_tool(memory, warnings="prepend")


# -- the options value on its own ---------------------------------------------------------------


def test_defaults_raise_on_block_and_enforce_as_the_memory_does() -> None:
    """Only a name is needed: refusals raise, nothing is retried, the memory decides enforcement."""
    options = GuardOptions(name="build")
    assert (options.on_block, options.retry, options.fail_closed) == ("raise", None, False)
    assert options.enforce is None
    assert options.ignore_args == ()


def test_retry_and_ignore_args_are_converted() -> None:
    """retry= takes a number of attempts; ignore_args any sequence of names, kept as a tuple."""
    options = GuardOptions(name="build", retry=2, ignore_args=["ctx", "run_id"])
    assert isinstance(options.retry, Retry)
    assert options.ignore_args == ("ctx", "run_id")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"name": "  "}, "name"),
        ({"name": "t", "on_block": "skip"}, "on_block"),
        ({"name": "t", "targets": "path"}, "targets"),
        ({"name": "t", "ignore_args": "ctx"}, "ignore_args"),
        ({"name": "t", "ignore_args": [1]}, "ignore_args"),
        ({"name": "t", "agent": 3}, "agent"),
        ({"name": "t", "enforce": "yes"}, "enforce"),
        ({"name": "t", "failure_when": "error"}, "failure_when"),
    ],
)
def test_each_invalid_option_is_named_in_the_error(options: dict[str, Any], named: str) -> None:
    """The ConfigurationError names the option that is wrong."""
    with pytest.raises(ConfigurationError, match=named):
        GuardOptions(**options)


def test_the_unavailable_message_names_the_tool_and_says_nothing_ran() -> None:
    """The fail-closed refusal names the tool and says the call was not run."""
    message = MEMORY_UNAVAILABLE.format(tool="deploy")
    assert "deploy" in message
    assert "was not run" in message
