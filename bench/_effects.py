"""The effects world of ``bench/effect.py``: actions change real files in a temporary folder.

The static world never changes, so it cannot show what scarguard refuses wrongly when the
world moves on. Here it does, on real files:

- a created file exists afterwards (and creating it again conflicts);
- a successful edit changes the file, so the identical edit fails afterwards, and an edit
  whose search text an earlier edit inserted starts to succeed;
- the tests fail until an edit fixes the code; one test is flaky;
- files appear through commands that do not name them: a generator (``python
  gen_notes.py`` writes ``docs/NOTES.md``), ``git merge feature`` (brings ``spec/SPEC.md``), a
  build (``make build`` writes ``build/out.txt``);
- the Makefile gains its ``build`` target through an edit.

The forgetful agent is the static world's (it sees its last ``W`` executed outcomes and
replays a forgotten failure with probability 0.30); the calls it draws from are this world's.
The oracle floor is a learner that knows the world: it refuses exactly the repeats and
missing-path calls that would fail now, that is the calls it has evidence against that would
fail now. Its evidence is an identical repeat of a failed call (until that call succeeds) and
a read or edit of a path it saw missing, for as long as the path is missing now: once the
path exists, whatever made it (a create, a generator, a merge), a call on it that fails fails
for another reason, and only a failure of that very call is evidence against it. Its wasted
calls are the least any learner from the same evidence can waste.
"""

from __future__ import annotations

import inspect
import math
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import forgetful_proposal, mulberry32

from scarguard import FailureMemory
from scarguard.policy import Policy
from scarguard.testing import FakeClock

Args = dict[str, Any]
Key = tuple[str, tuple[tuple[str, Any], ...]]

STEP_SECONDS = 5.0
FLAKY_FAILURE_RATE = 0.5

INITIAL_FILES: dict[str, str] = {
    "app.py": "def add(a, b):\n    return a - b\n",
    "test_app.py": "from app import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    "Makefile": "test:\n\tpytest\n\n# TODO: build target\n",
    "config.json": '{"port": 3000}\n',
    "docs/README.md": "# Docs\n",
    "gen_notes.py": "open('docs/NOTES.md', 'w').write('(empty)')\n",
    "syntax_error.js": "function (\n",
}
BRANCH_FILES = {"spec/SPEC.md": "# Spec\n"}
"""What ``git merge feature`` brings into the working tree."""

TOOLS = ("read_file", "edit_file", "create_file", "run", "make")
READ_PATHS = (
    "app.py", "Makefile", "config.json", "docs/NOTES.md", "spec/SPEC.md", "build/out.txt",
    "notes/todo.md", "ghost.py",
)  # fmt: skip
EDITS: tuple[tuple[str, str, str], ...] = (
    ("app.py", "return a - b", "return a + b"),  # the fix: once, then its text is gone
    ("config.json", '"port": 3000', '"port": 8080'),
    ("Makefile", "# TODO: build target\n", "build:\n\tmkdir -p build\n"),  # adds the target
    ("Makefile", "build:\n", "build: app.py\n"),  # its text appears with the previous edit
    ("app.py", "def multiply", "def times"),  # never there
    ("docs/NOTES.md", "(empty)", "todo: fix add"),  # the file appears with the generator
    ("ghost.py", "x = 1", "x = 2"),  # never exists
)
CREATES = ("notes/todo.md", "scratch.txt", "app.py")
COMMANDS = (
    "pytest", "python gen_notes.py", "git merge feature", "make build", "ls docs",
    "cat config.json", "bad_command --flag", "node syntax_error.js", "pytest test_flaky.py",
)  # fmt: skip
MAKE_TARGETS = ("build", "test", "deploy")


def _missing(path: str) -> str:
    return f"FileNotFoundError: [Errno 2] No such file or directory: {path!r}"


