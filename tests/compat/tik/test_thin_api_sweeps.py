"""Seeded mini-sweeps of TIK APIs with few tests relative to their use in real kernels (vcmpv_* with
block strides, legacy bitwise ops with block strides and bit masks, vec_trans_scatter with scattered
lists and repeat strides, scalar_max/min/abs), each against a per-lane loop written from tik_api.md."""
import numpy as np
import pytest
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .vec_helpers import vec_kernel

CMP = {"lt": np.less, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
       "le": np.less_equal}


def _at(r, e, blk, rep, per_blk):
    """tik_api.md §9.1: base + r*rep_stride*E + (e // E)*blk_stride*E + e % E."""
    return r * rep * per_blk + (e // per_blk) * blk * per_blk + e % per_blk


@pytest.mark.parametrize("op", sorted(CMP))
@pytest.mark.parametrize("chip, dtype", [("Ascend310", np.float16), ("Ascend910", np.float32)])
def test_vcmpv_block_strides_write_par_bits_per_repeat(op, chip, dtype):
    """§9.8: element i of repeat r -> bit r*PAR + i, LSB first; bits past the last repeat keep dst."""
    rng = np.random.default_rng(len(op))
    per, par, rep_n, blks, reps = 32 // np.dtype(dtype).itemsize, 256 // np.dtype(dtype).itemsize, 3, (2, 0), (9, 1)
    a = rng.integers(-3, 3, 2048).astype(dtype)
    b = rng.integers(-3, 3, 2048).astype(dtype)
    a[::13], b[::17], a[5::29], b[7::31] = np.inf, -np.inf, -0.0, 0.0
    d0 = rng.integers(0, 256, 64, dtype=np.uint8)
    bits = np.unpackbits(d0, bitorder="little")
    for r in range(rep_n):
        for e in range(par):
            bits[r * par + e] = CMP[op](a[_at(r, e, blks[0], reps[0], per)], b[_at(r, e, blks[1], reps[1], per)])
    out = vec_kernel({"d": d0, "a": a, "b": b}, lambda ti, ub: getattr(ti, "vcmpv_" + op)(
        ub["d"], ub["a"], ub["b"], rep_n, *blks, *reps), chip=chip)["d"]
    np.testing.assert_array_equal(out, np.packbits(bits, bitorder="little"))


@pytest.mark.parametrize("op", ["vand", "vor", "vnot"])
def test_legacy_bitwise_block_strides_and_bit_mask(op):
    """§9.1-9.3: u16 bitwise ops with source block strides 0 and 2, a bit mask, inactive lanes unchanged."""
    rng = np.random.default_rng(3)
    mask, rep_n, blks, reps = [0x8000_0000_0000_0001, 0x0F0F_F0F0_1234_8765], 2, (1, 2, 0), (8, 16, 1)
    a = rng.integers(0, 2 ** 16, 1024, dtype=np.uint16)
    b = rng.integers(0, 2 ** 16, 1024, dtype=np.uint16)
    d0 = rng.integers(0, 2 ** 16, 256, dtype=np.uint16)
    words = [mask[1], mask[0]]
    want = d0.copy()
    for r in range(rep_n):
        for e in range(128):
            if (words[e // 64] >> (e % 64)) & 1:
                x, y = a[_at(r, e, blks[1], reps[1], 16)], b[_at(r, e, blks[2], reps[2], 16)]
                want[_at(r, e, blks[0], reps[0], 16)] = ~x if op == "vnot" else (x & y if op == "vand" else x | y)

    def body(ti, ub):
        if op == "vnot":
            ti.vnot(mask, ub["d"], ub["a"], rep_n, blks[0], blks[1], reps[0], reps[1])
        else:
            getattr(ti, op)(mask, ub["d"], ub["a"], ub["b"], rep_n, *blks, *reps)
    out = vec_kernel({"d": d0, "a": a, "b": b}, body, chip="Ascend910")["d"]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype, high", [(np.float16, (False, False)), (np.int32, (False, False)),
                                         (np.uint8, (True, False)), (np.int8, (False, True))])
def test_vec_trans_scatter_scattered_lists_with_repeat_strides(dtype, high):
    """§9.10: 16 list entries in shuffled block slots, 3 repeats, strides in 32 B blocks; b16/b32/b8 placement."""
    rng = np.random.default_rng(9)
    size = np.dtype(dtype).itemsize
    per, rep_n, drs, srs = 32 // size, 3, 32, 16
    sslots, dslots = rng.permutation(16), rng.permutation(16)
    info = np.iinfo(dtype) if size != 2 else None
    src = (rng.standard_normal((rep_n * srs + 16) * per).astype(dtype) if info is None
           else rng.integers(info.min, info.max, (rep_n * srs + 16) * per, dtype=dtype, endpoint=True))
    d0 = np.full((rep_n * drs + 16) * per, 7, dtype)
    want = d0.copy()
    for r in range(rep_n):
        def sb(k):
            return (sslots[k] + r * srs) * per

        def db(e):
            return (dslots[e] + r * drs) * per
        for e in range(16):
            for k in range(16):
                if size == 2:
                    want[db(e) + k] = src[sb(k) + e]
                elif size == 4 and k < 8:
                    want[db(e) + k] = src[sb(k + 8 * (e % 2)) + e // 2]
                elif size == 1:
                    want[db(e) + k + 16 * high[0]] = src[sb(k) + e + 16 * high[1]]
    out = vec_kernel({"d": d0, "s": src}, lambda ti, ub: ti.vec_trans_scatter(
        high[0], high[1], [ub["d"][int(dslots[e]) * per] for e in range(16)],
        [ub["s"][int(sslots[k]) * per] for k in range(16)], rep_n, drs, srs), chip="Ascend310P3")["d"]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype,soc", [("int64", "Ascend910"), ("int64", "Ascend910B1"), ("float32", "Ascend910B1"),
                                       ("float32", "Ascend310P3")])
