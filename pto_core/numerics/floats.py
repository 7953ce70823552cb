"""Float formats and conversions between them, bit-exact.

One `FloatFormat` row per destination format; one generic encoder
(`FloatFormat.encode`) that takes exact values (sign, integer significand, exponent), rounds
them once with `round_to_grid`, applies the saturation policy and assembles code words.

Formats (``p`` = stored fraction bits, ``bias``; values ``(1 + f/2**p) * 2**(E)``):

========  ===  ====  =====  =====================================================  ==========
name      exp  p     bias   specials                                               max finite
========  ===  ====  =====  =====================================================  ==========
f32       8    23    127    IEEE inf/NaN                                           3.4e38
tf32      8    10    127    IEEE inf/NaN; stored in an f32 (low 13 bits zero)      3.4e38
f16       5    10    15     IEEE inf/NaN                                           65504
bf16      8    7     127    IEEE inf/NaN                                           3.39e38
e4m3      4    3     7      E4M3FN: no inf, NaN = S.1111.111                       448
e5m2      5    2     15     IEEE inf/NaN                                           57344
e2m1      2    1     1      none (FP4 E2M1, OCP MX)                                6
e1m2      1    2     1      none (FP4 E1M2: 0, .25, .5, .75, 1, 1.25, 1.5, 1.75)   1.75
hif8      (tapered, see `hif8`)                                                    32768
========  ===  ====  =====  =====================================================  ==========

Choices (see ``migration_guide/numerics.md`` for sources):

* NaN results are the destination's canonical quiet NaN carrying the input's sign
  (f32 ``0x7FC00000``, f16 ``0x7E00``, bf16 ``0x7FC0``, e5m2 ``0x7E``, e4m3 ``0x7F``); input
  NaN payloads are not propagated.
* Formats with neither inf nor NaN (e2m1, e1m2): overflow and +-inf always clamp to +-max;
  NaN gives 0 under ``sat``/``preserve_nan`` and +max (code 0x7) under ``nosat`` (the A5
  TQUANT golden encoder's choice).
* ``nosat`` overflow follows IEEE-754 by rounding direction: nearest modes give inf, toward
  zero gives max, floor/ceil give inf only in their own direction; round-to-odd never
  produces inf. "inf" means NaN for E4M3FN (no inf encoding).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import ml_dtypes
import numpy as np

from ..dtypes import DType, dtype as _dtype
from ..errors import IllegalOperand, UnknownName
from .rounding import (is_hybrid, overflow_to_inf, round_integral_f64, round_to_grid, rounding_name, sat_name,
                       split_float)

_UINT_OF_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE-754-like binary format (sign, biased exponent, fraction).

    Attributes:
        name: canonical name (``"f16"``).
        exp_bits: exponent field width.
        man_bits: fraction field width ``p`` (precision is ``p + 1`` bits for normals).
        bias: exponent bias; the smallest normal binade is ``emin = 1 - bias``.
        specials: ``"ieee"`` (all-ones exponent: inf if fraction 0, else NaN),
            ``"fn"`` (no inf; only all-ones exponent and fraction is NaN, as E4M3FN) or
            ``"none"`` (every code is a finite number, as FP4).
        storage: numpy dtype of the returned array (uint8 for raw-code formats).
        code_bits: width of one code word (4 for FP4, stored one code per uint8).
        store_man_bits: fraction width of the storage layout (23 for TF32 held in an f32);
            defaults to ``man_bits``.
    """

    name: str
    exp_bits: int
    man_bits: int
    bias: int
    specials: str
    storage: np.dtype
    code_bits: int
    store_man_bits: Optional[int] = None

    # --- derived constants -------------------------------------------------------------

    @property
    def smb(self) -> int:
        return self.man_bits if self.store_man_bits is None else self.store_man_bits

    @property
    def emin(self) -> int:
        """Unbiased exponent of the smallest normal binade."""
        return 1 - self.bias

    @property
    def emax(self) -> int:
        """Unbiased exponent of the largest binade holding finite numbers."""
        top = (1 << self.exp_bits) - 1
        return (top - 1 if self.specials == "ieee" else top) - self.bias

    @property
    def max_significand(self) -> int:
        """Largest finite significand ``K`` (with the implicit bit) in the top binade."""
        full = (1 << (self.man_bits + 1)) - 1
        return full - 1 if self.specials == "fn" else full

    @property
    def max_value(self) -> float:
        return float(np.ldexp(float(self.max_significand), self.emax - self.man_bits))

    @property
    def sign_bit(self) -> int:
        return 1 << (self.code_bits - 1)

    @property
    def max_code(self) -> int:
        frac = self.max_significand - (1 << self.man_bits)
        return ((self.emax + self.bias) << self.smb) | (frac << (self.smb - self.man_bits))

    @property
    def inf_code(self) -> Optional[int]:
        return ((1 << self.exp_bits) - 1) << self.smb if self.specials == "ieee" else None

    @property
    def nan_code(self) -> Optional[int]:
        if self.specials == "ieee":
            return self.inf_code | (1 << (self.smb - 1))
        if self.specials == "fn":
            return (1 << (self.code_bits - 1)) - 1
        return None

    @property
    def has_signed_zero(self) -> bool:
        return True

    @property
    def nan_signed(self) -> bool:
        """Whether NaN results carry the input's sign bit."""
        return True

    # --- rounding hooks (overridden by tapered formats) --------------------------------

    def quantum_exp(self, E: np.ndarray) -> np.ndarray:
        """Exponent of the quantum (ulp) used for a value in binade ``E``."""
        return np.maximum(E, self.emin) - self.man_bits

    def parity_fn(self, Q: np.ndarray):
        """``f(kept)``: the last encoded bit of the lower rounding candidate ``kept * 2**Q``
        (ties of ``even``/``odd``), or None when it is the significand's last bit ``kept & 1``."""
        return None

    def assemble(self, K: np.ndarray, Q: np.ndarray) -> np.ndarray:
        """Code words (without sign) of the finite magnitudes ``K * 2**Q`` (already in range)."""
        p = self.man_bits
        K = np.asarray(K, dtype=np.int64)
        Q = np.asarray(Q, dtype=np.int64)
        carry = K >= (1 << (p + 1))                 # rounding carried into the next binade
        K = np.where(carry, K >> 1, K)
        Q = np.where(carry, Q + 1, Q)
        normal = K >= (1 << p)
        biased = np.where(normal, Q + p + self.bias, 0)
        frac = K & ((1 << p) - 1)
        codes = (biased << self.smb) | (frac << (self.smb - p))
        codes[K == 0] = 0
        return codes.astype(np.uint64)

    # --- the encoder ------------------------------------------------------------------

    def encode(self, neg, m, e, E, mode: str, sat: str, *, nan=None, inf=None) -> np.ndarray:
        """Encode exact values ``(-1)**neg * m * 2**e`` (binade ``E``) with one rounding.

        ``m == 0`` encodes a (signed) zero; ``nan``/``inf`` are bool masks of NaN and
        infinite inputs, which must also carry ``m == 0``. Returns uint64 code words.
        """
        neg = np.asarray(neg, dtype=bool)
        Q = self.quantum_exp(E)
        K = round_to_grid(neg, m, e, Q, mode, self.parity_fn(Q))
        with np.errstate(over="ignore"):                     # exact (inf only far beyond range)
            value = np.ldexp(K.astype(np.float64), np.clip(Q, -2000, 2000).astype(np.int32))
        codes = self.assemble(K, Q)                          # garbage where out of range: replaced
        if self.inf_code is not None:
            top_code = np.uint64(self.inf_code)
        elif self.nan_code is not None:                      # E4M3FN: "inf" is NaN
            top_code = np.uint64(self.nan_code)
        else:                                                # FP4: no specials, clamp
            top_code = np.uint64(self.max_code)
        big_code = np.uint64(self.max_code)
        over = value > self.max_value
        if over.any():
            if sat == "nosat":
                big = np.where(overflow_to_inf(neg, mode), top_code, big_code)
            else:
                big = big_code
            codes = np.where(over, big, codes)
        if inf is not None and inf.any():
            codes = np.where(inf, top_code if sat == "nosat" else big_code, codes)
        sign = neg if self.has_signed_zero else neg & (codes != 0)
        codes |= sign.astype(np.uint64) << np.uint64(self.code_bits - 1)
        if nan is not None and nan.any():
            if self.nan_code is not None:
                nan_code = np.uint64(self.nan_code)
                if self.nan_signed:
                    nan_code = nan_code | (neg.astype(np.uint64) << np.uint64(self.code_bits - 1))
                nan_result = np.uint64(0) if sat == "sat" else nan_code
            else:
                nan_result = big_code if sat == "nosat" else np.uint64(0)
            codes = np.where(nan, nan_result, codes)
        return codes

    # --- decoding ---------------------------------------------------------------------

    def decode_codes(self, codes: np.ndarray) -> np.ndarray:
        """float64 values of code words (independent of the encoder; used to build tables)."""
        c = np.asarray(codes, dtype=np.int64)
        p, sp = self.man_bits, self.smb
        sign = (c >> (self.code_bits - 1)) & 1
        biased = (c >> sp) & ((1 << self.exp_bits) - 1)
        frac = (c >> (sp - p)) & ((1 << p) - 1)
        mag = np.where(biased == 0, np.ldexp(frac.astype(np.float64), self.emin - p),
                       np.ldexp((frac + (1 << p)).astype(np.float64), biased - self.bias - p))
        top = biased == (1 << self.exp_bits) - 1
        if self.specials == "ieee":
            mag = np.where(top & (frac == 0), np.inf, np.where(top, np.nan, mag))
        elif self.specials == "fn":
            mag = np.where(top & (frac == (1 << p) - 1), np.nan, mag)
        return np.where(sign == 1, -mag, mag)


