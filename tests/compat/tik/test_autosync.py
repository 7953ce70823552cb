"""Automatic synchronisation: the hazard verifier (on by default) never trips on a correct TIK
kernel -- random programs over GM/UB/L1 moves, scalar accesses, loops (back edges) and
if/else -- and the emitted sync is the minimal readable set in simple cases."""
import random
import re
import sys
import warnings

import numpy as np
import pytest

from pto_core.errors import HazardError
from tbe import tik
from tbe_compat.tik import autosync
from tbe_compat.tik.data import _CANN81_WARNED, Cann81RuleWarning
from pto_core import program as P
from tbe.common.platform import set_current_compile_soc_info

from .helpers import build, run

N = 64          # float32 elements per tensor (8 blocks)


def _random_kernel(seed: int, *, disable_sync: bool = False):
    rng = random.Random(seed)
    set_current_compile_soc_info("Ascend910B1")           # has L1 -> GM as well
    ti = tik.Tik()
    if disable_sync:
        ti._sync._emit = lambda src, dst: None
    x = ti.Tensor("float32", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (N,), name="y", scope=tik.scope_gm)
    ub = [ti.Tensor("float32", (N,), name=f"u{i}", scope=tik.scope_ubuf) for i in range(2)]
    l1 = ti.Tensor("float32", (N,), name="l1", scope=tik.scope_cbuf)
    s = ti.Scalar("float32", name="s", init_value=1.0)
    k = ti.Scalar("int32", name="k", init_value=rng.randrange(3))
    # initialise everything once so that reads see defined data
    ti.data_move(ub[0], x, 0, 1, N // 8, 0, 0)
    ti.data_move(ub[1], x, 0, 1, N // 8, 0, 0)
    ti.data_move(l1, x, 0, 1, N // 8, 0, 0)
    ti.data_move(y, ub[0], 0, 1, N // 8, 0, 0)
    spaces = {"gm": [x, y], "ub": ub, "l1": [l1]}
    pairs = [("gm", "ub"), ("ub", "gm"), ("gm", "l1"), ("l1", "ub"), ("ub", "l1"), ("ub", "ub"), ("l1", "gm")]

    def move():
        a, b = rng.choice(pairs)
        src, dst = rng.choice(spaces[a]), rng.choice(spaces[b])
        if src is dst or dst is x:
            return
        blocks = rng.randint(1, 4)
        so, do = rng.randrange(0, N // 8 - blocks + 1) * 8, rng.randrange(0, N // 8 - blocks + 1) * 8
        ti.data_move(dst[do], src[so], 0, 1, blocks, 0, 0)

    def scalar():
        u = rng.choice(ub)
        i = rng.randrange(N)
        if rng.random() < 0.5:
            s.set_as(u[i])
        else:
            u[i].set_as(s + 1.0)

    def stmts(depth, count):
        for _ in range(count):
            r = rng.random()
            if r < 0.55 or depth >= 2:
                move() if rng.random() < 0.75 else scalar()
            elif r < 0.75:
                trips = rng.choice([1, 2, 3, k])
                with ti.for_range(0, trips):
                    stmts(depth + 1, rng.randint(1, 4))
            else:
                with ti.if_scope(k > rng.randrange(3)):
                    stmts(depth + 1, rng.randint(1, 3))
                if rng.random() < 0.6:
                    with ti.else_scope():
                        stmts(depth + 1, rng.randint(1, 3))
    stmts(0, rng.randint(4, 10))
    build(ti, f"rand{seed}", [x], [y])
    return ti


@pytest.mark.parametrize("seed", range(40))
def test_random_kernels_never_trip_the_hazard_verifier(seed):
    ti = _random_kernel(seed)
    out, = run(ti, {"x": np.arange(N, dtype=np.float32)})
    assert out.shape == (N,)


def test_the_random_kernels_do_need_the_sync():
    """Without the inserted pairs the verifier reports hazards (so the test above can fail)."""
    tripped = 0
    for seed in range(10):
        ti = _random_kernel(seed, disable_sync=True)
        try:
            run(ti, {"x": np.arange(N, dtype=np.float32)})
        except HazardError:
            tripped += 1
    assert tripped >= 8


def test_a_hazard_between_tik_calls_names_the_tensor_the_stray_access_reached():
    """Auto-sync orders whole tensors, so a hazard between two TIK calls means an access left its tensor: a
    Scalar index past 'ub' read bytes of 'o' that vec_dup had just written. The error names 'o' and where it
    was declared, and the Fix points at run-time indices (it advised hand-written set_flag/wait_flag)."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    src = ti.Tensor("float16", (64,), name="src", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (16,), name="dst", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    o = ti.Tensor("float16", (16,), name="o", scope=tik.scope_ubuf)
    o_line = sys._getframe().f_lineno - 1
    ti.data_move(ub, src, 0, 1, 4, 0, 0)
    ti.vec_dup(16, o, 0, 1, 8)
    u = ti.Scalar("int32", init_value=70)               # 6 elements past ub's end: inside 'o'
    x = ti.Scalar("float16")
    x.set_as(ub[u])
    o[0].set_as(x)
    ti.data_move(dst, o, 0, 1, 1, 0, 0)
    build(ti, "stray", [src], [dst])
    with pytest.raises(HazardError, match=rf"those bytes belong to tensor 'o' declared at \S*test_autosync.py:{o_line}\. "
                                          r"TIK's auto-sync orders the tensors each call names") as e:
        run(ti, {"src": np.arange(64).astype(np.float16)})
    assert "Fix: check the run-time indices and offsets of both calls" in str(e.value)
    assert "set_flag" not in str(e.value).split("Fix:")[1]


def _sync_lines(ti):
    return [m.group(1) + " " + m.group(2) + "->" + m.group(3)
            for m in re.finditer(r"pto\.(set_flag|wait_flag)\[<PIPE_(\w+)>, <PIPE_(\w+)>", ti.program.to_asm())]


def test_copy_through_ub_gets_exactly_the_producer_consumer_pair():
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 1, 0, 0)
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "one_pair", [x], [y])
    assert _sync_lines(ti) == ["set_flag MTE2->MTE3", "wait_flag MTE2->MTE3"]


def test_load_vector_store_needs_no_direct_load_to_store_pair():
    # V waited for the load, so V -> MTE3 carries that knowledge: no MTE2 -> MTE3 pair (with the pairs
    # emitted in pipe order instead, the store would get both)
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    ti.vec_adds(128, ub, ub, 1.0, 1, 8, 8)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "chain", [x], [y])
    assert _sync_lines(ti) == ["set_flag MTE2->V", "wait_flag MTE2->V", "set_flag V->MTE3", "wait_flag V->MTE3"]
    a = np.arange(128, dtype=np.float16)
    np.testing.assert_array_equal(run(ti, {"x": a})[0], a + 1)


def test_loop_back_edge_gets_the_reverse_pair_at_the_end_of_the_body():
    ti = tik.Tik()
    x = ti.Tensor("float16", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    with ti.for_range(0, 4) as i:
        ti.data_move(ub, x[i * 16], 0, 1, 1, 0, 0)
        ti.data_move(y[i * 16], ub, 0, 1, 1, 0, 0)
    build(ti, "loop_pairs", [x], [y])
    text = ti.program.to_asm()
    body = text[text.index("scf.for"):]
    assert _sync_lines(ti) == ["set_flag MTE2->MTE3", "wait_flag MTE2->MTE3",
                               "set_flag MTE3->MTE2", "wait_flag MTE3->MTE2"]
    assert body.index("mte_ub_gm") < body.index("set_flag[<PIPE_MTE3>, <PIPE_MTE2>")   # WAR for the next trip
    xs = np.arange(64, dtype=np.float16)
    assert np.array_equal(run(ti, {"x": xs})[0], xs)


def test_an_open_loop_logs_each_op_once_and_its_back_edge_pairs_follow_the_body():
    """Each open loop logs an op's footprint as one entry (pipe, accesses), not one entry per access: the
    back-edge pairs `end_loop` derives from it are those of the body's accesses in program order (the
    per-access log made and dropped a list and a dict for every access, about 1.4 % of tracing a matmul)."""
    pairs = []
    s = autosync.AutoSync(lambda src, dst: pairs.append((src, dst)), lambda: None)
    s.begin_loop()
    s.begin_loop()
    s.op("MTE2", [autosync.Access(("ub",), 0, 64, True), autosync.Access(("gm", 1), 0, 64, False)])
    s.op("V", [autosync.Access(("ub",), 0, 64, False), autosync.Access(("ub",), 64, 128, True)])
    assert [len(log) for _, log in s._loops] == [2, 2]
    assert pairs == [("MTE2", "V")]
    s.end_loop()                      # the next trip's MTE2 write of ub[0, 64) follows V's read of it
    assert pairs == [("MTE2", "V"), ("V", "MTE2")]
    s.end_loop()
    assert pairs == [("MTE2", "V"), ("V", "MTE2")]


def test_independent_buffers_need_no_sync():
    ti = tik.Tik()
    x = ti.Tensor("float16", (32,), name="x", scope=tik.scope_gm)
    a = ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 1, 0, 0)
    ti.data_move(b, x[16], 0, 1, 1, 0, 0)                     # same pipe, other buffer
    build(ti, "no_sync", [x], [])
    assert _sync_lines(ti) == []


def test_if_else_join_keeps_what_either_branch_left_pending():
    ti = tik.Tik()
    x = ti.Tensor("float16", (16,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16,), name="ub", scope=tik.scope_ubuf)
    c = ti.InputScalar("int32", name="c")
    with ti.if_scope(c > 0):
        ti.data_move(ub, x, 0, 1, 1, 0, 0)                    # MTE2 writes ub on one path only
    with ti.else_scope():
        s = ti.Scalar("float16", name="s", init_value=2.0)
        ub[0].set_as(s)                                       # S writes ub on the other
    ti.data_move(y, ub, 0, 1, 1, 0, 0)
    build(ti, "join", [x, c], [y])
    assert _sync_lines(ti) == ["set_flag S->MTE3", "wait_flag S->MTE3", "set_flag MTE2->MTE3", "wait_flag MTE2->MTE3"]
    for cv in (0, 1):
        run(ti, {"x": np.ones(16, np.float16), "c": cv})


# ---------------------------------------------------------------------------- loop-invariant pairs (hoisting)

def _one_hot(n):
    ti = tik.Tik()
    x = ti.Tensor("int32", (n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (n,), name="ub", scope=tik.scope_ubuf)
    ob = ti.Tensor("float16", (n,), name="ob", scope=tik.scope_ubuf)
    ti.data_move(ub, x, 0, 1, n * 4 // 32, 0, 0)
    ti.vector_dup(min(n, 128), ob, 0.0, max(1, n // 128), 1, 8)
    idx = ti.Scalar("int32", name="idx")
    with ti.for_range(0, n) as i:
        idx.set_as(ub[i])
        with ti.if_scope(tik.all(idx >= 0, idx < n)):
            ob[idx].set_as(1.0)
    ti.data_move(y, ob, 0, 1, n * 2 // 32, 0, 0)
    return build(ti, "one_hot", [x], [y])


def _loops(block):
    for st in P.walk_stmts(block):
        if isinstance(st, P.For):
            yield st


def _flags(block):
    """The flag pairs recorded anywhere in ``block``: ["MTE2->S", ...]."""
    return [f"{st.call.operands[0]}->{st.call.operands[1]}" for st in P.walk_stmts(block)
            if isinstance(st, P.OpStmt) and st.call.spec.name == "set_flag"]


def _body(ti):
    loop, = _loops(ti.program.body)
    return _flags(loop.body)


def test_scalar_loop_without_mte2_or_v_ops_runs_no_flag_op_per_iteration(monkeypatch):
    xs = np.array([3, -1, 70, 0, 5, 3, 64, 63] * 8, dtype=np.int32)
    want = np.zeros(64, np.float16)
    want[[v for v in xs if 0 <= v < 64]] = 1
    ti = _one_hot(64)
    assert _body(ti) == []
    assert _sync_lines(ti)[:4] == ["set_flag MTE2->S", "wait_flag MTE2->S", "set_flag V->S", "wait_flag V->S"]
    assert ti._sync.hoisted == 2
    np.testing.assert_array_equal(run(ti, {"x": xs})[0], want)
    monkeypatch.setattr(autosync, "HOIST_LOOP_INVARIANT_PAIRS", False)
    off = _one_hot(64)
    assert _body(off) == ["MTE2->S", "V->S", "V->S"]
    np.testing.assert_array_equal(run(off, {"x": xs})[0], want)


def test_loops_whose_body_uses_the_source_pipe_keep_their_pairs():
    # load / vector / store per trip, double buffered: every pair's source pipe runs in the body
    ti = tik.Tik()
    x = ti.Tensor("float16", (512,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (512,), name="y", scope=tik.scope_gm)
    with ti.for_range(0, 4, thread_num=2) as i:
        ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(ub, x[i * 128], 0, 1, 8, 0, 0)
        ti.vec_adds(128, ub, ub, 1.0, 1, 8, 8)
        ti.data_move(y[i * 128], ub, 0, 1, 8, 0, 0)
    build(ti, "lvs", [x], [y])
    assert ti._sync.hoisted == 0
    assert set(_body(ti)) >= {"MTE2->V", "V->MTE3", "MTE3->MTE2"}
    a = np.arange(512, dtype=np.float16)
    np.testing.assert_array_equal(run(ti, {"x": a})[0], a + 1)


def test_inner_loop_pairs_hoist_through_the_outer_loop_when_it_allows():
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    acc = ti.Tensor("float32", (64,), name="acc", scope=tik.scope_ubuf)
    s, t = ti.Scalar("float32", name="s"), ti.Scalar("float32", name="t")
    ti.data_move(acc, x, 0, 1, 8, 0, 0)
    with ti.for_range(0, 2) as o:
        ti.data_move(ub, x, 0, 1, 8, 0, 0)              # MTE2 runs in the outer body
        with ti.for_range(0, 8) as i:
            s.set_as(ub[i])                            # MTE2 -> S: leaves the inner loop only
            t.set_as(acc[o])                           # MTE2 -> S for acc: too
            acc[i].set_as(s + t)
    ti.data_move(y, acc, 0, 1, 8, 0, 0)
    build(ti, "nest", [x], [y])
    outer, inner = _loops(ti.program.body)
    assert _flags(inner.body) == []
    assert "MTE2->S" in _flags(outer.body)
    assert _flags(ti.program.body[:ti.program.body.index(outer)]) == []
    xs = np.arange(64, dtype=np.float32)
    want = xs.copy()
    for o in range(2):
        for i in range(8):
            want[i] = xs[i] + want[o]
    np.testing.assert_array_equal(run(ti, {"x": xs})[0], want)
    # without the outer MTE2 op the pair leaves both loops
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    s = ti.Scalar("float32", name="s")
    ti.data_move(ub, x, 0, 1, 8, 0, 0)
    with ti.for_range(0, 2):
        with ti.for_range(0, 7) as i:
            s.set_as(ub[i + 1])
            ub[i].set_as(s)
    ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "nest2", [x], [y])
    outer, inner = _loops(ti.program.body)
    assert _flags(outer.body) == [] and ti._sync.hoisted == 2
    want = xs.copy()
    for _ in range(2):
        for i in range(7):
            want[i] = want[i + 1]
    np.testing.assert_array_equal(run(ti, {"x": xs})[0], want)


def _random_hoist_kernel(seed: int):
    """Loops (constant, dynamic, double-buffered, with break/continue), if/elif/else chains, data_move,
    vector ops, Scalar element reads/writes of GM and UB."""
    rng = random.Random(seed)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float32", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (N,), name="y", scope=tik.scope_gm)
    n = ti.InputScalar("int32", name="n")
    ub = [ti.Tensor("float32", (N,), name=f"u{i}", scope=tik.scope_ubuf) for i in range(3)]
    s = ti.Scalar("float32", name="s", init_value=1.0)
    k = ti.Scalar("int32", name="k", init_value=rng.randrange(3))
    for u in ub:
        ti.data_move(u, x, 0, 1, N // 8, 0, 0)
    ti.data_move(y, ub[0], 0, 1, N // 8, 0, 0)
    loop_vars = []

    def index():
        if loop_vars and rng.random() < 0.5:
            return rng.choice(loop_vars) + rng.randrange(N - 8)
        return rng.randrange(N)

    def op():
        r = rng.random()
        if r < 0.3:
            a, b = rng.choice([("gm", "ub"), ("ub", "gm"), ("ub", "ub")])
            src = x if a == "gm" else rng.choice(ub)
            dst = y if b == "gm" else rng.choice(ub)
            if src is dst:
                return
            blocks = rng.randint(1, 4)
            so, do = rng.randrange(0, N // 8 - blocks + 1) * 8, rng.randrange(0, N // 8 - blocks + 1) * 8
            ti.data_move(dst[do], src[so], 0, 1, blocks, 0, 0)
        elif r < 0.45:
            d, a = rng.choice(ub), rng.choice(ub)
            off = rng.randrange(0, N // 8) * 8
            cnt = rng.randint(1, (N - off) // 8) * 8
            if rng.random() < 0.5:
                ti.vec_adds(cnt, d[off], a[off], 1.0, 1, 8, 8)
            else:
                ti.vector_dup(cnt, d[off], float(rng.randrange(5)), 1, 1, 8)
        elif r < 0.85:
            u = rng.choice(ub)
            if rng.random() < 0.5:
                s.set_as(u[index()])
            else:
                u[index()].set_as(s + 1.0)
        else:
            g = rng.choice([x, y])
            if rng.random() < 0.5 or g is x:
                s.set_as(g[index()])
            else:
                y[index()].set_as(s * 2.0)

    def stmts(depth, count):
        for _ in range(count):
            r = rng.random()
            if r < 0.6 or depth >= 3:
                op()
            elif r < 0.8:
                trips = rng.choice([2, 3, 8, n, k + 1])
                with ti.for_range(0, trips, thread_num=rng.choice([1, 1, 2])) as i:
                    loop_vars.append(i)
                    stmts(depth + 1, rng.randint(1, 5))
                    if rng.random() < 0.15:
                        with ti.if_scope(i > rng.randrange(3)):
                            ti.tik_continue() if rng.random() < 0.5 else ti.tik_break()
                        stmts(depth + 1, rng.randint(1, 2))
                    loop_vars.pop()
            else:
                with ti.if_scope(k > rng.randrange(3)):
                    stmts(depth + 1, rng.randint(1, 3))
                if rng.random() < 0.3:
                    with ti.elif_scope(k == rng.randrange(3)):
                        stmts(depth + 1, rng.randint(1, 3))
                if rng.random() < 0.5:
                    with ti.else_scope():
                        stmts(depth + 1, rng.randint(1, 3))
    stmts(0, rng.randint(4, 10))
    build(ti, f"hoist{seed}", [x, n], [y])
    return ti


@pytest.mark.parametrize("chunk", range(4))
def test_hoisting_is_invisible_in_random_kernels(chunk, monkeypatch):
    """300 random kernels traced with hoisting on and off: identical outputs, no hazard report (the verifier
    is on in `run`), and hoisting happens in many of them."""
    hoisted = 0
    for seed in range(chunk * 75, chunk * 75 + 75):
        feed = {"x": np.arange(N, dtype=np.float32) * 0.5, "n": seed % 4}
        monkeypatch.setattr(autosync, "HOIST_LOOP_INVARIANT_PAIRS", True)
        on = _random_hoist_kernel(seed)
        hoisted += on._sync.hoisted > 0
        got = run(on, feed)[0]
        monkeypatch.setattr(autosync, "HOIST_LOOP_INVARIANT_PAIRS", False)
        off = _random_hoist_kernel(seed)
        assert off._sync.hoisted == 0
        np.testing.assert_array_equal(got.view(np.uint32), run(off, feed)[0].view(np.uint32), err_msg=f"seed {seed}")
    assert hoisted >= 15


def test_loop_hoisting_and_compile_leave_no_reference_cycles():
    """Rebuilding a kernel must not leave garbage only the cyclic collector frees: hoisting walks loop
    bodies without a self-referencing closure, and a compiled kernel is not kept in its own globals."""
    import gc
    from pto_core.interpreter import Executable
    ti = tik.Tik()
    x = ti.Tensor("float32", (64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float32", (64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    s = ti.Scalar("float32", name="s")
    with ti.for_range(0, 2):
        ti.data_move(ub, x, 0, 1, 8, 0, 0)
        with ti.for_range(0, 8) as i:
            s.set_as(ub[i])
            ub[i].set_as(s)
        ti.data_move(y, ub, 0, 1, 8, 0, 0)
    build(ti, "cycles", [x], [y])
    outer = next(iter(_loops(ti.program.body)))
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        ti._sync.hoist(list(outer.body))
        assert gc.collect() == 0
        ex = Executable(ti.program)
        del ex
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def _hoist_walking_every_body(self, body):
    """`AutoSync.hoist` as it was before closed loop bodies were remembered: every nested body walked again."""
    if not autosync.HOIST_LOOP_INVARIANT_PAIRS or not self._auto:
        return []
    used = autosync.pipes_used(body)
    if used == autosync._ALL:
        return []
    out, seen = [], set()
    autosync._hoist_visit(body, self._auto, used, seen, out, {})
    self.hoisted += len(out) // 2
    return out


def test_remembered_loop_bodies_hoist_exactly_what_walking_them_again_does(monkeypatch):
    """`AutoSync.hoist` neither walks a closed inner loop body again (its `pipes_used` is remembered) nor
    looks for pairs to move in it: 150 random kernels (nested loops, ifs, break/continue) record the same
    program as with every body walked again at every enclosing loop."""
    from pto_core import asm
    nested = 0
    for seed in range(150):
        fast = _random_hoist_kernel(seed)
        nested += any(isinstance(st, P.For) for loop in _loops(fast.program.body) for st in P.walk_stmts(loop.body))
        with monkeypatch.context() as m:
            m.setattr(autosync.AutoSync, "hoist", _hoist_walking_every_body)
            slow = _random_hoist_kernel(seed)
        assert fast._sync.hoisted == slow._sync.hoisted, f"seed {seed}"
        assert asm.print_program(fast.program) == asm.print_program(slow.program), f"seed {seed}"
    assert nested >= 20


def test_hand_written_set_flag_wait_flag_run_and_record_nothing():
    """TIK_USER_FLAGS_NO_EFFECT: CANN kernels' `set_flag("PIPE_MTE2", "PIPE_V", 0)` / `wait_flag(...)` (tik_api.md
    §6.3: no functional effect) are accepted (they raised "'Tik' object has no attribute 'set_flag'"), leave the
    auto-sync pairs unchanged, and bad pipes or event ids are errors at the user's line. Outside a
    new_stmt_scope(disable_sync=True) body they still run, with a warning naming CANN 8.1's rule
    (USER_FLAG_CANN81_RULES_WARN)."""
    _CANN81_WARNED.clear()
    set_current_compile_soc_info("Ascend910B1")

    def kernel(flags):
        ti = tik.Tik()
        x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
        y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
        u = ti.Tensor("float16", (128,), name="u", scope=tik.scope_ubuf)
        ti.data_move(u, x, 0, 1, 8, 0, 0)
        if flags:
            with pytest.warns(Cann81RuleWarning, match=r"test_autosync\.py:\d+ in `tik\.set_flag`: set_flag outside "
                                                       r"a new_stmt_scope\(disable_sync=True\) body"):
                ti.set_flag("PIPE_MTE2", "PIPE_V", 0)
            with pytest.warns(Cann81RuleWarning, match=r"wait_flag outside"):
                ti.wait_flag("PIPE_MTE2", "PIPE_V", 0)
        ti.vec_adds(128, u, u, 1.0, 1, 8, 8)
        if flags:
            with ti.new_stmt_scope(disable_sync=True):
                with warnings.catch_warnings():
                    warnings.simplefilter("error")            # inside the scope, with int ids: no warning
                    ti.set_flag("PIPE_V", "PIPE_MTE3", 1)
                    ti.wait_flag("PIPE_V", "PIPE_MTE3", 1)
        ti.data_move(y, u, 0, 1, 8, 0, 0)
        return build(ti, "flags", [x], [y])

    ti = kernel(True)
    out, = run(ti, {"x": np.arange(128, dtype=np.float16)})
    assert (out == np.arange(1, 129, dtype=np.float16)).all()
    assert _sync_lines(ti) == _sync_lines(kernel(False))
    from .helpers import raises_tik
    from pto_core.errors import IllegalOperand
    for args, operand in ((("PIPE_X", "PIPE_V", 0), "pipe_src"), (("PIPE_V", 3, 0), "pipe_dst"),
                          (("PIPE_V", "PIPE_MTE3", 8), "event_id"), (("PIPE_V", "PIPE_MTE3", "EVENT_ID1"), "event_id"),
                          (("PIPE_ALL", "PIPE_V", 0), "pipe_src"), (("V", "PIPE_MTE3", 0), "pipe_src")):
        with raises_tik(IllegalOperand,
                        match=rf"test_autosync\.py:\d+ in `tik\.wait_flag`: operand {operand}.*Fix:"):
            ti.wait_flag(*args)


def test_flag_calls_cann81_refuses_run_with_one_warning_per_site():
    """USER_FLAG_CANN81_RULES_WARN: what only CANN 8.1 TIK refuses (same pipe on both sides, PIPE_FIX, a numpy
    event id, a call outside a disable_sync=True scope; pipe_barrier(PIPE_FIX)) runs with a Cann81RuleWarning
    naming the rule, once per call site; with the choice off each is an error at the line."""
    _CANN81_WARNED.clear()
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    with ti.new_stmt_scope(disable_sync=True):
        for args, rule in ((("PIPE_V", "PIPE_V", 1), "pipe and trigger_pipe cannot be the same"),
                           (("PIPE_FIX", "PIPE_MTE3", 1), "set_flag with PIPE_FIX"),
                           (("PIPE_MTE2", "PIPE_V", np.int32(1)), "event_id should be int")):
            with pytest.warns(Cann81RuleWarning, match=rf"test_autosync\.py:\d+ .*{rule}.*Fix:"):
                ti.set_flag(*args)
    with pytest.warns(Cann81RuleWarning, match=r"pipe_barrier\(PIPE_FIX\): CANN 8\.1 TIK takes only"):
        ti.pipe_barrier("PIPE_FIX")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            ti.set_flag("PIPE_MTE2", "PIPE_V", 2)                  # one site, three calls
    assert len([w for w in seen if issubclass(w.category, Cann81RuleWarning)]) == 1
    from .helpers import raises_tik
    from pto_core.errors import IllegalOperand
    from tbe_compat.tik import data
    saved = data.USER_FLAG_CANN81_RULES_WARN
    data.USER_FLAG_CANN81_RULES_WARN = False
    try:
        with raises_tik(IllegalOperand, match=r"test_autosync\.py:\d+ in `tik\.set_flag`: .*outside a "
                                              r"new_stmt_scope\(disable_sync=True\).*CANN 8\.1 TIK refuses it"):
            ti.set_flag("PIPE_MTE2", "PIPE_V", 3)
    finally:
        data.USER_FLAG_CANN81_RULES_WARN = saved


def test_flag_rule_warning_turned_error_raises_at_every_call_of_the_site():
    """USER_FLAG_CANN81_RULES_WARN under ``python -W error`` (a filter that raises the warning): the site was marked as
    warned before the warning was issued, so the first call raised and every later call of the same line (the
    kernel built again, the next test) ran silently. Now a site counts as warned only once its warning was shown."""
    _CANN81_WARNED.clear()
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    with warnings.catch_warnings():
        warnings.simplefilter("error", Cann81RuleWarning)
        for _ in range(2):
            with pytest.raises(Cann81RuleWarning, match=r"test_autosync\.py:\d+ in `tik\.set_flag`: set_flag outside"):
                ti.set_flag("PIPE_MTE2", "PIPE_V", 1)           # one site, called twice: raises both times
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            ti.set_flag("PIPE_MTE2", "PIPE_V", 1)
    assert len([w for w in seen if issubclass(w.category, Cann81RuleWarning)]) == 1


def test_hand_written_flag_takes_numpy_event_ids_and_names_a_wrong_type_as_such():
    """set_flag(..., np.int32(1)) was refused with "event id np.int32(1) is outside 0..7" (pto.set_flag takes numpy
    ids, test_sync_numpy_ids.py); a float, bool, None or TIK Scalar event id said "is outside 0..7" too. A numpy id
    runs with a Cann81RuleWarning (CANN 8.1 TIK requires a Python int)."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    with ti.new_stmt_scope(disable_sync=True):
        for ev in (np.int32(1), np.int64(7), np.uint8(0), np.array(2)):
            with pytest.warns(Cann81RuleWarning, match="event_id should be int"):
                ti.set_flag("PIPE_MTE2", "PIPE_V", ev)
            with pytest.warns(Cann81RuleWarning, match="event_id should be int"):
                ti.wait_flag("PIPE_MTE2", "PIPE_V", ev)
            _CANN81_WARNED.clear()                                  # the same sites warn again next time
    from .helpers import raises_tik
    from pto_core.errors import IllegalOperand
    s = ti.Scalar("int32", init_value=1)
    for ev, name in ((1.0, "float"), (True, "bool"), (None, "NoneType"), (s, "Scalar")):
        with raises_tik(IllegalOperand, match=rf"test_autosync\.py:\d+ in `tik\.set_flag`: operand event_id: event id "
                                              rf"must be an int 0\.\.7, got {name} .*Fix:") as e:
            ti.set_flag("PIPE_MTE2", "PIPE_V", ev)
        assert "outside" not in str(e.value)
    with raises_tik(IllegalOperand, match=r"event id 8 is outside 0\.\.7"):
        ti.set_flag("PIPE_MTE2", "PIPE_V", np.int64(8))


def test_a_stray_hazard_on_re_placed_bytes_names_every_tensor_placed_there_in_turn():
    """'old' (freed at its scope's end) and 'o' shared the bytes the stray ub[u] read: the error said
    "tensor 'old' ... / tensor 'o' ...", as if the bytes belonged to both at once; it now says one of them, placed
    there in turn."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    src = ti.Tensor("float16", (64,), name="src", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (16,), name="dst", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    with ti.new_stmt_scope():
        old = ti.Tensor("float16", (16,), name="old", scope=tik.scope_ubuf)
        ti.vec_dup(16, old, 0, 1, 8)
    with ti.new_stmt_scope():
        o = ti.Tensor("float16", (16,), name="o", scope=tik.scope_ubuf)
        ti.data_move(ub, src, 0, 1, 4, 0, 0)
        ti.vec_dup(16, o, 0, 1, 8)
        u = ti.Scalar("int32", init_value=70)
        x = ti.Scalar("float16")
        x.set_as(ub[u])
        o[0].set_as(x)
        ti.data_move(dst, o, 0, 1, 1, 0, 0)
    build(ti, "stray2", [src], [dst])
    with pytest.raises(HazardError, match=r"those bytes belong to one of tensor 'old' declared at \S+, tensor 'o' "
                                          r"declared at \S+ \(placed at the same bytes in turn: a scope's end") as e:
        run(ti, {"src": np.arange(64).astype(np.float16)})
    assert "start_addr" not in str(e.value)     # no tensor here has one (h_fix322: the note named both ways)


def test_a_stray_hazard_on_bytes_a_freed_start_addr_tensor_left_says_in_turn():
    """'old' has a start_addr= but its scope ended before 'o' was placed (automatically) at its bytes: the two
    shared them in turn. The note said "by start_addr=, which places a tensor there even over a live one" because
    one of the pair had a start_addr= (h_review328); it now asks whether a start_addr= went over a live tensor."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    src = ti.Tensor("float16", (64,), name="src", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (16,), name="dst", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf)
    with ti.new_stmt_scope():
        old = ti.Tensor("float16", (16,), name="old", scope=tik.scope_ubuf, start_addr=128)
        ti.vec_dup(16, old, 0, 1, 8)
    with ti.new_stmt_scope():
        o = ti.Tensor("float16", (64,), name="o", scope=tik.scope_ubuf)     # larger than 'old': over its bytes
        ti.data_move(ub, src, 0, 1, 4, 0, 0)
        ti.vec_dup(16, o, 0, 1, 8)
        u = ti.Scalar("int32", init_value=70)
        x = ti.Scalar("float16")
        x.set_as(ub[u])
        o[0].set_as(x)
        ti.data_move(dst, o, 0, 1, 1, 0, 0)
    build(ti, "stray3", [src], [dst])
    with pytest.raises(HazardError, match=r"those bytes belong to one of tensor 'old' declared at \S+, tensor 'o' "
                                          r"declared at \S+ \(placed at the same bytes in turn: a scope's end") as e:
        run(ti, {"src": np.arange(64).astype(np.float16)})
    assert "start_addr" not in str(e.value)


def test_a_stray_hazard_on_bytes_two_live_start_addr_tensors_share_does_not_blame_a_scope():
    """'a' and 'b' both live at start_addr=256 (no scope freed anything): the note said "placed there in turn: a
    scope's end frees its tensors' bytes for later ones"; it now names start_addr= as the other way (h_review314)."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    src = ti.Tensor("float16", (64,), name="src", scope=tik.scope_gm)
    dst = ti.Tensor("float16", (16,), name="dst", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (64,), name="ub", scope=tik.scope_ubuf, start_addr=0)
    a = ti.Tensor("float16", (16,), name="a", scope=tik.scope_ubuf, start_addr=256)
    b = ti.Tensor("float16", (16,), name="b", scope=tik.scope_ubuf, start_addr=256)
    ti.data_move(ub, src, 0, 1, 4, 0, 0)
    ti.vec_dup(16, a, 0, 1, 8)
    u = ti.Scalar("int32", init_value=128)
    x = ti.Scalar("float16")
    x.set_as(ub[u])
    b[0].set_as(x)
    ti.data_move(dst, b, 0, 1, 1, 0, 0)
    build(ti, "shared", [src], [dst])
    with pytest.raises(HazardError, match=r"those bytes belong to one of tensor 'a' declared at \S+, tensor 'b' "
                                          r"declared at \S+ \(placed at the same bytes by start_addr=") as e:
        run(ti, {"src": np.arange(64).astype(np.float16)})
    assert "in turn" not in str(e.value)        # nothing was freed here (h_fix322: the note named both ways)
