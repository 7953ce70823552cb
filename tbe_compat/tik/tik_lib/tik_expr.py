"""``tik.tik_lib.tik_expr``: CANN's module path of the expression class (``tbe/tik/tik_lib/tik_expr.py``).

``Expr`` is the facade's `tbe_compat.tik.scalar.Expr`. Named choice CANN_EXPR_INCLUDES_SCALARS: the
facade's `Scalar` and `InputScalar` subclass `Expr`, so ``isinstance(scalar, Expr)`` is True here;
public CANN code always tests `Expr` together with `Scalar` (and `InputScalar`), where both answer
the same (migration_guide/tik_core.md).
"""
from ..scalar import Expr  # noqa: F401

__all__ = ["Expr"]
