"""``tbe.tik`` (alias of `tbe_compat.tik`)."""
from tbe_compat.tik import *  # noqa: F401,F403
from tbe_compat.tik import __getattr__  # noqa: F401,E402 (a star import skips it)
