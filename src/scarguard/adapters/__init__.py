"""Adapters: how a domain's calls become :class:`~scarguard.model.Call` values.

- :class:`ToolCallAdapter` for any agent tool loop (files, shell, search, HTTP).
- :class:`MLTrainingAdapter` for hyper-parameter search (configuration deltas, dominance).
"""

from scarguard.adapters._actions import (
    API_CALL,
    DELETE,
    FILE_CREATE,
    FILE_EDIT,
    FILE_READ,
    SEARCH,
    SHELL_EXEC,
    TOOL_ACTION_CLASSES,
)
from scarguard.adapters.ml_training import (
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
    MLTrainingAdapter,
    config_deltas,
    dominates,
)
from scarguard.adapters.protocol import Adapter
from scarguard.adapters.tool_call import ToolCallAdapter

__all__ = [
    "API_CALL",
    "ARCHITECTURE_SWAP",
    "BATCH_SIZE_INCREASE",
    "CONFIG_CHANGE",
    "DELETE",
    "FILE_CREATE",
    "FILE_EDIT",
    "FILE_READ",
    "LR_DECREASE",
    "LR_INCREASE",
    "ML_ACTION_CLASSES",
    "OPTIMIZER_CHANGE",
    "SCALE_DOWN",
    "SCALE_UP_DEPTH",
    "SCALE_UP_WIDTH",
    "SEARCH",
    "SHELL_EXEC",
    "TOOL_ACTION_CLASSES",
    "Adapter",
    "MLTrainingAdapter",
    "ToolCallAdapter",
    "config_deltas",
    "dominates",
]
