"""Scalar-register semantics (the S pipe): one place for every C-style choice.

Values of scalar registers are plain Python objects: ``bool`` for ``i1``, ``int``
for integer types (signed types hold ``[-2**(n-1), 2**(n-1))``, unsigned types
``[0, 2**n)``), ``float`` for ``f16``/``bf16``/``f32`` (always a value exactly
representable in the register's format). These pure functions are used by the
program builder (constant normalisation), the interpreter (run-time helpers) and
the PTO-AS printer (constant spelling).

Named choices (documented in ``migration_guide/pto_programs.md``):

* integer results wrap to the register width (two's complement);
* ``//`` and ``%`` truncate toward zero (C99); ``INT_MIN // -1`` wraps to ``INT_MIN``; division
  by zero gives an undefined value whose use raises `UninitializedRead` (``INT_DIV_BY_ZERO_UNDEFINED``);
* shift counts must be ``>= 0``; counts ``>= width`` give 0 (``<<``, unsigned ``>>``)
  or the sign fill (signed ``>>``) -- a barrel shifter without count masking;
* float operations compute the exact result and round once to the register
  format (round to nearest, ties to even; overflow to infinity);
* an invalid float operation (``inf - inf``, ``0 * inf``, ``inf / inf``, ``0 / 0``) gives the
  positive quiet NaN, and a NaN operand passes on as a quiet NaN of its sign, whatever the host
  FPU does (x86's default NaN is negative, ARM's positive): named choice ``SCALAR_DEFAULT_NAN``;
* float -> int conversion truncates toward zero and saturates; NaN gives 0
  (the AI-core scalar unit's ``conv_f322s32z`` behaviour and ARM ``FCVTZS``);
* int -> float conversion rounds once, to nearest even;
* float ``min``/``max`` follow IEEE maxNum/minNum (a NaN operand is ignored).
"""
from __future__ import annotations

import math
import struct

from .dtypes import DType, dtype as _dtype
from .errors import IllegalOperand, UninitializedRead, UnknownName

import numpy as np

INF = math.inf
NAN = math.nan

#: The MLIR ``index`` type: a 64-bit signed integer used for loop variables and offsets.
INDEX = DType("index", "index", None, 64, "s", np.dtype(np.int64), ())

#: Register types (canonical dtype names) plus ``index``.
REGISTER_TYPES = ("bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f16", "bf16", "f32", "index")
_REGISTER_NAMES = frozenset(REGISTER_TYPES)


def scalar_type(name) -> DType:
    """The register type for any dtype spelling (``"int32"``, ``"i32"``, ``"s32"``, ``"index"``, ``"i1"``).

    Raises `UnknownName` for types a scalar register cannot hold (packed, fp8, ...).
    """
    if type(name) is DType:                     # the common case: already a register type
        if name.name == "index":
            return INDEX
        if name.name in _REGISTER_NAMES:
            return name
    if isinstance(name, DType) and name.name == "index":
        return INDEX
    if isinstance(name, str) and name.lower() == "index":
        return INDEX
    d = _dtype(name)
    if d.name not in REGISTER_TYPES:
        raise UnknownName(f"dtype {d.name!r} cannot be held in a scalar register", value=d.name,
                          limit="one of " + ", ".join(REGISTER_TYPES),
                          hint="load the value through a supported type, e.g. u8 for fp8 bytes")
    return d


def is_int(t: DType) -> bool:
    return t.kind in ("s", "u")


def is_float(t: DType) -> bool:
    return t.kind == "f"


def is_bool(t: DType) -> bool:
    return t.kind == "b"


