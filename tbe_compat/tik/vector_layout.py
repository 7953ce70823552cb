"""TIK data rearrangement and proposal instructions (tik_api.md §9.10, §9.11): transposes,
``vnchwconv``/``vec_trans_scatter``, ``vconcat``/``vextract``, ``vreduce``, the proposal sorts
``vrpsort16``/``vmrgsort4`` and the NMS instructions ``vrpac``/``viou``/``vaadd``/``rpn_cor``/
``rpn_cor_diag`` with ``set_rpn_offset``/``set_rpn_cor_ir``.

===================================================  ===================================================
TIK                                                  PTO
===================================================  ===================================================
``vtranspose(d, s)``                                 ``pto.ub.vtranspose(d, s, 1)``
``vec_trans(d, s, r, dr, sr)``                       ``pto.ub.vtranspose(d, s, r, rep_stride=(dr, sr))`` (512 B)
``vnchwconv(dh, sh, dl, sl, r, dr, sr)``             ``pto.ub.vnchwconv(dl, sl, r, dst_high_half, src_high_half,``
``vec_trans_scatter(...)`` (same arguments)          ``rep_stride=(dr, sr))`` (32 B units)
``vconcat(d, s, r, mode)`` / ``vextract``            ``pto.ub.vconcat`` / ``pto.ub.vextract(d, s, r, mode)``
``vreduce(m, d, s, pattern, r, sb, sr, pr, ...)``    ``pto.ub.vreduce(d, s, r, pattern=p, ...)`` (built-in pattern)
                                                     or ``pto.ub.vreduce_bits(d, s, pat, r, ...)`` (tensor)
``vrpsort16(d, s, r)``                               ``pto.ub.vbitsort(d, s, r)``
``vmrgsort4(d, srcs, lens, exh, valid, r)``          ``pto.ub.vmrgsort4(d, srcs, lens, r, valid_bit=v[, exhausted])``
``vrpac / viou / vaadd (d, ..., r)``                 ``pto.ub.vrpac / viou / vaadd``
``rpn_cor(s0, s1, s0r, s1r, r)``                     ``pto.ub.rpn_cor(s0, s1, r, rep_stride=(s0r, s1r))``
``rpn_cor_diag(d, s, ir)``                           ``pto.ub.rpn_cor_diag(d, s)``
``vmrgch(d, s, r)``                                  ``pto.ub.vmergech(d, s, r)``
===================================================  ===================================================

Special registers read back into Scalars right after the op that set them (``pto.get_spr``):
``vreduce(rsvd_scalar=)`` (RSVD_CNT: elements kept, into a uint32 Scalar), ``vmrgsort4
(vms4_sr_scalar_array=)`` (exhausted mode only; any four Scalars) and ``mov_vmrgsort4_sr_to_scalar``
(four int64 Scalars): VMS4_SR, the records taken from each list, 13 bits each.
"""
from __future__ import annotations

from pto_core.errors import UnsupportedOp, warn_at
from pto_core.ops.vector_layout import MERGECH_KEEP, REPEAT1_STARTS_ONE_STRIDE_IN
from pto_core.ops.vector_proposal import MRGSORT4_ALIGN

from .. import platform
from .api import tik_api
from .scalar import Expr, Scalar
from .tensor import Tensor
from .vector_common import BLOCK, U8, U16, Geo, VectorBase, iadd, ieq, imax, imul, isel, isub

LIST_LEN = 16
PROPOSAL = 8
GROUP = 16
VALID_BITS = {1: (1, 3, 7, 15), 0: (3, 7, 15)}     # v200+ also 0b0001; v100 needs two lists at least
VMS4_FIELD_BITS = 13       # VMS4_SR packs one 13-bit count per list

#: Named choice: the chip's ``vnchwconv`` ini row is checked at the call for the *hardware form*
#: (``scatter_vnchwconv_b8/b16/b32`` move bytes; Ascend310/910 have no b32 form), after TIK's API table
#: has decided the dtype. The 910B ini row lists no bfloat16, while TIK's table (tik_api.md Appendix B,
#: ``tik.vnchwconv`` on Ascend910B: ``...,bfloat16``), §9.10 ("910B + bf16") and the PTO op's table
#: all accept it: bfloat16 is checked as the 16-bit form it runs on (it was refused, a false rejection).
VNCHWCONV_INI_DTYPE = {"bfloat16": "float16"}


