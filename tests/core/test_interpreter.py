"""Interpreter: scalar semantics (vs numpy / an independent IR evaluator), control flow, ops,
multi-core runs, atomic reductions, seeded race detection, errors with provenance and loop indices."""
import math
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from pto_core import GmRaceWarning, Machine, MachineOptions, pto
from pto_core import scalars as S
from pto_core.errors import ConfigError, IllegalOperand, OutOfBounds, UninitializedRead
from pto_core.program import cast, min_, program, select, sqrt

from program_gen import random_program, reference_run, same
from program_testops import set_flag, sync, testops, wait_flag  # noqa: F401  (testops: fixture)
from kernel_helpers import line_of

pytestmark = pytest.mark.usefixtures("testops")
T = S.scalar_type
HERE = __file__


def _line_of(text: str) -> int:
    return line_of(HERE, text)


# ============================================================================= scalars (C semantics)

INT_NP = {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "s32": np.int32, "u32": np.uint32,
          "s64": np.int64, "u64": np.uint64}


@pytest.mark.parametrize("name", sorted(INT_NP))
def test_wrap_matches_numpy_two_complement(name):
    rng = np.random.default_rng(1)
    xs = [int(v) for v in rng.integers(-2 ** 62, 2 ** 62, 2000)] + [2 ** 70 + 5, -2 ** 70 - 3, 255, 256, -129]
    want = np.array([x % 2 ** 64 for x in xs], dtype=np.uint64).astype(INT_NP[name])
    got = [S.wrap(x, T(name)) for x in xs]
    assert got == [int(v) for v in want]
    assert S.wrap(3, T("bool")) is True and S.wrap(2, T("bool")) is False


def test_truncating_division_and_remainder_match_c_fmod():
    rng = np.random.default_rng(2)
    a = np.concatenate([rng.integers(-10 ** 6, 10 ** 6, 3000), [-7, 7, -7, 7, 0, -1, -(2 ** 62)]])
    b = np.concatenate([rng.integers(-1000, 1000, 3000), [2, -2, -2, 2, 5, 3, 7]])
    b[b == 0] = 1
    rem = np.fmod(a, b)                       # C remainder: sign of the dividend
    quo = (a - rem) // b                      # exact: a - rem is a multiple of b
    assert [S.tdiv(int(x), int(y)) for x, y in zip(a, b)] == quo.tolist()
    assert [S.trem(int(x), int(y)) for x, y in zip(a, b)] == rem.tolist()
    assert S.wrap(S.tdiv(-2 ** 31, -1), T("s32")) == -2 ** 31
    for fn in (S.tdiv, S.trem):
        assert isinstance(fn(5, 0), S.UndefinedInt)          # INT_DIV_BY_ZERO_UNDEFINED
        try:
            S.INT_DIV_BY_ZERO_UNDEFINED = False
            with pytest.raises(IllegalOperand, match="by zero") as ei:
                fn(5, 0)
        finally:
            S.INT_DIV_BY_ZERO_UNDEFINED = True
        assert ei.value.operand == "divisor"


def test_shifts_count_rules():
    assert S.wrap(S.shl(1, 31, 32), T("s32")) == -2 ** 31 and S.shl(1, 32, 32) == 0 and S.shl(5, 100, 8) == 0
    assert S.shr(-8, 1) == -4 and S.shr(-8, 200) == -1 and S.shr(0xF0, 4) == 0xF
    with pytest.raises(IllegalOperand, match="negative shift count -1"):
        S.shl(1, -1, 32)
    with pytest.raises(IllegalOperand, match="negative shift count"):
        S.shr(1, -3)


def test_negative_shift_count_errors_read_alike_in_both_directions():
    # both directions name the limit; the hint states the >= width rule of each (a signed >> fills with the sign)
    msgs = []
    for fn, args in ((S.shl, (1, -1, 32)), (S.shr, (-8, -1))):
        with pytest.raises(IllegalOperand) as ei:
            fn(*args)
        msgs.append(str(ei.value))
    assert all("(limit: >= 0)" in m and "or -1 for a negative signed value shifted right" in m for m in msgs)
    assert S.shr(-8, 32) == -1 and S.shl(1, 32, 32) == 0        # what the hint says


def _doubles(n, seed):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.standard_normal(n) * 10.0 ** rng.integers(-45, 40, n),
                        rng.uniform(-70000, 70000, n), [0.0, -0.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0,
                                                        2.0 ** -25, 2.0 ** -24 * 1.5, 3.4028235e38, 3.5e38, 1e-46]])
    return x


