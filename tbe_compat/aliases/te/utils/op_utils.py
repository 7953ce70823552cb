"""``te.utils.op_utils`` (the 2020 name of para_check; alias of `tbe_compat.para_check`).

CANN's 2020 module has no ``__all__`` and imports ``re``, ``math``, ``functools.reduce`` (as
``functools_reduce``) and ``functools.wraps`` at module level, so ``from te.utils.op_utils import *``
gave kernels those names too; some kernels use ``math`` only through that import."""
import math  # noqa: F401  (re-exported through ``import *``, as CANN's module does)
import re  # noqa: F401
from functools import reduce as functools_reduce  # noqa: F401
from functools import wraps  # noqa: F401

from tbe_compat.para_check import *  # noqa: F401,F403
from tbe_compat.para_check import MAX_KERNEL_NAEM_LEN, MAX_UNKOWN_SHAPE_NUM, MIN_UNKOWN_SHAPE_RANK  # noqa: F401  (sic)
from tbe_compat.topi_util import (broadcast_shapes, refine_shape_axes, refine_shapes_for_broadcast,  # noqa: F401
                                  squeeze_shape, variable_shape, wrap_axes_to_positive)