def _vnchwconv_ini_has(dtype: str) -> bool:
    """Whether the chip's ini row of vnchwconv has ``dtype`` (as `VNCHWCONV_INI_DTYPE` checks it; no public
    table: not checked here). The Fix of a vnchwconv / vec_trans_scatter dtype refusal lists only such dtypes:
    TIK's API table lists b32 on Ascend310/910 too, which the ini (and the call, next) refuse."""
    try:
        return platform.intrinsic_check_support("Intrinsic_vnchwconv", VNCHWCONV_INI_DTYPE.get(dtype, dtype))
    except platform.PlatformDataMissing:
        return True


class Repeat1StrideWarning(UserWarning):
    """``vec_trans_scatter`` / ``vnchwconv`` with one repeat and a non-zero repeat stride: the blocks start
    one stride after the list addresses (REPEAT1_STARTS_ONE_STRIDE_IN), which a kernel written for repeats
    >= 2 rarely means (a public FFT kernel read unwritten UB this way)."""


class _Token:
    """TIK's special-register handles (``RPN_COR_IR``, ``VMS4_SR``): only passed back to TIK calls."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tik.{self.name}"


RPN_COR_IR = _Token("RPN_COR_IR")
VMS4_SR = _Token("VMS4_SR")


class LayoutAPI(VectorBase):
    """Transposes, scatter, proposal field moves, pattern reduce, proposal sort and NMS (mixin)."""

    # ------------------------------------------------------------------ transposes
    @tik_api("vtranspose")
    def vtranspose(self, dst, src):
        """One 16x16 transpose of 16-bit elements: ``dst[j*16+i] = src[i*16+j]``."""
        self._trans(dst, src, 1, 1, 1)

    @tik_api("vec_trans")
    def vec_trans(self, dst, src, repeat_times, dst_rep_stride, src_rep_stride):
        """``repeat_times`` 16x16 transposes; repeat strides in 512 B units."""
        self._trans(dst, src, repeat_times, dst_rep_stride, src_rep_stride)

    def _trans(self, dst, src, repeat_times, dr, sr):
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        self._require_instr("vtranspose", d.tensor.dtype)
        repeat = self._vec_repeat(repeat_times, hi=4095)
        dr = self._vec_stride(dr, "dst_rep_stride", 4095)
        sr = self._vec_stride(sr, "src_rep_stride", 4095)
        fp = []
        for o, r in ((d, dr), (s, sr)):
            ext = isel(ieq(repeat, 0), 0, iadd(imul(imul(isub(repeat, 1), r), 256), 256))
            fp.append(self._vec_access(o, ext, o is d))
        clauses = {} if (isinstance(repeat, int) and repeat == 1 and isinstance(dr, int) and dr == 1 and
                         isinstance(sr, int) and sr == 1) else \
            {"rep_stride": (dr, sr)}
        self._vec_emit("vtranspose", d.ptr, s.ptr, repeat, footprint=fp, **clauses)

    @tik_api("vnchwconv")
    def vnchwconv(self, dst_high_half, src_high_half, dst_list, src_list, repeat_times, dst_rep_stride,
                  src_rep_stride, name=None):
        """Scatter transpose of 16 blocks (tik_api.md §9.10); strides in 32 B blocks."""
        self._scatter("vnchwconv", dst_high_half, src_high_half, dst_list, src_list, repeat_times, dst_rep_stride,
                      src_rep_stride)

    @tik_api("vec_trans_scatter")
    def vec_trans_scatter(self, dst_high_half, src_high_half, dst_list, src_list, repeat_times, dst_rep_stride,
                          src_rep_stride):
        """``vnchwconv`` under its TIK 2 name."""
        self._scatter("vec_trans_scatter", dst_high_half, src_high_half, dst_list, src_list, repeat_times,
                      dst_rep_stride, src_rep_stride)

    def _scatter(self, api, dst_high_half, src_high_half, dst_list, src_list, repeat_times, dr, sr):
        dst_high_half = self._bool_arg(dst_high_half, "dst_high_half")
        src_high_half = self._bool_arg(src_high_half, "src_high_half")
        lists = []
        for nm, lst in (("dst_list", dst_list), ("src_list", src_list)):
            if not isinstance(lst, (list, tuple)) or len(lst) != LIST_LEN:
                raise self._error(f"{nm} should be a list of {LIST_LEN} tensors, got "
                                  f"{len(lst) if isinstance(lst, (list, tuple)) else type(lst).__name__}",
                                  operand=nm, limit=LIST_LEN,
                                  hint=f"pass a list of {LIST_LEN} UB tensor views (one per block)")
            lists.append([self._vec_operand(t, f"{nm}[{i}]") for i, t in enumerate(lst)])
        dl, sl = lists
        ref = dl[0]
        for o in dl[1:] + sl:
            if o.dt.bits != ref.dt.bits:
                raise self._error(f"{o.name} dtype {o.tensor.dtype} should have the width of {ref.name} "
                                  f"({ref.tensor.dtype})", operand=o.name, value=o.tensor.dtype,
                                  limit=ref.tensor.dtype,
                                  hint=f"use {o.name} of a {ref.dt.bits}-bit dtype (reinterpret_cast_to one if the bytes are right)")
        self._require_support("tik." + ("vnchwconv" if api == "vnchwconv" else "vec_trans_scatter"),
                              sl[0].tensor.dtype, also=_vnchwconv_ini_has)
        # the TIK API table lists b32 for Ascend310/910 too, but their ini has no b32 scatter_vnchwconv
        # (the op verifier rejects it when the kernel runs): say so at the call
        dt = sl[0].tensor.dtype
        self._require_instr("vnchwconv", VNCHWCONV_INI_DTYPE.get(dt, dt), what=dt)
        repeat = self._vec_repeat(repeat_times)
        dr = self._vec_stride(dr, "dst_rep_stride", U16)
        sr = self._vec_stride(sr, "src_rep_stride", U16)
        if REPEAT1_STARTS_ONE_STRIDE_IN and isinstance(repeat, int) and repeat == 1 and \
                any(isinstance(r, int) and r for r in (dr, sr)):
            site = f"{self._where}: " if self._where is not None else ""    # ``-W error`` raises the text alone
            warn_at(f"{site}{api} with repeat_times 1 and repeat strides (dst {dr}, src {sr}): the one repeat starts one "
                    f"stride after the list addresses (TIK vnchwconv page), not at them. Fix: pass repeat strides "
                    f"of 0 to start at the list addresses", Repeat1StrideWarning, self._where)
        fp = []
        for lst, r, w in ((dl, dr, True), (sl, sr, False)):
            for o in lst:
                e = 32 * 8 // o.dt.bits
                # repeats - 1 strides, or with one repeat the one stride the blocks start in (tik_api.md §13.6)
                ext = isel(ieq(repeat, 0), 0, iadd(imul(imul(isel(ieq(repeat, 1), 1, isub(repeat, 1)), r), e), e))
                hint = None
                if isinstance(repeat, int) and repeat == 1 and isinstance(r, int) and r:
                    # the same advice whether the overflow is found now or when the kernel runs
                    hint = (f"with repeat_times 1 the blocks start one repeat stride ({r} x 32 B) after the "
                            "list addresses, as the TIK vnchwconv page says: pass repeat strides of 0 to "
                            "start at the list addresses")
                fp.append(self._vec_access(o, ext, w, hint))
        clauses = {}
        if ref.dt.bits == 8:               # the flags select byte halves; TIK ignores them for wider types
            if dst_high_half:
                clauses["dst_high_half"] = True
            if src_high_half:
                clauses["src_high_half"] = True
        clauses["rep_stride"] = (dr, sr)
        self._vec_emit("vnchwconv", tuple(o.ptr for o in dl), tuple(o.ptr for o in sl), repeat, footprint=fp,
                       **clauses)

    # ------------------------------------------------------------------ proposal fields
    @tik_api("vconcat")
    def vconcat(self, dst, src, repeat_times, mode_number):
        """Write field ``mode_number`` (0 x1 .. 5 label) of 16 proposals per repeat from 16 elements."""
        self._field("vconcat", dst, src, repeat_times, mode_number)

    @tik_api("vextract")
    def vextract(self, dst, src, repeat_times, mode_number):
        """Read field ``mode_number`` of 16 proposals per repeat into 16 elements."""
        self._field("vextract", dst, src, repeat_times, mode_number)

    def _field(self, instr, dst, src, repeat_times, mode_number):
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        self._require_instr(instr, d.tensor.dtype)
        repeat = self._vec_repeat(repeat_times)
        hi = 3 if instr == "vextract" and platform.current_soc().short_soc_version == "Ascend310" else 5
        hint = "0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5 label"
        if hi == 3:                        # TIK: MAX_MODE_NUMBER_VEXTRACT_V100 on the mini SoC
            hint = ("on Ascend310 vextract reads only the coordinates (0 x1, 1 y1, 2 x2, 3 y2); the score (4) and "
                    "label (5) fields can be read there with set_as or a strided data_move, or select a chip "
                    "whose vextract has them (Ascend910, Ascend310P, ...)")
        mode = self._int_arg(mode_number, "mode_number", 0, hi, hint=hint)
        big, small = (d, s) if instr == "vconcat" else (s, d)
        fp = [self._vec_access(d, imul(repeat, GROUP * (PROPOSAL if d is big else 1)), True),
              self._vec_access(s, imul(repeat, GROUP * (PROPOSAL if s is big else 1)), False)]
        self._vec_emit(instr, d.ptr, s.ptr, repeat, mode, footprint=fp)

    # ------------------------------------------------------------------ vreduce
    @tik_api("vreduce")
    def vreduce(self, mask, dst, src0, src1_pattern, repeat_times, src0_blk_stride, src0_rep_stride,
                src1_rep_stride, stride_unit=0, rsvd_scalar=None, mask_mode="normal"):
        """Keep the active lanes whose pattern bit is 1, packed into ``dst`` (built-in patterns 1..6, or a
        UB tensor of lane bits)."""
        rsvd = None if rsvd_scalar is None else self._spr_scalars(rsvd_scalar, "rsvd_scalar", 1, "uint32")
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src0, "src0")
        self._same_dtype(d, s)
        self._require_instr("vreduce", s.tensor.dtype)
        m = self._gather_mask(mask, s.dt, mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if m.counter else 1)
        unit = self._vec_stride_unit(stride_unit)
        g = Geo(self._vec_stride(src0_blk_stride, "src0_blk_stride", U16),
                self._vec_stride(src0_rep_stride, "src0_rep_stride", U8))
        pr = self._vec_stride(src1_rep_stride, "src1_rep_stride", U8)
        if unit and self._gather_per_repeat(m):
            raise self._error(f"stride_unit {unit} with mask_mode='counter' is not modelled on "
                              f"{platform.current_soc().soc_version} (counter mode runs count elements per repeat "
                              "there: migration_guide/tik_vector.md §5c)", operand="stride_unit", value=unit,
                              cls=UnsupportedOp, hint="use stride_unit=0")
        fp = [self._vec_access(s, self._gather_extent(s, m, repeat, g, unit), False), d.write(None)]
        clauses = {}
        operands = [d.ptr, s.ptr]
        if isinstance(src1_pattern, Tensor):
            want = "uint16" if s.dt.bits == 16 else "uint32"
            p = self._vec_operand(src1_pattern, "src1_pattern")
            if p.tensor.dtype != want:
                raise self._error(f"When src dtype is b{s.dt.bits}, src1 dtype should be u{s.dt.bits}, "
                                  f"input src1 dtype: {p.tensor.dtype}", operand="src1_pattern",
                                  value=p.tensor.dtype, limit=want,
                                  hint=f"pass a {want} pattern tensor (or a fixed pattern 1..7)")
            fp.append(self._pattern_access(p, m, repeat, pr, s.dt))
            operands.append(p.ptr)
            instr = "vreduce_bits"
        else:
            pat = self._int_arg(src1_pattern, "src1_pattern", 1, 6,
                                hint="1 even lanes, 2 odd lanes, 3..6 lane i with i % 4 == pattern - 3")
            clauses["pattern"] = pat
            instr = "vreduce"
        clauses.update(m.clause)
        clauses["blk_stride"] = (g.blk,)
        clauses["rep_stride"] = (g.rep, pr)
        if unit:
            clauses["stride_unit"] = unit
        clauses["dst_limit"] = self._dst_room(d)
        clauses["dst_tensor"] = self._dst_tensor_words(d)
        self._vec_emit(instr, *operands, repeat, footprint=fp, **clauses)
        if rsvd is not None:
            self._read_spr("RSVD_CNT", rsvd)

    # ------------------------------------------------------------------ proposal sort
    @tik_api("vrpsort16")
    def vrpsort16(self, dst, src, repeat_times):
        """Sort each group of 16 proposals by score, descending (``pto.ub.vbitsort``)."""
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        self._same_dtype(d, s)
        self._require_instr("vbitsort", d.tensor.dtype, what=f"{d.tensor.dtype} (vrpsort16)")
        repeat = self._vec_repeat(repeat_times)
        n = imul(repeat, GROUP * PROPOSAL)
        self._vec_emit("vbitsort", d.ptr, s.ptr, repeat,
                       footprint=[self._vec_access(d, n, True), self._vec_access(s, n, False)])

    @tik_api("vmrgsort4")
    def vmrgsort4(self, dst, src_list, element_count_list, if_exhausted_suspension, valid_bit, repeat_times=1,
                  vms4_sr_scalar_array=None):
        """Merge up to four score-descending proposal lists (tik_api.md §9.11); returns the VMS4_SR handle."""
        counts = None
        if vms4_sr_scalar_array is not None:
            counts = self._spr_scalars(vms4_sr_scalar_array, "vms4_sr_scalar_array", 4, None)
            if if_exhausted_suspension is not True:
                raise self._error("vms4_sr can't be read in non-exhausted mode", operand="vms4_sr_scalar_array",
                                  hint="pass if_exhausted_suspension=True to read the per-list counts")
        d = self._vec_operand(dst, "dst", align=0)
        self._require_instr("vmrgsort4", d.tensor.dtype)      # a dtype the chip lacks before its alignment rule
        align = MRGSORT4_ALIGN.get(d.dt.bits // 8, 32)        # 16 B for f16 lists, 32 B for f32
        d.check_aligned(align)
        if not isinstance(src_list, (list, tuple)) or not 1 <= len(src_list) <= 4:
            raise self._error("src_list should be a list of up to 4 tensors", operand="src_list", limit="1..4",
                              hint="pass a list of 1 to 4 UB tensors (one per sorted queue)")
        ss = [self._vec_operand(t, f"src_list[{i}]", align=align) for i, t in enumerate(src_list)]
        self._same_dtype(d, *ss)
        if isinstance(element_count_list, (list, tuple)):
            lens = list(element_count_list)
        else:
            lens = [element_count_list] * len(ss)
        if len(lens) != len(ss):
            raise self._error(f"element_count_list should have {len(ss)} entries, got {len(lens)}",
                              operand="element_count_list", value=len(lens), limit=len(ss),
                              hint="give one length per src_list entry")
        lens = [self._int_arg(n, f"element_count_list[{i}]", 0, 4095) for i, n in enumerate(lens)]
        if_exhausted_suspension = self._bool_arg(if_exhausted_suspension, "if_exhausted_suspension")
        if isinstance(valid_bit, str):
            try:
                valid_bit = int(valid_bit, 2)
            except ValueError:
                raise self._error(f"valid_bit {valid_bit!r} is not a binary string", operand="valid_bit",
                                  value=valid_bit, hint="pass valid_bit as a binary string such as \"1111\"") from None
        v = self._int_arg(valid_bit, "valid_bit", 1, 15)
        if isinstance(v, int):
            allowed = VALID_BITS[0] if platform.current_soc().short_soc_version in ("Ascend310", "Ascend910") \
                else VALID_BITS[1]
            if v not in allowed:
                raise self._error(f"valid bits only support {', '.join(format(b, '04b') for b in allowed)} "
                                  f"(binary), got {v:04b}", operand="valid_bit", value=v,
                                  limit=", ".join(format(b, "04b") for b in allowed),
                                  hint=f"pass one of {', '.join(str(b) for b in allowed)} (bit i marks src_list[i] "
                                       f"as a queue to merge)")
        repeat = self._vec_repeat(repeat_times)
        fp = self._vms4_footprint(d, ss, lens, v, repeat, if_exhausted_suspension)
        clauses = {"valid_bit": v}
        if if_exhausted_suspension:
            clauses["exhausted"] = True
        self._vec_emit("vmrgsort4", d.ptr, tuple(s.ptr for s in ss), tuple(lens), repeat, footprint=fp, **clauses)
        if counts is not None:
            self._read_spr("VMS4_SR", counts, VMS4_FIELD_BITS)
            return None
        return VMS4_SR

    def _vms4_footprint(self, d, ss, lens, valid, repeat, exhausted):
        """TIK's vmrgsort4 tensor-overflow checks (``_check_vms4_src/dst_tensor_overflow``) and the
        MrgSort4 rule that no source may overlap ``dst``; returns the footprint.

        With a static ``valid_bit`` and ``repeat_times``: the repeat form counts only for four valid lists
        of equal length without suspension (else one repeat); valid list ``k`` is read for
        ``lens[k] + (repeat - 1) * sum(lens)`` proposals; ``dst`` receives ``sum(valid lens) + (repeat - 1)
        * sum(lens)`` proposals, or in exhausted mode at least ``min(valid lens)`` (TIK checks that much:
        how many more depends on the data). Lengths that are Scalars are checked when the kernel runs."""
        if not isinstance(valid, int):
            return [d.write(None)] + [s.read(None) for s in ss]
        run_time = None
        if not isinstance(repeat, int):
            # a run-time repeat: the extents below are expressions, checked when the op runs; a repeat of 0
            # is a no-op (tik_api.md 9.1) and touches nothing
            run_time = repeat
            repeat = imax(repeat, 1)

        def touched(ext):
            return ext if run_time is None else isel(ieq(run_time, 0), 0, ext)
        n = bin(valid).count("1")
        if n > len(ss):
            raise self._error(f"valid_bit {valid:04b} selects {n} lists, but src_list has {len(ss)}",
                              operand="valid_bit", value=valid, limit=len(ss),
                              hint=f"pass {n} tensors in src_list, or a valid_bit that selects at most {len(ss)} "
                                   "lists (bit i marks src_list[i])")
        static = all(isinstance(x, int) for x in lens)
        if exhausted or valid != 15 or not static or len(set(lens)) != 1:
            repeat = 1
        total = lens[0]
        for x in lens[1:]:
            total = iadd(total, x)
        more = imul(isub(repeat, 1), total)
        fp = []
        src_ext = []
        for k in range(n):
            ext = imul(iadd(lens[k], more), PROPOSAL)
            src_ext.append(ext)
            fp.append(self._vec_access(ss[k], touched(ext), False))
        fp += [s.read(None) for s in ss[n:]]
        if exhausted:
            least = min(lens[:n]) * PROPOSAL if static else None
            self._vec_access(d, None if least is None else touched(least), True)
            fp.insert(0, d.write(None))
            dst_ext = least
        else:
            used = lens[0]
            for x in lens[1:n]:
                used = iadd(used, x)
            dst_ext = imul(iadd(used, more), PROPOSAL)
            fp.insert(0, self._vec_access(d, touched(dst_ext), True))
        if isinstance(dst_ext, int) and d.static_byte_offset is not None:
            size = max(1, d.dt.bits // 8)
            a0 = d.static_byte_offset
            a1 = a0 + (sum(lens[:n]) * PROPOSAL if exhausted else dst_ext) * size
            for k, (s, ext) in enumerate(zip(ss, src_ext)):
                if s.tensor.storage is not d.tensor.storage or s.static_byte_offset is None \
                        or not isinstance(ext, int) or ext == 0 or a1 == a0:
                    continue
                b0 = s.static_byte_offset
                if b0 < a1 and a0 < b0 + ext * size:
                    raise self._error(f"dst and src_list[{k}] overlap (dst bytes {a0}..{a1}, src_list[{k}] bytes "
                                      f"{b0}..{b0 + ext * size} of tensor {d.tensor.name!r}): vmrgsort4 does not "
                                      "support overlapping source and destination", operand=f"src_list[{k}]",
                                      hint="merge into a separate tensor or a non-overlapping part of this one")
        return fp

    @tik_api("mov_vmrgsort4_sr_to_scalar")
    def mov_vmrgsort4_sr_to_scalar(self, scalar_list, vms4_sr):
        """The records the last ``vmrgsort4`` took from each of its lists (VMS4_SR) into ``scalar_list[0..3]``
        (int64 Scalars)."""
        if vms4_sr is not VMS4_SR:
            raise self._error("Please assure the vms4_sr is the return of vmrgsort4.", operand="vms4_sr",
                              value=repr(vms4_sr), hint="pass the value vmrgsort4 returned")
        if not isinstance(scalar_list, list):
            raise self._error("scalar_list should be list", operand="scalar_list", value=type(scalar_list).__name__,
                              hint="pass scalar_list as a list of Scalars")
        self._read_spr("VMS4_SR", self._spr_scalars(scalar_list, "scalar_list", 4, "int64"), VMS4_FIELD_BITS)

    # ------------------------------------------------------------------ NMS
    @tik_api("vmrgch")
    def vmrgch(self, dst, src, repeat_times):
        """Keep the first 4 elements of every 32 B block: repeat ``r`` reads 8 blocks (256 B) from
        ``src + r*256 B`` and writes their first 4 elements, packed in block order, to ``dst + 32r`` elements
        (8- and 16-bit data; hardware ``vmergech``; migration_guide/tik_vector.md §5e)."""
        d, ss, repeat = self._nms_args("vmergech", dst, [src], repeat_times)
        if d.dt.bits not in (8, 16):
            raise self._error(f"vmrgch moves 8- or 16-bit elements, got {d.tensor.dtype}", operand="dst",
                              value=d.tensor.dtype, limit="int8/uint8/int16/uint16/float16",
                              cls=UnsupportedOp, hint="reinterpret_cast_to an 8- or 16-bit dtype of the same bytes")
        per_block = BLOCK * 8 // d.dt.bits
        self._vec_emit("vmergech", d.ptr, ss[0].ptr, repeat,
                       footprint=[self._vec_access(d, imul(repeat, 8 * MERGECH_KEEP), True),
                                  self._vec_access(ss[0], imul(repeat, 8 * per_block), False)])

    @tik_api("vrpac")
    def vrpac(self, dst, src, repeat_times):
        """Areas of 16 proposals per repeat: ``(x2 - x1 + off) * (y2 - y1 + off)`` (off: ``set_rpn_offset``,
        1 after reset). Each operation rounded to the dtype (documented model, pto_core.ops.vector_nms)."""
        d, ss, repeat = self._nms_args("vrpac", dst, [src], repeat_times)
        self._vec_emit("vrpac", d.ptr, ss[0].ptr, repeat,
                       footprint=[self._vec_access(d, imul(repeat, GROUP), True),
                                  self._vec_access(ss[0], imul(repeat, GROUP * PROPOSAL), False)])

    @tik_api("viou")
    def viou(self, dst, src0, src1, repeat_times):
        """Intersection areas: ``dst[(16r+i)*16 + j]`` = area of src0 proposal ``16r+i`` ^ src1 proposal ``j``."""
        d, ss, repeat = self._nms_args("viou", dst, [src0, src1], repeat_times)
        self._vec_emit("viou", d.ptr, ss[0].ptr, ss[1].ptr, repeat,
                       footprint=[self._vec_access(d, imul(repeat, GROUP * GROUP), True),
                                  self._vec_access(ss[0], imul(repeat, GROUP * PROPOSAL), False),
                                  self._vec_access(ss[1], isel(ieq(repeat, 0), 0, GROUP * PROPOSAL), False)])

    @tik_api("vaadd")
    def vaadd(self, dst, src0, src1, repeat_times):
        """Area sums: ``dst[(16r+i)*16 + j] = src0[16r+i] + src1[j]``."""
        d, ss, repeat = self._nms_args("vaadd", dst, [src0, src1], repeat_times)
        self._vec_emit("vaadd", d.ptr, ss[0].ptr, ss[1].ptr, repeat,
                       footprint=[self._vec_access(d, imul(repeat, GROUP * GROUP), True),
                                  self._vec_access(ss[0], imul(repeat, GROUP), False),
                                  self._vec_access(ss[1], isel(ieq(repeat, 0), 0, GROUP), False)])

    def _nms_args(self, instr, dst, srcs, repeat_times):
        d = self._vec_operand(dst, "dst")
        ss = [self._vec_operand(t, f"src{i}" if len(srcs) > 1 else "src") for i, t in enumerate(srcs)]
        self._same_dtype(d, *ss)
        self._require_instr(instr, d.tensor.dtype)
        return d, ss, self._vec_repeat(repeat_times)

    @tik_api("set_rpn_offset")
    def set_rpn_offset(self, offset, offset_dtype="float16"):
        """Set the offset ``vrpac``/``viou`` add to widths and heights (1 after reset)."""
        soc = platform.current_soc()
        if soc.short_soc_version in ("Ascend310",) or soc.short_soc_version.startswith(("Ascend610Lite", "BS9SX2")):
            raise self._error(f"set_rpn_offset is not supported on {soc.soc_version}", operand="offset",
                              cls=UnsupportedOp, hint="subtract 1 from x2/y2 instead (the offset stays 1)")
        allowed = ("float16",) if soc.short_soc_version == "Ascend910" else ("float16", "float32")
        if offset_dtype not in allowed:
            raise self._error(f"offset_dtype should be one of {', '.join(allowed)} on {soc.soc_version}",
                              operand="offset_dtype", value=offset_dtype, limit=", ".join(allowed),
                              hint=f"pass offset_dtype=\"{allowed[0]}\"")
        if isinstance(offset, Scalar):
            if offset.dtype != offset_dtype:
                raise self._error("offset's dtype mismatch with offset_dtype", operand="offset", value=offset.dtype,
                                  limit=offset_dtype,
                                  hint=f"pass a {offset_dtype} Scalar, or offset_dtype=\"{offset.dtype}\" if allowed")
            value = offset.ir
        elif isinstance(offset, (int, float)) and not isinstance(offset, bool):
            big = 65504.0 if offset_dtype == "float16" else 3.4e38
            if abs(offset) > big:
                raise self._error(f"offset value should be in the range of {offset_dtype}", operand="offset",
                                  value=offset, limit=f"|offset| <= {big}",
                                  hint=f"pass an offset of at most {big} in magnitude")
            value = float(offset)
        else:
            raise self._error("offset should be int, float or Scalar", operand="offset", value=repr(offset),
                              hint="pass offset as an int, float or Scalar")
        self._vec_emit("set_rpn_offset", value)

    @tik_api("set_rpn_cor_ir")
    def set_rpn_cor_ir(self, number):
        """Set the 16-bit RPN_COR_IR register; returns its handle."""
        if isinstance(number, Scalar) and number.dtype != "uint16":
            raise self._error("scalar_number should be uint16", operand="number", value=number.dtype,
                              limit="uint16",
                              hint="pass a uint16 Scalar")
        if isinstance(number, Expr) and not isinstance(number, Scalar):
            raise self._error("number should be int or Scalar", operand="number", value=repr(number),
                              hint="pass number as an int or Scalar")
        v = self._int_arg(number, "number", 0, 65535)
        self._vec_emit("set_rpn_cor_ir", v)
        return RPN_COR_IR

    @tik_api("rpn_cor")
    def rpn_cor(self, src0, src1, src0_rep_stride, src1_rep_stride, repeat_times):
        """OR the suppression-matrix rows of kept proposals into RPN_COR_IR; returns its handle."""
        a = self._vec_operand(src0, "src0", dtypes=("uint16",))
        b = self._vec_operand(src1, "src1", dtypes=("uint16",))
        self._require_instr("rpn_cor", "")
        repeat = self._vec_repeat(repeat_times)
        s0 = self._vec_stride(src0_rep_stride, "src0_rep_stride", U16)
        s1 = self._vec_stride(src1_rep_stride, "src1_rep_stride", U16)
        fp = [self._vec_access(o, isel(ieq(repeat, 0), 0, iadd(imul(imul(isub(repeat, 1), r), 16), 16)), False)
              for o, r in ((a, s0), (b, s1))]
        self._vec_emit("rpn_cor", a.ptr, b.ptr, repeat, footprint=fp, rep_stride=(s0, s1))
        return RPN_COR_IR

    @tik_api("rpn_cor_diag")
    def rpn_cor_diag(self, dst, src, src_register):
        """Resolve the diagonal 16x16 block in order against RPN_COR_IR into 16 suppression entries."""
        if src_register is not RPN_COR_IR:
            raise self._error("src_register not equal to RPN_COR_IR", operand="src_register",
                              value=repr(src_register), hint="pass the value returned by rpn_cor/set_rpn_cor_ir")
        d = self._vec_operand(dst, "dst", dtypes=("uint16",))
        s = self._vec_operand(src, "src", dtypes=("uint16",))
        self._require_instr("rpn_cor_diag", "")
        self._vec_emit("rpn_cor_diag", d.ptr, s.ptr,
                       footprint=[self._vec_access(d, GROUP, False), self._vec_access(d, GROUP, True),
                                  self._vec_access(s, GROUP, False)])


__all__ = ["LayoutAPI", "RPN_COR_IR", "VMS4_SR"]
