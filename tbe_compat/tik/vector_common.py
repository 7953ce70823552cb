"""Shared machinery of the TIK vector families (tik_api.md §9.1): argument checks, TIK's
extent and overlap rules, and the emission of one ``pto.ub.*`` op per call.

Every vector API resolves its arguments here, so the checks are TIK's everywhere:

* **repeat_times**: an immediate must be in ``[1, 255]`` (an immediate 0 is an error);
  a Scalar/Expr may be 0 at run time (the op is then a no-op).
* **mask** (`MaskArg`): an int/Scalar/Expr count ``[1, PAR]`` (contiguous mode), or a
  list ``[hi, lo]`` of lane bits (``hi == 0`` for 32-bit operands, ``lo < 2**32`` for
  64-bit, ``[0, 0]`` illegal; four words for 8-bit operands); ``PAR = 256 / (bytes of
  the widest operand)``. ``mask_mode="counter"`` makes it an element count
  ``[1, 2**32-1]`` on chips with counter mode (tik_api.md §9.1; other chips treat it as
  a normal-mode count, as TIK does); like TIK only an immediate is range-checked here: a
  Scalar count of 0 at run time processes nothing (``COUNTER_ZERO_AT_RUN_TIME_IS_NOOP``,
  ``pto_core/ops/vector_engine.py``).
* **strides**: ints or integer Scalars/Exprs in the encoding's range (8-bit block and
  repeat strides for two-source ops, 16-bit block strides for one-source ops).
* **operands**: UB tensors whose start is 32-byte aligned (static offsets).
* **tensor overflow**: the element range an instruction touches is checked against
  the view's storage (TIK's ``original_shape``) with TIK's formula
  (`max_offset`, ``tik_tensor_op._calculate_vecotor_max_offset``): statically when
  everything is known, else by a ``pto.assert_in_bounds`` placed before the op (so a
  view that starts out of range is fine as long as the run-time repeat count is 0 --
  CHECKLIST S11).
* **overlap**: with static operands in one tensor, TIK's rules (`check_overlap`): with
  one repeat a source may overlap the destination only if it is the same range with
  the same block stride; with several repeats no repeat may read what the previous
  repeat wrote -- except vadd/vsub/vmul/vmax/vmin/vand/vor (f16/s32/f32) with
  ``dst`` == ``src1`` and both repeat strides 0 (the accumulate idiom).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from pto_core import program as P
from pto_core.errors import OutOfBounds, UnsupportedOp
from pto_core.ops.vector_engine import DST_BLOCK_STRIDE_ZERO_IS_ONE
from pto_core.program import I64

from .. import platform
from .api import Operand, TikBase
from .scalar import Expr, Scalar

BLOCK = 32
BLOCKS = 8
MAX_REPEAT = 255
MAX_COUNTER = 2 ** 32 - 1
U8, U16 = 255, 65535
#: TIK ``DTYPE_MAP``: tensor dtype -> short code used in instruction dtype strings.
SHORT = {"float16": "f16", "float32": "f32", "int32": "s32", "int16": "s16", "int8": "s8", "uint8": "u8",
         "uint16": "u16", "uint32": "u32", "int64": "s64", "uint64": "u64", "bfloat16": "bf16"}
#: TIK vconv round_mode -> CANN conversion suffix
ROUND_MODES = {"": "", "none": "", "round": "r", "floor": "f", "ceil": "c", "ceiling": "c", "away-zero": "a",
               "to-zero": "z", "odd": "o"}
#: binary instructions whose dst may alias src1 over several repeats (accumulate idiom)
CAN_OVERLAP_SRC1 = ("vadd", "vsub", "vmul", "vmax", "vmin", "vor", "vand")


# ----------------------------------------------------------------------------- int-or-IR arithmetic

def _i(v):
    return v if isinstance(v, int) else P.cast(v, I64)


def iadd(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return P.binop("add", _i(a), _i(b))


def isub(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    return P.binop("sub", _i(a), _i(b))


def imul(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if (isinstance(a, int) and a == 0) or (isinstance(b, int) and b == 0):
        return 0
    if isinstance(b, int) and b == 1:
        return a
    if isinstance(a, int) and a == 1:
        return b
    return P.binop("mul", _i(a), _i(b))


def idiv(a, b):
    """Truncating division of non-negative values."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return P.binop("div", _i(a), _i(b))