def _midpoints(np_type, bits_dtype, n, seed):
    """Exact midpoints between neighbouring values of a format, and +-1 ulp (in f64) around them."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, np.iinfo(bits_dtype).max // 2, n).astype(bits_dtype)
    with np.errstate(invalid="ignore"):
        lo = codes.view(np_type).astype(np.float64)
        hi = (codes + 1).view(np_type).astype(np.float64)
    ok = np.isfinite(lo) & np.isfinite(hi)
    mid = (lo[ok] + hi[ok]) / 2
    return np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf), -mid])


@pytest.mark.parametrize("fmt,np_type,bits", [("f32", np.float32, np.uint32), ("f16", np.float16, np.uint16)])
def test_float_rounding_matches_numpy_single_rounding(fmt, np_type, bits):
    x = np.concatenate([_doubles(3000, 3), _midpoints(np_type, bits, 3000, 4)])
    with np.errstate(over="ignore"):
        want = x.astype(np_type).astype(np.float64)
    got = np.array([S.ROUNDERS[fmt](float(v)) for v in x])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))
    prec, emin, mx = S.FLOAT_FORMATS[fmt]
    generic = np.array([S.round_to_format(float(v), prec, emin, mx) for v in x])
    assert np.array_equal(generic, want)
    assert math.isnan(S.ROUNDERS[fmt](math.nan))


def test_bf16_rounding_matches_ml_dtypes_on_f32_inputs_and_ties():
    with np.errstate(over="ignore"):
        x32 = np.concatenate([_doubles(3000, 5), _midpoints(ml_dtypes.bfloat16, np.uint16, 3000, 6)]).astype(
            np.float32)
    x32 = x32[np.isfinite(x32) | np.isinf(x32)]
    want = x32.astype(ml_dtypes.bfloat16).astype(np.float64)
    got = np.array([S.round_bf16(float(v)) for v in x32])
    assert np.array_equal(got, want)
    assert S.round_bf16(float.fromhex("0x1.fe8p127")) == float.fromhex("0x1.fep127")
    assert S.round_bf16(float.fromhex("0x1.ffp127")) == math.inf and S.round_bf16(1.0 + 2 ** -8) == 1.0
    assert S.round_bf16(1.0 + 2 ** -8 + 2 ** -40) == 1.0 + 2 ** -7   # above the tie: up (single rounding)


def test_int_to_float_is_a_single_rounding():
    rng = np.random.default_rng(7)
    big = rng.integers(-2 ** 63, 2 ** 63 - 1, 3000, dtype=np.int64)
    ubig = rng.integers(0, 2 ** 64 - 1, 3000, dtype=np.uint64)
    assert [S.int_to_float(int(v), T("f32")) for v in big] == big.astype(np.float32).astype(np.float64).tolist()
    assert [S.int_to_float(int(v), T("f32")) for v in ubig] == ubig.astype(np.float32).astype(np.float64).tolist()
    small = rng.integers(-70000, 70000, 3000)
    with np.errstate(over="ignore"):
        assert [S.int_to_float(int(v), T("f16")) for v in small] == small.astype(np.float16).astype(float).tolist()
    assert S.int_to_float(2 ** 64, T("f16")) == math.inf
    # tie at 2**24 + 1 rounds to even (2**24), 2**24 + 3 to 2**24 + 4
    assert S.int_to_float(2 ** 60 + 2 ** 36, T("f32")) == 2.0 ** 60
    assert S.int_to_float(2 ** 60 + 3 * 2 ** 36, T("f32")) == 2.0 ** 60 + 2 ** 38


def test_float_to_int_truncates_and_saturates():
    xs = [1.9, -1.9, 0.5, -0.5, 1e10, -1e10, math.inf, -math.inf, math.nan, 255.9, 256.0, -0.0]
    assert [S.float_to_int(x, T("s32")) for x in xs] == [1, -1, 0, 0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31, 0,
                                                         255, 256, 0]
    assert [S.float_to_int(x, T("u8")) for x in xs] == [1, 0, 0, 0, 255, 0, 255, 0, 0, 255, 255, 0]


def test_bitcast_and_convert():
    assert S.bitcast(1.0, T("f32"), T("u32")) == 0x3F800000 and S.bitcast(-1, T("s16"), T("f16")) != S.bitcast(
        -1, T("s16"), T("f16"))                                          # 0xFFFF is a NaN
    assert S.bitcast(0x3F80, T("u16"), T("bf16")) == 1.0 and S.bitcast(-1.0, T("bf16"), T("s16")) == -16512
    with pytest.raises(IllegalOperand, match="equal widths"):
        S.bitcast(1, T("s32"), T("f16"))
    assert S.convert(-1, T("s8"), T("u32")) == 0xFFFFFFFF and S.convert(300, T("s32"), T("u8")) == 44
    assert S.convert(True, T("bool"), T("f16")) == 1.0 and S.convert(0.0, T("f32"), T("bool")) is False
    assert S.convert(0.1, T("f32"), T("bf16")) == float(ml_dtypes.bfloat16(np.float32(0.1)))
    assert S.convert(float(ml_dtypes.bfloat16(3.5)), T("bf16"), T("f16")) == 3.5
    assert S.normalize(70000, T("f16")) == math.inf and S.normalize(True, T("s32")) == 1


def test_float_helpers_ieee_edge_cases():
    assert S.fdiv(1.0, 0.0) == math.inf and S.fdiv(-1.0, 0.0) == -math.inf and S.fdiv(1.0, -0.0) == -math.inf
    assert math.isnan(S.fdiv(0.0, 0.0)) and math.isnan(S.frem(1.0, 0.0)) and S.frem(-7.5, 2.0) == -1.5
    assert math.isnan(S.fsqrt(-1.0)) and S.fmax(math.nan, 2.0) == 2.0 and S.fmin(3.0, math.nan) == 3.0


# ============================================================================= generated kernels vs reference

@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 31))
def test_random_kernels_match_the_reference_evaluator(seed):
    prog, inputs = random_program(seed)
    got = prog.run(inputs)
    want = reference_run(prog, inputs)
    for name in want:
        assert same(got[name], want[name]), (seed, name, got[name], want[name])


def test_c_semantics_inside_a_kernel():
    with program("c") as k:
        o = k.gm_arg("o", "s64", (12,), io="out")
        f = k.gm_arg("f", "f32", (6,), io="out")
        a = k.reg("s32", -7)
        u = k.reg("u8", 250)
        big = k.reg("s32", 2 ** 31 - 1)
        h = k.reg("f16", 1.0)
        g = k.reg("f32", 1e10)
        vals = [a // 2, a % 2, u + 10, big + 1, (a * a) >> 1, a >> 1, cast(u, "s8"), k.reg("u32", 0) - 1,
                cast(g, "s32"), cast(g * -1.0, "u16"), min_(a, u), (big * 3) // 2]
        for i, v in enumerate(vals):
            k.store(o, i, v)
        fvals = [h / 3, cast(h / 3, "f32"), cast(g, "bf16"), sqrt(cast(k.reg("f32", 2.0), "f32")), g * g * g * g,
                 select(a < 0, -0.0, 1.0)]
        for i, v in enumerate(fvals):
            k.store(f, i, v)
    out = k.program.run()
    third16 = float(np.float16(1) / np.float16(3))
    assert out["o"].tolist() == [-3, -1, 4, -2 ** 31, 24, -4, -6, 2 ** 32 - 1, 2 ** 31 - 1, 0, -7,
                                 S.tdiv(S.wrap(3 * (2 ** 31 - 1), T("s32")), 2)]
    assert out["f"][0] == np.float32(third16) and out["f"][1] == np.float32(third16)
    assert out["f"][2] == np.float32(ml_dtypes.bfloat16(1e10)) and out["f"][3] == np.float32(np.sqrt(np.float32(2)))
    assert out["f"][4] == np.inf and np.signbit(out["f"][5])


def test_loops_ifs_break_continue_return():
    with program("flow") as k:
        o = k.gm_arg("o", "s32", (4,), io="out")
        n = k.scalar_arg("n", "s32")
        s = k.reg("s32", 0, name="s")
        c = k.reg("s32", 0, name="c")
        with k.for_(0, 100, dtype="s32") as i:
            with k.if_(i == n):
                k.break_()
            with k.if_(i % 3 == 0):
                k.continue_()
            s.set(s + i)
            with k.for_(0, i, 2) as j:
                c.set(c + 1)
        k.store(o, 0, s)
        k.store(o, 1, c)
        with k.if_(s > 100):
            k.store(o, 2, 1)
            k.return_()
        k.store(o, 2, 2)
        k.store(o, 3, 3)
    out = k.program.run({"n": 10})["o"]
    keep = [i for i in range(10) if i % 3]
    assert out[0] == sum(keep) and out[1] == sum((i + 1) // 2 for i in keep) and out[2] == 2 and out[3] == 3
    out = k.program.run({"n": 30})["o"]
    assert out[2] == 1 and out[3] == -1          # returned before writing element 3 (fill pattern 0xFF)


def test_generated_code_keeps_the_hot_loop_free_of_calls():
    with program("hot") as k:
        acc = k.reg("s32", 0)
        with k.for_(0, 1000, dtype="s32") as i:
            acc.set(acc + i)
            with k.if_(acc > 100):
                acc.set(acc - 100)
    src = k.program.compile().source
    body = src.split("for ", 1)[1].split("\n    yield", 1)[0]
    assert re.search(r"\b_[A-Za-z0-9]+\(", body) is None          # no helper calls in the loop
    assert "if not -2147483648 <= " in body


# ============================================================================= ops, errors, provenance

def test_op_error_carries_provenance_core_and_loop_indices():
    with program("boom") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        with k.for_(0, 3, name="i") as i:
            with k.for_(0, 3, name="j") as j:
                pto.t_boom(g, i * 10 + j - 11)  # LINE-boom
    with pytest.raises(IllegalOperand) as ei:
        k.program.run()
    e = ei.value
    assert e.op == "pto.t_boom" and e.operand == "%code" and e.where.line == _line_of("# LINE-boom")
    assert e.context == {"core": 0, "i": 1, "j": 2}
    assert "[at core=0, i=1, j=2]" in str(e) and "code 1 is positive" in str(e)


@pytest.mark.parametrize("run", [False, True])
def test_static_ops_are_bound_calls_and_their_errors_keep_provenance_and_loop_indices(run):
    """Ops whose operands are all compile-time values compile to pre-bound calls (several in a row:
    one loop over them); an error one raises still names its line, the core and the loop indices."""
    with program("boom_static") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        ub = k.ptr("ub", "s32", 0)
        with k.for_(0, 3, name="i") as i:
            with k.for_(0, 3, name="j") as j:
                with k.if_((i == 2) & (j == 1)):
                    if run:
                        pto.t_fill(ub, 4, 1)
                    pto.t_boom(ub, 7)  # LINE-static-boom
                    if run:
                        pto.t_fill(ub, 4, 2)
    src = k.program.compile().source
    assert "t_boom" not in src and "begin_op" not in src
    assert re.search(r"^ +for __op in _R\d+:$" if run else r"^ +_O\d+\(ctx\)$", src, re.M)
    with pytest.raises(IllegalOperand) as ei:
        k.program.run()
    e = ei.value
    assert e.op == "pto.t_boom" and e.operand == "%code" and e.where.line == _line_of("# LINE-static-boom")
    assert e.context == {"core": 0, "i": 2, "j": 1} and "code 7 is positive" in str(e)


def test_scalar_errors_carry_provenance_and_loop_indices():
    with program("div") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        with k.for_(0, 5, name="i", dtype="s32") as i:
            k.store(g, 0, select(10 // (3 - i) > 2, 1, 0))  # LINE-div
    with pytest.raises(UninitializedRead, match="division by zero is used") as ei:
        k.program.run()
    assert ei.value.where.line == _line_of("# LINE-div") and ei.value.context["i"] == 3


def test_an_assigned_sum_of_an_undefined_quotient_is_not_a_use():
    """INT_DIV_BY_ZERO_UNDEFINED: ``r = q + 1`` / ``q << 2`` / ``-q`` (inexact: may leave the type) with q an
    undefined quotient keep r undefined; the assignment's range test must not compare it (was
    UninitializedRead at the assignment). A store of r leaves the element unwritten."""
    with program("undef_sum") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        n = k.scalar_arg("n", "s32")
        q = k.reg("s32", 96 // n, name="q")
        k.store(g, 0, 5)
        for j, v in enumerate((q + 1, q << 2, -q), 1):
            k.store(g, j, k.reg("s32", v, name=f"r{j}"))
    exe = k.program.compile()
    assert exe.run({"n": 3})["g"].tolist() == [5, 33, 128, -32] and not exe.unwritten_outputs
    assert exe.run({"n": 0})["g"].tolist()[0] == 5
    assert exe.unwritten_outputs["g"][:2] == (12, 16)        # 3 elements x 4 bytes of 16 (missing, total, ...)


def test_out_of_bounds_scalar_store_and_dynamic_step():
    with program("oob") as k:
        g = k.gm_arg("g", "s32", (4,), io="out")
        n = k.scalar_arg("n", "s32")
        with k.for_(0, 8, n) as i:
            k.store(g, i, 1)  # LINE-oob
    with pytest.raises(OutOfBounds, match="run past the end of region 'g'") as ei:
        k.program.run({"n": 1})
    assert ei.value.where.line == _line_of("# LINE-oob") and ei.value.context["i"] == 4
    with pytest.raises(IllegalOperand, match="step 0 must be positive"):
        k.program.run({"n": 0})


def test_uninitialised_register_read_names_the_register():
    with program("uninit") as k:
        g = k.gm_arg("g", "s32", (1,), io="out")
        r = k.reg("s32", name="total")
        with k.if_(k.scalar_arg("c", "s32") > 0):
            r.set(1)
        k.store(g, 0, r)  # LINE-uninit
    assert k.program.run({"c": 1})["g"][0] == 1
    with pytest.raises(UninitializedRead, match="register %total is read before any assignment") as ei:
        k.program.run({"c": 0})
    assert ei.value.where.line == _line_of("# LINE-uninit")


def test_non_simulator_exceptions_get_a_note_with_the_location():
    def bad(ctx, dst):
        raise ZeroDivisionError("inside op")
    from pto_core.ops import registry
    spec = registry.register(registry.OpSpec("t_pyerr", "vector", "V", (registry.Operand("dst", "ptr"),), bad))
    try:
        with program("pyerr") as k:
            pto.t_pyerr(k.ptr("ub", "s32", 0))
        with pytest.raises(ZeroDivisionError) as ei:
            k.program.run()
        assert any("in PTO kernel 'pyerr'" in n for n in ei.value.__notes__)
    finally:
        del registry.OPS[spec.name]


def test_op_kernel_and_uninitialised_report():
    with program("ops") as k:
        x = k.gm_arg("x", "f32", (8,))
        y = k.gm_arg("y", "f32", (16,), io="out")
        u = k.ptr("ub", "f32", 0)
        pto.t_copy(x, u, 8)
        pto.t_fill(u + 8, 4, 2.5)
        sync("MTE2", "MTE3")
        sync("V", "MTE3")
        pto.t_copy(u, y, 16)               # elements 12..15 of UB were never written
    xs = np.arange(8, dtype=np.float32)
    exe = k.program.compile()
    out = exe.run({"x": xs})
    assert out["y"][:8].tolist() == xs.tolist() and out["y"][8:12].tolist() == [2.5] * 4
    assert (out["y"][12:].view(np.uint32) == 0x55555555).all()   # the on-chip fill pattern (0x55 bytes)
    assert any(kind == "uninitialized" and "t_copy" in msg for kind, msg in exe.reports)
    assert exe.machine.reports == exe.reports


# ============================================================================= inputs and outputs

def _inout_kernel():
    with program("io") as k:
        a = k.gm_arg("a", "s32", (2, 3), io="inout")
        b = k.gm_arg("b", "f16", (3,))
        s = k.scalar_arg("s", "u8")
        k.gm_arg("w", "f32", (4,), io="workspace")
        c = k.gm_arg("c", "s32", (3,), io="out", init=[7, 8, 9])
        with k.for_(0, 6) as i:
            v = k.load(a, i)
            k.store(a, i, v + s)
        k.store(c, 0, k.load(b, 1))
    return k.program


def test_inputs_are_copied_and_write_back_is_opt_in():
    prog = _inout_kernel()
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.array([1, 2, 3], dtype=np.float16)
    out = prog.run({"a": a, "b": b, "s": 5})
    assert out["a"].tolist() == (a + 5).tolist() and out["c"].tolist() == [2, 8, 9] and set(out) == {"a", "c"}
    assert a.tolist() == [[0, 1, 2], [3, 4, 5]]            # caller array untouched
    prog.run({"a": a, "b": b, "s": 5}, write_back=True)
    assert a.tolist() == [[5, 6, 7], [8, 9, 10]]


@pytest.mark.parametrize("inputs,match", [
    ({"b": np.zeros(3, np.float16), "s": 1}, "missing a"),
    ({"a": np.zeros((2, 3), np.int32), "b": np.zeros(3, np.float16), "s": 1, "z": 1}, "unexpected z"),
    ({"a": np.zeros((2, 3), np.int64), "b": np.zeros(3, np.float16), "s": 1}, "must have dtype int32"),
    ({"a": np.zeros((3, 2), np.int32), "b": np.zeros(3, np.float16), "s": 1}, r"must have shape \(2, 3\)"),
    ({"a": np.zeros((2, 3), np.int32), "b": np.zeros(3, np.float16), "s": 256}, "does not fit ui8"),
    ({"a": np.zeros((2, 3), np.int32), "b": np.zeros(3, np.float16), "s": 1.5}, "needs an integer"),
])
def test_input_validation(inputs, match):
    with pytest.raises(ConfigError, match=match):
        _inout_kernel().run(inputs)


def test_run_options_validation_and_machine_reuse():
    prog = _inout_kernel()
    good = {"a": np.zeros((2, 3), np.int32), "b": np.ones(3, np.float16), "s": 1}
    with pytest.raises(ConfigError, match="order='fast'"):
        prog.run(good, order="fast")
    m = Machine("A2A3", cores=2)
    exe = prog.compile()
    exe.run(good, machine=m)
    out = exe.run(good, machine=m)                          # second run: fresh regions a#2, b#2, ...
    assert out["a"].tolist() == [[1, 1, 1], [1, 1, 1]] and exe.machine is m
    assert {"a", "a#2", "c#2"} <= {r.name for r in m.gm.regions}
    with pytest.raises(ConfigError, match="machine has 2 cores, the kernel needs 3"):
        exe.run(good, machine=m, cores=3)


# ============================================================================= multi-core

def test_multicore_kernel_writes_disjoint_gm_slices_with_private_ub():
    with program("slices") as k:
        x = k.gm_arg("x", "s32", (4, 8))
        y = k.gm_arg("y", "s32", (4, 8), io="out")
        with k.for_(0, 4, block_num=4, name="core", dtype="s32") as core:
            u = k.ptr("ub", "s32", 0)
            pto.t_copy(x + core * 8, u, 8)
            sync("MTE2", "S")
            with k.for_(0, 8) as i:
                v = k.load(u, i)
                k.store(u, i, v * 10 + core)
            sync("S", "MTE3")
            pto.t_copy(u, y + core * 8, 8)
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    exe = k.program.compile()
    out = exe.run({"x": x})
    assert out["y"].tolist() == (x * 10 + np.arange(4)[:, None]).tolist()
    assert len(exe.machine.cores) == 4
    assert exe.run({"x": x}, order="random", seed=3)["y"].tolist() == out["y"].tolist()   # no races: same result
    with pytest.raises(ConfigError, match="declares block_num 4; cannot run on 2 cores"):
        exe.run({"x": x}, cores=2)
    with pytest.raises(ConfigError, match=r"cannot run on 1 core\b.*pass 4; to launch only blocks 0..N-1 of the 4, "
                                          r"pass block_dim=N \(pto-run: --block-dim N\)"):
        exe.run({"x": x}, cores=1)


def test_block_num_from_a_scalar_argument_and_block_queries():
    with program("dyn") as k:
        nb = k.scalar_arg("nb", "s32")
        y = k.gm_arg("y", "s64", (8, 2), io="out", fill="zero")
        with k.for_(0, nb, block_num=nb) as c:
            k.store(y, c * 2, k.block_idx)
            k.store(y, c * 2 + 1, k.block_num)
    out = k.program.run({"nb": 3})["y"]
    assert out[:3].tolist() == [[0, 3], [1, 3], [2, 3]] and not out[3:].any()
    exe = k.program.compile()
    # the fed block_num's mismatch reads as the immediate one's, with its Fix (was "... = 3 cores, not 1")
    with pytest.raises(ConfigError, match=r"runs block_num = nb = 3; cannot run on 1 core\b.*pass block_dim=N"):
        exe.run({"nb": 3}, cores=1)
    with pytest.raises(ConfigError, match=r"needs at least one core, got 0"):
        exe.run({"nb": 0}, cores=2)
    # cores= takes an int (was int(): 3.5 and '3' ran 3 cores, 'x' raised a bare ValueError) (h_review311)
    for bad in (3.5, "3", "x", True):
        with pytest.raises(ConfigError, match=r"cores = .* is not a core count"):
            exe.run({"nb": 3}, cores=bad)
    assert exe.run({"nb": 3}, cores=np.int64(3))["y"][:3, 0].tolist() == [0, 1, 2]


def test_atomic_add_reduction_across_cores_in_any_order():
    with program("reduce") as k:
        x = k.gm_arg("x", "f32", (8, 16))
        total = k.gm_arg("total", "f32", (16,), io="out", fill="zero")
        with k.for_(0, 8, block_num=8) as core:
            u = k.ptr("ub", "f32", 0)
            pto.t_copy(x + core * 16, u, 16)
            sync("MTE2", "MTE3")
            pto.t_atomic_add(u, total, 16)
    x = np.random.default_rng(0).integers(0, 100, (8, 16)).astype(np.float32)
    exe = k.program.compile()
    want = x.sum(axis=0)
    assert exe.run({"x": x})["total"].tolist() == want.tolist()
    for seed in range(5):
        assert exe.run({"x": x}, order="random", seed=seed)["total"].tolist() == want.tolist()


def _racy_counter():
    with program("race") as k:
        cnt = k.gm_arg("cnt", "s32", (1,), io="out", fill="zero")
        with k.for_(0, 4, block_num=4):
            with k.for_(0, 3):
                v = k.load(cnt, 0)          # read-modify-write through scalar GM accesses: not atomic
                k.store(cnt, 0, v + 1)
    return k.program.compile()


def test_seeded_random_order_exposes_a_cross_core_race():
    exe = _racy_counter()
    with pytest.warns(GmRaceWarning, match="GM race"):                  # the GM race checker names it
        assert exe.run()["cnt"][0] == 12 and exe.run()["cnt"][0] == 12   # sequential: deterministic
    opts = MachineOptions(gm_races="record")
    results = [int(exe.run(order="random", seed=s, options=opts)["cnt"][0]) for s in range(12)]
    assert len(set(results)) > 1 and min(results) < 12                  # lost updates show up
    assert results == [int(exe.run(order="random", seed=s, options=opts)["cnt"][0]) for s in range(12)]
    assert any(kind == "race" for kind, _ in exe.reports)


# ============================================================================= matmul kernel (builder)

def matmul_kernel(m, n, kt, ktiles):
    """GM A[m, K] @ B[K, n] -> C[m, n] (f16 x f16 -> f32), K split in ``ktiles`` tiles of ``kt``.

    L1 and L0A/L0B hold two ping-pong buffers indexed by the tile parity: MTE2 loads tile t+1
    while MTE1/M work on tile t. Forward flags (MTE2->MTE1, MTE1->M) hand a buffer to the next
    stage; reverse flags (MTE1->MTE2, M->MTE1), primed before the loop and drained after it,
    hand it back, with the buffer index as the event id.
    """
    kk = kt * ktiles
    with program("matmul_pingpong", target="A2A3") as k:
        a = k.gm_arg("a", "f16", (ktiles, m, kt))          # K-tiles stored tile-major
        b = k.gm_arg("b", "f16", (kk, n))
        c = k.gm_arg("c", "f32", (m, n), io="out")
        l1a, l1b = k.ptr("l1", "f16", 0), k.ptr("l1", "f16", 0x8000)
        l0a, l0b, l0c = k.ptr("l0a", "f16", 0), k.ptr("l0b", "f16", 0), k.ptr("l0c", "f32", 0)
        for ev in (0, 1):
            set_flag("MTE1", "MTE2", ev)
            set_flag("M", "MTE1", ev)
        with k.for_(0, ktiles, name="kt", dtype="s32") as t:
            ping = t % 2                                    # ping-pong buffer select
            wait_flag("MTE1", "MTE2", ping)
            pto.t_copy(a + t * (m * kt), l1a + ping * (m * kt), m * kt)
            pto.t_copy(b + t * (kt * n), l1b + ping * (kt * n), kt * n)
            sync("MTE2", "MTE1", ping)
            wait_flag("M", "MTE1", ping)
            pto.t_copy(l1a + ping * (m * kt), l0a + ping * (m * kt), m * kt)
            pto.t_copy(l1b + ping * (kt * n), l0b + ping * (kt * n), kt * n)
            set_flag("MTE1", "MTE2", ping)
            sync("MTE1", "M", ping)
            with k.if_(t == 0):
                pto.t_matmul(l0a, l0b, l0c, m, n, kt)
            with k.else_():
                pto.t_matmul(l0a + ping * (m * kt), l0b + ping * (kt * n), l0c, m, n, kt, acc=True)
            set_flag("M", "MTE1", ping)
        for ev in (0, 1):
            wait_flag("MTE1", "MTE2", ev)
            wait_flag("M", "MTE1", ev)
        sync("M", "MTE3")
        pto.t_copy(l0c, c, m * n)
    return k.program


def test_matmul_kernel_with_k_loop_and_ping_pong_buffers():
    m, n, kt, ktiles = 16, 32, 16, 4
    prog = matmul_kernel(m, n, kt, ktiles)
    rng = np.random.default_rng(11)
    a = rng.integers(-3, 4, (m, kt * ktiles)).astype(np.float16)
    b = rng.integers(-3, 4, (kt * ktiles, n)).astype(np.float16)
    a_tiles = np.ascontiguousarray(a.reshape(m, ktiles, kt).transpose(1, 0, 2))
    exe = prog.compile()
    out = exe.run({"a": a_tiles, "b": b})["c"]
    assert np.array_equal(out, a.astype(np.float32) @ b.astype(np.float32))
    assert not [r for r in exe.reports if r[0] != "uninitialized"]
    text = prog.to_asm()
    again = __import__("pto_core.asm", fromlist=["parse"]).parse(text)
    assert np.array_equal(again.run({"a": a_tiles, "b": b})["c"], out)


def test_scalar_semantics_agree_with_the_numerics_package():
    """The scalar unit and the vector/FIXPIPE numerics make the same rounding/saturation choices."""
    from pto_core import numerics
    x = _doubles(2000, 9)
    for fmt in ("f32", "f16", "bf16"):
        with np.errstate(over="ignore", invalid="ignore"):
            want = np.asarray(numerics.float_to(x, fmt, rounding="even", sat="nosat")).astype(np.float64)
        got = np.array([S.ROUNDERS[fmt](float(v)) for v in x])
        assert np.array_equal(got, want, equal_nan=True), fmt
    f = np.concatenate([x, [np.nan, 2.5, -2.5]])
    for name in ("s8", "u16", "s32", "u32"):
        want = np.asarray(numerics.float_to_int(f, name, rounding="zero", saturate=True)).astype(np.int64)
        assert [S.float_to_int(float(v), T(name)) for v in f] == want.tolist(), name


def test_too_deep_nesting_is_a_clear_error():
    from pto_core.errors import UnsupportedOp
    with program("deep") as k:
        r = k.reg("s32", 0)
        scopes = []
        for n in range(25):
            scopes.append(k.for_(0, 1, name=f"i{n}"))
            scopes[-1].__enter__()
        r += 1
        for sc in reversed(scopes):
            sc.__exit__(None, None, None)
    with pytest.raises(UnsupportedOp, match="too deeply nested"):
        k.program.compile()


def test_round_to_integral_ops_match_numpy():
    from pto_core.program import ceil, floor, round_away, round_even, trunc
    xs = np.concatenate([_doubles(300, 12), [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.0, np.nan]])
    with np.errstate(over="ignore"):
        xs32 = xs.astype(np.float32)
    fns = {"floor": (floor, np.floor), "ceil": (ceil, np.ceil), "trunc": (trunc, np.trunc),
           "roundeven": (round_even, np.rint),
           "round": (round_away, lambda v: np.where(np.abs(v - np.trunc(v)) >= 0.5, np.trunc(v) + np.sign(v),
                                                    np.trunc(v)))}
    for name, (fn, ref) in fns.items():
        with program("r_" + name) as k:
            x = k.gm_arg("x", "f32", (xs32.size,))
            y = k.gm_arg("y", "f32", (xs32.size,), io="out")
            with k.for_(0, xs32.size) as i:
                k.store(y, i, fn(k.load(x, i)))
        got = k.program.run({"x": xs32})["y"]
        with np.errstate(invalid="ignore", over="ignore"):
            want = np.copysign(ref(xs32.astype(np.float64)), xs32).astype(np.float32)
        assert same(got, want), name
        assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)])), name
    assert S.fround_away(0.49999999999999994) == 0.0 and S.fround_away(-2.5) == -3.0 and S.fround_even(-2.5) == -2.0
    assert S.fround_away(2.5) == 3.0 and math.copysign(1, S.fceil(-0.5)) == -1


# ============================================================================= probes (observer calls for tools)

def _probe_kernel():
    with program("probed") as k:
        y = k.gm_arg("y", "f32", (12,), io="out")
        u = k.ptr("ub", "f32", 0)
        with k.for_(0, 3, name="i") as i:
            pto.t_fill(u + i * 4, 4, 1.5)
            sync("V", "MTE3")
            pto.t_copy(u + i * 4, y + i * 4, 4)
            sync("MTE3", "V")
    return k.program


def test_probes_see_operand_addresses_loop_indices_and_memory_before_and_after_an_op():
    from pto_core.interpreter import Probe
    from pto_core.memory import Ptr
    from pto_core.program import For, OpStmt, walk_stmts
    prog = _probe_kernel()
    loop = next(s for s in prog.body if isinstance(s, For))
    copy = next(s for s in walk_stmts(prog.body) if isinstance(s, OpStmt) and s.call.spec.name == "t_copy")
    seen = []

    def snap(when):
        def fn(ctx, values, loops):
            src, dst = values
            got = ctx.machine.read(Ptr("gm", copy.call.operands[1].dtype, dst, 0, ctx), 4)
            seen.append((when, src, dst - ctx.machine.gm.region("y").base, dict(loops), got.tolist()))
        return fn
    after_loop = []
    probes = [Probe(copy, snap("before"), copy.call.operands[:2]), Probe(copy, snap("after"), copy.call.operands[:2],
                                                                         when="after"),
              Probe(loop, lambda ctx, v, lp: after_loop.append((v, lp)), when="after")]
    exe = prog.compile(probes=probes)
    assert prog.compile() is exe                          # cached: later runs keep the probes
    out = exe.run()["y"]
    assert out.tolist() == [1.5] * 12
    nan = [float("nan")] * 4
    assert [(w, s, d, lp) for w, s, d, lp, _ in seen] == [
        (w, 16 * i, 16 * i, {"i": i}) for i in range(3) for w in ("before", "after")]
    for w, _, _, _, got in seen:                          # the GM output starts as 0xFF bytes (NaN)
        assert (np.isnan(got).all() if w == "before" else got == [1.5] * 4), (w, got, nan)
    assert after_loop == [((), ())]
    assert exe.reports == []                              # reading through Machine.read records nothing


def test_probes_are_absent_from_code_compiled_without_them_and_when_is_checked():
    from pto_core.interpreter import Probe
    prog = _probe_kernel()
    assert "PB" not in prog.compile().source
    with pytest.raises(ConfigError, match="when='during'") as ei:
        Probe(prog.body[0], print, when="during")
    assert ei.value.operand == "when"


def test_int_ops_whose_range_fits_their_type_skip_the_wrap_and_others_still_wrap():
    """Range analysis: ``i * 256`` with ``i < 4`` cannot leave s32 (no wrap code); ``i * 2**30`` can
    (wrapped like C); both give the C results."""
    from pto_core.program import program as _program
    with _program("ranges", target="A2A3") as k:
        out = k.gm_arg("out", "s32", (8,), io="out")
        with k.for_(0, 4, dtype="s32") as i:
            k.store(out, i, i * 256 + 7)
            k.store(out, i + 4, i * (1 << 30) + 5)
    exe = k.program.compile()
    res = exe.run({})["out"]
    want = [(i * 256 + 7) for i in range(4)] + [((i * (1 << 30) + 5 + 2 ** 31) % 2 ** 32) - 2 ** 31 for i in range(4)]
    assert res.tolist() == want
    lines = [ln for ln in exe.source.splitlines() if "_ST" in ln]
    assert "2147483648" not in lines[0] and "2147483648" in lines[1]        # the s32 wrap, written out


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_signed_wrap_helper_gives_the_value_of_the_written_out_wrap(bits):
    """SIGNED_WRAP_HELPERS: ``_ws<bits>(x)`` in the generated code is ``((x + half) & mask) - half`` for every
    operand: ints in and out of range, bools (their int), an undefined quotient (stays undefined, no use)."""
    from pto_core import interpreter
    f = interpreter._HELPERS[f"_ws{bits}"]
    half, mask = 1 << (bits - 1), (1 << bits) - 1
    xs = [0, 1, -1, half - 1, half, -half, -half - 1, mask, mask + 1, 2 ** 70 + 5, -2 ** 70 - 3, True, False]
    for x in xs:
        got, want = f(x), ((x + half) & mask) - half
        assert got == want and type(got) is int and got == S.wrap(int(x), T(f"s{bits}"))
    q = S.tdiv(5, 0)
    assert f(q) is q


def test_signed_wraps_of_the_generated_code_are_helper_calls_with_the_same_results(monkeypatch):
    """The generated code wraps a signed value with a `_ws<bits>` call (a fraction of the written-out expression's
    source); with SIGNED_WRAP_HELPERS empty it writes the expression out; both give the C results."""
    from pto_core import interpreter

    def build():
        with program("wraps", target="A2A3") as k:
            a = k.scalar_arg("a", "s64")
            out = k.gm_arg("out", "s64", (4,), io="out")
            with k.for_(0, 4) as i:
                k.store(out, i, a * (i + 1) * (1 << 61))
        return k.program
    want = [S.wrap(3 * (i + 1) * (1 << 61), T("s64")) for i in range(4)]
    exe = build().compile()
    assert "_ws64(" in exe.source and "9223372036854775808" not in exe.source
    assert exe.run({"a": 3})["out"].tolist() == want
    monkeypatch.setattr(interpreter, "SIGNED_WRAP_HELPERS", ())
    exe = build().compile()
    assert "_ws64(" not in exe.source and "9223372036854775808" in exe.source
    assert exe.run({"a": 3})["out"].tolist() == want


# ----------------------------------------------------------------------------- run(alias=): in-place outputs

def _add_one_through_the_output():
    """y += 1, reading y: meaningful only when y shares the input's memory (an in-place operator)."""
    with program("inplace", target="A2A3") as k:
        k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (64,), io="out")
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(y, ub, 0, 256, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        pto.ub.vadds(ub, ub, 1.0, 1)
        pto.set_flag("V", "MTE3", 0)
        pto.wait_flag("V", "MTE3", 0)
        pto.mte_ub_gm(ub, y, 256, nburst=(1, 0, 0))
    return k.program


def test_alias_places_an_output_on_an_input():
    x = np.arange(64, dtype=np.float32)
    out = _add_one_through_the_output().run({"x": x}, alias={"y": "x"})
    np.testing.assert_array_equal(out["y"], x + 1)
    np.testing.assert_array_equal(x, np.arange(64, dtype=np.float32))      # the caller's array is not touched


def test_without_alias_the_output_is_its_own_uninitialised_memory():
    with pytest.raises(UninitializedRead):
        _add_one_through_the_output().run({"x": np.zeros(64, np.float32)},
                                          options=MachineOptions(uninitialized="raise"))


@pytest.mark.parametrize("alias,match", [({"x": "y"}, "needs an out/workspace GM argument onto an in/inout one"),
                                         ({"y": "nope"}, "needs an out/workspace GM argument")])
def test_alias_errors(alias, match):
    with pytest.raises(ConfigError, match=match):
        _add_one_through_the_output().run({"x": np.zeros(64, np.float32)}, alias=alias)


def test_alias_onto_a_smaller_input_is_an_error():
    with program("inplace_small", target="A2A3") as k:
        k.gm_arg("x", "f32", (8,))
        k.gm_arg("y", "f32", (64,), io="out")
    with pytest.raises(ConfigError, match="the output needs 256 B, the input has 32 B"):
        k.program.run({"x": np.zeros(8, np.float32)}, alias={"y": "x"})


def _stores(value, name="cc"):
    with program(name) as k:
        o = k.gm_arg("o", "s32", (2,), io="out")
        r = k.reg("s32", value)
        k.store(o, 0, r + 1)
    return k.program


def test_compile_shares_byte_code_of_equal_sources_only(monkeypatch):
    from pto_core import interpreter
    a, b, c = _stores(5).compile(), _stores(5).compile(), _stores(6).compile()
    assert a.source == b.source and a._code is b._code          # traced again: compiled once
    assert c.source != a.source and c._code is not a._code
    assert a._kernel is not b._kernel                           # each executable has its own functions
    assert a.run()["o"][0] == 6 and b.run()["o"][0] == 6 and c.run()["o"][0] == 7
    monkeypatch.setattr(interpreter, "_CODE_CACHE", {})
    monkeypatch.setattr(interpreter, "CODE_CACHE_SIZE", 2)
    for v in range(4):
        _stores(v).compile()
    assert len(interpreter._CODE_CACHE) == 2                      # bounded, oldest dropped
    assert _stores(3).compile().run()["o"][0] == 4


def test_integer_code_drops_only_redundant_parentheses():
    """Generated integer code leaves out parentheses Python does not need (a big kernel's compile spends
    much of its time parsing them) and keeps the ones that group: values as C computes them."""
    with program("parens") as k:
        o = k.gm_arg("o", "s64", (4,), io="out")
        a, b, c, d = (k.scalar_arg(n, "s32") for n in "abcd")
        x, y, z, w = (cast(v, "s64") for v in (a, b, c, d))
        k.store(o, 0, (x - (y - z)) * (w + x) - y * z * (x + 1) + (x * y - z))
        k.store(o, 1, (a + b) * c - d * (a - b))
        k.store(o, 2, (x + y) // (z - w + 100))
        k.store(o, 3, cast((a * b) + c, "s8") - (d - a))
    src = k.program.compile().source
    assert "(((((((" not in src and "_tdiv(a1_a + a2_b, a3_c - a4_d + 100)" in src
    av, bv, cv, dv = 2 ** 31 - 5, -2 ** 30, 77777, -3
    s32, s8, s64 = T("s32"), T("s8"), T("s64")
    want = [S.wrap((av - (bv - cv)) * (dv + av) - bv * cv * (av + 1) + (av * bv - cv), s64),
            S.wrap((av + bv) * cv - dv * (av - bv), s32),
            S.tdiv(av + bv, cv - dv + 100),
            S.wrap(S.wrap(S.wrap(av * bv, s32) + cv, s8) - (dv - av), s32)]
    assert k.program.run({"a": av, "b": bv, "c": cv, "d": dv})["o"].tolist() == want


def test_offsets_through_a_widening_cast_drop_their_parentheses_too():
    """A pointer offset computed in s32 and widened to index (TIK's ``t[i * 256, 0]``) is a product whose code the
    cast passes on as is: its parentheses go where Python groups the same way (`_PRODUCT_CODE`, `_SUM_CODE`),
    as they do for products `binop` makes itself; the values are those the fully parenthesized code gives."""
    with program("offs", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (8192,))
        y = k.gm_arg("y", "f32", (8192,), io="out")
        ub = k.ptr("ub", "f32", 0)
        with k.for_(0, 2, name="i") as i:
            with k.for_(0, 2, name="j") as j:
                row = cast(i * 256, "index") * 16
                off = cast(j * 16, "index") * 64 + row
                pto.mte_gm_ub(x + off, ub, 0, 256, nburst=(1, 256, 256))
                pto.set_flag("MTE2", "MTE3", 0)
                pto.wait_flag("MTE2", "MTE3", 0)
                pto.mte_ub_gm(ub, y + row, 256, nburst=(1, 256, 256))
                pto.set_flag("MTE3", "MTE2", 0)
                pto.wait_flag("MTE3", "MTE2", 0)
    ex = k.program.compile()
    assert "a0_x + (v3_j * 16 * 64 + v2_i * 256 * 16) * 4)" in ex.source     # the sum's parentheses group
    assert "a1_y + v2_i * 256 * 16 * 4)" in ex.source
    xs = np.arange(8192, dtype=np.float32)
    got = ex.run({"x": xs})["y"]
    for iv in range(2):                              # the last j (1) leaves its row in y
        assert (got[iv * 4096:iv * 4096 + 64] == xs[1024 + iv * 4096:][:64]).all()


@pytest.mark.parametrize("seed", range(40))
def test_integer_code_without_parentheses_parses_as_fully_parenthesized_code(monkeypatch, seed):
    """The codegen's dropped parentheses (`_bare`, `_int_arith_code`, `wrap`) change no parse tree: random
    programs (every scalar type and node, shared subexpressions, loops, ifs) compile to source whose AST equals
    that of the same codegen with every operand parenthesized, as it was before the parentheses were dropped."""
    import ast
    from pto_core import interpreter

    prog, _ = random_program(seed, depth=4)
    lean = ast.dump(ast.parse(interpreter.compile_program(prog).source))

    def wrap_parenthesized(code, t):
        if t.kind == "u":
            return f"(({code}) & {(1 << t.bits) - 1})"
        if t.bits in interpreter.SIGNED_WRAP_HELPERS:
            return f"_ws{t.bits}(({code}))"
        half = 1 << (t.bits - 1)
        return f"(((({code}) + {half}) & {(1 << t.bits) - 1}) - {half})"

    monkeypatch.setattr(interpreter, "_bare", lambda code: code)
    monkeypatch.setattr(interpreter, "_int_arith_code", lambda e, code: False)
    never = re.compile(r"(?!)")
    monkeypatch.setattr(interpreter, "_PRODUCT_CODE", never)
    monkeypatch.setattr(interpreter, "_SUM_CODE", never)
    monkeypatch.setattr(interpreter._Codegen, "wrap", staticmethod(wrap_parenthesized))
    full = interpreter.compile_program(prog).source
    assert full.count("(") > 0 and ast.dump(ast.parse(full)) == lean


def _flag_then_fail_kernel(fail: bool):
    """GM -> UB -> GM through flag MTE2 -> MTE3 0; ``fail``: an out-of-bounds move between the set and the wait."""
    with program("k", target="A2A3") as k:
        x = k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (64,), io="out")
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(x, ub, 0, 256, nburst=(1, 256, 256))
        pto.set_flag("MTE2", "MTE3", 0)
        if fail:
            pto.mte_gm_ub(x, ub + 100000, 0, 256, nburst=(1, 256, 256))
        pto.wait_flag("MTE2", "MTE3", 0)
        pto.mte_ub_gm(ub, y, 256, nburst=(1, 256, 256))
    return k.program


def test_a_machine_reused_after_a_failed_run_starts_clean():
    """run(machine=m) after a run on m that raised: the failed run's flag table and hazard history are dropped
    (pipes drain between kernels). The flag it had set made the next run's first set_flag a SyncError
    ("already set ... not yet waited for")."""
    m = Machine("A2A3")
    x = np.arange(64, dtype=np.float32)
    with pytest.raises(OutOfBounds):
        _flag_then_fail_kernel(True).run({"x": x}, machine=m)
    ctx = m.context(0)
    assert not ctx.sync_state.raised and not ctx.hazards.shadows
    assert (_flag_then_fail_kernel(False).run({"x": x}, machine=m)["y"] == x).all()
    assert m.reports == []


def test_a_reused_machine_names_a_later_runs_tensors_as_the_user_did():
    """A second run of a kernel on the same machine: its GM regions get unique names ('x#2'), but messages name
    the tensor 'x' (they said "region 'x#2'", a name the user never wrote)."""
    from pto_core.errors import GmOverreadWarning
    m = Machine("A2A3")
    x = np.arange(64, dtype=np.float32)
    with program("k", target="A2A3") as k:
        xa = k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (64,), io="out")
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(xa + 16, ub, 0, 256, nburst=(1, 256, 256))       # past x's allocation
        pto.set_flag("MTE2", "MTE3", 0)
        pto.wait_flag("MTE2", "MTE3", 0)
        pto.mte_ub_gm(ub, y, 256, nburst=(1, 256, 256))
    exe = k.program.compile()
    for _ in range(2):
        with pytest.warns(GmOverreadWarning, match="region 'x' ") as rec:
            exe.run({"x": x}, machine=m)
        assert not any("#2" in str(w.message) for w in rec), [str(w.message) for w in rec]
    assert [r.name for r in m.gm.regions] == ["x", "y", "x#2", "y#2"]
    assert m.gm.regions[2].label == "'x'" and m.gm.regions[2].buffer.label == "gm:x"


