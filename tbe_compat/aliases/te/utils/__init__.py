"""``te.utils`` (alias onto `tbe_compat`)."""
from . import op_utils, para_check  # noqa: F401
