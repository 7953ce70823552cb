"""``te.platform.cce_build`` (importable; ``build_config`` is an inert DSL value and any other name raises
UnsupportedOp -- the TBE DSL is not simulated, see `tbe_compat.dsl_modules`)."""
from tbe_compat.dsl_modules import cce_build_getattr as __getattr__  # noqa: F401
