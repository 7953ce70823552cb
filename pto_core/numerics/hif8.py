"""HiFloat8 (HiF8): Huawei's 8-bit tapered-precision float (Ascend A5 FIXPIPE ``qf322hif8_*``).

Encoding (bit 7 = sign ``S``; the "dot" field is a prefix code that says how many exponent
bits follow; exponents are sign-magnitude with an implicit leading magnitude bit)::

    S 11 e eee m      D4  |E| in 8..15   E = +-(8 + eee)   1 fraction bit
    S 10 e ee mm      D3  |E| in 4..7    E = +-(4 + ee)    2 fraction bits
    S 01 e e mmm      D2  |E| in 2..3    E = +-(2 + e)     3 fraction bits
    S 001 e mmm       D1  |E| = 1        E = +-1           3 fraction bits
    S 0001 mmm        D0  E = 0                            3 fraction bits
    S 0000 MMM        DML denormal: value 2**(MMM - 23)  (MMM = 1..7: 2**-22 .. 2**-16)

    (the exponent sign bit ``e`` right after the dot is 1 for negative exponents)
    value = (-1)**S * 2**E * (1 + m / 2**bits)

Specials: ``0x00`` is the only zero (no -0), ``0x80`` is the only NaN, ``0x6F``/``0xEF``
(the E=+15, m=1 pattern, 1.5 * 2**15) are +-inf. Largest finite magnitude 2**15 = 32768
(``0x6E``), smallest 2**-22 (``0x01``).

Rounding:

* ``away`` (TA, nearest with ties away from zero) is the documented default (Ascend C
  ``CAST_ROUND``); every `ROUNDING` mode is available on the HiF8 grid. With ``away`` the
  overflow threshold is 1.25 * 2**15 = 40960 (the midpoint to the would-be 1.5 * 2**15), and
  values in [2**-23, 2**-22) round up to 2**-22 (the midpoint to 0 ties away).
* ``hybrid`` (Ascend C ``CAST_HYBRID``, FIXPIPE ``qf322hif8_pre_hybrid``): TA when the
  source binade has ``|E| < 4``; otherwise "SSR", a deterministic stochastic rounding that
  uses the source's own low mantissa bits as the random number. f32 source: with ``R`` the
  dropped fraction bits, round up iff ``F14 >= T14`` where ``F14`` is the top 14 bits of
  ``R`` and ``T14`` the low 14 bits of the f32 fraction (binade -23: ``F14 = 2**13 +
  (fraction >> 10)``, ``T14 = fraction & 0x3FFF``; binades below -23 give 0). f16 source:
  round up iff ``F2 >= 2 * lsb + 1`` with ``F2`` the top 2 dropped bits and ``lsb`` the last
  bit of the half (binade -23: ``F2 = 2 + (fraction >> 9)``). Note ``F14 >= T14`` holds when
  ``R == 0``, so exactly representable values with ``|E| >= 4`` round *up* one step in
  hybrid mode (e.g. 16.0 -> 20.0); this follows Huawei's golden generators verbatim.
* Saturation: ``sat`` clamps overflow/inf to +-32768 and maps NaN to 0; ``preserve_nan`` keeps
  NaN; ``nosat`` gives +-inf (0x6F/0xEF) and NaN (0x80).

Sources: arXiv 2409.16626 (format); CANN AICPU ``hif8.cc`` and ``en_dtypes`` ``hifloat.h``
(encode/decode); Huawei golden generators in torch_npu/CANN-ops tests (TA/SSR/hybrid); the
Ascend C ``Cast`` doc (``CAST_ROUND``/``CAST_HYBRID`` for hifloat8_t). Details and every
choice in ``migration_guide/numerics.md``.
"""
from __future__ import annotations

import numpy as np

from ..errors import IllegalOperand
from .floats import FORMATS, FloatFormat, code_bits_of, exact_float64, flat
from .rounding import bit_length, is_hybrid, round_to_grid, rounding_name, sat_name, split_float

HIF8_ZERO = 0x00
HIF8_NAN = 0x80
HIF8_INF = 0x6F          # | 0x80 for -inf
HIF8_MAX = 0x6E          # 2**15
HIF8_MAX_VALUE = 32768.0
_OVERFLOW_THRESHOLD = 40960.0   # 1.25 * 2**15: midpoint between 2**15 and the inf pattern 1.5 * 2**15


_E_LO, _E_HI = -23, 16                       # table range of binades (clipped beyond)


def _mantissa_bits_table() -> np.ndarray:
    E = np.arange(_E_LO, _E_HI + 1)
    a = np.abs(E)
    return np.select([E < -15, a <= 3, a <= 7], [0, 3, 2], default=1).astype(np.int64)


_P_TABLE = _mantissa_bits_table()


