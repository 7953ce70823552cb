"""The v2 sort pair of the A2/310B class: ``pto.ub.vsort32`` (TIK ``vsort32``, CCE ``vbitsort``
on 8-byte records, Ascend C ``Sort32``) and ``pto.ub.vmrgsort`` (TIK ``vmrgsort``, CCE
``vmrgsort4`` v2, Ascend C ``MrgSort``).

Record layout (Ascend C ``Sort32``): one sorted element is an 8-byte record: the score in the
low bytes (f32: bytes 0..3; f16: bytes 0..1, bytes 2..3 reserved) and its u32 index in bytes
4..7.

* ``vsort32(dst, scores, indices, repeat)``: repeat ``r`` sorts the 32 scores
  ``scores[32r .. 32r+31]`` (paired with ``indices[32r ..]``, u32) by score, descending, and
  writes 32 records (256 B) at ``dst + 256r``. Equal scores keep their input order (documented:
  "if score[i] == score[j] and i > j, score[j] is selected first"). Named choices: NaN
  scores sort after every number (in input order); the two reserved bytes of an f16 record
  are written as zero.
* ``vmrgsort(dst, src_list, lengths, repeat)``: merges up to four score-descending record
  lists (``lengths[i]`` records each, 0..65535) into ``dst``; on equal scores the list with
  the lower number goes first, then the earlier record. Records move whole (score, reserved
  bytes, index). ``exhausted`` stops the merge as soon as one list runs out (the record that
  empties it is written). The records taken from each list go to ``ctx.spr["VMS4_SR"]``.
  ``repeat > 1`` needs four lists of equal length and no ``exhausted``: repeat ``r`` merges
  the lists at ``src_list[i] + r*4*length`` records into ``dst + r*4*length`` records (the
  consecutive-list form of ``vmrgsort4``).
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import dtype
from ..errors import IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve

EXPANDERS: dict = {}
_UB = ("ub",)
RECORD = 8
SORT32 = 32
MAX_LIST_V2 = 65535
_U8 = dtype("u8")
_U32 = dtype("u32")


def record_scores(records: np.ndarray, d) -> np.ndarray:
    """Scores (float64) of ``(..., 8)`` uint8 records whose score type is ``d``."""
    raw = np.ascontiguousarray(records[..., :d.itemsize])
    return raw.view(d.storage)[..., 0].astype(np.float64)


def descending_order(scores: np.ndarray) -> np.ndarray:
    """Stable descending order along the last axis; NaN after every number."""
    nan = np.isnan(scores)
    return np.lexsort((np.where(nan, 0.0, -scores), nan), axis=-1)


def make_records(scores: np.ndarray, indices: np.ndarray, d) -> np.ndarray:
    """``(..., 8)`` uint8 records: score in the low bytes, zero padding, u32 index in bytes 4..7."""
    out = np.zeros(scores.shape + (RECORD,), dtype=np.uint8)
    out[..., :d.itemsize] = np.ascontiguousarray(scores.astype(d.storage)).view(np.uint8).reshape(
        scores.shape + (d.itemsize,))
    out[..., 4:] = np.ascontiguousarray(indices.astype(np.uint32)).view(np.uint8).reshape(scores.shape + (4,))
    return out


# ----------------------------------------------------------------------------- vsort32


def _sort32_check(target, dst, src, idx, op):
    for nm, p in (("dst", dst), ("src", src), ("indices", idx)):
        ve.check_ub(p, op=op, operand=nm)
    if src.dtype is not dst.dtype:
        raise IllegalOperand(f"src dtype {src.dtype.name} differs from dst dtype {dst.dtype.name}", op=op,
                             operand="src", value=src.dtype.name, limit=dst.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    if idx.dtype is not _U32:
        raise IllegalOperand(f"indices must be u32, got {idx.dtype.name}", op=op, operand="indices",
                             value=idx.dtype.name, limit="u32", hint="declare the index buffer as u32")
    vector_isa.require(target, "vsort32", dst.dtype.name, op=op)


def _sort32_execute(ctx, dst, src, indices, repeat):
    op = "pto.ub.vsort32"
    _sort32_check(ctx.target, dst, src, indices, op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    d = src.dtype
    n = rep * SORT32
    scores = np.array(ctx.strided_view(src, (rep, SORT32), (SORT32 * d.itemsize, d.itemsize), dtype=d,
                                       operand="src"))
    idx = np.array(ctx.strided_view(indices, (rep, SORT32), (SORT32 * 4, 4), dtype=_U32, operand="indices"))
    order = descending_order(scores.astype(np.float64))
    rec = make_records(np.take_along_axis(scores, order, axis=1), np.take_along_axis(idx, order, axis=1), d)
    ctx.strided_view(dst, (n * RECORD,), (1,), dtype=_U8, write=True, operand="dst")[...] = rec.reshape(-1)


register(OpSpec(
    name="ub.vsort32", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="32 sorted 8-byte (score, index) records per repeat"),
              Operand("src", "ptr", _UB, doc="scores, 32 per repeat (f16/f32)"),
              Operand("indices", "ptr", _UB, doc="u32 indices, 32 per repeat"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    execute=_sort32_execute,
    verify=lambda call, target: _sort32_check(target, *call.operands[:3], call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:3]) else None,
    doc="sort 32 (score, index) pairs per repeat by score, descending, into 8-byte records (TIK vsort32)"))
EXPANDERS["ub.vsort32"] = lambda call: [
    f"// {call.spec.asm_name}: {call.operands[3]} x (sort 32 scores with their u32 indices, descending)",
    "// register form: pto.vbitsort on 32 (score, index) pairs per repeat -> 256 B of records"]


# ----------------------------------------------------------------------------- vmrgsort (v2)


def merge_records(lists: list, d, exhausted: bool) -> tuple:
    """Merge score-descending ``(n_i, 8)`` record lists; returns (merged records, taken per list)."""
    if not lists:
        return np.zeros((0, RECORD), np.uint8), []
    recs = np.concatenate(lists)
    scores = record_scores(recs, d)
    which = np.concatenate([np.full(len(x), i) for i, x in enumerate(lists)])
    pos = np.concatenate([np.arange(len(x)) for x in lists])
    nan = np.isnan(scores)
    order = np.lexsort((pos, which, np.where(nan, 0.0, -scores), nan))
    src_of = which[order]
    if exhausted:
        counts = np.zeros((len(order), len(lists)), dtype=np.int64)
        counts[np.arange(len(order)), src_of] = 1
        taken_so_far = np.cumsum(counts, axis=0)
        lens = np.array([len(x) for x in lists])
        done = (taken_so_far == lens[None, :]) & (lens[None, :] > 0)
        hit = np.nonzero(done.any(axis=1))[0]
        if hit.size:
            order = order[:hit[0] + 1]
            src_of = src_of[:hit[0] + 1]
    taken = [int(np.count_nonzero(src_of == i)) for i in range(len(lists))]
    return recs[order], taken


def _mrg2_execute(ctx, dst, src_list, lengths, repeat, *, exhausted=None):
    op = "pto.ub.vmrgsort"
    if not isinstance(src_list, (tuple, list)) or not 1 <= len(src_list) <= 4:
        raise IllegalOperand("expects a list of 1..4 UB pointers", op=op, operand="src_list", limit="1..4")
    if not isinstance(lengths, (tuple, list)) or len(lengths) != len(src_list):
        raise IllegalOperand("needs one length per source list", op=op, operand="lengths", limit=len(src_list))
    _mrg2_check(ctx.target, dst, src_list, op)
    lens = [ve.check_range(n, 0, MAX_LIST_V2, op=op, operand=f"lengths[{i}]") for i, n in enumerate(lengths)]
    rep = ve.check_repeat(repeat, op=op)
    if rep > 1 and (len(src_list) != 4 or exhausted or len(set(lens)) != 1):
        raise IllegalOperand("repeat > 1 needs four lists of equal length and no exhausted mode", op=op,
                             operand="repeat", value=rep, hint="issue one vmrgsort per merge instead")
    if rep > 1:              # one merge after another: all or nothing (ALL_OR_NOTHING_WRITES)
        ctx.all_or_nothing(_mrg2_repeats, ctx, dst, src_list, lens, rep, exhausted)
    else:
        _mrg2_repeats(ctx, dst, src_list, lens, rep, exhausted)


def _mrg2_repeats(ctx, dst, src_list, lens: list, rep: int, exhausted) -> None:
    d = dst.dtype
    out_at = 0
    for r in range(rep):
        lists = []
        for i, p in enumerate(src_list):
            off = r * 4 * lens[0] * RECORD if rep > 1 else 0
            raw = np.array(ctx.strided_view(p, (lens[i] * RECORD,), (1,), offset=off, dtype=_U8,
                                            operand=f"src_list[{i}]")) if lens[i] else np.zeros(0, np.uint8)
            lists.append(raw.reshape(lens[i], RECORD))
        merged, taken = merge_records(lists, d, bool(exhausted))
        if merged.size:
            ctx.strided_view(dst, (merged.size,), (1,), offset=out_at, dtype=_U8, write=True,
                             operand="dst")[...] = merged.reshape(-1)
        out_at += merged.size
        ctx.spr["VMS4_SR"] = tuple(taken + [0] * (4 - len(taken)))


def _mrg2_check(target, dst, src_list, op):
    ve.check_ub(dst, op=op, operand="dst")
    for i, p in enumerate(src_list):
        ve.check_ub(p, op=op, operand=f"src_list[{i}]", align=RECORD)
        if p.dtype is not dst.dtype:
            raise IllegalOperand(f"dtype {p.dtype.name} differs from dst dtype {dst.dtype.name}", op=op,
                                 operand=f"src_list[{i}]", value=p.dtype.name, limit=dst.dtype.name,
                                 hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "vmrgsort", dst.dtype.name, op=op)


def _mrg2_verify(call, target):
    dst, srcs = call.operands[:2]
    if isinstance(dst, Ptr) and isinstance(srcs, (tuple, list)) and all(isinstance(p, Ptr) for p in srcs):
        _mrg2_check(target, dst, srcs, call.spec.asm_name)


register(OpSpec(
    name="ub.vmrgsort", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="merged 8-byte records"),
              Operand("src_list", "ptrs", _UB, doc="1..4 score-descending record lists (8 B aligned)"),
              Operand("lengths", "ints", doc="records per list, 0..65535"),
              Operand("repeat", "int", doc="repeats (> 1 only for 4 equal consecutive lists)")),
    clauses=(Clause("exhausted", "flag", doc="stop when the first list runs out"),),
    execute=_mrg2_execute, verify=_mrg2_verify,
    doc="merge up to four sorted (score, index) record lists by score (TIK vmrgsort)"))
EXPANDERS["ub.vmrgsort"] = lambda call: [
    f"// {call.spec.asm_name}: merge up to 4 score-descending record lists; counts -> VMS4_SR",
    "// register form: pto.vmrgsort on 8-byte (score, index) records"]

__all__ = ["record_scores", "descending_order", "make_records", "merge_records", "EXPANDERS"]
