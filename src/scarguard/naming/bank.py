"""The default signature bank: the failure kinds scarguard knows out of the box.

Order matters, first match wins: specific kinds come before general ones (ambiguous edits
before failed edits, ESM/CommonJS mix-ups before syntax errors, GPU out-of-memory before
killed processes, quota before rate limits before server errors, killed and crashed
processes before plain non-zero exits). Every pattern is word-bounded and case-sensitive
where the real message has a fixed case; ``(?i:...)`` marks the few phrases that vary.

Blame follows one question: whose choice would have to change for the call to succeed?
The agent's (its arguments, its code, its sizes) -> ``AGENT``; the infrastructure's
(network, quotas, servers, disks, the cluster) -> ``HARNESS``; either -> ``UNKNOWN``.
"""

from __future__ import annotations

from scarguard.model import Blame
from scarguard.naming._signature import Signature

__all__ = ["DEFAULT_SIGNATURES"]

_CODE = r"(?:[Ee]rror code:?|HTTP(?:/\d(?:\.\d)?)?|HTTP [Ee]rror|[Ss]tatus(?: code)?:?)"
"""Words that introduce a status code inside error text (``Error code: 429``, ``HTTP 503``)."""

_EXIT = r"\b[Ee]xit(?:ed)?(?: with)? (?:code|status):? "
"""An exit code or status about to be named (``exit code``, ``exited with status:``)."""

A, H, U = Blame.AGENT, Blame.HARNESS, Blame.UNKNOWN

