"""``tbe.common.utils`` (alias onto `tbe_compat`)."""
from . import errormgr, para_check, shape_util  # noqa: F401
