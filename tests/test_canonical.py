"""Canonical JSON and fingerprints of arbitrary tool arguments."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scarguard import canonical
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


class _Node:
    def __init__(self, child: object = None) -> None:
        self.child = child


def _deep_objects(levels: int) -> _Node:
    node = _Node()
    for _ in range(levels):
        node = _Node(node)
    return node


def test_objects_nested_deeper_than_the_limit_get_a_placeholder() -> None:
    """Objects nested past MAX_DEPTH are described up to the limit, never raising."""
    value = to_jsonable({"config": _deep_objects(12)})
    text = json.dumps(value)
    assert "<nested" in text
    assert fingerprint("tool", {"config": _deep_objects(12)}) == fingerprint(
        "tool", {"config": _deep_objects(12)}
    )


def test_self_referencing_values_get_a_placeholder() -> None:
    """A dict, list or object that contains itself is walked to the depth limit only."""
    loop: dict[str, object] = {}
    loop["self"] = loop
    items: list[object] = []
    items.append(items)
    node = _Node()
    node.child = node
    for value in (loop, items, node):
        assert "<nested" in canonical_json({"v": value})
        assert fingerprint("t", {"v": value}) == fingerprint("t", {"v": value})


class _Hostile:
    """Everything about this object raises."""

    def __getattribute__(self, name: str) -> object:
        if name in ("__class__", "__dict__"):
            raise RuntimeError("no attributes for you")
        return object.__getattribute__(self, name)

    def __str__(self) -> str:
        raise RuntimeError("no str either")


class _BadKey:
    def __str__(self) -> str:
        raise RuntimeError("no key")


def test_objects_whose_attributes_or_keys_raise_are_described_by_their_type() -> None:
    """A hostile object never makes the canonical form raise."""
    assert to_jsonable({"x": _Hostile()})["x"]["<type>"].endswith("_Hostile")
    assert to_jsonable({"x": {_BadKey(): 1}})["x"] == {"<type>": "builtins.dict"}


def test_wide_and_deep_values_cost_a_bounded_walk() -> None:
    """Nested containers past the node budget become placeholders (no exponential walk)."""
    from scarguard.canonical import MAX_NODES

    level: object = list(range(4))
    for _ in range(7):
        level = [level] * 16  # 16**7 lists if walked in full
    text = canonical_json({"v": level})
    assert text.count("<truncated builtins.list>") > 0
    assert text.count("[") <= MAX_NODES + 1


def test_storable_text_escapes_what_some_store_rejects() -> None:
    """Lone surrogates and NUL become escapes; distinct names stay distinct; ASCII untouched."""
    from scarguard.canonical import storable_text

    assert storable_text("plain.txt") == "plain.txt"
    assert storable_text("caf\u00e9") == "caf\u00e9"
    a, b = storable_text("\udcff.txt"), storable_text("\udcfe.txt")
    assert a == "\\udcff.txt" and a != b
    assert storable_text("a\x00b") == "a\\x00b"
    a.encode("utf-8")  # encodable now
    assert storable_text(a) == a


@given(JSON_VALUES)
def test_the_encoder_built_once_writes_the_same_bytes(value: object) -> None:
    """The C encoder kept between calls writes exactly what json.JSONEncoder.encode does."""
    safe = to_jsonable(value)
    assert canonical._encode(safe) == canonical._ENCODER.encode(safe)


def test_fingerprints_are_stable_across_versions() -> None:
    """Stored fingerprints stay valid: these values were computed before the encoder was
    kept between calls."""
    args = {"path": "a.py", "old": "x\u00e9\udcff", "n": 3, "f": 0.1, "b": True, "z": None}
    args["l"] = [1, {"k": "v"}]
    assert fingerprint("edit_file", args) == "fd9e1c8f3c1eee0f71567375"
    assert fingerprint("run_query", {"x": 1}) == "d685df25aa89f4fcef247911"


@given(
    st.text(max_size=20) | st.sampled_from(["read_file", 'quo"te', "nul\x00", "lone\udcff", "é"]),
    st.dictionaries(st.text(max_size=10), JSON_VALUES, max_size=8),
)
def test_the_fingerprint_hashes_the_canonical_call_object(
    tool: str, args: dict[str, object]
) -> None:
    """The payload written around the encoded arguments is the canonical JSON of the whole
    ``{"args": ..., "tool": ...}`` object, byte for byte (stored fingerprints stay valid)."""
    import hashlib

    payload = canonical_json({"args": args, "tool": tool})
    expected = hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    assert fingerprint(tool, args) == expected