def _fmt(name, exp_bits, man_bits, bias, specials, storage, code_bits, store_man_bits=None):
    return FloatFormat(name, exp_bits, man_bits, bias, specials, np.dtype(storage), code_bits, store_man_bits)


#: Every float destination format by canonical name (HiF8 is added by ``hif8.py``).
FORMATS: dict = {
    "f32": _fmt("f32", 8, 23, 127, "ieee", np.float32, 32),
    "tf32": _fmt("tf32", 8, 10, 127, "ieee", np.float32, 32, store_man_bits=23),
    "f16": _fmt("f16", 5, 10, 15, "ieee", np.float16, 16),
    "bf16": _fmt("bf16", 8, 7, 127, "ieee", ml_dtypes.bfloat16, 16),
    "e4m3": _fmt("e4m3", 4, 3, 7, "fn", ml_dtypes.float8_e4m3fn, 8),
    "e5m2": _fmt("e5m2", 5, 2, 15, "ieee", ml_dtypes.float8_e5m2, 8),
    "e2m1": _fmt("e2m1", 2, 1, 1, "none", np.uint8, 4),
    "e1m2": _fmt("e1m2", 1, 2, 1, "none", np.uint8, 4),
}

_FORMAT_ALIASES = {"e2m1x2": "e2m1", "e1m2x2": "e1m2", "fp4_e2m1": "e2m1", "fp4_e1m2": "e1m2",
                   "tf32": "tf32", "e8m0": "e8m0"}


