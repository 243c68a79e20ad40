"""``scarguard mcp``: a failure memory in front of any MCP server, without touching the agent.

The proxy is a stdio MCP server that starts the upstream server as its child (or connects to
a Streamable HTTP endpoint) and forwards everything: the upstream's name, version,
instructions and capabilities, ``tools/list`` unchanged (only the cursor is forwarded, never
the client's other list parameters), prompts, resources, completions, notifications, progress
and cancellation. Every ``tools/call`` goes through :meth:`FailureMemory.attempt
<scarguard.FailureMemory.attempt>`:

- a refused call never reaches the upstream: the client gets a ``CallToolResult`` with
  ``isError: true`` and the reason;
- an upstream result with ``isError`` is recorded as a failure from its text, and a JSON-RPC
  error is recorded from its message and passed on unchanged;
- anything else is recorded as a success.

When the upstream exits or crashes, the call in flight and every later one get a clear
error naming the upstream command; that is recorded as an infrastructure fault, never as the
agent's mistake. The guard block (:class:`~scarguard.PromptGuard`) is offered as the prompt
``repeat_failure_guard`` and the resource ``scarguard://guard``.

Needs the ``mcp`` extra (``pip install 'scarguard[mcp]'``); ``import scarguard`` never
imports it.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import attrs
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from scarguard.integrations._mcp_forwarding import Ctx, Forwarding
from scarguard.memory import FailureMemory
from scarguard.prompt import PromptGuard

__all__ = ["GUARD_PROMPT", "GUARD_URI", "Upstream", "UpstreamError", "serve"]

GUARD_PROMPT = "repeat_failure_guard"
"""The name of the prompt that carries the guard block."""
GUARD_URI = "scarguard://guard"
"""The URI of the resource that carries the guard block."""
_NOTHING_YET = "No repeated failures recorded yet."


class UpstreamError(Exception):
    """The upstream MCP server could not be started, or did not answer ``initialize``."""


@attrs.frozen
class Upstream:
    """Where the upstream MCP server is.

    Attributes:
        command: The command that starts it over stdio (empty with ``url``).
        url: A Streamable HTTP endpoint instead of a command.
        env: The child's whole environment (default: this process's environment; the SDK
            alone would pass only a few safe variables such as ``PATH`` and ``HOME``).
        cwd: The child's working directory.
    """

    command: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def __attrs_post_init__(self) -> None:
        if bool(self.command) == bool(self.url):
            raise ValueError("give the upstream as a command or as a url, not both or neither")

    @property
    def label(self) -> str:
        """How error messages name the upstream."""
        return self.url or shlex.join(self.command)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[tuple[Any, Any]]:
        """Start or reach the upstream and yield its read and write streams."""
        if self.url:
            async with streamable_http_client(self.url) as streams:
                yield streams
            return
        params = StdioServerParameters(
            command=self.command[0],
            args=list(self.command[1:]),
            env=dict(os.environ if self.env is None else self.env),
            cwd=self.cwd,
        )
        async with stdio_client(params) as streams:
            yield streams


class _Proxy(Forwarding):
    """One proxied connection: the server the client sees, and the guard's prompt and resource."""

    def __init__(
        self,
        memory: FailureMemory,
        upstream: ClientSession,
        init: types.InitializeResult,
        label: str,
    ) -> None:
        super().__init__(memory, upstream, init, label)
        self.guard = PromptGuard(memory)

    # -- the connection to the client --------------------------------------------------------

    def build(self) -> Server[Any]:
        """Return the low-level server, with a handler for what the upstream offers."""
        caps = self.init.capabilities
        info = self.init.server_info
        server: Server[Any] = Server(
            info.name,
            version=info.version,
            title=info.title,
            description=info.description,
            instructions=self.init.instructions,
            website_url=info.website_url,
            icons=info.icons,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
        )
        if caps.tools is not None:
            server.add_request_handler("tools/list", types.PaginatedRequestParams, self.list_tools)
            server.add_request_handler("tools/call", types.CallToolRequestParams, self.call_tool)
        if caps.resources is not None:
            server.add_request_handler(
                "resources/templates/list", types.PaginatedRequestParams, self.list_templates
            )
            if caps.resources.subscribe:
                server.add_request_handler(
                    "resources/subscribe", types.SubscribeRequestParams, self.subscribe
                )
                server.add_request_handler(
                    "resources/unsubscribe", types.UnsubscribeRequestParams, self.unsubscribe
                )
        if caps.completions is not None:
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self.complete
            )
        if caps.logging is not None:
            server.add_request_handler(
                "logging/setLevel", types.SetLevelRequestParams, self.set_level
            )
        server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self.initialized
        )
        return server

    def options(self, server: Server[Any]) -> Any:
        """Return the initialization options: the upstream's capabilities, plus the guard's."""
        caps = self.init.capabilities
        changed = NotificationOptions(
            prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
            resources_changed=bool(caps.resources and caps.resources.list_changed),
            tools_changed=bool(caps.tools and caps.tools.list_changed),
        )
        return server.create_initialization_options(changed, caps.experimental)

    # -- prompts and resources, with the guard's own ----------------------------------------

    def _guard_text(self) -> str:
        return self.guard.block() or _NOTHING_YET

    async def list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        self.downstream = ctx.session
        cursor = params.cursor if params is not None else None
        if self.init.capabilities.prompts is not None:
            page = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await self._forward(self.upstream.list_prompts(params=page))
        else:
            listed = types.ListPromptsResult(prompts=[])
        if cursor is None:
            guard = types.Prompt(
                name=GUARD_PROMPT,
                description="What failed before in this project: do not repeat it (scarguard).",
            )
            listed = listed.model_copy(update={"prompts": [*listed.prompts, guard]})
        return listed

    async def get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name == GUARD_PROMPT:
            message = types.PromptMessage(
                role="user", content=types.TextContent(text=self._guard_text())
            )
            return types.GetPromptResult(description="scarguard guard block", messages=[message])
        return await self._forward(self.upstream.get_prompt(params.name, params.arguments))

    async def list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        self.downstream = ctx.session
        cursor = params.cursor if params is not None else None
        if self.init.capabilities.resources is not None:
            page = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await self._forward(self.upstream.list_resources(params=page))
        else:
            listed = types.ListResourcesResult(resources=[])
        if cursor is None:
            guard = types.Resource(
                uri=GUARD_URI,
                name="repeat failure guard",
                description="What failed before in this project (scarguard).",
                mime_type="text/markdown",
            )
            listed = listed.model_copy(update={"resources": [*listed.resources, guard]})
        return listed

    async def read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if str(params.uri) == GUARD_URI:
            contents = types.TextResourceContents(
                uri=GUARD_URI, text=self._guard_text(), mime_type="text/markdown"
            )
            return types.ReadResourceResult(contents=[contents])
        return await self._forward(self.upstream.read_resource(params.uri))


