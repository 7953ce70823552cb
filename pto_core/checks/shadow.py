"""Shadow state of one buffer for the hazard verifier: who last wrote / read each block.

Granularity is one 32-byte block (`BLOCK`) in every space: UB and L1 are 32-byte
aligned, L0A/L0B/L0C hold 512-byte fractals, and MTE/vector/cube/FIXPIPE transfers
move whole 32-byte blocks; GM bursts are issued in 32-byte units too. Only scalar
accesses (pipe S) and unaligned GM bursts touch less than a block, so two pipes
touching *different bytes of one block* without sync is reported as a hazard (on
hardware such a pattern is fragile anyway).

Per block (each a `BlockMap`: one value per block, stored as runs of equal values):

* ``w``: the last writer as ``epoch << 3 | pipe`` (`stamp`); `NO_STAMP` (pipe 7)
  = never written since the kernel started.
* ``r[q]``: the epoch of the latest read by pipe ``q`` since the last write (0 =
  none). Only the latest read per pipe matters: a ``set_flag`` releases every earlier
  op of its pipe.
* ``max_w`` / ``max_r``: ``{pipe: largest epoch written / read anywhere in the buffer}``
  for the fast path: if no pipe touched the buffer more recently than the current op
  knows about, no block can conflict and the per-block comparison is skipped.
* unit-flag state (lazy numpy arrays): ``u_pub`` epoch of the mad that published each
  block with ``unit_flag(check_and_set)`` (0 = not published), ``u_clr`` the FIXPIPE
  epoch that cleared it with ``unit_flag(check_and_clear)``, plus their pipes, and
  ``u_seen`` (some consumer checked it).

Cost: every access is one contiguous block range, so a map holds few runs (one per
distinct live access) and recording an access costs two bisections and a list splice,
independent of its size; an access of the whole buffer (a full L0A/L0B/L0C tile) resets the
map to one run. A map fragmented into more than `MAX_RUNS` runs turns into a
plain ``int64`` array per block (8 bytes per block; slice stores), which bounds the
cost of kernels that scatter many small accesses over one buffer. A buffer whose every
recorded access covered one and the same block range keeps no maps at all until another
range comes (`TILE_SHADOWS`: the range's writer stamp and read epochs, a few attribute stores
per access).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

#: Bytes per tracked block.
BLOCK = 32
BLOCK_SHIFT = 5
#: Pipe slot meaning "nobody" in a stamp (pipe indices are 0..6).
NO_PIPE = 7
NO_STAMP = NO_PIPE
#: A `BlockMap` with more runs than this switches to one array entry per block.
MAX_RUNS = 512
#: `BlockMap.assign` on a map of one or two runs (the usual history of an L0 tile or a ping-pong buffer: a
#: range written, its reads recorded, cleared by the next write) builds the new runs directly instead of
#: searching and splicing the lists: the same runs (tests/core/test_shadow.py compares both ways with a
#: plain array). False: every such assignment takes the general path.
SMALL_MAP_PATHS = True
#: Named choice TILE_SHADOWS: a buffer whose recorded accesses so far all cover one and the same block range (an
#: L0A/L0B/L0C tile a cube loop refills and reads again and again) keeps its history as that range's last writer
#: stamp (`BufferShadow.tw`) and its reads since (``tr``: pipe -> epoch) instead of `BlockMap` runs, which hold the
#: same values (outside the range: never written, never read). The first access of another range, and any check
#: that has to look at blocks, first turns it into the maps (`BufferShadow.materialize`). Only the hazard
#: verifier's record-at-once path (`hazards.RECORD_AT_ONCE`) records in this form. tests/core/test_hazard_fast_paths.py
#: compares verdicts, messages and histories both ways; migration_guide/pto_sync.md §5. False: every buffer keeps
#: maps.
TILE_SHADOWS = True


def stamp(epoch: int, pipe: int) -> int:
    """Pack an op identity into one int64: ``epoch << 3 | pipe``."""
    return (epoch << 3) | pipe


def block_range(lo: int, hi: int) -> tuple:
    """Blocks ``[b0, b1)`` covering bytes ``[lo, hi)``."""
    return lo >> BLOCK_SHIFT, (hi + BLOCK - 1) >> BLOCK_SHIFT


class BlockMap:
    """One int value per block of ``[0, n)``, all ``fill`` at first.

    Run form (``starts`` is a list): run ``i`` covers blocks ``[starts[i], starts[i+1])``
    (the last one up to ``n``) with value ``vals[i]``; neighbouring runs differ. Dense
    form (``starts`` is None): ``arr`` holds every block's value (after `MAX_RUNS`).
    """

    __slots__ = ("n", "starts", "vals", "arr")

    def __init__(self, n: int, fill: int):
        self.n = n
        self.starts = [0]
        self.vals = [fill]
        self.arr = None

    def assign(self, b0: int, b1: int, v: int) -> None:
        """Set blocks ``[b0, b1)`` (``0 <= b0 < b1 <= n``) to ``v``."""
        if b0 == 0 and b1 == self.n:                # the whole buffer (a full L0 tile): one run, any form
            self.starts, self.vals, self.arr = [0], [v], None
            return
        starts = self.starts
        if starts is None:
            if b1 - b0 == 1:                        # one block (a scalar-unit access): item set, no slice
                self.arr[b0] = v
            else:
                self.arr[b0:b1] = v
            return
        vals = self.vals
        if len(starts) < 3 and SMALL_MAP_PATHS:     # one or two runs: new runs built directly, no search
            if len(starts) == 1:
                if MAX_RUNS >= 3:                   # (splitting the run makes up to three)
                    old = vals[0]
                    if old != v:
                        if b0 == 0:
                            self.starts, self.vals = [0, b1], [v, old]
                        elif b1 == self.n:
                            self.starts, self.vals = [0, b0], [old, v]
                        else:
                            self.starts, self.vals = [0, b0, b1], [old, v, old]
                    return
            else:                                   # exactly one of the two runs takes v (maybe merging)
                x = starts[1]
                if (b0 == 0 and b1 == x) or (b0 == x and b1 == self.n):
                    k = 0 if b0 == 0 else 1
                    if vals[k] != v:
                        if vals[1 - k] == v:
                            self.starts, self.vals = [0], [v]
                        else:
                            vals[k] = v
                    return
        i = bisect_right(starts, b0) - 1            # run holding b0
        nxt = starts[i + 1] if i + 1 < len(starts) else self.n      # end of run i
        if b1 <= nxt:
            if vals[i] == v:                        # run i already holds v on [b0, b1): nothing changes
                return
            if starts[i] == b0 and b1 == nxt and (i == 0 or vals[i - 1] != v) and (
                    i + 1 == len(vals) or vals[i + 1] != v):
                vals[i] = v                         # exactly run i, no merge with its neighbours: new value
                return
        j = bisect_left(starts, b1)                 # first run starting at or after b1
        new_s, new_v = [b0], [v]
        if b1 < self.n and (j == len(starts) or starts[j] != b1):
            after = vals[j - 1]                      # b1 lies inside run j - 1: its tail survives
            if after != v:
                new_s.append(b1)
                new_v.append(after)
        elif j < len(starts) and vals[j] == v:       # the next run starts at b1 with the same value: merge
            j += 1
        k = i + 1 if starts[i] < b0 else i           # keep run i's head if it starts before b0
        if k > 0 and vals[k - 1] == v:               # merge with the run before
            del new_s[0], new_v[0]
        starts[k:j] = new_s
        vals[k:j] = new_v
        if len(starts) > MAX_RUNS:
            self.arr = self.array(0, self.n).copy()
            self.starts = self.vals = None

    def assign_ranges(self, ranges: list, v: int) -> None:
        """Set every block of ``ranges`` to ``v``: the same values as `assign` of each range in turn.

        ``ranges``: ``[(b0, b1), ...]`` ascending, disjoint and not touching, each ``0 <= b0 < b1 <= n`` (the block
        ranges of one burst access's rows, merged: `HazardTracker.on_access_runs`). The run form is rebuilt once over
        ``[first b0, last b1)`` instead of one bisect-and-splice per range (`BATCH_RUN_RECORDS`); it holds the same
        runs (neighbouring runs differ), and it turns into the array form at the end if it has more than `MAX_RUNS`
        runs (per range, it may have done so after an earlier range: the same values either way)."""
        if len(ranges) == 1:
            self.assign(ranges[0][0], ranges[0][1], v)
            return
        starts = self.starts
        if starts is None:
            arr = self.arr
            for b0, b1 in ranges:
                arr[b0:b1] = v
            return
        vals = self.vals
        lo, hi = ranges[0][0], ranges[-1][1]
        i = bisect_right(starts, lo) - 1             # run holding lo
        j = bisect_left(starts, hi)                  # first run starting at or after hi
        old_s = starts[i + 1:j]                      # old run starts inside (lo, hi)
        old_v = vals[i:j]                            # old_v[t]: the value from old_s[t - 1] (lo for t = 0) on
        new_s, new_v = [lo], [v]
        t = 0
        b1 = ranges[0][1]
        for nxt, nb1 in ranges[1:]:                  # the gap [b1, nxt) keeps its old values
            t = bisect_right(old_s, b1, t)           # old_v[t] holds b1
            x = old_v[t]
            if x != v:
                new_s.append(b1)
                new_v.append(x)
            u = bisect_left(old_s, nxt, t)           # old runs starting inside (b1, nxt): kept as they are
            if u > t:
                new_s += old_s[t:u]
                new_v += old_v[t + 1:u + 1]
            if old_v[u] != v:                        # the next range starts a run unless the gap ends in v
                new_s.append(nxt)
                new_v.append(v)
            t, b1 = u, nb1
        if hi < self.n:
            if j < len(starts) and starts[j] == hi:  # the next run starts at hi: merge if it holds v
                if vals[j] == v:
                    j += 1
            else:                                    # hi lies inside run j - 1: its tail survives
                x = vals[j - 1]
                if x != v:
                    new_s.append(hi)
                    new_v.append(x)
        k = i + 1 if starts[i] < lo else i           # keep run i's head if it starts before lo
        if k > 0 and vals[k - 1] == new_v[0]:        # merge with the run before
            del new_s[0], new_v[0]
        starts[k:j] = new_s
        vals[k:j] = new_v
        if len(starts) > MAX_RUNS:
            self.arr = self.array(0, self.n).copy()
            self.starts = self.vals = None

    def runs(self, b0: int, b1: int) -> list:
        """Values of the runs overlapping ``[b0, b1)`` (run form only)."""
        starts = self.starts
        return self.vals[bisect_right(starts, b0) - 1:bisect_left(starts, b1)]

    def array(self, b0: int, b1: int) -> np.ndarray:
        """The values of blocks ``[b0, b1)`` as an ``int64`` array (read-only use)."""
        if self.starts is None:
            return self.arr[b0:b1]
        starts = self.starts
        i, j = bisect_right(starts, b0) - 1, bisect_left(starts, b1)
        edges = np.array(starts[i + 1:j] + [b1], dtype=np.int64)
        lengths = np.diff(edges, prepend=b0)
        return np.repeat(np.array(self.vals[i:j], dtype=np.int64), lengths)


class BufferShadow:
    """Per-block access history of one `Buffer` (see module doc)."""

    __slots__ = ("buffer", "nblocks", "w", "r", "max_w", "max_r", "t0", "t1", "tw", "tr",
                 "u_pub", "u_pub_pipe", "u_clr", "u_clr_pipe", "u_seen")

    def __init__(self, buffer):
        self.buffer = buffer
        n = (buffer.size + BLOCK - 1) >> BLOCK_SHIFT
        self.nblocks = n
        self.w = BlockMap(n, NO_STAMP)
        self.r: dict = {}
        self.max_w: dict = {}
        self.max_r: dict = {}
        #: `TILE_SHADOWS`: ``t1`` -1 = nothing recorded yet (the maps hold the history, a tile may start), 0 = the
        #: maps hold the history, > 0 = tile form: every access recorded so far covered blocks ``[t0, t1)``; ``tw``
        #: their writer stamp (`NO_STAMP`: none), ``tr`` the reads since (pipe -> epoch); ``w`` / ``r`` are stale
        self.t1 = -1 if TILE_SHADOWS else 0
        self.t0 = 0
        self.tw = NO_STAMP
        self.tr: dict = {}
        self.u_pub = None

    def materialize(self) -> None:
        """Leave the tile form (`TILE_SHADOWS`): ``w`` and ``r`` get the values it stands for (a read map for every
        pipe that ever read, in the order they first did, as the maps would have them)."""
        t1 = self.t1
        self.t1 = 0
        if t1 <= 0:
            return
        t0, n = self.t0, self.nblocks
        self.w = w = BlockMap(n, NO_STAMP)
        if self.tw != NO_STAMP:
            w.assign(t0, t1, self.tw)
        r = self.r = {}
        for q in self.max_r:                    # (insertion order = first read)
            m = r[q] = BlockMap(n, 0)
            e = self.tr.get(q, 0)
            if e:
                m.assign(t0, t1, e)
        self.tr = {}

    # -- history updates (after the checks passed)
    def record_write(self, b0: int, b1: int, pipe: int, epoch: int) -> None:
        if self.t1:
            self.materialize()
        self.w.assign(b0, b1, (epoch << 3) | pipe)
        for r in self.r.values():
            r.assign(b0, b1, 0)
        self.max_w[pipe] = epoch

    def record_read(self, b0: int, b1: int, pipe: int, epoch: int) -> None:
        if self.t1:
            self.materialize()
        r = self.r.get(pipe)
        if r is None:
            r = self.r[pipe] = BlockMap(self.nblocks, 0)
        r.assign(b0, b1, epoch)
        self.max_r[pipe] = epoch

    # -- unit flags
    def unit_arrays(self) -> None:
        """Allocate the unit-flag arrays on first use."""
        if self.u_pub is None:
            n = self.nblocks
            self.u_pub = np.zeros(n, dtype=np.int64)
            self.u_pub_pipe = np.full(n, -1, dtype=np.int8)
            self.u_clr = np.zeros(n, dtype=np.int64)
            self.u_clr_pipe = np.full(n, -1, dtype=np.int8)
            self.u_seen = np.zeros(n, dtype=np.bool_)
