"""Lane-wise repeat ops: binary, unary, vector-scalar, fused multiply-add and dup (``pto.ub.v*``).

One row of `LANEWISE` per op; every op is the loop "load each source block pattern,
apply the vector instruction to the active lanes, store the destination pattern" of
`vector_engine`, executed as whole-array numpy.

Numerics (one rule each, see migration_guide/pto_vector.md):

* f16 arithmetic is computed in f32 and rounded once to f16 (nearest-even). f32 keeps
  24 >= 2*11+2 bits, so add/sub/mul/div/sqrt results equal the correctly rounded f16
  result. f32 arithmetic is IEEE f32.
* Fused forms (vaxpy, vmla, vmadd, vmaddrelu) are computed exactly in f64 (the product
  of two f16/f32 values is exact there) and rounded once to the destination type.
* exp, ln, sqrt, rec (1/x), rsqrt are evaluated in f64 (libm, < 1 ulp of f64) and
  rounded once: i.e. correctly rounded except in rare double-rounding ties. Hardware
  vexp/vln/vrec/vrsqrt are approximations documented only as "approximate" (TIK
  recommends the ``*_high_preci`` macros when accuracy matters), so real chips may differ
  by a few ulp; ``vec_*_high_preci`` lower onto the same ops.
* Float results of arithmetic ops follow the machine's overflow mode (``saturation``:
  +/-inf and overflow clamp to the largest finite value, NaN -> 0; ``inf_nan``: IEEE).
  Exact selections (vmax, vmin, vabs, vrelu, vmaxs, vmins, dup) pass values through.
* Integer add/sub/mul wrap (two's complement) in every overflow mode; vmax/vmin and
  the bitwise ops are exact.
* vmax/vmin are IEEE 754-2019 maximum/minimum: NaN propagates, ``max(-0, +0) = +0``,
  ``min(-0, +0) = -0``; vrelu is ``max(x, +0)`` (so ``relu(-0) = +0``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import vector_isa
from ..dtypes import DType
from ..errors import IllegalOperand
from ..scalars import ROUNDERS, UndefinedInt, int_to_float
from ..memory import Ptr
from ..numerics import minmax as _minmax
from ..numerics.floats import from_f16
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve

_UB = ("ub",)


@dataclass(frozen=True)
class Lanewise:
    """One lane-wise op.

    Attributes:
        name: op name after ``ub.`` (``"vadd"``).
        intrinsic: key in the `pto_core.vector_isa` tables.
        mem: memory operand names in operand order; the first is the destination.
        roles: role per memory operand (``"w"``, ``"r"``, ``"rw"``).
        scalar: True if a scalar operand follows the memory operands.
        vreg: the register-level PTO op of the expansion (``"pto.vadd"``).
        compute: ``fn(ctx, dtypes, inputs, scalar) -> dst array`` in lane form.
        signature: ``fn(dtypes) -> table key`` (default: the destination dtype).
        same_dtype: all memory operands must share one dtype.
        blk_max / rep_max: stride ranges of the instruction encoding.
        clauses: extra clauses after the stride clauses.
        doc: one-line summary.
    """

    name: str
    intrinsic: str
    mem: tuple
    roles: tuple
    scalar: bool
    vreg: str
    compute: Callable
    doc: str
    signature: Optional[Callable] = None
    same_dtype: bool = True
    blk_max: int = 255
    rep_max: int = 255
    clauses: tuple = ()


# ----------------------------------------------------------------------------- numerics


def _f(x: np.ndarray, d: DType) -> np.ndarray:
    """Values in the compute precision: f16 -> f32, f32 stays, bf16 -> f32."""
    if d.itemsize >= 4:
        return x
    return from_f16(x) if x.dtype == np.float16 else x.astype(np.float32)


def _arith(fn):
    """Binary arithmetic: float via f32 (rounded per overflow mode), ints wrap."""

    def compute(ctx, dt, ins, scalar):
        d = dt["dst"]
        a, b = ins["src0"], ins["src1"]
        if d.is_float:
            return ve.round_float(fn(_f(a, d), _f(b, d)), d, ctx)
        with np.errstate(over="ignore"):
            return fn(a, b).astype(d.storage)
    return compute


def _select(fn):
    def compute(ctx, dt, ins, scalar):
        return fn(ins["src0"], ins["src1"])
    return compute


#: IEEE 754-2019 ``maximum`` / ``minimum`` (`pto_core.numerics.minmax`; the GM atomics use the same functions).
vmax_values = _minmax.maximum
vmin_values = _minmax.minimum


def _relu_of(x: np.ndarray) -> np.ndarray:
    return vmax_values(x, np.zeros((), dtype=x.dtype))


def _arith_relu(fn):
    inner = _arith(fn)

    def compute(ctx, dt, ins, scalar):
        return _relu_of(inner(ctx, dt, ins, scalar))
    return compute


def _unary_f64(fn):
    """Transcendental / approximate ops: evaluated in f64, rounded once."""

    def compute(ctx, dt, ins, scalar):
        d = dt["dst"]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return ve.round_float(fn(ins["src"].astype(np.float64)), d, ctx)
    return compute


def _unary_exact(fn):
    def compute(ctx, dt, ins, scalar):
        with np.errstate(over="ignore"):
            return fn(ins["src"]).astype(dt["dst"].storage)
    return compute


def _scalar_value(value, d: DType, *, op: str, operand: str = "scalar"):
    """A scalar operand converted to the element type: floats rounded to ``d`` (nearest-even), ints range-checked.
    An int into a float type is rounded once from its exact value (`scalars.int_to_float`; past the format's
    range: the signed inf), as a float Scalar's init_value is."""
    if value.__class__ is UndefinedInt:
        value._used()
    if isinstance(value, (bool, np.bool_)):
        raise IllegalOperand(f"expects a number, got {value!r}", op=op, operand=operand, value=value,
                             hint=f"pass a {d.name} number (1 or 0 for a bool)")
    if d.is_float:
        if not isinstance(value, (int, float, np.integer, np.floating)):
            raise IllegalOperand(f"expects a number, got {value!r}", op=op, operand=operand, value=value,
                                 hint=f"pass an int or float (it is rounded to {d.name})")
        if isinstance(value, (int, np.integer)) and d.name in ROUNDERS:
            value = int_to_float(value, d)     # one rounding from the exact int (float64 first rounded it twice)
        with np.errstate(over="ignore"):
            return np.asarray(value, dtype=np.float64).astype(d.storage)
    if isinstance(value, (float, np.floating)):
        if not float(value).is_integer():
            raise IllegalOperand(f"{d.name} operation takes an integer scalar, got {value!r}", op=op,
                                 operand=operand, value=value,
                                 hint=f"pass a whole number (the {d.name} elements take no fractions)")
        value = int(value)
    if not isinstance(value, (int, np.integer)):
        raise IllegalOperand(f"expects an integer, got {value!r}", op=op, operand=operand, value=value,
                             hint=f"pass a {d.name} integer")
    v = int(value)
    if not d.min <= v <= d.max:
        raise IllegalOperand(f"scalar {v} does not fit {d.name}", op=op, operand=operand, value=v,
                             limit=f"[{d.min}, {d.max}]", hint=f"pass a value between {d.min} and {d.max}")
    return np.asarray(v, dtype=d.storage)


