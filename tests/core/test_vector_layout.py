"""Rearrangement ops (vtranspose, vnchwconv, vconcat/vextract, vreduce), proposal sorting
(vbitsort, vmrgsort4) and the PTO-AS expansion of every pto.ub op."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, UnsupportedOp, dtype, pto
from pto_core.ops import registry
from pto_core.ops.vector import EXPANDERS, expand

import vector_ref as ref
from vector_harness import REGION, assert_same, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(repeat=st.integers(0, 3), rep=st.lists(st.integers(0, 3), min_size=2, max_size=2),
       base=st.lists(st.integers(0, 15).map(lambda k: 512 * k), min_size=2, max_size=2))
def test_vtranspose(repeat, rep, base):
    m = machine("Ascend910B1")
    before = ub_bytes(m).copy()
    pto.ub.vtranspose(m.ptr("ub", "u16", base[0]), m.ptr("ub", "u16", base[1]), repeat, rep_stride=tuple(rep))
    want = before.copy()
    u16 = np.dtype(np.uint16)
    for r in range(repeat):
        src = [ref.get(want, base[1] + r * rep[1] * 512 + 2 * i, u16) for i in range(256)]
        for i in range(16):
            for j in range(16):
                ref.put(want, base[0] + r * rep[0] * 512 + 2 * (j * 16 + i), u16, src[i * 16 + j])
    assert_same(ub_bytes(m)[:REGION], want[:REGION], np.uint16, "vtranspose")


_HALVES = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("repeat", [3, 1])
@pytest.mark.parametrize("dt, high", [("f16", _HALVES[0]), ("f32", _HALVES[0])] +
                         [(t, h) for t in ("u8", "s8") for h in _HALVES])
def test_vnchwconv_matches_isa_formula(dt, high, repeat):
    """The CCE ISA formula; with one repeat the blocks start one repeat stride after the list addresses (TIK and
    Ascend C TransDataTo5HD docs; REPEAT1_STARTS_ONE_STRIDE_IN)."""
    d = dtype(dt)
    m = machine("Ascend910B1", seed=5)
    rng = np.random.default_rng(9)
    slots = rng.permutation(200)[:32] * 32 + 8192        # 32 distinct block addresses
    src_list = tuple(m.ptr("ub", d, int(a)) for a in slots[:16])
    dst_list = tuple(m.ptr("ub", d, int(a)) for a in slots[16:])
    srs, drs = 210, 220                                  # repeat strides in blocks, no overlap between repeats
    first = 1 if repeat == 1 else 0                      # one repeat: the blocks start one stride in
    before = ub_bytes(m).copy()
    kw = {}
    if high[0]:
        kw["dst_high_half"] = True
    if high[1]:
        kw["src_high_half"] = True
    pto.ub.vnchwconv(dst_list, src_list, repeat, **kw, rep_stride=(drs, srs))
    want = before.copy()
    st_ = d.storage
    s = d.itemsize
    for r in range(first, first + repeat):
        src = [[ref.get(want, int(slots[k]) + r * srs * 32 + i * s, st_) for i in range(32 // s)] for k in range(16)]
        dst_addr = [int(a) + r * drs * 32 for a in slots[16:]]
        if s == 2:
            for e in range(16):
                for k in range(16):
                    ref.put(want, dst_addr[e] + k * s, st_, src[k][e])
        elif s == 4:
            for e in range(0, 16, 2):
                for k in range(8):
                    ref.put(want, dst_addr[e] + k * s, st_, src[k][e // 2])
                    ref.put(want, dst_addr[e + 1] + k * s, st_, src[k + 8][e // 2])
        else:
            dh, sh = 16 * high[0], 16 * high[1]
            for e in range(16):
                for k in range(16):
                    ref.put(want, dst_addr[e] + k + dh, st_, src[k][e + sh])
    assert_same(ub_bytes(m), want, np.uint8, f"vnchwconv {dt}")


def test_vnchwconv_errors():
    m = Machine("Ascend910B1")
    lst = tuple(m.ptr("ub", "f16", 32 * k) for k in range(16))
    with pytest.raises(IllegalOperand, match="list of 16") as e:
        pto.ub.vnchwconv(lst[:15], lst, 1)
    assert e.value.operand == "dst_list"
    with pytest.raises(IllegalOperand, match="8-bit blocks only"):
        pto.ub.vnchwconv(lst, lst, 1, dst_high_half=True)
    old = Machine("Ascend310")
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vnchwconv for f32"):
        pto.ub.vnchwconv(tuple(old.ptr("ub", "f32", 32 * k) for k in range(16)),
                         tuple(old.ptr("ub", "f32", 1024 + 32 * k) for k in range(16)), 1)


def test_vnchwconv_in_place_is_sequential_per_repeat():
    """Repeat r+1 reads blocks repeat r wrote: repeats run in order."""
    m = Machine("Ascend910B1")
    src = tuple(m.ptr("ub", "u16", 32 * k) for k in range(16))
    m.write(src[0], np.arange(16 * 16 * 3, dtype=np.uint16))
    pto.ub.vnchwconv(src, src, 2, rep_stride=(0, 0))            # transpose the same 16x16 twice
    np.testing.assert_array_equal(m.read(src[0], 256), np.arange(256, dtype=np.uint16))


@pytest.mark.parametrize("mode", range(6))
def test_vconcat_vextract_roundtrip(mode):
    m = Machine("Ascend310P3")
    src, props, back = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), m.ptr("ub", "f16", 8192)
    vals = np.arange(32, dtype=np.float16)
    m.write(src, vals)
    m.write(props, np.full(256, -1, np.float16))
    pto.ub.vconcat(props, src, 2, mode)
    p = m.read(props, 256).reshape(32, 8)
    np.testing.assert_array_equal(p[:, mode], vals)
    assert (np.delete(p, mode, axis=1) == -1).all()
    pto.ub.vextract(back, props, 2, mode)
    np.testing.assert_array_equal(m.read(back, 32), vals)
    with pytest.raises(IllegalOperand, match="outside \\[0, 5\\]"):
        pto.ub.vextract(back, props, 1, 6)
    with pytest.raises(IllegalOperand, match="outside \\[0, 3\\]"):
        mini = Machine("Ascend310")
        pto.ub.vextract(mini.ptr("ub", "f16", 0), mini.ptr("ub", "f16", 1024), 1, 4)


@pytest.mark.parametrize("pattern", range(1, 8))
def test_vreduce_fixed_patterns(pattern):
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 4096)
    x = np.arange(3 * 64, dtype=np.float32)
    m.write(src, x)
    pto.ub.vreduce(dst, src, 3, pattern=pattern, mask=48)
    lane = np.arange(64)
    sel = {1: lane % 2 == 0, 2: lane % 2 == 1, 7: np.ones(64, bool)}.get(
        pattern, lane % 4 == pattern - 3) & (lane < 48)
    want = x.reshape(3, 64)[:, sel].reshape(-1)
    assert m.context(0).spr["RSVD_CNT"] == want.size
    np.testing.assert_array_equal(m.read(dst, want.size), want)


@SETTINGS
@given(data=st.data())
def test_vreduce_bits(data):
    par = 128
    repeat = data.draw(st.integers(1, 3))
    mask = data.draw(masks(par))
    s1rep = data.draw(st.integers(0, 2))
    m = machine("Ascend910B1", seed=1)
    src, bits, dst = m.ptr("ub", "u16", 0), m.ptr("ub", "u8", 4096), m.ptr("ub", "u16", 8192)
    before = ub_bytes(m).copy()
    kw = {} if mask is None else {"mask": mask}
    pto.ub.vreduce_bits(dst, src, bits, repeat, **kw, rep_stride=(8, s1rep))
    _, lanes = ref.active_lanes(par, mask, repeat)
    out = []
    for r in range(repeat):
        for e in sorted(lanes[r]):
            if (before[4096 + r * s1rep * 16 + e // 8] >> (e % 8)) & 1:     # stride unit: one repeat's bits
                out.append(before[0:8192].view(np.uint16)[r * 128 + e])
    assert m.context(0).spr["RSVD_CNT"] == len(out)
    np.testing.assert_array_equal(m.read(dst, len(out)), np.array(out, dtype=np.uint16))


# ----------------------------------------------------------------------------- proposals


def test_vbitsort_sorts_16_by_score_stably():
    m = Machine("Ascend310P3")
    src, dst = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024)
    props = np.zeros((32, 8), np.float16)
    props[:, 0] = np.arange(32)
    props[:, 4] = np.tile([3, 1, 2, 3, 0, 2, 5, 1], 4)
    m.write(src, props)
    pto.ub.vbitsort(dst, src, 2)
    out = m.read(dst, 256).reshape(2, 16, 8)
    for g in range(2):
        grp = props[16 * g:16 * g + 16]
        order = sorted(range(16), key=lambda i: -float(grp[i, 4]))       # Python sort is stable
        np.testing.assert_array_equal(out[g], grp[order])


def test_vmrgsort4_merges_and_reports_counts():
    m = Machine("Ascend310P3")
    rng = np.random.default_rng(0)
    lists = []
    ptrs = []
    for i, n in enumerate((5, 3, 4, 2)):
        p = np.zeros((n, 8), np.float16)
        p[:, 4] = np.sort(rng.integers(0, 10, n))[::-1]
        p[:, 0] = 100 * i + np.arange(n)
        lists.append(p)
        ptrs.append(m.ptr("ub", "f16", 1024 * (i + 1)))
        m.write(ptrs[-1], p)
    dst = m.ptr("ub", "f16", 16384)
    pto.ub.vmrgsort4(dst, tuple(ptrs), (5, 3, 4, 2), 1)
    out = m.read(dst, 14 * 8).reshape(14, 8)
    keyed = sorted(((-float(p[4]), i, k) for i, lst in enumerate(lists) for k, p in enumerate(lst)))
    want = np.array([lists[i][k] for _, i, k in keyed])
    np.testing.assert_array_equal(out, want)
    assert m.context(0).spr["VMS4_SR"] == (5, 3, 4, 2)
    # exhausted mode stops when the first list runs out
    pto.ub.vmrgsort4(dst, tuple(ptrs), (5, 3, 4, 2), 1, exhausted=True)
    taken = m.context(0).spr["VMS4_SR"]
    assert any(t == n for t, n in zip(taken, (5, 3, 4, 2))) and sum(taken) < 14
    # only two valid lists
    pto.ub.vmrgsort4(dst, tuple(ptrs[:2]), (5, 3), 1, valid_bit=3)
    assert m.context(0).spr["VMS4_SR"] == (5, 3, 0, 0)


def test_vmrgsort4_errors():
    m = Machine("Ascend310P3")
    p = [m.ptr("ub", "f16", 1024 * (i + 1)) for i in range(4)]
    with pytest.raises(IllegalOperand, match="equal length"):
        pto.ub.vmrgsort4(p[0], tuple(p), (2, 2, 2, 1), 2)
    with pytest.raises(IllegalOperand, match="contiguously"):
        pto.ub.vmrgsort4(p[0], tuple(p), (1, 1, 1, 1), 1, valid_bit=5)
    with pytest.raises(UnsupportedOp, match="A2A3 does not support vmrgsort4 for f32"):
        a = Machine("A2A3")
        pto.ub.vmrgsort4(a.ptr("ub", "f32", 0), (a.ptr("ub", "f32", 1024),), (1,), 1)


# ----------------------------------------------------------------------------- expansion listing


def _sample_call(name):
    spec = registry.get_op(name)
    m = Machine("Ascend310P3")
    args = []
    for o in spec.operands:
        if o.kind == "ptr":
            args.append(m.ptr("ub", "f16", 0))
        elif o.kind == "ptrs":
            args.append(tuple(m.ptr("ub", "f16", 32 * k) for k in range(16)))
        elif o.kind == "ints":
            args.append((1, 1))
        else:
            args.append(2)
    return registry.make_call(spec, tuple(args), {})


def test_every_repeat_op_expands_to_pto_text():
    names = [k for k in registry.OPS if k.startswith("ub.")]
    assert set(names) == set(EXPANDERS)
    for name in names:
        lines = expand(_sample_call(name))
        assert lines and all(isinstance(x, str) for x in lines), name


def test_vadd_expansion_is_the_vlds_vadd_vsts_loop():
    m = Machine("A2A3")
    d, a, b = (m.ptr("ub", "f32", x) for x in (0, 1024, 2048))
    call = registry.make_call(registry.get_op("ub.vadd"), (d, a, b, 4),
                              {"mask": 16, "blk_stride": (1, 2, 1), "rep_stride": (8, 16, 8)})
    text = "\n".join(expand(call))
    assert "scf.for %r = %c0 to %c4" in text
    assert 'pto.pge_b32 "PAT_VL16"' in text
    assert "pto.vlds %src0" not in text and "pto.vsldb %src0" in text      # block stride 2 needs vsldb
    assert "pto.vlds %src1" in text and "pto.vadd" in text and "pto.vsts %res, %dst" in text
    assert "arith.muli %r, %c512" in text                                   # src0 repeat stride 16 blocks


def _mergech_ref(src_bytes: bytes, repeat: int, itemsize: int) -> bytes:
    """TIK vmrgch: of every 32 B block keep the first 4 elements (8 B for 16-bit, 4 B for 8-bit data);
    8 blocks per repeat, the kept bytes packed in block order."""
    keep = 4 * itemsize
    return b"".join(src_bytes[32 * b:32 * b + keep] for b in range(8 * repeat))


@pytest.mark.parametrize("chip, dt", [("Ascend310P3", "f16"), ("Ascend310P3", "u8"), ("Ascend910", "s16"),
                                      ("Ascend910", "s8"), ("Ascend310", "u16")])
@pytest.mark.parametrize("repeat", [0, 1, 3])
def test_vmergech_keeps_the_first_four_elements_of_every_block(chip, dt, repeat):
    m = Machine(chip)
    src, dst = m.ptr("ub", dt, 0), m.ptr("ub", dt, 4096)
    raw = np.random.default_rng(repeat).integers(0, 256, 8 * 32 * 4, dtype=np.uint8)
    m.write(m.ptr("ub", "u8", 0), raw)
    m.write(m.ptr("ub", "u8", 4096), np.full(512, 0xEE, np.uint8))
    pto.ub.vmergech(dst, src, repeat)
    got = m.read(m.ptr("ub", "u8", 4096), 512).tobytes()
    isz = dtype(dt).itemsize
    want = _mergech_ref(raw.tobytes(), repeat, isz)
    assert got[:len(want)] == want
    assert got[len(want):] == b"\xee" * (512 - len(want))          # nothing written past 32 elements a repeat
    assert len(want) == repeat * 32 * isz


def test_vmergech_refusals():
    m = Machine("Ascend910B1")
    with pytest.raises(UnsupportedOp, match="Ascend910B1 has no vmergech"):
        pto.ub.vmergech(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), 1)
    p3 = Machine("Ascend310P3")
    with pytest.raises(IllegalOperand, match="8- or 16-bit"):
        pto.ub.vmergech(p3.ptr("ub", "f32", 0), p3.ptr("ub", "f32", 1024), 1)
    with pytest.raises(IllegalOperand, match="differs from src dtype"):
        pto.ub.vmergech(p3.ptr("ub", "f16", 0), p3.ptr("ub", "u8", 1024), 1)
    with pytest.raises(IllegalOperand, match="outside \\[0, 255\\]"):
        pto.ub.vmergech(p3.ptr("ub", "f16", 0), p3.ptr("ub", "f16", 1024), 256)
