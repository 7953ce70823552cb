"""FIXPIPE pre_quant modes: every representable output value reached through the op.

For each mode of the table (pto_spec.md §5.3) the tests drive ``pto.mte_l0c_gm`` with
accumulator tiles built so that every finite destination code (f16, bf16, e4m3, hif8,
s8, u8, s4, s16) is produced, compare every element with the `pto_core.numerics`
functions applied to the exact float64 product, and check the coverage. Each float
mode runs under ``sat``, ``sat(preserve_nan)`` and ``nosat``.
"""
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fixpipe_support import fb_words, fp19, load_acc, ref_convert, ref_offsets, unpack_s4
import pto_core.numerics as nx
from pto_core import Machine, dtype, get_target, pto
from pto_core.numerics import quant as Q

SATS = [True, "preserve_nan", False]
SAT_NAME = {True: "sat", "preserve_nan": "preserve_nan", False: "nosat"}
ALL_U16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def run(acc, dst, mode, payload, *, sat=True, target="A5", words=None, relu=None, payload_dtype="f32"):
    """One mte_l0c_gm write-back of logical ``acc`` (m, n) with nz2nd; returns the destination values."""
    m = Machine(target)
    src, ss = load_acc(m, acc)
    rows, cols = acc.shape
    d = dtype(dst)
    out = m.gm_alloc((rows * cols,), d, name="out")
    if words is not None:
        payload = fb_words(m, words, dtype_name=payload_dtype)
    kw = {"pre_quant": (payload, {"mode": mode})}
    if relu is not None:
        kw["pre_relu"] = relu
    kw["nz2nd"] = True
    kw["sat"] = sat
    pto.mte_l0c_gm(src, out, rows, cols, ss, cols, 0, 0, **kw)
    if d.name == "s4":
        return unpack_s4(m.read(out, (d.nbytes(rows * cols),), "u8"), rows * cols).reshape(rows, cols)
    return m.read(out, (rows, cols))


def run_flat(values, dst, mode, payload, cols, **kw):
    """`run` over a flat array in L0C-sized tiles of ``cols`` columns; returns the flat results."""
    values = np.asarray(values)
    rows_max = get_target(kw.get("target", "A5")).sizes.l0c // (4 * cols) // 16 * 16
    out = []
    for start in range(0, values.size, rows_max * cols):
        part = values[start:start + rows_max * cols]
        out.append(run(tile(part, cols), dst, mode, payload, **kw).reshape(-1)[:part.size])
    return np.concatenate(out)


def bits(values, d):
    return np.asarray(values).view(np.uint16 if d.bits == 16 else np.uint8)


def float_codes(name):
    """Every code of a float format with its float64 value (NaN codes have NaN)."""
    if name in ("f16", "bf16"):
        codes = ALL_U16
        with np.errstate(invalid="ignore"):
            vals = codes.view(dtype(name).storage).astype(np.float64)
    elif name == "hif8":
        codes = np.arange(256, dtype=np.uint8)
        vals = nx.hif8_decode(codes).astype(np.float64)
    else:
        codes = np.arange(256, dtype=np.uint8)
        vals = codes.view(dtype(name).storage).astype(np.float64)
    return codes, vals


def expected_float(product, dst, sat, rounding="even"):
    name = dtype(dst).name
    if name == "hif8":
        if rounding == "hybrid":   # hybrid reads the f32 bits of the scaled value
            product = nx.float_to(product, "f32", sat="nosat")
        return nx.hif8_encode(product, rounding=rounding, sat=SAT_NAME[sat])
    return nx.float_to(product, name, sat=SAT_NAME[sat])


def tile(values, cols):
    """Pad a flat array (repeating its last value) to whole rows of ``cols``."""
    values = np.asarray(values)
    rows = -(-values.size // cols)
    out = np.full(rows * cols, values[-1], dtype=values.dtype)
    out[:values.size] = values
    return out.reshape(rows, cols)


def finite_targets(name):
    codes, vals = float_codes(name)
    keep = np.isfinite(vals)
    return codes[keep], vals[keep]


def neighbours_midpoints(vals):
    """Exact midpoints between neighbouring finite values, and +-1 f32 ulp around them (rounding cases)."""
    v = np.unique(vals[np.isfinite(vals)])
    mid = ((v[:-1] + v[1:]) / 2).astype(np.float32)
    return np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))])


