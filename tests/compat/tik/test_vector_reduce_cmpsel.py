"""Reductions, compares and selects through kernels: goldens §10.5 (vec_cmpv) and §10.6 (vec_sel),
independent references of the documented reduction order (pairwise tree per repeat, first
index on ties), CMPMASK moves, and the error paths."""
import re

import numpy as np
import pytest

from tbe import tik

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UninitializedRead, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import lanes_of, vec_kernel

RNG = np.random.default_rng(11)


def tree_sum(vals, dt):
    """Pairwise adjacent-lane tree, every addition rounded to ``dt`` (documented vcadd order)."""
    v = [dt.type(x) for x in vals]
    while len(v) > 1:
        v = [dt.type(np.float64(v[2 * i]) + np.float64(v[2 * i + 1])) for i in range(len(v) // 2)]
    return v[0]


def lanes_vec(row, mask, par, fill):
    out = np.full(par, fill, dtype=np.float64)
    idx = lanes_of(mask, par)
    out[idx] = row[idx]
    return out, idx


@pytest.mark.parametrize("dtype,chip", [("float16", None), ("float32", "Ascend310P3"), ("float32", "Ascend910B1")])
@pytest.mark.parametrize("mask", [None, 37, "bits"])
def test_vcadd_vcmax_vcmin_vcgadd(dtype, chip, mask):
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    mask = par if mask is None else ([0, 0x0F0F0000FFFF000F] if mask == "bits" else mask)
    if isinstance(mask, list) and par == 128:
        mask = [0x8000000000000001, 0x0F0F0000FFFF000F]
    x = RNG.integers(-20, 20, 4 * par).astype(dt)
    x[5] = x[9] = dt.type(40)                     # a tie inside repeat 0 for the index rule
    r = np.full(64, 9, dt)

    def body(ti, ub):
        ti.vcadd(mask, ub["r"], ub["x"], 4, 1, 1, 8)
        ti.vcmax(mask, ub["r"][8], ub["x"], 4, 1, 1, 8)
        if dtype == "float16" or chip:
            ti.vcmin(mask, ub["r"][16], ub["x"], 4, 1, 1, 8)
            ti.vcgadd(mask, ub["r"][32], ub["x"], 2, 1, 1, 8)
    ops = ["cmin", "cgadd"] if (dtype == "float16" or chip) else []
    out = vec_kernel({"r": r, "x": x}, body, chip=chip)["r"]
    idx_t = np.uint16 if dt.itemsize == 2 else np.uint32
    for k in range(4):
        row = x[k * par:(k + 1) * par].astype(np.float64)
        v, idx = lanes_vec(row, mask, par, 0.0)
        assert out[k] == tree_sum(v, dt)
        best = max(row[idx])
        assert out[8 + 2 * k] == best and out[8 + 2 * k:10 + 2 * k].view(idx_t)[1] == idx[row[idx] == best][0]
        if "cmin" in ops:
            worst = min(row[idx])
            assert out[16 + 2 * k] == worst
            assert out[16 + 2 * k:18 + 2 * k].view(idx_t)[1] == idx[row[idx] == worst][0]
    if "cgadd" in ops:
        E = 32 // dt.itemsize
        for k in range(2):
            row = x[k * par:(k + 1) * par].astype(np.float64)
            v, idx = lanes_vec(row, mask, par, 0.0)
            for b in range(8):
                if ((idx >= b * E) & (idx < (b + 1) * E)).any():
                    assert out[32 + 8 * k + b] == tree_sum(v[b * E:(b + 1) * E], dt)
                else:           # no active lane in the block: not written (CCE vcgadd page)
                    assert out[32 + 8 * k + b] == 9


def test_vcpadd_and_vec_cpadd_pairs():
    x = RNG.uniform(-4, 4, 256).astype(np.float16)
    r = np.full(256, 5, np.float16)

    def body(ti, ub):
        ti.vec_cpadd(128, ub["r"], ub["x"], 2, 1, 8)
        ti.vcpadd(128, ub["r"][128], ub["x"], 1, 0, 1, 8)
    out = vec_kernel({"r": r, "x": x}, body, chip="Ascend310P3")["r"]
    pairs = (x[0::2].astype(np.float64) + x[1::2]).astype(np.float16)
    np.testing.assert_array_equal(out[:128], pairs)
    np.testing.assert_array_equal(out[128:192], pairs[:64])


@pytest.mark.parametrize("chip", ["Ascend310P3", "Ascend910B1"])
def test_vec_reduce_add(chip):
    par, repeat = 128, 300 if chip == "Ascend910B1" else 40
    x = RNG.uniform(-1, 1, par * repeat).astype(np.float16)
    out = vec_kernel({"r": np.full(16, 3, np.float16), "x": x, "w": np.zeros(304, np.float16)},
                     lambda ti, ub: ti.vec_reduce_add(100, ub["r"], ub["x"], ub["w"], repeat, 8), chip=chip)["r"]
    part = [tree_sum(np.concatenate([x[k * par:k * par + 100], np.zeros(28)]), np.dtype(np.float16))
            for k in range(repeat)]
    if chip == "Ascend910B1":          # in order within groups of 255 repeats, then pairwise
        groups = []
        for g in range(0, repeat, 255):
            acc = part[g]
            for v in part[g + 1:g + 255]:
                acc = np.float16(np.float64(acc) + np.float64(v))
            groups.append(acc)
        want = tree_sum(groups + [0.0] * ((1 << (len(groups) - 1).bit_length()) - len(groups)), np.dtype(np.float16))
    else:                              # pairwise over PAR partial sums at a time
        while len(part) > 1:
            part = [tree_sum(part[i:i + par] + [0.0] * (par - len(part[i:i + par])), np.dtype(np.float16))
                    for i in range(0, len(part), par)]
        want = part[0]
    assert out[0] == want and (out[1:] == 3).all()


@pytest.mark.parametrize("kind", ["max", "min"])
def test_vec_reduce_max_min_with_index(kind):
    x = RNG.integers(-100, 100, 64 * 9).astype(np.float32)
    x[64 * 3 + 5] = x[64 * 7 + 1] = 500 if kind == "max" else -500        # a tie across repeats: the first wins
    out = vec_kernel({"r": np.full(16, 3, np.float32), "x": x, "w": np.zeros(64, np.float32)},
                     lambda ti, ub: getattr(ti, f"vec_reduce_{kind}")(64, ub["r"], ub["x"], ub["w"], 9, 8,
                                                                      cal_index=True), chip="Ascend910B1")["r"]
    assert out[0] == (500 if kind == "max" else -500)
    assert out[0:2].view(np.uint32)[1] == 64 * 3 + 5


def test_vec_reduce_and_vec_cpadd_take_16_bit_repeat_strides():
    """TIK checks src_rep_stride of vec_reduce_add/max/min (and documents vec_cpadd's strides) as
    [0, 65535], not the [0, 255] of the other vec_* APIs: a stride of 300 blocks is legal."""
    x = np.zeros(300 * 128 + 128, np.float16)
    x[5], x[300 * 128 + 7], x[300 * 128 + 6] = 3, 9, 1

    def body(ti, ub):
        ti.vec_reduce_max(128, ub["r"], ub["x"], ub["w"], 2, 2400, cal_index=True)
        ti.vec_reduce_add(128, ub["r"][16], ub["x"], ub["w"][32], 2, 2400)
        ti.vec_cpadd(128, ub["r"][32], ub["x"], 2, 300, 2400)
    out = vec_kernel({"r": np.full(32 + 64 * 300 + 64, 5, np.float16), "x": x, "w": np.zeros(64, np.float16)},
                     body, chip="Ascend910")["r"]
    assert out[0] == 9 and out[0:2].view(np.uint16)[1] == 128 + 7
    assert out[16] == 13
    pairs0 = x[0:128:2].astype(np.float32) + x[1:128:2]
    pairs1 = x[38400:38528:2].astype(np.float32) + x[38401:38528:2]
    np.testing.assert_array_equal(out[32:96], pairs0.astype(np.float16))
    np.testing.assert_array_equal(out[32 + 300 * 64:32 + 301 * 64], pairs1.astype(np.float16))
    assert (out[96:32 + 300 * 64] == 5).all()
    with raises_tik(IllegalOperand, match="src_rep_stride = 65536 is outside"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x, "w": np.zeros(64, np.float16)},
                   lambda ti, ub: ti.vec_reduce_add(128, ub["r"], ub["x"], ub["w"], 1, 65536), build_only=True)


def test_reduce_errors():
    x = np.zeros(512, np.float16)
    w = np.zeros(16, np.float16)
    with raises_tik(IllegalOperand, match="repeat_times = 512 is outside"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x, "w": w},
                   lambda ti, ub: ti.vec_reduce_max(128, ub["r"], ub["x"], ub["w"], 512, 8, cal_index=True),
                   build_only=True)
    with raises_tik(IllegalOperand, match="work_tensor and dst should not overlap"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x},
                   lambda ti, ub: ti.vec_reduce_add(128, ub["r"], ub["x"], ub["r"], 4, 8), build_only=True)
    with raises_tik(Misaligned, match="4-byte aligned"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x, "w": w},
                   lambda ti, ub: ti.vcmax(128, ub["r"][1], ub["x"], 1, 1, 1, 8), build_only=True)
    with raises_tik(UnsupportedOp, match="vcmax with index_low is not modelled: the public sources do not specify "
                                         "which bits"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x},
                   lambda ti, ub: ti.vcmax(128, ub["r"], ub["x"], 1, 1, 1, 8, index_low=True), build_only=True)
    with raises_tik(UnsupportedOp, match="tik.vcmax does not support float32 on Ascend310"):
        vec_kernel({"r": np.zeros(16, np.float32), "x": np.zeros(64, np.float32)},
                   lambda ti, ub: ti.vcmax(64, ub["r"], ub["x"], 1, 1, 1, 8), build_only=True)

    def max_cnt(ti, ub):
        regs = [ti.Scalar("float16"), ti.Scalar("int32"), ti.Scalar("uint16")]
        ti.vcmin(128, ub["r"], ub["x"], 1, 1, 1, 8, max_cnt_index=regs)
    with raises_tik(UnsupportedOp, match=r"test_vector_reduce_cmpsel.py:\d+ in `tik.vcmin`: .*vcmin with max_cnt_index "
                                         r"is not modelled: .*MAX_MIN_CNT register's count.*Fix: .*vec_reduce_min"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x}, max_cnt, chip="Ascend310B1", build_only=True)


