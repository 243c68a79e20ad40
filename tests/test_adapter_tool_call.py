"""Tests for the tool-call adapter: action classes, targets, fingerprints."""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scarguard.adapters import (
    API_CALL,
    DELETE,
    FILE_CREATE,
    FILE_EDIT,
    FILE_READ,
    SEARCH,
    SHELL_EXEC,
    TOOL_ACTION_CLASSES,
    Adapter,
    ToolCallAdapter,
)
from scarguard.adapters._actions import tool_words
from scarguard.adapters.tool_call import DEFAULT_VOLATILE_KEYS
from scarguard.canonical import canonical_json
from scarguard.learning.progress import changes_results
from scarguard.model import Blame, Call, Outcome

ADAPTER = ToolCallAdapter()


@pytest.mark.parametrize(
    ("tool", "words"),
    [
        ("str_replace_editor", ("str", "replace", "editor")),
        ("editFile", ("edit", "file")),
        ("ReadFile", ("read", "file")),
        ("fs.writeFile", ("fs", "write", "file")),
        ("run-shell", ("run", "shell")),
        ("HTTPGet", ("http", "get")),
        ("getURL", ("get", "url")),
        ("READ_FILE", ("read", "file")),
        ("read_file2", ("read", "file", "2")),
        ("XMLHttpRequest", ("xml", "http", "request")),
    ],
)
def test_tool_words_split_every_naming_convention(tool: str, words: tuple[str, ...]) -> None:
    """A tool name splits into lower-case words whatever its naming convention."""
    assert tool_words(tool) == words


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("str_replace_editor", FILE_EDIT),
        ("str_replace", FILE_EDIT),
        ("editFile", FILE_EDIT),
        ("apply_patch", FILE_EDIT),
        ("multi_edit", FILE_EDIT),
        ("MultiEdit", FILE_EDIT),
        ("search_replace", FILE_EDIT),
        ("notebook-edit", FILE_EDIT),
        ("fs.writeFile", FILE_CREATE),
        ("write_file", FILE_CREATE),
        ("create_file", FILE_CREATE),
        ("mkdir", FILE_CREATE),
        ("run-shell", SHELL_EXEC),
        ("Bash", SHELL_EXEC),
        ("execute_command", SHELL_EXEC),
        ("run_terminal_cmd", SHELL_EXEC),
        ("python_repl", SHELL_EXEC),
        ("grep", SEARCH),
        ("web_search", SEARCH),
        ("codebase_search", SEARCH),
        ("Glob", SEARCH),
        ("http.get", API_CALL),
        ("HTTPGet", API_CALL),
        ("fetch", API_CALL),
        ("web_fetch", API_CALL),
        ("requests.post", API_CALL),
        ("requests.patch", API_CALL),
        ("http_delete", API_CALL),
        ("spreadsheet_api", API_CALL),
        ("rm", DELETE),
        ("unlink", DELETE),
        ("fs.unlink", DELETE),
        ("delete_file", DELETE),
        ("deleteFile", DELETE),
        ("read_file", FILE_READ),
        ("READ_FILE", FILE_READ),
        ("fs.readFile", FILE_READ),
        ("cat", FILE_READ),
        ("view", FILE_READ),
    ],
)
def test_classify_action_by_tool_name(tool: str, expected: str) -> None:
    """The words of a tool's name decide its action class in every naming convention."""
    assert ADAPTER.classify_action(tool, {}) == expected


