"""FP19: the FIXPIPE scale precision (sign 1, exponent 8 bias 127, fraction 10).

An FP19 scale is an f32 payload with the low 13 fraction bits dropped (hardware reads
``bits[31:13]``); dropping is truncation, not rounding. Sources: pto-isa
``include/pto/cpu/common.hpp`` (``& 0xFFFFE000`` in the tests) and pto-spec ADR-0085.
"""
from __future__ import annotations

import numpy as np

from .floats import exact_float64, float_to


def _payload_f32(x) -> np.ndarray:
    """The f32 payload register value: f16/bf16/f32 widen exactly; float64 (e.g. Python
    floats) is first rounded to f32 with RNE, as placing it in an f32 register does."""
    arr = np.asarray(x)
    x64, src = exact_float64(arr)
    if src == np.dtype(np.float64):
        return float_to(x64, "f32")
    with np.errstate(invalid="ignore"):
        return np.asarray(arr, dtype=np.float32)         # exact widening; f32 bits unchanged


def fp19_bits(x) -> np.ndarray:
    """The 19-bit FP19 field (uint32, ``f32_bits >> 13``) of f16/bf16/f32 values."""
    return _payload_f32(x).view(np.uint32) >> np.uint32(13)


def fp19(x) -> np.ndarray:
    """``x`` widened to f32 with the low 13 fraction bits cleared (the value FIXPIPE multiplies by)."""
    return (_payload_f32(x).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
