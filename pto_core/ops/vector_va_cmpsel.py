"""VA-register ("scatter") compares and selects: ``pto.ub.scatter_vcmp_<cmp>``, ``pto.ub.scatter_vsel``,
``pto.ub.scatter_vsel_bits``.

The element semantics are those of `vector_cmpsel` (``vcmp_<cmp>``, ``vsel``, ``vsel_bits``): the
same comparisons (IEEE, NaN compares false except ``ne``), the same CMPMASK update
(`vector_cmpsel.write_cmpmask`, named choice ``VCMP_KEEPS_MASKED_BITS``) and the same selection
bits. Only the addressing of the data operands differs: lane ``e`` of repeat ``r`` lives in block
``j = e // E`` at ``list[j] + r * rep_stride * 32 + (e % E) * itemsize`` (`vector_va`).

================================================  =================================================
TIK                                               PTO
================================================  =================================================
``scatter_vcmp_lt(m, s0l, s1l)`` -> CMPMASK        ``pto.ub.scatter_vcmp_lt(s0l, s1l, mask=m)``
``scatter_vsel(m, 0, dl, cmpmask, s0l, s1l, 1,``   ``pto.ub.scatter_vsel(dl, s0l, s1l, 1, mask=m,``
``    dr, s0r, s1r)``                              ``    rep_stride=(dr, s0r, s1r))``
``scatter_vsel(m, 2, dl, sel, s0l, s1l, r, ...)``  ``pto.ub.scatter_vsel_bits(dl, sel, s0l, s1l, r, ...)``
================================================  =================================================

* ``scatter_vcmp_<cmp>``: one repeat, no repeat stride (TIK sets repeat 1 and extent one block).
* ``scatter_vsel`` (TIK mode 0): the first ``PAR`` bits of CMPMASK, ``repeat`` must be 1 (TIK and its
  debugger require it).
* ``scatter_vsel_bits`` (TIK mode 2): ``sel`` is one contiguous UB tensor (TIK writes its address
  to CMPMASK); repeat ``r`` uses bits ``r*PAR .. r*PAR+PAR-1``, as ``vsel_bits``. ``sel`` must not
  overlap a written ``dst`` block (TIK refuses that too: "dst_list and sel not support address
  overlapping"). Not on v100 (TIK: "v100 doesn't support mode 2").
* TIK mode 1 (scalar ``src1``, ``sel`` a list of block addresses in the third VA register) has no
  op: how the selection bits are laid out across the ``sel`` blocks is not public (see
  ``tbe_compat/tik/vector_scatter.py``).
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import dtype
from ..errors import IllegalOperand, UnsupportedOp
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_cmpsel import CMP, cmpmask, unpack_bits, write_cmpmask
from .vector_elementwise import _hashable
from .vector_va import REP_MAX, check_lists, check_reach

EXPANDERS: dict = {}
_PLANS = ve.PlanCache()
_UB = ("ub",)
_U8 = dtype("u8")


def _same(lists, names, op):
    d0 = lists[0][0].dtype
    for nm, lst in zip(names[1:], lists[1:]):
        if lst[0].dtype is not d0:
            raise IllegalOperand(f"{nm}_list dtype {lst[0].dtype.name} differs from {names[0]}_list dtype {d0.name}",
                                 op=op, operand=nm + "_list", value=lst[0].dtype.name, limit=d0.name,
                                 hint="use lists of one element type (convert with pto.ub.vconv first)")
    return d0


def _list_operands(names):
    return tuple(Operand(nm + "_list", "ptrs", _UB, doc=f"{nm}: up to 8 block addresses (one per 32 B block)")
                 for nm in names)


# ----------------------------------------------------------------------------- scatter_vcmp_<cmp>


def _vcmp_op(cmp: str):
    instr = f"scatter_vcmp_{cmp}"
    op = "pto.ub." + instr
    fn = CMP[cmp]
    names = ("src0", "src1")

    def check(target, lists):
        lists = check_lists(names, lists, op)
        d = _same(lists, names, op)
        vector_isa.require(target, "scatter_vcmp", d.name, op=op)
        return lists, d

    def verify(call, target):
        lists = call.operands[:2]
        if all(isinstance(lst, (tuple, list)) and lst and all(isinstance(p, Ptr) for p in lst) for lst in lists):
            check(target, lists)

    def execute(ctx, src0_list, src1_list, *, mask=None):
        lists, d = check(ctx.target, (src0_list, src1_list))
        lens = tuple(len(lst) for lst in lists)

        def build():
            par = ve.par_of(d)
            lanes = ve.lanes_from_clauses({"mask": mask}, par=par, repeat=1, counter_ok=False, op=op)
            streams = tuple(ve.va_stream(nm, d, "r", par=par, lanes=lanes, rep=0) for nm in names)
            check_reach(streams, lens, 1, op)
            return ve.Plan(lanes, streams)

        plan = _PLANS.get(_hashable((instr, d.name, mask, lens, ctx.target.name)), build)

        def compute(ins, r0, r1):
            write_cmpmask(ctx, fn(ins["src0"], ins["src1"])[0], plan.lanes.rows(0, 1))
            return {}

        ve.run_va(ctx, plan, lists, compute)

    def expand(call) -> list:
        return [f"// {call.spec.asm_name}: one repeat; block j of each operand at its list[j] (VA registers)",
                "// per block j: pto.vlds %src0_list_j, %src1_list_j",
                f"%cmpmask = pto.vcmp %v0, %v1, %mask {{cmp = \"{cmp}\"}}    // inactive lanes keep their bits"]

    register(OpSpec(name="ub." + instr, family="vector", pipe="V", operands=_list_operands(names),
                    clauses=(ve.mask_clauses()[0],), execute=execute, verify=verify,
                    doc=f"CMPMASK bit per lane: src0 {cmp} src1 (one repeat, VA-register addressing)"))
    EXPANDERS["ub." + instr] = expand


for _c in CMP:
    _vcmp_op(_c)
del _c


# ----------------------------------------------------------------------------- scatter_vsel (modes 0 and 2)


def _sel_op(name: str, mode: int):
    op = "pto.ub." + name
    data = ("dst", "src0", "src1")
    roles = ("w", "r", "r")
    nmem = 4 if mode == 2 else 3          # mode 2: dst_list, sel, src0_list, src1_list

    def split(operands):
        if mode == 2:
            return (operands[0], operands[2], operands[3]), operands[1]
        return tuple(operands[:3]), None

    def check(target, operands):
        lists, sel = split(operands)
        lists = check_lists(data, lists, op)
        d = _same(lists, data, op)
        vector_isa.require(target, "scatter_vsel", d.name, op=op)
        if mode == 2:
            ve.check_ub(sel, op=op, operand="sel")
            if vector_isa.family_of(target).startswith("v100"):
                raise UnsupportedOp(f"{target.label} supports only scatter_vsel mode 0 (selection bits from "
                                    f"CMPMASK)", op=op,
                                    hint="compare into CMPMASK (scatter_vcmp_*) and select one repeat at a time")
        return lists, sel, d

    def verify(call, target):
        lists, sel = split(call.operands[:nmem])
        if all(isinstance(lst, (tuple, list)) and lst and all(isinstance(p, Ptr) for p in lst) for lst in lists) \
                and (sel is None or isinstance(sel, Ptr)):
            check(target, call.operands[:nmem])

    def execute(ctx, *operands, mask=None, rep_stride=None):
        lists, sel, d = check(ctx.target, operands[:nmem])
        repeat = operands[nmem]
        lens = tuple(len(lst) for lst in lists)

        def build():
            rep = ve.check_repeat(repeat, op=op)
            if mode == 0 and rep != 1:
                raise IllegalOperand(f"repeat is {rep}: with the CMPMASK selection bits (TIK mode 0) it must be 1",
                                     op=op, operand="repeat", value=rep, limit="1",
                                     hint="select one repeat per call, or pass the bits as a sel tensor (mode 2)")
            par = ve.par_of(d)
            lanes = ve.lanes_from_clauses({"mask": mask}, par=par, repeat=rep, counter_ok=False, op=op)
            reps = [0 if rep_stride is None else
                    ve.check_range(rep_stride[0][i], 0, REP_MAX, op=op, operand=f"rep_stride({nm})")
                    for i, nm in enumerate(data)]
            streams = tuple(ve.va_stream(nm, d, role, par=par, lanes=lanes, rep=r)
                            for nm, role, r in zip(data, roles, reps))
            check_reach(streams, lens, rep, op)
            return ve.Plan(lanes, streams)

        plan = _PLANS.get(_hashable((name, d.name, type(repeat), repeat, mask, rep_stride, lens, ctx.target.name)),
                          build)
        lanes = plan.lanes
        if lanes.repeat == 0:
            return
        count = lanes.count
        if mode == 0:
            bits = unpack_bits(cmpmask(ctx, op), lanes.par)[None, :count]
        else:
            nbytes = lanes.par // 8
            _check_sel_overlap(sel, lists[0], plan.streams[0], lanes.repeat, nbytes, op)
            raw = ctx.strided_view(sel, (lanes.repeat, nbytes), (nbytes, 1), dtype=_U8, operand="sel")
            allbits = unpack_bits(np.ascontiguousarray(raw), lanes.par)[:, :count]

        def compute(ins, r0, r1):
            b = bits if mode == 0 else allbits[r0:r1]
            return {"dst": np.where(b, ins["src0"], ins["src1"])}

        ve.run_va(ctx, plan, lists, compute)

    def expand(call) -> list:
        rep = call.operands[nmem]
        src = ("%p = pto.plds %sel[%r * PAR / 8]    // bits consumed per repeat" if mode == 2
               else "%p = %cmpmask    // the first PAR bits")
        return [f"// {call.spec.asm_name} (TIK scatter_vsel mode {mode}): {rep} repeats; block j of each operand "
                "at its list[j] (VA registers)", f"scf.for %r = %c0 to %c{rep} step %c1 {{", "  " + src,
                "  // per block j: pto.vlds src0/src1 blocks; pto.vsel %a, %b, %p on the active lanes; "
                "pto.vsts to dst_list[j]", "}"]

    operands = _list_operands(("dst",))
    if mode == 2:
        operands += (Operand("sel", "ptr", _UB, doc="selection bits, PAR per repeat, LSB first"),)
    operands += _list_operands(("src0", "src1")) + (Operand("repeat", "int", doc="repeats, 0..255 (0 = no-op)"),)
    clauses = (ve.mask_clauses()[0], Clause("rep_stride", "args", params=("%dst", "%src0", "%src1"), min_params=3,
                                            doc="repeat stride per operand in 32 B blocks (default 0)"))
    doc = {0: "dst = src0 where CMPMASK bit else src1 (one repeat, VA-register addressing)",
           2: "dst = src0 where sel bit else src1 (bits consumed per repeat, VA-register addressing)"}[mode]
    register(OpSpec(name="ub." + name, family="vector", pipe="V", operands=operands, clauses=clauses,
                    execute=execute, verify=verify, doc=doc))
    EXPANDERS["ub." + name] = expand


def _check_sel_overlap(sel, dst_list, stream, repeat: int, nbytes: int, op: str) -> None:
    """``sel`` bytes must not share a byte with a ``dst`` block the op writes (TIK refuses it)."""
    lo, hi = sel.addr, sel.addr + repeat * nbytes
    rep_b = stream.strides[0]
    for j, p in enumerate(dst_list[:stream.shape[1]]):
        if (p.space, p.sub) != (sel.space, sel.sub):
            continue
        for r in range(repeat):
            a = p.addr + r * rep_b
            if a < hi and lo < a + ve.BLOCK_BYTES:
                raise IllegalOperand(f"dst_list[{j}] in repeat {r} (bytes {a}..{a + ve.BLOCK_BYTES - 1}) overlaps "
                                     f"the selection bits sel (bytes {lo}..{hi - 1})", op=op, operand="sel",
                                     hint="keep the selection bits apart from the destination blocks "
                                          "(TIK refuses this overlap too)")


_sel_op("scatter_vsel", 0)
_sel_op("scatter_vsel_bits", 2)

__all__ = ["EXPANDERS"]
