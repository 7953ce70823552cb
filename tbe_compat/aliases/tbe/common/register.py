"""``tbe.common.register`` (alias of `tbe_compat.register`)."""
from tbe_compat.register import *  # noqa: F401,F403
