"""Kernels of our own, in the style of real TIK operators, for vector patterns the public
corpus shows rarely or not at all: compare-to-bitmask + select (vec_cmpv + vec_sel mode 0 on
Ascend310, modes 1/2 on 910B), conversions with every rounding mode, whole-tensor h_*
reductions (row statistics), reductions with index (vec_reduce_max cal_index) and long
vec_reduce_add. Each matches a numpy reference."""
import numpy as np
import pytest

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import run


# ---------------------------------------------------------------------------------------------
# 1. y = x > t ? x : t, per repeat: vec_cmpv_gt to 128 bits, then vec_sel mode 0 (Ascend310)

def max_with_threshold(n):
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    t = ti.Tensor("float16", (n,), name="t", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    x_ub = ti.Tensor("float16", (n,), name="x_ub", scope=tik.scope_ubuf)
    t_ub = ti.Tensor("float16", (n,), name="t_ub", scope=tik.scope_ubuf)
    y_ub = ti.Tensor("float16", (n,), name="y_ub", scope=tik.scope_ubuf)
    bits = ti.Tensor("uint16", (8,), name="bits", scope=tik.scope_ubuf)
    ti.data_move(x_ub, x, 0, 1, n // 16, 0, 0)
    ti.data_move(t_ub, t, 0, 1, n // 16, 0, 0)
    with ti.for_range(0, n // 128) as r:
        ti.vec_cmpv_gt(bits, x_ub[r * 128], t_ub[r * 128], 1, 8, 8)
        ti.vec_sel(128, 0, y_ub[r * 128], bits, x_ub[r * 128], t_ub[r * 128], 1, 8, 8, 8)
    ti.data_move(y, y_ub, 0, 1, n // 16, 0, 0)
    ti.BuildCCE(kernel_name="max_with_threshold", inputs=[x, t], outputs=[y])
    return ti


def test_cmpv_sel_mode0_per_repeat():
    n = 512
    ti = max_with_threshold(n)
    rng = np.random.default_rng(0)
    x = rng.uniform(-4, 4, n).astype(np.float16)
    t = rng.uniform(-1, 1, n).astype(np.float16)
    x[::7] = t[::7]                                     # ties take t
    y, = run(ti, {"x": x, "t": t})
    np.testing.assert_array_equal(y, np.where(x > t, x, t))


# ---------------------------------------------------------------------------------------------
# 2. leaky relu with a bitmask over many repeats: vec_cmpv_ge against a zero vector (src1 rep
#    stride 0), then vec_sel mode 2 (tensor/tensor) and mode 1 (tensor/scalar) (910B, f32)

def leaky_relu_sel(n, alpha):
    ti = tik.Tik()
    x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (n,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float32", (n,), name="z", scope=tik.scope_gm)
    x_ub = ti.Tensor("float32", (n,), name="x_ub", scope=tik.scope_ubuf)
    ax_ub = ti.Tensor("float32", (n,), name="ax_ub", scope=tik.scope_ubuf)
    y_ub = ti.Tensor("float32", (n,), name="y_ub", scope=tik.scope_ubuf)
    zero = ti.Tensor("float32", (64,), name="zero", scope=tik.scope_ubuf)
    bits = ti.Tensor("uint32", (n // 32,), name="bits", scope=tik.scope_ubuf)
    rep = n // 64
    ti.data_move(x_ub, x, 0, 1, n // 8, 0, 0)
    ti.vec_dup(64, zero, 0.0, 1, 8)
    ti.vec_cmpv_ge(bits, x_ub, zero, rep, 8, 0)
    ti.vec_muls(64, ax_ub, x_ub, alpha, rep, 8, 8)
    ti.vec_sel(64, 2, y_ub, bits, x_ub, ax_ub, rep, 8, 8, 8)          # x >= 0 ? x : alpha * x
    ti.data_move(y, y_ub, 0, 1, n // 8, 0, 0)
    ti.vec_sel(64, 1, y_ub, bits, x_ub, -1.0, rep, 8, 8)             # x >= 0 ? x : -1
    ti.data_move(z, y_ub, 0, 1, n // 8, 0, 0)
    ti.BuildCCE(kernel_name="leaky_relu_sel", inputs=[x], outputs=[y, z])
    return ti


def test_cmpv_sel_modes_1_and_2_on_910b():
    set_current_compile_soc_info("Ascend910B2")
    n = 640
    ti = leaky_relu_sel(n, 0.25)
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x[:5] = 0.0
    y, z = run(ti, {"x": x})
    np.testing.assert_array_equal(y, np.where(x >= 0, x, x * np.float32(0.25)))
    np.testing.assert_array_equal(z, np.where(x >= 0, x, np.float32(-1)))


# ---------------------------------------------------------------------------------------------
# 3. conversions with every rounding mode (Ascend910): f32 -> s32 r/f/c/a/z, f32 -> f16 'none'
#    and 'odd', f16 -> s8 a/f/c/z (saturating), s32 -> f32 back

ROUNDINGS = {"round": np.rint, "floor": np.floor, "ceil": np.ceil, "to-zero": np.trunc,
             "away-zero": lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)}


def convert_all(n):
    ti = tik.Tik()
    x = ti.Tensor("float32", (n,), name="x", scope=tik.scope_gm)
    h = ti.Tensor("float16", (n,), name="h", scope=tik.scope_gm)
    outs = {m: ti.Tensor("int32", (n,), name="i_" + m.replace("-", "_"), scope=tik.scope_gm) for m in ROUNDINGS}
    back = ti.Tensor("float32", (n,), name="back", scope=tik.scope_gm)
    f16_none = ti.Tensor("float16", (n,), name="f16_none", scope=tik.scope_gm)
    f16_odd = ti.Tensor("float16", (n,), name="f16_odd", scope=tik.scope_gm)
    s8s = {m: ti.Tensor("int8", (n,), name="s8_" + m.replace("-", "_"), scope=tik.scope_gm)
           for m in ("away-zero", "floor", "ceil", "to-zero")}
    x_ub = ti.Tensor("float32", (n,), name="x_ub", scope=tik.scope_ubuf)
    i_ub = ti.Tensor("int32", (n,), name="i_ub", scope=tik.scope_ubuf)
    f_ub = ti.Tensor("float32", (n,), name="f_ub", scope=tik.scope_ubuf)
    h_ub = ti.Tensor("float16", (n,), name="h_ub", scope=tik.scope_ubuf)
    hin_ub = ti.Tensor("float16", (n,), name="hin_ub", scope=tik.scope_ubuf)
    b_ub = ti.Tensor("int8", (n,), name="b_ub", scope=tik.scope_ubuf)
    ti.data_move(x_ub, x, 0, 1, n // 8, 0, 0)
    ti.data_move(hin_ub, h, 0, 1, n // 16, 0, 0)
    rep = n // 64
    for mode, gm in outs.items():
        ti.vec_conv(64, mode, i_ub, x_ub, rep, 8, 8)
        ti.data_move(gm, i_ub, 0, 1, n // 8, 0, 0)
    ti.vec_conv(64, "", f_ub, i_ub, rep, 8, 8)                        # s32 -> f32 (exact here)
    ti.data_move(back, f_ub, 0, 1, n // 8, 0, 0)
    ti.vec_conv(64, "none", h_ub, x_ub, rep, 4, 8)
    ti.data_move(f16_none, h_ub, 0, 1, n // 16, 0, 0)
    ti.vec_conv(64, "odd", h_ub, x_ub, rep, 4, 8)
    ti.data_move(f16_odd, h_ub, 0, 1, n // 16, 0, 0)
    for mode, gm in s8s.items():
        ti.vec_conv(128, mode, b_ub, hin_ub, n // 128, 4, 8)
        ti.data_move(gm, b_ub, 0, 1, n // 32, 0, 0)
    ti.BuildCCE(kernel_name="convert_all", inputs=[x, h],
                outputs=list(outs.values()) + [back, f16_none, f16_odd] + list(s8s.values()))
    return ti


def _f16_round_to_odd(x):
    """Round-to-odd of f32 values to f16 (normal range): truncate toward zero, set the last bit if inexact."""
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore"):
        near = x.astype(np.float16)
    over = np.abs(near.astype(np.float64)) > np.abs(x64)
    trunc = np.where(over, np.nextafter(near, np.float16(0)), near).astype(np.float16)
    exact = trunc.astype(np.float64) == x64
    bits = trunc.view(np.uint16)
    return np.where(exact, bits, bits | 1).astype(np.uint16).view(np.float16)


def test_vconv_rounding_modes():
    set_current_compile_soc_info("Ascend910")
    n = 256
    rng = np.random.default_rng(2)
    x = (rng.integers(-2000, 2000, n) / 4).astype(np.float32)            # many exact halves
    x[:8] = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2 ** 22 + 0.5, -(2 ** 22) - 0.5]
    x[8:64] = rng.uniform(-60000, 60000, 56).astype(np.float32)          # inexact in f16
    h = rng.uniform(-300, 300, n).astype(np.float16)
    h[:4] = [0.5, -0.5, 126.5, -127.5]
    ti = convert_all(n)
    outs = run(ti, {"x": x, "h": h})
    names = list(ROUNDINGS) + ["back", "f16_none", "f16_odd", "s8_a", "s8_f", "s8_c", "s8_z"]
    got = dict(zip(names, outs))
    for mode, f in ROUNDINGS.items():
        np.testing.assert_array_equal(got[mode], f(x.astype(np.float64)).astype(np.int32), err_msg=mode)
    np.testing.assert_array_equal(got["back"], got["away-zero"].astype(np.float32))   # i_ub holds the last mode
    # Ascend910 saturates float overflow (2^22 + 0.5 -> 65504)
    np.testing.assert_array_equal(got["f16_none"], np.clip(x, -65504, 65504).astype(np.float16))
    np.testing.assert_array_equal(got["f16_odd"], _f16_round_to_odd(x))
    h64 = h.astype(np.float64)
    for key, mode in zip(("s8_a", "s8_f", "s8_c", "s8_z"), ("away-zero", "floor", "ceil", "to-zero")):
        np.testing.assert_array_equal(got[key], np.clip(ROUNDINGS[mode](h64), -128, 127).astype(np.int8),
                                      err_msg=mode)


# ---------------------------------------------------------------------------------------------
# 4. row statistics with the whole-tensor h_* API: mean, max and min of each row, column sums

def row_stats(m, n):
    ti = tik.Tik()
    x = ti.Tensor("float32", (m, n), name="x", scope=tik.scope_gm)
    stats = ti.Tensor("float32", (3, m), name="stats", scope=tik.scope_gm)
    colsum = ti.Tensor("float32", (n,), name="colsum", scope=tik.scope_gm)
    x_ub = ti.Tensor("float32", (m, n), name="x_ub", scope=tik.scope_ubuf)
    st_ub = ti.Tensor("float32", (3, m), name="st_ub", scope=tik.scope_ubuf)
    row_ub = ti.Tensor("float32", (m,), name="row_ub", scope=tik.scope_ubuf)
    col_ub = ti.Tensor("float32", (n,), name="col_ub", scope=tik.scope_ubuf)
    ti.h_data_move(x_ub, x)
    for i, reduce in enumerate((ti.h_reduce_sum, ti.h_reduce_max, ti.h_reduce_min)):
        reduce(row_ub, x_ub, 1)                                   # dst shape = src shape without axis 1
        if i == 0:
            ti.h_mul(row_ub, row_ub, 1.0 / n)
        ti.h_data_move(st_ub[i, :], row_ub.reshape((1, m)))        # st_ub[i, :] is [1, m] (TIK keeps the dim)
    ti.h_reduce_sum(col_ub, x_ub, 0)
    ti.h_data_move(stats, st_ub)
    ti.h_data_move(colsum, col_ub)
    ti.BuildCCE(kernel_name="row_stats", inputs=[x], outputs=[stats, colsum])
    return ti


@pytest.mark.parametrize("m,n", [(16, 64), (8, 200), (24, 24)])
def test_h_reductions_row_statistics(m, n):
    set_current_compile_soc_info("Ascend910B2")
    ti = row_stats(m, n)
    x = np.random.default_rng(m * n).integers(-64, 64, (m, n)).astype(np.float32) / 8    # sums are exact
    stats, colsum = run(ti, {"x": x})
    np.testing.assert_array_equal(stats[0], (x.sum(1) * np.float32(1.0 / n)).astype(np.float32))
    np.testing.assert_array_equal(stats[1], x.max(1))
    np.testing.assert_array_equal(stats[2], x.min(1))
    np.testing.assert_array_equal(colsum, x.sum(0))


# ---------------------------------------------------------------------------------------------
# 5. argmax of a long vector (vec_reduce_max with cal_index) and a long sum (vec_reduce_add)

def max_and_sum(n):
    ti = tik.Tik()
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    res = ti.Tensor("float16", (16,), name="res", scope=tik.scope_gm)
    x_ub = ti.Tensor("float16", (n,), name="x_ub", scope=tik.scope_ubuf)
    work = ti.Tensor("float16", (2 * n // 128 + 256,), name="work", scope=tik.scope_ubuf)
    out_ub = ti.Tensor("float16", (16,), name="out_ub", scope=tik.scope_ubuf)
    ti.data_move(x_ub, x, 0, 1, n // 16, 0, 0)
    ti.vec_dup(16, out_ub, 0.0, 1, 8)
    ti.vec_reduce_max(128, out_ub, x_ub, work, n // 128, 8, cal_index=True)
    ti.vec_reduce_add(128, out_ub[8], x_ub, work, n // 128, 8)
    ti.data_move(res, out_ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="max_and_sum", inputs=[x], outputs=[res])
    return ti


def test_reduce_max_with_index_and_reduce_add():
    n = 128 * 40
    rng = np.random.default_rng(5)
    x = (rng.permutation(np.arange(n) % 2000) - 1000).astype(np.float16) / np.float16(64)
    x[rng.integers(0, n)] = np.float16(40.0)                        # a unique maximum
    ti = max_and_sum(n)
    res, = run(ti, {"x": x})
    assert res[0] == x.max()
    assert res[1:2].view(np.uint16)[0] == int(np.argmax(x))
    assert abs(float(res[8]) - float(x.astype(np.float64).sum())) <= 0.01 * float(np.abs(x.astype(np.float64)).sum())
