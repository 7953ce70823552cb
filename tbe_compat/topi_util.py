"""The 2020-era ``topi.cce.util`` helpers older TIK kernels import.

Same checks as CANN's module of that name; failures raise
`tbe_compat.para_check.ParamCheckError` (a ``RuntimeError`` and a ``ValueError``, the
two types the original raises) with a message naming the bad value and the rule.
"""
from __future__ import annotations

from .dsl_modules import dsl_only
from .para_check import (DEFAULT_MAX_SHAPE_DIM, DEFAULT_MAX_SHAPE_NUM, DEFAULT_MIN_SHAPE_DIM,  # noqa: F401
                         MAX_KERNEL_NAEM_LEN, MAX_KERNEL_NAME_LEN, ParamCheckError, _fail, check_dtype_rule,
                         check_input_type, check_kernel_name, check_shape_rule, get_shape_size, is_scalar)
from .para_check import check_and_init_5hdc_reduce_support as _5hdc
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
              f"{MAX_REDUCE_SHAPE_NUM}", param_name="shape", value=product, limit=f"<= {MAX_REDUCE_SHAPE_NUM}",
              hint=f"reduce at most {MAX_REDUCE_SHAPE_NUM} elements per call (split the reduce axis)")


def check_shape_size(shape, limit) -> int:
    """The product of all dims must be at most ``limit``; returns the product."""
    product = get_shape_size(shape)
    if product > limit:
        _fail("E60039", f"the shape {tuple(shape)} is too large: {product} elements, at most {limit} allowed",
              param_name="shape", value=product, limit=f"<= {limit}",
              hint=f"split the data into shapes of at most {limit} elements")
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
                  value=value, limit="dict", hint=f"pass {name} as a tensor dict")
        if dict_key not in value:
            _fail("E60038", f"the input {name} has no key {dict_key!r} (keys: {sorted(value)})", param_name=name,
                  value=dict_key, limit=sorted(value), hint=f"give {name} the key {dict_key!r}")
    value1, value2 = dict1[dict_key], dict2[dict_key]
    if isinstance(value1, (list, tuple)):
        value1 = list(value1)
    if isinstance(value2, (list, tuple)):
        value2 = list(value2)
    if not isinstance(value1, type(value2)):
        _fail("E60038", f"{dict_key}: the two inputs have different types ({type(value1).__name__} vs "
              f"{type(value2).__name__})", param_name=dict_key, value=(value1, value2), limit="equal types",
              hint=f"give both inputs' {dict_key!r} as the same type (e.g. both str)")
    equal = value1.lower() == value2.lower() if isinstance(value1, str) else value1 == value2
    if not equal:
        _fail("E60038", f"{dict_key}: input one {value1!r} and input two {value2!r} are not equal",
              param_name=dict_key, value=(value1, value2), limit="equal values",
              hint=f"pass inputs with equal {dict_key}")


def _axis_value(shape_len: int, value) -> int:
    if type(value) is not int:
        _fail("E60038", f"axis value must be an int, got {type(value).__name__} {value!r}", param_name="axis",
              value=value, limit="int", hint="pass axis as an int")
    if not -shape_len <= value < shape_len:
        _fail("E60039", f"axis {value} is out of range for a rank-{shape_len} shape, it must be in "
              f"[{-shape_len}, {shape_len - 1}]", param_name="axis", value=value,
              limit=f"[{-shape_len}, {shape_len - 1}]", hint=f"pass an axis in [{-shape_len}, {shape_len - 1}]")
    return value + shape_len if value < 0 else value


def axis_check(shape_len: int, axis):
    """Normalise an axis (int) or axes (list): negative axes count from the end; a list
    comes back sorted without duplicates."""
    if not hasattr(axis, "index"):
        return _axis_value(shape_len, axis)
    return sorted({_axis_value(shape_len, a) for a in axis})


