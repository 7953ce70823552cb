"""``tbe.tvm.topi.generic`` (the CANN 5.x+ spelling of ``topi.generic``: importable; any use raises UnsupportedOp
-- the TBE DSL is not simulated, see `tbe_compat.dsl_modules`)."""
from tbe_compat.dsl_modules import topi_generic_getattr as __getattr__  # noqa: F401
