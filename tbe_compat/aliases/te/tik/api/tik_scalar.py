"""``te.tik.api.tik_scalar`` (alias of `tbe_compat.tik.api.tik_scalar`)."""
from tbe_compat.tik.api.tik_scalar import *  # noqa: F401,F403
