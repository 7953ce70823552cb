"""Cube-path moves: L0C <-> UB/L1 ``data_move`` / ``tensor_mov``, ``load2dv1/v2``, ``load3dv1/v2``,
``broadcast_ub_to_l0c``, ``col2img``.

=====================================  =========================================================
TIK                                    PTO
=====================================  =========================================================
``data_move`` L0C -> UB (ConvReluMode)  ``pto.copy_matrix_cc_to_ubuf`` (v100/v200)
``data_move`` UB -> L0C                ``pto.copy_matrix_ubuf_to_cc`` (v100/v200)
``data_move`` L0C -> L1                ``pto.mte_l0c_l1`` normal layout (FIXPIPE chips: 910B/310B)
``tensor_mov`` L0C <-> UB              the same, with ``deq(scale | ub_ptr)``, ``relu``, ``row_mode``
``load2dv1`` / ``load2dv2``            ``pto.load2d``
``load3dv1`` / ``load3dv2``            ``pto.img2col``
``broadcast_ub_to_l0c``                ``pto.broadcast_ub_to_cc``
``mmad_broadcast``                     ``pto.broadcast_ub_to_cc`` (``repeat`` for repeat_mode 1; f16 -> f32)
``data_move_quant``                    ``pto.copy_matrix_cc_to_ubuf`` with ``deq`` (TIK ConvReluMode 3 / 7)
``col2img``                            ``pto.col2img``
=====================================  =========================================================

Units (tik_api.md §7.1, §7.3): on the L0C side one burst unit is a 16 x 16 fractal of the
L0C element type (512 B for 16-bit, 1 KiB for 32-bit; TIK block mode ``'v'``: one
16-element row) and the L0C gap unit is a fractal; the UB side counts 32-byte blocks.
"""
from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np

from pto_core import program as P
from pto_core.errors import IllegalOperand, UnsupportedOp
from pto_core.ops import legacy_cube
from pto_core.ops.mte import l0a_layout

from .. import platform
from .api import tik_api
from .cube_common import CubeBase, codes, l0c_align, refusal_records_nothing
from .data import DATA_MOVE_PATHS, IgnoredArgumentWarning, MovePath, register_move_path
from .vector_common import iadd, idiv, imul, irem, isub
from .scalar import Expr, Scalar, float_immediate, option_is_off, py_number, zero_d_value
from .tensor import Tensor

U16 = 0xFFFF
#: Named choice LOAD3DV2_BLOCK_INSIDE_MATRIX (migration_guide/tik_cube.md, "load3dv1, load3dv2"): load3dv2 refuses
#: a block whose rows ``m_start_pt + m_extension``, rounded up to 16, pass ``Ho*Wo`` or whose columns
#: ``k_start_pt + k_extension``, rounded up to 32 bytes, pass ``channel_size*filter_h*filter_w``: CANN TIK's
#: ``check_load3dv2_m_extension`` / ``check_load3dv2_k_extension`` (common_util.py, called by ``load3dv2`` and
#: by its debugger's ``Load3DV2.eval_``). Immediates are checked at the call, TIK values when the instruction
#: runs. Until h_cube409 the raster went on past ``Ho*Wo`` and the K lanes past the filter read 0 (what
#: ``pto.img2col`` still does for conv2d and load3dv1); no public kernel calling load3dv2 relied on it. Off: those
#: blocks load as ``pto.img2col`` defines them.
LOAD3DV2_BLOCK_INSIDE_MATRIX = True
#: Named choice LOAD3DV2_EXTENSIONS_ROUNDED_UP (migration_guide/tik_cube.md, "load3dv1, load3dv2"): a
#: ``k_extension`` that is not a multiple of C0 or an ``m_extension`` that is not a multiple of 16 loads the block
#: rounded up to whole fractals. CANN TIK's ``_load3dv2_check`` only range-checks the extensions and its extent
#: checks (``check_load3dv2_k_extension`` / ``_m_extension``, the destination room) round them up; Ascend C
#: ``LoadData3DParamsV2`` allows such an extension where the block reaches the matrix's last fractal. The rounded
#: block still has to end inside the im2col matrix (LOAD3DV2_BLOCK_INSIDE_MATRIX), so the extra rows and columns
#: are the matrix's own next entries. Until the twenty-third session such kernels were refused ("must be a multiple
#: of 16"). ``k_start_pt`` stays a multiple of C0. Off: the extensions must be fractal multiples.
LOAD3DV2_EXTENSIONS_ROUNDED_UP = True
#: TIK ConvReluMode codes of data_move L0C <-> UB (tik_api.md §7.1, CR_MODE_MAP) -> (src, dst, relu).
CONV_RELU_MODES = {0: (None, None, False), 1: ("f32", "f16", False), 2: ("f32", "f16", True),
                   3: ("s32", "f16", False), 4: ("f16", "f32", False), 5: (None, None, True)}
#: Named choice DATA_MOVE_L0C_MODE_SELECTS_CONVERSION (migration_guide/tik_cube.md, "L0C moves"): an
#: explicit ConvReluMode is the instruction's conversion field, so the same-type codes (0 plain, 5 relu)
#: never convert. When the UB tensor's dtype differs from the L0C tensor's, the UB side is taken as
#: raw bytes of the L0C dtype (the hardware moves 32-bit L0C elements unchanged under mode 0; CANN
#: basic_lstm_cell_weight_grad relies on it for its float32 bias gradient). Without the argument the
#: conversion still follows the dtype pair (CR_MODE_MAP).
SAME_TYPE_MODES = (0, 5)
#: What to do instead of an L0C <-> UB move on a chip without that path (910B/310B), by direction
#: (tik_api.md §8.1: on 910B/310B mmad adds a bias from an L1 ``bias_tensor`` via the bias table;
#: results leave L0C through fixpipe). Keyed by (src space, dst space).
NO_L0C_UB_PATH_HINTS = {
    ("l0c", "ub"): "write L0C results out with fixpipe",
    ("ub", "l0c"): "initialise L0C with mmad instead: is_bias=0 overwrites it, and a bias (or another start value "
                   "per column) goes in through mmad's bias_tensor (an L1 tensor moved to the bias table)",
}
#: Arguments CANN TIK accepts as int, Scalar or Expr (its ``_load3dv1_load3dv2_col2img_check`` type checks; its
#: debugger's ``Load3DV1`` / ``Load3DV2`` / ``Col2Img`` read them with ``evaluate_expr`` when the instruction runs)
#: but that the simulator needs as Python ints when it traces the call, each with the reason: a TIK value for one of
#: them is `UnsupportedOp` (a limit of the simulator), not `IllegalOperand` (review: a Scalar ``channel_size`` was
#: called illegal). Arguments TIK itself wants as immediates (load3dv1 ``_csize``, data_move ``ConvReluMode``) stay
#: `IllegalOperand`.
RUN_TIME_ARGS_NEEDED_AT_TRACE = {
    **{name: "lays out the im2col window walk (the output width Wo and the filter taps along K) when it traces "
             "the call" for name in ("stride_w", "stride_h", "filter_w", "filter_h", "dilation_filter_w",
                                     "dilation_filter_h")},
    "jump_offset": "sizes and places the destination fractals (jump_offset fractals apart) when it traces the call",
    "repeat_mode": "chooses the direction of the walk (K for 0, M for 1) when it traces the call",
    # CANN 8.1 MMadBroadCastApi.check_all: "repeat_mode should be int or Scalar", passed to broadcast_ub_to_cc
    "mmad_broadcast repeat_mode": "chooses, when it traces the call, whether a burst reads one row (1) or "
                                  "burst_repeat rows (0): the rows it reads and the instruction's form",
}
#: load3dv1 dtypes (the TIK load3dv1 page; Ascend C Load3Dv1: uint8_t/int8_t/half on the training and
#: inference AI cores). TIK's own API table lists the chips only, so the page decides the dtype.
LOAD3DV1_DTYPES = ("uint8", "int8", "float16")


def _space(t):
    return t.space if isinstance(t, Tensor) else None


def _mul(a, k):
    return a * k if isinstance(a, int) else P.binop("mul", P.cast(a, P.I64), k)


def _num(v, name: str) -> str:
    """An argument in an extent message: its value, or its TIK name when it is a run-time value."""
    return str(v) if isinstance(v, int) else name


def _ext(n, per_burst, step):
    """Bytes spanned by ``n`` bursts of ``per_burst`` bytes, ``step`` bytes apart: an int, or an IR
    expression when one of them is a run-time value (``Operand.check_extent`` then checks a destination
    when the op runs; callers range-check a run-time ``n >= 1`` first)."""
    if all(isinstance(x, int) for x in (n, per_burst, step)):
        return (n - 1) * step + per_burst
    return iadd(imul(isub(n, 1), step), per_burst)


# ============================================================================ DATA_MOVE_PATHS rows (L0C)


def _lower_l0c_ub(tik, dst, src, n, burst, ss, ds, mode, fp, *, row_mode=False, deq=None, relu=False):
    tik._emit("copy_matrix_cc_to_ubuf", src.ptr, dst.ptr, n, burst, ss, ds, row_mode=row_mode or None,
              deq=None if deq is None else (deq,), relu=relu or None, footprint=fp)


def _lower_ub_l0c(tik, dst, src, n, burst, ss, ds, mode, fp, **_):
    tik._emit("copy_matrix_ubuf_to_cc", src.ptr, dst.ptr, n, burst, ss, ds, footprint=fp)


