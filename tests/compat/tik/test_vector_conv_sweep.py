"""vconv / vec_conv swept over every 16-bit source pattern and the f32 rounding boundaries, through
real kernels, against a reference written from the documents (tik_api.md §9.6, pto_vector.md §4,
numerics.md): one rounding of the exact value in the named mode, float -> int saturating with NaN -> 0,
float results following the chip's overflow mode. NaN results are compared as NaN only (the payload
is not documented)."""
import ml_dtypes
import numpy as np
import pytest

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

BF16 = np.dtype(ml_dtypes.bfloat16)
TIK = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", BF16: "bfloat16",
       np.dtype(np.int32): "int32", np.dtype(np.int16): "int16", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8"}
FMT = {np.dtype(np.float16): (np.uint16, 15), BF16: (np.uint16, 127), np.dtype(np.float32): (np.uint32, 127)}
# NaN/inf casts in the references warn; the values are what the references intend
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

MODES = {"round": "even", "away-zero": "away", "floor": "floor", "ceil": "ceil", "to-zero": "zero", "odd": "odd",
         "none": "even"}


def conv_kernel(chip, src, dst_dtype, mode, reps=64):
    """All of ``src`` through one vec_conv per chunk of ``reps`` repeats; returns dst."""
    set_current_compile_soc_info(chip)
    dst_dtype = np.dtype(dst_dtype)
    ss, ds = src.dtype.itemsize, dst_dtype.itemsize
    par = 256 // max(ss, ds)
    chunk = par * reps
    nch = -(-src.size // chunk)
    padded = np.zeros(nch * chunk, src.dtype)
    padded[:src.size] = src
    ti = tik.Tik()
    gs = ti.Tensor(TIK[src.dtype], (padded.size,), name="gs", scope=tik.scope_gm)
    gd = ti.Tensor(TIK[dst_dtype], (padded.size,), name="gd", scope=tik.scope_gm)
    us = ti.Tensor(TIK[src.dtype], (chunk,), name="us", scope=tik.scope_ubuf)
    ud = ti.Tensor(TIK[dst_dtype], (chunk,), name="ud", scope=tik.scope_ubuf)
    with ti.for_range(0, nch) as c:
        ti.data_move(us, gs[c * chunk], 0, 1, chunk * ss // 32, 0, 0)
        ti.vec_conv(par, mode, ud, us, reps, par * ds // 32, par * ss // 32)
        ti.data_move(gd[c * chunk], ud, 0, 1, chunk * ds // 32, 0, 0)
    ti.BuildCCE(kernel_name="conv_sweep", inputs=[gs], outputs=[gd])
    out, = ti.tikdb.start_debug(feed_dict={"gs": padded}, interactive=False)
    return np.asarray(out)[:src.size]


def _neighbour(v, dtype, up):
    """The next value of ``dtype`` above (``up``) or below ``v`` (v not NaN)."""
    u, _ = FMT[dtype]
    sign = u(1 << (8 * np.dtype(u).itemsize - 1))
    b = v.astype(dtype).view(u)
    neg, zero = (b & sign) != 0, (b & ~sign) == 0
    step = np.where(neg, b - u(1), b + u(1)) if up else np.where(neg, b + u(1), b - u(1))
    return np.where(zero, u(1) if up else sign | u(1), step).astype(u).view(dtype)


def ref_float(x, dtype, mode, overflow):
    """Round exact float64 values ``x`` once to float ``dtype`` (nearest-even via the cast)."""
    dtype = np.dtype(dtype)
    u, emax = FMT[dtype]
    with np.errstate(all="ignore"):
        t = (x.astype(np.float32) if dtype == BF16 else x).astype(dtype)
        tt = t.astype(np.float64)
        above = tt > x
        lo = np.where(above, _neighbour(t, dtype, False), t).astype(np.float64)
        hi = np.where(above, t, _neighbour(t, dtype, True)).astype(np.float64)
        big = 2.0 ** (emax + 1)          # where the next binade would start: the midpoint to "inf"
        tie = 2 * x == np.where(np.isinf(lo), -big, lo) + np.where(np.isinf(hi), big, hi)
        r = {"even": tt, "away": np.where(tie, np.where(x > 0, hi, lo), tt), "floor": lo, "ceil": hi,
             "zero": np.where(x > 0, lo, hi),
             "odd": np.where(lo.astype(dtype).view(u) & u(1), lo, hi)}[mode]
        r = np.where(tt == x, tt, np.where(np.isnan(x), np.nan, r))
        if overflow == "saturation":
            fmax = float(ml_dtypes.finfo(dtype).max) if dtype == BF16 else float(np.finfo(dtype).max)
            r = np.nan_to_num(np.clip(r, -fmax, fmax), nan=0.0)
        return r.astype(dtype)


def ref_int(x, dtype, mode):
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        r = {"even": np.rint(x), "floor": np.floor(x), "ceil": np.ceil(x), "zero": np.trunc(x),
             "away": np.copysign(np.where(a - np.floor(a) >= 0.5, np.floor(a) + 1, np.floor(a)), x)}[mode]
        return np.clip(np.nan_to_num(r, nan=0.0), info.min, info.max).astype(dtype)


def assert_same(got, want):
    if want.dtype.kind in "iu":
        bad = np.nonzero(got != want)[0]
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        u = FMT[want.dtype][0]
        bad = np.nonzero((got.view(u) != want.view(u)) & ~(np.isnan(g) & np.isnan(w)))[0]
    assert bad.size == 0, [(i, got[i], want[i]) for i in bad[:5]]


def f32_boundaries():
    """Every sign/exponent/top-7-fraction pattern with low bits at f16 and bf16 rounding boundaries."""
    top = np.arange(1 << 16, dtype=np.uint32) << 16
    low = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x3000, 0x7FFF, 0x8000, 0x8001, 0xF000], np.uint32)
    return (top[:, None] | low).ravel().view(np.float32)


ALL_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


@pytest.mark.parametrize("dst,modes", [(np.int8, ["none", "round", "away-zero", "floor", "ceil", "to-zero"]),
                                       (np.uint8, ["none", "floor", "ceil"]),
                                       (np.int16, ["round", "away-zero", "to-zero"]),
                                       (np.int32, ["round", "away-zero", "floor", "ceil", "to-zero"])])
def test_every_f16_to_int_on_910b(dst, modes):
    for mode in modes:
        got = conv_kernel("Ascend910B1", ALL_F16, dst, mode)
        assert_same(got, ref_int(ALL_F16.astype(np.float64), dst, MODES[mode]))


@pytest.mark.parametrize("chip,overflow", [("Ascend910B1", "inf_nan"), ("Ascend910A", "saturation")])
def test_every_f16_to_f32_follows_the_overflow_mode(chip, overflow):
    got = conv_kernel(chip, ALL_F16, np.float32, "none")
    assert_same(got, ref_float(ALL_F16.astype(np.float64), np.float32, "even", overflow))


def test_every_bf16_to_f32_and_s32_on_910b():
    x = np.arange(1 << 16, dtype=np.uint16).view(BF16)
    x64 = x.astype(np.float32).astype(np.float64)
    assert_same(conv_kernel("Ascend910B1", x, np.float32, "none"), ref_float(x64, np.float32, "even", "inf_nan"))
    for mode in ("round", "away-zero", "floor"):
        assert_same(conv_kernel("Ascend910B1", x, np.int32, mode), ref_int(x64, np.int32, MODES[mode]))


def test_every_s16_to_f16_in_every_mode_on_910b():
    x = np.arange(1 << 16, dtype=np.uint16).view(np.int16)
    for mode in ("none", "round", "away-zero", "floor", "ceil", "to-zero"):
        got = conv_kernel("Ascend910B1", x, np.float16, mode)
        assert_same(got, ref_float(x.astype(np.float64), np.float16, MODES[mode], "inf_nan"))


@pytest.mark.parametrize("chip,overflow,modes",
                         [("Ascend910B1", "inf_nan", ["none", "away-zero", "floor", "ceil", "to-zero", "odd"]),
                          ("Ascend910A", "saturation", ["none", "odd"])])
def test_f32_to_f16_rounding_boundaries(chip, overflow, modes):
    x = f32_boundaries()
    for mode in modes:
        got = conv_kernel(chip, x, np.float16, mode, reps=255)
        assert_same(got, ref_float(x.astype(np.float64), np.float16, MODES[mode], overflow))


def test_f32_to_bf16_rounding_boundaries_on_910b():
    x = f32_boundaries()
    for mode in ("round", "away-zero", "floor", "ceil", "to-zero"):
        got = conv_kernel("Ascend910B1", x, BF16, mode, reps=255)
        assert_same(got, ref_float(x.astype(np.float64), BF16, MODES[mode], "inf_nan"))
