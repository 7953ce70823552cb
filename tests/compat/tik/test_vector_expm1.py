"""vec_expm1_high_preci: TIK's float16 e**x - 1 macro (tbe_compat/tik/vector_expm1.py).

The reference below is an independent numpy transcription of the instructions TIK's macro issues
(float16 range test, float16 exp - 1, float32 Taylor series to x**7 / 7!, float16 rounding), checked
bit for bit over every finite float16 input that does not overflow, then over masks, strides and
run-time repeat counts; one kernel per error TIK raises."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, OutOfBounds, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.debug import tik_machine_options

from .helpers import build, raises_tik, run

F16, F32 = np.float16, np.float32


def ref_expm1(x16: np.ndarray) -> np.ndarray:
    """The macro's result per lane (core vexp: float64 exp rounded once to float16)."""
    x = x16.astype(F32)
    with np.errstate(all="ignore"):
        s = x + F32(0)
        t = (x * x) * F32(0.5)
        s = t + s
        for k in range(3, 8):
            t = (t * x) * F32(1 / k)
            s = s + t
        taylor = s.astype(F16)
        em1 = (np.exp(x16.astype(np.float64)).astype(F16).astype(F32) - F32(1)).astype(F16)
    in_range = (x16 < F16(1.7)) & (x16 > F16(-0.7))
    return np.where(in_range, taylor, em1)


