"""Argument binding: the mapping the memory sees for a call, whatever its shape."""

from __future__ import annotations

from typing import Any

import pytest

from scarguard.guard.binding import ArgBinder


def build(target: str, jobs: int = 1, *, verbose: bool = False) -> None:
    """Build a target."""


def test_positional_keyword_and_default_arguments_bind_by_name() -> None:
    """However the call spells its arguments, the mapping names each, defaults included."""
    binder = ArgBinder(build)
    expected = {"target": "all", "jobs": 1, "verbose": False}
    assert binder.bind(None, ("all",), {}) == expected
    assert binder.bind(None, (), {"target": "all"}) == expected
    assert binder.bind(None, ("all", 4), {"verbose": True}) == {
        "target": "all",
        "jobs": 4,
        "verbose": True,
    }
    assert binder.names() == ("target", "jobs", "verbose")
    assert not binder.accepts_any_keyword()


def test_a_call_that_does_not_fit_still_binds() -> None:
    """A call the tool will refuse with TypeError binds as ``*args`` and its keywords."""
    binder = ArgBinder(build)
    assert binder.bind(None, ("a", 2, 3), {"x": 1}) == {"*args": ["a", 2, 3], "x": 1}
    assert binder.bind(None, (), {"jobs": 2}) == {"*args": [], "jobs": 2}


def test_var_args_and_var_keywords_are_flattened() -> None:
    """``*args`` is kept as a list under its name; ``**kwargs`` entries join the mapping."""

    def tool(path: str, *rest: str, **options: Any) -> None:
        """A tool."""

    binder = ArgBinder(tool)
    assert binder.bind(None, ("a", "b", "c"), {"mode": "w"}) == {
        "path": "a",
        "rest": ["b", "c"],
        "mode": "w",
    }
    assert binder.accepts_any_keyword()


def test_self_is_bound_and_left_out() -> None:
    """A method's instance binds its first parameter and is not in the mapping."""

    class Builder:
        def build(self, target: str) -> None:
            """Build."""

    binder = ArgBinder(Builder.build)
    assert binder.bind(Builder(), ("all",), {}) == {"target": "all"}
    assert binder.bind(None, (Builder(), "all"), {}) == {"target": "all"}


def test_classmethod_and_staticmethod_objects_are_unwrapped() -> None:
    """A classmethod's ``cls`` is left out; a staticmethod binds all its parameters."""

    def with_cls(cls: type, target: str) -> None:
        """Build."""

    def plain(target: str) -> None:
        """Build."""

    assert ArgBinder(classmethod(with_cls)).bind(object, ("all",), {}) == {"target": "all"}
    assert ArgBinder(staticmethod(plain)).bind(None, ("all",), {}) == {"target": "all"}


@pytest.mark.parametrize("ignore", [["jobs"], ("jobs", "verbose")])
def test_ignored_names_are_left_out(ignore: list[str]) -> None:
    """Names given as ``ignore`` never reach the mapping, nor count as dropped twice."""
    binder = ArgBinder(build, ignore=ignore)
    bound = binder.bind(None, ("all", 3), {})
    assert "target" in bound
    assert not set(ignore) & set(bound)
    assert set(binder.dropped) == set(ignore)
