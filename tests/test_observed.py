"""What a failure depends on, and whether an observer says it still holds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.factories import constraint
from scarguard import Redactor
from scarguard.errors import ScarguardWarning
from scarguard.learning.observed import (
    Revalidator,
    _unredacted,
    dependencies,
    is_shell_like,
    program_of,
)
from scarguard.model import Call

SHELL = frozenset({"shell"})


class Tokens:
    """An observer over a dictionary of tokens, counting how often it is asked."""

    def __init__(self, tokens: dict[str, str]) -> None:
        self.tokens = tokens
        self.asked = 0

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        return {p: self.tokens[p] for p in paths if p in self.tokens}

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        self.asked += 1
        return [p for p, token in tokens.items() if self.tokens.get(p) != token]


class Broken:
    """An observer that fails on every question."""

    def observe(self, paths: Sequence[str]) -> Mapping[str, str]:
        raise OSError("sandbox gone")

    def changed(self, tokens: Mapping[str, str]) -> list[str]:
        raise OSError("sandbox gone")


def test_shell_like_by_action_class_or_by_command_failure() -> None:
    """A stale class makes a call shell-like; so does a command's failure kind in any class."""
    assert is_shell_like(Call("bash", action_class="shell"), "error:abc", SHELL)
    assert is_shell_like(Call("t", action_class="file_read"), "command_not_found", SHELL)
    assert not is_shell_like(Call("t", action_class="file_read"), "edit_failed", SHELL)


def test_program_of_a_command_or_a_tool_named_for_one() -> None:
    """The program is the command's first word, else the tool's own name."""
    assert program_of(Call("bash", {"command": "make -j4 build"})) == "make"
    assert program_of(Call("bash", {"cmd": ""})) is None
    assert program_of(Call("pytest", {"path": "tests"})) == "pytest"


def test_dependencies_of_a_plain_call_are_its_path_targets() -> None:
    """A call that is not shell-like depends on its path targets only, URLs left out."""
    call = Call("read_file", targets=("a.py", "https://x.test/a"))
    assert dependencies(call, "boom", shell_like=False, normalise=str) == ("a.py",)


def test_dependencies_of_a_command_add_named_files_and_manifests() -> None:
    """A command depends on the files it and its error name, and its program's manifests."""
    call = Call("bash", {"command": "python scripts/build.py"}, action_class="shell")
    found = dependencies(
        call,
        'File "src/app.py", line 3\nSyntaxError: invalid syntax',
        shell_like=True,
        normalise=lambda p: p.removeprefix("./"),
    )
    assert "scripts/build.py" in found
    assert "src/app.py" in found
    assert len(found) == len(set(found))


def test_a_constraint_goes_stale_when_a_path_it_depends_on_changes() -> None:
    """Unchanged tokens keep a constraint; a changed one makes it stale, asked once."""
    observer = Tokens({"/w/a.py": "1"})
    check = Revalidator(observer)
    watched = constraint(params={"observed": check.observe(["/w/a.py"])})
    assert check.needs_observation(watched)
    assert not check.stale(watched)
    observer.tokens["/w/a.py"] = "2"
    assert check.stale(watched)
    assert not check.needs_observation(watched)
    asked = observer.asked
    assert check.stale(watched)
    assert observer.asked == asked  # the verdict is remembered for these tokens


def test_a_constraint_without_tokens_never_goes_stale() -> None:
    """Nothing observed, nothing to revalidate: the constraint holds."""
    check = Revalidator(Tokens({}))
    plain = constraint(params={})
    assert not check.needs_observation(plain)
    assert not check.stale(plain)


def test_a_broken_observer_keeps_every_constraint_and_warns_once() -> None:
    """Observation only lifts: an observer that fails keeps constraints, with one warning."""
    check = Revalidator(Broken())
    watched = constraint(params={"observed": {"/w/a.py": "1"}})
    with pytest.warns(ScarguardWarning, match="observer failed") as caught:
        assert check.observe(["/w/a.py"]) == {}
        assert not check.stale(watched)
        assert not check.stale(watched)
    assert len(caught) == 1
    assert check.observe([]) == {}


_REDACTORS = (
    Redactor(),
    Redactor(max_text=12, max_value=40),
    Redactor(max_value=8),
    Redactor(extra=lambda text: text.replace("make", "[M]")),
)


@given(
    st.sampled_from(range(len(_REDACTORS))),
    st.sampled_from(["make_target", "tests", "pytest", "deploy", "password=x", "x" * 13])
    | st.text(max_size=60),
)
def test_a_redactors_remembered_verdict_is_its_verdict(which: int, text: str) -> None:
    """Whether redaction leaves a condition's word alone: remembered, the same answer."""
    redactor = _REDACTORS[which]
    for _ in range(2):
        assert _unredacted(redactor, text) == (redactor(text) == text)
    assert _unredacted(lambda t: t.upper(), text) == (text.upper() == text)


def test_a_redactor_of_its_own_kind_is_asked_itself() -> None:
    """A subclass's own redaction decides, not the remembered verdicts of the base class."""

    class Shouting(Redactor):
        def __call__(self, text: str) -> str:
            return text.upper()

    assert not _unredacted(Shouting(), "tests")
    assert _unredacted(Shouting(), "TESTS")
