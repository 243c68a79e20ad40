"""The distribution: the wheel carries the licence and metadata; README links work off-site."""

from __future__ import annotations

import email
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT, check=True, capture_output=True, timeout=240,
    )  # fmt: skip
    (built,) = out.glob("scarguard-*.whl")
    return zipfile.ZipFile(built)


def _metadata(wheel: zipfile.ZipFile) -> email.message.Message:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return email.message_from_bytes(wheel.read(name))


def _urls(wheel: zipfile.ZipFile) -> dict[str, str]:
    return dict(u.split(", ", 1) for u in _metadata(wheel).get_all("Project-URL", []))


@pytest.mark.slow
def test_license_file_is_in_the_repository_and_the_wheel(wheel: zipfile.ZipFile) -> None:
    """The MIT licence text ships in the repository and in the wheel's dist-info."""
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    (name,) = [n for n in wheel.namelist() if n.endswith("dist-info/licenses/LICENSE")]
    assert wheel.read(name).decode() == text
    assert _metadata(wheel)["License-Expression"] == "MIT"


@pytest.mark.slow
def test_wheel_metadata_names_urls_python_versions_os_and_typing(wheel: zipfile.ZipFile) -> None:
    """The package index shows where the project lives and what it supports."""
    meta = _metadata(wheel)
    urls = _urls(wheel)
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
    assert all(u.startswith(urls["Repository"]) for u in urls.values())
    classifiers = set(meta.get_all("Classifier", []))
    for version in ("3.10", "3.11", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Operating System ::") for c in classifiers)
    assert "scarguard/py.typed" in wheel.namelist()


def test_readme_links_are_absolute_and_point_at_files_of_the_repository(
    wheel: zipfile.ZipFile,
) -> None:
    """Every README link works on the package index: absolute, and naming a file that exists."""
    links = _LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(links) >= 10
    blob = f"{_urls(wheel)['Repository']}/blob/main/"
    for link in links:
        assert link.startswith("https://"), f"relative README link {link!r}"
        if link.startswith(blob):
            path = link[len(blob) :].split("#")[0]
            assert (ROOT / path).is_file(), f"README links to {path}, which is not in the repo"
