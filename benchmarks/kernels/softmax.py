"""Row softmax of a 4096 x 1024 f16 matrix with the classic ``v*`` vector API, 8 cores (Ascend910A).

Each core takes 512 rows in chunks of ``R = 32`` rows (64 KiB of f16 in UB). Per chunk, with every
instruction covering all 32 rows at once (repeats walk the rows; no per-row scalar code):

1. row max: ``vcgmax`` (max of each 16-element block) -> ``[R, 64]``; ``vmax`` halves -> ``[R, 16]``;
   ``vcgmax`` -> ``[R]``;
2. broadcast each row's max to a 16-element block: ``vmuls(.., 1.0)`` with source repeat stride 0
   writes 16 copies of the ``[R]`` vector, ``vec_trans`` (16 x 16 transposes) turns them into
   ``[R, 16]`` blocks;
3. ``vsub`` (source-1 block stride 0: every block of a row reads the row's max block), ``vexp``;
4. row sums in float32: ``vconv`` f16 -> f32, ``vcadd`` (per 64 elements) -> ``[R, 16]``, ``vcadd``
   -> ``[R]``; ``vrec`` -> 1 / sum, ``vconv`` -> f16, broadcast as in 2.;
5. ``vmul`` by the broadcast reciprocal, ``data_move`` back to GM.

Baseline: numpy in float32 on the f16 input, in place where numpy allows:
``x = a.astype(float32); x -= x.max(1, keepdims=True); np.exp(x, out=x); x *= 1 / x.sum(1, keepdims=True);
x.astype(float16)``.
"""
from __future__ import annotations

import numpy as np
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

ROWS, COLS, CORES, R = 4096, 1024, 8, 32
PER_CORE = ROWS // CORES


def build(rows: int = ROWS):
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    per_core = rows // CORES
    x = ti.Tensor("float16", (rows, COLS), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (rows, COLS), name="y", scope=tik.scope_gm)
    with ti.for_range(0, CORES, block_num=CORES) as core:
        xb = ti.Tensor("float16", (R, COLS), name="xb", scope=tik.scope_ubuf)
        e32 = ti.Tensor("float32", (R, COLS), name="e32", scope=tik.scope_ubuf)
        bm = ti.Tensor("float16", (R, 64), name="bm", scope=tik.scope_ubuf)
        red = ti.Tensor("float16", (R, 16), name="red", scope=tik.scope_ubuf)
        rmax = ti.Tensor("float16", (R,), name="rmax", scope=tik.scope_ubuf)
        sq = ti.Tensor("float16", (R // 16, 16, 16), name="sq", scope=tik.scope_ubuf)
        bcast = ti.Tensor("float16", (R, 16), name="bcast", scope=tik.scope_ubuf)
        ps = ti.Tensor("float32", (R, 16), name="ps", scope=tik.scope_ubuf)
        rsum = ti.Tensor("float32", (R,), name="rsum", scope=tik.scope_ubuf)
        rinv = ti.Tensor("float32", (R,), name="rinv", scope=tik.scope_ubuf)
        rinv16 = ti.Tensor("float16", (R,), name="rinv16", scope=tik.scope_ubuf)

        def broadcast(dst, vec):
            """dst[r, 0:16] = vec[r] for r < R."""
            ti.vmuls(16 * (R // 16), sq, vec, 1.0, 16, 16, 1, 1, 0)
            ti.vec_trans(dst, sq, R // 16, 1, 1)

        with ti.for_range(0, per_core // R) as chunk:
            row0 = core * per_core + chunk * R
            ti.data_move(xb, x[row0, 0], 0, 1, R * COLS * 2 // 32, 0, 0)
            for half in range(2):                           # 8 blocks per repeat, 255 repeats at most
                ti.vcgmax(128, bm[half * R // 2, 0], xb[half * R // 2, 0], R * COLS // 128 // 2, 1, 1, 8)
            ti.vmax(32, bm, bm, bm[0, 32], R, 1, 1, 1, 4, 4, 4)
            ti.vmax(16, red, bm, bm[0, 16], R, 1, 1, 1, 1, 4, 4)
            ti.vcgmax(128, rmax, red, R // 8, 1, 1, 8)
            broadcast(bcast, rmax)
            for j in range(COLS // 128):
                ti.vsub(128, xb[0, j * 128], xb[0, j * 128], bcast, R, 1, 1, 0, 64, 64, 1)
            for half in range(2):
                ti.vexp(128, xb[half * R // 2, 0], xb[half * R // 2, 0], R * COLS // 128 // 2, 1, 1, 8, 8)
            for q in range(4):
                ti.vconv(64, "", e32[q * R // 4, 0], xb[q * R // 4, 0], R * COLS // 64 // 4, 1, 1, 8, 4)
                ti.vcadd(64, ps[q * R // 4, 0], e32[q * R // 4, 0], R * COLS // 64 // 4, 1, 1, 8)
            ti.vcadd(16, rsum, ps, R, 1, 1, 2)
            ti.vrec(R, rinv, rsum, 1, 1, 1, 8, 8)
            ti.vconv(R, "", rinv16, rinv, 1, 1, 1, 4, 8)
            broadcast(bcast, rinv16)
            for j in range(COLS // 128):
                ti.vmul(128, xb[0, j * 128], xb[0, j * 128], bcast, R, 1, 1, 0, 64, 64, 1)
            ti.data_move(y[row0, 0], xb, 0, 1, R * COLS * 2 // 32, 0, 0)
    ti.BuildCCE(kernel_name="bench_softmax", inputs=[x], outputs=[y])
    return ti


def inputs(rows: int = ROWS, seed: int = 0) -> dict:
    return {"x": np.random.default_rng(seed).uniform(-4, 4, (rows, COLS)).astype(np.float16)}


def softmax_numpy(a: np.ndarray) -> np.ndarray:
    x = a.astype(np.float32)
    x -= x.max(axis=1, keepdims=True)
    np.exp(x, out=x)
    x *= 1 / x.sum(axis=1, keepdims=True)
    return x.astype(np.float16)


def baseline(feed: dict):
    a = feed["x"]
    return lambda: softmax_numpy(a)


def check(outputs, feed: dict) -> None:
    x = feed["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    got = outputs[0].astype(np.float64)
    err = float(np.max(np.abs(got - want) / np.maximum(want, 2 ** -14)))
    if not err < 4e-3:
        raise AssertionError(f"softmax: max relative error {err:.2e}")
