"""Helpers shared by the tests: one package, imported as ``helpers.<module>``.

- ``factories``: record factories (failures, constraints) for the store tests;
- ``engine``: recording failures through a memory, one model turn of a fake clock apart;
- ``cli``: running the ``scarguard`` command in-process on a store with lessons learned;
- ``writer``: the writer script the multi-process store tests run in subprocesses;
- ``peer``: another process holding a memory on the same file, run one statement at a time;
- ``shared``: where the processes of a test meet, for each store kind they can share;
- ``postgres``: the PostgreSQL test database (a schema per test, skipping or failing when
  the server is missing);
- ``frozen_proxy``: a TCP proxy that stops forwarding, for hung-server tests;
- ``guarded_tools``: module-level guarded tools for the pickle and process-pool tests;
- ``agent_tools``: the failing tool body the framework tests build tool objects around;
- ``openai_agents_model``: a scripted OpenAI Agents ``Model``;
- ``mcp_upstream``: an MCP server to put the proxy in front of;
- ``cited_errors``: real error texts, with their sources, for the signature bank;
- ``forking``: asking a forked child a question (fork safety tests);
- ``waiting``: polling for what another process or thread does, without a fixed sleep.
"""
