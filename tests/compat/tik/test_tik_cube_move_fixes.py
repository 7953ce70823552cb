"""Refusals of the cube data moves found by the h_fuzz405 random-kernel fuzzer: mmad's bias_tensor is checked
against matrix_n like matmul's bias (it read past a short tensor)."""
import numpy as np

from pto_core.errors import OutOfBounds
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik, run


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
