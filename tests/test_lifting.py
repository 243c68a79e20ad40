"""What a success disproves: evidence lifts constraints (rule 4 of DESIGN.md)."""

from __future__ import annotations

import pytest

from helpers.engine import EDIT, fail
from scarguard import ConstraintKind, FailureMemory


def test_creating_a_missing_file_lifts_the_target_fact(memory: FailureMemory) -> None:
    """A successful create on a missing path lifts the refusal to read it."""
    fail(memory, "read_file", {"path": "new.py"}, "No such file or directory: 'new.py'")
    assert not memory.check("read_file", {"path": "new.py"}).allowed
    result = memory.record("create_file", {"path": "new.py", "content": "x = 1"}, ok=True)
    assert [c.kind for c in result.lifted] == [ConstraintKind.MISSING_TARGET]
    assert memory.check("read_file", {"path": "new.py"}).allowed


def test_success_in_between_resets_the_exact_count(memory: FailureMemory) -> None:
    """Fail, succeed, fail: a flaky command is not refused."""
    args = {"command": "pytest -x"}
    fail(memory, "bash", args, "exit code 1")
    memory.record("bash", args, ok=True)
    fail(memory, "bash", args, "exit code 1")
    assert memory.check("bash", args).allowed


def test_rerunning_tests_after_an_edit_is_allowed(memory: FailureMemory) -> None:
    """Tests refused after two failures run again once an edit succeeded (rule 5)."""
    args = {"command": "pytest -x"}
    fail(memory, "bash", args, "exit code 1")
    fail(memory, "bash", args, "exit code 1")
    assert not memory.check("bash", args).allowed
    memory.record("edit_file", EDIT, ok=True)
    assert memory.check("bash", args).allowed


def test_failing_again_after_a_change_refuses_at_once(memory: FailureMemory) -> None:
    """The one run a change buys that fails the same way is refused again without a second try."""
    args = {"command": "pytest -x"}
    fail(memory, "bash", args, "exit code 1")
    fail(memory, "bash", args, "exit code 1")
    memory.record("edit_file", EDIT, ok=True)
    fail(memory, "bash", args, "exit code 1")
    assert not memory.check("bash", args).allowed
    memory.record("edit_file", {**EDIT, "new_string": "def go("}, ok=True)
    assert memory.check("bash", args).allowed


def test_deterministic_shell_failure_goes_stale_only_when_its_file_changes(
    memory: FailureMemory,
) -> None:
    """A syntax error in a script stays refused after unrelated edits, not after fixing it."""
    args = {"command": "node scripts/build.js --prod"}
    fail(memory, "bash", args, "SyntaxError: Unexpected token }")
    assert not memory.check("bash", args).allowed
    memory.record("edit_file", {"path": "README.md", "old_string": "a", "new_string": "b"}, ok=True)
    assert not memory.check("bash", args).allowed
    memory.record(
        "edit_file", {"path": "scripts/build.js", "old_string": "}", "new_string": ""}, ok=True
    )
    assert memory.check("bash", args).allowed


def test_changing_a_manifest_makes_every_shell_failure_stale(memory: FailureMemory) -> None:
    """Editing the Makefile lifts a refused make command it does not name."""
    args = {"command": "make build"}
    fail(memory, "bash", args, "make: *** No rule to make target 'build'.  Stop.")
    fail(memory, "bash", args, "make: *** No rule to make target 'build'.  Stop.")
    assert not memory.check("bash", args).allowed
    memory.record(
        "edit_file", {"path": "Makefile", "old_string": "all:", "new_string": "build:"}, ok=True
    )
    assert memory.check("bash", args).allowed


def test_killing_the_old_server_makes_the_port_failure_stale(memory: FailureMemory) -> None:
    """After a successful kill, the start that failed with port-in-use may run again."""
    start = {"command": "npm run start:dev"}
    for _ in range(2):
        fail(memory, "bash", start, "Error: listen EADDRINUSE: address already in use :::3000")
    assert not memory.check("bash", start).allowed
    memory.record("bash", {"command": "kill $(lsof -t -i:3000)"}, ok=True)
    assert memory.check("bash", start).allowed


def test_a_shell_command_creating_a_path_lifts_its_missing_fact(memory: FailureMemory) -> None:
    """touch on a path known to be missing lifts the refusal to read it."""
    fail(memory, "read_file", {"path": "notes/todo.md"}, "ENOENT: no such file or directory")
    assert not memory.check("read_file", {"path": "notes/todo.md"}).allowed
    memory.record("bash", {"command": "mkdir -p notes && touch notes/todo.md"}, ok=True)
    assert memory.check("read_file", {"path": "notes/todo.md"}).allowed


