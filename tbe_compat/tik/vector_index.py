"""TIK index fill, gather/scatter, block broadcast, CHW/HWC transform and pattern compaction v2
(tik_api.md §9.11): ``vci``, ``vgather``, ``vscatter``, ``vbcb``, ``v4dtrans``, ``vreducev2``.

=====================================================  ==================================================
TIK                                                    PTO
=====================================================  ==================================================
``vci(m, d, start, r, db, dr, stride_unit=u)``         ``pto.ub.vci(d, start, r, mask=m, blk_stride=(db,),``
                                                       ``rep_stride=(dr,)[, stride_unit=u])``
``vgather(m, d, s, off, r, dr, base_addr=b)``          ``pto.ub.vgather(d, s, off, r, base=(b,), mask=m,``
                                                       ``rep_stride=(dr,))``
``vscatter(m, d, s, off, r, sr, base_addr=b)``         ``pto.ub.vscatter(d, s, off, r, base=(b,), mask=m,``
                                                       ``rep_stride=(sr,))``
``vgatherb(d, s, off, r, db, dr)``                      ``pto.ub.vgatherb(d, s, off, r, blk_stride=(db,),``
                                                       ``rep_stride=(dr,))``
``vbcb(d, s, r, db, dr)``                               ``pto.ub.vbcb(d, s, r, blk_stride=(db,), rep_stride=(dr,))``
``v4dtrans(chw2hwc, d, s, m_len, channels)``            ``pto.ub.v4dtrans(d, s, m_len, channels[, chw2hwc])``
``vreducev2(m, d, s0, pattern, r, sb, sr, pr,``        ``pto.ub.vreduce(d, s0, r, pattern=p, ...)`` (1..7) or
``          mask_mode=...)``                           ``pto.ub.vreduce_bits(d, s0, pat, r, ...)`` (tensor)
=====================================================  ==================================================

Semantics (pto_core.ops.vector_index): ``vci`` lane ``e`` of repeat ``r`` = ``start + r*PAR + e``;
``vgather``/``vscatter`` offsets are 32-bit *byte* offsets (plus ``base_addr``), ``PAR``
consecutive offsets per repeat. ``vgatherb`` gathers 32 B blocks: destination block ``j`` of repeat
``r`` = the 32 bytes at byte ``offset[8r + j]`` of ``src`` (no mask; offsets multiples of 32).
``vreducev2`` (CCE ``vreducev2``, Ascend C ``GatherMask``): in
normal mode the hardware ignores the mask and every repeat processes all ``PAR`` lanes
(the mask argument is still range-checked like TIK); in counter mode ``mask`` is the
element count. ``vbcb``: repeat ``r`` broadcasts ``src[8r + j]`` over destination block ``j``
(CCE ``vbrcb``). ``rsvd_scalar``: RSVD_CNT (the elements kept) into a uint32 Scalar after the op.
"""
from __future__ import annotations

from pto_core.ops.vector_index import GS_CONTIGUOUS_BLK

from .. import platform
from .api import tik_api
from .scalar import Expr, Scalar
from .tensor import Tensor
from .vector_common import SHORT, U8, U16, Geo, VectorBase, iadd, ieq, imul, isel, isub, par_of

MAX_GS_REP_STRIDE = 4095          # CCE vgather dstRepeatStride [0, 4095]
MAX_BASE_ADDR = 2 ** 31 - 1
#: Named choice: vgatherb offset dtypes: public TIK kernels pass int32 tensors, Ascend C ``Gatherb`` takes uint32;
#: both are accepted (tik_vector.md, the vgatherb row).
GATHERB_OFFSET_DTYPES = ("int32", "uint32")