def test_scalar_max_min_abs(dtype, soc):
    """§5.1 scalar_max / scalar_min / scalar_abs on Scalars loaded from UB, stored back with set_as (the dtypes
    the chips' Intrinsic_max/min/abs rows list: int64 on Ascend910, int64/float32 later; the refusals are in
    test_scalar_fuzz_regressions.py)."""
    set_current_compile_soc_info(soc)
    npdt = np.dtype(dtype)
    n = 32 // npdt.itemsize
    rng = np.random.default_rng(npdt.itemsize)
    a = (rng.standard_normal(n) * 100).astype(npdt) if npdt.kind == "f" else rng.integers(-999, 999, n).astype(npdt)
    b = (rng.standard_normal(n) * 100).astype(npdt) if npdt.kind == "f" else rng.integers(-999, 999, n).astype(npdt)
    b[0] = a[0]
    if dtype == "int64":
        a[1], b[1] = -2 ** 62, 2 ** 62 - 1
    ti = tik.Tik()
    ga, gb = (ti.Tensor(dtype, (n,), name=k, scope=tik.scope_gm) for k in "ab")
    go = ti.Tensor(dtype, (3 * n,), name="o", scope=tik.scope_gm)
    ua, ub = (ti.Tensor(dtype, (n,), name="u" + k, scope=tik.scope_ubuf) for k in "ab")
    uo = ti.Tensor(dtype, (3 * n,), name="uo", scope=tik.scope_ubuf)
    ti.data_move(ua, ga, 0, 1, 1, 0, 0)
    ti.data_move(ub, gb, 0, 1, 1, 0, 0)
    x, y, z = ti.Scalar(dtype), ti.Scalar(dtype), ti.Scalar(dtype)
    for i in range(n):
        x.set_as(ua[i])
        y.set_as(ub[i])
        ti.scalar_max(z, x, y)
        uo[i].set_as(z)
        ti.scalar_min(z, x, y)
        uo[n + i].set_as(z)
        ti.scalar_abs(z, x)
        uo[2 * n + i].set_as(z)
    ti.data_move(go, uo, 0, 1, 3, 0, 0)
    ti.BuildCCE(kernel_name="scalar_max_min_abs", inputs=[ga, gb], outputs=[go])
    out, = ti.tikdb.start_debug({"a": a, "b": b}, False)
    np.testing.assert_array_equal(out, np.concatenate([np.maximum(a, b), np.minimum(a, b), np.abs(a)]))
