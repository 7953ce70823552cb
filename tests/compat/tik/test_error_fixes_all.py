"""Every TIK call the facade refuses says what to do (audit k406): each case below used to end at the rule, with
no ` Fix: ` (found by running the suite with every formatted `PtoError` recorded). Each also names this file's
line, as every TIK error does."""
import pytest

from pto_core.errors import PtoError
from tbe import tik
from tbe_compat.platform import set_current_compile_soc_info

from .helpers import build


def _ti(chip="Ascend310"):
    set_current_compile_soc_info(chip)
    return tik.Tik()


def _ub(ti, dtype="float16", n=256, name="u"):
    return ti.Tensor(dtype, (n,), name=name, scope=tik.scope_ubuf)


def _printf_twice():
    ti = _ti()
    ti.set_printf_params(1, 64)
    ti.set_printf_params(1, 64)


def _pto_ptr_after_build():
    ti = _ti()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    u = _ub(ti, n=16)
    ti.data_move(u, x, 0, 1, 1, 0, 0)
    ti.data_move(y, u, 0, 1, 1, 0, 0)
    build(ti, "done", [x], [y])
    u.pto_ptr()


def _l0c(dtype="float32", chip="Ascend310"):
    ti = _ti(chip)
    return ti, ti.Tensor(dtype, (512,), name="c", scope=tik.scope_cc)


def _conv_relu_mode():
    ti, c = _l0c()
    ti.data_move(_ub(ti, "float32", 512), c, 0, 1, 1, 0, 0, 1)


def _no_deqscale():
    ti, c = _l0c("int32")
    ti.tensor_mov(_ub(ti, "float16", 512), c, 'm', 1, 1, 0, 0)


def _sid_store_mode():
    ti, c = _l0c()
    ti.tensor_mov(_ub(ti, "float32", 512), c, "m", 1, 1, 0, 0, sid_store_mode=ti.Scalar("int32"))


def _quant(param):
    def run():
        ti, c = _l0c("int32")
        p = param(ti) if callable(param) else param
        ti.data_move_quant(_ub(ti, "float16", 512), c, 0, 1, 1, 0, 0, p)
    return run


def _broadcast_one_gap():
    ti, c = _l0c()
    ti.broadcast_ub_to_l0c(c, _ub(ti, "float32", 512), 2, 2, 0)


def _rsvd_scalar():
    ti = _ti("Ascend910B1")
    ti.vreducev2(128, _ub(ti, name="d"), _ub(ti, name="x"), 1, 1, 1, 8, 0, ti.Scalar("int32"))


def _expm1_work():
    ti = _ti()
    a, b, w = _ub(ti, name="a"), _ub(ti, name="b"), _ub(ti, "float32", 11 * 256, name="w")
    ti.vec_expm1_high_preci(128, a, b, w, 1, 8, 8)


def _h_cmpv_mask():
    ti = _ti()
    ti.h_cmpv(_ub(ti, name="d"), _ub(ti, name="a"), _ub(ti, name="b"), "LT")


CASES = [
    ("TensorAddrList set_as int32", lambda: _ti().TensorAddrList(4, scope="local.UB", name="a")[0].set_as(
        tik.Tik().Scalar("int32")), "int64 Scalar"),
    ("set_printf_params twice", _printf_twice, "call set_printf_params once"),
    ("print_workspace_size float", lambda: _ti().set_printf_params(1.5), "print_workspace_size as a Python int"),
    ("printf_file_path empty", lambda: _ti().set_printf_params(1, 64, True, ""), "printf_file_path=None"),
    ("printf too long", lambda: _ti().printf("z" * 129), "several printf calls"),
    ("countbit1 int32 dst", lambda: (lambda ti: ti.scalar_countbit1(ti.Scalar("int32"), 5))(_ti()),
     "uint64 Scalar"),
    ("pto_ptr after build", _pto_ptr_after_build, "before BuildCCE"),
    ("ConvReluMode types", _conv_relu_mode, "declare src f32 and dst f16"),
    ("tensor_mov no deqscale", _no_deqscale, "pass deqscale=<scale>"),
    ("tensor_mov sid_store_mode", _sid_store_mode, "pass sid_store_mode=0"),
    ("data_move_quant no quant_param", _quant(None), "e.g. 1.0 (one scale)"),
    ("data_move_quant f32 Scalar", _quant(lambda ti: ti.Scalar("float32", init_value=1.0)),
     "declare the quant_param Scalar as float16"),
    ("broadcast_ub_to_l0c one gap", _broadcast_one_gap, "src_gap, dst_gap)"),
    ("vreducev2 rsvd_scalar dtype", _rsvd_scalar, 'tik_instance.Scalar("uint32")'),
    ("expm1 work_tensor dtype", _expm1_work, "declare work_tensor float16"),
    ("h_cmpv mask dtype", _h_cmpv_mask, "mask_tensor with dtype \"bool\""),
    ("start_addr past the end", lambda: _ti().Tensor("float16", (16,), name="t", scope=tik.scope_ubuf,
                                                     start_addr=256 * 1024 - 32), "start_addr at most"),
    ("BuildCCE inputs not a list", lambda: (lambda ti: ti.BuildCCE(kernel_name="k", inputs=5, outputs=[]))(_ti()),
     "inputs=[t0, t1, ...]"),
]


@pytest.mark.parametrize("name,call,fix", CASES, ids=[c[0] for c in CASES])
def test_tik_error_states_a_fix(name, call, fix):
    try:
        with pytest.raises(PtoError) as e:
            call()
    finally:
        set_current_compile_soc_info("Ascend310")
    text = str(e.value)
    assert " Fix: " in text and fix in text.split(" Fix: ", 1)[1], text
    assert "test_error_fixes_all.py:" in text, text
    assert isinstance(e.value, SystemExit) and isinstance(e.value, RuntimeError)
