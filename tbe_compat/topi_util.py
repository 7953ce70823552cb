"""The 2020-era ``topi.cce.util`` helpers older TIK kernels import.

Same checks as CANN's module of that name; failures raise
`tbe_compat.para_check.ParamCheckError` (a ``RuntimeError`` and a ``ValueError``, the
two types the original raises) with a message naming the bad value and the rule.
"""
from __future__ import annotations

from .para_check import (DEFAULT_MAX_SHAPE_DIM, DEFAULT_MAX_SHAPE_NUM, DEFAULT_MIN_SHAPE_DIM,  # noqa: F401
                         MAX_KERNEL_NAEM_LEN, MAX_KERNEL_NAME_LEN, ParamCheckError, _fail, check_dtype_rule,
                         check_input_type, check_kernel_name, check_shape_rule, get_shape_size, is_scalar)
from .platform import current_soc

#: the max product of all reduce axes of a shape.
MAX_REDUCE_SHAPE_NUM = 200000000
#: the max product of all dims (2**31).
SHAPE_SIZE_LIMIT = 2147483648
VERSION_CLOUD = "cloud"
VERSION_MINI = "mini"
VERSION_SHISI = "smallhisi"
VERSION_MINI_1951 = "mini_1951"
VERSION_MINI_1951M = "mini_1951m"


def check_reduce_shape_rule(shape) -> None:
    """The product of all dims of a reduce input must be at most 200000000."""
    product = get_shape_size(shape)
    if product > MAX_REDUCE_SHAPE_NUM:
        _fail("E60039", f"the reduce size of shape {tuple(shape)} is {product}, it must be at most "
              f"{MAX_REDUCE_SHAPE_NUM}", param_name="shape", value=product, limit=f"<= {MAX_REDUCE_SHAPE_NUM}")


def check_shape_size(shape, limit) -> int:
    """The product of all dims must be at most ``limit``; returns the product."""
    product = get_shape_size(shape)
    if product > limit:
        _fail("E60039", f"the shape {tuple(shape)} is too large: {product} elements, at most {limit} allowed",
              param_name="shape", value=product, limit=f"<= {limit}")
    return product


def check_tensor_shape_size(shape) -> int:
    """`check_shape_size` with the 2**31 element limit; returns the product."""
    return check_shape_size(shape, SHAPE_SIZE_LIMIT)


def compare_tensor_dict_key(dict1, dict2, dict_key) -> None:
    """``dict1[dict_key]`` and ``dict2[dict_key]`` must be equal (strings compare
    case-insensitively, lists and tuples element-wise)."""
    for name, value in (("dict1", dict1), ("dict2", dict2)):
        if not isinstance(value, dict):
            _fail("E60038", f"the input {name} must be a dict, got {type(value).__name__}", param_name=name,
                  value=value, limit="dict")
        if dict_key not in value:
            _fail("E60038", f"the input {name} has no key {dict_key!r} (keys: {sorted(value)})", param_name=name,
                  value=dict_key, limit=sorted(value))
    value1, value2 = dict1[dict_key], dict2[dict_key]
    if isinstance(value1, (list, tuple)):
        value1 = list(value1)
    if isinstance(value2, (list, tuple)):
        value2 = list(value2)
    if not isinstance(value1, type(value2)):
        _fail("E60038", f"{dict_key}: the two inputs have different types ({type(value1).__name__} vs "
              f"{type(value2).__name__})", param_name=dict_key, value=(value1, value2), limit="equal types")
    equal = value1.lower() == value2.lower() if isinstance(value1, str) else value1 == value2
    if not equal:
        _fail("E60038", f"{dict_key}: input one {value1!r} and input two {value2!r} are not equal",
              param_name=dict_key, value=(value1, value2), limit="equal values")


def _axis_value(shape_len: int, value) -> int:
    if type(value) is not int:
        _fail("E60038", f"axis value must be an int, got {type(value).__name__} {value!r}", param_name="axis",
              value=value, limit="int")
    if not -shape_len <= value < shape_len:
        _fail("E60039", f"axis {value} is out of range for a rank-{shape_len} shape, it must be in "
              f"[{-shape_len}, {shape_len - 1}]", param_name="axis", value=value,
              limit=f"[{-shape_len}, {shape_len - 1}]")
    return value + shape_len if value < 0 else value


