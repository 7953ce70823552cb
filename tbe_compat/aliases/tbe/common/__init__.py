"""``tbe.common`` (alias onto `tbe_compat`)."""
from . import context, platform, register, utils  # noqa: F401