# ----------------------------------------------------------------------------- f32 accumulators -> floats

F32_SCALED = [("qf322f16_pre", "f16", "even"), ("qf322bf16_pre", "bf16", "even"), ("qf322fp8_pre", "e4m3", "even"),
              ("qf322hif8_pre", "hif8", "away"), ("qf322hif8_pre_hybrid", "hif8", "hybrid")]


@pytest.mark.parametrize("family,dst,rounding", F32_SCALED)
@pytest.mark.parametrize("sat", SATS)
@pytest.mark.parametrize("kind", ["vec", "scalar"])
def test_f32_scaled_modes_reach_every_code(family, dst, rounding, sat, kind):
    codes, vals = float_codes(dst)
    scale = 2.0
    finite = np.isfinite(vals)
    x = np.concatenate([(vals[finite] / scale).astype(np.float32), neighbours_midpoints(vals) / np.float32(scale),
                        np.array([np.nan, np.inf, -np.inf, 1e30, -1e30], np.float32)])
    cols = 512
    words = [Q.make_word(scale, offset_bits=0)] * cols if kind == "vec" else None
    got = run_flat(x, dst, f"{family}_{kind}", scale, cols, sat=sat, words=words)
    exp = expected_float(x.astype(np.float64) * scale, dst, sat, rounding)
    np.testing.assert_array_equal(bits(got, dtype(dst)), bits(exp, dtype(dst)))
    reached = set(np.unique(bits(got, dtype(dst))).tolist())
    want = set(bits(codes[finite], dtype(dst)).tolist())
    if sat is False and dst != "e4m3":
        want |= set(bits(codes[np.isinf(vals)], dtype(dst)).tolist())
    assert want <= reached, f"{len(want - reached)} codes never produced"


@pytest.mark.parametrize("mode,dst", [("f32_f16", "f16"), ("f32_bf16", "bf16")])
@pytest.mark.parametrize("sat", SATS)
def test_f32_casts_reach_every_code_with_round_to_nearest_even(mode, dst, sat):
    codes, vals = float_codes(dst)
    x = np.concatenate([vals[np.isfinite(vals)].astype(np.float32), neighbours_midpoints(vals),
                        np.array([np.nan, np.inf, -np.inf, 3e38, -3e38], np.float32)])
    got = run_flat(x, dst, mode, 0.0, 1024, sat=sat)  # the payload is required by the syntax, unused
    exp = expected_float(x.astype(np.float64), dst, sat)
    np.testing.assert_array_equal(bits(got, dtype(dst)), bits(exp, dtype(dst)))
    want = set(bits(codes[np.isfinite(vals)], dtype(dst)).tolist())
    assert want <= set(np.unique(bits(got, dtype(dst))).tolist())


def test_qf322f32_pre_scales_once_and_keeps_exceptional_inputs():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_normal(4000).astype(np.float32) * np.float32(1e3),
                        np.array([np.nan, np.inf, -np.inf, 3e38, -3e38, 1e-40], np.float32)])
    acc = tile(x, 256)
    scale = 1.2345678
    s19 = fp19(scale)
    for sat in SATS:
        got = run(acc, "f32", "qf322f32_pre_scalar", scale, sat=sat)
        prod = acc.astype(np.float64) * s19
        exp = nx.float_to(prod, "f32", sat="nosat" if sat is False else "sat")
        exp = np.where(np.isfinite(acc), exp, acc)          # inf / NaN inputs pass through
        np.testing.assert_array_equal(got.view(np.uint32), exp.astype(np.float32).view(np.uint32))
    # finite 3e38 * 1.23 overflows: sat / preserve_nan clamp to the f32 maximum, nosat gives inf
    big = 4003
    assert run(acc, "f32", "qf322f32_pre_scalar", scale, sat=True).reshape(-1)[big] == np.finfo(np.float32).max
    assert run(acc, "f32", "qf322f32_pre_scalar", scale, sat=False).reshape(-1)[big] == np.inf
    assert np.isinf(run(acc, "f32", "qf322f32_pre_scalar", scale, sat=True).reshape(-1)[4001])  # inf input


# ----------------------------------------------------------------------------- s32 accumulators -> floats