@pytest.mark.parametrize(
    "tool",
    [
        "thread_dump",
        "overview",
        "spreadsheet",
        "already_done",
        "integrep",
        "catalog",
        "reader_mode",
        "preview_pane",
        "bread_recipe",
        "shredder",
        "rmsprop_config",
        "restart_service",
    ],
)
def test_classify_action_ignores_substrings(tool: str) -> None:
    """Substrings of words never classify a tool ("thread" is not "read")."""
    assert ADAPTER.classify_action(tool, {}) is None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"command": "ls -la"}, SHELL_EXEC),
        ({"cmd": "make"}, SHELL_EXEC),
        ({"script": "echo hi"}, SHELL_EXEC),
        ({"path": "a.py", "old_string": "x", "new_string": "y"}, FILE_EDIT),
        ({"path": "a.py", "old_str": "x", "new_str": "y"}, FILE_EDIT),
        ({"file": "a.py", "search": "x", "replace": "y"}, FILE_EDIT),
        ({"path": "a.py", "content": "print(1)"}, FILE_CREATE),
        ({"path": "a.py", "file_text": "print(1)"}, FILE_CREATE),
        ({"url": "https://x.test/api", "method": "POST", "body": {}}, API_CALL),
        ({"url": "https://x.test/"}, API_CALL),
        ({"query": "retry decorator"}, SEARCH),
        ({"pattern": "def main", "path": "src"}, SEARCH),
        ({"path": "a.py"}, FILE_READ),
        ({"file_path": "a.py", "offset": 100}, FILE_READ),
        ({"command": "view", "path": "a.py"}, FILE_READ),
        ({"command": "create", "path": "a.py", "file_text": "x"}, FILE_CREATE),
        ({"path": ""}, None),
        ({"x": 1}, None),
        ({}, None),
    ],
)
def test_classify_action_falls_back_on_argument_shape(
    args: dict[str, Any], expected: str | None
) -> None:
    """A name that says nothing leaves the class to the shape of the arguments."""
    assert ADAPTER.classify_action("do_it", args) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("view", FILE_READ),
        ("create", FILE_CREATE),
        ("str_replace", FILE_EDIT),
        ("insert", FILE_EDIT),
        ("undo_edit", FILE_EDIT),
        ("something_else", FILE_EDIT),
    ],
)
def test_multi_command_editor_is_classified_by_its_command(command: str, expected: str) -> None:
    """A multi-command editor tool takes its class from its ``command`` argument."""
    args = {"command": command, "path": "a.py"}
    assert ADAPTER.classify_action("str_replace_based_edit_tool", args) == expected


@pytest.mark.parametrize(
    ("operation", "expected"),
    [
        ("create_file", FILE_CREATE),
        ("update_file", FILE_EDIT),
        ("delete_file", DELETE),
        ("rename_file", FILE_EDIT),
    ],
)
def test_apply_patch_is_classified_by_its_operation(operation: str, expected: str) -> None:
    """An apply_patch call takes its class from its operation: creating needs no file."""
    args = {"type": operation, "path": "a.py", "diff": "+x\n"}
    assert ADAPTER.classify_action("apply_patch", args) == expected
    assert ADAPTER.requires_existing_target(ADAPTER.describe("apply_patch", args)) is (
        expected != FILE_CREATE
    )


def test_a_type_argument_of_another_tool_is_no_patch_operation() -> None:
    """A tool whose name says it reads or runs keeps its class whatever its ``type``."""
    assert ADAPTER.classify_action("read_file", {"type": "delete_file", "path": "a"}) == FILE_READ
    assert ADAPTER.classify_action("bash", {"type": "create_file"}) == SHELL_EXEC


def test_shell_tool_command_argument_is_not_an_editor_command() -> None:
    """A shell tool whose command is "view" stays a shell command."""
    assert ADAPTER.classify_action("bash", {"command": "view"}) == SHELL_EXEC


@pytest.mark.parametrize(
    ("tool", "args"), [("grep", {}), ("str_replace_editor", {"command": "view"})]
)
def test_explicit_action_classes_come_first(tool: str, args: dict[str, Any]) -> None:
    """An explicit tool-to-class mapping overrides the name and the arguments."""
    adapter = ToolCallAdapter(action_classes={tool: "custom"})
    assert adapter.classify_action(tool, args) == "custom"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"path": "./src/../a.py"}, ("a.py",)),
        ({"path": "a//b/./c.py"}, ("a/b/c.py",)),
        (
            {
                "file": "a.py",
                "note": "not a target",
                "paths": ["b.py", "./a.py", "c.py"],
                "url": "https://x.test/a/",
            },
            ("a.py", "b.py", "c.py", "https://x.test/a/"),
        ),
        ({"destination": "new.py", "path": "old.py"}, ("new.py", "old.py")),
        ({"files": ("x.py", ["y.py"])}, ("x.py", "y.py")),
        ({"paths": {"b.py", "a.py"}}, ("a.py", "b.py")),
        ({"path": pathlib.Path("pkg/mod.py")}, ("pkg/mod.py",)),
        ({"path": 3, "files": [1, None, "a.py"], "url": b"https://x"}, ("a.py",)),
        ({"command": "pytest", "cwd": "/repo"}, ()),
        ({"path": ""}, ()),
        ({"urls": ["http://x.test//a/../b", "http://x.test//a/../b"]}, ("http://x.test//a/../b",)),
    ],
)
def test_extract_targets_finds_every_target(
    args: dict[str, Any], expected: tuple[str, ...]
) -> None:
    """Every target argument counts, lists flattened, in order, normalised and de-duplicated."""
    assert ADAPTER.extract_targets(args) == expected


