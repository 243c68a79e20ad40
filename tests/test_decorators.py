"""Tests for @guarded_tool: binding shapes, refusal, recording, pickling, fail-open."""

from __future__ import annotations

import asyncio
import copy
import inspect
import multiprocessing
import os
import pickle
import signal
import subprocess
import threading
import time
import typing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import scarguard.memory as memory_module
from helpers import guarded_tools
from helpers.engine import run
from helpers.shared import Shared
from scarguard.errors import ConfigurationError, ScarguardWarning, StoreError, ToolBlocked
from scarguard.guard.decorator import GuardedTool, guarded_tool
from scarguard.guard.failure_checks import failure_when
from scarguard.guard.options import MEMORY_UNAVAILABLE
from scarguard.memory import FailureMemory, set_default_memory
from scarguard.stores import MemoryStore
from scarguard.testing import FakeClock

SHAPES = (
    "function",
    "method",
    "classmethod_outer",
    "classmethod_inner",
    "staticmethod_outer",
    "staticmethod_inner",
)


def _impl(runs: list[str], target: str) -> str:
    runs.append(target)
    if target == "bad":
        raise subprocess.CalledProcessError(2, ["make", target])
    return f"built {target}"


def _bodies(is_async: bool, runs: list[str]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    if is_async:

        async def with_self(self: Any, target: str, jobs: int = 1) -> str:
            """Build a target."""
            return _impl(runs, target)

        async def without_self(target: str, jobs: int = 1) -> str:
            """Build a target."""
            return _impl(runs, target)

    else:

        def with_self(self: Any, target: str, jobs: int = 1) -> str:
            """Build a target."""
            return _impl(runs, target)

        def without_self(target: str, jobs: int = 1) -> str:
            """Build a target."""
            return _impl(runs, target)

    return with_self, without_self


def make_tool(
    shape: str, is_async: bool, runs: list[str], **options: Any
) -> tuple[Any, Any, Callable[..., Any]]:
    """Return (guarded callable as the agent calls it, the same unguarded, the decorator)."""
    memory = options.pop("memory")
    deco = guarded_tool(memory, name="build", **options)
    with_self, without_self = _bodies(is_async, runs)
    if shape == "function":
        return deco(without_self), without_self, deco
    guarded: Any
    plain: Any
    if shape == "method":
        guarded, plain = deco(with_self), with_self
    elif shape == "classmethod_outer":
        guarded, plain = deco(classmethod(with_self)), classmethod(with_self)
    elif shape == "classmethod_inner":
        guarded, plain = classmethod(deco(with_self)), classmethod(with_self)
    elif shape == "staticmethod_outer":
        guarded, plain = deco(staticmethod(without_self)), staticmethod(without_self)
    else:
        guarded, plain = staticmethod(deco(without_self)), staticmethod(without_self)
    guarded_cls = type("Guarded", (), {"build": guarded})
    plain_cls = type("Plain", (), {"build": plain})
    return guarded_cls().build, plain_cls().build, deco


# -- binding shapes -------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("shape", SHAPES)
def test_shape_keeps_signature_and_records(
    shape: str, is_async: bool, memory: FailureMemory
) -> None:
    """Every binding shape keeps signature, hints, coroutine-ness and records outcomes."""
    runs: list[str] = []
    guarded, plain, _ = make_tool(shape, is_async, runs, memory=memory)
    assert inspect.signature(guarded) == inspect.signature(plain)
    assert typing.get_type_hints(guarded) == typing.get_type_hints(plain)
    assert inspect.iscoroutinefunction(guarded) is is_async
    assert guarded.__name__ == "with_self" or guarded.__name__ == "without_self"
    assert guarded.__doc__ == "Build a target."
    assert run(guarded("ok")) == "built ok"
    with pytest.raises(subprocess.CalledProcessError):
        run(guarded("bad", jobs=4))
    failure = memory.recent_failures()[0]
    assert failure.tool == "build"
    assert dict(failure.args) == {"target": "bad", "jobs": 4}  # no self, no cls
    assert guarded.stats.succeeded == 1
    assert guarded.stats.failures == 1


def test_module_function_keeps_identity_attributes(memory: FailureMemory) -> None:
    """__name__, __qualname__, __doc__, __wrapped__ and __annotations__ are the function's."""

    def edit_file(path: str, old: str, new: str = "") -> str:
        """Edit a file."""
        return path

    guarded = guarded_tool(memory)(edit_file)
    assert guarded.__name__ == "edit_file"
    assert guarded.__qualname__ == edit_file.__qualname__
    assert guarded.__doc__ == "Edit a file."
    assert guarded.__wrapped__ is edit_file
    assert guarded.__annotations__ == edit_file.__annotations__
    assert isinstance(guarded, GuardedTool)


# -- refusal ------------------------------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("shape", SHAPES)
def test_nonzero_exit_refused_third_time(
    shape: str, is_async: bool, memory: FailureMemory, clock: FakeClock
) -> None:
    """A failing command runs twice, then is refused with ToolBlocked carrying the decision."""
    runs: list[str] = []
    guarded, _, _ = make_tool(shape, is_async, runs, memory=memory)
    with pytest.raises(subprocess.CalledProcessError):
        run(guarded("bad"))
    clock.advance(10)
    with pytest.raises(subprocess.CalledProcessError):
        run(guarded(target="bad", jobs=1))  # keyword form, default spelled out: same call
    clock.advance(10)
    with pytest.raises(ToolBlocked) as info:
        run(guarded("bad", 1))
    assert runs == ["bad", "bad"]
    assert info.value.decision.allowed is False
    assert str(info.value) == info.value.decision.message
    assert guarded.stats.blocked == 1
    if not is_async:  # async: the decision lives in the task's context (see the next test)
        assert guarded.last_decision is info.value.decision


def test_last_decision_is_per_task(memory: FailureMemory) -> None:
    """last_decision is visible in the task that made the call."""

    @guarded_tool(memory)
    async def ping(host: str) -> str:
        return host

    async def call_then_read() -> Any:
        await ping("a")
        return ping.last_decision

    decision = asyncio.run(call_then_read())
    assert decision is not None and decision.allowed
    assert ping.last_decision is None  # this thread's context never made a call


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_on_block_return_gives_message_without_running(
    is_async: bool, memory: FailureMemory, clock: FakeClock
) -> None:
    """With on_block="return" the refused call returns the message and the body never runs."""
    runs: list[str] = []
    guarded, _, _ = make_tool("function", is_async, runs, memory=memory, on_block="return")
    for _ in range(2):
        with pytest.raises(subprocess.CalledProcessError):
            run(guarded("bad"))
        clock.advance(10)
    message = run(guarded("bad"))
    assert runs == ["bad", "bad"]
    assert "refused" in message
    assert message == memory.check("build", {"target": "bad", "jobs": 1}).message


# -- the tool's own exception -----------------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_tool_exception_is_same_object_with_traceback(
    is_async: bool, memory: FailureMemory
) -> None:
    """The tool's KeyError reaches the caller as the same object, its frame in the traceback."""
    error = KeyError("missing")

    def lookup(key: str) -> str:
        raise error

    async def lookup_async(key: str) -> str:
        raise error

    guarded = guarded_tool(memory)(lookup_async if is_async else lookup)
    with pytest.raises(KeyError) as info:
        run(guarded("k"))
    assert info.value is error
    names = [entry.name for entry in info.traceback]
    assert ("lookup_async" if is_async else "lookup") in names
    assert memory.recent_failures()[0].tool == guarded.__name__