def check_reduce_need_refine(shape, reduce_axis, keep_dims=True) -> bool:
    """False if a reduced axis has length 1 (the shape must then not be refined). With
    ``keep_dims=False`` (``tbe.common.utils.shape_util``'s third argument) and a list of axes,
    True as soon as one reduced axis is not 1."""
    if hasattr(reduce_axis, "index"):
        if not keep_dims:
            return any(shape[i] != 1 for i in reduce_axis)
        return all(shape[i] != 1 for i in reduce_axis)
    return shape[reduce_axis] != 1


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
                  value=(tuple(shape1), tuple(shape2)), limit="equal dims or 1", hint="make each dim pair equal or 1")
        out.append(max(x, y))
    return (b, a, out) if swap else (a, b, out)


def shape_to_list(shape) -> list:
    """A shape (any sequence of ints or objects with ``.value``) as a list of ints."""
    return [int(getattr(d, "value", d)) for d in shape]


def _squeeze(shape) -> list:
    return [d for d in shape if d > 1] or [1]


def shape_refine(shape, reduce_axis=None, keep_dims=True):
    """Drop the 1s of ``shape``. Without ``reduce_axis`` returns the refined shape; with it
    returns ``(shape, axes)`` with the reduce axes renumbered (length-1 axes dropped), or the
    shape and axes unchanged when `check_reduce_need_refine` says no."""
    if reduce_axis is None:
        return _squeeze(shape)
    if not check_reduce_need_refine(shape, reduce_axis, keep_dims):
        return (shape, reduce_axis) if hasattr(reduce_axis, "index") else (shape, [reduce_axis])
    axes = sorted(refine_axis(reduce_axis, shape))
    if not axes:
        return _squeeze(shape), []
    refined, kept = [], 0
    for dim in shape:
        if dim > 1:
            refined.append(dim)
            kept += 1
        else:
            axes = [a - 1 if a > kept else a for a in axes]
    return refined, axes


def simplify_axis_shape(shape, axis):
    """Fuse runs of adjacent reduce axes and runs of adjacent kept axes: returns
    ``(shape, axes)``, e.g. ``([2, 3, 4, 5], [1, 2])`` -> ``([2, 12, 5], [1])``. ``axis`` must be
    sorted and non-negative; with no axes CANN answers ``([shape[0]], [0])``, and so does this."""
    axis = list(axis)
    if not axis:
        return [shape[0]], [0]
    fused, fused_axes, merged, length = [], [axis[0]], 0, shape[axis[0]]
    for prev, cur in zip(axis, axis[1:]):
        if cur - prev == 1:
            length *= shape[cur]
            merged += 1
        else:
            fused.append(length)
            fused.extend(shape[prev + 1:cur])
            fused_axes.append(cur - merged)
            length = shape[cur]
    fused.append(length)
    fused = list(shape[:axis[0]]) + fused + list(shape[axis[-1] + 1:])
    out_shape, out_axes, folded, previous = [], [], 0, -1
    for a in fused_axes:
        kept = fused[previous + 1:a]
        out_shape += [get_shape_size(kept)] if len(kept) > 1 else kept
        folded += max(len(kept) - 1, 0)
        out_axes.append(a - folded)
        out_shape.append(fused[a])
        previous = a
    kept = fused[previous + 1:]
    out_shape += [get_shape_size(kept)] if len(kept) > 1 else kept
    return out_shape, out_axes


def squeeze_shape(shape) -> list:
    """The dims > 1 of ``shape`` (``[1]`` if none)."""
    return _squeeze(shape)


def wrap_axes_to_positive(axes, rank: int) -> list:
    """Axes (int or list) as a list of non-negative axes; each must be in [-rank, rank)."""
    out = []
    for a in axes if isinstance(axes, (tuple, list)) else [axes]:
        if not -rank <= a < rank:
            _fail("E60039", f"axis {a} is out of range: axes must be in [-{rank}, {rank})", param_name="axis",
                  value=a, limit=f"[-{rank}, {rank})", hint=f"pass each axis in [{-rank}, {rank - 1}]")
        out.append(a + rank if a < 0 else a)
    return out


