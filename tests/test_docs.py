"""Every ```python block of README.md and docs/*.md runs; every example script runs.

Each block runs in a fresh namespace with a fresh temporary working directory, so examples
that use the default store write into that directory. Fences tagged ``py-framework`` need a
third-party agent framework and are not run; fences tagged ``python requires=<module>``
run where that framework is installed (each in its own CI environment) and skip elsewhere.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scarguard
from scarguard.memory import set_default_memory

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "frameworks").glob("*.md")),
]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
_FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_REQUIRES = re.compile(r"requires=([\w.,]+)")


def _blocks() -> list[tuple[str, str, tuple[str, ...]]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for number, match in enumerate(_FENCE.finditer(text), 1):
            line = text[: match.start()].count("\n") + 1
            needs = _REQUIRES.search(match.group(1))
            modules = tuple(needs.group(1).split(",")) if needs else ()
            found.append((f"{page.relative_to(ROOT)}:{line}#{number}", match.group(2), modules))
    return found


BLOCKS = _blocks()


@pytest.fixture
def fresh_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SCARGUARD_PATH", raising=False)
    set_default_memory(None)
    yield tmp_path
    set_default_memory(None)


# A block that needs an agent framework imports it: slow (the quick loop leaves it out).
_BLOCK_PARAMS = [
    pytest.param(*block, id=block[0], marks=[pytest.mark.slow] if block[2] else [])
    for block in BLOCKS
]


@pytest.mark.parametrize(("where", "code", "requires"), _BLOCK_PARAMS)
def test_python_block_runs(
    where: str, code: str, requires: tuple[str, ...], fresh_cwd: Path
) -> None:
    """The documented example runs as written."""
    for module in requires:
        pytest.importorskip(module)
    exec(compile(code, where, "exec"), {"__name__": "__doc_example__"})


def test_docs_have_python_blocks() -> None:
    """The suite does find the documentation's examples."""
    assert len(BLOCKS) >= 20
    assert {Path(b[0].split(":")[0]).name for b in BLOCKS} >= {"README.md", "quickstart.md"}


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_script_runs(script: Path, tmp_path: Path) -> None:
    """Each example runs offline in a fresh folder, quickly, and prints something."""
    env = {k: v for k, v in os.environ.items() if k != "SCARGUARD_PATH"}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_examples_exist() -> None:
    """The four documented examples are there."""
    names = {p.name for p in EXAMPLES}
    assert names >= {"quickstart.py", "decorate_existing_tools.py", "prompt_templating.py",
                     "ml_sweep.py"}  # fmt: skip


def test_api_reference_names_every_public_name() -> None:
    """docs/api.md mentions every name in scarguard.__all__."""
    api = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [name for name in scarguard.__all__ if not re.search(rf"\b{name}\b", api)]
    assert not missing, f"docs/api.md does not document: {missing}"


def test_readme_mentions_the_demo() -> None:
    """The README tells a newcomer to run the demo."""
    assert "scarguard demo" in (ROOT / "README.md").read_text(encoding="utf-8")


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """The GitHub anchors of a page's headings."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", PAGES[1:], ids=[p.name for p in PAGES[1:]])
def test_docs_links_stay_inside_the_repository_and_resolve(page: Path) -> None:
    """Every relative link names a file of the repository (and a heading it has)."""
    text = page.read_text(encoding="utf-8")
    assert "DESIGN.md" not in text, "the design file is not part of the repository"
    prose = re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M))
    for link in _LINK.findall(prose):
        if link.startswith(("http://", "https://", "mailto:")):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.is_file() and ROOT in target.parents, f"{page.name}: {link}"
        if anchor and target.suffix == ".md":
            assert anchor in _anchors(target), f"{page.name}: no heading for {link}"
