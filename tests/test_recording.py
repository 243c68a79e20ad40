"""Recording a failure: the row stored, the receipt sealed over it, what it depends on."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarguard import FailureMemory
from scarguard.canonical import canonical_json
from scarguard.learning import keys
from scarguard.learning._recording import _failure_payload
from scarguard.learning.rules import Lesson, _same_state_key, _state_json
from scarguard.model import Blame, Call, Failure
from scarguard.naming._signature import Signature
from scarguard.receipts import GENESIS, seal, verify_store
from scarguard.redact import REDACTED
from scarguard.testing import FakeClock


def test_a_failure_is_stored_and_sealed_as_one_row(tmp_path: Path) -> None:
    """The stored failure is the one returned, redacted, and its receipt seals that row."""
    db = tmp_path / "memory.db"
    with FailureMemory(db, root=tmp_path, clock=FakeClock()) as memory:
        result = memory.record(
            "http_get",
            {"url": "https://example.com/a", "api_key": "k-123"},
            error="HTTP 500 with Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
            duration_ms=12.5,
        )
        stored = memory.recent_failures()[0]
        assert verify_store(memory.store).valid
    assert result.failure == stored
    assert stored.id is not None
    assert stored.args["api_key"] == REDACTED
    assert stored.error is not None and "abcdefghijklmnopqrstuvwxyz" not in stored.error
    with sqlite3.connect(db) as conn:
        (payload,) = conn.execute(
            "SELECT payload FROM receipts WHERE type = 'failure' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
    row = {k: repr(v) if isinstance(v, float) else v for k, v in stored.to_row().items()}
    assert json.loads(payload)["failure"] == row


# a long text is one character repeated past the canonical form's bound: drawing 2,000
# characters one by one costs seconds in the quick test loop
LONG = st.builds(lambda c, n: c * n, st.characters(), st.integers(2049, 2100))
PATHS = st.text(max_size=40) | LONG


@given(st.dictionaries(PATHS, PATHS | st.integers(), max_size=8))
def test_the_same_state_counter_keeps_its_canonical_digest(observed: dict[str, object]) -> None:
    """Observed tokens are keyed by the canonical JSON of their sorted pairs, as before."""
    assert _state_json(observed) == canonical_json(sorted(observed.items()))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "observed",
    [
        {f"/w/{i}": "-" for i in range(300)},  # more pairs than the canonical form keeps whole
        {f"/w/{i}": "t" * 100 for i in range(40)},  # a long text of short strings
        {"/w/a": b"bytes", "/w/b": None},  # tokens of an observer that are not strings
    ],
)
def test_unusual_observations_keep_their_canonical_digest(observed: dict[str, object]) -> None:
    """Beyond short strings, the same text as the canonical walk still."""
    assert _state_json(observed) == canonical_json(sorted(observed.items()))  # type: ignore[arg-type]


@given(st.lists(st.dictionaries(PATHS, PATHS, max_size=6), min_size=1, max_size=4))
def test_a_remembered_state_digest_is_the_digest_of_its_state(
    states: list[dict[str, str]],
) -> None:
    """The digests remembered by their pairs are those of the canonical text, each state's own."""
    call = Call(tool="bash", args={"command": "make"}, fingerprint="f" * 24)
    for observed in [*states, *states, *(dict(reversed(s.items())) for s in states)]:
        lesson = Lesson(
            call,
            Failure(tool="bash", fingerprint="f" * 24, signature="s", blame="agent", at=1.0),
            Signature("s", None, Blame.AGENT, "Look again.", "s"),
            deterministic=False,
            observed=observed,
        )
        text = canonical_json(sorted(observed.items()))
        digest = hashlib.blake2b(text.encode(), digest_size=8).hexdigest()
        assert _same_state_key(lesson) == keys.same_state_counter(call, "s", digest)


_TEXTS = st.text(max_size=10)
_FAILURES = st.builds(
    Failure,
    tool=_TEXTS,
    fingerprint=st.text("0123456789abcdef", min_size=1, max_size=24),
    signature=_TEXTS,
    blame=st.sampled_from(list(Blame)),
    at=st.floats(0, 4e9) | st.integers(0, 4_000_000_000),
    session=_TEXTS,
    action_class=st.none() | _TEXTS,
    targets=st.lists(_TEXTS, max_size=3),
    args=st.dictionaries(_TEXTS, _TEXTS | st.integers() | st.none() | st.booleans(), max_size=3),
    error=st.none() | _TEXTS,
    status_code=st.none() | st.integers(100, 599),
    duration_ms=st.none() | st.floats(0, 1e6),
    agent=st.none() | _TEXTS,
    provider=st.none() | _TEXTS | st.booleans() | st.floats(allow_nan=False),  # (unchecked types)
    id=st.none() | st.integers(1, 10**12),
)


@given(_FAILURES, st.lists(_TEXTS, max_size=3), st.lists(_TEXTS, max_size=2))
def test_a_failure_receipt_is_written_as_its_canonical_text(
    failure: Failure, learned: list[str], evicted: list[str]
) -> None:
    """The failure payload written directly is the text sealing writes of the payload."""

    class Key:
        def __init__(self, key: str) -> None:
            self.key = key

    payload = _failure_payload(failure, [Key(k) for k in learned], [Key(k) for k in evicted])  # type: ignore[misc]
    expected = {"failure": failure.to_row(), "learned": learned, "evicted": evicted}
    assert dict(payload) == expected
    assert payload.canonical == seal(1, GENESIS, "failure", 1.0, expected).payload