def test_reading_commands_lift_nothing(memory: FailureMemory) -> None:
    """A successful ls or test run does not make other commands' failures stale."""
    args = {"command": "node scripts/build.js"}
    fail(memory, "bash", args, "exit code 1")
    fail(memory, "bash", args, "exit code 1")
    memory.record("bash", {"command": "ls -la scripts"}, ok=True)
    assert not memory.check("bash", args).allowed


def test_a_batch_resets_what_each_of_its_successes_resets() -> None:
    """The batched flush resets, each once, every prefix reset_keys_for_success names for
    its described successes, and the strategy prefixes of its fast-path ones."""
    from scarguard.guard._successes import success_resets
    from scarguard.learning.keys import class_prefixes
    from scarguard.learning.lifting import reset_keys_for_success
    from scarguard.model import Call
    from scarguard.policy import Policy

    calls = [
        Call("read_file", {"path": "a.py"}, ("a.py",), "file_read", "fp1"),
        Call("read_file", {"path": "b.py"}, ("b.py",), "file_read", "fp2"),
        Call("bash", {"command": "make"}, (), "shell_exec", "fp3"),
        Call("helper", {}, (), None, "fp4"),
        Call("read_file", {"path": "a.py"}, ("a.py",), "file_read", "fp1"),
    ]
    quick = [("grep_text", "search"), ("noop", None), ("grep_text", "search")]
    per_tool, prefixes = success_resets([*calls, *quick])
    expected = {p for c in calls for p in reset_keys_for_success(c, Policy(), False)}
    expected |= {p for _, cls in quick if cls for p in class_prefixes(cls)}
    assert len(prefixes) == len(set(prefixes))
    assert set(prefixes) == expected
    assert per_tool == {"read_file": 3, "bash": 1, "helper": 1, "grep_text": 2, "noop": 1}


def test_a_write_to_the_collection_lifts_a_resource_s_404(memory: FailureMemory) -> None:
    """POST /users may create /users/42: its 404 ban goes stale (counts kept); reads do not."""
    get = {"method": "GET", "url": "https://api.example.com/users/42"}
    for _ in range(3):
        fail(memory, "http_request", get, "HTTP 404 Not Found", status_code=404)
    assert not memory.check("http_request", get).allowed
    for unrelated in (
        {"method": "POST", "url": "https://api.example.com/orders"},
        {"method": "GET", "url": "https://api.example.com/users"},
        {"method": "POST", "url": "https://api.example.com/users-archive"},
    ):
        memory.record("http_request", unrelated, ok=True)
        assert not memory.check("http_request", get).allowed, unrelated
    result = memory.record(
        "http_request", {"method": "post", "url": "https://api.example.com/users/"}, ok=True
    )
    assert [c.target for c in result.lifted] == ["https://api.example.com/users/42"]
    assert memory.check("http_request", get).allowed
    fail(memory, "http_request", get, "HTTP 404 Not Found", status_code=404)
    assert not memory.check("http_request", get).allowed  # the same 404 again: at once


def test_a_put_to_the_resource_itself_lifts_its_404(memory: FailureMemory) -> None:
    """PUT /items/7?force=1 writes /items/7: the 404 of GET /items/7 no longer stands."""
    get = {"method": "GET", "url": "https://api.example.com/items/7"}
    for _ in range(3):
        fail(memory, "http_request", get, "HTTP 404 Not Found", status_code=404)
    assert not memory.check("http_request", get).allowed
    memory.record("http_request", {"method": "PUT", "url": get["url"] + "?force=1"}, ok=True)
    assert memory.check("http_request", get).allowed


@pytest.mark.parametrize(
    ("failing", "error", "change"),
    [
        ("docker run app", "Unable to find image 'app:latest' locally\npull access denied",
         "docker build -t app ."),
        ("git checkout feature", "error: pathspec 'feature' did not match any file(s) known",
         "git fetch origin"),
        ("psql -c 'select * from users'", 'ERROR:  relation "users" does not exist',
         "alembic upgrade head"),
    ],
)  # fmt: skip
def test_a_change_of_the_world_outside_the_files_makes_a_ban_stale(
    memory: FailureMemory, failing: str, error: str, change: str
) -> None:
    """An image built, a branch fetched, a schema migrated: the failure may not hold now."""
    args = {"command": failing}
    for _ in range(3):
        fail(memory, "bash", args, error)
    assert not memory.check("bash", args).allowed
    memory.record("bash", {"command": "docker ps && git status"}, ok=True)  # reads only
    assert not memory.check("bash", args).allowed
    memory.record("bash", {"command": change}, ok=True)
    assert memory.check("bash", args).allowed
