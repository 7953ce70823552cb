"""Vector-convert patterns of CANN's dynamic roi_align (h_dyn146), with our own minimal kernels: the
kernel's float -> int32 ``floor`` with a source repeat stride of 4 blocks (for float32 the second repeat
overlaps the first: it reads elements 32..95), and its int32 -> float16 convert whose destination repeat
stride of 8 blocks (128 float16 elements) runs past a 128-element tensor: with static operands TIK's
own check refuses it at the call ("dst tensor overflow"), with run-time ones the run stops there."""
import numpy as np
import pytest

from pto_core.errors import OutOfBounds
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run


def _floor_kernel(dtype, src_stride):
    ti = tik.Tik()
    x = ti.Tensor(dtype, (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (128,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor(dtype, (128,), name="xu", scope=tik.scope_ubuf)
    yu = ti.Tensor("int32", (128,), name="yu", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 128 * np.dtype(dtype).itemsize // 32, 0, 0)
    ti.vec_conv(64, "floor", yu, xu, 2, 8, src_stride)
    ti.data_move(y, yu, 0, 1, 16, 0, 0)
    return build(ti, "floor_stride", [x], [y])


@pytest.mark.parametrize("soc", ["Ascend910", "Ascend910B1"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_floor_convert_with_a_source_stride_of_four_blocks(soc, dtype):
    set_current_compile_soc_info(soc)
    x = (np.arange(128) * 0.75 - 20.3).astype(dtype)
    out, = run(_floor_kernel(dtype, 4), {"x": x})
    per_block = 32 // np.dtype(dtype).itemsize
    src = np.concatenate([x[:64], x[4 * per_block:4 * per_block + 64]])  # repeat 1 starts 4 blocks in
    assert np.array_equal(out, np.floor(src.astype(np.float64)).astype(np.int32))


def _s32_f16_kernel(repeat):
    ti = tik.Tik()
    x = ti.Tensor("int32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("int32", (128,), name="xu", scope=tik.scope_ubuf)
    tmp = ti.Tensor("float16", (128,), name="tmp", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 16, 0, 0)
    ti.vec_conv(64, "", tmp, xu, repeat, 8, 8)       # 8 blocks = 128 float16: repeat 1 writes [128, 192)
    ti.data_move(y, tmp, 0, 1, 8, 0, 0)
    return build(ti, "s32_f16_stride", [x], [y])


def test_int32_to_float16_destination_stride_past_the_tensor_is_refused_at_the_call():
    set_current_compile_soc_info("Ascend910")
    with raises_tik(OutOfBounds, match=r"test_roi_align_patterns.py:\d+ in `tik.vec_conv`: operand dst: dst tensor "
                                       r"overflow, expected elements nums: 192, actual elements nums: 128 "
                                       r"\(tensor 'tmp'\)"):
        _s32_f16_kernel(2)


def test_int32_to_float16_destination_stride_past_the_tensor_at_run_time_stops_at_the_line():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("int32", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("int32", (128,), name="xu", scope=tik.scope_ubuf)
    tmp = ti.Tensor("float16", (128,), name="tmp", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 16, 0, 0)
    ti.vec_conv(64, "", tmp, xu, n, 8, 8)
    ti.data_move(y, tmp, 0, 1, 8, 0, 0)
    ti.BuildCCE(kernel_name="s32_f16_rt", inputs=[x, n], outputs=[y])
    with pytest.raises(OutOfBounds, match=r"test_roi_align_patterns.py:\d+ in `tik.vec_conv`: tensor overflow: dst "
                                          r"\(tensor 'tmp'\) needs elements \[0, 192\) but the tensor has only 128"):
        run(ti, {"x": np.arange(128, dtype=np.int32), "n": 2})
    out, = run(ti, {"x": np.arange(128, dtype=np.int32), "n": 1})
    assert np.array_equal(out[:64], np.arange(64, dtype=np.float16))