# -- pickling and processes ---------------------------------------------------------------


def test_copy_deepcopy_and_pickle_keep_identity(memory: FailureMemory) -> None:
    """copy, deepcopy and a pickle round trip of a module-level tool give back the tool."""
    set_default_memory(memory)
    tool = guarded_tools.echo
    assert copy.copy(tool) is tool
    assert copy.deepcopy(tool) is tool
    assert pickle.loads(pickle.dumps(tool)) is tool
    bound = guarded_tools.TOOLBOX.shout
    assert pickle.loads(pickle.dumps(bound))("hi") == "HI"
    assert pickle.loads(pickle.dumps(guarded_tools.Toolbox.label))("x") == "Toolbox: x"
    assert copy.deepcopy({"tool": tool})["tool"] is tool
    set_default_memory(None)


def test_pickle_by_value_reopens_file_memory(tmp_path: Path) -> None:
    """A tool not reachable by name pickles by value and re-opens the same memory file."""
    memory = FailureMemory(tmp_path / "memory.db", workspace="w", project="p")
    tool = guarded_tool(memory, name="echo_tool")(guarded_tools.plain_echo)
    clone = pickle.loads(pickle.dumps(tool))
    assert clone is not tool
    assert clone("x") == "x"
    assert clone.memory.store.location == memory.store.location
    assert clone.memory.scope.workspace == "w"


