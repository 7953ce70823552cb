"""Operator-parameter checks real TIK kernels run before building
(``tbe.common.utils.para_check``, also ``te.utils.para_check`` / ``te.utils.op_utils``).

The checks are CANN's: ``@check_op_params(REQUIRED_INPUT, ..., KERNEL_NAME)`` validates
every tensor dict (keys ``shape``, ``ori_shape``, ``format``, ``ori_format``, ``dtype``;
ranks 0..8, non-negative dims, known formats and dtypes), attribute types and the
kernel name (letters, digits, underscores, not starting with a digit, at most 200
characters). A failure raises `ParamCheckError` -- a ``RuntimeError`` (what CANN raises)
that is also a ``ValueError`` -- whose ``error_info`` dict carries CANN's error code and
whose message names the parameter, the bad value and what is allowed.

Dynamic shapes: CANN relaxes shape checks inside its dynamic-compile context. The
simulator has no such context, so a shape containing CANN's dynamic markers (-1 or -2)
is checked by the dynamic rules (dims in [-2, 2**63-1], ``range`` required for -1) and
every other shape by the static rules. This is the one deliberate difference.
"""
from __future__ import annotations

import re
import warnings
from enum import Enum
from functools import reduce, wraps
from typing import Any, Callable

from pto_core.errors import IllegalOperand

from .tik.errors import user_frame

SHAPE_SIZE_LIMIT = 2 ** 31 - 1
SHAPE_SIZE_LIMIT_INT64 = 2 ** 63 - 1
SHAPE_SIZE_ZERO = 0
DIM_LIMIT = SHAPE_SIZE_LIMIT
DIM_LIMIT_INT64 = SHAPE_SIZE_LIMIT_INT64
MIN_UNKNOWN_SHAPE_RANK = 0
MAX_UNKNOWN_SHAPE_NUM = 2 ** 31 - 1
MAX_UNKNOWN_SHAPE_NUM_INT64 = 2 ** 63 - 1
DEFAULT_MIN_SHAPE_DIM = 1
DEFAULT_MAX_SHAPE_DIM = 8
DEFAULT_MAX_SHAPE_NUM = 200000000
DYNAMIC_SHAPE_FLAG = -1
UNKNOWN_RANK_FLAG = -2
RANK_ZERO = 0
RANK_LIMIT = 8
ZERO_DIM = 0
NONE_TYPE = type(None)
MAX_KERNEL_NAME_LEN = 200
#: The 2019-2020 spelling: CANN's te.utils.para_check, te.utils.op_utils and topi.cce.util define
#: ``MAX_KERNEL_NAEM_LEN = 200`` (sic) and ops of that era read it (clip_boxes_d:
#: ``len(kernel_name) > util.MAX_KERNEL_NAEM_LEN``); tbe.common.utils.para_check only has the corrected name,
#: so only the legacy aliases export this one.
MAX_KERNEL_NAEM_LEN = MAX_KERNEL_NAME_LEN
#: The same era's spellings of the unknown-shape limits (sic, 2020 te.utils.op_utils / para_check).
MIN_UNKOWN_SHAPE_RANK = MIN_UNKNOWN_SHAPE_RANK
MAX_UNKOWN_SHAPE_NUM = MAX_UNKNOWN_SHAPE_NUM
#: the legacy (misspelt) names, exported only by the te.utils / topi.cce.util aliases.
LEGACY_SPELLINGS = ("MAX_KERNEL_NAEM_LEN", "MIN_UNKOWN_SHAPE_RANK", "MAX_UNKOWN_SHAPE_NUM")
KERNEL_NAME = "kernel_name"

CONST = "const"
SPECIAL = "special"
UNFOLD_A = "unfold_a"
UNFOLD_B = "unfold_b"
ORIGINAL = "original"
SPECIAL_SCALAR = "special_scalar"
COMMON = "common"
BROADCAST = "broadcast"

REQUIRED_INPUT = "required_input"
OPTION_INPUT = "option_input"
DYNAMIC_INPUT = "dynamic_input"
REQUIRED_OUTPUT = "required_output"
OPTION_OUTPUT = "option_output"
DYNAMIC_OUTPUT = "dynamic_output"
REQUIRED_ATTR_INT = "REQUIRED_ATTR_INT"
REQUIRED_ATTR_FLOAT = "REQUIRED_ATTR_FLOAT"
REQUIRED_ATTR_STR = "REQUIRED_ATTR_STR"
REQUIRED_ATTR_BOOL = "REQUIRED_ATTR_BOOL"
REQUIRED_ATTR_TYPE = "REQUIRED_ATTR_TYPE"
REQUIRED_ATTR_LIST_INT = "REQUIRED_ATTR_LIST_INT"
REQUIRED_ATTR_LIST_FLOAT = "REQUIRED_ATTR_LIST_FLOAT"
REQUIRED_ATTR_LIST_BOOL = "REQUIRED_ATTR_LIST_BOOL"
REQUIRED_ATTR_LIST_LIST_INT = "REQUIRED_ATTR_LIST_LIST_INT"
OPTION_ATTR_INT = "OPTION_ATTR_INT"
OPTION_ATTR_FLOAT = "OPTION_ATTR_FLOAT"
OPTION_ATTR_STR = "OPTION_ATTR_STR"
OPTION_ATTR_BOOL = "OPTION_ATTR_BOOL"
OPTION_ATTR_TYPE = "OPTION_ATTR_TYPE"
OPTION_ATTR_LIST_INT = "OPTION_ATTR_LIST_INT"
OPTION_ATTR_LIST_FLOAT = "OPTION_ATTR_LIST_FLOAT"
OPTION_ATTR_LIST_BOOL = "OPTION_ATTR_LIST_BOOL"
OPTION_ATTR_LIST_LIST_INT = "OPTION_ATTR_LIST_LIST_INT"

