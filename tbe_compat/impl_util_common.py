"""``impl.util.util_common``: implementation in `tbe_compat.cann_impl`; the alias is
`tbe_compat/aliases/impl/util/util_common.py`."""
from tbe_compat.cann_impl import (UTIL_COMMON_CONSTANTS as _CONSTANTS, UTIL_COMMON_DSL as _DSL,
                                  align, ceil, ceil_div_scalar, check_load3d_w_out_1_support, div_align_scalar,
                                  dsl_helpers as _dsl_helpers, floor_div_scalar, get_mask_rep_stride, get_fused_format_str,
                                  get_fused_str, is_dynamic_input, is_same_group, is_support_fractal_z_input,
                                  is_support_fractal_z_inputs, is_unknown, is_unknown_rank_input, lcm,
                                  missing_name as _missing)

__all__ = ["align", "ceil", "ceil_div_scalar", "check_load3d_w_out_1_support", "div_align_scalar",
           "floor_div_scalar", "get_fused_format_str", "get_mask_rep_stride", "get_fused_str", "is_dynamic_input", "is_same_group",
           "is_support_fractal_z_input", "is_support_fractal_z_inputs", "is_unknown", "is_unknown_rank_input", "lcm"]
__all__.extend(sorted(_CONSTANTS))
__all__.extend(list(_DSL))
globals().update(_CONSTANTS)
globals().update(_dsl_helpers("impl.util.util_common", _DSL))
__getattr__ = _missing("impl.util.util_common", "util_common's shape/format checks for cube and DSL ops are not "
                                                "modelled; compute the value in the script")
