"""Uninitialised-read detection with the per-buffer summary of known fully-written ranges
(``Buffer.known``): a range an op may clear flags in is never answered from the summary."""
import warnings

import numpy as np
import pytest

from pto_core import HazardError, Machine, MachineOptions, UninitializedRead


@pytest.fixture
def m():
    return Machine("A2A3", options=MachineOptions(uninitialized="raise"))


def test_read_inside_a_written_range_passes_and_outside_fails(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x100)
    m.write(p, np.arange(64, dtype=np.uint8))
    ctx.begin_op("t.read", "V", None)
    assert ctx.read(p.byte_offset(8), 32, operand="%src").tolist() == list(range(8, 40))
    assert m.context(0).core.buffer("ub").known == [(0x100, 0x140)]
    with pytest.raises(UninitializedRead, match="byte 0x140"):
        ctx.read(p, 65, operand="%src")


def test_flags_cleared_through_a_write_span_are_seen_by_later_reads(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x100)
    m.write(p, np.arange(64, dtype=np.uint8))
    ctx.begin_op("t.read", "V", None)
    ctx.read(p, 64)                                   # all set: the range is known
    ctx.begin_op("t.move", "V", None)
    _, flags, _ = ctx.span_tracked(p, 16, 48, write=True, operand="%dst")
    flags[4:8] = False                                # moved undefined bytes in: bytes 0x114..0x117
    ctx.begin_op("t.read", "V", None)
    with pytest.raises(UninitializedRead, match="byte 0x114") as e:
        ctx.read(p, 64, operand="%src")
    assert e.value.operand == "%src"


def test_a_range_checked_while_an_op_holds_writable_flags_is_not_remembered(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0)
    m.write(p, np.ones(128, dtype=np.uint8))
    ctx.begin_op("t.inplace", "V", None)
    _, flags, _ = ctx.span_tracked(p, 0, 128, write=True, operand="%dst")
    ctx.read(p, 128, operand="%src")                  # still all set here
    flags[100] = False                                # then the op clears one flag
    ctx.begin_op("t.read", "V", None)
    with pytest.raises(UninitializedRead, match="byte 0x64"):
        ctx.read(p, 128, operand="%src")


def test_read_span_flags_are_read_only(m):
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0)
    ctx.begin_op("t.read", "V", None)
    _, flags, _ = ctx.span_tracked(p, 0, 64, operand="%src")
    assert not flags.any()
    with pytest.raises(ValueError):
        flags[0] = True


# ----------------------------------------------------------------------------- ops that produce whole spans


def _l1_to_l0a(m, dst_stride):
    """Full-control L1 -> L0A load of a 2 x 2 fractal grid (f16) with the given destination stride."""
    from pto_core import pto
    pto.mte_l1_l0a(m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0), 0, 0, 2, 2, 2, dst_stride)


@pytest.mark.parametrize("dst_stride", [2, 3])
def test_l1_to_l0_load_of_written_bytes_marks_exactly_its_fractals(dst_stride):
    m = Machine("A5")
    m.write(m.ptr("l1", "u8", 0), np.arange(4 * 512, dtype=np.int64).astype(np.uint8))
    _l1_to_l0a(m, dst_stride)
    w = m.cores[0].buffer("l0a").written
    assert w.sum() == 4 * 512                          # the four fractals, nothing in a gap
    blocks = w[:(dst_stride + 2) * 512].reshape(-1, 512)
    assert all(b.all() or not b.any() for b in blocks)
    assert blocks.all() == (dst_stride == 2)           # back to back, or with one free fractal per row
    assert m.read(m.ptr("l0a", "u8", 0), 512).tolist() == (np.arange(512) % 256).tolist()


def test_l1_to_l0_load_carries_an_unwritten_source_byte_to_the_mad():
    from pto_core import pto
    m = Machine("A5", options=MachineOptions(uninitialized="raise", check_hazards=False))
    m.write(m.ptr("l1", "u8", 0), np.zeros(4 * 512, np.uint8))
    m.write(m.ptr("l1", "u8", 4 * 512), np.zeros(4 * 512, np.uint8))
    ctx = m.context(0)
    ctx.begin_op("t.move", "MTE1", None)
    _, flags, _ = ctx.span_tracked(m.ptr("l1", "u8", 0), 0, 4 * 512, write=True, operand="%dst")
    flags[700] = False                                 # one byte of fractal 1 was never written
    _l1_to_l0a(m, 2)
    assert not m.cores[0].buffer("l0a").written[700] and m.cores[0].buffer("l0a").written[:700].all()
    pto.mte_l1_l0b(m.ptr("l1", "f16", 4 * 512), m.ptr("l0b", "f16", 0), 0, 0, 2, 2, 2, 2)
    with pytest.raises(UninitializedRead, match="%lhs"):
        pto.mad(m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0), 32, 32, 32)


# ------------------------------------------------------------------ ExecContext.write_runs (strided stores)

def _runs_machine(**options):
    return Machine("A2A3", options=MachineOptions(uninitialized="raise", **options))


def test_write_runs_marks_and_reports_only_the_runs():
    m = _runs_machine()
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x200)
    ctx.begin_op("t.store", "V", None)
    view = ctx.write_runs(p, 3, 32, 96, operand="dst")
    view[...] = np.arange(96, dtype=np.uint8).reshape(3, 32) + 1
    flags = ctx.core.buffer("ub").written[0x200:0x200 + 2 * 96 + 32]
    assert flags.reshape(-1)[[0, 31, 96, 127, 192, 223]].all()
    assert not flags[32:96].any() and not flags[128:192].any()
    ctx.begin_op("t.read", "V", None)
    assert ctx.read(p.byte_offset(96), 32).tolist() == list(range(33, 65))
    with pytest.raises(UninitializedRead, match="byte 0x220"):       # the first gap byte
        ctx.read(p, 64, operand="%src")