# CANN error codes (E80xxx: op parameter errors; E600xx: older util checks).
OP_ERROR_CODE_000 = "E80000"   # value not allowed (an inf/nan float attribute)
OP_ERROR_CODE_001 = "E80001"   # mandatory parameter missing
OP_ERROR_CODE_002 = "E80002"   # value out of range
OP_ERROR_CODE_003 = "E80003"   # wrong type
OP_ERROR_CODE_004 = "E80004"   # tensor dict lacks a key
OP_ERROR_CODE_007 = "E80007"   # dtype is None
OP_ERROR_CODE_008 = "E80008"   # dtype not allowed
OP_ERROR_CODE_011 = "E80011"   # shape size too small
OP_ERROR_CODE_012 = "E80012"   # rank out of range
OP_ERROR_CODE_014 = "E80014"   # ori_format not allowed
OP_ERROR_CODE_015 = "E80015"   # format not allowed
OP_ERROR_CODE_017 = "E80017"   # format is None
OP_ERROR_CODE_020 = "E80020"   # bad kernel_name characters
OP_ERROR_CODE_021 = "E80021"   # shape and range lengths differ
OP_ERROR_CODE_022 = "E80022"   # bad range bounds
OP_ERROR_CODE_023 = "E80023"   # range element not a pair
OP_ERROR_CODE_024 = "E80024"   # ranges do not intersect
# The rest of CANN's E800xx table (2020 ``op_utils``): codes its other helpers raise.
OP_ERROR_CODE_005 = "E80005"
OP_ERROR_CODE_006 = "E80006"
OP_ERROR_CODE_009 = "E80009"
OP_ERROR_CODE_010 = "E80010"
OP_ERROR_CODE_013 = "E80013"   # shapes do not broadcast
OP_ERROR_CODE_016 = "E80016"
OP_ERROR_CODE_018 = "E80018"
OP_ERROR_CODE_019 = "E80019"
OP_ERROR_CODE_025 = "E80025"   # unsupported expression
OP_ERROR_CODE_026 = "E80026"   # not a multiplication
OP_ERROR_CODE_027 = "E80027"   # broadcast needs two inputs


class OpParamInfoKey(str, Enum):
    """Keys of a tensor parameter dict (strings, as in CANN: ``param[OpParamInfoKey.SHAPE]`` works)."""

    SHAPE = "shape"
    FORMAT = "format"
    ORI_SHAPE = "ori_shape"
    ORI_FORMAT = "ori_format"
    D_TYPE = "dtype"
    RANGE = "range"


class TensorFormat(str, Enum):
    """Tensor formats CANN accepts in a parameter dict (strings, as in CANN: ``TensorFormat.ND == "ND"``)."""

    ND = "ND"
    NC = "NC"
    NCL = "NCL"
    NCHW = "NCHW"
    NHWC = "NHWC"
    NDHWC = "NDHWC"
    NCDHW = "NCDHW"
    CHWN = "CHWN"
    NC1HWC0 = "NC1HWC0"
    NC1HWC0_C04 = "NC1HWC0_C04"
    NDC1HWC0 = "NDC1HWC0"
    FRACTAL_NZ = "FRACTAL_NZ"
    C1HWC0 = "C1HWC0"
    HWCN = "HWCN"
    DHWCN = "DHWCN"
    FRACTAL_Z = "FRACTAL_Z"
    FRACTAL_Z_C04 = "FRACTAL_Z_C04"
    C1HWNCoC0 = "C1HWNCoC0"
    FRACTAL_Z_3D = "FRACTAL_Z_3D"
    FRACTAL_ZN_LSTM = "FRACTAL_ZN_LSTM"
    FRACTAL_ZN_RNN = "FRACTAL_ZN_RNN"
    ND_RNN_BIAS = "ND_RNN_BIAS"
    FRACTAL_NZ_C0_16 = "FRACTAL_NZ_C0_16"     # CANN 2025 additions
    FRACTAL_NZ_C0_32 = "FRACTAL_NZ_C0_32"
    FRACTAL_NZ_C0_2 = "FRACTAL_NZ_C0_2"
    FRACTAL_NZ_C0_4 = "FRACTAL_NZ_C0_4"
    FRACTAL_NZ_C0_8 = "FRACTAL_NZ_C0_8"


ALL_FORMAT_LIST = [entry.value for entry in TensorFormat]
#: CANN 2025's list (asc_op_compile_base para_check): the 2020 list plus int4/bfloat16/double/complex*, the
#: 8- and 4-bit float formats and int2; a tensor dict with any of them passes the dtype check.
ALL_DTYPE_LIST = ("int4", "int8", "uint8", "int16", "uint16", "int32", "uint32", "bfloat16", "int64", "uint64",
                  "float16", "float32", "float64", "bool", "uint1", "double", "complex32", "complex64", "complex128",
                  "hifloat8", "float8_e4m3fn", "float8_e5m2", "float8_e8m0", "float4_e2m1", "float4_e1m2", "int2")
OP_NAME = ""
PARAM_NAME = ""

_INPUTS = (REQUIRED_INPUT, OPTION_INPUT, DYNAMIC_INPUT)
_OUTPUTS = (REQUIRED_OUTPUT, OPTION_OUTPUT, DYNAMIC_OUTPUT)
_REQUIRED_ATTRS = (REQUIRED_ATTR_STR, REQUIRED_ATTR_FLOAT, REQUIRED_ATTR_INT, REQUIRED_ATTR_BOOL, REQUIRED_ATTR_TYPE,
                   REQUIRED_ATTR_LIST_INT, REQUIRED_ATTR_LIST_BOOL, REQUIRED_ATTR_LIST_FLOAT,
                   REQUIRED_ATTR_LIST_LIST_INT)
