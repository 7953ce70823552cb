"""``tbe.tvm.topi.cce.util`` (the CANN 5.x+ spelling of ``topi.cce.util``; alias of `tbe_compat.topi_util`)."""
from tbe_compat.topi_util import *  # noqa: F401,F403
