"""FIXPIPE pre-quantisation: the quant-mode table and one small function per mode family.

FIXPIPE (``pto.mte_l0c_*``) converts each accumulator element in this order
(PTO micro-ISA "FIXPIPE MTE Ops"; pto_spec.md §5.1):

1. ``pre_quant``: multiply by the mode's FP19 scale (scalar or per output column),
2. ``pre_relu``: the activation picks the multiplier of *negative raw accumulators*
   (``normal_relu`` -> 0, ``scalar_relu``/``vector_relu`` -> the FP19 alpha, which
   replaces the scale; pto-spec ADR-0085 decision 176),
3. integer families: round to nearest even and saturate to the S5/S9/S17
   intermediate, then add the signed 5/9/17-bit offset (decision 177),
4. ``clip``: ``y = min(y, clip)``,
5. final conversion to the destination type: float destinations by
   `pto_core.numerics.float_to` / `hif8_encode` under ``sat`` / ``sat(preserve_nan)`` /
   ``nosat``; integer destinations clamp to the destination range (b8 families: s8
   or u8 range by the sign control).

Products are formed in float64, which is exact for f32 or s32 accumulators times an
FP19 multiplier (at most 24+11 resp. 32+11 significant bits), so every float
destination sees one rounding from the exact value.

Every choice where sources disagree is listed, with sources, in
``migration_guide/fixpipe_semantics.md``. Parameter words (vector payload entries
and the raw hardware carrier) use the hardware layout of pto_spec.md §5.3:
FP19 scale = bits [31:13], shift code = [35:32], offset = [41:37] / [45:37] /
[53:37] (two's complement), b8 sign control = bit 46 (1 = s8 range).

All functions here are pure numpy; no simulator state.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

import pto_core.numerics as _nx  # resolved at call time (float_to, hif8_encode, fp19)

from ..dtypes import DType, dtype as _dtype

#: ``pre_relu`` modes (hardware ReLUPRE codes 0..3).
RELU_MODES = ("no_relu", "normal_relu", "scalar_relu", "vector_relu")
#: Integer destinations that ``clip`` accepts (plus ``f16``); pto_spec.md §5.4.
CLIP_DESTINATIONS = ("f16", "u8", "s4", "s8", "s16")

ArrayLike = Union[np.ndarray, float, int]

ALL_ARCHS = ("a2a3", "a5", "kirin9030", "kirinx90")
_A2A3_A5 = ("a2a3", "a5")
_A5 = ("a5",)
_A2A3 = ("a2a3",)
_WITH_KIRIN = ("a2a3", "a5", "kirin9030", "kirinx90")
#: Modes pto-isa gives Kirin9030 but not KirinX90 (``include/pto/npu/kirin9030/common.hpp``
#: ``GetScalarPreQuantMode`` / ``GetVectorPreQuantMode``: int32 -> int16 is DEQS16 / VDEQS16).
_WITH_KIRIN9030 = ("a2a3", "a5", "kirin9030")


# ----------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class QuantArgs:
    """Resolved per-op parameters of one conversion.

    Array-valued fields are per output column and must broadcast against the
    accumulator array the functions receive (the caller shapes them).

    Attributes:
        dst: destination element type.
        sat: ``"sat"``, ``"preserve_nan"`` or ``"nosat"`` (already resolved).
        scale: FP19 scale as float64 (scalar or per column); 1.0 when the mode has none.
        offset: signed integer offset added after the intermediate (int64).
        signed: b8 sign control (True = s8 range, False = u8 range).
        shift: right-shift amount 1..16 of the shift modes.
        relu: one of `RELU_MODES`.
        alpha: FP19 negative-path multiplier of ``scalar_relu``/``vector_relu`` (float64).
        clip: ``min(y, clip)`` bound (int for integer destinations, float for f16) or None.
    """

    dst: DType
    sat: str = "nosat"
    scale: Any = 1.0
    offset: Any = 0
    signed: Any = True
    shift: Any = 1
    relu: str = "no_relu"
    alpha: Any = 0.0
    clip: Optional[Union[int, float]] = None


def word_scale(words: np.ndarray, scale_dtype="f32") -> np.ndarray:
    """FP19 scale (float32) of 64-bit parameter words.

    ``scale_dtype`` f32 (hardware layout): the f32 bit pattern in bits [31:0], FP19 =
    bits [31:13]. ``f16`` / ``bf16``: an f16 / bf16 value in bits [15:0], widened
    exactly (both fit FP19).
    """
    w = np.asarray(words, dtype=np.uint64)
    name = _dtype(scale_dtype).name
    if name == "f32":
        bits = (w & np.uint64(0xFFFFE000)).astype(np.uint32)
        return bits.view(np.float32)
    low = (w & np.uint64(0xFFFF)).astype(np.uint16)
    return low.view(_dtype(name).storage).astype(np.float32)


def word_offset(words: np.ndarray, bits: int) -> np.ndarray:
    """Signed offset field (two's complement) of ``bits`` in {5, 9, 17} at bit 37; int64."""
    if bits == 0:
        return np.zeros(np.shape(words), dtype=np.int64)
    raw = ((np.asarray(words, dtype=np.uint64) >> np.uint64(37)) & np.uint64((1 << bits) - 1)).astype(np.int64)
    return np.where(raw >= (1 << (bits - 1)), raw - (1 << bits), raw)


def word_signed(words: np.ndarray) -> np.ndarray:
    """b8 sign control, bit 46 (True = signed s8 range)."""
    return ((np.asarray(words, dtype=np.uint64) >> np.uint64(46)) & np.uint64(1)).astype(bool)


def word_shift(words: np.ndarray) -> np.ndarray:
    """Shift amount of the shift modes: bits [35:32] + 1 (1..16); int64."""
    return ((np.asarray(words, dtype=np.uint64) >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1


def make_word(scale=0.0, *, offset: int = 0, offset_bits: int = 9, signed: bool = False,
              shift: Optional[int] = None) -> int:
    """One 64-bit parameter word (hardware layout) from its fields; the inverse of the ``word_*`` decoders.

    ``scale`` is stored as its f32 bit pattern (the FP19 field is its top 19 bits).
    """
    word = int(np.array(scale, dtype=np.float32).view(np.uint32))
    if offset_bits:
        word |= (int(offset) & ((1 << offset_bits) - 1)) << 37
    if signed:
        word |= 1 << 46
    if shift is not None:
        word |= ((int(shift) - 1) & 0xF) << 32
    return word


def invalid_scale(fp19_values: np.ndarray) -> np.ndarray:
    """Mask of scales that are not positive normal FP19 numbers (pto-spec ADR-0085 decision 180)."""
    v = np.asarray(fp19_values, dtype=np.float32)
    return ~(np.isfinite(v) & (v >= np.float32(2.0 ** -126)))


def invalid_alpha(fp19_values: np.ndarray) -> np.ndarray:
    """Mask of activation parameters that are not +0 or positive normal FP19 (decision 180)."""
    v = np.asarray(fp19_values, dtype=np.float32)
    pos_zero = (v == 0) & ~np.signbit(v)
    return ~((np.isfinite(v) & (v >= np.float32(2.0 ** -126))) | pos_zero)


# ----------------------------------------------------------------------------- building blocks


def multiplied(x: np.ndarray, scale, a: QuantArgs) -> np.ndarray:
    """``x * multiplier`` in float64 with the activation's negative path (decision 176).

    Non-negative raw values (and NaN) take ``scale``; negative raw values take 0
    (``normal_relu``), ``alpha`` (``scalar_relu``/``vector_relu``) or ``scale``
    (``no_relu``). ``scale=None`` means 1.
    """
    if scale is None or (np.isscalar(scale) and scale == 1.0):
        v = np.asarray(x).astype(np.float64, order="C")
    else:
        v = np.multiply(x, scale, dtype=np.float64, order="C")   # C order: encoders flatten it as a view
    if a.relu == "no_relu":
        return v
    neg = x < 0
    if a.relu == "normal_relu":
        return np.where(neg, 0.0, v)
    return np.where(neg, np.multiply(x, a.alpha, dtype=np.float64), v)


#: Named choice **S32_ACTIVATION_ROUNDING**: an s32 accumulator written to s32 without ``pre_quant`` but with
#: ``scalar_relu`` / ``vector_relu`` gives ``alpha*x`` for a negative ``x`` (exact in float64: 32 x 11 bits), which is
#: rounded to an integer by this rule -- ``"even"``: to nearest, ties to even -- and then clamped to s32 (an alpha
#: above 1 can pass -2**31; fixpipe_semantics.md #3). Source: pto-spec ``MatrixPostQuantBaseWithFlags``
#: (docs/arch/profile/matrix-postprocess.md): pre-quant mode 0 with a ReLU mode multiplies the raw s32 value by the
#: FP19 alpha exactly and encodes the real result with ``ReferenceMatrixIntegerEncoding`` (``FloatingToInteger``
#: under the instruction's rounding control, which mode 0 does not fix: ``BundleFPATRModeFixedRounding``). The
#: micro-ISA FIXPIPE has no rounding clause, so the simulator rounds as every other FIXPIPE integer conversion does
#: (#1, #12: nearest even). VPTO, CCE and the pto-isa CPU simulator (ReLU = ``max(x, 0)`` only) say nothing of it.
#: ``"zero"`` (C truncation) and ``"floor"`` are the alternatives `INT_ROUNDERS` knows.
#: migration_guide/fixpipe_semantics.md #36.
S32_ACTIVATION_ROUNDING = "even"
#: Float -> integral-float rounding functions by rule name (`round_saturate`).
INT_ROUNDERS = {"even": np.rint, "zero": np.trunc, "floor": np.floor}


def round_saturate(v: np.ndarray, bits: int, rounding: str = "even") -> np.ndarray:
    """Round by ``rounding`` (an `INT_ROUNDERS` key; nearest even by default) and saturate to a signed
    ``bits``-wide integer (NaN -> 0); int64."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    r = INT_ROUNDERS[rounding](v)
    if r.dtype.kind == "f":
        r = np.where(np.isnan(r), 0.0, r)
    return np.clip(r, lo, hi).astype(np.int64)


def integer_range(dst: DType, signed=True):
    """``(lo, hi)`` of an integer destination; the b8 range follows the sign control."""
    if dst.name in ("s8", "u8"):
        lo = np.where(signed, -128, 0)
        hi = np.where(signed, 127, 255)
        return lo, hi
    return dst.min, dst.max


def encode_integer(y: np.ndarray, a: QuantArgs) -> np.ndarray:
    """Clip, clamp to the destination range and store (s4 unpacked: one int8 per element)."""
    if a.clip is not None:
        y = np.minimum(y, int(a.clip))
    lo, hi = integer_range(a.dst, a.signed)
    y = np.clip(y, lo, hi).astype(np.int64)
    if a.dst.name in ("s8", "u8"):
        return (y & 0xFF).astype(np.uint8).view(a.dst.storage)
    if a.dst.name == "s4":
        return y.astype(np.int8)
    return y.astype(a.dst.storage)


def encode_float(v: np.ndarray, dst: DType, sat: str, rounding: str = "even",
                 out: Optional[np.ndarray] = None) -> np.ndarray:
    """One rounding of exact float64 values to a float destination under the saturation mode.

    f32 destinations keep inf/NaN inputs whatever ``sat`` says (only finite overflow
    is clamped by ``sat``); hif8 uses `hif8_encode` with ``rounding`` (away/hybrid; the
    hybrid rule reads the low bits of an f32 value, so the product is first rounded to f32).
    ``out``: optional destination array of ``v``'s shape (any strides) that receives the result.
    """
    if out is not None:
        if dst.name in ("hif8", "f32"):
            out[...] = encode_float(v, dst, sat, rounding)
            return out
        return _nx.float_to(v, dst.name, rounding=rounding, sat=sat, out=out)
    if dst.name == "hif8":
        if rounding == "hybrid":  # hybrid rounding is defined on the f32 bits of the scaled value
            v = _nx.float_to(v, "f32", rounding="even", sat="nosat")
        return _nx.hif8_encode(v, rounding=rounding, sat=sat)
    if dst.name == "f32":
        out = _nx.float_to(v, "f32", rounding="even", sat="nosat" if sat == "nosat" else "sat")
        special = ~np.isfinite(v)
        if special.any():
            out = np.where(special, v.astype(np.float32), out)
        return out
    return _nx.float_to(v, dst.name, rounding=rounding, sat=sat)


def _clip_float(v: np.ndarray, a: QuantArgs) -> np.ndarray:
    """``y = min(y, clip)``: values above ``clip`` become ``clip``; others (NaN, equal zeros) stay."""
    if a.clip is None:
        return v
    c = float(a.clip)
    return np.where(v > c, c, v)


# ----------------------------------------------------------------------------- mode families


def cast(x: np.ndarray, a: QuantArgs, mode: "QuantMode", out: Optional[np.ndarray] = None) -> np.ndarray:
    """``f32_f16`` / ``f32_bf16``: no scale; the payload is required by syntax only.

    Without activation or clip, float32 values go to the encoder as they are (one rounding
    from the exact f32 value either way; skips the float64 copy). ``out``: see `encode_float`."""
    if x.dtype == np.float32 and a.relu == "no_relu" and a.clip is None:
        return encode_float(x, a.dst, a.sat, mode.rounding, out)
    return encode_float(_clip_float(multiplied(x, None, a), a), a.dst, a.sat, mode.rounding, out)


def same_type(x: np.ndarray, a: QuantArgs, mode: "QuantMode") -> np.ndarray:
    """``no_convert`` and writes without ``pre_quant``: destination type = accumulator type."""
    if x.dtype.kind == "u":          # legacy u32 accumulators: nothing is negative
        return encode_integer(x.astype(np.int64), a)
    if x.dtype.kind == "i":
        y = multiplied(x, None, a) if a.relu != "no_relu" else x.astype(np.int64)
        return encode_integer(round_saturate(y, 32, S32_ACTIVATION_ROUNDING) if y.dtype.kind == "f" else y, a)
    return encode_float(_clip_float(multiplied(x, None, a), a), a.dst, a.sat, "even")


def scaled_float(x: np.ndarray, a: QuantArgs, mode: "QuantMode") -> np.ndarray:
    """Scale, activation, clip, one rounding to the float destination (f16/bf16/f32/e4m3/hif8)."""
    return encode_float(_clip_float(multiplied(x, a.scale, a), a), a.dst, a.sat, mode.rounding)


def scaled_int(x: np.ndarray, a: QuantArgs, mode: "QuantMode") -> np.ndarray:
    """Scale, activation, round+saturate to S``inter_bits``, add the offset, clip, clamp.

    ``f16_stage`` modes (``qf162*``) first round the accumulator to f16 (RNE,
    saturating, NaN -> 0). ``inter_bits == 0`` (``deqs32_int``) rounds straight to the
    destination range.
    """
    if mode.f16_stage:
        x = _nx.float_to(np.asarray(x, dtype=np.float64), "f16", rounding="even", sat="sat").astype(np.float64)
    v = multiplied(x, a.scale, a)
    if mode.inter_bits:
        y = round_saturate(v, mode.inter_bits) + np.asarray(a.offset, dtype=np.int64)
    else:
        y = round_saturate(v, a.dst.bits)
    return encode_integer(y, a)


def shift_s16(x: np.ndarray, a: QuantArgs, mode: "QuantMode") -> np.ndarray:
    """``(v)shifts322s16``: arithmetic right shift by 1..16 bits, saturate to s16.

    With ``scalar_relu``/``vector_relu`` the negative path is ``floor(alpha*x / 2**shift)``.
    """
    shift = np.asarray(a.shift, dtype=np.int64)
    if a.relu == "no_relu":
        y = np.right_shift(x.astype(np.int64), shift)
    else:
        y = np.floor(multiplied(x, None, a) * np.power(2.0, -shift)).astype(np.int64)
    return encode_integer(y, a)


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class QuantMode:
    """One ``pre_quant`` mode.

    Attributes:
        name: PTO-AS keyword (``"qf322f16_pre_scalar"``); the shift modes, which have
            no PTO-AS keyword, are named ``shifts322s16_vec`` / ``shifts322s16_scalar``.
        tp_code: PTOAS target-profile code (= the CCE compiler's ``QuantMode_t`` on A5),
            None where the mode has none.
        cce_code: pto-isa C++ / CPU-sim / pto-spec ADR-0085 ``QuantMode_t`` code
            (pto_spec.md §5.3), None where unknown.
        acc: legal accumulator dtypes.
        dst: legal destination dtypes (empty = same as the accumulator).
        payload: ``"vec"`` (fb pointer of 64-bit words), ``"scalar"`` (f16/bf16/f32 scale),
            ``"ignored"`` (scalar required by syntax, unused), ``"shift_vec"``,
            ``"shift_scalar"`` (int shift 1..16).
        fn: the family function ``fn(acc_values, QuantArgs, mode) -> destination storage``.
        archs: architecture families (``ChipProfile.arch``) that have the mode.
        inter_bits: S5/S9/S17 intermediate width (0 = none).
        offset_bits: width of the payload offset field (0 = none).
        f16_stage: accumulator rounded to f16 first (``qf162*``).
        rounding: final float rounding (``"even"``; hif8: ``"away"`` / ``"hybrid"``).
    """

    name: str
    tp_code: Optional[int]
    cce_code: Optional[int]
    acc: tuple
    dst: tuple
    payload: str
    fn: Callable
    archs: tuple = _A2A3_A5
    inter_bits: int = 0
    offset_bits: int = 0
    f16_stage: bool = False
    rounding: str = "even"

    @property
    def is_vector(self) -> bool:
        return self.payload in ("vec", "shift_vec")

    @property
    def has_scale(self) -> bool:
        return self.payload in ("vec", "scalar")

    @property
    def sign_from_payload(self) -> bool:
        """b8 vector modes take the s8/u8 range from bit 46 of each channel word."""
        return self.payload == "vec" and set(self.dst) == {"s8", "u8"}


def _pair(base, tp, cce, acc, dst, fn, **kw):
    """The ``_vec`` and ``_scalar`` rows of one family (codes given as (vec, scalar))."""
    return (QuantMode(base + "_vec", tp[0], cce[0], acc, dst, "vec", fn, **kw),
            QuantMode(base + "_scalar", tp[1], cce[1], acc, dst, "scalar", fn, **kw))


_F32, _S32 = ("f32",), ("s32",)
_B8 = ("s8", "u8")

_ROWS = (
    QuantMode("no_convert", 0, 0, ("f32", "s32", "f16"), (), "ignored", same_type, archs=ALL_ARCHS),
    QuantMode("f32_f16", 1, 1, _F32, ("f16",), "ignored", cast),
    QuantMode("f32_bf16", 16, 16, _F32, ("bf16",), "ignored", cast),
    *_pair("qf322hif8_pre", (2, 3), (28, 25), _F32, ("hif8",), scaled_float, archs=_A5, rounding="away"),
    *_pair("qf322hif8_pre_hybrid", (4, 5), (None, None), _F32, ("hif8",), scaled_float, archs=_A5,
           rounding="hybrid"),
    *_pair("deqs32_int", (6, 7), (None, None), _S32, ("s32",), scaled_int, archs=_A5),
    *_pair("req8", (8, 9), (2, 3), _S32, _B8, scaled_int, archs=_WITH_KIRIN, inter_bits=9, offset_bits=9),
    *_pair("deqf16", (10, 11), (4, 5), _S32, ("f16",), scaled_float, archs=_WITH_KIRIN),
    *_pair("qf322fp8_pre", (12, 13), (37, 26), _F32, ("e4m3",), scaled_float, archs=_A5),
    *_pair("qf322f32_pre", (14, 15), (38, 27), _F32, ("f32",), scaled_float, archs=_A5),
    *_pair("qf162b8_pre", (17, 18), (None, None), _F32, _B8, scaled_int, inter_bits=9, offset_bits=9,
           f16_stage=True),
    *_pair("qf162s4_pre", (19, 20), (None, None), _F32, ("s4",), scaled_int, inter_bits=5, offset_bits=5,
           f16_stage=True),
    *_pair("req4", (21, 22), (18, 17), _S32, ("s4",), scaled_int, inter_bits=5, offset_bits=5),
    *_pair("qf322b8_pre", (23, 24), (23, 24), _F32, _B8, scaled_int, inter_bits=9, offset_bits=9),
    *_pair("qf322s4_pre", (25, 26), (None, None), _F32, ("s4",), scaled_int, inter_bits=5, offset_bits=5),
    *_pair("deqs16", (27, 28), (20, 19), _S32, ("s16",), scaled_int, archs=_WITH_KIRIN9030, inter_bits=17,
           offset_bits=17),
    *_pair("qf162s16_pre", (29, 30), (None, None), _S32, ("s16",), scaled_int, inter_bits=17, offset_bits=17,
           f16_stage=True),
    *_pair("qf322f16_pre", (31, 32), (33, 32), _F32, ("f16",), scaled_float),
    *_pair("qf322bf16_pre", (33, 34), (36, 34), _F32, ("bf16",), scaled_float),
    *_pair("qs322bf16_pre", (35, 36), (39, 35), _S32, ("bf16",), scaled_float),
    QuantMode("shifts322s16_vec", None, 12, _S32, ("s16",), "shift_vec", shift_s16, archs=_A2A3),
    QuantMode("shifts322s16_scalar", None, 13, _S32, ("s16",), "shift_scalar", shift_s16, archs=_A2A3),
)

#: name -> `QuantMode`, in table order.
QUANT_MODES: dict = {row.name: row for row in _ROWS}
#: Every ``pre_quant`` mode keyword, for the clause table.
QUANT_MODE_NAMES: tuple = tuple(QUANT_MODES)


def quant_mode(name: str) -> QuantMode:
    """The row of mode ``name``; raises KeyError (callers turn it into an `IllegalOperand`)."""
    return QUANT_MODES[name]


#: Most elements converted per numpy pass by `convert`: bounds each float64 temporary (256 KiB) so the
#: passes stay cache-resident, while keeping the fixed Python cost per block (~25 us: the conversion
#: chain's argument handling) to one block for a whole 128 x 256 tile.
BLOCK_ELEMENTS = 32768


def _casts_whole(acc: np.ndarray, a: QuantArgs, mode: "QuantMode") -> bool:
    """Whether `cast` encodes ``acc`` by numpy's RNE cast straight from its float32 values into f16 (no
    float64 temporary), and ``acc`` is C-contiguous: `convert` then hands it over whole (one cast pass; the
    range check is one dot over the tile, `floats.CHECK_BY_DOT`)."""
    return (acc.dtype == np.float32 and a.dst.name == "f16" and mode.rounding == "even" and a.relu == "no_relu"
            and a.clip is None and acc.flags.c_contiguous)


def convert(mode: Optional[QuantMode], acc: np.ndarray, args: QuantArgs, *, axis: int = 0,
            out: Optional[np.ndarray] = None) -> np.ndarray:
    """Run the whole pre_quant -> pre_relu -> clip -> convert chain on accumulator values.

    ``mode=None`` is a write without ``pre_quant`` (destination type = accumulator type).
    Returns destination storage values with ``acc``'s shape (s4: one int8 per element),
    C-contiguous, or written into ``out`` (same shape, the destination storage dtype).
    ``acc`` may be a strided view (the NZ -> ND transpose is fused into the first pass).
    Large tiles are converted in blocks of rows along ``axis`` (column parameters must
    broadcast along it).
    """
    fn = same_type if mode is None else mode.fn
    mode = mode or QUANT_MODES["no_convert"]
    rows = acc.shape[axis] if acc.ndim else 1
    blocks = -(-acc.size // BLOCK_ELEMENTS)
    with np.errstate(all="ignore"):
        if (blocks <= 1 or rows == 1) and out is None:
            return np.ascontiguousarray(fn(acc, args, mode))
        if fn is cast and out is not None and _casts_whole(acc, args, mode):
            fn(acc, args, mode, out)   # no float64 temporaries to bound: one cast pass, one range check
            return out
        step = rows if blocks <= 1 else -(-rows // blocks)
        for r0 in range(0, rows, step):
            sl = (slice(None),) * axis + (slice(r0, r0 + step),)
            if fn is cast and out is not None:     # the encoder writes the destination directly
                fn(acc[sl], args, mode, out[sl])
                continue
            part = fn(acc[sl], args, mode)
            if out is None:
                out = np.empty(acc.shape, dtype=part.dtype)
            out[sl] = part
    return out


__all__ = ["RELU_MODES", "CLIP_DESTINATIONS", "QuantArgs", "QuantMode", "QUANT_MODES", "QUANT_MODE_NAMES",
           "quant_mode", "convert", "BLOCK_ELEMENTS", "word_scale", "word_offset", "word_signed", "word_shift", "make_word",
           "invalid_scale", "invalid_alpha", "multiplied", "round_saturate", "S32_ACTIVATION_ROUNDING", "INT_ROUNDERS",
           "encode_integer", "encode_float"]
