"""Render the repeat failure guard your own way: a string.Template per line, or a callable."""

from string import Template

from scarguard import FailureMemory, PromptGuard
from scarguard.prompt import GuardView
from scarguard.testing import FakeClock

clock = FakeClock()
memory = FailureMemory(":memory:", clock=clock)
for path in ("a.py", "b.py"):
    memory.record("edit_file", {"path": path, "old": "x", "new": "y"},
                  error=f"search string not found in {path}")
    clock.advance(minutes=5)
for _ in range(3):
    memory.record("call_api", {"url": "https://api.example.com/v1"}, error="HTTP 429")
    clock.advance(seconds=30)

print("== default block, injected into a system prompt")
print(PromptGuard(memory).inject("You are a careful coding agent."))

print("\n== one line per pattern with string.Template")
terse = PromptGuard(memory, template=Template("* $label x$count ($blame): $hint"))
print(terse.block())


def as_checklist(view: GuardView) -> str:
    lines = ["Before you call a tool, check this list:"]
    lines += [f"[ ] not again: {p.label} in {', '.join(p.tools)}" for p in view.patterns]
    lines += [f"[ ] wait, do not rework: {p.label}" for p in view.harness]
    return "\n".join(lines)


print("\n== a callable receiving the GuardView")
print(PromptGuard(memory, template=as_checklist).block())

messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Fix it."}]
print("\n== chat messages: the first system message carries the block")
print(PromptGuard(memory).inject_messages(messages)[0]["content"].splitlines()[1])
