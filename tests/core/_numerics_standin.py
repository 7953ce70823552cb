"""Test-only stand-in for the parts of ``pto_core.numerics`` the cube tests need.

Installed by `ensure_numerics` only when the real module is absent (it is built on
another branch); with the real module present this file is unused. Covers the FP4
decoders and ``tf32_round``; HiF8 tests skip without the real module.
"""
from __future__ import annotations

import sys
import types

import ml_dtypes
import numpy as np


def _e1m2(codes):
    c = np.asarray(codes, np.uint8) & 0xF
    sign = np.where(c & 0x8, -1.0, 1.0)
    e = (c >> 2) & 1
    m = (c & 3).astype(np.float64)
    mag = np.where(e == 0, m / 4.0, 1.0 + m / 4.0)      # bias 1: e=0 subnormal m/4, e=1 -> 1.m
    return (sign * mag).astype(np.float32)


def to_f32(values, src):
    name = getattr(src, "name", src)
    name = {"e2m1x2": "e2m1", "e1m2x2": "e1m2"}.get(name, name)
    if name == "e2m1":
        return (np.asarray(values, np.uint8) & 0xF).view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    if name == "e1m2":
        return _e1m2(values)
    if name == "e8m0":
        return np.asarray(values, np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
    raise NotImplementedError(f"stand-in numerics cannot decode {name}")


def tf32_round(x, mode="even"):
    """Round f32 values to 10 explicit mantissa bits (ties to even or away), keeping the f32 format."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    finite = np.isfinite(np.asarray(x, np.float32))
    drop = 13
    half = np.uint64(1 << (drop - 1))
    if mode == "even":
        add = half - np.uint64(1) + ((b >> np.uint64(drop)) & np.uint64(1))
    else:
        add = half
    r = ((b + add) >> np.uint64(drop)) << np.uint64(drop)
    out = np.where(finite, r, b).astype(np.uint32).view(np.float32)
    return out


def ensure_numerics():
    """Import the real ``pto_core.numerics``; install this stand-in if it does not exist yet. Returns the module."""
    try:
        import pto_core.numerics as real  # noqa: F401
        return real
    except ModuleNotFoundError as e:
        if e.name != "pto_core.numerics":
            raise
    mod = types.ModuleType("pto_core.numerics")
    mod.to_f32 = to_f32
    mod.tf32_round = tf32_round
    mod.STANDIN = True
    sys.modules["pto_core.numerics"] = mod
    import pto_core
    pto_core.numerics = mod
    return mod


def has_real_numerics() -> bool:
    return not getattr(ensure_numerics(), "STANDIN", False)
