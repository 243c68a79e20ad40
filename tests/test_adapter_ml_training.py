"""Tests for the ML training adapter: configurations, deltas, action classes, dominance."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from scarguard.adapters import (
    ARCHITECTURE_SWAP,
    BATCH_SIZE_INCREASE,
    CONFIG_CHANGE,
    LR_DECREASE,
    LR_INCREASE,
    ML_ACTION_CLASSES,
    OPTIMIZER_CHANGE,
    SCALE_DOWN,
    SCALE_UP_DEPTH,
    SCALE_UP_WIDTH,
    Adapter,
    MLTrainingAdapter,
    config_deltas,
    dominates,
)
from scarguard.adapters.ml_training import DEFAULT_SCALING_KEYS
from scarguard.model import Blame, Call, Outcome

ADAPTER = MLTrainingAdapter()
BASE = {
    "model": "gpt",
    "n_embd": 256,
    "n_head": 8,
    "n_layer": 4,
    "block_size": 1024,
    "batch_size": 32,
    "lr": 1e-3,
    "optimizer": "adamw",
    "dropout": 0.1,
    "seed": 1,
}


def run(**changes: Any) -> dict[str, Any]:
    return {**BASE, **changes}


class _NoBoolEq:
    """Compares like a numpy array: ``==`` gives something without a truth value."""

    def __init__(self, values: list[int]) -> None:
        self.values = values

    def __eq__(self, other: object) -> Any:
        return self

    def __bool__(self) -> bool:
        raise ValueError("ambiguous")

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"lr": 1e-3}, {"lr": 1e-3}, {}),
        ({"lr": 1e-3}, {"lr": 3e-3}, {"lr": (1e-3, 3e-3)}),
        ({"lr": 1e-3, "seed": 1}, {"lr": 1e-3}, {"seed": (1, None)}),
        ({}, {"dropout": 0.1}, {"dropout": (None, 0.1)}),
        ({"a": None}, {}, {"a": (None, None)}),
        ({"n": 1}, {"n": 1.0}, {}),
        (
            {"model": {"n_layer": 4, "n_embd": 256}},
            {"model": {"n_layer": 8, "n_embd": 256}},
            {"model.n_layer": (4, 8)},
        ),
        ({"z": 1, "a": 1}, {"z": 2, "a": 2}, {"a": (1, 2), "z": (1, 2)}),
    ],
)
def test_config_deltas(
    old: dict[str, Any], new: dict[str, Any], expected: dict[str, tuple[Any, Any]]
) -> None:
    """config_deltas reports added, removed and changed keys as (old, new), sorted."""
    deltas = config_deltas(old, new)
    assert deltas == expected
    assert list(deltas) == sorted(deltas)


def test_config_deltas_survive_values_without_a_truth_value() -> None:
    """Values whose ``==`` has no truth value are compared by canonical form."""
    assert config_deltas({"w": _NoBoolEq([1])}, {"w": _NoBoolEq([1])}) == {}
    assert set(config_deltas({"w": _NoBoolEq([1])}, {"w": _NoBoolEq([2])})) == {"w"}


def test_config_drops_ignored_keys_and_flattens() -> None:
    """The configuration leaves out ignored keys, flattens nesting and is JSON-safe."""
    args = {
        "seed": 3,
        "run_name": "try-7",
        "wandb": {"project": "p"},
        "model": {"n_layer": 4},
        "lr": math.nan,
        "step": 500,
    }
    assert ADAPTER.config(args) == {"model.n_layer": 4, "lr": "nan"}


@pytest.mark.parametrize(
    "noise",
    [
        {"seed": 7},
        {"run_name": "again"},
        {"output_dir": "/tmp/x"},
        {"wandb": {"project": "other"}},
        {"logging": {"output_dir": "/x"}},
        {"epoch": 3, "step": 9000},
    ],
)
def test_ignored_keys_do_not_change_the_fingerprint(noise: dict[str, Any]) -> None:
    """A new seed, run name or output directory is the same configuration."""
    assert ADAPTER.describe("train", run()).fingerprint == (
        ADAPTER.describe("train", {**run(), **noise}).fingerprint
    )


@pytest.mark.parametrize(
    "change", [{"lr": 2e-3}, {"n_layer": 5}, {"dropout": 0.0}, {"epochs": 2}, {"max_steps": 10}]
)
def test_configuration_keys_change_the_fingerprint(change: dict[str, Any]) -> None:
    """Any configuration key that is not ignored changes the fingerprint."""
    assert ADAPTER.describe("train", run()).fingerprint != (
        ADAPTER.describe("train", run(**change)).fingerprint
    )


def test_fingerprint_ignores_key_order() -> None:
    """The order of the configuration's keys does not matter."""
    reordered = dict(reversed(list(run().items())))
    assert ADAPTER.describe("t", run()).fingerprint == ADAPTER.describe("t", reordered).fingerprint