def format_name(d) -> str:
    """Canonical float-format name of a dtype spelling (``"float16"`` -> ``"f16"``)."""
    if isinstance(d, str) and d.lower() in _FORMAT_ALIASES:
        return _FORMAT_ALIASES[d.lower()]
    dt = d if isinstance(d, DType) else _dtype(d)
    return _FORMAT_ALIASES.get(dt.name, dt.name)


def float_format(d) -> FloatFormat:
    """The `FloatFormat` of a destination dtype; `UnknownName` if it is not a float format."""
    name = format_name(d)
    fmt = FORMATS.get(name)
    if fmt is None:
        raise UnknownName(f"{name!r} is not a float conversion format", operand="dst", value=d,
                          limit="one of " + ", ".join(sorted(FORMATS)),
                          hint="use float_to_int for integer destinations and e8m0_encode for e8m0")
    return fmt


# ----------------------------------------------------------------------------- inputs


def flat(x) -> tuple:
    """``(x as a 1-d array, original shape)``: encoders work on flat arrays (0-d included)
    and reshape their result back."""
    arr = np.asarray(x)
    return arr.reshape(-1), arr.shape


def exact_float64(x) -> tuple:
    """``(values as float64, source dtype)``; the widening is exact for every float source.

    Accepts float16/32/64, bfloat16 and the ml_dtypes float8 types, Python floats and
    sequences of them. Integer arrays are rejected (use `int_to_float`).
    """
    arr = np.asarray(x)
    if arr.dtype.kind in "iub":
        raise IllegalOperand(f"expected float values, got an array of {arr.dtype}", operand="x",
                             value=str(arr.dtype), hint="use int_to_float for integer sources")
    if arr.dtype.kind != "f" and arr.dtype not in _ML_FLOATS:
        raise IllegalOperand(f"expected float values, got {arr.dtype}", operand="x", value=str(arr.dtype),
                             hint="pass a numpy float array (float16/32/64 or an ml_dtypes float)")
    with np.errstate(invalid="ignore"):                  # NaN widening warns for some dtypes
        return arr.astype(np.float64), arr.dtype


_ML_FLOATS = tuple(np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
                                         ml_dtypes.float8_e8m0fnu, ml_dtypes.float4_e2m1fn))


def encode_float64(x64: np.ndarray, fmt: FloatFormat, mode: str, sat: str) -> np.ndarray:
    """uint64 code words of float64 values ``x64`` in ``fmt`` (one rounding, ``sat`` policy)."""
    neg, m, e, E, finite = split_float(x64)
    return fmt.encode(neg, m, e, E, mode, sat, nan=np.isnan(x64), inf=np.isinf(x64))


#: Destinations whose numpy / ml_dtypes cast from float32 is an IEEE round-to-nearest-even
#: conversion (numpy's float->half and C double->float; ml_dtypes' ``ConvertImpl`` with
#: ``RoundBitsToNearestEven``, one rounding from the source bits). For ``rounding="even"``
#: `float_to` lets the cast round and applies the saturation policy and canonical NaNs on
#: the codes. The tests hold both paths to the independent reference and to each other.
_RNE_CASTS = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
              "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "e2m1": ml_dtypes.float4_e2m1fn}


