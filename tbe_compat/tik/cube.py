"""The TIK cube family: ``conv2d``, ``matmul``, ``mmad``, ``fixpipe``, the cube-input loads
(``load2dv1/v2``, ``load3dv1/v2``), ``broadcast_ub_to_l0c``, ``col2img`` and the L0C paths of
``data_move`` / ``tensor_mov``, lowered onto PTO cube, FIXPIPE and legacy cube-path ops.

The methods live in three modules (one mixin each), composed here:

* `cube_moves.CubeMoveAPI`: L0C <-> UB/L1 moves, load2d, load3d, broadcast, col2img;
* `cube_mm.CubeMatmulAPI`: ``mmad``, ``matmul``, ``conv2d``;
* `cube_fixpipe.FixpipeAPI`: the legacy ``fixpipe`` (and ``tik_instance.fixpipe_calls``).

``tensor_padding_with_matrix`` / ``set_l0_set_value`` raise `UnsupportedOp` with the reason.

Per-API mapping, units and composed lowerings: ``migration_guide/tik_cube.md``.
"""
from __future__ import annotations

from pto_core.errors import UnsupportedOp

from .api import tik_api
from .cube_fixpipe import FixpipeAPI, FixpipeCall
from .cube_mm import CubeMatmulAPI
from .cube_moves import CubeMoveAPI
from .data import ATOMIC_MODES
from .scalar import Expr


class CubeAPI(CubeMoveAPI, CubeMatmulAPI, FixpipeAPI):
    """The cube family (mixin of `tbe_compat.tik.Tik`; must precede `data.DataAPI` in the bases)."""

    @tik_api("set_atomic_add")
    def set_atomic_add(self, mode):
        """`data.DataAPI.set_atomic_add`, plus the trace-time atomic state that ``fixpipe`` lowers
        into its ``atomic(...)`` clause (FIXPIPE does not read the CTRL atomic mode)."""
        super().set_atomic_add(mode)
        if isinstance(mode, str):
            self._cube_atomic = mode
        elif isinstance(mode, Expr):
            self._cube_atomic = "dynamic"
        else:
            self._cube_atomic = ATOMIC_MODES.get(int(mode)) if int(mode) else None

    # ------------------------------------------------------------------ L0A/L0B fill (not modelled)
    @tik_api("tensor_padding_with_matrix")
    def tensor_padding_with_matrix(self, dst, repeat_times, value=None):
        """Not modelled (UnsupportedOp): the public sources do not pin its results down (tik_cube.md "Not modelled")."""
        self._require_support("tik.tensor_padding_with_matrix")
        raise self._error("tensor_padding_with_matrix is not modelled: the public sources do not give the unit of "
                          "repeat_times on each chip (TIK passes only repeat_times, while the CCE set_l0a_2d / "
                          "set_l0b_2d config also holds blocks per repeat and a gap), how the 16-bit L0_SET_VALUE "
                          "fills 32-bit dtypes, nor what value=None fills before any set_l0_set_value",
                          operand="dst", cls=UnsupportedOp,
                          hint="fill the matrix in UB with vec_dup, move it to L1 and load it with load2dv1/load2dv2")

    @tik_api("set_l0_set_value")
    def set_l0_set_value(self, value, dtype):
        """Not modelled (UnsupportedOp): L0_SET_VALUE only feeds tensor_padding_with_matrix, which is not."""
        raise self._error("set_l0_set_value is not modelled: the register it sets (L0_SET_VALUE) only feeds "
                          "tensor_padding_with_matrix, whose results the public sources do not pin down",
                          operand="value", cls=UnsupportedOp,
                          hint="fill the matrix in UB with vec_dup, move it to L1 and load it with load2dv1/load2dv2")


__all__ = ["CubeAPI", "FixpipeCall"]
