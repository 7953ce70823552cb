"""Patterns found in real public TIK kernels that the facade mishandled, each reproduced with
our own minimal kernel (no third-party code): the kernel must run unchanged and give the
numpy result; where CANN would reject the pattern, the error must name the API and what is
wrong."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, OutOfBounds
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run
from .vec_helpers import vec_kernel


# ---------------------------------------------------------------------------------------------
# A static "tensor overflow" in code that never runs (a run-time branch or a loop that may be
# empty) is not a trace-time error: production ops clear a small GM buffer with
#     with if_scope(idx + 1 == loops): data_move(gm, ub, 0, 1, tail_blocks, 0, 0)
#     with else_scope():              data_move(gm, ub, 0, 1, FULL_BLOCKS, 0, 0)
# where FULL_BLOCKS exceeds the buffer but the else branch is dead for that size.

def _clear_kernel(n, full_blocks, take_else=False):
    ti = tik.Tik()
    g = ti.Tensor("float16", (n,), name="g", scope=tik.scope_gm)
    zero = ti.Tensor("float16", (full_blocks * 16,), name="zero", scope=tik.scope_ubuf)
    ti.vec_dup(128, zero, 0, full_blocks * 16 // 128, 8)
    loops = 1
    with ti.for_range(0, loops) as idx:
        cond = (idx + 1 != loops) if take_else else (idx + 1 == loops)
        with ti.if_scope(cond):
            ti.data_move(g, zero, 0, 1, n // 16, 0, 0)
        with ti.else_scope():
            ti.data_move(g, zero, 0, 1, full_blocks, 0, 0)      # overflows g: dead for this size
    return build(ti, "clear", [g], [])


def test_static_overflow_in_dead_branch_runs():
    ti = _clear_kernel(64, 32)
    feed = {"g": np.full(64, 3, np.float16)}
    run(ti, feed)
    assert np.array_equal(feed["g"], np.zeros(64, np.float16))


def test_static_overflow_in_taken_branch_is_a_run_time_error():
    ti = _clear_kernel(64, 32, take_else=True)
    with pytest.raises(OutOfBounds, match=r"tensor overflow: dst of tik.data_move .*tensor 'g', 160 B with its "
                                           r"allocation's padding\) needs elements \[0, 512\) but the tensor has "
                                           r"only 80"):
        run(ti, {"g": np.full(64, 3, np.float16)})


def test_static_overflow_unconditional_is_a_trace_time_error():
    ti = tik.Tik()
    g = ti.Tensor("float16", (64,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (512,), name="ub", scope=tik.scope_ubuf)
    with ti.if_scope(True):                      # a Python True: the body always runs
        with raises_tik(OutOfBounds, match=r"tensor overflow: .* needs 1024 bytes .* 'g' \(128 B\)"):
            ti.data_move(g, ub, 0, 1, 32, 0, 0)


# The same for a view: a static index past the end inside an ``if_scope`` whose condition is a
# Python False (IndexSDK's flat-IP slice loader copies a partial z-region with
#     remain = cnt % H                      # a Python int: 0 for every full slice
#     with if_scope(remain != 0): data_move(l1[d, nburst * H, 0], ...)
# so ``nburst * H`` is one past the last row for every full slice; TIK folds the branch away).

def _dead_view_kernel(rows, cnt):
    ti = tik.Tik()
    x = ti.Tensor("float16", (rows, 16), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (rows, 16), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (rows, 16), name="ub", scope=tik.scope_ubuf)
    full, remain = cnt // 8 * 8, cnt % 8
    ti.data_move(ub, x, 0, 1, full, 0, 0)
    with ti.if_scope(remain != 0):
        ti.data_move(ub[full, 0], x[full, 0], 0, 1, remain, 0, 0)
    ti.vec_adds(128, ub, ub, 1.0, rows * 16 // 128, 8, 8)
    ti.data_move(y, ub, 0, 1, rows, 0, 0)
    return build(ti, "dead_view", [x], [y])


@pytest.mark.parametrize("cnt", [16, 12])
def test_static_index_past_the_end_in_dead_branch(cnt):
    ti = _dead_view_kernel(16, cnt)             # cnt 16: ub[16, 0] is one row past the end, branch dead
    xv = np.arange(256, dtype=np.float16).reshape(16, 16)
    out, = run(ti, {"x": xv})
    assert np.array_equal(out[:cnt], xv[:cnt] + np.float16(1))


def test_static_index_past_the_end_in_live_branch_is_an_error():
    ti = tik.Tik()
    ub = ti.Tensor("float16", (16, 16), name="ub", scope=tik.scope_ubuf)
    flag = ti.Scalar("int32", name="flag", init_value=1)
    with ti.if_scope(flag != 0):                 # a run-time condition: the view is checked when traced
        with raises_tik(IllegalOperand, match=r"tensor overflow: index 16 is outside \[0, 16\)"):
            ub[16, 0]


def test_vector_overflow_in_possibly_empty_loop():
    """A vector op whose static extent overflows, in a loop with a run-time trip count."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.vec_dup(128, ub, 2.0, 1, 8)
    with ti.for_range(0, n):
        ti.vec_dup(128, ub, 1.0, 2, 8)           # 256 elements > 128: an error only if the loop runs
    ti.data_move(x, ub, 0, 1, 8, 0, 0)
    build(ti, "dup", [], [x], flowtable=[n])
    out, = run(ti, {"n": 0})
    assert np.array_equal(out, np.full(128, 2, np.float16))
    with pytest.raises(OutOfBounds, match=r"tensor overflow: dst \(tensor 'ub'\) needs elements \[0, 256\)"):
        run(ti, {"n": 1})


