"""TIK vector APIs: the lane-wise families (tik_api.md §9.2-§9.6) and the mixin that gathers
every vector family into ``tik.Tik``.

Each call lowers to exactly one ``pto.ub.<instruction>`` op carrying its mask, repeat and
stride descriptor (migration_guide/tik_vector.md has the table); the interpreter runs it
as whole-array numpy (`pto_core.ops.vector_engine`). Argument checks are TIK's
(`vector_common`).

============================================  ================================================
TIK                                           PTO
============================================  ================================================
``vadd(m, d, a, b, r, db, ab, bb, dr, ar,``   ``pto.ub.vadd(d, a, b, r, mask=m,``
``br[, stride_unit])``                        ``blk_stride=(db, ab, bb), rep_stride=(dr, ar, br))``
``vec_add(m, d, a, b, r, dr, ar, br)``        ``pto.ub.vadd(d, a, b, r, mask=m, rep_stride=(dr, ar, br))``
``vexp(m, d, s, r, db, sb, dr, sr)``          ``pto.ub.vexp(d, s, r, mask=m, blk_stride=.., rep_stride=..)``
``vadds(m, d, s, x, r, ..., mask_mode=)``     ``pto.ub.vadds(d, s, x, r, mask=m | counter=m, ...)``
``vector_dup(m, d, x, r, db, dr)``            ``pto.ub.vector_dup(d, x, r, mask=m, ...)``
``vconv(m, mode, d, s, r, ..., deqscale=q)``  ``pto.ub.vconv(d, s, r, round=<r|a|f|c|z|o>, deqscale=q, ...)``
``vec_rec_high_preci(m, d, s, work, r, ..)``  ``pto.ub.vrec`` (the core op is correctly rounded)
============================================  ================================================

Numerics are the core's (migration_guide/pto_vector.md §4): f16 arithmetic rounded once
from f32; ``vexp``/``vln``/``vrec``/``vsqrt``/``vrsqrt`` are hardware approximations of
unpublished precision, modelled correctly rounded (so the ``*_high_preci`` macros, which
TIK documents as near correctly rounded, lower to the same ops); fused ops one rounding.
"""
from __future__ import annotations

from typing import Optional

from pto_core.errors import UnsupportedOp

from .. import platform
from .api import has_key, tik_api
from .autosync import Access

from .tensor import Tensor
from .vector_common import ROUND_MODES, SHORT, U8, U16, Geo, VectorBase

# classic two-source instructions: name -> dtype rule ("same": one dtype; "mixed": dst + src codes)
BINARY = {"vadd": "same", "vsub": "same", "vmul": "same", "vdiv": "same", "vmax": "same", "vmin": "same",
          "vand": "same", "vor": "same", "vaddrelu": "same", "vsubrelu": "same", "vmla": "mixed", "vmadd": "same",
          "vmaddrelu": "same", "vmulconv": "mixed"}
#: instructions whose destination is also read
READS_DST = ("vmla", "vmadd", "vmaddrelu", "vaxpy")
VEC_BINARY = {"vec_add": "vadd", "vec_sub": "vsub", "vec_mul": "vmul", "vec_max": "vmax", "vec_min": "vmin",
              "vec_and": "vand", "vec_or": "vor"}
UNARY = ("vabs", "vexp", "vln", "vrec", "vsqrt", "vrsqrt", "vrelu", "vnot")
VEC_UNARY = {"vec_relu": "vrelu", "vec_abs": "vabs", "vec_exp": "vexp", "vec_ln": "vln", "vec_rec": "vrec",
             "vec_rsqrt": "vrsqrt", "vec_not": "vnot"}
SCALAR_OPS = ("vadds", "vmuls", "vmaxs", "vmins", "vlrelu", "vshl", "vaxpy")
VEC_SCALAR = {"vec_adds": "vadds", "vec_muls": "vmuls"}
#: vec_*_high_preci -> (core instruction, the documented work_tensor dtype)
HIGH_PRECI = {"vec_rec_high_preci": ("vrec", "float32"), "vec_rsqrt_high_preci": ("vrsqrt", "float32"),
              "vec_ln_high_preci": ("vln", "float16")}
