"""``scarguard mcp``: the SDK's own client drives the proxy over stdio, before a real server."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from scarguard import FailureMemory
from scarguard.integrations.mcp_proxy import GUARD_PROMPT, GUARD_URI

pytestmark = pytest.mark.slow  # the proxy and its upstream MCP servers are subprocesses

UPSTREAM = Path(__file__).parent / "helpers" / "mcp_upstream.py"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SCARGUARD_PATH", None)
    env["SCARGUARD_TEST_SECRET"] = "from-the-client-environment"
    return env


def _upstream(counter: Path) -> list[str]:
    return [sys.executable, str(UPSTREAM), str(counter)]


@asynccontextmanager
async def _session(command: list[str], cwd: Path) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command[0], args=command[1:], env=_env(), cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _proxy(db: Path, counter: Path, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scarguard",
        "mcp",
        "--path",
        str(db),
        *options,
        "--",
        *_upstream(counter),
    ]


async def _all_tools(session: ClientSession) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listed = await session.list_tools(params=page)
        tools += [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
        cursor = listed.next_cursor
        if not cursor:
            return tools


def _text(result: types.CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _runs(counter: Path, tool: str) -> int:
    if not counter.exists():
        return 0
    return counter.read_text().split().count(tool)


def test_tools_list_is_identical_to_the_direct_listing(tmp_path: Path) -> None:
    """Every page of tools/list reaches the client unchanged; the cursor is forwarded."""
    counter = tmp_path / "runs"

    async def main() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with _session(_upstream(counter), tmp_path) as direct:
            expected = await _all_tools(direct)
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as proxied:
            return expected, await _all_tools(proxied)

    expected, got = anyio.run(main)
    assert len(expected) == 10
    assert got == expected


def test_a_deterministic_failure_runs_once_then_is_refused(tmp_path: Path) -> None:
    """Four identical failing calls: the body runs once, the error arrives once, then refusals."""
    counter = tmp_path / "runs"

    async def main() -> list[types.CallToolResult]:
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            return [
                await session.call_tool("read_config", {"path": "missing.toml"}) for _ in range(4)
            ]

    results = anyio.run(main)
    assert _runs(counter, "read_config") == 1
    assert all(result.is_error for result in results)
    assert "No such file or directory" in _text(results[0])
    for refused in results[1:]:
        assert "No such file or directory" not in _text(refused)
        assert "read_config" in _text(refused)
        assert "refused" in _text(refused).lower() or "blocked" in _text(refused).lower()
    memory = FailureMemory(tmp_path / "m.db", project=str(tmp_path.resolve()))
    assert [f.signature for f in memory.recent_failures()] == ["file_not_found"]


def test_infrastructure_errors_and_pagination_are_never_refused(tmp_path: Path) -> None:
    """A 503 reaches the upstream every time; pages at different offsets all run."""
    counter = tmp_path / "runs"

    async def main() -> tuple[list[types.CallToolResult], list[types.CallToolResult]]:
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            flaky = [await session.call_tool("fetch_status", {}) for _ in range(5)]
            pages = [
                await session.call_tool("read_page", {"offset": offset, "limit": 10})
                for offset in range(0, 100, 10)
            ]
            return flaky, pages

    flaky, pages = anyio.run(main)
    assert _runs(counter, "fetch_status") == 5
    assert all("503" in _text(result) for result in flaky)
    assert _runs(counter, "read_page") == 10
    assert [_text(page).splitlines()[0] for page in pages] == [
        f"line {n}" for n in range(0, 100, 10)
    ]
    assert not any(page.is_error for page in pages)


def test_a_second_proxy_on_the_same_memory_refuses_at_once(tmp_path: Path) -> None:
    """What one proxy process learned is refused by the next one on its first call."""
    counter = tmp_path / "runs"
    db = tmp_path / "m.db"

    async def learn() -> None:
        async with _session(_proxy(db, counter), tmp_path) as session:
            for _ in range(2):
                await session.call_tool("read_config", {"path": "missing.toml"})

    async def again() -> types.CallToolResult:
        async with _session(_proxy(db, counter), tmp_path) as session:
            return await session.call_tool("read_config", {"path": "missing.toml"})

    anyio.run(learn)
    assert _runs(counter, "read_config") == 1
    result = anyio.run(again)
    assert result.is_error
    assert "No such file or directory" not in _text(result)
    assert _runs(counter, "read_config") == 1


def test_a_json_rpc_error_is_recorded_and_passed_on(tmp_path: Path) -> None:
    """An upstream JSON-RPC error reaches the client unchanged and is stored from its text."""
    counter = tmp_path / "runs"

    async def main() -> str:
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            with pytest.raises(Exception) as caught:
                await session.call_tool("query", {"sql": "SELCT 1"})
            return str(caught.value)

    message = anyio.run(main)
    assert "syntax error at or near 'SELCT'" in message
    failures = FailureMemory(tmp_path / "m.db", project=str(tmp_path.resolve())).recent_failures()
    assert [f.tool for f in failures] == ["query"]
    assert "SELCT" in (failures[0].error or "")


def test_a_crashing_upstream_gives_a_clean_error_and_no_agent_blame(tmp_path: Path) -> None:
    """The call in flight and the next ones get a clear error; nothing is learned from it."""
    counter = tmp_path / "runs"

    async def main() -> tuple[types.CallToolResult, types.CallToolResult]:
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            crashed = await session.call_tool("crash", {})
            after = await session.call_tool("echo", {"text": "still there?"})
            return crashed, after

    crashed, after = anyio.run(main)
    for result in (crashed, after):
        assert result.is_error
        assert "upstream MCP server" in _text(result)
        assert "mcp_upstream.py" in _text(result)
    memory = FailureMemory(tmp_path / "m.db", project=str(tmp_path.resolve()))
    assert memory.constraints() == []
    assert all(f.blame.value != "agent" for f in memory.recent_failures())


def test_an_upstream_that_does_not_start_is_reported(tmp_path: Path) -> None:
    """A missing upstream command ends the proxy with a message naming it."""
    import subprocess

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scarguard",
            "mcp",
            "--path",
            str(tmp_path / "m.db"),
            "--",
            "no-such-mcp-server-here",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env=_env(),
    )
    assert done.returncode == 3
    assert "no-such-mcp-server-here" in done.stderr
    assert "did not start" in done.stderr


def test_prompts_resources_progress_and_environment_are_forwarded(tmp_path: Path) -> None:
    """Upstream prompts and resources stay; the guard is added; progress and env get through."""
    counter = tmp_path / "runs"

    async def main() -> dict[str, Any]:
        seen: list[tuple[float, float | None, str | None]] = []

        async def progress(value: float, total: float | None, message: str | None) -> None:
            seen.append((value, total, message))

        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            for _ in range(2):
                await session.call_tool("read_config", {"path": "missing.toml"})
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            resources = [str(r.uri) for r in (await session.list_resources()).resources]
            upstream_prompt = await session.get_prompt("greet")
            guard_prompt = await session.get_prompt(GUARD_PROMPT)
            notes = await session.read_resource("test://notes")
            guard = await session.read_resource(GUARD_URI)
            slow = await session.call_tool("slow", {"steps": 3}, progress_callback=progress)
            env = await session.call_tool("show_env", {"name": "SCARGUARD_TEST_SECRET"})
            return {
                "prompts": prompts,
                "resources": resources,
                "upstream_prompt": upstream_prompt.messages[0].content,
                "guard_prompt": guard_prompt.messages[0].content,
                "notes": notes.contents[0],
                "guard": guard.contents[0],
                "slow": _text(slow),
                "progress": seen,
                "env": _text(env),
            }

    got = anyio.run(main)
    assert got["prompts"] == ["greet", GUARD_PROMPT]
    assert got["resources"] == ["test://notes", GUARD_URI]
    assert got["upstream_prompt"].text == "hello upstream"
    assert got["notes"].text == "upstream notes"
    for block in (got["guard_prompt"].text, got["guard"].text):
        assert "REPEAT FAILURE GUARD" in block
        assert "missing.toml" in block
    assert got["slow"] == "done after 3 steps"
    assert [value for value, _, _ in got["progress"]] == [1.0, 2.0, 3.0]
    assert got["env"] == "from-the-client-environment"


def test_the_upstream_identity_is_forwarded(tmp_path: Path) -> None:
    """The client sees the upstream's name, version, instructions and capabilities."""
    counter = tmp_path / "runs"

    async def main() -> types.InitializeResult:
        params = StdioServerParameters(
            command=sys.executable, args=_proxy(tmp_path / "m.db", counter)[1:], env=_env()
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await session.initialize()

    init = anyio.run(main)
    assert init.server_info.name == "upstream-test"
    assert init.server_info.version == "1.2.3"
    assert init.instructions == "Use echo to say things."
    assert init.capabilities.tools is not None
    assert init.capabilities.prompts is not None
    assert init.capabilities.resources is not None


def test_a_streamable_http_upstream_is_guarded_too(tmp_path: Path) -> None:
    """--url: the same refusal in front of a server on the loopback over Streamable HTTP."""
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    counter = tmp_path / "runs"
    server = subprocess.Popen(
        [*_upstream(counter), "--http", str(port)], stdin=subprocess.DEVNULL, env=_env()
    )
    try:
        for _ in range(600):
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        command = [sys.executable, "-m", "scarguard", "mcp", "--path", str(tmp_path / "m.db")]

        async def main() -> list[types.CallToolResult]:
            async with _session([*command, "--url", url], tmp_path) as session:
                return [
                    await session.call_tool("read_config", {"path": "missing.toml"})
                    for _ in range(3)
                ]

        results = anyio.run(main)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert _runs(counter, "read_config") == 1
    assert "No such file or directory" in _text(results[0])
    assert all(r.is_error and "refused" in _text(r).lower() for r in results[1:])


def test_upstream_notifications_reach_the_client(tmp_path: Path) -> None:
    """A tools/list_changed notification of the upstream is relayed to the client."""
    counter = tmp_path / "runs"
    seen: list[Any] = []

    async def handler(message: Any) -> None:
        seen.append(message)

    async def main() -> None:
        command = _proxy(tmp_path / "m.db", counter)
        params = StdioServerParameters(
            command=command[0], args=command[1:], env=_env(), cwd=str(tmp_path)
        )
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            await session.initialize()
            await session.call_tool("announce", {})
            with anyio.fail_after(30):
                while not seen:
                    await anyio.sleep(0.05)

    anyio.run(main)
    assert any(isinstance(m, types.ToolListChangedNotification) for m in seen), seen


def test_a_cancelled_call_is_cancelled_upstream_and_not_recorded(tmp_path: Path) -> None:
    """The client's cancellation reaches the upstream's handler; no failure is stored."""
    counter = tmp_path / "runs"

    async def main() -> str:
        async with _session(_proxy(tmp_path / "m.db", counter), tmp_path) as session:
            with anyio.move_on_after(2):  # the client gives up: the SDK sends cancelled
                await session.call_tool("wait", {})
            with anyio.fail_after(60):
                while _runs(counter, "wait-ended") == 0:
                    await anyio.sleep(0.05)
            return _text(await session.call_tool("echo", {"text": "after"}))

    assert anyio.run(main) == "after"
    assert _runs(counter, "wait-ended") == 1
    memory = FailureMemory(tmp_path / "m.db", project=str(tmp_path.resolve()))
    assert memory.recent_failures() == []