class World:
    """A small project on real files; ``execute`` runs a call against it."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        for rel, text in INITIAL_FILES.items():
            self._write(rel, text)
        draw = mulberry32(seed * 7919 + 17)
        self._flaky = [draw() < FLAKY_FAILURE_RATE for _ in range(4096)]
        self._flaky_runs = 0
        self._merged = False

    def _path(self, rel: str) -> Path:
        return self.root / rel

    def _write(self, rel: str, text: str) -> None:
        path = self._path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def _read(self, rel: str) -> str | None:
        path = self._path(rel)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def execute(self, tool: str, args: Args, *, dry: bool = False) -> tuple[str | None, Any]:
        """Run a call; return ``(error, result)``. ``dry`` says what it would do, changing
        nothing."""
        if tool == "read_file":
            text = self._read(args["path"])
            if text is None:
                return _missing(args["path"]), None
            return None, text
        if tool == "edit_file":
            path, old, new = args["path"], args["old"], args["new"]
            text = self._read(path)
            if text is None:
                return _missing(path), None
            if old not in text:
                return f"Error: old_string not found in {path}", None
            if not dry:
                self._write(path, text.replace(old, new, 1))
            return None, "edited"
        if tool == "create_file":
            path = args["path"]
            if self._path(path).exists():
                return f"FileExistsError: [Errno 17] File exists: {path!r}", None
            if not dry:
                self._write(path, args["content"])
            return None, "created"
        if tool == "make":
            return self._make(args["target"], dry)
        return self._run(args["command"], dry)

    def _tests_pass(self) -> bool:
        return "return a + b" in (self._read("app.py") or "")

    def _make(self, target: str, dry: bool) -> tuple[str | None, Any]:
        makefile = self._read("Makefile") or ""
        if f"\n{target}:" not in f"\n{makefile}" and not makefile.startswith(f"{target}:"):
            return f"make: *** No rule to make target '{target}'.  Stop.", None
        if target == "test":
            return self._run("pytest", dry)
        if not dry:
            self._write("build/out.txt", "built\n")
        return None, "mkdir -p build"

    def _run(self, command: str, dry: bool) -> tuple[str | None, Any]:
        if command == "pytest":
            if self._tests_pass():
                return None, "1 passed in 0.01s"
            return (
                "FAILED test_app.py::test_add - assert -1 == 3\n1 failed in 0.02s\n"
                "Process exited with code 1"
            ), None
        if command == "pytest test_flaky.py":
            fails = self._flaky[self._flaky_runs % len(self._flaky)]
            if not dry:
                self._flaky_runs += 1
            if fails:
                return "FAILED test_flaky.py::test_timing\n1 failed\nexit code 1", None
            return None, "1 passed"
        if command == "python gen_notes.py":
            if not dry:
                self._write("docs/NOTES.md", "(empty)")
            return None, ""
        if command == "git merge feature":
            if self._merged:
                return None, "Already up to date."
            if not dry:
                for rel, text in BRANCH_FILES.items():
                    self._write(rel, text)
                self._merged = True
            return None, "Fast-forward\n spec/SPEC.md | 1 +"
        if command == "make build":
            return self._make("build", dry)
        if command == "ls docs":
            return None, "\n".join(sorted(p.name for p in self._path("docs").iterdir()))
        if command == "cat config.json":
            return None, self._read("config.json")
        if command.startswith("bad_command"):
            return "bash: line 1: bad_command: command not found", None
        if command == "node syntax_error.js":
            return "syntax_error.js:1\nfunction (\n^\nSyntaxError: Unexpected token '('", None
        raise ValueError(command)


def _key(tool: str, args: Args) -> Key:
    return tool, tuple(sorted(args.items()))


def propose(
    rng: Callable[[], float], seen: list[tuple[str, Args, bool]], window: int
) -> tuple[str, Args]:
    """The forgetful agent of the static world, drawing from this world's calls."""
    return forgetful_proposal(rng, seen, window, _draw)


def _draw(rng: Callable[[], float]) -> tuple[str, Args]:
    tool = TOOLS[math.floor(rng() * len(TOOLS))]
    if tool == "read_file":
        return tool, {"path": READ_PATHS[math.floor(rng() * len(READ_PATHS))]}
    if tool == "edit_file":
        path, old, new = EDITS[math.floor(rng() * len(EDITS))]
        return tool, {"path": path, "old": old, "new": new}
    if tool == "create_file":
        return tool, {"path": CREATES[math.floor(rng() * len(CREATES))], "content": "new\n"}
    if tool == "run":
        return tool, {"command": COMMANDS[math.floor(rng() * len(COMMANDS))]}
    return tool, {"target": MAKE_TARGETS[math.floor(rng() * len(MAKE_TARGETS))]}


