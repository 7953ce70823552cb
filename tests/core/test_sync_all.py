"""pto.sync_all: an all-core barrier honoured by both schedulers."""
import numpy as np
import pytest

from kernel_helpers import handoff
from pto_core import GmRaceWarning, pto
from pto_core.program import program


def _exchange_kernel(with_barrier: bool):
    with program("exchange", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (4, 8))
        w = k.gm_arg("w", "s32", (4, 8), io="workspace")
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        ub = k.ptr("ub", "s32", 0)
        with k.for_(0, 4, block_num=4, dtype="s32") as c:
            pto.mte_gm_ub(x + c * 8, ub, 0, 32, nburst=(1, 32, 32))
            handoff("MTE2", "MTE3")
            pto.mte_ub_gm(ub, w + c * 8, 32, nburst=(1, 32, 32))
            if with_barrier:
                pto.sync_all()
            handoff("MTE3", "MTE2")
            pto.mte_gm_ub(w + ((c + 1) % 4) * 8, ub, 0, 32, nburst=(1, 32, 32))   # the next core's row
            handoff("MTE2", "MTE3")
            pto.mte_ub_gm(ub, y + c * 8, 32, nburst=(1, 32, 32))
    return k.program


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 1), ("random", 7)])
def test_sync_all_orders_every_core(order, seed):
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    out = _exchange_kernel(True).run({"x": x}, order=order, seed=seed)["y"]
    assert np.array_equal(out, np.roll(x, -1, axis=0))


def test_without_the_barrier_a_later_core_reads_stale_data():
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    with pytest.warns(GmRaceWarning, match=r"read/write\) on region 'w'"):       # and the race checker says so
        out = _exchange_kernel(False).run({"x": x})["y"]   # sequential: core 0 reads w[1] before core 1 wrote it
    assert not np.array_equal(out, np.roll(x, -1, axis=0))
    assert np.array_equal(out[3], x[0])


def test_sync_all_prints_and_parses():
    from pto_core.asm import parse
    text = _exchange_kernel(True).to_asm()
    assert "pto.sync_all" in text and parse(text).to_asm() == text


# ----------------------------------------------------------------------------- pto.launch_blocks

def _launch_kernel(barrier: bool):
    """Core 0 reads a block count from GM and launches it; every started core then atomically adds its
    index + 1 to ``y[0]`` (a ``sync_all`` first, optional, must wait for exactly the launched cores)."""
    with program("launch", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        y = k.gm_arg("y", "s32", (8,), io="out", init=0)
        n = k.load(t, 0)
        pto.launch_blocks(n)
        if barrier:
            pto.sync_all()
        pto.set_atomic_s32()
        pto.set_atomic_add()
        v = k.reg("s32")
        k.assign(v, k.block_idx + 1)
        ub = k.ptr("ub", "s32", 0)
        k.store(ub, 0, v)
        for i in range(1, 8):
            k.store(ub, i, 0)
        handoff("S", "MTE3")
        pto.mte_ub_gm(ub, y, 32, nburst=(1, 32, 32))
    return k.program


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 3)])
@pytest.mark.parametrize("launched", [1, 2, 4])
def test_launch_blocks_starts_exactly_the_requested_cores(order, seed, launched):
    prog = _launch_kernel(barrier=True)
    y = prog.run({"t": np.array([launched] + [0] * 7, np.int32)}, cores=4, order=order, seed=seed)["y"]
    assert y[0] == sum(range(1, launched + 1))        # each started core added its index + 1 once


