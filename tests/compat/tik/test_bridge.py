"""Mixed kernels: ``tensor.pto_ptr()`` and ``pto.*`` calls recorded inside a TIK kernel
(provenance, auto-sync footprints, routing, errors)."""
import inspect

import numpy as np
import pytest

from pto_core import Machine, pto
from pto_core import program as P
from pto_core.errors import IllegalOperand, PtoError
from pto_core.program import OpStmt, walk_stmts
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

N = 128


def _ops(ti) -> list:
    return [(s.call.spec.name, s.where.call) for s in walk_stmts(ti.program.body) if isinstance(s, OpStmt)]


def _copy_kernel(ti):
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (N,), name="ub", scope=tik.scope_ubuf)
    return x, y, ub


def test_pto_ops_on_tik_tensors_compute_and_carry_their_provenance():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    line = inspect.currentframe().f_lineno + 1
    pto.mte_gm_ub(x.pto_ptr(), ub.pto_ptr(), 0, 2 * N, nburst=(1, 2 * N, 2 * N))
    with ti.for_range(0, 2) as i:
        pto.ub.vadds(ub[i * 64].pto_ptr(), ub[i * 64].pto_ptr(), 1.5, 1, mask=64)
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)
    build(ti, "mixed", [x], [y])
    a = np.random.default_rng(0).standard_normal(N).astype(np.float16)
    out, = run(ti, {"x": a})
    np.testing.assert_array_equal(out, (a + np.float16(1.5)).astype(np.float16))
    ops = _ops(ti)
    assert ("mte_gm_ub", "pto.mte_gm_ub") in ops and ("ub.vadds", "pto.ub.vadds") in ops
    first = next(s for s in walk_stmts(ti.program.body) if isinstance(s, OpStmt) and s.call.spec.name == "mte_gm_ub")
    assert first.where.file == __file__ and first.where.line == line
    # auto-sync covers the PTO ops: MTE2 -> V before the vector op, V -> MTE3 before the store
    assert ("set_flag", "pto.ub.vadds") in ops and ("set_flag", "tik.data_move") in ops
    assert ti.tikdb.reports == []


def test_pto_ptr_types_offsets_and_views():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    u2 = ti.Tensor("float16", (N,), name="u2", scope=tik.scope_ubuf)
    p = u2[16].pto_ptr()
    assert p.type == P.PtrType("f16", "ub") and P.static_addr(p) == u2.storage.addr + 32
    q = u2.reinterpret_cast_to("float32")[4].pto_ptr()
    assert q.type == P.PtrType("f32", "ub") and P.static_addr(q) == u2.storage.addr + 16
    g = x[8].pto_ptr()
    assert g.type == P.PtrType("f16", "gm") and x.storage.gm in list(P.walk(g))
    assert ti.pto_ptr(ub).type == ub.pto_ptr().type
    # derived pointers keep their tensor: p + n is accepted as an operand
    pto.mte_gm_ub(x.pto_ptr() + 64, ub.pto_ptr() + 64, 0, N, nburst=(1, N, N))
    pto.mte_gm_ub(x.pto_ptr(), ub.pto_ptr(), 0, N, nburst=(1, N, N))
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)
    build(ti, "views", [x], [y])
    a = np.arange(N, dtype=np.float16)
    np.testing.assert_array_equal(run(ti, {"x": a})[0], a)


def test_tik_scalars_and_loop_indices_are_operands():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    k = ti.Scalar("float32", name="k", init_value=2.0)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    with ti.for_range(0, 2) as i:
        pto.ub.vmuls(ub[i * 64].pto_ptr(), ub[i * 64].pto_ptr(), k, 1, mask=64)
    nb = ti.Scalar("int64", name="nb", init_value=2 * N)
    pto.mte_ub_gm(ub.pto_ptr(), y.pto_ptr(), nb, nburst=(1, nb, nb))
    build(ti, "scalars", [x], [y])
    a = np.arange(N, dtype=np.float16) / 4
    np.testing.assert_array_equal(run(ti, {"x": a})[0], a * np.float16(2))