def irem(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a % b
    return P.binop("rem", _i(a), _i(b))


def ieq(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return P.cmp("eq", _i(a), _i(b))


def isel(c, a, b):
    if isinstance(c, (bool, np.bool_)):
        return a if c else b
    return P.select(c, _i(a), _i(b))


def imax(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return P.max_(_i(a), _i(b))


def ceil_div(a, b):
    return idiv(iadd(a, b - 1), b)


def _word_bit_length(w, lo: int = 0, hi: int = 64):
    """Bit length (0 for 0) of the uint64 IR value ``w``, known to lie in ``[lo, hi]``: a select tree
    of depth 7 over comparisons with powers of two (each run evaluates one path)."""
    if lo == hi:
        return lo
    mid = (lo + hi + 1) // 2                      # bit length >= mid  <=>  w >= 2**(mid-1)
    return P.select(P.cmp("ge", w, 2 ** (mid - 1)), _i(_word_bit_length(w, mid, hi)),
                    _i(_word_bit_length(w, lo, mid - 1)))


#: Named choice FLOAT_MASK_REFUSED: a float mask immediate (``8.0``, ``np.float64(8.0)``, a float word of a bit-mask
#: list) is an `IllegalOperand` naming the int to write, even when its value is whole. te.tik 2019's ``mask_concat``
#: (``_mask_concat_freeze``: ``check_type_match(msk, int, "mask should be int, input type is ...")`` for a contiguous
#: immediate; counter mode ``_mask_concat_counter_mode``: ``check_type_match(mask, (int, Expr, Scalar), ...)``) refuses it;
#: CANN 8.1's mask check is not in the stored source and the TIK reference types the mask as int / Scalar / Expr /
#: list (tik_api.md §9.1). The facade took a whole float as its int before (the §9 audit, spec434). False restores
#: that. migration_guide/tik_vector.md (mask).
FLOAT_MASK_REFUSED = True


def mask_bit_length(words):
    """Last active lane + 1 of a bit mask given as 64-bit words, highest first (ints or IR values);
    0 when no bit is set. An int when every word is an int."""
    n = len(words)
    length = 0
    for k in range(n - 1, -1, -1):                # from the lowest word up: a set higher word wins
        w, base = words[k], (n - 1 - k) * 64
        if isinstance(w, int):
            length = base + w.bit_length() if w else length
            continue
        w = P.cast(w, "u64")
        length = P.select(P.cmp("ne", w, 0), _i(iadd(base, _word_bit_length(w))), _i(length))
    return length


# ----------------------------------------------------------------------------- TIK's extent formula

def max_offset(repeat, mask_len, blk, rep, unit: int, block_len: int, nblock: int = BLOCKS):
    """Elements from an operand's start to one past the last element an instruction touches
    (TIK ``_calculate_vecotor_max_offset``): ``repeat`` repeats, lanes up to ``mask_len``,
    ``block_len`` elements per 32 B block. Works on ints or IR values; 0 when ``repeat`` is 0.
    A block stride of 0 adds nothing for the blocks after the first (they overlap it): Huawei's own
    yuv444_2_yuv422 op writes 8 lanes of an 8-element uint16 tensor with ``vector_dup(8, t, v, 1, 0, 0)``."""
    nb_last = ceil_div(mask_len, block_len)
    rem = irem(mask_len, block_len)
    ele_last = isel(ieq(rem, 0), block_len, rem)
    r1 = isub(repeat, 1)
    b1 = isub(nb_last, 1)
    if unit == 0:
        off = iadd(imul(iadd(imul(r1, rep), imul(b1, blk)), block_len), ele_last)
    elif unit == 1:
        per = iadd(iadd(rep, imul(nblock - 1, blk)), 1)
        off = iadd(imul(iadd(imul(r1, per), imul(b1, blk)), block_len), ele_last)
    elif unit == 2:
        off = iadd(iadd(imul(r1, rep), imul(b1, iadd(blk, block_len))), ele_last)
    else:
        per = iadd(iadd(rep, imul(nblock - 1, iadd(blk, block_len))), block_len)
        off = iadd(iadd(imul(r1, per), imul(b1, iadd(blk, block_len))), ele_last)
    return isel(ieq(repeat, 0), 0, off)


def dst_block_stride(blk, unit: int):
    """The block stride a destination operand moves by: 0 acts as 1 under ``stride_unit`` 0 and 1
    (`pto_core.ops.vector_engine.DST_BLOCK_STRIDE_ZERO_IS_ONE`; TIK's front end checks a 0 with its
    ``_MIN_DST_BLK_STRIDE = 1``). Int or IR."""
    if unit not in (0, 1) or not DST_BLOCK_STRIDE_ZERO_IS_ONE:
        return blk
    if isinstance(blk, int):
        return 1 if blk == 0 else blk
    return isel(ieq(blk, 0), 1, blk)


#: What a legacy ``(block stride, repeat stride)`` counts under each ``stride_unit`` (tik_api.md §9.1:
#: 0 stride & stride in 32 B; 1 stride & gap in 32 B; 2 gap & stride in elements; 3 gap & gap in
#: elements); used only in the Fix text of an out-of-range stride.
STRIDE_UNIT_COUNTS = {
    0: ("32-byte blocks", "32-byte blocks"),
    1: ("32-byte blocks", "32-byte blocks of gap after the previous repeat's last block"),
    2: ("elements of gap between blocks", "elements"),
    3: ("elements of gap between blocks", "elements of gap after the previous repeat's last block"),
}


# ----------------------------------------------------------------------------- argument records

@dataclass
class MaskArg:
    """A resolved TIK mask.

    Attributes:
        clause: ``{"mask": value}`` or ``{"counter": value}`` for the PTO op (ints or IR).
        counter: counter mode (``mask_mode="counter"`` on a chip that has it).
        length: last active lane + 1 (int or IR; None when unknown at trace time).
        lanes: bool array of the active lanes of one repeat (static masks only).
        par: lanes per repeat.
    """

    clause: dict
    counter: bool
    length: object
    lanes: Optional[np.ndarray]
    par: int

    @property
    def static(self) -> bool:
        return self.lanes is not None


@dataclass
class Geo:
    """Block/repeat stride of one memory operand (ints or IR values, TIK units)."""

    blk: object
    rep: object


def par_of(*dtypes) -> int:
    return 256 // max(max(1, d.bits // 8) for d in dtypes)


class VectorBase(TikBase):
    """Argument helpers and emission shared by the vector API families."""

    # ------------------------------------------------------------------ select mode
    def _select_mode(self, mode, api: str, hint: str) -> int:
        """The immediate select ``mode`` (0, 1 or 2) of ``api``; v100 chips (Ascend310/910) have mode 0 only."""
        m_ = self._int_arg(mode, "mode", 0, 2)
        if not isinstance(m_, int):
            raise self._error("mode must be an immediate 0, 1 or 2", operand="mode", value=repr(mode),
                              hint="pass the select mode as a Python int: it picks the instruction form when "
                                   "the kernel is traced, so a Scalar cannot choose it at run time")
        soc = platform.current_soc()
        if m_ != 0 and soc.short_soc_version in ("Ascend310", "Ascend910"):
            raise self._error(f"{soc.soc_version} supports only mode 0 of {api}", operand="mode", value=m_,
                              limit="0", cls=UnsupportedOp, hint=hint)
        return m_

    # ------------------------------------------------------------------ operands
    def _vec_operand(self, t, name: str, dtypes: Optional[tuple] = None, align: int = BLOCK) -> Operand:
        op = self._operand(t, name, spaces=("ub",), dtypes=dtypes)
        if align:
            op.check_aligned(align)
        return op

    def _require_instr(self, instr: str, dtype: str, api: Optional[str] = None, what: Optional[str] = None) -> None:
        """TIK's per-instruction chip check (``intrinsic_check_support("Intrinsic_<instr>", dtype)``,
        the ini tables). Chips without a public table are checked by the op verifier instead."""
        try:
            ok = platform.intrinsic_check_support("Intrinsic_" + instr, dtype)
        except platform.PlatformDataMissing:
            return
        if not ok:
            soc = platform.current_soc()
            api = api or (self._where.call if self._where else "tik." + instr)
            wanted = what or dtype
            msg = (f"{api} does not support {wanted} on {soc.soc_version} {soc.core_type}" if wanted
                   else f"{api} is not available on {soc.soc_version} {soc.core_type}")
            if not platform.intrinsic_check_support("Intrinsic_" + instr):
                # the chip has no such instruction at all: no dtype would help
                raise self._error(f"{msg} (the chip has no {instr} instruction)", operand="chip",
                                  value=soc.soc_version, cls=UnsupportedOp,
                                  hint="select a chip that has it (api_check_support tells) or express it with "
                                       "instructions this chip has")
            raise self._error(msg,
                              operand="dtype", value=dtype, cls=UnsupportedOp,
                              hint="use a supported dtype (convert with vconv/vec_conv) or select a chip that has "
                                   "it (api_check_support tells)")

    def _same_dtype(self, ref: Operand, *others: Operand) -> None:
        for o in others:
            if o.dt is not ref.dt:
                raise self._error(f"{o.name}'s dtype {o.tensor.dtype} should be equal to {ref.name}'s dtype "
                                  f"{ref.tensor.dtype}", operand=o.name, value=o.tensor.dtype,
                                  limit=ref.tensor.dtype,
                                  hint=f"pass {ref.tensor.dtype} tensors for both (convert {o.name} first with "
                                       f"vconv/vec_conv)")

    # ------------------------------------------------------------------ integer arguments
    def _vec_repeat(self, repeat, name: str = "repeat_times", hi: int = MAX_REPEAT, imm_lo: int = 1):
        """TIK repeat_times: immediate in ``[imm_lo, hi]``; Scalar/Expr any value in ``[0, hi]`` at run time."""
        return self._int_arg(repeat, name, imm_lo, hi,
                             hint=f"an immediate repeat_times is {imm_lo}..{hi}; split longer work into several "
                                  f"calls (a Scalar may be 0 at run time)")

    def _legacy_stride(self, v, name: str, hi: int, stride_unit: int, rep: bool):
        """A legacy block (``rep=False``) or repeat stride; the Fix names what it counts under ``stride_unit``."""
        return self._vec_stride(v, name, hi, STRIDE_UNIT_COUNTS[stride_unit][int(rep)])

    def _vec_stride(self, v, name: str, hi: int, unit: str = "32-byte blocks"):
        return self._int_arg(v, name, 0, hi, hint=f"{name} counts {unit}: pass 0..{hi} (an int, or an "
                                                   f"integer Scalar)")

    def _given(self, v, name: str):
        """``v`` of a legacy form's block stride: the helpers read None as "the vec_* form, no block
        stride", so a None the script passed is refused here (as every other integer argument is)."""
        if v is None:
            self._int_arg(v, name)
        return v

    def _vec_stride_unit(self, v):
        u = self._int_arg(v, "stride_unit", 0, 3)
        if not isinstance(u, int):
            raise self._error("stride_unit must be an immediate int 0..3", operand="stride_unit", value=repr(v),
                              hint="pass 0 (block strides in blocks, the default), 1, 2 or 3 as a Python int")
        return u

    # ------------------------------------------------------------------ scalars
    def _vec_scalar(self, value, dtype: str, name: str):
        """A scalar operand: int/float immediate, or a Scalar/Expr of the operand dtype (TIK's rule)."""
        if isinstance(value, Expr):
            if isinstance(value, Scalar) and value.dtype != dtype:
                raise self._error(f"{name}'s dtype {value.dtype} should be equal to the tensor dtype {dtype}",
                                  operand=name, value=value.dtype, limit=dtype,
                                  hint=f"use a {dtype} Scalar (s.astype('{dtype}') converts an Expr)")
            return value.ir
        if isinstance(value, P.Expr) and not value.is_ptr:        # already resolved by a facade helper
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, np.generic):
                return value.item()
            raise self._error(f"{name} should be int, float, Scalar or Expr, got {type(value).__name__}",
                              operand=name, value=repr(value),
                              hint=f"pass a number or a {dtype} Scalar (read a tensor element into a Scalar first)")
        return value

    # ------------------------------------------------------------------ mask
    def _gather_mask(self, mask, dt, mask_mode: str) -> MaskArg:
        """The mask of ``vreduce`` / ``vreducev2``: in normal mode ``None`` selects every lane (the hardware
        ignores the mask there; CANN's NMS ops pass ``None``); otherwise as ``_vec_mask``."""
        if mask is None and mask_mode == "normal":
            mask = par_of(dt)
        return self._vec_mask(mask, [dt], mask_mode=mask_mode)

    @staticmethod
    def _gather_per_repeat(m: MaskArg) -> bool:
        """Counter-mode ``vreduce``/``vreducev2`` on a chip that runs ``count`` elements per repeat
        (`pto_core.vector_isa.GATHER_COUNTER_PER_REPEAT`; tik_vector.md §5c)."""
        from pto_core import vector_isa
        return m.counter and vector_isa.gather_counter_per_repeat(platform.current_soc().profile)

    def _gather_extent(self, op: Operand, m: MaskArg, repeat, geo: Geo, unit: int):
        """Elements the source of ``vreduce``/``vreducev2`` touches: TIK's formula, or on a per-repeat chip in
        counter mode ``repeat`` runs of ``count`` elements (chunks of PAR lanes ``8 * blk`` blocks apart)
        ``rep`` blocks apart."""
        if not self._gather_per_repeat(m):
            return self._vec_extent(op, m, repeat, geo, unit)
        block_len = BLOCK * 8 // op.dt.bits
        one = self._vec_extent(op, m, 1, Geo(geo.blk, imul(geo.blk, max(1, m.par // block_len))), unit)
        if one is None or not isinstance(repeat, int) or not isinstance(geo.rep, int):
            return None
        return 0 if repeat == 0 else iadd(one, imul(repeat - 1, geo.rep * block_len))

    def _pattern_access(self, p: Operand, m: MaskArg, repeat, src1_rep_stride, src_dt):
        """Footprint of a ``vreduce`` / ``vreducev2`` pattern tensor, checked as TIK checks it
        (``check_vreduce_src1_overflow``): PAR bits per repeat read one after another (stride 0: one
        repeat's bits); counter mode: ``ceil(count / word bits)`` words (stride 0: at most one repeat's;
        on a per-repeat chip, each repeat's ``count`` bits from ``repeat * stride`` PAR-bit units)."""
        word = p.dt.bits
        per_repeat = par_of(src_dt) // word
        if not isinstance(src1_rep_stride, int):
            return self._vec_access(p, None, False)
        if m.counter:
            count = m.clause["counter"]
            if not isinstance(count, int):
                return self._vec_access(p, None, False)
            words = -(-count // word)
            if self._gather_per_repeat(m):
                if not isinstance(repeat, int):
                    return self._vec_access(p, None, False)
                return self._vec_access(p, 0 if repeat == 0 else (repeat - 1) * src1_rep_stride * per_repeat + words,
                                        False)
            return self._vec_access(p, min(words, per_repeat) if src1_rep_stride == 0 else words, False)
        if src1_rep_stride == 0:
            return self._vec_access(p, per_repeat, False)
        return self._vec_access(p, imul(repeat, per_repeat) if isinstance(repeat, int) else None, False)

    def _vec_mask(self, mask, dtypes, *, mask_mode: str = "normal") -> MaskArg:
        """Resolve a TIK mask for operands of ``dtypes`` (the widest decides PAR)."""
        par = par_of(*dtypes)
        if FLOAT_MASK_REFUSED:
            for w in (mask if isinstance(mask, (list, tuple)) else [mask]):
                if isinstance(w, (float, np.floating)):
                    n = int(w) if float(w).is_integer() else None
                    raise self._error(f"mask should be int, got {type(w).__name__} {w!r}", operand="mask",
                                      value=repr(w), limit="an int, Scalar or Expr (or a list of them)",
                                      hint=(f"write {n}" if n is not None else "pass a whole number of lanes as an "
                                            "int") + " (TIK checks a mask immediate with isinstance(mask, int))")
        if mask_mode not in ("normal", "counter"):
            raise self._error(f"mask_mode should be 'normal' or 'counter', got {mask_mode!r}", operand="mask_mode",
                              value=mask_mode, limit="normal, counter", hint="pass mask_mode='normal' or 'counter'")
        counter = mask_mode == "counter"
        if counter:
            from pto_core import vector_isa
            has = vector_isa.has_counter_mode(platform.current_soc().profile)
            if isinstance(mask, (list, tuple)):
                raise self._error("in counter mode the mask is an element count (int or Scalar)", operand="mask",
                                  value=repr(mask), hint="pass the number of elements to process as an int or Scalar")
            hi = MAX_COUNTER if has else par
            n = self._int_arg(mask, "mask", 1, hi, hint="counter mode: mask = elements to process in total (an immediate 0 is an "
                                   "error, as TIK checks; skip the instruction, or pass a Scalar: a run-time 0 "
                                   "is a no-op, COUNTER_ZERO_AT_RUN_TIME_IS_NOOP)" if has
                              else f"{platform.current_soc().soc_version} has no counter mode; TIK treats the mask "
                                   f"as a normal-mode count 1..{par}")
            if not has:
                lanes = None if not isinstance(n, int) else np.arange(par) < n
                return MaskArg({"counter": n}, False, n, lanes, par)
            return MaskArg({"counter": n}, True, None, None if not isinstance(n, int) else np.ones(par, bool), par)
        if isinstance(mask, (list, tuple)):
            words = list(mask)
            want = 4 if par == 256 else 2
            if len(words) != want:
                raise self._error(f"a bit mask for {'8' if par == 256 else str(2048 // par)}-bit operands is a list "
                                  f"of {want} ints, got {len(words)}", operand="mask", value=repr(mask),
                                  limit=f"{want} words, highest first",
                                  hint=f"pass [{', '.join(f'mask_{i}' for i in range(want - 1, -1, -1))}] (64-bit "
                                       f"words, highest first), or an int count 1..{par} of leading lanes")
            vals = [self._int_arg(w, "mask", 0, 2 ** 64 - 1, hint="each mask word is a 64-bit unsigned int (bit i "
                                                                   "selects lane i of its 64)") for w in words]
            # SIGNED_MASK_WORD_BITS: TIK types run-time mask words as int64 Scalars (the TIK reference: "Scalar
            # (int64)", range [0, 2**64-1]), so a word with bit 63 set can only be a negative int64; the mask
            # register takes its 64-bit pattern (C conversion to uint64). CANN mat_mul_softmax_dropout_matmul
            # builds its pad-column mask as -1 minus the cleared bits.
            vals = [P.cast(v, "u64") if not isinstance(v, int) and v.type.kind == "s" else v for v in vals]
            if not all(isinstance(v, int) for v in vals):
                if par == 64 and not isinstance(vals[0], int):
                    # a run-time high word for 64-lane (32-bit) operands selects nothing: the lanes are the low
                    # word's bits (CANN's arg_max_with_value passes [mask_l, mask_l] Scalars to f32/int32 ops)
                    vals[0] = 0
                # the last active lane + 1 is known when the op runs: the extent checks use it, as TIK's
                # debugger checks a run-time mask's lanes against the tensor (DYNAMIC_MASK_EXTENT)
                return MaskArg({"mask": tuple(vals)}, False, mask_bit_length(vals), None, par)
            lanes = _bit_lanes(vals, par)
            if par == 64 and vals[0] != 0:
                raise self._error("mask_h should be 0 for 32-bit operands (only 64 lanes exist)", operand="mask",
                                  value=[hex(v) for v in vals], limit="[0, lo]",
                                  hint="pass [0, mask_l]: bit i of mask_l selects lane i")
            if par == 32 and (vals[0] != 0 or vals[1] > 2 ** 32 - 1):
                raise self._error("for 64-bit operands mask_h should be 0 and mask_l at most 2**32-1", operand="mask",
                                  value=[hex(v) for v in vals], limit="[0, <= 2**32-1]",
                                  hint="pass [0, mask_l] with mask_l < 2**32: 32 lanes exist")
            if not lanes.any():
                raise self._error("mask should not be all zero", operand="mask", value=list(vals),
                                  hint="an all-zero bit mask selects no element; skip the instruction instead")
            length = int(np.nonzero(lanes)[0][-1]) + 1
            return MaskArg({"mask": tuple(vals)}, False, length, lanes, par)
        n = self._int_arg(mask, "mask", 1, par,
                          hint=f"a contiguous mask counts the active elements of a repeat, 1..{par} for these "
                               f"operands")
        lanes = None if not isinstance(n, int) else np.arange(par) < n
        return MaskArg({"mask": n}, False, n, lanes, par)

    # ------------------------------------------------------------------ extent checks and footprints
    def _vec_extent(self, op: Operand, m: MaskArg, repeat, geo: Geo, unit: int, *, lanes_par: Optional[int] = None):
        """Elements ``op`` touches from its start (int or IR; None if unknown), TIK's formula (a ``dst``
        block stride of 0 counts as 1, as TIK's own check and the op do: `dst_block_stride`)."""
        block_len = BLOCK * 8 // op.dt.bits
        if op.name == "dst":
            geo = Geo(dst_block_stride(geo.blk, unit), geo.rep)
        key = (m, m.length, m.clause.get("counter"), repeat, geo.blk, geo.rep, unit, block_len, lanes_par)
        last = self.__dict__.get("_vec_extent_last")
        if last is not None and all(a is b for a, b in zip(last[0], key)):
            return last[1]          # the operands of one instruction: the same (pure) expression, built once
        n = self._vec_extent_of(m, repeat, geo, unit, block_len, lanes_par)
        self._vec_extent_last = (key, n)
        return n

    def _vec_extent_of(self, m: MaskArg, repeat, geo: Geo, unit: int, block_len: int, lanes_par: Optional[int]):
        if m.counter:
            if not isinstance(m.clause["counter"], int):
                return None
            n = m.clause["counter"]
            par = lanes_par or m.par
            rep = -(-n // par)
            tail = n - (rep - 1) * par
            full = max_offset(rep - 1, par, geo.blk, geo.rep, unit, block_len) if rep > 1 else 0
            last = max_offset(rep, tail, geo.blk, geo.rep, unit, block_len)
            return imax(full, last)
        if m.length is None:
            return None
        if isinstance(m.length, int):
            return max_offset(repeat, m.length, geo.blk, geo.rep, unit, block_len)
        # a run-time mask may select no lane (a Scalar count is at least 1, a bit mask may be all zero):
        # the op then touches nothing
        return isel(ieq(m.length, 0), 0, max_offset(repeat, m.length, geo.blk, geo.rep, unit, block_len))

    def _vec_access(self, op: Operand, extent, write: bool, hint: str | None = None, *, block_tail: bool = False):
        """Check ``extent`` elements from ``op``'s start against its tensor; return the footprint.

        Static extent and offset: TIK's trace-time "tensor overflow" error. Otherwise a
        ``pto.assert_in_bounds`` is recorded before the op (run-time check). ``hint``: what to do
        if the check fails (the same advice in both cases). ``block_tail``: the access may also cover the
        rest of the tensor's last 32-byte block, which its 32-byte aligned on-chip allocation owns
        (VCMPV_DST_BLOCK_TAIL)."""
        size = max(1, op.dt.bits // 8)
        t = op.tensor
        total = t.storage_elements
        if block_tail and isinstance(total, int) and t.storage.space != "gm":
            total = -(-total * size // 32) * 32 // size
        off = t.offset
        if extent is None:
            return op.write(None) if write else op.read(None)
        room = self._chain_room(t.storage) if write else None
        if room is not None:        # DYNAMIC_TENSOR_RUNTIME_CHAIN: the bytes up to the next tensor, known at run time
            self._record_check(off, iadd(off, extent), room[0] * 8 // op.dt.bits,
                               f"{op.name} (tensor {t.name!r}, placed without max_mem_size)", room[1])
        if isinstance(extent, int) and isinstance(off, int) and isinstance(total, int):
            if extent == 0:
                return op.write(0) if write else op.read(0)
            if off < 0:
                raise self._error(f"{op.name} tensor overflow: the view starts {-off} elements before tensor "
                                  f"{t.name!r}", operand=op.name, value=off, cls=OutOfBounds,
                                  hint=f"start the {op.name} view at element 0 of {t.name!r} or later")
            if off + extent > total:
                if self._may_not_run():          # see TikBase._may_not_run: checked if it runs
                    self._record_check(off, off + extent, total, f"{op.name} (tensor {t.name!r})", hint)
                    return op.write(extent * size) if write else op.read(extent * size)
                room = "" if total == t.storage_elements else \
                    f", {t.storage_elements} plus the rest of its last 32-byte block"
                raise self._error(f"{op.name} tensor overflow, expected elements nums: {off + extent}, actual "
                                  f"elements nums: {total} (tensor {t.name!r}{room})", operand=op.name,
                                  value=off + extent, limit=total, cls=OutOfBounds,
                                  hint=hint or "check repeat_times, the mask and the strides against the tensor's shape")
            return op.write(extent * size) if write else op.read(extent * size)
        what = f"{op.name} (tensor {t.name!r})"
        self._record_check(off, iadd(off, extent), total, what, hint)
        if isinstance(extent, int) and isinstance(off, int):
            return op.write(extent * size) if write else op.read(extent * size)
        return op.write(None) if write else op.read(None)

    def _dst_room(self, op: Operand):
        """Elements from ``op``'s start to the end of its tensor (an int, or an IR value for run-time
        offsets): the bound an op that writes a data-dependent count (``vreduce``) is given."""
        return isub(op.tensor.storage_elements, op.tensor.offset)

    def _dst_tensor_words(self, op: Operand) -> str:
        """``op``'s tensor as the ``dst_tensor`` attribute names it in a ``dst_limit`` error."""
        n = op.tensor.storage_elements
        return f"tensor {op.tensor.name!r}" + (f" of {n} elements" if isinstance(n, int) else "")

    def _record_check(self, first, end, size, what: str, hint: str | None = None) -> None:
        if hint:
            self._emit("assert_in_bounds", _i(first), _i(end), _i(size), what=what, hint=hint)
        else:
            self._emit("assert_in_bounds", _i(first), _i(end), _i(size), what=what)

    # ------------------------------------------------------------------ overlap (TIK's static rules)
    def _vec_overlap(self, api: str, instr: str, dst: Operand, srcs, m: MaskArg, repeat, geos: dict, unit: int,
                     *, dst_block_len: Optional[int] = None) -> None:
        """TIK's address-overlap errors for sources in the destination's tensor (static cases only)."""
        if not isinstance(repeat, int) or repeat <= 0 or not m.static:
            return
        if m.counter:
            rep = -(-m.clause["counter"] // m.par)
            rem = m.clause["counter"] % m.par or m.par
            lanes = np.arange(m.par) < rem
            repeat = rep
        else:
            lanes = m.lanes
        for src in srcs:
            if src.tensor.storage is not dst.tensor.storage:
                continue
            gd, gs = geos[dst.name], geos[src.name]
            vals = (gd.blk, gd.rep, gs.blk, gs.rep, dst.static_offset, src.static_offset)
            if not all(isinstance(v, int) for v in vals):
                continue
            if (src.name == "src1" and instr in CAN_OVERLAP_SRC1 and repeat > 1 and
                    dst.tensor.dtype in ("float16", "int32", "float32")):
                if (dst.static_offset == src.static_offset and gd.blk == gs.blk and gd.rep == 0 and gs.rep == 0):
                    s0 = next((s for s in srcs if s.name == "src0"), None)
                    if s0 is not None and s0.tensor.storage is src.tensor.storage and \
                            isinstance(s0.static_offset, int) and \
                            all(isinstance(v, int) for v in (geos["src0"].blk, geos["src0"].rep)):
                        if _overlaps(s0, geos["src0"], src, gs, lanes, repeat, unit, many=True) or \
                                _overlaps(src, gs, s0, geos["src0"], lanes, repeat, unit, many=True):
                            raise self._error(f"when repeat_times>1, {api} dst and src1 address overlap is not "
                                              f"support any address overlapping between src0 and src1",
                                              operand="src0",
                                              hint="make src0 and src1 not overlap, or run one repeat per call")
                    continue
            if repeat == 1:
                if dst.static_offset == src.static_offset and gd.blk == gs.blk:
                    continue
                if _overlaps(dst, gd, src, gs, lanes, 1, unit, many=False, dst_block_len=dst_block_len):
                    raise self._error(f"{api} address overlapping error. when repeat_times=1, only support "
                                      f"{dst.name} and {src.name} 100 percent same, and stride must be same too",
                                      operand=src.name, hint="use separate tensors, or exactly the same view")
            elif _overlaps(dst, gd, src, gs, lanes, repeat, unit, many=True, dst_block_len=dst_block_len):
                raise self._error(f"When repeat_times>1, {api} {dst.name} and {src.name} address overlapping "
                                  f"error. It is not support iteration N's destination is the source of next "
                                  f"iteration", operand=src.name, hint="use separate tensors for dst and src")

    # ------------------------------------------------------------------ emission
    def _vec_emit(self, op: str, *operands, footprint=(), **clauses) -> None:
        self._emit("ub." + op, *operands, footprint=footprint, **clauses)

    def _spr_scalars(self, scalars, name: str, count: int, dtype: Optional[str]) -> list:
        """The first ``count`` Scalars of a TIK special-register destination (one Scalar, or a list / tuple
        of at least ``count``), each a ``tik_instance.Scalar`` (of ``dtype`` where TIK requires one; else
        the value is converted on assignment)."""
        items = [scalars] if count == 1 and not isinstance(scalars, (list, tuple)) else scalars
        if not isinstance(items, (list, tuple)) or len(items) < count:
            raise self._error(f"{name} should be a list of at least {count} Scalars", operand=name,
                              value=type(scalars).__name__, limit=f">= {count} Scalars",
                              hint=f"pass a list of {count} tik_instance.Scalar(...) objects")
        for i, sc in enumerate(items[:count]):
            what = name if count == 1 else f"{name}[{i}]"
            if not isinstance(sc, Scalar):
                raise self._error(f"{what} should be a Scalar, got {type(sc).__name__}", operand=what,
                                  value=type(sc).__name__,
                                  hint=f'create it with tik_instance.Scalar("{dtype or "int64"}")')
            if dtype is not None and sc.dtype != dtype:
                raise self._error(f"{what} dtype should be {dtype}, input dtype is {sc.dtype}", operand=what,
                                  value=sc.dtype, limit=dtype,
                                  hint=f"declare {what} as tik_instance.Scalar(\"{dtype}\")")
        return list(items[:count])

    def _read_spr(self, spr: str, scalars: list, mask_bits: Optional[int] = None) -> None:
        """Right after the op that set it: word ``i`` of special register ``spr`` into ``scalars[i]``
        (``pto.get_spr``; ``mask_bits``: keep that many low bits, as TIK's read of a packed register does)."""
        for i, sc in enumerate(scalars):
            word = self._builder.read_spr(spr, i)
            self._builder.assign(sc.ir, word & ((1 << mask_bits) - 1) if mask_bits else word)


def _bit_lanes(words, par: int) -> np.ndarray:
    """Lane booleans of a TIK bit mask (highest word first)."""
    ws = list(reversed([int(w) for w in words]))
    bits = np.unpackbits(np.array(ws, dtype="<u8").view(np.uint8), bitorder="little").astype(bool)
    out = np.zeros(par, dtype=bool)
    out[:min(par, bits.size)] = bits[:par]
    return out


def _blk_valid(lanes: np.ndarray, block_len: int) -> list:
    nb = -(-lanes.size // block_len)
    padded = np.zeros(nb * block_len, dtype=bool)
    padded[:lanes.size] = lanes
    return [int(b) for b in np.nonzero(padded.reshape(nb, block_len).any(axis=1))[0]]


def _intervals(op: Operand, g: Geo, blocks: list, r: int, block_len: int, unit: int, nblock: int = BLOCKS) -> list:
    """Byte intervals of the valid blocks of repeat ``r`` (TIK ``get_extend_interval``)."""
    size = max(1, op.dt.bits // 8)
    off = op.static_offset
    out = []
    for b in blocks:
        if unit == 0:
            begin = b * g.blk * block_len + r * g.rep * block_len + off
        elif unit == 1:
            begin = b * g.blk * block_len + r * (((nblock - 1) * g.blk + 1) * block_len + g.rep * block_len) + off
        elif unit == 2:
            begin = b * (g.blk + block_len) + r * g.rep + off
        else:
            begin = b * (block_len + g.blk) + r * (((nblock - 1) * g.blk + 1) * block_len + g.rep * block_len) + off
        out.append((begin * size, (begin + block_len) * size))
    return out


def _affine(g: Geo, block_len: int, unit: int, nblock: int = BLOCKS) -> tuple:
    """``(per block, per repeat)``: `_intervals`' ``begin`` is ``b * per_block + r * per_repeat + offset``."""
    if unit == 0:
        return g.blk * block_len, g.rep * block_len
    if unit == 1:
        return g.blk * block_len, ((nblock - 1) * g.blk + 1) * block_len + g.rep * block_len
    if unit == 2:
        return g.blk + block_len, g.rep
    return block_len + g.blk, ((nblock - 1) * g.blk + 1) * block_len + g.rep * block_len


#: `_overlaps` compares all repeat pairs at once in int64 while every byte address stays below this
_OVERLAP_ARRAY_LIMIT = 2 ** 52


def _overlaps(dst: Operand, gd: Geo, src: Operand, gs: Geo, lanes, repeat: int, unit: int, *, many: bool,
              dst_block_len: Optional[int] = None) -> bool:
    dbl = dst_block_len or 256 // dst.dt.bits
    sbl = 256 // src.dt.bits
    dblocks = _blk_valid(lanes, dbl) if dst_block_len is None else list(range(-(-lanes.size // dbl) or 1))
    sblocks = _blk_valid(lanes, sbl)
    if many and repeat > 2 and dblocks and sblocks:
        # every pair of consecutive repeats at once (a loop over up to 254 pairs of block lists otherwise)
        dsz, ssz = max(1, dst.dt.bits // 8), max(1, src.dt.bits // 8)
        (db, dr), (sb, sr) = _affine(gd, dbl, unit), _affine(gs, sbl, unit)
        doff, soff = dst.static_offset, src.static_offset
        if max(abs(x) for x in (db * max(dblocks), sb * max(sblocks), dr * repeat, sr * repeat, doff, soff, dbl, sbl)) \
                * 8 * max(dsz, ssz) < _OVERLAP_ARRAY_LIMIT:
            t = np.arange(repeat - 1, dtype=np.int64)[:, None]
            d0 = (np.asarray(dblocks, dtype=np.int64) * db + t * dr + doff) * dsz           # [pair, block]
            s0 = (np.asarray(sblocks, dtype=np.int64) * sb + (t + 1) * sr + soff) * ssz
            d1, s1 = d0 + dbl * dsz, s0 + sbl * ssz
            return bool(((d0[:, :, None] < s1[:, None, :]) & (s0[:, None, :] < d1[:, :, None])).any())
    pairs = [(t, t + 1) for t in range(repeat - 1)] if many else [(repeat - 1, repeat - 1)]
    for td, ts in pairs:
        di = _intervals(dst, gd, dblocks, td, dbl, unit)
        si = _intervals(src, gs, sblocks, ts, sbl, unit)
        for a0, a1 in di:
            for b0, b1 in si:
                if max(a0, b0) < min(a1, b1):
                    return True
    return False


__all__ = ["VectorBase", "MaskArg", "Geo", "max_offset", "par_of", "SHORT"]
