"""The port a failing server could not listen on, and the one a failing client connects to.

``Error: listen EADDRINUSE: address already in use :::3000``, ``Port 8000 is in use by
another program``, docker's ``Bind for 0.0.0.0:80 failed: port is already allocated``; and
for Python's ``OSError: [Errno 98] Address already in use``, which names none, the port the
command asks for (``--port 8000``, ``-p 8000``, ``PORT=8000``, ``localhost:8000``,
``python -m http.server 8000``, ``manage.py runserver 8000``).

A client (``curl -s http://127.0.0.1:8000/health``, ``nc -z localhost 5432``) that fails
while nothing listens on the local port it names fails for that: it may succeed once a
server listens there, though its error (``curl -s`` prints none) may say nothing of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["connected_port", "held_port"]

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

_LOCAL: Final = r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\])"
_CONNECTS: Final = re.compile(
    rf"(?<![\w.-]){_LOCAL}:(\d{{2,5}})\b|(?<![\w.-]){_LOCAL}\s+(\d{{2,5}})(?![\w.:])"
)
"""A local port a client connects to (``http://localhost:8000/``, ``nc localhost 8000``)."""
_CLIENTS: Final = frozenset(
    {"curl", "wget", "http", "https", "xh", "nc", "ncat", "netcat", "telnet", "grpcurl",
     "websocat", "wscat"}
)  # fmt: skip
"""Programs whose failure with a local port named is a failure to reach what listens there."""


def connected_port(call_args: Mapping[str, Any], words: frozenset[str]) -> int | None:
    """Return the one local port a client command connects to (``None``: none, or several).

    Args:
        call_args: The call's arguments (the command text is searched).
        words: The command's words: one of them must be a client program (``curl``...).
    """
    if words.isdisjoint(_CLIENTS):
        return None
    ports = set()
    for value in call_args.values():
        if isinstance(value, str):
            for match in _CONNECTS.finditer(value[:4096]):
                ports.add(next(g for g in match.groups() if g))
    return _port(ports.pop()) if len(ports) == 1 else None


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
