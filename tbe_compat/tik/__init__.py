"""``tbe_compat.tik``: the TIK facade behind ``from tbe import tik``.

The platform layer's names live here: ``tik.Dprofile``, the storage scopes
(``tik.scope_gm`` ...) and the block/vector constants. The TIK core (``Tik``,
``Tensor``, ``Scalar``, ...) joins them in this package.
"""
from ..platform import (BLOCK_IN, BLOCK_OUT, BLOCK_REDUCE, BLOCK_REDUCE_INT8, C0_SIZE, CUBE_MKN,  # noqa: F401
                        VECTOR_INST_BLOCK_NUM, VECTOR_INST_BLOCK_WIDTH, VECTOR_INST_MAX_REPEAT_TIMES, Dprofile,
                        scope_bt, scope_ca, scope_cb, scope_cbuf, scope_cbuf_out, scope_cc, scope_fb0, scope_gm,
                        scope_reg, scope_smask, scope_ubuf, scope_vreg)