# ---------------------------------------------------------------------------------------------
# Storing the last partial 32-byte block of a GM output whole (``burst = ceil(n / 16)``), and
# atomically adding a zero-padded block for rows narrower than a block: the bytes past the
# tensor land in the allocation's padding (GM tensors are allocated in 32-byte granules plus
# padding). Running a whole block past the end stays an error.

def test_store_last_partial_block_whole():
    n = 100                                      # 200 bytes: the 7th block runs 24 bytes past the end
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (112,), name="ub", scope=tik.scope_ubuf)
    blocks = (n + 15) // 16
    ti.data_move(ub, x, 0, 1, blocks, 0, 0)
    ti.vec_adds(112, ub, ub, 1.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, blocks, 0, 0)
    build(ti, "tail", [x], [y])
    xv = np.arange(n, dtype=np.float16)
    out, = run(ti, {"x": xv})
    assert np.array_equal(out, xv + np.float16(1))
    assert any(kind == "gm-tail" for kind, _ in ti.tikdb.reports)


def test_atomic_add_of_zero_padded_narrow_rows():
    rows, dim, words = 12, 4, 5                  # a row is 16 bytes; each store moves one 32-byte block
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    g = ti.Tensor("float32", (rows, dim), name="g", scope=tik.scope_gm)
    idx = ti.Tensor("int32", (rows,), name="idx", scope=tik.scope_gm)
    out = ti.Tensor("float32", (words, dim), name="out", scope=tik.scope_gm, is_atomic_add=True)
    g_ub = ti.Tensor("float32", (rows, dim), name="g_ub", scope=tik.scope_ubuf)
    i_ub = ti.Tensor("int32", (16,), name="i_ub", scope=tik.scope_ubuf)
    blk = ti.Tensor("float32", (8,), name="blk", scope=tik.scope_ubuf)
    ti.data_move(g_ub, g, 0, 1, rows * dim // 8, 0, 0)
    ti.data_move(i_ub, idx, 0, 1, 2, 0, 0)
    ti.vec_dup(8, blk, 0.0, 1, 8)
    k = ti.Scalar("int32")
    with ti.for_range(0, rows) as r:
        k.set_as(i_ub[r])
        with ti.for_range(0, dim) as c:
            blk[c].set_as(g_ub[r, c])
        ti.set_atomic_add(1)
        ti.data_move(out[k * dim], blk, 0, 1, 1, 0, 0)
        ti.set_atomic_add(0)
    build(ti, "scatter_add", [g, idx], [out])
    rng = np.random.default_rng(3)
    gv = rng.standard_normal((rows, dim)).astype(np.float32)
    iv = rng.integers(0, words, rows).astype(np.int32)
    iv[-1] = words - 1                           # the last row's block runs 16 bytes past the tensor
    res, = run(ti, {"g": gv, "idx": iv})
    ref = np.zeros((words, dim), np.float64)
    np.add.at(ref, iv, gv.astype(np.float64))
    np.testing.assert_allclose(res, ref, rtol=1e-6, atol=1e-6)


def test_store_past_the_allocation_padding_is_an_error():
    """A 200-byte GM tensor owns 256 bytes on the device (round32 + one block of padding): an 8-block
    store fits, a 9-block store is a tensor overflow."""
    ti = tik.Tik()
    y = ti.Tensor("float16", (100,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (144,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    with raises_tik(OutOfBounds, match=r"tensor overflow: .* needs 288 bytes .* 'y' \(200 B\) has only 200 B .*"
                                       r"\(256 B with its allocation's padding\)"):
        ti.data_move(y, ub, 0, 1, 9, 0, 0)


# ---------------------------------------------------------------------------------------------
# A one-block move into (or out of) a UB tensor smaller than a block: TIK places every UB
# tensor at a 32-byte boundary, so the rest of the block is that tensor's padding.

def test_one_block_move_into_a_one_element_ub_tensor():
    ti = tik.Tik()
    x = ti.Tensor("int16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int16", (16,), name="y", scope=tik.scope_gm)
    first = ti.Tensor("int16", (1,), name="first", scope=tik.scope_ubuf)
    row = ti.Tensor("int16", (16,), name="row", scope=tik.scope_ubuf)
    ti.data_move(first, x, 0, 1, 1, 0, 0)                  # 32 bytes into a 2-byte tensor
    s = ti.Scalar("int16")
    s.set_as(first[0])
    ti.vec_dup(16, row, s, 1, 8)
    ti.data_move(y, row, 0, 1, 1, 0, 0)
    build(ti, "first", [x], [y])
    out, = run(ti, {"x": np.arange(5, 21, dtype=np.int16)})
    assert np.array_equal(out, np.full(16, 5, np.int16))


def test_two_blocks_into_a_one_element_ub_tensor_is_an_error():
    ti = tik.Tik()
    x = ti.Tensor("int16", (32,), name="x", scope=tik.scope_gm)
    first = ti.Tensor("int16", (1,), name="first", scope=tik.scope_ubuf)
    with raises_tik(OutOfBounds, match=r"tensor overflow: .* needs 64 bytes .* 'first' \(2 B\) has only 2 B"):
        ti.data_move(first, x, 0, 1, 2, 0, 0)


# ---------------------------------------------------------------------------------------------
# A vec_<x> name whose instruction exists only in the legacy v<x> spelling says so.

def test_vec_name_of_a_legacy_only_instruction_points_to_the_legacy_api():
    from tbe_compat.tik.container import _MissingApi
    ti = tik.Tik()
    with pytest.raises(_MissingApi, match=r"tik.vec_maxs is not implemented; .* legacy tik.vmaxs.*Fix: call "
                                          r"tik_instance.vmaxs\(mask"):
        ti.vec_maxs
    with pytest.raises(_MissingApi, match=r"tik.vec_gatherb is not implemented; .* legacy tik.vgatherb.*Fix: call "
                                          r"tik_instance.vgatherb\(dst, src, offset, repeat_times, dst_blk_stride, "
                                          r"dst_rep_stride\)"):
        ti.vec_gatherb
    with pytest.raises(_MissingApi, match="tik.depthwise_conv is a TIK API this simulator does not implement yet"):
        ti.depthwise_conv
    with pytest.raises(_MissingApi, match="tik.vec_cbd is not implemented, nor is its instruction vcbd: .*saturate "
                                          "or wrap"):
        ti.vec_cbd


# ---------------------------------------------------------------------------------------------
# An int index keeps its dimension with length 1 (CANN 8.1 tik_tensor_._normalize_slice turns
# ``i`` into ``slice(i, i + 1, 1)``): ``s[idx, :, :]`` of an (n1, m, 16) tensor is (1, m, 16), the
# shape h_* operands must match (FlashAttention's block-wise row max).

def test_int_index_keeps_a_length_one_dimension():
    n1, m = 4, 32
    ti = tik.Tik()
    x = ti.Tensor("float16", (n1, m, 16), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (m, 16), name="y", scope=tik.scope_gm)
    s_ub = ti.Tensor("float16", (n1, m, 16), name="s_ub", scope=tik.scope_ubuf)
    acc = ti.Tensor("float16", (1, m, 16), name="acc", scope=tik.scope_ubuf)
    ti.data_move(s_ub, x, 0, 1, n1 * m, 0, 0)
    assert list(s_ub[2, :, :].shape) == [1, m, 16]
    assert list(s_ub[1, 3, 5].shape) == [1, 1, 1]
    assert list(s_ub[:, 0, :].shape) == [n1, 1, 16]
    ti.data_move(acc, s_ub, 0, 1, m, 0, 0)
    with ti.for_range(1, n1) as idx:
        ti.h_max(acc, acc, s_ub[idx, :, :])
    ti.data_move(y, acc, 0, 1, m, 0, 0)
    build(ti, "block_max", [x], [y])
    xv = np.random.default_rng(8).uniform(-5, 5, (n1, m, 16)).astype(np.float16)
    out, = run(ti, {"x": xv})
    np.testing.assert_array_equal(out, xv.max(0))


def test_h_op_shape_mismatch_names_both_shapes():
    ti = tik.Tik()
    a = ti.Tensor("float16", (4, 16), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf)
    with raises_tik(Exception, match=r"src1 and dst tensor should be the same shape, got \[16\] and \[1, 16\]"):
        ti.h_add(a[0, :], a[0, :], b)


# ---------------------------------------------------------------------------------------------
# CANN prod_force_se_a (supp_mode version) "copies" f32 data reinterpreted as f16 with
# vadds(x, 0). On saturation-mode chips every f16 half whose pattern is a NaN becomes 0 (and -0
# becomes +0), so the copy silently changes 1 in 32 low halves. The device does this without a
# word; the simulator computes the same numbers and records a "saturation" report at the line.

def _f16_copy_kernel(chip, use_vadds):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float32", (64,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (64,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 8, 0, 0)
    a16, b16 = a.reinterpret_cast_to("float16"), b.reinterpret_cast_to("float16")
    if use_vadds:
        ti.vadds(128, b16, a16, 0, 1, 1, 1, 8, 8)          # COPY_LINE
    else:
        ti.data_move(b16, a16, 0, 1, 8, 0, 0)
    ti.data_move(y, b, 0, 1, 8, 0, 0)
    return build(ti, "f16copy", [x], [y])


def _f32_with_nan_halves():
    u = (np.arange(64, dtype=np.uint32) << 23 >> 3) + 0x3F800000     # ordinary f32 values 1 .. 2
    u[[3, 10, 40]] = (u[[3, 10, 40]] & 0xFFFF0000) | np.array([0x7E00, 0x7C01, 0xFFFF], np.uint32)
    return u.view(np.float32)


@pytest.mark.parametrize("chip", ["Ascend310P3", "Ascend910"])
def test_f16_vadds_copy_of_f32_data_is_reported_on_saturation_chips(chip):
    import inspect
    x = _f32_with_nan_halves()
    ti = _f16_copy_kernel(chip, use_vadds=True)
    (y,) = run(ti, {"x": x.copy()})
    want = x.view(np.uint32).copy()
    want[[3, 10, 40]] &= 0xFFFF0000                                  # NaN halves written as 0
    np.testing.assert_array_equal(y.view(np.uint32), want)
    sat = [m for k, m in ti.tikdb.reports if k == "saturation"]
    line = next(i for i, t in enumerate(inspect.getsource(_f16_copy_kernel).splitlines())
                if "COPY_LINE" in t) + inspect.getsourcelines(_f16_copy_kernel)[1]
    assert len(sat) == 1 and "3 NaN f16 result(s) as 0" in sat[0] and f"test_corpus_regressions.py:{line}" in sat[0]
    assert "data move" in sat[0]


def test_f16_data_move_copy_keeps_bits_and_inf_nan_chip_keeps_nan():
    x = _f32_with_nan_halves()
    ti = _f16_copy_kernel("Ascend310P3", use_vadds=False)
    (y,) = run(ti, {"x": x.copy()})
    np.testing.assert_array_equal(y.view(np.uint32), x.view(np.uint32))
    assert ti.tikdb.reports == []
    ti = _f16_copy_kernel("Ascend910B1", use_vadds=True)             # inf_nan mode: NaN stays NaN, no report
    (y,) = run(ti, {"x": x.copy()})
    assert np.isnan(y.view(np.uint32).astype(np.uint16).view(np.float16)[[3, 10, 40]]).all()
    assert not [k for k, _ in ti.tikdb.reports if k == "saturation"]


# ---------------------------------------------------------------------------------------------
# CANN prod_force_se_a (4-atom path, nnei tail % 4 == 2) reads a neighbour index past the end of
# its nlist input: the bytes come from the host's GM allocation padding (unknown; modelled as 0
# and reported as an uninitialised read), and the kernel stores a force there. The decisive
# report came after 100 benign ones (reads of unwritten lanes a transpose discards), so the
# capped `tikdb.reports` hid it. Reports past the cap are counted, and the list says so.

def _noisy_overread_kernel(noise):
    ti = tik.Tik()
    x = ti.Tensor("int32", (12,), name="x", scope=tik.scope_gm)          # 48 B: 16 B of padding after
    y = ti.Tensor("int32", (16,), name="y", scope=tik.scope_gm)
    junk = ti.Tensor("int32", (8,), name="junk", scope=tik.scope_ubuf)     # never written
    acc = ti.Tensor("int32", (8,), name="acc", scope=tik.scope_ubuf)
    ti.vec_dup(8, acc, 0, 1, 8)
    with ti.for_range(0, noise):
        ti.vadd(8, acc, acc, junk, 1, 1, 1, 1, 8, 8, 8)                      # benign-looking noise
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    one = ti.Tensor("int32", (16,), name="one", scope=tik.scope_ubuf)
    ti.vec_dup(16, one, 1, 1, 8)
    ti.data_move(ub, x, 0, 1, 2, 0, 0)                                      # 2 blocks: reads 4 past x
    ti.vadd(16, ub, ub, one, 1, 1, 1, 1, 8, 8, 8)                           # OVERREAD_USE
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    return build(ti, "overread", [x], [y])


def _overread_site():
    import inspect
    src, first = inspect.getsourcelines(_noisy_overread_kernel)
    return f"test_corpus_regressions.py:{first + next(i for i, t in enumerate(src) if 'OVERREAD_USE' in t)}"


def test_reports_past_the_cap_are_counted_and_announced():
    from tbe_compat.tik.debug import tik_machine_options
    site = _overread_site()
    ti = _noisy_overread_kernel(150)
    (y,) = run(ti, {"x": np.arange(12, dtype=np.int32)})
    np.testing.assert_array_equal(y, np.r_[np.arange(1, 13), [1, 1, 1, 1]].astype(np.int32))
    reps = ti.tikdb.reports
    assert ti.tikdb.reports_dropped == 51 and len(reps) == 101                  # 150 noise + 1 decisive - 100
    kind, msg = reps[-1]
    assert kind == "reports-dropped" and msg.startswith("51 more checker report(s) were not recorded")
    assert "max_reports=" in msg
    assert not any(site in m for _, m in reps[:-1])                         # the decisive one is the dropped one
    ti.tikdb.options = tik_machine_options(max_reports=1000)
    run(ti, {"x": np.arange(12, dtype=np.int32)})
    assert ti.tikdb.reports_dropped == 0
    assert any(k == "uninitialized" and site in m for k, m in ti.tikdb.reports)


def test_reports_under_the_cap_have_no_dropped_entry():
    ti = _noisy_overread_kernel(3)
    run(ti, {"x": np.arange(12, dtype=np.int32)})
    assert ti.tikdb.reports_dropped == 0
    assert not any(k == "reports-dropped" for k, _ in ti.tikdb.reports)


# ---------------------------------------------------------------------------------------------
# CANN's prod_env_mat_a (DeePMD) keeps its neighbour count in a uint32 Scalar and skips atoms with
# `if_scope(count != -1)` (the host writes -1); its Ascend710 UT compiles it. The int immediate converts to
# the unsigned dtype as in C (-1 -> 0xFFFFFFFF). The same kernel stages int32 nlist entries in a float32 UB
# block with `f32_block[i].set_as(i32_list[j])` before moving the block to the int32 output: same-width
# elements are copied as bits (SET_AS_ELEMENT_BITS, tik_core.md).

def _skip_kernel(value):
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    count = ti.Scalar("uint32", name="count", init_value=7)
    count.set_as(ub[0])
    with ti.if_scope(count != -1):
        ub[1].set_as(11)
    with ti.else_scope():
        ub[1].set_as(22)
    with ti.if_scope(count > -2):                 # > 0xFFFFFFFE
        ub[2].set_as(33)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "skip", [x], [y])
    return run(ti, {"x": np.array([value, 0, 0, 0, 0, 0, 0, 0], np.int32)})[0]


def test_unsigned_scalar_compared_with_a_negative_immediate_converts_it_as_c():
    assert _skip_kernel(-1).tolist()[:3] == [-1, 22, 33]
    assert _skip_kernel(5).tolist()[:3] == [5, 11, 0]


def test_unsigned_scalar_compared_with_an_immediate_beyond_the_signed_range_is_refused():
    ti = tik.Tik()
    s = ti.Scalar("uint32", name="s", init_value=1)
    with raises_tik(IllegalOperand, match=r"the immediate -2147483649 \(operand of a comparison\) does not fit "
                                          r"uint32"):
        s != -2 ** 31 - 1
    u8 = ti.Scalar("uint8", name="u8", init_value=1)
    with raises_tik(IllegalOperand, match="does not fit uint8"):
        u8 == -129


def test_tensor_element_set_as_from_another_dtype_of_the_same_width_copies_bits():
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float16", (16,), name="z", scope=tik.scope_gm)
    src = ti.Tensor("int32", (8,), name="src", scope=tik.scope_ubuf)
    stage = ti.Tensor("float32", (8,), name="stage", scope=tik.scope_ubuf)
    half = ti.Tensor("float16", (16,), name="half", scope=tik.scope_ubuf)
    ti.data_move(src, x, 0, 1, 1, 0, 0)
    ti.vec_dup(16, half, 0, 1, 8)
    for i in range(8):
        stage[i].set_as(src[7 - i])
    half[0].set_as(src[1])                        # other width: converted as a value
    ti.data_move(y, stage, 0, 1, 1, 0, 0)
    ti.data_move(z, half, 0, 1, 1, 0, 0)
    build(ti, "stage", [x], [y, z])
    xs = np.array([-1, 37, 2 ** 30, -5, 0x7F800001, 7, 0, 123456], np.int32)
    got_y, got_z = run(ti, {"x": xs})
    assert np.array_equal(got_y.view(np.int32), xs[::-1])
    assert got_z[0] == np.float16(37)


def test_tensor_element_set_as_from_a_multi_element_view_copies_its_first_element():
    # SET_AS_TENSOR_FIRST_ELEMENT (tik_core.md): the Tensor set_as reference uses the first element
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    src = ti.Tensor("int32", (8,), name="src", scope=tik.scope_ubuf)
    stage = ti.Tensor("float32", (8,), name="stage", scope=tik.scope_ubuf)
    ti.data_move(src, x, 0, 1, 1, 0, 0)
    ti.vec_dup(8, stage, 0.0, 1, 8)
    stage[0].set_as(src[2:4])                     # same width, other dtype: bits of src[2]
    ti.data_move(y, stage, 0, 1, 1, 0, 0)
    build(ti, "first", [x], [y])
    xs = np.array([1, 2, 0x7F800001, 4, 5, 6, 7, 8], np.int32)
    got, = run(ti, {"x": xs})
    assert got.view(np.int32)[0] == 0x7F800001


# ---------------------------------------------------------------------------------------------
# CANN's YOLO detection-output kernels score a box with one f16 vec_mul (thresholded obj x class
# probability) and keep it with vcmpvs_gt(score, 0.5). A product just above 0.5 in exact
# arithmetic (0x393d x 0x3a1c = 0.500041) rounds to 0.5 and fails the strict compare, so the
# kernel drops the box; a float64 reference keeps it. Pinned here with pairs straddling 0.5.

def test_f16_product_rounding_onto_a_threshold_fails_the_strict_compare():
    rng = np.random.default_rng(45)
    a = rng.uniform(0.5, 1.0, 128).astype(np.float16)
    b = (0.5 / a.astype(np.float64)).astype(np.float16)
    b = (b.view(np.uint16) + rng.integers(-2, 3, 128).astype(np.uint16)).view(np.float16)
    a[:2] = np.array([0x393D, 0x3AE7], np.uint16).view(np.float16)     # the two corpus pairs
    b[:2] = np.array([0x3A1C, 0x38A3], np.uint16).view(np.float16)
    exact = a.astype(np.float64) * b.astype(np.float64)                # exact: 22 significant bits
    score = exact.astype(np.float16)                                   # one RNE rounding
    keep = score > np.float16(0.5)
    assert exact[0] > 0.5 and not keep[0] and exact[1] > 0.5 and not keep[1]
    assert np.any((exact > 0.5) & ~keep) and np.any(keep) and np.any(exact < 0.5)

    def body(ti, ub):
        ti.vec_mul(128, ub["p"], ub["a"], ub["b"], 1, 8, 8, 8)
        ti.vcmpvs_gt(ub["m"], ub["p"], 0.5, 1, 1, 8)

    out = vec_kernel({"a": a, "b": b, "p": np.full(128, -1, np.float16), "m": np.full(16, 0xAAAA, np.uint16)},
                     body, chip="Ascend310P3")
    assert np.array_equal(out["p"].view(np.uint16), score.view(np.uint16))
    bits = np.unpackbits(out["m"][:8].view(np.uint8), bitorder="little").astype(bool)
    assert np.array_equal(bits, keep)


# ---------------------------------------------------------------------------------------------
# CANN helper code tells run-time TIK values from Python numbers through CANN's own module paths:
# ``hasattr(tik, "tik_lib")`` picks its "C7X" branch, then ``isinstance(v, (tik.tik_lib.tik_expr.Expr,
# tik.api.tik_scalar.Scalar, tik.api.tik_scalar.InputScalar, tik.api.tik_tensor.Tensor))``
# (impl/ascend/_check.py, used by grid_assign_positive and normalize_batch; dilation2d_backprop_*).
# Without those paths the helper stopped with "not supported tik version".

def _import_tik(path):
    import importlib
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                      # te.tik's deprecation notice
        mod = importlib.import_module(path)
    return mod.tik if path == "impl.util.platform_adapter" else mod


def _is_tik_dynamic(v, t):
    """The helper's test, re-stated."""
    if not hasattr(t, "tik_lib"):
        raise RuntimeError("not supported tik version")
    return isinstance(v, (t.tik_lib.tik_expr.Expr, t.api.tik_scalar.Scalar, t.api.tik_scalar.InputScalar,
                          t.api.tik_tensor.Tensor))


def _rows_kernel(t, count_kind):
    """Row r (of 8 rows of 8 int32) = r + 1 for r < count, else 0; the helper unrolls a Python count
    and emits a for_range for a run-time one."""
    ti = t.Tik()
    y = ti.Tensor("int32", (64,), name="y", scope=t.scope_gm)
    ub = ti.Tensor("int32", (64,), name="ub", scope=t.scope_ubuf)
    inputs = []
    if count_kind == "int":
        count = 3
    elif count_kind == "input_scalar":
        count = ti.InputScalar("int32", name="n")
        inputs = [count]
    else:
        count = ti.Scalar("int32", name="cnt", init_value=3)
    ti.vector_dup(64, ub, 0, 1, 1, 8)
    assert _is_tik_dynamic(ub, t) and not _is_tik_dynamic(3, t)
    if _is_tik_dynamic(count, t):
        with ti.for_range(0, count) as r:
            assert _is_tik_dynamic(r, t) and _is_tik_dynamic(r + 1, t)
            ti.vector_dup(8, ub[r * 8], r + 1, 1, 1, 8)
    else:
        for r in range(count):
            ti.vector_dup(8, ub[r * 8], r + 1, 1, 1, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "rows", inputs, [y])
    return ti


@pytest.mark.parametrize("path", ["tbe.tik", "te.tik", "impl.util.platform_adapter"])
@pytest.mark.parametrize("count_kind", ["int", "scalar", "input_scalar"])
def test_cann_module_paths_tell_run_time_values_from_numbers(path, count_kind):
    t = _import_tik(path)
    assert t.tik_lib.tik_expr.Expr is t.Expr and t.api.tik_tensor.Tensor is t.Tensor
    assert t.api.tik_scalar.Scalar is t.Scalar and t.api.tik_scalar.InputScalar is t.InputScalar
    ti = _rows_kernel(t, count_kind)
    out, = run(ti, {"n": 3} if count_kind == "input_scalar" else {})
    assert np.array_equal(out, np.repeat(np.array([1, 2, 3, 0, 0, 0, 0, 0], np.int32), 8))


def test_cann_module_paths_import_forms():
    from te.tik.api.tik_tensor import Tensor
    from tbe.tik.api.tik_scalar import InputScalar, Scalar
    from tbe.tik.tik_lib.tik_expr import Expr
    assert (Tensor, Scalar, InputScalar, Expr) == (tik.Tensor, tik.Scalar, tik.InputScalar, tik.Expr)


def test_run_time_count_past_the_buffer_is_an_error_at_the_kernel_line():
    """The same helper with a run-time count of 9 rows writes past the 8-row UB tensor."""
    ti = _rows_kernel(tik, "input_scalar")
    with raises_tik(OutOfBounds, match=r"test_corpus_regressions\.py:\d+"):
        run(ti, {"n": 9})


# ---------------------------------------------------------------------------------------------
# CANN yolo_boxes_encode fills its clamp bound with vector_dup(64, t, v, 80, 1, 4) on f32: a
# repeat stride of 4 blocks under a full 8-block mask makes the repeats overlap, so 80 repeats
# write (80 - 1) * 32 + 64 = 2592 elements, not 5120; its later vmax over more elements reads the
# unwritten rest. The checker must report that read at the vmax (operand src1) and the covered
# part must be exact.

def _overlapping_dup_kernel(n_max):
    ti = tik.Tik()
    x = ti.Tensor("float32", (n_max,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n_max,), name="y", scope=tik.scope_gm)
    src = ti.Tensor("float32", (n_max,), name="src", scope=tik.scope_ubuf)
    bound = ti.Tensor("float32", (5120,), name="bound", scope=tik.scope_ubuf)
    ti.data_move(src, x, 0, 1, n_max // 8, 0, 0)
    ti.vector_dup(64, bound, 1.0, 80, 1, 4)
    ti.vmax(64, src, src, bound, n_max // 64, 1, 1, 1, 8, 8, 8)
    ti.data_move(y, src, 0, 1, n_max // 8, 0, 0)
    return build(ti, "dup_overlap", [x], [y])


@pytest.mark.parametrize("n_max, unwritten", [(2560, False), (3072, True)])
def test_vector_dup_overlapping_repeats_cover_only_their_extent(n_max, unwritten):
    x = np.random.default_rng(5).uniform(-2, 2, n_max).astype(np.float32)
    ti = _overlapping_dup_kernel(n_max)
    out, = run(ti, {"x": x})
    covered = min(n_max, 2592)
    np.testing.assert_array_equal(np.asarray(out)[:covered], np.maximum(x[:covered], np.float32(1.0)))
    reads = [r for r in ti.tikdb.reports if r[0] == "uninitialized"]
    if unwritten:
        assert reads and all("pto.ub.vmax operand src1" in r[1] and "tik.vmax" in r[1] for r in reads)
    else:
        assert reads == []


# ---------------------------------------------------------------------------------------------
# An expression built in a Python loop (``e = e + e``: in_top_k-style index arithmetic) is a DAG that
# reaches its first node by 2**n paths. Tracing (integer checks, loop-bound and condition analysis,
# run-time GM sizes) and the compiled kernel must each look at a shared node once.

def test_expressions_built_in_a_python_loop_trace_and_run_in_linear_time():
    doublings = 48
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    dyn = n
    for _ in range(doublings):
        dyn = (dyn + dyn) % 97                      # known at launch: sizes the GM tensor x
    x = ti.Tensor("int32", (dyn + 8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    s = ti.Scalar("int32", name="s")
    s.set_as(ub[0])
    e = s
    for _ in range(doublings):
        e = (e + e) % 1000003
    acc = ti.Scalar("int32", name="acc", init_value=0)
    with ti.for_range(0, e % 5 + 1) as i:           # a loop bound and a condition from the DAG
        with ti.if_scope(e % 2 == 0):
            acc.set_as(acc + i)
    r = ti.Scalar("int32", name="r")
    r.set_as(e)
    ub[1].set_as(r)
    ub[2].set_as(acc)
    ub[3].set_as(ub[e % 3])                         # an index from the DAG
    with ti.if_scope(e % 7 == 100):
        ub[4].set_as(1)
    with ti.elif_scope(e % 2 == 1):                  # an elif condition from the DAG
        ub[4].set_as(2)
    with ti.else_scope():
        ub[4].set_as(3)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "dag", [x, n], [y])
    size = 5
    for _ in range(doublings):
        size = (size + size) % 97
    for first in (3, 4):
        v = first
        for _ in range(doublings):
            v = (v + v) % 1000003
        acc_ref = sum(range(v % 5 + 1)) if v % 2 == 0 else 0
        out, = run(ti, {"x": np.arange(first, first + size + 8, dtype=np.int32), "n": 5})
        assert (out[1], out[2], out[3]) == (v, acc_ref, (first, v, acc_ref)[v % 3])   # ub[1], ub[2] set above
        assert out[4] == (2 if v % 2 else 3)


# ---------------------------------------------------------------------------------------------
# A Scalar GM offset that goes negative (CANN one_hot's axis-0 path moves a row from
# ``y_gm[row * n + j * part - offset]``, which is -offset for row 0): the error must name the
# tensor the kernel indexed and say the offset is negative, not blame the GM region whose
# guard gap the start address happens to fall in.

def _scalar_offset_kernel(start):
    ti = tik.Tik()
    a = ti.Tensor("int32", (64,), name="a", scope=tik.scope_gm)
    b = ti.Tensor("int32", (64,), name="b", scope=tik.scope_gm)
    y = ti.Tensor("int32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (64,), name="ub", scope=tik.scope_ubuf)
    s = ti.Scalar("int32", init_value=start)
    ti.data_move(ub, b[s], 0, 1, 7, 0, 0)
    ti.data_move(y, ub, 0, 1, 7, 0, 0)
    return build(ti, "scalar_offset", [a, b], [y])


def _offset_feed():
    return {"a": np.arange(64, dtype=np.int32), "b": np.arange(100, 164, dtype=np.int32)}


def test_scalar_gm_offset_in_range_runs():
    out, = run(_scalar_offset_kernel(8), _offset_feed())
    assert np.array_equal(out[:56], np.arange(108, 164, dtype=np.int32))


def test_negative_scalar_gm_offset_names_the_indexed_tensor():
    ti = _scalar_offset_kernel(-8)
    with raises_tik(OutOfBounds, match=r"GM bytes \[-32, 192\) of region 'b': the access starts 32 B before "
                                       r"the region's first byte \(a negative offset into it\)"):
        run(ti, _offset_feed())


# ---------------------------------------------------------------------------------------------
# A Python *list* as a tensor index means one index per dimension, like a tuple (named choice
# LIST_INDEX_IS_TUPLE): CANN's cum_computer (cumsum_d / cumprod_d) builds `idx = [o, e, m * len]`
# and moves `gm[idx]`, and those ops pass their UT on Ascend910/310/710.

def _list_index_kernel(rows, cols, width):
    ti = tik.Tik()
    x = ti.Tensor("float32", (rows, cols, width), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (rows, cols, width), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (width,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, rows) as r:
        with ti.for_range(0, cols) as c:
            src = [r, cols - 1 - c, 0]                  # reversed along the middle axis
            ti.data_move(ub, x[src], 0, 1, width // 8, 0, 0)
            ti.vec_adds(width, ub, ub, 1.0, 1, 8, 8)
            ti.data_move(y[[r, c, 0]], ub, 0, 1, width // 8, 0, 0)
    return build(ti, "list_index", [x], [y])


def test_list_index_is_one_index_per_dimension():
    ti = _list_index_kernel(3, 4, 16)
    xv = np.random.default_rng(74).uniform(-5, 5, (3, 4, 16)).astype(np.float32)
    out, = run(ti, {"x": xv})
    np.testing.assert_array_equal(out, xv[:, ::-1, :] + np.float32(1))


def test_list_index_element_set_and_view_shape():
    ti = tik.Tik()
    ub = ti.Tensor("int32", (2, 3, 8), name="ub", scope=tik.scope_ubuf)
    assert list(ub[[1, 2, 0]].shape) == [1, 1, 1]
    assert list(ub[[1, slice(0, 2), 0]].shape) == [1, 2, 1]


def test_list_index_of_the_wrong_length_is_refused():
    ti = tik.Tik()
    ub = ti.Tensor("float32", (2, 3, 8), name="ub", scope=tik.scope_ubuf)
    with raises_tik(Exception, match=r"length of index \(2\) should be equal to the dimension of Tensor \(3\)"):
        ub[[1, 2]]


def test_one_index_in_a_list_or_tuple_is_a_flat_index():
    """TIK's ``__getitem__`` counts the indices of a tuple or list: one index on a multi-dimensional
    tensor is flat, however it is spelled."""
    ti = tik.Tik()
    ub = ti.Tensor("float32", (4, 8), name="ub", scope=tik.scope_ubuf)
    assert ub[[5]].offset == ub[(5,)].offset == ub[5].offset == 5
    assert list(ub[[slice(8, 16)]].shape) == [8]
