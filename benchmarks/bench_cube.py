"""Cube data path speed: the full path (GM -> L1 -> L0A/L0B moves + ``pto.mad``/``mad_acc``) of an
``S x S x S`` f16 -> f32 matmul, as a ratio to numpy's own float32 matmul of the same data
(``np.matmul`` of the f32 copies; the f16 -> f32 conversion is not timed).

Paths (one table row each per size):

* ``tiled``: a real kernel for the target's buffer sizes: output blocks of ``bm x bn`` in
  L0C, K in ``bk`` steps through L0A/L0B, A and B staged in L1 in 512-column chunks
  (``mte_gm_l1_frac`` nd2nz for A, dn2nz for B so B^T is Nz), ``mte_l1_l0a``/``mte_l1_l0b``
  shape forms, ``mad`` then ``mad_acc``. Timed with the default checks (initialisation
  tracking) and with all checks off.
* ``reference``: the tiled kernel's arithmetic alone, one numpy f32 GEMM per ``mad``
  (the floor any tile-by-tile execution pays for the target's buffer sizes).
* ``single``: the same path as one tile per op (two GM loads, two L0 loads, one ``mad``) on
  a *synthetic* profile derived from A5 whose L1/L0 buffers are enlarged to hold the whole
  problem; it measures the per-element cost of the path, not a kernel a chip can run.

Run: ``PYTHONPATH=. python benchmarks/bench_cube.py [--target A5|A2A3] [--repeat 5] [--sizes ...]
[--blas-threads N] [--clock cpu|wall]``. Each time is the best of ``--repeat`` runs, numpy and
simulator runs alternating, so load from other processes affects both alike. On a shared or
loaded machine multi-threaded BLAS timings of small GEMMs are erratic; ``--blas-threads 1``
(set before numpy loads) gives stable ratios for both sides, and with one BLAS thread the
default clock is the process CPU time (``--clock cpu``: time the process was descheduled
does not count); with several BLAS threads it is wall time (CPU time would add up the
threads). Reading noisy numbers: compare ratios from one run, not times across runs (the
same code varies by +-30% between runs on the shared 2-core machine).
"""
from __future__ import annotations

import os
import sys

if "--blas-threads" in sys.argv:          # must happen before numpy is imported
    _n = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _n

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

from pto_core import Machine, MachineOptions, get_target, layout, pto  # noqa: E402

#: output block (bm x bn) and K step per target: L0C holds bm*bn f32, L0A bm*bk f16, L0B bk*bn f16
BLOCKS = {"A2A3": (128, 256, 128), "A5": (256, 256, 128)}
K_CHUNK = 512          # K columns of A and B staged in L1 per GM load


def handoff(src: str, dst: str) -> None:
    """Producer/consumer edge between two pipes (set_flag + wait_flag on event 0)."""
    pto.set_flag(src, dst, 0)
    pto.wait_flag(src, dst, 0)


def tiled(m: Machine, ga, gb, s: int, blocks) -> list:
    """Tiled S x S x S matmul through the cube data path; returns ``((i, j), L0C bytes)`` per output block.

    Synchronised like a real single-buffered kernel: MTE2 -> MTE1 after the GM loads, MTE1 -> M
    after the L0 loads, and the reverse edges before a stage overwrites what the next one reads.
    """
    bm, bn, bk = (min(v, s) for v in blocks)
    kc = min(K_CHUNK, s)
    l1a = m.ptr("l1", "f16", 0)
    l1b = m.ptr("l1", "f16", bm * kc * 2)
    l0a, l0b, l0c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    out = []
    for i in range(0, s, bm):
        for j in range(0, s, bn):
            first = True
            for k0 in range(0, s, kc):
                handoff("MTE1", "MTE2")         # L1 is free again once MTE1 has read it
                pto.mte_gm_l1_frac(ga + (i * s + k0), l1a, nd2nz=True, shape=(bm, kc), src_layout=(s * 2,),
                                   dst_group=(1, 1, bm, 0), ctrl=(0, False))
                pto.mte_gm_l1_frac(gb + (k0 * s + j), l1b, dn2nz=True, shape=(bn, kc), src_layout=(s * 2,),
                                   dst_group=(1, 1, bn, 0), ctrl=(0, False))
                handoff("MTE2", "MTE1")
                for kk in range(0, kc, bk):
                    handoff("M", "MTE1")         # L0A/L0B are free again once the mad has read them
                    pto.mte_l1_l0a(l1a, l0a, bm, bk, 0, kk)
                    pto.mte_l1_l0b(l1b, l0b, bk, bn, 0, kk)
                    handoff("MTE1", "M")
                    (pto.mad if first else pto.mad_acc)(l0a, l0b, l0c, bm, bn, bk)
                    first = False
            out.append(((i, j), m.read(l0c, (bm * bn,))))
    return out


def single(m: Machine, ga, gb, s: int, _blocks=None) -> list:
    l1a, l1b = m.ptr("l1", "f16", 0), m.ptr("l1", "f16", s * s * 2)
    l0a, l0b, l0c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)
    pto.mte_gm_l1_frac(ga, l1a, nd2nz=True, shape=(s, s), src_layout=(s * 2,), dst_group=(1, 1, s, 0), ctrl=(0, False))
    pto.mte_gm_l1_frac(gb, l1b, dn2nz=True, shape=(s, s), src_layout=(s * 2,), dst_group=(1, 1, s, 0), ctrl=(0, False))
    handoff("MTE2", "MTE1")
    pto.mte_l1_l0a(l1a, l0a, s, s)
    pto.mte_l1_l0b(l1b, l0b, s, s)
    handoff("MTE1", "M")
    pto.mad(l0a, l0b, l0c, s, s, s)
    return [((0, 0), m.read(l0c, (s * s,)))]


