"""``te.tik.api`` (CANN module paths, aliases onto `tbe_compat.tik.api`)."""
from . import tik_scalar, tik_tensor  # noqa: F401
