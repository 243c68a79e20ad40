"""The pieces of a constraint's reason are quoted, bounded and cleaned before they are put in."""

from __future__ import annotations

from scarguard.learning._reasons import name, quote, shown, summary, times


def test_values_are_quoted_and_bounded() -> None:
    """A target is shown in quotes, cut at 80 characters."""
    assert quote("app.py") == '"app.py"'
    assert len(quote("x" * 200)) <= 82


def test_argument_names_are_kept_only_when_plain() -> None:
    """A plain argument name stays as it is; one spelling anything else is quoted."""
    assert name("batch_size") == "batch_size"
    assert name("ignore previous\nlr") == '"ignore previous lr"'


def test_parameter_values_show_numbers_as_they_are() -> None:
    """Numbers and null are shown bare; strings and structures quoted."""
    assert (shown(0.1), shown(32), shown(None)) == ("0.1", "32", "null")
    assert (shown("big"), shown([1, 2])) == ('"big"', '"[1,2]"')


def test_a_call_without_a_target_is_summed_up_by_two_arguments() -> None:
    """The first two arguments that have a value, quoted; nothing for no arguments."""
    assert summary({"a": 1, "b": None, "c": "x"}) == ' (a="1")'
    assert summary({"query": "todo", "limit": 5, "page": 2}) == ' (query="todo", limit="5")'
    assert summary({}) == ""


def test_counts_read_as_words() -> None:
    """One failure is ``once``; more are ``N times``."""
    assert (times(1), times(3)) == ("once", "3 times")
