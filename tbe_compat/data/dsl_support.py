"""CANN's DSL API support table: which dtypes each ``te.lang.cce`` / ``tbe.dsl`` API
supports on which chip (the facts behind ``api_check_support("te.lang.cce.vexp", ...)``).

Facts from CANN 8.1.RC1 ``tbe/dsl/compute/util.py`` (``DSL_CHECK_SUPPORT_MAP`` and
``DSL_SAME_API_MAP``), in our own layout: ``DSL_SUPPORT[api][key]`` is the tuple of dtype
strings CANN lists. ``key`` is CANN's: the chip's ``SHORT_SOC_VERSION``, except that
Hi3796CV300ES, Hi3796CV300CS and SD3403 share the key ``"smallhisi"``; ``"AllSoc"`` is
the row CANN falls back to when an API has no row for the chip. An empty tuple is a row
that lists no dtype (CANN still answers True for ``dtype=""``); an API with no row for
the chip and no ``"AllSoc"`` row answers False.

Only the keys of chips this simulator models are carried (Ascend310, Ascend310B,
Ascend310P, Ascend610, BS9SX1A, Ascend910, Ascend910B, smallhisi, plus AllSoc); CANN's
rows for Ascend031, Ascend035, AS31XM1, Ascend610Lite, BS9SX2A, MC61AM21A,
Ascend910_93 and Ascend910_95 belong with those chips when they are added
(`tests/compat/test_platform.py` fails if a modelled chip has no key here).

CANN writes two ``vgcd`` rows (AllSoc, Ascend910) as the bare string ``"int32"``, so its
``in`` test is a substring test; for every real dtype name that answers exactly as the
tuple ``("int32",)`` stored here.
"""

SOURCE = "CANN 8.1.RC1 tbe/dsl/compute/util.py (DSL_CHECK_SUPPORT_MAP, DSL_SAME_API_MAP)"

ALL = "AllSoc"
A310, A310B, A310P, A610, SX1A = "Ascend310", "Ascend310B", "Ascend310P", "Ascend610", "BS9SX1A"
A910, A910B, HISI = "Ascend910", "Ascend910B", "smallhisi"
#: v200 chips, which share most rows.
V200 = (A310P, A610, SX1A)
#: every key a modelled chip can look up (besides AllSoc).
SOC_KEYS = (A310, A310B, A310P, A610, SX1A, A910, A910B, HISI)
#: SHORT_SOC_VERSIONs CANN folds into one key before the look-up.
SOC_KEY_ALIASES = {"Hi3796CV300ES": HISI, "Hi3796CV300CS": HISI, "SD3403": HISI}

#: DSL API names that CANN checks under another API's row.
SAME_API = {"sum": "reduce_sum", "round_to": "clip", "round_d": "round_half_up"}


def _r(dtypes: str, *keys: str) -> dict:
    """One row for several keys: ``dtypes`` is a space-separated list ("" = no dtype)."""
    row = tuple(dtypes.split())
    return {k: row for k in keys}


# dtype lists that recur across many APIs.
F16, F16_32, F16_S32, F16_32_S32 = "float16", "float16 float32", "float16 int32", "float16 float32 int32"
B8_32 = "int8 uint8 float16 int16 uint16 float32 int32 uint32"
B8_64 = B8_32 + " int64 uint64"
ALL10 = "bool uint8 int8 uint16 int16 float16 uint32 int32 float32 int64"
ALL11 = ALL10 + " uint64"
BIT16_32 = "int16 uint16 int32 uint32"
BIT_V200 = "uint1 uint16 int16 uint32 int32 uint64 int64"
GATHER11 = "float16 float32 int8 uint8 int16 uint16 int32 uint32 int64 uint64 bool"
TRANS8 = "float16 float32 int8 uint8 int16 uint16 int32 uint32"
TRANS10 = TRANS8 + " int64 uint64"
_ROUND_310B = ("float16 float32 bf162s32 f162s8 f162u8 f162s16 f162s32 s162f16 f322bf16 f322f16 f322f32 f322s16 "
               "f322s32 f322s64 s322f32 s642f32")
