"""pto.mad* numerics (against float64 numpy references), clauses and every constraint."""
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core import numerics as _numerics
from pto_core import Machine, MachineOptions, dtype, get_target, layout, pto
from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnknownName, UnsupportedOp
from pto_core.ops import get_op
from pto_core.ops.registry import make_call
from kernel_helpers import handoff

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.default_rng(99)
F32_MAX = float(np.finfo(np.float32).max)


def ceil_to(a, b):
    return -(-a // b) * b


def l0a_layout(target):
    return "Zz" if get_target(target).arch in ("a2a3", "kirinx90") else "Nz"


def codes_of(values, dt):
    """Storage codes (uint of element size or nibble codes) of exactly representable values."""
    d = dtype(dt)
    if dt == "e2m1x2":
        return np.asarray(values, np.float32).astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    if dt == "e1m2x2":
        table = {v: c for c in range(16) for v in [_numerics.to_f32(np.array([c], np.uint8), "e1m2")[0]]}
        return np.vectorize(lambda v: table[np.float32(v)])(values).astype(np.uint8)
    arr = np.asarray(values).astype(d.storage)
    return arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[d.bits // 8])


def write_storage(m, ptr, logical_codes, lay, dt, fractal=512):
    d = dtype(dt)
    r, c = logical_codes.shape
    om = layout.offset_map(lay, r, c, d, fractal)
    st_ = np.zeros(r * c, logical_codes.dtype)
    st_[om] = logical_codes
    if d.bits == 4:
        st_ = (st_[0::2] | (st_[1::2] << 4)).astype(np.uint8)
    m.write(ptr.cast("u8"), np.ascontiguousarray(st_).view(np.uint8))


def stage(m, target, a_vals, b_vals, da, db, *, gemv=False, a_addr=0, b_addr=0):
    """Write logical A (M x K) into L0A (target layout or dense GEMV row) and B (K x N) into L0B (Zn)."""
    mm, k = a_vals.shape
    n = b_vals.shape[1]
    dA, dB = dtype(da), dtype(db)
    lhs = m.ptr("l0a", da, a_addr)
    rhs = m.ptr("l0b", db, b_addr)
    if gemv:
        codes = codes_of(a_vals.reshape(-1), da)
        if dA.bits == 4:
            codes = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
        m.write(lhs.cast("u8"), np.ascontiguousarray(codes).view(np.uint8))
    else:
        A = np.zeros((ceil_to(mm, 16), ceil_to(k, dA.c0)), np.float32)
        A[:mm, :k] = a_vals
        write_storage(m, lhs, codes_of(A, da), l0a_layout(target), da)
    B = np.zeros((ceil_to(k, dB.c0), ceil_to(n, 16)), np.float32)
    B[:k, :n] = b_vals
    write_storage(m, rhs, codes_of(B, db), "Zn", db)
    return lhs, rhs


def read_acc(m, dst, mm, n):
    d = dst.dtype
    r, c = ceil_to(mm, 16), ceil_to(n, 16)
    return layout.unpack(m.read(dst, (r * c,)), "Nz", r, c, d, fractal=1024)[:mm, :n]


def small_ints(shape, lo=-4, hi=4):
    return RNG.integers(lo, hi + 1, shape).astype(np.float32)


# ============================================================================ exact float forms on every target


LEGAL = sorted({(t, a, b, c) for t in ("A2A3", "A5", "Kirin9030", "KirinX90", "Ascend310", "Ascend910B1")
                for (a, b, c) in get_target(t).mad_dtypes if "hif8" not in (a, b)})


@pytest.mark.parametrize("target,a,b,c", LEGAL)
def test_every_legal_triple_is_exact_on_small_integers(target, a, b, c):
    m = Machine(target)
    mm, n, k = 20, 33, 70
    lo = 0 if dtype(a).kind == "u" else -3
    A, B = small_ints((mm, k), lo, 3), small_ints((k, n), 0 if dtype(b).kind == "u" else -3, 3)
    lhs, rhs = stage(m, target, A, B, a, b)
    dst = m.ptr("l0c", c, 0)
    pto.mad(lhs, rhs, dst, mm, n, k, sat=None if dtype(a).is_int else True)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.array_equal(read_acc(m, dst, mm, n).astype(np.float64), ref)
    assert m.reports == []


@SETTINGS
@given(mm=st.integers(1, 40), n=st.integers(1, 40), k=st.integers(1, 90), dt=st.sampled_from(["f16", "bf16", "f32"]),
       target=st.sampled_from(["A2A3", "A5"]), acc=st.booleans(), data=st.data())
def test_float_mad_matches_float64_reference(mm, n, k, dt, target, acc, data):
    m = Machine(target)
    d = dtype(dt)
    A = RNG.standard_normal((mm, k)).astype(d.storage).astype(np.float32)
    B = RNG.standard_normal((k, n)).astype(d.storage).astype(np.float32)
    lhs, rhs = stage(m, target, A, B, dt, dt, gemv=mm == 1)      # m == 1: GEMV organisation (the default)
    dst = m.ptr("l0c", "f32", 0)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    if acc:
        C0 = RNG.standard_normal((ceil_to(mm, 16), ceil_to(n, 16))).astype(np.float32)
        m.write(dst, layout.pack(C0, "Nz", "f32", fractal=1024))
        pto.mad_acc(lhs, rhs, dst, mm, n, k)
        ref = ref + C0[:mm, :n]
    else:
        pto.mad(lhs, rhs, dst, mm, n, k)
    got = read_acc(m, dst, mm, n).astype(np.float64)
    bound = (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64) + (np.abs(C0[:mm, :n]) if acc else 0))
    assert np.all(np.abs(got - ref) <= (k + 2) * 2.0 ** -23 * bound + 1e-30)


def test_f16_products_are_exact_in_f32():
    # (1 + 2**-10)**2 = 1 + 2**-9 + 2**-20 needs 21 significant bits: exact in f32, not in f16
    m = Machine("A2A3")
    v = 1 + 2.0 ** -10
    A = np.full((1, 1), v, np.float32)
    lhs, rhs = stage(m, "A2A3", A, A, "f16", "f16")
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 1, 1, 1, disable_gemv=True)
    assert read_acc(m, dst, 1, 1)[0, 0] == np.float32(1 + 2.0 ** -9 + 2.0 ** -20)