def test_extract_targets_without_normalisation_keeps_paths_verbatim() -> None:
    """With ``normalise_paths=False`` paths keep their spelling (repeats still drop)."""
    adapter = ToolCallAdapter(normalise_paths=False)
    assert adapter.extract_targets({"path": "./a.py", "files": ["./a.py", "a.py"]}) == (
        "./a.py",
        "a.py",
    )


def test_custom_target_keys_replace_the_defaults() -> None:
    """Custom target keys are the only ones read."""
    adapter = ToolCallAdapter(target_keys=["notebook", "cwd"])
    assert adapter.extract_targets({"path": "a.py", "notebook": "n.ipynb", "cwd": "/w"}) == (
        "n.ipynb",
        "/w",
    )


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        (["./b.py", "b.py", "c.py"], ("b.py", "c.py")),
        ("d.py", ("d.py",)),
        ([], ()),
        (("https://x.test/",), ("https://x.test/",)),
    ],
)
def test_explicit_targets_override_extraction(targets: Any, expected: tuple[str, ...]) -> None:
    """Explicit targets replace the extracted ones and are normalised the same way."""
    call = ADAPTER.describe("read_file", {"path": "a.py"}, targets=targets)
    assert call.targets == expected


def test_describe_builds_the_call() -> None:
    """describe() fills tool, args, targets, action class and fingerprint, no params."""
    args = {"path": "./app.py", "old_string": "x", "new_string": "y"}
    call = ADAPTER.describe("edit_file", args, previous=Call("edit_file"))
    assert call == Call(
        tool="edit_file",
        args=args,
        targets=("app.py",),
        action_class=FILE_EDIT,
        fingerprint=ADAPTER.fingerprint("edit_file", args),
    )
    assert call.params == {}
    assert call.changed == ()


