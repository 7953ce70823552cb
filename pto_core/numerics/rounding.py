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


#: Spellings of HiF8's hybrid rounding (Ascend C ``CAST_HYBRID``, FIXPIPE ``_pre_hybrid``).
HYBRID_NAMES = ("hybrid", "cast_hybrid", "hr")


def is_hybrid(name) -> bool:
    """Whether ``name`` spells HiF8's hybrid rounding (not one of the six `ROUNDING` modes)."""
    return isinstance(name, str) and name.strip().lower() in HYBRID_NAMES


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


_MANT52 = np.uint64((1 << 52) - 1)
_HIDDEN52 = np.uint64(1 << 52)
_ABS64 = np.uint64((1 << 63) - 1)


def split_float(x: np.ndarray):
    """Exact decomposition of a float64 array, read from its bit fields.

    Returns ``(neg, m, e, E, finite_nonzero)``: sign bit (including the sign of -0.0 and of
    NaN), significand ``m`` (uint64, < 2**53), ``e`` with ``|x| = m * 2**e`` and the binade
    ``E = floor(log2 |x|)``. For float64 subnormals ``E`` is -1023, a lower bound: they lie far
    below every target format, where the quantum no longer depends on ``E``. ``m``, ``e``
    and ``E`` are 0 where ``x`` is zero, inf or NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    bits = (x if x.flags.c_contiguous else x.copy()).view(np.uint64)       # keeps 0-d shape
    neg = (bits >> np.uint64(63)).astype(bool)
    expf = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    finite_nonzero = (expf != 0x7FF) & ((bits & _ABS64) != 0)
    normal = expf != 0
    m = bits & _MANT52
    m |= np.where(normal, _HIDDEN52, np.uint64(0))
    m[~finite_nonzero] = 0
    e = np.where(normal, expf - 1075, -1074)
    E = np.where(normal, expf - 1023, -1023)
    e[~finite_nonzero] = 0
    E[~finite_nonzero] = 0
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
        m: uint64 significands; must be < 2**62 wherever ``Q - e > 63`` (true for every float
            source; integer sources never need a shift above 63).
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
    one = np.uint64(1)
    s = np.clip(shift, 0, 63).astype(np.uint64)
    kept = m >> s
    unit = one << s
    dropped = m & (unit - one)
    half = unit >> one                                   # 0 when nothing is dropped
    if mode == "zero":
        K = kept
    else:
        inexact = dropped != 0
        if mode == "away":
            up = dropped >= half
            up &= inexact
        elif mode == "floor":
            up = inexact & neg
        elif mode == "ceil":
            up = inexact & ~neg
        elif mode in ("even", "odd"):
            par = (kept & one) if parity is None else np.asarray(parity(kept), dtype=np.uint64)
            if mode == "even":
                up = (dropped > half) | ((dropped == half) & (par == one))
                up &= inexact
            else:
                up = inexact & (par == 0)
        else:
            raise UnknownName(f"unknown rounding mode {mode!r}", operand="rounding", value=mode,
                              limit="one of " + ", ".join(ROUNDING))
        K = kept + up.astype(np.uint64)
    exact = shift < 0
    if exact.any():                                      # value already on a finer grid than 2**Q
        K = np.where(exact, m << np.clip(-shift, 0, 63).astype(np.uint64), K)
    return K


def round_integral_f64(x: np.ndarray, mode: str) -> np.ndarray:
    """float64 values rounded to integral float64 values (IEEE roundToIntegral; exact).

    Every step is exact: ``trunc``, ``x - trunc(x)`` (the fraction bits of ``x``) and adding
    one to an integer below 2**53. The sign of zero is kept; inf and NaN pass through.
    """
    x = np.asarray(x, dtype=np.float64)
    if mode == "even":
        return np.rint(x)
    if mode == "floor":
        return np.floor(x)
    if mode == "ceil":
        return np.ceil(x)
    t = np.trunc(x)
    if mode == "zero":
        return t
    with np.errstate(invalid="ignore"):
        frac = np.abs(x - t)                            # NaN for inf inputs: no step
        if mode == "away":
            step = frac >= 0.5
        elif mode == "odd":
            step = (frac > 0) & (np.fmod(t, 2.0) == 0)
        else:
            raise UnknownName(f"unknown rounding mode {mode!r}", operand="rounding", value=mode,
                              limit="one of " + ", ".join(ROUNDING))
    return t + np.copysign(step.astype(np.float64), x)


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
