"""Float <-> integer conversions with every rounding mode and saturation.

``float_to_int`` rounds the exact input to an integer with one rounding, then saturates
(TIK ``vconv``/Ascend C ``Cast``: "overflow saturates by default") or wraps modulo
``2**bits`` (pto-spec Sat=0). NaN always gives 0; +-inf always gives the destination's
extreme (an infinite value has no residue modulo ``2**bits``).

``int_to_float`` converts integers (up to 64 bits, exactly) to a float format with one
rounding and the `SAT_MODES` policy.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import dtype as _dtype
from ..errors import IllegalOperand, UnknownName
from .floats import codes_to_storage, exact_float64, flat, float_format
from .rounding import bit_length, round_integral_f64, rounding_name, sat_name, split_float

#: (bits, signed, numpy result dtype) of every integer destination.
INT_TARGETS = {
    "s8": (8, True, np.int8), "u8": (8, False, np.uint8),
    "s16": (16, True, np.int16), "u16": (16, False, np.uint16),
    "s32": (32, True, np.int32), "u32": (32, False, np.uint32),
    "s64": (64, True, np.int64), "u64": (64, False, np.uint64),
    "s4": (4, True, np.int8), "u4": (4, False, np.uint8),
}


def _int_target(dst):
    name = _dtype(dst).name
    if name not in INT_TARGETS:
        raise UnknownName(f"{name!r} is not an integer conversion target", operand="dst", value=dst,
                          limit="one of " + ", ".join(INT_TARGETS),
                          hint="use float_to for float destinations")
    return INT_TARGETS[name]


def float_to_int(x, dst, *, rounding="even", saturate=True) -> np.ndarray:
    """Round float values to integers of type ``dst`` with one rounding.

    Args:
        x: float values (f16/bf16/f32/f64, any shape).
        dst: ``s8 u8 s16 u16 s32 u32 s64 u64 s4 u4`` (s4/u4 returned unpacked, one int8/uint8
            per element; pack with `pack_nibbles`).
        rounding: a `ROUNDING` name or alias.
        saturate: clamp out-of-range results to the destination range (default, TIK/Ascend C
            behaviour); ``False`` wraps modulo ``2**bits`` (two's complement).

    NaN -> 0; +-inf -> the destination's max/min in both modes.
    """
    bits, signed, out_dtype = _int_target(dst)
    mode = rounding_name(rounding)
    arr, shape = flat(x)
    x64, _ = exact_float64(arr)
    r = round_integral_f64(x64, mode)                  # exact integral float64 (inf/NaN kept)
    lo = -(1 << (bits - 1)) if signed else 0
    hi = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
    nan = np.isnan(r)
    r = np.where(nan, 0.0, r)
    # the integers as int64/uint64 (powers of two and in-range integers are exact in float64)
    work = np.uint64 if (bits == 64 and not signed) else np.int64
    if saturate:
        too_big = r >= float(hi + 1)
        too_small = r < float(lo)
        inside = np.where(too_big | too_small, 0.0, r)
        vals = inside.astype(work)
        vals = np.where(too_big, work(hi), np.where(too_small, work(lo), vals))
    else:
        inf = np.isinf(r)
        finite = np.where(inf, 0.0, r)
        if bits < 64:
            vals = np.fmod(finite, float(1 << bits)).astype(np.int64) & ((1 << bits) - 1)   # exact residue
        else:
            vals = _wrap64(finite)
            vals = vals.view(np.int64) if signed else vals
        vals = np.where(inf & (r > 0), work(hi), np.where(inf, work(lo), vals.astype(work)))
    if bits == 4:
        v = vals.astype(np.int64) & 0xF
        return (((v ^ 8) - 8) if signed else v).astype(out_dtype).reshape(shape)
    if signed and not saturate and bits < 64:
        vals = vals.astype({8: np.uint8, 16: np.uint16, 32: np.uint32}[bits]).view(out_dtype)
    return vals.astype(out_dtype).reshape(shape)


def _wrap64(r: np.ndarray) -> np.ndarray:
    """Integral finite float64 values modulo 2**64, as uint64 (two's complement)."""
    small = np.abs(r) < 2.0 ** 63
    low = np.where(small, r, 0.0).astype(np.int64).view(np.uint64)
    neg, m, e, E, finite = split_float(np.where(small, 0.0, r))     # |r| >= 2**63: m * 2**e, e >= 11
    mag = np.where(e >= 64, np.uint64(0), m << np.clip(e, 0, 63).astype(np.uint64))
    big = np.where(neg, ~mag + np.uint64(1), mag)
    return np.where(small, low, big)


def int_to_float(x, dst, *, rounding="even", sat="nosat") -> np.ndarray:
    """Convert integers (any numpy int dtype up to 64 bits) to float format ``dst`` exactly
    then with one rounding (no detour through float64 for 64-bit values).

    Args and return value as for `float_to` (``dst`` any float format, including hif8 with
    every non-hybrid rounding).
    """
    arr, shape = flat(x)
    if arr.dtype.kind not in "iu":
        raise IllegalOperand(f"expected integer values, got {arr.dtype}", operand="x", value=str(arr.dtype),
                             hint="use float_to for float sources")
    fmt = float_format(dst)
    mode = rounding_name(rounding)
    satm = sat_name(sat)
    if arr.dtype.kind == "u":
        neg = np.zeros(arr.shape, bool)
        mag = arr.astype(np.uint64)
    else:
        v = arr.astype(np.int64)
        neg = v < 0
        raw = v.view(np.uint64)
        mag = np.where(neg, ~raw + np.uint64(1), raw)          # |INT64_MIN| = 2**63 fits
    nonzero = mag != 0
    E = np.where(nonzero, bit_length(mag) - 1, 0)
    codes = fmt.encode(neg, mag, np.zeros(arr.shape, np.int64), E, mode, satm)
    return codes_to_storage(codes, fmt).reshape(shape)
