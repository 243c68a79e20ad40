"""Run git in a test's repository, with a fixed identity (no global configuration needed)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> None:
    """Run ``git args...`` in ``root``; fail the test if it fails."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
