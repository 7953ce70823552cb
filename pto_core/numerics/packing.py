"""Nibble packing of 4-bit data (s4/u4 integers, e2m1x2/e1m2x2 floats).

Memory order: element ``2i`` in the low nibble (bits 3..0) of byte ``i``, element ``2i+1``
in the high nibble (bits 7..4), over the flattened (C-order) element sequence. An odd
count leaves the last high nibble 0.
"""
from __future__ import annotations

import numpy as np

from ..errors import IllegalOperand


def pack_nibbles(codes) -> np.ndarray:
    """Pack 4-bit codes (0..15, or signed -8..7) into bytes: returns ``ceil(n/2)`` uint8."""
    arr = np.asarray(codes).ravel()
    if arr.dtype.kind not in "iub":
        raise IllegalOperand(f"nibble codes must be integers, got {arr.dtype}", operand="codes",
                             value=str(arr.dtype), hint="encode floats first (float_to(x, 'e2m1'))")
    if arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo < -8 or hi > 15:
            raise IllegalOperand(f"nibble codes must lie in [-8, 15], got values in [{lo}, {hi}]",
                                 operand="codes", value=(lo, hi), limit="[-8, 15]",
                                 hint="4-bit data holds 0..15 (unsigned) or -8..7 (signed)")
    nib = (arr.astype(np.int64) & 0xF).astype(np.uint8)
    if nib.size % 2:
        nib = np.concatenate([nib, np.zeros(1, np.uint8)])
    return nib[0::2] | (nib[1::2] << np.uint8(4))


def unpack_nibbles(raw, count: int, signed: bool = False) -> np.ndarray:
    """Unpack ``count`` 4-bit codes from bytes: uint8 0..15, or int8 -8..7 if ``signed``."""
    data = np.asarray(raw)
    if data.dtype != np.uint8:
        raise IllegalOperand(f"packed nibbles must be uint8 bytes, got {data.dtype}", operand="raw",
                             value=str(data.dtype), hint="view the buffer as uint8")
    data = data.ravel()
    if count < 0 or count > 2 * data.size:
        raise IllegalOperand(f"cannot unpack {count} nibbles from {data.size} bytes", operand="count",
                             value=count, limit=f"[0, {2 * data.size}]")
    out = np.empty(2 * data.size, np.uint8)
    out[0::2] = data & np.uint8(0xF)
    out[1::2] = data >> np.uint8(4)
    out = out[:count]
    if signed:
        return ((out.astype(np.int16) ^ 8) - 8).astype(np.int8)
    return out
