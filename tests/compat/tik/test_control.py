"""Control flow: for_range forms (incl. block_num), if/elif/else, new_stmt_scope, tik_break /
tik_continue / tik_return, Python-level unrolling, scalar unit ops."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, PtoError, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.data import Cann81RuleWarning

from .helpers import build, raises_tik, run


def _counter_kernel(body, n_out=8, dtype="int32", cores=None):
    """Run ``body(ti, ub)`` and return ub (n_out elements of ``dtype``, initialised to 0) after the kernel."""
    ti = tik.Tik()
    out = ti.Tensor(dtype, (n_out,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor(dtype, (n_out,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, n_out) as i:
        ub[i].set_as(0)
    body(ti, ub)
    ti.data_move(out, ub, 0, 1, n_out * np.dtype(dtype).itemsize // 32, 0, 0)
    build(ti, "ctl", [], [out])
    return run(ti)[0]


def test_for_range_forms():
    def body(ti, ub):
        acc = ti.Scalar("int32", name="acc", init_value=0)
        with ti.for_range(begint=0, endt=4):                         # keywords, no `as` (C2)
            acc.set_as(acc + 1)
        ub[0].set_as(acc)
        n = ti.Scalar("int32", name="n", init_value=3)
        with ti.for_range(1, n + 1) as i:                            # Expr end, non-zero begin (C4/C5)
            ub[1].set_as(i)
        with ti.for_range(5, 5) as i:                                # empty
            ub[2].set_as(99)
        with ti.for_range(0, 2) as a, ti.for_range(0, 3) as b, ti.for_range(0, 2, thread_num=2) as c:   # (C1, C7)
            acc.set_as(acc + 1)
        ub[3].set_as(acc)
        with ti.for_range(0, 2, block_num=1) as core_id:             # block_num=1: a plain loop (C6)
            ub[4].set_as(core_id)
        for k in range(3):                                           # Python loops unroll (C10)
            ub[5 + k].set_as(k * 10)
    out = _counter_kernel(body)
    assert out.tolist() == [4, 3, 0, 16, 1, 0, 10, 20]



def test_loop_kinds_tik_supports_and_the_ones_it_refuses():
    """CANN 8.1 TIK: for_type is 'serial' only (`_get_for_type_id`: "Unknown for_type"), a thread_num > 1 loop's
    thread_type is 'whole' or 'partial' (`_get_attr_key`). Both were accepted whatever they were (review spec422)."""
    def body(ti, ub):
        with ti.for_range(0, 2, for_type="serial", thread_type="partial", thread_num=2) as i:
            ub[i].set_as(i + 1)
        with ti.for_range(0, 1, thread_type="anything") as i:       # thread_num 1: TIK never reads it
            ub[2].set_as(7)
        with ti.multi_for_range([0, 0], [1, 2], for_type="serial") as (i, j):
            ub[3 + j].set_as(5)
    assert _counter_kernel(body).tolist() == [1, 2, 7, 5, 5, 0, 0, 0]
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match=r"test_control\.py:\d+ .*for_type 'parallel' is not a TIK loop type "
                                          r".*Fix: drop for_type"):
        ti.for_range(0, 4, for_type="parallel")
    with raises_tik(IllegalOperand, match=r"for_type 'unroll' is not a TIK loop type"):
        ti.multi_for_range([0], [4], for_type="unroll")
    with raises_tik(IllegalOperand, match=r"thread_type 'half' is not a TIK double-buffer type .*Fix: "):
        ti.for_range(0, 4, thread_num=2, thread_type="half")


def test_for_range_bound_from_int_scalar_and_float_immediate():
    """CANN cumsum_d: ``(n - shape[0] / block_num * core - per) / 256`` mixes Python floats into an int
    loop-variable expression; TIK takes it as the loop bound (C conversion), a float Scalar stays an error."""
    def body(ti, ub):
        acc = ti.Scalar("int32", name="acc", init_value=0)
        with ti.for_range(0, 2) as k:
            start = 2.0 * k
            with ti.for_range(0, (6 - start - 2.0) / 2) as j:       # float32 Expr: 2 then 1 iterations
                acc.set_as(acc + 1)
            ub[k].set_as(acc)
    assert _counter_kernel(body).tolist()[:2] == [2, 3]
    ti = tik.Tik()
    f = ti.Scalar("float32", name="f", init_value=2.0)
    with raises_tik(IllegalOperand, match="endt must be an integer, got a float32 expression"):
        with ti.for_range(0, f + 1.0):
            pass


def test_loop_variable_attribute_target_and_dtype():
    class Holder:
        pass
    h = Holder()

    def body(ti, ub):
        with ti.for_range(0, 8, dtype="int64") as h.index:            # attribute target (C3)
            ub[h.index].set_as(h.index * 2)
    assert _counter_kernel(body).tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    assert h.index.dtype == "int64"


def test_if_elif_else_chains_at_run_time():
    def body(ti, ub):
        with ti.for_range(0, 8) as i:
            with ti.if_scope(i < 2):
                ub[i].set_as(1)
            with ti.elif_scope(tik.any(i == 2, i == 5)):             # C9
                ub[i].set_as(2)
            with ti.elif_scope(tik.all(i > 5, i % 2 == 0)):
                ub[i].set_as(3)
            with ti.else_scope():
                ub[i].set_as(4)
        with ti.if_scope(True):                                      # Python bool conditions (S9)
            ub[0].set_as(7)
        with ti.if_scope(0):
            ub[1].set_as(9)
    assert _counter_kernel(body).tolist() == [7, 1, 2, 4, 4, 2, 3, 4]


def test_else_must_follow_an_if():
    ti = tik.Tik()
    with raises_tik(PtoError, match="else_scope must directly follow an if_scope"):
        with ti.else_scope():
            pass
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    with ti.if_scope(True):
        ub[0].set_as(1)
    ub[1].set_as(2)
    with raises_tik(PtoError, match="elif_scope must directly follow"):
        with ti.elif_scope(True):
            pass


def test_break_continue_return():
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, 8) as i:
        ub[i].set_as(0)
    k = ti.Scalar("int32", name="k", init_value=1)
    with ti.for_range(0, 16):                                        # C8: break out of a doubling loop
        with ti.if_scope(k < 8):
            k.set_as(k * 2)
        with ti.else_scope():
            ti.tik_break()
    ub[0].set_as(k)
    with ti.for_range(0, 6) as i:
        with ti.if_scope(i % 2 == 1):
            ti.tik_continue()
        ub[2 + i // 2].set_as(i)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    ti.tik_return()
    ub[7].set_as(123)                                                # never runs
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "jumps", [], [out])
    assert run(ti)[0].tolist() == [8, 0, 0, 2, 4, 0, 0, 0]


def test_loop_end_scalar_assigned_in_the_body_is_reread_each_iteration():
    """LOOP_END_REREAD: TIK's generated C loop tests ``i < endt`` before every iteration, so a body that
    assigns the end Scalar changes the trip count (CANN tabulate_fusion ends its loop with
    ``for_end_s.set_as(0)``); growing it extends the loop, a loop whose end the body leaves alone is unchanged."""
    def body(ti, ub):
        end = ti.Scalar("int32", name="end", init_value=6)
        cnt = ti.Scalar("int32", name="cnt", init_value=0)
        with ti.for_range(0, end) as i:                  # stop after iteration 2: 3 iterations
            cnt.set_as(cnt + 1)
            with ti.if_scope(i == 2):
                end.set_as(0)
        ub[0].set_as(cnt)
        ub[1].set_as(end)
        grow = ti.Scalar("int32", name="grow", init_value=2)
        with ti.for_range(1, grow + 1) as i:             # grows to 5 in iteration 1: i = 1..4
            with ti.if_scope(i == 1):
                grow.set_as(4)
            ub[2].set_as(i)
        inner = ti.Scalar("int32", name="inner", init_value=5)
        tot = ti.Scalar("int32", name="tot", init_value=0)
        with ti.for_range(0, 3):                         # assigned in a nested loop, reset per outer trip
            inner.set_as(5)
            with ti.for_range(0, inner) as j:
                tot.set_as(tot + 1)
                with ti.if_scope(j == 1):
                    inner.set_as(j)                      # 2 iterations
        ub[3].set_as(tot)
        fixed = ti.Scalar("int32", name="fixed", init_value=3)
        other = ti.Scalar("int32", name="other", init_value=0)
        with ti.for_range(0, fixed):                     # end not assigned: evaluated as before
            other.set_as(other + 10)
        ub[4].set_as(other)
        gone = ti.Scalar("int32", name="gone", init_value=0)
        with ti.for_range(0, gone):                      # empty at entry: the body never runs
            gone.set_as(7)
        ub[5].set_as(gone)
    assert _counter_kernel(body).tolist() == [3, 0, 4, 6, 30, 0, 0, 0]


def test_loop_whose_body_assigns_its_begin_scalar_retests_the_trip_count():
    """The generated loop counts c = 0, 1, ... while c < endt - begint, re-reading begint before every
    iteration; a body that never reads the loop variable sees nothing else of it (a merge-pass loop
    ``for_range(run, n)`` whose body does ``run.set_as(run * 4)`` runs exactly the passes it needs)."""
    def body(ti, ub):
        run_ = ti.Scalar("int32", name="run", init_value=64)
        end = ti.Scalar("int32", name="end", init_value=356)
        passes = ti.Scalar("int32", name="passes", init_value=0)
        with ti.for_range(run_, end):                    # 0 < 292, 1 < 100, 2 < -668: 2 passes
            passes.set_as(passes + 1)
            run_.set_as(run_ * 4)
        ub[0].set_as(passes)
        ub[1].set_as(run_)
        lo = ti.Scalar("int32", name="lo", init_value=0)
        hi = ti.Scalar("int32", name="hi", init_value=5)
        cnt = ti.Scalar("int32", name="cnt", init_value=0)
        with ti.for_range(lo, hi):                       # both move: c < 5-0, 1 < 4-1, 2 < 3-2 stops
            cnt.set_as(cnt + 1)
            lo.set_as(lo + 1)
            hi.set_as(hi - 1)
        ub[2].set_as(cnt)
        k = ti.Scalar("int32", name="k", init_value=3)
        none = ti.Scalar("int32", name="none", init_value=0)
        with ti.for_range(k, 3):                         # empty at entry: the body never runs
            k.set_as(0)
            none.set_as(9)
        ub[3].set_as(none)
    assert _counter_kernel(body).tolist() == [2, 1024, 2, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("assign_end", [True, False])
def test_loop_whose_body_assigns_its_begin_scalar_and_reads_the_variable_is_refused(assign_end):
    """TIK re-reads begint at every use of the loop variable (i + begint): not modelled."""
    ti = tik.Tik()
    lo = ti.Scalar("int32", name="lo", init_value=0)
    hi = ti.Scalar("int32", name="hi", init_value=4)
    acc = ti.Scalar("int32", name="acc", init_value=0)
    with raises_tik(UnsupportedOp, match=r"assigns Scalar\(s\) \['lo'\] of its begint and reads the loop "
                                         r"variable") as e:
        with ti.for_range(lo, hi) as i:
            lo.set_as(1)
            with ti.if_scope(i > 1):
                acc.set_as(acc + 1)
            if assign_end:
                hi.set_as(2)
    assert "test_control.py" in str(e.value)


def test_break_outside_a_loop_is_an_error():
    ti = tik.Tik()
    with raises_tik(PtoError, match="tik_break outside a for_range"):
        ti.tik_break()


def test_multi_core_loop_rules():
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match="must start at 0"):
        ti.for_range(1, 4, block_num=4)
    with raises_tik(IllegalOperand, match="endt 3 != block_num 4|must run 0..block_num"):
        ti.for_range(0, 3, block_num=4)
    with raises_tik(IllegalOperand, match="thread_num must be 0 or 1 on the multi-core loop"):
        ti.for_range(0, 4, block_num=4, thread_num=2)
    with raises_tik(IllegalOperand, match=r"thread_num must be an int in \[0, 4\]"):
        ti.for_range(0, 4, thread_num=5)
    with raises_tik(IllegalOperand, match="block_num must be a positive int"):
        ti.for_range(0, 4, block_num=0)
    with ti.for_range(0, 2, block_num=2):
        with raises_tik(PtoError, match="cannot be nested in another multi-core loop"):
            with ti.for_range(0, 2, block_num=2):
                pass


def _two_block_loops(first, second, dynamic=False):
    """IndexSDK fp_to_fp16's shape: one multi-core loop per round, one after the other (unrolled by Python)."""
    ti = tik.Tik()
    x = ti.Tensor("int32", (8, 8), name="x", scope=tik.scope_gm)
    y = ti.Tensor("int32", (8, 8), name="y", scope=tik.scope_gm)
    for rnd, bn in enumerate((first, second)):
        if dynamic and rnd == 1:
            bn = ti.Scalar("int32", name="cores", init_value=second)
        with ti.for_range(0, bn, block_num=bn) as core:
            ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
            ti.data_move(ub, x[rnd * 4 + core, 0], 0, 1, 1, 0, 0)
            ti.vadds(8, ub, ub, 1000 * (rnd + 1), 1, 1, 1, 8, 8)
            ti.data_move(y[rnd * 4 + core, 0], ub, 0, 1, 1, 0, 0)
    return ti, x, y