def test_pointerless_ops_go_to_the_kernel_being_traced():
    # set_atomic_add(1) migrated to its two PTO ops: a multi-core float32 reduction into GM
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float32", (4, 64), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm, is_atomic_add=True)
    with ti.for_range(0, 4, block_num=4) as core:
        ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[core, 0], 0, 1, 8, 0, 0)
        pto.set_atomic_f32()
        pto.set_atomic_add()
        ti.data_move(y, ub, 0, 1, 8, 0, 0)
        pto.set_atomic_none()
    build(ti, "atomic", [x], [y])
    a = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    acc = np.zeros(64, np.float32)
    for row in a:
        acc = (acc + row).astype(np.float32)
    np.testing.assert_array_equal(run(ti, {"x": a})[0], acc)
    assert ("set_atomic_f32", "pto.set_atomic_f32") in _ops(ti)


def test_eager_ops_stay_eager_once_a_machine_is_created_after_the_trace():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    before = len(_ops(ti))
    m = Machine("A2A3")
    pto.set_flag("MTE2", "V", 1)                  # runs on m, not recorded into the unbuilt kernel
    pto.wait_flag("MTE2", "V", 1)
    assert len(_ops(ti)) == before
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)      # a TIK call: the kernel is being traced again
    pto.pipe_barrier("ALL")
    assert _ops(ti)[-1] == ("pipe_barrier", "pto.pipe_barrier")
    del m


def test_full_barrier_ends_pending_accesses_and_user_flags_use_other_events():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    pto.pipe_barrier("ALL")
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)      # MTE2 -> MTE3 known complete: no pair
    names = [n for n, _ in _ops(ti)]
    assert names == ["mte_gm_ub", "pipe_barrier", "mte_ub_gm"]
    pto.set_flag("MTE3", "MTE2", 3)
    pto.wait_flag("MTE3", "MTE2", 3)
    build(ti, "barrier", [x], [y])
    a = np.arange(N, dtype=np.float16)
    np.testing.assert_array_equal(run(ti, {"x": a})[0], a)


def test_event0_is_reserved_for_auto_sync():
    ti = tik.Tik()
    _copy_kernel(ti)
    with raises_tik(IllegalOperand, match="EVENT_ID0") as e:
        pto.set_flag("MTE2", "V", 0)
    assert e.value.operand == "event" and "1..7" in str(e.value)


def test_pointer_errors():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    with raises_tik(IllegalOperand, match="not a pointer to a tensor of this TIK kernel") as e:
        pto.mte_gm_ub(x.pto_ptr(), P.PtrFromInt(P.Const(0, "s64"), P.PtrType("f16", "ub")), 0, 32,
                      nburst=(1, 32, 32))
    assert e.value.operand == "dst" and "pto_ptr()" in str(e.value)
    other = tik.Tik()
    ub2 = other.Tensor("float16", (N,), name="ub2", scope=tik.scope_ubuf)
    with pytest.raises(IllegalOperand, match="2 different TIK kernels"):
        pto.mte_gm_ub(x.pto_ptr(), ub2.pto_ptr(), 0, 32, nburst=(1, 32, 32))
    px, pu = x.pto_ptr(), ub.pto_ptr()
    build(ti, "done", [x], [y])
    with raises_tik(IllegalOperand, match="after BuildCCE"):
        pto.mte_gm_ub(px, pu, 0, 32, nburst=(1, 32, 32))
    with raises_tik(IllegalOperand, match="already built"):
        ub.pto_ptr()


def test_a_tensor_used_after_its_scope_was_reused_is_reported():
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    with ti.new_stmt_scope():
        a = ti.Tensor("float16", (N,), name="a", scope=tik.scope_ubuf)
        pa = a.pto_ptr()
    ti.Tensor("float16", (N,), name="b", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="now belong to tensor 'b'"):
        pto.mte_gm_ub(x.pto_ptr(), pa, 0, 32, nburst=(1, 32, 32))


def test_op_errors_carry_the_user_line():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    line = inspect.currentframe().f_lineno + 1
    pto.ub.vadds(ub.pto_ptr(), ub.pto_ptr(), 1.0, 300)          # repeat > 255: found when it runs
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)
    build(ti, "bad_repeat", [x], [y])
    with raises_tik(IllegalOperand, match="repeat") as e:
        run(ti, {"x": np.zeros(N, np.float16)})
    assert (e.value.where.file, e.value.where.line) == (__file__, line)
    assert "pto.ub.vadds" in str(e.value) and "255" in str(e.value)


