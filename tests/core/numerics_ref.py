"""Independent, slow-but-obvious references for the numerics tests.

Nothing here imports ``pto_core.numerics``. Decoders are written from the format
definitions; rounding is done by *bracketing*: find the two neighbouring representable
values ``lo <= |x| <= hi`` in a sorted table of the format's values, compare ``|x|`` with
their midpoint (exact in float64), and pick by the rounding mode. Overflow uses one
"virtual" value just beyond the largest finite one (where the next encoding would be).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np


# ----------------------------------------------------------------------------- decoders


def decode_ieee(codes, exp_bits, man_bits, bias, specials):
    """float64 value of each code of an IEEE-like format, by the textbook formula."""
    out = []
    for c in np.asarray(codes).ravel().tolist():
        s = -1.0 if (c >> (exp_bits + man_bits)) & 1 else 1.0
        ex = (c >> man_bits) & ((1 << exp_bits) - 1)
        fr = c & ((1 << man_bits) - 1)
        top = ex == (1 << exp_bits) - 1
        if specials == "ieee" and top:
            out.append(s * float("inf") if fr == 0 else float("nan"))
        elif specials == "fn" and top and fr == (1 << man_bits) - 1:
            out.append(float("nan"))
        elif ex == 0:
            out.append(s * fr * 2.0 ** (1 - bias - man_bits))
        else:
            out.append(s * (1 + fr / 2.0 ** man_bits) * 2.0 ** (ex - bias))
    return np.array(out, dtype=np.float64).reshape(np.shape(codes))


def decode_hif8(code: int) -> float:
    """HiF8 value of one code, parsed as a bit string (arXiv 2409.16626, Table 2/4)."""
    b = format(code, "08b")
    sign = -1.0 if b[0] == "1" else 1.0
    rest = b[1:]
    if code == 0x80:
        return float("nan")
    if rest == "0000000":
        return 0.0
    if rest == "1101111":
        return sign * float("inf")
    # dot prefix code -> number of exponent bits (D) ; denormal = "0000"
    for prefix, d in (("11", 4), ("10", 3), ("01", 2), ("001", 1), ("0001", 0)):
        if rest.startswith(prefix):
            body = rest[len(prefix):]
            if d == 0:
                exp = 0
                mant = body
            else:
                exp_field = body[:d]
                mant = body[d:]
                magnitude = int("1" + exp_field[1:], 2)       # implicit leading 1
                exp = -magnitude if exp_field[0] == "1" else magnitude
            frac = int(mant, 2) / 2 ** len(mant) if mant else 0.0
            return sign * 2.0 ** exp * (1 + frac)
    return sign * 2.0 ** (int(rest[4:], 2) - 23)               # "0000" + MMM: denormal


# ----------------------------------------------------------------------------- bracketing rounding


@dataclass
class Grid:
    """Sorted non-negative finite values, their codes and what happens beyond them."""

    values: np.ndarray      # float64, ascending, values[0] == 0
    codes: np.ndarray       # int64 code of each value (positive sign)
    virtual: float          # the would-be next value after the maximum
    virtual_odd: bool       # parity of the would-be code of `virtual`
    sign_bit: int           # code bit of the sign
    inf_code: int | None    # +inf code (None if no inf)
    nan_code: int | None    # canonical +NaN code (None if no NaN)
    signed_zero: bool = True
    nan_signed: bool = True


def grid_from_table(table: np.ndarray, sign_bit: int, virtual: float, virtual_odd: bool,
                    inf_code, nan_code, signed_zero=True, nan_signed=True) -> Grid:
    codes = np.arange(len(table))
    pos = (codes & sign_bit) == 0
    keep = pos & np.isfinite(table)
    vals, cds = table[keep], codes[keep]
    order = np.argsort(vals, kind="stable")
    return Grid(vals[order], cds[order], virtual, virtual_odd, sign_bit, inf_code, nan_code,
                signed_zero, nan_signed)


def bracket_round(x, grid: Grid, mode: str, sat: str) -> np.ndarray:
    """Codes of float64 values ``x`` rounded onto ``grid`` (see module doc)."""
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    neg = np.signbit(x)
    vals = np.append(grid.values, grid.virtual)
    odd = np.append(grid.codes & 1, int(grid.virtual_odd)).astype(bool)
    n = len(grid.values)
    idx = np.clip(np.searchsorted(vals, np.where(np.isfinite(a), a, 0.0), side="right") - 1, 0, n)
    beyond = a >= grid.virtual
    lo_i = np.minimum(idx, n - 1)
    hi_i = lo_i + 1
    lo, hi = vals[lo_i], vals[hi_i]
    exact = a == lo
    mid = (lo + hi) / 2
    if mode == "even":
        pick_hi = (a > mid) | ((a == mid) & odd[lo_i])
    elif mode == "away":
        pick_hi = a >= mid
    elif mode == "zero":
        pick_hi = np.zeros(a.shape, bool)
    elif mode == "floor":
        pick_hi = neg
    elif mode == "ceil":
        pick_hi = ~neg
    elif mode == "odd":
        pick_hi = ~odd[lo_i]
    else:
        raise ValueError(mode)
    pick_hi = pick_hi & ~exact
    over = (pick_hi & (hi_i == n)) | beyond
    code = np.where(pick_hi, np.append(grid.codes, -1)[np.minimum(hi_i, n)], grid.codes[lo_i])
    # IEEE overflow direction
    if mode in ("even", "away"):
        to_inf = np.ones(a.shape, bool)
    elif mode == "floor":
        to_inf = neg.copy()
    elif mode == "ceil":
        to_inf = ~neg
    else:
        to_inf = np.zeros(a.shape, bool)
    max_code = grid.codes[-1]
    if grid.inf_code is not None:
        top = grid.inf_code
    elif grid.nan_code is not None:
        top = grid.nan_code
    else:
        top = max_code
    inf_in = np.isinf(x)
    over_code = np.where((to_inf & (sat == "nosat")), top, max_code)
    inf_code = top if sat == "nosat" else max_code
    code = np.where(over, over_code, code)
    code = np.where(inf_in, inf_code, code)
    signed = neg & ((code != 0) | grid.signed_zero)
    code = np.where(signed, code | grid.sign_bit, code)
    nan = np.isnan(x)
    if grid.nan_code is not None:
        nan_c = grid.nan_code | (grid.sign_bit if grid.nan_signed else 0)
        nan_val = np.where(neg & grid.nan_signed, nan_c, grid.nan_code)
        code = np.where(nan, 0 if sat == "sat" else nan_val, code)
    else:
        code = np.where(nan, max_code if sat == "nosat" else 0, code)
    return code.astype(np.int64)


# ----------------------------------------------------------------------------- grids of every format

IEEE_SPECS = {
    # name: exp_bits, man_bits, bias, specials, sign_bit
    "f16": (5, 10, 15, "ieee"),
    "bf16": (8, 7, 127, "ieee"),
    "e4m3": (4, 3, 7, "fn"),
    "e5m2": (5, 2, 15, "ieee"),
    "e2m1": (2, 1, 1, "none"),
    "e1m2": (1, 2, 1, "none"),
}

_TABLES: dict = {}


def table(name: str) -> np.ndarray:
    """float64 values of every code (index = code) of a format of <= 16 bits."""
    if name not in _TABLES:
        if name == "hif8":
            _TABLES[name] = np.array([decode_hif8(c) for c in range(256)])
        else:
            eb, mb, bias, sp = IEEE_SPECS[name]
            _TABLES[name] = decode_ieee(np.arange(1 << (1 + eb + mb)), eb, mb, bias, sp)
    return _TABLES[name]


@lru_cache(maxsize=None)
def grid(name: str) -> Grid:
    t = table(name)
    if name == "hif8":
        return grid_from_table(t, 0x80, 1.5 * 2 ** 15, True, 0x6F, 0x80, signed_zero=False, nan_signed=False)
    eb, mb, bias, sp = IEEE_SPECS[name]
    sign_bit = 1 << (eb + mb)
    inf_code = ((1 << eb) - 1) << mb if sp == "ieee" else None
    nan_code = (inf_code | (1 << (mb - 1))) if sp == "ieee" else ((sign_bit - 1) if sp == "fn" else None)
    finite = t[np.isfinite(t) & (np.arange(len(t)) < sign_bit)]
    vmax = finite.max()
    ulp_top = 2.0 ** (np.floor(np.log2(vmax)) - mb)
    virtual = vmax + ulp_top
    # the would-be code after max: for "fn" it is the NaN pattern (odd); otherwise a power of two (even)
    return grid_from_table(t, sign_bit, virtual, sp == "fn", inf_code, nan_code)


def f32_round(x, mode: str, sat: str) -> np.ndarray:
    """Reference f64 -> f32 (uint32 codes) by bracketing with nextafter."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _f32_round(np.asarray(x, dtype=np.float64), mode, sat)


