"""Bind a guarded call's arguments by name, the same way whatever form the caller used.

``edit(path="a.py", old="x")`` and ``edit("a.py", "x")`` are one call: arguments are bound
against the tool's signature (computed once, at decoration time), defaults are applied,
``self``/``cls`` and framework-injected context are left out, ``**kwargs`` is flattened into
the arguments and ``*args`` becomes a list.

Simple signatures (no positional-only parameters, no ``*args``/``**kwargs``) take a fast path
that builds the dict directly; anything else goes through ``Signature.bind``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from scarguard.frameworks import context_params

__all__ = ["ArgBinder"]

_P = inspect.Parameter


class ArgBinder:
    """Turn ``(instance, args, kwargs)`` into the argument mapping the memory sees.

    Args:
        func: The function whose signature is bound (a ``classmethod``/``staticmethod``
            object is unwrapped).
        ignore: Extra parameter names to leave out.

    Attributes:
        signature: The function's signature.
        dropped: Names left out of every bound mapping.
    """

    def __init__(self, func: Callable[..., Any], *, ignore: Iterable[str] = ()) -> None:
        static = isinstance(func, staticmethod)
        raw = func.__func__ if isinstance(func, (classmethod, staticmethod)) else func
        self.signature = inspect.signature(raw)
        params = list(self.signature.parameters.values())
        first = params[0] if params else None
        # A plain function may be a method: wrapt then hands over the instance separately and
        # it is put back in front to bind, then dropped.
        self._first: str | None = None
        if (
            not static
            and inspect.isfunction(raw)
            and first is not None
            and first.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
        ):
            self._first = first.name
        dropped = dict.fromkeys(context_params(self.signature))
        dropped.update(dict.fromkeys(ignore))
        if self._first in ("self", "cls") or isinstance(func, classmethod):
            dropped[self._first or ""] = None
        self.dropped = tuple(name for name in dropped if name)
        self._names = tuple(p.name for p in params)
        self._positional = tuple(
            p.name for p in params if p.kind in (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
        )
        self._keywords = frozenset(
            p.name for p in params if p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY)
        )
        self._defaults = tuple((p.name, p.default) for p in params if p.default is not _P.empty)
        self._kinds = {p.name: p.kind for p in params}
        self._simple = all(p.kind in (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY) for p in params)
        # a function's call with every argument by position, nothing to leave out: the names
        # zipped with the arguments
        self._plain = (
            self._simple and not self.dropped and len(self._positional) == len(self._names)
        )

    def names(self) -> tuple[str, ...]:
        """Return the names of every parameter, in order."""
        return self._names

    def accepts_any_keyword(self) -> bool:
        """Return whether the signature has a ``**kwargs`` parameter."""
        return _P.VAR_KEYWORD in self._kinds.values()

    def bind(
        self, instance: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Return the call's arguments by name, without ``self`` and injected context.

        A call that does not fit the signature (the tool will raise ``TypeError`` itself)
        binds as ``{"*args": [...], **kwargs}`` so that the failure can still be recorded.
        """
        if instance is None and self._plain and not kwargs and len(args) == len(self._names):
            return dict(zip(self._names, args, strict=True))
        first = self._first if instance is not None else None
        full = (instance, *args) if first is not None else args
        bound = self._fast(full, kwargs) if self._simple else None
        if bound is None:
            bound = self._slow(full, kwargs)
            if bound is None:
                bound = {"*args": list(args), **kwargs}
        if first is not None:
            bound.pop(first, None)
        for name in self.dropped:
            bound.pop(name, None)
        return bound

    def _fast(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
        if len(args) > len(self._positional):
            return None
        bound = dict(zip(self._positional, args, strict=False))
        if kwargs:
            keywords = self._keywords
            for key, value in kwargs.items():
                if key in bound or key not in keywords:
                    return None
                bound[key] = value
        if len(bound) < len(self._names):
            for key, value in self._defaults:
                if key not in bound:
                    bound[key] = value
            if len(bound) < len(self._names):
                return None  # a required argument is missing
        return bound

    def _slow(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            arguments = self.signature.bind(*args, **kwargs)
        except TypeError:
            return None
        arguments.apply_defaults()
        bound: dict[str, Any] = {}
        for name, value in arguments.arguments.items():
            kind = self._kinds[name]
            if kind is _P.VAR_POSITIONAL:
                bound[name] = list(value)
            elif kind is _P.VAR_KEYWORD:
                bound.update(value)
            else:
                bound[name] = value
        return bound
