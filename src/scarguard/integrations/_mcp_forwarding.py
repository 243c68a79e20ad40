"""The MCP proxy's forwarding: every request the upstream answers, and the tool calls guarded.

The handlers of one proxied connection that forward to the upstream session: ``tools/list``
(only the cursor forwarded), ``tools/call`` through :meth:`FailureMemory.attempt
<scarguard.FailureMemory.attempt>`, resource templates and subscriptions, completions,
logging, and the upstream's notifications relayed to the client. An upstream that closed
the connection becomes one clear error, recorded as an infrastructure fault. The server
the client sees, with the guard's own prompt and resource, is
:mod:`scarguard.integrations.mcp_proxy`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from scarguard.memory import FailureMemory

__all__ = ["Ctx", "Forwarding"]

_RESERVED_META = "io.modelcontextprotocol/"
_log = logging.getLogger("scarguard.mcp")
Ctx = ServerRequestContext[Any]
T = TypeVar("T")


def _text(result: types.CallToolResult) -> str:
    """Return the text an error result carries (what the memory classifies)."""
    parts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if not parts and result.structured_content is not None:
        parts.append(str(result.structured_content))
    return "\n".join(parts) or "the tool reported an error without text"


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


class Forwarding:
    """The handlers of one proxied connection that forward to the upstream session."""

    def __init__(
        self,
        memory: FailureMemory,
        upstream: ClientSession,
        init: types.InitializeResult,
        label: str,
    ) -> None:
        self.memory = memory
        self.upstream = upstream
        self.init = init
        self.label = label
        self.gone: str | None = None
        self.downstream: ServerSession | None = None

    async def initialized(self, ctx: Ctx, params: types.NotificationParams) -> None:
        self.downstream = ctx.session

    async def relay(self, message: types.ServerNotification | Exception) -> None:
        """Pass an upstream notification (list changed, resource updated...) to the client."""
        if isinstance(message, Exception):
            _log.warning("upstream %s: %s", self.label, message)
            return
        if self.downstream is not None:
            await self.downstream.send_notification(message)

    async def relay_log(self, params: types.LoggingMessageNotificationParams) -> None:
        if self.downstream is not None:
            await self.downstream.send_notification(types.LoggingMessageNotification(params=params))

    def _closed(self, exc: MCPError) -> bool:
        if exc.code != types.CONNECTION_CLOSED:
            return False
        if self.gone is None:
            self.gone = (
                f"scarguard: the upstream MCP server ({self.label}) closed the connection: it "
                "exited or crashed, and this call did not complete. Its tools are unavailable "
                "until the MCP server is restarted."
            )
            _log.error("%s", self.gone)
        return True

    def _unavailable(self) -> MCPError:
        return MCPError(code=types.CONNECTION_CLOSED, message=self.gone or "upstream closed")

    # -- tools -----------------------------------------------------------------------------

    async def list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> types.ListToolsResult:
        self.downstream = ctx.session
        cursor = types.PaginatedRequestParams(cursor=params.cursor) if params.cursor else None
        return await self._forward(self.upstream.list_tools(params=cursor))

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> Any:
        self.downstream = ctx.session
        if self.gone is not None:
            return _error_result(self.gone)
        arguments = dict(params.arguments or {})
        # The proxy speaks to the upstream in its own protocol era: the client's envelope
        # keys (protocol version, client info...) and its progress token are not forwarded.
        meta = {
            k: v
            for k, v in (params.meta or {}).items()
            if k != "progressToken" and not k.startswith(_RESERVED_META)
        }
        wants_progress = params.meta is not None and "progressToken" in params.meta

        async def progress(value: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(value, total, message)

        callback = cast(ProgressFnT, progress) if wants_progress else None
        forwarded = cast(types.RequestParamsMeta, meta) if meta else None
        rpc_error: MCPError | None = None
        async with self.memory.attempt(params.name, arguments) as attempt:
            if attempt.refused:
                return _error_result(attempt.message)
            try:
                result = await self.upstream.call_tool(
                    params.name,
                    arguments,
                    progress_callback=callback,
                    meta=forwarded,
                    input_responses=params.input_responses,
                    request_state=params.request_state,
                    allow_input_required=True,
                )
            except MCPError as exc:
                if self._closed(exc):
                    attempt.failed(ConnectionError(self.gone))
                    return _error_result(self.gone or "")
                attempt.failed(exc.message)
                rpc_error = exc
            else:
                if isinstance(result, types.CallToolResult) and result.is_error:
                    attempt.failed(_text(result))
                else:
                    attempt.succeeded(result)
                return result
        raise rpc_error

    # -- the rest of what the upstream offers -----------------------------------------------

    async def list_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams
    ) -> types.ListResourceTemplatesResult:
        page = types.PaginatedRequestParams(cursor=params.cursor) if params.cursor else None
        return await self._forward(self.upstream.list_resource_templates(params=page))

    async def subscribe(self, ctx: Ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        return await self._forward(self.upstream.subscribe_resource(params.uri))

    async def unsubscribe(
        self, ctx: Ctx, params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return await self._forward(self.upstream.unsubscribe_resource(params.uri))

    async def complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> types.CompleteResult:
        context = params.context.arguments if params.context is not None else None
        argument = {params.argument.name: params.argument.value}
        return await self._forward(self.upstream.complete(params.ref, argument, context))

    async def set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return await self._forward(self.upstream.set_logging_level(params.level))

    async def _forward(self, request: Coroutine[Any, Any, T]) -> T:
        """Await an upstream request; a closed upstream becomes a clear JSON-RPC error."""
        if self.gone is not None:
            request.close()
            raise self._unavailable()
        try:
            return await request
        except MCPError as exc:
            if self._closed(exc):
                raise self._unavailable() from None
            raise
