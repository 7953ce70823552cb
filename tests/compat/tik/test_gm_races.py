"""The cross-core GM race checker seen from TIK: a 32-byte-rounded store of one core spills into
the row another core owns (the pattern of CANN's cummin on Ascend910, which has no data_move_pad)."""
import warnings

import numpy as np
import pytest

from pto_core import BarrierCountWarning, GmOverreadWarning, GmRace, GmRaceWarning
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.debug import tik_machine_options

from .helpers import build, run


def _row_fill_kernel(m: int, barrier_first: bool = False):
    """2 cores; core c fills row c of y (2 x m f16) with c + 1 by one data_move of ceil(2m / 32) blocks.
    With ``barrier_first`` core 1 stores before a block_barrier and core 0 after it."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("float16", (2, m), name="y", scope=tik.scope_gm)
    sync = ti.Tensor("int32", (16,), name="sync", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    blocks = (m * 2 + 31) // 32
    with ti.for_range(0, 2, block_num=2) as core:
        ub = ti.Tensor("float16", (blocks * 16,), name="ub", scope=tik.scope_ubuf)
        val = ti.Scalar("float16", init_value=1.0)
        with ti.if_scope(core == 1):               # (an Expr such as core + 1 cannot set a float16 Scalar)
            val.set_as(2.0)
        ti.vec_dup(blocks * 16, ub, val, 1, 8)          # (m <= 64: one repeat)
        if barrier_first:
            with ti.if_scope(core == 0):
                ti.block_barrier(sync)
                ti.data_move(y[core, 0], ub, 0, 1, blocks, 0, 0)
            with ti.else_scope():
                ti.data_move(y[core, 0], ub, 0, 1, blocks, 0, 0)
                ti.block_barrier(sync)
        else:
            ti.data_move(y[core, 0], ub, 0, 1, blocks, 0, 0)
    return build(ti, "row_fill", [], [y])


def test_rounded_store_spilling_into_another_cores_row_is_reported():
    ti = _row_fill_kernel(20)                   # 40-byte rows, 64-byte stores: core 0 spills 12 values
    with pytest.warns(GmRaceWarning) as rec:
        (y,) = run(ti)
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    rec = [w for w in rec if w.category is GmRaceWarning]      # (core 1's store also warns GmPaddingWriteWarning)
    assert len(races) == 1 and len(rec) == 1
    msg = races[0]
    assert "GM race (write/write) on tensor 'y' float16 elements 20..31 (bytes [40, 64))" in msg
    assert msg.count("test_gm_races.py:") >= 2 and "tik.data_move" in msg
    assert (y[1, :12] == 2).all()               # sequential order: core 1 stored last -- one possible result
    assert rec[0].filename == __file__          # issued at the kernel's line (Python prints it), not in pto_core


def test_aligned_rows_are_no_race():
    ti = _row_fill_kernel(32)                   # 64-byte rows: each store stays in its row
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        (y,) = run(ti)
    assert not [k for k, _ in ti.tikdb.reports if k == "race"]
    assert (y[0] == 1).all() and (y[1] == 2).all()


def test_block_barrier_orders_the_spill():
    ti = _row_fill_kernel(20, barrier_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        (y,) = run(ti)
    assert (y[1, :12] == 1).all() and (y[1, 12:] == 2).all()     # core 0's spill lands after the barrier


def _barrier_kernel(partial: bool):
    """4 cores each store their row of y (core + 1); with ``partial`` only core 0 issues the block_barrier."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    y = ti.Tensor("int32", (4, 8), name="y", scope=tik.scope_gm)
    sync = ti.Tensor("int64", (32,), name="sync", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    with ti.for_range(0, 4, block_num=4) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        v = ti.Scalar("int32", init_value=core + 1)
        ti.vec_dup(8, ub, v, 1, 8)
        if partial:
            with ti.if_scope(core == 0):
                ti.block_barrier(sync)
        else:
            ti.block_barrier(sync)
        ti.data_move(y[core, 0], ub, 0, 1, 1, 0, 0)
    return build(ti, "barrier_count", [], [y])


@pytest.mark.parametrize("order", ["sequential", "random"])
def test_block_barrier_some_cores_never_reach_is_reported(order):
    ti = _barrier_kernel(partial=True)
    ti.tikdb.order = order
    with pytest.warns(BarrierCountWarning, match="kernel hangs") as rec:
        (y,) = run(ti)
    assert len([w for w in rec if issubclass(w.category, BarrierCountWarning)]) == 1     # one per run
    assert {w.filename for w in rec if issubclass(w.category, BarrierCountWarning)} == {__file__}   # the user's line
    sync = [msg for kind, msg in ti.tikdb.reports if kind == "sync"]
    assert len(sync) == 1
    assert "test_gm_races.py:" in sync[0] and "tik.block_barrier" in sync[0]
    assert "core(s) 0 wait" in sync[0] and "1, 2, 3 ended" in sync[0] and "hangs" in sync[0]
    assert y[:, 0].tolist() == [1, 2, 3, 4]        # the simulator still releases core 0 (named choice)


def test_block_barrier_every_core_reaches_is_no_report():
    ti = _barrier_kernel(partial=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BarrierCountWarning)
        (y,) = run(ti)
    assert not [k for k, _ in ti.tikdb.reports if k == "sync"]
    assert y[:, 0].tolist() == [1, 2, 3, 4]


def _wide_barrier_kernel(soc: str, blocks: int, barrier: bool = True):
    """``blocks`` cores each store their row of y (core + 1), with a block_barrier before the store."""
    set_current_compile_soc_info(soc)
    ti = tik.Tik()
    y = ti.Tensor("int32", (blocks, 8), name="y", scope=tik.scope_gm)
    sync = ti.Tensor("int64", (4 * blocks,), name="sync", scope=tik.scope_gm, is_workspace=True,
                     is_atomic_add=True)
    with ti.for_range(0, blocks, block_num=blocks) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        v = ti.Scalar("int32", init_value=core + 1)
        ti.vec_dup(8, ub, v, 1, 8)
        if barrier:
            ti.block_barrier(sync)
        ti.data_move(y[core, 0], ub, 0, 1, 1, 0, 0)
    return build(ti, "wide_barrier", [], [y])


@pytest.mark.parametrize("order", ["sequential", "random"])
def test_block_barrier_in_a_launch_wider_than_the_chip_is_reported(order):
    """Ascend310 runs 2 blocks at a time: a 4-block launch runs in two batches, and the first batch waits
    at the barrier for blocks that cannot start (named choice BARRIER_NEEDS_RESIDENT_BLOCKS)."""
    ti = _wide_barrier_kernel("Ascend310", 4)
    ti.tikdb.order = order
    with pytest.warns(BarrierCountWarning, match="runs 2 at a time") as rec:
        (y,) = run(ti)
    assert len([w for w in rec if issubclass(w.category, BarrierCountWarning)]) == 1
    sync = [msg for kind, msg in ti.tikdb.reports if kind == "sync"]
    assert len(sync) == 1 and "test_gm_races.py:" in sync[0] and "tik.block_barrier" in sync[0]
    assert "launch has 4 blocks" in sync[0] and "hangs" in sync[0] and "block_num" in sync[0]
    assert y[:, 0].tolist() == [1, 2, 3, 4]           # the values are still computed


@pytest.mark.parametrize("soc,blocks", [("Ascend310", 2), ("Ascend910A", 32), ("Ascend910B1", 48)])
def test_block_barrier_in_a_launch_the_chip_holds_is_no_report(soc, blocks):
    ti = _wide_barrier_kernel(soc, blocks)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BarrierCountWarning)
        (y,) = run(ti)
    assert not [k for k, _ in ti.tikdb.reports if k == "sync"]
    assert y[:, 0].tolist() == list(range(1, blocks + 1))


