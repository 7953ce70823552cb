"""Bool-typed TIK options (h_fix322): ``np.True_`` / ``np.False_`` and 0-d bool arrays are honoured exactly as
True / False (one helper, `TikBase._bool_arg` / `static_bool`); ints, Scalars and other values are refused
naming the argument, the user's line and a Fix (tik_api.md types these options bool: ``relu=False``,
``if_transpose=False``)."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand
from tbe import tik
from tbe_compat.tik.scalar import static_bool

from .helpers import raises_tik, run


def _cube(relu=False, transpose=False):
    """L1 -> L0A (load2dv1 if_transpose) x L0B -> L0C -> UB (tensor_mov relu) -> GM."""
    ti = tik.Tik()
    a = ti.Tensor("float16", (16, 16), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float16", (16, 16), name="b", scope=tik.scope_gm)
    c = ti.Tensor("float32", (16, 16), name="c", scope=tik.scope_gm)
    a1 = ti.Tensor("float16", (16, 16), name="a1", scope=tik.scope_cbuf)
    b1 = ti.Tensor("float16", (16, 16), name="b1", scope=tik.scope_cbuf)
    ti.data_move(a1, a, 0, 1, 16, 0, 0)
    ti.data_move(b1, b, 0, 1, 16, 0, 0)
    a0 = ti.Tensor("float16", (16, 16), name="a0", scope=tik.scope_ca)
    b0 = ti.Tensor("float16", (16, 16), name="b0", scope=tik.scope_cb)
    c0 = ti.Tensor("float32", (16, 16), name="c0", scope=tik.scope_cc)
    ti.load2dv1(a0, a1, 0, 1, 1, 0, transpose)
    ti.load2dv1(b0, b1, 0, 1, 1, 0, True)
    ti.mmad(c0, a0, b0, 16, 16, 16, 0)
    ub = ti.Tensor("float32", (16, 16), name="ub", scope=tik.scope_ubuf)
    ti.tensor_mov(ub, c0, "m", 1, 1, 0, 0, relu=relu)
    ti.data_move(c, ub, 0, 1, 32, 0, 0)
    ti.BuildCCE(kernel_name="k", inputs=[a, b], outputs=[c])
    rng = np.random.default_rng(0)
    feed = {n: (rng.random((16, 16)) - 0.5).astype(np.float16) for n in ("a", "b")}
    out, = run(ti, feed)
    return np.asarray(out)


NUMPY_BOOLS = [(np.True_, True), (np.False_, False), (np.array(True), True), (np.array(False), False)]


@pytest.mark.parametrize("v,want", NUMPY_BOOLS, ids=["np.True_", "np.False_", "0d-True", "0d-False"])
def test_numpy_bools_are_honoured_as_their_value(v, want):
    assert _cube(relu=v).tobytes() == _cube(relu=want).tobytes()
    assert _cube(transpose=v).tobytes() == _cube(transpose=want).tobytes()


def test_relu_and_transpose_change_the_result():
    """The comparison above is not vacuous: relu and if_transpose each change this kernel's output."""
    base = _cube()
    assert _cube(relu=True).tobytes() != base.tobytes() and _cube(transpose=True).tobytes() != base.tobytes()


@pytest.mark.parametrize("what", ["int", "scalar", "str", "1d"])
@pytest.mark.parametrize("arg", ["relu", "if_transpose"])
def test_non_bools_are_refused_naming_the_argument(arg, what):
    ti = tik.Tik()
    l1 = ti.Tensor("float16", (16, 16), name="l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (16, 16), name="l0a", scope=tik.scope_ca)
    l0c = ti.Tensor("float32", (16, 16), name="l0c", scope=tik.scope_cc)
    ub = ti.Tensor("float32", (16, 16), name="ub", scope=tik.scope_ubuf)
    v = {"int": 1, "scalar": ti.Scalar("int32", init_value=1), "str": "True", "1d": np.array([True])}[what]
    fix = "cannot be a run-time Scalar" if what == "scalar" else f"pass {arg}=True or {arg}=False"
    with raises_tik(IllegalOperand, match=rf"test_bool_options.py:\d+.*{arg} must be a bool.*Fix: .*{fix}"):
        if arg == "relu":
            ti.tensor_mov(ub, l0c, "m", 1, 1, 0, 0, relu=v)
        else:
            ti.load2dv1(l0a, l1, 0, 1, 1, 0, v)


def test_static_bool():
    for v, want in NUMPY_BOOLS + [(True, True), (False, False)]:
        assert static_bool(v) is want
    for v in (0, 1, np.int8(1), np.array(1), 1.0, None, "x", np.array([True])):
        assert static_bool(v) is None


def test_other_bool_options_take_numpy_bools():
    """cal_index, chw2hwc and vnchwconv's high-half flags go through the same helper."""
    ti = tik.Tik()
    src = ti.Tensor("float16", (128,), name="src", scope=tik.scope_ubuf)
    dst = ti.Tensor("float16", (128,), name="dst", scope=tik.scope_ubuf)
    work = ti.Tensor("float16", (128,), name="work", scope=tik.scope_ubuf)
    ti.vec_reduce_max(128, dst, src, work, 1, 8, cal_index=np.True_)
    ti.vnchwconv(np.False_, np.array(False), [dst[16 * i] for i in range(8)] * 2, [src[16 * i] for i in range(8)] * 2,
                 1, 0, 0)
