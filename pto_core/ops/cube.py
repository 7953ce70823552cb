"""Cube MAD ops: ``pto.mad``, ``mad_acc``, ``mad_bias``, ``mad_mx``, ``mad_mx_acc``, ``mad_mx_bias``.

``dst[m, n] = (init) + sum_k lhs[m, k] * rhs[k, n]`` on tiles already staged in L0A
(left, Zz on A2A3-class targets / Nz on A5-class, 16 x C0 boxes), L0B (right, Zn,
C0 x 16 boxes, K innermost) and L0C (accumulator, Nz with 16 x 16 boxes, N1 M1 M0 N0).
Element types come from the pointer types; legality is data (`ChipProfile.mad_dtypes`,
`ChipProfile.mad_mx_dtypes`).

Numerics (one named choice each; see ``migration_guide/pto_cube.md``):

* Float forms: inputs are decoded exactly to f32 (f16, bf16, fp8, hif8, fp4; TF32
  rounding first under ``tf32_mode``), so every product of two such inputs is exact in
  f32. Each op sums its products as **one float32 GEMM** (``np.matmul`` on f32 operands);
  the summation order inside it is implementation-defined, like the hardware's
  unpublished order. ``mad_acc`` then adds that sum to the f32 L0C value (one rounding);
  ``mad_bias`` adds the N bias values the same way (the hardware seeds the accumulator
  with the bias; with an implementation-defined order the seed is one more addend).
  f32 x f32 without ``tf32_mode`` rounds products as the BLAS does.
* f16 accumulators (Kirin ``f16 x f16 -> f16``, legacy ``f16f16f16``): the f32 sum is
  rounded once to f16 (round to nearest even); ``mad_acc`` adds in f32, then rounds.
* Integer forms (``s8 x s8 -> s32``, legacy ``u8``/``u32`` triples): exact (a float64
  GEMM is exact for 8-bit products at K <= 4095), the result wraps to 32 bits.
* MX forms: ``(lhs * 2**(sA - 127)) * (rhs * 2**(sB - 127))`` with one E8M0 scale per
  32 K elements, scales read at the data address / 16 in the L0A/L0B scale buffers.
* ``sat`` (float forms only): ``+-inf`` inputs become the input type's finite extrema,
  NaN inputs 0; results saturate to the destination's finite range and NaN results
  become 0. ``nosat``: IEEE-754. Omitted: the machine's overflow mode
  (``Machine.overflow_mode``: ``saturation`` = sat).
* GEMV (``m == 1`` without ``disable_gemv``): L0A holds the 1 x K row densely (K
  consecutive elements, the layout of a one-row ``TileLeft``); the result is row 0 of
  a 16-row L0C tile whose other rows are written as 0 (plus the bias / old value).

Speed (the GEMM is the floor; everything else is a few passes over the tiles): f16
operands are decoded by integer bit moves (`f16_to_f32`, bit-identical to numpy's cast,
in cache-sized slabs; tiles of <= 2048 elements by one table gather), fused with the
Zz/Nz -> logical transposition, into per-thread work arrays that are reused across ops
(`_scratch`; ops do not nest); the GEMM writes into a reused product array
(``np.matmul(out=)``: the same BLAS call without allocating the result); an f32 result goes
into Nz order as 64-byte rows of 16 channels (``mad_acc``: into a work array, then one
contiguous f32 add into L0C); ``sat`` finiteness checks first try one BLAS dot of the tile with itself
(`numerics.floats.CHECK_BY_DOT`; the exact scan decides whenever the dot proves nothing). See
``migration_guide/pto_cube.md``.
"""
from __future__ import annotations

import threading
from dataclasses import replace

import ml_dtypes
import numpy as np

from ..dtypes import DType
from ..errors import IllegalOperand, UnsupportedOp
from ..memory import all_written
from ..numerics.floats import _below_by_dot
from ..numerics.floats import all_finite as _all_finite
from ..numerics.floats import f16_bits_exact as _f16_bits_exact
from ..numerics.floats import f16_to_f32, f16_to_f32_finite as _f16_to_f32_finite  # noqa: F401
from .mte import (BLOCK, MX_ADDR_DIV, MX_FRAGMENT, check_align, check_int, check_ptr, flags_to_elems, l0a_layout,
                  to_elems, tracking)
from .registry import Clause, Operand, OpSpec, register

MAD_LIMIT = 4095                     # m, n, k are 12-bit fields of X_t
_F32_MAX = float(np.finfo(np.float32).max)
#: numerics-module names of the float formats stored as raw codes
_CODE_FORMATS = {"hif8": "hif8", "e2m1x2": "e2m1", "e1m2x2": "e1m2"}


# ============================================================================ decoding and layouts


def _numerics():
    from .. import numerics  # imported lazily: the numerics module is a separate layer
    return numerics


_LUTS: dict = {}