@pytest.mark.parametrize("family,dst", [("deqf16", "f16"), ("qs322bf16_pre", "bf16")])
@pytest.mark.parametrize("sat", SATS)
def test_s32_float_modes_vector_reach_every_normal_code(family, dst, sat):
    """x = +-1 with per-column scale = target magnitude: every code with |v| >= 2**-126 (and +-0, +-inf)."""
    codes, vals = float_codes(dst)
    mags = np.unique(np.abs(vals[np.isfinite(vals) & (np.abs(vals) >= 2.0 ** -126)]))
    if dst == "f16":  # f16 subnormals are FP19 normals
        mags = np.unique(np.abs(vals[np.isfinite(vals) & (vals != 0)]))
    reached, cols = set(), 512
    for start in range(0, mags.size, cols):
        part = mags[start:start + cols]
        n = part.size
        acc = np.array([[1] * n, [-1] * n, [0] * n, [2] * n], dtype=np.int32)
        words = [Q.make_word(v, offset_bits=0) for v in part]
        got = run(acc, dst, f"{family}_vec", None, sat=sat, words=words)
        exp = expected_float(acc.astype(np.float64) * part[None, :], dst, sat)
        np.testing.assert_array_equal(bits(got, dtype(dst)), bits(exp, dtype(dst)))
        reached |= set(np.unique(bits(got, dtype(dst))).tolist())
    ok = np.isfinite(vals) & ((np.abs(vals) >= 2.0 ** -126) | (vals == 0) | (dst == "f16"))
    assert set(bits(codes[ok & ~((vals == 0) & np.signbit(vals))], dtype(dst)).tolist()) <= reached


def test_deqf16_scalar_reaches_every_f16_code_with_two_scales():
    _, vals = float_codes("f16")
    fin = vals[np.isfinite(vals)]
    small, large = fin[np.abs(fin) < 128], fin[np.abs(fin) >= 128]
    reached = set()
    for part, scale in ((small, 2.0 ** -24), (large, 2.0 ** -3)):
        x = (part / scale).astype(np.int64).astype(np.int32)
        for sat in SATS:
            got = run_flat(x, "f16", "deqf16_scalar", np.float32(scale), 512, sat=sat)
            exp = expected_float(x.astype(np.float64) * scale, "f16", sat)
            np.testing.assert_array_equal(got.view(np.uint16), exp.view(np.uint16))
        reached |= set(np.unique(got.view(np.uint16)).tolist())
    assert set(fin.astype(np.float16).view(np.uint16).tolist()) - {0x8000} <= reached


def test_qs322bf16_scalar_matches_numerics_over_scale_windows():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.integers(-2 ** 31, 2 ** 31 - 1, 6000), np.arange(-300, 300),
                        [2 ** 31 - 1, -2 ** 31]]).astype(np.int32)
    acc = tile(x, 512)
    for scale in (2.0 ** -126, 2.0 ** -30, 1.0, 3.0, 2.0 ** 96):
        for sat in SATS:
            got = run(acc, "bf16", "qs322bf16_pre_scalar", np.float32(scale), sat=sat)
            exp = expected_float(acc.astype(np.float64) * scale, "bf16", sat)
            np.testing.assert_array_equal(got.view(np.uint16), exp.view(np.uint16))


# ----------------------------------------------------------------------------- integer destinations


def b8_expected(x, scale, offset, signed, f16_stage=False):
    v = np.asarray(x, dtype=np.float64)
    if f16_stage:
        v = nx.float_to(v, "f16", sat="sat").astype(np.float64)
    r = np.rint(v * scale)
    r = np.where(np.isnan(r), 0, r)
    y = np.clip(r, -256, 255).astype(np.int64) + offset
    return np.where(signed, np.clip(y, -128, 127), np.clip(y, 0, 255))


@pytest.mark.parametrize("family,acc_t,f16_stage", [("req8", np.int32, False), ("qf322b8_pre", np.float32, False),
                                                    ("qf162b8_pre", np.float32, True)])