def test_random_fill_is_lazy_with_the_same_contents_as_drawn_up_front():
    """fill="random" made every on-chip buffer when the machine was made (so the random draws kept their order):
    a launch of thousands of blocks held ~1-2 MiB per block. Buffers are now made on first use, in any order,
    with the bytes numpy's stream gave when every buffer was drawn up front (per core: the other spaces, then
    each UB; then GM tensors), a fed GM tensor still taking its place in the stream."""
    from pto_core.targets import ON_CHIP_SPACES
    for target, seed in (("A2A3", 7), ("Ascend910A", 0)):
        m = Machine(target, cores=3, options=MachineOptions(fill="random", seed=seed))
        assert all(not c.buffers and all(u is None for u in c._ubs) for c in m.cores)     # nothing made yet
        fed = m.gm.alloc(100, name="fed", data=np.zeros(100, np.uint8))
        gm = m.gm.alloc(1000, name="g")
        rng = np.random.default_rng(seed)
        want = {}
        for c in m.cores:
            for space in ON_CHIP_SPACES:
                size = m.target.sizes.of(space)
                if space != "ub" and size > 0:
                    want[c.index, space, 0] = rng.integers(0, 256, size=size, dtype=np.uint8)
            for s in range(len(c._ubs)):
                want[c.index, "ub", s] = rng.integers(0, 256, size=m.target.sizes.ub, dtype=np.uint8)
        rng.integers(0, 256, size=100, dtype=np.uint8)
        assert gm.buffer.data.tobytes() == rng.integers(0, 256, size=1000, dtype=np.uint8).tobytes()
        assert not fed.buffer.data.any()
        for (core, space, sub), data in reversed(list(want.items())):      # first use in another order
            assert m.cores[core].buffer(space, sub).data.tobytes() == data.tobytes(), (target, core, space, sub)


