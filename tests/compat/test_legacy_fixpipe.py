"""The legacy TIK fixpipe reference model (tbe_compat/legacy_fixpipe.py).

* Golden examples tik_api.md §10.1-§10.4, with L0C contents computed here in numpy from the
  documented conv2d / matmul layouts (§8.0, §8.2, §8.3).
* Property tests against `loop_reference`, a per-element Python loop written separately
  (own index arithmetic, CPython's ``struct`` half/single packing for the roundings).
* Every checked rule: a passing and a failing call, asserting the error class and message.
"""
from __future__ import annotations

import math
import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnknownName, UnsupportedOp
from tbe_compat.legacy_fixpipe import (LegacyTensor, ReservedArgumentWarning, check_fixpipe_args, legacy_fixpipe)

FP322FP16 = {"mode": "fp322fp16", "mode_param": None}


def int322fp16(mode_param):
    return {"mode": "int322fp16", "mode_param": mode_param}


# ======================================================================================
# L0C contents from the documented layouts
# ======================================================================================


def f16_arange(n: int) -> np.ndarray:
    """tik_api.md §10 input generator: multiples of fp16(0.01) rounded to fp16."""
    return (np.arange(n) * np.float64(np.float16(0.01))).astype(np.float16)


def conv2d_l0c(fm, weight, stride, pad, dilation, garbage):
    """conv2d result in L0C, [Cout/16, round_howo, 16] (§8.2), accumulated in f64, stored f32.

    fm [C1, H, W, C0], weight [C1, Kh, Kw, Cout, C0]; rows >= Ho*Wo hold ``garbage``."""
    c1, h, w, c0 = fm.shape
    _, kh, kw, cout, _ = weight.shape
    sh, sw = stride
    pl, pr, pt, pb = pad
    dh, dw = dilation
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    x = fm.astype(np.float64).transpose(0, 3, 1, 2).reshape(c1 * c0, h, w)          # [Cin, H, W]
    x = np.pad(x, ((0, 0), (pt, pb), (pl, pr)))
    wt = weight.astype(np.float64).transpose(3, 0, 4, 1, 2).reshape(cout, c1 * c0, kh, kw)
    acc = np.zeros((cout, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * dh:i * dh + (ho - 1) * sh + 1:sh, j * dw:j * dw + (wo - 1) * sw + 1:sw]
            acc += np.einsum("oc,chw->ohw", wt[:, :, i, j], patch)
    howo = ho * wo
    round_howo = -(-howo // 16) * 16
    l0c = np.full((cout // 16, round_howo, 16), garbage, dtype=np.float32)
    l0c[:, :howo, :] = acc.reshape(cout // 16, 16, howo).transpose(0, 2, 1).astype(np.float32)
    return l0c, howo


def matmul_l0c(a, b, m, k, n, acc_dtype, garbage):
    """matmul result in L0C, [N1, M, N0] (§8.0/§8.3), from a [K1, M, K0], b [K1, N, K0]."""
    k1, mm, k0 = a.shape
    nn = b.shape[1]
    A = a.transpose(1, 0, 2).reshape(mm, k1 * k0).astype(np.float64)               # A[m, k]
    B = b.transpose(0, 2, 1).reshape(k1 * k0, nn).astype(np.float64)               # B[k, n]
    C = A[:m, :k] @ B[:k, :n]
    l0c = np.full((-(-n // 16), mm, 16), garbage, dtype=acc_dtype)
    full = np.zeros((mm, l0c.shape[0] * 16))
    full[:m, :n] = C
    l0c[:, :m, :] = full.reshape(mm, -1, 16).transpose(1, 0, 2)[:, :m, :].astype(acc_dtype)
    return l0c


@pytest.fixture(scope="module")
def conv_101():
    fm = f16_arange(512).reshape(2, 4, 4, 16)
    w = f16_arange(2048).reshape(2, 2, 2, 16, 16)
    return conv2d_l0c(fm, w, [1, 1], [0, 0, 0, 0], [2, 2], garbage=-7777.0)


# ======================================================================================
# Golden examples
# ======================================================================================

DOC_101 = np.array([
    [3568.7373, 3612.8433, 3657.0618, 3701.1621, 3745.2874, 3789.4832, 3833.6284, 3877.8760, 3921.9812, 3966.0745,
     4010.3110, 4054.4119, 4098.5713, 4142.7021, 4186.8457, 4231.0312],
    [3753.9888, 3801.3730, 3848.8733, 3896.2537, 3943.6558, 3991.1355, 4038.5586, 4086.0913, 4133.4736, 4180.8457,
     4228.3643, 4275.7446, 4323.1826, 4370.5947, 4418.0161, 4465.4844],
    [4309.1958, 4366.4077, 4423.7451, 4480.9565, 4538.1816, 4595.5049, 4652.7549, 4710.1348, 4767.3398, 4824.5405,
     4881.8970, 4939.1104, 4996.3745, 5053.6226, 5110.8711, 5168.1792],
    [4494.4526, 4554.9438, 4615.5640, 4676.0557, 4736.5586, 4797.1660, 4857.6948, 4918.3604, 4978.8433, 5039.3232,
     5099.9624, 5160.4561, 5220.9990, 5281.5293, 5342.0566, 5402.6479]], dtype=np.float32)

DOC_102 = np.array([
    [3568, 3614, 3660, 3704, 3750, 3794, 3840, 3884, 3930, 3976, 4020, 4066, 4112, 4156, 4200, 4248],
    [3754, 3802, 3850, 3900, 3948, 3996, 4044, 4094, 4140, 4188, 4240, 4288, 4336, 4384, 4432, 4480],
    [4308, 4368, 4424, 4484, 4544, 4600, 4660, 4716, 4776, 4832, 4892, 4952, 5008, 5068, 5124, 5184],
    [4496, 4556, 4616, 4680, 4740, 4804, 4864, 4924, 4988, 5048, 5108, 5172, 5232, 5296, 5356, 5416]],
    dtype=np.float16)


def test_golden_10_1_conv_copy_out_f32(conv_101):
    l0c, howo = conv_101
    assert howo == 4 and l0c.shape == (1, 16, 16)
    r = legacy_fixpipe(l0c, dst_dtype="float32", cburst_num=1, burst_len=8, dst_stride=0, src_stride=0,
                       extend_params=None, dst_size=64)
    out = r.blocks()
    assert out.shape == (1, 4, 16) and out.dtype == np.float32
    np.testing.assert_array_equal(out[0].view(np.uint32), l0c[0, :4].view(np.uint32))   # a bit-exact copy
    np.testing.assert_allclose(out[0], DOC_101, rtol=1e-5)
    assert not np.any(r.values == -7777.0)                                                # rows 4..15 dropped
    assert r.written.all() and r.values.size == 64


def test_golden_10_2_bias_fp322fp16_exact(conv_101):
    l0c, _ = conv_101
    bias = np.arange(16, dtype=np.float32)
    r = legacy_fixpipe(l0c, dst_dtype="float16", cburst_num=1, burst_len=8, dst_stride=0, src_stride=0,
                       extend_params={"bias": bias, "quantize_params": FP322FP16}, dst_size=64)
    np.testing.assert_array_equal(r.blocks()[0].view(np.uint16), DOC_102.view(np.uint16))
    # The doc prints shortest decimals: "4110." and "4250." are the fp16 numbers 4112 and 4248.
    assert np.float16(4110.0) == r.blocks()[0, 0, 12] and np.float16(4250.0) == r.blocks()[0, 0, 15]


def test_golden_10_3_int8_matmul_relu_all_zero():
    a = np.full((2, 32, 32), -1, dtype=np.int8)
    b = np.full((2, 160, 32), 1, dtype=np.int8)
    l0c = matmul_l0c(a, b, 30, 64, 160, np.int32, garbage=12345)
    assert l0c.shape == (10, 32, 16)
    r = legacy_fixpipe(l0c, dst_dtype="int32", cburst_num=10, burst_len=60, dst_stride=0, src_stride=0,
                       extend_params={"relu": True}, dst_size=10 * 30 * 16)
    assert r.blocks().shape == (10, 30, 16) and r.values.dtype == np.int32
    assert np.all(r.values == 0) and r.written.all()
    plain = legacy_fixpipe(l0c, dst_dtype="int32", cburst_num=10, burst_len=60, dst_stride=0, src_stride=0)
    assert np.all(plain.values == -64)


def test_golden_10_4_fp16_matmul_element_wise_add_65():
    a = np.ones((4, 32, 16), dtype=np.float16)
    b = np.ones((4, 160, 16), dtype=np.float16)
    l0c = matmul_l0c(a, b, 30, 64, 160, np.float32, garbage=np.nan)
    ewa = np.ones((10, 32, 16), dtype=np.float32)
    r = legacy_fixpipe(l0c, dst_dtype="float32", cburst_num=10, burst_len=60, dst_stride=0, src_stride=0,
                       extend_params={"element-wise-add": ewa}, dst_size=10 * 30 * 16)
    assert r.blocks().shape == (10, 30, 16)
    assert np.all(r.values == 65.0)


# ======================================================================================
# Independent per-element reference
# ======================================================================================

F16_MAX, F32_MAX = 65504.0, float(np.finfo(np.float32).max)


def _pack_round(v: float, fmt: str, saturate: bool) -> float:
    """Round a double to half ('e') or single ('f') with CPython's packer (nearest-even)."""
    limit = F16_MAX if fmt == "e" else F32_MAX
    if math.isnan(v):
        return 0.0 if saturate else math.nan
    if math.isinf(v):
        return math.copysign(limit, v) if saturate else v
    try:
        return struct.unpack("<" + fmt, struct.pack("<" + fmt, v))[0]
    except OverflowError:
        return math.copysign(limit if saturate else math.inf, v)


def _wrap32(v: int) -> int:
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def loop_reference(src_flat, src_off, cb, howo, src_stride, dst_stride, src_code, dst_code, bias, ewa, mode,
                   scale, relu, saturate):
    """{dst element index: value} the legacy instruction writes (values as Python numbers)."""
    src_size = {"f32": 4, "s32": 4, "f16": 2}[src_code]
    dst_size = {"f32": 4, "s32": 4, "f16": 2}[dst_code]
    round_howo = (howo + 15) // 16 * 16
    out = {}
    for c in range(cb):
        for p in range(howo):
            for j in range(16):
                s_idx = src_off + c * round_howo * 16 + c * src_stride * 256 + p * 16 + j
                if src_code == "s32":
                    v = int(src_flat[s_idx])
                else:
                    v = float(src_flat[s_idx])
                for addend in ((None if bias is None else bias[c * 16 + j]),
                               (None if ewa is None else ewa[(c * round_howo + p) * 16 + j])):
                    if addend is None:
                        continue
                    if src_code == "s32":
                        v = _wrap32(v + int(addend))
                    else:
                        v = _pack_round(v + float(addend), "f" if src_code == "f32" else "e", saturate)
                if mode == "fp322fp16":
                    v = _pack_round(v, "e", saturate)
                elif mode == "int322fp16":
                    s = float(scale if np.ndim(scale) == 0 else scale[j])
                    v = _pack_round(v * s if not math.isinf(s) or v != 0 else math.nan, "e", saturate)
                if relu:
                    if src_code == "s32" and mode is None:
                        v = max(v, 0)
                    elif not math.isnan(v) and not v > 0:
                        v = 0.0
                d_idx = c * (howo * 16 + dst_stride * 32 // dst_size) + p * 16 + j
                out[d_idx] = v
    return out


def _same(model_value, ref_value) -> bool:
    if isinstance(ref_value, float) and math.isnan(ref_value):
        return bool(np.isnan(model_value))
    if isinstance(ref_value, float) and ref_value == 0.0:
        return float(model_value) == 0.0 and math.copysign(1, float(model_value)) == math.copysign(1, ref_value)
    return model_value == ref_value


# ======================================================================================
# Property tests
# ======================================================================================

#: (chip, src, dst) combinations the model supports (Appendix B tik.fixpipe table).
COMBOS = [("Ascend310", "f32", "f32"), ("Ascend310", "s32", "s32"), ("Ascend310", "f32", "f16"),
          ("Ascend310", "s32", "f16"), ("Ascend910B1", "f32", "f16"), ("Ascend910B1", "s32", "f16"),
          ("Ascend310P3", "f32", "f32"), ("SD3403", "f16", "f16"), ("SD3403", "s32", "s32"),
          ("Hi3796CV300CS", "s32", "f16")]
NP = {"f32": np.float32, "s32": np.int32, "f16": np.float16}


def _values(rng, code, n, special):
    if code == "s32":
        if special:
            return rng.integers(-2 ** 31, 2 ** 31, size=n, dtype=np.int64).astype(np.int32)
        return rng.integers(-5000, 5000, size=n).astype(np.int32)
    if special:   # every class of bit pattern: NaN, inf, subnormals, huge, +-0
        bits = rng.integers(0, 2 ** (32 if code == "f32" else 16), size=n, dtype=np.uint64)
        return bits.astype(np.uint32 if code == "f32" else np.uint16).view(NP[code])
    v = rng.normal(0, 3e4 if code == "f32" else 1e3, size=n)
    pick = rng.random(n) < 0.1   # sprinkle edge values: zeros, the f16 overflow boundary, tiny, inf, NaN
    v[pick] = rng.choice([0.0, -0.0, 65504.0, 65519.99, 65520.0, -70000.0, 1e-8, np.inf, -np.inf, np.nan],
                         size=int(pick.sum()))
    with np.errstate(over="ignore"):
        return v.astype(NP[code])


@st.composite
def fixpipe_cases(draw):
    chip, src, dst = draw(st.sampled_from(COMBOS))
    hisi = chip in ("SD3403", "Hi3796CV300CS")
    case = dict(chip=chip, src=src, dst=dst, cb=draw(st.integers(1, 4)), howo=draw(st.integers(1, 40)),
                dst_stride=draw(st.integers(0, 4)), src_stride=draw(st.integers(0, 2)),
                src_frac_off=draw(st.integers(0, 1)), seed=draw(st.integers(0, 2 ** 32 - 1)),
                special=draw(st.booleans()), overflow=draw(st.sampled_from([None, "saturation", "inf_nan"])))
    quant = (src, dst) in (("f32", "f16"), ("s32", "f16"))
    add = "none"
    if not (hisi and quant):
        add = draw(st.sampled_from(["none", "bias", "ewa"]))
    scale_kind = None
    if (src, dst) == ("s32", "f16"):
        kinds = ["immediate", "scalar"] + (["tensor"] if add == "none" and not hisi else [])
        scale_kind = draw(st.sampled_from(kinds))
    relu_ok = add == "none" and scale_kind not in ("immediate", "scalar") and not hisi
    relu_key = relu_ok and draw(st.booleans())            # pass the key at all (True or False)
    case.update(add=add, scale_kind=scale_kind, relu_key=relu_key, relu=relu_key and draw(st.booleans()))
    return case


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fixpipe_cases())
def test_model_matches_loop_reference(case):
    rng = np.random.default_rng(case["seed"])
    src_code, dst_code, cb, howo = case["src"], case["dst"], case["cb"], case["howo"]
    round_howo = (howo + 15) // 16 * 16
    src_off = case["src_frac_off"] * 256
    n_src = src_off + cb * (round_howo * 16 + case["src_stride"] * 256) + 256 * rng.integers(0, 2)
    src_flat = _values(rng, src_code, n_src, case["special"])
    ext = {}
    bias = ewa = None
    if case["add"] == "bias":
        bias = _values(rng, src_code, cb * 16, case["special"])
        ext["bias"] = bias
    elif case["add"] == "ewa":
        ewa = _values(rng, src_code, cb * round_howo * 16, case["special"])
        ext["element-wise-add"] = ewa.reshape(cb, round_howo, 16)
    mode = scale = None
    if (src_code, dst_code) == ("f32", "f16"):
        mode = "fp322fp16"
        ext["quantize_params"] = FP322FP16
    elif (src_code, dst_code) == ("s32", "f16"):
        mode = "int322fp16"
        if case["scale_kind"] == "tensor":
            scale = rng.integers(0, 2 ** 16, size=16, dtype=np.uint64).astype(np.uint16).view(np.float16) \
                if case["special"] else rng.normal(0, 0.1, 16).astype(np.float16)
            param = scale
        elif case["scale_kind"] == "scalar":
            scale = np.float16(rng.normal(0, 0.05))
            param = scale
        else:
            param = float(rng.normal(0, 0.05)) if not case["special"] else float(rng.choice([1e5, 3.3e-8, 0.1]))
            with np.errstate(over="ignore"):
                scale = np.float16(param)                  # 1e5 -> inf: an immediate beyond float16
        ext["quantize_params"] = int322fp16(param)
    if case["relu_key"]:
        ext["relu"] = case["relu"]
    dst_size = {"f32": 4, "s32": 4, "f16": 2}
    burst_len = howo * 16 * dst_size[src_code] // 32
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReservedArgumentWarning)
        r = legacy_fixpipe(LegacyTensor(src_flat.reshape(-1, 16) if n_src % 16 == 0 else src_flat, offset=src_off),
                           dst_dtype=dst_code, cburst_num=cb, burst_len=burst_len, dst_stride=case["dst_stride"],
                           src_stride=case["src_stride"], extend_params=ext, chip=case["chip"],
                           overflow_mode=case["overflow"])
    default_sat = case["chip"] not in ("Ascend910B1",)
    saturate = default_sat if case["overflow"] is None else case["overflow"] == "saturation"
    ref = loop_reference(src_flat, src_off, cb, howo, case["src_stride"], case["dst_stride"], src_code, dst_code,
                         bias, None if ewa is None else ewa, mode, scale, case["relu"], saturate)
    assert r.values.dtype == NP[dst_code]
    assert set(np.flatnonzero(r.written).tolist()) == set(ref)
    assert r.values.size == max(ref) + 1
    bad = [(i, r.values[i], v) for i, v in ref.items() if not _same(r.values[i], v)]
    assert not bad, bad[:5]


@settings(max_examples=40, deadline=None)
@given(cb=st.integers(1, 5), howo=st.integers(1, 50), dst_stride=st.integers(0, 9), dst_code=st.sampled_from(["f32", "f16"]))
def test_geometry_rows_blocks_and_gaps(cb, howo, dst_stride, dst_code):
    """Every written element sits at c*(howo*16 + gap) + p*16 + j; gaps and dropped rows untouched."""
    src_code = "f32"
    round_howo = (howo + 15) // 16 * 16
    src = np.arange(cb * round_howo * 16, dtype=np.float32).reshape(cb, round_howo, 16)
    ext = {"quantize_params": FP322FP16} if dst_code == "f16" else None
    r = legacy_fixpipe(src, dst_dtype=dst_code, cburst_num=cb, burst_len=howo * 2, dst_stride=dst_stride,
                       src_stride=0, extend_params=ext)
    gap = dst_stride * 32 // (4 if dst_code == "f32" else 2)
    assert r.geometry.howo == howo and r.geometry.round_howo == round_howo and r.geometry.dst_gap == gap
    expect_mask = np.zeros(r.values.size, bool)
    for c in range(cb):
        start = c * (howo * 16 + gap)
        expect_mask[start:start + howo * 16] = True
        np.testing.assert_array_equal(r.values[start:start + howo * 16],
                                      src[c, :howo].reshape(-1).astype(np.dtype(NP[dst_code])))
    np.testing.assert_array_equal(r.written, expect_mask)
    np.testing.assert_array_equal(np.flatnonzero(expect_mask), np.sort(r.geometry.dst_index().reshape(-1)))
    np.testing.assert_array_equal(src.reshape(-1)[r.geometry.src_index()], src[:, :howo])
    dst = np.full(r.values.size + 5, -3, dtype=NP[dst_code])
    merged = r.write_into(dst, offset=5)
    np.testing.assert_array_equal(merged[:5], -3)
    np.testing.assert_array_equal(merged[5:][~expect_mask], -3)


# ======================================================================================
# Numerics choices, one test each
# ======================================================================================


def _one_block(values, dtype):
    src = np.zeros((1, 16, 16), dtype=dtype)
    src[0, 0, :len(values)] = values
    return src


def test_int322fp16_product_is_exact_then_rounded_once():
    """x = 2**24*2049/2**11 + 1 is not an f32: rounding it first would give the tie 2049 -> 2048."""
    x = 2049 * 2 ** 13 + 1
    src = _one_block([x], np.int32)
    r = legacy_fixpipe(src, dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                       extend_params={"quantize_params": int322fp16(float(2 ** -13))})
    assert r.values[0] == np.float16(2050.0)
    assert np.float16(np.float32(x) * np.float32(2 ** -13)) == np.float16(2048.0)   # the f32 path differs


def test_int322fp16_tensor_scale_per_channel_and_immediate_rounded():
    src = np.ones((3, 16, 16), dtype=np.int32) * 4
    scale = (np.arange(16) + 1).astype(np.float16) / np.float16(8)
    r = legacy_fixpipe(src, dst_dtype="float16", cburst_num=3, burst_len=2, dst_stride=0, src_stride=0,
                       extend_params={"quantize_params": int322fp16(scale), "relu": True})
    np.testing.assert_array_equal(r.blocks()[:, 0, :], np.tile(4 * scale.astype(np.float32), (3, 1)))
    plan = check_fixpipe_args(src, dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                              extend_params={"quantize_params": int322fp16(0.1)})
    assert plan.scale_kind == "immediate" and plan.scale == np.float16(0.1)
    assert any("rounded" in n and "0.1" in n for n in plan.notes)


def test_int322fp16_nan_immediate_is_not_called_rounded():
    # author298: NaN != NaN made the note say "mode_param nan is not a float16 value; ... rounded to nan"
    src = np.full((1, 16, 16), 3, dtype=np.int32)
    plan = check_fixpipe_args(src, dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                              extend_params={"quantize_params": int322fp16(float("nan"))})
    assert not any("rounded" in n for n in plan.notes)
    assert any("NaN" in n for n in plan.notes)
    r = legacy_fixpipe(src, dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                       extend_params={"quantize_params": int322fp16(float("nan"))}, chip="Ascend310")
    assert np.all(r.blocks() == 0)                      # saturation mode: NaN -> 0


@pytest.mark.parametrize("chip,mode,expect", [
    ("Ascend310", None, [65504.0, -65504.0, 0.0, 65504.0]),
    ("Ascend910B1", None, [np.inf, -np.inf, np.nan, np.inf]),
    ("Ascend310", "inf_nan", [np.inf, -np.inf, np.nan, np.inf]),
    ("Ascend910B1", "saturation", [65504.0, -65504.0, 0.0, 65504.0]),
])
def test_fp322fp16_overflow_mode(chip, mode, expect):
    src = _one_block([1e5, -np.inf, np.nan, 65520.0], np.float32)
    r = legacy_fixpipe(src, dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                       extend_params={"quantize_params": FP322FP16}, chip=chip, overflow_mode=mode)
    np.testing.assert_array_equal(r.values[:4], np.array(expect, dtype=np.float16))
    assert r.values[4] == 0 and r.plan.overflow_mode == (mode or ("saturation" if chip == "Ascend310" else "inf_nan"))


def test_fp322fp16_ties_to_even():
    ties = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2049.0, 2051.0], dtype=np.float32)
    r = legacy_fixpipe(_one_block(ties, np.float32), dst_dtype="float16", cburst_num=1, burst_len=2, dst_stride=0,
                       src_stride=0, extend_params={"quantize_params": FP322FP16})
    np.testing.assert_array_equal(r.values[:4], np.array([1.0, 1 + 2 ** -9, 2048.0, 2052.0], dtype=np.float16))


def test_int32_bias_wraps_and_relu_zero_sign():
    src = _one_block([2 ** 31 - 1, -5], np.int32)
    bias = np.zeros(16, dtype=np.int32)
    bias[0] = 1
    r = legacy_fixpipe(src, dst_dtype="int32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                       extend_params={"bias": bias})
    assert r.values[0] == -2 ** 31 and r.values[1] == -5
    f = legacy_fixpipe(_one_block([-0.0, -1.0, np.nan, 2.5], np.float32), dst_dtype="float32", cburst_num=1,
                       burst_len=2, dst_stride=0, src_stride=0, extend_params={"relu": True})
    assert not np.signbit(f.values[0]) and f.values[1] == 0 and np.isnan(f.values[2]) and f.values[3] == 2.5


def test_f32_bias_saturation_mode():
    src = _one_block([3e38, np.nan], np.float32)
    bias = np.full(16, 3e38, dtype=np.float32)
    sat = legacy_fixpipe(src, dst_dtype="float32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                         extend_params={"bias": bias})
    assert sat.values[0] == np.finfo(np.float32).max and sat.values[1] == 0
    ieee = legacy_fixpipe(src, dst_dtype="float32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0,
                          extend_params={"bias": bias}, chip="Ascend910B1")
    assert ieee.values[0] == np.inf and np.isnan(ieee.values[1])


def test_hisi_f16_path_with_bias():
    src = np.zeros((1, 16, 16), dtype=np.float16)
    src[0, :3, 0] = [1.0, 2048.0, 65504.0]
    bias = np.full(16, 1.0, dtype=np.float16)
    r = legacy_fixpipe(src, dst_dtype="float16", cburst_num=1, burst_len=3, dst_stride=0, src_stride=0,
                       extend_params={"bias": bias}, chip="SD3403", dst_scope="ub")
    assert r.geometry.howo == 3                                       # 32 B of f16 = one 16-channel row
    assert list(r.blocks()[0, :, 0]) == [2.0, 2048.0, 65504.0]        # 2049 ties to even; 65505 rounds down


# ======================================================================================
# Documented rules: passing and failing calls
# ======================================================================================

SRC32 = np.zeros((2, 16, 16), dtype=np.float32)
SRC_S32 = np.zeros((2, 16, 16), dtype=np.int32)


def call(src=SRC32, **kw):
    args = dict(dst_dtype="float32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0)
    args.update(kw)
    return check_fixpipe_args(src, **args)


@pytest.mark.parametrize("name,good,bad,limit", [
    ("cburst_num", 2, 0, "[1, 4095]"), ("cburst_num", 1, 4096, "[1, 4095]"),
    ("burst_len", 32, 0, "[1, 65535]"), ("burst_len", 2, 65536, "[1, 65535]"),
    ("dst_stride", 65535, -1, "[0, 65535]"), ("dst_stride", 0, 65536, "[0, 65535]"),
    ("src_stride", 0, 65536, "[0, 65535]"), ("src_stride", 0, -1, "[0, 65535]"),
])
def test_ranges(name, good, bad, limit):
    call(**{name: good})
    with pytest.raises(IllegalOperand, match=rf"{name}={bad} is outside \[") as e:
        call(**{name: bad})
    assert e.value.operand == name and e.value.limit == limit


def test_range_limits_at_the_top():
    big = np.zeros((4095, 16, 16), dtype=np.float32)
    assert call(big, cburst_num=4095).geometry.src_extent == big.size
    f16 = np.zeros(65536 * 16, dtype=np.float16)
    plan = call(f16, dst_dtype="float16", burst_len=65535, chip="SD3403")
    assert plan.geometry.howo == 65535 and plan.geometry.round_howo == 65536


@pytest.mark.parametrize("name,value", [("cburst_num", 2.0), ("burst_len", True), ("dst_stride", "0"),
                                        ("src_stride", None)])
def test_immediates_must_be_int(name, value):
    with pytest.raises(IllegalOperand, match=f"{name} must be a Python int"):
        call(**{name: value})


def test_burst_len_whole_rows_of_src():
    call(burst_len=4)
    with pytest.raises(IllegalOperand, match="burst_len=3 .* not a whole number of 16-channel rows") as e:
        call(burst_len=3)
    assert e.value.limit == "a multiple of 2"


def test_src_stride_reserved_is_modelled_and_flagged():
    src = np.arange(2 * 256 + 256, dtype=np.float32)
    with pytest.warns(ReservedArgumentWarning, match="src_stride=1 is documented as reserved"):
        r = legacy_fixpipe(src, dst_dtype="float32", cburst_num=2, burst_len=2, dst_stride=0, src_stride=1)
    assert r.plan.notes and "reserved" in r.plan.notes[0]
    np.testing.assert_array_equal(r.values[16:], src[512:528])        # block 1 starts at 16*16 + 1*256
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        legacy_fixpipe(src, dst_dtype="float32", cburst_num=2, burst_len=2, dst_stride=0, src_stride=0)


@pytest.mark.parametrize("chip,src,dst", [("Ascend310", SRC32, "int32"), ("Ascend310", SRC32, "int8"),
                                          ("Ascend310", np.zeros(256, np.float16), "float16"),
                                          ("SD3403", SRC32, "float16"), ("SD3403", SRC32, "float32")])
def test_dtype_table_rejects(chip, src, dst):
    with pytest.raises(IllegalOperand, match="is not a fixpipe dtype combination") as e:
        call(src, dst_dtype=dst, chip=chip)
    assert e.value.operand == "dst" and "one of" in e.value.limit


@pytest.mark.parametrize("chip,src,dst,ext", [
    ("Ascend310", SRC32, "float16", {"quantize_params": FP322FP16}),
    ("Ascend910B1", SRC_S32, "int32", None),
    ("Hi3796CV300CS", np.zeros(256, np.float16), "float16", None),
    ("SD3403", SRC_S32, "float16", {"quantize_params": int322fp16(0.5)}),
])
def test_dtype_table_accepts(chip, src, dst, ext):
    assert call(src, dst_dtype=dst, chip=chip, extend_params=ext).chip.startswith(chip.rstrip("1"))


def test_src_dtype_must_be_a_tik_dtype():
    with pytest.raises(IllegalOperand, match="float64, which is no TIK tensor dtype"):
        call(np.zeros(256, np.float64))
    with pytest.raises(UnknownName, match="unknown dst dtype 'float99'") as e:
        call(dst_dtype="float99")
    assert e.value.operand == "dst"


@pytest.mark.parametrize("chip,core,err,msg", [
    ("Hi3796CV300ES", "AiCore", UnsupportedOp, "has no tik.fixpipe"),
    ("Ascend310", "VectorCore", UnsupportedOp, "has no tik.fixpipe"),
    ("A2A3", "AiCore", UnsupportedOp, "is a PTO target"),
    ("Ascend999", "AiCore", UnknownName, "unknown SoC 'Ascend999'"),
    ("Ascend310", "CubeCore", UnknownName, "unknown core type"),
])
def test_chips_without_fixpipe(chip, core, err, msg):
    with pytest.raises(err, match=msg) as e:
        call(chip=chip, core_type=core)
    assert e.value.operand in ("chip", "core_type")


def test_chips_with_fixpipe():
    assert call(chip="Ascend310P3", core_type="VectorCore").chip == "Ascend310PVectorCore"
    assert call(chip="Ascend910").chip == "Ascend910AiCore"


def test_dst_scope_ub_only_on_documented_socs():
    call(chip="Ascend310B1", dst_scope="ub")
    call(SRC_S32, dst_dtype="int32", chip="SD3403", dst_scope="ub")
    with pytest.raises(IllegalOperand, match="dst scope 'ub' is not allowed on Ascend310AiCore") as e:
        call(dst_scope="ub")
    assert e.value.limit == "gm"


def test_quantize_required_for_f16_dst():
    call(dst_dtype="float16", extend_params={"quantize_params": FP322FP16})
    with pytest.raises(IllegalOperand, match="needs extend_params\\['quantize_params'\\] with mode 'fp322fp16'"):
        call(dst_dtype="float16")
    with pytest.raises(IllegalOperand, match="mode 'int322fp16'"):
        call(SRC_S32, dst_dtype="float16", extend_params={"relu": False})


@pytest.mark.parametrize("src,dst,chip", [(SRC32, "float32", "Ascend310"), (SRC_S32, "int32", "Ascend310"),
                                          (np.zeros(256, np.float16), "float16", "SD3403")])
def test_quantize_forbidden_for_same_type(src, dst, chip):
    call(src, dst_dtype=dst, chip=chip, extend_params={"quantize_params": None})
    with pytest.raises(IllegalOperand, match="quantize_params must be None") as e:
        call(src, dst_dtype=dst, chip=chip, extend_params={"quantize_params": FP322FP16})
    assert e.value.limit == "None"


def test_quantize_params_structure_and_mode():
    with pytest.raises(IllegalOperand, match="quantize_params must be a dict"):
        call(dst_dtype="float16", extend_params={"quantize_params": "fp322fp16"})
    with pytest.raises(IllegalOperand, match="must contain both 'mode' and 'mode_param'"):
        call(dst_dtype="float16", extend_params={"quantize_params": {"mode": "fp322fp16"}})
    with pytest.raises(UnknownName, match="quantize mode 'fp322bf16' is not supported") as e:
        call(dst_dtype="float16", extend_params={"quantize_params": {"mode": "fp322bf16", "mode_param": None}})
    assert "int322fp16" in e.value.limit
    with pytest.raises(IllegalOperand, match="'int322fp16' converts s32 -> f16 but src/dst are f32 -> f16"):
        call(dst_dtype="float16", extend_params={"quantize_params": int322fp16(1.0)})
    with pytest.raises(IllegalOperand, match="'fp322fp16' converts f32 -> f16 but src/dst are s32 -> f16"):
        call(SRC_S32, dst_dtype="float16", extend_params={"quantize_params": FP322FP16})
    plan = call(dst_dtype="float16", extend_params={"quantize_params": {**FP322FP16, "extra": 1}})
    assert any("ignored" in n for n in plan.notes)


def test_mode_param_kinds():
    with pytest.raises(IllegalOperand, match="'fp322fp16' takes mode_param=None"):
        call(dst_dtype="float16", extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": 1.0}})
    s32 = dict(src=SRC_S32, dst_dtype="float16")
    for good, kind in [(0.5, "immediate"), (np.float16(0.5), "scalar"), (np.ones(16, np.float16), "tensor"),
                       (LegacyTensor(np.ones(32, np.float16), offset=16, scope="l1"), "tensor")]:
        assert call(**s32, extend_params={"quantize_params": int322fp16(good)}).scale_kind == kind
    with pytest.raises(IllegalOperand, match="needs a mode_param"):
        call(**s32, extend_params={"quantize_params": int322fp16(None)})
    with pytest.raises(IllegalOperand, match="int is not a float immediate") as e:
        call(**s32, extend_params={"quantize_params": int322fp16(2)})
    assert "2.0" in e.value.hint
    with pytest.raises(IllegalOperand, match="needs a Scalar of float16"):
        call(**s32, extend_params={"quantize_params": int322fp16(np.float32(0.5))})
    with pytest.raises(IllegalOperand, match="needs a float16 Tensor"):
        call(**s32, extend_params={"quantize_params": int322fp16(np.ones(16, np.float32))})
    with pytest.raises(OutOfBounds, match="needs start element 8 \\+ 16 = 24 elements, the tensor has 16"):
        call(**s32, extend_params={"quantize_params": int322fp16(LegacyTensor(np.ones(16, np.float16), 8))})
    with pytest.raises(IllegalOperand, match="in scope 'ub'"):
        call(**s32, extend_params={"quantize_params": int322fp16(LegacyTensor(np.ones(16, np.float16), 0, "ub"))})


def test_tensor_mode_param_only_without_bias_or_ewa():
    s32 = dict(src=SRC_S32, dst_dtype="float16")
    bias = np.zeros(16, np.int32)
    call(**s32, extend_params={"bias": bias, "quantize_params": int322fp16(np.float16(2))})
    with pytest.raises(IllegalOperand, match="Tensor mode_param is only allowed without bias and element-wise-add"):
        call(**s32, extend_params={"bias": bias, "quantize_params": int322fp16(np.ones(16, np.float16))})
    with pytest.raises(IllegalOperand, match="Tensor mode_param is only allowed without"):
        call(**s32, extend_params={"element-wise-add": np.zeros(256, np.int32),
                                   "quantize_params": int322fp16(np.ones(16, np.float16))})


def test_bias_and_element_wise_add_exclusive():
    call(extend_params={"bias": np.zeros(16, np.float32)})
    call(extend_params={"element-wise-add": np.zeros(256, np.float32)})
    with pytest.raises(IllegalOperand, match="bias and element-wise-add cannot be enabled together"):
        call(extend_params={"bias": np.zeros(16, np.float32), "element-wise-add": np.zeros(256, np.float32)})


def test_relu_rules():
    call(extend_params={"relu": True})
    call(extend_params={"relu": False, "bias": np.zeros(16, np.float32)})
    with pytest.raises(IllegalOperand, match="relu must be a bool"):
        call(extend_params={"relu": 1})
    with pytest.raises(IllegalOperand, match="relu is only supported when bias and element-wise-add are disabled"):
        call(extend_params={"relu": True, "bias": np.zeros(16, np.float32)})
    with pytest.raises(IllegalOperand, match="relu is only supported when bias"):
        call(extend_params={"relu": True, "element-wise-add": np.zeros(256, np.float32)})
    for param in (0.5, np.float16(0.5)):
        with pytest.raises(IllegalOperand, match="relu is not supported with quantize mode 'int322fp16'"):
            call(SRC_S32, dst_dtype="float16", extend_params={"relu": True, "quantize_params": int322fp16(param)})
    call(SRC_S32, dst_dtype="float16", extend_params={"relu": True,
                                                      "quantize_params": int322fp16(np.ones(16, np.float16))})
    call(SRC_S32, dst_dtype="float16", extend_params={"relu": False, "quantize_params": int322fp16(0.5)})


def test_hisi_restrictions():
    s32 = np.zeros((1, 16, 16), np.int32)
    call(s32, dst_dtype="int32", chip="SD3403", extend_params={"bias": np.zeros(16, np.int32)})
    with pytest.raises(UnsupportedOp, match="SD3403 fixpipe does not support the 'relu' key"):
        call(s32, dst_dtype="int32", chip="SD3403", extend_params={"relu": False})
    with pytest.raises(UnsupportedOp, match="Hi3796CV300CS does not support bias or element-wise-add with s32f16"):
        call(s32, dst_dtype="float16", chip="Hi3796CV300CS",
             extend_params={"bias": np.zeros(16, np.int32), "quantize_params": int322fp16(0.5)})
    with pytest.raises(IllegalOperand, match="must be float32 with shape \\[2\\*Cout\\] = \\[32\\]"):
        call(s32, dst_dtype="float16", chip="SD3403",
             extend_params={"quantize_params": int322fp16(np.ones(16, np.float16))})
    with pytest.raises(UnsupportedOp, match="float32 \\[2\\*Cout\\] deqscale tensor is not documented"):
        call(s32, dst_dtype="float16", chip="SD3403",
             extend_params={"quantize_params": int322fp16(np.ones(32, np.float32))})


def test_unknown_extend_params_keys():
    with pytest.raises(UnknownName, match="unknown key\\(s\\) 'element_wise_add'") as e:
        call(extend_params={"element_wise_add": np.zeros(256, np.float32)})
    assert "'element-wise-add'" in e.value.hint
    with pytest.raises(IllegalOperand, match="extend_params must be a dict"):
        call(extend_params=[("relu", True)])
    assert call(extend_params={}).relu is False


def test_bias_and_ewa_operands():
    call(extend_params={"bias": LegacyTensor(np.zeros(40, np.float32), offset=8)})
    with pytest.raises(IllegalOperand, match="bias has dtype int32; it must have the src dtype float32"):
        call(extend_params={"bias": np.zeros(16, np.int32)})
    with pytest.raises(IllegalOperand, match="element-wise-add has dtype float16"):
        call(extend_params={"element-wise-add": np.zeros(256, np.float16)})
    with pytest.raises(OutOfBounds, match="bias tensor overflow: needs start element 0 \\+ cburst_num\\*16 = 32"):
        call(cburst_num=2, extend_params={"bias": np.zeros(16, np.float32)})
    with pytest.raises(OutOfBounds, match="element-wise-add tensor overflow: .*cburst_num\\*round_howo\\*16 = 512"):
        call(cburst_num=2, extend_params={"element-wise-add": np.zeros((1, 16, 16), np.float32)})
    with pytest.raises(Misaligned, match="bias starts at element 4 = byte 16, not 32 B aligned"):
        call(extend_params={"bias": LegacyTensor(np.zeros(40, np.float32), offset=4)})
    with pytest.raises(IllegalOperand, match="element-wise-add is in scope 'gm'"):
        call(extend_params={"element-wise-add": LegacyTensor(np.zeros(256, np.float32), scope="gm")})
    with pytest.raises(IllegalOperand, match="bias must be a Tensor"):
        call(extend_params={"bias": 1.0})


def test_src_and_dst_overflow():
    call(cburst_num=2, dst_size=32)
    with pytest.raises(OutOfBounds, match="src tensor overflow: needs start element 0 .* = 768 elements, the tensor "
                                          "has 512") as e:
        call(cburst_num=3)
    assert e.value.limit == 512
    with pytest.raises(OutOfBounds, match="src tensor overflow: .* = 768"):
        call(cburst_num=2, src_stride=1)                       # the reserved stride counts too
    with pytest.raises(OutOfBounds, match="dst tensor overflow: needs start element 4 .* = 36 elements, the tensor "
                                          "has 32"):
        call(cburst_num=2, dst_size=32, dst_offset=4)
    with pytest.raises(OutOfBounds, match="dst tensor overflow: .* = 40 elements"):
        call(cburst_num=2, dst_size=32, dst_stride=1)


def test_src_alignment_and_scope():
    call(LegacyTensor(SRC32, offset=256, scope="l0c"))
    with pytest.raises(Misaligned, match="src starts at element 16 = byte 64, not 1024 B aligned"):
        call(LegacyTensor(SRC32, offset=16))
    with pytest.raises(Misaligned, match="not 512 B aligned"):
        call(LegacyTensor(np.zeros(512, np.float16), offset=16), dst_dtype="float16", chip="SD3403")
    with pytest.raises(IllegalOperand, match="src is in scope 'ub'"):
        call(LegacyTensor(SRC32, scope="ub"))
    with pytest.raises(IllegalOperand, match="src must be a Tensor"):
        call(3.0)


def test_overflow_mode_option():
    with pytest.raises(IllegalOperand, match="overflow_mode 'wrap' is not"):
        call(overflow_mode="wrap")


def test_write_into_and_block_views_bounds():
    r = legacy_fixpipe(SRC32, dst_dtype="float32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0)
    assert r.write_into(np.ones(20, np.float32), offset=4)[:4].tolist() == [1.0] * 4
    with pytest.raises(OutOfBounds, match="dst has 16 elements, the fixpipe writes up to element 19"):
        r.write_into(np.zeros(16, np.float32), offset=4)
    geo = call(cburst_num=2).geometry
    assert geo.src_blocks(SRC32.reshape(-1)).shape == (2, 1, 16)
    with pytest.raises(OutOfBounds, match="does not hold the fixpipe footprint of 272 elements"):
        geo.src_blocks(SRC32.reshape(-1)[:200])
