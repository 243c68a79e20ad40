"""The signature bank against real error wordings from cited public sources."""

from __future__ import annotations

import re

import pytest

from helpers.cited_errors import CITED, SOURCES, Cited
from scarguard import FailureMemory
from scarguard.model import Blame
from scarguard.naming.signatures import DEFAULT_BANK, is_fallback
from scarguard.testing import FakeClock

# Who is to blame for each kind the cited corpus names, and whether one failure of the
# identical call is enough (deterministic agent kinds).
EXPECTED: dict[str, tuple[Blame, bool]] = {
    "invalid_request": (Blame.UNKNOWN, False),
    "tool_not_found": (Blame.AGENT, True),
    "validation_error": (Blame.AGENT, True),
    "patch_invalid": (Blame.AGENT, True),
    "edit_failed": (Blame.AGENT, True),
    "file_not_found": (Blame.AGENT, True),
    "unknown_table": (Blame.AGENT, True),
    "syntax_error": (Blame.AGENT, True),
    "conflict": (Blame.AGENT, True),
    "constraint_violation": (Blame.AGENT, False),
    "non_json_response": (Blame.UNKNOWN, False),
    "not_found": (Blame.UNKNOWN, False),
    "permission_denied": (Blame.UNKNOWN, True),
    "element_not_found": (Blame.AGENT, False),
    "tool_timeout": (Blame.HARNESS, False),
    "nothing_to_commit": (Blame.AGENT, False),
    "git_push_rejected": (Blame.AGENT, False),
    "package_not_found": (Blame.UNKNOWN, False),
}


def _id(case: Cited) -> str:
    return f"{case.kind}:{case.source.rsplit('github.com/', 1)[-1]}"


@pytest.mark.parametrize("case", CITED, ids=_id)
def test_cited_wording_is_named_as_listed(case: Cited) -> None:
    """Each real wording from a public source is named by the kind the corpus lists."""
    assert DEFAULT_BANK.match(case.text).name == case.kind


@pytest.mark.parametrize("case", CITED, ids=_id)
def test_cited_wording_is_blamed_as_its_kind_says(case: Cited) -> None:
    """The blame and determinism of each cited wording are the ones its kind stands for."""
    sig = DEFAULT_BANK.match(case.text)
    blame, deterministic = EXPECTED[case.kind]
    assert (sig.blame, sig.deterministic) == (blame, deterministic)


def test_corpus_cites_at_least_thirty_distinct_public_sources() -> None:
    """The corpus quotes at least 30 distinct public pages, each a GitHub URL."""
    assert len(SOURCES) >= 30
    assert all(re.fullmatch(r"https://github\.com/[\w.\-]+/[\w.\-]+/\S+", s) for s in SOURCES)


def test_every_listed_kind_is_in_the_bank_and_expected() -> None:
    """Every kind the corpus names exists in the default bank and has an expected blame."""
    kinds = {c.kind for c in CITED}
    assert kinds == set(EXPECTED)
    assert all(kind in DEFAULT_BANK for kind in kinds)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("409 conflict", "conflict"),
        ("HTTP 409 CONFLICT", "conflict"),
        ("error: no such file or directory: a.py", "file_not_found"),
        ("NO SUCH FILE OR DIRECTORY", "file_not_found"),
        ("422 unprocessable entity", "validation_error"),
        ("403 FORBIDDEN", "permission_denied"),
        ("401 unauthorized", "auth_failed"),
        ("unexpected end of JSON input", "syntax_error"),
        ("ERROR: 404 not found", "not_found"),
        ("Invalid Patch: hunk header missing", "patch_invalid"),
        ("No Such Table: users", "unknown_table"),
    ],
)
def test_wordings_that_vary_in_case_match_in_any_case(text: str, expected: str) -> None:
    """Status phrases and messages that real tools spell in either case match both ways."""
    assert DEFAULT_BANK.match(text).name == expected


@pytest.mark.parametrize(
    ("status", "text", "expected", "blame"),
    [
        (400, "Bad Request", None, Blame.UNKNOWN),
        (400, "400 Bad Request: request validation failed", "validation_error", Blame.AGENT),
        (401, "", "auth_failed", Blame.HARNESS),
        (403, "", "permission_denied", Blame.UNKNOWN),
        (404, "404 Not Found", "not_found", Blame.UNKNOWN),
        (409, "", "conflict", Blame.AGENT),
        (422, "", "validation_error", Blame.AGENT),
        (None, "400 Bad Request", None, Blame.UNKNOWN),
        (None, "HTTP 404", "not_found", Blame.UNKNOWN),
        (None, "status code 409", "conflict", Blame.AGENT),
        (None, "Error code: 422", "validation_error", Blame.AGENT),
    ],
)
def test_http_statuses_with_and_without_code_get_their_kind_and_blame(
    status: int | None, text: str, expected: str | None, blame: Blame
) -> None:
    """HTTP 400/401/403/404/409/422, as a code or in words, get the kind and blame they mean."""
    memory = FailureMemory(":memory:")
    found = memory.classify(text, status_code=status)
    if expected is None:
        assert is_fallback(found.signature.name)
    else:
        assert found.signature.name == expected
    assert found.blame is blame


