"""``te.tik.api.tik_tensor`` (alias of `tbe_compat.tik.api.tik_tensor`)."""
from tbe_compat.tik.api.tik_tensor import *  # noqa: F401,F403
