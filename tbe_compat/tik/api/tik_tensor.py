"""``tik.api.tik_tensor``: CANN's module path of the tensor class (``tbe/tik/api/tik_tensor.py``).

Used by CANN helpers as ``tik.api.tik_tensor.Tensor`` (``impl/ascend``: ``get_tensor_type``,
``check_tik_tensor``, ``is_tik_dynamic``) and as ``from te.tik.api.tik_tensor import Tensor``.
The name is the facade's own `Tensor`, re-exported unchanged.
"""
from ..tensor import Tensor  # noqa: F401

__all__ = ["Tensor"]