#: ml_dtypes casts float64 through float32 (double rounding), so only numpy's own casts
#: qualify for float64 sources.
_RNE_CASTS_FROM_F64 = ("f32", "f16")


# ----------------------------------------------------------------------------- f16 <-> f32 fast paths

_F16_SPECIAL = np.float32(65536.0)    # |x| * 2**112 of every f16 inf/NaN code and of nothing finite
_F16_SPECIAL_SQUARE = 2.0 ** 32        # its square: a sum of squares below it has no |x| >= _F16_SPECIAL


#: Finiteness and magnitude checks of large float32 arrays (`all_finite`, the special-code test of
#: `f16_to_f32_finite`) first take the sum of squares ``x . x`` (one BLAS dot: one read pass, no
#: temporary). Rounding is monotonic and every term is >= 0, so the sum is >= each square, in any order,
#: accumulated in float32 or float64, with or without FMA: a sum below ``b**2`` proves every ``|x| < b``,
#: and a finite sum proves every value finite (an inf or NaN square keeps any sum of non-negative terms
#: inf or NaN). Only when the dot cannot prove it (a real special value, or large values whose squares
#: add up past the bound / overflow) does the exact scan (``max``/``min``, ``isfinite``) decide. Off:
#: always the scan (tests/core/test_fast_paths.py compares the two).
CHECK_BY_DOT = True
_DOT_MIN_SIZE = 256                    # below this many values the scans are as cheap as the dot's set-up
_DOT_TYPES = (np.dtype(np.float32), np.dtype(np.float64))     # BLAS dots (float16 has none)


def _below_by_dot(x: np.ndarray, bound_square: float) -> bool:
    """True only if the dot of ``x`` (C-contiguous float32/float64) with itself proves every ``x*x < bound_square``
    (False: unknown, the caller scans). See `CHECK_BY_DOT`."""
    if not CHECK_BY_DOT or x.size < _DOT_MIN_SIZE or not x.flags.c_contiguous or x.dtype not in _DOT_TYPES:
        return False
    flat = np.asarray(x).reshape(-1)       # a plain 1-D view (an np.matrix would stay 2-D and not align)
    return bool(flat.dot(flat) < bound_square)     # (np.dot's BLAS dot, without its dispatch); inf/NaN: False


def all_finite(x: np.ndarray) -> bool:
    """``np.isfinite(x).all()`` for a float array, by one BLAS dot when that proves it (`CHECK_BY_DOT`)."""
    with np.errstate(over="ignore", invalid="ignore"):     # squares of large finite values may overflow
        if _below_by_dot(x, np.inf):
            return True
    return bool(np.isfinite(x).all())
_F16_SEM_MASK = np.int32(-0x70000001)   # 0x8FFFFFFF: sign, exponent and fraction bits of a shifted f16 code
_F16_REBIAS = np.float32(2.0 ** 112)    # f16 -> f32 exponent rebias (and subnormal normalisation)
_F16_SLAB = 65536                      # elements per slab of `f16_to_f32` (256 KiB of int32: cache-resident)


