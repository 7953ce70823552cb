"""TIK compares and selects (tik_api.md §9.8, §9.9): ``vcmpv_*``, ``vec_cmpv_*``, ``vcmpvs_*``,
``vcmp_*`` (into CMPMASK), ``vsel``/``vec_sel`` in modes 0/1/2 and the CMPMASK moves.

=====================================================  ==============================================
TIK                                                    PTO
=====================================================  ==============================================
``vcmpv_lt(d, a, b, r, ab, bb, ar, br)``               ``pto.ub.vcmpv_lt(d, a, b, r, blk_stride=(ab, bb),``
                                                       ``rep_stride=(ar, br))``
``vec_cmpv_lt(d, a, b, r, ar, br)``                    ``pto.ub.vcmpv_lt(d, a, b, r, rep_stride=(ar, br))``
``vcmpvs_lt(d, a, x, r, ab, ar)``                      ``pto.ub.vcmpvs_lt(d, a, x, r, blk_stride=.., rep_stride=..)``
``vcmp_lt(m, a, b, as, bs)`` -> CMPMASK                ``pto.ub.vcmp_lt(a, b, mask=m, blk_stride=(as, bs))``
``vsel(m, 0, d, cmpmask, a, b, r, ...)``               ``pto.ub.vsel(d, a, b, r, mask=m, ...)``
``vec_sel(m, 0, d, sel, a, b, r, ...)``                ``pto.ub.mov_tensor_to_cmpmask(sel)`` + ``pto.ub.vsel``
``vsel``/``vec_sel`` mode 1 (``src1`` a scalar)        ``pto.ub.vsel_scalar(d, sel, a, x, r, ...)``
``vsel``/``vec_sel`` mode 2                            ``pto.ub.vsel_bits(d, sel, a, b, r, ...)``
``mov_tensor_to_cmpmask(src)`` / ``mov_cmpmask_to``    ``pto.ub.mov_tensor_to_cmpmask`` /
``_tensor(dst, cmpmask)``                              ``pto.ub.mov_cmpmask_to_tensor``
=====================================================  ==============================================

Result bits: lane ``i`` of repeat ``r`` is bit ``r*PAR + i`` of ``dst``, LSB first; a repeat
writes ``PAR/8`` bytes (golden §10.5). ``vcmp_*`` leaves 0 in masked-off lanes of CMPMASK.
``set_scalar_to_cmpmask`` raises `UnsupportedOp` (the mapping of a Scalar onto CMPMASK is unpublished).
"""
from __future__ import annotations

from pto_core.errors import UnsupportedOp
from pto_core.ops import vector_cmpsel as core_cmpsel

from .api import tik_api
from .tensor import Tensor
from .vector_common import U8, U16, Geo, VectorBase, ceil_div, ieq, imul, isel, par_of

CMP = ("lt", "gt", "ge", "eq", "ne", "le")
BIT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
#: Named choice VCMPV_DST_BLOCK_TAIL: the bits a vcmpv_* / vcmpvs_* writes may run past its destination tensor
#: into the rest of that tensor's last 32-byte block, which the tensor's 32-byte aligned allocation owns (no
#: other tensor lives there). TIK's own vcmpv element-wise check tests only the two sources, not dst (TIK
#: ``_vcmpv_elewise_func``), and CANN's dynamic roi_pooling_with_arg_max compares 64 f32 lanes (8 bytes of
#: bits) into a 1-element uint16 tensor on Ascend910B1. Past the block it is still "tensor overflow".
#: tik_vector.md.
VCMPV_DST_BLOCK_TAIL = True
CMPMASK_BYTES = 16


class CmpMask:
    """TIK's CMPMASK handle (returned by ``vcmp_*`` and ``mov_tensor_to_cmpmask``; the register
    itself is per simulated core, ``ctx.spr["CMPMASK"]``)."""

    __slots__ = ("tik",)

    def __init__(self, tik):
        self.tik = tik

    def __repr__(self):
        return "tik.CMPMASK"


