"""Compares and selects: ``pto.ub.vcmpv_<cmp>``, ``pto.ub.vcmpvs_<cmp>``, ``pto.ub.vcmp_<cmp>``,
``pto.ub.vsel`` / ``vsel_scalar`` / ``vsel_bits`` and the CMPMASK moves.

Bit layout (tik_api.md §9.8, pinned by the vec_cmpv golden §10.5): the result of lane
``i`` of repeat ``r`` is bit ``r*PAR + i`` of the destination, LSB first (bit ``k`` is
bit ``k % 8`` of byte ``k // 8``); one repeat writes ``PAR/8`` bytes and nothing else.
Comparisons are IEEE: any comparison with NaN is false except ``ne``.

CMPMASK is the per-core special register ``ctx.spr["CMPMASK"]`` (16 bytes; 32 after an 8-bit
compare or select load, named choice `CMPMASK_B8_BITS`):

* ``vcmp_<cmp>`` (one repeat, with a mask) writes it: bit ``i`` = result of lane ``i``;
  masked-off lanes (and, for 32-bit operands, bits 64..127) keep their previous value
  (named choice `VCMP_KEEPS_MASKED_BITS`, from the CCE ``vcmp`` page).
* ``vsel`` (TIK ``vsel``/``vec_sel`` mode 0) selects with the first ``PAR`` bits of it,
  the same bits in every repeat. TIK ``vec_sel(mode=0, sel=tensor)`` lowers to
  ``pto.ub.mov_tensor_to_cmpmask(sel)`` followed by ``pto.ub.vsel``, as TIK itself does.
* ``mov_tensor_to_cmpmask`` / ``mov_cmpmask_to_tensor`` move its 16 bytes from / to UB.

Selection: ``dst = src0 if bit else src1`` (``vsel_scalar``: ``src1`` is a scalar) on
active lanes; ``vsel_bits``/``vsel_scalar`` (modes 2 and 1) consume the ``sel`` bits
consecutively: repeat ``r`` uses bits ``r*PAR .. r*PAR+PAR-1``.
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import dtype
from ..errors import CmpmaskUnsetBitsWarning, IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_elementwise import _hashable, _scalar_value

EXPANDERS: dict = {}
_PLANS = ve.PlanCache()
_UB = ("ub",)
_U8 = dtype("u8")

#: Named choice: ``vcmp_<cmp>`` writes the CMPMASK bits of its **active** lanes only. A masked-off
#: lane, and for 32-bit operands every bit from 64 up, keeps the bit the register held before. Sources:
#: the CCE intrinsic page for ``vcmp`` (cceapi_0118, CANN 8.5: "if a bit of MASK is zero, the matching
#: CMPMASK bit is unchanged"; f32 results "go to the low 64 bits of CMPMASK") and Huawei's CPU model of
#: the v100 intrinsics (``aicore_fast_sim``, 2019), whose ``vcmp_*`` store only mask-selected lanes.
#: A CMPMASK no op wrote yet counts as all zero bits (the register's reset value is not published).
#: Up to this release masked-off bits (and f32 bits 64..127) were cleared to 0 (tik_api.md §13.11).
VCMP_KEEPS_MASKED_BITS = True

CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "gt": np.greater, "ge": np.greater_equal,
       "le": np.less_equal}
CMPMASK_BYTES = 16
#: Named choice: an 8-bit compare / select (256 lanes: s8/u8 ``vcmp``/``vsel`` on Ascend310B1) uses 256
#: CMPMASK bits, lane ``i`` at bit ``i`` as for 16- and 32-bit data. Source: the TIK vec_sel page, mode 0,
#: "every repeat reads the first 256 / 128 / 64 bits of sel" for int8 / float16 / float32 (TIK loads them
#: into CMPMASK; tik_api.md §9.9 "the same first PAR bits"). The register is kept as 32 bytes after such
#: an op and as 16 bytes otherwise; the explicit ``mov_cmpmask_to_tensor`` / ``mov_tensor_to_cmpmask``
#: still move 16 bytes (no source gives their width for 8-bit data). Before, an 8-bit ``vcmp`` stopped
#: with a numpy ValueError and an 8-bit ``vec_sel`` mode 0 took src1 in lanes 128..255 whatever ``sel`` held.
CMPMASK_B8_BITS = 256

#: Named choice: a select that reads CMPMASK bits the register's last write did not set -- an 8-bit ``vsel``
#: mode 0 (256 lanes) with an active lane from 128 up after a 16-byte ``mov_tensor_to_cmpmask`` or a 16/32-bit
#: ``vcmp`` (128 bits) -- runs with those bits as 0 (``src1``) and emits one `CmpmaskUnsetBitsWarning` and
#: ``("cmpmask", ...)`` report per op site. No source gives the explicit moves' width for 8-bit data (TIK's
#: debugger keeps CMPMASK as two uint64 SPRs, CMPMASK0/1; the cce vsel page names only CMPMASK[127:0] for
#: f16 and [63:0] for f32), so the lanes' device value is unknown; before, they silently took ``src1``.
CMPMASK_UNSET_BITS_WARN = True


def _warn_unset_bits(ctx, op: str, have: int, lanes) -> None:
    """`CMPMASK_UNSET_BITS_WARN` for a mode-0 select whose active lanes reach past the ``have`` bits set."""
    active = lanes.count > have and (lanes.mask is None or bool(lanes.mask[:, have:].any()))
    machine, where = ctx.machine, ctx.where
    if not active or (op, where) in machine.cmpmask_unset_sites:
        return
    machine.cmpmask_unset_sites.add((op, where))
    site = f"{where}: " if where is not None else ""
    msg = (f"{site}{op} selects {lanes.par} lanes with CMPMASK bits 0..{lanes.par - 1}, but the register's last "
           f"write set only bits 0..{have - 1} (a 16-byte mov_tensor_to_cmpmask or a 16/32-bit compare): lanes "
           f"{have}..{lanes.count - 1} take src1 here, and their value on the device is not documented. Fix: for "
           f"8-bit data load the 32 bytes of sel with vec_sel mode 0, or compare with an 8-bit vcmp")
    machine.report("cmpmask", msg, warned=True)
    machine.warn(msg, CmpmaskUnsetBitsWarning, where, stacklevel=2)


def pack_bits(flags: np.ndarray) -> np.ndarray:
    """``(r, n)`` bools -> ``(r, n/8)`` bytes, lane ``i`` at bit ``i % 8`` of byte ``i // 8``."""
    return np.packbits(flags, axis=-1, bitorder="little")


