"""Per-op cost of small ops, issued eagerly and from a compiled program (the interpreter).

TIK kernels run through ``start_debug`` as compiled programs, so the fixed cost of one op
inside the interpreter (``ctx.begin_op`` + the op's execute function, no call validation:
that happened when the program was recorded) matters as much as the eager dispatch cost
(``pto.<op>(...)``: clause validation, provenance, ``verify``, then the same execute).

Each case runs ``--iters`` iterations of a small op sequence, eagerly in a Python loop and as
a ``k.for_`` loop of a compiled program; the table gives process CPU microseconds per op
(best of ``--repeat``, the two forms interleaved so load from other processes affects both
alike), with the default checks (hazard verifier and initialisation tracking on). The
``numpy`` column is the same arithmetic on in-memory arrays, as the floor.

    PYTHONPATH=. python benchmarks/bench_op_overhead.py [--iters 2000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

from pto_core import Machine, pto
from pto_core.program import program

N = 128      # f16 lanes of one vadd repeat


def _eager_vadd(m, iters, repeat):
    a, b, c = (m.ptr("ub", "f16", x) for x in (0, 0x10000, 0x20000))
    m.write(a, np.ones(255 * N, np.float16))
    m.write(b, np.ones(255 * N, np.float16))
    for _ in range(iters):
        pto.ub.vadd(c, a, b, repeat)
    return iters


def _prog_vadd(iters, repeat):
    with program("vadd_loop", target="A5") as k:
        a, b, c = (k.ptr("ub", "f16", x) for x in (0, 0x10000, 0x20000))
        o = k.gm_arg("o", "f16", (repeat * N,), io="out", init=1.0)
        pto.mte_gm_ub(o, a, 0, 2 * N * repeat, nburst=(1, 0, 0))     # initialise the sources
        pto.mte_gm_ub(o, b, 0, 2 * N * repeat, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        with k.for_(0, iters, dtype="s32"):
            pto.ub.vadd(c, a, b, repeat)
    return k.program


def _prog_vadd_rt(iters, repeat):
    """The vadd loop with its repeat count read from GM at run time (a dynamic kernel's tiling value)."""
    with program("vadd_rt_loop", target="A5") as k:
        a, b, c = (k.ptr("ub", "f16", x) for x in (0, 0x10000, 0x20000))
        o = k.gm_arg("o", "f16", (repeat * N,), io="out", init=1.0)
        t = k.gm_arg("tiling", "s32", (1,), io="workspace", init=repeat)
        pto.mte_gm_ub(o, a, 0, 2 * N * repeat, nburst=(1, 0, 0))     # initialise the sources
        pto.mte_gm_ub(o, b, 0, 2 * N * repeat, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        n = k.load(t, 0)
        with k.for_(0, iters, dtype="s32"):
            pto.ub.vadd(c, a, b, n)
    return k.program


def _eager_reduce(m, iters, op):
    a, w, c = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 0x10000), m.ptr("ub", "f16", 0x20000)
    m.write(a, np.ones(N, np.float16))
    for _ in range(iters):
        if op == "vcmax":
            pto.ub.vcmax(c, a, 1)
        else:
            pto.ub.reduce_min(c, a, w, 1, cal_index=True)
    return iters


def _prog_reduce(iters, op, run_time_dst):
    """A per-point loop of one reduction (chamfer_distance's ``vec_reduce_min(.., cal_index=True)`` form):
    1 repeat, the destination constant or one element pair per iteration (a run-time pointer)."""
    with program("reduce_loop", target="A5") as k:
        a, w, c = k.ptr("ub", "f16", 0), k.ptr("ub", "f16", 0x10000), k.ptr("ub", "f16", 0x20000)
        o = k.gm_arg("o", "f16", (N,), io="out", init=1.0)
        pto.mte_gm_ub(o, a, 0, 2 * N, nburst=(1, 0, 0))
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
        with k.for_(0, iters, dtype="s32") as i:
            d = c + (i % 1024) * 2 if run_time_dst else c
            if op == "vcmax":
                pto.ub.vcmax(d, a, 1)
            else:
                pto.ub.reduce_min(d, a, w, 1, cal_index=True)
    return k.program


def _eager_flags(m, iters):
    for _ in range(iters):
        pto.set_flag("MTE2", "V", 0)
        pto.wait_flag("MTE2", "V", 0)
    return 2 * iters


def _prog_flags(iters):
    with program("flag_loop", target="A5") as k:
        k.gm_arg("o", "f16", (N,), io="out")
        with k.for_(0, iters, dtype="s32"):
            pto.set_flag("MTE2", "V", 0)
            pto.wait_flag("MTE2", "V", 0)
    return k.program


def _eager_copy(m, iters):
    g = m.gm_tensor(np.ones(N, np.float16), name="g")
    u = m.ptr("ub", "f16", 0)
    for _ in range(iters):
        pto.mte_gm_ub(g, u, 0, 2 * N, nburst=(1, 0, 0))
    return iters


def _prog_copy(iters):
    with program("copy_loop", target="A5") as k:
        g = k.gm_arg("g", "f16", (N,), io="out", init=1.0)
        u = k.ptr("ub", "f16", 0)
        with k.for_(0, iters, dtype="s32"):
            pto.mte_gm_ub(g, u, 0, 2 * N, nburst=(1, 0, 0))
    return k.program


def _eager_mad(m, iters):
    l0a, l0b, l0c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    m.write(l0a, np.ones(256, np.float16))
    m.write(l0b, np.ones(256, np.float16))
    for _ in range(iters):
        pto.mad(l0a, l0b, l0c, 16, 16, 16)
    return iters


CASES = {
    # name: (eager fn(machine, iters) -> ops, program builder(iters) -> Program or None, ops per iteration,
    #        numpy floor per op)
    "vadd f16, 1 repeat": (lambda m, n: _eager_vadd(m, n, 1), lambda n: _prog_vadd(n, 1), 1,
                           lambda x, y: np.add(x[:N], y[:N])),
    "vadd f16, 8 repeats": (lambda m, n: _eager_vadd(m, n, 8), lambda n: _prog_vadd(n, 8), 1,
                            lambda x, y: np.add(x[:8 * N], y[:8 * N])),
    "vadd f16, 1 repeat from GM": (lambda m, n: _eager_vadd(m, n, 1), lambda n: _prog_vadd_rt(n, 1), 1,
                                   lambda x, y: np.add(x[:N], y[:N])),
    "vcmax f16, 1 repeat": (lambda m, n: _eager_reduce(m, n, "vcmax"), lambda n: _prog_reduce(n, "vcmax", False),
                            1, None),
    "vec_reduce_min cal_index, 1 repeat": (lambda m, n: _eager_reduce(m, n, "min"),
                                           lambda n: _prog_reduce(n, "min", False), 1, None),
    "vec_reduce_min cal_index, run-time dst": (lambda m, n: _eager_reduce(m, n, "min"),
                                               lambda n: _prog_reduce(n, "min", True), 1, None),
    "set_flag / wait_flag": (_eager_flags, _prog_flags, 2, None),
    "mte_gm_ub 256 B": (_eager_copy, _prog_copy, 1, lambda x, y: x[:N].copy()),
    "mad f16 16x16x16": (_eager_mad, None, 1, None),
}


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    x = np.ones(255 * N, np.float16)
    y = np.ones(255 * N, np.float16)
    rows = []
    for name, (eager, build, per_iter, floor) in CASES.items():
        n = args.iters
        exe = build(n).compile() if build is not None else None
        if exe is not None:
            exe.run({})
            if exe.reports:
                raise SystemExit(f"{name}: the benchmark kernel is not clean: {exe.reports[:2]}")
        t_eager = t_prog = float("inf")
        for _ in range(args.repeat):
            m = Machine("A5")
            t0 = time.process_time()
            ops = eager(m, n)
            t_eager = min(t_eager, (time.process_time() - t0) / ops)
            if exe is not None:
                t0 = time.process_time()
                exe.run({})
                t_prog = min(t_prog, (time.process_time() - t0) / (n * per_iter))
        t_np = _best(lambda: [floor(x, y) for _ in range(n)], args.repeat) / n if floor is not None else None
        rows.append((name, f"{t_eager * 1e6:.1f}", f"{t_prog * 1e6:.1f}" if exe is not None else "-",
                     f"{t_np * 1e6:.1f}" if t_np is not None else "-"))
    print(f"us per op (process CPU time, best of {args.repeat}, {args.iters} iterations, A5, default checks)")
    print(tabulate(rows, headers=("op", "eager", "in program", "numpy")))


if __name__ == "__main__":
    main()