_OPTION_ATTRS = (OPTION_ATTR_INT, OPTION_ATTR_FLOAT, OPTION_ATTR_STR, OPTION_ATTR_BOOL, OPTION_ATTR_TYPE,
                 OPTION_ATTR_LIST_INT, OPTION_ATTR_LIST_FLOAT, OPTION_ATTR_LIST_BOOL, OPTION_ATTR_LIST_LIST_INT)
#: every flag `check_op_params` accepts.
PARAM_FLAGS = _INPUTS + _OUTPUTS + _REQUIRED_ATTRS + _OPTION_ATTRS + (KERNEL_NAME,)
_KERNEL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ParamCheckError(IllegalOperand, RuntimeError):
    """An operator parameter failed a CANN check. ``error_info`` is CANN's error dict
    (``errCode``, ``op_name``, ``param_name``, ...); ``args`` is ``(error_info, message)``
    as in CANN."""

    def __init__(self, error_info: dict, message: str, *, op: str | None = None, value: Any = None,
                 limit: Any = None, hint: str | None = None):
        super().__init__(message, op=op, operand=error_info.get("param_name") or None, value=value, limit=limit,
                         hint=hint)
        self.error_info = dict(error_info)
        self.args = (self.error_info, message)


def _fail(code: str, message: str, *, op_name: str = "", param_name: str = "", value: Any = None,
          limit: Any = None, hint: str | None = None, **info: Any):
    """Raise `ParamCheckError`; ``error_info["op_name"]`` falls back to CANN's global
    ``OP_NAME`` (the last checked entry function), the error's ``op`` does not."""
    error_info = {"errCode": code, "op_name": op_name or OP_NAME, "param_name": param_name, **info}
    err = ParamCheckError(error_info, message, op=op_name or None, value=value, limit=limit, hint=hint)
    raise err.with_where(user_frame())


def _type_name(value: Any) -> str:
    return type(value).__name__


def _dtype_choices(check_list) -> tuple[str, str | None]:
    """How a dtype ``check_list`` reads in a message, and a hint when it is a plain str.

    CANN tests ``dtype in check_list``; ``("float32")`` (no trailing comma) is a str, so the test
    matches substrings of it, exactly as the simulator does. The message names the str instead of
    listing its characters."""
    if isinstance(check_list, str):
        return (f"{check_list!r} (check_list is a str: CANN's `in` test accepts substrings of it)",
                f"a one-element tuple needs a trailing comma: ({check_list!r},)")
    return "[" + ", ".join(check_list) + "]", None


def _dtype_limit(check_list):
    """``check_list`` as the error's limit: a str stays one str, anything else becomes a list."""
    return check_list if isinstance(check_list, str) else list(check_list)


def _is_dynamic(shape) -> bool:
    return isinstance(shape, (list, tuple)) and any(d in (DYNAMIC_SHAPE_FLAG, UNKNOWN_RANK_FLAG) for d in shape
                                                    if isinstance(d, int))


# --------------------------------------------------------------------------------------
# Shape / dtype / format checks
# --------------------------------------------------------------------------------------


def _check_rank(shape, min_rank: int, max_rank: int, param_name: str) -> None:
    if not min_rank <= len(shape) <= max_rank:
        _fail(OP_ERROR_CODE_012, f"the rank of {param_name or 'shape'} {tuple(shape)} is {len(shape)}, it must be "
              f"in [{min_rank}, {max_rank}]", param_name=param_name, value=len(shape),
              limit=f"[{min_rank}, {max_rank}]", min_value=min_rank, max_value=max_rank, real_value=len(shape),
              hint=f"pass a shape with {min_rank} to {max_rank} dims (reshape the input, or widen the op's "
                   f"min_rank/max_rank)")


def check_shape(shape, min_dim=0, max_dim=DIM_LIMIT_INT64, min_rank=0, max_rank=RANK_LIMIT, min_size=0,
                max_size=SHAPE_SIZE_LIMIT, param_name=PARAM_NAME) -> None:
    """CANN's common shape rule: a list/tuple of ints, rank in [min_rank, max_rank], every
    dim >= min_dim, product >= min_size (dynamic shapes: dims in [-2, max_dim])."""
    if not isinstance(shape, (tuple, list)):
        _fail(OP_ERROR_CODE_003, f"the parameter[{param_name}] must be a list or tuple, got {_type_name(shape)} "
              f"{shape!r}", param_name=param_name, value=shape, limit="list or tuple",
              param_type="list tuple", actual_type=_type_name(shape), hint="pass the shape as a list or tuple of ints")
    for dim in shape:
        if not isinstance(dim, int) or isinstance(dim, bool):
            _fail(OP_ERROR_CODE_003, f"every dim of {param_name or 'shape'} {tuple(shape)} must be an int, got "
                  f"{_type_name(dim)} {dim!r}", param_name=param_name, value=dim, limit="int",
                  param_type="int", actual_type=_type_name(dim), hint="pass every dim as a Python int")
    if _is_dynamic(shape):
        _check_rank(shape, MIN_UNKNOWN_SHAPE_RANK, max_rank, param_name)
        for dim in shape:
            if not -2 <= dim <= max_dim:
                _fail(OP_ERROR_CODE_002, f"dim {dim} of dynamic shape {tuple(shape)} is outside [-2, {max_dim}]",
                      param_name=param_name, value=dim, limit=f"[-2, {max_dim}]",
                      hint=f"give each dim as -1 (unknown), -2 (unknown rank) or a size in [0, {max_dim}]")
        return
    _check_rank(shape, min_rank, max_rank, param_name)
    for dim in shape:
        if dim < min_dim:
            _fail(OP_ERROR_CODE_002, f"dim {dim} of {param_name or 'shape'} {tuple(shape)} must be >= {min_dim}",
                  param_name=param_name, value=dim, limit=f">= {min_dim}", min_value=min_dim, real_value=dim,
                  hint="static shapes need non-negative dims; -1/-2 mark dynamic dims")
    size = reduce(lambda x, y: x * y, shape, 1)
    if size < min_size:
        _fail(OP_ERROR_CODE_011, f"the size (product of dims) of {param_name or 'shape'} {tuple(shape)} is {size}, "
              f"it must be >= {min_size}", param_name=param_name, value=size, limit=f">= {min_size}",
              hint=f"pass a shape of at least {min_size} elements (no dim 0)")


