"""``te.platform.cce_params`` (alias of `tbe_compat.te_platform`)."""
from tbe_compat.te_platform import *  # noqa: F401,F403
