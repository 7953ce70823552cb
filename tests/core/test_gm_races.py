"""The cross-core GM race checker (pto_core.checks.races, MachineOptions.gm_races): a racy and a
race-free kernel for every kind of race, under both schedulers."""
import warnings

import numpy as np
import pytest

from kernel_helpers import handoff
from pto_core import BarrierCountWarning, GmOverreadWarning, GmRace, GmRaceWarning, Machine, MachineOptions, pto
from pto_core.errors import PtoError, UninitializedRead
from pto_core.program import program

ORDERS = [("sequential", 0), ("random", 1), ("random", 5)]
RECORD = MachineOptions(gm_races="record")


def _races(prog, inputs=None, *, order="sequential", seed=0, cores=None):
    """Run with race reports recorded; return (outputs, race messages)."""
    exe = prog.compile()
    out = exe.run(inputs or {}, order=order, seed=seed, options=RECORD, cores=cores)
    return out, [msg for kind, msg in exe.reports if kind == "race"]


def _load_store(k, src, dst, nbytes, *, dst_stride=None, count=1, atomic=None):
    """GM src -> UB -> GM dst (``count`` bursts of ``nbytes``, ``dst_stride`` bytes apart in GM)."""
    ub = k.ptr("ub", src.dtype, 0)
    pto.mte_gm_ub(src, ub, 0, nbytes * count, nburst=(1, nbytes * count, nbytes * count))
    handoff("MTE2", "MTE3")
    if atomic is not None:
        getattr(pto, f"set_atomic_{atomic[0]}")()
        getattr(pto, f"set_atomic_{atomic[1]}")()
    pto.mte_ub_gm(ub, dst, nbytes, nburst=(count, nbytes, dst_stride or nbytes))
    if atomic is not None:
        pto.set_atomic_none()
    handoff("MTE3", "MTE2")


# ----------------------------------------------------------------------------- write/write

