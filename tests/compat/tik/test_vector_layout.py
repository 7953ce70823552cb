"""Transposes, scatter transposes, proposal fields, pattern reduce, proposal sort/merge and the
NMS instruction family through kernels, against independent references; error paths."""
import warnings

import numpy as np
import pytest

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp
from tbe_compat.tik.vector_layout import Repeat1StrideWarning

from .helpers import raises_tik
from .vec_helpers import vec_kernel

RNG = np.random.default_rng(5)


def test_vtranspose_and_vec_trans():
    x = np.arange(3 * 256).astype(np.float16)

    def body(ti, ub):
        ti.vtranspose(ub["d"], ub["x"])
        ti.vec_trans(ub["d"][256], ub["x"][256], 2, 1, 1)
    out = vec_kernel({"d": np.zeros(768, np.float16), "x": x}, body)["d"]
    want = np.concatenate([x[k * 256:(k + 1) * 256].reshape(16, 16).T.reshape(-1) for k in range(3)])
    np.testing.assert_array_equal(out, want)


def _scatter_ref(src_blocks, size, dh=False, sh=False):
    """CCE ISA cceapi_0059 pseudo-code (tik_api.md §9.10), block by block."""
    e_per = 32 // size
    dst = [[None] * e_per for _ in range(16)]
    if size == 2:
        for e in range(16):
            for k in range(16):
                dst[e][k] = src_blocks[k][e]
    elif size == 4:
        for e in range(0, 16, 2):
            for k in range(8):
                dst[e][k] = src_blocks[k][e // 2]
                dst[e + 1][k] = src_blocks[k + 8][e // 2]
    else:
        for e in range(16):
            for k in range(16):
                dst[e][k + 16 * dh] = src_blocks[k][e + 16 * sh]
    return dst


@pytest.mark.parametrize("dtype,api,flags,chip", [
    ("float16", "vnchwconv", (True, True), None), ("int32", "vec_trans_scatter", (False, False), "Ascend310P3"),
    ("uint8", "vnchwconv", (True, False), None), ("uint8", "vec_trans_scatter", (False, True), None)])
def test_scatter_transpose(dtype, api, flags, chip):
    dt = np.dtype(dtype)
    e = 32 // dt.itemsize
    src = RNG.integers(0, 100, 16 * e * 2).astype(dt)            # 16 blocks per repeat, 2 repeats
    dst = np.full(16 * e * 2, 7, dt)

    def body(ti, ub):
        dl = [ub["d"][i * e] for i in range(16)]                   # dst block i at i*32 B, repeat stride 16 blocks
        sl = [ub["s"][i * e] for i in range(16)]
        getattr(ti, api)(flags[0], flags[1], dl, sl, 2, 16, 16)
    out = vec_kernel({"d": dst, "s": src}, body, chip=chip)["d"]
    want = dst.copy()
    for r in range(2):
        blocks = [src[(r * 16 + k) * e:(r * 16 + k + 1) * e] for k in range(16)]
        res = _scatter_ref(blocks, dt.itemsize, flags[0], flags[1])
        for j in range(16):
            for c, v in enumerate(res[j]):
                if v is not None:
                    want[(r * 16 + j) * e + c] = v
    np.testing.assert_array_equal(out, want)


def test_vconcat_vextract_roundtrip():
    fields = RNG.uniform(0, 50, (5, 32)).astype(np.float16)

    def body(ti, ub):
        for m in range(5):
            ti.vconcat(ub["p"], ub["f"][m * 32], 2, m)
        ti.vextract(ub["o"], ub["p"], 2, 4)
    out = vec_kernel({"p": np.zeros(256, np.float16), "f": fields.reshape(-1), "o": np.zeros(32, np.float16)}, body,
                     chip="Ascend310P3")
    prop = out["p"].reshape(32, 8)
    np.testing.assert_array_equal(prop[:, :5], fields.T)
    np.testing.assert_array_equal(prop[:, 5:], 0)
    np.testing.assert_array_equal(out["o"], fields[4])


@pytest.mark.parametrize("pattern", [1, 2, 3, 6])
def test_vreduce_builtin_patterns(pattern):
    x = np.arange(256).astype(np.float16)
    out = vec_kernel({"d": np.full(256, -1, np.float16), "x": x},
                     lambda ti, ub: ti.vreduce(128, ub["d"], ub["x"], pattern, 2, 1, 8, 0),
                     chip="Ascend310P3")["d"]
    lane = np.arange(128)
    keep = {1: lane % 2 == 0, 2: lane % 2 == 1, 3: lane % 4 == 0, 6: lane % 4 == 3}[pattern]
    want = np.concatenate([x[:128][keep], x[128:][keep]])
    np.testing.assert_array_equal(out[:want.size], want)
    np.testing.assert_array_equal(out[want.size:], -1)


def test_vreduce_with_a_bit_pattern_tensor():
    x = np.arange(128).astype(np.float32)
    pat = np.zeros(16, np.uint32)
    pat[0], pat[1] = 0x80000003, 0x1                   # repeat 0: lanes 0, 1, 31, 32
    pat[2], pat[3] = 0x80000003, 0x1                   # repeat 1: the next 64 bits (stride 1 = one repeat's bits)
    pat[8] = 0xFFFFFFFF                                # 32 B further: not read
    out = vec_kernel({"d": np.full(64, -1, np.float32), "x": x, "p": pat},
                     lambda ti, ub: ti.vreduce(64, ub["d"], ub["x"], ub["p"], 2, 1, 8, 1),
                     chip="Ascend910B1")["d"]
    np.testing.assert_array_equal(out[:8], [0, 1, 31, 32, 64, 65, 95, 96])
    np.testing.assert_array_equal(out[8:], -1)


def test_vreduce_normal_mode_mask_none_takes_every_lane():
    # CANN sorted_nms: vreduce(mask=None, ..., src1_pattern=bits) in normal mode
    x = np.arange(64).astype(np.float32)
    pat = np.zeros(8, np.uint32)
    pat[0], pat[1] = 0x80000005, 0x2                   # lanes 0, 2, 31, 33
    out = vec_kernel({"d": np.full(64, -1, np.float32), "x": x, "p": pat},
                     lambda ti, ub: ti.vreduce(None, ub["d"], ub["x"], ub["p"], 1, 1, 8, 0),
                     chip="Ascend910B1")["d"]
    np.testing.assert_array_equal(out[:5], [0, 2, 31, 33, -1])


def test_vreduce_rsvd_scalar_holds_the_count_the_op_kept():
    x = np.arange(256).astype(np.float16)
    bufs = {"d": np.full(256, -1, np.float16), "x": x, "c": np.full(16, -9, np.int32)}

    def body(ti, ub):
        n = ti.Scalar("uint32", name="n")
        for k, pattern in enumerate((1, 3)):           # the second vreduce overwrites RSVD_CNT
            ti.vreduce(128, ub["d"], ub["x"], pattern, 2, 1, 8, 0, rsvd_scalar=n)
            ub["c"][k].set_as(n)
    out = vec_kernel(bufs, body, chip="Ascend310P3")["c"]
    assert list(out[:2]) == [128, 64]                  # 2 repeats: even lanes, then every 4th lane


@pytest.mark.parametrize("read", ["array", "mov"])
def test_vmrgsort4_exhausted_counts_reach_scalars(read):
    a = _proposals(4, RNG, score_order=[9, 5, 1, 100])         # 3 proposals used (48 B; the buffer is 64 B)
    b = _proposals(4, RNG, score_order=[8, 7, 6, 0.5])
    bufs = {"a": a.reshape(-1), "b": b.reshape(-1), "m": np.zeros(64, np.float16), "c": np.full(8, -9, np.int32)}

    def body(ti, ub):
        sc = [ti.Scalar("int64", name=f"sr{i}", init_value=-1) for i in range(4)]
        if read == "array":
            ti.vmrgsort4(ub["m"], [ub["a"], ub["b"]], [3, 4], True, 3, 1, sc)
        else:
            sr = ti.vmrgsort4(ub["m"], [ub["a"], ub["b"]], [3, 4], True, 3, 1)
            ti.mov_vmrgsort4_sr_to_scalar(sc, sr)
        for i in range(4):
            ub["c"][i].set_as(sc[i])
    out = vec_kernel(bufs, body, chip="Ascend310P3")
    # 9, 8, 7, 6, 5, 1: list a runs out with 1 (3 taken), list b gave 3; unused lists report 0
    assert list(out["c"][:4]) == [3, 3, 0, 0]
    assert list(out["m"].reshape(-1, 8)[:6, 4]) == [9, 8, 7, 6, 5, 1]


def _proposals(n, rng, score_order=None):
    x1 = rng.integers(0, 30, n)
    y1 = rng.integers(0, 30, n)
    p = np.zeros((n, 8), np.float16)
    p[:, 0], p[:, 1] = x1, y1
    p[:, 2], p[:, 3] = x1 + rng.integers(2, 12, n), y1 + rng.integers(2, 12, n)
    p[:, 4] = rng.permutation(n).astype(np.float16) / 4 if score_order is None else score_order
    p[:, 5] = np.arange(n)
    return p


def test_vrpsort16_and_vmrgsort4():
    p = _proposals(64, RNG)

    def body(ti, ub):
        ti.vrpsort16(ub["s"], ub["p"], 4)
        ti.vmrgsort4(ub["m"], [ub["s"], ub["s"][128], ub["s"][256], ub["s"][384]], [16, 16, 16, 16], False, 15, 1)
    out = vec_kernel({"p": p.reshape(-1), "s": np.zeros(512, np.float16), "m": np.zeros(512, np.float16)}, body)
    sorted16 = out["s"].reshape(4, 16, 8)
    for g in range(4):
        np.testing.assert_array_equal(sorted16[g], p[g * 16:(g + 1) * 16][np.argsort(-p[g * 16:(g + 1) * 16, 4],
                                                                                  kind="stable")])
    merged = out["m"].reshape(64, 8)
    assert list(merged[:, 4]) == sorted(p[:, 4], reverse=True)
    assert set(merged[:, 5]) == set(range(64))


def test_vrpsort16_chip_check_is_tiks_vbitsort_row():
    """vrpsort16's chip check is TIK's: the ini ``vbitsort`` row (TIK's vrpsort16 is ``_special_intrin_func(
    'vbitsort', ...)``; CANN 8.1 ``tik_api_map`` maps vrpsort16 -> vbitsort). The Ascend910B1 ini lists
    ``vbitsort=float16``, so float16 is accepted there (the Ascend C RpSort16 page marks Atlas A2 unsupported:
    doc vs ini, k460 keeps TIK's check); float32 is not in that row, and vconcat is not in that ini at all."""
    p = _proposals(16, RNG)
    out = vec_kernel({"p": p.reshape(-1), "s": np.zeros(128, np.float16)},
                     lambda ti, ub: ti.vrpsort16(ub["s"], ub["p"], 1), chip="Ascend910B1")
    np.testing.assert_array_equal(out["s"].reshape(16, 8), p[np.argsort(-p[:, 4], kind="stable")])
    with raises_tik(UnsupportedOp, match="float32"):
        vec_kernel({"p": np.zeros(128, np.float32), "s": np.zeros(128, np.float32)},
                   lambda ti, ub: ti.vrpsort16(ub["s"], ub["p"], 1), chip="Ascend910B1", build_only=True)
    with raises_tik(UnsupportedOp, match="vconcat"):
        vec_kernel({"p": np.zeros(128, np.float16), "s": np.zeros(16, np.float16)},
                   lambda ti, ub: ti.vconcat(ub["p"], ub["s"], 1, 4), chip="Ascend910B1", build_only=True)


def test_vmrgsort4_takes_tik_keyword_names():
    """TIK's vmrgsort4 names its third parameter element_count_list (tik_proposal_api, as vmrgsort does):
    an all-keyword call merges exactly as the positional one (sig212)."""
    p = _proposals(64, RNG)
    bufs = {"p": p.reshape(-1), "s": np.zeros(512, np.float16), "m": np.zeros(512, np.float16)}

    def body(keyword):
        def run(ti, ub):
            ti.vrpsort16(dst=ub["s"], src=ub["p"], repeat_times=4)
            srcs = [ub["s"], ub["s"][128], ub["s"][256], ub["s"][384]]
            if keyword:
                ti.vmrgsort4(dst=ub["m"], src_list=srcs, element_count_list=[16, 16, 16, 16],
                             if_exhausted_suspension=False, valid_bit=15, repeat_times=1, vms4_sr_scalar_array=None)
            else:
                ti.vmrgsort4(ub["m"], srcs, [16, 16, 16, 16], False, 15)
        return run
    got = vec_kernel(dict(bufs), body(True))["m"]
    np.testing.assert_array_equal(got, vec_kernel(dict(bufs), body(False))["m"])
    assert list(got.reshape(64, 8)[:, 4]) == sorted(p[:, 4], reverse=True)


def test_vmrgsort4_accepts_the_2019_keyword_element_lengths():
    """LEGACY_KEYWORDS: Huawei's 2019 CANN topk helper passes element_lengths= (the older TIK's name of
    element_count_list); it merges exactly as the current keyword. Both at once is a bad-arguments error
    naming the two keywords (pub296: the shipped kernel was refused)."""
    p = _proposals(64, RNG)
    bufs = {"p": p.reshape(-1), "s": np.zeros(512, np.float16), "m": np.zeros(512, np.float16)}

    def body(**lens):
        def run(ti, ub):
            ti.vrpsort16(dst=ub["s"], src=ub["p"], repeat_times=4)
            srcs = [ub["s"], ub["s"][128], ub["s"][256], ub["s"][384]]
            ti.vmrgsort4(ub["m"], srcs, if_exhausted_suspension=False, valid_bit="1111", repeat_times=1, **lens)
        return run
    got = vec_kernel(dict(bufs), body(element_lengths=[16, 16, 16, 16]))["m"]
    np.testing.assert_array_equal(got, vec_kernel(dict(bufs), body(element_count_list=[16, 16, 16, 16]))["m"])
    assert list(got.reshape(64, 8)[:, 4]) == sorted(p[:, 4], reverse=True)
    with pytest.raises(IllegalOperand, match=r"both element_lengths= and element_count_list= given") as e:
        vec_kernel(dict(bufs), body(element_lengths=[16] * 4, element_count_list=[16] * 4))
    assert "test_vector_layout.py" in str(e.value) and "pass only element_count_list=" in str(e.value)


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910", "Ascend310P3"])
def test_vmrgsort4_f16_lists_at_16_byte_offsets(chip):
    """f16 lists of an odd number of proposals packed one after another: the second list and dst start
    16 B into a block, which MrgSort4 allows for half (16 B; float 32 B). Was refused at run time."""
    a = np.zeros((3, 8), np.float16)
    a[:, 4] = [3, 2, 1]
    b = np.zeros((2, 8), np.float16)
    b[:, 4] = [2.5, 0.5]
    b[:, 5] = 7

    def body(ti, ub):
        ti.vmrgsort4(ub["d"][8], [ub["s"][0], ub["s"][24]], [3, 2], False, 3, 1)
    out = vec_kernel({"s": np.concatenate([a, b, np.zeros((1, 8), np.float16)]).reshape(-1),
                      "d": np.full(8 * 8, 9, np.float16)}, body, chip=chip)["d"].reshape(8, 8)
    np.testing.assert_array_equal(out[1:6, 4], np.array([3, 2.5, 2, 1, 0.5], np.float16))
    np.testing.assert_array_equal(out[1:6, 5], np.array([0, 7, 0, 0, 7], np.float16))
    assert (out[0] == 9).all() and (out[6:] == 9).all()


def test_vmrgsort4_f32_lists_need_32_bytes():
    def body(ti, ub):
        ti.vmrgsort4(ub["d"], [ub["s"][0], ub["s"][4]], [1, 1], False, 3, 1)
    with raises_tik(Misaligned, match="32-byte"):
        vec_kernel({"s": np.zeros(24, np.float32), "d": np.zeros(16, np.float32)}, body, chip="Ascend310P3")


@pytest.mark.parametrize("api,chip", [("vreduce", "Ascend310P3"), ("vreducev2", "Ascend910B1")])
def test_vreduce_kept_elements_must_fit_dst(api, chip):
    """The kept count depends on the pattern bits, so the bound is checked when the op runs: enough room
    (from a run-time offset) passes, one element too many raises before anything is written."""
    src = np.arange(128, dtype=np.uint16) + 1
    bits = np.zeros(16, np.uint16)
    bits[0] = 0xFFFF                                  # lanes 0..15 kept

    def body(ti, ub):
        off = ti.Scalar("int32", name="off", init_value=ub["o"])
        getattr(ti, api)(128, ub["d"][off], ub["s"], ub["p"], 1, 1, 8, 0)
    out = vec_kernel({"s": src, "p": bits, "d": np.zeros(48, np.uint16)}, body, chip=chip,
                     scalars={"o": ("int32", 32)})["d"]           # 16 kept into the last 16 elements
    np.testing.assert_array_equal(out, np.concatenate([np.zeros(32, np.uint16), src[:16]]))
    bits[1] = 1                                       # lane 16 too: 17 kept
    with raises_tik(OutOfBounds, match="keeps 17 elements but dst holds only 16"):
        vec_kernel({"s": src, "p": bits, "d": np.zeros(48, np.uint16)}, body, chip=chip, scalars={"o": ("int32", 32)})


def test_vmrgsort4_extents_and_overlap():
    """TIK's vmrgsort4 overflow rule (dst: the valid lists' proposals plus whole later repeats; each valid
    source: its list plus whole later repeats) and MrgSort4's no-overlap rule."""
    p = _proposals(48, RNG)
    srt = np.concatenate([g[np.argsort(-g[:, 4], kind="stable")] for g in p.reshape(3, 16, 8)])

    def body(ti, ub):          # lists in the first 384 halves of "w", merged into its last 384: no overlap
        w = ub["w"]
        ti.vmrgsort4(w[384], [w[0], w[128], w[256], w[0]], [16, 16, 16, 16], False, 7, 1)
    w = np.concatenate([srt.reshape(-1), np.full(384, 3, np.float16)])
    out = vec_kernel({"w": w}, body)["w"]
    np.testing.assert_array_equal(out[:384], srt.reshape(-1))
    merged = out[384:].reshape(48, 8)
    np.testing.assert_array_equal(merged, p[np.argsort(-p[:, 4], kind="stable")])

    h = np.zeros(1024, np.float16)
    srcs = lambda s: [s[0], s[128], s[256], s[384]]          # noqa: E731
    with raises_tik(OutOfBounds, match=r"dst tensor overflow, expected elements nums: 384, actual elements nums: 368"):
        vec_kernel({"d": np.zeros(368, np.float16), "s": h},
                   lambda ti, ub: ti.vmrgsort4(ub["d"], srcs(ub["s"]), [16, 16, 16, 16], False, 7, 1),
                   build_only=True)
    with raises_tik(OutOfBounds, match=r"src_list\[3\] tensor overflow, expected elements nums: 1024, actual "
                                       r"elements nums: 896"):
        vec_kernel({"d": np.zeros(1024, np.float16), "s": h[:896]},  # repeat 2: each list spans 16 + 64 proposals
                   lambda ti, ub: ti.vmrgsort4(ub["d"], srcs(ub["s"]), [16, 16, 16, 16], False, 15, 2),
                   build_only=True)
    with raises_tik(IllegalOperand, match=r"dst and src_list\[2\] overlap"):
        vec_kernel({"s": h}, lambda ti, ub: ti.vmrgsort4(ub["s"][320], srcs(ub["s"]), [16, 16, 16, 8], False, 7, 1),
                   build_only=True)



def test_vmrgsort4_run_time_repeat_checks_dst_when_it_runs():
    """A Scalar repeat_times: the same extents as an immediate repeat, checked when the op runs; before,
    no check was made and the later repeats wrote past dst into its UB neighbour."""
    p = _proposals(128, RNG)
    srt = np.concatenate([g[np.argsort(-g[:, 4], kind="stable")] for g in p.reshape(8, 16, 8)])
    srcs = lambda s: [s[0], s[128], s[256], s[384]]          # noqa: E731

    def body(rt):
        def f(ti, ub):
            rep = ti.Scalar("int32", init_value=2) if rt else 2
            ti.vmrgsort4(ub["d"], srcs(ub["s"]), [16, 16, 16, 16], False, 15, rep)
        return f
    bufs = {"d": np.zeros(1024, np.float16), "s": srt.reshape(-1)}
    np.testing.assert_array_equal(vec_kernel(bufs, body(True))["d"], vec_kernel(bufs, body(False))["d"])
    with raises_tik(OutOfBounds, match=r"test_vector_layout.py:\d+ in `tik.vmrgsort4`: tensor overflow: dst "
                                       r".*needs elements \[0, 1024\) but the tensor has only 512"):
        vec_kernel({"d": np.zeros(512, np.float16), "s": srt.reshape(-1)}, body(True))


@pytest.mark.parametrize("exhausted, valid", [(False, 15), (False, 7), (True, 15)])
def test_vmrgsort4_run_time_repeat_zero_is_a_no_op_not_an_overflow(exhausted, valid):
    """repeat_times 0 at run time is a no-op (tik_api.md 9.1): its extents are 0, so a dst too short for one
    merge is not an error (the run-time check treated 0 as one repeat and refused the legal kernel); 1 still
    is checked."""
    for rep, fits in ((0, True), (1, False)):
        def body(ti, ub, rep=rep):
            r = ti.Scalar("int32", init_value=rep)
            ti.vmrgsort4(ub["d"], [ub["s"][0], ub["s"][128], ub["s"][256], ub["s"][384]], [16] * 4, exhausted,
                         valid, r)
        bufs = {"d": np.full(16, 3, np.float16), "s": np.zeros(512, np.float16)}
        if fits:
            assert (vec_kernel(bufs, body, chip="Ascend910")["d"] == 3).all()
        else:
            with raises_tik(OutOfBounds, match=r"test_vector_layout.py:\d+ in `tik.vmrgsort4`: tensor overflow: dst"):
                vec_kernel(bufs, body, chip="Ascend910")


def _areas(p, off=1.0):
    return (p[:, 2].astype(np.float64) - p[:, 0] + off) * (p[:, 3].astype(np.float64) - p[:, 1] + off)


def _inter(a, b, off=1.0):
    w = np.minimum(a[:, None, 2], b[None, :, 2]).astype(np.float64) - np.maximum(a[:, None, 0], b[None, :, 0]) + off
    h = np.minimum(a[:, None, 3], b[None, :, 3]).astype(np.float64) - np.maximum(a[:, None, 1], b[None, :, 1]) + off
    return np.maximum(w, 0) * np.maximum(h, 0)


@pytest.mark.parametrize("offset", [None, 0.0])
def test_vrpac_viou_vaadd(offset):
    p = _proposals(32, RNG)

    def body(ti, ub):
        if offset is not None:
            ti.set_rpn_offset(offset)
        ti.vrpac(ub["a"], ub["p"], 2)
        ti.viou(ub["i"], ub["p"], ub["p"][128], 2)
        ti.vaadd(ub["j"], ub["a"], ub["a"][16], 2)
    out = vec_kernel({"p": p.reshape(-1), "a": np.zeros(32, np.float16), "i": np.zeros(512, np.float16),
                      "j": np.zeros(512, np.float16)}, body, chip="Ascend310P3")
    off = 1.0 if offset is None else offset
    a = _areas(p, off)
    np.testing.assert_array_equal(out["a"], a.astype(np.float16))
    np.testing.assert_array_equal(out["i"].reshape(32, 16), _inter(p, p[16:], off).astype(np.float16))
    np.testing.assert_array_equal(out["j"].reshape(32, 16), (a[:, None] + a[None, 16:]).astype(np.float16))


def _greedy_nms(p, thresh):
    a = _areas(p)
    inter = _inter(p, p)
    iou = inter / (a[:, None] + a[None, :] - inter)
    kept, sup = [], np.zeros(len(p), bool)
    for i in range(len(p)):
        if sup[i]:
            continue
        kept.append(i)
        sup[i + 1:] |= iou[i, i + 1:] > thresh
    return kept


def _separated_proposals(n, rng, thresh):
    """``n`` score-ordered proposals with no pair within rounding distance of the IoU threshold."""
    while True:
        p = _proposals(n, rng, score_order=np.arange(n, 0, -1).astype(np.float16))
        a = _areas(p)
        inter = _inter(p, p)
        if (np.abs(inter - (a[:, None] + a[None, :]) * thresh / (1 + thresh)) > 2).all():
            return p


@pytest.mark.parametrize("form, seed", [("nms_with_mask", 3), ("cce_nms", 5)])
def test_nms_pipeline_as_huawei_kernels_build_it(form, seed):
    """viou / vaadd / vmuls / vcmpv_gt / rpn_cor / rpn_cor_diag keep exactly the proposals a greedy IoU > t NMS
    keeps, in both Huawei call patterns (tik_vector.md §5): CANN nms_with_mask fills the suppression vector with
    1 and ORs only earlier groups; CANN cce_nms (proposal, ssd_detection_output) and the YOLO nms_filter pre-set
    the top box's entry to 0 and pass the first group's own diagonal block to rpn_cor. The second form keeps its
    top box only under the named choice RPN_COR_DIAG_KEEPS_ZERO_ENTRIES (the register's bit 0 is the box's
    overlap with itself)."""
    rng = np.random.default_rng(seed)
    thresh, n = 0.5, 48
    p = _separated_proposals(n, rng, thresh)

    def body(ti, ub):
        ti.vrpac(ub["area"], ub["p"], 3)
        ti.vec_dup(48, ub["sup"], 1, 1, 0)
        if form == "cce_nms":
            ub["sup"][0].set_as(0)
        for i in range(3):
            length = 16 * (i + 1)
            ti.viou(ub["iou"], ub["p"], ub["p"][i * 128], i + 1)
            ti.vaadd(ub["join"], ub["area"], ub["area"][i * 16], i + 1)
            ti.vmuls(128, ub["join"], ub["join"], thresh / (1 + thresh), length // 8, 1, 1, 8, 8)
            ti.vcmpv_gt(ub["mat"], ub["iou"], ub["join"], length // 8, 1, 1, 8, 8)
            ir = ti.set_rpn_cor_ir(0)
            if form == "cce_nms":
                ir = ti.rpn_cor(ub["mat"], ub["sup"], 1, 1, max(i, 1))     # group 0: its own diagonal block
            elif i > 0:
                ir = ti.rpn_cor(ub["mat"], ub["sup"], 1, 1, i)
            ti.rpn_cor_diag(ub["sup"][i * 16], ub["mat"][length - 16], ir)
    out = vec_kernel({"p": p.reshape(-1), "area": np.zeros(48, np.float16), "sup": np.zeros(48, np.uint16),
                      "iou": np.zeros(768, np.float16), "join": np.zeros(768, np.float16),
                      "mat": np.zeros(48, np.uint16)}, body, chip="Ascend310P3")
    kept = list(np.nonzero(out["sup"] == 0)[0])
    assert kept[0] == 0
    assert kept == _greedy_nms(p, thresh)
    assert 0 < len(kept) < n


def test_layout_errors():
    f = np.zeros(256, np.float16)
    with raises_tik(IllegalOperand, match="dst_list should be a list of 16"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vnchwconv(False, False, [ub["d"]] * 8, [ub["s"]] * 16, 1, 0, 0),
                   build_only=True)
    with raises_tik(IllegalOperand, match="dst_high_half must be a bool"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vnchwconv(1, False, [ub["d"]] * 16, [ub["s"]] * 16, 1, 0, 0),
                   build_only=True)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vec_trans(ub["d"], ub["s"], 2, 1, 1), build_only=True)
    with raises_tik(IllegalOperand, match="mode_number = 6"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vconcat(ub["d"], ub["s"], 1, 6), build_only=True)
    with raises_tik(IllegalOperand, match=r"mode_number = 4 is outside \[0, 3\].*on Ascend310 vextract reads only the "
                                          r"coordinates \(0 x1, 1 y1, 2 x2, 3 y2\)"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vextract(ub["d"], ub["s"], 1, 4), chip="Ascend310",
                   build_only=True)
    with raises_tik(IllegalOperand, match="When src dtype is b16, src1 dtype should be u16, input src1 dtype: uint8"):
        vec_kernel({"d": f, "s": f, "p": np.zeros(32, np.uint8)},
                   lambda ti, ub: ti.vreduce(128, ub["d"], ub["s"], ub["p"], 1, 1, 8, 0), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="rsvd_scalar dtype should be uint32, input dtype is int64"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vreduce(128, ub["d"], ub["s"], 1, 1, 1, 8, 0,
                                                             rsvd_scalar=ti.Scalar("int64")), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match="vms4_sr can't be read in non-exhausted mode"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vmrgsort4(ub["d"], [ub["s"], ub["s"]], 4, False, 3, 1,
                                                               [ti.Scalar("int64") for _ in range(4)]),
                   chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="vms4_sr_scalar_array should be a list of at least 4 Scalars"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vmrgsort4(ub["d"], [ub["s"], ub["s"]], 4, True, 3, 1,
                                                               [ti.Scalar("int64")]), chip="Ascend310P3",
                   build_only=True)
    with raises_tik(IllegalOperand, match=r"scalar_list\[2\] dtype should be int64, input dtype is int32"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.mov_vmrgsort4_sr_to_scalar(
            [ti.Scalar("int64"), ti.Scalar("int64"), ti.Scalar("int32"), ti.Scalar("int64")],
            ti.vmrgsort4(ub["d"], [ub["s"], ub["s"]], 4, True, 3, 1)), chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="vms4_sr is the return of vmrgsort4"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.mov_vmrgsort4_sr_to_scalar(
            [ti.Scalar("int64") for _ in range(4)], 0), chip="Ascend310P3", build_only=True)
    with raises_tik(UnsupportedOp, match="viou"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.viou(ub["d"], ub["s"], ub["s"], 1), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(UnsupportedOp, match="set_rpn_offset is not supported on Ascend310"):
        vec_kernel({"d": f}, lambda ti, ub: ti.set_rpn_offset(0.0), chip="Ascend310", build_only=True)
    with raises_tik(IllegalOperand, match="src_register not equal to RPN_COR_IR"):
        vec_kernel({"d": np.zeros(16, np.uint16)}, lambda ti, ub: ti.rpn_cor_diag(ub["d"], ub["d"], 0),
                   chip="Ascend310", build_only=True)
    with raises_tik(IllegalOperand, match="valid bits only support"):
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.vmrgsort4(ub["d"], [ub["s"], ub["s"]], 4, False, 5),
                   chip="Ascend310", build_only=True)


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310B1"])
def test_nms_instructions_absent_on_the_chip_say_so(chip):
    """rpn_cor has no dtype to name and viou's f16 is not the problem: the message says the chip lacks the
    instruction (it used to read 'tik.rpn_cor does not support  on Ascend910B1' and advise another dtype)."""
    m = np.zeros(32, np.uint16)
    with raises_tik(UnsupportedOp, match=rf"tik.rpn_cor is not available on {chip} AiCore \(the chip has no "
                                         r"rpn_cor instruction\).*select a chip that has it") as info:
        vec_kernel({"m": m}, lambda ti, ub: ti.rpn_cor(ub["m"], ub["m"][16], 1, 1, 1), chip=chip,
                   build_only=True)
    assert "supported dtype" not in str(info.value)
    with raises_tik(UnsupportedOp, match=rf"tik.viou does not support float16 on {chip} AiCore \(the chip has "
                                         r"no viou instruction\)") as info:
        f = np.zeros(512, np.float16)
        vec_kernel({"d": f, "s": f}, lambda ti, ub: ti.viou(ub["d"], ub["s"], ub["s"], 1), chip=chip,
                   build_only=True)
    assert "supported dtype" not in str(info.value)


def test_vnchwconv_b32_needs_the_chip_instruction():
    """32-bit scatter transposes exist on 310P/910B (b32: destination block 2j takes element j of source
    blocks 0..7, block 2j+1 element j of blocks 8..15); Ascend310 has no b32 form: refused at the call."""
    x = (np.arange(128, dtype=np.int32) * 7) % 101

    def body(ti, ub):
        ti.vnchwconv(False, False, [ub["d"][8 * i] for i in range(16)], [ub["x"][8 * i] for i in range(16)], 1, 0, 0)
    out = vec_kernel({"x": x, "d": np.zeros(128, np.int32)}, body, chip="Ascend310P3")["d"]
    blocks = x.reshape(16, 8)
    want = np.stack([blocks[8 * (e % 2):8 * (e % 2) + 8, e // 2] for e in range(16)])
    np.testing.assert_array_equal(out.reshape(16, 8), want)
    with raises_tik(UnsupportedOp, match="tik.vnchwconv does not support int32 on Ascend310"):
        vec_kernel({"x": x, "d": np.zeros(128, np.int32)}, body, chip="Ascend310", build_only=True)


@pytest.mark.parametrize("api", ["vnchwconv", "vec_trans_scatter"])
@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910A"])
def test_vnchwconv_dtype_refusal_lists_only_dtypes_the_call_accepts(api, chip):
    """A dtype refusal's Fix lists the chip's dtypes for the API: on Ascend310/910 TIK's API table lists b32
    too, but the ini (and so the call) refuses it; the Fix listed int32, uint32, float32 (a refused dtype)."""
    x = np.zeros(64, np.int64)

    def body(ti, ub):
        getattr(ti, api)(False, False, [ub["d"][4 * i] for i in range(16)], [ub["x"][4 * i] for i in range(16)],
                         1, 0, 0)
    with raises_tik(UnsupportedOp, match="with int64 is not supported") as info:
        vec_kernel({"x": x, "d": x.copy()}, body, chip=chip, build_only=True)
    fix = str(info.value).split("Fix:")[1]
    assert "float16" in fix and not any(d in fix for d in ("int32", "float32"))


def test_vnchwconv_bf16_on_910b_is_the_16_bit_transpose():
    """TIK's API table lists bfloat16 for tik.vnchwconv on Ascend910B (tik_api.md Appendix B, §9.10
    "910B + bf16"); the 910B ini row has no bfloat16, which refused it (a false rejection). It moves the
    bytes as float16 does; 310P's table has no bfloat16: still refused there."""
    import ml_dtypes
    x = (np.arange(256) % 97 - 40).astype(ml_dtypes.bfloat16)

    def body(ti, ub):
        ti.vnchwconv(False, False, [ub["d"][16 * i] for i in range(16)], [ub["x"][16 * i] for i in range(16)],
                     1, 0, 0)
    out = vec_kernel({"x": x, "d": np.zeros(256, ml_dtypes.bfloat16)}, body, chip="Ascend910B1")["d"]
    np.testing.assert_array_equal(out.view(np.uint16).reshape(16, 16), x.view(np.uint16).reshape(16, 16).T)
    with raises_tik(UnsupportedOp, match="bfloat16"):
        vec_kernel({"x": x, "d": np.zeros(256, ml_dtypes.bfloat16)}, body, chip="Ascend310P3", build_only=True)


def test_vnchwconv_with_one_repeat_starts_one_stride_in_and_checks_that_extent():
    """TIK vnchwconv / Ascend C TransDataTo5HD: with repeat_times 1 the blocks start at the list addresses plus the
    repeat strides (kernels pass 0 to start at the list); the extent check counts that stride."""
    a = np.arange(512, dtype=np.float16)
    with pytest.warns(Repeat1StrideWarning, match=r"vnchwconv with repeat_times 1 and repeat strides \(dst 2, src "
                                                  r"1\): the one repeat starts one stride after the list addresses") \
            as seen:
        out = vec_kernel({"s": a, "d": np.full(512, -1, np.float16)}, lambda ti, ub: ti.vnchwconv(
            False, False, [ub["d"][16 * i] for i in range(16)], [ub["s"][16 * i] for i in range(16)], 1, 2, 1),
            chip="Ascend910B1")["d"]
    assert str(seen[0].message).startswith(f"{seen[0].filename}:{seen[0].lineno} in `tik.vnchwconv`: ")  # -W error
    assert seen[0].filename == __file__             # the user's line, not the simulator's
    want = np.full(512, -1, np.float16)
    want[32:288] = a.reshape(32, 16)[1:17].T.reshape(-1)        # src blocks 1..16, dst blocks 2..17
    np.testing.assert_array_equal(out, want)
    with pytest.warns(Repeat1StrideWarning), \
            raises_tik(OutOfBounds, match="dst_list\\[15\\] tensor overflow.*with repeat_times 1 the blocks start "
                                          "one repeat stride \\(1 x 32 B\\) after the list addresses"):
        vec_kernel({"s": a, "d": np.zeros(256, np.float16)}, lambda ti, ub: ti.vnchwconv(
            False, False, [ub["d"][16 * i] for i in range(16)], [ub["s"][16 * i] for i in range(16)], 1, 1, 0),
            chip="Ascend910B1", build_only=True)
    with warnings.catch_warnings():                  # strides 0: the list addresses, no warning
        warnings.simplefilter("error", Repeat1StrideWarning)
        out = vec_kernel({"s": a[:256], "d": np.full(256, -1, np.float16)}, lambda ti, ub: ti.vec_trans_scatter(
            False, False, [ub["d"][16 * i] for i in range(16)], [ub["s"][16 * i] for i in range(16)], 1, 0, 0),
            chip="Ascend910B1")["d"]
    np.testing.assert_array_equal(out, a[:256].reshape(16, 16).T.reshape(-1))


def test_vnchwconv_one_repeat_overflow_found_at_run_time_gives_the_same_advice():
    """A list address computed at run time (a for_range index, as in a public batch-matmul kernel's
    final transpose) moves the extent check to run time; its failure still names the repeat-1 rule
    rather than only the generic advice."""
    a = np.arange(256, dtype=np.float16)

    def body(ti, ub):
        with ti.for_range(0, 1) as j:
            ti.vnchwconv(True, True, [ub["d"][16 * k + 16 * j] for k in range(16)],
                         [ub["s"][16 * k + 16 * j] for k in range(16)], 1, 16, 1)
    with pytest.warns(Repeat1StrideWarning), \
            raises_tik(OutOfBounds, match="needs elements \\[0, 272\\).*with repeat_times 1 the blocks start one "
                                          "repeat stride \\(16 x 32 B\\) after the list addresses"):
        vec_kernel({"s": a, "d": np.zeros(256, np.float16)}, body, chip="Ascend910B1")


def test_vnchwconv_repeats_run_in_order_when_destination_blocks_collide():
    """dst_rep_stride 1 block with 16 consecutive destination blocks: repeat r writes blocks r..r+15,
    so each block keeps what the *last* repeat writing it stored (the repeats are sequential
    iterations). A 4-row gather kernel relies on block r holding output block 0 of repeat r."""
    s = np.arange(16 * 16 * 4, dtype=np.float16)        # 4 repeats x 16 source blocks x 16 lanes
    d = np.full(16 * 20, -1, np.float16)

    def body(ti, ub):
        ti.vnchwconv(False, False, [ub["d"][16 * i] for i in range(16)], [ub["s"][16 * i] for i in range(16)],
                     4, 1, 16)
    out = vec_kernel({"d": d, "s": s}, body)["d"].reshape(20, 16)
    want = d.reshape(20, 16).copy()
    for r in range(4):                                     # independent loop in repeat order
        src = s.reshape(4, 16, 16)[r]                      # (source block k, lane e)
        for j in range(16):
            want[r + j] = src[:, j]                        # dst block j of repeat r = lane j of every src block
    np.testing.assert_array_equal(out, want)
    assert (out[:4] == s.reshape(4, 16, 16)[:, :, 0]).all()    # block r = lane 0 of repeat r's sources


@pytest.mark.parametrize("dst_at,src1_at", [(0, 4), (4, 8)])
def test_vmrgsort4_f32_static_16_byte_offset_is_refused_when_traced(dst_at, src1_at):
    """A static f32 list or dst 16 B into a block breaks MRGSORT4_ALIGN (32 B for float): TIK's check names
    it at trace time with the 32-byte rule (it used to pass the trace and fail only when the kernel ran)."""
    def body(ti, ub):
        ti.vmrgsort4(ub["d"][dst_at], [ub["s"][0], ub["s"][src1_at]], [1, 1], False, 3, 1)
    with raises_tik(Misaligned, match="not 32-byte aligned.*multiple of 32 B"):
        vec_kernel({"s": np.zeros(32, np.float32), "d": np.zeros(32, np.float32)}, body, chip="Ascend310P3",
                   build_only=True)


@pytest.mark.parametrize("chip", ["Ascend910", "Ascend910B1"])
def test_vmrgsort4_f32_on_a_chip_without_it_says_so_before_the_alignment_rule(chip):
    """Aligning the f32 lists would not help where the chip has no f32 vmrgsort4: that error comes first."""
    def body(ti, ub):
        ti.vmrgsort4(ub["d"][4], [ub["s"][0], ub["s"][4]], [1, 1], False, 3, 1)
    with raises_tik(UnsupportedOp, match=rf"vmrgsort4 does not support float32 on {chip}"):
        vec_kernel({"s": np.zeros(32, np.float32), "d": np.zeros(32, np.float32)}, body, chip=chip,
                   build_only=True)


def test_vec_trans_takes_run_time_repeat_strides():
    """vec_trans with Scalar repeat strides (was a generic "a program expression has no Python truth value"
    at the call): strides 1 give two back-to-back 16x16 transposes."""
    from tbe import tik
    from tbe_compat import platform
    platform.reset_platform()
    ti = tik.Tik()
    x = ti.Tensor("float16", (16, 32), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16, 32), name="y", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    a = ti.Tensor("float16", (16, 32), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (16, 32), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 32, 0, 0)
    ti.vec_dup(128, b, 0, 4, 8)
    ti.vec_trans(b, a, 2, n, n)
    ti.data_move(y, b, 0, 1, 32, 0, 0)
    ti.BuildCCE(kernel_name="vt_rt", inputs=[x, n], outputs=[y])
    xs = np.arange(512, dtype=np.float16)
    out = ti.tikdb.start_debug({"x": xs.reshape(16, 32), "n": 1}, interactive=False)[0].reshape(512)
    exp = np.concatenate([xs[:256].reshape(16, 16).T.reshape(256), xs[256:].reshape(16, 16).T.reshape(256)])
    assert out.tobytes() == exp.tobytes()


def test_vmrgch_cuts_rows_of_16_down_to_their_first_4():
    """The fastrcnn_predictions / rpn_proposals pattern: k rows of 16 halves (x1, y1, x2, y2, then padding)
    -> k rows of 4; ``repeat = 2k/16`` (8 rows a repeat)."""
    k = 24
    rows = RNG.uniform(-10, 10, (k, 16)).astype(np.float16)
    out = vec_kernel({"d": np.full(k * 4, -1, np.float16), "s": rows.reshape(-1)},
                     lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 2 * k // 16), chip="Ascend310P3")["d"]
    np.testing.assert_array_equal(out.reshape(k, 4), rows[:, :4])


def test_vmrgch_uint8_keeps_4_bytes_per_block():
    x = np.arange(2 * 256).astype(np.uint8)
    out = vec_kernel({"d": np.zeros(64, np.uint8), "s": x},
                     lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 2), chip="Ascend910")["d"]
    np.testing.assert_array_equal(out, x.reshape(16, 32)[:, :4].reshape(-1))


def test_vmrgch_chip_dtype_and_extent_errors():
    z16, z = np.zeros(512, np.int16), np.zeros(64, np.float16)
    with raises_tik(UnsupportedOp, match="does not support int16 on Ascend310P3"):
        vec_kernel({"d": z16[:64], "s": z16}, lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 1), chip="Ascend310P3",
                   build_only=True)
    vec_kernel({"d": z16[:64], "s": z16}, lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 1), chip="Ascend310P1",
               build_only=True)                                  # 310P1's ini row adds int16/uint16
    with raises_tik(UnsupportedOp, match="has no vmergech instruction"):
        vec_kernel({"d": z, "s": np.zeros(256, np.float16)}, lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 1),
                   chip="BS9SX1AA", build_only=True)
    with raises_tik(OutOfBounds):                                # 2 repeats read 256 halves, src holds 128
        vec_kernel({"d": z, "s": np.zeros(128, np.float16)}, lambda ti, ub: ti.vmrgch(ub["d"], ub["s"], 2),
                   chip="Ascend310P3", build_only=True)


def test_vmrgsort4_element_lengths_with_a_positional_element_count_list_names_both():
    """LEGACY_KEYWORDS: the 2019 keyword element_lengths= with the list also given positionally (third argument) is
    the same bad-arguments error as both keywords, naming element_lengths= (was: Python's 'multiple values for
    argument element_count_list', a keyword the call never wrote)."""
    p = _proposals(64, RNG)
    bufs = {"p": p.reshape(-1), "s": np.zeros(512, np.float16), "m": np.zeros(512, np.float16)}

    def run(ti, ub):
        ti.vrpsort16(dst=ub["s"], src=ub["p"], repeat_times=4)
        srcs = [ub["s"], ub["s"][128], ub["s"][256], ub["s"][384]]
        ti.vmrgsort4(ub["m"], srcs, [16] * 4, False, "1111", element_lengths=[16] * 4)
    with pytest.raises(IllegalOperand, match=r"both element_lengths= and element_count_list \(positional "
                                             r"argument 3\) given") as e:
        vec_kernel(dict(bufs), run)
    assert "test_vector_layout.py" in str(e.value) and "drop element_lengths=" in str(e.value)
