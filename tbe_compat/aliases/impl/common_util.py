"""``impl.common_util`` (alias of `tbe_compat.impl_common_util`)."""
from tbe_compat.impl_common_util import *  # noqa: F401,F403
from tbe_compat.impl_common_util import __getattr__  # noqa: F401
# CANN's common_util.py imports the constant table under this name at its top, and CANN operators
# use it through the module (`common_util.constant.BLOCK_SIZE`, e.g. strided_slice_last_dim_with_vreducev2).
from impl import constant_util as constant  # noqa: F401,E402