def _spill_kernel(spill: bool, barrier: bool = False, same_data: bool = False):
    """Core c stores 8 s32 at y[c]; with ``spill`` core 0 stores 16 (x[0], its row and core 1's). Core 1
    stores x[1, :8], or with ``same_data`` x[0, 8:], the values core 0 spills. With ``barrier`` core 0
    stores after a ``sync_all``, core 1 before it."""
    with program("spill", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (2, 16))
        y = k.gm_arg("y", "s32", (2, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            with k.if_(c == 0):
                if barrier:
                    pto.sync_all()
                _load_store(k, x, y, 64 if spill else 32)
            with k.else_():
                _load_store(k, x + 8 if same_data else x + 16, y + 8, 32)
                if barrier:
                    pto.sync_all()
    return k.program


X = np.arange(32, dtype=np.int32).reshape(2, 16)


@pytest.mark.parametrize("order,seed", ORDERS)
def test_write_write_with_different_bytes_is_a_race(order, seed):
    out, races = _races(_spill_kernel(spill=True), {"x": X}, order=order, seed=seed)
    assert len(races) == 1
    msg = races[0]
    assert "GM race (write/write) on region 'y' bytes [32, 64) (s32 elements 8..15)" in msg
    assert "with different values" in msg and "test_gm_races.py:" in msg
    assert ("core 1 writes" in msg and "core 0's" in msg) or ("core 0 writes" in msg and "core 1's" in msg)
    assert msg.count("test_gm_races.py:") >= 2          # both sites


@pytest.mark.parametrize("order,seed", ORDERS)
def test_write_write_of_disjoint_rows_is_no_race(order, seed):
    out, races = _races(_spill_kernel(spill=False), {"x": X}, order=order, seed=seed)
    assert races == []
    assert out["y"].tolist() == [list(range(8)), list(range(16, 24))]


@pytest.mark.parametrize("order,seed", ORDERS)
def test_write_write_of_identical_bytes_is_no_race(order, seed):
    """Core 0 spills x[0, 8:16] into row 1; core 1 stores the same values there (redundant padding)."""
    out, races = _races(_spill_kernel(spill=True, same_data=True), {"x": X}, order=order, seed=seed)
    assert races == []
    assert out["y"].reshape(-1).tolist() == list(range(16))


@pytest.mark.parametrize("order,seed", ORDERS)
def test_writes_separated_by_sync_all_are_no_race(order, seed):
    out, races = _races(_spill_kernel(spill=True, barrier=True), {"x": X}, order=order, seed=seed)
    assert races == []
    assert out["y"][1].tolist() == list(range(8, 16))     # core 0's spill comes after the barrier


# ----------------------------------------------------------------------------- read/write

def _exchange_kernel(barrier: bool):
    """Core c writes w[c], then reads w[1 - c] (the other core's row) into y[c]."""
    with program("exchange", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (2, 8))
        w = k.gm_arg("w", "s32", (2, 8), io="workspace")
        y = k.gm_arg("y", "s32", (2, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            _load_store(k, x + c * 8, w + c * 8, 32)
            if barrier:
                pto.sync_all()
            _load_store(k, w + (1 - c) * 8, y + c * 8, 32)
    return k.program


@pytest.mark.parametrize("order,seed", ORDERS)
def test_read_of_another_cores_write_is_a_race(order, seed):
    out, races = _races(_exchange_kernel(False), {"x": X[:, :8].copy()}, order=order, seed=seed)
    assert races and all("GM race (read/write) on region 'w'" in m for m in races)
    assert any("reads bytes that core" in m and "wrote" in m for m in races) or \
        any("writes bytes that core" in m and "read" in m for m in races)


@pytest.mark.parametrize("order,seed", ORDERS)
def test_read_after_sync_all_is_no_race(order, seed):
    x = X[:, :8].copy()
    out, races = _races(_exchange_kernel(True), {"x": x}, order=order, seed=seed)
    assert races == []
    assert out["y"].tolist() == [x[1].tolist(), x[0].tolist()]


def _write_back_kernel(changed: bool):
    """Core 0 reads x into y; core 1 stores x back into x (``changed``: x shifted by 8 bytes, else unchanged)."""
    with program("write_back", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (16,), io="inout")
        y = k.gm_arg("y", "s32", (8,), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            with k.if_(c == 0):
                _load_store(k, x, y, 32)
            with k.else_():
                _load_store(k, x + 2 if changed else x, x, 32)
    return k.program


@pytest.mark.parametrize("order,seed", ORDERS + [("random", 2), ("random", 3)])
def test_unchanged_write_back_is_no_race_for_readers(order, seed):
    x = np.arange(16, dtype=np.int32) + 7
    out, races = _races(_write_back_kernel(False), {"x": x}, order=order, seed=seed)
    assert races == [] and out["y"].tolist() == x[:8].tolist()


@pytest.mark.parametrize("order,seed", ORDERS + [("random", 2), ("random", 3)])
def test_changing_write_back_races_with_readers(order, seed):
    x = np.arange(16, dtype=np.int32) + 7
    out, races = _races(_write_back_kernel(True), {"x": x}, order=order, seed=seed)
    assert len(races) == 1 and "GM race (read/write) on region 'x' bytes [0, 32) (s32 elements 0..7)" in races[0]
    assert "core 1 writes bytes that core 0's" in races[0] or "core 0 reads bytes that core 1's" in races[0]
    # only the low byte of each element changes: the report still names the whole run both touched


def test_reads_by_every_core_are_no_race():
    with program("bcast", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (8,))
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        with k.for_(0, 4, block_num=4, dtype="s32") as c:
            _load_store(k, x, y + c * 8, 32)
    out, races = _races(k.program, {"x": np.arange(8, dtype=np.int32)})
    assert races == [] and (out["y"] == np.arange(8)).all()


# ----------------------------------------------------------------------------- atomics

def _atomic_kernel(ops: tuple, cores: int = 4):
    """Core c atomically combines x[c] into y with ops[c % len(ops)] (None: a plain store)."""
    with program("atomics", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (cores, 8))
        y = k.gm_arg("y", "f32", (8,), io="out", fill="zero")
        with k.for_(0, cores, block_num=cores, dtype="s32") as c:
            for i, op in enumerate(ops):
                with k.if_(c % len(ops) == i):
                    _load_store(k, x + c * 8, y, 32, atomic=None if op is None else ("f32", op))
    return k.program


XF = np.arange(32, dtype=np.float32).reshape(4, 8)


@pytest.mark.parametrize("order,seed", ORDERS)
def test_atomic_adds_of_every_core_are_no_race(order, seed):
    out, races = _races(_atomic_kernel(("add",)), {"x": XF}, order=order, seed=seed)
    assert races == []
    assert out["y"].tolist() == XF.sum(axis=0).tolist()


def test_atomics_of_one_op_need_no_scan_of_the_access_log(monkeypatch):
    """Every core adding into the same bytes is the common atomic pattern (CANN unsorted_segment_sum adds
    60000 rows into random segments): looking through the phase's access log for an atomic of another op
    on each such access made the checker quadratic in the accesses. With one op so far there is nothing to
    find, so the log is not scanned."""
    from pto_core.checks import races as races_mod
    scans = []

    def counting_reversed(seq):
        scans.append(len(seq))
        return reversed(seq)
    monkeypatch.setattr(races_mod, "reversed", counting_reversed, raising=False)
    out, races = _races(_atomic_kernel(("add",), cores=6), {"x": np.arange(48, dtype=np.float32).reshape(6, 8)})
    assert races == [] and out["y"].tolist() == np.arange(48).reshape(6, 8).sum(axis=0).tolist()
    assert scans == []
    _, races = _races(_atomic_kernel(("add", "max")), {"x": XF})     # another op: still found in the log
    assert races and scans


@pytest.mark.parametrize("op", ["max", "min"])
def test_atomic_max_min_of_every_core_are_no_race(op):
    out, races = _races(_atomic_kernel((op,)), {"x": XF}, order="random", seed=2)
    assert races == []


@pytest.mark.parametrize("order,seed", ORDERS)
def test_atomic_and_plain_write_race(order, seed):
    out, races = _races(_atomic_kernel(("add", None)), {"x": XF}, order=order, seed=seed)
    assert any("GM race (atomic/plain) on region 'y'" in m and "atomic-add" in m for m in races)
    # cores 1 and 3 both store plainly: a write/write race between them too


@pytest.mark.parametrize("order,seed", ORDERS)
def test_atomic_add_and_atomic_max_race(order, seed):
    out, races = _races(_atomic_kernel(("add", "max")), {"x": XF}, order=order, seed=seed)
    assert races and all("GM race (atomic/atomic) on region 'y'" in m for m in races)
    assert any("atomic-adds" in m or "atomic-maxs" in m for m in races)


def test_atomic_and_plain_read_race():
    """Core 0 atomically adds into y while core 1 reads y: core 1 may see either value."""
    with program("atomic_read", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (8,))
        y = k.gm_arg("y", "f32", (8,), io="inout")
        z = k.gm_arg("z", "f32", (8,), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            with k.if_(c == 0):
                _load_store(k, x, y, 32, atomic=("f32", "add"))
            with k.else_():
                _load_store(k, y, z, 32)
    out, races = _races(k.program, {"x": np.ones(8, np.float32), "y": np.zeros(8, np.float32)})
    assert len(races) == 1 and "GM race (atomic/plain) on region 'y'" in races[0]
    assert "core 1 reads bytes that core 0's" in races[0] and "atomic-added" in races[0]


def test_a_pto_programs_race_message_keeps_pto_words():
    """k445: a PTO program's race names its PTO op, operand and dtypes, pto.sync_all and a fix in PTO terms; it
    used to say "pto.sync_all (TIK block_barrier)" and suggest TIK's data_move_pad (the TIK facade now has its
    own wording, tests/compat/tik/test_gm_races.py)."""
    with program("two_atomic_types", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (8,))
        y = k.gm_arg("y", "f32", (8,), io="inout")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            with k.if_(c == 0):
                _load_store(k, x, y, 32, atomic=("f16", "add"))
            with k.else_():
                _load_store(k, x, y, 32, atomic=("f32", "add"))
    out, races = _races(k.program, {"x": np.ones(8, np.float32), "y": np.zeros(8, np.float32)})
    assert len(races) == 1, races
    msg = races[0]
    assert "in `pto.mte_ub_gm`: operand %dst: GM race (atomic/atomic) on region 'y' bytes [0, 32) (f32 elements " \
           "0..7) in barrier phase 0 (before the first pto.sync_all): core 1 atomic-adds (f32) bytes that core 0's " \
           "pto.mte_ub_gm at " in msg, msg
    assert "atomic-added (f16), with no pto.sync_all between them" in msg, msg
    assert "Fix: accumulate into these bytes of 'y' with one atomic type and op on every core" in msg, msg
    for foreign in ("TIK", "tik.", "block_barrier", "data_move", "float32", "tensor"):
        assert foreign not in msg, (foreign, msg)


# ----------------------------------------------------------------------------- footprints, options

def test_interleaved_strided_rows_of_two_cores_are_no_race():
    """Core c stores rows c, c + 2, c + 4, c + 6 of y in one strided burst: the spans overlap, the rows do not."""
    with program("strided", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (8, 8))
        y = k.gm_arg("y", "s32", (8, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            _load_store(k, x + c * 32, y + c * 8, 32, dst_stride=64, count=4)
    x = np.arange(64, dtype=np.int32).reshape(8, 8)
    for order, seed in ORDERS:
        out, races = _races(k.program, {"x": x}, order=order, seed=seed)
        assert races == []
        assert out["y"][0::2].tolist() == x[:4].tolist() and out["y"][1::2].tolist() == x[4:].tolist()


def test_raise_mode_raises_gm_race_with_both_sites():
    exe = _spill_kernel(spill=True).compile()
    with pytest.raises(GmRace) as info:
        exe.run({"x": X}, options=MachineOptions(gm_races="raise"))
    e = info.value
    assert e.kind == "write/write" and e.region == "y" and e.byte_range == (32, 64)
    assert set(e.cores) == {0, 1}
    assert e.first[1] is not None and e.second[1] is not None


def test_default_mode_warns_once_per_race_and_records_it():
    exe = _spill_kernel(spill=True).compile()
    with pytest.warns(GmRaceWarning, match=r"write/write\) on region 'y'") as rec:
        exe.run({"x": X})
    assert len([w for w in rec if issubclass(w.category, GmRaceWarning)]) == 1
    assert [k for k, _ in exe.reports] == ["race"]
    assert exe.machine.gm_races.count == 1


def test_off_and_single_core_machines_have_no_checker():
    exe = _spill_kernel(spill=True).compile()
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        exe.run({"x": X}, options=MachineOptions(gm_races="off"))
    assert exe.machine.gm_races is None and exe.reports == []
    m = Machine("A2A3")
    assert m.gm_races is None and m.context(0).races is None
    with pytest.raises(Exception, match="gm_races='loud' is not one of"):
        MachineOptions(gm_races="loud")


def test_reports_are_deduplicated_per_site_pair():
    """Four cores each spill into the next core's row: one report for the one pair of sites."""
    with program("spill4", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (4, 16))
        y = k.gm_arg("y", "s32", (5, 8), io="out")
        with k.for_(0, 4, block_num=4, dtype="s32") as c:
            _load_store(k, x + c * 16, y + c * 8, 64)
    exe = k.program.compile()
    exe.run({"x": np.arange(64, dtype=np.int32).reshape(4, 16)}, options=RECORD)
    assert len(exe.reports) == 1 and exe.machine.gm_races.count == 3


# ----------------------------------------------------------------------------- barrier in batches

def test_sync_all_in_a_launch_wider_than_the_chip_is_reported():
    """Kirin9030 has one core: a 2-block launch runs block 1 after block 0 ends, so block 0 waits at the
    barrier forever on the device (named choice BARRIER_NEEDS_RESIDENT_BLOCKS)."""
    with program("wide", target="Kirin9030") as k:
        x = k.gm_arg("x", "s32", (2, 8))
        y = k.gm_arg("y", "s32", (2, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            pto.sync_all()
            _load_store(k, x + c * 8, y + c * 8, 32)
    with pytest.warns(BarrierCountWarning, match="Kirin9030 runs 1 at a time") as rec:
        out, _ = _races(k.program, {"x": X[:, :8].copy()})
    assert len([w for w in rec if issubclass(w.category, BarrierCountWarning)]) == 1
    assert out["y"].tolist() == X[:, :8].tolist()


def test_resident_blocks_per_core_kind():
    from pto_core.targets import get_target, vector_core_variant
    assert get_target("Ascend310").resident_blocks == 2
    assert get_target("Ascend910B1").resident_blocks == 48          # vector kernels run on the 48 AIVs
    assert get_target("Ascend310P3").resident_blocks == 8
    assert vector_core_variant(get_target("Ascend310P3")).resident_blocks == 7


def test_strided_read_running_past_its_tensor_races_only_on_its_rows():
    """Core 0 reads two 32-byte rows 128 B apart from x (4 x 8 s32 = 128 B, 160 B allocated): the second
    row starts past the allocation (GM_OVERREAD_READS_UNKNOWN), so the rows are cut at the tensor's end.
    The gap it skips, x[2:4], is what core 1 changes: no race (the cut read was taken as its whole span,
    gap included, and reported read/write on x[2]); reading x[2] itself stays a race."""
    def kernel(first_row):
        with program("overread", target="A2A3") as k:
            x = k.gm_arg("x", "s32", (4, 8), io="inout")
            y = k.gm_arg("y", "s32", (2, 8), io="out")
            with k.for_(0, 2, block_num=2, dtype="s32") as c:
                ub = k.ptr("ub", "s32", 0)
                with k.if_(c == 0):
                    pto.mte_gm_ub(x + first_row * 8, ub, 0, 32, nburst=(2, 128, 32))
                    handoff("MTE2", "MTE3")
                    pto.mte_ub_gm(ub, y, 32, nburst=(1, 32, 32))
                with k.else_():
                    pto.mte_gm_ub(x, ub, 0, 32, nburst=(1, 32, 32))
                    handoff("MTE2", "MTE3")
                    pto.mte_ub_gm(ub, x + 16, 32, nburst=(1, 32, 32))    # x[2] = x[0]: changes it
        return k.program
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    for order, seed in ORDERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GmOverreadWarning)
            out, races = _races(kernel(1), {"x": x}, order=order, seed=seed)
            assert races == []
            assert out["y"][0].tolist() == x[1].tolist()
            _, races = _races(kernel(2), {"x": x}, order=order, seed=seed)    # row 2 itself, then past
            assert len(races) == 1 and "read/write" in races[0]


def test_a_repeated_write_write_race_is_measured_only_when_reported(monkeypatch):
    """Core 1 stores two different rows over core 0's spill 6 times each (12 racing stores, all from the one store
    site of `_load_store`): one report with its byte range; the range of a repeat of a reported pair of sites is
    never computed (a CANN kernel racing on every row spent 8% of its run on it)."""
    from pto_core.checks import races as R
    calls = []
    real = R._run_around
    monkeypatch.setattr(R, "_run_around", lambda offs, first: calls.append(first) or real(offs, first))
    with program("spill_loop", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (2, 16))
        y = k.gm_arg("y", "s32", (2, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            with k.if_(c == 0):
                _load_store(k, x, y, 64)
            with k.else_():
                with k.for_(0, 6, dtype="s32"):
                    _load_store(k, x + 16, y + 8, 32)
                    _load_store(k, x + 24, y + 8, 32)
    out, races = _races(k.program, {"x": X})
    assert len(races) == 1 and len(calls) == 1
    assert all("GM race (write/write) on region 'y' bytes [32, 64) (s32 elements 8..15)" in m for m in races)


def _two_sites_kernel():
    """Core 1 races with core 0's store of y from two sites (bytes [0, 32) and [32, 64))."""
    with program("two_sites", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (2, 16))
        y = k.gm_arg("y", "s32", (2, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            ub = k.ptr("ub", x.dtype, 0)
            with k.if_(c == 0):
                pto.mte_gm_ub(x, ub, 0, 64, nburst=(1, 64, 64))
                handoff("MTE2", "MTE3")
                pto.mte_ub_gm(ub, y, 64, nburst=(1, 64, 64))
            with k.else_():
                pto.mte_gm_ub(x + 16, ub, 0, 64, nburst=(1, 64, 64))
                handoff("MTE2", "MTE3")
                pto.mte_ub_gm(ub, y, 32, nburst=(1, 32, 32))             # site A: bytes [0, 32)
                pto.mte_ub_gm(ub + 8, y + 8, 32, nburst=(1, 32, 32))     # site B: bytes [32, 64)
    return k.program


def test_a_race_past_the_report_cap_is_counted_as_dropped():
    """MachineOptions(max_reports=): a race found once the list is full is counted in reports_dropped, as
    every other capped report is (it was dropped without a count)."""
    for cap, kept, dropped in ((10, 2, 0), (1, 1, 1)):
        exe = _two_sites_kernel().compile()
        exe.run({"x": X}, options=MachineOptions(gm_races="record", max_reports=cap))
        assert len([m for kind, m in exe.reports if kind == "race"]) == kept
        assert exe.reports_dropped == dropped


def _one_pair_four_times():
    """Core 0 stores all 4 rows of y; core 1 stores each row (other values) from one site in a loop: four
    detections of one (kind, region, pair of sites)."""
    with program("one_pair", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (2, 32))
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        with k.for_(0, 2, block_num=2, dtype="s32") as c:
            ub = k.ptr("ub", x.dtype, 0)
            pto.mte_gm_ub(x + c * 32, ub, 0, 128, nburst=(1, 128, 128))
            handoff("MTE2", "MTE3")
            with k.if_(c == 0):
                pto.mte_ub_gm(ub, y, 128, nburst=(1, 128, 128))
            with k.else_():
                with k.for_(0, 4) as i:
                    pto.mte_ub_gm(ub + i * 8, y + i * 8, 32, nburst=(1, 32, 32))
    return k.program


def test_dropped_race_reports_count_reports_not_detections():
    """reports_dropped counts the reports a run did not keep: a race is reported once per (kind, region, pair of
    sites) (pto_sync.md §4; `gm_races.count` counts every detection), so kept + dropped is the number of reports
    of an uncapped run whatever the cap, and "N more checker report(s) were not recorded" can be seen by raising
    the cap by N. Counting every detection past the cap would say 4 here where an uncapped run has 1 report."""
    x = np.arange(64, dtype=np.int32).reshape(2, 32)
    for cap in (100, 0):
        exe = _one_pair_four_times().compile()
        exe.run({"x": x}, options=MachineOptions(gm_races="record", max_reports=cap))
        kept = [m for kind, m in exe.reports if kind == "race"]
        assert exe.machine.gm_races.count == 4 and len(kept) + exe.reports_dropped == 1, (cap, kept)


def test_warn_mode_warns_for_each_distinct_race_past_the_report_cap():
    """gm_races="warn" keeps the first events in machine.reports and emits a GmRaceWarning per distinct race
    (MachineOptions): once max_reports was reached (e.g. by 100 uninitialised reads) a new race gave no warning
    at all, only a count. It warns; the report list stays capped and the report is counted as dropped."""
    for cap, kept in ((10, 2), (1, 1), (0, 0)):
        exe = _two_sites_kernel().compile()
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            exe.run({"x": X}, options=MachineOptions(gm_races="warn", max_reports=cap))
        assert len([w for w in got if issubclass(w.category, GmRaceWarning)]) == 2, cap
        assert len([m for kind, m in exe.reports if kind == "race"]) == kept and exe.reports_dropped == 2 - kept


# ----------------------------------------------------------------------------- refused eager ops (pto_api.md)

def _two_core_machine(**options):
    m = Machine("A2A3", cores=2, options=MachineOptions(gm_races="record", check_hazards=False, **options))
    out = m.gm_alloc((512,), "f32", name="out", data=np.zeros(512, np.float32))
    m.activate(0)
    m.write(m.ptr("l0c", "f32", 0, core=0), np.ones(256, np.float32))          # FIXPIPE tile 0 only
    m.write(m.ptr("ub", "f32", 0, core=0), np.full(256, 3, np.float32))
    m.write(m.ptr("ub", "f32", 0, core=1), np.full(256, 7, np.float32))
    return m, out


def _core1_stores(m, out):
    m.activate(1)
    pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=1), m.ptr("gm", "f32", out.addr, core=1), 1024, nburst=(1, 1024, 1024))
    m.end_kernel()
    return [msg for kind, msg in m.reports if kind == "race"]


def _loop3(m, out, n):
    pto.mte_l0c_gm(m.ptr("l0c", "f32", 0, core=0), out, 16, 16, 16, 16, 0, 0, nz2nd=True, loop3=(n, 16, 256))


def test_refused_fixpipe_leaves_no_gm_access_for_the_race_checker():
    """Core 0's loop3 write-back is refused at its unwritten 2nd tile (its 1st tile's store put back): core 1
    storing other values to those bytes races with nothing (it did: write/write naming the refused op)."""
    m, out = _two_core_machine(uninitialized="raise")
    m.activate(0)
    with pytest.raises(UninitializedRead):
        _loop3(m, out, 2)
    assert (m.read(out, 512) == 0).all()
    assert _core1_stores(m, out) == []
    m, out = _two_core_machine(uninitialized="raise")                          # the same op accepted: a race
    m.activate(0)
    _loop3(m, out, 1)
    assert len(_core1_stores(m, out)) == 1


def test_refused_op_forgets_only_its_own_accesses():
    """A legal store of core 0, then a refused op of core 0 (a vector op refused in a later repeat chunk, or a
    loop3 write-back over the same bytes): core 1's store of other values still races with the legal one."""
    for refuse in ("vector", "fixpipe"):
        m, out = _two_core_machine(uninitialized="raise")
        m.activate(0)
        pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=0), out, 1024, nburst=(1, 1024, 1024))
        ub = m.target.sizes.ub
        with pytest.raises(PtoError):
            if refuse == "vector":     # dst one repeat after src0, in place: the 4th repeat leaves UB
                m.write(m.ptr("ub", "f16", 0, core=0), np.ones(ub // 2, np.float16))
                pto.ub.vadd(m.ptr("ub", "f16", ub - 768, core=0), m.ptr("ub", "f16", ub - 1024, core=0),
                            m.ptr("ub", "f16", 0, core=0), 4)
            else:
                _loop3(m, out, 2)
        races = _core1_stores(m, out)
        assert len(races) == 1 and "write/write" in races[0] and "pto.mte_ub_gm" in races[0].split("bytes that")[1]


def test_races_found_by_a_refused_ops_earlier_step_are_withdrawn():
    """Core 1 atomically adds into ``out``; core 0's loop3 write-back stores its 1st tile there (an
    atomic/plain race) and is refused at the 2nd: no report, no warning; the corrected op reports it."""
    m, out = _two_core_machine(uninitialized="raise")
    m.activate(1)
    pto.set_atomic_add()
    pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=1), m.ptr("gm", "f32", out.addr, core=1), 1024,
                  nburst=(1, 1024, 1024))
    pto.set_atomic_none()
    m.activate(0)
    m.gm_races.mode = "warn"
    with warnings.catch_warnings():
        warnings.simplefilter("error", GmRaceWarning)
        with pytest.raises(UninitializedRead):
            _loop3(m, out, 2)
    assert m.reports == [] and m.gm_races.count == 0
    with pytest.warns(GmRaceWarning, match=r"atomic/plain"):
        _loop3(m, out, 1)
    assert len(m.reports) == 1 and m.gm_races.count == 1


def test_raise_mode_refuses_the_same_racy_op_again():
    """gm_races="raise": a race refuses the eager op; run again unchanged it is refused again (the refused op's
    report was withdrawn with it, so deduplication does not let the retry through)."""
    m, out = _two_core_machine()
    m.gm_races.mode = "raise"
    m.activate(1)
    pto.set_atomic_add()
    pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=1), m.ptr("gm", "f32", out.addr, core=1), 1024,
                  nburst=(1, 1024, 1024))
    pto.set_atomic_none()
    m.activate(0)
    for _ in range(2):
        with pytest.raises(GmRace, match=r"atomic/plain"):
            _loop3(m, out, 1)


def test_an_op_stopped_by_a_python_exception_keeps_its_accesses_and_warnings(monkeypatch):
    """Not a refusal (KeyboardInterrupt, a Python error after the op stored): its GM accesses stand, and the
    race a later flush finds is still warned (review341: the journal was left open and held the warning)."""
    import dataclasses

    from pto_core.ops import registry
    m, out = _two_core_machine()
    m.gm_races.mode = "warn"
    m.activate(0)
    pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=0), out, 1024, nburst=(1, 1024, 1024))
    key = next(k for k, s in registry.OPS.items() if s.name == "mte_ub_gm")
    spec = registry.OPS[key]

    def stopped(ctx, *args, **kwargs):
        spec.execute(ctx, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setitem(registry.OPS, key, dataclasses.replace(spec, execute=stopped))
    m.activate(1)
    with pytest.raises(KeyboardInterrupt):
        pto.mte_ub_gm(m.ptr("ub", "f32", 0, core=1), m.ptr("gm", "f32", out.addr, core=1), 1024,
                      nburst=(1, 1024, 1024))
    monkeypatch.setitem(registry.OPS, key, spec)
    assert m.gm_races.undo is None
    with pytest.warns(GmRaceWarning, match=r"write/write"):
        m.end_kernel()
    assert [kind for kind, _ in m.reports] == ["race"]


def test_refused_op_withdraws_only_its_race_reports():
    """A refused eager op on a multi-core machine keeps its other reports (an uninitialised read recorded before
    a later repeat left UB), as on one core; only its races are withdrawn (review341: all were deleted)."""
    got = []
    for cores in (1, 2):
        m = Machine("A2A3", cores=cores, options=MachineOptions(uninitialized="record", check_hazards=False))
        ub = m.target.sizes.ub
        m.activate(0)
        m.write(m.ptr("ub", "f16", 512, core=0), np.ones(ub // 2 - 512, np.float16))     # bytes [0, 1024) unset
        with pytest.raises(PtoError):     # src0 reads the unset bytes; dst leaves UB in the 4th repeat
            pto.ub.vadd(m.ptr("ub", "f16", ub - 768, core=0), m.ptr("ub", "f16", 0, core=0),
                        m.ptr("ub", "f16", 2048, core=0), 4)
        got.append([kind for kind, _ in m.reports])
    assert got == [["uninitialized"], ["uninitialized"]]
