"""``tbe.common.utils.para_check`` (alias of `tbe_compat.para_check`)."""
from tbe_compat.para_check import *  # noqa: F401,F403
