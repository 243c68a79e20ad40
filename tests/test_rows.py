"""The failure row's dependency paths (``learning._rows``): kept only when no redaction
changes them, for the memory's redactor of the moment."""

from __future__ import annotations

from pathlib import Path

from scarguard import FailureMemory, Redactor
from scarguard.redact import REDACTED
from scarguard.testing import FakeClock

PYTEST_FAILED = "FAILED tests/test_x.py::test_a - assert 1 == 2\nexit code 1"


def _observed_paths(memory: FailureMemory, command: str) -> set[str]:
    for _ in range(3):
        memory.record("bash", {"command": command}, error=PYTEST_FAILED)
    (constraint,) = [c for c in memory.constraints() if c.params.observed and command in c.reason]
    return set(constraint.params.observed)


def test_dependency_paths_follow_the_memorys_redactor(tmp_path: Path) -> None:
    """A path the current redactor would change is not kept, even if an earlier one kept it."""
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    manifest = str(tmp_path / "pyproject.toml")
    memory = FailureMemory(":memory:", root=tmp_path, clock=FakeClock())
    assert manifest in _observed_paths(memory, "pytest -q")
    memory.redactor = Redactor(extra=lambda text: text.replace("pyproject", REDACTED))
    assert manifest not in _observed_paths(memory, "pytest -x")


def test_each_set_of_paths_keeps_the_same_paths_in_order_for_each_redactor(
    tmp_path: Path,
) -> None:
    """Asked again, a set of paths keeps what it kept (in order); another redactor judges anew."""
    memory = FailureMemory(":memory:", root=tmp_path, clock=FakeClock())
    paths = ("b.txt", "password=hunter2/a.txt", "a.txt", "b.txt")
    for _ in range(2):
        assert memory._kept_paths(paths) == (
            str(tmp_path / "b.txt"),
            str(tmp_path / "a.txt"),
            str(tmp_path / "b.txt"),
        )
        assert memory._kept_paths(paths[:1]) == (str(tmp_path / "b.txt"),)
    memory.redactor = Redactor(extra=lambda text: text.replace("a.txt", REDACTED))
    assert memory._kept_paths(paths) == (str(tmp_path / "b.txt"), str(tmp_path / "b.txt"))
