"""Differential regression of the TIK 1.5 whole-tensor ``h_*`` API against an independent reading of the docs.

A compact copy of the fuzzer of helper task k455 (its scratch version ran ~10k random legal and illegal
calls on Ascend310/910/310P3/910B1 and SD3403/Hi3796CV300ES/BS9SX1AA; see the branch's report). The model
below is written from tik_api.md §9 and numerics.md only (no import of pto_core or of other test references):

* element-wise ops: ``dst[i] = src0[i] op src1[i]`` over equal-shaped UB views (either source may be a
  scalar), one IEEE rounding of the exact value; max/min propagate NaN and order -0 < +0; ints wrap;
  float results clamp (+-inf -> +-max, NaN -> 0) on the saturation-mode chips (numerics.md §3);
* ``h_cast`` follows the chip's vconv list and the §9.6 rounding modes (f32 -> f32 with a mode rounds to
  an integral value, §10.7; float -> int saturates);
* reductions: the max / min / sum of the view along the axis (sums of exactly representable data);
  ``axis=0`` of a 2-D view folds its rows;
* nothing outside ``dst``'s view changes; illegal calls are refused with a PtoError naming the API, the
  user's line and a Fix, and change nothing.

Scalar operands: ``h_div`` / ``h_sub`` with a scalar in either position are the two-tensor result with the
scalar in every element (one rounding; k460 -- before, k455 left them out: the facade multiplied by the
reciprocal and computed ``x - src`` as ``(-src) + x``, both wrong at the range ends); they need the chip's
vdiv / vsub row (TIK's only check). The other scalar forms need the chip's vadds/vmuls/vmaxs/vmins row.
"""
import inspect
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

CHIPS = ("Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1")
SATURATING = {"Ascend310", "Ascend910", "Ascend310P3"}
F16, F32, S32, S16, U16, S8, U8 = (np.dtype(t) for t in ("float16", "float32", "int32", "int16", "uint16",
                                                         "int8", "uint8"))
NAME = {t: t.name for t in (F16, F32, S32, S16, U16, S8, U8)}
OLD = ("Ascend310", "Ascend910")
#: Appendix A rows used by the h_* forms (Ascend310 / Ascend910 columns; 310P3 and 910B1 add int16 / relu types)
NEW_ARITH = (F16, F32, S32, S16)
BINARY = {"h_add": np.add, "h_sub": np.subtract, "h_mul": np.multiply, "h_div": np.divide,
          "h_max": None, "h_min": None, "h_and": np.bitwise_and, "h_or": np.bitwise_or}
SCALAR_OK = {"h_add", "h_sub", "h_mul", "h_div", "h_max", "h_min"}


def binary_dtypes(api, chip):
    if api in ("h_and", "h_or"):
        return (S16, U16)
    if api == "h_div":
        return () if chip == "Ascend310" else (F16, F32)
    return (F16, F32, S32) if chip in OLD else NEW_ARITH


def scalar_dtypes(api, chip):
    """vadds / vmuls / vmaxs / vmins rows: the tensor-scalar instructions; h_sub / h_div: the vsub / vdiv rows."""
    if api in ("h_sub", "h_div"):
        return binary_dtypes(api, chip)
    if chip in OLD:
        return () if api in ("h_max", "h_min") else (F16, F32)
    return NEW_ARITH


def fmax(a, b, is_max):
    a, b = np.broadcast_arrays(a, b)
    pick_a = (a > b) if is_max else (a < b)
    zeros = (a == 0) & (b == 0)
    pick_a = np.where(zeros, np.signbit(b) if is_max else np.signbit(a), pick_a)
    out = np.where(pick_a, a, b)
    return np.where(np.isnan(a), a, np.where(np.isnan(b), b, out)).astype(a.dtype)


def saturate(v, dt, chip):
    if dt.kind == "f" and chip in SATURATING:
        v = np.clip(np.where(np.isnan(v), dt.type(0), v), np.finfo(dt).min, np.finfo(dt).max)
    return np.asarray(v).astype(dt)


