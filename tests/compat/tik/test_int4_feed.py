"""start_debug with int4 / uint4 GM tensors (named choice PACKED_4BIT_FEED in tbe_compat/tik/debug.py):
fed as the values (ml_dtypes.int4/uint4 or an integer array that fits) or as the packed uint8 bytes;
returned as the values in the declared shape."""
import ml_dtypes
import numpy as np
import pytest

from pto_core.errors import IllegalOperand
from pto_core.numerics.packing import pack_nibbles
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

N = 256
ML = {"int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4}
RANGE = {"int4": (-8, 7), "uint4": (0, 15)}


def _copy4(dtype, views=False):
    """GM -> UB -> GM copy of N 4-bit elements in 32-byte blocks (64 elements per block)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor(dtype, (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor(dtype, (N,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor(dtype, (N,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, N // 64, 0, 0)
    ti.data_move(y, ub, 0, 1, N // 64, 0, 0)
    return build(ti, "copy4", [x], [y[64:192]] if views else [y])


def _values(dtype):
    lo, hi = RANGE[dtype]
    return (np.arange(N) * 7 % (hi - lo + 1) + lo).astype(np.int8)


@pytest.mark.parametrize("dtype", ["int4", "uint4"])
@pytest.mark.parametrize("form", ["ml_dtypes", "int8", "int32", "uint8_values", "packed", "packed_2d"])
def test_int4_copy_every_accepted_feed_form(dtype, form):
    ti = _copy4(dtype)
    v = _values(dtype)
    feed = {"ml_dtypes": v.astype(ML[dtype]), "int8": v, "int32": v.astype(np.int32),
            "uint8_values": v.astype(np.uint8) if dtype == "uint4" else v.astype(np.uint8) & 7,
            "packed": pack_nibbles(v), "packed_2d": pack_nibbles(v).reshape(8, 16)}[form]
    if form == "uint8_values" and dtype == "int4":
        v = feed.astype(np.int8)
    out, = run(ti, {"x": feed})
    assert out.dtype == np.dtype(ML[dtype]) and out.shape == (N,)
    assert (out.astype(np.int64) == v.astype(np.int64)).all()


def test_int4_output_view_and_packed_element_order():
    ti = _copy4("int4", views=True)
    v = _values("int4")
    out, = run(ti, {"x": v})
    assert out.shape == (128,) and (out.astype(np.int64) == v[64:192]).all()
    raw = np.array([0x21, 0xF3] * 64, np.uint8)            # element 0 in the low nibble: 1, 2, 3, -1, ...
    out, = run(_copy4("int4"), {"x": raw})
    assert out[:4].astype(np.int64).tolist() == [1, 2, 3, -1]


def test_int4_values_feed_is_written_back_and_packed_feed_too():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("int4", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int4", (N,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int4", (N,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, N // 64, 0, 0)
    ti.data_move(y, ub, 0, 1, N // 64, 0, 0)
    ti.data_move(x, ub[64:], 0, 1, 1, 0, 0)               # the kernel overwrites x's first 64 elements
    build(ti, "wb", [x], [y])
    v = _values("int4")
    fed = v.astype(ml_dtypes.int4)
    run(ti, {"x": fed})
    assert (fed.astype(np.int64) == np.concatenate([v[64:128], v[64:]])).all()
    packed = pack_nibbles(v)
    run(ti, {"x": packed})
    assert (packed == pack_nibbles(np.concatenate([v[64:128], v[64:]]))).all()


@pytest.mark.parametrize("bad, match", [
    (np.full(N, 8, np.int8), r"holds 8, which does not fit int4 \[-8, 7\]"),
    (np.zeros(100, np.uint8), r"has dtype uint8 and shape \(100,\)"),
    (np.zeros(N, np.float32), r"has dtype float32"),
    (np.zeros(N, ml_dtypes.uint4), None),                # values 0: fit int4
    (np.zeros(128, np.int8), r"has dtype int8 and shape \(128,\)"),   # packed bytes must be uint8
])
def test_int4_refusals_name_both_forms(bad, match):
    ti = _copy4("int4")
    if match is None:
        run(ti, {"x": bad})
        return
    with raises_tik(IllegalOperand, match=match) as info:
        ti.tikdb.start_debug({"x": bad}, interactive=False)
    msg = str(info.value)
    assert "'x'" in msg and "ml_dtypes.int4" in msg and "uint8 array of 128 elements" in msg
    assert "test_int4_feed.py" in msg


def test_uint4_refuses_negative_values():
    with raises_tik(IllegalOperand, match=r"holds -1, which does not fit uint4 \[0, 15\]"):
        run(_copy4("uint4"), {"x": np.full(N, -1, np.int8)})
