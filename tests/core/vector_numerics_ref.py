"""Test-only reference conversions for the vector tests: an independent reference for expected
values (exact rational arithmetic with neighbour selection, no shared code with
``pto_core.numerics``; same function names and signatures as that module's contract).

Formats: f16, bf16, f32 (float destinations) and the integer types. Values are handled as
exact Python/NumPy float64 (exact for f16/bf16/f32 inputs and integers below 2**53) and
per element with Python integers for wider integers.
"""
from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

ROUNDING = ("even", "away", "floor", "ceil", "zero", "odd")
SAT_MODES = ("sat", "preserve_nan", "nosat")
_ALIAS = {"r": "even", "rint": "even", "round": "even", "round_even": "even", "a": "away", "away-zero": "away",
          "round_away": "away", "f": "floor", "c": "ceil", "ceiling": "ceil", "z": "zero", "to-zero": "zero",
          "trunc": "zero", "o": "odd"}
_FLOAT = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
_INT = {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "s32": np.int32, "u32": np.uint32,
        "s64": np.int64, "u64": np.uint64}


def rounding_name(name: str) -> str:
    name = str(name).lower()
    name = _ALIAS.get(name, name)
    if name not in ROUNDING:
        raise ValueError(f"unknown rounding {name!r}")
    return name


def _name(d) -> str:
    return getattr(d, "name", d)


def _float_round_exact(value: Fraction, t, mode: str):
    """Round one exact rational to float type ``t`` (may give +/-inf)."""
    cand = t(float(value)) if abs(value) < 2 ** 1000 else t(np.inf if value > 0 else -np.inf)
    c = Fraction(float(cand)) if np.isfinite(float(cand)) else None
    if c is not None and c == value:
        return cand
    # neighbours lo <= value <= hi in the target format (inf beyond the range)
    if c is not None and c < value:
        lo = cand
        hi = np.nextafter(cand, t(np.inf))
    elif c is not None:
        hi = cand
        lo = np.nextafter(cand, t(-np.inf))
    else:  # cand is +/-inf: value at least half an ulp beyond the largest finite value
        if mode in ("even", "away"):
            return cand
        big = t(ml_dtypes.finfo(t).max)
        lo, hi = (big, t(np.inf)) if value > 0 else (t(-np.inf), -big)
    if mode == "floor":
        return lo
    if mode == "ceil":
        return hi
    if mode == "zero":
        return lo if value > 0 else hi
    if mode == "odd":
        for x in (lo, hi):
            if np.isfinite(float(x)) and (int(np.asarray(x).view(_uint_for(t))) & 1):
                return x
        return lo if value > 0 else hi
    flo = Fraction(float(lo)) if np.isfinite(float(lo)) else None
    fhi = Fraction(float(hi)) if np.isfinite(float(hi)) else None
    if flo is None:
        return hi
    if fhi is None:
        # beyond max finite: nearest rounding overflows only from the half-ulp point on (cand was inf)
        return hi
    dl, dh = value - flo, fhi - value
    if dl < dh:
        return lo
    if dh < dl:
        return hi
    if mode == "away":
        return hi if value > 0 else lo
    return lo if (int(np.asarray(lo).view(_uint_for(t))) & 1) == 0 else hi


def _uint_for(t):
    return np.uint16 if np.dtype(t).itemsize == 2 else np.uint32


def _apply_sat(out: np.ndarray, t, sat: str) -> np.ndarray:
    if sat == "nosat":
        return out
    big = ml_dtypes.finfo(t).max
    f = out.astype(np.float64)
    res = np.clip(f, -float(big), float(big))
    if sat == "sat":
        res = np.nan_to_num(res, nan=0.0)
    return res.astype(t)


def float_to(x, dst, *, rounding="even", sat="nosat"):
    t = _FLOAT[_name(dst)]
    mode = rounding_name(rounding)
    x = np.asarray(x)
    out = np.empty(x.shape, dtype=t)
    flat = x.reshape(-1)
    res = out.reshape(-1)
    for k, v in enumerate(flat):
        fv = float(v)
        if np.isnan(fv) or np.isinf(fv) or fv == 0.0:
            res[k] = t(fv)                       # keeps the sign of zero
        else:
            res[k] = _float_round_exact(Fraction(fv), t, mode)
    return _apply_sat(out, t, sat)


def int_to_float(x, dst, *, rounding="even", sat="nosat"):
    t = _FLOAT[_name(dst)]
    mode = rounding_name(rounding)
    x = np.asarray(x)
    out = np.empty(x.shape, dtype=t)
    res = out.reshape(-1)
    for k, v in enumerate(x.reshape(-1)):
        res[k] = _float_round_exact(Fraction(int(v)), t, mode)
    return _apply_sat(out, t, sat)


def _round_int(value: Fraction, mode: str) -> int:
    fl = value.numerator // value.denominator
    if value == fl:
        return fl
    if mode == "floor":
        return fl
    if mode == "ceil":
        return fl + 1
    if mode == "zero":
        return fl if value > 0 else fl + 1
    if mode == "odd":
        return fl if fl % 2 else fl + 1
    frac = value - fl
    if frac < Fraction(1, 2):
        return fl
    if frac > Fraction(1, 2):
        return fl + 1
    if mode == "away":
        return fl + 1 if value > 0 else fl
    return fl if fl % 2 == 0 else fl + 1


def float_to_int(x, dst, *, rounding="even", saturate=True):
    t = _INT[_name(dst)]
    info = np.iinfo(t)
    mode = rounding_name(rounding)
    x = np.asarray(x)
    out = np.empty(x.shape, dtype=t)
    res = out.reshape(-1)
    for k, v in enumerate(x.reshape(-1)):
        fv = float(v)
        if np.isnan(fv):
            res[k] = 0
            continue
        if np.isinf(fv):
            res[k] = info.max if fv > 0 else info.min
            continue
        n = _round_int(Fraction(fv), mode)
        if saturate:
            n = min(max(n, int(info.min)), int(info.max))
        else:
            n = (n - int(info.min)) % (int(info.max) - int(info.min) + 1) + int(info.min)
        res[k] = n
    return out


def to_f32(values, src):
    v = np.asarray(values)
    return v.astype(np.float32)


def to_f64(values, src):
    return np.asarray(values).astype(np.float64)
