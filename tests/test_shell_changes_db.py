"""Database clients: a change of a schema or data lifts refusals, a read does not (real psql)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from helpers.postgres import PG_URL, require_postgres
from scarguard import FailureMemory, ToolBlocked, guarded_tool
from scarguard.adapters import ToolCallAdapter
from scarguard.adapters._shell_changes import shell_changes_workspace
from scarguard.adapters._sql_changes import SQL_READ
from scarguard.testing import FakeClock

CHANGES = [
    # psql
    "psql -c 'create table t (id int)'",
    "psql -h 127.0.0.1 -U postgres -d test -c 'INSERT INTO t VALUES (1)'",
    "psql -tAc 'update t set id = 2'",
    "psql --command='delete from t'",
    "psql -c 'select 1; insert into t values (1)'",
    "psql -c 'select 1;insert into t values (1)'",
    "psql -c '-- add the table\ncreate table t (id int)'",
    "psql -c '/* the table */ Create Table t (id int)'",
    "psql -c \"\\copy t from 'f.csv' csv\"",
    "psql -c 'COPY t FROM stdin'",
    "psql -c '\\i schema.sql'",
    "psql -f schema.sql",
    "psql --file=schema.sql test",
    "psql < x.sql",
    "psql test < x.sql",
    "cat x.sql | psql",
    "psql <<'EOF'\ncreate table t (id int);\nEOF",
    "psql -c 'alter table t add column a int'",
    "psql -c 'drop table t'",
    "psql -c 'truncate t'",
    "psql -c 'grant select on t to reader'",
    "psql -c 'revoke select on t from reader'",
    "psql -c 'merge into t using s on t.id = s.id when matched then delete'",
    "psql -c 'select * into t2 from t'",
    "psql -c 'explain analyze delete from t'",
    "psql -c 'with gone as (delete from t returning *) select count(*) from gone'",
    "psql -c \"select 'drop table ' || tablename from pg_tables\" -c '\\gexec'",
    "sudo -u postgres psql -c 'create database app'",
    "PGPASSWORD=secret psql -c 'drop table t'",
    "/usr/lib/postgresql/16/bin/psql -c 'create index on t (id)'",
    "kubectl exec -it db-0 -- psql -U app -c 'create table t (id int)'",
    "ssh db-host 'psql -c \"create table t (id int)\"'",
    "bash -lc \"psql -c 'create table t (id int)'\"",
    "su postgres -c \"psql -c 'create table t (id int)'\"",
    'psql -c "$(cat change.sql)"',
    # mysql, mariadb
    "mysql -u root -e 'create table t (id int)'",
    "mysql -uroot -psecret -e 'select 1; replace into t values (1)'",
    'mariadb --execute="rename table t to u"',
    "mysql app < dump.sql",
    "mysql -e 'source seed.sql'",
    # sqlite3, duckdb
    "sqlite3 db.sqlite 'create table t (a int)'",
    "sqlite3 db.sqlite 'select 1' 'insert into t values (1)'",
    "echo 'create table t(a int);' | sqlite3 db",
    "sqlite3 db.sqlite < schema.sql",
    "sqlite3 db.sqlite '.read schema.sql'",
    "sqlite3 db.sqlite '.import data.csv t'",
    "sqlite3 -init setup.sql db.sqlite",
    "sqlite3 db.sqlite 'pragma user_version = 2'",
    "duckdb app.duckdb 'create table t as select 42'",
    "duckdb app.duckdb -c 'insert into t values (1)'",
    "duckdb -f load.sql app.duckdb",
    # the others
    "clickhouse-client --query='insert into t values (1)'",
    "clickhouse client -q 'alter table t delete where id = 1'",
    "cockroach sql --insecure -e 'upsert into t values (1)'",
    "cqlsh -e 'BEGIN BATCH INSERT INTO ks.t (a) VALUES (1); APPLY BATCH;'",
    "cqlsh -f schema.cql",
    "sqlcmd -S . -Q 'EXEC dbo.seed'",
    "sqlcmd -S . -Q 'SELECT 1\nINSERT INTO t VALUES (1)'",
    "sqlcmd -S . -i schema.sql",
    "mongosh app --eval 'db.users.insertOne({name: \"a\"})'",
    "mongosh --quiet --eval 'db.users.findOneAndUpdate({}, {$set: {a: 1}})'",
    "mongo app --eval 'db.dropDatabase()'",
    "mongosh app seed.js",
    "redis-cli SET k v",
    "redis-cli -n 2 hset h f v",
    "redis-cli FLUSHALL",
    "valkey-cli -h cache expire k 10",
    "redis-cli JSON.SET doc $ '{}'",
    "redis-cli CONFIG SET maxmemory 1gb",
    "cat commands.txt | redis-cli --pipe",
    "redis-cli --eval script.lua k",
    # loaders that change data whatever their arguments
    "pg_restore -d app dump.pgdata",
    "mongorestore dump/",
]

READS = [
    "psql -c 'select 1'",
    "psql -h 127.0.0.1 -U postgres -d test -c 'SELECT * FROM t'",
    'psql -c "select * from t where a > 1"',
    "psql -c \"select 'insert; drop table t' as text\"",
    "psql -c 'select created_at, updated_by from t'",
    "psql -c '-- insert into t\nselect 1'",
    "psql -c '/* drop table t; */ select 1'",
    "psql -c 'explain select * from t'",
    "psql -c 'explain delete from t'",
    "psql -c 'show search_path'",
    "psql -c 'vacuum t'",
    "psql -c '\\dt'",
    "psql -c '\\d t'",
    "psql -c \"\\copy t to 'f.csv' csv\"",
    "psql -c 'copy (select * from t) to stdout'",
    "psql -c \"select data #>> '{a}' from t\"",
    "psql -Atc 'select count(*) from t'",
    "echo x | psql -c 'select 1'",
    "psql -l",
    "psql -c 'select 1' 2>&1",
    "psql -c 'select 1' # create table t",
    "mysql -u root -e 'show tables'",
    "mysql -uroot -psecret -e 'select * from t for update'",
    "sqlite3 db.sqlite 'select count(*) from t'",
    "sqlite3 db.sqlite .tables",
    "sqlite3 -header db.sqlite '.schema t'",
    "sqlite3 db.sqlite 'pragma table_info(t)'",
    "duckdb app.duckdb -c 'select 42'",
    "clickhouse client -q 'select 1'",
    "cockroach sql --insecure -e 'show tables'",
    "cqlsh -e 'select * from ks.t'",
    "sqlcmd -S . -Q 'SELECT name FROM sys.tables'",
    "mongosh --quiet --eval 'db.users.find({createdAt: 1}).count()'",
    "redis-cli GET k",
    "redis-cli -n 2 hgetall h",
    "redis-cli --scan --pattern 'user:*'",
    "redis-cli CONFIG GET maxmemory",
]


@pytest.mark.parametrize("command", CHANGES)
def test_a_database_client_that_changes_a_schema_or_data_changes_the_world(command: str) -> None:
    """A write, DDL, grant, or SQL the client reads from a file, pipe or redirect counts."""
    assert shell_changes_workspace(command)
    adapter = ToolCallAdapter()
    assert adapter.mutating(adapter.describe("bash", {"command": command}))


@pytest.mark.parametrize("command", READS)
def test_a_database_client_that_reads_changes_nothing(command: str) -> None:
    """A query, a description or an export (``\\copy t to``) is no change of the world."""
    assert not shell_changes_workspace(command)
    adapter = ToolCallAdapter()
    assert not adapter.mutating(adapter.describe("bash", {"command": command}))


@pytest.mark.parametrize(
    ("command", "changes"),
    [
        ('psql -c "select * from t where a > 1" > rows.txt', True),  # a file written
        ('psql -c "select * from t where a > 1" | tee rows.txt', True),
        ('psql -c "select 1; rm -rf build"', False),  # (rm is SQL text here)
        ("psql -c 'select 1' && rm -rf build", True),
        ("psql -c 'select 1' && bash -c 'echo 1 > marker'", True),
        ('echo "a > b" && psql -c "select a > 1"', False),  # (quoted: no redirect anywhere)
    ],
)
def test_only_a_client_s_quoted_sql_is_read_past(command: str, changes: bool) -> None:
    """A ``>`` or ``;`` quoted in a client's SQL is no redirect or separator; others are."""
    assert shell_changes_workspace(command) is changes


