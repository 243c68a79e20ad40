"""A hyper-parameter sweep that stops paying for out-of-memory runs it can predict.

One GPU out-of-memory failure bans every configuration at least as large in every
memory-scaling parameter (the others equal): a dominance ban, not just the one value.
"""

import itertools

from scarguard import FailureMemory, MLTrainingAdapter

GPU_BUDGET = 384  # the fake GPU fits batch_size * n_layer up to this


def train(batch_size: int, n_layer: int, lr: float) -> float:
    """Pretend to train; raise like PyTorch when the configuration does not fit."""
    if batch_size * n_layer > GPU_BUDGET:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    return round(3.0 - 0.02 * n_layer - 0.004 * batch_size + abs(lr - 3e-4) * 100, 3)


memory = FailureMemory(":memory:", adapters={"train": MLTrainingAdapter()})
ran = refused = ooms = 0
grid = itertools.product((16, 32, 64), (8, 12, 24), (3e-4, 1e-3))
for batch_size, n_layer, lr in sorted(grid, key=lambda c: c[0] * c[1]):
    config = {"batch_size": batch_size, "n_layer": n_layer, "lr": lr}
    decision = memory.check("train", config)
    if not decision.allowed:
        refused += 1
        print(f"skip  {config}: {decision.violations[0].kind.value}")
        continue
    ran += 1
    try:
        loss = train(**config)
    except RuntimeError as error:
        ooms += 1
        memory.record("train", config, error=error)
        print(f"OOM   {config}")
    else:
        memory.record("train", config, ok=True, score=loss)
        print(f"ok    {config}: loss {loss}")

print(f"\n{ran} runs, {ooms} out of memory, {refused} refused without spending GPU time")
for rule in memory.constraints():
    print(f"- {rule.kind.value}: at least {rule.params['config']}")
