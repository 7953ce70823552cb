"""Every bit pattern of every small format: decode against an independent reference,
round-trip through float_to with every rounding and saturation mode (test_half.py style)."""
import ml_dtypes
import numpy as np
import pytest

from pto_core.numerics import ROUNDING, SAT_MODES, float_to, hif8_decode, to_f32, to_f64

try:
    from .numerics_ref import table
except ImportError:  # run without a tests package
    from numerics_ref import table

ALL16 = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
ALL8 = np.arange(0x100, dtype=np.uint16).astype(np.uint8)
ALL4 = np.arange(16, dtype=np.uint8)

STORAGE = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
           "e5m2": ml_dtypes.float8_e5m2}
RAW = {"f16": ALL16, "bf16": ALL16, "e4m3": ALL8, "e5m2": ALL8, "hif8": ALL8, "e2m1": ALL4, "e1m2": ALL4}
CANONICAL_NAN = {"f16": 0x7E00, "bf16": 0x7FC0, "e4m3": 0x7F, "e5m2": 0x7E, "hif8": 0x80}
SIGN = {"f16": 0x8000, "bf16": 0x8000, "e4m3": 0x80, "e5m2": 0x80, "hif8": 0x80, "e2m1": 0x8, "e1m2": 0x8}


def _first_bad(codes, got, want):
    bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        return f"code {int(codes[i]):#x}: got {got[i]!r}, want {want[i]!r}"
    return None


@pytest.mark.parametrize("name", sorted(RAW))
def test_decode_every_pattern_matches_reference(name):
    codes = RAW[name]
    want = table(name)[codes]
    got64 = to_f64(codes, name)
    got32 = to_f32(codes, name)
    assert got32.dtype == np.float32 and got64.dtype == np.float64
    assert _first_bad(codes, got64, want) is None, _first_bad(codes, got64, want)
    assert _first_bad(codes, got32.astype(np.float64), want) is None
    # sign of zero is part of the value
    assert np.array_equal(np.signbit(got64[want == 0]), np.signbit(want[want == 0]))


@pytest.mark.parametrize("name", sorted(STORAGE))
def test_decode_matches_numpy_and_ml_dtypes(name):
    codes = RAW[name]
    stored = codes.view(STORAGE[name])
    with np.errstate(invalid="ignore"):
        want = stored.astype(np.float64)
    assert _first_bad(codes, to_f64(stored, name), want) is None
    assert _first_bad(codes, to_f64(codes, name), want) is None


def test_decode_e2m1_matches_ml_dtypes():
    want = ALL4.view(ml_dtypes.float4_e2m1fn).astype(np.float64)
    assert np.array_equal(to_f64(ALL4, "e2m1"), want)


def test_fp4_tables_are_the_documented_values():
    e2m1 = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    e1m2 = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]      # A5 f4E1M2: bias 1, subnormal at exp 0
    assert to_f32(ALL4, "e2m1x2").tolist() == e2m1 + [-v for v in e2m1]
    assert to_f32(ALL4, "e1m2x2").tolist() == e1m2 + [-v for v in e1m2]


def test_hif8_decode_agrees_with_to_f32():
    assert np.array_equal(hif8_decode(ALL8), to_f32(ALL8, "hif8"), equal_nan=True)


@pytest.mark.parametrize("name", sorted(RAW))
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_every_pattern_round_trips_in_every_mode(name, src):
    codes = RAW[name]
    values = to_f64(codes, name).astype(src)
    finite = np.isfinite(values)
    for sat in SAT_MODES:
        for mode in ROUNDING:
            out = np.asarray(float_to(values, name, rounding=mode, sat=sat))
            back = out.view(np.uint8 if out.itemsize == 1 else np.uint16).astype(np.int64)
            want = codes.astype(np.int64)
            if name == "hif8":
                want = np.where(want == 0x80, 0x80, want)        # single zero, single NaN
            ok = back[finite] == want[finite]
            assert ok.all(), (name, mode, sat, hex(int(codes[finite][~ok][0])), hex(int(back[finite][~ok][0])))
            nan = np.isnan(values)
            if name in CANONICAL_NAN and nan.any():
                nan_out = back[nan]
                if sat == "sat":
                    assert (nan_out == 0).all()
                else:
                    sign = 0 if name == "hif8" else SIGN[name]       # 0x80 is the one HiF8 NaN
                    assert ((nan_out & ~sign) == CANONICAL_NAN[name]).all()
            inf = np.isinf(values)
            if inf.any():
                # +-inf keep their sign; nosat keeps inf (E4M3FN has none: NaN), sat clamps to max
                dec = to_f64(out[inf], name)
                if sat == "nosat":
                    assert (np.isinf(dec) & (np.sign(dec) == np.sign(values[inf]))).all()
                else:
                    assert np.array_equal(np.abs(dec), np.full(dec.shape, np.nanmax(np.abs(table(name)[np.isfinite(table(name))]))))