def f16_to_f32(h: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """Exact float32 values of f16 bit patterns ``h`` (uint16, any shape and strides), C-ordered.

    Bit-identical to ``h.view(np.float16).astype(np.float32)`` on every code, NaN payloads
    included (tested on all 2**16 codes), and about twice as fast as a table gather:
    sign-extend to int32 and shift the exponent and fraction into f32 position (the sign
    lands in bit 31; the three copies of it above the exponent are masked off); one
    multiplication by 2**112 rebiases normals and normalises subnormals exactly; inf and
    NaN codes, which that maps to finite values >= 2**16, get the all-ones exponent.
    ``out``: optional C-contiguous int32 array of ``h``'s shape to hold the result bits.
    Large arrays are converted in slabs along the first axis so that the four passes over
    each slab stay in cache.
    """
    return f16_to_f32_finite(h, out)[0]


def f16_to_f32_finite(h: np.ndarray, out: Optional[np.ndarray] = None) -> tuple:
    """`f16_to_f32` and whether no code was an inf or NaN (from the range check the conversion makes)."""
    if h.ndim and h.size > _F16_SLAB and h.shape[0] > 1:
        if out is None:
            out = np.empty(h.shape, np.int32)
        step = max(1, _F16_SLAB // (h.size // h.shape[0]))
        finite = True
        for i in range(0, h.shape[0], step):
            finite &= f16_to_f32_finite(h[i:i + step], out[i:i + step])[1]
        return out.view(np.float32), finite
    if out is None:
        t = h.view(np.int16).astype(np.int32, order="C")
    else:
        t = out
        np.copyto(t, h.view(np.int16), casting="unsafe")
    np.left_shift(t, 13, out=t)
    np.bitwise_and(t, _F16_SEM_MASK, out=t)                 # 0x8FFFFFFF: sign, exponent, fraction
    f = t.view(np.float32)
    np.multiply(f, _F16_REBIAS, out=f)
    if f.size and not _below_by_dot(f, _F16_SPECIAL_SQUARE) and (f.max() >= _F16_SPECIAL
                                                                 or f.min() <= -_F16_SPECIAL):
        t[np.abs(f) >= _F16_SPECIAL] |= np.int32(0x7F800000)
        return f, False
    return f, True


_F16_CHECK: list = []


def f16_bits_exact() -> bool:
    """Whether `f16_to_f32` is exact in this process (checked once on the subnormal and special codes:
    its multiplication relies on subnormal float32 inputs, which a flush-to-zero FPU mode would break;
    callers then use numpy's cast or a table instead)."""
    if not _F16_CHECK:
        codes = np.array([0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E01, 0x3C00], np.uint16)
        want = codes.view(np.float16).astype(np.float32).view(np.uint32)
        _F16_CHECK.append(bool(np.array_equal(f16_to_f32(codes).view(np.uint32), want)))
    return _F16_CHECK[0]


def from_f16(x: np.ndarray) -> np.ndarray:
    """``x.astype(np.float32)`` for a float16 array ``x`` (any strides; C-ordered result), by
    `f16_to_f32`'s bit moves where they are exact in this process and ``x`` is large enough to
    repay their fixed cost."""
    if x.size > 512 and f16_bits_exact():
        return f16_to_f32(x.view(np.uint16))
    return x.astype(np.float32)


#: float64 -> f16 bit constants: bits of 2**-14 (the smallest normal f16), fraction bits cut (52 - 10),
#: the rebias constant (minus the bias difference 1008 << 52, plus the half-step less one), inf bits,
#: and the subnormal magic 2**28 (a power of two whose ulp is 2**-24, the f16 subnormal step)
_F64_MIN_NORMAL16, _F64_CUT = 0x3F10000000000000, 42
_F64_REBIAS = ((1 << 64) - (1008 << 52) + (1 << 41) - 1) % (1 << 64)
_F64_INF, _F64_FRAC, _F64_MAGIC = 0x7FF0000000000000, 0x000FFFFFFFFFFFFF, np.float64(2.0 ** 28)
_F16_SAMPLE = 16            # `to_f16` looks at every 16th value to choose its method
_F16_MIN_SIZE = 2048        # below this many values numpy's cast is used as it is
_F16_BLOCK = 16384          # values per block of the bit-operation path (its passes stay in cache)


def to_f16(x: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
    """``x.astype(np.float16)`` for float32 / float64 ``x``, bit for bit, without numpy's slow path.

    numpy's cast rounds to nearest-even and keeps NaN payloads as ``0x7C00 + (fraction >> cut)``
    (``0x7C01`` if that is zero), but spends about 100 ns on every result that is an f16
    subnormal (it raises the underflow flag element by element): softmax-like outputs, where
    a third of the values are below 2**-14, convert 10 to 20 times slower than normal ones.
    When every 16th value shows more than ~1.5 % of such results, this function converts with
    integer bit operations instead (`_to_f16_bits`), in cache-sized blocks. Tested against the
    cast on every bit pattern around the rounding cut in every binade, and on random values.
    Floating-point warnings are the caller's to silence (the cast may raise them; the bit path does not).
    ``out``: optional float16 array of ``x``'s shape (any strides) that receives the codes, cast
    straight into it (no staging copy); it is returned.
    """
    x = np.asarray(x)
    if x.dtype not in (np.float32, np.float64) or x.size < _F16_MIN_SIZE:
        return x.astype(np.float16) if out is None else _cast_into(out, x)
    if x.flags.c_contiguous:
        sample = x.reshape(-1)[::_F16_SAMPLE]
    elif x.ndim and x.shape[-1] % _F16_SAMPLE == 0:
        sample = x[..., ::_F16_SAMPLE]   # the same values as every 16th of the C-order ravel, no copy
    else:
        sample = x.reshape(-1)[::_F16_SAMPLE]
    sample = np.abs(sample)
    if np.count_nonzero((sample < 2.0 ** -14) & (sample > 0)) * 64 < sample.size:
        # (almost) no f16-subnormal results: the cast is as fast
        return x.astype(np.float16, order="C") if out is None else _cast_into(out, x)
    flat_x = np.ascontiguousarray(x).reshape(-1)
    res = np.empty(flat_x.size, np.float16)
    for i in range(0, flat_x.size, _F16_BLOCK):
        res[i:i + _F16_BLOCK] = _to_f16_bits(flat_x[i:i + _F16_BLOCK])
    if out is None:
        return res.reshape(x.shape)
    out[...] = res.reshape(x.shape)
    return out


def _cast_into(out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """numpy's float -> float16 cast of ``x`` written into ``out`` (the same conversion as ``astype``)."""
    np.copyto(out, x, casting="unsafe")
    return out


def _to_f16_bits(x: np.ndarray) -> np.ndarray:
    """f16 codes of contiguous float32/float64 ``x`` (see `to_f16`)."""
    return _f32_to_f16_bits(x) if x.dtype.itemsize == 4 else _f64_to_f16_bits(x)


_U32 = np.uint32


def _f32_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> f16 codes with the FPU doing the rounding: ``|x|`` (scaled by 2**112 then 2**-110,
    so that |x| >= 2**16 overflows to inf on the way) is added to a power of two whose ulp is the
    f16 ulp of ``x``'s binade (2**-24 for every binade below 2**-14); the sum's exponent and top
    fraction bits are the f16 exponent and fraction, rounded to nearest-even, carries and
    subnormals included. NaNs then get numpy's payload rule; the sign is or-ed in."""
    w = x.view(_U32)
    with np.errstate(over="ignore", invalid="ignore"):
        base = np.abs(x)
        base *= np.float32(2.0 ** 112)
        base *= np.float32(2.0 ** -110)
        twice = w + w                                    # the bits without the sign, shifted up by one
        step = twice & _U32(0xFF000000)                  # exponent of x (times two)
        np.maximum(step, _U32(0x71000000), out=step)     # binades below 2**-14 round on the 2**-24 grid
        step >>= _U32(1)
        step += _U32(0x07800000)                         # the power of two whose ulp is x's f16 ulp
        base += step.view(np.float32)
    bits = base.view(_U32)
    o = bits >> _U32(13)
    o &= _U32(0x7C00)
    bits &= _U32(0x0FFF)
    o += bits
    nan = twice > _U32(0xFF000000)
    if nan.any():                                        # numpy's NaN rule: payload top bits, never 0x7C00
        o[nan] = np.maximum(_U32(0x7C00) + ((w[nan] & _U32(0x007FFFFF)) >> _U32(13)), _U32(0x7C01))
    sign = w >> _U32(16)
    sign &= _U32(0x8000)
    o |= sign
    return o.astype(np.uint16).view(np.float16)


def _f64_to_f16_bits(x: np.ndarray) -> np.ndarray:
    """float64 -> f16 codes: rebias and round normals in the integer domain; results below 2**-14
    from ``|x| + 2**28`` (the float addition rounds to the 2**-24 subnormal grid, nearest-even);
    overflow -> inf; numpy's NaN payload rule; the sign."""
    u64 = np.uint64
    u = x.view(u64)
    a = u & u64(0x7FFFFFFFFFFFFFFF)
    o = a >> u64(_F64_CUT)
    o &= u64(1)                                          # the kept fraction's last bit (ties to even)
    o += a
    o += u64(_F64_REBIAS)                                # new exponent bias, half-step minus one (wraps below 2**-14)
    o >>= u64(_F64_CUT)
    np.minimum(o, u64(0x7C00), out=o)                    # overflow and inf -> inf
    small = a < u64(_F64_MIN_NORMAL16)
    if small.any():                                      # subnormals and zeros: the code is the rounded |x| / 2**-24
        with np.errstate(over="ignore", invalid="ignore"):
            k = np.abs(x) + _F64_MAGIC
        k = k.view(u64)
        k -= _F64_MAGIC.view(u64)
        np.copyto(o, k, where=small)
    nan = a > u64(_F64_INF)
    if nan.any():                                        # numpy's NaN rule: payload top bits, never 0x7C00
        o[nan] = np.maximum(u64(0x7C00) + ((a[nan] & u64(_F64_FRAC)) >> u64(_F64_CUT)), u64(0x7C01))
    o |= (u >> u64(48)) & u64(0x8000)
    return o.astype(np.uint16).view(np.float16)


#: The smallest magnitude an RNE conversion to f16 rounds to inf (65504 + half its ulp of 32: the tie
#: rounds to the even code, 0x7C00). `_rne_by_cast` skips its scan of the f16 codes for inf/NaN when the
#: source's max and min lie strictly inside (two reductions that allocate nothing; a NaN max fails the test).
_F16_ROUNDS_TO_INF = 65520.0
_F16_ROUNDS_TO_INF_SQUARE = _F16_ROUNDS_TO_INF ** 2   # exact in f32 and f64: `_below_by_dot`'s bound for it


def _rne_by_cast(arr: np.ndarray, fmt: FloatFormat, sat: str, into: Optional[np.ndarray] = None) -> np.ndarray:
    """RNE conversion of a float32/float64 array via the cast, then the ``sat`` policy.

    ``into``: optional array of ``arr``'s shape and the format's storage dtype that receives the
    result (returned); an f16 cast goes straight into it."""
    res = _rne_by_cast_codes(arr, fmt, sat, into if fmt.name == "f16" else None)
    if into is None or res is into:
        return res
    into[...] = res
    return into


def _no_f16_special(arr: np.ndarray) -> bool:
    """True only if one dot proves no value of ``arr`` is NaN or rounds to an f16 inf (`CHECK_BY_DOT`:
    one pass instead of the max and min scans; False: unknown, the caller scans)."""
    with np.errstate(over="ignore", invalid="ignore"):     # squares of large values may overflow
        return _below_by_dot(arr, _F16_ROUNDS_TO_INF_SQUARE)


def _rne_by_cast_codes(arr: np.ndarray, fmt: FloatFormat, sat: str, into: Optional[np.ndarray]) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        out = to_f16(arr, into) if fmt.name == "f16" else arr.astype(_RNE_CASTS[fmt.name])
    utype = _UINT_OF_BITS[max(8, fmt.code_bits)]
    codes = out.view(utype)
    sign_bit = utype(fmt.sign_bit)
    if fmt.specials == "none":                        # FP4: the cast saturates; only NaN differs
        nan_in = np.isnan(arr)
        if nan_in.any():
            codes = np.where(nan_in, utype(fmt.max_code if sat == "nosat" else 0), codes)
        return codes.view(fmt.storage) if fmt.storage != codes.dtype else codes
    if fmt.name == "f16" and arr.size and (_no_f16_special(arr) or (
            arr.max() < _F16_ROUNDS_TO_INF and arr.min() > -_F16_ROUNDS_TO_INF)):
        return out                                    # no NaN (max/min would be NaN) and nothing rounds to inf
    magnitude = codes & utype(fmt.sign_bit - 1)
    special_out = magnitude >= utype(fmt.inf_code) if fmt.specials == "ieee" else magnitude == utype(fmt.nan_code)
    if special_out.any():                             # overflow, inf inputs, NaN inputs (a NaN casts to NaN)
        nan_in = np.isnan(arr)
        codes = codes.copy()
        if sat != "nosat":
            clamp = special_out & ~nan_in
            codes[clamp] = (codes[clamp] & sign_bit) | utype(fmt.max_code)
        if nan_in.any():
            neg = np.signbit(arr[nan_in])
            nan_codes = np.where(neg, utype(fmt.nan_code) | sign_bit, utype(fmt.nan_code))
            codes[nan_in] = 0 if sat == "sat" else nan_codes
    return codes.view(fmt.storage)


def codes_to_storage(codes: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """View uint64 code words as the format's storage dtype."""
    width = max(8, fmt.code_bits)
    return codes.astype(_UINT_OF_BITS[width]).view(fmt.storage)


# ----------------------------------------------------------------------------- public API


def float_to(x, dst, *, rounding="even", sat="nosat", out: Optional[np.ndarray] = None) -> np.ndarray:
    """Convert float values to float format ``dst`` with one correct rounding.

    Args:
        x: float16/bfloat16/float32/float64 (or float8) values, any shape.
        dst: ``"f32" "f16" "bf16" "e4m3" "e5m2" "hif8" "e2m1" "e1m2"`` (or any dtype spelling,
            a `DType`, ``"e2m1x2"``/``"e1m2x2"`` meaning one unpacked code per element,
            or ``"tf32"``).
        rounding: a `ROUNDING` name or alias; ``"hybrid"`` for hif8 only (`IllegalOperand` otherwise).
        sat: a `SAT_MODES` name (``"sat"``, ``"preserve_nan"``, ``"nosat"``).

    Returns:
        An array of the destination's storage dtype (np.float32, np.float16,
        ml_dtypes.bfloat16/float8_e4m3fn/float8_e5m2; uint8 codes for hif8, e2m1, e1m2).
        With ``out`` (an array of ``x``'s shape and that dtype, any strides) the result is written
        there and ``out`` returned; an RNE f16 conversion casts straight into it.
    """
    if out is not None:
        nd = np.asarray(x)
        fmt = float_format(dst)
        if rounding_name(rounding) == "even" and fmt.name == "f16" and nd.ndim >= 1 and nd.dtype in (
                np.float32, np.float64) and out.shape == nd.shape and out.dtype == np.float16:
            return _rne_by_cast(nd, fmt, sat_name(sat), out)
        out[...] = float_to(x, dst, rounding=rounding, sat=sat)
        return out
    fmt = float_format(dst)
    if fmt.name == "hif8":
        from .hif8 import hif8_encode
        return hif8_encode(x, rounding=rounding, sat=sat)
    if is_hybrid(rounding):
        raise IllegalOperand(f"hybrid rounding exists only for hif8 destinations, not {fmt.name}",
                             operand="rounding", value=rounding, limit="dst hif8",
                             hint="use one of even, away, floor, ceil, zero, odd")
    mode = rounding_name(rounding)
    satm = sat_name(sat)
    nd = np.asarray(x)
    if mode == "even" and fmt.name in _RNE_CASTS and nd.ndim >= 1 and (nd.dtype == np.float32 or (
            nd.dtype == np.float64 and fmt.name in _RNE_CASTS_FROM_F64)):
        # in the source's shape: a strided view (a fixpipe slab of the Nz tile) is cast without a copy
        return np.ascontiguousarray(_rne_by_cast(nd, fmt, satm))
    arr, shape = flat(nd)
    if mode == "even" and fmt.name in _RNE_CASTS and (arr.dtype == np.float32 or (
            arr.dtype == np.float64 and fmt.name in _RNE_CASTS_FROM_F64)):
        return _rne_by_cast(arr, fmt, satm).reshape(shape)
    x64, _ = exact_float64(arr)
    return codes_to_storage(encode_float64(x64, fmt, mode, satm), fmt).reshape(shape)


def tf32_round(x, mode="even") -> np.ndarray:
    """Round values to TF32 (8-bit exponent, 10-bit fraction) and return them as float32.

    ``mode`` is the ``tf32_mode`` clause of ``pto.mad``: ``"even"`` (round_even) or
    ``"away"`` (round_away); other `ROUNDING` names are accepted too. Overflow follows IEEE
    (``nosat``): rounding past FLT_MAX gives inf; NaN/inf pass through.
    """
    fmt = FORMATS["tf32"]
    arr, shape = flat(x)
    x64, _ = exact_float64(arr)
    return codes_to_storage(encode_float64(x64, fmt, rounding_name(mode), "nosat"), fmt).reshape(shape)


def round_to_integral(x, rounding="even") -> np.ndarray:
    """Round float values to integral values in the same float dtype (TIK ``f322f32r`` etc.).

    The sign of zero is kept (``-0.4`` toward zero is ``-0.0``); inf and NaN pass through.
    """
    arr = np.asarray(x)
    x64, src = exact_float64(arr)
    out = round_integral_f64(x64, rounding_name(rounding))
    return out.astype(src)          # integral results of a narrower source fit it exactly


@lru_cache(maxsize=None)
def decode_table(name: str, as_f32: bool = False) -> np.ndarray:
    """Read-only table of the values of every code of a format of at most 16 bits."""
    fmt = FORMATS[name]
    codes = np.arange(1 << fmt.code_bits, dtype=np.int64)
    table = fmt.decode_codes(codes)
    table = table.astype(np.float32) if as_f32 else table
    table.flags.writeable = False
    return table


def code_bits_of(values, fmt: FloatFormat) -> np.ndarray:
    """Raw code words of ``values`` given either as the format's storage dtype or as raw
    unsigned codes (uint8 for 8-bit and FP4 formats, uint16 for f16/bf16)."""
    arr = np.asarray(values)
    width = max(8, fmt.code_bits)
    raw = np.dtype(_UINT_OF_BITS[width])
    if arr.dtype == raw:
        bits = arr
    elif arr.dtype == fmt.storage:
        bits = arr.view(raw)
    else:
        raise IllegalOperand(f"values of dtype {arr.dtype} are not {fmt.name} codes", operand="values",
                             value=str(arr.dtype), limit=f"{fmt.storage} or raw {raw}",
                             hint=f"pass the {fmt.name} storage array (or its raw bits), e.g. the "
                                  f"result of float_to(x, {fmt.name!r})")
    if fmt.code_bits < 8 and arr.size and int(bits.max()) >= (1 << fmt.code_bits):
        raise IllegalOperand(f"{fmt.name} codes must be 0..{(1 << fmt.code_bits) - 1}, got {int(bits.max())}",
                             operand="values", value=int(bits.max()), limit=f"[0, {(1 << fmt.code_bits) - 1}]",
                             hint="unpack packed bytes with unpack_nibbles(raw, count) first")
    return bits


def to_f64(values, src) -> np.ndarray:
    """Exact float64 values of ``values`` in format ``src`` (codes for hif8/e2m1/e1m2/e8m0)."""
    name = format_name(src)
    if name == "e8m0":
        from .e8m0 import e8m0_decode
        return e8m0_decode(values).astype(np.float64)
    fmt = float_format(name)
    bits = code_bits_of(values, fmt)
    if fmt.code_bits > 16:
        return bits.view(fmt.storage).astype(np.float64)
    return decode_table(fmt.name)[bits]


def to_f32(values, src) -> np.ndarray:
    """Exact float32 values of ``values`` in format ``src`` (every format here fits in f32)."""
    name = format_name(src)
    if name == "e8m0":
        from .e8m0 import e8m0_decode
        return e8m0_decode(values)
    fmt = float_format(name)
    bits = code_bits_of(values, fmt)
    if fmt.code_bits > 16:
        return bits.view(np.float32).copy()
    return decode_table(fmt.name, True)[bits]