def test_f16_accumulator_rounds_f32_sum_once_to_f16():
    m = Machine("Kirin9030")
    # 1024 + 1 + 1 is 1026 in f32; rounding each partial sum to f16 (ulp 1 at 1024, ties to even) would give 1024
    A = np.array([[1024.0, 1.0, 1.0]], np.float32)
    B = np.ones((3, 1), np.float32)
    lhs, rhs = stage(m, "Kirin9030", A, B, "f16", "f16")
    dst = m.ptr("l0c", "f16", 0)
    pto.mad(lhs, rhs, dst, 1, 1, 3, disable_gemv=True)
    assert read_acc(m, dst, 1, 1)[0, 0] == np.float16(1026)
    # one rounding of the exact sum: 2048 + 1 rounds (tie) to even = 2048, 2048 + 3 -> 2052 (ulp 2)
    A2 = np.array([[2048.0, 1.0, 2.0]], np.float32)
    lhs, rhs = stage(m, "Kirin9030", A2, np.ones((3, 1), np.float32), "f16", "f16")
    pto.mad(lhs, rhs, dst, 1, 1, 3, disable_gemv=True)
    assert read_acc(m, dst, 1, 1)[0, 0] == np.float16(2052)


def test_integer_mad_is_exact_and_wraps_to_int32():
    m = Machine("A2A3")
    mm, n, k = 16, 16, 4095
    A = np.full((mm, k), -128, np.float32)
    B = np.full((k, n), -128, np.float32)
    lhs, rhs = stage(m, "A2A3", A, B, "s8", "s8")
    dst = m.ptr("l0c", "s32", 0)
    pto.mad(lhs, rhs, dst, mm, n, k)
    assert (read_acc(m, dst, mm, n) == 4095 * 16384).all()
    for _ in range(32):                               # 33 * 4095 * 16384 = 2214060032 > 2**31 - 1: wraps
        pto.mad_acc(lhs, rhs, dst, mm, n, k)
    exp = np.int64(33 * 4095 * 16384)
    assert (read_acc(m, dst, mm, n) == np.int32(exp - 2 ** 32)).all()


def test_legacy_unsigned_triples():
    m = Machine("Ascend310")
    A = small_ints((5, 40), 0, 255)
    B = small_ints((40, 7), 0, 255)
    lhs, rhs = stage(m, "Ascend310", A, B, "u8", "u8")
    dst = m.ptr("l0c", "u32", 0)
    pto.mad(lhs, rhs, dst, 5, 7, 40)
    assert np.array_equal(read_acc(m, dst, 5, 7).astype(np.int64), (A @ B).astype(np.int64))
    B2 = small_ints((40, 7), -128, 127)
    lhs, rhs = stage(m, "Ascend310", A, B2, "u8", "s8")
    dst2 = m.ptr("l0c", "s32", 0x4000)
    pto.mad(lhs, rhs, dst2, 5, 7, 40)
    assert np.array_equal(read_acc(m, dst2, 5, 7).astype(np.int64), (A.astype(np.int64) @ B2.astype(np.int64)))


def test_mad_bias_seeds_with_bias_and_acc_adds():
    m = Machine("A2A3")
    mm, n, k = 17, 20, 33
    A, B = small_ints((mm, k)), small_ints((k, n))
    bias = RNG.integers(1, 10, n).astype(np.float32)
    lhs, rhs = stage(m, "A2A3", A, B, "f16", "f16")
    bt = m.ptr("bt", "f32", 0)
    m.write(bt, bias)
    dst = m.ptr("l0c", "f32", 0)
    pto.mad_bias(lhs, rhs, dst, bt, mm, n, k)
    ref = A @ B + bias
    assert np.array_equal(read_acc(m, dst, mm, n), ref)
    pto.mad_acc(lhs, rhs, dst, mm, n, k)
    assert np.array_equal(read_acc(m, dst, mm, n), ref + A @ B)


