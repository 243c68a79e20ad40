"""Store plumbing benchmark: do the JSON store's journals and the PostgreSQL watcher pay?

Two questions, each answered against the simpler design it would be replaced by, measured
in the same run on the same machine (figures are medians; ratios are simpler / current):

* **JSON journals.** The JSON store keeps counters and constraints in a small state file and
  appends failures and receipts to two journals; a commit appends, flushes and renames the
  state. The simpler design is one file holding everything, rewritten whole (temp file,
  fsync, rename) under the same file lock. Measured at several history sizes: the cost of
  one failure transaction (a failure, its four totals, a receipt), and the cost another
  instance pays to reload after that commit before its next check (the journal store
  parses the state; the whole file must be parsed with every failure and receipt in it).
* **PostgreSQL watcher.** ``PostgresStore.generation()`` drains LISTEN/NOTIFY messages
  already on a socket, without a round trip. The simpler design reads ``meta.generation``
  on every check (one indexed single-row ``SELECT``). Measured with the server as it is
  here and behind a TCP proxy adding a one-way delay (``--delays``, in ms): the cost of one
  check's generation read, and the staleness, the time from another instance's commit
  returning until a checking instance's token moves.

Run ``python bench/stores.py --out /tmp/stores.json`` (about a minute; ``--quick`` for a
smoke run). ``--pg-url`` names the server (default ``$SCARGUARD_TEST_POSTGRES`` or the test
server on 127.0.0.1); the PostgreSQL part is skipped, and says so, when it is unreachable.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from _common import machine, summary, write_result

from scarguard.model import Failure, Scope
from scarguard.stores import JSONStore
from scarguard.stores._files import atomic_write

SCOPE = Scope("bench", "stores")
_PG_URL = os.environ.get("SCARGUARD_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def _failure(n: int) -> Failure:
    return Failure(
        tool="shell",
        fingerprint=f"fp{n:08d}",
        signature="command_failed",
        blame="agent",
        at=1_767_225_600.0 + n,
        session="bench",
        action_class="shell",
        targets=(f"src/module_{n % 97}.py",),
        args={"command": f"pytest tests/test_{n % 211}.py -x", "cwd": "/srv/app"},
        error=f"FAILED tests/test_{n % 211}.py::test_case_{n} - AssertionError: {n} != {n + 1}",
        duration_ms=812.5,
    )


def _totals(f: Failure) -> list[str]:
    return [f"s:{f.signature}", f"st:{f.signature}\x1f{f.tool}", "b:agent", f"ft:{f.tool}"]


def _record_journal(store: JSONStore, n: int) -> None:
    f = _failure(n)
    with store.transaction(SCOPE) as tx:
        stored = tx.add_failure(f)
        tx.bump_many(_totals(f), f.at)
        tx.receipt("failure", {"id": stored.id, "fingerprint": f.fingerprint}, f.at)


class WholeFile:
    """The simpler JSON design: one document with everything, rewritten whole per commit.

    Only what a failure transaction must do at the least: lock, read and parse the file,
    add the failure, bump its totals, append a receipt, serialise, write atomically and
    durably. No corruption recovery, no receipt sealing: a lower bound of its cost.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = str(path) + ".lock"
        empty = {"failures": [], "counters": {}, "receipts": []}
        atomic_write(str(path), json.dumps(empty).encode())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def prefill(self, count: int) -> None:
        """Write ``count`` failures at once (what ``count`` records would have left)."""
        doc: dict[str, Any] = {"failures": [], "counters": {}, "receipts": []}
        for n in range(count):
            self._add(doc, _failure(n))
        atomic_write(str(self.path), json.dumps(doc, separators=(",", ":")).encode())

    def record(self, n: int) -> None:
        with self._locked():
            doc = json.loads(self.path.read_bytes())
            self._add(doc, _failure(n))
            atomic_write(str(self.path), json.dumps(doc, separators=(",", ":")).encode())

    @staticmethod
    def _add(doc: dict[str, Any], f: Failure) -> None:
        row = f.to_row()
        row["id"] = len(doc["failures"]) + 1
        doc["failures"].append(row)
        for key in _totals(f):
            doc["counters"][key] = doc["counters"].get(key, 0) + 1
        doc["receipts"].append(
            {"seq": len(doc["receipts"]) + 1, "type": "failure", "at": f.at,
             "payload": {"id": row["id"], "fingerprint": f.fingerprint}}
        )  # fmt: skip

    def reload(self) -> dict[str, Any]:
        with open(self.lock, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
            return json.loads(self.path.read_bytes())


@contextlib.contextmanager
def _fsync(durable: bool) -> Iterator[None]:
    """Flush to disk as the stores do, or (``False``) skip every ``os.fsync``.

    Without fsync what is left is the CPU and page-cache cost, steadier on a shared disk.
    """
    real = os.fsync
    if not durable:
        os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def _timed(action: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return samples


def bench_json(histories: list[int], records: int) -> list[dict[str, Any]]:
    """Failure transactions and reloads, journal store against the whole-file rewrite."""
    rows = []
    for history in histories:
        with tempfile.TemporaryDirectory() as folder:
            journal = JSONStore(Path(folder) / "memory.json")
            reader = JSONStore(Path(folder) / "memory.json")
            whole = WholeFile(Path(folder) / "whole.json")
            with _fsync(False):  # the fill is not measured: spare the disk
                for n in range(history):
                    _record_journal(journal, n)
            whole.prefill(history)
            counter = iter(range(history, 10**9))

            def reload(reader: JSONStore = reader) -> object:
                return reader.generation(), reader.load_constraints(SCOPE)

            samples: dict[str, list[float]] = {}
            for durable in (True, False):
                with _fsync(durable):
                    for _ in range(records):  # interleaved, so load drifts hit both alike
                        n = next(counter)
                        for name, action in (
                            ("journal_record", lambda n=n, s=journal: _record_journal(s, n)),
                            ("whole_file_record", lambda n=n, s=whole: s.record(n)),
                            ("journal_reload", reload),
                            ("whole_file_reload", whole.reload),
                        ):
                            key = name if durable else f"{name}_no_fsync"
                            samples.setdefault(key, []).extend(_timed(action, 1))
            sizes = {
                "journal_state_bytes": os.path.getsize(Path(folder) / "memory.json"),
                "whole_file_bytes": os.path.getsize(Path(folder) / "whole.json"),
            }
            journal.close()
            reader.close()
        med = {name: statistics.median(values) for name, values in samples.items()}
        row: dict[str, Any] = {"history": history, **sizes}
        for suffix in ("", "_no_fsync"):
            jr, wr = med[f"journal_record{suffix}"], med[f"whole_file_record{suffix}"]
            jl, wl = med[f"journal_reload{suffix}"], med[f"whole_file_reload{suffix}"]
            for name in ("journal_record", "whole_file_record", "journal_reload",
                         "whole_file_reload"):  # fmt: skip
                row[name + suffix] = summary(samples[name + suffix])
            row[f"journal_records_per_s{suffix}"] = round(1 / jr, 1)
            row[f"whole_file_records_per_s{suffix}"] = round(1 / wr, 1)
            row[f"record_ratio{suffix}"] = round(wr / jr, 2)
            row[f"reload_ratio{suffix}"] = round(wl / jl, 2)
            print(
                f"json  history {history:>6}{suffix or ' (fsync)':>10}: record"
                f" {jr * 1e3:7.2f} ms journal, {wr * 1e3:7.2f} ms whole file (x{wr / jr:.2f});"
                f" reload {jl * 1e6:7.0f} us journal, {wl * 1e6:8.0f} us whole file"
                f" (x{wl / jl:.1f})",
                flush=True,
            )
        rows.append(row)
    return rows


class DelayProxy:
    """A TCP proxy that holds every chunk ``delay`` seconds before forwarding it."""

    def __init__(self, host: str, port: int, delay: float) -> None:
        self.upstream = (host, port)
        self.delay = delay
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.upstream)
            for a, b in ((client, upstream), (upstream, client)):
                a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if self.delay:
                    time.sleep(self.delay)
                sink.sendall(data)
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self.closed = True
        self.server.close()


def _commit(store: Any, n: int) -> None:
    with store.transaction(SCOPE) as tx:
        tx.bump_many([f"ok:bench{n % 7}"], 1_767_225_600.0 + n)


def _wait_for_change(read: Callable[[], object], before: object, limit: float) -> float:
    start = time.perf_counter()
    while read() == before:
        if time.perf_counter() - start > limit:
            return float("nan")
    return time.perf_counter() - start


def bench_postgres(url: str, delays_ms: list[float], checks: int, commits: int) -> dict[str, Any]:
    """Generation reads and staleness: the watcher against a per-check ``SELECT``."""
    try:
        import psycopg
        from psycopg import sql

        from scarguard.stores import PostgresStore
    except ImportError as exc:
        return {"skipped": f"psycopg is not installed ({exc})"}
    try:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return {"skipped": f"PostgreSQL unreachable at {url}: {str(exc).strip()[:160]}"}
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    info = conninfo_to_dict(url)
    host, port = str(info.get("host", "127.0.0.1")), int(info.get("port", 5432))
    schema = f"bench_{uuid.uuid4().hex[:12]}"
    writer = PostgresStore(url, schema=schema)  # creates the schema and its tables
    rows = []
    try:
        for delay in delays_ms:
            proxy = DelayProxy(host, port, delay / 1000)
            proxied = make_conninfo(url, host="127.0.0.1", port=str(proxy.port))
            reader = PostgresStore(proxied, schema=schema)
            plain = psycopg.connect(proxied, autocommit=True)
            plain.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))

            def select(plain: Any = plain) -> int:
                return int(plain.execute("SELECT generation FROM meta").fetchone()[0])

            watch_cost = _timed(reader.generation, checks)
            select_cost = _timed(select, max(20, checks // 20))
            watch_stale, select_stale = [], []
            for n in range(commits):
                before_w, before_s = reader.generation(), select()
                _commit(writer, n)
                watch_stale.append(_wait_for_change(reader.generation, before_w, 5.0))
                _commit(writer, n + commits)
                select_stale.append(_wait_for_change(select, before_s, 5.0))
            plain.close()
            reader.close()
            proxy.close()
            wc, sc = statistics.median(watch_cost), statistics.median(select_cost)
            ws, ss = statistics.median(watch_stale), statistics.median(select_stale)
            rows.append({
                "one_way_delay_ms": delay,
                "watch_generation": summary(watch_cost), "select_generation": summary(select_cost),
                "check_cost_ratio": round(sc / wc, 1),
                "watch_staleness": summary(watch_stale), "select_staleness": summary(select_stale),
            })  # fmt: skip
            print(
                f"pg    delay {delay:>4} ms: generation {wc * 1e6:8.1f} us watcher,"
                f" {sc * 1e6:8.1f} us SELECT (x{sc / wc:.0f}); staleness {ws * 1e3:6.2f} ms"
                f" watcher, {ss * 1e3:6.2f} ms SELECT",
                flush=True,
            )
    finally:
        writer.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    return {"schema": schema, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    """Run both parts and write the results as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (seconds)")
    parser.add_argument("--out", help="where to write the JSON (default bench/results/stores.json)")
    parser.add_argument("--pg-url", default=_PG_URL, help="the PostgreSQL server")
    parser.add_argument("--delays", default="0,2", help="one-way proxy delays in ms (0,2)")
    args = parser.parse_args(argv)
    histories = [100, 1000] if args.quick else [100, 1000, 10_000]
    records = 10 if args.quick else 40
    delays = [float(d) for d in args.delays.split(",") if d.strip()]
    payload = {
        "benchmark": "stores",
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "json": bench_json(histories, records),
        "postgres": bench_postgres(
            args.pg_url, delays, 200 if args.quick else 5000, 5 if args.quick else 40
        ),
    }
    path = write_result("stores", payload, args.out)
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
