"""Wording of user-facing errors (audit h_msg105): each message names the TIK argument as the user wrote it,
says what was wrong and gives a fix that is right for that case -- no PTO-internal op or operand names
(``pto.assert_in_range``, ``%src``) in a TIK user's error, no missing or misleading "Fix:"."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

HERE = __file__


def _ti(chip="Ascend910B1"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (256,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    return ti, x, y, ub


def _run(ti, x, y):
    build(ti, "k", [x], [y])
    run(ti, {"x": np.ones(256, np.float16)})


def test_run_time_check_failures_do_not_name_the_internal_assert_op():
    ti, x, y, ub = _ti()
    ti.data_move(ub, x, 0, ti.Scalar("int32", init_value=0), 1, 0, 0)
    with raises_tik(PtoError) as e:
        _run(ti, x, y)
    text = str(e.value)
    assert "pto.assert_in_range" not in text and "lowered from" not in text, text
    assert "nburst of tik.data_move (bursts) = 0 is outside [1, 4095]" in text and "Fix:" in text


def test_out_of_tensor_run_time_index_says_how_big_the_tensor_is():
    ti, x, y, ub = _ti()
    ub[ti.Scalar("int32", init_value=-16)].set_as(1.0)
    with raises_tik(PtoError) as e:
        _run(ti, x, y)
    assert "starts 16 elements before the tensor (of 256 elements)" in str(e.value), str(e.value)
    assert "(limit: 256)" not in str(e.value)


def test_pto_operand_of_a_lowered_op_is_named_as_the_tik_argument():
    ti, x, y, ub = _ti()
    ti.data_move(ub, x[ti.Scalar("int32", init_value=300)], 0, 1, 1, 0, 0)
    with raises_tik(PtoError) as e:
        _run(ti, x, y)
    assert e.value.operand == "src" and "operand src:" in str(e.value) and "%src" not in str(e.value)
    assert "loop or core index can run past its end" in e.value.hint


def test_multi_core_loop_rules_come_with_a_fix():
    ti, *_ = _ti()
    with raises_tik(PtoError, match=r"must start at 0 Fix: write for_range\(0, n, block_num=n\)"):
        with ti.for_range(1, 4, block_num=4):
            pass
    with raises_tik(PtoError, match=r"endt 4 != block_num 2 .*Fix: write for_range\(0, 2, block_num=2\)"):
        with ti.for_range(0, 4, block_num=2):
            pass
    with raises_tik(PtoError, match=r"got 2 Fix: drop thread_num from the block_num loop"):
        with ti.for_range(0, 2, block_num=2, thread_num=2):
            pass


def test_loop_variable_outside_its_loop_gives_the_tik_fix_too():
    ti, x, y, ub = _ti()
    with ti.for_range(0, 4) as i:
        pass
    with raises_tik(PtoError) as e:
        ti.vector_dup(128, ub[i * 16], 1.0, 1, 1, 8)
    assert "is used outside its loop" in str(e.value)
    assert "TIK: s = tik_instance.Scalar('int32'); s.set_as(i)" in e.value.hint, e.value.hint


def test_argument_errors_that_had_no_fix():
    ti, x, y, ub = _ti()
    ub32 = ti.Tensor("float32", (64,), name="ub32", scope=tik.scope_ubuf)
    with raises_tik(PtoError, match=r"Fix: drop deqscale \(deqscale=None\)"):
        ti.vconv(64, "", ub32, ub, 1, 1, 1, 8, 4, deqscale=1.0)
    with raises_tik(PtoError, match=r"Fix: declare dst \(and src\) as int64 or float32 Scalars"):
        ti.scalar_sqrt(ti.Scalar("int32"), ti.Scalar("int32", init_value=4))


def test_cube_argument_errors_that_had_no_fix_or_a_generic_one():
    ti, x, y, ub = _ti()
    l1a = ti.Tensor("float16", (16, 16, 16), name="l1a", scope=tik.scope_cbuf)
    l1b = ti.Tensor("float16", (16, 16, 16), name="l1b", scope=tik.scope_cbuf)
    l0c = ti.Tensor("float32", (16, 16, 16), name="l0c", scope=tik.scope_cc)
    gm32 = ti.Tensor("float32", (256,), name="gm32", scope=tik.scope_gm)
    with raises_tik(PtoError, match=r"Fix: pass init_l1out=True or init_l1out=False"):
        ti.matmul(l0c, l1a, l1b, 16, 16, 16, init_l1out="yes")
    with raises_tik(PtoError, match=r"declare both with one Cin"):
        ti.conv2d(l0c, l1a, l1b, [1, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1])
    ti.data_move(l1a, x, 0, 1, 16, 0, 0)
    ti.data_move(l1b, x, 0, 1, 16, 0, 0)
    ti.matmul(l0c, l1a, l1b, 16, 16, 16)
    with raises_tik(PtoError, match=r"Fix: pass extend_params=\{'relu': True\}"):
        ti.fixpipe(gm32, l0c, 1, 32, 0, 0, extend_params={"relu": 1})
    with raises_tik(PtoError, match=r"Fix: pass \{'mode': 'fp322fp16', 'mode_param': None\}"):
        ti.fixpipe(y, l0c, 1, 16, 0, 0, extend_params={"quantize_params": {"mode": "fp322fp16"}})


def test_conv2d_shape_and_load2d_transpose_errors_come_with_a_fix():
    """h_cube119: these range/shape errors named the limit but said nothing about what to do."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    fm8 = ti.Tensor("int8", (1, 5, 5, 16), name="fm8", scope=tik.scope_cbuf)
    w8 = ti.Tensor("int8", (1, 3, 3, 16, 16), name="w8", scope=tik.scope_cbuf)
    fm = ti.Tensor("float16", (257, 1, 1, 16), name="fm", scope=tik.scope_cbuf)
    w = ti.Tensor("float16", (257, 1, 1, 16, 16), name="w", scope=tik.scope_cbuf)
    l0c = ti.Tensor("int32", (1, 32, 16), name="l0c", scope=tik.scope_cc)
    f0c = ti.Tensor("float32", (1, 32, 16), name="f0c", scope=tik.scope_cc)
    with raises_tik(PtoError, match=r"fm_shape C0 = 16 does not match int8.*Fix: declare the feature map \[C1, H, W, 32\]"):
        ti.conv2d(l0c, fm8, w8, [1, 5, 5, 16], [1, 3, 3, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1])
    with raises_tik(PtoError, match=r"C1 = 257 .*Fix: split the input channels"):
        ti.conv2d(f0c, fm, w, [257, 1, 1, 16], [257, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1])
    l1 = ti.Tensor("int8", (4096,), name="l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("int8", (4096,), name="l0a", scope=tik.scope_ca)
    with raises_tik(PtoError, match=r"not int8.*Fix: pass if_transpose=False"):
        ti.load2dv1(l0a, l1, 0, 1, 1, 0, True)


def test_load3dv1_fetch_position_names_the_argument_and_its_range():
    ti, x, y, ub = _ti("Ascend910")
    l1a = ti.Tensor("float16", (16, 16, 16), name="l1a", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (16, 16, 16), name="l0a", scope=tik.scope_ca)
    ti.data_move(l1a, x, 0, 1, 16, 0, 0)
    with raises_tik(PtoError) as e:
        ti.load3dv1(l0a, l1a, [0, 0, 0, 0], 4, 4, 0, 0, 3, 0, 0, 1, 1, 2, 2, 1, 1, 1, 0, 1)
    assert e.value.operand == "fetch_filter_h", e.value
    assert "(fetch_filter_h, fetch_filter_w) = (3, 0)" in str(e.value)
    assert e.value.hint.startswith("pass fetch_filter_w in [0, 1] and fetch_filter_h in [0, 1]")


def test_set_as_on_a_loop_variable_or_an_expression_is_a_clear_error():
    """A for_range index and an expression are not registers (was a bare AttributeError: 'Expr' object has no
    attribute 'set_as')."""
    ti = tik.Tik()
    s = ti.Scalar("int32", init_value=1)
    with ti.for_range(0, 4) as i:
        with raises_tik(IllegalOperand, match=r"is a for_range loop variable, which cannot be assigned") as info:
            i.set_as(3)
    assert f"{HERE}:" in str(info.value) and "tik_instance.Scalar" in str(info.value.hint)
    with raises_tik(IllegalOperand, match=r"is an expression, which cannot be assigned"):
        (s + 1).set_as(2)


def test_load3d_int_pad_value_and_load2dv2_gm_transpose_errors_come_with_a_fix():
    """h_cube122: an out-of-range integer pad_value and if_transpose on a GM source named the problem
    but not what to do."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    fm8 = ti.Tensor("int8", (1, 4, 4, 32), name="fm8", scope=tik.scope_cbuf)
    ub8 = ti.Tensor("int8", (512,), name="ub8", scope=tik.scope_ubuf)
    with raises_tik(PtoError, match=r"pad_value 300 is not a int8 value.*Fix: pass pad_value as an integer in \[-128, 127\]"):
        ti.load3dv1(ub8, fm8, [0, 0, 0, 0], 4, 4, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 300)
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    gm = ti.Tensor("float16", (256,), name="gm", scope=tik.scope_gm)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    with raises_tik(PtoError, match=r"transpose applies to L1 -> L0A/L0B loads only.*Fix: move the fractals to L1 first"):
        ti.load2dv2(l0a, gm, 0, 1, 0, 1, 0, True)


def test_fixpipe_and_cube_bias_restrictions_come_with_a_fix():
    """h_sem237: the documented fixpipe / matmul / conv2d restrictions (tik_api.md 8.2-8.4) named the limit
    but said nothing about what to do."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    s32 = ti.Tensor("float32", (2, 16, 16), name="s32", scope=tik.scope_cbuf_out)
    i32 = ti.Tensor("int32", (2, 16, 16), name="i32", scope=tik.scope_cbuf_out)
    d32 = ti.Tensor("float32", (2, 16, 16), name="d32", scope=tik.scope_gm)
    d16 = ti.Tensor("float16", (2, 16, 16), name="d16", scope=tik.scope_gm)
    b = ti.Tensor("float32", (32,), name="b", scope=tik.scope_cbuf)
    b16 = ti.Tensor("float16", (32,), name="b16", scope=tik.scope_cbuf)
    e = ti.Tensor("float32", (2, 16, 16), name="e", scope=tik.scope_cbuf)
    ie = ti.Tensor("int32", (2, 16, 16), name="ie", scope=tik.scope_cbuf)
    sc = ti.Tensor("float16", (16,), name="sc", scope=tik.scope_cbuf)
    sc32 = ti.Tensor("float32", (16,), name="sc32", scope=tik.scope_cbuf)
    f32s = ti.Scalar("float32", init_value=0.5)
    cases = [
        (d32, s32, {"bias": b, "element-wise-add": e}, r"cannot be enabled together .*Fix: keep one of them"),
        (d32, s32, {"quantize_params": {"mode": "fp322fp16", "mode_param": None}}, r"Fix: pass quantize_params=None"),
        (d16, s32, {"quantize_params": {"mode": "int322fp16", "mode_param": 1.0}}, r"Fix: mode 'fp322fp16' needs"),
        (d32, s32, {"bias": b, "relu": True}, r"disabled .*Fix: drop 'relu'"),
        (d32, s32, {"element-wise-add": e, "relu": True}, r"disabled .*Fix: drop 'relu'"),
        (d16, i32, {"element-wise-add": ie, "quantize_params": {"mode": "int322fp16", "mode_param": sc}},
         r"Fix: pass a float immediate or a float16 Scalar"),
        (d16, s32, {"quantize_params": {"mode": "fp322fp16", "mode_param": 1.0}}, r"Fix: pass 'mode_param': None"),
        (d32, s32, {"bias": b16}, r"Fix: declare bias as float32"),
        (d16, i32, {"quantize_params": {"mode": "int322fp16", "mode_param": sc32}}, r"Fix: declare the scale tensor"),
        (d16, i32, {"quantize_params": {"mode": "int322fp16", "mode_param": f32s}}, r"Fix: declare the Scalar float16"),
        (d16, i32, {"quantize_params": {"mode": "int322fp16", "mode_param": None}}, r"Fix: pass a scale"),
    ]
    for dst, src, ext, pat in cases:
        with raises_tik(PtoError, match=pat) as info:
            ti.fixpipe(dst, src, 2, 32, 0, 0, extend_params=ext)
        assert HERE in str(info.value), str(info.value)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a = ti.Tensor("float16", (1, 16, 16), name="a", scope=tik.scope_cbuf)
    w = ti.Tensor("float16", (1, 1, 1, 16, 16), name="w", scope=tik.scope_cbuf)
    fm = ti.Tensor("float16", (1, 4, 4, 16), name="fm", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    bias = ti.Tensor("float32", (16,), name="bias", scope=tik.scope_cbuf)
    bias16 = ti.Tensor("float16", (16,), name="bias16", scope=tik.scope_cbuf)
    with raises_tik(PtoError, match=r"requires init_l1out=True .*Fix: pass the bias only on the first"):
        ti.matmul(c, a, a, 16, 16, 16, init_l1out=False, bias=bias)
    with raises_tik(PtoError, match=r"requires init_l1out=True .*Fix: pass the bias only on the first"):
        ti.conv2d(c, fm, w, [1, 4, 4, 16], [1, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], 0, init_l1out=False,
                  bias=bias)
    with raises_tik(PtoError, match=r"Fix: declare bias float32"):
        ti.matmul(c, a, a, 16, 16, 16, bias=bias16)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    with raises_tik(PtoError, match=r"Fix: declare bias_tensor float32"):
        ti.mmad(c, l0a, l0b, 16, 16, 16, 0, bias_tensor=bias16)


def test_cube_dtype_and_hisi_scale_errors_come_with_a_fix():
    """h_fuzz318 (cube fuzzer): three cube restrictions named the rule but gave no Fix: matmul with a and b of
    different dtypes, a C0 = 4 conv2d map that is not float16 with C1 = 1, and the float16 [16] scale tensor
    on Hi3796CV300CS/SD3403 (whose tensor form is float32 [2*Cout])."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    a = ti.Tensor("uint8", (1, 16, 32), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("int8", (1, 16, 32), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("int32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    with raises_tik(PtoError, match=r"same dtype .*Fix: declare a and b with one dtype") as info:
        ti.matmul(c, a, b, 16, 32, 16)
    assert HERE in str(info.value)
    fm = ti.Tensor("int8", (1, 4, 4, 4), name="fm", scope=tik.scope_cbuf)
    w = ti.Tensor("int8", (1, 1, 1, 16, 4), name="w", scope=tik.scope_cbuf)
    with raises_tik(PtoError, match=r"C0 = 4 .*Fix: use C0 = 4 only for a float16 map") as info:
        ti.conv2d(c, fm, w, [1, 4, 4, 4], [1, 1, 1, 16, 4], [1, 1], [0, 0, 0, 0], [1, 1], 0)
    assert HERE in str(info.value)
    set_current_compile_soc_info("Hi3796CV300CS")
    ti = tik.Tik()
    src = ti.Tensor("int32", (1, 16, 16), name="src", scope=tik.scope_cbuf_out)
    dst = ti.Tensor("float16", (1, 16, 16), name="dst", scope=tik.scope_gm)
    sc = ti.Tensor("float16", (16,), name="sc", scope=tik.scope_cbuf)
    with raises_tik(PtoError, match=r"must be float32 .*Fix: use a float immediate or a float16 Scalar") as info:
        ti.fixpipe(dst, src, 1, 32, 0, 0, extend_params={"quantize_params": {"mode": "int322fp16", "mode_param": sc}})
    assert HERE in str(info.value)


@pytest.mark.parametrize("chip,has,mmad", [("Ascend910", "int8 -> int32, float16 -> float32)", True),
                                           ("Ascend310B1", "int8 -> int32, float16 -> float32, float32 -> float32)",
                                            False),
                                           ("Hi3796CV300CS", "int8 -> int32, float16 -> float16)", True)])
def test_matmul_dtype_mismatch_fix_is_true_for_the_chip(chip, has, mmad):
    """The Fix of a matmul with a uint8 a and an int8 b lists the dtypes tik.matmul takes on the chip (it said
    'convert b to uint8', a dtype no chip's matmul takes) and names tik.mmad only where the cube has u8s8s32
    (not Ascend310B)."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    a = ti.Tensor("uint8", (1, 16, 32), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("int8", (1, 16, 32), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("int32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    with raises_tik(PtoError, match=r"same dtype") as info:
        ti.matmul(c, a, b, 16, 32, 16)
    text = str(info.value)
    assert HERE in text and has in text and "convert b to uint8" not in text
    assert ("tik.mmad (u8s8s32)" in text) == mmad
