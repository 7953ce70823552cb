"""pto.ub.vci / vgather / vscatter against a lane-by-lane reference (tik_api.md §9.1 addressing)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, Misaligned, OutOfBounds, UnsupportedOp, pto

import vector_ref as ref
from vector_harness import assert_same, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NP = {"f16": np.float16, "f32": np.float32, "s16": np.int16, "s32": np.int32, "u16": np.uint16, "u32": np.uint32,
      "s8": np.int8}


def _lane_sets(par, mask, repeat, counter):
    return ref.active_lanes(par, mask, repeat, counter)


# ----------------------------------------------------------------------------- vci


def _vci_ref(mem, base, dt, start, par, lane_sets, blk, rep, unit):
    npd = np.dtype(NP[dt])
    first = float(npd.type(start)) if npd.kind == "f" else int(start)
    for r, lanes in enumerate(lane_sets):
        for e in sorted(lanes):
            k = r * par + e
            if npd.kind == "f":
                v = npd.type(first + k)                       # one rounding from the exact value
            else:
                bits = npd.itemsize * 8
                v = (first + k) % (1 << bits)
                if npd.kind == "i" and v >= 1 << (bits - 1):
                    v -= 1 << bits
            ref.put(mem, base + ref.lane_offset(npd.itemsize, par, blk, rep, unit, r, e), npd, v)


@SETTINGS
@given(data=st.data())
def test_vci_matches_reference(data):
    target = data.draw(st.sampled_from(["Ascend310P3", "Ascend310B1"]))
    dt = data.draw(st.sampled_from(["f16", "f32", "s16", "s32"] + (["s8"] if target == "Ascend310B1" else [])))
    npd = np.dtype(NP[dt])
    par = 256 // npd.itemsize
    counter = data.draw(st.one_of(st.none(), st.integers(1, 3 * par)))
    mask = None if counter is not None else data.draw(masks(par))
    repeat = data.draw(st.integers(0 if counter is None else 1, 3))
    blk, rep, unit = data.draw(st.integers(1, 3)), data.draw(st.integers(0, 10)), data.draw(st.sampled_from([0, 1]))
    if npd.kind == "f":
        start = data.draw(st.integers(-3000, 3000)) + data.draw(st.sampled_from([0.0, 0.5, 0.25]))
    else:
        info = np.iinfo(npd)
        start = data.draw(st.integers(int(info.min), int(info.max)))
    m = machine(target, overflow_mode="inf_nan")
    before = ub_bytes(m).copy()
    kw = {"counter": counter} if counter is not None else ({} if mask is None else {"mask": mask})
    pto.ub.vci(m.ptr("ub", dt, 256), start, repeat, **kw, blk_stride=(blk,), rep_stride=(rep,), stride_unit=unit)
    want = before.copy()
    _, lane_sets = _lane_sets(par, mask, repeat, counter)
    _vci_ref(want, 256, dt, start, par, lane_sets, blk, rep, unit)
    assert_same(ub_bytes(m)[:16384], want[:16384], npd, "vci")


def test_vci_values_continue_over_repeats_and_round_once():
    m = Machine("Ascend310P3")
    d = m.ptr("ub", "f16", 0)
    pto.ub.vci(d, 2040.0, 2)                        # 2040 + 0..255: f16 spacing 2 above 2048
    got = m.read(d, 256).astype(np.float64)
    np.testing.assert_array_equal(got, np.float16(2040.0 + np.arange(256)).astype(np.float64))
    s = m.ptr("ub", "s16", 1024)
    pto.ub.vci(s, 32767, 1, mask=3)                 # integers wrap
    np.testing.assert_array_equal(m.read(s, 3), np.array([32767, -32768, -32767], np.int16))


def test_vci_errors():
    m = Machine("Ascend310P3")
    with pytest.raises(UnsupportedOp, match="Ascend910B1 has no vci instruction"):
        pto.ub.vci(Machine("Ascend910B1").ptr("ub", "f16", 0), 0.0, 1)
    with pytest.raises(UnsupportedOp, match="does not support vci for u16"):
        pto.ub.vci(m.ptr("ub", "u16", 0), 0, 1)
    with pytest.raises(IllegalOperand, match="does not fit s16"):
        pto.ub.vci(m.ptr("ub", "s16", 0), 40000, 1)
    with pytest.raises(IllegalOperand, match="repeat"):
        pto.ub.vci(m.ptr("ub", "s16", 0), 1, 256)


# ----------------------------------------------------------------------------- vgather / vscatter


def _offsets(data, n, size, span_elems):
    elems = data.draw(st.lists(st.integers(0, span_elems - 1), min_size=n, max_size=n))
    return np.array(elems, dtype=np.int64) * size


def _draw_gs(data, dtypes, bases):
    """Shared draws of the vgather / vscatter sweeps: element type, lane selection, repeats, base."""
    dt = data.draw(st.sampled_from(dtypes))
    npd = np.dtype(NP[dt])
    size = npd.itemsize
    par = 256 // size
    counter = data.draw(st.one_of(st.none(), st.integers(1, 2 * par)))
    mask = None if counter is not None else data.draw(masks(par))
    repeat = data.draw(st.integers(1, 2))
    rep = data.draw(st.integers(0, 10))
    base = data.draw(st.sampled_from(bases(size)))
    rep_count, lane_sets = _lane_sets(par, mask, repeat, counter)
    kw = {"counter": counter} if counter is not None else ({} if mask is None else {"mask": mask})
    return dt, npd, size, par, repeat, rep, base, rep_count, lane_sets, kw


@SETTINGS
@given(data=st.data())
def test_vgather_matches_reference(data):
    dt, npd, size, par, repeat, rep, base, rep_count, lane_sets, kw = _draw_gs(
        data, ["f16", "f32", "s16", "u32"], lambda size: [0, 32, 2 * size])
    target = data.draw(st.sampled_from(["Ascend310P3", "Ascend910B1"]))
    m = machine(target, seed=3)
    before = ub_bytes(m).copy()
    src_at, off_at, dst_at = 0, 4096, 8192
    offs = _offsets(data, rep_count * par, size, 1024 // size)
    ub_bytes(m)[off_at:off_at + offs.size * 4] = offs.astype(np.int32).view(np.uint8)
    before[off_at:off_at + offs.size * 4] = offs.astype(np.int32).view(np.uint8)
    pto.ub.vgather(m.ptr("ub", dt, dst_at), m.ptr("ub", dt, src_at), m.ptr("ub", "s32", off_at), repeat,
                   base=(base,), **kw, rep_stride=(rep,))
    want = before.copy()
    for r, lanes in enumerate(lane_sets):
        for e in sorted(lanes):
            val = ref.get(before, src_at + base + int(offs[r * par + e]), npd)
            ref.put(want, dst_at + ref.lane_offset(size, par, 1, rep, 0, r, e), npd, val)
    assert_same(ub_bytes(m)[:16384], want[:16384], npd, "vgather")


@SETTINGS
@given(data=st.data())
def test_vscatter_matches_reference(data):
    dt, npd, size, par, repeat, rep, base, rep_count, lane_sets, kw = _draw_gs(
        data, ["f16", "f32", "s32", "u16"], lambda size: [0, 64])
    m = machine("Ascend310P3", seed=4)
    src_at, off_at, dst_at = 0, 4096, 8192
    offs = _offsets(data, rep_count * par, size, 512 // size)          # few slots: duplicates are common
    ub_bytes(m)[off_at:off_at + offs.size * 4] = offs.astype(np.int32).view(np.uint8)
    before = ub_bytes(m).copy()
    pto.ub.vscatter(m.ptr("ub", dt, dst_at), m.ptr("ub", dt, src_at), m.ptr("ub", "s32", off_at), repeat,
                    base=(base,), **kw, rep_stride=(rep,))
    want = before.copy()
    for r, lanes in enumerate(lane_sets):
        for e in sorted(lanes):                               # later lanes overwrite earlier ones
            val = ref.get(before, src_at + ref.lane_offset(size, par, 1, rep, 0, r, e), npd)
            ref.put(want, dst_at + base + int(offs[r * par + e]), npd, val)
    assert_same(ub_bytes(m)[:16384], want[:16384], npd, "vscatter")


def test_vgather_in_place_runs_repeat_by_repeat():
    m = Machine("Ascend310P3")
    buf = m.ptr("ub", "s32", 0)
    m.write(buf, np.arange(128, dtype=np.int32) + 1000)
    off = m.ptr("ub", "s32", 4096)
    m.write(off, (np.r_[np.arange(64), np.arange(64) + 64] * 4).astype(np.int32))
    # repeat 0 writes elements 64..127 from 0..63; repeat 1 then reads the NEW 64..127
    pto.ub.vgather(m.ptr("ub", "s32", 256), buf, off, 2, rep_stride=(8,))
    got = m.read(buf, 192)
    np.testing.assert_array_equal(got[64:128], np.arange(64) + 1000)
    np.testing.assert_array_equal(got[128:192], np.arange(64) + 1000)


def test_vgather_vscatter_errors():
    m = Machine("Ascend310P3")
    d, s, o = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), m.ptr("ub", "s32", 2048)
    m.write(o, np.full(128, 3, np.int32))
    with pytest.raises(Misaligned, match="not a multiple of the 2-byte element size"):
        pto.ub.vgather(d, s, o, 1)
    m.write(o, np.full(128, -4, np.int32))
    with pytest.raises(IllegalOperand, match="negative"):
        pto.ub.vgather(d, s, o, 1)
    m.write(o, np.full(128, 10 ** 9, np.int32))
    with pytest.raises(OutOfBounds):
        pto.ub.vgather(d, s, o, 1)
    with pytest.raises(IllegalOperand, match="offsets must be 32-bit integers"):
        pto.ub.vgather(d, s, m.ptr("ub", "s16", 2048), 1)
    with pytest.raises(IllegalOperand, match="differs from src dtype"):
        pto.ub.vgather(d, m.ptr("ub", "s16", 1024), o, 1)
    with pytest.raises(UnsupportedOp, match="Ascend910B1 has no vscatter instruction"):
        mb = Machine("Ascend910B1")
        pto.ub.vscatter(mb.ptr("ub", "f16", 0), mb.ptr("ub", "f16", 1024), mb.ptr("ub", "s32", 2048), 1)
    with pytest.raises(UnsupportedOp, match="has no vgather instruction"):
        mv = Machine("Ascend910A")
        pto.ub.vgather(mv.ptr("ub", "f16", 0), mv.ptr("ub", "f16", 1024), mv.ptr("ub", "s32", 2048), 1)
    with pytest.raises(IllegalOperand, match="base"):
        pto.ub.vgather(d, s, o, 1, base=(2 ** 31,))


# ----------------------------------------------------------------------------- vbcb


@SETTINGS
@given(dt=st.sampled_from(["f16", "f32", "s16", "u32"]), repeat=st.integers(0, 4), blk=st.integers(0, 3),
       rep=st.integers(0, 20), target=st.sampled_from(["Ascend910B1", "Ascend310B1"]))
def test_vbcb_matches_reference(dt, repeat, blk, rep, target):
    npd = np.dtype(NP[dt])
    size = npd.itemsize
    m = machine(target, seed=5)
    before = ub_bytes(m).copy()
    src_at, dst_at = 0, 1024
    pto.ub.vbcb(m.ptr("ub", dt, dst_at), m.ptr("ub", dt, src_at), repeat, blk_stride=(blk,), rep_stride=(rep,))
    want = before.copy()
    for r in range(repeat):                         # in order: later repeats overwrite earlier ones
        for j in range(8):
            v = ref.get(before, src_at + (8 * r + j) * size, npd)
            for k in range(32 // size):
                ref.put(want, dst_at + r * rep * 32 + j * max(blk, 1) * 32 + k * size, npd, v)
    assert_same(ub_bytes(m)[:16384], want[:16384], npd, "vbcb")


def test_vbcb_errors():
    with pytest.raises(UnsupportedOp, match="Ascend310P3 has no vbcb instruction"):
        mp = Machine("Ascend310P3")
        pto.ub.vbcb(mp.ptr("ub", "f16", 0), mp.ptr("ub", "f16", 1024), 1)
    m = Machine("Ascend910B1")
    with pytest.raises(UnsupportedOp, match="does not support vbcb for s8"):
        pto.ub.vbcb(m.ptr("ub", "s8", 0), m.ptr("ub", "s8", 1024), 1)
    with pytest.raises(IllegalOperand, match="differs from src dtype"):
        pto.ub.vbcb(m.ptr("ub", "f16", 0), m.ptr("ub", "s16", 1024), 1)
    with pytest.raises(IllegalOperand, match="rep_stride"):
        pto.ub.vbcb(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), 1, rep_stride=(65536,))


# ----------------------------------------------------------------------------- v4dtrans


@SETTINGS
@given(dt=st.sampled_from(["f16", "f32", "s8", "u32"]), m=st.integers(1, 40), c=st.integers(1, 12),
       chw2hwc=st.booleans())
def test_v4dtrans_matches_reference(dt, m, c, chw2hwc):
    npd = np.dtype({**NP, "u32": np.uint32}[dt])
    size = npd.itemsize
    mach = machine("Ascend310P3", seed=9)
    before = ub_bytes(mach).copy()
    kw = {"chw2hwc": True} if chw2hwc else {}
    pto.ub.v4dtrans(mach.ptr("ub", dt, 4096), mach.ptr("ub", dt, 0), m, c, **kw)
    want = before.copy()
    for i in range(m):
        for ch in range(c):
            s_el, d_el = (ch * m + i, i * c + ch) if chw2hwc else (i * c + ch, ch * m + i)
            want[4096 + d_el * size:4096 + (d_el + 1) * size] = before[s_el * size:(s_el + 1) * size]
    np.testing.assert_array_equal(ub_bytes(mach)[:8192], want[:8192])


def test_v4dtrans_errors():
    m = Machine("Ascend310P3")
    with pytest.raises(UnsupportedOp, match="Ascend910B1 has no v4dtrans instruction"):
        mb = Machine("Ascend910B1")
        pto.ub.v4dtrans(mb.ptr("ub", "f16", 0), mb.ptr("ub", "f16", 1024), 4, 4)
    with pytest.raises(IllegalOperand, match="channels"):
        pto.ub.v4dtrans(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), 4, 4097)
    with pytest.raises(IllegalOperand, match=r"\[1, 4095\]"):
        pto.ub.v4dtrans(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), 0, 4)
