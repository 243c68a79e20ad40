"""The adapter for hyper-parameter search: configurations, their deltas and dominance.

A training run is a call whose arguments are its configuration. Nested mappings are
flattened to dotted keys (``{"model": {"n_layer": 12}}`` becomes ``model.n_layer``); a key's
role (scaling, width, learning rate...) is decided by its last segment, and a key is ignored
when any of its segments is an ignored key (``wandb.project``).

The action class names the move from the previous successful configuration. When several
keys change, the first matching class in this order wins (the most structural move first)::

    architecture_swap > scale_up_width > scale_up_depth > batch_size_increase
    > scale_down > optimizer_change > lr_increase > lr_decrease > config_change

``scale_down`` means some scaling key decreased and none increased; ``config_change`` is any
other change (a dropout tweak, a longer sequence, a key added or removed).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from scarguard import canonical
from scarguard.model import Blame, Call, Outcome

if TYPE_CHECKING:
    from scarguard.naming._signature import Signature

__all__ = [
    "ARCHITECTURE_SWAP",
    "BATCH_SIZE_INCREASE",
    "CONFIG_CHANGE",
    "DEFAULT_IGNORE_KEYS",
    "DEFAULT_SCALING_KEYS",
    "LR_DECREASE",
    "LR_INCREASE",
    "ML_ACTION_CLASSES",
    "OPTIMIZER_CHANGE",
    "SCALE_DOWN",
    "SCALE_UP_DEPTH",
    "SCALE_UP_WIDTH",
    "MLTrainingAdapter",
    "config_deltas",
    "dominates",
]

ARCHITECTURE_SWAP: Final = "architecture_swap"
SCALE_UP_WIDTH: Final = "scale_up_width"
SCALE_UP_DEPTH: Final = "scale_up_depth"
BATCH_SIZE_INCREASE: Final = "batch_size_increase"
SCALE_DOWN: Final = "scale_down"
OPTIMIZER_CHANGE: Final = "optimizer_change"
LR_INCREASE: Final = "lr_increase"
LR_DECREASE: Final = "lr_decrease"
CONFIG_CHANGE: Final = "config_change"
ML_ACTION_CLASSES: Final = (
    ARCHITECTURE_SWAP, SCALE_UP_WIDTH, SCALE_UP_DEPTH, BATCH_SIZE_INCREASE, SCALE_DOWN,
    OPTIMIZER_CHANGE, LR_INCREASE, LR_DECREASE, CONFIG_CHANGE,
)  # fmt: skip
"""Every action class :class:`MLTrainingAdapter` can return, in order of precedence."""

DEFAULT_WIDTH_KEYS: Final = frozenset(
    {
        "width", "hidden_size", "hidden_dim", "n_embd", "d_model", "dim", "embed_dim",
        "embedding_dim", "intermediate_size", "ffn_dim", "d_ff", "heads", "n_head", "n_heads",
        "num_heads", "num_attention_heads",
    }
)  # fmt: skip
DEFAULT_DEPTH_KEYS: Final = frozenset(
    {"depth", "n_layer", "n_layers", "num_layers", "num_hidden_layers", "layers", "n_blocks"}
)
DEFAULT_BATCH_KEYS: Final = frozenset(
    {
        "batch_size", "micro_batch_size", "per_device_train_batch_size", "train_batch_size",
        "global_batch_size", "total_batch_size",
    }
)  # fmt: skip
DEFAULT_CONTEXT_KEYS: Final = frozenset(
    {
        "seq_len", "sequence_length", "block_size", "context_length", "max_seq_len",
        "max_seq_length", "max_length",
    }
)  # fmt: skip
DEFAULT_SCALING_KEYS: Final = (
    DEFAULT_WIDTH_KEYS
    | DEFAULT_DEPTH_KEYS
    | DEFAULT_CONTEXT_KEYS
    | {"batch_size", "micro_batch_size", "per_device_train_batch_size", "train_batch_size"}
)
"""Keys whose growth grows memory per device (a global batch split by accumulation does not)."""
DEFAULT_LR_KEYS: Final = frozenset({"lr", "learning_rate", "max_lr", "base_lr"})
DEFAULT_ARCHITECTURE_KEYS: Final = frozenset({"model", "architecture", "arch", "model_type"})
DEFAULT_OPTIMIZER_KEYS: Final = frozenset({"optimizer", "optim"})
DEFAULT_IGNORE_KEYS: Final = frozenset(
    {
        "seed", "run_name", "run_id", "output_dir", "out_dir", "log_dir", "logging_dir",
        "save_dir", "checkpoint_dir", "resume_from_checkpoint", "wandb", "wandb_project",
        "wandb_entity", "wandb_run_name", "tags", "notes", "step", "epoch", "log_interval",
        "logging_steps", "save_steps", "verbose", "request_id", "timestamp",
    }
)  # fmt: skip
"""Keys that do not change what a run computes: identity, bookkeeping, progress counters
(``step``, ``epoch``: where a run resumes, not what it is; ``epochs``, ``max_steps`` count)."""


def _leaf(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def _ignored(key: str, ignore_keys: Collection[str]) -> bool:
    return any(segment in ignore_keys for segment in key.split("."))


def _flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def _number(value: Any) -> float | None:
    """Return ``value`` as a finite float (numbers and numeric strings), else ``None``."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, bool) is not isinstance(new, bool):
        return False  # True == 1 in Python, but a flag is not a size
    try:
        return bool(old == new)
    except Exception:  # arrays and odd types: compare their canonical forms instead
        return canonical.canonical_json(old) == canonical.canonical_json(new)


