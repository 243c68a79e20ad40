"""A small MCP server over stdio, the upstream that tests put behind ``scarguard mcp``.

Run as ``python tests/helpers/mcp_upstream.py COUNTER_FILE`` (stdio), or with
``--http PORT`` to serve Streamable HTTP on ``127.0.0.1:PORT/mcp``. Every tool body appends its
name to COUNTER_FILE, so a test can tell how often a body really ran (a refused call never
reaches it). Tools:

- ``echo(text)``: returns the text.
- ``read_config(path)``: a deterministic failure (the file does not exist), as an
  ``isError`` result.
- ``fetch_status()``: an infrastructure failure (503), as an ``isError`` result.
- ``read_page(offset, limit)``: a paginated reader over 100 numbered lines.
- ``query(sql)``: fails with a JSON-RPC error (not a result).
- ``show_env(name)``: the value of an environment variable in the server.
- ``slow(steps)``: reports progress ``steps`` times, then returns.
- ``crash()``: the server process dies mid-call.
- ``announce()``: sends ``notifications/tools/list_changed``.
- ``wait()``: sleeps until cancelled, then notes ``wait-ended``.

``tools/list`` is paginated (three tools a page) so that a proxy must forward the cursor.
A prompt ``greet`` and a resource ``test://notes`` check that those are forwarded too.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

PAGE = 3
LINES = [f"line {n}" for n in range(100)]


def _tool(tool: str, description: str, **properties: str) -> types.Tool:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {key: {"type": kind} for key, kind in properties.items()},
        "required": list(properties),
    }
    return types.Tool(name=tool, description=description, input_schema=schema)


TOOLS = [
    _tool("echo", "Return the text.", text="string"),
    _tool("read_config", "Read a configuration file.", path="string"),
    _tool("fetch_status", "Ask the status service."),
    _tool("read_page", "Read lines from offset.", offset="integer", limit="integer"),
    _tool("query", "Run a query.", sql="string"),
    _tool("show_env", "Show an environment variable.", name="string"),
    _tool("slow", "Report progress, then finish.", steps="integer"),
    _tool("crash", "Die."),
    _tool("announce", "Tell the client that the tool list changed."),
    _tool("wait", "Wait until cancelled."),
]


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def main(counter: str, port: int | None = None) -> None:
    def ran(name: str) -> None:
        with open(counter, "a", encoding="utf-8") as f:
            f.write(name + "\n")

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return types.ListToolsResult(
            tools=TOOLS[start:end], next_cursor=str(end) if end < len(TOOLS) else None
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        ran(params.name)
        if params.name == "echo":
            return _text(str(args.get("text", "")))
        if params.name == "read_config":
            path = args.get("path")
            return _text(
                f"FileNotFoundError: [Errno 2] No such file or directory: {path!r}", error=True
            )
        if params.name == "fetch_status":
            return _text("503 Service Unavailable: the status service is overloaded", error=True)
        if params.name == "read_page":
            offset, limit = int(args.get("offset", 0)), int(args.get("limit", 10))
            return _text("\n".join(LINES[offset : offset + limit]))
        if params.name == "query":
            raise MCPError(code=types.INVALID_PARAMS, message="syntax error at or near 'SELCT'")
        if params.name == "show_env":
            return _text(os.environ.get(str(args.get("name")), "<unset>"))
        if params.name == "slow":
            steps = int(args.get("steps", 3))
            for step in range(steps):
                await ctx.session.report_progress(step + 1, steps, f"step {step + 1}")
            return _text(f"done after {steps} steps")
        if params.name == "wait":
            try:
                await anyio.sleep(600)
            finally:
                ran("wait-ended")
            return _text("waited")
        if params.name == "announce":
            await ctx.session.send_tool_list_changed()
            return _text("announced")
        if params.name == "crash":
            sys.stdout.flush()
            os._exit(3)
        raise MCPError(code=types.METHOD_NOT_FOUND, message=f"unknown tool {params.name}")

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(name="greet", description="Hello.")])

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        message = types.PromptMessage(role="user", content=types.TextContent(text="hello upstream"))
        return types.GetPromptResult(messages=[message])

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[types.Resource(uri="test://notes", name="notes", mime_type="text/plain")]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        contents = types.TextResourceContents(uri=params.uri, text="upstream notes")
        return types.ReadResourceResult(contents=[contents])

    server: Server[Any] = Server(
        "upstream-test",
        version="1.2.3",
        instructions="Use echo to say things.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )

    if port is not None:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="error")
        return

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[3]) if sys.argv[2:3] == ["--http"] else None)
