"""A tamper-evident hash chain over everything the memory records.

Each receipt hashes the canonical JSON of its whole record: sequence number, previous hash,
type, time (integer milliseconds) and payload (floats carried as strings, so the bytes
hashed never depend on float formatting). Editing any field, deleting or reordering a
receipt breaks a link; a cut-off tail or a rolled-back store is caught by comparing with a
checkpoint of the head kept beside the store. With a secret key (``SCARGUARD_RECEIPT_KEY``)
the hashes are HMACs and the checkpoint carries one too, so forging a chain, or cutting it
and rewriting the checkpoint to match, needs the key.

Retention compacts the chain: the receipts before some sequence number ``F`` are deleted and
a ``compact`` receipt is appended naming ``F`` and the hash the receipt ``F`` links to. The
chain then verifies from ``F``: a chain that does not start at 1 is valid only when its
latest ``compact`` receipt names exactly where it starts, so deleting old receipts by any
other means is still detected (and, with a key, cannot be covered up).

The package: ``_chain`` (receipts, sealing, appending in a transaction over the
``ChainWriter`` primitives, checking a chain),
``_checkpoints`` (the checkpoint of a verified head and its MAC) and ``_verify`` (verifying a
store over the ``ChainReader`` primitives: its chain read in one snapshot, its head, its
checkpoint).
"""

from __future__ import annotations

from scarguard.receipts._chain import (
    COMPACT,
    GENESIS,
    KEY_ENV,
    Appending,
    CanonicalPayload,
    ChainWriter,
    Receipt,
    VerifyReport,
    reseal,
    seal,
    verify_chain,
)
from scarguard.receipts._checkpoints import (
    Checkpoints,
    FileCheckpoint,
    check_checkpoint,
    checkpoint_mac,
    damaged_checkpoint,
    load_checkpoint,
    save_checkpoint,
    write_checkpoint,
)
from scarguard.receipts._verify import Chain, ChainReader, verify_store

__all__ = [
    "COMPACT",
    "GENESIS",
    "KEY_ENV",
    "Appending",
    "CanonicalPayload",
    "Chain",
    "ChainReader",
    "ChainWriter",
    "Checkpoints",
    "FileCheckpoint",
    "Receipt",
    "VerifyReport",
    "check_checkpoint",
    "checkpoint_mac",
    "damaged_checkpoint",
    "load_checkpoint",
    "reseal",
    "save_checkpoint",
    "seal",
    "verify_chain",
    "verify_store",
    "write_checkpoint",
]
