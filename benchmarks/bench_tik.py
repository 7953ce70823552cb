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


def blocks_of(moves: int) -> int:
    """Blocks of 16 halves the kernel copies: 64, or fewer when there are fewer move pairs (so every
    output element is written and the output equals the input)."""
    return max(1, min(moves // 2, 64))


def trace(moves: int):
    n = blocks_of(moves)
    ti = tik.Tik()
    x = ti.Tensor("float16", (16 * n,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (16 * n,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (16 * n,), name="ub", scope=tik.scope_ubuf)
    for r in range(moves // 2):
        i = r % n
        ti.data_move(ub[i * 16], x[i * 16], 0, 1, 1, 0, 0)
        ti.data_move(y[i * 16], ub[i * 16], 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="bench", inputs=[x], outputs=[y])
    return ti


def numpy_loop(x: np.ndarray, moves: int) -> np.ndarray:
    ub, y = np.empty_like(x), np.empty_like(x)
    for r in range(moves // 2):
        i = r % blocks_of(moves)
        ub[i * 16:i * 16 + 16] = x[i * 16:i * 16 + 16]
        y[i * 16:i * 16 + 16] = ub[i * 16:i * 16 + 16]
    return y


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--moves", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.moves < 2:
        ap.error(f"--moves {a.moves}: at least 2 (a move into UB and one out)")
    x = np.arange(16 * blocks_of(a.moves), dtype=np.float16)
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
