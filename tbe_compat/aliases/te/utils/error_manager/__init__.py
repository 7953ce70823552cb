"""``te.utils.error_manager`` (alias onto `tbe_compat.platform_adapter`): ``error_manager_vector``,
``error_manager_cube``, ``error_manager_util`` as CANN operators import them."""
from tbe_compat.platform_adapter import error_manager_cube, error_manager_util, error_manager_vector  # noqa: F401
