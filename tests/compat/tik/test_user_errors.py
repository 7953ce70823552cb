"""Bad input from a kernel author: every case raises the facade's error (a `pto_core.errors` class that is
also SystemExit/RuntimeError) naming the problem, the user's ``file:line`` and a fix -- never a bare Python
exception from inside the simulator, and never a silently wrong kernel. (Found by an argument fuzzer over
the TIK API; each test is one of its findings.)"""
import inspect
import re

import numpy as np
import pytest

from pto_core.errors import CapacityExceeded, IllegalOperand, PtoError, UninitializedRead, UnknownName
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, raises_tik, run

HERE = __file__


def _line(fn, text):
    """Line number in this file of the first line of ``fn`` containing ``text``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def _at_user_line(e: PtoError, fn, text) -> None:
    assert e.where is not None and e.where.file == HERE and e.where.line == _line(fn, text), e.where
    assert e.hint, str(e)


def _kernel(chip="Ascend910B1"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float16", (128,), name="a", scope=tik.scope_ubuf)
    f = ti.Tensor("float32", (128,), name="f", scope=tik.scope_ubuf)
    return ti, x, y, a, f


def _copy_still_works(ti, x, y, a):
    """The instance is usable after the error: a copy kernel builds and gives the right result."""
    ti.data_move(a, x, 0, 1, 8, 0, 0)
    ti.data_move(y, a, 0, 1, 8, 0, 0)
    build(ti, "copy", [x], [y])
    xs = np.arange(128).astype(np.float16)
    assert np.array_equal(run(ti, {"x": xs})[0], xs)


def test_mode_arguments_given_as_lists_are_clear_errors():
    """An unhashable value where a mode name belongs (round_mode, scope) was a TypeError from a dict."""
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match=r"round_mode \['none'\] is not supported") as e:
        ti.vec_conv(64, ["none"], f, a, 1, 8, 4)
    _at_user_line(e.value, test_mode_arguments_given_as_lists_are_clear_errors, "ti.vec_conv(64")
    with raises_tik(UnknownName, match="is not a tensor scope"):
        ti.Tensor("float16", (16,), name="t", scope=[tik.scope_ubuf])
    with raises_tik(IllegalOperand, match="round_mode"):
        ti.scalar_conv(["round"], ti.Scalar("int32"), ti.Scalar("float32", init_value=1.5))
    with raises_tik(IllegalOperand, match="round_mode"):
        ti.h_cast(f.reshape((8, 16)), a.reshape((8, 16)), ["none"])
    _copy_still_works(ti, x, y, a)


def test_tensors_have_no_python_arithmetic_len_iteration_or_int():
    ti, x, y, a, f = _kernel()
    for bad in (lambda: a + 1, lambda: 2 * a, lambda: -a, lambda: len(a), lambda: list(a), lambda: int(a[0])):
        with raises_tik(IllegalOperand, match="TIK tensor view") as e:
            bad()
        assert e.value.hint and e.value.where.file == HERE
    assert a and bool(a[0:16])                                  # `if bias:` still asks "was a tensor given"


def test_a_scalar_of_another_kernel_is_rejected_where_it_is_used():
    """It used to trace, then fail in the generated code (NameError) when the kernel ran."""
    ti, x, y, a, f = _kernel()
    other = tik.Tik().Scalar("int32", name="other", init_value=3)
    s = ti.Scalar("int32", name="s")
    with raises_tik(IllegalOperand, match="belongs to another kernel") as e:
        s.set_as(other + 1)
    _at_user_line(e.value, test_a_scalar_of_another_kernel_is_rejected_where_it_is_used, "s.set_as(other + 1)")
    with raises_tik(IllegalOperand, match="belongs to another kernel"):
        ti.data_move(a, x, 0, 1, other, 0, 0)
    _copy_still_works(ti, x, y, a)


def test_a_scalar_of_another_tik_names_where_it_was_declared():
    """Every tik.Tik() traces into a kernel named 'tik_kernel': the message read "belongs to another kernel
    ('tik_kernel'), not to 'tik_kernel'" and did not say which Scalar line was meant (h_ux304)."""
    ti, x, y, a, f = _kernel()
    other = tik.Tik().Scalar("float16", name="other", init_value=2.0); line = inspect.currentframe().f_lineno
    with raises_tik(IllegalOperand, match=rf"register %other \(declared at {re.escape(HERE)}:{line}\) belongs to "
                                          r"another kernel that is also named 'tik_kernel' \(another builder"):
        ti.vec_adds(16, a, a, other, 1, 8, 8)
    _copy_still_works(ti, x, y, a)


