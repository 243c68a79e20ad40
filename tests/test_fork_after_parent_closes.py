"""A forked child keeps sharing the file with everyone after its parent closed the memory.

The child's connections are new, but SQLite's per-file state (the mapped ``-shm``, the
``-wal`` descriptor) is the process's, inherited with the parent's connections the child
keeps open and never uses. The child holds no lock of its own on the file then, so when the
parent (the last other connection) closes, SQLite deletes ``-wal`` and ``-shm`` under the
child: from then on the child and every new process use different logs. What the child must
see and be seen by holds for every store kind another process can open, so the test runs on
each (``helpers.shared``).
"""

from __future__ import annotations

import os

import pytest

from helpers.peer import Peer
from helpers.shared import Shared
from helpers.waiting import wait_until
from scarguard import FailureMemory

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork"),
    pytest.mark.usefixtures("header_read_at_every_check"),
]

CALL = ("deploy", {"target": "prod"})
BAN = "for _ in range(2): m.record('deploy', {'target': 'prod'}, error='permission denied')"


def test_a_child_outliving_its_parents_memory_sees_and_is_seen(shared: Shared) -> None:
    path = shared.location("memory")
    parent = FailureMemory(path)
    assert parent.check(*CALL).allowed
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(go_w)
            os.close(out_r)
            os.read(go_r, 1)
            assert parent.check(*CALL).allowed
            os.write(out_w, b"r")
            os.read(go_r, 1)  # the peer banned the call
            seen = wait_until(lambda: not parent.check(*CALL).allowed, timeout=5)
            for _ in range(2):
                parent.record("publish", {"target": "pypi"}, error="permission denied")
            os.write(out_w, b"1" if seen else b"0")
            os.read(go_r, 1)
            code = 0
        finally:
            os._exit(code)
    os.close(go_r)  # the child's ends: a child that ends early makes our reads return b""
    os.close(out_w)
    parent.close()  # the child goes on with the memory it inherited
    os.write(go_w, b"x")
    assert os.read(out_r, 1) == b"r"
    with Peer(path) as peer:
        peer.run(BAN)
        os.write(go_w, b"x")
        assert os.read(out_r, 1) == b"1", "the child never saw the other process's ban"
        refused = "result = m.check('publish', {'target': 'pypi'}).allowed"
        assert peer.run(refused) == "False", "the other process never saw the child's ban"
        os.write(go_w, b"x")
    os.close(go_w)
    os.close(out_r)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    fresh = FailureMemory(path)
    try:
        assert sorted(c.tool for c in fresh.constraints()) == ["deploy", "publish"]
    finally:
        fresh.close()
