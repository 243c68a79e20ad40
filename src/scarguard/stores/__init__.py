"""Storage backends for :class:`~scarguard.FailureMemory`."""

from scarguard.stores.memory import MemoryStore
from scarguard.stores.protocol import CounterValue, Store, Transaction, VerifyReport

__all__ = ["CounterValue", "MemoryStore", "Store", "Transaction", "VerifyReport"]