def test_multi_core_loops_one_after_the_other_run_on_the_same_cores():
    """TIK resets its nesting flag when a block loop closes (CANN 8.1 tik_ir_builder `_for_range_block_init`), so
    a kernel may hold several multi-core loops in a row; each core runs their bodies in turn (was: IllegalOperand
    "a kernel has at most one multi-core loop ... TIK forbids nesting" for loops that were not nested)."""
    set_current_compile_soc_info("Ascend310P3")
    ti, x, y = _two_block_loops(4, 4)
    build(ti, "rounds", [x], [y])
    xv = np.arange(64, dtype=np.int32).reshape(8, 8)
    got, = run(ti, {"x": xv})
    assert (got[:4] == xv[:4] + 1000).all() and (got[4:] == xv[4:] + 2000).all()
    assert ti.program.block_num == 4


def test_multi_core_loops_with_different_counts_are_refused_clearly():
    set_current_compile_soc_info("Ascend310P3")
    with raises_tik(UnsupportedOp, match=r"\.py:\d+ in .tik\.for_range.: .*second multi-core loop with block_num 2 "
                                         r"after one with 4"):
        _two_block_loops(4, 2)
    with raises_tik(UnsupportedOp, match="computed Scalar block_num may have no other multi-core loop"):
        _two_block_loops(4, 4, dynamic=True)


