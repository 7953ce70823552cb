"""Rounding modes, saturation modes and the one bit-level rounding kernel.

Every conversion in this package is "exact value -> one rounding -> encode". The exact
value of each element is held as an integer significand and a power of two::

    |value| = m * 2**e        m: uint64, e: int64
    E = floor(log2 |value|)   (the binade)

A target format says, for each binade ``E``, the exponent ``Q`` of its quantum (one unit
in the last place): IEEE-like formats use ``Q = max(E, emin) - p`` (``p`` fraction bits;
below ``emin`` the quantum stays fixed, which is exactly gradual underflow). `round_to_grid`
then rounds ``m * 2**e`` to a whole number ``K`` of quanta with one of the six modes, so the
rounded magnitude is ``K * 2**Q``. A carry out of the binade simply gives
``K == 2**(p+1)``, i.e. the next power of two, and flows into the exponent when the format
encodes ``(K, Q)``. No intermediate format is involved, so there is no double rounding.

Mode names (`ROUNDING`) and the aliases used by TIK (``vconv`` suffixes), Ascend C
(``CAST_*``) and the PTO micro-ISA (``R A F C Z O``) are resolved by `rounding_name`.
Saturation modes (`SAT_MODES`) are resolved by `sat_name`.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnknownName

#: Canonical rounding-mode names.
#:
#: ``even``  nearest, ties to the candidate whose encoding has an even last bit (IEEE RNE,
#:           TIK ``r``/``round``, Ascend C ``CAST_RINT``);
#: ``away``  nearest, ties away from zero (TIK ``a``/``away-zero``, Ascend C ``CAST_ROUND``,
#:           the HiF8 "TA" mode);
#: ``floor`` toward -inf; ``ceil`` toward +inf; ``zero`` toward zero (truncate);
#: ``odd``   round to odd: truncate, then pick the candidate with an odd last bit if inexact
#:           (TIK ``o``, Ascend C ``CAST_ODD``).
ROUNDING = ("even", "away", "floor", "ceil", "zero", "odd")

#: Saturation modes (FIXPIPE ``sat`` / ``sat(preserve_nan)`` / ``nosat``; ACL overflow mode).
#:
#: ``sat``           finite overflow and +-inf clamp to the destination's finite extrema,
#:                   NaN -> 0;
#: ``preserve_nan``  like ``sat`` but NaN stays NaN where the destination has a NaN;
#: ``nosat``         IEEE-754: overflow -> inf (NaN for formats without inf), following the
#:                   rounding direction; NaN stays NaN.
SAT_MODES = ("sat", "preserve_nan", "nosat")

_ROUNDING_ALIASES = {
    "even": "even", "r": "even", "rint": "even", "round": "even", "round_even": "even",
    "rne": "even", "nearest": "even", "cast_rint": "even", "to_even": "even",
    "away": "away", "a": "away", "away-zero": "away", "away_zero": "away", "round_away": "away",
    "ta": "away", "cast_round": "away", "away_from_zero": "away",
    "floor": "floor", "f": "floor", "cast_floor": "floor", "down": "floor",
    "ceil": "ceil", "c": "ceil", "ceiling": "ceil", "cast_ceil": "ceil", "up": "ceil",
    "zero": "zero", "z": "zero", "to-zero": "zero", "to_zero": "zero", "trunc": "zero",
    "cast_trunc": "zero",
    "odd": "odd", "o": "odd", "cast_odd": "odd", "round_odd": "odd",
}

_SAT_ALIASES = {
    "sat": "sat", "saturate": "sat", "saturation": "sat", True: "sat",
    "preserve_nan": "preserve_nan", "sat(preserve_nan)": "preserve_nan", "sat_preserve_nan": "preserve_nan",
    "nosat": "nosat", "no_sat": "nosat", "inf_nan": "nosat", "ieee": "nosat", False: "nosat",
}


def rounding_name(name) -> str:
    """Canonical rounding-mode name for any accepted spelling (case-insensitive).

    Raises `UnknownName` listing the canonical names when the spelling is unknown.
    """
    key = name.strip().lower() if isinstance(name, str) else name
    found = _ROUNDING_ALIASES.get(key) if isinstance(key, str) else None
    if found is None:
        raise UnknownName(f"unknown rounding mode {name!r}", operand="rounding", value=name,
                          limit="one of " + ", ".join(ROUNDING),
                          hint="use even (r/round/rint), away (a/away-zero), floor (f), ceil (c), "
                               "zero (z/to-zero/trunc) or odd (o)")
    return found


def sat_name(mode) -> str:
    """Canonical saturation-mode name (``True`` -> ``sat``, ``False`` -> ``nosat``)."""
    key = mode.strip().lower() if isinstance(mode, str) else mode
    found = _SAT_ALIASES.get(key) if isinstance(key, (str, bool)) else None
    if found is None:
        raise UnknownName(f"unknown saturation mode {mode!r}", operand="sat", value=mode,
                          limit="one of " + ", ".join(SAT_MODES),
                          hint="use 'sat', 'preserve_nan' (sat(preserve_nan)) or 'nosat'")
    return found


# ----------------------------------------------------------------------------- exact values


def split_float(x: np.ndarray):
    """Exact decomposition of a float64 array.

    Returns ``(neg, m, e, E, finite_nonzero)``: sign bit (including the sign of -0.0 and of
    NaN), significand ``m`` (uint64, < 2**53), ``e`` with ``|x| = m * 2**e`` and the binade
    ``E = floor(log2 |x|)``. ``m``, ``e`` and ``E`` are 0 where ``x`` is zero, inf or NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    neg = np.signbit(x)
    finite_nonzero = np.isfinite(x) & (x != 0)
    frac, ex = np.frexp(np.where(finite_nonzero, np.abs(x), 1.0))   # frac in [0.5, 1)
    m = np.ldexp(frac, 53).astype(np.uint64)                          # exact: 53-bit integer
    ex = ex.astype(np.int64)
    m = np.where(finite_nonzero, m, np.uint64(0))
    e = np.where(finite_nonzero, ex - 53, 0)
    E = np.where(finite_nonzero, ex - 1, 0)
    return neg, m, e, E, finite_nonzero


