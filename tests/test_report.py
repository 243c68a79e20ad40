"""Bookkeeping trouble: warned about once per kind, counted every time, never raised."""

from __future__ import annotations

import warnings

import pytest

from scarguard.errors import ScarguardWarning
from scarguard.guard._report import Reporter, exception_text
from scarguard.guard.tally import Tally


def test_each_kind_of_trouble_is_warned_about_once_and_counted_every_time() -> None:
    """The same phase and exception type warn once; every occurrence is a bookkeeping error."""
    tally = Tally()
    report = Reporter("deploy", tally=tally)
    with pytest.warns(ScarguardWarning) as caught:
        report("check", OSError("disk gone"))
        report("check", OSError("disk still gone"))
        report("record", OSError("disk gone"))
        report("check", ValueError("bad"))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3
    assert "could not check the call (it ran unguarded) of tool 'deploy'" in messages[0]
    assert "OSError: disk gone" in messages[0]
    assert "record the outcome" in messages[1]
    assert tally.snapshot().bookkeeping_errors == 4


def test_a_fail_closed_check_says_the_call_was_refused() -> None:
    """With fail_closed, a failed check's warning says the call was refused."""
    with pytest.warns(ScarguardWarning, match="it was refused: fail_closed=True"):
        Reporter("deploy", fail_closed=True)("check", OSError("down"))


def test_warnings_as_errors_do_not_turn_trouble_into_an_exception() -> None:
    """Under ``-W error`` the report still returns normally."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Reporter("deploy")("targets", KeyError("path"))


def test_exception_text_survives_an_unprintable_exception_and_is_bounded() -> None:
    """An exception whose ``str()`` raises is named by its type; long text is cut at 500."""

    class Mute(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert exception_text(Mute()) == "Mute: <unprintable>"
    text = exception_text(ValueError("x" * 2000))
    assert text.startswith("ValueError: x")
    assert len(text) == len("ValueError: ") + 501