def test_b8_modes_reach_every_s8_and_u8_code(family, acc_t, f16_stage):
    ks = np.arange(-400, 401)
    x = (ks * 2).astype(acc_t)
    if acc_t is np.float32:
        x = np.concatenate([x, (ks * 2 + 1).astype(np.float32) / np.float32(2),  # ties after scaling by 0.5
                            np.array([np.nan, np.inf, -np.inf], np.float32)])
    acc = tile(x, 256)
    for dst, signed in (("s8", True), ("u8", False)):
        got = run(acc, dst, f"{family}_scalar", 0.5)
        exp = b8_expected(acc, 0.5, 0, signed, f16_stage)
        np.testing.assert_array_equal(got.astype(np.int64) if signed else got, exp.astype(dtype(dst).storage))
        assert set(np.unique(got).tolist()) == set(range(-128, 128) if signed else range(256))
    # vector: per-column signed offsets over the whole S9 range and both sign controls
    offsets = np.arange(-256, 256)
    x = np.tile(np.array([[3], [-3], [0], [1000], [-1000]], dtype=acc_t), (1, offsets.size))
    for signed, dst in ((True, "s8"), (False, "u8"), (True, "u8")):
        words = [Q.make_word(0.5, offset=o, offset_bits=9, signed=signed) for o in offsets]
        got = run(x, dst, f"{family}_vec", None, words=words)
        exp = b8_expected(x, 0.5, offsets[None, :], signed, f16_stage)
        np.testing.assert_array_equal((got.astype(np.int64) & 0xFF), exp & 0xFF)


@pytest.mark.parametrize("family,acc_t,f16_stage", [("req4", np.int32, False), ("qf322s4_pre", np.float32, False),
                                                    ("qf162s4_pre", np.float32, True)])
def test_s4_modes_reach_every_s4_value(family, acc_t, f16_stage):
    x = np.arange(-40, 40, dtype=acc_t).reshape(2, 40)
    got = run(x, "s4", f"{family}_scalar", 0.5)
    v = x.astype(np.float64) * 0.5
    exp = np.clip(np.clip(np.rint(v), -16, 15), -8, 7)
    np.testing.assert_array_equal(got, exp.astype(np.int8))
    assert set(np.unique(got).tolist()) == set(range(-8, 8))
    offsets = np.arange(-16, 16)
    xv = np.tile(np.array([[2], [-2], [40], [-40]], dtype=acc_t), (1, offsets.size))
    words = [Q.make_word(1.0, offset=o, offset_bits=5) for o in offsets]
    got = run(xv, "s4", f"{family}_vec", None, words=words)
    exp = np.clip(np.clip(xv.astype(np.int64), -16, 15) + offsets[None, :], -8, 7)
    np.testing.assert_array_equal(got, exp.astype(np.int8))


