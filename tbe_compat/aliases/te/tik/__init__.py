"""``te.tik`` (deprecated alias of `tbe_compat.tik`; emits CANN's notice on import)."""
from tbe_compat.te_tik import *  # noqa: F401,F403
