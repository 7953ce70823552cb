"""``tbe.common.platform.platform_info`` (alias of `tbe_compat.platform`)."""
from tbe_compat.platform import *  # noqa: F401,F403
