"""Index fill, indexed moves and block broadcast: ``pto.ub.vci``, ``pto.ub.vgather``,
``pto.ub.vgatherb``, ``pto.ub.vscatter``, ``pto.ub.vbcb``.

* ``vci(dst, start, repeat)`` (TIK ``vci``, CCE ``vci``; Ascend C ``CreateVecIndex``): lane ``e``
  of repeat ``r`` gets ``start + r*PAR + e`` -- the lane's index counted over the whole call,
  so consecutive full repeats continue the sequence (the Ascend C reference implementation
  of ``CreateVecIndex`` builds repeat ``r + 1`` as repeat ``r`` plus ``PAR``). Masked-off
  lanes keep their contents and still count (index = lane position, not a packed count).
  In counter mode the ``n`` processed elements get ``start .. start + n - 1``.
  Numerics (named choice ``exact-then-round``): ``start`` is first converted to the
  destination type (the scalar register holds a destination-typed value), then each
  ``start + index`` is computed exactly and rounded once to the destination type
  (floats nearest-even, the machine's overflow mode applies; integers wrap modulo
  ``2**bits``).
* ``vgather(dst, src, offsets, repeat)`` (TIK ``vgather``, CCE ``vgather``): ``offsets`` holds
  one 32-bit byte offset per lane, ``PAR`` consecutive offsets per repeat (``offsets[r*PAR
  + e]`` for lane ``e`` of repeat ``r``, independent of the destination strides; CCE: "N 4-byte
  addresses stored contiguously"). Lane ``e`` of repeat ``r`` of ``dst`` (standard dst
  geometry: contiguous blocks, ``rep_stride`` in 32 B, ``stride_unit``) receives the element at
  byte ``src + base + offsets[r*PAR + e]``. ``base`` (clause, bytes, default 0) is TIK's
  ``base_addr``.
* ``vscatter(dst, src, offsets, repeat)`` (TIK ``vscatter``): the inverse: lane ``e`` of repeat
  ``r`` of ``src`` (standard geometry) is stored at byte ``dst + base + offsets[r*PAR + e]``.
  Two lanes aimed at the same element: the later one (repeat, then lane order) wins.

* ``vgatherb(dst, src, offsets, repeat)`` (TIK ``vgatherb``, CCE ``vgatherb``, Ascend C ``Gatherb``):
  gathers whole 32 B blocks. Repeat ``r`` reads the 8 consecutive 32-bit byte offsets
  ``offsets[8r .. 8r+7]`` and fills destination block ``j`` (32 B at ``dst + r*rep*32 +
  j*blk*32``) with the 32 bytes at ``src + offsets[8r + j]``. No mask (CCE: "MASK is not
  considered"); ``blk_stride`` 0..255 (default 1), ``rep_stride`` 0..4095 (default 8), both in
  32 B. Offsets must be non-negative multiples of 32 (CCE: "offsets are always 32-byte
  aligned"). Named choice: a block stride of 0 is taken literally (every block of a repeat
  lands on the same 32 B, the last one wins), as are overlapping repeats (later repeats win).

* ``vbcb(dst, src, repeat)`` (TIK ``vbcb``, CCE ``vbrcb``, Ascend C ``Brcb``): repeat ``r`` reads the 8
  consecutive elements ``src[8r .. 8r+7]`` and fills destination block ``j`` (32 B at ``dst +
  r*rep*32 + j*blk*32``) with copies of ``src[8r + j]``. No mask. ``blk_stride`` 0 is taken as
  1 (named choice, from the Ascend C ``Brcb`` note "dstBlkStride 0 is processed as 1").

Offsets must be non-negative multiples of the element size (named choice: a misaligned or
negative offset is an error -- the hardware forms element addresses and the TIK docs
require element-aligned offsets; silently rounding would hide a kernel bug). Only active
lanes' offsets are used (and checked for initialisation). Repeats run in order: when the
gathered/scattered bytes overlap the other operand, the op runs one repeat at a time.
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import DType
from ..errors import IllegalOperand, Misaligned
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_elementwise import _hashable, _scalar_value

EXPANDERS: dict = {}
_PLANS = ve.PlanCache()
_UB = ("ub",)
_OFFSET_BITS = 32
MAX_BASE = 2 ** 31 - 1


# ----------------------------------------------------------------------------- numerics (pure)


def index_values(start, index: np.ndarray, d: DType) -> np.ndarray:
    """``start + index`` (exact) in float64 for float ``d``, or wrapped to ``d`` for integer ``d``.

    ``start`` is a value already representable in ``d``; returns float64 (floats, to be
    rounded by the caller with the machine's overflow mode) or ``d``'s storage array."""
    if d.is_float:
        return np.float64(np.asarray(start).astype(np.float64)) + index.astype(np.float64)
    wide = np.int64(int(start)) + index.astype(np.int64)
    bits = d.bits
    wrapped = wide & ((1 << bits) - 1)
    if d.min < 0:
        wrapped = np.where(wrapped >= 1 << (bits - 1), wrapped - (1 << bits), wrapped)
    return wrapped.astype(d.storage)


# ----------------------------------------------------------------------------- vci


def _vci_check(target, dst, op):
    ve.check_ub(dst, op=op, operand="dst")
    vector_isa.require(target, "vci", dst.dtype.name, op=op)


def _vci_execute(ctx, dst, start, repeat, *, mask=None, counter=None, blk_stride=None, rep_stride=None,
                 stride_unit=None):
    op = "pto.ub.vci"
    _vci_check(ctx.target, dst, op)
    d = dst.dtype
    first = _scalar_value(start, d, op=op, operand="start")
    key = ("vci", d.name, repeat, mask, counter, blk_stride, rep_stride, stride_unit, ctx.target.name)

    def build():
        rep = ve.check_repeat(repeat, op=op)
        clauses = {"mask": mask, "counter": counter, "blk_stride": blk_stride, "rep_stride": rep_stride,
                   "stride_unit": stride_unit}
        par = ve.par_of(d)
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep,
                                      counter_ok=vector_isa.has_counter_mode(ctx.target), op=op)
        (b, r, u), = ve.strides_from_clauses(clauses, ("dst",), (d,), par, op=op, blk_max=65535)
        return ve.Plan(lanes, (ve.vector_stream("dst", d, "w", par=par, lanes=lanes, blk=b, rep=r, unit=u),))

    plan = _PLANS.get(_hashable(key), build)
    par, count = plan.lanes.par, plan.lanes.count

    def compute(ins, r0, r1):
        idx = np.arange(r0, r1, dtype=np.int64)[:, None] * par + np.arange(count, dtype=np.int64)[None, :]
        vals = index_values(first, idx, d)
        return {"dst": ve.round_float(vals, d, ctx) if d.is_float else vals}

    ve.run(ctx, plan, (dst,), compute)


def _vci_verify(call, target):
    if isinstance(call.operands[0], Ptr):
        _vci_check(target, call.operands[0], call.spec.asm_name)


def _vci_expand(call) -> list:
    d = ve.static_dtype(call.operands[0])
    par = ve.par_of(d) if d is not None else 128
    lines = [f"// {call.spec.asm_name}: lane e of repeat r = %start + r*{par} + e"]
    lines += ve.mask_text(call.clauses, par, 2048 // par)
    body = [f"%base = arith.addi %start, %r * {par}",
            "%v = pto.vci %base : ... -> !pto.vreg    // start, start+1, ...",
            "pto.vsts %v, %dst[%o_dst], %mask"]
    return ve.loop_text(call.operands[2], body, lines)


register(OpSpec(
    name="ub.vci", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination"),
              Operand("start", "scalar", doc="index of lane 0 of repeat 0, converted to the destination type"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=ve.mask_clauses() + ve.stride_clauses(("dst",)),
    execute=_vci_execute, verify=_vci_verify,
    doc="dst lane e of repeat r = start + r*PAR + e (vci / CreateVecIndex)"))
EXPANDERS["ub.vci"] = _vci_expand


# ----------------------------------------------------------------------------- vgather / vscatter


def _gs_check(target, instr, dst, src, offsets, op, offsets_are="byte offsets, one 32-bit word per lane"):
    """Operand spaces, one element type for dst and src, 32-bit integer offsets, chip support."""
    for nm, p in (("dst", dst), ("src", src), ("offsets", offsets)):
        ve.check_ub(p, op=op, operand=nm)
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="src", value=src.dtype.name, limit=dst.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    if offsets.dtype.bits != _OFFSET_BITS or offsets.dtype.is_float:
        raise IllegalOperand(f"offsets must be 32-bit integers (s32/u32), got {offsets.dtype.name}", op=op,
                             operand="offsets", value=offsets.dtype.name, limit="s32, u32",
                             hint=f"offsets are {offsets_are}")
    vector_isa.require(target, instr, dst.dtype.name, op=op)


GS_CONTIGUOUS_BLK = {0: 1, 1: 1, 2: 0, 3: 0}
"""Named choice: the block field that keeps the strided operand of ``vgather``/``vscatter`` contiguous
inside a repeat, per ``stride_unit``. The instruction has no block stride (CCE cceapi_0057: the N gathered
elements are "written contiguously to the destination"); units 0/1 count block *strides* (1 = contiguous),
units 2/3 count block *gaps* in elements (0 = contiguous, pto_vector.md §2). Vision SDK's warp_affine_uint8
gathers 4 x C x 1024 f16 values with ``dst_rep_stride=0, stride_unit=3`` (rep gap 0: one contiguous run)."""


def _gs_plan(op, instr, d, repeat, mask, counter, rep_stride, stride_unit, target):
    key = (instr, d.name, repeat, mask, counter, rep_stride, stride_unit, target.name)

    def build():
        rep = ve.check_repeat(repeat, op=op)
        clauses = {"mask": mask, "counter": counter, "rep_stride": rep_stride, "stride_unit": stride_unit}
        unit = ve.clause_args(clauses, "stride_unit")
        unit = 0 if unit is None else ve.check_range(unit[0], 0, 3, op=op, operand="stride_unit")
        clauses["blk_stride"] = ((GS_CONTIGUOUS_BLK[unit],),)
        par = ve.par_of(d)
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep,
                                      counter_ok=vector_isa.has_counter_mode(target), op=op)
        name = "dst" if instr == "vgather" else "src"
        (b, r, u), = ve.strides_from_clauses(clauses, (name,), (d,), par, op=op, rep_max=4095)
        role = "w" if instr == "vgather" else "r"
        return ve.Plan(lanes, (ve.vector_stream(name, d, role, par=par, lanes=lanes, blk=b, rep=r, unit=u),))

    return _PLANS.get(_hashable(key), build)


def _byte_addresses(ctx, offsets, base, lanes, r0, r1, size, op):
    """Active-lane byte addresses ``base + offsets[r*PAR + e]`` for repeats ``[r0, r1)``: (addresses, active)."""
    n = r1 - r0
    count = lanes.count
    act = lanes.padded(r0, r1, count)
    act = np.ones((n, count), dtype=bool) if act is None else np.broadcast_to(act, (n, count))
    offs = ctx.strided_view(offsets, (n, count), (lanes.par * 4, 4), offset=r0 * lanes.par * 4,
                            dtype=offsets.dtype, operand="offsets", active=act)
    addr = base + np.asarray(offs, dtype=np.int64)[act]
    bad = (addr < 0) | (addr % size != 0)
    if bad.any():
        i = int(np.argmax(bad))
        lane = np.argwhere(act)[i]
        v = int(addr[i])
        cls = IllegalOperand if v < 0 else Misaligned
        raise cls(f"lane {int(lane[1])} of repeat {r0 + int(lane[0])} addresses byte {v} (base + offset), which is "
                  f"{'negative' if v < 0 else f'not a multiple of the {size}-byte element size'}", op=op,
                  operand="offsets", value=v, limit=f">= 0, multiple of {size}",
                  hint="offsets are byte offsets of whole elements from the tensor start (plus base_addr)")
    return addr, act


def _chunks(ctx, a, b, span_b, rep, stream):
    """Run all repeats at once unless the indexed bytes of ``b`` may overlap ``a``'s stream (then one by one)."""
    if rep == 1:
        return ((0, 1),)
    lo, hi = span_b
    if a.space == b.space and a.sub == b.sub and a.addr < b.addr + hi and b.addr + lo < a.addr + stream.extent:
        return tuple((r, r + 1) for r in range(rep))
    return ((0, rep),)


def _offset_span(ctx, offsets, base, lanes, size, op):
    addr, _ = _byte_addresses(ctx, offsets, base, lanes, 0, lanes.repeat, size, op)
    return (int(addr.min()), int(addr.max()) + size) if addr.size else (0, 0)


def _base_of(base, op):
    return 0 if base is None else ve.check_range(base[0][0], 0, MAX_BASE, op=op, operand="base",
                                                 hint="base_addr is a byte offset in [0, 2**31-1]")


def _gs_setup(ctx, op, instr, dst, src, offsets, repeat, base, mask, counter, rep_stride, stride_unit):
    """Checks and plan shared by vgather/vscatter: ``(dtype, element bytes, base, lanes, the vector
    operand's stream, offset byte span)``, or None when there are no repeats."""
    _gs_check(ctx.target, instr, dst, src, offsets, op)
    d = dst.dtype
    size = d.itemsize
    b = _base_of(base, op)
    plan = _gs_plan(op, instr, d, repeat, mask, counter, rep_stride, stride_unit, ctx.target)
    lanes = plan.lanes
    if lanes.repeat == 0:
        return None
    return d, size, b, lanes, plan.streams[0], _offset_span(ctx, offsets, b, lanes, size, op)


def _gather_execute(ctx, dst, src, offsets, repeat, *, base=None, mask=None, counter=None, rep_stride=None,
                    stride_unit=None):
    op = "pto.ub.vgather"
    setup = _gs_setup(ctx, op, "vgather", dst, src, offsets, repeat, base, mask, counter, rep_stride, stride_unit)
    if setup is None:
        return
    d, size, b, lanes, stream, span = setup
    for r0, r1 in _chunks(ctx, dst, src, span, lanes.repeat, stream):
        addr, act = _byte_addresses(ctx, offsets, b, lanes, r0, r1, size, op)
        vals = np.zeros(act.shape, dtype=d.storage)
        if addr.size:
            lo, hi = int(addr.min()), int(addr.max()) + size
            data, written, origin = ctx.span_tracked(src, lo, hi, operand="src")
            k = (addr - lo) // size
            ctx.check_written(written.reshape(-1, size)[k], operand="src", ptr=src)
            vals[act] = data.view(d.storage)[k]
        ve.store(ctx, stream, dst, r0, r1, vals, lanes)


def _scatter_execute(ctx, dst, src, offsets, repeat, *, base=None, mask=None, counter=None, rep_stride=None,
                     stride_unit=None):
    op = "pto.ub.vscatter"
    setup = _gs_setup(ctx, op, "vscatter", dst, src, offsets, repeat, base, mask, counter, rep_stride, stride_unit)
    if setup is None:
        return
    d, size, b, lanes, s, span = setup
    for r0, r1 in _chunks(ctx, src, dst, span, lanes.repeat, s):
        n = r1 - r0
        addr, act = _byte_addresses(ctx, offsets, b, lanes, r0, r1, size, op)
        act_s = lanes.padded(r0, r1, s.lanes)
        v = ctx.strided_view(src, (n,) + s.shape[1:], s.strides, offset=r0 * s.strides[0], dtype=d, operand="src",
                             active=None if act_s is None else act_s.reshape((-1,) + s.shape[1:]))
        vals = np.asarray(v).reshape(n, s.lanes)[:, :lanes.count][act]
        if not addr.size:
            continue
        lo, hi = int(addr.min()), int(addr.max()) + size
        data, flags, origin = ctx.span_tracked(dst, lo, hi, write=True, operand="dst")
        k = (addr - lo) // size
        rev = k[::-1]
        uniq, first = np.unique(rev, return_index=True)          # the last writer of each element wins
        last = len(k) - 1 - first
        data.view(d.storage)[uniq] = vals[last]
        flags.reshape(-1, size)[uniq] = True


def _gs_verify(instr):
    def verify(call, target):
        ptrs = call.operands[:3]
        if all(isinstance(p, Ptr) for p in ptrs):
            _gs_check(target, instr, *ptrs, call.spec.asm_name)
    return verify


def _gs_expand(instr):
    def expand(call) -> list:
        what = ("dst lane e of repeat r = src[base + offsets[r*PAR + e]]" if instr == "vgather"
                else "dst[base + offsets[r*PAR + e]] = src lane e of repeat r")
        return [f"// {call.spec.asm_name}: {what}",
                f"scf.for %r = %c0 to %c{call.operands[3]} step %c1 {{",
                "  %off = pto.vlds %offsets[%r * PAR * 4] : !pto.vreg<PARxi32>    // byte offsets",
                "  %v = pto.vgather2 %src[%base], %off, %mask" if instr == "vgather"
                else "  %v = pto.vlds %src[%o_src]",
                "  pto.vsts %v, %dst[%o_dst], %mask" if instr == "vgather"
                else "  pto.vscatter %v, %dst[%base], %off, %mask",
                "}"]
    return expand


_GS_CLAUSES = (Clause("base", "args", params=("%bytes",), doc="byte offset added to every offset (TIK base_addr, "
                                                             "0..2**31-1; default 0)"),)
for _instr, _fn, _what, _strided in (
        ("vgather", _gather_execute, "gather elements at byte offsets of src into dst lanes", "dst"),
        ("vscatter", _scatter_execute, "scatter src lanes to byte offsets of dst", "src")):
    register(OpSpec(
        name="ub." + _instr, family="vector", pipe="V",
        operands=(Operand("dst", "ptr", _UB, doc="destination"), Operand("src", "ptr", _UB, doc="source"),
                  Operand("offsets", "ptr", _UB, doc="32-bit byte offsets, PAR per repeat, contiguous"),
                  Operand("repeat", "int", doc="repeats, 0..255")),
        clauses=_GS_CLAUSES + ve.mask_clauses() + (
            Clause("rep_stride", "args", params=(f"%{_strided}",), min_params=1,
                   doc=f"{_strided} repeat stride (32 B units, 0..4095; default contiguous)"),
            ve.stride_clauses((_strided,))[-1]),
        execute=_fn, verify=_gs_verify(_instr), doc=_what))
    EXPANDERS["ub." + _instr] = _gs_expand(_instr)
del _instr, _fn, _what, _strided



# ----------------------------------------------------------------------------- vgatherb (block gather)

GATHERB_BLOCKS = 8                 # blocks (and offsets) per repeat
GATHERB_MAX_BLK = 255              # CCE dstBlockStride [0, 2**8 - 1]
GATHERB_MAX_REP = 4095             # CCE dstRepeatStride [0, 4095]


def _gatherb_check(target, dst, src, offsets, op):
    _gs_check(target, "vgatherb", dst, src, offsets, op, offsets_are="byte offsets of 32-byte blocks, 8 per repeat")


def _gatherb_plan(op, d, repeat, blk_stride, rep_stride):
    key = ("vgatherb", d.name, repeat, blk_stride, rep_stride)

    def build():
        rep = ve.check_repeat(repeat, op=op)
        blk = 1 if blk_stride is None else ve.check_range(blk_stride[0][0], 0, GATHERB_MAX_BLK, op=op,
                                                           operand="blk_stride(dst)")
        rs = GATHERB_BLOCKS if rep_stride is None else ve.check_range(rep_stride[0][0], 0, GATHERB_MAX_REP, op=op,
                                                                       operand="rep_stride(dst)")
        e = ve.BLOCK_BYTES // d.itemsize
        par = GATHERB_BLOCKS * e
        stream = ve.Stream("dst", d, (rep, GATHERB_BLOCKS, e), (rs * ve.BLOCK_BYTES, blk * ve.BLOCK_BYTES,
                                                                  d.itemsize), "w")
        return ve.Plan(ve.Lanes(rep, par, None, par), (stream,))

    return _PLANS.get(_hashable(key), build)


def _block_offsets(ctx, offsets, r0, r1, op):
    """Byte offsets ``(r1 - r0, 8)`` of the blocks repeats ``[r0, r1)`` gather (checked: >= 0, 32 B multiples)."""
    n = r1 - r0
    raw = ctx.strided_view(offsets, (n, GATHERB_BLOCKS), (GATHERB_BLOCKS * 4, 4), offset=r0 * GATHERB_BLOCKS * 4,
                           dtype=offsets.dtype, operand="offsets")
    addr = np.asarray(raw, dtype=np.int64)
    bad = (addr < 0) | (addr % ve.BLOCK_BYTES != 0)
    if bad.any():
        r, j = (int(i) for i in np.argwhere(bad)[0])
        v = int(addr[r, j])
        cls = IllegalOperand if v < 0 else Misaligned
        raise cls(f"block {j} of repeat {r0 + r} gathers from byte offset {v}, which is "
                  f"{'negative' if v < 0 else 'not a multiple of 32'}", op=op, operand="offsets", value=v,
                  limit=">= 0, multiple of 32",
                  hint="vgatherb offsets are byte offsets of whole 32-byte blocks from the start of src")
    return addr


def _overlaps(a, a_lo, a_hi, b, b_lo, b_hi) -> bool:
    """Whether bytes ``[a + a_lo, a + a_hi)`` and ``[b + b_lo, b + b_hi)`` share memory."""
    return (a.space == b.space and a.sub == b.sub and a.addr + a_lo < b.addr + b_hi
            and b.addr + b_lo < a.addr + a_hi)


def _gatherb_execute(ctx, dst, src, offsets, repeat, *, blk_stride=None, rep_stride=None):
    op = "pto.ub.vgatherb"
    _gatherb_check(ctx.target, dst, src, offsets, op)
    d = dst.dtype
    plan = _gatherb_plan(op, d, repeat, blk_stride, rep_stride)
    stream, lanes = plan.streams[0], plan.lanes
    rep = lanes.repeat
    if rep == 0:
        return
    addr = _block_offsets(ctx, offsets, 0, rep, op)
    span = (int(addr.min()), int(addr.max()) + ve.BLOCK_BYTES)
    # Repeats run in order: when dst may overwrite offsets or gathered blocks of a later repeat, one at a time.
    serial = rep > 1 and (_overlaps(dst, 0, stream.extent, offsets, 0, rep * GATHERB_BLOCKS * 4)
                          or _overlaps(dst, 0, stream.extent, src, *span))
    if serial:               # one repeat after another: all or nothing (ALL_OR_NOTHING_WRITES)
        ctx.all_or_nothing(_gatherb_repeats, ctx, plan, dst, src, offsets, addr, serial, op)
    else:
        _gatherb_repeats(ctx, plan, dst, src, offsets, addr, serial, op)


def _gatherb_repeats(ctx, plan, dst, src, offsets, addr, serial: bool, op: str) -> None:
    stream, lanes = plan.streams[0], plan.lanes
    rep = lanes.repeat
    d = dst.dtype
    block = np.arange(ve.BLOCK_BYTES, dtype=np.int64)
    for r0, r1 in (tuple((r, r + 1) for r in range(rep)) if serial else ((0, rep),)):
        a = _block_offsets(ctx, offsets, r0, r1, op) if serial else addr
        lo, hi = int(a.min()), int(a.max()) + ve.BLOCK_BYTES
        data, written, _ = ctx.span_tracked(src, lo, hi, operand="src")
        idx = (a - lo)[..., None] + block                       # (repeats, 8, 32) byte indices into the span
        ctx.check_written(written[idx], operand="src", ptr=src)
        vals = np.ascontiguousarray(data[idx]).view(d.storage).reshape(r1 - r0, lanes.par)
        ve.store(ctx, stream, dst, r0, r1, vals, lanes)


def _gatherb_expand(call) -> list:
    return [f"// {call.spec.asm_name}: dst block j of repeat r = the 32 B at src + offsets[8r + j]",
            f"scf.for %r = %c0 to %c{call.operands[3]} step %c1 {{",
            "  %off = pto.vlds %offsets[%r * 32] : !pto.vreg<8xi32>    // 8 byte offsets, one per block",
            "  %v = pto.vgatherb %src, %off : ... -> !pto.vreg    // 8 blocks of 32 B",
            "  pto.vsstb %v, %dst, %o_dst    // block stride blk, repeat stride rep (32 B units)",
            "}"]


register(OpSpec(
    name="ub.vgatherb", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination: 8 blocks of 32 B per repeat"),
              Operand("src", "ptr", _UB, doc="source the offsets point into"),
              Operand("offsets", "ptr", _UB, doc="32-bit byte offsets of 32 B blocks, 8 per repeat, contiguous"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=(Clause("blk_stride", "args", params=("%dst",), min_params=1,
                    doc="dst block stride, 32 B units, 0..255 (default 1)"),
             Clause("rep_stride", "args", params=("%dst",), min_params=1,
                    doc="dst repeat stride, 32 B units, 0..4095 (default 8)")),
    execute=_gatherb_execute,
    verify=lambda call, target: _gatherb_check(target, *call.operands[:3], call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:3]) else None,
    doc="dst block j of repeat r = the 32 B at src + offsets[8r + j] (vgatherb / Gatherb)"))
EXPANDERS["ub.vgatherb"] = _gatherb_expand


# ----------------------------------------------------------------------------- vbcb (block broadcast)

BCB_PER_REPEAT = 8


def _bcb_check(target, dst, src, op):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="src", value=src.dtype.name, limit=dst.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "vbcb", dst.dtype.name, op=op)


