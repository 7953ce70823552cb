"""``te.utils.para_check`` (alias of `tbe_compat.para_check`, plus the shape helpers CANN's 2020
module still forwards to ``te.utils.shape_util``)."""
from tbe_compat.para_check import *  # noqa: F401,F403
from tbe_compat.para_check import MAX_KERNEL_NAEM_LEN, MAX_UNKOWN_SHAPE_NUM, MIN_UNKOWN_SHAPE_RANK  # noqa: F401  (sic)
from tbe_compat.topi_util import (broadcast_shapes, refine_shape_axes, refine_shapes_for_broadcast,  # noqa: F401
                                  squeeze_shape, wrap_axes_to_positive)