def _check_range(shape, shape_range, max_shape_num=MAX_UNKNOWN_SHAPE_NUM_INT64, param_name=PARAM_NAME) -> None:
    """The ``range`` of a dynamic tensor: one (low, high) pair per dim, 0 <= low <= high."""
    if not isinstance(shape_range, (tuple, list)):
        _fail(OP_ERROR_CODE_003, f"the range of {param_name} must be a list or tuple, got {_type_name(shape_range)}",
              param_name=param_name, value=shape_range, limit="list or tuple",
              hint="pass the range as a list of (low, high) pairs, one per dim")
    if len(shape) != len(shape_range):
        _fail(OP_ERROR_CODE_021, f"{param_name}: the shape {tuple(shape)} has {len(shape)} dims but the range has "
              f"{len(shape_range)} entries", param_name=param_name, value=len(shape_range), limit=len(shape),
              hint="give one (low, high) range entry per dim of the shape")
    for pair in shape_range:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            _fail(OP_ERROR_CODE_023, f"{param_name}: each range entry must be a (low, high) pair, got {pair!r}",
                  param_name=param_name, value=pair, limit="(low, high)",
                  hint="give each dim's range as a (low, high) pair, high None for unbounded")
        low, high = pair
        if high is None and isinstance(low, int) and 0 <= low <= max_shape_num:
            continue
        if not (isinstance(low, int) and isinstance(high, int) and 0 <= low <= high <= max_shape_num):
            _fail(OP_ERROR_CODE_022, f"{param_name}: range entry {tuple(pair)} must satisfy 0 <= low <= high <= "
                  f"{max_shape_num}", param_name=param_name, value=tuple(pair), limit=f"0 <= low <= high <= "
                  f"{max_shape_num}",
                  hint="give each range entry as (low, high) with 0 <= low <= high (high None for unbounded)")


def check_range(shape, shape_range, min_dim=0, max_dim=RANK_LIMIT, max_shape_num=MAX_UNKNOWN_SHAPE_NUM,
                param_name=PARAM_NAME) -> None:
    """CANN's public ``check_range``: the ``range`` of a dynamic tensor has one (low, high)
    pair per dim with 0 <= low <= high <= ``max_shape_num`` (high may be None).
    ``min_dim`` / ``max_dim`` are accepted and unused, as in CANN."""
    _check_range(shape, shape_range, max_shape_num=max_shape_num, param_name=param_name)


def check_dynamic_shape(shape, max_dim=DIM_LIMIT, max_rank=RANK_LIMIT, param_name=PARAM_NAME) -> None:
    """A dynamic shape: rank in [0, ``max_rank``], every dim in [-2, ``max_dim``] (-1 an unknown
    dim, -2 an unknown rank; CANN 2020 allowed [-1, max_dim] without 0, later CANN this)."""
    _check_rank(shape, MIN_UNKNOWN_SHAPE_RANK, max_rank, param_name)
    for dim in shape:
        if not (isinstance(dim, int) and UNKNOWN_RANK_FLAG <= dim <= max_dim):
            _fail(OP_ERROR_CODE_002, f"In op, the parameter[{param_name}] should be in the range of "
                  f"[{UNKNOWN_RANK_FLAG}, {max_dim}], but actually is [{dim}]", param_name=param_name, value=dim,
                  limit=f"[{UNKNOWN_RANK_FLAG}, {max_dim}]", min_value=str(UNKNOWN_RANK_FLAG), max_value=max_dim,
                  real_value=dim, hint=f"give each dim as -1 (unknown), -2 (unknown rank) or a size in [0, {max_dim}]")


def check_dtype(dtype, check_list=ALL_DTYPE_LIST, param_name=PARAM_NAME) -> None:
    """``dtype`` (case-insensitive) must be one of ``check_list``."""
    choices, hint = _dtype_choices(check_list)
    if dtype is None:
        _fail(OP_ERROR_CODE_007, f"the dtype of {param_name or 'the input'} is None", param_name=param_name,
              limit="one of " + choices, hint=f"set the input's \"dtype\" to one of {choices}")
    if not isinstance(dtype, str):
        _fail(OP_ERROR_CODE_003, f"the dtype of {param_name or 'the input'} must be a str, got "
              f"{_type_name(dtype)} {dtype!r}", param_name=param_name, value=dtype, limit="str",
              hint="pass the dtype as its name, a str such as \"float16\"")
    if dtype.lower() not in check_list:
        _fail(OP_ERROR_CODE_008, f"the dtype of {param_name or 'the input'} is {dtype.lower()!r}, it must be one of "
              f"{choices}", param_name=param_name, value=dtype, limit=_dtype_limit(check_list),
              excepted_dtype_list=_dtype_limit(check_list), dtype=dtype.lower(),
              hint=hint or "cast the input to one of the listed dtypes, or add its dtype to check_list")


