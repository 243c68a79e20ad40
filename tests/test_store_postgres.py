"""The PostgreSQL store on a real server: the checkpoint table, NOTIFY, errors, schema.

Its multi-process, crash and fork tests are those of every store (test_store_processes.py).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.factories import constraint, failure
from helpers.postgres import PG_URL, drop_schema, new_schema, require_postgres, url_for
from helpers.waiting import wait_until
from scarguard.errors import ConfigurationError, SchemaVersionError, StoreError
from scarguard.model import Scope
from scarguard.receipts import verify_store
from scarguard.stores import MemoryStore, open_store

require_postgres()  # skip the module when the server is unreachable (fail if required)

# Every test here talks to the server (a fresh schema each, NOTIFY, timeouts): the quick
# loop leaves them out; the full suite, and CI, run them.
pytestmark = pytest.mark.slow

psycopg = pytest.importorskip("psycopg")
from psycopg import sql  # noqa: E402

from scarguard.stores.postgres import PostgresStore  # noqa: E402
from scarguard.stores.postgres._schema import MIGRATIONS  # noqa: E402

SCOPE = Scope("w", "p")


@pytest.fixture
def schema() -> Iterator[str]:
    """Yield a fresh schema name; drop the schema afterwards."""
    name = new_schema()
    yield name
    drop_schema(name)


@pytest.fixture
def opener(schema: str) -> Iterator[Callable[..., PostgresStore]]:
    """Return a function opening stores on the test schema; close them afterwards."""
    opened: list[PostgresStore] = []

    def open_(**options: Any) -> PostgresStore:
        store = PostgresStore(PG_URL, schema=schema, **options)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


def admin(schema: str, *statements: str | sql.Composed, params: tuple[Any, ...] = ()) -> None:
    """Run ``statements`` in one transaction on ``schema``, as a database administrator would."""
    with psycopg.connect(PG_URL) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        for statement in statements:
            conn.execute(statement, params or None)


# -- the same answers as every other store ---------------------------------------------


def test_identical_history_gives_the_memory_stores_values_and_ids(
    opener: Callable[..., PostgresStore],
) -> None:
    """The contract script gives the in-memory store's values, ids included (rollbacks too)."""
    from test_store_contract import script, snapshot

    reference, store = MemoryStore(receipts=True), opener()
    script(reference)
    script(store)
    assert snapshot(store) == snapshot(reference)
    assert [f.id for f in snapshot(store)[0][0]] == [7, 5, 4, 3, 2, 1]
    assert verify_store(store).valid and verify_store(store).count == 5


def test_threads_share_a_store_and_the_chain_stays_linear(
    opener: Callable[..., PostgresStore],
) -> None:
    """8 threads x 25 records on two tenants: 200 ids, exact counters, chain verifies."""
    store = opener()
    scopes = (SCOPE, Scope("w", "q"))

    def work(n: int) -> None:
        for i in range(25):
            with store.transaction(scopes[n % 2]) as tx:
                stored = tx.add_failure(failure(i))
                tx.bump("k", stored.at)
                tx.receipt("failure", {"id": stored.id}, stored.at)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    ids = {f.id for s in scopes for f in store.failures(s)}
    assert ids == set(range(1, 201))
    assert all(store.counters(s)["k"].count == 100 for s in scopes)
    report = verify_store(store)
    assert report.valid and report.count == 200, report


# -- receipts: the checkpoint table -----------------------------------------------------


def filled(open_: Callable[..., PostgresStore], n: int = 6) -> PostgresStore:
    store = open_()
    for i in range(n):
        with store.transaction(SCOPE) as tx:
            tx.receipt("failure", {"i": i, "note": f"n{i}"}, 10.0 + i)
    return store


