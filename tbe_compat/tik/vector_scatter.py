"""TIK's address-list vector family ``scatter_v*`` (v100/v200 VA-register instructions).

Each call lowers to one ``pto.ub.scatter_<x>`` op (`pto_core.ops.vector_va`): the lane-wise
instruction ``<x>`` whose operands give up to 8 block addresses (a list of UB tensor views)
instead of a base and a block stride. Block ``j`` of repeat ``r`` is at ``list[j] + r *
rep_stride * 32 B``; lanes, mask and numerics are those of ``<x>``.

==========================================================  ===========================================
TIK                                                         PTO
==========================================================  ===========================================
``scatter_vadd(m, dl, s0l, s1l, r, dr, s0r, s1r)`` (also    ``pto.ub.scatter_vadd(dl, s0l, s1l, r, mask=m,``
vsub vmul vdiv vmax vmin vmadd vmaddrelu vmla)              ``    rep_stride=(dr, s0r, s1r))``
``scatter_vabs(m, dl, sl, r, dr, sr)`` (also vexp vln vrec  ``pto.ub.scatter_vabs(dl, sl, r, mask=m, ...)``
vrsqrt vsqrt vrelu vector_mov)
``scatter_vadds(m, dl, sl, x, r, dr, sr, mask_mode)``       ``pto.ub.scatter_vadds(dl, sl, x, r, ...)``
(also vmuls, vmaxs, vmins)                                  (``counter=`` in counter mode)
``scatter_vaxpy(m, False, dl, sl, x, r, dr, sr)``           ``pto.ub.scatter_vaxpy(dl, sl, x, r, ...)``
``scatter_vcmp_lt(m, s0l, s1l)`` -> CMPMASK (also gt ge     ``pto.ub.scatter_vcmp_lt(s0l, s1l, mask=m)``
eq ne le)
``scatter_vsel(m, 0, dl, cmpmask, s0l, s1l, 1, dr, s0r,``   ``pto.ub.scatter_vsel(dl, s0l, s1l, 1, mask=m,``
``s1r)``                                                    ``    rep_stride=(dr, s0r, s1r))``
``scatter_vsel(m, 2, dl, sel, s0l, s1l, r, dr, s0r, s1r)``  ``pto.ub.scatter_vsel_bits(dl, sel, s0l, s1l, r, ...)``
==========================================================  ===========================================

Refused with a reason (`UNMODELLED_SCATTER`): ``scatter_vconv``, ``scatter_vmulconv``,
mixed-type ``scatter_vmla``/``scatter_vaxpy`` and ``store_high_half=True`` (the narrow operand
occupies half blocks chosen by a high-half flag: a layout the public sources do not pin down),
``scatter_vsel`` mode 1 (`SCATTER_VSEL_MODE1`: the layout of its selection bits over a ``sel`` list
is not public), ``scatter_vnchwconv`` (TIK has no such API of its own: ``vnchwconv`` is the scatter
transpose).
"""
from __future__ import annotations

from pto_core.errors import UnsupportedOp

from .api import tik_api
from .autosync import Access
from .vector_cmpsel import BIT_DTYPES, CMP, CmpMask, ceil_elems
from .vector_common import SHORT, U16, VectorBase, iadd, ieq, imul, isel, isub

MAX_LIST = 8
#: ``scatter_vmaxs`` / ``scatter_vmins`` have v200 ini rows but no public TIK front end: they take
#: ``scatter_vadds``'s arguments (named choice, migration_guide/tik_vector.md §5d).
SCATTER_VMAXS_SIGNATURE = "scatter_vadds"
READS_DST = ("vmla", "vmadd", "vmaddrelu", "vaxpy")

