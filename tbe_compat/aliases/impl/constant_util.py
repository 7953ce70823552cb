"""``impl.constant_util`` (CANN's shared operator constants; table in `tbe_compat.cann_impl`)."""
from tbe_compat.cann_impl import CONSTANT_UTIL as _TABLE, missing_name as _missing

globals().update(_TABLE)
__all__ = sorted(_TABLE)
__getattr__ = _missing("impl.constant_util", "only CANN's constant_util names are provided")