def test_a_truncated_tail_is_caught_by_the_checkpoint_table(
    opener: Callable[..., PostgresStore], schema: str
) -> None:
    """Cutting the last receipts after a checkpoint is reported as truncation at 5."""
    store = filled(opener)
    head = store.checkpoint()
    assert head.valid and head.count == 6 and head.head
    admin(schema, "DELETE FROM receipts WHERE seq > 4")
    report = verify_store(opener())
    assert not report.valid and report.first_broken == 5 and "checkpoint" in report.reason


# -- another process's commits (the multi-process, crash and fork tests of every store,
# PostgreSQL included, are in test_store_processes.py) ---------------------------------------


_ONE_CONSTRAINT = """
import sys
sys.path.insert(0, {tests!r})
from helpers.factories import constraint
from scarguard.model import Scope
from scarguard.stores import open_store
store = open_store({url!r})
with store.transaction(Scope("w", "p")) as tx:
    tx.put_constraint(constraint("from-elsewhere"))
store.close()
"""


def commit_elsewhere(url: str) -> None:
    code = _ONE_CONSTRAINT.format(tests=str(Path(__file__).parent), url=url)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_another_process_commit_changes_the_generation_by_notify(
    opener: Callable[..., PostgresStore], schema: str
) -> None:
    """A constraint committed by another process: generation moves (NOTIFY), then it loads."""
    store = opener(revalidate_every=3600)  # only a notification can move the generation
    before = store.generation()
    assert store.load_constraints(SCOPE) == []
    commit_elsewhere(url_for(schema))
    assert wait_until(lambda: store.generation() != before), "no notification arrived"
    assert [c.key for c in store.load_constraints(SCOPE)] == ["from-elsewhere"]


def test_a_dropped_listener_is_replaced_and_the_periodic_check_sees_commits(
    opener: Callable[..., PostgresStore], schema: str
) -> None:
    """With its listening connection killed, the store still notices another commit."""
    store = opener(revalidate_every=0.05)
    other = opener()
    before = store.generation()
    listener = store._watch._listener
    assert listener is not None
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (listener.info.backend_pid,))
    with other.transaction(SCOPE) as tx:
        tx.put_constraint(constraint("after-the-drop"))
    assert wait_until(lambda: store.generation() != before)
    assert [c.key for c in store.load_constraints(SCOPE)] == ["after-the-drop"]
    again = store.generation()
    with other.transaction(SCOPE) as tx:
        tx.bump("k", 1.0)
    assert wait_until(lambda: store.generation() != again)  # listening again


# -- opening: errors, schema versions, concurrent first opens -----------------------------


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://scar:s3cr3t-pw@127.0.0.1:1/test",
        "postgresql://scar:s3cr3t-pw@127.0.0.1:notaport/test",
        "postgres://127.0.0.1:1/test?password=s3cr3t-pw",
    ],
)
def test_unreachable_or_malformed_urls_raise_store_error_without_the_password(url: str) -> None:
    """An unreachable port or a malformed URL raises StoreError that never shows the password."""
    with pytest.raises(StoreError) as caught:
        PostgresStore(url, connect_timeout=2)
    assert "s3cr3t-pw" not in str(caught.value) and "s3cr3t-pw" not in str(caught.value.path)
    assert "127.0.0.1" in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "host=127.0.0.1 port=1 password=s3cr3t-pw dbname=test",
        "postgresql://scar:s3cr3t%zz-pw@127.0.0.1:1/test",
    ],
)
def test_no_part_of_the_error_or_its_traceback_shows_the_password(url: str) -> None:
    """A key=value string or a password libpq cannot parse never shows up in the error chain."""
    import traceback

    with pytest.raises(StoreError) as caught:
        PostgresStore(url, connect_timeout=2)
    shown = "".join(traceback.format_exception(caught.value)) + str(caught.value.path)
    assert "s3cr3t" not in shown and "127.0.0.1" in shown


def test_a_missing_database_raises_store_error() -> None:
    """A database that does not exist is a StoreError naming the URL."""
    url = PG_URL.rsplit("/", 1)[0] + "/scarguard_no_such_db"
    with pytest.raises(StoreError, match="scarguard_no_such_db"):
        PostgresStore(url)


