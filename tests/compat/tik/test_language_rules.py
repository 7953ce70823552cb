"""TIK language rules from the TIK reference pages and TIK's source: constant for_range bounds, block_num range,
tik_break/tik_continue placement, Scalar assignment and arithmetic restrictions, names, GM tensors at the top
level, one-element set_as sources. Each rule: a legal kernel that runs and the illegal call's error."""
import warnings

import numpy as np
import pytest

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning

from .helpers import build, raises_tik, run


@pytest.fixture(autouse=True)
def _chip():
    set_current_compile_soc_info("Ascend910")


def _counter(body, n=8, dtype="int32"):
    """Runs ``body(ti, ub)`` on an ``n``-element UB tensor (zeroed) and returns it."""
    ti = tik.Tik()
    o = ti.Tensor(dtype, (n,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor(dtype, (n,), name="ub", scope=tik.scope_ubuf)
    ti.vec_dup(n, ub, 0, 1, 8)
    body(ti, ub)
    ti.data_move(o, ub, 0, 1, n * np.dtype(dtype).itemsize // 32, 0, 0)
    return run(build(ti, "k", [], [o]))[0]


def test_constant_for_range_bounds_need_begint_le_endt():
    def body(ti, ub):
        n = ti.Scalar("int32", init_value=0)
        with ti.for_range(3, 3):                      # empty, legal
            n.set_as(n + 1)
        with ti.for_range(2, 5):
            n.set_as(n + 10)
        ub[0].set_as(n)
    assert _counter(body)[0] == 30
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"for_range\(4, 2\): endt is below begint"):
        ti.for_range(4, 2)


def test_a_negative_immediate_begint_iterates_from_it():
    """Named choice (tik_core.md): TIK's source accepts it; the loop runs begint <= i < endt."""
    def body(ti, ub):
        n = ti.Scalar("int32", init_value=0)
        with ti.for_range(-3, 2) as i:
            n.set_as(n * 3 + i)
        ub[0].set_as(n)
    want = 0
    for i in range(-3, 2):
        want = want * 3 + i
    assert _counter(body)[0] == want


def test_double_buffered_constant_loops_shorter_than_thread_num_run_their_iterations():
    # SHORT_BUFFERED_LOOP_ACCEPTED: CANN 8.1's _check_extent_num checks only extent >= 0; the buffered loop guards
    # the copies past the extent, so for_range(0, 1, thread_num=2) runs once (te.tik refused it)
    def body(ti, ub):
        n = ti.Scalar("int32", init_value=0)
        with ti.for_range(0, 3, thread_num=2) as i:   # 3 iterations, the last pair half used
            n.set_as(n + i + 1)
        with ti.for_range(5, 5, thread_num=2):        # empty: legal
            n.set_as(100)
        with ti.for_range(7, 8, thread_num=2) as i:   # one iteration, fewer than thread_num
            n.set_as(n * 10 + i)
        with ti.for_range(0, 3, thread_num=4) as i:   # three iterations, thread_num 4
            n.set_as(n * 10 + i)
        ub[0].set_as(n)
    assert _counter(body)[0] == ((6 * 10 + 7) * 10 + 0) * 100 + 10 + 2


def test_short_buffered_loop_refusal_is_the_old_te_tik_check(monkeypatch):
    from tbe_compat.tik import control
    monkeypatch.setattr(control, "SHORT_BUFFERED_LOOP_ACCEPTED", False)
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"for_range\(0, 1, thread_num=2\): 1 iteration\(s\) cannot be split"):
        ti.for_range(0, 1, thread_num=2)


def test_block_num_above_65535_is_rejected():
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"block_num = 65536 is outside \[1, 65535\]"):
        ti.for_range(0, 65536, block_num=65536)


def test_break_and_continue_belong_to_serial_loops_not_the_multi_core_loop():
    ti = tik.Tik()
    o = ti.Tensor("int32", (16,), name="o", scope=tik.scope_gm)
    with ti.for_range(0, 2, block_num=2) as c:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.vec_dup(8, ub, 0, 1, 8)
        with ti.for_range(0, 8) as j:                 # a child loop of the multi-core loop: legal
            with ti.if_scope(j == 5):
                ti.tik_break()
            ub[j].set_as(c * 10 + j)
        ti.data_move(o[c * 8], ub, 0, 1, 1, 0, 0)
    out = run(build(ti, "k", [], [o]))[0]
    assert out.tolist() == [0, 1, 2, 3, 4, 0, 0, 0, 10, 11, 12, 13, 14, 0, 0, 0]
    ti = tik.Tik()
    with ti.for_range(0, 3):                          # the multi-core loop inside a serial loop
        with ti.for_range(0, 2, block_num=2) as c:
            with ti.if_scope(c == 1):
                with raises_tik(IllegalOperand, match="tik_continue directly inside the multi-core for_range"):
                    ti.tik_continue()


