"""Cross-core GM race checker: accesses of one barrier phase by different cores to the same GM bytes.

Cores of a launch share GM and run concurrently on hardware; the only ordering between them
is an all-core barrier (``pto.sync_all``, TIK ``block_barrier``). The simulator runs them one
after another (``order="sequential"``) or interleaved at op boundaries (``order="random"``),
so a kernel whose result depends on their timing silently gets one of the possible results.
This checker reports such kernels (``MachineOptions.gm_races``; on by default, only on
machines with more than one core):

* **phases**: the scheduler (pto_core.interpreter) calls `GmRaceTracker.next_phase` whenever
  it releases the cores from an all-core barrier; accesses of different phases are ordered.
* **race**: two accesses in one phase, by different cores, to overlapping GM bytes, where

  - one is a plain read and the other an atomic write: **atomic/plain** -- always;
  - one is a plain read and the other a plain write: **read/write** -- only on bytes the write
    changed (a named choice, "unchanged writes are no race for readers": a store of the bytes
    already there, e.g. every core writing its unchanged inputs back, gives the reader the same
    bytes in any order; whether it changed them is judged once the op has stored); nor on bytes the
    reading core itself wrote earlier in the phase (it reads its own bytes or the other core's store of
    them; a store of different bytes is a write/write race, reported on its own) -- unless the other
    core changed them more than once in the phase (its earlier value may be what the read sees, and
    no write/write compare saw it: ``_Region.rechanged``);
  - both are plain writes: **write/write** -- only if the bytes the later one stores differ
    from the bytes already there (a named choice, "identical writes are no race": several
    CANN ops store the same padding or the same broadcast values from every core, which
    gives the same result in any order);
  - one is an atomic write (``set_atomic_add/max/min`` moves, FIXPIPE ``atomic(...)``) and
    the other a plain write: **atomic/plain** -- always;
  - both are atomic writes of *different* ops (add vs max) or of different atomic types (an f32 add
    and an f16 add of the same bytes: each reads the other's result in its own format, so the order
    matters): **atomic/atomic** -- always. Atomic writes of the same op and type never race with each
    other: that is what atomics are for.
    The read half of an atomic read-modify-write is part of the atomic, not a read.

* **footprints** are exact bytes: a strided access (burst rows with gaps, a strided view)
  covers its rows only when the op names them (`ExecContext.span_tracked` ``runs=``), else
  its whole ``[lo, hi)`` span. A write whose span covers gaps it does not store is harmless
  for write/write (unchanged bytes compare equal) but may be reported against another
  core's read of the gap. Rows cut at a GM tensor's end: a read keeps its outer rows wholly
  inside the tensor (`GmRaceTracker._clip_view`) and takes the rest whole; a write (cut only in
  the allocation padding, a few bytes) takes its whole span.

Each race is reported once per (kind, region, pair of source sites), with both cores, the
region, the byte range (and element range when the region has a dtype), and both ops with
their ``file:line``; `GmRaceTracker.count` counts every detection.

A refused eager op leaves no accesses (pto_api.md "A refused op changes nothing"): the dispatcher brackets
each eager op with `GmRaceTracker.begin_op` / `end_op`, which journal what its accesses change, and
`abort_op` undoes that and withdraws the races it found. Interpreted runs are not journalled (a refused op
ends the run: `reset`).

Cost: nothing on a one-core machine (no tracker). Otherwise each plain GM write keeps a copy of
the bytes it replaces until the op has stored, and, per GM region and phase, one unsigned integer
per byte and access kind (readers, plain writers, plain writers that changed the byte, atomic
writers; one bit per
core: ``uint8`` up to 8 cores ... ``uint64`` up to 64; core ``c`` shares the bit of core
``c % 64`` beyond that), plus each core's byte span
per kind. An access is checked against the masks only where its bytes meet another core's span,
and a mask is only built (from the accesses recorded so far) when some access needs it: cores
that work on disjoint parts of a tensor cost a few Python operations per access and no mask.
At a phase end the masks are dropped. A per-phase log of accesses (merged when one site
touches adjacent bytes) names the other access of a race; it is searched only when a race is
found, and for atomics over other cores' atomics only when an atomic of another op was logged
(each region keeps the set of atomic ops it saw), so many cores adding into the same bytes cost
no search.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional

import numpy as np

from ..dtypes import dtype as _dtype
from ..errors import GmRace, GmRaceWarning, UnknownName, at_site

@dataclass(frozen=True)
class RaceWording:
    """The words a race report uses (`GmRaceTracker._report`): `PTO_RACE_WORDING` for PTO programs; a front
    end registers its own (`add_race_wording`) for the ops it lowers, so that its users read their own calls,
    argument names, dtype spellings and fixes (the TIK facade: ``tbe_compat.tik.errors.TIK_RACE_WORDING``).

    Attributes:
        call_prefix: a report uses this wording when the provenance call of its access, or else of the other
            core's access, starts with it (``"tik."``); `PTO_RACE_WORDING`'s ``""`` is the fallback.
        region: what a GM region is called (``"region"``, ``"tensor"``).
        barrier: the all-core barrier (``"pto.sync_all"``, ``"tik.block_barrier"``).
        dtype_attr: the `DType` attribute spelling a type (``"name"`` -> ``f16``, ``"tik_name"`` -> ``float16``).
        fixes: race kind (``"write/write"``, ``"read/write"``, ``"atomic/plain"``, ``"atomic/atomic"``) -> the
            Fix; ``str.format`` fields ``{region}`` (quoted name), ``{barrier}``, ``{dtype}`` (the region's type,
            or ``the tensor's type``).
        by_call: name an access by its provenance call (``tik.data_move``) rather than its PTO op.
        operand: ``(call, PTO operand) -> argument name`` of the front end (``%dst`` -> ``dst``), or None to
            keep the PTO operand.
        padding_write_fix: the Fix of a `GmPaddingWriteWarning` (a GM store past its tensor's last 32-byte
            block, `pto_core.ops.mte`) at a call of this front end; ``""`` keeps the PTO text. With ``by_call``
            that warning and `GmOverreadWarning` also name the call only and give the elements first (the
            bytes in parentheses) in ``dtype_attr`` spelling, as a race report does; ``str.format`` field
            ``{call}`` (the call). ``by_call`` alone words the ``gm-tail`` report of such a store (also one
            inside the tensor's last block, which does not warn) the same way: call, tensor, elements.
        overread_fix: the Fix of a `GmOverreadWarning` (a GM read past its tensor's allocation); ``""``: PTO's.
        call_fixes: ``(warning, call) -> Fix`` for a call whose counts differ from the ones ``padding_write_fix`` /
            ``overread_fix`` explain (warning ``"padding_write"`` or ``"overread"``; TIK's ``data_move_pad``
            counts bytes where ``data_move`` counts 32-byte blocks); `fix_of`.
    """

    call_prefix: str
    region: str
    barrier: str
    dtype_attr: str
    fixes: Mapping[str, str] = field(default_factory=dict)
    by_call: bool = False
    operand: Optional[Callable[[str, str], Optional[str]]] = None
    padding_write_fix: str = ""
    overread_fix: str = ""
    call_fixes: Mapping[tuple, str] = field(default_factory=dict)

    def fix_of(self, warning: str, call: str) -> str:
        """The Fix of a ``warning`` (``"padding_write"``, ``"overread"``) at ``call``, ``{call}`` filled in."""
        text = self.call_fixes.get((warning, call)) or getattr(self, f"{warning}_fix")
        return text.format(call=call)


#: PTO programs' race reports: PTO op names and operands, PTO dtype names, `pto.sync_all`.
PTO_RACE_WORDING = RaceWording(
    call_prefix="", region="region", barrier="pto.sync_all", dtype_attr="name",
    fixes={
        "write/write": "give each core its own bytes of {region} (offset by the block index, pto.get_block_idx or "
                       "the block_num loop's variable; a shorter last burst instead of a 32-byte-rounded store), "
                       "accumulate with one atomic op (pto.set_atomic_<type> + pto.set_atomic_add ... "
                       "pto.set_atomic_none on every core), or order the two stores with {barrier}",
        "read/write": "order the write before the read with {barrier} (on every core of the launch), or give each "
                      "core its own bytes of {region} (offset by the block index, pto.get_block_idx)",
        "atomic/plain": "make every core's store to these bytes of {region} atomic with the same type and op, or "
                        "keep plain reads and stores away from them until a {barrier}",
        "atomic/atomic": "accumulate into these bytes of {region} with one atomic type and op on every core "
                         "(pto.set_atomic_<type> + pto.set_atomic_add/max/min), or put a {barrier} between the two "
                         "cores' atomics",
    })

#: Front ends' wordings (`add_race_wording`), tried in order before `PTO_RACE_WORDING`.
_WORDINGS: list = []


def add_race_wording(wording: RaceWording) -> None:
    """Register a front end's race-report wording (a wording with the same ``call_prefix`` is replaced)."""
    _WORDINGS[:] = [w for w in _WORDINGS if w.call_prefix != wording.call_prefix] + [wording]


def wording_of(*sites) -> RaceWording:
    """The wording of the first of ``sites`` (provenances, None allowed) whose call a front end lowered (the
    race reports here; the GM padding-write and overread warnings of `pto_core.ops.mte`)."""
    for where in sites:
        call = getattr(where, "call", "") or ""
        for w in _WORDINGS:
            if w.call_prefix and call.startswith(w.call_prefix):
                return w
    return PTO_RACE_WORDING


#: Most cores with their own bits; core ``c`` uses bit ``c % MAX_CORE_BITS`` of each mask.
MAX_CORE_BITS = 64

#: access kinds; ``_CHANGED`` = the bytes a plain write changed (known once the op has stored)
_READ, _WRITE, _ATOMIC, _CHANGED = 0, 1, 2, 3
_KIND_WORD = {_READ: "reads", _WRITE: "writes"}
#: the fields an access of each kind is checked against when it happens (a plain write is also
#: checked against ``_READ`` once it has stored: `GmRaceTracker.flush`)
_CHECKS = {_READ: (_CHANGED, _ATOMIC), _WRITE: (_ATOMIC, _WRITE), _ATOMIC: (_READ, _WRITE, _ATOMIC)}


def _mask_dtype(width: int):
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if width <= np.dtype(dt).itemsize * 8:
            return dt
    raise AssertionError(width)


class _Entry:
    """One access in a phase's log: bytes ``[lo, hi)`` of a region by ``core``."""

    __slots__ = ("lo", "hi", "core", "kind", "atomic", "op", "where", "operand")

    def __init__(self, lo, hi, core, kind, atomic, op, where, operand):
        self.lo, self.hi, self.core, self.kind, self.atomic = lo, hi, core, kind, atomic
        self.op, self.where, self.operand = op, where, operand


class _Region:
    """Race state of one GM region in the current phase.

    ``masks[kind]``: one core bit per byte (readers, plain writers, atomic writers, changers), built when an
    access first needs it (from ``todo[kind]``, the accesses of that kind not yet in it);
    ``bounds[kind]``: ``{core: [lo, hi]}``, the bytes each core's accesses of that kind span (an
    access outside every other core's span needs no look at the mask);
    ``atomic_ops``: the atomic ops (``"add"``, ``"max"`` ...) logged so far, so that an atomic
    access over other cores' atomics of its own op (the common case: every core adds) needs no
    scan of the log for an atomic of another op."""

    __slots__ = ("buf", "name", "dtype", "masks", "todo", "bounds", "log", "atomic_ops", "rechanged", "changed_runs")

    def __init__(self, buf, name, dtype):
        self.buf = buf
        self.name = name
        self.dtype = dtype
        self.masks = [None, None, None, None]
        # accesses not yet or-ed into masks[kind]: (core, lo, hi, view), for _CHANGED plus the changed bytes
        # (a bool array shaped like the view, None for all)
        self.todo = ([], [], [], [])
        self.bounds = [{}, {}, {}, {}]
        self.log: list = []             # _Entry per access (adjacent ones of one site merged)
        self.atomic_ops: set = set()
        # one core bit per byte that core changed more than once this phase (None until one did): another core
        # may have read its earlier value, so reading back one's own store of the byte is no alibi
        self.rechanged: Optional[np.ndarray] = None
        # core -> ([starts], [ends]): sorted disjoint byte ranges covering the spans of that core's stores that
        # changed bytes this phase (`CHANGED_RUNS`)
        self.changed_runs: dict = {}


#: Keep, per core and region, the disjoint byte ranges its changing stores spanned this phase (`_Region.changed_runs`),
#: so a store outside all of them skips the rechanged test (`GmRaceTracker._note_rechanged`: or-ing the changer
#: mask and comparing it) that the bounding box of the core's stores alone would ask for (a core storing
#: consecutive tiles: every store after the first). The ranges cover every byte the mask test could find, so
#: the result is the same. False: the bounding box only.
CHANGED_RUNS = True


def _runs_overlap(runs, lo: int, hi: int) -> bool:
    """Whether ``[lo, hi)`` overlaps one of the sorted disjoint ranges ``runs`` = ``(starts, ends)``."""
    starts, ends = runs
    j = bisect_left(starts, hi)                 # ranges [0, j) start before hi; their ends are sorted too
    return j > 0 and ends[j - 1] > lo


def _runs_add(runs, lo: int, hi: int) -> None:
    """Add ``[lo, hi)`` to ``runs``, merging the ranges it overlaps or touches."""
    starts, ends = runs
    i = bisect_left(ends, lo)                   # first range ending at or after lo
    j = bisect_right(starts, hi)                # ranges [0, j) start at or before hi
    if i < j:
        lo, hi = min(lo, starts[i]), max(hi, ends[j - 1])
    starts[i:j] = [lo]
    ends[i:j] = [hi]


class _Pending:
    """A plain write, compared with the bytes it replaced once the op has stored: ``data`` = its bytes
    (a view of GM), ``before`` = their copy taken before the store, ``others`` = the other cores'
    plain-writer bits on them (None when no other core wrote them this phase)."""

    __slots__ = ("region", "data", "before", "base", "hi", "strides", "core", "op", "where", "operand", "others")

    def __init__(self, region, data, before, base, hi, strides, core, op, where, operand, others):
        self.region, self.data, self.before, self.base, self.hi = region, data, before, base, hi
        self.strides, self.core, self.op, self.where = strides, core, op, where
        self.operand, self.others = operand, others


class GmRaceTracker:
    """The race state of one machine's GM (shared by all its cores' `ExecContext`\\ s).

    Args:
        machine: the `Machine`; ``machine.options.gm_races`` says what a race does
            (``"record"``, ``"warn"``, ``"raise"``).

    Attributes:
        phase: barrier phases completed in this kernel run.
        count: races detected (reported or not: reports are deduplicated and capped).
    """

    def __init__(self, machine):
        self.machine = machine
        self.mode = machine.options.gm_races
        self.width = w = min(len(machine.cores), MAX_CORE_BITS)
        self._dtype = dt = _mask_dtype(w)
        self._bit = [dt(1 << (c % w)) for c in range(len(machine.cores))]
        self._others = [dt(((1 << w) - 1) & ~(1 << (c % w))) for c in range(len(machine.cores))]
        self._regions: dict = {}       # id(buffer) -> _Region
        self.pending: list = []
        self.phase = 0
        self.count = 0
        self._seen: set = set()
        #: while an eagerly dispatched op runs (`begin_op`): how to undo, newest last, what its accesses changed
        #: here, so that a refused op leaves no accesses behind (`abort_op`); None otherwise (interpreted runs:
        #: a refused op ends the run, `reset`)
        self.undo: Optional[list] = None
        self._op_start = 0              # count when that op began
        self._op_warnings: list = []    # (text, where) of the GmRaceWarnings that op is to emit (`end_op`)

    # ------------------------------------------------------------------ eager ops (a refused op changes nothing)
    def begin_op(self) -> None:
        """An op is about to run eagerly (`pto_core.ops.registry.dispatch`): judge the earlier ops' pending
        writes (they have stored), then journal what this op's accesses change until `end_op` / `abort_op`."""
        if self.pending:
            self.flush()
        self.undo = []
        self._op_start = self.count
        self._op_warnings = []

    def end_op(self) -> None:
        """The op begun last ran to its end: its accesses stand, and so do the races it found (warned now)."""
        self.undo = None
        if self._op_warnings:
            held, self._op_warnings = self._op_warnings, []
            for text, where in held:
                self.machine.warn(text, GmRaceWarning, where, stacklevel=3)

    def abort_op(self) -> None:
        """The op begun last raised (the memory it wrote was put back, ALL_OR_NOTHING_WRITES): forget its
        accesses, so that no later access of another core is reported against them. Its race reports made
        before it was refused stay."""
        undo, self.undo = self.undo, None
        if undo is None:
            return
        self.pending = []               # all the op's own: `begin_op` judged the earlier ones
        for fn in reversed(undo):
            fn()
        self.count = self._op_start     # the races its earlier steps found are no races: it did not run (their
        self._op_warnings = []          # reports went with the undo above; its other reports stay, as on one core)

    def _unreport(self, item, warned: bool = False):
        """How to withdraw one race report of an eager op: ``item`` kept in ``machine.reports``, or None when the
        cap dropped it (counted in ``reports_dropped``, and in ``warned_dropped`` when ``warned``). Other kinds of
        report the op made stay."""
        m = self.machine

        def undo() -> None:
            if item is None:
                m.reports_dropped -= 1
                if warned:
                    m.warned_dropped -= 1
                return
            for i in range(len(m.reports) - 1, -1, -1):
                if m.reports[i] is item:
                    del m.reports[i]
                    return
        return undo

    # ------------------------------------------------------------------ phases
    def next_phase(self) -> None:
        """Every core passed an all-core barrier: later accesses are ordered after all earlier ones."""
        if self.pending:
            self.flush()
        self._regions.clear()           # fresh (lazily zeroed) masks cost less than clearing the old ones
        self.phase += 1

    def end_kernel(self) -> None:
        """The kernel ended on every core: compare pending writes, start the next run afresh."""
        self.next_phase()
        self.phase = 0

    def reset(self) -> None:
        """Forget a failed run's accesses and pending writes unchecked (`Machine.abort_kernel`)."""
        self.pending = []
        self._regions.clear()
        self.phase = 0
        self.undo = None
        self._op_warnings = []

    # ------------------------------------------------------------------ accesses
    def _region(self, buf) -> _Region:
        region = next((g for g in self.machine.gm.regions if g.buffer is buf), None)
        name = region.shown if region is not None else buf.label
        dtype = region.dtype if region is not None else None
        r = self._regions[id(buf)] = _Region(buf, name, dtype)
        if self.undo is not None:
            self.undo.append(lambda: self._regions.pop(id(buf), None))
        return r

    def access(self, ctx, buf, lo: int, hi: int, write: bool, operand: str = "",
               view: Optional[tuple] = None) -> None:
        """Record core ``ctx``'s access to bytes ``[lo, hi)`` of GM buffer ``buf`` and check it.

        ``view`` = ``(shape, strides)`` (bytes, last axis the bytes of one element or row) narrows
        the footprint to the bytes of that strided view starting at ``lo`` (it must lie in
        ``[lo, hi)``)."""
        if self.pending:
            self.flush()
        atomic = ctx.gm_atomic
        if atomic is not None:
            if not write:
                return                          # the read half of an atomic read-modify-write
            kind = _ATOMIC
        else:
            kind = _WRITE if write else _READ
        if hi <= lo:
            return
        if view is not None and sum((n - 1) * s for n, s in zip(*view)) + 1 > hi - lo:
            # the rows run past the span (a GM tail cut at the tensor's end): a read keeps the exact rows of
            # its outer items wholly inside and takes the rest of the span (GM_OVERREAD_READS_UNKNOWN makes
            # these long: the gaps before the cut are not read); a write takes the whole span
            view, hi = self._clip_view(ctx, buf, lo, hi, view, operand) if kind == _READ else (None, hi)
            if hi <= lo:
                return
        r = self._regions.get(id(buf)) or self._region(buf)
        core = ctx.core.index
        bounds = r.bounds
        store = None
        if kind == _WRITE:
            data = buf.data[lo:hi] if view is None else self._mask(buf.data, lo, hi, view)
            store = _Pending(r, data, data.copy(), lo, hi, None if view is None else view[1], core, ctx.op_name,
                             ctx.where, operand, None)
        for f in _CHECKS[kind]:
            for c, span in bounds[f].items():
                if c != core and span[0] < hi and lo < span[1]:
                    if r.todo[f]:
                        self._materialize(r, f)
                    m = self._mask(r.masks[f], lo, hi, view)
                    x = m & self._others[core]
                    if f == _CHANGED and np.count_nonzero(x):
                        x = self._drop_own_writes(r, core, lo, hi, view, x)
                    if np.count_nonzero(x):
                        if f == _WRITE and kind == _WRITE:
                            store.others = x        # write/write: judged once the op has stored
                        else:
                            self._conflict(ctx, r, f, kind, x, lo, hi, view, atomic, operand)
                    break
        if store is not None:
            self.pending.append(store)
        if self.undo is not None:
            self._journal_access(r, kind, core, atomic)
        r.todo[kind].append((core, lo, hi, view))
        if kind == _ATOMIC:
            r.atomic_ops.add(atomic)
        span = bounds[kind].get(core)
        if span is None:
            bounds[kind][core] = [lo, hi]
        else:
            if lo < span[0]:
                span[0] = lo
            if hi > span[1]:
                span[1] = hi
        # the log: merge with the last entry of the same core and site when adjacent or overlapping
        log = r.log
        where = ctx.where
        if log:
            e = log[-1]
            if (e.core == core and e.where is where and e.kind == kind and e.atomic == atomic
                    and lo <= e.hi and e.lo <= hi):
                if lo < e.lo:
                    e.lo = lo
                if hi > e.hi:
                    e.hi = hi
                return
        log.append(_Entry(lo, hi, core, kind, atomic, ctx.op_name, where, operand))

    def _journal_access(self, r: _Region, kind: int, core: int, atomic) -> None:
        """Keep how to undo the access of ``core`` about to be recorded in ``r`` (`abort_op`)."""
        span = r.bounds[kind].get(core)
        old_span = None if span is None else list(span)
        new_atomic = kind == _ATOMIC and atomic not in r.atomic_ops
        log = r.log
        n_log = len(log)
        last = (log[-1], log[-1].lo, log[-1].hi) if log else None

        def undo() -> None:
            r.todo[kind].pop()          # a `_materialize` since then was undone first: the entry is back
            if old_span is None:
                del r.bounds[kind][core]
            else:
                r.bounds[kind][core][:] = old_span
            if new_atomic:
                r.atomic_ops.discard(atomic)
            del log[n_log:]
            if last is not None:
                last[0].lo, last[0].hi = last[1], last[2]
        self.undo.append(undo)

    def _drop_own_writes(self, r: _Region, core: int, lo: int, hi: int, view, x: np.ndarray) -> np.ndarray:
        """``x`` (other cores' changer bits on the bytes a read of ``core`` covers) without the bytes ``core``
        itself wrote earlier in this phase: the read gets its own bytes or another core's write of them, and
        another core storing different bytes there is a write/write race, reported on its own."""
        span = r.bounds[_WRITE].get(core)
        if span is None or span[1] <= lo or hi <= span[0]:
            return x
        if r.todo[_WRITE]:
            self._materialize(r, _WRITE)
        drop = (self._mask(r.masks[_WRITE], lo, hi, view) & self._bit[core]) != 0
        if r.rechanged is not None:
            # a byte another core changed twice: its earlier value may have been there between this core's
            # store and this read, and no write/write compare saw it (it was gone before this core stored)
            drop &= (self._mask(r.rechanged, lo, hi, view) & x) == 0
        return np.where(drop, x.dtype.type(0), x)

    def _clip_view(self, ctx, buf, lo: int, hi: int, view: tuple, operand: str) -> tuple:
        """``(view, hi)`` of the outer items of a read's ``view`` that lie wholly in ``[lo, hi)``; the bytes
        from the first item that does not, up to ``hi``, are recorded as one more read of the span."""
        shape, strides = view
        inner = sum((n - 1) * s for n, s in zip(shape[1:], strides[1:])) + 1     # one outer item's extent
        if len(shape) < 2 or strides[0] <= 0 or inner > hi - lo:
            return None, hi
        k = (hi - lo - inner) // strides[0] + 1
        tail = lo + k * strides[0]
        if tail < hi:
            self.access(ctx, buf, tail, hi, False, operand)
        return ((k,) + tuple(shape[1:]), strides), lo + (k - 1) * strides[0] + inner

    def _materialize(self, r: _Region, kind: int) -> None:
        """Or the accesses of ``r.todo[kind]`` into ``r.masks[kind]`` (allocated on first use)."""
        mask = r.masks[kind]
        if self.undo is not None:
            self._journal_materialize(r, kind, mask)
        if mask is None:
            mask = r.masks[kind] = np.zeros(r.buf.data.shape[0], self._dtype)
        bit = self._bit
        if kind == _CHANGED:
            for core, lo, hi, view, where in r.todo[kind]:
                m = self._mask(mask, lo, hi, view)
                np.bitwise_or(m, bit[core], out=m, where=True if where is None else where)
        else:
            for core, lo, hi, view in r.todo[kind]:
                m = self._mask(mask, lo, hi, view)
                np.bitwise_or(m, bit[core], out=m)
        r.todo[kind].clear()

    def _journal_materialize(self, r: _Region, kind: int, mask: Optional[np.ndarray]) -> None:
        """Keep the accesses `_materialize` is about to or into ``mask`` and the mask bytes they cover."""
        todo = list(r.todo[kind])
        saved = None if mask is None else [(e, self._mask(mask, e[1], e[2], e[3]).copy()) for e in todo]

        def undo() -> None:
            if saved is None:
                r.masks[kind] = None
            else:
                for e, old in reversed(saved):
                    self._mask(r.masks[kind], e[1], e[2], e[3])[...] = old
            r.todo[kind][:] = todo
        self.undo.append(undo)

    @staticmethod
    def _mask(mask: np.ndarray, lo: int, hi: int, view: Optional[tuple]) -> np.ndarray:
        if view is None:
            return mask[lo:hi]
        shape, strides = view
        isz = mask.itemsize
        return np.ndarray(shape, mask.dtype, mask, lo * isz, tuple(s * isz for s in strides))

    # ------------------------------------------------------------------ conflicts (slow path)
    def _conflict(self, ctx, r, f, kind, x, lo, hi, view, atomic, operand) -> None:
        """Bytes of this access that other cores accessed with kind ``f`` (their bits: ``x``)."""
        strides = None if view is None else view[1]
        if f == _ATOMIC and kind == _ATOMIC:
            # atomic over other cores' atomics: a race only if they are atomics of another op
            self._atomic_mix(ctx, r, x != 0, lo, strides, atomic, operand)
            return
        offs, vals = self._nonzero(x, lo, strides)
        obit = int(vals[0]).bit_length() - 1
        first, end = int(offs[0]), _run_end(offs)
        if f == _CHANGED:
            # a read of bytes another core changed: report the run of bytes it wrote around the first one
            f = _WRITE
            if r.todo[_WRITE]:
                self._materialize(r, _WRITE)
            both, _ = self._nonzero(self._mask(r.masks[_WRITE], lo, hi, view) & self._others[ctx.core.index], lo,
                                    strides)
            first, end = _run_around(both, first)
        entry = self._find(r, int(offs[0]), f, obit)
        label = "atomic/plain" if _ATOMIC in (kind, f) else "read/write"
        self._report(ctx, r, entry, first, end, label, kind, atomic, operand, other=(obit, f))

    def _atomic_mix(self, ctx, r, soft, lo, strides, atomic, operand) -> None:
        if r.atomic_ops <= {atomic}:
            return                              # only atomics of this op so far: nothing to find in the log
        core = ctx.core.index
        offs, _ = self._nonzero(soft, lo, strides)
        for e in reversed(r.log):
            if e.kind == _ATOMIC and e.atomic != atomic and e.core % self.width != core % self.width:
                hit = offs[(offs >= e.lo) & (offs < e.hi)]
                if hit.size:
                    self._report(ctx, r, e, int(hit[0]), _run_end(hit), "atomic/atomic", _ATOMIC, atomic, operand)
                    return

    @staticmethod
    def _nonzero(bits: np.ndarray, lo: int, strides) -> tuple:
        """``(offsets, values)`` of the non-zero entries of ``bits`` (a view shaped like an access's mask
        view), sorted by byte offset in the region."""
        if strides is None:
            idx = np.flatnonzero(bits)
            return lo + idx, bits[idx]
        idx = np.nonzero(bits)
        offs = np.full(idx[0].shape, lo, dtype=np.int64)
        for i, s in zip(idx, strides):
            offs += i * s
        order = np.argsort(offs, kind="stable")
        return offs[order], bits[idx][order]

    def _find(self, r, off: int, kind: int, bit: int) -> Optional[_Entry]:
        for e in reversed(r.log):
            if e.kind == kind and e.core % self.width == bit and e.lo <= off < e.hi:
                return e
        return None

    def flush(self) -> None:
        """Judge the pending plain writes now that their ops have stored: the bytes each changed race with
        other cores' plain writes (write/write) and reads (read/write) of them; record them as changed."""
        pending, self.pending = self.pending, []
        for p in pending:
            changed = p.data != p.before
            if not changed.any():
                continue
            r, lo, hi = p.region, p.base, p.hi
            # how to forget this record of changed bytes (kept before any of it changes, journalled last: the
            # masks the code below materialises are put back first)
            forget = self._journal_flush(r, p.core) if self.undo is not None else None
            if p.others is not None:
                self._judged(p, p.others, changed, _WRITE, "write/write")
            others = self._others[p.core]
            for c, span in r.bounds[_READ].items():
                if c != p.core and span[0] < hi and lo < span[1]:
                    if r.todo[_READ]:
                        self._materialize(r, _READ)
                    x = self._mask(r.masks[_READ], lo, hi, self._view(p)) & others
                    self._judged(p, x, changed, _READ, "read/write")
                    break
            span = r.bounds[_CHANGED].get(p.core)
            if span is not None and span[0] < hi and lo < span[1]:
                runs = r.changed_runs.get(p.core) if CHANGED_RUNS else None
                if runs is None or _runs_overlap(runs, lo, hi):
                    self._note_rechanged(p, changed)
            if CHANGED_RUNS:
                runs = r.changed_runs.get(p.core)
                if runs is None:
                    r.changed_runs[p.core] = ([lo], [hi])
                else:
                    _runs_add(runs, lo, hi)
            if forget is not None:
                self.undo.append(forget)
            # recorded for reads to come; or-ed into the mask only when one needs it (`_materialize`)
            r.todo[_CHANGED].append((p.core, lo, hi, self._view(p), None if changed.all() else changed))
            span = r.bounds[_CHANGED].get(p.core)
            if span is None:
                r.bounds[_CHANGED][p.core] = [lo, hi]
            else:
                span[0], span[1] = min(span[0], lo), max(span[1], hi)

    def _journal_flush(self, r: _Region, core: int):
        """How to undo recording a pending write of ``core`` in ``r`` as changed bytes (`flush`)."""
        span = r.bounds[_CHANGED].get(core)
        old_span = None if span is None else list(span)
        runs = r.changed_runs.get(core)
        old_runs = None if runs is None else (list(runs[0]), list(runs[1]))
        rechanged = None if r.rechanged is None else r.rechanged.copy()

        def undo() -> None:
            r.todo[_CHANGED].pop()
            if old_span is None:
                del r.bounds[_CHANGED][core]
            else:
                r.bounds[_CHANGED][core][:] = old_span
            if old_runs is None:
                r.changed_runs.pop(core, None)
            else:
                r.changed_runs[core] = old_runs
            r.rechanged = rechanged
        return undo

    def _note_rechanged(self, p: _Pending, changed: np.ndarray) -> None:
        """Mark in ``rechanged`` the bytes ``p`` changed that its core had already changed this phase."""
        r, view, bit = p.region, self._view(p), self._bit[p.core]
        if r.todo[_CHANGED]:
            self._materialize(r, _CHANGED)
        again = changed & ((self._mask(r.masks[_CHANGED], p.base, p.hi, view) & bit) != 0)
        if again.any():
            if r.rechanged is None:
                r.rechanged = np.zeros(r.buf.data.shape[0], self._dtype)
            m = self._mask(r.rechanged, p.base, p.hi, view)
            np.bitwise_or(m, bit, out=m, where=again)

    @staticmethod
    def _view(p: _Pending) -> Optional[tuple]:
        return None if p.strides is None else (p.data.shape, p.strides)

    def _judged(self, p: _Pending, others: np.ndarray, changed: np.ndarray, kind: int, label: str) -> None:
        """Report the bytes ``p`` changed that other cores (bits ``others``) accessed with ``kind`` this phase;
        the range reported is the run of bytes both touched around the first changed one."""
        sel = others * changed
        if not sel.any():
            return
        offs, vals = self._nonzero(sel, p.base, p.strides)
        first = int(offs[0])
        obit = int(vals[0]).bit_length() - 1
        entry = self._find(p.region, first, kind, obit)

        def around() -> tuple:
            both, _ = self._nonzero(others, p.base, p.strides)
            return _run_around(both, first)
        self._report(p, p.region, entry, None, None, label, _WRITE, None, p.operand, other=(obit, kind),
                     span_of=around)

    # ------------------------------------------------------------------ reporting
    def _report(self, cur, r, entry, first, end, label, kind, atomic, operand, other=None, span_of=None) -> None:
        """Record (or raise) one race unless its sites were reported already or the report list is full.
        ``span_of``: instead of ``first, end``, a function returning them, called only when the report is made
        (a kernel racing on every row repeats one pair of sites thousands of times)."""
        self.count += 1
        if isinstance(cur, _Pending):
            core, op, where = cur.core, cur.op, cur.where
        else:
            core, op, where = cur.core.index, cur.op_name, cur.where
        if entry is not None:
            ocore, okind, oatomic, oop, owhere = entry.core, entry.kind, entry.atomic, entry.op, entry.where
        else:
            ocore, okind = other if other is not None else (None, _WRITE)
            oatomic, oop, owhere = None, "", None
        key = (label, r.name, op, id(where), oop, id(owhere))
        if key in self._seen:
            return
        self._seen.add(key)
        if self.undo is not None:       # an eager op's race: forgotten with it if it is refused (`abort_op`)
            self.undo.append(lambda: self._seen.discard(key))
        mode = self.mode
        if mode == "record" and len(self.machine.reports) >= self.machine.options.max_reports:
            self.machine.reports_dropped += 1        # counted like every other capped report (MachineOptions)
            if self.undo is not None:
                self.undo.append(self._unreport(None))
            return                                   # (`"warn"` still warns: a GmRaceWarning per distinct race)
        if span_of is not None:
            first, end = span_of()
        words = wording_of(where, owhere)
        tname = None
        span = f"bytes [{first}, {end})"
        if r.dtype is not None and r.dtype.bits >= 8:
            size = r.dtype.bits // 8
            e0, e1 = first // size, (end - 1) // size
            tname = getattr(r.dtype, words.dtype_attr, None) or r.dtype.name
            elems = f"{tname} element{'s' if e1 > e0 else ''} {e0}" + (f"..{e1}" if e1 > e0 else "")
            # a front end's users index tensors by element: the elements first, the bytes in parentheses
            span = f"{elems} ({span})" if words.by_call else f"{span} ({elems})"

        def spell(t: str) -> str:
            try:
                return getattr(_dtype(t), words.dtype_attr, None) or t
            except UnknownName:     # an atomic type name no dtype spells: shown as given
                return t

        def verb(k, a):
            if k != _ATOMIC:
                return _KIND_WORD[k]
            return f"atomic-{a[1]}s as {spell(a[0])}" if words.by_call else f"atomic-{a[1]}s ({a[0]})"

        def past(k, a):
            if k != _ATOMIC:
                return {_READ: "read", _WRITE: "wrote"}[k]
            return f"atomic-{a[1]}ed as {spell(a[0])}" if words.by_call else f"atomic-{a[1]}ed ({a[0]})"

        def name(o, w):
            """An access's op as its user wrote it: the front end's call (at file:line), or the PTO op."""
            if words.by_call and w is not None and w.call:
                return f"{w.call} at {w.file}:{w.line}" + (f" ({w.detail})" if w.detail else "")
            return f"{o or 'op'}{at_site(w, o)}"

        them = (f"core {ocore}'s {name(oop, owhere)} {past(okind, oatomic)}"
                if ocore is not None else "another core wrote")
        diff = ", with different values," if label == "write/write" else ""
        what = "elements" if words.by_call and tname is not None else "bytes"
        phase = (f"before the first {words.barrier}" if self.phase == 0
                 else f"after {words.barrier} pass {self.phase}")
        msg = (f"GM race ({label}) on {words.region} {r.name!r} {span} in barrier phase {self.phase} ({phase}): "
               f"core {core} {verb(kind, atomic)}{diff} {what} that {them}, with no {words.barrier} between "
               f"them; on hardware the result depends on which core comes first.")
        hint = words.fixes.get(label, "order the cores with {barrier}").format(
            region=repr(r.name), barrier=words.barrier, dtype=tname or f"the {words.region}'s type")
        shown_op, shown_operand = op, operand
        if words.by_call and where is not None and where.call and where.call != op:
            shown_op = where.call               # the front end's call, named by the provenance ("in `tik.data_move`")
            if words.operand is not None and operand:
                shown_operand = words.operand(where.call, operand)
        err = GmRace(msg, op=shown_op or None, operand=shown_operand or None, value=f"[{first}, {end})",
                     where=where, hint=hint)
        err.kind = label
        err.region = r.name
        err.byte_range = (first, end)
        err.cores = (ocore, core)
        err.first = (oop, owhere)
        err.second = (op, where)
        if mode == "raise":
            raise err
        text = str(err)
        n_reports = len(self.machine.reports)
        self.machine.report("race", text, warned=mode == "warn")   # past max_reports: counted in reports_dropped, not kept
        if self.undo is not None:
            reports = self.machine.reports
            self.undo.append(self._unreport(reports[-1] if len(reports) > n_reports else None, mode == "warn"))
        if mode == "warn":
            if self.undo is not None:   # warned when the op has run to its end (`end_op`)
                self._op_warnings.append((text, where))
            else:
                self.machine.warn(text, GmRaceWarning, where, stacklevel=4)   # at the second access's line


def _run_around(offs: np.ndarray, first: int) -> tuple:
    """``[lo, hi)`` of the run of consecutive byte offsets in sorted ``offs`` that contains ``first``."""
    j = int(np.searchsorted(offs, first))
    while j > 0 and offs[j - 1] == offs[j] - 1:
        j -= 1
    return int(offs[j]), _run_end(offs[j:])


def _run_end(offs: np.ndarray) -> int:
    """End of the run of consecutive byte offsets that starts at ``offs[0]``."""
    if offs.size == 1:
        return int(offs[0]) + 1
    gaps = np.flatnonzero(np.diff(offs) != 1)
    n = int(gaps[0]) + 1 if gaps.size else offs.size
    return int(offs[0]) + n


__all__ = ["GmRaceTracker", "MAX_CORE_BITS", "RaceWording", "PTO_RACE_WORDING", "add_race_wording", "wording_of"]
