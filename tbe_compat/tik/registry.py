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
"""
from __future__ import annotations

_KERNELS: dict = {}


def register(tik) -> None:
    _KERNELS[tik.build.kernel_name] = tik


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


__all__ = ["kernels", "kernel", "clear", "register"]