def test_describe_without_previous_has_no_move() -> None:
    """Without a previous run there is no delta and no action class."""
    call = ADAPTER.describe("train", run())
    assert call.changed == ()
    assert call.action_class is None
    assert call.targets == ()
    assert call.params == ADAPTER.config(run())
    assert call.args == run()


def _move(old: dict[str, Any], new: dict[str, Any]) -> Call:
    return ADAPTER.describe("train", new, previous=ADAPTER.describe("train", old))


def test_describe_with_nothing_changed_has_no_move() -> None:
    """A run equal to the previous one (ignored keys aside) has no action class."""
    call = _move(run(), run(seed=99, run_name="again"))
    assert call.changed == ()
    assert call.action_class is None


def test_describe_lists_changed_keys_sorted() -> None:
    """``changed`` holds the keys that differ from the previous run, sorted."""
    assert _move(run(), run(n_layer=8, dropout=0.2, seed=5)).changed == ("dropout", "n_layer")


def test_describe_uses_explicit_targets() -> None:
    """Explicit targets (a dataset, a checkpoint) are kept; none are extracted."""
    assert ADAPTER.describe("train", {"path": "data"}).targets == ()
    assert ADAPTER.describe("train", {}, targets=["ckpt.pt"]).targets == ("ckpt.pt",)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"n_embd": 512}, SCALE_UP_WIDTH),
        ({"n_head": 16}, SCALE_UP_WIDTH),
        ({"n_layer": 8}, SCALE_UP_DEPTH),
        ({"batch_size": 64}, BATCH_SIZE_INCREASE),
        ({"n_embd": 128}, SCALE_DOWN),
        ({"batch_size": 16, "n_layer": 2}, SCALE_DOWN),
        ({"lr": 3e-3}, LR_INCREASE),
        ({"lr": 3e-4}, LR_DECREASE),
        ({"model": "llama"}, ARCHITECTURE_SWAP),
        ({"optimizer": "sgd"}, OPTIMIZER_CHANGE),
        ({"dropout": 0.0}, CONFIG_CHANGE),
        ({"block_size": 2048}, CONFIG_CHANGE),
        ({"label_smoothing": 0.1}, CONFIG_CHANGE),
    ],
)
def test_each_action_class(changes: dict[str, Any], expected: str) -> None:
    """A single kind of change maps to its action class."""
    assert _move(run(), run(**changes)).action_class == expected


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"model": "llama", "n_embd": 512}, ARCHITECTURE_SWAP),
        ({"n_embd": 512, "n_layer": 8}, SCALE_UP_WIDTH),
        ({"n_layer": 8, "batch_size": 64}, SCALE_UP_DEPTH),
        ({"n_embd": 512, "batch_size": 16}, SCALE_UP_WIDTH),
        ({"batch_size": 64, "n_embd": 128}, BATCH_SIZE_INCREASE),
        ({"n_embd": 128, "lr": 3e-3}, SCALE_DOWN),
        ({"n_embd": 128, "block_size": 4096}, CONFIG_CHANGE),
        ({"optimizer": "sgd", "lr": 1e-1}, OPTIMIZER_CHANGE),
        ({"lr": 3e-3, "dropout": 0.0}, LR_INCREASE),
    ],
)
def test_action_class_precedence(changes: dict[str, Any], expected: str) -> None:
    """When several keys change, the most structural move names the class."""
    assert _move(run(), run(**changes)).action_class == expected


def test_numeric_strings_compare_as_numbers() -> None:
    """Numbers passed as strings (from a command line) still compare numerically."""
    assert _move({"lr": "1e-3"}, {"lr": "3e-3"}).action_class == LR_INCREASE


def test_custom_key_roles() -> None:
    """Overridden key sets change which class a delta gets."""
    adapter = MLTrainingAdapter(width_keys={"channels"}, lr_keys={"eta"})
    previous = adapter.describe("t", {"channels": 8, "eta": 1.0})
    assert adapter.describe("t", {"channels": 16, "eta": 1.0}, previous=previous).action_class == (
        SCALE_UP_WIDTH
    )
    assert adapter.describe("t", {"channels": 8, "eta": 2.0}, previous=previous).action_class == (
        LR_INCREASE
    )


