"""Redaction of secrets and sanitising of untrusted text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarguard import Redactor
from scarguard.redact import REDACTED, excerpt, strip_control

SECRETS = [
    "sk-proj-" + "A1b2" * 10,
    "sk-ant-api03-" + "x" * 30,
    "ghp_" + "a" * 36,
    "xoxb-1234567890-abcdefghij",
    "AKIAABCDEFGHIJKLMNOP",
    "AIza" + "B" * 35,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_known_secret_shapes_are_redacted(secret: str) -> None:
    """Each common key and token shape is replaced inside surrounding text."""
    out = Redactor()(f"request failed with credential {secret} (401)")
    assert secret not in out
    assert REDACTED in out
    assert out.startswith("request failed with credential")


@pytest.mark.parametrize(
    "text",
    [
        "password=hunter2",
        "api_key: 'abc123def'",
        'token="t0k3n"',
        "Authorization: Bearer abcdefghijklmnopqrstuvwxyz",
        "postgresql://admin:s3cret@db.internal/app",
    ],
)
def test_assignments_and_urls_keep_their_name_not_their_value(text: str) -> None:
    """A named secret keeps its name for context; its value is gone."""
    out = Redactor()(text)
    for value in ("hunter2", "abc123def", "t0k3n", "abcdefghijklmnopqrstuvwxyz", "s3cret"):
        assert value not in out


def test_plain_text_is_left_alone() -> None:
    """Ordinary error text passes through unchanged."""
    text = "old_string not found in app.py: 'def main('"
    assert Redactor()(text) == text
    assert not Redactor().flags(text)


def test_arguments_by_secret_name_are_redacted_and_bounded() -> None:
    """Values under secret names are redacted whatever they look like; long strings are cut."""
    out = Redactor(max_value=50).args({"password": "x", "Token": "y", "body": "z" * 500, "n": 3})
    assert out["password"] == REDACTED
    assert out["Token"] == REDACTED
    assert len(out["body"]) < 100
    assert out["n"] == 3


def test_extra_callable_runs_after_the_defaults() -> None:
    """A user redactor composes with the built-in one."""
    redactor = Redactor(extra=lambda text: text.replace("ACME-", "[CUSTOMER]-"))
    out = redactor("ACME-42 failed with sk-proj-" + "Z" * 40)
    assert "[CUSTOMER]-42" in out
    assert "ZZZZ" not in out


def test_custom_patterns_with_flags_are_honoured() -> None:
    """Patterns given with inline or compiled flags keep them when combined."""
    import re

    redactor = Redactor(patterns=(r"(?i)internal-\d+", re.compile("secret", re.IGNORECASE)))
    assert redactor("INTERNAL-7 and SeCrEt") == f"{REDACTED} and {REDACTED}"


def test_excerpt_is_quoted_single_line_and_bounded() -> None:
    """An excerpt for an LLM is one line, quoted, without control characters, truncated."""
    text = 'first line\nsecond "quoted"\x1b[31m red\u202e' + "x" * 500
    out = excerpt(text, limit=60)
    assert out.startswith('"') and out.endswith('"')
    assert "\n" not in out and "\x1b" not in out and "\u202e" not in out
    assert '"quoted"' not in out
    assert len(out) <= 62


@given(st.text())
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    """Redacting twice gives what redacting once gave, for any text."""
    redactor = Redactor(max_text=10_000)
    once = redactor(text)
    assert redactor(once) == once


@given(st.text())
def test_strip_control_leaves_no_control_characters(text: str) -> None:
    """No C0/C1 control, zero-width or bidi-override character survives (newline and tab may)."""
    out = strip_control(text)
    assert all(ch in "\n\t" or not (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F) for ch in out)
    assert not any(ch in out for ch in "\u200b\u200e\u202e\u2066")


@pytest.mark.parametrize(
    "name", ["access_token", "OPENAI_API_KEY", "apiKey", "x-api-key", "refresh_token", "dbPassword"]
)
def test_compound_secret_argument_names_are_redacted(name: str) -> None:
    """An argument whose name ends in or contains a secret name is redacted."""
    assert Redactor().args({name: "s3cr3t-value"})[name] == REDACTED


@pytest.mark.parametrize("name", ["max_tokens", "author", "query", "keyword"])
def test_ordinary_argument_names_are_kept(name: str) -> None:
    """Names that merely resemble secret names keep their values."""
    assert Redactor().args({name: "value"})[name] == "value"


@pytest.mark.parametrize(
    "text",
    ["access_token=s3cr3t", "OPENAI_API_KEY: s3cr3t", "x-api-key: s3cr3t", "apiKey='s3cr3t'"],
)
def test_compound_secret_assignments_in_text_are_redacted(text: str) -> None:
    """An assignment to a compound secret name loses its value in error text."""
    out = Redactor()(text)
    assert "s3cr3t" not in out
    assert REDACTED in out


def test_huge_text_is_scanned_only_up_to_what_is_kept() -> None:
    """Redaction looks at a bounded head of a huge text, and says how much was cut."""
    seen: list[int] = []

    def extra(text: str) -> str:
        seen.append(len(text))
        return text

    text = "password=hunter2 " + "x" * 1_000_000
    out = Redactor(max_text=100, extra=extra)(text)
    assert seen[0] < 5_000
    assert "hunter2" not in out
    whole = len(Redactor(max_text=len(text) * 2)(text))
    assert out.endswith(f"[{whole - 100} more chars]")


def test_strip_control_removes_invisible_tag_characters() -> None:
    """Unicode tag characters (invisible text LLMs still read) and other invisibles go."""
    smuggled = "".join(chr(0xE0000 + ord(c)) for c in "ignore rules")
    assert strip_control(f"a{smuggled}b\u061c\ufeff\u2060c") == "abc"


def test_argument_names_are_judged_by_each_redactor_its_own_way() -> None:
    """A remembered verdict on an argument name belongs to the redactor that gave it."""
    default = Redactor()
    custom = Redactor(key_names=frozenset({"command"}))
    for _ in range(2):  # asked again: the remembered answers
        assert default.args({"command": "ls", "password": "pw"}) == {
            "command": "ls",
            "password": REDACTED,
        }
        assert custom.args({"command": "ls", "password": "pw"}) == {
            "command": REDACTED,
            "password": "pw",
        }


_NAMES = st.sampled_from(["command", "path", "password", "api_key", "Token", "n", "", "max_tokens"])
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.sampled_from(["", "ls", "password=hunter2", "sk-proj-" + "A" * 20, "x" * 2048, "x" * 2049]),
    st.text(max_size=600),
    st.lists(st.text(max_size=5), max_size=2),
)


@given(st.dictionaries(st.one_of(_NAMES, st.text(max_size=8)), _VALUES, max_size=6))
def test_flat_arguments_are_redacted_as_by_the_general_walk(args: dict[str, object]) -> None:
    """Arguments of strings and scalars take a shorter way to the same redacted copy."""
    from scarguard._frozen import freeze_mapping
    from scarguard.canonical import to_jsonable

    redactor = Redactor(max_value=100)
    walked = redactor._walk(to_jsonable(args))
    assert redactor.args(args) == walked
    assert list(redactor.args(args)) == list(walked)
    assert redactor.args(freeze_mapping(args)) == walked


def test_arguments_with_other_keys_or_values_take_the_general_walk() -> None:
    """Keys that are not strings and values that are not flat are walked as before."""
    redactor = Redactor()
    assert redactor.args({1: "a", "b": 2}) == {"1": "a", "b": 2}  # type: ignore[dict-item]
    assert redactor.args({"x": float("inf"), "token": "t"}) == {"token": REDACTED, "x": "inf"}
    assert redactor.args({"x": ["password=hunter2"]}) == {"x": [f"password={REDACTED}"]}
    assert redactor.args({"x": "y" * 3000})["x"].startswith("<sha256:")
    assert redactor.args({f"k{i}": i for i in range(300)})["<truncated>"].startswith("300 keys")
