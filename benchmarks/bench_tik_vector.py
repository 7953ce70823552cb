"""TIK vector speed: a TIK kernel whose ``for_range(0, 1000)`` body calls ``vec_add`` with 255
repeats on f16 UB data, timed through ``tikdb.start_debug``, divided by numpy adding the same
255x128 f16 elements 1000 times. Target: ratio <= 4.

    PYTHONPATH=. python benchmarks/bench_tik_vector.py [--loops 1000] [--repeat 5]

Both sides are timed alternately (process CPU time, best of ``--repeat``), so load on a
shared machine affects both alike. The TIK side includes everything ``start_debug`` does
(feed checks, machine set-up, the one-time compile, GM -> UB moves, the hazard and
initialisation checkers, the copy-out); a second table row shows a kernel with an empty
loop body, i.e. that fixed cost.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

import tbe_compat.aliases

tbe_compat.aliases.install()
from tbe import tik  # noqa: E402

REPEAT = 255
LANES = 128
N = REPEAT * LANES


def build(loops: int, body: bool = True):
    ti = tik.Tik()
    x = ti.Tensor("float16", (N,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (N,), name="y", scope=tik.scope_gm)
    z = ti.Tensor("float16", (N,), name="z", scope=tik.scope_gm)
    a = ti.Tensor("float16", (N,), name="a", scope=tik.scope_ubuf)
    b = ti.Tensor("float16", (N,), name="b", scope=tik.scope_ubuf)
    c = ti.Tensor("float16", (N,), name="c", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, N // 16, 0, 0)
    ti.data_move(b, y, 0, 1, N // 16, 0, 0)
    ti.vec_dup(LANES, c, 0.0, REPEAT, 8)
    with ti.for_range(0, loops):
        if body:
            ti.vec_add(LANES, c, a, b, REPEAT, 8, 8, 8)
    ti.data_move(z, c, 0, 1, N // 16, 0, 0)
    ti.BuildCCE(kernel_name="bench_vec_add", inputs=[x, y], outputs=[z])
    return ti


def best_pair(fa, fb, repeat: int) -> tuple:
    ta, tb = [], []
    for _ in range(repeat):
        for fn, out in ((fa, ta), (fb, tb)):
            t0 = time.process_time()
            fn()
            out.append(time.process_time() - t0)
    return min(ta), min(tb)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loops", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(N).astype(np.float16)
    ys = rng.standard_normal(N).astype(np.float16)
    feed = {"x": xs, "y": ys}
    kernel = build(args.loops)
    empty = build(args.loops, body=False)
    out, = kernel.tikdb.start_debug(feed, interactive=False)
    if not np.array_equal(out, xs + ys):
        raise SystemExit("bench_tik_vector: the TIK kernel computed a wrong result")

    def tik_run():
        kernel.tikdb.start_debug(feed, interactive=False)

    def tik_empty():
        empty.tikdb.start_debug(feed, interactive=False)

    def numpy_run():
        acc = np.empty(N, np.float16)
        for _ in range(args.loops):
            np.add(xs, ys, out=acc)

    t_tik, t_np = best_pair(tik_run, numpy_run, args.repeat)
    t_empty, _ = best_pair(tik_empty, lambda: None, args.repeat)
    rows = [("TIK vec_add 255 rep f16 x %d (start_debug)" % args.loops, f"{t_tik * 1e3:.1f}", f"{t_np * 1e3:.1f}",
             f"{t_tik / t_np:.2f}", "<= 4"),
            ("  of which fixed cost (empty loop body)", f"{t_empty * 1e3:.1f}", "", f"{t_empty / t_np:.2f}", "")]
    print(tabulate(rows, headers=("case", "sim ms", "numpy ms", "ratio", "target")))
    return t_tik / t_np


if __name__ == "__main__":
    main()