def test_block_num_from_an_input_scalar_runs_that_many_cores():
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    out = ti.Tensor("int32", (8, 8), name="out", scope=tik.scope_gm)
    with ti.for_range(0, n, block_num=n) as core:
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        with ti.for_range(0, 8) as i:
            ub[i].set_as(core * 100 + i)
        ti.data_move(out[core, 0], ub, 0, 1, 1, 0, 0)
    build(ti, "cores", [n], [out])
    got, = run(ti, {"n": 3})
    assert got[:3].tolist() == [[c * 100 + i for i in range(8)] for c in range(3)]
    assert (got[3:] == -1).all()                      # rows no core wrote keep the GM pattern


def test_block_num_input_scalar_is_range_checked_when_fed():
    """A fed InputScalar block_num gets the immediate's range [1, 65535] (was: 70000 cores were allocated and
    the process ran out of memory; 0 a bare launch error)."""
    ti = tik.Tik()
    n = ti.InputScalar("int32", name="n")
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    with ti.for_range(0, n, block_num=n):
        ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
        ti.vec_dup(8, ub, 7, 1, 8)
        ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "cores", [n], [out])
    for bad in (0, -3, 65536, 70000):
        with raises_tik(IllegalOperand, match=rf"\.py:\d+ in .tikdb\.start_debug.: .*block_num InputScalar 'n' = {bad} "
                                              rf"is outside \[1, 65535\]"):
            run(ti, {"n": bad})
    got, = run(ti, {"n": 1})
    assert (got == 7).all()


