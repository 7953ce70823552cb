"""Element types: one table of every dtype the simulator knows.

Each `DType` has a canonical short name (``f16``, ``s8``, ``e4m3`` ...), the PTO-AS
spelling used in ``!pto.ptr<T, space>`` (``f16``, ``i8``, ``f8E4M3FN``; the PTOAS dialect types
``!pto.hif8``, ``!pto.f4E2M1x2``, ``!pto.f4E1M2x2`` for the formats MLIR has no builtin for;
the bare ``hif8``/``f4E2M1x2`` spellings are aliases), the TIK
spelling (``float16``, ``int8`` ...), its width in bits, and the numpy dtype used to
view its bytes (``storage``). Packed sub-byte types (``s4`` = two 4-bit values per
byte, ``e2m1x2``/``e1m2x2`` = two FP4 values per byte, ``u1`` = eight bits per byte)
are viewed as raw ``uint8`` bytes.

``C0`` is the number of elements in one 32-byte block (the cube channel block).

Look-up by any alias: ``dtype("float16") is dtype("f16") is dtype("half")``.
"""
from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Optional, Union

import ml_dtypes
import numpy as np

from .errors import UnknownName

BLOCK_BYTES = 32


@dataclass(frozen=True)
class DType:
    """One element type.

    Attributes:
        name: canonical short name (``"f16"``).
        pto_name: PTO-AS spelling (``"f16"``, ``"i8"``, ``"ui8"``, ``"f8E4M3FN"``, ``"!pto.hif8"``).
        tik_name: TIK spelling (``"float16"``) or ``None`` if TIK has none.
        bits: width of one element in bits (4 for packed FP4/INT4, 1 for ``u1``).
        kind: ``"f"`` float, ``"s"`` signed int, ``"u"`` unsigned int, ``"b"`` bool.
        storage: numpy dtype used to view this type's bytes (uint8 for packed types).
        aliases: every other accepted spelling.
    """

    name: str
    pto_name: str
    tik_name: Optional[str]
    bits: int
    kind: str
    storage: np.dtype
    aliases: tuple = ()

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in ("s", "u")

    @property
    def is_signed(self) -> bool:
        return self.kind in ("s", "f")

    @property
    def packed(self) -> int:
        """Elements per byte (1 for byte-or-wider types, 2 for 4-bit, 8 for 1-bit)."""
        return 8 // self.bits if self.bits < 8 else 1

    @property
    def itemsize(self) -> int:
        """Bytes per element; raises for sub-byte types (use `nbytes`)."""
        if self.bits < 8:
            raise ValueError(f"{self.name} is a packed sub-byte type; use nbytes(count)")
        return self.bits // 8

    def nbytes(self, count: int) -> int:
        """Bytes occupied by ``count`` elements (rounded up for packed types)."""
        return (count * self.bits + 7) // 8

    @property
    def c0(self) -> int:
        """Elements per 32-byte block."""
        return BLOCK_BYTES * 8 // self.bits

    # cached per instance (`_limits` hashes every field of the dtype: a cost in each saturating vector op)
    @functools.cached_property
    def min(self):
        return _limits(self)[0]

    @functools.cached_property
    def max(self):
        return _limits(self)[1]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"dtype({self.name!r})"


def _np(t) -> np.dtype:
    return np.dtype(t)


_U8 = _np(np.uint8)

