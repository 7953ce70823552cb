"""Reductions: vcadd/vcmax/vcmin/vcgadd/vcgmax/vcgmin/vcpadd against a per-repeat reference of the
documented model (pairwise tree, rounding per level; lowest index on ties; NaN wins), the
vec_reduce_* macros, and their errors."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import HazardError, IllegalOperand, Machine, Misaligned, UnsupportedOp, dtype, pto

import vector_ref as ref
from vector_harness import REGION, assert_same, bases, machine, masks, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rnd(x, dt, sat):
    with np.errstate(all="ignore"):
        r = dt.type(x)
    return ref.saturate(r, dt) if sat else r


def tree(vals, dt, sat):
    vals = list(vals)
    while len(vals) > 1:
        vals = [rnd(float(vals[2 * i]) + float(vals[2 * i + 1]), dt, sat) for i in range(len(vals) // 2)]
    return vals[0]


def extreme(vals, lanes, largest):
    """(value, lane) of the max/min over active lanes: first NaN wins, else lowest lane of the extreme."""
    best = None
    for i in lanes:
        v = vals[i]
        if math.isnan(v):
            return v, i
        if best is None or (v > best[0] if largest else v < best[0]):
            best = (v, i)
    return best


def reduce_results(kind, vals, lanes, dt, sat, par):
    """Results of one repeat: vals = lane values (all par lanes read), lanes = active set."""
    z = [dt.type(vals[i]) if i in lanes else dt.type(0) for i in range(par)]
    e = 32 // dt.itemsize
    if kind == "vcadd":
        return [tree(z, dt, sat)]
    if kind == "vcgadd":     # a block without an active lane is not written (None): CCE vcgadd page
        return [tree(z[g * e:(g + 1) * e], dt, sat) if any(i in lanes for i in range(g * e, (g + 1) * e))
                else None for g in range(par // e)]
    if kind == "vcpadd":     # a pair without an active lane is not written (None): PAIR_REDUCE_SKIPS_EMPTY_PAIRS
        return [rnd(float(z[2 * i]) + float(z[2 * i + 1]), dt, sat) if (2 * i in lanes or 2 * i + 1 in lanes)
                else None for i in range(par // 2)]
    if kind in ("vcgmax", "vcgmin"):
        out = []
        for g in range(par // e):
            grp = [i for i in range(g * e, (g + 1) * e) if i in lanes]
            if not grp:
                out.append(None)
                continue
            sub = [float(vals[i]) for i in grp]
            if any(map(math.isnan, sub)):
                out.append(dt.type(math.nan))
                continue
            best = max(sub) if kind == "vcgmax" else min(sub)
            if best == 0:        # IEEE maximum/minimum: +0 beats -0 for max, -0 beats +0 for min
                signs = {math.copysign(1, v) for v in sub if v == 0}
                if kind == "vcgmax":
                    best = 0.0 if 1.0 in signs else -0.0
                else:
                    best = -0.0 if -1.0 in signs else 0.0
            out.append(dt.type(best))
        return out
    v, i = extreme([float(x) for x in vals], sorted(lanes), kind == "vcmax")
    idx = np.array([i], dtype=np.uint16 if dt.itemsize == 2 else np.uint32).view(dt)[0]
    return [dt.type(v), idx]


NRES = {"vcadd": lambda p: 1, "vcmax": lambda p: 2, "vcmin": lambda p: 2, "vcgadd": lambda p: 8,
        "vcgmax": lambda p: 8, "vcgmin": lambda p: 8, "vcpadd": lambda p: p // 2}


@pytest.mark.parametrize("kind", list(NRES))
@pytest.mark.parametrize("target, dt", [("Ascend910B1", "f16"), ("Ascend910B1", "f32"), ("Ascend310", "f16")])
@SETTINGS
@given(data=st.data())
def test_reduction_matches_reference(kind, target, dt, data):
    d = dtype(dt)
    par = 256 // d.itemsize
    sat = Machine(target).overflow_mode == "saturation"
    repeat = data.draw(st.integers(0, 4), "repeat")
    mask = data.draw(masks(par), "mask")
    blk = data.draw(st.integers(0, 2), "blk")
    src_rep = data.draw(st.integers(0, 10), "src_rep")
    dst_rep = data.draw(st.integers(0, 3), "dst_rep")
    unit = data.draw(st.integers(0, 3), "unit")
    base = data.draw(bases(2), "base")
    m = machine(target, seed=data.draw(st.integers(0, 3), "seed"))
    before = ub_bytes(m).copy()
    dst, src = m.ptr("ub", d, base[0]), m.ptr("ub", d, base[1])
    kw = {} if mask is None else {"mask": mask}
    getattr(pto.ub, kind)(dst, src, repeat, **kw, blk_stride=blk, rep_stride=(dst_rep, src_rep), stride_unit=unit)
    want = before.copy()
    _, lanes = ref.active_lanes(par, mask, repeat)
    k = NRES[kind](par)
    step = (dst_rep if not (kind == "vcpadd" and dst_rep == 0) else 1) * k * d.itemsize
    for r in range(repeat):
        vals = [ref.get(want, base[1] + ref.lane_offset(d.itemsize, par, blk, src_rep, unit, r, e), d.storage)
                for e in range(par)]
        res = reduce_results(kind, vals, lanes[r], d.storage, sat, par)
        for i, v in enumerate(res):
            if v is None:
                continue
            ref.put(want, base[0] + r * step + i * d.itemsize, d.storage, v)
    assert_same(ub_bytes(m)[:REGION + 4096], want[:REGION + 4096], d.storage, kind)


def test_vcadd_tree_order_is_observable():
    """1 + 2048 + 1 + ... in f16: a left-to-right sum would lose every 1, the pairwise tree keeps them."""
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024)
    x = np.zeros(128, np.float16)
    x[0::2] = 2048
    x[1::2] = 1
    m.write(src, x)
    pto.ub.vcadd(dst, src, 1)
    assert m.read(dst, 1)[0] == tree(x, np.dtype(np.float16), False)
    assert m.read(dst, 1)[0] == np.float16(64 * 2048 + 64)


def test_vcmax_ties_and_index_bits():
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", "f32", 0), m.ptr("ub", "f32", 1024)
    x = np.zeros(64, np.float32)
    x[[5, 9, 40]] = 7
    m.write(src, x)
    pto.ub.vcmax(dst, src, 1)
    out = m.read(dst, 2)
    assert out[0] == 7 and out.view(np.uint32)[1] == 5
    pto.ub.vcmin(dst, src, 1, mask=(0, ~((1 << 6) - 1) & (2 ** 64 - 1)))   # lanes 6.. active
    out = m.read(dst, 2)
    assert out[0] == 0 and out.view(np.uint32)[1] == 6


# ----------------------------------------------------------------------------- vec_reduce_* macros


def macro_add_ref(vals2d, lanes, dt, sat, par):
    part = [tree([vals2d[r][i] if i in lanes[r] else dt.type(0) for i in range(par)], dt, sat)
            for r in range(len(vals2d))]
    while len(part) > 1:
        chunks = [part[i:i + par] for i in range(0, len(part), par)]
        part = [tree(c + [dt.type(0)] * (par - len(c)), dt, sat) for c in chunks]
    return part[0]


def macro_add_sequential_ref(vals2d, lanes, dt, sat, par, group=255):
    """A2-class order (TIK vec_reduce_add doc): per-repeat trees, in-order sums per 255 repeats, pairwise groups."""
    part = [tree([vals2d[r][i] if i in lanes[r] else dt.type(0) for i in range(par)], dt, sat)
            for r in range(len(vals2d))]
    sums = []
    for g in range(0, len(part), group):
        acc = part[g]
        for v in part[g + 1:g + group]:
            acc = dt.type(np.float32(acc) + np.float32(v))
        sums.append(acc)
    width = 1 << (len(sums) - 1).bit_length()
    return tree(sums + [dt.type(0)] * (width - len(sums)), dt, sat)


@pytest.mark.parametrize("chip", ["Ascend310P3", "Ascend910B1"])
@pytest.mark.parametrize("dt", ["f16", "f32"])
@pytest.mark.parametrize("repeat", [1, 3, 130, 300])
def test_reduce_add_macro(dt, repeat, chip):
    d = dtype(dt)
    par = 256 // d.itemsize
    rng = np.random.default_rng(repeat)
    x = (rng.standard_normal(repeat * par) * 10).astype(d.storage)
    m = Machine(chip)
    src, work, dst = m.ptr("ub", d, 0), m.ptr("ub", d, 160 * 1024), m.ptr("ub", d, 190 * 1024)
    m.write(src, x)
    pto.ub.reduce_add(dst, src, work, repeat, mask=par - 3)
    vals = x.reshape(repeat, par)
    lanes = [set(range(par - 3))] * repeat
    ref = macro_add_sequential_ref if chip == "Ascend910B1" else macro_add_ref
    want = ref(vals, lanes, d.storage, False, par)
    assert m.read(dst, 1)[0] == want
    # work holds pass-1 (or the last pass that had more than one partial sum)
    if repeat > 1:
        assert m.context(0).core.buffer("ub").written[160 * 1024:160 * 1024 + d.itemsize].all()


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_reduce_max_min_macro_with_index(kind, dt):
    d = dtype(dt)
    par = 256 // d.itemsize
    repeat = 9
    rng = np.random.default_rng(1)
    x = rng.integers(-50, 50, repeat * par).astype(d.storage)
    m = Machine("Ascend910B1")
    src, work, dst = m.ptr("ub", d, 0), m.ptr("ub", d, 64 * 1024), m.ptr("ub", d, 96 * 1024)
    m.write(src, x)
    getattr(pto.ub, f"reduce_{kind}")(dst, src, work, repeat, mask=par // 2, rep_stride=8, cal_index=True)
    vals = x.reshape(repeat, par)[:, :par // 2]
    flat = [(float(v), r * par + i) for r in range(repeat) for i, v in enumerate(vals[r])]
    best = (max if kind == "max" else min)(v for v, _ in flat)
    idx = min(i for v, i in flat if v == best)
    out = m.read(dst, 2)
    bits = np.uint16 if d.itemsize == 2 else np.uint32
    assert out[0] == best and out.view(bits)[1] == idx
    # pass-1 (value, index) pairs land in work
    pairs = m.read(work, 2 * repeat).reshape(repeat, 2)
    assert (pairs[:, 0] == (vals.max(axis=1) if kind == "max" else vals.min(axis=1))).all()


def test_reduce_errors():
    m = Machine("Ascend910B1")
    f16 = lambda a: m.ptr("ub", "f16", a)
    with pytest.raises(IllegalOperand, match="outside \\[1, 4095\\]") as e:
        pto.ub.reduce_add(f16(0), f16(1024), f16(2048), 4096)
    assert e.value.operand == "repeat"
    with pytest.raises(IllegalOperand, match="at most 511 repeats"):
        pto.ub.reduce_max(f16(0), f16(1024), f16(2048), 512, cal_index=True)
    with pytest.raises(IllegalOperand, match="overlaps dst") as e:
        pto.ub.reduce_max(f16(0), f16(1024), f16(0), 2)
    assert e.value.operand == "work"
    with pytest.raises(IllegalOperand, match="differs"):
        pto.ub.vcadd(m.ptr("ub", "f32", 0), f16(1024), 1)
    with pytest.raises(Misaligned, match="4-byte aligned"):
        pto.ub.vcmax(f16(2), f16(1024), 1)
    with pytest.raises(Misaligned, match="16-byte aligned"):
        pto.ub.vcgadd(f16(8), f16(1024), 1)
    old = Machine("Ascend310")
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vcmax for f32"):
        pto.ub.vcmax(old.ptr("ub", "f32", 0), old.ptr("ub", "f32", 1024), 1)
    with pytest.raises(UnsupportedOp, match="Ascend310 does not support vcmax for f32"):
        pto.ub.reduce_max(old.ptr("ub", "f32", 0), old.ptr("ub", "f32", 1024), old.ptr("ub", "f32", 2048), 1)


@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_vcgmax_vcgmin_signed_zeros_nan_and_inactive_blocks(dt):
    """Per 32-byte block: max prefers +0 over -0 and min -0 over +0 whatever their lane order; a NaN
    lane makes the block NaN; a block with no active lane is not written (compared with the reference)."""
    d = dtype(dt)
    par = 256 // d.itemsize
    e = 32 // d.itemsize
    x = np.linspace(-3, 3, par).astype(d.storage)
    x[0:e] = 0
    x[0:e:2] = -0.0                     # block 0: only zeros, -0 first
    x[e:2 * e] = -1
    x[e + 3] = 0
    x[e + 5] = -0.0                     # block 1: -1s, +0 before -0
    x[2 * e + 1] = np.nan               # block 2: a NaN
    for kind in ("vcgmax", "vcgmin"):
        for mask in (None, (0, (2 ** 64 - 1) ^ ((1 << 3 * e) - 1))):       # blocks 0..2 inactive
            m = Machine("Ascend910B1")
            src, dst = m.ptr("ub", dt, 0), m.ptr("ub", dt, 1024)
            m.write(src, x)
            m.write(dst, np.full(par, 7, d.storage))
            kw = {} if mask is None else {"mask": mask}
            getattr(pto.ub, kind)(dst, src, 1, **kw)
            _, lanes = ref.active_lanes(par, mask, 1)
            res = reduce_results(kind, list(x), lanes[0], d.storage, False, par)
            want = np.array([7 if v is None else v for v in res], d.storage)
            got = m.read(dst, 8)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (kind, mask, got, want)


@pytest.mark.parametrize("kind", ["vcgadd", "vcgmax", "vcgmin"])
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_group_reductions_skip_blocks_without_active_lanes(kind, dt):
    """`GROUP_REDUCE_SKIPS_EMPTY_BLOCKS` (CCE vcgadd/vcgmax/vcgmin page): a count mask of 20 lanes
    leaves blocks 2.. (f16) / 3.. (f32) of every repeat's 8 results untouched; a bit mask with
    only block 5 active writes only result 5."""
    d = dtype(dt)
    par, e = 256 // d.itemsize, 32 // d.itemsize
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", dt, 0), m.ptr("ub", dt, 2048)
    m.write(src, np.arange(2 * par).astype(d.storage) % 5)
    m.write(dst, np.full(32, 9, d.storage))
    getattr(pto.ub, kind)(dst, src, 2, mask=20, rep_stride=(1, 8))
    got = m.read(dst, 32)
    nb = -(-20 // e)
    for r in range(2):
        assert (got[8 * r + nb:8 * r + 8] == 9).all() and (got[8 * r:8 * r + nb] != 9).all(), got
    m.write(dst, np.full(32, 9, d.storage))
    bits = ((1 << e) - 1) << (5 * e)
    getattr(pto.ub, kind)(dst, src, 1, mask=(bits >> 64, bits & (2 ** 64 - 1)))
    got = m.read(dst, 8)
    assert got[5] != 9 and (np.delete(got, 5) == 9).all(), got


@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_pair_reduction_skips_pairs_without_active_lanes(dt):
    """`PAIR_REDUCE_SKIPS_EMPTY_PAIRS`: a count mask of 20 lanes writes pairs 0..9 of each repeat and leaves
    the other PAR/2 - 10 results untouched (CANN's prod_force_se_a relies on it: its tail row's vcpadd would
    otherwise zero the next row); a bit mask with only lane 7 active writes only pair 3 (= src[7])."""
    d = dtype(dt)
    par = 256 // d.itemsize
    k = par // 2
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", dt, 0), m.ptr("ub", dt, 4096)
    x = (np.arange(2 * par) % 7 + 1).astype(d.storage)
    m.write(src, x)
    m.write(dst, np.full(2 * k, 9, d.storage))
    pto.ub.vcpadd(dst, src, 2, mask=20, rep_stride=(1, 8))
    got = m.read(dst, 2 * k)
    for r in range(2):
        row = x[r * par:(r + 1) * par]
        assert np.array_equal(got[r * k:r * k + 10], row[0:20:2] + row[1:20:2]), got
        assert (got[r * k + 10:(r + 1) * k] == 9).all(), got
    m.write(dst, np.full(k, 9, d.storage))
    pto.ub.vcpadd(dst, src, 1, mask=(0, 1 << 7))
    got = m.read(dst, k)
    assert got[3] == x[7] and (np.delete(got, 3) == 9).all(), got


def test_pair_reduction_footprint_ends_at_the_last_written_pair():
    """A vcpadd result past the last active pair is not written (`PAIR_REDUCE_SKIPS_EMPTY_PAIRS`), so the op does
    not access it: an MTE3 move of those bytes right after the op is no RAW hazard ('reads bytes that
    pto.ub.vcpadd wrote' was false), as a lanewise op's footprint ends at its last active block; a move of a
    written result still is one."""
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 4096)
    g = m.gm_tensor(np.zeros(32, np.float16), name="y")
    m.write(src, (np.arange(128) % 7 + 1).astype(np.float16))
    m.write(dst, np.full(64, 9, np.float16))
    pto.ub.vcpadd(dst, src, 1, mask=20, rep_stride=(1, 8))      # writes results 0..9 only
    pto.mte_ub_gm(dst + 32, g, 64, nburst=(1, 64, 64))
    assert (m.read(g, 32) == 9).all()
    with pytest.raises(HazardError, match="RAW hazard"):
        pto.mte_ub_gm(dst, g, 64, nburst=(1, 64, 64))


def test_skip_choices_take_effect_after_a_plan_was_made(monkeypatch):
    """The plan cache is keyed by the named choices: switching PAIR_REDUCE_SKIPS_EMPTY_PAIRS off after a
    vcpadd of the same shape ran writes the masked pairs as 0 (the cached plan kept skipping them)."""
    from pto_core.ops import vector_reduce
    m = Machine("Ascend910B1")
    src, dst = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 1024)
    m.write(src, np.ones(128, np.float16))
    m.write(dst, np.full(64, 9, np.float16))
    pto.ub.vcpadd(dst, src, 1, mask=20)
    assert (m.read(dst, 64)[10:] == 9).all()
    monkeypatch.setattr(vector_reduce, "PAIR_REDUCE_SKIPS_EMPTY_PAIRS", False)
    pto.ub.vcpadd(dst, src, 1, mask=20)
    assert (m.read(dst, 64)[10:] == 0).all() and (m.read(dst, 64)[:10] == 2).all()