def test_multi_core_loop_inside_a_serial_loop_and_an_if():
    # CANN cummin / arg_max_with_value open the block loop inside a for_range, scatter_max_with_argmax
    # inside an if_scope: the kernel runs on every core, the block body wherever control reaches it
    set_current_compile_soc_info("Ascend910", aicore_num=4)
    ti = tik.Tik()
    out = ti.Tensor("int32", (3, 4, 8), name="out", scope=tik.scope_gm)
    flag = ti.Scalar("int32", name="flag", init_value=1)
    cores = ti.Scalar("int32", name="cores", init_value=3)
    with ti.for_range(0, 3) as d:
        with ti.if_scope(flag == 1):
            with ti.for_range(0, cores, block_num=cores) as core:
                ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
                with ti.for_range(0, 8) as i:
                    ub[i].set_as(d * 1000 + core * 100 + i)
                ti.data_move(out[d, core, 0], ub, 0, 1, 1, 0, 0)
    build(ti, "nested_cores", [], [out])
    got, = run(ti)
    want = np.array([[[d * 1000 + c * 100 + i for i in range(8)] for c in range(3)] for d in range(3)])
    assert np.array_equal(got[:, :3], want) and (got[:, 3] == -1).all()


def test_scalar_unit_ops():
    def body(ti, ub):
        f = ti.Scalar("float32", name="f", init_value=-2.5)
        g = ti.Scalar("float32", name="g")
        i = ti.Scalar("int32", name="i")
        ti.scalar_abs(g, f)
        ti.scalar_conv("floor", i, g)
        ub[0].set_as(i)                                              # floor(2.5) = 2
        ti.scalar_conv("round", i, f)
        ub[1].set_as(i)                                              # round-even(-2.5) = -2
        ti.scalar_conv("away-zero", i, f)
        ub[2].set_as(i)                                              # -3
        ti.scalar_conv("ceil", i, f)
        ub[3].set_as(i)                                              # -2
        j = ti.Scalar("int64", name="j")                             # scalar_max/min: int64 or float32
        j.set_as(i)
        ti.scalar_max(j, j, 5)
        ub[4].set_as(j)
        ti.scalar_min(j, j, -7)
        ub[5].set_as(j)
        ti.scalar_sqrt(g, 16.0)
        ti.scalar_conv("to-zero", i, g)
        ub[6].set_as(i)
        ti.scalar_conv("", f, i)                                     # s32 -> f32
        f.set_as(f * 2)                                              # scalar_conv takes a Scalar, not an Expr
        ti.scalar_conv("to-zero", i, f)
        ub[7].set_as(i)
    set_current_compile_soc_info("Ascend910B1")                     # float32 scalar_abs: not on Ascend910
    assert _counter_kernel(body).tolist() == [2, -2, -3, -2, 5, -7, 4, 8]


def test_scalar_conv_errors():
    set_current_compile_soc_info("Ascend910")
    ti = tik.Tik()
    f = ti.Scalar("float32")
    i = ti.Scalar("int32")
    with raises_tik(IllegalOperand, match="needs a rounding mode"):
        ti.scalar_conv("", i, f)
    with raises_tik(IllegalOperand, match="scalar_conv float32 -> float16 takes round_mode '', 'none', 'odd', "
                                          "not 'round'"):
        ti.scalar_conv("round", ti.Scalar("float16"), f)
    with raises_tik(IllegalOperand, match="scalar_conv int32 -> float32 takes round_mode '', 'none', not 'odd'"):
        ti.scalar_conv("odd", f, i)
    with raises_tik(IllegalOperand, match="round_mode 'nearest' is not supported"):
        ti.scalar_conv("nearest", i, f)
    with raises_tik(IllegalOperand, match="dst must be a Scalar"):
        ti.scalar_abs(3, f)


