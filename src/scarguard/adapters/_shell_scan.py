"""A shell command split as the shell reads it: simple commands, words, what each runs.

The segments and words of :mod:`scarguard.adapters._shell` are split by regular
expressions that ignore quotes (cheap, and right for the usual command); where quotes
matter (``bash -c 'cd x && rm y'``, ``psql -c "select 1 where 2 > 1"``), this reads them:
a quoted ``;``, ``&&`` or ``>`` is part of a word, not a separator or a redirect. One pass
of a regular expression whose alternatives each start on a character of their own, so
linear in the command's length.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from typing import Final, NamedTuple

__all__ = ["Word", "inner_scripts", "run_words", "segments", "shell_script", "unquoted_command"]

_PREFIXES: Final[Mapping[str, frozenset[str]]] = {
    "sudo": frozenset({"-u", "-g", "-U", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "--user"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "exec": frozenset({"-a"}),
    **dict.fromkeys(("nohup", "time", "command"), frozenset()),
}
"""Programs that run the rest of their words, with their options that take a value."""
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_CONTAINER_EXECS: Final = frozenset({"kubectl", "oc"})
"""Programs whose ``exec ... --`` runs the rest in a container (its changes are the world's)."""
_SSH_VALUED: Final = frozenset("BbcDEeFIiJLlmOoPpQRSWw")
"""The letters of ``ssh`` options that take a value (``-p 22``, ``-i key``, ``-o opt``)."""


class Word(NamedTuple):
    """One word of a simple command, as the shell gives it to the program."""

    text: str
    """The word, its quotes and escapes taken away."""
    start: int
    """Where it begins in the command."""
    end: int
    """Where it ends in the command."""
    quoted: bool
    """Whether any of it was quoted."""


_PIECE: Final = re.compile(
    r"""(?P<blank>[^\S\n]+)
    |(?P<op>&&|\|\||;;|\|&|[;&|\n()])
    |(?P<redirect>\d*(?:<<<|<<-?|<>|<&|<|>>|>&|>\||>))
    |(?P<quoted>'[^']*'?|"(?:[^"\\]|\\.)*"?|\$'(?:[^'\\]|\\.)*'?)
    |(?P<escape>\\.?)
    |(?P<plain>[^\s'"\\;&|()<>]+)""",
    re.VERBOSE | re.DOTALL,
)
"""One piece of a shell command: each alternative starts on a character of its own, and
none repeats a group that can match the same text two ways (linear time)."""
_ESCAPED: Final = re.compile(r'\\([\\"$`\n])')


def segments(command: str) -> Iterator[tuple[list[Word], bool]]:
    """Yield each simple command's words and whether it reads a pipe or a redirect."""
    words: list[Word] = []
    text: list[str] = []
    start, quoted, stdin, target, pos = -1, False, False, False, 0
    while True:
        match = _PIECE.match(command, pos)
        kind = match.lastgroup if match else None
        if match and kind in ("plain", "quoted", "escape"):
            piece = match.group()
            if start < 0 and piece[0] == "#":  # a comment, to the end of the line
                pos = command.find("\n", pos)
                pos = len(command) if pos < 0 else pos
                continue
            start = pos if start < 0 else start
            quoted = quoted or kind == "quoted"
            text.append(piece if kind == "plain" else _unquoted(piece))
        else:
            if start >= 0:
                if not target:  # (a redirect's file is no word of the command)
                    words.append(Word("".join(text), start, pos, quoted))
                target, text, start, quoted = False, [], -1, False
            if match is None:
                yield words, stdin
                return
            piece = match.group()
            if kind == "redirect":
                operator = piece.lstrip("0123456789")
                fd = piece[: len(piece) - len(operator)]
                stdin = stdin or (operator[0] == "<" and fd in ("", "0"))
                target = True
            elif kind == "op":
                yield words, stdin
                words, stdin, target = [], piece in ("|", "|&"), False
        pos = match.end()


def _unquoted(piece: str) -> str:
    """Return what a quoted piece or an escape stands for (``'a b'``: ``a b``)."""
    if piece[0] == "\\":
        return piece[1:].replace("\n", "")  # (a backslash-newline joins two lines)
    inner = piece[2:] if piece[0] == "$" else piece[1:]
    inner = inner[:-1] if inner.endswith(piece[-1]) else inner  # (closed: the shell runs it)
    return _ESCAPED.sub(r"\1", inner) if piece[0] == '"' and "\\" in inner else inner


def run_words(words: Iterable[str]) -> list[str]:
    """Return the words of the program a command runs, past ``sudo -u x``, ``env A=1``..."""
    texts = list(words)
    i = 0
    while i < len(texts):
        word = texts[i]
        if "=" in word and not word.startswith(("-", "=")):
            i += 1  # PGPASSWORD=x psql ...
            continue
        takes = _PREFIXES.get(os.path.basename(word))
        if takes is None:
            break
        i += 1
        while i < len(texts) and texts[i].startswith("-"):
            i += 2 if texts[i] in takes else 1
            if texts[i - 1] == "--":
                break
        if word == "timeout" and i < len(texts):
            i += 1  # its duration
    return texts[i:]


def shell_script(program: str, words: list[str]) -> str | None:
    """Return the command a shell is given (``bash -lc '...'``, ``su postgres -c '...'``)."""
    if program in _SHELLS:
        for i, word in enumerate(words[1:], 1):
            if not word.startswith("-"):
                return None
            if word[1] != "-" and "c" in word:
                rest = [w for w in words[i + 1 :] if not w.startswith("-")]
                return rest[0] if rest else None
    elif program == "su":
        for i, word in enumerate(words[:-1]):
            if word in ("-c", "--command"):
                return words[i + 1]
    return None


def inner_scripts(words: list[str]) -> Iterator[str]:
    """Yield the scripts a simple command hands to a shell to run.

    ``bash -lc '...'``, ``su postgres -c '...'``, ``eval "..."``, a shell further on in
    the words (``find . -exec sh -c '...' +``, ``xargs sh -c '...'``, ``flock f sh -c``),
    the command a container runs (``kubectl exec pod -- psql -c '...'``, ``oc exec``), and
    the one another host runs (``ssh host 'psql -c ...'``).
    """
    texts = run_words(words)
    if not texts:
        return
    program = os.path.basename(texts[0])
    if program == "eval":
        yield " ".join(texts[1:])
        return
    if program == "ssh":
        remote = _remote_command(texts[1:])
        if remote:
            yield remote
        return
    if program in _CONTAINER_EXECS and "exec" in texts[1:5] and "--" in texts:
        yield shlex.join(texts[texts.index("--") + 1 :])
        return
    for i, word in enumerate(texts):
        if i and os.path.basename(word) not in _SHELLS:
            continue
        script = shell_script(os.path.basename(word), texts[i:])
        if script is not None:
            yield script
            return


def _remote_command(words: list[str]) -> str | None:
    """Return the command ``ssh``'s words give the host (joined, as ssh sends it), if any."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        for j, letter in enumerate(word[1:], 1):
            if letter in _SSH_VALUED:
                i += j == len(word) - 1  # its value is the next word (else attached: -p22)
                break
        i += 1
    rest = words[i + 1 :]  # (words[i] is the host)
    return " ".join(rest) if rest else None


def unquoted_command(command: str) -> str:
    """Return the command with its quoted words blanked (``echo "a > b"``: no redirect)."""
    kept: list[str] = []
    done = 0
    for words, _ in segments(command):
        for word in words:
            if word.quoted:
                kept += [command[done : word.start], " " * (word.end - word.start)]
                done = word.end
    return "".join(kept) + command[done:]
