"""Small TIK utilities kernels import from ``tbe.tik.common.util`` / ``te.tik.common.util``."""
from __future__ import annotations

from functools import reduce

from pto_core.errors import IllegalOperand

from .platform import get_bit_len

#: bytes per element of each TIK dtype name.
DTYPE_SIZE = {"uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "float16": 2, "bfloat16": 2, "uint32": 4,
              "int32": 4, "float32": 4, "uint64": 8, "int64": 8, "bool": 1}


def reduce_mul(shape) -> int:
    """Product of the dims of ``shape`` (1 for an empty shape)."""
    return reduce(lambda a, b: a * b, shape, 1)


def ceil_div(a_value: int, b_value: int) -> int:
    """``ceil(a / b)`` for positive ``b``."""
    if b_value <= 0:
        raise IllegalOperand(f"ceil_div divisor must be positive, got {b_value}", op="ceil_div", operand="b_value",
                             value=b_value, limit="> 0", hint="pass a divisor b_value >= 1")
    return (a_value + b_value - 1) // b_value


__all__ = ["DTYPE_SIZE", "reduce_mul", "ceil_div", "get_bit_len"]
