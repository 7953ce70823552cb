"""The ``pto`` namespace: ``pto.<op>(operands..., clause=value, ...)`` for every registered op.

Eager when operands are pointers from ``Machine.ptr`` (the op runs now on that
machine); recorded into the program when called inside a program builder.
Dotted op names are namespaces: ``pto.ub.vadd`` is the op ``ub.vadd``.
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


class _Namespace:
    """A dotted op-name prefix: ``pto.ub`` gives ``pto.ub.vadd`` (op ``ub.vadd``)."""

    def __init__(self, prefix: str):
        self._prefix = prefix

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = __getattr__(f"{self._prefix}.{name}")
        setattr(self, name, fn)      # later look-ups find it in the instance dict
        return fn

    def __dir__(self):
        cut = len(self._prefix) + 1
        return sorted({k[cut:].split(".")[0] for k in _registry.OPS if k.startswith(self._prefix + ".")})

    def __repr__(self) -> str:
        return f"<pto.{self._prefix} namespace>"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    fn = _cache.get(name)
    if fn is None:
        if name not in _registry.OPS and any(k.startswith(name + ".") for k in _registry.OPS):
            fn = _cache[name] = _Namespace(name)
        else:
            fn = _cache[name] = _make(name)
        globals()[name] = fn         # later look-ups are plain module attributes
    return fn


def __dir__():
    return sorted({k.split(".")[0] for k in _registry.OPS})
