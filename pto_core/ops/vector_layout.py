"""Data rearrangement: ``pto.ub.vtranspose``, ``pto.ub.vnchwconv``, ``pto.ub.vconcat``,
``pto.ub.vextract``, ``pto.ub.vmergech``, ``pto.ub.vreduce`` / ``pto.ub.vreduce_bits``.

* ``vtranspose(dst, src, repeat)``: each repeat transposes one 16x16 matrix of 16-bit
  elements, ``dst[j*16+i] = src[i*16+j]``; repeat strides in 512 B units (TIK
  ``vtranspose`` is one repeat, ``vec_trans`` many).
* ``vnchwconv(dst_list, src_list, repeat)`` (TIK ``vnchwconv`` / ``vec_trans_scatter``,
  hardware ``scatter_vnchwconv_b8/b16/b32``): 16 source and 16 destination block
  addresses; in repeat ``r`` source block ``k`` is 32 B at ``src_list[k] + r*src_rep*32``
  and destination block ``e`` at ``dst_list[e] + r*dst_rep*32`` (CCE ISA cceapi_0059):

  - b16: ``dst[e][k] = src[k][e]`` (a 16x16 transpose);
  - b32: ``dst[e][k] = src[k][e//2]`` for even ``e`` and ``dst[e][k] = src[k+8][e//2]`` for
    odd ``e`` (``k < 8``);
  - b8: ``dst[e][k + 16*dst_high_half] = src[k][e + 16*src_high_half]`` (half of each
    destination block is written).

  With ``repeat == 1`` the blocks start one repeat stride after the list addresses
  (`REPEAT1_STARTS_ONE_STRIDE_IN`: a named choice following the TIK vnchwconv page and the
  Ascend C TransDataTo5HD page, which both say so and tell kernels to pass stride 0 for a
  single repeat, as public kernels do; the CCE ISA page is silent; tik_api.md §13.6).
* ``vconcat(dst, src, repeat, mode)`` / ``vextract``: a proposal is 8 elements (x1, y1,
  x2, y2, score, label, ...); one repeat handles 16 proposals:
  ``dst[(16r+i)*8 + mode] = src[16r+i]`` (other proposal fields untouched) and the inverse.
* ``vmergech(dst, src, repeat)`` (TIK ``vmrgch``; 8- and 16-bit data): repeat ``r`` reads the 8
  blocks (256 B) at ``src + r*256`` B and writes the first 4 elements of each, in order, to
  ``dst + 32r`` elements: ``dst[(8r+b)*4 + j] = src[(8r+b)*E + j]``, ``E`` = elements per 32 B
  (TIK source, MindStudio sanitizer footprint 256 B in / 64 B (b16), 32 B (b8) out per repeat;
  migration_guide/tik_vector.md §5e).
* ``vreduce`` / ``vreduce_bits`` (TIK ``vreduce``, gather by pattern): per repeat the
  active lanes whose pattern bit is 1 are appended, in order, to ``dst`` (compact, over
  all repeats); the number kept goes to ``ctx.spr["RSVD_CNT"]``. Fixed patterns: 1 even
  lanes, 2 odd lanes, 3..6 lane ``i`` with ``i % 4 == pattern-3``, 7 all lanes.
  ``vreduce_bits`` reads ``PAR`` pattern bits per repeat from ``src1`` (bit ``i`` = lane
  ``i``, LSB first) at ``src1 + r*src1_rep*PAR/8`` bytes (`pattern_rep_unit`; ``src1_rep`` 0:
  the same bits every repeat);
  in counter mode with ``src1_rep`` > 0 the ``count`` elements take consecutive bits from
  ``src1`` (PAR per internal repeat: TIK's src1 extent is ``ceil(count / word bits)`` words,
  and Ascend C's GatherMask ``reduceMode`` reads 16 B per 128 halves).
  Counter mode is chip-dependent (`vector_isa.GATHER_COUNTER_PER_REPEAT`): on v200 ``count``
  is the total (internal repeats ``rep_stride`` apart, the repeat operand ignored); on v220,
  v300 and A5 each of ``repeat`` repeats takes ``count`` elements from ``src0 + i*rep_stride``
  blocks (chunks of PAR lanes ``8*blk_stride`` blocks apart) and ``count`` consecutive pattern
  bits from ``src1 + i*src1_rep*PAR/8`` bytes (Ascend C GatherMask "configuration 1").
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import dtype
from ..errors import IllegalOperand, OutOfBounds, UnsupportedOp
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_elementwise import _hashable

EXPANDERS: dict = {}
_PLANS = ve.PlanCache()
_UB = ("ub",)
_U8 = dtype("u8")

# ----------------------------------------------------------------------------- vtranspose


def _tr_check(target, dst, src, op):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit=src.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "vtranspose", src.dtype.name, op=op)


def _tr_execute(ctx, dst, src, repeat, *, rep_stride=None):
    op = "pto.ub.vtranspose"
    _tr_check(ctx.target, dst, src, op)
    d = src.dtype

    def build():
        rep = ve.check_repeat(repeat, op=op, hi=4095)
        rs = (1, 1) if rep_stride is None else tuple(
            ve.check_range(v, 0, 4095, op=op, operand=f"rep_stride({n})") for v, n in zip(rep_stride[0],
                                                                                         ("dst", "src")))
        lanes = ve.Lanes(rep, 256, None, 256)
        streams = tuple(ve.Stream(nm, d, (rep, 16, 16), (r * 512, 32, 2), role)
                        for nm, r, role in (("dst", rs[0], "w"), ("src", rs[1], "r")))
        return ve.Plan(lanes, streams)

    plan = _PLANS.get(_hashable(("vtranspose", d.name, repeat, rep_stride)), build)

    def compute(ins, r0, r1):
        x = ins["src"].reshape(-1, 16, 16)
        return {"dst": np.ascontiguousarray(x.transpose(0, 2, 1)).reshape(-1, 256)}

    ve.run(ctx, plan, (dst, src), compute)


register(OpSpec(
    name="ub.vtranspose", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination 16x16"), Operand("src", "ptr", _UB, doc="source 16x16"),
              Operand("repeat", "int", doc="matrices, 0..4095")),
    clauses=(Clause("rep_stride", "args", params=("%dst", "%src"), min_params=2,
                    doc="repeat strides in 512 B units (default 1, head to head)"),),
    execute=_tr_execute, verify=lambda call, target: _tr_check(target, *call.operands[:2], call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:2]) else None,
    doc="16x16 transpose of 16-bit elements per repeat (vtranspose / vec_trans)"))
EXPANDERS["ub.vtranspose"] = lambda call: [
    f"// {call.spec.asm_name}: {call.operands[2]} 16x16 b16 transposes",
    f"scf.for %r = %c0 to %c{call.operands[2]} step %c1 {{",
    "  %m = pto.vlds %src[%r * 512] x2    // 256 elements",
    "  %t = pto.vtranspose %m    // in-register 16x16 transpose",
    "  pto.vsts %t, %dst[%r * 512] x2", "}"]


# ----------------------------------------------------------------------------- vnchwconv

LIST_LEN = 16
#: With one repeat, vnchwconv's blocks start at the list addresses plus one repeat stride (TIK vnchwconv and
#: Ascend C TransDataTo5HD docs: "set the strides to 0 to start at the list addresses"; tik_api.md §13.6).
REPEAT1_STARTS_ONE_STRIDE_IN = True


def _list(value, name, op):
    if not isinstance(value, (tuple, list)) or len(value) != LIST_LEN:
        raise IllegalOperand(f"expects a list of {LIST_LEN} UB pointers", op=op, operand=name,
                             value=type(value).__name__ if not isinstance(value, (tuple, list)) else len(value),
                             limit=LIST_LEN, hint=f"pass {name} as a list of {LIST_LEN} UB pointers")
    return tuple(value)


def _nchw_check(target, dst_list, src_list, op):
    dst_list = _list(dst_list, "dst_list", op)
    src_list = _list(src_list, "src_list", op)
    d = None
    for nm, lst in (("dst_list", dst_list), ("src_list", src_list)):
        for i, p in enumerate(lst):
            ve.check_ub(p, op=op, operand=f"{nm}[{i}]")
            if d is None:
                d = p.dtype
            elif p.dtype.itemsize != d.itemsize:
                raise IllegalOperand(f"element size {p.dtype.itemsize} differs from {d.itemsize}", op=op,
                                     operand=f"{nm}[{i}]", value=p.dtype.name, limit=d.name,
                                     hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "vnchwconv", d.name, op=op)
    return dst_list, src_list, d


def _dst_blocks_collide(dst_list, d0: int, dr: int, rep: int) -> bool:
    """True when two (repeat, list entry) destination blocks of a vnchwconv start at the same byte (or the
    destination pointers are in different buffers: then assume they may)."""
    if any(p.sub != dst_list[0].sub for p in dst_list):
        return True
    starts = np.array([p.addr for p in dst_list], dtype=np.int64)[None, :] + d0 \
        + np.arange(rep, dtype=np.int64)[:, None] * (dr * 32)
    return np.unique(starts).size < starts.size


def _rows_view(ctx, p, n: int, width: int, stride: int, size: int, offset: int, d, write: bool, operand: str):
    """``ctx.strided_view(p, (n, width), (stride, size), ...)``: through `ExecContext.dense_view` (the same
    checks and marks, without the generic shape arithmetic) when the rows are contiguous -- one row (an
    in-place vnchwconv runs repeat by repeat: 32 such views per repeat) or rows ``stride == width * size``
    apart."""
    if n == 1 or stride == width * size:
        return ctx.dense_view(p, offset, n * width * size, d, write, operand).reshape(n, width)
    return ctx.strided_view(p, (n, width), (stride, size), offset=offset, dtype=d, write=write, operand=operand)


def _nchw_execute(ctx, dst_list, src_list, repeat, *, dst_high_half=None, src_high_half=None, rep_stride=None):
    op = "pto.ub.vnchwconv"
    dst_list, src_list, d = _nchw_check(ctx.target, dst_list, src_list, op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    dr, sr = (0, 0) if rep_stride is None else tuple(
        ve.check_range(v, 0, 65535, op=op, operand=f"rep_stride({n})") for v, n in zip(rep_stride[0], ("dst", "src")))
    size = d.itemsize
    s0, d0 = (sr * 32, dr * 32) if rep == 1 and REPEAT1_STARTS_ONE_STRIDE_IN else (0, 0)
    sh = dh = 0
    if size == 1:
        sh, dh = 16 * bool(src_high_half), 16 * bool(dst_high_half)
    elif dst_high_half or src_high_half:
        raise IllegalOperand("high_half selects the byte half of 8-bit blocks only", op=op, operand="dst_high_half",
                             value=d.name, hint="drop src_high_half / dst_high_half for 16- and 32-bit data")
    # order repeats one at a time only if a destination block can overwrite a later source block
    src_rng = [(p.addr + s0, p.addr + s0 + (rep - 1) * sr * 32 + 32) for p in src_list]
    dst_rng = [(p.addr + d0, p.addr + d0 + (rep - 1) * dr * 32 + 32) for p in dst_list]
    same = all(p.sub == src_list[0].sub for p in src_list + dst_list)
    overlap = same and any(a0 < b1 and b0 < a1 for a0, a1 in dst_rng for b0, b1 in src_rng)
    # ... or if a later repeat writes a destination block an earlier repeat wrote (repeats run in order: the
    # later one wins; CANN prod_force_se_a transposes 4 rows with dst_rep_stride 1 and keeps block r of repeat r)
    overlap = overlap or (rep > 1 and _dst_blocks_collide(dst_list, d0, dr, rep))
    chunks = [(r, r + 1) for r in range(rep)] if overlap else [(0, rep)]
    # the 16 destination blocks are written one after another: all or nothing (ALL_OR_NOTHING_WRITES)
    ctx.all_or_nothing(_nchw_chunks, ctx, dst_list, src_list, d, chunks, dr, sr, s0, d0, sh, dh)


def _nchw_chunks(ctx, dst_list, src_list, d, chunks, dr: int, sr: int, s0: int, d0: int, sh: int, dh: int) -> None:
    size = d.itemsize
    e = ve.BLOCK_BYTES // size
    for r0, r1 in chunks:
        n = r1 - r0
        blocks = np.stack([_rows_view(ctx, p, n, e, sr * 32, size, s0 + r0 * sr * 32, d, False, f"src_list[{k}]")
                           for k, p in enumerate(src_list)], axis=1)          # (n, 16 src blocks, e)
        if size == 2:
            out = blocks.transpose(0, 2, 1)                                      # dst[e][k] = src[k][e]
            cols = slice(0, 16)
        elif size == 4:
            out = np.empty((n, 16, 8), dtype=blocks.dtype)
            out[:, 0::2, :] = blocks[:, 0:8, :].transpose(0, 2, 1)             # dst[2j][k] = src[k][j]
            out[:, 1::2, :] = blocks[:, 8:16, :].transpose(0, 2, 1)            # dst[2j+1][k] = src[k+8][j]
            cols = slice(0, 8)
        else:
            out = blocks[:, :, sh:sh + 16].transpose(0, 2, 1)                  # dst[e][k] = src[k][e+sh]
            cols = slice(dh, dh + 16)
        for j, p in enumerate(dst_list):
            width = cols.stop - cols.start
            view = _rows_view(ctx, p, n, width, dr * 32, size, d0 + r0 * dr * 32 + cols.start * size, d, True,
                              f"dst_list[{j}]")
            if dr == 0 and n > 1:
                view[...] = out[n - 1:n, j, :]
            else:
                view[...] = out[:, j, :]


def _nchw_verify(call, target):
    dl, sl = call.operands[:2]
    if isinstance(dl, (tuple, list)) and isinstance(sl, (tuple, list)) and all(
            isinstance(p, Ptr) for p in tuple(dl) + tuple(sl)):
        _nchw_check(target, dl, sl, call.spec.asm_name)


register(OpSpec(
    name="ub.vnchwconv", family="vector", pipe="V",
    operands=(Operand("dst_list", "ptrs", _UB, doc="16 destination block addresses"),
              Operand("src_list", "ptrs", _UB, doc="16 source block addresses"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=(Clause("dst_high_half", "flag", doc="b8: write bytes 16..31 of each destination block"),
             Clause("src_high_half", "flag", doc="b8: read bytes 16..31 of each source block"),
             Clause("rep_stride", "args", params=("%dst", "%src"), min_params=2,
                    doc="repeat strides in 32 B blocks, applied to every list address (default 0; with "
                        "repeat 1 the blocks start one stride in)")),
    execute=_nchw_execute, verify=_nchw_verify,
    doc="scatter transpose of 16 blocks (vnchwconv / vec_trans_scatter)"))
EXPANDERS["ub.vnchwconv"] = lambda call: [
    f"// {call.spec.asm_name}: {call.operands[2]} repeats; the 16 block addresses live in the VA registers",
    f"scf.for %r = %c0 to %c{call.operands[2]} step %c1 {{",
    "  // 16 x pto.vlds of 32 B blocks, in-register transpose (pto.vintlv/vdintlv), 16 x pto.vsts", "}"]


# ----------------------------------------------------------------------------- vconcat / vextract

PROPOSAL = 8
PROPOSALS_PER_REPEAT = 16


def _prop_check(target, instr, dst, src, mode, op):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit=src.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, instr, src.dtype.name, op=op)
    hi = 3 if instr == "vextract" and vector_isa.family_of(target) == "v100-mini" else 5
    ve.check_range(mode, 0, hi, op=op, operand="mode", hint="0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5 label")


def _prop_op(instr: str):
    op = "pto.ub." + instr

    def execute(ctx, dst, src, repeat, mode):
        _prop_check(ctx.target, instr, dst, src, mode, op)
        rep = ve.check_repeat(repeat, op=op)
        if rep == 0:
            return
        d = src.dtype
        s = d.itemsize
        n = rep * PROPOSALS_PER_REPEAT
        if instr == "vconcat":
            vals = np.array(ctx.strided_view(src, (n,), (s,), dtype=d, operand="src"))
            out = ctx.strided_view(dst, (n,), (PROPOSAL * s,), offset=int(mode) * s, dtype=d, write=True,
                                   operand="dst")
        else:
            vals = np.array(ctx.strided_view(src, (n,), (PROPOSAL * s,), offset=int(mode) * s, dtype=d,
                                             operand="src"))
            out = ctx.strided_view(dst, (n,), (s,), dtype=d, write=True, operand="dst")
        out[...] = vals

    def verify(call, target):
        dst, src, _, mode = call.operands
        if isinstance(dst, Ptr) and isinstance(src, Ptr) and isinstance(mode, (int, np.integer)):
            _prop_check(target, instr, dst, src, mode, call.spec.asm_name)

    what = ("dst[(16r+i)*8 + mode] = src[16r+i]: write one field of 16 proposals per repeat" if instr == "vconcat"
            else "dst[16r+i] = src[(16r+i)*8 + mode]: read one field of 16 proposals per repeat")
    register(OpSpec(
        name="ub." + instr, family="vector", pipe="V",
        operands=(Operand("dst", "ptr", _UB, doc="destination"), Operand("src", "ptr", _UB, doc="source"),
                  Operand("repeat", "int", doc="repeats of 16 proposals, 0..255"),
                  Operand("mode", "int", doc="field: 0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5 label")),
        execute=execute, verify=verify, doc=what))
    EXPANDERS["ub." + instr] = lambda call: [f"// {call.spec.asm_name}: {what}",
                                              "// strided copy of 16 elements per repeat (8-element proposal pitch)"]


for _i in ("vconcat", "vextract"):
    _prop_op(_i)
del _i


# ----------------------------------------------------------------------------- vmergech

MERGECH_KEEP = 4
"""Elements ``pto.ub.vmergech`` keeps from the start of every 32-byte source block (8 B of 16-bit data, 4 B of
8-bit data). TIK's ``vmrgch``: "Keep the first 4 data, the rest of the data is removed" and its extents
"extract valid 8B from each 32B for b16" / "valid 4B from each 32B for b8" (te/tik tik_proposal_api_.py)."""

MERGECH_WIDTHS = (1, 2)
"""Element sizes (bytes) ``vmergech`` moves: the CCE intrinsics are ``VMERGECH_b8`` and ``VMERGECH_f16``; TIK
reinterprets any 16-bit tensor as float16 and any 8-bit one as uint8 (a bit copy, no arithmetic)."""


def _mergech_check(target, dst, src, op):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit=src.dtype.name,
                             hint="use operands of one element type (reinterpret one of them)")
    if src.dtype.itemsize not in MERGECH_WIDTHS:
        raise IllegalOperand(f"moves 8- or 16-bit elements, got {src.dtype.name}", op=op, operand="src",
                             value=src.dtype.name, limit="8- or 16-bit dtype",
                             hint="reinterpret the data as float16/uint8 blocks of the same bytes")
    vector_isa.require(target, "vmergech", src.dtype.name, op=op)


def _mergech_execute(ctx, dst, src, repeat):
    """Repeat ``r`` reads 8 blocks (256 B) at ``src + r*256 B`` and writes the first `MERGECH_KEEP` elements of
    each block, in block order, to ``dst + r*8*MERGECH_KEEP`` elements (contiguous)."""
    op = "pto.ub.vmergech"
    _mergech_check(ctx.target, dst, src, op)
    rep = ve.check_repeat(repeat, op=op)
    if rep == 0:
        return
    d = src.dtype
    s = d.itemsize
    blocks = rep * ve.BLOCKS_PER_REPEAT
    vals = np.array(ctx.strided_view(src, (blocks, MERGECH_KEEP), (ve.BLOCK_BYTES, s), dtype=d, operand="src"))
    ctx.strided_view(dst, (blocks * MERGECH_KEEP,), (s,), dtype=d, write=True, operand="dst")[...] = \
        vals.reshape(-1)


def _mergech_verify(call, target):
    dst, src = call.operands[:2]
    if isinstance(dst, Ptr) and isinstance(src, Ptr):
        _mergech_check(target, dst, src, call.spec.asm_name)


register(OpSpec(
    name="ub.vmergech", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="8 x 4 elements per repeat, contiguous"),
              Operand("src", "ptr", _UB, doc="8 blocks of 32 B per repeat, contiguous"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    execute=_mergech_execute, verify=_mergech_verify,
    doc="dst[(8r+b)*4 + j] = src element j of 32 B block 8r+b, j < 4 (keep the first 4 of each block)"))
EXPANDERS["ub.vmergech"] = lambda call: [
    f"// {call.spec.asm_name}: keep the first 4 elements of every 32 B block, packed (8 blocks per repeat)",
    "// strided copy: 4 elements per 32 B source block into consecutive destination elements"]


# ----------------------------------------------------------------------------- vreduce (gather by pattern)


def pattern_rep_unit(par: int) -> int:
    """Bytes the ``vreduce_bits`` pattern pointer moves per unit of its repeat stride: one repeat's PAR
    bits (16 B for 16-bit data, 8 B for 32-bit). Named choice: TIK sizes and bounds-checks the
    pattern as ``repeat * PAR`` bits for any non-zero stride (``check_vreduce_src1_overflow``), and
    CANN's sorted_nms reads a packed ``vcmpvs`` bit mask with stride 1 over 16 repeats; Ascend C's
    GatherMask emulation for the dav_m300 vector unit steps 32 bytes per unit instead."""
    return par // 8


def _counter_pattern(ctx, src1, lanes, par: int, d) -> np.ndarray:
    """Counter mode, pattern rep stride > 0: the ``count`` elements take consecutive pattern bits (``PAR``
    per internal repeat; the stride's value does not matter), read in whole pattern words (u16 for 16-bit data, u32 for
    32-bit: TIK's src1 extent); ``(repeat, PAR)`` lane selections."""
    count = (lanes.repeat - 1) * par + lanes.count if lanes.mask is None else int(lanes.mask.sum())
    word = 2 if d.bits == 16 else 4
    nbytes = -(-count // (8 * word)) * word
    raw = np.zeros(lanes.repeat * par // 8, np.uint8)
    raw[:nbytes] = ctx.strided_view(src1, (nbytes,), (1,), dtype=_U8, operand="src1")
    return np.unpackbits(raw.reshape(lanes.repeat, par // 8), axis=1, bitorder="little", count=par).astype(bool)


def fixed_pattern(pattern: int, par: int) -> np.ndarray:
    """Lane bits of the built-in vreduce patterns 1..7."""
    lane = np.arange(par)
    if pattern == 1:
        return lane % 2 == 0
    if pattern == 2:
        return lane % 2 == 1
    if 3 <= pattern <= 6:
        return lane % 4 == pattern - 3
    return np.ones(par, dtype=bool)


def _vr_check(target, dst, src0, op, src1=None):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src0, op=op, operand="src0")
    if src1 is not None:
        ve.check_ub(src1, op=op, operand="src1")
    if dst.dtype is not src0.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src0 dtype {src0.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit=src0.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "vreduce", src0.dtype.name, op=op)


def _store(ctx, dst, out: np.ndarray, dst_limit, d, op: str, dst_tensor=None) -> None:
    """Write the kept elements to ``dst`` (after the ``dst_limit`` check) and their number to RSVD_CNT.
    ``dst_tensor``: the front end's words for dst's tensor (``tensor 'x' of 256 elements``), for the error."""
    limit = None if dst_limit is None else int(dst_limit[0][0])
    if limit is not None and out.size > limit:
        where = dst_tensor or "its tensor"
        if limit < 0:       # a run-time dst offset past the tensor's end: no room at all, not a negative one
            raise OutOfBounds(f"dst starts {-limit} elements past the end of {where}; the op keeps {out.size} "
                              f"elements (the dst_limit clause, {limit}: the elements from dst to its tensor's "
                              "end)", op=op, operand="dst", value=int(out.size), limit=limit,
                              hint="check the run-time dst offset: dst must start inside its tensor, with room "
                                   "for every element the pattern can keep")
        raise OutOfBounds(f"keeps {out.size} elements but dst holds only {limit} (the dst_limit clause: the "
                          f"elements from dst to the end of {where})", op=op, operand="dst",
                          value=int(out.size), limit=limit,
                          hint="give dst room for every element the pattern can keep")
    ctx.spr["RSVD_CNT"] = int(out.size)
    if out.size:
        view = ctx.strided_view(dst, (out.size,), (d.itemsize,), dtype=d, write=True, operand="dst")
        view[...] = out


def _per_repeat(ctx, src0, src1, d, par: int, clauses: dict, rep: int, pattern, s1: int, op: str) -> tuple:
    """Counter mode on `vector_isa.GATHER_COUNTER_PER_REPEAT` chips: repeat ``i`` takes ``count`` elements from
    ``src0 + i * rep_stride`` blocks, in chunks of PAR lanes ``8 * blk_stride`` blocks apart (blocks
    ``blk_stride`` apart within a chunk), and ``count`` consecutive pattern bits from ``src1 + i * src1_rep *
    PAR/8`` bytes (`pattern_rep_unit`; 0: the same bits every repeat). Returns ``(values, keep)`` shaped
    ``(repeat, chunks, lanes)``."""
    inner = ve.lanes_from_clauses(clauses, par=par, repeat=1, counter_ok=True, op=op)
    (b, r, u), = ve.strides_from_clauses(clauses, ("src0",), (d,), par, op=op)
    if u:
        raise UnsupportedOp(f"stride_unit {u} with counter mode on {ctx.target.label} (count elements per repeat) "
                            "is not modelled", op=op, operand="stride_unit", value=u,
                            hint="use stride_unit 0 (block and repeat strides in 32-byte blocks)")
    size = d.itemsize
    e = ve.BLOCK_BYTES // size
    nblk = max(1, par * size // ve.BLOCK_BYTES)
    nb_act = min(nblk, -(-inner.count // e))
    width = nb_act * e
    if rep == 0 or inner.repeat == 0:
        return np.empty((0,), d.storage), np.zeros((0,), bool)
    shape = (rep, inner.repeat, nb_act, e)
    act = inner.padded(0, inner.repeat, width)
    v = ctx.strided_view(src0, shape, (r * ve.BLOCK_BYTES, nblk * b * ve.BLOCK_BYTES, b * ve.BLOCK_BYTES, size),
                         dtype=d, operand="src0", active=None if act is None else act.reshape(1, -1, nb_act, e))
    vals = v.reshape(rep, inner.repeat, width)[:, :, :inner.count]
    keep = np.ones((rep, inner.repeat, inner.count), dtype=bool)
    if inner.rows(0, inner.repeat) is not None:
        keep &= inner.rows(0, inner.repeat)[None]
    if src1 is not None:
        count = (inner.repeat - 1) * par + inner.count if inner.mask is None else int(inner.mask.sum())
        word = 2 if d.bits == 16 else 4
        nbytes = -(-count // (8 * word)) * word
        raw = np.zeros((rep, inner.repeat * par // 8), np.uint8)
        raw[:, :nbytes] = ctx.strided_view(src1, (rep, nbytes), (s1 * pattern_rep_unit(par), 1), dtype=_U8,
                                           operand="src1")
        sel = np.unpackbits(raw.reshape(rep, inner.repeat, par // 8), axis=2, bitorder="little",
                            count=par).astype(bool)
    else:
        pat = ve.check_range(pattern[0][0] if pattern is not None else 7, 1, 7, op=op, operand="pattern",
                             hint="1 even, 2 odd, 3..6 every 4th from lane 0..3, 7 all")
        sel = fixed_pattern(pat, par)[None, None, :]
    keep &= sel[..., :inner.count]
    return vals, keep


def _vreduce(bits_mode: bool):
    name = "vreduce_bits" if bits_mode else "vreduce"
    op = "pto.ub." + name

    def execute(ctx, dst, src0, *rest, pattern=None, mask=None, counter=None, blk_stride=None, rep_stride=None,
                stride_unit=None, dst_limit=None, dst_tensor=None):
        src1 = rest[0] if bits_mode else None
        repeat = rest[-1]
        _vr_check(ctx.target, dst, src0, op, src1)
        d = src0.dtype
        par = ve.par_of(d)
        clauses = {"mask": mask, "counter": counter, "blk_stride": None if blk_stride is None else blk_stride,
                   "stride_unit": stride_unit,
                   "rep_stride": None if rep_stride is None else ((rep_stride[0][0],), {})}
        rep = ve.check_repeat(repeat, op=op)
        s1 = 0
        if bits_mode:
            s1 = 0 if rep_stride is None else ve.check_range(rep_stride[0][1], 0, 255, op=op,
                                                              operand="rep_stride(src1)")
        if counter is not None and vector_isa.has_counter_mode(ctx.target) \
                and vector_isa.gather_counter_per_repeat(ctx.target):
            vals, keep = _per_repeat(ctx, src0, src1, d, par, clauses, rep, pattern, s1, op)
            if not keep.size:        # repeat 0 or counter 0: a no-op, as below (COUNTER_ZERO_AT_RUN_TIME_IS_NOOP)
                ctx.spr["RSVD_CNT"] = 0
                return
            _store(ctx, dst, vals[keep], dst_limit, d, op, dst_tensor)
            return
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep,
                                      counter_ok=vector_isa.has_counter_mode(ctx.target), op=op)
        if lanes.repeat == 0:
            ctx.spr["RSVD_CNT"] = 0
            return
        (b, r, u), = ve.strides_from_clauses(clauses, ("src0",), (d,), par, op=op)
        s = ve.vector_stream("src0", d, "r", par=par, lanes=lanes, blk=b, rep=r, unit=u)
        act = lanes.padded(0, lanes.repeat, s.lanes)
        v = ctx.strided_view(src0, s.shape, s.strides, dtype=d, operand="src0",
                             active=None if act is None else act.reshape((-1,) + s.shape[1:]))
        vals = v.reshape(lanes.repeat, s.lanes)[:, :lanes.count]
        keep = np.ones((lanes.repeat, lanes.count), dtype=bool)
        if lanes.rows(0, lanes.repeat) is not None:
            keep &= lanes.rows(0, lanes.repeat)
        if bits_mode:
            if s1 and counter is not None and vector_isa.has_counter_mode(ctx.target):
                sel = _counter_pattern(ctx, src1, lanes, par, d)
            else:
                raw = ctx.strided_view(src1, (lanes.repeat, par // 8), (s1 * pattern_rep_unit(par), 1), dtype=_U8,
                                       operand="src1")
                sel = np.unpackbits(np.asarray(raw), axis=1, bitorder="little", count=par).astype(bool)
        else:
            pat = ve.check_range(pattern[0][0] if pattern is not None else 7, 1, 7, op=op, operand="pattern",
                                 hint="1 even, 2 odd, 3..6 every 4th from lane 0..3, 7 all")
            sel = fixed_pattern(pat, par)[None, :]
        keep &= sel[:, :lanes.count]
        _store(ctx, dst, vals[keep], dst_limit, d, op, dst_tensor)

    def verify(call, target):
        ptrs = call.operands[:3 if bits_mode else 2]
        if all(isinstance(p, Ptr) for p in ptrs):
            _vr_check(target, ptrs[0], ptrs[1], call.spec.asm_name, ptrs[2] if bits_mode else None)

    operands = (Operand("dst", "ptr", _UB, doc="compacted result"), Operand("src0", "ptr", _UB, doc="source"))
    if bits_mode:
        operands += (Operand("src1", "ptr", _UB, doc="pattern bits, PAR per repeat"),)
    operands += (Operand("repeat", "int", doc="repeats, 0..255"),)
    clauses = () if bits_mode else (Clause("pattern", "args", params=("%p",),
                                           doc="built-in pattern 1..7 (default 7 = all lanes)"),)
    clauses += ve.mask_clauses() + (
        Clause("blk_stride", "args", params=("%src0",), min_params=1, doc="src0 block stride (default 1)"),
        Clause("rep_stride", "args", params=("%src0", "%src1"), min_params=1,
               doc="src0 repeat stride and (vreduce_bits) src1 repeat stride, 32 B units"),
        ve.stride_clauses(("src0",))[-1],
        Clause("dst_limit", "args", params=("%n",),
               doc="elements dst may receive (a front end's tensor bound); keeping more raises OutOfBounds "
                   "before anything is written"),
        Clause("dst_tensor", "attr", doc="dst's tensor in the front end's words, for the dst_limit error"))
    register(OpSpec(name="ub." + name, family="vector", pipe="V", operands=operands, clauses=clauses,
                    execute=execute, verify=verify,
                    doc="append the active lanes selected by the pattern to dst; count -> RSVD_CNT"))
    EXPANDERS["ub." + name] = lambda call: [
        f"// {call.spec.asm_name}: per repeat, gather the selected lanes and append them to %dst",
        "%v = pto.vlds %src0[...]", "%g = pto.vsqz %v, %pattern_mask    // squeeze selected lanes",
        "pto.vstu %g, %dst    // unaligned store, advancing the write pointer"]


_vreduce(False)
_vreduce(True)