def _offset_kernel(form):
    """y = x with 1.0 added to elements [n + 64*i, n + 64*i + 64) for i in 0, 1 (n = 0 at run time)."""
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    n = ti.Scalar("int32", init_value=64)
    with ti.for_range(0, 2) as i:
        if form == "tik":
            ti.vec_adds(64, ub[i * 64 + n - 64], ub[i * 64 + n - 64], 1.0, 1, 8, 8)
        else:
            if form == "plus":
                p = ub.pto_ptr() + (i * 64 + n - 64)              # element offset: a TIK Expr
            elif form == "minus":
                p = (ub.pto_ptr() + i * 64) - (64 - n)          # a loop index, then a Scalar expression
            else:
                p = ub.pto_ptr().byte_offset(i * 128 + n * 2 - 128)
            pto.ub.vadds(p, p, 1.0, 1, mask=64, rep_stride=(8, 8))
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)
    return build(ti, f"offset_{form}", [x], [y])


def test_pointer_arithmetic_takes_tik_scalars_and_loop_indices():
    # tik_core.md §7: `p + n` moves n elements and TIK Scalars / loop indices are valid operands
    # (was IllegalOperand "cannot use Scalar ... as a program value", without the user's line)
    a = np.random.default_rng(1).standard_normal(N).astype(np.float16)
    want, = run(_offset_kernel("tik"), {"x": a})
    assert (want != a).all()
    for form in ("plus", "minus", "bytes"):
        got, = run(_offset_kernel(form), {"x": a})
        assert got.tobytes() == want.tobytes(), form


def test_pointer_arithmetic_errors_name_the_user_line():
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    f = ti.Scalar("float32", init_value=1.0)
    for make in (lambda: ub.pto_ptr() + f, lambda: ub.pto_ptr() - 1.5, lambda: ub.pto_ptr().byte_offset(2.5)):
        with pytest.raises(IllegalOperand, match="pointer offsets must be integers") as e:
            make()
        assert e.value.where is not None and e.value.where.file == __file__, str(e.value)
        assert "Fix: offset by a whole number of elements" in str(e.value)     # what to do, not only what is wrong
    assert P.static_addr(ub.pto_ptr() - np.int64(2)) == ub.storage.addr - 4


def test_a_pointer_offset_past_int64_is_refused_not_wrapped():
    """``index`` arithmetic wraps modulo 2**64, so ``p + 2**64`` was silently ``p`` (a kernel then wrote ub[0:64]
    with no report: h_review248). Offsets outside int64 are refused at the user's line; the int64 edge is kept."""
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    for off in (2 ** 64, -2 ** 64, 2 ** 70, np.uint64(2 ** 63)):
        with pytest.raises(IllegalOperand, match="does not fit a 64-bit index") as e:
            ub.pto_ptr() + off
        assert e.value.where is not None and e.value.where.file == __file__ and e.value.hint, str(e.value)
    assert P.static_addr(ub.pto_ptr() + (2 ** 63 - 1)) is not None


def test_a_run_time_index_past_int64_is_refused_not_wrapped():
    """The run-time twin of the test above: an index computed from an int64 Scalar whose exact value leaves int64
    (s * 4 with s = 2**62) wrapped to 0, and data_move wrote ub[0:64] silently. Refused at the call's line."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (128,), name="ub", scope=tik.scope_ubuf)
    s = ti.Scalar("int64", init_value=2 ** 62)
    ti.data_move(ub, y, 0, 1, 16, 0, 0)
    line = inspect.currentframe().f_lineno + 2
    with ti.for_range(0, 1) as i:
        ti.data_move(ub[s * (i + 1) * 4], x, 0, 1, 8, 0, 0)
    ti.data_move(y, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="wrap_rt", inputs=[x, y], outputs=[y])
    with raises_tik(IllegalOperand, match="does not fit a 64-bit index") as e:
        run(ti, {"x": np.ones(64, np.float32), "y": np.zeros(128, np.float32)})
    assert (e.value.where.file, e.value.where.line) == (__file__, line) and e.value.value == 2 ** 64, str(e.value)


def _u64_index_kernel(form, u_value):
    """Move 8 f32 from ``ub[16 + u]`` (``form`` "sum") or ``ub[16:][u]`` ("sub") to y; ``u`` a uint64 Scalar."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    u = ti.Scalar("uint64", init_value=u_value)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.data_move(y, ub[16 + u] if form == "sum" else ub[16:][u], 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name=f"u64_{form}", inputs=[x], outputs=[y])
    return ti


