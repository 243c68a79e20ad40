"""Name failures: the signature bank, error normalisation and the fallback signature.

A :class:`Signature` is a named failure kind (``edit_failed``, ``rate_limited``,
``oom_gpu``...) with the blame, label and fix hint scarguard attaches to it. A
:class:`SignatureBank` matches an error against its signatures and always answers: an
error no signature recognises gets a fallback signature ``error:<hash>`` of its
normalised text, so the same unknown error groups however its numbers, paths and ids vary.

Evidence is weighed in this order, first match wins, in bank order:

1. exception type names, most specific first (the engine passes the MRO's class names), so
   a ``FileNotFoundError`` is ``file_not_found`` whatever its message says;
2. the error text, against each signature's word-bounded, precompiled pattern;
3. the status code, so a ``429`` with an empty body is ``rate_limited``.

Text comes before the status code because it is the more specific evidence: a ``400`` that
says "Field required" is a validation error, a ``500`` that says "Connection refused" is a
refused connection. Only exception types that mean one thing are listed on signatures
(``CalledProcessError`` is not: its exit status decides between killed, segfault and failed).

:class:`Signature` itself is defined in :mod:`scarguard.naming._signature`, below both this
module and the default bank's data (:mod:`scarguard.naming.bank`): the bank's data imports no
part of this module, so the import graph has no cycle. ``DEFAULT_SIGNATURES`` and
``DEFAULT_BANK`` load on first use (compiling the bank's patterns is a good part of a
process's start, and a process that only checks calls never needs them).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from scarguard.model import Blame
from scarguard.naming._signature import Signature, bare_name

__all__ = [
    "DEFAULT_BANK",
    "DEFAULT_SIGNATURES",
    "FALLBACK_HINT",
    "FALLBACK_LABEL",
    "FALLBACK_PREFIX",
    "SignatureBank",
    "fallback_signature",
    "is_fallback",
    "normalise_error",
]

FALLBACK_PREFIX = "error:"
"""Prefix of the names of fallback signatures (``error:`` and ten hex digits)."""
FALLBACK_LABEL = "unrecognised error"
"""Label of every fallback signature."""
FALLBACK_HINT = (
    "This error is not one scarguard recognises; read it, then change the arguments or the "
    "approach instead of repeating the identical call."
)
"""Hint of every fallback signature (fixed text: the error itself is untrusted)."""

# Words, not digits, name the status classes of empty errors: normalise_error masks digits.
_STATUS_CLASSES = {1: "informational", 2: "success", 3: "redirect", 4: "client", 5: "server"}
# Longer texts are matched on their head and tail, where messages sit; Python's re costs
# about 0.5 µs per character across the whole bank, so the window bounds a failure's cost.
MATCH_LIMIT = 4096
_CACHE_SIZE = 1024  # distinct error texts remembered per bank
_SCAN_LIMIT = 16_384  # the same for normalise_error, whose dozen masks are cheaper
_NORMALISED_LIMIT = 1000  # normalised text keeps its head and tail within this length
_NORMALISE_ROUNDS = 4


def clip(text: str, limit: int = _SCAN_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n{text[-half:]}"


class SignatureBank:
    """An ordered collection of signatures that names any error.

    Args:
        signatures: The signatures, tried in this order; ``None`` for the default bank.

    Raises:
        ValueError: When two signatures share a name, or a name uses the fallback prefix.
    """

    def __init__(self, signatures: Iterable[Signature] | None = None) -> None:
        if signatures is None:
            from scarguard.naming.bank import DEFAULT_SIGNATURES

            signatures = DEFAULT_SIGNATURES
        self._signatures: tuple[Signature, ...] = tuple(signatures)
        self._by_name: dict[str, Signature] = {}
        self._by_exception: dict[str, Signature] = {}
        self._by_status: dict[int, Signature] = {}
        for sig in self._signatures:
            if sig.name in self._by_name:
                raise ValueError(f"two signatures are named {sig.name!r}")
            if is_fallback(sig.name):
                raise ValueError(f"{sig.name!r}: the prefix {FALLBACK_PREFIX!r} is reserved")
            self._by_name[sig.name] = sig
            for exc in sig.exception_types:
                self._by_exception.setdefault(exc, sig)
            for code in sig.status_codes:
                self._by_status.setdefault(code, sig)
        self._texts = tuple((s.pattern, s) for s in self._signatures if s.pattern is not None)
        self._text_cache: dict[str, Signature | None] = {}

    def match(
        self,
        text: str | None,
        *,
        status_code: int | None = None,
        exception_types: Sequence[str] = (),
    ) -> Signature:
        """Return the signature of an error; never ``None``.

        Args:
            text: The error text (for exceptions, ``"TypeName: message"``).
            status_code: An HTTP-like status code, if the error carried one.
            exception_types: Exception class names, most specific first (qualified or not).

        Returns:
            The first signature, in bank order, matched by the exception types, else by the
            text, else by the status code; otherwise a fallback signature.
        """
        if isinstance(exception_types, str):
            exception_types = (exception_types,)
        for exc in exception_types:
            found = self._by_exception.get(bare_name(exc))
            if found is not None:
                return found
        if text:
            found = self._match_text(text)
            if found is not None:
                return found
        if status_code is not None:
            found = self._by_status.get(status_code)
            if found is not None:
                return found
        if text and text.strip():
            return fallback_signature(text)
        if status_code is not None:
            kind = _STATUS_CLASSES.get(status_code // 100, "unusual")
            return fallback_signature(f"empty {kind} error status")
        if exception_types:
            return fallback_signature(bare_name(exception_types[0]))
        return fallback_signature(text)

    def _match_text(self, text: str) -> Signature | None:
        """Return the first signature whose pattern the text matches, remembering the answer.

        An agent in a loop produces the same error text again and again; the cache spares the
        scan of the whole bank on every repeat. It is bounded and simply starts afresh when full.
        """
        cache = self._text_cache
        if text in cache:
            return cache[text]
        clipped = clip(text, MATCH_LIMIT)
        found = next((sig for pattern, sig in self._texts if pattern.search(clipped)), None)
        if len(cache) >= _CACHE_SIZE:
            cache.clear()
        cache[text] = found
        return found

    def get(self, name: str) -> Signature | None:
        """Return the signature called ``name``, or ``None`` (fallbacks are not in a bank)."""
        return self._by_name.get(name)

    def with_signatures(self, *signatures: Signature) -> SignatureBank:
        """Return a bank with ``signatures`` tried first, replacing any of the same name."""
        names = {s.name for s in signatures}
        return SignatureBank([*signatures, *(s for s in self._signatures if s.name not in names)])

    def without(self, *names: str) -> SignatureBank:
        """Return a bank without the signatures called ``names`` (unknown names are ignored)."""
        drop = set(names)
        return SignatureBank([s for s in self._signatures if s.name not in drop])

    def __iter__(self) -> Iterator[Signature]:
        return iter(self._signatures)

    def __len__(self) -> int:
        return len(self._signatures)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __repr__(self) -> str:
        return f"SignatureBank({len(self._signatures)} signatures)"


def is_fallback(name: str) -> bool:
    """Return whether ``name`` is a fallback signature's name (``error:<hash>``)."""
    return name.startswith(FALLBACK_PREFIX)


