"""Quick start: a guarded tool refuses the edit that is known to fail, and the prompt says so.

Run: python examples/quickstart.py   (offline; writes .scarguard/memory.db in the CWD)
"""

from scarguard import FailureMemory, PromptGuard, guarded_tool

FILES = {"app.py": "def handle_request(request):\n    return 'ok'\n"}

memory = FailureMemory(workspace="examples", project="quickstart")  # the default SQLite file


@guarded_tool(memory, on_block="return")
def edit_file(path: str, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in a file."""
    if old not in FILES[path]:
        raise ValueError(f"search string not found in {path}")
    FILES[path] = FILES[path].replace(old, new, 1)
    return f"edited {path}"


for attempt in (1, 2):
    try:
        print(f"attempt {attempt}:", edit_file("app.py", "def handler(req):", "def handler(r):"))
    except ValueError as error:
        print(f"attempt {attempt}: the tool failed: {error}")

print(edit_file("app.py", "def handle_request(request):", "def handle_request(req):"))
print()
print(PromptGuard(memory).block())
print()
print(f"the memory lives in {memory.store.location}; run this again: attempt 1 is refused too")
memory.close()
