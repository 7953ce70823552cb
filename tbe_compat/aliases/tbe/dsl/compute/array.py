"""``tbe.dsl.compute.array`` (importable by name; calling any function raises UnsupportedOp -- the TBE DSL is
not simulated, see `tbe_compat.dsl_modules.DSL_FUNCTION_MODULES`)."""
from tbe_compat.dsl_modules import dsl_compute_array_getattr as __getattr__  # noqa: F401