def test_f16_accumulator_bias_from_32_bit_slots():
    m = Machine("Kirin9030")
    A, B = small_ints((16, 20)), small_ints((20, 16))
    bias = RNG.integers(1, 10, 32).astype(np.float16)
    l1 = m.ptr("l1", "f16", 0)
    m.write(l1, bias)
    bt = m.ptr("bt", "f16", 0)
    pto.mte_l1_bt(l1, bt, 1, nburst=(1, 0, 0))          # 64 B = 32 f16 values -> 32 slots of 4 bytes
    lhs, rhs = stage(m, "Kirin9030", A, B, "f16", "f16")
    handoff("MTE1", "M")
    dst = m.ptr("l0c", "f16", 0)
    pto.mad_bias(lhs, rhs, dst, bt, 16, 16, 20)
    assert np.array_equal(read_acc(m, dst, 16, 16).astype(np.float64), A @ B + bias[:16].astype(np.float64))


def test_int_mad_bias():
    m = Machine("A5")
    A, B = small_ints((8, 7)), small_ints((7, 6))
    bias = RNG.integers(1, 10, 6).astype(np.int32)
    lhs, rhs = stage(m, "A5", A, B, "s8", "s8")
    bt = m.ptr("bt", "s32", 0)
    m.write(bt, bias)
    dst = m.ptr("l0c", "s32", 0)
    pto.mad_bias(lhs, rhs, dst, bt, 8, 6, 7)
    assert np.array_equal(read_acc(m, dst, 8, 6), (A @ B).astype(np.int32) + bias)


# ============================================================================ GEMV


@pytest.mark.parametrize("target", ["A2A3", "A5"])
def test_gemv_reads_a_dense_row_and_disable_gemv_the_normal_tile(target):
    m = Machine(target)
    k, n = 110, 50
    a = small_ints((1, k))
    B = small_ints((k, n))
    lhs, rhs = stage(m, target, a, B, "f16", "f16", gemv=True)
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 1, n, k)
    full = read_acc(m, dst, 16, n)
    assert np.array_equal(full[0], (a @ B)[0]) and (full[1:] == 0).all()
    # the same bytes interpreted as a normal 16-row tile give a different row 0 -> the organisation matters
    lhs2, _ = stage(m, target, a, B, "f16", "f16")
    pto.mad(lhs2, rhs, dst, 1, n, k, disable_gemv=True)
    assert np.array_equal(read_acc(m, dst, 1, n), a @ B)
    assert m.reports == []


# ============================================================================ TF32, sat / nosat


def test_tf32_rounds_inputs_before_multiplying():
    m = Machine("A2A3")
    # 4098 is a TF32 tie between 4096 and 4100: round_even -> 4096, round_away -> 4100; 4097 -> 4096 either way
    A = np.array([[4098.0, 4097.0]], np.float32)
    B = np.ones((2, 1), np.float32)
    lhs, rhs = stage(m, "A2A3", A, B, "f32", "f32")
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 1, 1, 2, disable_gemv=True)
    assert read_acc(m, dst, 1, 1)[0, 0] == 8195
    pto.mad(lhs, rhs, dst, 1, 1, 2, disable_gemv=True, tf32_mode="round_even")
    assert read_acc(m, dst, 1, 1)[0, 0] == 8192
    pto.mad(lhs, rhs, dst, 1, 1, 2, disable_gemv=True, tf32_mode="round_away")
    assert read_acc(m, dst, 1, 1)[0, 0] == 8196


def _inf_case(target, **clauses):
    m = Machine(target)
    A = np.array([[np.inf, 1.0], [np.nan, 2.0]], np.float32)
    B = np.array([[1.0], [1.0]], np.float32)
    lhs, rhs = stage(m, target, A, B, "f16", "f16")
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 2, 1, 2, **clauses)
    return read_acc(m, dst, 2, 1)[:, 0]


def test_sat_normalises_exceptional_inputs_and_nosat_propagates():
    sat = _inf_case("A2A3", sat=True)
    assert sat[0] == np.float32(65504 + 1) and sat[1] == 2          # inf -> f16 max, NaN -> 0
    nosat = _inf_case("A2A3", sat=False)
    assert np.isinf(nosat[0]) and np.isnan(nosat[1])
    assert np.isinf(_inf_case("A2A3")[0])                            # A2A3 default: inf_nan
    assert _inf_case("Ascend310")[0] == np.float32(65505)           # legacy default: saturation
    forced = Machine("A2A3", options=MachineOptions(overflow_mode="saturation"))
    assert forced.overflow_mode == "saturation"


