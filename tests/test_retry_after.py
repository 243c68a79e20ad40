"""How long an error asks to wait before a retry: Retry-After and its kin, capped."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarguard.naming.retry_after import MAX_RETRY_AFTER, retry_after


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Retry-After: 30", 30.0),
        ("retry-after-ms: 500", 0.5),
        ('{"retry_after_ms": 1500}', 1.5),
        ("retry after 2s", 2.0),
        ("Please retry after 20 seconds.", 20.0),
        ("Rate limit reached. Please try again in 20s.", 20.0),
        ("Please try again in 1.5s", 1.5),
        ("Please try again in 859ms.", 0.859),
        ("Please try again in 1m12.5s.", 72.5),
        ("try again in 20 seconds", 20.0),
        ("Please retry in 1.5s", 1.5),
        ('"retryDelay": "34s"', 34.0),
        ("retry after 2 minutes", 120.0),
        ("Retry-After: 99999999", MAX_RETRY_AFTER),
        ("Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", None),
        ("rate limited", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after(text: str | None, expected: float | None) -> None:
    """retry_after reads the requested wait in seconds, capped, or None."""
    got = retry_after(text)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)


@given(st.text())
def test_retry_after_never_raises(text: str) -> None:
    """retry_after returns None or a bounded non-negative wait for any text."""
    got = retry_after(text)
    assert got is None or 0.0 <= got <= MAX_RETRY_AFTER