def _check_constant_scalar(row: "Lanewise", dt: dict, value, op: str) -> None:
    """Record-time check of a constant scalar operand (the checks `execute` makes on it), so a bad immediate
    is reported where the op is written, not when the program runs."""
    if isinstance(value, (bool, int, float, np.generic)) or not hasattr(value, "type"):
        _scalar_value(value, _scalar_dtype(row, dt), op=op)
        if row.name in ("vshl", "vshr"):
            ve.check_range(int(value), 0, dt["dst"].bits, op=op, operand="scalar",
                           hint="shift counts run from 0 to the element width")


def _vs_arith(fn):
    def compute(ctx, dt, ins, scalar):
        d = dt["dst"]
        a = ins["src"]
        if d.is_float:
            return ve.round_float(fn(_f(a, d), np.float32(scalar)), d, ctx)
        with np.errstate(over="ignore"):
            return fn(a, scalar).astype(d.storage)
    return compute


def _vs_select(fn):
    def compute(ctx, dt, ins, scalar):
        return fn(ins["src"], scalar).astype(dt["dst"].storage)
    return compute


def _lrelu(ctx, dt, ins, scalar):
    d = dt["dst"]
    x = _f(ins["src"], d)
    return ve.round_float(np.where(x >= 0, x, x * np.float32(scalar)), d, ctx)


def _shift_left(ctx, dt, ins, scalar):
    d = dt["dst"]
    n = int(scalar)
    x = ins["src"].astype(np.int64)
    return (x << n).astype(d.storage) if n < d.bits else np.zeros_like(ins["src"])


def _shift_right(ctx, dt, ins, scalar, rounding=False):
    d = dt["dst"]
    n = int(scalar)
    x = ins["src"].astype(np.int64)
    if d.kind == "u":
        x = x & ((1 << d.bits) - 1)
    if rounding and n > 0:
        x = x + (1 << (n - 1))
    if n >= 63:
        out = np.where(x < 0, -1, 0)
    else:
        out = x >> n
    return out.astype(d.storage)


def _fused(expr):
    """``expr(a, b, c)`` evaluated exactly in f64 then rounded once to the destination."""

    def compute(ctx, dt, ins, scalar):
        d = dt["dst"]
        args = {k: v.astype(np.float64) for k, v in ins.items()}
        if scalar is not None:
            args["scalar"] = np.float64(scalar)
        with np.errstate(over="ignore", invalid="ignore"):
            return ve.round_float(expr(args), d, ctx)
    return compute


def _fused_relu(expr):
    inner = _fused(expr)

    def compute(ctx, dt, ins, scalar):
        return _relu_of(inner(ctx, dt, ins, scalar))
    return compute