def test_pickle_by_value_refuses_in_memory_store(memory: FailureMemory) -> None:
    """A tool whose memory cannot be re-opened elsewhere refuses to pickle, saying why."""
    tool = guarded_tool(memory)(guarded_tools.plain_echo)
    with pytest.raises(pickle.PicklingError, match="cannot be re-opened"):
        pickle.dumps(tool)


@pytest.mark.slow
@pytest.mark.parametrize(
    "shared",
    [
        "sqlite",
        "json",
        "postgres",
    ],
    indirect=True,
)
def test_runs_in_process_pool(shared: Shared, monkeypatch: pytest.MonkeyPatch) -> None:
    """A guarded tool runs in a spawned worker and its failure lands in the same store."""
    monkeypatch.setenv("SCARGUARD_PATH", shared.location("shared"))
    set_default_memory(None)
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            assert pool.submit(guarded_tools.echo, "hello").result(timeout=60) == "hello"
            error = pool.submit(guarded_tools.failing_build, "all").exception(timeout=60)
        assert isinstance(error, subprocess.CalledProcessError)
        failures = memory_module.default_memory().recent_failures()
        assert [(f.tool, dict(f.args)) for f in failures] == [
            ("failing_build", {"target": "all", "jobs": 1})
        ]
    finally:
        memory_module.default_memory().close()
        set_default_memory(None)


def test_bare_decorator_resolves_default_memory_lazily(memory: FailureMemory) -> None:
    """Bare @guarded_tool opens no memory when decorating; it uses the default at call time."""
    set_default_memory(None)

    @guarded_tool
    def ping(host: str) -> str:
        return host

    assert memory_module._default is None
    set_default_memory(memory)
    try:
        assert ping("a") == "a"
        assert ping.memory is memory
        assert ping.stats.succeeded == 1
    finally:
        set_default_memory(None)


# -- bookkeeping never breaks the tool ---------------------------------------------------


class BrokenStore(MemoryStore):
    """A memory store that fails on demand."""

    def __init__(self) -> None:
        super().__init__()
        self.broken: set[str] = set()

    def generation(self) -> Any:
        if "read" in self.broken:
            raise StoreError("disk on fire")
        return super().generation()

    def transaction(self, scope: Any) -> Any:
        if "write" in self.broken:
            raise StoreError("disk on fire")
        return super().transaction(scope)


def test_store_failure_during_check_fails_open(clock: FakeClock) -> None:
    """A store that fails during check warns once and the tool still runs."""
    store = BrokenStore()
    memory = FailureMemory(store, clock=clock)

    @guarded_tool(memory)
    def ping(host: str) -> str:
        return host

    store.broken.add("read")
    with pytest.warns(ScarguardWarning) as caught:
        assert ping("a") == "a"
        assert ping("b") == "b"
    messages = [str(w.message) for w in caught]
    assert len([m for m in messages if "could not check" in m]) == 1  # once per tool and kind
    assert ping.stats.bookkeeping_errors >= 2