class CmpSelAPI(VectorBase):
    """Compares, selects and CMPMASK moves (mixin)."""

    # ------------------------------------------------------------------ vcmpv / vcmpvs
    def _cmpv(self, cmp, dst, srcs, scalar, repeat_times, blk, rep, blk_max):
        instr = f"vcmpvs_{cmp}" if scalar is not None else f"vcmpv_{cmp}"
        d = self._vec_operand(dst, "dst", dtypes=BIT_DTYPES)
        ss = [self._vec_operand(t, nm) for t, nm in srcs]
        self._same_dtype(ss[0], *ss[1:])
        self._require_instr(instr, ss[0].tensor.dtype)
        repeat = self._vec_repeat(repeat_times)
        m = self._vec_mask(par_of(ss[0].dt), [ss[0].dt])          # no mask: every lane of a repeat
        geos = [Geo(1 if blk is None else self._vec_stride(b, f"{s.name}_blk_stride", blk_max),
                    self._vec_stride(r, f"{s.name}_rep_stride", U8))
                for s, b, r in zip(ss, blk or [None] * len(ss), rep)]
        par = par_of(ss[0].dt)
        dsize = max(1, d.dt.bits // 8)
        dst_ext = ceil_elems(repeat, par // 8, dsize)
        fp = [self._vec_access(d, dst_ext, True, block_tail=VCMPV_DST_BLOCK_TAIL)]
        for s, g in zip(ss, geos):
            fp.append(self._vec_access(s, self._vec_extent(s, m, repeat, g, 0), False))
        clauses = {}
        if blk is not None:
            clauses["blk_stride"] = tuple(g.blk for g in geos)
        clauses["rep_stride"] = tuple(g.rep for g in geos)
        ops = [d.ptr] + [s.ptr for s in ss]
        if scalar is not None:
            ops.append(self._vec_scalar(scalar, ss[0].tensor.dtype, "scalar"))
        self._vec_emit(instr, *ops, repeat, footprint=fp, **clauses)

    # ------------------------------------------------------------------ vcmp -> CMPMASK
    def _vcmp(self, cmp, mask, src0, src1, src0_stride, src1_stride):
        a = self._vec_operand(src0, "src0")
        b = self._vec_operand(src1, "src1")
        self._same_dtype(a, b)
        self._require_instr("vcmp", a.tensor.dtype, what=f"{a.tensor.dtype}")
        m = self._vec_mask(mask, [a.dt])
        ga = Geo(self._vec_stride(src0_stride, "src0_stride", U16), 0)
        gb = Geo(self._vec_stride(src1_stride, "src1_stride", U16), 0)
        fp = [self._vec_access(a, self._vec_extent(a, m, 1, ga, 0), False),
              self._vec_access(b, self._vec_extent(b, m, 1, gb, 0), False)]
        self._vec_emit(f"vcmp_{cmp}", a.ptr, b.ptr, footprint=fp, **m.clause, blk_stride=(ga.blk, gb.blk))
        return CmpMask(self)

    # ------------------------------------------------------------------ select
    def _sel(self, mask, mode, dst, sel, src0, src1, repeat_times, blk, rep, *, vec_form):
        m_ = self._select_mode(mode, "vsel/vec_sel", "compare into CMPMASK and select one repeat at a time")
        d = self._vec_operand(dst, "dst")
        a = self._vec_operand(src0, "src0")
        ops = [d, a]
        b = None
        if m_ == 1:
            if isinstance(src1, Tensor):
                raise self._error("mode 1 takes a scalar src1 (int, float, Scalar)", operand="src1",
                                  value=repr(src1),
                                  hint="pass src1 as a number or Scalar in mode 1 (modes 0 and 2 take a tensor)")
        else:
            b = self._vec_operand(src1, "src1")
            ops.append(b)
        self._same_dtype(d, *ops[1:])
        self._require_instr("vsel", d.tensor.dtype)
        m = self._vec_mask(mask, [d.dt])
        repeat = self._vec_repeat(repeat_times)
        geos = [Geo(1 if blk is None else self._vec_stride(blk[i], f"{o.name}_blk_stride", U8),
                    self._vec_stride(rep[i], f"{o.name}_rep_stride", U8)) for i, o in enumerate(ops)]
        fp = []
        for i, o in enumerate(ops):
            fp.append(self._vec_access(o, self._vec_extent(o, m, repeat, geos[i], 0), o is d))
        clauses = dict(m.clause)
        if blk is not None:
            clauses["blk_stride"] = tuple(g.blk for g in geos)
        clauses["rep_stride"] = tuple(g.rep for g in geos)
        par = par_of(d.dt)
        if m_ == 0:
            if isinstance(sel, CmpMask):
                if vec_form:
                    raise self._error("vec_sel takes the selection bits as a UB tensor", operand="sel",
                                      value=repr(sel),
                                      hint="pass sel as a UB tensor of selection bits (the legacy vsel reads a "
                                           "CMPMASK)")
            else:
                # mode 0 consumes the first PAR bits of sel (TIK vec_sel page: 256 for int8, 128 for
                # f16, 64 for f32), so those are loaded: an 8-byte sel serves an f32 select, an 8-bit
                # select loads 32 bytes (CMPMASK_B8_BITS, pto_core/ops/vector_cmpsel.py)
                s = self._vec_operand(sel, "sel", dtypes=BIT_DTYPES)
                ssize = max(1, s.dt.bits // 8)
                bits = {64: 64, 256: 256}.get(par)
                nbytes = CMPMASK_BYTES if bits is None else bits // 8
                self._sync.settle()
                self._vec_emit("mov_tensor_to_cmpmask", s.ptr, bits=bits,
                               footprint=[self._vec_access(s, -(-nbytes // ssize), False)])
            self._vec_emit("vsel", d.ptr, a.ptr, b.ptr, repeat, footprint=fp, **clauses)
            return
        s = self._vec_operand(sel, "sel", dtypes=BIT_DTYPES)
        ssize = max(1, s.dt.bits // 8)
        fp.append(self._vec_access(s, ceil_elems(repeat, par // 8, ssize), False))
        if m_ == 1:
            x = self._vec_scalar(src1, d.tensor.dtype, "src1")
            self._vec_emit("vsel_scalar", d.ptr, s.ptr, a.ptr, x, repeat, footprint=fp, **clauses)
        else:
            self._vec_emit("vsel_bits", d.ptr, s.ptr, a.ptr, b.ptr, repeat, footprint=fp, **clauses)

    @tik_api("vsel")
    def vsel(self, mask, mode, dst, sel, src0, src1, repeat_times, dst_blk_stride, src0_blk_stride,
             src1_blk_stride, dst_rep_stride=0, src0_rep_stride=0, src1_rep_stride=0):
        """``dst = src0 where sel bit else src1`` (mode 0: ``sel`` is the CMPMASK, same bits every repeat;
        1: ``src1`` a scalar; 2: ``src1`` a tensor; modes 1/2 consume ``sel`` bits repeat by repeat)."""
        self._sel(mask, mode, dst, sel, src0, src1, repeat_times, [dst_blk_stride, src0_blk_stride, src1_blk_stride],
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride], vec_form=False)

    @tik_api("vec_sel")
    def vec_sel(self, mask, mode, dst, sel, src0, src1, repeat_times, dst_rep_stride=0, src0_rep_stride=0,
                src1_rep_stride=0):
        """``vsel`` with block stride 1; ``sel`` is a UB tensor in every mode (mode 0 loads it into CMPMASK)."""
        self._sel(mask, mode, dst, sel, src0, src1, repeat_times, None,
                  [dst_rep_stride, src0_rep_stride, src1_rep_stride], vec_form=True)

    # ------------------------------------------------------------------ CMPMASK moves
    @tik_api("mov_tensor_to_cmpmask")
    def mov_tensor_to_cmpmask(self, src):
        """Load 16 bytes (2 x uint64) from UB into CMPMASK; returns the CMPMASK handle. ``src`` needs
        16-byte alignment only (named choice CMPMASK_UB_ALIGN, pto_core/ops/vector_cmpsel.py)."""
        s = self._vec_operand(src, "src", align=core_cmpsel.CMPMASK_UB_ALIGN)
        size = max(1, s.dt.bits // 8)
        self._vec_emit("mov_tensor_to_cmpmask", s.ptr,
                       footprint=[self._vec_access(s, -(-CMPMASK_BYTES // size), False)])
        return CmpMask(self)

    @tik_api("mov_cmpmask_to_tensor")
    def mov_cmpmask_to_tensor(self, dst, src_cmpmask):
        """Store the 16 bytes of CMPMASK to UB."""
        if not isinstance(src_cmpmask, CmpMask):
            raise self._error("src_cmpmask should be the CMPMASK returned by vcmp_* or mov_tensor_to_cmpmask",
                              operand="src_cmpmask", value=repr(src_cmpmask),
                              hint="pass the value vcmp_*(...) or mov_tensor_to_cmpmask(...) returned")
        d = self._vec_operand(dst, "dst", align=core_cmpsel.CMPMASK_UB_ALIGN)
        size = max(1, d.dt.bits // 8)
        self._vec_emit("mov_cmpmask_to_tensor", d.ptr,
                       footprint=[self._vec_access(d, -(-CMPMASK_BYTES // size), True)])

    @tik_api("set_scalar_to_cmpmask")
    def set_scalar_to_cmpmask(self, scalar):
        """Not modelled (UnsupportedOp): how a Scalar's bits land in the 128-bit CMPMASK is not published."""
        raise self._error("set_scalar_to_cmpmask is not modelled: no public source says how the Scalar's bits "
                          "land in the 128-bit CMPMASK register (the low 64 bits, both halves, or a UB address "
                          "as vsel mode 2 uses)", operand="scalar", cls=UnsupportedOp,
                          hint="store the 128 selection bits to a UB tensor (2 x uint64) and load them with "
                               "mov_tensor_to_cmpmask(tensor)")


def ceil_elems(repeat, nbytes: int, size: int):
    """Elements of ``size`` bytes that hold ``repeat * nbytes`` bytes (0 when ``repeat`` is 0)."""
    return isel(ieq(repeat, 0), 0, ceil_div(imul(repeat, nbytes), size))


def _cmpv_method(cmp: str):
    def method(self, dst, src0, src1, repeat_times, src0_blk_stride, src1_blk_stride, src0_rep_stride,
               src1_rep_stride):
        self._cmpv(cmp, dst, [(src0, "src0"), (src1, "src1")], None, repeat_times,
                   [src0_blk_stride, src1_blk_stride], [src0_rep_stride, src1_rep_stride], U8)
    method.__name__ = f"vcmpv_{cmp}"
    method.__doc__ = f"Bit per lane: src0 {cmp} src1 (pto.ub.vcmpv_{cmp}); tik_api.md §9.8."
    return tik_api(method.__name__)(method)


def _vec_cmpv_method(cmp: str):
    def method(self, dst, src0, src1, repeat_times, src0_rep_stride, src1_rep_stride):
        self._cmpv(cmp, dst, [(src0, "src0"), (src1, "src1")], None, repeat_times, None,
                   [src0_rep_stride, src1_rep_stride], U8)
    method.__name__ = f"vec_cmpv_{cmp}"
    method.__doc__ = f"Bit per lane: src0 {cmp} src1, block stride 1 (pto.ub.vcmpv_{cmp}); tik_api.md §9.8."
    return tik_api(method.__name__)(method)


def _cmpvs_method(cmp: str):
    def method(self, dst, src, scalar, repeat_times, src_blk_stride, src_rep_stride):
        if scalar is None or isinstance(scalar, Tensor):
            raise self._error("scalar should be an int, float, Scalar or Expr", operand="scalar", value=repr(scalar),
                              hint="pass a number or a Scalar of the sources' dtype")
        self._cmpv(cmp, dst, [(src, "src")], scalar, repeat_times, [src_blk_stride], [src_rep_stride], U16)
    method.__name__ = f"vcmpvs_{cmp}"
    method.__doc__ = f"Bit per lane: src {cmp} scalar (pto.ub.vcmpvs_{cmp}); tik_api.md §9.8."
    return tik_api(method.__name__)(method)


def _vcmp_method(cmp: str):
    def method(self, mask, src0, src1, src0_stride, src1_stride):
        return self._vcmp(cmp, mask, src0, src1, src0_stride, src1_stride)
    method.__name__ = f"vcmp_{cmp}"
    method.__doc__ = f"One repeat of src0 {cmp} src1 into CMPMASK; returns the CMPMASK handle."
    return tik_api(method.__name__)(method)


for _c in CMP:
    setattr(CmpSelAPI, f"vcmpv_{_c}", _cmpv_method(_c))
    setattr(CmpSelAPI, f"vec_cmpv_{_c}", _vec_cmpv_method(_c))
    setattr(CmpSelAPI, f"vcmpvs_{_c}", _cmpvs_method(_c))
    setattr(CmpSelAPI, f"vcmp_{_c}", _vcmp_method(_c))
del _c

__all__ = ["CmpSelAPI", "CmpMask"]