def test_uint_values_cannot_be_negated():
    ti = tik.Tik()
    s = ti.Scalar("uint32", init_value=3)
    i = ti.Scalar("int32", init_value=3)
    assert (-i).dtype == "int32"
    with raises_tik(IllegalOperand, match="cannot negate an unsigned uint32 value"):
        -s


def test_bfloat16_scalars_have_no_arithmetic_or_comparison():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    b = ti.Scalar("bfloat16", init_value=1.5)
    c = ti.Scalar("bfloat16")
    c.set_as(b)                                       # moves are fine
    assert b.astype("float32").dtype == "float32"
    for expr in (lambda: b + 1, lambda: 2 * b, lambda: b < 2.0, lambda: -b):
        with raises_tik(IllegalOperand, match="bfloat16 Scalars support no arithmetic"):
            expr()


def test_float16_scalars_take_values_not_expressions():
    def body(ti, ub):
        h = ti.Scalar("float16", init_value=1.5)
        g = ti.Scalar("float16")
        g.set_as(h)                                   # a Scalar: legal
        f = ti.Scalar("float32")
        f.set_as(g)
        f.set_as(f * 4 + 1)                           # an Expr into float32: legal on this chip
        ti.scalar_conv("", g, f)
        ub[0].set_as(g)
    assert _counter(body, n=16, dtype="float16")[0] == 7.0
    ti = tik.Tik()
    h = ti.Scalar("float16", init_value=1.5)
    with raises_tik(IllegalOperand, match="a float16 Scalar cannot be set to an Expr"):
        h.set_as(h + h)
    with raises_tik(IllegalOperand, match="a float16 Scalar cannot be set to an Expr"):
        ti.Scalar("float16", init_value=ti.Scalar("int32", init_value=1) + 1)


def test_ascend310_float_scalars_take_immediates_and_same_type_scalars_only():
    set_current_compile_soc_info("Ascend310")

    def body(ti, ub):
        f = ti.Scalar("float32", init_value=2.5)
        g = ti.Scalar("float32")
        g.set_as(f)
        i = ti.Scalar("int32", init_value=7)
        j = ti.Scalar("int32")
        j.set_as(i * 3 + 1.9)                         # int Scalar from an Expr of int Scalars and immediates
        ub[0].set_as(j)
    assert _counter(body)[0] == 22
    ti = tik.Tik()
    f = ti.Scalar("float32", init_value=2.5)
    h = ti.Scalar("float16", init_value=1.0)
    i = ti.Scalar("int32", init_value=7)
    for target, value, what in ((f, h, "a f32 Scalar cannot be set to the f16 Scalar"),
                                (f, i, "a f32 Scalar cannot be set to the i32 Scalar"),
                                (f, f + 1, "a f32 Scalar cannot be set to an Expr"),
                                (i, f, "an integer Scalar cannot be set to the f32 Scalar")):
        with raises_tik(UnsupportedOp, match="on Ascend310 " + what):
            target.set_as(value)
    set_current_compile_soc_info("Ascend910")
    f.set_as(i)                                       # other chips convert


def test_ascend310_integer_scalars_take_bit_reinterpretations_of_integers():
    """An integer reinterpreted as another integer type involves no float (found by random TIK-language programs,
    h_difflang88: it was refused as "an Expr of float type"); the bits of a float Scalar stay refused on Ascend310."""
    set_current_compile_soc_info("Ascend310")

    def body(ti, ub):
        b = ti.Scalar("int32", init_value=-2)
        u = ti.Scalar("uint32", init_value=0)
        u.set_as(b.reinterpret_cast_to("uint32") >> 28)     # 0xFFFFFFFE >> 28 (logical)
        ub[0].set_as(u)
        ub[1].set_as(b.reinterpret_cast_to("uint32").reinterpret_cast_to("int32") * 3)
    out = _counter(body)
    assert out[0] == 15 and out[1] == -6
    ti = tik.Tik()
    f = ti.Scalar("float32", init_value=2.5)
    i = ti.Scalar("int32", init_value=7)
    with raises_tik(UnsupportedOp, match="on Ascend310 an integer Scalar cannot be set to an Expr of float type"):
        i.set_as(f.reinterpret_cast_to("int32") + 1)
    with raises_tik(UnsupportedOp, match="on Ascend310 an integer Scalar cannot be set to an Expr of float type"):
        i.set_as(i.reinterpret_cast_to("float32").reinterpret_cast_to("int32"))
    set_current_compile_soc_info("Ascend910")


