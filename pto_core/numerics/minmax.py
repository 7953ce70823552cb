"""Floating-point maximum / minimum on whole arrays, and the GM atomic max/min rule.

`maximum` / `minimum` are IEEE 754-2019 ``maximum`` / ``minimum`` (clause 9.6): a NaN operand
propagates (the first NaN operand when both are NaN) and ``-0 < +0``, so ``maximum(-0, +0) = +0`` and
``minimum(-0, +0) = -0`` whichever operand comes first; integers compare exactly. They serve the
vector ``vmax`` / ``vmin`` family and, through `atomic_maxmin`, every GM atomic max/min.

Pure numpy; works on every float storage dtype of the simulator (f16, f32, f64, ml_dtypes bfloat16).
"""
from __future__ import annotations

import numpy as np


def _is_float(a: np.ndarray) -> bool:
    return a.dtype.kind in "fV" or "bfloat" in str(a.dtype)


def maximum(a: np.ndarray, b) -> np.ndarray:
    """IEEE 754-2019 ``maximum``: NaN propagates (the first NaN operand), ``max(-0, +0) = +0``; ints exact."""
    if not _is_float(a):
        return np.maximum(a, b)
    b = np.broadcast_to(np.asarray(b, dtype=a.dtype), a.shape)
    r = np.where(a > b, a, b)
    r = np.where((a == b) & np.signbit(b), a, r)           # +0 beats -0
    return np.where(np.isnan(a), a, np.where(np.isnan(b), b, r))


def minimum(a: np.ndarray, b) -> np.ndarray:
    """IEEE 754-2019 ``minimum``: NaN propagates (the first NaN operand), ``min(-0, +0) = -0``; ints exact."""
    if not _is_float(a):
        return np.minimum(a, b)
    b = np.broadcast_to(np.asarray(b, dtype=a.dtype), a.shape)
    r = np.where(a < b, a, b)
    r = np.where((a == b) & np.signbit(a), a, r)           # -0 beats +0
    return np.where(np.isnan(a), a, np.where(np.isnan(b), b, r))


def _keep_gm(op: str):
    """``-0 == +0``: the incoming value replaces the GM value only when strictly greater (max) / smaller (min)."""
    def combine(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        better = new > old if op == "max" else new < old
        r = np.where(better, new, old)
        return np.where(np.isnan(old), old, np.where(np.isnan(new), new, r))
    return combine


#: Named choice **ATOMIC_MAXMIN_SIGNED_ZERO**: how a GM atomic max/min of floats orders a -0 and a +0 -- FIXPIPE
#: ``atomic(type = f16|f32|bf16, op = max|min)`` and MTE moves into GM under ``pto.set_atomic_max`` /
#: ``set_atomic_min`` alike. ``"ieee754_2019"``: ``-0 < +0``, so max leaves +0 and min leaves -0 in GM whichever of
#: the two was there first (IEEE 754-2019 ``maximum`` / ``minimum``, clause 9.6; pto-spec's hardware numeric profile
#: ``HardwareNumericFloatingMinMax``, docs/arch/features/minmax.md: of two zeros max gives +0 unless both are -0, min
#: gives the -0 operand; the simulator's ``vmax`` / ``vmin`` already follow it, pto_vector.md). No source describes
#: the atomic unit itself: VPTO gives only ``atomic(type, op)``, the pto-isa CPU simulator has atomic add only
#: (``TStore``: ``dst += out``), CCE / AscendC ``SetAtomicMax`` say nothing of zeros. ``"gm_value"``: the zeros compare
#: equal and the GM value stays. Before h_fix459 numpy's tie rule decided (found by fuzz452): the incoming zero for
#: FIXPIPE (combined in float64) and f32 / bf16 MTE moves, the GM zero for f16 MTE moves. NaN propagates either way
#: (fixpipe_semantics.md #29). migration_guide/fixpipe_semantics.md #37, pto_sync.md (atomics).
ATOMIC_MAXMIN_SIGNED_ZERO = "ieee754_2019"
#: ``(rule, op) -> combine(old GM values, incoming values)`` of float atomics.
ATOMIC_MAXMIN_RULES = {
    ("ieee754_2019", "max"): maximum, ("ieee754_2019", "min"): minimum,
    ("gm_value", "max"): _keep_gm("max"), ("gm_value", "min"): _keep_gm("min"),
}


def atomic_maxmin(old: np.ndarray, new: np.ndarray, op: str) -> np.ndarray:
    """GM atomic ``max`` / ``min`` of the GM values ``old`` and the incoming ``new`` (same shape and dtype):
    integers exact; floats by `ATOMIC_MAXMIN_SIGNED_ZERO` (NaN propagates)."""
    if not _is_float(old):
        return np.maximum(old, new) if op == "max" else np.minimum(old, new)
    return ATOMIC_MAXMIN_RULES[(ATOMIC_MAXMIN_SIGNED_ZERO, op)](old, new)


__all__ = ["maximum", "minimum", "atomic_maxmin", "ATOMIC_MAXMIN_SIGNED_ZERO", "ATOMIC_MAXMIN_RULES"]
