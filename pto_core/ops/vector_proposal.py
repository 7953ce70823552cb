"""Proposal sorting: ``pto.ub.vbitsort`` (TIK ``vrpsort16``) and ``pto.ub.vmrgsort4`` (TIK ``vmrgsort4``).

A region proposal is 8 consecutive elements ``(x1, y1, x2, y2, score, label, -, -)``; the
sort key is the score (element 4).

* ``vbitsort(dst, src, repeat)``: each repeat sorts 16 proposals by score, descending.
  Equal scores keep their input order (choice: the hardware network's tie order is not
  documented).
* ``vmrgsort4(dst, src_list, lengths, repeat)``: merges up to four score-descending
  proposal lists (list ``i`` takes part when bit ``i`` of ``valid_bit`` is set, default
  all four) into ``dst``. On equal scores the list with the lower index goes first.
  With ``exhausted`` the merge stops as soon as one valid list runs out; the number of
  proposals taken from each list goes to ``ctx.spr["VMS4_SR"]`` (4 ints) either way.
  ``repeat > 1`` needs four valid lists of equal length and no ``exhausted``; repeat ``r``
  then merges the lists at ``src_list[i] + r*4*length`` proposals into
  ``dst + r*4*length`` proposals (TIK's consecutive-list repeat form).

The NMS instructions (``vrpac``, ``viou``, ``vaadd``, ``rpn_cor``) are in `vector_nms`.
TIK's v2 sort family (``vsort32``, ``vmrgsort``, 8-byte score/index records) is in `vector_sort2`.
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..errors import IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve

EXPANDERS: dict = {}
_UB = ("ub",)
PROPOSAL = 8
SCORE = 4
SORT_GROUP = 16
MAX_LIST = 4095

MRGSORT4_ALIGN = {2: 16, 4: 32}
"""Byte alignment of ``vmrgsort4``'s ``dst`` and source lists per element size: 16 B for f16, 32 B for
f32. Ascend C ``MrgSort4`` (atlasascendc_api_07_0230): the start address "需要保证16字节对齐（针对half
数据类型），32字节对齐（针对float数据类型）"; the v100/v200 CCE intrinsic packs the four list addresses
as ``addr >> 4`` (half) / ``addr >> 5`` (float). Lists of an odd number of f16 proposals may therefore
follow one another in UB (``vbitsort`` keeps the 32 B rule of every vector operand)."""


def _check_pair(target, instr, dst, srcs, op, align: int = ve.BLOCK_BYTES):
    ve.check_ub(dst, op=op, operand="dst", align=align)
    for i, p in enumerate(srcs):
        ve.check_ub(p, op=op, operand=f"src[{i}]" if len(srcs) > 1 else "src", align=align)
        if p.dtype is not dst.dtype:
            raise IllegalOperand(f"dtype {p.dtype.name} differs from dst dtype {dst.dtype.name}", op=op,
                                 operand="src", value=p.dtype.name, limit=dst.dtype.name,
                                 hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, instr, dst.dtype.name, op=op)


def sort_proposals(p: np.ndarray) -> np.ndarray:
    """``(..., n, 8)`` proposals sorted by score descending, stable."""
    order = np.argsort(-p[..., SCORE].astype(np.float64), axis=-1, kind="stable")
    return np.take_along_axis(p, order[..., None], axis=-2)


def _bitsort_execute(ctx, dst, src, repeat):
    op = "pto.ub.vbitsort"
    _check_pair(ctx.target, "vbitsort", dst, (src,), op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    d = src.dtype
    n = rep * SORT_GROUP * PROPOSAL
    vals = np.array(ctx.strided_view(src, (n,), (d.itemsize,), dtype=d, operand="src"))
    out = sort_proposals(vals.reshape(rep, SORT_GROUP, PROPOSAL)).reshape(-1)
    ctx.strided_view(dst, (n,), (d.itemsize,), dtype=d, write=True, operand="dst")[...] = out


register(OpSpec(
    name="ub.vbitsort", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="sorted proposals"), Operand("src", "ptr", _UB, doc="proposals"),
              Operand("repeat", "int", doc="groups of 16 proposals, 0..255")),
    execute=_bitsort_execute,
    verify=lambda call, target: _check_pair(target, "vbitsort", call.operands[0], (call.operands[1],),
                                            call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:2]) else None,
    doc="sort each group of 16 proposals by score, descending (TIK vrpsort16)"))
EXPANDERS["ub.vbitsort"] = lambda call: [
    f"// {call.spec.asm_name}: {call.operands[2]} x (sort 16 proposals by score, descending)",
    "// register form: pto.vbitsort on 16 x 8 elements per repeat"]


def merge_lists(lists: list, exhausted: bool) -> tuple:
    """Merge score-descending proposal lists; returns (merged ``(n, 8)``, taken per list)."""
    keys = []
    for i, lst in enumerate(lists):
        n = lst.shape[0]
        keys.append(np.stack([-lst[:, SCORE].astype(np.float64), np.full(n, i), np.arange(n)], axis=1))
    allk = np.concatenate(keys) if keys else np.zeros((0, 3))
    order = np.lexsort((allk[:, 2], allk[:, 1], allk[:, 0]))
    merged_from = allk[order, 1].astype(int)
    merged_pos = allk[order, 2].astype(int)
    if exhausted and lists:
        lens = [lst.shape[0] for lst in lists]
        taken = np.zeros(len(lists), dtype=int)
        stop = len(order)
        for k, li in enumerate(merged_from):
            taken[li] += 1
            if taken[li] == lens[li]:
                stop = k + 1
                break
        merged_from = merged_from[:stop]
        merged_pos = merged_pos[:stop]
    out = np.array([lists[li][pi] for li, pi in zip(merged_from, merged_pos)]) if len(merged_from) else \
        np.zeros((0, PROPOSAL))
    taken = [int(np.sum(merged_from == i)) for i in range(len(lists))]
    return out, taken


def _mrg_execute(ctx, dst, src_list, lengths, repeat, *, valid_bit=None, exhausted=None):
    op = "pto.ub.vmrgsort4"
    if not isinstance(src_list, (tuple, list)) or not 1 <= len(src_list) <= 4:
        raise IllegalOperand("expects a list of 1..4 UB pointers", op=op, operand="src_list", limit="1..4")
    if not isinstance(lengths, (tuple, list)) or len(lengths) != len(src_list):
        raise IllegalOperand("needs one length per source list", op=op, operand="lengths",
                             limit=len(src_list))
    _check_pair(ctx.target, "vmrgsort4", dst, tuple(src_list), op,
                align=MRGSORT4_ALIGN.get(dst.dtype.itemsize, ve.BLOCK_BYTES))
    lens = [ve.check_range(n, 0, MAX_LIST, op=op, operand=f"lengths[{i}]") for i, n in enumerate(lengths)]
    valid = (1 << len(src_list)) - 1 if valid_bit is None else ve.check_range(valid_bit[0][0], 1, 15, op=op,
                                                                               operand="valid_bit")
    if valid not in (1, 3, 7, 15):
        raise IllegalOperand(f"valid_bit {valid:#06b} must select lists 0..k contiguously", op=op,
                             operand="valid_bit", value=valid, limit="0b0001, 0b0011, 0b0111, 0b1111")
    if valid >> len(src_list):
        raise IllegalOperand("valid_bit selects a list that was not given", op=op, operand="valid_bit", value=valid,
                             hint="set only the valid_bit bits of lists you pass (bit i: list i)")
    rep = ve.check_repeat(repeat, op=op)
    if rep > 1 and (valid != 15 or exhausted or len(set(lens)) != 1):
        raise IllegalOperand("repeat > 1 needs four valid lists of equal length and no exhausted mode", op=op,
                             operand="repeat", value=rep, hint="issue one vmrgsort4 per merge instead")
    if rep > 1:              # one merge after another: all or nothing (ALL_OR_NOTHING_WRITES)
        ctx.all_or_nothing(_mrg_repeats, ctx, dst, src_list, lens, rep, valid, exhausted)
    else:
        _mrg_repeats(ctx, dst, src_list, lens, rep, valid, exhausted)


def _mrg_repeats(ctx, dst, src_list, lens: list, rep: int, valid: int, exhausted) -> None:
    d = dst.dtype
    s = d.itemsize
    nlists = bin(valid).count("1")
    total_out = 0
    for r in range(rep):
        lists = []
        for i in range(nlists):
            off = r * 4 * lens[0] * PROPOSAL * s if rep > 1 else 0
            n = lens[i] * PROPOSAL
            vals = np.array(ctx.strided_view(src_list[i], (n,), (s,), offset=off, dtype=d, operand=f"src_list[{i}]")) \
                if n else np.zeros(0, dtype=d.storage)
            lists.append(vals.reshape(lens[i], PROPOSAL))
        merged, taken = merge_lists(lists, bool(exhausted))
        if merged.size:
            ctx.strided_view(dst, (merged.size,), (s,), offset=total_out * s, dtype=d, write=True,
                             operand="dst")[...] = merged.reshape(-1).astype(d.storage)
        total_out += merged.size
        ctx.spr["VMS4_SR"] = tuple(taken + [0] * (4 - len(taken)))


register(OpSpec(
    name="ub.vmrgsort4", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="merged proposals"),
              Operand("src_list", "ptrs", _UB, doc="1..4 score-descending proposal lists"),
              Operand("lengths", "ints", doc="proposals per list, 0..4095"),
              Operand("repeat", "int", doc="repeats (> 1 only for 4 equal consecutive lists)")),
    clauses=(Clause("valid_bit", "args", params=("%bits",), doc="lists taking part: 0b0011, 0b0111 or 0b1111"),
             Clause("exhausted", "flag", doc="stop when the first valid list runs out")),
    execute=_mrg_execute, doc="merge up to four sorted proposal lists by score (TIK vmrgsort4)"))
EXPANDERS["ub.vmrgsort4"] = lambda call: [
    f"// {call.spec.asm_name}: merge up to 4 score-descending proposal lists; counts -> VMS4_SR",
    "// register form: pto.vmrgsort"]
