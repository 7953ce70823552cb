"""Bit-exact numerics: pure numpy functions on whole arrays, no simulator state.

Every conversion takes the exact input value, rounds it once with one of the six
`ROUNDING` modes and applies one of the `SAT_MODES` (see ``rounding.py`` for the kernel,
``migration_guide/numerics.md`` for every format, mode and choice with its source).

==========================  ==========================================================
function                    what
==========================  ==========================================================
`float_to`                  float values -> f32/f16/bf16/e4m3/e5m2/hif8/e2m1/e1m2(/tf32)
`to_f32`, `to_f64`          exact decode of any float format (codes for hif8/FP4/e8m0)
`float_to_int`              float -> s8..u64, s4/u4 (round, saturate or wrap, NaN -> 0)
`int_to_float`              integers (exact, up to 64 bits) -> any float format
`round_to_integral`         float -> integral float in the same dtype (vconv f322f32r)
`fp19`, `fp19_bits`         FIXPIPE scale precision (f32 bits[31:13])
`tf32_round`                ``tf32_mode(round_even|round_away)`` of ``pto.mad``
`e8m0_encode/_decode`       MX power-of-two scales
`hif8_encode/_decode`       HiFloat8 (TA and hybrid rounding)
`pack_nibbles`, `unpack_…`  4-bit data, element 2i in the low nibble
==========================  ==========================================================
"""
from .rounding import ROUNDING, SAT_MODES, rounding_name, sat_name, round_to_grid  # noqa: F401
from .floats import (FORMATS, FloatFormat, float_format, float_to, round_to_integral,  # noqa: F401
                     tf32_round, to_f32, to_f64)
from .hif8 import HIF8_INF, HIF8_MAX, HIF8_NAN, hif8_decode, hif8_encode  # noqa: F401
from .e8m0 import e8m0_decode, e8m0_encode  # noqa: F401
from .ints import INT_TARGETS, float_to_int, int_to_float  # noqa: F401
from .fp19 import fp19, fp19_bits  # noqa: F401
from .packing import pack_nibbles, unpack_nibbles  # noqa: F401

__all__ = [
    "ROUNDING", "SAT_MODES", "rounding_name", "sat_name", "round_to_grid",
    "FORMATS", "FloatFormat", "float_format", "float_to", "round_to_integral", "tf32_round", "to_f32", "to_f64",
    "HIF8_INF", "HIF8_MAX", "HIF8_NAN", "hif8_decode", "hif8_encode",
    "e8m0_decode", "e8m0_encode",
    "INT_TARGETS", "float_to_int", "int_to_float",
    "fp19", "fp19_bits",
    "pack_nibbles", "unpack_nibbles",
]