# Masks for normalise_error, applied in this order on lowercased, whitespace-collapsed text.
# Placeholders contain no digits, quotes or slashes, so no mask matches another's output.
# Every mask runs in linear time: a regex that could backtrack over a long run of its own
# characters (``x-x-x-...``, ``a.a.a...`` before a missing ``/`` or file extension) is only
# ever applied to one run of at most _RUN_LIMIT characters (see _RunMask), and URLs are found
# from their ``://`` (see _mask_urls).
_RUN_LIMIT = 256


class _RunMask:
    """Apply ``pattern`` inside each maximal run of ``run`` characters, runs bounded in length.

    Matches of ``pattern`` never cross a run, so applying it run by run gives what applying it
    to the whole text gives, while a run's backtracking costs at most ``_RUN_LIMIT`` squared.
    The character after the run is kept as context for a trailing look-ahead. A run longer
    than ``_RUN_LIMIT`` is no file name: it becomes ``long`` (the placeholder, or itself).
    """

    def __init__(self, run: str, pattern: str, placeholder: str, *, long: str | None) -> None:
        self.run = re.compile(run)
        self.pattern = re.compile(pattern)
        self.placeholder = placeholder
        self.long = long

    def sub(self, placeholder: str, text: str) -> str:
        return self.run.sub(self._one, text)

    def _one(self, match: re.Match[str]) -> str:
        token = match.group()
        if len(token) > _RUN_LIMIT:
            return token if self.long is None else self.long
        after = match.string[match.end() : match.end() + 1]
        masked = self.pattern.sub(self.placeholder, token + after)
        return masked[: len(masked) - len(after)] if after else masked


_URL_BODY = re.compile(r"[^\s'\"`<>]+")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


class _URLMask:
    """Replace URLs by ``<url>``, finding each from its ``://``.

    The same as a regex for a scheme at a word boundary, ``://`` and a body up to the
    next space or quote, which backtracks over every run of scheme characters that no
    ``://`` follows; here each run before a ``://`` is looked at once.
    """

    def sub(self, placeholder: str, text: str) -> str:
        if "://" not in text:
            return text
        out: list[str] = []
        done = 0
        colon = text.find("://")
        while colon != -1:
            body = _URL_BODY.match(text, colon + 3)
            start = colon
            while start > done and text[start - 1] in _SCHEME_CHARS:
                start -= 1
            # the leftmost letter at a word boundary begins the scheme
            begin = next(
                (
                    i
                    for i in range(start, colon)
                    if "a" <= text[i] <= "z" and (i == 0 or not _is_word(text[i - 1]))
                ),
                None,
            )
            if body is not None and begin is not None:
                out.append(text[done:begin])
                out.append(placeholder)
                done = body.end()
            colon = text.find("://", max(done, colon + 1))
        out.append(text[done:])
        return "".join(out)


