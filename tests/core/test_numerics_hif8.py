"""HiFloat8: encoding table, TA rounding, hybrid (SSR) rounding, saturation."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import IllegalOperand
from pto_core.numerics import ROUNDING, float_to, hif8_decode, hif8_encode, to_f64

try:
    from .numerics_ref import bracket_round, grid, hif8_hybrid_ref, table
except ImportError:  # run without a tests package
    from numerics_ref import bracket_round, grid, hif8_hybrid_ref, table


def test_named_codes():
    v = hif8_decode(np.array([0x00, 0x80, 0x6F, 0xEF, 0x6E, 0xEE, 0x01, 0x07, 0x7E, 0x7F, 0x08, 0x09], np.uint8))
    assert v[0] == 0 and np.isnan(v[1]) and v[2] == np.inf and v[3] == -np.inf
    assert v[4:].tolist() == [32768, -32768, 2.0 ** -22, 2.0 ** -16, 2.0 ** -15, 1.5 * 2.0 ** -15, 1.0, 1.125]


def test_value_set_is_the_paper_format():
    """7 exponents with 3 fraction bits, 8 with 2, 16 with 1 (the last binade loses its
    top code to inf), 7 denormal powers of two, one zero, one NaN, +-inf."""
    vals = table("hif8")[:0x80]
    fin = vals[np.isfinite(vals) & (vals > 0)]
    E = np.floor(np.log2(fin)).astype(int)
    counts = {e: int((E == e).sum()) for e in np.unique(E)}
    assert all(counts[e] == 8 for e in range(-3, 4))
    assert all(counts[e] == 4 for e in list(range(-7, -3)) + list(range(4, 8)))
    assert all(counts[e] == 2 for e in list(range(-15, -7)) + list(range(8, 15)))
    assert counts[15] == 1 and all(counts[e] == 1 for e in range(-22, -15))
    assert fin.size == 7 * 8 + 8 * 4 + 15 * 2 + 1 + 7
    assert len(set(fin.tolist())) == fin.size          # no duplicate encodings


def test_ta_rounding_boundaries():
    below = lambda v: np.nextafter(np.float32(v), np.float32(0))          # noqa: E731
    x = np.array([1.0625, below(1.0625), below(40960), 40960, 2.0 ** -23, below(2.0 ** -23),
                  1.5 * 2.0 ** -17, below(1.5 * 2.0 ** -17), -1.0625, -0.0, 2.0 ** -30], np.float32)
    got = to_f64(hif8_encode(x), "hif8")
    assert got.tolist() == [1.125, 1.0, 32768, np.inf, 2.0 ** -22, 0.0, 2.0 ** -16, 2.0 ** -17, -1.125, 0.0, 0.0]
    assert hif8_encode(np.array([-0.0, -2.0 ** -30], np.float32)).tolist() == [0, 0]     # no negative zero


@pytest.mark.parametrize("sat,want", [("nosat", [0x6F, 0xEF, 0x80, 0x6F]), ("sat", [0x6E, 0xEE, 0x00, 0x6E]),
                                      ("preserve_nan", [0x6E, 0xEE, 0x80, 0x6E])])
def test_saturation_modes(sat, want):
    x = np.array([np.inf, -np.inf, np.nan, 1e6], np.float32)
    assert hif8_encode(x, sat=sat).tolist() == want


def test_float_to_dispatches_to_hif8():
    x = np.linspace(-50000, 50000, 4001, dtype=np.float32)
    assert np.array_equal(float_to(x, "hif8"), hif8_encode(x))
    assert np.array_equal(float_to(x, "hif8", rounding="hybrid"), hif8_encode(x, rounding="hybrid"))
    assert float_to(x, "HiF8").dtype == np.uint8


@pytest.mark.parametrize("mode", ROUNDING)
def test_every_mode_matches_the_bracketing_reference(mode):
    rng = np.random.default_rng(3)
    x = (rng.choice([-1, 1], 200000) * np.ldexp(rng.uniform(1, 2, 200000), rng.integers(-26, 17, 200000))).astype(np.float32)
    for sat in ("sat", "nosat"):
        want = bracket_round(x.astype(np.float64), grid("hif8"), mode, sat)
        assert np.array_equal(hif8_encode(x, rounding=mode, sat=sat).astype(np.int64), want), (mode, sat)


def _hybrid_samples(rng, n, src):
    """Values in every binade -25..16, with low mantissa bits fully random (they are the SSR 'noise')."""
    E = rng.integers(-25, 17, n) if src == "f32" else rng.integers(-24, 16, n)
    if src == "f32":
        bits = ((E + 127).astype(np.uint32) << 23) | rng.integers(0, 1 << 23, n).astype(np.uint32)
        x = bits.view(np.float32)
    else:
        x = np.ldexp(rng.uniform(1, 2, n), E).astype(np.float16)
    return x * rng.choice(np.array([-1, 1], dtype=x.dtype), n)


@pytest.mark.parametrize("src", ["f32", "f16"])
def test_hybrid_matches_scalar_reference(src):
    rng = np.random.default_rng(11)
    x = _hybrid_samples(rng, 3000, src)
    specials = np.array([16.0, 20.0, 1.0, 8.0, 2.0 ** -22, 2.0 ** -16, 32768, -16.0, 40960, 40959.99, 36000,
                         2.0 ** -23, 1.5 * 2.0 ** -23, 2.0 ** -24, 0.0, np.inf, np.nan], dtype=x.dtype)
    x = np.concatenate([x, specials])
    for sat in ("nosat", "sat"):
        got = to_f64(hif8_encode(x, rounding="hybrid", sat=sat), "hif8")
        want = np.array([hif8_hybrid_ref(float(v), src, sat) for v in x])
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
        assert not bad.any(), (sat, x[bad][:5], got[bad][:5], want[bad][:5])


def test_hybrid_known_values():
    # |E| < 4 uses TA; exact values with |E| >= 4 step up (F14 = T14 = 0), as the goldens do
    x = np.array([1.0, 1.0625, 16.0, 20.0, -16.0, 2.0 ** -16], np.float32)
    assert to_f64(hif8_encode(x, rounding="hybrid"), "hif8").tolist() == [1.0, 1.125, 20.0, 24.0, -20.0, 2.0 ** -15]
    # a value whose dropped top bits are below its low bits rounds down
    v = np.array([np.uint32((131 << 23) | 0x1FFF).view(np.float32)])     # 16 * (1 + tiny): F14=0 < T14
    assert to_f64(hif8_encode(v, rounding="hybrid"), "hif8")[0] == 16.0


def test_hybrid_rounding_up_past_the_maximum_saturates_or_is_inf():
    # 32768 is exact, so F14 = T14 = 0 and SSR steps up to the 1.5 * 2**15 pattern (inf)
    x = np.array([32768.0], np.float32)
    assert hif8_encode(x, rounding="hybrid").tolist() == [0x6F]
    assert hif8_encode(x, rounding="hybrid", sat="sat").tolist() == [0x6E]


def test_hybrid_rejects_sources_without_defined_bits():
    import ml_dtypes
    with pytest.raises(IllegalOperand, match="f32 and f16 sources"):
        hif8_encode(np.array([1.0], ml_dtypes.bfloat16), rounding="hybrid")
    with pytest.raises(IllegalOperand, match="not exactly representable in f32"):
        hif8_encode(np.array([1.0 + 2.0 ** -40]), rounding="hybrid")
    # float64 values that are f32-exact are accepted
    assert hif8_encode(np.array([16.0]), rounding="hybrid").tolist() == hif8_encode(np.array([16.0], np.float32),
                                                                                     rounding="hybrid").tolist()


def test_hybrid_is_only_for_hif8():
    with pytest.raises(IllegalOperand, match="hybrid rounding exists only for hif8") as e:
        float_to(np.array([1.0], np.float32), "f16", rounding="hybrid")
    assert e.value.operand == "rounding"


@settings(max_examples=200, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-40000, max_value=40000))
def test_hybrid_result_is_a_neighbour(x):
    """SSR picks one of the two HiF8 values around x (never further)."""
    v = np.array([x], np.float32)
    r = to_f64(hif8_encode(v, rounding="hybrid", sat="sat"), "hif8")[0]
    dn = to_f64(hif8_encode(v, rounding="floor", sat="sat"), "hif8")[0]
    up = to_f64(hif8_encode(v, rounding="ceil", sat="sat"), "hif8")[0]
    if abs(x) >= 2.0 ** -23 and abs(np.frexp(x)[1] - 1) >= 4:
        nxt = to_f64(hif8_encode(np.nextafter(np.array([abs(up)], np.float32), np.float32(np.inf)), rounding="ceil",
                                 sat="sat"), "hif8")[0]
        assert r in (dn, up) or abs(r) == nxt     # exact values step up one
    else:
        assert r in (dn, up)
