"""The CANN dynamic-shape operator pattern: host tiling data in a GM tensor passed as
``BuildCCE(flowtable=[tiling_gm])``, read into UB and into Scalars that size the loops and the
cores used; GM tensors declared with the unbounded ``(MAX_INT64,)`` shape are refused clearly."""
import numpy as np
import pytest

from pto_core import pto
from pto_core.errors import GmOverreadWarning, IllegalOperand, OutOfBounds, UnknownName
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

TILING_ARGS = 4
MAX_CORES = 4


def _scaled_copy_kernel(gm_shape=(4096,)):
    """y[i] = 2 * x[i] for i < n, n and the per-core share read from the tiling tensor."""
    ti = tik.Tik()
    x = ti.Tensor("float32", gm_shape, name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", gm_shape, name="y", scope=tik.scope_gm)
    tiling_gm = ti.Tensor("int64", (TILING_ARGS,), name="tiling_gm", scope=tik.scope_gm)
    cores = ti.Scalar("int64", name="cores", init_value=1)
    per_core = ti.Scalar("int64", name="per_core", init_value=0)
    with ti.new_stmt_scope():
        tiling_ub = ti.Tensor("int64", (TILING_ARGS,), name="tiling_ub", scope=tik.scope_ubuf)
        ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
        cores.set_as(tiling_ub[0])
        per_core.set_as(tiling_ub[1])
    with ti.for_range(0, MAX_CORES, block_num=MAX_CORES) as core:
        with ti.if_scope(core < cores):
            ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
            with ti.for_range(0, per_core // 64) as chunk:
                base = core * per_core + chunk * 64
                ti.data_move(ub, x[base], 0, 1, 8, 0, 0)
                ti.vec_muls(64, ub, ub, 2.0, 1, 8, 8)
                ti.data_move(y[base], ub, 0, 1, 8, 0, 0)
    build(ti, "scaled_copy", [x], [y], flowtable=[tiling_gm])
    return ti


@pytest.mark.parametrize("cores, per_core", [(1, 256), (2, 128), (4, 64)])
def test_flowtable_takes_the_gm_tiling_tensor(cores, per_core):
    ti = _scaled_copy_kernel()
    xs = np.random.default_rng(cores).standard_normal(4096).astype(np.float32)
    tiling = np.array([cores, per_core, 0, 0], np.int64)
    y, = run(ti, {"x": xs, "tiling_gm": tiling})
    n = cores * per_core
    assert np.array_equal(y[:n], xs[:n] * np.float32(2))
    assert ti.build.feed_names == ["x", "tiling_gm"]


def test_flowtable_entries_must_be_gm_tensors_or_input_scalars():
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (4,), name="tiling_ub", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"flowtable\[0\] \(tensor 'tiling_ub'\) is in UB \(scope_ubuf\); kernel arguments are GM"):
        build(ti, "bad", [x], [x], flowtable=[ub])
    with raises_tik(IllegalOperand, match=r"flowtable\[0\] must be a GM tensor or InputScalar, got int"):
        build(ti, "bad", [x], [x], flowtable=[3])


def _core_count_kernel():
    """Each used core writes its index + 1 into its 8-element slot; the core count comes from tiling."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    y = ti.Tensor("int32", (8 * 64,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    tiling_gm = ti.Tensor("int64", (TILING_ARGS,), name="tiling_gm", scope=tik.scope_gm)
    core_num = ti.Scalar("int64", name="core_num", init_value=1)
    with ti.new_stmt_scope():
        tiling_ub = ti.Tensor("int64", (TILING_ARGS,), name="tiling_ub", scope=tik.scope_ubuf)
        ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
        core_num.set_as(tiling_ub[0])
    with ti.for_range(0, core_num, block_num=core_num) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        value = ti.Scalar("int32", name="value")
        value.set_as(core + 1)
        ti.vec_dup(8, ub, value, 1, 8)
        ti.data_move(y[core * 8], ub, 0, 1, 1, 0, 0)
    build(ti, "core_count", [], [y], flowtable=[tiling_gm])
    return ti


def test_block_num_scalar_read_from_tiling_runs_that_many_cores():
    from tbe.common.platform import get_soc_spec
    ti = _core_count_kernel()
    width = get_soc_spec("CORE_NUM")
    assert width > 3
    for used in (1, 3, width):
        y, = run(ti, {"tiling_gm": np.array([used, 0, 0, 0], np.int64)})
        expect = np.zeros(8 * 64, np.int32)
        expect[:8 * used] = np.repeat(np.arange(1, used + 1), 8)
        assert np.array_equal(y, expect)
        assert len(ti.tikdb.executable.machine.cores) == width
    assert "pto.assert_in_range" in ti.program.to_asm()


def test_block_num_scalar_outside_tiks_block_num_range_is_a_run_time_error():
    ti = _core_count_kernel()
    for bad in (0, 65536):
        with raises_tik(IllegalOperand, match=rf"block_num Scalar 'core_num' .* = {bad} is outside \[1, 65535\]"):
            run(ti, {"tiling_gm": np.array([bad, 0, 0, 0], np.int64)})


def test_block_num_scalar_above_core_num_runs_every_block():
    """TIK's block_num range is [1, 65535], immediate or Scalar, and the runtime runs blocks beyond the
    cores in batches (RELAUNCH_WIDER): a tiling asking for CORE_NUM + 3 blocks was refused."""
    from tbe.common.platform import get_soc_spec
    ti = _core_count_kernel()
    used = get_soc_spec("CORE_NUM") + 3
    y, = run(ti, {"tiling_gm": np.array([used, 0, 0, 0], np.int64)})
    expect = np.zeros(8 * 64, np.int32)
    expect[:8 * used] = np.repeat(np.arange(1, used + 1), 8)
    assert np.array_equal(y, expect)
    assert len(ti.tikdb.executable.machine.cores) == used


def _outside_the_loop_kernel():
    """Every launched core atomically adds 1.0 to ``count`` outside the block loop (after it), and the
    single-core branch (tiling 1) takes no loop at all: a CANN dynamic op's two paths."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
    count = ti.Tensor("float32", (8,), name="count", scope=tik.scope_gm, is_atomic_add=True)
    tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling_gm, 0, 1, 1, 0, 0)
    cores = ti.Scalar("int32", name="cores", init_value=tu[0])
    one = ti.Tensor("float32", (8,), name="one", scope=tik.scope_ubuf)
    ti.vec_dup(8, one, 1.0, 1, 8)
    with ti.if_scope(cores > 1):
        with ti.for_range(0, cores, block_num=cores):
            pass
    ti.set_atomic_add(1)
    ti.data_move(count, one, 0, 1, 1, 0, 0)
    ti.set_atomic_add(0)
    build(ti, "outside", [], [count], flowtable=[tiling_gm])
    return ti


