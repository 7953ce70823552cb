"""``tbe.tik.common.util`` (alias of `tbe_compat.tik_util`)."""
from tbe_compat.tik_util import *  # noqa: F401,F403