#: Named choice VMULCONV_RELU (migration_guide/pto_vector.md, "vmulconv"): whether ``vmulconv``
#: (f16 x f16 -> s8/u8) clamps the product at 0 before converting. False: ``dst = convert(src0 *
#: src1)``, so an int8 destination keeps negative products. Sources disagree: the CCE intrinsic page
#: cceapi_0020 of CANN 8.5.0 (commercial and community editions) gives ``[dst] =
#: convert(ReLU([src0] * [src1]))``, while its earlier editions (8.3.RC1alpha002, 8.5.0alpha002) only
#: say "multiply, then convert f16 to int8/uint8", and the Ascend C C-API page of the same intrinsic
#: (asc-devkit ``asc_mul_cast_half2int8``, a direct ``vmulconv_f162s8`` wrapper) gives ``dst_i =
#: Cast(src0_i * src1_i)`` (RINT rounding, saturating), as do the Ascend C ``MulCast`` and msKPP
#: ``vmulconv`` pages ("multiply, then quantize"). The ReLU appears in that one page revision only,
#: so the simulator keeps the plain product. For a uint8 destination the two readings agree (a
#: negative product saturates to 0).
VMULCONV_RELU = False


def _mulconv(ctx, dt, ins, scalar):
    """f16 * f16 rounded to f16, then converted to s8/u8 (nearest-even, saturating); with
    `VMULCONV_RELU` the rounded product is first clamped at +0."""
    d = dt["dst"]
    prod = ve.round_float(ins["src0"].astype(np.float32) * ins["src1"].astype(np.float32), dt["src0"], ctx)
    if VMULCONV_RELU:
        prod = _relu_of(prod)
    x = np.nan_to_num(np.rint(prod.astype(np.float64)), nan=0.0)
    return np.clip(x, d.min, d.max).astype(d.storage)


def _adddeqrelu(ctx, dt, ins, scalar):
    """relu(f16((s32 a + s32 b) * f16(deqscale))): sum wraps, one rounding to f16."""
    with np.errstate(over="ignore"):
        s = (ins["src0"].astype(np.int64) + ins["src1"].astype(np.int64)).astype(np.int32)
    val = s.astype(np.float64) * np.float64(np.float16(scalar))
    return _relu_of(ve.round_float(val, dt["dst"], ctx))


def _sig_single(dt) -> str:
    return dt["dst"].name


def _sig_dst_src(dt) -> str:
    src = dt.get("src", dt.get("src0"))
    return f"{dt['dst'].name}{src.name}{src.name}"


def _sig_deq(dt) -> str:
    return f"{dt['dst'].name}{dt['src0'].name}{dt['src1'].name}"


_B = ("dst", "src0", "src1")
_U = ("dst", "src")
_RB = ("w", "r", "r")
_RU = ("w", "r")

_ROUND_CLAUSE = Clause("round", "flag", doc="vshr: round the shifted-out bits (add 2**(n-1) first)")

