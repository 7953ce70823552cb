"""``impl.util.util_common`` (alias of `tbe_compat.impl_util_common`)."""
from tbe_compat.impl_util_common import *  # noqa: F401,F403
from tbe_compat.impl_util_common import __getattr__  # noqa: F401
