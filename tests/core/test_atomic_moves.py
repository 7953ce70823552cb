"""GM atomic mode (pto.set_atomic_*), atomic read-modify-write in mte_ub_gm / mte_l1_gm,
and the 32-byte-unit moves mte_ub_ub (PIPE_V) and mte_l1_gm (MTE3)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kernel_helpers import handoff
from pto_core import Machine, pto
from pto_core.errors import IllegalOperand, Misaligned
from pto_core.ops import get_op
from pto_core.ops.ctrl import atomic_mode
from pto_core.program import program
from pto_core.asm import parse

FLOATS = {"f32": np.float32, "f16": np.float16}


def _values(rng, name, n):
    """Random values whose pairwise sums are exact in float64 (exponents within 20 binades)."""
    if name in ("f32", "f16", "bf16"):
        v = rng.standard_normal(n) * 2.0 ** rng.integers(-6, 6, n)
        v[rng.integers(0, n, 2)] = [np.inf, -0.0]
        if name == "bf16":
            import ml_dtypes
            return v.astype(ml_dtypes.bfloat16)
        return v.astype(FLOATS[name])
    info = np.iinfo({"s32": np.int32, "s16": np.int16, "s8": np.int8}[name])
    v = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
    v[:min(2, n)] = [info.max, info.min][:min(2, n)]
    return v.astype({"s32": np.int32, "s16": np.int16, "s8": np.int8}[name])


def _reference(a, b, name, op):
    """Independent reference: exact result in float64 (or int64), rounded/wrapped once."""
    if op == "max":
        return np.where(np.isnan(a.astype(np.float64)) | np.isnan(b.astype(np.float64)), np.nan,
                        np.maximum(a.astype(np.float64), b.astype(np.float64))).astype(a.dtype) \
            if name in FLOATS or name == "bf16" else np.maximum(a, b)
    if op == "min":
        return np.where(np.isnan(a.astype(np.float64)) | np.isnan(b.astype(np.float64)), np.nan,
                        np.minimum(a.astype(np.float64), b.astype(np.float64))).astype(a.dtype) \
            if name in FLOATS or name == "bf16" else np.minimum(a, b)
    if name in FLOATS or name == "bf16":
        with np.errstate(over="ignore", invalid="ignore"):
            return (a.astype(np.float64) + b.astype(np.float64)).astype(a.dtype)
    bits = a.dtype.itemsize * 8
    s = (a.astype(np.int64) + b.astype(np.int64)) & ((1 << bits) - 1)
    return np.where(s >= 1 << (bits - 1), s - (1 << bits), s).astype(a.dtype)


@pytest.mark.parametrize("name", ["f32", "f16", "bf16", "s32", "s16", "s8"])
@pytest.mark.parametrize("op", ["add", "max", "min"])
def test_atomic_store_matches_reference(name, op):
    rng = np.random.default_rng(hash((name, op)) % 2**32)
    n = 256 // (np.dtype(_values(rng, name, 1).dtype).itemsize)
    old = _values(rng, name, n)
    new = _values(rng, name, n)
    m = Machine("A2A3")
    gm = m.gm_tensor(old, name="y")
    ub = m.ptr("ub", name, 0)
    m.write(ub, new)
    getattr(pto, f"set_atomic_{name}")()
    getattr(pto, f"set_atomic_{op}")()
    assert atomic_mode(m.context(0)) == (name, op)
    pto.mte_ub_gm(ub, gm, 256, nburst=(1, 256, 256))
    got = m.read(gm, n)
    want = _reference(old, new, name, op)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8)) or (
        np.array_equal(np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64)))
        and np.array_equal(np.nan_to_num(got.astype(np.float64)), np.nan_to_num(want.astype(np.float64))))


def _round_f32(exact):
    """Correctly rounded (nearest, ties to even) float32 of a Fraction: independent reference."""
    from fractions import Fraction
    c = np.float32(float(exact))
    cands = [np.nextafter(c, np.float32(-np.inf)), c, np.nextafter(c, np.float32(np.inf))]
    best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))
    return best


_F32 = st.floats(-float(np.float32(1e30)), float(np.float32(1e30)), width=32)


@settings(max_examples=40, deadline=None)
@given(st.lists(_F32, min_size=8, max_size=8), st.lists(_F32, min_size=8, max_size=8))
def test_f32_atomic_add_is_one_ieee_rounding(a, b):
    from fractions import Fraction
    a, b = np.array(a, np.float32), np.array(b, np.float32)
    m = Machine("A2A3")
    gm = m.gm_tensor(a, name="y")
    ub = m.ptr("ub", "f32", 0)
    m.write(ub, b)
    pto.set_atomic_f32()
    pto.set_atomic_add()
    pto.mte_ub_gm(ub, gm, 32, nburst=(1, 32, 32))
    want = np.array([_round_f32(Fraction(float(x)) + Fraction(float(y))) for x, y in zip(a, b)], np.float32)
    got = m.read(gm, 8)
    assert np.array_equal(got, want), (got, want)


def test_atomic_mode_is_per_core_and_off_by_default():
    m = Machine("A2A3", cores=2)
    assert atomic_mode(m.context(0)) is None
    old = np.arange(8, dtype=np.float32)
    gm = m.gm_tensor(old, name="y")
    ub = m.ptr("ub", "f32", 0)
    m.write(ub, np.full(8, 10, np.float32))
    pto.set_atomic_add()                         # type field defaults to f32
    pto.mte_ub_gm(ub, gm, 32, nburst=(1, 32, 32))
    assert m.read(gm, 8).tolist() == (old + 10).tolist()
    assert atomic_mode(m.context(1)) is None
    pto.set_atomic_none()
    handoff("MTE3", "MTE3")
    pto.mte_ub_gm(ub, gm, 32, nburst=(1, 32, 32))
    assert m.read(gm, 8).tolist() == [10.0] * 8   # plain store again


def test_atomic_mode_does_not_affect_on_chip_destinations():
    m = Machine("A2A3")
    src = m.gm_tensor(np.ones(8, np.float32), name="x")
    ub = m.ptr("ub", "f32", 0)
    m.write(ub, np.full(8, 5, np.float32))
    pto.set_atomic_f32()
    pto.set_atomic_add()
    pto.mte_gm_ub(src, ub, 0, 32, nburst=(1, 32, 32))
    assert m.read(ub, 8).tolist() == [1.0] * 8


def test_atomic_rows_must_hold_whole_elements():
    m = Machine("A2A3")
    gm = m.gm_tensor(np.zeros(8, np.float32), name="y")
    ub = m.ptr("ub", "f32", 0)
    m.write(ub, np.ones(8, np.float32))
    pto.set_atomic_add()
    with pytest.raises(IllegalOperand, match="multiple of 4 bytes"):
        pto.mte_ub_gm(ub, gm, 6, nburst=(1, 32, 32))


def test_atomic_add_reports_an_uninitialised_destination():
    m = Machine("A2A3")
    gm = m.gm_alloc((8,), "f32", name="y")              # never written
    ub = m.ptr("ub", "f32", 0)
    m.write(ub, np.ones(8, np.float32))
    pto.set_atomic_add()
    pto.mte_ub_gm(ub, gm, 32, nburst=(1, 32, 32))
    assert any(kind == "uninitialized" and "%dst" in msg for kind, msg in m.reports)


def test_mte_ub_ub_units_gaps_and_pipe():
    assert get_op("mte_ub_ub").pipe == "V" and get_op("mte_l1_gm").pipe == "MTE3"
    m = Machine("A2A3")
    data = np.arange(256, dtype=np.int16)
    src = m.ptr("ub", "s16", 0)
    m.write(src, data)
    dst = m.ptr("ub", "s16", 1024)
    handoff("S", "V")
    pto.mte_ub_ub(src, dst, 2, nburst=(3, 1, 2))      # bursts of 64 B; src gap 32 B, dst gap 64 B
    out = m.read(dst, 3 * 64)                          # s16 elements
    for b in range(3):
        assert out[b * 64:b * 64 + 32].tolist() == data[b * 48:b * 48 + 32].tolist()
    assert not m.cores[0].buffer("ub").written[1024 + 64:1024 + 128].any()


def test_mte_ub_ub_and_l1_gm_errors():
    m = Machine("A2A3")
    with pytest.raises(IllegalOperand, match=r"nburst\(%n_burst\).*outside \[1, 4095\]"):
        pto.mte_ub_ub(m.ptr("ub", "u8", 0), m.ptr("ub", "u8", 4096), 1, nburst=(4096, 0, 0))
    with pytest.raises(Misaligned, match="32-byte aligned"):
        pto.mte_ub_ub(m.ptr("ub", "u8", 16), m.ptr("ub", "u8", 4096), 1, nburst=(1, 0, 0))
    with pytest.raises(IllegalOperand, match="must point into l1"):
        pto.mte_l1_gm(m.ptr("ub", "u8", 0), m.gm_alloc((64,), "u8", name="g"), 1, nburst=(1, 0, 0))


def test_mte_l1_gm_copies_and_accumulates():
    m = Machine("A2A3")
    l1 = m.ptr("l1", "s32", 0)
    m.write(l1, np.arange(40, dtype=np.int32))
    gm = m.gm_tensor(np.full(24, 100, np.int32), name="y")
    handoff("S", "MTE3")
    pto.mte_l1_gm(l1, gm, 1, nburst=(3, 1, 0))        # 3 blocks of 8 s32; skip every other source block
    assert m.read(gm, 24).tolist() == list(range(0, 8)) + list(range(16, 24)) + list(range(32, 40))
    pto.set_atomic_s32()
    pto.set_atomic_add()
    pto.mte_l1_gm(l1, gm, 1, nburst=(1, 0, 0))
    assert m.read(gm, 8).tolist() == [2 * i for i in range(8)]


def test_new_ops_round_trip_through_pto_as():
    with program("atomics", target="A2A3") as k:
        y = k.gm_arg("y", "f32", (64,), io="out")
        ub = k.ptr("ub", "f32", 0)
        ub2 = k.ptr("ub", "f32", 256)
        pto.mte_ub_ub(ub, ub2, 8, nburst=(1, 0, 0))
        pto.set_atomic_f32()
        pto.set_atomic_add()
        pto.mte_ub_gm(ub2, y, 256, nburst=(1, 256, 256))
        pto.set_atomic_none()
    text = k.program.to_asm()
    assert "pto.set_atomic_f32" in text and "pto.set_atomic_none" in text and "pto.mte_ub_ub" in text
    assert parse(text).to_asm() == text


def test_atomic_mode_reads_back_as_one_word():
    """``pto.get_spr "ATOMIC"[0]``: 0 while disabled (also before any set), else ``type | op << 3``."""
    with program("atomic_spr", target="A2A3") as k:
        c = k.gm_arg("c", "s32", (8,), io="out")
        steps = [(), (pto.set_atomic_f16,), (pto.set_atomic_add,), (pto.set_atomic_s8, pto.set_atomic_max),
                 (pto.set_atomic_none,), (pto.set_atomic_bf16, pto.set_atomic_min)]
        for slot, ops in enumerate(steps):
            for op in ops:
                op()
            k.store(c, slot, k.read_spr("ATOMIC"))
    text = k.program.to_asm()
    assert text.count('pto.get_spr "ATOMIC"[0] : i64') == len(steps)
    want = [0, 0, 2 | 0 << 3, 5 | 1 << 3, 0, 6 | 2 << 3]
    got = k.program.run({}, options=None)["c"][:len(steps)].tolist()
    assert got == want == parse(text).run({})["c"][:len(steps)].tolist()