LANEWISE = (
    # -- binary
    Lanewise("vadd", "vadd", _B, _RB, False, "pto.vadd", _arith(np.add), "dst = src0 + src1"),
    Lanewise("vsub", "vsub", _B, _RB, False, "pto.vsub", _arith(np.subtract), "dst = src0 - src1"),
    Lanewise("vmul", "vmul", _B, _RB, False, "pto.vmul", _arith(np.multiply), "dst = src0 * src1"),
    Lanewise("vdiv", "vdiv", _B, _RB, False, "pto.vdiv", _arith(np.divide), "dst = src0 / src1 (IEEE division)"),
    Lanewise("vmax", "vmax", _B, _RB, False, "pto.vmax", _select(vmax_values), "dst = max(src0, src1)"),
    Lanewise("vmin", "vmin", _B, _RB, False, "pto.vmin", _select(vmin_values), "dst = min(src0, src1)"),
    Lanewise("vand", "vand", _B, _RB, False, "pto.vand", _select(np.bitwise_and), "dst = src0 & src1 (bitwise)"),
    Lanewise("vor", "vor", _B, _RB, False, "pto.vor", _select(np.bitwise_or), "dst = src0 | src1 (bitwise)"),
    Lanewise("vaddrelu", "vaddrelu", _B, _RB, False, "pto.vaddrelu", _arith_relu(np.add),
             "dst = max(src0 + src1, 0)"),
    Lanewise("vsubrelu", "vsubrelu", _B, _RB, False, "pto.vsubrelu", _arith_relu(np.subtract),
             "dst = max(src0 - src1, 0)"),
    Lanewise("vmla", "vmla", _B, ("rw", "r", "r"), False, "pto.vmula", _fused(lambda a: a["src0"] * a["src1"] + a["dst"]),
             "dst = src0 * src1 + dst (fused, one rounding; f32 dst with f16 sources allowed)",
             signature=_sig_dst_src, same_dtype=False),
    Lanewise("vmadd", "vmadd", _B, ("rw", "r", "r"), False, "pto.vmadd",
             _fused(lambda a: a["src0"] * a["dst"] + a["src1"]), "dst = src0 * dst + src1 (fused, one rounding)"),
    Lanewise("vmaddrelu", "vmaddrelu", _B, ("rw", "r", "r"), False, "pto.vmaddrelu",
             _fused_relu(lambda a: a["src0"] * a["dst"] + a["src1"]), "dst = max(src0 * dst + src1, 0)"),
    Lanewise("vmulconv", "vmulconv", _B, _RB, False, "pto.vmulconv", _mulconv,
             "dst (s8/u8) = convert(f16(src0 * src1)), nearest-even, saturating", signature=_sig_dst_src,
             same_dtype=False),
    Lanewise("vadddeqrelu", "vadddeqrelu", ("dst", "src0", "src1"), _RB, True, "pto.vadddeqrelu", _adddeqrelu,
             "dst (f16) = max(f16((src0 + src1) * deqscale), 0) for s32 sources; scalar = deqscale",
             signature=_sig_deq, same_dtype=False),
    # -- unary
    Lanewise("vabs", "vabs", _U, _RU, False, "pto.vabs", _unary_exact(np.abs), "dst = |src|", blk_max=65535),
    Lanewise("vrelu", "vrelu", _U, _RU, False, "pto.vrelu", _unary_exact(_relu_of), "dst = max(src, 0)",
             blk_max=65535),
    Lanewise("vnot", "vnot", _U, _RU, False, "pto.vnot", _unary_exact(np.invert), "dst = ~src (bitwise)",
             blk_max=65535),
    Lanewise("vexp", "vexp", _U, _RU, False, "pto.vexp", _unary_f64(np.exp),
             "dst = exp(src) (approximate on hardware; modelled correctly rounded)", blk_max=65535),
    Lanewise("vln", "vln", _U, _RU, False, "pto.vln", _unary_f64(np.log),
             "dst = ln(src) (x = 0 -> -inf, x < 0 -> NaN; approximate on hardware)", blk_max=65535),
    Lanewise("vsqrt", "vsqrt", _U, _RU, False, "pto.vsqrt", _unary_f64(np.sqrt), "dst = sqrt(src)",
             blk_max=65535),
    Lanewise("vrec", "vrec", _U, _RU, False, "pto.vrec", _unary_f64(lambda x: 1.0 / x),
             "dst = 1 / src (approximate on hardware; modelled correctly rounded)", blk_max=65535),
    Lanewise("vrsqrt", "vrsqrt", _U, _RU, False, "pto.vrsqrt", _unary_f64(lambda x: 1.0 / np.sqrt(x)),
             "dst = 1 / sqrt(src) (approximate on hardware; modelled correctly rounded)", blk_max=65535),
    # -- vector-scalar
    Lanewise("vadds", "vadds", _U, _RU, True, "pto.vadds", _vs_arith(np.add), "dst = src + scalar",
             blk_max=65535),
    Lanewise("vmuls", "vmuls", _U, _RU, True, "pto.vmuls", _vs_arith(np.multiply), "dst = src * scalar",
             blk_max=65535),
    Lanewise("vmaxs", "vmaxs", _U, _RU, True, "pto.vmaxs", _vs_select(vmax_values), "dst = max(src, scalar)",
             blk_max=65535),
    Lanewise("vmins", "vmins", _U, _RU, True, "pto.vmins", _vs_select(vmin_values), "dst = min(src, scalar)",
             blk_max=65535),
    Lanewise("vlrelu", "vlrelu", _U, _RU, True, "pto.vprelu", _lrelu, "dst = src if src >= 0 else src * scalar",
             blk_max=65535),
    Lanewise("vshl", "vshl", _U, _RU, True, "pto.vshls", _shift_left, "dst = src << scalar (bits shifted out drop)",
             blk_max=65535),
    Lanewise("vshr", "vshr", _U, _RU, True, "pto.vshrs", _shift_right,
             "dst = src >> scalar (arithmetic for signed, logical for unsigned)", blk_max=65535,
             clauses=(_ROUND_CLAUSE,)),
    Lanewise("vaxpy", "vaxpy", _U, ("rw", "r"), True, "pto.vaxpy", _fused(lambda a: a["scalar"] * a["src"] + a["dst"]),
             "dst = scalar * src + dst (fused, one rounding; f32 dst with f16 src allowed)",
             signature=_sig_dst_src, same_dtype=False, blk_max=65535),
)


def _scalar_dtype(row: Lanewise, dt: dict) -> DType:
    if row.name == "vadddeqrelu":
        from ..dtypes import dtype
        return dtype("f16")
    if row.name in ("vshl", "vshr"):
        from ..dtypes import dtype
        return dtype("u16")
    src = dt.get("src", dt.get("src0", dt["dst"]))
    return src


def _signature(row: Lanewise, dt: dict) -> str:
    return (row.signature or _sig_single)(dt)


def _check_types(row: Lanewise, dt: dict, target, op: str) -> None:
    names = list(dt)
    if row.same_dtype:
        first = dt[names[0]]
        for n in names[1:]:
            if dt[n] is not first:
                raise IllegalOperand(f"dtype {dt[n].name} differs from {names[0]} dtype {first.name}", op=op,
                                     operand=n, value=dt[n].name, limit=first.name,
                                     hint="all operands of this instruction share one element type")
    if not row.same_dtype:
        srcs = [dt[n] for n in names[1:]]
        if any(s is not srcs[0] for s in srcs):
            raise IllegalOperand("source dtypes differ", op=op, operand=names[-1],
                                 value=", ".join(s.name for s in srcs), hint="the sources share one element type")
    vector_isa.require(target, row.intrinsic, _signature(row, dt), op=op)


def _verify_lanewise(row: Lanewise):
    nmem = len(row.mem)

    def verify(call, target):
        op = call.spec.asm_name
        dt = {}
        for i, nm in enumerate(row.mem):
            v = call.operands[i]
            if isinstance(v, Ptr):
                ve.check_ub(v, op=op, operand=nm)
                dt[nm] = v.dtype
        if len(dt) == len(row.mem):
            _check_types(row, dt, target, op)
        if row.scalar and len(call.operands) > nmem:
            types = {nm: getattr(call.operands[i], "dtype", None) for i, nm in enumerate(row.mem)}
            if all(isinstance(d, DType) for d in types.values()):
                _check_constant_scalar(row, types, call.operands[nmem], op)
    return verify


