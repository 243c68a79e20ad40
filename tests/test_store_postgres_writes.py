"""PostgresStore write path: a failure record in three round trips, errors still mapped.

Round trips are counted by the cost benchmark's TCP proxy between the store and the server
(a client write followed by a server reply is one), the same count ``bench/cost.py``
reports.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.postgres import PG_URL, drop_schema, new_schema, require_postgres
from scarguard import FailureMemory
from scarguard.errors import StoreError
from scarguard.model import Scope
from scarguard.receipts import verify_store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _loop_cost import DelayProxy

pytestmark = pytest.mark.usefixtures("postgres")
SCOPE = Scope("acme", "web")
ERROR = "command failed: exit code 1"


@pytest.fixture
def postgres() -> None:
    require_postgres()


@pytest.fixture
def proxied() -> Iterator[tuple[DelayProxy, str]]:
    """A counting proxy to the test server, and a URL through it on a fresh schema."""
    schema = new_schema()
    proxy = DelayProxy(("127.0.0.1", 5432), 0.0)
    url = PG_URL.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    try:
        yield proxy, f"{url}{'&' if '?' in url else '?'}schema={schema}"
    finally:
        proxy.close()
        drop_schema(schema)


def trips(proxy: DelayProxy, action: Any) -> int:
    before = proxy.round_trips
    action()
    return proxy.round_trips - before


def test_a_failure_record_is_three_round_trips(proxied: tuple[DelayProxy, str]) -> None:
    proxy, url = proxied
    if "127.0.0.1:5432" not in PG_URL:
        pytest.skip("the proxy forwards to the default test server only")
    memory = FailureMemory(url, session="t")
    memory.record("warm", {"i": -1}, error=ERROR)
    counts = [
        trips(proxy, lambda i=i: memory.record("bash", {"command": f"job {i}"}, error=ERROR))
        for i in range(8)
    ]
    assert counts == [3] * 8
    report = memory.verify()
    assert report.valid and report.count == 9
    assert len(memory.store.failures(memory.scope)) == 9
    memory.close()


def test_a_queued_statement_that_fails_rolls_the_transaction_back(
    proxied: tuple[DelayProxy, str],
) -> None:
    """An error of a statement sent without waiting surfaces at the next wait, mapped."""
    _, url = proxied
    from scarguard.stores import PostgresStore

    store = PostgresStore(url)
    with store.transaction(SCOPE) as tx:
        tx.bump("kept", 1.0)
    with pytest.raises(StoreError, match="write failed"), store.transaction(SCOPE) as tx:
        tx.bump_many(["lost"], 2.0)
        tx.bump_many(["overflow"], 2.0, by=2**70)  # bigint out of range, on the server
        tx.bump("kept", 2.0)
    with store.transaction(SCOPE) as tx:  # the connection is usable again
        assert tx.bump("kept", 3.0) == 2
    assert set(store.counters(SCOPE)) == {"kept"}
    store.close()


def test_a_body_that_raises_leaves_nothing_queued_behind(proxied: tuple[DelayProxy, str]) -> None:
    _, url = proxied
    from scarguard.stores import PostgresStore

    store = PostgresStore(url)
    with pytest.raises(RuntimeError), store.transaction(SCOPE) as tx:
        tx.bump_many(["queued"], 1.0)
        tx.receipt("note", {"n": 1}, 1.0)
        raise RuntimeError("the body fails")
    with store.transaction(SCOPE) as tx:
        tx.receipt("note", {"n": 2}, 2.0)
    assert store.counters(SCOPE) == {}
    report = verify_store(store)
    assert report.valid and report.count == 1
    store.close()