async def serve(
    memory: FailureMemory,
    upstream: Upstream,
    *,
    streams: tuple[Any, Any] | None = None,
) -> None:
    """Serve MCP on stdio (or ``streams``) in front of ``upstream``, until the client leaves.

    Args:
        memory: The memory every ``tools/call`` is checked against and recorded in.
        upstream: The server to forward to.
        streams: The client's read and write streams (default: this process's stdio).

    Raises:
        UpstreamError: The upstream could not be started or did not initialize.
    """
    async with AsyncExitStack() as stack:
        proxy: _Proxy | None = None

        async def relay(message: types.ServerNotification | Exception) -> None:
            if proxy is not None:
                await proxy.relay(message)

        async def relay_log(params: types.LoggingMessageNotificationParams) -> None:
            if proxy is not None:
                await proxy.relay_log(params)

        try:
            read, write = await stack.enter_async_context(upstream.connect())
            session = await stack.enter_async_context(
                ClientSession(read, write, message_handler=relay, logging_callback=relay_log)
            )
            with anyio.fail_after(60):
                init = await session.initialize()
        except (OSError, MCPError, TimeoutError, ValueError) as exc:
            raise UpstreamError(
                f"the upstream MCP server ({upstream.label}) did not start: {exc}"
            ) from exc
        proxy = _Proxy(memory, session, init, upstream.label)
        server = proxy.build()
        read_client, write_client = (
            streams if streams is not None else await stack.enter_async_context(stdio_server())
        )
        await server.run(read_client, write_client, proxy.options(server))


def run(memory: FailureMemory, upstream: Upstream) -> int:
    """Run the proxy on this process's stdio; return the exit code (2: upstream failed)."""
    try:
        anyio.run(serve, memory, upstream)
    except UpstreamError as exc:
        print(f"scarguard mcp: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        return 130
    finally:
        memory.close()
    return 0