def test_fingerprint_ignores_key_order() -> None:
    """The order of the arguments does not change the fingerprint."""
    first = ADAPTER.describe("read", {"path": "a", "offset": 0, "limit": 10})
    second = ADAPTER.describe("read", {"limit": 10, "offset": 0, "path": "a"})
    assert first.fingerprint == second.fingerprint


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"path": "a", "offset": 0}, {"path": "a", "offset": 100}),
        ({"page": 1}, {"page": 2}),
        ({"n": 1}, {"n": "1"}),
        ({"path": "a"}, {"path": "b"}),
        ({"path": "a"}, {"path": "a", "limit": None}),
    ],
)
def test_fingerprint_keeps_every_significant_difference(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    """Numbers and other values are significant: pagination offsets are different calls."""
    assert ADAPTER.fingerprint("read", first) != ADAPTER.fingerprint("read", second)


def test_fingerprint_depends_on_the_tool() -> None:
    """The same arguments to two tools are two calls."""
    assert ADAPTER.fingerprint("read", {"path": "a"}) != ADAPTER.fingerprint("view", {"path": "a"})


@pytest.mark.parametrize("key", sorted(DEFAULT_VOLATILE_KEYS))
def test_default_volatile_keys_are_ignored(key: str) -> None:
    """Request ids, timestamps and nonces do not change the fingerprint."""
    base = {"path": "a"}
    assert ADAPTER.fingerprint("read", {**base, key: "1"}) == ADAPTER.fingerprint("read", base)


def test_volatile_keys_per_tool_apply_to_that_tool_only() -> None:
    """Per-tool volatile keys are ignored for that tool and kept for the others."""
    adapter = ToolCallAdapter(volatile_keys={"search": ["cursor"]})
    assert adapter.fingerprint("search", {"q": "x", "cursor": 1}) == adapter.fingerprint(
        "search", {"q": "x", "cursor": 2}
    )
    assert adapter.fingerprint("other", {"q": "x", "cursor": 1}) != adapter.fingerprint(
        "other", {"q": "x", "cursor": 2}
    )
    assert adapter.fingerprint("other", {"request_id": 1}) == adapter.fingerprint(
        "other", {"request_id": 2}
    )


def test_volatile_star_entry_replaces_the_global_defaults() -> None:
    """A mapping's ``"*"`` entry replaces the keys ignored for every tool."""
    adapter = ToolCallAdapter(volatile_keys={"*": ["ts"]})
    assert adapter.fingerprint("t", {"ts": 1}) == adapter.fingerprint("t", {"ts": 2})
    assert adapter.fingerprint("t", {"request_id": 1}) != adapter.fingerprint(
        "t", {"request_id": 2}
    )


def test_volatile_collection_applies_to_every_tool() -> None:
    """A plain collection of volatile keys applies to every tool and replaces the defaults."""
    adapter = ToolCallAdapter(volatile_keys=["ts"])
    for tool in ("a", "b"):
        assert adapter.fingerprint(tool, {"ts": 1}) == adapter.fingerprint(tool, {"ts": 2})
    assert adapter.fingerprint("a", {"nonce": 1}) != adapter.fingerprint("a", {"nonce": 2})


class _Opaque:
    def __init__(self) -> None:
        self.name = "opaque"
        self._secret = object()


class _Hostile:
    __slots__ = ()

    def __str__(self) -> str:
        raise RuntimeError("no str for you")


HUGE = "x" * 10_000_000
ODD_ARGS = [
    {"obj": object()},
    {"obj": _Opaque()},
    {"data": b"\x00\xff" * 1000},
    {"tags": {"b", "a", "c"}},
    {"text": HUGE},
    {"nan": math.nan, "inf": math.inf},
    {"nested": [[[[[[[[[[["deep"]]]]]]]]]]]},
    {"hostile": _Hostile()},
    {"many": list(range(100_000))},
]


@pytest.mark.parametrize("args", ODD_ARGS)
def test_fingerprint_of_odd_arguments_is_deterministic_and_bounded(args: dict[str, Any]) -> None:
    """Non-JSON arguments fingerprint the same twice, never raise, and serialise small."""
    first = ADAPTER.describe("tool", args)
    second = ADAPTER.describe("tool", dict(args))
    assert first.fingerprint == second.fingerprint
    assert len(first.fingerprint) == 24
    if "hostile" not in args:
        assert len(canonical_json(args)) < 4_000


def test_fingerprint_of_huge_strings_sees_their_whole_content() -> None:
    """Two 10 MB strings that differ only at the end have different fingerprints."""
    assert ADAPTER.fingerprint("t", {"s": HUGE + "a"}) != ADAPTER.fingerprint(
        "t", {"s": HUGE + "b"}
    )


def test_fingerprint_of_bytes_sees_their_content() -> None:
    """Different bytes give different fingerprints."""
    assert ADAPTER.fingerprint("t", {"b": b"a"}) != ADAPTER.fingerprint("t", {"b": b"b"})


_STABLE_ARGS = {"path": "src/app.py", "tags": ["x", "y"], "n": 3, "f": 0.5, "s": "é"}
_SUBPROCESS = """
import json, sys
from scarguard.adapters import ToolCallAdapter
args = json.loads(sys.argv[1])
args["set"] = {"alpha", "beta", "gamma", "delta"}
print(ToolCallAdapter().fingerprint("edit_file", args))
"""


@pytest.mark.slow
@pytest.mark.parametrize("hash_seed", ["0", "1", "12345"])
def test_fingerprint_is_stable_across_processes(hash_seed: str) -> None:
    """A fingerprint computed in another process (another hash seed) is the same."""
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    result = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS, json.dumps(_STABLE_ARGS)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    here = ADAPTER.fingerprint(
        "edit_file", {**_STABLE_ARGS, "set": {"alpha", "beta", "gamma", "delta"}}
    )
    assert result.stdout.strip() == here


@pytest.mark.parametrize(
    ("action_class", "mutating", "needs_target"),
    [
        (FILE_READ, False, True),
        (FILE_EDIT, True, True),
        (FILE_CREATE, True, False),
        (DELETE, True, True),
        (SHELL_EXEC, False, False),
        (SEARCH, False, False),
        (API_CALL, False, False),
        (None, False, False),
    ],
)
def test_mutating_and_requires_existing_target_by_class(
    action_class: str | None, mutating: bool, needs_target: bool
) -> None:
    """Edits, creations, deletions mutate; reads, edits, deletions need an existing target."""
    call = Call("t", targets=("a.py",), action_class=action_class)
    assert ADAPTER.mutating(call) is mutating
    assert ADAPTER.requires_existing_target(call) is needs_target


def test_every_action_class_is_listed() -> None:
    """TOOL_ACTION_CLASSES lists the seven classes once each."""
    assert len(set(TOOL_ACTION_CLASSES)) == len(TOOL_ACTION_CLASSES) == 7


@pytest.mark.parametrize(
    ("overrides", "name", "expected"),
    [
        ({}, "edit_failed", None),
        ({"edit_failed": Blame.HARNESS}, "edit_failed", Blame.HARNESS),
        ({"edit_failed": "agent"}, "edit_failed", Blame.AGENT),
        ({"edit_failed": Blame.HARNESS}, "rate_limited", None),
    ],
)
def test_blame_uses_the_overrides(
    overrides: dict[str, Any], name: str, expected: Blame | None
) -> None:
    """blame() returns the override for the signature's name, else None."""
    adapter = ToolCallAdapter(blame_overrides=overrides)
    signature: Any = SimpleNamespace(name=name)
    assert adapter.blame(signature, Outcome(ok=False, error="boom")) == expected


def test_tool_call_adapter_is_an_adapter() -> None:
    """The adapter satisfies the runtime-checkable Adapter protocol."""
    assert isinstance(ADAPTER, Adapter)
    assert ADAPTER.name == "tool_call"
    assert ADAPTER.scaling_keys == frozenset()


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("make  deploy", "make deploy"),
        ("  npm\ttest  ", "npm test"),
        ("echo 'a  b'   c", "echo 'a  b' c"),
        ('grep "x  y" f', 'grep "x  y" f'),
        ("echo a\\  b", "echo a\\  b"),
        ("cat  <<< 'a  b'   x", "cat <<< 'a  b' x"),
        ("echo '<<EOF'   x", "echo '<<EOF' x"),
    ],
)
def test_commands_compare_by_their_words(command: str, words: str) -> None:
    """Runs of blanks outside quotes collapse; quoted and escaped blanks stay."""
    from scarguard.adapters._shell import command_text

    assert command_text(command) == words
    assert ADAPTER.fingerprint("bash", {"command": command}) == ADAPTER.fingerprint(
        "bash", {"command": words}
    )


