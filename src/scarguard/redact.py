"""Redaction of secrets and sanitising of untrusted text before it is stored or shown.

Error text and tool arguments are untrusted: they can carry API keys and prompt
injections. Everything scarguard stores passes through a :class:`Redactor`; anything that
reaches an LLM additionally passes through :func:`excerpt`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import attrs

from scarguard._frozen import FrozenDict
from scarguard._secret_shapes import SHAPES, PatternGates, alternation, fold
from scarguard.canonical import MAX_ITEMS, MAX_STRING, storable_text, to_jsonable

__all__ = [
    "DEFAULT_SECRET_PATTERNS",
    "REDACTED",
    "WITHHELD",
    "Redactor",
    "excerpt",
    "reads_like_instructions",
    "strip_control",
]

REDACTED = "[REDACTED]"
WITHHELD = "[withheld: reads like instructions]"
"""What is shown instead of untrusted text that reads like instructions to the model."""

DEFAULT_SECRET_PATTERNS: tuple[str, ...] = tuple(shape[0] for shape in SHAPES)
"""Patterns whose whole match is a secret."""

SECRET_KEY_NAMES: tuple[str, ...] = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "authorization",
    "auth",
    "credential",
    "credentials",
    "cookie",
    "session_key",
    "client_secret",
    "account_key",
    "private_key_id",
    "signing_key",
)
"""Argument names whose values are secrets whatever they look like."""

# A secret name may end a longer one (``access_token``, ``OPENAI_API_KEY``, ``x-api-key``);
# it may be quoted, as a JSON key is (``"password": "..."``, or ``\"password\": \"...\"``
# inside a JSON string).
_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])([\w-]*?(?:"
    + "|".join(re.escape(k).replace("_", "[_-]?") for k in SECRET_KEY_NAMES)
    + r"))"
    r"((?:\\?[\"'])?\s*[=:]\s*)"
    r"((?:(?:bearer|basic|token|digest)\s+)?"
    r"(?:\[REDACTED\]|\\\"(?:[^\"\\]|\\(?!\"))*\\\"|\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;&\"'}\]]+))"
)
# Command-line passwords: ``curl -u user:pw`` / ``--user user:pw``, ``mysql -pPW``.
_COMMAND_LINE = re.compile(
    r"(?i)(\bcurl\b[^\n|;&]*?\s(?:-u|--user)(?:\s+|=))([^\s\[]\S*)"
    r"|(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p)([^\s\[]\S*)"
)
# What any match of the two holds (in lower case; see scarguard._secret_shapes): ``=`` or
# ``:`` and a word of every secret name; ``-`` and the program's name.
_ASSIGNMENT_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie")
_COMMAND_LINE_WORDS = ("curl", "mysql", "mariadb")
_INSTRUCTIONS = re.compile(
    r"(?i)\b(?:ignore|disregard|forget|override|bypass)\b.{0,40}"
    r"\b(?:instructions?|prompts?|rules?|guidelines?|guard(?:rails?)?)\b"
    r"|\byou are now\b|\bsystem prompt\b|\bnew instructions?\b|\bfrom now on\b"
    r"|\bdo not (?:tell|mention|inform|reveal|warn)\b|\bact as\b|\bpretend (?:to be|you)\b"
    r"|\b(?:run|execute|call) (?:the following|this command|the tool)\b"
    r"|\binstead,? (?:you (?:should|must)|run|call|execute|delete)\b"
    r"|(?:^|[\s\"'])(?:system|assistant|developer)\s*:\s"
    r"|<\|?/?(?:im_start|im_end|system|instructions?)\|?>|\[/?INST\]"
)
# C0/C1 controls, zero-width and bidi marks, invisible operators, the BOM, and Unicode tag
# characters (invisible to people, readable by LLMs: "ASCII smuggling").
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_WHITESPACE = re.compile(r"\s+")
_SEPARATORS = str.maketrans("_-.+", "    ")
"""Characters that separate words in identifiers (``ignore_all_rules`` reads as words)."""
_NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_SCAN_MARGIN = 1024
"""Characters looked at beyond ``max_text``: a secret cut there is cut from the output too."""
_CACHED_TEXT = 1024
"""Texts up to this long have their :func:`reads_like_instructions` verdict remembered."""
_TARGET_CACHE = 4096
"""Targets whose redacted form (and argument names whose verdict) is remembered, per
redactor (all forgotten at once when full)."""


def _name_words(name: str) -> list[str]:
    return [word.lower() for word in _NAME_WORD.findall(name)]


def strip_control(text: str) -> str:
    """Remove control, zero-width, bidi-override and tag characters, keeping newlines and tabs."""
    return _CONTROL.sub("", text)


def _compile(patterns: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    if patterns is DEFAULT_SECRET_PATTERNS:
        return _default_patterns()
    return tuple(p if isinstance(p, re.Pattern) else re.compile(p) for p in patterns)


@functools.cache
def _default_patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in DEFAULT_SECRET_PATTERNS)


def _lower_names(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n.lower() for n in names)


def reads_like_instructions(text: str) -> bool:
    """Return whether untrusted ``text`` reads like instructions to the model.

    This is a heuristic (a list of phrasings seen in prompt injections, matched after
    removing invisible characters and folding look-alike letters): it catches the common
    shapes, not every way of asking a model to do something. What it flags is never shown.
    """
    if len(text) <= _CACHED_TEXT:
        return _reads_like_instructions_cached(text)  # reasons and targets repeat
    return _reads_like_instructions(text)


def _reads_like_instructions(text: str) -> bool:
    folded = unicodedata.normalize("NFKC", strip_control(text)).translate(_SEPARATORS)
    return bool(_INSTRUCTIONS.search(_WHITESPACE.sub(" ", folded)))


_reads_like_instructions_cached = functools.lru_cache(maxsize=4096)(_reads_like_instructions)


def _keep_name(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2)}{REDACTED}"


def _keep_flag(match: re.Match[str]) -> str:
    if match.group(1) is not None:
        return f"{match.group(1)}{REDACTED}"
    return f"{match.group(3)}{REDACTED}"


@attrs.frozen
class Redactor:
    """Replace secrets in text and arguments with ``[REDACTED]`` and bound their size.

    A redactor is a plain callable on text, so any ``Callable[[str], str]`` can stand in for
    it where scarguard asks for one.

    Attributes:
        patterns: Regexes whose matches are secrets.
        key_names: Argument names (case-insensitive) whose values are always secrets.
        max_text: Longest stored error excerpt, in characters.
        max_value: Longest stored argument string, in characters.
        extra: A further ``str -> str`` redaction applied after the built-in one (a plain
            callable passed as ``FailureMemory(redactor=...)`` lands here).
    """

    patterns: tuple[re.Pattern[str], ...] = attrs.field(
        default=DEFAULT_SECRET_PATTERNS, converter=_compile
    )
    key_names: frozenset[str] = attrs.field(default=SECRET_KEY_NAMES, converter=_lower_names)
    max_text: int = 2000
    max_value: int = 500
    extra: Callable[[str], str] | None = None
    _combined: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _gates: PatternGates = attrs.field(init=False, repr=False, eq=False)
    _targets: dict[str, str] = attrs.field(init=False, factory=dict, repr=False, eq=False)
    _secret_names: dict[str, bool] = attrs.field(init=False, factory=dict, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        # flags() looks for every pattern in one pass.
        object.__setattr__(self, "_combined", alternation(self.patterns))
        # Most texts hold no secret: substring tests tell which patterns need scanning for.
        object.__setattr__(self, "_gates", PatternGates(self.patterns))

    def __call__(self, text: str) -> str:
        """Return ``text`` with every secret replaced and its length bounded."""
        full = len(text)
        if full > self.max_text + _SCAN_MARGIN:
            # Only the kept head is scanned: a multi-megabyte error must not cost seconds
            # (this runs under the memory's lock).
            text = text[: self.max_text + _SCAN_MARGIN]
        text = self._redact(text)
        if len(text) > self.max_text:
            dropped = len(text) - self.max_text + full - min(full, self.max_text + _SCAN_MARGIN)
            text = text[: self.max_text] + f"… [{dropped} more chars]"
        return text

    def _redact(self, text: str) -> str:
        # What the whole scans would give: each runs only where a text it needs is present
        # (a case-insensitive one's in the text folded as a regex folds it).
        text = storable_text(text)
        folded = fold(text)
        if ("=" in text or ":" in text) and _holds_any(folded, _ASSIGNMENT_WORDS):
            redacted = _ASSIGNMENT.sub(_keep_name, text)
            if redacted != text:
                text, folded = redacted, fold(redacted)
        if "-" in text and _holds_any(folded, _COMMAND_LINE_WORDS):
            redacted = _COMMAND_LINE.sub(_keep_flag, text)
            if redacted != text:
                text, folded = redacted, fold(redacted)
        scan = self._gates.scan(text, folded)
        if scan is not None:
            text = scan.sub(REDACTED, text)
        if self.extra is not None:
            text = self.extra(text)
        return text

    def flags(self, text: str) -> bool:
        """Return whether ``text`` contains anything this redactor treats as a secret."""
        return bool(
            _ASSIGNMENT.search(text) or _COMMAND_LINE.search(text) or self._combined.search(text)
        )

    def target(self, target: str) -> str:
        """Return a target (path, URL) fit to store, key and show.

        A target without secrets, at most ``max_value`` long, is returned unchanged. Otherwise
        the secrets are replaced and the text bounded, and a digest of the whole raw target is
        appended (``" #<12 hex digits>"``), so two targets that differ only in a secret still
        differ (a refusal for a wrong token never refuses the right one). Like the call's
        fingerprint, the digest is an unkeyed hash: it does not reveal a strong secret, but a
        guessable password could be confirmed from it offline.
        """
        known = self._targets.get(target)
        if known is not None:
            return known  # the hot path: a call's targets repeat
        safe = self._safe_target(target)
        if len(self._targets) >= _TARGET_CACHE:
            self._targets.clear()
        self._targets[target] = safe
        return safe

    def _safe_target(self, target: str) -> str:
        safe = self._redact(target[: self.max_value + _SCAN_MARGIN])
        if safe == target and len(target) <= self.max_value:
            return target
        raw = target.encode("utf-8", "surrogatepass")
        suffix = f" #{hashlib.sha256(raw).hexdigest()[:12]}"
        room = self.max_value - len(suffix)
        if len(safe) > room:
            safe = safe[: room - 1] + "…"
        return safe + suffix

    def args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Return a JSON-safe, redacted, size-bounded copy of tool arguments."""
        if type(args) in _PLAIN_DICTS and len(args) <= MAX_ITEMS:
            flat = self._flat(args)  # type: ignore[arg-type]
            if flat is not None:
                return flat
        safe = to_jsonable(args)
        return self._walk(safe) if isinstance(safe, dict) else {}

    def _flat(self, args: dict[Any, Any]) -> dict[str, Any] | None:
        """Return ``_walk(to_jsonable(args))`` for flat arguments (``None``: not flat).

        Flat: string keys, and values that are strings ``to_jsonable`` keeps as they are,
        ints, bools or ``None`` (most tool calls); the result is the same, keys sorted.
        """
        try:
            keys = sorted(args)
        except TypeError:
            return None
        out = {}
        for key in keys:
            value = args[key]
            kind = type(value)
            if type(key) is not str or (kind is str and len(value) > MAX_STRING):
                return None
            if kind is str:
                out[key] = REDACTED if value and self.secret_name(key) else self._text(value)
            elif kind in _SCALARS:
                out[key] = REDACTED if value is not None and self.secret_name(key) else value
            else:
                return None
        return out

    def secret_name(self, key: str) -> bool:
        """Return whether an argument called ``key`` holds a secret.

        The name itself, or one of its words or two adjacent words (joined with or without
        ``_``) is a secret name: ``access_token``, ``OPENAI_API_KEY``, ``apiKey`` and
        ``x-api-key`` are, ``max_tokens`` and ``author`` are not.
        """
        known = self._secret_names.get(key)
        if known is None:
            known = self._secret_name(key)
            if len(self._secret_names) >= _TARGET_CACHE:
                self._secret_names.clear()
            self._secret_names[key] = known  # argument names repeat on every call
        return known

    def _secret_name(self, key: str) -> bool:
        names = self.key_names
        if key.lower() in names:
            return True
        words = _name_words(key)
        if any(word in names for word in words):
            return True
        return any(f"{a}_{b}" in names or f"{a}{b}" in names for a, b in itertools.pairwise(words))

    def _walk(self, value: Any, key: str | None = None) -> Any:
        if key is not None and value not in (None, "") and self.secret_name(key):
            return REDACTED
        if isinstance(value, dict):
            return {k: self._walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._walk(v) for v in value]
        if isinstance(value, str):
            return self._text(value)
        return value

    def _text(self, value: str) -> str:
        """Return an argument string redacted and bounded to ``max_value``."""
        text = self(value)
        if len(text) > self.max_value:
            text = text[: self.max_value] + f"… [{len(text) - self.max_value} more chars]"
        return text


