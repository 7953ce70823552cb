"""``impl.util.util_tik_comm_func`` (alias of `tbe_compat.impl_util_tik_comm_func`)."""
from tbe_compat.impl_util_tik_comm_func import *  # noqa: F401,F403
from tbe_compat.impl_util_tik_comm_func import __getattr__  # noqa: F401
