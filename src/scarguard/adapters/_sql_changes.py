r"""What SQL, a mongosh script or a redis command changes: ``create table t (id int)``.

SQL is read statement by statement, past comments and quoted text: a statement changes the
world when its first word writes (``CREATE``, ``INSERT``, ``GRANT``...), and ``COPY ...
FROM``, ``SELECT ... INTO``, ``EXPLAIN ANALYZE`` of a write, a ``WITH`` that writes, and
psql's ``\i`` and sqlite's ``.read`` (a script not read) do too. ``SELECT``, ``SHOW``,
``EXPLAIN``, ``VACUUM``, ``\d`` do not. At most :data:`SQL_READ` characters are read: a
longer text counts as a change, as what is not read is not known. Which client runs which
text is :mod:`scarguard.adapters._database_clients`'s.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["SQL_READ", "mongo_changes", "redis_changes", "sql_changes"]

SQL_READ: Final = 4096
"""How much of one SQL text (or mongosh script) is read; a longer one counts as a change."""

_WRITES: Final = frozenset(
    {"create", "alter", "drop", "truncate", "insert", "update", "delete", "merge", "upsert",
     "replace", "grant", "revoke", "rename", "comment", "refresh", "do", "call", "exec",
     "execute", "load", "import", "restore", "attach", "detach", "source", "install",
     "exchange", "undrop", "kill", "flush", "\\i", "\\ir", "\\include", "\\include_relative",
     "\\.", ".read", ".import", ".restore", ".clone", ".shell", ".system", ".archive", ".ar"}
)  # fmt: skip
"""The first words of statements that change a schema, data, grants or the server's
processes, and the client commands that run a script (``\\i x.sql``, sqlite's ``.read``)."""
_RUNS_ANYWHERE: Final = frozenset({"\\!", "\\gexec", "\\lo_import", "\\lo_unlink"})
"""psql commands that write wherever they stand (``select ... \\gexec`` runs its rows)."""
_DML: Final = frozenset(
    {"insert", "update", "delete", "merge", "upsert", "create", "drop", "alter", "truncate"}
)
_LINE_WRITES: Final = _DML | {"grant", "revoke", "exec", "execute"}
"""Writes that start a statement when they start a line (T-SQL needs no ``;``)."""
_LEADING: Final = frozenset(
    {"begin", "start", "transaction", "work", "unlogged", "counter", "batch"}
)
"""Words before a statement's own (``BEGIN BATCH INSERT ...`` in CQL, ``BEGIN; ...``)."""
_SQL_PIECE: Final = re.compile(
    r"""(?P<skip>\s+|--[^\n]*|/\*.*?(?:\*/|\Z)|'(?:[^']|'')*'?|"[^"]*"?|`[^`]*`?
        |\$\$.*?(?:\$\$|\Z))
    |(?P<end>;)
    |(?P<word>[A-Za-z_][\w$]*|\\(?:[A-Za-z_]+|[.!])|(?<![\w)\]"])\.[A-Za-z]+)
    |(?P<other>.)""",
    re.VERBOSE | re.DOTALL,
)
"""One piece of SQL: blanks, comments and quoted text are skipped. Each alternative starts
on a character of its own and none repeats a group that can match one text two ways, so
the scan is linear. (No ``#`` comments: ``#>>`` is PostgreSQL's JSON path operator.)"""


def sql_changes(sql: str) -> bool:
    """Return whether an SQL text (a statement, a script, a client command) changes data.

    Read only the first :data:`SQL_READ` characters: a longer text counts as a change, as
    what is not read is not known.
    """
    if len(sql) > SQL_READ or sql.lstrip().startswith(("$", "`")):
        return True  # (too long to read, or a shell substitution: not seen)
    statement: list[tuple[str, int]] = []  # its words, lowercased, with their bracket depth
    depth, line_start = 0, True
    for match in _SQL_PIECE.finditer(sql):
        kind, piece = match.lastgroup, match.group()
        if kind == "skip":
            line_start = line_start or (piece.isspace() and "\n" in piece)
            continue
        if kind == "end":
            if _statement_changes(statement):
                return True
            statement, depth = [], 0
        elif kind == "word":
            word = piece.lower()
            if word in _RUNS_ANYWHERE or (line_start and depth == 0 and word in _LINE_WRITES):
                return True
            statement.append((word, depth))
        elif piece in "()":
            depth = depth + 1 if piece == "(" else max(depth - 1, 0)
        else:
            statement.append((piece, depth))
        line_start = False
    return _statement_changes(statement)


def _statement_changes(words: list[tuple[str, int]]) -> bool:
    """Return whether one statement, as its words and their depths, changes something."""
    lead = next((i for i, (w, _) in enumerate(words) if w not in _LEADING), len(words))
    words = words[lead:]
    if not words:
        return False
    first = words[0][0]
    if first in _WRITES:
        return True
    top = [w for w, depth in words[1:] if depth == 0]
    if first in ("copy", "\\copy"):  # COPY t FROM ... writes; COPY (SELECT ...) TO reads
        return next((w for w in top if w in ("from", "to")), None) == "from"
    if first == "select":
        return "into" in top  # SELECT ... INTO new_table
    if first == "pragma":
        return "=" in top  # PRAGMA user_version = 2
    if first in ("with", "explain"):
        every = {w for w, _ in words}
        return bool(every & _DML) and (first == "with" or bool(every & {"analyze", "analyse"}))
    return False


_MONGO_CALL: Final = re.compile(r"(?<![\w$])([A-Za-z_$][\w$]*)\s*\(|\$(?:out|merge)\b")
"""A method called (``db.t.insertOne(``), or an aggregation stage that writes. The name
starts where no name character precedes it, so each is tried from one place only."""
_MONGO_WRITES: Final = (
    "insert", "update", "delete", "drop", "create", "replace", "remove", "rename", "bulkwrite",
    "save", "command", "load",
)  # fmt: skip
"""What the methods that write are named after (``insertOne``, ``findOneAndUpdate``,
``dropDatabase``, ``runCommand``, ``load('x.js')``)."""


def mongo_changes(script: str) -> bool:
    """Return whether a mongosh script (``--eval``) writes: ``db.t.insertOne({a: 1})``."""
    if len(script) > SQL_READ or script.lstrip().startswith(("$", "`")):
        return True
    for match in _MONGO_CALL.finditer(script):
        name = match.group(1)
        if name is None or any(stem in name.lower() for stem in _MONGO_WRITES):
            return True  # (None: $out or $merge)
    return False


_REDIS_WRITES: Final = frozenset(
    {"SET", "SETNX", "SETEX", "PSETEX", "MSET", "MSETNX", "APPEND", "DEL", "UNLINK", "EXPIRE",
     "EXPIREAT", "PEXPIRE", "PEXPIREAT", "PERSIST", "RENAME", "RENAMENX", "INCR", "INCRBY",
     "INCRBYFLOAT", "DECR", "DECRBY", "GETSET", "GETDEL", "GETEX", "SETRANGE", "SETBIT",
     "BITOP", "BITFIELD", "HSET", "HSETNX", "HMSET", "HDEL", "HINCRBY", "HINCRBYFLOAT", "LPUSH",
     "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP", "LSET", "LREM", "LTRIM", "LINSERT", "LMOVE",
     "BLMOVE", "RPOPLPUSH", "BRPOPLPUSH", "BLPOP", "BRPOP", "LMPOP", "SADD", "SREM", "SPOP",
     "SMOVE", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE", "ZADD", "ZREM", "ZINCRBY", "ZPOPMIN",
     "ZPOPMAX", "BZPOPMIN", "BZPOPMAX", "ZMPOP", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK",
     "ZREMRANGEBYLEX", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE", "XADD",
     "XDEL", "XTRIM", "XGROUP", "XACK", "XCLAIM", "XAUTOCLAIM", "PFADD", "PFMERGE", "GEOADD",
     "COPY", "MOVE", "RESTORE", "MIGRATE", "FLUSHALL", "FLUSHDB", "SWAPDB", "EVAL", "EVALSHA",
     "FCALL", "FUNCTION", "SCRIPT", "SHUTDOWN", "MADD", "ADD", "CREATE", "ALTER", "DROP",
     "DROPINDEX", "FORGET", "CLEAR", "MERGE", "TOGGLE", "ARRAPPEND", "ARRINSERT", "ARRPOP",
     "ARRTRIM", "STRAPPEND", "NUMINCRBY"}
)  # fmt: skip
"""Commands that write, and the writing part of a module's (``JSON.SET``, ``TS.ADD``)."""


def redis_changes(words: list[str]) -> bool:
    """Return whether a redis-cli command (its words) writes: ``SET k v``, ``JSON.SET``..."""
    if not words:
        return False
    command = words[0].upper()
    if command == "CONFIG":
        return words[1:2] != [] and words[1].upper() in ("SET", "REWRITE", "RESETSTAT")
    return command.rpartition(".")[2] in _REDIS_WRITES
