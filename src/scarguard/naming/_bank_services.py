"""The default bank's signatures of services: providers, HTTP, the network, tool protocols.

Quotas and rate limits, server errors, timeouts and dropped connections, credentials, pages
that are not there, and calls a tool's schema or protocol rejects. Data of
:mod:`scarguard.naming.bank`, which orders every signature of the default bank (first match
wins); each comment says whose choice would have to change for the call to succeed.
"""

from __future__ import annotations

from scarguard.model import Blame
from scarguard.naming._signature import Signature

__all__ = [
    "AUTH_FAILED",
    "CODE",
    "CONNECTION_ERROR",
    "CONNECTION_REFUSED",
    "INVALID_REQUEST",
    "NON_JSON_RESPONSE",
    "NOT_FOUND",
    "QUOTA_EXCEEDED",
    "RATE_LIMITED",
    "SERVER_ERROR",
    "TOOL_NOT_FOUND",
    "TOOL_TIMEOUT",
    "VALIDATION_ERROR",
]

CODE = r"(?:[Ee]rror code:?|HTTP(?:/\d(?:\.\d)?)?|HTTP [Ee]rror|[Ss]tatus(?: code)?:?)"
"""Words that introduce a status code inside error text (``Error code: 429``, ``HTTP 503``)."""

A, H, U = Blame.AGENT, Blame.HARNESS, Blame.UNKNOWN

# Harness: the account is out of credit or quota; backing off does not help.
QUOTA_EXCEEDED = Signature(
    "quota_exceeded",
    r"\binsufficient_quota\b|\bexceeded your current quota\b"
    r"|\bcredit balance is too low\b|\bbilling hard limit\b",
    H,
    "Stop calling this API and report that the account's quota or credit is exhausted.",
    "API quota or credit exhausted",
)

# Harness: the provider throttles; the same call succeeds after waiting.
RATE_LIMITED = Signature(
    "rate_limited",
    rf"\b{CODE} 429\b|\b429 Too Many Requests\b|(?i:\btoo many requests\b)"
    r"|(?i:\brate[ _-]?limit(?:ed| exceeded| reached|_exceeded|_error)\b)"
    r"|\bRateLimitError\b|\bRESOURCE_EXHAUSTED\b|\bThrottlingException\b"
    r"|\bSlowDown\b|\bRequest was throttled\b",
    H,
    "Wait before calling again and send fewer requests at once; the call itself is fine.",
    "rate limited",
    retryable=True,
    status_codes={429},
    exception_types={"RateLimitError", "ThrottlingException"},
)

# Harness: the server failed or is overloaded; the same call may succeed later.
SERVER_ERROR = Signature(
    "server_error",
    rf"\b{CODE} (?:500|502|503|504|529)\b|(?i:\binternal server error\b)"
    r"|(?i:\bbad gateway\b)|(?i:\bservice (?:temporarily )?unavailable\b)"
    r"|(?i:\bgateway time-?out\b)|\boverloaded_error\b|\bserver is overloaded\b"
    r"|\bInternalServerError\b|\bupstream connect error\b",
    H,
    "Wait and retry later; the server failed, not the request.",
    "server error",
    retryable=True,
    status_codes={500, 502, 503, 504, 529},
    exception_types={"InternalServerError", "ServiceUnavailableError"},
)

# Harness: the tool or network did not answer in time.
TOOL_TIMEOUT = Signature(
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
)

# Harness: nothing listens at the address (a service down or still starting).
CONNECTION_REFUSED = Signature(
    "connection_refused",
    r"\bECONNREFUSED\b|\b[Cc]onnection refused\b|\bConnectionRefusedError\b"
    r"|\bERR_CONNECTION_REFUSED\b|\bFailed to connect to \S+ port \d+\b"
    r"|\bCouldn't connect to server\b|\bCannot connect to the Docker daemon\b"
    r"|\bIs the docker daemon running\?",
    H,
    "Check that the service is running and listening on the expected host and port, "
    "then retry.",
    "connection refused",
    retryable=True,
    exception_types={"ConnectionRefusedError"},
)