def check_format(data_format, check_list=None, param_name=PARAM_NAME) -> None:
    """``data_format`` must be one of ``check_list`` (default: every CANN format)."""
    check_list = ALL_FORMAT_LIST if check_list is None else check_list
    if data_format is None:
        _fail(OP_ERROR_CODE_017, f"the format of {param_name or 'the input'} is None", param_name=param_name,
              limit="one of " + ", ".join(check_list),
              hint="set the input's \"format\" to one of " + ", ".join(check_list))
    if data_format not in check_list:
        _fail(OP_ERROR_CODE_015, f"the format of {param_name or 'the input'} is {data_format!r}, it must be one of "
              f"[{', '.join(check_list)}]", param_name=param_name, value=data_format, limit=list(check_list),
              hint="pass a tensor of one of the listed formats")


def check_elewise_shape_range(inputs: list, support_broadcast=False) -> None:
    """Element-wise inputs of a dynamic kernel: their ``range`` entries must overlap dim
    by dim (with broadcasting, a dim of 1 or a range reaching 1 also fits). Static
    inputs (no -1/-2 dims) need no check."""
    if len(inputs) <= 1 or not any(isinstance(i, dict) and _is_dynamic(i.get("shape")) for i in inputs):
        return
    previous = None
    for tensor in inputs:
        if not isinstance(tensor, dict) or "shape" not in tensor or "range" not in tensor:
            _fail(OP_ERROR_CODE_004, f"every dynamic element-wise input needs 'shape' and 'range', got {tensor!r}",
                  value=tensor, limit="dict with shape and range",
                  hint="pass each input as a dict with \"shape\" and \"range\" (and dtype, format) keys")
        if previous is not None:
            _check_ranges_overlap(tensor, previous, support_broadcast)
        previous = tensor


def _check_ranges_overlap(a: dict, b: dict, broadcast: bool) -> None:
    for i in range(1, min(len(a["shape"]), len(b["shape"])) + 1):
        ra, rb = list(a["range"][-i]), list(b["range"][-i])
        hi_a = MAX_UNKNOWN_SHAPE_NUM_INT64 if ra[1] is None else ra[1]
        hi_b = MAX_UNKNOWN_SHAPE_NUM_INT64 if rb[1] is None else rb[1]
        overlap = max(ra[0], rb[0]) <= min(hi_a, hi_b)
        if broadcast:
            overlap = overlap or a["shape"][-i] == 1 or b["shape"][-i] == 1 or ra[0] <= 1 or rb[0] <= 1
        if not overlap:
            _fail(OP_ERROR_CODE_024, f"ranges {tuple(ra)} and {tuple(rb)} of dim -{i} do not intersect",
                  value=(tuple(ra), tuple(rb)), limit="intersecting ranges",
                  hint="give the element-wise inputs overlapping ranges in every dim")


# --------------------------------------------------------------------------------------
# The @check_op_params decorator
# --------------------------------------------------------------------------------------


def _check_tensor_dict(param, param_name: str, op_name: str) -> None:
    if not isinstance(param, dict):
        _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the parameter[{param_name}] must be a dict (shape, dtype, "
              f"format, ...), got {_type_name(param)} {param!r}", op_name=op_name, param_name=param_name, value=param,
              limit="dict", param_type="dict", actual_type=_type_name(param),
              hint="pass a tensor dict "
                   "{'shape': ..., 'dtype': ..., 'format': ..., 'ori_shape': ..., 'ori_format': ...}")
    if UNKNOWN_RANK_FLAG in param.get("shape", []):
        param["range"] = [(0, None)]
    for key in ("shape", "format", "ori_shape", "ori_format", "dtype"):
        if key not in param:
            _fail(OP_ERROR_CODE_004, f"In op[{op_name}], the input[{param_name}] lacks the item[{key}]",
                  op_name=op_name, param_name=param_name, value=sorted(param),
                  limit="keys shape, format, ori_shape, ori_format, dtype", key=key,
                  hint=f"add the key {key!r} to the tensor dict")
    if DYNAMIC_SHAPE_FLAG in (param["ori_shape"] if isinstance(param["ori_shape"], (list, tuple)) else []) \
            and "range" not in param:
        _fail(OP_ERROR_CODE_004, f"In op[{op_name}], the dynamic input[{param_name}] lacks the item[range]",
              op_name=op_name, param_name=param_name, value=sorted(param), limit="a 'range' for -1 dims", key="range",
              hint="add 'range': [(low, high), ...] (one pair per dim) to the tensor dict")
    check_shape(param["shape"], param_name=param_name)
    check_shape(param["ori_shape"], param_name=param_name)
    if _is_dynamic(param["shape"]) and DYNAMIC_SHAPE_FLAG in param["shape"]:
        _check_range(param["shape"], param["range"], param_name=param_name)
    for key, code in (("format", OP_ERROR_CODE_015), ("ori_format", OP_ERROR_CODE_014)):
        if param[key] not in ALL_FORMAT_LIST:
            _fail(code, f"In op[{op_name}], the {key} of input[{param_name}] is {param[key]!r}, it must be one of "
                  f"[{', '.join(ALL_FORMAT_LIST)}]", op_name=op_name, param_name=param_name, value=param[key],
                  limit=ALL_FORMAT_LIST, hint=f"set {key} to a CANN format name such as 'ND' or 'NC1HWC0'")
    dtype = param["dtype"]
    if not isinstance(dtype, str):
        _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the dtype of [{param_name}] must be a str, got "
              f"{_type_name(dtype)} {dtype!r}", op_name=op_name, param_name=param_name, value=dtype, limit="str",
              hint="give the dtype as a str such as 'float16'")
    if dtype.lower() not in ALL_DTYPE_LIST:
        _fail(OP_ERROR_CODE_008, f"In op[{op_name}], the dtype of [{param_name}] is {dtype!r}, it must be one of "
              f"[{', '.join(ALL_DTYPE_LIST)}]", op_name=op_name, param_name=param_name, value=dtype,
              limit=list(ALL_DTYPE_LIST), hint="give a CANN dtype name such as 'float16', 'float32' or 'int8'")
    param.setdefault("param_name", param_name)