def test_reading_a_scalar_never_set_is_an_uninitialized_read_at_its_line():
    """It was a NameError from the generated kernel code."""
    ti, x, y, a, f = _kernel()
    s = ti.Scalar("float16", name="never_set")
    a[3].set_as(s)
    ti.data_move(y, a, 0, 1, 8, 0, 0)
    build(ti, "uninit", [], [y])
    with raises_tik(UninitializedRead, match=r"never_set \(declared at .*test_user_errors\.py:\d+\) is read before "
                                             r"any assignment") as e:
        run(ti)
    _at_user_line(e.value, test_reading_a_scalar_never_set_is_an_uninitialized_read_at_its_line, "a[3].set_as(s)")
    assert f"test_user_errors.py:{e.value.where.line - 1})" in str(e.value)     # the declaration, a line above


def test_immediates_that_do_not_fit_an_integer_scalar():
    """2**40 into an int32 Scalar used to wrap silently, NaN to convert to garbage (TVM rejects such literals)."""
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match="1099511627776 \\(stored into the int32 Scalar 'big'\\) does not fit") as e:
        ti.Scalar("int32", name="big", init_value=2 ** 40)
    assert "[-2147483648, 2147483647]" in e.value.hint
    s = ti.Scalar("uint8", name="u")
    with raises_tik(IllegalOperand, match="does not fit"):
        s.set_as(-1)
    with raises_tik(IllegalOperand, match="nan .* cannot be stored in uint8"):
        s.set_as(float("nan"))
    with raises_tik(IllegalOperand, match="does not fit int64"):
        ti.scalar_sqrt(ti.Scalar("int64", name="r"), 2 ** 64)
    s.set_as(255)                                              # the edges are fine
    ti.Scalar("int32", init_value=1.5)                         # a fraction converts as in C (documented)


def test_for_range_bounds_must_fit_the_loop_variable_and_block_num_its_limit():
    """for_range(2**31, ...) wrapped the int32 loop variable (a 2**32-iteration loop); block_num=2**20 ran a
    million simulated cores."""
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match="does not fit the loop's int32 variable") as e:
        with ti.for_range(2 ** 31, 2 ** 31 + 2):
            pass
    assert e.value.operand == "begint" and e.value.hint
    with raises_tik(IllegalOperand, match="endt"):
        with ti.for_range(0, 2 ** 40):
            pass
    with ti.for_range(0, 2 ** 40, dtype="int64"):               # a wide loop variable holds it
        pass
    with raises_tik(IllegalOperand, match=r"block_num = 1048576 is outside \[1, 65535\]"):
        with ti.for_range(0, 2 ** 20, block_num=2 ** 20):
            pass


def test_float_values_are_not_indices_slice_bounds_or_dimensions():
    """A float Scalar index/dimension and a fractional slice bound were truncated silently."""
    ti, x, y, a, f = _kernel()
    fs = ti.Scalar("float32", name="fs", init_value=2.0)
    with raises_tik(IllegalOperand, match="float32 expression, not an integer one") as e:
        a[fs]
    _at_user_line(e.value, test_float_values_are_not_indices_slice_bounds_or_dimensions, "a[fs]")
    with raises_tik(IllegalOperand, match="slice stop 1.5 is not an integer"):
        a[0:1.5]
    with raises_tik(IllegalOperand, match="shape must be an integer"):
        ti.Tensor("float16", (fs,), name="t", scope=tik.scope_ubuf, max_mem_size=1024)
    i = ti.Scalar("int32", name="i", init_value=2)
    assert a[i + 1].shape == [1] and a[i:i + 4].shape == [4] and a[2.0].shape == [1]