def test_a_reused_machine_names_a_later_runs_tensor_in_a_guard_gap_error():
    """GmRegion.shown in the out-of-bounds messages of an access outside every region too: the second run on one
    machine said "399744 B past the end of region 'y#2'" (a name the user never wrote)."""
    m = Machine("A2A3")
    with program("k", target="A2A3") as k:
        xa = k.gm_arg("x", "f32", (64,))
        y = k.gm_arg("y", "f32", (64,), io="out")
        ub = k.ptr("ub", "f32", 0)
        pto.mte_gm_ub(xa, ub, 0, 256, nburst=(1, 256, 256))
        pto.set_flag("MTE2", "MTE3", 0)
        pto.wait_flag("MTE2", "MTE3", 0)
        pto.mte_ub_gm(ub, y + 100000, 256, nburst=(1, 256, 256))      # far past y: in the guard gap after it
    exe = k.program.compile()
    for _ in range(2):
        with pytest.raises(OutOfBounds, match="past the end of region 'y'\\)") as e:
            exe.run({"x": np.arange(64, dtype=np.float32)}, machine=m)
        assert "#2" not in str(e.value), str(e.value)


def test_run_on_a_machine_of_another_target_checks_the_ops_against_it():
    """VERIFY_ON_ANOTHER_TARGET: a bf16 mad compiled for A5 run on an Ascend310 machine (whose mad has no bf16)
    is refused before it starts, as recording it for Ascend310 is; it used to run unchecked. The same executable
    still runs on an A5 machine afterwards."""
    from pto_core.targets import get_target
    combo = sorted(c for c in set(get_target("A5").mad_dtypes) - set(get_target("Ascend310").mad_dtypes)
                   if c[0] == "bf16")[0]
    with program("m", target="A5") as k:
        pto.mad(k.ptr("l0a", combo[0], 0), k.ptr("l0b", combo[1], 0), k.ptr("l0c", combo[2], 0), 16, 16, 32)
    exe = k.program.compile()
    opts = MachineOptions(uninitialized="off")
    with pytest.raises(IllegalOperand, match="not supported on"):
        exe.run({}, machine=Machine("Ascend310", options=opts))
    exe.run({}, machine=Machine("A5", options=opts))
    with pytest.raises(IllegalOperand, match="not supported on"):
        exe.run({}, machine=Machine("Ascend310", options=opts))