def _check_tensor_param(param, param_name: str, flag: str, op_name: str) -> None:
    required = flag in (REQUIRED_INPUT, REQUIRED_OUTPUT)
    optional = flag in (OPTION_INPUT, OPTION_OUTPUT)
    if required or optional:
        if param is None:
            if required:
                _fail(OP_ERROR_CODE_001, f"In op[{op_name}], the mandatory parameter[{param_name}] is missing",
                      op_name=op_name, param_name=param_name, limit="a tensor dict",
                      hint=f"pass a tensor dict for {param_name}, or mark it OPTION_INPUT")
            return
        _check_tensor_dict(param, param_name, op_name)
        return
    if not isinstance(param, (list, tuple)):
        _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the dynamic parameter[{param_name}] must be a list or tuple of "
              f"tensor dicts, got {_type_name(param)}", op_name=op_name, param_name=param_name, value=param,
              limit="list or tuple", hint=f"pass {param_name} as a list of tensor dicts")
    if not param:
        _fail(OP_ERROR_CODE_001, f"In op[{op_name}], the mandatory parameter[{param_name}] is empty",
              op_name=op_name, param_name=param_name, limit="at least one tensor dict",
              hint=f"pass at least one tensor dict in {param_name}")
    for one in param:
        _check_tensor_dict(one, param_name, op_name)


_ATTR_TYPES = {"INT": (int, "int"), "FLOAT": (float, "float"), "STR": (str, "str"), "BOOL": (bool, "bool")}


def _check_attr_type(value, param_name: str, py_type: type, type_name: str, op_name: str) -> None:
    if not isinstance(value, py_type):
        _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the attribute[{param_name}] must be {type_name}, got "
              f"{_type_name(value)} {value!r}", op_name=op_name, param_name=param_name, value=value, limit=type_name,
              param_type=type_name, actual_type=_type_name(value),
              hint=f"pass {param_name} as {'an' if type_name == 'int' else 'a'} {type_name}")


def _check_attr(value, param_name: str, flag: str, op_name: str) -> None:
    if value is None and flag in _REQUIRED_ATTRS:
        _fail(OP_ERROR_CODE_001, f"In op[{op_name}], the mandatory attribute[{param_name}] is missing",
              op_name=op_name, param_name=param_name, hint=f"pass the attribute {param_name}, or mark it OPTION_ATTR_*")
    if not value:  # CANN skips None, 0, 0.0, "", False and empty lists
        return
    kind = flag.split("_ATTR_")[1]
    if kind in _ATTR_TYPES:
        _check_attr_type(value, param_name, *_ATTR_TYPES[kind], op_name)
    elif kind == "TYPE":
        if value not in ALL_DTYPE_LIST:
            _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the attribute[{param_name}] is {value!r}, it must be a dtype "
                  f"name, one of [{', '.join(ALL_DTYPE_LIST)}]", op_name=op_name, param_name=param_name, value=value,
                  limit=list(ALL_DTYPE_LIST), hint="give a CANN dtype name such as 'float16', 'float32' or 'int8'")
    else:  # LIST_INT, LIST_FLOAT, LIST_BOOL, LIST_LIST_INT
        if not isinstance(value, (list, tuple)):
            _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the attribute[{param_name}] must be a list or tuple, got "
                  f"{_type_name(value)} {value!r}", op_name=op_name, param_name=param_name, value=value,
                  limit="list or tuple", hint=f"pass {param_name} as a list or tuple")
        element = kind[len("LIST_"):]
        for item in value:
            if element == "LIST_INT":
                if not isinstance(item, (list, tuple)):
                    _fail(OP_ERROR_CODE_003, f"In op[{op_name}], every item of attribute[{param_name}] must be a "
                          f"list of int, got {_type_name(item)} {item!r}", op_name=op_name, param_name=param_name,
                          value=item, limit="list of int",
                          hint=f"pass {param_name} as a list of lists of ints, e.g. [[0, 0], [1, 1]]")
                for inner in item:
                    _check_attr_type(inner, param_name, int, "int", op_name)
            else:
                _check_attr_type(item, param_name, *_ATTR_TYPES[element], op_name)


def _check_kernel_name_param(kernel_name, param_name: str, op_name: str) -> None:
    if not isinstance(kernel_name, str):
        _fail(OP_ERROR_CODE_003, f"In op[{op_name}], the parameter[{param_name}] must be a str, got "
              f"{_type_name(kernel_name)} {kernel_name!r}", op_name=op_name, param_name=param_name,
              value=kernel_name, limit="str", hint="pass kernel_name as a str")
    if len(kernel_name) > MAX_KERNEL_NAME_LEN:
        _fail(OP_ERROR_CODE_002, f"In op[{op_name}], the {param_name} is {len(kernel_name)} characters long, it must "
              f"be at most {MAX_KERNEL_NAME_LEN}", op_name=op_name, param_name=param_name, value=len(kernel_name),
              limit=f"[0, {MAX_KERNEL_NAME_LEN}]",
              hint=f"use a kernel_name of at most {MAX_KERNEL_NAME_LEN} characters")
    if not _KERNEL_NAME_RE.match(kernel_name):
        _fail(OP_ERROR_CODE_020, f"In op[{op_name}], kernel_name {kernel_name!r} may only contain letters, digits and "
              "underscores and must begin with a letter or an underscore", op_name=op_name, param_name=param_name,
              value=kernel_name, limit=_KERNEL_NAME_RE.pattern,
              hint="name the kernel like a C identifier, e.g. 'my_kernel'")