#: HIGH_PRECI_WORK_UNITS: the documented minimum ``work_tensor`` size of each macro, as a multiple of
#: ``wk_size_unit`` (the source extent rounded up to a 32-byte block) counted in the documented work
#: dtype (HIGH_PRECI), by API key (short SoC version + core type, ``"*"`` = every chip) and source
#: dtype. Sources: the hiascend TIK pages atlastikapi_07_0060 (vec_rec_high_preci: 4 / 2),
#: atlastikapi_07_0058 (vec_ln_high_preci: 10) and atlastikapi_07_0062 (vec_rsqrt_high_preci: Atlas
#: 200/300/500 inference 6 / 4, Atlas training and Atlas inference AI Core 5 / 3). The rsqrt numbers
#: for other chips (310P vector core, A2/A3, ...) were not available to us: not checked there.
HIGH_PRECI_WORK_UNITS = {
    "vec_rec_high_preci": {"*": {"float16": 4, "float32": 2}},
    "vec_ln_high_preci": {"*": {"float16": 10}},
    "vec_rsqrt_high_preci": {"Ascend310AiCore": {"float16": 6, "float32": 4},
                             "Ascend910AiCore": {"float16": 5, "float32": 3},
                             "Ascend310PAiCore": {"float16": 5, "float32": 3}},
}


def high_preci_work_units(name: str, api_key: str, src_dtype: str) -> Optional[int]:
    """The documented ``work_tensor`` multiple of ``wk_size_unit`` (HIGH_PRECI_WORK_UNITS), or None."""
    table = HIGH_PRECI_WORK_UNITS[name]
    return table.get(api_key, table.get("*", {})).get(src_dtype)


