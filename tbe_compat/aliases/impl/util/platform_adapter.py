"""``impl.util.platform_adapter`` (alias of `tbe_compat.platform_adapter`)."""
from tbe_compat.platform_adapter import *  # noqa: F401,F403
from tbe_compat.platform_adapter import OpImplMode, OpPatternMode, TbeContextKey  # noqa: F401
from tbe.common.utils import shape_util  # noqa: F401
