"""The pipe hazard verifier: a passing and a failing kernel for every edge and hazard kind.

Kernels use the test-local stand-in ops of `sync_standins` (one per pipe); the lead
adds the same seed case with the real ``pto.mad`` / ``pto.mte_l0c_gm`` after merging.
"""
import inspect

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import sync_standins  # noqa: F401  (registers the t_* stand-in ops)
from pto_core import HazardError, Machine, MachineOptions, SyncError, pto
from pto_core.checks import shadow
from pto_core.pipes import PIPES

N = 512   # bytes per tile in the chain kernels (one L0C fractal)


def here() -> int:
    """Line number of the caller's next line."""
    return inspect.currentframe().f_back.f_lineno + 1


def data(n=N, seed=0):
    return (np.arange(n) * 7 + seed).astype(np.uint8) % 200   # never the 0xFF fill byte


@pytest.fixture(autouse=True, params=["runs", "per-block"])
def shadow_form(request, monkeypatch):
    """Every test runs with the shadow maps in run form and in per-block array form (`shadow.MAX_RUNS`)."""
    if request.param == "per-block":
        monkeypatch.setattr(shadow, "MAX_RUNS", 0)
    return request.param


@pytest.fixture
def m():
    return Machine("A2A3")


# ----------------------------------------------------------------------------- the seed's canonical case

def test_seed_case_fixpipe_after_mad_without_flag_fails(m):
    l0a, l0b, l0c = m.ptr("l0a", "u8", 0), m.ptr("l0b", "u8", 0), m.ptr("l0c", "u8", 0)
    m.write(l0a, data())
    m.write(l0b, data(seed=3))
    out = m.gm_alloc((N,), "u8", name="out")
    mad_line = here()
    pto.t_mad(l0a, l0b, l0c, N)
    fix_line = here() + 1            # the call inside the with-block
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(l0c, out, N)
    err = e.value
    msg = str(err)
    assert err.kind == "RAW" and err.buffer == "core0.l0c" and err.byte_range == (0, N)
    assert "pto.t_fixpipe (PIPE_FIX) reads" in msg and "pto.t_mad (PIPE_M op #1" in msg
    assert f"{__file__}:{mad_line}" in msg and f"{__file__}:{fix_line}" in msg
    assert "core0.l0c bytes [0x0, 0x200)" in msg
    assert "insert pto.set_flag[PIPE_M, PIPE_FIX, EVENT_ID0] after pto.t_mad" in err.hint
    assert "pto.wait_flag[PIPE_M, PIPE_FIX, EVENT_ID0] before pto.t_fixpipe" in err.hint
    assert "unit_flag(check_and_set)" in err.hint
    assert err.where.line == fix_line and err.operand == "src"
    assert err.first[:2] == ("pto.t_mad", "M") and err.second[:2] == ("pto.t_fixpipe", "FIX")


def test_seed_case_with_set_and_wait_passes(m):
    l0a, l0b, l0c = m.ptr("l0a", "u8", 0), m.ptr("l0b", "u8", 0), m.ptr("l0c", "u8", 0)
    m.write(l0a, data())
    m.write(l0b, data(seed=3))
    out = m.gm_alloc((N,), "u8", name="out")
    pto.t_mad(l0a, l0b, l0c, N)
    pto.set_flag("CUBE", "FIXP", 0)
    pto.wait_flag("CUBE", "FIXP", 0)
    pto.t_fixpipe(l0c, out, N)
    assert np.array_equal(m.read(out, N), data() + data(seed=3))
    assert m.end_kernel() == []


# ----------------------------------------------------------------------------- full cube chain

def cube_chain(m, drop=None):
    """GM -MTE2-> L1 -MTE1-> L0A/L0B -M-> L0C -FIX-> GM with the three forward flags; ``drop`` omits one wait."""
    a = m.gm_tensor(data(), name="a")
    b = m.gm_tensor(data(seed=5), name="b")
    c = m.gm_alloc((N,), "u8", name="c")
    l1a, l1b = m.ptr("l1", "u8", 0), m.ptr("l1", "u8", N)
    l0a, l0b, l0c = m.ptr("l0a", "u8", 0), m.ptr("l0b", "u8", 0), m.ptr("l0c", "u8", 0)

    def edge(src, dst):
        pto.set_flag(src, dst, 0)
        if drop != f"{src}->{dst}":
            pto.wait_flag(src, dst, 0)

    pto.t_mte2(a, l1a, N)
    pto.t_mte2(b, l1b, N)
    edge("MTE2", "MTE1")
    pto.t_mte1(l1a, l0a, N)
    pto.t_mte1(l1b, l0b, N)
    edge("MTE1", "M")
    pto.t_mad(l0a, l0b, l0c, N)
    edge("M", "FIX")
    pto.t_fixpipe(l0c, c, N)
    return c


def test_cube_chain_passes_and_computes(m):
    c = cube_chain(m)
    assert np.array_equal(m.read(c, N), (data() + 2) + (data(seed=5) + 2))
    assert m.end_kernel() == []