def test_store_failure_during_check_fail_closed(clock: FakeClock) -> None:
    """With fail_closed=True an unavailable memory refuses the call without running it."""
    store = BrokenStore()
    memory = FailureMemory(store, clock=clock)
    runs: list[str] = []

    @guarded_tool(memory, fail_closed=True)
    def ping(host: str) -> str:
        runs.append(host)
        return host

    store.broken.add("read")
    with pytest.warns(ScarguardWarning), pytest.raises(ToolBlocked) as info:
        ping("a")
    assert runs == []
    assert str(info.value) == MEMORY_UNAVAILABLE.format(tool="ping")
    assert isinstance(info.value.__cause__, StoreError)


@pytest.mark.parametrize("is_async", [False, True])
def test_a_default_memory_that_cannot_be_opened_is_named_by_both_warnings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, is_async: bool
) -> None:
    """When the default memory cannot be opened, the call runs, and the record's warning
    names the same cause as the check's (not the missing memory it could not record in)."""
    monkeypatch.setenv("SCARGUARD_PATH", str(tmp_path / "memory.unknown"))
    set_default_memory(None)

    @guarded_tool
    def ping(host: str) -> str:
        return host

    @guarded_tool
    async def ping_async(host: str) -> str:
        return host

    try:
        with pytest.warns(ScarguardWarning) as caught:
            result = asyncio.run(ping_async("a")) if is_async else ping("a")
    finally:
        set_default_memory(None)
    assert result == "a"
    messages = [str(w.message) for w in caught]
    assert any("could not check" in m and "ConfigurationError" in m for m in messages)
    assert any("could not record" in m and "ConfigurationError" in m for m in messages)
    assert not any("AttributeError" in m for m in messages)