UNMODELLED_SCATTER = {
    "scatter_vconv": ("its narrow operand takes half of each 32-byte block (ldst_high_half picks the half), a "
                      "VA layout the public TIK sources name but do not define", "convert with vconv / vec_conv"),
    "scatter_vmulconv": ("its 8-bit destination takes half of each 32-byte block (store_high_half picks the "
                         "half), a VA layout the public TIK sources name but do not define",
                         "use vmulconv, or scatter_vmul followed by vconv"),
    "scatter_vnchwconv": ("TIK exposes the VA transpose as vnchwconv / vec_trans_scatter (a 16-address list "
                          "with high-half flags), not under this name", "call vnchwconv or vec_trans_scatter"),
}


#: ``scatter_vsel`` mode 1 (scalar ``src1``): TIK puts the ``sel`` *list* in the third VA register and the
#: scalar in CMPMASK, so the chip reads the selection bits through block addresses; TIK's own overflow
#: check reads them as one contiguous run from ``sel[0]`` and ignores ``src1_sel_rep_stride``. Which
#: bits of which ``sel`` block select which lane is not public, so mode 1 stays refused.
SCATTER_VSEL_MODE1 = ("its selection bits come through a list of block addresses (the third VA register) and "
                      "no public source says which bits of which sel block select which lane (TIK's own checks "
                      "read them contiguously from sel[0], its instruction encoding per block)",
                      "use mode 2 with src1 a list of blocks filled with the scalar (vector_dup), or vsel / "
                      "vec_sel mode 1 on contiguous data")