@pytest.mark.parametrize("drop,reader,space", [("MTE2->MTE1", "pto.t_mte1", "core0.l1"),
                                               ("MTE1->M", "pto.t_mad", "core0.l0a"),
                                               ("M->FIX", "pto.t_fixpipe", "core0.l0c")])
def test_cube_chain_with_one_wait_removed_fails(m, drop, reader, space):
    src, dst = drop.split("->")
    with pytest.raises(HazardError) as e:
        cube_chain(m, drop=drop)
    msg = str(e.value)
    assert e.value.op == reader and e.value.buffer == space
    assert f"no happens-before edge from PIPE_{src} to PIPE_{dst}" in msg
    assert f"pto.wait_flag[PIPE_{src}, PIPE_{dst}, EVENT_ID" in e.value.hint


def test_cube_chain_with_verifier_off_runs_the_broken_kernel():
    m = Machine("A2A3", options=MachineOptions(check_hazards=False))
    c = cube_chain(m, drop="M->FIX")
    assert np.array_equal(m.read(c, N), (data() + 2) + (data(seed=5) + 2))
    reports = m.end_kernel()          # the dropped wait leaves its flag set: still reported
    assert len(reports) == 1 and "EVENT_ID0" in reports[0][1]


# ----------------------------------------------------------------------------- transitivity

def test_transitive_chain_orders_mte2_before_fix(m):
    x = m.ptr("l1", "u8", 0x1000)
    out = m.gm_alloc((64,), "u8", name="o")
    pto.t_write_mte2(x, 64, 9)
    for src, dst in (("MTE2", "MTE1"), ("MTE1", "M"), ("M", "FIX")):
        pto.set_flag(src, dst, 1)
        pto.wait_flag(src, dst, 1)
    pto.t_fix(x, out, 64)
    assert np.all(m.read(out, 64) == 10)


def test_transitive_chain_broken_in_the_middle_fails(m):
    x = m.ptr("l1", "u8", 0x1000)
    out = m.gm_alloc((64,), "u8", name="o")
    pto.t_write_mte2(x, 64, 9)
    pto.set_flag("MTE2", "MTE1", 1)
    pto.wait_flag("MTE2", "MTE1", 1)
    pto.set_flag("M", "FIX", 1)          # M never waited for MTE1: M knows nothing of MTE2
    pto.wait_flag("M", "FIX", 1)
    with pytest.raises(HazardError) as e:
        pto.t_fix(x, out, 64)
    assert "from PIPE_MTE2 to PIPE_FIX" in str(e.value)


def test_set_flag_before_the_write_does_not_order_it(m):
    x = m.ptr("ub", "u8", 0)
    pto.set_flag("MTE2", "V", 0)
    pto.t_write_mte2(x, 32, 1)           # issued after the set: not covered by it
    pto.wait_flag("MTE2", "V", 0)
    with pytest.raises(HazardError) as e:
        pto.t_read_v(x, 32)
    assert e.value.kind == "RAW"


def test_wait_after_the_read_does_not_order_it(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 32, 1)
    pto.set_flag("MTE2", "V", 0)
    with pytest.raises(HazardError):
        pto.t_read_v(x, 32)


def test_flag_to_another_pipe_does_not_help(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 32, 1)
    pto.set_flag("MTE2", "MTE3", 0)
    pto.wait_flag("MTE2", "MTE3", 0)
    with pytest.raises(HazardError) as e:
        pto.t_read_v(x, 32)
    assert "from PIPE_MTE2 to PIPE_V" in str(e.value)


# ----------------------------------------------------------------------------- WAW / WAR

def test_waw_between_pipes(m):
    out = m.gm_alloc((64,), "u8", name="o")
    pto.t_write_mte3(out, 64, 1)
    with pytest.raises(HazardError) as e:
        pto.t_write_fix(out, 64, 2)
    assert e.value.kind == "WAW" and "overwrites bytes that pto.t_write_mte3" in str(e.value)


def test_waw_with_flag_passes(m):
    out = m.gm_alloc((64,), "u8", name="o")
    pto.t_write_mte3(out, 64, 1)
    pto.set_flag("MTE3", "FIX", 2)
    pto.wait_flag("MTE3", "FIX", 2)
    pto.t_write_fix(out, 64, 2)
    assert np.all(m.read(out, 64) == 2)


def test_war_between_pipes(m):
    x = m.ptr("ub", "u8", 0)
    m.write(x, data(64))
    pto.t_read_mte3(x, 64)
    with pytest.raises(HazardError) as e:
        pto.t_write_v(x, 64, 0)
    assert e.value.kind == "WAR"
    assert "pto.t_write_v (PIPE_V) overwrites bytes that pto.t_read_mte3 (PIPE_MTE3" in str(e.value)
    assert "set_flag[PIPE_MTE3, PIPE_V" in e.value.hint


def test_war_with_reverse_flag_passes(m):
    x = m.ptr("ub", "u8", 0)
    m.write(x, data(64))
    pto.t_read_mte3(x, 64)
    pto.set_flag("MTE3", "V", 0)
    pto.wait_flag("MTE3", "V", 0)
    pto.t_write_v(x, 64, 0)