HEREDOC_FIXES = [
    # python reads the body: an indentation fixed, nothing else, is another program
    (
        "python3  - <<EOF\nif True:\n        total = 1\n    total += 1\nEOF",
        "python3  - <<EOF\nif True:\n        total = 1\n        total += 1\nEOF",
    ),
    # a file written from a quoted here-document, then run
    (
        "cat > a.py <<'PY'\ndef f():\n  return 1\n    x = 2\nPY\npython3 a.py",
        "cat > a.py <<'PY'\ndef f():\n    return 1\n    x = 2\nPY\npython3 a.py",
    ),
    # <<- strips leading tabs from its body and delimiter, not spaces
    ("cat <<-END\n\tyaml:\n\t  key: 1\n\tEND", "cat <<-END\n\tyaml:\n\t    key: 1\n\tEND"),
]


@pytest.mark.parametrize(("before", "after"), HEREDOC_FIXES)
def test_a_here_document_body_keeps_its_blanks(before: str, after: str) -> None:
    """Blanks inside a here-document's body are what the program reads: kept as written.

    Collapsed, a fix of indentation alone would fingerprint as the failed command and be
    refused. The lines around the body still compare by their words.
    """
    from scarguard.adapters._shell import command_text

    assert ADAPTER.fingerprint("bash", {"command": before}) != ADAPTER.fingerprint(
        "bash", {"command": after}
    )
    assert command_text(before).split("\n")[1:] == before.split("\n")[1:]
    spaced = before.replace("python3 a.py", "python3   a.py").replace("cat >", "cat   >")
    assert ADAPTER.fingerprint("bash", {"command": spaced}) == ADAPTER.fingerprint(
        "bash", {"command": before}
    )


