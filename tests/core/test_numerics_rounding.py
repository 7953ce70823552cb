"""Rounding of float values into every float format: exact midpoints +-1 ulp, sticky bits,
random sweeps against the bracketing reference and ml_dtypes, and documented golden cases."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.numerics import ROUNDING, SAT_MODES, float_to, round_to_integral, to_f64

try:
    from .numerics_ref import f32_round, grid, bracket_round
except ImportError:  # run without a tests package
    from numerics_ref import f32_round, grid, bracket_round

SMALL = ["f16", "bf16", "e4m3", "e5m2", "hif8", "e2m1", "e1m2"]
ML = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
      "e5m2": ml_dtypes.float8_e5m2, "e2m1": ml_dtypes.float4_e2m1fn}
RNG = np.random.default_rng(20240521)


def codes_of(out) -> np.ndarray:
    out = np.asarray(out)
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32}[out.itemsize]
    return out.view(width).astype(np.int64)


def assert_codes(x, got, want, label):
    bad = got != want
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AssertionError(f"{label}: {int(bad.sum())} mismatches; first x={x.ravel()[i]!r} "
                             f"({np.float64(x.ravel()[i]).hex()}): got {got.ravel()[i]:#x}, want {want.ravel()[i]:#x}")


def midpoints(name) -> np.ndarray:
    """Every value, every midpoint between neighbours and one ulp (f64 and f32) either side."""
    g = grid(name)
    v = np.append(g.values, g.virtual)
    mids = (v[:-1] + v[1:]) / 2
    pts = np.concatenate([v, mids, [g.virtual * 1.5, g.values[1] / 4]])
    pts = np.concatenate([pts, -pts])
    with np.errstate(over="ignore"):
        f32 = pts.astype(np.float32)
    near = [np.nextafter(pts, np.inf), np.nextafter(pts, -np.inf),
            np.nextafter(f32, np.float32(np.inf)).astype(np.float64),
            np.nextafter(f32, np.float32(-np.inf)).astype(np.float64)]
    return np.concatenate([pts] + near + [[np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0]])


def random_in_range(name, n, rng) -> np.ndarray:
    """Random f32 bit patterns whose exponents cover the format's range and a margin."""
    g = grid(name)
    lo = int(np.floor(np.log2(g.values[1]))) - 4
    hi = int(np.floor(np.log2(g.virtual))) + 3
    exps = rng.integers(max(lo + 127, 0), min(hi + 127, 255), n).astype(np.uint32)
    bits = (rng.integers(0, 2, n).astype(np.uint32) << 31) | (exps << 23) | \
        rng.integers(0, 1 << 23, n).astype(np.uint32)
    return bits.view(np.float32)


@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("mode", ROUNDING)
def test_midpoints_and_neighbours_every_mode_and_sat(name, mode):
    x64 = midpoints(name)
    with np.errstate(over="ignore"):
        x32 = x64.astype(np.float32)
    for sat in SAT_MODES:
        for x in (x64, x32):
            want = bracket_round(x.astype(np.float64), grid(name), mode, sat)
            assert_codes(x, codes_of(float_to(x, name, rounding=mode, sat=sat)), want, f"{name} {mode} {sat}")


@pytest.mark.parametrize("name", SMALL)
def test_random_f32_and_f64_every_mode_and_sat(name):
    x32 = random_in_range(name, 20000, RNG)
    x64 = x32.astype(np.float64) * (1 + RNG.uniform(-2.0 ** -30, 2.0 ** -30, x32.size))   # bits beyond f32
    for mode in ROUNDING:
        for sat in SAT_MODES:
            for x in (x32, x64):
                want = bracket_round(x.astype(np.float64), grid(name), mode, sat)
                assert_codes(x, codes_of(float_to(x, name, rounding=mode, sat=sat)), want, f"{name} {mode} {sat}")


@pytest.mark.parametrize("name", sorted(ML))
def test_million_random_f32_match_ml_dtypes_rne(name):
    x = random_in_range(name, 1_000_000, np.random.default_rng(7))
    x = x[~np.isnan(x)]
    with np.errstate(over="ignore"):
        want = x.astype(ML[name])
    got = float_to(x, name)
    assert got.dtype == (np.uint8 if name == "e2m1" else want.dtype)    # FP4: one uint8 code per element
    assert_codes(x, codes_of(got), codes_of(want), name)


@pytest.mark.parametrize("name", ["hif8", "e1m2"])
def test_million_random_f32_match_reference(name):
    x = random_in_range(name, 1_000_000, np.random.default_rng(8))
    for mode in ("away", "even"):
        want = bracket_round(x.astype(np.float64), grid(name), mode, "nosat")
        assert_codes(x, codes_of(float_to(x, name, rounding=mode)), want, f"{name} {mode}")


