"""Tests for memory.attempt: the one guard step, under with and async with."""

from __future__ import annotations

import asyncio
import functools
import threading
import traceback
from pathlib import Path
from typing import Any

import pytest

from scarguard import Attempt, FailureMemory
from scarguard.errors import ConfigurationError, ScarguardWarning, StoreError
from scarguard.stores import MemoryStore
from scarguard.testing import FakeClock

EDIT = {"path": "app.py", "old_string": "def main(", "new_string": "def run("}
NOT_FOUND = "old_string not found in file"


class Recorded:
    """Wrap memory.record to see what each record was given."""

    def __init__(self, memory: FailureMemory) -> None:
        self.calls: list[dict[str, Any]] = []
        self._record = memory.record
        memory.record = self  # type: ignore[method-assign]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return self._record(*args, **kwargs)


def test_allowed_call_checks_on_entry_and_records_success(memory: FailureMemory) -> None:
    """Entering checks; succeeded(result) records a success and passes the result on."""
    seen = Recorded(memory)
    with memory.attempt("edit_file", EDIT) as attempt:
        assert isinstance(attempt, Attempt)
        assert not attempt.refused and attempt.decision.allowed and attempt.message == ""
        attempt.succeeded("patched")
        assert seen.calls == []  # recorded when the block is left
    assert [(c["ok"], c["result"]) for c in seen.calls] == [(True, "patched")]
    assert attempt.recorded is not None and attempt.recorded.failure is None


def test_block_left_without_a_call_is_a_success(memory: FailureMemory) -> None:
    """Neither succeeded() nor failed() and no exception: the call is recorded as a success."""
    seen = Recorded(memory)
    with memory.attempt("read_file", {"path": "a.txt"}):
        pass
    assert [c["ok"] for c in seen.calls] == [True]


def test_failed_result_is_recorded_and_the_identical_call_refused(memory: FailureMemory) -> None:
    """failed(text) records a failure; the next identical attempt is refused, body skipped."""
    with memory.attempt("edit_file", EDIT) as attempt:
        attempt.failed(NOT_FOUND)
    assert attempt.recorded is not None and attempt.recorded.signature == "edit_failed"
    ran = []
    with memory.attempt("edit_file", EDIT) as again:
        if not again.refused:
            ran.append(True)
    assert again.refused and not again.decision.allowed
    assert "edit_file" in again.message and NOT_FOUND not in again.message
    assert ran == []
    assert len(memory.recent_failures()) == 1  # the refused attempt recorded nothing


def test_exception_is_recorded_and_propagates_unchanged(memory: FailureMemory) -> None:
    """The tool's exception leaves the block as the same object, traceback intact."""
    error = FileNotFoundError(2, "No such file or directory", "gone.txt")

    def read() -> None:
        raise error

    with (
        pytest.raises(FileNotFoundError) as info,
        memory.attempt("read_file", {"path": "gone.txt"}),
    ):
        read()
    assert info.value is error
    assert "read()" in "".join(traceback.format_tb(info.value.__traceback__))
    assert memory.recent_failures()[0].tool == "read_file"


def test_explicit_outcome_wins_over_a_later_exception(memory: FailureMemory) -> None:
    """A call settled as a success stays one if the block raises afterwards."""
    with pytest.raises(KeyError), memory.attempt("read_file", {"path": "a.txt"}) as attempt:
        attempt.succeeded("text")
        raise KeyError("post-processing")
    assert memory.recent_failures() == []
    assert attempt.recorded is not None and attempt.recorded.failure is None


def test_outcome_cannot_be_settled_twice_or_on_a_refusal(memory: FailureMemory) -> None:
    """Settling twice, or settling a refused call, is a clear ConfigurationError."""
    with memory.attempt("edit_file", EDIT) as attempt:
        attempt.failed(NOT_FOUND)
        with pytest.raises(ConfigurationError, match="already settled"):
            attempt.succeeded()
    with memory.attempt("edit_file", EDIT) as refused:
        assert refused.refused
        with pytest.raises(ConfigurationError, match="refused"):
            refused.succeeded()


