"""The pipe hazard verifier: every cross-pipe access needs a happens-before edge.

One `HazardTracker` per core (created by `Machine` when
``MachineOptions.check_hazards`` is on). `ExecContext` reports each op's start
(`begin_op`, with the op's pipe) and every byte range it reads or writes
(`on_access`); the sync ops report their edges (`flag_set`/`flag_wait`, `barrier`)
and the cube/FIXPIPE ops their unit-flag handshakes.

Rules (checked per 32-byte block, see `shadow`):

* RAW: a read by pipe P of bytes last written by pipe Q;
* WAW: a write by P of bytes last written by Q;
* WAR: a write by P of bytes read by Q since their last write (the double-buffering
  bug: refilling a ping-pong buffer before its consumer finished);

each is a `HazardError` unless the earlier access happens before the current op:

* a ``set_flag(Q, P', e)`` issued after it, matched by a ``wait_flag(Q, P', e)`` before
  the current op, transitively over pipes (vector clocks, `vector_clock`);
* a ``pipe_barrier(ALL)`` between them;
* buffer-id tokens: an ``rls_buf(Q, id)`` issued after it and a later blocking
  ``get_buf(P, id)`` before the current op (`flags.FlagTable.get_buf`);
* a unit-flag handshake: mad ``unit_flag(check_and_set)`` -> FIXPIPE
  ``unit_flag(check_only|check_and_clear)`` orders the mad's L0C writes before the
  FIXPIPE reads of the published bytes; FIXPIPE ``check_and_clear`` -> a later mad's
  ``unit_flag(check_*)`` orders the FIXPIPE reads before the mad's writes (WAR);
* program order, when both ops are on the same pipe (``hazard_same_pipe="ordered"``,
  the default) — or, with ``"barrier"``, a ``pipe_barrier(P)`` / ``set_flag(P, P)``
  pair between them (pipe S is always in order).

Sync ops themselves are issued by the scalar unit: they run on pipe ``S`` for
``begin_op`` (they touch no memory) and act on the clocks of the pipes they name.

Cost: an access first compares the buffer's newest writer / reader epochs per pipe with
what the current op knows (no per-block work when nothing is newer); otherwise it tests
the runs of equal stamps its block range overlaps (`shadow.BlockMap`; few, whatever the
size of the access) on Python ints, and builds per-block arrays only to apply unit-flag
grants or to name the first conflicting bytes in the error. During a compiled run an access
is recorded as soon as it passed its checks (`RECORD_AT_ONCE`); eager ops and
``hazard_same_pipe="barrier"`` record an op's accesses when the next op begins (a list splice
per access; a read that a later write of the same op covers is not recorded: the write clears
it). A buffer only ever accessed on one block range (an L0 tile) keeps its history as one
stamp and a few epochs (`shadow.TILE_SHADOWS`). The bound flag ops (`ops.sync.FLAG_BIND`)
skip `begin_op`: `begin_sync_op` counts them on pipe S and they act on the clocks by pipe index.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Optional

import numpy as np

from ..errors import HazardError, Provenance, SyncError, at_site
from ..pipes import PIPE_INDEX, PIPES, asm_pipe, pipe_name
from .flags import flag_text
from .shadow import BLOCK, BLOCK_SHIFT, BlockMap, BufferShadow, block_range
from .vector_clock import ALWAYS, NUM_PIPES, PipeClocks

_S = PIPE_INDEX["S"]
_M = PIPE_INDEX["M"]
_FIX = PIPE_INDEX["FIX"]

#: Accesses of at most this many 32-byte blocks are checked on Python ints (cheaper than numpy there).
_FEW_BLOCKS = 16

#: Once the per-read scans for a later covering write of the same op (O(n^2) in the op's accesses) have
#: stepped over this many accesses, the op's remaining reads are looked up in one sorted sweep
#: (`_covered_reads`, O(n log n)): an in-place vnchwconv ordered repeat by repeat makes 32 accesses per
#: repeat. Below it the scans are cheaper (most reads are of buffers the op does not write: no scan at all).
_SCAN_BUDGET = 2048

#: Named choice RECORD_AT_ONCE: during a compiled run (`HazardTracker.begin_run`) with same-pipe program order
#: (``hazard_same_pipe="ordered"``), an access is recorded in the shadow as soon as it is checked, not when the
#: next op begins (`_flush`). The verdicts and messages are the same: the op's own earlier accesses are on its
#: own pipe, which it never conflicts with in that mode, and a record of it only hides history it already passed
#: (thresholds only grow during an op); a read that a later write of the op covers is recorded and then cleared
#: instead of skipped (the same history: that read map holds zeros there, which never conflict). Deferring stays for
#: eager ops (a refused op must leave no record: `abort_op`; a compiled run ends at its first error) and for
#: ``hazard_same_pipe="barrier"``. tests/core/test_hazard_fast_paths.py runs both ways; migration_guide/pto_sync.md
#: §5. False: always deferred.
RECORD_AT_ONCE = True

#: Named choice UNIT_FLAG_PROGRAM_ORDER: with same-pipe program order (``hazard_same_pipe="ordered"``, the
#: default: an op of a pipe happens before the pipe's later ops), a unit-flag grant also holds for the later ops
#: of the checking op's pipe, as a ``wait_flag`` orders every later op of its pipe: a FIXPIPE without unit flag
#: reading L0C bytes after a FIXPIPE ``unit_flag(check_only|check_and_clear)`` that was granted those bytes (the
#: publishing mad's writes of them) comes after that FIXPIPE, which came after the mad's writes (likewise a mad
#: after a mad ``unit_flag(check_*)`` for the clearing FIXPIPE's reads, though the checking mad overwrites those
#: bytes itself). Only the granted bytes and the publishing op's accesses of them are covered; the other way
#: round (the check following the earlier ops of the *publishing* op's pipe) is not taken (pto_sync.md §4 open
#: question: consecutive mads overlap on hardware, PipeBarrier<PIPE_M>). Source: Ascend C ``UnitFlag.md``
#: (asc-devkit, Mmad key features): one flag bit per 512 B L0C block; a FIXPIPE with unitFlag 2/3 waits until the
#: bit is 1 (set when the mad with unitFlag 3 has written the block) before it reads -- a blocking step of the
#: checking instruction, after which the pipe's program order applies as after a ``wait_flag``. With
#: ``hazard_same_pipe="barrier"`` program order is no edge, so the grant stays the checking op's. False: the
#: grant covers only the checking op (before this choice). migration_guide/pto_sync.md §4.
UNIT_FLAG_PROGRAM_ORDER = True

#: Named choice BATCH_RUN_RECORDS: under `RECORD_AT_ONCE`, a burst access of several rows (`on_access_runs`: a
#: FIXPIPE or MTE writing ``count`` GM rows) that passed its checks on a buffer whose history is in maps is recorded
#: with one `BlockMap.assign_ranges` per map (the rows' block ranges, touching ones merged) instead of one
#: `BlockMap.assign` per row and map. The maps hold the same values (the same runs; only the moment a map turns into
#: its array form past `shadow.MAX_RUNS` can differ, which no check sees), so verdicts, messages and reports do not
#: change. A buffer still in the tile form (`shadow.TILE_SHADOWS`), a negative or zero stride, one row, and an access
#: that needs the per-block checks take the per-row path. tests/core/test_hazard_fast_paths.py runs both ways;
#: migration_guide/pto_sync.md §5. False: one record per row.
BATCH_RUN_RECORDS = True

_BLOCK_MASK = BLOCK - 1

#: The runs of a read map with no read since the last write anywhere (`BlockMap.vals`; a dense map's are None).
_NO_READ = [0]

_VERBS = {  # kind -> (what the current op does, what the earlier op did)
    "RAW": ("reads", "wrote"),
    "WAW": ("overwrites", "wrote"),
    "WAR": ("overwrites", "read"),
}


def _span(mask, b0: int, lo: int, hi: int) -> str:
    """``[first, last)`` bytes of the blocks set in ``mask`` (blocks from ``b0``), clipped to ``[lo, hi)``."""
    idx = np.flatnonzero(mask)
    return f"[{max(lo, int(b0 + idx[0]) * BLOCK):#x}, {min(hi, int(b0 + idx[-1] + 1) * BLOCK):#x})"


def _covered_reads(pending: list) -> set:
    """Indices of the read accesses in ``pending`` (``(shadow, b0, b1, is_write)``) whose blocks ``[b0, b1)`` lie
    inside one later write access of the same shadow: one backward sweep with a prefix-maximum (Fenwick) tree of
    write ends over the write starts, per shadow."""
    starts: dict = {}
    for sh, b0, _b1, w in pending:
        if w:
            starts.setdefault(sh, set()).add(b0)
    trees = {sh: (sorted(v), [0] * (len(v) + 1)) for sh, v in starts.items()}
    covered = set()
    for i in range(len(pending) - 1, -1, -1):
        sh, b0, b1, w = pending[i]
        t = trees.get(sh)
        if t is None:
            continue
        keys, tree = t
        if w:                       # max-update at the write's start
            k = bisect_right(keys, b0)
            n = len(tree)
            while k < n:
                if tree[k] < b1:
                    tree[k] = b1
                k += k & -k
        else:                       # the largest end of a later write starting at or before b0
            k = bisect_right(keys, b0)
            end = 0
            while k > 0:
                if tree[k] > end:
                    end = tree[k]
                k -= k & -k
            if end >= b1:
                covered.add(i)
    return covered


class _Grant:
    """A unit-flag edge for the current op: earlier accesses by ``pipe[i]`` with epoch
    ``<= epoch[i]`` to block ``b0 + i`` of ``shadow`` happen before it."""

    __slots__ = ("shadow", "b0", "b1", "pipe", "epoch")

    def __init__(self, shadow, b0, b1, pipe, epoch):
        self.shadow, self.b0, self.b1, self.pipe, self.epoch = shadow, b0, b1, pipe, epoch


class HazardTracker:
    """Vector-clock race detector for the pipes of one core (see module doc).

    Args:
        ctx: the core's `ExecContext`; options come from ``ctx.machine.options``.

    A `HazardError` it raises carries, besides the usual fields: ``kind`` (``"RAW"``,
    ``"WAW"``, ``"WAR"``), ``buffer`` (label), ``byte_range`` (offsets in the buffer),
    ``first`` / ``second`` (``(op name, pipe, where)`` of the earlier and the current op).
    """

    def __init__(self, ctx):
        self.ctx = ctx
        self.strict_same_pipe = ctx.machine.options.hazard_same_pipe == "barrier"
        self.clocks = PipeClocks()
        self.shadows: dict = {}
        self._op_table: list = [("", None)]       # op id -> (asm name, where); id 0 = unknown
        self._op_ids: dict = {}
        self._epoch_ops = [[0] for _ in range(NUM_PIPES)]   # pipe -> op id per epoch (0: no access; filled lazily)
        # the op being executed
        self._name = ""
        self._where: Optional[Provenance] = None
        self._pipe = _S
        self._epoch = 0
        self._op_id = 0
        self._thr_list = None     # per pipe: highest epoch ordered before the current op
        self._limits = None       # the same as stamp limits, index 7 = "never written"
        self._thr_cache: dict = {}   # pipe -> (thr_list, limits), valid until the clocks change
        self._grants: list = []
        self._pending: list = []     # the current op's accesses, recorded when it ends
        self._last_write: dict = {}  # shadow -> index in ``_pending`` of the op's last write access to it
        self._unit_known: dict = {}  # (pipe, epoch) of a unit-flag publish/clear -> what that op waited for
        self._undo: list = []        # the current op's unit-flag changes, as (shadow, b0, b1, saved arrays)
        self._known_saved = None     # the current op's pipe row of the clocks before a unit-flag acquire
        self._unit_op = False        # the current op set ``_grants`` / ``_undo`` / ``_known_saved`` (unit flags)
        self._at_once = False        # record accesses as they are checked (`begin_run`, RECORD_AT_ONCE)
        # UNIT_FLAG_PROGRAM_ORDER (a): (shadow, granted pipe) -> {earlier pipe: per-block epoch array}: accesses
        # of that pipe with epoch <= the entry happen before every later op of the granted pipe
        self._pipe_grants: dict = {}
        self._pg_undo: list = []     # the current op's changes to ``_pipe_grants``, for `abort_op`

    # ------------------------------------------------------------------ op bracketing
    def begin_op(self, op_name: str, pipe: str, where: Optional[Provenance]) -> None:
        if self._pending:
            self._flush()
        if self._unit_op:                       # the previous op's unit-flag state is done with
            self._undo = []
            self._pg_undo = []
            self._known_saved = None
            self._grants = []
            self._unit_op = False
        p = PIPE_INDEX.get(pipe)
        if p is None:
            p = PIPE_INDEX[pipe_name(pipe)]
        self._name = op_name
        self._where = where
        self._pipe = p
        epoch = self.clocks.epoch               # PipeClocks.tick, inlined
        self._epoch = epoch[p] = epoch[p] + 1
        self._op_id = 0
        self._thr_list = None

    def begin_run(self) -> None:
        """A compiled run starts (`Machine.begin_compiled_run`): until `reset` (its end), record each access as it
        is checked (`RECORD_AT_ONCE`), unless same-pipe ops need barriers (``hazard_same_pipe="barrier"``: the
        op's own accesses would then conflict with each other)."""
        self._at_once = RECORD_AT_ONCE and not self.strict_same_pipe
        if self._at_once and self._pending:
            self._flush()            # (an eagerly issued op's accesses, recorded with its pipe and epoch)

    def begin_sync_op(self) -> None:
        """`begin_op` of a bound flag op (`ops.sync.FLAG_BIND`): an op on pipe S that accesses no memory and
        reports no hazard. It counts on pipe S (the epochs error messages name); the previous op stays the
        current one for the tracker, so its accesses are recorded at the next `begin_op`, with its pipe and
        epoch, as they would be now (a flag changes the clocks, which recording does not read)."""
        self.clocks.epoch[_S] += 1

    def abort_op(self) -> None:
        """The current op raised: forget the accesses it reported (it did not run, so a later op must not be
        checked against them) and undo its unit-flag publish/consume and what a unit-flag check taught its pipe
        (a refused FIXPIPE ``check_and_clear`` left the tile consumed: its retry was a deadlock). Its epoch
        stays used; nothing refers to it."""
        self._pending.clear()
        self._last_write = {}
        for sh, b0, b1, saved in reversed(self._undo):
            sh.u_pub[b0:b1], sh.u_pub_pipe[b0:b1], sh.u_clr[b0:b1], sh.u_clr_pipe[b0:b1], sh.u_seen[b0:b1] = saved
        self._undo = []
        for arr, b0, b1, saved in reversed(self._pg_undo):
            arr[b0:b1] = saved
        self._pg_undo = []
        if self._known_saved is not None:
            self.clocks.known[self._pipe] = self._known_saved
            self._known_saved = None
            self._clocks_changed()
        self._unit_known.pop((self._pipe, self._epoch), None)
        self._grants = []
        self._unit_op = False

    def _save_unit(self, sh, b0: int, b1: int) -> None:
        """Keep the unit-flag state of blocks ``[b0, b1)`` for `abort_op`."""
        self._unit_op = True
        self._undo.append((sh, b0, b1, (sh.u_pub[b0:b1].copy(), sh.u_pub_pipe[b0:b1].copy(), sh.u_clr[b0:b1].copy(),
                                        sh.u_clr_pipe[b0:b1].copy(), sh.u_seen[b0:b1].copy())))

    def _thresholds(self) -> list:
        p = self._pipe
        thr = self._thr_cache.get(p)
        if thr is None:                         # PipeClocks.thresholds, inlined
            thr = self._thr_cache[p] = list(self.clocks.known[p])
            if not self.strict_same_pipe or p == _S:
                thr[p] = ALWAYS
        self._thr_list = thr
        self._limits = None
        return thr

    def _stamp_limits(self) -> np.ndarray:
        """Thresholds as stamp limits (``epoch > thr[q]  <=>  stamp > lim[q]``); index 7 = never written."""
        if self._limits is None:
            self._limits = np.array([t if t == ALWAYS else (t << 3) | 7 for t in self._thr_list] + [ALWAYS],
                                    dtype=np.int64)
        return self._limits

    def _clocks_changed(self) -> None:
        self._thr_cache.clear()
        self._thr_list = None

    def _flush(self) -> None:
        """Record the finished op's accesses. Deferred so that an op is only ever checked against
        *other* ops (an op that reads then writes the same bytes does not race with itself)."""
        p, e = self._pipe, self._epoch
        stamp = (e << 3) | p
        pending = self._pending
        last_write = self._last_write           # shadow -> index of the op's last write access to it
        self._last_write = {}
        covered_set = None
        scanned = 0
        for i, (sh, b0, b1, is_write) in enumerate(pending):     # BufferShadow.record_write / record_read, inlined
            if sh.t1:
                sh.materialize()                # (the tile form is recorded at once only)
            if is_write:
                sh.w.assign(b0, b1, stamp)
                for r in sh.r.values():
                    vals = r.vals
                    if vals is not None and len(vals) == 1 and vals[0] == 0:
                        continue                # no read of this pipe since the last write anywhere: nothing to clear
                    r.assign(b0, b1, 0)
                sh.max_w[p] = e
                continue
            lw = last_write.get(sh, -1) if last_write else -1
            if i < lw and covered_set is None:
                scanned += lw - i
                if scanned > _SCAN_BUDGET:
                    covered_set = _covered_reads(pending)
            if covered_set is not None:
                if i in covered_set:
                    continue    # (the same test as below, computed by one sweep)
            elif i < lw:
                covered = False
                for j in range(i + 1, min(lw, len(pending) - 1) + 1):
                    s2, w0, w1, w = pending[j]
                    if w and s2 is sh and w0 <= b0 and b1 <= w1:
                        covered = True
                        break
                if covered:
                    continue    # a later write of the same op covers these blocks and clears this read anyway
            r = sh.r.get(p)
            if r is None:
                r = sh.r[p] = BlockMap(sh.nblocks, 0)
            r.assign(b0, b1, e)
            sh.max_r[p] = e
        pending.clear()

    def _record_op(self) -> None:
        """Intern the current op (name, where) and remember it for its (pipe, epoch)."""
        key = (self._name, id(self._where))   # the table keeps ``where`` alive, so its id stays unique
        oid = self._op_ids.get(key)
        if oid is None:
            oid = self._op_ids[key] = len(self._op_table)
            self._op_table.append((self._name, self._where))
        self._op_id = oid
        ops = self._epoch_ops[self._pipe]
        gap = self._epoch - len(ops)
        if gap == 0:                            # (the op's first access: no entry for its epoch yet)
            ops.append(oid)
        elif gap > 0:
            ops.extend([0] * gap)               # the pipe's ops since its last entry accessed no memory
            ops.append(oid)
        else:
            ops[self._epoch] = oid

    def _op_at(self, pipe: int, epoch: int) -> tuple:
        ops = self._epoch_ops[pipe]
        return self._op_table[ops[epoch] if epoch < len(ops) else 0]

    def _shadow(self, buf) -> BufferShadow:
        sh = self.shadows.get(buf)
        if sh is None:
            sh = self.shadows[buf] = BufferShadow(buf)
        return sh

    # ------------------------------------------------------------------ accesses
    def on_access(self, buf, lo: int, hi: int, is_write: bool, operand: str = "") -> None:
        """Check one access of the current op to bytes ``[lo, hi)`` of ``buf``, then record it."""
        if hi <= lo:
            return
        sh = self.shadows.get(buf)
        if sh is None:
            sh = self.shadows[buf] = BufferShadow(buf)
        b0, b1 = lo >> BLOCK_SHIFT, (hi + _BLOCK_MASK) >> BLOCK_SHIFT      # block_range, inlined
        thr = self._thr_list or self._thresholds()
        for q, e in sh.max_w.items():           # fast path: nothing newer than what this op knows
            if e > thr[q]:
                self._check_writer(sh, b0, b1, lo, hi, is_write, operand)
                break
        if is_write:
            for q, e in sh.max_r.items():
                if e > thr[q]:
                    self._check_readers(sh, b0, b1, lo, hi, operand)
                    break
        if not self._op_id:
            self._record_op()
        if not self._at_once:
            if is_write:
                self._last_write[sh] = len(self._pending)
            self._pending.append((sh, b0, b1, is_write))
            return
        p, e = self._pipe, self._epoch            # _record_now, inlined
        t1 = sh.t1
        if t1:                                  # TILE_SHADOWS: the tile again, or the first record
            if b1 == t1 and b0 == sh.t0:
                if is_write:
                    sh.tw = (e << 3) | p
                    if sh.tr:
                        sh.tr = {}
                    sh.max_w[p] = e
                else:
                    sh.tr[p] = e
                    sh.max_r[p] = e
                return
            if t1 < 0:
                self._tile_start(sh, b0, b1, is_write)
                return
            sh.materialize()
        if is_write:
            w = sh.w
            if b0 == 0 and b1 == w.n:
                w.starts, w.vals, w.arr = [0], [(e << 3) | p], None
            else:
                w.assign(b0, b1, (e << 3) | p)
            for r in sh.r.values():
                if r.vals != _NO_READ:
                    r.assign(b0, b1, 0)
            sh.max_w[p] = e
        else:
            r = sh.r.get(p)
            if r is None:
                r = sh.r[p] = BlockMap(sh.nblocks, 0)
            if b0 == 0 and b1 == r.n:
                r.starts, r.vals, r.arr = [0], [e], None
            else:
                r.assign(b0, b1, e)
            sh.max_r[p] = e

    def on_access_rmw(self, buf, lo: int, hi: int) -> bool:
        """`on_access` of a read of bytes ``[lo, hi)`` of ``buf`` and then of a write of the same bytes by the current
        op (a ``mad_acc``'s L0C tile: `memory.RMW_SPANS`), at once when neither can conflict: nothing in ``buf`` is
        newer than the op knows (the fast-path tests of both calls; the op's own read, which the write's test would
        also see, is on its own pipe, which it never conflicts with where it is recorded at once). Returns False,
        having changed nothing, when that does not hold or ``buf`` has no history yet: the caller then makes the
        two `on_access` calls, in their order, which check and report as ever."""
        sh = self.shadows.get(buf)
        if sh is None or hi <= lo:
            return False
        thr = self._thr_list or self._thresholds()
        for q, e in sh.max_w.items():
            if e > thr[q]:
                return False
        for q, e in sh.max_r.items():
            if e > thr[q]:
                return False
        if not self._op_id:
            self._record_op()
        b0, b1 = lo >> BLOCK_SHIFT, (hi + _BLOCK_MASK) >> BLOCK_SHIFT
        if not self._at_once:
            pending = self._pending
            pending.append((sh, b0, b1, False))
            self._last_write[sh] = len(pending)
            pending.append((sh, b0, b1, True))
            return True
        if sh.t1 == b1 and sh.t0 == b0:         # the tile again: the read's record, then the write's (which drops it)
            p, e = self._pipe, self._epoch
            sh.max_r[p] = e
            sh.tw = (e << 3) | p
            sh.tr = {}
            sh.max_w[p] = e
            return True
        self._record_now(sh, b0, b1, False)
        self._record_now(sh, b0, b1, True)
        return True

    def _tile_start(self, sh, b0: int, b1: int, is_write: bool) -> None:
        """The first record of ``sh`` (`RECORD_AT_ONCE`): the tile form on blocks ``[b0, b1)`` (`shadow.TILE_SHADOWS`)."""
        p, e = self._pipe, self._epoch
        sh.t0, sh.t1 = b0, b1
        if is_write:
            sh.tw = (e << 3) | p
            sh.max_w[p] = e
        else:
            sh.tr[p] = e
            sh.max_r[p] = e

    def _record_now(self, sh, b0: int, b1: int, is_write: bool) -> None:
        """Record one access of the current op as it is checked (`RECORD_AT_ONCE`): what `_flush` does with it."""
        p, e = self._pipe, self._epoch
        t1 = sh.t1
        if t1:                                  # TILE_SHADOWS (as in `on_access`)
            if b1 == t1 and b0 == sh.t0:
                if is_write:
                    sh.tw = (e << 3) | p
                    if sh.tr:
                        sh.tr = {}
                    sh.max_w[p] = e
                else:
                    sh.tr[p] = e
                    sh.max_r[p] = e
                return
            if t1 < 0:
                self._tile_start(sh, b0, b1, is_write)
                return
            sh.materialize()
        if is_write:                            # BufferShadow.record_write, inlined
            w = sh.w
            if b0 == 0 and b1 == w.n:           # the whole buffer (a full L0 tile): BlockMap.assign's first case
                w.starts, w.vals, w.arr = [0], [(e << 3) | p], None
            else:
                w.assign(b0, b1, (e << 3) | p)
            for r in sh.r.values():
                if r.vals != _NO_READ:          # (a map with no read since the last write anywhere: nothing to clear)
                    r.assign(b0, b1, 0)
            sh.max_w[p] = e
        else:                                   # BufferShadow.record_read, inlined
            r = sh.r.get(p)
            if r is None:
                r = sh.r[p] = BlockMap(sh.nblocks, 0)
            if b0 == 0 and b1 == r.n:
                r.starts, r.vals, r.arr = [0], [e], None
            else:
                r.assign(b0, b1, e)
            sh.max_r[p] = e

    def on_access_runs(self, buf, lo: int, count: int, run: int, stride: int, is_write: bool,
                       operand: str = "") -> None:
        """`on_access` of ``count`` runs of ``run`` bytes, ``stride`` bytes apart from ``lo`` (one call per burst
        op instead of one per row): the same checks and records as ``count`` calls of `on_access`. The fast-path
        test (nothing in ``buf`` newer than the current op knows) does not depend on the range, so it runs once;
        when it fails, every run is checked on its own."""
        if run <= 0 or count <= 0:
            return
        sh = self.shadows.get(buf)
        if sh is None:
            sh = self.shadows[buf] = BufferShadow(buf)
        thr = self._thr_list or self._thresholds()
        newer = any(e > thr[q] for q, e in sh.max_w.items()) or (
            is_write and any(e > thr[q] for q, e in sh.max_r.items()))
        if newer:
            for k in range(count):
                a = lo + k * stride
                self.on_access(buf, a, a + run, is_write, operand)
            return
        if not self._op_id:
            self._record_op()
        if self._at_once:
            if BATCH_RUN_RECORDS and not sh.t1 and count > 1 and stride > 0:
                self._record_runs(sh, lo, count, run, stride, is_write)
                return
            for k in range(count):
                a = lo + k * stride
                self._record_now(sh, a >> BLOCK_SHIFT, (a + run + BLOCK - 1) >> BLOCK_SHIFT, is_write)
            return
        pending = self._pending
        for k in range(count):
            a = lo + k * stride
            pending.append((sh, a >> BLOCK_SHIFT, (a + run + BLOCK - 1) >> BLOCK_SHIFT, is_write))
        if is_write:
            self._last_write[sh] = len(pending) - 1

    def _record_runs(self, sh, lo: int, count: int, run: int, stride: int, is_write: bool) -> None:
        """`_record_now` of the ``count`` runs of `on_access_runs` (``stride`` > 0) on a buffer whose history is in
        maps (``sh.t1 == 0``), in one `BlockMap.assign_ranges` per map (`BATCH_RUN_RECORDS`): the runs' block
        ranges, those that touch or overlap merged (they take the same value)."""
        if not (lo | stride) & _BLOCK_MASK:        # block-aligned rows: the ranges by arithmetic
            b0, nb, sb = lo >> BLOCK_SHIFT, (run + _BLOCK_MASK) >> BLOCK_SHIFT, stride >> BLOCK_SHIFT
            if nb >= sb:
                ranges = [(b0, b0 + (count - 1) * sb + nb)]
            else:
                ranges = [(x, x + nb) for x in range(b0, b0 + count * sb, sb)]
        else:
            ranges = []
            end = -1
            for a in range(lo, lo + count * stride, stride):
                b0, b1 = a >> BLOCK_SHIFT, (a + run + _BLOCK_MASK) >> BLOCK_SHIFT
                if b0 <= end:                       # touches or overlaps the previous range (b0 ascends)
                    if b1 > end:
                        ranges[-1] = (ranges[-1][0], b1)
                        end = b1
                else:
                    ranges.append((b0, b1))
                    end = b1
        p, e = self._pipe, self._epoch
        if is_write:
            sh.w.assign_ranges(ranges, (e << 3) | p)
            for r in sh.r.values():
                if r.vals != _NO_READ:
                    r.assign_ranges(ranges, 0)
            sh.max_w[p] = e
        else:
            r = sh.r.get(p)
            if r is None:
                r = sh.r[p] = BlockMap(sh.nblocks, 0)
            r.assign_ranges(ranges, e)
            sh.max_r[p] = e

    def _check_writer(self, sh, b0, b1, lo, hi, is_write, operand) -> None:
        if sh.t1:
            sh.materialize()
        w = sh.w
        lim = self._stamp_limits()
        if w.starts is not None:        # run form: test each run's stamp on Python ints
            lim_list = lim.tolist()
            if all(v <= lim_list[v & 7] for v in w.runs(b0, b1)):
                return
            st = w.array(b0, b1)
        else:
            st = w.arr[b0:b1]
            if b1 - b0 <= _FEW_BLOCKS:      # a few blocks: the same test on Python ints, no numpy temporaries
                lim_list = lim.tolist()
                if all(v <= lim_list[v & 7] for v in st.tolist()):
                    return
        bad = st > lim[st & 7]
        if self._grants or self._pipe_grants:
            self._apply_grants(bad, sh, b0, b1, (st & 7).astype(np.int8), st >> 3)
        if bad.any():
            err = self._hazard("WAW" if is_write else "RAW", sh, b0, lo, hi, operand, bad,
                               (st & 7).astype(np.int8), st >> 3)
            if is_write:                # a WAR on earlier bytes is the first conflict (only on the error path)
                war = self._check_readers(sh, b0, b1, lo, hi, operand, defer=True)
                if war is not None and war.byte_range[0] < err.byte_range[0]:
                    raise war
            raise err

    def _check_readers(self, sh, b0, b1, lo, hi, operand, defer: bool = False) -> Optional[HazardError]:
        """WAR: the error names the first conflicting block of the access, whichever reader pipe it belongs to
        (the reader pipes are kept in the order they first read the buffer, which says nothing about bytes).
        ``defer``: return the error instead of raising it (`_check_writer` names whichever of a WAW and a WAR
        starts first; on the same bytes the WAW)."""
        if sh.t1:
            sh.materialize()
        thr = self._thr_list
        worst = None                    # (first bad block index, q, bad, epochs) of the earliest conflict
        for q, r in sh.r.items():
            t = thr[q]
            if sh.max_r[q] <= t:
                continue
            if r.starts is not None:
                if max(r.runs(b0, b1)) <= t:
                    continue
                re = r.array(b0, b1)
            else:
                re = r.arr[b0:b1]
                if b1 - b0 <= _FEW_BLOCKS and max(re.tolist()) <= t:
                    continue
            bad = re > t
            if self._grants or self._pipe_grants:
                self._apply_grants(bad, sh, b0, b1, q, re)
            if bad.any():
                i = int(np.argmax(bad))
                if worst is None or i < worst[0]:
                    worst = (i, q, bad, re)
        if worst is not None:
            _, q, bad, re = worst
            err = self._hazard("WAR", sh, b0, lo, hi, operand, bad, np.full(b1 - b0, q, dtype=np.int8), re)
            if defer:
                return err
            raise err
        return None

    def _apply_grants(self, bad, sh, b0, b1, prior_pipe, prior_epoch) -> None:
        """Clear ``bad`` where a unit-flag grant of the current op (or, UNIT_FLAG_PROGRAM_ORDER, of an earlier op
        of its pipe) covers the earlier access."""
        for g in self._grants:
            if g.shadow is not sh:
                continue
            o0, o1 = max(b0, g.b0), min(b1, g.b1)
            if o0 >= o1:
                continue
            i0, i1, j0, j1 = o0 - b0, o1 - b0, o0 - g.b0, o1 - g.b0
            pp = prior_pipe[i0:i1] if isinstance(prior_pipe, np.ndarray) else prior_pipe
            ok = (pp == g.pipe[j0:j1]) & (prior_epoch[i0:i1] <= g.epoch[j0:j1]) & (g.epoch[j0:j1] > 0)
            bad[i0:i1] &= ~ok
        pg = self._pipe_grants.get((sh, self._pipe))
        if pg:                                  # UNIT_FLAG_PROGRAM_ORDER (a): grants of earlier ops of this pipe
            for q, arr in pg.items():
                pp = prior_pipe if isinstance(prior_pipe, np.ndarray) else np.full(b1 - b0, prior_pipe)
                bad &= ~((pp == q) & (prior_epoch <= arr[b0:b1]))

    def _grant(self, sh, b0: int, b1: int, pipes, epochs) -> None:
        """A unit-flag edge for the current op on blocks ``[b0, b1)`` (and, UNIT_FLAG_PROGRAM_ORDER, for the later
        ops of its pipe)."""
        self._grants.append(_Grant(sh, b0, b1, pipes, epochs))
        if not (UNIT_FLAG_PROGRAM_ORDER and self._po_edges()):
            return
        pg = self._pipe_grants.setdefault((sh, self._pipe), {})
        for q in {int(x) for x, e in zip(pipes, epochs) if e > 0}:
            arr = pg.get(q)
            if arr is None:
                arr = pg[q] = np.zeros(sh.nblocks, dtype=np.int64)
            self._pg_undo.append((arr, b0, b1, arr[b0:b1].copy()))
            np.maximum(arr[b0:b1], np.where(pipes == q, epochs, 0), out=arr[b0:b1])

    def _po_edges(self) -> bool:
        """Whether program order on the current op's pipe is a happens-before edge."""
        return not self.strict_same_pipe or self._pipe == _S

    # ------------------------------------------------------------------ error text
    def _hazard(self, kind, sh, b0, lo, hi, operand, bad, prior_pipes, prior_epochs) -> HazardError:
        i = int(np.argmax(bad))
        q = int(prior_pipes[i])
        ep = int(prior_epochs[i])
        same = bad[i:] & (prior_pipes[i:] == q) & (prior_epochs[i:] == ep)   # the same earlier op
        run = len(same) if same.all() else int(np.argmin(same))
        start = max(lo, (b0 + i) << BLOCK_SHIFT)
        end = min(hi, (b0 + i + run) << BLOCK_SHIFT)
        prior_name, prior_where = self._op_at(q, ep)
        prior_name = prior_name or "an earlier op"
        cur_name = self._name or "op"
        p = self._pipe
        P, Q = PIPES[p], PIPES[q]
        buf = sh.buffer
        label = buf.label
        if buf.space == "gm":
            label += f" (GM address {buf.base + start:#x})"
        verb_now, verb_then = _VERBS[kind]
        if q == p:
            relation = (f"both on {asm_pipe(P)}, which does not order data-dependent ops without a barrier "
                        f"(hazard_same_pipe='barrier')")
            hint = (f"insert pto.barrier <{asm_pipe(P)}> (Python: pto.pipe_barrier('{P}')) after {prior_name}"
                    f"{at_site(prior_where, prior_name)} and before {cur_name}{at_site(self._where, cur_name)}")
        else:
            relation = f"with no happens-before edge from {asm_pipe(Q)} to {asm_pipe(P)}"
            ev = 0
            table = self.ctx.sync_state
            if table is not None:
                free = table.free_event(Q, P)
                ev = free if free is not None else "EVENT_IDn"
            hint = (f"insert {flag_text('set_flag', Q, P, ev)} after {prior_name}"
                    f"{at_site(prior_where, prior_name)} and "
                    f"{flag_text('wait_flag', Q, P, ev)} before {cur_name}{at_site(self._where, cur_name)}")
            if (q, p) == (_M, _FIX) and kind == "RAW":
                hint += (" (or give the mad unit_flag(check_and_set) and the FIXPIPE "
                         "unit_flag(check_only|check_and_clear))")
            elif (q, p) == (_FIX, _M) and kind == "WAR":
                hint += (" (or clear the unit flag with FIXPIPE unit_flag(check_and_clear) and give the mad "
                         "unit_flag(check_only|check_and_set))")
            hint += ", or a pto.pipe_barrier('ALL') between them"
            if getattr(self.ctx.target, "buffer_ids", 0):
                hint += (f" (A5: or one buffer id, rls_buf on {asm_pipe(Q)} after the first op and get_buf on "
                         f"{asm_pipe(P)} before the second)")
        msg = (f"{kind} hazard on {label} bytes [{start:#x}, {end:#x}): {cur_name} ({asm_pipe(P)}) {verb_now} "
               f"bytes that {prior_name} ({asm_pipe(Q)} op #{ep}{at_site(prior_where, prior_name)}) "
               f"{verb_then}, {relation}")
        err = HazardError(msg, op=cur_name, operand=operand or None, value=f"[{start:#x}, {end:#x})",
                          where=self._where, hint=hint)
        err.kind = kind
        err.buffer = buf.label
        err.space = buf.space
        err.byte_range = (start, end)
        err.first = (prior_name, Q, prior_where)
        err.second = (cur_name, P, self._where)
        return err

    # ------------------------------------------------------------------ sync edges
    def flag_set(self, src: str, dst: str):
        """``set_flag(src, dst)``: returns the snapshot the matching wait acquires."""
        return self.clocks.release(PIPE_INDEX[src])

    def flag_wait(self, src: str, dst: str, token) -> None:
        """``wait_flag(src, dst)`` matched the set that produced ``token``."""
        if token is not None and self.clocks.acquire(PIPE_INDEX[dst], token):
            self._clocks_changed()       # (a wait that teaches the pipe nothing new keeps the cached thresholds)

    def flag_release(self, src: int) -> list:
        """`flag_set` of pipe index ``src`` (the bound flag ops, `ops.sync.FLAG_BIND`): `PipeClocks.release`, inlined."""
        clocks = self.clocks
        snap = list(clocks.known[src])
        snap[src] = clocks.epoch[src]
        return snap

    def flag_acquire(self, dst: int, token) -> None:
        """`flag_wait` of pipe index ``dst`` (the bound flag ops, `ops.sync.FLAG_BIND`): `PipeClocks.acquire`, inlined."""
        if token is not None:
            known = self.clocks.known
            row = known[dst]
            new = list(map(max, row, token))
            if new != row:
                known[dst] = new
                self._thr_cache.clear()             # _clocks_changed, inlined
                self._thr_list = None

    def buf_release(self, pipe: str):
        """``rls_buf(pipe, id)``: returns the snapshot a later ``get_buf`` of the id by another pipe acquires
        (everything ``pipe`` issued before the release, and what it had waited for)."""
        return self.clocks.release(PIPE_INDEX[pipe])

    def buf_acquire(self, pipe: str, tokens) -> None:
        """``get_buf(pipe, id, mode=0)``: later ops of ``pipe`` start after the releases in ``tokens``."""
        if tokens:
            p = PIPE_INDEX[pipe]
            changed = False
            for t in tokens:
                changed = self.clocks.acquire(p, t) or changed
            if changed:
                self._clocks_changed()

    def barrier(self, pipe: str) -> None:
        """``pipe_barrier(pipe)`` (``"ALL"`` drains every pipe)."""
        if pipe == "ALL":
            self.clocks.drain_all()
        else:
            self.clocks.drain(PIPE_INDEX[pipe])
        self._clocks_changed()

    # ------------------------------------------------------------------ unit flags
    def unit_flag_check(self, buf, lo: int, hi: int) -> None:
        """Producer-side check (mad ``unit_flag(check_*)``): waits until FIXPIPE cleared the bytes."""
        sh = self._shadow(buf)
        sh.unit_arrays()
        b0, b1 = block_range(lo, hi)
        pub = sh.u_pub[b0:b1]
        mine = (sh.u_pub_pipe[b0:b1] == self._pipe) & (pub == self._epoch)
        pending = (pub > 0) & ~mine
        if pending.any():
            raise SyncError(f"unit_flag check on {buf.label} bytes {_span(pending, b0, lo, hi)} waits "
                            f"for a FIXPIPE unit_flag(check_and_clear) that no earlier op issued: the tile is "
                            f"still published by a mad unit_flag(check_and_set) (deadlock)",
                            op=self._name, operand="unit_flag", where=self._where,
                            hint="consume the published tile with a FIXPIPE unit_flag(check_and_clear) first, "
                                 "or drop unit_flag on this mad and use set_flag/wait_flag")
        self._unit_op = True
        self._grant(sh, b0, b1, sh.u_clr_pipe[b0:b1].copy(), sh.u_clr[b0:b1].copy())
        self._acquire_unit_known(sh.u_clr_pipe[b0:b1], sh.u_clr[b0:b1])

    def _acquire_unit_known(self, pipes, epochs) -> None:
        """Named choice UNIT_FLAG_TRANSITIVE: an op that passed a unit-flag check also comes after everything the
        op it waited for (the publishing mad, the clearing FIXPIPE) had itself waited for -- a flag chain MTE1 ->
        M then a unit flag M -> FIX orders the MTE1 access before the FIXPIPE, as two flags would. The checked op's
        own accesses stay covered only on the unit-flag bytes (the grants: other tiles still need flags)."""
        keys = {(int(q), int(e)) for q, e in zip(pipes, epochs) if e > 0}
        snaps = [self._unit_known[k] for k in keys if k in self._unit_known]
        if snaps:
            if self._known_saved is None:
                self._unit_op = True
                self._known_saved = list(self.clocks.known[self._pipe])
            for snap in snaps:
                self.clocks.acquire(self._pipe, snap)
            self._clocks_changed()

    def _remember_unit_known(self) -> None:
        """What the current op (a unit-flag publish or clear) waited for, for `_acquire_unit_known`."""
        self._unit_known[(self._pipe, self._epoch)] = list(self.clocks.known[self._pipe])

    def unit_flag_publish(self, buf, lo: int, hi: int) -> None:
        """Producer side (mad ``unit_flag(check_and_set)``): publish the current op's L0C bytes."""
        sh = self._shadow(buf)
        sh.unit_arrays()
        b0, b1 = block_range(lo, hi)
        self._remember_unit_known()
        self._save_unit(sh, b0, b1)
        sh.u_pub[b0:b1] = self._epoch
        sh.u_pub_pipe[b0:b1] = self._pipe
        sh.u_seen[b0:b1] = False

    def unit_flag_consume(self, buf, lo: int, hi: int, clear: bool) -> None:
        """Consumer side (FIXPIPE ``unit_flag(check_only|check_and_clear)``), before it reads L0C."""
        sh = self._shadow(buf)
        sh.unit_arrays()
        b0, b1 = block_range(lo, hi)
        pub = sh.u_pub[b0:b1]
        if (pub == 0).any():
            raise SyncError(f"unit_flag check on {buf.label} bytes {_span(pub == 0, b0, lo, hi)} waits "
                            f"for a tile no earlier mad unit_flag(check_and_set) published (or a previous "
                            f"check_and_clear already consumed it): the FIXPIPE would wait forever (deadlock)",
                            op=self._name, operand="unit_flag", where=self._where,
                            hint="give the last mad writing this L0C tile unit_flag(check_and_set)")
        self._unit_op = True
        self._grant(sh, b0, b1, sh.u_pub_pipe[b0:b1].copy(), pub.copy())
        self._acquire_unit_known(sh.u_pub_pipe[b0:b1], pub)
        self._save_unit(sh, b0, b1)
        sh.u_seen[b0:b1] = True
        if clear:
            self._remember_unit_known()
            sh.u_clr[b0:b1] = self._epoch
            sh.u_clr_pipe[b0:b1] = self._pipe
            sh.u_pub[b0:b1] = 0

    # ------------------------------------------------------------------ kernel end
    def end_kernel(self) -> list:
        """Report tiles published by a unit flag that no FIXPIPE checked; reset all state (pipes drain)."""
        reports = []
        for sh in self.shadows.values():
            if sh.u_pub is None:
                continue
            orphan = (sh.u_pub > 0) & ~sh.u_seen
            if orphan.any():
                i = int(np.argmax(orphan))
                n = int(orphan.sum())
                reports.append(("sync", f"{sh.buffer.label}: {n * BLOCK} B published by a mad "
                                        f"unit_flag(check_and_set) (first at byte {i * BLOCK:#x}) were never "
                                        f"checked by a FIXPIPE unit_flag(check_only|check_and_clear)"))
        self.reset()
        return reports

    def reset(self) -> None:
        """Forget all history (as after a kernel end)."""
        self.clocks.reset()
        self.shadows.clear()
        self._epoch_ops = [[0] for _ in range(NUM_PIPES)]
        self._clocks_changed()
        self._grants = []
        self._unit_op = False
        self._at_once = False
        self._pending = []
        self._last_write = {}
        self._unit_known = {}
        self._undo = []
        self._pipe_grants = {}
        self._pg_undo = []
        self._known_saved = None
