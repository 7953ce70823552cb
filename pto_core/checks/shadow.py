"""Shadow state of one buffer for the hazard verifier: who last wrote / read each block.

Granularity is one 32-byte block (`BLOCK`) in every space: UB and L1 are 32-byte
aligned, L0A/L0B/L0C hold 512-byte fractals, and MTE/vector/cube/FIXPIPE transfers
move whole 32-byte blocks; GM bursts are issued in 32-byte units too. Only scalar
accesses (pipe S) and unaligned GM bursts touch less than a block, so two pipes
touching *different bytes of one block* without sync is reported as a hazard (on
hardware such a pattern is fragile anyway). Cost: 13 bytes per block plus 12 bytes
per block for each pipe that reads the buffer, allocated on first access.

Per block:

* ``w_pipe`` / ``w_epoch`` / ``w_op``: the last writer (pipe index, epoch, op id),
  pipe ``-1`` = never written (since the kernel started).
* ``r_epoch[q]`` / ``r_op[q]``: the latest read by pipe ``q`` since the last write
  (epoch 0 = none). Only the latest read per pipe matters: a ``set_flag`` releases
  every earlier op of its pipe.
* ``max_w[q]`` / ``max_r[q]``: the largest epoch pipe ``q`` wrote / read anywhere in
  the buffer, for the fast path (no access of ``q`` newer than what the current op
  already knows about -> no hazard possible, skip the per-block comparison).
* unit-flag state (lazy): ``u_pub`` epoch of the mad that published each block with
  ``unit_flag(check_and_set)`` (0 = not published), ``u_clr`` the FIXPIPE epoch that
  cleared it with ``unit_flag(check_and_clear)``, plus their pipes, and ``u_seen``
  (some consumer checked it).
"""
from __future__ import annotations

import numpy as np

from .vector_clock import NUM_PIPES

#: Bytes per tracked block.
BLOCK = 32
BLOCK_SHIFT = 5


def block_range(lo: int, hi: int) -> tuple:
    """Blocks ``[b0, b1)`` covering bytes ``[lo, hi)``."""
    return lo >> BLOCK_SHIFT, (hi + BLOCK - 1) >> BLOCK_SHIFT


class BufferShadow:
    """Per-block access history of one `Buffer` (see module doc)."""

    __slots__ = ("buffer", "nblocks", "w_pipe", "w_epoch", "w_op", "r_epoch", "r_op", "max_w", "max_r",
                 "u_pub", "u_pub_pipe", "u_clr", "u_clr_pipe", "u_seen")

    def __init__(self, buffer):
        self.buffer = buffer
        n = (buffer.size + BLOCK - 1) >> BLOCK_SHIFT
        self.nblocks = n
        self.w_pipe = np.full(n, -1, dtype=np.int8)
        self.w_epoch = np.zeros(n, dtype=np.int64)
        self.w_op = np.zeros(n, dtype=np.int32)
        self.r_epoch: dict = {}
        self.r_op: dict = {}
        self.max_w = [0] * NUM_PIPES
        self.max_r = [0] * NUM_PIPES
        self.u_pub = None

    # -- history updates (after the checks passed)
    def record_write(self, b0: int, b1: int, pipe: int, epoch: int, op_id: int) -> None:
        self.w_pipe[b0:b1] = pipe
        self.w_epoch[b0:b1] = epoch
        self.w_op[b0:b1] = op_id
        for r in self.r_epoch.values():
            r[b0:b1] = 0
        if epoch > self.max_w[pipe]:
            self.max_w[pipe] = epoch

    def record_read(self, b0: int, b1: int, pipe: int, epoch: int, op_id: int) -> None:
        r = self.r_epoch.get(pipe)
        if r is None:
            r = self.r_epoch[pipe] = np.zeros(self.nblocks, dtype=np.int64)
            self.r_op[pipe] = np.zeros(self.nblocks, dtype=np.int32)
        r[b0:b1] = epoch
        self.r_op[pipe][b0:b1] = op_id
        if epoch > self.max_r[pipe]:
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