def test_readers_are_forgotten_after_an_ordered_write(m):
    x = m.ptr("ub", "u8", 0)
    m.write(x, data(64))
    pto.t_read_mte3(x, 64)
    pto.set_flag("MTE3", "V", 0)
    pto.wait_flag("MTE3", "V", 0)
    pto.t_write_v(x, 64, 5)
    pto.set_flag("V", "MTE2", 0)
    pto.wait_flag("V", "MTE2", 0)
    pto.t_write_mte2(x, 64, 6)       # ordered after V's write, hence after MTE3's read


def test_reads_by_many_pipes_do_not_conflict(m):
    x = m.ptr("l1", "u8", 0)
    m.write(x, data(64))
    for p in PIPES:
        getattr(pto, f"t_read_{p.lower()}")(x, 64)


# ----------------------------------------------------------------------------- ping-pong double buffering

def ping_pong(m, iters=6, drop=None):
    """MTE2 -> V -> MTE3 over two UB input and two UB output buffers, 8 event ids, primed and drained.

    ``drop`` names one wait to omit: ``"in_rev"`` (V->MTE2 WAR), ``"out_rev"`` (MTE3->V WAR),
    ``"in_fwd"`` (MTE2->V RAW) or ``"out_fwd"`` (V->MTE3 RAW); it is dropped in iteration 2.
    """
    T = 256
    src = m.gm_tensor(data(T * iters), name="src")
    dst = m.gm_alloc((T * iters,), "u8", name="dst")
    ub_in = [m.ptr("ub", "u8", 0), m.ptr("ub", "u8", T)]
    ub_out = [m.ptr("ub", "u8", 2 * T), m.ptr("ub", "u8", 3 * T)]
    IN_FWD, IN_REV, OUT_FWD, OUT_REV = (0, 1), (2, 3), (4, 5), (6, 7)

    def wait(kind, i, src_pipe, dst_pipe, ev):
        if not (drop == kind and i == 2):
            pto.wait_flag(src_pipe, dst_pipe, ev)

    for k in (0, 1):
        pto.set_flag("V", "MTE2", IN_REV[k])
        pto.set_flag("MTE3", "V", OUT_REV[k])
    for i in range(iters):
        k = i % 2
        wait("in_rev", i, "V", "MTE2", IN_REV[k])
        pto.t_mte2(src + i * T, ub_in[k], T)
        pto.set_flag("MTE2", "V", IN_FWD[k])
        wait("in_fwd", i, "MTE2", "V", IN_FWD[k])
        wait("out_rev", i, "MTE3", "V", OUT_REV[k])
        pto.t_vec(ub_in[k], ub_out[k], T)
        pto.set_flag("V", "MTE2", IN_REV[k])
        pto.set_flag("V", "MTE3", OUT_FWD[k])
        wait("out_fwd", i, "V", "MTE3", OUT_FWD[k])
        pto.t_mte3(ub_out[k], dst + i * T, T)
        pto.set_flag("MTE3", "V", OUT_REV[k])
    for k in (0, 1):
        pto.wait_flag("V", "MTE2", IN_REV[k])
        pto.wait_flag("MTE3", "V", OUT_REV[k])
    return src, dst, T


def test_ping_pong_double_buffering_passes(m):
    src, dst, T = ping_pong(m)
    assert np.array_equal(m.read(dst, 6 * T), data(6 * T) + 3)
    assert m.end_kernel() == []


@pytest.mark.parametrize("drop,kind,pipes,buf_off", [
    ("in_rev", "WAR", ("V", "MTE2"), 0),
    ("out_rev", "WAR", ("MTE3", "V"), 512),
    ("in_fwd", "RAW", ("MTE2", "V"), 0),
    ("out_fwd", "RAW", ("V", "MTE3"), 512),
])
def test_ping_pong_with_one_wait_dropped_fails(m, drop, kind, pipes, buf_off):
    with pytest.raises(HazardError) as e:
        ping_pong(m, drop=drop)
    err = e.value
    assert err.kind == kind and err.buffer == "core0.ub0"
    assert err.byte_range == (buf_off, buf_off + 256)   # buffer 0 (iteration 2 reuses it)
    assert f"from PIPE_{pipes[0]} to PIPE_{pipes[1]}" in str(err)


# ----------------------------------------------------------------------------- barriers

def test_barrier_all_orders_everything(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 64, 1)
    pto.pipe_barrier("ALL")
    pto.t_read_v(x, 64)
    pto.t_read_mte3(x, 32)
    pto.pipe_barrier("PIPE_ALL")
    pto.t_write_s(x, 64, 2)


def test_single_pipe_barrier_is_not_a_cross_pipe_edge(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 64, 1)
    pto.barrier("MTE2")
    pto.barrier("V")
    with pytest.raises(HazardError) as e:
        pto.t_read_v(x, 64)
    assert "pipe_barrier('ALL')" in e.value.hint


