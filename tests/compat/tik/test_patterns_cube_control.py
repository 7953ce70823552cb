"""Kernels of our own, in the style of real TIK operators, for cube and control patterns the
public corpus shows rarely or not at all: matmul with m, k, n not multiples of 16 (padded L1
tiles whose padding holds garbage, fixpipe dropping the padded rows), k split over two
matmul calls accumulating in L0C, and scalar control flow (a search loop with tik_break,
tik.all/tik.any conditions with elif, an early tik_return per core). Each matches numpy."""
import numpy as np
import pytest

from tbe import tik

from .helpers import run


def _round16(v):
    return (v + 15) // 16 * 16


# ---------------------------------------------------------------------------------------------
# 1. matmul with k (and m, n) not multiples of 16

def matmul_ragged(m, k, n, k_split=None):
    """C (n1, m, 16) f32 = A (m x k) B (k x n), A/B given in K1MK0 / K1NK0 layouts whose padding
    (k..K, m..M, n..N) is garbage from GM. With ``k_split`` the K range is done in two matmul
    calls (init_l1out False for the second) -- the first part a multiple of 16."""
    M, K, N = _round16(m), _round16(k), _round16(n)
    ti = tik.Tik()
    a = ti.Tensor("float16", (K // 16, M, 16), name="a", scope=tik.scope_gm)
    b = ti.Tensor("float16", (K // 16, N, 16), name="b", scope=tik.scope_gm)
    c = ti.Tensor("float32", (N // 16, m, 16), name="c", scope=tik.scope_gm)
    a_l1 = ti.Tensor("float16", (K // 16, M, 16), name="a_l1", scope=tik.scope_cbuf)
    b_l1 = ti.Tensor("float16", (K // 16, N, 16), name="b_l1", scope=tik.scope_cbuf)
    c_l0c = ti.Tensor("float32", (N // 16, M, 16), name="c_l0c", scope=tik.scope_cbuf_out)
    ti.data_move(a_l1, a, 0, 1, K * M // 16, 0, 0)
    ti.data_move(b_l1, b, 0, 1, K * N // 16, 0, 0)
    if k_split is None:
        ti.matmul(c_l0c, a_l1, b_l1, m, k, n)
    else:
        k1 = k_split // 16
        ti.matmul(c_l0c, a_l1, b_l1, m, k_split, n, init_l1out=True)
        ti.matmul(c_l0c, a_l1[k1, 0, 0], b_l1[k1, 0, 0], m, k - k_split, n, init_l1out=False)
    ti.fixpipe(c, c_l0c, N // 16, m * 16 * 4 // 32, 0, 0)      # rows m..M of each block are dropped
    ti.BuildCCE(kernel_name="matmul_ragged", inputs=[a, b], outputs=[c])
    return ti


def _pack(mat, rows_pad, k_pad):
    """(rows, k) -> (K1, rows_pad, 16) with garbage in the padding."""
    rows, k = mat.shape
    full = np.random.default_rng(99).uniform(-100, 100, (rows_pad, k_pad)).astype(np.float16)
    full[:rows, :k] = mat
    return np.ascontiguousarray(full.reshape(rows_pad, k_pad // 16, 16).transpose(1, 0, 2))


@pytest.mark.parametrize("m,k,n,split", [(20, 40, 24, None), (16, 40, 32, None), (2, 70, 48, 32),
                                         (32, 33, 16, 16)])
def test_matmul_k_not_multiple_of_16(m, k, n, split):
    rng = np.random.default_rng(m + k + n)
    A = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    B = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    ti = matmul_ragged(m, k, n, split)
    c, = run(ti, {"a": _pack(A, _round16(m), _round16(k)), "b": _pack(B.T, _round16(n), _round16(k))})
    ref = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    got = c.transpose(1, 0, 2).reshape(m, -1)[:, :n]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# 2. scalar control flow: per row, the index of the first element above a threshold (tik_break),
#    classified with tik.all / tik.any and elif; rows whose first element is negative return early

def first_above(rows, cols, thr):
    ti = tik.Tik()
    x = ti.Tensor("int16", (rows, cols), name="x", scope=tik.scope_gm)
    out = ti.Tensor("int32", (rows, 8), name="out", scope=tik.scope_gm)
    with ti.for_range(0, rows, block_num=rows) as r:
        x_ub = ti.Tensor("int16", (cols,), name="x_ub", scope=tik.scope_ubuf)
        o_ub = ti.Tensor("int32", (8,), name="o_ub", scope=tik.scope_ubuf)
        ti.data_move(x_ub, x[r, 0], 0, 1, cols // 16, 0, 0)
        ti.vec_dup(8, o_ub, -1, 1, 8)
        ti.data_move(out[r, 0], o_ub, 0, 1, 1, 0, 0)
        v = ti.Scalar("int16", name="v")               # (TIK conditions cannot read float16 Scalars)
        v.set_as(x_ub[0])
        with ti.if_scope(v < 0):
            ti.tik_return()                          # out row stays -1
        idx = ti.Scalar("int32", name="idx", init_value=-1)
        with ti.for_range(0, cols) as i:
            v.set_as(x_ub[i])
            with ti.if_scope(v > thr):
                idx.set_as(i)
                ti.tik_break()
        o_ub[0].set_as(idx)
        cls = ti.Scalar("int32", name="cls", init_value=0)
        with ti.if_scope(idx < 0):
            cls.set_as(0)
        with ti.elif_scope(tik.all(idx >= 0, idx < cols // 2)):
            cls.set_as(1)
        with ti.elif_scope(tik.any(idx == cols - 1, idx == cols - 2)):
            cls.set_as(3)
        with ti.else_scope():
            cls.set_as(2)
        o_ub[1].set_as(cls)
        ti.data_move(out[r, 0], o_ub, 0, 1, 1, 0, 0)
    ti.BuildCCE(kernel_name="first_above", inputs=[x], outputs=[out])
    return ti


def _first_above_ref(x, thr):
    rows, cols = x.shape
    out = np.full((rows, 8), -1, np.int32)
    for r in range(rows):
        if x[r, 0] < 0:
            continue
        hits = np.flatnonzero(x[r] > thr)
        idx = int(hits[0]) if hits.size else -1
        cls = 0 if idx < 0 else 1 if idx < cols // 2 else 3 if idx >= cols - 2 else 2
        out[r, 0], out[r, 1] = idx, cls
    return out


def test_scalar_search_with_break_all_any_and_return():
    rows, cols, thr = 8, 32, 2
    rng = np.random.default_rng(4)
    x = rng.integers(0, 2, (rows, cols)).astype(np.int16)
    x[1, 3] = x[2, 20] = x[3, 31] = x[4, 30] = 5            # classes 1, 2, 3, 3
    x[5, 0] = -1                                            # early return
    x[6, 0] = 3                                             # hit at 0
    ti = first_above(rows, cols, thr)                       # row 0 and 7: no hit
    out, = run(ti, {"x": x})
    np.testing.assert_array_equal(out, _first_above_ref(x, thr))
