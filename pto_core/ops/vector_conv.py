"""``pto.ub.vconv``: element type conversion over repeats (TIK ``vconv`` / ``vec_conv``).

``PAR = 256 / max(src, dst size)``; the narrower operand touches fewer blocks per repeat
(f32 -> f16: src 8 blocks, dst 4; hence the default repeat strides 8 and 4).

The conversion is named like the CANN table entry ``"<src>2<dst><r>"`` and must be in the
chip's vconv list (`pto_core.vector_isa`). ``round`` is the suffix letter:

====  ===============================  ==========================
r     nearest, ties to even            ``ROUND_R``
a     nearest, ties away from zero     ``ROUND_A``
f     toward -inf                      ``ROUND_F``
c     toward +inf                      ``ROUND_C``
z     toward zero                      ``ROUND_Z``
o     to odd (truncate, LSB |= inexact) ``ROUND_O``
====  ===============================  ==========================

Omitted (TIK ``''``/``'none'``) means nearest-even wherever the conversion is inexact
(Ascend C ``CAST_NONE``: "behaves as CAST_RINT when precision is lost"), exact otherwise.

Results:

* float -> float: one rounding from the exact input (`pto_core.numerics.float_to`); f32 ->
  f32 with a rounding mode (910B-class) rounds to an integral value in f32
  (`pto_core.numerics.round_to_integral`).
* float -> int: rounding per mode, saturating to the integer range, NaN -> 0
  (`pto_core.numerics.float_to_int`).
* int -> float: exact, then one rounding (`pto_core.numerics.int_to_float`).
* int -> int widening that keeps every value (u8->u16, s8->s16, u16->u32, s16->s32, s32->s64):
  exact.
* int -> int narrowing (s32->s16, s64->s32, s16->s8/u8): saturating (choice: the vconv
  documentation says float->int saturates; the int narrowing behaviour is not documented).
  The other narrowing or sign-changing rows a chip lists (`UNDOCUMENTED`: BS9SX1AA vector
  core) raise `UnsupportedOp`: whether they saturate, wrap or sign-extend is not documented.
* ``deq`` (s32 -> f16 with ``deqscale``): ``f16(src * f16(deqscale))``, the product exact
  in f64 and rounded once to nearest-even.
* Float destinations follow the machine overflow mode (``saturation``: overflow and
  +/-inf clamp to the largest finite value, NaN -> 0; ``inf_nan``: IEEE).
"""
from __future__ import annotations

import numpy as np

from .. import numerics, vector_isa
from ..dtypes import DType
from ..errors import IllegalOperand, UnsupportedOp
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve

ROUND_LETTERS = ("r", "a", "f", "c", "z", "o")
#: TIK vconv / vec_conv ``round_mode`` names -> the ``round=`` letter (None: no clause), for the Fix of a TIK name
#: given to ``pto.ub.vconv(round=...)``; the facade's own table is ``tbe_compat.tik.vector_common.ROUND_MODES``
#: (a test keeps the two equal). h_user453: ``round="round"`` said only "not one of r, a, f, c, z, o".
TIK_ROUND_MODE_LETTERS = {"": None, "none": None, "round": "r", "floor": "f", "ceil": "c", "ceiling": "c",
                          "away-zero": "a", "to-zero": "z", "odd": "o"}
TIK_ROUND_MODE_HINTS = {
    name: (f"TIK's round_mode {name!r} is round=\"{letter}\"" if letter else
           f"TIK's round_mode {name!r} is no round clause: leave round= out (nearest even where inexact)")
    for name, letter in TIK_ROUND_MODE_LETTERS.items()}
ROUND_NAMES = {"r": "even", "a": "away", "f": "floor", "c": "ceil", "z": "zero", "o": "odd", None: "even"}
PTO_ROUND = {"r": "ROUND_R", "a": "ROUND_A", "f": "ROUND_F", "c": "ROUND_C", "z": "ROUND_Z", "o": "ROUND_O",
             None: "ROUND_R"}

EXPANDERS: dict = {}

_OPEN_INT = ("out-of-range values could saturate or wrap (two's complement) and no public source "
             "(TIK vconv page, tik_api.md §9.6, CANN ops) says which")
_OPEN_SIGN = ("negative values could saturate to 0 or sign-extend and wrap modulo 2^32 and no public source "
              "(TIK vconv page, tik_api.md §9.6, CANN ops) says which")
