"""Effectiveness benchmark: does scarguard stop a forgetful agent repeating failures, and
what does it refuse that would have worked?

Three seeded, deterministic simulations, each run with and without scarguard on the same seeds:

1. **Tool loop** — the world of the published long-horizon benchmark of the TypeScript loop
   design scarguard grows from (six files, three missing paths, five tools). The agent sees
   only its last ``W`` executed outcomes; once a failure has scrolled out of view it replays
   one with probability 0.30. The random source and the order of draws are those of the
   published simulation, so the unguarded run reproduces its figures exactly.
2. **Effects world** (``bench/_effects.py``) — the same forgetful agent in a small project on
   real files where actions have effects (creates create, edits change files, generators,
   ``git merge`` and builds make files appear, a Makefile gains a target), beside an oracle
   floor that refuses exactly the repeats and missing-path calls that would fail now.
3. **Hyper-parameter sweep** — a model whose memory grows with batch size, width and depth
   runs out of memory above a fixed budget; a hill-climbing proposer runs five sessions of
   25 trials sharing one store.

Run ``python bench/effect.py`` (``--quick`` for a short smoke run). It prints the tables and
writes ``bench/results/effect.json``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import forgetful_proposal, machine, mulberry32, write_result
from _effects import effects_world

from scarguard import FailureMemory
from scarguard.adapters.ml_training import MLTrainingAdapter
from scarguard.naming.signatures import DEFAULT_BANK
from scarguard.policy import Policy
from scarguard.testing import FakeClock

CALL_COST = 0.003
"""Dollars per executed tool call (the published benchmark's figure)."""
REFUSED_COST = CALL_COST * 0.1
"""A refused call costs the check: 10% of a call."""
STEP_SECONDS = 5.0
"""Fake seconds per call (a model turn)."""
SESSION_GAP_HOURS = 1.0
"""Fake time between consecutive sessions sharing one store."""

# The published design, measured on this world at W = 20, means over seeds 1-5.
PUBLISHED_W20 = {
    "failures": 9.2,
    "repeated_failures": 1.8,
    "refused": 147.8,
    "refused_would_succeed": 42.8,
    "wasted": 52.0,
    "successes": 43.0,
}
PUBLISHED_VANILLA_SEED42_W20 = {"successes": 101, "failures": 99, "repeated_failures": 82}
PUBLISHED_VANILLA_MEAN_W20 = {"successes": 91.0, "failures": 109.0, "repeated_failures": 92.4}

# -- the tool-loop world ----------------------------------------------------------------------

FILES: dict[str, tuple[str, ...]] = {
    "server.js": ("express", "require"),
    "routes/api.js": ("router.get", "handler"),
    "routes/auth.js": ("app.post", "authenticate"),
    "config.json": ("3000", "localhost"),
    "package.json": ("test-app", "1.0.0"),
    "styles.css": ("black", "body"),
}
MISSING = ("nonexistent.js", "missing.ts", "ghost.py")
TOOLS = ("read_file", "edit_file", "bash", "search_files", "create_file")
PATHS = (*FILES, *MISSING)
SEARCHES = (
    "express",
    "handler",
    "NONEXISTENT_PATTERN",
    "bogus_search",
    "app.post",
    "3000",
    "black",
)
COMMANDS = (
    "npm test",
    "npm run build",
    "bad_command --flag",
    "node syntax_error.js",
    "ls -la",
    "cat server.js",
)

Args = dict[str, Any]


def execute(tool: str, args: Args) -> str | None:
    """Run a call against the world; return the error text, or ``None`` on success.

    The world never changes: a created file does not appear, an edit changes nothing.
    """
    path = args.get("file")
    patterns = FILES.get(path) if isinstance(path, str) else None
    if tool == "read_file":
        return None if patterns is not None else f"ENOENT: no such file or directory '{path}'"
    if tool == "edit_file":
        if patterns is None:
            return f"ENOENT: no such file or directory '{path}'"
        s = args.get("old_string") or ""
        if not s or not any(p in s or s in p for p in patterns):
            return f'search string not found in file: "{s}"'
        return None
    if tool == "bash":
        cmd = args.get("command") or ""
        if "nonexistent" in cmd or "bad_command" in cmd:
            return "command failed: exit code 1"
        if "syntax_error" in cmd:
            return "SyntaxError: Unexpected token"
        return None
    if tool == "create_file":
        return "409 conflict: file already exists" if patterns is not None else None
    return None  # search_files never fails


def _key(tool: str, args: Args) -> tuple[str, tuple[tuple[str, Any], ...]]:
    return tool, tuple(args.items())


def propose(
    rng: Callable[[], float], seen: list[tuple[str, Args, bool]], window: int
) -> tuple[str, Args]:
    """The forgetful agent: one proposal, drawing exactly as the published simulation does.

    It sees its last ``window`` executed outcomes (see :func:`_common.forgetful_proposal`);
    a fresh call draws tool, path (always), then the search string or command the tool needs.
    """
    return forgetful_proposal(rng, seen, window, _draw)


def _draw(rng: Callable[[], float]) -> tuple[str, Args]:
    tool = TOOLS[math.floor(rng() * len(TOOLS))]
    path = PATHS[math.floor(rng() * len(PATHS))]
    if tool == "read_file":
        return tool, {"file": path}
    if tool == "edit_file":
        search = SEARCHES[math.floor(rng() * len(SEARCHES))]
        return tool, {"file": path, "old_string": search, "new_string": "replacement"}
    if tool == "bash":
        return tool, {"command": COMMANDS[math.floor(rng() * len(COMMANDS))]}
    if tool == "search_files":
        return tool, {"pattern": "TODO", "path": "."}
    return tool, {"file": path, "content": "new file content"}


def _repeat_key(tool: str, args: Args, error: str) -> str:
    """Failure kind and target (the file, else the command), as the published metric."""
    kind = DEFAULT_BANK.match(error).name
    target = args.get("file") or args.get("command") or "none"
    return f"{kind}:{target}"


def run_session(
    seed: int,
    window: int,
    calls: int,
    memory: FailureMemory | None,
    clock: FakeClock | None,
) -> dict[str, Any]:
    """Run one 200-call session (``calls`` long); guarded when ``memory`` is given."""
    rng = mulberry32(seed)
    seen: list[tuple[str, Args, bool]] = []
    history: dict[str, int] = {}
    n = {
        "successes": 0,
        "failures": 0,
        "repeated_failures": 0,
        "refused": 0,
        "refused_would_succeed": 0,
        "warned": 0,
        "first_failures": 0,
        "identical_repeats": 0,
    }
    failed_before: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    refused_ok_examples: dict[str, int] = {}
    for _ in range(calls):
        tool, args = propose(rng, seen, window)
        if clock is not None:
            clock.advance(STEP_SECONDS)
        if memory is not None:
            decision = memory.check(tool, args)
            if not decision.allowed:
                n["refused"] += 1
                if execute(tool, args) is None:
                    n["refused_would_succeed"] += 1
                    kinds = ",".join(sorted({v.constraint.kind.value for v in decision.violations}))
                    refused_ok_examples[kinds] = refused_ok_examples.get(kinds, 0) + 1
                continue
            if decision.warnings:
                n["warned"] += 1
        error = execute(tool, args)
        seen.append((tool, args, error is None))
        if error is None:
            n["successes"] += 1
        else:
            n["failures"] += 1
            key = _repeat_key(tool, args, error)
            if history.get(key, 0):
                n["repeated_failures"] += 1
            history[key] = history.get(key, 0) + 1
            exact = _key(tool, args)
            n["identical_repeats" if exact in failed_before else "first_failures"] += 1
            failed_before.add(exact)
        if memory is not None:
            memory.record(tool, args, ok=error is None, error=error)
    n["wasted"] = n["failures"] + n["refused_would_succeed"]
    n["cost"] = round((n["successes"] + n["failures"]) * CALL_COST + n["refused"] * REFUSED_COST, 4)
    n["wasted_cost"] = round(n["failures"] * CALL_COST + n["refused"] * REFUSED_COST, 4)
    n["refused_ok_by_rule"] = refused_ok_examples
    return n


def new_memory(policy: Policy | None, clock: FakeClock, store: Any = ":memory:") -> FailureMemory:
    """A fresh guarded memory on ``store`` driven by ``clock``."""
    return FailureMemory(store, policy=policy, clock=clock)


_METRICS = (
    "successes",
    "failures",
    "repeated_failures",
    "refused",
    "refused_would_succeed",
    "warned",
    "wasted",
    "cost",
    "wasted_cost",
    "first_failures",
    "identical_repeats",
)


def _mean(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    return {m: round(statistics.fmean(r[m] for r in rows), 4) for m in _METRICS}


def tool_loop(
    seeds: Sequence[int],
    window: int,
    calls: int,
    policy: Policy | None,
) -> dict[str, Any]:
    """Run every seed unguarded and guarded at one window; return per-seed rows and means."""
    vanilla = [run_session(s, window, calls, None, None) for s in seeds]
    guarded = []
    for s in seeds:
        clock = FakeClock()
        with new_memory(policy, clock) as memory:
            guarded.append(run_session(s, window, calls, memory, clock))
    return {
        "window": window,
        "calls": calls,
        "seeds": list(seeds),
        "unguarded": {"per_seed": vanilla, "mean": _mean(vanilla)},
        "guarded": {"per_seed": guarded, "mean": _mean(guarded)},
    }


def multi_session(
    seeds: Sequence[int], window: int, calls: int, sessions: int, policy: Policy | None
) -> dict[str, Any]:
    """Consecutive sessions (fresh agent, fresh context) sharing one store.

    Session ``k`` of seed ``s`` draws with seed ``1000 * k + s``; guarded sessions share one
    SQLite file, each through its own :class:`FailureMemory` (a new process, in effect).
    """
    per_session_vanilla: list[list[dict[str, Any]]] = [[] for _ in range(sessions)]
    per_session_guarded: list[list[dict[str, Any]]] = [[] for _ in range(sessions)]
    with tempfile.TemporaryDirectory() as tmp:
        for s in seeds:
            clock = FakeClock()
            store_path = str(Path(tmp) / f"shared-{s}.db")
            for k in range(sessions):
                seed = 1000 * (k + 1) + s
                per_session_vanilla[k].append(run_session(seed, window, calls, None, None))
                with new_memory(policy, clock, store_path) as memory:
                    per_session_guarded[k].append(run_session(seed, window, calls, memory, clock))
                clock.advance(hours=SESSION_GAP_HOURS)
    return {
        "window": window,
        "calls": calls,
        "sessions": sessions,
        "store": "sqlite (one file per seed, one FailureMemory per session)",
        "unguarded": [_mean(rows) for rows in per_session_vanilla],
        "guarded": [_mean(rows) for rows in per_session_guarded],
    }


# -- the hyper-parameter sweep ----------------------------------------------------------------

BATCH = (8, 16, 32, 64, 128, 256)
WIDTH = (128, 256, 512, 1024, 2048)
DEPTH = (2, 4, 8, 16, 32)
LR = (1e-4, 3e-4, 1e-3, 3e-3)
MEMORY_BUDGET_GB = 24.0
OOM_ERROR = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
START = {"batch_size": 16, "width": 256, "depth": 4, "lr": 1e-3}


def memory_gb(cfg: dict[str, Any]) -> float:
    """Peak memory of a configuration: weights grow with width^2 x depth, activations with
    batch x width x depth."""
    weights = cfg["width"] ** 2 * cfg["depth"] * 16 / 2**30 * 4  # params, grads, Adam
    activations = cfg["batch_size"] * cfg["width"] * cfg["depth"] * 2048 * 6 / 2**30
    return 1.0 + weights + activations


def fits(cfg: dict[str, Any]) -> bool:
    return memory_gb(cfg) <= MEMORY_BUDGET_GB


def true_score(cfg: dict[str, Any]) -> float:
    """Larger models score higher with diminishing returns; the learning rate has an optimum."""
    size = math.log2(cfg["width"]) + 0.8 * math.log2(cfg["depth"])
    batch = -0.15 * abs(math.log2(cfg["batch_size"]) - 6)
    lr = -0.6 * abs(math.log10(cfg["lr"]) + 3)
    return size + batch + lr


def _step(values: Sequence[Any], current: Any, direction: int) -> Any:
    i = values.index(current) + direction
    return values[min(max(i, 0), len(values) - 1)]


def propose_config(rng: Callable[[], float], best: dict[str, Any]) -> dict[str, Any]:
    """Move one key of the best configuration one step; sizes are pushed up 2 times in 3."""
    keys = ("batch_size", "width", "depth", "lr")
    grids = {"batch_size": BATCH, "width": WIDTH, "depth": DEPTH, "lr": LR}
    key = keys[math.floor(rng() * len(keys))]
    up = rng() < (2 / 3 if key != "lr" else 0.5)
    cfg = dict(best)
    cfg[key] = _step(grids[key], best[key], 1 if up else -1)
    return cfg


def sweep(seeds: Sequence[int], sessions: int, trials: int, guarded: bool) -> dict[str, Any]:
    """Run ``sessions`` x ``trials`` training runs per seed; guarded ones share one store."""
    adapter = MLTrainingAdapter()
    per_session: list[list[dict[str, Any]]] = [[] for _ in range(sessions)]
    violations = {"dominating_known_oom_run": 0, "fitting_refused": 0, "oom_refused": 0}
    for s in seeds:
        clock = FakeClock()
        memory = (
            FailureMemory(
                ":memory:",
                adapters={"train": adapter},
                policy=Policy(direction="maximize"),
                clock=clock,
            )
            if guarded
            else None
        )
        known_oom: list[dict[str, Any]] = []
        for k in range(sessions):
            rng = mulberry32(7919 * (k + 1) + s)
            noise = mulberry32(104729 * (k + 1) + s)
            best, best_score = dict(START), -math.inf
            row = {"trials": 0, "oom": 0, "refused": 0, "best_score": 0.0, "redraws": 0}
            while row["trials"] < trials:
                cfg = propose_config(rng, best) if best_score > -math.inf else dict(START)
                if memory is not None:
                    clock.advance(STEP_SECONDS)
                    decision = memory.check("train", cfg)
                    if not decision.allowed:
                        row["refused"] += 1
                        if fits(cfg):
                            violations["fitting_refused"] += 1
                        else:
                            violations["oom_refused"] += 1
                        row["redraws"] += 1
                        if row["redraws"] > 50 * trials:
                            break
                        continue
                row["trials"] += 1
                if k > 0 and any(adapter.dominates(cfg, bad) for bad in known_oom):
                    violations["dominating_known_oom_run"] += 1
                if not fits(cfg):
                    row["oom"] += 1
                    known_oom.append(cfg)
                    if memory is not None:
                        memory.record("train", cfg, error=OOM_ERROR)
                    continue
                score = true_score(cfg) + (noise() - 0.5) * 0.3
                if memory is not None:
                    memory.record("train", cfg, ok=True, score=score)
                if score > best_score:
                    best, best_score = cfg, score
            row["best_score"] = round(best_score, 4)
            row["best_true_score"] = round(true_score(best), 4)
            per_session[k].append(row)
        if memory is not None:
            memory.close()
    means = [
        {m: round(statistics.fmean(r[m] for r in rows), 4) for m in rows[0]} for rows in per_session
    ]
    # "dominating a known OOM run" only counts sessions 2+: session 1 may discover OOMs freely.
    return {"per_session_mean": means, "violations": violations}


# -- policy selection -------------------------------------------------------------------------

CANDIDATES: dict[str, dict[str, Any]] = {
    "default": {},
    "no_deterministic_shortcut": {"deterministic_corroboration": 2},
    "no_target_facts": {"target_facts": False},
    "unknown_corroboration_1": {"unknown_corroboration": 1},
    "corroboration_3": {"corroboration": 3, "unknown_corroboration": 3},
    "no_stale_after_change": {"stale_after_change": frozenset()},
    "tool_target_block_2": {"tool_target_block": 2},
    "tool_target_block_3": {"tool_target_block": 3},
    "strategy_block_3": {"strategy_block_targets": 3},
    "strategy_block_4": {"strategy_block_targets": 4},
    "strategy_block_5": {"strategy_block_targets": 5},
    "no_stale+strategy_block_3": {
        "stale_after_change": frozenset(),
        "strategy_block_targets": 3,
    },
}
"""Policies tried against the default: each changes a few defaults (see docs/benchmarks.md)."""


def policy_sweep(seeds: Sequence[int], window: int, calls: int) -> dict[str, Any]:
    """Run the tool loop at one window under each candidate policy."""
    out = {}
    for name, overrides in CANDIDATES.items():
        result = tool_loop(seeds, window, calls, Policy(**overrides))
        out[name] = {
            "overrides": {k: _jsonable(v) for k, v in overrides.items()},
            **result["guarded"]["mean"],
        }
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, frozenset):
        return sorted(value)
    return value


# -- reporting --------------------------------------------------------------------------------


def targets_w20(mean_unguarded: dict[str, float], mean_guarded: dict[str, float]) -> dict[str, Any]:
    """The issue's targets at W = 20, each with the measured value and whether it is met."""
    refused = mean_guarded["refused"]
    share = mean_guarded["refused_would_succeed"] / refused if refused else 0.0
    kept = mean_guarded["successes"] / mean_unguarded["successes"]
    return {
        "wasted_at_most_26": {"value": mean_guarded["wasted"], "met": mean_guarded["wasted"] <= 26},
        "refused_would_succeed_at_most_2pct": {"value": round(share, 4), "met": share <= 0.02},
        "successes_at_least_90pct_of_unguarded": {"value": round(kept, 4), "met": kept >= 0.90},
    }


def _row(label: str, m: dict[str, float]) -> str:
    return (
        f"  {label:<27}{m['successes']:>9.1f}{m['failures']:>9.1f}{m['repeated_failures']:>9.1f}"
        f"{m['refused']:>9.1f}{m['refused_would_succeed']:>10.1f}{m['wasted']:>8.1f}"
        f"{m['cost']:>9.3f}"
    )


_HEADER = (
    f"  {'':<27}{'success':>9}{'fail':>9}{'repeat':>9}{'refused':>9}{'ref->ok':>10}"
    f"{'wasted':>8}{'cost $':>9}"
)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run (seconds)")
    parser.add_argument("--out", help="where to write the JSON (default bench/results/effect.json)")
    parser.add_argument("--no-policy-sweep", action="store_true", help="skip the policy candidates")
    opts = parser.parse_args(argv)
    started = time.perf_counter()
    quick = opts.quick
    seeds = [1, 2] if quick else [1, 2, 3, 4, 5]
    calls = 60 if quick else 200
    windows = [20] if quick else [10, 20, 50]
    horizons = [50, 100] if quick else [50, 100, 150, 200]

    result: dict[str, Any] = {
        "benchmark": "effect",
        "mode": "quick" if quick else "full",
        "machine": machine(),
        "policy": {k: _jsonable(v) for k, v in _policy_fields(Policy()).items()},
    }

    # Reproduction of the published unguarded figures.
    repro42 = run_session(42, 20, 200, None, None)
    repro = [run_session(s, 20, 200, None, None) for s in (1, 2, 3, 4, 5)]
    mean_repro = _mean(repro)
    result["reproduction"] = {
        "seed42_w20": {k: repro42[k] for k in ("successes", "failures", "repeated_failures")},
        "published_seed42_w20": PUBLISHED_VANILLA_SEED42_W20,
        "mean_seeds1to5_w20": {
            k: mean_repro[k] for k in ("successes", "failures", "repeated_failures")
        },
        "published_mean_seeds1to5_w20": PUBLISHED_VANILLA_MEAN_W20,
    }
    result["reproduction"]["exact"] = result["reproduction"][
        "seed42_w20"
    ] == PUBLISHED_VANILLA_SEED42_W20 and all(
        abs(result["reproduction"]["mean_seeds1to5_w20"][k] - v) < 1e-9
        for k, v in PUBLISHED_VANILLA_MEAN_W20.items()
    )
    r = result["reproduction"]
    print("Reproduction of the published unguarded run (W=20):")
    print(f"  seed 42: {r['seed42_w20']}  published {PUBLISHED_VANILLA_SEED42_W20}")
    print(f"  seeds 1-5 mean: {r['mean_seeds1to5_w20']}  published {PUBLISHED_VANILLA_MEAN_W20}")
    print(f"  exact: {r['exact']}")

    result["tool_loop"] = {}
    for w in windows:
        loop = tool_loop(seeds, w, calls, None)
        result["tool_loop"][str(w)] = loop
        print(f"\nTool loop, W={w}, {calls} calls, means over seeds {seeds}:")
        print(_HEADER)
        print(_row("unguarded", loop["unguarded"]["mean"]))
        print(_row("scarguard", loop["guarded"]["mean"]))
        g = loop["guarded"]["mean"]
        print(
            f"  scarguard failures: {g['first_failures']:.1f} first tries of a call,"
            f" {g['identical_repeats']:.1f} identical repeats (after a lift)"
        )
        if w == 20 and not quick:
            print(_row("published design", {**PUBLISHED_W20, "warned": 0, "cost": float("nan")}))
    if 20 in windows:
        loop20 = result["tool_loop"]["20"]
        result["published_design_w20"] = PUBLISHED_W20
        result["targets_w20"] = targets_w20(loop20["unguarded"]["mean"], loop20["guarded"]["mean"])
        print("\nTargets at W=20:")
        for name, t in result["targets_w20"].items():
            print(f"  {name:<40}{t['value']:>10}  {'met' if t['met'] else 'NOT MET'}")

    effects = effects_world(seeds, 20, calls)
    result["effects_world"] = effects
    print(f"\nEffects world (real files), W=20, {calls} calls, means over seeds {seeds}:")
    print(f"  {'':<15}{'success':>9}{'fail':>9}{'refused':>9}{'ref->ok':>9}{'wasted':>9}")
    for label, arm in (("unguarded", "unguarded"), ("scarguard", "scarguard"),
                       ("oracle floor", "oracle")):  # fmt: skip
        m = effects[arm]["mean"]
        print(
            f"  {label:<15}{m['successes']:>9.1f}{m['failures']:>9.1f}{m['refused']:>9.1f}"
            f"{m['refused_would_succeed']:>9.1f}{m['wasted']:>9.1f}"
        )
    wrong = sorted(effects["scarguard"]["refused_ok_cases"].items(), key=lambda kv: -kv[1])
    if wrong:
        print("  refused although it would have succeeded (all seeds):")
        for case, count in wrong[:8]:
            print(f"    {count:>4}  {case}")
    causes = effects["scarguard"]["waste_causes"]
    if causes:
        print("  failures above the floor (the oracle had evidence against them), all seeds:")
        for case, count in list(causes.items())[:12]:
            print(f"    {count:>4}  {case}")
    print("Targets of the effects world at W=20:")
    for name, t in effects["targets"].items():
        print(f"  {name:<40}{t['value']:>10}  {'met' if t['met'] else 'NOT MET'}")

    result["degradation"] = []
    print(f"\nDegradation curve (W=20, means over seeds {seeds}):")
    print(
        f"  {'calls':>6}{'unguarded repeats':>19}{'scarguard repeats':>19}"
        f"{'refused':>9}{'ref->ok':>9}"
    )
    for h in horizons:
        loop = tool_loop(seeds, 20, h, None)
        u, g = loop["unguarded"]["mean"], loop["guarded"]["mean"]
        result["degradation"].append({"calls": h, "unguarded": u, "guarded": g})
        print(
            f"  {h:>6}{u['repeated_failures']:>19.1f}{g['repeated_failures']:>19.1f}"
            f"{g['refused']:>9.1f}{g['refused_would_succeed']:>9.1f}"
        )

    sessions = 3 if quick else 5
    ms = multi_session(seeds, 20, calls, sessions, None)
    result["sessions"] = ms
    print(f"\n{sessions} consecutive sessions sharing one store (W=20, means over seeds {seeds}):")
    print(
        f"  {'session':>8}{'unguarded fail':>16}{'scarguard fail':>16}{'refused':>9}"
        f"{'ref->ok':>9}{'success':>9}"
    )
    for k, (u, g) in enumerate(zip(ms["unguarded"], ms["guarded"], strict=True), start=1):
        print(
            f"  {k:>8}{u['failures']:>16.1f}{g['failures']:>16.1f}{g['refused']:>9.1f}"
            f"{g['refused_would_succeed']:>9.1f}{g['successes']:>9.1f}"
        )

    trials = 10 if quick else 25
    sw_sessions = 3 if quick else 5
    plain = sweep(seeds, sw_sessions, trials, guarded=False)
    guarded = sweep(seeds, sw_sessions, trials, guarded=True)
    result["sweep"] = {
        "sessions": sw_sessions,
        "trials_per_session": trials,
        "memory_budget_gb": MEMORY_BUDGET_GB,
        "unguarded": plain,
        "guarded": guarded,
        "targets": {
            "no_dominating_known_oom_in_sessions_2_plus": guarded["violations"][
                "dominating_known_oom_run"
            ]
            == 0,
            "no_fitting_config_refused": guarded["violations"]["fitting_refused"] == 0,
        },
    }
    print(f"\nHyper-parameter sweep: {sw_sessions} sessions x {trials} trials, one shared store:")
    print(
        f"  {'session':>8}{'OOM unguarded':>15}{'OOM scarguard':>15}{'refused':>9}"
        f"{'best (guarded)':>16}"
    )
    for k, (u, g) in enumerate(
        zip(plain["per_session_mean"], guarded["per_session_mean"], strict=True), start=1
    ):
        print(
            f"  {k:>8}{u['oom']:>15.1f}{g['oom']:>15.1f}{g['refused']:>9.1f}"
            f"{g['best_true_score']:>16.2f}"
        )
    print(f"  violations (guarded): {guarded['violations']}")
    print(f"  targets: {result['sweep']['targets']}")

    if not opts.no_policy_sweep:
        result["policy_candidates_w20"] = policy_sweep(seeds, 20, calls)
        print(f"\nPolicy candidates (W=20, {calls} calls, means over seeds {seeds}):")
        print(_HEADER)
        for name, m in result["policy_candidates_w20"].items():
            print(_row(name, m))

    result["elapsed_s"] = round(time.perf_counter() - started, 2)
    path = write_result("effect" if not quick else "effect-quick", result, opts.out)
    print(f"\nwrote {path} in {result['elapsed_s']} s")
    return result


def _policy_fields(policy: Policy) -> dict[str, Any]:
    import attrs

    fields = attrs.asdict(policy, recurse=False)
    fields["ttl"] = {k.value: v for k, v in policy.ttl.items()}
    return fields


if __name__ == "__main__":
    main()
