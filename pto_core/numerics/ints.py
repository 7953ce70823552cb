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
from .floats import codes_to_storage, exact_float64, float_format
from .rounding import bit_length, round_to_grid, rounding_name, sat_name, split_float

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
    x64, _ = exact_float64(x)
    neg, m, e, E, finite = split_float(x64)
    huge = finite & (E >= 64)                         # |x| >= 2**64: beyond every destination
    small = finite & ~huge
    # Integral part by one rounding on the grid of quantum 1 (E <= 63: K fits in uint64).
    K = round_to_grid(neg, np.where(small, m, 0), np.where(small, e, 0), np.zeros(x64.shape, np.int64), mode)
    one = np.uint64(1)
    lo_mag = np.uint64(1 << (bits - 1)) if signed else np.uint64(0)        # |min|
    hi = np.uint64((1 << (bits - 1)) - 1) if signed else np.uint64((1 << bits) - 1)
    if saturate:
        pos_over = (~neg & (K > hi)) | (huge & ~neg)
        neg_over = (neg & (K > lo_mag)) | (huge & neg)
        mag = np.where(pos_over, hi, np.where(neg_over, lo_mag, K))
    else:
        # exact residue of huge values: (m << (E - 52)) mod 2**64, 0 once the shift reaches 64
        sh = np.clip(E - 52, 0, 63).astype(np.uint64)
        wrapped_huge = np.where(E - 52 >= 64, np.uint64(0), m << sh)
        mag = np.where(huge, wrapped_huge, K)
    mask = np.uint64((1 << bits) - 1)
    twos = np.where(neg, ~mag + one, mag) & mask      # two's complement, low `bits` bits
    inf = np.isinf(x64)
    min_code = np.uint64((-(1 << (bits - 1)) if signed else 0) & ((1 << bits) - 1))
    ext = np.where(neg, min_code, hi)
    twos = np.where(inf, ext, twos)
    twos = np.where(np.isnan(x64), np.uint64(0), twos)
    if bits == 4:
        vals = twos.astype(np.int64)
        if signed:
            vals = (vals ^ 8) - 8
        return vals.astype(out_dtype)
    unsigned = twos.astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])
    return unsigned.view(out_dtype) if signed else unsigned


def int_to_float(x, dst, *, rounding="even", sat="nosat") -> np.ndarray:
    """Convert integers (any numpy int dtype up to 64 bits) to float format ``dst`` exactly
    then with one rounding (no detour through float64 for 64-bit values).

    Args and return value as for `float_to` (``dst`` any float format, including hif8 with
    every non-hybrid rounding).
    """
    arr = np.asarray(x)
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
    return codes_to_storage(codes, fmt)
