"""``impl.constant_util`` (alias of `tbe_compat.impl_constant_util`)."""
from tbe_compat.impl_constant_util import *  # noqa: F401,F403
from tbe_compat.impl_constant_util import __getattr__  # noqa: F401
