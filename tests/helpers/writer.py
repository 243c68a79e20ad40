"""Write failure records to a store from a separate process.

Usage: ``python writer.py PATH COUNT TAG`` (COUNT 0: forever, until killed). Each record is
one transaction: a failure, two counter bumps and a receipt. After each commit the id is
printed (flushed), so the parent knows exactly what was acknowledged. Errors are printed as
``ERROR <repr>`` and end the process with status 1.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from helpers.factories import failure
from scarguard.model import Scope
from scarguard.stores import open_store


def main() -> int:
    path, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    scope = Scope("w", "p", session=tag)
    try:
        store = open_store(path)
        numbers = itertools.count() if count == 0 else range(count)
        for i in numbers:
            with store.transaction(scope) as tx:
                stored = tx.add_failure(failure(i, tool=f"tool-{tag}", session=tag))
                tx.bump(f"sig:{stored.signature}", stored.at)
                tx.bump(f"tool:{tag}", stored.at)
                tx.receipt("failure", {"id": stored.id, "tag": tag, "i": i}, stored.at)
            print(stored.id, flush=True)
        store.close()
    except Exception as exc:
        print("ERROR", repr(exc), flush=True)
        return 1
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
