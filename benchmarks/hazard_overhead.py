"""Cost of the pipe hazard verifier: the same long op sequences with ``check_hazards`` on and off.

Run from the repository root::

    PYTHONPATH=. python benchmarks/hazard_overhead.py [--iters N]

Kernels (eager dispatch, one core, copy ops registered here, one per pipe):

* ``ping-pong``: MTE2 -> V -> MTE3 over two UB buffer pairs with 8 event ids, primed
  and drained (per iteration 3 data ops + 4 set_flag + 4 wait_flag);
* ``cube chain``: MTE2 -> MTE1 -> M -> FIX with one flag pair per edge;
* ``same pipe``: back-to-back V ops on overlapping UB (fast path: no sync needed).

Each at 256 B and 32 KiB tiles. Printed: best-of-N process CPU microseconds per op
(CPU time, so other jobs on a shared machine distort it less; runs interleaved) with
the verifier off and on, their difference, and
the ratio on/off (whole eager op, dispatch included; sync ops count as ops).
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

from pto_core import Machine, MachineOptions, pto
from pto_core.ops.registry import OPS, Operand, OpSpec, register

ANY = ("gm", "l1", "l0a", "l0b", "l0c", "ub")


def _copy(ctx, src, dst, nbytes):
    ctx.write(dst, nbytes, operand="dst")[:] = ctx.read(src, nbytes, operand="src")


for _pipe in ("MTE2", "MTE1", "M", "FIX", "V", "MTE3"):
    _name = f"bench_copy_{_pipe.lower()}"
    if _name not in OPS:
        register(OpSpec(_name, "bench", _pipe, (Operand("src", "ptr", ANY), Operand("dst", "ptr", ANY),
                                                Operand("nbytes", "int")), _copy, doc="benchmark copy"))


def ping_pong(m, iters, tile):
    src = m.gm_tensor(np.zeros(tile * 2, np.uint8), name="src")
    dst = m.gm_alloc((tile * 2,), "u8", name="dst")
    ub_in = [m.ptr("ub", "u8", 0), m.ptr("ub", "u8", tile)]
    ub_out = [m.ptr("ub", "u8", 2 * tile), m.ptr("ub", "u8", 3 * tile)]
    for k in (0, 1):
        pto.set_flag("V", "MTE2", 2 + k)
        pto.set_flag("MTE3", "V", 6 + k)
    for i in range(iters):
        k = i % 2
        pto.wait_flag("V", "MTE2", 2 + k)
        pto.bench_copy_mte2(src + k * tile, ub_in[k], tile)
        pto.set_flag("MTE2", "V", k)
        pto.wait_flag("MTE2", "V", k)
        pto.wait_flag("MTE3", "V", 6 + k)
        pto.bench_copy_v(ub_in[k], ub_out[k], tile)
        pto.set_flag("V", "MTE2", 2 + k)
        pto.set_flag("V", "MTE3", 4 + k)
        pto.wait_flag("V", "MTE3", 4 + k)
        pto.bench_copy_mte3(ub_out[k], dst + k * tile, tile)
        pto.set_flag("MTE3", "V", 6 + k)
    for k in (0, 1):
        pto.wait_flag("V", "MTE2", 2 + k)
        pto.wait_flag("MTE3", "V", 6 + k)
    return iters * 11 + 8


def cube_chain(m, iters, tile):
    a = m.gm_tensor(np.zeros(tile, np.uint8), name="a")
    c = m.gm_alloc((tile,), "u8", name="c")
    l1, l0a, l0c = m.ptr("l1", "u8", 0), m.ptr("l0a", "u8", 0), m.ptr("l0c", "u8", 0)
    for _ in range(iters):
        pto.bench_copy_mte2(a, l1, tile)
        pto.set_flag("MTE2", "MTE1", 0)
        pto.wait_flag("MTE2", "MTE1", 0)
        pto.bench_copy_mte1(l1, l0a, tile)
        pto.set_flag("MTE1", "M", 0)
        pto.wait_flag("MTE1", "M", 0)
        pto.bench_copy_m(l0a, l0c, tile)
        pto.set_flag("M", "FIX", 0)
        pto.wait_flag("M", "FIX", 0)
        pto.bench_copy_fix(l0c, c, tile)
        pto.set_flag("FIX", "MTE2", 0)      # reverse edges so the next iteration may overwrite
        pto.wait_flag("FIX", "MTE2", 0)
        pto.set_flag("M", "MTE1", 0)
        pto.wait_flag("M", "MTE1", 0)
        pto.set_flag("FIX", "M", 0)
        pto.wait_flag("FIX", "M", 0)
    return iters * 16


def same_pipe(m, iters, tile):
    x, y = m.ptr("ub", "u8", 0), m.ptr("ub", "u8", tile)
    m.write(x, np.zeros(tile, np.uint8))
    for _ in range(iters):
        pto.bench_copy_v(x, y, tile)
        pto.bench_copy_v(y, x, tile)
    return iters * 2


def timed(kernel, iters, tile, repeats):
    """Best-of-``repeats`` microseconds per op with the verifier off and on (runs interleaved)."""
    best = {False: float("inf"), True: float("inf")}
    nops = 0
    for _ in range(repeats):
        for check in (False, True):
            m = Machine("A2A3", options=MachineOptions(check_hazards=check))
            t0 = time.process_time()
            nops = kernel(m, iters, tile)
            best[check] = min(best[check], time.process_time() - t0)
            if m.end_kernel():
                raise RuntimeError(f"{kernel.__name__} left flags set")
    return best[False] / nops * 1e6, best[True] / nops * 1e6, nops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for kernel in (ping_pong, cube_chain, same_pipe):
        for tile in (256, 32 * 1024):
            off, on, nops = timed(kernel, args.iters, tile, args.repeats)
            rows.append((kernel.__name__.replace("_", " "), tile, nops, f"{off:.1f}", f"{on:.1f}",
                         f"{on - off:.1f}", f"{on / off:.2f}"))
    print(tabulate(rows, headers=("kernel", "tile B", "ops", "us/op off", "us/op on", "verifier us/op",
                                  "on/off")))


if __name__ == "__main__":
    main()