def test_write_runs_gives_what_one_write_per_run_gives():
    rng = np.random.default_rng(1)
    vals = rng.integers(0, 200, (5, 64), dtype=np.uint8)
    results = []
    for strided in (True, False):
        m = _runs_machine()
        ctx = m.context(0)
        p = m.ptr("l1", "u8", 0x400)
        ctx.begin_op("t.store", "FIX", None)
        if strided:
            ctx.write_runs(p, 5, 64, 160)[...] = vals
        else:
            for k in range(5):
                ctx.write(p.byte_offset(160 * k), 64)[...] = vals[k]
        buf = ctx.core.buffer("l1")
        results.append((buf.data[0x400:0x400 + 800].copy(), buf.written[0x400:0x400 + 800].copy()))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


def test_write_runs_reports_each_run_to_the_hazard_verifier_not_the_gaps():
    m = Machine("A2A3")
    ctx = m.context(0)
    p = m.ptr("l1", "u8", 0)
    m.write(p, np.ones(1024, np.uint8))
    ctx.begin_op("t.fix", "FIX", None)
    ctx.write_runs(p, 4, 64, 256)[...] = 7
    ctx.begin_op("t.load", "MTE1", None)
    ctx.read(p.byte_offset(64), 192)               # a gap, read by another pipe with no flag: no hazard
    ctx.begin_op("t.load", "MTE1", None)
    with pytest.raises(HazardError):
        ctx.read(p.byte_offset(256), 64)           # the second run: RAW across pipes without a flag


def test_write_runs_declines_runs_that_span_gm_regions_or_leave_the_space():
    m = _runs_machine()
    a = m.gm_tensor(np.zeros(64, np.uint8), name="a")
    m.gm_tensor(np.zeros(64, np.uint8), name="b")
    ctx = m.context(0)
    ctx.begin_op("t.store", "FIX", None)
    assert ctx.write_runs(a, 2, 32, 32 + m.gm.region("b").base - m.gm.region("a").base) is None
    assert ctx.write_runs(a, 2, 32, 32) is not None
    ub_size = ctx.core.buffer("ub").size
    assert ctx.write_runs(m.ptr("ub", "u8", ub_size - 64), 2, 32, 64) is None


@pytest.mark.parametrize("mode", ["record", "warn"])
def test_uninitialised_reads_past_the_report_cap_are_counted_and_still_warned(mode):
    """Once ``max_reports`` reports are kept, a further uninitialised read in mode ``record`` is only counted
    (the shortcut skips locating the byte and formatting the text); mode ``warn`` still warns for each one.
    Every read path: `read` (span check), `dense_view`, `strided_view`."""
    from pto_core.dtypes import dtype
    m = Machine("A2A3", options=MachineOptions(uninitialized=mode, max_reports=2))
    ctx = m.context(0)
    p = m.ptr("ub", "u8", 0x100)
    f32 = dtype("f32")
    reads = [lambda: ctx.read(p, 32, operand="%a"),
             lambda: ctx.dense_view(p, 32, 32, f32, False, "%b"),
             lambda: ctx.strided_view(p, (2, 4), (64, 4), offset=64, dtype=f32, operand="%c")] * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx.begin_op("t.read", "V", None)
        for r in reads:
            r()
    assert [k for k, _ in m.reports] == ["uninitialized"] * 2
    assert "operand %a reads core0.ub0 byte 0x100" in m.reports[0][1]
    assert "operand %b reads core0.ub0 byte 0x120" in m.reports[1][1]
    assert m.reports_dropped == 4
    assert len(caught) == (6 if mode == "warn" else 0)


# ----------------------------------------------------------------------------- pto.mark_unwritten


def test_mark_unwritten_clears_the_flags_of_its_range_and_keeps_the_bytes(m):
    from pto_core import pto
    ctx = m.activate(0)
    p = m.ptr("ub", "u8", 0x100)
    m.write(p, np.arange(64, dtype=np.uint8))
    ctx.begin_op("t.read", "V", None)
    ctx.read(p, 64)                                    # all set: the range is known
    pto.mark_unwritten(p.byte_offset(16), 16)          # a front end frees its scratch there
    buf = ctx.core.buffer("ub")
    assert buf.written[0x100:0x140].tolist() == [True] * 16 + [False] * 16 + [True] * 32
    assert buf.data[0x100:0x140].tolist() == list(range(64))
    ctx.begin_op("t.read", "V", None)
    ctx.read(p, 16)
    with pytest.raises(UninitializedRead, match="byte 0x110"):
        ctx.read(p, 64, operand="%src")


def test_mark_unwritten_is_no_access_for_the_hazard_verifier():
    from pto_core import OutOfBounds, pto
    m = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    ctx = m.activate(0)
    p = m.ptr("ub", "f16", 0)
    ctx.begin_op("t.vec", "V", None)
    ctx.write(p, 256)                                  # a V write no flag orders before the S pipe
    pto.mark_unwritten(p, 256)                         # no HazardError: it touches no memory
    assert not ctx.core.buffer("ub").written[:256].any()
    with pytest.raises(OutOfBounds):
        pto.mark_unwritten(m.ptr("ub", "u8", ctx.core.buffer("ub").size - 16), 32)
