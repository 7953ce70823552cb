"""``impl.constant_util``: implementation in `tbe_compat.cann_impl`; the alias is
`tbe_compat/aliases/impl/constant_util.py`."""
from tbe_compat.cann_impl import CONSTANT_UTIL as _TABLE, missing_name as _missing

globals().update(_TABLE)
__all__ = sorted(_TABLE)
__getattr__ = _missing("impl.constant_util", "only CANN's constant_util names are provided")
