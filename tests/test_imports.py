"""Importing scarguard is light: no event loop, TLS, CLI, migration or framework modules."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("asyncio", "ssl", "click", "sqlite_utils", "psycopg", "tenacity", "wrapt")
FRAMEWORKS = ("langchain_core", "pydantic_ai", "agents", "autogen_core", "smolagents", "crewai")


def _modules(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return the modules it ended up with."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def _heavy(loaded: list[str]) -> list[str]:
    roots = {name.split(".")[0] for name in loaded}
    return sorted(roots & {*HEAVY, *FRAMEWORKS})


def test_import_scarguard_loads_at_most_120_modules_and_nothing_heavy() -> None:
    """`import scarguard` stays under 120 modules, with none of the heavy ones."""
    loaded = _modules("import scarguard")
    assert _heavy(loaded) == []
    assert len(loaded) <= 120, len(loaded)


@pytest.mark.slow
def test_the_engine_names_load_nothing_heavy() -> None:
    """Importing the engine's names loads no event loop, TLS, CLI, migrations or framework."""
    assert _heavy(_modules("from scarguard import FailureMemory, PromptGuard, Policy")) == []


@pytest.mark.slow
def test_a_check_and_a_record_on_an_existing_file_load_nothing_heavy(tmp_path: Path) -> None:
    """A hook-like process (open a store, check, record) loads nothing heavy.

    Only a new file needs its migrations (sqlite-utils); the file here exists already.
    """
    path = tmp_path / "memory.db"
    _modules(f"from scarguard import FailureMemory\nFailureMemory({str(path)!r}).close()")
    loaded = _modules(
        "from scarguard import FailureMemory\n"
        f"m = FailureMemory({str(path)!r})\n"
        "m.check('read_file', {'path': 'a.txt'})\n"
        "m.record('read_file', {'path': 'a.txt'}, error='No such file or directory')\n"
        "m.close()"
    )
    assert _heavy(loaded) == []


@pytest.mark.slow
def test_guarded_tool_loads_the_decorator_only_when_used() -> None:
    """Names are imported on first use: the decorator's module appears only then."""
    before = _modules("import scarguard\nscarguard.FailureMemory")
    after = _modules("import scarguard\nscarguard.guarded_tool")
    assert "scarguard.guard.decorator" not in before
    assert "scarguard.guard.decorator" in after


def test_every_public_name_resolves() -> None:
    """Every name in __all__ is reachable as an attribute, and dir() lists them."""
    import scarguard

    for name in scarguard.__all__:
        assert getattr(scarguard, name) is not None
    assert set(scarguard.__all__) <= set(dir(scarguard))
    with pytest.raises(AttributeError):
        _ = scarguard.no_such_name  # type: ignore[attr-defined]


def test_cli_help_does_not_load_the_engine() -> None:
    """`scarguard --help` parses and prints without importing the memory or any store."""
    loaded = _modules(
        "import contextlib, io\nfrom scarguard.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['--help'])"
    )
    assert "scarguard.memory" not in loaded
    assert _heavy(loaded) == []


def test_only_package_inits_re_export() -> None:
    """A module's ``__all__`` names only what it defines; re-exports live in ``__init__.py``."""
    import ast

    root = Path(__file__).resolve().parent.parent / "src" / "scarguard"
    re_exported: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {
            alias.asname or alias.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom | ast.Import)
            for alias in node.names
        }
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                names = [n for n in ast.literal_eval(node.value) if n in imported]
                if names:
                    re_exported[str(path.relative_to(root))] = names
    assert re_exported == {}
