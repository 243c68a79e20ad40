"""Bookkeeping warnings that never take the place of the user's call.

Under ``-W error`` (or pytest's ``filterwarnings = error``) ``warnings.warn`` raises. A
bookkeeping problem must never stop a tool from running or replace its result, so when the
warning cannot be issued it is logged on the ``scarguard`` logger instead.
"""

from __future__ import annotations

import logging
import warnings

__all__ = ["warn"]


def warn(
    message: str, category: type[Warning], *, stacklevel: int = 2, logged: bool = False
) -> None:
    """Issue ``message`` as a warning; log it when warnings are turned into errors.

    Args:
        message: What happened.
        category: The warning's class.
        stacklevel: As for :func:`warnings.warn`, counted from the caller.
        logged: The caller logged the message already (do not log it twice).
    """
    try:
        warnings.warn(message, category, stacklevel=stacklevel + 1)
    except Warning:
        if not logged:
            logging.getLogger("scarguard").warning("%s: %s", category.__name__, message)
