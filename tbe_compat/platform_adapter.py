"""What CANN's ``impl.util.platform_adapter`` gives operator scripts, from the facade's parts.

CANN's built-in operator package re-exports, in one module, the names its TIK kernels
use: ``tik``, ``tbe_platform`` (the ``tbe.common.platform`` namespace), ``para_check``,
``shape_util``, ``register_operator`` / ``register_operator_compute`` and a few constant
classes. The legacy alias ``impl.util.platform_adapter`` imports from here.

``impl`` and ``impl.util`` are *namespace* packages (no ``__init__.py``): a project's own
regular ``impl`` package always takes precedence over them, so the alias never shadows
user code.
"""
from __future__ import annotations

from . import para_check, platform as tbe_platform  # noqa: F401
from . import tik  # noqa: F401
from .register import register_op_compute, register_operator  # noqa: F401


def register_operator_compute(op_type, op_mode="dynamic", support_fusion=False):
    """Decorator registering an op's compute function (CANN spelling of `register_op_compute`)."""
    return register_op_compute(op_type, op_mode, support_fusion)


class OpPatternMode:
    """Operator pattern names used by CANN's dynamic-shape classifier."""

    NONE = ""
    ELEWISE = "elewise"
    ELEWISE_WITH_BROADCAST = "broadcast"
    REDUCE = "reduce"


class OpImplMode:
    """Implementation modes a kernel may be asked to favour."""

    HIGH_PERFORMANCE = "high_performance"
    HIGH_PRECISION = "high_precision"


class TbeContextKey:
    PATTERN = "pattern"


__all__ = ["tik", "tbe_platform", "para_check", "register_operator", "register_operator_compute",
           "OpPatternMode", "OpImplMode", "TbeContextKey"]
