"""``tbe.common.context.op_info`` (alias of `tbe_compat.platform_adapter.OpInfo`)."""
from tbe_compat.platform_adapter import OpInfo  # noqa: F401