def binary(api, dt, chip, a, b):
    if api in ("h_max", "h_min"):
        return fmax(a, b, api == "h_max") if dt.kind == "f" else (np.maximum if api == "h_max" else np.minimum)(a, b)
    if dt.kind == "f":
        with np.errstate(all="ignore"):
            return saturate(BINARY[api](a.astype(np.float64), b.astype(np.float64)).astype(dt), dt, chip)
    if api in ("h_and", "h_or"):
        return BINARY[api](a, b)
    wide = BINARY[api](a.astype(np.int64), b.astype(np.int64)) & ((1 << (8 * dt.itemsize)) - 1)
    return wide.astype(np.uint64).astype(f"u{dt.itemsize}").view(dt)


#: a slice of each chip's vconv list (tik_api.md Appendix A): (src, dst, round_mode)
CASTS = {
    "Ascend310": [(F16, F32, ""), (F32, F16, ""), (F16, S32, "round"), (F16, S32, "floor"), (F16, S32, "ceil"),
                  (U8, F16, ""), (S8, F16, "")],
    "Ascend910": [(F16, F32, ""), (F32, F16, ""), (F32, F16, "odd"), (F32, S32, "away-zero"), (F32, S32, "to-zero"),
                  (S32, F32, ""), (F16, S8, "floor"), (F16, U8, "ceil")],
    "Ascend310P3": [(F32, F16, "odd"), (F32, S32, "round"), (F16, S16, "round"), (S16, F16, ""), (F16, S8, "to-zero")],
    "Ascend910B1": [(F32, F16, "floor"), (F32, F16, "away-zero"), (F32, F32, "round"), (F32, F32, "away-zero"),
                    (F32, S16, "ceil"), (F16, S8, "round"), (S16, F32, "")],
}


def round_integral(x, mode):
    return {"round": np.rint, "floor": np.floor, "ceil": np.ceil, "to-zero": np.trunc,
            "away-zero": lambda v: np.copysign(np.floor(np.abs(v) + 0.5), v)}[mode](x)


def round_float(x, dt, mode):
    """x (float64, exactly an f32 / int value) rounded to the float type dt with the mode, IEEE."""
    with np.errstate(all="ignore"):
        rn = x.astype(dt)
        if mode in ("", "round"):
            return rn
        back = rn.astype(np.float64)
        lo = np.where(back > x, np.nextafter(rn, dt.type(-np.inf)), rn)
        hi = np.where(back < x, np.nextafter(rn, dt.type(np.inf)), rn)
        tz = np.where(x >= 0, lo, hi)
        if mode == "floor":
            out = lo
        elif mode == "ceil":
            out = hi
        elif mode == "to-zero":
            out = tz
        elif mode == "odd":
            out = (tz.view(f"u{dt.itemsize}") | 1).view(dt)
        else:                                   # away-zero: nearest-even except on a tie
            tie = (x - lo.astype(np.float64)) == (hi.astype(np.float64) - x)
            out = np.where(tie, np.where(x >= 0, hi, lo), rn)
        return np.where((back == x) | np.isnan(x), rn, out).astype(dt)


def convert(x, sdt, ddt, mode, chip):
    x64 = x.astype(np.float64)
    if ddt.kind == "f":
        if sdt == ddt:                          # f322f32<mode>: an integral value (§10.7)
            return round_integral(x64, mode).astype(ddt)
        return saturate(round_float(x64, ddt, mode), ddt, chip)
    r = round_integral(x64, "round" if mode == "" else mode)
    return np.clip(r, np.iinfo(ddt).min, np.iinfo(ddt).max).astype(ddt)


SPECIALS = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.5, 0.5]


def data(rng, dt, n, special=0.15):
    if dt.kind == "f":
        v = (rng.standard_normal(n) * float(rng.choice([1, 100, 1e4]))).astype(dt)
        sp = np.array(SPECIALS + [np.finfo(dt).max, np.finfo(dt).tiny * 0.5], dtype=dt)
        return np.where(rng.random(n) < special, sp[rng.integers(0, len(sp), n)], v).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(int(info.min), int(info.max) + 1, n, dtype=np.int64).astype(dt)


