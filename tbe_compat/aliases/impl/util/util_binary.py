"""``impl.util.util_binary`` (alias of `tbe_compat.impl_util_binary`)."""
from tbe_compat.impl_util_binary import *  # noqa: F401,F403
from tbe_compat.impl_util_binary import __getattr__  # noqa: F401