def test_init_value_is_checked_where_the_tensor_is_declared():
    """A wrong count was reported by start_debug, a str crashed BuildCCE with a ValueError."""
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match="init_value has 3 values; tensor 'w' has 16 elements") as e:
        ti.Tensor("int32", (16,), name="w", scope=tik.scope_gm, init_value=[1, 2, 3])
    _at_user_line(e.value, test_init_value_is_checked_where_the_tensor_is_declared, "init_value=[1, 2, 3]")
    with raises_tik(IllegalOperand, match="init_value of GM tensor 'w' must be a number or a list of numbers"):
        ti.Tensor("int32", (3,), name="w", scope=tik.scope_gm, init_value="abc")
    with raises_tik(IllegalOperand, match=r"init_value\[0\] = 'abc' is not a number"):
        ti.Tensor("int32", (3,), name="w", scope=tik.scope_gm, init_value=["abc", 1, 2])
    with raises_tik(IllegalOperand, match=r"init_value\[2\] = True is not a number .*a bool is not one"):
        ti.Tensor("int32", (3,), name="w", scope=tik.scope_gm, init_value=[0, 1, True])
    with raises_tik(IllegalOperand, match="init_value must be a list of numbers, got list"):
        ti.Tensor("int32", (3,), name="w", scope=tik.scope_gm, init_value=[])
    with raises_tik(IllegalOperand, match="NaN or infinity"):
        ti.Tensor("int32", (2,), name="w", scope=tik.scope_gm, init_value=[1, float("inf")])


def test_scalar_array_longer_than_the_simulator_holds_is_refused_at_once():
    """ScalarArray(length=2**31) made 2**31 registers (a hang), 2**63 an OverflowError."""
    ti, x, y, a, f = _kernel()
    for n in (2 ** 63, 2 ** 31):
        with raises_tik(CapacityExceeded, match="more than the simulator's 65536"):
            ti.ScalarArray("int32", length=n)


def test_vector_scalar_immediates_are_checked_when_traced():
    """vshl/vshr/vadds immediates that do not fit the elements failed only when start_debug ran, without a fix."""
    ti, x, y, a, f = _kernel()
    h = ti.Tensor("int16", (128,), name="h", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="takes an integer scalar, got 1.5") as e:
        ti.vshl(128, h, h, 1.5, 1, 1, 1, 8, 8)
    _at_user_line(e.value, test_vector_scalar_immediates_are_checked_when_traced, "ti.vshl(128, h, h, 1.5")
    with raises_tik(IllegalOperand, match="scalar -1 does not fit u16"):
        ti.vshr(128, h, h, -1, 1, 1, 1, 8, 8)
    with raises_tik(IllegalOperand, match="scalar 40000 does not fit s16"):
        ti.vadds(128, h, h, 40000, 1, 1, 1, 8, 8)
    ti.vshl(128, h, h, 3, 1, 1, 1, 8, 8)


def test_errors_outside_an_api_call_carry_the_users_line_and_a_fix():
    ti, x, y, a, f = _kernel()
    n = ti.InputScalar("int32", name="n")
    with raises_tik(IllegalOperand, match="read-only") as e:
        n.set_as(3)
    _at_user_line(e.value, test_errors_outside_an_api_call_carry_the_users_line_and_a_fix, "n.set_as(3)")
    with raises_tik(IllegalOperand, match="cannot use str") as e:
        tik.all("x", n > 0)
    _at_user_line(e.value, test_errors_outside_an_api_call_carry_the_users_line_and_a_fix, 'tik.all("x"')
    with raises_tik(IllegalOperand, match="has no on-chip buffer") as e:
        ti.get_available_buffer_size("x")
    _at_user_line(e.value, test_errors_outside_an_api_call_carry_the_users_line_and_a_fix, "get_available_buffer")
    with pytest.raises(UnknownName, match="unsupported SoC version") as e:
        set_current_compile_soc_info("Ascend999")
    _at_user_line(e.value, test_errors_outside_an_api_call_carry_the_users_line_and_a_fix, '"Ascend999"')
    with raises_tik(IllegalOperand, match=r"slice start 'a' is not an integer"):
        x["a":"b"]


