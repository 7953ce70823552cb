"""Regressions from the differential fuzzer of TIK Scalar / Expr / control-flow semantics (fuzz424).

The hypothesis tests compare the debugger with a small reference written from tik_api.md §5/§6, TIK's
``tik_expr.py`` and the documented named choices (common type for ``+ - * / // %`` and comparisons, the left
operand's dtype for ``& | ^ << >>``, C wrap-around and truncating division, saturating float -> int stores,
LOOP_END_REREAD), not with the simulator's code. The fuzzer itself (thousands of random kernels) lives outside
the repository; see migration_guide/tik_core.md for the choices."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik

INTS = {"int8": (8, True), "uint8": (8, False), "int16": (16, True), "uint16": (16, False),
        "int32": (32, True), "uint32": (32, False), "int64": (64, True), "uint64": (64, False)}
FLOATS = {"float16": np.float16, "float32": np.float32}
MANT = {"float16": 11, "float32": 24}


def _range(d):
    bits, signed = INTS[d]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def _wrap(v, d):
    bits, signed = INTS[d]
    v = int(v) & ((1 << bits) - 1)
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _conv(v, src, dst):
    """C conversion; float -> int saturates (NaN -> 0), int -> float rounds once to nearest even."""
    if dst in INTS:
        if src in INTS:
            return _wrap(v, dst)
        lo, hi = _range(dst)
        f = float(v)
        return 0 if math.isnan(f) else min(max(int(f), lo), hi) if math.isfinite(f) else (hi if f > 0 else lo)
    if src in INTS:
        a, n = abs(v), abs(v).bit_length()
        if n > MANT[dst]:
            sh = n - MANT[dst]
            q, r = divmod(a, 1 << sh)
            q += r > 1 << (sh - 1) or (r == 1 << (sh - 1) and q & 1)
            a = q << sh
        with np.errstate(over="ignore"):
            return FLOATS[dst](float(a if v >= 0 else -a))
    with np.errstate(over="ignore"):
        return FLOATS[dst](v)


def _common(a, b):
    if a == b:
        return a
    if a in FLOATS and b in FLOATS:
        return "float32"
    if a in FLOATS or b in FLOATS:
        return a if a in FLOATS else b
    (ba, sa), (bb, _) = INTS[a], INTS[b]
    return (b if sa else a) if ba == bb else (a if ba > bb else b)


def _tdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _arith(op, a, b, d):
    if d in INTS:
        r = {"+": a + b, "-": a - b, "*": a * b}.get(op)
        if r is None:
            r = _tdiv(a, b) if op in ("/", "//") else a - b * _tdiv(a, b)
        return _wrap(r, d)
    T = FLOATS[d]
    with np.errstate(all="ignore"):
        return T({"+": T(a) + T(b), "-": T(a) - T(b), "*": T(a) * T(b), "/": T(a) / T(b), "//": T(a) / T(b),
                  "%": np.fmod(T(a), T(b))}[op])


def _same(got, want, d):
    if d in INTS:
        return int(got) == int(want)
    g, w = FLOATS[d](got), FLOATS[d](want)
    return bool(np.isnan(g) and np.isnan(w)) or g.tobytes() == w.tobytes()


def _value(d):
    if d in INTS:
        lo, hi = _range(d)
        return st.one_of(st.sampled_from([lo, hi, 0, 1, lo + 1, hi - 1] + ([-1, -7] if lo else [7])),
                         st.integers(lo, hi), st.integers(max(lo, -40), min(hi, 40)))
    fi = np.finfo(FLOATS[d])
    return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.5, float(fi.max), -float(fi.max), float(fi.tiny),
                                      math.inf, -math.inf, math.nan]),
                     st.floats(-1e4, 1e4).map(lambda x: float(FLOATS[d](x))))


DTYPES = list(INTS) + list(FLOATS)
ARITH = ("+", "-", "*", "/", "//", "%")
CMPS = ("<", "<=", ">", ">=", "==", "!=")
NP = {d: np.dtype(d) for d in DTYPES}


def _out(ti, d, name):
    n = max(8, 32 // NP[d].itemsize)
    return ti.Tensor(d, (n,), name="o_" + name, scope=tik.scope_gm), ti.Tensor(d, (n,), name="u_" + name,
                                                                                 scope=tik.scope_ubuf)


def _blocks(d):
    return max(8, 32 // NP[d].itemsize) * NP[d].itemsize // 32


@st.composite
def _pair(draw):
    da, db = draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES))
    return da, db, draw(_value(da)), draw(_value(db)), draw(st.integers(0, 70))


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(_pair())
def test_scalar_binary_operators_match_the_reference(case):
    """Every operator on two Scalars of any two dtypes (edge values, NaN/inf, wrap-around, truncating division,
    shifts past the width) agrees bit for bit with the reference: ``+ - * / // %`` in the common type, comparisons
    (in if_scope/else_scope) in the common type, ``& | ^ << >>`` in the left dtype."""
    da, db, va, vb, sh = case
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    env = {"a": ti.Scalar(da, name="a", init_value=va), "b": ti.Scalar(db, name="b", init_value=vb)}
    va, vb = (_conv(v, "int64", d) if d in INTS else FLOATS[d](v) for v, d in ((va, da), (vb, db)))
    rd = _common(da, db)
    ca, cb = _conv(va, da, rd), _conv(vb, db, rd)
    outs, want = [], {}
    o_r, u_r = _out(ti, rd, "r")
    ops = [op for op in ARITH if not (rd in INTS and op in ("/", "//", "%") and cb == 0)]
    for k, op in enumerate(ops):
        u_r[k].set_as(eval(f"a {op} b", env))                              # noqa: S307 - operator table
        want[("r", k)] = (_arith(op, ca, cb, rd), rd)
    ti.data_move(o_r, u_r, 0, 1, _blocks(rd), 0, 0)
    outs.append(("r", o_r))
    if da in INTS and db in INTS:
        o_l, u_l = _out(ti, da, "l")
        bits = INTS[da][0]
        bl = _conv(vb, db, da)
        for k, (text, v) in enumerate((("a & b", va & bl), ("a | b", va | bl), ("a ^ b", va ^ bl),
                                       (f"a << {sh}", va << sh if sh < bits else 0),
                                       (f"a >> {sh}", va >> min(sh, bits)))):
            u_l[k].set_as(eval(text, env))                                 # noqa: S307
            want[("l", k)] = (_wrap(v, da), da)
        ti.data_move(o_l, u_l, 0, 1, _blocks(da), 0, 0)
        outs.append(("l", o_l))
    if "float16" not in (da, db):                                     # no float16 Scalar in a condition
        o_c, u_c = _out(ti, "int32", "c")
        for k, op in enumerate(CMPS):
            with ti.if_scope(eval(f"a {op} b", env)):                      # noqa: S307
                u_c[k].set_as(1)
            with ti.else_scope():
                u_c[k].set_as(0)
            want[("c", k)] = (int(eval(f"ca {op} cb")), "int32")      # noqa: S307
        ti.data_move(o_c, u_c, 0, 1, 1, 0, 0)
        outs.append(("c", o_c))
    ti.BuildCCE(kernel_name="binops", inputs=[], outputs=[o for _, o in outs])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                               # unwritten tail slots
        got = dict(zip((n for n, _ in outs), ti.tikdb.start_debug({}, interactive=False)))
    for (name, k), (w, d) in want.items():
        assert _same(got[name][k], w, d), (name, k, da, db, va, vb, got[name][k], w)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(-3, 6), st.integers(-2, 3), st.integers(0, 3), st.integers(-5, 5), st.integers(-5, 5),
       st.sampled_from(["int8", "uint16", "int32", "int64", "float32"]))
def test_loops_with_a_reread_end_and_if_chains_match_the_reference(end0, begin, step, t1, t2, acc_dtype):
    """A for_range whose Scalar end the body lowers (LOOP_END_REREAD), an if/elif/else chain on the loop
    variable, and a store converting an int32 Expr into the accumulator's dtype."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    end = ti.Scalar("int32", name="end", init_value=end0)
    acc = ti.Scalar(acc_dtype, name="acc", init_value=3)
    hits = ti.Scalar("int32", name="hits", init_value=0)
    o, u = _out(ti, "int64", "r")
    with ti.for_range(begin, end) as i:
        with ti.if_scope(i < t1):
            acc.set_as(acc * 3 - i)
        with ti.elif_scope(i == t2):
            acc.set_as(acc + 100)
            end.set_as(end - step)
        with ti.else_scope():
            acc.set_as(acc - 7 * i)
        hits.set_as(hits + 1)
    u[0].set_as(acc)
    u[1].set_as(hits)
    u[2].set_as(end)
    ti.data_move(o, u, 0, 1, 2, 0, 0)
    ti.BuildCCE(kernel_name="loops", inputs=[], outputs=[o])
    got = ti.tikdb.start_debug({}, interactive=False)[0]
    # reference: TIK's counter runs while c < end - begin, both re-read before every iteration
    def op(o, x, y):                                  # x, y = (value, dtype); result in the common type
        d = _common(x[1], y[1])
        return _arith(o, _conv(x[0], x[1], d), _conv(y[0], y[1], d), d), d

    acc_v, hits_v, end_v, c = (_conv(3, "int64", acc_dtype), acc_dtype), 0, end0, 0
    while c < end_v - begin and c < 100:
        i = (begin + c, "int32")
        if i[0] < t1:
            r = op("-", op("*", acc_v, (_conv(3, "int64", acc_dtype), acc_dtype)), i)
        elif i[0] == t2:
            r = op("+", acc_v, (_conv(100, "int64", acc_dtype), acc_dtype))
            end_v -= step
        else:
            r = op("-", acc_v, op("*", (7, "int32"), i))
        acc_v = (_conv(r[0], r[1], acc_dtype), acc_dtype)
        hits_v += 1
        c += 1
    assert int(got[1]) == hits_v and int(got[2]) == end_v
    assert int(got[0]) == _conv(acc_v[0], acc_dtype, "int64"), (got[0], acc_v)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.data())
