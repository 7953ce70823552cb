"""Sequential reference model of the repeat-form vector ops (tests only).

A literal transcription of tik_api.md §9.1: for each repeat in order, for each active
lane, compute the byte address from the documented formula, read all sources of the
repeat, compute each lane with a Python scalar function, then write the destination
lanes. No numpy vectorisation, no shared code with `pto_core.ops.vector_engine`.
"""
from __future__ import annotations

import math

import numpy as np

BLOCK = 32


def lane_offset(size: int, par: int, blk: int, rep: int, unit: int, r: int, e: int) -> int:
    """Byte offset of lane ``e`` of repeat ``r`` (tik_api.md §9.1 and the TIK extent formulas)."""
    epb = BLOCK // size
    nblk = max(1, par * size // BLOCK)
    j, k = divmod(e, epb)
    if unit == 0:
        return r * rep * BLOCK + j * blk * BLOCK + k * size
    if unit == 1:
        return r * ((nblk - 1) * blk + 1 + rep) * BLOCK + j * blk * BLOCK + k * size
    if unit == 2:
        return r * rep * size + j * (epb + blk) * size + k * size
    return r * (nblk * epb + (nblk - 1) * blk + rep) * size + j * (epb + blk) * size + k * size


def active_lanes(par: int, mask, repeat: int, counter=None):
    """List of (repeat count, per-repeat list of active lane sets) for a mask spec."""
    if counter is not None:
        rep = -(-counter // par)
        return rep, [set(range(min(par, counter - r * par))) for r in range(rep)]
    if mask is None:
        lanes = set(range(par))
    elif isinstance(mask, int):
        lanes = set(range(mask))
    else:
        words = list(reversed(mask))
        lanes = {i for i in range(par) if (words[i // 64] >> (i % 64)) & 1}
    return repeat, [lanes] * repeat


def get(mem: np.ndarray, off: int, dt: np.dtype):
    return mem[off:off + dt.itemsize].view(dt)[0]


def put(mem: np.ndarray, off: int, dt: np.dtype, value) -> None:
    mem[off:off + dt.itemsize] = np.array([value], dtype=dt).view(np.uint8)


def dst_blk(blk: int, unit: int) -> int:
    """A destination's block stride: 0 moves by one block under stride units 0 and 1 (the named choice
    DST_BLOCK_STRIDE_ZERO_IS_ONE: TIK's front end and Huawei's CPU model of the intrinsics do so)."""
    return 1 if blk == 0 and unit in (0, 1) else blk


def run_lanewise(mem: np.ndarray, operands: list, par: int, lane_sets: list, fn, *, unit: int = 0):
    """Apply ``fn`` lane by lane, repeat by repeat.

    ``operands``: list of dicts ``{"name", "base", "dtype" (np.dtype), "blk", "rep", "role"}``
    (the first with a ``"w"`` in its role is the destination). ``fn(**sources)`` returns
    the destination value. Reads of a repeat all happen before its writes.
    """
    operands = [dict(o, blk=dst_blk(o["blk"], unit)) if "w" in o["role"] else o for o in operands]
    dst = next(o for o in operands if "w" in o["role"])
    for r, lanes in enumerate(lane_sets):
        results = {}
        for e in sorted(lanes):
            vals = {}
            for o in operands:
                if "r" in o["role"]:
                    off = o["base"] + lane_offset(o["dtype"].itemsize, par, o["blk"], o["rep"], unit, r, e)
                    vals[o["name"]] = get(mem, off, o["dtype"])
            results[e] = fn(**vals)
        for e in sorted(lanes):
            off = dst["base"] + lane_offset(dst["dtype"].itemsize, par, dst["blk"], dst["rep"], unit, r, e)
            put(mem, off, dst["dtype"], results[e])


# ----------------------------------------------------------------------------- scalar semantics


def f16_round(x: float) -> np.float16:
    """Exact value (Python float, f64) rounded once to f16, IEEE overflow."""
    with np.errstate(over="ignore"):
        return np.float16(x)


def saturate(value, dt: np.dtype):
    """ACL saturation mode: +/-inf and overflow -> +/-max, NaN -> 0."""
    v = float(value)
    big = float(np.finfo(dt).max)
    if math.isnan(v):
        return dt.type(0)
    return dt.type(min(max(v, -big), big)) if abs(v) > big else value


def wrap(value: int, dt: np.dtype):
    bits = dt.itemsize * 8
    v = int(value) & ((1 << bits) - 1)
    if np.issubdtype(dt, np.signedinteger) and v >= 1 << (bits - 1):
        v -= 1 << bits
    return dt.type(v)


def round_to(value: float, dt: np.dtype):
    """f64 value rounded once to float dtype ``dt``."""
    with np.errstate(over="ignore"):
        return dt.type(value)
