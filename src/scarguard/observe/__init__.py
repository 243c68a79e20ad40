"""Observation: cheap state tokens of what a learned constraint's failure depends on.

- :mod:`~scarguard.observe.protocol`: the :class:`Observer` protocol;
- :mod:`~scarguard.observe.local`: :class:`LocalObserver`, the local filesystem under a root.
"""

from scarguard.observe.local import LocalObserver
from scarguard.observe.protocol import MISSING, Observer

__all__ = ["MISSING", "LocalObserver", "Observer"]