class View:
    """A buffer of base shape (R, W) (or (N,)) and a view [r0:r0+m, c0:c0+n] (or [s:s+L]) with a 32 B start."""

    def __init__(self, rng, dt, shape):
        e = 32 // dt.itemsize
        self.dt, self.shape = dt, shape
        if len(shape) == 2:
            r0, c0 = int(rng.integers(0, 2)), int(rng.integers(0, 2)) * e
            w = -(-(c0 + shape[1]) // e) * e + int(rng.integers(0, 2)) * e
            self.base, self.start = (r0 + shape[0] + int(rng.integers(0, 2)), w), (r0, c0)
        else:
            s = int(rng.integers(0, 3)) * e
            self.base, self.start = (-(-(s + shape[0]) // e) * e + e,), (s,)
        self.size = int(np.prod(self.base))

    def of(self, t):
        t = t.reshape(self.base) if len(self.base) == 2 else t
        if len(self.shape) == 2:
            return t[self.start[0]:self.start[0] + self.shape[0], self.start[1]:self.start[1] + self.shape[1]]
        return t[self.start[0]:self.start[0] + self.shape[0]]


def call(ti, api, args):
    return getattr(ti, api)(*args)   # the user's line the refusals must name


CALL_LINE = inspect.getsourcelines(call)[1] + 1


def run_kernel(chip, bufs, api, args_of, scalar_dst=None):
    """GM -> UB, one h_* call, UB -> GM; a refused call is caught and the kernel still runs."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    gm, ub = {}, {}
    for name, arr in bufs.items():
        gm[name] = ti.Tensor(NAME[arr.dtype], (arr.size,), name=name, scope=tik.scope_gm)
        ub[name] = ti.Tensor(NAME[arr.dtype], (arr.size,), name=name + "_ub", scope=tik.scope_ubuf)
        ti.data_move(ub[name], gm[name], 0, 1, arr.nbytes // 32, 0, 0)
    sc = ti.Scalar(NAME[scalar_dst], init_value=0) if scalar_dst is not None else None
    refusal = None
    try:
        call(ti, api, args_of(ub, gm, sc))
        if sc is not None:
            ub["d"][0].set_as(sc)
    except PtoError as exc:
        refusal = exc
    for name, arr in bufs.items():
        ti.data_move(gm[name], ub[name], 0, 1, arr.nbytes // 32, 0, 0)
    ti.BuildCCE(kernel_name="hfuzz", inputs=list(gm.values()), outputs=list(gm.values()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = ti.tikdb.start_debug(feed_dict={k: v.copy() for k, v in bufs.items()}, interactive=False)
    return dict(zip(bufs, outs)), refusal


def same_bits(got, want, zero_sign_free=False):
    if zero_sign_free:
        return bool(((got == want) | (np.isnan(got) & np.isnan(want))).all())
    return got.tobytes() == want.tobytes()


class Picker:
    """Uniform choices from one numpy generator (hypothesis draws only the seed, so every family, chip
    and dtype is equally likely)."""

    def __init__(self, rng):
        self.rng = rng

    def one(self, seq):
        return seq[int(self.rng.integers(0, len(seq)))]

    def int(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def flag(self):
        return bool(self.rng.integers(0, 2))


def shape_of(pick, most=300):
    if pick.flag():
        return (pick.int(1, 2 * most),)
    return (pick.int(1, 4), pick.int(1, most))


SETTINGS = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@settings(max_examples=300, **SETTINGS)
@given(st.data())
def test_h_calls_match_the_model(draw):
    rng = np.random.default_rng(draw.draw(st.integers(0, 2 ** 32 - 1)))
    pick = Picker(rng)
    chip = pick.one(CHIPS)
    fam = pick.one(["binary", "binary", "scalar", "cast", "cast", "reduce", "reduce", "dup", "move"])
    zero_free, scalar_dst = False, None
    if fam in ("binary", "scalar"):
        api = pick.one(sorted(SCALAR_OK if fam == "scalar" else BINARY))
        dts = scalar_dtypes(api, chip) if fam == "scalar" else binary_dtypes(api, chip)
        if not dts:
            return
        dt = pick.one(dts)
        shape = shape_of(pick)
        d, a, b = View(rng, dt, shape), View(rng, dt, shape), View(rng, dt, shape)
        bufs = {"d": data(rng, dt, d.size), "a": data(rng, dt, a.size), "b": data(rng, dt, b.size)}
        if dt.kind == "f":   # the range ends too: a subnormal divisor, a quotient near max (k460)
            x = float(pick.one([0.5, -3.25, 100.0, -0.0, float(np.finfo(dt).smallest_subnormal),
                                -float(np.finfo(dt).max) / 2]))
        else:                # the dtype's minimum too: src - min wraps (k460)
            x = int(np.iinfo(dt).min) if dt != U16 and pick.int(0, 5) == 0 else pick.int(0 if dt == U16 else -40, 40)
        first = fam == "scalar" and pick.flag()                      # x op src
        want = bufs["d"].copy()
        xs = np.full(shape, x, dt)
        lhs, rhs = (xs, a.of(bufs["a"])) if first else (a.of(bufs["a"]), xs if fam == "scalar" else b.of(bufs["b"]))
        d.of(want)[...] = binary(api, dt, chip, lhs, rhs)
        args = (lambda ub, gm, sc: (d.of(ub["d"]), x, a.of(ub["a"])) if first else
                (d.of(ub["d"]), a.of(ub["a"]), x if fam == "scalar" else b.of(ub["b"])))
    elif fam == "cast":
        sdt, ddt, mode = pick.one(CASTS[chip])
        api = "h_cast"
        shape = shape_of(pick, 150)
        d, a = View(rng, ddt, shape), View(rng, sdt, shape)
        src = data(rng, sdt, a.size)
        if sdt.kind == "f" and ddt.kind != "f":      # finite, near the integer grid and the range ends
            info = np.iinfo(ddt)
            k = rng.integers(int(info.min) - 2, int(info.max) + 3, a.size) + rng.choice([0, 0.5, -0.5, 0.25], a.size)
            src = np.clip(k, -60000, 60000).astype(sdt)
        if (sdt, ddt) == (F32, F16):                  # ties, the f16 range end and its subnormal edge
            edge = np.array([1 + 2 ** -11, -(1 + 3 * 2 ** -11), 2 ** -25, -3 * 2 ** -25, 65504, 65519, 65520,
                             0.5 + 2 ** -12], F32)
            src = np.where(rng.random(a.size) < 0.3, edge[rng.integers(0, len(edge), a.size)], src).astype(F32)
        bufs = {"d": data(rng, ddt, d.size), "a": src}
        want = bufs["d"].copy()
        d.of(want)[...] = convert(a.of(src), sdt, ddt, mode, chip)
        args = lambda ub, gm, sc: (d.of(ub["d"]), a.of(ub["a"]), mode)   # noqa: E731
    elif fam == "reduce":
        api = pick.one(["h_reduce_sum", "h_reduce_max", "h_reduce_min"])
        dt = pick.one([F16] if chip in OLD and api != "h_reduce_sum" else [F16, F32])
        m, n = pick.int(1, 4), pick.int(1, 300)
        axis = pick.one([1, 0, None])
        a = View(rng, dt, (m, n))
        if api == "h_reduce_sum":
            src = (rng.integers(-8, 9, a.size) / 2).astype(dt)       # every partial sum exact
        else:
            src = data(rng, dt, a.size)
            src = np.where(np.isnan(src), dt.type(2), src).astype(dt)
            src.reshape(a.base)[a.start[0], a.start[1]:a.start[1] + n] = rng.choice(
                np.array([np.inf, -np.inf, 3.0, -3.0], dt), n)       # row 0 holds +-inf (k455)
        fn = {"h_reduce_sum": np.sum, "h_reduce_max": np.max, "h_reduce_min": np.min}[api]
        v = a.of(src).astype(np.float64)
        val = np.array([fn(v)]) if axis is None else fn(v, axis=1 if axis == 1 else 0)
        d = View(rng, dt, val.shape)
        if axis is None:
            d.start, scalar_dst = (0,), dt
        bufs = {"d": data(rng, dt, d.size), "a": src}
        want = bufs["d"].copy()
        d.of(want)[...] = val.astype(dt)
        zero_free = True                      # which zero a max/min of +0 and -0 keeps is not documented
        args = (lambda ub, gm, sc: ((sc if axis is None else d.of(ub["d"])), a.of(ub["a"]), axis))
    elif fam == "dup":
        api, dt = "h_duplicate", pick.one([F16, F32, S32, S16, U16])
        d = View(rng, dt, shape_of(pick))
        x = pick.one([0.1, -2.7, 3.0, -0.0]) if dt.kind == "f" else pick.int(0, 99)
        bufs = {"d": data(rng, dt, d.size)}
        want = bufs["d"].copy()
        d.of(want)[...] = np.array(x).astype(dt)
        args = lambda ub, gm, sc: (d.of(ub["d"]), x)   # noqa: E731
    else:
        api, dt = "h_data_move", pick.one([F16, F32, S32, U8])
        e = 32 // dt.itemsize
        shape = (pick.int(1, 4), pick.int(1, 8) * e)
        d, a = View(rng, dt, shape), View(rng, dt, shape)
        bufs = {"d": data(rng, dt, d.size), "a": data(rng, dt, a.size)}
        want = bufs["d"].copy()
        d.of(want)[...] = a.of(bufs["a"])
        from_gm = pick.flag()
        args = lambda ub, gm, sc: (d.of(ub["d"]), a.of((gm if from_gm else ub)["a"]))   # noqa: E731
    outs, refusal = run_kernel(chip, bufs, api, args, scalar_dst)
    assert refusal is None, f"{chip} {api}: {refusal}"
    assert same_bits(outs["d"], want, zero_free), (chip, api, fam, np.nonzero(outs["d"] != want)[0][:8])
    for name in bufs:
        if name != "d":
            assert outs[name].tobytes() == bufs[name].tobytes(), f"{api} changed its source {name}"


ILLEGAL = ["shape", "mixed_dtypes", "chip_dtype", "gm_operand", "misaligned", "axis", "reduce_dst", "cast_code",
           "round_mode", "float_for_int", "partial_block_move"]


@settings(max_examples=60, **SETTINGS)
@given(st.data())
def test_illegal_h_calls_are_refused_and_change_nothing(draw):
    pick = Picker(np.random.default_rng(draw.draw(st.integers(0, 2 ** 32 - 1))))
    chip = pick.one(CHIPS)
    kind = pick.one(ILLEGAL)
    n = pick.int(1, 200)
    api = pick.one(["h_add", "h_sub", "h_mul", "h_max"])
    dt_d = dt_a = dt_b = F16
    ln_d = ln_a = ln_b = n
    off_a, axis, mode, extra = 0, 1, "", None
    if kind == "shape":
        ln_b = n + pick.int(1, 16)
    elif kind == "mixed_dtypes":
        dt_a = F32
    elif kind == "chip_dtype":
        api, dt_d = {"Ascend310": ("h_div", F16), "Ascend910": ("h_relu", F32), "Ascend310P3": ("h_and", F16),
                     "Ascend910B1": ("h_or", F32)}[chip]
        dt_a = dt_b = dt_d
    elif kind == "misaligned":
        off_a = pick.int(1, 15)
    elif kind in ("axis", "reduce_dst"):
        api = "h_reduce_max" if kind == "axis" else "h_reduce_sum"
        axis = pick.one([2, 5]) if kind == "axis" else 1
        ln_d = 3 if kind == "axis" else pick.one([2, 4, 48])
        ln_a = 48
    elif kind in ("cast_code", "round_mode"):
        api = "h_cast"
        dt_d, dt_a, mode = ((S32, F16, "") if kind == "cast_code" else (F32, F16, pick.one(
            ["bankers", "nearest", "trunc"])))
    elif kind == "float_for_int":
        api, dt_d, dt_a, extra = "h_add", S32, S32, 1.5
    elif kind == "partial_block_move":
        api, ln_d = "h_data_move", 16 * pick.int(1, 4) + pick.int(1, 15)
        ln_a = ln_d
    rng = np.random.default_rng(n)
    bufs = {"d": data(rng, dt_d, ln_d + 32), "a": data(rng, dt_a, ln_a + 32 + 16),
            "b": data(rng, dt_b, ln_b + 32)}

    def args(ub, gm, sc):
        d, b = ub["d"][0:ln_d], ub["b"][0:ln_b]
        a = (gm if kind == "gm_operand" else ub)["a"][off_a:off_a + ln_a]
        if api in ("h_reduce_max", "h_reduce_sum"):
            return (d, ub["a"].reshape((6, 16))[0:3, :], axis)
        if api == "h_cast":
            return (d, a, mode)
        if api == "h_data_move":
            return (d, a)
        if api in ("h_relu",):
            return (d, a)
        return (d, a, extra if extra is not None else b)
    outs, refusal = run_kernel(chip, bufs, api, args)
    assert refusal is not None, f"{chip}: {kind} {api} was accepted"
    msg = str(refusal)
    assert api in msg, msg
    assert f"{__file__.rsplit('/', 1)[-1]}:{CALL_LINE}" in msg, msg
    assert "Fix" in msg, msg
    for name, arr in bufs.items():
        assert outs[name].tobytes() == arr.tobytes(), f"refused {api} changed {name}"
