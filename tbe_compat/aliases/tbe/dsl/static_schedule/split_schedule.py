"""``tbe.dsl.static_schedule.split_schedule`` (importable by name; calling any function raises UnsupportedOp --
the TBE DSL is not simulated, see `tbe_compat.dsl_modules.DSL_FUNCTION_MODULES`)."""
from tbe_compat.dsl_modules import dsl_split_schedule_getattr as __getattr__  # noqa: F401
