"""``tbe.common.utils.shape_util`` (the shape helpers of `tbe_compat.topi_util`)."""
from tbe_compat.topi_util import (axis_check, check_reduce_need_refine, compare_tensor_dict_key,  # noqa: F401
                                  get_shape_size, produce_shapes, refine_axis, scalar2tensor_one, shape_to_list)