def _bcb_execute(ctx, dst, src, repeat, *, blk_stride=None, rep_stride=None):
    op = "pto.ub.vbcb"
    _bcb_check(ctx.target, dst, src, op)
    d = dst.dtype
    key = ("vbcb", d.name, repeat, blk_stride, rep_stride)

    def build():
        rep = ve.check_repeat(repeat, op=op)
        size = d.itemsize
        e = ve.BLOCK_BYTES // size
        blk = 1 if blk_stride is None else ve.check_range(blk_stride[0][0], 0, 65535, op=op,
                                                           operand="blk_stride(dst)") or 1
        rs = 8 if rep_stride is None else ve.check_range(rep_stride[0][0], 0, 65535, op=op,
                                                         operand="rep_stride(dst)")
        par = BCB_PER_REPEAT * e
        streams = (ve.Stream("dst", d, (rep, BCB_PER_REPEAT, e), (rs * 32, blk * 32, size), "w"),
                   ve.Stream("src", d, (rep, 1, BCB_PER_REPEAT), (BCB_PER_REPEAT * size, 0, size), "r",
                             masked=False))
        return ve.Plan(ve.Lanes(rep, par, None, par), streams)

    plan = _PLANS.get(_hashable(key), build)
    e = ve.BLOCK_BYTES // d.itemsize

    def compute(ins, r0, r1):
        return {"dst": np.repeat(ins["src"], e, axis=1)}

    ve.run(ctx, plan, (dst, src), compute)