class Oracle:
    """The floor: refuses exactly the calls it has evidence against that would fail now.

    ``root`` is the world's folder: a path seen missing is evidence only while it is missing
    there now (without a root, a path seen missing stays missing).
    """

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.failed: set[Key] = set()
        self.missing: set[str] = set()

    def _missing_now(self, path: str) -> bool:
        return path in self.missing and (self.root is None or not (self.root / path).exists())

    def evidence(self, tool: str, args: Args) -> bool:
        path = args.get("path")
        needs = tool in ("read_file", "edit_file") and isinstance(path, str)
        return _key(tool, args) in self.failed or (needs and self._missing_now(path))

    def learn(self, tool: str, args: Args, error: str | None) -> None:
        if error is None:
            self.failed.discard(_key(tool, args))
            return
        self.failed.add(_key(tool, args))
        if "No such file or directory" in error and isinstance(args.get("path"), str):
            self.missing.add(args["path"])


def _memory(policy: Policy | None, clock: FakeClock, root: Path) -> FailureMemory:
    """A guarded memory whose workspace is the world's folder (when the engine observes one)."""
    options: dict[str, Any] = {"policy": policy, "clock": clock}
    if "root" in inspect.signature(FailureMemory).parameters:
        options["root"] = str(root)
    return FailureMemory(":memory:", **options)


_METRICS = ("successes", "failures", "refused", "refused_would_succeed", "warned", "wasted")


def _what(tool: str, args: Args) -> str:
    what = args.get("path") or args.get("command") or args.get("target")
    if tool == "edit_file":
        what = f"{what} {args['old']!r}"
    return f"{tool} {what}"


class _Waste:
    """Why a guarded failure ran that the oracle would have refused: the breakdown of the
    wasted calls above the floor.

    A failure is *avoidable* when an oracle fed the same history had evidence against it. Its
    cause is what the memory did with that evidence: a rule it held had gone stale (the paths
    that changed, and the last success before the call), a success had lifted the rule, or the
    failures so far were fewer than the rule needs. "No failure of this call yet" is the
    oracle's missing-path evidence (the path is still missing) against a call the memory has
    no rule for.
    """

    def __init__(self, memory: FailureMemory, root: Path) -> None:
        self.memory = memory
        self.shadow = Oracle(root)
        self.causes: dict[str, int] = {}
        self.lifted_by: dict[str, str] = {}
        self.last_success = "nothing"
        self.failed: dict[Key, int] = {}

    def _cause(self, tool: str, args: Args) -> str:
        fingerprint = self.memory.describe(tool, args).fingerprint
        path = args.get("path")
        for c in self.memory.constraints(include_stale=True):
            if c.fingerprint == fingerprint or (
                c.kind.value == "missing_target" and path and c.target and c.target.endswith(path)
            ):
                changed = [
                    os.path.relpath(p, self.memory.root)
                    for p in self.memory.observer.changed(c.params.observed)
                ]
                return f"stale ({', '.join(changed)}); last success: {self.last_success}"
        if fingerprint in self.lifted_by:
            return f"lifted by {self.lifted_by[fingerprint]}"
        failed = self.failed.get(_key(tool, args), 0)
        return f"not banned after {failed} failure(s)" if failed else "no failure of this call yet"

    def ran(self, tool: str, args: Args, error: str | None) -> None:
        """Account for an executed call (before the memory records it)."""
        if error is not None and self.shadow.evidence(tool, args):
            case = f"{_what(tool, args)}: {self._cause(tool, args)}"
            self.causes[case] = self.causes.get(case, 0) + 1
        self.shadow.learn(tool, args, error)
        if error is None:
            self.last_success = _what(tool, args)
        else:
            self.failed[_key(tool, args)] = self.failed.get(_key(tool, args), 0) + 1

    def lifted(self, tool: str, args: Args, lifted: Sequence[Any]) -> None:
        """Remember which success lifted the exact-call rules of which calls."""
        for c in lifted:
            if c.fingerprint:
                self.lifted_by[c.fingerprint] = _what(tool, args)