_PLANS = ve.PlanCache()
_LEGAL: dict = {}
#: (op, dtype names, target name) -> {operand name: DType} of combinations `_check_types` accepted
_CHECKED: dict = {}


def _check_cached(row: Lanewise, dts: tuple, target, op: str) -> None:
    key = (row.name, tuple(d.name for d in dts), target.name)
    if key not in _LEGAL:
        _check_types(row, dict(zip(row.mem, dts)), target, op)
        _LEGAL[key] = True


def _convert_scalar(row: Lanewise, value, dt: dict, op: str):
    """The scalar operand of a lanewise op converted to its element type (`_scalar_value`), shift counts
    range-checked: per op in `execute`, and per op for a run-time scalar of a bound op (`_bind_lanewise`)."""
    scalar = _scalar_value(value, _scalar_dtype(row, dt), op=op)
    if row.name in ("vshl", "vshr"):
        ve.check_range(int(value), 0, dt["dst"].bits, op=op, operand="scalar",
                       hint="shift counts run from 0 to the element width")
    return scalar


def _prepare_lanewise(row: Lanewise, op: str):
    """``prepare(target, operands, clauses) -> (dt, scalar, plan, rounding)``: everything a lanewise op
    computes before touching memory (operand checks, dtype legality, the scalar, the plan), in the order
    and with the errors of the general path. `execute` calls it per op; `_bind_lanewise` once per target."""
    nmem = len(row.mem)

    def prepare(target, operands, mask=None, counter=None, blk_stride=None, rep_stride=None, stride_unit=None,
                **extra):
        ptrs = operands[:nmem]
        for nm, p in zip(row.mem, ptrs):
            ve.check_ub(p, op=op, operand=nm)
        dts = tuple([p.dtype for p in ptrs])
        names = tuple([d.name for d in dts])
        dt = _CHECKED.get((row.name, names, target.name))
        if dt is None:            # legality of this dtype combination on this target, checked once
            _check_cached(row, dts, target, op)
            dt = _CHECKED[(row.name, names, target.name)] = dict(zip(row.mem, dts))
        scalar = _convert_scalar(row, operands[nmem], dt, op) if row.scalar else None
        repeat = operands[nmem + (1 if row.scalar else 0)]
        plan = _lanewise_plan(row, target, names, dts, repeat, mask, counter, blk_stride, rep_stride, stride_unit, op)
        return dt, scalar, plan, bool(extra.get("round"))
    return prepare


def _lanewise_plan(row: Lanewise, target, names: tuple, dts: tuple, repeat, mask, counter, blk_stride, rep_stride,
                   stride_unit, op: str) -> "ve.Plan":
    """The plan of one lanewise call from the plan cache (made by `_plan_lanewise` on a miss, which range-checks
    the repeat and clauses): the repeat-dependent part of `_prepare_lanewise`, also called per op by a bound op
    whose repeat is computed at run time (`_bind_lanewise`)."""
    if mask is None and counter is None and blk_stride is None and rep_stride is None and stride_unit is None:
        # the common form (all lanes, contiguous): a cheaper key; the repeat's type is part of it so
        # that True never finds the plan of 1 (check_repeat rejects bools)
        key = (row.name, names, type(repeat), repeat, target.name)
    else:
        key = _hashable((row.name, names, type(repeat), repeat, mask, counter, blk_stride, rep_stride,
                         stride_unit, target.name))
    return _PLANS.data.get(key) or _PLANS.get(key, lambda: _plan_lanewise(row, target, dts, repeat, mask, counter,
                                                                          blk_stride, rep_stride, stride_unit, op))


def _compute_lanewise(row: Lanewise, ctx, dt, scalar, rounding):
    if row.name == "vshr":
        def compute(ins, r0, r1):
            return {"dst": _shift_right(ctx, dt, ins, scalar, rounding)}
    else:
        fn = row.compute

        def compute(ins, r0, r1):
            return {"dst": fn(ctx, dt, ins, scalar)}
    return compute


def _execute_lanewise(row: Lanewise):
    nmem = len(row.mem)
    prepare = _prepare_lanewise(row, "pto.ub." + row.name)

    def execute(ctx, *operands, **clauses):
        dt, scalar, plan, rounding = prepare(ctx.target, operands, **clauses)
        ve.run(ctx, plan, operands[:nmem], _compute_lanewise(row, ctx, dt, scalar, rounding))
    return execute


#: a compiled program binds a lanewise op whose operands and clauses are all compile-time values to them
#: (`OpSpec.bind`): the operand checks, dtype legality, scalar conversion and plan lookup run once per
#: target instead of once per op (the same functions, raising the same errors at the same op when they fail)
VECTOR_BIND = True


