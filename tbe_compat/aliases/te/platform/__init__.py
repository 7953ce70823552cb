"""``te.platform`` (alias of `tbe_compat.te_platform`)."""
from tbe_compat.te_platform import *  # noqa: F401,F403

from . import cce_conf, cce_intrin, cce_params, fusion_manager  # noqa: F401
