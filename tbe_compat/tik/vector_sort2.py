"""TIK's v2 sort pair (A2 / 310B class, tik_api.md §9.11): ``vsort32`` and ``vmrgsort``.

======================================================  =============================================
TIK                                                     PTO
======================================================  =============================================
``vsort32(dst, src0, src1, r)``                         ``pto.ub.vsort32(dst, src0, src1, r)``
``vmrgsort(dst, srcs, counts, exh, r)``                 ``pto.ub.vmrgsort(dst, srcs, counts, r[, exhausted])``
======================================================  =============================================

A sorted element is an 8-byte record (score in the low bytes, u32 index in bytes 4..7), so
``dst`` of ``vsort32`` holds ``repeat * 256 / sizeof(dtype)`` elements; ``vmrgsort`` lists
are such records (``element_count_list`` counts records). Semantics and named choices:
`pto_core.ops.vector_sort2`. ``vms4_sr_scalar_array`` (exhausted mode only) receives VMS4_SR, the
records taken from each list, right after the merge.
"""
from __future__ import annotations

from .api import tik_api
from .vector_common import VectorBase, imul

RECORD = 8
SORT32 = 32
MAX_COUNT_V2 = 65535


class Sort2API(VectorBase):
    """vsort32, vmrgsort (mixin)."""

    @tik_api("vsort32")
    def vsort32(self, dst, src0, src1, repeat_times):
        """Sort 32 scores (``src0``) with their uint32 indices (``src1``) per repeat, descending, into records."""
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src0, "src0")
        i = self._vec_operand(src1, "src1")
        if s.dt is not d.dt:
            raise self._error(f"Instruction vsort32's src0's dtype {s.tensor.dtype} should be equal to dst's dtype "
                              f"{d.tensor.dtype}", operand="src0", value=s.tensor.dtype, limit=d.tensor.dtype,
                              hint="use src0 and dst tensors of one dtype")
        if i.tensor.dtype != "uint32":
            raise self._error(f"Instruction vsort32's src1's dtype should be uint32, got {i.tensor.dtype}",
                              operand="src1", value=i.tensor.dtype, limit="uint32",
                              hint="src1 holds the uint32 index of each score")
        self._require_instr("vbitsort32", d.tensor.dtype, what=f"{d.tensor.dtype} (vsort32)")
        repeat = self._vec_repeat(repeat_times)
        per_dst = 256 // max(1, d.dt.bits // 8)
        fp = [self._vec_access(d, imul(repeat, per_dst), True), self._vec_access(s, imul(repeat, SORT32), False),
              self._vec_access(i, imul(repeat, SORT32), False)]
        if d.tensor.storage is s.tensor.storage and isinstance(repeat, int):
            a, b = d.static_byte_offset, s.static_byte_offset
            if isinstance(a, int) and isinstance(b, int):
                if a < b + repeat * SORT32 * (d.dt.bits // 8) and b < a + repeat * 256:
                    raise self._error("vsort32 dst and src0 address overlapping error", operand="src0",
                                      hint="sort into a separate tensor (records are wider than the scores)")
        self._vec_emit("vsort32", d.ptr, s.ptr, i.ptr, repeat, footprint=fp)

    @tik_api("vmrgsort")
    def vmrgsort(self, dst, src_list, element_count_list, if_exhausted_suspension, repeat_times=1,
                 vms4_sr_scalar_array=None):
        """Merge up to four score-descending record lists (from ``vsort32``/``vmrgsort``) into ``dst``."""
        sr_scalars = None
        if vms4_sr_scalar_array is not None:
            sr_scalars = self._spr_scalars(vms4_sr_scalar_array, "vms4_sr_scalar_array", 4, None)
            if if_exhausted_suspension is not True:
                raise self._error("vms4_sr can't be read in non-exhausted mode", operand="vms4_sr_scalar_array",
                                  hint="pass if_exhausted_suspension=True to read the per-list counts")
        d = self._vec_operand(dst, "dst")
        if not isinstance(src_list, (list, tuple)) or not 1 <= len(src_list) <= 4:
            raise self._error("src_list should be a list of 1..4 tensors", operand="src_list", limit="1..4",
                              hint="pass a list of 1 to 4 UB tensors (one per sorted queue)")
        ss = [self._vec_operand(t, f"src_list[{k}]", align=RECORD) for k, t in enumerate(src_list)]
        self._same_dtype(d, *ss)
        self._require_instr("vmrgsort4v2", d.tensor.dtype, what=f"{d.tensor.dtype} (vmrgsort)")
        counts = list(element_count_list) if isinstance(element_count_list, (list, tuple)) else \
            [element_count_list] * len(ss)
        if len(counts) != len(ss):
            raise self._error(f"element_count_list should have {len(ss)} entries, got {len(counts)}",
                              operand="element_count_list", value=len(counts), limit=len(ss),
                              hint="give one count per src_list entry")
        counts = [self._int_arg(n, f"element_count_list[{k}]", 0, MAX_COUNT_V2) for k, n in enumerate(counts)]
        if_exhausted_suspension = self._bool_arg(if_exhausted_suspension, "if_exhausted_suspension")
        repeat = self._vec_repeat(repeat_times)
        if isinstance(repeat, int) and repeat > 1 and (len(ss) != 4 or if_exhausted_suspension or
                                                      len({repr(c) for c in counts}) != 1):
            raise self._error("repeat_times > 1 needs four lists of equal length and if_exhausted_suspension=False",
                              operand="repeat_times", value=repeat, hint="issue one vmrgsort per merge instead")
        per = max(1, 8 // max(1, d.dt.bits // 8))           # elements per record
        fp = []
        if all(isinstance(c, int) for c in counts) and isinstance(repeat, int):
            total = sum(counts) * repeat
            fp.append(self._vec_access(d, total * per, True))
            for o, c in zip(ss, counts):
                span = c * per if repeat == 1 else (4 * c * (repeat - 1) + c) * per
                fp.append(self._vec_access(o, span, False))
        else:
            fp = [d.write(None)] + [o.read(None) for o in ss]
        clauses = {"exhausted": True} if if_exhausted_suspension else {}
        self._vec_emit("vmrgsort", d.ptr, tuple(o.ptr for o in ss), tuple(counts), repeat, footprint=fp, **clauses)
        if sr_scalars is not None:
            self._read_spr("VMS4_SR", sr_scalars)


__all__ = ["Sort2API"]
