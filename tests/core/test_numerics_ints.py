"""float_to_int / int_to_float: every rounding mode, saturation and wrap-around."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import IllegalOperand, UnknownName
from pto_core.numerics import INT_TARGETS, ROUNDING, SAT_MODES, float_to_int, int_to_float, to_f64

try:
    from .numerics_ref import bracket_round, f32_round, grid
except ImportError:  # run without a tests package
    from numerics_ref import bracket_round, f32_round, grid

RNG = np.random.default_rng(5)


def ref_round_int(v: float, mode: str) -> int:
    """Exact rounding of a float to an integer with Fractions."""
    q = Fraction(v)
    fl = q.numerator // q.denominator
    frac = q - fl
    if frac == 0:
        return fl
    ce = fl + 1
    if mode == "floor":
        return fl
    if mode == "ceil":
        return ce
    if mode == "zero":
        return fl if q > 0 else ce
    if mode == "odd":
        return fl if fl % 2 else ce
    if frac != Fraction(1, 2):
        return fl if frac < Fraction(1, 2) else ce
    if mode == "away":
        return ce if q > 0 else fl
    return fl if fl % 2 == 0 else ce       # even


def ref_float_to_int(v: float, dst: str, mode: str, saturate: bool) -> int:
    bits, signed, _ = INT_TARGETS[dst]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if np.isnan(v):
        return 0
    if np.isinf(v):
        return hi if v > 0 else lo
    r = ref_round_int(v, mode)
    if saturate:
        return min(max(r, lo), hi)
    r %= 1 << bits
    return r - (1 << bits) if signed and r > hi else r


def _float_samples(n):
    small = RNG.uniform(-300, 300, n)
    halves = np.round(RNG.uniform(-300, 300, n)) + 0.5
    wide = RNG.choice([-1, 1], n) * np.ldexp(RNG.uniform(1, 2, n), RNG.integers(-3, 70, n))
    edges = np.array([0.5, -0.5, 1.5, -1.5, 2.5, 127.5, -128.5, 255.5, 2.0 ** 31 - 0.5, 2.0 ** 31, -2.0 ** 31 - 1,
                      2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 2.0 ** 64 - 2048, 2.0 ** 80 + 2.0 ** 30, 1e300, -0.0,
                      np.inf, -np.inf, np.nan])
    return np.concatenate([small, halves, wide, edges])


@pytest.mark.parametrize("dst", sorted(INT_TARGETS))
def test_float_to_int_matches_fraction_reference(dst):
    x = _float_samples(300)
    for mode in ROUNDING:
        for saturate in (True, False):
            got = float_to_int(x, dst, rounding=mode, saturate=saturate)
            assert got.dtype == INT_TARGETS[dst][2]
            want = [ref_float_to_int(float(v), dst, mode, saturate) for v in x]
            bad = [(float(v), int(g), w) for v, g, w in zip(x, got, want) if int(g) != w]
            assert not bad, (dst, mode, saturate, bad[:4])


def test_float_to_int_f32_source_vectorised_against_numpy():
    x = RNG.uniform(-4e4, 4e4, 1_000_000).astype(np.float32)
    for mode, fn in (("even", np.rint), ("floor", np.floor), ("ceil", np.ceil), ("zero", np.trunc)):
        want = np.clip(fn(x.astype(np.float64)), -32768, 32767).astype(np.int16)
        assert np.array_equal(float_to_int(x, "s16", rounding=mode), want), mode


@pytest.mark.parametrize("mode,want", [("even", 4194304), ("floor", 4194304), ("zero", 4194304),
                                       ("ceil", 4194305), ("away", 4194305)])
def test_tik_vec_conv_f32_to_s32_golden(mode, want):
    """tik_api.md §10.7: 2**22 + 0.5 -> s32 and s64."""
    x = np.array([2.0 ** 22 + 0.5], np.float32)
    assert float_to_int(x, "s32", rounding=mode)[0] == want
    assert float_to_int(x, "s64", rounding=mode)[0] == want


@pytest.mark.parametrize("dst,x,want", [
    ("s32", -1.5, [-2, -2, -1, -2, -1]),           # half -> int32
    ("s16", 127.5, [128, 127, 128, 128, 127]),     # half -> int16 (2**7 - 0.5)
    ("s8", 127.5, [127, 127, 127, 127, 127]),      # half -> int8, saturating
    ("u8", 1.75, [2, 1, 2, 2, 1]),                 # half -> uint8
    ("s4", 1.5, [2, 1, 2, 2, 1]),                  # half -> int4
    ("s16", 2.0 ** 22 + 0.5, [32767] * 5),         # float -> int16 overflow saturates
    ("s32", 64.5, [64, 64, 65, 65, 64]),           # bf16 -> int32
])
def test_ascend_c_cast_int_goldens(dst, x, want):
    """Ascend C Cast doc examples, modes RINT FLOOR CEIL ROUND TRUNC."""
    got = [int(float_to_int(np.array([x], np.float32), dst, rounding=m)[0])
           for m in ("even", "floor", "ceil", "away", "zero")]
    assert got == want


def test_nan_is_zero_and_inf_is_the_extreme():
    x = np.array([np.nan, np.inf, -np.inf], np.float32)
    for sat in (True, False):
        assert float_to_int(x, "s8", saturate=sat).tolist() == [0, 127, -128]
        assert float_to_int(x, "u16", saturate=sat).tolist() == [0, 65535, 0]
        assert float_to_int(x, "s64", saturate=sat).tolist() == [0, 2 ** 63 - 1, -2 ** 63]


def test_wrap_is_twos_complement_like_numpy_for_in_range_int64():
    v = RNG.integers(-2 ** 40, 2 ** 40, 100000).astype(np.float64)
    for dst, t in (("s8", np.int8), ("u8", np.uint8), ("s16", np.int16), ("u32", np.uint32)):
        assert np.array_equal(float_to_int(v, dst, saturate=False), v.astype(np.int64).astype(t))


def test_s4_u4_are_unpacked():
    x = np.array([-9, -8, 7, 8, 15, 16, -1], np.float32)
    assert float_to_int(x, "s4").tolist() == [-8, -8, 7, 7, 7, 7, -1]
    assert float_to_int(x, "u4").tolist() == [0, 0, 7, 8, 15, 15, 0]
    assert float_to_int(x, "s4", saturate=False).tolist() == [7, -8, 7, -8, -1, 0, -1]
    assert float_to_int(x, "u4", saturate=False).tolist() == [7, 8, 7, 8, 15, 0, 15]


@settings(max_examples=200, deadline=None)
@given(v=st.floats(allow_nan=False, allow_infinity=False), dst=st.sampled_from(sorted(INT_TARGETS)),
       mode=st.sampled_from(ROUNDING), saturate=st.booleans())
def test_float_to_int_property(v, dst, mode, saturate):
    got = int(float_to_int(np.array([v]), dst, rounding=mode, saturate=saturate)[0])
    assert got == ref_float_to_int(v, dst, mode, saturate)


# ----------------------------------------------------------------------------- int -> float


def ref_int_to_code(n: int, name: str, mode: str, sat: str) -> int:
    """Exact-integer reference via the bracketing reference (Fractions for the midpoint)."""
    if name == "f32":
        # f32 neighbours of a 64-bit integer, exactly with Python ints
        a = abs(n)
        if a == 0:
            return 0x80000000 if n < 0 else 0
        b = a.bit_length()
        q = max(b - 24, 0)
        lo = (a >> q) << q
        hi = lo + (1 << q)
        lo_odd = (lo >> q) & 1
        exact = lo == a
        twice = 2 * a
        pick_hi = {"even": twice > lo + hi or (twice == lo + hi and lo_odd), "away": twice >= lo + hi,
                   "zero": False, "floor": n < 0, "ceil": n > 0, "odd": not lo_odd}[mode] and not exact
        r = hi if pick_hi else lo
        code = int(np.float32(r).view(np.uint32))
        return code | (0x80000000 if n < 0 else 0)
    return int(bracket_round(np.array([float(Fraction(n))]), grid(name), mode, sat)[0]) \
        if abs(n) < 2 ** 53 else None


@pytest.mark.parametrize("name", ["f32", "f16", "bf16", "e4m3", "e5m2", "hif8", "e2m1", "e1m2"])
def test_int_to_float_matches_reference(name):
    ints = np.concatenate([RNG.integers(-70000, 70000, 400), RNG.integers(-2 ** 40, 2 ** 40, 100),
                           [0, 1, -1, 2 ** 24 + 1, 2 ** 24 + 3, 65519, 65520, 464, 480, 2 ** 31 - 1, -2 ** 31]])
    ints = ints.astype(np.int64)
    for mode in ROUNDING:
        for sat in SAT_MODES:
            out = np.asarray(int_to_float(ints, name, rounding=mode, sat=sat))
            got = out.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[out.itemsize]).astype(np.int64)
            if name == "f32":
                want = np.array([ref_int_to_code(int(n), name, mode, sat) for n in ints])
            else:   # every sample is exact in float64
                want = bracket_round(ints.astype(np.float64), grid(name), mode, sat)
            assert np.array_equal(got, want), (name, mode, sat, ints[got != want][:4])


def test_int64_extremes_to_f32_without_double_rounding():
    n = np.array([2 ** 63 - 1, -2 ** 63, 2 ** 53 + 1, (1 << 62) + (1 << 38) + 1, (1 << 62) + (1 << 38)], np.int64)
    got = int_to_float(n, "f32")
    assert got.tolist() == [2.0 ** 63, -2.0 ** 63, 2.0 ** 53, 2.0 ** 62 + 2.0 ** 39, 2.0 ** 62]
    # via float64 the fourth value would tie and round to even (down): single rounding must go up
    u = np.array([2 ** 64 - 1, 2 ** 63 + 2 ** 39], np.uint64)
    assert int_to_float(u, "f32").tolist() == [2.0 ** 64, 2.0 ** 63]
    for mode in ROUNDING:
        ref = [ref_int_to_code(int(v), "f32", mode, "nosat") for v in n]
        assert int_to_float(n, "f32", rounding=mode).view(np.uint32).astype(np.int64).tolist() == ref


def test_int16_exhaustive_equals_float_path():
    ints = np.arange(-32768, 32768, dtype=np.int16)
    for name in ("f16", "bf16", "e4m3", "hif8"):
        for mode in ROUNDING:
            a = np.asarray(int_to_float(ints, name, rounding=mode))
            from pto_core.numerics import float_to
            b = np.asarray(float_to(ints.astype(np.float32), name, rounding=mode))
            assert np.array_equal(a.view(np.uint8 if a.itemsize == 1 else np.uint16),
                                  b.view(np.uint8 if b.itemsize == 1 else np.uint16)), (name, mode)


def test_f32_reference_agrees_with_the_f64_bracketing_reference():
    """Cross-check of the two test references on values exact in float64."""
    n = RNG.integers(-2 ** 40, 2 ** 40, 200)
    for mode in ROUNDING:
        a = [ref_int_to_code(int(v), "f32", mode, "nosat") for v in n]
        b = f32_round(n.astype(np.float64), mode, "nosat").tolist()
        assert a == b


def test_errors_name_the_operand():
    with pytest.raises(UnknownName, match="not an integer conversion target") as e:
        float_to_int(np.array([1.0]), "f16")
    assert e.value.operand == "dst"
    with pytest.raises(IllegalOperand, match="expected integer values"):
        int_to_float(np.array([1.0]), "f16")
    with pytest.raises(IllegalOperand, match="use int_to_float"):
        from pto_core.numerics import float_to
        float_to(np.array([1], np.int32), "f16")
    assert to_f64(int_to_float(np.array([3], np.uint8), "f16"), "f16")[0] == 3.0
