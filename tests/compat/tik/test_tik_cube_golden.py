"""The documented cube examples: tik_api.md §10.1-§10.4 and the two fixpipe examples of seed 002."""
import numpy as np
import pytest

from pto_core.errors import OutOfBounds
from tbe import tik
from tbe_compat.legacy_fixpipe import LegacyTensor, legacy_fixpipe

from .helpers import raises_tik, run


def f16_arange(n):
    """``F16_ARANGE`` of tik_api.md §10: multiples of fp16(0.01) rounded to fp16."""
    return (np.arange(n) * np.float64(np.float16(0.01))).astype(np.float16)


GOLDEN_10_1 = np.array([
    [3568.7373, 3612.8433, 3657.0618, 3701.1621, 3745.2874, 3789.4832, 3833.6284, 3877.8760, 3921.9812, 3966.0745,
     4010.3110, 4054.4119, 4098.5713, 4142.7021, 4186.8457, 4231.0312],
    [3753.9888, 3801.3730, 3848.8733, 3896.2537, 3943.6558, 3991.1355, 4038.5586, 4086.0913, 4133.4736, 4180.8457,
     4228.3643, 4275.7446, 4323.1826, 4370.5947, 4418.0161, 4465.4844],
    [4309.1958, 4366.4077, 4423.7451, 4480.9565, 4538.1816, 4595.5049, 4652.7549, 4710.1348, 4767.3398, 4824.5405,
     4881.8970, 4939.1104, 4996.3745, 5053.6226, 5110.8711, 5168.1792],
    [4494.4526, 4554.9438, 4615.5640, 4676.0557, 4736.5586, 4797.1660, 4857.6948, 4918.3604, 4978.8433, 5039.3232,
     5099.9624, 5160.4561, 5220.9990, 5281.5293, 5342.0566, 5402.6479]], np.float32)
GOLDEN_10_2 = np.array([
    [3568, 3614, 3660, 3704, 3750, 3794, 3840, 3884, 3930, 3976, 4020, 4066, 4112, 4156, 4200, 4248],
    [3754, 3802, 3850, 3900, 3948, 3996, 4044, 4094, 4140, 4188, 4240, 4288, 4336, 4384, 4432, 4480],
    [4308, 4368, 4424, 4484, 4544, 4600, 4660, 4716, 4776, 4832, 4892, 4952, 5008, 5068, 5124, 5184],
    [4496, 4556, 4616, 4680, 4740, 4804, 4864, 4924, 4988, 5048, 5108, 5172, 5232, 5296, 5356, 5416]], np.float16)