def test_names_follow_tik_rules():
    ti = tik.Tik()
    ti.Tensor("float16", (16,), name="_9_ok", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="tensor name '9_ok' begins with a digit"):     # TENSOR_NAME_NO_LEADING_DIGIT
        ti.Tensor("float16", (16,), name="9_ok", scope=tik.scope_ubuf)
    ti.Scalar("int32", name="_s1")
    with raises_tik(IllegalOperand, match="tensor name 'a-b' must be"):
        ti.Tensor("float16", (16,), name="a-b", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="Scalar name '1s' must be"):
        ti.Scalar("int32", name="1s")


def test_gm_tensors_are_declared_at_the_top_level():
    ti = tik.Tik()
    ti.Tensor("float16", (16,), name="g", scope=tik.scope_gm)
    with ti.for_range(0, 2):
        ti.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
        with raises_tik(IllegalOperand, match="GM tensor 'h' is declared inside a for_range body"):
            ti.Tensor("float16", (16,), name="h", scope=tik.scope_gm)
    with ti.new_stmt_scope():
        with raises_tik(IllegalOperand, match="inside a new_stmt_scope body"):
            ti.Tensor("float16", (16,), name="h2", scope=tik.scope_gm)


def test_set_as_reads_one_element():
    def body(ti, ub):
        src = ti.Tensor("int32", (8,), name="src", scope=tik.scope_ubuf)
        ti.vec_dup(8, src, 9, 1, 8)
        s = ti.Scalar("int32")
        s.set_as(src[3])
        ub[1].set_as(src[2:3])                        # a one-element slice is an element
        ub[2].set_as(s)
    assert _counter(body).tolist()[:3] == [0, 9, 9]
    ti = tik.Tik()
    a = ti.Tensor("int32", (8,), name="a", scope=tik.scope_ubuf)
    s = ti.Scalar("int32")
    with raises_tik(IllegalOperand, match=r"tensor view 'a' of shape \[8\]; a Scalar is set from one element"):
        s.set_as(a)


def test_tensor_set_as_from_a_multi_element_tensor_takes_its_first_element():
    # TIK reference, Tensor set_as (CANN 5.0.4 .. 9.0): value "A Tensor. Can have only one element. Otherwise, the
    # first element of the Tensor is used." CANN's dynamic gather_elements stores res_ub[i].set_as(block_ub) with an
    # 8-element block_ub. (Scalar.set_as takes "one value of a Tensor" and still refuses a multi-element view.)
    def body(ti, ub):
        src = ti.Tensor("int32", (2, 8), name="src", scope=tik.scope_ubuf)
        ti.vec_dup(16, src, 7, 1, 8)
        src[0, 0].set_as(ti.Scalar("int32", init_value=41))
        src[1, 3].set_as(ti.Scalar("int32", init_value=-5))
        ub[1].set_as(src)                             # whole 2-D tensor: its first element
        ub[2].set_as(src[1, 3:8])                     # a view starting at a run of 5: its first element
        ub[3].set_as(src[0:2, 0:8:2])                 # strided 2-D view: element [0, 0]
    assert _counter(body).tolist()[:4] == [0, 41, -5, 41]


