"""Interpreter speed: a 10**6-iteration scalar loop (register add, compare, if) run by the
interpreter, divided by the same loop in plain Python. Target: ratio <= 3.

    PYTHONPATH=. python benchmarks/bench_interpreter.py [--n 1000000] [--repeat 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

from pto_core.program import program


def build(n: int):
    with program("scalar_loop", target="A2A3") as k:
        out = k.gm_arg("out", "s32", (2,), io="out")
        acc = k.reg("s32", 0, name="acc")
        wraps = k.reg("s32", 0, name="wraps")
        with k.for_(0, n, dtype="s32") as i:
            acc.set(acc + i)
            with k.if_(acc > 1000000):
                acc.set(acc - 1000000)
                wraps.set(wraps + 1)
        k.store(out, 0, acc)
        k.store(out, 1, wraps)
    return k.program


def plain(n: int):
    acc = 0
    wraps = 0
    for i in range(0, n):
        acc = acc + i
        if acc > 1000000:
            acc = acc - 1000000
            wraps = wraps + 1
    return acc, wraps


def best_pair(fa, fb, repeat: int) -> tuple:
    """Best (minimum) process CPU time of ``fa`` and ``fb``, measured alternately so that load on a
    shared machine affects both alike."""
    ta, tb = [], []
    for _ in range(repeat):
        for fn, out in ((fa, ta), (fb, tb)):
            t0 = time.process_time()
            fn()
            out.append(time.process_time() - t0)
    return min(ta), min(tb)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10 ** 6)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    prog = build(args.n)
    t0 = time.perf_counter()
    exe = prog.compile()
    t_compile = time.perf_counter() - t0
    result = {}

    def run_interp():
        result["out"] = exe.run({})["out"]

    t_interp, t_plain = best_pair(run_interp, lambda: plain(args.n), args.repeat)
    want = np.array(plain(args.n), dtype=np.int32)
    if not np.array_equal(result["out"], want):
        raise SystemExit(f"interpreter result {result['out']} != plain Python {want}")
    rows = [["plain Python", f"{t_plain * 1e3:.1f}", "1.00"],
            ["interpreter (run)", f"{t_interp * 1e3:.1f}", f"{t_interp / t_plain:.2f}"],
            ["compile (once)", f"{t_compile * 1e3:.2f}", ""]]
    print(f"scalar loop, n = {args.n}, best of {args.repeat} (process CPU time)")
    print(tabulate(rows, headers=["", "ms", "ratio"]))
    print(f"ratio interpreter / plain Python = {t_interp / t_plain:.2f} (target <= 3)")


if __name__ == "__main__":
    main()
