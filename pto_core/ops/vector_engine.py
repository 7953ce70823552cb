"""Descriptor engine shared by every repeat-form vector op (``pto.ub.*``).

Execution model (tik_api.md §9.1): one op runs ``repeat`` repeats; in each repeat every
operand touches up to 8 blocks of 32 B. ``PAR = 256 / max(itemsize over operands)``
lanes per repeat; lane ``e`` of repeat ``r`` of an operand with ``E = 32 / itemsize``
elements per block lives at

* ``stride_unit`` 0 (default): byte ``r*rep*32 + (e//E)*blk*32 + (e%E)*size``
  (a *destination* block stride of 0 acts as 1: `DST_BLOCK_STRIDE_ZERO_IS_ONE`)
* ``stride_unit`` 1: like 0 but ``rep`` is the *gap* in blocks after the last block of
  the previous repeat: repeat ``r`` starts at ``r*((nblk-1)*blk + 1 + rep)*32``
* ``stride_unit`` 2: ``blk`` is a gap and ``rep`` a stride, both in *elements*:
  ``r*rep*size + (e//E)*(E+blk)*size + (e%E)*size``
* ``stride_unit`` 3: both gaps in elements: repeat ``r`` starts at
  ``r*(nblk*E + (nblk-1)*blk + rep)*size``

(``nblk`` = blocks the operand touches per full repeat, ``PAR*size/32``; the unit 1/3
repeat length uses it, TIK's extent formula uses 8, the same for full-width operands.)

Every operand is therefore an affine 3-D pattern ``(repeat, nblk, E)`` with byte
strides, read and written as ``numpy`` strided views (`ExecContext.strided_view`),
never with a Python loop per repeat. Masks are boolean lane arrays. Only the blocks up
to the last active lane are touched (masked-off trailing blocks are not accessed).

Ordering ("in order, repeat by repeat", reading all sources of a repeat before writing
its destination) is preserved exactly:

* if no written operand overlaps a read operand in memory, all repeats run as one array
  operation;
* otherwise the repeats are split into the fewest chunks such that no repeat reads bytes
  an earlier repeat of its chunk wrote (computed once per geometry and cached), and the
  chunks run in order;
* a destination pattern that writes the same element more than once (zero or small
  strides) stores lanes in repeat, block, lane order, so the last writer wins.

Masked-off destination lanes are never written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Optional

import numpy as np

from ..dtypes import DType
from ..errors import IllegalOperand, Misaligned
from ..scalars import reject_undefined
from ..memory import Ptr, is_dense
from ..numerics.floats import to_f16
from .registry import Clause

BLOCK_BYTES = 32
BLOCKS_PER_REPEAT = 8
REPEAT_BYTES = 256
MAX_REPEAT = 255
MAX_COUNTER = 2 ** 32 - 1
STRIDE_UNITS = (0, 1, 2, 3)

#: Named choice: a destination (written) operand's block stride of 0 acts as 1 under
#: ``stride_unit`` 0 and 1, where ``blk`` is a stride in blocks (under 2 and 3 it is a gap, and
#: 0 means contiguous anyway). Source block strides of 0 stay literal (every block of a repeat
#: reads the same 32 B: the broadcast idiom). The CCE intrinsic pages give the range
#: ``[0, 2**16-1]`` and nothing else; the rule comes from Huawei's own code: TIK's front end
#: checks a ``dst_blk_stride`` of 0 with ``_MIN_DST_BLK_STRIDE = 1`` (tik_vector_api.py, the
#: overlap and tensor-overflow checks), Huawei's CPU model of the CCE intrinsics
#: (``aicore_fast_sim``) sets ``dst_stride_m0 = 1`` when it is 0 in its unary, binary,
#: scalar-operand and duplicate templates, and CANN roi_pooling and masked_fill_range call
#: ``vector_dup`` with block stride 0 expecting all 8 blocks filled (tik_vector.md §3).
DST_BLOCK_STRIDE_ZERO_IS_ONE = True

# ----------------------------------------------------------------------------- clauses


def mask_clauses() -> tuple:
    """``mask`` (count or bits) and ``counter`` clauses, mutually exclusive (group ``mask``)."""
    return (
        Clause("mask", "args", group="mask", params=("%m0", "%m1", "%m2", "%m3"), min_params=1,
               doc="one value: contiguous count N (lanes 0..N-1); two: [hi64, lo64] lane bits; four: 256 lane "
                   "bits of an 8-bit op, highest word first. Omitted: all lanes."),
        Clause("counter", "args", group="mask", params=("%count",),
               doc="counter mode: process %count elements in total; repeat = ceil(count/PAR), the repeat operand "
                   "is ignored; 0 is a no-op (Ascend310/910: treated as a normal-mode count)"),
    )


def stride_clauses(names: tuple, *, unit: bool = True, blk: bool = True) -> tuple:
    """``blk_stride(%dst, %src...)``, ``rep_stride(...)`` and ``stride_unit(%u)`` clauses."""
    params = tuple("%" + n for n in names)
    out = []
    if blk:
        out.append(Clause("blk_stride", "args", params=params, min_params=len(params),
                          doc="block stride per operand (32 B units; default 1 = contiguous blocks)"))
    out.append(Clause("rep_stride", "args", params=params, min_params=len(params),
                      doc="repeat stride per operand (32 B units, head to head; default: contiguous repeats)"))
    if unit:
        out.append(Clause("stride_unit", "args", params=("%unit",),
                          doc="0: blk & rep strides in 32 B (default); 1: blk stride, rep gap in 32 B; "
                              "2: blk gap & rep stride in elements; 3: blk gap & rep gap in elements"))
    return tuple(out)


def clause_args(clauses: dict, name: str) -> Optional[tuple]:
    """Positional args of an ``args`` clause, or None if omitted."""
    v = clauses.get(name)
    if v is None:
        return None
    return tuple(v[0])


# ----------------------------------------------------------------------------- scalar checks


def as_int(value, *, op: str, operand: str) -> int:
    """An integer operand value (Python/numpy int); bool and float are rejected."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        reject_undefined(value)
        raise IllegalOperand(f"expects an integer, got {value!r}", op=op, operand=operand, value=value,
                             hint="pass a Python int")
    return int(value)