def test_location_has_no_password_and_names_the_schema(schema: str) -> None:
    """location is the URL without password plus ?schema=, and reopens the same store."""
    url = PG_URL.replace("://", "://postgres:pw-secret@", 1) if "@" not in PG_URL else PG_URL
    store = PostgresStore(url, schema=schema)
    try:
        assert "pw-secret" not in store.location and store.location.endswith(f"schema={schema}")
        assert "pw-secret" not in repr(store)
    finally:
        store.close()
    with pytest.raises(ConfigurationError):
        PostgresStore(url_for(schema), schema="another")


def test_a_newer_schema_version_is_refused_and_left_untouched(
    opener: Callable[..., PostgresStore], schema: str
) -> None:
    """A schema stamped by a newer scarguard raises SchemaVersionError; nothing is written."""
    opener().close()
    admin(schema, "UPDATE meta SET version = 99, generation = 7")
    with pytest.raises(SchemaVersionError, match="99"):
        opener()
    with psycopg.connect(PG_URL) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        assert conn.execute("SELECT version, generation FROM meta").fetchone() == (99, 7)


def test_concurrent_first_opens_create_the_schema_once(schema: str) -> None:
    """Eight threads opening a fresh schema at once all succeed; migrations ran once."""
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []
    stores: list[PostgresStore] = []

    def open_() -> None:
        barrier.wait()
        try:
            stores.append(PostgresStore(PG_URL, schema=schema))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for store in stores:
        store.close()
    assert errors == [] and len(stores) == 8
    with psycopg.connect(PG_URL) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        names = [name for (name,) in conn.execute("SELECT name FROM migrations ORDER BY name")]
        assert names == [name for name, _ in MIGRATIONS]  # each step once


# -- the factory and the optional dependency ----------------------------------------------


@pytest.mark.parametrize("scheme", ["postgresql://", "postgres://"])
def test_open_store_opens_postgres_urls(schema: str, scheme: str) -> None:
    """open_store turns both URL schemes into a PostgresStore on the URL's schema."""
    store = open_store(url_for(schema).replace("postgresql://", scheme, 1))
    try:
        assert isinstance(store, PostgresStore) and store.schema == schema
    finally:
        store.close()


def test_open_store_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without psycopg, a postgresql:// URL raises ConfigurationError naming the extra."""
    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.delitem(sys.modules, "scarguard.stores.postgres", raising=False)
    with pytest.raises(ConfigurationError, match=r'pip install "scarguard\[postgres\]"'):
        open_store("postgresql://u@h/db")


def test_importing_scarguard_does_not_import_psycopg() -> None:
    """import scarguard (and scarguard.stores) leaves psycopg unimported."""
    code = "import sys, scarguard, scarguard.stores; assert 'psycopg' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_transaction_begun_while_another_commit_is_in_flight_gets_an_unmatched_token(
    opener: Callable[..., PostgresStore],
) -> None:
    """begin_generation taken during another thread's commit matches no generation() token."""
    store = opener(revalidate_every=3600)
    watch = store._watch
    ticket = watch.start_commit()  # as another thread between sending COMMIT and counting it
    try:
        with store.transaction(SCOPE) as tx:
            tx.bump("k", 1.0)
        assert tx.begin_generation != store.generation()
    finally:
        watch.end_commit(ticket, committed=True)
    assert store.generation() == tx.commit_generation  # an earlier ticket counted late: no change
    with store.transaction(SCOPE) as following:  # nothing in flight: a matching token again
        assert following.begin_generation == store.generation() == tx.commit_generation