def test_wide_launch_without_a_barrier_is_no_report():
    """Batches are fine when no block waits for another."""
    ti = _wide_barrier_kernel("Ascend310", 4, barrier=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BarrierCountWarning)
        (y,) = run(ti)
    assert y[:, 0].tolist() == [1, 2, 3, 4]


def _shared_table_kernel(same_values: bool):
    """Every core (code outside the block loop runs on each) stores a table into a GM workspace and reads it
    back, then writes its own row of y from it (the pattern of CANN's dyn_seq_outer offset table). With
    ``same_values`` every core stores the same table; otherwise core-dependent values (a real race)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int32", (2, 8), name="y", scope=tik.scope_gm)
    ws = ti.Tensor("int32", (8,), name="ws", scope=tik.scope_gm, is_workspace=True)
    with ti.for_range(0, 2, block_num=2) as core:
        tab = ti.Tensor("int32", (8,), name="tab", scope=tik.scope_ubuf)
        ti.vec_dup(8, tab, 7 if same_values else core + 7, 1, 8)
        ti.data_move(ws, tab, 0, 1, 1, 0, 0)
        back = ti.Tensor("int32", (8,), name="back", scope=tik.scope_ubuf)
        ti.data_move(back, ws, 0, 1, 1, 0, 0)
        ti.data_move(y[core, 0], back, 0, 1, 1, 0, 0)
    return build(ti, "shared_table", [], [y])


@pytest.mark.parametrize("order", ["sequential", "random"])
def test_each_core_reading_back_the_identical_table_it_stored_is_no_race(order):
    # core 1 reads bytes core 0 changed, but core 1 stored those very bytes itself first: it reads its own
    # bytes or core 0's identical ones, whichever core comes first (was a read/write race, sequential only)
    ti = _shared_table_kernel(same_values=True)
    ti.tikdb.order = order
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        (y,) = run(ti)
    assert not [k for k, _ in ti.tikdb.reports if k == "race"]
    assert (y == 7).all()


def test_each_core_storing_a_different_table_is_still_reported():
    ti = _shared_table_kernel(same_values=False)
    with pytest.warns(GmRaceWarning):
        run(ti)
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    assert any("(write/write) on tensor 'ws" in m for m in races), races


def _rewritten_table_kernel():
    """Core 0 stores 5s to a GM workspace and then 7s over them; core 1 stores 7s once and reads the
    workspace back. Core 1's read may land between core 0's two stores (it reads the 5s): a real race,
    which no write/write compare sees in core order 0, 1 (core 0's 5s are gone before core 1 stores)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int32", (2, 8), name="y", scope=tik.scope_gm)
    ws = ti.Tensor("int32", (8,), name="ws", scope=tik.scope_gm, is_workspace=True)
    with ti.for_range(0, 2, block_num=2) as core:
        tab = ti.Tensor("int32", (8,), name="tab", scope=tik.scope_ubuf)
        with ti.if_scope(core == 0):
            ti.vec_dup(8, tab, 5, 1, 8)
            ti.data_move(ws, tab, 0, 1, 1, 0, 0)
        ti.vec_dup(8, tab, 7, 1, 8)
        ti.data_move(ws, tab, 0, 1, 1, 0, 0)
        back = ti.Tensor("int32", (8,), name="back", scope=tik.scope_ubuf)
        ti.data_move(back, ws, 0, 1, 1, 0, 0)
        ti.data_move(y[core, 0], back, 0, 1, 1, 0, 0)
    return build(ti, "rewritten_table", [], [y])


def test_reading_back_ones_own_store_does_not_hide_another_cores_earlier_different_value():
    # the exception for reading back one's own store holds only for bytes the other core changed once:
    # core 0 changed them twice, so its first value (5) may be what core 1 reads (was no report at all)
    ti = _rewritten_table_kernel()
    with pytest.warns(GmRaceWarning):
        run(ti)
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    assert any("(read/write) on tensor 'ws" in m and "core 1 reads" in m for m in races), races


def test_a_workspace_is_named_as_the_kernel_named_it():
    """fix447: BuildCCE gives a workspace the argument name '<name>_ws' (kept apart from the inputs' and
    outputs' names), and messages showed it ('ws_ws'); they now show the user's 'ws'. A workspace named like
    an output keeps the argument name in messages (two regions called 'y' would be ambiguous)."""
    ti = _rewritten_table_kernel()
    with pytest.warns(GmRaceWarning) as rec:
        run(ti)
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    assert races and all("_ws" not in m for m in races), races
    assert any("on tensor 'ws' int32 elements 0..7" in m and "elements of 'ws' to write" in m for m in races)
    assert all("_ws" not in str(w.message) for w in rec)

    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ws = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm, is_workspace=True)
    ub = ti.Tensor("int32", (24,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, ws, 0, 1, 3, 0, 0)             # 96 B from a 64-byte allocation: a GmOverreadWarning
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "same_name", [], [y])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        run(ti)
    over = [str(w.message) for w in rec if w.category is GmOverreadWarning]
    assert len(over) == 1 and "of tensor 'y_ws' (8 elements, 32 B;" in over[0], over