def hif8_mantissa_bits(E: np.ndarray) -> np.ndarray:
    """Fraction bits HiF8 keeps in binade ``E`` (0 in the denormal binades -22..-16)."""
    return _P_TABLE[np.clip(E, _E_LO, _E_HI) - _E_LO]


def _decode_hif8_codes(codes: np.ndarray) -> np.ndarray:
    """float64 values of HiF8 codes, straight from the field layout."""
    c = np.asarray(codes, dtype=np.int64)
    sign = (c >> 7) & 1
    b = c & 0x7F
    dot2 = b >> 5
    # (exponent magnitude, exponent sign, fraction, fraction bits) for each dot class
    d4 = dot2 == 3
    d3 = dot2 == 2
    d2 = dot2 == 1
    d1 = (dot2 == 0) & ((b >> 4) & 1 == 1)
    d0 = (b >> 3) == 1
    dml = (b >> 3) == 0
    mag = np.select([d4, d3, d2, d1], [8 + ((b >> 1) & 7), 4 + ((b >> 2) & 3), 2 + ((b >> 3) & 1), 1], 0)
    esign = np.where(d1, (b >> 3) & 1, (b >> 4) & 1)
    fbits = np.select([d4, d3], [1, 2], 3)
    frac = b & ((1 << fbits) - 1)
    E = np.where(esign == 1, -mag, mag)
    E = np.where(d0, 0, E)
    val = np.ldexp(1.0 + frac / np.ldexp(1.0, fbits), E)
    val = np.where(dml, np.where((b & 7) == 0, 0.0, np.ldexp(1.0, (b & 7) - 23)), val)
    val = np.where(b == HIF8_INF, np.inf, val)
    val = np.where(c == HIF8_NAN, np.nan, val)
    return np.where(sign == 1, -val, val)


def _pow2_codes() -> np.ndarray:
    """Code of 2**E for E = -22..15; the fraction bits of a binade are the code's low bits."""
    codes = np.arange(0x80, dtype=np.int64)
    vals = _decode_hif8_codes(codes)
    return np.array([int(codes[vals == 2.0 ** E][0]) for E in range(-22, 16)], dtype=np.int64)


_POW2_CODE = _pow2_codes()


class HiF8Format(FloatFormat):
    """HiF8 as a `FloatFormat`: tapered quantum, table-based assembly, single zero."""

    def quantum_exp(self, E):
        E = np.asarray(E, dtype=np.int64)
        return np.where(E < -22, -22, E - hif8_mantissa_bits(E))     # E > 15 keeps D4's 1 bit

    def parity_fn(self, Q):
        # The last code bit of kept * 2**Q: in the denormal binades consecutive powers of two
        # have consecutive codes, so it is not simply kept & 1.
        return lambda kept: self.assemble(kept, Q) & np.uint64(1)

    def assemble(self, K, Q):
        """Codes of ``K * 2**Q``: the code of the binade's power of two plus the fraction bits."""
        with np.errstate(over="ignore"):
            v = np.ldexp(np.asarray(K, dtype=np.float64), np.clip(Q, -2000, 2000).astype(np.int32))
        frac, ex = np.frexp(v)                                  # v = frac * 2**ex, frac in [0.5, 1)
        E = np.clip(ex.astype(np.int64) - 1, -22, 15)           # out-of-range: replaced by the caller
        p = hif8_mantissa_bits(E)
        mant = (np.ldexp(frac, (p + 1).astype(np.int32)) - np.ldexp(1.0, p.astype(np.int32))).astype(np.int64)
        codes = _POW2_CODE[E + 22] + mant
        return np.where(v == 0, 0, codes).astype(np.uint64)

    @property
    def max_value(self):
        return HIF8_MAX_VALUE

    @property
    def max_code(self):
        return HIF8_MAX

    @property
    def inf_code(self):
        return HIF8_INF

    @property
    def nan_code(self):
        return HIF8_NAN

    @property
    def nan_signed(self):
        return False

    @property
    def has_signed_zero(self):
        return False

    def decode_codes(self, codes):
        return _decode_hif8_codes(codes)


#: exp_bits/man_bits/bias of the IEEE row do not apply (every hook above is overridden);
#: man_bits=3 is the widest fraction HiF8 keeps.
FORMATS["hif8"] = HiF8Format("hif8", 0, 3, 0, "tapered", np.dtype(np.uint8), 8)


def hif8_decode(codes) -> np.ndarray:
    """float32 values of HiF8 codes (uint8)."""
    from .floats import decode_table
    return decode_table("hif8", True)[code_bits_of(codes, FORMATS["hif8"])]