def test_action_classes_are_listed_in_precedence_order() -> None:
    """ML_ACTION_CLASSES lists every class once, architecture first, catch-all last."""
    assert ML_ACTION_CLASSES[0] == ARCHITECTURE_SWAP
    assert ML_ACTION_CLASSES[-1] == CONFIG_CHANGE
    assert len(set(ML_ACTION_CLASSES)) == len(ML_ACTION_CLASSES) == 9


SCALING = DEFAULT_SCALING_KEYS
BOUND = {"batch_size": 32, "lr": 0.001}


@pytest.mark.parametrize(
    ("config", "bound", "expected"),
    [
        ({"batch_size": 64, "lr": 0.001}, BOUND, True),
        ({"batch_size": 32, "lr": 0.001}, BOUND, True),
        ({"batch_size": 16, "lr": 0.001}, BOUND, False),
        ({"batch_size": 64, "lr": 0.01}, BOUND, False),
        ({"lr": 0.001}, BOUND, False),
        ({"batch_size": 64, "lr": 0.001, "gradient_checkpointing": True}, BOUND, False),
        ({"batch_size": 64, "lr": 0.001, "n_layer": 4}, BOUND, False),
        ({"batch_size": "64", "lr": 0.001}, BOUND, True),
        ({"batch_size": 64, "n_layer": 8}, {"batch_size": 32, "n_layer": 4}, True),
        ({"batch_size": 64, "n_layer": 2}, {"batch_size": 32, "n_layer": 4}, False),
        ({"batch_size": "auto"}, {"batch_size": "auto"}, True),
        ({"batch_size": "auto"}, {"batch_size": 32}, False),
        ({"batch_size": True}, {"batch_size": 1}, False),
        ({"model": {"n_embd": 512}}, {"model": {"n_embd": 256}}, True),
        ({"model": {"n_embd": 128}}, {"model": {"n_embd": 256}}, False),
        ({"dropout": 0.2}, {"dropout": 0.1}, False),
    ],
)
def test_dominance_truth_table(
    config: dict[str, Any], bound: dict[str, Any], expected: bool
) -> None:
    """A config dominates when at least as large in every scaling key, all else equal."""
    assert dominates(config, bound, SCALING) is expected


def test_dominance_excludes_ignored_keys_when_given() -> None:
    """Ignored keys on either side do not break dominance when passed."""
    config = {"batch_size": 64, "seed": 2, "run_name": "b"}
    bound = {"batch_size": 32, "seed": 1}
    assert not dominates(config, bound, SCALING)
    assert dominates(config, bound, SCALING, ignore_keys={"seed", "run_name"})


def test_adapter_dominates_uses_its_own_keys() -> None:
    """The adapter's dominates() applies its scaling and ignored keys."""
    assert ADAPTER.dominates(run(batch_size=64, seed=3), run())
    assert not ADAPTER.dominates(run(batch_size=16), run())
    custom = MLTrainingAdapter(scaling_keys={"channels"})
    assert custom.dominates({"channels": 16}, {"channels": 8})
    assert not custom.dominates({"batch_size": 64}, {"batch_size": 32})


def test_dominance_on_described_params() -> None:
    """Dominance works on the params of described calls (flattened, JSON-safe)."""
    small = ADAPTER.describe("train", {"model": {"n_embd": 256}, "lr": 1e-3}).params
    large = ADAPTER.describe("train", {"model": {"n_embd": 512}, "lr": 1e-3}).params
    assert ADAPTER.dominates(large, small)
    assert not ADAPTER.dominates(small, large)


def test_mutating_and_requires_existing_target_are_false() -> None:
    """Training runs neither mutate targets nor need existing ones."""
    call = _move(run(), run(n_layer=8))
    assert ADAPTER.mutating(call) is False
    assert ADAPTER.requires_existing_target(call) is False


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [({}, None), ({"oom_gpu": "harness"}, Blame.HARNESS), ({"oom_gpu": Blame.AGENT}, Blame.AGENT)],
)
def test_blame_uses_the_overrides(overrides: dict[str, Any], expected: Blame | None) -> None:
    """blame() returns the override for the signature's name, else None."""
    signature: Any = SimpleNamespace(name="oom_gpu")
    adapter = MLTrainingAdapter(blame_overrides=overrides)
    assert adapter.blame(signature, Outcome(ok=False, error="CUDA out of memory")) == expected


def test_ml_training_adapter_is_an_adapter() -> None:
    """The adapter satisfies the runtime-checkable Adapter protocol."""
    assert isinstance(ADAPTER, Adapter)
    assert ADAPTER.name == "ml_training"
    assert {"batch_size", "n_embd", "n_layer", "seq_len"} <= ADAPTER.scaling_keys