def test_barrier_all_does_not_cover_later_writes(m):
    x = m.ptr("ub", "u8", 0)
    pto.pipe_barrier("ALL")
    pto.t_write_mte2(x, 64, 1)
    with pytest.raises(HazardError):
        pto.t_read_v(x, 64)


# ----------------------------------------------------------------------------- unit flags

def unit_setup(m):
    l0a, l0b, l0c = m.ptr("l0a", "u8", 0), m.ptr("l0b", "u8", 0), m.ptr("l0c", "u8", 0)
    m.write(l0a, data())
    m.write(l0b, data(seed=1))
    return l0a, l0b, l0c, m.gm_alloc((N,), "u8", name="out")


def test_unit_flag_handshake_orders_mad_before_fixpipe(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_only")
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_and_clear")
    assert np.array_equal(m.read(out, N), data() + data(seed=1))
    assert m.end_kernel() == []


def test_fixpipe_unit_flag_without_published_tile_is_a_deadlock(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_only")       # checks, never publishes
    with pytest.raises(SyncError) as e:
        pto.t_fixpipe(l0c, out, N, unit_flag="check_and_clear")
    assert "deadlock" in str(e.value) and not isinstance(e.value, HazardError)
    assert "core0.l0c bytes [0x0, 0x200)" in str(e.value) and e.value.operand == "unit_flag"


def test_published_tile_read_without_unit_flag_is_a_hazard(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    with pytest.raises(HazardError):
        pto.t_fixpipe(l0c, out, N)
    assert "never checked" in m.end_kernel()[0][1]


def test_unit_flag_covers_only_the_published_bytes(m):
    l0a, l0b, l0c, out = unit_setup(m)
    other = m.ptr("l0c", "u8", 0x1000)
    pto.t_mad(l0a, l0b, other, N)                              # no unit flag, no set_flag
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_and_clear")    # fine
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(other, out, N)
    assert e.value.byte_range == (0x1000, 0x1000 + N)


def test_unit_flag_grant_holds_for_later_fixpipes_of_the_pipe(m):
    """UNIT_FLAG_PROGRAM_ORDER: a FIXPIPE without unit flag after a unit-flag FIXPIPE on the published bytes is
    ordered after the mad (FIX program order); an earlier mad's other tile is not."""
    l0a, l0b, l0c, out = unit_setup(m)
    other = m.ptr("l0c", "u8", 0x1000)
    pto.t_mad(l0a, l0b, other, N)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_only")
    pto.t_fixpipe(l0c, out, N)                                  # fine: after the checking FIXPIPE
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(other, out, N)
    assert e.value.byte_range == (0x1000, 0x1000 + N)


def test_unit_flag_grant_is_the_checking_ops_only_without_program_order():
    m = Machine("A2A3", options=MachineOptions(hazard_same_pipe="barrier"))
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_only")
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(l0c, out, N)
    assert e.value.kind == "RAW"


def test_refused_unit_flag_fixpipe_leaves_no_grant_for_later_fixpipes(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_write_mte2(out, N, 1)                                 # the FIXPIPE's destination, no flag
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(l0c, out, N, unit_flag="check_only")      # WAW on out: refused
    assert e.value.kind == "WAW"
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(l0c, out, N)                              # no grant was left behind
    assert e.value.kind == "RAW" and e.value.buffer.endswith("l0c")


def test_write_names_the_first_conflicting_bytes_war_before_waw(m):
    """A write whose first conflicting block is a WAR and a later one a WAW reports the WAR (first bytes)."""
    x = m.ptr("ub", "u8", 0)
    m.write(x, np.zeros(256, np.uint8))
    pto.t_read_v(x, 32)
    pto.t_write_mte1(x + 128, 32, 1)
    with pytest.raises(HazardError) as e:
        pto.t_write_mte2(x, 192, 1)
    assert (e.value.kind, e.value.byte_range) == ("WAR", (0, 32))
    assert "PIPE_V" in str(e.value)
    with pytest.raises(HazardError) as e:              # the WAW first: named
        pto.t_write_mte2(x + 128, 64, 1)
    assert (e.value.kind, e.value.byte_range) == ("WAW", (128, 160))


def test_unit_flag_clear_orders_fixpipe_read_before_next_mad(m):
    l0a, l0b, l0c, out = unit_setup(m)
    for _ in range(3):
        pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
        pto.t_fixpipe(l0c, out, N, unit_flag="check_and_clear")
    assert m.end_kernel() == []


def test_mad_overwriting_l0c_fixpipe_read_without_unit_flag_is_war(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_and_clear")
    with pytest.raises(HazardError) as e:
        pto.t_mad(l0a, l0b, l0c, N)
    assert e.value.kind == "WAR" and "unit_flag(check_and_clear)" in e.value.hint


def test_mad_check_on_uncleared_tile_is_a_deadlock(m):
    l0a, l0b, l0c, out = unit_setup(m)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, out, N, unit_flag="check_only")          # checks but does not clear
    with pytest.raises(SyncError) as e:
        pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    assert "check_and_clear" in str(e.value) and "bytes [0x0, 0x200)" in str(e.value)


def test_unit_flag_edge_is_transitive(m):
    """UNIT_FLAG_TRANSITIVE: MTE1 reads an L1 tile, flag MTE1 -> M, the mad publishes its L0C tile, and the
    FIXPIPE that consumed the tile overwrites that L1 tile: ordered (the FIXPIPE waited for the mad, which
    waited for MTE1), no WAR (h_hazard100's probe P10)."""
    l0a, l0b, l0c, out = unit_setup(m)
    l1 = m.ptr("l1", "u8", 0)
    m.write(l1, data(seed=2))
    pto.t_mte1(l1, l0a, N)
    pto.set_flag("MTE1", "M", 0)
    pto.wait_flag("MTE1", "M", 0)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    pto.t_fixpipe(l0c, l1, N, unit_flag="check_and_clear")
    assert np.array_equal(m.read(l1, N), data(seed=2) + np.uint8(1) + data(seed=1))     # uint8 wraps
    assert m.end_kernel() == []


def test_unit_flag_edge_does_not_order_what_the_mad_did_not_wait_for(m):
    """Without the MTE1 -> M flag the mad itself is a hazard; with check_hazards off for it, the FIXPIPE
    still may not overwrite what MTE1 read: the unit flag carries only what the mad waited for."""
    l0a, l0b, l0c, out = unit_setup(m)
    l1 = m.ptr("l1", "u8", 0)
    pto.t_write_mte1(l1, N, 3)
    pto.t_mad(l0a, l0b, l0c, N, unit_flag="check_and_set")
    with pytest.raises(HazardError) as e:
        pto.t_fixpipe(l0c, l1, N, unit_flag="check_and_clear")
    assert e.value.kind == "WAW" and e.value.first[1] == "MTE1"


# ----------------------------------------------------------------------------- same-pipe policy

def test_same_pipe_is_ordered_by_default(m):
    x, y = m.ptr("ub", "u8", 0), m.ptr("ub", "u8", 64)
    pto.t_write_v(x, 64, 1)
    pto.t_vec(x, y, 64)
    pto.t_write_v(x, 64, 2)


@pytest.fixture
def strict():
    return Machine("A2A3", options=MachineOptions(hazard_same_pipe="barrier"))


def test_strict_same_pipe_needs_a_barrier(strict):
    x, y = strict.ptr("ub", "u8", 0), strict.ptr("ub", "u8", 64)
    pto.t_write_v(x, 64, 1)
    with pytest.raises(HazardError) as e:
        pto.t_vec(x, y, 64)
    assert "both on PIPE_V" in str(e.value) and "pto.barrier <PIPE_V>" in e.value.hint


def test_strict_same_pipe_with_barrier_passes(strict):
    x, y = strict.ptr("ub", "u8", 0), strict.ptr("ub", "u8", 64)
    pto.t_write_v(x, 64, 1)
    pto.pipe_barrier("V")
    pto.t_vec(x, y, 64)
    pto.barrier("ALL")
    pto.t_write_v(x, 64, 2)


def test_strict_same_pipe_flag_pair_is_an_edge(strict):
    x, y = strict.ptr("ub", "u8", 0), strict.ptr("ub", "u8", 64)
    pto.t_write_v(x, 64, 1)
    pto.set_flag("V", "V", 0)
    pto.wait_flag("V", "V", 0)
    pto.t_vec(x, y, 64)


def test_strict_in_place_op_does_not_conflict_with_itself(strict):
    x = strict.ptr("ub", "u8", 0)
    strict.write(x, data(64))
    pto.t_vec(x, x, 64)


def test_strict_scalar_pipe_is_always_in_order(strict):
    x = strict.ptr("ub", "u8", 0)
    pto.t_write_s(x, 2, 1)
    pto.t_read_s(x, 2)
    pto.t_write_s(x, 2, 3)


# ----------------------------------------------------------------------------- GM, ranges, granularity

def test_gm_is_tracked(m):
    g = m.gm_alloc((256,), "u8", name="scratch")
    x = m.ptr("ub", "u8", 0)
    m.write(x, data(256))
    pto.t_mte3(x, g, 256)
    with pytest.raises(HazardError) as e:
        pto.t_mte2(g + 64, x, 64)
    msg = str(e.value)
    assert e.value.buffer == "gm:scratch" and e.value.byte_range == (64, 128)
    assert f"GM address {g.addr + 64:#x}" in msg


def test_byte_range_is_the_overlap_of_both_accesses(m):
    x = m.ptr("l1", "u8", 0)
    pto.t_write_mte2(x + 0x40, 0x40, 1)
    with pytest.raises(HazardError) as e:
        pto.t_read_mte1(x, 0x100)
    assert e.value.byte_range == (0x40, 0x80)
    assert "bytes [0x40, 0x80)" in str(e.value)


def test_range_stops_at_a_different_writer(m):
    x = m.ptr("l1", "u8", 0)
    pto.t_write_mte2(x, 64, 1)
    pto.t_write_fix(x + 64, 64, 2)
    with pytest.raises(HazardError) as e:
        pto.t_read_mte1(x, 128)
    assert e.value.byte_range == (0, 64) and "pto.t_write_mte2" in str(e.value)


def test_war_names_the_first_conflicting_bytes_whichever_pipe_read_them(m):
    """Two reader pipes: the one that first read the buffer (V, block 5) is not the one with the first
    conflicting bytes (MTE1, block 0); the error names block 0 and MTE1 (found by test_hazard_oracle's fuzzer;
    it used to name V's [0xa0, 0xc0))."""
    x = m.ptr("ub", "u8", 0)
    m.write(x, data(256))
    pto.t_read_v(x + 160, 32)
    pto.t_read_mte1(x, 32)
    with pytest.raises(HazardError) as e:
        pto.t_write_mte2(x, 192, 1)
    assert e.value.kind == "WAR" and e.value.byte_range == (0, 32)
    assert e.value.first[:2] == ("pto.t_read_mte1", "MTE1")
    assert "bytes [0x0, 0x20)" in str(e.value)


def test_disjoint_blocks_do_not_conflict(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 32, 1)
    pto.t_read_v(x + 32, 32)
    pto.t_write_mte3(x + 64, 32, 1)


def test_granularity_is_32_byte_blocks(m):
    """Documented choice: different bytes of one 32-byte block by two pipes still conflict."""
    x = m.ptr("ub", "u8", 0)
    pto.t_write_s(x, 2, 1)
    with pytest.raises(HazardError) as e:
        pto.t_read_v(x + 16, 16)
    assert e.value.byte_range == (16, 32)


def test_end_kernel_drains_every_pipe(m):
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 64, 1)
    assert m.end_kernel() == []
    pto.t_read_v(x, 64)              # next kernel: the write has long completed


def test_cores_are_checked_separately():
    m = Machine("A2A3", cores=2)
    x0 = m.ptr("ub", "u8", 0, core=0)
    x1 = m.ptr("ub", "u8", 0, core=1)
    pto.t_write_mte2(x0, 64, 1)
    m.write(x1, data(64))
    pto.t_read_v(x1, 64)             # core 1's UB: no writer there
    with pytest.raises(HazardError) as e:
        pto.t_read_v(x0, 64)
    assert e.value.buffer == "core0.ub0"


def test_verifier_off_has_no_tracker_and_no_hazard_errors():
    m = Machine("A2A3", options=MachineOptions(check_hazards=False))
    assert all(m.context(i).hazards is None for i in range(len(m.cores)))
    x = m.ptr("ub", "u8", 0)
    pto.t_write_mte2(x, 64, 1)
    pto.t_read_v(x, 64)
    pto.t_write_mte3(x, 64, 2)


# ----------------------------------------------------------------------------- reference model

NBLK = 8
BUFS = 2


COPY_OP = {"MTE2": "t_mte2", "MTE1": "t_mte1", "MTE3": "t_mte3", "V": "t_vec", "FIX": "t_fix", "M": "t_cube",
           "S": "t_scalar"}


def _op_accesses(step):
    """The accesses of one random op, in the order its stand-in makes them: (buf, b0, b1, is_write)."""
    kind, buf, b0, b1 = step[2], step[3], step[4], step[5]
    if kind == "read":
        return [(buf, b0, b1, False)]
    if kind == "write":
        return [(buf, b0, b1, True)]
    if kind == "rmw":
        return [(buf, b0, b1, True), (buf, b0, b1, False)]
    dbuf, d0 = step[6], step[7]                     # copy: read src, then write dst
    return [(buf, b0, b1, False), (dbuf, d0, d0 + b1 - b0, True)]


def _reference(program, strict):
    """First hazard as (op index, kind) by brute force: explicit happens-before graph, all earlier accesses.

    Nodes are ops in issue order, each on one pipe. Direct predecessors of a node on pipe p:
    ordered mode (or p == S): the previous node on p; strict mode: every earlier wait/barrier
    node on p. A set_flag node on q also follows every earlier node on q; a wait node follows
    its set node; barrier(p) follows every earlier node on p; barrier(ALL) follows every
    earlier node and precedes every later one. A conflict is an earlier access by another
    node to a shared block, write/any or any/write, that is not a transitive predecessor; a
    write names the kind of its first conflicting block (WAW when both kinds conflict there).
    """
    preds = []            # node -> set of all transitive predecessors
    pipe_of = []
    kind_of = []
    accesses = []         # (node, buf, block, is_write)
    raised = {}
    last_all = None
    for idx, step in enumerate(program):
        n = len(preds)
        tag = step[0]
        pipe = step[2] if tag == "wait" else step[1]
        direct = set()
        same = [j for j in range(n) if pipe_of[j] == pipe]
        if tag == "barrier" and pipe == "ALL":
            direct |= set(range(n))
        elif not strict or pipe == "S":
            if same:
                direct.add(same[-1])
        else:
            direct |= {j for j in same if kind_of[j] in ("wait", "barrier")}
        if tag == "set" or (tag == "barrier" and pipe != "ALL"):
            direct |= set(same)
        if tag == "wait":
            direct.add(raised.pop(step[1:4]))
        if last_all is not None:
            direct.add(last_all)
        closure = set(direct)
        for d in direct:
            closure |= preds[d]
        preds.append(closure)
        pipe_of.append(pipe)
        kind_of.append(tag)
        if tag == "set":
            raised[step[1:4]] = n
        if tag == "barrier" and pipe == "ALL":
            last_all = n
        if tag != "op":
            continue
        for buf, b0, b1, is_write in _op_accesses(step):
            blocks = range(b0, b1)
            earlier = [(j, w, blk) for (j, bb, blk, w) in accesses if bb == buf and blk in blocks and j != n]
            if is_write:                # the kind of the first conflicting block (WAW on the same block)
                first = min(((blk, not w) for j, w, blk in earlier if j not in closure), default=None)
                if first is not None:
                    return idx, "WAR" if first[1] else "WAW"
            elif any(w and j not in closure for j, w, _ in earlier):
                return idx, "RAW"
            accesses.extend((n, buf, blk, is_write) for blk in blocks)
    return None


PIPE_NAMES = list(PIPES)


@st.composite
def programs(draw):
    """Random straight-line kernels over 2-3 pipes (so flags between them matter), never deadlocking."""
    pipes = draw(st.lists(st.sampled_from(PIPE_NAMES), min_size=2, max_size=3, unique=True))
    steps = []
    raised = set()

    def pair(src, dst):
        key = (src, dst, draw(st.integers(0, 1)))
        if key not in raised:
            steps.extend([("set",) + key, ("wait",) + key])

    for _ in range(draw(st.integers(1, 30))):
        choice = draw(st.sampled_from(["op", "op", "op", "op", "set", "wait", "pair", "chain", "barrier"]))
        if choice == "op":
            kind = draw(st.sampled_from(["read", "write", "write", "copy", "rmw"]))
            b0 = draw(st.integers(0, NBLK - 1))
            b1 = draw(st.integers(b0 + 1, NBLK))
            step = ("op", draw(st.sampled_from(pipes)), kind, draw(st.integers(0, BUFS - 1)), b0, b1)
            if kind == "copy":
                step += (draw(st.integers(0, BUFS - 1)), draw(st.integers(0, NBLK - (b1 - b0))))
            steps.append(step)
        elif choice == "set":
            key = (draw(st.sampled_from(pipes)), draw(st.sampled_from(pipes)), draw(st.integers(0, 1)))
            if key not in raised:
                raised.add(key)
                steps.append(("set",) + key)
        elif choice == "wait" and raised:
            key = draw(st.sampled_from(sorted(raised)))
            raised.discard(key)
            steps.append(("wait",) + key)
        elif choice == "pair":      # set immediately followed by its wait: the common idiom
            pair(draw(st.sampled_from(pipes)), draw(st.sampled_from(pipes)))
        elif choice == "chain":     # a -> b -> c: only transitively ordered
            a, b, c = (draw(st.sampled_from(pipes)) for _ in range(3))
            pair(a, b)
            pair(b, c)
        elif choice == "barrier":
            steps.append(("barrier", draw(st.sampled_from([p for p in pipes if p != "S"] + ["ALL"]))))
    return steps


def _run(program, strict):
    m = Machine("A2A3", options=MachineOptions(hazard_same_pipe="barrier" if strict else "ordered"))
    bufs = [m.ptr("ub", "u8", 0), m.ptr("l1", "u8", 0x800)]
    for b in bufs:
        m.write(b, np.zeros(NBLK * 32, np.uint8))
    for idx, step in enumerate(program):
        try:
            if step[0] == "op":
                _, p, kind, buf, b0, b1 = step[:6]
                ptr, nbytes = bufs[buf] + b0 * 32, (b1 - b0) * 32
                if kind == "copy":
                    getattr(pto, COPY_OP[p])(ptr, bufs[step[6]] + step[7] * 32, nbytes)
                elif kind == "read":
                    getattr(pto, f"t_read_{p.lower()}")(ptr, nbytes)
                else:
                    getattr(pto, f"t_{kind}_{p.lower()}")(ptr, nbytes, idx)
            elif step[0] == "set":
                pto.set_flag(*step[1:])
            elif step[0] == "wait":
                pto.wait_flag(*step[1:])
            else:
                pto.pipe_barrier(step[1])
        except HazardError as e:
            return idx, e.kind
    return None


@settings(max_examples=300, deadline=None)
@given(programs(), st.booleans())
def test_verifier_matches_brute_force_happens_before(program, strict):
    assert _run(program, strict) == _reference(program, strict)


def test_messages_show_the_high_level_call_of_each_op(m):
    from pto_core import Provenance
    from pto_core.ops.registry import execute_call, get_op, make_call
    x = m.ptr("l1", "u8", 0)
    write = make_call(get_op("t_write_mte2"), (x, 64, 1), {}, Provenance("kernel.py", 12, "tik.data_move"))
    read = make_call(get_op("t_read_mte1"), (x, 64), {}, Provenance("kernel.py", 14, "tik.load2dv1"))
    execute_call(m.context(0), write)
    with pytest.raises(HazardError) as e:
        execute_call(m.context(0), read)
    msg = str(e.value)
    assert "pto.t_write_mte2 (PIPE_MTE2 op #1 at kernel.py:12 (`tik.data_move`))" in msg
    assert "before pto.t_read_mte1 at kernel.py:14 (`tik.load2dv1`)" in e.value.hint
    assert msg.startswith("kernel.py:14 in `tik.load2dv1`")


@pytest.mark.parametrize("hole", [False, True])
def test_hazard_text_of_a_load_does_not_depend_on_whether_its_source_was_fully_written(hole):
    """A GM -> L1 load over L1 bytes PIPE_MTE1 read without a flag: the WAR error names the operand the same
    way whether the load takes the remembered-range path (source fully written) or copies the written flags
    (source with a hole), and whatever accessor the op uses (h_hazard152: only the first path named %dst)."""
    m = Machine("A2A3")
    g = m.gm_alloc((1024,), "u8", name="src")
    m.write(g, data(1024)[:500])
    if not hole:
        m.write(g + 500, data(1024)[500:])
    l1 = m.ptr("l1", "u8", 0)
    m.write(l1, data(1024))
    pto.mte_l1_l0a(l1, m.ptr("l0a", "u8", 0), 32, 32)
    with pytest.raises(HazardError) as e:
        pto.mte_gm_l1(g, l1, 1024, nburst=(1, 1024, 1024))
    assert e.value.kind == "WAR" and e.value.byte_range == (0, 1024)
    assert "in `pto.mte_gm_l1`: operand %dst: WAR hazard on core0.l1 bytes [0x0, 0x400)" in str(e.value)


def test_hazard_error_of_a_strided_read_names_the_operand(m):
    """A vector op reading UB bytes an unsynchronised MTE2 load wrote: the RAW error names the source operand."""
    src = m.gm_tensor(np.ones(128, np.float16), name="src")
    a, b = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0x1000)
    m.write(b, np.ones(128, np.float16))
    pto.mte_gm_ub(src, a, 0, 256, nburst=(1, 256, 256))
    with pytest.raises(HazardError) as e:
        pto.ub.vadd(b, a, b, 1)
    assert e.value.kind == "RAW" and "in `pto.ub.vadd`: operand src0: RAW hazard on core0.ub0" in str(e.value)


def _covered_brute(pending):
    """The per-read scan `HazardTracker._flush` uses for small ops: a read whose blocks lie inside one later write
    of the same buffer."""
    out = set()
    for i, (sh, b0, b1, w) in enumerate(pending):
        if not w and any(w2 and s2 is sh and w0 <= b0 and b1 <= w1 for s2, w0, w1, w2 in pending[i + 1:]):
            out.add(i)
    return out


@settings(max_examples=200, deadline=None)
@given(accesses=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(1, 12), st.booleans()),
                         max_size=120))