def _tool_for(kind: str) -> tuple[str, dict[str, str]]:
    return "call_tool", {"name": "lookup", "kind": kind}


@pytest.mark.parametrize("case", CITED, ids=_id)
def test_identical_repeat_is_refused_after_as_many_failures_as_its_blame_needs(
    case: Cited,
) -> None:
    """Deterministic agent kinds refuse the identical call after one failure, agent kinds after
    two, unknown kinds after two, and harness kinds never."""
    clock = FakeClock()
    memory = FailureMemory(":memory:", clock=clock)
    tool, args = _tool_for(case.kind)
    blame, deterministic = EXPECTED[case.kind]
    memory.record(tool, args, error=case.text)
    assert memory.check(tool, args).allowed is not (blame is Blame.AGENT and deterministic)
    clock.advance(60)  # one agent turn later: a new decision, not a retry inside one call
    memory.record(tool, args, error=case.text)
    assert memory.check(tool, args).allowed is (blame is Blame.HARNESS)


def test_harness_kinds_of_the_corpus_teach_nothing() -> None:
    """Infrastructure wordings (browser navigation timeouts) never become constraints."""
    clock = FakeClock()
    memory = FailureMemory(":memory:", clock=clock)
    for case in (c for c in CITED if EXPECTED[c.kind][0] is Blame.HARNESS):
        for _ in range(4):
            clock.advance(60)
            memory.record("browser_goto", {"url": "https://example.com"}, error=case.text)
    assert memory.constraints() == []


def test_call_shape_errors_are_deterministic_for_identical_input() -> None:
    """Missing parameters, empty input, an unparseable patch and an unknown enum value are
    refused at the first identical repeat, and a different call stays allowed."""
    memory = FailureMemory(":memory:")
    shapes = {
        "missing": "missing required parameters for tool 'update_plan': task_id, status",
        "empty": "String should have at least 1 character [type=string_too_short]",
        "patch": "Invalid patch: The first line of the patch must be '*** Begin Patch'",
        "enum": "Invalid enum value. Expected 'a' | 'b' | 'c', received 'z'",
    }
    for shape, error in shapes.items():
        memory.record("tool", {"shape": shape}, error=error)
        assert not memory.check("tool", {"shape": shape}).allowed, shape
        assert memory.check("tool", {"shape": shape, "fixed": True}).allowed, shape


def test_specific_wordings_win_over_the_general_kinds_they_contain() -> None:
    """Bank order puts the specific reading first where a wording holds two kinds."""
    cases = {
        "npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd": "package_not_found",
        "MCP error -32602: Tool search not found": "tool_not_found",
        "MCP error -32602: Invalid params: missing required parameter 'q'": "validation_error",
        "SyntaxError: Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON":
            "non_json_response",
        "SyntaxError: Unexpected token 'a', \"abc\" is not valid JSON": "syntax_error",
        "SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'x' for key "
        "'PRIMARY'": "conflict",
        "nothing to commit, working tree clean\nexit code 1": "nothing_to_commit",
        "apply_patch verification failed: invalid patch: hunk without header": "patch_invalid",
    }
    for text, expected in cases.items():
        assert DEFAULT_BANK.match(text).name == expected, text


_NESTED = re.compile(r"\((?:[^()\\]|\\.)*(?<!\\)[*+](?:[^()\\]|\\.)*\)(?:[*+]|\{\d+,\})")
"""A group holding an unbounded quantifier that is itself repeated without bound."""


def test_default_patterns_have_no_nested_unbounded_repetition() -> None:
    """No default pattern repeats an unboundedly repeating group, so matching stays linear."""
    assert _NESTED.search(r"(?:a+)+") and _NESTED.search(r"(\w*x)*")
    assert not _NESTED.search(r"(?:[^\n.]|\.(?=\S)){0,80}?") and not _NESTED.search(r"(ab)+")
    offenders = [s.name for s in DEFAULT_BANK if s.pattern and _NESTED.search(s.pattern.pattern)]
    assert offenders == []


@pytest.mark.parametrize("case", CITED, ids=_id)
def test_cited_wording_is_found_inside_a_long_output(case: Cited) -> None:
    """A cited wording at the end of a long tool output is still named (head and tail scan)."""
    noise = "building module 42 of 900 ...\n" * 400
    assert DEFAULT_BANK.match(noise + case.text).name == case.kind