def _lower_l0c_l1(tik, dst, src, n, burst, ss, ds, mode, fp, **_):
    """Bursts of ``burst`` fractals = column blocks of a FIXPIPE normal-layout write (``m = 16*burst`` rows,
    ``n = 16`` channels per burst; at most 255 bursts per op)."""
    if not all(isinstance(x, int) for x in (n, burst, ss, ds)):
        raise tik._error("data_move L0C -> L1 needs immediate nburst/burst/strides (it becomes FIXPIPE ops)",
                         operand="nburst",
                         hint="use Python ints")
    esize = src.dt.bits // 8
    for first in range(0, n, 255):
        cnt = min(255, n - first)
        s_off = first * (burst + ss) * 256
        d_off = first * (burst * 256 * esize + ds * 32) // esize
        from .cube_common import at
        s_op, d_op = at(tik, src, s_off), at(tik, dst, d_off)
        tik._emit("mte_l0c_l1", s_op.ptr, d_op.ptr, 16 * burst, 16 * cnt, 16 * (burst + ss),
                  (burst * 256 * esize + ds * 32) // esize, footprint=fp)


register_move_path("l0c", "ub", MovePath(_lower_l0c_ub, src_unit=0, dst_unit=32, byte_copy=False,
                                         doc="L0C -> UB (copy_matrix_cc_to_ubuf, V; v100/v200)"))
register_move_path("ub", "l0c", MovePath(_lower_ub_l0c, src_unit=32, dst_unit=0, byte_copy=False,
                                         doc="UB -> L0C (copy_matrix_ubuf_to_cc, V; v100/v200)"))
register_move_path("l0c", "l1", MovePath(_lower_l0c_l1, socs=("Ascend910B", "Ascend910_93", "Ascend310B"),
                                         src_unit=0, dst_unit=32, byte_copy=False,
                                         doc="L0C -> L1 (FIXPIPE pto.mte_l0c_l1; Ascend910B/310B)"))


class CubeMoveAPI(CubeBase):
    """L0C paths of ``data_move``/``tensor_mov`` and the cube-input loads (mixin via `cube.CubeAPI`)."""

    # ------------------------------------------------------------------ data_move / tensor_mov (L0C)
    @tik_api("data_move")
    def data_move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **argv):
        """``data_move``; L0C paths here (fractal units, optional ConvReluMode), others in `data.DataAPI`."""
        if "l0c" not in (_space(dst), _space(src)):
            return super().data_move(dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **argv)
        mode = args[0] if len(args) == 1 else None
        if len(args) > 1:
            raise self._error(f"data_move takes at most 8 positional arguments, got {7 + len(args)}",
                              operand="args", value=len(args) + 7,
                              hint="call data_move(dst, src, sid, nburst, burst, src_stride, dst_stride) with at most "
                                   "one extra mode (ConvReluMode for L0C <-> UB, PadMode for GM -> L1)")
        for key in ("ConvReluMode", "PadMode", "pad_mode"):
            if key in argv:
                mode = argv.pop(key)
        if argv:
            raise self._error(f"unknown keyword argument(s) {', '.join(sorted(argv))}", operand=next(iter(argv)),
                              hint="data_move takes the keyword ConvReluMode= (L0C <-> UB) or PadMode= (GM -> L1) "
                                   "besides its parameters")
        self._int_arg(sid, "sid", 0, 15, run_time_api="tik.data_move")
        code = 0 if mode is None else self._cube_imm(mode, "ConvReluMode", 0, 255)
        if code not in CONV_RELU_MODES:
            raise self._error(f"ConvReluMode {code} is not one of the modelled modes "
                              f"({', '.join(map(str, CONV_RELU_MODES))})", operand="ConvReluMode", value=code,
                              cls=UnsupportedOp, limit="0 plain, 1 f32->f16, 2 f32->f16+relu, 4 f16->f32, 5 relu",
                              hint="for s32 -> f16 dequantisation use tensor_mov(..., deqscale=...)")
        want_s, want_d, relu = CONV_RELU_MODES[code]
        if code == 3:
            raise self._error("ConvReluMode 3 (s32 -> f16 deq) needs a deqscale, which data_move has no argument "
                              "for", operand="ConvReluMode", value=3,
                              hint="use tensor_mov(dst, src, 'm', ..., deqscale=scale)")
        if mode is not None and code in SAME_TYPE_MODES and isinstance(dst, Tensor) and isinstance(src, Tensor) \
                and dst.dtype != src.dtype:
            if src.space == "l0c":
                dst = self._api_reinterpret(dst, src.dtype)
            else:
                src = self._api_reinterpret(src, dst.dtype)
        self._cube_l0c_move(dst, src, nburst, burst, src_stride, dst_stride, block_mode="m", relu=relu,
                       want=(want_s, want_d), api="data_move")

    @tik_api("tensor_mov")
    def tensor_mov(self, dst, src, block_mode, nburst, burst_len, dst_stride, src_stride, deqscale=None,
                   sid_store_mode=0, relu=False, pad_mode=None, pad_value=None, onthefly_mode=0, src_onthefly=None,
                   src_onthefly_stride=0):
        """``tensor_mov``; L0C paths (``block_mode`` ``'m'``/``'v'``, ``deqscale``, ``relu``) here, plain 32-byte
        moves in `data.DataAPI` (note: dst_stride comes before src_stride)."""
        if "l0c" not in (_space(dst), _space(src)):
            return super().tensor_mov(dst, src, block_mode, nburst, burst_len, dst_stride, src_stride, deqscale,
                                      sid_store_mode, relu, pad_mode, pad_value, onthefly_mode, src_onthefly,
                                      src_onthefly_stride)
        for name, v in (("pad_mode", pad_mode), ("pad_value", pad_value), ("src_onthefly", src_onthefly)):
            if v is not None:
                raise self._error(f"tensor_mov {name} is not supported on an L0C path", operand=name,
                                  value=repr(v), cls=UnsupportedOp,
                                  hint=f"leave {name}=None for moves from or to L0C (the L0C path has no padding or "
                                       f"on-the-fly source)")
        for name, v in (("onthefly_mode", onthefly_mode), ("sid_store_mode", sid_store_mode)):
            if not option_is_off(v):
                raise self._error(f"tensor_mov {name}={v!r} is not supported on an L0C path", operand=name,
                                  value=repr(v), cls=UnsupportedOp, hint=f"pass {name}=0 for moves from or to L0C")
        mode = "m" if block_mode is None or (isinstance(block_mode, str) and block_mode == "") else block_mode
        if not isinstance(mode, str) or mode not in ("m", "v"):    # by type first: a TIK Scalar's == builds a comparison
            raise self._error(f"block_mode {block_mode!r} is not an L0C block mode", operand="block_mode",
                              value=block_mode, limit="'m' (16 x 16 fractals), 'v' (16-element rows) or ''",
                              hint="pass block_mode='m' to move whole 16 x 16 fractals or 'v' for 16-element rows",
                              cls=UnsupportedOp if isinstance(mode, str) and mode in ("sc", "dp") else IllegalOperand)
        relu = self._bool_arg(relu, "relu")
        self._cube_l0c_move(dst, src, nburst, burst_len, src_stride, dst_stride, block_mode=mode, relu=relu,
                       deqscale=deqscale, api="tensor_mov")

    @tik_api("data_move_quant")
    def data_move_quant(self, dst, src, sid, nburst, burst, src_stride, dst_stride, quant_param, relu_flag=False):
        """L0C int32 fractals -> UB float16 with dequantisation (tik_api.md §7.7).

        CANN TIK emits ``copy_matrix_cc_to_ubuf`` with ConvReluMode 3 (a float16 ``quant_param``
        scale, set as DEQSCALE) or 7 (a UB float16 tensor of 16 per-channel scales, with the ReLU
        bit when ``relu_flag``): the deq / vdeq forms of ``tensor_mov`` (units: L0C fractals and
        fractal gaps; UB 32-byte gaps). ConvReluMode 3 has no ReLU: a scalar ``quant_param`` with
        ``relu_flag=True`` moves without ReLU, as the hardware does, and warns."""
        if platform.current_soc().core_type != platform.AIC:
            raise self._error("data_move_quant needs an AI Core (the Vector Core has no L0C)", operand="dst",
                              value=platform.current_soc().core_type, cls=UnsupportedOp,
                              hint="select the AiCore core type")
        relu_flag = self._bool_arg(relu_flag, "relu_flag")
        self._int_arg(sid, "sid", 0, 15, run_time_api="tik.data_move_quant")
        d = self._operand(dst, "dst", spaces=("ub",))
        s = self._operand(src, "src", spaces=("l0c",))
        if (s.dt.name, d.dt.name) != ("s32", "f16"):
            raise self._error(f"data_move_quant dequantises int32 L0C data into float16, got {s.tensor.dtype} -> "
                              f"{d.tensor.dtype}", operand="dst", value=f"{s.tensor.dtype}->{d.tensor.dtype}",
                              limit="int32 -> float16", hint="use data_move / tensor_mov for the other conversions")
        if quant_param is None:
            raise self._error("quant_param is required: a float16 scale (float or float16 Scalar) or a float16 UB "
                              "tensor of 16 per-channel scales", operand="quant_param", value=None,
                              hint="pass quant_param, e.g. 1.0 (one scale) or a float16 UB tensor [16]")
        relu = relu_flag and isinstance(quant_param, Tensor)
        if relu_flag and not relu:
            warnings.warn(f"{self._where or 'tik.data_move_quant'}: relu_flag has no effect with a scalar "
                          f"quant_param: CANN TIK emits ConvReluMode 3 (deq without ReLU) for it; pass the scales "
                          f"as a UB tensor (ConvReluMode 7) to apply ReLU", IgnoredArgumentWarning, stacklevel=3)
        self._cube_l0c_move(dst, src, nburst, burst, src_stride, dst_stride, block_mode="m", relu=relu,
                            deqscale=quant_param, api="data_move_quant")

    def _cube_l0c_move(self, dst, src, nburst, burst, src_stride, dst_stride, *, block_mode, relu, want=(None, None),
                  deqscale=None, api):
        d = self._operand(dst, "dst")
        s = self._operand(src, "src")
        path = DATA_MOVE_PATHS.get((s.space, d.space))
        if path is None:
            raise self._error(f"no {api} path from {s.space.upper()} to {d.space.upper()}", operand="dst",
                              value=f"{s.tensor.scope} -> {d.tensor.scope}", cls=UnsupportedOp,
                              hint="L0C moves to UB (v100/v200 chips) or is written out with fixpipe")
        soc = platform.current_soc()
        target = soc.profile
        if path.socs is not None and soc.short_soc_version not in path.socs:
            raise self._error(f"{api} {path.doc} is not available on {soc.soc_version}", operand="dst",
                              value=f"{s.space}->{d.space}", cls=UnsupportedOp, limit=", ".join(path.socs),
                              hint="use fixpipe to write L0C results out")
        instr = {("l0c", "ub"): "copy_matrix_cc_to_ubuf", ("ub", "l0c"): "copy_matrix_ubuf_to_cc"}.get(
            (s.space, d.space))
        if instr is not None and not legacy_cube.available(instr, target):
            raise self._error(f"{api} {s.space.upper()} -> {d.space.upper()} does not exist on {soc.soc_version} "
                              f"(no L0C <-> UB path on this chip)", operand="dst", value=f"{s.space}->{d.space}",
                              cls=UnsupportedOp, hint=NO_L0C_UB_PATH_HINTS[(s.space, d.space)])
        if block_mode == "v" and s.space != "l0c":
            raise self._error("block mode 'v' applies to L0C -> UB moves", operand="block_mode", value="v",
                              hint="use block_mode 'm' (whole 16 x 16 fractals) for moves into L0C")
        where = f"tik.{api}"
        n = self._int_arg(nburst, "nburst", 1, 4095, run_time_api=where)
        b = self._int_arg(burst, "burst_len" if api == "tensor_mov" else "burst", 1, U16, run_time_api=where)
        ss = self._int_arg(src_stride, "src_stride", 0, U16, run_time_api=where)
        ds = self._int_arg(dst_stride, "dst_stride", 0, U16, run_time_api=where)
        l0c = s if s.space == "l0c" else d
        other = d if l0c is s else s
        conv = self._cube_l0c_dtypes(s, d, want, deqscale, relu)
        l0c.check_aligned(32 if block_mode == "v" else l0c_align(l0c.dt))
        other.check_aligned(32)
        frac = 256 * (l0c.dt.bits // 8)
        unit = 16 * (l0c.dt.bits // 8) if block_mode == "v" else frac
        if s.space == "l0c":
            per = unit // (s.dt.bits // 8)               # elements per burst unit
            src_burst, dst_burst = _mul(b, unit), _mul(b, per * (d.dt.bits // 8))
            s_step, d_step = _add(src_burst, _mul(ss, frac)), _add(dst_burst, _mul(ds, 32))
        else:
            dst_burst = _mul(b, frac)
            src_burst = _mul(b, 256 * (s.dt.bits // 8))
            s_step, d_step = _add(src_burst, _mul(ss, 32)), _add(dst_burst, _mul(ds, frac))
        se, de = _ext(n, src_burst, s_step), _ext(n, dst_burst, d_step)
        what = f"{_num(n, 'nburst')} burst(s) of {_num(b, 'burst_len' if api == 'tensor_mov' else 'burst')} unit(s)"
        s.check_extent(se, what)
        d.check_extent(de, what)
        fp = [s.read(se), d.write(de)]
        deq_arg = None
        if conv == "deq":
            deq_arg, extra = self._cube_deq_operand(deqscale, "quant_param" if api == "data_move_quant" else "deqscale")
            fp += extra
        path.lower(self, d, s, n, b, ss, ds, None, fp, row_mode=block_mode == "v", deq=deq_arg, relu=relu)

    def _cube_l0c_dtypes(self, s, d, want, deqscale, relu):
        pair = (s.dt.name, d.dt.name)
        if s.space == "l0c" and d.space == "ub":
            conv = legacy_cube.CC_TO_UB.get(pair)
        elif s.space == "ub" and d.space == "l0c":
            conv = "copy" if s.dt is d.dt else ("f16_f32" if pair == ("f16", "f32") else None)
        else:
            conv = "copy" if s.dt is d.dt else None
        if conv is None:
            raise self._error(f"src dtype {s.tensor.dtype} -> dst dtype {d.tensor.dtype} is not a conversion of "
                              f"this path", operand="dst", value=d.tensor.dtype,
                              limit=", ".join(f"{a}->{b}" for a, b in legacy_cube.CC_TO_UB)
                              if s.space == "l0c" else "same dtype (or float16 -> float32)",
                              hint="give dst one of the dtypes this path converts to, or convert the data in UB "
                                   "afterwards with vconv / vec_conv")
        ws, wd = want
        if ws is not None and pair != (ws, wd):
            raise self._error(f"ConvReluMode converts {ws} -> {wd}, but src/dst are {pair[0]} -> {pair[1]}",
                              operand="ConvReluMode", value=f"{pair[0]}->{pair[1]}", limit=f"{ws} -> {wd}",
                              hint=f"declare src {ws} and dst {wd}, or pick the ConvReluMode of your dtypes (0 or no "
                                   f"mode: same dtype)")
        if conv == "deq" and deqscale is None:
            raise self._error("int32 -> float16 needs deqscale (a float, a float16 Scalar or a float16 UB tensor "
                              "[16])", operand="deqscale", limit="deqscale for s32 -> f16",
                              hint="pass deqscale=<scale> (e.g. 1.0), or move int32 to an int32 UB tensor")
        if conv != "deq" and deqscale is not None:
            raise self._error(f"deqscale applies to int32 -> float16 only, not {s.tensor.dtype} -> "
                              f"{d.tensor.dtype}", operand="deqscale", value=repr(deqscale),
                              hint="pass deqscale=None (only int32 L0C -> float16 UB dequantises)")
        if relu and d.space == "l0c":
            raise self._error("relu applies to L0C -> UB moves only", operand="relu", value=True,
                              hint="pass relu=False for moves into L0C (apply ReLU on the way out)")
        return conv

    def _cube_deq_operand(self, deqscale, name="deqscale"):
        """(deq clause value, extra footprint) of a ``deqscale``: float immediate, float16 Scalar, UB tensor [16]."""
        if isinstance(deqscale, Tensor):
            t = self._operand(deqscale, name, spaces=("ub",), dtypes=("float16",))
            t.check_aligned(32)
            t.check_extent(32, "16 float16 scales")
            return t.ptr, [t.read(32)]
        if isinstance(deqscale, (Scalar, Expr)):
            if deqscale.dtype != "float16":
                raise self._error(f"a Scalar {name} must be float16, got {deqscale.dtype}", operand=name,
                                  value=deqscale.dtype, limit="float16",
                                  hint=f"declare the {name} Scalar as float16, or pass the scale as a float")
            return deqscale.ir, []
        if isinstance(deqscale, float):
            return deqscale, []
        if isinstance(deqscale, int) and not isinstance(deqscale, bool):
            raise self._error(f"an integer {name} selects the uint64 deq8/deq16 modes, which are not modelled",
                              operand=name, value=deqscale, cls=UnsupportedOp,
                              hint="pass the scale as a float (e.g. 1.0), a float16 Scalar or a float16 UB tensor")
        raise self._error(f"{name} must be a float, a float16 Scalar or a float16 UB tensor, got "
                          f"{type(deqscale).__name__}", operand=name, value=repr(deqscale),
                          hint="pass the scale as a float (e.g. 1.0), a float16 Scalar or a float16 UB tensor [16]")

    # ------------------------------------------------------------------ load2d
    @tik_api("load2dv1")
    @refusal_records_nothing
    def load2dv1(self, dst, src, index, repeat_times, src_stride, sid, if_transpose=False, addr_mode=None):
        """Whole 512-byte fractals L1/GM -> L0A/L0B, contiguous in dst (tik_api.md §7.4)."""
        self._cube_load2d("tik.load2dv1", dst, src, index, repeat_times, 0, src_stride, sid, if_transpose, addr_mode)

    @tik_api("load2dv2")
    @refusal_records_nothing
    def load2dv2(self, dst, src, start_index, repeat_times, dst_gap, src_stride, sid, if_transpose=False,
                 addr_mode=None):
        """Like load2dv1 with ``dst_gap`` free fractals between destination fractals (tik_api.md §7.4)."""
        self._cube_load2d("tik.load2dv2", dst, src, start_index, repeat_times, dst_gap, src_stride, sid, if_transpose,
                     addr_mode)

    def _cube_load2d(self, api, dst, src, index, repeat, dst_gap, src_stride, sid, transpose, addr_mode):
        s = self._operand(src, "src", spaces=("l1", "gm"))
        d = self._operand(dst, "dst", spaces=("l0a", "l0b", "l1") if s.space == "gm" else ("l0a", "l0b"))
        self._require_support(api, d.tensor.dtype)
        if s.dt.bits != d.dt.bits:
            raise self._error(f"src ({s.tensor.dtype}) and dst ({d.tensor.dtype}) element sizes differ",
                              operand="dst", value=d.tensor.dtype, limit=s.tensor.dtype,
                              hint="use src and dst tensors of one element size (the fractals are copied as bytes)")
        idx = self._int_arg(index, "index" if api.endswith("v1") else "start_index", 0, U16, run_time_api=api)
        rep = self._int_arg(repeat, "repeat_times", 1, 255, run_time_api=api)
        gap = self._int_arg(dst_gap, "dst_gap", 0, U16, run_time_api=api)
        ss = self._int_arg(src_stride, "src_stride", 0, U16, run_time_api=api)
        self._int_arg(sid, "sid", 0, 15, run_time_api=api)
        transpose = self._bool_arg(transpose, "if_transpose")
        if transpose and d.dt.bits != 16:
            raise self._error(f"if_transpose transposes 16 x 16 fractals of 16-bit data, not {d.tensor.dtype}",
                              operand="if_transpose", value=d.tensor.dtype, limit="int16, uint16, float16",
                              hint="pass if_transpose=False for 8-bit data and store its fractals in L1 "
                                   "already in the layout the destination needs")
        addr_mode = zero_d_value(addr_mode)             # a 0-d numpy int/bool is its one value, as in ir_value
        if not (addr_mode is None or (isinstance(addr_mode, (numbers.Integral, np.bool_)) and addr_mode in (0, 1))):
            raise self._error(f"addr_mode must be None, 0 (increasing) or 1 (decreasing), got {addr_mode!r}",
                              operand="addr_mode", value=repr(addr_mode), limit="None | 0 | 1",
                              hint="pass addr_mode=0 (addresses increase, the default) or 1 (they decrease)")
        if d.space != "l1":
            d.check_aligned(512)
        if s.space == "l1":
            s.check_aligned(32)
        fr = 512
        src_bytes = None
        if addr_mode != 1 and all(isinstance(x, int) for x in (idx, rep, ss)):
            src_bytes = (idx + (rep - 1) * ss + 1) * fr
            s.check_extent(src_bytes, f"fractals {idx} + r*{ss}")
        dst_bytes = _ext(rep, fr, _mul(_add(gap, 1), fr))
        d.check_extent(dst_bytes, f"{_num(rep, 'repeat_times')} fractal(s)")
        self._emit("load2d", s.ptr, d.ptr, idx, rep, ss, gap, transpose=True if transpose else None,
                   addr_dec=True if addr_mode == 1 else None, footprint=[s.read(src_bytes), d.write(dst_bytes)])

    # ------------------------------------------------------------------ load3d (img2col)
    def _img2col_window(self, api, pad, l1_h, l1_w, fetch_filter_w, fetch_filter_h, left_top_w, left_top_h,
                        stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h) -> tuple:
        """The checked img2col window arguments shared by load3dv1 and col2img (tik_api.md §7.5, §7.7):
        ``(pads, h, w, fw, fh, lw, lh, sw, sh, kw, kh, dw, dh, raster, first_raster_index)``.

        The fetch position, the window origin and the map size ``l1_h`` / ``l1_w`` may be TIK
        values (CANN TIK accepts int, Scalar or Expr for them: they go to registers and FMATRIX when the
        instruction runs; CANN's max_pool_with_argmax_v2 ResNet-50 branch passes Scalar sizes): they come
        back as IR expressions, checked when the instruction runs (``pto.img2col`` / ``pto.col2img``
        validate the map), and the raster index is then None (`_img2col_runtime_checks` builds it)."""
        pads = self._fmatrix_pads(pad, api)
        # a TIK value is range-checked when it runs under its TIK name (pto.img2col would name %fm_h / %fm_w)
        h = self._int_arg(l1_h, "l1_h", 1, legacy_cube.FMATRIX_MAX_HW, run_time_api=api)
        w = self._int_arg(l1_w, "l1_w", 1, legacy_cube.FMATRIX_MAX_HW, run_time_api=api)
        fw = self._int_arg(fetch_filter_w, "fetch_filter_w", 0, 254)
        fh = self._int_arg(fetch_filter_h, "fetch_filter_h", 0, 254)
        lw = self._int_arg(left_top_w, "left_top_w", -255, 32767)
        lh = self._int_arg(left_top_h, "left_top_h", -255, 32767)
        sw, sh, kw, kh, dw, dh = self._img2col_geometry(stride_w, stride_h, filter_w, filter_h, dilation_filter_w,
                                                        dilation_filter_h)
        if (isinstance(fw, int) and fw >= kw) or (isinstance(fh, int) and fh >= kh):
            bad_w = isinstance(fw, int) and fw >= kw
            raise self._error(f"fetch position (fetch_filter_h, fetch_filter_w) = ({_show(fh)}, {_show(fw)}) is "
                              f"outside the {kh} x {kw} filter (filter_h x filter_w)",
                              operand="fetch_filter_w" if bad_w else "fetch_filter_h", value=(_show(fh), _show(fw)),
                              limit=f"< ({kh}, {kw})",
                              hint=f"pass fetch_filter_w in [0, {kw - 1}] and fetch_filter_h in [0, {kh - 1}] "
                                   f"(positions inside the filter, counted from 0)")
        if isinstance(h, int) and isinstance(w, int) and all(isinstance(p, int) for p in pads):
            rs = legacy_cube.Raster(api, h, w, (sh, sw), (kh, kw), (dh, dw), pads)
        else:
            rs = _runtime_raster(h, w, (sh, sw), (kh, kw), (dh, dw), pads)
        m0 = None
        if isinstance(lh, int) and isinstance(lw, int) and isinstance(rs, legacy_cube.Raster):
            try:
                m0 = rs.raster_index(api, lh, lw)
            except IllegalOperand as e:
                raise self._error(e.message, operand="left_top_w", value=(lh, lw), hint=e.hint) from None
        return pads, h, w, fw, fh, lw, lh, sw, sh, kw, kh, dw, dh, rs, m0

    def _img2col_geometry(self, *values) -> tuple:
        """``(stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h)`` as checked ints
        (TIK values: `UnsupportedOp`, `RUN_TIME_ARGS_NEEDED_AT_TRACE`)."""
        names = ("stride_w", "stride_h", "filter_w", "filter_h", "dilation_filter_w", "dilation_filter_h")
        return tuple(self._cube_imm(v, n, 1, 63 if n.startswith("stride") else 255,
                                    tik_takes_values=RUN_TIME_ARGS_NEEDED_AT_TRACE[n]) for v, n in zip(values, names))

    def _fmatrix_pads(self, pad, api: str, name: str = "pad") -> tuple:
        """``pad`` = [left, right, top, bottom], each in [0, 255]: Python ints (checked now) or TIK values.

        Named choice FMATRIX_PADS_AT_RUN_TIME (tik_cube.md): TIK values are allowed because the pads are fields of the FMATRIX register that TIK assembles when
        the instruction runs (four 8-bit fields next to the 16-bit map size, like ``l1_h`` / ``l1_w``);
        CANN's fused_dbn_dw passes int8 Scalars set in if_scopes. A run-time pad is range-checked by a
        ``pto.assert_in_range`` at the call's line, and the window raster then depends on it
        (`_runtime_raster`)."""
        if not isinstance(pad, (list, tuple)) or len(pad) != 4:
            raise self._error(f"{name} must be a list of 4 values [left, right, top, bottom], got {pad!r}",
                              operand=name, value=repr(pad), limit="4 values in [0, 255]",
                              hint=f"pass {name} as [pad_left, pad_right, pad_top, pad_bottom] (ints, Scalars or "
                                   f"Exprs)")
        pads = tuple(self._int_arg(x, f"{name}[{i}]", 0, 255) for i, x in enumerate(pad))
        for i, (side, v) in enumerate(zip(("left", "right", "top", "bottom"), pads)):
            if not isinstance(v, int):
                self._emit("assert_in_range", P.cast(v, P.I64), 0, 255, what=f"{name}[{i}] ({side}) of {api}")
        return pads

    def _img2col_runtime_checks(self, api: str, rs, fw, fh, lw, lh):
        """Run-time checks (``pto.assert_in_range``) of the window arguments given as TIK values, and the
        raster index of the window origin as an expression (the rules `Raster.raster_index` applies
        to immediates: origins are ``(ho*stride_h - pad_top, wo*stride_w - pad_left)``, wo < Wo)."""
        def check(value, lo, hi, what):
            if isinstance(value, int) and isinstance(hi, int):      # an immediate origin on a static raster part
                if not lo <= value <= hi:
                    raise self._error(f"{what} = {value} is outside [{lo}, {hi}]", operand="left_top_w",
                                      value=(lh, lw), limit=f"[{lo}, {hi}]",
                                      hint=f"pass left_top_h/left_top_w so that {what} lies in [{lo}, {hi}] (the "
                                           f"window origin inside the padded feature map)")
                return
            self._emit("assert_in_range", P.cast(value, P.I64), lo, hi, what=f"{what} of {api}")

        def multiple(value, divisor: int, what: str, rule: str) -> None:
            """``value`` (the origin plus its pad) a multiple of the stride, named by its value (k445: the check
            of its remainder showed only the remainder)."""
            if isinstance(value, int):
                if value % divisor:
                    raise self._error(f"{what} = {value} is not {rule}", operand="left_top_w", value=(lh, lw),
                                      limit=f"multiple of {divisor}",
                                      hint=f"pass left_top_h/left_top_w so that {what} is a multiple of {divisor} "
                                           f"(the origin of an output position: o * stride - pad)")
                return
            self._emit("assert_multiple", P.cast(value, P.I64), divisor, what=f"{what} of {api} =", rule=rule)

        # the map size or a pad is a TIK value: nothing about the origin was checked at trace time
        runtime_wo = not isinstance(rs, legacy_cube.Raster)

        for name, v, k in (("fetch_filter_w", fw, rs.kw), ("fetch_filter_h", fh, rs.kh)):
            if not isinstance(v, int):
                check(v, 0, k - 1, f"{name} (a position in the {rs.kh} x {rs.kw} filter)")
        oh, ow = iadd(lh, rs.pt), iadd(lw, rs.pl)
        if not isinstance(lh, int) or runtime_wo:
            # rows above the padded map are raster rows ho < 0 (pto_cube.md, "rows above the padded map")
            check(lh, legacy_cube.WINDOW_ORIGIN_MIN, 32767, "left_top_h (window origin row)")
            if rs.sh > 1:
                multiple(oh, rs.sh, "left_top_h + pad_top",
                         f"a multiple of stride_h {rs.sh} (window origins are ho*{rs.sh} - {_show(rs.pt, 'pad_top')})")
        if not isinstance(lw, int) or runtime_wo:
            check(ow, 0, imul(iadd(rs.wo, -1), rs.sw),
                  f"left_top_w + pad_left ({_show(rs.pl)}) (the origin of an output column wo < Wo = "
                  f"{_show(rs.wo)})")
            if rs.sw > 1:
                multiple(ow, rs.sw, "left_top_w + pad_left",
                         f"a multiple of stride_w {rs.sw} (window origins are wo*{rs.sw} - {_show(rs.pl, 'pad_left')})")
        return iadd(imul(idiv(oh, rs.sh), rs.wo), idiv(ow, rs.sw))

    @tik_api("load3dv1")
    @refusal_records_nothing
    def load3dv1(self, dst, src, pad, l1_h, l1_w, c1_index, fetch_filter_w, fetch_filter_h, left_top_w,
                 left_top_h, stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h,
                 jump_offset, repeat_mode, repeat_time, _csize=0, pad_value=0):
        """img2col of an L1 feature map [C1, H, W, C0] into 16-pixel x C0 fractals (tik_api.md §7.5)."""
        d = self._operand(dst, "dst", spaces=("l0a", "l0b", "ub"))
        s = self._operand(src, "src", spaces=("l1",))
        self._require_support("tik.load3dv1")
        self._cube_same_dtype(s, d)
        if d.tensor.dtype not in LOAD3DV1_DTYPES:
            raise self._error(f"load3dv1 moves {', '.join(LOAD3DV1_DTYPES)} data, not {d.tensor.dtype}",
                              operand="dst", value=d.tensor.dtype, limit=", ".join(LOAD3DV1_DTYPES),
                              hint="use load3dv2 (float32 on Ascend910B/310B) or cast the feature map")
        win = self._img2col_window("tik.load3dv1", pad, l1_h, l1_w, fetch_filter_w, fetch_filter_h, left_top_w,
                                   left_top_h, stride_w, stride_h, filter_w, filter_h, dilation_filter_w,
                                   dilation_filter_h)
        pads, h, w, fw, fh, lw, lh, sw, sh, kw, kh, dw, dh, rs, m0 = win
        c1 = self._int_arg(c1_index, "c1_index", 0, 4095)
        jump = self._cube_imm(jump_offset, "jump_offset", 1, 127,
                              tik_takes_values=RUN_TIME_ARGS_NEEDED_AT_TRACE["jump_offset"])
        mode = self._cube_imm(repeat_mode, "repeat_mode", 0, 1,
                              tik_takes_values=RUN_TIME_ARGS_NEEDED_AT_TRACE["repeat_mode"])
        rep = self._int_arg(repeat_time, "repeat_time", 1, 255)
        csize = self._cube_imm(_csize, "_csize", 0, 1)
        c0 = d.dt.c0
        small = csize == 1
        if small and d.dt.bits != 16:
            raise self._error("_csize=1 (4-channel C04 maps) needs 16-bit data", operand="_csize", value=1,
                              hint="pass _csize=0 for 8-bit feature maps")
        origin = self._img2col_runtime_checks("tik.load3dv1", rs, fw, fh, lw, lh)
        m0 = origin if m0 is None else m0                # an expression where the origin is TIK values
        for name, v, lo, hi in (("c1_index", c1, 0, 4095), ("repeat_time", rep, 1, 255)):
            if not isinstance(v, int):
                self._emit("assert_in_range", P.cast(v, P.I64), lo, hi, what=f"{name} of tik.load3dv1")
        cc = 4 if small else c0
        taps = kh * kw
        k_first = imul(iadd(iadd(imul(c1, taps), imul(fh, kw)), fw), cc)
        if isinstance(k_first, int) and k_first % c0:
            raise self._error(f"the C04 walk must start at a whole fractal: (fetch_filter_h*filter_w + "
                              f"fetch_filter_w) * 4 = {k_first} is not a multiple of {c0}", operand="fetch_filter_w",
                              value=(fh, fw), limit=f"multiple of {c0 // 4} kernel positions",
                              hint=f"pass fetch_filter_h/fetch_filter_w with fetch_filter_h*filter_w + fetch_filter_w "
                                   f"a multiple of {c0 // 4} (the kernel position of a fractal's first row)")
        if not isinstance(k_first, int) and small:
            self._emit("assert_multiple", k_first, c0,
                       what="(fetch_filter_h*filter_w + fetch_filter_w) * 4 of tik.load3dv1 =",
                       rule=f"a multiple of {c0} (the C04 walk must start at a whole fractal)",
                       operand="fetch_filter_w",
                       hint=f"start the C04 walk at a filter tap whose (fetch_filter_h*filter_w + fetch_filter_w) * 4 "
                            f"is a multiple of {c0}")
        k_ext, m_ext = (imul(rep, c0), 16) if mode == 0 else (c0, imul(rep, 16))
        if small:
            channels = 4
        else:
            channels = imul(iadd(idiv(iadd(k_first, iadd(k_ext, -1)), taps * c0), 1), c0)
        # Named choice L0B_LOAD3DV1_IS_ZN_OF_X (tik_cube.md): into L0B the im2col block becomes the mmad
        # operand B = X (K = the pixels), i.e. X^T written in L0B's geometry (pto.img2col transpose): fractal
        # (pixel group, K block) at (group*dst_stride + K block)*512, groups jump_offset fractals apart
        l0b = d.space == "l0b"
        if l0b and d.dt.bits != 16:
            raise self._error(f"load3dv1 of {d.tensor.dtype} into L0B is not modelled: L0B receives the im2col block "
                              f"transposed (B = X), and only 16-bit data, whose 16 x 16 fractals stay square, "
                              f"has a public definition of that", cls=UnsupportedOp, operand="dst",
                              value=d.tensor.dtype, hint="load 8-bit feature maps into L0A (or UB) instead")
        outer = "col" if not l0b and d.space == "l0a" and l0a_layout(platform.current_soc().profile) != "Zz" \
            else "row"
        if outer == "row":
            ds = rep if mode == 0 else jump
            dst_bytes = imul(rep, 512) if mode == 0 else imul(iadd(imul(iadd(rep, -1), jump), 1), 512)
        else:
            ds = 1 if mode == 0 else rep
            dst_bytes = imul(rep, 512)
        d.check_aligned(512 if d.space != "ub" else 32)
        s.check_aligned(32)
        if isinstance(dst_bytes, int):
            d.check_extent(dst_bytes, f"{rep} fractal(s)")
            dst_access = d.write(dst_bytes)
        else:                                            # repeat_time known when it runs: checked then
            dst_access = self._vec_access(d, idiv(dst_bytes, d.dt.bits // 8), True)
        pv = self._cube_pad_imm(pad_value, d.dt)
        self._emit("img2col", s.ptr, d.ptr, h, w, channels, k_first, k_ext, m0, m_ext, ds,
                   stride=(sh, sw), filter=(kh, kw), dilation=(dh, dw), pad=pads, pad_value=(pv,),
                   transpose=True if l0b else None, footprint=[s.read(None), dst_access])

    @tik_api("load3dv2")
    @refusal_records_nothing
    def load3dv2(self, dst, src, pad_list, l1_h, l1_w, channel_size, k_extension, m_extension, k_start_pt,
                 m_start_pt, stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h,
                 en_transpose=False, en_small_k=False, pad_value=None):
        """An ``m_extension x k_extension`` block of the im2col matrix (tik_api.md §7.5, load3dv2)."""
        d = self._operand(dst, "dst", spaces=("l0a", "l0b", "ub"))
        s = self._operand(src, "src", spaces=("l1",))
        self._require_support("tik.load3dv2", d.tensor.dtype)
        self._cube_same_dtype(s, d)
        # TIK values allowed (FMATRIX_PADS_AT_RUN_TIME; CANN TIK's _load3dv1_load3dv2_col2img_check takes int,
        # Scalar or Expr): they were refused as "must be an immediate Python int"
        pads = self._fmatrix_pads(pad_list, "tik.load3dv2", name="pad_list")
        # TIK values: range-checked when they run under their TIK names (pto.img2col then validates the map and
        # would name its own operands %fm_h, %k_ext, ...)
        h = self._int_arg(l1_h, "l1_h", 1, legacy_cube.FMATRIX_MAX_HW, run_time_api="tik.load3dv2")
        w = self._int_arg(l1_w, "l1_w", 1, legacy_cube.FMATRIX_MAX_HW, run_time_api="tik.load3dv2")
        # a TIK value: checked against TIK's channel rule when the instruction runs (`_load3dv2_channel_size_at_run`)
        ch = self._int_arg(channel_size, "channel_size", 1, 63 * 1024, run_time_api="tik.load3dv2")
        ke = self._int_arg(k_extension, "k_extension", 1, U16, run_time_api="tik.load3dv2")
        me = self._int_arg(m_extension, "m_extension", 1, U16, run_time_api="tik.load3dv2")
        ks = self._int_arg(k_start_pt, "k_start_pt", 0, U16, run_time_api="tik.load3dv2")
        ms = self._int_arg(m_start_pt, "m_start_pt", 0, U16)
        if not isinstance(ms, int):     # pto.img2col also takes the negative rows of load3dv1 walks: check here
            self._emit("assert_in_range", P.cast(ms, P.I64), 0, U16, what="m_start_pt of tik.load3dv2")
        sw, sh, kw, kh, dw, dh = self._img2col_geometry(stride_w, stride_h, filter_w, filter_h, dilation_filter_w,
                                                        dilation_filter_h)
        en_transpose = self._bool_arg(en_transpose, "en_transpose")
        if en_transpose and d.space != "l0a":
            raise self._error(f"load3dv2 en_transpose into {d.space.upper()} is not modelled: the public definition "
                              f"(Ascend C LoadData3DParamsV2.enTranspose, asc-devkit load_data_l12l0: transpose the "
                              f"whole block and each fractal) covers the L0A path only, and no source says what it "
                              f"does to a block that L0B already receives as the mmad operand B = X",
                              operand="en_transpose", value=d.tensor.scope, cls=UnsupportedOp,
                              hint="pass en_transpose=False (into L0B the block already is the mmad operand B = X, "
                                   "L0B_LOAD3DV2_IS_ZN_OF_X), or transpose into L0A")
        if en_transpose and d.dt.bits != 16:
            raise self._error(f"load3dv2 en_transpose of {d.tensor.dtype} is not modelled: only 16-bit data has a "
                              f"textual definition (its 16 x 16 fractals stay square); for {d.dt.bits}-bit data the "
                              f"16 x {d.dt.c0} fractals of X^T would have to be regrouped, and Ascend C's "
                              f"enTranspose page shows that only in figures", operand="en_transpose",
                              value=d.tensor.dtype, cls=UnsupportedOp, limit="float16 (16-bit types)",
                              hint="load the block untransposed (en_transpose=False) and use it as it is, or keep "
                                   "the data 16-bit for the transposed load")
        # Named choice L0B_LOAD3DV2_IS_ZN_OF_X (tik_cube.md): into L0B the block becomes the mmad operand B = X (Zn of X,
        # each fractal transposed: pto.img2col transpose), as load3dv1's (L0B_LOAD3DV1_IS_ZN_OF_X) -- Ascend C's
        # matmul loads its B matrix into L0B with an untransposed Load3Dv2 (load_to_l0b_load3dv2.h)
        l0b = d.space == "l0b"
        if l0b and d.dt.bits != 16:
            raise self._error(f"load3dv2 of {d.tensor.dtype} into L0B is not modelled: L0B receives the block as the "
                              f"mmad operand B = X, and only 16-bit data, whose 16 x 16 fractals stay square, has a "
                              f"public definition of that ({d.dt.bits}-bit L0B fractals are "
                              f"{'32 x 16' if d.dt.bits == 8 else '8 x 16'}, the im2col block's 16 x {d.dt.c0}: no "
                              f"source says how they are regrouped)", cls=UnsupportedOp, operand="dst",
                              value=d.tensor.dtype, limit="float16 (16-bit types)",
                              hint="load the block into L0A (it is the mmad operand A = X there), or into UB")
        c0 = d.dt.c0
        if en_small_k and isinstance(ch, int) and ch != 4:
            raise self._error(f"en_small_k packs 4-channel (C04) maps: channel_size must be 4, got {ch}",
                              operand="en_small_k", value=ch, limit="channel_size 4",
                              hint="pass en_small_k=False, or load a 4-channel (C04) map with channel_size=4")
        if isinstance(ch, int):
            self._load3dv2_channel_size(ch, d)
        else:
            self._load3dv2_channel_size_at_run(ch, d, bool(en_small_k))
        rounded = (("k_extension", c0), ("m_extension", 16)) if LOAD3DV2_EXTENSIONS_ROUNDED_UP else ()
        for name, v, unit in (("k_extension", ke, c0), ("k_start_pt", ks, c0), ("m_extension", me, 16),
                              ("m_start_pt", ms, 16)):      # TIK _load3dv2_check: "should be multiple of 16"
            if (name, unit) in rounded:
                continue
            if isinstance(v, int) and v % unit:
                raise self._error(f"{name} = {v} must be a multiple of {unit}", operand=name, value=v,
                                  limit=f"multiple of {unit}",
                                  hint=f"pass {name} as a multiple of {unit} (whole fractals), e.g. "
                                       f"{name}={-(-v // unit) * unit}")
            if not isinstance(v, int):
                self._emit("assert_multiple", v, unit, what=f"{name} of tik.load3dv2 =",
                           rule=f"a multiple of {unit} (whole fractals)",
                           operand=name,
                           hint=f"make {name} a multiple of {unit} (it counts elements of whole {unit}-element "
                                f"fractals)")
        self._load3dv2_window_fits(h, w, pads, (kh, kw), (dh, dw))
        self._load3dv2_block_inside(h, w, pads, (kh, kw), (dh, dw), (sh, sw), ch, ks, ke, ms, me, d.dt)
        if rounded:                     # whole fractals (LOAD3DV2_EXTENSIONS_ROUNDED_UP)
            ke = -(-ke // c0) * c0 if isinstance(ke, int) else imul(idiv(iadd(ke, c0 - 1), c0), c0)
            me = -(-me // 16) * 16 if isinstance(me, int) else imul(idiv(iadd(me, 15), 16), 16)
        outer = "col" if d.space == "l0b" or (d.space == "l0a" and l0a_layout(platform.current_soc().profile)
                                                != "Zz") else "row"
        if en_transpose or l0b:     # written as X^T (k_extension x m_extension), fractal rows along K; into Nz
            ds = idiv(me, 16) if outer == "row" else idiv(ke, c0)     # (L0B): the K fractals of one M block
        else:
            ds = idiv(ke, c0) if outer == "row" else idiv(me, 16)
        d.check_aligned(512 if d.space != "ub" else 32)
        s.check_aligned(32)
        if isinstance(ke, int) and isinstance(me, int):
            nbytes = d.dt.nbytes(ke * me)
            d.check_extent(nbytes, f"a {me} x {ke} block")
            dst_access = d.write(nbytes)
        else:                                            # extents known when it runs: checked then
            dst_access = self._vec_access(d, imul(ke, me), True)
        pv = self._cube_pad_imm(0 if pad_value is None else pad_value, d.dt)
        self._emit("img2col", s.ptr, d.ptr, h, w, ch, ks, ke, ms, me, ds, stride=(sh, sw), filter=(kh, kw),
                   dilation=(dh, dw), pad=pads, pad_value=(pv,), transpose=True if en_transpose or l0b else None,
                   footprint=[s.read(None), dst_access])

    def _load3dv2_channel_size(self, ch: int, d):
        """``channel_size`` against TIK's allowed counts (`legacy_cube.IMG2COL_CHANNEL_REMAINDERS`): a count TIK
        takes but the simulator does not model (`legacy_cube.IMG2COL_MODELLED_CHANNELS`) is `UnsupportedOp`."""
        dt = d.dt
        status = legacy_cube.img2col_channel_status(dt, ch)
        if status == "ok":
            return
        c0, rems = dt.c0, legacy_cube.IMG2COL_CHANNEL_REMAINDERS.get(dt.bits, (0,))
        allowed = f"channel_size mod {c0} in {{{', '.join(map(str, rems))}}}"
        whole = -(-ch // c0) * c0
        if status == "illegal":
            raise self._error(f"channel_size {ch} is not a load3dv2 channel count of {d.tensor.dtype} maps: CANN "
                              f"TIK takes {allowed} (mod {c0} = {ch % c0} here)", operand="channel_size", value=ch,
                              limit=allowed,
                              hint=f"store the map as [C1, H, W, {c0}] and pass channel_size = C1*{c0} (here {whole}, "
                                   f"the extra channels zero)" + (", or 4 for a 4-channel (C04) float16 map"
                                                                   if dt.bits == 16 else ""))
        raise self._error(f"channel_size {ch} ({d.tensor.dtype}, mod {c0} = {ch % c0}) is a load3dv2 channel count "
                          f"CANN TIK accepts ({allowed}: check_load3dv2_channel_size; Ascend C "
                          f"LoadData3DParamsV2.channelSize), but the simulator does not model it: no public source "
                          f"defines how such a map lies in L1 and which K columns it fills", operand="channel_size",
                          value=ch, cls=UnsupportedOp, limit=f"a multiple of {c0}" + (" or 4" if dt.bits == 16 else ""),
                          hint=f"pad the map's channels with zeros to {whole} (a [C1, H, W, {c0}] map) and pass "
                               f"channel_size={whole}; the zero channels add nothing to mmad when their weight rows "
                               f"are zero too")

    def _load3dv2_channel_size_at_run(self, ch, d, small_k: bool) -> None:
        """A TIK-valued ``channel_size`` (CANN TIK accepts int, Scalar or Expr: ``_load3dv2_check``; its debugger
        applies ``check_load3dv2_channel_size`` to the value when the instruction runs): the checks
        `_load3dv2_channel_size` makes at the call for ints, made when the instruction runs, with the same error
        classes -- a count outside TIK's rule stops the run as an `IllegalOperand` (``pto.assert_in_range``), a
        count TIK takes but the simulator does not model as an `UnsupportedOp` (``pto.unmodelled``)."""
        dt = d.dt
        c0, rems = dt.c0, legacy_cube.IMG2COL_CHANNEL_REMAINDERS.get(dt.bits, (0,))
        rule = f"channel_size mod {c0} in {{{', '.join(map(str, rems))}}}"
        v = P.cast(ch, P.I64)
        rem = irem(v, c0)
        if small_k:
            self._emit("assert_in_range", v, 4, 4, what="channel_size of tik.load3dv2 with en_small_k (the 4-channel "
                                                        "C04 packing)",
                       hint="pass en_small_k=False, or load a 4-channel (C04) map with channel_size = 4")
        with self._cube_if(P.all_(*(P.cmp("ne", rem, r) for r in rems))):
            # reached only when the remainder is none of rems (0 is one of them): always refused, naming the count
            self._emit("assert_multiple", v, c0, what="channel_size of tik.load3dv2 =",
                       rule=f"a channel count CANN TIK takes ({dt.tik_name} maps: {rule}, check_load3dv2_channel_size)",
                       operand="channel_size",
                       hint=f"store the map as [C1, H, W, {c0}] and make channel_size C1*{c0} (the extra channels "
                            f"zero)" + (", or 4 for a 4-channel (C04) float16 map" if dt.bits == 16 else ""))
        modelled = legacy_cube.IMG2COL_MODELLED_CHANNELS.get(dt.bits, ())
        with self._cube_if(P.all_(P.cmp("ne", rem, 0), *(P.cmp("ne", v, m) for m in modelled))):
            self._emit("unmodelled", what=f"tik.load3dv2 with a run-time channel_size that is not a multiple of {c0} "
                                          f"({dt.tik_name} map)",
                       why=f"CANN TIK accepts it ({rule}: check_load3dv2_channel_size; Ascend C "
                           f"LoadData3DParamsV2.channelSize), but no public source defines how such a map lies in L1 "
                           f"and which K columns it fills",
                       hint=f"pad the map's channels with zeros to the next multiple of {c0} (a [C1, H, W, {c0}] map) "
                            f"and pass that channel_size; the zero channels add nothing to mmad when their weight "
                            f"rows are zero too")

    def _load3dv2_window_fits(self, h, w, pads, filt, dil) -> None:
        """CANN TIK's ``check_dilation_filter_size`` (common_util.py; ``load3dv2`` calls it with the values it knows
        at the call, its debugger's ``Load3DV2.eval_`` again when the instruction runs, before the block rows):
        the dilated filter ``(filter - 1)*dilation + 1`` must fit the padded map ``l1 + pad_0 + pad_1``, per
        dimension. Ints are refused at the call (they were refused only when the kernel ran, by ``pto.img2col``);
        a TIK-valued size or pad is asserted when the instruction runs, so that the row check after it never runs
        with ``Ho*Wo <= 0`` (it blamed m_extension for a filter larger than the map, review413)."""
        (kh, kw), (dh, dw) = filt, dil
        pl, pr, pt, pb = pads
        fix = "use a map (with its padding) at least as large as the dilated filter (CANN TIK's " \
              "check_dilation_filter_size), or a smaller filter or dilation"
        for name, size, p0, p1, span, dim, fname, dname, side in (
                ("l1_h", h, pt, pb, dh * (kh - 1) + 1, "height", "filter_h", "dilation_filter_h", "top + bottom"),
                ("l1_w", w, pl, pr, dw * (kw - 1) + 1, "width", "filter_w", "dilation_filter_w", "left + right")):
            if all(isinstance(v, int) for v in (size, p0, p1)):
                if size + p0 + p1 < span:
                    raise self._error(f"the dilated filter {dim} ({fname} - 1)*{dname} + 1 = {span} is larger than "
                                      f"the padded map {dim} {name} + pad ({side}) = {size} + {p0 + p1} = "
                                      f"{size + p0 + p1}", operand=name, value=size,
                                      limit=f"{name} + pad >= {span}", hint=fix)
            else:
                self._emit("assert_in_range", iadd(size, iadd(p0, p1)), span,
                           iadd(legacy_cube.FMATRIX_MAX_HW, iadd(p0, p1)),
                           what=f"{name} + its padding (at least the dilated filter {dim}, "
                                f"(filter - 1)*dilation + 1 = {span}) of tik.load3dv2", hint=fix)

    def _load3dv2_block_inside(self, h, w, pads, filt, dil, stride, ch, ks, ke, ms, me, dt):
        """CANN TIK's block checks (`LOAD3DV2_BLOCK_INSIDE_MATRIX`): ``m_start_pt + m_extension`` rounded up to 16
        at most ``Ho*Wo``, ``k_start_pt + k_extension`` rounded up to 32 bytes at most
        ``channel_size*filter_h*filter_w``; at the call for ints, when the instruction runs otherwise."""
        if not LOAD3DV2_BLOCK_INSIDE_MATRIX:
            return
        (kh, kw), (dh, dw), (sh, sw) = filt, dil, stride
        pl, pr, pt, pb = pads
        ho = iadd(idiv(isub(iadd(h, iadd(pt, pb)), dh * (kh - 1) + 1), sh), 1)
        wo = iadd(idiv(isub(iadd(w, iadd(pl, pr)), dw * (kw - 1) + 1), sw), 1)
        need_m = imul(idiv(iadd(iadd(ms, me), 15), 16), 16)
        size = dt.bits // 8
        k_total = imul(ch, kh * kw)             # an expression for a TIK-valued channel_size
        need_k = idiv(imul(idiv(iadd(imul(iadd(ks, ke), size), 31), 32), 32), size)
        if all(isinstance(v, int) for v in (ho, wo, need_m)):
            if ho >= 1 and wo >= 1 and need_m > ho * wo:     # (a window that does not fit: pto.img2col says so)
                raise self._error(
                    f"m_start_pt + m_extension = {ms} + {me} (rounded up to 16: {need_m}) is past the {ho} x {wo} = "
                    f"{ho * wo} rows (Ho*Wo) of the im2col matrix", operand="m_extension", value=me,
                    limit=f"round16(m_start_pt + m_extension) <= Ho*Wo = {ho * wo}",
                    hint=(f"end the block by row {ho * wo // 16 * 16} (CANN TIK's check_load3dv2_m_extension "
                          f"refuses blocks past Ho*Wo), or add bottom padding (pad_list[3]) so that Ho*Wo covers the "
                          f"rows you load") if ho * wo >= 16 else
                         (f"Ho*Wo = {ho * wo} is less than one 16-row fractal, so no block fits (CANN TIK's "
                          f"check_load3dv2_m_extension refuses blocks past Ho*Wo): add bottom padding (pad_list[3]) "
                          f"so that Ho*Wo reaches 16"))
        else:       # (the window fits the padded map: `_load3dv2_window_fits` ran first, as in TIK)
            self._emit("assert_in_range", need_m, 0, imul(ho, wo),
                       what="m_start_pt + m_extension rounded up to 16 (at most Ho*Wo) of tik.load3dv2",
                       hint="load fewer rows (m_extension) or start earlier (m_start_pt); the last Ho*Wo mod 16 "
                            "rows need bottom padding (tik_cube.md, load3dv2)")
        if isinstance(need_k, int) and isinstance(k_total, int):
            if need_k > k_total:
                raise self._error(
                    f"k_start_pt + k_extension = {ks} + {ke} (rounded up to 32 bytes: {need_k}) is past the "
                    f"channel_size*filter_h*filter_w = {ch}*{kh}*{kw} = {k_total} columns of the im2col matrix",
                    operand="k_extension", value=ke,
                    limit=f"round32B(k_start_pt + k_extension) <= channel_size*filter_h*filter_w = {k_total}",
                    hint=(f"end the block by column {k_total // dt.c0 * dt.c0} (CANN TIK's "
                          f"check_load3dv2_k_extension refuses blocks past channel_size*filter_h*filter_w)")
                    if k_total >= dt.c0 else
                         (f"channel_size*filter_h*filter_w = {k_total} is less than one 32-byte fractal column group "
                          f"({dt.c0} columns), so no block fits (CANN TIK's check_load3dv2_k_extension): pass "
                          f"channel_size = {dt.c0} (a [C1, H, W, {dt.c0}] map, the extra channels zero) or a bigger "
                          f"filter"))
        else:
            self._emit("assert_in_range", need_k, 0, k_total,
                       what="k_start_pt + k_extension rounded up to 32 bytes (at most "
                            "channel_size*filter_h*filter_w) of tik.load3dv2",
                       hint="load fewer columns (k_extension) or start earlier (k_start_pt): the block must end "
                            "inside the channel_size*filter_h*filter_w columns of the im2col matrix")

    def _cube_same_dtype(self, s, d):
        if s.dt is not d.dt:
            raise self._error(f"src ({s.tensor.dtype}) and dst ({d.tensor.dtype}) dtypes differ", operand="dst",
                              value=d.tensor.dtype, limit=s.tensor.dtype,
                              hint="use src and dst tensors of one dtype")

    def _cube_pad_imm(self, v, dt):
        v = py_number(v)         # a numpy scalar is its Python number (keeps -0.0's sign)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._error(f"pad_value must be a number, got {v!r}", operand="pad_value", value=repr(v),
                              hint="pass pad_value as an int or float immediate (None: 0)")
        if dt.is_int:
            if not float(v).is_integer() or not dt.min <= v <= dt.max:
                raise self._error(f"pad_value {v!r} is not a {dt.tik_name} value", operand="pad_value", value=v,
                                  limit=f"integer in [{dt.min}, {dt.max}]",
                                  hint=f"pass pad_value as an integer in [{dt.min}, {dt.max}] (the feature map's dtype)")
            return int(v)
        return float_immediate(v, dt)

    # ------------------------------------------------------------------ broadcast / col2img
    @tik_api("broadcast_ub_to_l0c")
    @refusal_records_nothing
    def broadcast_ub_to_l0c(self, dst, src, nburst, burst_len, *strides, src_gap=None, dst_gap=None):
        """Each 16-element UB row fills all 16 rows of one L0C fractal (tik_api.md §7.6);
        ``strides = (src_gap, dst_gap)``, positional (§7.6) or by their Appendix C names."""
        d = self._operand(dst, "dst", spaces=("l0c",))
        s = self._operand(src, "src", spaces=("ub",))
        self._require_support("tik.broadcast_ub_to_l0c", d.tensor.dtype)
        self._cube_same_dtype(s, d)
        named = [(nm, v) for nm, v in (("src_gap", src_gap), ("dst_gap", dst_gap)) if v is not None]
        for nm, _ in named:
            if ("src_gap", "dst_gap").index(nm) < len(strides):
                raise self._error(f"broadcast_ub_to_l0c got {nm} both by position and by keyword", operand=nm,
                                  hint="pass (src_gap, dst_gap) either after burst_len or as keywords, once")
        strides = tuple(strides) + tuple(v for _, v in named)
        if named and len(strides) != 2:
            missing = [nm for nm in ("src_gap", "dst_gap")[len(strides) - len(named):] if nm not in dict(named)]
            raise self._error(f"broadcast_ub_to_l0c needs {' and '.join(missing)} too (got "
                              f"{', '.join(nm for nm, _ in named)} by keyword)", operand=missing[0],
                              hint="pass both gaps: src_gap= and dst_gap= (32-byte blocks and fractals)")
        if len(strides) != 2:
            raise self._error(f"broadcast_ub_to_l0c takes (src_gap, dst_gap) after burst_len, got {len(strides)} "
                              f"value(s)", operand="strides", value=len(strides), limit="2 values",
                              hint="pass both gaps after burst_len: broadcast_ub_to_l0c(dst, src, nburst, burst_len, "
                                   "src_gap, dst_gap)")
        n, bl, sg, dg = (self._int_arg(v, nm, lo, 255, run_time_api="tik.broadcast_ub_to_l0c")
                         for v, nm, lo in ((nburst, "nburst", 1), (burst_len, "burst_len", 1),
                                           (strides[0], "src_gap", 0), (strides[1], "dst_gap", 0)))
        d.check_aligned(l0c_align(d.dt))
        s.check_aligned(32)
        size = d.dt.bits // 8
        se = _ext(n, _mul(bl, 16 * size), _add(_mul(bl, 16 * size), _mul(sg, 32)))
        de = _ext(n, _mul(bl, 256 * size), _mul(_add(bl, dg), 256 * size))
        s.check_extent(se, "the broadcast rows")
        d.check_extent(de, "the broadcast fractals")
        self._emit("broadcast_ub_to_cc", s.ptr, d.ptr, n, bl, sg, dg, footprint=[s.read(se), d.write(de)])

    @tik_api("mmad_broadcast")
    @refusal_records_nothing
    def mmad_broadcast(self, dst, src, repeat_mode, nburst, burst_repeat, dst_gap, src_gap):
        """16-element UB rows broadcast to whole L0C fractals (tik_api.md §7.7; ``broadcast_ub_to_cc``).

        Burst ``b`` writes ``burst_repeat`` fractals (then skips ``dst_gap`` fractals); each fractal is
        one 16-element source row repeated over its 16 rows. ``repeat_mode=0``: the burst reads
        ``burst_repeat`` consecutive rows, one per fractal; ``repeat_mode=1``: it reads one row and
        repeats it into all its fractals. ``src_gap`` 32-byte blocks follow each burst's rows.
        dst/src: f16/f16, f32/f32, s32/s32 or f32/f16 (widened exactly)."""
        d = self._operand(dst, "dst", spaces=("l0c",))
        s = self._operand(src, "src", spaces=("ub", "l1"))
        if s.space == "l1":
            raise self._error("mmad_broadcast from L1 (broadcast_cbuf_to_cc, v200 AI Core) is not modelled: no "
                              "public source defines its source units and gaps", operand="src", value=s.tensor.scope,
                              cls=UnsupportedOp, hint="move the rows to UB (data_move L1 -> UB) and broadcast "
                                                      "from there")
        self._require_support("tik.mmad_broadcast", codes(d.dt, s.dt))
        target = platform.current_soc().profile
        if not legacy_cube.available("broadcast_ub_to_cc", target):
            raise self._error(f"mmad_broadcast needs the UB -> L0C broadcast instruction, which "
                              f"{platform.current_soc().soc_version} does not have", operand="dst",
                              value=platform.current_soc().soc_version, cls=UnsupportedOp,
                              limit="Ascend310/910, Ascend310P/610 class chips",
                              hint="initialise L0C through a mmad with a bias (or fixpipe) instead")
        if (s.dt.name, d.dt.name) not in legacy_cube.BROADCAST_TYPES:
            raise self._error(f"src {s.tensor.dtype} -> dst {d.tensor.dtype} is not a broadcast conversion",
                              operand="dst", value=f"{s.tensor.dtype}->{d.tensor.dtype}",
                              limit="same type (float16, float32, int32) or float16 -> float32",
                              hint="declare dst with the src dtype (or a float32 dst for float16 rows)")
        rm = self._cube_imm(repeat_mode, "repeat_mode", 0, 1,
                            hint="pass 0 (one row per fractal) or 1 (one row per burst) as a Python int",
                            tik_takes_values=RUN_TIME_ARGS_NEEDED_AT_TRACE["mmad_broadcast repeat_mode"])
        n, br, dg, sg = (self._int_arg(v, nm, lo, 255, run_time_api="tik.mmad_broadcast")
                         for v, nm, lo in ((nburst, "nburst", 1), (burst_repeat, "burst_repeat", 1),
                                           (dst_gap, "dst_gap", 0), (src_gap, "src_gap", 0)))
        d.check_aligned(l0c_align(d.dt))
        s.check_aligned(32)
        row = 16 * (s.dt.bits // 8)
        frac = 256 * (d.dt.bits // 8)
        burst_rows = row if rm else _mul(br, row)
        se = _ext(n, burst_rows, _add(burst_rows, _mul(sg, 32)))
        de = _ext(n, _mul(br, frac), _mul(_add(br, dg), frac))
        s.check_extent(se, "the broadcast rows")
        d.check_extent(de, "the broadcast fractals")
        self._emit("broadcast_ub_to_cc", s.ptr, d.ptr, n, br, sg, dg, repeat=True if rm else None,
                   footprint=[s.read(se), d.write(de)])

    @tik_api("col2img")
    @refusal_records_nothing
    def col2img(self, dst, src, pad, l1_h, l1_w, fetch_filter_w, fetch_filter_h, left_top_w, left_top_h,
                stride_w, stride_h, filter_w, filter_h, dilation_filter_w, dilation_filter_h, repeat_time):
        """Scatter-add im2col fractals of one kernel tap back into a UB feature map (tik_api.md §7.7)."""
        d = self._operand(dst, "dst", spaces=("ub",))
        s = self._operand(src, "src", spaces=("ub",))
        self._require_support("tik.col2img", d.tensor.dtype)
        self._cube_same_dtype(s, d)
        win = self._img2col_window("tik.col2img", pad, l1_h, l1_w, fetch_filter_w, fetch_filter_h, left_top_w,
                                   left_top_h, stride_w, stride_h, filter_w, filter_h, dilation_filter_w,
                                   dilation_filter_h)
        pads, h, w, fw, fh, lw, lh, sw, sh, kw, kh, dw, dh, rs, m0 = win
        rep = self._int_arg(repeat_time, "repeat_time", 1, 255)
        s.check_aligned(32)
        d.check_aligned(32)
        se = d.dt.nbytes(rep * 256) if isinstance(rep, int) else None
        fhs = [fh] if isinstance(fh, int) else range(kh)
        fws = [fw] if isinstance(fw, int) else range(kw)
        walked = m0 is not None and isinstance(rep, int) and len(fhs) * len(fws) <= 1024
        if walked:
            # COL2IMG_DST_EXTENT_IS_WALK (tik_cube.md): dst holds the pixels the walk touches (the most
            # over the filter for a run-time fetch position)
            de = d.dt.nbytes(max(legacy_cube.col2img_dst_elements(rs, a, b, m0, rep) for a in fhs for b in fws))
        elif isinstance(h, int) and isinstance(w, int):
            de = d.dt.nbytes(h * w * 16)
        else:
            de = imul(imul(h, w), 16 * (d.dt.bits // 8))
        s.check_extent(se, f"{rep} fractal(s)")
        d.check_extent(de, f"the pixels {rep} fractal(s) add into in the {h} x {w} x 16 map" if walked else
                       f"the {_show(h)} x {_show(w)} x 16 map",
                       hint="make dst hold the map rows the walk reaches (repeat_time x 16 positions wrap "
                            "to the next row after Wo)" if walked else "")
        self._emit("col2img", s.ptr, d.ptr, h, w, fw, fh, lw, lh, rep, stride=(sh, sw), filter=(kh, kw),
                   dilation=(dh, dw), pad=pads, footprint=[s.read(se), d.read(de), d.write(de)])


class _RuntimeRaster(NamedTuple):
    """The window walk over a map whose height, width or pads are TIK values: the fields `Raster` has,
    with ``h``, ``w``, the pads and the output width ``wo`` as ints or IR expressions (``pto.img2col``
    builds and checks the real `Raster` when it runs)."""

    h: object
    w: object
    sh: int
    sw: int
    kh: int
    kw: int
    dh: int
    dw: int
    pl: object
    pr: object
    pt: object
    pb: object
    wo: object


def _runtime_raster(h, w, stride, filt, dil, pads) -> _RuntimeRaster:
    (sh, sw), (kh, kw), (dh, dw), (pl, pr, pt, pb) = stride, filt, dil, pads
    wo = iadd(idiv(iadd(iadd(w, iadd(pl, pr)), -(dw * (kw - 1)) - 1), sw), 1)     # Raster.wo
    return _RuntimeRaster(h, w, sh, sw, kh, kw, dh, dw, pl, pr, pt, pb, wo)


def _add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return P.binop("add", P.cast(P.as_expr(a, P.I64), P.I64), P.cast(P.as_expr(b, P.I64), P.I64))


def _show(v, name: str = ""):
    """An int as itself; a TIK value as its name (``name``) or "a run-time value"."""
    return v if isinstance(v, int) else (name or "a run-time value")


__all__ = ["CubeMoveAPI", "CONV_RELU_MODES"]