def test_launch_blocks_beyond_the_machine_is_an_error_before_other_cores_start():
    from pto_core.errors import IllegalOperand
    with pytest.raises(IllegalOperand, match=r"asks for 5 cores; the machine has 4") as e:
        _launch_kernel(barrier=False).run({"t": np.array([5] + [0] * 7, np.int32)}, cores=4)
    assert e.value.where is not None


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 5)])
def test_launch_blocks_beyond_a_machine_run_built_relaunches_on_that_many_cores(order, seed):
    """RELAUNCH_WIDER: without cores=, run() builds the machine, so a run-time count above its cores
    (TIK block_num up to 65535, run in batches by the runtime) restarts the launch on count cores."""
    y = _launch_kernel(barrier=True).run({"t": np.array([5] + [0] * 7, np.int32)}, order=order, seed=seed)["y"]
    assert y[0] == sum(range(1, 6))


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 5)])
def test_a_relaunched_kernel_prints_what_it_printed_before_its_launch_once_per_block(capsys, order, seed):
    """RELAUNCH_WIDER: core 0's first attempt (before launch_blocks asks for more cores) is discarded, and so is
    its console output: the text printed before the launch comes once per launched block, not once more."""
    with program("launch_print", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        k.gm_arg("y", "s32", (8,), io="out", init=0)
        n = k.load(t, 0)
        pto.debug_print(values=(n,), fmt="n=%d\n")
        pto.launch_blocks(n)
        pto.debug_print(values=(k.block_idx,), fmt="block %d\n")
    exe = k.program.compile()
    for count in (1, 3):             # run() builds one core (no block_num): 3 restarts the launch
        exe.run({"t": np.array([count] + [0] * 7, np.int32)}, order=order, seed=seed)
        out = capsys.readouterr().out.splitlines()
        assert out.count(f"n={count}") == count
        assert sorted(x for x in out if x.startswith("block")) == sorted(f"block {i}" for i in range(count))
        assert len(exe.machine.printed) == 2 * count


def test_launch_blocks_prints_and_parses():
    from pto_core.asm import parse
    text = _launch_kernel(barrier=True).to_asm()
    assert "pto.launch_blocks" in text and parse(text).to_asm() == text


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 5)])
def test_a_second_wider_launch_restarts_without_repeating_what_the_first_attempt_printed(capsys, order, seed):
    """RELAUNCH_WIDER with two launch points: the first (2 cores) stands, the second asks for 5 and restarts the
    launch. Was: what the aborted attempt printed after its first launch stood (core 0's ``pre`` and ``mid``)
    had already gone to stdout, so it came once more than per launched block."""
    with program("launch_twice", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        k.gm_arg("y", "s32", (8,), io="out", init=0)
        a = k.load(t, 0)
        b = k.load(t, 1)
        pto.debug_print(values=(a,), fmt="pre %d\n")
        pto.launch_blocks(a)
        pto.debug_print(values=(k.block_idx,), fmt="mid %d\n")
        pto.launch_blocks(b)
        pto.debug_print(values=(k.block_idx,), fmt="post %d\n")
    exe = k.program.compile()
    exe.run({"t": np.array([2, 5] + [0] * 6, np.int32)}, order=order, seed=seed)
    out = capsys.readouterr().out.splitlines()
    assert len(exe.machine.cores) == 5
    assert out.count("pre 2") == 5
    assert sorted(x for x in out if x.startswith("mid")) == sorted(f"mid {i}" for i in range(5))
    assert sorted(x for x in out if x.startswith("post")) == sorted(f"post {i}" for i in range(5))
    assert [(c, s) for c, s in exe.machine.printed] and len(out) == len(exe.machine.printed) == 15


def _barrier_then_launch_kernel():
    """Every core writes its row of ``w``, passes an all-core barrier, reads the next core's row, and only then
    reaches ``pto.launch_blocks`` (the count read from ``t``): the exchange needs every launched core at the
    barrier, as on the device, where the host starts every block at the kernel's beginning."""
    with program("barrier_then_launch", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        x = k.gm_arg("x", "s32", (4, 8))
        w = k.gm_arg("w", "s32", (4, 8), io="workspace")
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        n = k.load(t, 0)
        c = k.reg("s32")
        k.assign(c, k.block_idx)
        ub = k.ptr("ub", "s32", 0)
        pto.mte_gm_ub(x + c * 8, ub, 0, 32, nburst=(1, 32, 32))
        handoff("MTE2", "MTE3")
        pto.mte_ub_gm(ub, w + c * 8, 32, nburst=(1, 32, 32))
        pto.sync_all()
        handoff("MTE3", "MTE2")
        pto.mte_gm_ub(w + ((c + 1) % 4) * 8, ub, 0, 32, nburst=(1, 32, 32))
        handoff("MTE2", "MTE3")
        pto.mte_ub_gm(ub, y + c * 8, 32, nburst=(1, 32, 32))
        pto.launch_blocks(n)
    return k.program


@pytest.mark.parametrize("order,seed", [("sequential", 0), ("random", 1)])
def test_a_barrier_before_the_launch_point_waits_for_every_launched_core(recwarn, order, seed):
    """Core 0 passed the barrier alone (the other cores started at the launch op, after it), so it read w[1]
    before core 1 wrote it, and a BarrierCountWarning said core 0 ended without reaching the barrier. run()
    now restarts the launch with the launched cores started up front (RELAUNCH_WIDER)."""
    import warnings
    warnings.simplefilter("always")
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    exe = _barrier_then_launch_kernel().compile()
    y = exe.run({"t": np.array([4] + [0] * 7, np.int32), "x": x}, order=order, seed=seed)["y"]
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))
    assert len(exe.machine.cores) == 4
    exe.run({"t": np.array([1] + [0] * 7, np.int32), "x": x}, order=order, seed=seed)  # one block: nothing to wait for
    assert len(exe.machine.cores) == 1
    assert not [w for w in recwarn if w.category.__name__ in ("GmRaceWarning", "BarrierCountWarning")]


