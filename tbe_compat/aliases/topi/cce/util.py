"""``topi.cce.util`` (alias of `tbe_compat.topi_util`)."""
from tbe_compat.topi_util import *  # noqa: F401,F403