def test_run_on_another_target_checks_ops_in_loop_and_if_bodies_at_the_users_line():
    """VERIFY_ON_ANOTHER_TARGET walks For and If bodies: a bf16 mad inside a loop / a branch of an A5 program
    run on an Ascend310 machine is refused with the error recording it for Ascend310 raises, at the op's own
    line (review336)."""
    import inspect
    opts = MachineOptions(uninitialized="off")
    for nest in ("for", "if"):
        with program("m", target="A5") as k:
            n = k.scalar_arg("n", "s32")
            with (k.for_(0, 2) if nest == "for" else k.if_(n > 0)):
                line = inspect.currentframe().f_lineno + 1
                pto.mad(k.ptr("l0a", "bf16", 0), k.ptr("l0b", "bf16", 0), k.ptr("l0c", "f32", 0), 16, 16, 32)
        exe = k.program.compile()
        with pytest.raises(IllegalOperand) as run_err:
            exe.run({"n": 0}, machine=Machine("Ascend310", options=opts))
        with pytest.raises(IllegalOperand) as rec_err:
            with program("m", target="Ascend310") as k2:
                pto.mad(k2.ptr("l0a", "bf16", 0), k2.ptr("l0b", "bf16", 0), k2.ptr("l0c", "f32", 0), 16, 16, 32)
        assert run_err.value.message == rec_err.value.message, nest
        assert run_err.value.where.line == line and run_err.value.where.file == __file__, nest
