"""``tbe.tvm`` (alias of `tbe_compat.tvm`: importable, any use raises UnsupportedOp -- TVM is not simulated).

A package only so that ``tbe.tvm.topi.cce.util`` (the CANN 5.x+ home of the legacy ``topi.cce.util``, imported by
CANN ops and MindSpore custom ops) imports. ``topi`` is bound before ``__getattr__`` exists, so
``from tbe.tvm import topi`` never reaches it."""
from . import topi  # noqa: F401
from tbe_compat.tvm import __getattr__  # noqa: F401,E402