def _f32_round(x, mode, sat):
    a = np.abs(x)
    near = a.astype(np.float32)
    lo = np.where(near.astype(np.float64) > a, np.nextafter(near, np.float32(0)), near).astype(np.float64)
    fmax = float(np.finfo(np.float32).max)
    lo = np.where(np.isinf(lo), fmax, lo)
    lo32 = lo.astype(np.float32)
    hi32 = np.nextafter(lo32, np.float32(np.inf))
    hi = hi32.astype(np.float64)
    hi = np.where(np.isinf(hi), 2.0 ** 128, hi)
    lo_odd = (lo32.view(np.uint32) & 1).astype(bool)
    exact = a == lo
    mid = (lo + hi) / 2
    neg = np.signbit(x)
    pick_hi = {"even": (a > mid) | ((a == mid) & lo_odd), "away": a >= mid, "zero": np.zeros(a.shape, bool),
               "floor": neg, "ceil": ~neg, "odd": ~lo_odd}[mode] & ~exact
    res = np.where(pick_hi, hi, lo)
    beyond = np.isfinite(a) & (res > fmax)
    to_inf = {"even": True, "away": True, "zero": False, "odd": False}.get(mode)
    to_inf = np.full(a.shape, to_inf) if to_inf is not None else (neg if mode == "floor" else ~neg)
    res = np.where(beyond, np.where(to_inf & (sat == "nosat"), np.inf, fmax), res)
    res = np.where(np.isinf(a), np.inf if sat == "nosat" else fmax, res)
    bits = res.astype(np.float32).view(np.uint32).astype(np.int64)
    bits = np.where(neg, bits | (1 << 31), bits)
    nan = np.isnan(x)
    nan_c = np.where(neg, 0xFFC00000, 0x7FC00000)
    return np.where(nan, 0 if sat == "sat" else nan_c, bits)


