"""``topi.cce`` (alias onto `tbe_compat`)."""
from . import util  # noqa: F401
