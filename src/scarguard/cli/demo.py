"""The scripted offline demo behind ``scarguard demo``.

A scripted agent works on a simulated workspace (files in a dict, a Makefile with a few
targets, an API that answers 429 twice before it answers) through guarded tools, and makes
the classic mistakes: an edit whose search string is not in the file, a ``make`` target that
does not exist, a rate limit. The narration shows what each call did, what scarguard
learned, what it refused and why, and the prompt block the model would see. The memory
persists in the default store, so the second run starts with the first run's constraints
and refuses the repeated mistakes before they cost anything.

The script never changes between runs: like a real agent after a restart, it has forgotten
everything. Only scarguard remembers.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import attrs

from scarguard.cli._demo_world import DemoClock, Workspace, build_tools
from scarguard.cli.rendering import Style, blame_word, plural, width, wrap
from scarguard.memory import FailureMemory
from scarguard.model import Blame, Constraint, Decision, Failure
from scarguard.prompt import PromptGuard

__all__ = ["PROJECT", "SCRIPT", "WORKSPACE", "Step", "run_demo"]

WORKSPACE = "demo"
PROJECT = "webapp"


@attrs.frozen
class Step:
    """One call the scripted agent makes.

    Attributes:
        tool: The tool's name.
        args: The arguments, by name.
        thought: Why the agent makes it, in a few words.
    """

    tool: str
    args: Mapping[str, str]
    thought: str = ""


_WRONG_EDIT = {"path": "app.py", "old": "def handler(req):", "new": "def handler(req, limit=50):"}
_RIGHT_EDIT = {
    "path": "app.py",
    "old": "def handle_request(request):",
    "new": "def handle_request(request, limit=50):",
}
SCRIPT: tuple[Step, ...] = (
    Step("search", {"query": "/orders"}, "task: add a limit to the /orders handler"),
    Step("edit_file", _WRONG_EDIT, "edits from its memory of an older version of the file"),
    Step("edit_file", _WRONG_EDIT, "the error scrolled out of its context: same edit again"),
    Step("read_file", {"path": "app.py"}, "gathers evidence instead"),
    Step("edit_file", _RIGHT_EDIT, "copies the exact text this time"),
    Step("make", {"target": "build"}, "builds, guessing the target's name"),
    Step("make", {"target": "build"}, "tries again, unchanged"),
    Step("make", {"target": "build"}, "and again"),
    Step("read_file", {"path": "Makefile"}, "looks up the real targets"),
    Step("make", {"target": "test"}),
    Step("call_api", {"method": "GET", "endpoint": "/deploys/latest"}, "checks the deploy"),
)


@attrs.define
class _Tally:
    ran: int = 0
    refused: int = 0
    refused_earlier: int = 0
    failures: dict[Blame, int] = attrs.Factory(lambda: dict.fromkeys(Blame, 0))


class _Narrator:
    def __init__(self, memory: FailureMemory, out: TextIO, quiet: bool) -> None:
        self.memory = memory
        self.out = out
        self.quiet = quiet
        self.style = Style(out)
        self.width = width()
        self.shown: set[frozenset[str]] = set()

    def say(self, text: str = "", *styles: str) -> None:
        if not self.quiet:
            print(self.style(text, *styles), file=self.out)

    def line(self, tag: str, text: str, *styles: str) -> None:
        """Print a fixed-width tag, then the whole text wrapped under its first word."""
        for index, part in enumerate(wrap(text, self.width, indent=" " * 14)):
            label = self.style(tag.ljust(9), *styles) if index == 0 else " " * 9
            self.say(f"    {label} {part[14:]}")

    def message(self, decision: Decision) -> None:
        """Print all the LLM reads instead of a result (once per refusal; then a reminder)."""
        keys = frozenset(v.constraint.key for v in decision.violations)
        if keys in self.shown:
            self.say(f"    {'':9} {self.style('(the LLM reads the same refusal again)', 'dim')}")
            return
        self.shown.add(keys)
        first = True
        for paragraph in decision.message.splitlines():
            for part in wrap(paragraph, self.width, indent=" " * 14):
                tag = "LLM reads" if first else ""
                self.say(f"    {tag:9} {self.style(part[14:], 'dim')}")
                first = False

    def call(self, number: int, step: Step) -> None:
        """Print the call whole, its arguments wrapped under the first one (never cut)."""
        head = f"{number:>2}  {step.tool}("
        parts = [f"{k}={v!r}" for k, v in step.args.items()]
        lines, current = [], head
        for index, part in enumerate(parts):
            text = part + (", " if index < len(parts) - 1 else ")")
            if len(current) > len(head) and len(current) + len(text.rstrip()) > self.width:
                lines.append(current.rstrip())
                current = " " * len(head)
            current += text
        lines.append(current if parts else head + ")")
        bold = self.style(step.tool, "bold")
        self.say(lines[0].replace(step.tool, bold, 1))
        for more in lines[1:]:
            self.say(more)

    def failure(self, failures: list[Failure]) -> None:
        for failure in failures:
            known = self.memory.signatures.get(failure.signature)
            label = known.label if known else failure.signature
            count = sum(1 for f in failures if f.signature == failure.signature)
            note = {
                Blame.AGENT: "an agent mistake",
                Blame.HARNESS: "an infrastructure fault, never learned from",
                Blame.UNKNOWN: "blame unknown: only the identical call can be banned",
            }[failure.blame]
            times = f" x{count}" if count > 1 else ""
            self.line("FAILED", f"{label}{times} ({note})", "red")
            if count > 1:
                return


def _first_line(result: object) -> str:
    text = str(result).strip()
    lines = text.splitlines()
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return (lines[0] if lines else "") + more


def _run_step(
    number: int,
    step: Step,
    tools: Mapping[str, Any],
    clock: DemoClock,
    start_keys: frozenset[str],
    tally: _Tally,
    say: _Narrator,
) -> None:
    memory = say.memory
    started = clock()
    before = {c.key: c for c in memory.constraints()}
    tool = tools[step.tool]
    say.call(number, step)
    if step.thought:
        say.say(f"    {say.style('# ' + step.thought, 'dim')}")
    error: Exception | None = None
    try:
        result = tool(**step.args)
    except Exception as exc:  # the tool's own error: the agent would see it
        error, result = exc, None
    decision: Decision | None = tool.last_decision
    if decision is not None and not decision.allowed:
        tally.refused += 1
        keys = {v.constraint.key for v in decision.violations}
        earlier = bool(keys & start_keys)
        tally.refused_earlier += earlier
        where = "learned in an earlier run" if earlier else "learned in this run"
        say.line("REFUSED", f"before running: {where}", "yellow", "bold")
        say.message(decision)
        return
    tally.ran += 1
    failures = list(reversed(memory.recent_failures(limit=20, since=started)))
    for failure in failures:
        tally.failures[failure.blame] += 1
    say.failure(failures)
    if error is None:
        retried = " after retrying" if failures else ""
        say.line("ok", f"{_first_line(result)}{retried}", "green")
    after = {c.key: c for c in memory.constraints()}
    for key, constraint in after.items():
        if key not in before:
            say.line("learned", _reason(constraint), "cyan")
    for key, constraint in before.items():
        if key not in after:
            say.line("lifted", _reason(constraint), "cyan")
    if failures and not set(after) - set(before) and failures[-1].blame is not Blame.HARNESS:
        say.line("learned", "nothing yet: one failure is not a pattern", "dim")


def _reason(constraint: Constraint) -> str:
    level = "refuse" if constraint.level.value == "block" else "warn"
    return f"{constraint.kind.value} ({level}): {constraint.reason}"


def run_demo(
    path: str | os.PathLike[str] | None = None,
    *,
    fresh: bool = False,
    steps: int | None = None,
    quiet: bool = False,
    out: TextIO,
    clock: Callable[[], float] = time.time,
) -> int:
    """Run the scripted agent against the memory at ``path`` and narrate it.

    Args:
        path: The store (default: the default SQLite file, ``.scarguard/memory.db``).
        fresh: Clear the demo's workspace and project first.
        steps: Run only the first ``steps`` steps of the script.
        quiet: Print only the summary lines.
        out: Where the narration goes.
        clock: The real clock.

    Returns:
        The exit code (0).
    """
    demo_clock = DemoClock(clock)
    memory = FailureMemory(path, workspace=WORKSPACE, project=PROJECT, clock=demo_clock)
    try:
        if fresh:
            memory.clear()
        known = memory.constraints()
        start_keys = frozenset(c.key for c in known)
        say = _Narrator(memory, out, quiet)
        say.say("scarguard demo: a scripted agent fixes a web app (simulated, offline)", "bold")
        say.say(f"memory: {memory.store.location} (workspace {WORKSPACE!r}, project {PROJECT!r})")
        if known:
            say.say(f"starts with {plural(len(known), 'constraint')} learned in an earlier run")
        else:
            say.say("starts with an empty memory")
        say.say()
        tools = build_tools(memory, Workspace(), demo_clock)
        tally = _Tally()
        for number, step in enumerate(SCRIPT[:steps] if steps is not None else SCRIPT, 1):
            _run_step(number, step, tools, demo_clock, start_keys, tally, say)
            say.say()
        block = PromptGuard(memory).block()
        if block:
            say.say("What the model reads at the top of its next prompt (PromptGuard):", "bold")
            for text in block.splitlines():
                for part in wrap(text, say.width - 4):
                    say.say(f"  | {part}")
            say.say()
        _summary(memory, tally, start_keys, out)
    finally:
        memory.close()
    return 0


def _summary(memory: FailureMemory, tally: _Tally, start_keys: frozenset[str], out: TextIO) -> None:
    style = Style(out)
    failed = sum(tally.failures.values())
    parts = ", ".join(f"{n} {blame_word(b.value)}" for b, n in tally.failures.items() if n)
    refused = f"{tally.refused} refused before running"
    if tally.refused_earlier:
        refused += f" ({tally.refused_earlier} learned in an earlier run)"
    failures = plural(failed, "failure") + (f" ({parts})" if parts else "")
    show = f"scarguard show -w {WORKSPACE} -p {PROJECT}"
    if start_keys:
        advice = f"`{show}` lists what was learned; `scarguard demo --fresh` starts over"
    else:
        advice = (
            "run `scarguard demo` again to see the repeated mistakes refused before they cost"
            f" anything; `{show}` lists what was learned"
        )
    active = len(memory.constraints())
    for tag, text in (
        ("summary", f"{plural(tally.ran, 'call')} ran, {failures}, {refused}"),
        ("memory", f"{plural(active, 'constraint')} active, kept in {memory.store.location}"),
        ("next", advice),
    ):
        for index, part in enumerate(wrap(text, width(), indent=" " * 9, breaks=False)):
            print(style(f"{tag + ':' if index == 0 else '':9}", "bold") + part[9:], file=out)