def unpack_bits(raw: np.ndarray, n: int) -> np.ndarray:
    return np.unpackbits(raw, axis=-1, bitorder="little", count=n).astype(bool)


def _bits_stream(name: str, role: str, repeat: int, par: int) -> ve.Stream:
    nbytes = par // 8
    return ve.Stream(name, _U8, (repeat, 1, nbytes), (nbytes, nbytes, 1), role, masked=False)


def _same(dts, names, op):
    for n, d in zip(names[1:], dts[1:]):
        if d is not dts[0]:
            raise IllegalOperand(f"dtype {d.name} differs from {names[0]} dtype {dts[0].name}", op=op, operand=n,
                                 value=d.name, limit=dts[0].name,
                                 hint="use operands of one element type (convert with pto.ub.vconv first)")


# ----------------------------------------------------------------------------- vcmpv / vcmpvs


def _cmpv_check(target, instr, dst, srcs, op):
    ve.check_ub(dst, op=op, operand="dst")
    names = ("src0", "src1")[:len(srcs)] if len(srcs) == 2 else ("src",)
    for nm, p in zip(names, srcs):
        ve.check_ub(p, op=op, operand=nm)
    _same(tuple(p.dtype for p in srcs), names, op)
    if not dst.dtype.is_int or dst.dtype.is_signed:
        raise IllegalOperand(f"result bits go to an unsigned integer tensor, got {dst.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit="u8, u16, u32, u64",
                             hint="pass a u8/u16/u32/u64 dst (one bit per lane)")
    vector_isa.require(target, instr, srcs[0].dtype.name, op=op)


