"""`BlockMap` (the hazard verifier's per-block history in runs of equal values) against a plain array."""
import numpy as np
from hypothesis import given, settings, strategies as st

from pto_core.checks import shadow
from pto_core.checks.shadow import BlockMap


@st.composite
def assignments(draw):
    n = draw(st.integers(1, 48))
    ops = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, n), st.sampled_from([0, 3, 7, 9, 100])),
                        max_size=40))
    return n, [(b0, max(b0 + 1, b1), v) for b0, b1, v in ops]


def check_against_array(n, ops, probe):
    m, ref = BlockMap(n, 7), np.full(n, 7, dtype=np.int64)
    for b0, b1, v in ops:
        m.assign(b0, b1, v)
        ref[b0:b1] = v
        c0, c1 = probe % n, n
        assert m.array(c0, c1).tolist() == ref[c0:c1].tolist()
        if m.starts is not None:
            assert set(m.runs(c0, c1)) == set(ref[c0:c1].tolist())
            assert m.starts[0] == 0 and all(a < b for a, b in zip(m.starts, m.starts[1:]))
            assert all(a != b for a, b in zip(m.vals, m.vals[1:])), "neighbouring runs must differ"
    return m


@settings(max_examples=300, deadline=None)
@given(assignments(), st.integers(0, 47))
def test_block_map_matches_an_array(case, probe):
    check_against_array(*case, probe)


@settings(max_examples=100, deadline=None)
@given(assignments(), st.integers(0, 47))
def test_block_map_switches_to_per_block_array_past_max_runs(case, probe):
    old = shadow.MAX_RUNS
    shadow.MAX_RUNS = 3
    try:
        check_against_array(*case, probe)
    finally:
        shadow.MAX_RUNS = old


def test_block_map_fragmented_past_max_runs_is_per_block(monkeypatch):
    monkeypatch.setattr(shadow, "MAX_RUNS", 3)
    m = BlockMap(10, 7)
    for b in range(3):
        m.assign(2 * b, 2 * b + 1, b)
    assert m.starts is None and m.arr.tolist() == [0, 7, 1, 7, 2, 7, 7, 7, 7, 7]
    m.assign(5, 9, 4)
    assert m.array(0, 10).tolist() == [0, 7, 1, 7, 2, 4, 4, 4, 4, 7]


def test_block_map_runs_stay_few_for_large_ranges():
    m = BlockMap(1 << 20, 7)
    for k in range(100):                       # repeated overwrites of the same two big ranges
        m.assign(0, 1 << 19, 8 * k + 1)
        m.assign(1 << 19, 1 << 20, 8 * k + 2)
    assert m.starts == [0, 1 << 19] and m.vals == [8 * 99 + 1, 8 * 99 + 2]
    m.assign(0, 1 << 20, 8 * 100 + 1)
    assert m.starts == [0] and m.vals == [8 * 100 + 1]


@settings(max_examples=300, deadline=None)
@given(assignments(), st.integers(0, 47))
def test_small_map_paths_build_the_runs_the_general_path_builds(case, probe):
    """`SMALL_MAP_PATHS` (maps of one or two runs built directly) against the general search-and-splice path,
    after every assignment: the same runs (and both equal to a plain array)."""
    n, ops = case
    old = shadow.SMALL_MAP_PATHS
    try:
        for k in range(len(ops) + 1):
            forms = []
            for fast in (True, False):
                shadow.SMALL_MAP_PATHS = fast
                m = check_against_array(n, ops[:k], probe)
                forms.append((m.starts, m.vals, None if m.arr is None else m.arr.tolist()))
            assert forms[0] == forms[1]
    finally:
        shadow.SMALL_MAP_PATHS = old


def test_small_map_paths_on_an_l0_tile_history(monkeypatch):
    """The pattern the fast paths are for: a tile ``[0, 40)`` of a 64-block buffer written, read, cleared by the
    next write (split one run, merge two back), and the other run, at both ends and in the middle."""
    for fast in (True, False):
        monkeypatch.setattr(shadow, "SMALL_MAP_PATHS", fast)
        m = BlockMap(64, 0)
        m.assign(0, 40, 5)
        assert (m.starts, m.vals) == ([0, 40], [5, 0])
        m.assign(0, 40, 0)
        assert (m.starts, m.vals) == ([0], [0])
        m.assign(40, 64, 6)
        assert (m.starts, m.vals) == ([0, 40], [0, 6])
        m.assign(40, 64, 9)
        assert (m.starts, m.vals) == ([0, 40], [0, 9])
        m.assign(0, 40, 9)
        assert (m.starts, m.vals) == ([0], [9])
        m.assign(10, 20, 3)
        assert (m.starts, m.vals) == ([0, 10, 20], [9, 3, 9])