#: Conversion rows a chip's table lists whose results the public sources leave open: they raise
#: `UnsupportedOp` with the reason instead of a guess (migration_guide/tik_vector.md §4).
UNDOCUMENTED: dict = {"u162u8": _OPEN_INT, "u322u16": _OPEN_INT, "u322s16": _OPEN_INT, "s322u16": _OPEN_INT,
                      "s162u32": _OPEN_SIGN}


def conversion_code(src: DType, dst: DType, rnd, deq: bool) -> str:
    """CANN vconv table key: ``"f322f16o"``, ``"deq"``."""
    if deq:
        return "deq"
    return f"{src.name}2{dst.name}{rnd or ''}"


def _sat_mode(ctx) -> str:
    return "sat" if ctx.machine.overflow_mode == "saturation" else "nosat"


def convert(x: np.ndarray, src: DType, dst: DType, rnd, ctx, deqscale=None) -> np.ndarray:
    """Convert lane values ``x`` (storage of ``src``) to the storage of ``dst`` (see module doc)."""
    mode = ROUND_NAMES[rnd]
    if deqscale is not None:
        scale = np.float64(np.float16(deqscale))
        return ve.round_float(x.astype(np.float64) * scale, dst, ctx)
    if src.is_float and dst.is_float:
        if src is dst:
            return numerics.round_to_integral(x, mode)
        if dst.itemsize >= src.itemsize:
            wide = numerics.to_f32(x, src.name) if src.name == "bf16" else x.astype(np.float32)
            return ve.round_float(wide, dst, ctx)
        if mode == "even" and dst.name in ("f16", "bf16"):
            # numpy / ml_dtypes casts from f32 are single nearest-even roundings (numerics.md §4)
            return ve.round_float(x.astype(np.float32), dst, ctx)
        return numerics.float_to(x.astype(np.float32), dst.name, rounding=mode, sat=_sat_mode(ctx))
    if src.is_float:
        wide = numerics.to_f32(x, src.name) if src.name == "bf16" else x.astype(np.float32)
        return numerics.float_to_int(wide, dst.name, rounding=mode, saturate=True)
    if dst.is_float:
        return numerics.int_to_float(x, dst.name, rounding=mode, sat=_sat_mode(ctx))
    wide = x.astype(np.int64)
    return np.clip(wide, dst.min, dst.max).astype(dst.storage)


def _check(ctx_target, dst: DType, src: DType, rnd, deq: bool, op: str) -> None:
    if deq and not (src.name == "s32" and dst.name == "f16"):
        raise IllegalOperand(f"deqscale converts s32 to f16, got {src.name} -> {dst.name}", op=op,
                             operand="deqscale", value=f"{src.name}->{dst.name}", limit="s32 -> f16",
                             hint="use deqscale only for s32 -> f16; convert other types without deqscale")
    if deq and rnd is not None:
        raise IllegalOperand("deq conversion takes no rounding mode", op=op, operand="round", value=rnd,
                             hint="drop round= (the deq conversion rounds as the hardware does)")
    code = conversion_code(src, dst, rnd, deq)
    if src is dst and rnd is None:
        raise IllegalOperand(f"{src.name} -> {dst.name} without a rounding mode is not a conversion", op=op,
                             operand="round", hint="give round= r/a/f/c/z to round to integral values")
    if dst.name in ("s4", "u4"):
        raise UnsupportedOp("conversions to packed 4-bit destinations are not modelled", op=op, operand="dst",
                            value=code, hint="convert to s8/u8 (or f16) and pack the nibbles yourself")
    vector_isa.require(ctx_target, "vconv", code, op=op, operand="round" if rnd else "dtype")
    if code in UNDOCUMENTED:
        raise UnsupportedOp(f"vconv {code} is listed for {ctx_target.label} but not modelled: {UNDOCUMENTED[code]}",
                            op=op, operand="dtype", value=code,
                            hint="convert through a documented path (e.g. widen or clamp with vmaxs/vmins first, "
                                 "then an exact conversion)")


def _verify(call, target):
    op = call.spec.asm_name
    dst, src = call.operands[0], call.operands[1]
    for nm, p in (("dst", dst), ("src", src)):
        if isinstance(p, Ptr):
            ve.check_ub(p, op=op, operand=nm)
    if isinstance(dst, Ptr) and isinstance(src, Ptr):
        _check(target, dst.dtype, src.dtype, call.clauses.get("round"), "deqscale" in call.clauses, op)


_PLANS = ve.PlanCache()
_LEGAL: dict = {}


