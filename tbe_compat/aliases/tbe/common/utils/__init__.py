"""``tbe.common.utils`` (alias onto `tbe_compat`)."""
from . import para_check, shape_util  # noqa: F401
