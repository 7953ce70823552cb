"""``tbe.tvm`` (alias of `tbe_compat.tvm`: importable, any use raises UnsupportedOp -- TVM is not simulated)."""
from tbe_compat.tvm import __getattr__  # noqa: F401