def test_sat_saturates_result_overflow():
    m = Machine("A2A3")
    big = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    A = np.array([[big, big]], np.float32)
    B = np.array([[big], [big]], np.float32)
    lhs, rhs = stage(m, "A2A3", A, B, "bf16", "bf16")
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 1, 1, 2, disable_gemv=True, sat=True)
    assert read_acc(m, dst, 1, 1)[0, 0] == F32_MAX
    pto.mad(lhs, rhs, dst, 1, 1, 2, disable_gemv=True, sat=False)
    assert np.isinf(read_acc(m, dst, 1, 1)[0, 0])


# ============================================================================ MX


def stage_scales(m, lhs, rhs, sA, sB):
    """Write E8M0 scale tiles (left Zz 16x2 fragments, right Nn) at data address / 16 through L1 + MX loads."""
    mm, groups = sA.shape
    n = sB.shape[1]
    pairs = -(-groups // 2)
    rows, cols = ceil_to(mm, 16), ceil_to(n, 16)
    left = np.full((rows, 2 * pairs), 127, np.uint8)
    left[:mm, :groups] = sA
    lfrag = left.reshape(rows // 16, 16, pairs, 2).transpose(0, 2, 1, 3).reshape(-1)
    right = np.full((2 * pairs, cols), 127, np.uint8)
    right[:groups, :n] = sB
    rfrag = right.reshape(pairs, 2, cols // 16, 16).transpose(2, 0, 3, 1).reshape(-1)
    l1a, l1b = m.ptr("l1", "e8m0", 0x40000), m.ptr("l1", "e8m0", 0x60000)
    m.write(l1a.cast("u8"), lfrag)
    m.write(l1b.cast("u8"), rfrag)
    k = groups * 32
    pto.mte_l1_l0a_mx(l1a, lhs, mm, k, 0, 0)
    pto.mte_l1_l0b_mx(l1b, rhs, k, n, 0, 0)
    handoff("MTE1", "M")


@pytest.mark.parametrize("da,db", [("e4m3", "e4m3"), ("e5m2", "e4m3"), ("e2m1x2", "e2m1x2"), ("e1m2x2", "e2m1x2")])
@pytest.mark.parametrize("kind", ["mad_mx", "mad_mx_acc", "mad_mx_bias"])
def test_mx_mad_applies_one_scale_per_32_k(da, db, kind):
    m = Machine("A5")
    mm, n, k = 20, 24, 96
    vals = {"e4m3": [-2, -1, 0, 1, 2, 3], "e5m2": [-2, -1, 0, 1, 2], "e2m1x2": [-3, -1.5, 0, 0.5, 2, 6],
            "e1m2x2": [-1.75, -0.5, 0, 0.25, 1.25]}
    A = RNG.choice(vals[da], (mm, k)).astype(np.float32)
    B = RNG.choice(vals[db], (k, n)).astype(np.float32)
    lhs, rhs = stage(m, "A5", A, B, da, db, a_addr=0x2000, b_addr=0x4000)
    sA = RNG.integers(125, 130, (mm, 3)).astype(np.uint8)
    sB = RNG.integers(125, 130, (3, n)).astype(np.uint8)
    stage_scales(m, lhs, rhs, sA, sB)
    dst = m.ptr("l0c", "f32", 0)
    As = A * np.repeat(2.0 ** (sA.astype(np.float64) - 127), 32, axis=1)
    Bs = B * np.repeat(2.0 ** (sB.astype(np.float64) - 127), 32, axis=0)
    ref = As @ Bs
    if kind == "mad_mx":
        pto.mad_mx(lhs, rhs, dst, mm, n, k)
    elif kind == "mad_mx_acc":
        pto.mad_mx(lhs, rhs, dst, mm, n, k)
        pto.mad_mx_acc(lhs, rhs, dst, mm, n, k)
        ref = 2 * ref
    else:
        bias = RNG.integers(1, 10, n).astype(np.float32)
        bt = m.ptr("bt", "f32", 0)
        m.write(bt, bias)
        pto.mad_mx_bias(lhs, rhs, dst, bt, mm, n, k)
        ref = ref + bias
    assert np.array_equal(read_acc(m, dst, mm, n).astype(np.float64), ref)
    assert m.reports == []


def test_mx_scale_loads_take_the_vpto_two_extent_form():
    """``mte_l1_l0a_mx %src, %dst, %m, %k`` (the VPTO op pages) = the same fragments from (0, 0)."""
    m = Machine("A5")
    l1 = m.ptr("l1", "e8m0", 0)
    m.write(l1.cast("u8"), np.arange(128, dtype=np.uint8))
    lhs, rhs = m.ptr("l0a", "e4m3", 0x800), m.ptr("l0b", "e4m3", 0x800)
    pto.mte_l1_l0a_mx(l1, lhs, 20, 96)                  # 2 fragment rows x 2 pairs
    pto.mte_l1_l0b_mx(l1, rhs, 96, 20, 0, 0)
    got_a = m.read(m.ptr("l0a_scale", "u8", 0x80), (128,))
    assert np.array_equal(got_a, m.read(m.ptr("l0b_scale", "u8", 0x80), (128,)))
    assert np.array_equal(got_a, np.arange(128, dtype=np.uint8))
    with pytest.raises(IllegalOperand, match="takes 2 operands .* or 4"):
        pto.mte_l1_l0a_mx(l1, lhs, 20, 96, 0)


def test_gemv_mx_reads_the_left_scales_as_one_dense_row():
    """GEMV (m = 1): the one-row scale tile is dense (group g at byte g), like the dense data row
    (pto-isa RunTGEMVMX: a 1 x scaleK scale tile; PTOAS gemv_mx ST golden)."""
    m = Machine("A5")
    k, n = 256, 20
    a = RNG.choice([-2, -1, 0, 1, 2, 3], (1, k)).astype(np.float32)
    B = RNG.choice([-2, -1, 0, 1, 2], (k, n)).astype(np.float32)
    lhs, rhs = stage(m, "A5", a, B, "e4m3", "e5m2", gemv=True)
    sA = np.array([[127, 128, 129, 126, 130, 127, 128, 125]], np.uint8)
    sB = RNG.integers(126, 129, (8, n)).astype(np.uint8)
    stage_scales(m, lhs, rhs, np.full((1, 8), 127, np.uint8), sB)       # right scales (and a left placeholder)
    m.write(m.ptr("l0a_scale", "u8", lhs.addr // 16), np.concatenate([sA[0], np.zeros(120, np.uint8)]))
    dst = m.ptr("l0c", "f32", 0)
    pto.mad_mx(lhs, rhs, dst, 1, n, k)
    ref = (a * np.repeat(2.0 ** (sA.astype(np.float64) - 127), 32, axis=1)) @ \
        (B * np.repeat(2.0 ** (sB.astype(np.float64) - 127), 32, axis=0))
    assert np.array_equal(read_acc(m, dst, 1, n).astype(np.float64), ref)
    assert m.reports == []


def test_mx_k_not_multiple_of_32_and_nan_scale():
    m = Machine("A5")
    mm, n, k = 3, 5, 50
    A, B = small_ints((mm, k), -2, 2), small_ints((k, n), -2, 2)
    lhs, rhs = stage(m, "A5", A, B, "e4m3", "e4m3")
    sA = np.full((mm, 2), 128, np.uint8)
    sB = np.full((2, n), 127, np.uint8)
    sB[1, 0] = 0xFF                                       # E8M0 NaN
    stage_scales(m, lhs, rhs, sA, sB)
    dst = m.ptr("l0c", "f32", 0)
    pto.mad_mx(lhs, rhs, dst, mm, n, k)
    got = read_acc(m, dst, mm, n)
    assert np.isnan(got[:, 0]).all()
    assert np.array_equal(got[:, 1:], 2 * (A @ B)[:, 1:])


def test_hif8_mad_uses_numerics_decode():
    import pto_core.numerics as nm
    m = Machine("A5")
    rng = np.random.default_rng(2024)
    codes_a = rng.integers(0, 256, (16, 64)).astype(np.uint8)
    codes_b = rng.integers(0, 256, (64, 16)).astype(np.uint8)
    va, vb = nm.to_f32(codes_a, "hif8"), nm.to_f32(codes_b, "hif8")
    codes_a = np.where(np.isfinite(va), codes_a, 0)
    codes_b = np.where(np.isfinite(vb), codes_b, 0)
    lhs, rhs = m.ptr("l0a", "hif8", 0), m.ptr("l0b", "hif8", 0)
    write_storage(m, lhs, codes_a, "Nz", "hif8")
    write_storage(m, rhs, codes_b, "Zn", "hif8")
    dst = m.ptr("l0c", "f32", 0)
    pto.mad(lhs, rhs, dst, 16, 16, 64)
    a64 = nm.to_f32(codes_a, "hif8").astype(np.float64)
    b64 = nm.to_f32(codes_b, "hif8").astype(np.float64)
    ref = a64 @ b64
    got = read_acc(m, dst, 16, 16).astype(np.float64)
    # f32 accumulation of 64 exact products: error <= 64 ulp-ish of sum |a||b| (cancellation-aware bound)
    bound = 64 * 2.0 ** -24 * (np.abs(a64) @ np.abs(b64)) + 1e-30
    assert np.all(np.abs(got - ref) <= bound)


# ============================================================================ clauses


class _Recorder:
    def __init__(self):
        self.published = []
        self.checked = []

    def unit_flag_check(self, buf, lo, hi):
        self.checked.append((buf.space, lo, hi))

    def begin_op(self, *a):
        pass

    def on_access(self, *a):
        pass

    def unit_flag_publish(self, buf, lo, hi):
        self.published.append((buf.space, lo, hi))

    def unit_flag_consume(self, *a):
        pass

    def end_kernel(self):
        return []


def test_unit_flag_check_and_set_publishes_the_dst_tile_and_check_only_does_not():
    m = Machine("A2A3")
    lhs, rhs = stage(m, "A2A3", small_ints((20, 32)), small_ints((32, 20)), "f16", "f16")
    rec = _Recorder()
    m.context(0).hazards = rec
    dst = m.ptr("l0c", "f32", 0x400)
    pto.mad(lhs, rhs, dst, 20, 20, 32, unit_flag="check_only")
    assert rec.published == [] and rec.checked == [("l0c", 0x400, 0x400 + 32 * 32 * 4)]
    pto.mad_acc(lhs, rhs, dst, 20, 20, 32, unit_flag="check_and_set", n_dir=True)
    assert rec.published == [("l0c", 0x400, 0x400 + 32 * 32 * 4)] and len(rec.checked) == 2
    pto.mad(lhs, rhs, dst, 20, 20, 32)
    assert len(rec.checked) == 2  # no unit_flag clause: no handshake


def test_n_dir_has_no_numeric_effect():
    m = Machine("A5")
    A, B = small_ints((30, 40)), small_ints((40, 30))
    lhs, rhs = stage(m, "A5", A, B, "bf16", "bf16")
    d1, d2 = m.ptr("l0c", "f32", 0), m.ptr("l0c", "f32", 0x8000)
    pto.mad(lhs, rhs, d1, 30, 30, 40)
    pto.mad(lhs, rhs, d2, 30, 30, 40, n_dir=True)
    assert np.array_equal(read_acc(m, d1, 30, 30), read_acc(m, d2, 30, 30))


def test_uninitialised_valid_region_is_reported_but_padding_is_not():
    m = Machine("A2A3")
    lhs, rhs = stage(m, "A2A3", small_ints((20, 32)), small_ints((32, 20)), "f16", "f16")
    buf = m.cores[0].buffer("l0a")
    dst = m.ptr("l0c", "f32", 0)
    buf.written[:] = False
    rows_written = np.zeros((32, 32), bool)
    rows_written[:20] = True                           # padding rows 20..31 never written
    buf.written[:32 * 32 * 2] = np.repeat(layout.pack(rows_written, "Zz", "f16"), 2)
    buf.known.clear()                                  # flags poked by hand: drop the known-written ranges
    pto.mad(lhs, rhs, dst, 20, 20, 32)
    assert m.reports == []
    buf.written[:2] = False                            # element (0, 0) of the valid region
    buf.known.clear()
    pto.mad(lhs, rhs, dst, 20, 20, 32)
    assert len(m.reports) == 1 and "pto.mad operand %lhs uses 1 element(s)" in m.reports[0][1]
    strict = Machine("A2A3", options=MachineOptions(uninitialized="raise"))
    lhs, rhs = strict.ptr("l0a", "f16", 0), strict.ptr("l0b", "f16", 0)
    from pto_core.errors import UninitializedRead
    with pytest.raises(UninitializedRead, match="nothing wrote") as e:
        pto.mad(lhs, rhs, strict.ptr("l0c", "f32", 0), 16, 16, 16)
    assert e.value.operand == "%lhs"


# ============================================================================ constraints (one failing case each)


def _m(target="A2A3"):
    m = Machine(target)
    return m, m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)


def test_tf32_mode_requires_f32():
    m = Machine("A2A3")
    with pytest.raises(IllegalOperand, match="tf32_mode requires f32") as e:
        pto.mad(m.ptr("l0a", "bf16", 0), m.ptr("l0b", "bf16", 0), m.ptr("l0c", "f32", 0), 16, 16, 16,
                tf32_mode="round_even")
    assert e.value.operand == "tf32_mode" and "bf16" in str(e.value)


def test_sat_rejected_on_integer_mad():
    m = Machine("A2A3")
    for sat in (True, False):
        with pytest.raises(IllegalOperand, match="requires a floating") as e:
            pto.mad(m.ptr("l0a", "s8", 0), m.ptr("l0b", "s8", 0), m.ptr("l0c", "s32", 0), 16, 16, 32, sat=sat)
        assert e.value.operand == ("sat" if sat else "nosat")


def test_preserve_nan_is_not_a_mad_mode():
    m, a, b, c = _m()
    with pytest.raises(IllegalOperand, match="FIXPIPE mode"):
        pto.mad(a, b, c, 16, 16, 16, sat="preserve_nan")


def test_odd_k_rejected_for_packed_4_bit():
    m = Machine("A5")
    with pytest.raises(IllegalOperand, match="even K") as e:
        pto.mad_mx(m.ptr("l0a", "e2m1x2", 0), m.ptr("l0b", "e2m1x2", 0), m.ptr("l0c", "f32", 0), 16, 16, 63)
    assert e.value.operand == "%k"


@pytest.mark.parametrize("which,vals", [("%m", (0, 16, 16)), ("%n", (16, 4096, 16)), ("%k", (16, 16, -1)),
                                        ("%m", (4096, 16, 16))])
def test_mnk_outside_1_4095(which, vals):
    m, a, b, c = _m()
    with pytest.raises(IllegalOperand, match=r"outside \[1, 4095\]") as e:
        pto.mad(a, b, c, *vals)
    assert e.value.operand == which


def test_operand_outside_its_buffer():
    m, a, b, c = _m()
    with pytest.raises(OutOfBounds, match="l0a") as e:       # 256 x 256 f16 = 128 KiB > 64 KiB L0A
        pto.mad(a, b, c, 256, 16, 256)
    assert e.value.operand == "%lhs"
    with pytest.raises(OutOfBounds, match="l0c") as e:       # 256 x 256 f32 = 256 KiB > 128 KiB L0C (A2A3)
        m.write(a, np.zeros(16 * 256, np.float16))
        m.write(b, np.zeros(16 * 256, np.float16))
        pto.mad(a, b, m.ptr("l0c", "f32", 0), 256, 256, 16)
    assert e.value.operand == "%dst"
    with pytest.raises(OutOfBounds) as e:
        pto.mad(a, b, m.ptr("l0c", "f32", 128 * 1024 - 512), 16, 16, 16)
    assert e.value.operand == "%dst"


@pytest.mark.parametrize("target,a,b,c", [("A2A3", "e4m3", "e4m3", "f32"), ("Kirin9030", "bf16", "bf16", "f32"),
                                          ("Kirin9030", "f16", "f16", "f32"), ("A5", "f16", "f16", "f16"),
                                          ("A5", "hif8", "e4m3", "f32"), ("A2A3", "u8", "u8", "s32")])
def test_illegal_type_combinations_per_target(target, a, b, c):
    m = Machine(target)
    with pytest.raises(IllegalOperand, match="is not supported on " + target) as e:
        pto.mad(m.ptr("l0a", a, 0), m.ptr("l0b", b, 0), m.ptr("l0c", c, 0), 16, 16, 32)
    assert f"{a} x {b} -> {c}" in str(e.value)


def test_legality_is_read_from_the_profile():
    dts = ["f32", "f16", "bf16", "s8", "u8", "e4m3", "e5m2", "hif8"]
    accs = ["f32", "f16", "s32", "u32"]
    spec = get_op("mad")
    for target in ("A2A3", "A5", "Kirin9030", "KirinX90", "Ascend310", "Ascend910B1"):
        t = get_target(target)
        m = Machine(target)
        for a, b, c in itertools.product(dts, dts, accs):
            call = make_call(spec, (m.ptr("l0a", a, 0), m.ptr("l0b", b, 0), m.ptr("l0c", c, 0), 16, 16, 32), {})
            legal = (a, b, c) in t.mad_dtypes
            try:
                spec.verify(call, t)
                ok = True
            except IllegalOperand:
                ok = False
            assert ok == legal, (target, a, b, c)


def test_mx_on_a_target_without_mx_and_illegal_mx_pairs():
    m = Machine("A2A3")
    with pytest.raises(UnsupportedOp, match="not supported on A2A3"):
        pto.mad_mx(m.ptr("l0a", "e4m3", 0), m.ptr("l0b", "e4m3", 0), m.ptr("l0c", "f32", 0), 16, 16, 64)
    m5 = Machine("A5")
    with pytest.raises(IllegalOperand, match="MX type combination e4m3 x e2m1x2"):
        pto.mad_mx(m5.ptr("l0a", "e4m3", 0), m5.ptr("l0b", "e2m1x2", 0), m5.ptr("l0c", "f32", 0), 16, 16, 64)
    with pytest.raises(IllegalOperand, match="-> f32"):
        pto.mad_mx(m5.ptr("l0a", "e4m3", 0), m5.ptr("l0b", "e4m3", 0), m5.ptr("l0c", "s32", 0), 16, 16, 64)
    with pytest.raises(UnknownName, match="unknown clause 'tf32_mode'"):
        pto.mad_mx(m5.ptr("l0a", "e4m3", 0), m5.ptr("l0b", "e4m3", 0), m5.ptr("l0c", "f32", 0), 16, 16, 64,
                   tf32_mode="round_even")


def test_spaces_bias_and_alignment():
    m, a, b, c = _m()
    with pytest.raises(IllegalOperand, match="must point into l0a") as e:
        pto.mad(m.ptr("l1", "f16", 0), b, c, 16, 16, 16)
    assert e.value.operand == "%lhs"
    with pytest.raises(IllegalOperand, match="must point into bt"):
        pto.mad_bias(a, b, c, m.ptr("ub", "f32", 0), 16, 16, 16)
    with pytest.raises(IllegalOperand, match="bias element type f16 must equal the dst element type f32"):
        pto.mad_bias(a, b, c, m.ptr("bt", "f16", 0), 16, 16, 16)
    with pytest.raises(Misaligned) as e:
        pto.mad(m.ptr("l0a", "f16", 16), b, c, 16, 16, 16)
    assert e.value.operand == "%lhs"
    with pytest.raises(IllegalOperand, match="check_only, check_and_set") as e:
        pto.mad(a, b, c, 16, 16, 16, unit_flag="check_and_clear")
    assert e.value.operand == "unit_flag"
    with pytest.raises(IllegalOperand, match="out of canonical order"):
        pto.mad(a, b, c, 16, 16, 16, n_dir=True, sat=True)


# ---------------------------------------------------------------- transposed shape-form loads feeding pto.mad

def _transposed_chain(target, dt, acc, M, K, N, trans_a, trans_b):
    """A (M x K), B (K x N) -> L1 Nz -> shape-form loads (optionally transposing) -> pto.mad; returns L0C M x N."""
    m = Machine(target)
    d = dtype(dt)
    g = max(16, d.c0)
    rng = np.random.default_rng(M * 10007 + K * 101 + N)
    A = rng.integers(-5, 6, (M, K)).astype(d.storage)
    B = rng.integers(-5, 6, (K, N)).astype(d.storage)
    l1a, l1b = m.ptr("l1", dt, 0), m.ptr("l1", dt, 0x20000)
    l0a, l0b, l0c = m.ptr("l0a", dt, 0), m.ptr("l0b", dt, 0), m.ptr("l0c", acc, 0)
    if trans_a:      # L1 holds A^T (K x M) in Nz, g-rounded height
        pto.mte_gm_l1_frac(m.gm_tensor(np.ascontiguousarray(A.T), name="A"), l1a, nd2nz=True, shape=(K, M),
                           src_layout=(d.nbytes(M),), dst_group=(1, 1, ceil_to(K, g), 0), ctrl=(0, 0))
    else:
        pto.mte_gm_l1_frac(m.gm_tensor(A, name="A"), l1a, nd2nz=True, shape=(M, K),
                           src_layout=(d.nbytes(K),), dst_group=(1, 1, ceil_to(M, 16), 0), ctrl=(0, 0))
    if trans_b:      # L1 holds B (K x N) in Nz: needs the transposing load
        pto.mte_gm_l1_frac(m.gm_tensor(B, name="B"), l1b, nd2nz=True, shape=(K, N),
                           src_layout=(d.nbytes(N),), dst_group=(1, 1, ceil_to(K, g), 0), ctrl=(0, 0))
    else:
        pto.mte_gm_l1_frac(m.gm_tensor(np.ascontiguousarray(B.T), name="B"), l1b, nd2nz=True, shape=(N, K),
                           src_layout=(d.nbytes(K),), dst_group=(1, 1, ceil_to(N, 16), 0), ctrl=(0, 0))
    handoff("MTE2", "MTE1")
    pto.mte_l1_l0a(l1a, l0a, M, K, transpose=True if trans_a else None)
    pto.mte_l1_l0b(l1b, l0b, K, N, transpose=True if trans_b else None)
    handoff("MTE1", "M")
    pto.mad(l0a, l0b, l0c, M, N, K)
    r, c = ceil_to(M, 16), ceil_to(N, 16)
    got = layout.unpack(m.read(l0c, (r * c,)), "Nz", r, c, l0c.dtype, fractal=1024)[:M, :N]
    return got, A.astype(np.float64) @ B.astype(np.float64)


@pytest.mark.parametrize("target, dt, acc, M, K, N, ta, tb", [
    ("A5", "s8", "s32", 20, 70, 56, True, True),       # 20 and 56 round to 32-multiples the mad also reads
    ("A2A3", "f32", "f32", 24, 80, 38, True, False),    # K = 80: whole 16-column blocks on the Zz L0A
    ("A2A3", "s8", "s32", 14, 20, 8, True, True),      # one transposed block along the other axis
    ("A5", "f16", "f32", 17, 33, 29, True, True),      # 16-bit: g = 16 = C0, any shape fits
])
def test_transposed_shape_form_loads_feed_mad_exactly(target, dt, acc, M, K, N, ta, tb):
    got, exp = _transposed_chain(target, dt, acc, M, K, N, ta, tb)
    assert np.array_equal(got.astype(np.float64), exp)


@pytest.mark.parametrize("target, dt, acc, M, K, N, ta, tb, operand", [
    ("A5", "s8", "s32", 14, 35, 42, True, False, "%m"),     # 14 -> 32 rows, mad reads 16: 2nd K block misplaced
    ("A5", "s8", "s32", 52, 38, 45, False, True, "%n"),     # L0B: 45 -> 64, mad reads 48
    ("A2A3", "f32", "f32", 24, 67, 38, True, False, "%k"),  # Zz L0A: 67 -> 80 columns, mad reads 72
])
def test_transposed_shape_form_load_that_mad_cannot_read_is_rejected(target, dt, acc, M, K, N, ta, tb, operand):
    # before TRANSPOSE_SHAPE_FITS these ran and pto.mad read fractals of the wrong blocks (or 0x55 fill)
    with pytest.raises(IllegalOperand, match="transpose granularity") as e:
        _transposed_chain(target, dt, acc, M, K, N, ta, tb)
    assert e.value.operand == operand and "test_cube.py" in str(e.value)
