"""The benchmark suites still run: each in its short mode, checking the JSON it writes.

Not timed: only the structure of the results is checked, and for the effectiveness bench
the correctness invariants (the published unguarded figures reproduce exactly; nothing that
fits is refused in the sweep; no configuration dominating a known out-of-memory one runs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the benchmarks

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def run_bench(name: str, out: Path, *extra: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), "--quick", "--out", str(out), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def effect(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_bench("effect", tmp_path_factory.mktemp("effect") / "effect.json")


@pytest.fixture(scope="module")
def cost(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_bench("cost", tmp_path_factory.mktemp("cost") / "cost.json")


def test_effect_reproduces_the_published_unguarded_run(effect: dict) -> None:
    repro = effect["reproduction"]
    assert repro["exact"] is True
    assert repro["seed42_w20"] == {"successes": 101, "failures": 99, "repeated_failures": 82}
    assert repro["mean_seeds1to5_w20"] == pytest.approx(
        {"successes": 91.0, "failures": 109.0, "repeated_failures": 92.4}
    )


def test_effect_structure(effect: dict) -> None:
    assert effect["benchmark"] == "effect" and effect["mode"] == "quick"
    assert {"cpu", "python", "sqlite", "date"} <= set(effect["machine"])
    loop = effect["tool_loop"]["20"]
    for arm in ("unguarded", "guarded"):
        mean = loop[arm]["mean"]
        for key in (
            "successes",
            "failures",
            "repeated_failures",
            "refused",
            "refused_would_succeed",
            "wasted",
            "cost",
        ):
            assert key in mean
        assert len(loop[arm]["per_seed"]) == len(loop["seeds"])
    assert loop["unguarded"]["mean"]["refused"] == 0
    assert set(effect["targets_w20"]) == {
        "wasted_at_most_26",
        "refused_would_succeed_at_most_2pct",
        "successes_at_least_90pct_of_unguarded",
    }
    assert [row["calls"] for row in effect["degradation"]] == [50, 100]
    assert len(effect["sessions"]["guarded"]) == effect["sessions"]["sessions"]
    assert "default" in effect["policy_candidates_w20"]


def test_effect_invariants(effect: dict) -> None:
    loop = effect["tool_loop"]["20"]
    guarded, plain = loop["guarded"]["mean"], loop["unguarded"]["mean"]
    # Each guarded session makes as many calls as the unguarded one.
    assert guarded["successes"] + guarded["failures"] + guarded["refused"] == loop["calls"]
    assert plain["successes"] + plain["failures"] == loop["calls"]
    # The guard repeats fewer failures than the forgetful agent alone.
    assert guarded["repeated_failures"] < plain["repeated_failures"]
    assert guarded["wasted"] == guarded["failures"] + guarded["refused_would_succeed"]
    sweep = effect["sweep"]
    assert sweep["guarded"]["violations"]["fitting_refused"] == 0
    assert sweep["guarded"]["violations"]["dominating_known_oom_run"] == 0
    assert sweep["targets"] == {
        "no_dominating_known_oom_in_sessions_2_plus": True,
        "no_fitting_config_refused": True,
    }


def test_cost_structure(cost: dict) -> None:
    assert cost["benchmark"] == "cost" and cost["mode"] == "quick"
    expected = {
        "bare_call", "wrapt_passthrough", "tenacity_no_retry", "guarded_allowed_sqlite",
        "guarded_allowed_json", "guarded_allowed_memory", "guarded_failing_sqlite",
        "sqlite_insert_wal_normal", "sqlite_insert_wal_full", "record_failure_default",
        "record_failure_durable", "record_success",
    }  # fmt: skip
    assert expected <= set(cost["cases"])
    for case in cost["cases"].values():
        assert {"p50_us", "p99_us", "mean_us", "max_us", "n"} <= set(case)
        assert 0 < case["p50_us"] <= case["p99_us"] <= case["max_us"]
    assert [h["bulk_filled"] for h in cost["history"]] == [100, 10_000]
    for budget in cost["budgets"].values():
        assert {"measured", "value", "met"} <= set(budget)


def test_cost_contention_loses_nothing(cost: dict) -> None:
    c = cost["contention"]
    assert c["processes"] == 4
    assert c["lost"] == 0 and c["lock_errors"] == 0 and c["other_errors"] == 0
    assert c["integrity_check"] == "ok" and c["chain_valid"] is True


def test_effects_world_structure(effect: dict) -> None:
    """The effects world reports the three arms per seed, their means and the three targets."""
    world = effect["effects_world"]
    assert world["window"] == 20
    for arm in ("unguarded", "scarguard", "oracle"):
        assert len(world[arm]["per_seed"]) == len(world["seeds"])
        assert {"successes", "failures", "refused", "refused_would_succeed", "wasted"} <= set(
            world[arm]["mean"]
        )
    assert set(world["targets"]) == {
        "wasted_within_1.10x_of_floor",
        "refused_would_succeed_at_most_0.5pct",
        "successes_at_least_93pct_of_unguarded",
    }


def test_effects_world_invariants(effect: dict) -> None:
    """Every arm makes the same number of calls; the oracle never refuses a call that would
    succeed and wastes no more than scarguard or the unguarded agent."""
    world = effect["effects_world"]
    for arm in ("unguarded", "scarguard", "oracle"):
        for row in world[arm]["per_seed"]:
            assert row["successes"] + row["failures"] + row["refused"] == world["calls"]
            assert row["wasted"] == row["failures"] + row["refused_would_succeed"]
    assert world["unguarded"]["mean"]["refused"] == 0
    assert world["oracle"]["mean"]["refused_would_succeed"] == 0
    floor = world["oracle"]["mean"]["wasted"]
    assert floor <= world["scarguard"]["mean"]["wasted"]
    assert floor < world["unguarded"]["mean"]["wasted"]


def test_retention_bench_purges_and_keeps_the_chain_valid(tmp_path: Path) -> None:
    """The retention bench deletes the old half, verifies the chain, and VACUUM shrinks the file."""
    result = run_bench("retention", tmp_path / "retention.json")
    filled, purged, vacuumed = result["stages"]
    assert result["deleted_failures"] == filled["failures"] - purged["failures"] > 0
    assert purged["receipts"] < filled["receipts"] and result["chain_valid_after_purge"]
    assert vacuumed["bytes"] < filled["bytes"]


def test_stores_bench_compares_each_design_with_its_simpler_one(tmp_path: Path) -> None:
    """The stores bench reports both designs at each history size and delay, and cleans up."""
    result = run_bench("stores", tmp_path / "stores.json", "--delays", "0,1")
    assert result["benchmark"] == "stores" and result["mode"] == "quick"
    assert [row["history"] for row in result["json"]] == [100, 1000]
    for row in result["json"]:
        for name in ("journal_record", "whole_file_record", "journal_reload", "whole_file_reload"):
            assert row[name]["n"] == row[f"{name}_no_fsync"]["n"] > 0
        assert row["record_ratio"] > 0 and row["reload_ratio_no_fsync"] > 0
        # the whole file holds every failure; the journal store's state only counters
        assert row["whole_file_bytes"] > 10 * row["journal_state_bytes"]
    postgres = result["postgres"]
    assert "skipped" not in postgres, postgres
    assert [row["one_way_delay_ms"] for row in postgres["rows"]] == [0.0, 1.0]
    for row in postgres["rows"]:
        assert row["watch_generation"]["n"] > row["select_generation"]["n"] > 0
        assert row["watch_staleness"]["n"] == row["select_staleness"]["n"] > 0
    import psycopg

    from helpers.postgres import PG_URL

    with psycopg.connect(PG_URL) as conn:
        left = conn.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s",
            (postgres["schema"],),
        ).fetchone()
    assert left == (0,)  # the bench dropped its schema


def test_repairs_finds_no_call_refused_after_its_repair(tmp_path: Path) -> None:
    """The repair benchmark's quick run (real git): every repaired call is allowed again."""
    result = run_bench("repairs", tmp_path / "repairs.json")
    assert result["benchmark"] == "repairs" and result["mode"] == "quick"
    assert len(result["scenarios"]) == 4
    for row in result["scenarios"]:
        assert row["by_agent"]["outcome"] == "allowed", row
        assert row["by_hand"]["outcome"] == "allowed", row
    assert result["false_refusals"] == {"by_agent": 0, "by_hand": 0}