def config_deltas(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Return the keys that differ between two configurations, with ``(old, new)`` values.

    Nested mappings are compared by their dotted leaf keys; a key missing on one side has
    ``None`` there. Keys come out sorted.

    Example: ``config_deltas({"lr": 1e-3, "seed": 1}, {"lr": 3e-3})`` is
    ``{"lr": (0.001, 0.003), "seed": (1, None)}``.
    """
    flat_old, flat_new = _flatten(old), _flatten(new)
    deltas: dict[str, tuple[Any, Any]] = {}
    for key in sorted(flat_old.keys() | flat_new.keys()):
        before, after = flat_old.get(key), flat_new.get(key)
        if key not in flat_old or key not in flat_new or not _same(before, after):
            deltas[key] = (before, after)
    return deltas


def dominates(
    config: Mapping[str, Any],
    bound: Mapping[str, Any],
    scaling_keys: Collection[str],
    *,
    ignore_keys: Collection[str] = (),
) -> bool:
    """Return whether ``config`` must fail wherever ``bound`` ran out of memory.

    That holds when both name the same keys (ignored keys aside), ``config`` is at least as
    large in every scaling key, and every other key is equal. A key only one side has (such
    as an added ``gradient_checkpointing``) makes them different configurations; so does a
    scaling key that is not a number on either side, unless both are equal.

    Example: with ``bound = {"batch_size": 32, "lr": 1e-3}``, ``{"batch_size": 64,
    "lr": 1e-3}`` dominates it; ``{"batch_size": 16, "lr": 1e-3}`` and ``{"batch_size": 64,
    "lr": 1e-2}`` do not.
    """
    flat_config = {k: v for k, v in _flatten(config).items() if not _ignored(k, ignore_keys)}
    flat_bound = {k: v for k, v in _flatten(bound).items() if not _ignored(k, ignore_keys)}
    if flat_config.keys() != flat_bound.keys():
        return False
    for key, limit in flat_bound.items():
        value = flat_config[key]
        if _leaf(key) in scaling_keys:
            size, floor = _number(value), _number(limit)
            if size is not None and floor is not None:
                if size < floor:
                    return False
                continue
        if not _same(value, limit):
            return False
    return True


def _blames(value: Mapping[str, Blame | str]) -> Mapping[str, Blame]:
    return {name: Blame(blame) for name, blame in value.items()}


def _frozen_keys(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


@attrs.frozen(kw_only=True, eq=False)
class MLTrainingAdapter:
    """Describe training runs of a hyper-parameter search.

    Args:
        scaling_keys: Keys whose growth grows memory use (dominance bans).
        width_keys: Keys whose increase is ``scale_up_width``.
        depth_keys: Keys whose increase is ``scale_up_depth``.
        batch_keys: Keys whose increase is ``batch_size_increase``.
        lr_keys: Learning-rate keys (``lr_increase``, ``lr_decrease``).
        architecture_keys: Keys whose change is ``architecture_swap``.
        optimizer_keys: Keys whose change is ``optimizer_change``.
        ignore_keys: Keys left out of the configuration, its fingerprint and its deltas.
        blame_overrides: Signature name to the blame to use instead of the signature's.
    """

    scaling_keys: frozenset[str] = attrs.field(default=DEFAULT_SCALING_KEYS, converter=_frozen_keys)
    width_keys: frozenset[str] = attrs.field(default=DEFAULT_WIDTH_KEYS, converter=_frozen_keys)
    depth_keys: frozenset[str] = attrs.field(default=DEFAULT_DEPTH_KEYS, converter=_frozen_keys)
    batch_keys: frozenset[str] = attrs.field(default=DEFAULT_BATCH_KEYS, converter=_frozen_keys)
    lr_keys: frozenset[str] = attrs.field(default=DEFAULT_LR_KEYS, converter=_frozen_keys)
    architecture_keys: frozenset[str] = attrs.field(
        default=DEFAULT_ARCHITECTURE_KEYS, converter=_frozen_keys
    )
    optimizer_keys: frozenset[str] = attrs.field(
        default=DEFAULT_OPTIMIZER_KEYS, converter=_frozen_keys
    )
    ignore_keys: frozenset[str] = attrs.field(default=DEFAULT_IGNORE_KEYS, converter=_frozen_keys)
    blame_overrides: Mapping[str, Blame] = attrs.field(factory=dict, converter=_blames)
    name: str = attrs.field(default="ml_training", init=False)

    def config(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Return the configuration in ``args``: flattened, ignored keys out, JSON-safe."""
        flat = _flatten(args)
        return {
            key: canonical.to_jsonable(value)
            for key, value in sorted(flat.items())
            if not _ignored(key, self.ignore_keys)
        }

    def classify_change(self, deltas: Mapping[str, tuple[Any, Any]]) -> str | None:
        """Return the action class of a move given its deltas (see the module docstring)."""
        if not deltas:
            return None
        up: set[str] = set()
        down: set[str] = set()
        for key, (old, new) in deltas.items():
            before, after = _number(old), _number(new)
            if before is not None and after is not None and before != after:
                (up if after > before else down).add(_leaf(key))
        changed = {_leaf(key) for key in deltas}
        rules = (
            (ARCHITECTURE_SWAP, bool(changed & self.architecture_keys)),
            (SCALE_UP_WIDTH, bool(up & self.width_keys)),
            (SCALE_UP_DEPTH, bool(up & self.depth_keys)),
            (BATCH_SIZE_INCREASE, bool(up & self.batch_keys)),
            (SCALE_DOWN, bool(down & self.scaling_keys) and not up & self.scaling_keys),
            (OPTIMIZER_CHANGE, bool(changed & self.optimizer_keys)),
            (LR_INCREASE, bool(up & self.lr_keys)),
            (LR_DECREASE, bool(down & self.lr_keys)),
        )
        return next((action for action, applies in rules if applies), CONFIG_CHANGE)

    def dominates(self, config: Mapping[str, Any], bound: Mapping[str, Any]) -> bool:
        """Return :func:`dominates` with this adapter's scaling and ignored keys."""
        return dominates(config, bound, self.scaling_keys, ignore_keys=self.ignore_keys)

    def describe(
        self,
        tool: str,
        args: Mapping[str, Any],
        targets: Sequence[str] | None = None,
        previous: Call | None = None,
    ) -> Call:
        """Return the run: its configuration, what changed and the move it makes.

        Args:
            tool: The training entry point's name.
            args: The configuration (nested mappings allowed).
            targets: Explicit targets (a dataset, a checkpoint); none are extracted.
            previous: The last successful run, for ``changed`` and the action class.
        """
        params = self.config(args)
        deltas = config_deltas(previous.params, params) if previous is not None else {}
        return Call(
            tool=tool,
            args=dict(args),
            targets=() if targets is None else targets,
            action_class=self.classify_change(deltas),
            fingerprint=canonical.fingerprint(tool, params),
            params=params,
            changed=tuple(deltas),
        )

    def blame(self, signature: Signature, outcome: Outcome) -> Blame | None:
        """Return the configured override for the signature's name, if any."""
        return self.blame_overrides.get(signature.name)

    def mutating(self, call: Call) -> bool:
        """Return ``False``: a training run changes no target the memory tracks."""
        return False

    def requires_existing_target(self, call: Call) -> bool:
        """Return ``False``: a run's failures say nothing about a missing target."""
        return False
