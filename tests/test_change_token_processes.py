"""The SQLite change token against other processes: every commit is seen at the next check.

A check runs no statement while the WAL-index header in the ``-shm`` file is unchanged
(``stores.sqlite._shm``), and decides on the cached constraint index while the token is.
Here another process (a :class:`~helpers.peer.Peer`) bans or lifts a call right after
whatever rewrites that header without a commit, or resets the write-ahead log, or replaces
the file's content: checkpoints of every mode, automatic checkpoints, the log restarting
with new salts, the last connection closing, a restore through SQLite's backup API and
``FailureMemory.restore``. The observing memory in this process must decide the very next
call on what the file says now: refuse the call just banned, allow the one just lifted.
(Its checks read the header every time here, as they do once the 1 ms for which a header
that showed nothing new is trusted has passed: see ``test_store_sqlite``.)

These tests are SQLite's alone: the JSON and PostgreSQL stores have no WAL, ``-shm`` or
checkpoint to rewrite. Another process's ban and lift are seen on every store kind in
``test_fast_path_processes``, ``test_change_token_threads`` and ``test_memory_persistence``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.peer import Peer
from scarguard import FailureMemory
from scarguard.errors import ToolBlocked
from scarguard.guard.decorator import guarded_tool

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("header_read_at_every_check")]

TOOL = "deploy"
ARGS = {"target": "prod"}
OTHER = {"target": "staging"}
BAN = "for _ in range(2): m.record('deploy', {'target': 'prod'}, error='permission denied')"
"""Two identical failures: the call is banned."""
LIFT_BY_SUCCESS = (
    "m.check('deploy', {'target': 'prod'}); m.record('deploy', {'target': 'prod'}, ok=True)"
)
"""The identical call succeeding (as an agent runs it: checked, then recorded)."""
LIFT_BY_FORGET = "result = len(m.forget(tool='deploy'))"
MODES = ("PASSIVE", "FULL", "RESTART", "TRUNCATE")


def salts(path: Path) -> bytes:
    """The log's salts in the WAL-index header: they change when the log restarts."""
    return Path(f"{path}-shm").read_bytes()[32:40]


def allowed(memory: FailureMemory) -> bool:
    return memory.check(TOOL, ARGS).allowed


def checkpoint(mode: str) -> str:
    """Peer code: checkpoint the log in ``mode`` on a plain connection of its own."""
    return (
        "c = sqlite3.connect(path, isolation_level=None)\n"
        f"result = c.execute('PRAGMA wal_checkpoint({mode})').fetchone()\n"
        "c.close()"
    )


@pytest.fixture
def ours(path: Path, peer: Peer) -> Iterator[FailureMemory]:
    memory = FailureMemory(path)
    yield memory
    memory.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("by", ["peer", "ours"])
def test_a_ban_right_after_a_checkpoint_is_refused_at_the_next_call(
    ours: FailureMemory, peer: Peer, mode: str, by: str
) -> None:
    """A checkpoint rewrites the header (a TRUNCATE or RESTART one restarts the log): the
    ban another process records right after it is still seen."""
    assert allowed(ours) and allowed(ours)  # the index is loaded, the header trusted
    if by == "peer":
        peer.run(checkpoint(mode))
    else:
        ours.store._db.get().execute(f"PRAGMA wal_checkpoint({mode})")  # type: ignore[attr-defined]
    assert allowed(ours)
    peer.run(BAN)
    assert not allowed(ours)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lift", [LIFT_BY_SUCCESS, LIFT_BY_FORGET], ids=["success", "forget"])
def test_a_lift_right_after_a_checkpoint_is_allowed_at_the_next_call(
    ours: FailureMemory, peer: Peer, mode: str, lift: str
) -> None:
    """The ban was learned here; another process checkpoints, then lifts it (the identical
    call succeeding, or ``forget``): the next call here is allowed."""
    for _ in range(2):
        ours.record(TOOL, ARGS, error="permission denied")
    assert not allowed(ours)
    peer.run(checkpoint(mode))
    assert not allowed(ours)
    peer.run(lift)
    assert allowed(ours)


