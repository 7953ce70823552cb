"""E8M0, FP19, TF32, nibble packing, the generic encoder against the casts, and errors."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.dtypes import dtype
from pto_core.errors import IllegalOperand, UnknownName
from pto_core.numerics import (ROUNDING, e8m0_decode, e8m0_encode, float_to, fp19, fp19_bits, pack_nibbles,
                               rounding_name, sat_name, tf32_round, to_f32, unpack_nibbles)
from pto_core.numerics.floats import FORMATS, encode_float64

ALL8 = np.arange(256, dtype=np.uint16).astype(np.uint8)
ALL16 = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)


# ----------------------------------------------------------------------------- E8M0

def test_e8m0_decode_every_code():
    v = e8m0_decode(ALL8)
    assert v.dtype == np.float32
    assert np.isnan(v[255])
    assert [float(t) for t in v[:255]] == [2.0 ** (c - 127) for c in range(255)]
    assert np.array_equal(e8m0_decode(ALL8.view(ml_dtypes.float8_e8m0fnu)), v, equal_nan=True)
    assert np.array_equal(to_f32(ALL8, "e8m0"), v, equal_nan=True)


def test_e8m0_encode_round_trips_every_code_in_every_mode():
    v = e8m0_decode(ALL8[:255])
    for mode in ROUNDING:
        assert np.array_equal(e8m0_encode(v, mode), ALL8[:255]), mode


def test_e8m0_floor_is_floor_log2_and_ties_per_mode():
    rng = np.random.default_rng(1)
    x = np.ldexp(rng.uniform(1, 2, 100000), rng.integers(-127, 128, 100000)).astype(np.float32)
    E = np.frexp(x.astype(np.float64))[1] - 1
    assert np.array_equal(e8m0_encode(x).astype(int), E + 127)
    assert np.array_equal(e8m0_encode(x, "ceil").astype(int), np.minimum(E + 127 + (x != np.ldexp(1.0, E)), 255))
    ties = np.array([1.5, 3.0, 6.0, 0.75], np.float32)                 # codes 127, 128, 129, 126 are the lower
    assert e8m0_encode(ties, "away").tolist() == [128, 129, 130, 127]
    assert e8m0_encode(ties, "even").tolist() == [128, 128, 130, 126]
    assert e8m0_encode(ties, "odd").tolist() == [127, 129, 129, 127]


def test_e8m0_away_matches_ml_dtypes_in_range():
    """ml_dtypes rounds e8m0 ties up, which equals 'away' for the positive range."""
    rng = np.random.default_rng(2)
    x = np.ldexp(rng.uniform(1, 2, 200000), rng.integers(-126, 127, 200000)).astype(np.float32)
    assert np.array_equal(e8m0_encode(x, "away"), x.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8))


def test_e8m0_specials_and_range():
    x = np.array([0.0, 2.0 ** -130, np.inf, np.nan, 2.0 ** 127 * 1.75, 2.0 ** 127 * 1.25], np.float32)
    assert e8m0_encode(x, "even", "nosat").tolist() == [0, 0, 255, 255, 255, 254]
    assert e8m0_encode(x, "even", "sat").tolist() == [0, 0, 254, 0, 254, 254]
    assert e8m0_encode(x, "even", "preserve_nan").tolist() == [0, 0, 254, 255, 254, 254]
    assert e8m0_encode(x, "zero", "nosat").tolist() == [0, 0, 255, 255, 254, 254]


def test_e8m0_rejects_negative_scales():
    with pytest.raises(IllegalOperand, match="negative") as e:
        e8m0_encode(np.array([1.0, -2.0]))
    assert e.value.operand == "x" and "flat index 1" in str(e.value)
    with pytest.raises(IllegalOperand, match="uint8"):
        e8m0_decode(np.array([1.0]))


# ----------------------------------------------------------------------------- FP19

def test_fp19_of_every_f16_and_bf16_pattern_is_lossless():
    for storage in (np.float16, ml_dtypes.bfloat16):
        x = ALL16.view(storage)
        with np.errstate(invalid="ignore"):
            want = x.astype(np.float32)
        got = fp19(x)
        assert got.dtype == np.float32
        fin = np.isfinite(want)
        assert np.array_equal(got[fin], want[fin])
        assert (fp19_bits(x) < (1 << 19)).all()


def test_fp19_truncates_the_low_13_bits():
    bits = np.random.default_rng(4).integers(0, 1 << 32, 100000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    assert np.array_equal(fp19(x).view(np.uint32), bits & np.uint32(0xFFFFE000))
    assert np.array_equal(fp19_bits(x), bits >> np.uint32(13))
    # Python floats are f32 payloads first (RNE), then truncated
    assert fp19(0.1)[()] == np.float32(np.uint32(0x3DCCC000).view(np.float32))
    # 1 + 2**-10 - 2**-25 rounds to the f32 1 + 2**-10 first; truncating the f64 would give 1.0
    assert fp19(np.array([1.0 + 2.0 ** -10 - 2.0 ** -25]))[0] == 1.0 + 2.0 ** -10


# ----------------------------------------------------------------------------- TF32

def _tf32_reference(bits: np.ndarray, mode: str) -> np.ndarray:
    """Bias-add rounding of the low 13 bits on the f32 bit pattern (ml_dtypes style)."""
    b = bits.astype(np.uint64)
    if mode == "even":
        b = b + 0xFFF + ((b >> 13) & 1)
    else:
        b = b + 0x1000
    return ((b & ~np.uint64(0x1FFF)) & 0xFFFFFFFF).astype(np.uint32)


@pytest.mark.parametrize("mode", ["even", "away"])
def test_tf32_matches_bias_add_on_a_million_patterns(mode):
    bits = np.random.default_rng(6).integers(0, 1 << 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    bits = bits[~np.isnan(bits.view(np.float32))]
    got = tf32_round(bits.view(np.float32), mode).view(np.uint32)
    assert np.array_equal(got, _tf32_reference(bits, mode))


def test_tf32_edges():
    fmax = np.finfo(np.float32).max
    x = np.array([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, fmax, np.inf, -np.inf, np.nan, -0.0, 2.0 ** -149], np.float32)
    even = tf32_round(x, "even")
    assert even[:2].tolist() == [1.0, 1 + 2.0 ** -9]
    assert np.isinf(even[2]) and np.isinf(even[3]) and even[4] == -np.inf and np.isnan(even[5])
    assert np.signbit(even[6]) and even[7] == 0.0
    assert tf32_round(x, "away")[0] == 1 + 2.0 ** -10


# ----------------------------------------------------------------------------- packing

def test_pack_layout_low_nibble_first():
    assert pack_nibbles(np.array([1, 2, 3, 4, 5], np.uint8)).tolist() == [0x21, 0x43, 0x05]
    assert pack_nibbles(np.array([-1, -8, 7], np.int8)).tolist() == [0x8F, 0x07]
    assert unpack_nibbles(np.array([0x21, 0x43, 0x05], np.uint8), 5).tolist() == [1, 2, 3, 4, 5]
    assert unpack_nibbles(np.array([0x8F, 0x07], np.uint8), 3, signed=True).tolist() == [-1, -8, 7]


@settings(max_examples=100, deadline=None)
@given(codes=st.lists(st.integers(0, 15), max_size=65), signed=st.booleans())
def test_pack_unpack_round_trip(codes, signed):
    arr = np.array(codes, dtype=np.int64)
    if signed:
        arr = ((arr ^ 8) - 8).astype(np.int8)
    packed = pack_nibbles(arr)
    assert packed.dtype == np.uint8 and packed.size == (len(codes) + 1) // 2
    assert np.array_equal(unpack_nibbles(packed, len(codes), signed=signed), arr)


def test_every_fp4_code_packs_and_decodes():
    codes = np.arange(16, dtype=np.uint8)
    for name in ("e2m1", "e1m2"):
        vals = to_f32(codes, name)
        back = unpack_nibbles(pack_nibbles(float_to(vals, name)), 16)
        assert np.array_equal(back, codes)


def test_packing_errors():
    with pytest.raises(IllegalOperand, match=r"\[-8, 15\]") as e:
        pack_nibbles(np.array([16]))
    assert e.value.operand == "codes"
    with pytest.raises(IllegalOperand, match="cannot unpack 5 nibbles from 2 bytes"):
        unpack_nibbles(np.zeros(2, np.uint8), 5)
    with pytest.raises(IllegalOperand, match="uint8"):
        unpack_nibbles(np.zeros(2, np.int16), 2)
    with pytest.raises(IllegalOperand, match="must be integers"):
        pack_nibbles(np.array([1.0]))


# ----------------------------------------------------------------------------- generic encoder vs casts

@pytest.mark.parametrize("name,cast", [("f16", np.float16), ("bf16", ml_dtypes.bfloat16),
                                       ("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
                                       ("e2m1", ml_dtypes.float4_e2m1fn)])
def test_generic_encoder_equals_the_rne_cast(name, cast):
    """float_to(rounding='even') uses the cast; the generic kernel must agree with it."""
    rng = np.random.default_rng(12)
    bits = rng.integers(0, 1 << 32, 1_000_000, dtype=np.uint64).astype(np.uint32)
    bits = (bits & np.uint32(0x87FFFFFF)) | (rng.integers(96, 160, bits.size).astype(np.uint32) << 23)
    x = bits.view(np.float32)
    with np.errstate(over="ignore"):
        want = x.astype(cast).view(np.uint8 if np.dtype(cast).itemsize == 1 else np.uint16).astype(np.uint64)
    got = encode_float64(x.astype(np.float64), FORMATS[name], "even", "nosat")
    assert np.array_equal(got, want)


# ----------------------------------------------------------------------------- names and errors

def test_rounding_aliases():
    for alias, name in [("r", "even"), ("rint", "even"), ("round", "even"), ("round_even", "even"), ("CAST_RINT", "even"),
                        ("a", "away"), ("away-zero", "away"), ("round_away", "away"), ("f", "floor"),
                        ("c", "ceil"), ("ceiling", "ceil"), ("z", "zero"), ("to-zero", "zero"), ("trunc", "zero"),
                        ("o", "odd"), ("CAST_ODD", "odd")]:
        assert rounding_name(alias) == name
    assert sat_name(True) == "sat" and sat_name(False) == "nosat" and sat_name("sat(preserve_nan)") == "preserve_nan"


def test_unknown_names_raise_with_the_valid_list():
    with pytest.raises(UnknownName, match="unknown rounding mode 'banker'") as e:
        float_to(np.array([1.0]), "f16", rounding="banker")
    assert e.value.operand == "rounding" and "even" in str(e.value)
    with pytest.raises(UnknownName, match="unknown saturation mode") as e:
        float_to(np.array([1.0]), "f16", sat="clamp")
    assert "preserve_nan" in str(e.value)
    with pytest.raises(UnknownName, match="not a float conversion format") as e:
        float_to(np.array([1.0]), "s8")
    assert "float_to_int" in str(e.value)
    with pytest.raises(UnknownName, match="unknown dtype"):
        float_to(np.array([1.0]), "f12")


def test_decode_rejects_wrong_arrays():
    with pytest.raises(IllegalOperand, match="not f16 codes") as e:
        to_f32(np.array([1.0], np.float32), "f16")
    assert "float_to" in str(e.value)
    with pytest.raises(IllegalOperand, match="0..15"):
        to_f32(np.array([16], np.uint8), "e2m1")
    with pytest.raises(IllegalOperand, match="expected float values"):
        float_to(np.array(["a"]), "f16")


def test_dtype_objects_and_aliases_are_accepted():
    x = np.array([1.5, -2.0], np.float32)
    for d in ("f16", "float16", "half", dtype("f16")):
        assert float_to(x, d).dtype == np.float16
    assert np.array_equal(float_to(x, "e2m1x2"), float_to(x, "fp4_e2m1"))
    assert float_to(x, "f8E4M3FN").dtype == ml_dtypes.float8_e4m3fn


# ----------------------------------------------------------------------------- shapes

def test_scalars_views_and_empty_arrays_keep_their_shape():
    from pto_core.numerics import float_to_int, hif8_encode, int_to_float, round_to_integral
    grid = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2] * 0.37    # non-contiguous view
    calls = [lambda v: float_to(v, "bf16", rounding="zero"), lambda v: float_to(v, "f16"),
             lambda v: float_to(v, "e2m1", sat="sat"), lambda v: hif8_encode(v),
             lambda v: hif8_encode(v, rounding="hybrid"), lambda v: float_to_int(v, "s4"),
             lambda v: e8m0_encode(v), lambda v: tf32_round(v), lambda v: fp19(v), lambda v: round_to_integral(v)]
    for call in calls:
        assert call(np.float32(1.7)).shape == ()
        out = call(grid)
        assert out.shape == (4, 3)
        assert np.array_equal(np.asarray(out).ravel(), np.asarray(call(np.ascontiguousarray(grid).ravel())))
        assert call(np.zeros((0, 2), np.float32)).shape == (0, 2)
    assert int_to_float(np.int16(3), "e4m3").shape == ()
    assert int_to_float(np.arange(6, dtype=np.int8).reshape(2, 3), "hif8").shape == (2, 3)


@pytest.mark.parametrize("name, pats", [("f32", [0x7F800001, 0xFF812345, 0x7FC00000, 0x7FFFFFFF]),
                                        ("f16", [0x7C01, 0xFD55, 0x7E00]),
                                        ("bf16", [0x7F81, 0xFF85, 0x7FC0])])
def test_nan_bits_survive_a_register_round_trip(name, pats):
    # NAN_BITS_KEPT: bits -> register value -> bits keeps a NaN's sign and payload (signalling NaNs too)
    from pto_core import scalars as S
    t = S.scalar_type(name)
    for p in pats:
        v = S.bits_float(p, t)
        assert v != v and S.float_bits(v, t) == p
        assert S.bitcast(v, t, S.scalar_type("u32" if name == "f32" else "u16")) == p


def test_float_conversions_and_operations_quiet_a_nan():
    """A format conversion, maxNum/minNum of two NaNs, rounding to integral and fmod are operations: a NaN
    operand gives the quiet NaN of its sign with no payload (SCALAR_DEFAULT_NAN), whatever its bits; only a
    copy within one format keeps them (NAN_BITS_KEPT)."""
    from pto_core import scalars as S
    f16, bf16, f32 = (S.scalar_type(n) for n in ("f16", "bf16", "f32"))
    qnan = {f16: 0x7E00, bf16: 0x7FC0, f32: 0x7FC00000}
    sign = {f16: 0x8000, bf16: 0x8000, f32: 0x80000000}
    nans = {f16: [0x7C01, 0x7D55, 0x7E01, 0xFC08, 0xFFFF], bf16: [0x7F81, 0x7FC1, 0xFF85, 0xFFFF],
            f32: [0x7F800001, 0x7FBFF000, 0x7FC00001, 0xFF812345, 0xFFFFFFFF]}
    for src, pats in nans.items():
        for p in pats:
            v = S.bits_float(p, src)
            neg = bool(p & sign[src])
            assert S.float_bits(S.convert(v, src, src), src) == p                      # a copy
            for dst in (f16, bf16, f32):
                if dst is not src:
                    assert S.float_bits(S.convert(v, src, dst), dst) == qnan[dst] | (sign[dst] if neg else 0), \
                        (hex(p), src.name, dst.name)
            for r in (S.fmax(v, v), S.fmin(v, v), S.frem(v, 1.0), *(f(v) for f in S.ROUND_TO_INTEGRAL.values())):
                assert S.float_bits(r, src) == qnan[src] | (sign[src] if neg else 0), (hex(p), src.name)
            assert S.float_bits(S.fmax(v, 1.5), src) == S.float_bits(1.5, src)        # one NaN: ignored


def test_integer_division_by_zero_is_undefined_until_used():
    """INT_DIV_BY_ZERO_UNDEFINED: x // 0 and x % 0 give an undefined value; arithmetic keeps it undefined
    (x * 0 and x & 0 are 0), and every use (truth value, int, index, comparison result) raises."""
    from pto_core import scalars as S
    from pto_core.errors import UninitializedRead
    for a in (-7, 0, 5, -(1 << 31)):
        q, r = S.tdiv(a, 0), S.trem(a, 0)
        assert isinstance(q, S.UndefinedInt) and isinstance(r, S.UndefinedInt)
        for v in (q + 1, 3 - q, q * 2, q // 3, S.tdiv(q, 3), S.trem(9, r), -q, q << 2, q | 1, q ^ 5, q < 3):
            assert isinstance(v, S.UndefinedInt)
        assert q * 0 == 0 and 0 * r == 0 and (q & 0) == 0 and (0 & r) == 0
        for use in (bool, int, float, lambda v: range(v), lambda v: [0][v]):
            with pytest.raises(UninitializedRead, match="by zero is used"):
                use(q)
    assert S.tdiv(7, -2) == -3 and S.trem(-7, 2) == -1                    # unchanged otherwise


def test_logical_and_or_with_a_deciding_operand_ignore_an_undefined_value():
    """INT_DIV_BY_ZERO_UNDEFINED: False & c, True | c (tik.all / tik.any) and x | -1 do not depend on c; the
    negation of an undefined condition stays undefined."""
    from pto_core import scalars as S
    from pto_core.errors import UninitializedRead
    q = S.tdiv(3, 0)
    c = q > 1
    assert (False & c) is False and (c & False) is False and (True | c) is True and (c | True) is True
    assert (q | -1) == -1 and (-1 | q) == -1
    for v in (True & c, c & True, False | c, c | False, q | 1, S.logical_not(c)):
        assert isinstance(v, S.UndefinedInt)
        with pytest.raises(UninitializedRead):
            bool(v)
    assert S.logical_not(True) is False and S.logical_not(False) is True