def int_bounds(t: DType) -> tuple:
    """``(lo, hi)`` inclusive range of an integer (or bool) register type."""
    if t.kind == "b":
        return 0, 1
    if t.kind == "s":
        return -(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1
    return 0, (1 << t.bits) - 1


def wrap(x: int, t: DType) -> int:
    """Two's-complement wrap of ``x`` to the width of integer type ``t``."""
    if t.kind == "b":
        return bool(x & 1)
    mask = (1 << t.bits) - 1
    if t.kind == "u":
        return x & mask
    half = 1 << (t.bits - 1)
    return ((x + half) & mask) - half


# ----------------------------------------------------------------------------- integer arithmetic


#: Named choice INT_DIV_BY_ZERO_UNDEFINED: an integer division or remainder by zero on the scalar unit does
#: not trap; its result is undefined (`UndefinedInt`). Stored, it leaves the element's bytes unwritten (the
#: interpreter's store); any other use -- a condition, min/max, an address, a loop bound, a repeat count,
#: a conversion to float -- raises `UninitializedRead` at that use; a comparison of it is undefined; arithmetic
#: on it stays undefined (except ``x * 0``, ``x & 0``, ``x | -1`` and the logical ``False & c`` / ``True | c`` of
#: tik.all / tik.any, which do not depend on it). No source gives the
#: value; shipped CANN kernels divide by a zero loop count whose quotient they never use (nll_loss on cores
#: whose rows fit one load, pad on idle cores), so a trap would be a false rejection of them.
#: migration_guide/pto_programs.md.
INT_DIV_BY_ZERO_UNDEFINED = True


class UndefinedInt:
    """The undefined result of an integer division or remainder by zero (INT_DIV_BY_ZERO_UNDEFINED)."""

    __slots__ = ("what", "message", "hint")

    def __init__(self, what: str, message: str = None, hint: str = None):
        """``message``/``hint``: another undefined value's own words (a ScalarArray read out of range)."""
        self.what, self.message, self.hint = what, message, hint

    def _used(self, *_):
        if self.message is not None:
            raise UninitializedRead(self.message, operand="value", hint=self.hint)
        raise UninitializedRead(f"the result of an integer {self.what} by zero is used (the device leaves it "
                                f"undefined)", operand="value",
                                hint=f"guard the {self.what} with an if on the divisor, or use its result only "
                                     f"where the divisor is not 0")

    __bool__ = __index__ = __int__ = __float__ = __round__ = __trunc__ = __floor__ = __ceil__ = _used
    __hash__ = object.__hash__

    def _same(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _same
    __truediv__ = __rtruediv__ = __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _same
    __xor__ = __rxor__ = __neg__ = __pos__ = __abs__ = __invert__ = _same
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _same      # a comparison is undefined too

    def _zero_or_same(self, other):
        # x * 0 and x & 0 are 0 whatever x is; a logical and with False (tik.all) is False
        return other if other.__class__ in (int, bool) and other == 0 else self

    def _ones_or_same(self, other):
        # x | -1 is -1 whatever x is; a logical or with True (tik.any) is True
        return other if (other.__class__ is int and other == -1) or other is True else self

    __mul__ = __rmul__ = __and__ = __rand__ = _zero_or_same
    __or__ = __ror__ = _ones_or_same

    def __repr__(self):
        return f"<undefined: {self.message}>" if self.message is not None else \
            f"<undefined: integer {self.what} by zero>"


def logical_not(value):
    """``not value`` for a condition; the negation of an undefined comparison is undefined (a use of it
    raises where it is used: ``tik.all(n != 0, tik.negate(q > 3))`` with n == 0 is False)."""
    return value if value.__class__ is UndefinedInt else not value


def reject_undefined(value) -> None:
    """Raise the `UninitializedRead` of `UndefinedInt` if ``value`` is one (for operand checks that refuse
    values that are not numbers: an undefined quotient is a use of it, not a wrong type)."""
    if isinstance(value, UndefinedInt):
        value._used()


_UNDEFINED_QUOTIENT = UndefinedInt("division")
_UNDEFINED_REMAINDER = UndefinedInt("remainder")


def tdiv(a: int, b: int) -> int:
    """C division: quotient truncated toward zero; by zero: undefined (INT_DIV_BY_ZERO_UNDEFINED)."""
    if b.__class__ is not int or a.__class__ is not int:
        if isinstance(a, UndefinedInt) or isinstance(b, UndefinedInt):
            return _UNDEFINED_QUOTIENT
    if b == 0:
        if not INT_DIV_BY_ZERO_UNDEFINED:
            raise IllegalOperand("integer division by zero", operand="divisor", value=0,
                                 hint="guard the division with an if on the divisor")
        return _UNDEFINED_QUOTIENT
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trem(a: int, b: int) -> int:
    """C remainder: ``a - b * tdiv(a, b)`` (sign of the dividend); by zero: undefined."""
    if b.__class__ is not int or a.__class__ is not int:
        if isinstance(a, UndefinedInt) or isinstance(b, UndefinedInt):
            return _UNDEFINED_REMAINDER
    if b == 0:
        if not INT_DIV_BY_ZERO_UNDEFINED:
            raise IllegalOperand("integer remainder by zero", operand="divisor", value=0,
                                 hint="guard the remainder with an if on the divisor")
        return _UNDEFINED_REMAINDER
    r = abs(a) % abs(b)
    return r if a >= 0 else -r


#: What to do about a negative shift count.
_SHIFT_HINT = ("shift by a count >= 0 (counts >= the width give 0, or -1 for a negative signed value shifted "
               "right; mask a computed count, e.g. `n & 31` for "
               "32-bit values, or guard the shift with an if on the count)")


def shl(a: int, n: int, bits: int) -> int:
    """``a << n`` before wrapping; counts ``>= bits`` give 0."""
    if n < 0:
        raise IllegalOperand(f"negative shift count {n}", operand="shift", value=n, limit=">= 0", hint=_SHIFT_HINT)
    return a << n if n < bits else 0


def shr(a: int, n: int) -> int:
    """``a >> n`` on the register value (arithmetic for signed, logical for unsigned values)."""
    if n < 0:
        raise IllegalOperand(f"negative shift count {n}", operand="shift", value=n, limit=">= 0", hint=_SHIFT_HINT)
    return a >> n if n < 128 else (-1 if a < 0 else 0)


# ----------------------------------------------------------------------------- float rounding


_F16_MAX = 65504.0
_BF16_MAX = float.fromhex("0x1.fep127")
_F32_MAX = float.fromhex("0x1.fffffep127")
#: (precision incl. hidden bit, minimum normal exponent, largest finite) per float register type.
FLOAT_FORMATS = {"f16": (11, -14, _F16_MAX), "bf16": (8, -126, _BF16_MAX), "f32": (24, -126, _F32_MAX)}


def round_to_format(x: float, precision: int, emin: int, maxval: float) -> float:
    """Round ``x`` once to a binary format (nearest, ties to even; overflow to infinity)."""
    if x != x or x == 0.0 or x in (INF, -INF):
        return x
    _, e = math.frexp(x)
    q = max(e - precision, emin - precision + 1)
    r = round(math.ldexp(x, -q))          # exact scaling; round() is ties-to-even on floats
    if r == 0:
        return math.copysign(0.0, x)
    if abs(r).bit_length() + q > 1030:
        return math.copysign(INF, x)
    y = math.ldexp(r, q)
    return y if abs(y) <= maxval else math.copysign(INF, x)


_pack = struct.pack
_unpack = struct.unpack


def round_f32(x: float) -> float:
    """Nearest f32 value (ties to even; overflow to infinity; a NaN gives the quiet NaN of its sign,
    SCALAR_DEFAULT_NAN)."""
    try:
        y = _unpack("<f", _pack("<f", x))[0]
    except OverflowError:
        return math.copysign(INF, x)
    return y if y == y else math.copysign(NAN, x)


def round_f16(x: float) -> float:
    """Nearest f16 value (ties to even; overflow to infinity; a NaN gives the quiet NaN of its sign)."""
    try:
        y = _unpack("<e", _pack("<e", x))[0]
    except OverflowError:
        return math.copysign(INF, x)
    return y if y == y else math.copysign(NAN, x)


def round_bf16(x: float) -> float:
    """Nearest bf16 value (ties to even; overflow to infinity; a NaN gives the quiet NaN of its sign)."""
    return round_to_format(x, 8, -126, _BF16_MAX) if x == x else math.copysign(NAN, x)


def widen_float(x: float) -> float:
    """A float register value converted to a wider float format: exact, and a NaN gives the quiet NaN of
    its sign (a format conversion is an operation: SCALAR_DEFAULT_NAN; only a copy within one format keeps
    a NaN's bits, NAN_BITS_KEPT)."""
    return x if x == x else math.copysign(NAN, x)


ROUNDERS = {"f32": round_f32, "f16": round_f16, "bf16": round_bf16}


def round_float(x: float, t: DType) -> float:
    return ROUNDERS[t.name](float(x))


def int_to_float(n: int, t: DType) -> float:
    """Exact integer -> float format ``t`` with a single rounding (nearest even)."""
    n = int(n)
    if -(1 << 53) <= n <= (1 << 53):
        return ROUNDERS[t.name](float(n))
    p = FLOAT_FORMATS[t.name][0]
    neg = n < 0
    m = -n if neg else n
    shift = m.bit_length() - p
    q, rem = m >> shift, m & ((1 << shift) - 1)
    half = 1 << (shift - 1)
    if rem > half or (rem == half and q & 1):
        q += 1
    y = float(q) * 2.0 ** shift if q.bit_length() + shift <= 1024 else INF
    y = -y if neg else y
    return y if abs(y) <= FLOAT_FORMATS[t.name][2] else math.copysign(INF, y)


def float_to_int(x: float, t: DType) -> int:
    """C-style float -> int: truncate toward zero, saturate to ``t``'s range, NaN -> 0."""
    lo, hi = int_bounds(t)
    if x != x:
        return 0
    if x >= hi:
        return hi
    if x <= lo:
        return lo
    return int(x)


def _nan_of(a: float, b: float) -> float:
    """The NaN result of a float operation on ``a`` and ``b`` (``SCALAR_DEFAULT_NAN``): the quiet NaN with the
    sign of the first NaN operand, else (an invalid operation) the positive quiet NaN. Host independent: x86
    FPUs make an invalid operation's NaN negative, ARM ones positive."""
    if a != a:
        return math.copysign(NAN, a)
    if b != b:
        return math.copysign(NAN, b)
    return NAN


def _quiet(x: float) -> float:
    """``x``, or for a NaN the quiet NaN of its sign (SCALAR_DEFAULT_NAN: no payload)."""
    return x if x == x else math.copysign(NAN, x)


def fadd(a: float, b: float) -> float:
    """IEEE addition in double (the caller rounds); NaN results per `_nan_of`."""
    r = a + b
    return r if r == r else _nan_of(a, b)


def fsub(a: float, b: float) -> float:
    r = a - b
    return r if r == r else _nan_of(a, b)


def fmul(a: float, b: float) -> float:
    r = a * b
    return r if r == r else _nan_of(a, b)


def fdiv(a: float, b: float) -> float:
    """IEEE division in double (the caller rounds): x/0 -> +-inf, 0/0 -> NaN (NaN results per `_nan_of`)."""
    try:
        r = a / b
    except ZeroDivisionError:
        if a != a or a == 0.0:
            return _nan_of(a, b)
        return math.copysign(INF, a) * math.copysign(1.0, b)
    return r if r == r else _nan_of(a, b)


def frem(a: float, b: float) -> float:
    """C ``fmod``: remainder with the sign of the dividend; NaN for ``b == 0`` or infinite ``a``
    (NaN results per `_nan_of`)."""
    try:
        r = math.fmod(a, b)
    except ValueError:
        return _nan_of(a, b)
    return r if r == r else _nan_of(a, b)


def fsqrt(a: float) -> float:
    if a != a or a < 0.0:
        return _nan_of(a, 0.0)
    return math.sqrt(a)


def _integral(r: float, x: float) -> float:
    return math.copysign(r, x) if r == 0.0 else r


def ffloor(x: float) -> float:
    """Round toward -inf (IEEE roundToIntegralTowardNegative; keeps -0.0, inf, NaN)."""
    return _quiet(x) if x != x or x in (INF, -INF) else _integral(float(math.floor(x)), x)


def fceil(x: float) -> float:
    return _quiet(x) if x != x or x in (INF, -INF) else _integral(float(math.ceil(x)), x)


def ftrunc(x: float) -> float:
    return _quiet(x) if x != x or x in (INF, -INF) else _integral(float(math.trunc(x)), x)


def fround_even(x: float) -> float:
    """Nearest integral value, ties to even."""
    return _quiet(x) if x != x or x in (INF, -INF) else _integral(float(round(x)), x)


def fround_away(x: float) -> float:
    """Nearest integral value, ties away from zero (C ``round``)."""
    if x != x or x in (INF, -INF):
        return _quiet(x)
    t = float(math.trunc(x))
    if abs(x - t) >= 0.5:                  # exact: x - trunc(x) has no rounding error
        t += math.copysign(1.0, x)
    return _integral(t, x)


ROUND_TO_INTEGRAL = {"floor": ffloor, "ceil": fceil, "trunc": ftrunc, "roundeven": fround_even,
                     "round": fround_away}


def fmax(a: float, b: float) -> float:
    """IEEE maxNum: a NaN operand is ignored (two NaNs give the quiet NaN of the second's sign)."""
    if a != a:
        return _quiet(b)
    if b != b:
        return a
    return a if a > b else b


def fmin(a: float, b: float) -> float:
    """IEEE minNum: a NaN operand is ignored (two NaNs give the quiet NaN of the second's sign)."""
    if a != a:
        return _quiet(b)
    if b != b:
        return a
    return a if a < b else b


# ----------------------------------------------------------------------------- conversions


_INT_FMT = {(8, "s"): "<b", (8, "u"): "<B", (16, "s"): "<h", (16, "u"): "<H", (32, "s"): "<i",
            (32, "u"): "<I", (64, "s"): "<q", (64, "u"): "<Q"}


#: Mantissa bits of the register float formats. Named choice NAN_BITS_KEPT: a NaN moves between a format's
#: bits and a register (a Python float, f64) with its sign and payload shifted into / out of the f64 mantissa,
#: quiet bit included, as a plain bit move does on the device: a scalar load / store of a signalling NaN keeps
#: it signalling. (The host's f32 -> f64 conversion sets the quiet bit, and numpy's bfloat16 conversion drops the
#: payload, so a value-level conversion would change the bits of data that is only copied: CANN's
#: gather_elements copies arbitrary float32 data element by element through set_as.) Arithmetic on a NaN still
#: gives the quiet NaN of SCALAR_DEFAULT_NAN. migration_guide/tik_core.md (set_as rows).
_NAN_MANTISSA = {"f32": 23, "f16": 10, "bf16": 7}


def _nan_payload_bits(x: float, t: DType) -> int:
    """Bits in format ``t`` of the NaN ``x``: its sign and the top mantissa bits of its f64 pattern (a payload
    only in the low f64 bits gives the quiet NaN of that sign)."""
    d = _unpack("<Q", _pack("<d", x))[0]
    m = _NAN_MANTISSA[t.name]
    payload = (d >> (52 - m)) & ((1 << m) - 1) or 1 << (m - 1)
    return (d >> 63) << (t.bits - 1) | ((1 << (t.bits - 1 - m)) - 1) << m | payload


def _nan_from_bits(bits: int, t: DType) -> float:
    """The f64 NaN carrying the sign and payload (quiet bit included) of the ``t`` NaN pattern ``bits``."""
    m = _NAN_MANTISSA[t.name]
    sign = (bits >> (t.bits - 1)) & 1
    return _unpack("<d", _pack("<Q", sign << 63 | 0x7FF << 52 | (bits & ((1 << m) - 1)) << (52 - m)))[0]


def _is_nan_bits(bits: int, t: DType) -> bool:
    m = _NAN_MANTISSA[t.name]
    e = (1 << (t.bits - 1 - m)) - 1
    return (bits >> m) & e == e and bits & ((1 << m) - 1) != 0


def float_bits(x: float, t: DType) -> int:
    """Unsigned bit pattern of float value ``x`` in format ``t`` (a NaN keeps its sign and payload,
    NAN_BITS_KEPT)."""
    if x != x and t.name in _NAN_MANTISSA:
        return _nan_payload_bits(x, t)
    if t.name == "f32":
        return _unpack("<I", _pack("<f", x))[0]
    if t.name == "f16":
        return _unpack("<H", _pack("<e", x))[0]
    if t.name == "bf16":
        return _unpack("<I", _pack("<f", x))[0] >> 16
    raise ValueError(t.name)


def bits_float(bits: int, t: DType) -> float:
    """Float value of an unsigned bit pattern in format ``t`` (a NaN keeps its sign and payload,
    NAN_BITS_KEPT)."""
    if t.name in _NAN_MANTISSA and _is_nan_bits(bits & ((1 << t.bits) - 1), t):
        return _nan_from_bits(bits & ((1 << t.bits) - 1), t)
    if t.name == "f32":
        return _unpack("<f", _pack("<I", bits & 0xFFFFFFFF))[0]
    if t.name == "f16":
        return _unpack("<e", _pack("<H", bits & 0xFFFF))[0]
    if t.name == "bf16":
        return _unpack("<f", _pack("<I", (bits & 0xFFFF) << 16))[0]
    raise ValueError(t.name)


def bitcast(x, src: DType, dst: DType):
    """Reinterpret the bits of ``x`` (type ``src``) as type ``dst`` (same width)."""
    if src.bits != dst.bits:
        raise IllegalOperand(f"bitcast needs equal widths, got {src.name} ({src.bits} bits) and {dst.name} "
                             f"({dst.bits} bits)", operand="bitcast",
                             hint="bitcast between types of the same width (e.g. s32 <-> f32, s16 <-> f16), or convert "
                                  "with a cast")
    raw = float_bits(x, src) if src.kind == "f" else int(x) & ((1 << src.bits) - 1)
    if dst.kind == "f":
        return bits_float(raw, dst)
    return wrap(raw, dst)


def convert(x, src: DType, dst: DType):
    """C conversion of a register value from type ``src`` to type ``dst``."""
    if dst.kind == "b":
        return x != 0
    if src.kind == "b":
        x = int(x)
        src = INDEX
    if dst.kind == "f":
        if src.kind == "f":
            if src.name == dst.name:
                return x                    # a copy: a NaN keeps its bits (NAN_BITS_KEPT)
            return widen_float(x) if dst.bits >= src.bits and not (dst.name == "f16" and src.name == "bf16") and \
                not (dst.name == "bf16" and src.name == "f16") else ROUNDERS[dst.name](x)
        return int_to_float(x, dst)
    if src.kind == "f":
        return float_to_int(x, dst)
    return wrap(int(x), dst)


#: Named choice **INT_TO_BOOL_NONZERO**: a constant converted to ``bool`` is True when it is nonzero, as C's
#: conversion to ``_Bool`` (C11 6.3.1.2: "the result is 0 if the value compares equal to 0; otherwise, the result
#: is 1") and as `convert` does for a register value (a Scalar holding 2 stored into a bool tensor is True).
#: False keeps only bit 0 (``2`` -> False), as the simulator did before review427 reported the mismatch.
#: migration_guide/tik_core.md, section 8.
INT_TO_BOOL_NONZERO = True


def normalize(value, t: DType):
    """A Python constant as a value of register type ``t`` (ints wrap, floats round, bool: nonzero is True).

    A numpy scalar counts as the Python number it holds (``np.float32(0.5)`` is a float: True as a bool, refused
    as an integer; ``np.float32(inf)`` into an integer type is the `IllegalOperand` of a Python inf, not a raw
    OverflowError): `pto_core.program.Const` takes any number a kernel author writes."""
    if isinstance(value, np.generic):
        value = value.item()
    if t.kind == "b":
        if isinstance(value, float):
            return value != 0.0
        if isinstance(value, bool):
            return value
        return int(value) != 0 if INT_TO_BOOL_NONZERO else bool(int(value) & 1)
    if t.kind == "f":
        if isinstance(value, bool):
            value = int(value)
        if isinstance(value, int):
            return int_to_float(value, t)
        return ROUNDERS[t.name](float(value))
    if isinstance(value, float):
        if value != value or value in (INF, -INF) or value != int(value):
            raise IllegalOperand(f"constant {value!r} is not an integer", operand="constant", value=value,
                                 hint=f"use an integer constant for type {t.pto_name}")
        value = int(value)
    return wrap(int(value), t)