def test_bans_and_lifts_across_many_log_restarts_are_each_seen(
    ours: FailureMemory, peer: Peer, path: Path
) -> None:
    """The peer checkpoints after every commit (``wal_autocheckpoint=1``), so the log
    restarts over and over with new salts and small frame counts; this memory reads the
    token between each of the peer's steps and must decide every step right (a new target
    each round: each ban is a first one)."""
    peer.run("m.store._db.get().execute('PRAGMA wal_autocheckpoint=1')")
    seen = set()
    for round_ in range(12):
        args = {"target": f"prod-{round_}"}
        assert ours.check(TOOL, args).allowed
        peer.run(BAN.replace("'prod'", repr(args["target"])))
        assert not ours.check(TOOL, args).allowed, f"round {round_}: the ban is not seen"
        seen.add(salts(path))
        peer.run(checkpoint(MODES[round_ % 4]))
        assert not ours.check(TOOL, args).allowed
        peer.run(LIFT_BY_FORGET)
        assert ours.check(TOOL, args).allowed, f"round {round_}: the lift is not seen"
        seen.add(salts(path))
    assert len(seen) > 2  # the log did restart with new salts


def test_a_lift_after_automatic_checkpoints_of_a_long_log_is_seen(
    ours: FailureMemory, peer: Peer, path: Path
) -> None:
    """More than 1000 frames written by the peer: SQLite checkpoints on its own and the
    next writer restarts the log; the lift that follows is seen here."""
    for _ in range(2):
        ours.record(TOOL, ARGS, error="permission denied")
    assert not allowed(ours)
    salt = salts(path)
    peer.run(
        "for i in range(400):\n"
        "    m.record('read_file', {'path': f'missing-{i}.py'}, error='ENOENT: no such file')"
    )
    assert not allowed(ours)
    assert salts(path) != salt  # checkpointed on its own, and the log restarted
    peer.run(LIFT_BY_FORGET)
    assert allowed(ours)


def test_a_new_log_after_the_last_connection_closed_is_read(path: Path) -> None:
    """Every connection closes (the ``-wal`` and ``-shm`` files are deleted), another
    process opens the file afresh and bans the call: a memory opened here afterwards (this
    process still holds the deleted ``-shm`` file's descriptor) refuses it; the same
    after a lift by yet another process."""
    first = FailureMemory(path)
    assert allowed(first)
    old = os.stat(f"{path}-shm").st_ino
    first.close()
    with Peer(path) as other:
        other.run(BAN)
    assert not os.path.exists(f"{path}-shm") and not os.path.exists(f"{path}-wal")
    with Peer(path) as other:
        other.run("result = m.check('deploy', {'target': 'prod'}).allowed")
        assert os.stat(f"{path}-shm").st_ino != old
        again = FailureMemory(path)
        try:
            assert not allowed(again)
            other.run(LIFT_BY_FORGET)
            assert allowed(again)
        finally:
            again.close()


def test_a_restore_through_the_backup_api_is_seen_at_the_next_call(
    ours: FailureMemory, peer: Peer, path: Path, tmp_path: Path
) -> None:
    """Another process restores a backup into the file with SQLite's backup API: a backup
    taken before the ban lifts it here, one taken with the ban brings it back."""
    clean = tmp_path / "clean.db"
    banned = tmp_path / "banned.db"
    peer.run(f"b = sqlite3.connect({str(clean)!r}); sqlite3.connect(path).backup(b); b.close()")
    peer.run(BAN)
    peer.run(f"b = sqlite3.connect({str(banned)!r}); sqlite3.connect(path).backup(b); b.close()")
    assert not allowed(ours)
    restore = (
        "src = sqlite3.connect({!r}); dst = sqlite3.connect(path)\n"
        "src.backup(dst); src.close(); dst.close()"
    )
    peer.run(restore.format(str(clean)))
    assert allowed(ours)
    peer.run(restore.format(str(banned)))
    assert not allowed(ours)


@pytest.mark.parametrize(
    "rewrite", ["VACUUM", "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA optimize"]
)
def test_a_lift_right_after_a_vacuum_by_another_process_is_seen(
    ours: FailureMemory, peer: Peer, rewrite: str
) -> None:
    """``VACUUM`` rewrites every page of the file through the log (a maintenance job):
    the ban learned here stays, and the lift that follows is seen."""
    for _ in range(2):
        ours.record(TOOL, ARGS, error="permission denied")
    assert not allowed(ours)
    peer.run(
        "c = sqlite3.connect(path, isolation_level=None)\n"
        f"c.executescript({rewrite!r})\n"
        "c.close()"
    )
    assert not allowed(ours)
    peer.run(LIFT_BY_FORGET)
    assert allowed(ours)


def test_a_snapshot_restored_by_another_process_is_seen(ours: FailureMemory, peer: Peer) -> None:
    """``FailureMemory.restore`` in another process: back to before the ban, then with it."""
    peer.run("clean = m.snapshot()")
    peer.run(BAN)
    peer.run("banned = m.snapshot()")
    assert not allowed(ours)
    peer.run("m.restore(clean)")
    assert allowed(ours)
    peer.run("m.restore(banned)")
    assert not allowed(ours)


