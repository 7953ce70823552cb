"""Per-op cost of the pto.ub.* vector ops against plain numpy on the same elements.

Run: ``PYTHONPATH=. python benchmarks/vector_overhead.py [loops]``. Prints one table of
ratios (simulated op time / numpy time, same process, best of 5 runs). The target in the
brief: ``pto.ub.vadd`` with 255 repeats of f16 at most 4x ``numpy.add`` of 255x128 f16.
Eager calls go through the full dispatcher (argument checks, provenance, verify).
"""
import sys
import timeit

import numpy as np
from tabulate import tabulate

from pto_core import Machine, pto


def best(fn, loops):
    return min(timeit.repeat(fn, number=loops, repeat=5)) / loops


def main(loops=1000):
    m = Machine("A5")
    a, b, c = (m.ptr("ub", "f16", x) for x in (0, 0x10000, 0x20000))
    rng = np.random.default_rng(0)
    x = rng.standard_normal(255 * 128).astype(np.float16)
    y = rng.standard_normal(255 * 128).astype(np.float16)
    m.write(a, x)
    m.write(b, y)
    xf = x[:64 * 255].astype(np.float32)
    f32 = m.ptr("ub", "f32", 0x30000)
    m.write(f32, xf)
    rows = []

    def row(name, sim, ref, note=""):
        ts, tr = best(sim, loops), best(ref, loops)
        rows.append((name, f"{ts * 1e6:.1f}", f"{tr * 1e6:.1f}", f"{ts / tr:.2f}", note))

    row("vadd f16, 255 repeats", lambda: pto.ub.vadd(c, a, b, 255), lambda: np.add(x, y),
        "target <= 4x")
    row("vadd f16, 1 repeat", lambda: pto.ub.vadd(c, a, b, 1), lambda: np.add(x[:128], y[:128]),
        "per-op overhead")
    row("vadd f16, 255 rep, mask bits", lambda: pto.ub.vadd(c, a, b, 255, mask=(0x5555, 2 ** 63)),
        lambda: np.add(x, y))
    row("vadd f16, 255 rep, blk stride 2", lambda: pto.ub.vadd(c, a, b, 127, blk_stride=(1, 2, 1),
                                                              rep_stride=(8, 16, 8)),
        lambda: np.add(x[:127 * 128], y[:127 * 128]))
    row("vadd in place (dst == src0)", lambda: pto.ub.vadd(a, a, b, 255), lambda: np.add(x, y))
    row("vadd accumulate, rep stride 0", lambda: pto.ub.vadd(c, a, c, 64, rep_stride=(0, 8, 0)),
        lambda: np.add(x[:64 * 128], y[:64 * 128]), "64 ordered chunks")
    row("vconv f32->f16, 255 rep", lambda: pto.ub.vconv(c, f32, 255), lambda: xf.astype(np.float16))
    row("vcadd f16, 255 rep", lambda: pto.ub.vcadd(c, a, 255), lambda: x.reshape(255, 128).sum(axis=1))
    row("vector_dup f16, 255 rep", lambda: pto.ub.vector_dup(c, 1.5, 255), lambda: np.full(255 * 128, 1.5,
                                                                                        np.float16))
    print(tabulate(rows, headers=("op", "sim us", "numpy us", "ratio", "note")))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