def test_covered_reads_sweep_matches_the_scan(accesses):
    """The O(n log n) sweep large ops use (`_covered_reads`, an in-place vnchwconv made ~800 accesses: the scan
    was quadratic) finds exactly the reads the per-read scan finds."""
    from pto_core.checks.hazards import _covered_reads
    shadows = [object(), object(), object()]
    pending = [(shadows[s], b0, b0 + n, w) for s, b0, n, w in accesses]
    assert _covered_reads(pending) == _covered_brute(pending)


@settings(max_examples=60, deadline=None)
@given(accesses=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 40), st.integers(1, 12), st.booleans()),
                         max_size=80))
def test_flush_records_the_same_history_with_the_sweep(accesses):
    """`HazardTracker._flush` switches from per-read scans to `_covered_reads` once its scans pass
    `_SCAN_BUDGET`: with the switch at once (budget 0) or never, one op's accesses leave the same history."""
    import types
    from pto_core.checks import hazards as H

    def history(budget):
        old = H._SCAN_BUDGET
        H._SCAN_BUDGET = budget
        try:
            ctx = types.SimpleNamespace(machine=types.SimpleNamespace(
                options=types.SimpleNamespace(hazard_same_pipe="ordered")))
            t = H.HazardTracker(ctx)
            bufs = [type("Buf", (), {"size": 64 * 32, "label": f"b{i}", "space": "ub"})() for i in range(2)]
            t.begin_op("op", "V", None)
            for b, b0, n, w in accesses:
                t.on_access(bufs[b], b0 * 32, (b0 + n) * 32, w)
            t.begin_op("next", "V", None)          # flushes the op's accesses
        finally:
            H._SCAN_BUDGET = old
        out = []
        for b in bufs:
            sh = t.shadows.get(b)
            if sh is None:
                out.append(None)
                continue
            reads = {q: r.array(0, sh.nblocks).tolist() for q, r in sh.r.items() if any(r.array(0, sh.nblocks))}
            out.append((sh.w.array(0, sh.nblocks).tolist(), reads))
        return out

    assert history(0) == history(10 ** 9)