def _f32_exact(x64: np.ndarray, src: np.dtype) -> np.ndarray:
    x32 = x64.astype(np.float32)
    bad = ~((x32.astype(np.float64) == x64) | np.isnan(x64))
    if bad.any():
        first = int(np.flatnonzero(bad.ravel())[0])
        raise IllegalOperand(f"hybrid rounding is defined on f32 (or f16) source bits, but {int(bad.sum())} "
                             f"values are not exactly representable in f32 (first: {x64.ravel()[first]!r})",
                             operand="x", value=str(src), limit="f32 or f16 sources",
                             hint="convert the source to float32 first (that is what the accumulator holds)")
    return x32


def _hybrid_round(x64: np.ndarray, src: np.dtype):
    """(neg, K, Q, finite) for hybrid rounding of f32 / f16 sources (see module doc)."""
    if src == np.dtype(np.float16):
        lsb = (x64.astype(np.float16).view(np.uint16) & 1).astype(np.int64)
        src_frac_bits, rnd_bits = 10, 2
    elif src in (np.dtype(np.float32), np.dtype(np.float64)):
        _f32_exact(x64, src)
        lsb = None
        src_frac_bits, rnd_bits = 23, 14
    else:
        raise IllegalOperand(f"hybrid rounding to hif8 is defined for f32 and f16 sources, not {src}",
                             operand="x", value=str(src), limit="float32 or float16",
                             hint="convert the source to float32 first")
    neg, m, e, E, finite = split_float(x64)
    # fraction field of the source, relative to its own binade (exact: m has 53 bits)
    frac = ((m >> np.uint64(52 - src_frac_bits)) & np.uint64((1 << src_frac_bits) - 1)).astype(np.int64)
    p = hif8_mantissa_bits(np.clip(E, -22, 15))
    drop = src_frac_bits - p                                   # dropped fraction bits (>= 7)
    kept = frac >> drop
    rem = frac & ((np.int64(1) << drop) - 1)
    f_top = rem >> (drop - rnd_bits)                           # top rnd_bits of the dropped bits
    if lsb is None:
        threshold = frac & ((1 << rnd_bits) - 1)               # T14: low 14 fraction bits
    else:
        threshold = 2 * lsb + 1
    at_m23 = E == -23
    f_top = np.where(at_m23, (1 << (rnd_bits - 1)) + (frac >> (src_frac_bits - rnd_bits + 1)), f_top)
    up = (f_top >= threshold).astype(np.int64)
    K_ssr = np.where(at_m23, up, (np.int64(1) << p) + kept + up)
    Q_ssr = np.where(at_m23, -22, E - p)
    K_ssr = np.where(E < -23, 0, K_ssr)
    # TA (nearest, ties away) for |E| < 4
    Q_ta = FORMATS["hif8"].quantum_exp(E)
    K_ta = round_to_grid(neg, m, e, Q_ta, "away").astype(np.int64)
    use_ssr = np.abs(E) >= 4
    K = np.where(use_ssr, K_ssr, K_ta)
    Q = np.where(use_ssr, Q_ssr, Q_ta)
    # |x| >= 1.25 * 2**15 overflows before rounding in both halves of the hybrid mode
    over = finite & (np.abs(x64) >= _OVERFLOW_THRESHOLD)
    return neg, np.where(over, 3, K), np.where(over, 14, Q), finite


def hif8_encode(x, *, rounding="away", sat="nosat") -> np.ndarray:
    """Encode float values as HiF8 codes (uint8).

    Args:
        x: float values (f16/bf16/f32/f64). ``rounding="hybrid"`` needs f32 or f16 sources
            (f64 values must be exactly representable in f32).
        rounding: ``"away"`` (default, TA), ``"hybrid"``, or any other `ROUNDING` name.
        sat: ``"sat"``, ``"preserve_nan"`` or ``"nosat"``.
    """
    fmt = FORMATS["hif8"]
    satm = sat_name(sat)
    arr, shape = flat(x)
    x64, src = exact_float64(arr)
    if not is_hybrid(rounding):
        neg, m, e, E, finite = split_float(x64)
        codes = fmt.encode(neg, m, e, E, rounding_name(rounding), satm, nan=np.isnan(x64), inf=np.isinf(x64))
        return codes.astype(np.uint8).reshape(shape)
    neg, K, Q, finite = _hybrid_round(x64, src)
    # Re-express (K, Q) as an exact value and let the generic encoder do range and specials:
    # with m = K, e = Q the value is already on the HiF8 grid, so no second rounding happens
    # ("away" only decides the nosat overflow direction: nearest -> inf).
    nz = finite & (K != 0)
    Kc = np.where(nz, K, 0).astype(np.uint64)
    Ek = np.where(nz, Q + bit_length(Kc) - 1, 0)
    codes = fmt.encode(neg, Kc, np.where(nz, Q, 0), Ek, "away", satm, nan=np.isnan(x64), inf=np.isinf(x64))
    return codes.astype(np.uint8).reshape(shape)