@pytest.mark.parametrize("family,f16_stage", [("deqs16", False), ("qf162s16_pre", True)])
def test_s16_modes_reach_every_s16_value(family, f16_stage):
    # scalar: x = 2k with scale 0.5 (qf162s16 rounds x to f16 first: exact below 2048)
    k = np.arange(-32768, 32768) if not f16_stage else np.arange(-1024, 1024)
    x = np.concatenate([k * 2, [2 ** 31 - 1, -2 ** 31, 3, -3, 5, -5]]).astype(np.int32)
    got = run_flat(x, "s16", f"{family}_scalar", 0.5, 512)
    v = x.astype(np.float64)
    if f16_stage:
        v = nx.float_to(v, "f16", sat="sat").astype(np.float64)
    exp = np.clip(np.clip(np.rint(v * 0.5), -65536, 65535), -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(got, exp)
    reached = set(np.unique(got).tolist())
    # vector: zero accumulators plus per-column 17-bit offsets reach the remaining values
    offsets = np.concatenate([np.arange(-32768, 32768), [-65536, 65535]])
    for start in range(0, offsets.size, 512):
        off = offsets[start:start + 512]
        xv = np.tile(np.array([[0], [254], [-254], [100000]], dtype=np.int32), (1, off.size))
        words = [Q.make_word(1.0, offset=o, offset_bits=17) for o in off]
        got = run(xv, "s16", f"{family}_vec", None, words=words)
        v = xv.astype(np.float64)
        if f16_stage:
            v = nx.float_to(v, "f16", sat="sat").astype(np.float64)
        exp = np.clip(np.clip(np.rint(v), -65536, 65535) + off[None, :], -32768, 32767).astype(np.int16)
        np.testing.assert_array_equal(got, exp)
        reached |= set(np.unique(got).tolist())
    assert reached == set(range(-32768, 32768))


def test_shift_modes_reach_every_s16_value_on_a2a3():
    v = np.arange(-32768, 32768, dtype=np.int64)
    x = np.concatenate([v * 2, [2 ** 31 - 1, -2 ** 31, -1, 1]]).astype(np.int32)
    got = run_flat(x, "s16", "shifts322s16_scalar", 1, 256, target="A2A3")
    exp = np.clip(x.astype(np.int64) >> 1, -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(got, exp)
    assert set(np.unique(got).tolist()) == set(range(-32768, 32768))
    shifts = np.arange(1, 17)
    xv = np.tile(np.array([[2 ** 31 - 1], [-2 ** 31], [-1], [12345678]], dtype=np.int32), (1, 16))
    words = [Q.make_word(0.0, offset_bits=0, shift=s) for s in shifts]
    got = run(xv, "s16", "shifts322s16_vec", None, target="A2A3", words=words)
    exp = np.clip(xv.astype(np.int64) >> shifts[None, :], -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(got, exp)


def test_deqs32_int_rounds_half_even_and_saturates():
    x = np.array([[1, 3, 5, -1, -3, -5, 2 ** 31 - 1, -2 ** 31]], dtype=np.int32)
    got = run(x, "s32", "deqs32_int_scalar", 0.5)
    np.testing.assert_array_equal(got, [[0, 2, 2, 0, -2, -2, 2 ** 30, -2 ** 30]])
    got = run(x, "s32", "deqs32_int_scalar", 4.0)
    np.testing.assert_array_equal(got, [[4, 12, 20, -4, -12, -20, 2 ** 31 - 1, -2 ** 31]])


def test_no_convert_keeps_the_accumulator_type():
    x = np.array([[1.5, -2.25, np.nan, np.inf]], dtype=np.float32)
    got = run(x, "f32", "no_convert", 0.0)
    np.testing.assert_array_equal(got.view(np.uint32), x.view(np.uint32))


# ----------------------------------------------------------------------------- scale precision, payload dtypes


def test_scalar_and_vector_scales_use_fp19_precision():
    scale = np.float32(1.0 + 2.0 ** -12)      # below FP19 precision: truncated to 1.0
    x = np.array([[1024.0, 2049.0, 3.0, -7.0]], dtype=np.float32)
    got = run(x, "f16", "qf322f16_pre_scalar", scale)
    np.testing.assert_array_equal(got, x.astype(np.float16))
    got = run(x, "f16", "qf322f16_pre_vec", None, words=[Q.make_word(scale, offset_bits=0)] * 4)
    np.testing.assert_array_equal(got, x.astype(np.float16))
    # f16 and bf16 scalar payloads are widened exactly; a Python float is an f32 constant
    for payload in (np.float16(0.333), ml_dtypes.bfloat16(0.333), 0.333, np.float32(0.333)):
        s = fp19(np.float32(np.asarray(payload).astype(np.float32)))
        got = run(x, "f16", "qf322f16_pre_scalar", payload)
        np.testing.assert_array_equal(got, (x.astype(np.float64) * s).astype(np.float16))


@pytest.mark.parametrize("payload_dtype", ["f16", "bf16", "f32"])
def test_vector_scale_field_follows_the_fb_pointer_type(payload_dtype):
    scales = np.array([0.5, 0.3, 3.0, 1.0], dtype=np.float32)
    if payload_dtype == "f32":
        words = [Q.make_word(s, offset_bits=0) for s in scales]
        eff = [fp19(s) for s in scales]
    else:
        st = dtype(payload_dtype).storage
        words = [int(np.array(s, dtype=st).view(np.uint16)) for s in scales]
        eff = [fp19(np.float32(np.array(s, dtype=st))) for s in scales]
    x = np.array([[100.0, -100.0, 7.0, 1e5]], dtype=np.float32)
    got = run(x, "f16", "qf322f16_pre_vec", None, words=words, payload_dtype=payload_dtype)
    exp = nx.float_to(x.astype(np.float64) * np.array(eff), "f16", sat="sat")
    np.testing.assert_array_equal(got, exp)


# ----------------------------------------------------------------------------- activation and clip numerics


@pytest.mark.parametrize("mode", ["normal_relu", "scalar_relu", "vector_relu"])
def test_relu_selects_the_negative_path_multiplier(mode):
    x = np.array([[-8.0, -1.0, 0.0, 3.0, -0.5, np.nan, -np.inf, 5.0]], dtype=np.float32)
    alpha = 0.25
    m = Machine("A5")
    src, ss = load_acc(m, x)
    out = m.gm_alloc((8,), "f16", name="out")
    relu = {"mode": mode}
    if mode == "scalar_relu":
        relu = (alpha, relu)
    elif mode == "vector_relu":
        fb = m.ptr("fb", "f32", 0x400)
        m.write(fb, np.full(8, alpha, np.float32))
        relu = (fb, relu)
    pto.mte_l0c_gm(src, out, 1, 8, ss, 8, 0, 0, pre_quant=(2.0, {"mode": "qf322f16_pre_scalar"}), pre_relu=relu,
                   nz2nd=True, sat=False)
    got = m.read(out, (8,)).astype(np.float64)
    neg_mult = 0.0 if mode == "normal_relu" else alpha       # the alpha replaces the scale (ADR-0085 d.176)
    with np.errstate(invalid="ignore"):
        exp = np.where(x[0] < 0, x[0].astype(np.float64) * neg_mult, x[0].astype(np.float64) * 2.0)
    if mode == "normal_relu":
        exp[6] = 0.0
    np.testing.assert_array_equal(got, exp.astype(np.float16).astype(np.float64))


def test_relu_acts_before_the_offset_and_clip_after_it():
    x = np.array([[-10, -2, 0, 6, 300, 40]], dtype=np.int32)
    words = [Q.make_word(1.0, offset=5, offset_bits=9, signed=True)] * 6
    m = Machine("A5")
    src, ss = load_acc(m, x)
    fb = fb_words(m, words)
    out = m.gm_alloc((6,), "s8", name="out")
    pto.mte_l0c_gm(src, out, 1, 6, ss, 6, 0, 0, pre_quant=(fb, {"mode": "req8_vec"}),
                   pre_relu={"mode": "normal_relu", "clip": 20}, nz2nd=True)
    # negatives -> 0 (then + offset 5); clip 20 after the offset; S9 saturation at 255 before the offset
    np.testing.assert_array_equal(m.read(out, (6,)), [5, 5, 5, 11, 20, 20])


def test_clip_on_f16_destination_and_scalar_relu_on_integers():
    x = np.array([[-100.0, 10.0, 70000.0, 65504.0]], dtype=np.float32)
    m = Machine("A5")
    src, ss = load_acc(m, x)
    out = m.gm_alloc((4,), "f16", name="out")
    pto.mte_l0c_gm(src, out, 1, 4, ss, 4, 0, 0, pre_quant=(1.0, {"mode": "qf322f16_pre_scalar"}),
                   pre_relu=(np.float16(0.5), {"mode": "scalar_relu", "clip": 6.0}), nz2nd=True, sat=False)
    np.testing.assert_array_equal(m.read(out, (4,)), np.array([-50.0, 6.0, 6.0, 6.0], np.float16))
    xi = np.array([[-7, -6, 9]], dtype=np.int32)
    src, ss = load_acc(m, xi, addr=0x1000)
    outi = m.gm_alloc((3,), "s32", name="outi")
    pto.mte_l0c_gm(src, outi, 1, 3, ss, 3, 0, 0, pre_relu=(0.5, {"mode": "scalar_relu"}), nz2nd=True)
    np.testing.assert_array_equal(m.read(outi, (3,)), [-4, -3, 9])   # -3.5 -> -4, -3 (half-even), 9


S32_ALPHA_X = np.array([[-1, -3, -5, -7, -9, 7, 0, -2 ** 31, -(2 ** 31) + 1, 2 ** 31 - 1, -2, -11, -13, -15, -6,
                         -2 ** 30 - 1]], dtype=np.int32)


@pytest.mark.parametrize("relu", ["scalar_relu", "vector_relu"])
@pytest.mark.parametrize("alpha", [0.5, 0.25, 1.5, 2.0, 3.0])
def test_s32_to_s32_activation_rounds_to_nearest_even_then_clamps(relu, alpha):
    """Named choice S32_ACTIVATION_ROUNDING (fixpipe_semantics.md #36): s32 -> s32 without pre_quant, a negative x
    becomes alpha*x rounded to nearest with ties to even (-0.5 -> 0, -1.5 -> -2, -2.5 -> -2, -3.5 -> -4), then
    clamped to s32 (alpha 2 or 3 times -2**31). Truncation or floor would fail here."""
    x = S32_ALPHA_X
    n = x.shape[1]
    m = Machine("A5")
    src, ss = load_acc(m, x)
    out = m.gm_alloc((n,), "s32", name="out")
    if relu == "scalar_relu":
        payload = alpha
    else:
        payload = m.ptr("fb", "f32", 0x400)
        m.write(payload, np.full(n, alpha, np.float32))
    pto.mte_l0c_gm(src, out, 1, n, ss, n, 0, 0, pre_relu=(payload, {"mode": relu}), nz2nd=True)
    exp = [int(v) if v >= 0 else max(-2 ** 31, min(2 ** 31 - 1, round(Fraction(int(v)) * Fraction(alpha))))
           for v in x[0]]                       # Fraction rounds half to even
    np.testing.assert_array_equal(m.read(out, (n,)), exp)


def test_mode_table_rows_are_consistent():
    assert len(Q.QUANT_MODES) == 39
    tp = [r.tp_code for r in Q.QUANT_MODES.values() if r.tp_code is not None]
    assert sorted(tp) == list(range(37))  # PTOAS target-profile codes 0..36, each once
    for row in Q.QUANT_MODES.values():
        assert row.acc and (row.dst or row.name == "no_convert")
        assert row.name.endswith(("_vec", "_scalar")) or row.payload == "ignored"
        if row.offset_bits:
            assert row.inter_bits == row.offset_bits
    assert Q.QUANT_MODES["qs322bf16_pre_vec"].cce_code == 39 and Q.QUANT_MODES["req8_vec"].cce_code == 2


def test_parameter_word_fields_round_trip():
    w = Q.make_word(0.75, offset=-3, offset_bits=9, signed=True, shift=5)
    assert Q.word_scale(np.array([w]))[0] == np.float32(0.75)
    assert Q.word_offset(np.array([w]), 9)[0] == -3
    assert Q.word_signed(np.array([w]))[0]
    assert Q.word_shift(np.array([w]))[0] == 5
    assert Q.word_offset(np.array([Q.make_word(1.0, offset=-65536, offset_bits=17)]), 17)[0] == -65536
    assert Q.invalid_scale(np.array([0.0, -1.0, np.inf, 2.0 ** -127, 1.0], np.float32)).tolist() == \
        [True, True, True, True, False]
    assert Q.invalid_alpha(np.array([0.0, -0.0, 0.5, np.nan], np.float32)).tolist() == [False, True, False, True]


# ----------------------------------------------------------------------------- all modes x shapes (hypothesis)

_MODES = [name for name, row in Q.QUANT_MODES.items() if name != "no_convert"]


@st.composite
def quant_cases(draw):
    name = draw(st.sampled_from(_MODES))
    row = Q.QUANT_MODES[name]
    dst = draw(st.sampled_from(row.dst))
    m = draw(st.integers(1, 20))
    n = draw(st.integers(1, 40))
    layout = draw(st.sampled_from(["nz2nd", "nz2dn", "normal"] if dtype(dst).name != "s4" else ["nz2nd"]))
    if dtype(dst).name == "s4":
        n += n % 2
    relu = draw(st.sampled_from(["no_relu", "normal_relu", "scalar_relu", "vector_relu"]))
    clip = None
    if dst in Q.CLIP_DESTINATIONS and draw(st.booleans()):
        d = dtype(dst)
        clip = draw(st.floats(-100, 100).map(lambda v: float(np.float16(v)))) if dst == "f16" else \
            draw(st.integers(0 if dst == "u8" else d.min, d.max if dst != "u8" else 300))
    return dict(name=name, dst=dst, m=m, n=n, layout=layout, relu=relu, clip=clip,
                sat=draw(st.sampled_from([True, False, "preserve_nan"])), seed=draw(st.integers(0, 2 ** 20)))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quant_cases())
def test_every_mode_with_relu_clip_and_layout_matches_the_exact_reference(case):
    row = Q.QUANT_MODES[case["name"]]
    rng = np.random.default_rng(case["seed"])
    m, n, dst = case["m"], case["n"], case["dst"]
    target = "A2A3" if "a5" not in row.archs else "A5"
    if row.acc == ("s32",):
        x = rng.integers(-2 ** 20, 2 ** 20, (m, n)).astype(np.int32)
        x.flat[rng.integers(0, x.size, 3)] = rng.choice([2 ** 31 - 1, -2 ** 31, 0], 3)
    else:
        x = (rng.standard_normal((m, n)) * 10.0 ** rng.integers(-3, 6, (m, n))).astype(np.float32)
        x.flat[rng.integers(0, x.size, 3)] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0], np.float32), 3)
    mach = Machine(target)
    src, ss = load_acc(mach, x)
    kw, ref = {}, dict(mode=case["name"], dst=dst, sat=SAT_NAME[case["sat"]])
    scales = (rng.uniform(0.01, 4.0, n)).astype(np.float32)
    offsets = rng.integers(-(1 << (row.offset_bits - 1)), 1 << (row.offset_bits - 1), n) if row.offset_bits \
        else np.zeros(n, np.int64)
    signs = rng.integers(0, 2, n).astype(bool)
    shifts = rng.integers(1, 17, n)
    if row.payload == "vec":
        words = [Q.make_word(s, offset=o, offset_bits=row.offset_bits, signed=g and row.sign_from_payload)
                 for s, o, g in zip(scales, offsets, signs)]
        kw["pre_quant"] = (fb_words(mach, words), {"mode": row.name})
        ref.update(scale=scales, offset=offsets, signed=signs if row.sign_from_payload else None)
    elif row.payload == "shift_vec":
        kw["pre_quant"] = (fb_words(mach, [Q.make_word(0.0, offset_bits=0, shift=s) for s in shifts]),
                           {"mode": row.name})
        ref.update(shift=shifts)
    elif row.payload == "shift_scalar":
        kw["pre_quant"] = (int(shifts[0]), {"mode": row.name})
        ref.update(shift=int(shifts[0]))
    else:
        kw["pre_quant"] = (float(scales[0]), {"mode": row.name})
        ref.update(scale=float(scales[0]) if row.payload == "scalar" else 1.0)
    relu = case["relu"]
    alphas = rng.uniform(0.0, 2.0, n).astype(np.float32)
    relu_kw = {"mode": relu}
    if case["clip"] is not None:
        relu_kw["clip"] = case["clip"]
    if relu == "scalar_relu":
        kw["pre_relu"] = (float(alphas[0]), relu_kw)
        ref.update(relu=relu, alpha=float(alphas[0]))
    elif relu == "vector_relu":
        fb = mach.ptr("fb", "f32", 0x400)
        mach.write(fb, alphas)
        kw["pre_relu"] = (fb, relu_kw)
        ref.update(relu=relu, alpha=alphas)
    elif relu != "no_relu" or case["clip"] is not None:
        kw["pre_relu"] = relu_kw
        ref.update(relu=relu)
    ref["clip"] = case["clip"]
    d = dtype(dst)
    c0d = 64 if d.bits == 4 else 32 if d.bits == 8 else 16
    layout = case["layout"]
    stride = {"nz2nd": n, "nz2dn": m}.get(layout, m * c0d)
    if layout == "nz2nd":
        kw["nz2nd"] = True
    elif layout == "nz2dn":
        kw["nz2dn"] = 1
    kw["sat"] = case["sat"]
    off = ref_offsets(layout, m, n, stride, c0d)
    total = int(off.max()) + 1 + 4      # a few elements past the tile must keep the fill pattern
    out = mach.gm_alloc((total,), d, name="out")
    pto.mte_l0c_gm(src, out, m, n, ss, stride, 0, 0, **kw)
    exp = ref_convert(x, **ref)
    if d.name == "s4":
        got = unpack_s4(mach.read(out, (d.nbytes(total),), "u8"), total)
        np.testing.assert_array_equal(got[off.reshape(-1)], exp.reshape(-1))
        return
    got = mach.read(out, (total,))
    exp_region = np.full(d.nbytes(total), 0xFF, np.uint8).view(d.storage).copy()
    exp_region[off.reshape(-1)] = exp.reshape(-1)
    np.testing.assert_array_equal(got.view(np.uint8), exp_region.view(np.uint8))
