"""vsort32 + vmrgsort (the A2/310B sort pair) through TIK kernels; error paths."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, OutOfBounds, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import vec_kernel

RNG = np.random.default_rng(21)


def _records(raw: np.ndarray, dt) -> tuple:
    """(scores, indices) of a byte image of 8-byte records."""
    r = raw.view(np.uint8).reshape(-1, 8)
    return r[:, :np.dtype(dt).itemsize].copy().view(dt).ravel(), r[:, 4:].copy().view(np.uint32).ravel()


@pytest.mark.parametrize("dtype,chip", [("float32", "Ascend910B1"), ("float16", "Ascend310B1")])
def test_vsort32_then_vmrgsort_sorts_128_scores(dtype, chip):
    dt = np.dtype(dtype)
    per = 8 // dt.itemsize
    scores = RNG.permutation(128).astype(dt)
    idx = np.arange(128, dtype=np.uint32) + 1000
    bufs = {"s": scores, "i": idx, "t": np.zeros(128 * per, dt), "o": np.zeros(128 * per, dt)}

    def body(ti, ub):
        ti.vsort32(ub["t"], ub["s"], ub["i"], 4)
        ti.vmrgsort(ub["o"], [ub["t"][32 * per * k] for k in range(4)], [32, 32, 32, 32], False)
    out = vec_kernel(bufs, body, chip=chip)
    got_s, got_i = _records(out["o"], dt)
    order = np.argsort(-scores.astype(np.float64), kind="stable")
    np.testing.assert_array_equal(got_s, scores[order])
    np.testing.assert_array_equal(got_i, idx[order])
    t_s, _ = _records(out["t"], dt)                    # each vsort32 group is sorted on its own
    for g in range(4):
        np.testing.assert_array_equal(t_s[32 * g:32 * g + 32], -np.sort(-scores[32 * g:32 * g + 32]))


def test_vmrgsort_exhausted_stops_at_the_first_empty_list():
    dt = np.dtype(np.float32)
    a = np.zeros(2 * 8, np.uint8)
    b = np.zeros(3 * 8, np.uint8)
    for arr, vals in ((a, [9.0, 1.0]), (b, [8.0, 7.0, 6.0])):
        r = arr.reshape(-1, 8)
        r[:, :4] = np.array(vals, dt).view(np.uint8).reshape(-1, 4)
        r[:, 4:] = np.arange(len(vals), dtype=np.uint32).view(np.uint8).reshape(-1, 4)
    src = np.zeros(64, dt)
    src.view(np.uint8)[:16] = a
    src.view(np.uint8)[32:56] = b
    bufs = {"s": src, "o": np.full(16, -1, dt)}
    out = vec_kernel(bufs, lambda ti, ub: ti.vmrgsort(ub["o"], [ub["s"], ub["s"][8]], [2, 3], True),
                     chip="Ascend910B1")["o"]
    got_s, _ = _records(out[:8], dt)
    np.testing.assert_array_equal(got_s, [9.0, 8.0, 7.0, 6.0])              # list 1 runs out with 6.0: stop
    np.testing.assert_array_equal(out[8:], -1)


def test_vmrgsort_exhausted_counts_reach_scalars():
    dt = np.dtype(np.float32)
    recs = np.zeros((7, 8), np.uint8)
    recs[:, :4] = np.array([9, 1, 0, 8, 7, 6, 0.5], dt).view(np.uint8).reshape(-1, 4)   # lists [9, 1] + [8, 7, 6, 0.5]
    src = np.zeros(32, dt)
    src.view(np.uint8)[:16] = recs[:2].reshape(-1)
    src.view(np.uint8)[32:64] = recs[3:].reshape(-1)
    bufs = {"s": src, "o": np.zeros(16, dt), "c": np.full(8, -9, np.int32)}

    def body(ti, ub):
        sc = [ti.Scalar("int32", name=f"sr{i}") for i in range(4)]
        ti.vmrgsort(ub["o"], [ub["s"], ub["s"][8]], [2, 4], True, 1, sc)
        for i in range(4):
            ub["c"][i].set_as(sc[i])
    out = vec_kernel(bufs, body, chip="Ascend910B1")
    assert list(out["c"][:4]) == [2, 3, 0, 0]           # 9, 8, 7, 6, 1: list 0 runs out with 1


def test_sort2_errors():
    b = {"d": np.zeros(256, np.float16), "s": np.zeros(64, np.float16), "i": np.zeros(64, np.uint32)}
    with raises_tik(UnsupportedOp, match="vsort32 does not support float16 \\(vsort32\\) on Ascend310P3"):
        vec_kernel(b, lambda ti, ub: ti.vsort32(ub["d"], ub["s"], ub["i"], 1), chip="Ascend310P3", build_only=True)
    with raises_tik(IllegalOperand, match="src1's dtype should be uint32"):
        vec_kernel(dict(b, i=np.zeros(64, np.int32)), lambda ti, ub: ti.vsort32(ub["d"], ub["s"], ub["i"], 1),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="dst tensor overflow"):
        vec_kernel(b, lambda ti, ub: ti.vsort32(ub["d"], ub["s"], ub["i"], 3), chip="Ascend910B1", build_only=True)
    with raises_tik(OutOfBounds, match="src0 tensor overflow"):
        vec_kernel(dict(b, d=np.zeros(512, np.float16)), lambda ti, ub: ti.vsort32(ub["d"], ub["s"], ub["i"], 3),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="element_count_list\\[0\\] = 65536 is outside"):
        vec_kernel(b, lambda ti, ub: ti.vmrgsort(ub["d"], [ub["s"]], [65536], False), chip="Ascend910B1",
                   build_only=True)
    with raises_tik(IllegalOperand, match="repeat_times > 1 needs four lists"):
        vec_kernel(b, lambda ti, ub: ti.vmrgsort(ub["d"], [ub["s"], ub["s"][16]], [2, 2], False, 2),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="vms4_sr_scalar_array should be a list of at least 4 Scalars"):
        vec_kernel(b, lambda ti, ub: ti.vmrgsort(ub["d"], [ub["s"]], [2], True, 1, [ti.Scalar("int32")]),
                   chip="Ascend910B1", build_only=True)
    with raises_tik(IllegalOperand, match="vms4_sr can't be read in non-exhausted mode"):
        vec_kernel(b, lambda ti, ub: ti.vmrgsort(ub["d"], [ub["s"]], [2], False, 1,
                                                 [ti.Scalar("int32") for _ in range(4)]),
                   chip="Ascend910B1", build_only=True)