def check_range(value, lo: int, hi: int, *, op: str, operand: str, hint: Optional[str] = None) -> int:
    v = as_int(value, op=op, operand=operand)
    if not lo <= v <= hi:
        raise IllegalOperand(f"value {v} is outside [{lo}, {hi}]", op=op, operand=operand, value=v,
                             limit=f"[{lo}, {hi}]", hint=hint or f"pass {operand} between {lo} and {hi}")
    return v


def check_repeat(value, *, op: str, hi: int = MAX_REPEAT) -> int:
    return check_range(value, 0, hi, op=op, operand="repeat",
                       hint=f"split the work into calls of at most {hi} repeats (0 = no-op)")


def check_ub(ptr, *, op: str, operand: str, align: int = BLOCK_BYTES) -> None:
    """Operand must be a UB pointer at an ``align``-byte boundary."""
    if not isinstance(ptr, Ptr):
        raise IllegalOperand(f"expects a UB pointer, got {type(ptr).__name__}", op=op, operand=operand,
                             hint="pass a UB pointer (m.ptr(\"ub\", dtype, addr))")
    if ptr.space != "ub":
        raise IllegalOperand(f"must be in ub, got {ptr.space}", op=op, operand=operand, value=ptr.space,
                             hint="vector instructions read and write the unified buffer only")
    if ptr.addr % align:
        raise Misaligned(f"address {ptr.addr:#x} is not {align}-byte aligned", op=op, operand=operand,
                         value=hex(ptr.addr), limit=f"{align} B",
                         hint=f"vector operands start at multiples of {align} bytes in UB")


def static_dtype(ptr) -> Optional[DType]:
    """The element type of a pointer operand known before it runs: a `Ptr`'s, or a recorded program's
    pointer expression's static type (``!pto.ptr<f32, ub>``); None for anything else. For the expansion
    listings, which must show a traced kernel's lanes and types as they are, not a 16-bit default."""
    d = getattr(ptr, "dtype", None)
    return d if isinstance(d, DType) else None


def par_of(*dtypes: DType) -> int:
    """Lanes per repeat: 256 bytes over the widest operand."""
    return REPEAT_BYTES // max(d.itemsize for d in dtypes)


# ----------------------------------------------------------------------------- lanes (masks)


@dataclass(frozen=True, eq=False)
class Lanes:
    """Which lanes each repeat processes.

    Attributes:
        repeat: repeats to execute.
        count: leading lanes any repeat touches (last active lane + 1, <= PAR).
        mask: None when lanes ``[0, count)`` are active in every repeat; else bool array
            ``(1 | repeat, count)``.
        par: lanes per full repeat.
        tail: counter mode only: the active lanes of a short last repeat (0 = the last
            repeat has the lanes of the others). Its blocks past the last active lane are
            not accessed, so a counter-mode operand may end there (`run`).
    """

    repeat: int
    count: int
    mask: Optional[np.ndarray]
    par: int
    tail: int = 0

    def rows(self, r0: int, r1: int) -> Optional[np.ndarray]:
        if self.mask is None or self.mask.shape[0] == 1:
            return self.mask
        return self.mask[r0:r1]

    def padded(self, r0: int, r1: int, width: int) -> Optional[np.ndarray]:
        """Mask rows for ``[r0, r1)`` padded with inactive lanes to ``width`` (None = all active)."""
        m = self.rows(r0, r1)
        if width == self.count:
            return m
        if m is None:
            m = np.ones((1, self.count), dtype=bool)
        out = np.zeros((m.shape[0], width), dtype=bool)
        out[:, :self.count] = m[:, :min(self.count, width)]
        return out


def lanes_from_clauses(clauses: dict, *, par: int, repeat: int, counter_ok: bool, op: str) -> Lanes:
    """Resolve the ``mask`` / ``counter`` clauses of a call (cached by value)."""
    m = clause_args(clauses, "mask")
    c = clause_args(clauses, "counter")
    key = (par, repeat, counter_ok, None if m is None else tuple(as_int(x, op=op, operand="mask") for x in m),
           None if c is None else as_int(c[0], op=op, operand="counter"))
    return _lanes(key, op)


@lru_cache(maxsize=4096)
def _lanes_cached(key):
    return _lanes_uncached(key, "pto.ub")


def _lanes(key, op):
    try:
        return _lanes_cached(key)
    except IllegalOperand as e:
        e.op = op
        raise


#: Named choice: a counter-mode element count of 0 processes nothing (no lane is read or
#: written, no hazard or uninitialised-read report), like a repeat count of 0. tik_api.md §9.1:
#: counter mode "`mask` = total number of elements to process (1..2^32-1); repeat count is
#: derived as ceil(mask/PAR) and `repeat_times` is ignored", and "repeat_times ∈ [0,255] for
#: Scalar/Expr, [1,255] for immediates (0 immediate is an error); repeat_times = 0 at runtime →
#: no-op". TIK checks immediates only: the TIK facade refuses an immediate counter of 0 at the
#: user's line (`tbe_compat/tik/vector_common.py`), while a run-time (Scalar) 0 derives
#: ceil(0/PAR) = 0 repeats, the documented run-time no-op. CANN ProdEnvMatA relies on it (an
#: atom without a neighbour of one type moves 0 elements). At the PTO level ``counter=0`` is a
#: no-op whether constant or run-time, as ``repeat=0`` is (pto_vector.md §2). Chips without
#: counter mode (Ascend310/910A) read the value as a normal-mode count, where 0 stays an error.
COUNTER_ZERO_AT_RUN_TIME_IS_NOOP = True