def axis_check(shape_len: int, axis):
    """Normalise an axis (int) or axes (list): negative axes count from the end; a list
    comes back sorted without duplicates."""
    if not hasattr(axis, "index"):
        return _axis_value(shape_len, axis)
    return sorted({_axis_value(shape_len, a) for a in axis})


def check_reduce_need_refine(shape, reduce_axis) -> bool:
    """False if a reduced axis has length 1 (the shape must then not be refined)."""
    axes = reduce_axis if hasattr(reduce_axis, "index") else [reduce_axis]
    return all(shape[i] != 1 for i in axes)


def refine_axis(axis, shape) -> list:
    """Normalised reduce axes whose length is > 1."""
    axes = axis if isinstance(axis, (tuple, list)) else [axis]
    return [a for a in (_axis_value(len(shape), a) for a in axes) if shape[a] > 1]


def scalar2tensor_one(shape):
    """``[]`` becomes ``[1]``; other shapes are returned unchanged."""
    return [1] if isinstance(shape, (list, tuple)) and not shape else shape


def produce_shapes(shape1, shape2) -> tuple:
    """Broadcast two shapes: returns (shape1, shape2, out_shape), the shorter one padded
    with leading 1s."""
    a, b = list(shape1), list(shape2)
    swap = len(a) < len(b)
    if swap:
        a, b = b, a
    b = [1] * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            _fail("E60038", f"shapes {tuple(shape1)} and {tuple(shape2)} do not broadcast", param_name="shape",
                  value=(tuple(shape1), tuple(shape2)), limit="equal dims or 1")
        out.append(max(x, y))
    return (b, a, out) if swap else (a, b, out)


def shape_to_list(shape) -> list:
    """A shape (any sequence of ints or objects with ``.value``) as a list of ints."""
    return [int(getattr(d, "value", d)) for d in shape]


def get_divisors(num: int) -> list:
    """All positive divisors of ``num``, ascending."""
    return [d for d in range(1, num + 1) if num % d == 0]


def get_product_version() -> str:
    """"mini" (Ascend310), "cloud" (Ascend910), "smallhisi" (Hi3796CV300*), "mini_1951"
    (Ascend610) for the selected chip, as the 2020 helper answered."""
    short = current_soc().short_soc_version
    versions = {"Ascend310": VERSION_MINI, "Ascend910": VERSION_CLOUD, "Hi3796CV300ES": VERSION_SHISI,
                "Hi3796CV300CS": VERSION_SHISI, "Ascend610": VERSION_MINI_1951}
    if short not in versions:
        _fail("E60038", f"the 2020 topi helper knows no product version for {short}", param_name="soc_version",
              value=short, limit=sorted(versions))
    return versions[short]


def is_v200_version() -> bool:
    return get_product_version() in (VERSION_MINI_1951, VERSION_MINI_1951M)


def is_lhisi_version() -> bool:
    return get_product_version() == VERSION_SHISI


def is_cloud_version() -> bool:
    return get_product_version() == VERSION_CLOUD


def is_mini_version() -> bool:
    return get_product_version() == VERSION_MINI


def is_mini_or_lhisi_version() -> bool:
    return get_product_version() in (VERSION_MINI, VERSION_SHISI)


__all__ = ["MAX_REDUCE_SHAPE_NUM", "SHAPE_SIZE_LIMIT", "DEFAULT_MIN_SHAPE_DIM", "DEFAULT_MAX_SHAPE_DIM",
           "DEFAULT_MAX_SHAPE_NUM", "MAX_KERNEL_NAME_LEN", "MAX_KERNEL_NAEM_LEN",
           "VERSION_CLOUD", "VERSION_MINI", "VERSION_SHISI",
           "VERSION_MINI_1951", "VERSION_MINI_1951M", "ParamCheckError", "check_input_type", "check_dtype_rule",
           "check_shape_rule", "check_reduce_shape_rule", "check_kernel_name", "check_shape_size",
           "check_tensor_shape_size", "compare_tensor_dict_key", "axis_check", "check_reduce_need_refine",
           "refine_axis", "is_scalar", "get_shape_size", "shape_to_list", "scalar2tensor_one", "produce_shapes",
           "get_divisors", "get_product_version",
           "is_v200_version", "is_lhisi_version", "is_cloud_version", "is_mini_version", "is_mini_or_lhisi_version"]