def test_a_script_keeps_the_indentation_of_its_lines() -> None:
    """A multi-line script (Python in a ``script`` argument) keeps each line's indentation:
    one fixed only in its indentation is another call. Blanks inside a line still collapse."""
    from scarguard.adapters._shell import command_text

    broken = "if True:\n        total = 1\n    total += 1\n"
    fixed = "if True:\n        total = 1\n        total += 1\n"
    assert ADAPTER.fingerprint("run_script", {"script": broken}) != ADAPTER.fingerprint(
        "run_script", {"script": fixed}
    )
    assert command_text("  make  a\n    make   b  ") == "make a\n    make b"
    assert command_text("for f in *; do\n\techo  $f\ndone") == "for f in *; do\n\techo $f\ndone"


def test_an_unclosed_here_document_keeps_the_rest_as_written() -> None:
    """A body never closed by its delimiter runs to the command's end, kept as written."""
    from scarguard.adapters._shell import command_text

    assert command_text("cat  <<EOF\na   b\nc") == "cat <<EOF\na   b\nc"
    assert command_text("cat <<A <<B\n1  1\nA\n2  2\nB\necho   x") == (
        "cat <<A <<B\n1  1\nA\n2  2\nB\necho x"
    )


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("make", "shell_exec"),
        ("npm", "shell_exec"),
        ("pytest", "shell_exec"),
        ("cargo_build", "shell_exec"),
        ("git_status", "shell_exec"),
        ("docker", "shell_exec"),
        ("go_build", "shell_exec"),
        ("go_to_definition", None),
        ("make_request", "api_call"),
        ("git_read_file", "file_read"),
    ],
)
def test_tools_named_for_a_build_or_run_program_are_shell_commands(
    tool: str, expected: str | None
) -> None:
    """make, npm, pytest, cargo, git, docker... are shell commands; common words are not."""
    assert ADAPTER.classify_action(tool, {"target": "x"}) == expected


def test_a_program_tool_that_changes_the_workspace_is_mutating() -> None:
    """`git(args="merge x")` and `make("clean")` change the workspace; `make("build")` not."""
    git = ADAPTER.describe("git", {"args": "merge feature"})
    assert ADAPTER.mutating(git)
    assert ADAPTER.mutating(ADAPTER.describe("make", {"target": "clean"}))
    assert not ADAPTER.mutating(ADAPTER.describe("make", {"target": "build"}))


def test_paths_are_normalised_against_the_root() -> None:
    """An absolute path under the root becomes relative; one outside it stays absolute."""
    rooted = ToolCallAdapter(root="/ws/project")
    assert rooted.describe("read_file", {"path": "/ws/project/src/a.py"}).targets == ("src/a.py",)
    assert rooted.describe("read_file", {"path": "/ws/projectx/a.py"}).targets == (
        "/ws/projectx/a.py",
    )
    assert rooted.describe("read_file", {"path": "/ws/other.py"}).targets == ("/ws/other.py",)
    same = [rooted.fingerprint("read_file", {"path": p}) for p in ("./a.py", "x/../a.py", "a.py")]
    assert len(set(same)) == 1


_SCREENED = [
    ("read_file", {"path": "a.py"}),
    ("read_file", {"path": ""}),
    ("run_query", {"x": 1}),
    ("run_query", {"sql": "select 1"}),
    ("git", {"args": "status"}),
    ("git", {"args": "checkout main"}),
    ("make", {}),
    ("bash", {"command": "rm -rf build"}),
    ("bash", {"command": "ls"}),
    ("tool", {"cmd": "pytest > out.txt"}),
    ("str_replace_editor", {"command": "view", "path": "a.py"}),
    ("str_replace_editor", {"command": "create", "path": "a.py", "file_text": "x"}),
    ("edit", {"path": "a.py", "old": "x", "new": "y"}),
    ("apply_patch", {"type": "create_file", "path": "a.py", "diff": "+x"}),
    ("apply_patch", {"type": "delete_file", "path": "a.py", "diff": None}),
    ("helper", {"path": "a.py"}),
    ("helper", {"path": "", "content": "x"}),
    ("helper", {"url": "https://example.com/a"}),
    ("helper", {"query": "foo"}),
    ("helper", {"old_string": "a", "new_string": "b"}),
    ("write_file", {"file_path": "a.py", "content": "x"}),
    ("delete_file", {"path": "a.py"}),
    ("fetch", {"url": "https://example.com", "path": "out.html"}),
    ("search", {"pattern": "x", "path": "src"}),
    ("lookup", {"key": "k"}),
]


