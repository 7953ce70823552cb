"""tbe_compat: the TIK facade. It traces TIK calls into PTO ops (with the user's
file:line as provenance) and never computes results itself; `pto_core` does.

``tbe_compat.kernels()`` returns every TIK kernel built (``BuildCCE``) in this process
by ``kernel_name`` -- for entry functions that build a kernel and return ``None``.
"""
__version__ = "0.1.0"


def kernels() -> dict:
    """``{kernel_name: tik.Tik}`` of every kernel built in this process (see `tbe_compat.tik.registry`)."""
    from .tik.registry import kernels as _kernels
    return _kernels()


def kernel(name: str):
    """The ``tik.Tik`` instance built as ``name``."""
    from .tik.registry import kernel as _kernel
    return _kernel(name)
