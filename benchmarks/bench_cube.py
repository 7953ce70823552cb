"""Cube data path speed: the full path (GM -> L1 -> L0A/L0B moves + ``pto.mad``/``mad_acc``)
for an ``S x S x S`` f16 -> f32 matmul, as a ratio to numpy's own float32 matmul of the
same data (``np.matmul`` on the f32 copies; the conversion is not timed).

Run: ``PYTHONPATH=. python benchmarks/bench_cube.py [--target A2A3|A5] [--repeat 5]``.
Prints one table row per size; the time is the best of ``--repeat`` runs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from tabulate import tabulate

from pto_core import Machine, MachineOptions, layout, pto

#: output block (bm x bn) and K step per target: L0C holds bm*bn f32, L0A bm*bk f16, L0B bk*bn f16
BLOCKS = {"A2A3": (128, 256, 128), "A5": (256, 256, 128)}
K_CHUNK = 512          # K columns staged in L1 per GM load


def cube_matmul(m: Machine, ga, gb, s: int, blocks) -> list:
    """Tiled S x S x S matmul through the cube data path; returns the L0C pointers' results per block."""
    bm, bn, bk = (min(v, s) for v in blocks)
    kc = min(K_CHUNK, s)
    l1a = m.ptr("l1", "f16", 0)
    l1b = m.ptr("l1", "f16", bm * kc * 2)
    l0a = m.ptr("l0a", "f16", 0)
    l0b = m.ptr("l0b", "f16", 0)
    l0c = m.ptr("l0c", "f32", 0)
    out = []
    for i in range(0, s, bm):
        for j in range(0, s, bn):
            first = True
            for k0 in range(0, s, kc):
                # A[i:i+bm, k0:k0+kc] -> L1 Nz (bm rows); B[k0:k0+kc, j:j+bn] -> L1 as B^T Nz (bn rows)
                pto.mte_gm_l1_frac(ga + (i * s + k0), l1a, nd2nz=True, shape=(bm, kc), src_layout=(s * 2,),
                                   dst_group=(1, 1, bm, 0), ctrl=(0, False))
                pto.mte_gm_l1_frac(gb + (k0 * s + j), l1b, dn2nz=True, shape=(bn, kc), src_layout=(s * 2,),
                                   dst_group=(1, 1, bn, 0), ctrl=(0, False))
                for kk in range(0, kc, bk):
                    pto.mte_l1_l0a(l1a, l0a, bm, bk, 0, kk)
                    pto.mte_l1_l0b(l1b, l0b, bk, bn, 0, kk)
                    if first:
                        pto.mad(l0a, l0b, l0c, bm, bn, bk)
                        first = False
                    else:
                        pto.mad_acc(l0a, l0b, l0c, bm, bn, bk)
            out.append(((i, j), m.read(l0c, (bm * bn,))))
    return out


def run(target: str, s: int, repeat: int):
    rng = np.random.default_rng(s)
    a = rng.standard_normal((s, s)).astype(np.float16)
    b = rng.standard_normal((s, s)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    m = Machine(target, options=MachineOptions(check_hazards=False))
    ga = m.gm_tensor(a, name="a")
    gb = m.gm_tensor(b, name="b")
    blocks = BLOCKS[target]
    t_np = t_sim = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        ref = np.matmul(a32, b32)
        t_np = min(t_np, time.perf_counter() - t0)
        t0 = time.perf_counter()
        res = cube_matmul(m, ga, gb, s, blocks)
        t_sim = min(t_sim, time.perf_counter() - t0)
    bm, bn, _ = (min(v, s) for v in blocks)
    c = np.empty((s, s), np.float32)
    for (i, j), raw in res:
        c[i:i + bm, j:j + bn] = layout.unpack(raw, "Nz", bm, bn, "f32", fractal=1024)
    err = float(np.max(np.abs(c - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    return t_sim, t_np, err


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", default="A2A3", choices=sorted(BLOCKS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--sizes", type=int, nargs="*", default=[128, 512, 1024])
    args = p.parse_args(argv)
    rows = []
    for s in args.sizes:
        t_sim, t_np, err = run(args.target, s, args.repeat)
        rows.append((f"{s}x{s}x{s}", f"{t_sim * 1e3:.2f}", f"{t_np * 1e3:.2f}", f"{t_sim / t_np:.2f}", f"{err:.1e}"))
    print(f"cube full path (mte_gm_l1_frac + mte_l1_l0a/b + mad/mad_acc), f16 -> f32, target {args.target}, "
          f"blocks (bm, bn, bk) = {BLOCKS[args.target]}")
    print(tabulate(rows, headers=("M=N=K", "sim ms", "numpy f32 ms", "ratio", "max rel err"), tablefmt="github"))


if __name__ == "__main__":
    main()