def test_e4m3_infinite_input_is_nan_without_sat():
    out = float_to(np.array([np.inf, -np.inf], np.float32), "e4m3").view(np.uint8)
    assert out.tolist() == [0x7F, 0xFF]


def test_f16_and_bf16_patterns_widen_exactly_to_f32_and_back():
    for name in ("f16", "bf16"):
        v = to_f32(ALL16, name)
        assert np.array_equal(v.astype(np.float64), table(name)[ALL16], equal_nan=True)


# ============================================================================ to_f16: numpy's cast without its slow path

from hypothesis import given, settings, strategies as st  # noqa: E402

from pto_core.numerics.floats import _to_f16_bits, to_f16  # noqa: E402


def _cast_codes(x):
    with np.errstate(all="ignore"):
        return x.astype(np.float16).view(np.uint16)


def _bits_codes(x):
    return _to_f16_bits(np.ascontiguousarray(x)).view(np.uint16)


def _same(x):
    want, got = _cast_codes(x), _bits_codes(x)
    bad = np.flatnonzero(want != got)
    return None if not bad.size else f"{x.dtype} {x[bad[0]]!r}: cast {want[bad[0]]:#06x}, bits {got[bad[0]]:#06x}"


@pytest.mark.parametrize("high", [0x000, 0x001, 0x0FF, 0x100, 0x1FE, 0x1FF])
def test_f16_bits_match_the_cast_for_every_f32_rounding_pattern_in_every_binade(high):
    """All 256 exponents x both signs x all 2**14 low fraction bits (the 13 cut bits and the kept
    last bit: every tie, carry and subnormal rounding case) under six patterns of the other bits;
    inf and every NaN class included."""
    low = np.arange(1 << 14, dtype=np.uint32)
    frac = (np.uint32(high) << np.uint32(14)) | low
    bits = (np.arange(256, dtype=np.uint32)[:, None] << np.uint32(23)) | frac[None, :]
    for sign in (0, 0x80000000):
        x = (bits | np.uint32(sign)).reshape(-1).view(np.float32)
        assert _same(x) is None, _same(x)


@pytest.mark.parametrize("low", [0, 1, (1 << 41) - 1, 1 << 41, (1 << 41) + 1, (1 << 42) - 1])
def test_f16_bits_match_the_cast_for_f64_ties_and_neighbours(low):
    rng = np.random.default_rng(low & 0xFFFF)
    exps = np.arange(960, 1060, dtype=np.uint64)            # f16 underflow to overflow, and beyond
    frac = rng.integers(0, 1 << 52, 4096, dtype=np.uint64) & ~np.uint64((1 << 42) - 1) | np.uint64(low)
    bits = (exps[:, None] << np.uint64(52)) | frac[None, :]
    x = bits.reshape(-1).view(np.float64)
    assert _same(x) is None and _same(-x) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=64), st.booleans())
def test_f16_bits_match_the_cast_on_any_bit_patterns(words, single):
    b = np.array(words, np.uint64)
    x = (b >> np.uint64(32)).astype(np.uint32).view(np.float32) if single else b.view(np.float64)
    assert _same(x) is None, _same(x)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-6, 1e-3, 1.0, 1e5])
def test_to_f16_equals_the_cast_whichever_method_it_picks(dt, scale):
    """Subnormal-heavy (bit path), mixed and normal data (cast), NaN/inf/zeros, strided input, odd sizes."""
    rng = np.random.default_rng(int(scale * 1e6) % 997)
    x = (rng.standard_normal((3, 50001)) * scale).astype(dt)
    x[0, ::7] = 0
    x[1, :5] = [np.inf, -np.inf, np.nan, -0.0, 65520.0]
    for v in (x, x[:, ::3], x.T, x[:1, :100]):
        with np.errstate(over="ignore"):         # the cast's own overflow warning (65520 -> inf)
            got = to_f16(v)
        assert got.dtype == np.float16 and got.shape == v.shape
        assert np.array_equal(got.view(np.uint16), _cast_codes(v))
