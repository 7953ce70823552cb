"""Cube instructions whose counts, gaps or sizes are TIK values (InputScalar / Scalar): checked when they run.

Found by differential testing (h_diffcube84): a run-time ``repeat_times`` of load2d, ``dst_gap`` of
broadcast_ub_to_l0c, ``nburst`` of an L0C -> UB data_move or ``matrix_m`` of mmad wrote past the
destination tensor without an error (into the neighbouring tensor), and out-of-range run-time values
(``is_bias = 2``, ``matrix_k = 4096``, ``repeat_times = 0``) ran. Each good kernel below is run with a
legal value first (results checked against numpy), then with the bad one."""
import numpy as np
import pytest

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from pto_core.errors import IllegalOperand, OutOfBounds, PtoError

from .helpers import raises_tik

HERE = "test_tik_cube_runtime_args.py:"


@pytest.fixture(autouse=True)
def _ascend310():
    set_current_compile_soc_info("Ascend310")
    yield
    set_current_compile_soc_info("Ascend310")


def _fractals(n, start=1):
    return (np.arange(n * 256) % 61 + start).astype(np.float16)


def _load2d_kernel():
    """Two L0A tensors side by side; load2dv1 of `rep` fractals into the first, mmad with B = I into L0C."""
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (4 * 256,), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (256,), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (4 * 256,), name="out", scope=tik.scope_gm)
    rep = ti.InputScalar("int32", name="rep")
    a_l1 = ti.Tensor("float16", (4 * 256,), name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor("float16", (256,), name="b_l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (2 * 256,), name="l0a", scope=tik.scope_ca)
    neighbour = ti.Tensor("float16", (2 * 256,), name="neighbour", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    l0c = ti.Tensor("float32", (4 * 256,), name="l0c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float32", (4 * 256,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(a_l1, a_gm, 0, 1, 64, 0, 0)
    ti.data_move(b_l1, b_gm, 0, 1, 16, 0, 0)
    ti.load2dv1(neighbour, a_l1, 2, 2, 1, 0)          # fractals 2, 3
    ti.load2dv1(l0a, a_l1, 0, rep, 1, 0)              # fractals 0 .. rep-1
    ti.load2dv1(l0b, b_l1, 0, 1, 1, 0)
    ti.mmad(l0c, l0a, l0b, 32, 16, 16, 0)             # rows 0..31 = fractals 0, 1 of l0a
    ti.mmad(l0c[512:], neighbour, l0b, 32, 16, 16, 0)  # rows 32..63 = the neighbour
    ti.data_move(ub, l0c, 0, 1, 4, 0, 0)
    ti.data_move(out, ub, 0, 1, 128, 0, 0)
    ti.BuildCCE("load2d_rt", inputs=[a_gm, b_gm, rep], outputs=[out])
    return ti


def test_load2d_run_time_repeat_is_range_and_bounds_checked():
    ti = _load2d_kernel()
    a = _fractals(4)
    feed = {"a_gm": a, "b_gm": np.eye(16, dtype=np.float16).reshape(-1)}
    got, = ti.tikdb.start_debug(dict(feed, rep=2), interactive=False)
    assert np.array_equal(got, a.astype(np.float32))       # B = I: C = A, fractals in row order
    with raises_tik(OutOfBounds, match=rf"{HERE}\d+ .*dst of tik.load2dv1 \(repeat_times fractal\(s\), "
                                       r"tensor 'l0a'\)"):
        ti.tikdb.start_debug(dict(feed, rep=4), interactive=False)   # would overwrite `neighbour`
    with raises_tik(IllegalOperand, match=rf"{HERE}\d+ .*repeat_times of tik.load2dv1 = 0 is outside \[1, 255\]"):
        ti.tikdb.start_debug(dict(feed, rep=0), interactive=False)


def _mmad_kernel():
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (256,), name="a_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    m = ti.InputScalar("int32", name="m")
    k = ti.InputScalar("int32", name="k")
    is_bias = ti.InputScalar("int32", name="is_bias")
    a_l1 = ti.Tensor("float16", (256,), name="a_l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    l0c = ti.Tensor("float32", (256,), name="l0c", scope=tik.scope_cbuf_out)
    neighbour = ti.Tensor("float32", (256,), name="neighbour_c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(a_l1, a_gm, 0, 1, 16, 0, 0)
    ti.load2dv1(l0a, a_l1, 0, 1, 1, 0)
    ti.load2dv1(l0b, a_l1, 0, 1, 1, 0)
    ti.mmad(neighbour, l0a, l0b, 16, 16, 16, 0)
    ti.mmad(l0c, l0a, l0b, 16, 16, 16, 0)
    ti.mmad(l0c, l0a, l0b, m, k, 16, is_bias)
    ti.data_move(ub, l0c, 0, 1, 1, 0, 0)
    ti.data_move(out, ub, 0, 1, 32, 0, 0)
    ti.BuildCCE("mmad_rt", inputs=[a_gm, m, k, is_bias], outputs=[out])
    return ti


def test_mmad_run_time_sizes_and_is_bias_are_checked():
    ti = _mmad_kernel()
    a = (np.arange(256) % 7 - 3).astype(np.float16)
    A = a.reshape(16, 16).astype(np.float64)
    B = A.T                                    # L0B fractal holds 16 n-rows x 16 k: B[k, n] = frac[n, k]
    got, = ti.tikdb.start_debug({"a_gm": a, "m": 16, "k": 8, "is_bias": 1}, interactive=False)
    assert np.array_equal(got.reshape(16, 16), (A @ B + A[:, :8] @ B[:8]).astype(np.float32))
    with raises_tik(OutOfBounds, match=rf"{HERE}\d+ .*dst_fm of tik.mmad \(the result tile, tensor 'l0c'\)"):
        ti.tikdb.start_debug({"a_gm": a, "m": 17, "k": 16, "is_bias": 0}, interactive=False)
    with raises_tik(IllegalOperand, match=rf"{HERE}\d+ .*is_bias of tik.mmad = 2 is outside \[0, 1\]"):
        ti.tikdb.start_debug({"a_gm": a, "m": 16, "k": 16, "is_bias": 2}, interactive=False)
    with raises_tik(IllegalOperand, match=rf"{HERE}\d+ .*matrix_k of tik.mmad = 4096 is outside \[0, 4095\]"):
        ti.tikdb.start_debug({"a_gm": a, "m": 16, "k": 4096, "is_bias": 0}, interactive=False)


def _l0c_moves_kernel():
    ti = tik.Tik()
    row_gm = ti.Tensor("float32", (64,), name="row_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (4 * 256,), name="out", scope=tik.scope_gm)
    dg = ti.InputScalar("int32", name="dg")
    nb = ti.InputScalar("int32", name="nb")
    rows = ti.Tensor("float32", (64,), name="rows", scope=tik.scope_ubuf)
    l0c = ti.Tensor("float32", (4 * 256,), name="l0c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float32", (2 * 256,), name="ub", scope=tik.scope_ubuf)
    ub2 = ti.Tensor("float32", (4 * 256,), name="ub2", scope=tik.scope_ubuf)
    ti.data_move(rows, row_gm, 0, 1, 8, 0, 0)
    ti.vector_dup(64, ub2, 0.0, 16, 1, 8)
    ti.data_move(l0c, ub2, 0, 1, 4, 0, 0)
    ti.broadcast_ub_to_l0c(l0c, rows, 2, 1, 0, dg)    # row r fills fractal r*(1 + dg)
    ti.data_move(ub, l0c, 0, nb, 1, 1, 0)             # fractals 0 and 2, back to back
    ti.data_move(ub2, l0c, 0, 1, 4, 0, 0)
    ti.data_move(out, ub2, 0, 1, 128, 0, 0)
    ti.BuildCCE("l0c_rt", inputs=[row_gm, dg, nb], outputs=[out])
    return ti


def test_broadcast_and_l0c_data_move_run_time_counts_are_checked():
    ti = _l0c_moves_kernel()
    r = np.arange(64, dtype=np.float32) + 1
    got, = ti.tikdb.start_debug({"row_gm": r, "dg": 1, "nb": 2}, interactive=False)
    exp = np.zeros((4, 16, 16), np.float32)
    exp[0], exp[2] = r[:16], r[16:32]
    assert np.array_equal(got, exp.reshape(-1))
    with raises_tik(OutOfBounds, match=rf"{HERE}\d+ .*dst of tik.broadcast_ub_to_l0c \(the broadcast fractals"):
        ti.tikdb.start_debug({"row_gm": r, "dg": 3, "nb": 2}, interactive=False)
    with raises_tik(IllegalOperand, match=rf"{HERE}\d+ .*dst_gap of tik.broadcast_ub_to_l0c = 256 is outside"):
        ti.tikdb.start_debug({"row_gm": r, "dg": 256, "nb": 2}, interactive=False)
    with raises_tik(OutOfBounds, match=rf"{HERE}\d+ .*dst of tik.data_move \(nburst burst\(s\) of 1 unit\(s\)"):
        ti.tikdb.start_debug({"row_gm": r, "dg": 1, "nb": 3}, interactive=False)   # a third fractal: 3 x 256 > 512
    with raises_tik(IllegalOperand, match=rf"{HERE}\d+ .*nburst of tik.data_move = 0 is outside \[1, 4095\]"):
        ti.tikdb.start_debug({"row_gm": r, "dg": 1, "nb": 0}, interactive=False)


def test_option_arguments_given_a_tik_scalar_or_tensor_reach_their_own_error():
    """PadMode, addr_mode, block_mode and the tensor_mov / Tensor options tested by `in (0, None)`-style
    membership built a TIK comparison from a Scalar or Tensor argument ('cannot use NoneType None as a scalar
    operand of a comparison' in tik.Expr.__eq__, 'comparing tensor view ... needs a single element'); each now
    reaches the refusal that names the argument."""
    set_current_compile_soc_info("Ascend310")
    cases = [
        ("PadMode", lambda ti, g, l1, ub, c, s: ti.data_move(l1, g, 0, 1, 16, 0, 0, s)),
        ("PadMode", lambda ti, g, l1, ub, c, s: ti.data_move(l1, g, 0, 1, 16, 0, 0, ub)),
        ("addr_mode", lambda ti, g, l1, ub, c, s: ti.load2dv1(ti.Tensor("float16", (256,), name="a",
                                                                        scope=tik.scope_ca), l1, 0, 1, 1, 0, False, s)),
        ("sid_store_mode", lambda ti, g, l1, ub, c, s: ti.tensor_mov(ub, c, "m", 1, 1, 0, 0, sid_store_mode=s)),
        ("onthefly_mode", lambda ti, g, l1, ub, c, s: ti.tensor_mov(ub, c, "m", 1, 1, 0, 0, onthefly_mode=ub)),
        ("block_mode", lambda ti, g, l1, ub, c, s: ti.tensor_mov(ub, c, s, 1, 1, 0, 0)),
        ("block_mode", lambda ti, g, l1, ub, c, s: ti.tensor_mov(ub, ub, s, 1, 1, 0, 0)),
        ("relu", lambda ti, g, l1, ub, c, s: ti.tensor_mov(ub, ub, "", 1, 1, 0, 0, relu=s)),
        ("is_workspace", lambda ti, g, l1, ub, c, s: ti.Tensor("float16", (16,), name="w", scope=tik.scope_ubuf,
                                                               is_workspace=s)),
    ]
    for operand, call in cases:
        ti = tik.Tik()
        g = ti.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
        l1 = ti.Tensor("float16", (256,), name="l1", scope=tik.scope_cbuf)
        ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
        c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
        s = ti.Scalar("int32", init_value=0)
        with pytest.raises(PtoError) as e:
            call(ti, g, l1, ub, c, s)
        assert f"operand {operand}:" in str(e.value), (operand, str(e.value))
        assert "Expr.__eq__" not in str(e.value) and "comparing tensor view" not in str(e.value)


def test_option_arguments_left_off_as_numpy_bools_or_0d_arrays_are_accepted():
    """option_is_off / addr_mode (h_review314): np.False_ (not a numbers.Number) and 0-d numpy arrays were
    refused as options set after the identity/type tests replaced `in (0, None)`, which accepted them."""
    set_current_compile_soc_info("Ascend310")
    calls = [
        lambda ti, g, l1, ub, ub2, c, ca, v: ti.Tensor("float16", (16,), name="w", scope=tik.scope_ubuf,
                                                       is_workspace=v, is_atomic_add=v),
        lambda ti, g, l1, ub, ub2, c, ca, v: ti.data_move(l1, g, 0, 1, 16, 0, 0, v),
        lambda ti, g, l1, ub, ub2, c, ca, v: ti.load2dv1(ca, l1, 0, 1, 1, 0, False, v),
        lambda ti, g, l1, ub, ub2, c, ca, v: ti.tensor_mov(ub, c, "m", 1, 1, 0, 0, sid_store_mode=v,
                                                           onthefly_mode=v),
        lambda ti, g, l1, ub, ub2, c, ca, v: ti.tensor_mov(ub2, ub, "", 1, 1, 0, 0, sid_store_mode=v,
                                                           onthefly_mode=v, relu=v),
    ]
    for v in (np.False_, np.array(0), np.array(False), np.int64(0)):
        for call in calls:
            ti = tik.Tik()
            g = ti.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
            l1 = ti.Tensor("float16", (256,), name="l1", scope=tik.scope_cbuf)
            ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
            ub2 = ti.Tensor("float32", (256,), name="ub2", scope=tik.scope_ubuf)
            c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
            ca = ti.Tensor("float16", (256,), name="a", scope=tik.scope_ca)
            call(ti, g, l1, ub, ub2, c, ca, v)
    ti = tik.Tik()
    l1 = ti.Tensor("float16", (256,), name="l1", scope=tik.scope_cbuf)
    ti.load2dv1(ti.Tensor("float16", (256,), name="a", scope=tik.scope_ca), l1, 0, 1, 1, 0, False, np.True_)
