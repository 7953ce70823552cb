"""Shadow state of one buffer for the hazard verifier: who last wrote / read each block.

Granularity is one 32-byte block (`BLOCK`) in every space: UB and L1 are 32-byte
aligned, L0A/L0B/L0C hold 512-byte fractals, and MTE/vector/cube/FIXPIPE transfers
move whole 32-byte blocks; GM bursts are issued in 32-byte units too. Only scalar
accesses (pipe S) and unaligned GM bursts touch less than a block, so two pipes
touching *different bytes of one block* without sync is reported as a hazard (on
hardware such a pattern is fragile anyway). Cost: 8 bytes per block plus 8 bytes per
block for each pipe that reads the buffer, allocated on first access.

Per block:

* ``w_stamp``: the last writer as ``epoch << 3 | pipe`` (`stamp`); `NO_STAMP` (pipe 7)
  = never written since the kernel started.
* ``r_epoch[q]``: the epoch of the latest read by pipe ``q`` since the last write (0 =
  none). Only the latest read per pipe matters: a ``set_flag`` releases every earlier
  op of its pipe.
* ``max_w`` / ``max_r``: ``{pipe: largest epoch written / read anywhere in the buffer}``
  for the fast path: if no pipe touched the buffer more recently than the current op
  knows about, no block can conflict and the per-block comparison is skipped.
* unit-flag state (lazy): ``u_pub`` epoch of the mad that published each block with
  ``unit_flag(check_and_set)`` (0 = not published), ``u_clr`` the FIXPIPE epoch that
  cleared it with ``unit_flag(check_and_clear)``, plus their pipes, and ``u_seen``
  (some consumer checked it).
"""
from __future__ import annotations

import numpy as np

#: Bytes per tracked block.
BLOCK = 32
BLOCK_SHIFT = 5
#: Pipe slot meaning "nobody" in a stamp (pipe indices are 0..6).
NO_PIPE = 7
NO_STAMP = NO_PIPE


def stamp(epoch: int, pipe: int) -> int:
    """Pack an op identity into one int64: ``epoch << 3 | pipe``."""
    return (epoch << 3) | pipe


def block_range(lo: int, hi: int) -> tuple:
    """Blocks ``[b0, b1)`` covering bytes ``[lo, hi)``."""
    return lo >> BLOCK_SHIFT, (hi + BLOCK - 1) >> BLOCK_SHIFT


class BufferShadow:
    """Per-block access history of one `Buffer` (see module doc)."""

    __slots__ = ("buffer", "nblocks", "w_stamp", "r_epoch", "max_w", "max_r",
                 "u_pub", "u_pub_pipe", "u_clr", "u_clr_pipe", "u_seen")

    def __init__(self, buffer):
        self.buffer = buffer
        n = (buffer.size + BLOCK - 1) >> BLOCK_SHIFT
        self.nblocks = n
        self.w_stamp = np.full(n, NO_STAMP, dtype=np.int64)
        self.r_epoch: dict = {}
        self.max_w: dict = {}
        self.max_r: dict = {}
        self.u_pub = None

    # -- history updates (after the checks passed)
    def record_write(self, b0: int, b1: int, pipe: int, epoch: int) -> None:
        self.w_stamp[b0:b1] = (epoch << 3) | pipe
        for r in self.r_epoch.values():
            r[b0:b1] = 0
        self.max_w[pipe] = epoch

    def record_read(self, b0: int, b1: int, pipe: int, epoch: int) -> None:
        r = self.r_epoch.get(pipe)
        if r is None:
            r = self.r_epoch[pipe] = np.zeros(self.nblocks, dtype=np.int64)
        r[b0:b1] = epoch
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