def refine_shape_axes(shape, axes):
    """For reduce ops: drop 1s, fuse adjacent reduced dims and adjacent kept dims; returns
    ``(shape, axes)``, e.g. ``((2, 3, 4, 5, 6), (1, -3))`` -> ``([2, 12, 30], [1])``."""
    if len(shape) == 1:
        return shape, axes
    wrapped = sorted(wrap_axes_to_positive(axes, len(shape)))
    out_shape, out_axes, state = [], [], -1
    for index, dim in enumerate(shape):
        if dim == 1:
            continue
        reduced = 1 if index in wrapped else 0
        if reduced == state:
            out_shape[-1] *= dim
        else:
            out_shape.append(dim)
            if reduced:
                out_axes.append(index)
            state = reduced
    return out_shape or [1], out_axes


def broadcast_shapes(shape1, shape2, op_name="", param_name_input1="", param_name_input2=""):
    """Broadcast two static shapes: returns (shape1, shape2, out_shape), the shorter one padded
    with leading 1s; unequal dims neither of which is 1 raise (CANN's E80013)."""
    a, b = list(shape1), list(shape2)
    swapped = len(a) < len(b)
    if swapped:
        a, b = b, a
    b = [1] * (len(a) - len(b)) + b
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            _fail("E80013", f"In op[{op_name}], the inputs[{param_name_input1}][{param_name_input2}] could not be "
                  f"broadcast together with shapes[{','.join(map(str, a))}][{','.join(map(str, b))}]",
                  op_name=op_name, param_name=param_name_input1, value=(tuple(a), tuple(b)),
                  limit="equal dims or 1", hint="make each dim pair equal or 1")
    out = [x if y == 1 else y for x, y in zip(a, b)]
    return (b, a, out) if swapped else (a, b, out)


def unify_broadcast_shapes(shapes, op_name=""):
    """Broadcast any number of static shapes: returns each shape padded with leading 1s, then
    the broadcast shape."""
    rank = max(len(s) for s in shapes)
    padded = [[1] * (rank - len(s)) + list(s) for s in shapes]
    out = []
    for column in zip(*padded):
        big = {d for d in column if d != 1}
        if len(big) > 1:
            _fail("E80013", f"In op[{op_name}], the inputs[{','.join(map(str, column))}] could not be broadcast "
                  "together", op_name=op_name, param_name="shapes", value=[tuple(s) for s in shapes],
                  limit="equal dims or 1",
                  hint="give the inputs shapes whose dims are equal or 1 in each position (numpy broadcasting)")
        out.append(big.pop() if big else 1)
    return (*padded, out)


def refine_shapes_for_broadcast(shape1, shape2):
    """Fuse the dims of two broadcastable static shapes: dims both 1 are dropped, runs of
    equal dims fuse, and runs that broadcast the same way fuse. Returns the two fused shapes.
    CANN skips the fusion while pre-building an op (a compiler mode the simulator never is in)."""
    a, b = list(shape1), list(shape2)
    swapped = len(a) < len(b)
    if swapped:
        a, b = b, a
    b = [1] * (len(a) - len(b)) + b
    pairs = [(x, y) for x, y in zip(a, b) if x != y or x != 1] or [(1, 1)]
    fused1, fused2 = [pairs[0][0]], [pairs[0][1]]
    for (px, py), (x, y) in zip(pairs, pairs[1:]):
        if (x == y and px == py) or (x != y and px != py and (x == px or y == py)):
            fused1[-1] *= x
            fused2[-1] *= y
        else:
            fused1.append(x)
            fused2.append(y)
    return (fused2, fused1) if swapped else (fused1, fused2)