def _bind_lanewise(row: Lanewise):
    nmem = len(row.mem)
    opname = "pto.ub." + row.name
    prepare = _prepare_lanewise(row, opname)
    ridx = nmem + (1 if row.scalar else 0)      # the repeat operand's index
    run = ve.run
    check_ub = ve.check_ub

    def convert(value, dt):
        return _convert_scalar(row, value, dt, opname)

    def bind(args, clauses):
        if not VECTOR_BIND:
            return None
        ptrs = args[:nmem]
        memo = [None, None]                 # the target the preparation was made for, and its result

        def op(ctx):
            target = ctx.target
            if target is not memo[0]:
                memo[1] = prepare(target, args, **clauses)
                memo[0] = target
            dt, scalar, plan, rounding = memo[1]
            run(ctx, plan, ptrs, _compute_lanewise(row, ctx, dt, scalar, rounding))
        return op

    def bind_holes(args, indices, clauses):
        if not VECTOR_BIND or any(i > ridx for i in indices):       # a run-time clause value: general path
            return None
        pos = tuple(j for j, i in enumerate(indices) if i < nmem)       # the run-time pointers among the values
        pidx = tuple(indices[j] for j in pos)
        names = tuple(row.mem[i] for i in pidx)
        spos = indices.index(nmem) if row.scalar and nmem in indices else None     # the run-time scalar, if any
        rpos = indices.index(ridx) if ridx in indices else None        # the run-time repeat, if any
        # the target, the hole pointers' dtypes, the preparation, every operand's dtype, and the plans made
        # for run-time repeats (Python int repeat -> Plan; at most the MAX_REPEAT + 1 legal values, since a
        # refused repeat raises before it is stored; remade with the preparation)
        memo = [None, None, None, None, None]
        geo = tuple(clauses.get(k) for k in ("mask", "counter", "blk_stride", "rep_stride", "stride_unit"))

        def plan_for(target, dts, repeat):
            return _lanewise_plan(row, target, tuple([d.name for d in dts]), dts, repeat, *geo, opname)

        def op(ctx, *values):
            ptrs = [values[j] for j in pos]
            dts = tuple([p.dtype for p in ptrs])
            target = ctx.target
            operands = list(args)
            for i, v in zip(indices, values):
                operands[i] = v
            if target is not memo[0] or dts != memo[1]:
                # the general path's preparation checks every operand in operand order (so the first bad
                # one is named, as without binding)
                memo[0] = None
                memo[2] = prep = prepare(target, operands, **clauses)
                memo[3] = tuple([p.dtype for p in operands[:nmem]])
                memo[4] = {}
                memo[0], memo[1] = target, dts
                dt, scalar, plan, rounding = prep
                if rpos is not None and type(values[rpos]) is int:
                    memo[4][values[rpos]] = plan
            else:
                # address-dependent checks of the run-time pointers, every time, in operand order (the
                # compile-time pointers passed them when the preparation was made)
                for nm, p in zip(names, ptrs):
                    check_ub(p, op=opname, operand=nm)
                dt, scalar, plan, rounding = memo[2]
                if spos is not None:        # the run-time scalar: converted (and range-checked) every time
                    scalar = convert(values[spos], dt)
                if rpos is not None:        # the run-time repeat: its plan (range-checked when first made)
                    repeat = values[rpos]
                    if type(repeat) is int:
                        plan = memo[4].get(repeat)
                        if plan is None:
                            plan = memo[4][repeat] = plan_for(target, memo[3], repeat)
                    else:                   # numpy ints, floats, bools: the general key (typed) and checks
                        plan = plan_for(target, memo[3], repeat)
            run(ctx, plan, operands[:nmem], _compute_lanewise(row, ctx, dt, scalar, rounding))
        return op
    return bind, bind_holes


def _hashable(key):
    """A plan-cache key of ``key``'s items (clause values are ``(args, kw)`` pairs, made hashable). Named choice
    PLAN_KEYS_TYPED: every leaf that is not a Python int, str or None is keyed with its type, so an equal value of
    another type (True, 1.0, np.int64(1)) never finds the plan made for the int and takes the checks of a plan
    build again (they refuse bools and floats). The plan caches are module-wide: without this, whether a run-time
    mask or repeat of True was refused depended on which ops had run before, in any program."""
    out = []
    for k in key:
        t = type(k)
        if t is int or t is str or k is None:
            out.append(k)
        elif t is tuple and len(k) == 2 and type(k[1]) is dict:         # a clause: (args, kw)
            a, kw = k
            if type(a) is not tuple or not _PLAIN.issuperset(map(type, a)):
                a = _typed_leaf(a)
            out.append((a, tuple([(n, _typed_leaf(x)) for n, x in kw.items()]) if kw else ()))
        elif t is tuple and _PLAIN.issuperset(map(type, k)):
            out.append(k)
        else:
            out.append(_typed_leaf(k))
    return tuple(out)


_PLAIN = frozenset((int, str))


def _typed_leaf(v):
    """`_hashable` of one item: ints, strings and None as they are, tuples (and ``(args, kw)`` pairs) item by
    item, anything else as ``(type, value)``."""
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is tuple:
        if len(v) == 2 and type(v[1]) is dict:
            return _typed_leaf(v[0]), tuple([(n, _typed_leaf(x)) for n, x in v[1].items()])
        return tuple([_typed_leaf(x) for x in v])
    return t, v