def _conv_10_1(with_bias: bool):
    ti = tik.Tik()
    fm_gm = ti.Tensor("float16", [2, 4, 4, 16], name="fm_gm", scope=tik.scope_gm)
    w_gm = ti.Tensor("float16", [2, 2, 2, 16, 16], name="w_gm", scope=tik.scope_gm)
    dst_gm = ti.Tensor("float16" if with_bias else "float32", [1, 4, 16], name="dst_gm", scope=tik.scope_gm)
    fm = ti.Tensor("float16", [2, 4, 4, 16], name="fm", scope=tik.scope_cbuf)
    w = ti.Tensor("float16", [2, 2, 2, 16, 16], name="w", scope=tik.scope_cbuf)
    dst = ti.Tensor("float32", [1, 16, 16], name="dst", scope=tik.scope_cbuf_out)
    ti.data_move(fm, fm_gm, 0, 1, 32, 0, 0)
    ti.data_move(w, w_gm, 0, 1, 128, 0, 0)
    ti.conv2d(dst, fm, w, [2, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [2, 2], 0)
    inputs = [fm_gm, w_gm]
    if with_bias:
        bias_gm = ti.Tensor("float32", (16,), name="bias_gm", scope=tik.scope_gm)
        bias = ti.Tensor("float32", (16,), name="bias", scope=tik.scope_cbuf)
        ti.data_move(bias, bias_gm, 0, 1, 2, 0, 0)
        ti.fixpipe(dst_gm, dst, 1, 8, 0, 0, extend_params={"bias": bias, "quantize_params": {
            "mode": "fp322fp16", "mode_param": None}})
        inputs.append(bias_gm)
    else:
        ti.fixpipe(dst_gm, dst, 1, 8, 0, 0, extend_params=None)
    ti.BuildCCE("conv2d", inputs, [dst_gm])
    feed = {"fm_gm": f16_arange(512).reshape(2, 4, 4, 16), "w_gm": f16_arange(2048).reshape(2, 2, 2, 16, 16)}
    if with_bias:
        feed["bias_gm"] = np.arange(16, dtype=np.float32)
    return ti, feed


def test_golden_10_1_conv2d_fp16_to_fp32():
    ti, feed = _conv_10_1(False)
    out, = run(ti, feed)
    np.testing.assert_allclose(out[0], GOLDEN_10_1, rtol=1e-5)
    assert ti.fixpipe_calls[0].lowering == "fixpipe"


def test_golden_10_2_fixpipe_bias_fp322fp16_exact():
    ti, feed = _conv_10_1(True)
    out, = run(ti, feed)
    np.testing.assert_array_equal(out[0], GOLDEN_10_2)
    assert ti.fixpipe_calls[0].lowering == "vector"


def _matmul_example(a_dt, a_shape, b_shape, dst_dt, a_val, b_val, ext_kind):
    ti = tik.Tik()
    a_gm = ti.Tensor(a_dt, a_shape, name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor(a_dt, b_shape, name="b_gm", scope=tik.scope_gm)
    dst_gm = ti.Tensor(dst_dt, [10, 30, 16], name="dst_gm", scope=tik.scope_gm)
    a_l1 = ti.Tensor(a_dt, a_shape, name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor(a_dt, b_shape, name="b_l1", scope=tik.scope_cbuf)
    dst_l1out = ti.Tensor(dst_dt, [10, 32, 16], name="dst_l1out", scope=tik.scope_cbuf_out)
    size = np.dtype(a_dt).itemsize
    ti.data_move(a_l1, a_gm, 0, 1, int(np.prod(a_shape)) * size // 32, 0, 0)
    ti.data_move(b_l1, b_gm, 0, 1, int(np.prod(b_shape)) * size // 32, 0, 0)
    ti.matmul(dst_l1out, a_l1, b_l1, 30, 64, 160)
    inputs = [a_gm, b_gm]
    feed = {"a_gm": np.full(a_shape, a_val, a_dt), "b_gm": np.full(b_shape, b_val, a_dt)}
    if ext_kind == "relu":
        ext = {"relu": True}
    elif ext_kind == "ewa":
        e_gm = ti.Tensor("float32", [10, 32, 16], name="element_wise_add_gm", scope=tik.scope_gm)
        e = ti.Tensor("float32", [10, 32, 16], name="element_wise_add", scope=tik.scope_cbuf)
        ti.data_move(e, e_gm, 0, 1, 640, 0, 0)
        ext = {"element-wise-add": e}
        inputs.append(e_gm)
        feed["element_wise_add_gm"] = np.ones((10, 32, 16), np.float32)
    else:
        ext = None
    ti.fixpipe(dst_gm, dst_l1out, 10, 60, 0, 0, extend_params=ext)
    ti.BuildCCE("matmul", inputs, [dst_gm])
    out, = run(ti, feed)
    return out


def test_golden_10_3_int8_matmul_relu():
    out = _matmul_example("int8", [2, 32, 32], [2, 160, 32], "int32", -1, 1, "relu")
    np.testing.assert_array_equal(out, np.zeros((10, 30, 16), np.int32))
    out = _matmul_example("int8", [2, 32, 32], [2, 160, 32], "int32", -1, 1, None)
    np.testing.assert_array_equal(out, np.full((10, 30, 16), -64, np.int32))


def test_golden_10_4_fp16_matmul_element_wise_add():
    out = _matmul_example("float16", [4, 32, 16], [4, 160, 16], "float32", 1.0, 1.0, "ewa")
    np.testing.assert_array_equal(out, np.full((10, 30, 16), 65.0, np.float32))


# ----------------------------------------------------------------------------- seed 002 examples

def test_seed_002_example_2_unchanged():
    """The second fixpipe example of seed 002, as printed (bias + fp322fp16)."""
    tik_instance = tik.Tik()
    # Define the tensors.
    feature_map_gm = tik_instance.Tensor("float16", [2, 4, 4, 16], name='feature_map_gm', scope=tik.scope_gm)
    weight_gm = tik_instance.Tensor("float16", [2, 2, 2, 16, 16], name='weight_gm', scope=tik.scope_gm)
    bias_gm = tik_instance.Tensor("float32", (16,), name='bias_gm', scope=tik.scope_gm)
    dst_gm = tik_instance.Tensor("float16", [1, 4, 16], name='dst_gm', scope=tik.scope_gm)
    feature_map = tik_instance.Tensor("float16", [2, 4, 4, 16], name='feature_map', scope=tik.scope_cbuf)
    weight = tik_instance.Tensor("float16", [2, 2, 2, 16, 16], name='weight', scope=tik.scope_cbuf)
    bias = tik_instance.Tensor("float32", (16,), name='bias', scope=tik.scope_cbuf)
    dst_l1out = tik_instance.Tensor("float32", [1, 16, 16], name='dst_l1out', scope=tik.scope_cbuf_out)
    # Move data from the Global Memory to the source operand tensor.
    tik_instance.data_move(feature_map, feature_map_gm, 0, 1, 32, 0, 0)
    tik_instance.data_move(weight, weight_gm, 0, 1, 128, 0, 0)
    tik_instance.data_move(bias, bias_gm, 0, 1, 2, 0, 0)
    # Perform convolution.
    tik_instance.conv2d(dst_l1out, feature_map, weight, [2, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0],
                        [2, 2], 0)
    # Perform bias and quantization using fixpipe.
    tik_instance.fixpipe(dst_gm, dst_l1out, 1, 8, 0, 0, extend_params={"bias": bias, "quantize_params": {
        "mode": "fp322fp16", "mode_param": None}})
    tik_instance.BuildCCE(kernel_name="conv2d", inputs=[feature_map_gm, weight_gm, bias_gm], outputs=[dst_gm])
    out, = tik_instance.tikdb.start_debug({"feature_map_gm": f16_arange(512).reshape(2, 4, 4, 16),
                                           "weight_gm": f16_arange(2048).reshape(2, 2, 2, 16, 16),
                                           "bias_gm": np.arange(16, dtype=np.float32)}, interactive=False)
    printed = np.array([3568., 3614., 3660., 3704., 3750., 3794., 3840., 3884., 3930., 3976., 4020., 4066., 4110.,
                        4156., 4200., 4250.], np.float16)            # the doc's first row, shortest decimals
    np.testing.assert_array_equal(out[0, 0], printed)
    np.testing.assert_array_equal(out[0], GOLDEN_10_2)


def _seed_example_1(burst_len_rows=None):
    """The first fixpipe example of seed 002 (uint8 x int8 conv2d, int322fp16 with an L1 float16 [16]
    deqscale); ``burst_len_rows`` replaces the printed burst_len formula."""
    tik_instance = tik.Tik()
    dtype_size = {"int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "int32": 4, "uint32": 4,
                  "float32": 4, "int64": 8}
    fm_dtype = "uint8"
    ker_dtype = "int8"
    deq_dtype = "float16"
    dst_dtype = "int32"
    fm_shape = [1, 4, 4, 32]
    kernel_shape = [1, 2, 2, 32, 32]
    dst_shape = [2, 9, 16]
    dst_l1_shape = [2, 16, 16]
    deq_shape = [16]
    stride = [1, 1]
    pad = [0, 0, 0, 0]
    dilation = [1, 1]
    pad_value = 0
    feature_map_gm = tik_instance.Tensor(fm_dtype, fm_shape, name='feature_map_gm', scope=tik.scope_gm)
    weight_gm = tik_instance.Tensor(ker_dtype, kernel_shape, name='weight_gm', scope=tik.scope_gm)
    deqscale_gm = tik_instance.Tensor(deq_dtype, deq_shape, name='deqscale_gm', scope=tik.scope_gm)
    dst_gm = tik_instance.Tensor(deq_dtype, dst_shape, name='dst_gm', scope=tik.scope_gm)
    feature_map = tik_instance.Tensor(fm_dtype, fm_shape, name='feature_map', scope=tik.scope_cbuf)
    weight = tik_instance.Tensor(ker_dtype, kernel_shape, name='weight', scope=tik.scope_cbuf)
    deqscale = tik_instance.Tensor(deq_dtype, deq_shape, name='deqscale', scope=tik.scope_cbuf)
    dst_l1out = tik_instance.Tensor(dst_dtype, dst_l1_shape, name='dst_l1out', scope=tik.scope_cbuf_out)
    tik_instance.data_move(feature_map, feature_map_gm, 0, 1, 16, 0, 0)
    tik_instance.data_move(weight, weight_gm, 0, 1, 128, 0, 0)
    tik_instance.data_move(deqscale, deqscale_gm, 0, 1, 1, 0, 0)
    tik_instance.conv2d(dst_l1out, feature_map, weight, fm_shape, kernel_shape, stride, pad, dilation, pad_value)
    cburst_num = dst_l1_shape[0]
    burst_len = dst_l1_shape[1] * 16 * dtype_size[dst_dtype] / 32
    if burst_len_rows is not None:
        burst_len = burst_len_rows * 16 * dtype_size[dst_dtype] // 32
    dst_stride, src_stride = 0, 0
    tik_instance.fixpipe(dst_gm, dst_l1out, cburst_num, burst_len, dst_stride, src_stride,
                         extend_params={"bias": None, "quantize_params": {"mode": "int322fp16",
                                                                          "mode_param": deqscale}})
    tik_instance.BuildCCE(kernel_name="fixpipe", inputs=[feature_map_gm, weight_gm, deqscale_gm],
                          outputs=[dst_gm])
    return tik_instance


def test_seed_002_example_1_as_printed_reports_its_burst_len():
    """As printed, burst_len = dst_l1_shape[1]*16*4/32 = 32 gives 16 rows per block, but dst_gm holds 9:
    the example writes 512 elements into a 288-element tensor. TIK's own check rejects it; we say why."""
    with raises_tik(OutOfBounds, match="for 9 rows pass burst_len = 9\\*16\\*4/32 = 18"):
        _seed_example_1()


def test_seed_002_example_1_with_the_burst_len_of_9_rows():
    ti = _seed_example_1(burst_len_rows=9)
    rng = np.random.default_rng(7)
    fm = rng.integers(0, 6, (1, 4, 4, 32)).astype(np.uint8)
    w = rng.integers(-5, 6, (1, 2, 2, 32, 32)).astype(np.int8)
    dq = np.array([0.1214, -0.2238, 0.5, 0.25, -1.0, 0.0625, 2.0, -0.125, 0.3, 0.7, -0.9, 1.5, 0.01, -0.05, 0.4883,
                   0.2788], np.float16)
    out, = run(ti, {"feature_map_gm": fm, "weight_gm": w, "deqscale_gm": dq})
    # numpy conv2d in exact integers, then f16(x * scale[channel % 16])
    x = fm[0].astype(np.int64)                                          # [H, W, C]
    acc = np.zeros((3, 3, 32), np.int64)
    for kh in range(2):
        for kw in range(2):
            acc += np.einsum("hwc,oc->hwo", x[kh:kh + 3, kw:kw + 3, :], w[0, kh, kw].astype(np.int64))
    conv = acc.reshape(9, 2, 16).transpose(1, 0, 2)                     # [cout_blocks, howo, 16]
    expect = (conv.astype(np.float64) * dq.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(out, expect)
    # and the independent legacy model on the same L0C contents
    l0c = np.zeros((2, 16, 16), np.int32)
    l0c[:, :9, :] = conv
    r = legacy_fixpipe(LegacyTensor(l0c, scope="l0c"), dst_dtype="float16", cburst_num=2, burst_len=18, dst_stride=0,
                       src_stride=0, extend_params={"quantize_params": {
                           "mode": "int322fp16", "mode_param": LegacyTensor(dq, scope="l1")}}, chip="Ascend310")
    np.testing.assert_array_equal(out.reshape(-1), r.values)
    assert ti.fixpipe_calls[0].lowering == "vector"