def test_tensor_set_as_from_an_empty_view_is_refused():
    # SET_AS_TENSOR_FIRST_ELEMENT takes a view's first element; an empty view has none (the element at its
    # offset lies outside it: a[4:4] would store a[4], a[8:8] read past the tensor's end)
    ti = tik.Tik()
    a = ti.Tensor("float16", (8,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf)
    for empty in (a[4:4], a[8:8], b.reshape((2, 8))[1:2, 0:0]):
        with raises_tik(IllegalOperand, match=r"view '[ab]' of shape \[[0-9, ]*\], which has no element") as info:
            b[0].set_as(empty)
        assert info.value.where.file == __file__
    b[0].set_as(a[4:5])                               # one element: stored
    b[0].set_as(a[4:4], src_offset=1)                 # src_offset names the element: a[5]


@pytest.mark.parametrize("dtype,bad", [("int8", 300), ("int8", -129), ("uint8", -1), ("uint8", 256),
                                       ("int32", 2 ** 31), ("int16", 40000.0), ("int8", 1e10), ("int8", 300.5),
                                       ("int32", float("nan")), ("int16", float("inf")), ("int8", np.int64(300))])
def test_tensor_element_set_as_of_an_immediate_outside_the_dtype_is_refused_like_a_scalar_store(dtype, bad):
    # TENSOR_SET_AS_IMMEDIATE_CHECKED: was 300 -> 44 (wrapped), 1e10 -> 127 (saturated), NaN -> 0, while
    # Scalar(dtype).set_as(300) was already an error
    ti = tik.Tik()
    ub = ti.Tensor(dtype, (32,), name="ub", scope=tik.scope_ubuf)
    lo, hi = (np.iinfo(dtype).min, np.iinfo(dtype).max)
    for store in (lambda: ub[0].set_as(bad), lambda: ub.__setitem__(1, bad)):
        with raises_tik(IllegalOperand, match=rf"tensor element 'ub'.*(does not fit|cannot be stored in) {dtype}") \
                as info:
            store()
        assert info.value.where.file == __file__
        assert f"[{lo}, {hi}]" in str(info.value) and "Fix" in str(info.value)
    with raises_tik(IllegalOperand, match=rf"Scalar 's'.*(does not fit|cannot be stored in) {dtype}"):
        ti.Scalar(dtype, "s").set_as(bad)


def test_fractional_immediate_refusal_names_the_value_written():
    # the range check of a fractional float uses its C truncation; the message said "the immediate 300" for
    # set_as(300.5), a value the kernel never wrote
    ti = tik.Tik()
    ub = ti.Tensor("int8", (32,), name="ub", scope=tik.scope_ubuf)
    for store in (lambda: ub[0].set_as(300.5), lambda: ti.Scalar("int8", "s").set_as(-129.75)):
        with raises_tik(IllegalOperand, match=r"the immediate (300\.5 \(truncated to 300\)|-129\.75 \(truncated to "
                                              r"-129\)) \(stored into .*does not fit int8"):
            store()


def test_bool_tensor_element_takes_only_a_bool_immediate():
    # TENSOR_SET_AS_IMMEDIATE_CHECKED for bool elements: an int immediate other than 0/1 kept only its bit 0
    # (set_as(2) stored False, set_as(3) True) while a Scalar holding 2 converts to True; now it is refused like an
    # out-of-range int; True/False/0/1 and a float (C conversion: nonzero is True) are stored
    ti = tik.Tik()
    out = ti.Tensor("uint8", (32,), name="out", scope=tik.scope_gm)
    b = ti.Tensor("bool", (32,), name="b", scope=tik.scope_ubuf)
    for bad in (2, -1, 256):
        with raises_tik(IllegalOperand, match=rf"the immediate {bad} \(stored into the bool tensor element 'b'\) is "
                                              r"not a bool value.*0 or 1.*Fix") as info:
            b[0].set_as(bad)
        assert info.value.where.file == __file__
    ti.vec_dup(16, b.reinterpret_cast_to("uint16"), 0, 1, 8)
    for i, v in enumerate((True, 1, 0.5, False, 0)):
        b[i].set_as(v)
    ti.data_move(out, b.reinterpret_cast_to("uint8"), 0, 1, 1, 0, 0)
    got = run(build(ti, "k", [], [out]), {})[0]
    assert got.tolist()[:6] == [1, 1, 1, 0, 0, 0]


def _stored(body, dtype, n=32):
    """Runs ``body(ub)`` on an ``n``-element UB tensor loaded from a zero GM input and returns it."""
    ti = tik.Tik()
    x = ti.Tensor(dtype, (n,), name="x", scope=tik.scope_gm)
    o = ti.Tensor(dtype, (n,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor(dtype, (n,), name="ub", scope=tik.scope_ubuf)
    blocks = n * np.dtype(dtype).itemsize // 32
    ti.data_move(ub, x, 0, 1, blocks, 0, 0)
    body(ub)
    ti.data_move(o, ub, 0, 1, blocks, 0, 0)
    return run(build(ti, "k", [x], [o]), {"x": np.zeros(n, dtype)})[0]


def test_tensor_element_set_as_of_an_immediate_converts_as_a_scalar_store():
    # in range: ints exactly, fractions toward zero (C), float elements round to nearest even (past the range: inf),
    # an int in [2**63, 2**64) into int64 is its bit pattern (INT64_IMMEDIATE_BIT_PATTERN)
    def body(ub):
        ub[0].set_as(127)
        ub[1].set_as(-128)
        ub[2].set_as(2.7)
        ub[3].set_as(-2.7)
        ub[4].set_as(True)
        ub[5] = 99
    assert _stored(body, "int8").tolist()[:6] == [127, -128, 2, -2, 1, 99]

    def body16(ub):
        ub[0].set_as(70000)
        ub[1].set_as(2049)                            # between 2048 and 2050: ties to even -> 2048
        ub[2].set_as(2051)                            # -> 2052
        ub[3].set_as(-3)
    assert _stored(body16, "float16").tolist()[:4] == [np.inf, 2048.0, 2052.0, -3.0]

    def body64(ub):
        ub[0].set_as(2 ** 64 - 1)
        ub[1].set_as(-2 ** 63)
    assert _stored(body64, "int64", n=4).tolist()[:2] == [-1, -2 ** 63]


def test_errors_outside_a_tik_call_still_name_the_script_line():
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    with raises_tik(IllegalOperand, match=r"test_language_rules\.py:\d+ in `tik\.InputScalar\.set_as`"):
        n.set_as(3)


def test_conditions_take_numbers_and_no_float16_scalars():
    def body(ti, ub):
        f = ti.Scalar("float32", init_value=0.5)
        four = ti.Scalar("int32", init_value=4)
        with ti.if_scope(f > 0.25):                   # float32 Scalars are fine off Ascend310
            ub[0].set_as(1)
        with ti.if_scope(2.5):                        # a float immediate (nonzero: true)
            ub[1].set_as(2)
        with ti.if_scope(0.0):
            ub[2].set_as(3)
        with ti.elif_scope(four // 2):                # a numeric Expr: != 0
            ub[3].set_as(4)
    assert _counter(body).tolist()[:4] == [1, 2, 0, 4]
    ti = tik.Tik()
    h = ti.Scalar("float16", init_value=1.0)
    _CANN81_WARNED.clear()
    # the comparison itself is CANN 8.1's float compare ban (FLOAT_COMPARE_CANN81_WARN): it warns, then the condition
    # is refused
    with pytest.warns(Cann81RuleWarning, match="compares float16"), \
            raises_tik(IllegalOperand, match="the condition uses a float16 Scalar"):
        ti.if_scope(h > 0)
    u = ti.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    with pytest.warns(Cann81RuleWarning, match="compares float16"), \
            raises_tik(IllegalOperand, match="the condition uses a float16 Scalar"):
        ti.if_scope(u[0] < 1.0)                        # an element comparison reads a float16 Scalar
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    f = ti.Scalar("float32", init_value=1.0)
    with pytest.warns(Cann81RuleWarning, match="compares float32"), \
            raises_tik(IllegalOperand, match="the condition uses a float32 Scalar"):
        ti.if_scope(f > 0)


def test_float_comparisons_cann81_refuses_run_with_one_warning_per_site(monkeypatch):
    """FLOAT_COMPARE_CANN81_WARN: CANN 8.1 TIK's ``float_operation_ban`` refuses any Scalar/Expr comparison whose
    left operand, after type matching, is float16 (and float32 on Ascend310). Outside a condition it runs (the C
    comparison of the values) with a Cann81RuleWarning once per call site naming the line; int comparisons, a
    float32 one off Ascend310 and an int Scalar against a fractional immediate (TIK keeps int32 on the left) do not
    warn; under ``-W error`` the warning is raised at the user's line; with the choice off it is an error there."""
    from tbe_compat.tik import scalar as tik_scalar
    _CANN81_WARNED.clear()

    def body(ti, ub):
        h = ti.Scalar("float16", init_value=1.5)
        i = ti.Scalar("int32", init_value=3)
        f = ti.Scalar("float32", init_value=0.5)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for k in range(3):                                  # one site, three calls: one warning
                ub[k].set_as(h < 2.0)
            ub[3].set_as(1.0 < h)                               # reflected: h > 1.0, float16 on the left
            ub[4].set_as(i < h)                                 # int32 with float16: compared in float16
        assert [str(w.message).split(" in `")[0].rsplit(":", 1)[1] for w in seen] == \
            [str(_line_of("ub[k].set_as(h < 2.0)")), str(_line_of("ub[3].set_as(1.0 < h)")),
             str(_line_of("ub[4].set_as(i < h)"))]
        assert all(w.category is Cann81RuleWarning and "floating-point operation is not allowed in compare" in
                   str(w.message) and "Fix: compare integers" in str(w.message) for w in seen)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ub[5].set_as(i < 1.5)                               # TIK: int32 on the left, no ban
            ub[6].set_as(f > 0.25)                              # float32 is fine off Ascend310
            ub[7].set_as(i == 3)
    assert _counter(body).tolist() == [1, 1, 1, 1, 0, 0, 1, 1]           # 3 < 1.5 is false
    ti = tik.Tik()
    h = ti.Scalar("float16", init_value=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Cann81RuleWarning)
        with pytest.raises(Cann81RuleWarning, match=r"test_language_rules\.py:\d+ in `tik\.Expr\.__ge__`: `>=` "
                                                    r"compares float16 values"):
            h >= 0
    set_current_compile_soc_info("Ascend310")
    f = tik.Tik().Scalar("float32", init_value=1.0)
    with pytest.warns(Cann81RuleWarning, match=r"`!=` compares float32 values .*float16 or float32 on Ascend310"):
        f != 0.5
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    x = ti.Tensor("float16", (3, 160), name="x", scope=tik.scope_ubuf)
    idx = ti.Tensor("int32", (8,), name="idx", scope=tik.scope_ubuf)
    with warnings.catch_warnings():
        warnings.simplefilter("error", Cann81RuleWarning)
        ti.h_reduce_argmax(idx[0:3], x, 1)              # its lowering compares float16 values: not the user's
    set_current_compile_soc_info("Ascend310")
    monkeypatch.setattr(tik_scalar, "FLOAT_COMPARE_CANN81_WARN", False)
    with raises_tik(IllegalOperand, match=r"test_language_rules\.py:\d+ in `tik\.Expr\.__lt__`: .*`<` compares "
                                         r"float32 values.*CANN 8\.1 TIK refuses it.*Fix: compare integers"):
        f < 2.0


def _line_of(text: str) -> int:
    """The line of this file that contains ``text``."""
    import inspect
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(k for k, line in enumerate(lines, 1) if text in line)


def test_python_bools_are_int_arguments_as_in_tik():
    """TIK checks integer arguments with ``isinstance(v, int)`` / ``check_integer_in_range``, which accept
    Python bools (``True`` is 1): ``vadd(..., repeat_times=True, ...)`` and ``data_move(..., nburst=True, ...)``
    build on the real toolchain and run one repeat / one burst."""
    ti = tik.Tik()
    g = ti.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
    o = ti.Tensor("float16", (256,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, g, 0, True, 16, 0, 0)                      # nburst=True: one burst of 16 blocks
    ti.vadd(128, ub, ub, ub, True, 1, 1, 1, 8, 8, 8)             # repeat_times=True: the first 128 only
    with raises_tik(IllegalOperand, match="repeat_times = 0 is outside"):
        ti.vadd(128, ub, ub, ub, False, 1, 1, 1, 8, 8, 8)        # False is 0: outside [1, 255]
    ti.data_move(o, ub, False, 1, 16, 0, 0)                      # sid=False is sid 0
    x = np.arange(256, dtype=np.float16) % 13 + 1
    out, = run(build(ti, "k", [g], [o]), {"g": x})
    np.testing.assert_array_equal(out, np.concatenate([x[:128] * 2, x[128:]]))


def test_a_float_immediate_with_an_integer_tik_value_takes_its_dtype_toward_zero():
    """INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED: an integral float immediate combined with (or compared with) an int32
    value is that int32 constant: CANN's dynamic pad rounds up with ``(n / (BLOCK_SIZE / num_bit) + 1) *
    (BLOCK_SIZE / num_bit)`` (16.0 in Python 3) and needs 32 for n = 17 (float32 arithmetic gave 33). A
    fractional one makes the operation float32 (FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32, CANN 8.1.RC1; CANN's
    grid_sampler_2d_for_mini_cihiw needs ``0.5 * n``): ``2.5 * n`` is 42.5, stored as 42; ``n < 17.9`` is true
    for 17 (truncated it was ``n < 17``: 34, 10, -17, 4, 0, 1)."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    o = ti.Tensor("int32", (8,), name="o", scope=tik.scope_gm)
    u = ti.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf)
    s = ti.Scalar("int32", name="s")
    rows = [(n / 16.0 + 1) * 16.0, n % 16.0, 2.5 * n, -7.9 + n, n * -1.5, n // 4.99]
    for i, e in enumerate(rows):
        s.set_as(e)
        u[i].set_as(s)
    s.set_as(0)
    with ti.if_scope(n < 17.9):                  # a float32 comparison
        s.set_as(1)
    u[6].set_as(s)
    s.set_as(0)
    with ti.if_scope(n == 17.5):                 # false for every int
        s.set_as(1)
    u[7].set_as(s)
    ti.data_move(o, u, 0, 1, 1, 0, 0)
    ti.BuildCCE("float_imm", [n], [o])
    out, = ti.tikdb.start_debug({"n": np.int32(17)}, interactive=False)
    np.testing.assert_array_equal(out, [32, 1, 42, 9, -25, 3, 1, 0])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 3e10])
def test_a_float_immediate_no_integer_holds_is_refused_at_its_line(bad):
    ti = tik.Tik()
    s = ti.Scalar("int32", name="s", init_value=1)
    with raises_tik(IllegalOperand, match="int32"):
        s + bad


def test_an_integral_float_immediate_keeps_int32_arithmetic_exact_past_2_to_the_24():
    """INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED with an integral float: CANN's dynamic inplace_index_add splits its
    indices by ``max_ub_idx_num``, a Python float (its compile-info UB size is a float), as ``n // m``, ``n % m`` and
    ``loop * m`` on int32 Scalars. TIK makes ``m`` an int32 constant, so the arithmetic is int32 and exact; float32
    arithmetic (before) lost the low bits once n > 2**24 (20000001 % 57120.0 gave 8000)."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    o = ti.Tensor("int32", (8,), name="o", scope=tik.scope_gm)
    u = ti.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf)
    s = ti.Scalar("int32", name="s")
    m = 57120.0
    rows = [n // m, n % m, (n // m) * m, n + 1.0, n - 0.5, 3.0 * n - n * 3.0]
    for i, e in enumerate(rows):
        s.set_as(e)
        u[i].set_as(s)
    u[6].set_as(0)
    u[7].set_as(0)
    ti.data_move(o, u, 0, 1, 1, 0, 0)
    ti.BuildCCE("float_imm_big", [n], [o])
    N = 20000001
    out, = ti.tikdb.start_debug({"n": np.int32(N)}, interactive=False)
    # n - 0.5 is float32 arithmetic (FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32): 20000001 is 20000000 in float32
    in_f32 = int(np.float32(np.float32(N) - np.float32(0.5)))
    np.testing.assert_array_equal(out, [N // 57120, N % 57120, N // 57120 * 57120, N + 1, in_f32, 0, 0, 0])
@pytest.mark.parametrize("big", [2.0 ** 63, 1.8e19])
def test_a_float_immediate_past_int64_is_refused_not_wrapped(big):
    """INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED refuses a float no int64 holds; INT64_IMMEDIATE_BIT_PATTERN (2**64-1 ->
    -1) is for int immediates only (was: ``n + 1.8e19`` silently ``n + -446744073709551616``)."""
    ti = tik.Tik()
    n = ti.InputScalar("int64", name="n")
    with raises_tik(IllegalOperand, match="does not fit int64"):
        n + big
    with raises_tik(IllegalOperand, match="does not fit int64"):
        big * n
    assert "-1:i64" in repr(n + (2 ** 64 - 1))          # the int bit pattern is unchanged


_INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def _bits(dtype, byte):
    """The value of ``dtype`` whose every byte is ``byte``."""
    n = np.dtype(dtype).itemsize
    return np.frombuffer(bytes([byte]) * n, dtype=dtype)[0]


def test_bitwise_operators_convert_the_right_tik_value_to_the_left_dtype():
    """BITWISE_OPERAND_TAKES_LEFT_DTYPE: TIK's ``&``/``|``/``^`` build ``Expr(other, self.dtype)`` (TIK 2019 and
    CANN 8.1.RC1 alike): the right value is converted to the left one's dtype (C conversion) and the result has the
    left dtype. Every ordered pair of integer Scalar dtypes, all-ones (left) with 0xA5 bytes (right); each result
    stored into an int64 Scalar (was the common type: ``int8(-1) & uint16(0xA5A5)`` gave 42405, TIK gives -91)."""
    ti = tik.Tik()
    pairs = [(l, r) for l in _INT_DTYPES for r in _INT_DTYPES if l != r]
    n = 3 * len(pairs)
    o = ti.Tensor("int64", (n,), name="o", scope=tik.scope_gm)
    u = ti.Tensor("int64", (n,), name="u", scope=tik.scope_ubuf)
    sc = {d: (ti.Scalar(d, name="a_" + d, init_value=int(_bits(d, 0xFF))),
              ti.Scalar(d, name="b_" + d, init_value=int(_bits(d, 0xA5)))) for d in _INT_DTYPES}
    r = ti.Scalar("int64", name="r")
    want = []
    for i, (lt, rt) in enumerate(pairs):
        a, b = sc[lt][0], sc[rt][1]
        av, bv = _bits(lt, 0xFF), np.array(_bits(rt, 0xA5)).astype(lt)[()]
        for j, (e, w) in enumerate([(a & b, av & bv), (a | b, av | bv), (a ^ b, av ^ bv)]):
            assert e.dtype == lt
            r.set_as(e)
            u[3 * i + j].set_as(r)
            want.append(np.array(w).astype(np.int64))
    ti.data_move(o, u, 0, 1, n * 8 // 32, 0, 0)
    ti.BuildCCE("bitwise_mixed", [], [o])
    out, = ti.tikdb.start_debug({}, interactive=False)
    np.testing.assert_array_equal(out, want)


def test_mixed_dtype_arithmetic_and_comparisons_promote_as_cann_tik_does():
    """CANN 8.1.RC1 TIK ``change_dtype_of_expr_op``: an int with a float value computes in the float's dtype
    (either operand order), float16 with float32 in float32, a signed with the unsigned int of the same width in
    the unsigned one, other int pairs in the wider dtype. (TIK 2019 converted the right value to the left dtype;
    the simulator follows the newer rule: tik_core.md, open question.) Kernel pattern: ``n * scale`` with an
    int32 count and a float32 scale, both orders."""
    ti = tik.Tik()
    n = ti.Scalar("int32", name="n", init_value=7)
    f = ti.Scalar("float32", name="f", init_value=0.5)
    h = ti.Scalar("float16", name="h", init_value=0.25)
    s = ti.Scalar("int32", name="s", init_value=-1)
    w = ti.Scalar("uint32", name="w", init_value=1)
    q = ti.Scalar("int64", name="q", init_value=2 ** 40)
    assert [(n * f).dtype, (f * n).dtype, (h + f).dtype, (f + h).dtype, (n + h).dtype] == \
        ["float32", "float32", "float32", "float32", "float16"]
    assert [(s + w).dtype, (w + s).dtype, (n + q).dtype, (q + n).dtype] == ["uint32", "uint32", "int64", "int64"]
    o = ti.Tensor("float32", (8,), name="o", scope=tik.scope_gm)
    u = ti.Tensor("float32", (8,), name="u", scope=tik.scope_ubuf)
    x = ti.Scalar("float32", name="x")
    for i, e in enumerate([n * f, f * n, n / f - 0.0, h + f]):
        x.set_as(e)
        u[i].set_as(x)
    k = ti.Scalar("int32", name="k", init_value=0)
    with ti.if_scope(s > w):             # uint32 compare: 0xFFFFFFFF > 1
        k.set_as(1)
    with ti.if_scope(n < f * 16):        # float32 compare: 7 < 8
        k.set_as(k + 2)
    x.set_as(k.astype("float32"))
    u[4].set_as(x)
    for i in range(5, 8):
        u[i].set_as(0.0)
    ti.data_move(o, u, 0, 1, 1, 0, 0)
    ti.BuildCCE("mixed_promote", [], [o])
    out, = ti.tikdb.start_debug({}, interactive=False)
    np.testing.assert_array_equal(out, [3.5, 3.5, 14.0, 0.75, 3.0, 0, 0, 0])
