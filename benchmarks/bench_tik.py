"""TIK facade cost: tracing (per TIK call), compiling (once) and running a kernel of many
small data_moves (per PTO op, including the inserted sync ops and the hazard verifier),
against copying the same bytes with numpy slices in a Python loop.

    PYTHONPATH=.:tbe_compat/aliases python benchmarks/bench_tik.py [--moves 2000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

import tbe_compat.aliases

tbe_compat.aliases.install()
from tbe import tik  # noqa: E402


def trace(moves: int):
    ti = tik.Tik()
    x = ti.Tensor("float16", (16 * 64,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16 * 64,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16 * 64,), name="ub", scope=tik.scope_ubuf)
    for r in range(moves // 2):
        i = r % 64
        ti.data_move(ub[i * 16], x[i * 16], 0, 1, 1, 0, 0)
        ti.data_move(y[i * 16], ub[i * 16], 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="bench", inputs=[x], outputs=[y])
    return ti


def numpy_loop(x: np.ndarray, moves: int) -> np.ndarray:
    ub, y = np.empty_like(x), np.empty_like(x)
    for r in range(moves // 2):
        i = r % 64
        ub[i * 16:i * 16 + 16] = x[i * 16:i * 16 + 16]
        y[i * 16:i * 16 + 16] = ub[i * 16:i * 16 + 16]
    return y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    x = np.arange(1024, dtype=np.float16)
    best = {}
    for _ in range(a.repeat):
        t0 = time.process_time()
        ti = trace(a.moves)
        t1 = time.process_time()
        ti.program.compile()
        t2 = time.process_time()
        out, = ti.tikdb.start_debug({"x": x}, False)
        t3 = time.process_time()
        numpy_loop(x, a.moves)
        t4 = time.process_time()
        for k, v in (("trace", t1 - t0), ("compile", t2 - t1), ("run", t3 - t2), ("numpy", t4 - t3)):
            best[k] = min(best.get(k, v), v)
        assert np.array_equal(out, x)
    ops = sum(1 for line in ti.program.to_asm().splitlines() if line.strip().startswith("pto.")
              and not line.strip().startswith(("pto.castptr", "pto.addptr")))
    rows = [["trace", f"{best['trace'] * 1e6 / a.moves:.0f} us per TIK call"],
            ["compile (once)", f"{best['compile'] * 1e3:.0f} ms for {ops} PTO ops"],
            ["run", f"{best['run'] * 1e6 / ops:.0f} us per PTO op (incl. sync ops, hazard verifier)"],
            ["run / numpy loop", f"{best['run'] / max(best['numpy'], 1e-9):.0f}x"]]
    print(tabulate(rows, headers=["phase", f"{a.moves} data_moves, best of {a.repeat} (process CPU time)"]))


if __name__ == "__main__":
    main()