#: the TIK reference's scalar_conv table 3 (Atlas training series): input -> 'away-zero' result
AWAY_TABLE = {1.8: 2, 1.5: 2, 1.2: 2, 0.8: 1, 0.5: 1, 0.2: 1, -0.2: -1, -0.5: -1, -0.8: -1, -1.2: -2, -1.5: -2,
              -1.8: -2}


@pytest.mark.parametrize("soc,away_is_up", [("Ascend910", True), ("Ascend910B1", True), ("Ascend310B1", True),
                                            ("Ascend310P3", False)])
def test_scalar_conv_away_zero_follows_the_chip(soc, away_is_up):
    """Training, A2 training and 200I/500 A2 chips round every fraction away from zero (x.x -> x+1);
    the Atlas inference (310P) AI Core rounds half away ("四舍五入")."""
    xs = list(AWAY_TABLE)

    def body(ti, ub):
        f = ti.Scalar("float32", name="f")
        i = ti.Scalar("int32", name="i")
        for k, x in enumerate(xs):
            f.set_as(x)
            ti.scalar_conv("away-zero", i, f)
            ub[k].set_as(i)
    set_current_compile_soc_info(soc)
    got = _counter_kernel(body, n_out=16).tolist()[:len(xs)]
    want = [AWAY_TABLE[x] if away_is_up else int(np.sign(x) * np.floor(abs(x) + 0.5)) for x in xs]
    assert got == want


def test_scalar_conv_odd_rounds_float32_to_float16_to_odd():
    """Against the numerics' round-to-odd encoder on random values across the f16 range (subnormal
    results, ties, exact values, overflow: odd rounding never gives inf)."""
    from pto_core.numerics import float_to
    rng = np.random.default_rng(5)
    vals = np.concatenate([
        (rng.standard_normal(60) * np.exp2(rng.integers(-26, 17, 60))).astype(np.float32),
        np.array([0.5 + 2 ** -12, 1 + 2 ** -11, 65504, 65519, 65520, 1e9, -1e9, 2 ** -25, 3 * 2 ** -26, 0.0, -2.5,
                  np.inf], np.float32)])

    def body(ti, ub):
        f = ti.Scalar("float32", name="f")
        h = ti.Scalar("float16", name="h")
        for k, v in enumerate(vals.tolist()):
            f.set_as(float(v))
            ti.scalar_conv("odd", h, f)
            ub[k].set_as(h)
    set_current_compile_soc_info("Ascend910")
    got = _counter_kernel(body, n_out=96, dtype="float16")[:len(vals)]
    want = float_to(vals, "f16", rounding="odd", sat="nosat")
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    assert got[vals.tolist().index(1e9)] == np.float16(65504)


def test_scalar_sqrt_int64_and_negative_values_as_documented():
    """The reference's example (int64 10 -> 3), |x| taken first for negatives, exact truncation up to
    int64's largest value; float32 on chips that have it; Ascend310 has the int64 form only."""
    import math
    vals = [10, 0, 1, -17, 2 ** 52 + 1, 2 ** 63 - 1, 3037000499 ** 2 - 1, 3037000499 ** 2]

    def body(ti, ub):
        s = ti.Scalar("int64", name="s")
        d = ti.Scalar("int64", name="d")
        for k, v in enumerate(vals):
            s.set_as(v)
            ti.scalar_sqrt(d, s)
            ub[k].set_as(d)
        f = ti.Scalar("float32", name="f", init_value=-9.0)
        ti.scalar_sqrt(f, f)
        g = ti.Scalar("int32", name="g")
        f.set_as(f * 1000)                                           # scalar_conv takes a Scalar, not an Expr
        ti.scalar_conv("round", g, f)
        ub[len(vals)].set_as(g)
    set_current_compile_soc_info("Ascend910")
    got = _counter_kernel(body, n_out=12, dtype="int64").tolist()
    assert got[:len(vals)] == [math.isqrt(abs(v)) for v in vals]
    assert got[len(vals)] == 3000                                    # sqrt(|-9.0|) in float32
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    with raises_tik(UnsupportedOp, match="scalar_sqrt of float32 is not supported on Ascend310"):
        ti.scalar_sqrt(ti.Scalar("float32"), 4.0)
    with raises_tik(IllegalOperand, match="scalar_sqrt takes int64 or float32 Scalars, got a int32 dst"):
        ti.scalar_sqrt(ti.Scalar("int32"), 4)


def test_multi_for_range_nests_loops():
    def body(ti, ub):
        with ti.multi_for_range([0, 1], [2, 4]) as (i, j):
            ub[i * 4 + j].set_as(i * 10 + j)
        with pytest.raises(IllegalOperand, match="same length"):
            ti.multi_for_range([0], [1, 2])
    assert _counter_kernel(body).tolist() == [0, 1, 2, 3, 0, 11, 12, 13]


def test_declarations_between_if_and_else_are_allowed():
    def body(ti, ub):
        c = ti.Scalar("int32", name="c", init_value=0)
        with ti.if_scope(c > 0):
            ub[0].set_as(1)
        tmp = ti.Tensor("int32", (8,), name="tmp", scope=tik.scope_ubuf)   # records nothing
        s = ti.Scalar("int32", name="s")
        with ti.else_scope():
            ub[0].set_as(2)
    assert _counter_kernel(body)[0] == 2