def test_tensor_element_stores_and_loads_at_scalar_indices_match_the_reference(td, sd, ld, data):
    """``t[expr].set_as(scalar)`` converts as C (SET_AS_SCALAR_CONVERTS: floats -> ints truncate and saturate);
    ``s.set_as(t[expr])`` loads the bits from an element of another dtype of the same width (reg_mov,
    SET_AS_ELEMENT_BITS' load side), converting otherwise; indices are int Exprs of Scalars."""
    v = data.draw(_value(sd))
    j = data.draw(st.integers(0, 7))
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    src = ti.Scalar(sd, name="src", init_value=v)
    k = ti.Scalar("int16", name="k", init_value=j + 3)
    t = ti.Tensor(td, (64,), name="t", scope=tik.scope_ubuf)
    t[(k - 3) * 2].set_as(src)                                        # element 2j
    ld_s = ti.Scalar(ld, name="ld")
    ld_s.set_as(t[k * 2 - 6])
    o, u = _out(ti, ld, "r")
    u[0].set_as(ld_s)
    ti.data_move(o, u, 0, 1, _blocks(ld), 0, 0)
    ti.BuildCCE(kernel_name="elems", inputs=[], outputs=[o])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ti.tikdb.start_debug({}, interactive=False)[0][0]
    sv = _conv(v, "int64", sd) if sd in INTS else FLOATS[sd](v)
    stored = _conv(sv, sd, td)
    if td != ld and NP[td].itemsize == NP[ld].itemsize:
        raw = np.array([stored], dtype=object).astype(NP[td]) if td in INTS else np.array([stored], NP[td])
        want = raw.view(NP[ld])[0]
        want = int(want) if ld in INTS else want
    else:
        want = _conv(stored, td, ld)
    assert _same(got, want, ld), (td, sd, ld, v, got, want)