# Harness: the network dropped, reset or could not resolve the connection.
CONNECTION_ERROR = Signature(
    "connection_error",
    r"\bECONNRESET\b|\b[Cc]onnection reset by peer\b|\bConnectionResetError\b"
    r"|\bEHOSTUNREACH\b|\bENETUNREACH\b|\bNetwork is unreachable\b|\bNo route to host\b"
    r"|\bName or service not known\b|\bTemporary failure in name resolution\b"
    r"|\bCould not resolve (?:host|proxy)\b"
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
)

# Unknown: JSON was expected and an HTML page came back (an error, login or proxy page):
# the URL may be the agent's, the outage the infrastructure's.
NON_JSON_RESPONSE = Signature(
    "non_json_response",
    r"\bUnexpected token '?<'?(?:,|\s+in JSON\b)"
    r"|\binvalid character '<' looking for beginning\b"
    r"|\"<!DOCTYPE[^\n]{0,80}\bis not valid JSON\b",
    U,
    "The answer was an HTML page instead of JSON (often an error or login page): check the "
    "URL and the service's status instead of repeating the call.",
    "HTML instead of JSON",
)

# Agent: its arguments do not fit the tool's schema.
VALIDATION_ERROR = Signature(
    "validation_error",
    r"\b\d+ validation errors? for\b|\bField required\b"
    r"|\bmissing \d+ required (?:positional|keyword-only) arguments?\b"
    r"|\bgot an unexpected keyword argument\b|\btakes \d+ positional arguments? but \d+\b"
    r"|(?i:\bmissing required (?:parameter|argument|field|property|input)s?\b)"
    r"|\bis a required property\b|\brequired parameter\b[^\n]{0,60}?\bis missing\b"
    r"|\bInputValidationError\b|\bInvalid arguments?\b|\bInvalid parameters?\b"
    rf"|(?i:\bunprocessable entity\b)|\b{CODE} 422\b|\bExpected \w+, received \w+\b"
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
)

# Agent: it called a tool that does not exist.
TOOL_NOT_FOUND = Signature(
    "tool_not_found",
    r"(?i:\bunknown tool\b)|\bNo such tool\b|\bis not a valid tool\b"
    r"|\b[Tt]ool (?:(?:'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|[\w.\-]+) )?(?:(?:was|is) )?not found\b"
    r"|\b[Tt]ool (?:with name )?(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|`[^`\n]{1,100}`|[\w.\-]+)"
    r" (?:does not exist|is not (?:available|registered)|not found)\b|\bNoSuchToolError\b",
    A,
    "Call only tools from the list you were given, spelled exactly as listed.",
    "unknown tool",
    deterministic=True,
)

# Unknown: a JSON-RPC server (MCP) rejected the request's parameters without saying which.
# Public reports show it for servers not yet initialised or not running as often as for
# bad arguments, so it teaches only exact-call bans (specific wordings above come first).
INVALID_REQUEST = Signature(
    "invalid_request",
    r"\bInvalid request parameters\b|\bInvalid params\b|\berror -32602\b",
    U,
    "Check the arguments against the tool's schema; if they match it, the server may not "
    "be ready: report that instead of repeating the call.",
    "request rejected as invalid",
)

# Harness: credentials are configured by whoever runs the agent, not chosen by it.
AUTH_FAILED = Signature(
    "auth_failed",
    r"\bAuthenticationError\b|\bauthentication_error\b|\bIncorrect API key provided\b"
    r"|(?i:\binvalid (?:api[ _-]?key|x-api-key|credentials|authentication)\b)"
    rf"|(?i:\b401 unauthorized\b)|\b{CODE} 401\b|\bUnauthorized\b|\bBad credentials\b",
    H,
    "Stop and report that the credentials for this service are missing or invalid.",
    "authentication failed",
    status_codes={401},
    exception_types={"AuthenticationError"},
)

# Unknown: an HTTP resource that is not there (a wrong URL or id, or a misconfigured base
# URL or an outage of the registry behind it).
NOT_FOUND = Signature(
    "not_found",
    rf"(?i:\b404 not found\b)|\b{CODE} 404\b|\binvalid status 'Not Found'",
    U,
    "Check the URL or identifier before calling again; the same request finds nothing.",
    "not found (HTTP 404)",
)
