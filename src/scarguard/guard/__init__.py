"""The guard: one step per call (:class:`Attempt`) and the drivers built on it.

* :mod:`~scarguard.guard.step`: :class:`Attempt`, the check / run / record / retry step
  behind :meth:`FailureMemory.attempt <scarguard.FailureMemory.attempt>`;
* :mod:`~scarguard.guard.decorator`: ``@guarded_tool``, a thin driver over it;
* :mod:`~scarguard.guard.binding`, :mod:`~scarguard.guard.retrying`,
  :mod:`~scarguard.guard.failure_checks`, :mod:`~scarguard.guard.options`: what the
  decorator binds, retries, flags and validates.
"""

from scarguard.guard.step import Attempt

__all__ = ["Attempt"]