def run_session(
    seed: int, window: int, calls: int, arm: str, policy: Policy | None
) -> dict[str, Any]:
    """Run one session of ``arm`` (``unguarded``, ``scarguard`` or ``oracle``) on a fresh world."""
    tmp = Path(tempfile.mkdtemp(prefix="scarguard-effects-"))
    try:
        world = World(tmp, seed)
        rng = mulberry32(seed)
        clock = FakeClock()
        memory = _memory(policy, clock, tmp) if arm == "scarguard" else None
        oracle = Oracle(tmp) if arm == "oracle" else None
        waste = _Waste(memory, tmp) if memory is not None else None
        seen: list[tuple[str, Args, bool]] = []
        n = dict.fromkeys(_METRICS, 0)
        refused_ok: dict[str, int] = {}
        for _ in range(calls):
            tool, args = propose(rng, seen, window)
            clock.advance(STEP_SECONDS)
            if memory is not None:
                decision = memory.check(tool, args)
                if not decision.allowed:
                    n["refused"] += 1
                    seen.append((tool, args, False))  # the refusal is in the agent's context
                    if world.execute(tool, args, dry=True)[0] is None:
                        n["refused_would_succeed"] += 1
                        what = args.get("path") or args.get("command") or args.get("target")
                        case = f"{tool} {what}"
                        refused_ok[case] = refused_ok.get(case, 0) + 1
                    continue
                n["warned"] += bool(decision.warnings)
            if (
                oracle is not None
                and oracle.evidence(tool, args)
                and world.execute(tool, args, dry=True)[0] is not None
            ):
                n["refused"] += 1
                seen.append((tool, args, False))
                continue
            error, result = world.execute(tool, args)
            seen.append((tool, args, error is None))
            n["successes" if error is None else "failures"] += 1
            if memory is not None and waste is not None:
                waste.ran(tool, args, error)
                if error is None:
                    done = memory.record(tool, args, ok=True, result=result)
                    waste.lifted(tool, args, done.lifted if done else ())
                else:
                    memory.record(tool, args, error=error)
            if oracle is not None:
                oracle.learn(tool, args, error)
        if memory is not None:
            memory.close()
        n["wasted"] = n["failures"] + n["refused_would_succeed"]
        causes = waste.causes if waste is not None else {}
        return {**n, "refused_ok_cases": refused_ok, "waste_causes": causes}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def effects_world(
    seeds: Sequence[int], window: int, calls: int, policy: Policy | None = None
) -> dict[str, Any]:
    """Run the three arms over ``seeds``; return per-seed rows, means and the targets."""
    out: dict[str, Any] = {"window": window, "calls": calls, "seeds": list(seeds)}
    for arm in ("unguarded", "scarguard", "oracle"):
        rows = [run_session(s, window, calls, arm, policy) for s in seeds]
        cases: dict[str, int] = {}
        causes: dict[str, int] = {}
        for row in rows:
            for case, count in row.pop("refused_ok_cases").items():
                cases[case] = cases.get(case, 0) + count
            for case, count in row.pop("waste_causes").items():
                causes[case] = causes.get(case, 0) + count
        mean = {m: round(statistics.fmean(r[m] for r in rows), 4) for m in _METRICS}
        out[arm] = {
            "per_seed": rows,
            "mean": mean,
            "refused_ok_cases": cases,
            "waste_causes": dict(sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))),
        }
    guarded, floor, plain = (out[a]["mean"] for a in ("scarguard", "oracle", "unguarded"))
    share = guarded["refused_would_succeed"] / guarded["refused"] if guarded["refused"] else 0.0
    ratio = guarded["wasted"] / floor["wasted"] if floor["wasted"] else math.inf
    kept = guarded["successes"] / plain["successes"] if plain["successes"] else 0.0
    out["targets"] = {
        "wasted_within_1.10x_of_floor": {"value": round(ratio, 4), "met": ratio <= 1.10},
        "refused_would_succeed_at_most_0.5pct": {"value": round(share, 4), "met": share <= 0.005},
        "successes_at_least_93pct_of_unguarded": {"value": round(kept, 4), "met": kept >= 0.93},
    }
    return out
