"""The port a failing server could not listen on.

``Error: listen EADDRINUSE: address already in use :::3000``, ``Port 8000 is in use by
another program``, docker's ``Bind for 0.0.0.0:80 failed: port is already allocated``; and
for Python's ``OSError: [Errno 98] Address already in use``, which names none, the port the
command asks for (``--port 8000``, ``-p 8000``, ``PORT=8000``, ``localhost:8000``,
``python -m http.server 8000``, ``manage.py runserver 8000``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["held_port"]

_IN_ERROR: Final = re.compile(
    r"(?i:address already in use|EADDRINUSE)[^\n]{0,40}?:(\d{2,5})\b"
    r"|\b[Pp]ort (\d{2,5}) is (?:already )?in use\b"
    r"|\bBind for [\w.:\[\]]*:(\d{2,5}) failed\b"
    r"|\b(?:127\.0\.0\.1|0\.0\.0\.0|localhost|\[::\]):(\d{2,5})\b[^\n]{0,60}?(?i:already in use)"
)
_IN_COMMAND: Final = re.compile(
    r"(?:--port[= ]|(?<![\w-])-p[= ]?|\bPORT=|(?:localhost|127\.0\.0\.1|0\.0\.0\.0):)(\d{2,5})\b"
    r"|\b(?:http\.server|runserver|serve)\s+(?:[\w.]+:)?(\d{2,5})\b"
)


def held_port(error: str | None, call_args: Mapping[str, Any]) -> int | None:
    """Return the port a ``port_in_use`` failure could not listen on, if it can be told."""
    found = _IN_ERROR.search((error or "")[:8192])
    for value in call_args.values():
        if found is not None:
            break
        if isinstance(value, str):
            found = _IN_COMMAND.search(value[:4096])
    return None if found is None else _port(next(g for g in found.groups() if g))


def _port(text: str) -> int | None:
    port = int(text)
    return port if 0 < port < 65536 else None