def test_a_barrier_before_the_launch_point_on_a_fixed_machine_is_refused():
    """With ``cores=`` (or ``machine=``) the launch cannot restart: the cores the launch op starts would pass the
    barrier after core 0, so the run is refused at the launch op, naming the barrier; was wrong ``y`` values."""
    from pto_core.errors import UnsupportedOp
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    with pytest.raises(UnsupportedOp, match=r"passed the all-core barrier .*test_sync_all.py:\d+ before") as e:
        _barrier_then_launch_kernel().run({"t": np.array([4] + [0] * 7, np.int32), "x": x}, cores=4)
    assert e.value.where is not None and e.value.where.line > 0


def _launch_barrier_launch_kernel():
    """A first launch point for ``t[0]`` cores, then each started core writes its row of ``w``, passes an all-core
    barrier, reads the next row (of ``t[1]`` rows) and reaches a second launch point for ``t[1]`` cores. On the
    device the host starts one block count's blocks at the kernel's beginning, so every one of them is at the
    barrier."""
    with program("launch_barrier_launch", target="A2A3") as k:
        t = k.gm_arg("t", "s32", (8,))
        x = k.gm_arg("x", "s32", (4, 8))
        w = k.gm_arg("w", "s32", (4, 8), io="workspace")
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        n1 = k.load(t, 0)
        n2 = k.load(t, 1)
        pto.launch_blocks(n1)
        c = k.reg("s32")
        k.assign(c, k.block_idx)
        ub = k.ptr("ub", "s32", 0)
        pto.mte_gm_ub(x + c * 8, ub, 0, 32, nburst=(1, 32, 32))
        handoff("MTE2", "MTE3")
        pto.mte_ub_gm(ub, w + c * 8, 32, nburst=(1, 32, 32))
        pto.sync_all()
        handoff("MTE3", "MTE2")
        pto.mte_gm_ub(w + ((c + 1) % n2) * 8, ub, 0, 32, nburst=(1, 32, 32))
        handoff("MTE2", "MTE3")
        pto.mte_ub_gm(ub, y + c * 8, 32, nburst=(1, 32, 32))
        pto.launch_blocks(n2)
    return k.program


def test_a_later_launch_point_starting_more_cores_after_a_barrier_restarts_them_up_front(recwarn):
    """RELAUNCH_WIDER: a second launch op asking for more cores than run, after the running cores passed an
    all-core barrier, starts the launch again with all of them up front. Was: the extra cores started at that
    launch op, passed the barrier after the others had ended (a BarrierCountWarning saying it hangs) and the
    others had read rows nothing had written yet."""
    import warnings
    warnings.simplefilter("always")
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    exe = _launch_barrier_launch_kernel().compile()
    y = exe.run({"t": np.array([1, 4] + [0] * 6, np.int32), "x": x})["y"]
    np.testing.assert_array_equal(y, np.roll(x, -1, axis=0))
    assert len(exe.machine.cores) == 4
    assert not [w for w in recwarn if w.category.__name__ in ("GmRaceWarning", "BarrierCountWarning")]
    from pto_core.errors import UnsupportedOp
    with pytest.raises(UnsupportedOp, match=r"core 0 passed the all-core barrier .*test_sync_all.py:\d+ before this "
                                            r"launch point: the 3 core\(s\) it launches"):
        exe.run({"t": np.array([1, 4] + [0] * 6, np.int32), "x": x}, cores=4)
