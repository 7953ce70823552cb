"""TIK ``scatter_vcmp_*`` and ``scatter_vsel`` (VA-register address lists): addressing and CMPMASK / selection
bits against an independent per-lane numpy reference (hypothesis sweep), passing and failing kernels, chip gating."""
import operator

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, OutOfBounds, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import vec_kernel

CHIP = "Ascend310P3"
NB = 16                                  # blocks per data buffer
CMPS = {"lt": operator.lt, "gt": operator.gt, "ge": operator.ge, "le": operator.le, "eq": operator.eq,
        "ne": operator.ne}


def _bits(raw: np.ndarray) -> list:
    return [bool(raw[i // 8] >> (i % 8) & 1) for i in range(8 * raw.size)]


@st.composite
def cases(draw):
    kind = draw(st.sampled_from(["vcmp", "sel0", "sel2"]))
    cmp = draw(st.sampled_from(sorted(CMPS)))
    dt = draw(st.sampled_from(["float16", "float32"]))
    e = 32 // np.dtype(dt).itemsize
    par = 8 * e
    n = draw(st.integers(1, 8))
    repeat = draw(st.integers(1, 3)) if kind == "sel2" else 1
    reps = [draw(st.integers(0, 3)) for _ in range(3)] if kind == "sel2" else [0, 0, 0]
    inplace = kind != "vcmp" and draw(st.booleans())         # dst list = src0 list
    if inplace:
        reps[1] = reps[0]

    def addrs(rep):
        return [draw(st.integers(0, NB - 1 - (repeat - 1) * rep)) for _ in range(n)]
    dlist = addrs(reps[0])
    s0 = dlist if inplace else addrs(reps[1])
    s1 = addrs(reps[2])
    if draw(st.booleans()):
        mask = draw(st.integers(1, n * e))
        lanes = list(range(mask))
    else:
        bits = draw(st.integers(1, 2 ** (n * e) - 1))
        lanes = [i for i in range(n * e) if bits >> i & 1]
        mask = [0, bits] if par == 64 else [bits >> 64, bits & (2 ** 64 - 1)]
    seed = draw(st.integers(0, 2 ** 16))
    return kind, cmp, dt, dlist, s0, s1, reps, repeat, mask, lanes, inplace, seed


def _reference(kind, cmp, dt, bufs, dlist, s0, s1, reps, repeat, lanes, inplace):
    """Per lane: lane ``i`` of repeat ``r`` is element ``(list[i // E] + r * rep) * E + i % E``."""
    e = 32 // np.dtype(dt).itemsize
    par = 8 * e
    st_ = {k: v.copy() for k, v in bufs.items()}
    cm = _bits(bufs["c"])
    if kind == "vcmp":
        for i in lanes:
            j, k = divmod(i, e)
            cm[i] = bool(CMPS[cmp](st_["a"][s0[j] * e + k], st_["b"][s1[j] * e + k]))
        st_["m"] = np.packbits(np.array(cm), bitorder="little")
        return st_
    dname = "a" if inplace else "d"
    sel = cm if kind == "sel0" else _bits(bufs["s"])
    for r in range(repeat):
        vals = []
        for i in lanes:
            j, k = divmod(i, e)
            a = st_["a"][(s0[j] + r * reps[1]) * e + k]
            b = st_["b"][(s1[j] + r * reps[2]) * e + k]
            vals.append(a if sel[(r * par if kind == "sel2" else 0) + i] else b)
        for i, v in zip(lanes, vals):
            j, k = divmod(i, e)
            st_[dname][(dlist[j] + r * reps[0]) * e + k] = v
    st_["m"] = bufs["c"].copy()                  # mode 2 leaves CMPMASK as loaded (vsel_bits does too)
    return st_


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_scatter_cmpsel_matches_a_per_lane_reference(case):
    kind, cmp, dt, dlist, s0, s1, reps, repeat, mask, lanes, inplace, seed = case
    rng = np.random.default_rng(seed)
    e = 32 // np.dtype(dt).itemsize
    size = NB * e
    # few distinct values so eq / ge / le hit both ways; a NaN now and then (every compare false but ne)
    pool = np.array([-1.0, -0.5, 0.0, 0.5, 1.0, np.nan], dtype=dt)
    bufs = {"a": rng.choice(pool, size), "b": rng.choice(pool, size), "d": rng.uniform(2, 3, size).astype(dt),
            "c": rng.integers(0, 256, 32).astype(np.uint8), "s": rng.integers(0, 256, 96).astype(np.uint8),
            "m": np.full(32, 0xA5, np.uint8)}

    def body(ti, ub):
        cm = ti.mov_tensor_to_cmpmask(ub["c"])
        dl = [ub["a" if inplace else "d"][j * e] for j in dlist]
        l0 = [ub["a"][j * e] for j in s0]
        l1 = [ub["b"][j * e] for j in s1]
        if kind == "vcmp":
            cm = getattr(ti, "scatter_vcmp_" + cmp)(mask, l0, l1)
        elif kind == "sel0":
            ti.scatter_vsel(mask, 0, dl, cm, l0, l1, 1)
        else:
            ti.scatter_vsel(mask, 2, dl, ub["s"], l0, l1, repeat, *reps)
        ti.mov_cmpmask_to_tensor(ub["m"], cm)
    out = vec_kernel(bufs, body, chip=CHIP)
    want = _reference(kind, cmp, dt, bufs, dlist, s0, s1, reps, repeat, lanes, inplace)
    want["m"] = np.concatenate([want["m"][:16], bufs["m"][16:]])
    for k in bufs:
        np.testing.assert_array_equal(out[k].view(np.uint8), want[k].view(np.uint8), err_msg=k)


def _f16(seed, n=NB * 16):
    return np.random.default_rng(seed).uniform(-4, 4, n).astype(np.float16)


def test_scatter_vcmp_then_vsel_on_v100():
    """The v100 pattern: compare two block lists into CMPMASK, select with it (mode 0)."""
    a, b = _f16(1), _f16(2)
    d = np.full(NB * 16, 7, np.float16)

    def body(ti, ub):
        cm = ti.scatter_vcmp_gt(32, [ub["a"][0], ub["a"][80]], [ub["b"][48], ub["b"][16]])
        ti.scatter_vsel(32, 0, [ub["d"][32], ub["d"][0]], cm, [ub["a"][0], ub["a"][80]], [ub["b"][48], ub["b"][16]],
                        1, 0, 0, 0)
    out = vec_kernel({"a": a, "b": b, "d": d}, body, chip="Ascend910A")["d"]
    want = d.copy()
    want[32:48] = np.maximum(a[0:16], b[48:64])
    want[0:16] = np.maximum(a[80:96], b[16:32])
    np.testing.assert_array_equal(out, want)


def test_scatter_cmpsel_errors():
    f = _f16(0)
    s = np.zeros(64, np.uint8)
    k = {"chip": CHIP, "build_only": True}
    two = lambda ub, nm: [ub[nm][0], ub[nm][16]]         # noqa: E731
    with raises_tik(UnsupportedOp, match=r"scatter_vsel mode 1 is not modelled: its selection bits come through"):
        vec_kernel({"d": f, "a": f, "s": s}, lambda ti, ub: ti.scatter_vsel(
            16, 1, [ub["d"][0]], [ub["s"][0]], [ub["a"][0]], 1.0, 1), **k)
    with raises_tik(IllegalOperand, match=r"repeat_times should be 1 when mode is 0, got 2"):
        vec_kernel({"d": f, "a": f}, lambda ti, ub: ti.scatter_vsel(
            16, 0, [ub["d"][0]], ti.scatter_vcmp_eq(16, [ub["a"][0]], [ub["a"][16]]), [ub["a"][0]], [ub["a"][16]],
            2), **k)
    with raises_tik(IllegalOperand, match=r"in mode 0 sel should be the CMPMASK"):
        vec_kernel({"d": f, "a": f, "s": s}, lambda ti, ub: ti.scatter_vsel(
            16, 0, [ub["d"][0]], ub["s"], [ub["a"][0]], [ub["a"][16]], 1), **k)
    with raises_tik(IllegalOperand, match=r"src1 should be a list of tensors in mode 2"):
        vec_kernel({"d": f, "a": f, "s": s}, lambda ti, ub: ti.scatter_vsel(
            16, 2, [ub["d"][0]], ub["s"], [ub["a"][0]], ub["a"], 1), **k)
    with raises_tik(UnsupportedOp, match=r"Ascend910A supports only mode 0 of scatter_vsel"):
        vec_kernel({"d": f, "a": f, "s": s}, lambda ti, ub: ti.scatter_vsel(
            16, 2, [ub["d"][0]], ub["s"], [ub["a"][0]], [ub["a"][16]], 1), chip="Ascend910A", build_only=True)
    with raises_tik(IllegalOperand, match=r"the mask reaches lane 16, in block 1, but the lists give 1"):
        vec_kernel({"a": f}, lambda ti, ub: ti.scatter_vcmp_lt(17, [ub["a"][0]], [ub["a"][16]]), **k)
    with raises_tik(IllegalOperand, match=r"src1_list should contain as many tensors as src0_list \(2\), got 1"):
        vec_kernel({"a": f}, lambda ti, ub: ti.scatter_vcmp_lt(16, two(ub, "a"), [ub["a"][16]]), **k)
    with raises_tik(OutOfBounds, match="tensor overflow"):          # 32 + 4 repeats x 16 bytes of bits > 64
        vec_kernel({"d": f, "a": f, "s": s}, lambda ti, ub: ti.scatter_vsel(
            128, 2, [ub["d"][16 * j] for j in range(8)], ub["s"][32], [ub["a"][16 * j] for j in range(8)],
            [ub["a"][16 * j] for j in range(8)], 4, 8, 8, 8), **k)
    with raises_tik(UnsupportedOp, match=r"does not support int16 on Ascend310P3"):     # AI core vcmp: f16/f32
        vec_kernel({"a": np.zeros(64, np.int16)}, lambda ti, ub: ti.scatter_vcmp_eq(16, [ub["a"][0]], [ub["a"][16]]),
                   **k)
    with raises_tik(UnsupportedOp, match=r"does not support float16 on Ascend910B1"):
        vec_kernel({"a": f}, lambda ti, ub: ti.scatter_vcmp_eq(16, [ub["a"][0]], [ub["a"][16]]), chip="Ascend910B1",
                   build_only=True)


def test_scatter_vsel_bits_overlapping_dst_is_refused_when_it_runs():
    f = _f16(3)
    d = np.zeros(NB * 16, np.float16)
    d[:16] = 1.0                      # bit pattern 0x3C00: the selection bits for the first 16 lanes

    def body(ti, ub):
        ti.scatter_vsel(16, 2, [ub["d"][ub["o"]]], ub["d"].reinterpret_cast_to("uint8"), [ub["a"][0]],
                        [ub["a"][16]], 1, 0, 0, 0)
    out = vec_kernel({"d": d, "a": f}, body, chip=CHIP, scalars={"o": ("int32", 32)})["d"]
    sel = _bits(d[:16].view(np.uint8))
    np.testing.assert_array_equal(out[32:48], np.where(sel[:16], f[:16], f[16:32]))
    with raises_tik(IllegalOperand, match=r"dst_list\[0\] in repeat 0 \(bytes 0..31\) overlaps the selection bits"):
        vec_kernel({"d": d, "a": f}, body, chip=CHIP, scalars={"o": ("int32", 0)})