_PLAIN_DICTS = frozenset({dict, FrozenDict})
_SCALARS = frozenset({int, bool, type(None)})


def _holds_any(folded: str, words: tuple[str, ...]) -> bool:
    """Return whether ``folded`` holds one of ``words``."""
    for word in words:  # noqa: SIM110 (a loop: any() over a generator costs twice as much)
        if word in folded:
            return True
    return False


def excerpt(
    text: str | None,
    *,
    limit: int = 160,
    redactor: Callable[[str], str] | None = None,
    withhold: bool = True,
) -> str:
    """Return ``text`` made safe to quote to an LLM.

    The text is redacted, stripped of control characters, folded onto one line, truncated to
    ``limit`` characters and wrapped in double quotes (inner quotes become single quotes), so
    it reads as data, not as instructions. Text that reads like instructions
    (:func:`reads_like_instructions`) is replaced by :data:`WITHHELD` unless ``withhold`` is
    false.
    """
    if not text:
        return '""'
    if redactor is None and withhold and len(text) <= _CACHED_TEXT:
        return _default_excerpt(text, limit)  # targets and tool names repeat
    return _excerpt(text, limit, redactor, withhold)


def _excerpt(text: str, limit: int, redactor: Callable[[str], str] | None, withhold: bool) -> str:
    if withhold and reads_like_instructions(text):
        return WITHHELD
    redact = redactor or _default_redactor()
    clean = _WHITESPACE.sub(" ", strip_control(redact(text))).strip().replace('"', "'")
    if len(clean) > limit:
        clean = clean[: max(limit - 1, 0)].rstrip() + "…"
    return f'"{clean}"'


@functools.lru_cache(maxsize=4096)
def _default_excerpt(text: str, limit: int) -> str:
    return _excerpt(text, limit, None, True)


@functools.cache
def _default_redactor() -> Redactor:
    """The redactor :func:`excerpt` uses when given none (built once: it is immutable)."""
    return Redactor()
