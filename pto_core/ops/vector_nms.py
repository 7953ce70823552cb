"""Region-proposal NMS instructions: ``pto.ub.vrpac``, ``pto.ub.viou``, ``pto.ub.vaadd``,
``pto.ub.rpn_cor``, ``pto.ub.rpn_cor_diag`` and their special registers
(``pto.ub.set_rpn_offset``, ``pto.ub.set_rpn_cor_ir``).

A proposal is 8 elements ``(x1, y1, x2, y2, score, label, -, -)``; one repeat handles 16
proposals. Geometry (CANN 8.1 TIK ``_generate_code_intrin_func`` extents and overflow
checks) and semantics (Huawei's NMS kernels ``nms_with_mask`` / ``batch_multi_class_nms``,
which build ``iou > (area_a + area_b) * t / (1 + t)`` with exactly these instructions, and
US patent 2020/0364289 "VRPAC, VIOU, VAADD ... suppression matrices"):

* ``vrpac(dst, src, repeat)``: ``dst[16r+i] = (x2 - x1 + off) * (y2 - y1 + off)`` of
  proposal ``16r+i``.
* ``viou(dst, src0, src1, repeat)``: ``src0`` gives 16 proposals per repeat, ``src1`` the
  same 16 proposals for every repeat; ``dst[(16r+i)*16 + j]`` = intersection area of
  ``src0`` proposal ``16r+i`` and ``src1`` proposal ``j``:
  ``max(0, min(x2) - max(x1) + off) * max(0, min(y2) - max(y1) + off)`` (row = ``src0``
  proposal, as the kernels index it: ``iou_ub[k, j]``).
* ``vaadd(dst, src0, src1, repeat)``: ``dst[(16r+i)*16 + j] = src0[16r+i] + src1[j]``
  (sum of the two areas).
* ``off`` is the RPN offset register (``set_rpn_offset``): 1 after reset -- the kernels
  subtract 1 from x2/y2 when they do not set it, and call ``set_rpn_offset(0.0)``
  otherwise; ``ctx.spr["RPN_OFFSET"]``.
* Rounding (one named choice; the datapath is not documented): every operation (each
  difference, offset addition, product, sum) is rounded to the element type, as a
  datapath of that type does; f16 operations are computed in f32 and rounded to f16.
* Suppression (u16 data; row ``k`` of a suppression matrix is one u16 whose bit ``j``,
  LSB first, says "proposal ``k`` overlaps proposal ``j`` of the current group" -- the
  ``vcmpv_gt`` bit layout the kernels produce it with; a suppression vector holds one
  u16 per proposal, 0 = kept, non-zero = suppressed):

  - ``rpn_cor(src0, src1, repeat, rep_stride=(s0, s1))``: for each repeat ``r`` the 16
    rows at ``src0 + r*s0*32 B`` and the 16 vector entries at ``src1 + r*s1*32 B``:
    ``RPN_COR_IR |= rows[k]`` for every ``k`` whose entry is 0;
  - ``rpn_cor_diag(dst, src)``: the 16 rows of the diagonal block; for ``k = 0..15`` in
    order: an entry ``dst[k]`` that is already 0 stays 0 (kept) and ``RPN_COR_IR |= src[k]``
    (named choice `RPN_COR_DIAG_KEEPS_ZERO_ENTRIES`); otherwise ``dst[k] = 1`` if bit ``k``
    of ``RPN_COR_IR`` is set (suppressed), else ``dst[k] = 0`` and ``RPN_COR_IR |= src[k]``;
  - ``set_rpn_cor_ir(v)`` sets the 16-bit register (``ctx.spr["RPN_COR_IR"]``).

Inputs and outputs of every op are read/written whole (no mask).
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
PROPOSAL = 8
GROUP = 16
_U16 = dtype("u16")
RPN_OFFSET_RESET = 1.0


def rpn_offset(ctx) -> float:
    return ctx.spr.get("RPN_OFFSET", RPN_OFFSET_RESET)


#: NMS_OVERFLOW_AT_EACH_STEP (named choice): on a saturation-mode machine (numerics.md §3: inf -> max,
#: NaN -> 0) ``vrpac``/``viou`` apply the overflow mode at every rounded step of their area arithmetic
#: (x2 - x1, + offset, the product), not once to the final area. The docs (TIK vrpac/viou pages, the ACL
#: ``aclrtFloatOverflowMode`` text numerics.md §3 quotes) are silent on intermediates; each step is already
#: modelled as a rounded result of the element type (a datapath of that type, tik_vector.md §5), and a
#: saturation-mode chip writes no inf/NaN result of a vector arithmetic step, so each step saturates. It
#: matters only for NaN intermediates: a box with x1 = x2 = +inf has width NaN -> 0 (+ offset) here, where
#: saturating at the end would turn the whole area into 0. False: only the final area saturates.
NMS_OVERFLOW_AT_EACH_STEP = True


def _step(ctx):
    """The ``ctx`` an intermediate rounding of vrpac/viou sees (`NMS_OVERFLOW_AT_EACH_STEP`)."""
    return ctx if NMS_OVERFLOW_AT_EACH_STEP else None


def _rnd(x, d, ctx=None):
    """Round f32/f64 values to element type ``d`` (and back to f32 for the next operation).

    With ``ctx``, each rounding applies the machine's overflow mode as every vector arithmetic op does
    (``vector_engine.round_float``: on the saturation-mode chips Ascend310/910/310P, +-inf and finite
    overflow clamp to +-max and NaN becomes 0; numerics.md §3, ACL ``aclrtFloatOverflowMode``). Before,
    ``vrpac``/``viou``/``vaadd`` wrote IEEE inf/NaN on those chips, unlike ``vadd`` of the same values."""
    if ctx is None:
        return np.asarray(x, dtype=np.float64).astype(d.storage).astype(np.float32)
    return np.asarray(ve.round_float(np.asarray(x, dtype=np.float64), d, ctx), dtype=np.float32)


def _check(target, instr, dst, srcs, op, sig=None):
    ve.check_ub(dst, op=op, operand="dst")
    for i, p in enumerate(srcs):
        nm = f"src{i}" if len(srcs) > 1 else "src"
        ve.check_ub(p, op=op, operand=nm)
        if p.dtype is not dst.dtype:
            raise IllegalOperand(f"{nm} dtype {p.dtype.name} differs from dst dtype {dst.dtype.name}", op=op,
                                 operand=nm, value=p.dtype.name, limit=dst.dtype.name,
                                 hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, instr, sig or dst.dtype.name, op=op)


def _read(ctx, p, n, name):
    d = p.dtype
    return np.array(ctx.strided_view(p, (n,), (d.itemsize,), dtype=d, operand=name))


def _write(ctx, p, values, name):
    d = p.dtype
    ctx.strided_view(p, (values.size,), (d.itemsize,), dtype=d, write=True, operand=name)[...] = \
        values.reshape(-1).astype(d.storage)


def proposal_areas(boxes: np.ndarray, d, off: float, ctx=None) -> np.ndarray:
    """``(..., 8)`` proposals -> areas, each operation rounded to ``d`` (with ``ctx``: in its overflow mode)."""
    b = boxes.astype(np.float32)
    o = np.float32(off)
    c = _step(ctx)
    w = _rnd(_rnd(b[..., 2] - b[..., 0], d, c) + o, d, c)
    h = _rnd(_rnd(b[..., 3] - b[..., 1], d, c) + o, d, c)
    return _rnd(w * h, d, ctx)


def intersections(a: np.ndarray, b: np.ndarray, d, off: float, ctx=None) -> np.ndarray:
    """``(n, 8)`` x ``(m, 8)`` proposals -> ``(n, m)`` intersection areas, each operation rounded to ``d``
    (with ``ctx``: in its overflow mode)."""
    a = a.astype(np.float32)[:, None, :]
    b = b.astype(np.float32)[None, :, :]
    o = np.float32(off)
    c = _step(ctx)
    w = _rnd(_rnd(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), d, c) + o, d, c)
    h = _rnd(_rnd(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), d, c) + o, d, c)
    return _rnd(np.maximum(w, 0) * np.maximum(h, 0), d, ctx)


# ----------------------------------------------------------------------------- vrpac / viou / vaadd


def _vrpac_execute(ctx, dst, src, repeat):
    op = "pto.ub.vrpac"
    _check(ctx.target, "vrpac", dst, (src,), op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    with np.errstate(all="ignore"):
        boxes = _read(ctx, src, rep * GROUP * PROPOSAL, "src").reshape(-1, PROPOSAL)
        _write(ctx, dst, proposal_areas(boxes, dst.dtype, rpn_offset(ctx), ctx), "dst")


def _viou_execute(ctx, dst, src0, src1, repeat):
    op = "pto.ub.viou"
    _check(ctx.target, "viou", dst, (src0, src1), op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    with np.errstate(all="ignore"):
        a = _read(ctx, src0, rep * GROUP * PROPOSAL, "src0").reshape(-1, PROPOSAL)
        b = _read(ctx, src1, GROUP * PROPOSAL, "src1").reshape(-1, PROPOSAL)
        _write(ctx, dst, intersections(a, b, dst.dtype, rpn_offset(ctx), ctx), "dst")


def _vaadd_execute(ctx, dst, src0, src1, repeat):
    op = "pto.ub.vaadd"
    _check(ctx.target, "vaadd", dst, (src0, src1), op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    with np.errstate(all="ignore"):
        a = _read(ctx, src0, rep * GROUP, "src0").astype(np.float32)
        b = _read(ctx, src1, GROUP, "src1").astype(np.float32)
        _write(ctx, dst, _rnd(a[:, None] + b[None, :], dst.dtype, ctx), "dst")


def _verify3(instr, n):
    def verify(call, target):
        ptrs = call.operands[:n]
        if all(isinstance(p, Ptr) for p in ptrs):
            _check(target, instr, ptrs[0], ptrs[1:], call.spec.asm_name)
    return verify


register(OpSpec(
    name="ub.vrpac", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="16 areas per repeat"),
              Operand("src", "ptr", _UB, doc="16 proposals (8 elements each) per repeat"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    execute=_vrpac_execute, verify=_verify3("vrpac", 2),
    doc="dst[16r+i] = (x2-x1+off)*(y2-y1+off) of proposal 16r+i (off = RPN offset register)"))
register(OpSpec(
    name="ub.viou", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="16x16 intersection areas per repeat"),
              Operand("src0", "ptr", _UB, doc="16 proposals per repeat"),
              Operand("src1", "ptr", _UB, doc="16 proposals (the same for every repeat)"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    execute=_viou_execute, verify=_verify3("viou", 3),
    doc="dst[(16r+i)*16+j] = intersection area of src0 proposal 16r+i and src1 proposal j"))
register(OpSpec(
    name="ub.vaadd", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="16x16 area sums per repeat"),
              Operand("src0", "ptr", _UB, doc="16 areas per repeat"),
              Operand("src1", "ptr", _UB, doc="16 areas (the same for every repeat)"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    execute=_vaadd_execute, verify=_verify3("vaadd", 3),
    doc="dst[(16r+i)*16+j] = src0[16r+i] + src1[j]"))

# ----------------------------------------------------------------------------- special registers


def _set_offset(ctx, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise IllegalOperand(f"expects a number, got {value!r}", op="pto.ub.set_rpn_offset", operand="value",
                             value=value, hint="pass value as a Python int or float")
    ctx.spr["RPN_OFFSET"] = float(value)


def _set_cor_ir(ctx, value):
    v = ve.check_range(value, 0, 0xFFFF, op="pto.ub.set_rpn_cor_ir", operand="value")
    ctx.spr["RPN_COR_IR"] = v


register(OpSpec(name="ub.set_rpn_offset", family="vector", pipe="V",
                operands=(Operand("value", "scalar", doc="offset added to widths and heights (reset: 1)"),),
                execute=_set_offset, doc="RPN offset register used by vrpac and viou"))
register(OpSpec(name="ub.set_rpn_cor_ir", family="vector", pipe="V",
                operands=(Operand("value", "int", doc="16-bit suppression state"),),
                execute=_set_cor_ir, doc="RPN_COR_IR = value (the running suppression bits of rpn_cor)"))

# ----------------------------------------------------------------------------- rpn_cor / rpn_cor_diag


def _cor_check(target, ptrs, names, op):
    for nm, p in zip(names, ptrs):
        ve.check_ub(p, op=op, operand=nm)
        if p.dtype.itemsize != 2:
            raise IllegalOperand(f"{nm} holds 16-bit suppression words, got {p.dtype.name}", op=op, operand=nm,
                                 value=p.dtype.name, limit="u16", hint=f"declare {nm} as u16")
    vector_isa.require(target, "rpn_cor", "f16", op=op)


def _cor_ir(ctx, op) -> int:
    v = ctx.spr.get("RPN_COR_IR")
    if v is None:
        raise IllegalOperand("RPN_COR_IR was never set on this core", op=op, operand="RPN_COR_IR",
                             hint="set it first (TIK set_rpn_cor_ir(0))")
    return int(v)


def _rpn_cor_execute(ctx, src0, src1, repeat, *, rep_stride=None):
    op = "pto.ub.rpn_cor"
    _cor_check(ctx.target, (src0, src1), ("src0", "src1"), op)
    rep = ve.check_repeat(repeat, op=op)
    s0, s1 = (1, 1) if rep_stride is None else tuple(
        ve.check_range(v, 0, 0xFFFF, op=op, operand=f"rep_stride({n})") for v, n in zip(rep_stride[0],
                                                                                         ("src0", "src1")))
    ir = _cor_ir(ctx, op)
    if rep == 0:
        return
    rows = np.array(ctx.strided_view(src0, (rep, GROUP), (s0 * 32, 2), dtype=_U16, operand="src0"))
    vec = np.array(ctx.strided_view(src1, (rep, GROUP), (s1 * 32, 2), dtype=_U16, operand="src1"))
    kept = rows[vec == 0]
    ctx.spr["RPN_COR_IR"] = ir | int(np.bitwise_or.reduce(kept)) if kept.size else ir


#: Named choice (open question, migration_guide/tik_vector.md §5): ``rpn_cor_diag`` reads its ``dst`` entries
#: and keeps an entry that is already 0 (a proposal the kernel marked kept before the call). No public page
#: documents the instruction, and TIK declares ``dst`` write-only; but both Huawei call patterns then give a
#: greedy NMS: ``nms_with_mask`` / ``batch_multi_class_nms`` fill ``dst`` with 1 before every burst, and
#: CANN's ``cce_nms`` (proposal, ssd_detection_output) and the YOLO v2/v3 ``nms_filter`` pre-set the
#: top box's entry to 0 and pass the diagonal block to ``rpn_cor`` first, so that the box's own overlap bit
#: is in the register: with a write-only ``dst`` every class would lose its top box.
RPN_COR_DIAG_KEEPS_ZERO_ENTRIES = True


def _rpn_cor_diag_execute(ctx, dst, src):
    op = "pto.ub.rpn_cor_diag"
    _cor_check(ctx.target, (dst, src), ("dst", "src"), op)
    ir = _cor_ir(ctx, op)
    rows = np.array(ctx.strided_view(src, (GROUP,), (2,), dtype=_U16, operand="src"))
    old = (np.array(ctx.strided_view(dst, (GROUP,), (2,), dtype=_U16, operand="dst"))
           if RPN_COR_DIAG_KEEPS_ZERO_ENTRIES else np.ones(GROUP, np.uint16))
    out = np.zeros(GROUP, dtype=np.uint16)
    for k in range(GROUP):                     # sequential by definition: 16 steps of 16-bit logic
        if old[k] and (ir >> k) & 1:
            out[k] = 1
        else:
            ir |= int(rows[k])
    ctx.spr["RPN_COR_IR"] = ir
    ctx.strided_view(dst, (GROUP,), (2,), dtype=_U16, write=True, operand="dst")[...] = out


register(OpSpec(
    name="ub.rpn_cor", family="vector", pipe="V",
    operands=(Operand("src0", "ptr", _UB, doc="suppression matrix rows (u16), 16 per repeat"),
              Operand("src1", "ptr", _UB, doc="suppression vector (u16 per proposal, 0 = kept), 16 per repeat"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=(Clause("rep_stride", "args", params=("%src0", "%src1"), min_params=2,
                    doc="repeat strides in 32 B blocks (default 1)"),),
    execute=_rpn_cor_execute,
    doc="RPN_COR_IR |= OR of the matrix rows of kept proposals"))
register(OpSpec(
    name="ub.rpn_cor_diag", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="16 suppression entries (1 suppressed, 0 kept; an entry already 0 "
                                             "stays kept)"),
              Operand("src", "ptr", _UB, doc="16 rows of the diagonal suppression block")),
    execute=_rpn_cor_diag_execute,
    doc="resolve the diagonal block in order against RPN_COR_IR"))

for _n, _t in (("vrpac", "area per proposal, offset from RPN_OFFSET"),
               ("viou", "16x16 intersection areas per repeat"), ("vaadd", "16x16 area sums per repeat"),
               ("rpn_cor", "OR of kept rows into RPN_COR_IR"), ("rpn_cor_diag", "16 in-order suppression steps"),
               ("set_rpn_offset", "special register write"), ("set_rpn_cor_ir", "special register write")):
    EXPANDERS["ub." + _n] = (lambda t: lambda call: [f"// {call.spec.asm_name}: {t} (no register-level PTO "
                                                     f"equivalent; kept as one op)"])(_t)
del _n, _t
