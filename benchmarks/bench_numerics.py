"""Throughput of pto_core.numerics conversions, as ratios against numpy/ml_dtypes casts.

Run: ``PYTHONPATH=. python benchmarks/bench_numerics.py [n]`` (default n = 1_000_000 f32 values).
Prints one table; the ratio is (our time) / (the plain cast's time) on the same input.
"""
import sys
import time

import ml_dtypes
import numpy as np
from tabulate import tabulate

from pto_core.numerics import float_to, float_to_int, hif8_encode, to_f32


def best_of(fn, repeat=5):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(n=1_000_000):
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32) * 100
    casts = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
             "e5m2": ml_dtypes.float8_e5m2}
    rows = []
    for name, cast in casts.items():
        base = best_of(lambda: x.astype(cast))
        for mode, sat in (("even", "nosat"), ("even", "sat"), ("zero", "nosat"), ("away", "sat")):
            t = best_of(lambda: float_to(x, name, rounding=mode, sat=sat))
            rows.append([f"f32 -> {name}", mode, sat, f"{t * 1e3:.1f}", f"{base * 1e3:.1f}", f"{t / base:.1f}x"])
    base = best_of(lambda: x.astype(np.float16))
    for mode in ("away", "hybrid"):
        t = best_of(lambda: hif8_encode(x, rounding=mode))
        rows.append(["f32 -> hif8", mode, "nosat", f"{t * 1e3:.1f}", f"{base * 1e3:.1f} (f16 cast)", f"{t / base:.1f}x"])
    base = best_of(lambda: np.clip(np.rint(x), -128, 127).astype(np.int8))
    t = best_of(lambda: float_to_int(x, "s8"))
    rows.append(["f32 -> s8", "even", "saturate", f"{t * 1e3:.1f}", f"{base * 1e3:.1f} (rint+clip)", f"{t / base:.1f}x"])
    h = x.astype(np.float16)
    base = best_of(lambda: h.astype(np.float32))
    t = best_of(lambda: to_f32(h, "f16"))
    rows.append(["f16 -> f32 decode", "-", "-", f"{t * 1e3:.1f}", f"{base * 1e3:.1f}", f"{t / base:.1f}x"])
    print(f"n = {n} float32 values")
    print(tabulate(rows, headers=["conversion", "rounding", "sat", "ours ms", "cast ms", "ratio"]))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
