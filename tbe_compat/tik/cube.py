"""The TIK cube family: ``conv2d``, ``matmul``, ``mmad``, ``fixpipe``, the cube-input loads
(``load2dv1/v2``, ``load3dv1/v2``), ``broadcast_ub_to_l0c``, ``col2img`` and the L0C paths of
``data_move`` / ``tensor_mov``, lowered onto PTO cube, FIXPIPE and legacy cube-path ops.

The methods live in three modules (one mixin each), composed here:

* `cube_moves.CubeMoveAPI`: L0C <-> UB/L1 moves, load2d, load3d, broadcast, col2img;
* `cube_mm.CubeMatmulAPI`: ``mmad``, ``matmul``, ``conv2d``;
* `cube_fixpipe.FixpipeAPI`: the legacy ``fixpipe`` (and ``tik_instance.fixpipe_calls``).

Per-API mapping, units and composed lowerings: ``migration_guide/tik_cube.md``.
"""
from __future__ import annotations

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


__all__ = ["CubeAPI", "FixpipeCall"]