def _lut(d: DType) -> np.ndarray:
    """float32 value of every code of a 16-bit-or-narrower float format (exact; built once per format)."""
    lut = _LUTS.get(d.name)
    if lut is None:
        if d.name in _CODE_FORMATS:
            codes = np.arange(256 if d.bits == 8 else 16, dtype=np.uint8)
            lut = np.asarray(_numerics().to_f32(codes, _CODE_FORMATS[d.name]), dtype=np.float32)
        else:
            codes = np.arange(1 << d.bits, dtype=np.uint16 if d.bits == 16 else np.uint8)
            lut = codes.view(d.storage).astype(np.float32)
        lut.setflags(write=False)
        _LUTS[d.name] = lut
    return lut


def _decode(values: np.ndarray, d: DType, scratch: str = "") -> np.ndarray:
    """Exact values of raw elements (any shape, any strides) as a C-ordered float32 / float64 (integers) array.

    f16 by integer bit moves (`f16_to_f32`, into a reused per-thread buffer when ``scratch``
    names one); fp8, hif8 and fp4 through a per-format look-up table (one gather); bf16 by
    a 16-bit shift; f32 is a copy.
    """
    if _f16_by_bits(values, d):
        return f16_to_f32(values.view(np.uint16), _scratch(scratch, values.shape, np.int32) if scratch else None)
    return _decode_any(values, d)


def _f16_by_bits(values: np.ndarray, d: DType) -> bool:
    """Whether f16 ``values`` are decoded by bit moves (large tiles, where the moves are exact)."""
    return d.name == "f16" and values.size > _F16_BY_TABLE and _f16_bits_exact()


def _decode_finite(values: np.ndarray, d: DType, scratch: str = "") -> tuple:
    """`_decode` and whether every decoded value is finite (no inf or NaN code among ``values``).

    The f16 path learns it from the range check its decoder makes anyway; the others test it."""
    if _f16_by_bits(values, d):
        return _f16_to_f32_finite(values.view(np.uint16), _scratch(scratch, values.shape, np.int32) if scratch
                                  else None)
    if d.is_int:
        return values.astype(np.float64, order="C"), True
    x = _decode_any(values, d)
    return x, _all_finite(x)


def _decode_any(values: np.ndarray, d: DType) -> np.ndarray:
    """`_decode` by cast, shift or table (every type but large f16 tiles)."""
    if d.name == "f16":
        return _lut(d).take(values.view(np.uint16))        # small tiles: one gather is cheaper
    if d.name == "f32":
        return np.array(values, dtype=np.float32, order="C")
    if d.name == "bf16":
        return (values.view(np.uint16).astype(np.uint32, order="C") << 16).view(np.float32)
    if d.is_int:
        return values.astype(np.float64, order="C")
    if d.is_float:
        return _lut(d).take(values.view(np.uint16 if d.bits == 16 else np.uint8))
    raise UnsupportedOp(f"cannot decode {d.name} data for a MAD", operand="%lhs", value=d.name,
                        hint="feed the MAD a dtype pto.mad takes on this chip (see migration_guide/pto_api.md)")


#: Up to this many elements `_decode` gathers f16 values from the 65,536-entry (256 KiB) table instead of
#: the bit moves. The gather wins only while the table stays in cache: inside a kernel the other ops'
#: tiles evict it, and its scattered reads in turn evict theirs (conv2d, 64 x 32 weight tiles: at 2048,
#: the mad's lhs read, rhs read and L0C update all ran ~1.3-1.8x slower than with the bit moves). Both
#: decoders give the same bits on every code (tests/core/test_fast_paths.py).
_F16_BY_TABLE = 256


_SCRATCH = threading.local()


def _scratch(name: str, shape: tuple, dtype) -> np.ndarray:
    """A per-thread work array reused across ops (one per ``name``; reallocated when the shape changes).

    Ops do not nest, so an array handed out here is free again when the op that asked for it
    returns; reuse avoids a fresh allocation (and its page faults) per operand per op.
    """
    arrays = getattr(_SCRATCH, "arrays", None)
    if arrays is None:
        arrays = _SCRATCH.arrays = {}
    arr = arrays.get(name)
    if arr is None or arr.shape != shape or arr.dtype != dtype:
        arr = arrays[name] = np.empty(shape, dtype)
    return arr


def _typed(raw: np.ndarray, d: DType) -> np.ndarray:
    """Raw bytes -> one array entry per element (typed view, or nibble codes for packed types)."""
    if d.bits < 8:
        return to_elems(raw, d)
    return raw.view(d.storage)


#: storage 4-D shape builders and the permutation to (R1, IR, C1, IC) for each box layout
def _boxed(layout: str, r1: int, c1: int, ir: int, ic: int):
    if layout == "Nz":
        return (c1, r1, ir, ic), (1, 2, 0, 3)
    if layout == "Zz":
        return (r1, c1, ir, ic), (0, 2, 1, 3)
    raise ValueError(layout)


