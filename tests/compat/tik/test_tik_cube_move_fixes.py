"""Refusals of the cube data moves found by the h_fuzz405 random-kernel fuzzer: mmad's bias_tensor is checked
against matrix_n like matmul's bias (it read past a short tensor), and every refusal of the L0C moves, the loads,
broadcast_ub_to_l0c and fixpipe names the argument, the user's line and says what to do (a Fix; 16 had none)."""
import re

import numpy as np
import pytest

from pto_core.errors import OutOfBounds, PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik, run


def _tensors(chip="Ascend310P3"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    T = dict(ti=ti)
    for name, dt, n, scope in (("u16", "float16", 1024, tik.scope_ubuf), ("u32", "float32", 1024, tik.scope_ubuf),
                               ("u8", "int8", 2048, tik.scope_ubuf), ("c32", "float32", 1024, tik.scope_cbuf_out),
                               ("ci32", "int32", 1024, tik.scope_cbuf_out), ("l1", "float16", 2048, tik.scope_cbuf),
                               ("l1_8", "int8", 2048, tik.scope_cbuf), ("a16", "float16", 1024, tik.scope_ca),
                               ("g32", "float32", 1024, tik.scope_gm), ("g16", "float16", 1024, tik.scope_gm)):
        T[name] = ti.Tensor(dt, (n,), name=name, scope=scope)
    return T


def _l3v1(T, dst, src, **over):
    a = dict(pad=[0, 0, 0, 0], l1_h=8, l1_w=8, c1_index=0, fetch_filter_w=0, fetch_filter_h=0, left_top_w=0,
             left_top_h=0, stride_w=1, stride_h=1, filter_w=3, filter_h=3, dilation_filter_w=1, dilation_filter_h=1,
             jump_offset=1, repeat_mode=0, repeat_time=1, _csize=0, pad_value=0)
    a.update(over)
    T["ti"].load3dv1(T[dst], T[src], *a.values())


def _fixpipe_atomic(T):
    T["ti"].set_atomic_add("float16")
    T["ti"].fixpipe(T["g32"], T["c32"], 1, 2, 0, 0)


CASES = {
    "data_move 9 positional": ("args", lambda T: T["ti"].data_move(T["u32"], T["c32"], 0, 1, 1, 0, 0, 0, 0)),
    "data_move unknown keyword": ("foo", lambda T: T["ti"].data_move(T["u32"], T["c32"], 0, 1, 1, 0, 0, foo=1)),
    "tensor_mov L0C pad_value": ("pad_value", lambda T: T["ti"].tensor_mov(T["u32"], T["c32"], "m", 1, 1, 0, 0,
                                                                           pad_value=1)),
    "tensor_mov L0C onthefly_mode": ("onthefly_mode", lambda T: T["ti"].tensor_mov(T["u32"], T["c32"], "m", 1, 1, 0,
                                                                                   0, onthefly_mode=1)),
    "data_move_quant without quant_param": ("quant_param", lambda T: T["ti"].data_move_quant(
        T["u16"], T["ci32"], 0, 1, 1, 0, 0, None)),
    "block mode v into L0C": ("block_mode", lambda T: T["ti"].tensor_mov(T["c32"], T["u32"], "v", 1, 1, 0, 0)),
    "ConvReluMode of other dtypes": ("ConvReluMode", lambda T: T["ti"].data_move(T["u16"], T["c32"], 0, 1, 1, 0, 0,
                                                                                 4)),
    "int32 -> float16 without deqscale": ("deqscale", lambda T: T["ti"].tensor_mov(T["u16"], T["ci32"], "m", 1, 1, 0,
                                                                                    0)),
    "deqscale on float32 -> float32": ("deqscale", lambda T: T["ti"].tensor_mov(T["u32"], T["c32"], "m", 1, 1, 0, 0,
                                                                                deqscale=0.5)),
    "relu into L0C": ("relu", lambda T: T["ti"].tensor_mov(T["c32"], T["u32"], "m", 1, 1, 0, 0, relu=True)),
    "float32 Scalar deqscale": ("deqscale", lambda T: T["ti"].tensor_mov(
        T["u16"], T["ci32"], "m", 1, 1, 0, 0, deqscale=T["ti"].Scalar("float32", init_value=0.5))),
    "string deqscale": ("deqscale", lambda T: T["ti"].tensor_mov(T["u16"], T["ci32"], "m", 1, 1, 0, 0,
                                                                 deqscale="0.5")),
    "load2dv2 element sizes": ("dst", lambda T: T["ti"].load2dv2(T["a16"], T["l1_8"], 0, 1, 0, 1, 0)),
    "load3dv1 _csize=1 of int8": ("_csize", lambda T: _l3v1(T, "u8", "l1_8", _csize=1)),
    "broadcast_ub_to_l0c one gap": ("strides", lambda T: T["ti"].broadcast_ub_to_l0c(T["c32"], T["u32"], 1, 1, 0)),
    "fixpipe atomic mode of another dtype": ("dst", _fixpipe_atomic),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_cube_move_refusals_name_the_argument_line_and_a_fix(case):
    operand, call = CASES[case]
    T = _tensors("Ascend910B1" if case.startswith("fixpipe atomic") else "Ascend310P3")
    with raises_tik(PtoError) as info:
        call(T)
    msg = str(info.value)
    assert f"operand {operand}:" in msg, msg
    assert "Fix: " in msg, msg
    assert re.search(r"test_tik_cube_move_fixes\.py:\d+ in `tik\.", msg), msg     # the user's line


def _mmad_bias_kernel(nbias, n=16):
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    ga = ti.Tensor("float16", (256,), name="ga", scope=tik.scope_gm)
    gb = ti.Tensor("float16", (256,), name="gb", scope=tik.scope_gm)
    gbias = ti.Tensor("float32", (nbias,), name="gbias", scope=tik.scope_gm)
    out = ti.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    la = ti.Tensor("float16", (256,), name="la", scope=tik.scope_cbuf)
    lb = ti.Tensor("float16", (256,), name="lb", scope=tik.scope_cbuf)
    bias = ti.Tensor("float32", (nbias,), name="bias", scope=tik.scope_cbuf)
    a0 = ti.Tensor("float16", (256,), name="a0", scope=tik.scope_ca)
    b0 = ti.Tensor("float16", (256,), name="b0", scope=tik.scope_cb)
    c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cbuf_out)
    ti.data_move(la, ga, 0, 1, 16, 0, 0)
    ti.data_move(lb, gb, 0, 1, 16, 0, 0)
    ti.data_move(bias, gbias, 0, 1, -(-nbias // 8), 0, 0)
    ti.load2dv2(a0, la, 0, 1, 0, 1, 0)
    ti.load2dv2(b0, lb, 0, 1, 0, 1, 0)
    ti.mmad(c, a0, b0, 16, 16, n, 0, bias_tensor=bias)
    ti.fixpipe(out, c, 1, 32, 0, 0)
    ti.BuildCCE("mb", [ga, gb, gbias], [out])
    return ti


def test_mmad_bias_tensor_shorter_than_matrix_n_is_an_overflow_at_the_call():
    with raises_tik(OutOfBounds) as info:
        _mmad_bias_kernel(8)
    msg = str(info.value)
    assert "operand bias_tensor:" in msg and "16 bias values" in msg and "Fix: " in msg, msg
    assert "test_tik_cube_move_fixes.py:" in msg and "in `tik.mmad`" in msg, msg


def test_mmad_bias_tensor_of_matrix_n_values_is_added_per_column():
    ti = _mmad_bias_kernel(16)
    rng = np.random.default_rng(5)
    A = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    B = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    bias = rng.integers(-50, 50, 16).astype(np.float32)
    # L0A fractal [16 m, 16 k]; L0B fractal [16 n, 16 k] (tik_api.md §8.0); L0C [1, 16, 16]
    out, = run(ti, {"ga": A.reshape(-1), "gb": B.T.copy().reshape(-1), "gbias": bias})
    want = A.astype(np.float64) @ B.astype(np.float64) + bias[None, :]
    np.testing.assert_array_equal(out.reshape(16, 16), want.astype(np.float32))


# ----------------------------------------------------------------------------- img2col map size (FMATRIX_MAX_HW)


def _tall_map_kernel(api, h, pick):
    """A 1-pixel-wide float16 map of h rows (16 channels); the img2col block starting at output pixel ``pick``
    (1 x 1 kernel: pixel p = row p) is moved to GM."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (h * 16,), name="g", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (h * 16,), name="l1", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(l1, g, 0, 1, h, 0, 0)
    if api == "load3dv2":
        ti.load3dv2(u, l1, [0, 0, 0, 0], h, 1, 16, 16, 16, 0, pick, 1, 1, 1, 1, 1, 1)
    else:
        ti.load3dv1(u, l1, [0, 0, 0, 0], h, 1, 0, 0, 0, 0, pick, 1, 1, 1, 1, 1, 1, 1, 0, 1)
    ti.data_move(out, u, 0, 1, 16, 0, 0)
    ti.BuildCCE("tall", [g], [out])
    return ti


@pytest.mark.parametrize("api", ["load3dv2", "load3dv1"])
def test_img2col_of_a_map_taller_than_4096_rows_runs(api):
    """TIK takes l1_h / l1_w in [1, 32767]; pto.img2col refused maps over 4096 rows when the kernel ran."""
    h, pick = 5000, 4896                   # a multiple of 16: load3dv2 m_start_pt (TIK _load3dv2_check)
    x = (np.arange(h * 16) % 2039).astype(np.float16)
    out, = run(_tall_map_kernel(api, h, pick), {"g": x})
    np.testing.assert_array_equal(out.reshape(16, 16), x.reshape(h, 16)[pick:pick + 16])


def test_img2col_map_size_limit_is_the_tik_one():
    with raises_tik(PtoError, match=r"operand l1_h: l1_h = 32768 is outside \[1, 32767\]"):
        _tall_map_kernel("load3dv2", 32768, 0)


def _runtime_arg_kernel(call):
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (2048,), name="g", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (2048,), name="l1", scope=tik.scope_cbuf)
    u = ti.Tensor("float16", (2048,), name="u", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (2048,), name="out", scope=tik.scope_gm)
    ti.data_move(l1, g, 0, 1, 128, 0, 0)
    ti.data_move(u, g, 0, 1, 128, 0, 0)
    call(ti, u, l1, lambda v: ti.Scalar("int32", init_value=v))
    ti.data_move(out, u, 0, 1, 128, 0, 0)
    ti.BuildCCE("rt", [g], [out])
    return ti


RUNTIME_CASES = {
    "load3dv2 l1_h": ("l1_h", lambda ti, u, l1, S: ti.load3dv2(u, l1, [0, 0, 0, 0], S(0), 8, 16, 16, 16, 0, 0,
                                                                1, 1, 1, 1, 1, 1)),
    "load3dv2 l1_w": ("l1_w", lambda ti, u, l1, S: ti.load3dv2(u, l1, [0, 0, 0, 0], 8, S(40000), 16, 16, 16, 0, 0,
                                                                1, 1, 1, 1, 1, 1)),
    "load3dv2 k_extension": ("k_extension", lambda ti, u, l1, S: ti.load3dv2(u, l1, [0, 0, 0, 0], 8, 8, 16, S(24),
                                                                              16, 0, 0, 1, 1, 1, 1, 1, 1)),
    "load3dv2 m_extension": ("m_extension", lambda ti, u, l1, S: ti.load3dv2(u, l1, [0, 0, 0, 0], 8, 8, 16, 16,
                                                                              S(72), 0, 0, 1, 1, 1, 1, 1, 1)),
    "load3dv2 k_start_pt": ("k_start_pt", lambda ti, u, l1, S: ti.load3dv2(u, l1, [0, 0, 0, 0], 8, 8, 32, 16, 16,
                                                                            S(8), 0, 1, 1, 1, 1, 1, 1)),
    "load3dv1 l1_w": ("l1_w", lambda ti, u, l1, S: ti.load3dv1(u, l1, [0, 0, 0, 0], 8, S(0), 0, 0, 0, 0, 0, 1, 1,
                                                                1, 1, 1, 1, 1, 0, 1)),
    "col2img l1_h": ("l1_h", lambda ti, u, l1, S: ti.col2img(u, u[1024:], [0, 0, 0, 0], S(0), 4, 0, 0, 0, 0, 1, 1,
                                                              3, 3, 1, 1, 1)),
}


@pytest.mark.parametrize("case", sorted(RUNTIME_CASES))
def test_runtime_img2col_arguments_are_checked_under_their_tik_names(case):
    """A Scalar l1_h / l1_w / k_extension / m_extension / k_start_pt out of range (or off a fractal) stops the run
    naming the TIK argument at the call's line (it named pto.img2col's operand: %fm_h, %k_ext, ...)."""
    name, call = RUNTIME_CASES[case]
    ti = _runtime_arg_kernel(call)
    with raises_tik(PtoError) as info:
        run(ti, {"g": np.ones(2048, np.float16)})
    msg = str(info.value)
    assert f"{name} " in msg and "%" not in msg.split(" Fix:")[0], msg
    assert re.search(r"test_tik_cube_move_fixes\.py:\d+ in `tik\.", msg) and "Fix: " in msg, msg


@pytest.mark.parametrize("case,fix", [("load3dv2 l1_h", "pass l1_h between 1 and 32767"),
                                      ("load3dv2 l1_w", "pass l1_w between 1 and 32767")])
def test_runtime_range_refusals_name_the_range_in_the_fix(case, fix):
    """A TIK-valued argument out of its range when the kernel runs got the generic Fix "check the value the
    kernel computed"; it now names the range, as the same value given as an int does (regress412)."""
    _, call = RUNTIME_CASES[case]
    with raises_tik(PtoError) as info:
        run(_runtime_arg_kernel(call), {"g": np.ones(2048, np.float16)})
    assert f"Fix: {fix} (the value the kernel computed" in str(info.value), str(info.value)