DEFAULT_SIGNATURES: tuple[Signature, ...] = (
    # Agent: it chose a path outside its sandbox; the identical path is refused again.
    Signature(
        "path_traversal",
        r"(?i:\bpath traversal\b)|\boutside (?:of )?(?:the )?(?:workspace|allowed "
        r"director(?:y|ies)|allowed paths?|sandbox|project (?:root|directory)|working directory)\b",
        A,
        "Use a path inside the workspace, relative to its root, without '..' segments.",
        "path outside the workspace",
        deterministic=True,
    ),
    # Agent: module syntax of the file does not fit the package's module type.
    Signature(
        "esm_cjs_mismatch",
        r"\bCannot use import statement outside a module\b|\brequire\(\) of ES [Mm]odule\b"
        r"|\bERR_REQUIRE_ESM\b|\b(?:exports|require|module) is not defined in ES module scope\b"
        r"|\bMust use import to load ES Module\b|\bTo load an ES module, set\b",
        A,
        'Use one module system per file: import/export with "type": "module" or .mjs, or '
        "require/module.exports in .cjs; do not mix them.",
        "ES module / CommonJS mismatch",
        deterministic=True,
    ),
    # Agent: it chose the batch, model or sequence size; resource=True lets adapters ban larger.
    Signature(
        "oom_gpu",
        r"\bCUDA out of memory\b|\bCUDA error: out of memory\b"
        r"|\btorch\.(?:cuda\.)?OutOfMemoryError\b|\bCUBLAS_STATUS_ALLOC_FAILED\b"
        r"|\bMPS backend out of memory\b"
        r"|\bOOM when allocating tensor\b|\bRESOURCE_EXHAUSTED: Out of memory\b",
        A,
        "Reduce the batch size, sequence length or model size (or enable gradient "
        "checkpointing or mixed precision) before retrying; the same size will not fit.",
        "GPU out of memory",
        resource=True,
        exception_types={"OutOfMemoryError"},
    ),
    # Agent: it asked for more host memory than exists (array sizes, loading whole files).
    Signature(
        "oom_host",
        r"\bMemoryError\b|\bCannot allocate memory\b|\bstd::bad_alloc\b"
        r"|\bJavaScript heap out of memory\b|\bUnable to allocate [\d.]+ [KMGT]i?B\b"
        r"|\bjava\.lang\.OutOfMemoryError\b|\bJava heap space\b",
        A,
        "Process the data in smaller chunks or stream it instead of loading it at once; "
        "do not retry with the same size.",
        "host out of memory",
        resource=True,
        exception_types={"MemoryError"},
    ),
    # Harness: collective communication failed between ranks (network, driver, a dead peer).
    Signature(
        "nccl_error",
        r"\bNCCL (?:error|WARN|timeout)\b|\bnccl[A-Z]\w*Error\b|\bWorkNCCL\b"
        r"|\bProcessGroupNCCL\b[^\n]*\b(?:[Tt]imeout|[Ee]rror|abort(?:ed|ing))\b",
        H,
        "Check that every rank is alive and reachable, then relaunch the distributed job; "
        "the training configuration is not the cause.",
        "NCCL communication error",
    ),
    # Unknown: cuBLAS failures come from unsupported dtypes or shapes as often as from drivers.
    Signature(
        "cublas_error",
        r"\bCUBLAS_STATUS_[A-Z_]+\b|\bcuBLAS error\b",
        U,
        "Check the dtypes and shapes passed to the matrix multiply; if they are valid, run "
        "once with CUDA_LAUNCH_BLOCKING=1 to locate the failing call.",
        "cuBLAS error",
    ),
    # Agent: the learning rate, initialisation or data it chose made the loss non-finite.
    Signature(
        "nan_loss",
        r"(?i:\bloss\s*(?:is|was|became|of|=|:)?\s*(?:nan|-?inf(?:inity)?)\b)|(?i:\bnan loss\b)"
        r"|(?i:\bnon-finite loss\b)|\bInvalid loss, terminating training\b"
        r"|\breturned nan values in its \d+\w* output\b",
        A,
        "Lower the learning rate, add gradient clipping or check the inputs for NaN before "
        "training again; do not rerun the same configuration.",
        "loss became NaN or infinite",
    ),
    # Agent: its optimisation settings let the gradients blow up.
    Signature(
        "gradient_explosion",
        r"(?i:\bgradients? (?:explo(?:sion|ded|ding)|overflow(?:ed)?)\b)"
        r"|(?i:\bexploding gradients?\b)|(?i:\bgrad(?:ient)? norm (?:is |was )?(?:nan|inf)\b)"
        r"|\bfor gradients from `parameters` is non-finite\b",
        A,
        "Clip the gradient norm and lower the learning rate before training again.",
        "gradient explosion",
    ),
    # Agent: its hyper-parameters made training diverge.
    Signature(
        "training_divergence",
        r"(?i:\b(?:training|loss|model|optimi[sz]ation) (?:has )?diverged\b)"
        r"|(?i:\bdivergence detected\b)|(?i:\bloss (?:is )?diverging\b)",
        A,
        "Lower the learning rate or add warm-up, and restart from the last good checkpoint.",
        "training diverged",
    ),
    # Agent: the tensors it built have incompatible shapes; identical code fails identically.
    Signature(
        "tensor_shape_mismatch",
        r"\bsize mismatch\b|\bshapes cannot be multiplied\b|\bExpected input batch_size\b"
        r"|\bThe size of tensor a \(\d+\) must match the size of tensor b\b"
        r"|\bshape '\[[^\]\n]*\]' is invalid for input of size\b|\bIncompatible shapes\b"
        r"|\boperands could not be broadcast together\b|\bshape mismatch\b"
        r"|\bto have \d+ channels, but got \d+ channels\b",
        A,
        "Print the shapes of the tensors involved and fix the layer sizes or the reshape so "
        "they agree; the same code will fail again.",
        "tensor shape mismatch",
        deterministic=True,
    ),
    # Harness: the account is out of credit or quota; backing off does not help.
    Signature(
        "quota_exceeded",
        r"\binsufficient_quota\b|\bexceeded your current quota\b"
        r"|\bcredit balance is too low\b|\bbilling hard limit\b",
        H,
        "Stop calling this API and report that the account's quota or credit is exhausted.",
        "API quota or credit exhausted",
    ),
    # Harness: the provider throttles; the same call succeeds after waiting.
    Signature(
        "rate_limited",
        rf"\b{_CODE} 429\b|\b429 Too Many Requests\b|(?i:\btoo many requests\b)"
        r"|(?i:\brate[ _-]?limit(?:ed| exceeded| reached|_exceeded|_error)\b)"
        r"|\bRateLimitError\b|\bRESOURCE_EXHAUSTED\b|\bThrottlingException\b"
        r"|\bSlowDown\b|\bRequest was throttled\b",
        H,
        "Wait before calling again and send fewer requests at once; the call itself is fine.",
        "rate limited",
        retryable=True,
        status_codes={429},
        exception_types={"RateLimitError", "ThrottlingException"},
    ),
    # Harness: the server failed or is overloaded; the same call may succeed later.
    Signature(
        "server_error",
        rf"\b{_CODE} (?:500|502|503|504|529)\b|(?i:\binternal server error\b)"
        r"|(?i:\bbad gateway\b)|(?i:\bservice (?:temporarily )?unavailable\b)"
        r"|(?i:\bgateway time-?out\b)|\boverloaded_error\b|\bserver is overloaded\b"
        r"|\bInternalServerError\b|\bupstream connect error\b",
        H,
        "Wait and retry later; the server failed, not the request.",
        "server error",
        retryable=True,
        status_codes={500, 502, 503, 504, 529},
        exception_types={"InternalServerError", "ServiceUnavailableError"},
    ),
    # Harness: the tool or network did not answer in time.
    Signature(
        "tool_timeout",
        r"\bTimeoutError\b|\b[Tt]imed out\b|(?i:\btime-?out (?:error|expired|exceeded|reached)\b)"
        r"|\bTimeoutExpired\b|\bETIMEDOUT\b|\bESOCKETTIMEDOUT\b|\b[Dd]eadline ?[Ee]xceeded\b"
        r"|\bDEADLINE_EXCEEDED\b|\bRequest Timeout\b|\bReadTimeout\b|\bConnectTimeout\b"
        r"|(?i:\btimeout (?:of )?\d+ ?ms exceeded\b)|(?i:\bnavigation timeout\b)|\bERR_TIMED_OUT\b",
        H,
        "Retry later, or split the work into smaller calls that finish sooner.",
        "timed out",
        retryable=True,
        status_codes={408},
        exception_types={
            "TimeoutError",
            "TimeoutExpired",
            "ReadTimeout",
            "ConnectTimeout",
            "WriteTimeout",
            "PoolTimeout",
            "TimeoutException",
            "APITimeoutError",
            "Timeout",
        },
    ),
    # Harness: nothing listens at the address (a service down or still starting).
    Signature(
        "connection_refused",
        r"\bECONNREFUSED\b|\b[Cc]onnection refused\b|\bConnectionRefusedError\b"
        r"|\bERR_CONNECTION_REFUSED\b",
        H,
        "Check that the service is running and listening on the expected host and port, "
        "then retry.",
        "connection refused",
        retryable=True,
        exception_types={"ConnectionRefusedError"},
    ),
    # Harness: the network dropped, reset or could not resolve the connection.
    Signature(
        "connection_error",
        r"\bECONNRESET\b|\b[Cc]onnection reset by peer\b|\bConnectionResetError\b"
        r"|\bEHOSTUNREACH\b|\bENETUNREACH\b|\bNetwork is unreachable\b|\bNo route to host\b"
        r"|\bName or service not known\b|\bTemporary failure in name resolution\b"
        r"|\bENOTFOUND\b|\bEAI_AGAIN\b|\bConnection aborted\b|\bRemoteDisconnected\b"
        r"|\bAPIConnectionError\b|\bServer disconnected\b|\bsocket hang up\b"
        r"|\b[Cc]onnection (?:error|closed unexpectedly)\b"
        r"|\bERR_(?:NAME_NOT_RESOLVED|INTERNET_DISCONNECTED|CONNECTION_RESET|NETWORK_CHANGED)\b",
        H,
        "Retry after a short wait; if it persists, check the network and the host name.",
        "connection error",
        retryable=True,
        exception_types={
            "ConnectionResetError",
            "ConnectionAbortedError",
            "APIConnectionError",
            "ConnectError",
            "NetworkError",
            "RemoteProtocolError",
            "RemoteDisconnected",
            "ConnectionError",
        },
    ),
    # Agent: it chose a port that one of its own earlier servers (usually) still holds. Not
    # deterministic: the fix (stopping the old server) often happens outside the guarded
    # tools; a guarded `kill` also makes the failure stale (a shell command that changes
    # processes is a change of the world).
    Signature(
        "port_in_use",
        r"\bEADDRINUSE\b|\b[Aa]ddress already in use\b|\b[Pp]ort \d+ is (?:already )?in use\b"
        r"|\b[Pp]ort is already (?:in use|allocated)\b",
        A,
        "Stop the process that holds the port or start the server on a different port.",
        "port already in use",
    ),
    # Harness: the disk or quota is full; no argument change fixes it.
    Signature(
        "disk_full",
        r"\bENOSPC\b|\bNo space left on device\b|\bDisk quota exceeded\b|\bEDQUOT\b"
        r"|(?i:\bnot enough (?:free )?disk space\b)",
        H,
        "Free disk space (delete build artefacts, caches or old checkpoints) before writing again.",
        "disk full",
    ),
    # Harness: something outside the process killed it (OOM killer, a supervisor, a limit).
    Signature(
        "process_killed",
        r"\bKilled\b|\bSIGKILL\b|\bSIGTERM\b|\bOOMKilled\b|\bOOM[- ]?[Kk]ill(?:ed|er)\b"
        r"|\bOut of memory: Killed process\b|(?i:\bprocess (?:was )?killed\b)"
        rf"|{_EXIT}(?:137|143)\b|\bkilled by signal 9\b"
        r"|\bexit status -9\b|\bsignal 9\b",
        H,
        "Run it again with lower memory use or a longer time limit; the process was killed "
        "from outside.",
        "process killed",
        retryable=False,
    ),
    # Unknown: a crash in native code can be the agent's input or a broken library build.
    Signature(
        "segfault",
        r"\bSegmentation fault\b|\bSIGSEGV\b|\b[Ss]egfault\b|\bsignal 11\b|\bEXC_BAD_ACCESS\b"
        rf"|{_EXIT}139\b|\bexit status -11\b",
        U,
        "Rerun with smaller inputs or a different library version to find the native call that "
        "crashes; do not repeat the identical command.",
        "segmentation fault",
    ),
    # Agent: its search text occurs several times; identical input is ambiguous again.
    Signature(
        "ambiguous_edit",
        r"\b[Ff]ound \d+ matches of the string to replace\b|\bMultiple occurrences of old_str\b"
        r"|\bold_str(?:ing)? (?:is not unique|must be unique|matches multiple)\b"
        r"|(?i:\bsearch (?:string|text|block) (?:is ambiguous|matches \d+ (?:times|locations)))"
        r"|(?i:\b(?:appears|occurs) \d+ times in the file\b)"
        r"|\bexpected 1 occurrences?(?:\(s\))? but found [2-9]\d*\b",
        A,
        "Include more surrounding lines in the text to replace so it occurs exactly once, or "
        "ask to replace every occurrence.",
        "edit search string not unique",
        deterministic=True,
    ),
    # Agent: the patch it wrote does not parse (a missing header, end marker or hunk line
    # count); the same patch is rejected identically, before any file is read.
    Signature(
        "patch_invalid",
        r"(?i:\binvalid patch\b)|\bThe (?:first|last) line of the patch must be\b"
        r"|\b(?:corrupt|malformed) patch at line \d+|\bmissing line number at line \d+"
        r"|\bOnly garbage was found in the patch input\b|\bpatch fragment without header\b"
        r"|\bNo valid patches in input\b",
        A,
        "Rewrite the patch in the exact format the tool expects (its header, hunk lines and "
        "end marker) instead of sending the same patch again.",
        "patch could not be parsed",
        deterministic=True,
    ),
    # Agent: its search text is not in the file; the same text fails identically.
    Signature(
        "edit_failed",
        r"(?i:\b(?:old_str(?:ing)?|search (?:string|text|block)|(?:string|text) to replace)\b"
        r"[^.\n]{0,60}?\b(?:not found|did not appear|was not found|could not be found|not present"
        r"|failed to (?:exactly )?match|does not match)\b)|\bno match(?:es)? found for search\b"
        r"|\bSearchReplaceNoExactMatch\b|\bThe SEARCH block failed to exactly match\b"
        r"|\b0 occurrences found for old_str(?:ing)?\b|\bold_str(?:ing)? found 0 times\b"
        r"|\bexpected 1 occurrences?(?:\(s\))? but found 0\b"
        r"|\bdoes not match anything in the file\b|\bFailed to find expected lines\b"
        r"|\bpatch does not apply\b",
        A,
        "Read the file again and copy the exact text to replace, including whitespace; do "
        "not retry the same search string.",
        "edit search string not found",
        deterministic=True,
    ),
    # Agent: it imported a module that is not installed or a name the module lacks. Not
    # deterministic: the fix (an install) often happens outside the guarded tools; a guarded
    # `pip install` also makes the failure stale.
    Signature(
        "module_not_found",
        r"\bNo module named\b|\bCannot find module\b|\bcannot import name\b"
        r"|\bERR_MODULE_NOT_FOUND\b|\bCannot find package\b|\bCan't resolve '[^'\n]*'"
        r"|\bunresolved import\b",
        A,
        "Check the module name and the installed packages; install the dependency or import "
        "from the module that defines the name.",
        "module not found",
        exception_types={"ModuleNotFoundError"},
    ),
    # Unknown: JSON was expected and an HTML page came back (an error, login or proxy page):
    # the URL may be the agent's, the outage the infrastructure's.
    Signature(
        "non_json_response",
        r"\bUnexpected token '?<'?(?:,|\s+in JSON\b)"
        r"|\binvalid character '<' looking for beginning\b"
        r"|\"<!DOCTYPE[^\n]{0,80}\bis not valid JSON\b",
        U,
        "The answer was an HTML page instead of JSON (often an error or login page): check the "
        "URL and the service's status instead of repeating the call.",
        "HTML instead of JSON",
    ),
    # Agent: its query names a table or column the database does not have; until a migration
    # creates it, the same query fails identically.
    Signature(
        "unknown_table",
        r"(?i:\bno such (?:table|column)\b)|\bTable '[^'\n]{1,200}' doesn't exist\b"
        r"|\b(?:relation|column) \"[^\"\n]{1,200}\" "
        r"(?:of relation \"[^\"\n]{1,200}\" )?does not exist\b"
        r"|\bUnknown column '[^'\n]{1,200}' in\b|\bUndefined(?:Table|Column)\b"
        r"|\btable_names \{[^}\n]{0,200}\} not found in database\b|\bInvalid object name '",
        A,
        "List the tables and their columns first and use names that exist; the same query "
        "fails again until the schema changes.",
        "unknown table or column",
        deterministic=True,
    ),
    # Agent: the code or JSON it wrote does not parse.
    Signature(
        "syntax_error",
        r"\bSyntaxError\b|\bIndentationError\b|\bTabError\b|\bJSONDecodeError\b"
        r"|\bExpecting (?:value|property name enclosed in double quotes|'[,:]' delimiter): line\b"
        r"|\bUnexpected token\b[^\n]*\bin JSON\b"
        r"|\bUnterminated string starting at\b|\binvalid syntax\b|\bunexpected EOF while parsing\b"
        r"|\bYAMLError\b|\bwhile parsing a (?:block|flow) (?:mapping|sequence)\b"
        r"|\bJSON\.parse: |(?i:\bunexpected end of JSON input\b)|\bis not valid JSON\b"
        r"|\binvalid character '[^'\n]{1,8}' "
        r"(?:looking for beginning|after (?:object key|top-level))"
        r"|(?i:\bsyntax error at or near\b)|\bYou have an error in your SQL syntax\b"
        r"|\bnear \"[^\"\n]{0,100}\": syntax error\b",
        A,
        "Fix the syntax at the reported line (brackets, quotes, indentation, commas) and "
        "check the whole file parses before running it again.",
        "syntax error",
        deterministic=True,
        exception_types={"SyntaxError", "IndentationError", "TabError", "JSONDecodeError"},
    ),
    # Agent: its arguments do not fit the tool's schema.
    Signature(
        "validation_error",
        r"\b\d+ validation errors? for\b|\bField required\b"
        r"|\bmissing \d+ required (?:positional|keyword-only) arguments?\b"
        r"|\bgot an unexpected keyword argument\b|\btakes \d+ positional arguments? but \d+\b"
        r"|(?i:\bmissing required (?:parameter|argument|field|property|input)s?\b)"
        r"|\bis a required property\b|\brequired parameter\b[^\n]{0,60}?\bis missing\b"
        r"|\bInputValidationError\b|\bInvalid arguments?\b|\bInvalid parameters?\b"
        rf"|(?i:\bunprocessable entity\b)|\b{_CODE} 422\b|\bExpected \w+, received \w+\b"
        r"|\bInput should be (?:'|\"|-?\d|<|a valid\b|an? \w+ (?:string|number|integer|instance)\b)"
        r"|\bInvalid enum value\b|\bInvalid option: expected one of\b|\bis not one of \["
        r"|\bString should have at least \d+ characters?\b|\bmissing_required_parameter\b"
        r"|(?i:\b(?:input|query|prompt|text|content|command|path|argument|parameter|value|name"
        r"|message|patch)s? (?:must not|cannot|can't|should not|may not) be (?:empty|blank)\b)"
        r"|(?i:\b(?:request|input|parameter|argument|schema|tool) validation (?:failed|error)\b)"
        r"|(?i:\b400 bad request\b[^\n]{0,40}?\bvalidation (?:failed|error)\b)"
        r"|\bInvalid [\w.\-]+: '[^'\n]{0,100}'\. Valid values:",
        A,
        "Call the tool again with every required parameter present and each value of the "
        "type its schema asks for.",
        "invalid or missing arguments",
        deterministic=True,
        status_codes={422},
        exception_types={"ValidationError", "InputValidationError"},
    ),
    # Agent: its code does not compile (before file_not_found: a missing header is not a target
    # fact about the compiled file; not deterministic: builds rerun after edits).
    Signature(
        "compile_failure",
        r"\berror\[E\d{4}\]|\berror TS\d+\b|\bcompilation terminated\b|\b[Cc]ompilation failed\b"
        r"|\bcould not compile\b|\b\d+:\d+: (?:fatal )?error\b|\bBUILD FAILURE\b"
        r"|\bFound [1-9]\d* errors?\b",
        A,
        "Fix the first reported compiler error at its file and line, then build again.",
        "compilation failed",
    ),
    # Agent: it called a tool that does not exist.
    Signature(
        "tool_not_found",
        r"(?i:\bunknown tool\b)|\bNo such tool\b|\bis not a valid tool\b"
        r"|\b[Tt]ool (?:(?:'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|[\w.\-]+) )?(?:(?:was|is) )?not found\b"
        r"|\b[Tt]ool (?:with name )?(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|`[^`\n]{1,100}`|[\w.\-]+)"
        r" (?:does not exist|is not (?:available|registered)|not found)\b|\bNoSuchToolError\b",
        A,
        "Call only tools from the list you were given, spelled exactly as listed.",
        "unknown tool",
        deterministic=True,
    ),
    # Unknown: a JSON-RPC server (MCP) rejected the request's parameters without saying which.
    # Public reports show it for servers not yet initialised or not running as often as for
    # bad arguments, so it teaches only exact-call bans (specific wordings above come first).
    Signature(
        "invalid_request",
        r"\bInvalid request parameters\b|\bInvalid params\b|\berror -32602\b",
        U,
        "Check the arguments against the tool's schema; if they match it, the server may not "
        "be ready: report that instead of repeating the call.",
        "request rejected as invalid",
    ),
    # Agent: it ran a program that is not installed or not on PATH. Not deterministic: the fix
    # (installing it) often happens outside the guarded tools; a guarded install also makes
    # the failure stale.
    Signature(
        "command_not_found",
        r"\bcommand not found\b|\bis not recognized as an internal or external command\b"
        r"|\bexecutable file not found in \$PATH\b|\bspawn \S+ ENOENT\b"
        rf"|{_EXIT}127\b|\bnon-zero exit status 127\b",
        A,
        "Check the program's name, or install it first; use a command that exists in this "
        "environment.",
        "command not found",
    ),
    # Agent: it read a whole file too large for the tool; the identical read is too large again.
    Signature(
        "file_too_large",
        r"\bMaxFileReadTokenExceededError\b|\bFile content \(\d+ tokens\) exceeds maximum\b"
        r"|(?i:\bfile (?:is )?too large to (?:read|open|display)\b)"
        r"|(?i:\bexceeds (?:the )?maximum allowed (?:tokens|size)\b)",
        A,
        "Read the file in parts with an offset and a limit, or search it for what you need, "
        "instead of reading it whole.",
        "file too large to read whole",
        deterministic=True,
    ),
    # Agent: its selector or element index matches nothing on the page; the page can change
    # (loading, navigation), so one failure is not enough.
    Signature(
        "element_not_found",
        r"\bNoSuchElementException\b|\bUnable to locate element\b|\bNo node found for selector\b"
        r"|\bfailed to find element matching selector\b|\bNo element found for selector\b"
        r"|\bElement (?:with )?index \d+ does not exist\b"
        r"|\bstrict mode violation: [^\n]{0,200}\bresolved to \d+ elements\b",
        A,
        "Read the page again (its current elements and their indices) and target an element "
        "that is there; do not repeat the same selector.",
        "page element not found",
    ),
    # Agent: it named a path that does not exist; other calls needing it fail too.
    Signature(
        "file_not_found",
        r"\bENOENT\b|(?i:\bno such file or directory\b)|\bFileNotFoundError\b"
        r"|\b(?:[Ff]ile|[Dd]irectory|[Pp]ath|[Ff]older)\b(?:[^\n.]|\.(?=\S)){0,80}?"
        r"\b(?:does not exist|doesn't exist|not found|cannot be found|could not be found)\b"
        r"|\bThe system cannot find the (?:file|path) specified\b"
        r"|\bdid not match any file\(s\) known to git\b|\bNoSuchFileException\b",
        A,
        "List the directory to find the right path before using it; do not use this path "
        "again until it has been created.",
        "file not found",
        deterministic=True,
        target_fact=True,
        exception_types={"FileNotFoundError", "NoSuchFileException"},
    ),
    # Unknown: a protected target (agent's choice) or a sandbox/credential set-up (harness's).
    Signature(
        "permission_denied",
        r"\bPermission denied\b|\bEACCES\b|\bEPERM\b|\bOperation not permitted\b"
        r"|\bPermissionError\b|\bAccess (?:is )?denied\b|(?i:\b403 forbidden\b)"
        rf"|\b{_CODE} 403\b|\bPermissionDeniedError\b|\bResource not accessible by\b"
        r"|\bdoes not have permission\b|(?i:\binsufficient permissions?\b)",
        U,
        "Do not retry this target with the same permissions; use a path or resource you are "
        "allowed to access, or report that access is needed.",
        "permission denied",
        deterministic=True,
        status_codes={403},
        exception_types={"PermissionError", "PermissionDeniedError"},
    ),
    # Harness: credentials are configured by whoever runs the agent, not chosen by it.
    Signature(
        "auth_failed",
        r"\bAuthenticationError\b|\bauthentication_error\b|\bIncorrect API key provided\b"
        r"|(?i:\binvalid (?:api[ _-]?key|x-api-key|credentials|authentication)\b)"
        rf"|(?i:\b401 unauthorized\b)|\b{_CODE} 401\b|\bUnauthorized\b|\bBad credentials\b",
        H,
        "Stop and report that the credentials for this service are missing or invalid.",
        "authentication failed",
        status_codes={401},
        exception_types={"AuthenticationError"},
    ),
    # Agent: the target already exists or was changed concurrently; the same call conflicts.
    Signature(
        "conflict",
        r"\bEEXIST\b|\b[Aa]lready exists\b|\bFileExistsError\b|(?i:\b409 conflict\b)"
        rf"|\b{_CODE} 409\b|\b[Mm]erge conflict\b|\bCONFLICT \(content\)"
        r"|\bAutomatic merge failed\b|\bUNIQUE constraint failed\b"
        r"|\bduplicate key value violates unique constraint\b|\bUniqueViolation\b"
        r"|\bDuplicate entry '[^'\n]{0,200}' for key\b|\bER_DUP_ENTRY\b"
        r"|\bis already checked out at\b|\bis already used by worktree at\b",
        A,
        "Use the existing resource, choose a new name, or resolve the conflict before "
        "creating it again.",
        "conflict: already exists",
        deterministic=True,
        status_codes={409},
        exception_types={"FileExistsError", "ConflictError"},
    ),
    # Agent: its insert or update breaks a NOT NULL, foreign key or check constraint (whether
    # the identical statement fails again can depend on other rows, so not deterministic).
    Signature(
        "constraint_violation",
        r"\bNOT NULL constraint failed\b|\bviolates (?:not-null|foreign key|check) constraint\b"
        r"|\bFOREIGN KEY constraint failed\b|\ba foreign key constraint fails\b"
        r"|\bCHECK constraint failed\b|\bColumn '[^'\n]{1,200}' cannot be null\b"
        r"|\bIntegrity constraint violation\b|\bNotNullViolation\b|\bForeignKeyViolation\b",
        A,
        "Read the table's constraints and supply every required value and an existing "
        "referenced row before writing again.",
        "database constraint violated",
    ),
    # Agent: it committed with nothing staged.
    Signature(
        "nothing_to_commit",
        r"\bnothing to commit, working (?:tree|directory) clean\b"
        r"|\bnothing added to commit but untracked files present\b"
        r"|\bno changes added to commit\b",
        A,
        "Run git status: stage the changes you mean to commit, or skip the commit; the same "
        "commit has nothing in it.",
        "nothing to commit",
    ),
    # Agent: it pushed a branch that is behind its remote; pulling first fixes it.
    Signature(
        "git_push_rejected",
        r"\(non-fast-forward\)|\[rejected\][^\n]{0,200}\(fetch first\)"
        r"|\bUpdates were rejected because\b",
        A,
        "Fetch and integrate the remote changes (pull or rebase) before pushing again; do not "
        "force-push over them.",
        "push rejected: the remote has newer commits",
    ),
    # Unknown: the package manager found no such package or version. A typo is the agent's, but
    # registry outages, mirrors and index settings produce the identical words.
    Signature(
        "package_not_found",
        r"\bis not in (?:the npm|this) registry\b|\b404 Not Found - GET https?://\S*registry"
        r"|\bCouldn't find package \"|\bCould not find a version that satisfies the requirement\b"
        r"|\bNo matching distribution found for\b|\bno matching package named\b"
        r"|\bUnable to locate package\b",
        U,
        "Check the package name and version against the registry (search it) before "
        "installing again; if the name is right, check the registry settings.",
        "package not found",
    ),
    # Unknown: an HTTP resource that is not there (a wrong URL or id, or a misconfigured base
    # URL or an outage of the registry behind it).
    Signature(
        "not_found",
        rf"(?i:\b404 not found\b)|\b{_CODE} 404\b|\binvalid status 'Not Found'",
        U,
        "Check the URL or identifier before calling again; the same request finds nothing.",
        "not found (HTTP 404)",
    ),
    # Agent: its query or filter matched nothing.
    Signature(
        "empty_result",
        r"(?i:\bno (?:results?|matches|records|items|rows|documents|entries|data) "
        r"(?:found|returned|were found|matched)\b)|(?i:\bempty (?:response|result|output|body)\b)"
        r"|(?i:\breturned no (?:results?|data|rows)\b)",
        A,
        "Broaden or change the query instead of repeating it; the same query returns nothing.",
        "empty result",
    ),
    # Agent: make was asked for a target the Makefile does not define; until the Makefile
    # changes (a manifest: editing it lifts the ban), the same target is missing again.
    Signature(
        "make_target_missing",
        r"\bNo rule to make target\b",
        A,
        "List the targets the Makefile defines (read the Makefile) and use one of them; this "
        "target does not exist.",
        "make target does not exist",
        deterministic=True,
    ),
    # Unknown: a command exited non-zero (failing tests, a build); rerunning after edits is fine.
    Signature(
        "command_failed",
        rf"{_EXIT}(?:[1-9]\d*|-\d+)\b"
        r"|\b(?:exit_code|exitcode|returncode)[=:] ?(?:[1-9]\d*|-\d+)\b"
        r"|\b[Nn]on-?zero exit (?:status|code)\b|\bCommand failed\b"
        r"|\bmake(?:\[\d+\])?: \*\*\*|\bnpm ERR!|\bELIFECYCLE\b",
        U,
        "Read the command's output to find the first error and fix its cause before running "
        "the same command again.",
        "command failed",
    ),
)
