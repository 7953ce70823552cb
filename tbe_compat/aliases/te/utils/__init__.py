"""``te.utils`` (alias onto `tbe_compat`)."""
from . import error_manager, op_utils, para_check  # noqa: F401
