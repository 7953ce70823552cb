"""``tbe.common.utils`` (alias onto `tbe_compat`)."""
from . import para_check  # noqa: F401
