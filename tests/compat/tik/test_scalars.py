"""Scalar / InputScalar / Expr: C semantics evaluated by the simulator (one compiled kernel,
many fed values), tik.all/any/negate, conversions, and the Python-level restrictions."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core.errors import IllegalOperand, PtoError, UninitializedRead, UnknownName
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.data import Cann81RuleWarning

from .helpers import build, raises_tik, run

I32 = st.integers(-2**31, 2**31 - 1)


def _wrap32(v):
    return (v + 2**31) % 2**32 - 2**31


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


EXPRS = [
    ("a + b", lambda a, b: _wrap32(a + b)),
    ("a - b", lambda a, b: _wrap32(a - b)),
    ("a * b", lambda a, b: _wrap32(a * b)),
    ("a // b", lambda a, b: _wrap32(_tdiv(a, b))),
    ("a / b", lambda a, b: _wrap32(_tdiv(a, b))),              # TIK: / on ints is C division
    ("a % b", lambda a, b: _wrap32(a - b * _tdiv(a, b))),
    ("a & b", lambda a, b: a & b),
    ("a | b", lambda a, b: _wrap32(a | b)),
    ("a ^ b", lambda a, b: _wrap32(a ^ b)),
    ("~a", lambda a, b: ~a),
    ("-a", lambda a, b: _wrap32(-a)),
    ("a >> 3", lambda a, b: a >> 3),                           # arithmetic on signed
    ("a << 4", lambda a, b: _wrap32(a << 4)),
    ("7 - a", lambda a, b: _wrap32(7 - a)),                     # reflected operators
    ("100 // b", lambda a, b: _wrap32(_tdiv(100, b))),
    ("(a > b).astype('int32')", lambda a, b: int(a > b)),
    ("tik.all(a > 0, b > 0).astype('int32')", lambda a, b: int(a > 0 and b > 0)),
    ("tik.any(a == 0, b < 0).astype('int32')", lambda a, b: int(a == 0 or b < 0)),
    ("tik.negate(a >= b).astype('int32')", lambda a, b: int(not a >= b)),
]


@pytest.fixture(scope="module")
def expr_kernel():
    ti = tik.Tik()
    a = ti.InputScalar("int32", name="a")
    b = ti.InputScalar("int32", name="b")
    out = ti.Tensor("int32", (32,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (32,), name="ub", scope=tik.scope_ubuf)
    env = {"a": a, "b": b, "tik": tik}
    for k, (text, _) in enumerate(EXPRS):
        ub[k].set_as(eval(text, env))                  # noqa: S307 - test table
    ti.data_move(out, ub, 0, 1, 4, 0, 0)
    return build(ti, "exprs", [a, b], [out])


@settings(max_examples=60, deadline=None)
@given(I32, I32.filter(lambda v: v != 0))
def test_integer_expressions_follow_c(expr_kernel, a, b):
    out, = run(expr_kernel, {"a": a, "b": b})
    for k, (text, ref) in enumerate(EXPRS):
        assert out[k] == ref(a, b), (text, a, b, out[k])


def test_a_stored_division_by_zero_is_an_unwritten_output_element(expr_kernel):
    # INT_DIV_BY_ZERO_UNDEFINED: the stored quotient is undefined: that output element is reported unwritten
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, = run(expr_kernel, {"a": 1, "b": 0})
    texts = [text for text, _ in EXPRS]
    first = min(texts.index(t) for t in ("a // b", "a / b", "a % b", "100 // b"))
    assert any("did not write" in str(w.message) and f"first at byte {4 * first:#x}" in str(w.message)
               for w in caught)
    assert out[texts.index("a + b")] == 1 and out[texts.index("a * b")] == 0     # the rest as usual


def test_an_unused_division_by_zero_is_accepted():
    """INT_DIV_BY_ZERO_UNDEFINED: CANN nll_loss computes ``(size - left) // loop_cnt`` on cores where
    loop_cnt is 0 and uses it only in for_range(0, loop_cnt) bodies (pad on idle cores likewise): the
    device does not trap, so the kernel is right. The quotient is undefined: each use of it is an error
    at the using line; ``q * 0`` is 0."""
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    q = ti.Scalar("int32", name="q")
    r = ti.Scalar("int32", name="r")
    q.set_as((100 - 4) // n)
    r.set_as(-100 % n)
    with ti.for_range(0, n) as i:
        ub[i].set_as(q + r)
    z = ti.Scalar("int32", name="z")
    z.set_as(q * 0 + 5)
    ub[7].set_as(z)
    with ti.if_scope(n == 0):
        with ti.if_scope(q > 3):                     # LINE-used
            ub[6].set_as(1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "divzero", [n], [out])
    assert run(ti, {"n": 3})[0].tolist() == [31, 31, 31, 3, 3, 3, 3, 5]
    assert run(ti, {"n": -7})[0].tolist() == [3, 3, 3, 3, 3, 3, 3, 5]
    with raises_tik(UninitializedRead, match="integer division by zero is used") as info:
        run(ti, {"n": 0})
    assert info.value.where.file == __file__
    assert "LINE-used" in open(__file__).read().splitlines()[info.value.where.line - 1]


def test_a_division_guarded_inside_tik_all_or_any_runs():
    """INT_DIV_BY_ZERO_UNDEFINED: tik.all / tik.any are logical combinators (tik_api.md): False and c is
    False, True or c is True, whatever c is -- so ``tik.all(n != 0, 96 // n > 3)`` is a guarded division, not
    a use (was UninitializedRead at the if_scope). Where the other operand does not decide, it is a use."""
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 0, 1, 1, 8)
    q = ti.Scalar("int32", name="q")
    q.set_as(96 // n)
    for k, cond in enumerate((tik.all(n != 0, q > 3), tik.all(q > 3, n != 0), tik.any(n == 0, q > 3),
                              tik.all(n != 0, tik.negate(q > 3)), tik.any(n == 0, tik.negate(q > 3)))):
        with ti.if_scope(cond):
            ub[k].set_as(1)
    with ti.if_scope(n == 0):
        with ti.if_scope(tik.all(n == 0, q > 3)):        # LINE-undecided
            ub[7].set_as(1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "divzero_guard", [n], [out])
    assert run(ti, {"n": 3})[0].tolist() == [1, 1, 1, 0, 0, 0, 0, 0]
    assert run(ti, {"n": 96})[0].tolist() == [0, 0, 0, 1, 1, 0, 0, 0]
    with raises_tik(UninitializedRead, match="integer division by zero is used") as info:
        run(ti, {"n": 0})
    assert "LINE-undecided" in open(__file__).read().splitlines()[info.value.where.line - 1]


def test_arithmetic_on_an_undefined_quotient_assigned_to_a_scalar_stays_undefined():
    """INT_DIV_BY_ZERO_UNDEFINED: ``r.set_as(q + 1)`` (and - neg << and a numpy factor: results that may leave
    the register's range) with q = x // 0 assigns an undefined value; it is not a use (was an
    UninitializedRead at the set_as: the range test of the assignment compared it). Stored, r leaves the
    element unwritten; the use of r names its line."""
    import warnings
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    q = ti.Scalar("int32", name="q")
    q.set_as(96 // n)
    rs = []
    for k, make in enumerate((lambda: q + 1, lambda: 5 - q, lambda: -q, lambda: q << 2, lambda: np.int32(2) * q)):
        r = ti.Scalar("int32", name=f"r{k}")
        r.set_as(make())
        ub[k].set_as(r)
        rs.append(r)
    with ti.if_scope(n == 0):
        with ti.if_scope(rs[0] > 3):                 # LINE-derived-used
            ub[7].set_as(1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "divzero_arith", [n], [out])
    assert run(ti, {"n": 3})[0].tolist() == [33, -27, -32, 128, 64, 3, 3, 3]
    assert run(ti, {"n": -96})[0].tolist() == [0, 6, 1, -4, -2, 3, 3, 3]
    with raises_tik(UninitializedRead, match="integer division by zero is used") as info:
        run(ti, {"n": 0})
    assert "LINE-derived-used" in open(__file__).read().splitlines()[info.value.where.line - 1]
    ti2 = tik.Tik()                                  # the same without the use: runs, 5 elements unwritten
    out2 = ti2.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n2 = ti2.InputScalar("int32", name="n")
    ub2 = ti2.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti2.vector_dup(8, ub2, 3, 1, 1, 8)
    q2 = ti2.Scalar("int32", name="q")
    q2.set_as(96 // n2)
    r2 = ti2.Scalar("int32", name="r")
    r2.set_as(q2 + 1)
    ub2[0].set_as(r2)
    ti2.data_move(out2, ub2, 0, 1, 1, 0, 0)
    build(ti2, "divzero_arith2", [n2], [out2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(ti2, {"n": 0})[0].tolist()
    assert got[1:] == [3] * 7 and any("did not write" in str(w.message) for w in caught)


def test_float_scalars_round_to_their_dtype_and_mix_with_python_numbers():
    ti = tik.Tik()
    out = ti.Tensor("float32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (8,), name="ub", scope=tik.scope_ubuf)
    h = ti.Scalar("float16", name="h")
    h.set_as(0.1)                                       # rounds to fp16 (CHECKLIST S5)
    f = ti.Scalar("float32", name="f", init_value=3.0)
    i = ti.Scalar("int32", name="i", init_value=7)
    ub[0].set_as(h)
    ub[1].set_as(1.0 / f)                               # Python float / Scalar (S4)
    ub[2].set_as(i.astype("float32") / 2)               # astype then real division
    ub[3].set_as(i / 2)                                 # int division -> 3, converted on store
    ub[4].set_as(f * i)                                 # int converted to float32
    s8 = ti.Scalar("int8", name="s8", init_value=100)
    ub[5].set_as((s8 + 100).astype("float32"))          # Python int takes int8: wraps to -56
    ub[6].set_as(f.reinterpret_cast_to("int32").astype("float32"))
    with pytest.warns(Cann81RuleWarning, match="compares float32 values"):   # Ascend310 (FLOAT_COMPARE_CANN81_WARN)
        ub[7].set_as(tik.negate(f > 2.5).astype("float32"))
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "floats", [], [out])
    got, = run(ti)
    want = [np.float32(np.float16(0.1)), np.float32(1) / np.float32(3), 3.5, 3.0, 21.0, -56.0,
            float(np.float32(3.0).view(np.int32)), 0.0]
    np.testing.assert_array_equal(got, np.array(want, np.float32))


def test_scalar_declaration_forms_and_errors():
    ti = tik.Tik()
    s = ti.Scalar("uint16", "one", 1)                   # 3 positional (CHECKLIST S1)
    t = ti.Scalar(init_value=2, dtype="float16")        # keywords in any order (S2)
    assert (s.dtype, s.name, t.dtype) == ("uint16", "one", "float16")
    assert (s + 1).dtype == "uint16" and (t * 2).dtype == "float16"
    with raises_tik(UnknownName, match="not a TIK scalar dtype"):
        ti.Scalar("float64")
    n = ti.InputScalar("int32", name="n")
    with raises_tik(IllegalOperand, match="read-only"):
        n.set_as(3)
    with raises_tik(IllegalOperand, match="used twice"):
        ti.InputScalar("int32", name="n")
    with raises_tik(IllegalOperand, match="must be an identifier"):
        ti.InputScalar("int32", name="not valid")


def test_tik_values_have_no_python_value_except_identity_equality():
    ti = tik.Tik()
    i = ti.Scalar("int32", name="i")
    j = ti.Scalar("int32", name="j")
    with raises_tik(PtoError, match="cannot be used as a Python truth value .* use `with tik_instance.if_scope"):
        if i > 0:
            pass
    with raises_tik(PtoError, match="Python integer"):
        range(i)
    with raises_tik(PtoError, match="Python integer"):
        [1, 2][i]
    # == / != answer Python `if` by identity (TVM's rule; CHECKLIST S8), with a warning naming the line
    # whenever the operands differ (the answer does not depend on the run-time values)
    from tbe_compat.tik.scalar import TracedComparisonWarning
    assert bool(i == i) and not bool(i != i)
    with pytest.warns(TracedComparisonWarning, match=r"test_scalars.py:\d+: a TIK `==` used as a Python truth "
                                                    r"value .* it is False whatever"):
        assert not bool(i == j)
    with pytest.warns(TracedComparisonWarning, match="`!=` .* it is True whatever"):
        assert bool(i != j)
    with pytest.warns(TracedComparisonWarning):
        assert not bool(i == 3)
    # reflected comparison with an int on the left still builds a condition (S10)
    cond = 3 == i
    assert isinstance(cond, tik.Expr)
    with raises_tik(IllegalOperand, match="tensor view cannot be used as a scalar"):
        i + ti.Tensor("int32", (8,), name="u", scope=tik.scope_ubuf)[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-9, 9), min_size=4, max_size=4), st.integers(-50, 50), st.integers(-50, 50),
       st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"]),
       st.lists(st.integers(-1000, 1000), min_size=3, max_size=3))
def test_comparison_with_a_constant_difference_answers_python_if(coef, c0, c1, pred, values):
    """COMPARISON_OF_CONSTANT_DIFFERENCE: a comparison of two integer sums of the same registers, loop variable
    and block index times the same integers (different Python objects) answers a Python `if` exactly as the
    comparison of the values does for any run-time values, with no warning; otherwise `<`/`<=`/`>`/`>=` stay
    an error and `==`/`!=` TVM's identity rule with its warning."""
    import operator
    from tbe_compat.tik.scalar import TracedComparisonWarning
    ti = tik.Tik()
    a, b = ti.Scalar("int64", name="a"), ti.Scalar("int64", name="b")
    with ti.for_range(0, 4, block_num=4) as blk:
        ka, kb, kc, kd = coef

        def lhs(x, y, z):
            return (x * ka + c0 + y * kb - z) * 3 + (x - y) * kc

        def rhs(x, y, z):
            return x * (3 * ka + kc) + (y * (3 * kb - kc) + c1) - z * 3 + z * kd - kd * z

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = bool(getattr(operator, pred)(lhs(a, b, blk), rhs(a, b, blk)))
        assert got == getattr(operator, pred)(lhs(*values), rhs(*values))
        varying = lhs(a, b, blk) + a                       # differs by a, a run-time value: no answer
        if pred in ("eq", "ne"):
            with pytest.warns(TracedComparisonWarning):
                assert bool(getattr(operator, pred)(varying, rhs(a, b, blk))) == (pred == "ne")
        else:
            with raises_tik(PtoError, match="cannot be used as a Python truth value"):
                bool(getattr(operator, pred)(varying, rhs(a, b, blk)))


@pytest.mark.parametrize("n", [1, 2])
def test_cann_block_range_test_in_python_if_elif_takes_the_branch_of_its_chunk_count(n):
    """CANN 2021 prod_virial_se_a's idiom: start = blk * n, end = (blk + 1) * n; `if end == start + 1:` (one
    chunk per block) `elif end > start + 1:` a for_range(start, end). Both differences are constants (n - 1),
    so the branch of n is taken (TVM's identity rule answered the `==` False even for n = 1: nothing ran)."""
    ti = tik.Tik()
    out = ti.Tensor("int32", (2 * n, 8), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    taken = []

    def write_row(row):
        ti.vec_dup(8, ub, 0, 1, 8)
        ub[0].set_as(row * 10 + 7)
        ti.data_move(out[row, 0], ub, 0, 1, 1, 0, 0)

    with ti.for_range(0, 2, block_num=2) as blk:
        start, end = blk * n, (blk + 1) * n
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if end == start + 1:
                taken.append("if")
                write_row(start)
            elif end > start + 1:
                taken.append("elif")
                with ti.for_range(start, end) as row:
                    write_row(row)
        with raises_tik(PtoError, match="cannot be used as a Python truth value"):
            if end > start * 2:                             # difference n - blk * n: not constant
                pass
    assert taken == (["if"] if n == 1 else ["elif"])
    build(ti, "ranges", [], [out])
    got = run(ti)[0].reshape(2 * n, 8)
    assert got[:, 0].tolist() == [10 * r + 7 for r in range(2 * n)] and not got[:, 1:].any()


@pytest.mark.parametrize("dtype, make, pred, value", [
    ("uint8", lambda s: (s + 1, s), "gt", 255),
    ("uint32", lambda s: (s - 1, s), "lt", 0),
    ("int16", lambda s: (s + 1, s), "gt", 32767),
    ("int64", lambda s: ((s + 256).astype("uint8"), s.astype("uint8")), "ne", 3),
    ("int32", lambda s: ((s - 1).astype("uint32"), s.astype("uint32")), "lt", 0),
    ("uint8", lambda s: ((s + 1).astype("int32"), s.astype("int32") + 1), "eq", 255),
])
def test_comparison_of_wrapping_values_is_not_answered_from_their_difference(dtype, make, pred, value):
    """COMPARISON_OF_CONSTANT_DIFFERENCE takes sums as integers only in signed types of 32 bits or more: 8/16-bit or
    unsigned arithmetic and value-changing conversions wrap within reach, so no constant difference is claimed
    (was: `u8 + 1 > u8` True, False at 255; `(s + 256).astype("uint8") != s.astype("uint8")` True, always False).
    The Python `if` gives the usual error (`<`...) or TVM's identity rule with its warning (`==`/`!=`), never an
    answer the kernel's own comparison contradicts."""
    import operator
    from tbe_compat.tik.scalar import TracedComparisonWarning
    ti = tik.Tik()
    s = ti.Scalar(dtype, name="s", init_value=value)
    lhs, rhs = make(s)
    if pred in ("eq", "ne"):
        with pytest.warns(TracedComparisonWarning):
            assert bool(getattr(operator, pred)(lhs, rhs)) == (pred == "ne")
    else:
        with raises_tik(PtoError, match="cannot be used as a Python truth value"):
            bool(getattr(operator, pred)(lhs, rhs))
    wide = ti.Scalar("int64", name="w")                 # a wide signed sum and a widening conversion still answer
    assert (wide + 1 > wide) and ((s.astype("int64") + wide) * 2 == wide * 2 + s.astype("int64") * 2)


@pytest.mark.parametrize("make, pred", [
    (lambda s, w: ((s + 65536) * 65536, s * 65536), "gt"),          # int32: 2**32 more is the same value
    (lambda s, w: ((w + 2 ** 32).astype("int32"), w.astype("int32")), "gt"),     # int64 -> int32 narrows
    (lambda s, w: ((s * 65536 * 65536).astype("int64"), s.astype("int64") * 65536 * 65536 - 1), "gt"),
    (lambda s, w: ((s + 65536) * 65536, s * 65536), "eq"),
])
def test_comparison_whose_integer_form_wraps_for_every_value_is_not_answered(make, pred):
    """COMPARISON_OF_CONSTANT_DIFFERENCE: a node whose constant or coefficient does not fit its dtype, and an int64 ->
    int32 conversion, wrap whatever the run-time values are, so they are leaves: `(s + 65536) * 65536 > s * 65536`
    (int32) was answered True and `(w + 2**32).astype("int32") > w.astype("int32")` True, both False for every
    value on the device."""
    import operator
    from tbe_compat.tik.scalar import TracedComparisonWarning
    ti = tik.Tik()
    s, w = ti.Scalar("int32", name="s"), ti.Scalar("int64", name="w")
    lhs, rhs = make(s, w)
    if pred == "eq":
        with pytest.warns(TracedComparisonWarning):
            assert not (lhs == rhs)
    else:
        with raises_tik(PtoError, match="cannot be used as a Python truth value"):
            bool(getattr(operator, pred)(lhs, rhs))
    with ti.for_range(0, 4, block_num=4) as blk:      # the block index (int64, converted to int32) still answers
        assert (blk + 1) * 7 > blk * 7 + 1 and (blk + 1) * 7 != blk * 7 + 1
        assert (blk.astype("int64") + 1) * 7 - 7 == blk.astype("int64") * 7


def test_comparison_of_constant_difference_reads_a_shared_subexpression_once():
    """COMPARISON_OF_CONSTANT_DIFFERENCE walks the expression DAG, not its paths: ``x = x + x`` twenty times is 20
    nodes (it took 2**20 visits, 12 s; 30 levels ran for hours)."""
    import time
    ti = tik.Tik()
    s = ti.Scalar("int64", name="s")
    e = s
    for _ in range(20):
        e = e + e
    t0 = time.perf_counter()
    assert (e + 1 > e) and (e * 3 == e + e + e) and not (e < e - 5)
    assert time.perf_counter() - t0 < 2.0


def test_numpy_scalars_combine_with_tik_values():
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    s = ti.Scalar("int32", name="s", init_value=5)
    e = np.int64(3) * s + np.int32(1)                  # e.g. a dimension taken from a numpy shape
    assert isinstance(e, tik.Expr)
    ub[0].set_as(e)
    ub[np.int64(1)].set_as(np.float32(2.0))
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "np_mix", [], [out])
    assert run(ti)[0][:2].tolist() == [16, 2]


def test_scalar_set_from_an_element_of_another_dtype_of_the_same_width_moves_its_bits():
    """TIK loads a tensor element into a Scalar register with reg_mov (a bit move): a uint16 Scalar set
    from a float16 slot holds its raw bits, which is how CANN's arg_max_with_value reads vcmax indices;
    an element of another width is converted as a value."""
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    o = ti.Tensor("int32", (8,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    res = ti.Tensor("float16", (16,), name="res", scope=tik.scope_ubuf)
    oi = ti.Tensor("int32", (8,), name="oi", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.vcmax(128, res, ub, 1, 1, 1, 8)
    idx = ti.Scalar("uint16", name="idx")
    idx.set_as(res[1])                                   # the index bits of vcmax's second result
    val = ti.Scalar("float32", name="val")
    val.set_as(res[0])                                   # f16 -> f32: a value conversion (other width)
    ti.vector_dup(8, oi, 0, 1, 1, 8)
    oi[0].set_as(idx)
    oi[1].set_as(val * 2)
    ti.data_move(o, oi, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="bits", inputs=[x], outputs=[o])
    xv = np.zeros(128, np.float16)
    xv[77] = 5
    got, = ti.tikdb.start_debug({"x": xv}, interactive=False)
    assert got[0] == 77 and got[1] == 10


def test_a_scalar_of_another_dtype_stored_into_a_tensor_converts_as_c():
    """Named choice SET_AS_SCALAR_CONVERTS: TIK's code does not check the documented "same data type" rule for
    a Scalar stored into a tensor element; the store converts as C does (wrap, truncation toward zero)."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    o = ti.Tensor("int32", (8,), name="o", scope=tik.scope_gm)
    oi = ti.Tensor("int32", (8,), name="oi", scope=tik.scope_ubuf)
    big = ti.Scalar("int64", name="big", init_value=2 ** 40 + 7)
    neg = ti.Scalar("float32", name="neg", init_value=-5.75)
    ti.vector_dup(8, oi, 3, 1, 1, 8)
    oi[0].set_as(big)
    oi[1].set_as(neg)
    oi[2].set_as(big * 2 + 1)
    ti.data_move(o, oi, 0, 1, 1, 0, 0)
    build(ti, "conv_store", [], [o])
    assert run(ti)[0].tolist() == [7, -5, 15, 3, 3, 3, 3, 3]

def test_invalid_float_scalar_operations_give_the_canonical_positive_nan_on_every_host():
    """inf - inf, 0 * inf, inf / inf, 0 / 0 give the quiet NaN 0x7FC00000 whatever the host FPU makes (x86's
    default NaN is negative, ARM's positive); a NaN operand keeps its sign (named choice SCALAR_DEFAULT_NAN).
    Found by random TIK-language programs (h_difflang88): a float32 NaN reinterpreted as int32 read -4194304
    on x86 hosts."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    y = ti.Tensor("int32", (8,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    inf = ti.Scalar("float32", name="inf", init_value=float("inf"))
    z = ti.Scalar("float32", name="z", init_value=0.0)
    neg = ti.Scalar("int32", name="neg", init_value=-4194304)          # 0xFFC00000: a negative NaN
    r = ti.Scalar("float32", name="r")
    for k, e in enumerate((inf - inf, z * inf, inf / inf, z / z, -inf + inf, neg.reinterpret_cast_to("float32") + 1.0,
                           1.0 * neg.reinterpret_cast_to("float32"))):
        r.set_as(e)
        ub[k].set_as(r.reinterpret_cast_to("int32"))
    ub[7].set_as(7)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    out = run(build(ti, "k", [], [y]))[0].view(np.uint32)
    set_current_compile_soc_info("Ascend310")
    assert out.tolist() == [0x7FC00000] * 5 + [0xFFC00000] * 2 + [7]


def test_negative_shift_count_names_the_line_and_a_fix():
    # a shift by a run-time count that turns out negative: IllegalOperand at the user's
    # line, with what to do (`>>` used to carry no Fix)
    for op in ("<<", ">>"):
        ti = tik.Tik()
        n = ti.InputScalar("int32", name="n")
        out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        s = ti.Scalar("int32", name="s", init_value=12)
        with ti.for_range(0, 8) as j:
            ub[j].set_as(s << n if op == "<<" else s >> n)
        ti.data_move(out, ub, 0, 1, 1, 0, 0)
        build(ti, inputs=[n], outputs=[out])
        assert run(ti, {"n": 2})[0][0] == (48 if op == "<<" else 3)
        with raises_tik(IllegalOperand, match="negative shift count -1") as info:
            run(ti, {"n": -1})
        assert info.value.where.file == __file__
        assert "Fix:" in str(info.value)


def test_constant_negative_shift_count_is_refused_when_traced():
    # CONSTANT_NEGATIVE_SHIFT_REFUSED: `s << -1` with an immediate is C-undefined and known before the kernel
    # runs: refused at the line when traced (also in a branch that never runs), was only refused when it ran
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    s = ti.Scalar("int32", name="s", init_value=12)
    for op, count, fix in (("<<", -1, "x >> 1"), (">>", -2, "x << 2"), ("<<", np.int64(-3), "x >> 3"),
                           ("<<", -1.0, "x >> 1")):
        with ti.if_scope(s > 100):
            with raises_tik(IllegalOperand, match=rf"operand shift count: shift by the negative count "
                                                  rf"{int(count)} \(x {op} {int(count)}\).*Fix: .*{fix}") as info:
                s << count if op == "<<" else s >> count                        # noqa: B015
        assert info.value.where.file == __file__
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ub[0].set_as(s << 0)
    ub[1].set_as(s >> 40)                                                       # counts >= the width give 0
    ub[2].set_as(-1 << s)                                                       # the count is s: not refused
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, inputs=[], outputs=[out])
    assert run(ti)[0][:3].tolist() == [12, 0, -4096]


def test_negative_shift_count_of_a_float_value_names_the_float_shift():
    """A float value shifted by a negative immediate (``f << -1``) is refused for the shift itself (no float
    shift; Fix: cast it), not for the count: CONSTANT_NEGATIVE_SHIFT_REFUSED's Fix "write x >> 1" only led to
    that second error (review433)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    f = ti.Scalar("float32", name="f", init_value=12.0)
    h = ti.Scalar("float16", name="h", init_value=1.0)
    for v, op, t in ((f, "<<", "f32"), (h, ">>", "f16")):
        with raises_tik(IllegalOperand, match=rf"operator '{'shl' if op == '<<' else 'shr'}' does not apply to "
                                              rf"{t} values .*Fix: cast the operands first"):
            v << -1 if op == "<<" else v >> -2                                  # noqa: B015


# ---------------------------------------------------------------------------------------------
# NAN_BITS_KEPT (pto_core/scalars.py): a scalar load / store moves a NaN's bits. CANN's dynamic
# gather_elements copies arbitrary float32 data element by element (res_ub[i].set_as(block_ub));
# signalling NaNs came out quieted (0x7F800001 -> 0x7FC00001), as the host's f32 -> f64 conversion does.

@pytest.mark.parametrize("dtype, pats", [
    ("float32", [0x7F800001, 0xFF812345, 0x7FC00000, 0xFFBFFFFF, 0x7F7FFFFF, 0x00000001, 0x80000000, 0x3F800000]),
    ("float16", [0x7C01, 0xFD55, 0x7E00, 0xFDFF, 0x7BFF, 0x0001, 0x8000, 0x3C00] * 2)])
def test_scalar_load_and_store_keep_nan_bits(dtype, pats):
    n = len(pats)
    ti = tik.Tik()
    x = ti.Tensor(dtype, (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor(dtype, (n,), name="y", scope=tik.scope_gm)
    z = ti.Tensor(dtype, (n,), name="z", scope=tik.scope_gm)
    a = ti.Tensor(dtype, (n,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor(dtype, (n,), name="b", scope=tik.scope_ubuf)
    c = ti.Tensor(dtype, (n,), name="c", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 1, 0, 0)
    ti.vec_dup(n, b, 0, 1, 8)
    ti.vec_dup(n, c, 0, 1, 8)
    s = ti.Scalar(dtype, name="s")
    t = ti.Scalar(dtype, name="t")
    for i in range(n):
        b[i].set_as(a[n - 1 - i])                 # tensor -> tensor
        s.set_as(a[i])                            # via a Scalar, and a Scalar copy
        t.set_as(s)
        c[i].set_as(t)
    ti.data_move(y, b, 0, 1, 1, 0, 0)
    ti.data_move(z, c, 0, 1, 1, 0, 0)
    build(ti, "nanbits", [x], [y, z])
    u = np.uint32 if dtype == "float32" else np.uint16
    xs = np.array(pats, u).view(dtype)
    got_y, got_z = run(ti, {"x": xs})
    assert np.asarray(got_y).view(u).tolist() == pats[::-1]
    assert np.asarray(got_z).view(u).tolist() == pats


def test_scalar_conversion_between_float_types_gives_the_quiet_nan():
    """Converting a NaN to another float type (Scalar.set_as across dtypes) gives the quiet NaN of its sign,
    as scalar_conv and scalar arithmetic do (SCALAR_DEFAULT_NAN); a NaN copied within its type keeps its bits."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float32", (8,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 1, 0, 0)
    ti.vec_dup(8, b, 1.0, 1, 8)
    h = ti.Scalar("float16", name="h")
    f = ti.Scalar("float32", name="f")
    for i in range(4):
        h.set_as(a[i])
        f.set_as(h)                               # f16 -> f32
        b[i].set_as(f)
    g = ti.Scalar("float32", name="g")
    g.set_as(b[0])
    f.set_as(b[1])
    b[4].set_as(g)                                # a copy: bits kept
    ti.scalar_max(f, g, f)
    b[5].set_as(f)
    ti.data_move(y, b, 0, 1, 1, 0, 0)
    build(ti, "nanconv", [x], [y])
    xs = np.zeros(16, np.uint16)
    xs[:4] = [0x7C01, 0xFD55, 0x7E00, 0x3C00]
    got = np.asarray(run(ti, {"x": xs.view(np.float16)})[0]).view(np.uint32).tolist()
    assert got[:6] == [0x7FC00000, 0xFFC00000, 0x7FC00000, 0x3F800000, 0x7FC00000, 0xFFC00000]


def test_a_stored_undefined_quotient_leaves_the_element_unwritten():
    """INT_DIV_BY_ZERO_UNDEFINED: storing the undefined result of x % 0 gives the element an undefined
    value: its bytes count as unwritten, so reading it back is an uninitialised read (reported), and the
    output warns about bytes the kernel did not write."""
    import warnings
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    q = ti.Scalar("int32", name="q")
    q.set_as(96 % n)
    ub[1].set_as(q)
    s = ti.Scalar("int32", name="s")
    s.set_as(ub[1])                                  # LINE-reload
    ub[2].set_as(s + 1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "divzero_store", [n], [out])
    assert run(ti, {"n": 5})[0].tolist() == [3, 1, 2, 3, 3, 3, 3, 3] and not ti.tikdb.reports
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = run(ti, {"n": 0})[0].tolist()
    assert got[0] == 3 and got[3:] == [3] * 5
    kinds = [k for k, _ in ti.tikdb.reports]
    assert kinds == ["uninitialized"] and "byte 0x4" in ti.tikdb.reports[0][1]
    assert any("did not write" in str(w.message) for w in caught)


def test_a_gm_dimension_divided_by_a_zero_input_scalar_names_the_tensor():
    """A dynamic GM shape ``(96 // n,)`` fed n = 0 is undefined: the error names the tensor and the fix."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    x = ti.Tensor("float16", (96 // n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.vec_dup(16, ub, 1.0, 1, 8)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "gm_dim_div0", [x, n], [y])
    assert run(ti, {"x": np.zeros(32, np.float16), "n": 3})[0][0] == 1
    with raises_tik(UninitializedRead, match="GM tensor 'x': a dimension of its shape is undefined") as info:
        run(ti, {"x": np.zeros(32, np.float16), "n": 0})
    assert info.value.operand == "x" and "Fix:" in str(info.value)


def test_float16_arithmetic_is_float32_on_the_v210_vector_core(monkeypatch):
    """V210_VEC_F16_SCALAR_ARITH_IN_F32: CANN 8.1 TIK's ``check_and_update_dtype_float16`` casts both float16
    operands of + - * / % to float32 on the v210 vector core (BS9SX1AA VectorCore): ``a * b`` is a float32 Expr
    holding the exact product, and an immediate is a float16 constant first (``a + 0.1`` adds 0.0999755859375).
    Other chips (and the BS9SX1AA AI core) compute in float16. Before, every chip computed in float16."""
    from tbe_compat.tik import scalar as tik_scalar
    a16 = np.float16(1.0009765625)                                   # 1 + 2**-10: its square needs 21 bits

    def kernel(chip, core):
        set_current_compile_soc_info(chip, core)
        ti = tik.Tik()
        a = ti.Scalar("float16", name="a", init_value=float(a16))
        r = ti.Scalar("float32", name="r")
        o = ti.Tensor("float32", (8,), name="o", scope=tik.scope_gm)
        u = ti.Tensor("float32", (8,), name="u", scope=tik.scope_ubuf)
        ti.vec_dup(8, u, 0.0, 1, 8)
        prod = a * a
        r.set_as(prod)
        u[0].set_as(r)
        u[1].set_as(a + 0.1)
        u[2].set_as(a / 3)
        neg = -a                                                     # TIK: a * Expr(-1, "float16")
        u[3].set_as(neg)
        ti.data_move(o, u, 0, 1, 1, 0, 0)
        return (prod.dtype, neg.dtype), run(build(ti, "k", [], [o]))[0][:4]
    f32 = np.float32
    dtype, got = kernel("BS9SX1AA", "VectorCore")
    assert dtype == ("float32", "float32")
    assert got.tolist() == [f32(a16) * f32(a16), f32(a16) + f32(np.float16(0.1)), f32(a16) / f32(3), -f32(a16)]
    for chip, core in (("BS9SX1AA", "AiCore"), ("Ascend910B1", "VectorCore")):
        dtype, got = kernel(chip, core)
        assert dtype == ("float16", "float16")
        assert got.tolist() == [f32(a16 * a16), f32(a16 + np.float16(0.1)), f32(a16 / np.float16(3)), -f32(a16)]
    monkeypatch.setattr(tik_scalar, "V210_VEC_F16_SCALAR_ARITH_IN_F32", False)
    assert kernel("BS9SX1AA", "VectorCore")[0] == ("float16", "float16")
