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
