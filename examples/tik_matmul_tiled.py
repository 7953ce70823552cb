"""A TIK kernel: tiled f16 matmul on 2 cores, K loop with ping-pong L1 buffers, fixpipe to GM.

``C = A @ B`` with A ``M x K``, B ``K x N`` in GM in the cube's fractal layouts (A as
``[K1, M, 16]``, B as ``[K1, N, 16]``, i.e. B^T in the Nz layout), the result written as
float16 ``[N1, M, 16]``:

* core ``c`` (``for_range(0, 2, block_num=2)``) computes output columns ``[c*N/2, (c+1)*N/2)``
  into its own L0C block ``[N/32, M, 16]`` (float32);
* K runs in chunks of ``KC`` through two L1 buffer pairs: while chunk ``k`` is multiplied
  from one pair, chunk ``k+1`` is loaded into the other (the classic ping-pong; the
  simulator runs it in program order, the auto-sync flags are those of the overlap);
* ``tik.matmul(..., init_l1out=...)`` starts the accumulator on the first chunk and adds
  to it afterwards; ``tik.fixpipe`` converts to float16 (``fp322fp16``) on the way to GM.

The numpy reference computes the float64 product and rounds it to float16 (the hardware's
last rounding). The data are multiples of 1/8 in [-2, 2], so every float32 partial sum is
exact and the comparison is bit for bit. Run it with

    tik-run examples/tik_matmul_tiled.py        (or: python examples/tik_matmul_tiled.py)
"""
import numpy as np
from tbe import tik

M, K, N = 256, 1024, 256
KC = 256                      # K columns per L1 chunk
CORES = 2


def matmul_tiled(m=M, k=K, n=N):
    tik_instance = tik.Tik()
    k1, kc1, nc = k // 16, KC // 16, n // CORES
    a_gm = tik_instance.Tensor("float16", (k1, m, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = tik_instance.Tensor("float16", (k1, n, 16), name="b_gm", scope=tik.scope_gm)
    c_gm = tik_instance.Tensor("float16", (n // 16, m, 16), name="c_gm", scope=tik.scope_gm)
    with tik_instance.for_range(0, CORES, block_num=CORES) as core:
        a_l1 = [tik_instance.Tensor("float16", (kc1, m, 16), name=f"a_l1_{p}", scope=tik.scope_cbuf) for p in (0, 1)]
        b_l1 = [tik_instance.Tensor("float16", (kc1, nc, 16), name=f"b_l1_{p}", scope=tik.scope_cbuf)
                for p in (0, 1)]
        c_l0c = tik_instance.Tensor("float32", (nc // 16, m, 16), name="c_l0c", scope=tik.scope_cbuf_out)
        with tik_instance.for_range(0, k // KC // 2) as kp:          # two chunks per iteration: ping, pong
            for p in (0, 1):
                kc = kp * 2 + p
                # A chunk: kc1 rows of fractal columns, m rows each (16 halves = one 32-byte block per row)
                tik_instance.data_move(a_l1[p], a_gm[kc * kc1, 0, 0], 0, 1, kc1 * m, 0, 0)
                # B chunk: this core's nc columns of each of the kc1 fractal columns
                tik_instance.data_move(b_l1[p], b_gm[kc * kc1, core * nc, 0], 0, kc1, nc, n - nc, 0)
                if p == 0:
                    with tik_instance.if_scope(kp == 0):
                        tik_instance.matmul(c_l0c, a_l1[p], b_l1[p], m, KC, nc, init_l1out=True)
                    with tik_instance.else_scope():
                        tik_instance.matmul(c_l0c, a_l1[p], b_l1[p], m, KC, nc, init_l1out=False)
                else:
                    tik_instance.matmul(c_l0c, a_l1[p], b_l1[p], m, KC, nc, init_l1out=False)
        tik_instance.fixpipe(c_gm[core * (nc // 16), 0, 0], c_l0c, nc // 16, m * 16 * 4 // 32, 0, 0,
                             extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    tik_instance.BuildCCE(kernel_name="matmul_tiled", inputs=[a_gm, b_gm], outputs=[c_gm])
    return tik_instance


def to_nz(mat):
    """``[K1, R, 16]`` of an ``R x K`` matrix (fractal column by fractal column)."""
    r, k = mat.shape
    return np.ascontiguousarray(mat.reshape(r, k // 16, 16).transpose(1, 0, 2))


def from_nz(frac):
    """The ``R x K`` matrix of its ``[K1, R, 16]`` fractal layout (inverse of `to_nz`)."""
    k1, r, c0 = frac.shape
    return np.ascontiguousarray(frac.transpose(1, 0, 2).reshape(r, k1 * c0))


def reference(a_gm, b_gm):
    """float16 of the exact product (``[N1, M, 16]``) of the kernel inputs (A and B^T in Nz)."""
    a, b = from_nz(a_gm), from_nz(b_gm).T
    c = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)
    return np.ascontiguousarray(c.reshape(c.shape[0], -1, 16).transpose(1, 0, 2))


def inputs(seed=1, m=M, k=K, n=N):
    rng = np.random.default_rng(seed)
    a = (rng.integers(-16, 17, (m, k)) / 8).astype(np.float16)
    b = (rng.integers(-16, 17, (k, n)) / 8).astype(np.float16)
    return a, b


if __name__ == "__main__":
    a, b = inputs()
    tik_instance = matmul_tiled()
    feed = {"a_gm": to_nz(a), "b_gm": to_nz(b.T.copy())}
    c, = tik_instance.tikdb.start_debug(feed_dict=dict(feed), interactive=False)
    ok = np.array_equal(c, reference(**feed)) and not tik_instance.tikdb.reports
    print("matmul_tiled:", "PASS" if ok else "FAIL")
    raise SystemExit(0 if ok else 1)
