"""The default secret shapes, and which patterns a text may match, told by substring tests.

Redaction scans every stored argument and error text for every secret shape. One regex
alternation of them all tries each pattern at each character, which costs far more than a
substring search: most texts (commands, paths, error messages) hold no secret at all. So each
known pattern comes with a gate, what any match of it must contain: a character (``-`` for
``sk-...``) and texts one of which it holds (``sk-``). A text lacking them cannot match the
pattern anywhere, so only the patterns whose gates pass are scanned for, in one alternation of
them in their order: at every position the same pattern matches as in the alternation of all
of them (the others match nowhere), so the result is the same text.

A case-insensitive pattern's texts are looked for in the text folded (:func:`fold`): in lower
case, after the four characters outside ASCII that a case-insensitive regex matches to an
ASCII letter are written as that letter (the long s, U+017F, matches ``s``; the Kelvin sign,
U+212A, ``k``; the dotted and dotless I, U+0130 and U+0131, ``i``), so every character of a
match of the pattern's text folds to that text's character. Gate characters are never letters
(no folding applies to them). A pattern without a known gate (one of the user's) is always
scanned for.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = ["SHAPES", "PatternGates", "alternation", "fold"]

Gate = tuple[str, tuple[str, ...]]
"""A character every match holds (``""``: none known) and texts one of which it holds."""

SHAPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (pattern, a character every match holds or "", texts one of which every match holds)
    (r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}", "-", ("sk-",)),  # OpenAI / Anthropic style keys
    (r"\bgh[pousr]_[A-Za-z0-9]{20,}", "_", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),  # GitHub
    (r"\bgithub_pat_[A-Za-z0-9_]{20,}", "_", ("github_pat_",)),
    (r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", "-", ("xox",)),  # Slack tokens
    (r"\bAKIA[0-9A-Z]{16}\b", "", ("AKIA",)),  # AWS access key ids
    (r"\bAIza[0-9A-Za-z_\-]{30,}", "", ("AIza",)),  # Google API keys
    (r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ".", ("eyJ",)),  # JWTs
    (r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{12,}=*", "", ("bearer",)),
    (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
        "-",
        ("-----BEGIN ",),
    ),
    (r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", "_", ("k_live_", "k_test_")),  # Stripe keys
    (r"\bwhsec_[A-Za-z0-9]{16,}", "_", ("whsec_",)),  # Stripe webhook secrets
    (r"\bhf_[A-Za-z0-9]{30,}", "_", ("hf_",)),  # Hugging Face tokens
    (r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", ".", ("SG.",)),  # SendGrid keys
    (r"\bglpat-[A-Za-z0-9_\-]{20,}", "-", ("glpat-",)),  # GitLab personal access tokens
    (r"\bnpm_[A-Za-z0-9]{30,}", "_", ("npm_",)),  # npm tokens
    (r"\bpypi-[A-Za-z0-9_\-]{50,}", "-", ("pypi-",)),  # PyPI upload tokens
    (r"\bya29\.[A-Za-z0-9_\-]{20,}", ".", ("ya29.",)),  # Google OAuth access tokens
    (r"\bdop_v1_[a-f0-9]{40,}", "_", ("dop_v1_",)),  # DigitalOcean tokens
    (r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{20,}", "_", ("shp",)),  # Shopify tokens
    (r"(?i)(?<=hooks\.slack\.com/services/)[A-Za-z0-9/_\-]+", ".", ("hooks.slack.com/",)),
    (r"(?i)(?<=hooks\.slack\.com/workflows/)[A-Za-z0-9/_\-]+", ".", ("hooks.slack.com/",)),
    (r"(?i)(?<=discord\.com/api/webhooks/)[A-Za-z0-9/_\-]+", ".", ("discord.com/",)),  # Discord
    (r"(?i)(?<=x-amz-signature=)[^&\s\"'#]+", "=", ("x-amz-",)),  # S3 presigned URLs
    (r"(?i)(?<=x-amz-credential=)[^&\s\"'#]+", "=", ("x-amz-",)),
    (r"(?i)(?<=x-amz-security-token=)[^&\s\"'#]+", "=", ("x-amz-",)),
    (r"(?i)(?<=[?&]sig=)[^&\s\"'#]+", "=", ("sig=",)),  # Azure SAS signatures
    (r"(?<=://)[^\s:/@\"'<>]*:[^\s@/\"'<>]+(?=@)", "@", ("://",)),  # URL userinfo, any scheme
)
"""The default secret shapes (``redact.DEFAULT_SECRET_PATTERNS``), each with its gate."""
_GATES: Mapping[tuple[str, int], Gate] = {
    (compiled.pattern, compiled.flags): (key, texts)
    for compiled, key, texts in ((re.compile(p), k, t) for p, k, t in SHAPES)
}
"""The gates of the default shapes, by pattern source and flags (as compiled)."""

_TO_ASCII: Final = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
"""The characters outside ASCII a case-insensitive regex matches to an ASCII letter."""
_NOT_ASCII_FOLDS: Final = tuple(map(chr, _TO_ASCII))


def fold(text: str) -> str:
    """Return ``text`` in lower case, its look-alikes of ASCII letters written as the letters.

    Where a case-insensitive regex matches an ASCII text in ``text``, that text is in
    ``fold(text)``: each character of the match folds to the one it matched.
    """
    if not text.isascii():
        for char in _NOT_ASCII_FOLDS:
            if char in text:
                text = text.translate(_TO_ASCII)
                break
    return text.lower()


_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")
_SCANS = 256
"""Alternations of some of the patterns remembered per redactor (all forgotten when full)."""


@functools.lru_cache(maxsize=64)
def alternation(patterns: tuple[re.Pattern[str], ...]) -> re.Pattern[str]:
    """Return one regex matching what any of ``patterns`` matches (leading flags scoped).

    Cached: every redactor built with the same patterns shares one compiled alternation.
    """
    if not patterns:
        return re.compile(r"(?!)")
    parts = []
    for pattern in patterns:
        source = pattern.pattern
        flags = _GLOBAL_FLAGS.match(source)
        if flags:
            source = f"(?{flags.group(1)}:{source[flags.end() :]})"
        elif pattern.flags & re.IGNORECASE:
            source = f"(?i:{source})"
        parts.append(f"(?:{source})")
    return re.compile("|".join(parts))


class PatternGates:
    """The gates of a redactor's patterns, and the alternations of those a text may match.

    Args:
        patterns: The redactor's patterns, in order (a default shape's has its gate, any
            other none).
    """

    __slots__ = ("_always", "_groups", "_patterns", "_scans")

    def __init__(self, patterns: Sequence[re.Pattern[str]]) -> None:
        self._patterns = tuple(patterns)
        self._always = 0
        groups: dict[str, tuple[list[tuple[str, int]], list[tuple[str, int]]]] = {}
        for index, pattern in enumerate(self._patterns):
            bit = 1 << index
            gate = _GATES.get((pattern.pattern, pattern.flags))
            if gate is None:
                self._always |= bit
                continue
            key, texts = gate
            exact, folded = groups.setdefault(key, ([], []))
            side = folded if pattern.flags & re.IGNORECASE else exact
            side.extend((text, bit) for text in texts)
        self._groups = tuple(
            (key, tuple(exact), tuple(folded)) for key, (exact, folded) in groups.items()
        )
        self._scans: dict[int, re.Pattern[str]] = {}

    def scan(self, text: str, folded: str) -> re.Pattern[str] | None:
        """Return the alternation of the patterns ``text`` may match (``None``: none).

        ``folded`` is ``fold(text)``.
        """
        found = self._always
        for key, exact, lowered in self._groups:
            if key not in text:  # ("" is in every text)
                continue
            for needle, bit in exact:
                if needle in text:
                    found |= bit
            for needle, bit in lowered:
                if needle in folded:
                    found |= bit
        if not found:
            return None
        known = self._scans.get(found)
        if known is None:
            chosen = tuple(p for i, p in enumerate(self._patterns) if found >> i & 1)
            if len(self._scans) >= _SCANS:
                self._scans.clear()
            known = self._scans[found] = alternation(chosen)
        return known