def test_two_memories_in_one_process_on_one_file_see_each_other(path: Path) -> None:
    """Two memories of this process share the ``-shm`` descriptor: bans and lifts made
    through one are seen by the other at its next call, in both directions."""
    one, two = FailureMemory(path), FailureMemory(path)
    try:
        for round_ in range(4):
            writer, reader = (one, two) if round_ % 2 else (two, one)
            args = {"target": f"prod-{round_}"}  # each ban a first one
            assert reader.check(TOOL, args).allowed and writer.check(TOOL, args).allowed
            for _ in range(2):
                writer.record(TOOL, args, error="permission denied")
            assert not reader.check(TOOL, args).allowed
            writer.forget(tool=TOOL)
            assert reader.check(TOOL, args).allowed
        two.close()  # the shared descriptor stays open for the other
        with Peer(path) as other:
            other.run(BAN)
            assert not allowed(one)
    finally:
        one.close()
        two.close()


def _in_child(run: object) -> int:
    """Fork; in the child call ``run()`` and exit 0 if it returned True, 1 otherwise."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            code = 0 if run() else 1  # type: ignore[operator]
        finally:
            os._exit(code)
    return pid


def _status(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_sees_a_lift_made_after_the_fork(ours: FailureMemory, peer: Peer) -> None:
    """The child inherits a loaded index and a trusted header; the ban is lifted by
    another process after the fork: the child's next call is allowed, and a ban recorded
    afterwards by the parent is refused in the child."""
    peer.run(BAN)
    assert not allowed(ours)
    lifted_r, lifted_w = os.pipe()
    banned_r, banned_w = os.pipe()
    answers_r, answers_w = os.pipe()

    def child() -> bool:
        os.read(lifted_r, 1)
        first = allowed(ours)
        os.write(answers_w, b"1" if first else b"0")
        os.read(banned_r, 1)
        second = ours.check(TOOL, OTHER).allowed
        os.write(answers_w, b"1" if second else b"0")
        return first and not second

    pid = _in_child(child)
    peer.run(LIFT_BY_FORGET)
    os.write(lifted_w, b"x")
    assert os.read(answers_r, 1) == b"1"
    for _ in range(2):
        ours.record(TOOL, OTHER, error="permission denied")
    os.write(banned_w, b"x")
    assert os.read(answers_r, 1) == b"0"
    assert _status(pid) == 0
    for fd in (lifted_r, lifted_w, banned_r, banned_w, answers_r, answers_w):
        os.close(fd)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_parent_sees_what_a_forked_child_records(ours: FailureMemory) -> None:
    """A child bans the call, then a SIGKILLed child lifts it: the parent decides both."""
    assert allowed(ours)

    def ban() -> bool:
        for _ in range(2):
            ours.record(TOOL, ARGS, error="permission denied")
        return True

    assert _status(_in_child(ban)) == 0
    assert not allowed(ours)
    ready_r, ready_w = os.pipe()

    def lift_then_hang() -> bool:
        ours.forget(tool=TOOL)
        os.write(ready_w, b"x")
        signal.pause()
        return True

    pid = _in_child(lift_then_hang)
    assert os.read(ready_r, 1) == b"x"
    os.kill(pid, signal.SIGKILL)
    assert _status(pid) == -signal.SIGKILL
    assert allowed(ours)
    os.close(ready_r)
    os.close(ready_w)


def test_the_forget_command_a_refusal_names_lifts_it_for_the_running_process(
    path: Path, tmp_path: Path
) -> None:
    """The refusal tells the operator to run ``scarguard forget <id>``; run in another
    process (the real CLI), the guarded tool here runs at its next call, and the CLI's
    ``show`` agrees the ban is gone."""
    memory = FailureMemory(path, project="webapp")
    ran: list[str] = []

    @guarded_tool(memory)
    def deploy(target: str) -> str:
        ran.append(target)
        if len(ran) <= 2:
            raise PermissionError("permission denied")
        return f"deployed {target}"

    try:
        for _ in range(2):
            with pytest.raises(PermissionError):
                deploy("prod")
        with pytest.raises(ToolBlocked) as refused:
            deploy("prod")
        found = re.search(r"scarguard forget (\w+)", str(refused.value))
        assert found is not None
        done = subprocess.run(
            [sys.executable, "-m", "scarguard", "forget", found.group(1), "--path", str(path),
             "-p", "webapp", "-y"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert deploy("prod") == "deployed prod"
        assert ran == ["prod"] * 3
    finally:
        memory.close()