def test_sql_past_what_is_read_counts_as_a_change() -> None:
    """SQL longer than the read bound is not read, so it may change anything."""
    select = "select 1 " + " " * (SQL_READ - 20)
    assert not shell_changes_workspace(f"psql -c '{select}'")
    assert shell_changes_workspace(f"psql -c '{select}{' ' * 20}'")


@pytest.mark.parametrize(
    ("command", "changes"),
    [
        ("psql -c '" + "select 1; " * 30_000 + "'", True),  # (past the read bound)
        ("psql -c 'select 1' " + "'a' " * 75_000, False),
        ("psql -c 'select 1' \"" + "a" * 300_000, False),  # (an unclosed quote)
        ("psql -c 'select 1' " + "'" * 300_001, False),
        ('psql -c "select 1" ' + '\\"' * 150_000, False),
        ("psql -c 'select 1' " + "(" * 300_000, False),
        ("psql -c 'select 1' " + "<" * 300_000, False),
        ("psql -c 'select 1' " + "1" * 300_000, False),
        ("psql -c 'select 1';" * 16_000 + "psql -c 'drop table t'", True),
        ("bash -c " * 37_500 + "psql -c 'drop table t'", False),  # (bash -c bash: no psql)
        ("psql -" + "A" * 300_000 + "c 'drop table t'", True),
        ("psql -c '" + "/*" * 2_000 + "'", False),
        ("psql -c '" + "'\\''" * 1_000 + "'", False),
        ("mongosh --eval '" + "a" * 4_000 + "'", False),
        ("mongosh --eval '" + "a (" * 1_300 + "'", False),
    ],
)
def test_a_hostile_command_is_judged_in_bounded_work(command: str, changes: bool) -> None:
    """300 KB of quotes, brackets, redirects or nesting: linear scans, the right answer."""
    assert len(command) > 3_000
    assert shell_changes_workspace(command) is changes