def test_million_random_f32_bit_patterns_to_f16_and_bf16():
    bits = np.random.default_rng(9).integers(0, 1 << 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[~np.isnan(x)]
    for name in ("f16", "bf16"):
        with np.errstate(over="ignore"):
            want = x.astype(ML[name])
        assert_codes(x, codes_of(float_to(x, name)), codes_of(want), name)


def test_f64_to_f32_every_mode_and_sat():
    rng = np.random.default_rng(10)
    x = np.ldexp(rng.uniform(1, 2, 50000), rng.integers(-160, 135, 50000)) * rng.choice([-1, 1], 50000)
    edges = np.array([np.finfo(np.float32).max, 2.0 ** 128, 2.0 ** 128 - 2.0 ** 103, 2.0 ** -149, 2.0 ** -150,
                      3 * 2.0 ** -151, 2.0 ** -126 * (1 - 2.0 ** -25), 1e300, 1e-300, np.inf, -np.inf, np.nan, 0.0, -0.0])
    x = np.concatenate([x, edges, -edges, np.nextafter(edges, 0), np.nextafter(edges, np.inf)])
    with np.errstate(over="ignore"):
        ref = x.astype(np.float32)                     # numpy: RNE, IEEE overflow
    num = ~np.isnan(x)
    assert_codes(x[num], codes_of(float_to(x[num], "f32")), codes_of(ref[num]), "numpy")
    for mode in ROUNDING:
        for sat in SAT_MODES:
            assert_codes(x, codes_of(float_to(x, "f32", rounding=mode, sat=sat)), f32_round(x, mode, sat),
                         f"f32 {mode} {sat}")


@pytest.mark.parametrize("name", ["f16", "bf16", "e4m3", "e5m2", "e2m1", "e1m2"])
def test_sticky_bits_at_the_smallest_subnormal(name):
    """Half the smallest subnormal is a tie; any lower f32 bit set makes it round up."""
    tiny = grid(name).values[1]
    tie = np.float32(tiny / 2)
    tie_bits = int(tie.view(np.uint32))
    lowest = (tie_bits & -tie_bits).bit_length() - 1          # sticky positions lie below the tie's last bit
    ks = np.arange(0, min(lowest, 23), dtype=np.uint32)
    sticky = (np.uint32(tie_bits) | (np.uint32(1) << ks)).view(np.float32)
    below = (np.uint32(tie_bits) - (np.uint32(1) << ks)).view(np.float32)
    assert len(ks) >= 8
    assert (codes_of(float_to(sticky, name)) == 1).all()
    assert (codes_of(float_to(-sticky, name, rounding="ceil")) == codes_of(float_to(np.float32(-0.0), name))).all()
    assert (codes_of(float_to(below, name)) == 0).all()
    assert (codes_of(float_to(below, name, rounding="away")) == 0).all()
    assert (codes_of(float_to(below, name, rounding="ceil")) == 1).all()
    assert (codes_of(float_to(below, name, rounding="odd")) == 1).all()
    assert codes_of(float_to(np.array([tie]), name)) == 0            # tie to even: 0
    assert codes_of(float_to(np.array([tie]), name, rounding="away")) == 1
    # the same from f64 with a sticky bit far below f32 precision
    assert codes_of(float_to(np.array([tiny / 2 * (1 + 2.0 ** -50)]), name)) == 1


# ----------------------------------------------------------------------------- golden cases

def test_numerics_md_measured_values():
    f16 = to_f64(float_to(np.array([65519, 65520, 2.0 ** -25, 2.0 ** -25 * (1 + 2.0 ** -23)], np.float32), "f16"), "f16")
    assert f16.tolist() == [65504.0, np.inf, 0.0, 2.0 ** -24]
    e4 = to_f64(float_to(np.array([448, 464, 480], np.float32), "e4m3"), "e4m3")
    assert e4[:2].tolist() == [448.0, 448.0] and np.isnan(e4[2])
    e5 = to_f64(float_to(np.array([57344, 61440], np.float32), "e5m2"), "e5m2")
    assert e5.tolist() == [57344.0, np.inf]


@pytest.mark.parametrize("mode,want", [("even", 0x3800), ("floor", 0x3800), ("zero", 0x3800),
                                       ("ceil", 0x3801), ("away", 0x3801), ("odd", 0x3801)])
def test_tik_vec_conv_f32_to_f16_golden(mode, want):
    """tik_api.md §10.7: f32 0.5 + 2**-12 -> f16."""
    assert codes_of(float_to(np.array([0.5 + 2.0 ** -12], np.float32), "f16", rounding=mode))[0] == want


@pytest.mark.parametrize("mode,want", [("even", 0.0), ("floor", 0.0), ("ceil", 1.0), ("away", 1.0), ("zero", 0.0)])
def test_tik_vec_conv_f32_to_f32_golden(mode, want):
    """tik_api.md §10.7: f32 -> f32 (round to integral) of 0.5."""
    out = round_to_integral(np.array([0.5], np.float32), mode)
    assert out.dtype == np.float32 and out[0] == want


@pytest.mark.parametrize("mode,want", [("even", 0.5 + 2.0 ** -8), ("floor", 0.5), ("ceil", 0.5 + 2.0 ** -8),
                                       ("away", 0.5 + 2.0 ** -8), ("zero", 0.5)])
def test_ascend_c_cast_f32_to_bf16_golden(mode, want):
    """Ascend C Cast doc: 0.5 + 2**-9 + 2**-11 -> bf16."""
    x = np.array([0.5 + 2.0 ** -9 + 2.0 ** -11], np.float32)
    assert to_f64(float_to(x, "bf16", rounding=mode), "bf16")[0] == want


@pytest.mark.parametrize("name,mode,want", [("e2m1", "even", 2), ("e2m1", "floor", 2), ("e2m1", "ceil", 3),
                                            ("e2m1", "away", 3), ("e2m1", "zero", 2)])
def test_ascend_c_cast_2p5_golden(name, mode, want):
    """Ascend C Cast doc: 2.5 -> fp4x2_e2m1 in the five CAST modes."""
    assert to_f64(float_to(np.array([2.5], np.float32), name, rounding=mode), name)[0] == want


@pytest.mark.parametrize("name,x", [("e4m3", 2.5), ("e5m2", 2.5), ("hif8", 1.75)])
def test_cast_doc_examples_that_contradict_the_formats_are_not_followed(name, x):
    """The Ascend C Cast doc says 2.5 -> 2 for fp8 (CAST_RINT) and 1.75 -> 2 for hifloat8
    (CAST_ROUND), but both inputs are exactly representable (e4m3/e5m2 1.01b * 2,
    HiF8 D0 1.110b), so every rounding keeps them; we treat those rows as copy-paste slips."""
    for mode in ROUNDING:
        assert to_f64(float_to(np.array([x], np.float32), name, rounding=mode), name)[0] == x


def test_round_to_integral_keeps_sign_and_specials():
    x = np.array([-0.4, -0.5, -1.5, 2.5, 1e30, np.inf, np.nan, -0.0], np.float32)
    assert np.array_equal(round_to_integral(x, "even"), np.array([-0.0, -0.0, -2, 2, 1e30, np.inf, np.nan, -0.0],
                                                                 np.float32), equal_nan=True)
    assert np.signbit(round_to_integral(x, "zero")[0])
    assert round_to_integral(x, "away").tolist()[:4] == [-0.0, -1.0, -2.0, 3.0]
    assert round_to_integral(x, "odd").tolist()[:4] == [-1.0, -1.0, -1.0, 3.0]


def test_round_to_integral_matches_numpy():
    x = np.ldexp(RNG.uniform(-2, 2, 100000), RNG.integers(-4, 60, 100000))
    assert np.array_equal(round_to_integral(x, "even"), np.rint(x))
    assert np.array_equal(round_to_integral(x, "floor"), np.floor(x))
    assert np.array_equal(round_to_integral(x, "ceil"), np.ceil(x))
    assert np.array_equal(round_to_integral(x, "zero"), np.trunc(x))


# ----------------------------------------------------------------------------- properties

finite_f32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=150, deadline=None)
@given(a=finite_f32, b=finite_f32, name=st.sampled_from(SMALL), mode=st.sampled_from(ROUNDING))
def test_rounding_is_monotone(a, b, name, mode):
    lo, hi = sorted([a, b])
    r = to_f64(float_to(np.array([lo, hi], np.float32), name, rounding=mode, sat="sat"), name)
    assert r[0] <= r[1]


