"""TIK ``h_*`` APIs on views whose length is a run-time value (``ub[0:n]`` with a Scalar ``n``, tensors
declared with Scalar shapes): for every length -- 0, 1, around PAR and around 255 repeats -- the
kernel gives what the same call on the static length gives (built separately, bit for bit), what
numpy gives, and leaves everything past ``n`` alone; the errors that remain name the call."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik
from .test_vector_h import _row_sum_ref
from .vec_helpers import TIK_DTYPES

CHIP = "Ascend310P3"
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SENTINEL = 7


def _build(bufs: dict, body, n, extra_scalars=()):
    """A kernel running ``body(ti, ub, n)`` on UB copies of ``bufs``; ``n`` an int (static) or None (an
    int32 InputScalar ``n``, fed at run time). Returns a function feed-length -> outputs dict."""
    set_current_compile_soc_info(CHIP)
    ti = tik.Tik()
    gm, ub = {}, {}
    for name, arr in bufs.items():
        dt = TIK_DTYPES[arr.dtype]
        gm[name] = ti.Tensor(dt, (arr.size,), name=name, scope=tik.scope_gm)
        ub[name] = ti.Tensor(dt, (arr.size,), name=name + "_ub", scope=tik.scope_ubuf)
        ti.data_move(ub[name], gm[name], 0, 1, arr.nbytes // 32, 0, 0)
    ins = [ti.InputScalar("int32", name="n")] if n is None else []
    body(ti, ub, ins[0] if ins else n)
    for name, arr in bufs.items():
        ti.data_move(gm[name], ub[name], 0, 1, arr.nbytes // 32, 0, 0)
    ti.BuildCCE(kernel_name="h_dyn", inputs=list(gm.values()) + ins, outputs=list(gm.values()))

    def run(length):
        feed = {k: v.copy() for k, v in bufs.items()}
        if ins:
            feed["n"] = length
        return dict(zip(bufs, ti.tikdb.start_debug(feed_dict=feed, interactive=False)))
    return run


def _check(bufs, body, n, want):
    """Dynamic == static (n >= 1) == ``want(n)`` (name -> expected array)."""
    got = _build(bufs, body, None)(n)
    expect = want(n)
    for k in expect:
        np.testing.assert_array_equal(got[k], expect[k], err_msg=f"{k}, n={n}")
    if n >= 1:
        static = _build(bufs, body, n)(n)
        for k in bufs:
            np.testing.assert_array_equal(got[k], static[k], err_msg=f"{k}: dynamic vs static, n={n}")


N = 1040                                            # f16: 8 full repeats + 16; f32: 16 repeats + 16
LENGTHS = st.one_of(st.sampled_from([0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 255, 256, 1024, N]),
                    st.integers(0, N))
RNG = np.random.default_rng(7)
A16 = RNG.uniform(0.25, 3, N).astype(np.float16)
B16 = RNG.uniform(0.25, 3, N).astype(np.float16)


def _elementwise_body(ti, ub, n):
    s = ti.Scalar("float16", init_value=0.5)
    ti.h_add(ub["o1"][0:n], ub["a"][0:n], ub["b"][0:n])
    ti.h_max(ub["o2"][0:n], ub["a"][0:n], ub["b"][0:n])
    ti.h_sub(ub["o3"][0:n], ub["a"][0:n], s)              # ub_a[0:len] - max_s (ctc/softmax style)
    ti.h_exp(ub["o4"][0:n], ub["a"][0:n])
    ti.h_mul(ub["a"][0:n], ub["a"][0:n], ub["b"][0:n])    # in place
    ti.h_duplicate(ub["o5"][0:n], 2.5)
    ti.h_cast(ub["f"][0:n], ub["b"][0:n], "none")


@SETTINGS
@given(n=LENGTHS)
def test_elementwise_float16_run_time_length(n):
    z = np.full(N, SENTINEL, np.float16)
    bufs = {"a": A16, "b": B16, "o1": z, "o2": z, "o3": z, "o4": z, "o5": z, "f": np.full(N, SENTINEL, np.float32)}
    af, bf = A16.astype(np.float64), B16.astype(np.float64)

    def want(n):
        def put(v):
            out = np.full(N, SENTINEL, v.dtype)
            out[:n] = v[:n]
            return out
        a = A16.copy()
        a[:n] = (af * bf).astype(np.float16)[:n]
        return {"o1": put((af + bf).astype(np.float16)), "o2": put(np.maximum(A16, B16)),
                "o3": put((af - 0.5).astype(np.float16)), "o4": put(np.exp(af).astype(np.float16)),
                "o5": put(np.full(N, 2.5, np.float16)), "f": put(B16.astype(np.float32)), "a": a}
    _check(bufs, _elementwise_body, n, want)


@SETTINGS
@given(n=st.integers(0, 600))
def test_elementwise_int32_and_scalar_shaped_tensors(n):
    """A UB tensor declared with a Scalar shape (``max_mem_size``) taken whole, as sparse_reshape does."""
    x = RNG.integers(-1000, 1000, 600).astype(np.int32)

    def body(ti, ub, n):
        mm = None if isinstance(n, int) else 600 * 4    # TIK: max_mem_size of a static shape must be its size
        t = ti.Tensor("int32", (n,), name="t", scope=tik.scope_ubuf, max_mem_size=mm)
        f = ti.Tensor("float32", (n,), name="f", scope=tik.scope_ubuf, max_mem_size=mm)
        ti.h_duplicate(t, 3)
        ti.h_add(t, t, ub["x"][0:n])
        ti.h_cast(f, t, "none")
        ti.h_cast(ub["y"][0:n], f, "round")
        ti.h_mul(ub["x"][0:n], ub["y"][0:n], ub["y"][0:n])

    def want(n):
        y = np.full(600, SENTINEL, np.int32)
        y[:n] = x[:n] + 3
        xx = x.copy()
        xx[:n] = y[:n] * y[:n]
        return {"y": y, "x": xx}
    _check({"x": x, "y": np.full(600, SENTINEL, np.int32)}, body, n, want)


@SETTINGS
@given(n=st.integers(0, 160), rows=st.integers(0, 6))
def test_run_time_rows_and_columns_of_a_2d_slice(n, rows):
    """``t[0:rows, 0:n]`` of a (6, 160) f32 tensor: rows in a for_range, each a run-time length."""
    x = RNG.uniform(-3, 3, 6 * 160).astype(np.float32)
    set_current_compile_soc_info(CHIP)
    ti = tik.Tik()
    gx = ti.Tensor("float32", (6 * 160,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (6, 160), name="ub", scope=tik.scope_ubuf)
    r, c = ti.InputScalar("int32", name="r"), ti.InputScalar("int32", name="c")
    ti.data_move(ub, gx, 0, 1, 6 * 160 // 8, 0, 0)
    ti.h_relu(ub[0:r, 0:c], ub[0:r, 0:c])
    ti.h_add(ub[0:r, 0:c], ub[0:r, 0:c], 1.0)
    ti.data_move(gx, ub, 0, 1, 6 * 160 // 8, 0, 0)
    ti.BuildCCE("rows", [gx, r, c], [gx])
    got, = ti.tikdb.start_debug({"x": x.copy(), "r": rows, "c": n}, interactive=False)
    want = x.reshape(6, 160).copy()
    want[:rows, :n] = np.maximum(want[:rows, :n], 0) + np.float32(1)
    np.testing.assert_array_equal(np.asarray(got).reshape(6, 160), want)


@SETTINGS
@given(n=st.one_of(st.sampled_from([1, 63, 64, 65, 127, 128, 129, 176]), st.integers(1, 176)),
       dtype=st.sampled_from(["float16", "float32"]))
def test_reductions_run_time_length(n, dtype):
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    x = RNG.integers(-60, 60, 704).astype(dt)             # integers: ties for argmax/argmin
    k = 32 // dt.itemsize

    def body(ti, ub, n):
        s, m, i = ti.Scalar(dtype), ti.Scalar(dtype), ti.Scalar("int32")
        ti.h_reduce_sum(s, ub["x"][0:n], None)
        ti.h_reduce_max(m, ub["x"][0:n], None)
        ti.h_reduce_argmin(i, ub["x"][0:n], None)
        ub["o"][0].set_as(s)
        ub["o"][1].set_as(m)
        ub["i"][0].set_as(i)
        t = ub["x"].reshape((4, 176))
        ti.h_reduce_min(ub["r"][0:4], t[0:4, 0:n], 1)
        ti.h_reduce_argmax(ub["j"][0:4], t[0:4, 0:n], 1)

    want = {"o": np.array([_row_sum_ref(x[:n], dt, par), x[:n].max()] + [0] * (k - 2), dt),
            "i": np.array([x[:n].argmin()] + [0] * 7, np.int32),
            "r": np.array(list(x.reshape(4, 176)[:, :n].min(axis=1)) + [0] * (k - 4), dt),
            "j": np.array(list(x.reshape(4, 176)[:, :n].argmax(axis=1)) + [0] * 4, np.int32)}
    bufs = {"x": x, "o": np.zeros(k, dt), "i": np.zeros(8, np.int32), "r": np.zeros(k, dt),
            "j": np.zeros(8, np.int32)}
    _check(bufs, body, n, lambda n: want)


def test_long_reductions_fold_column_chunks_at_run_time():
    """Rows longer than PAR (the for_range of masked folds) up to the whole tensor."""
    x = RNG.uniform(-2, 2, 2000).astype(np.float16)

    def body(ti, ub, n):
        s = ti.Scalar("float16")
        ti.h_reduce_sum(s, ub["x"][0:n], None)
        ub["o"][0].set_as(s)
    run = _build({"x": x, "o": np.zeros(16, np.float16)}, body, None)
    for n in (129, 256, 257, 1000, 2000):
        assert run(n)["o"][0] == _row_sum_ref(x[:n], np.dtype(np.float16), 128), n


def test_h_data_move_scalar_shaped_ub_and_run_time_gm_window():
    """sparse_reshape's pattern: a UB tensor of shape (rows, cols) Scalars filled from a GM window."""
    set_current_compile_soc_info("Ascend910B1")
    W = 96
    ti = tik.Tik()
    rows, cols = ti.InputScalar("int32", name="rows"), ti.InputScalar("int32", name="cols")
    x = ti.Tensor("int32", (64 * W,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (64, W), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (rows, cols), name="ub", scope=tik.scope_ubuf, max_mem_size=64 * W * 4)
    ti.h_data_move(ub, x[0:rows * W].reshape((rows, W))[:, 0:cols])
    ti.h_add(ub, ub, 1)
    ti.h_data_move(y[0:rows, 0:cols], ub)
    ti.BuildCCE("dm", [x, rows, cols], [y])
    xv = np.arange(64 * W, dtype=np.int32)
    for r, c in ((3, 16), (5, 40), (0, 8), (4, 96), (2, 0)):
        got, = ti.tikdb.start_debug({"x": xv, "rows": r, "cols": c}, interactive=False)
        np.testing.assert_array_equal(np.asarray(got).reshape(64, W)[:r, :c], xv.reshape(64, W)[:r, :c] + 1)


def test_lowering_is_a_few_ops_with_run_time_repeats():
    """One group of full repeats per 255 the tensor could need, plus one tail op: no per-element work."""
    def body(ti, ub, n):
        ti.h_abs(ub["a"][0:n], ub["a"][0:n])
    set_current_compile_soc_info(CHIP)
    ti = tik.Tik()
    a = ti.Tensor("float16", (40000,), name="a", scope=tik.scope_ubuf)
    n = ti.InputScalar("int32", name="n")
    ti.h_abs(a[0:n], a[0:n])
    ti.BuildCCE("k", [n], [])
    ops = [ln for ln in ti.program.to_asm().splitlines() if "pto.ub.vabs" in ln]
    assert len(ops) == 2 + 1                       # 40000 / 128 = 312 repeats -> 2 groups, + tail


# ----------------------------------------------------------------------------- errors

def _kernel(body, chip=CHIP):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor("float16", (256,), name="x", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    d = ti.Tensor("float16", (256,), name="d", scope=tik.scope_ubuf)
    n = ti.InputScalar("int32", name="n")
    ti.data_move(ub, x, 0, 1, 16, 0, 0)
    ti.data_move(d, x, 0, 1, 16, 0, 0)
    body(ti, ub, d, n)
    ti.data_move(x, d, 0, 1, 16, 0, 0)
    ti.BuildCCE("bad", [x, n], [x])
    return ti


def _run(ti, n):
    return ti.tikdb.start_debug({"x": np.ones(256, np.float16), "n": n}, interactive=False)


def test_error_reduce_axis0_with_run_time_rows_names_the_call():
    with raises_tik(UnsupportedOp, match=r"test_vector_h_dynamic\.py:\d+ .*h_reduce_sum.*run-time number of rows"):
        _kernel(lambda ti, ub, d, n: ti.h_reduce_sum(d[0:16], ub.reshape((16, 16))[0:n, :], 0))


def test_error_reduce_all_of_strided_run_time_rows():
    with raises_tik(UnsupportedOp, match=r"h_reduce_max.*run-time number of rows"):
        _kernel(lambda ti, ub, d, n: ti.h_reduce_max(ti.Scalar("float16"), ub.reshape((16, 16))[0:n, 0:8],
                                                     None))


def test_error_reduction_of_run_time_length_zero():
    def body(ti, ub, d, n):
        s = ti.Scalar("float16")
        ti.h_reduce_sum(s, ub[0:n], None)
        d[0].set_as(s)
    ti = _kernel(body)
    assert np.asarray(_run(ti, 5)[0])[0] == 5
    with raises_tik(IllegalOperand, match=r"test_vector_h_dynamic\.py:\d+ .*h_reduce_sum.*at least one element"):
        _run(ti, 0)


def test_error_run_time_shapes_differ():
    ti = _kernel(lambda ti, ub, d, n: ti.h_add(d[0:n], ub[0:n], ub[0:n + 16]))
    with raises_tik(IllegalOperand, match=r"h_add.*same shape"):
        _run(ti, 16)


def test_error_h_data_move_run_time_row_not_whole_blocks():
    ti = _kernel(lambda ti, ub, d, n: ti.h_data_move(d[0:n], ub[0:n]))
    np.testing.assert_array_equal(np.asarray(_run(ti, 32)[0]), 1)
    with raises_tik(IllegalOperand, match=r"h_data_move.*32 B") as info:
        _run(ti, 20)
    # k445: the length itself, not "bytes of a row of src ... modulo 32 = 8 is outside [0, 0]"
    assert "operand src: the run-time row length of src (2-byte elements) 20 elements is not a multiple of 16 " \
           "elements (32 B: tik.h_data_move moves whole 32-byte blocks)" in str(info.value), str(info.value)


def test_error_run_time_length_past_the_tensor():
    from pto_core.errors import OutOfBounds
    ti = _kernel(lambda ti, ub, d, n: ti.h_exp(d[0:n], ub[0:n]))
    _run(ti, 256)
    with raises_tik(OutOfBounds, match=r"h_exp"):
        _run(ti, 300)


def test_groups_past_a_run_time_length_do_not_run():
    """RUNTIME_GROUPS_GUARDED: a run-time length is lowered to as many groups of up to 255 repeats as the
    longest row the tensor can hold needs; groups past the length the kernel computes are skipped (no op
    runs), and lengths that reach them still get every element."""
    from pto_core import memory
    set_current_compile_soc_info(CHIP)
    cap = 255 * 128 * 2 + 512                       # f16: room for 3 groups of 255 repeats
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (cap,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (cap,), name="y", scope=tik.scope_gm)
    t = ti.Tensor("float16", (n,), name="t", scope=tik.scope_ubuf, max_mem_size=cap * 2)
    ti.data_move(t, x, 0, 1, cap * 2 // 32, 0, 0)
    ti.h_add(t, t, 1.0)
    ti.data_move(y, t, 0, 1, cap * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="groups", inputs=[x, n], outputs=[y])
    xs = (np.arange(cap) % 512).astype(np.float16)
    counts = []
    orig = memory.ExecContext.begin_op

    def counting(self, name, *a, **k):
        if name in ("pto.ub.vadds", "pto.ub.vadd"):
            counts[-1] += 1
        return orig(self, name, *a, **k)
    memory.ExecContext.begin_op = counting
    try:
        for length in (100, 255 * 128 + 5, 255 * 128 + 130, cap):
            counts.append(0)
            got = ti.tikdb.start_debug({"x": xs, "n": length}, interactive=False)[0]
            want = xs.copy()
            want[:length] += np.float16(1)
            assert got[:length].tobytes() == want[:length].tobytes()
    finally:
        memory.ExecContext.begin_op = orig
    assert counts == [2, 2, 3, 4]                   # group 0 and the tail, + group 1, + group 2


def test_error_past_the_tensor_in_a_later_group_names_only_the_users_loops():
    """RUNTIME_GROUPS_GUARDED + HIDDEN_LOOP_VARS: a run-time length past the tensor that fails in the facade's
    loop over groups 2.. of 255 repeats gives the message the unrolled groups gave -- the core and the
    user's loop index, no index of a loop the user never wrote (was ``[at core=0, i=0, i'=2]``)."""
    from pto_core.errors import OutOfBounds
    set_current_compile_soc_info(CHIP)
    cap = 255 * 128 * 2 + 512                       # f16: 3 groups of 255 repeats -> a for_range over 1..2
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (cap,), name="x", scope=tik.scope_gm)
    t = ti.Tensor("float16", (n,), name="t", scope=tik.scope_ubuf, max_mem_size=cap * 2)
    ti.data_move(t, x, 0, 1, cap * 2 // 32, 0, 0)
    with ti.for_range(0, 2):
        ti.h_add(t, t, 1.0)
    ti.data_move(x, t, 0, 1, cap * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="groups_err", inputs=[x, n], outputs=[x])
    xs = np.zeros(cap, np.float16)
    with raises_tik(OutOfBounds, match=r"h_add.*needs elements \[65280, 97920\).*\[at core=0, i=0\] Fix"):
        ti.tikdb.start_debug({"x": xs, "n": 2 * cap}, interactive=False)


@pytest.mark.parametrize("cap,length", [(255 * 128, 256 * 128), (510 * 128, 511 * 128), (510 * 128, 600 * 128),
                                        (510 * 128, 511 * 128 + 5)])
def test_length_past_a_tensor_of_exactly_one_or_two_groups_is_refused(cap, length):
    """RUNTIME_GROUPS_GUARDED: a tensor holding exactly 1 or 2 groups of 255 repeats and a run-time length
    needing more is refused at the call, naming the first repeat past the tensor -- it was cut after the groups
    the tensor holds and accepted (with no tail: no op ran past the tensor)."""
    from pto_core.errors import OutOfBounds
    set_current_compile_soc_info(CHIP)
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (cap,), name="x", scope=tik.scope_gm)
    t = ti.Tensor("float16", (cap,), name="t", scope=tik.scope_ubuf)
    ti.data_move(t, x, 0, 1, cap * 2 // 32, 0, 0)
    ti.h_add(t[0:n], t[0:n], 1.0)
    ti.data_move(x, t, 0, 1, cap * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="exact_groups", inputs=[x, n], outputs=[x])
    xs = np.zeros(cap, np.float16)
    got = ti.tikdb.start_debug({"x": xs.copy(), "n": cap}, interactive=False)[0]
    assert (got == 1).all()                         # the whole tensor: every group runs
    end = cap + min(length // 128 * 128 - cap, 255 * 128)
    with raises_tik(OutOfBounds, match=rf"h_add.*needs elements \[{cap}, {end}\) but the tensor has only {cap}"):
        ti.tikdb.start_debug({"x": xs.copy(), "n": length}, interactive=False)


def test_h_cmpv_length_past_views_of_exactly_whole_mask_groups_is_refused():
    """The mask path (groups of MASK_GROUP repeats) the same way: a 32256-element f16 view (one full group of
    252 repeats) and a run-time length of 32384 is refused at the call (it was cut after the group and accepted)."""
    from pto_core.errors import OutOfBounds
    set_current_compile_soc_info(CHIP)
    cap = 252 * 128
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (cap,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (cap,), name="y", scope=tik.scope_gm)
    t = ti.Tensor("float16", (cap,), name="t", scope=tik.scope_ubuf)
    m = ti.Tensor("bool", (cap,), name="m", scope=tik.scope_ubuf)
    ti.data_move(t, x, 0, 1, cap * 2 // 32, 0, 0)
    ti.h_cmpv(m[0:n], t[0:n], 0.0, "GE")
    ti.h_sel(t[0:n], t[0:n], 5.0, m[0:n])
    ti.data_move(y, t, 0, 1, cap * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="mask_groups", inputs=[x, n], outputs=[y])
    xs = (np.arange(cap) % 7 - 3).astype(np.float16)
    got = ti.tikdb.start_debug({"x": xs, "n": cap}, interactive=False)[0]
    np.testing.assert_array_equal(got, np.where(xs >= 0, xs, np.float16(5)))
    with raises_tik(OutOfBounds, match=rf"h_cmpv.*needs elements \[{cap}, {cap + 128}\) but the tensor has only {cap}"):
        ti.tikdb.start_debug({"x": xs, "n": cap + 128}, interactive=False)


def test_the_facades_own_loops_are_hidden_from_error_context():
    """HIDDEN_LOOP_VARS: loops the facade writes for its own lowering (an h_* op's run-time rows, a run-time
    reduction's column folds, groups 2.. of 255 repeats) are marked hidden, so an error inside one names only
    the core and the user's loops; the user's for_range stays visible."""
    from pto_core.program import For, walk_stmts
    set_current_compile_soc_info(CHIP)
    ti = tik.Tik()
    r = ti.InputScalar("int32", name="r")
    n = ti.InputScalar("int32", name="n")
    cap = 255 * 128 * 3
    x = ti.Tensor("float16", (cap,), name="x", scope=tik.scope_gm)
    rows = ti.Tensor("float16", (r, 128), name="rows", scope=tik.scope_ubuf, max_mem_size=4 * 128 * 2)
    flat = ti.Tensor("float16", (n,), name="flat", scope=tik.scope_ubuf, max_mem_size=cap * 2)
    acc = ti.Tensor("float16", (16,), name="acc", scope=tik.scope_ubuf)
    total = ti.Scalar("float16", name="total")
    with ti.for_range(0, 2):
        ti.h_add(rows[:, 0:64], rows[:, 0:64], 1.0)     # run-time rows (a strided view)
        ti.h_add(flat, flat, 1.0)                   # run-time length over 2+ groups
        ti.h_reduce_sum(total, flat, axis=0)        # run-time column folds
    acc[0].set_as(total)
    ti.data_move(x, acc, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="hidden_loops", inputs=[x, r, n], outputs=[x])
    loops = [s for s in walk_stmts(ti.program.body) if isinstance(s, For)]
    visible = [s for s in loops if not s.var.hidden]
    assert len(loops) >= 4 and len(visible) == 1    # the user's for_range only
