"""Canonical, bounded JSON for arbitrary tool arguments, and fingerprints built on it.

Tool arguments are whatever the agent passed: objects, bytes, sets, megabyte strings. They
are turned into a deterministic JSON-safe form (key order irrelevant, numbers significant,
huge values replaced by their hash and length) so that fingerprints are stable across
processes and the stored form stays small.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_NODES",
    "MAX_STRING",
    "canonical_json",
    "fingerprint",
    "storable_text",
    "to_jsonable",
]

MAX_STRING = 2048
"""Strings longer than this are replaced by ``<sha256:…, N chars>`` (full content hashed)."""
MAX_ITEMS = 256
"""Containers with more items keep the first ones and a hash of the whole."""
MAX_DEPTH = 8
"""Deeper nesting is replaced by a placeholder naming its type."""
MAX_NODES = 4096
"""Values looked at in one argument set; the rest are replaced by a placeholder.

Wide and deep at once (256 items on each of 8 levels) would otherwise be billions.
"""
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    r"""Return ``text`` with what some store rejects written as an escape.

    Lone surrogates (what :func:`os.fsdecode` gives for a file name that is not UTF-8)
    cannot be encoded for SQLite or PostgreSQL, and PostgreSQL text cannot hold NUL; they
    become ``\udcff`` and ``\x00``, so every store accepts what any store accepts and two
    different such names stay different.
    """
    if text.isascii() and "\x00" not in text:
        return text
    return _UNSTORABLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return "\\x00" if char == "\x00" else f"\\u{ord(char):04x}"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _type_name(value: object) -> str:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}"


def to_jsonable(value: Any, *, depth: int = 0) -> Any:
    """Return a deterministic JSON-safe form of ``value``.

    Mappings keep string keys (others are stringified), sets are sorted, bytes and long
    strings become hashes, floats that JSON cannot carry become strings, and objects are
    described by their type and public attributes (never by ``repr``, which can hold
    memory addresses). Nesting deeper than :data:`MAX_DEPTH`, more than :data:`MAX_NODES`
    values, objects referring to themselves and objects whose attributes or iteration raise
    all give placeholders: this never raises.
    """
    return _Walk().value(value, depth)


class _Walk:
    """One walk over a value, with its budget of nodes."""

    def __init__(self) -> None:
        self.left = MAX_NODES

    def value(self, value: Any, depth: int) -> Any:
        try:
            return self._value(value, depth)
        except RecursionError:
            raise
        except Exception:  # a hostile object: its type is all that is safe to say
            return {"<type>": _type_name(value)}

    def _value(self, value: Any, depth: int) -> Any:
        if value is None or isinstance(value, (bool, int)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else repr(value)
        if isinstance(value, str):
            if len(value) <= MAX_STRING:
                return value
            return f"<sha256:{_digest(value.encode('utf-8', 'surrogatepass'))}, {len(value)} chars>"
        if isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
            return f"<bytes sha256:{_digest(data)}, {len(data)} bytes>"
        if depth >= MAX_DEPTH:
            return f"<nested {_type_name(value)}>"
        self.left -= 1
        if self.left < 0:
            return f"<truncated {_type_name(value)}>"
        return self._container(value, depth)

    def _container(self, value: Any, depth: int) -> Any:
        if isinstance(value, Mapping):
            items = sorted(((str(k), v) for k, v in value.items()), key=lambda kv: kv[0])
            out = {k: self.value(v, depth + 1) for k, v in items[:MAX_ITEMS]}
            if len(items) > MAX_ITEMS:
                whole = _ENCODER.encode(self.value(items, 0))
                rest = _digest(whole.encode("utf-8", "surrogatepass"))
                out["<truncated>"] = f"{len(items)} keys, sha256:{rest}"
            return out
        if isinstance(value, (set, frozenset)):
            members = [self.value(v, depth + 1) for v in value]
            return _bounded_list(sorted(members, key=_sort_key), depth)
        if isinstance(value, (list, tuple)):
            return _bounded_list([self.value(v, depth + 1) for v in value], depth)
        if hasattr(value, "__fspath__"):
            return str(value.__fspath__())
        public = _public_attributes(value)
        if public is not None:
            described = self.value(public, depth + 1)
            if not isinstance(described, dict):
                described = {"<attributes>": described}
            return {"<type>": _type_name(value), **described}
        if isinstance(value, Iterable):
            return {"<type>": _type_name(value)}
        return {"<type>": _type_name(value), "<str>": self.value(_safe_str(value), depth + 1)}


def _sort_key(member: Any) -> str:
    return json.dumps(member, sort_keys=True)


def _bounded_list(items: list[Any], depth: int) -> list[Any]:
    if len(items) <= MAX_ITEMS:
        return items
    whole = _digest(json.dumps(items, sort_keys=True).encode())
    return [*items[:MAX_ITEMS], f"<truncated: {len(items)} items, sha256:{whole}>"]


def _public_attributes(value: object) -> dict[str, Any] | None:
    try:
        attributes = vars(value)
    except TypeError:
        return None
    return {k: v for k, v in attributes.items() if not k.startswith("_")}


def _safe_str(value: object) -> str:
    """Return ``str(value)`` unless it raises or is the default repr with a memory address."""
    try:
        text = str(value)
    except Exception:
        return ""
    return "" if " at 0x" in text else text


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_MAKE_C_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Any = (
    None
    if _MAKE_C_ENCODER is None
    else _MAKE_C_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, True
    )
)
"""``_ENCODER``'s own C encoder, built once instead of at every ``encode`` (the same bytes:
what is encoded here is acyclic, so the circular-reference markers are left out)."""


def _encode(value: Any) -> str:
    """Return ``_ENCODER.encode(value)`` for a value :func:`to_jsonable` made."""
    if _C_ENCODER is None:
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


def _is_flat(value: Mapping[str, Any]) -> bool:
    """Return whether a mapping is already canonical: string keys, short scalar values.

    Most tool arguments are; for them the recursive walk of :func:`to_jsonable` is skipped
    (this runs on every guarded call).
    """
    if type(value) is not dict or len(value) > MAX_ITEMS:
        return False
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str:
            return False
        if kind is str:
            if len(item) > MAX_STRING:
                return False
        elif kind is float:
            if not math.isfinite(item):
                return False
        elif not (kind is int or kind is bool or item is None):
            return False
    return True


def canonical_json(value: Any) -> str:
    """Return compact, key-sorted JSON of :func:`to_jsonable` of ``value``."""
    if isinstance(value, dict) and _is_flat(value):
        return _encode(value)
    return _encode(to_jsonable(value))


_encode_text: Any = json.encoder.encode_basestring
"""The encoder's own string encoding (``ensure_ascii=False``): a JSON string literal."""


def fingerprint(tool: str, args: Mapping[str, Any]) -> str:
    """Return the fingerprint of a call: a hash of the tool and its canonical arguments.

    The hash is of ``{"args": ..., "tool": ...}`` encoded as :func:`canonical_json` does;
    the two members are written around the encoded arguments in their sorted order (the
    same bytes, without encoding the outer object: this runs on every described call).
    """
    safe = args if _is_flat(args) else to_jsonable(args)
    if type(tool) is str and len(tool) <= MAX_STRING:
        encoded = _ENCODER.encode(safe) if _C_ENCODER is None else "".join(_C_ENCODER(safe, 0))
        payload = f'{{"args":{encoded},"tool":{_encode_text(tool)}}}'
    else:
        payload = _encode({"args": safe, "tool": to_jsonable(tool)})
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:24]
