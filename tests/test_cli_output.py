"""What a person reads from the real ``scarguard`` command on an 80-column terminal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scarguard import FailureMemory
from scarguard.cli.demo import PROJECT, SCRIPT, WORKSPACE

pytestmark = pytest.mark.slow  # runs the scarguard command in subprocesses

WIDTH = 80
SHELL_ERROR = "bash: line 1: {}: command not found"


def scarguard(*argv: str, cwd: Path, columns: int = WIDTH) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCARGUARD_PATH"}
    env.update(COLUMNS=str(columns), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "scarguard", *argv],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def too_wide(text: str, *, but: str = "") -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH and not (but and but in line)]


@pytest.fixture
def shell_db(tmp_path: Path) -> Path:
    """Six different shell commands that failed the same way, and two learned constraints."""
    path = tmp_path / "memory.db"
    start = time.time() - 3600
    clock = iter(start + 10 * i for i in range(1000))
    with FailureMemory(path, workspace="acme", project="web", clock=lambda: next(clock)) as m:
        for word in ("mkae", "pyhton", "gti", "nmp", "dokcer", "kubeclt"):
            m.record("shell", {"command": f"{word} build --verbose"},
                     error=SHELL_ERROR.format(word))  # fmt: skip
        for _ in range(2):
            m.record("edit_file", {"path": "src/app/handlers/orders.py", "old": "x", "new": "y"},
                     error="search string not found in src/app/handlers/orders.py")  # fmt: skip
            m.record("call_api", {"url": "https://api.example.com/v1/deploys"},
                     error="HTTP 503 Service Unavailable", status_code=503)  # fmt: skip
    return path


def test_show_fits_80_columns_with_an_arguments_column(shell_db: Path) -> None:
    """Every line of `show` fits 80 columns, and each shell failure shows its own command."""
    done = scarguard("show", "--path", str(shell_db), "-w", "acme", "-p", "web",
                     cwd=shell_db.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert too_wide(done.stdout, but=str(shell_db)) == []
    assert "arguments" in done.stdout.splitlines()[4]
    for word in ("mkae", "pyhton", "gti", "nmp", "dokcer", "kubeclt"):
        assert f'command="{word} build' in done.stdout
    constraints = done.stdout.split("Active constraints")[1]
    assert "this exact edit_file call" in constraints  # the reason, wrapped under its row


def test_tables_use_a_wider_terminal(shell_db: Path) -> None:
    """On 120 columns the arguments are no longer cut."""
    done = scarguard("show", "--path", str(shell_db), "-w", "acme", "-p", "web",
                     cwd=shell_db.parent, columns=120)  # fmt: skip
    assert 'path="src/app/handlers/orders.py"' in done.stdout
    assert max(len(line) for line in done.stdout.splitlines()) <= 120


def test_people_read_infrastructure_never_harness(shell_db: Path) -> None:
    """show, stats and the demo say "infrastructure"; JSON keeps the stored value."""
    where = ["--path", str(shell_db), "-w", "acme", "-p", "web"]
    for command in ("show", "stats"):
        out = scarguard(command, *where, cwd=shell_db.parent).stdout
        assert "infrastructure" in out and "harness" not in out
    demo = scarguard("demo", "--path", str(shell_db.parent / "demo.db"), cwd=shell_db.parent)
    assert "infrastructure" in demo.stdout and "harness" not in demo.stdout
    data = json.loads(scarguard("stats", *where, "--json", cwd=shell_db.parent).stdout)
    assert data["failures_by_blame"]["harness"] == 2


def _refusal(out: str, step: int) -> str:
    return out.split(f"\n{step:>2}  ", 1)[1].split("\n\n", 1)[0]


def test_demo_fits_80_columns_and_shows_what_the_llm_reads_in_full(tmp_path: Path) -> None:
    """The refusal is printed whole, wrapped with hanging indents; no step text is cut."""
    done = scarguard("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert too_wide(out, but=str(tmp_path)) == []
    assert "[...]" not in out and "…" not in out
    refusal = _refusal(out, 3)
    assert "LLM reads scarguard refused this edit_file call" in refusal
    text = " ".join(refusal.split("LLM reads", 1)[1].split())
    with FailureMemory(tmp_path / ".scarguard" / "memory.db", workspace=WORKSPACE,
                       project=PROJECT) as memory:  # fmt: skip
        decision = memory.check(SCRIPT[1].tool, SCRIPT[1].args)
    assert not decision.allowed and text == " ".join(decision.message.split())
    bullet = [line for line in refusal.splitlines() if line.lstrip().startswith("- This exact")]
    after = refusal.splitlines()[refusal.splitlines().index(bullet[0]) + 1]
    assert after.startswith(" " * (bullet[0].index("-") + 2)) and after.strip()  # hanging indent
    step_5 = _refusal(out, 5)
    assert "new='def handle_request(request, limit=50):')" in step_5
    block = [line for line in out.splitlines() if line.startswith("  | ")]
    continued = [b for b in block if b.startswith("  |   ")]
    assert block and continued  # a wrapped bullet of the guard block hangs under its text


def test_demo_stores_real_times_never_future_ones(tmp_path: Path) -> None:
    """After the demo, `show` reads recent real times: no "0s ago" from a clock run ahead."""
    before = time.time()
    assert scarguard("demo", cwd=tmp_path).returncode == 0
    assert scarguard("demo", cwd=tmp_path).returncode == 0
    after = time.time()
    with FailureMemory(tmp_path / ".scarguard" / "memory.db", workspace=WORKSPACE,
                       project=PROJECT) as memory:  # fmt: skip
        times = [f.at for f in memory.recent_failures(limit=100)]
    assert times and all(before <= t <= after for t in times)
    shown = scarguard("show", "-w", WORKSPACE, "-p", PROJECT, cwd=tmp_path).stdout
    assert "0s ago" not in shown and not re.search(r"\bin \d+[smhd]\b", shown.split("Active")[0])
    assert "just now" in shown or re.search(r"\b\d+s ago\b", shown)


@pytest.mark.parametrize(
    ("argv", "code", "words"),
    [
        (["export", "-o", "/nonexistent/dir/out.jsonl"], 2, "cannot write /nonexistent/dir"),
        (["show", "--kind", "bogus"], 2, "unknown kind 'bogus'"),
        (["forget", "0123456789ab", "--yes"], 2, "no active constraint has id 0123456789ab"),
        (["forget", "--kind", "bogus", "--yes"], 2, "unknown constraint kind 'bogus'"),
        (["show", "--since", "yesterday"], 2, "--since takes a duration"),
        (["import", "/nonexistent/dump.jsonl"], 2, "cannot read /nonexistent/dump.jsonl"),
        (["verify", "--path", "/nonexistent/memory.db"], 3, "no scarguard memory at"),
    ],
)
def test_errors_are_one_line_with_the_documented_exit_code(
    shell_db: Path, argv: list[str], code: int, words: str
) -> None:
    """Each error exits with its docs/cli.md code and one line on stderr, no traceback."""
    path = [] if "--path" in argv else ["--path", str(shell_db)]
    done = scarguard(*argv, *path, "-w", "acme", "-p", "web", cwd=shell_db.parent)
    assert done.returncode == code, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert words in done.stderr
    assert done.stdout == ""


def test_a_known_failure_kind_is_accepted_by_show(shell_db: Path) -> None:
    """--kind takes a failure kind of the bank even when this tenant never saw it."""
    done = scarguard("show", "--path", str(shell_db), "-w", "acme", "-p", "web",
                     "--kind", "oom_gpu", cwd=shell_db.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Recent failures (0)" in done.stdout


def test_inspecting_a_postgresql_schema_that_does_not_exist_creates_nothing(
    tmp_path: Path,
) -> None:
    """`show --path postgresql://...?schema=typo` exits 3 and leaves no schema behind."""
    from helpers.postgres import PG_URL, require_postgres

    require_postgres()
    import psycopg

    schema = f"typo_{os.getpid()}_{int(time.time() * 1000) % 10**9}"
    url = f"{PG_URL}{'&' if '?' in PG_URL else '?'}schema={schema}"
    for command in ("show", "stats", "verify", "guard", "export"):
        done = scarguard(command, "--path", url, cwd=tmp_path)
        assert done.returncode == 3, done.stderr
        assert "no scarguard memory at" in done.stderr and schema in done.stderr
    with psycopg.connect(PG_URL) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert found.fetchone() is None


def test_messages_get_their_plurals_right(shell_db: Path, tmp_path: Path) -> None:
    """One constraint, one record: never "1 constraints"."""
    where = ["--path", str(shell_db), "-w", "acme", "-p", "web"]
    shown = json.loads(scarguard("show", *where, "--json", cwd=tmp_path).stdout)
    first = shown["constraints"][0]["id"]
    done = scarguard("forget", first, "--yes", *where, cwd=tmp_path)
    assert done.stdout.strip() == "lifted 1 constraint"
    dump = tmp_path / "one.jsonl"
    dump.write_text(json.dumps({"record": "counter", "key": "k", "count": 1, "last_at": 1.0}))
    done = scarguard("import", str(dump), *where, cwd=tmp_path)
    assert done.stdout.startswith("imported 1 record into")
    again = scarguard("import", str(dump), *where, cwd=tmp_path)
    assert again.stdout.startswith("imported 0 records (1 already present) into")