def _cmpv_ops(cmp: str, scalar: bool):
    instr = f"vcmpvs_{cmp}" if scalar else f"vcmpv_{cmp}"
    op = "pto.ub." + instr
    fn = CMP[cmp]
    names = ("src",) if scalar else ("src0", "src1")

    def verify(call, target):
        ptrs = call.operands[:1 + len(names)]
        if all(isinstance(p, Ptr) for p in ptrs):
            _cmpv_check(target, instr, ptrs[0], ptrs[1:], op)

    def execute(ctx, dst, *rest, blk_stride=None, rep_stride=None, stride_unit=None):
        srcs = rest[:len(names)]
        _cmpv_check(ctx.target, instr, dst, srcs, op)
        sval = _scalar_value(rest[1], srcs[0].dtype, op=op) if scalar else None
        repeat = rest[-1]
        d = srcs[0].dtype

        def build():
            rep = ve.check_repeat(repeat, op=op)
            par = ve.par_of(d)
            lanes = ve.Lanes(rep, par, None, par)
            clauses = {"blk_stride": blk_stride, "rep_stride": rep_stride, "stride_unit": stride_unit}
            geo = ve.strides_from_clauses(clauses, names, (d,) * len(names), par, op=op)
            streams = (_bits_stream("dst", "w", rep, par),) + tuple(
                ve.vector_stream(nm, d, "r", par=par, lanes=lanes, blk=g[0], rep=g[1], unit=g[2])
                for nm, g in zip(names, geo))
            return ve.Plan(lanes, streams, (("dst", ve.Lanes(rep, par // 8, None, par // 8)),))

        plan = _PLANS.get(_hashable((instr, d.name, repeat, blk_stride, rep_stride, stride_unit)), build)

        def compute(ins, r0, r1):
            a = ins[names[0]]
            b = sval if scalar else ins["src1"]
            return {"dst": pack_bits(fn(a, b))}

        ve.run(ctx, plan, (dst,) + tuple(srcs), compute)

    def expand(call) -> list:
        src = call.operands[1]
        d = ve.static_dtype(src)
        par = ve.par_of(d) if d is not None else 128
        repeat = call.operands[-1]
        body = [f"%v0 = pto.vlds %{names[0]}[%r * 256] {{dist = \"NORM\"}}"]
        if scalar:
            body.append(f"%p = pto.vcmps %v0, %scalar, %all {{cmp = \"{cmp}\"}}")
        else:
            body += ["%v1 = pto.vlds %src1[%r * 256] {dist = \"NORM\"}",
                     f"%p = pto.vcmp %v0, %v1, %all {{cmp = \"{cmp}\"}}"]
        body.append(f"pto.psts %p, %dst[%r * {par // 8}]    // {par} bits = {par // 8} bytes per repeat")
        head = [f"// {call.spec.asm_name}: {repeat} repeats, {par} result bits per repeat",
                f"%all = pto.pset_b{2048 // par} \"PAT_ALL\""]
        return ve.loop_text(repeat, body, head)

    operands = (Operand("dst", "ptr", _UB, doc="result bits (u8/u16/u32/u64 tensor)"),)
    operands += tuple(Operand(nm, "ptr", _UB, doc="source") for nm in names)
    if scalar:
        operands += (Operand("scalar", "scalar", doc="compared against every lane"),)
    operands += (Operand("repeat", "int", doc="repeats, 0..255"),)
    register(OpSpec(name="ub." + instr, family="vector", pipe="V", operands=operands,
                    clauses=ve.stride_clauses(names), execute=execute, verify=verify,
                    doc=f"bit per lane: {names[0]} {cmp} {'scalar' if scalar else 'src1'} (all lanes, no mask)"))
    EXPANDERS["ub." + instr] = expand


# ----------------------------------------------------------------------------- vcmp -> CMPMASK


def write_cmpmask(ctx, res: np.ndarray, act) -> None:
    """CMPMASK after a one-repeat compare: bit ``i`` = ``res[i]`` on active lanes (``act``: None = all,
    else a ``(1, n)`` bool row); the other bits as `VCMP_KEEPS_MASKED_BITS` says. Shared by ``vcmp_*``
    and the VA forms ``scatter_vcmp_*``."""
    n = res.shape[0]
    prev = ctx.spr.get("CMPMASK")
    width = max(n, 8 * CMPMASK_BYTES, 0 if prev is None else 8 * prev.size)   # `CMPMASK_B8_BITS`
    if VCMP_KEEPS_MASKED_BITS:
        bits = np.zeros(width, dtype=bool) if prev is None else unpack_bits(prev, width)
        bits[:n] = res if act is None else np.where(act[0, :n], res, bits[:n])
    else:
        bits = np.zeros(width, dtype=bool)
        bits[:n] = res if act is None else res & act[0, :n]
    ctx.spr["CMPMASK"] = pack_bits(bits)


def _vcmp_op(cmp: str):
    instr = f"vcmp_{cmp}"
    op = "pto.ub." + instr
    fn = CMP[cmp]

    def check(target, s0, s1):
        ve.check_ub(s0, op=op, operand="src0")
        ve.check_ub(s1, op=op, operand="src1")
        _same((s0.dtype, s1.dtype), ("src0", "src1"), op)
        vector_isa.require(target, "vcmp", s0.dtype.name, op=op)

    def verify(call, target):
        if all(isinstance(p, Ptr) for p in call.operands[:2]):
            check(target, *call.operands[:2])

    def execute(ctx, src0, src1, *, mask=None, blk_stride=None):
        check(ctx.target, src0, src1)
        d = src0.dtype

        def build():
            par = ve.par_of(d)
            clauses = {"mask": mask, "blk_stride": blk_stride}
            lanes = ve.lanes_from_clauses(clauses, par=par, repeat=1, counter_ok=False, op=op)
            geo = ve.strides_from_clauses(clauses, ("src0", "src1"), (d, d), par, op=op)
            streams = tuple(ve.vector_stream(nm, d, "r", par=par, lanes=lanes, blk=g[0], rep=g[1], unit=0)
                            for nm, g in zip(("src0", "src1"), geo))
            return ve.Plan(lanes, streams)

        plan = _PLANS.get(_hashable((instr, d.name, mask, blk_stride)), build)

        def compute(ins, r0, r1):
            write_cmpmask(ctx, fn(ins["src0"], ins["src1"])[0], plan.lanes.rows(0, 1))
            return {}

        ve.run(ctx, plan, (src0, src1), compute)

    def expand(call) -> list:
        return [f"// {call.spec.asm_name}: one repeat, the {cmp} result bits go to the CMPMASK register",
                "%v0 = pto.vlds %src0[%c0] {dist = \"NORM\"}", "%v1 = pto.vlds %src1[%c0] {dist = \"NORM\"}",
                f"%cmpmask = pto.vcmp %v0, %v1, %mask {{cmp = \"{cmp}\"}}    // inactive lanes keep their bits"]

    register(OpSpec(
        name="ub." + instr, family="vector", pipe="V",
        operands=(Operand("src0", "ptr", _UB, doc="source"), Operand("src1", "ptr", _UB, doc="source")),
        clauses=(ve.mask_clauses()[0], Clause("blk_stride", "args", params=("%src0", "%src1"), min_params=2,
                                              doc="block strides (32 B units, default 1)")),
        execute=execute, verify=verify, doc=f"CMPMASK bit per lane: src0 {cmp} src1 (one repeat)"))
    EXPANDERS["ub." + instr] = expand


for _c in CMP:
    _cmpv_ops(_c, False)
    _cmpv_ops(_c, True)
    _vcmp_op(_c)
del _c


# ----------------------------------------------------------------------------- CMPMASK moves


#: Named choice CMPMASK_UB_ALIGN (migration_guide/tik_vector.md §2, the mov_tensor_to_cmpmask row): the UB side of
#: ``mov_tensor_to_cmpmask`` / ``mov_cmpmask_to_tensor`` (TIK) and of these ops is 16-byte aligned, not the 32 bytes
#: of TIK's general UB table. The specific text wins over the general one (the TIK general-restrictions page: "the
#: restrictions specified by each TIK API apply"): Ascend C's SetCmpMask / GetCmpMask pages (the same register
#: moves) say "the LocalTensor's start address must be 16-byte aligned" (SetCmpMask's CANN 8.0.0 page said 32 B;
#: 8.2.RC1 and later, 8.5.0 and 9.0.0 say 16 B; GetCmpMask always 16 B). The TIK pages of the two moves state no
#: alignment, and CANN's basic_lstm_cell_input_grad and max_pool_grad_with_argmax (v100) load CMPMASK from
#: ``mask[k * 16 bytes]``, which 32 B would refuse.
CMPMASK_UB_ALIGN = 16


def _mov_check(p, op, operand):
    ve.check_ub(p, op=op, operand=operand, align=CMPMASK_UB_ALIGN)


#: Bits a ``mov_tensor_to_cmpmask{bits = 64}`` load takes from UB (the rest of CMPMASK is cleared).
#: Named choice (tik_vector.md "vsel mode 0 selection bits"): TIK's vec_sel mode 0 consumes only the
#: first 64 bits of ``sel`` for 32-bit data (CMPMASK[63:0], cce vsel page), so a front end that loads
#: ``sel`` for an f32 select reads just those 8 bytes; what the device leaves in CMPMASK[127:64] is
#: not published and no f32 select reads it.
CMPMASK_LOAD_BITS = (64, 128, CMPMASK_B8_BITS)


def _mov_to_cmpmask(ctx, src, bits=None):
    op = "pto.ub.mov_tensor_to_cmpmask"
    _mov_check(src, op, "src")
    nbytes = CMPMASK_BYTES if bits is None else bits // 8
    raw = ctx.strided_view(src, (nbytes,), (1,), dtype=_U8, operand="src")
    value = np.zeros(max(nbytes, CMPMASK_BYTES), dtype=np.uint8)
    value[:nbytes] = raw
    ctx.spr["CMPMASK"] = value


def _mov_from_cmpmask(ctx, dst):
    op = "pto.ub.mov_cmpmask_to_tensor"
    _mov_check(dst, op, "dst")
    value = cmpmask(ctx, op)
    out = ctx.strided_view(dst, (CMPMASK_BYTES,), (1,), dtype=_U8, write=True, operand="dst")
    out[...] = value[:CMPMASK_BYTES]


def cmpmask(ctx, op: str) -> np.ndarray:
    """The CMPMASK register (16 bytes); raises if nothing wrote it yet."""
    value = ctx.spr.get("CMPMASK")
    if value is None:
        raise IllegalOperand("CMPMASK was never written on this core", op=op, operand="CMPMASK",
                             hint="run pto.ub.vcmp_* or pto.ub.mov_tensor_to_cmpmask first")
    return value


register(OpSpec(name="ub.mov_tensor_to_cmpmask", family="vector", pipe="V",
                operands=(Operand("src", "ptr", _UB, doc="16 bytes (2 x u64) of selection bits"),),
                clauses=(Clause("bits", "attr", values=CMPMASK_LOAD_BITS,
                                doc="bits loaded (default 128); 64: CMPMASK[63:0] from 8 bytes, the rest 0; "
                                    "256: 32 bytes, an 8-bit select's bits (`CMPMASK_B8_BITS`)"),),
                execute=_mov_to_cmpmask, doc="CMPMASK = 16 bytes at src (or its first 64 bits)"))
register(OpSpec(name="ub.mov_cmpmask_to_tensor", family="vector", pipe="V",
                operands=(Operand("dst", "ptr", _UB, doc="receives the 16 bytes of CMPMASK"),),
                execute=_mov_from_cmpmask, doc="16 bytes at dst = CMPMASK"))
EXPANDERS["ub.mov_tensor_to_cmpmask"] = lambda call: ["%cmpmask = pto.plds %src[%c0]    // 128 predicate bits"]
EXPANDERS["ub.mov_cmpmask_to_tensor"] = lambda call: ["pto.psts %cmpmask, %dst[%c0]    // 128 predicate bits"]


# ----------------------------------------------------------------------------- vsel


_SEL_MODES = {
    # name: (memory operands, roles, has scalar, tik mode)
    "vsel": (("dst", "src0", "src1"), ("w", "r", "r"), False, 0),
    "vsel_bits": (("dst", "sel", "src0", "src1"), ("w", "r", "r", "r"), False, 2),
    "vsel_scalar": (("dst", "sel", "src0"), ("w", "r", "r"), True, 1),
}


def _sel_op(name: str):
    mem, roles, has_scalar, mode = _SEL_MODES[name]
    op = "pto.ub." + name
    data = tuple(n for n in mem if n != "sel")

    def check(target, ptrs):
        for nm, p in zip(mem, ptrs):
            ve.check_ub(p, op=op, operand=nm)
        dts = tuple(p.dtype for nm, p in zip(mem, ptrs) if nm != "sel")
        _same(dts, data, op)
        vector_isa.require(target, "vsel", dts[0].name, op=op)
        if mode != 0 and vector_isa.family_of(target).startswith("v100"):
            from ..errors import UnsupportedOp
            raise UnsupportedOp(f"{target.label} supports only vsel mode 0 (selection bits from CMPMASK)", op=op,
                                hint="use pto.ub.mov_tensor_to_cmpmask + pto.ub.vsel, one repeat at a time")

    def verify(call, target):
        ptrs = call.operands[:len(mem)]
        if all(isinstance(p, Ptr) for p in ptrs):
            check(target, ptrs)

    def execute(ctx, *operands, mask=None, blk_stride=None, rep_stride=None, stride_unit=None):
        ptrs = operands[:len(mem)]
        check(ctx.target, ptrs)
        d = ptrs[0].dtype
        scalar = _scalar_value(operands[len(mem)], d, op=op) if has_scalar else None
        repeat = operands[-1]
        bits0 = None
        if mode == 0:
            par = ve.par_of(d)
            reg = cmpmask(ctx, op)
            bits0 = unpack_bits(reg, par)[None, :]

        def build():
            rep = ve.check_repeat(repeat, op=op)
            par = ve.par_of(d)
            clauses = {"mask": mask, "blk_stride": blk_stride, "rep_stride": rep_stride, "stride_unit": stride_unit}
            lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep, counter_ok=False, op=op)
            geo = ve.strides_from_clauses(clauses, data, (d,) * len(data), par, op=op)
            g = dict(zip(data, geo))
            streams = []
            for nm, role in zip(mem, roles):
                if nm == "sel":
                    streams.append(_bits_stream("sel", "r", rep, par))
                else:
                    b, r, u = g[nm]
                    streams.append(ve.vector_stream(nm, d, role, par=par, lanes=lanes, blk=b, rep=r, unit=u))
            return ve.Plan(lanes, tuple(streams))

        plan = _PLANS.get(_hashable((name, d.name, repeat, mask, blk_stride, rep_stride, stride_unit)), build)
        count = plan.lanes.count
        if mode == 0 and CMPMASK_UNSET_BITS_WARN and count > 8 * reg.size:
            _warn_unset_bits(ctx, op, 8 * reg.size, plan.lanes)

        def compute(ins, r0, r1):
            if mode == 0:
                bits = bits0[:, :count]
            else:
                bits = unpack_bits(np.ascontiguousarray(ins["sel"]), plan.lanes.par)[:, :count]
            other = np.broadcast_to(scalar, ins["src0"].shape) if has_scalar else ins["src1"]
            return {"dst": np.where(bits, ins["src0"], other)}

        ve.run(ctx, plan, ptrs, compute)

    def expand(call) -> list:
        src = call.operands[mem.index("src0")]
        d = ve.static_dtype(src)
        par = ve.par_of(d) if d is not None else 128
        repeat = call.operands[-1]
        head = [f"// {call.spec.asm_name} (TIK vsel mode {mode}): {repeat} repeats x {par} lanes"]
        head += ve.mask_text(call.clauses, par, 2048 // par)
        body = ["%a = pto.vlds %src0[%o_src0] {dist = \"NORM\"}"]
        if has_scalar:
            body.append("%b = pto.vdup %scalar, %mask")
        else:
            body.append("%b = pto.vlds %src1[%o_src1] {dist = \"NORM\"}")
        body.append("%p = pto.plds %sel[%r * " + str(par // 8) + "]" if mode else "%p = %cmpmask    // same bits "
                    "every repeat")
        body += ["%res = pto.vsel %a, %b, %p", "pto.vsts %res, %dst[%o_dst], %mask {dist = \"NORM\"}"]
        return ve.loop_text(repeat, body, head)

    operands = tuple(Operand(nm, "ptr", _UB, doc="selection bits" if nm == "sel" else nm) for nm in mem)
    if has_scalar:
        operands += (Operand("scalar", "scalar", doc="value where the bit is 0"),)
    operands += (Operand("repeat", "int", doc="repeats, 0..255"),)
    doc = {0: "dst = src0 where CMPMASK bit else src1 (same bits every repeat)",
           1: "dst = src0 where sel bit else scalar (bits consumed per repeat)",
           2: "dst = src0 where sel bit else src1 (bits consumed per repeat)"}[mode]
    register(OpSpec(name="ub." + name, family="vector", pipe="V", operands=operands,
                    clauses=(ve.mask_clauses()[0],) + ve.stride_clauses(data), execute=execute, verify=verify,
                    doc=doc))
    EXPANDERS["ub." + name] = expand


for _n in _SEL_MODES:
    _sel_op(_n)
del _n
