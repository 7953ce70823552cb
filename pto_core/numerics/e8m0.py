"""E8M0: the unsigned power-of-two scale format of the OCP MX formats (``pto.mad_mx`` scales).

``code`` 0..254 means ``2**(code - 127)`` (2**-127 .. 2**127); 0xFF is NaN. There is no zero,
no sign and no infinity.
"""
from __future__ import annotations

from functools import lru_cache

import ml_dtypes
import numpy as np

from ..errors import IllegalOperand
from .floats import exact_float64, flat
from .rounding import overflow_to_inf, round_to_grid, rounding_name, sat_name, split_float

E8M0_NAN = 0xFF
E8M0_MAX_CODE = 0xFE
E8M0_BIAS = 127


@lru_cache(maxsize=None)
def _table() -> np.ndarray:
    codes = np.arange(256, dtype=np.int64)
    t = np.where(codes == E8M0_NAN, np.nan, np.ldexp(1.0, codes - E8M0_BIAS)).astype(np.float32)
    t.flags.writeable = False
    return t


def e8m0_decode(codes) -> np.ndarray:
    """float32 values ``2**(code - 127)`` of E8M0 codes (uint8 or ml_dtypes.float8_e8m0fnu); 0xFF -> NaN."""
    arr = np.asarray(codes)
    if arr.dtype == np.dtype(ml_dtypes.float8_e8m0fnu):
        arr = arr.view(np.uint8)
    if arr.dtype != np.uint8:
        raise IllegalOperand(f"E8M0 codes must be uint8 (or float8_e8m0fnu), got {arr.dtype}", operand="codes",
                             value=str(arr.dtype), hint="pass the raw scale bytes as a uint8 array")
    return _table()[arr]


def e8m0_encode(x, rounding="floor", sat="nosat") -> np.ndarray:
    """Encode positive values as E8M0 codes (uint8) with one rounding on the power-of-two grid.

    Args:
        x: non-negative float values (f16/bf16/f32/f64).
        rounding: any `ROUNDING` mode; default ``"floor"`` (= ``floor(log2 x)``, the OCP MX
            shared-exponent rule). ``even``/``odd`` break ties (1.5 * 2**E) by the parity of
            the code, as IEEE does for the last encoded bit.
        sat: ``sat`` clamps overflow and +inf to 0xFE (2**127) and maps NaN to 0x00;
            ``preserve_nan`` keeps NaN as 0xFF; ``nosat`` gives 0xFF (NaN, E8M0 has no inf)
            for overflow in the rounding direction (IEEE rule) and for +inf.

    Values below 2**-127, including zero, clamp to code 0x00 (2**-127): E8M0 has no zero.

    Raises:
        IllegalOperand: if any value is negative (E8M0 is unsigned).
    """
    mode = rounding_name(rounding)
    satm = sat_name(sat)
    arr, shape = flat(x)
    x64, _ = exact_float64(arr)
    negative = x64 < 0
    if negative.any():
        first = int(np.flatnonzero(negative.ravel())[0])
        raise IllegalOperand(f"E8M0 encodes positive scales; got {int(negative.sum())} negative values "
                             f"(first: {x64.ravel()[first]!r} at flat index {first})", operand="x",
                             value=float(x64.ravel()[first]), limit=">= 0",
                             hint="encode the magnitude (e.g. the group absolute maximum)")
    neg, m, e, E, finite = split_float(x64)
    Q = np.maximum(E, -E8M0_BIAS)
    K = round_to_grid(neg, m, e, Q, mode, parity=lambda kept: (Q + E8M0_BIAS) & 1)
    code = Q + E8M0_BIAS + (K.astype(np.int64) - 1)        # K is 1 (stay) or 2 (next power)
    code = np.where(finite & (E < -E8M0_BIAS), 0, code)    # below 2**-127: clamp to the smallest scale
    over = finite & (code > E8M0_MAX_CODE)
    to_nan = np.zeros(x64.shape, bool)
    if satm == "nosat":
        to_nan = over & overflow_to_inf(neg, mode)
    code = np.where(over, np.where(to_nan, E8M0_NAN, E8M0_MAX_CODE), code)
    code = np.where(np.isinf(x64), E8M0_NAN if satm == "nosat" else E8M0_MAX_CODE, code)
    code = np.where(x64 == 0, 0, code)
    code = np.where(np.isnan(x64), 0 if satm == "sat" else E8M0_NAN, code)
    return code.astype(np.uint8).reshape(shape)
