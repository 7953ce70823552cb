"""Compares and selects: the vec_cmpv golden (§10.5) for all six compares, the vec_sel golden (§10.6),
bit layout references over random geometry, CMPMASK flows, vsel modes and their errors."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, Misaligned, UnsupportedOp, dtype, pto

import vector_ref as ref
from vector_harness import REGION, assert_same, bases, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PY_CMP = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
          "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "le": lambda a, b: a <= b}

# tik_api.md §10.5: src0 = 1..128, src1 = 2, dst (u16 x 16) pre-filled with 5, one repeat
GOLDEN_CMPV = {
    "eq": [2] + [0] * 7 + [5] * 8,
    "lt": [1] + [0] * 7 + [5] * 8,
    "gt": [0xFFFC] + [0xFFFF] * 7 + [5] * 8,
    "ge": [0xFFFE] + [0xFFFF] * 7 + [5] * 8,
    "le": [3] + [0] * 7 + [5] * 8,
    "ne": [0xFFFD] + [0xFFFF] * 7 + [5] * 8,
}


@pytest.mark.parametrize("cmp", list(GOLDEN_CMPV))
def test_golden_vec_cmpv(cmp):
    m = Machine("Ascend310")
    s0, s1, d = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 256), m.ptr("ub", "u16", 512)
    m.write(s0, np.arange(1, 129, dtype=np.float16))
    m.write(s1, np.full(128, 2, np.float16))
    pto.ub.vector_dup(d, 5, 1, mask=16)
    getattr(pto.ub, f"vcmpv_{cmp}")(d, s0, s1, 1, rep_stride=(8, 8))
    assert list(m.read(d, 16)) == GOLDEN_CMPV[cmp]


@pytest.mark.parametrize("cmp", list(PY_CMP))
@SETTINGS
@given(data=st.data())
def test_vcmpv_and_vcmpvs_bits(cmp, data):
    dt = data.draw(st.sampled_from(["f16", "f32"]), "dtype")
    d = dtype(dt)
    par = 256 // d.itemsize
    repeat = data.draw(st.integers(0, 4), "repeat")
    blk = data.draw(st.lists(st.integers(0, 2), min_size=2, max_size=2), "blk")
    rep = data.draw(st.lists(st.integers(0, 10), min_size=2, max_size=2), "rep")
    base = data.draw(bases(3), "base")
    scalar_form = data.draw(st.booleans(), "scalar")
    scalar = data.draw(st.floats(-2, 2, width=16), "value")
    m = machine("Ascend910B1", seed=data.draw(st.integers(0, 3), "seed"))
    before = ub_bytes(m).copy()
    dst, a, b = m.ptr("ub", "u8", base[0]), m.ptr("ub", d, base[1]), m.ptr("ub", d, base[2])
    if scalar_form:
        getattr(pto.ub, f"vcmpvs_{cmp}")(dst, a, scalar, repeat, blk_stride=blk[0], rep_stride=rep[0])
    else:
        getattr(pto.ub, f"vcmpv_{cmp}")(dst, a, b, repeat, blk_stride=tuple(blk), rep_stride=tuple(rep))
    want = before.copy()
    for r in range(repeat):
        av = [ref.get(want, base[1] + ref.lane_offset(d.itemsize, par, blk[0], rep[0], 0, r, e), d.storage)
              for e in range(par)]
        bv = ([d.storage.type(scalar)] * par if scalar_form else
              [ref.get(want, base[2] + ref.lane_offset(d.itemsize, par, blk[1], rep[1], 0, r, e), d.storage)
               for e in range(par)])
        for e in range(par):
            bit = bool(PY_CMP[cmp](float(av[e]), float(bv[e])))
            byte = base[0] + (r * par + e) // 8
            want[byte] = (int(want[byte]) & ~(1 << (e % 8)) & 0xFF) | (bit << (e % 8))
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], np.uint8, f"vcmpv_{cmp}")


def test_golden_vec_sel():
    """§10.6: sel byte 0 = 0xF0, mask 4 -> dst = [9, 10, 11, 12, -5, -6, -7, -8], rest unchanged."""
    m = Machine("Ascend310")
    s0, s1, sel, d = (m.ptr("ub", t, a) for t, a in (("f16", 0), ("f16", 256), ("u8", 512), ("f16", 1024)))
    m.write(s0, np.arange(1, 129, dtype=np.float16))
    m.write(s1, np.arange(9, 137, dtype=np.float16))
    m.write(sel, np.array([0xF0] + [0] * 15, np.uint8))
    init = -np.arange(1, 129, dtype=np.float16)
    m.write(d, init)
    pto.ub.mov_tensor_to_cmpmask(sel)                 # vec_sel mode 0 = load CMPMASK + vsel
    pto.ub.vsel(d, s0, s1, 1, mask=4)
    out = m.read(d, 128)
    np.testing.assert_array_equal(out[:8], [9, 10, 11, 12, -5, -6, -7, -8])
    np.testing.assert_array_equal(out[8:], init[8:])
    pto.ub.vsel(d, s0, s1, 1, mask=(0, 0b11110000))   # same via the bits mask
    np.testing.assert_array_equal(m.read(d, 8), [9, 10, 11, 12, 5, 6, 7, 8])


def test_vcmp_writes_cmpmask_and_vsel_mode0_reuses_it():
    m = Machine("Ascend910B1")
    a, b, d, t = (m.ptr("ub", "f32", x) for x in (0, 256, 512, 1024))
    x = np.arange(64, dtype=np.float32)
    m.write(a, x)
    m.write(b, np.full(64, 10, np.float32))
    pto.ub.vcmp_lt(a, b, mask=32)
    mask_bytes = m.context(0).spr["CMPMASK"]
    bits = np.unpackbits(mask_bytes, bitorder="little")
    assert bits[:10].all() and not bits[10:].any()          # lanes >= 32 masked off -> 0; bits 64.. zero
    pto.ub.vsel(d, a, b, 3, rep_stride=(8, 0, 0))          # same 64 bits in each repeat
    out = m.read(d, 192).reshape(3, 64)
    assert (out[:, :10] == x[:10]).all() and (out[:, 10:] == 10).all()
    pto.ub.mov_cmpmask_to_tensor(t.cast("u8"))
    np.testing.assert_array_equal(m.read(t.cast("u8"), 16), mask_bytes)


def test_cmpmask_moves_at_16_byte_offsets():
    """One 16-byte register: loads/stores at 16-byte UB offsets are legal (CANN loads mask[r * 16 B]),
    8-byte offsets are not."""
    m = Machine("Ascend910")
    sel = np.arange(48, dtype=np.uint8) * 5
    src = m.ptr("ub", "u8", 512)
    m.write(src, sel)
    pto.ub.mov_tensor_to_cmpmask(m.ptr("ub", "u8", 512 + 16))
    np.testing.assert_array_equal(m.context(0).spr["CMPMASK"], sel[16:32])
    pto.ub.mov_cmpmask_to_tensor(m.ptr("ub", "u8", 1024 + 16))
    np.testing.assert_array_equal(m.read(m.ptr("ub", "u8", 1024 + 16), 16), sel[16:32])
    with pytest.raises(Misaligned, match="16-byte aligned"):
        pto.ub.mov_tensor_to_cmpmask(m.ptr("ub", "u8", 512 + 8))


def test_cmpmask_load_of_64_bits():
    """``bits = 64`` (a front end's f32 vsel mode 0, which consumes CMPMASK[63:0]) reads 8 bytes and
    clears the upper half; a bad width is refused."""
    m = Machine("Ascend910")
    sel = (np.arange(16, dtype=np.uint8) * 17 + 3).astype(np.uint8)
    m.write(m.ptr("ub", "u8", 512), sel[:8])
    pto.ub.mov_tensor_to_cmpmask(m.ptr("ub", "u8", 512), bits=64)
    np.testing.assert_array_equal(m.context(0).spr["CMPMASK"], np.r_[sel[:8], np.zeros(8, np.uint8)])
    m.write(m.ptr("ub", "u8", 512), sel)
    pto.ub.mov_tensor_to_cmpmask(m.ptr("ub", "u8", 512))
    np.testing.assert_array_equal(m.context(0).spr["CMPMASK"], sel)
    with pytest.raises(IllegalOperand, match="bits"):
        pto.ub.mov_tensor_to_cmpmask(m.ptr("ub", "u8", 512), bits=32)


def test_cmpmask_holds_256_bits_for_8bit_compares_and_selects():
    """`CMPMASK_B8_BITS`: an s8 vcmp writes 256 bits, a bits=256 load takes 32 bytes, vsel on s8 selects
    with all 256; the explicit store still moves 16 bytes."""
    m = Machine("Ascend310B1")
    a, b, d, t = (m.ptr("ub", "s8", x) for x in (0, 256, 512, 1024))
    x = np.arange(-128, 128, dtype=np.int8)
    m.write(a, x)
    m.write(b, np.zeros(256, np.int8))
    pto.ub.vcmp_ge(a, b)
    want = x >= 0
    np.testing.assert_array_equal(np.unpackbits(m.context(0).spr["CMPMASK"], bitorder="little"), want)
    pto.ub.vsel(d, a, b, 1)
    np.testing.assert_array_equal(m.read(d, 256), np.where(want, x, 0))
    pto.ub.mov_cmpmask_to_tensor(t.cast("u8"))
    np.testing.assert_array_equal(m.read(t.cast("u8"), 16), np.packbits(want, bitorder="little")[:16])
    sel = np.arange(32, dtype=np.uint8) * 7
    m.write(t.cast("u8"), sel)
    pto.ub.mov_tensor_to_cmpmask(t.cast("u8"), bits=256)
    np.testing.assert_array_equal(m.context(0).spr["CMPMASK"], sel)
    pto.ub.vsel(d, a, b, 1)
    np.testing.assert_array_equal(m.read(d, 256), np.where(np.unpackbits(sel, bitorder="little") == 1, x, 0))


@pytest.mark.parametrize("mode", ["bits", "scalar"])
@SETTINGS
@given(data=st.data())
def test_vsel_consecutive_bits(mode, data):
    dt = data.draw(st.sampled_from(["f16", "f32"]), "dtype")
    d = dtype(dt)
    par = 256 // d.itemsize
    repeat = data.draw(st.integers(0, 4), "repeat")
    mask = data.draw(masks(par), "mask")
    rep = data.draw(st.lists(st.integers(0, 10), min_size=3, max_size=3), "rep")
    base = data.draw(bases(4), "base")
    value = data.draw(st.floats(-2, 2, width=16), "value")
    m = machine("Ascend910B1", seed=data.draw(st.integers(0, 3), "seed"))
    before = ub_bytes(m).copy()
    dst, sel, a, b = (m.ptr("ub", d if i != 1 else "u8", x) for i, x in enumerate(base))
    kw = {} if mask is None else {"mask": mask}
    if mode == "bits":
        pto.ub.vsel_bits(dst, sel, a, b, repeat, **kw, rep_stride=tuple(rep))
    else:
        pto.ub.vsel_scalar(dst, sel, a, value, repeat, **kw, rep_stride=tuple(rep[:2]))
    want = before.copy()
    _, lanes = ref.active_lanes(par, mask, repeat)
    for r in range(repeat):
        bits = [(int(want[base[1] + (r * par + e) // 8]) >> ((r * par + e) % 8)) & 1 for e in range(par)]
        res = {}
        for e in sorted(lanes[r]):
            x = ref.get(want, base[2] + ref.lane_offset(d.itemsize, par, 1, rep[1], 0, r, e), d.storage)
            y = (d.storage.type(value) if mode == "scalar" else
                 ref.get(want, base[3] + ref.lane_offset(d.itemsize, par, 1, rep[2], 0, r, e), d.storage))
            res[e] = x if bits[e] else y
        for e, v in res.items():
            ref.put(want, base[0] + ref.lane_offset(d.itemsize, par, 1, rep[0], 0, r, e), d.storage, v)
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], d.storage, f"vsel_{mode}")


def test_cmpsel_errors():
    m = Machine("Ascend910B1")
    f16 = m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand, match="CMPMASK was never written") as e:
        pto.ub.vsel(f16, f16, f16, 1)
    assert "vcmp" in e.value.hint
    with pytest.raises(IllegalOperand, match="unsigned integer tensor") as e:
        pto.ub.vcmpv_eq(m.ptr("ub", "s16", 0), f16, f16, 1)
    assert e.value.operand == "dst"
    with pytest.raises(UnsupportedOp, match="Ascend910B1 does not support vcmpv_lt for s32"):
        pto.ub.vcmpv_lt(m.ptr("ub", "u8", 0), m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 0), 1)
    pto.ub.vcmpv_eq(m.ptr("ub", "u8", 0), m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 0), 0)   # eq has s32
    old = Machine("Ascend310")
    p = old.ptr("ub", "f16", 0)
    with pytest.raises(UnsupportedOp, match="only vsel mode 0"):
        pto.ub.vsel_bits(p, old.ptr("ub", "u8", 512), p, p, 1)
    with pytest.raises(UnsupportedOp, match="Ascend310 has no vcmpvs_gt instruction"):
        pto.ub.vcmpvs_gt(old.ptr("ub", "u8", 512), p, 1.0, 1)
    with pytest.raises(IllegalOperand, match="differs"):
        pto.ub.vsel(f16, f16, m.ptr("ub", "f32", 0), 1)


@SETTINGS
@given(st.sampled_from(list(PY_CMP)), st.sampled_from(["f16", "f32"]), st.integers(0, 2 ** 64 - 1),
       st.integers(0, 2 ** 64 - 1), st.binary(min_size=16, max_size=16), st.integers(0, 2 ** 32 - 1))
def test_vcmp_keeps_masked_off_cmpmask_bits(cmp, dt, hi, lo, before, seed):
    """`VCMP_KEEPS_MASKED_BITS` (CCE vcmp page): only the active lanes' bits change; masked-off lanes
    and, for f32, bits 64..127 keep the register's previous value."""
    m = Machine("Ascend910")
    par = 128 if dt == "f16" else 64
    if par == 64:
        hi = 0
    if hi == 0 and lo == 0:
        lo = 1
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, par).astype(dtype(dt).storage)
    b = rng.integers(-3, 4, par).astype(dtype(dt).storage)
    pa, pb, pm = m.ptr("ub", dt, 0), m.ptr("ub", dt, 512), m.ptr("ub", "u8", 1024)
    m.write(pa, a)
    m.write(pb, b)
    old = np.frombuffer(before, dtype=np.uint8)
    m.write(pm, old)
    pto.ub.mov_tensor_to_cmpmask(pm)
    getattr(pto.ub, f"vcmp_{cmp}")(pa, pb, mask=(hi, lo))
    # independent reference: bit by bit in plain Python
    want = [(old[i // 8] >> (i % 8)) & 1 for i in range(128)]
    for i in range(par):
        if ((lo | (hi << 64)) >> i) & 1:
            want[i] = int(PY_CMP[cmp](float(a[i]), float(b[i])))
    got = np.unpackbits(m.context(0).spr["CMPMASK"], bitorder="little")
    np.testing.assert_array_equal(got, want)


def test_vcmp_masked_lanes_keep_bits_then_vsel_uses_them():
    """A mask of 16 lanes after an all-ones CMPMASK: lanes 16.. still select src0 (they were 0 before
    the CCE rule was adopted)."""
    m = Machine("Ascend910")
    a, b, d, pm = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 512), m.ptr("ub", "f16", 1024), m.ptr("ub", "u8", 2048)
    m.write(a, np.arange(128, dtype=np.float16))
    m.write(b, np.full(128, -1, np.float16))
    m.write(d, np.full(128, 7, np.float16))
    m.write(pm, np.full(16, 0xFF, np.uint8))
    pto.ub.mov_tensor_to_cmpmask(pm)
    pto.ub.vcmp_gt(a, b, mask=16)                    # lanes 0..15: a > b is true anyway
    pto.ub.vcmp_lt(a, b, mask=4)                     # lanes 0..3 now false, 4.. untouched
    pto.ub.vsel(d, a, b, 1)
    out = m.read(d, 128)
    np.testing.assert_array_equal(out[:4], [-1] * 4)
    np.testing.assert_array_equal(out[4:], np.arange(4, 128))
