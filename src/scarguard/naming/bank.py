"""The default signature bank: the failure kinds scarguard knows out of the box.

Order matters, first match wins: specific kinds come before general ones (ambiguous edits
before failed edits, ESM/CommonJS mix-ups before syntax errors, GPU out-of-memory before
killed processes, quota before rate limits before server errors, killed and crashed
processes before plain non-zero exits). Every pattern is word-bounded and case-sensitive
where the real message has a fixed case; ``(?i:...)`` marks the few phrases that vary.

Blame follows one question: whose choice would have to change for the call to succeed?
The agent's (its arguments, its code, its sizes) -> ``AGENT``; the infrastructure's
(network, quotas, servers, disks, the cluster) -> ``HARNESS``; either -> ``UNKNOWN``.

The order is this module's; each signature, and why its blame is what it is, lives in the
module of its domain: training runs (:mod:`~scarguard.naming._bank_ml`), services
(:mod:`~scarguard.naming._bank_services`), the agent's code (:mod:`~scarguard.naming._bank_code`)
and the workspace (:mod:`~scarguard.naming._bank_shell`).
"""

from __future__ import annotations

from scarguard.naming import _bank_code, _bank_ml, _bank_services, _bank_shell
from scarguard.naming._signature import Signature

__all__ = ["DEFAULT_SIGNATURES"]

DEFAULT_SIGNATURES: tuple[Signature, ...] = (
    _bank_shell.PATH_TRAVERSAL,
    _bank_code.ESM_CJS_MISMATCH,
    _bank_ml.OOM_GPU,
    _bank_ml.OOM_HOST,
    _bank_ml.NCCL_ERROR,
    _bank_ml.CUBLAS_ERROR,
    _bank_ml.NAN_LOSS,
    _bank_ml.GRADIENT_EXPLOSION,
    _bank_ml.TRAINING_DIVERGENCE,
    _bank_ml.TENSOR_SHAPE_MISMATCH,
    _bank_services.QUOTA_EXCEEDED,
    _bank_services.RATE_LIMITED,
    _bank_services.SERVER_ERROR,
    _bank_services.TOOL_TIMEOUT,
    _bank_services.CONNECTION_REFUSED,
    _bank_services.CONNECTION_ERROR,
    _bank_shell.PORT_IN_USE,
    _bank_shell.LOCK_HELD,
    _bank_shell.DISK_FULL,
    _bank_shell.PROCESS_KILLED,
    _bank_shell.SEGFAULT,
    _bank_code.AMBIGUOUS_EDIT,
    _bank_code.PATCH_INVALID,
    _bank_code.EDIT_FAILED,
    _bank_code.MODULE_NOT_FOUND,
    _bank_services.NON_JSON_RESPONSE,
    _bank_code.UNKNOWN_TABLE,
    _bank_code.SYNTAX_ERROR,
    _bank_services.VALIDATION_ERROR,
    _bank_code.COMPILE_FAILURE,
    _bank_services.TOOL_NOT_FOUND,
    _bank_services.INVALID_REQUEST,
    _bank_shell.COMMAND_NOT_FOUND,
    _bank_shell.FILE_TOO_LARGE,
    _bank_code.ELEMENT_NOT_FOUND,
    _bank_shell.FILE_NOT_FOUND,
    _bank_shell.PERMISSION_DENIED,
    _bank_services.AUTH_FAILED,
    _bank_shell.CONFLICT,
    _bank_code.CONSTRAINT_VIOLATION,
    _bank_shell.NOTHING_TO_COMMIT,
    _bank_shell.GIT_PUSH_REJECTED,
    _bank_shell.PACKAGE_NOT_FOUND,
    _bank_services.NOT_FOUND,
    _bank_code.EMPTY_RESULT,
    _bank_shell.MAKE_TARGET_MISSING,
    _bank_shell.COMMAND_FAILED,
)