def numpy_tiled(a32: np.ndarray, b32: np.ndarray, s: int, blocks) -> np.ndarray:
    """The tiled kernel's arithmetic alone in numpy (same blocks, f32 GEMM per mad, no simulation)."""
    bm, bn, bk = (min(v, s) for v in blocks)
    c = np.empty((s, s), np.float32)
    for i in range(0, s, bm):
        for j in range(0, s, bn):
            acc = np.matmul(a32[i:i + bm, :bk], b32[:bk, j:j + bn])
            for k0 in range(bk, s, bk):
                acc += np.matmul(a32[i:i + bm, k0:k0 + bk], b32[k0:k0 + bk, j:j + bn])
            c[i:i + bm, j:j + bn] = acc
    return c


def wide_profile(s: int):
    """A5 with L1/L0 buffers large enough for one s x s x s f16 tile (synthetic; no such chip exists)."""
    a5 = get_target("A5")
    sizes = dataclasses.replace(a5.sizes, l1=max(a5.sizes.l1, 4 * s * s), l0a=max(a5.sizes.l0a, 2 * s * s),
                                l0b=max(a5.sizes.l0b, 2 * s * s), l0c=max(a5.sizes.l0c, 4 * s * s))
    return dataclasses.replace(a5, name="A5-wide (synthetic)", aliases=(), sizes=sizes)


CLOCK = time.perf_counter     # set by main(): time.process_time with one BLAS thread (see module doc)


def measure(target, path, s: int, repeat: int, options: MachineOptions):
    rng = np.random.default_rng(s)
    a = rng.standard_normal((s, s)).astype(np.float16)
    b = rng.standard_normal((s, s)).astype(np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    m = Machine(target, options=options)
    ga, gb = m.gm_tensor(a, name="a"), m.gm_tensor(b, name="b")
    blocks = BLOCKS.get(getattr(target, "name", target), (s, s, s))
    t_np = t_sim = float("inf")
    for _ in range(repeat):
        t0 = CLOCK()
        ref = np.matmul(a32, b32)
        t_np = min(t_np, CLOCK() - t0)
        t0 = CLOCK()
        res = path(m, ga, gb, s, blocks)
        t_sim = min(t_sim, CLOCK() - t0)
    bm, bn = (s, s) if path is single else (min(blocks[0], s), min(blocks[1], s))
    c = np.empty((s, s), np.float32)
    for (i, j), raw in res:
        c[i:i + bm, j:j + bn] = layout.unpack(raw, "Nz", bm, bn, "f32", fractal=1024)
    err = float(np.max(np.abs(c - ref)) / max(1.0, float(np.max(np.abs(ref)))))
    return t_sim, t_np, err


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", default="A5", choices=sorted(BLOCKS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--sizes", type=int, nargs="*", default=[128, 512, 1024])
    p.add_argument("--blas-threads", type=int, default=None, help="BLAS threads for both sides (default: BLAS's own)")
    p.add_argument("--clock", choices=("cpu", "wall"), default=None,
                   help="cpu: process CPU time (default with --blas-threads 1); wall: elapsed time (default otherwise)")
    args = p.parse_args(argv)
    global CLOCK
    clock = args.clock or ("cpu" if args.blas_threads == 1 else "wall")
    CLOCK = time.process_time if clock == "cpu" else time.perf_counter
    default = MachineOptions()
    off = MachineOptions(check_hazards=False, uninitialized="off")
    rows = []
    for s in args.sizes:
        a32 = np.random.default_rng(s).standard_normal((s, s)).astype(np.float16).astype(np.float32)
        t_tn = t_np = float("inf")
        for _ in range(args.repeat):
            t0 = CLOCK()
            np.matmul(a32, a32)
            t_np = min(t_np, CLOCK() - t0)
            t0 = CLOCK()
            numpy_tiled(a32, a32, s, BLOCKS[args.target])
            t_tn = min(t_tn, CLOCK() - t0)
        rows.append((f"{s}", f"reference: numpy f32 GEMM per {args.target} tile (no simulation)", f"{t_tn * 1e3:.2f}",
                     f"{t_np * 1e3:.2f}", f"{t_tn / t_np:.2f}", "-"))
        for label, target, path, opts in ((f"tiled {args.target}, default checks", args.target, tiled, default),
                                          (f"tiled {args.target}, checks off", args.target, tiled, off),
                                          ("single tile, A5-wide (synthetic), checks off", wide_profile(s), single,
                                           off)):
            t_sim, t_np, err = measure(target, path, s, args.repeat, opts)
            rows.append((f"{s}", label, f"{t_sim * 1e3:.2f}", f"{t_np * 1e3:.2f}", f"{t_sim / t_np:.2f}",
                         f"{err:.1e}"))
    bm, bn, bk = BLOCKS[args.target]
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"cube full path (mte_gm_l1_frac + mte_l1_l0a/b + mad/mad_acc), f16 -> f32; tiled blocks bm={bm} bn={bn} "
          f"bk={bk}, K chunk {K_CHUNK}; BLAS threads: {threads}; clock: {clock}")
    print(tabulate(rows, headers=("M=N=K", "path", "sim ms", "numpy f32 ms", "ratio", "max rel err"),
                   tablefmt="github"))


if __name__ == "__main__":
    main()
