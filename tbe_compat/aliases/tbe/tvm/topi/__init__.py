"""``tbe.tvm.topi`` (the CANN 5.x+ spelling of the legacy ``topi`` package; alias onto `tbe_compat`)."""
from . import cce  # noqa: F401