def _kernel(n, mask, repeat, drs, srs, work=None, dyn=False, dst_n=None):
    ti = tik.Tik()
    dst_n = dst_n or n
    x = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    y0 = ti.Tensor("float16", (dst_n,), name="y0", scope=tik.scope_gm)
    y = ti.Tensor("float16", (dst_n,), name="y", scope=tik.scope_gm)
    xs = ti.Tensor("float16", (n,), name="xs", scope=tik.scope_ubuf)
    ys = ti.Tensor("float16", (dst_n,), name="ys", scope=tik.scope_ubuf)
    wk = ti.Tensor("float16", (work or 11 * n,), name="wk", scope=tik.scope_ubuf)
    ti.data_move(xs, x, 0, 1, n // 16, 0, 0)
    ti.data_move(ys, y0, 0, 1, dst_n // 16, 0, 0)
    inputs = [x, y0]
    rep = repeat
    if dyn:
        rep = ti.InputScalar("int32", name="rep")
        inputs.append(rep)
    ti.vec_expm1_high_preci(mask, ys, xs, wk, rep, drs, srs)
    ti.data_move(y, ys, 0, 1, dst_n // 16, 0, 0)
    return build(ti, "expm1", inputs, [y])


def test_every_float16_input_matches_the_macro_bit_for_bit():
    allv = np.arange(0x10000, dtype=np.uint16).view(F16)
    vals = allv[np.isfinite(allv) & (allv <= 11)]         # exp(x) < 65504: no overflow on any chip
    chunk = 128 * 32
    nch = -(-vals.size // chunk)
    xin = np.zeros(nch * chunk, F16)
    xin[:vals.size] = vals
    ti = tik.Tik()
    x = ti.Tensor("float16", (xin.size,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (xin.size,), name="y", scope=tik.scope_gm)
    with ti.for_range(0, nch) as c:
        xs = ti.Tensor("float16", (chunk,), name="xs", scope=tik.scope_ubuf)
        ys = ti.Tensor("float16", (chunk,), name="ys", scope=tik.scope_ubuf)
        wk = ti.Tensor("float16", (11 * chunk,), name="wk", scope=tik.scope_ubuf)
        ti.data_move(xs, x[c * chunk], 0, 1, chunk // 16, 0, 0)
        ti.vec_expm1_high_preci(128, ys, xs, wk, 32, 8, 8)
        ti.data_move(y[c * chunk], ys, 0, 1, chunk // 16, 0, 0)
    build(ti, "expm1_all", [x], [y])
    out, = run(ti, {"x": xin})
    want = ref_expm1(xin)
    bad = np.nonzero(out.view(np.uint16) != want.view(np.uint16))[0]
    assert bad.size == 0, (xin[bad[:4]], out[bad[:4]], want[bad[:4]])
    # the macro is within one float16 ulp of the correctly rounded e**x - 1 (and gives +0 for -0)
    exact = np.expm1(vals.astype(np.float64)).astype(F16)
    got = out[:vals.size]
    ulps = np.abs(got.view(np.uint16).astype(np.int32) - exact.view(np.uint16).astype(np.int32))
    assert ulps[exact != 0].max() == 1 and (ulps[exact != 0] > 0).sum() == 714       # tik_vector.md §4
    assert (got[vals == 0] == 0).all()
    assert not np.signbit(got[vals == 0]).any()


@pytest.mark.parametrize("mask,repeat,drs,srs", [
    (128, 3, 8, 8), (70, 2, 8, 8), (40, 2, 16, 10), ([0xF0F0, 0x0FF0_0000_0000_00FF], 2, 8, 8),
    (128, 4, 8, 0), (128, 3, 8, 2), (100, 2, 4, 16)])
def test_masks_and_strides_write_the_active_lanes(mask, repeat, drs, srs):
    n = 16 * 16 * 8
    ti = _kernel(n, mask, repeat, drs, srs)
    rng = np.random.default_rng(7)
    xin = rng.uniform(-4, 4, n).astype(F16)
    y0 = np.full(n, -7.5, F16)
    # the macro reads nothing unwritten (EXPM1_ZERO_COMPARE_PADDING), so a strict user setting holds
    ti.tikdb.options = tik_machine_options(uninitialized="raise")
    out, = run(ti, {"x": xin, "y0": y0})
    want = y0.copy()
    lanes = np.arange(128) < mask if isinstance(mask, int) else \
        np.array([(mask[1] >> i) & 1 for i in range(64)] + [(mask[0] >> i) & 1 for i in range(64)], bool)
    for r in range(repeat):
        for lane in np.nonzero(lanes)[0]:
            want[r * drs * 16 + lane] = ref_expm1(xin[r * srs * 16 + lane:r * srs * 16 + lane + 1])[0]
    assert out.view(np.uint16).tolist() == want.view(np.uint16).tolist()


def test_run_time_repeat_count():
    n = 128 * 4
    ti = _kernel(n, 128, None, 8, 8, dyn=True)
    xin = np.linspace(-2, 2, n).astype(F16)
    y0 = np.full(n, 3.0, F16)
    out, = run(ti, {"x": xin, "y0": y0, "rep": 3})
    assert out[:384].view(np.uint16).tolist() == ref_expm1(xin[:384]).view(np.uint16).tolist()
    assert (out[384:] == 3.0).all()
    out, = run(ti, {"x": xin, "y0": y0, "rep": 0})               # a run-time 0 changes nothing
    assert (out == 3.0).all()


def test_overflow_and_nan_follow_the_chip_overflow_mode():
    xin = np.array([np.inf, -np.inf, np.nan, 12.0, -20.0, 0.5] + [0.0] * 122, F16)
    ti = _kernel(128, 6, 1, 8, 8)
    out, = run(ti, {"x": xin, "y0": np.zeros(128, F16)})        # Ascend310: saturation (inf -> max, NaN -> 0)
    assert out[:6].tolist() == [65504.0, -1.0, -1.0, 65504.0, -1.0, float(ref_expm1(xin[5:6])[0])]
    set_current_compile_soc_info("Ascend910B1")                 # inf_nan mode: IEEE results
    ti = _kernel(128, 6, 1, 8, 8)
    out, = run(ti, {"x": xin, "y0": np.zeros(128, F16)})
    assert out[0] == np.inf and out[1] == -1 and np.isnan(out[2]) and out[3] == np.inf


def _err_kernel(dtype="float16", wdtype=None, work=11 * 256, n=256):
    ti = tik.Tik()
    a = ti.Tensor(dtype, (n,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor(dtype, (n,), name="b", scope=tik.scope_ubuf)
    w = ti.Tensor(wdtype or dtype, (work,), name="w", scope=tik.scope_ubuf)
    return ti, a, b, w


def test_errors_are_tiks():
    ti, a, b, w = _err_kernel()
    with raises_tik(OutOfBounds, match=r"work_tensor overflow, needed 2816 but only 2815 elements.*Fix: size "
                                        r"work_tensor as documented: 11 \* ceil16\(\(repeat_times - 1\) \* 8 \* 16 "
                                        r"\+ 128\) float16 elements \(= 2816 here\)"):
        ti.vec_expm1_high_preci(128, a, b, w[0:2815], 2, 8, 8)
    ti.vec_expm1_high_preci(128, a, b, w, 2, 8, 8)             # the documented size is enough
    with raises_tik(IllegalOperand, match="work_tensor's dtype must be same with dst's dtype"):
        ti2, a2, b2, w2 = _err_kernel(wdtype="float32")
        ti2.vec_expm1_high_preci(128, a2, b2, w2, 1, 8, 8)
    with raises_tik(UnsupportedOp, match="tik.vec_expm1_high_preci with float32 is not supported on Ascend310"):
        ti3, a3, b3, w3 = _err_kernel("float32")
        ti3.vec_expm1_high_preci(64, a3, b3, w3, 1, 8, 8)
    with raises_tik(IllegalOperand, match="doesn't support dst and src address overlapping"):
        ti.vec_expm1_high_preci(128, a[0:128], a[64:], w, 1, 8, 8)
    with raises_tik(IllegalOperand, match="doesn't support src and work_tensor address overlapping"):
        ti4 = tik.Tik()
        big = ti4.Tensor("float16", (13 * 128,), name="big", scope=tik.scope_ubuf)
        dst = ti4.Tensor("float16", (128,), name="dst", scope=tik.scope_ubuf)
        ti4.vec_expm1_high_preci(128, dst, big[0:128], big[64:], 1, 8, 8)
    with raises_tik(IllegalOperand, match="no low-64-lane bits"):
        ti.vec_expm1_high_preci([1, 0], a, b, w, 1, 8, 8)
    with raises_tik(UnsupportedOp, match="src_rep_stride must be an immediate int here"):
        ti.vec_expm1_high_preci(128, a, b, w, 1, 8, ti.Scalar("int32", init_value=8))
    with raises_tik(IllegalOperand, match="needs an immediate mask"):
        ti.vec_expm1_high_preci(ti.Scalar("int32", init_value=8), a, b, w, 1, 8, 8)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        ti.vec_expm1_high_preci(128, a, b, w, 3, 8, 0)


def test_run_time_repeat_checks_the_work_size_when_it_runs():
    ti = _kernel(128 * 4, 128, None, 8, 8, dyn=True, work=11 * 128 * 2)
    xin = np.zeros(512, F16)
    run(ti, {"x": xin, "y0": xin, "rep": 2})                   # 2 repeats fit
    with raises_tik(OutOfBounds, match="work_tensor of tik.vec_expm1_high_preci"):
        run(ti, {"x": xin, "y0": xin, "rep": 3})
