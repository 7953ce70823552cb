"""Tensor declaration (every scope and form), on-chip placement, views (tik_api.md §4.2),
reshape / reinterpret_cast_to, element set_as and __setitem__."""
import re
import warnings

import numpy as np
import pytest

from pto_core.errors import CapacityExceeded, IllegalOperand, OutOfBounds, PtoError, UnknownName, UnsupportedOp
from tbe import tik
from tbe.common.platform import get_soc_spec, set_current_compile_soc_info
from tbe_compat.tik.tensor import FlatIndexWarning

from .helpers import build, raises_tik, run


# ------------------------------------------------------------------ declaration forms

def test_tensor_forms_positional_keyword_and_all_scopes():
    ti = tik.Tik()
    a = ti.Tensor("float16", (16,), tik.scope_gm, "a")                       # positional scope and name
    b = ti.Tensor(dtype="int32", shape=[4, 8], name="b", scope=tik.scope_gm)  # all keywords
    c = ti.Tensor("float16", (64 / 2,), name="c", scope=tik.scope_ubuf)       # integral float dims (CHECKLIST T3)
    d = ti.Tensor("int8", [512], name="d", scope=tik.scope_cbuf)              # list shape
    e = ti.Tensor("float16", (16, 16), name="e", scope=tik.scope_ca)
    f = ti.Tensor("float16", (16, 16), name="f", scope=tik.scope_cb)
    g = ti.Tensor("float32", (16, 16), name="g", scope=tik.scope_cbuf_out)
    h = ti.Tensor("float32", (16, 16), name="h", scope=tik.scope_cc)
    assert (a.scope, a.name, a.dtype, a.shape) == ("global", "a", "float16", [16])
    assert b.shape == [4, 8] and c.shape == [32] and d.shape == [512]
    assert [t.space for t in (c, d, e, f, g, h)] == ["ub", "l1", "l0a", "l0b", "l0c", "l0c"]
    # shape and dtype usable to declare more (CHECKLIST T5/T6)
    m, k = b.shape
    s = ti.Scalar(c.dtype)
    assert (m, k) == (4, 8) and s.dtype == "float16"
    ws = ti.Tensor("float32", (8,), name="ws", scope=tik.scope_gm, is_workspace=True)
    at = ti.Tensor("float32", (8,), name="at", scope=tik.scope_gm, is_atomic_add=True)
    assert ws.storage.is_workspace and at.storage.is_atomic_add


def test_tensor_needs_a_name_and_a_list_or_tuple_shape_as_tik():
    """TENSOR_NAME_AND_SHAPE_REQUIRED: CANN 8.1 Tik.Tensor(dtype, shape, scope, name, ...) has no default name and
    checks it is a str ("name must be str"); Tensor.__init__ refuses a shape that is not a list or tuple ("shape: 16
    must be list or tuple."). The simulator named the tensor tensor_<n> and took an int/Scalar shape as one
    dimension, so a kernel that ran here failed under CANN. A refused declaration reserves nothing."""
    ti = tik.Tik()
    left = ti.get_available_buffer_size(tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ in `tik\.Tensor`: operand name: Tensor needs name= "
                                          r".*Fix: pass name='\.\.\.'"):
        ti.Tensor("float16", (16,), scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"operand name: Tensor needs name="):
        ti.Tensor("float16", (16,), tik.scope_ubuf, None)
    with raises_tik(IllegalOperand, match=r"operand shape: shape 16 must be a list or tuple .*Fix: pass the "
                                          r"dimensions as a tuple: shape=\(16,\)"):
        ti.Tensor("float16", 16, name="a", scope=tik.scope_ubuf)
    n = ti.Scalar("int32", name="n", init_value=4)
    with raises_tik(IllegalOperand, match=r"operand shape: shape .* must be a list or tuple"):
        ti.Tensor("float16", n, name="b", scope=tik.scope_gm)
    assert ti.get_available_buffer_size(tik.scope_ubuf) == left
    assert ti.Tensor("float16", (n,), name="b", scope=tik.scope_gm).name == "b"


def test_a_shape_that_is_not_a_list_or_tuple_gets_a_fix_that_works():
    """The Fix of TENSOR_NAME_AND_SHAPE_REQUIRED's shape refusal put the value in a 1-tuple whatever it was: for a
    numpy array (``np.array(x.shape) // 2``) or a range it said ``shape=(array([4, 16]),)``, which the next run refuses
    again (review439). A sequence now gets its dimensions as Python ints, a Scalar its name; each Fix declares."""
    ti = tik.Tik()
    n = ti.Scalar("int32", name="n", init_value=4)
    for i, (shape, scope, fix) in enumerate(((np.array([4, 16]), tik.scope_ubuf, "shape=(4, 16)"),
                                             (range(16, 17), tik.scope_ubuf, "shape=(16,)"),
                                             (np.int64(16), tik.scope_ubuf, "shape=(16,)"),
                                             (n, tik.scope_gm, "shape=(n,)"))):
        with raises_tik(IllegalOperand, match=r"must be a list or tuple .*Fix: pass the dimensions as a tuple.*" +
                        re.escape(fix)):
            ti.Tensor("float16", shape, scope, "a")
        t = ti.Tensor("float16", eval(fix.split("=", 1)[1], {"n": n}), scope, f"ok{i}")
        assert len(t.shape) in (1, 2)


def test_gm_tensor_flags_take_numpy_bools_and_refuse_non_constants():
    """is_workspace / is_atomic_add of a GM tensor: np.True_ and 0-d arrays are their value; a 1-d array raised a
    bare numpy ValueError ("truth value of an array ... is ambiguous"), a TIK Tensor or str was taken as True, and
    a Scalar failed as 'tik.Expr ... cannot be used as a Python truth value' with an if_scope Fix (h_review315)."""
    ti = tik.Tik()
    ws = ti.Tensor("float32", (8,), name="ws", scope=tik.scope_gm, is_workspace=np.True_)
    at = ti.Tensor("float32", (8,), name="at", scope=tik.scope_gm, is_atomic_add=np.array(True))
    no = ti.Tensor("float32", (8,), name="no", scope=tik.scope_gm, is_atomic_add=np.False_)
    assert ws.storage.is_workspace and at.storage.is_atomic_add and not no.storage.is_atomic_add
    s = ti.Scalar("int32", init_value=1)
    t = ti.Tensor("int32", (8,), name="t", scope=tik.scope_ubuf)
    for flag in ("is_workspace", "is_atomic_add"):
        for v, what in ((np.array([1, 0]), "ndarray"), (t, "Tensor"), (s, "Scalar"), ("yes", "str")):
            with raises_tik(IllegalOperand, match=rf"test_tensors\.py:\d+ in `tik\.Tensor`: operand {flag}: {flag} "
                                                  rf"must be True or False, got {what} .*Fix: pass {flag}=True"):
                ti.Tensor("float32", (8,), name="bad", scope=tik.scope_gm, **{flag: v})
    ti.Tensor("float32", (8,), name="bad", scope=tik.scope_gm)     # the refused declarations left no trace