def _logical(raw: np.ndarray, d: DType, layout: str, rows: int, cols: int, ir: int, ic: int,
             scratch: str = "", check_finite: bool = False) -> tuple:
    """Decoded logical ``rows x cols`` matrix from a row-major-inner boxed tile (one fused pass when possible),
    and (``check_finite``) whether all its values are finite, else None."""
    shape4, perm = _boxed(layout, rows // ir, cols // ic, ir, ic)
    boxed = _typed(raw, d).reshape(shape4).transpose(perm)
    if check_finite:
        x, finite = _decode_finite(boxed, d, scratch)
        return x.reshape(rows, cols), finite
    return _decode(boxed, d, scratch).reshape(rows, cols), None


def _logical_flags(w: np.ndarray, d: DType, layout: str, rows: int, cols: int, ir: int, ic: int) -> np.ndarray:
    """Per-element written flags in logical order (all bytes of an element written)."""
    e = flags_to_elems(w, d)
    if d.bits >= 8:
        e = e == np.array(int.from_bytes(b"\x01" * (d.bits // 8), "little"), e.dtype)
    shape4, perm = _boxed(layout, rows // ir, cols // ic, ir, ic)
    return e.reshape(shape4).transpose(perm).reshape(rows, cols)


def _ceil_to(a: int, b: int) -> int:
    return -(-a // b) * b


# ============================================================================ static checks


def _combo_name(a, b, c) -> str:
    return f"{a.name} x {b.name} -> {c.name}"


def _static(op: str, target, mx: bool, lhs, rhs, dst, bias, clauses: dict) -> None:
    check_ptr(op, "%lhs", lhs, ("l0a",))
    check_ptr(op, "%rhs", rhs, ("l0b",))
    check_ptr(op, "%dst", dst, ("l0c",))
    if bias is not None:
        check_ptr(op, "%bias", bias, ("bt",))
    da, db, dc = (getattr(p, "dtype", None) for p in (lhs, rhs, dst))
    if da is None or db is None or dc is None:
        return
    if mx:
        legal = (da.name, db.name) in target.mad_mx_dtypes and dc.name == "f32"
        if not legal:
            pairs = ", ".join(f"{a} x {b}" for a, b in sorted(target.mad_mx_dtypes)) or "(none: no MX on this target)"
            raise (UnsupportedOp if not target.mad_mx_dtypes else IllegalOperand)(
                f"MX type combination {_combo_name(da, db, dc)} is not supported on {target.label}", op=op,
                operand="%lhs", value=_combo_name(da, db, dc), limit=f"{pairs} -> f32",
                hint="MX MAD takes fp8 or fp4 data with E8M0 scales and an f32 accumulator")
    elif (da.name, db.name, dc.name) not in target.mad_dtypes:
        combos = ", ".join(f"{a} x {b} -> {c}" for a, b, c in sorted(target.mad_dtypes))
        raise IllegalOperand(f"type combination {_combo_name(da, db, dc)} is not supported on {target.label}",
                             op=op, operand="%lhs", value=_combo_name(da, db, dc), limit=combos,
                             hint="element types come from the pointer types; pick a legal triple for this target")
    floating = da.is_float
    if clauses.get("sat") is not None:
        if clauses["sat"] == "preserve_nan":
            raise IllegalOperand("sat(preserve_nan) is a FIXPIPE mode; MAD takes sat or nosat", op=op,
                                 operand="sat", value="preserve_nan", limit="sat | nosat",
                                 hint="use one of sat, nosat on the MAD; preserve_nan goes on the pto.mte_l0c_* "
                                      "(FIXPIPE) that moves its result out")
        if not floating:
            raise IllegalOperand(f"sat/nosat requires a floating element-type combination, got "
                                 f"{_combo_name(da, db, dc)}", op=op, operand="sat" if clauses["sat"] else "nosat",
                                 value=_combo_name(da, db, dc), limit="floating MAD forms only",
                                 hint="integer MAD wraps; drop the sat/nosat clause")
    if clauses.get("tf32_mode") is not None and not (da.name == db.name == dc.name == "f32"):
        raise IllegalOperand(f"tf32_mode requires f32 lhs, rhs and dst element types, got {_combo_name(da, db, dc)}",
                             op=op, operand="tf32_mode", value=_combo_name(da, db, dc), limit="f32 x f32 -> f32",
                             hint="drop tf32_mode, or stage f32 operands")
    if bias is not None:
        dbias = getattr(bias, "dtype", None)
        if dbias is not None and dbias.name != dc.name:
            raise IllegalOperand(f"bias element type {dbias.name} must equal the dst element type {dc.name}", op=op,
                                 operand="%bias", value=dbias.name, limit=dc.name,
                                 hint="load the bias with mte_l1_bt into a bt pointer of the accumulator type")


#: fix for %m / %n / %k outside [1, MAD_LIMIT]: a zero size (an empty tile) is as wrong as an oversized one
MAD_SIZE_HINT = "pass a size from 1 to 4095 (skip the op for an empty tile; split larger matmuls into tiles of at most 4095)"


def _verify(mx: bool, has_bias: bool):
    def verify(call, target):
        ops = call.operands
        bias = ops[3] if has_bias else None
        _static(call.spec.asm_name, target, mx, ops[0], ops[1], ops[2], bias, call.clauses)
        for name, v in zip(("%m", "%n", "%k"), ops[-3:]):
            check_int(call.spec.asm_name, name, v, 1, MAD_LIMIT, hint=MAD_SIZE_HINT)
    return verify


# ============================================================================ numerics helpers


def _sat_inputs(x: np.ndarray, d: DType) -> np.ndarray:
    """``sat`` input normalisation: +-inf -> +-finite max of the input type, NaN -> 0."""
    if np.isfinite(x).all():
        return x
    big = _F32_MAX if d.name == "f32" else float(d.max)
    return np.where(np.isnan(x), np.float32(0), np.clip(x, -big, big)).astype(np.float32)


def _sat_result(c: np.ndarray, dc: DType) -> np.ndarray:
    big = _F32_MAX if dc.name == "f32" else float(dc.max)
    if np.isfinite(c).all() and (dc.name == "f32" or np.abs(c).max(initial=0) <= big):
        return c
    return np.where(np.isnan(c), np.float32(0), np.clip(c, -big, big)).astype(np.float32)


def _e8m0(raw: np.ndarray) -> np.ndarray:
    return raw.view(ml_dtypes.float8_e8m0fnu).astype(np.float32)    # 2**(code-127); 0xFF -> NaN


def _scales(ctx, data_ptr, space: str, outer: int, groups: int, rows_needed: int, rows_used: int, side: str):
    """MX scales ``(rows_needed, groups)`` as f32.

    Fragment ``(x, y)`` holds 16 data rows (L0A) / columns (L0B) x 2 K groups, stored
    row-major (``[16][2]``) at ``(x * pairs + y) * 32`` bytes from data address / 16 in
    the scale buffer (Zz for the left, Nn for the right scale tile). Only the first
    ``rows_used`` rows are checked for initialisation.
    """
    pairs = -(-groups // 2)
    nfrag = outer // 16
    sptr = replace(data_ptr, space=space, addr=data_ptr.addr // MX_ADDR_DIV)
    operand = "%lhs scale" if side == "a" else "%rhs scale"
    data, written, _ = ctx.span_tracked(sptr, 0, nfrag * pairs * MX_FRAGMENT, operand=operand)
    s = data.reshape(nfrag, pairs, 16, 2).transpose(0, 2, 1, 3).reshape(outer, 2 * pairs)[:rows_needed, :groups]
    w = written.reshape(nfrag, pairs, 16, 2).transpose(0, 2, 1, 3).reshape(outer, 2 * pairs)[:rows_used, :groups]
    ctx.check_written(w, operand=operand, ptr=sptr)
    return _e8m0(np.ascontiguousarray(s))


def _gemv_scales(ctx, data_ptr, groups: int) -> np.ndarray:
    """GEMV left scales ``(1, groups)`` as f32: the one-row scale tile is dense, group ``g`` at byte ``g``
    from data address / 16 (the left data row is dense too; named choice GEMV_MX_SCALES, pto_cube.md)."""
    sptr = replace(data_ptr, space="l0a_scale", addr=data_ptr.addr // MX_ADDR_DIV)
    data, written, _ = ctx.span_tracked(sptr, 0, groups, operand="%lhs scale")
    ctx.check_written(written, operand="%lhs scale", ptr=sptr)
    return _e8m0(np.ascontiguousarray(data[:groups]).reshape(1, groups))


def _tf32(x: np.ndarray, mode: str) -> np.ndarray:
    rnd = "even" if mode == "round_even" else "away"
    return np.asarray(_numerics().tf32_round(np.ascontiguousarray(x, np.float32), rnd), np.float32)


def _mx_scaled(ctx, lhs, rhs, a: np.ndarray, bt: np.ndarray, m: int, n: int, k: int, gemv: bool):
    """``a * sA`` and ``bt * sB^T`` with one E8M0 scale per 32 K elements (scales at data address / 16)."""
    groups = -(-k // 32)
    na = bt.shape[0]
    sa = _gemv_scales(ctx, lhs, groups) if gemv else _scales(ctx, lhs, "l0a_scale", a.shape[0], groups,
                                                                a.shape[0], m, "a")
    sb = _scales(ctx, rhs, "l0b_scale", na, groups, na, n, "b")
    return a * np.repeat(sa, 32, axis=1)[:, :k], bt * np.repeat(sb, 32, axis=1)[:, :k]


def _read_lhs(ctx, lhs, m: int, k: int, gemv: bool, track: bool, check_finite: bool) -> tuple:
    """Decoded lhs: the dense 1 x k row (GEMV) or the ``round16(m) x k`` left tile (Zz / Nz by target),
    and (``check_finite``) whether the whole tile is finite, else None."""
    da = lhs.dtype
    if gemv:
        raw, w, _ = ctx.span_tracked(lhs, 0, da.nbytes(k), operand="%lhs")
        if track and not all_written(w):
            ctx.check_written(w, operand="%lhs", ptr=lhs)
        a = _decode(_typed(raw, da)[:k], da).reshape(1, k)
        return a, None
    rows, ka, c0 = _ceil_to(m, 16), _ceil_to(k, da.c0), da.c0
    lay = l0a_layout(ctx.target)
    raw, w, _ = ctx.span_tracked(lhs, 0, da.nbytes(rows * ka), operand="%lhs")
    if track and not all_written(w):
        ctx.check_written(_logical_flags(w, da, lay, rows, ka, 16, c0)[:m, :k], operand="%lhs", ptr=lhs,
                          unit="element")
    a, finite = _logical(raw, da, lay, rows, ka, 16, c0, "lhs", check_finite)
    return a[:, :k], finite


def _read_rhs(ctx, rhs, n: int, k: int, track: bool, check_finite: bool) -> tuple:
    """Decoded ``B^T`` (``round16(n) x k``) from the Zn right tile (Zn of B is Nz of B^T), and
    (``check_finite``) whether the whole tile is finite, else None."""
    db = rhs.dtype
    kb, na, c0 = _ceil_to(k, db.c0), _ceil_to(n, 16), db.c0
    raw, w, _ = ctx.span_tracked(rhs, 0, db.nbytes(kb * na), operand="%rhs")
    if track and not all_written(w):
        ctx.check_written(_logical_flags(w, db, "Nz", na, kb, 16, c0)[:n, :k], operand="%rhs", ptr=rhs,
                          unit="element")
    bt, finite = _logical(raw, db, "Nz", na, kb, 16, c0, "rhs", check_finite)
    return bt[:, :k], finite


def _write_acc(ctx, dst, bias, prod: np.ndarray, m: int, n: int, init: str, floating: bool,
               saturate: bool, track: bool) -> int:
    """Update the whole ``rows x round16(n)`` L0C tile (Nz, 16 x 16 boxes) from the products; returns its bytes."""
    dc = dst.dtype
    mrows, na = _ceil_to(max(prod.shape[0], 16), 16), prod.shape[1]
    if prod.shape[0] != mrows:                               # GEMV: rows 1..15 are zero products
        full = np.zeros((mrows, na), prod.dtype)
        full[:prod.shape[0]] = prod
        prod = full
    m1, n1 = mrows // 16, na // 16
    nbytes = dc.nbytes(mrows * na)
    if init == "acc":
        _, old_w, _ = ctx.span_tracked(dst, 0, nbytes, operand="%dst")
        if track and not all_written(old_w):
            ctx.check_written(_logical_flags(old_w, dc, "Nz", mrows, na, 16, 16)[:m, :n], operand="%dst",
                              ptr=dst, unit="element")
    data, _ = ctx.span(dst, 0, nbytes, write=True, operand="%dst")      # the whole tile: marked written
    acc4 = data.view(dc.storage).reshape(n1, m1, 16, 16)
    prod4 = prod.reshape(m1, 16, n1, 16).transpose(2, 0, 1, 3)
    if init == "bias":
        bvals = _bias_values(ctx, bias, dc, n)
        seed = np.zeros(na, bvals.dtype)
        seed[:n] = bvals
        prod4 = prod4 + seed.reshape(n1, 1, 1, 16)
    if init != "bias" and floating and dc.name == "f32" and prod.dtype == np.float32:
        # the Nz tile is the product's 16-column strips one after another: move whole 64-byte rows of 16
        # (into the tile, or for mad_acc into a work array added to the tile in one contiguous pass:
        # the same f32 additions, about a third of the time of adding the transposed product directly)
        if init == "zero":
            data.view(_ACC_ROW).reshape(n1, mrows)[...] = prod.view(_ACC_ROW).T
        else:
            nz = _scratch("prod_nz", (n1, mrows, 16), np.float32)
            nz.view(_ACC_ROW).reshape(n1, mrows)[...] = prod.view(_ACC_ROW).T
            acc3 = acc4.reshape(n1, mrows, 16)
            np.add(acc3, nz, out=acc3)                            # one f32 rounding of old + sum
        if saturate and not _all_finite(acc4):              # as `_accumulate`
            np.nan_to_num(acc4, copy=False, nan=0.0, posinf=_F32_MAX, neginf=-_F32_MAX)
    else:
        _accumulate(acc4, prod4, dc, init, floating, saturate)
    return nbytes


_ACC_ROW = np.dtype((np.void, 64))     # one 16-channel row of an f32 L0C fractal


# ============================================================================ execute


#: A mad whose operands and clauses are all compile-time values binds (`OpSpec.bind`): its size, K-parity and
#: alignment checks run once per op site (a failing check is not kept, so it raises again on every run); the
#: unit-flag, initialisation, hazard and saturation work runs on every execution.
MAD_BIND = True

_MAD_CLAUSE_NAMES = frozenset(("unit_flag", "disable_gemv", "sat", "tf32_mode", "n_dir"))


def _mad(name: str, mx: bool, has_bias: bool, init: str):
    op = "pto." + name
    plain = not mx and not has_bias             # the forms `_mad_f16` may run

    def checked(lhs, rhs, dst, rest) -> tuple:
        """The operand checks of one mad: ``(bias, m, n, k)``."""
        bias = rest[0] if has_bias else None    # spaces, types and clause combinations were checked by verify()
        m, n, k = (check_int(op, nm, v, 1, MAD_LIMIT, hint=MAD_SIZE_HINT)
                   for nm, v in zip(("%m", "%n", "%k"), rest[-3:]))
        da, db = lhs.dtype, rhs.dtype
        if (da.bits == 4 or db.bits == 4) and k % 2:
            raise IllegalOperand(f"packed 4-bit data needs an even K, got k = {k}", op=op, operand="%k", value=k,
                                 limit="even k", hint="pad K with a zero element (and its scale group)")
        for nm, p in (("%lhs", lhs), ("%rhs", rhs), ("%dst", dst)) + ((("%bias", bias),) if has_bias else ()):
            check_align(op, p, BLOCK, nm)
        return bias, m, n, k

    def run_checked(ctx, lhs, rhs, dst, bias, m, n, k, unit_flag, disable_gemv, sat, tf32_mode):
        da, db = lhs.dtype, rhs.dtype
        gemv = m == 1 and not disable_gemv
        if unit_flag is not None:  # producer side: wait until FIXPIPE released this L0C slot
            ctx.unit_flag_check(dst, dst.dtype.nbytes(_ceil_to(m, 16) * _ceil_to(n, 16)))
        track = tracking(ctx)
        floating = da.is_float
        saturate = floating and (bool(sat) if sat is not None else ctx.machine.overflow_mode == "saturation")
        if (plain and not gemv and MAD_F16_PLAN and da.name == "f16" and db.name == "f16"
                and dst.dtype.name == "f32" and tf32_mode is None):
            nbytes = _mad_f16(ctx, lhs, rhs, dst, m, n, k, init, saturate, track)
            if unit_flag == "check_and_set":
                ctx.unit_flag_publish(dst, nbytes)
            return
        a, a_finite = _read_lhs(ctx, lhs, m, k, gemv, track, saturate)
        bt, b_finite = _read_rhs(ctx, rhs, n, k, track, saturate)
        with np.errstate(over="ignore", invalid="ignore"):  # IEEE overflow / NaN are modelled results
            if saturate:     # tiles the decoder found all finite need no normalisation
                a = a if a_finite else _sat_inputs(a, da)
                bt = bt if b_finite else _sat_inputs(bt, db)
            if tf32_mode is not None:
                a, bt = _tf32(a, tf32_mode), _tf32(bt, tf32_mode)
            if mx:
                a, bt = _mx_scaled(ctx, lhs, rhs, a, bt, m, n, k, gemv)
            # one GEMM: f32 (order implementation-defined) or f64 (exact integers), into a reused buffer
            prod = np.matmul(a, bt.T, out=_scratch("prod", (a.shape[0], bt.shape[0]), np.result_type(a, bt)))
            nbytes = _write_acc(ctx, dst, bias, prod, m, n, init, floating, saturate, track)
        if unit_flag == "check_and_set":
            ctx.unit_flag_publish(dst, nbytes)

    def execute(ctx, lhs, rhs, dst, *rest, unit_flag=None, disable_gemv=None, sat=None, tf32_mode=None,
                n_dir=None):
        run_checked(ctx, lhs, rhs, dst, *checked(lhs, rhs, dst, rest), unit_flag, disable_gemv, sat, tf32_mode)

    def bind(args, clauses):
        """`OpSpec.bind`: the operand checks once per op site (see `MAD_BIND`)."""
        if not MAD_BIND or not _MAD_CLAUSE_NAMES.issuperset(clauses):
            return None
        lhs, rhs, dst, rest = args[0], args[1], args[2], tuple(args[3:])
        flags = (clauses.get("unit_flag"), clauses.get("disable_gemv"), clauses.get("sat"), clauses.get("tf32_mode"))
        memo = [None]                           # the checked (bias, m, n, k), once they passed

        def run(ctx):
            if memo[0] is None:
                memo[0] = checked(lhs, rhs, dst, rest)
            run_checked(ctx, lhs, rhs, dst, *memo[0], *flags)
        return run
    return execute, bind


#: An ``f16 x f16 -> f32`` mad (``mad`` / ``mad_acc``, not GEMV, no ``tf32_mode``: the cube kernels' form) runs
#: `_mad_f16`: the tile geometry comes from a table per (L0A layout, m, n, k) (`_f16_plan`) instead of being
#: derived per operand per execution; the same spans, hazard reports, initialisation checks, decodes, GEMM
#: and L0C update in the same order as the general path (tests/core/test_fast_paths.py runs both, failures
#: included). False: the general path.
MAD_F16_PLAN = True

_F16_PLANS: dict = {}
_F16_PLANS_MAX = 4096        # (sizes from run-time scalars could make many: the table starts afresh past this)


def _f16_plan(lay: str, m: int, n: int, k: int) -> tuple:
    """Geometry of an f16 x f16 -> f32 mad of ``m x n x k`` with L0A layout ``lay`` (see `MAD_F16_PLAN`):
    ``(lhs bytes, lhs 4-D shape, lhs permutation, lhs logical 4-D shape, rows, ka, rhs bytes, rhs 4-D shape,
    rhs permutation, rhs logical 4-D shape, na, kb)`` as `_read_lhs` / `_read_rhs` compute them."""
    key = (lay, m, n, k)
    plan = _F16_PLANS.get(key)
    if plan is None:
        rows, ka = _ceil_to(m, 16), _ceil_to(k, 16)
        na, kb = _ceil_to(n, 16), ka
        a4, ap = _boxed(lay, rows // 16, ka // 16, 16, 16)
        b4, bp = _boxed("Nz", na // 16, kb // 16, 16, 16)
        plan = (2 * rows * ka, a4, ap, tuple(a4[i] for i in ap), rows, ka,
                2 * kb * na, b4, bp, tuple(b4[i] for i in bp), na, kb)
        if len(_F16_PLANS) >= _F16_PLANS_MAX:
            _F16_PLANS.clear()
        _F16_PLANS[key] = plan
    return plan


def _mad_f16(ctx, lhs, rhs, dst, m: int, n: int, k: int, init: str, saturate: bool, track: bool) -> int:
    """`MAD_F16_PLAN`: ``run_checked`` of an f16 x f16 -> f32 ``mad`` / ``mad_acc`` (not GEMV); returns the L0C bytes."""
    lay = l0a_layout(ctx.target)
    a_bytes, a4, ap, al, rows, ka, b_bytes, b4, bp, bl, na, kb = _f16_plan(lay, m, n, k)
    d16 = lhs.dtype
    raw, w, _ = ctx.span_tracked(lhs, 0, a_bytes, operand="%lhs")
    if track and not all_written(w):
        ctx.check_written(_logical_flags(w, d16, lay, rows, ka, 16, 16)[:m, :k], operand="%lhs", ptr=lhs,
                          unit="element")
    boxed = raw.view(np.uint16).reshape(a4).transpose(ap)
    if boxed.size > _F16_BY_TABLE and _f16_bits_exact():      # `_decode_f16`, inlined
        a, a_finite = _f16_to_f32_finite(boxed, _scratch("lhs", al, np.int32))
    else:
        a, a_finite = _decode_f16(boxed, d16, saturate)
    a = a.reshape(rows, ka)[:, :k]
    raw, w, _ = ctx.span_tracked(rhs, 0, b_bytes, operand="%rhs")
    if track and not all_written(w):
        ctx.check_written(_logical_flags(w, d16, "Nz", na, kb, 16, 16)[:n, :k], operand="%rhs", ptr=rhs,
                          unit="element")
    boxed = raw.view(np.uint16).reshape(b4).transpose(bp)
    if boxed.size > _F16_BY_TABLE and _f16_bits_exact():
        bt, b_finite = _f16_to_f32_finite(boxed, _scratch("rhs", bl, np.int32))
    else:
        bt, b_finite = _decode_f16(boxed, d16, saturate)
    bt = bt.reshape(na, kb)[:, :k]
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE overflow / NaN are modelled results
        if saturate:
            a = a if a_finite else _sat_inputs(a, d16)
            bt = bt if b_finite else _sat_inputs(bt, d16)
        prod = np.matmul(a, bt.T, out=_scratch("prod", (rows, na), np.float32))
        # `_write_acc` of an f32 tile of ``rows x na`` (rows >= 16): the Nz tile is the product's 16-column strips
        # one after another (for mad_acc into a work array added to the tile in one contiguous pass)
        c_bytes = 4 * rows * na
        n1 = na >> 4
        if init == "acc":                   # the old tile read (its used part checked), then overwritten whole
            def check(old_w):
                if track and not all_written(old_w):
                    ctx.check_written(_logical_flags(old_w, dst.dtype, "Nz", rows, na, 16, 16)[:m, :n],
                                      operand="%dst", ptr=dst, unit="element")
            data = ctx.span_rmw(dst, 0, c_bytes, check, operand="%dst")
        else:
            data, _ = ctx.span(dst, 0, c_bytes, write=True, operand="%dst")  # the whole tile: marked written
        if init == "zero":
            data.view(_ACC_ROW).reshape(n1, rows)[...] = prod.view(_ACC_ROW).T
            acc = data.view(np.float32)
        else:
            nz = _scratch("prod_nz", (n1, rows, 16), np.float32)
            nz.view(_ACC_ROW).reshape(n1, rows)[...] = prod.view(_ACC_ROW).T
            acc = data.view(np.float32).reshape(n1, rows, 16)
            np.add(acc, nz, out=acc)                              # one f32 rounding of old + sum
        # `all_finite` (its errstate is this one already)
        if saturate and not (_below_by_dot(acc, np.inf) or np.isfinite(acc).all()):
            np.nan_to_num(acc, copy=False, nan=0.0, posinf=_F32_MAX, neginf=-_F32_MAX)
        return c_bytes


def _decode_f16(boxed: np.ndarray, d16: DType, check_finite: bool) -> tuple:
    """`_decode_finite` / `_decode` of an f16 tile (as raw codes) that the bit moves do not take: the table
    gather, and (``check_finite``) whether it is all finite, else None."""
    if check_finite:
        return _decode_finite(boxed, d16)
    return _decode_any(boxed, d16), None


def _accumulate(acc4: np.ndarray, prod4: np.ndarray, dc: DType, init: str, floating: bool, saturate: bool) -> None:
    """Write ``prod4`` (+ the old value for ``mad_acc``) into the L0C view in the accumulator type."""
    if not floating:
        res = np.rint(prod4).astype(np.int64)
        if init == "acc":
            res = res + acc4.astype(np.int64)
        acc4[...] = res.astype(dc.storage)                        # wrap modulo 2**32
    elif dc.name == "f32":
        if init == "acc":
            acc4 += prod4                                         # one f32 rounding of old + sum
        else:
            acc4[...] = prod4
        if saturate and not _all_finite(acc4):              # the f32 sum cannot exceed the range otherwise
            np.nan_to_num(acc4, copy=False, nan=0.0, posinf=_F32_MAX, neginf=-_F32_MAX)
    else:
        res = prod4.astype(np.float32)
        if init == "acc":
            res = acc4.astype(np.float32) + res
        if saturate:
            res = _sat_result(res, dc)
        acc4[...] = res.astype(dc.storage)                        # f16 accumulators: one RNE rounding


def _bias_values(ctx, bias, dc: DType, n: int) -> np.ndarray:
    """The N bias values from BT (32-bit slots; an f16 bias sits in the low half of its slot)."""
    raw, w, _ = ctx.span_tracked(bias, 0, 4 * n, operand="%bias")
    slots = raw.reshape(n, 4)
    if dc.name == "f16":
        ctx.check_written(w.reshape(n, 4)[:, :2], operand="%bias", ptr=bias)
        return np.ascontiguousarray(slots[:, :2]).view(np.float16).reshape(n).astype(np.float32)
    ctx.check_written(w, operand="%bias", ptr=bias)
    vals = np.ascontiguousarray(slots).view(dc.storage).reshape(n)
    return vals.astype(np.float64 if dc.is_int else np.float32)


# ============================================================================ table rows

_MAD_CLAUSES = (
    Clause("unit_flag", "word", values=("check_only", "check_and_set"),
           doc="producer side of the L0C handshake: check_and_set publishes the dst tile to FIXPIPE"),
    Clause("disable_gemv", "flag", doc="m == 1 with the normal left-tile organisation instead of GEMV"),
    Clause("sat", "sat", doc="sat: normalise exceptional inputs, saturate results; nosat: IEEE"),
    Clause("tf32_mode", "word", values=("round_even", "round_away"), doc="f32 x f32 -> f32: round inputs to TF32"),
    Clause("n_dir", "flag", doc="N-direction production order (no numeric effect)"),
)
_MX_CLAUSES = tuple(c for c in _MAD_CLAUSES if c.name != "tf32_mode")

_INIT_DOC = {"zero": "dst = lhs @ rhs", "acc": "dst += lhs @ rhs", "bias": "dst = lhs @ rhs + bias[n]"}

for _name, _mx, _init in (("mad", False, "zero"), ("mad_acc", False, "acc"), ("mad_bias", False, "bias"),
                          ("mad_mx", True, "zero"), ("mad_mx_acc", True, "acc"), ("mad_mx_bias", True, "bias")):
    _has_bias = _init == "bias"
    _ops = (Operand("lhs", "ptr", ("l0a",)), Operand("rhs", "ptr", ("l0b",)), Operand("dst", "ptr", ("l0c",)))
    if _has_bias:
        _ops += (Operand("bias", "ptr", ("bt",), doc="N bias values, dst element type"),)
    _ops += (Operand("m", "int"), Operand("n", "int"), Operand("k", "int"))
    _exec_bind = _mad(_name, _mx, _has_bias, _init)
    register(OpSpec(
        _name, "cube", "M", operands=_ops, clauses=_MX_CLAUSES if _mx else _MAD_CLAUSES,
        execute=_exec_bind[0], bind=_exec_bind[1], verify=_verify(_mx, _has_bias),
        doc=("MX " if _mx else "") + _INIT_DOC[_init]))
