"""TIK 1.5 whole-tensor ``h_*`` APIs through kernels, on whole tensors and strided 2-D slices,
against numpy; the lowering shape (a few pto.ub ops); TIK's argument rules and errors."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, Misaligned, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import vec_kernel

RNG = np.random.default_rng(13)


def r16(x):
    return np.asarray(x, np.float64).astype(np.float16)


def test_whole_tensor_binary_and_unary():
    a = RNG.uniform(0.5, 3, 300).astype(np.float16)[:288]
    b = RNG.uniform(0.5, 3, 288).astype(np.float16)

    def body(ti, ub):
        ti.h_add(ub["o1"], ub["a"], ub["b"])
        ti.h_mul(ub["o2"], ub["a"], ub["b"])
        ti.h_max(ub["o3"], ub["a"], ub["b"])
        ti.h_exp(ub["o4"], ub["a"])
        ti.h_sub(ub["o5"], 1.5, ub["a"])
        ti.h_div(ub["o6"], ub["a"], ub["b"])
    z = np.zeros(288, np.float16)
    out = vec_kernel({"a": a, "b": b, "o1": z, "o2": z, "o3": z, "o4": z, "o5": z, "o6": z}, body,
                     chip="Ascend310P3")
    af, bf = a.astype(np.float64), b.astype(np.float64)
    np.testing.assert_array_equal(out["o1"], r16(af + bf))
    np.testing.assert_array_equal(out["o2"], r16(af * bf))
    np.testing.assert_array_equal(out["o3"], np.maximum(a, b))
    np.testing.assert_array_equal(out["o4"], r16(np.exp(af)))
    np.testing.assert_array_equal(out["o5"], r16(1.5 - af))
    np.testing.assert_array_equal(out["o6"], r16(af / bf))


def test_strided_2d_slices_and_row_views_with_scalars():
    """h_* on ``x[0:M, 0:N]`` of a wider tensor and on rows ``x[i, :]`` with a loop index (t_softmax style)."""
    M, W, N = 6, 64, 48
    x = RNG.uniform(-2, 2, M * W).astype(np.float32)

    def body(ti, ub):
        t = ub["x"].reshape((M, W))
        ti.h_relu(t[0:M, 0:N], t[0:M, 0:N])
        with ti.for_range(0, M) as i:
            s = ti.Scalar("float32", init_value=0.25)
            ti.h_sub(t[i, 0:N], t[i, 0:N], s)
    out = vec_kernel({"x": x}, body, chip="Ascend310P3")["x"].reshape(M, W)
    want = x.reshape(M, W).copy()
    want[:, :N] = (np.maximum(want[:, :N], 0).astype(np.float64) - 0.25).astype(np.float32)
    np.testing.assert_array_equal(out, want)


def test_lowering_batches_aligned_rows_into_repeats():
    ti = vec_kernel({"x": np.zeros(16 * 128, np.float16)},
                    lambda ti, ub: ti.h_abs(ub["x"].reshape((16, 128))[0:16, 0:100],
                                            ub["x"].reshape((16, 128))[0:16, 0:100]), build_only=True)
    ops = [ln for ln in ti.program.to_asm().splitlines() if "pto.ub." in ln]
    assert len(ops) == 1 and "mask(%c100" in ops[0].replace("_i64", "")


def test_h_cast_and_h_duplicate():
    M, W, N = 4, 48, 40
    h = RNG.uniform(-3, 3, M * W).astype(np.float16)

    def body(ti, ub):
        t = ub["h"].reshape((M, W))
        ti.h_duplicate(t[0:M, 0:N], 2.5)
        ti.h_cast(ub["f"].reshape((M, W)), t, "none")
        ti.h_duplicate(ub["c"], 7)
    out = vec_kernel({"h": h, "f": np.zeros(M * W, np.float32), "c": np.zeros(64, np.int32)}, body)
    want = h.reshape(M, W).copy()
    want[:, :N] = 2.5
    np.testing.assert_array_equal(out["f"], want.reshape(-1).astype(np.float32))
    np.testing.assert_array_equal(out["c"], 7)


def test_h_data_move_gm_ub_rows():
    M, N = 4, 48
    src = RNG.uniform(-3, 3, (M, 64)).astype(np.float16)

    def body(ti, ub):
        t = ub["u"].reshape((M, 64))
        ti.h_data_move(t[0:M, 0:N], ub["s"].reshape((M, 64))[0:M, 0:N])
    out = vec_kernel({"u": np.zeros(M * 64, np.float16), "s": src.reshape(-1)}, body)["u"].reshape(M, 64)
    np.testing.assert_array_equal(out[:, :N], src[:, :N])
    np.testing.assert_array_equal(out[:, N:], 0)


def test_h_apis_on_a_window_at_a_loop_offset_with_a_constant_length():
    """x[4*i:4*(i+1), :] has the static shape [4, 16] (the bounds' difference cancels, as TIK's TVM
    simplifier finds): h_* calls take it; a window run past the tensor is caught when it runs."""
    from tbe import tik
    from pto_core.errors import OutOfBounds
    for rows, ok in ((2, True), (3, False)):
        ti = tik.Tik()
        x = ti.Tensor("float16", (8, 16), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (8, 16), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float16", (4, 16), name="ub", scope=tik.scope_ubuf)
        with ti.for_range(0, rows) as i:
            win = x[4 * i:4 * (i + 1), :]
            assert win.shape == [4, 16] or tuple(win.shape) == (4, 16)
            ti.h_data_move(ub, win)
            ti.h_add(ub, ub, 1.0)
            ti.h_data_move(y[i * 4:(i + 1) * 4, :], ub)
            assert x[i:i + 1, 2:5].shape in ([1, 3], (1, 3))
        ti.BuildCCE("win", [x], [y])
        xv = np.arange(128, dtype=np.float16).reshape(8, 16)
        if ok:
            got, = ti.tikdb.start_debug({"x": xv}, interactive=False)
            np.testing.assert_array_equal(got, xv + 1)
        else:
            with pytest.raises(OutOfBounds):
                ti.tikdb.start_debug({"x": xv}, interactive=False)


def _tree(vals, dt):
    v = list(vals)
    while len(v) > 1:
        v = [dt.type(np.float64(v[2 * i]) + np.float64(v[2 * i + 1])) for i in range(len(v) // 2)]
    return v[0]


def _row_sum_ref(row, dt, par):
    """Documented lowering: column chunks of PAR folded in order (rounded), then the vcadd tree."""
    acc = np.zeros(par, dt)
    acc[:min(par, len(row))] = row[:par]
    for c in range(par, len(row), par):
        w = row[c:c + par]
        acc[:len(w)] = (acc[:len(w)].astype(np.float64) + w).astype(dt)
    return _tree(acc[:min(par, len(row))].tolist() + [0.0] * (par - min(par, len(row))), dt)


@pytest.mark.parametrize("M,N,dtype", [(8, 48, "float16"), (6, 96, "float32"), (3, 200, "float16")])
def test_h_reduce_rows(M, N, dtype):
    dt = np.dtype(dtype)
    W = -(-N // (32 // dt.itemsize)) * (32 // dt.itemsize)
    x = RNG.uniform(-2, 2, M * W).astype(dt)

    def body(ti, ub):
        t = ub["x"].reshape((M, W))
        ti.h_reduce_sum(ub["s"][0:M], t[0:M, 0:N], 1)
        ti.h_reduce_max(ub["m"][0:M], t[0:M, 0:N], 1)
        ti.h_reduce_min(ub["n"][0:M], t[0:M, 0:N], 1)
    k = 32 // dt.itemsize * 2
    out = vec_kernel({"x": x, "s": np.full(k, 9, dt), "m": np.full(k, 9, dt), "n": np.full(k, 9, dt)}, body,
                     chip="Ascend310P3")
    rows = x.reshape(M, W)[:, :N]
    par = 256 // dt.itemsize
    np.testing.assert_array_equal(out["s"][:M], [_row_sum_ref(r, dt, par) for r in rows])
    np.testing.assert_array_equal(out["m"][:M], rows.max(axis=1))
    np.testing.assert_array_equal(out["n"][:M], rows.min(axis=1))
    np.testing.assert_array_equal(out["s"][M:], 9)


def test_h_reduce_all_into_a_scalar_and_axis0():
    x = RNG.uniform(-2, 2, 4 * 64).astype(np.float32)

    def body(ti, ub):
        s = ti.Scalar("float32")
        ti.h_reduce_max(s, ub["x"].reshape((4, 64)), None)
        ub["o"][0].set_as(s)
        ti.h_reduce_sum(ub["c"], ub["x"].reshape((4, 64)), 0)
    out = vec_kernel({"x": x, "o": np.zeros(8, np.float32), "c": np.zeros(64, np.float32)}, body,
                     chip="Ascend310P3")
    assert out["o"][0] == x.max()
    rows = x.reshape(4, 64).astype(np.float64)
    want = rows[0].astype(np.float32)
    for r in rows[1:]:
        want = (want.astype(np.float64) + r).astype(np.float32)
    np.testing.assert_array_equal(out["c"], want)


def test_h_reduce_argmax_argmin():
    x = RNG.integers(-50, 50, 3 * 160).astype(np.float16)
    x[130] = x[150] = 99                         # tie in the tail part of row 0: the first wins

    def body(ti, ub):
        t = ub["x"].reshape((3, 160))
        ti.h_reduce_argmax(ub["i"][0:3], t, 1)
        ti.h_reduce_argmin(ub["j"][0:3], t, 1)
    out = vec_kernel({"x": x, "i": np.full(8, -1, np.int32), "j": np.full(8, -1, np.int32)}, body,
                     chip="Ascend310P3")
    rows = x.reshape(3, 160)
    np.testing.assert_array_equal(out["i"][:3], rows.argmax(axis=1))
    np.testing.assert_array_equal(out["j"][:3], rows.argmin(axis=1))
    np.testing.assert_array_equal(out["i"][3:], -1)



def _whole_row_arg(v: np.ndarray, run_time_length: bool = False) -> tuple:
    """(h_reduce_argmax, h_reduce_argmin) of the whole float16 row ``v`` (a static view, or ``ub[0:ln]`` with an
    InputScalar ``ln`` = its length) on Ascend910B1, each into an int32 Scalar."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910B1")
    n = v.size
    ti = tik.Tik()
    xg = ti.Tensor("float16", (n,), name="x", scope=tik.scope_gm)
    yg = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (n,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, xg, 0, 1, n // 16, 0, 0)
    hi, lo = ti.Scalar("int32", init_value=-1), ti.Scalar("int32", init_value=-1)
    ln = ti.InputScalar("int32", name="ln") if run_time_length else n
    ti.h_reduce_argmax(hi, ub[0:ln], None)
    ti.h_reduce_argmin(lo, ub[0:ln], None)
    yu = ti.Tensor("int32", (8,), name="yu", scope=tik.scope_ubuf)
    ti.vector_dup(8, yu, -1, 1, 1, 8)
    yu[0].set_as(hi)
    yu[1].set_as(lo)
    ti.data_move(yg, yu, 0, 1, 1, 0, 0)
    ti.BuildCCE("whole_row_arg", [xg] + ([ln] if run_time_length else []), [yg])
    out, = ti.tikdb.start_debug({"x": v, **({"ln": np.int32(n)} if run_time_length else {})}, interactive=False)
    return int(out[0]), int(out[1])


@pytest.mark.parametrize("run_time_length", [False, True])
def test_h_reduce_arg_of_a_row_past_one_index_range_is_reduced_in_chunks(run_time_length):
    """A float16 row longer than vec_reduce_max's indexed range (511 repeats x 128 = 65408 elements: the
    in-repeat index must fit uint16) is reduced in chunks of 511 repeats and combined; the index is the
    first of equal extremes across chunks too. It was refused ("repeat_times = 547 is outside [1, 511]")."""
    n = 70000
    x = RNG.integers(-1000, 1000, n).astype(np.float16)
    # chunk 0: repeats 0..510 (elements 0..65407), chunk 1: 511..545, tail: 69888..69999
    cases = (((2000, 66000), (69950, 70)),          # a tie across chunks: the first; a min in the tail and chunk 0
             ((66000,), (65407, 65408)),            # the max only in chunk 1; a tie at the chunk boundary
             ((69999, 69888), (3,)))                # the max in the tail (twice); the min at the start
    for hi_at, lo_at in cases:
        v = x.copy()
        v[list(hi_at)] = 2000
        v[list(lo_at)] = -2000
        assert _whole_row_arg(v, run_time_length) == (np.argmax(v), np.argmin(v)), (hi_at, lo_at)


def _b(body, bufs=None, chip=None):
    bufs = bufs or {"a": np.zeros(128, np.float16), "b": np.zeros(128, np.float16), "d": np.zeros(128, np.float16)}
    return vec_kernel(bufs, body, chip=chip, build_only=True)


@pytest.mark.parametrize("call,cls,match", [
    (lambda ti, ub: ti.h_add(ub["d"], ub["a"], 2), IllegalOperand, "src1 should be float for float16"),
    (lambda ti, ub: ti.h_add(ub["d"], ub["a"], ti.Scalar("float32")), IllegalOperand, "src1 should be float16"),
    (lambda ti, ub: ti.h_add(ub["d"], 1.0, 2.0), IllegalOperand, "one of src0/src1 must be a tensor"),
    (lambda ti, ub: ti.h_add(ub["d"], ub["a"][0:64], ub["b"]), IllegalOperand, "same shape"),
    (lambda ti, ub: ti.h_add(ub["d"][16:128], ub["d"][0:112], ub["b"][0:112]), IllegalOperand, "overlap"),
    (lambda ti, ub: ti.h_and(ub["d"], ub["a"], 1.0), UnsupportedOp, None),
    (lambda ti, ub: ti.h_div(ub["d"], ub["a"], ub["b"]), UnsupportedOp, "does not support float16 on Ascend310"),
    (lambda ti, ub: ti.h_cast(ub["d"], ub["a"], "bankers"), IllegalOperand, "round_mode"),
    (lambda ti, ub: ti.h_reduce_sum(ub["d"], ub["a"], 0), IllegalOperand, "dst should be Scalar"),
    (lambda ti, ub: ti.h_reduce_sum(ub["d"], ub["a"], 3), IllegalOperand, "out of bounds"),
    # the message names src's own shape, not the wanted dst shape as if it were src's (CANN roi_pooling_with_arg_max)
    (lambda ti, ub: ti.h_reduce_max(ub["d"], ub["a"].reshape((8, 16)), 0), IllegalOperand,
     r"dst is \[128\] and src is \[8, 16\], so dst should be \[16\]"),
    (lambda ti, ub: ti.h_cmpv(ub["d"], ub["a"], ub["b"], "LT"), IllegalOperand, "mask_tensor should be a bool"),
    (lambda ti, ub: ti.h_sin(ub["d"], ub["a"]), UnsupportedOp, "series.*Fix: compute it from modelled ops"),
    (lambda ti, ub: ti.h_exp(ub["d"][0:128:2], ub["a"][0:128:2]), UnsupportedOp, "step"),
    (lambda ti, ub: ti.h_exp(ub["d"][8:120], ub["a"][8:120]), Misaligned, "32-byte aligned"),
])
def test_h_errors(call, cls, match):
    with raises_tik(cls, match=match):
        _b(call)


def test_slice_length_is_static_only_when_the_bounds_differ_by_a_constant():
    from tbe import tik
    from tbe_compat.tik.tensor import _constant_difference
    ti = tik.Tik()
    x = ti.Tensor("float16", (64, 16), name="x", scope=tik.scope_ubuf)
    with ti.for_range(0, 2) as i:
        with ti.for_range(0, 2) as j:
            assert tuple(x[2 * i + 3 * j:2 * (i + 1) + 3 * j + 5, :].shape) == (7, 16)
            assert tuple(x[i - j + 10:10 + i - j + 1, :].shape) == (1, 16)
            dyn = x[4 * i:4 * j + 4, :].shape[0]              # i and j do not cancel: a run-time length
            assert not isinstance(dyn, int)
            assert _constant_difference((i * j).ir, (i * j).ir) is None     # not affine: left dynamic


def _trig_key_kernel(key: int, api: str):
    """A dynamic kernel whose tiling key 5 calls h_sin / h_cos (not modelled) and key 1 a modelled h_mul,
    as CANN rotated_feature_align does (`with if_scope(points == 5): ... h_cos / h_sin`)."""
    b = {"d": np.zeros(64, np.float32), "a": np.arange(64).astype(np.float32)}

    def body(ti, ub):
        with ti.if_scope(ub["key"] == 5):
            getattr(ti, api)(ub["d"], ub["a"])
        with ti.else_scope():
            ti.h_mul(ub["d"], ub["a"], 2.0)
    return vec_kernel(b, body, chip="Ascend910B1", scalars={"key": ("int32", key)})


@pytest.mark.parametrize("api", ["h_sin", "h_cos"])
def test_h_sin_cos_in_an_untaken_branch_do_not_stop_the_kernel(api):
    # before: tracing the points == 5 branch raised, so the kernel's other tiling key could not run either
    out = _trig_key_kernel(1, api)
    np.testing.assert_array_equal(out["d"], np.arange(64).astype(np.float32) * 2)


@pytest.mark.parametrize("api", ["h_sin", "h_cos"])
def test_h_sin_cos_raise_where_their_branch_runs(api):
    with raises_tik(UnsupportedOp, match=rf"test_vector_h.py:\d+ in `tik.{api}`: .*tik.{api} is not modelled: "
                                         r".*series whose terms and precision are not published"):
        _trig_key_kernel(5, api)


def test_a_run_time_shape_mismatch_names_both_operand_shapes():
    """h_mul of a static [80] source into a run-time [n] destination (CANN dynamic common_iou_grad sizes its box
    buffers statically, its temporaries by the tiling): n = 64 fails when it runs, naming both shapes."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    t_gm = ti.Tensor("int32", (8,), tik.scope_gm, "t_gm")
    x_gm = ti.Tensor("float32", (80,), tik.scope_gm, "x_gm")
    y_gm = ti.Tensor("float32", (64,), tik.scope_gm, "y_gm")
    t_ub = ti.Tensor("int32", (8,), tik.scope_ubuf, "t_ub")
    ti.data_move(t_ub, t_gm, 0, 1, 1, 0, 0)
    n = ti.Scalar("int32", "n")
    n.set_as(t_ub[0])
    a = ti.Tensor("float32", (80,), tik.scope_ubuf, "a")
    b = ti.Tensor("float32", (n,), tik.scope_ubuf, "b")
    ti.data_move(a, x_gm, 0, 1, 10, 0, 0)
    ti.h_mul(b, a, 0.5)
    ti.data_move(y_gm, b, 0, 1, 8, 0, 0)
    ti.BuildCCE("hshape", [t_gm, x_gm], [y_gm])
    with raises_tik(IllegalOperand, match=r"dim 0 of src0 \[80\] \(run-time lengths; .* so it must equal dim 0 of "
                                          r"dst \[<run-time>\]\) = 80, but it must be 64 \[at"):
        ti.tikdb.start_debug({"t_gm": np.array([64] + [0] * 7, np.int32), "x_gm": np.zeros(80, np.float32)},
                             interactive=False)
    y, = ti.tikdb.start_debug({"t_gm": np.array([80] + [0] * 7, np.int32),
                               "x_gm": np.arange(80, dtype=np.float32)}, interactive=False)
    assert np.array_equal(y, np.arange(64, dtype=np.float32) * 0.5)


def test_run_time_reduction_shape_message_names_src_shape_and_the_wanted_one():
    """h_reduce_sum of src [r, 16] into dst [m] with r != m at run time: the message gives src's own shape and
    the wanted dst shape (it called the wanted [<run-time>] src's shape)."""
    from tbe import tik
    ti = tik.Tik()
    r = ti.InputScalar("int32", name="r")
    m = ti.InputScalar("int32", name="m")
    x = ti.Tensor("float16", (4, 16), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (4, 16), name="ub", scope=tik.scope_ubuf)
    ob = ti.Tensor("float16", (16,), name="ob", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 4, 0, 0)
    ti.h_duplicate(ob, 0.0)
    ti.h_reduce_sum(ob[0:m], ub[0:r, :], axis=1)
    ti.data_move(y, ob, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="hred_msg", inputs=[x, r, m], outputs=[y])
    y0, = ti.tikdb.start_debug({"x": np.ones((4, 16), np.float16), "r": 3, "m": 3}, False)
    assert np.array_equal(y0[:4], [16, 16, 16, 0])
    with raises_tik(IllegalOperand, match=r"dim 0 of dst \[<run-time>\] \(run-time lengths; .* so it must equal dim 0 "
                                          r"of the wanted \[<run-time>\] \(src is \[<run-time>, 16\]\)\) = 2, but it "
                                          r"must be 3 \[at"):
        ti.tikdb.start_debug({"x": np.ones((4, 16), np.float16), "r": 3, "m": 2}, False)


@pytest.mark.parametrize("n,nans", [(200, [150]), (200, [150, 20]), (70000, [66000]), (70000, [100, 66000])])
def test_h_reduce_arg_takes_the_first_nan_wherever_it_is(n, nans):
    """As one vec_reduce_max/min over the row (pto_vector.md "Reductions": a NaN lane wins, ties the first):
    a NaN in the tail or in a later chunk wins too -- the combining step compared with a strict > / <, so a
    NaN there was never chosen (n=200, NaN at 150 gave the finite extremes)."""
    v = np.random.default_rng(0).integers(-100, 100, n).astype(np.float16)
    v[nans] = np.nan
    assert _whole_row_arg(v) == (np.argmax(v), np.argmin(v)) == (min(nans), min(nans))


def test_h_reduce_arg_of_static_rows_checks_dst_shape():
    """h_reduce_argmax over the last axis of static rows checks dst's shape as the run-time path does: a dst
    of 2 elements for 4 rows was written past its end (the neighbouring UB elements got rows 2 and 3)."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    ub = ti.Tensor("float16", (4, 128), name="ub", scope=tik.scope_ubuf)
    yu = ti.Tensor("int32", (8,), name="yu", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"test_vector_h.py:\d+ in `tik.h_reduce_argmax`: .*dst is \[2\] and src "
                                          r"is \[4, 128\], so dst should be \[4\]"):
        ti.h_reduce_argmax(yu[0:2], ub, axis=1)
    ti.h_reduce_argmin(yu[0:4], ub, axis=1)          # the right shape still lowers


def test_h_reduce_arg_into_a_strided_dst_view_follows_its_strides():
    """h_reduce_argmax of static rows [2, 3, 16] into dst = yu[0:2, 0:3] of a [4, 16] tensor: row (1, j) goes to
    yu[1, j] as h_reduce_max puts it (it went to yu[0, 3 + j], outside the view, and yu[1, 0:3] kept its -1)."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    xg = ti.Tensor("float16", (96,), name="x", scope=tik.scope_gm)
    yg = ti.Tensor("int32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (2, 3, 16), name="ub", scope=tik.scope_ubuf)
    yu = ti.Tensor("int32", (4, 16), name="yu", scope=tik.scope_ubuf)
    ti.data_move(ub, xg, 0, 1, 6, 0, 0)
    ti.vector_dup(64, yu, -1, 1, 1, 8)
    ti.h_reduce_argmax(yu[0:2, 0:3], ub, axis=2)
    ti.data_move(yg, yu, 0, 1, 8, 0, 0)
    ti.BuildCCE("strided_arg", [xg], [yg])
    x = np.random.default_rng(0).permutation(96).astype(np.float16)
    out, = ti.tikdb.start_debug({"x": x}, interactive=False)
    want = np.full((4, 16), -1, np.int32)
    want[0:2, 0:3] = x.reshape(2, 3, 16).argmax(-1)
    assert out.reshape(4, 16).tolist() == want.tolist()


def test_reduce_axis_given_as_a_list():
    """``axis=[1, 2]`` (a list, as the error's own hint offers) reduces like ``axis=(1, 2)``; it was refused
    with "axis's value should be int"."""
    x = RNG.uniform(-4, 4, 4 * 3 * 64).astype(np.float16)

    def body(ti, ub):
        ti.h_reduce_max(ub["m"][0:4], ub["x"].reshape((4, 3, 64)), [1, 2])
        ti.h_reduce_min(ub["n"][0:4], ub["x"].reshape((4, 3, 64)), (1, 2))
    z = np.zeros(16, np.float16)
    out = vec_kernel({"x": x, "m": z, "n": z}, body, chip="Ascend910B1")
    np.testing.assert_array_equal(out["m"][:4], x.reshape(4, 3, 64).max(axis=(1, 2)))
    np.testing.assert_array_equal(out["n"][:4], x.reshape(4, 3, 64).min(axis=(1, 2)))


@pytest.mark.parametrize("src_dt, dst_dt, call, fix", [
    (np.int32, np.float16, lambda ti, ub: ti.h_cast(ub["d"][0:64], ub["s"][0:64], "none"), r"Fix: call h_quant\(dst"),
    (np.int16, np.int8, lambda ti, ub: ti.h_cast(ub["d"][0:64], ub["s"][0:64], "none"), r"Fix: h_quant's int16"),
    (np.float16, np.float16, lambda ti, ub: ti.h_reduce_sum(ub["d"][0:4], ub["s"].reshape((4, 64)), [1, 1]),
     r"duplicate value in 'axis'.*Fix: list each axis once"),
])
def test_h_refusals_say_what_to_do(src_dt, dst_dt, call, fix):
    """h_cast's s322f16/s162s8 refusals and a duplicate reduction axis carried no Fix."""
    with raises_tik(Exception, match=r"test_vector_h.py:\d+ .*" + fix):
        vec_kernel({"s": np.zeros(256, src_dt), "d": np.zeros(256, dst_dt)}, call, chip="Ascend310P3")


@pytest.mark.parametrize("chip, dst_dt, offered, not_offered", [
    ("Ascend310B1", np.int8, "convert through float16", "vec_conv"),         # no vconv s162s8 there
    ("Ascend310B1", np.uint8, "or use vec_conv \\(s162u8\\)", None),
    ("Ascend910", np.int8, "Ascend910A has no vconv from int16", "vec_conv"),   # no s162f16 either
    ("Ascend910B1", np.int8, "convert through float16 .* or use vec_conv \\(s162s8\\)", None),
])
def test_h_cast_int16_to_8bit_fix_offers_routes_the_chip_has(chip, dst_dt, offered, not_offered):
    """The s162s8/s162u8 Fix offered vec_conv and a float16 route on every chip; Ascend310B1 has no vconv
    s162s8 and Ascend910/310 no vconv from int16 at all, so the routes it named were refused there (h_review311)."""
    with raises_tik(UnsupportedOp, match=r"Fix: h_quant's int16 .*" + offered) as e:
        vec_kernel({"s": np.zeros(256, np.int16), "d": np.zeros(256, dst_dt)},
                   lambda ti, ub: ti.h_cast(ub["d"][0:64], ub["s"][0:64], "none"), chip=chip)
    if not_offered:
        assert not_offered not in str(e.value).split("Fix:")[1]


def test_h_cast_int16_to_int8_through_float16_saturates_like_vec_conv():
    """The float16 route the Fix names gives vconv s162s8's saturated values."""
    src = np.concatenate([np.arange(-300, -44), np.arange(200, 456)]).astype(np.int16)

    def via(ti, ub):
        ti.h_cast(ub["f"], ub["s"], "none")
        ti.h_cast(ub["d"], ub["f"], "none")
    a = vec_kernel({"s": src, "f": np.zeros(512, np.float16), "d": np.zeros(512, np.int8)}, via, chip="Ascend310P3")
    b = vec_kernel({"s": src, "d": np.zeros(512, np.int8)},
                   lambda ti, ub: ti.vec_conv(64, "none", ub["d"], ub["s"], 8, 2, 4), chip="Ascend310P3")
    assert a["d"].tolist() == b["d"].tolist() == np.clip(src, -128, 127).tolist()


def test_h_reduce_over_a_leading_axis_of_3d_says_what_to_do():
    """axis=0 of a 3-D src is not lowered; the refusal had no Fix; the reshape it suggests gives the result."""
    with raises_tik(UnsupportedOp, match=r"test_vector_h.py:\d+ .*over axis 0 is not lowered.*Fix: .*axis=0"):
        vec_kernel({"s": np.zeros(256, np.float16), "d": np.zeros(128, np.float16)},
                   lambda ti, ub: ti.h_reduce_sum(ub["d"].reshape((2, 64)), ub["s"].reshape((2, 2, 64)), 0),
                   chip="Ascend310P3")
    x = RNG.uniform(-2, 2, 256).astype(np.float16)
    out = vec_kernel({"s": x, "d": np.zeros(128, np.float16)},
                     lambda ti, ub: ti.h_reduce_sum(ub["d"], ub["s"].reshape((2, 128)), 0),
                     chip="Ascend310P3")
    np.testing.assert_array_equal(out["d"], (x[:128].astype(np.float64) + x[128:]).astype(np.float16))


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910", "Ascend310P3", "Ascend910B1"])
def test_axis0_reduction_keeps_inf_and_nan_of_the_first_row(chip):
    """The axis-0 fold starts from a copy of row 0; for rows that are not whole 32 B blocks that copy was a
    ``vmuls`` by 1, which on the saturation-mode chips (Ascend310/910/310P, numerics.md §3) turned -inf into
    -65504 and NaN into 0 (k455). It is now a ``vmax`` of each element with itself (bit-exact)."""
    src = np.ones((2, 32), np.float16)
    src[0, 3], src[0, 5], src[0, 9], src[1, 7] = -np.inf, np.inf, np.nan, np.nan

    def body(ti, ub):
        ti.h_reduce_min(ub["lo"][0:20], ub["a"].reshape((2, 32))[:, 0:20], 0)
        ti.h_reduce_max(ub["hi"][0:20], ub["a"].reshape((2, 32))[:, 0:20], 0)
    out = vec_kernel({"a": src.ravel(), "lo": np.full(32, 7, np.float16), "hi": np.full(32, 7, np.float16)}, body,
                     chip=chip)
    lo, hi = out["lo"], out["hi"]
    assert lo[3] == -np.inf and lo[5] == 1 and np.isnan(lo[7]) and np.isnan(lo[9]), lo[:10]
    assert hi[5] == np.inf and hi[3] == 1 and np.isnan(hi[7]) and np.isnan(hi[9]), hi[:10]
    assert (lo[20:] == 7).all() and (hi[20:] == 7).all()


@pytest.mark.parametrize("chip, x", [("Ascend910B1", 0.0), ("Ascend910B1", -0.0), ("Ascend910", 0.0)])
def test_h_div_by_an_immediate_zero(chip, x):
    """h_div(dst, src, 0.0) multiplied by a reciprocal computed as Python ``1.0 / 0.0``, which stopped the trace
    with a bare ZeroDivisionError (k455). Now (k460, SCALAR_COPIED) it is vdiv by a vector_dup copy of +-0:
    src / 0 = +-inf and 0 / 0 = NaN; the saturation-mode chips clamp them (inf -> max, NaN -> 0)."""
    src = np.array([3.0, -2.0, 0.0] + [1.0] * 13, np.float32)
    out = vec_kernel({"a": src, "d": np.full(16, 7, np.float32)},
                     lambda ti, ub: ti.h_div(ub["d"], ub["a"], x), chip=chip)["d"]
    with np.errstate(all="ignore"):
        want = (src.astype(np.float64) / x).astype(np.float32)
    if chip == "Ascend910":
        want = np.clip(np.where(np.isnan(want), 0, want), -3.4028235e38, 3.4028235e38).astype(np.float32)
    assert out.tobytes() == want.tobytes(), (out[:3], want[:3])


SATURATES = {"Ascend310", "Ascend910", "Ascend310P3"}   # numerics.md §3: inf -> +-max, NaN -> 0


def _once(exact, dt, chip):
    """One rounding of the float64 value ``exact`` to ``dt``, then the chip's saturation."""
    out = exact.astype(dt)
    if chip in SATURATES:
        out = np.clip(np.where(np.isnan(out), 0, out), np.finfo(dt).min, np.finfo(dt).max).astype(dt)
    return out


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310P3", "Ascend910"])
def test_h_div_with_a_scalar_is_one_rounding_of_the_quotient(chip):
    """h_div with a scalar operand is vdiv with a vector_dup copy of it (SCALAR_COPIED). It multiplied by the
    reciprocal (k455/k460): the reciprocal of a subnormal overflows, so f16 0.001 / 6e-8 gave inf on 910B1 and
    65.5 on 310P3 (want 16784), f32 -0.0 / 1e-45 gave NaN (want -0), f16 60000 / 30000 gave 1.999 (want 2)."""
    h = np.array([6e-8, 3.0, -7.0, 0.0, -0.0, np.inf, np.nan, 2e-3] * 2, np.float16)
    big = np.array([60000.0, -60000.0, 1.0, 0.0, 65504.0, np.inf, -3.0, 6e-8] * 2, np.float16)
    f = np.array([1e-45, -1e-45, 3.0, 0.0, np.inf, 1e-38, -2.5, 7.0] * 2, np.float32)

    def body(ti, ub):
        ti.h_div(ub["q1"], 0.001, ub["h"])                  # x / src
        ti.h_div(ub["q2"], ub["big"], 30000.0)              # src / x
        ti.h_div(ub["q3"], -0.0, ub["f"])
        ti.h_div(ub["q4"], ub["f"], 1e-45)                  # 1 / 1e-45 overflows f32
    out = vec_kernel({"h": h, "big": big, "f": f, "q1": np.full(16, 9, np.float16),
                      "q2": np.full(16, 9, np.float16), "q3": np.full(16, 9, np.float32),
                      "q4": np.full(16, 9, np.float32)}, body, chip=chip)
    w = np.float64
    with np.errstate(all="ignore"):
        want = {"q1": _once(w(np.float16(0.001)) / h.astype(w), np.float16, chip),
                "q2": _once(big.astype(w) / 30000.0, np.float16, chip),
                "q3": _once(-0.0 / f.astype(w), np.float32, chip),
                "q4": _once(f.astype(w) / w(np.float32(1e-45)), np.float32, chip)}
    for k, v in want.items():
        assert out[k].tobytes() == v.tobytes(), (k, out[k][:8], v[:8])
    assert out["q1"][0] == 16784 and out["q2"][0] == 2 and np.signbit(out["q3"][0]) and out["q3"][0] == 0


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend310P3", "Ascend910B1"])
def test_h_sub_with_a_scalar_is_one_saturated_subtraction(chip):
    """h_sub with a scalar is vsub with a vector_dup copy of it (SCALAR_COPIED). ``x - src`` was vmuls(src, -1)
    then vadds(x): on the saturation-mode chips the first step saturates, so 100 - inf gave -65408 (want -65504)
    and 100 - NaN gave 100 (want 0) (k455/k460)."""
    a = np.array([np.inf, np.nan, 1.0, -np.inf, -65504.0, 65504.0, -0.0, 0.0] * 2, np.float16)

    def body(ti, ub):
        ti.h_sub(ub["d1"], 100.0, ub["a"])
        ti.h_sub(ub["d2"], ub["a"], -100.0)
        ti.h_sub(ub["d3"], 0.0, ub["a"])
    out = vec_kernel({"a": a, "d1": np.full(16, 9, np.float16), "d2": np.full(16, 9, np.float16),
                      "d3": np.full(16, 9, np.float16)}, body, chip=chip)
    w = a.astype(np.float64)
    with np.errstate(all="ignore"):
        want = {"d1": _once(100.0 - w, np.float16, chip), "d2": _once(w + 100.0, np.float16, chip),
                "d3": _once(0.0 - w, np.float16, chip)}
    for k, v in want.items():
        assert out[k].tobytes() == v.tobytes(), (k, out[k][:8], v[:8])


@pytest.mark.parametrize("chip, dt", [("Ascend310P3", np.int16), ("Ascend910B1", np.int16),
                                      ("Ascend310", np.int32), ("Ascend910", np.int32)])
def test_h_sub_integer_scalar_at_the_dtype_minimum_wraps(chip, dt):
    """``src - x`` was vadds(src, -x): ``x`` at the dtype's minimum was refused (-(-32768) does not fit int16),
    and int32 on Ascend310/910 (vsub int32, but no int vadds) was refused, though TIK admits h_sub on the vsub
    row alone (k460). Now vsub with a vector_dup copy of x: two's-complement wrap, both operand orders."""
    info = np.iinfo(dt)
    n = 32 // np.dtype(dt).itemsize
    a = np.resize(np.array([info.min, info.max, -5, 0, 1, 7, -1, 3], dt), n)

    def body(ti, ub):
        ti.h_sub(ub["d1"], ub["a"], int(info.min))
        ti.h_sub(ub["d2"], int(info.min), ub["a"])
    out = vec_kernel({"a": a, "d1": np.full(n, 9, dt), "d2": np.full(n, 9, dt)}, body, chip=chip)
    w = a.astype(np.int64)
    assert out["d1"].tobytes() == (w - int(info.min)).astype(dt).tobytes()
    assert out["d2"].tobytes() == (int(info.min) - w).astype(dt).tobytes()


def test_h_div_and_h_sub_with_a_scalar_lower_to_a_dup_and_the_two_tensor_instruction():
    """SCALAR_COPIED: one vector_dup of the scalar into a PAR-lane scratch, then vdiv / vsub reading it at repeat
    stride 0 -- no vmuls / vrec / vadds; Ascend310 (no vdiv) still refuses h_div with a scalar."""
    def body(ti, ub):
        ti.h_div(ub["d"], ub["a"], 3.0)
        ti.h_sub(ub["d"], 2.0, ub["a"])
    asm = _b(body, chip="Ascend910B1").program.to_asm()
    ops = [ln.split("pto.ub.")[1].split("(")[0].split()[0] for ln in asm.splitlines() if "pto.ub." in ln]
    assert ops == ["vector_dup", "vdiv", "vector_dup", "vsub"], ops
    with raises_tik(UnsupportedOp, match="does not support float16 on Ascend310"):
        _b(lambda ti, ub: ti.h_div(ub["d"], ub["a"], 3.0), chip="Ascend310")


def _scalar_ref(api, a, x, first, dt, chip):
    """``x <api> a`` (``first``) or ``a <api> x`` element-wise: max/min IEEE 754-2019 (NaN wins, -0 < +0), ints
    wrap, float arithmetic one rounding then the chip's saturation; bitwise for and/or."""
    lhs, rhs = (np.full(a.shape, x, dt), a) if first else (a, np.full(a.shape, x, dt))
    if api in ("h_max", "h_min"):
        if np.dtype(dt).kind != "f":
            return (np.maximum if api == "h_max" else np.minimum)(lhs, rhs)
        pick = (lhs > rhs) if api == "h_max" else (lhs < rhs)
        zeros = (lhs == 0) & (rhs == 0)
        pick = np.where(zeros, np.signbit(rhs) if api == "h_max" else np.signbit(lhs), pick)
        out = np.where(pick, lhs, rhs)
        return np.where(np.isnan(lhs), lhs, np.where(np.isnan(rhs), rhs, out)).astype(dt)
    if api in ("h_and", "h_or"):
        return (np.bitwise_and if api == "h_and" else np.bitwise_or)(lhs, rhs)
    fn = np.add if api == "h_add" else np.multiply
    if np.dtype(dt).kind == "f":
        with np.errstate(all="ignore"):
            return _once(fn(lhs.astype(np.float64), rhs.astype(np.float64)), dt, chip)
    bits = 8 * np.dtype(dt).itemsize
    w = fn(lhs.astype(np.int64), rhs.astype(np.int64)) & ((1 << bits) - 1)
    return w.astype(np.uint64).astype(f"u{bits // 8}").view(dt)


#: scalar forms TIK admits on the two-tensor row alone (check_double_ops_params) where the chip lacks the
#: vector-scalar row (k463): they were refused ("no vmaxs instruction", "does not support int32").
NO_SCALAR_ROW = [("Ascend310", "h_max", np.float16), ("Ascend310", "h_min", np.float32),
                 ("Ascend910", "h_max", np.int32), ("Ascend910", "h_min", np.float16),
                 ("Ascend310", "h_add", np.int32), ("Ascend910", "h_mul", np.int32),
                 ("Ascend310B1", "h_max", np.int8), ("Ascend310B1", "h_max", np.uint8),
                 ("Ascend310", "h_and", np.int16), ("Ascend910B1", "h_or", np.uint16),
                 ("Ascend310P3", "h_and", np.uint16), ("Ascend310B1", "h_or", np.int8)]


@pytest.mark.parametrize("chip, api, dt", NO_SCALAR_ROW)
def test_scalar_forms_tik_admits_on_the_two_tensor_row_run(chip, api, dt):
    """310 ``h_max(d, a, 1.0)``, int32 ``h_add``/``h_mul`` with a scalar on Ascend310/910, int8 ``h_max`` on
    Ascend310B1 and ``h_and``/``h_or`` with a scalar anywhere were refused: the chip has no vmaxs/vmins/int
    vadds/vmuls row (no vands/vors at all), though CANN 8.1 TIK checks only the vmax/vadd/... row. Now
    SCALAR_COPIED: the two-tensor instruction on a vector_dup copy of the scalar, both operand orders, the
    same bits as with a tensor full of the scalar (NaN, -0, inf, saturation, int wrap)."""
    d = np.dtype(dt)
    n = 256 // d.itemsize + 3 * 32 // d.itemsize            # a full repeat and a masked tail
    if d.kind == "f":
        a = np.resize(np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0, -2.5, np.finfo(d).max, 3.0,
                                -np.finfo(d).max, 0.5, 7.0], d), n)
        xs = [1.0, -0.0, np.inf, float(np.finfo(d).max)]
    else:
        info = np.iinfo(d)
        a = np.resize(np.array([info.min, info.max, 0, 1, 5, 77, info.max - 1, 3], d), n)
        xs = [1, int(info.max), int(info.min), 6]

    def body(ti, ub):
        f = getattr(ti, api)
        for k, x in enumerate(xs):
            f(ub[f"s{k}"], ub["a"], x)
            f(ub[f"f{k}"], x, ub["a"])
    init = np.full(n, 9, d)                                  # no result below is 9 everywhere
    bufs = {"a": a, **{f"{p}{k}": init.copy() for k in range(len(xs)) for p in "sf"}}
    out = vec_kernel(bufs, body, chip=chip)
    for k, x in enumerate(xs):
        for p, first in (("s", False), ("f", True)):
            want = _scalar_ref(api, a, x, first, dt, chip)
            assert out[f"{p}{k}"].tobytes() == want.tobytes(), (p, x, out[f"{p}{k}"][:12], want[:12])


def test_scalar_forms_keep_the_scalar_instruction_where_the_chip_has_it():
    """SCALAR_COPIED applies only where the scalar row is missing: 910B1 (and SD3403, no public ini: the v200
    family assumed) keep vmaxs / vadds; Ascend310 h_max and int32 h_add with a scalar are vector_dup + vmax /
    vadd; h_and with a scalar is vector_dup + vand on every chip."""
    def ops_of(body, chip, dt="float16"):
        bufs = {k: np.zeros(128, dt) for k in ("a", "b", "d")}
        asm = vec_kernel(bufs, body, chip=chip, build_only=True).program.to_asm()
        return [ln.split("pto.ub.")[1].split("(")[0].split()[0] for ln in asm.splitlines() if "pto.ub." in ln]
    f16 = lambda ti, ub: (ti.h_max(ub["d"], ub["a"], 1.0), ti.h_add(ub["d"], 2.0, ub["a"]))   # noqa: E731
    assert ops_of(f16, "Ascend910B1") == ["vmaxs", "vadds"]
    assert ops_of(f16, "SD3403") == ["vmaxs", "vadds"]
    assert ops_of(f16, "Ascend310") == ["vector_dup", "vmax", "vadds"]
    i32 = lambda ti, ub: (ti.h_add(ub["d"], ub["a"], 3), ti.h_mul(ub["d"], 4, ub["a"]))      # noqa: E731
    assert ops_of(i32, "Ascend910", "int32") == ["vector_dup", "vadd", "vector_dup", "vmul"]
    assert ops_of(i32, "Ascend310P3", "int32") == ["vadds", "vmuls"]
    assert ops_of(lambda ti, ub: ti.h_and(ub["d"], ub["a"], 3), "Ascend910B1", "int16") == ["vector_dup", "vand"]


def test_a_lowering_scratch_that_does_not_fit_ub_says_whose_it_is_and_how_much_to_leave_free():
    """h_div / h_sub with a scalar need a UB scratch since k460 (SCALAR_COPIED; one 32 B block since k472,
    SCALAR_COPY_BYTES); a kernel whose own tensors fill UB exactly ran before and is now refused. The refusal named a
    tensor 'h_div_scalar' the user never declared and told them to free *their* big tensors; it now says the scratch
    is the lowering's of this h_div call and how many bytes to leave free (k465)."""
    from pto_core.errors import CapacityExceeded
    from tbe import tik
    from tbe.common.platform import get_soc_spec, set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    u = ti.Tensor("float16", (128,), name="u", scope=tik.scope_ubuf)
    ti.Tensor("float16", ((get_soc_spec("UB_SIZE") - 512) // 2,), name="pad", scope=tik.scope_ubuf)
    v = ti.Tensor("float16", (128,), name="v", scope=tik.scope_ubuf)
    with raises_tik(CapacityExceeded, match=r"in `tik.h_div`: .*tik.h_div's lowering: its scratch tensor "
                                            r"'h_div_scalar', allocated by the simulator for this call .* needs 32 B "
                                            r"in UB .*Fix: leave 32 B of UB \(scope_ubuf\) free at this tik.h_div "
                                            r"call"):
        ti.h_div(v, u, 3.0)
    with raises_tik(CapacityExceeded, match=r"tik.h_sub's lowering: its scratch tensor 'h_sub_scalar'"):
        ti.h_sub(v, 3.0, u)
    ti.h_add(v, u, 3.0)                       # vadds: no scratch, still fits


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend910"])
def test_a_scalar_copy_needs_only_one_32_byte_block_of_free_ub(chip):
    """k472 (SCALAR_COPY_BYTES): the scalar copy of h_div / h_sub (SCALAR_COPIED), h_sel and h_cmpv was a PAR-lane
    (256 B) scratch read at repeat stride 0, so a kernel leaving less than 256 B of UB free was refused with
    CapacityExceeded. It is now one 32 B block read at block and repeat stride 0: h_div / h_sub run with 32 B free,
    h_cmpv / h_sel (which also copy a tail's mask bits to a 32 B scratch) with 64 B, with the same results (several
    repeats and a tail; Ascend910 runs h_sel one vec_sel mode 0 per repeat)."""
    from tbe import tik
    from tbe.common.platform import get_soc_spec, set_current_compile_soc_info
    set_current_compile_soc_info(chip)
    n = 128 * 2 + 32                                       # 2 repeats + a tail; every tensor whole 32 B blocks
    rng = np.random.default_rng(472)
    a = rng.uniform(-4, 4, n).astype(np.float16)
    a[:4] = [0.0, -0.0, 65504, 6e-5]
    used = 5 * n * 2 + n                                   # vec_kernel's a, o1..o4 in UB, and the mask m

    def body(ti, ub):
        m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
        with ti.new_stmt_scope():
            ti.Tensor("uint8", (get_soc_spec("UB_SIZE") - used - 32,), name="pad", scope=tik.scope_ubuf)
            ti.h_div(ub["o1"], ub["a"], 3.0)
            ti.h_sub(ub["o2"], 1.5, ub["a"])
        with ti.new_stmt_scope():
            ti.Tensor("uint8", (get_soc_spec("UB_SIZE") - used - 64,), name="pad2", scope=tik.scope_ubuf)
            ti.h_cmpv(m, ub["a"], 0.5, "LT")
            ti.h_sel(ub["o3"], ub["a"], -2.0, m)
            ti.h_sel(ub["o4"], 7.0, ub["a"], m)
    z = np.full(n, 9, np.float16)
    out = vec_kernel({"a": a, "o1": z, "o2": z, "o3": z, "o4": z}, body, chip=chip)
    af = a.astype(np.float64)
    np.testing.assert_array_equal(out["o1"], r16(af / r16(3.0).astype(np.float64)))
    np.testing.assert_array_equal(out["o2"], r16(1.5 - af))
    np.testing.assert_array_equal(out["o3"], np.where(a < 0.5, a, np.float16(-2)))
    np.testing.assert_array_equal(out["o4"], np.where(a < 0.5, np.float16(7), a))
