"""TIK cube speed: a 1024 x 1024 x 1024 f16 matmul written as a TIK kernel (GM -> L1 in K chunks,
``tik.matmul`` into a 256 x 256 L0C block, ``tik.fixpipe`` with ``fp322fp16`` to GM), timed end to
end from ``tikdb.start_debug`` (the program compiles on the first call; best of ``--repeat``
calls with the compiled program, plus the first call separately), divided by numpy doing the
same arithmetic:

* ``numpy matmul + cast``: ``(A32 @ B32).astype(float16)`` on float32 copies made beforehand
  (the f16 -> f32 input conversion is not timed): the ratio the target (<= 2) refers to;
* ``numpy casts + matmul + cast``: the same including ``A.astype(float32)`` and
  ``B.astype(float32)``, which the simulator has to do as well (it decodes every f16 tile);
* ``the kernel's tiled data flow alone (floor)``: ``kernels.matmul.data_flow_floor``, the same tiles, copies,
  decodes, GEMMs and f32 accumulations in bare numpy with no simulator (and checked to give the
  kernel's bits): what any numpy simulation keeping the per-tile f32 accumulation costs at least.

The kernel (Ascend310: L1 1 MiB, L0A/L0B 64 KiB, L0C 256 KiB): A in 256-row panels and B in
256-column panels (the whole K, 512 KiB each) in L1; each ``tik.matmul`` (256 x 1024 x 256)
lowers to 8 x (``mte_l1_l0a`` + ``mte_l1_l0b`` + ``mad``/``mad_acc``) of 256 x 256 x 128 (the
largest tiles L0A/L0B/L0C hold); the fixpipe is one ``pto.mte_l0c_gm`` with ``pre_quant f32_f16``.
128 mads, 256 L0 loads, 20 GM loads, 16 FIXPIPE ops and the auto-sync flags in all.

Run: ``PYTHONPATH=. python benchmarks/bench_tik_cube.py [--repeat 3] [--size 1024] [--blas-threads 1]
[--checks on|off]``. ``--blas-threads`` (default 1, set before numpy loads) applies to both
sides; on a shared machine single-threaded BLAS gives stable ratios.
"""
from __future__ import annotations

import os
import sys

_threads = sys.argv[sys.argv.index("--blas-threads") + 1] if "--blas-threads" in sys.argv else "1"
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from tabulate import tabulate  # noqa: E402

import tbe_compat.aliases  # noqa: E402

tbe_compat.aliases.install()
from tbe import tik  # noqa: E402
from tbe_compat import platform  # noqa: E402
from tbe_compat.tik.debug import tik_machine_options  # noqa: E402

from kernels.matmul import data_flow_floor  # noqa: E402

BM = BN = 256          # L0C block (256 x 256 f32 = 256 KiB, all of Ascend310's L0C)


def build(s: int):
    """The TIK kernel: ``out[N1, M, 16] = f16(A @ B)`` with A ``[K1, M, 16]``, B ``[K1, N, 16]`` in GM.

    For each 256-row panel of A (``[K1, 256, 16]``, 512 KiB of L1, loaded once per panel) and each
    256-column panel of B (512 KiB, loaded per block): ``tik.matmul`` over the whole K (it tiles K
    through L0A/L0B itself) into the 256 x 256 L0C block, then ``tik.fixpipe`` (fp322fp16) into the
    ``[N1, M, 16]`` output with a dst_stride that skips the other row blocks."""
    platform.reset_platform()
    ti = tik.Tik(disable_debug=False)
    k1 = s // 16
    a_gm = ti.Tensor("float16", (k1, s, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (k1, s, 16), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (s // 16, s, 16), name="out", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (k1, BM, 16), name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor("float16", (k1, BN, 16), name="b_l1", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (BN // 16, BM, 16), name="c", scope=tik.scope_cbuf_out)
    with ti.for_range(0, s // BM) as mi:
        ti.data_move(a_l1, a_gm[0, mi * BM, 0], 0, k1, BM, s - BM, 0)        # 16-element f16 rows: 1 block each
        with ti.for_range(0, s // BN) as ni:
            ti.data_move(b_l1, b_gm[0, ni * BN, 0], 0, k1, BN, s - BN, 0)
            ti.matmul(c, a_l1, b_l1, BM, s, BN)
            ti.fixpipe(out[ni * (BN // 16), mi * BM, 0], c, BN // 16, BM * 16 * 4 // 32, (s - BM) * 16 * 2 // 32,
                       0, extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    ti.BuildCCE(kernel_name="bench_matmul", inputs=[a_gm, b_gm], outputs=[out])
    return ti


def nz(mat: np.ndarray) -> np.ndarray:
    """``[K1, R, 16]`` of an ``R x K`` matrix."""
    r, k = mat.shape
    return np.ascontiguousarray(mat.reshape(r, k // 16, 16).transpose(1, 0, 2))


def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--checks", choices=("on", "off"), default="on",
                    help="on: the TIK debugger defaults (hazard verifier, initialisation tracking)")
    ap.add_argument("--blas-threads", default="1")
    args = ap.parse_args()
    s = args.size
    rng = np.random.default_rng(0)
    A = rng.standard_normal((s, s)).astype(np.float16)
    B = rng.standard_normal((s, s)).astype(np.float16)
    feed = {"a_gm": nz(A), "b_gm": nz(B.T.copy())}
    ti = build(s)
    if args.checks == "off":
        ti.tikdb.options = tik_machine_options(check_hazards=False, uninitialized="off")
    t = time.perf_counter()
    res, = ti.tikdb.start_debug(feed, interactive=False)
    first = time.perf_counter() - t
    sim = best(lambda: ti.tikdb.start_debug(feed, interactive=False), args.repeat)
    A32, B32 = A.astype(np.float32), B.astype(np.float32)
    ref = best(lambda: (A32 @ B32).astype(np.float16), args.repeat)
    ref_casts = best(lambda: (A.astype(np.float32) @ B.astype(np.float32)).astype(np.float16), args.repeat)
    floor_run = data_flow_floor(feed)
    if not np.array_equal(floor_run().view(np.uint16), res.view(np.uint16)):
        raise SystemExit("the numpy data-flow floor and the TIK kernel disagree: a bug in one of them")
    floor = best(floor_run, args.repeat)
    got = res.transpose(1, 0, 2).reshape(s, s).astype(np.float64)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    err = float(np.max(np.abs(got - exact) / (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))))
    rows = [["TIK kernel, compiled (best of %d)" % args.repeat, f"{sim * 1e3:.1f}", f"{sim / ref:.2f}",
             f"{sim / ref_casts:.2f}"],
            ["TIK kernel, first start_debug (compiles)", f"{first * 1e3:.1f}", f"{first / ref:.2f}",
             f"{first / ref_casts:.2f}"],
            ["numpy, the kernel's tiled data flow alone (floor)", f"{floor * 1e3:.1f}", f"{floor / ref:.2f}",
             f"{floor / ref_casts:.2f}"],
            ["numpy matmul + cast", f"{ref * 1e3:.1f}", "1.00", ""],
            ["numpy casts + matmul + cast", f"{ref_casts * 1e3:.1f}", "", "1.00"]]
    print(f"{s} x {s} x {s} f16 matmul, checks {args.checks}, BLAS threads {args.blas_threads}; "
          f"max error / sum|a||b| = {err:.1e}")
    print(tabulate(rows, headers=["path", "ms", "ratio to matmul + cast", "ratio to casts + matmul + cast"]))


if __name__ == "__main__":
    main()
