"""``impl.common_util``: implementation in `tbe_compat.cann_impl`; the alias is
`tbe_compat/aliases/impl/common_util.py`."""
from tbe_compat.cann_impl import (COMMON_UTIL_DSL as _DSL, dsl_helpers as _dsl_helpers, missing_name as _missing,
                                  get_block_element, get_data_size, get_datamove_nburst, get_dtype,
                                  get_vector_repeat_times, move_out_non32_alignment)

globals().update(_dsl_helpers("impl.common_util", _DSL))
__all__ = ["get_block_element", "get_data_size", "get_datamove_nburst", "get_dtype", "get_vector_repeat_times",
           "move_out_non32_alignment"]
__all__.extend(list(_DSL))
__getattr__ = _missing("impl.common_util", "write this step with TIK APIs (the conv_* dtype helpers are not "
                                           "modelled yet)")
