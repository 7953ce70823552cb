"""The ``pto`` namespace: ``pto.<op>(operands..., clause=value, ...)`` for every registered op.

Eager when operands are pointers from ``Machine.ptr`` (the op runs now on that
machine); recorded into the program when called inside a program builder.
See `pto_core.ops.registry` for the clause spelling.
"""
from __future__ import annotations

from .ops import registry as _registry

_cache: dict = {}


def _make(name: str):
    try:
        spec = _registry.get_op(name)
    except _registry.UnknownName as e:
        raise AttributeError(str(e)) from None

    def op(*args, **kwargs):
        return _registry.dispatch(name, args, kwargs)

    op.__name__ = name
    op.__qualname__ = f"pto.{name}"
    op.__doc__ = f"{spec.signature()}\n\n{spec.doc}"
    return op


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    fn = _cache.get(name)
    if fn is None:
        fn = _cache[name] = _make(name)
    return fn


def __dir__():
    return sorted(_registry.OPS)
