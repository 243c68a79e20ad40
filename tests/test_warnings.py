"""Bookkeeping warnings (scarguard._warnings): issued, or logged when warnings are errors."""

from __future__ import annotations

import logging
import warnings

import pytest

from scarguard._warnings import warn
from scarguard.errors import ScarguardWarning


def _caller() -> None:
    warn("the store is read-only", ScarguardWarning)


def test_the_warning_points_at_the_caller_of_the_caller() -> None:
    """stacklevel counts from the function that calls warn()."""
    with pytest.warns(ScarguardWarning, match="read-only") as seen:
        _caller()
    assert seen[0].filename == __file__


def test_under_warnings_as_errors_it_is_logged_instead_of_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """warn() never raises: the message goes to the scarguard logger, once."""
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, logger="scarguard"):
        warnings.simplefilter("error")
        warn("the store is read-only", ScarguardWarning)
        warn("already logged", ScarguardWarning, logged=True)
    messages = [r.getMessage() for r in caplog.records if r.name == "scarguard"]
    assert messages == ["ScarguardWarning: the store is read-only"]
