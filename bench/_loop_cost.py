"""Loop-block and round-trip measurements for bench/cost.py.

* ``loop_block_sqlite``: async guarded calls (``async with memory.attempt``) while another
  process holds the SQLite write lock for 2 s; a ticker task sleeping 1 ms measures how
  late the loop wakes it (the loop's lag: how long something else held the loop).
* ``loop_block_postgres``: the same against PostgreSQL reached through a local TCP proxy on
  127.0.0.1 that delays every server reply by 50 ms.
* ``postgres_round_trips``: how many request/response exchanges one failure record costs,
  counted by the same proxy (a client write followed by a server reply is one round trip).
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import socket
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from _common import percentile

from scarguard import FailureMemory

EDIT_ERROR = "old_string not found in file"


def _hold_write_lock(path: str, seconds: float, ready: Any) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    ready.set()
    time.sleep(seconds)
    conn.execute("ROLLBACK")
    conn.close()


async def _ticker(lags: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        due = loop.time() + 0.001
        await asyncio.sleep(0.001)
        lags.append(max(0.0, loop.time() - due))


async def _agent(memory: FailureMemory, calls: int) -> None:
    """Guarded async calls, every other one failing (so each of those is a store write)."""
    for i in range(calls):
        args = {"path": f"f{i % 7}.py", "old_string": f"x{i}", "new_string": "y"}
        async with memory.attempt("edit_file", args) as attempt:
            if not attempt.refused and i % 2:
                attempt.failed(EDIT_ERROR)
        await asyncio.sleep(0)


async def _run(memory: FailureMemory, calls: int) -> dict[str, Any]:
    lags: list[float] = []
    stop = asyncio.Event()
    ticker = asyncio.create_task(_ticker(lags, stop))
    started = time.perf_counter()
    await _agent(memory, calls)
    elapsed = time.perf_counter() - started
    stop.set()
    await ticker
    return {
        "calls": calls,
        "elapsed_s": round(elapsed, 3),
        "ticker_lag_p99_ms": round(percentile(lags, 0.99) * 1000, 3),
        "ticker_lag_max_ms": round(max(lags) * 1000, 3),
        "ticks": len(lags),
    }


def loop_block_sqlite(folder: Path, calls: int, hold_s: float = 2.0) -> dict[str, Any]:
    path = str(folder / "loop.db")
    memory = FailureMemory(path, session="loop")
    memory.record("warm", {}, ok=True)
    memory.flush()
    ready = mp.get_context("spawn").Event()
    holder = mp.get_context("spawn").Process(target=_hold_write_lock, args=(path, hold_s, ready))
    holder.start()
    ready.wait(30)
    try:
        result = asyncio.run(_run(memory, calls))
    finally:
        holder.join()
        memory.close()
    result["write_lock_held_s"] = hold_s
    return result


class DelayProxy:
    """Forward TCP on 127.0.0.1 to a server, delaying each server reply; count round trips."""

    def __init__(self, target: tuple[str, int], delay_s: float) -> None:
        self.target = target
        self.delay_s = delay_s
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.round_trips = 0
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            state = {"waiting": False}
            threading.Thread(
                target=self._pipe, args=(client, server, state, False), daemon=True
            ).start()
            threading.Thread(
                target=self._pipe, args=(server, client, state, True), daemon=True
            ).start()

    def _pipe(
        self, src: socket.socket, dst: socket.socket, state: dict[str, bool], reply: bool
    ) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if reply:
                    time.sleep(self.delay_s)
                    with self._lock:
                        if state["waiting"]:
                            self.round_trips += 1
                            state["waiting"] = False
                else:
                    with self._lock:
                        state["waiting"] = True
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed = True
        self.listener.close()


def _pg_url(port: int) -> str:
    base = os.environ.get("SCARGUARD_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
    return base.replace("127.0.0.1:5432", f"127.0.0.1:{port}")


def postgres_available() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


def _pg_memory(url: str, schema: str) -> FailureMemory:
    from scarguard.stores import PostgresStore

    return FailureMemory(PostgresStore(url, schema=schema), session="bench")


def _drop(schema: str) -> None:
    import psycopg

    with psycopg.connect(_pg_url(5432), autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def postgres_round_trips(records: int = 20) -> dict[str, Any]:
    """Round trips per failure record, counted through the proxy (no delay)."""
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    proxy = DelayProxy(("127.0.0.1", 5432), 0.0)
    try:
        memory = _pg_memory(_pg_url(proxy.port), schema)
        memory.record("warm", {"i": -1}, error=EDIT_ERROR)
        counts = []
        for i in range(records):
            before = proxy.round_trips
            memory.record("bash", {"command": f"job {i}"}, error="command failed: exit code 1")
            counts.append(proxy.round_trips - before)
        memory.close()
    finally:
        proxy.close()
        _drop(schema)
    counts.sort()
    return {"records": records, "p50": counts[len(counts) // 2], "max": counts[-1]}


def loop_block_postgres(calls: int, delay_s: float = 0.05) -> dict[str, Any]:
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    proxy = DelayProxy(("127.0.0.1", 5432), delay_s)
    try:
        memory = _pg_memory(_pg_url(proxy.port), schema)
        try:
            result = asyncio.run(_run(memory, calls))
        finally:
            memory.close()
    finally:
        proxy.close()
        _drop(schema)
    result["server_delay_ms"] = delay_s * 1000
    return result