@settings(max_examples=150, deadline=None)
@given(x=finite_f32, name=st.sampled_from(SMALL))
def test_directed_modes_bracket_the_value(x, name):
    v = np.array([x], np.float32)
    dn = to_f64(float_to(v, name, rounding="floor", sat="sat"), name)[0]
    up = to_f64(float_to(v, name, rounding="ceil", sat="sat"), name)[0]
    z = to_f64(float_to(v, name, rounding="zero", sat="sat"), name)[0]
    vmax = grid(name).values[-1]
    if abs(x) <= vmax:
        assert dn <= x <= up
        assert abs(z) <= abs(x)
    near = to_f64(float_to(v, name, rounding="even", sat="sat"), name)[0]
    assert near in (dn, up)


@settings(max_examples=150, deadline=None)
@given(x=finite_f32, name=st.sampled_from(SMALL), mode=st.sampled_from(["even", "away", "zero", "odd"]))
def test_symmetric_modes_are_odd_functions(x, name, mode):
    v = np.array([x, -x], np.float32)
    r = to_f64(float_to(v, name, rounding=mode), name)
    assert r[0] == -r[1] or (np.isnan(r[0]) and np.isnan(r[1]))


@settings(max_examples=200, deadline=None)
@given(x=finite_f32, name=st.sampled_from(SMALL))
def test_floor_is_minus_ceil_of_minus(x, name):
    a = to_f64(float_to(np.array([x], np.float32), name, rounding="floor", sat="sat"), name)[0]
    b = to_f64(float_to(np.array([-x], np.float32), name, rounding="ceil", sat="sat"), name)[0]
    assert a == -b
