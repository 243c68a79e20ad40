"""Real error wordings from public sources, each with the failure kind it must be named.

Every entry quotes (in excerpt, with ids and paths kept as published) an error message
seen in a public issue tracker or in the source of a tool that agents call, and cites where.
``tests/test_signature_sources.py`` checks that the default bank names each one as listed
and blames it as the kind says.
"""

from __future__ import annotations

from typing import NamedTuple


class Cited(NamedTuple):
    """One real error wording and the failure kind the bank must give it."""

    kind: str
    text: str
    source: str


GH = "https://github.com/"

CITED: tuple[Cited, ...] = (
    # MCP servers and JSON-RPC -32602
    Cited("invalid_request", "Error executing MCP tool:\nMCP error -32602: Invalid request "
          "parameters", GH + "jayimu/Wireshark_mcp/issues/4"),
    Cited("invalid_request", "All return: `MCP error -32602: Invalid request parameters`",
          GH + "cooneycw/claude-power-pack/issues/220"),
    Cited("invalid_request", '{"jsonrpc": "2.0", "error": {"code": -32602, "message": '
          '"Invalid params"}, "id": 7}', GH + "MCPJam/inspector/pull/5349"),
    Cited("tool_not_found", "Error MCP error -32602: MCP error -32602: Tool get_weather not "
          "found", GH + "modelcontextprotocol/typescript-sdk/issues/288"),
    Cited("validation_error", 'MCP error -32602: Invalid params: missing required parameter '
          '"agent_name"', GH + "MemPalace/mempalace/issues/1574"),
    Cited("validation_error", "McpError: MCP error -32603: [{\"code\": \"invalid_type\", "
          "\"expected\": \"object\", \"received\": \"string\", \"message\": \"Expected object, "
          "received string\"}]", GH + "guangxiangdebizi/MySQL_MCP/issues/5"),
    # patch / diff tools of coding agents
    Cited("patch_invalid", "Invalid patch: The first line of the patch must be '*** Begin "
          "Patch'", GH + "openai/codex/issues/35361"),
    Cited("patch_invalid", "apply_patch verification failed: invalid patch: The first line of "
          "the patch must be '*** Begin Patch'", GH + "lidge-jun/opencodex/issues/372"),
    Cited("patch_invalid", "Invalid patch: The last line of the patch must be '*** End Patch'",
          GH + "openai/codex/issues/3953"),
    Cited("patch_invalid", "patching file v1/attention/backends/prefill_attn_hd256.py\npatch: "
          "**** missing line number at line 43: @@ -0,0 +1,     239 @@",
          GH + "syv-ai/qwen38-27b-rtx3090/issues/53"),
    Cited("patch_invalid", "error: corrupt patch at line 41",
          GH + "anthropics/claude-code/issues/80388"),
    Cited("edit_failed", "Script error:\napply_patch verification failed: Failed to find "
          "expected lines in C:\\src\\quantick-worktrees\\feat-sync-main-bars\\.claude\\GOAL.md:",
          GH + "milocaetano/quantick/issues/491"),
    Cited("edit_failed", "The SEARCH block:\n        // Build tree spheres\n...does not match "
          "anything in the file.", GH + "cline/cline/issues/11439"),
    # LangChain file and SQL tools
    Cited("file_not_found", "Error: no such file or directory: notes/todo.md",
          GH + "langchain-ai/langchain-community/blob/main/libs/community/langchain_community/"
          "tools/file_management/read.py"),
    Cited("unknown_table", "Error: table_names {\"'orders'\"} not found in database",
          GH + "langchain-ai/langchain/issues/12911"),
    Cited("unknown_table", "sqlite3.OperationalError: no such table: knowledge_base",
          GH + "chatchat-space/Langchain-Chatchat/issues/5189"),
    Cited("syntax_error", 'OperationalError: near "FROM": syntax error',
          GH + "langchain-ai/langchain/issues/26305"),
    # MySQL, PostgreSQL, SQLite
    Cited("conflict", "pymysql.err.IntegrityError: (1062, \"Duplicate entry '237159-2017-02-07'"
          " for key 'PRIMARY'\")", GH + "kkamkou/gitmostwanted.com/issues/180"),
    Cited("conflict", "IntegrityError: (pymysql.err.IntegrityError) (1062, \"Duplicate entry "
          "'PubMed-15465276' for key 'type'\")", GH + "pybel/pybel/issues/219"),
    Cited("unknown_table", "ProgrammingError: (_mysql_exceptions.ProgrammingError) (1146, "
          "\"Table 'models_investor.investor_93_test' doesn't exist\")",
          GH + "franc3000/bartok/issues/29"),
    Cited("unknown_table", "mysql.connector.errors.ProgrammingError: 1146 (42S02): Table "
          "'crmintapp-db.pipelines' doesn't exist",
          GH + "google-marketing-solutions/crmint/issues/537"),
    Cited("unknown_table", "pymysql.err.OperationalError: (1054, \"Unknown column 'header_img' "
          "in 'field list'\")", GH + "frappe/erpnext/issues/33920"),
    Cited("unknown_table", 'psycopg2.errors.UndefinedTable: relation '
          '"channels_postgres_groupchannel" does not exist',
          GH + "danidee10/channels_postgres/issues/13"),
    Cited("syntax_error", 'psycopg2.ProgrammingError: syntax error at or near "ON"\nLINE 2: '
          "... AT TIME ZONE 'UTC', 1, NOW()) ON CONFLIC...",
          GH + "JoneXiong/oejia_weshop/issues/4"),
    Cited("constraint_violation", "sqlite3.IntegrityError: NOT NULL constraint failed: "
          "_source_info_.format_name", GH + "thombashi/sqlitebiter/issues/96"),
    Cited("constraint_violation", "SQLSTATE[23000]: Integrity constraint violation: 19 NOT NULL "
          "constraint failed: permissions.external_id", GH + "Bottelet/DaybydayCRM/issues/272"),
    # JSON parsers of JavaScript (Firefox), Go and an HTML page where JSON was expected
    Cited("syntax_error", "10:40:22.354 JSON.parse: unexpected character at line 1 column 1 of "
          "the JSON data app.js:42262:6", GH + "facebookarchive/relay-starter-kit/issues/47"),
    Cited("syntax_error", "SyntaxError: JSON.parse: unexpected character at line 1 column 1 of "
          "the JSON data", GH + "Shuffle/Shuffle/issues/434"),
    Cited("syntax_error", "Invalid response: %v invalid character 'I' looking for beginning of "
          "value", GH + "uswitch/journald-forwarder/issues/6"),
    Cited("non_json_response", "ERROR: invalid character '<' looking for beginning of value",
          GH + "TwiN/gatus/issues/351"),
    Cited("non_json_response", "npm ERR! Unexpected token < in JSON at position 0\nnpm ERR! "
          "<title>404 Not Found</title>", GH + "vercel/vercel/issues/316"),
    Cited("non_json_response", "2020/08/07 18:37:34 invalid character '<' looking for beginning "
          "of value\npanic: invalid character '<' looking for beginning of value",
          GH + "incogbyte/shosubgo/issues/3"),
    # argument shape: enum values, empty inputs, missing parameters
    Cited("validation_error", "Input should be 'foo', 'bar' or 'baz'",
          GH + "pydantic/pydantic/issues/8836"),
    Cited("validation_error", "result\n  Input should be 1, 2, 3, 4, 5 or 6 "
          "[type=literal_error, input_value='1', input_type=str]",
          GH + "pydantic/pydantic-ai/issues/1691"),
    Cited("validation_error", "invalid_enum_value - Invalid enum value. Expected 'a' | 'b' | "
          "'c', received 'z'", GH + "colinhacks/zod/issues/4109"),
    Cited("validation_error", 'ZodError: [{"code": "invalid_value", "message": "Invalid option: '
          'expected one of \\"public\\"|\\"friends_only\\""}]',
          GH + "junobuild/juno-js/issues/886"),
    Cited("validation_error", "Invalid mode: 'summary'. Valid values: all, dead_functions, "
          "unused_imports, variables", GH + "aimasteracc/tree-sitter-analyzer/pull/490"),
    Cited("validation_error", "missing required parameters for tool 'update_plan': task_id, "
          "status", GH + "xalgorix/xalgorix/pull/318"),
    Cited("validation_error", "Tool validation failed for readSpec. Please fix the following "
          "errors and try again:\n- root: Required", GH + "mastra-ai/mastra/issues/9929"),
    Cited("validation_error", "http 400: Missing required parameter: 'input[24].output' "
          "(missing_required_parameter)", GH + "timothy-agent/timothy/issues/702"),
    Cited("validation_error", "Error: 1 validation error for ProviderEndpoint\nname\n  String "
          "should have at least 1 character [type=string_too_short, input_value='', "
          "input_type=str]", GH + "stacklok/codegate/issues/1393"),
    # HTTP status words with and without a code
    Cited("conflict", "docs: add comment explaining handling of `409 conflict` error",
          GH + "octokit/plugin-paginate-rest.js/pull/577"),
    Cited("conflict", "Bug: HTTP request returned status code 409 (Conflict)",
          GH + "abraunegg/onedrive/issues/2390"),
    Cited("validation_error", "Return 400 Bad Request on request validation error",
          GH + "apigee-127/swagger-tools/issues/37"),
    Cited("not_found", "ERROR: agent error (server_error): Operation returned an invalid status "
          "'Not Found'", GH + "Azure/azure-dev/issues/7321"),
    Cited("not_found", "npm ERR! fetch failed https://dccmzgc64kzf2.cloudfront.net/registry/chalk/"
          "chalk-0.2.1.tgz\nnpm ERR! Error: 404 Not Found",
          GH + "jbuck/npm-readonly-mirror/issues/7"),
    Cited("permission_denied", "add 403 forbidden html", GH + "GSA/catalog.data.gov/pull/1658"),
    # browser automation
    Cited("element_not_found", "Error executing action click_element: Element with index 15 "
          "does not exist - retry or use alternative actions",
          GH + "browser-use/browser-use/issues/1514"),
    Cited("element_not_found", "selenium.common.exceptions.NoSuchElementException: Message: no "
          "such element: Unable to locate element: {\"method\":\"xpath\",\"selector\":"
          "\"//body/div[3]/div/div[2]\"}", GH + "InstaPy/InstaPy/issues/5253"),
    Cited("element_not_found", "Error: No node found for selector: body > section > div.g12 > "
          "div > input", GH + "puppeteer/puppeteer/issues/3280"),
    Cited("element_not_found", "Error: Error: failed to find element matching selector "
          "\"input[type=\"email\"]\"", GH + "puppeteer/puppeteer/issues/10100"),
    Cited("tool_timeout", "(node:10230) UnhandledPromiseRejectionWarning: page.goto: Timeout "
          "30000ms exceeded.\n=========================== logs ===========================\n"
          "navigating to \"https://www.coingecko.com/en/\", waiting until \"load\"",
          GH + "microsoft/playwright/issues/3952"),
    Cited("tool_timeout", "Navigation Timeout Exceeded", GH + "lrlna/puppeteer-walker/issues/9"),
    Cited("tool_timeout", 'But I still see such error "page.goto: net::ERR_TIMED_OUT" after 30s',
          GH + "microsoft/playwright/issues/5062"),
    # git
    Cited("nothing_to_commit", "On branch date-1734447481\nnothing to commit, working tree clean"
          "\nError: Process completed with exit code 1.",
          GH + "ministryofjustice/modernisation-platform/pull/8779"),
    Cited("nothing_to_commit", "On branch LEController_BUILD_A_\nnothing to commit, working "
          "directory clean", GH + "Praqma/2git/issues/4"),
    Cited("nothing_to_commit", 'no changes added to commit (use "git add" and/or "git commit '
          '-a")\n##[error]Process completed with exit code 1.',
          GH + "jenkins-zh/jenkins-formulas/issues/41"),
    Cited("git_push_rejected", " ! [rejected]        master -> master (non-fast-forward)\n"
          "error: failed to push some refs to 'https://github.com/hidalgutzu/oasis-connect-"
          "backend.git'\nhint: Updates were rejected because the tip of your current branch is "
          "behind", GH + "mathieudutour/git-sketch-plugin/issues/156"),
    Cited("git_push_rejected", " ! [rejected]        master -> master (fetch first)\nerror: "
          "failed to push some refs to 'https://github.com/jesuscreyes/rshell.git'",
          GH + "mikeizbicki/ucr-cs100/issues/269"),
    Cited("git_push_rejected", "hint: Updates were rejected because a pushed branch tip is "
          "behind its remote", GH + "lonelyplanet/backpack-ui/pull/733"),
    # package managers
    Cited("package_not_found", "npm ERR! code E404\nnpm ERR! 404 Not Found - GET "
          "https://registry.npmjs.org/@tuxc%2flong - Not found\nnpm ERR! 404  '@tuxc/long@latest'"
          " is not in the npm registry.", GH + "npm/cli/issues/1626"),
    Cited("package_not_found", "npm ERR! 404 Not Found - GET https://registry.npmjs.org/error-ex",
          GH + "react/create-react-app/issues/8465"),
    Cited("package_not_found", 'error Couldn\'t find package "axios" on the "npm" registry.',
          GH + "npm/cli/issues/1816"),
    Cited("package_not_found", "ERROR: Could not find a version that satisfies the requirement "
          "googlesearch-python==2020.0.2 (from versions: 1.0.0, 1.0.1, 1.1.0)\nERROR: No matching"
          " distribution found for googlesearch-python==2020.0.2",
          GH + "SKRohit/Generating_Text_Summary_With_GPT2/issues/7"),
    # unknown tools
    Cited("tool_not_found", "ValueError: Tool with name python not found",
          GH + "run-llama/llama_index/issues/12479"),
    Cited("tool_not_found", 'Tool "read_fil" not found. Available tools: read_file, write_file',
          GH + "open-webui/open-webui/pull/25147"),
    Cited("tool_not_found", "web_serach is not a valid tool, try another one.",
          GH + "langchain-ai/langchain/pull/1340"),
)

SOURCES: frozenset[str] = frozenset(c.source for c in CITED)
"""The distinct public sources the corpus cites."""