_ROUND_V200 = "float16 float32 f162u8 f162s8 f162s32 f322s32"
_ROUND_910B = "float16 float32 f162s32 f322s32 f322f32 f322s64 s642f32 f322bf16 bf162s32 s162f16 f162s16"
_CAST_BASE = "s82f16 s82u8 u82f16 u82s8 f162f32 f162s8 f162u8 f162s32 s322f16 s322s8 s322u8 s322f32"
_CAST_310 = _CAST_BASE + " f322f16 f322s8 f322u8 f322s32"
_CAST_V200 = ("u82s8 u82f16 u82s32 u82f32 s82u8 s82f16 s82s32 s82f32 s162f16 s162s32 s162f32 f162u8 f162s8 f162s32 "
              "f162f32 s322u8 s322s8 s322f16 s322f32 s322s64 f322u8 f322s8 f322f16 f322s32 s642s32 s642f16")
_CAST_910B = (_CAST_310 + " s42f16 bf162f32 s322s64 s642s32 s642f16 f162c32 f322c64 s162f32 s642u32 s642s16 "
              "s642u16 s642s8 s642u8 s322u32 s322s16 s322u16 u322s64 u322s32 u322s16 u322u16 u322s8 u322u8 "
              "s162s64 s162s32 s162u32 s162u16 s162s8 s162u8 u162s64 u162s32 u162u32 u162s16 u162s8 u162u8 "
              "s82s64 s82s32 s82u32 s82s16 s82u16 u82s64 u82s32 u82u32 u82s16 u82u16")


def _rounding(v200: str = _ROUND_V200, a910b: str = _ROUND_910B) -> dict:
    """ceil / floor / round / trunc / round_half_up: alike except the v200 and 910B rows."""
    return {**_r("float16 f162s32", ALL, A310, HISI), **_r(_ROUND_310B, A310B), **_r(v200, *V200),
            **_r("float16 float32 f162s32 f322s32", A910), **_r(a910b, A910B)}


def _reduce_minmax() -> dict:
    return {**_r(F16, ALL, HISI), **_r(F16_32_S32, A310, A610, SX1A, A910),
            **_r("bool uint8 int8 float16 int32 float32 int64", A310B),
            **_r("float16 float32 int32 int64", A310P, A910B)}


def _unary_f32(a310: str) -> dict:
    """The float16-everywhere, float32-from-v200 unary/ternary rows (vlog, vexp, vsqrt, vmla ...)."""
    return {**_r(F16, ALL, HISI), **_r(a310, A310), **_r(F16_32, A310B, *V200, A910, A910B)}


def _bitwise(v200: str) -> dict:
    return {**_r(BIT16_32, ALL, A310, HISI),
            **_r("uint1 uint8 int8 uint16 int16 float16 uint32 int32 float32 uint64 int64", A310B),
            **_r(v200, *V200), **_r("uint1 " + BIT16_32, A910), **_r("uint1 " + BIT16_32 + " int64", A910B)}


def _binary(v200: str, a910: str, a910b: str, a310b: str = ALL11) -> dict:
    """vadd-like rows: float16/int32 by default, float32 from Ascend310 on."""
    return {**_r(F16_S32, ALL, HISI), **_r(F16_32_S32, A310), **_r(a310b, A310B), **_r(v200, *V200),
            **_r(a910, A910), **_r(a910b, A910B)}


def _sel(a310b: str) -> dict:
    return {**_r(F16, ALL, A310, HISI), **_r(a310b, A310B), **_r(F16_32, *V200, A910, A910B)}


def _relu2() -> dict:
    """vaddrelu / vsubrelu."""
    return {**_r(F16, ALL, A310, A910, A910B), **_r(F16_32_S32, A310B), **_r("int16 float16 float32", *V200),
            **_r("int16 float16", HISI)}


def _gather() -> dict:
    """gather / gather_nd / slice: no Ascend310 or smallhisi support."""
    return {**_r(F16, ALL), **_r("", A310), **_r("bfloat16 " + GATHER11, A310B, A910B),
            **_r(GATHER11, *V200, A910)}


_FLOAT_COMMON = _r(F16_32_S32, ALL, A310, A310B, *V200, A910, A910B, HISI)
_SEGMENT_MINMAX = {**_r(F16_32_S32, ALL, A310, A310B, A910, A910B, HISI), **_r(F16_32_S32 + " int16", *V200)}
_S32_S16_V200 = "int16 float16 int32 float32 int64"

