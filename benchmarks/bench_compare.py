"""Cost of ``tik-compare-fixpipe`` on a real kernel: the 1024 x 1024 x 1024 f16 matmul of
``bench_tik_cube.py`` (16 ``tik.fixpipe`` calls of 256 x 256, ``fp322fp16``, one execution each)
run by ``tikdb.start_debug`` plain, and again with every fixpipe call watched (interpreter probes
around each call, an L0C and destination snapshot, the legacy reference model, the element-wise
comparison). Printed as a ratio to the plain run, in one process (best of ``--repeat``), plus the
default and ``--full`` sweep times.

Run: ``PYTHONPATH=. python benchmarks/bench_compare.py [--repeat 3] [--size 1024] [--no-sweep]``.
"""
from __future__ import annotations

import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

import bench_tik_cube as cube  # noqa: E402
from tbe_compat.compare import watch_kernel  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-sweep", action="store_true")
    args = ap.parse_args()
    s = args.size
    rng = np.random.default_rng(0)
    A = rng.standard_normal((s, s)).astype(np.float16)
    B = rng.standard_normal((s, s)).astype(np.float16)
    feed = {"a_gm": cube.nz(A), "b_gm": cube.nz(B.T.copy())}
    plain = cube.build(s)
    plain.tikdb.start_debug(feed, interactive=False)
    t_plain = cube.best(lambda: plain.tikdb.start_debug(feed, interactive=False), args.repeat)
    watched = cube.build(s)
    watch = watch_kernel(watched)
    watched.tikdb.start_debug(feed, interactive=False)
    t_watch = cube.best(lambda: watched.tikdb.start_debug(feed, interactive=False), args.repeat)
    res = watch.comparisons()
    assert all(c.equal for c in res), [c.to_dict() for c in res if not c.equal]
    runs = sum(c.runs for c in res) // (args.repeat + 1)
    rows = [["start_debug", f"{t_plain * 1e3:.1f}", "1.00"],
            ["start_debug, every fixpipe compared", f"{t_watch * 1e3:.1f}", f"{t_watch / t_plain:.2f}"]]
    print(f"{s} x {s} x {s} f16 matmul, {len(res)} fixpipe call site(s), {runs} executions per run compared "
          f"(all bit-exact)")
    print(tabulate(rows, headers=["path", "ms (best of %d)" % args.repeat, "ratio"]))
    if not args.no_sweep:
        from tbe_compat.fixpipe_sweep import sweep
        out = []
        for full in (False, True):
            t = time.perf_counter()
            rows = sweep(full=full)
            out.append(["--sweep --full" if full else "--sweep", len(rows), f"{time.perf_counter() - t:.2f}"])
        print(tabulate(out, headers=["sweep", "comparisons", "s"]))


if __name__ == "__main__":
    main()