def bit_length(m: np.ndarray) -> np.ndarray:
    """Number of significant bits of each uint64 (0 for 0), as int64."""
    m = np.asarray(m, dtype=np.uint64)
    hi = (m >> np.uint64(32)).astype(np.float64)
    lo = (m & np.uint64(0xFFFFFFFF)).astype(np.float64)
    # frexp of an exactly representable 32-bit half gives its bit length exactly.
    bl_hi = np.frexp(hi)[1].astype(np.int64)
    bl_lo = np.frexp(lo)[1].astype(np.int64)
    return np.where(hi > 0, bl_hi + 32, bl_lo)


def round_to_grid(neg, m, e, Q, mode: str, parity=None):
    """Round ``m * 2**e`` to a whole number of quanta ``2**Q`` with one rounding.

    Args:
        neg: bool array, sign of the value (used by floor/ceil).
        m: uint64 significands; must be < 2**63 wherever ``Q - e > 63``.
        e: int64 exponents of ``m``'s last bit.
        Q: int64 quantum exponents (per element).
        mode: canonical rounding name (see `ROUNDING`).
        parity: optional ``f(kept) -> 0/1 array``, the last encoded bit of the lower
            candidate ``kept * 2**Q``; defaults to ``kept & 1``. Formats whose last encoded
            bit is not the significand's (pure-exponent binades) pass their own.

    Returns:
        ``K`` (uint64): the rounded magnitude is ``K * 2**Q`` (``K`` may be a power of two
        one binade up after a carry).
    """
    m = np.asarray(m, dtype=np.uint64)
    shift = np.asarray(Q, dtype=np.int64) - np.asarray(e, dtype=np.int64)
    exact_shift = np.clip(-shift, 0, 63).astype(np.uint64)            # shift <= 0: no rounding
    s = np.clip(shift, 0, 64)
    s_c = np.minimum(s, 63).astype(np.uint64)
    wide = s >= 64
    one = np.uint64(1)
    kept = np.where(wide, np.uint64(0), m >> s_c)
    mask = np.where(wide, ~np.uint64(0), (one << s_c) - one)
    dropped = m & mask
    half = np.where(wide, one << np.uint64(63), one << (np.maximum(s_c, one) - one))
    inexact = (dropped != 0) & (s > 0)
    gt = inexact & (dropped > half)
    eq = inexact & (dropped == half)
    if mode == "zero":
        up = np.zeros(m.shape, dtype=bool)
    elif mode == "away":
        up = gt | eq
    elif mode == "floor":
        up = inexact & neg
    elif mode == "ceil":
        up = inexact & ~neg
    elif mode in ("even", "odd"):
        par = (kept & one) if parity is None else np.asarray(parity(kept), dtype=np.uint64)
        up = (gt | (eq & (par == 1))) if mode == "even" else (inexact & (par == 0))
    else:
        raise UnknownName(f"unknown rounding mode {mode!r}", operand="rounding", value=mode,
                          limit="one of " + ", ".join(ROUNDING))
    K = kept + up.astype(np.uint64)
    return np.where(shift <= 0, m << exact_shift, K)


def overflow_to_inf(neg, mode: str) -> np.ndarray:
    """IEEE-754 overflow direction: True where an overflowing result becomes +-inf
    (nearest modes, floor for negatives, ceil for positives), False where it becomes the
    largest finite magnitude (toward zero, floor for positives, ceil for negatives, odd).
    """
    neg = np.asarray(neg, dtype=bool)
    if mode in ("even", "away", "hybrid"):
        return np.ones(neg.shape, dtype=bool)
    if mode == "floor":
        return neg.copy()
    if mode == "ceil":
        return ~neg
    return np.zeros(neg.shape, dtype=bool)   # zero, odd