#: api -> {key: dtypes}; see the module docstring.
DSL_SUPPORT = {
    "broadcast": {**_r(B8_32, ALL, A310, HISI), **_r("bfloat16 bool " + B8_64, A310B),
                  **_r("bool " + B8_64, *V200), **_r(B8_64, A910),
                  **_r(B8_64 + " bfloat16 complex32 complex64", A910B)},
    "full": {**_r(B8_32, ALL, A310, HISI), **_r("bool uint1 " + B8_64, A310B, A610, A910, A910B),
             **_r("bool " + B8_64, A310P, SX1A)},
    # segment
    "unsorted_segment_sum": _FLOAT_COMMON,
    "unsorted_segment_mean": _FLOAT_COMMON,
    "unsorted_segment_prod": _SEGMENT_MINMAX,
    "unsorted_segment_min": _SEGMENT_MINMAX,
    "unsorted_segment_max": _SEGMENT_MINMAX,
    # inplace
    "inplace_add": _FLOAT_COMMON,
    "inplace_sub": _FLOAT_COMMON,
    "inplace_update": _FLOAT_COMMON,
    # ceil / floor / round / trunc
    "ceil": _rounding(),
    "floor": _rounding(),
    "round": _rounding(v200="float16 float32 f162s16 f162s32 f322s32"),
    "trunc": {**_rounding(a910b=_ROUND_910B + " f322s16"), **_r(_ROUND_V200 + " f322s16", A310P)},
    "round_half_up": _rounding(),
    # reduce
    "reduce_sum": {**_r(F16, ALL, HISI), **_r(F16_32_S32, A310, A610, SX1A, A910),
                   **_r(F16_32_S32 + " int64", A310B, A310P, A910B)},
    "reduce_mean": {**_r(F16, ALL, HISI), **_r(F16_32, A310B, *V200, A910, A910B)},
    "reduce_max": _reduce_minmax(),
    "reduce_min": _reduce_minmax(),
    "reduce_all": _r("uint1 bool int8", A310P, A610, A910, A910B),
    "reduce_any": _r("uint1 bool int8", A310P, A610, A910, A910B),
    "reduce_prod": {**_reduce_minmax(), **_r("float16 float32 int32 int64", A910)},
    "tuple_sum": {**_r(F16, ALL, HISI), **_r(F16_32_S32, A310, A310B, *V200, A910, A910B)},
    "reduce_window": {**_r(F16, ALL, A310, A310B, *V200, A910, HISI), **_r(F16_32, A910B)},
    # elewise
    "vadd": _binary("int16 float16 int32 float32 uint64 int64", "float16 float32 int32 int64 uint64",
                    "float16 float32 int32 int64 uint64 complex32 complex64"),
    "vsub": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64 complex32 complex64"),
    "vgcd": {**_r("int32", ALL, A910), **_r("int16 int32 int64", A310P, A910B), **_r("int16 int32", A610, SX1A)},
    "vmul": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64 complex32 complex64"),
    "vdiv": {**_r(F16, ALL, HISI), **_r(F16_32, A310, A610, SX1A),
             **_r("uint16 float16 uint32 float32 uint64 int64", A310B), **_r("float16 float32 int64", A310P, A910),
             **_r("float16 float32 int64 complex32 complex64", A910B)},
    "vmod": {**_r(F16, ALL, A310, HISI), **_r("float16 float32 int64", A310B, A310P, A910, A910B),
             **_r(F16_32, A610, SX1A)},
    "vmin": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64", ALL10),
    "vmax": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64", ALL10),
    "vadds": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64"),
    "vmins": _binary("int16 float16 float32 int32", F16_32_S32, F16_32_S32, ALL10),
    "vmaxs": _binary("bool int16 float16 float32 int32", F16_32_S32, F16_32_S32, ALL10),
    "vmuls": _binary(_S32_S16_V200, "float16 float32 int32 int64", "float16 float32 int32 int64 complex32 complex64"),
    "vnot": _bitwise(BIT_V200),
    "vor": _bitwise("uint1 uint16 int16 float16 uint32 int32 float32 uint64 int64"),
    "vand": _bitwise(BIT_V200),
    "vcmp": {**_r(F16, ALL, A310, HISI), **_r(ALL10, A310B), **_r("float16 float32 int64 uint64", *V200, A910),
             **_r("float16 float32 int64 uint64 int32", A910B)},
    "vlogic": _r("bool", ALL, *SOC_KEYS),
    "vsel": _sel(ALL11),
    "vcmpsel": _sel(ALL11),
    "vlog": _unary_f32(F16),
    "vexp": _unary_f32(F16),
    "vabs": {**_r(F16, ALL, HISI), **_r(F16_32, A310, *V200, A910), **_r("int8 float16 int16 float32 int32", A310B),
             **_r("float16 float32 int64 complex32 complex64", A910B)},
    "vsignbit": {**_r("", ALL), **_r("float16 float32 int32 int16", A310B, A910B)},
    "vrec": _unary_f32(F16_32),
    "vrelu": {**_r(F16, ALL, A310, A910, A910B, HISI),
              **_r("bool uint8 uint16 float16 uint32 int32 float32 uint64", A310B),
              **_r("float16 int32 float32", *V200)},
    "vsqrt": _unary_f32(F16_32),
    "vrsqrt": _unary_f32(F16_32),
    "vaxpy": _unary_f32(F16_32),
    "vmla": _unary_f32(F16_32),
    "vmadd": _unary_f32(F16_32),
    "vmaddrelu": _unary_f32(F16_32),
    "vlrelu": {**_r(F16, ALL, HISI), **_r(F16_32_S32, A310, A310B, A910), **_r(F16_32, *V200, A910B)},
    "vaddrelu": _relu2(),
    "vsubrelu": _relu2(),
    "gather": _gather(),
    "gather_nd": _gather(),
    "powi": _r("int32", A310B, A310P, A910B),
    "segment": {**_r(F16, ALL), **_r(F16_S32, A310), **_r(F16_32_S32, A310B, *V200, A910),
                **_r(F16_32_S32 + " bfloat16", A910B)},
    "scatter": {**_r(F16, ALL), **_r("", A310), **_r(F16_32_S32, A310B, *V200, A910),
                **_r(F16_32_S32 + " bfloat16 int64", A910B)},
    "scatter_nd": {**_r(F16, ALL), **_r("", A310), **_r(F16_32_S32, A310B, *V200, A910),
                   **_r(F16_32_S32 + " bfloat16 int64 int8", A910B)},
    "slice": _gather(),
    "set_value": _r(F16_32, ALL, *V200, A910, A910B),
    "transpose": {**_r(F16, ALL), **_r(TRANS10, A310, *V200, A910), **_r("bfloat16 " + TRANS10, A310B, A910B)},
    "transdata": {**_r(F16, ALL), **_r(TRANS8, A310, *V200, A910), **_r(TRANS8 + " bfloat16", A310B, A910B)},
    # common
    "clip": {**_r(F16, ALL, HISI), **_r(F16_32_S32, A310, A910, A910B),
             **_r("bool uint8 int8 int16 float16 int32 float32", A310B, *V200)},
    "cast_to": {**_r(_CAST_BASE, ALL, HISI), **_r(_CAST_310, A310),
                **_r("s82f16 u82f16 bf162f32 f162s8 f162u8 f162f32 s162s8 s162u8 s162f16 s162f32 f322f16 s322f16 "
                     "s322s16 s322f32 s322s64 s642s32 s642f16", A310B),
                **_r(_CAST_V200 + " s322s16", A310P), **_r(_CAST_V200, A610, SX1A),
                **_r(_CAST_310 + " s322s64 s642s32 s642f16", A910), **_r(_CAST_910B, A910B)},
    "conv": _r(F16, ALL),
    "compute_four2five": _r(F16, ALL),
    "compute_five2four": _r(F16, ALL),
    "matmul": _r("float16 f162f16 f162f32", ALL),
    "pooling2d": _r(F16, ALL),
    "concat": _r("bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 bfloat16 float16 float32", ALL),
    "sort": {**_r(F16, ALL, A910), **_r("", A310, A310B), **_r(F16_32, *V200, A910B)},
    "topk": {**_r(F16, ALL, A910), **_r("", A310), **_r(F16_32, A310B, *V200, A910B)},
}