@pytest.mark.parametrize("launched", [1, 3, 32])
def test_code_outside_a_scalar_block_loop_runs_on_the_launched_cores_only(launched):
    ti = _outside_the_loop_kernel()
    count, = run(ti, {"tiling_gm": np.array([launched] + [0] * 7, np.int32)})
    assert np.array_equal(count, np.full(8, float(launched), np.float32))   # not once per CORE_NUM core
    assert "pto.launch_blocks" in ti.program.to_asm()


def test_start_debug_block_dim_does_not_apply_to_a_kernel_whose_scalar_picks_its_block_count():
    from pto_core.errors import ConfigError
    ti = _outside_the_loop_kernel()
    with raises_tik(ConfigError, match="chooses its block count while it runs .*block_dim does not apply"):
        ti.tikdb.start_debug({"tiling_gm": np.array([3] + [0] * 7, np.int32)}, interactive=False, block_dim=2)


def test_a_scalar_block_count_beyond_the_chip_launches_that_many_blocks():
    ti = _outside_the_loop_kernel()            # Ascend910: 32 cores; the code after the loop runs once per block
    count, = run(ti, {"tiling_gm": np.array([33] + [0] * 7, np.int32)})
    assert np.array_equal(count, np.full(8, 33.0, np.float32))


def test_block_num_scalar_needs_the_same_scalar_as_loop_end():
    ti = tik.Tik()
    n = ti.Scalar("int64", name="n", init_value=2)
    with raises_tik(IllegalOperand, match="endt must be the same Scalar"):
        with ti.for_range(0, 4, block_num=n):
            pass


MAX_INT64 = 2 ** 64 - 1