def test_atomic_workspace_starts_at_zero_and_cross_core_sum_is_race_free():
    """An ``is_workspace=True, is_atomic_add=True`` accumulator is cleared before the launch (tik_core.md §1):
    two cores atomic-add into it without zeroing it, pass a barrier, and core 0 copies it out -- the exact sum,
    no race and no hang report (h_author300)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (2, 8), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    acc = ti.Tensor("float32", (8,), name="acc", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    sync = ti.Tensor("int64", (64,), name="sync", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    with ti.for_range(0, 2, block_num=2) as core:
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[core, 0], 0, 1, 1, 0, 0)
        ti.set_atomic_add(1)
        ti.data_move(acc, ub, 0, 1, 1, 0, 0)
        ti.set_atomic_add(0)
        ti.block_barrier(sync)
        with ti.if_scope(core == 0):
            ti.data_move(ub, acc, 0, 1, 1, 0, 0)
            ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "atomic_ws", [x], [y])
    xv = np.array([[1.5] * 8, [2.25] * 8], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, = run(ti, {"x": xv})
    assert np.array_equal(out, np.full(8, 3.75, np.float32))
    assert not ti.tikdb.reports


def _two_atomic_types_kernel(mode1: int):
    """2 cores atomically add a float32 row into y: core 0 in float32 mode, core 1 in mode ``mode1``."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, 2, block_num=2) as core:
        ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 1, 0, 0)
        with ti.if_scope(core == 0):
            ti.set_atomic_add(1)
        with ti.else_scope():
            ti.set_atomic_add(mode1)
        ti.data_move(y, ub, 0, 1, 1, 0, 0)
        ti.set_atomic_add(0)
    return build(ti, "two_atomic_types", [x], [y])