def test_tensor_declaration_errors():
    ti = tik.Tik()
    with raises_tik(UnknownName, match="dtype 'float64' is not a TIK tensor dtype"):
        ti.Tensor("float64", (8,), name="x", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="non-positive dimension 0"):
        ti.Tensor("float16", (8, 0), name="x", scope=tik.scope_ubuf)
    with raises_tik(UnknownName, match="scope 'local.XX'|not a tensor scope"):
        ti.Tensor("float16", (8,), name="x", scope="nowhere")
    with raises_tik(UnsupportedOp, match="local.SMASK"):
        ti.Tensor("float16", (8,), name="x", scope=tik.scope_smask)
    with raises_tik(IllegalOperand, match="is_workspace applies to GM tensors only"):
        ti.Tensor("float16", (8,), name="x", scope=tik.scope_ubuf, is_workspace=True)
    with raises_tik(IllegalOperand, match="scope is required"):
        ti.Tensor("float16", (8,), name="x")
    n = ti.InputScalar("int32", name="n")
    with ti.new_stmt_scope():                # without max_mem_size a dynamic tensor takes the rest of the buffer
        ti.Tensor("float16", (get_soc_spec("UB_SIZE") // 2 - 8,), name="big", scope=tik.scope_ubuf)
        with raises_tik(CapacityExceeded, match="takes the rest of UB .* without max_mem_size, but only 0 B"):
            ti.Tensor("float16", (n,), name="x", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="bad arguments"):
        ti.Tensor("float16", (8,), tik.scope_ubuf, "x", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)


def test_error_points_at_the_script_line_and_api():
    ti = tik.Tik()
    with raises_tik(IllegalOperand) as info:
        ti.Tensor("float16", (0,), name="x", scope=tik.scope_ubuf)
    e = info.value
    assert e.where.file == __file__ and e.where.call == "tik.Tensor"
    text = str(e)
    assert f"{__file__}:" in text and "tik.Tensor" in text and "shape" in text


# ------------------------------------------------------------------ placement

def test_placement_uses_tik_alignment_per_scope():
    ti = tik.Tik()
    u1 = ti.Tensor("float16", (3,), name="u1", scope=tik.scope_ubuf)      # 6 B
    u2 = ti.Tensor("float16", (3,), name="u2", scope=tik.scope_ubuf)
    l1a = ti.Tensor("int8", (40,), name="l1a", scope=tik.scope_cbuf)
    l1b = ti.Tensor("int8", (40,), name="l1b", scope=tik.scope_cbuf)
    c16 = ti.Tensor("float16", (16,), name="c16", scope=tik.scope_cc)
    c32 = ti.Tensor("float32", (16,), name="c32", scope=tik.scope_cc)
    a0 = ti.Tensor("float16", (16,), name="a0", scope=tik.scope_ca)
    a1 = ti.Tensor("float16", (16,), name="a1", scope=tik.scope_ca)
    assert (u1.storage.addr, u2.storage.addr) == (0, 32)
    assert (l1a.storage.addr, l1b.storage.addr) == (0, 512)
    assert (c16.storage.addr, c32.storage.addr) == (0, 1024)
    assert (a0.storage.addr, a1.storage.addr) == (0, 512)


def test_buffer_overflow_error_names_buffer_size_and_placed_tensors():
    ti = tik.Tik()                                  # Ascend310: UB 253952 B
    ti.Tensor("float16", (60000,), name="big_a", scope=tik.scope_ubuf)
    ti.Tensor("float16", (60000,), name="big_b", scope=tik.scope_ubuf)
    with raises_tik(CapacityExceeded) as info:
        ti.Tensor("float16", (10000,), name="extra", scope=tik.scope_ubuf)
    msg = str(info.value)
    assert "'extra' needs 20000 B in UB" in msg and "253952 B on Ascend310" in msg
    assert "'big_a' 120000 B at 0x0" in msg and "'big_b'" in msg


def test_thread_num_loop_tensors_reserve_one_copy_per_buffer():
    """THREAD_NUM_RESERVES_COPIES: TIK books bytes x thread_num for a tensor declared in a thread_num > 1
    for_range (its buffer manager's double_buffer_size), so a tile that fits once but not twice is refused."""
    ti = tik.Tik()                                  # Ascend310: UB 253952 B
    with ti.for_range(0, 4, thread_num=2):
        with raises_tik(CapacityExceeded) as info:
            ti.Tensor("float16", (70000,), name="tile", scope=tik.scope_ubuf)      # 140000 B, x2 > UB
    msg = str(info.value)
    assert "'tile' needs 2 x 140000 B = 280000 B" in msg and "thread_num" in msg
    ti = tik.Tik()
    with ti.for_range(0, 4, thread_num=2):
        a = ti.Tensor("float16", (60000,), name="a", scope=tik.scope_ubuf)        # 2 x 120000 B fit
        with ti.if_scope(True):                                                  # if bodies stay double-buffered
            with raises_tik(CapacityExceeded, match="2 x 14000 B"):
                ti.Tensor("float16", (7000,), name="b", scope=tik.scope_ubuf)  # fits once
        with ti.for_range(0, 2):                    # an inner thread_num=1 loop books one copy
            c = ti.Tensor("float16", (16,), name="c", scope=tik.scope_ubuf)
    assert a.storage.addr == 0 and c.storage.addr == 240000
    ti = tik.Tik()
    with ti.multi_for_range([0, 0], [2, 2]):        # not a double-buffered loop
        d = ti.Tensor("float16", (100000,), name="d", scope=tik.scope_ubuf)
    assert d.storage.nbytes == 200000


def test_tensor_that_does_not_fit_in_code_that_never_runs_is_an_error_not_none():
    """DEAD_CODE_TENSOR_MUST_FIT: a thread_num=2 loop inside an empty constant for_range (CANN
    arg_min_with_value's full-segment loop with 0 full segments) declares a tile that fits once but not twice.
    TIK's buffer manager books it while tracing, so it is a CapacityExceeded at the declaration; the
    declaration was dropped as dead code and returned None ('NoneType' object is not subscriptable next)."""
    ti = tik.Tik()                                  # Ascend310: UB 253952 B
    with ti.for_range(0, 0):
        with ti.for_range(0, 4, thread_num=2):
            with raises_tik(CapacityExceeded, match="2 x 140000 B") as info:
                ti.Tensor("float16", (70000,), name="tile", scope=tik.scope_ubuf)
    assert "test_tensors.py" in str(info.value)
    ti = tik.Tik()                                  # a tile that fits is placed as before
    with ti.for_range(0, 0):
        with ti.for_range(0, 4, thread_num=2):
            t = ti.Tensor("float16", (60000,), name="tile", scope=tik.scope_ubuf)
    assert t is not None and t.storage.addr == 0


_DEAD_DECLARATIONS = {     # API family -> (a declaration whose arguments fail a check, the error's words)
    "Scalar": (lambda ti, ub: ti.Scalar("int32", init_value=2 ** 40), r"1099511627776 .* does not fit int32"),
    "Tensor": (lambda ti, ub: ti.Tensor("float17", (16,), name="t", scope=tik.scope_ubuf),
               r"'float17' is not a TIK tensor dtype"),
    "ScalarArray": (lambda ti, ub: ti.ScalarArray("float17", 4), r"'float17' is not a TIK scalar dtype"),
    "InputScalar": (lambda ti, ub: ti.InputScalar("float17", name="n"), r"'float17' is not a TIK scalar dtype"),
    "TensorAddrList": (lambda ti, ub: ti.TensorAddrList(4, scope="local.L1", name="addrs"), r"TensorAddrList Scope"),
    "Tensor.reshape": (lambda ti, ub: ub.reshape((3, 5)), r"cannot reshape 16 elements into \[3, 5\]"),
    "Tensor.reinterpret_cast_to": (lambda ti, ub: ub.reinterpret_cast_to("float17"),
                                   r"'float17' is not a TIK tensor dtype"),
}


@pytest.mark.parametrize("family", sorted(_DEAD_DECLARATIONS))
@pytest.mark.parametrize("dead", ["if_false", "empty_for"])
def test_a_bad_declaration_in_code_that_never_runs_raises_its_own_error(family, dead):
    """DEAD_CODE_DECLARATIONS_CHECKED: TIK traces the Python body of a statically false if_scope / an empty
    constant for_range like any other, so a declaration's argument checks fail there too, at its line. It was
    dropped as dead code and returned None, and the kernel's next line failed with a bare TypeError
    ("'NoneType' object is not subscriptable")."""
    make, words = _DEAD_DECLARATIONS[family]
    ti = tik.Tik()
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    with (ti.if_scope(16 % 8 > 0) if dead == "if_false" else ti.for_range(0, 0)):
        with raises_tik(PtoError, match=words) as info:
            make(ti, ub)
    assert "test_tensors.py" in str(info.value) and f"tik.{family}" in str(info.value)


def test_good_declarations_in_code_that_never_runs_stay_usable():
    """Declarations whose checks pass in code that never runs return objects the dead code keeps using (a
    Scalar set from an element of a view one past the end, a reshape / cast of such a view); the calls on
    them are dropped and the live kernel runs."""
    ti = tik.Tik()
    x = ti.Tensor("int32", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    with ti.if_scope(16 % 16 != 0):
        s = ti.Scalar("int32", init_value=ub[16])
        arr = ti.ScalarArray("int32", 2, name="arr")
        arr[1].set_as(s)
        tail = ub[16:32].reshape((2, 8)).reinterpret_cast_to("int16")
        ti.vec_adds(64, tail[0, 0, 0], tail[0, 0, 0], 1, 1, 8, 8)
    assert s is not None and arr is not None and tail.shape == [2, 8, 2]
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    build(ti, "dead_decls", [x], [y])
    data = np.arange(16, dtype=np.int32)
    assert np.array_equal(run(ti, {"x": data})[0], data)


def test_tensor_in_code_that_never_runs_keeps_its_start_addr_error_and_says_the_code_is_dead():
    """DEAD_CODE_TENSOR_MUST_FIT: a misaligned start_addr (tik_api.md §4.1: "start_addr must respect §1.4
    alignment") in a statically false if_scope is an error at the declaration; it was dropped and returned None,
    so the next line failed with "'NoneType' object is not subscriptable". The Fix of these errors says the
    declaration is in code that never runs (the author may know the branch is dead); elsewhere it does not."""
    ti = tik.Tik()
    with ti.if_scope(False):
        with raises_tik(IllegalOperand, match="start_addr 0x7 is not 32-byte aligned") as info:
            ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf, start_addr=7)
    assert "test_tensors.py" in str(info.value) and "in code that never runs" in str(info.value)
    with ti.if_scope(True):
        ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf)
    with ti.else_scope():                            # STATIC_IF_CHAIN: never runs
        with raises_tik(CapacityExceeded, match="in code that never runs") as info:
            ti.Tensor("float16", (200000,), name="c", scope=tik.scope_ubuf)
    assert "DEAD_CODE_TENSOR_MUST_FIT" in str(info.value)
    with ti.if_scope(False):                         # aligned and fitting: placed as before
        t = ti.Tensor("float16", (16,), name="d", scope=tik.scope_ubuf, start_addr=64)
    assert t is not None and t.storage.addr == 64
    with raises_tik(CapacityExceeded) as info:      # code that runs: no such note
        ti.Tensor("float16", (200000,), name="e", scope=tik.scope_ubuf)
    assert "never runs" not in str(info.value)


def test_scopes_free_their_tensors_and_reuse_memory():
    ti = tik.Tik()
    keep = ti.Tensor("float16", (16,), name="keep", scope=tik.scope_ubuf)
    with ti.for_range(0, 2):
        a = ti.Tensor("float16", (100000,), name="a", scope=tik.scope_ubuf)   # 200 KB: only one fits
    with ti.new_stmt_scope():
        b = ti.Tensor("float16", (100000,), name="b", scope=tik.scope_ubuf)
    with ti.if_scope(True):
        c = ti.Tensor("float16", (100000,), name="c", scope=tik.scope_ubuf)
    with ti.else_scope():
        d = ti.Tensor("float16", (100000,), name="d", scope=tik.scope_ubuf)
    assert a.storage.addr == b.storage.addr == c.storage.addr == d.storage.addr == 32
    assert keep.storage.alive and not a.storage.alive


def test_use_after_scope_is_kept_alive_unless_the_memory_was_reused():
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    with ti.new_stmt_scope():
        t = ti.Tensor("float16", (16,), name="t", scope=tik.scope_ubuf)
    ti.data_move(t, x, 0, 1, 1, 0, 0)              # nothing placed over it: it stays usable
    assert t.storage.alive
    with ti.new_stmt_scope():
        u = ti.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    ti.Tensor("float16", (16,), name="squatter", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="uses tensor 'u'.*after the scope that created it ended.*'squatter'"):
        ti.data_move(u, x, 0, 1, 1, 0, 0)


def test_start_addr_places_exactly_and_is_checked():
    ti = tik.Tik()
    t = ti.Tensor("float16", (16,), name="t", scope=tik.scope_ubuf, start_addr=1024)
    assert t.storage.addr == 1024
    with raises_tik(IllegalOperand, match="not 32-byte aligned"):
        ti.Tensor("float16", (16,), name="t2", scope=tik.scope_ubuf, start_addr=100)
    with raises_tik(CapacityExceeded, match="past the end of ub"):
        ti.Tensor("float16", (16,), name="t4", scope=tik.scope_ubuf, start_addr=256 * 1024 - 32)


@pytest.mark.parametrize("scope", [tik.scope_ubuf, tik.scope_cbuf, tik.scope_ca])
def test_start_addr_past_the_end_fix_names_an_aligned_address_that_fits(scope):
    """The Fix of a start_addr past the end named capacity - nbytes, not aligned for a 100-byte tensor (so the
    suggested address was refused as unaligned); it now names the highest aligned address, which places."""
    import re
    with raises_tik(CapacityExceeded, match="past the end") as info:
        tik.Tik().Tensor("float16", (50,), name="t", scope=scope, start_addr=1 << 30)
    top = int(re.search(r"start_addr at most (0x[0-9a-f]+)", str(info.value)).group(1), 16)
    t = tik.Tik().Tensor("float16", (50,), name="t", scope=scope, start_addr=top)
    assert t.storage.addr == top


def test_start_addr_of_a_tensor_bigger_than_the_buffer_is_refused_for_its_shape():
    """A tensor larger than the whole UB at start_addr=0: the Fix said "pass a start_addr at most -0x23a80"
    (a negative address) and named start_addr; no start_addr fits it, so the shape is named."""
    with raises_tik(CapacityExceeded, match="more than the whole ub") as info:
        tik.Tik().Tensor("float16", (200000,), name="x", scope=tik.scope_ubuf, start_addr=0)
    msg = str(info.value)
    assert "operand shape:" in msg and "Fix: reduce the tensor's shape" in msg and "-0x" not in msg, msg


def test_start_addr_is_user_managed_and_may_alias_live_tensors():
    """START_ADDR_IS_USER_MANAGED: a pinned tensor over a live one shares its bytes (CANN attention_score
    pins UB tensors at 0 over automatic ones it is done with); automatic placement avoids pinned ones."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (32,), name="y", scope=tik.scope_gm)
    auto = ti.Tensor("float16", (16,), name="auto", scope=tik.scope_ubuf)
    pinned = ti.Tensor("float16", (16,), name="pinned", scope=tik.scope_ubuf, start_addr=auto.storage.addr)
    later = ti.Tensor("float16", (16,), name="later", scope=tik.scope_ubuf)
    assert pinned.storage.addr == auto.storage.addr and later.storage.addr >= auto.storage.addr + 32
    ti.data_move(auto, x, 0, 1, 1, 0, 0)                 # written through one name ...
    ti.vec_adds(16, later, pinned, 1.0, 1, 8, 8)         # ... read through the other
    ti.data_move(y, auto, 0, 1, 1, 0, 0)
    ti.data_move(y[16], later, 0, 1, 1, 0, 0)
    build(ti, "alias", [x], [y])
    xin = np.arange(16, dtype=np.float16)
    out, = run(ti, {"x": xin})
    np.testing.assert_array_equal(out, np.concatenate([xin, xin + 1]))


def test_capacities_follow_the_chip_selected_at_declaration():
    set_current_compile_soc_info("Ascend910B1")                 # UB 192 KiB
    ti = tik.Tik()
    with raises_tik(CapacityExceeded, match="196608 B on Ascend910B1"):
        ti.Tensor("float16", (100000,), name="x", scope=tik.scope_ubuf)
    set_current_compile_soc_info("Ascend610", "VectorCore")       # no L1 on a vector core
    with raises_tik(UnsupportedOp, match="L1 .* does not exist"):
        tik.Tik().Tensor("float16", (16,), name="x", scope=tik.scope_cbuf)


# ------------------------------------------------------------------ views

def _v(t):
    return (t.offset, t.shape, t._strides)


def test_one_dimensional_index_and_slices():
    ti = tik.Tik()
    t = ti.Tensor("float16", (100,), name="t", scope=tik.scope_ubuf)
    assert _v(t[5]) == (5, [1], (1,))
    assert _v(t[-1]) == (99, [1], (1,))
    assert _v(t[10:20]) == (10, [10], (1,))
    assert _v(t[90:]) == (90, [10], (1,))
    assert _v(t[:7]) == (0, [7], (1,))
    assert _v(t[1:10:3]) == (1, [3], (3,))
    assert _v(t[10:20][5]) == (15, [1], (1,))            # index relative to the view


def test_multi_dimensional_flat_and_full_indexing():
    ti = tik.Tik()
    t = ti.Tensor("float32", (4, 8, 16), name="t", scope=tik.scope_ubuf)
    assert _v(t[5]) == (5, [1], (1,))                     # one index on a 3-D tensor: flat
    assert _v(t[128:]) == (128, [384], (1,))
    # an int index keeps its dimension with length 1 (CANN 8.1 tik_tensor_._normalize_slice)
    assert _v(t[1, 2, 3]) == (128 + 32 + 3, [1, 1, 1], (128, 16, 1))
    assert _v(t[1, :, 0:8]) == (128, [1, 8, 8], (128, 16, 1))
    assert _v(t[2, 3, :]) == (256 + 48, [1, 1, 16], (128, 16, 1))
    assert _v(t[:, 1, :]) == (16, [4, 1, 16], (128, 16, 1))
    with raises_tik(IllegalOperand, match=r"length of index \(2\) should be equal to the dimension of Tensor \(3\)"):
        t[1, 2]


def test_a_single_index_on_a_multi_dimensional_view_counts_from_the_tensor_start():
    """FLAT_INDEX_FROM_TENSOR_START: CANN TIK flattens the whole tensor for one index on a multi-dimensional
    view, so the view's offset is dropped (arg_max_with_kd indexes ``first[row, 0][128]``); contiguity and the
    view's extent do not matter, the tensor's do. Each such index warns at the user's line."""
    ti = tik.Tik()
    t = ti.Tensor("float32", (4, 8, 16), name="t", scope=tik.scope_ubuf)
    u = ti.Tensor("float16", (16, 256), name="first", scope=tik.scope_ubuf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _v(u[0, 0][128]) == (128, [1], (1,))          # offset 0: nothing dropped, no warning
        assert _v(u.reshape((256, 16))[7]) == (7, [1], (1,))
    with pytest.warns(FlatIndexWarning, match=r"view of tensor 'first' \(element offset 768\) counts from the "
                                              r"tensor's first element") as rec:
        assert _v(u[3, 0][128]) == (128, [1], (1,))
    assert rec[0].filename == __file__                     # the user's line, not the simulator's
    assert str(rec[0].message).startswith(f"{__file__}:{rec[0].lineno}: ")   # in the text too (``-W error``)
    with pytest.warns(FlatIndexWarning):
        assert _v(t[1, :, 0:8][3]) == (3, [1], (1,))         # not contiguous: TIK flattens the tensor anyway
    with pytest.warns(FlatIndexWarning):
        assert _v(t[2:, :, :][500:]) == (500, [12], (1,))    # a flat slice runs to the tensor's end
    with pytest.warns(FlatIndexWarning), raises_tik(IllegalOperand, match=r"index 512 is outside \[0, 512\).*a "
                                                                          r"flat index into the whole tensor 't'"):
        t[1, 0, 0][512]


def test_a_flat_index_past_a_views_offset_gives_the_devices_result():
    """End to end: ``u[1:, :][5]`` writes row 0 (what the device does); ``u[1, 0][20]`` writes element 20."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (4, 16), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (4, 16), name="y", scope=tik.scope_gm)
    u = ti.Tensor("float16", (4, 16), name="u", scope=tik.scope_ubuf)
    ti.data_move(u, x, 0, 1, 4, 0, 0)
    s = ti.Scalar("float16", init_value=-7.0)
    with pytest.warns(FlatIndexWarning):
        u[1:, :][5].set_as(s)
    with pytest.warns(FlatIndexWarning):
        u[2, 0][20] = s
    ti.data_move(y, u, 0, 1, 4, 0, 0)
    ti.BuildCCE(kernel_name="flat_from_start", inputs=[x], outputs=[y])
    a = np.arange(64, dtype=np.float16).reshape(4, 16)
    got, = ti.tikdb.start_debug({"x": a}, interactive=False)
    want = a.copy()
    want.flat[[5, 20]] = -7
    np.testing.assert_array_equal(got, want)


def test_a_view_at_a_run_time_offset_takes_indices_past_its_end():
    """DYNAMIC_VIEW_INDEX_UNBOUNDED: TIK clips a sub-index to the view's end only when that end is a constant
    (tik_tensor.py ``TensorSlice._slice_cal``), so ``out[k][12]`` with k an Expr is element k + 12 (CANN-era
    STFT writes a row's tail through ``dst[set_as_offset]`` of ``out[row_start]``); a constant view start
    still gets the static check."""
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (2, 4, 8), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    with ti.for_range(0, 2) as k:
        ub[k * 32][12].set_as(ti.Scalar("float32", init_value=-1.0))      # a one-element view at k * 32
        ub[k * 32 + 1][15:16].set_as(ti.Scalar("float32", init_value=-2.0))  # a slice past its end too
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "dyn_view", [x], [y])
    out, = run(ti, {"x": np.arange(64, dtype=np.float32)})
    want = np.arange(64, dtype=np.float32)
    want[[12, 44]] = -1.0
    want[[16, 48]] = -2.0
    assert out.tolist() == want.tolist()
    with raises_tik(IllegalOperand, match=r"tensor overflow: index 12 is outside \[0, 1\)"):
        ub[32][12]                                                        # a constant view start: checked
    k2 = ti.Scalar("int32", init_value=3)
    with raises_tik(IllegalOperand, match=r"index -2 is outside"):
        ub[k2][-2]                                                        # before the view's start: still an error


def test_static_index_errors_and_dynamic_indices():
    ti = tik.Tik()
    t = ti.Tensor("int32", (8, 8), name="t", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"tensor overflow: index 8 is outside \[0, 8\)"):
        t[8, 0]
    with raises_tik(IllegalOperand, match="slice stop 9 is past the end"):
        t[0, 0:9]
    with raises_tik(IllegalOperand, match=r"slice \[6:5\] has its stop before its start"):
        t[0, 6:5]
    with raises_tik(IllegalOperand, match="step .* must be a Python int"):
        t[0, 0:8:1.5]
    i = ti.Scalar("int32", name="i", init_value=3)
    v = t[i, i % 4]                                    # Expr indices (CHECKLIST T13)
    assert not isinstance(v.offset, int)
    w = t[i + 5, 0]                                    # out of range only at run time: fine to make (S11)
    assert not isinstance(w.offset, int)


def test_empty_slice_is_a_zero_length_view():
    """TIK builds a zero-length view for start == stop (tik_tensor.py TensorSlice.__getitem__ rejects only a
    negative length); IndexSDK's vsel filter takes ``ub[n:]`` with n == size in a branch that never runs."""
    ti = tik.Tik()
    t = ti.Tensor("float16", (4, 32), name="t", scope=tik.scope_ubuf)
    assert _v(t[128:]) == (128, [0], (1,))                 # flat tail at the very end
    assert _v(t[1, 5:5]) == (37, [1, 0], (32, 1))
    i = ti.Scalar("int32", name="i", init_value=2)
    assert _v(t[4 * i:4 * i])[1] == [0]                    # moving window of constant length 0
    with raises_tik(IllegalOperand, match="has its stop before its start"):
        t[4 * i + 1:4 * i]


def _tail_kernel(run_tail: bool):
    """y = 2 x on 128 elements in one vmuls; the tail ``ub[128:]`` (empty) is used only under ``if_scope``."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.vmuls(128, ub, ub, 2.0, 1, 1, 1, 8, 8)
    tail = ub[128:]
    with ti.if_scope(1 if run_tail else 0):
        ti.vmuls(16, tail, tail, 3.0, 1, 1, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    return build(ti, "tail", [x], [y])


def test_empty_tail_view_in_a_branch_that_does_not_run():
    x = np.arange(128, dtype=np.float16) / 4
    (y,) = run(_tail_kernel(False), {"x": x})
    np.testing.assert_array_equal(y, x * np.float16(2))


def test_empty_tail_view_used_by_an_instruction_is_out_of_bounds():
    with raises_tik(OutOfBounds, match="vmuls"):
        run(_tail_kernel(True), {"x": np.ones(128, np.float16)})


def test_reshape_flatten_and_errors():
    ti = tik.Tik()
    t = ti.Tensor("float16", (4, 64), name="t", scope=tik.scope_ubuf)
    assert t.reshape((16, 16)).shape == [16, 16] and t.reshape(2, 128).shape == [2, 128]
    assert t.reshape([256]).shape == [256] and t.flatten().shape == [256]
    assert t[0:256].reshape((4, 64)).offset == 0         # a view of the whole tensor may be reshaped
    with raises_tik(IllegalOperand, match="cannot reshape 256 elements into"):
        t.reshape((3, 64))
    with raises_tik(IllegalOperand, match="has been sliced"):
        t[:, 0:32].reshape((128,))


def test_reshape_of_part_of_a_tensor_is_refused_as_tik_refuses_it(monkeypatch):
    """RESHAPE_OF_PART_REFUSED: CANN 8.1 TIK's check_tensor_reshapeable refuses reshape/flatten/change_shape of a
    view holding fewer elements than its tensor ("Reshape operator is needed, but the tensor with shape: [32] has
    been sliced."); tik_api.md §4.3. The simulator reshaped a contiguous partial view in place (review spec422).
    With RESHAPE_OF_1D_PART_WARNS off (its one-dimensional views warn by default: the next test) every such view
    is refused."""
    from tbe_compat.tik import tensor as tensor_mod
    monkeypatch.setattr(tensor_mod, "RESHAPE_OF_1D_PART_WARNS", False)
    ti = tik.Tik()
    t = ti.Tensor("float16", (64,), name="t", scope=tik.scope_ubuf)
    t2 = ti.Tensor("float16", (4, 16), name="t2", scope=tik.scope_ubuf)
    n = ti.Scalar("int32", name="n", init_value=2)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ .*Reshape operator is needed, but the tensor with "
                                          r"shape \[32\] has been sliced: the view holds 32 of the 64 elements of 't'"
                                          r".*Fix: reshape the whole tensor and index the result"):
        t[16:48].reshape((2, 16))
    with raises_tik(IllegalOperand, match=r"shape \[48\] has been sliced"):
        t2[16:].flatten()
    with raises_tik(IllegalOperand, match=r"shape \[32\] has been sliced"):
        t[n:n + 32].reshape((2, 16))                  # a run-time start, a constant length: still checked
    with raises_tik(IllegalOperand, match=r"the view holds 16 of the 32 elements"):
        t[0:32].reinterpret_cast_to("float32").change_shape((16,))
    assert t.reshape((4, 16))[1:3, :].shape == [2, 16]          # the Fix: reshape the whole, then slice
    assert t.reinterpret_cast_to("float32").reshape((2, 16)).shape == [2, 16]
    assert t2[0:64].reshape((64,)).shape == [64]


def test_reshape_of_a_one_dimensional_slice_runs_with_a_cann81_warning_as_te_tik_took_it():
    """RESHAPE_OF_1D_PART_WARNS: te.tik 2019 (tik_tensor.py TensorSlice.reshape) reshaped a sliced tensor whose
    index is one-dimensional (a 1-D new shape returns the slice, a longer one views the same elements); only CANN
    8.x refuses it. fix438 made it an error, stopping kernels written for te.tik (review439): it now runs in place
    with a Cann81RuleWarning once per site naming the line, the CANN rule and the Fix. A multi-dimensional partial
    view stays an error (te.tik 2019: "not support for now"), as does a size mismatch; with
    USER_FLAG_CANN81_RULES_WARN off the one-dimensional case is an error again."""
    from tbe_compat.tik import data as data_mod
    from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
    _CANN81_WARNED.clear()
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    ub2 = ti.Tensor("float16", (4, 16), name="ub2", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 4, 0, 0)
    with pytest.warns(Cann81RuleWarning, match=r"test_tensors\.py:\d+ in `tik\.Tensor\.reshape`: reshape of a slice: "
                                               r"the view \[16:48\] holds 32 of the 64 elements of 'ub' \(CANN 8\.x TIK: "
                                               r"\"Reshape operator is needed.*the simulator runs it \(it reshapes the "
                                               r"slice in place.*Fix: reshape the whole tensor and index the result"):
        part = ub[16:48].reshape((2, 16))
    assert part.shape == [2, 16] and part.offset == 16
    ti.vec_adds(16, part[1, 0], part[1, 0], 1.0, 1, 1, 1)      # row 1 of the view: elements 32..47
    with pytest.warns(Cann81RuleWarning, match=r"flatten of a slice: the view \[8:32\]"):
        flat = ub2[8:32].flatten()                             # a flat index of a 2-D tensor is one-dimensional
    assert flat.shape == [24] and flat.offset == 8
    n = ti.Scalar("int32", name="n", init_value=0)
    with pytest.warns(Cann81RuleWarning, match=r"reshape of a slice: the view holds 16 of the 64"):
        assert ub[n:n + 16].reshape((16,)).shape == [16]        # a run-time start, a constant length
    ti.data_move(y, ub, 0, 1, 4, 0, 0)
    with raises_tik(IllegalOperand, match=r"shape \[2, 16\] has been sliced"):
        ub2[0:2, :].flatten()                                  # multi-dimensional: an error in every TIK
    with raises_tik(IllegalOperand, match=r"has been sliced"):
        ub[0:32].reshape((2, 8))                               # and a size mismatch
    build(ti, "part_reshape", [x], [y])
    data = np.arange(64, dtype=np.float16)
    want = data.copy()
    want[32:48] += np.float16(1)
    assert np.array_equal(run(ti, {"x": data})[0], want)
    with warnings.catch_warnings(record=True) as seen:       # once per site
        warnings.simplefilter("always")
        for _ in range(3):
            ub[0:16].reshape((16,))
    assert len([w for w in seen if issubclass(w.category, Cann81RuleWarning)]) == 1
    saved = data_mod.USER_FLAG_CANN81_RULES_WARN
    data_mod.USER_FLAG_CANN81_RULES_WARN = False
    try:
        with raises_tik(IllegalOperand, match=r"shape \[32\] has been sliced: the view holds 32 of the 64"):
            ub[16:48].reshape((2, 16))
    finally:
        data_mod.USER_FLAG_CANN81_RULES_WARN = saved


def test_max_mem_size_is_checked_as_tik_checks_it():
    """CANN 8.1 TIK (tik_tensor_.py `get_shape` / `__check_total_size_max_mem_size`): max_mem_size is an int
    number of bytes, a multiple of the element size, and for a static shape exactly its size. All three were
    accepted and ignored (a static (16,) float16 tensor with max_mem_size=16 built) (review spec422)."""
    ti = tik.Tik()
    n = ti.Scalar("int32", name="n", init_value=8)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ .*max_mem_size = 16 bytes is too small for the "
                                          r"static shape \[16\] \(32 bytes\).*Fix: "):
        ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf, max_mem_size=16)
    with raises_tik(IllegalOperand, match=r"max_mem_size = 64 bytes is too big for the static shape \[16\]"):
        ti.Tensor("float16", (16,), name="a", scope=tik.scope_gm, max_mem_size=64)
    with raises_tik(IllegalOperand, match=r"max_mem_size = 33 bytes is not a multiple of the float16 element size"):
        ti.Tensor("float16", (n,), name="d", scope=tik.scope_ubuf, max_mem_size=33)
    with raises_tik(IllegalOperand, match=r"max_mem_size must be an int number of bytes, got Scalar"):
        ti.Tensor("float16", (n,), name="d", scope=tik.scope_ubuf, max_mem_size=n)
    assert ti.get_left_buffer_size(tik.scope_ubuf) == ti.get_available_buffer_size(tik.scope_ubuf)
    left = ti.get_left_buffer_size(tik.scope_ubuf)
    ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf, max_mem_size=32)      # its size: accepted
    ti.Tensor("float16", (n,), name="d", scope=tik.scope_ubuf, max_mem_size=64.0)     # an integral float too
    assert left - ti.get_left_buffer_size(tik.scope_ubuf) == 32 + 64       # the refused ones placed nothing


def test_reinterpret_of_a_strided_view_says_what_to_do():
    """tik_api.md §4.4: the last stride must be 1. The refusal had no Fix (review spec422)."""
    ti = tik.Tik()
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ .*needs the last dimension to be contiguous "
                                          r"\(stride 1\) .*Fix: reinterpret the tensor"):
        ub[0:64:2].reinterpret_cast_to("int8")
    t = ti.Tensor("float16", (3, 5), name="t", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"stride does not divide by the width ratio .*Fix: reinterpret the whole"):
        t[:, 0:2].reinterpret_cast_to("float32")
    assert ub.reinterpret_cast_to("int8").shape == [64, 2]        # the tensor itself is fine


def test_reshape_takes_its_documented_keyword_new_shape():
    # tik_api.md §4.3 `reshape(new_shape)`: the documented name by keyword was a TypeError (h_sig207)
    ti = tik.Tik()
    t = ti.Tensor("float16", (4, 64), name="t", scope=tik.scope_ubuf)
    assert t.reshape(new_shape=(16, 16)).shape == [16, 16] and t.reshape(new_shape=[256]).shape == [256]
    with raises_tik(IllegalOperand, match="cannot reshape 256 elements into"):
        t.reshape(new_shape=(3, 64))
    with raises_tik(IllegalOperand, match=r"test_tensors.py:\d+ .*Tensor.reshape got the shape by position "
                                          r"\(\(16, 16\),\) and as new_shape=\(16, 16\)"):
        t.reshape((16, 16), new_shape=(16, 16))      # the shape twice: refused, not silently merged
    with raises_tik(IllegalOperand, match=r"by position \(16,\) and as new_shape=16"):
        t.reshape(16, new_shape=16)                  # split across both forms (was merged into (16, 16))


def test_reinterpret_cast_to_wider_and_narrower():
    ti = tik.Tik()
    t = ti.Tensor("float32", (64,), name="t", scope=tik.scope_ubuf)
    h = t.reinterpret_cast_to("uint16")                 # narrower: trailing dim of the ratio
    assert (h.dtype, h.shape, h.offset) == ("uint16", [64, 2], 0)
    assert h[10].offset == 10                          # flat use still works (CHECKLIST T21)
    w = ti.Tensor("uint8", (64,), name="w", scope=tik.scope_ubuf).reinterpret_cast_to("int32")
    assert (w.dtype, w.shape) == ("int32", [16])
    assert t[8:].reinterpret_cast_to("int32").offset == 8
    with raises_tik(IllegalOperand, match="not a multiple of 4"):
        ti.Tensor("uint8", (6,), name="u", scope=tik.scope_ubuf).reinterpret_cast_to("int32")
    with raises_tik(IllegalOperand, match="offset .* not a multiple of 2"):
        ti.Tensor("int16", (16,), name="v", scope=tik.scope_ubuf)[1:15].reinterpret_cast_to("int32")


def test_element_writes_and_reads_run_on_the_simulator():
    ti = tik.Tik()
    x = ti.Tensor("int32", (8,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (2, 8), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (2, 8), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    s = ti.Scalar("int32", name="s")
    s.set_as(ub[3])                                    # Scalar <- tensor element
    ub[1, 0] = ub[2]                                   # item assignment with a tensor element (T8)
    ub[1, 1].set_as(s * 10)                            # Expr value
    ub.__setitem__(10, 77)                             # explicit __setitem__, flat index (T9)
    ub[1, 3].set_as(ub[0, 4], dst_offset=0)
    ub[12].set_as(ub, src_offset=5)                    # src_offset on a tensor value
    with ti.for_range(13, 16) as i:
        ub[1, i - 8].set_as(i)
    ti.data_move(y, ub, 0, 1, 2, 0, 0)
    build(ti, "elems", [x], [y])
    xs = np.arange(100, 108, dtype=np.int32)
    out, = run(ti, {"x": xs})
    assert out[1].tolist() == [102, 1030, 77, 104, 105, 13, 14, 15]


def test_calling_a_tensor_indexes_it():
    """TIK's ``Tensor.__call__(index)`` is ``__getitem__(index)`` (tik_tensor.py); CANN's nll_loss reads
    ``target_ub(0)`` into a Scalar and moves data to ``output(offset)``."""
    ti = tik.Tik()
    x = ti.Tensor("int32", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (16,), name="ub", scope=tik.scope_ubuf)
    assert _v(ub(5)) == _v(ub[5]) == (5, [1], (1,))
    ti.data_move(ub, x, 0, 1, 2, 0, 0)
    s = ti.Scalar("int32", name="s")
    s.set_as(ub(3))                                    # Scalar <- ub(3)
    ub(0).set_as(s * 2)
    ti.data_move(y(8), ub, 0, 1, 1, 0, 0)              # y[8:16] <- ub[0:8]
    ti.data_move(y(0), ub(8), 0, 1, 1, 0, 0)           # y[0:8] <- ub[8:16]
    build(ti, "call_index", [x], [y])
    out, = run(ti, {"x": np.arange(40, 56, dtype=np.int32)})
    assert out.tolist() == list(range(48, 56)) + [86] + list(range(41, 48))
    with raises_tik(IllegalOperand, match=r"tensor overflow: index 16 is outside \[0, 16\)"):
        ub(16)


def test_tik_tensor_query_attributes():
    """TIK Tensor's public queries (tik_tensor.py): ``ptr(i)`` is ``t[i]``, ``buffer_size`` (bytes of the
    allocation), ``is_tensor_slice()``, ``is_single_point()``, ``is_workspace`` / ``is_atomic_add``."""
    ti = tik.Tik()
    ub = ti.Tensor("float16", (4, 16), name="ub", scope=tik.scope_ubuf)
    ws = ti.Tensor("float32", (8,), name="ws", scope=tik.scope_gm, is_workspace=True)
    acc = ti.Tensor("float32", (8,), name="acc", scope=tik.scope_gm, is_atomic_add=True)
    assert _v(ub.ptr(1)) == _v(ub[1])
    assert ub.buffer_size == 128 and ub[1].buffer_size == 128 and ws.buffer_size == 32
    assert not ub.is_tensor_slice() and not ub[0:4, 0:16].is_tensor_slice() and not ub.reshape((64,)).is_tensor_slice()
    assert ub[1].is_tensor_slice() and ub[0:4].is_tensor_slice() and ub[1:4, 0:16].is_tensor_slice()
    assert ub[1, 3].is_single_point() and ub[1].is_single_point() and not ub[1:2, 0:16].is_single_point()
    assert ws.is_workspace and not ws.is_atomic_add and acc.is_atomic_add and not ub.is_workspace
    with raises_tik(IllegalOperand, match=r"tensor overflow"):
        ub.ptr(64)
    assert ub.double_buffer_size(2) == 256
    view = ub[0:4, 0:16]
    view.change_shape((2, 32))                          # in place, as TIK's change_shape
    assert view.shape == [2, 32] and _v(view[1, 0])[0] == _v(ub[2, 0])[0] == 32
    with raises_tik(IllegalOperand, match=r"cannot reshape 64 elements"):
        view.change_shape((3, 16))
    assert view.shape == [2, 32]                        # bad input leaves the view as it was
    with raises_tik(UnsupportedOp, match=r"Tensor.access_ptr is TIK's TVM-level plumbing"):
        ub.access_ptr("w")
    with pytest.raises(AttributeError, match="no attribute 'no_such_member'"):
        ub.no_such_member


def test_tensor_tvm_internals_are_errors_without_a_getattr_hook():
    """TIK's TVM-level tensor attributes (access_ptr, indice, disable_tensor) raise UnsupportedOp at the user's line;
    any other missing name is a plain AttributeError (hasattr stays False). They are properties of the class: a
    ``__getattr__`` would keep Python 3.11 from specialising every attribute read of a tensor (each TIK call makes
    dozens), about 3 % of tracing a matmul kernel."""
    from tbe_compat.tik.tensor import Tensor
    assert "__getattr__" not in vars(Tensor)
    ti = tik.Tik()
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    for name in ("access_ptr", "indice", "disable_tensor"):
        with raises_tik(UnsupportedOp, match=rf"in `tik.Tensor.{name}`: operand {name}: Tensor.{name} is TIK's "
                                             r"TVM-level plumbing") as info:
            getattr(ub, name)
        assert info.value.where.file == __file__
    assert not hasattr(ub, "no_such_member") and ub[2:4].name == "ub"


def test_set_as_scope_rules_follow_the_chip():
    ti = tik.Tik()                                      # Ascend310: no GM element access
    g = ti.Tensor("int32", (8,), name="g", scope=tik.scope_gm)
    s = ti.Scalar("int32")
    with raises_tik(UnsupportedOp, match="cannot be read into a Scalar on Ascend310"):
        s.set_as(g[0])
    with raises_tik(IllegalOperand, match="dst must be in UB"):
        g[0].set_as(1)
    l1 = ti.Tensor("int32", (8,), name="l1", scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="must be in UB"):
        s.set_as(l1[0])
    set_current_compile_soc_info("Ascend910B1")
    ti2 = tik.Tik()
    g2 = ti2.Tensor("int32", (8,), name="g2", scope=tik.scope_gm)
    s2 = ti2.Scalar("int32", init_value=g2[1])
    g2[0].set_as(s2 + 1)
    build(ti2, "gm_elems", [g2], [g2])
    out, = run(ti2, {"g2": np.arange(8, dtype=np.int32)})
    assert out[0] == 2


def test_element_access_past_the_tensor_is_a_tensor_overflow():
    ti = tik.Tik()
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        ub[0].set_as(1, dst_offset=8)


def test_available_buffer_size_tracks_placement():
    ti = tik.Tik()
    full = ti.get_available_buffer_size(tik.scope_ubuf)
    assert full == 253952
    ti.Tensor("float16", (1000,), name="a", scope=tik.scope_ubuf)
    assert ti.get_left_buffer_size(tik.scope_ubuf) == full - 2000
    with raises_tik(IllegalOperand, match="has no on-chip buffer"):
        ti.get_available_buffer_size(tik.scope_gm)


# ------------------------------------------------------------------ zero-size tensors in code that never runs

def test_zero_dimension_tensor_in_code_that_never_runs_is_an_empty_tensor():
    """CANN sub_sample_labels declares a tail buffer of ``n % batch`` elements under ``if_scope(n % batch > 0)``;
    with ``n`` a multiple of the batch the declaration (shape [0]) and every call using it sit in code that never
    runs, which TIK's constant folding drops: the tensor is an empty Tensor object (not None), calls using it are
    dropped, nothing is placed, and the live code around it runs."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    tail = 128 % 64
    with ti.if_scope(tail > 0):
        t = ti.Tensor("float16", (tail, 16), name="t", scope=tik.scope_ubuf)
        ti.data_move(t, x, 0, 1, 8, 0, 0)
        ti.vadds(128, ub, t[0, 0], 1.0, 1, 1, 1, 8, 8)
        ti.vadds(128, t[3], ub, 1.0, 1, 1, 1, 8, 8)
    after = ti.Tensor("float16", (128,), name="after", scope=tik.scope_ubuf)
    ti.vadds(128, after, ub, 2.0, 1, 1, 1, 8, 8)
    ti.data_move(y, after, 0, 1, 8, 0, 0)
    assert t.shape == [0, 16] and t.storage.addr is None
    assert after.storage.addr == ub.storage.addr + 256            # the empty tensor took no UB bytes
    build(ti, "dead_empty", [x], [y])
    data = np.arange(128).astype(np.float16)
    assert (run(ti, {"x": data})[0] == data + np.float16(2)).all()


def test_zero_dimension_tensor_used_in_live_code_names_its_declaration():
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    with ti.if_scope(False):
        t = ti.Tensor("float16", (0,), name="t", scope=tik.scope_ubuf)
    decl_line = t.storage.where.line
    with raises_tik(IllegalOperand, match=rf"tensor 't' of shape \[0\]: it was declared at .*:{decl_line} in code "
                                          r"that never runs") as info:
        ti.data_move(t, x, 0, 1, 8, 0, 0)
    assert "test_tensors.py" in str(info.value) and "Fix:" in str(info.value)
    with raises_tik(IllegalOperand, match=r"non-positive dimension 0"):
        ti.Tensor("float16", (0,), name="live", scope=tik.scope_ubuf)     # live code: still refused
    with ti.if_scope(False):
        neg = ti.Tensor("float16", (4, -1), name="neg", scope=tik.scope_ubuf)  # n % 8 - 1 with n % 8 == 0
    with raises_tik(IllegalOperand, match=r"tensor 'neg' of shape \[4, -1\]: it was declared"):
        ti.vadds(16, neg, neg, 1.0, 1, 1, 1, 8, 8)


def test_zero_dimension_tensor_element_views_and_scalars_in_code_that_never_runs():
    """Element set_as, reshape / reinterpret_cast_to and a Scalar initialised from an element of an empty
    tensor in code that never runs are dropped / stay objects (not an error, not None); in live code each
    names the declaration (not an index error telling to use an index from 0 to -1)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    with ti.if_scope(False):
        t = ti.Tensor("float16", (0, 16), name="t", scope=tik.scope_ubuf)
        t[0, 1].set_as(ub[0])
        t[2].set_as(1.0)
        t[1, 1] = 2.0
        flat = t.reshape((0,))
        bits = flat.reinterpret_cast_to("int16")
        bits[0].set_as(3)
        idx = ti.Tensor("int32", (0,), name="idx", scope=tik.scope_ubuf)
        s = ti.Scalar("int32", init_value=idx[0])
        with ti.if_scope(s > 0):
            ti.vadds(128, t, ub, 1.0, 1, 1, 1, 8, 8)
    assert flat.shape == [0] and bits.dtype == "int16" and s is not None
    ti.vadds(128, ub, ub, 2.0, 1, 1, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    decl = t.storage.where.line
    for use in (lambda: t[0, 0].set_as(1.0), lambda: t.__setitem__(0, 1.0), lambda: ub[0].set_as(t[0, 0]),
                lambda: t.reshape((16,)), lambda: t.flatten(), lambda: t.reinterpret_cast_to("int16")):
        with raises_tik(IllegalOperand, match=rf"tensor 't' of shape \[0, 16\]: it was declared at .*:{decl} in code"):
            use()
    build(ti, "dead_empty_views", [x], [y])
    data = np.arange(128).astype(np.float16)
    assert (run(ti, {"x": data})[0] == data + np.float16(2)).all()


def test_six_open_ended_dynamic_tensors_that_fit_together_run_and_do_not_overlap():
    """Six run-time-shaped UB tensors without max_mem_size (26 KB each, 156 KB of 910B1's 192 KB: public CANN
    roi_pool_grad_with_arg_max's shape) are placed one after another at run time (DYNAMIC_TENSOR_RUNTIME_CHAIN):
    each holds its own data; sizes that do not fit together are refused naming the tensors and max_mem_size."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    n_gm = ti.Tensor("int32", (8,), name="n_gm", scope=tik.scope_gm)
    x = ti.Tensor("float32", (6 * 8192,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (6 * 8192,), name="y", scope=tik.scope_gm)
    nub = ti.Tensor("int32", (8,), name="nub", scope=tik.scope_ubuf)
    ti.data_move(nub, n_gm, 0, 1, 1, 0, 0)
    n = ti.Scalar("int32", init_value=nub[0])
    bufs = [ti.Tensor("float32", (n,), name=f"b{i}", scope=tik.scope_ubuf) for i in range(6)]
    for i in range(6):
        ti.data_move(bufs[i], x[i * n], 0, 1, n // 8, 0, 0)
    for i in range(6):
        ti.data_move(y[i * n], bufs[i], 0, 1, n // 8, 0, 0)
    build(ti, inputs=[n_gm, x], outputs=[y])
    xs = np.arange(6 * 8192, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # y's tail is not written at 6656 elements per tensor
        got, = run(ti, {"n_gm": np.full(8, 6656, np.int32), "x": xs})
    assert np.array_equal(got[:6 * 6656], xs[:6 * 6656])
    with raises_tik(OutOfBounds, match=r"dynamic tensor 'b5' \(placed without max_mem_size at the run-time end of "
                                       r"'b4'") as info:
        run(ti, {"n_gm": np.full(8, 8192, np.int32), "x": xs})
    assert "max_mem_size=" in info.value.hint and "DYNAMIC_TENSOR_RUNTIME_CHAIN" in info.value.hint
    assert "'b0', 'b1', 'b2', 'b3', 'b4', 'b5'" in info.value.hint
    assert "check the offsets" not in str(info.value)


@pytest.mark.parametrize("shape", [lambda tail: (tail,), lambda tail: (tail // 16, 16)])
def test_an_empty_slice_reshaped_in_code_that_never_runs_is_an_empty_view(shape):
    """CANN's tail idiom with a Python tail of 0: ``ub[n - tail:n].reshape(...)`` under ``if_scope(tail > 0)``
    is an empty view there (as an empty tensor's reshape is) and the calls on it are dropped; the reshape
    refused the zero dimension and stopped a legal kernel (h_review289)."""
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    n, tail = 128, 128 % 64
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    with ti.if_scope(tail > 0):
        t = ub[n - tail:n].reshape(shape(tail))
        ti.vec_adds(16, t, t, 1.0, 1, 8, 8)
    ti.vec_muls(128, ub, ub, 2.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "dead_tail_reshape", [x], [y])
    data = np.arange(128, dtype=np.float16)
    assert np.array_equal(run(ti, {"x": data})[0], data * np.float16(2))
    ti = tik.Tik()                       # in code that runs, the zero dimension is still refused
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    with raises_tik(PtoError, match=r"non-positive dimension 0"):
        ub[128:128].reshape((0,))


def test_flatten_and_change_shape_errors_and_warnings_name_the_api_called():
    """Tensor.flatten() / Tensor.change_shape() went through the decorated reshape, so their refusals and
    Cann81RuleWarnings said "in `tik.Tensor.reshape`" (review439): each names the API the user called, and a
    refusal in code that never runs still raises (declarations, DEAD_CODE_DECLARATIONS_CHECKED) as reshape's."""
    from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
    _CANN81_WARNED.clear()
    ti = tik.Tik()
    t2 = ti.Tensor("float16", (4, 16), name="t2", scope=tik.scope_ubuf)
    w = ti.Tensor("float16", (64,), name="w", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ in `tik\.Tensor\.flatten`: .*shape \[2, 16\] has "
                                          r"been sliced"):
        t2[0:2, :].flatten()
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ in `tik\.Tensor\.change_shape`: .*into \[3, 16\]"):
        w.change_shape((3, 16))
    assert w.shape == [64]                                     # refused: nothing changed
    with pytest.warns(Cann81RuleWarning, match=r"test_tensors\.py:\d+ in `tik\.Tensor\.change_shape`: change_shape "
                                               r"of a slice"):
        part = w[0:16]
        part.change_shape((16,))
    with pytest.warns(Cann81RuleWarning, match=r"in `tik\.Tensor\.flatten`: flatten of a slice"):
        t2[16:48].flatten()
    with pytest.warns(Cann81RuleWarning, match=r"in `tik\.Tensor\.reshape`: reshape of a slice"):
        w[0:32].reshape((2, 16))
    with ti.if_scope(0 > 1):                                   # code that never runs
        with raises_tik(IllegalOperand, match=r"in `tik\.Tensor\.flatten`"):
            t2[0:2, :].flatten()
    _CANN81_WARNED.clear()


def test_numpy_float32_float16_and_bool_dimensions_are_refused_as_numpy_ints_are(monkeypatch):
    """review448: TENSOR_SHAPE_NUMPY_INT_REFUSED cited CANN 8.1 __check_tensor_params (isinstance int/float/Scalar/
    Expr/TVM imm) and te.tik 2019 is_immediate_number (float/int), but let np.float32 / np.float16 / np.bool_ through
    as their values, though neither check takes them (only np.float64 subclasses float). Each is now the same
    IllegalOperand, whose Fix declares; np.float64 and Python True still declare."""
    from tbe_compat.tik import container
    ti = tik.Tik()
    for bad, kind, fixed in ((np.float32(16.0), "float32, not a Python float", "(16, 4)"),
                             (np.float16(8), "float16, not a Python float", "(8, 4)"),
                             (np.bool_(True), "bool, not a Python int", "(1, 4)")):
        with raises_tik(IllegalOperand, match=rf"test_tensors\.py:\d+ in `tik\.Tensor`: operand shape: shape "
                                              rf"dimension .* is a numpy {kind}.*Fix: pass the dimensions as Python "
                                              rf"ints: shape={re.escape(fixed)}"):
            ti.Tensor("float16", (bad, 4), tik.scope_ubuf, "a")
        assert ti.Tensor("float16", eval(fixed), tik.scope_ubuf, "a").shape == list(eval(fixed))     # the Fix
    assert ti.Tensor("float16", (np.float64(16.0), True), tik.scope_ubuf, "f").shape == [16, 1]
    monkeypatch.setattr(container, "TENSOR_SHAPE_NUMPY_INT_REFUSED", False)
    assert ti.Tensor("float16", (np.float32(16.0), np.bool_(True)), tik.scope_ubuf, "g").shape == [16, 1]


def test_tensor_name_with_a_leading_digit_and_numpy_int_dimensions_are_refused_with_a_fix_that_works(monkeypatch):
    """TENSOR_NAME_NO_LEADING_DIGIT: te.tik 2019 Tik.Tensor_ ("tensor's name should not begin with a digit") and the
    CANN TIK Tensor page refuse name='1ab'; TENSOR_SHAPE_NUMPY_INT_REFUSED: CANN 8.1 __check_tensor_params ("element
    in shape should be Imm, Scalar or Expr.") and te.tik 2019 _normalize_shape refuse a numpy integer dimension. The
    simulator accepted both (review439); each is now an IllegalOperand at the line whose Fix, applied, declares."""
    from tbe_compat.tik import container
    ti = tik.Tik()
    n = ti.Scalar("int32", name="n", init_value=4)
    with raises_tik(IllegalOperand, match=r"test_tensors\.py:\d+ in `tik\.Tensor`: operand name: tensor name '1ab' "
                                          r"begins with a digit.*Fix: start the name with a letter or _: "
                                          r"name='t1ab'"):
        ti.Tensor("float16", (16,), tik.scope_ubuf, "1ab")
    assert ti.Tensor("float16", (16,), tik.scope_ubuf, "t1ab").name == "t1ab"          # the Fix
    for shape, fixed in (((np.int64(16),), "(16,)"), ([np.int32(4), 16], "(4, 16)"), ((n, np.uint8(16)), "(n, 16)")):
        with raises_tik(IllegalOperand, match=rf"test_tensors\.py:\d+ in `tik\.Tensor`: operand shape: shape "
                                              rf"dimension np\.u?int\d+\(\d+\) is a numpy u?int\d+, not a Python int.*"
                                              rf"Fix: pass the dimensions as Python ints: shape={re.escape(fixed)}"):
            ti.Tensor("float16", shape, tik.scope_gm, f"g{len(fixed)}")
        assert ti.Tensor("float16", eval(fixed, {"n": n}), tik.scope_gm, f"g{len(fixed)}") is not None   # the Fix
    assert ti.Tensor("float16", (np.float64(16.0), True), tik.scope_ubuf, "f").shape == [16, 1]   # both TIKs take
    monkeypatch.setattr(container, "TENSOR_NAME_NO_LEADING_DIGIT", False)
    monkeypatch.setattr(container, "TENSOR_SHAPE_NUMPY_INT_REFUSED", False)
    assert ti.Tensor("float16", (np.int64(16),), tik.scope_ubuf, "2ab").shape == [16]


def test_a_fractional_numpy_dimension_gets_a_fix_that_declares():
    """fix451: shape=(np.float32(2.5), 16) was told 'pass the dimensions as Python ints: shape=(2.5, 16)', which is
    refused again (a Python float 2.5 is not a dimension). The Fix now names whole numbers, rounded down and up, and
    each declares; a dimension below 1 gets the rounded-up one only; NaN gets no shape to copy."""
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"Fix: a dimension counts elements, so it must be a whole number "
                                          r"\(np.float32\(2.5\) is not\): compute the shape in Python ints, e.g. "
                                          r"shape=\(2, 16\) \(int\(d\), rounding down\), or shape=\(3, 16\) "
                                          r"\(math.ceil\(d\), rounding up\)"):
        ti.Tensor("float16", (np.float32(2.5), 16), tik.scope_ubuf, "a")
    for fixed in ((2, 16), (3, 16)):
        assert ti.Tensor("float16", fixed, tik.scope_ubuf, "a").shape == list(fixed)      # each Fix declares
    with raises_tik(IllegalOperand, match=r"e.g. shape=\(1, 4\) \(math.ceil"):
        ti.Tensor("float16", (np.float16(0.5), np.int64(4)), tik.scope_ubuf, "b")
    with raises_tik(IllegalOperand, match=r"must be a whole number Python int \(np.float32\(nan\) is not\)"):
        ti.Tensor("float16", (np.float32("nan"),), tik.scope_ubuf, "c")