def _unbounded_copy_kernel():
    """y[:n] = x[:n] + 1 through a UB tensor whose shape is the tiling Scalar n (no max_mem_size);
    x and y are declared (MAX_INT64,) like CANN's dynamic-shape operators."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    tiling_gm = ti.Tensor("int64", (TILING_ARGS,), name="tiling_gm", scope=tik.scope_gm)
    n = ti.Scalar("int64", name="n", init_value=0)
    with ti.new_stmt_scope():
        tiling_ub = ti.Tensor("int64", (TILING_ARGS,), name="tiling_ub", scope=tik.scope_ubuf)
        ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
        n.set_as(tiling_ub[0])
    ub = ti.Tensor("float32", (n,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, n // 8, 0, 0)
    with ti.for_range(0, n // 64) as k:
        ti.vec_adds(64, ub[k * 64], ub[k * 64], 1.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, n // 8, 0, 0)
    build(ti, "unbounded_copy", [x], [y], flowtable=[tiling_gm])
    return ti


@pytest.mark.parametrize("n", [64, 512])
def test_unbounded_gm_tensors_take_their_size_at_launch(n):
    ti = _unbounded_copy_kernel()
    xs = np.random.default_rng(n).standard_normal(n + 64).astype(np.float32)
    y, = run(ti, {"x": xs, "tiling_gm": np.array([n, 0, 0, 0], np.int64), "y": n})
    assert y.shape == (n,)
    assert np.array_equal(y, xs[:n] + np.float32(1))
    assert ti.build.feed_names == ["x", "tiling_gm"]


def test_unbounded_gm_errors_name_the_tensor_and_the_fix():
    ti = _unbounded_copy_kernel()
    xs = np.zeros(64, np.float32)
    tiling = np.array([64, 0, 0, 0], np.int64)
    with raises_tik(UnknownName, match=r"GM tensor 'y' is declared with 18446744073709551615 elements .* real size "
                                       r"comes from the caller"):
        run(ti, {"x": xs, "tiling_gm": tiling})
    with pytest.warns(GmOverreadWarning, match=r"reads float32 elements 0..511 \(bytes \[0, 2048\)\) of tensor 'x' \(64 elements, 256 B"):
        y, = run(ti, {"x": xs, "tiling_gm": np.array([512, 0, 0, 0], np.int64), "y": 512})   # x fed too short
    assert np.array_equal(y[:64], xs + np.float32(1))          # the rest is unknown data (GM_OVERREAD_READS_UNKNOWN)


def test_dynamic_ub_tensor_without_max_mem_size_takes_the_rest_of_ub_and_is_checked():
    from tbe.common.platform import get_soc_spec
    ti = _unbounded_copy_kernel()
    ub = get_soc_spec("UB_SIZE")
    too_many = (ub // 4 // 64 + 1) * 64                       # more float32 elements than the UB holds
    with raises_tik(OutOfBounds, match=r"the shape of dynamic tensor 'ub' \(\d+ B of UB \(scope_ubuf\) reserved "
                                       r"without max_mem_size\) needs elements \[0, \d+\)"):
        run(ti, {"x": np.zeros(too_many, np.float32), "tiling_gm": np.array([too_many, 0, 0, 0], np.int64),
                 "y": too_many})


def _two_dynamic_ub_tensors_kernel():
    """a, b: dynamic UB tensors without max_mem_size, then a static one; y = (x + 1) ++ (x + 2)."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    tiling_gm = ti.Tensor("int64", (TILING_ARGS,), name="tiling_gm", scope=tik.scope_gm)
    n = ti.Scalar("int64", name="n", init_value=0)
    with ti.new_stmt_scope():
        tiling_ub = ti.Tensor("int64", (TILING_ARGS,), name="tiling_ub", scope=tik.scope_ubuf)
        ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
        n.set_as(tiling_ub[0])
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (n,), name="b", scope=tik.scope_ubuf)
    ones = ti.Tensor("float32", (64,), name="ones", scope=tik.scope_ubuf)
    ti.vec_dup(64, ones, 1.0, 1, 8)
    ti.data_move(a, x, 0, 1, n // 8, 0, 0)
    ti.data_move(b, x, 0, 1, n // 8, 0, 0)
    with ti.for_range(0, n // 64) as k:
        ti.vec_add(64, a[k * 64], a[k * 64], ones, 1, 8, 8, 0)
        ti.vec_adds(64, b[k * 64], b[k * 64], 2.0, 1, 8, 8)
    ti.data_move(y, a, 0, 1, n // 8, 0, 0)
    ti.data_move(y[n], b, 0, 1, n // 8, 0, 0)
    build(ti, "two_dynamic", [x], [y], flowtable=[tiling_gm])
    return ti


def test_later_tensors_take_room_from_an_open_ended_dynamic_tensor():
    from tbe.common.platform import get_soc_spec
    ti = _two_dynamic_ub_tensors_kernel()
    n = 1024
    xs = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    y, = run(ti, {"x": xs, "tiling_gm": np.array([n, 0, 0, 0], np.int64), "y": 2 * n})
    assert np.array_equal(y, np.concatenate([xs + np.float32(1), xs + np.float32(2)]))
    # 'b' starts at the run-time end of 'a' (DYNAMIC_TENSOR_RUNTIME_CHAIN): two counts that do not fit the
    # UB together are refused at b's declaration, naming both tensors
    big = get_soc_spec("UB_SIZE") // 2 // 4 // 64 * 64 + 64
    with raises_tik(OutOfBounds, match=r"the shape of dynamic tensor 'b' \(placed without max_mem_size at the run-time "
                                       r"end of 'a' in UB \(scope_ubuf\)"):
        run(ti, {"x": np.zeros(big, np.float32), "tiling_gm": np.array([big, 0, 0, 0], np.int64), "y": 2 * big})


def test_an_open_ended_tensor_too_small_at_run_time_names_the_placement_and_max_mem_size():
    """Two run-time-shaped UB tensors without max_mem_size whose run-time sizes do not fit the UB
    together: the error names both tensors, the named choices and that max_mem_size (or smaller shapes)
    is the fix, not the generic offsets/repeat advice."""
    from tbe.common.platform import get_soc_spec
    ti = _two_dynamic_ub_tensors_kernel()
    big = get_soc_spec("UB_SIZE") // 2 // 4 // 64 * 64 + 64
    with raises_tik(OutOfBounds, match=r"DYNAMIC_TENSOR_RUNTIME_CHAIN") as info:
        run(ti, {"x": np.zeros(big, np.float32), "tiling_gm": np.array([big, 0, 0, 0], np.int64), "y": 2 * big})
    msg = str(info.value)
    assert "'a', 'b'" in msg and "make the shapes the kernel computes smaller" in msg
    assert "max_mem_size=<its largest size in bytes>" in msg
    assert "check the offsets, repeat counts and strides" not in msg


def test_a_dynamic_tensor_after_a_static_one_shares_the_first_reservation():
    """dynamic a, static s, dynamic b (CANN's moving_sum_with_sigmoid f16 path): s takes its bytes from the
    top of a's reservation, b starts at a's run-time end (not in the 32-byte slack above s); both hold n
    elements."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (4096,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (4096,), name="y", scope=tik.scope_gm)
    nin = ti.Tensor("int32", (8,), name="nin", scope=tik.scope_gm)
    nub = ti.Tensor("int32", (8,), name="nub", scope=tik.scope_ubuf)
    ti.data_move(nub, nin, 0, 1, 1, 0, 0)
    n = ti.Scalar("int32", name="n", init_value=nub[0])
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf)
    s8 = ti.Tensor("float32", (8,), name="s8", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (n,), name="b", scope=tik.scope_ubuf)
    ti.vec_dup(8, s8, 0.0, 1, 8)
    ti.data_move(b, x, 0, 1, n // 16, 0, 0)
    ti.vec_conv(64, "", a, b, n // 64, 8, 4)
    ti.vec_conv(64, "", b, a, n // 64, 4, 8)
    ti.data_move(y, b, 0, 1, n // 16, 0, 0)
    build(ti, "dyn_static_dyn", [x, nin], [y])
    xs = (np.arange(4096) % 251).astype(np.float16)
    got, = run(ti, {"x": xs, "nin": np.array([2048] + [0] * 7, np.int32)})
    assert np.array_equal(got[:2048], xs[:2048])


def test_checks_inside_never_executed_code_do_not_raise():
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    tail = 128 % 64                                          # a tail computed by the script: 0 here
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    with ti.if_scope(tail > 0):                              # never runs: its vec_adds(mask=0) is dropped
        ti.vec_adds(tail, ub, ub, 1.0, 1, 8, 8)
    with ti.for_range(0, 0):
        ti.vec_adds(0, ub, ub, 1.0, 1, 8, 8)
    ti.vec_adds(64, ub, ub, 2.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "dead", [x], [y])
    xs = np.arange(64, dtype=np.float32)
    assert np.array_equal(run(ti, {"x": xs})[0], xs + 2)
    with raises_tik(IllegalOperand, match=r"mask = 0 is outside \[1, 64\]"):
        ti.vec_adds(tail, ub, ub, 1.0, 1, 8, 8)               # the same call where it would run


def test_gm_tensors_shaped_by_scalars_the_kernel_reads_are_sized_from_the_feed():
    """Tensor(dtype, (rows, cols), scope_gm) with rows/cols Scalars read from tiling data (CANN's
    sparse_reshape): the size comes from the fed array (inputs) or element count (outputs); views of
    it index with the run-time dims; an output without a fed size is a clear error."""
    from pto_core.errors import UnknownName

    def kernel():
        ti = tik.Tik()
        tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
        tiling_ub = ti.Tensor("int32", (8,), name="tiling_ub", scope=tik.scope_ubuf)
        ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
        rows = ti.Scalar("int32", name="rows", init_value=tiling_ub[0])
        cols = ti.Scalar("int32", name="cols", init_value=tiling_ub[1])
        x = ti.Tensor("int32", (rows, cols), name="x", scope=tik.scope_gm)
        y = ti.Tensor("int32", (rows, cols), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("int32", (64,), name="ub", scope=tik.scope_ubuf)
        ones = ti.Tensor("int32", (64,), name="ones", scope=tik.scope_ubuf)
        ti.vec_dup(64, ones, 1, 1, 8)
        with ti.for_range(0, rows) as r:                  # one row per iteration, cols = 16 (two blocks)
            ti.data_move(ub, x[r, 0], 0, 1, 2, 0, 0)
            ti.vec_add(16, ub, ub, ones, 1, 8, 8, 8)
            ti.data_move(y[r, 0], ub, 0, 1, 2, 0, 0)
        build(ti, "gm_scalar_shape", [x], [y], flowtable=[tiling_gm])
        return ti

    xs = np.arange(3 * 16, dtype=np.int32).reshape(3, 16)
    tiling = np.array([3, 16, 0, 0, 0, 0, 0, 0], np.int32)
    got, = run(kernel(), {"x": xs, "tiling_gm": tiling, "y": 48})
    assert np.array_equal(got.reshape(3, 16), xs + 1)
    with raises_tik(UnknownName, match="GM tensor 'y' has a shape computed by the kernel .* pass feed_dict"):
        run(kernel(), {"x": xs, "tiling_gm": tiling})


def _big_workspace_kernel():
    """y[:64] = x[:64] through a (2**30,)-element f16 workspace at the element offset read from the
    tiling tensor (CANN's dynamic sort declares its workspaces this size)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ws = ti.Tensor("float16", (2 ** 30,), name="ws", scope=tik.scope_gm, is_workspace=True)
    tiling_gm = ti.Tensor("int64", (TILING_ARGS,), name="tiling_gm", scope=tik.scope_gm)
    off = ti.Scalar("int64", name="off", init_value=0)
    tiling_ub = ti.Tensor("int64", (TILING_ARGS,), name="tiling_ub", scope=tik.scope_ubuf)
    ti.data_move(tiling_ub, tiling_gm, 0, 1, 1, 0, 0)
    off.set_as(tiling_ub[0])
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 4, 0, 0)
    ti.data_move(ws[off], ub, 0, 1, 4, 0, 0)
    ub2 = ti.Tensor("float16", (64,), name="ub2", scope=tik.scope_ubuf)
    ti.data_move(ub2, ws[off], 0, 1, 4, 0, 0)
    ti.data_move(y, ub2, 0, 1, 4, 0, 0)
    build(ti, "big_workspace", [x], [y], flowtable=[tiling_gm])
    return ti


def test_a_workspace_takes_a_fed_size():
    """WORKSPACE_SIZE_FROM_FEED: feed_dict[workspace] = element count allocates only that much."""
    ti = _big_workspace_kernel()
    xs = np.arange(64, dtype=np.float16) - 7
    y, = run(ti, {"x": xs, "tiling_gm": np.array([128, 0, 0, 0], np.int64), "ws": 256})
    assert np.array_equal(y, xs)


def test_a_huge_unfed_workspace_is_refused_and_a_fed_one_is_bounds_checked():
    from pto_core.errors import CapacityExceeded
    ti = _big_workspace_kernel()
    xs = np.ones(64, np.float16)
    tiling = np.array([0, 0, 0, 0], np.int64)
    with raises_tik(CapacityExceeded, match=r"workspace 'ws' is declared with 1073741824 elements .*"
                                            r"feed_dict\['ws'\] = the element count"):
        run(ti, {"x": xs, "tiling_gm": tiling})
    with raises_tik(IllegalOperand, match=r"feed_dict\['ws'\] must be the workspace's element count in "
                                          r"\[1, 1073741824\]"):
        run(ti, {"x": xs, "tiling_gm": tiling, "ws": 2 ** 31})
    with raises_tik(IllegalOperand, match=r"got an array of shape \[256\] \(a workspace holds no data at launch"):
        run(ti, {"x": xs, "tiling_gm": tiling, "ws": np.zeros(256, np.float16)})
    with raises_tik(OutOfBounds, match=r"past the end of region 'ws'\)"):
        run(ti, {"x": xs, "tiling_gm": np.array([1000, 0, 0, 0], np.int64), "ws": 256})


# ---------------------------------------------------------------- DYNAMIC_TENSOR_RUNTIME_CHAIN
CHAIN_CHIPS = ("Ascend910B1", "Ascend310P3")


def _chain_counts(ti, k):
    """k int32 Scalars read from GM input ``n_gm`` (the run-time shapes)."""
    n_gm = ti.Tensor("int32", (8,), name="n_gm", scope=tik.scope_gm)
    nub = ti.Tensor("int32", (8,), name="nub", scope=tik.scope_ubuf)
    ti.data_move(nub, n_gm, 0, 1, 1, 0, 0)
    return n_gm, [ti.Scalar("int32", name=f"n{i}", init_value=nub[i]) for i in range(k)]


def _load(ti, x, tensors, counts, chunk=None):
    """tensors[i] <- x[sum(counts[:i]) :][:counts[i]]; returns the offsets."""
    offs, off = [], 0
    for t, c in zip(tensors, counts):
        ti.data_move(t, x[off], 0, 1, c // 8, 0, 0)
        offs.append(off)
        off = off + c
    return offs


def _store(ti, y, tensors, counts, offs):
    for t, c, o in zip(tensors, counts, offs):
        ti.data_move(y[o], t, 0, 1, c // 8, 0, 0)


def _chain_run(ti, counts):
    xs = np.arange(sum(counts), dtype=np.float32) * np.float32(0.5) + np.float32(1)
    feed = {"n_gm": np.array(list(counts) + [0] * (8 - len(counts)), np.int32), "x": xs, "y": xs.size}
    return xs, run(ti, feed)[0]


def _ub(chip):
    from tbe.common.platform import get_soc_spec
    set_current_compile_soc_info(chip)
    return get_soc_spec("UB_SIZE")


def _two_tensor_kernel(scope=tik.scope_ubuf):
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n_gm, (n0, n1) = _chain_counts(ti, 2)
    a = ti.Tensor("float32", (n0,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (n1,), name="b", scope=tik.scope_ubuf)
    _store(ti, y, [a, b], [n0, n1], _load(ti, x, [a, b], [n0, n1]))
    build(ti, "two_chain", [n_gm, x], [y])
    return ti


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_a_second_open_ended_tensor_may_take_three_quarters_of_the_ub(chip):
    """indices_ub then grad_ub (CANN embedding_dense_grad's shape): the second needs 3/4 of the UB; it starts
    at the run-time end of the first (DYNAMIC_TENSOR_RUNTIME_CHAIN; refused under the old halving)."""
    m = (_ub(chip) - 256) // 16 // 64 * 64
    ti = _two_tensor_kernel()
    xs, y = _chain_run(ti, [m, 3 * m])
    assert np.array_equal(y, xs)
    xs, y = _chain_run(ti, [64, 128])         # small sizes: same program, packed at run time
    assert np.array_equal(y, xs)


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_open_ended_tensors_that_do_not_fit_together_are_refused_naming_them(chip):
    m = _ub(chip) // 16 // 64 * 64 + 64
    ti = _two_tensor_kernel()
    with raises_tik(OutOfBounds, match=r"dynamic tensor 'b' \(placed without max_mem_size at the run-time end of "
                                       r"'a'") as info:
        _chain_run(ti, [m, 3 * m])
    assert "'a', 'b'" in info.value.hint and "max_mem_size=" in info.value.hint
    assert info.value.hint.count("DYNAMIC_TENSOR_RUNTIME_CHAIN") == 1


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_a_static_tensor_after_chained_ones_takes_the_top_and_rechecks_the_chain(chip):
    ub = _ub(chip)
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n_gm, (n0, n1) = _chain_counts(ti, 2)
    a = ti.Tensor("float32", (n0,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (n1,), name="b", scope=tik.scope_ubuf)
    s = ti.Tensor("float32", (4096,), name="s", scope=tik.scope_ubuf)        # 16 KB from the top
    offs = _load(ti, x, [a, b], [n0, n1])
    ti.vec_dup(64, s, 3.0, 64, 8)
    ti.vec_add(64, a, a, s, 1, 8, 8, 8)              # a[:64] += 3 (s untouched by a and b)
    _store(ti, y, [a, b], [n0, n1], offs)
    build(ti, "chain_static", [n_gm, x], [y])
    m = (ub - 16384 - 512) // 8 // 64 * 64
    xs, got = _chain_run(ti, [m, m])
    want = xs.copy()
    want[:64] += np.float32(3)
    assert np.array_equal(got, want)
    big = (ub - 16384) // 8 // 64 * 64 + 64        # fits the UB, not the room below s
    with raises_tik(OutOfBounds, match=r"used by dynamic tensor\(s\) 'a', 'b' .*below static tensor 's'"):
        _chain_run(ti, [big, big])


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_a_tensor_declared_after_a_freed_chained_one_chains_from_the_last_live_one(chip):
    """a (outer), b in a new_stmt_scope (freed), then c: c starts at a's end, so a + b and a + c each fit
    the UB although a + b + c does not."""
    ub = _ub(chip)
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n_gm, (n0, n1, n2) = _chain_counts(ti, 3)
    a = ti.Tensor("float32", (n0,), name="a", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, n0 // 8, 0, 0)
    with ti.new_stmt_scope():
        b = ti.Tensor("float32", (n1,), name="b", scope=tik.scope_ubuf)
        ti.data_move(b, x[n0], 0, 1, n1 // 8, 0, 0)
        ti.data_move(y[n0], b, 0, 1, n1 // 8, 0, 0)
    c = ti.Tensor("float32", (n2,), name="c", scope=tik.scope_ubuf)
    ti.data_move(c, x[n0 + n1], 0, 1, n2 // 8, 0, 0)
    ti.data_move(y, a, 0, 1, n0 // 8, 0, 0)
    ti.data_move(y[n0 + n1], c, 0, 1, n2 // 8, 0, 0)
    build(ti, "chain_scopes", [n_gm, x], [y])
    q = (ub - 256) // 4 // 4 // 64 * 64
    xs, got = _chain_run(ti, [q, 3 * q, 3 * q])
    assert np.array_equal(got, xs)


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_a_chained_address_uses_the_shape_value_at_the_declaration(chip):
    """n changes after a's declaration: b starts at a's end computed from the old n (with the new n it
    would not fit)."""
    ub = _ub(chip)
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n_gm, (n0, n1) = _chain_counts(ti, 2)
    n = ti.Scalar("int32", name="n", init_value=n0)
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf)
    n.set_as(n1)
    b = ti.Tensor("float32", (n,), name="b", scope=tik.scope_ubuf)
    _store(ti, y, [a, b], [n0, n1], _load(ti, x, [a, b], [n0, n1]))
    build(ti, "chain_scalar", [n_gm, x], [y])
    xs, got = _chain_run(ti, [64, (ub - 1024) // 4 // 64 * 64])
    assert np.array_equal(got, xs)


@pytest.mark.parametrize("chip", ("Ascend910", "Ascend310P3"))
def test_open_ended_l1_tensors_chain_too(chip):
    from tbe.common.platform import get_soc_spec
    set_current_compile_soc_info(chip)
    l1 = get_soc_spec("L1_SIZE")
    chunk = 2048
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n_gm, (n0, n1) = _chain_counts(ti, 2)
    a = ti.Tensor("float32", (n0,), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("float32", (n1,), name="b", scope=tik.scope_cbuf)
    ub = ti.Tensor("float32", (chunk,), name="ub", scope=tik.scope_ubuf)
    offs = _load(ti, x, [a, b], [n0, n1])
    for t, c, o in zip((a, b), (n0, n1), offs):
        with ti.for_range(0, c // chunk) as k:
            ti.data_move(ub, t[k * chunk], 0, 1, chunk // 8, 0, 0)
            ti.data_move(y[o + k * chunk], ub, 0, 1, chunk // 8, 0, 0)
    build(ti, "chain_l1", [n_gm, x], [y])
    m = (l1 - 2048) // 16 // chunk * chunk
    xs, got = _chain_run(ti, [m, 3 * m])
    assert np.array_equal(got, xs)
    with raises_tik(OutOfBounds, match=r"dynamic tensor 'b' \(placed without max_mem_size .* in L1"):
        _chain_run(ti, [2 * m, 3 * m])


def _write_past_kernel(write, max_mem_size=None):
    """a, b: float32 (n,) UB tensors; b <- x[:64]; ``write(ti, a, x)`` writes 128 floats into a; y <- b."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (1024,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    kw = {} if max_mem_size is None else {"max_mem_size": max_mem_size}
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf, **kw)
    b = ti.Tensor("float32", (n,), name="b", scope=tik.scope_ubuf, **kw)
    ti.data_move(b, x, 0, 1, 8, 0, 0)
    write(ti, a, x)
    ti.data_move(y, b, 0, 1, 8, 0, 0)
    return build(ti, "write_past", [x, n], [y])


WRITES_OF_128 = {
    "vec_dup": lambda ti, a, x: ti.vec_dup(64, a, 7.0, 2, 8),
    "data_move": lambda ti, a, x: ti.data_move(a, x[64], 0, 1, 16, 0, 0),
}


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
@pytest.mark.parametrize("how", sorted(WRITES_OF_128))
def test_a_write_past_an_open_ended_tensor_into_the_chained_one_is_refused(chip, how):
    """A write of 128 elements into 'a' (n = 64) would land in 'b', placed at a's run-time end
    (DYNAMIC_TENSOR_RUNTIME_CHAIN): refused at run time naming 'b' (it was silently overwritten). With
    max_mem_size (room for 256 floats each) the same kernel keeps b intact; a smaller n for b is fine."""
    set_current_compile_soc_info(chip)
    xs = np.arange(1024, dtype=np.float32)
    ti = _write_past_kernel(WRITES_OF_128[how], max_mem_size=1024)
    y, = run(ti, {"x": xs, "n": 64})
    assert np.array_equal(y, xs[:64])
    ti = _write_past_kernel(WRITES_OF_128[how])
    with raises_tik(OutOfBounds, match=r"tensor 'a'") as info:
        run(ti, {"x": xs, "n": 64})
    assert "reaches 'b', placed right after it at run time" in info.value.hint
    assert "DYNAMIC_TENSOR_RUNTIME_CHAIN" in info.value.hint and "max_mem_size=" in info.value.hint
    y, = run(ti, {"x": xs, "n": 128})          # the write fits a's shape
    assert np.array_equal(y, xs[:64])


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
def test_a_write_past_the_last_chained_tensor_into_a_static_one_is_refused(chip):
    """'b' chained after 'a', static 's' declared after them takes the top of a's reservation: a write past
    b's room (a static extent inside the reservation's static size) would land in s. Refused as a tensor
    overflow naming the reservation's end (it was reported as a WAW hazard on s, or corrupted s)."""
    ub = _ub(chip)
    ti = tik.Tik()
    x = ti.Tensor("float32", (1024,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    m = ti.InputScalar("int32", name="m")
    ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (m,), name="b", scope=tik.scope_ubuf)
    s = ti.Tensor("float32", (64,), name="s", scope=tik.scope_ubuf)
    ti.data_move(s, x, 0, 1, 8, 0, 0)
    ti.vec_dup(64, b, 7.0, 4, 8)              # 256 floats into b
    ti.data_move(y, s, 0, 1, 8, 0, 0)
    build(ti, "chain_top", [x, n, m], [y])
    xs = np.arange(1024, dtype=np.float32)
    y, = run(ti, {"x": xs, "n": 64, "m": 256})
    assert np.array_equal(y, xs[:64])
    n_big = (ub - 1024) // 4                  # b's room: 184 floats below s (a's top is UB - 288 B)
    with raises_tik(OutOfBounds, match=r"dst \(tensor 'b', placed without max_mem_size\) needs elements \[0, 256\)"
                                       r" but the tensor has only 184 elements") as info:
        run(ti, {"x": xs, "n": n_big, "m": 64})
    assert "reaches the end of the reservation of 'a'" in info.value.hint


def test_a_block_count_above_core_num_prints_and_warns_once_per_block(capsys, recwarn):
    """RELAUNCH_WIDER restarts the launch when the tiling asks for more blocks than CORE_NUM; the aborted
    first attempt's printf text and warnings (code before the block loop) were printed once more."""
    import warnings
    from tbe.common.platform import get_soc_spec
    from tbe_compat.tik.debug import tik_machine_options
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling_gm, 0, 1, 1, 0, 0)
    blocks = ti.Scalar("int32", name="blocks", init_value=tu[0])
    ti.printf("blocks %d\n", blocks)
    junk = ti.Tensor("int32", (8,), name="junk", scope=tik.scope_ubuf)
    ti.vec_adds(8, junk, junk, 1, 1, 8, 8)                   # reads unwritten UB: a warning per block
    with ti.for_range(0, blocks, block_num=blocks):
        pass
    ti.data_move(y, tu, 0, 1, 1, 0, 0)
    build(ti, "print_before", [], [y], flowtable=[tiling_gm])
    ti.tikdb.options = tik_machine_options(uninitialized="warn")
    used = get_soc_spec("CORE_NUM") + 1
    warnings.simplefilter("always")
    run(ti, {"tiling_gm": np.array([used] + [0] * 7, np.int32)})
    assert capsys.readouterr().out.count(f"blocks {used}\n") == used
    unwritten = [w for w in recwarn if "which nothing wrote" in str(w.message)]
    assert sorted(str(w.message).split(" byte")[0] for w in unwritten) == sorted(
        f"pto.ub.vadds operand src reads core{c}.ub0" for c in range(used))


def _many_blocks_kernel(n: int, leave_flag: bool = False):
    ti = tik.Tik()
    x = ti.Tensor("int32", (n, 8), name="x", scope=tik.scope_gm)
    out = ti.Tensor("int32", (n, 8), name="out", scope=tik.scope_gm)
    with ti.for_range(0, n, block_num=n) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[core, 0], 0, 1, 1, 0, 0)
        ti.vec_adds(8, ub, ub, core, 1, 8, 8)
        ti.data_move(out[core, 0], ub, 0, 1, 1, 0, 0)
        if leave_flag:
            pto.set_flag("MTE3", "V", 2)              # never waited for: reported at kernel end
    build(ti, "many", [x], [out])
    return ti


def test_many_blocks_run_in_bounded_memory():
    """A launch of 4096 blocks (immediate block_num; TIK accepts up to 65535) holds the on-chip buffers of the
    running block only: UB is made on first use (LAZY_BUFFERS) and a finished block's buffers are dropped
    (RELEASE_FINISHED_BLOCKS). Was: every core's UB and its written map were made up front, ~0.75 MiB per
    block (3 GB here; a tiling count of 65535 died at 23 GB)."""
    import tracemalloc
    n = 4096
    set_current_compile_soc_info("Ascend910B1")
    ti = _many_blocks_kernel(n)
    a = np.arange(n * 8, dtype=np.int32).reshape(n, 8)
    tracemalloc.start()
    try:
        got, = run(ti, {"x": a})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, a + np.arange(n, dtype=np.int32)[:, None])
    assert peak < 200 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MB"


@pytest.mark.parametrize("order", ["sequential", "random"])
def test_released_blocks_keep_outputs_and_end_of_kernel_reports(monkeypatch, order):
    """Dropping a finished block's buffers (a launch of more blocks than Ascend910B1's 48 cores) changes no
    output and no end-of-kernel report (a flag left set on every core), in either core order."""
    from pto_core import interpreter
    set_current_compile_soc_info("Ascend910B1")
    n = 64
    a = np.arange(n * 8, dtype=np.int32).reshape(n, 8)
    results = []
    for release in (False, True):
        monkeypatch.setattr(interpreter, "RELEASE_FINISHED_BLOCKS", release)
        ti = _many_blocks_kernel(n, leave_flag=True)
        run(ti, {"x": a})
        exe = ti.tikdb.executable
        out = exe.run({"x": a}, order=order, seed=3)
        results.append((out["out"], list(exe.reports)))
        assert all(u is None for c in exe.machine.cores for u in c._ubs) == release
    (want, want_reports), (got, got_reports) = results
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, a + np.arange(n, dtype=np.int32)[:, None])
    assert got_reports == want_reports and sum("MTE3" in m for _, m in got_reports) >= 1


def test_launch_within_the_cores_keeps_its_buffers():
    """A launch of no more blocks than the chip's cores keeps every core's on-chip buffers after the run
    (inspectable, as the device's are)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = _many_blocks_kernel(4)
    run(ti, {"x": np.zeros((4, 8), np.int32)})
    ub = ti.tikdb.executable.machine.cores[3].buffer("ub")
    assert ub.written[:32].all() and (ub.data[:4].view(np.int32) == 3).all()


def test_a_passed_machine_keeps_its_buffers_after_a_run_that_built_it_released_them():
    """`Executable.run(machine=)` on the machine an earlier run built (a launch past Ascend910B1's 48 cores,
    so that run released its blocks' buffers) keeps every buffer this time, as documented for a machine the
    caller passes (RELEASE_FINISHED_BLOCKS). Was: the flag the first run set stayed on the machine, so the
    caller's run dropped them too (every UB None after it)."""
    set_current_compile_soc_info("Ascend910B1")
    n = 64
    ti = _many_blocks_kernel(n)
    a = np.arange(n * 8, dtype=np.int32).reshape(n, 8)
    run(ti, {"x": a})
    exe = ti.tikdb.executable
    machine = exe.machine
    assert all(u is None for c in machine.cores for u in c._ubs)          # released by the run that built it
    out = exe.run({"x": a}, machine=machine)
    np.testing.assert_array_equal(out["out"], a + np.arange(n, dtype=np.int32)[:, None])
    ub = machine.cores[n - 1]._ubs[0]
    assert ub is not None and ub.written[:32].all() and (ub.data[:32].view(np.int32) == a[-1] + n - 1).all()


def test_a_passed_machine_refuses_a_wider_block_count_instead_of_relaunching_on_itself():
    """A computed block count above the cores of a machine the caller passes is the documented
    IllegalOperand (RELAUNCH_WIDER applies to machines `run()` builds), also when that machine came from an
    earlier run that built it wider. Was: the earlier run's relaunch setting stayed on the machine and the
    launch restarted on the same machine, whose core 0 still held the aborted attempt's hazard history: a
    HazardError on the kernel's first data_move."""
    ti = _core_count_kernel()
    run(ti, {"tiling_gm": np.array([3, 0, 0, 0], np.int64)})
    exe = ti.tikdb.executable
    machine = exe.machine
    width = len(machine.cores)
    with pytest.raises(IllegalOperand, match=rf"the kernel asks for {width + 1} cores; the machine has {width}"):
        exe.run({"tiling_gm": np.array([width + 1, 0, 0, 0], np.int64)}, machine=machine)


def test_a_scalar_block_loop_in_a_serial_loop_that_widens_prints_and_warns_once_per_block(capsys, recwarn):
    """A Scalar block loop inside a serial loop whose second trip asks for more blocks than CORE_NUM restarts
    the launch (RELAUNCH_WIDER). Was: the aborted attempt's printf text and uninitialised-read warning, issued
    after its first launch (2 blocks) stood, were already out: one copy more than per launched block."""
    import warnings
    from tbe.common.platform import get_soc_spec
    from tbe_compat.tik.debug import tik_machine_options
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
    acc = ti.Tensor("float32", (8,), name="acc", scope=tik.scope_gm, is_atomic_add=True)
    tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling_gm, 0, 1, 1, 0, 0)
    blocks = ti.Scalar("int32", name="blocks", init_value=tu[0])
    ti.printf("pre %d\n", blocks)
    junk = ti.Tensor("int32", (8,), name="junk", scope=tik.scope_ubuf)
    ti.vec_adds(8, junk, junk, 1, 1, 8, 8)                   # reads unwritten UB: a warning per block
    one = ti.Tensor("float32", (8,), name="one", scope=tik.scope_ubuf)
    with ti.for_range(0, 2) as j:
        blocks.set_as(tu[j])
        with ti.for_range(0, blocks, block_num=blocks) as b:
            ti.printf("in %d\n", b)
            ti.vec_dup(8, one, 1.0, 1, 8)
            ti.set_atomic_add(1)
            ti.data_move(acc, one, 0, 1, 1, 0, 0)
            ti.set_atomic_add(0)
    build(ti, "widening", [], [acc], flowtable=[tiling_gm])
    ti.tikdb.options = tik_machine_options(uninitialized="warn")
    wide = get_soc_spec("CORE_NUM") + 2
    warnings.simplefilter("always")
    got, = run(ti, {"tiling_gm": np.array([2, wide] + [0] * 6, np.int32)})
    assert np.array_equal(got, np.full(8, 2.0 + wide, np.float32))   # 2 blocks at j=0, then wide blocks
    out = capsys.readouterr().out.splitlines()
    assert out.count("pre 2") == wide
    assert sum(x.startswith("in ") for x in out) == 2 + wide
    assert len([w for w in recwarn if "which nothing wrote" in str(w.message)]) == wide


def test_a_block_barrier_before_a_scalar_block_loop_waits_for_every_launched_block(recwarn):
    """Code before a Scalar block loop runs on every launched block; a block_barrier there waits for all of
    them, as on the device. Was: core 0 passed it alone (the other blocks start where the loop starts), so it
    read the count before the others had added to it, and a BarrierCountWarning claimed the kernel hangs."""
    import warnings
    warnings.simplefilter("always")
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
    count = ti.Tensor("float32", (8,), name="count", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    sync = ti.Tensor("int64", (64,), name="sync", scope=tik.scope_gm, is_workspace=True)
    y = ti.Tensor("float32", (16, 8), name="y", scope=tik.scope_gm)
    tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling_gm, 0, 1, 1, 0, 0)
    blocks = ti.Scalar("int32", name="blocks", init_value=tu[0])
    one = ti.Tensor("float32", (8,), name="one", scope=tik.scope_ubuf)
    ti.vec_dup(8, one, 1.0, 1, 8)
    ti.set_atomic_add(1)
    ti.data_move(count, one, 0, 1, 1, 0, 0)                 # every launched block adds 1
    ti.set_atomic_add(0)
    ti.block_barrier(sync)
    with ti.for_range(0, blocks, block_num=blocks) as b:
        ti.data_move(one, count, 0, 1, 1, 0, 0)             # after the barrier: the launched block count
        ti.data_move(y[b, 0], one, 0, 1, 1, 0, 0)
    build(ti, "barrier_first", [], [y], flowtable=[tiling_gm])
    for used in (3, 8, 12):                                 # Ascend310P3: 8 cores; 12 relaunches wider too
        recwarn.clear()
        got, = run(ti, {"tiling_gm": np.array([used] + [0] * 7, np.int32)})
        np.testing.assert_array_equal(got[:used], np.full((used, 8), float(used), np.float32))
        said = [str(w.message) for w in recwarn if w.category.__name__ in ("GmRaceWarning", "BarrierCountWarning")]
        if used <= 8:
            assert not said
        else:                                               # the device runs 12 blocks in batches: it hangs
            assert len(said) == 1 and "the launch has 12 blocks but Ascend310P3 runs 8 at a time" in said[0]


def _static_in_scope_kernel(how, write_inside=False):
    """'a' (n floats, no max_mem_size) reserves the rest of the UB; a static 16 KB 's' is declared in a
    new_stmt_scope / for_range body / code that never runs; then m floats are written into 'a' and stored."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (MAX_INT64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (MAX_INT64,), name="y", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    m = ti.InputScalar("int32", name="m")
    a = ti.Tensor("float32", (n,), name="a", scope=tik.scope_ubuf)
    scope = {"stmt": ti.new_stmt_scope, "loop": lambda: ti.for_range(0, 2), "dead": lambda: ti.if_scope(0 > 1),
             "empty_loop": lambda: ti.for_range(0, 0)}[how]()
    with scope:
        s = ti.Tensor("float32", (4096,), name="s", scope=tik.scope_ubuf)
        ti.vec_dup(64, s, 1.0, 1, 8)
        if write_inside:
            ti.data_move(a, x, 0, 1, m // 8, 0, 0)
    ti.data_move(a, x, 0, 1, m // 8, 0, 0)
    ti.data_move(y, a, 0, 1, m // 8, 0, 0)
    return build(ti, "static_in_scope", [x, n, m], [y])


@pytest.mark.parametrize("chip", CHAIN_CHIPS)
@pytest.mark.parametrize("how", ["stmt", "loop", "dead", "empty_loop"])
def test_a_freed_static_tensor_gives_its_bytes_back_to_the_open_ended_reservation(chip, how):
    """A static tensor declared while an open-ended reservation (DYNAMIC_TENSOR_OPEN_ENDED) is live takes
    the reservation's top; when its scope ends TIK frees it (tik_api.md §6.3), so a later write filling the
    reservation runs (it was refused against the lowered reservation, also when the static tensor was in code
    that never runs). While the static tensor lives, the same write is still refused."""
    ub = _ub(chip)
    full = (ub - 1024) // 4 // 64 * 64           # floats of the reservation, less the 8 int32 of n_gm etc.
    ti = _static_in_scope_kernel(how)
    xs = np.arange(full, dtype=np.float32)
    small = 64 if how in ("stmt", "loop") else full      # a's shape must stay below a live 's'
    got, = run(ti, {"x": xs, "y": full, "n": small, "m": full})
    assert np.array_equal(got[:full], xs)
    if how in ("stmt", "loop"):
        ti = _static_in_scope_kernel(how, write_inside=True)
        with raises_tik(OutOfBounds, match=r"tensor 'a'"):
            run(ti, {"x": xs, "y": full, "n": small, "m": full})


def test_a_scalar_block_loop_in_a_serial_loop_widening_after_a_block_barrier_starts_every_block_up_front(recwarn):
    """RELAUNCH_WIDER: a serial loop whose trips count the launched blocks (atomic add, block_barrier) and then run
    a Scalar block loop; the second trip asks for more blocks than the first. Every launched block runs the code
    outside the block loop from the kernel's beginning, so both trips see all of them, as when the first trip asks
    for more. Was: the blocks the second trip added started late: the first trip counted 2 of 5, the second trip
    read 4 on blocks 0-1 and 10 on the others, with a false GM race and a BarrierCountWarning saying it hangs."""
    import warnings
    warnings.simplefilter("always")
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    tiling_gm = ti.Tensor("int32", (8,), name="tiling_gm", scope=tik.scope_gm)
    count = ti.Tensor("float32", (8,), name="count", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)
    sync = ti.Tensor("int64", (64,), name="sync", scope=tik.scope_gm, is_workspace=True)
    y = ti.Tensor("float32", (2, 8, 8), name="y", scope=tik.scope_gm)
    tu = ti.Tensor("int32", (8,), name="tu", scope=tik.scope_ubuf)
    ti.data_move(tu, tiling_gm, 0, 1, 1, 0, 0)
    blocks = ti.Scalar("int32", name="blocks", init_value=tu[0])
    one = ti.Tensor("float32", (8,), name="one", scope=tik.scope_ubuf)
    with ti.for_range(0, 2) as j:
        blocks.set_as(tu[j])
        ti.vec_dup(8, one, 1.0, 1, 8)
        ti.set_atomic_add(1)
        ti.data_move(count, one, 0, 1, 1, 0, 0)             # every launched block adds 1 per trip
        ti.set_atomic_add(0)
        ti.block_barrier(sync)
        with ti.for_range(0, blocks, block_num=blocks) as b:
            ti.data_move(one, count, 0, 1, 1, 0, 0)
            ti.data_move(y[j, b, 0], one, 0, 1, 1, 0, 0)
        ti.block_barrier(sync)
    build(ti, "widen_after_barrier", [], [y], flowtable=[tiling_gm])
    for first, second in ((2, 5), (5, 2)):
        recwarn.clear()
        got, = run(ti, {"tiling_gm": np.array([first, second] + [0] * 6, np.int32)})
        np.testing.assert_array_equal(got[0, :first], np.full((first, 8), 5.0, np.float32))
        np.testing.assert_array_equal(got[1, :second], np.full((second, 8), 10.0, np.float32))
        assert not [w for w in recwarn if w.category.__name__ in ("GmRaceWarning", "BarrierCountWarning")]
