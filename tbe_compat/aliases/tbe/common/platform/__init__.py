"""``tbe.common.platform`` (alias of `tbe_compat.platform`)."""
from tbe_compat.platform import *  # noqa: F401,F403

from . import platform_info  # noqa: F401
