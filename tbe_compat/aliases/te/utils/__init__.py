"""``te.utils`` (alias onto `tbe_compat`)."""
from . import error_manager, op_utils, para_check, shape_util  # noqa: F401