# ------------------------------------------------------------------ scalar_abs / scalar_max / scalar_min

@pytest.mark.parametrize("soc,dtype,cls", [
    ("Ascend910", "int32", IllegalOperand), ("Ascend910", "float16", IllegalOperand),
    ("Ascend910", "uint64", IllegalOperand), ("Ascend910", "float32", UnsupportedOp),
    ("Ascend310", "float32", UnsupportedOp), ("Ascend910B1", "int16", IllegalOperand),
    ("Ascend910B1", "float16", IllegalOperand)])
def test_scalar_abs_max_min_take_the_dtypes_of_the_chips_scalar_unit(soc, dtype, cls):
    """scalar_abs / scalar_max / scalar_min ran on any dtype (an int32 max, a float16 abs, a float32 abs on
    Ascend910). TIK (``tik_scalar_api.py``) checks ``intrinsic_check_support("Intrinsic_abs|max|min",
    dst.dtype)``: the ini rows list int64 on Ascend310/910, int64 and float32 on later chips; the reference
    pages say the same."""
    set_current_compile_soc_info(soc)
    ti = tik.Tik()
    init = 5 if dtype.startswith("uint") else -5
    s = ti.Scalar(dtype, name="s", init_value=init)
    d = ti.Scalar(dtype, name="d", init_value=1)
    for api, call in (("scalar_abs", lambda: ti.scalar_abs(d, s)), ("scalar_max", lambda: ti.scalar_max(d, s, 2)),
                      ("scalar_min", lambda: ti.scalar_min(d, s, s))):
        with raises_tik(cls, match=rf"test_scalar_fuzz_regressions\.py:\d+ in `tik\.{api}`: operand dst: {api} "
                                   rf"does not support dst dtype {dtype} on .*Fix: declare dst"):
            call()