def test_a_u64_index_of_a_sub_view_is_the_u64_sum_as_in_tik():
    """``ub[16:][u]`` is TIK's ``16 + u`` in uint64, as ``ub[16 + u]``: it wraps as C does, and a sum >= 2**63 is
    the documented refusal. The index was converted to an s64 offset first, so u = 2**63 addressed ub at
    -2**63 + 16 (an OutOfBounds at a negative address) and 2**64 - 20 a Misaligned at -16."""
    x = np.arange(64, dtype=np.float32)
    for u in (8, 2 ** 64 - 8, 2 ** 63, 2 ** 64 - 20, 2 ** 64 - 1):
        got = []
        for form in ("sum", "sub"):
            try:
                got.append(run(_u64_index_kernel(form, u), {"x": x})[0].tolist())
            except PtoError as e:
                got.append((type(e).__name__, e.value))
        assert got[0] == got[1], (u, got)
        if u in (2 ** 63, 2 ** 64 - 20):
            assert got[1] == ("TikIllegalOperand", (16 + u) % 2 ** 64), (u, got)


def test_a_u64_index_keeps_its_dimension_as_any_scalar_index():
    """A uint64 Scalar index keeps the indexed dimension with length 1, as an int64 one does (TIK's
    _normalize_slice): ``ub[u, 0:8]`` is 1x8, so a further single index counts from the tensor's start
    (FLAT_INDEX_FROM_TENSOR_START). Was: the U64_INDEX_SUM_IN_U64 path dropped the dimension (shape [8]), so
    ``ub[u, 0:8][8]`` read row u + 1 instead of row 1."""
    import warnings
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    got = {}
    for dt in ("int64", "uint64"):
        ti = tik.Tik()
        xg = ti.Tensor("float32", (4, 8), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
        ub = ti.Tensor("float32", (4, 8), name="ub", scope=tik.scope_ubuf)
        flat = ti.Tensor("float32", (32,), name="flat", scope=tik.scope_ubuf)
        u = ti.Scalar(dt, init_value=2)
        assert (ub[u].shape, ub[u, 0:8].shape, ub[u, 3].shape, flat[u].shape, flat[8:][u].shape) == \
            ([1], [1, 8], [1, 1], [1], [1]), dt
        ti.data_move(ub, xg, 0, 1, 4, 0, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # FlatIndexWarning: the flat index is the point here
            ti.data_move(y, ub[u, 0:8][8], 0, 1, 1, 0, 0)
        build(ti, f"u64_dim_{dt}", [xg], [y])
        got[dt] = run(ti, {"x": x})[0]
    np.testing.assert_array_equal(got["int64"], x[1])
    np.testing.assert_array_equal(got["uint64"], x[1])


def _spill_kernel(offset, in_loop=False):
    """vadds of 128 f16 lanes at ``ub.pto_ptr() + offset`` on a 128-element ``ub``; ``nb`` follows it in UB."""
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    nb = ti.Tensor("float16", (N,), name="nb", scope=tik.scope_ubuf)
    y2 = ti.Tensor("float16", (N,), name="y2", scope=tik.scope_gm)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    ti.data_move(nb, x, 0, 1, N // 16, 0, 0)
    line = inspect.currentframe().f_lineno + 3
    if in_loop:
        with ti.for_range(0, 3) as i:
            pto.ub.vadds(ub.pto_ptr() + i * offset, ub.pto_ptr() + i * offset, 1.0, 1, mask=128)
    else:
        pto.ub.vadds(ub.pto_ptr() + offset, ub.pto_ptr() + offset, 1.0, 1, mask=128)
    ti.data_move(y2, nb, 0, 1, N // 16, 0, 0)       # MTE3 reads nb before any V -> MTE3 pair
    ti.data_move(y, ub, 0, 1, N // 16, 0, 0)
    return build(ti, "spill", [x], [y, y2]), line


def test_a_pto_op_running_past_its_tik_tensor_is_out_of_bounds():
    # PTO_OPS_STAY_IN_TENSORS: TIK refuses the same vec_adds ("tensor overflow"); the PTO op used to
    # change the neighbouring tensor nb silently (or fail the hazard verifier asking for EVENT_ID0 flags)
    from pto_core.errors import OutOfBounds
    for in_loop, offset in ((False, 64), (True, 32)):
        ti, line = _spill_kernel(offset, in_loop)
        with raises_tik(OutOfBounds, match="outside the tensor") as e:
            run(ti, {"x": np.zeros(N, np.float16)})
        assert (e.value.where.file, e.value.where.line) == (__file__, line + (0 if in_loop else 2))
        assert "tensor 'ub'" in str(e.value) and "pto.ub.vadds" in str(e.value)
    ti, _ = _spill_kernel(0)                          # inside the tensor: runs
    a = np.arange(N, dtype=np.float16)
    y, y2 = run(ti, {"x": a})
    assert y.tobytes() == (a + np.float16(1)).tobytes() and y2.tobytes() == a.tobytes()


def test_a_tik_tensor_passed_as_a_pointer_is_told_to_use_pto_ptr():
    """Passing the TIK tensor itself (not ``x.pto_ptr()``) to a PTO op in a TIK kernel: the Fix names
    ``x.pto_ptr()``, not the program builder's ``k.ptr(...)``."""
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    with raises_tik(IllegalOperand, match="expects a pointer") as e:
        pto.mte_gm_ub(x, ub.pto_ptr(), 0, 32, nburst=(1, 32, 32))
    assert e.value.operand == "src" and "x.pto_ptr()" in str(e.value) and "k.ptr(" not in str(e.value)


def test_a_tik_view_or_the_tik_instance_passed_as_a_pointer():
    """A view passed as a pointer: the Fix also says how to take the view's pointer (``x.pto_ptr()``
    alone would point at the tensor's start); the Tik instance is not told to call ``tensor.pto_ptr()``."""
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    with raises_tik(IllegalOperand, match="expects a pointer") as e:
        pto.mte_gm_ub(x.pto_ptr(), ub[32], 0, 32, nburst=(1, 32, 32))
    assert "ub[i].pto_ptr()" in str(e.value)
    with raises_tik(IllegalOperand, match="expects a pointer") as e:
        pto.mte_gm_ub(x.pto_ptr(), ti, 0, 32, nburst=(1, 32, 32))
    assert "tensor.pto_ptr()" not in str(e.value)


def test_a_pto_move_into_the_wrong_space_names_the_move_between_the_tensors_spaces():
    """``pto.mte_gm_l1(x.pto_ptr(), ub.pto_ptr(), ...)`` in a mixed kernel: the TIK error's Fix names
    ``pto.mte_gm_ub`` with its signature (it said 'use one of l1'; `registry.move_op_hint`, user404)."""
    ti = tik.Tik()
    x, _, ub = _copy_kernel(ti)
    with raises_tik(IllegalOperand, match=r"gm -> ub is pto\.mte_gm_ub \(signature: pto\.mte_gm_ub src, dst, "
                                          r"l2_cache_ctl, len_burst") as e:
        pto.mte_gm_l1(x.pto_ptr(), ub.pto_ptr(), 2 * N, nburst=(1, 2 * N, 2 * N))
    assert "test_bridge.py" in str(e.value) and "use one of l1" not in str(e.value)


def test_a_fixpipe_through_a_pointer_cast_to_another_dtype_names_the_dtypes():
    """user404 MIS=dtype: ``pto.mte_l0c_gm(acc.pto_ptr(), out.pto_ptr().cast("f32"), ...)`` for a float16 output
    was reported only as running past the end of 'out'; the error now says the pointer is f32 and 'out' f16."""
    from pto_core.errors import OutOfBounds
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (1, 16, 16), name="out", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (1, 16, 16), name="a_l1", scope=tik.scope_cbuf)
    acc = ti.Tensor("float32", (1, 16, 16), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(a_l1, a_gm, 0, 1, 16, 0, 0)
    ti.matmul(acc, a_l1, a_l1, 16, 16, 16)
    line = inspect.currentframe().f_lineno + 1
    pto.mte_l0c_gm(acc.pto_ptr(), out.pto_ptr().cast("f32"), 16, 16, 16, 256, 0, 0)
    ti.BuildCCE(kernel_name="cast_dst", inputs=[a_gm], outputs=[out])
    with raises_tik(OutOfBounds, match="the pointer's dtype is f32 but region 'out' was declared f16") as e:
        ti.tikdb.start_debug({"a_gm": np.ones((1, 16, 16), np.float16)}, interactive=False)
    assert f"test_bridge.py:{line} in `pto.mte_l0c_gm`" in str(e.value)
    assert "Fix: if that dtype is a mistake (a .cast('f32') of the region's f16 pointer)" in str(e.value)


def test_the_move_hint_in_a_tik_kernel_names_only_moves_of_the_kernels_chip():
    """``pto.mte_l0c_gm(acc.pto_ptr(), ub.pto_ptr(), ...)`` on Ascend910B1: the Fix named pto.mte_l0c_ub, which
    exists on A5 only; it now says the chip has no L0C -> UB move and which targets have one (user404)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    acc = ti.Tensor("float32", (1, 16, 16), name="acc", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="Ascend910B1 AiCore has no move l0c -> ub") as e:
        pto.mte_l0c_gm(acc.pto_ptr(), ub.pto_ptr(), 16, 16, 16, 256, 0, 0)
    assert "pto.mte_l0c_ub exists on A5" in str(e.value) and "l0c -> ub is" not in str(e.value)


def _mad_kernel(tik_order: bool):
    """A 16 x 32 x 16 mixed-kernel matmul whose mad is written in pto.mad's (m, n, k) order or TIK mmad's (m, k, n)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_l0 = ti.Tensor("float16", (1, 2, 16, 16), name="a_l0", scope=tik.scope_ca)
    b_l0 = ti.Tensor("float16", (2, 1, 16, 16), name="b_l0", scope=tik.scope_cb)
    acc = ti.Tensor("float32", (1, 16, 16), name="acc", scope=tik.scope_cbuf_out)
    m, k, n = 16, 32, 16
    pto.mad(a_l0.pto_ptr(), b_l0.pto_ptr(), acc.pto_ptr(), *((m, k, n) if tik_order else (m, n, k)))
    return ti


def test_a_mad_past_its_tensors_names_the_m_n_k_order():
    """h_user453: pto.mad(a, b, c, m, k, n) -- TIK mmad's order -- in a mixed kernel ran past the L0C tensor and
    the Fix said "check the repeat, mask, strides"; it now names pto.mad's m, n, k against TIK's m, k, n."""
    from pto_core.errors import OutOfBounds
    ti = _mad_kernel(tik_order=True)
    build(ti, "mad_order", [], [])
    with raises_tik(OutOfBounds, match="run outside the tensor") as e:
        run(ti)
    assert "pto.mad* take m, n, k in that order (TIK's mmad takes matrix_m, matrix_k, matrix_n" in str(e.value)
    assert "check the repeat, mask" not in str(e.value)


def test_a_byte_move_past_its_tensor_says_lengths_are_bytes():
    """A byte move given TIK's units runs past its UB tensor: the Fix says lengths and strides are bytes."""
    from pto_core.errors import OutOfBounds
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    pto.mte_ub_gm(ub.pto_ptr(), y.pto_ptr(), 2 * N, nburst=(2, 2 * N, 2 * N))   # two bursts of the whole tensor
    build(ti, "bytes", [x], [y])
    with raises_tik(OutOfBounds, match="run outside the tensor") as e:
        run(ti, {"x": np.zeros(N, np.float16)})
    assert "lengths and strides are bytes, start to start (TIK's data_move counts 32-byte blocks" in str(e.value)


def test_a_block_move_past_its_tensor_says_lengths_are_32_byte_blocks():
    """review457: memory.FENCE_EXTENT_HINTS told every PTO move that ran past its TIK tensor that "lengths and
    strides are bytes ... (TIK's data_move counts 32-byte blocks ...: burst b -> len_burst 32*b)", but
    pto.mte_ub_ub / mte_ub_l1 / mte_l1_gm count 32-byte blocks and gaps as data_move does (and mte_l1_bt /
    mte_l1_fb load units): following the Fix made the overrun 32 times larger."""
    from pto_core.errors import OutOfBounds
    from pto_core.memory import FENCE_EXTENT_HINTS
    ti = tik.Tik()
    x, y, ub = _copy_kernel(ti)
    ub2 = ti.Tensor("float16", (N,), name="ub2", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, N // 16, 0, 0)
    pto.mte_ub_ub(ub.pto_ptr(), ub2.pto_ptr(), N // 16, nburst=(2, 0, 0))    # two bursts of the whole tensor
    ti.data_move(y, ub2, 0, 1, N // 16, 0, 0)
    build(ti, "blocks", [x], [y])
    with raises_tik(OutOfBounds, match="run outside the tensor") as e:
        run(ti, {"x": np.zeros(N, np.float16)})
    assert "len_burst counts 32-byte blocks" in str(e.value) and "are bytes" not in str(e.value), str(e.value)
    assert "load units of 128 B" in FENCE_EXTENT_HINTS["pto.mte_l1_fb"]
    assert "64 B on A2A3-class" in FENCE_EXTENT_HINTS["pto.mte_l1_bt"]