class LanewiseAPI(VectorBase):
    """Binary, unary, vector-scalar, dup, conversion and high-precision vector APIs."""

    # ------------------------------------------------------------------ the one lowering
    def _lanewise(self, instr: str, mask, dst, srcs: list, repeat_times, blk: Optional[list], rep: list,
                  stride_unit=0, *, scalar=None, has_scalar: bool = False, mask_mode: str = "normal",
                  blk_max: int = U8, rep_max: int = U8, dtype_rule: str = "same", extra: Optional[dict] = None,
                  scalar_dtype=None):
        """Resolve, check and emit one lane-wise instruction.

        ``srcs``: list of (tensor, name); ``blk``/``rep``: per memory operand (dst first),
        ``blk=None`` for the ``vec_*`` forms (block stride 1)."""
        api = self._where.call if self._where else "tik." + instr
        d = self._vec_operand(dst, "dst")
        ss = [self._vec_operand(t, nm) for t, nm in srcs]
        ops = [d] + ss
        if dtype_rule == "same":
            self._same_dtype(d, *ss)
            self._require_instr(instr, d.tensor.dtype, api)
        elif dtype_rule == "mixed":
            if len(ss) > 1:
                self._same_dtype(ss[0], *ss[1:])
            code = SHORT[d.tensor.dtype] + "".join(SHORT[s.tensor.dtype] for s in ss)
            if len(ss) == 1:
                code += SHORT[ss[0].tensor.dtype]
            self._require_instr(instr, code, api, f"src {ss[0].tensor.dtype} dst {d.tensor.dtype}")
        counter = mask_mode == "counter"
        m = self._vec_mask(mask, [o.dt for o in ops], mask_mode=mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if counter else 1)
        unit = self._vec_stride_unit(stride_unit)
        names = [o.name for o in ops]
        geos = {}
        for i, (o, r) in enumerate(zip(ops, rep)):
            b = 1 if blk is None else self._legacy_stride(blk[i], f"{o.name}_blk_stride", blk_max, unit, False)
            geos[o.name] = Geo(b, self._legacy_stride(r, f"{o.name}_rep_stride", rep_max, unit, True))
        sval = None
        if has_scalar:
            sval = self._vec_scalar(scalar, scalar_dtype or (ss[0] if ss else d).tensor.dtype, "scalar")
        footprint = []
        for o in ops:
            acc = self._vec_access(o, self._vec_extent(o, m, repeat, geos[o.name], unit), o is d)
            footprint.append(acc)
            if o is d and instr in READS_DST:
                footprint.append(Access(acc.region, acc.lo, acc.hi, False))
        self._vec_overlap(api.replace("tik.", ""), instr, d, ss, m, repeat, geos, unit)
        clauses = dict(m.clause)
        if blk is not None:
            clauses["blk_stride"] = tuple(geos[n].blk for n in names)
        clauses["rep_stride"] = tuple(geos[n].rep for n in names)
        if unit:
            clauses["stride_unit"] = unit
        if extra:
            clauses.update(extra)
        operands = [o.ptr for o in ops] + ([sval] if has_scalar else []) + [repeat]
        self._vec_emit(instr, *operands, footprint=footprint, **_ordered(instr, clauses))

    # ------------------------------------------------------------------ vadddeqrelu, vshr
    @tik_api("vadddeqrelu")
    def vadddeqrelu(self, mask, dst, deqscale, src0, src1, repeat_times, dst_blk_stride, src0_blk_stride,
                    src1_blk_stride, dst_rep_stride, src0_rep_stride, src1_rep_stride, stride_unit=0):
        """``dst(f16) = relu(f16((src0 + src1) * f16(deqscale)))`` for s32 sources."""
        self._lanewise("vadddeqrelu", mask, dst, [(src0, "src0"), (src1, "src1")], repeat_times,
                       [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                       [dst_rep_stride, src0_rep_stride, src1_rep_stride], stride_unit, scalar=deqscale,
                       has_scalar=True, dtype_rule="mixed", scalar_dtype="float16")

    @tik_api("vshr")
    def vshr(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride, dst_rep_stride,
             src_rep_stride, stride_unit=0, round_en=False, mask_mode="normal"):
        """``dst = src >> scalar`` (arithmetic for signed types); ``round_en`` rounds (signed types only)."""
        if round_en and src.dtype not in ("int16", "int32", "int64"):
            raise self._error(f"vshr round_en should be False when src dtype is {src.dtype}", operand="round_en",
                              value=round_en, limit="int16, int32",
                              hint="pass round_en=False, or shift an int16/int32 tensor")
        self._lanewise("vshr", mask, dst, [(src, "src")], repeat_times, [dst_blk_stride, src_blk_stride],
                       [dst_rep_stride, src_rep_stride], stride_unit, scalar=scalar, has_scalar=True,
                       mask_mode=mask_mode, blk_max=U16, extra={"round": True} if round_en else None,
                       scalar_dtype=_shift_dtype(src))

    # ------------------------------------------------------------------ dup
    @tik_api("vector_dup")
    def vector_dup(self, mask, dst, scalar, repeat_times, dst_blk_stride, dst_rep_stride, stride_unit=0):
        """``dst[lane] = scalar`` on active lanes (tik_api.md §9.5)."""
        self._dup(mask, dst, scalar, repeat_times, self._given(dst_blk_stride, "dst_blk_stride"), dst_rep_stride,
                  stride_unit)

    @tik_api("vec_dup")
    def vec_dup(self, mask, dst, scalar, repeat_times, dst_rep_stride):
        self._dup(mask, dst, scalar, repeat_times, None, dst_rep_stride, 0)

    def _dup(self, mask, dst, scalar, repeat_times, blk, rep, stride_unit):
        d = self._vec_operand(dst, "dst")
        self._require_support("tik.vector_dup", d.tensor.dtype)
        m = self._vec_mask(mask, [d.dt])
        repeat = self._vec_repeat(repeat_times)
        unit = self._vec_stride_unit(stride_unit)
        g = Geo(1 if blk is None else self._legacy_stride(blk, "dst_blk_stride", U16, unit, False),
                self._legacy_stride(rep, "dst_rep_stride", U8, unit, True))
        sval = _unsigned_dup_immediate(self._vec_scalar(scalar, d.tensor.dtype, "scalar"), d.dt)
        fp = [self._vec_access(d, self._vec_extent(d, m, repeat, g, unit), True)]
        clauses = dict(m.clause)
        if blk is not None:
            clauses["blk_stride"] = (g.blk,)
        clauses["rep_stride"] = (g.rep,)
        if unit:
            clauses["stride_unit"] = unit
        self._vec_emit("vector_dup", d.ptr, sval, repeat, footprint=fp, **clauses)

    # ------------------------------------------------------------------ conversion
    @tik_api("vconv")
    def vconv(self, mask, round_mode, dst, src, repeat_times, dst_blk_stride, src_blk_stride, dst_rep_stride,
              src_rep_stride, deqscale=None, ldst_high_half=False, stride_unit=0):
        """Element conversion ``"<src>2<dst><round>"`` (tik_api.md §9.6)."""
        self._conv(mask, round_mode, dst, src, repeat_times, [dst_blk_stride, src_blk_stride],
                   [dst_rep_stride, src_rep_stride], deqscale, ldst_high_half, stride_unit)

    @tik_api("vec_conv")
    def vec_conv(self, mask, round_mode, dst, src, repeat_times, dst_rep_stride, src_rep_stride, deqscale=None,
                 ldst_high_half=False):
        self._conv(mask, round_mode, dst, src, repeat_times, None, [dst_rep_stride, src_rep_stride], deqscale,
                   ldst_high_half, 0)

    def _conv(self, mask, round_mode, dst, src, repeat_times, blk, rep, deqscale, ldst_high_half, stride_unit):
        if not has_key(ROUND_MODES, round_mode):
            raise self._error(f"round_mode {round_mode!r} is not supported", operand="round_mode", value=round_mode,
                              limit=", ".join(repr(k) for k in ROUND_MODES),
                              hint="pass one of the listed round_mode strs ('' or 'none' for the default rounding)")
        if ldst_high_half:
            raise self._error("vconv with ldst_high_half=True (deqs162b8: int16 -> int8/uint8, each result stored "
                              "in one 16-byte half of its 32-byte block) is not modelled: the DEQSCALE word is "
                              "public (fp32 scale in bits 0..31, 9-bit offset in bits 37..45, sign mode in bit 46) "
                              "but the rounding and saturation of src*scale+offset, and which half "
                              "ldst_high_half selects, are not", operand="ldst_high_half",
                              value=True, cls=UnsupportedOp,
                              hint="dequantise through float16 (vconv s16 -> f16, vmuls, vadds, vconv f16 -> s8/u8)")
        d = self._operand(dst, "dst", spaces=("ub",))
        s = self._operand(src, "src", spaces=("ub",))
        for nm, t in (("dst", d), ("src", s)):
            if t.tensor.dtype not in SHORT:
                # packed 4-bit tensors (CANN lists f162s4 / f322s4 / s322s4 on v220/v300): the vector ops here
                # address whole bytes, and pto.ub.vconv refuses packed 4-bit destinations
                raise self._error(f"vconv with {nm} of dtype {t.tensor.dtype} (packed 4-bit elements) is not "
                                  f"modelled", operand=nm, value=t.tensor.dtype, cls=UnsupportedOp,
                                  hint="convert to int8 / uint8 instead (e.g. round_mode 'round' from float16) "
                                       "and pack the nibbles outside the kernel")
        suffix = ROUND_MODES[round_mode]
        deq = SHORT[s.tensor.dtype] == "s32" and SHORT[d.tensor.dtype] == "f16" and suffix == "" and \
            deqscale is not None
        if deqscale is not None and not deq:
            raise self._error(f"deqscale applies only to int32 -> float16 conversions without a round mode, got "
                              f"{s.tensor.dtype} -> {d.tensor.dtype}", operand="deqscale", value=repr(deqscale),
                              hint="drop deqscale (deqscale=None): it scales only int32 -> float16 with round_mode '' or 'none'")
        code = "deq" if deq else f"{SHORT[s.tensor.dtype]}2{SHORT[d.tensor.dtype]}{suffix}"
        api = self._where.call
        if s.dt is d.dt and suffix == "":
            raise self._error(f"{s.tensor.dtype} -> {d.tensor.dtype} without a round mode is not a conversion",
                              operand="round_mode", value=round_mode, hint="give a round mode or use data_move")
        self._require_instr("vconv", code, api, f"src {s.tensor.dtype} dst {d.tensor.dtype} round_mode "
                                                f"{round_mode!r} ({code})")
        extra = {}
        if suffix:
            extra["round"] = suffix
        if deq:
            extra["deqscale"] = (self._vec_scalar(deqscale, "float16", "deqscale"),)
        self._lanewise("vconv", mask, dst, [(src, "src")], repeat_times, blk, rep, stride_unit, blk_max=U16,
                       dtype_rule="checked", extra=extra)

    # ------------------------------------------------------------------ high precision macros
    def _high_preci(self, name, mask, dst, src, work_tensor, repeat_times, dst_rep_stride, src_rep_stride):
        instr, work_dtype = HIGH_PRECI[name]
        s = self._operand(src, "src", spaces=("ub",))
        self._require_support("tik." + name, s.tensor.dtype)
        w = self._operand(work_tensor, "work_tensor", spaces=("ub",), dtypes=("float16", "float32"))
        units = high_preci_work_units(name, platform.current_soc().api_key, s.tensor.dtype)
        if units is not None:
            m = self._vec_mask(mask, [s.dt])
            rep = self._vec_repeat(repeat_times)
            sr = self._vec_stride(src_rep_stride, "src_rep_stride", U8)
            ext = self._vec_extent(s, m, rep, Geo(1, sr), 0)
            if isinstance(ext, int) and isinstance(w.tensor.size, int):
                block = 32 * 8 // s.dt.bits
                need_bytes = -(-ext // block) * block * units * (4 if work_dtype == "float32" else 2)
                wbytes = 4 if w.tensor.dtype == "float32" else 2
                need = -(-need_bytes // wbytes)
                have = w.tensor.storage_elements - (w.static_offset or 0) if isinstance(
                    w.tensor.storage_elements, int) else None
                if have is not None and have < need:
                    raise self._error(f"Input work tensor size({have}) must be more than needed size({need})",
                                      operand="work_tensor", value=have, limit=f">= {need}",
                                      hint=f"{name} needs {units} x the source extent (rounded up to a 32-byte "
                                           f"block) in {work_dtype} work elements: declare work_tensor with at "
                                           f"least {need} elements")
        self._lanewise(instr, mask, dst, [(src, "src")], repeat_times, None, [dst_rep_stride, src_rep_stride],
                       blk_max=U16)

    @tik_api("vec_rec_high_preci")
    def vec_rec_high_preci(self, mask, dst, src, work_tensor, repeat_times, dst_rep_stride, src_rep_stride):
        """``1/src``, near correctly rounded (TIK: f16 -> f32 Newton refinement -> f16); lowered to the
        core's correctly rounded ``pto.ub.vrec``. ``work_tensor`` is only checked (scope, dtype, size)."""
        self._high_preci("vec_rec_high_preci", mask, dst, src, work_tensor, repeat_times, dst_rep_stride,
                         src_rep_stride)

    @tik_api("vec_rsqrt_high_preci")
    def vec_rsqrt_high_preci(self, mask, dst, src, work_tensor, repeat_times, dst_rep_stride, src_rep_stride):
        """``1/sqrt(src)`` near correctly rounded; lowered to ``pto.ub.vrsqrt`` (correctly rounded)."""
        self._high_preci("vec_rsqrt_high_preci", mask, dst, src, work_tensor, repeat_times, dst_rep_stride,
                         src_rep_stride)

    @tik_api("vec_ln_high_preci")
    def vec_ln_high_preci(self, mask, dst, src, work_tensor, repeat_times, dst_rep_stride, src_rep_stride):
        """``ln(src)`` near correctly rounded (f16); lowered to ``pto.ub.vln`` (correctly rounded)."""
        self._high_preci("vec_ln_high_preci", mask, dst, src, work_tensor, repeat_times, dst_rep_stride,
                         src_rep_stride)


def _shift_dtype(src) -> str:
    return src.dtype if isinstance(src, Tensor) else "int16"


def _ordered(instr: str, clauses: dict) -> dict:
    """Clauses in the op's canonical order (the registry checks keyword order)."""
    from pto_core.ops import registry
    spec = registry.get_op("ub." + instr)
    order = [c.name for c in spec.clauses]
    return {k: clauses[k] for k in order if k in clauses}


# ----------------------------------------------------------------------------- generated methods

def _classic_binary(instr: str, rule: str):
    def method(self, mask, dst, src0, src1, repeat_times, dst_blk_stride, src0_blk_stride, src1_blk_stride,
               dst_rep_stride, src0_rep_stride, src1_rep_stride, stride_unit=0):
        self._lanewise(instr, mask, dst, [(src0, "src0"), (src1, "src1")], repeat_times,
                       [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                       [dst_rep_stride, src0_rep_stride, src1_rep_stride], stride_unit, dtype_rule=rule)
    method.__name__ = instr
    method.__doc__ = f"``{instr}`` with block and repeat strides (pto.ub.{instr}); tik_api.md §9.2."
    return tik_api(instr)(method)


def _vec_binary(name: str, instr: str):
    def method(self, mask, dst, src0, src1, repeat_times, dst_rep_stride, src0_rep_stride, src1_rep_stride):
        self._lanewise(instr, mask, dst, [(src0, "src0"), (src1, "src1")], repeat_times, None,
                       [dst_rep_stride, src0_rep_stride, src1_rep_stride])
    method.__name__ = name
    method.__doc__ = f"``{name}``: block stride 1, repeat strides in 32 B (pto.ub.{instr}); tik_api.md §9.2."
    return tik_api(name)(method)


def _classic_unary(instr: str):
    def method(self, mask, dst, src, repeat_times, dst_blk_stride, src_blk_stride, dst_rep_stride, src_rep_stride,
               stride_unit=0):
        self._lanewise(instr, mask, dst, [(src, "src")], repeat_times, [dst_blk_stride, src_blk_stride],
                       [dst_rep_stride, src_rep_stride], stride_unit, blk_max=U16)
    method.__name__ = instr
    method.__doc__ = f"``{instr}`` with block and repeat strides (pto.ub.{instr}); tik_api.md §9.3."
    return tik_api(instr)(method)


def _vec_unary(name: str, instr: str):
    def method(self, mask, dst, src, repeat_times, dst_rep_stride, src_rep_stride):
        self._lanewise(instr, mask, dst, [(src, "src")], repeat_times, None, [dst_rep_stride, src_rep_stride],
                       blk_max=U16)
    method.__name__ = name
    method.__doc__ = f"``{name}`` (pto.ub.{instr}); tik_api.md §9.3."
    return tik_api(name)(method)


def _classic_scalar(instr: str):
    def method(self, mask, dst, src, scalar, repeat_times, dst_blk_stride, src_blk_stride, dst_rep_stride,
               src_rep_stride, stride_unit=0, mask_mode="normal"):
        rule = "mixed" if instr == "vaxpy" else "same"
        self._lanewise(instr, mask, dst, [(src, "src")], repeat_times, [dst_blk_stride, src_blk_stride],
                       [dst_rep_stride, src_rep_stride], stride_unit, scalar=scalar, has_scalar=True,
                       mask_mode=mask_mode, blk_max=U16, dtype_rule=rule,
                       scalar_dtype=_shift_dtype(src) if instr == "vshl" else None)
    method.__name__ = instr
    method.__doc__ = f"``{instr}``: vector op scalar (pto.ub.{instr}); tik_api.md §9.4."
    return tik_api(instr)(method)


#: Named choice UNSIGNED_DUP_NEGATIVE_IMMEDIATE (tik_vector.md): a negative int immediate ``v`` with
#: ``-2**(bits-1) <= v < 0`` duplicated into an unsigned tensor (``vec_dup(128, u16_ub, -1, 1, 8)``) is the
#: same-width two's-complement pattern ``v + 2**bits`` (0xFFFF for -1). TIK converts a vec_dup immediate to the
#: dst dtype (tik_api.md §9.5) and C's conversion to an unsigned type is modulo 2**bits; CANN's roi_align
#: (RoiAlign.roi_align_perf_scale) builds its all-ones uint16 mask this way. Anything else out of range
#: (70000 or -40000 into uint16) stays an IllegalOperand.
UNSIGNED_DUP_NEGATIVE_IMMEDIATE = True


def _unsigned_dup_immediate(value, dt):
    """The vec_dup immediate after UNSIGNED_DUP_NEGATIVE_IMMEDIATE (unchanged unless it applies)."""
    if (UNSIGNED_DUP_NEGATIVE_IMMEDIATE and isinstance(value, int) and not isinstance(value, bool)
            and dt.kind == "u" and -(1 << (dt.bits - 1)) <= value < 0):
        return value + (1 << dt.bits)
    return value


def _vec_scalar_op(name: str, instr: str):
    def method(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride, mask_mode="normal"):
        self._lanewise(instr, mask, dst, [(src, "src")], repeat_times, None, [dst_rep_stride, src_rep_stride],
                       scalar=scalar, has_scalar=True, mask_mode=mask_mode, blk_max=U16)
    method.__name__ = name
    method.__doc__ = f"``{name}`` (pto.ub.{instr}); tik_api.md §9.4."
    return tik_api(name)(method)


def _vec_axpy(self, mask, dst, src, scalar, repeat_times, dst_rep_stride, src_rep_stride):
    """``dst = scalar * src + dst`` (fused; f32 dst with f16 src allowed)."""
    self._lanewise("vaxpy", mask, dst, [(src, "src")], repeat_times, None, [dst_rep_stride, src_rep_stride],
                   scalar=scalar, has_scalar=True, blk_max=U16, dtype_rule="mixed")


_vec_axpy.__name__ = "vec_axpy"
for _n, _r in BINARY.items():
    setattr(LanewiseAPI, _n, _classic_binary(_n, _r))
for _n, _i in VEC_BINARY.items():
    setattr(LanewiseAPI, _n, _vec_binary(_n, _i))
for _n in UNARY:
    setattr(LanewiseAPI, _n, _classic_unary(_n))
for _n, _i in VEC_UNARY.items():
    setattr(LanewiseAPI, _n, _vec_unary(_n, _i))
for _n in SCALAR_OPS:
    setattr(LanewiseAPI, _n, _classic_scalar(_n))
for _n, _i in VEC_SCALAR.items():
    setattr(LanewiseAPI, _n, _vec_scalar_op(_n, _i))
LanewiseAPI.vec_axpy = tik_api("vec_axpy")(_vec_axpy)
del _n, _r, _i


from .vector_cmpsel import CmpSelAPI  # noqa: E402 (the families import vector_common, not this module)
from .vector_expm1 import Expm1API  # noqa: E402
from .vector_h import HVectorAPI  # noqa: E402
from .vector_index import IndexAPI  # noqa: E402
from .vector_sort2 import Sort2API  # noqa: E402
from .vector_layout import LayoutAPI  # noqa: E402
from .vector_reduce import ReduceAPI  # noqa: E402
from .vector_scatter import ScatterAPI  # noqa: E402


#: TIK vector instructions left out on purpose: name -> (why the public sources do not pin the result down
#: bit for bit, what to do instead). Each raises `UnsupportedOp` when called, or, inside a branch that may not
#: run, when executed (``pto.unmodelled``; migration_guide/tik_vector.md §7).
UNMODELLED = {
    "vpadding": ("the public descriptions (Ascend C VectorPadding: pad modes 0..2, left/right side, examples such "
                 "as 'aaa|abc' and 'cba|abc') do not say how many elements of a 32-byte block are padded nor where "
                 "that count comes from, so no result can be computed bit for bit",
                 "build the padded blocks with vector_dup / vadds on masked lanes, or with data_move"),
    "vcbd": ("the integer width conversion's narrowing behaviour (int32 -> int16, uint16 -> uint8, int16 -> uint8 "
             "..., saturate or wrap) and its signed <-> unsigned widenings are not documented",
             "convert through vconv / vec_conv codes the chip has (s322f16, s162f16, ...), or keep values in the "
             "target range first (vmaxs / vmins) and convert through float16"),
    "vbi": ("bilinear interpolation's float16 rounding order and first-iteration accumulator are not documented "
            "for the instruction: CANN's text (Ascend C BilinearInterpolation) only says each iteration's "
            "products are 'accumulated by data block with the previous dst result', TIK's debugger runs vbi in "
            "a binary chip model (no formula), and the one executable reference, Ascend C's 910B (dav_c220) "
            "emulation (f16 vmul, then f16 vadd in horizontal order starting from the first product, dst not "
            "read), is not the 310P instruction (dav_m200 calls the vbi intrinsic). Known: src0_offset holds "
            "int32 byte offsets from src0's start (8 per iteration), dst_blk_stride is in 32 B blocks, "
            "vertical_repeat_offset in elements (>= 128), repeat_mode 0/1 = 1 or 8 src1 values per iteration",
            "express the interpolation with vmul / vmla / vadd, whose numerics are modelled"),
}


def _unmodelled(name: str, why: str, hint: str):
    def method(self, *args, **kwargs):
        if self._may_not_run():
            # inside a run-time branch (e.g. one tiling key of a dynamic kernel): refuse only if it runs
            self._emit("unmodelled", what=f"tik.{name}", why=why, hint=hint)
            return None
        raise self._error(f"{name} is not modelled: {why}", cls=UnsupportedOp, hint=hint)
    method.__name__ = name
    method.__doc__ = f"Not lowered (UnsupportedOp): {why}."
    return tik_api(name)(method)


class UnmodelledAPI(VectorBase):
    """TIK vector instructions the simulator refuses with a reason (`UNMODELLED`)."""


for _n, (_why, _hint) in UNMODELLED.items():
    setattr(UnmodelledAPI, _n, _unmodelled(_n, _why, _hint))
del _n, _why, _hint


class VectorAPI(LanewiseAPI, Expm1API, ReduceAPI, CmpSelAPI, LayoutAPI, IndexAPI, Sort2API, HVectorAPI,
                ScatterAPI, UnmodelledAPI):
    """Every TIK vector family (mixin of `tbe_compat.tik.Tik`)."""


__all__ = ["VectorAPI", "LanewiseAPI", "UNMODELLED"]
