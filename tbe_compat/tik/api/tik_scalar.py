"""``tik.api.tik_scalar``: CANN's module path of the scalar classes (``tbe/tik/api/tik_scalar.py``).

CANN ops and their helper packages test "is this a run-time TIK value?" against this path, e.g.
``isinstance(v, (tik.tik_lib.tik_expr.Expr, tik.api.tik_scalar.Scalar))`` (dilation2d_backprop_*,
deformable_offsets_grad) or with ``tik.api.tik_scalar.InputScalar`` added (``impl/ascend/_check.py``).
The names are the facade's own classes, re-exported unchanged.
"""
from ..scalar import InputScalar, Scalar  # noqa: F401

__all__ = ["Scalar", "InputScalar"]
