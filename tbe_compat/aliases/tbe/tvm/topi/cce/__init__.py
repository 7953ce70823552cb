"""``tbe.tvm.topi.cce`` (the CANN 5.x+ spelling of ``topi.cce``; alias onto `tbe_compat`)."""
from . import util  # noqa: F401
