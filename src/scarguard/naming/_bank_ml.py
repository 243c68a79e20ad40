"""The default bank's signatures of training runs: memory, accelerators, divergence, shapes.

Data of :mod:`scarguard.naming.bank`, which orders every signature of the default bank (first
match wins); each comment says whose choice would have to change for the call to succeed.
"""

from __future__ import annotations

from scarguard.model import Blame
from scarguard.naming._signature import Signature

__all__ = [
    "CUBLAS_ERROR",
    "GRADIENT_EXPLOSION",
    "NAN_LOSS",
    "NCCL_ERROR",
    "OOM_GPU",
    "OOM_HOST",
    "TENSOR_SHAPE_MISMATCH",
    "TRAINING_DIVERGENCE",
]

A, H, U = Blame.AGENT, Blame.HARNESS, Blame.UNKNOWN

# Agent: it chose the batch, model or sequence size; resource=True lets adapters ban larger.
OOM_GPU = Signature(
    "oom_gpu",
    r"\bCUDA out of memory\b|\bCUDA error: out of memory\b"
    r"|\btorch\.(?:cuda\.)?OutOfMemoryError\b|\bCUBLAS_STATUS_ALLOC_FAILED\b"
    r"|\bMPS backend out of memory\b"
    r"|\bOOM when allocating tensor\b|\bRESOURCE_EXHAUSTED: Out of memory\b",
    A,
    "Reduce the batch size, sequence length or model size (or enable gradient "
    "checkpointing or mixed precision) before retrying; the same size will not fit.",
    "GPU out of memory",
    resource=True,
    exception_types={"OutOfMemoryError"},
)

# Agent: it asked for more host memory than exists (array sizes, loading whole files).
OOM_HOST = Signature(
    "oom_host",
    r"\bMemoryError\b|\bCannot allocate memory\b|\bstd::bad_alloc\b"
    r"|\bJavaScript heap out of memory\b|\bUnable to allocate [\d.]+ [KMGT]i?B\b"
    r"|\bjava\.lang\.OutOfMemoryError\b|\bJava heap space\b",
    A,
    "Process the data in smaller chunks or stream it instead of loading it at once; "
    "do not retry with the same size.",
    "host out of memory",
    resource=True,
    exception_types={"MemoryError"},
)

# Harness: collective communication failed between ranks (network, driver, a dead peer).
NCCL_ERROR = Signature(
    "nccl_error",
    r"\bNCCL (?:error|WARN|timeout)\b|\bnccl[A-Z]\w*Error\b|\bWorkNCCL\b"
    r"|\bProcessGroupNCCL\b[^\n]*\b(?:[Tt]imeout|[Ee]rror|abort(?:ed|ing))\b",
    H,
    "Check that every rank is alive and reachable, then relaunch the distributed job; "
    "the training configuration is not the cause.",
    "NCCL communication error",
)

# Unknown: cuBLAS failures come from unsupported dtypes or shapes as often as from drivers.
CUBLAS_ERROR = Signature(
    "cublas_error",
    r"\bCUBLAS_STATUS_[A-Z_]+\b|\bcuBLAS error\b",
    U,
    "Check the dtypes and shapes passed to the matrix multiply; if they are valid, run "
    "once with CUDA_LAUNCH_BLOCKING=1 to locate the failing call.",
    "cuBLAS error",
)

# Agent: the learning rate, initialisation or data it chose made the loss non-finite.
NAN_LOSS = Signature(
    "nan_loss",
    r"(?i:\bloss\s*(?:is|was|became|of|=|:)?\s*(?:nan|-?inf(?:inity)?)\b)|(?i:\bnan loss\b)"
    r"|(?i:\bnon-finite loss\b)|\bInvalid loss, terminating training\b"
    r"|\breturned nan values in its \d+\w* output\b",
    A,
    "Lower the learning rate, add gradient clipping or check the inputs for NaN before "
    "training again; do not rerun the same configuration.",
    "loss became NaN or infinite",
)

# Agent: its optimisation settings let the gradients blow up.
GRADIENT_EXPLOSION = Signature(
    "gradient_explosion",
    r"(?i:\bgradients? (?:explo(?:sion|ded|ding)|overflow(?:ed)?)\b)"
    r"|(?i:\bexploding gradients?\b)|(?i:\bgrad(?:ient)? norm (?:is |was )?(?:nan|inf)\b)"
    r"|\bfor gradients from `parameters` is non-finite\b",
    A,
    "Clip the gradient norm and lower the learning rate before training again.",
    "gradient explosion",
)

# Agent: its hyper-parameters made training diverge.
TRAINING_DIVERGENCE = Signature(
    "training_divergence",
    r"(?i:\b(?:training|loss|model|optimi[sz]ation) (?:has )?diverged\b)"
    r"|(?i:\bdivergence detected\b)|(?i:\bloss (?:is )?diverging\b)",
    A,
    "Lower the learning rate or add warm-up, and restart from the last good checkpoint.",
    "training diverged",
)

# Agent: the tensors it built have incompatible shapes; identical code fails identically.
TENSOR_SHAPE_MISMATCH = Signature(
    "tensor_shape_mismatch",
    r"\bsize mismatch\b|\bshapes cannot be multiplied\b|\bExpected input batch_size\b"
    r"|\bThe size of tensor a \(\d+\) must match the size of tensor b\b"
    r"|\bshape '\[[^\]\n]*\]' is invalid for input of size\b|\bIncompatible shapes\b"
    r"|\boperands could not be broadcast together\b|\bshape mismatch\b"
    r"|\bto have \d+ channels, but got \d+ channels\b",
    A,
    "Print the shapes of the tensors involved and fix the layer sizes or the reshape so "
    "they agree; the same code will fail again.",
    "tensor shape mismatch",
    deterministic=True,
)
