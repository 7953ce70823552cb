"""Kernels of our own, written in the style of real TIK operators, for data-movement patterns
the public corpus shows rarely or not at all: data_move_pad with unaligned rows and padding,
multi-core splits with tails (uneven core shares, double-buffered chunk loops), atomic
accumulation of f16 partial results across cores (910B), InputScalar tiling with
if/elif/else. Each runs unchanged through the facade and matches a numpy reference."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik, run

BLOCK = 32


# ---------------------------------------------------------------------------------------------
# 1. data_move_pad: rows of an unaligned width, scaled, written back unaligned (910B)

def scale_rows_pad(shape, scale, kernel_name="scale_rows_pad"):
    """y = x * scale for an ND (rows, cols) f16 tensor whose rows are not 32-byte multiples:
    each row lands 32-byte aligned in UB (data_move_pad), the padded tail of every UB row is
    filled with `padding_value` and stays out of the output."""
    rows, cols = shape
    ti = tik.Tik()
    x = ti.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (rows, cols), name="y", scope=tik.scope_gm)
    row_elems = (cols * 2 + BLOCK - 1) // BLOCK * BLOCK // 2
    ub = ti.Tensor("float16", (rows, row_elems), name="ub", scope=tik.scope_ubuf)
    ti.data_move_pad(ub, x, rows, cols * 2, 0, 0, right_padding=0, left_padding=0, padding_value=None)
    total = rows * row_elems
    repeat = total // 128
    if repeat:
        ti.vec_muls(128, ub, ub, scale, repeat, 8, 8)
    if total % 128:
        ti.vec_muls(total % 128, ub[repeat * 128], ub[repeat * 128], scale, 1, 8, 8)
    ti.data_move_pad(y, ub, rows, cols * 2, 0, 0)
    ti.BuildCCE(kernel_name=kernel_name, inputs=[x], outputs=[y])
    return ti


@pytest.mark.parametrize("shape", [(5, 37), (3, 16), (8, 9)])
def test_data_move_pad_unaligned_rows(shape):
    set_current_compile_soc_info("Ascend910B2")
    ti = scale_rows_pad(shape, 0.5)
    x = np.random.default_rng(1).uniform(-8, 8, shape).astype(np.float16)
    y, = run(ti, {"x": x})
    np.testing.assert_array_equal(y, (x.astype(np.float32) * np.float16(0.5)).astype(np.float16))


def left_pad_kernel(n, lp, rp, value):
    """One burst of n f16 elements with `lp` elements of `value` before and `rp` after."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    width = (lp + n + rp + 15) // 16 * 16
    y = ti.Tensor("float16", (width,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (width,), name="ub", scope=tik.scope_ubuf)
    ti.data_move_pad(ub, x, 1, n * 2, 0, 0, right_padding=rp, left_padding=lp, padding_value=value)
    ti.data_move(y, ub, 0, 1, width // 16, 0, 0)
    ti.BuildCCE(kernel_name="left_pad", inputs=[x], outputs=[y])
    return ti


def test_data_move_pad_left_and_right_padding():
    set_current_compile_soc_info("Ascend910B2")
    n, lp, rp, value = 10, 3, 2, -1.5
    ti = left_pad_kernel(n, lp, rp, value)
    x = np.arange(1, n + 1, dtype=np.float16)
    y, = run(ti, {"x": x})
    assert np.array_equal(y[:lp], np.full(lp, value, np.float16))
    assert np.array_equal(y[lp:lp + n], x)
    assert np.array_equal(y[lp + n:], np.full(16 - lp - n, value, np.float16))   # right pad + filler


def test_data_move_pad_padding_value_is_an_immediate_of_the_data_range():
    set_current_compile_soc_info("Ascend910B2")
    ti = left_pad_kernel(10, 1, 1, 65504.0)               # the largest finite f16 is in range
    y, = run(ti, {"x": np.arange(1, 11, dtype=np.float16)})
    assert y[0] == 65504 and y[11] == 65504
    with raises_tik(IllegalOperand, match=r"padding_value 70000.0 is outside the finite range of float16"):
        left_pad_kernel(10, 1, 1, 70000.0)
    with raises_tik(IllegalOperand, match=r"padding_value should be an int or float immediate, got str"):
        left_pad_kernel(10, 1, 1, "0")
    ti = tik.Tik()
    x = ti.Tensor("int16", (16,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("int16", (16,), name="ub", scope=tik.scope_ubuf)
    for bad in (2.5, 32768):
        with raises_tik(IllegalOperand, match=rf"padding_value {bad} is not an integer in the range of int16"):
            ti.data_move_pad(ub, x, 1, 20, 0, 0, right_padding=2, padding_value=bad)


def test_data_move_pad_takes_a_numpy_scalar_padding_value():
    """A numpy scalar is its Python number (np.float16(-0.0) keeps its sign); CANN 8.1 TIK refuses it (fix451:
    a Cann81RuleWarning, PADDING_VALUE_CANN81_WARN, once per call site)."""
    from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
    set_current_compile_soc_info("Ascend910B2")
    _CANN81_WARNED.clear()
    with pytest.warns(Cann81RuleWarning, match=r"padding_value=np.float16\(-0.0\), a numpy float16.*Fix: pass a "
                                               r"Python number: padding_value=-0.0"):
        ti = left_pad_kernel(10, 1, 1, np.float16(-0.0))
    y, = run(ti, {"x": np.arange(1, 11, dtype=np.float16)})
    assert np.signbit(y[0]) and y[0] == 0 and np.signbit(y[11])
    ti = left_pad_kernel(10, 1, 1, np.int32(7))
    y, = run(ti, {"x": np.arange(1, 11, dtype=np.float16)})
    assert y[0] == 7 and y[11] == 7
    _CANN81_WARNED.clear()

def test_data_move_pad_is_not_on_ascend310():
    set_current_compile_soc_info("Ascend310")
    with raises_tik(UnsupportedOp, match=r"tik.data_move_pad .*not supported on Ascend310"):
        scale_rows_pad((4, 37), 2.0)


# ---------------------------------------------------------------------------------------------
# 2. multi-core split with uneven core shares and a double-buffered chunk loop with a tail

def relu_plus_one(rows, cols, core_num=8, chunk_rows=3):
    """y = relu(x) + 1 on (rows, cols) f16, rows split over `core_num` cores: every core but the
    last takes ceil(rows / core_num) rows, the last takes the rest; each core works in chunks
    of `chunk_rows` rows (thread_num=2) plus a tail chunk."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (rows, cols), name="y", scope=tik.scope_gm)
    per_core = (rows + core_num - 1) // core_num
    used = (rows + per_core - 1) // per_core
    last_rows = rows - (used - 1) * per_core

    def process(first_row, nrows):
        loops, tail = divmod(nrows, chunk_rows)

        def chunk(row, n):
            ub = ti.Tensor("float16", (chunk_rows, cols), name="ub", scope=tik.scope_ubuf)
            ti.data_move(ub, x[row, 0], 0, 1, n * cols // 16, 0, 0)
            elems = n * cols
            rep = elems // 128
            if rep:
                ti.vec_relu(128, ub, ub, rep, 8, 8)
                ti.vec_adds(128, ub, ub, 1.0, rep, 8, 8)
            if elems % 128:
                ti.vec_relu(elems % 128, ub[rep * 128], ub[rep * 128], 1, 8, 8)
                ti.vec_adds(elems % 128, ub[rep * 128], ub[rep * 128], 1.0, 1, 8, 8)
            ti.data_move(y[row, 0], ub, 0, 1, n * cols // 16, 0, 0)

        if loops:
            with ti.for_range(0, loops, thread_num=2 if loops > 1 else 1) as i:    # (TIK: >= 2 iterations)
                chunk(first_row + i * chunk_rows, chunk_rows)
        if tail:
            chunk(first_row + loops * chunk_rows, tail)

    with ti.for_range(0, used, block_num=used) as core:
        with ti.if_scope(core < used - 1):
            process(core * per_core, per_core)
        with ti.else_scope():
            process((used - 1) * per_core, last_rows)
    ti.BuildCCE(kernel_name="relu_plus_one", inputs=[x], outputs=[y])
    return ti


@pytest.mark.parametrize("rows,cols,cores", [(29, 16, 8), (8, 48, 8), (50, 32, 6)])
def test_multicore_split_with_tails(rows, cols, cores):
    ti = relu_plus_one(rows, cols, cores)
    x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float16)
    y, = run(ti, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0) + np.float16(1))


# ---------------------------------------------------------------------------------------------
# 3. cores atomically add f16 partial results into one output (910B)

def partial_sums(cores, n):
    """out[j] = sum_c x[c, j] * w[c]: core c scales its row by its weight and adds it into the
    zero-initialised f16 output with set_atomic_add (f16)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (cores, n), name="x", scope=tik.scope_gm)
    w = ti.Tensor("float16", (cores, 16), name="w", scope=tik.scope_gm)
    out = ti.Tensor("float16", (n,), name="out", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, cores, block_num=cores) as c:
        ub = ti.Tensor("float16", (n,), name="ub", scope=tik.scope_ubuf)
        w_ub = ti.Tensor("float16", (16,), name="w_ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[c, 0], 0, 1, n // 16, 0, 0)
        ti.data_move(w_ub, w[c, 0], 0, 1, 1, 0, 0)
        wc = ti.Scalar("float16", init_value=w_ub[0])
        ti.vec_muls(128, ub, ub, wc, n // 128, 8, 8)
        ti.set_atomic_add(2)
        ti.data_move(out, ub, 0, 1, n // 16, 0, 0)
        ti.set_atomic_add(0)
    ti.BuildCCE(kernel_name="partial_sums", inputs=[x, w], outputs=[out])
    return ti


def test_atomic_add_f16_across_cores():
    set_current_compile_soc_info("Ascend910B2")
    cores, n = 6, 256
    ti = partial_sums(cores, n)
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, (cores, n)).astype(np.float16)
    w = np.repeat(rng.uniform(0.5, 1.5, (cores, 1)).astype(np.float16), 16, 1)
    out, = run(ti, {"x": x, "w": w})
    ref = np.zeros(n, np.float16)                   # cores add in order 0..cores-1, each add rounded to f16
    for c in range(cores):
        part = (x[c].astype(np.float32) * w[c, 0].astype(np.float32)).astype(np.float16)
        ref = (ref.astype(np.float64) + part.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(out, ref)


def test_atomic_add_f16_is_not_on_ascend310():
    set_current_compile_soc_info("Ascend310")
    with raises_tik(UnsupportedOp, match=r"tik.set_atomic_add with float16 is not supported on Ascend310"):
        partial_sums(2, 128)


# ---------------------------------------------------------------------------------------------
# 4. InputScalar tiling: the element count arrives at run time; if/elif/else picks the path

MAX_N = 4096


def clip_scale(scale, lo, hi):
    """y = min(max(x * scale, lo), hi) for the first n elements, n an InputScalar; three paths:
    n <= 128 (one masked repeat), n a multiple of 128 (full repeats), else full repeats plus a
    masked tail. Bursts are computed from n at run time."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (MAX_N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (MAX_N,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (MAX_N,), name="ub", scope=tik.scope_ubuf)
    blocks = (n + 15) // 16
    ti.data_move(ub, x, 0, 1, blocks, 0, 0)

    def body(mask, offset, repeat):
        ti.vec_muls(mask, ub[offset], ub[offset], scale, repeat, 8, 8)
        ti.vmaxs(mask, ub[offset], ub[offset], lo, repeat, 1, 1, 8, 8)       # legacy 9-argument forms
        ti.vmins(mask, ub[offset], ub[offset], hi, repeat, 1, 1, 8, 8)

    full = ti.Scalar("int32", name="full", init_value=n // 128)
    tail = ti.Scalar("int32", name="tail", init_value=n % 128)
    with ti.if_scope(n <= 128):
        body(n, 0, 1)
    with ti.elif_scope(tail == 0):
        body(128, 0, full)
    with ti.else_scope():
        body(128, 0, full)
        body(tail, full * 128, 1)
    ti.data_move(y, ub, 0, 1, blocks, 0, 0)
    ti.BuildCCE(kernel_name="clip_scale", inputs=[x], outputs=[y], flowtable=[n])
    return ti


def test_inputscalar_tiling_if_elif_else():
    set_current_compile_soc_info("Ascend910B2")        # vmaxs/vmins are v200+ instructions
    ti = clip_scale(1.5, -2.0, 3.0)
    x = np.random.default_rng(3).uniform(-4, 4, MAX_N).astype(np.float16)
    for n in (100, 128, 512, 1000, 4096):
        y, = run(ti, {"x": x, "n": n})
        ref = np.clip((x[:n].astype(np.float32) * np.float16(1.5)).astype(np.float16), -2, 3)
        np.testing.assert_array_equal(y[:n], ref, err_msg=f"n={n}")