_MASKS: tuple[tuple[Any, str], ...] = (
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"
            r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
        ),
        "<time>",
    ),
    (_URLMask(), "<url>"),
    (re.compile(r"\b[a-z]:\\[^\s'\"`<>|:]*"), "<path>"),
    (re.compile(r"(?<![\w.\-/~])(?:~|\.{1,2})?/[^\s'\"`<>|:,;()\[\]{}]+"), "<path>"),
    (
        _RunMask(r"[\w.\-/]+", r"\b[\w.\-]+(?:/[\w.\-]+)+", "<path>", long="<path>"),
        "<path>",
    ),
    (
        _RunMask(
            r"[\w.\-]+",
            r"\b[\w\-]+(?:\.[\w\-]+)*\.(?:py|pyi|pyx|js|mjs|cjs|jsx|ts|tsx|json|ya?ml|toml|md|"
            r"txt|csv|html?|css|rs|go|java|kt|c|h|cc|cpp|hpp|rb|php|sh|sql|ipynb|lock|cfg|ini|"
            r"log|env|xml|pt|ckpt|safetensors)(?![\w<])",
            "<path>",
            long=None,
        ),
        "<path>",
    ),
    (re.compile(r"\b0x[0-9a-f]+\b"), "<hex>"),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{6,}\b"), "<hex>"),
    (re.compile(r"\d+(?:\.\d+)*"), "<n>"),
    (
        re.compile(r"(?<!\w)(?:'[^'\n…]*'|\"[^\"\n…]*\"|`[^`\n…]*`)(?!\w)"),
        "<str>",
    ),
)
_WHITESPACE = re.compile(r"\s+")


def _normalise_once(text: str) -> str:
    text = _WHITESPACE.sub(" ", text.lower()).strip()
    for pattern, placeholder in _MASKS:
        text = pattern.sub(placeholder, text)
    if len(text) > _NORMALISED_LIMIT:
        # Keep the head (what failed) and the tail (the final exception line of a traceback).
        head = text[: _NORMALISED_LIMIT * 3 // 5]
        tail = text[-(_NORMALISED_LIMIT * 2 // 5) :]
        text = f"{head} … {tail}"
    return text


def normalise_error(text: str) -> str:
    """Return the identity of an error text, with everything that varies per call masked.

    The text is lowercased (casing varies between tools and wrappers and carries no
    identity), whitespace is collapsed, and UUIDs, timestamps, URLs, paths and file names,
    hex ids, numbers (ports, pids, line numbers, sizes) and quoted strings (search strings,
    names) are replaced by placeholders such as ``<n>`` and ``<path>``. Texts longer than
    1000 characters keep their head and tail. Masks are applied until the text stops
    changing, so the function is idempotent.

    Args:
        text: Any error text.

    Returns:
        The normalised text, at most about 1000 characters.
    """
    text = clip(text)
    for _ in range(_NORMALISE_ROUNDS):
        again = _normalise_once(text)
        if again == text:
            break
        text = again
    return text


@functools.lru_cache(maxsize=512)
def fallback_signature(text: str | None) -> Signature:
    """Return the fallback signature of an error no named signature recognises.

    Its name is ``error:`` and the first ten hex digits of the SHA-256 of the normalised
    text: stable across processes and machines, equal for errors that differ only in
    numbers, paths, ids and quoted strings.
    """
    digest = hashlib.sha256(normalise_error(text or "").encode("utf-8", "surrogatepass"))
    return Signature(
        name=f"{FALLBACK_PREFIX}{digest.hexdigest()[:10]}",
        pattern=None,
        blame=Blame.UNKNOWN,
        hint=FALLBACK_HINT,
        label=FALLBACK_LABEL,
    )


if TYPE_CHECKING:
    DEFAULT_SIGNATURES: tuple[Signature, ...]
    """The default bank's signatures, in bank order (:mod:`scarguard.naming.bank`)."""
    DEFAULT_BANK: SignatureBank
    """The bank of :data:`DEFAULT_SIGNATURES`: what a memory names failures with by default."""


def __getattr__(name: str) -> Any:
    # Compiling the default bank's patterns is a good part of a process's start, and a
    # process that only checks calls never needs them: both names load on first use.
    if name == "DEFAULT_SIGNATURES":
        from scarguard.naming.bank import DEFAULT_SIGNATURES

        globals()[name] = DEFAULT_SIGNATURES
        return DEFAULT_SIGNATURES
    if name == "DEFAULT_BANK":
        bank = SignatureBank()
        globals()[name] = bank
        return bank
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
