"""``impl.util.util_select_op_base`` (alias of `tbe_compat.op_select`)."""
from tbe_compat.op_select import *  # noqa: F401,F403
from tbe_compat.op_select import (Element, ParamItem, ReduceInput, ReduceOutput, SplitInput, SplitOutput,  # noqa: F401
                                  gen_param, get_dynamic_param_in_json, get_op_cal_info, get_split_n_info)