def test_store_failure_during_record_passes_result(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record that fails warns and the tool's result is returned unchanged."""

    def broken_record(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("disk full")

    @guarded_tool(memory)
    def ping(host: str) -> dict[str, str]:
        return {"host": host}

    monkeypatch.setattr(memory, "record", broken_record)
    with pytest.warns(ScarguardWarning, match="could not record"):
        assert ping("a") == {"host": "a"}


def test_store_failure_while_recording_a_failure_keeps_tool_error(clock: FakeClock) -> None:
    """A failing record of a failure never masks the tool's own exception."""
    store = BrokenStore()
    memory = FailureMemory(store, clock=clock)
    error = ValueError("bad input")

    @guarded_tool(memory)
    def parse(text: str) -> str:
        raise error

    store.broken.add("write")
    with (
        pytest.warns(ScarguardWarning, match="could not record"),
        pytest.raises(ValueError) as info,
    ):
        parse("x")
    assert info.value is error


# -- options, context, switches ----------------------------------------------------------


def test_context_params_and_ignore_args_left_out(memory: FailureMemory) -> None:
    """Injected context (by annotation or name) and ignore_args stay out of recorded args."""

    class RunContext:
        pass

    def search(
        ctx: RunContext, query: str, run_manager: Any = None, context: int = 3, trace: str = ""
    ) -> str:
        raise LookupError("no results")

    guarded = guarded_tool(memory, ignore_args=["trace"])(search)
    with pytest.raises(LookupError):
        guarded(RunContext(), "cats", trace="t-1")
    assert dict(memory.recent_failures()[0].args) == {"query": "cats", "context": 3}


def test_var_args_and_kwargs_are_flattened(memory: FailureMemory) -> None:
    """*args become a list and **kwargs are flattened into the arguments."""

    def run_cmd(cmd: str, *argv: str, **env: str) -> str:
        raise OSError("failed")

    guarded = guarded_tool(memory)(run_cmd)
    with pytest.raises(OSError):
        guarded("ls", "-l", "/tmp", LANG="C")
    assert dict(memory.recent_failures()[0].args) == {
        "cmd": "ls",
        "argv": ["-l", "/tmp"],
        "LANG": "C",
    }


def test_targets_option_names_arguments(memory: FailureMemory) -> None:
    """targets= given as argument names passes those values as the call's targets."""

    @guarded_tool(memory, targets=["src", "dst"])
    def copy_file(src: str, dst: str, force: bool = False) -> None:
        raise PermissionError("denied")

    with pytest.raises(PermissionError):
        copy_file("a.txt", "b.txt")
    assert memory.recent_failures()[0].targets == ("a.txt", "b.txt")


def test_disabled_is_pass_through(memory: FailureMemory, clock: FakeClock) -> None:
    """A disabled guard neither checks nor records: the body runs even when it would be refused."""
    runs: list[str] = []
    guarded, _, _ = make_tool("function", False, runs, memory=memory)
    for _ in range(2):
        with pytest.raises(subprocess.CalledProcessError):
            guarded("bad")
        clock.advance(10)
    guarded.enabled = False
    with pytest.raises(subprocess.CalledProcessError):
        guarded("bad")
    assert runs == ["bad"] * 3
    assert guarded.stats.calls == 2
    guarded.enabled = True
    with pytest.raises(ToolBlocked):
        guarded("bad")


def test_double_guard_is_refused(memory: FailureMemory) -> None:
    """Guarding a guarded tool again is a configuration error."""
    with pytest.raises(ConfigurationError, match="already guarded"):
        guarded_tool(memory)(guarded_tools.echo)


def test_async_callable_object_gets_async_wrapper(memory: FailureMemory) -> None:
    """An object with an async __call__ is awaited by the guard, so its outcome is recorded."""

    class Fetcher:
        async def __call__(self, url: str) -> str:
            raise ConnectionError("HTTP 503 Service Unavailable")

    guarded = guarded_tool(memory, name="fetch")(Fetcher())
    with pytest.raises(ConnectionError):
        run(guarded("u"))
    assert memory.recent_failures()[0].tool == "fetch"


# -- bookkeeping that misbehaves never reaches the caller ---------------------------------


class _Unprintable:
    """A value whose str() and repr() raise, and which is truthy."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


def test_failed_result_that_cannot_describe_itself_is_returned(memory: FailureMemory) -> None:
    """A flagged result whose error text cannot be built still reaches the caller."""
    result = {"error": _Unprintable()}

    @guarded_tool(memory, failure_when=failure_when.error_key)
    def lookup(key: str) -> dict[str, Any]:
        return result

    assert lookup("k") is result
    assert memory.recent_failures()[0].tool == "lookup"


def test_unprintable_bookkeeping_error_is_warned_not_raised(memory: FailureMemory) -> None:
    """A bookkeeping error whose str() raises is still only a warning; the call runs."""

    def targets(bound: Any) -> list[str]:
        raise _UnprintableError()

    @guarded_tool(memory, targets=targets)
    def ping(host: str) -> str:
        return host

    with pytest.warns(ScarguardWarning, match="_UnprintableError: <unprintable>"):
        assert ping("a") == "a"


def test_unprintable_tool_exception_is_recorded_and_propagates(memory: FailureMemory) -> None:
    """A tool exception whose str() raises propagates unchanged and is still recorded."""
    error = _UnprintableError()

    @guarded_tool(memory)
    def parse(text: str) -> str:
        raise error

    with pytest.raises(_UnprintableError) as info:
        parse("x")
    assert info.value is error
    assert memory.recent_failures()[0].error == "_UnprintableError"


def test_generator_functions_are_refused_with_the_reason(memory: FailureMemory) -> None:
    """Generators (sync and async) cannot be guarded: failures while iterating would be lost."""

    def lines(path: str):  # type: ignore[no-untyped-def]
        yield path

    async def chunks(path: str):  # type: ignore[no-untyped-def]
        yield path

    for func in (lines, chunks):
        with pytest.raises(ConfigurationError, match="generator"):
            guarded_tool(memory)(func)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_child_forked_while_a_stats_lock_is_held_can_call_the_tool(memory: FailureMemory) -> None:
    """A fork while another thread holds the tool's stats lock does not deadlock the child."""

    @guarded_tool(memory)
    def ping(n: int) -> int:
        return n

    ping(1)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with ping.guard._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    pid = os.fork()
    if pid == 0:
        os._exit(0 if ping(2) == 2 else 1)
    try:
        deadline = time.monotonic() + 20
        while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        if done[0] == 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child deadlocked on the inherited stats lock")
        assert os.WEXITSTATUS(done[1]) == 0
    finally:
        release.set()
        holder.join()


# -- warnings turned into errors never replace the call ----------------------------------


def test_under_warnings_as_errors_a_failed_check_still_runs_the_tool(clock: FakeClock) -> None:
    """With -W error, a bookkeeping warning is logged instead of raised: the tool runs."""
    import warnings

    store = BrokenStore()
    memory = FailureMemory(store, clock=clock)
    runs: list[str] = []

    @guarded_tool(memory)
    def ping(host: str) -> str:
        runs.append(host)
        return host

    store.broken.add("read")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ping("a") == "a"
    assert runs == ["a"]
    assert ping.stats.bookkeeping_errors >= 1


def test_under_warnings_as_errors_a_failed_record_keeps_the_result(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With -W error, a record that fails returns the tool's result, and the warning is logged."""
    import warnings

    def broken_record(*args: Any, **kwargs: Any) -> Any:
        raise StoreError("disk full")

    @guarded_tool(memory)
    def ping(host: str) -> dict[str, str]:
        return {"host": host}

    monkeypatch.setattr(memory, "record", broken_record)
    with warnings.catch_warnings(), caplog.at_level("WARNING", logger="scarguard"):
        warnings.simplefilter("error")
        assert ping("a") == {"host": "a"}
    assert any("could not record" in r.getMessage() for r in caplog.records)


class _Deep:
    def __init__(self, levels: int) -> None:
        self.child = _Deep(levels - 1) if levels else None


def test_deep_and_self_referencing_arguments_are_guarded_and_learned(clock: FakeClock) -> None:
    """Arguments nested past the depth limit or containing themselves are checked and learned."""
    memory = FailureMemory(":memory:", clock=clock)
    loop: dict[str, Any] = {}
    loop["self"] = loop

    @guarded_tool(memory, on_block="return")
    def configure(config: Any, extra: Any) -> str:
        raise SyntaxError("invalid syntax")

    with pytest.raises(SyntaxError):
        configure(_Deep(10), loop)  # a syntax error is deterministic: one failure teaches
    assert memory.recent_failures(5)
    assert "refused" in configure(_Deep(10), loop)


def test_warnings_append_adds_a_one_line_note_to_string_results(
    memory: FailureMemory, clock: FakeClock
) -> None:
    """With warnings="append" a warned-about call's string result ends with a one-line note."""
    for old in ("alpha", "beta"):
        clock.advance(5)
        memory.record(
            "edit_file",
            {"path": "app.py", "old_string": old, "new_string": "x"},
            ok=False,
            error="old_string not found",
        )

    @guarded_tool(memory, warnings="append")
    def edit_file(path: str, old_string: str, new_string: str) -> str:
        return "edited"

    @guarded_tool(memory, name="edit_file")
    def plain_edit(path: str, old_string: str, new_string: str) -> str:
        return "edited"

    noted = edit_file("app.py", "gamma", "x")
    assert noted.startswith("edited\n[scarguard warning] ")
    assert noted.count("\n") == 1 and "app.py" in noted
    assert plain_edit("app.py", "delta", "x") == "edited"
    assert edit_file.last_decision is not None and edit_file.last_decision.warnings
    assert edit_file("other.py", "gamma", "x") == "edited"  # no warning, no note


def test_return_value_reaches_record_as_result(
    memory: FailureMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decorated tool's return value is what record(result=...) receives."""
    seen: list[Any] = []
    record = memory.record

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("result"))
        return record(*args, **kwargs)

    monkeypatch.setattr(memory, "record", spy)

    @guarded_tool(memory)
    def lookup(key: str) -> dict[str, int]:
        return {"value": 3}

    assert lookup("a") == {"value": 3}
    assert seen == [{"value": 3}]