# ----------------------------------------------------------------------------- compares


# golden §10.5: src0 = 1..128, src1 = all 2, dst pre-filled with 5
GOLDEN_CMPV = {"eq": [2] + [0] * 7, "lt": [1] + [0] * 7, "gt": [0xFFFC] + [0xFFFF] * 7,
               "ge": [0xFFFE] + [0xFFFF] * 7, "le": [3] + [0] * 7, "ne": [0xFFFD] + [0xFFFF] * 7}


@pytest.mark.parametrize("cmp", sorted(GOLDEN_CMPV))
def test_golden_vec_cmpv(cmp):
    def body(ti, ub):
        ti.vec_dup(16, ub["d"], 5, 1, 1)
        getattr(ti, f"vec_cmpv_{cmp}")(ub["d"], ub["a"], ub["b"], 1, 8, 8)
    out = vec_kernel({"d": np.zeros(16, np.uint16), "a": np.arange(1, 129).astype(np.float16),
                      "b": np.full(128, 2, np.float16)}, body)["d"]
    np.testing.assert_array_equal(out, GOLDEN_CMPV[cmp] + [5] * 8)


def test_vcmpv_classic_strides_and_vcmpvs():
    a = RNG.uniform(-1, 1, 512).astype(np.float16)
    b = RNG.uniform(-1, 1, 512).astype(np.float16)

    def body(ti, ub):
        ti.vcmpv_lt(ub["d"], ub["a"], ub["b"], 2, 1, 1, 8, 0)            # src1 re-read (rep stride 0)
        ti.vcmpvs_ge(ub["d"][16], ub["a"], 0.25, 2, 2, 16)
    out = vec_kernel({"d": np.zeros(32, np.uint16), "a": a, "b": b}, body, chip="Ascend310P3")["d"]
    lt = np.concatenate([a[:128] < b[:128], a[128:256] < b[:128]])
    np.testing.assert_array_equal(out[:16], np.packbits(lt, bitorder="little").view(np.uint16))
    idx = np.array([r * 256 + (e // 16) * 32 + e % 16 for r in range(2) for e in range(128)])
    ge = a[idx] >= np.float16(0.25)
    np.testing.assert_array_equal(out[16:], np.packbits(ge, bitorder="little").view(np.uint16))


# golden §10.6: src0 = 1..8, src1 = 9..16, sel bits [0,0,0,0,1,1,1,1] (byte 0xF0), mask 4, dst -1..-8
@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910A", "Ascend310P3", "Ascend910B1"])
@pytest.mark.parametrize("mask", [4, [0, 0b1111]])
def test_golden_vec_sel_mode0(chip, mask):
    src0 = np.arange(1, 129).astype(np.float16)
    src1 = np.arange(9, 137).astype(np.float16)
    sel = np.zeros(32, np.uint8)
    sel[0] = 0xF0
    dst = -np.arange(1, 129).astype(np.float16)
    out = vec_kernel({"d": dst, "a": src0, "b": src1, "s": sel},
                     lambda ti, ub: ti.vec_sel(mask, 0, ub["d"], ub["s"], ub["a"], ub["b"], 1, 8, 8, 8), chip=chip)
    np.testing.assert_array_equal(out["d"][:8], [9, 10, 11, 12, -5, -6, -7, -8])
    np.testing.assert_array_equal(out["d"][8:], dst[8:])


def test_vsel_with_vcmp_cmpmask_and_cmpmask_moves():
    a = RNG.uniform(-1, 1, 256).astype(np.float16)
    b = RNG.uniform(-1, 1, 256).astype(np.float16)

    def body(ti, ub):
        cm = ti.vcmp_gt(128, ub["a"], ub["b"], 1, 1)
        ti.vsel(128, 0, ub["d"], cm, ub["a"], ub["b"], 2, 1, 1, 1, 8, 8, 8)   # same bits in both repeats
        ti.mov_cmpmask_to_tensor(ub["m"], cm)
        cm2 = ti.mov_tensor_to_cmpmask(ub["k"])
        ti.vsel(64, 0, ub["e"], cm2, ub["a"], ub["b"], 1, 1, 1, 1, 8, 8, 8)
    k = np.zeros(16, np.uint16)
    k[0] = 0b1010
    out = vec_kernel({"d": np.zeros(256, np.float16), "e": np.zeros(128, np.float16), "m": np.zeros(32, np.uint8),
                      "a": a, "b": b, "k": k}, body)
    gt = a[:128] > b[:128]
    np.testing.assert_array_equal(out["d"][:128], np.where(gt, a[:128], b[:128]))
    np.testing.assert_array_equal(out["d"][128:], np.where(gt, a[128:], b[128:]))
    np.testing.assert_array_equal(out["m"][:16], np.packbits(gt, bitorder="little"))
    np.testing.assert_array_equal(out["m"][16:], 0)
    bits = np.unpackbits(k.view(np.uint8), bitorder="little")[:64].astype(bool)
    np.testing.assert_array_equal(out["e"][:64], np.where(bits, a[:64], b[:64]))
    np.testing.assert_array_equal(out["e"][64:], 0)


def test_cmpmask_moves_take_16_byte_offsets():
    """CANN basic_lstm_cell_input_grad: per repeat r, ``mov_tensor_to_cmpmask(mask_u8[r * 16])`` then vsel."""
    a = RNG.uniform(-1, 1, 256).astype(np.float16)
    sel = RNG.integers(0, 256, 32).astype(np.uint8)

    def body(ti, ub):
        for r in range(2):
            cm = ti.mov_tensor_to_cmpmask(ub["s"][r * 16])
            ti.vsel(128, 0, ub["d"][r * 128], cm, ub["a"][r * 128], ub["z"], 1, 1, 1, 1, 8, 8, 8)
        ti.mov_cmpmask_to_tensor(ub["m"][16], cm)
    out = vec_kernel({"d": np.ones(256, np.float16), "a": a, "z": np.zeros(128, np.float16), "s": sel,
                      "m": np.zeros(32, np.uint8)}, body)
    bits = np.unpackbits(sel, bitorder="little").astype(bool)
    np.testing.assert_array_equal(out["d"], np.where(bits, a, np.float16(0)))
    np.testing.assert_array_equal(out["m"][16:], sel[16:])
    with raises_tik(Misaligned, match="16-byte aligned"):
        vec_kernel({"s": sel}, lambda ti, ub: ti.mov_tensor_to_cmpmask(ub["s"][8]))


def test_cmpmask_alignment_is_the_named_choice(monkeypatch):
    """16 B, not TIK's general 32 B UB rule: CMPMASK_UB_ALIGN (pto_core/ops/vector_cmpsel.py; Ascend C
    SetCmpMask / GetCmpMask "16-byte aligned"). The facade and the PTO op read the one constant."""
    from pto_core.ops import vector_cmpsel
    assert vector_cmpsel.CMPMASK_UB_ALIGN == 16
    sel = RNG.integers(0, 256, 64).astype(np.uint8)

    def body(ti, ub):
        cm = ti.mov_tensor_to_cmpmask(ub["s"][16])
        ti.mov_cmpmask_to_tensor(ub["m"][48], cm)
    out = vec_kernel({"s": sel, "m": np.zeros(64, np.uint8)}, body)
    np.testing.assert_array_equal(out["m"][48:], sel[16:32])
    monkeypatch.setattr(vector_cmpsel, "CMPMASK_UB_ALIGN", 32)
    with raises_tik(Misaligned, match=r"operand src: src address is not 32-byte aligned: tensor 's_ub' \+ 16 B.*Fix:"):
        vec_kernel({"s": sel, "m": np.zeros(64, np.uint8)}, body)


@pytest.mark.parametrize("mode", [1, 2])
def test_vec_sel_modes_1_and_2_consume_bits_per_repeat(mode):
    a = RNG.uniform(-1, 1, 128).astype(np.float32)
    b = RNG.uniform(-1, 1, 128).astype(np.float32)
    sel = RNG.integers(0, 256, 32).astype(np.uint8)
    out = vec_kernel({"d": np.zeros(128, np.float32), "a": a, "b": b, "s": sel},
                     lambda ti, ub: ti.vec_sel(64, mode, ub["d"], ub["s"], ub["a"], 2.5 if mode == 1 else ub["b"],
                                               2, 8, 8, 8), chip="Ascend910B1")["d"]
    bits = np.unpackbits(sel, bitorder="little")[:128].astype(bool)
    np.testing.assert_array_equal(out, np.where(bits, a, np.float32(2.5) if mode == 1 else b))


def test_cmpsel_errors():
    f = np.zeros(128, np.float16)
    with raises_tik(UnsupportedOp, match="supports only mode 0"):
        vec_kernel({"d": f, "a": f, "s": np.zeros(32, np.uint8)},
                   lambda ti, ub: ti.vec_sel(128, 1, ub["d"], ub["s"], ub["a"], 1.0, 1, 8, 8, 8), build_only=True)
    with raises_tik(IllegalOperand, match="dst dtype float16 is not supported"):
        vec_kernel({"d": f, "a": f, "b": f}, lambda ti, ub: ti.vec_cmpv_eq(ub["d"], ub["a"], ub["b"], 1, 8, 8),
                   build_only=True)
    with raises_tik(IllegalOperand, match="mode 1 takes a scalar src1"):
        vec_kernel({"d": f, "a": f, "b": f, "s": np.zeros(32, np.uint8)},
                   lambda ti, ub: ti.vec_sel(128, 1, ub["d"], ub["s"], ub["a"], ub["b"], 1, 8, 8, 8),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="src_cmpmask should be the CMPMASK"):
        vec_kernel({"d": f}, lambda ti, ub: ti.mov_cmpmask_to_tensor(ub["d"], ub["d"]), build_only=True)
    with raises_tik(IllegalOperand, match="mode = 3"):
        vec_kernel({"d": f, "a": f, "s": np.zeros(32, np.uint8)},
                   lambda ti, ub: ti.vec_sel(128, 3, ub["d"], ub["s"], ub["a"], ub["a"], 1, 8, 8, 8), chip="Ascend310",
                   build_only=True)
    with raises_tik(UnsupportedOp, match="vcmpvs_lt"):
        vec_kernel({"d": np.zeros(16, np.uint16), "a": f},
                   lambda ti, ub: ti.vcmpvs_lt(ub["d"], ub["a"], 1.0, 1, 1, 8), chip="Ascend310", build_only=True)


def test_vcmp_masked_off_lanes_keep_cmpmask_bits():
    """CCE vcmp page: a zero MASK bit leaves its CMPMASK bit unchanged; an f32 vcmp writes only the low
    64 bits (`VCMP_KEEPS_MASKED_BITS`). A second, narrower vcmp refines the first one's bits."""
    a = RNG.uniform(-1, 1, 128).astype(np.float16)
    b = RNG.uniform(-1, 1, 128).astype(np.float16)
    c = RNG.uniform(-1, 1, 64).astype(np.float32)

    def body(ti, ub):
        ti.vcmp_gt(128, ub["a"], ub["b"], 1, 1)
        ti.vcmp_lt([0, 0xFF00], ub["a"], ub["b"], 1, 1)     # lanes 8..15 only
        cm = ti.vcmp_ge(8, ub["c"], ub["c"], 1, 1)          # f32: lanes 0..7 set, bits 64.. kept
        ti.mov_cmpmask_to_tensor(ub["m"], cm)
    out = vec_kernel({"a": a, "b": b, "c": c, "m": np.zeros(32, np.uint8)}, body, chip="Ascend910")
    want = a > b
    want[8:16] = a[8:16] < b[8:16]
    want[:8] = True
    np.testing.assert_array_equal(out["m"][:16], np.packbits(want, bitorder="little"))
    with raises_tik(IllegalOperand, match="should not be all zero"):
        vec_kernel({"a": a, "b": b}, lambda ti, ub: ti.vcmp_lt([0, 0], ub["a"], ub["b"], 1, 1), build_only=True)


def _sel_kernel(dtype, sel_elems, bit_words):
    """f16/f32 vec_sel mode 0 whose ``sel`` UB tensor is ``sel_elems`` uint32 words, the first
    ``len(bit_words)`` written by set_as; run with uninitialised reads raising."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    from tbe_compat.tik.debug import tik_machine_options
    set_current_compile_soc_info("Ascend910A")
    par = 128 if dtype == "float16" else 64
    ti = tik.Tik()
    a = ti.Tensor(dtype, (par,), tik.scope_gm, "a")
    o = ti.Tensor(dtype, (par,), tik.scope_gm, "o")
    ua = ti.Tensor(dtype, (par,), tik.scope_ubuf, "ua")
    z = ti.Tensor(dtype, (par,), tik.scope_ubuf, "z")
    sel = ti.Tensor("uint32", (sel_elems,), tik.scope_ubuf, "sel")
    ti.data_move(ua, a, 0, 1, par * np.dtype(dtype).itemsize // 32, 0, 0)
    ti.vec_dup(par, z, 0, 1, 8)
    for i, w in enumerate(bit_words):
        sel[i].set_as(w)
    ti.vec_sel(par, 0, ua, sel, ua, z, 1)
    ti.data_move(o, ua, 0, 1, par * np.dtype(dtype).itemsize // 32, 0, 0)
    ti.BuildCCE("sel8", [a], [o])
    ti.tikdb.options = tik_machine_options(uninitialized="raise")
    return ti


def test_vec_sel_mode0_f32_reads_only_64_sel_bits():
    """TIK vec_sel page: mode 0 uses the first 64 bits of sel for f32 (128 for f16), so an 8-byte sel
    serves an f32 select (CANN IFMR writes select[0], select[1] of a uint32 tensor); it was refused
    ('sel tensor overflow') or, in a larger tensor, reported as an uninitialised read."""
    words = [0x0000FFFF, 0xF0000001]
    bits = np.unpackbits(np.array(words, np.uint32).view(np.uint8), bitorder="little").astype(bool)
    x = np.arange(1, 65, dtype=np.float32)
    for n in (2, 8):
        out, = _sel_kernel("float32", n, words).tikdb.start_debug({"a": x}, interactive=False)
        np.testing.assert_array_equal(out, np.where(bits, x, np.float32(0)))
    # f16 consumes 128 bits: 8 bytes of sel are too few, 16 written bytes are needed
    with raises_tik(OutOfBounds, match="sel tensor overflow"):
        _sel_kernel("float16", 2, words)
    with raises_tik(UninitializedRead, match="nothing wrote"):
        _sel_kernel("float16", 8, words).tikdb.start_debug({"a": x.astype(np.float16).repeat(2)}, interactive=False)
    h = np.arange(1, 129).astype(np.float16)
    words4 = words + [0xFFFFFFFF, 0x80000000]
    out, = _sel_kernel("float16", 4, words4).tikdb.start_debug({"a": h}, interactive=False)
    bits4 = np.unpackbits(np.array(words4, np.uint32).view(np.uint8), bitorder="little").astype(bool)
    np.testing.assert_array_equal(out, np.where(bits4, h, np.float16(0)))


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_8bit_vec_sel_mode0_and_vcmp_use_256_cmpmask_bits(dt):
    """int8/uint8 selects and compares (Ascend310B1) have 256 lanes: TIK vec_sel mode 0 reads the first
    256 bits of sel (TIK vec_sel page; tik_api.md §9.9 "the same first PAR bits") and vcmp writes one bit
    per lane (`CMPMASK_B8_BITS`). Lanes 128..255 took src1 whatever sel held, and vcmp stopped with a
    numpy ValueError."""
    info = np.iinfo(dt)
    a = RNG.integers(info.min, info.max, 512, dtype=dt, endpoint=True)
    b = RNG.integers(info.min, info.max, 512, dtype=dt, endpoint=True)
    sel = RNG.integers(0, 256, 64).astype(np.uint8)
    bits = np.unpackbits(sel, bitorder="little").astype(bool)

    def body(ti, ub):
        ti.vec_sel(256, 0, ub["d"], ub["s"], ub["a"], ub["b"], 2, 8, 8, 8)
        cm = ti.vcmp_gt([0, 0xFFFF, 0, 0xFFFFFFFFFFFFFFFF], ub["a"], ub["b"], 1, 1)   # lanes 0..63, 128..143
        ti.vsel(256, 0, ub["e"], cm, ub["a"], ub["b"], 1, 1, 1, 1)
    out = vec_kernel({"a": a, "b": b, "s": sel, "d": np.zeros(512, dt), "e": np.zeros(256, dt)}, body,
                     chip="Ascend310B1")
    np.testing.assert_array_equal(out["d"], np.where(np.tile(bits[:256], 2), a, b))
    act = (np.arange(256) < 64) | ((np.arange(256) >= 128) & (np.arange(256) < 144))
    gt = np.where(act, a[:256] > b[:256], bits[:256])      # masked-off lanes keep the loaded sel bits
    np.testing.assert_array_equal(out["e"], np.where(gt, a[:256], b[:256]))


@pytest.mark.parametrize("call,unit", [
    (lambda ti, ub: ti.vec_cpadd(128, ub["r"], ub["x"], 1, 65536, 8), "128-byte units"),
    (lambda ti, ub: ti.vcpadd(128, ub["r"], ub["x"], 1, 65536, 1, 8), "128-byte units"),
    (lambda ti, ub: ti.vcadd(128, ub["r"], ub["x"], 1, 65536, 1, 8), "results (1 element each)"),
    (lambda ti, ub: ti.vcmax(128, ub["r"], ub["x"], 1, 65536, 1, 8), "(value, index) pairs"),
    (lambda ti, ub: ti.vcgadd(128, ub["r"], ub["x"], 1, 65536, 1, 8), "groups of 8 results"),
])
def test_reduction_dst_rep_stride_error_names_its_unit(call, unit):
    """dst_rep_stride of the reductions does not count 32-byte blocks: vec_cpadd/vcpadd count 128 B,
    vcadd results, vcmax/vcmin pairs, vcg* groups of 8; the Fix said "counts 32-byte blocks" for all."""
    with raises_tik(IllegalOperand, match=re.escape(f"dst_rep_stride counts {unit}: pass 0..65535")):
        vec_kernel({"r": np.zeros(128, np.float16), "x": np.zeros(128, np.float16)}, call, build_only=True)


@pytest.mark.parametrize("kind, cal_index, repeat, need", [
    ("add", False, 40, 40), ("max", False, 40, 80), ("min", False, 300, 600),
    # with an index and a run-time repeat TIK's reference asks for the four-term size (f16 R=65 -> 178)
    ("max", True, 65, 178), ("min", True, 300, 642)])
def test_vec_reduce_run_time_repeat_checks_work_tensor(kind, cal_index, repeat, need):
    """A Scalar repeat_times: the work_tensor size is checked when the op runs (tik_api.md §9.7 sizes), one
    element short is an OutOfBounds naming the call; before, the pass wrote past the work tensor into the
    neighbouring UB tensor without an error."""
    def body(work_len):
        def f(ti, ub):
            w = ti.Tensor("float16", (work_len,), name="w", scope=tik.scope_ubuf)
            after = ti.Tensor("float16", (256,), name="after", scope=tik.scope_ubuf)   # the work tensor's neighbour
            ti.vec_dup(128, after, 5, 2, 8)
            rep = ti.Scalar("int32", init_value=repeat)
            getattr(ti, f"vec_reduce_{kind}")(128, ub["r"], ub["x"], w, rep, 0,
                                                **({"cal_index": True} if cal_index else {}))
            ti.data_move(ub["nb"], after, 0, 1, 16, 0, 0)
        return f
    x = np.arange(128).astype(np.float16)
    with raises_tik(OutOfBounds, match=r"test_vector_reduce_cmpsel.py:\d+ in `tik.vec_reduce_"
                                       rf"{kind}`: .*work_tensor.*{need}"):
        vec_kernel({"r": np.zeros(16, np.float16), "x": x, "nb": np.zeros(256, np.float16)}, body(need - 1))
    out = vec_kernel({"r": np.zeros(16, np.float16), "x": x, "nb": np.zeros(256, np.float16)}, body(need))
    assert (out["nb"] == 5).all()
    if kind != "add":
        assert out["r"][0] == (127 if kind == "max" else 0)
    if cal_index:
        assert int(out["r"][1:2].view(np.uint16)[0]) == (127 if kind == "max" else 0)


# (dtype, chip, repeat_times, elements work_tensor needs with cal_index and an immediate repeat): TIK's docstring
# example sizes work 18 float16 elements for repeat_times=2 (a2 + o2 when the second pass is one repeat); its
# examples 1 and 3 give 162 (f16 R=65) and 146 (f32 R=65) for three passes
WORK_NEEDS = [("float16", None, 1, 18), ("float16", None, 2, 18), ("float16", None, 64, 130),
              ("float16", None, 65, 162), ("float32", "Ascend910B1", 1, 10), ("float32", "Ascend910B1", 32, 66),
              ("float32", "Ascend910B1", 33, 82), ("float32", "Ascend910B1", 65, 146)]


@pytest.mark.parametrize("dtype, chip, repeat, need", WORK_NEEDS)
def test_vec_reduce_cal_index_work_size_follows_the_docs(dtype, chip, repeat, need):
    """The documented need is accepted (was refused for two-pass repeats: f16 R=2 asked for 34, not the 18 of the
    doc's example; f32 R=1 for 18, not 10) and one element fewer is a trace-time error that states the need."""
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    x = RNG.permutation(repeat * par).astype(dt) if dtype == "float32" else \
        (RNG.permutation(repeat * par) % 2000).astype(dt)

    def body(n):
        def f(ti, ub):
            w = ti.Tensor(dtype, (n,), name="w", scope=tik.scope_ubuf)
            ti.vec_reduce_max(par, ub["r"], ub["x"], w, repeat, 8, cal_index=True)
        return f
    out = vec_kernel({"r": np.zeros(32 // dt.itemsize, dt), "x": x}, body(need), chip=chip)["r"]
    idx_t = np.uint16 if dt.itemsize == 2 else np.uint32
    assert out[0] == x.max() and int(out[:2].view(idx_t)[1]) == int(np.argmax(x))
    with raises_tik(OutOfBounds, match=rf"test_vector_reduce_cmpsel.py:\d+ in `tik.vec_reduce_max`: .*work_tensor's "
                                       rf"element should not be less than {need} but get {need - 1}.*Fix: "
                                       rf"vec_reduce_max's work_tensor needs {need} {dtype} elements for "
                                       rf"repeat_times={repeat} \(tik_api.md §9.7: with cal_index"):
        vec_kernel({"r": np.zeros(32 // dt.itemsize, dt), "x": x}, body(need - 1), chip=chip, build_only=True)


@pytest.mark.parametrize("scope", ["if", "loop"])
@pytest.mark.parametrize("cal_index, need", [(False, 2), (True, 10)])
def test_vec_reduce_static_short_work_refused_at_trace_time_in_a_branch(scope, cal_index, need):
    """Every operand static: a too-small work_tensor is refused at the call line when traced, inside a run-time
    branch or loop too (was: deferred to a run-time check whose Fix said "check the offsets, repeat counts and
    strides computed at run time"); the Fix names the work-size rule."""
    def body(ti, ub):
        w = ti.Tensor("float32", (need - 1,), name="w", scope=tik.scope_ubuf)
        n = ti.Scalar("int32", init_value=1)
        with (ti.if_scope(n > 0) if scope == "if" else ti.for_range(0, n)):
            ti.vec_reduce_min(64, ub["r"], ub["x"], w, 1, 8, cal_index=cal_index)
    rule = "with cal_index" if cal_index else "2 \\* repeat_times elements"
    with raises_tik(OutOfBounds, match=rf"test_vector_reduce_cmpsel.py:\d+ in `tik.vec_reduce_min`: .*should not be "
                                       rf"less than {need} but get {need - 1}.*Fix: vec_reduce_min's work_tensor "
                                       rf"needs {need} float32 elements for repeat_times=1 .*{rule}"):
        vec_kernel({"r": np.zeros(8, np.float32), "x": np.zeros(64, np.float32)}, body, chip="Ascend910B1",
                   build_only=True)


@pytest.mark.parametrize("mask, warns", [(256, True), ([0, 1, 0, 0], True), (128, False)])
def test_8bit_vsel_mode0_after_a_16_byte_cmpmask_load_warns_of_the_bits_it_never_set(mask, warns):
    """CMPMASK_UNSET_BITS_WARN: an 8-bit vcmp writes 256 bits but mov_cmpmask_to_tensor / mov_tensor_to_cmpmask move
    16 bytes (tik_api.md §9.8), so an 8-bit vsel mode 0 then reads bits 128..255 that no op set: those lanes take
    src1, as before, with one CmpmaskUnsetBitsWarning naming the line (before: silently). A mask within lanes
    0..127 reads only bits the load set: no warning."""
    import warnings
    from pto_core.errors import CmpmaskUnsetBitsWarning
    a = RNG.integers(-128, 128, 256).astype(np.int8)
    b = RNG.integers(-128, 128, 256).astype(np.int8)

    def body(ti, ub):
        cm = ti.vcmp_gt(256, ub["a"], ub["b"], 1, 1)
        ti.mov_cmpmask_to_tensor(ub["m"], cm)
        ti.vsel(mask, 0, ub["e"], ti.mov_tensor_to_cmpmask(ub["m"]), ub["a"], ub["b"], 1, 1, 1, 1)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = vec_kernel({"a": a, "b": b, "m": np.zeros(32, np.uint8), "e": np.zeros(256, np.int8)}, body,
                         chip="Ascend310B1")
    hits = [w for w in got if issubclass(w.category, CmpmaskUnsetBitsWarning)]
    assert len(hits) == int(warns)
    if warns:
        assert re.search(r"lanes 128\.\.(255|128) take src1", str(hits[0].message)) and hits[0].filename.endswith(".py")
    act = np.isin(np.arange(256), lanes_of(mask, 256))
    exp = np.where(np.arange(256) < 128, np.maximum(a, b), b)
    np.testing.assert_array_equal(out["e"], np.where(act, exp, 0))
    assert not out["m"][16:].any()