def test_shared_argument_checks_say_what_to_do():
    """The helpers every API resolves its arguments with give a fix (they gave none before)."""
    ti, x, y, a, f = _kernel()
    h = ti.Tensor("int16", (128,), name="h", scope=tik.scope_ubuf)
    cases = [
        (lambda: ti.vec_add(128, x, a, a, 1, 8, 8, 8), "pass a tensor declared in UB"),            # scope
        (lambda: ti.vec_add(128, a, a, a, 1, 300, 8, 8), "counts 32-byte blocks: pass 0..255"),     # stride range
        (lambda: ti.vec_add(128, a, a, a, 1.5, 8, 8, 8), "round it first"),                         # int type
        (lambda: ti.vec_add(128, a, a, h, 1, 8, 8, 8), "convert src1 first"),                       # dtype match
        (lambda: ti.vec_add([1, 2, 3], a, a, a, 1, 8, 8, 8), r"pass \[mask_1, mask_0\]"),           # mask words
        (lambda: ti.vec_cmpv_lt(a, a, a, 1, 8, 8), "pass a uint8 or uint16"),                      # dtypes
        (lambda: ti.data_move(a, x, 0, 5000, 1, 0, 0), "between 1 and 4095"),                       # range
    ]
    for bad, fix in cases:
        with raises_tik(PtoError, match=fix) as e:
            bad()
        assert e.value.where.file == HERE, e.value
    _copy_still_works(ti, x, y, a)


def test_set_atomic_add_with_a_float_scalar_mode_is_refused():
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match="mode must be an integer, got a float32 expression"):
        ti.set_atomic_add(ti.Scalar("float32", init_value=1.0))


def test_legacy_block_strides_given_as_none_are_refused():
    """None means "the vec_* form" inside the helpers, so vcadd(..., src_blk_stride=None) silently used 1."""
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand, match="src_blk_stride must be an int, Scalar or Expr, got NoneType"):
        ti.vcadd(128, a, a, 1, 1, None, 8)
    with raises_tik(IllegalOperand, match="src_blk_stride must be an int"):
        ti.vcmax(128, a, a, 1, 1, None, 8)
    with raises_tik(IllegalOperand, match="dst_blk_stride must be an int"):
        ti.vector_dup(128, a, 1.0, 1, None, 8)
    ti.vec_dup(128, a, 1.0, 1, 8)                                # the vec_* forms have no block stride


def test_int_immediates_combined_with_tik_values_must_fit_their_dtype():
    """``s + 2**40`` on an int32 Scalar wrapped the immediate silently (``s < 2**32`` compared with 0)."""
    ti, x, y, a, f = _kernel()
    s = ti.Scalar("int32", name="s", init_value=1)
    with raises_tik(IllegalOperand, match=r"the immediate 1099511627776 \(operand of 'add'\) does not fit int32"):
        s + 2 ** 40
    with raises_tik(IllegalOperand, match="operand of a comparison"):
        s < 2 ** 32
    s64 = ti.Scalar("int64", name="s64", init_value=1)       # scalar_max takes int64 (float32 on later chips)
    with raises_tik(IllegalOperand, match="does not fit int64") as e:
        ti.scalar_max(s64, s64, 2 ** 64)
    assert e.value.operand == "src1"
    assert (s.astype("int64") + 2 ** 40).dtype == "int64" and (s + (2 ** 31 - 1)).dtype == "int32"


def test_pto_op_mixing_two_tik_kernels_is_a_tik_error_at_the_users_line():
    """A pto.* op on tensors of two tik.Tik() instances raised a bare IllegalOperand from the router, so the
    script died with a Python traceback through pto_core/ops/registry.py and tbe_compat/tik/bridge.py."""
    from pto_core import pto
    ti, x, y, a, f = _kernel()
    other = tik.Tik()
    b = other.Tensor("float16", (128,), name="b", scope=tik.scope_ubuf)

    def mixed():
        pto.mte_gm_ub(x.pto_ptr(), b.pto_ptr(), 0, 256, nburst=(1, 256, 256))

    with raises_tik(IllegalOperand, match=r"2 different TIK kernels \(tensor 'x' of kernel 1; tensor 'b' of "
                                          r"kernel 2\)") as e:
        mixed()
    _at_user_line(e.value, mixed, "pto.mte_gm_ub")
    assert "TIK call stack" in e.value.code and "pto.mte_gm_ub(x.pto_ptr()" in e.value.code
    a_ptr = a.pto_ptr()
    pto.mte_gm_ub(x.pto_ptr(), a_ptr, 0, 256, nburst=(1, 256, 256))      # the kernel still traces
    ti.data_move(y, a, 0, 1, 8, 0, 0)
    build(ti, "mixed_ok", [x], [y])
    assert (run(ti, {"x": np.ones(128, np.float16)})[0] == 1).all()


