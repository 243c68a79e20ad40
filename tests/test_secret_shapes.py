"""The secret shapes' gates: redaction that skips the scans a text cannot need redacts the same."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from scarguard import Redactor
from scarguard._secret_shapes import SHAPES, alternation, fold
from scarguard.canonical import storable_text
from scarguard.redact import (
    _ASSIGNMENT,
    _ASSIGNMENT_WORDS,
    _COMMAND_LINE,
    _COMMAND_LINE_WORDS,
    _SCAN_MARGIN,
    DEFAULT_SECRET_PATTERNS,
    REDACTED,
    SECRET_KEY_NAMES,
    _keep_flag,
    _keep_name,
)

# One secret of each default shape, in the order of DEFAULT_SECRET_PATTERNS.
SAMPLES = (
    "sk-proj-" + "A1b2" * 10,
    "ghp_" + "a" * 36,
    "github_pat_" + "A1" * 15,
    "xoxb-1234567890-abcdefghij",
    "AKIAABCDEFGHIJKLMNOP",
    "AIza" + "B" * 35,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0T",
    "Bearer abcdefghijklmnopqrstuvwxyz==",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    "sk_live_" + "a1" * 12,
    "whsec_" + "b2" * 10,
    "hf_" + "c3" * 17,
    "SG." + "d" * 20 + "." + "e" * 20,
    "glpat-" + "f" * 24,
    "npm_" + "g4" * 18,
    "pypi-" + "h" * 60,
    "ya29." + "i" * 30,
    "dop_v1_" + "ab12" * 16,
    "shpat_" + "ab12" * 8,
    "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    "https://hooks.slack.com/workflows/T000/A000/XXXXXXXX",
    "https://discord.com/api/webhooks/1234/abcdEFGH",
    "https://b.s3.amazonaws.com/k?X-Amz-Signature=abc123def",
    "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIDEXAMPLE%2F2013",
    "https://b.s3.amazonaws.com/k?a=1&X-Amz-Security-Token=FQoGZXIvYXdz",
    "https://acct.blob.core.windows.net/c?sv=2020&sig=abc%3Ddef",
    "postgresql://admin:s3cret@db.internal/app",
)
OTHER_SECRETS = (
    "gho_" + "a" * 36,
    "ghu_" + "a" * 36,
    "ghs_" + "a" * 36,
    "ghr_" + "a" * 36,
    "rk_test_" + "a1" * 12,
    "shpss_" + "ab12" * 8,
    "BEARER ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "HTTPS://HOOKS.SLACK.COM/SERVICES/T000/B000/XXXXXXXX",
    "password=hunter2",
    "api_key: 'abc123def'",
    'token="t0k3n"',
    "OPENAI_API_KEY=s3cr3t",
    '{\\"client_secret\\": \\"abc\\"}',
    "Cookie: session=abc123",
    "curl -u admin:hunter2 https://x",
    "mysql -uroot -phunter2 db",
    "MariaDB-dump -phunter2",
)
# Where a regex folds case further than str.lower(): these match only outside ASCII.
FOLDED_OUTSIDE_ASCII = (
    "pa\u017f\u017fword=hunter2",  # long s
    "to\u212aen=hunter2",  # Kelvin sign
    "https://hooks.slack.com/\u017fervices/T000/XXXXXXXX",
    "https://x?\u017fig=abcdef",
    "https://x?x-amz-\u017fignature=abcdef",
    "my\u017fql -phunter2",
    "curl -u admin:pw \u00e9",
    "https://x?s\u0130g=abcdef",  # dotted capital I
    "https://x?s\u0131g=abcdef",  # dotless i
    "credent\u0131al=hunter2 \u00e9",
    "Cook\u0130e: session=abc",
    "BEARER \u212aEY0123456789abcdef \u00fc",
)
FRAGMENTS = (
    *SAMPLES,
    *OTHER_SECRETS,
    *FOLDED_OUTSIDE_ASCII,
    *(texts[0] for _, _, texts in SHAPES),
    *(texts[0].upper() for _, _, texts in SHAPES),
    *SECRET_KEY_NAMES,
    *_ASSIGNMENT_WORDS,
    *_COMMAND_LINE_WORDS,
    *" =:-_.@/?&'\"\n\t#",
    "://",
    '\\"',
    "[REDACTED]",
    "\u017f",
    "\u212a",
    "\u0131",
    "\u0130",
    "\udcff",
    "\x00",
)


def whole_scan(redactor: Redactor, text: str) -> str:
    """Redact as before the gates: every scan over the whole text."""
    text = _ASSIGNMENT.sub(_keep_name, storable_text(text))
    text = _COMMAND_LINE.sub(_keep_flag, text)
    text = alternation(redactor.patterns).sub(REDACTED, text)
    return redactor.extra(text) if redactor.extra is not None else text


def whole_call(redactor: Redactor, text: str) -> str:
    """``Redactor.__call__`` over :func:`whole_scan`."""
    full, head = len(text), redactor.max_text + _SCAN_MARGIN
    text = whole_scan(redactor, text[:head])
    if len(text) > redactor.max_text:
        dropped = len(text) - redactor.max_text + full - min(full, head)
        text = text[: redactor.max_text] + f"… [{dropped} more chars]"
    return text


def whole_target(redactor: Redactor, target: str) -> str:
    """``Redactor.target`` over :func:`whole_scan`."""
    safe = whole_scan(redactor, target[: redactor.max_value + _SCAN_MARGIN])
    if safe == target and len(target) <= redactor.max_value:
        return target
    suffix = f" #{hashlib.sha256(target.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
    room = redactor.max_value - len(suffix)
    return (safe[: room - 1] + "…" if len(safe) > room else safe) + suffix


texts = st.one_of(
    st.text(),
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
        ),
        max_size=12,
    ).map("".join),
)


@pytest.mark.parametrize(
    ("pattern", "sample"), list(zip(DEFAULT_SECRET_PATTERNS, SAMPLES, strict=True))
)
def test_every_shape_is_redacted_as_by_the_whole_scan(pattern: str, sample: str) -> None:
    """A secret of each default shape is redacted in context, exactly as the whole scan does."""
    assert re.search(pattern, sample)
    redactor = Redactor()
    for text in (sample, f"failed: {sample} (401)", f"x={sample}\n{sample.upper()}"):
        assert redactor(text) == whole_call(redactor, text)
    assert REDACTED in redactor(f"failed: {sample} (401)")


@pytest.mark.parametrize("text", [*OTHER_SECRETS, *FOLDED_OUTSIDE_ASCII])
def test_other_shapes_and_case_folds_are_redacted_as_by_the_whole_scan(text: str) -> None:
    """Other spellings, assignments, command-line passwords and non-ASCII case folds too."""
    redactor = Redactor()
    assert redactor(text) == whole_call(redactor, text)
    assert REDACTED in redactor(text)


def test_every_default_shape_has_a_gate_that_holds() -> None:
    """Each default pattern is gated; its character and one of its texts are in its secret."""
    assert Redactor()._gates._always == 0
    for (pattern, key, needles), sample in zip(SHAPES, SAMPLES, strict=True):
        folded = bool(re.compile(pattern).flags & re.IGNORECASE)
        assert len(key) <= 1 and not key.isalpha()
        assert key in sample
        if folded:
            assert all(needle == needle.lower() for needle in needles)
        assert any(needle in (sample.lower() if folded else sample) for needle in needles)


def test_the_assignment_and_command_line_words_cover_every_name() -> None:
    """Every secret name holds an assignment word; each command-line program a word."""
    for name in SECRET_KEY_NAMES:
        assert any(word in name for word in _ASSIGNMENT_WORDS), name
    for program in re.findall(r"curl|mysql\w*|mariadb[\w-]*", _COMMAND_LINE.pattern):
        assert any(word in program for word in _COMMAND_LINE_WORDS), program


@settings(max_examples=1500)
@given(texts)
@example("ghp_" + "a" * 36 + " and password=x")
@example("Bearer " + "x" * 12 + " sk-" + "y" * 16)
def test_gated_redaction_is_the_whole_scan(text: str) -> None:
    """For any text, the gated redaction gives what the whole scan gives."""
    redactor = Redactor(max_text=10_000)
    assert redactor._redact(text) == whole_scan(redactor, text)


@given(texts)
def test_user_patterns_are_always_scanned_for(text: str) -> None:
    """A user's pattern has no gate: it is scanned for, with the gated defaults, in order."""
    redactor = Redactor(
        patterns=(*DEFAULT_SECRET_PATTERNS, r"acme-\d+", re.compile("secret", re.I)),
        extra=lambda t: t.replace("acme", "[CUSTOMER]"),
    )
    for whole in (text, f"{text} acme-42 SeCrEt"):
        assert redactor._redact(whole) == whole_scan(redactor, whole)


