"""``tbe.common`` (alias onto `tbe_compat`)."""
from . import platform, register, utils  # noqa: F401