def axis_transform_5d(axis: int, data_format: str) -> int:
    """The NC1HWC0 axis of a 4-D (``NCHW`` / ``NHWC``) axis: NCHW negative axes move one
    left; NHWC maps 1->2, 2->3, 3->1, -1->-4, -4->-5. Other formats and axes are returned
    unchanged (as in CANN, which spells the 2020 name ``axis_transfrom_5d``)."""
    if data_format == "NCHW":
        return axis - 1 if axis < 0 else axis
    if data_format == "NHWC":
        return {-4: -5, -1: -4, 1: 2, 2: 3, 3: 1}.get(axis, axis)
    return axis


axis_transfrom_5d = axis_transform_5d

#: ``get_device_api_dtype``'s table (CANN's device API dtype numbers).
DEVICE_API_DTYPES = {"float32": 0, "float16": 1, "int32": 2, "double": 3}


def get_device_api_dtype(dtype: str) -> int:
    """The device API's number for ``dtype`` (float32 0, float16 1, int32 2, double 3)."""
    if dtype not in DEVICE_API_DTYPES:
        _fail("E60038", f"get_device_api_dtype knows no dtype {dtype!r}", param_name="dtype", value=dtype,
              limit=sorted(DEVICE_API_DTYPES), hint=f"pass one of {', '.join(sorted(DEVICE_API_DTYPES))}")
    return DEVICE_API_DTYPES[dtype]


def check_input_type_dict(input_dict: dict, input_key, input_name: str) -> None:
    """Every key of ``input_dict`` must be in ``input_key``; its ``shape`` must be a list or
    tuple and its ``dtype`` a string."""
    for key, value in input_dict.items():
        if key not in input_key:
            _fail("E60038", f"{input_name}: unexpected key {key!r} (allowed: {list(input_key)})",
                  param_name=input_name, value=key, limit=list(input_key), hint=f"use only the keys {list(input_key)}")
        want = {"shape": (list, tuple), "dtype": (str,)}.get(key)
        if want and not isinstance(value, want):
            _fail("E60038", f"{input_name}[{key!r}] must be a {' or '.join(t.__name__ for t in want)}, got "
                  f"{type(value).__name__}", param_name=input_name, value=value, limit=want,
                  hint=f"pass {input_name}[{key!r}] as a {' or '.join(t.__name__ for t in want)}")


def check_and_init_5hdc_reduce_support(input_tensor: dict, axis, kernel_name=None) -> bool:
    """True when a float16 NC1HWC0 tensor is reduced over axes 1 and 4 (it then needs
    ``ori_shape`` and ``ori_format``). CANN's 2020 ``topi.cce.util`` version also hands those
    to the DSL compiler under ``kernel_name``; nothing here reads them."""
    return _5hdc(input_tensor, axis)


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
              value=short, limit=sorted(versions),
              hint=f"select one of {sorted(versions)} (set_current_compile_soc_info / te_set_version), or "
                   "ask tbe.common.platform.get_soc_spec('SOC_VERSION') instead of the 2020 helper")
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
           "is_v200_version", "is_lhisi_version", "is_cloud_version", "is_mini_version", "is_mini_or_lhisi_version",
           "shape_refine", "simplify_axis_shape", "squeeze_shape", "wrap_axes_to_positive", "refine_shape_axes",
           "broadcast_shapes", "unify_broadcast_shapes", "refine_shapes_for_broadcast", "axis_transform_5d",
           "axis_transfrom_5d", "get_device_api_dtype", "check_input_type_dict",
           "check_and_init_5hdc_reduce_support", "create_param_ptr", "variable_shape", "cast"]

#: TVM-building helpers of CANN's shape modules (``create_param_ptr`` builds a ``tvm.compute``,
#: ``variable_shape`` makes ``tvm`` variables for dynamic shapes, ``cast`` a TVM cast): importable,
#: raising `UnsupportedOp` when called.
create_param_ptr = dsl_only("topi.cce.util.create_param_ptr")
variable_shape = dsl_only("shape_util.variable_shape")
cast = dsl_only("shape_util.cast")
