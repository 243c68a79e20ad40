"""``scarguard mcp`` under a real agent loop: OpenAI Agents' MCPServerStdio and its Runner.

A scripted model asks four times for the same missing configuration file through the
upstream MCP server's ``read_config`` tool, then for a page of a paginated reader twice at
different offsets, then stops. Behind the proxy the failing body runs once; the model reads
the tool's own error once, then refusals; the reader is never refused.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("agents")

from agents import Agent, Runner
from agents.mcp import MCPServerStdio

from helpers.openai_agents_model import ScriptedModel

pytestmark = pytest.mark.slow  # a framework's agent loop through the proxy subprocess

UPSTREAM = Path(__file__).parent / "helpers" / "mcp_upstream.py"
CALLS = [("read_config", {"path": "missing.toml"})] * 4 + [
    ("read_page", {"offset": 0, "limit": 2}),
    ("read_page", {"offset": 2, "limit": 2}),
]


def _run(tmp_path: Path, *, guarded: bool) -> tuple[ScriptedModel, Any]:
    counter = tmp_path / "runs"
    upstream = [str(UPSTREAM), str(counter)]
    proxy = ["-m", "scarguard", "mcp", "--path", str(tmp_path / "m.db"), "--", sys.executable]
    params = {
        "command": sys.executable,
        "args": [*proxy, *upstream] if guarded else upstream,
        "env": {k: v for k, v in os.environ.items() if k != "SCARGUARD_PATH"},
        "cwd": str(tmp_path),
    }
    model = ScriptedModel(CALLS)

    async def main() -> Any:
        async with MCPServerStdio(params=params, client_session_timeout_seconds=60) as server:  # type: ignore[arg-type]
            agent = Agent(
                name="a", instructions="Read the config.", model=model, mcp_servers=[server]
            )
            return await Runner.run(agent, "read the configuration", max_turns=20)

    return model, asyncio.run(main())


def test_openai_agents_runner_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failing body runs once in four calls; its error reaches the model once; pages run."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    model, result = _run(tmp_path, guarded=True)
    assert result.final_output == "done"
    runs = (tmp_path / "runs").read_text().split()
    assert runs.count("read_config") == 1
    assert runs.count("read_page") == 2
    outputs = model.outputs
    assert len(outputs) == 6
    assert "No such file or directory" in outputs[0]
    for refused in outputs[1:4]:
        assert "No such file or directory" not in refused
        assert "refused" in refused.lower()
    assert "line 0" in outputs[4] and "line 2" in outputs[5]


def test_without_the_proxy_every_call_reaches_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same run straight to the server: the failing body runs four times."""
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    model, result = _run(tmp_path, guarded=False)
    assert result.final_output == "done"
    assert (tmp_path / "runs").read_text().split().count("read_config") == 4
    assert all("No such file or directory" in o for o in model.outputs[:4])
