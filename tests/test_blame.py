"""Tests for blame classification."""

from __future__ import annotations

import pytest

from scarguard.model import Blame, Outcome
from scarguard.naming._signature import Signature
from scarguard.naming.blame import HARNESS_STATUS_CODES, classify_blame, status_blame
from scarguard.naming.signatures import DEFAULT_BANK, fallback_signature


def _named(name: str) -> Signature:
    sig = DEFAULT_BANK.get(name)
    assert sig is not None
    return sig


FALLBACK = fallback_signature("frobnicator jammed")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("edit_failed", Blame.AGENT),
        ("file_not_found", Blame.AGENT),
        ("syntax_error", Blame.AGENT),
        ("validation_error", Blame.AGENT),
        ("oom_gpu", Blame.AGENT),
        ("rate_limited", Blame.HARNESS),
        ("server_error", Blame.HARNESS),
        ("tool_timeout", Blame.HARNESS),
        ("disk_full", Blame.HARNESS),
        ("nccl_error", Blame.HARNESS),
        ("segfault", Blame.UNKNOWN),
    ],
)
def test_named_signature_blame_is_the_signatures(name: str, expected: Blame) -> None:
    """A named signature's own blame decides, whatever the status code says."""
    assert classify_blame(_named(name), Outcome(ok=False, status_code=503)) is expected
    assert classify_blame(_named(name), Outcome(ok=False)) is expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, Blame.HARNESS),
        (408, Blame.HARNESS),
        (500, Blame.HARNESS),
        (503, Blame.HARNESS),
        (599, Blame.HARNESS),
        (400, Blame.UNKNOWN),
        (404, Blame.UNKNOWN),
        (418, Blame.UNKNOWN),
        (None, Blame.UNKNOWN),
    ],
)
def test_fallback_blame_follows_status_code(status: int | None, expected: Blame) -> None:
    """A fallback signature is harness for 408/429/5xx and unknown otherwise."""
    assert classify_blame(FALLBACK, Outcome(ok=False, status_code=status)) is expected
    assert status_blame(status) is expected


def test_harness_status_codes() -> None:
    """Only timeouts and rate limits among 4xx codes are the harness's."""
    assert frozenset({408, 429}) == HARNESS_STATUS_CODES


def test_override_by_name_wins() -> None:
    """An override for the signature's name beats the signature's blame."""
    overrides = {"command_failed": Blame.AGENT, "rate_limited": "agent"}
    assert classify_blame(_named("command_failed"), Outcome(ok=False), overrides) is Blame.AGENT
    assert classify_blame(_named("rate_limited"), Outcome(ok=False), overrides) is Blame.AGENT
    assert classify_blame(_named("edit_failed"), Outcome(ok=False), overrides) is Blame.AGENT
    assert classify_blame(_named("disk_full"), Outcome(ok=False), overrides) is Blame.HARNESS


def test_override_for_a_fallback_name() -> None:
    """An override can name one fallback signature exactly."""
    overrides = {FALLBACK.name: Blame.AGENT}
    assert classify_blame(FALLBACK, Outcome(ok=False, status_code=503), overrides) is Blame.AGENT
    other = fallback_signature("gearbox melted")
    assert classify_blame(other, Outcome(ok=False, status_code=503), overrides) is Blame.HARNESS


def test_fallback_prefix_override_applies_to_every_fallback() -> None:
    """The key 'error:' overrides every fallback without its own override."""
    other = fallback_signature("gearbox melted")
    overrides = {"error:": Blame.HARNESS, other.name: Blame.AGENT}
    assert classify_blame(FALLBACK, Outcome(ok=False), overrides) is Blame.HARNESS
    assert classify_blame(other, Outcome(ok=False), overrides) is Blame.AGENT
    assert classify_blame(_named("edit_failed"), Outcome(ok=False), overrides) is Blame.AGENT


def test_empty_overrides_change_nothing() -> None:
    """None and an empty mapping leave the signature's blame in force."""
    for overrides in (None, {}):
        assert classify_blame(_named("segfault"), Outcome(ok=False), overrides) is Blame.UNKNOWN