def _plan_lanewise(row: Lanewise, target, dts, repeat, mask, counter, blk_stride, rep_stride, stride_unit, op):
    repeat = ve.check_repeat(repeat, op=op)
    clauses = {"mask": mask, "counter": counter, "blk_stride": blk_stride, "rep_stride": rep_stride,
               "stride_unit": stride_unit}
    par = ve.par_of(*dts)
    lanes = ve.lanes_from_clauses(clauses, par=par, repeat=repeat, counter_ok=vector_isa.has_counter_mode(target),
                                  op=op)
    geo = ve.strides_from_clauses(clauses, row.mem, dts, par, op=op, blk_max=row.blk_max, rep_max=row.rep_max)
    streams = tuple(ve.vector_stream(nm, d, role, par=par, lanes=lanes, blk=g[0], rep=g[1], unit=g[2])
                    for nm, d, role, g in zip(row.mem, dts, row.roles, geo))
    return ve.Plan(lanes, streams)


def _expand_lanewise(row: Lanewise):
    def expand(call) -> list:
        dts = {}
        for i, nm in enumerate(row.mem):
            v = call.operands[i]
            dts[nm] = ve.static_dtype(v)
        known = [d for d in dts.values() if d is not None]
        par = ve.par_of(*known) if known else 128
        bits = 2048 // par
        repeat = call.operands[len(row.mem) + (1 if row.scalar else 0)]
        blk = ve.clause_args(call.clauses, "blk_stride")
        rep = ve.clause_args(call.clauses, "rep_stride")
        unit = ve.clause_args(call.clauses, "stride_unit")
        u = unit[0] if unit else 0
        lines = [f"// {call.spec.asm_name}: {repeat} repeats x {par} lanes, as a vlds / {row.vreg} / vsts loop"]
        lines += ve.mask_text(call.clauses, par, bits)
        body = []
        regs = {}
        for i, nm in enumerate(row.mem):
            d = dts[nm]
            b = blk[i] if blk else 1
            if rep:
                rs = rep[i]
            else:
                rs = ve.default_rep_stride(d, par) if d is not None else 8
            rs_txt = f"{rs * 32}" if isinstance(rs, (int, np.integer)) else f"{rs} * 32"
            body.append(f"%o_{nm} = arith.muli %r, %c{rs_txt} : index    // repeat stride of {nm}: {rs} x 32 B, a byte offset")
            if "r" in row.roles[i]:
                regs[nm] = f"%v_{nm}"
                if d is not None:
                    body.append(ve.load_text(regs[nm], f"%{nm}", d, par, f"%o_{nm}", b, u))
                else:
                    body.append(f"{regs[nm]} = pto.vlds %{nm}[%o_{nm}]")
        args = [regs[n] for n in row.mem if n in regs and n != "dst"]
        if "dst" in regs:
            args.append(regs["dst"])
        if row.scalar:
            args.append("%scalar")
        d = dts["dst"]
        vty = f"!pto.vreg<{par}x{d.pto_name}>" if d is not None else "!pto.vreg"
        body.append(f"%res = {row.vreg} {', '.join(args)}, %mask : ... -> {vty}")
        b0 = blk[0] if blk else 1
        if d is not None:
            body.append(ve.store_text("%res", "%dst", d, par, "%o_dst", b0, u))
        else:
            body.append("pto.vsts %res, %dst[%o_dst], %mask")
        return ve.loop_text(repeat, body, lines)
    return expand


EXPANDERS: dict = {}


def _register_lanewise(row: Lanewise) -> None:
    operands = tuple(Operand(nm, "ptr", _UB, doc=("destination" if i == 0 else "source")) for i, nm in
                     enumerate(row.mem))
    if row.scalar:
        operands += (Operand("scalar", "scalar", doc="scalar operand (converted to the element type)"),)
    operands += (Operand("repeat", "int", doc="repeats, 0..255 (0 = no-op)"),)
    clauses = ve.mask_clauses() + ve.stride_clauses(row.mem) + row.clauses
    bind, bind_holes = _bind_lanewise(row)
    spec = OpSpec(name="ub." + row.name, family="vector", pipe="V", operands=operands, clauses=clauses,
                  execute=_execute_lanewise(row), verify=_verify_lanewise(row), bind=bind, bind_holes=bind_holes,
                  doc=row.doc)
    register(spec)
    EXPANDERS[spec.name] = _expand_lanewise(row)


for _row in LANEWISE:
    _register_lanewise(_row)
del _row


# ----------------------------------------------------------------------------- vector_dup


def _dup_verify(call, target):
    op = call.spec.asm_name
    v = call.operands[0]
    if isinstance(v, Ptr):
        ve.check_ub(v, op=op, operand="dst")
        vector_isa.require(target, "vector_dup", v.dtype.name, op=op)
    d = getattr(v, "dtype", None)            # a Ptr, or a recorded pointer expression
    scalar = call.operands[1] if len(call.operands) > 1 else None
    if isinstance(d, DType) and isinstance(scalar, (bool, int, float, np.generic)):
        _scalar_value(scalar, d, op=op)      # an immediate: checked where the op is written, as execute checks it


