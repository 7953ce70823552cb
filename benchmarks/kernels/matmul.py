"""Tiled f16 matmul ``C = f16(A @ B)`` (``S x S x S``, f32 accumulation) as a TIK kernel on Ascend310.

A ``[K1, M, 16]`` and B^T ``[K1, N, 16]`` (fractal-major, as a CANN matmul sample keeps them in GM)
are staged in L1 as 256-row / 256-column panels over the whole K (512 KiB each at S = 1024);
per 256 x 256 output block one ``tik.matmul`` (which tiles K through L0A/L0B: 256 x 128 x 256 mads)
into the whole 256 KiB L0C, then one ``tik.fixpipe`` (``fp322fp16``) into the ``[N1, M, 16]``
output. The chip's buffer sizes fix this tiling (L0A/L0B 64 KiB, L0C 256 KiB, L1 1 MiB).

Baseline: ``(A32 @ B32).astype(float16)`` -- one BLAS f32 GEMM of float32 copies made beforehand
(the f16 -> f32 input casts, which the simulator must do too, are not timed) and one cast.
"""
from __future__ import annotations

import numpy as np
from tbe import tik
from tbe_compat import platform

BM = BN = 256          # L0C block: 256 x 256 f32 = 256 KiB, all of Ascend310's L0C


def build(s: int = 512):
    platform.reset_platform()
    ti = tik.Tik()
    k1 = s // 16
    a_gm = ti.Tensor("float16", (k1, s, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (k1, s, 16), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (s // 16, s, 16), name="out", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (k1, BM, 16), name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor("float16", (k1, BN, 16), name="b_l1", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (BN // 16, BM, 16), name="c", scope=tik.scope_cbuf_out)
    with ti.for_range(0, s // BM) as mi:
        ti.data_move(a_l1, a_gm[0, mi * BM, 0], 0, k1, BM, s - BM, 0)
        with ti.for_range(0, s // BN) as ni:
            ti.data_move(b_l1, b_gm[0, ni * BN, 0], 0, k1, BN, s - BN, 0)
            ti.matmul(c, a_l1, b_l1, BM, s, BN)
            ti.fixpipe(out[ni * (BN // 16), mi * BM, 0], c, BN // 16, BM * 16 * 4 // 32, (s - BM) * 16 * 2 // 32,
                       0, extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    ti.BuildCCE(kernel_name=f"bench_matmul_{s}", inputs=[a_gm, b_gm], outputs=[out])
    return ti


def _nz(mat: np.ndarray) -> np.ndarray:
    """``[K1, R, 16]`` of an ``R x K`` matrix."""
    r, k = mat.shape
    return np.ascontiguousarray(mat.reshape(r, k // 16, 16).transpose(1, 0, 2))


def inputs(s: int = 512, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((s, s)).astype(np.float16)
    b = rng.standard_normal((s, s)).astype(np.float16)
    return {"a_gm": _nz(a), "b_gm": _nz(b.T.copy())}


def logical(feed: dict):
    """(A, B) as ``S x S`` f16 matrices."""
    a_nz, bt_nz = feed["a_gm"], feed["b_gm"]
    k1, s, _ = a_nz.shape
    return (a_nz.transpose(1, 0, 2).reshape(s, k1 * 16), bt_nz.transpose(1, 0, 2).reshape(s, k1 * 16).T)


def baseline(feed: dict):
    a, b = logical(feed)
    a32, b32 = a.astype(np.float32), np.ascontiguousarray(b.astype(np.float32))
    return lambda: (a32 @ b32).astype(np.float16)


def check(outputs, feed: dict) -> None:
    a, b = logical(feed)
    got = outputs[0].transpose(1, 0, 2).reshape(a.shape[0], b.shape[1]).astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    err = float(np.max(np.abs(got - exact) / scale))
    if not err < 2e-3:
        raise AssertionError(f"matmul: max |got - exact| / (|A| @ |B|) = {err:.2e}")


def data_flow_floor(feed: dict):
    """The kernel's tiled data flow in bare numpy, with no simulator around it: the floor of any
    numpy simulation that keeps the hardware's per-tile f32 accumulation.

    Per L1 panel pair and 128-deep K step: the L0A (Zz) and L0B fractal copies, the exact
    f16 -> f32 decode of both tiles (`f16_to_f32`, the simulator's fastest), one 256 x 256 x 128
    f32 GEMM, the f32 accumulate into the Nz L0C block, and per block the f16 cast into the
    ``[N1, M, 16]`` output. Returns ``run() -> out``."""
    from pto_core.numerics.floats import f16_to_f32, to_f16
    a_gm, b_gm = feed["a_gm"], feed["b_gm"]
    s = a_gm.shape[1]
    k1, kt = s // 16, 128 // 16
    out = np.empty((s // 16, s, 16), np.float16)
    a_l1, b_l1 = np.empty((k1, BM, 16), np.float16), np.empty((k1, BN, 16), np.float16)
    l0a, l0b = np.empty((BM // 16, kt, 16, 16), np.float16), np.empty((kt, BN // 16, 16, 16), np.float16)
    acc = np.empty((BN // 16, BM, 16), np.float32)
    prod = np.empty((BM, BN), np.float32)

    def run() -> np.ndarray:
        for mi in range(s // BM):
            a_l1[...] = a_gm[:, mi * BM:(mi + 1) * BM]
            for ni in range(s // BN):
                b_l1[...] = b_gm[:, ni * BN:(ni + 1) * BN]
                for kk in range(k1 // kt):
                    l0a[...] = a_l1[kk * kt:(kk + 1) * kt].reshape(kt, BM // 16, 16, 16).transpose(1, 0, 2, 3)
                    l0b[...] = b_l1[kk * kt:(kk + 1) * kt].reshape(kt, BN // 16, 16, 16)
                    a = f16_to_f32(l0a.view(np.uint16).transpose(0, 2, 1, 3)).reshape(BM, 128)
                    bt = f16_to_f32(l0b.view(np.uint16).transpose(1, 2, 0, 3)).reshape(BN, 128)
                    np.matmul(a, bt.T, out=prod)
                    p4 = prod.reshape(BM, BN // 16, 16).transpose(1, 0, 2)
                    if kk:
                        acc[...] += p4
                    else:
                        acc[...] = p4
                out[ni * (BN // 16):(ni + 1) * (BN // 16), mi * BM:(mi + 1) * BM] = to_f16(acc)
        return out
    return run
