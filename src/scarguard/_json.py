"""Compact JSON text as ``json.dumps`` writes it, with the encoder built once.

``json.dumps`` and ``JSONEncoder.encode`` build a new C encoder on every call, which costs
more than encoding a small value: rows and receipts are written on every recorded failure.
:func:`compact` builds it once. The text is the same as ``json.dumps(value,
separators=(",", ":"), sort_keys=...)`` for every value without cycles (the circular-reference
check is left out: the values encoded here are built by scarguard and never cyclic).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["compact", "quote"]

_MAKE: Any = getattr(json.encoder, "c_make_encoder", None)
_QUOTE: Any = getattr(json.encoder, "c_encode_basestring_ascii", None) or (
    json.encoder.py_encode_basestring_ascii
)
quote: Callable[[str], str] = _QUOTE
"""A string as JSON text, as ``json.dumps`` writes it (``ensure_ascii``)."""


def compact(*, sort_keys: bool = False) -> Callable[[Any], str]:
    """Return a function writing ``json.dumps(value, separators=(",", ":"), sort_keys=...)``.

    Args:
        sort_keys: Write mappings' keys in sorted order.

    Returns:
        The encoding function. Where the C encoder is missing (another Python
        implementation), it is the standard encoder's ``encode``.
    """
    encoder = json.JSONEncoder(separators=(",", ":"), sort_keys=sort_keys)
    if _MAKE is None:
        return encoder.encode
    make = _MAKE(None, encoder.default, _QUOTE, None, ":", ",", sort_keys, False, True)

    def encode(value: Any) -> str:
        if type(value) is str:
            return _QUOTE(value)  # type: ignore[no-any-return]
        return "".join(make(value, 0))

    return encode
