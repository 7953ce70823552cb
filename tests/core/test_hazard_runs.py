"""`HazardTracker.on_access_runs` (one call per burst op) against one `on_access` per run, and the whole-buffer
`BlockMap.assign` shortcut: the same errors and the same recorded history."""
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from pto_core import HazardError
from pto_core.checks import shadow
from pto_core.checks.hazards import HazardTracker
from pto_core.checks.shadow import BlockMap
from pto_core.memory import Buffer

PIPES = ["MTE2", "MTE3", "FIX", "V"]
SIZE = 4096


def _tracker():
    ctx = SimpleNamespace(machine=SimpleNamespace(options=SimpleNamespace(hazard_same_pipe="ordered")),
                          sync_state=None, target=None)
    return HazardTracker(ctx)


steps = st.lists(st.one_of(
    st.tuples(st.just("runs"), st.sampled_from(PIPES), st.integers(0, SIZE // 2), st.integers(1, 6),
              st.integers(1, 300), st.integers(0, 400), st.booleans()),
    st.tuples(st.just("sync"), st.sampled_from(PIPES), st.sampled_from(PIPES)),
    st.tuples(st.just("barrier"))), max_size=25)


def _run(steps, grouped: bool):
    h = _tracker()
    buf = Buffer("gm", SIZE, label="gm:t")
    events = []
    for step in steps:
        if step[0] == "sync":
            h.begin_op("pto.set_flag", "S", None)
            tok = h.flag_set(step[1], step[2])
            h.begin_op("pto.wait_flag", "S", None)
            h.flag_wait(step[1], step[2], tok)
            continue
        if step[0] == "barrier":
            h.begin_op("pto.barrier", "S", None)
            h.barrier("ALL")
            continue
        _, pipe, lo, count, run, gap, write = step
        stride = run + gap
        count = min(count, (SIZE - lo - run) // stride + 1) if lo + run <= SIZE else 0
        h.begin_op(f"op.{pipe}", pipe, None)
        try:
            if grouped:
                h.on_access_runs(buf, lo, count, run, stride, write, "dst")
            else:
                for k in range(count):
                    h.on_access(buf, lo + k * stride, lo + k * stride + run, write, "dst")
            events.append("ok")
        except HazardError as e:
            events.append((e.kind, e.byte_range, str(e)))
    h.begin_op("end", "S", None)
    sh = h.shadows.get(buf)
    hist = None if sh is None else (sh.w.array(0, sh.nblocks).tolist(),
                                    {q: r.array(0, sh.nblocks).tolist() for q, r in sh.r.items()},
                                    dict(sh.max_w), dict(sh.max_r))
    return events, hist


@pytest.mark.parametrize("max_runs", [shadow.MAX_RUNS, 2])
@settings(max_examples=150, deadline=None)
@given(steps)
def test_on_access_runs_matches_one_on_access_per_run(max_runs, steps):
    old = shadow.MAX_RUNS
    shadow.MAX_RUNS = max_runs
    try:
        assert _run(steps, True) == _run(steps, False)
    finally:
        shadow.MAX_RUNS = old


def test_whole_buffer_assign_resets_a_per_block_map_to_one_run(monkeypatch):
    monkeypatch.setattr(shadow, "MAX_RUNS", 2)
    m = BlockMap(8, 7)
    for b in range(3):
        m.assign(2 * b, 2 * b + 1, b)
    assert m.starts is None
    m.assign(0, 8, 5)
    assert m.starts == [0] and m.vals == [5] and m.array(0, 8).tolist() == [5] * 8
    m.assign(3, 4, 1)
    assert m.array(0, 8).tolist() == [5, 5, 5, 1, 5, 5, 5, 5]


def _reference_flush(h):
    """The record rule of `HazardTracker._flush` written plainly: every access in order, except a read that a
    later write of the same op to the same buffer covers."""
    p, e = h._pipe, h._epoch
    pending = list(h._pending)
    for i, (sh, b0, b1, is_write) in enumerate(pending):
        if is_write:
            sh.record_write(b0, b1, p, e)
        elif not any(w and s2 is sh and w0 <= b0 and b1 <= w1 for s2, w0, w1, w in pending[i + 1:]):
            sh.record_read(b0, b1, p, e)
    h._pending.clear()
    h._last_write = {}


op_accesses = st.lists(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 40), st.integers(1, 24), st.booleans()),
                                min_size=1, max_size=6), max_size=12)


@settings(max_examples=200, deadline=None)
@given(op_accesses, st.lists(st.sampled_from(PIPES), min_size=12, max_size=12))
def test_flush_records_like_the_plain_rule(ops, pipes):
    """Each op's accesses (reads and writes of two buffers, in any order) end up in the history as the plain rule
    says; a barrier between ops keeps every access legal."""
    hist = []
    for reference in (False, True):
        h = _tracker()
        bufs = [Buffer("ub", 64 * 32, label="ub"), Buffer("l1", 64 * 32, label="l1")]
        for k, accesses in enumerate(ops):
            h.begin_op("pto.barrier", "S", None)
            h.barrier("ALL")
            h.begin_op(f"op{k}", pipes[k], None)
            for which, blk, nblk, write in accesses:
                h.on_access(bufs[which], blk * 32, (blk + nblk) * 32, write)
            if reference:
                _reference_flush(h)
        if reference:
            h._pending.clear()
        h.begin_op("end", "S", None)
        hist.append([None if sh is None else (sh.w.array(0, sh.nblocks).tolist(),
                                              {q: r.array(0, sh.nblocks).tolist() for q, r in sh.r.items()},
                                              dict(sh.max_w), dict(sh.max_r))
                     for sh in (h.shadows.get(b) for b in bufs)])
    assert hist[0] == hist[1]
