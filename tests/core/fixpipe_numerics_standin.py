"""Test-only stand-ins for the `pto_core.numerics` functions FIXPIPE uses.

The numerics package is built on another branch; until it lands, `install()` adds
these implementations of the contract functions (``float_to``, ``hif8_encode``,
``fp19``, ``pack_nibbles``) to ``pto_core.numerics`` -- only the names that are
missing, so once the real module is merged the tests run against it.

The stand-ins follow the contract in HELPER_BRIEF.md: one rounding from the exact
float64 input (numpy / ml_dtypes convert float64 directly with round-to-nearest-even),
``sat``: overflow and infinities clamp, NaN -> 0; ``preserve_nan``: NaN kept;
``nosat``: IEEE (inf, or NaN for e4m3). HiF8 is decoded with the pto-spec
``ReferenceFP8FiniteValue`` rule and encoded by nearest-value search.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

import pto_core.numerics as nx

_STORAGE = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
            "e5m2": ml_dtypes.float8_e5m2, "f32": np.float32}


_FMAX = {k: float(ml_dtypes.finfo(t).max) for k, t in _STORAGE.items()}


def float_to(x, dst, *, rounding="even", sat="nosat"):
    name = getattr(dst, "name", dst)
    if rounding != "even":
        raise ValueError("stand-in: only round-to-nearest-even")
    if name == "hif8":
        return hif8_encode(x, rounding="away", sat=sat)
    t = _STORAGE[name]
    x = np.asarray(x, dtype=np.float64)
    if sat == "nosat":
        with np.errstate(over="ignore", invalid="ignore"):
            return x.astype(t)
    fmax = _FMAX[name]
    out = np.asarray(np.clip(x, -fmax, fmax).astype(t))
    nan = np.isnan(x)
    if nan.any():
        out = np.where(nan, t(0) if sat == "sat" else t(np.nan), out).astype(t)
    return out


def fp19(x):
    bits = np.asarray(x, dtype=np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)


def pack_nibbles(codes):
    c = np.asarray(codes, dtype=np.uint8).reshape(-1) & 0xF
    if c.size % 2:
        c = np.concatenate([c, np.zeros(1, np.uint8)])
    return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)


def _hif8_table():
    """float64 value of every HiF8 code (pto-spec ReferenceFP8FiniteValue); NaN for 0x80, inf for 0x6F/0xEF."""
    vals = np.zeros(256)
    for code in range(256):
        body = code & 0x7F
        if body <= 7:
            mag = 0.0 if body == 0 else 2.0 ** (body - 23)
        elif body <= 15:
            mag = 1.0 + (body - 8) / 8.0
        elif body <= 31:
            e = 1 if ((code >> 3) & 1) == 0 else -1
            mag = (1.0 + (code & 7) / 8.0) * 2.0 ** e
        elif body <= 63:
            ec = (code >> 3) & 3
            a = 2 + ((code >> 3) & 1)
            mag = (1.0 + (code & 7) / 8.0) * 2.0 ** (a if ec < 2 else -a)
        elif body <= 95:
            ec = (code >> 2) & 7
            a = 4 + ((code >> 2) & 3)
            mag = (1.0 + (code & 3) / 4.0) * 2.0 ** (a if ec < 4 else -a)
        else:
            ec = (code >> 1) & 15
            a = 8 + ((code >> 1) & 7)
            mag = (1.0 + (code & 1) / 2.0) * 2.0 ** (a if ec < 8 else -a)
        vals[code] = -mag if code & 0x80 else mag
    vals[0x80] = np.nan
    vals[0x6F], vals[0xEF] = np.inf, -np.inf
    return vals


HIF8_VALUES = _hif8_table()
_POS_CODES = np.array([c for c in range(0x80) if c != 0x6F])
_POS_ORDER = np.argsort(HIF8_VALUES[_POS_CODES], kind="stable")
_POS_SORTED_CODES = _POS_CODES[_POS_ORDER]
_POS_SORTED_VALS = HIF8_VALUES[_POS_SORTED_CODES]
HIF8_MAX = 32768.0


def hif8_encode(x, *, rounding="away", sat="nosat"):
    x = np.asarray(x, dtype=np.float64)
    mag = np.abs(x)
    neg = np.signbit(x) & (mag != 0)
    hi = np.clip(np.searchsorted(_POS_SORTED_VALS, mag, side="left"), 0, len(_POS_SORTED_VALS) - 1)
    lo = np.clip(hi - 1, 0, None)
    vhi, vlo = _POS_SORTED_VALS[hi], _POS_SORTED_VALS[lo]
    chi, clo = _POS_SORTED_CODES[hi], _POS_SORTED_CODES[lo]
    dhi, dlo = vhi - mag, mag - vlo
    if rounding == "away":
        take_hi = dhi <= dlo
    else:  # even / hybrid stand-in: ties to the even code
        take_hi = (dhi < dlo) | ((dhi == dlo) & (chi % 2 == 0))
    code = np.where(mag == vhi, chi, np.where(take_hi, chi, clo)).astype(np.uint8)
    over = mag > HIF8_MAX
    code = np.where(over, 0x6E if sat != "nosat" else 0x6F, code).astype(np.uint8)
    code = np.where(neg & (code != 0), code | 0x80, code).astype(np.uint8)
    nan = np.isnan(x)
    code = np.where(nan, 0x00 if sat == "sat" else 0x80, code)
    return code.astype(np.uint8)


def hif8_decode(codes):
    return HIF8_VALUES[np.asarray(codes, dtype=np.uint8)].astype(np.float32)


def install() -> list:
    """Add missing contract functions to ``pto_core.numerics``; returns the names installed."""
    added = []
    for name, fn in (("float_to", float_to), ("fp19", fp19), ("pack_nibbles", pack_nibbles),
                     ("hif8_encode", hif8_encode), ("hif8_decode", hif8_decode)):
        if not hasattr(nx, name):
            setattr(nx, name, fn)
            added.append(name)
    return added


INSTALLED = install()
