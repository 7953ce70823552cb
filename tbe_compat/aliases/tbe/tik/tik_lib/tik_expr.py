"""``tbe.tik.tik_lib.tik_expr`` (alias of `tbe_compat.tik.tik_lib.tik_expr`)."""
from tbe_compat.tik.tik_lib.tik_expr import *  # noqa: F401,F403
