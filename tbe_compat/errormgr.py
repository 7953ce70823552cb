"""CANN's ``tbe.common.utils.errormgr`` package (``impl.util.platform_adapter.error_manager``): the three
reporters and, at package level, ``get_error_message(error_info_dict)`` / ``raise_runtime_error(error_info_dict)``
(CANN cube operators write ``raise RuntimeError(d, error_manager.get_error_message(d))``)."""
from .platform_adapter import error_manager_cube, error_manager_util, error_manager_vector

get_error_message = error_manager_util.get_error_message
raise_runtime_error = error_manager_util.raise_runtime_error

__all__ = ["error_manager_vector", "error_manager_cube", "error_manager_util", "get_error_message",
           "raise_runtime_error"]