@pytest.mark.parametrize(("tool", "args"), _SCREENED)
def test_screen_of_names_agrees_with_screening_the_call(tool: str, args: dict[str, Any]) -> None:
    """What the argument names alone tell is what screening the call tells; a screen that
    depends on the values is not given (or leaves whether it mutates to the values)."""
    adapter = ToolCallAdapter(action_classes={"lookup": "api_call"})
    kept = adapter.screen_of_names(tool, list(args))
    screened = adapter.screen(tool, args)
    if kept is None:
        return
    assert (kept.action_class, kept.may_target) == (screened.action_class, screened.may_target)
    if kept.mutating is None:
        assert adapter.mutates(tool, kept.action_class, args) is screened.mutating
    else:
        assert kept.mutating is screened.mutating
    assert kept.changes is changes_results(screened.action_class, args, screened.mutating)


def test_screen_of_names_declines_what_the_values_decide() -> None:
    """Shell commands, editor commands, patch operations and a path that decides the class are
    screened by value."""
    adapter = ToolCallAdapter()
    assert adapter.screen_of_names("bash", ["command"]) is None
    assert adapter.screen_of_names("str_replace_editor", ["command", "path"]) is None
    assert adapter.screen_of_names("apply_patch", ["type", "path", "diff"]) is None
    assert adapter.screen_of_names("helper", ["path", "content"]) is None
    assert adapter.screen_of_names("read_file", ["path"]) is not None

    class Own(ToolCallAdapter):
        pass

    assert Own().screen_of_names("read_file", ["path"]) is None


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["path", "file", "dest", "url", "x", "offset"]),
            st.sampled_from(["", "a.py", "b.py", "c.py", 3, None, ["a.py"]]),
        ),
        max_size=6,
    )
)
def test_string_targets_keep_argument_order_without_repeats(items: list[tuple[str, Any]]) -> None:
    """The string values of target keys, in order, empty ones and repeats left out; ``None``
    when a target value is not a string."""
    from scarguard.adapters._arguments import string_targets

    args = dict(items)
    keys = frozenset({"path", "file", "dest", "url"})
    values = [v for k, v in args.items() if k in keys]
    if any(type(v) is not str for v in values):
        assert string_targets(args, keys) is None
    else:
        assert string_targets(args, keys) == tuple(dict.fromkeys(v for v in values if v))


def test_string_targets_are_extracted_as_the_general_walk_does() -> None:
    """Strings (in argument order, normalised, empty ones and repeats left out) and lists."""
    adapter = ToolCallAdapter(root="/ws")
    assert adapter.extract_targets({"path": "/ws/a.py", "dest": "./a.py", "file": ""}) == ("a.py",)
    assert adapter.extract_targets({"x": 1}) == ()
    mixed = {"path": "b.py", "paths": ["c.py", "b.py"], "dir": pathlib.Path("d")}
    assert adapter.extract_targets(mixed) == ("b.py", "c.py", "d")


def test_a_subclass_normalising_targets_its_own_way_fingerprints_by_it() -> None:
    """A subclass's own normalise_target is what arguments are normalised with: two
    spellings it takes for one target are one call."""

    class Lowered(ToolCallAdapter):
        def normalise_target(self, target: str) -> str:
            return super().normalise_target(target).lower()

    adapter = Lowered()
    upper = adapter.describe("read_file", {"path": "A.PY"})
    lower = adapter.describe("read_file", {"path": "a.py"})
    assert upper.targets == lower.targets == ("a.py",)
    assert upper.fingerprint == lower.fingerprint
    plain = ToolCallAdapter()
    assert plain.fingerprint("read_file", {"path": "A.PY"}) != plain.fingerprint(
        "read_file", {"path": "a.py"}
    )