def test_pto_op_with_wrong_operands_in_a_tik_kernel_is_a_tik_error():
    """Operand-count and clause-name errors of a pto.* call on TIK tensors' pointers (found before the call is
    routed to its kernel) were bare pto_core errors with a traceback into pto_core/ops/registry.py; other
    operand errors of the same call were TIK errors."""
    from pto_core import pto
    from pto_core.errors import UnknownName
    ti, x, y, a, f = _kernel()

    def too_few():
        pto.mte_gm_ub(x.pto_ptr(), a.pto_ptr(), 0)

    def bad_clause():
        pto.mte_gm_ub(x.pto_ptr(), a.pto_ptr(), 0, 256, nbursts=(1, 256, 256))

    with raises_tik(IllegalOperand, match=r"takes 4 operands \(src, dst, l2_cache_ctl, len_burst\), got 3") as e:
        too_few()
    _at_user_line(e.value, too_few, "pto.mte_gm_ub")
    assert "TIK call stack" in e.value.code
    with raises_tik(UnknownName, match="unknown clause 'nbursts'") as e:
        bad_clause()
    _at_user_line(e.value, bad_clause, "pto.mte_gm_ub")
    pto.mte_gm_ub(x.pto_ptr(), a.pto_ptr(), 0, 256, nburst=(1, 256, 256))
    ti.data_move(y, a, 0, 1, 8, 0, 0)
    build(ti, "mixed_ok", [x], [y])
    assert (run(ti, {"x": np.ones(128, np.float16)})[0] == 1).all()


def test_pure_pto_operand_errors_are_unchanged():
    """The call-error hook leaves pto.* calls on a Machine's pointers alone (a plain pto_core error)."""
    from pto_core import Machine, pto
    m = Machine("A2A3")
    g, u = m.gm_alloc((128,), "f16", name="g"), m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand, match="takes 4 operands") as e:
        pto.mte_gm_ub(g, u, 0)
    assert not isinstance(e.value, SystemExit)


def test_stride_range_fix_names_the_unit_of_the_stride_unit_mode():
    """Under ``stride_unit`` 2/3 the strides count elements (tik_api.md §9.1), and under 1/3 the
    repeat stride is a gap: the out-of-range Fix said "counts 32-byte blocks" for every mode."""
    ti, x, y, a, f = _kernel()
    cases = [
        (lambda: ti.vadds(128, a, a, 1.0, 1, 1, 1, 300, 8, 0), r"dst_rep_stride counts 32-byte blocks: pass"),
        (lambda: ti.vadds(128, a, a, 1.0, 1, 1, 1, 300, 8, 1), r"dst_rep_stride counts 32-byte blocks of gap after"),
        (lambda: ti.vadds(128, a, a, 1.0, 1, 1, 1, 300, 8, 2), r"dst_rep_stride counts elements: pass"),
        (lambda: ti.vadds(128, a, a, 1.0, 1, 1, 1, 8, 300, 3), r"src_rep_stride counts elements of gap after"),
        (lambda: ti.vector_dup(128, a, 1.0, 1, 1, 300, 2), r"dst_rep_stride counts elements: pass"),
        (lambda: ti.vadd(128, a, a, a, 1, 300, 1, 1, 8, 8, 8, 2), r"dst_blk_stride counts elements of gap between"),
    ]
    for bad, fix in cases:
        with raises_tik(PtoError, match=fix) as e:
            bad()
        assert e.value.where.file == HERE, e.value
    _copy_still_works(ti, x, y, a)


def test_bad_arguments_of_tensor_and_scalar_methods_name_the_users_line():
    """A Tensor / Scalar method called with arguments it does not take (an unknown keyword, one value too
    many, a missing one) is a TIK error at the user's line with the method's parameters, as for `Tik`
    methods -- before it was a bare TypeError from inside the facade."""
    ti, x, y, a, f = _kernel()
    s = ti.Scalar("int32", init_value=1)
    calls = (
        (lambda: a.reshape(shape=(8, 16)), "tik.Tensor.reshape", "unexpected keyword argument 'shape'"),
        (lambda: a.flatten(1), "tik.Tensor.flatten", "too many positional arguments"),
        (lambda: a.reinterpret_cast_to("int16", 2), "tik.Tensor.reinterpret_cast_to", "too many positional"),
        (lambda: a.set_as(1, offset=2), "tik.Tensor.set_as", "unexpected keyword argument 'offset'"),
        (lambda: s.set_as(1, 2, 3), "tik.Scalar.set_as", "too many positional arguments"),
        (lambda: s.astype(), "tik.Expr.astype", "missing a required argument: 'dtype'"),
    )
    for call, api, why in calls:
        with raises_tik(IllegalOperand, match=why) as info:
            call()
        e = info.value
        assert e.op == api and e.where is not None and e.where.file == HERE, (api, e.where)
        assert f"call it as {api}(" in e.hint and "->" not in e.hint, e.hint
    assert a.reshape(new_shape=(8, 16)).shape == [8, 16]                 # legal calls unchanged
    _copy_still_works(ti, x, y, a)