class ScatterAPI(VectorBase):
    """``scatter_v*``: lane-wise vector instructions over lists of block addresses (mixin)."""

    def _va_lists(self, lists: list):
        """Check ``(value, name)`` lists: 1..8 UB tensors each, equal lengths, one dtype per list."""
        n = None
        ops = []
        for value, nm in lists:
            if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_LIST:
                got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
                raise self._error(f"{nm} should be a list of 1..{MAX_LIST} tensors, got {got}", operand=nm,
                                  value=got, limit=f"1..{MAX_LIST}",
                                  hint="pass one UB tensor view per 32-byte block of a repeat")
            if n is None:
                n = len(value)
            elif len(value) != n:
                raise self._error(f"{nm} should contain as many tensors as {lists[0][1]} ({n}), got {len(value)}",
                                  operand=nm, value=len(value), limit=n, hint="give every list the same length")
            lst = [self._vec_operand(t, f"{nm}[{j}]") for j, t in enumerate(value)]
            for o in lst[1:]:
                if o.dt is not lst[0].dt:
                    raise self._error(f"{o.name} dtype {o.tensor.dtype} should be equal to {nm}[0]'s dtype "
                                      f"{lst[0].tensor.dtype}", operand=o.name, value=o.tensor.dtype,
                                      limit=lst[0].tensor.dtype, hint="every tensor of a list has one dtype")
            ops.append(lst)
        return ops, n

    def _va_blocks(self, m, n: int, e: int, dtype: str) -> int:
        """Blocks a normal-mode mask reaches (an immediate mask past the lists is refused)."""
        if isinstance(m.length, int):
            blocks = -(-m.length // e)
            if blocks > n:
                raise self._error(f"the mask reaches lane {m.length - 1}, in block {blocks - 1}, but the lists give "
                                  f"{n} block address(es) ({e} {dtype} elements each)", operand="mask",
                                  value=m.length, limit=f"<= {n * e} lanes",
                                  hint="list one tensor per 32-byte block the mask reaches, or narrow the mask")
            return blocks
        return n                 # a run-time mask: the op checks it against the lists when it runs

    def _va(self, instr: str, mask, lists: list, repeat_times, reps: list, *, scalar=None, has_scalar=False,
            mask_mode: str = "normal", sel=None, require: str = None) -> None:
        """Resolve, check and emit one VA instruction. ``lists``: ``(value, name)`` per memory operand (dst
        first); ``reps``: the repeat strides in the same order; ``sel``: the selection-bit tensor of
        ``scatter_vsel`` mode 2 (an operand after the dst list); ``require``: the ini row to check."""
        api = self._where.call if self._where else "tik.scatter_" + instr
        ops, n = self._va_lists(lists)
        heads = [lst[0] for lst in ops]
        if instr in ("vmla", "vaxpy") and any(h.dt is not heads[0].dt for h in heads[1:]):
            code = SHORT[heads[0].tensor.dtype] + SHORT[heads[1].tensor.dtype] * 2
            self._require_instr("scatter_" + instr, code, api,
                                f"dst {heads[0].tensor.dtype} with src {heads[1].tensor.dtype}")
            raise self._error(f"{api} with a {heads[0].tensor.dtype} destination and {heads[1].tensor.dtype} "
                              f"sources is not modelled: the narrow operand's VA block layout (half blocks) is "
                              f"not defined by the public TIK sources", cls=UnsupportedOp,
                              hint="use the same dtype for every list, or vmla / vaxpy on contiguous data")
        self._same_dtype(*heads)
        dtype = heads[0].tensor.dtype
        code = dtype if instr not in ("vmla", "vaxpy") else SHORT[dtype] * 3
        self._require_instr(require or "scatter_" + instr, code, api, dtype)
        m = self._vec_mask(mask, [heads[0].dt], mask_mode=mask_mode)
        repeat = self._vec_repeat(repeat_times, imm_lo=0 if m.counter else 1)
        if instr == "vsel" and isinstance(repeat, int) and repeat != 1:
            raise self._error(f"repeat_times should be 1 when mode is 0, got {repeat}", operand="repeat_times",
                              value=repeat, limit="1",
                              hint="select one repeat per call with CMPMASK, or pass a sel tensor (mode 2)")
        geo = [self._vec_stride(r, f"{nm.replace('_list', '')}_rep_stride", U16) for r, (_, nm) in zip(reps, lists)]
        e = 32 // heads[0].dt.itemsize
        if m.counter:
            if n != MAX_LIST:
                raise self._error(f"in counter mode the lists should contain {MAX_LIST} tensors, got {n}",
                                  operand=lists[0][1], value=n, limit=MAX_LIST,
                                  hint="give all 8 block addresses (every repeat but the last uses all lanes)")
            count = m.clause["counter"]
            repeat = -(-count // m.par) if isinstance(count, int) else None
            blocks = MAX_LIST
        else:
            blocks = self._va_blocks(m, n, e, dtype)
        sval = self._vec_scalar(scalar, dtype, "scalar") if has_scalar else None
        footprint = []
        for lst, rep, (_, nm) in zip(ops, geo, lists):
            write = lst is ops[0]
            for o in lst[:blocks]:
                if repeat is None:
                    acc = self._vec_access(o, None, write)
                else:
                    ext = isel(ieq(repeat, 0), 0, imul(iadd(imul(isub(repeat, 1), rep), 1), e))
                    acc = self._vec_access(o, ext, write)
                footprint.append(acc)
                if write and instr in READS_DST:
                    footprint.append(Access(acc.region, acc.lo, acc.hi, False))
        clauses = dict(m.clause)
        clauses["rep_stride"] = tuple(geo)
        if sel is not None:
            footprint.append(self._vec_access(sel, ceil_elems(repeat, m.par // 8, max(1, sel.dt.bits // 8)),
                                              False))
        operands = [tuple(o.ptr for o in lst) for lst in ops] + ([sval] if has_scalar else []) + \
            [repeat if not m.counter else 1]
        if sel is not None:
            operands.insert(1, sel.ptr)
        self._vec_emit("scatter_" + instr, *operands, footprint=footprint, **clauses)

    # ------------------------------------------------------------------ one source
    def _va_single(self, instr, mask, dst_list, src_list, repeat_times, dst_rep_stride, src_rep_stride):
        self._va(instr, mask, [(dst_list, "dst_list"), (src_list, "src_list")], repeat_times,
                 [dst_rep_stride, src_rep_stride])

    # ------------------------------------------------------------------ two sources
    def _va_binary(self, instr, mask, dst_list, src0_list, src1_list, repeat_times, dst_rep_stride, src0_rep_stride,
                   src1_rep_stride):
        self._va(instr, mask, [(dst_list, "dst_list"), (src0_list, "src0_list"), (src1_list, "src1_list")],
                 repeat_times, [dst_rep_stride, src0_rep_stride, src1_rep_stride])

    # ------------------------------------------------------------------ a scalar
    def _va_scalar(self, instr, mask, dst_list, src0_list, src1, repeat_times, dst_rep_stride, src_rep_stride,
                   mask_mode="normal"):
        self._va(instr, mask, [(dst_list, "dst_list"), (src0_list, "src0_list")], repeat_times,
                 [dst_rep_stride, src_rep_stride], scalar=src1, has_scalar=True, mask_mode=mask_mode)

    # ------------------------------------------------------------------ compare into CMPMASK
    def _va_vcmp(self, cmp: str, mask, src0_list, src1_list):
        api = self._where.call if self._where else f"tik.scatter_vcmp_{cmp}"
        ops, n = self._va_lists([(src0_list, "src0_list"), (src1_list, "src1_list")])
        heads = [lst[0] for lst in ops]
        self._same_dtype(*heads)
        dtype = heads[0].tensor.dtype
        self._require_instr("scatter_vcmp", dtype, api, dtype)
        m = self._vec_mask(mask, [heads[0].dt])
        e = 32 // heads[0].dt.itemsize
        blocks = self._va_blocks(m, n, e, dtype)
        footprint = [self._vec_access(o, e, False) for lst in ops for o in lst[:blocks]]
        self._vec_emit(f"scatter_vcmp_{cmp}", *[tuple(o.ptr for o in lst) for lst in ops], footprint=footprint,
                       **m.clause)
        return CmpMask(self)

    # ------------------------------------------------------------------ select
    @tik_api("scatter_vsel")
    def scatter_vsel(self, mask, mode, dst_list, sel, src0_list, src1, repeat_times, dst_rep_stride=0,
                     src0_rep_stride=0, src1_sel_rep_stride=0):
        """``dst = src0 where sel bit else src1`` over address lists. Mode 0: ``sel`` is the CMPMASK (one
        repeat); mode 2: ``sel`` a UB tensor of bits consumed per repeat; mode 1 is refused (`SCATTER_VSEL_MODE1`)."""
        m_ = self._select_mode(mode, "scatter_vsel",
                               "compare into CMPMASK (scatter_vcmp_*) and select one repeat at a time")
        if m_ == 1:
            why, hint = SCATTER_VSEL_MODE1
            if self._may_not_run():
                self._emit("unmodelled", what="tik.scatter_vsel (mode 1)", why=why, hint=hint)
                return
            raise self._error(f"scatter_vsel mode 1 is not modelled: {why}", operand="mode", value=1,
                              cls=UnsupportedOp, hint=hint)
        if not isinstance(src1, (list, tuple)):
            raise self._error(f"src1 should be a list of tensors in mode {m_}, got {type(src1).__name__}",
                              operand="src1", value=type(src1).__name__,
                              hint="pass src1 as a list of UB tensor views, one per block (like src0_list)")
        lists = [(dst_list, "dst_list"), (src0_list, "src0_list"), (src1, "src1")]
        reps = [dst_rep_stride, src0_rep_stride, src1_sel_rep_stride]
        if m_ == 0:
            if not isinstance(sel, CmpMask):
                raise self._error("in mode 0 sel should be the CMPMASK returned by scatter_vcmp_*, vcmp_* or "
                                  "mov_tensor_to_cmpmask", operand="sel", value=repr(sel),
                                  hint="pass the CMPMASK handle, or a UB tensor of selection bits with mode=2")
            self._va("vsel", mask, lists, repeat_times, reps)
            return
        s = self._vec_operand(sel, "sel", dtypes=BIT_DTYPES)
        self._va("vsel_bits", mask, lists, repeat_times, reps, sel=s, require="scatter_vsel")

    @tik_api("scatter_vaxpy")
    def scatter_vaxpy(self, mask, store_high_half, dst_list, src0_list, src1, repeat_times, dst_rep_stride,
                      src_rep_stride):
        """``dst = src1 * src0 + dst`` (fused) over address lists; ``store_high_half`` must be False."""
        store_high_half = self._bool_arg(store_high_half, "store_high_half", hint="pass False")
        if store_high_half:
            raise self._error("scatter_vaxpy with store_high_half=True is not modelled: it selects a half-block "
                              "layout for mixed-precision lists that the public TIK sources do not define",
                              operand="store_high_half", value=True, cls=UnsupportedOp,
                              hint="pass store_high_half=False with lists of one dtype")
        self._va_scalar("vaxpy", mask, dst_list, src0_list, src1, repeat_times, dst_rep_stride, src_rep_stride)


def _single(instr):
    def method(self, mask, dst_list, src_list, repeat_times, dst_rep_stride, src_rep_stride):
        self._va_single(instr, mask, dst_list, src_list, repeat_times, dst_rep_stride, src_rep_stride)
    return method


def _binary(instr):
    def method(self, mask, dst_list, src0_list, src1_list, repeat_times, dst_rep_stride, src0_rep_stride,
               src1_rep_stride):
        self._va_binary(instr, mask, dst_list, src0_list, src1_list, repeat_times, dst_rep_stride, src0_rep_stride,
                        src1_rep_stride)
    return method


def _scalar(instr):
    def method(self, mask, dst_list, src0_list, src1, repeat_times, dst_rep_stride, src_rep_stride,
               mask_mode="normal"):
        self._va_scalar(instr, mask, dst_list, src0_list, src1, repeat_times, dst_rep_stride, src_rep_stride,
                        mask_mode)
    return method


def _refused(name: str, why: str, hint: str):
    def method(self, *args, **kwargs):
        if self._may_not_run():
            self._emit("unmodelled", what=f"tik.{name}", why=why, hint=hint)
            return None
        raise self._error(f"{name} is not modelled: {why}", cls=UnsupportedOp, hint=hint)
    return method


_FORMS = {
    **{n: _single for n in ("vector_mov", "vabs", "vexp", "vln", "vrec", "vrsqrt", "vsqrt", "vrelu")},
    **{n: _binary for n in ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vmadd", "vmaddrelu", "vmla")},
    **{n: _scalar for n in ("vadds", "vmuls")},
    **{n: _scalar for n in ("vmaxs", "vmins")},          # SCATTER_VMAXS_SIGNATURE
}

for _instr, _make in _FORMS.items():
    _m = _make(_instr)
    _m.__name__ = "scatter_" + _instr
    _m.__doc__ = f"``{_instr}`` over lists of up to 8 block addresses (VA registers)."
    setattr(ScatterAPI, _m.__name__, tik_api(_m.__name__)(_m))
for _c in CMP:
    def _vcmp(self, mask, src0_list, src1_list, _c=_c):
        return self._va_vcmp(_c, mask, src0_list, src1_list)
    _vcmp.__name__ = "scatter_vcmp_" + _c
    _vcmp.__doc__ = f"One repeat of src0 {_c} src1 over address lists into CMPMASK; returns the CMPMASK handle."
    setattr(ScatterAPI, _vcmp.__name__, tik_api(_vcmp.__name__)(_vcmp))
for _name, (_why, _hint) in UNMODELLED_SCATTER.items():
    _m = _refused(_name, _why, _hint)
    _m.__name__ = _name
    _m.__doc__ = f"Not lowered (UnsupportedOp): {_why}."
    setattr(ScatterAPI, _name, tik_api(_name)(_m))
del _instr, _make, _m, _name, _why, _hint, _c, _vcmp

__all__ = ["ScatterAPI", "UNMODELLED_SCATTER"]