# ----------------------------------------------------------------------------- HiF8 hybrid (scalar)


def _hif8_frac_bits(E: int) -> int:
    a = abs(E)
    if E < -15:
        return 0
    return 3 if a <= 3 else 2 if a <= 7 else 1


def _hif8_nearest_away(a: float) -> float:
    """|x| rounded to the nearest HiF8 magnitude, ties away (scalar, via the value table)."""
    vals = sorted(v for v in table("hif8")[:0x80] if np.isfinite(v))
    below = max(v for v in vals if v <= a)
    above = [v for v in vals if v > a]
    if not above or a == below:
        return below if a == below else (1.5 * 2 ** 15 if a >= 1.25 * 2 ** 15 else below)
    hi = above[0]
    return hi if a - below >= hi - a else below


def hif8_hybrid_ref(x: float, src: str = "f32", sat: str = "nosat") -> float:
    """HiF8 value of ``x`` under hybrid rounding, one element at a time with Python ints.

    Follows the description of Huawei's golden generators: TA for |E| < 4, otherwise round
    up iff F >= T, where F is the top 14 (f32) / 2 (f16) dropped fraction bits and T is the
    low 14 fraction bits (f32) or 2*lsb+1 (f16). Overflow at >= 1.25 * 2**15.
    Returns the decoded value (inf / nan / +-32768 per ``sat``).
    """
    if np.isnan(x):
        return 0.0 if sat == "sat" else float("nan")
    sign = -1.0 if x < 0 else 1.0
    a = abs(x)
    if a == 0:
        return 0.0
    vmax = 2.0 ** 15
    if np.isinf(a) or a >= 1.25 * vmax:
        return sign * (vmax if sat != "nosat" else float("inf"))
    m, ex = np.frexp(a)
    E = int(ex) - 1
    if abs(E) < 4:
        return sign * _hif8_nearest_away(a)
    fbits = 23 if src == "f32" else 10
    rbits = 14 if src == "f32" else 2
    frac = int(round((a / 2.0 ** E - 1) * 2 ** fbits))         # exact fraction field
    if src == "f32":
        t = frac & ((1 << 14) - 1)
    else:
        half_bits = int(np.float16(a).view(np.uint16))
        t = 2 * (half_bits & 1) + 1
    if E < -23:
        return 0.0
    if E == -23:
        f = (1 << (rbits - 1)) + (frac >> (fbits - rbits + 1))
        return sign * (2.0 ** -22 if f >= t else 0.0)
    p = _hif8_frac_bits(E)
    drop = fbits - p
    kept = frac >> drop
    rem = frac & ((1 << drop) - 1)
    f = rem >> (drop - rbits)
    k = (1 << p) + kept + (1 if f >= t else 0)
    v = k * 2.0 ** (E - p)
    if v > vmax:
        return sign * (vmax if sat != "nosat" else float("inf"))
    return sign * v