def test_bad_input_is_refused_before_anything_runs(memory: FailureMemory) -> None:
    """A bad tool name or arguments raise ConfigurationError; a decision needs a check."""
    with pytest.raises(ConfigurationError):
        memory.attempt("", {})
    with pytest.raises(ConfigurationError):
        memory.attempt("tool", ["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="not been checked"):
        _ = memory.attempt("tool", {}).decision
    with pytest.raises(ConfigurationError), memory.attempt("tool", {}) as attempt:
        attempt.failed(42)  # type: ignore[arg-type]


def test_cancelled_block_records_nothing(memory: FailureMemory) -> None:
    """A KeyboardInterrupt (not an Exception) leaving the block is not taken as an outcome."""
    seen = Recorded(memory)
    with pytest.raises(KeyboardInterrupt), memory.attempt("read_file", {"path": "a.txt"}):
        raise KeyboardInterrupt
    assert seen.calls == []


class BrokenStore(MemoryStore):
    def generation(self) -> object:
        raise StoreError("the store is down")

    def transaction(self, scope: Any) -> Any:
        raise StoreError("the store is down")


def test_store_trouble_fails_open_with_a_warning(clock: FakeClock) -> None:
    """A check the store cannot answer allows the call; the record failing only warns."""
    memory = FailureMemory(BrokenStore(), clock=clock, success_batch=1)
    with (
        pytest.warns(ScarguardWarning) as caught,
        memory.attempt("read_file", {"path": "a.txt"}) as attempt,
    ):
        assert not attempt.refused
        assert isinstance(attempt.check_error, StoreError)
        attempt.succeeded("text")
    assert attempt.recorded is None
    assert any("could not check" in str(w.message) for w in caught)
    assert any("could not record" in str(w.message) for w in caught)


# -- async with --------------------------------------------------------------------------


def test_async_attempt_records_and_refuses_in_order(sqlite_memory: FailureMemory) -> None:
    """A failure recorded by an async attempt refuses the next identical call in the task."""

    async def agent() -> tuple[bool, bool, str]:
        async with sqlite_memory.attempt("edit_file", EDIT) as first:
            first.failed(NOT_FOUND)
        async with sqlite_memory.attempt("edit_file", EDIT) as second:
            pass
        return first.refused, second.refused, second.message

    first, second, message = asyncio.run(agent())
    assert (first, second) == (False, True)
    assert "edit_file" in message


def test_async_exception_propagates_and_is_recorded(sqlite_memory: FailureMemory) -> None:
    """Under async with, the tool's exception is recorded and reaches the caller unchanged."""
    error = ValueError("bad input")

    async def agent() -> None:
        async with sqlite_memory.attempt("parse", {"text": "x"}):
            await asyncio.sleep(0)
            raise error

    with pytest.raises(ValueError) as info:
        asyncio.run(agent())
    assert info.value is error
    assert sqlite_memory.recent_failures()[0].tool == "parse"


@pytest.mark.parametrize("where", ["memory.db", "memory.json", ":memory:", "postgresql"])
def test_async_checks_of_a_current_index_are_decided_on_the_loop(
    tmp_path: Path, clock: FakeClock, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the index is loaded, an async attempt is checked and its success counted on
    the loop, from what the store holds in memory: no hop to the store's worker thread,
    and no connection of the store used on the loop's thread. (SQLite's half-second check that
    its file is still the one open runs off the loop: its clock is held still here.)"""
    from scarguard.stores.sqlite import _token

    monkeypatch.setattr(_token, "_monotonic", lambda: 1000.0)
    schema = None
    if where == "postgresql":
        from helpers.postgres import drop_schema, new_schema, require_postgres, url_for

        require_postgres()
        schema = new_schema()
        request_cleanup = functools.partial(drop_schema, schema)
        path: Any = url_for(schema)
    else:
        request_cleanup = None
        path = ":memory:" if where == ":memory:" else tmp_path / where
    memory = FailureMemory(path, clock=clock)
    store: Any = memory.store
    hops: list[str] = []
    statements: list[int] = []
    off_loop = memory._off_loop

    def counting_hop(fn: Any, /, *args: Any) -> Any:
        hops.append(getattr(fn, "__name__", repr(fn)))
        return off_loop(fn, *args)

    memory._off_loop = counting_hop  # type: ignore[method-assign]
    connections = getattr(store, "_db", None)  # SQLite's and PostgreSQL's, per thread
    if connections is not None:
        connection = connections.get

        def spied_connection() -> Any:
            statements.append(threading.get_ident())
            return connection()

        connections.get = spied_connection

    async def agent() -> tuple[int, int, int]:
        async with memory.attempt("read_file", {"path": "first.txt"}):
            pass  # the first check loads the index (off the loop)
        before = len(hops)
        for n in range(20):
            async with memory.attempt("read_file", {"path": f"{n}.txt"}) as attempt:
                assert not attempt.refused
        return before, len(hops), threading.get_ident()

    try:
        before, after, loop_thread = asyncio.run(agent())
        during = list(statements)  # close() below runs after the loop, on this thread
    finally:
        memory.close()
        if request_cleanup is not None:
            request_cleanup()
    assert before >= 1
    assert after == before
    assert loop_thread not in during


def test_async_attempt_never_writes_the_store_on_the_loop_thread(
    tmp_path: Path, clock: FakeClock
) -> None:
    """Every store write and reload of an async attempt runs off the event loop's thread."""
    memory = FailureMemory(tmp_path / "memory.db", clock=clock, success_batch=2)
    store: Any = memory.store
    threads: list[tuple[str, int]] = []
    for name in ("transaction", "load_constraints"):
        original = getattr(store, name)

        def spy(*args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
            threads.append((_name, threading.get_ident()))
            return _original(*args, **kw)

        setattr(store, name, spy)

    async def agent() -> int:
        for n in range(5):
            async with memory.attempt("read_file", {"path": f"{n}.txt"}):
                pass
        async with memory.attempt("edit_file", EDIT) as attempt:
            attempt.failed(NOT_FOUND)
        async with memory.attempt("edit_file", EDIT) as refused:
            assert refused.refused
        return threading.get_ident()

    loop_thread = asyncio.run(agent())
    during = list(threads)  # close() below runs after the loop, on this thread
    memory.close()
    writes = [n for n, _ in during if n == "transaction"]
    assert len(writes) >= 3  # two batch flushes and the failure
    assert all(ident != loop_thread for _, ident in during), during
