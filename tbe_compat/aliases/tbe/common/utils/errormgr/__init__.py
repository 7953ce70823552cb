"""``tbe.common.utils.errormgr`` (alias of `tbe_compat.errormgr`)."""
from tbe_compat.errormgr import *  # noqa: F401,F403
