"""Shared helpers of the FIXPIPE tests: L0C/FB set-up and an independent reference.

The reference here is written from the spec text (pto_spec.md §5, the PTO micro-ISA
FIXPIPE section, pto-spec ADR-0085), element by element with exact rational
arithmetic (`fractions.Fraction`) where the op uses float64, and with explicit
per-element destination offsets where the op uses reshapes and transposes. Final
float encodings use the `pto_core.numerics` functions, as the op must.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

import pto_core.numerics as nx
from pto_core import dtype

ROW = 16


def nz_pack(logical: np.ndarray, src_stride: int, fill=0) -> np.ndarray:
    """L0C storage of a logical (m, n) accumulator: N1 fractal columns of ``src_stride`` rows x 16."""
    m, n = logical.shape
    n1 = -(-n // ROW)
    out = np.full((n1, src_stride, ROW), fill, dtype=logical.dtype)
    pad = np.full((m, n1 * ROW), fill, dtype=logical.dtype)
    pad[:, :n] = logical
    for j1 in range(n1):
        out[j1, :m, :] = pad[:, j1 * ROW:(j1 + 1) * ROW]
    return out


def load_acc(machine, logical: np.ndarray, *, src_stride=None, addr=0, dtype_name=None):
    """Write ``logical`` into L0C in NZ order; returns ``(ptr, src_stride)``."""
    m = logical.shape[0]
    ss = src_stride if src_stride is not None else -(-m // ROW) * ROW
    d = dtype_name or {np.dtype(np.float32): "f32", np.dtype(np.int32): "s32",
                       np.dtype(np.float16): "f16"}[logical.dtype]
    ptr = machine.ptr("l0c", d, addr)
    machine.write(ptr, nz_pack(logical, ss))
    return ptr, ss


def fb_words(machine, words, addr=0, dtype_name="f32"):
    """Put 64-bit parameter words (one per channel) into FB; returns the fb pointer."""
    raw = np.asarray(words, dtype=np.uint64)
    ptr = machine.ptr("fb", dtype_name, addr)
    machine.write(machine.ptr("fb", "u8", addr), raw.view(np.uint8))
    return ptr


def fp19(value) -> float:
    """FP19 truncation of an f32 value (bits [31:13]), computed from the bit pattern."""
    bits = int(np.array(value, dtype=np.float32).view(np.uint32)) & 0xFFFFE000
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


# ----------------------------------------------------------------------------- reference values


def _rne(q: Fraction) -> int:
    return round(q)  # Fraction rounds half to even


def ref_convert(x, *, mode: str | None, dst: str, scale=1.0, offset=0, signed=None, shift=1, relu="no_relu",
                alpha=0.0, clip=None, sat="nosat") -> np.ndarray:
    """Expected destination values (storage dtype; s4 as int8) of accumulator values ``x`` (m, n).

    ``scale``/``offset``/``signed``/``shift``/``alpha`` are scalars or per-column sequences.
    Follows: negative raw values take the activation multiplier; integer families round
    half-even, saturate to S5/S9/S17, add the signed offset, clip, clamp; float
    families encode the exact product once with `pto_core.numerics`.
    """
    x = np.asarray(x)
    m, n = x.shape
    d = dtype(dst)
    col = lambda v, j: v[j] if np.ndim(v) else v  # noqa: E731
    inter = {"req8": 9, "qf322b8_pre": 9, "qf162b8_pre": 9, "req4": 5, "qf322s4_pre": 5, "qf162s4_pre": 5,
             "deqs16": 17, "qf162s16_pre": 17}
    family = None if mode is None else mode.rsplit("_", 1)[0] if mode.endswith(("_vec", "_scalar")) else mode
    f16_stage = family is not None and family.startswith("qf162")
    uses_scale = mode is not None and mode.endswith(("_vec", "_scalar")) and family != "shifts322s16"
    out = np.empty((m, n), dtype=object)
    for i in range(m):
        for j in range(n):
            raw = x[i, j]
            v = raw
            if f16_stage:
                v = np.float64(nx.float_to(np.float64(raw), "f16", sat="sat"))
            isnan = isinstance(v, (float, np.floating)) and np.isnan(v)
            neg = (not isnan) and raw < 0
            mult = Fraction(fp19(col(scale, j))) if uses_scale else Fraction(1)
            if neg and relu == "normal_relu":
                mult = Fraction(0)
            elif neg and relu in ("scalar_relu", "vector_relu"):
                mult = Fraction(fp19(col(alpha, j)))
            if family == "shifts322s16":
                sh = int(col(shift, j))
                if neg and relu != "no_relu":
                    y = math.floor(Fraction(int(v)) * mult / (1 << sh))
                else:
                    y = int(v) >> sh
                out[i, j] = ("int", y)
                continue
            if neg and relu == "normal_relu":
                exact, fval = Fraction(0), None
            elif isnan or np.isinf(float(v)):
                exact, fval = None, float(v) * float(mult)
            else:
                exact = Fraction(float(v)) if isinstance(v, (float, np.floating)) else Fraction(int(v))
                exact *= mult
                fval = None
            if d.is_float:
                val = float(exact) if exact is not None else fval
                if exact == 0 and not (neg and relu == "normal_relu") and np.signbit(float(v)) != (mult < 0):
                    val = -0.0      # IEEE: the product keeps the sign of a zero / of a zero multiplier
                if clip is not None:
                    val = min(val, float(clip)) if not np.isnan(val) else val
                out[i, j] = ("float", val)
            else:
                if exact is None:
                    r = 0 if np.isnan(fval) else (10 ** 9 if fval > 0 else -10 ** 9)
                else:
                    r = _rne(exact)
                w = inter.get(family)
                if w:
                    r = max(-(1 << (w - 1)), min((1 << (w - 1)) - 1, r)) + int(col(offset, j))
                out[i, j] = ("int", r)
    # encode
    if d.is_float:
        vals = np.array([[out[i, j][1] for j in range(n)] for i in range(m)], dtype=np.float64)
        if d.name == "hif8":
            if family and family.endswith("hybrid"):   # hybrid reads the f32 bits of the scaled value
                return nx.hif8_encode(nx.float_to(vals, "f32", sat="nosat"), rounding="hybrid", sat=sat)
            return nx.hif8_encode(vals, rounding="away", sat=sat)
        if d.name == "f32":
            enc = nx.float_to(vals, "f32", sat="nosat" if sat == "nosat" else "sat")
            return np.where(np.isfinite(vals), enc, vals.astype(np.float32))
        return nx.float_to(vals, d.name, sat=sat)
    ints = np.array([[out[i, j][1] for j in range(n)] for i in range(m)], dtype=np.int64)
    if clip is not None:
        ints = np.minimum(ints, int(clip))
    if d.name in ("s8", "u8"):
        sg = np.array([[bool(col(signed, j)) if signed is not None else d.name == "s8" for j in range(n)]] * m)
        ints = np.where(sg, np.clip(ints, -128, 127), np.clip(ints, 0, 255))
        return (ints & 0xFF).astype(np.uint8).view(d.storage)
    lo, hi = d.min, d.max
    ints = np.clip(ints, lo, hi)
    return ints.astype(np.int8) if d.name == "s4" else ints.astype(d.storage)


# ----------------------------------------------------------------------------- reference layout


def ref_offsets(layout: str, m: int, n: int, dst_stride: int, c0d: int = 16) -> np.ndarray:
    """Destination element offset of each logical (i, j), by explicit loops."""
    off = np.empty((m, n), dtype=np.int64)
    for i in range(m):
        for j in range(n):
            if layout == "nz2nd":
                off[i, j] = i * dst_stride + j
            elif layout == "nz2dn":
                off[i, j] = j * dst_stride + i
            else:
                off[i, j] = (j // c0d) * dst_stride + i * c0d + (j % c0d)
    return off


def unpack_s4(raw: np.ndarray, count: int) -> np.ndarray:
    """Signed 4-bit values (int8) of packed bytes, element 2i in the low nibble."""
    raw = np.asarray(raw, dtype=np.uint8)
    nib = np.empty(raw.size * 2, dtype=np.uint8)
    nib[0::2] = raw & 0xF
    nib[1::2] = raw >> 4
    v = nib[:count].astype(np.int8)
    return np.where(v >= 8, v - 16, v).astype(np.int8)
