"""pto.ub.vci / vgather / vgatherb / vscatter against a lane-by-lane reference (tik_api.md §9.1 addressing)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import (IllegalOperand, Machine, MachineOptions, Misaligned, OutOfBounds, UninitializedRead,
                      UnsupportedOp, pto)

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
            ref.put(mem, base + ref.lane_offset(npd.itemsize, par, ref.dst_blk(blk, unit), rep, unit, r, e), npd, v)


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


# ----------------------------------------------------------------------------- vgatherb


def _gatherb_ref(mem, dst_at, src_at, off_at, off_dt, repeat, blk, rep):
    """Repeat by repeat: read the 8 offsets and the 8 source blocks (current memory), then write them."""
    for r in range(repeat):
        offs = mem[off_at + 32 * r:off_at + 32 * (r + 1)].view(off_dt)
        blocks = [mem[src_at + int(o):src_at + int(o) + 32].copy() for o in offs]
        for j, b in enumerate(blocks):
            at = dst_at + r * rep * 32 + j * blk * 32
            mem[at:at + 32] = b


@SETTINGS
@given(data=st.data())
def test_vgatherb_matches_reference(data):
    dt = data.draw(st.sampled_from(["f16", "f32", "s16", "u32", "u16", "s32"]))
    off_dt = data.draw(st.sampled_from([np.int32, np.uint32]))
    repeat = data.draw(st.integers(0, 4))
    blk, rep = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 20))
    target = data.draw(st.sampled_from(["Ascend910B1", "Ascend310B1"]))
    src_at, off_at = 0, 4096
    dst_at = data.draw(st.sampled_from([8192, 256, 1024]))          # 256 / 1024: dst overlaps the gathered span
    m = machine(target, seed=6)
    offs = np.array(data.draw(st.lists(st.integers(0, 63), min_size=8 * repeat, max_size=8 * repeat)),
                    dtype=np.int64) * 32
    ub_bytes(m)[off_at:off_at + offs.size * 4] = offs.astype(off_dt).view(np.uint8)
    want = ub_bytes(m).copy()
    kw = {}
    if blk != 1 or data.draw(st.booleans()):
        kw["blk_stride"] = (blk,)
    if rep != 8 or data.draw(st.booleans()):
        kw["rep_stride"] = (rep,)
    pto.ub.vgatherb(m.ptr("ub", dt, dst_at), m.ptr("ub", dt, src_at),
                    m.ptr("ub", "s32" if off_dt is np.int32 else "u32", off_at), repeat, **kw)
    _gatherb_ref(want, dst_at, src_at, off_at, off_dt, repeat, kw.get("blk_stride", (1,))[0],
                 kw.get("rep_stride", (8,))[0])
    assert_same(ub_bytes(m)[:16384], want[:16384], np.uint8, "vgatherb")


def test_vgatherb_gathers_blocks_as_the_ascend_c_example_shows():
    m = Machine("Ascend910B1")
    src, off, dst = m.ptr("ub", "u16", 0), m.ptr("ub", "u32", 1024), m.ptr("ub", "u16", 2048)
    m.write(src, np.arange(128, dtype=np.uint16))
    m.write(off, np.array([224, 192, 160, 128, 96, 64, 32, 0], np.uint32))
    m.write(dst, np.full(128, 7, np.uint16))
    pto.ub.vgatherb(dst, src, off, 1)
    np.testing.assert_array_equal(m.read(dst, 128), ((112 - 16 * np.arange(8))[:, None] + np.arange(16)).ravel())


def test_vgatherb_reads_the_offsets_a_previous_repeat_wrote():
    m = machine("Ascend910B1", seed=7)
    vals = np.arange(1024, dtype=np.int64) * 32 % 4096        # every s32 element is a valid block offset
    vals[0] = 32 * 100                                        # repeat 0, block 0: elements 800..807 ...
    ub_bytes(m)[:4096] = vals.astype(np.int32).view(np.uint8)
    want = ub_bytes(m).copy()
    # ... land on elements 8..15: the offsets repeat 1 reads (dst overlaps the offsets)
    pto.ub.vgatherb(m.ptr("ub", "s32", 32), m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 0), 2)
    _gatherb_ref(want, 32, 0, 0, np.int32, 2, 1, 8)
    assert want[32:64].view(np.int32).tolist() == (np.arange(800, 808) * 32 % 4096).tolist()
    assert_same(ub_bytes(m)[:16384], want[:16384], np.uint8, "vgatherb")


def test_vgatherb_errors():
    m = Machine("Ascend910B1")
    d, s, o = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024), m.ptr("ub", "s32", 2048)
    m.write(s, np.zeros(512, np.float16))
    for bad, cls, text in ((16, Misaligned, "byte offset 16, which is not a multiple of 32"),
                           (-32, IllegalOperand, "byte offset -32, which is negative"),
                           (2 ** 30, OutOfBounds, None)):
        m.write(o, np.r_[np.zeros(5, np.int32), bad, np.zeros(2, np.int32)].astype(np.int32))
        with pytest.raises(cls, match=text and f"block 5 of repeat 0 gathers from {text}"):
            pto.ub.vgatherb(d, s, o, 1)
    m.write(o, np.zeros(8, np.int32))
    with pytest.raises(IllegalOperand, match="offsets must be 32-bit integers"):
        pto.ub.vgatherb(d, s, m.ptr("ub", "s16", 2048), 1)
    with pytest.raises(IllegalOperand, match="differs from src dtype"):
        pto.ub.vgatherb(d, m.ptr("ub", "s16", 1024), o, 1)
    with pytest.raises(Misaligned, match="not 32-byte aligned"):
        pto.ub.vgatherb(m.ptr("ub", "f16", 2), s, o, 1)
    with pytest.raises(IllegalOperand, match=r"blk_stride\(dst\).*outside \[0, 255\]"):
        pto.ub.vgatherb(d, s, o, 1, blk_stride=(256,))
    with pytest.raises(IllegalOperand, match=r"rep_stride\(dst\).*outside \[0, 4095\]"):
        pto.ub.vgatherb(d, s, o, 1, rep_stride=(4096,))
    with pytest.raises(IllegalOperand, match="repeat"):
        pto.ub.vgatherb(d, s, o, 256)
    with pytest.raises(UnsupportedOp, match="does not support vgatherb for s8"):
        pto.ub.vgatherb(m.ptr("ub", "s8", 0), m.ptr("ub", "s8", 1024), o, 1)
    with pytest.raises(UnsupportedOp, match="Ascend310P3 has no vgatherb instruction"):
        mp = Machine("Ascend310P3")
        pto.ub.vgatherb(mp.ptr("ub", "f16", 0), mp.ptr("ub", "f16", 1024), mp.ptr("ub", "s32", 2048), 1)
    fresh = Machine("Ascend910B1", options=MachineOptions(uninitialized="raise"))
    fo = fresh.ptr("ub", "s32", 2048)
    fresh.write(fo, np.full(8, 32, np.int32))
    with pytest.raises(UninitializedRead, match="src"):
        pto.ub.vgatherb(fresh.ptr("ub", "f16", 0), fresh.ptr("ub", "f16", 1024), fo, 1)


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