def test_tik_errors_survive_pickling():
    """A facade error (its class is built at run time) pickles and unpickles with its class, message,
    provenance and exit behaviour: a kernel run in a multiprocessing worker reports its error in the parent."""
    import pickle
    ti, x, y, a, f = _kernel()
    with raises_tik(IllegalOperand) as info:
        ti.data_move(a, x, 0, 1, 4, 0, 0, bogus=1)
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and isinstance(back, SystemExit) and isinstance(back, IllegalOperand)
    assert str(back) == str(e) and back.where == e.where and back.hint == e.hint and back.code == e.code


@pytest.mark.parametrize("level", [0, 1])
def test_a_capacity_error_survives_pickling(level):
    """TikCapacityExceeded (a UB overflow: a MemoryError subclass) unpickles too, in both exit modes: its
    class's attribute ``__new__`` is MemoryError's, which refuses to build it (was a TypeError in the parent
    of a multiprocessing worker instead of the kernel's error)."""
    import pickle
    from pto_core.errors import CapacityExceeded
    ti = tik.Tik(err_msg_level=level)
    with pytest.raises(CapacityExceeded) as info:
        ti.Tensor("float16", (1 << 24,), name="huge", scope=tik.scope_ubuf)
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and isinstance(back, CapacityExceeded)
    assert isinstance(back, SystemExit) == (level != 1)
    assert str(back) == str(e) and back.where == e.where and back.hint == e.hint


@pytest.mark.parametrize("exit_on_error", [True, False])
def test_every_simulator_error_class_has_a_facade_variant(exit_on_error):
    """tik_error_class(AsmParseError, exit_on_error=True) raised TypeError ('multiple bases have instance lay-out
    conflict': AsmParseError was a SyntaxError, whose layout SystemExit's cannot share), so converting a PTO-AS
    parse error in a TIK run failed with that TypeError. Every PtoError class builds, converts and pickles."""
    import pickle
    import pto_core.errors as E
    from pto_core import asm
    from tbe_compat.tik.errors import convert, tik_error_class
    classes = [c for c in vars(E).values() if isinstance(c, type) and issubclass(c, PtoError)]
    assert E.AsmParseError in classes
    for c in classes:
        cls = tik_error_class(c, exit_on_error=exit_on_error)
        assert issubclass(cls, c) and issubclass(cls, RuntimeError) and issubclass(cls, SystemExit) == exit_on_error
    with pytest.raises(E.AsmParseError) as info:
        asm.parse("module {\n  func.func @k() {\n    pto.nonsense\n  }\n}\n", source_name="k.pto")
    e = convert(info.value, api="tik.x", exit_on_error=exit_on_error)
    assert isinstance(e, E.AsmParseError) and isinstance(e, SystemExit) == exit_on_error
    assert (e.line, e.column) == (info.value.line, info.value.column) and str(e).startswith("k.pto:3:")
    if exit_on_error:
        assert e.code.startswith("k.pto:3:")       # what Python prints for an uncaught SystemExit
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and str(back) == str(e)


