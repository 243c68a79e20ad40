"""Database clients a shell command runs, and whether what they run changes anything.

A client's SQL is read from its words: ``-c``/``--command`` (psql), ``-e``/``--execute``
(mysql, mariadb, cockroach sql, cqlsh), ``-q``/``--query`` (clickhouse), ``-Q`` (sqlcmd),
``--eval`` (mongosh), the words after the database file (sqlite3, duckdb), and a redis-cli
command; :mod:`scarguard.adapters._sql_changes` judges it. What a client reads from a file,
a pipe or a redirect (``-f schema.sql``, ``psql < x.sql``, ``cat x.sql | psql``) is not
seen, so it counts as a change. The command is split as the shell reads it: a quoted ``;``
or ``>`` is part of a word, not a separator or a redirect.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from scarguard.adapters._shell_scan import run_words, segments, shell_script
from scarguard.adapters._sql_changes import mongo_changes, redis_changes, sql_changes

__all__ = ["database_changes"]


class _Client(NamedTuple):
    """How a database client is given what it runs."""

    language: str
    """``sql``, ``mongo`` (JavaScript) or ``redis`` (one command)."""
    options: Mapping[str, str]
    """Its options by what their value is: ``sql`` (run instead of standard input), ``init``
    (run before it), ``file`` (a script), ``value`` (anything else), ``attached`` (a value
    only when attached: mysql's ``-psecret``)."""
    sql_from: int | None
    """The first word after the options that is SQL (sqlite3 db "sql": 1), if any."""
    bundles: bool
    """Whether short options bundle (``psql -tAc 'sql'``)."""


def _client(
    language: str = "sql",
    *,
    sql: str = "",
    init: str = "",
    files: str = "",
    values: str = "",
    attached: str = "",
    sql_from: int | None = None,
    bundles: bool = True,
) -> _Client:
    kinds = {"value": values, "attached": attached, "init": init, "sql": sql, "file": files}
    options = {name: kind for kind, names in kinds.items() for name in names.split()}
    if not bundles:  # sqlite3's -cmd is also --cmd
        options.update({f"-{name}": kind for name, kind in options.items() if name[1] != "-"})
    return _Client(language, options, sql_from, bundles)


_MYSQL: Final = _client(
    sql="-e --execute", init="--init-command", attached="-p", values="-u --user -h --host -P "
    "--port -D --database -S --socket --defaults-file --defaults-extra-file"
)  # fmt: skip
_CLICKHOUSE: Final = _client(
    sql="-q --query", files="--queries-file", values="-h --host --port -u --user --password "
    "-d --database -f --format -C --config-file"
)  # fmt: skip
_MONGO: Final = _client(
    "mongo", sql="--eval", files="-f --file", bundles=False, values="--host --port -u "
    "--username -p --password --authenticationDatabase --authenticationMechanism"
)  # fmt: skip
_REDIS: Final = _client(
    "redis", files="--eval", bundles=False, values="-h -p -s -a -u -r -i -n -d -D -t --user "
    "--pass --sni --cacert --cacertdir --cert --key --rdb --pattern --count --cluster"
)  # fmt: skip
_CLIENTS: Final[Mapping[str, _Client]] = {
    "psql": _client(
        sql="-c --command", files="-f --file", values="-d --dbname -h --host -p --port -U "
        "--username -v --set --variable -P --pset -o --output -L --log-file -T -F -R"
    ),
    **dict.fromkeys(("mysql", "mariadb"), _MYSQL),
    "sqlite3": _client(
        init="-cmd", files="-init", values="-separator -newline -nullvalue -mmap -vfs "
        "-maxsize -heap -lookaside -pagecache -escape", sql_from=1, bundles=False
    ),
    "duckdb": _client(
        sql="-c -s", init="-cmd", files="-f -init", values="-separator -newline -nullvalue",
        sql_from=1, bundles=False
    ),
    **dict.fromkeys(
        ("clickhouse-client", "clickhouse client", "clickhouse-local", "clickhouse local"),
        _CLICKHOUSE,
    ),
    "cockroach sql": _client(
        sql="-e --execute", files="-f --file", values="-u --user -d --database --url --host "
        "--port --certs-dir --format"
    ),
    "cqlsh": _client(
        sql="-e --execute", files="-f --file", values="-u --username -p --password -k "
        "--keyspace --cqlversion --cqlshrc --encoding --request-timeout --connect-timeout"
    ),
    "sqlcmd": _client(sql="-Q -q", files="-i", values="-S -U -P -d -H -l -t -h -s -w -o -v -c"),
    **dict.fromkeys(("mongosh", "mongo"), _MONGO),
    **dict.fromkeys(("redis-cli", "valkey-cli"), _REDIS),
}  # fmt: skip
"""The clients, by program (or program and subcommand: ``cockroach sql``)."""
_HINT: Final = re.compile(
    r"(?<![\w.-])(?:psql|mysql|mariadb|sqlite3|duckdb|clickhouse(?:-client|-local)?|cockroach"
    r"|cqlsh|sqlcmd|mongosh|mongo|redis-cli|valkey-cli)(?![\w.-])"
)
"""A client's name: a command without one is not split at all (the usual case)."""
_DEPTH: Final = 3
"""How many ``bash -c '...'`` (or ``su -c``) deep a client is looked for."""


def database_changes(command: str, depth: int = 0) -> tuple[bool, str]:
    """Return whether a database client in a shell command changes a schema or data.

    Args:
        command: The shell command.
        depth: How many ``bash -c`` levels it is inside (bounds the recursion).

    Returns:
        Whether a client changes something, and the command with the quoted words of the
        clients that do not blanked, so that ``psql -c 'select 1 where 2 > 1'`` is no
        redirect into a file and its ``;`` no separator for the caller.
    """
    if not _HINT.search(command):
        return False, command
    kept: list[str] = []  # the command, its clients' quoted words blanked
    done = 0
    for words, stdin in segments(command):
        texts = run_words(w.text for w in words)
        if not texts:
            continue
        program = os.path.basename(texts[0])
        script = shell_script(program, texts)
        if script is not None and depth < _DEPTH and database_changes(script, depth + 1)[0]:
            return True, command  # bash -c "psql -c 'create table ...'"
        client = _CLIENTS.get(program)
        if client is None and len(texts) > 1:  # cockroach sql
            client, texts = _CLIENTS.get(f"{program} {texts[1]}"), texts[1:]
        if client is None:
            continue
        if _client_changes(client, texts[1:], stdin):
            return True, command
        for word in words:
            if word.quoted:
                kept += [command[done : word.start], " " * (word.end - word.start)]
                done = word.end
    return False, "".join(kept) + command[done:]


def _client_changes(client: _Client, words: list[str], stdin: bool) -> bool:
    """Return whether a client run with these words (its options...) changes something."""
    given, positional = _given(client, words)
    if given.get("file"):
        return True  # a script we do not read
    if client.language == "redis":  # (--pipe: a mass insert from standard input)
        return "--pipe" in words or redis_changes(positional) or (stdin and not positional)
    if client.language == "mongo" and any(w.endswith((".js", ".mongodb")) for w in positional):
        return True
    runs = given.get("sql", [])
    if client.sql_from is not None:
        runs = [*runs, *positional[client.sql_from :]]
    judge = mongo_changes if client.language == "mongo" else sql_changes
    if any(judge(text) for text in (*runs, *given.get("init", ()))):
        return True
    return stdin and not runs  # what it reads from a pipe or a file is not seen


def _given(client: _Client, words: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Return the values of a client's options by kind, and its other words in order."""
    given: dict[str, list[str]] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word == "--":
            positional.extend(words[i:])
            break
        if len(word) < 2 or word[0] != "-":
            positional.append(word)
            continue
        name, inline, value = word.partition("=") if word[1] == "-" else (word, "", "")
        if name not in client.options and client.bundles and name[1] != "-":
            # -tAc: flags, then the first letter taking a value (the rest of the word, or
            # the next word, is the value)
            letter = next((k for k, c in enumerate(name) if k and f"-{c}" in client.options), 0)
            if not letter:
                continue
            name, value = f"-{name[letter]}", name[letter + 1 :]
            inline = value
        kind = client.options.get(name)
        if kind is None or kind == "attached":
            continue
        if not inline:
            if i == len(words):
                break
            value, i = words[i], i + 1
        given.setdefault(kind, []).append(value)
    return given, positional