def _lanes_uncached(key, op) -> Lanes:
    par, repeat, counter_ok, mask, counter = key
    if counter is not None:
        if not counter_ok:
            n = check_range(counter, 1, par, op=op, operand="counter",
                            hint=f"this chip has no counter mode: the count (a TIK mask with mask_mode=\"counter\") "
                                 f"is read as a normal-mode count of lanes, 1..{par}; keep it in that range")
            return Lanes(repeat, n, None, par)
        lo = 0 if COUNTER_ZERO_AT_RUN_TIME_IS_NOOP else 1
        n = check_range(counter, lo, MAX_COUNTER, op=op, operand="counter")
        if n == 0:
            return Lanes(0, par, None, par)
        rep = -(-n // par)
        tail = n - (rep - 1) * par
        if rep == 1:
            return Lanes(1, tail, None, par)
        if tail == par:
            return Lanes(rep, par, None, par)
        m = np.ones((rep, par), dtype=bool)
        m[-1, tail:] = False
        m.setflags(write=False)
        return Lanes(rep, par, m, par, tail)
    if mask is None:
        return Lanes(repeat, par, None, par)
    if len(mask) == 1:
        n = check_range(mask[0], 1, par, op=op, operand="mask",
                        hint=f"a contiguous mask counts active lanes, 1..{par} for this element width")
        return Lanes(repeat, n, None, par)
    if len(mask) == 2:
        hi, lo = mask
        for v, nm in ((hi, "mask(hi)"), (lo, "mask(lo)")):
            check_range(v, 0, 2 ** 64 - 1, op=op, operand=nm)
        if par == 64 and hi != 0:
            raise IllegalOperand("for 32-bit operands the high mask word must be 0", op=op, operand="mask(hi)",
                                 value=hi, limit="0", hint="only 64 lanes exist: put all bits in the low word")
        if par == 32 and (hi != 0 or lo > 2 ** 32 - 1):
            raise IllegalOperand("for 64-bit operands only the low 32 mask bits exist", op=op, operand="mask",
                                 value=(hi, lo), limit="hi = 0, lo <= 2**32-1",
                                 hint="only 32 lanes exist: give mask=(0, lo) with lo < 2**32")
        if par == 256:
            raise IllegalOperand("8-bit operands take a 4-word mask (256 lanes)", op=op, operand="mask",
                                 value=mask, hint="give mask=(w3, w2, w1, w0), highest word first")
        words = [lo, hi]
    elif len(mask) == 4:
        if par != 256:
            raise IllegalOperand("a 4-word mask is only legal for 8-bit operands", op=op, operand="mask",
                                 value=mask, limit="2 words (hi, lo)",
                                 hint="give a 16/32/64-bit op mask=(hi, lo), or a lane count")
        for v in mask:
            check_range(v, 0, 2 ** 64 - 1, op=op, operand="mask")
        words = list(reversed(mask))
    else:
        raise IllegalOperand(f"takes 1 (count), 2 (hi, lo) or 4 words, got {len(mask)}", op=op, operand="mask",
                             value=mask,
                             hint="pass mask=n (count), mask=(hi, lo) (two 64-bit words) or four 64-bit words")
    bits = np.unpackbits(np.array(words, dtype="<u8").view(np.uint8), bitorder="little").astype(bool)[:par]
    if not bits.any():
        raise IllegalOperand("mask selects no lane", op=op, operand="mask", value=mask,
                             hint="an all-zero bit mask is an error; skip the instruction instead")
    count = int(np.nonzero(bits)[0][-1]) + 1
    sel = bits[:count]
    if sel.all():
        return Lanes(repeat, count, None, par)
    sel = sel[None, :].copy()
    sel.setflags(write=False)
    return Lanes(repeat, count, sel, par)


# ----------------------------------------------------------------------------- operand geometry


@lru_cache(maxsize=8192)
def block_strides(itemsize: int, nblk: int, blk: int, rep: int, unit: int) -> tuple:
    """Byte strides ``(repeat, block, element)`` of a standard vector operand."""
    e = BLOCK_BYTES // itemsize
    if unit == 0:
        return (rep * BLOCK_BYTES, blk * BLOCK_BYTES, itemsize)
    if unit == 1:
        return (((nblk - 1) * blk + 1 + rep) * BLOCK_BYTES, blk * BLOCK_BYTES, itemsize)
    if unit == 2:
        return (rep * itemsize, (e + blk) * itemsize, itemsize)
    return ((nblk * e + (nblk - 1) * blk + rep) * itemsize, (e + blk) * itemsize, itemsize)


@dataclass(frozen=True)
class Stream:
    """Geometry of one memory operand of a repeat op (the pointer is bound at run time).

    ``shape`` is ``(repeat, blocks, elements)`` over the lanes it touches (row ``r``
    flattens to the lanes of repeat ``r``), ``strides`` are bytes; ``role`` is ``"r"``,
    ``"w"`` or ``"rw"``. ``masked=False`` streams (selection bits, scratch) are read whole,
    independent of the lane mask.
    """

    name: str
    dtype: DType
    shape: tuple
    strides: tuple
    role: str
    masked: bool = True
    # derived once (the engine reads them per call)
    lanes: int = field(init=False, compare=False)
    extent: int = field(init=False, compare=False)
    reads: bool = field(init=False, compare=False)
    writes: bool = field(init=False, compare=False)
    once: bool = field(init=False, compare=False)

    def __post_init__(self):
        size = self.dtype.itemsize
        set_ = object.__setattr__
        set_(self, "lanes", self.shape[1] * self.shape[2])
        # bytes from the first to one past the last byte the pattern touches
        set_(self, "extent", size + sum((n - 1) * s for n, s in zip(self.shape, self.strides)))
        set_(self, "reads", "r" in self.role)
        set_(self, "writes", "w" in self.role)
        set_(self, "once", writes_once(tuple(self.shape), tuple(self.strides), size))


def vector_stream(name: str, dtype: DType, role: str, *, par: int, lanes: Lanes, blk: int, rep: int,
                  unit: int) -> Stream:
    """A standard operand: ``par`` lanes per repeat in blocks of 32 B, trimmed to the active lanes
    (a written operand's block stride 0 counts as 1: `DST_BLOCK_STRIDE_ZERO_IS_ONE`)."""
    size = dtype.itemsize
    e = BLOCK_BYTES // size
    nblk = max(1, par * size // BLOCK_BYTES)
    nb_act = min(nblk, -(-lanes.count // e))
    if blk == 0 and unit in (0, 1) and "w" in role and DST_BLOCK_STRIDE_ZERO_IS_ONE:
        blk = 1
    return Stream(name, dtype, (lanes.repeat, nb_act, e), block_strides(size, nblk, blk, rep, unit), role)


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything about one call that does not depend on addresses: lanes and operand geometry.

    Built once per distinct (op, dtypes, repeat, mask, strides) and cached by the ops.
    ``lanes_out`` optionally gives a write stream its own `Lanes` (reductions, compares).
    """

    lanes: Lanes
    streams: tuple
    lanes_out: tuple = ()
    #: derived once: `dense_streams` of this plan (None: the general path)
    dense: Optional[tuple] = field(init=False, compare=False, repr=False, default=None)
    #: derived once: more than one stream is written (a later store can be refused after an earlier one wrote)
    writes_many: bool = field(init=False, compare=False, repr=False, default=False)

    def __post_init__(self):
        object.__setattr__(self, "dense", dense_streams(self))
        object.__setattr__(self, "writes_many", sum(1 for s in self.streams if s.writes) > 1)

    def out_lanes(self, name: str) -> Lanes:
        for n, ln in self.lanes_out:
            if n == name:
                return ln
        return self.lanes


#: `run` takes its dense fast path (one 1-D view per operand, `ExecContext.dense_view`) for plans whose
#: streams are all contiguous and fully active (`dense_streams`); False forces the general strided path
#: (tests compare the two: same values, written flags, reports and errors).
DENSE_FAST_PATH = True


def dense_streams(plan: "Plan") -> Optional[tuple]:
    """``((name, reads, writes, nbytes, dtype, (repeat, lanes)), ...)`` per stream when `run` may take its
    dense fast path for ``plan``, else None. It may when every lane of every repeat is active (no mask, no
    counter-mode tail, no per-stream output lanes) and every stream covers one contiguous byte range
    exactly once (`memory.is_dense`) in whole bytes (a masked or written stream over all ``lanes.count`` lanes): then each operand is one 1-D view (`ExecContext.dense_view`)
    with the same checks and marks as `ExecContext.strided_view` of its (repeat, block, element) pattern."""
    lanes = plan.lanes
    if lanes.mask is not None or lanes.tail or lanes.repeat < 1 or plan.lanes_out:
        return None
    out = []
    for s in plan.streams:
        size = s.dtype.itemsize
        if (s.dtype.bits < 8 or ((s.masked or s.writes) and s.lanes != lanes.count) or s.shape[0] != lanes.repeat
                or not is_dense(s.shape, s.strides, size) or (s.writes and not s.once)):
            return None
        out.append((s.name, s.reads, s.writes, s.extent, s.dtype, (lanes.repeat, s.lanes)))
    return tuple(out)


class PlanCache:
    """A bounded dict of `Plan` objects (cleared when full)."""

    def __init__(self, limit: int = 4096):
        self.limit = limit
        self.data: dict = {}

    def get(self, key, build: Callable) -> "Plan":
        plan = self.data.get(key)
        if plan is None:
            if len(self.data) >= self.limit:
                self.data.clear()
            plan = self.data[key] = build()
        return plan


def default_rep_stride(dtype: DType, par: int) -> int:
    """Contiguous repeats: the blocks one full repeat of this operand covers."""
    return max(1, par * dtype.itemsize // BLOCK_BYTES)


def strides_from_clauses(clauses: dict, names: tuple, dtypes: tuple, par: int, *, op: str,
                         blk_max: int = 255, rep_max: int = 255, default_rep=None) -> tuple:
    """``(blk, rep, unit)`` per operand from the stride clauses, range-checked."""
    blk = clause_args(clauses, "blk_stride")
    rep = clause_args(clauses, "rep_stride")
    unit = clause_args(clauses, "stride_unit")
    u = 0 if unit is None else check_range(unit[0], 0, 3, op=op, operand="stride_unit")
    out = []
    for i, (nm, d) in enumerate(zip(names, dtypes)):
        b = 1 if blk is None else check_range(blk[i], 0, blk_max, op=op, operand=f"blk_stride({nm})")
        if rep is None:
            r = default_rep(d, par) if default_rep is not None else default_rep_stride(d, par)
            if u in (1, 3):
                r = 0
            elif u == 2:
                r = par
        else:
            r = check_range(rep[i], 0, rep_max, op=op, operand=f"rep_stride({nm})")
        out.append((b, r, u))
    return tuple(out)


# ----------------------------------------------------------------------------- execution


def run(ctx, plan: Plan, ptrs: tuple, compute: Callable) -> None:
    """Execute a repeat op: read the ``"r"`` streams, ``compute(inputs, r0, r1)``, store the ``"w"`` streams.

    ``ptrs`` are the operand pointers in ``plan.streams`` order. ``inputs`` maps stream
    name -> array ``(r, count)`` (storage dtype, lanes of repeats ``r0..r1-1``);
    ``compute`` returns a dict name -> ``(r, count_w)`` arrays in the destination's
    storage dtype.
    """
    lanes = plan.lanes
    repeat = lanes.repeat
    if repeat == 0:
        return
    streams = plan.streams
    chunks = ((0, repeat),) if repeat == 1 else plan_chunks(streams, ptrs, repeat)
    dense = plan.dense
    if dense is not None and DENSE_FAST_PATH and len(chunks) == 1 and not plan.writes_many:
        # every lane active, every operand one contiguous range: one 1-D view each, same checks
        dv = ctx.dense_view
        inputs = {}
        for (name, reads, _, nbytes, dtype, shape2), p in zip(dense, ptrs):
            if reads:
                inputs[name] = dv(p, 0, nbytes, dtype, False, name).reshape(shape2)
        with np.errstate(all="ignore"):      # IEEE overflow/NaN are results here, not warnings
            outputs = compute(inputs, 0, repeat)
        for (name, _, writes, nbytes, dtype, shape2), s, p in zip(dense, streams, ptrs):
            if writes:
                vals = outputs[name]
                if vals.shape != shape2:
                    store(ctx, s, p, 0, repeat, vals[:, :s.lanes], lanes)
                else:
                    dv(p, 0, nbytes, dtype, True, name).reshape(shape2)[...] = vals
        return
    tail_streams = _tail_streams(streams, lanes)
    if tail_streams is not None:
        # counter mode with a short last repeat: run it alone with its trailing blocks trimmed
        chunks = tuple((r0, min(r1, repeat - 1)) for r0, r1 in chunks if r0 < repeat - 1) + ((repeat - 1, repeat),)
    if len(chunks) > 1 or plan.writes_many:      # several write steps: all or nothing (ALL_OR_NOTHING_WRITES)
        ctx.all_or_nothing(_run_chunks, ctx, plan, ptrs, compute, chunks, tail_streams)
    else:
        _run_chunks(ctx, plan, ptrs, compute, chunks, tail_streams)


def _run_chunks(ctx, plan: Plan, ptrs: tuple, compute: Callable, chunks: tuple, tail_streams) -> None:
    lanes = plan.lanes
    repeat = lanes.repeat
    streams = plan.streams
    count = lanes.count
    view = ctx.strided_view
    for r0, r1 in chunks:
        n = r1 - r0
        if tail_streams is not None and r1 == repeat:
            streams = tail_streams
        inputs = {}
        for s, p in zip(streams, ptrs):
            if not s.reads:
                continue
            shape = s.shape if n == s.shape[0] else (n,) + s.shape[1:]
            if s.masked:
                act = None if lanes.mask is None and s.lanes == count else lanes.padded(r0, r1, s.lanes)
                v = view(p, shape, s.strides, offset=r0 * s.strides[0], dtype=s.dtype, operand=s.name,
                         active=None if act is None else act.reshape((-1,) + s.shape[1:]))
                v = v.reshape(n, s.lanes)
                if s.lanes < count:             # a trimmed tail repeat: the missing lanes are inactive
                    v = np.concatenate([v, np.zeros((n, count - s.lanes), dtype=v.dtype)], axis=1)
                inputs[s.name] = v if count == s.lanes else v[:, :count]
            else:
                inputs[s.name] = view(p, shape, s.strides, offset=r0 * s.strides[0], dtype=s.dtype,
                                      operand=s.name).reshape(n, s.lanes)
        with np.errstate(all="ignore"):      # IEEE overflow/NaN are results here, not warnings
            outputs = compute(inputs, r0, r1)
        for s, p in zip(streams, ptrs):
            if s.writes:
                store(ctx, s, p, r0, r1, outputs[s.name][:, :s.lanes],
                      plan.out_lanes(s.name) if plan.lanes_out else lanes)


def _tail_streams(streams: tuple, lanes: Lanes) -> Optional[tuple]:
    """The streams of a counter-mode short last repeat, each trimmed to the blocks up to its
    last active lane (None when no stream gets shorter). Only lane-mapped streams (masked, one
    lane per element) are trimmed; the others keep their shape."""
    if not lanes.tail or lanes.repeat < 1:
        return None
    out = []
    changed = False
    for s in streams:
        e = s.shape[2]
        nb = -(-lanes.tail // e)
        if s.masked and s.lanes == lanes.count and s.shape[0] == lanes.repeat and nb < s.shape[1]:
            out.append(Stream(s.name, s.dtype, (s.shape[0], nb, e), s.strides, s.role, s.masked))
            changed = True
        else:
            out.append(s)
    return tuple(out) if changed else None


def store(ctx, s: Stream, ptr: Ptr, r0: int, r1: int, values: np.ndarray, lanes: Lanes) -> None:
    """Write ``values`` ``(r, count)`` into the active lanes of stream ``s`` for repeats ``[r0, r1)``."""
    r = r1 - r0
    width = s.lanes
    act = None if lanes.mask is None and width == lanes.count else lanes.padded(r0, r1, width)
    if values.shape[1] != width:
        full = np.zeros((r, width), dtype=values.dtype)
        full[:, :values.shape[1]] = values
        values = full
    tail = s.shape[1:]
    vals = values.reshape((r,) + tail)
    act3 = None if act is None else act.reshape((-1,) + tail)
    base = r0 * s.strides[0]
    shape = s.shape if r == s.shape[0] else (r,) + tail
    if s.once or writes_once(shape, s.strides, s.dtype.itemsize):
        view = ctx.strided_view(ptr, shape, s.strides, offset=base, dtype=s.dtype, write=True, operand=s.name,
                                active=act3)
        if act3 is None:
            view[...] = vals
        else:
            np.copyto(view, vals, where=act3)
        return
    # The pattern aliases itself: store lane by lane in (repeat, block, lane) order, last writer wins.
    ctx.strided_view(ptr, shape, s.strides, offset=base, dtype=s.dtype, write=True, operand=s.name, active=act3)
    size = s.dtype.itemsize
    offs = element_offsets(shape, s.strides) // size
    flat_vals = vals.reshape(-1)
    if act3 is not None:
        keep = np.broadcast_to(act3, shape).reshape(-1)
        offs = offs[keep]
        flat_vals = flat_vals[keep]
    rev = offs[::-1]
    uniq, first = np.unique(rev, return_index=True)
    last = len(offs) - 1 - first
    span = int(uniq[-1]) + 1
    target = ctx.strided_view(ptr, (span,), (size,), offset=base, dtype=s.dtype, write=True, operand=s.name,
                              active=False)
    target[uniq] = flat_vals[last]


def element_offsets(shape: tuple, strides: tuple) -> np.ndarray:
    """Byte offsets of every element of a strided pattern, in C order, as int64."""
    off = np.zeros((1,) * len(shape), dtype=np.int64)
    for axis, (n, st) in enumerate(zip(shape, strides)):
        idx = [1] * len(shape)
        idx[axis] = n
        off = off + (np.arange(n, dtype=np.int64) * st).reshape(idx)
    return off.reshape(-1)


@lru_cache(maxsize=8192)
def writes_once(shape: tuple, strides: tuple, size: int) -> bool:
    """True if no two elements of the pattern overlap in memory."""
    n = int(np.prod(shape))
    if n <= 1:
        return True
    if any(st == 0 and k > 1 for k, st in zip(shape, strides)):
        return False
    # Fast sufficient test: dimensions sorted by stride nest without interleaving.
    dims = sorted((st, k) for k, st in zip(shape, strides) if k > 1)
    span = size
    ok = True
    for st, k in dims:
        if st < span:
            ok = False
            break
        span = st * (k - 1) + span
    if ok:
        return True
    offs = element_offsets(shape, strides)
    if size == 1:
        return len(np.unique(offs)) == n
    byte = (offs[:, None] + np.arange(size)).reshape(-1)
    return len(np.unique(byte)) == byte.size


def plan_chunks(streams: tuple, ptrs: tuple, repeat: int) -> tuple:
    """Repeat ranges ``[(r0, r1), ...]`` that can each run as one array operation (see module doc)."""
    if repeat == 1:
        return ((0, repeat),)
    pairs = []
    for w, wp in zip(streams, ptrs):
        if "w" not in w.role:
            continue
        w_lo = wp.addr
        w_hi = w_lo + w.extent
        for r, rp in zip(streams, ptrs):
            if "r" not in r.role or rp.space != wp.space or rp.sub != wp.sub:
                continue
            if rp.addr < w_hi and w_lo < rp.addr + r.extent:
                pairs.append((w, wp, r, rp))
    if not pairs:
        return ((0, repeat),)
    base = pairs[0][1].addr
    key = (repeat, tuple((w.shape, w.strides, w.dtype.itemsize, wp.addr - base,
                          r.shape, r.strides, r.dtype.itemsize, rp.addr - base) for w, wp, r, rp in pairs))
    return _chunks_cached(key)


@lru_cache(maxsize=2048)
def _chunks_cached(key) -> tuple:
    repeat, pairs = key
    rows_w = []
    rows_r = []
    for w_shape, w_strides, w_size, w_off, r_shape, r_strides, r_size, r_off in pairs:
        rows_w.append(_bytes_by_repeat(w_shape, w_strides, w_size, w_off))
        rows_r.append(_bytes_by_repeat(r_shape, r_strides, r_size, r_off))
    lo = min(int(a.min()) for a in rows_w + rows_r)
    hi = max(int(a.max()) for a in rows_w + rows_r) + 1
    # Quick exact test: does any byte get read in a later repeat than its first write?
    first_write = np.full(hi - lo, repeat, dtype=np.int64)
    last_read = np.full(hi - lo, -1, dtype=np.int64)
    for rw in rows_w:
        reps = np.broadcast_to(np.arange(repeat)[:, None], rw.shape)
        one = np.full(hi - lo, repeat, dtype=np.int64)
        one[(rw - lo)[::-1].reshape(-1)] = reps[::-1].reshape(-1)   # duplicates: the last (lowest) repeat wins
        np.minimum(first_write, one, out=first_write)
    for rr in rows_r:
        reps = np.broadcast_to(np.arange(repeat)[:, None], rr.shape)
        one = np.full(hi - lo, -1, dtype=np.int64)
        one[(rr - lo).reshape(-1)] = reps.reshape(-1)
        np.maximum(last_read, one, out=last_read)
    if not (last_read > first_write).any():
        return ((0, repeat),)
    written = np.zeros(hi - lo, dtype=bool)
    chunks = []
    start = 0
    for r in range(repeat):
        if any(written[rr[r] - lo].any() for rr in rows_r):
            chunks.append((start, r))
            start = r
            written[:] = False
        for rw in rows_w:
            written[rw[r] - lo] = True
    chunks.append((start, repeat))
    return tuple(chunks)


def _bytes_by_repeat(shape, strides, size, base) -> np.ndarray:
    """``(repeat, bytes)`` array of the byte addresses each repeat touches (relative)."""
    per = element_offsets((1,) + tuple(shape[1:]), (0,) + tuple(strides[1:]))
    per = (per[:, None] + np.arange(size)).reshape(-1)
    return base + np.arange(shape[0], dtype=np.int64)[:, None] * strides[0] + per[None, :]


# ----------------------------------------------------------------------------- numerics helpers


_MAX, _MIN = np.maximum.reduce, np.minimum.reduce     # the ufunc reductions, without ndarray.max's wrapper


def round_float(x: np.ndarray, dst: DType, ctx) -> np.ndarray:
    """Round f32/f64 results once (nearest-even) to float ``dst``, applying the machine's overflow mode.

    ``saturation`` (chip default on Ascend310/910/310P...): finite overflow and +/-inf
    clamp to the largest finite value of ``dst``, NaN becomes 0 (ACL saturation mode).
    ``inf_nan``: IEEE-754 (overflow -> inf, NaN stays NaN).

    A NaN written as 0 is recorded in ``machine.reports`` (kind ``"saturation"``, with the op's
    file:line): legal on the device, but it is how float arithmetic used as a bit copy (f32 data
    reinterpreted as f16 and "copied" with ``vadds(x, 0)``) silently changes data.
    """
    if ctx.machine.overflow_mode == "saturation":
        big = dst.max
        # two reductions prove the common case (no NaN: max/min propagate it; nothing out of range)
        if x.size and not (_MAX(x, axis=None) <= big and _MIN(x, axis=None) >= -big):
            nans = int(np.count_nonzero(np.isnan(x)))
            if nans:
                _report_nan_to_zero(ctx, nans, dst)
            x = np.nan_to_num(np.clip(x, -big, big), nan=0.0)
    return to_f16(x) if dst.name == "f16" else x.astype(dst.storage)


def _report_nan_to_zero(ctx, count: int, dst: DType) -> None:
    where = getattr(ctx, "where", None)
    ctx.machine.report("saturation", (
        f"{getattr(ctx, 'op_name', '') or 'op'} wrote {count} NaN {dst.name} result(s) as 0: the chip's saturation "
        f"overflow mode turns NaN into 0" + (f" ({where})" if where else "") + ". If the op is meant to copy bits "
        f"(data of another dtype reinterpreted as {dst.name}), use a data move: float arithmetic does not keep "
        f"NaN, inf or -0 bit patterns"))


# ----------------------------------------------------------------------------- expansion text


def mask_text(clauses: dict, par: int, bits: int) -> list:
    """PTO-AS lines materialising the predicate of a repeat op (``%mask``)."""
    m = clause_args(clauses, "mask")
    c = clause_args(clauses, "counter")
    b = f"b{bits}"
    if c is not None:
        return [f"// counter mode: {c[0]} elements in total; the last repeat uses a tail mask",
                f"%mask = pto.pset_{b} \"PAT_ALL\" : !pto.mask<{b}>",
                f"%tail = pto.pge_{b} \"PAT_VL<{c[0]} mod {par}>\" : !pto.mask<{b}>"]
    if m is None:
        return [f"%mask = pto.pset_{b} \"PAT_ALL\" : !pto.mask<{b}>"]
    if len(m) == 1:
        return [f"%mask = pto.pge_{b} \"PAT_VL{m[0]}\" : !pto.mask<{b}>"]
    words = ", ".join(hex(int(w)) if isinstance(w, (int, np.integer)) else str(w) for w in m)
    return [f"// lane bits ({words}), highest word first: load them as a predicate",
            f"%mask = pto.plds %mask_bits[%c0] : !pto.ptr<ui64, ub> -> !pto.mask<{b}>"]


def load_text(var: str, ptr: str, dtype: DType, lanes: int, offset: str, blk: int, unit: int) -> str:
    ty = f"!pto.vreg<{lanes}x{dtype.pto_name}>"
    if blk == 1 and unit in (0, 1):
        return f"{var} = pto.vlds {ptr}[{offset}] {{dist = \"NORM\"}} : !pto.ptr<{dtype.pto_name}, ub> -> {ty}"
    return (f"{var} = pto.vsldb {ptr}, {offset}, %mask : !pto.ptr<{dtype.pto_name}, ub>, i32, !pto.mask -> {ty}"
            f"    // block stride {blk} (stride_unit {unit})")


def store_text(var: str, ptr: str, dtype: DType, lanes: int, offset: str, blk: int, unit: int) -> str:
    ty = f"!pto.vreg<{lanes}x{dtype.pto_name}>"
    if blk == 1 and unit in (0, 1):
        return (f"pto.vsts {var}, {ptr}[{offset}], %mask {{dist = \"NORM_B{dtype.bits}\"}} : {ty}, "
                f"!pto.ptr<{dtype.pto_name}, ub>, !pto.mask")
    return (f"pto.vsstb {var}, {ptr}, {offset}, %mask : {ty}, !pto.ptr<{dtype.pto_name}, ub>, i32, !pto.mask"
            f"    // block stride {blk} (stride_unit {unit})")


def loop_text(repeat, body: list, header: list) -> list:
    """``scf.for`` over the repeats around ``body`` (each line indented)."""
    rep = repeat if isinstance(repeat, (int, np.integer)) else "%repeat"
    return header + [f"scf.for %r = %c0 to %c{rep} step %c1 {{"] + ["  " + line for line in body] + ["}"]


# ----------------------------------------------------------------------------- VA (address-list) addressing


def va_stream(name: str, dtype: DType, role: str, *, par: int, lanes: Lanes, rep: int) -> Stream:
    """An operand of a VA-register ("scatter") op: block ``j`` of repeat ``r`` at ``list[j] + r*rep*32``.

    ``shape`` is ``(repeat, active blocks, E)`` like `vector_stream`; the block stride is a
    placeholder (each block has its own base pointer), so the stream is only run by `run_va`.
    """
    size = dtype.itemsize
    e = BLOCK_BYTES // size
    nblk = max(1, par * size // BLOCK_BYTES)
    nb_act = min(nblk, -(-lanes.count // e))
    return Stream(name, dtype, (lanes.repeat, nb_act, e), (rep * BLOCK_BYTES, BLOCK_BYTES, size), role)


def va_needs_serial(streams: tuple, ptr_lists: tuple, repeat: int) -> bool:
    """True when the repeats of a VA op cannot run as one array operation, which reads every block of
    every repeat before it writes any: some repeat reads a block an earlier repeat writes, or two
    repeats write the same block (the hardware runs repeat by repeat, reading every
    source block of a repeat before writing its destination blocks, later blocks last).

    Exact: list addresses are 32-byte aligned and repeat strides whole blocks, so two blocks either
    coincide or are disjoint. Block ``j`` of a list with stride ``R`` is at ``a_j + r*R``; a write at
    ``a + r1*R`` and a read at ``b + r2*R`` meet when ``a - b = (r2 - r1)*R``."""
    if repeat <= 1:
        return False
    lists = []
    for s, lst in zip(streams, ptr_lists):
        nb = s.shape[1]
        addrs = tuple(p.addr for p in lst[:nb])
        rep_b = s.strides[0]
        key = (lst[0].space, lst[0].sub)
        lo, hi = min(addrs), max(addrs) + (repeat - 1) * rep_b + BLOCK_BYTES
        lists.append((s, addrs, rep_b, key, lo, hi))
    for s, a, rw, key, lo, hi in lists:
        if not s.writes:
            continue
        if rw == 0 or _blocks_meet(a, a, rw, repeat, same=True):
            return True                                   # a block written by two repeats
        for t, b, rr, key2, lo2, hi2 in lists:
            if t is s or not t.reads or key2 != key or hi2 <= lo or hi <= lo2:
                continue
            if b == a and rr == rw:
                continue                                  # in place: block j reads what block j writes
            if rr == rw:
                if _blocks_meet(a, b, rw, repeat, same=False):
                    return True
            else:                                         # different strides: compare the addresses
                w_at = {aj + r1 * rw: r1 for aj in a for r1 in range(repeat)}
                if any(w_at.get(bj + r2 * rr, repeat) < r2 for bj in b for r2 in range(repeat)):
                    return True
    return False


def _blocks_meet(a: tuple, b: tuple, stride: int, repeat: int, *, same: bool) -> bool:
    """Lists ``a`` (written) and ``b`` with one repeat stride: ``same``: blocks of ``a`` from two different
    repeats coincide (two blocks of one repeat at one address store in block order either way); else a
    block of ``b`` in a repeat is written by an earlier repeat of ``a``."""
    for j, aj in enumerate(a):
        for jj, bj in enumerate(b):
            if same and jj <= j:
                continue
            d = aj - bj
            if d % stride:
                continue
            k = d // stride                               # = r2 - r1
            if (0 < abs(k) < repeat) if same else (0 < k < repeat):
                return True
    return False


def run_va(ctx, plan: Plan, ptr_lists: tuple, compute: Callable) -> None:
    """Execute a VA-register op (`va_stream` operands): like `run`, but block ``j`` of every operand
    starts at its own address ``ptr_lists[stream][j]``. Lanes, ``compute`` and stores are those of the
    standard op; overlapping operands run one repeat at a time, block by block (the last block wins)."""
    lanes = plan.lanes
    repeat = lanes.repeat
    if repeat == 0:
        return
    streams = plan.streams
    chunks = [(r, r + 1) for r in range(repeat)] if va_needs_serial(streams, ptr_lists, repeat) else [(0, repeat)]
    # block lists are written one block at a time: all or nothing (ALL_OR_NOTHING_WRITES)
    ctx.all_or_nothing(_run_va_chunks, ctx, plan, ptr_lists, compute, chunks)


def _run_va_chunks(ctx, plan: Plan, ptr_lists: tuple, compute: Callable, chunks: list) -> None:
    lanes = plan.lanes
    streams = plan.streams
    count = lanes.count
    view = ctx.strided_view
    for r0, r1 in chunks:
        n = r1 - r0
        inputs = {}
        for s, lst in zip(streams, ptr_lists):
            if not s.reads:
                continue
            nb, e = s.shape[1], s.shape[2]
            act = None if lanes.mask is None and s.lanes == count else lanes.padded(r0, r1, s.lanes)
            act3 = None if act is None else act.reshape((-1, nb, e))
            parts = []
            for j in range(nb):
                a = None if act3 is None else act3[:, j:j + 1, :]
                parts.append(view(lst[j], (n, 1, e), (s.strides[0], BLOCK_BYTES, s.dtype.itemsize),
                                  offset=r0 * s.strides[0], dtype=s.dtype, operand=f"{s.name}_list[{j}]", active=a))
            v = np.concatenate(parts, axis=1).reshape(n, s.lanes)
            inputs[s.name] = v if count == s.lanes else v[:, :count]
        with np.errstate(all="ignore"):
            outputs = compute(inputs, r0, r1)
        for s, lst in zip(streams, ptr_lists):
            if not s.writes:
                continue
            nb, e = s.shape[1], s.shape[2]
            values = outputs[s.name]
            if values.shape[1] != s.lanes:
                full = np.zeros((n, s.lanes), dtype=values.dtype)
                full[:, :values.shape[1]] = values
                values = full
            vals = values.reshape(n, nb, e)
            act = None if lanes.mask is None and s.lanes == count else lanes.padded(r0, r1, s.lanes)
            act3 = None if act is None else np.broadcast_to(act.reshape((-1, nb, e)), (n, nb, e))
            for j in range(nb):
                a = None if act3 is None else act3[:, j:j + 1, :]
                dst = view(lst[j], (n, 1, e), (s.strides[0], BLOCK_BYTES, s.dtype.itemsize),
                           offset=r0 * s.strides[0], dtype=s.dtype, write=True, operand=f"{s.name}_list[{j}]",
                           active=a)
                if a is None:
                    dst[...] = vals[:, j:j + 1, :]
                else:
                    np.copyto(dst, vals[:, j:j + 1, :], where=a)
