"""Drivers that put a failure memory where agents already call tools.

The MCP proxy (:mod:`scarguard.integrations.mcp_proxy`, needs the ``mcp`` extra) and the
agent CLI hooks (:mod:`scarguard.integrations.claude_code`) are thin drivers over
:meth:`FailureMemory.attempt <scarguard.FailureMemory.attempt>`. Nothing here is imported by
``import scarguard``.
"""
