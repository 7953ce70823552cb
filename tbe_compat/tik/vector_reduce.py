"""TIK reductions (tik_api.md §9.7): ``vcadd vcmax vcmin vcgadd vcgmax vcgmin vcpadd``,
``vec_cpadd`` and the ``vec_reduce_add/max/min`` macros.

==========================================================  ===============================================
TIK                                                         PTO
==========================================================  ===============================================
``vcadd(m, d, s, r, dr, sb, sr[, stride_unit])``            ``pto.ub.vcadd(d, s, r, mask=m, blk_stride=(sb,),``
                                                            ``rep_stride=(dr, sr))``
``vcmax/vcmin/vcgadd/vcgmax/vcgmin/vcpadd`` (same form)     ``pto.ub.<same>``
``vec_cpadd(m, d, s, r, dr, sr)``                           ``pto.ub.vcpadd(d, s, r, mask=m, rep_stride=(dr, sr))``
``vec_reduce_add(m, d, s, work, r, sr)``                    ``pto.ub.reduce_add(d, s, work, r, mask=m, rep_stride=(sr,))``
``vec_reduce_max/min(m, d, s, work, r, sr, cal_index)``     ``pto.ub.reduce_max/min(..., cal_index=True)``
==========================================================  ===============================================

Repeat strides of every form here, ``vec_cpadd`` and ``vec_reduce_*`` included, take 0..65535 (the
instructions' strides are 16-bit; TIK's own checks and reference for ``vec_reduce_add/max/min`` and
``vec_cpadd`` say "[0, 65535]", unlike the [0, 255] of the other ``vec_*`` APIs).
Destination repeat strides count results: 1 element (vcadd), 2 (vcmax/vcmin: value and
index bits), 8 (vcgadd/vcgmax/vcgmin), ``PAR/2`` (vcpadd; 0 is treated as 1).
"""
from __future__ import annotations

from pto_core.errors import OutOfBounds, UnsupportedOp

from .api import tik_api
from .vector_common import U16, Geo, VectorBase, iadd, idiv, ieq, imul, isel, isub

