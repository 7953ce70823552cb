"""``te.platform.fusion_manager`` (alias of `tbe_compat.register`)."""
from tbe_compat.register import FusionManager, fusion_manager  # noqa: F401