class IndexAPI(VectorBase):
    """vci, vgather, vgatherb, vscatter, vbcb, v4dtrans, vreducev2 (mixin)."""

    # ------------------------------------------------------------------ vci
    @tik_api("vci")
    def vci(self, mask, dst_index, start_point, repeat_times, dst_blk_stride, dst_rep_stride, stride_unit=0,
            mask_mode="normal"):
        """Index fill: lane ``e`` of repeat ``r`` = ``start_point + r*PAR + e`` (masked lanes untouched)."""
        d = self._vec_operand(dst_index, "dst_index")
        self._require_support("tik.vci", d.tensor.dtype)
        m = self._vec_mask(mask, [d.dt], mask_mode=mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if m.counter else 1)
        unit = self._vec_stride_unit(stride_unit)
        g = Geo(self._vec_stride(dst_blk_stride, "dst_blk_stride", U16),
                self._vec_stride(dst_rep_stride, "dst_rep_stride", U8))
        start = self._vec_scalar(start_point, d.tensor.dtype, "start_point")
        fp = [self._vec_access(d, self._vec_extent(d, m, repeat, g, unit), True)]
        clauses = dict(m.clause)
        clauses["blk_stride"] = (g.blk,)
        clauses["rep_stride"] = (g.rep,)
        if unit:
            clauses["stride_unit"] = unit
        self._vec_emit("vci", d.ptr, start, repeat, footprint=fp, **clauses)

    # ------------------------------------------------------------------ gather / scatter
    @tik_api("vgather")
    def vgather(self, mask, dst, src, src_offset, repeat_times, dst_rep_stride, base_addr=0, stride_unit=0,
                mask_mode="normal"):
        """``dst`` lane ``e`` of repeat ``r`` = element at byte ``base_addr + src_offset[r*PAR + e]`` of ``src``."""
        self._gather_scatter("vgather", mask, dst, src, src_offset, repeat_times, dst_rep_stride, base_addr,
                             stride_unit, mask_mode)

    @tik_api("vscatter")
    def vscatter(self, mask, dst, src, dst_offset, repeat_times, src_rep_stride, base_addr=0, stride_unit=0,
                 mask_mode="normal"):
        """``src`` lane ``e`` of repeat ``r`` goes to byte ``base_addr + dst_offset[r*PAR + e]`` of ``dst``."""
        self._gather_scatter("vscatter", mask, dst, src, dst_offset, repeat_times, src_rep_stride, base_addr,
                             stride_unit, mask_mode)

    def _gather_scatter(self, instr, mask, dst, src, offset, repeat_times, rep_stride, base_addr, stride_unit,
                        mask_mode):
        off_name = "src_offset" if instr == "vgather" else "dst_offset"
        rep_name = "dst_rep_stride" if instr == "vgather" else "src_rep_stride"
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        soc = platform.current_soc()
        off_dtypes = ("int32", "uint32") if instr == "vgather" and soc.short_soc_version == "Ascend310B" \
            else ("int32",)
        o = self._vec_operand(offset, off_name)
        if o.tensor.dtype not in off_dtypes:
            raise self._error(f"dtype of {off_name} should be {' or '.join(repr(x) for x in off_dtypes)}, but input "
                              f"dtype is {o.tensor.dtype!r}", operand=off_name, value=o.tensor.dtype,
                              limit=", ".join(off_dtypes), hint="offsets are 32-bit byte offsets, one per lane")
        self._require_instr(instr, d.tensor.dtype)
        m = self._vec_mask(mask, [d.dt], mask_mode=mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if m.counter else 1)
        unit = self._vec_stride_unit(stride_unit)
        rep = self._vec_stride(rep_stride, rep_name, MAX_GS_REP_STRIDE)
        base = self._base_addr(base_addr, s if instr == "vgather" else d)
        strided, indexed = (d, s) if instr == "vgather" else (s, d)
        par = par_of(d.dt)
        # offsets read (named choice GATHER_OFFSETS_MASKED): PAR per repeat up to the last active lane of
        # the last repeat (the op uses only active lanes' offsets; TIK's overflow rule counts the mask, as
        # for every vector operand -- IndexSDK's lookup_table_in_ub gathers `num` < 64 f32 values with a
        # `num`-element offset tensor)
        if m.counter:
            n_offsets = m.clause["counter"]
        elif m.length is not None:
            n_offsets = iadd(imul(isub(repeat, 1), par), m.length)
        else:
            n_offsets = imul(repeat, par)
        geo = Geo(GS_CONTIGUOUS_BLK[unit], rep)    # the lanes of a repeat are contiguous for every unit
        fp = [self._vec_access(strided, self._vec_extent(strided, m, repeat, geo, unit),
                               strided is d),
              self._vec_access(o, n_offsets if not m.counter or isinstance(n_offsets, int) else None, False),
              indexed.write(None) if indexed is d else indexed.read(None)]
        clauses = {}
        if not (isinstance(base, int) and base == 0):
            clauses["base"] = (base,)
        clauses.update(m.clause)
        clauses["rep_stride"] = (rep,)
        if unit:
            clauses["stride_unit"] = unit
        self._vec_emit(instr, d.ptr, s.ptr, o.ptr, repeat, footprint=fp, **clauses)

    def _base_addr(self, base_addr, indexed):
        if isinstance(base_addr, Scalar):
            if base_addr.dtype != "uint32":
                raise self._error("Scalar base_addr should be dtype of uint32", operand="base_addr",
                                  value=base_addr.dtype, limit="uint32",
                                  hint="declare base_addr as tik_instance.Scalar(\"uint32\")")
            return base_addr.ir
        if isinstance(base_addr, Expr) or isinstance(base_addr, bool) or not isinstance(base_addr, int):
            raise self._error(f"base_addr's type should be int or Scalar, input type is {type(base_addr).__name__}",
                              operand="base_addr", value=repr(base_addr),
                              hint="pass base_addr as an int or an integer Scalar")
        b = self._int_arg(base_addr, "base_addr", 0, MAX_BASE_ADDR)
        size = indexed.tensor.storage_elements
        if isinstance(size, int):
            nbytes = size * max(1, indexed.dt.bits // 8)
            if b > nbytes:
                raise self._error(f"base_addr should be less equal than {indexed.name} tensor's buffer size: "
                                  f"{nbytes}, input base_addr: {b}", operand="base_addr", value=b, limit=nbytes,
                                  hint="base_addr is a byte offset inside the indexed tensor")
        return b

    # ------------------------------------------------------------------ vgatherb
    @tik_api("vgatherb")
    def vgatherb(self, dst, src, offset, repeat_times, dst_blk_stride, dst_rep_stride):
        """Block gather: destination block ``j`` of repeat ``r`` = the 32 bytes at byte ``offset[8r + j]`` of
        ``src`` (CCE ``vgatherb``, Ascend C ``Gatherb``); strides in 32 B, no mask."""
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        o = self._vec_operand(offset, "offset")
        if o.tensor.dtype not in GATHERB_OFFSET_DTYPES:
            raise self._error(f"dtype of offset should be 'int32' or 'uint32', but input dtype is "
                              f"{o.tensor.dtype!r}", operand="offset", value=o.tensor.dtype,
                              limit=", ".join(GATHERB_OFFSET_DTYPES),
                              hint="offsets are 32-bit byte offsets of 32-byte blocks of src, 8 per repeat")
        self._require_instr("vgatherb", self._gatherb_signature(d.tensor.dtype), what=d.tensor.dtype)
        repeat = self._vec_repeat(repeat_times)
        blk = self._vec_stride(dst_blk_stride, "dst_blk_stride", U8)
        rep = self._vec_stride(dst_rep_stride, "dst_rep_stride", MAX_GS_REP_STRIDE)
        e = 256 // d.dt.bits
        ext = isel(ieq(repeat, 0), 0, iadd(imul(imul(isub(repeat, 1), rep), e), iadd(imul(imul(7, blk), e), e)))
        fp = [self._vec_access(d, ext, True), self._vec_access(o, imul(repeat, 8), False), s.read(None)]
        self._vec_emit("vgatherb", d.ptr, s.ptr, o.ptr, repeat, footprint=fp, blk_stride=(blk,),
                       rep_stride=(rep,))

    @staticmethod
    def _gatherb_signature(dtype: str) -> str:
        """How the chip's ini spells ``dtype`` in its ``Intrinsic_vgatherb`` row: dst/src pairs (``"f16f16"``,
        910B / 310B) or plain names (``"float16"``, the BS9SX1AA vector core)."""
        try:
            if platform.intrinsic_check_support("Intrinsic_vgatherb", dtype):
                return dtype
        except platform.PlatformDataMissing:
            pass
        short = SHORT.get(dtype, dtype)
        return short + short

    # ------------------------------------------------------------------ vbcb
    @tik_api("vbcb")
    def vbcb(self, dst, src, repeat_times, dst_blk_stride, dst_rep_stride):
        """Block broadcast: destination block ``j`` of repeat ``r`` = 32 B of copies of ``src[8r + j]``."""
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        short = SHORT.get(d.tensor.dtype, d.tensor.dtype)
        self._require_instr("vbrcb", short + short, what=d.tensor.dtype)
        repeat = self._vec_repeat(repeat_times)
        blk = self._vec_stride(dst_blk_stride, "dst_blk_stride", U16)
        rep = self._vec_stride(dst_rep_stride, "dst_rep_stride", U16)
        e = 256 // d.dt.bits
        self._vbcb_overlap(d, s, repeat, blk, rep, e)
        blk_eff = isel(ieq(blk, 0), 1, blk)
        ext = isel(ieq(repeat, 0), 0, iadd(imul(imul(isub(repeat, 1), rep), e), iadd(imul(imul(7, blk_eff), e), e)))
        fp = [self._vec_access(d, ext, True), self._vec_access(s, imul(repeat, 8), False)]
        self._vec_emit("vbcb", d.ptr, s.ptr, repeat, footprint=fp, blk_stride=(blk,), rep_stride=(rep,))

    def _vbcb_overlap(self, d, s, repeat, blk, rep, e):
        """TIK's vbcb overlap rule (``VbcbOp.check_vbcb_overlapping``), element offsets, static cases only."""
        if d.tensor.storage is not s.tensor.storage:
            return
        do, so = d.static_offset, s.static_offset
        if not all(isinstance(v, int) for v in (do, so, repeat, blk, rep)):
            return
        bad = False
        if so <= do:
            bad = so + repeat * 8 >= do
        else:
            span = (blk * 7 + 1) * e
            for t in range(repeat - 1):
                lo = max(so + 8 * t, do + rep * e * t)
                hi = min(so + 8 * (t + 1) - 1, do + rep * e * t + span)
                if lo < hi:
                    bad = True
                    break
        if bad:
            raise self._error("vbcb src and dst address overlapping error.", operand="src", value=so,
                              hint="keep the 8 source elements per repeat clear of the destination blocks "
                                   "(TIK also rejects a source that ends right where dst starts)")

    # ------------------------------------------------------------------ v4dtrans
    @tik_api("v4dtrans")
    def v4dtrans(self, chw2hwc, dst, src, m_len, channels):
        """CHW <-> HWC of ``m_len * channels`` contiguous elements (``chw2hwc`` True: CHW -> HWC)."""
        chw2hwc = self._bool_arg(chw2hwc, "chw2hwc", hint="True: CHW -> HWC, False: HWC -> CHW")
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        self._require_instr("v4dtrans", d.tensor.dtype)
        m = self._int_arg(m_len, "m_len", 1, 4095, hint="m_len is the H*W extent, 1..4095")
        c = self._int_arg(channels, "channels", 1, 4096)
        n = imul(m, c)
        fp = [self._vec_access(d, n, True), self._vec_access(s, n, False)]
        clauses = {"chw2hwc": True} if chw2hwc else {}
        self._vec_emit("v4dtrans", d.ptr, s.ptr, m, c, footprint=fp, **clauses)

    # ------------------------------------------------------------------ vreducev2
    @tik_api("vreducev2")
    def vreducev2(self, mask, dst, src0, src1_pattern, repeat_times, src0_blk_stride, src0_rep_stride,
                  src1_rep_stride, rsvd_scalar=None, mask_mode="normal"):
        """Keep the lanes whose pattern bit is 1, packed into ``dst`` (patterns 1..7 or a uint16/uint32 tensor of
        lane bits). Normal mode: every repeat processes all PAR lanes (the hardware ignores the mask)."""
        rsvd = None if rsvd_scalar is None else self._spr_scalars(rsvd_scalar, "rsvd_scalar", 1, "uint32")
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src0, "src0")
        self._same_dtype(d, s)
        self._require_instr("vreducev2", s.tensor.dtype)
        m = self._gather_mask(mask, s.dt, mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if m.counter else 1)
        g = Geo(self._vec_stride(src0_blk_stride, "src0_blk_stride", U8),
                self._vec_stride(src0_rep_stride, "src0_rep_stride", U16))
        pr = self._vec_stride(src1_rep_stride, "src1_rep_stride", U8)
        if m.counter:
            lanes = m
        else:                                   # normal mode: the mask is checked, then ignored (all lanes)
            lanes = self._vec_mask(par_of(s.dt), [s.dt])
        fp = [self._vec_access(s, self._gather_extent(s, lanes, repeat, g, 0), False), d.write(None)]
        operands = [d.ptr, s.ptr]
        clauses = {}
        if isinstance(src1_pattern, Tensor):
            want = "uint16" if s.dt.bits == 16 else "uint32"
            p = self._vec_operand(src1_pattern, "src1_pattern")
            if p.tensor.dtype != want:
                raise self._error(f"src1_pattern should be {want} for {s.tensor.dtype} src0, got {p.tensor.dtype}",
                                  operand="src1_pattern", value=p.tensor.dtype, limit=want,
                                  hint=f"pass a {want} pattern tensor (or a fixed pattern 1..7)")
            fp.append(self._pattern_access(p, m, repeat, pr, s.dt))
            operands.append(p.ptr)
            instr = "vreduce_bits"
        else:
            clauses["pattern"] = self._int_arg(src1_pattern, "src1_pattern", 1, 7,
                                               hint="1 even lanes, 2 odd lanes, 3..6 lane i with i % 4 == pattern - 3,"
                                                    " 7 all lanes (or a tensor of lane bits)")
            instr = "vreduce"
        if m.counter:
            clauses.update(m.clause)
        clauses["blk_stride"] = (g.blk,)
        clauses["rep_stride"] = (g.rep, pr)
        clauses["dst_limit"] = self._dst_room(d)
        clauses["dst_tensor"] = self._dst_tensor_words(d)
        self._vec_emit(instr, *operands, repeat, footprint=fp, **clauses)
        if rsvd is not None:
            self._read_spr("RSVD_CNT", rsvd)


__all__ = ["IndexAPI"]
