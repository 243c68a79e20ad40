"""Tests for the signature bank, error normalisation, fallback signatures and retry hints."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scarguard.model import Blame
from scarguard.naming._signature import Signature
from scarguard.naming.bank import DEFAULT_SIGNATURES as BANK_DATA
from scarguard.naming.signatures import (
    DEFAULT_BANK,
    DEFAULT_SIGNATURES,
    FALLBACK_HINT,
    FALLBACK_LABEL,
    FALLBACK_PREFIX,
    SignatureBank,
    fallback_signature,
    is_fallback,
    normalise_error,
)

POSITIVE: dict[str, list[str]] = {
    "path_traversal": [
        "Error: Path traversal detected: ../../etc/passwd",
        "Access denied - path outside allowed directories: /etc/passwd not in /home/u/project",
        "ValueError: /tmp/x.txt is outside the workspace",
    ],
    "esm_cjs_mismatch": [
        "SyntaxError: Cannot use import statement outside a module",
        "Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/chalk/source/index.js"
        " from /app/index.js not supported.",
        "ReferenceError: exports is not defined in ES module scope",
        "ReferenceError: require is not defined in ES module scope, you can use import instead",
    ],
    "oom_gpu": [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB"
        " total capacity; 20.1 GiB already allocated)",
        "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously"
        " reported",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB)",
        "ResourceExhaustedError: OOM when allocating tensor with shape[64,1024,1024]",
    ],
    "oom_host": [
        "MemoryError",
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array",
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
        "OSError: [Errno 12] Cannot allocate memory",
        "Exception in thread main java.lang.OutOfMemoryError: Java heap space",
    ],
    "nccl_error": [
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191,"
        " unhandled system error, NCCL version 2.14.3",
        "torch.distributed.DistBackendError: ncclSystemError: System call failed",
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1,"
        " OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800321 milliseconds",
        "node1:1234:5678 [0] NCCL WARN Connect to 10.0.0.2<45678> failed : Connection refused",
    ],
    "cublas_error": [
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)`",
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling cublasGemmEx",
        "cuBLAS error: CUBLAS_STATUS_INVALID_VALUE",
    ],
    "nan_loss": [
        "ValueError: Loss is NaN at step 1200",
        "loss: nan",
        "Detected NaN loss, stopping training",
        "Batch 52: Invalid loss, terminating training",
        "RuntimeError: Function 'MseLossBackward0' returned nan values in its 0th output.",
    ],
    "gradient_explosion": [
        "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite,"
        " so it cannot be clipped.",
        "Training aborted: gradient explosion detected at step 300",
        "grad norm is inf after step 12",
    ],
    "training_divergence": [
        "Training diverged at epoch 3",
        "Loss has diverged; aborting run",
        "EarlyStopping: divergence detected in validation loss",
    ],
    "tensor_shape_mismatch": [
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)",
        "RuntimeError: Error(s) in loading state_dict for Net: size mismatch for fc.weight:",
        "ValueError: Expected input batch_size (32) to match target batch_size (64).",
        "RuntimeError: The size of tensor a (128) must match the size of tensor b (64) at"
        " non-singleton dimension 1",
        "RuntimeError: shape '[32, -1, 8]' is invalid for input of size 1000",
        "ValueError: operands could not be broadcast together with shapes (3,4) (5,)",
    ],
    "quota_exceeded": [
        "openai.RateLimitError: Error code: 429 - {'error': {'message': 'You exceeded your current"
        " quota, please check your plan and billing details.', 'type': 'insufficient_quota'}}",
        "anthropic.BadRequestError: Error code: 400 - Your credit balance is too low to access the"
        " Anthropic API.",
        "insufficient_quota",
    ],
    "rate_limited": [
        "Error code: 429 - {'type': 'error', 'error': {'type': 'rate_limit_error', 'message':"
        " 'Number of request tokens has exceeded your per-minute rate limit'}}",
        "429 Too Many Requests",
        "HTTP 429: slow down",
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM)",
        "google.api_core.exceptions.ResourceExhausted: 429 RESOURCE_EXHAUSTED: Quota exceeded",
    ],
    "server_error": [
        "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message':"
        " 'Overloaded'}}",
        "502 Bad Gateway",
        "HTTP Error 503: Service Unavailable",
        "500 Internal Server Error",
        "openai.InternalServerError: Error code: 500 - The server had an error",
        "<html><head><title>504 Gateway Time-out</title></head></html>",
    ],
    "tool_timeout": [
        "subprocess.TimeoutExpired: Command '['pytest']' timed out after 120 seconds",
        "httpx.ReadTimeout: The read operation timed out",
        "Error: Command timed out after 2m 0.0s",
        "Error: connect ETIMEDOUT 10.0.0.5:443",
        "grpc: DEADLINE_EXCEEDED: Deadline Exceeded",
        "openai.APITimeoutError: Request timed out.",
    ],
    "connection_refused": [
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "ConnectionRefusedError: [Errno 111] Connection refused",
        "dial tcp 127.0.0.1:6379: connect: connection refused",
        "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to"
        " server",
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker"
        " daemon running?",
    ],
    "lock_held": [
        "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1234"
        " (apt-get)",
        "sqlite3.OperationalError: database is locked",
        "Waiting for cache lock: Could not get lock /var/lib/dpkg/lock. It is held by process"
        " 77 (apt)",
        "bash: ./server: Text file busy",
    ],
    "connection_error": [
        "Error: read ECONNRESET",
        "ConnectionResetError: [Errno 104] Connection reset by peer",
        "socket.gaierror: [Errno -2] Name or service not known",
        "Error: getaddrinfo ENOTFOUND api.example.com",
        "openai.APIConnectionError: Connection error.",
        "Error: socket hang up",
        "curl: (6) Could not resolve host: api.example.invalid",
    ],
    "port_in_use": [
        "Error: listen EADDRINUSE: address already in use :::3000",
        "OSError: [Errno 98] Address already in use",
        "Port 8000 is in use by another program.",
        "Error response from daemon: driver failed: Bind for 0.0.0.0:80 failed: port is already"
        " allocated",
    ],
    "disk_full": [
        "OSError: [Errno 28] No space left on device",
        "Error: ENOSPC: no space left on device, write",
        "cp: error writing 'big.bin': Disk quota exceeded",
    ],
    "process_killed": [
        "bash: line 1: 4242 Killed                  python train.py",
        "Command '['python', 'train.py']' returned non-zero exit status 137.",
        "Error: Exit code 137",
        "Out of memory: Killed process 1234 (python) total-vm:123kB",
        "Container was OOMKilled",
        "Command '['sleep', '100']' died with <Signals.SIGKILL: 9>.",
    ],
    "segfault": [
        "Segmentation fault (core dumped)",
        "Fatal Python error: Segmentation fault",
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
        "Command '['./a.out']' returned non-zero exit status -11.",
    ],
    "ambiguous_edit": [
        "Error: Failed to edit, expected 1 occurrence(s) but found 3.",
        "Found 3 matches of the string to replace, but replace_all is false. To replace all"
        " occurrences, set replace_all to true.",
        "No replacement was performed. Multiple occurrences of old_str `x = 1` in lines [3, 9].",
        "Error: old_string is not unique in the file",
        "search text matches 2 locations in app.py",
    ],
    "edit_failed": [
        "Failed to edit, 0 occurrences found for old_string in src/main.rs. Ensure you're not"
        " escaping content incorrectly.",
        "old_string found 0 times in config.py",
        "String to replace not found in file.",
        "No replacement was performed, old_str `def foo():` did not appear verbatim in /r/a.py.",
        "Error: old_string not found in app.py",
        "SearchReplaceNoExactMatch: The SEARCH block failed to exactly match lines in main.py",
        "no match found for search in README.md",
        "Search string not found: 'import os'",
        "ValueError: Invalid Context 0:\n    return a - b",
        "Invalid EOF Context 12:\n}",
        "ValueError: Invalid Anchor 0:\ndef subtract(a, b):",
        "Error: Could not find exact match for edit:\n    return a - b",
    ],
    "module_not_found": [
        "ModuleNotFoundError: No module named 'numpy'",
        "Error: Cannot find module 'express'\nRequire stack:\n- /app/index.js",
        "ImportError: cannot import name 'foo' from 'bar' (/app/bar.py)",
        "src/a.ts(1,21): error TS2307: Cannot find module 'lodash' or its corresponding type"
        " declarations.",
        "Module not found: Error: Can't resolve './Button' in '/app/src'",
    ],
    "syntax_error": [
        "  File \"app.py\", line 3\n    def f(\n         ^\nSyntaxError: '(' was never closed",
        "IndentationError: unexpected indent",
        "SyntaxError: Unexpected token '}'",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "SyntaxError: Unexpected end of JSON input",
        "Expecting property name enclosed in double quotes: line 2 column 5 (char 6)",
        "SyntaxError: Unexpected token 'a', \"abc\" is not valid JSON",
        'OperationalError: near "FROM": syntax error',
        "You have an error in your SQL syntax; check the manual near 'FORM users'",
    ],
    "validation_error": [
        "1 validation error for EditArgs\npath\n  Field required [type=missing]",
        "TypeError: edit_file() missing 1 required positional argument: 'path'",
        "TypeError: run() got an unexpected keyword argument 'timeout'",
        "InputValidationError: Edit failed due to the following issue: The required parameter"
        " `old_string` is missing",
        "Error: Missing required parameter: 'query'",
        "'path' is a required property",
        "Error: query must not be empty.",
        "'c' is not one of ['a', 'b']",
        "422 unprocessable entity",
        "400 Bad Request: validation failed",
    ],
    "tool_not_found": [
        "Error: No such tool available: read_fil",
        "Unknown tool: web_serach",
        "Tool 'get_wether' not found",
        "search_web is not a valid tool, try one of [search, fetch].",
        'Tool "frobnicate" does not exist. Available tools: read_file, write_file',
        "AI_NoSuchToolError: NoSuchToolError",
    ],
    "command_not_found": [
        "bash: line 1: pyhton: command not found",
        "'npx' is not recognized as an internal or external command",
        'exec: "pnpm": executable file not found in $PATH',
        "Error: spawn tsc ENOENT",
        "Command 'foo' returned non-zero exit status 127.",
        "sh: 1: tsc: not found",
    ],
    "file_not_found": [
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'",
        "Error: ENOENT: no such file or directory, open '/app/config.json'",
        "cat: src/main.py: No such file or directory",
        "Error: File /repo/src/utils.py does not exist",
        "error: pathspec 'src/old.py' did not match any file(s) known to git",
        "The system cannot find the path specified.",
        "Path not found: docs/intro.md",
    ],
    "permission_denied": [
        "PermissionError: [Errno 13] Permission denied: '/etc/shadow'",
        "Error: EACCES: permission denied, open '/root/.bashrc'",
        "HTTP Error 403: Forbidden",
        "rm: cannot remove '/sys/x': Operation not permitted",
        "Resource not accessible by integration",
    ],
    "auth_failed": [
        "openai.AuthenticationError: Error code: 401 - Incorrect API key provided: sk-abc***",
        "anthropic.AuthenticationError: Error code: 401 - {'type': 'authentication_error'}",
        "401 Unauthorized",
        "Bad credentials",
    ],
    "conflict": [
        "fatal: 'main' is already checked out at '/work/repo'",
        "fatal: 'feature' is already used by worktree at '/tmp/wt'",
        "FileExistsError: [Errno 17] File exists: 'out'",
        "Error: EEXIST: file already exists, mkdir '/app/dist'",
        "fatal: destination path 'repo' already exists and is not an empty directory.",
        "CONFLICT (content): Merge conflict in app.py\nAutomatic merge failed",
        "409 Conflict",
        "sqlite3.IntegrityError: UNIQUE constraint failed: users.email",
    ],
    "compile_failure": [
        "error[E0308]: mismatched types\n --> src/main.rs:4:18",
        "src/index.ts(12,5): error TS2345: Argument of type 'string' is not assignable",
        "main.c:5:3: error: expected ';' before 'return'",
        "main.c:1:10: fatal error: foo.h: No such file or directory\ncompilation terminated.",
        'error: could not compile `demo` (bin "demo") due to 2 previous errors',
        "Found 2 errors. Watching for file changes.",
    ],
    "empty_result": [
        "No results found for query 'flux capacitor'",
        "Error: empty response from model",
        "The search returned no results",
        "zsh: no matches found: *.rst",
    ],
    "non_json_response": [
        "SyntaxError: Unexpected token < in JSON at position 0",
        "SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON",
        "json: invalid character '<' looking for beginning of value",
    ],
    "patch_invalid": [
        "error: corrupt patch at line 12",
        "patch: **** malformed patch at line 5: @@",
        "error: No valid patches in input (allow with \"--allow-empty\")",
    ],
    "unknown_table": [
        "sqlite3.OperationalError: no such column: emial",
        'psycopg.errors.UndefinedColumn: column "emial" does not exist',
        "pyodbc.ProgrammingError: Invalid object name 'dbo.Orderz'.",
    ],
    "constraint_violation": [
        "sqlite3.IntegrityError: FOREIGN KEY constraint failed",
        'ERROR: insert or update on table "orders" violates foreign key constraint "fk_user"',
        "(1048, \"Column 'email' cannot be null\")",
    ],
    "invalid_request": [
        "McpError: MCP error -32602: Invalid request parameters",
        '{"code": -32602, "message": "Invalid params"}',
        "JSON-RPC error -32602",
    ],
    "element_not_found": [
        "NoSuchElementException: no such element: Unable to locate element: #submit",
        "Error: strict mode violation: locator('button') resolved to 3 elements",
        "Error: No element found for selector: #login",
    ],
    "not_found": [
        "404 Not Found",
        "HTTP Error 404: Not Found",
        "Error code: 404 - {'error': 'no such model'}",
    ],
    "nothing_to_commit": [
        "nothing to commit, working tree clean",
        "nothing added to commit but untracked files present (use \"git add\" to track)",
        "no changes added to commit",
    ],
    "git_push_rejected": [
        " ! [rejected]        main -> main (non-fast-forward)",
        " ! [rejected]        main -> main (fetch first)",
        "hint: Updates were rejected because the remote contains work that you do not have",
    ],
    "package_not_found": [
        "ERROR: No matching distribution found for reqeusts",
        "error: no matching package named `serde_jsn` found",
        "E: Unable to locate package python3-foo",
    ],
    "make_target_missing": [
        "make: *** No rule to make target 'biuld'.  Stop.",
        "make: *** No rule to make target 'build', needed by 'all'.  Stop.",
        "make[1]: *** No rule to make target 'src/main.o'.  Stop.",
    ],
    "file_too_large": [
        "MaxFileReadTokenExceededError: File content (41049 tokens) exceeds maximum allowed"
        " tokens (25000)",
        "Error: file is too large to read (12 MB); use offset and limit",
        "The output exceeds the maximum allowed size for this tool",
    ],
    "command_failed": [
        "Command '['pytest', '-x']' returned non-zero exit status 1.",
        "Error: Exit code 1",
        "Process exited with code 2",
        "make: *** [Makefile:3: all] Error 2",
        "npm ERR! code ELIFECYCLE",
        "exit status 2",
    ],
}

NEGATIVE = [
    "room",
    "zoom",
    "the room is full",
    "roommate",
    "bloom filter",
    "exit code 0",
    "exited with exit status 0",
    "Process finished with exit code 0",
    "returncode=0",
    "timeout=30 configured",
    "info",
    "version 4.0.3",
    "403 items processed",
    "Processed 500 records",
    "page 429 of the manual",
    "no errors found",
    "0 errors",
    "Found 0 errors",
    "warning: unused variable `x`",
    "killed it in the demo",
    "a nanoscale loss function",
    "the file was written",
    "rate limiter configured at 10/s",
    "sizes match",
    "tool output was long",
    "Finished in 0.4s",
    "there is nothing to commit to yet",
    "the relation between the two tables",
    "input should be short and clear",
    "the patch applied cleanly",
    "validation passed for 3 inputs",
    "SSL certificate validation failed",
    "the element was found on the page",
    "404 pages were crawled",
    "duplicate entries were merged",
    "JSON.parse is used to read the file",
    "git push succeeded",
    "no such luck",
    "the tool does exist",
    "the query may be empty when nothing is selected",
    "rejected the offer",
]


def _cases() -> list[tuple[str, str]]:
    return [(name, text) for name, texts in POSITIVE.items() for text in texts]


@pytest.mark.parametrize(("expected", "text"), _cases())
def test_positive_corpus(expected: str, text: str) -> None:
    """A realistic error message is named by the expected signature."""
    assert DEFAULT_BANK.match(text).name == expected


def test_positive_corpus_covers_every_default_signature_three_times() -> None:
    """Every default signature has at least three realistic messages in the corpus."""
    assert {s.name for s in DEFAULT_SIGNATURES} == set(POSITIVE)
    assert all(len(texts) >= 3 for texts in POSITIVE.values())


@pytest.mark.parametrize("text", NEGATIVE)
def test_negative_corpus_falls_back(text: str) -> None:
    """A harmless text that merely resembles an error falls back to an error: signature."""
    assert is_fallback(DEFAULT_BANK.match(text).name)


def test_default_signatures_are_word_bounded_and_precompiled() -> None:
    """Every default pattern is compiled and every alternative starts at a word boundary."""
    for sig in DEFAULT_SIGNATURES:
        assert isinstance(sig.pattern, re.Pattern), sig.name
        assert r"\b" in sig.pattern.pattern, sig.name


def test_default_signatures_have_unique_names_and_fixed_hints() -> None:
    """Default names are unique and every signature carries a label and an imperative hint."""
    names = [s.name for s in DEFAULT_SIGNATURES]
    assert len(names) == len(set(names))
    for sig in DEFAULT_SIGNATURES:
        assert sig.label and sig.hint.endswith(".") and sig.hint[0].isupper(), sig.name
        assert len(sig.hint) < 200, sig.name


def test_default_signatures_are_the_bank_module_data() -> None:
    """DEFAULT_SIGNATURES re-exported by signatures is the tuple of the bank module."""
    assert DEFAULT_SIGNATURES is BANK_DATA
    assert list(DEFAULT_BANK) == list(BANK_DATA)


@pytest.mark.parametrize(
    ("name", "blame", "flags"),
    [
        ("edit_failed", Blame.AGENT, {"deterministic"}),
        ("file_not_found", Blame.AGENT, {"deterministic", "target_fact"}),
        ("oom_gpu", Blame.AGENT, {"resource"}),
        ("oom_host", Blame.AGENT, {"resource"}),
        ("rate_limited", Blame.HARNESS, {"retryable"}),
        ("server_error", Blame.HARNESS, {"retryable"}),
        ("tool_timeout", Blame.HARNESS, {"retryable"}),
        ("connection_refused", Blame.HARNESS, {"retryable"}),
        ("lock_held", Blame.HARNESS, {"retryable"}),
        ("disk_full", Blame.HARNESS, set()),
        ("process_killed", Blame.HARNESS, set()),
        ("segfault", Blame.UNKNOWN, set()),
        ("command_failed", Blame.UNKNOWN, set()),
        ("patch_invalid", Blame.AGENT, {"deterministic"}),
        ("unknown_table", Blame.AGENT, {"deterministic"}),
        ("invalid_request", Blame.UNKNOWN, set()),
        ("package_not_found", Blame.UNKNOWN, set()),
        ("non_json_response", Blame.UNKNOWN, set()),
        ("element_not_found", Blame.AGENT, set()),
    ],
)
def test_flags_of_key_signatures(name: str, blame: Blame, flags: set[str]) -> None:
    """Key signatures carry the blame and flags the learning rules rely on."""
    sig = DEFAULT_BANK.get(name)
    assert sig is not None
    assert sig.blame is blame
    for flag in ("deterministic", "resource", "target_fact", "retryable"):
        assert getattr(sig, flag) is (flag in flags), flag


def test_harness_signatures_are_never_deterministic_agent_facts() -> None:
    """No harness signature claims to be a fact about the target or a resource choice."""
    for sig in DEFAULT_SIGNATURES:
        if sig.blame is Blame.HARNESS:
            assert not (sig.target_fact or sig.resource), sig.name
        if sig.retryable:
            assert sig.blame is Blame.HARNESS, sig.name


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"status_code": 429}, "rate_limited"),
        ({"status_code": 503}, "server_error"),
        ({"status_code": 500}, "server_error"),
        ({"status_code": 408}, "tool_timeout"),
        ({"status_code": 401}, "auth_failed"),
        ({"status_code": 403}, "permission_denied"),
        ({"status_code": 409}, "conflict"),
        ({"status_code": 422}, "validation_error"),
        ({"exception_types": ("FileNotFoundError", "OSError", "Exception")}, "file_not_found"),
        ({"exception_types": ("ConnectionRefusedError", "ConnectionError")}, "connection_refused"),
        ({"exception_types": ("builtins.TimeoutError",)}, "tool_timeout"),
        ({"exception_types": ("APITimeoutError", "APIConnectionError")}, "tool_timeout"),
        ({"exception_types": ("OutOfMemoryError", "RuntimeError")}, "oom_gpu"),
        ({"exception_types": "ModuleNotFoundError"}, "module_not_found"),
    ],
)
def test_status_codes_and_exception_types_name_empty_errors(
    kwargs: dict[str, object], expected: str
) -> None:
    """A status code or exception type alone names the failure when there is no text."""
    assert DEFAULT_BANK.match("", **kwargs).name == expected  # type: ignore[arg-type]


def test_exception_type_beats_text() -> None:
    """A FileNotFoundError is file_not_found whatever its message says."""
    sig = DEFAULT_BANK.match(
        "FileNotFoundError: Connection refused", exception_types=("FileNotFoundError", "OSError")
    )
    assert sig.name == "file_not_found"


def test_text_beats_status_code() -> None:
    """A 400 whose text says 'Field required' is a validation error, not a fallback."""
    assert DEFAULT_BANK.match("Field required", status_code=400).name == "validation_error"
    assert DEFAULT_BANK.match("Connection refused", status_code=500).name == "connection_refused"


def test_unlisted_exception_types_fall_through_to_text() -> None:
    """Broad exception types (RuntimeError, CalledProcessError) let the text decide."""
    sig = DEFAULT_BANK.match(
        "CalledProcessError: Command 'x' returned non-zero exit status 137.",
        exception_types=("CalledProcessError", "SubprocessError", "Exception"),
    )
    assert sig.name == "process_killed"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("ambiguous_edit", "edit_failed"),
        ("esm_cjs_mismatch", "syntax_error"),
        ("oom_gpu", "process_killed"),
        ("oom_gpu", "cublas_error"),
        ("quota_exceeded", "rate_limited"),
        ("rate_limited", "server_error"),
        ("process_killed", "command_failed"),
        ("segfault", "command_failed"),
        ("command_not_found", "command_failed"),
        ("module_not_found", "compile_failure"),
        ("tool_not_found", "file_not_found"),
        ("path_traversal", "permission_denied"),
        ("port_in_use", "conflict"),
        ("patch_invalid", "edit_failed"),
        ("patch_invalid", "syntax_error"),
        ("non_json_response", "syntax_error"),
        ("validation_error", "invalid_request"),
        ("tool_not_found", "invalid_request"),
        ("element_not_found", "file_not_found"),
        ("conflict", "constraint_violation"),
        ("package_not_found", "not_found"),
        ("package_not_found", "command_failed"),
        ("nothing_to_commit", "command_failed"),
        ("git_push_rejected", "command_failed"),
    ],
)
def test_specific_signatures_come_before_general_ones(first: str, second: str) -> None:
    """The default bank tries specific kinds before the general kinds they overlap."""
    names = [s.name for s in DEFAULT_SIGNATURES]
    assert names.index(first) < names.index(second)


def test_nothing_matches_gives_fallback_signature() -> None:
    """An unmatched error gets an error: signature with unknown blame and a generic hint."""
    sig = DEFAULT_BANK.match("frobnicator jammed at gear 7")
    assert re.fullmatch(r"error:[0-9a-f]{10}", sig.name)
    assert sig.blame is Blame.UNKNOWN
    assert sig.label == FALLBACK_LABEL and sig.hint == FALLBACK_HINT
    assert not (sig.deterministic or sig.resource or sig.target_fact or sig.retryable)


def test_empty_text_with_status_groups_by_status_class() -> None:
    """An empty error with a status no signature claims falls back per status class."""
    a = DEFAULT_BANK.match(None, status_code=404)
    b = DEFAULT_BANK.match("", status_code=410)
    c = DEFAULT_BANK.match("", status_code=302)
    assert is_fallback(a.name) and a.name == b.name != c.name


def test_empty_text_with_unknown_exception_groups_by_type() -> None:
    """An empty error with an unlisted exception type falls back per type name."""
    a = DEFAULT_BANK.match("", exception_types=("KeyError", "LookupError"))
    b = DEFAULT_BANK.match("", exception_types=("ValueError",))
    assert is_fallback(a.name) and a.name != b.name
    assert a == DEFAULT_BANK.match(None, exception_types=("KeyError",))


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("lock held by pid 1234 on port 8080", "lock held by pid 99 on port 3000"),
        ("cannot open /home/alice/x/data.bin", "cannot open /srv/tmp/other.bin"),
        (
            "job 3f2a9c1e-1b2c-4d5e-8f90-123456789abc stalled",
            "job 00000000-0000-4000-8000-000000000000 stalled",
        ),
        ("object deadbeef42 is stale", "object 0a1b2c3d4e is stale"),
        ("at 2024-05-01T12:00:03Z the queue stalled", "at 2025-01-09 08:15:00 the queue stalled"),
        ("frob 'alpha' refused", "frob 'beta gamma' refused"),
        ("Widget   Jammed\n\tagain", "widget jammed again"),
        ("address 0x7f3a2b1c failed", "address 0x10 failed"),
        ("file app.py frobbed", "file main.ts frobbed"),
        ("see C:\\Users\\bob\\x.txt frob", "see D:\\tmp\\y frob"),
        ("fetch https://a.example.com/v1/x?id=3 frob", "fetch http://b.test:8080/ frob"),
    ],
)
def test_fallback_groups_errors_that_differ_only_in_details(one: str, other: str) -> None:
    """Errors differing only in numbers, paths, ids, times, quotes or case share a name."""
    assert fallback_signature(one).name == fallback_signature(other).name


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("frobnicator jammed", "frobnicator exploded"),
        ("queue stalled", "queue drained"),
        ("gear 7 slipped", "belt 7 slipped"),
    ],
)
def test_fallback_separates_different_errors(one: str, other: str) -> None:
    """Different unknown errors get different fallback names."""
    assert fallback_signature(one).name != fallback_signature(other).name


def test_fallback_name_is_stable_across_processes() -> None:
    """The fallback name is a content hash, equal in a fresh interpreter (no hash())."""
    text = "frobnicator jammed at gear 7 in /tmp/x"
    code = (
        "from scarguard.naming.signatures import fallback_signature;"
        f"print(fallback_signature({text!r}).name)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345"},
    )
    assert out.stdout.strip() == fallback_signature(text).name


def test_normalise_error_masks_and_lowercases() -> None:
    """Normalisation lowercases, collapses whitespace and masks the varying parts."""
    got = normalise_error("Cannot  OPEN '/tmp/a b.txt' at port 8080\n(pid 42), id 0xdeadbeef")
    assert got == "cannot open <str> at port <n> (pid <n>), id <hex>"


def test_normalise_error_bounds_length_and_keeps_tail() -> None:
    """Long texts are bounded and keep both their head and their final line."""
    text = "Traceback (most recent call last):\n" + "  frame frob\n" * 2000 + "WidgetError: jammed"
    got = normalise_error(text)
    assert len(got) <= 1010
    assert got.startswith("traceback") and got.endswith("widgeterror: jammed")


@settings(max_examples=400)
@given(st.text())
def test_normalise_error_is_idempotent_and_total(text: str) -> None:
    """normalise_error never raises and normalising twice changes nothing."""
    once = normalise_error(text)
    assert normalise_error(once) == once


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(
            [
                "x",
                "'",
                '"',
                "`",
                "/",
                ".",
                "1",
                "a",
                "f",
                "0x",
                " ",
                "\n",
                ":",
                "\\",
                "<",
                "-",
                ".py",
                "c:",
                "…",
                "http://",
                "2024-01-02",
                "12:00:00",
                "deadbeef1",
            ]
        ),
        max_size=60,
    )
)
def test_normalise_error_is_idempotent_on_tricky_tokens(parts: list[str]) -> None:
    """Idempotence holds for texts built from the characters the masks care about."""
    once = normalise_error("".join(parts))
    assert normalise_error(once) == once


def test_fallback_signature_of_none_is_stable() -> None:
    """fallback_signature(None) is the same as for empty text."""
    assert fallback_signature(None).name == fallback_signature("").name


def test_is_fallback() -> None:
    """is_fallback recognises the error: prefix only."""
    assert FALLBACK_PREFIX == "error:"
    assert is_fallback("error:0123456789")
    assert not is_fallback("edit_failed")


def _custom(name: str, pattern: str | None = r"\bwidget jammed\b") -> Signature:
    return Signature(name, pattern, Blame.AGENT, "Unjam the widget first.", "widget jammed")


def test_user_signature_from_string_pattern_compiles() -> None:
    """A plain string pattern is compiled and blame strings are converted."""
    sig = Signature("widget", r"\bwidget\b", "harness", "Wait.", "widget", status_codes=[418])
    assert isinstance(sig.pattern, re.Pattern)
    assert sig.blame is Blame.HARNESS
    assert sig.status_codes == frozenset({418})


def test_with_signatures_tries_new_ones_first() -> None:
    """with_signatures puts new signatures before the existing ones."""
    bank = DEFAULT_BANK.with_signatures(_custom("widget_jammed", r"\bwidget jammed\b"))
    assert next(iter(bank)).name == "widget_jammed"
    assert bank.match("widget jammed: Connection refused").name == "widget_jammed"
    assert len(bank) == len(DEFAULT_BANK) + 1
    assert "widget_jammed" not in DEFAULT_BANK


def test_with_signatures_overrides_by_name() -> None:
    """A signature with an existing name replaces it and is tried first."""
    mine = _custom("edit_failed", r"\bwidget jammed\b")
    bank = DEFAULT_BANK.with_signatures(mine)
    assert len(bank) == len(DEFAULT_BANK)
    assert bank.get("edit_failed") is mine
    assert bank.match("widget jammed").name == "edit_failed"
    assert is_fallback(bank.match("String to replace not found in file.").name)


def test_without_removes_and_ignores_unknown_names() -> None:
    """without drops named signatures and ignores names it does not hold."""
    bank = DEFAULT_BANK.without("rate_limited", "no_such_signature")
    assert "rate_limited" not in bank and len(bank) == len(DEFAULT_BANK) - 1
    assert bank.match("", status_code=429).name.startswith(FALLBACK_PREFIX)


def test_bank_rejects_duplicate_and_reserved_names() -> None:
    """A bank refuses two signatures of one name and names using the fallback prefix."""
    with pytest.raises(ValueError, match="two signatures"):
        SignatureBank([_custom("a"), _custom("a")])
    with pytest.raises(ValueError, match="reserved"):
        SignatureBank([_custom("error:abc")])


def test_signature_requires_a_name() -> None:
    """A blank signature name is refused."""
    with pytest.raises(ValueError):
        _custom(" ")


def test_status_only_signature_matches_by_code() -> None:
    """A signature without a pattern matches only by status code."""
    sig = Signature(
        "teapot", None, Blame.HARNESS, "Brew coffee elsewhere.", "teapot", status_codes={418}
    )
    bank = SignatureBank([sig])
    assert bank.match("", status_code=418) is sig
    assert is_fallback(bank.match("teapot").name)


def test_bank_protocols() -> None:
    """A bank iterates in order, has a length, and supports name membership and get()."""
    bank = SignatureBank()
    assert len(bank) == len(DEFAULT_SIGNATURES)
    assert "edit_failed" in bank and "nope" not in bank and 3 not in bank
    assert bank.get("nope") is None
    assert bank.get("oom_gpu") is DEFAULT_BANK.get("oom_gpu")
    assert "SignatureBank" in repr(bank)


def test_match_scans_head_and_tail_of_huge_text() -> None:
    """A huge output is matched on its head and tail, where the messages sit."""
    text = "x " * 100_000 + "\nModuleNotFoundError: No module named 'numpy'"
    assert DEFAULT_BANK.match(text).name == "module_not_found"


def _fastest(text: str, runs: int = 3) -> float:
    import time

    from scarguard.naming.signatures import normalise_error

    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        normalise_error(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize(
    "text",
    ["x-" * 2000, "a." * 2000, "1." * 2000, "." * 4000, "x-" * 1990 + " http://h/", "a/" * 2000],
    ids=["hyphen-run", "dot-run", "number-run", "dots", "run-then-url", "slash-run"],
)
def test_normalising_runs_costs_what_ordinary_text_costs(text: str) -> None:
    """Runs that made the masks backtrack (quadratic) cost at most a few times ordinary text.

    A ratio within one run, not a wall-clock limit: 4,000 characters of ``x-x-x-...`` took
    about 150 times as long as 4,000 characters of a traceback before.
    """
    ordinary = (
        'Traceback (most recent call last): File "/srv/app/main.py", line 12, in <module>'
        " ValueError: bad value 42 for key 'x' at 2024-01-01 10:00:00 "
    ) * 40
    ratio = _fastest(text) / _fastest(ordinary[: len(text)])
    assert ratio < 10, f"{ratio:.1f} times ordinary text"