register(OpSpec(
    name="ub.vbcb", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination: 8 blocks per repeat"),
              Operand("src", "ptr", _UB, doc="source: 8 consecutive elements per repeat"),
              Operand("repeat", "int", doc="repeats, 0..255")),
    clauses=(Clause("blk_stride", "args", params=("%dst",), min_params=1,
                    doc="dst block stride, 32 B units (0 is taken as 1; default 1)"),
             Clause("rep_stride", "args", params=("%dst",), min_params=1,
                    doc="dst repeat stride, 32 B units (default 8)")),
    execute=_bcb_execute,
    verify=lambda call, target: _bcb_check(target, *call.operands[:2], call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:2]) else None,
    doc="dst block j of repeat r = 32 B of copies of src[8r + j] (vbcb / vbrcb / Brcb)"))
EXPANDERS["ub.vbcb"] = lambda call: [
    f"// {call.spec.asm_name}: block j of repeat r = broadcast of src[8r + j]",
    f"scf.for %r = %c0 to %c{call.operands[2]} step %c1 {{",
    "  %x = pto.vlds %src[%r * 8] {dist = \"BRC_BLK\"}    // 8 elements, one per 32 B block",
    "  pto.vsts %x, %dst[%o_dst] {dist = \"NORM\"}", "}"]

__all__ = ["index_values", "EXPANDERS"]
