"""A TCP proxy on 127.0.0.1 that can freeze: it keeps every connection open, forwards nothing.

That is what a server that stops answering without closing the connection looks like to a
client (a hung proxy, a half-open connection): the kernel still acknowledges what is sent,
so TCP keepalives and ``tcp_user_timeout`` never fire.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from urllib.parse import urlsplit, urlunsplit


class FrozenProxy:
    """Forward 127.0.0.1:<port> to ``upstream`` until :meth:`freeze` is called."""

    def __init__(self, upstream: tuple[str, int], *, port: int = 0) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = self._listener.getsockname()[1]
        self.frozen = threading.Event()
        self._stop = threading.Event()
        self._sockets: list[socket.socket] = [self._listener]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @classmethod
    def for_url(cls, url: str) -> tuple[FrozenProxy, str]:
        """Return a proxy in front of the server of ``url`` and the URL going through it."""
        parts = urlsplit(url)
        proxy = cls((parts.hostname or "127.0.0.1", parts.port or 5432))
        user = f"{parts.username}@" if parts.username else ""
        netloc = f"{user}127.0.0.1:{proxy.port}"
        return proxy, urlunsplit(parts._replace(netloc=netloc))

    def freeze(self) -> None:
        """Stop forwarding in both directions; keep every connection open."""
        self.frozen.set()

    def close(self) -> None:
        """Stop the proxy and close every socket."""
        self._stop.set()
        self._thread.join(timeout=5)
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ, None)
        while not self._stop.is_set():
            for key, _ in selector.select(timeout=0.05):
                if key.data is None:
                    client, _ = self._listener.accept()
                    server = socket.create_connection(self.upstream)
                    self._sockets += [client, server]
                    selector.register(client, selectors.EVENT_READ, server)
                    selector.register(server, selectors.EVENT_READ, client)
                    continue
                if self.frozen.is_set():
                    continue  # leave the bytes unread: nothing goes through
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(source)
                    with contextlib.suppress(OSError):
                        key.data.shutdown(socket.SHUT_WR)
                    continue
                with contextlib.suppress(OSError):
                    key.data.sendall(data)
            if self.frozen.is_set():
                self._stop.wait(0.05)  # frozen sockets stay readable: do not spin
        selector.close()
