"""``te.utils.para_check`` (alias of `tbe_compat.para_check`)."""
from tbe_compat.para_check import *  # noqa: F401,F403
from tbe_compat.para_check import MAX_KERNEL_NAEM_LEN  # noqa: F401  (2019-2020 spelling, sic)