def test_tensor_element_comparisons_load_the_element_like_tik():
    """CANN TIK's Tensor.__eq__ ... __ge__ read the single element into a temporary Scalar and compare it:
    if_scope(ub[i] == 0) counts zeros (a Python `==` on views used to be an identity test); a Scalar on
    the left works too; a multi-element view cannot be compared."""
    vals = [0, 5, 0, 7, 3, 0, 9, 1]

    def body(ti, ub):
        src = ti.Tensor("int32", (8,), name="src", scope=tik.scope_ubuf)
        for k, v in enumerate(vals):
            src[k].set_as(v)
        zeros = ti.Scalar("int32", name="zeros", init_value=0)
        big = ti.Scalar("int32", name="big", init_value=0)
        small = ti.Scalar("int32", name="small", init_value=0)
        four = ti.Scalar("int32", name="four", init_value=4)
        le0 = ti.Scalar("int32", name="le0", init_value=0)
        with ti.for_range(0, 8) as i:
            with ti.if_scope(src[i] == 0):
                zeros.set_as(zeros + 1)
            with ti.if_scope(tik.all(src[i] != 0, src[i] >= 5)):
                big.set_as(big + 1)
            with ti.if_scope(four > src[i]):                  # Scalar on the left
                small.set_as(small + 1)
            with ti.if_scope(src[i] <= src[0]):               # tensor on both sides
                le0.set_as(le0 + 1)
        ub[0].set_as(zeros)
        ub[1].set_as(big)
        ub[2].set_as(small)
        ub[3].set_as(le0)
        with pytest.raises(IllegalOperand, match="needs a single element"):
            src[0:2] == 0
    set_current_compile_soc_info("Ascend910")
    got = _counter_kernel(body).tolist()
    assert got[:4] == [3, 3, 5, 3]


def test_new_scope_is_a_statement_block_like_new_stmt_scope():
    """`Tik.new_scope()` (inherited from TVM's IR builder in CANN; OneCoreNMS, proposal, roi_align call it):
    tensors declared inside are freed at its end, so a second scope reuses their UB."""
    def body(ti, ub):
        for k in range(2):
            with ti.new_scope():
                t = ti.Tensor("int32", (8,), name=f"t{k}", scope=tik.scope_ubuf)
                t[0].set_as(10 + k)
                ub[k].set_as(t[0])
    got = _counter_kernel(body).tolist()
    assert got[:2] == [10, 11]



def test_no_new_stmt_scope_inside_a_disable_sync_scope():
    """tik_api.md §6.3 / the new_stmt_scope reference page: with disable_sync=True no new_stmt_scope may be
    nested in its scope. Nesting was accepted (review spec422). Scopes side by side and a disable_sync=True
    scope inside an ordinary one stay legal."""
    def body(ti, ub):
        with ti.new_stmt_scope():
            with ti.new_stmt_scope(disable_sync=True):
                ub[0].set_as(1)
        with ti.new_stmt_scope(disable_sync=True):
            ub[1].set_as(2)
        with ti.new_stmt_scope(disable_sync=False):
            with ti.new_stmt_scope():
                ub[2].set_as(3)
    assert _counter_kernel(body).tolist()[:3] == [1, 2, 3]
    ti = tik.Tik()
    with ti.new_stmt_scope(disable_sync=True):
        with raises_tik(IllegalOperand, match=r"test_control\.py:\d+ .*new_stmt_scope inside a "
                                              r"new_stmt_scope\(disable_sync=True\) body.*Fix: close"):
            ti.new_stmt_scope(disable_sync=True)
        with ti.for_range(0, 2):
            with raises_tik(IllegalOperand, match=r"inside a new_stmt_scope\(disable_sync=True\) body"):
                ti.new_stmt_scope()
            with raises_tik(IllegalOperand, match=r"inside a new_stmt_scope\(disable_sync=True\) body"):
                ti.new_stmt_scope(disable_sync=False)
    with ti.new_stmt_scope():              # after the disable_sync=True scope closed: legal again
        pass


