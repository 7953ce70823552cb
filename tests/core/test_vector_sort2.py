"""pto.ub.vsort32 / vmrgsort (8-byte score/index records) against a plain-Python reference."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core import IllegalOperand, Machine, UnsupportedOp, pto

from vector_harness import machine, ub_bytes

EXAMPLES = int(__import__("os").environ.get("VEC_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NP = {"f16": np.float16, "f32": np.float32}


def _record(score, index, npd):
    """One 8-byte record, written out field by field."""
    rec = bytearray(8)
    rec[:npd.itemsize] = np.array([score], npd).tobytes()
    rec[4:] = int(index).to_bytes(4, "little")
    return bytes(rec)


def _ref_sort32(scores, idx, npd):
    out = b""
    for g in range(len(scores) // 32):
        pairs = [(float(scores[g * 32 + k]), k, int(idx[g * 32 + k])) for k in range(32)]
        nums = sorted((p for p in pairs if p[0] == p[0]), key=lambda p: (-p[0], p[1]))   # stable, descending
        nans = [p for p in pairs if p[0] != p[0]]
        out += b"".join(_record(s, i, npd) for s, _, i in nums + nans)
    return out


@SETTINGS
@given(dt=st.sampled_from(["f16", "f32"]), repeat=st.integers(0, 3), data=st.data())
def test_vsort32_matches_reference(dt, repeat, data):
    npd = np.dtype(NP[dt])
    n = repeat * 32
    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, -2.5, 3.0, np.inf, -np.inf, np.nan, 7.25]),
                                         min_size=n, max_size=n)), dtype=npd)
    idx = np.array(data.draw(st.lists(st.integers(0, 2 ** 32 - 1), min_size=n, max_size=n)), dtype=np.uint32)
    m = machine("Ascend910B1", seed=7)
    m.write(m.ptr("ub", dt, 0), scores)
    m.write(m.ptr("ub", "u32", 1024), idx)
    before = ub_bytes(m).copy()
    pto.ub.vsort32(m.ptr("ub", dt, 2048), m.ptr("ub", dt, 0), m.ptr("ub", "u32", 1024), repeat)
    want = before.copy()
    ref = _ref_sort32(scores, idx, npd)
    want[2048:2048 + len(ref)] = np.frombuffer(ref, np.uint8)
    np.testing.assert_array_equal(ub_bytes(m)[:8192], want[:8192])


def _ref_merge(lists, npd, exhausted):
    """Repeatedly take the highest head score (lower list number on ties)."""
    heads = [0] * len(lists)
    out = []
    while True:
        best = None
        for i, lst in enumerate(lists):
            if heads[i] < len(lst):
                s = float(np.frombuffer(lst[heads[i]][:npd.itemsize], npd)[0])
                if best is None or s > best[0]:
                    best = (s, i)
        if best is None:
            break
        i = best[1]
        out.append(lists[i][heads[i]])
        heads[i] += 1
        if exhausted and heads[i] == len(lists[i]):
            break
    return b"".join(out), heads


@SETTINGS
@given(dt=st.sampled_from(["f16", "f32"]), nlists=st.integers(1, 4), exhausted=st.booleans(), data=st.data())
def test_vmrgsort_matches_reference(dt, nlists, exhausted, data):
    npd = np.dtype(NP[dt])
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    lens = [data.draw(st.integers(0, 40)) for _ in range(nlists)]
    lists = []
    for n in lens:
        sc = -np.sort(-rng.integers(-5, 6, n).astype(npd))
        lists.append([_record(s, rng.integers(0, 1000), npd) for s in sc])
    m = machine("Ascend910B1", seed=8)
    ptrs = []
    for k, lst in enumerate(lists):
        at = 1024 * k + 8 * (k % 2)                              # 8-byte aligned sources
        ub_bytes(m)[at:at + 8 * len(lst)] = np.frombuffer(b"".join(lst), np.uint8)
        ptrs.append(m.ptr("ub", dt, at))
    before = ub_bytes(m).copy()
    kw = {"exhausted": True} if exhausted else {}
    pto.ub.vmrgsort(m.ptr("ub", dt, 8192), tuple(ptrs), tuple(lens), 1, **kw)
    merged, taken = _ref_merge(lists, npd, exhausted)
    want = before.copy()
    want[8192:8192 + len(merged)] = np.frombuffer(merged, np.uint8)
    np.testing.assert_array_equal(ub_bytes(m)[:16384], want[:16384])
    assert m.context(0).spr["VMS4_SR"] == tuple(taken + [0] * (4 - nlists))


def test_vmrgsort_repeat_form_merges_consecutive_lists():
    m = Machine("Ascend910B1")
    recs = []
    for r in range(2):
        for i in range(4):
            for k in range(3):
                recs.append(_record(10 * (4 - i) - k + r, 100 * r + 10 * i + k, np.dtype(np.float32)))
    ub_bytes(m)[:len(b"".join(recs))] = np.frombuffer(b"".join(recs), np.uint8)
    m.context(0).core.buffer("ub").written[:4096] = True
    srcs = tuple(m.ptr("ub", "f32", 24 * i) for i in range(4))
    pto.ub.vmrgsort(m.ptr("ub", "f32", 4096), srcs, (3, 3, 3, 3), 2)
    got = ub_bytes(m)[4096:4096 + 24 * 8].reshape(24, 8)
    idx = got[:, 4:].copy().view(np.uint32).ravel()
    np.testing.assert_array_equal(idx[:12], [0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32])
    np.testing.assert_array_equal(idx[12:], np.array([0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]) + 100)


def test_sort2_errors():
    m = Machine("Ascend910B1")
    with pytest.raises(UnsupportedOp, match="Ascend310P3 has no vsort32 instruction"):
        mp = Machine("Ascend310P3")
        pto.ub.vsort32(mp.ptr("ub", "f16", 0), mp.ptr("ub", "f16", 256), mp.ptr("ub", "u32", 512), 1)
    with pytest.raises(IllegalOperand, match="indices must be u32"):
        pto.ub.vsort32(m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 256), m.ptr("ub", "s32", 512), 1)
    with pytest.raises(UnsupportedOp, match="does not support vsort32 for s32"):
        pto.ub.vsort32(m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 256), m.ptr("ub", "u32", 512), 1)
    srcs = tuple(m.ptr("ub", "f32", 64 * i) for i in range(4))
    with pytest.raises(IllegalOperand, match="repeat > 1 needs four lists of equal length"):
        pto.ub.vmrgsort(m.ptr("ub", "f32", 4096), srcs, (1, 2, 1, 1), 2)
    with pytest.raises(IllegalOperand, match="lengths"):
        pto.ub.vmrgsort(m.ptr("ub", "f32", 4096), srcs[:1], (65536,), 1)
    from pto_core import Misaligned
    with pytest.raises(Misaligned):
        pto.ub.vmrgsort(m.ptr("ub", "f32", 4096), (m.ptr("ub", "f32", 4),), (1,), 1)
