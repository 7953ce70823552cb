"""``te.lang.cce`` (importable; any use raises UnsupportedOp -- the TBE DSL is not simulated, see
`tbe_compat.dsl_modules`)."""
from tbe_compat.dsl_modules import te_lang_cce_getattr as __getattr__  # noqa: F401
