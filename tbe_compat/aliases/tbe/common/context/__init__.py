"""``tbe.common.context`` (alias of the op context in `tbe_compat.platform_adapter`): ``get_context()``
and the ``op_context`` module with ``OpContext``."""
from tbe_compat.platform_adapter import get_context  # noqa: F401

from . import op_context, op_info  # noqa: F401