def test_scalar_and_expression_errors_follow_err_msg_level_1():
    """``Tik(err_msg_level=1)`` raises RuntimeError-type errors, not SystemExit (tik_api.md 3.1), so a script's
    ``except Exception`` catches them: errors about Scalars, expressions and ScalarArray elements did end in
    SystemExit (the Expr has no Tik; user_method looked only at ``self.tik``). Level 0 still exits."""
    for level, exits in ((1, False), (0, True)):
        set_current_compile_soc_info("Ascend910B1")
        ti = tik.Tik(err_msg_level=level)
        s = ti.Scalar("int32", init_value=1)
        arr = ti.ScalarArray("int32", length=4, name="arr", init_value=0)
        calls = (lambda: s + "x", lambda: (s + 1).astype(), lambda: (s + 1).astype("float64"), lambda: bool(s < 1),
                 lambda: (s + 1).set_as(1), lambda: arr[s].set_as(1, 2, 3), lambda: int(s), lambda: tik.all())
        for call in calls:
            with pytest.raises(PtoError) as info:
                call()
            e = info.value
            assert isinstance(e, RuntimeError) and isinstance(e, SystemExit) == exits, (level, type(e).__mro__)
            assert e.where is not None and e.where.file == HERE and e.hint, str(e)


def test_expression_errors_follow_the_tik_that_owns_the_scalar():
    """Two Tik instances with different err_msg_level: an error about an expression built from one's Scalar
    follows that instance's level, not the level of the instance traced last (an Expr records no Tik; its
    registers name their kernel's builder, which knows its Tik)."""
    set_current_compile_soc_info("Ascend910B1")
    for first, last in ((1, 0), (0, 1)):
        ti = tik.Tik(err_msg_level=first)
        s = ti.Scalar("int32", init_value=1)
        other = tik.Tik(err_msg_level=last)
        other.Scalar("int32", init_value=2)
        for call in (lambda: (s + 1).astype(), lambda: (s * 2).astype("float64"), lambda: bool(s + 1 < 1)):
            with pytest.raises(PtoError) as info:
                call()
            assert isinstance(info.value, SystemExit) == (first == 0), (first, type(info.value).__mro__)


def test_more_tensor_methods_and_scalar_operators_are_tik_errors():
    """The other public Tensor methods called with arguments they do not take (``is_single_point(1)``,
    ``ptr(1, 2)``, ``t()``), and Python operators a TIK scalar does not have (``s ** 2``, ``2 ** s``,
    ``divmod``, ``round``, ``abs``: no TIK Expr has ``__abs__``) or a TIK tensor (``2 ** t``, ``t << 1``, ``t & 1``,
    ``~t``), are TIK errors at the user's line with a Fix, not bare TypeErrors."""
    ti, x, y, a, f = _kernel()
    s = ti.Scalar("int32", init_value=3)
    calls = (lambda: a.is_single_point(1), lambda: a.is_tensor_slice(True), lambda: a.ptr(1, 2),
             lambda: a.pto_ptr(0), lambda: a.byte_offset(1), lambda: a(), lambda: a(1, 2),
             lambda: s ** 2, lambda: 2 ** s, lambda: pow(s, 2, 5), lambda: divmod(s, 2), lambda: divmod(7, s),
             lambda: round(s), lambda: abs(s), lambda: abs(s + 1), lambda: 2 ** a, lambda: a << 1, lambda: 1 >> a,
             lambda: a & 1, lambda: 1 | a, lambda: a ^ 1, lambda: ~a, lambda: divmod(a, 2), lambda: round(a),
             lambda: abs(a))
    for call in calls:
        with raises_tik(IllegalOperand) as info:
            call()
        e = info.value
        assert e.where is not None and e.where.file == HERE and e.hint, str(e)
    assert a[0].is_single_point() and a[0:4].is_tensor_slice() and a.ptr(3).shape == [1] and a(5).shape == [1]
    _copy_still_works(ti, x, y, a)


def test_abs_of_a_scalar_is_refused_with_scalar_abs_as_the_fix():
    """abs(s) on a TIK Scalar / Expr: te.tik 2019 and CANN 8.1 BasicExpr have no ``__abs__`` (a TypeError there), so
    the facade refuses it as it refuses ``**`` and ``round`` (it used to build an abs expression); the Fix names
    ``tik_instance.scalar_abs``, which computes the same value."""
    ti, x, y, a, f = _kernel()
    s = ti.Scalar("int64", init_value=-3)
    for call in (lambda: abs(s), lambda: abs(s * 2 - 1)):
        with raises_tik(IllegalOperand) as info:
            call()
        assert "abs()" in str(info.value) and "scalar_abs" in info.value.hint, str(info.value)
        assert info.value.where.file == HERE
    d = ti.Scalar("int64")
    ti.scalar_abs(d, s)                  # the TIK way still works
    _copy_still_works(ti, x, y, a)
