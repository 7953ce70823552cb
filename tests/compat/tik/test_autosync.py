"""Automatic synchronisation: the hazard verifier (on by default) never trips on a correct TIK
kernel -- random programs over GM/UB/L1 moves, scalar accesses, loops (back edges) and
if/else -- and the emitted sync is the minimal readable set in simple cases."""
import random
import re

import numpy as np
import pytest

from pto_core.errors import HazardError
from tbe import tik
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
