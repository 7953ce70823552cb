"""Per-pipe vector clocks of one core: which earlier ops are known complete before a pipe's next op.

Model (one core, ops issued in program order by the scalar unit into one queue per pipe):

* ``epoch[q]`` counts the ops issued to pipe ``q`` so far; an op on ``q`` is identified
  by ``(q, epoch)`` (epochs start at 1; 0 means "no op").
* ``known[p, q]``: every op of pipe ``q`` with epoch ``<= known[p, q]`` has completed
  before the next op of pipe ``p`` starts. An earlier access ``(q, t)`` happens before
  the current op of ``p`` iff ``t <= known[p, q]``.
* ``set_flag(Q, P)`` fires once every earlier op of ``Q`` has completed, so it *releases*
  ``known[Q]`` with ``[Q] = epoch[Q]`` (this carries everything ``Q`` itself waited for:
  chains MTE2 -> MTE1 -> M -> FIX are transitive); the matching ``wait_flag(Q, P)``
  *acquires* it into ``known[P]``.
* ``pipe_barrier(P)`` completes all earlier ops of ``P`` before later ones of ``P``
  (``known[P, P] = epoch[P]``); ``pipe_barrier(ALL)`` completes every earlier op of
  every pipe before any later op (``known[:, q] = epoch[q]``).

Whether two ops of the *same* pipe are ordered by program order alone is a policy
of the tracker (`thresholds`), not of the clocks.
"""
from __future__ import annotations

import numpy as np

from ..pipes import PIPES

#: Number of pipes with a clock slot (S V M MTE1 MTE2 MTE3 FIX).
NUM_PIPES = len(PIPES)
#: Threshold meaning "always ordered" (larger than any epoch).
ALWAYS = np.iinfo(np.int64).max


class PipeClocks:
    """Epoch counters and the ``known`` matrix of one core (see module doc).

    ``known`` is a list of ``NUM_PIPES`` rows of Python ints (7 x 7 numbers: plain lists are
    cheaper than numpy at this size, and sync ops touch them on every flag).
    """

    __slots__ = ("epoch", "known")

    def __init__(self):
        self.epoch = [0] * NUM_PIPES          # Python ints: ticked once per op, cheaper than numpy scalars
        self.known = [[0] * NUM_PIPES for _ in range(NUM_PIPES)]

    def tick(self, p: int) -> int:
        """Issue one op on pipe ``p``; returns its epoch."""
        e = self.epoch[p] + 1
        self.epoch[p] = e
        return e

    def release(self, q: int) -> list:
        """Snapshot carried by a ``set_flag`` from pipe ``q``: everything complete when it fires."""
        snap = list(self.known[q])
        snap[q] = self.epoch[q]
        return snap

    def acquire(self, p: int, snapshot) -> bool:
        """A ``wait_flag`` on pipe ``p``: later ops of ``p`` start after ``snapshot`` completed.
        Returns whether ``known[p]`` changed (else thresholds computed from it are still valid)."""
        row = self.known[p]
        new = list(map(max, row, snapshot))          # (elementwise in C; a new row: no one keeps the old one)
        if new == row:
            return False
        self.known[p] = new
        return True

    def drain(self, p: int) -> None:
        """``pipe_barrier(p)``: later ops of ``p`` start after all earlier ops of ``p``."""
        self.known[p][p] = self.epoch[p]

    def drain_all(self) -> None:
        """``pipe_barrier(ALL)``: later ops of any pipe start after all earlier ops of every pipe."""
        self.known = [list(self.epoch) for _ in range(NUM_PIPES)]

    def thresholds(self, p: int, *, same_pipe_ordered: bool) -> list:
        """Per earlier-access pipe ``q``, the highest epoch ordered before the current op of ``p``
        (`ALWAYS` for ``q == p`` when same-pipe program order counts)."""
        thr = list(self.known[p])
        if same_pipe_ordered:
            thr[p] = ALWAYS
        return thr

    def reset(self) -> None:
        self.epoch = [0] * NUM_PIPES
        self.known = [[0] * NUM_PIPES for _ in range(NUM_PIPES)]