#: name -> (results per repeat as a function of PAR, dst start alignment in bytes)
WHOLE = {"vcadd": (lambda par: 1, 0), "vcmax": (lambda par: 2, 4), "vcmin": (lambda par: 2, 4),
         "vcgadd": (lambda par: 8, 16), "vcgmax": (lambda par: 8, 16), "vcgmin": (lambda par: 8, 16),
         "vcpadd": (lambda par: par // 2, 32)}
#: name -> what its dst_rep_stride counts (named in the range error's Fix; the module docstring)
WHOLE_DST_UNIT = {"vcadd": "results (1 element each)", "vcmax": "(value, index) pairs",
                  "vcmin": "(value, index) pairs", "vcgadd": "groups of 8 results",
                  "vcgmax": "groups of 8 results", "vcgmin": "groups of 8 results",
                  "vcpadd": "128-byte units"}
MAX_REDUCE_REPEAT = 4095
INDEX_REPEAT_LIMIT = {"float16": 511, "float32": 4095, "int16": 255}


class ReduceAPI(VectorBase):
    """Reductions (mixin)."""

    def _whole(self, instr, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride,
               stride_unit=0):
        nres, align = WHOLE[instr]
        s = self._vec_operand(src, "src")
        d = self._vec_operand(dst, "dst", align=align or max(1, s.dt.bits // 8))
        self._same_dtype(s, d)
        self._require_instr(instr, s.tensor.dtype)
        m = self._vec_mask(mask, [s.dt])
        repeat = self._vec_repeat(repeat_times)
        unit = self._vec_stride_unit(stride_unit)
        sg = Geo(1 if src_blk_stride is None else self._vec_stride(src_blk_stride, "src_blk_stride", U16),
                 self._vec_stride(src_rep_stride, "src_rep_stride", U16))
        dr = self._vec_stride(dst_rep_stride, "dst_rep_stride", U16, WHOLE_DST_UNIT[instr])
        k = nres(m.par)
        step = isel(ieq(dr, 0), 1, dr) if instr == "vcpadd" else dr
        dst_ext = isel(ieq(repeat, 0), 0, imul(iadd(imul(isub(repeat, 1), step), 1), k))
        fp = [self._vec_access(d, dst_ext, True),
              self._vec_access(s, self._vec_extent(s, m, repeat, sg, unit), False)]
        clauses = dict(m.clause)
        if src_blk_stride is not None:
            clauses["blk_stride"] = (sg.blk,)
        clauses["rep_stride"] = (dr, sg.rep)
        if unit:
            clauses["stride_unit"] = unit
        self._vec_emit(instr, d.ptr, s.ptr, repeat, footprint=fp, **clauses)

    @tik_api("vcmax")
    def vcmax(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, stride_unit=0,
              index_low=False, max_cnt_index=None):
        """Per repeat: (max, index of its first lane) into 2 dst elements, the index as integer bits."""
        self._no_index_options("vcmax", index_low, max_cnt_index)
        self._whole("vcmax", mask, dst, src, repeat_times, dst_rep_stride,
                    self._given(src_blk_stride, "src_blk_stride"), src_rep_stride,
                    stride_unit)

    @tik_api("vcmin")
    def vcmin(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, stride_unit=0,
              index_low=False, max_cnt_index=None):
        """Per repeat: (min, index of its first lane) into 2 dst elements, the index as integer bits."""
        self._no_index_options("vcmin", index_low, max_cnt_index)
        self._whole("vcmin", mask, dst, src, repeat_times, dst_rep_stride,
                    self._given(src_blk_stride, "src_blk_stride"), src_rep_stride,
                    stride_unit)

    def _no_index_options(self, name, index_low, max_cnt_index):
        """``index_low`` / ``max_cnt_index`` stay out: public kernels show only that ``max_cnt_index`` is a list of
        three Scalars (value, count, index) read from the MAX_MIN_CNT register; what the count counts, how the
        index runs across repeats (and ties), and where ``index_low`` puts the index bits are not published."""
        if index_low or max_cnt_index is not None:
            what = "index_low" if index_low else "max_cnt_index"
            detail = ("which bits of the result the index goes to" if what == "index_low" else
                      "what the MAX_MIN_CNT register's count counts and how its value and index run across "
                      "repeats (ties included)")
            raise self._error(f"{name} with {what} is not modelled: the public sources do not specify {detail}",
                              operand=what, value=True if what == "index_low" else "list of Scalars",
                              cls=UnsupportedOp,
                              hint=f"use the default form ({name} writes a (value, index) pair per repeat; read "
                                   f"the index through reinterpret_cast_to) or vec_reduce_{name[2:]}(..., "
                                   f"cal_index=True) for the overall {name[2:]} and its index")

    @tik_api("vec_cpadd")
    def vec_cpadd(self, mask, dst, src, repeat_times, dst_rep_stride, src_rep_stride):
        """Per repeat ``dst[i] = src[2i] + src[2i+1]``; dst_rep_stride in 128 B (0 is treated as 1)."""
        self._whole("vcpadd", mask, dst, src, repeat_times, dst_rep_stride, None, src_rep_stride)

    # ------------------------------------------------------------------ vec_reduce_*
    def _macro(self, kind, mask, dst, src, work_tensor, repeat_times, src_rep_stride, cal_index=False):
        s = self._vec_operand(src, "src")
        d = self._vec_operand(dst, "dst", align=4 if kind != "add" else max(1, s.dt.bits // 8))
        w = self._vec_operand(work_tensor, "work_tensor", align=max(1, s.dt.bits // 8))
        self._same_dtype(s, d, w)
        instr = {"add": "vcadd", "max": "vcmax", "min": "vcmin"}[kind]
        self._require_instr(instr, s.tensor.dtype)
        cal_index = self._bool_arg(cal_index, "cal_index", hint="pass True (also return the index) or False")
        m = self._vec_mask(mask, [s.dt])
        hi = INDEX_REPEAT_LIMIT.get(s.tensor.dtype, 255) if cal_index else MAX_REDUCE_REPEAT
        repeat = self._int_arg(repeat_times, "repeat_times", 1, hi,
                               hint=f"vec_reduce_{kind} takes 1..{hi} repeats"
                                    + (" with cal_index (the index must fit the dtype)" if cal_index else ""))
        sr = self._vec_stride(src_rep_stride, "src_rep_stride", U16)
        ndst = 2 if cal_index else 1
        need = self._work_need(kind, cal_index, repeat, s)
        fp = [self._vec_access(d, ndst, True), self._vec_access(s, self._vec_extent(s, m, repeat, Geo(1, sr), 0),
                                                                False)]
        rule = self._work_rule(kind, cal_index, repeat, s)
        have = isub(w.tensor.storage_elements, w.tensor.offset)
        if isinstance(need, int) and isinstance(have, int) and have < need:
            # every operand static: the declared size is wrong whether or not this line runs; TIK checks it when the call is traced
            raise self._error(f"work_tensor's element should not be less than {need} but get {have} "
                              f"(tensor {w.tensor.name!r})", operand="work_tensor", value=have,
                              limit=f">= {need}", cls=OutOfBounds,
                              hint=f"{rule}; declare work_tensor with at least that many elements from the view's start")
        # a run-time repeat gives an Expr size: checked when the op runs (a pto.assert_in_bounds before it)
        fp.append(self._vec_access(w, need, True, hint=f"{rule}; declare work_tensor with at least that many "
                                                      f"elements from the view's start"))
        if (w.tensor.storage is d.tensor.storage and isinstance(w.static_offset, int) and
                isinstance(d.static_offset, int) and isinstance(need, int)):
            a0, a1 = d.static_offset, d.static_offset + ndst
            b0, b1 = w.static_offset, w.static_offset + need
            if a0 < b1 and b0 < a1:
                raise self._error("work_tensor and dst should not overlap", operand="work_tensor",
                                  hint="give the work tensor its own UB space")
        clauses = dict(m.clause)
        clauses["rep_stride"] = (sr,)
        if cal_index and kind != "add":
            clauses["cal_index"] = True
        self._vec_emit(f"reduce_{kind}", d.ptr, s.ptr, w.ptr, repeat, footprint=fp, **clauses)

    def _work_rule(self, kind, cal_index, repeat, s):
        """The work-size rule of tik_api.md §9.7 in words, with this call's number when ``repeat`` is static (the Fix of
        a too-small ``work_tensor``)."""
        if kind == "add":
            formula = "repeat_times elements"
        elif not cal_index:
            formula = "2 * repeat_times elements"
        else:
            e, par = 32 * 8 // s.dt.bits, 256 * 8 // s.dt.bits
            formula = (f"with cal_index, E={e} elements per block, P={par} per repeat: o1 = 2*R, a2 = ceil(o1/E)*E, "
                       f"o2 = ceil(o1/P)*2, a3 = ceil(o2/E)*E, o3 = ceil(o2/P)*2; an immediate R needs a2 + o2 when "
                       f"o2 == 2, else a2 + a3 + o3; a Scalar R needs a2 + a3 + ceil(o3/E)*E + ceil(o3/P)*2")
        if isinstance(repeat, int):
            return (f"vec_reduce_{kind}'s work_tensor needs {self._work_need(kind, cal_index, repeat, s)} "
                    f"{s.tensor.dtype} elements for repeat_times={repeat} (tik_api.md §9.7: {formula})")
        return f"vec_reduce_{kind}'s work_tensor size (tik_api.md §9.7): {formula}"

    def _work_need(self, kind, cal_index, repeat, s, four_terms=False):
        """Elements ``work_tensor`` must hold (tik_api.md §9.7). ``four_terms``: an int ``repeat`` gets the size of a
        Scalar repeat (for scratch sized by a bound and then run with a run-time repeat)."""
        if kind == "add":
            return repeat
        if not cal_index:
            return imul(repeat, 2)
        e = 32 * 8 // s.dt.bits
        par = 256 * 8 // s.dt.bits
        if not isinstance(repeat, int):
            # the reference's size for a Scalar repeat_times: all four terms (f16 R=65 -> 178, not 162)
            def up(a, b):
                return imul(idiv(iadd(a, b - 1), b), b)
            o1 = imul(repeat, 2)
            o2 = imul(idiv(iadd(o1, par - 1), par), 2)
            o3 = imul(idiv(iadd(o2, par - 1), par), 2)
            o4 = imul(idiv(iadd(o3, par - 1), par), 2)
            return iadd(iadd(iadd(up(o1, e), up(o2, e)), up(o3, e)), o4)
        o1 = 2 * repeat
        a2 = -(-o1 // e) * e
        o2 = -(-o1 // par) * 2
        a3 = -(-o2 // e) * e
        if o2 == 2 and not four_terms:
            # one second-pass repeat gives the result: TIK's check asks for a2 + o2 (its docstring's example sizes
            # work_tensor 18 float16 elements for repeat_times=2; the three-pass sum would be 34)
            return a2 + o2
        o3 = -(-o2 // par) * 2
        if o3 <= 2 and not four_terms:
            return a2 + a3 + o3
        a4 = -(-o3 // e) * e
        o4 = -(-o3 // par) * 2
        return a2 + a3 + a4 + o4

    @tik_api("vec_reduce_add")
    def vec_reduce_add(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride):
        """``dst[0]`` = sum of all active elements (vcadd per repeat into ``work_tensor``, then vcadd passes)."""
        self._macro("add", mask, dst, src, work_tensor, repeat_times, src_rep_stride)

    @tik_api("vec_reduce_max")
    def vec_reduce_max(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride, cal_index=False):
        """``dst[0]`` = max of all active elements; with ``cal_index`` ``dst[1]`` = its index (integer bits)."""
        self._macro("max", mask, dst, src, work_tensor, repeat_times, src_rep_stride, cal_index)

    @tik_api("vec_reduce_min")
    def vec_reduce_min(self, mask, dst, src, work_tensor, repeat_times, src_rep_stride, cal_index=False):
        """``dst[0]`` = min of all active elements; with ``cal_index`` ``dst[1]`` = its index (integer bits)."""
        self._macro("min", mask, dst, src, work_tensor, repeat_times, src_rep_stride, cal_index)


def _whole_method(instr: str):
    def method(self, mask, dst, src, repeat_times, dst_rep_stride, src_blk_stride, src_rep_stride, stride_unit=0):
        self._whole(instr, mask, dst, src, repeat_times, dst_rep_stride, self._given(src_blk_stride, "src_blk_stride"),
                    src_rep_stride, stride_unit)
    method.__name__ = instr
    method.__doc__ = f"``{instr}``: per-repeat reduction into dst (pto.ub.{instr}); tik_api.md §9.7."
    return tik_api(instr)(method)


for _n in ("vcadd", "vcgadd", "vcgmax", "vcgmin", "vcpadd"):
    setattr(ReduceAPI, _n, _whole_method(_n))
del _n

__all__ = ["ReduceAPI"]
