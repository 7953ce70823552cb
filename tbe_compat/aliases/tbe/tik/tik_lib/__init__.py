"""``tbe.tik.tik_lib`` (CANN module path, alias onto `tbe_compat.tik.tik_lib`)."""
from . import tik_expr  # noqa: F401
