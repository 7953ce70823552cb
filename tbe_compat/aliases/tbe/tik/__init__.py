"""``tbe.tik`` (alias of `tbe_compat.tik`)."""
from tbe_compat.tik import *  # noqa: F401,F403
