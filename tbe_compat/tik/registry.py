"""Every kernel built in this process, by ``kernel_name``.

Many real entry functions build a kernel and return ``None`` (only an inner object
holds the ``Tik`` instance), and some build at import time. ``BuildCCE`` registers the
instance here so a driver can still run it::

    import tbe_compat
    my_module.conv2d_tik(...)                      # returns None
    tik_instance = tbe_compat.kernels()["conv2d"]
    outputs = tik_instance.tikdb.start_debug(feed_dict, interactive=False)

A later build with the same name replaces the earlier one (like CANN overwriting
``kernel_meta/<name>.o``).

It also knows the kernel *being traced* (`tracing_kernel`): the Tik instance of the most
recent TIK call, until its BuildCCE. ``pto.*`` calls without pointer operands
(``pto.set_atomic_f32()``, ``pto.pipe_barrier("ALL")``) made inside a TIK kernel are
recorded there (`bridge`) -- unless a `pto_core.Machine` was created or activated after
that TIK call: then they run eagerly on it, as outside any kernel.
"""
from __future__ import annotations

import contextlib
import weakref

from pto_core.memory import active_context

_KERNELS: dict = {}
#: id(builder) -> the live Tik recording through that `pto_core.program.Builder` (`owning_tik`); an entry
#: lives as long as its Tik, which holds its builder, so the id cannot be reused meanwhile
_TIK_OF_BUILDER = weakref.WeakValueDictionary()
_TRACING: list = [None, None]        # [weakref to the Tik of the latest TIK call, machine context then]
_LISTENERS: list = []
#: ``[on]``: whether a Tik created now records, per TIK call, the object whose method made it
#: (``Tik._call_owners``, `errors.api_site_and_self`; tik-migrate --format python's ATTR_RULE needs it). Off unless
#: `recording_call_owners` turns it on (``tik-migrate --format python`` does, around the script's run): the record
#: is a strong reference to the user's operator object -- and every array it holds -- for the Tik's life, and
#: makes a cycle when that object holds the Tik (``self.tik_instance``), so a dropped kernel waited for the
#: cyclic GC (200 class kernels holding 16 MB each peaked at 529 MB traced instead of 1 MB), and the last
#: kernel built under each name (`kernels`) kept its operator object alive. Off also skips reading the method
#: frame's locals on every TIK call.
_RECORD_CALL_OWNERS: list = [False]


def register(tik) -> None:
    _KERNELS[tik.build.kernel_name] = tik
    if _TRACING[0] is not None and _TRACING[0]() is tik:
        _TRACING[0] = None
    for fn in list(_LISTENERS):
        fn(tik)


def add_build_listener(fn) -> None:
    """Call ``fn(tik_instance)`` after every later ``BuildCCE`` (before any ``start_debug`` of it).

    For tools that instrument kernels a script builds and runs itself (``tik-compare-fixpipe``
    compiles the program with its probes here). Remove it with `remove_build_listener`."""
    _LISTENERS.append(fn)


def remove_build_listener(fn) -> None:
    """Undo `add_build_listener` (no error if ``fn`` is not registered)."""
    if fn in _LISTENERS:
        _LISTENERS.remove(fn)


@contextlib.contextmanager
def recording_call_owners(on: bool = True):
    """Within the block, Tik instances created record the object whose method made each of their TIK calls
    (`_RECORD_CALL_OWNERS`), so that `tbe_compat.migrate_python.python_rows` can name ``self.<attr>`` operands.
    The previous setting is restored on exit."""
    old = _RECORD_CALL_OWNERS[0]
    _RECORD_CALL_OWNERS[0] = bool(on)
    try:
        yield
    finally:
        _RECORD_CALL_OWNERS[0] = old


def note_tracing(tik) -> None:
    """A TIK call of ``tik`` starts (called by every top-level TIK API call)."""
    _TRACING[0] = tik._weakref
    _TRACING[1] = active_context()


def note_builder(tik) -> None:
    """``tik`` records through ``tik._builder`` (`owning_tik`)."""
    _TIK_OF_BUILDER[id(tik._builder)] = tik


def owning_tik(builder):
    """The live Tik whose builder is ``builder`` (a register's ``owner``), or None."""
    tik = _TIK_OF_BUILDER.get(id(builder))
    return tik if tik is not None and getattr(tik, "_builder", None) is builder else None


def tracing_kernel():
    """The Tik instance being traced (see module doc), or None."""
    ref, ctx = _TRACING
    tik = ref() if ref is not None else None
    if tik is None or tik.build is not None or active_context() is not ctx:
        return None
    return tik


def kernels() -> dict:
    """``{kernel_name: Tik instance}`` of every kernel built (``BuildCCE``) in this process, in build order."""
    return dict(_KERNELS)


def kernel(name: str):
    """The Tik instance built as ``name`` (raises `UnknownName` listing the built kernels)."""
    try:
        return _KERNELS[name]
    except KeyError:
        from pto_core.errors import UnknownName
        raise UnknownName(f"no kernel named {name!r} was built in this process", value=name,
                          limit=", ".join(_KERNELS) or "(none built yet)",
                          hint="call the entry function that runs BuildCCE(kernel_name=...) first") from None


def clear() -> None:
    """Forget every built kernel (tests and long-running drivers)."""
    _KERNELS.clear()
    _TRACING[0] = None


__all__ = ["kernels", "kernel", "clear", "register", "note_tracing", "recording_call_owners", "tracing_kernel", "add_build_listener",
           "remove_build_listener"]