def test_block_calls_whose_checks_fail_in_code_that_never_runs_still_open_a_block():
    """A for_range / if_scope / elif_scope / else_scope / new_stmt_scope call dropped in code that never
    runs (its own checks fail there) is still a usable ``with`` block: a dead one, whose body is dropped
    too (was None: Python's TypeError 'does not support the context manager protocol')."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    # its float16 comparisons are CANN 8.1's float compare ban (FLOAT_COMPARE_CANN81_WARN): a warning, in dead code too
    warned = pytest.warns(Cann81RuleWarning, match="compares float16")
    with warned, ti.if_scope(False):
        h = ti.Scalar("float16", name="h", init_value=1.0)
        with ti.if_scope(h > 0):                         # Ascend310: no float16 Scalar in a condition
            ub[0].set_as(1)
        with ti.elif_scope(h < 0):
            ub[1].set_as(1)
        with ti.else_scope():
            ub[2].set_as(1)
        with ti.for_range(0, 2.5) as i:                  # a non-integral bound
            ub[i].set_as(1)
            with ti.for_range(0, 2.5) as j, ti.if_scope(h > i + j):
                ub[j].set_as(1)
    with ti.for_range(0, 0):
        with ti.for_range(0, 1.5) as k:
            ub[k].set_as(1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "dead_blocks", [], [out])
    assert run(ti)[0].tolist() == [3] * 8
    with pytest.warns(Cann81RuleWarning), raises_tik(PtoError, match="float16"):          # live code: still refused
        with ti.if_scope(h > 0):
            pass


@pytest.mark.parametrize("form", ["else", "elif", "elif_true_then_else", "elif_false"])
def test_branches_after_a_statically_true_condition_never_run(form):
    """STATIC_IF_CHAIN: after ``if_scope(<Python True>)`` the chain's elif/else bodies never run, like
    an ``if_scope(False)`` body: a call there whose immediate arguments fail a check is dropped (CANN's
    moving_sum_with_sigmoid keeps ``vec_reduce_add(window, ...)`` in the else of ``if_scope(window > 64)``;
    its UT builds window 250 / 512). Was: IllegalOperand "mask = 200 is outside [1, 64]"."""
    window = 200
    ti, (x, y, xu, yu, wu), _ = _chain_kernel()
    if form == "elif_false":                             # if(False) elif(True): the final else never runs
        with ti.if_scope(window < 64):
            ti.vec_reduce_add(window, yu, xu, wu, 1, 1)
        with ti.elif_scope(window > 64):
            ti.vec_reduce_add(64, yu, xu, wu, window // 64, 8)
        with ti.else_scope():
            ti.vec_reduce_add(window, yu, xu, wu, 1, 1)
    else:
        with ti.if_scope(window > 64):
            ti.vec_reduce_add(64, yu, xu, wu, window // 64, 8)
        if form == "else":
            with ti.else_scope():
                ti.vec_reduce_add(window, yu, xu, wu, 1, 1)
        else:
            with ti.elif_scope(window > 100):            # also never runs: an earlier branch is taken
                ti.vec_reduce_add(window, yu, xu, wu, 1, 1)
            if form == "elif_true_then_else":
                with ti.else_scope():
                    ti.vec_reduce_add(window, yu, xu, wu, 1, 1)
    ti.data_move(y, yu, 0, 1, 1, 0, 0)
    build(ti, "static_chain", [x], [y])
    got = run(ti, {"x": np.ones(256, np.float32)})[0]
    assert got[0] == 192.0 and (got[1:] == 0).all()
    with raises_tik(IllegalOperand, match="mask"):       # a branch that runs is still checked
        with ti.if_scope(window < 64):
            pass
        with ti.else_scope():
            ti.vec_reduce_add(window, yu, xu, wu, 1, 1)


def _chain_kernel():
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    x = ti.Tensor("float32", (256,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (8,), name="y", scope=tik.scope_gm)
    xu = ti.Tensor("float32", (256,), name="xu", scope=tik.scope_ubuf)
    yu = ti.Tensor("float32", (8,), name="yu", scope=tik.scope_ubuf)
    wu = ti.Tensor("float32", (64,), name="wu", scope=tik.scope_ubuf)
    ti.data_move(xu, x, 0, 1, 32, 0, 0)
    ti.vector_dup(8, yu, 0, 1, 1, 8)
    s = ti.Scalar("int32", name="s", init_value=3)
    return ti, (x, y, xu, yu, wu), s


@pytest.mark.parametrize("form", ["inner_true_chain_in_run_time_if", "inner_true_chain_in_run_time_elif",
                                  "true_chain_in_else_then_new_chain"])
def test_a_nested_statically_true_chain_leaves_the_enclosing_run_time_chain_live(form):
    """STATIC_IF_CHAIN is per chain: an inner ``if_scope(<Python True>)`` chain inside a branch of a run-time
    chain does not make the enclosing chain's later elif/else dead; a failing call there is still refused at
    its line (h_review151)."""
    ti, (x, y, xu, yu, wu), s = _chain_kernel()
    with raises_tik(IllegalOperand, match="mask"):
        if form == "inner_true_chain_in_run_time_if":
            with ti.if_scope(s > 1):
                with ti.if_scope(True):
                    ti.vec_reduce_add(64, yu, xu, wu, 3, 8)
            with ti.else_scope():
                ti.vec_reduce_add(200, yu, xu, wu, 1, 1)
        elif form == "inner_true_chain_in_run_time_elif":
            with ti.if_scope(s > 5):
                pass
            with ti.elif_scope(s > 1):
                with ti.if_scope(True):
                    pass
                with ti.else_scope():
                    pass
            with ti.elif_scope(s > 0):
                ti.vec_reduce_add(200, yu, xu, wu, 1, 1)
        else:
            with ti.if_scope(s > 1):
                pass
            with ti.else_scope():
                with ti.if_scope(True):
                    pass
            with ti.if_scope(s > 1):
                pass
            with ti.else_scope():
                ti.vec_reduce_add(200, yu, xu, wu, 1, 1)


def test_a_python_true_elif_of_a_run_time_chain_makes_the_later_branches_dead():
    """``if_scope(<run time>)`` / ``elif_scope(<Python True>)``: the later elif and else never run (their failing
    calls are dropped); the run-time if and the true elif are live and give the values (h_review151)."""
    ti, (x, y, xu, yu, wu), s = _chain_kernel()
    with ti.if_scope(s > 5):
        ti.vector_dup(8, yu, 5.0, 1, 1, 8)
    with ti.elif_scope(True):
        with ti.if_scope(False):
            ti.vec_reduce_add(200, yu, xu, wu, 1, 1)
        with ti.else_scope():
            ti.vec_reduce_add(64, yu, xu, wu, 3, 8)
    with ti.elif_scope(s > 1):
        ti.vec_reduce_add(200, yu, xu, wu, 1, 1)
    with ti.else_scope():
        ti.vec_reduce_add(200, yu, xu, wu, 1, 1)
    ti.data_move(y, yu, 0, 1, 1, 0, 0)
    build(ti, "true_elif", [x], [y])
    got = run(ti, {"x": np.ones(256, np.float32)})[0]
    assert got[0] == 192.0 and (got[1:] == 0).all()


def test_numpy_scalar_conditions_are_trace_time_constants():
    """``if_scope(window > 64)`` with a numpy ``window`` (shapes read from numpy arrays) gives a numpy bool:
    a constant like a Python bool, so a statically false branch is code that never runs and the
    elif/else after a statically true one too (was refused: "condition must be a TIK expression")."""
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    window = np.int64(100)
    with ti.if_scope(window > 64):                      # np.bool_(True)
        ub[0].set_as(7)
    with ti.else_scope():
        ti.vector_dup(window, ub, 1, 1, 1, 8)           # mask 100 > 64 for int32: never runs, dropped
    with ti.if_scope(np.int64(0)):
        ub[1].set_as(9)
    with ti.if_scope(np.float32(2.5)):
        ub[2].set_as(5)
    with ti.if_scope(np.array(False)):                  # a 0-d array: its one value
        ub[3].set_as(6)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "np_cond", [], [out])
    assert run(ti)[0].tolist() == [7, 3, 5, 3, 3, 3, 3, 3]


def test_zero_d_array_conditions_in_tik_all_any_negate_are_their_value():
    """``tik.all`` / ``tik.any`` / ``tik.negate`` take a 0-d numpy array (``np.all(a == b)`` on arrays
    kept as arrays, ``np.array(True)``) as its one value, as `if_scope` does (was refused: "cannot use
    ndarray array(True) as a scalar condition")."""
    ti = tik.Tik()
    out = ti.Tensor("int32", (8,), name="out", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = ti.Tensor("int32", (8,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(8, ub, 3, 1, 1, 8)
    with ti.if_scope(tik.all(np.array(True), n > 2)):
        ub[0].set_as(7)
    with ti.if_scope(tik.any(np.array(False), n > 10)):
        ub[1].set_as(8)
    with ti.if_scope(tik.negate(np.array(0))):
        ub[2].set_as(9)
    with ti.if_scope(tik.all(np.array(2.5), n > 2)):
        ub[3].set_as(1)
    ti.data_move(out, ub, 0, 1, 1, 0, 0)
    build(ti, "np_cond_all", [n], [out])
    assert run(ti, {"n": 5})[0].tolist() == [7, 3, 9, 1, 3, 3, 3, 3]
    assert run(ti, {"n": 11})[0].tolist() == [7, 8, 9, 1, 3, 3, 3, 3]
    with pytest.raises(PtoError, match="ndarray"):
        tik.all(np.array([True, False]), n > 2)         # a 1-d array is no scalar condition


def test_for_range_truncates_a_float_end_as_tik_does():
    """FOR_RANGE_FLOAT_END_TRUNCATED: TIK's for_range does ``endt = int(endt)`` for a Python float
    (``for_range(0, 5.7)`` runs 5 times); other integer arguments still refuse a fraction."""
    def body(ti, ub):
        acc = ti.Scalar("int32", name="acc", init_value=0)
        with ti.for_range(0, 5.7):
            acc.set_as(acc + 1)
        ub[0].set_as(acc)
        ub[1].set_as(0)
    assert _counter_kernel(body).tolist()[:2] == [5, 0]

    def body64(ti, ub):                             # np.ceil(17 / 16) + 0.5 is a np.float64: isinstance float
        acc = ti.Scalar("int32", name="acc", init_value=0)
        with ti.for_range(0, np.ceil(17 / 16) + 0.5):
            acc.set_as(acc + 1)
        ub[0].set_as(acc)
        ub[1].set_as(0)
    assert _counter_kernel(body64).tolist()[:2] == [2, 0]
    ti = tik.Tik()
    with raises_tik(IllegalOperand, match="begint must be an int"):
        with ti.for_range(0.5, 4):
            pass
