"""``tbe_compat.tik``: the TIK facade behind ``from tbe import tik`` (and ``from te import tik``).

Module-level names as in CANN's ``tbe.tik``: the container ``Tik``, ``Dprofile``, the
storage scopes (``scope_gm``, ``scope_ubuf``, ``scope_cbuf``, ``scope_cbuf_out`` =
``scope_cc``, ``scope_ca``, ``scope_cb`` ...), the value classes ``Tensor``, ``Scalar``,
``InputScalar``, ``Expr``, the condition helpers ``all``, ``any``, ``negate`` and the
block/vector constants. See ``ARCHITECTURE.md`` in this folder for how a TIK call
becomes PTO ops.
"""
from ..platform import (BLOCK_IN, BLOCK_OUT, BLOCK_REDUCE, BLOCK_REDUCE_INT8, C0_SIZE, CUBE_MKN,  # noqa: F401
                        VECTOR_INST_BLOCK_NUM, VECTOR_INST_BLOCK_WIDTH, VECTOR_INST_MAX_REPEAT_TIMES, Dprofile,
                        scope_bt, scope_ca, scope_cb, scope_cbuf, scope_cbuf_out, scope_cc, scope_fb0, scope_gm,
                        scope_reg, scope_smask, scope_ubuf, scope_vreg)
from .container import Tik  # noqa: F401
from .registry import kernel, kernels  # noqa: F401
from .scalar import Expr, InputScalar, Scalar, negate  # noqa: F401
from .scalar import all_ as all  # noqa: F401,A001 (TIK's names)
from .scalar import any_ as any  # noqa: F401,A001
from .tensor import Tensor  # noqa: F401
# CANN module paths public ops test values against: tik.api.tik_scalar/tik_tensor, tik.tik_lib.tik_expr
from . import api, tik_lib  # noqa: E402

__all__ = ["Tik", "Dprofile", "Tensor", "Scalar", "InputScalar", "Expr", "all", "any", "negate", "kernels", "kernel",
           "scope_gm", "scope_ubuf", "scope_cbuf", "scope_cbuf_out", "scope_cc", "scope_ca", "scope_cb", "scope_bt",
           "scope_fb0", "scope_smask", "scope_reg", "scope_vreg", "BLOCK_IN", "BLOCK_OUT", "BLOCK_REDUCE",
           "BLOCK_REDUCE_INT8", "C0_SIZE", "CUBE_MKN", "VECTOR_INST_BLOCK_NUM", "VECTOR_INST_BLOCK_WIDTH",
           "VECTOR_INST_MAX_REPEAT_TIMES", "api", "tik_lib"]