class UnknownParamFlagWarning(UserWarning):
    """`check_op_params` was given a flag that is not a para_check constant; CANN (and the
    simulator) then check nothing for that parameter."""


def _is_known_flag(flag) -> bool:
    return isinstance(flag, str) and flag in PARAM_FLAGS


def _check_one(value, param_name: str, flag: str, op_name: str) -> None:
    if not _is_known_flag(flag):
        return  # CANN: an unknown flag reaches _check_attr and matches no attribute kind
    if flag in _INPUTS or flag in _OUTPUTS:
        _check_tensor_param(value, param_name, flag, op_name)
    elif flag == KERNEL_NAME:
        if value is not None:
            _check_kernel_name_param(value, param_name, op_name)
    else:
        _check_attr(value, param_name, flag, op_name)


def check_op_params(*type_args, **type_kwargs) -> Callable:
    """Decorator: check an operator entry function's arguments against one flag per
    positional parameter (``REQUIRED_INPUT``, ``OPTION_ATTR_INT``, ``KERNEL_NAME`` ...),
    in order, before every call. A flag that is not one of these constants (shipped CANN ops pass
    Python types, ``check_op_params(dict, dict, int, str)``) leaves its parameter unchecked, as in
    CANN, and warns `UnknownParamFlagWarning` at decoration time."""
    # CANN sends every flag it does not know to its attribute check, which then matches no
    # attribute kind: the parameter is never checked (shipped ops pass Python types, e.g.
    # ``check_op_params(dict, dict, int, str)``). Same here, with one warning per decorator.
    unknown = [(i, flag) for i, flag in enumerate(type_args) if not _is_known_flag(flag)]
    if unknown:
        listed = ", ".join(f"#{i} {flag!r}" for i, flag in unknown)
        warnings.warn(f"check_op_params flags {listed} are not para_check constants (REQUIRED_INPUT, "
                      "OPTION_ATTR_INT, KERNEL_NAME, ...); as in CANN, those parameters are not checked",
                      UnknownParamFlagWarning, stacklevel=2)

    def decorator(func: Callable) -> Callable:
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        flags = list(zip(names, type_args))

        @wraps(func)
        def wrapper(*args, **kwargs):
            global OP_NAME
            OP_NAME = func.__name__
            for (name, flag), value in zip(flags, args):
                _check_one(value, name, flag, func.__name__)
            for name, flag in flags:
                if name in kwargs:
                    _check_one(kwargs[name], name, flag, func.__name__)
            return func(*args, **kwargs)

        return wrapper

    return decorator


# --------------------------------------------------------------------------------------
# Older utility checks (same names as topi.cce.util, E600xx codes)
# --------------------------------------------------------------------------------------


def _check_input_type_dict(input_dict: dict, input_name: str) -> None:
    for key in ("shape", "dtype"):
        if key in input_dict:
            want = (list, tuple) if key == "shape" else (str,)
            if not isinstance(input_dict[key], want):
                _fail("E60037", f"the {key} of {input_name} must be {' or '.join(t.__name__ for t in want)}, got "
                      f"{_type_name(input_dict[key])} {input_dict[key]!r}", param_name=input_name,
                      value=input_dict[key], limit=" or ".join(t.__name__ for t in want),
                      hint=f"pass the {key} as a {' or '.join(t.__name__ for t in want)}")


def check_input_type(*type_args, **type_kwargs) -> Callable:
    """Decorator: each positional parameter must be an instance of the matching type
    (or tuple of types); dict arguments also need a list/tuple ``shape`` and a str ``dtype``."""
    def decorator(func: Callable) -> Callable:
        names = func.__code__.co_varnames[:func.__code__.co_argcount]
        expected = dict(zip(names, type_args))

        @wraps(func)
        def wrapper(*args, **kwargs):
            for (name, want), value in zip(expected.items(), args):
                _check_typed(value, name, want, func.__name__)
            for name, value in kwargs.items():
                if name in expected:
                    _check_typed(value, name, expected[name], func.__name__)
            return func(*args, **kwargs)

        return wrapper

    return decorator


def _check_typed(value, name: str, want, op_name: str) -> None:
    if isinstance(value, dict):
        _check_input_type_dict(value, name)
    if not isinstance(value, want):
        names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple) else (want,)))
        _fail("E60038", f"In op[{op_name}], the input {name} must be {names}, got {_type_name(value)} {value!r}",
              op_name=op_name, param_name=name, value=value, limit=names, hint=f"pass {name} as {names}")


def check_dtype_rule(dtype, check_list, param_name="default") -> None:
    """``dtype`` (case-insensitive) must be in ``check_list``."""
    choices, hint = _dtype_choices(check_list)
    if dtype is None:
        _fail("E60038", "dtype is None", param_name=param_name, limit="one of " + choices,
              hint=f"pass a dtype, one of {choices}")
    if not isinstance(dtype, str) or dtype.lower() not in check_list:
        _fail("E60005", f"the dtype of {param_name if param_name != 'default' else 'the input'} is {dtype!r}, it must "
              f"be one of {choices}", param_name=param_name, value=dtype, limit=_dtype_limit(check_list),
              expected_dtype_list=_dtype_limit(check_list), dtype=str(dtype).lower(),
              hint=hint or "cast the input to one of the listed dtypes, or add its dtype to check_list")