@pytest.mark.parametrize("sample", [SAMPLES[0], SAMPLES[7], SAMPLES[26], "password=hunter2"])
@pytest.mark.parametrize("shift", [-40, -20, -1, 0, 1, 20])
def test_secrets_at_the_size_limits_are_redacted_as_by_the_whole_scan(
    sample: str, shift: int
) -> None:
    """A secret ending at, just inside or just past the scanned head or the kept text."""
    redactor = Redactor(max_text=200, max_value=100)
    for limit in (200, 200 + _SCAN_MARGIN, 100):
        pad = max(limit + shift - len(sample), 0)
        text = "w" * pad + " " + sample + " tail " * 3
        assert redactor(text) == whole_call(redactor, text)
        value = "w" * max(100 + shift - len(sample), 0) + " " + sample
        expected = whole_call(redactor, value)
        if len(expected) > 100:
            expected = expected[:100] + f"… [{len(expected) - 100} more chars]"
        assert redactor.args({"v": value}) == {"v": expected}
        assert redactor.target(value) == whole_target(redactor, value)


def test_fold_knows_every_character_a_regex_matches_to_ascii() -> None:
    """The characters outside ASCII a case-insensitive regex takes for a gate's characters."""
    others = "".join(chr(c) for c in range(128, 0x110000) if not 0xD800 <= c <= 0xDFFF)
    alike = re.findall("(?i)[a-z]", others)
    assert {c: fold(c) for c in alike} == {
        "\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"
    }  # fmt: skip
    needles = {ch for _, key, texts in SHAPES for ch in key + "".join(texts) if not ch.isalpha()}
    needles |= {ch for word in (*_ASSIGNMENT_WORDS, *_COMMAND_LINE_WORDS) for ch in word}
    for ch in needles - set("abcdefghijklmnopqrstuvwxyz"):
        assert re.findall("(?i)" + re.escape(ch), others) == [], ch


@given(texts)
def test_what_a_case_insensitive_gate_matches_is_in_the_folded_text(text: str) -> None:
    """A folded pattern's text matched anywhere (ignoring case) is in ``fold(text)``."""
    needles = [n for p, _, ns in SHAPES if re.compile(p).flags & re.I for n in ns]
    for needle in (*needles, *_ASSIGNMENT_WORDS, *_COMMAND_LINE_WORDS):
        if re.search("(?i)" + re.escape(needle), text):
            assert needle in fold(text)