def test_scalar_abs_max_min_sources_must_be_scalars_of_dst_dtype_and_a_refusal_changes_nothing():
    """TIK refuses a source Scalar of another dtype ("Intrinsic max's src0's dtype should be equal to dst's
    dtype") and an Expr source ("not support this type of src0 now"), for scalar_sqrt too (same
    ``_scalar_single_func``); the simulator converted both. A refused call records nothing: dst keeps its value."""
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    out = ti.Tensor("int64", (4,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (4,), name="ub", scope=tik.scope_ubuf)
    d = ti.Scalar("int64", name="d", init_value=11)
    a32 = ti.Scalar("int32", name="a32", init_value=-5)
    with raises_tik(IllegalOperand, match=r"operand src: scalar_abs's src is a Scalar of dtype int32 but dst 'd' "
                                          r"is int64 .*Fix: pass a int64 Scalar as src"):
        ti.scalar_abs(d, a32)
    with raises_tik(IllegalOperand, match=r"operand src1: scalar_max's src1 is a Scalar of dtype int32"):
        ti.scalar_max(d, 4, a32)
    with raises_tik(IllegalOperand, match=r"operand src0: scalar_min's src0 is an Expr \(int64\).*Fix: assign "
                                          r"the Expr to a int64 Scalar first"):
        ti.scalar_min(d, d + 1, 3)
    f32 = ti.Scalar("float32", name="f32", init_value=16.0)
    with raises_tik(IllegalOperand, match=r"operand src: scalar_sqrt's src is a Scalar of dtype float32 but dst 'd'"):
        ti.scalar_sqrt(d, f32)
    with raises_tik(IllegalOperand, match=r"operand src: scalar_sqrt's src is an Expr \(int64\)"):
        ti.scalar_sqrt(d, d + 5)
    ub[0].set_as(d)
    ti.scalar_max(d, d, -3)                                           # immediates take dst's dtype
    ub[1].set_as(d)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="refused", inputs=[], outputs=[out])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ti.tikdb.start_debug({}, interactive=False)[0]
    assert got[:2].tolist() == [11, 11]


def test_scalar_conv_source_must_be_a_scalar_and_a_refusal_changes_nothing():
    """TIK's scalar_conv checks ``check_type_match(src, Scalar, 'scalar conv src must be a scalar')``
    (tik_scalar_api.py), as scalar_abs/max/min/sqrt refuse an Expr; the simulator converted the Expr. A refused
    call records nothing: dst keeps its value. An InputScalar is taken (as for scalar_abs)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    n = ti.InputScalar("float32", name="n")
    f = ti.Scalar("float32", name="f", init_value=2.5)
    i = ti.Scalar("int32", name="i", init_value=7)
    with raises_tik(IllegalOperand, match=r"operand src: scalar_conv's src is an Expr \(float32\); TIK takes a "
                                          r"Scalar .*Fix: assign the Expr to a float32 Scalar first"):
        ti.scalar_conv("round", i, f * 2)
    with raises_tik(IllegalOperand, match=r"operand src: src must be a Scalar, got float"):
        ti.scalar_conv("round", i, 2.5)
    ub[0].set_as(i)
    ti.scalar_conv("floor", i, n)
    ub[1].set_as(i)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="conv_refused", inputs=[n], outputs=[out])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ti.tikdb.start_debug({"n": -1.5}, interactive=False)[0]
    assert got[:2].tolist() == [7, -2]


def test_scalar_abs_max_min_take_a_bool_immediate_as_the_int_it_is():
    """TIK's ``_scalar_single_func`` / ``_scalar_binary_func`` take any int/float immediate and ``True`` is an int
    (``isinstance(True, int)``): it converts to 1 of dst's dtype (``dtype_convert``). scalar_abs(d, True) and
    scalar_max(d, True, False) were refused ("operator 'abs' does not apply to i1 values") while scalar_sqrt and
    scalar_min(d, True, 5) ran (review433)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    out = ti.Tensor("int64", (4,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int64", (4,), name="ub", scope=tik.scope_ubuf)
    d = ti.Scalar("int64", name="d", init_value=-9)
    f = ti.Scalar("float32", name="f", init_value=-9.0)
    ti.scalar_abs(d, True)
    ub[0].set_as(d)
    ti.scalar_max(d, True, False)
    ub[1].set_as(d)
    ti.scalar_min(d, np.bool_(False), True)
    ub[2].set_as(d)
    ti.scalar_abs(f, True)                                  # float32 dst: 1.0
    ub[3].set_as(f * 3)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="bool_imm", inputs=[], outputs=[out])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ti.tikdb.start_debug({}, interactive=False)[0]
    assert got[:4].tolist() == [1, 1, 0, 3]
