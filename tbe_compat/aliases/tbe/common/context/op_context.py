"""``tbe.common.context.op_context`` (alias of the op context in `tbe_compat.platform_adapter`)."""
from tbe_compat.platform_adapter import OpContext, get_context  # noqa: F401
