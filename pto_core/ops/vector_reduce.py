"""Reductions: ``pto.ub.vcadd / vcmax / vcmin / vcgadd / vcgmax / vcgmin / vcpadd`` and the TIK
``vec_reduce_add / vec_reduce_max / vec_reduce_min`` macros (``pto.ub.reduce_add`` ...).

Per repeat (``PAR`` source lanes, mask applied to the source; inactive lanes count as 0
for sums and are ignored by max/min; a block or pair with no active lane is not written:
`GROUP_REDUCE_SKIPS_EMPTY_BLOCKS`, `PAIR_REDUCE_SKIPS_EMPTY_PAIRS`):

==========  ==========================================  ======================  =============
op          results per repeat                          dst repeat-stride unit  dst alignment
==========  ==========================================  ======================  =============
vcadd       1: sum of the lanes                         1 element               element size
vcmax/min   2: value, lane index (integer bits in the   2 elements              4 B
            dst type: u16 for f16, u32 for f32)
vcgadd      8: sum of each 32 B block                   8 elements              16 B
vcgmax/min  8: max/min of each 32 B block               8 elements              16 B
vcpadd      PAR/2: ``src[2i] + src[2i+1]``              PAR/2 elements (128 B;  32 B
                                                        0 is treated as 1)
==========  ==========================================  ======================  =============

Accumulation order (tik_api.md §13.3 is open; one named choice): sums are a *pairwise
tree* over adjacent lanes, ``((x0+x1)+(x2+x3))+...``, each addition rounded to the
element type (f16 additions computed in f32 and rounded to f16). So ``vcgadd`` equals
the first ``log2(E)`` levels of ``vcadd`` and ``vcpadd`` its first level; ``vcadd`` of a
full repeat is the tree over the 8 block sums of ``vcgadd``. Max/min ties return the
lowest lane index (-0 and +0 tie); a NaN lane wins (the first NaN, for max and for min;
block max/min propagate NaN and return +0 (max) or -0 (min) when both zeros occur).

``reduce_add`` (vec_reduce_add): pass 1 is ``vcadd`` per repeat, written to
``work[0:repeat]``; then passes of ``vcadd`` over ``PAR`` consecutive partial sums (the
last chunk masked to the remainder) until one value remains, which goes to ``dst[0]``;
each pass overwrites ``work[0:n]``. This is TIK's own lowering, so the rounding of every
intermediate sum matches it. On A2-class chips (``v220``) TIK documents another order:
the per-repeat sums are added in order within groups of 255 repeats, then the group sums
pairwise (`sequential_chunk_sum`). ``reduce_max/min``: ``dst[0]`` = extremum of all active
lanes, ``dst[1]`` = its logical index ``repeat*PAR + lane`` (as integer bits) when
``cal_index``; ties return the lowest index; ``work[0:2*repeat]`` receives the per-repeat
(value, index) pairs of pass 1.
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..dtypes import DType
from ..errors import IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_elementwise import _hashable

EXPANDERS: dict = {}
_PLANS = ve.PlanCache()
_UB = ("ub",)

# name -> (kind, results per repeat as a function of PAR, dst alignment bytes, vreg op)
_REDUCE = {
    "vcadd": ("sum", lambda par: 1, 0, "pto.vcadd"),
    "vcmax": ("argmax", lambda par: 2, 4, "pto.vcmax"),
    "vcmin": ("argmin", lambda par: 2, 4, "pto.vcmin"),
    "vcgadd": ("gsum", lambda par: 8, 16, "pto.vcgadd"),
    "vcgmax": ("gmax", lambda par: 8, 16, "pto.vcgmax"),
    "vcgmin": ("gmin", lambda par: 8, 16, "pto.vcgmin"),
    "vcpadd": ("psum", lambda par: par // 2, 32, "pto.vcpadd"),
}


#: Named choice: ``vcgadd`` / ``vcgmax`` / ``vcgmin`` do not write the result of a 32 B block whose
#: lanes are all masked off (the destination element keeps its value). Sources: the CCE intrinsic page
#: for vcgadd/vcgmax/vcgmin (cceapi_0035, CANN 8.5: "if the mask of a block/group is all 0, the interface
#: does not write the corresponding destination element") and Huawei's CPU model of the v100 intrinsics
#: (``aicore_fast_sim``, 2019: its group-reduce template stores a block's result only when a lane of it
#: is active). Up to this release such blocks were written as 0. (A whole repeat without an active lane
#: cannot occur: an all-zero mask is rejected and reductions have no counter mode.)
GROUP_REDUCE_SKIPS_EMPTY_BLOCKS = True

#: Named choice: ``vcpadd`` (``vec_cpadd``) does not write the sum of a lane pair whose two lanes are both
#: masked off (the destination element keeps its value), by the rule the sources state for the other
#: reductions: a result is written only when a lane it reduces is active (``vcgadd``/``vcgmax``/``vcgmin``:
#: cceapi_0035 and `GROUP_REDUCE_SKIPS_EMPTY_BLOCKS`; ``vcadd`` in Huawei's CPU model ``aicore_fast_sim``).
#: The vcpadd pages (CCE cceapi_0036, TIK, Ascend C PairReduceSum) only say the mask selects the lanes that
#: take part. CANN's shipped DeePMD ``prod_force_se_a`` relies on it: with 138 neighbours its tail row's
#: ``vcpadd`` (mask 20) would otherwise overwrite the first 16 neighbours of the next atom's row with zeros.
#: Up to this release such pairs were written as 0.
PAIR_REDUCE_SKIPS_EMPTY_PAIRS = True


def _written_blocks(kind: str, lanes, par: int, d: DType):
    """Destination mask ``(1 | repeat, results)`` of a block or pair reduction: results with an active lane
    (None: all)."""
    if kind == "psum":
        if not PAIR_REDUCE_SKIPS_EMPTY_PAIRS:
            return None
        e = 2
    elif kind not in ("gsum", "gmax", "gmin") or not GROUP_REDUCE_SKIPS_EMPTY_BLOCKS:
        return None
    else:
        e = ve.BLOCK_BYTES // d.itemsize
    m = lanes.mask
    full = np.zeros((1 if m is None else m.shape[0], par), dtype=bool)
    full[:, :lanes.count] = True if m is None else m[:, :lanes.count]
    blocks = full.reshape(full.shape[0], par // e, e).any(axis=-1)
    return None if blocks.all() else blocks


def _index_dtype(d: DType) -> np.dtype:
    return np.dtype(np.uint16) if d.itemsize == 2 else np.dtype(np.uint32)


def tree_sum(x: np.ndarray, d: DType, ctx) -> np.ndarray:
    """Pairwise adjacent-lane sums over the last axis (a power of two long), each level rounded to ``d``."""
    acc = x.astype(np.float32)
    while acc.shape[-1] > 1:
        pair = acc[..., 0::2] + acc[..., 1::2]
        acc = ve.round_float(pair, d, ctx).astype(np.float32)
    return acc[..., 0]


def _padded(vals: np.ndarray, active, par: int, fill) -> np.ndarray:
    """``(r, par)`` float32 lanes with inactive lanes (and lanes beyond the touched ones) set to ``fill``."""
    r, count = vals.shape
    out = np.full((r, par), fill, dtype=np.float32)
    out[:, :count] = vals.astype(np.float32)
    if active is not None:
        out[:, :count] = np.where(active, out[:, :count], np.float32(fill))
    return out


def _active_full(active, r: int, count: int, par: int) -> np.ndarray:
    a = np.zeros((r, par), dtype=bool)
    a[:, :count] = True if active is None else active
    return a


def reduce_repeat(kind: str, vals: np.ndarray, active, d: DType, par: int, ctx) -> np.ndarray:
    """Results ``(r, k)`` in the storage dtype of ``d`` for lane values ``vals`` ``(r, count)``."""
    r = vals.shape[0]
    e = ve.BLOCK_BYTES // d.itemsize
    if kind == "sum":
        return tree_sum(_padded(vals, active, par, 0.0), d, ctx)[:, None].astype(d.storage)
    if kind == "gsum":
        x = _padded(vals, active, par, 0.0).reshape(r, par // e, e)
        return tree_sum(x, d, ctx).astype(d.storage)
    if kind == "psum":
        x = _padded(vals, active, par, 0.0)
        return ve.round_float(x[:, 0::2] + x[:, 1::2], d, ctx).astype(d.storage)
    act = _active_full(active, r, vals.shape[1], par)
    big = np.float32(np.inf)
    fill = -big if kind in ("argmax", "gmax") else big
    x = _padded(vals, active, par, fill)
    if kind in ("gmax", "gmin"):
        xb = x.reshape(r, par // e, e)
        any_active = act.reshape(r, par // e, e).any(axis=-1)
        # reduce over the block's e lanes with the lanes as rows of a transposed copy: numpy reduces
        # a long contiguous axis many times faster than many 16-element ones (same values, NaN included)
        lanes = np.ascontiguousarray(xb.reshape(-1, e).T)
        res = (lanes.max(axis=0) if kind == "gmax" else lanes.min(axis=0)).reshape(xb.shape[:-1])
        if (res == 0).any():
            # the sign of a zero result must not depend on numpy's reduction order: max prefers +0, min -0
            zero_of = (xb == 0) & (np.signbit(xb) if kind == "gmin" else ~np.signbit(xb))
            signed = np.where(zero_of.any(axis=-1), 0.0 if kind == "gmax" else -0.0,
                              -0.0 if kind == "gmax" else 0.0)
            res = np.where(res == 0, signed.astype(np.float32), res)
        return np.where(any_active, res, 0).astype(d.storage)
    idx = arg_extreme(x, act, kind == "argmax")
    any_active = act.any(axis=1)
    val = np.where(any_active, x[np.arange(r), idx], 0).astype(d.storage)
    idx = np.where(any_active, idx, 0).astype(_index_dtype(d)).view(d.storage)
    return np.stack([val, idx], axis=1)


def arg_extreme(x: np.ndarray, act: np.ndarray, largest: bool) -> np.ndarray:
    """Per row, the lowest active lane holding the max (min); a NaN lane wins. Inactive lanes hold -inf (+inf)."""
    idx = np.argmax(x, axis=1) if largest else np.argmin(x, axis=1)
    fill = -np.inf if largest else np.inf
    at_fill = x[np.arange(x.shape[0]), idx] == fill
    if at_fill.any():   # the extreme equals the padding value: take the first *active* lane with it
        first = np.argmax(act & (x == fill), axis=1)
        idx = np.where(at_fill, first, idx)
    return idx


def _check_src_dst(ctx_target, name: str, dst: Ptr, src: Ptr, op: str, align: int) -> None:
    ve.check_ub(src, op=op, operand="src")
    ve.check_ub(dst, op=op, operand="dst", align=align or dst.dtype.itemsize)
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="dst", value=dst.dtype.name, limit=src.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(ctx_target, name, src.dtype.name, op=op)


def _verify(name):
    align = _REDUCE[name][2]

    def verify(call, target):
        dst, src = call.operands[0], call.operands[1]
        if isinstance(dst, Ptr) and isinstance(src, Ptr):
            _check_src_dst(target, name, dst, src, call.spec.asm_name, align)
    return verify


def _plan(name: str, d: DType, repeat, mask, blk_stride, rep_stride, stride_unit, op: str) -> "ve.Plan":
    """The plan of one per-repeat reduction from the plan cache (made on a miss, which range-checks the repeat
    and clauses): called per op by `execute`, and once per target and repeat value by a bound op (`_bind`)."""
    kind, nres, _, _ = _REDUCE[name]

    def build():
        rep = ve.check_repeat(repeat, op=op)
        par = ve.par_of(d)
        k = nres(par)
        clauses = {"mask": mask, "blk_stride": blk_stride, "stride_unit": stride_unit,
                   "rep_stride": None if rep_stride is None else ((rep_stride[0][1],), {})}
        lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep, counter_ok=False, op=op)
        (b, r, u), = ve.strides_from_clauses(clauses, ("src",), (d,), par, op=op, blk_max=65535,
                                             rep_max=65535)
        dst_rep = 1 if rep_stride is None else ve.check_range(rep_stride[0][0], 0, 65535, op=op,
                                                               operand="rep_stride(dst)")
        if name == "vcpadd" and dst_rep == 0:
            dst_rep = 1
        written = _written_blocks(kind, lanes, par, d)
        kw = k if written is None else int(np.flatnonzero(written.any(axis=0))[-1]) + 1
        if written is not None and written[:, :kw].all():
            written = None
        elif written is not None:
            written = written[:, :kw]
        # the dst stream ends at the last result written (as a lanewise op's ends at its last active block):
        # results past it are not written, so they are neither accessed (hazards, bounds) nor marked
        dst_lanes = ve.Lanes(rep, kw, written, k)
        src_s = ve.vector_stream("src", d, "r", par=par, lanes=lanes, blk=b, rep=r, unit=u)
        dst_s = ve.Stream("dst", d, (rep, 1, kw), (dst_rep * k * d.itemsize, kw * d.itemsize, d.itemsize), "w")
        return ve.Plan(lanes, (dst_s, src_s), (("dst", dst_lanes),))

    # the named choices are part of the key: a plan made under one setting is not reused under the other
    return _PLANS.get(_hashable((name, d.name, repeat, mask, blk_stride, rep_stride, stride_unit,
                                 GROUP_REDUCE_SKIPS_EMPTY_BLOCKS, PAIR_REDUCE_SKIPS_EMPTY_PAIRS)), build)


def _run(name: str, ctx, plan, dst: Ptr, src: Ptr) -> None:
    """Execute a prepared per-repeat reduction (`execute` and the bound op share it)."""
    kind = _REDUCE[name][0]
    d = src.dtype
    par = plan.lanes.par

    def compute(ins, r0, r1):
        return {"dst": reduce_repeat(kind, ins["src"], plan.lanes.rows(r0, r1), d, par, ctx)}

    ve.run(ctx, plan, (dst, src), compute)


def _execute(name):
    align = _REDUCE[name][2]
    op = "pto.ub." + name

    def execute(ctx, dst, src, repeat, *, mask=None, blk_stride=None, rep_stride=None, stride_unit=None):
        _check_src_dst(ctx.target, name, dst, src, op, align)
        plan = _plan(name, src.dtype, repeat, mask, blk_stride, rep_stride, stride_unit, op)
        _run(name, ctx, plan, dst, src)
    return execute


#: a compiled program binds the reductions (``vcadd`` ... ``vcpadd`` and the ``reduce_add/max/min`` macros)
#: like the lanewise ops (`vector_elementwise.VECTOR_BIND`): operand checks, dtype legality and the plan
#: are made once per target (`OpSpec.bind`), with run-time pointers or repeat counts once per target and
#: pointer dtypes, the plan once per repeat value (`OpSpec.bind_holes`); the address checks of run-time
#: pointers (space, alignment, the macros' work/dst overlap), bounds, hazards and initialisation run on
#: every op. The same functions as the general path raise the same errors at the same op. False: every
#: reduction takes the general path (`execute`).
REDUCE_BIND = True


def _binder(op: str, nptr: int, check_order: tuple, prepare, plan_for, address, run):
    """``(bind, bind_holes)`` hooks of a reduction. ``prepare(target, operands, clauses) -> state`` does every
    check that needs no address beyond the compile-time pointers' (the general path's order; None is never
    returned); ``plan_for(state, repeat) -> plan`` the repeat-dependent part (range checks included);
    ``address(ptrs, state, plan)`` the checks on the pointers' addresses made after the plan (the macros'
    overlap); ``run(ctx, ptrs, state, plan)`` the work. ``check_order``: (operand index, operand name, align
    or None for the state's) in the order the general path checks the pointers (`ve.check_ub`)."""
    check_ub = ve.check_ub
    ridx = nptr

    def bind(args, clauses):
        if not REDUCE_BIND:
            return None
        ptrs = tuple(args[:nptr])
        memo = [None, None, None]          # target, state, plan

        def fn(ctx):
            target = ctx.target
            if target is not memo[0]:
                state = prepare(target, args, clauses)
                plan = plan_for(state, args[ridx])
                address(ptrs, state, plan)
                memo[1], memo[2], memo[0] = state, plan, target
            run(ctx, ptrs, memo[1], memo[2])
        return fn

    def bind_holes(args, indices, clauses):
        if not REDUCE_BIND or any(i > ridx for i in indices):
            return None
        rpos = indices.index(ridx) if ridx in indices else None
        # the run-time pointers' checks, in the general path's order: (position among the values, name, align)
        checks = tuple((indices.index(i), nm, al) for i, nm, al in check_order if i in indices)
        pos = tuple(indices.index(i) if i in indices else None for i in range(nptr))
        memo = [None, None, None, None, None]     # target, hole dtypes, state, constant-repeat plan, plans by repeat

        def fn(ctx, *values):
            ptrs = tuple([args[i] if j is None else values[j] for i, j in enumerate(pos)])
            dts = tuple([ptrs[i].dtype if isinstance(ptrs[i], Ptr) else None for i in range(nptr)])
            target = ctx.target
            repeat = args[ridx] if rpos is None else values[rpos]
            if target is not memo[0] or dts != memo[1]:
                # first op, another target or pointer dtype: the whole preparation, every check in order
                operands = list(args)
                for i, v in zip(indices, values):
                    operands[i] = v
                memo[0] = None
                state = prepare(target, operands, clauses)
                plan = plan_for(state, repeat)
                memo[2], memo[3], memo[4] = state, (plan if rpos is None else None), {}
                if rpos is not None and type(repeat) is int:
                    memo[4][repeat] = plan
                memo[0], memo[1] = target, dts
            else:
                state = memo[2]
                for j, nm, al in checks:          # address-dependent checks of the run-time pointers, every op
                    check_ub(values[j], op=op, operand=nm, align=al or state[0])
                if rpos is None:
                    plan = memo[3]
                elif type(repeat) is int:
                    plan = memo[4].get(repeat)
                    if plan is None:
                        plan = memo[4][repeat] = plan_for(state, repeat)
                else:                             # numpy ints, floats, bools: the general checks every time
                    plan = plan_for(state, repeat)
            address(ptrs, state, plan)
            run(ctx, ptrs, state, plan)
        return fn
    return bind, bind_holes


def _no_address_checks(ptrs, state, plan) -> None:
    return None


def _bind(name):
    align = _REDUCE[name][2]
    op = "pto.ub." + name

    def prepare(target, operands, clauses):
        dst, src = operands[0], operands[1]
        _check_src_dst(target, name, dst, src, op, align)
        geo = tuple(clauses.get(k) for k in ("mask", "blk_stride", "rep_stride", "stride_unit"))
        return (align or dst.dtype.itemsize, src.dtype, geo)

    def plan_for(state, repeat):
        return _plan(name, state[1], repeat, *state[2], op)

    def run(ctx, ptrs, state, plan):
        _run(name, ctx, plan, ptrs[0], ptrs[1])

    return _binder(op, 2, ((1, "src", ve.BLOCK_BYTES), (0, "dst", None)), prepare, plan_for, _no_address_checks,
                   run)


def _expand(name):
    kind, nres, _, vreg = _REDUCE[name]

    def expand(call) -> list:
        src = call.operands[1]
        d = ve.static_dtype(src)
        par = ve.par_of(d) if d is not None else 128
        repeat = call.operands[2]
        k = nres(par)
        lines = [f"// {call.spec.asm_name}: {repeat} repeats, {k} result(s) per repeat; the tree order is the "
                 f"documented model"]
        lines += ve.mask_text(call.clauses, par, 2048 // par)
        rep = ve.clause_args(call.clauses, "rep_stride") or (1, 8)
        blk = (ve.clause_args(call.clauses, "blk_stride") or (1,))[0]
        body = [f"%o_src = arith.muli %r, %c{rep[1] * 32 if isinstance(rep[1], int) else rep[1]} : index",
                ve.load_text("%v", "%src", d, par, "%o_src", blk, 0) if d is not None else "%v = pto.vlds %src",
                f"%res = {vreg} %v, %mask",
                (f"%o_dst = arith.muli %r, %c{rep[0] * k * d.itemsize} : index    // bytes"
                 if isinstance(rep[0], int) and d is not None else f"%o_dst = %r * {rep[0]} * {k} elements"),
                f"pto.vsts %res, %dst[%o_dst], %first{k} {{dist = \"NORM_B{d.bits if d else 16}\"}}    "
                f"// the {k} low result lane(s)"]
        return ve.loop_text(repeat, body, lines)
    return expand


for _name, (_kind, _n, _align, _vreg) in _REDUCE.items():
    _hooks = _bind(_name)
    _spec = OpSpec(
        name="ub." + _name, family="vector", pipe="V",
        operands=(Operand("dst", "ptr", _UB, doc="results"), Operand("src", "ptr", _UB, doc="source"),
                  Operand("repeat", "int", doc="repeats, 0..255")),
        clauses=(ve.mask_clauses()[0],
                 Clause("blk_stride", "args", params=("%src",), min_params=1,
                        doc="source block stride (32 B units, default 1)"),
                 Clause("rep_stride", "args", params=("%dst", "%src"), min_params=2,
                        doc="dst repeat stride in result units (see table), src repeat stride in 32 B"),
                 ve.stride_clauses(("src",))[-1]),
        execute=_execute(_name), verify=_verify(_name), bind=_hooks[0], bind_holes=_hooks[1],
        doc={"vcadd": "per repeat: sum of the active lanes", "vcmax": "per repeat: max and its lane index",
             "vcmin": "per repeat: min and its lane index", "vcgadd": "per repeat: sum of each 32 B block",
             "vcgmax": "per repeat: max of each 32 B block", "vcgmin": "per repeat: min of each 32 B block",
             "vcpadd": "per repeat: sums of adjacent lane pairs"}[_name])
    register(_spec)
    EXPANDERS[_spec.name] = _expand(_name)
del _name, _kind, _n, _align, _vreg, _spec, _hooks


# ----------------------------------------------------------------------------- vec_reduce_* macros

MAX_REDUCE_REPEAT = 4095
_INDEX_REPEAT_LIMIT = {"f16": 511, "f32": 4095}
#: chips whose vec_reduce_add adds the per-repeat sums in order within groups of 255 repeats
#: (TIK vec_reduce_add doc, "Atlas A2 ..." note: "每255个范围内的repeat结果按照顺序相加，最后将多个255个repeat
#: 结果之和两两相加"); other chips add them pairwise.
SEQUENTIAL_REDUCE_FAMILIES = frozenset({"v220"})
SEQUENTIAL_GROUP = 255


def sequential_chunk_sum(part: np.ndarray, d: DType, ctx) -> np.ndarray:
    """A2-class vec_reduce_add over per-repeat sums ``part``: in-order sums of groups of 255 (each addition
    rounded to ``d``), then a pairwise tree over the group sums; returns a 0-d storage array."""
    groups = []
    for g in range(0, part.shape[0], SEQUENTIAL_GROUP):
        chunk = part[g:g + SEQUENTIAL_GROUP].astype(np.float32)
        acc = chunk[0]
        for v in chunk[1:]:                      # at most 254 scalar additions per group
            acc = ve.round_float(np.float32(acc + v), d, ctx).astype(np.float32)
        groups.append(acc)
    width = 1 << (len(groups) - 1).bit_length()
    buf = np.zeros((1, width), dtype=np.float32)
    buf[0, :len(groups)] = groups
    return tree_sum(buf, d, ctx).astype(d.storage)[0]


def _macro_verify(kind):
    def verify(call, target):
        dst, src, work = call.operands[:3]
        if all(isinstance(p, Ptr) for p in (dst, src, work)):
            _macro_check(target, kind, dst, src, work, call.spec.asm_name)
    return verify


def _macro_check(target, kind, dst, src, work, op):
    ve.check_ub(src, op=op, operand="src")
    ve.check_ub(dst, op=op, operand="dst", align=4 if kind != "add" else dst.dtype.itemsize)
    ve.check_ub(work, op=op, operand="work", align=dst.dtype.itemsize)
    for nm, p in (("dst", dst), ("work", work)):
        if p.dtype is not src.dtype:
            raise IllegalOperand(f"{nm} dtype {p.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                                 operand=nm, value=p.dtype.name, limit=src.dtype.name,
                                 hint="use operands of one element type (convert with pto.ub.vconv first)")
    instr = {"add": "vcadd", "max": "vcmax", "min": "vcmin"}[kind]
    vector_isa.require(target, instr, src.dtype.name, op=op)


def _macro_plan(kind: str, d: DType, repeat, mask, rep_stride, cal_index, op: str) -> tuple:
    """The repeat-dependent preparation of a ``reduce_*`` macro, with its range checks in the general path's
    order: ``(rep, par, lanes, stream, active lanes, work elements)``. `execute` calls it per op, a bound op
    once per target and repeat value."""
    rep = ve.check_range(repeat, 1, MAX_REDUCE_REPEAT, op=op, operand="repeat",
                         hint="vec_reduce_* takes 1..4095 repeats")
    if cal_index:
        lim = _INDEX_REPEAT_LIMIT.get(d.name, 255)
        ve.check_range(rep, 1, lim, op=op, operand="repeat",
                       hint=f"with cal_index the index must fit the {d.name} bits: at most {lim} repeats")
    par = ve.par_of(d)
    clauses = {"mask": mask, "rep_stride": None if rep_stride is None else ((rep_stride[0][0],), {})}
    lanes = ve.lanes_from_clauses(clauses, par=par, repeat=rep, counter_ok=False, op=op)
    (b, r, u), = ve.strides_from_clauses(clauses, ("src",), (d,), par, op=op, rep_max=65535)
    s = ve.vector_stream("src", d, "r", par=par, lanes=lanes, blk=b, rep=r, unit=u)
    nwork = rep if kind == "add" else 2 * rep
    act = lanes.padded(0, rep, s.lanes)
    if act is not None:
        act = act.reshape((-1,) + s.shape[1:])
    return rep, par, lanes, s, act, nwork


def _macro_execute(kind):
    op = f"pto.ub.reduce_{kind}"

    def execute(ctx, dst, src, work, repeat, *, mask=None, rep_stride=None, cal_index=None):
        _macro_check(ctx.target, kind, dst, src, work, op)
        mp = _macro_plan(kind, src.dtype, repeat, mask, rep_stride, cal_index, op)
        _no_overlap(dst, 2 if cal_index else 1, work, mp[5], op)
        _macro_run(ctx, kind, mp, dst, src, work, cal_index)
    return execute


def _macro_run(ctx, kind: str, mp: tuple, dst: Ptr, src: Ptr, work: Ptr, cal_index) -> None:
    """Execute a prepared ``reduce_*`` macro (`execute` and the bound op share it)."""
    with np.errstate(all="ignore"):
        _macro_body(ctx, kind, mp, dst, src, work, cal_index)


def _macro_body(ctx, kind, mp, dst, src, work, cal_index):
    rep, par, lanes, s, act, nwork = mp
    d = src.dtype
    v = ctx.strided_view(src, s.shape, s.strides, dtype=d, operand="src", active=act)
    vals = v.reshape(rep, s.lanes)[:, :lanes.count]
    active = lanes.rows(0, rep)
    # both destinations are taken (bounds, hazards) before either is written: a refused dst leaves %work as it
    # was (pto_api.md "A refused op changes nothing"), with no undo journal on this common op
    wv = _write_view(ctx, work, nwork, "work")
    dv = _write_view(ctx, dst, 2 if cal_index and kind != "add" else 1, "dst")
    if kind == "add":
        part = reduce_repeat("sum", vals, active, d, par, ctx)[:, 0]
        wv[:rep] = part
        if vector_isa.base_family(ctx.target) in SEQUENTIAL_REDUCE_FAMILIES and rep > 1:
            dv[:1] = sequential_chunk_sum(part, d, ctx)[None]
            return
        n = rep
        while n > 1:
            chunks = -(-n // par)
            buf = np.zeros((chunks, par), dtype=np.float32)
            buf.reshape(-1)[:n] = part.astype(np.float32)
            part = tree_sum(buf, d, ctx).astype(d.storage)
            n = chunks
            if n > 1:
                wv[:part.shape[0]] = part
        dv[:1] = part[:1]
        return
    pairs = reduce_repeat("argmax" if kind == "max" else "argmin", vals, active, d, par, ctx)
    flat = pairs.reshape(-1)
    wv[:flat.shape[0]] = flat
    if rep == 1:        # one repeat: its (value, lane) pair is the result (the lane is the logical index)
        out = pairs[0, :2 if cal_index else 1]
        dv[:out.shape[0]] = out
        return
    x = _padded(vals, active, par, -np.inf if kind == "max" else np.inf).reshape(1, -1)
    flat_active = _active_full(active, rep, vals.shape[1], par).reshape(1, -1)
    i = int(arg_extreme(x, flat_active, kind == "max")[0])
    x = x[0]
    out = np.array([x[i]], dtype=np.float32).astype(d.storage)
    if cal_index:
        out = np.concatenate([out, np.array([i], dtype=_index_dtype(d)).view(d.storage)])
    dv[:out.shape[0]] = out


def _macro_bind(kind):
    op = f"pto.ub.reduce_{kind}"

    def prepare(target, operands, clauses):
        dst, src, work = operands[:3]
        _macro_check(target, kind, dst, src, work, op)
        return (src.dtype.itemsize, src.dtype, clauses.get("mask"), clauses.get("rep_stride"), clauses.get("cal_index"))

    def plan_for(state, repeat):
        return _macro_plan(kind, state[1], repeat, state[2], state[3], state[4], op)

    def address(ptrs, state, mp):
        _no_overlap(ptrs[0], 2 if state[4] else 1, ptrs[2], mp[5], op)

    def run(ctx, ptrs, state, mp):
        _macro_run(ctx, kind, mp, ptrs[0], ptrs[1], ptrs[2], state[4])

    # `_macro_check`'s order: src (32 B), dst (4 B, or the element for reduce_add), work (the element)
    order = ((1, "src", ve.BLOCK_BYTES), (0, "dst", 4 if kind != "add" else None), (2, "work", None))
    return _binder(op, 3, order, prepare, plan_for, address, run)


def _no_overlap(dst: Ptr, ndst: int, work: Ptr, nwork: int, op: str) -> None:
    if dst.space != work.space or dst.sub != work.sub:
        return
    a0, a1 = dst.addr, dst.addr + ndst * dst.dtype.itemsize
    b0, b1 = work.addr, work.addr + nwork * work.dtype.itemsize
    if a0 < b1 and b0 < a1:
        raise IllegalOperand(f"work [{b0:#x}, {b1:#x}) overlaps dst [{a0:#x}, {a1:#x})", op=op, operand="work",
                             hint="give the work tensor its own UB space")


def _write_view(ctx, ptr: Ptr, n: int, operand: str) -> np.ndarray:
    """The writable view of ``n`` elements at ``ptr`` (marked written, checked for bounds and hazards)."""
    return ctx.strided_view(ptr, (n,), (ptr.dtype.itemsize,), dtype=ptr.dtype, write=True, operand=operand)


def _macro_expand(kind):
    def expand(call) -> list:
        instr = {"add": "vcadd", "max": "vcmax", "min": "vcmin"}[kind]
        return [f"// {call.spec.asm_name}: TIK vec_reduce_{kind} = pto.ub.{instr} over the repeats into %work, "
                f"then pto.ub.{instr} passes over the partial results until one remains",
                f"pto.ub.{instr} %work, %src, %repeat    // pass 1",
                f"pto.ub.{instr} %work, %work, %ceil(n/PAR) mask(%tail)    // repeated while n > 1",
                "pto.ub.vector_dup / copy of the last result into %dst"]
    return expand


for _kind in ("add", "max", "min"):
    _cl = (ve.mask_clauses()[0], Clause("rep_stride", "args", params=("%src",), min_params=1,
                                        doc="source repeat stride (32 B units, default 8)"))
    if _kind != "add":
        _cl += (Clause("cal_index", "flag", doc="also store the index of the extremum in dst[1] (integer bits)"),)
    _hooks = _macro_bind(_kind)
    register(OpSpec(
        name=f"ub.reduce_{_kind}", family="vector", pipe="V",
        operands=(Operand("dst", "ptr", _UB, doc="result (1 element, 2 with cal_index)"),
                  Operand("src", "ptr", _UB, doc="source"),
                  Operand("work", "ptr", _UB, doc="scratch for the partial results"),
                  Operand("repeat", "int", doc="repeats, 1..4095")),
        clauses=_cl, execute=_macro_execute(_kind), verify=_macro_verify(_kind),
        bind=_hooks[0], bind_holes=_hooks[1],
        doc=f"TIK vec_reduce_{_kind}: reduce all active lanes of all repeats to dst[0]"))
    EXPANDERS[f"ub.reduce_{_kind}"] = _macro_expand(_kind)
del _kind, _cl, _hooks
