"""conv2d: a 1 x 64 x 56 x 56 f16 feature map, 64 x 64 x 3 x 3 f16 weights, stride 1, padding 1,
f32 accumulation, f16 output (``fp322fp16``) -- a TIK kernel on Ascend310 tiled like a CANN sample.

The whole output (64 x 3136 f32 = 784 KiB) does not fit the 256 KiB L0C, so the kernel walks four
slabs of 14 output rows: per slab it moves the 14 + 2 halo input rows (``[C1, rows, W, C0]``,
one ``data_move`` of 4 bursts) from GM to L1, runs ``tik.conv2d`` on them (img2col through
L0A, the weights through L0B, K tiled by the facade's planner; top/bottom padding only at the
image border), and writes the slab's ``[Cout/16, 784, 16]`` L0C block to GM with one
``tik.fixpipe`` (``fp322fp16``). The weights (``[C1, Kh, Kw, Cout, C0]``, 72 KiB) move to L1 once.

Baseline: the faster of two plain-numpy convolutions in float32 on float32 copies made
beforehand, each followed by the f16 cast: ``im2col`` (``sliding_window_view`` copied to a
576 x 3136 matrix, one GEMM) and ``shifted`` (nine 64 x 64 x 3136 GEMMs over shifted views of
the padded map, accumulated). Both are single BLAS GEMM calls on the same arithmetic.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from tbe import tik
from tbe_compat import platform

C, H, W, COUT, KH, KW = 64, 56, 56, 64, 3, 3
C0 = 16
C1 = C // C0
SLAB = 14                      # output rows per L0C block: 64 x (14 * 56) x 4 B = 196 KiB
HOWO = H * W


def build():
    platform.reset_platform()
    ti = tik.Tik()
    fm_gm = ti.Tensor("float16", (C1, H, W, C0), name="fm_gm", scope=tik.scope_gm)
    w_gm = ti.Tensor("float16", (C1, KH, KW, COUT, C0), name="w_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (COUT // C0, HOWO, C0), name="out", scope=tik.scope_gm)
    fm_l1 = ti.Tensor("float16", (C1, SLAB + KH - 1, W, C0), name="fm_l1", scope=tik.scope_cbuf)
    w_l1 = ti.Tensor("float16", (C1, KH, KW, COUT, C0), name="w_l1", scope=tik.scope_cbuf)
    acc = ti.Tensor("float32", (COUT // C0, SLAB * W, C0), name="acc", scope=tik.scope_cbuf_out)
    ti.data_move(w_l1, w_gm, 0, 1, C1 * KH * KW * COUT * C0 * 2 // 32, 0, 0)
    for slab in range(H // SLAB):
        first, last = slab * SLAB - 1, slab * SLAB + SLAB        # input rows the slab needs (halo of 1)
        pad_top, pad_bottom = int(first < 0), int(last >= H)
        lo, hi = max(first, 0), min(last, H - 1)
        rows = hi - lo + 1
        ti.data_move(fm_l1, fm_gm[0, lo, 0, 0], 0, C1, rows * W * C0 * 2 // 32, (H - rows) * W * C0 * 2 // 32, 0)
        ti.conv2d(acc, fm_l1, w_l1, [C1, rows, W, C0], [C1, KH, KW, COUT, C0], [1, 1],
                  [1, 1, pad_top, pad_bottom], [1, 1], 0)
        ti.fixpipe(out[0, slab * SLAB * W, 0], acc, COUT // C0, SLAB * W * C0 * 4 // 32,
                   (HOWO - SLAB * W) * C0 * 2 // 32, 0,
                   extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    ti.BuildCCE(kernel_name="bench_conv2d", inputs=[fm_gm, w_gm], outputs=[out])
    return ti


def inputs(seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((C, H, W)).astype(np.float16)             # NCHW, N = 1
    w = (rng.standard_normal((COUT, C, KH, KW)) / 24).astype(np.float16)   # OIHW
    fm = np.ascontiguousarray(x.reshape(C1, C0, H, W).transpose(0, 2, 3, 1))
    wk = np.ascontiguousarray(w.reshape(COUT, C1, C0, KH, KW).transpose(1, 3, 4, 0, 2))
    return {"fm_gm": fm, "w_gm": wk}


def logical(feed: dict):
    """(x ``[C, H, W]``, w ``[Cout, C, Kh, Kw]``) f16."""
    x = feed["fm_gm"].transpose(0, 3, 1, 2).reshape(C, H, W)
    w = feed["w_gm"].transpose(3, 0, 4, 1, 2).reshape(COUT, C, KH, KW)
    return x, w


def conv_im2col(xp: np.ndarray, wm: np.ndarray) -> np.ndarray:
    cols = sliding_window_view(xp, (KH, KW), axis=(1, 2)).transpose(0, 3, 4, 1, 2).reshape(C * KH * KW, HOWO)
    return (wm @ cols).astype(np.float16)


def conv_shifted(xp: np.ndarray, w32: np.ndarray) -> np.ndarray:
    out = np.zeros((COUT, HOWO), np.float32)
    for i in range(KH):
        for j in range(KW):
            out += w32[:, :, i, j] @ xp[:, i:i + H, j:j + W].reshape(C, HOWO)
    return out.astype(np.float16)


def baselines(feed: dict) -> dict:
    x, w = logical(feed)
    xp = np.zeros((C, H + 2, W + 2), np.float32)
    xp[:, 1:-1, 1:-1] = x
    w32 = w.astype(np.float32)
    wm = np.ascontiguousarray(w32.reshape(COUT, C * KH * KW))
    w9 = np.ascontiguousarray(w32)
    return {"im2col": lambda: conv_im2col(xp, wm), "shifted": lambda: conv_shifted(xp, w9)}


def check(outputs, feed: dict) -> None:
    x, w = logical(feed)
    xp = np.zeros((C, H + 2, W + 2))
    xp[:, 1:-1, 1:-1] = x
    cols = sliding_window_view(xp, (KH, KW), axis=(1, 2)).transpose(0, 3, 4, 1, 2).reshape(C * KH * KW, HOWO)
    wm = w.reshape(COUT, -1).astype(np.float64)
    exact, scale = wm @ cols, np.abs(wm) @ np.abs(cols)
    got = outputs[0].transpose(0, 2, 1).reshape(COUT, HOWO).astype(np.float64)
    err = float(np.max(np.abs(got - exact) / np.maximum(scale, 1e-30)))
    if not err < 2e-3:
        raise AssertionError(f"conv2d: max |got - exact| / (|W| @ |x|) = {err:.2e}")


def data_flow_floor(feed: dict):
    """The kernel's tiled data flow in bare numpy, with no simulator around it: the floor of any
    numpy simulation that keeps the hardware's per-tile f32 accumulation. Returns ``run() -> out``.

    Per 14-row slab: the zero-padded input rows; per 32-deep K step (two kernel taps of 16
    channels, the order of the kernel's img2col: channel block, tap, channel): the 784 x 32 f16
    im2col tile and the 64 x 32 weight tile, both decoded to f32 (`f16_to_f32`), one
    784 x 64 x 32 GEMM, the f32 accumulate into the Nz ``[4, 784, 16]`` L0C block; per slab the
    f16 cast into the output."""
    from pto_core.numerics.floats import f16_to_f32, to_f16
    fm, wk = feed["fm_gm"], feed["w_gm"]
    taps, k_step = KH * KW, 2
    out = np.empty((COUT // C0, HOWO, C0), np.float16)
    xs = np.zeros((C1, SLAB + KH - 1, W + KW - 1, C0), np.float16)
    a16 = np.empty((SLAB * W, k_step * C0), np.float16)
    b16 = np.empty((COUT, k_step * C0), np.float16)
    acc = np.empty((COUT // C0, SLAB * W, C0), np.float32)
    prod = np.empty((SLAB * W, COUT), np.float32)

    def run() -> np.ndarray:
        for slab in range(H // SLAB):
            first = slab * SLAB - 1
            lo, hi = max(first, 0), min(first + SLAB + 1, H - 1)
            xs[...] = 0
            xs[:, lo - first:hi - first + 1, 1:W + 1] = fm[:, lo:hi + 1]
            for step in range(C1 * taps // k_step):
                for j in range(k_step):
                    c1, p = divmod(step * k_step + j, taps)
                    fh, fw = divmod(p, KW)
                    a16[:, j * C0:(j + 1) * C0] = xs[c1, fh:fh + SLAB, fw:fw + W].reshape(SLAB * W, C0)
                    b16[:, j * C0:(j + 1) * C0] = wk[c1, fh, fw]
                a = f16_to_f32(a16.view(np.uint16))
                bt = f16_to_f32(b16.view(np.uint16))
                np.matmul(a, bt.T, out=prod)
                p4 = prod.reshape(SLAB * W, COUT // C0, C0).transpose(1, 0, 2)
                if step:
                    acc[...] += p4
                else:
                    acc[...] = p4
            out[:, slab * SLAB * W:(slab + 1) * SLAB * W] = to_f16(acc)
        return out
    return run
