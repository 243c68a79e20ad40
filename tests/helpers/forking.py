"""Ask a forked child a question: fork, evaluate in the child, return its answer."""

from __future__ import annotations

import os
from collections.abc import Callable


def in_child(check: Callable[[], bool]) -> bool:
    """Fork; return what ``check()`` gave in the child (which then exits at once)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, then leave without running the parent's cleanup
        try:
            os.write(write, b"1" if check() else b"0")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.close(read)
    os.waitpid(pid, 0)
    return answer == b"1"
