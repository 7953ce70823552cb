"""``te.utils.shape_util`` (the shape helpers of `tbe_compat.topi_util`)."""
from tbe_compat.para_check import get_shape_size  # noqa: F401
from tbe_compat.topi_util import (axis_check, axis_transform_5d, broadcast_shapes, cast, check_reduce_need_refine,  # noqa: F401
                                  compare_tensor_dict_key, produce_shapes, refine_axis, refine_shape_axes,
                                  refine_shapes_for_broadcast, scalar2tensor_one, shape_refine, shape_to_list,
                                  simplify_axis_shape, squeeze_shape, unify_broadcast_shapes, variable_shape,
                                  wrap_axes_to_positive)