#: The table. Order is documentation order.
DTYPES: tuple = (
    DType("f32", "f32", "float32", 32, "f", _np(np.float32), ("float32", "float", "fp32", "float32_t")),
    DType("f16", "f16", "float16", 16, "f", _np(np.float16), ("float16", "half", "fp16")),
    DType("bf16", "bf16", "bfloat16", 16, "f", _np(ml_dtypes.bfloat16), ("bfloat16",)),
    DType("s8", "i8", "int8", 8, "s", _np(np.int8), ("int8", "si8", "i8")),
    DType("u8", "ui8", "uint8", 8, "u", _np(np.uint8), ("uint8", "ui8")),
    DType("s16", "i16", "int16", 16, "s", _np(np.int16), ("int16", "si16", "i16")),
    DType("u16", "ui16", "uint16", 16, "u", _np(np.uint16), ("uint16", "ui16")),
    DType("s32", "i32", "int32", 32, "s", _np(np.int32), ("int32", "si32", "i32")),
    DType("u32", "ui32", "uint32", 32, "u", _np(np.uint32), ("uint32", "ui32")),
    DType("s64", "i64", "int64", 64, "s", _np(np.int64), ("int64", "si64", "i64")),
    DType("u64", "ui64", "uint64", 64, "u", _np(np.uint64), ("uint64", "ui64")),
    DType("s4", "i4x2", "int4", 4, "s", _U8, ("int4", "s4x2", "i4x2", "si4")),
    DType("u4", "ui4x2", "uint4", 4, "u", _U8, ("uint4", "u4x2", "ui4x2")),
    DType("e4m3", "f8E4M3FN", None, 8, "f", _np(ml_dtypes.float8_e4m3fn),
          ("f8E4M3FN", "fp8_e4m3", "float8_e4m3fn", "f8e4m3")),
    DType("e5m2", "f8E5M2", None, 8, "f", _np(ml_dtypes.float8_e5m2), ("f8E5M2", "fp8_e5m2", "float8_e5m2", "f8e5m2")),
    DType("hif8", "!pto.hif8", None, 8, "f", _U8, ("hifloat8", "HiF8")),
    DType("e2m1x2", "!pto.f4E2M1x2", None, 4, "f", _U8, ("f4E2M1x2", "fp4_e2m1", "e2m1")),
    DType("e1m2x2", "!pto.f4E1M2x2", None, 4, "f", _U8, ("f4E1M2x2", "fp4_e1m2", "e1m2")),
    DType("e8m0", "f8E8M0FNU", None, 8, "f", _np(ml_dtypes.float8_e8m0fnu), ("f8E8M0FNU", "float8_e8m0fnu", "e8m0fnu")),
    DType("bool", "i1", "bool", 8, "b", _np(np.bool_), ("bool",)),
    DType("u1", "ui1", "uint1", 1, "u", _U8, ("uint1",)),
)

_BY_NAME: dict = {}
for _d in DTYPES:
    for _key in (_d.name, _d.pto_name, _d.tik_name, *_d.aliases):
        if _key is not None:
            _BY_NAME.setdefault(_key, _d)
            _BY_NAME.setdefault(_key.lower(), _d)
del _d, _key

DTypeLike = Union[str, DType, np.dtype, type]


def dtype(name: DTypeLike) -> DType:
    """Look up a dtype by any spelling (canonical, PTO, TIK, numpy type or ``np.dtype``).

    Raises `UnknownName` listing the canonical names when the spelling is unknown.
    """
    if isinstance(name, DType):
        return name
    if isinstance(name, str):
        found = _BY_NAME.get(name) or _BY_NAME.get(name.lower())
        if found is not None:
            return found
    else:
        try:
            npd = np.dtype(name)
        except TypeError:
            npd = None
        if npd is not None:
            for d in DTYPES:  # first non-packed entry with that storage (u8 before hif8)
                if d.bits >= 8 and d.storage == npd:
                    return d
    raise UnknownName(f"unknown dtype {name!r}", value=name,
                      limit="one of " + ", ".join(d.name for d in DTYPES),
                      hint="use a canonical name such as 'f16', 'f32', 's8', 'e4m3', or a TIK name such as 'float16'")


@functools.lru_cache(maxsize=None)
def _limits(d: DType):
    """``(min, max)`` of ``d`` (finite range for floats); cached: ``ml_dtypes.finfo`` is slow."""
    if d.kind == "s":
        return -(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1
    if d.kind == "u":
        return 0, (1 << d.bits) - 1
    if d.kind == "b":
        return 0, 1
    if d.storage != _U8 or d.name in ("e8m0",):
        fi = ml_dtypes.finfo(d.storage)
        return float(fi.min), float(fi.max)
    return _CUSTOM_FLOAT_LIMITS[d.name]


#: Finite ranges of the float formats numpy/ml_dtypes do not define (stored as raw bytes).
_CUSTOM_FLOAT_LIMITS = {
    "hif8": (-32768.0, 32768.0),  # HiF8 largest finite magnitude 2**15
    "e2m1x2": (-6.0, 6.0),
    "e1m2x2": (-1.75, 1.75),
}


def tik_short_code(d: DTypeLike) -> str:
    """TIK's short dtype code used in support strings: ``f16``, ``s8``, ``u32``, ``bf16``, ``b``."""
    d = dtype(d)
    return {"bool": "b", "s4": "s4", "u4": "u4"}.get(d.name, d.name)


def names() -> list:
    """Canonical names of all dtypes."""
    return [d.name for d in DTYPES]
