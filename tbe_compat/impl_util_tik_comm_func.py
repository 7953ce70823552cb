"""``impl.util.util_tik_comm_func``: implementation in `tbe_compat.cann_impl`; the alias is
`tbe_compat/aliases/impl/util/util_tik_comm_func.py`."""
from tbe_compat.cann_impl import (UTIL_TIK_COMM_FUNC_CONSTANTS as _CONSTANTS, OpBase, ceil_align,
                                  ceil_div, floor_align, gm2ub, gm2ub_for_vsort32, init_index,
                                  missing_name as _missing, sort_score_idx_by_desc, tik_fuc_vrec_newton,
                                  tik_func_vadds, tik_func_vcomple, tik_func_vconcat, tik_func_vconv,
                                  tik_func_vector, tik_func_vextract, tik_func_vmaxs, tik_func_vmins, tik_func_vmuls,
                                  tik_func_vrec, ub2gm, ub2ub, ub_offset)
# CANN's util_tik_comm_func.py runs ``from te import tik`` at the top, so operators (cnms_yolov3_ver)
# write ``from impl.util.util_tik_comm_func import tik``: the same TIK module here.
from tbe_compat import tik

__all__ = ["OpBase", "ceil_align", "ceil_div", "floor_align", "gm2ub", "gm2ub_for_vsort32", "init_index",
           "sort_score_idx_by_desc", "tik_fuc_vrec_newton", "tik_func_vadds",
           "tik_func_vcomple", "tik_func_vconcat", "tik_func_vconv", "tik_func_vector", "tik_func_vextract",
           "tik_func_vmaxs", "tik_func_vmins", "tik_func_vmuls", "tik_func_vrec", "ub2gm", "ub2ub", "ub_offset",
           "tik"]
__all__.extend(sorted(_CONSTANTS))
globals().update(_CONSTANTS)
__getattr__ = _missing("impl.util.util_tik_comm_func", "issue the TIK instructions directly")
