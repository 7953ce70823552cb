"""Helpers for the TIK vector API tests: a harness that copies named buffers GM -> UB, runs a
body of TIK vector calls, copies them back; and an independent per-lane reference of the
common execution model (tik_api.md §9.1), written as plain loops over repeats and lanes."""
import ml_dtypes
import numpy as np

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

TIK_DTYPES = {np.dtype(np.float16): "float16", np.dtype(np.float32): "float32", np.dtype(np.int32): "int32",
              np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.uint8): "uint8",
              np.dtype(np.int8): "int8", np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64",
              np.dtype(np.uint64): "uint64", np.dtype(ml_dtypes.bfloat16): "bfloat16"}


def vec_kernel(bufs: dict, body, chip: str = None, scalars: dict = None, build_only: bool = False):
    """Run ``body(ti, ub)`` on UB copies of ``bufs`` (name -> 1-D array, whole 32 B blocks);
    returns name -> final contents. ``scalars``: InputScalar name -> (dtype, value)."""
    if chip:
        set_current_compile_soc_info(chip)
    ti = tik.Tik()
    gm, ub = {}, {}
    for name, arr in bufs.items():
        dt = TIK_DTYPES[arr.dtype]
        gm[name] = ti.Tensor(dt, (arr.size,), name=name, scope=tik.scope_gm)
        ub[name] = ti.Tensor(dt, (arr.size,), name=name + "_ub", scope=tik.scope_ubuf)
        assert arr.nbytes % 32 == 0, name
        ti.data_move(ub[name], gm[name], 0, 1, arr.nbytes // 32, 0, 0)
    ins = {}
    for name, (dt, _) in (scalars or {}).items():
        ins[name] = ti.InputScalar(dt, name=name)
    ub.update(ins)
    body(ti, ub)
    for name, arr in bufs.items():
        ti.data_move(gm[name], ub[name], 0, 1, arr.nbytes // 32, 0, 0)
    ti.BuildCCE(kernel_name="vec_test", inputs=list(gm.values()) + list(ins.values()), outputs=list(gm.values()))
    if build_only:
        return ti
    feed = {k: v.copy() for k, v in bufs.items()}
    feed.update({k: v for k, (_, v) in (scalars or {}).items()})
    outs = ti.tikdb.start_debug(feed_dict=feed, interactive=False)
    return dict(zip(bufs, outs))


def lanes_of(mask, par: int) -> np.ndarray:
    """Active lanes of a TIK mask (count or [hi, lo] bits, highest word first)."""
    if isinstance(mask, (list, tuple)):
        words = [int(w) for w in reversed(mask)]
        bits = np.array([(words[i // 64] >> (i % 64)) & 1 for i in range(64 * len(words))], dtype=bool)
        return np.nonzero(bits[:par])[0]
    return np.arange(int(mask))


def elem(r: int, e: int, blk: int, rep: int, E: int, unit: int = 0, nblk: int = 8) -> int:
    """Element index of lane ``e`` of repeat ``r`` (tik_api.md §9.1 and the stride_unit table)."""
    if unit == 0:
        return r * rep * E + (e // E) * blk * E + e % E
    if unit == 1:
        return r * ((nblk - 1) * blk + 1 + rep) * E + (e // E) * blk * E + e % E
    if unit == 2:
        return r * rep + (e // E) * (E + blk) + e % E
    return r * (nblk * E + (nblk - 1) * blk + rep) + (e // E) * (E + blk) + e % E


def ref_lanewise(fn, dst, srcs, repeat, mask, blks, reps, unit=0, reads_dst=False, par=None):
    """Sequential per-lane reference: repeat by repeat, read every source lane, then write ``dst``.

    ``fn(*values)`` gets one scalar per source (and the old dst value last when ``reads_dst``)."""
    out = dst.copy()
    blks = [1 if blks[0] == 0 and unit in (0, 1) else blks[0]] + list(blks[1:])   # DST_BLOCK_STRIDE_ZERO_IS_ONE
    arrays = [out] + list(srcs)
    par = par or 256 // max(a.dtype.itemsize for a in arrays)
    lanes = lanes_of(mask, par)
    for r in range(repeat):
        vals = []
        for e in lanes:
            args = [a[elem(r, e, b, p, 32 // a.dtype.itemsize, unit)] for a, b, p in zip(srcs, blks[1:], reps[1:])]
            if reads_dst:
                args.append(out[elem(r, e, blks[0], reps[0], 32 // out.dtype.itemsize, unit)])
            vals.append(fn(*args))
        for e, v in zip(lanes, vals):
            out[elem(r, e, blks[0], reps[0], 32 // out.dtype.itemsize, unit)] = v
    return out


def rounded(fn, dtype):
    """``fn`` evaluated in float64 on the lane values, rounded once to ``dtype`` (correct rounding for
    +, -, *, / and sqrt of f16/f32 operands); integers wrap."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return lambda *a: dt.type(fn(*[np.float64(x) for x in a]))
    bits = dt.itemsize * 8

    def wrap(*a):
        v = int(fn(*[int(x) for x in a])) & ((1 << bits) - 1)
        return dt.type(v - (1 << bits) if dt.kind == "i" and v >> (bits - 1) else v)
    return wrap