def _dup_plan(target, dtype, repeat, mask=None, counter=None, blk_stride=None, rep_stride=None, stride_unit=None):
    """The plan of one vector_dup from the plan cache (made on a miss, which range-checks the repeat and clauses);
    called per op by `_dup_execute` and by a bound dup (`_bind_dup`). The repeat's type is part of the key so
    that True never finds the plan of 1 (check_repeat rejects bools)."""
    op = "pto.ub.vector_dup"
    key = _hashable(("vector_dup", dtype.name, type(repeat), repeat, mask, counter, blk_stride, rep_stride,
                     stride_unit, target.name))
    plan = _PLANS.data.get(key)
    if plan is not None:
        return plan

    def build():
        rep = ve.check_repeat(repeat, op=op)
        clauses = {"mask": mask, "counter": counter, "blk_stride": blk_stride, "rep_stride": rep_stride,
                   "stride_unit": stride_unit}
        par = ve.par_of(dtype)
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep,
                                      counter_ok=vector_isa.has_counter_mode(target), op=op)
        (b, r, u), = ve.strides_from_clauses(clauses, ("dst",), (dtype,), par, op=op, blk_max=65535)
        return ve.Plan(lanes, (ve.vector_stream("dst", dtype, "w", par=par, lanes=lanes, blk=b, rep=r, unit=u),))

    return _PLANS.get(key, build)


def _dup_value(target, dst, scalar):
    """The dtype legality of a vector_dup's destination on ``target`` and its scalar converted to that type."""
    op = "pto.ub.vector_dup"
    vector_isa.require(target, "vector_dup", dst.dtype.name, op=op)
    return _scalar_value(scalar, dst.dtype, op=op)


def _dup_run(ctx, plan, dst, value):
    def compute(ins, r0, r1):
        return {"dst": np.broadcast_to(value, (r1 - r0, plan.lanes.count))}

    ve.run(ctx, plan, (dst,), compute)


def _dup_execute(ctx, dst, scalar, repeat, **clauses):
    ve.check_ub(dst, op="pto.ub.vector_dup", operand="dst")
    value = _dup_value(ctx.target, dst, scalar)
    _dup_run(ctx, _dup_plan(ctx.target, dst.dtype, repeat, **clauses), dst, value)


def _bind_dup(args, indices, clauses, dyn_keys=()):
    """``run(ctx, *values)`` of a vector_dup bound to its compile-time operands and clauses (`OpSpec.bind`,
    `OpSpec.bind_holes`, `OpSpec.bind_dyn`; ``values``: the operands at ``indices``, then the clauses
    ``dyn_keys``, computed at run time): the dtype legality and a compile-time scalar's conversion once per
    target and destination dtype, the destination check and the plan lookup (the general path's cache, key
    and checks) per op, in the general path's order, so the same error is raised at the same op."""
    if not VECTOR_BIND:
        return None
    nh = len(indices)
    hole_scalar = 1 in indices
    check_ub = ve.check_ub
    memo = [None, None, None]       # the target and destination dtype the value was made for, the value

    def run(ctx, *values):
        if nh:
            operands = list(args)
            for i, v in zip(indices, values):
                operands[i] = v
            dst, scalar, repeat = operands
        else:
            dst, scalar, repeat = args
        check_ub(dst, op="pto.ub.vector_dup", operand="dst")
        target = ctx.target
        if hole_scalar:             # a run-time scalar: checked and converted every time
            value = _dup_value(target, dst, scalar)
        elif target is memo[0] and dst.dtype == memo[1]:
            value = memo[2]
        else:
            memo[0] = None
            value = memo[2] = _dup_value(target, dst, scalar)
            memo[0], memo[1] = target, dst.dtype
        if dyn_keys:
            c = dict(clauses)
            c.update(zip(dyn_keys, values[nh:]))
            plan = _dup_plan(target, dst.dtype, repeat, **c)
        else:
            plan = _dup_plan(target, dst.dtype, repeat, **clauses)
        _dup_run(ctx, plan, dst, value)
    return run


def _dup_expand(call) -> list:
    d = ve.static_dtype(call.operands[0])
    par = ve.par_of(d) if d is not None else 128
    lines = [f"// {call.spec.asm_name}: {call.operands[2]} repeats x {par} lanes"]
    lines += ve.mask_text(call.clauses, par, 2048 // par)
    lines.append(f"%v = pto.vdup %scalar, %mask : ... -> !pto.vreg<{par}x{d.pto_name if d else 'T'}>")
    rep = ve.clause_args(call.clauses, "rep_stride")
    rs = rep[0] if rep else (ve.default_rep_stride(d, par) if d else 8)
    body = [f"%o_dst = arith.muli %r, %c{rs * 32 if isinstance(rs, int) else rs} : index"]
    blk = ve.clause_args(call.clauses, "blk_stride")
    body.append(ve.store_text("%v", "%dst", d, par, "%o_dst", blk[0] if blk else 1, 0) if d is not None
                else "pto.vsts %v, %dst[%o_dst], %mask")
    return ve.loop_text(call.operands[2], body, lines)


register(OpSpec(
    name="ub.vector_dup", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination"),
              Operand("scalar", "scalar", doc="value, converted to the destination type (floats nearest-even)"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=ve.mask_clauses() + ve.stride_clauses(("dst",)),
    execute=_dup_execute, verify=_dup_verify, bind=lambda args, clauses: _bind_dup(args, (), clauses),
    bind_holes=_bind_dup, bind_dyn=_bind_dup, doc="dst[lane] = scalar for every active lane (vec_dup / vector_dup)"))
EXPANDERS["ub.vector_dup"] = _dup_expand
