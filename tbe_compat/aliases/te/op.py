"""``te.op`` registration helpers (alias of `tbe_compat.register`)."""
from tbe_compat.register import (add_compile_info, get_compile_info, get_op_compute, get_operator,  # noqa: F401
                                 register_fusion_compute, register_op_compute, register_operator)