# --- through the guard, against real clients -------------------------------------------------


def guarded_shell(memory: FailureMemory, root: Path, **env: str) -> Callable[[str], str]:
    """A guarded ``bash`` tool running its command in ``root``, failing on a non-zero exit."""

    @guarded_tool(memory)
    def bash(command: str) -> str:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **env},
        )
        assert isinstance(memory.clock, FakeClock)
        memory.clock.advance(5)  # one model turn per call
        if done.returncode:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr or done.stdout}")
        return done.stdout

    return bash


@pytest.fixture
def postgres() -> Iterator[tuple[str, str]]:
    """Yield the psql command for the test server and a table name unique to the test; drop
    the table afterwards. Skip without the server or psql (fail if the server is required)."""
    require_postgres()
    if shutil.which("psql") is None:
        if os.environ.get("SCARGUARD_REQUIRE_POSTGRES") == "1":
            pytest.fail("needs the psql client; SCARGUARD_REQUIRE_POSTGRES=1")
        pytest.skip("needs the psql client")
    import psycopg

    table = f"scar_{uuid.uuid4().hex[:12]}"
    yield f"psql -X -q -v ON_ERROR_STOP=1 {shlex.quote(PG_URL)}", table
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {table}")


@pytest.mark.slow
def test_a_table_created_with_psql_lifts_the_refusal_of_a_select_on_it(
    tmp_path: Path, postgres: tuple[str, str]
) -> None:
    """``select`` fails (no such relation) and is refused; a read changes nothing; ``create
    table`` through the same tool does, and the select is allowed and succeeds."""
    psql, table = postgres
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    memory = FailureMemory(tmp_path / "memory.db", root=workspace, clock=FakeClock())
    bash = guarded_shell(memory, workspace)
    select = f"{psql} -At -c 'select count(*) from {table} where id > 0'"
    with pytest.raises(RuntimeError, match="does not exist"):
        bash(select)
    with pytest.raises(ToolBlocked):
        bash(select)
    assert bash(f"{psql} -At -c 'select 1'").strip() == "1"  # a read: still refused
    assert not memory.check("bash", {"command": select}).allowed
    bash(f"{psql} -c 'create table {table} (id int)'")
    assert bash(select).strip() == "0"


@pytest.mark.slow
def test_a_table_created_from_sql_piped_into_psql_lifts_the_refusal(
    tmp_path: Path, postgres: tuple[str, str]
) -> None:
    """SQL piped into psql is not seen: it counts as a change."""
    psql, table = postgres
    memory = FailureMemory(tmp_path / "memory.db", root=tmp_path, clock=FakeClock())
    bash = guarded_shell(memory, tmp_path)
    select = f"{psql} -At -c 'select count(*) from {table}'"
    with pytest.raises(RuntimeError, match="does not exist"):
        bash(select)
    with pytest.raises(ToolBlocked):
        bash(select)
    bash(f"echo 'create table {table} (id int); insert into {table} values (1);' | {psql}")
    assert bash(select).strip() == "1"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs the sqlite3 client")
def test_a_table_created_with_sqlite3_lifts_the_refusal_of_a_select_on_it(
    tmp_path: Path,
) -> None:
    """The database file is outside the workspace and named by a variable, so no file the
    memory watches changes: only the client's SQL tells that ``create table`` did."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    memory = FailureMemory(tmp_path / "memory.db", root=workspace, clock=FakeClock())
    bash = guarded_shell(memory, workspace, DB=str(tmp_path / "app.sqlite"))
    select = "sqlite3 \"$DB\" 'select count(*) from t where a > 0'"
    with pytest.raises(RuntimeError, match="no such table"):
        bash(select)
    with pytest.raises(ToolBlocked):
        bash(select)
    assert bash("sqlite3 \"$DB\" 'select 1'").strip() == "1"  # a read: still refused
    assert not memory.check("bash", {"command": select}).allowed
    bash("sqlite3 \"$DB\" 'create table t (a int)'")
    assert bash(select).strip() == "0"