def check_shape_rule(shape, min_dim=None, max_dim=None, max_shape_num=None) -> None:
    """Shape rule of the util helpers: a list/tuple of 1..8 positive ints (each at most
    ``max_shape_num``, default 200000000)."""
    min_dim = DEFAULT_MIN_SHAPE_DIM if min_dim is None else min_dim
    max_dim = DEFAULT_MAX_SHAPE_DIM if max_dim is None else max_dim
    max_shape_num = DEFAULT_MAX_SHAPE_NUM if max_shape_num is None else max_shape_num
    if not isinstance(shape, (tuple, list)):
        _fail("E60037", f"shape must be a list or tuple, got {_type_name(shape)} {shape!r}", param_name="shape",
              value=shape, limit="list or tuple", hint="pass the shape as a list or tuple of ints")
    if not min_dim <= len(shape) <= max_dim:
        _fail("E60011", f"shape {tuple(shape)} has {len(shape)} dims, it must have [{min_dim}, {max_dim}]",
              param_name="shape", value=len(shape), limit=f"[{min_dim}, {max_dim}]",
              hint=f"pass a shape with {min_dim} to {max_dim} dims")
    for dim in shape:
        if type(dim) is not int:
            _fail("E60037", f"every dim of shape {tuple(shape)} must be an int, got {_type_name(dim)} {dim!r}",
                  param_name="shape", value=dim, limit="int", hint="pass every dim as a Python int")
        if not 0 < dim <= max_shape_num:
            _fail("E60039", f"dim {dim} of shape {tuple(shape)} must be in [1, {max_shape_num}]", param_name="shape",
                  value=dim, limit=f"[1, {max_shape_num}]", hint=f"make every dim of the shape 1..{max_shape_num}")


def check_kernel_name(kernel_name) -> None:
    """A kernel name is None or a string of at most 200 letters, digits and underscores
    that does not start with a digit."""
    if kernel_name is None:
        return
    name = str(kernel_name)
    if len(name) > MAX_KERNEL_NAME_LEN:
        _fail("E60039", f"kernel_name is {len(name)} characters long, it must be less than {MAX_KERNEL_NAME_LEN}",
              param_name="kernel_name", value=len(name), limit=f"<= {MAX_KERNEL_NAME_LEN}",
              hint=f"use a kernel_name of at most {MAX_KERNEL_NAME_LEN} characters")
    if not _KERNEL_NAME_RE.match(name):
        _fail("E60038", f"kernel_name {name!r} may only contain letters, digits and underscores and must begin with a "
              "letter or an underscore", param_name="kernel_name", value=name, limit=_KERNEL_NAME_RE.pattern,
              hint="name the kernel like a C identifier, e.g. 'my_kernel'")


def is_scalar(shape) -> bool:
    """True for the shapes ``[1]`` / ``(1,)``."""
    return isinstance(shape, (list, tuple)) and len(shape) == 1 and shape[0] == 1


def get_shape_size(shape) -> int:
    """Product of all dims (1 for ``[]``)."""
    return reduce(lambda x, y: x * y, shape, 1)


def check_shape_size(shape, limit=SHAPE_SIZE_LIMIT + 1) -> int:
    """The product of all dims must be below ``limit``; returns the product."""
    product = get_shape_size(shape)
    if product >= limit:
        _fail("E60039", f"the size of shape {tuple(shape)} is {product}, it must be less than {limit}",
              param_name="shape", value=product, limit=f"< {limit}",
              hint=f"split the data into shapes of fewer than {limit} elements")
    return product


def check_tensor_shape_size(shape) -> int:
    """Deprecated in CANN: the product of all dims (no limit check)."""
    warnings.warn("check_tensor_shape_size is deprecated", DeprecationWarning, stacklevel=2)
    return get_shape_size(shape)


def check_reduce_shape_rule(shape) -> None:
    """Deprecated in CANN: no check."""
    warnings.warn("check_reduce_shape_rule is deprecated", DeprecationWarning, stacklevel=2)


def check_and_init_5hdc_reduce_support(input_tensor: dict, axis) -> bool:
    """True when a float16 NC1HWC0 tensor is reduced over axes 1 and 4 (needs ori_shape
    and ori_format)."""
    if input_tensor.get("format") == "NC1HWC0" and 1 in axis and 4 in axis and input_tensor.get("dtype") == "float16":
        if "ori_shape" in input_tensor and "ori_format" in input_tensor:
            return True
        _fail("E60040", "a 5HD reduce needs the input tensor's ori_shape and ori_format", param_name="input tensor",
              value=sorted(input_tensor), limit="ori_shape and ori_format",
              hint="add \"ori_shape\" and \"ori_format\" to the input tensor's dict")
    return False


__all__ = sorted(n for n in dir() if (n.isupper() and n not in LEGACY_SPELLINGS)  # legacy aliases only
                 or n in (
    "OpParamInfoKey", "TensorFormat", "ParamCheckError", "UnknownParamFlagWarning", "check_op_params", "check_shape",
    "check_dtype", "check_format", "check_elewise_shape_range", "check_input_type", "check_dtype_rule", "check_shape_rule",
    "check_kernel_name", "is_scalar", "get_shape_size", "check_shape_size", "check_tensor_shape_size",
    "check_reduce_shape_rule", "check_and_init_5hdc_reduce_support", "check_range", "check_dynamic_shape"))