def test_a_writer_stuck_in_its_transaction_times_out_the_next(
    opener: Callable[..., PostgresStore],
) -> None:
    """A tenant writer blocked by a peer's open transaction fails after lock_timeout, not never."""
    holder, waiter = opener(), opener(lock_timeout=0.3)
    scope = Scope("w", "p", "s")
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with holder.transaction(scope) as tx:
            tx.bump("held", 1.0)
            inside.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert inside.wait(30)
        started = time.monotonic()
        with pytest.raises(StoreError, match="lock"), waiter.transaction(scope) as tx:
            tx.bump("blocked", 1.0)
        assert time.monotonic() - started < 15
    finally:
        release.set()
        thread.join()
    with waiter.transaction(scope) as tx:
        assert tx.bump("after", 1.0) == 1


def test_lock_timeout_must_be_positive(schema: str) -> None:
    """A zero or negative lock timeout is a configuration error."""
    with pytest.raises(ConfigurationError, match="lock_timeout"):
        PostgresStore(PG_URL, schema=schema, lock_timeout=0)


# -- a server that stops answering, a server that is down -----------------------------------


def test_a_frozen_server_never_blocks_check_and_fails_writes_after_io_timeout(
    schema: str,
) -> None:
    """Through a proxy that stops forwarding, check() answers from the cached constraints
    (also while a revalidation is stuck) and a write fails with StoreError after io_timeout."""
    from concurrent.futures import ThreadPoolExecutor

    from helpers.frozen_proxy import FrozenProxy
    from scarguard import FailureMemory

    proxy, url = FrozenProxy.for_url(url_for(schema))
    worker = ThreadPoolExecutor(max_workers=1)  # one thread: one connection, opened before
    try:
        store = PostgresStore(url, io_timeout=1.5, lock_timeout=0.4, revalidate_every=0.1)
        memory = FailureMemory(store)
        args = {"path": "gone.txt"}
        worker.submit(memory.record, "read_file", args, error="No such file or directory").result()
        assert not memory.check("read_file", args).allowed
        proxy.freeze()
        for _ in range(20):  # revalidations start in the background and hang there
            decision = worker.submit(memory.check, "read_file", args).result(timeout=60)
            assert not decision.allowed
        write = worker.submit(memory.record, "write_file", {"path": "x"}, error="denied")
        with pytest.raises(StoreError, match=r"no answer from the server within 1\.5 s"):
            write.result(timeout=120)  # without a deadline: blocked for good
        decision = worker.submit(memory.check, "read_file", args).result(timeout=60)
        assert not decision.allowed
    finally:
        worker.shutdown(wait=False, cancel_futures=True)
        proxy.close()


def test_a_memory_on_a_server_that_is_down_is_created_and_fails_open_per_call() -> None:
    """FailureMemory("postgresql://...") starts while the server is down; calls fail open."""
    import warnings

    from scarguard import FailureMemory, ScarguardWarning, guarded_tool

    memory = FailureMemory("postgresql://scar:s3cr3t-pw@127.0.0.1:1/test")
    with pytest.raises(StoreError) as caught:
        memory.check("read_file", {"path": "a"})
    assert "s3cr3t-pw" not in str(caught.value)

    @guarded_tool(memory)
    def read_file(path: str) -> str:
        return f"contents of {path}"

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert read_file("a") == "contents of a"
        assert read_file("b") == "contents of b"
    assert any(issubclass(w.category, ScarguardWarning) for w in seen)
    memory.close()


def test_a_deferred_store_opens_once_the_server_answers(schema: str) -> None:
    """A store created while its server was unreachable opens at the first use after that."""
    from helpers.frozen_proxy import FrozenProxy

    proxy, url = FrozenProxy.for_url(url_for(schema))
    port = proxy.port
    proxy.close()  # nothing listens there now
    with pytest.raises(StoreError):
        PostgresStore(url, connect_timeout=2)
    store = PostgresStore(url, connect_timeout=2, defer_connect=True, retry_every=0.0)
    with pytest.raises(StoreError):
        store.load_constraints(SCOPE)
    relay = FrozenProxy(proxy.upstream, port=port)  # the server answers there again
    try:
        assert store.load_constraints(SCOPE) == []
    finally:
        store.close()
        relay.close()