def _execute(ctx, dst, src, repeat, *, round=None, deqscale=None, mask=None, counter=None, blk_stride=None,
             rep_stride=None, stride_unit=None):
    op = "pto.ub.vconv"
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    deq = deqscale is not None
    key = (dst.dtype.name, src.dtype.name, round, deq, ctx.target.name)
    if key not in _LEGAL:
        _check(ctx.target, dst.dtype, src.dtype, round, deq, op)
        _LEGAL[key] = True
    scale = None
    if deq:
        scale = deqscale[0][0]
        if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer, np.floating)):
            raise IllegalOperand(f"deqscale must be a number, got {scale!r}", op=op, operand="deqscale", value=scale,
                                 hint="pass deqscale as a Python float or int")

    def build():
        rep = ve.check_repeat(repeat, op=op)
        clauses = {"mask": mask, "counter": counter, "blk_stride": blk_stride, "rep_stride": rep_stride,
                   "stride_unit": stride_unit}
        dts = (dst.dtype, src.dtype)
        par = ve.par_of(*dts)
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep,
                                      counter_ok=vector_isa.has_counter_mode(ctx.target), op=op)
        geo = ve.strides_from_clauses(clauses, ("dst", "src"), dts, par, op=op, blk_max=65535)
        streams = tuple(ve.vector_stream(nm, d, role, par=par, lanes=lanes, blk=g[0], rep=g[1], unit=g[2])
                        for nm, d, role, g in zip(("dst", "src"), dts, ("w", "r"), geo))
        return ve.Plan(lanes, streams)

    from .vector_elementwise import _hashable
    plan = _PLANS.get(_hashable((dst.dtype.name, src.dtype.name, repeat, mask, counter, blk_stride, rep_stride, stride_unit,
                                 ctx.target.name)), build)

    def compute(ins, r0, r1):
        return {"dst": convert(ins["src"], src.dtype, dst.dtype, round, ctx, scale)}

    ve.run(ctx, plan, (dst, src), compute)


def _expand(call) -> list:
    dst, src = call.operands[0], call.operands[1]
    dd, sd = ve.static_dtype(dst), ve.static_dtype(src)
    known = dd is not None and sd is not None
    par = ve.par_of(dd, sd) if known else 64
    repeat = call.operands[2]
    rnd = call.clauses.get("round")
    lines = [f"// {call.spec.asm_name}: {repeat} repeats x {par} lanes, as a vlds / vcvt / vsts loop"]
    lines += ve.mask_text(call.clauses, par, 2048 // par)
    blk = ve.clause_args(call.clauses, "blk_stride") or (1, 1)
    rep = ve.clause_args(call.clauses, "rep_stride")
    unit = (ve.clause_args(call.clauses, "stride_unit") or (0,))[0]
    body = []
    for i, (nm, p) in enumerate((("dst", dst), ("src", src))):
        rs = rep[i] if rep else (ve.default_rep_stride(p.dtype, par) if known else 8)
        body.append(f"%o_{nm} = arith.muli %r, %c{rs * 32 if isinstance(rs, int) else rs} : index")
    if known:
        body.append(ve.load_text("%v", "%src", src.dtype, par, "%o_src", blk[1], unit))
    else:
        body.append("%v = pto.vlds %src[%o_src]")
    if "deqscale" in call.clauses:
        body.append("%s = pto.vmuls %v, %deqscale, %mask    // exact product, rounded once below")
        body.append("%res = pto.vcvt %s {round_mode = \"ROUND_R\"}")
    else:
        dty = f"!pto.vreg<{par}x{dst.dtype.pto_name}>" if known else "!pto.vreg"
        body.append(f"%res = pto.vcvt %v, %mask {{round_mode = \"{PTO_ROUND[rnd]}\"}} : ... -> {dty}")
    if known:
        body.append(ve.store_text("%res", "%dst", dst.dtype, par, "%o_dst", blk[0], unit))
    else:
        body.append("pto.vsts %res, %dst[%o_dst], %mask")
    return ve.loop_text(repeat, body, lines)


register(OpSpec(
    name="ub.vconv", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", ("ub",), doc="destination"), Operand("src", "ptr", ("ub",), doc="source"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=(Clause("round", "word", values=ROUND_LETTERS, value_hints=TIK_ROUND_MODE_HINTS,
                    doc="rounding suffix r/a/f/c/z/o (omitted: nearest-even where inexact)"),
             Clause("deqscale", "args", params=("%scale",),
                    doc="s32 -> f16 dequantisation: dst = f16(src * f16(scale))"))
    + ve.mask_clauses() + ve.stride_clauses(("dst", "src")),
    execute=_execute, verify=_verify,
    doc="element type conversion with a rounding mode (vconv / vec_conv)"))
EXPANDERS["ub.vconv"] = _expand
