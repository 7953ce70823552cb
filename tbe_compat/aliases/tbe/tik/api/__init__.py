"""``tbe.tik.api`` (CANN module paths, aliases onto `tbe_compat.tik.api`)."""
from . import tik_scalar, tik_tensor

__all__ = ["tik_scalar", "tik_tensor"]
