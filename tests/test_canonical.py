"""Canonical JSON and fingerprints of arbitrary tool arguments."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scarguard.canonical import MAX_ITEMS, MAX_STRING, canonical_json, fingerprint, to_jsonable

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=20,
)


@given(st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=8))
def test_key_order_never_changes_the_fingerprint(args: dict[str, object]) -> None:
    """The same arguments in reverse key order fingerprint identically."""
    reordered = dict(reversed(list(args.items())))
    assert fingerprint("tool", args) == fingerprint("tool", reordered)


@given(st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=8))
def test_canonical_json_is_valid_json(args: dict[str, object]) -> None:
    """Whatever the arguments, the canonical form parses as JSON."""
    json.loads(canonical_json(args))


def test_numbers_are_significant() -> None:
    """Different offsets are different calls (pagination)."""
    assert fingerprint("read", {"offset": 0}) != fingerprint("read", {"offset": 100})
    assert fingerprint("read", {"offset": 1}) != fingerprint("read", {"offset": "1"})


def test_fast_path_and_slow_path_agree() -> None:
    """A flat dict gives the same fingerprint as the same content through the full walk."""
    flat = {"path": "a.py", "n": 3, "ok": True, "x": None, "f": 1.5}
    assert canonical_json(flat) == json.dumps(
        to_jsonable(flat), sort_keys=True, separators=(",", ":")
    )


def test_large_and_odd_values_are_bounded_and_deterministic() -> None:
    """Huge strings, bytes, sets, paths, long lists and objects become small stable forms."""

    class Thing:
        def __init__(self) -> None:
            self.name = "x"
            self._hidden = object()

    args = {
        "huge": "y" * (MAX_STRING + 10),
        "raw": b"\x00" * 1000,
        "tags": {"b", "a"},
        "path": Path("/tmp/a"),
        "many": list(range(MAX_ITEMS * 2)),
        "thing": Thing(),
        "nan": float("nan"),
    }
    first = canonical_json(args)
    assert canonical_json(dict(args)) == first
    assert len(first) < 5000
    decoded = json.loads(first)
    assert decoded["tags"] == ["a", "b"]
    assert decoded["path"] == "/tmp/a"
    assert decoded["thing"]["name"] == "x"
    assert "0x" not in first


def test_broken_str_does_not_raise() -> None:
    """An argument whose __str__ raises is described by its type, without an exception."""

    class Broken:
        __slots__ = ()

        def __str__(self) -> str:
            raise RuntimeError("boom")

    assert "Broken" in canonical_json({"x": Broken()})