def test_atomic_adds_of_different_types_on_the_same_bytes_race():
    """h_fuzz436: an f32 atomic add and an f16 atomic add of the same bytes read each other's result in their own
    format, so the sum depends on the order; it was no race (only the atomic op, add/max/min, was compared)."""
    feed = {"x": np.arange(8, dtype=np.float32)}
    ti = _two_atomic_types_kernel(2)
    with pytest.warns(GmRaceWarning):
        run(ti, feed)
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    assert len(races) == 1 and "GM race (atomic/atomic) on tensor 'y' float32 elements 0..7 (bytes [0, 32))" \
        in races[0], races
    assert "atomic-adds as float16" in races[0] and "atomic-added as float32" in races[0], races[0]
    ti = _two_atomic_types_kernel(1)                      # one type: atomics commute, no race
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        (y,) = run(ti, feed)
    assert not [k for k, _ in ti.tikdb.reports if k == "race"] and (y == 2 * feed["x"]).all()


def _line_of(text: str) -> int:
    """The line of this file holding ``text`` (a kernel call the race message must name)."""
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_a_tik_kernels_race_message_reads_in_tik_terms():
    """review443/k445: a TIK kernel's race named PTO internals ("pto.mte_ub_gm operand %dst", "atomic-added
    (f32)", "pto.sync_all"); it names the TIK calls at both cores' lines, the argument, the tensor's elements
    in TIK dtype spelling, tik.block_barrier, and a fix in TIK terms."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (16,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, 2, block_num=2) as core:
        ub = ti.Tensor("float32", (16,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x, 0, 1, 2, 0, 0)
        with ti.if_scope(core == 0):
            ti.set_atomic_add(1)
            ti.data_move(y, ub, 0, 1, 2, 0, 0)  # the atomic store
            ti.set_atomic_add(0)
        with ti.else_scope():
            ti.data_move(y, ub, 0, 1, 2, 0, 0)  # the plain store
    build(ti, "atomic_and_plain", [x], [y])
    with pytest.warns(GmRaceWarning):
        run(ti, {"x": np.arange(16, dtype=np.float32)})
    races = [msg for kind, msg in ti.tikdb.reports if kind == "race"]
    assert len(races) == 1, races
    msg = races[0]
    plain, atomic = _line_of("# the plain store"), _line_of("# the atomic store")
    assert msg.startswith(f"{__file__}:{plain} in `tik.data_move`: operand dst: GM race (atomic/plain) on tensor "
                          f"'y' float32 elements 0..15 (bytes [0, 64)) in barrier phase 0 (before the first "
                          f"tik.block_barrier): core 1 writes elements that core 0's tik.data_move at "
                          f"{__file__}:{atomic} atomic-added as float32, with no tik.block_barrier between them"), msg
    assert "Fix: make every core's store to these elements of 'y' atomic too (set_atomic_add" in msg, msg
    for internal in ("pto.", "%dst", "(f32)", "region"):
        assert internal not in msg, (internal, msg)


def test_a_tik_kernels_race_raised_names_the_tik_call():
    """With gm_races="raise" the GmRace a TIK kernel gets names the TIK call, not "pto.mte_ub_gm (lowered from
    tik.data_move)"."""
    ti = _two_atomic_types_kernel(2)
    ti.tikdb.options = tik_machine_options(gm_races="raise")
    with pytest.raises(GmRace) as info:
        run(ti, {"x": np.arange(8, dtype=np.float32)})
    text = str(info.value)
    assert "in `tik.data_move`: operand dst: GM race (atomic/atomic) on tensor 'y'" in text, text
    assert "pto." not in text and "lowered from" not in text, text
