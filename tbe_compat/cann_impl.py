"""CANN's shared operator helpers: ``impl.constant_util``, ``impl.common_util``,
``impl.util.util_common`` and ``impl.util.util_tik_comm_func``.

CANN's built-in TIK operators import these modules at their top (``from impl import common_util``,
``import impl.constant_util as constant``, ``from impl.util import util_tik_comm_func``), so an
operator file that cannot import them never reaches its TIK code. This module is the simulator's own
implementation of the surface those operators use (names, constants, signatures and documented
behaviour follow CANN's public modules): constants are tables, and every TIK helper is written on
top of the facade's TIK API, so each call traces to PTO ops at the user's line like any TIK call.

Names CANN's modules have but this one does not model raise `UnsupportedOp` naming the helper and
the user's ``file:line`` (module ``__getattr__``, see `missing_name`); helpers that build TBE DSL
expressions (TVM) raise `UnsupportedOp` when called (`tbe_compat.dsl_modules.dsl_only`).
"""
from __future__ import annotations

import functools
import itertools
import warnings
from typing import Callable

from pto_core.errors import IllegalOperand, UnknownName, UnsupportedOp

from . import missing_modules  # noqa: F401 (installs its finder: impl.<a module the simulator lacks>)
from .dsl_modules import dsl_only
from .tik.errors import user_frame

# --------------------------------------------------------------------------------------------------
# impl.constant_util

#: ``impl.constant_util``: every constant of CANN's module (2019-2022 releases), by name.
#: ``MAX_REPEAT_TIMES`` is read by the later ``common_util`` conversion helpers; ``SIZE_SIXTEEN`` (16) and
#: ``SHAPE_SIZE_LIMIT`` (2**31 - 1) close the 2021+ module (dynamic ``prod_virial_se_a`` sizes its tiling
#: and GM tensors with them).
CONSTANT_UTIL = {
    "DATA_TYPE_FP32": "float32", "DATA_TYPE_FP16": "float16", "DATA_TYPE_INT32": "int32",
    "DATA_TYPE_INT16": "int16", "DATA_TYPE_INT8": "int8", "DATA_TYPE_UINT64": "uint64",
    "DATA_TYPE_INT64": "int64", "DATA_TYPE_UINT32": "uint32", "DATA_TYPE_UINT16": "uint16",
    "DATA_TYPE_UINT8": "uint8",
    "DATA_SIZE_ONE": 1, "DATA_SIZE_TWO": 2, "DATA_SIZE_FOUR": 4, "DATA_SIZE_EIGHT": 8,
    "SID": 0, "INT_DEFAULT_ZERO": 0, "FLOAT_DEFAULT_ZERO": 0.0,
    "DEFAULT_NBURST": 1, "STRIDE_ZERO": 0, "DEFAULT_BURST_LEN": 1, "DEFAULT_REPEAT_TIME": 1,
    "MASK128": 128, "MASK64": 64, "STRIDE_ONE": 1, "REPEAT_STRIDE_EIGHT": 8, "REPEAT_STRIDE_FOUR": 4,
    "REPEAT_TIME_ONCE": 1, "BLOCK_STRIDE_ONE": 1,
    "BLOCK_SIZE": 32, "VECTOR_BYTE_SIZE": 256, "SCALAR_SIZE": 1, "MAX_BLOCK_NUMBER": 32,
    "MAX_REPEAT_TIMES": 255,
    "HISI_ES": "hisi-es", "AIC": "aic", "MINI": "mini", "CLOUD": "cloud",
    "SIZE_SIXTEEN": 16, "SHAPE_SIZE_LIMIT": 2 ** 31 - 1,
}

_BLOCK_BYTES = CONSTANT_UTIL["BLOCK_SIZE"]
_REPEAT_BLOCKS = CONSTANT_UTIL["REPEAT_STRIDE_EIGHT"]

# --------------------------------------------------------------------------------------------------
# impl.common_util

#: ``common_util.get_data_size``: bytes per element of the dtypes CANN's table lists (no bfloat16 /
#: bool: CANN's helper refuses them too).
DATA_SIZE_BYTES = {"float32": 4, "float16": 2, "int32": 4, "int16": 2, "int8": 1, "uint32": 4,
                   "uint16": 2, "uint8": 1, "uint64": 8, "int64": 8}


def missing_name(module: str, hint: str) -> Callable[[str], object]:
    """A module ``__getattr__``: a CANN name this module does not model raises `UnsupportedOp`
    naming ``module.name`` and the user's line (dunder lookups stay AttributeError)."""
    def __getattr__(name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise UnsupportedOp("not modelled by the simulator's copy of this CANN module", op=f"{module}.{name}",
                            where=user_frame(), hint=hint)
    return __getattr__


def get_data_size(datatype) -> int:
    """Bytes per element of ``datatype`` (CANN's table `DATA_SIZE_BYTES`)."""
    size = DATA_SIZE_BYTES.get(datatype)
    if size is None:
        raise UnknownName(f"datatype {datatype!r} is not supported by common_util.get_data_size",
                          op="impl.common_util.get_data_size", operand="datatype", value=datatype,
                          limit=sorted(DATA_SIZE_BYTES), where=user_frame(),
                          hint="pass one of the listed dtype names (CANN's helper raises for any other)")
    return size


def get_block_element(datatype) -> int:
    """Elements of ``datatype`` in one 32-byte block."""
    return _BLOCK_BYTES // get_data_size(datatype)


def _in_dead_code(tik_instance) -> bool:
    """True while tracing code that never runs (a statically false ``if_scope``, an empty constant
    ``for_range``). TIK's constant folding drops such code; the facade drops a TIK call there whose
    checks fail (`tbe_compat.tik.api.tik_api`), so a tensor declared there may be ``None`` (a
    ``Tensor`` of shape ``(0,)`` for a Python count of 0)."""
    return any(getattr(sc, "dead", False) for sc in getattr(tik_instance, "_scopes", ()))


def _skipped_in_dead_code(helper):
    """Decorator of a TIK helper taking the Tik instance first: in code that never runs
    (`_in_dead_code`) it does nothing, as every TIK call it would issue is dropped or never executed."""
    @functools.wraps(helper)
    def wrapper(tik_instance, *args, **kwargs):
        if _in_dead_code(tik_instance):
            return None
        return helper(tik_instance, *args, **kwargs)
    return wrapper


def get_vector_repeat_times(tik_instance, total_size):
    """An int32 Scalar: vector repeats (256 B each) covering ``total_size`` bytes, rounded up."""
    repeats = tik_instance.Scalar("int32")
    repeats.set_as((total_size + 255) // 256)
    return repeats


def get_datamove_nburst(tik_instance, total_size):
    """An int32 Scalar: 32-byte blocks covering ``total_size`` bytes, rounded up."""
    nburst = tik_instance.Scalar("int32")
    nburst.set_as((total_size + _BLOCK_BYTES - 1) // _BLOCK_BYTES)
    return nburst


def move_out_non32_alignment(input_dict) -> None:
    """Write ``element_num`` elements of UB tensor ``out_ub`` to ``out_gm[gm_offset:]`` without
    touching GM past them (CANN's last-core move-out). Keys: ``instance``, ``out_ub``, ``out_gm``,
    ``gm_offset``, ``element_num``, ``dsize``.

    As in CANN: whole blocks go out directly; under one block, the block ending at the last element
    is read back from GM, patched and written (so up to a block *before* ``gm_offset`` is rewritten
    with its own data); otherwise the last block's elements are copied to the start of ``out_ub``
    (which is modified) and written ending at the last element.
    """
    tik = input_dict.get("instance")
    if _in_dead_code(tik):
        return
    out_ub, out_gm = input_dict.get("out_ub"), input_dict.get("out_gm")
    gm_offset, count, dsize = input_dict.get("gm_offset"), input_dict.get("element_num"), input_dict.get("dsize")
    per_block = _BLOCK_BYTES // dsize
    from .tik import scope_ubuf
    block_ub = tik.Tensor(out_ub.dtype, (per_block,), name="out_ub_tmp", scope=scope_ubuf)
    whole = tik.Scalar("int32")
    whole.set_as((count * dsize) // _BLOCK_BYTES)
    rest = tik.Scalar("int32")
    rest.set_as((count * dsize) % _BLOCK_BYTES)
    with tik.if_scope(rest == 0):
        tik.data_move(out_gm[gm_offset], out_ub, 0, 1, whole, 0, 0)
    with tik.if_scope(whole == 0):
        back = per_block - count
        tik.data_move(block_ub, out_gm[gm_offset - back], 0, 1, 1, 0, 0)
        with tik.for_range(0, count) as i:
            block_ub[back + i].set_as(out_ub[i])
        tik.data_move(out_gm[gm_offset - back], block_ub, 0, 1, 1, 0, 0)
    with tik.else_scope():
        tik.data_move(out_gm[gm_offset], out_ub, 0, 1, whole, 0, 0)
        last = count - per_block
        value = tik.Scalar(out_ub.dtype)
        with tik.for_range(0, per_block) as i:
            value.set_as(out_ub[last + i])
            out_ub[i].set_as(value)
        tik.data_move(out_gm[gm_offset + last], out_ub, 0, 1, 1, 0, 0)


def get_dtype(tensor_dict) -> str:
    """The lower-cased ``dtype`` of a tensor dict, ``"bool"`` read as ``"int8"``."""
    dtype = tensor_dict.get("dtype").lower()
    return "int8" if dtype == "bool" else dtype


COMMON_UTIL_DSL = ("get_attr", "get_vlrelu", "get_esp_min")

# --------------------------------------------------------------------------------------------------
# impl.util.util_common

#: ``util_common`` module constants.
UTIL_COMMON_CONSTANTS = {"PAD_MIN": 0, "CONV3D_SHAPE_COMMON_DIM": 5, "UINT8_MOD_VAL": 256, "INT8_MOD_VAL": 128,
                         "MININUM_NUM_FLOAT": 2 ** (-126), "SCALAR_MUL1_FP32": 2 ** 50, "SCALAR_MUL2_FP32": 2 ** 26,
                         "BIT_RATIO_DICT": {"int32": 4, "float32": 4, "float16": 2, "uint8": 1, "int8": 1,
                                            "uint4": 0.5, "int4": 0.5}}


def _nonzero_divisor(helper: str, x_1, x_2) -> None:
    if isinstance(x_2, int) and x_2 == 0:
        raise IllegalOperand(f"{helper}({x_1}, {x_2}): division by zero (CANN error E62502)", op=helper,
                             operand="x_2", value=x_2, limit="!= 0", where=user_frame(), hint="pass a nonzero divisor")


def ceil(x_1, x_2):
    """``ceil(x_1 / x_2)`` (``util_common.ceil``; a zero divisor is refused as in CANN)."""
    _nonzero_divisor("impl.util.util_common.ceil", x_1, x_2)
    return (x_1 + x_2 - 1) // x_2


def align(x_1, x_2):
    """``x_1`` rounded up to a multiple of ``x_2`` (``util_common.align``)."""
    _nonzero_divisor("impl.util.util_common.align", x_1, x_2)
    return (x_1 + x_2 - 1) // x_2 * x_2


def lcm(param1, param2):
    """Least common multiple of two positive ints."""
    a, b = param1, param2
    while b:
        a, b = b, a % b
    return param1 * param2 // a


def floor_div_scalar(input_num, align_factor):
    """``input_num // align_factor`` (ints or TIK Scalars)."""
    return input_num // align_factor


def ceil_div_scalar(input_num, align_factor):
    """``ceil(input_num / align_factor)`` (ints or TIK Scalars)."""
    return (input_num + align_factor - 1) // align_factor


def div_align_scalar(input_num, align_factor, div_mode="ceil"):
    """``input_num`` aligned to ``align_factor``: up for ``div_mode == "ceil"``, else down."""
    if div_mode == "ceil":
        return ceil_div_scalar(input_num, align_factor) * align_factor
    return floor_div_scalar(input_num, align_factor) * align_factor


def _as_list(inputs):
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


def is_dynamic_input(_inputs) -> bool:
    """Whether any tensor dict's ``shape`` or ``ori_shape`` holds -1."""
    return any(-1 in d.get("shape") or -1 in d.get("ori_shape") for d in _as_list(_inputs))


def is_unknown_rank_input(input_list) -> bool:
    """Whether any tensor dict's ``shape`` or ``ori_shape`` holds -2."""
    return any(-2 in d.get("shape") or -2 in d.get("ori_shape") for d in _as_list(input_list))


def is_unknown(_inputs) -> bool:
    """Whether any tensor dict is dynamic (-1) or of unknown rank (-2)."""
    return is_dynamic_input(_inputs) or is_unknown_rank_input(_inputs)


def get_fused_format_str(format_char_list) -> list:
    """Every ordering of the format letters, as strings (``["N","C"]`` -> ``["NC", "CN"]``)."""
    return ["".join(p) for p in itertools.permutations(format_char_list, len(format_char_list))]


get_fused_str = get_fused_format_str


def is_support_fractal_z_input(_input) -> bool:
    """Whether a grouped (``sub_format``) 4-D NCHW-family tensor dict can be FRACTAL_Z: N divisible
    by the groups, and N per group by 16."""
    groups = _input.get("sub_format")
    if not groups:
        return False
    ori_format, shape = _input.get("ori_format"), _input.get("ori_shape")
    if len(ori_format) != len(shape) or ori_format not in get_fused_format_str(["N", "C", "H", "W"]):
        return False
    n_dim = shape[ori_format.index("N")]
    return n_dim % groups == 0 and (n_dim // groups) % 16 == 0


def is_support_fractal_z_inputs(_inputs) -> bool:
    """`is_support_fractal_z_input` for every dict, all with the first one's ``sub_format``."""
    first = _inputs[0].get("sub_format")
    if first is None:
        return False
    return all(is_support_fractal_z_input(d) and d.get("sub_format") == first for d in _inputs)


def is_same_group(_inputs) -> bool:
    """Whether every dict has the first one's (non-None) ``sub_format``."""
    first = _inputs[0].get("sub_format")
    return first is not None and all(d.get("sub_format") == first for d in _inputs)


def check_load3d_w_out_1_support() -> bool:
    """Whether load3d accepts an output width of 1 on the selected chip (Ascend310, Hi3796CV300CS)."""
    from .platform import get_soc_spec
    return get_soc_spec("SHORT_SOC_VERSION") in ("Ascend310", "Hi3796CV300CS")


#: ``util_common.get_mask_rep_stride``: bytes per element of the dtypes it accepts (CANN's 2-value
#: form: ``(mask, rep_stride)``; bfloat16, uint8 and the others are refused as CANN raises for them).
MASK_REP_STRIDE_BYTES = {"float16": 2, "int16": 2, "uint16": 2, "float32": 4, "int32": 4, "uint32": 4,
                         "int8": 1, "int64": 8, "uint64": 8}


def get_mask_rep_stride(src):
    """``(mask, rep_stride)`` of a whole-repeat vector op on ``src``'s dtype: ``mask`` = the elements in
    256 bytes (8 blocks), ``rep_stride`` = 8 blocks. A dtype outside `MASK_REP_STRIDE_BYTES` raises
    `UnknownName` (CANN raises RuntimeError)."""
    size = MASK_REP_STRIDE_BYTES.get(src.dtype)
    if size is None:
        raise UnknownName(f"get_mask_rep_stride: dtype {src.dtype!r} is not supported", operand="src",
                          op="impl.util.util_common.get_mask_rep_stride", value=src.dtype,
                          limit=sorted(MASK_REP_STRIDE_BYTES), where=user_frame(),
                          hint="pass a tensor of one of the listed dtypes (CANN's helper raises for any other)")
    mask = _BLOCK_BYTES * _REPEAT_BLOCKS // size
    return mask, mask // (_BLOCK_BYTES // size)


UTIL_COMMON_DSL = ("high_precision_floor", "tensor_mod_int", "uint8_int8_overflow_proc")

# --------------------------------------------------------------------------------------------------
# impl.util.util_tik_comm_func

#: ``util_tik_comm_func`` module constants.
UTIL_TIK_COMM_FUNC_CONSTANTS = {"SCALAR_MIN_FP32": 2 ** (-126), "SCALAR_MUL_FP32": 2 ** 50,
                                "SCALAR_MUL2_FP32": 2 ** 26, "MAX_REPEAT_NUM": 255, "MAX_INT64": 2 ** 64 - 1,
                                "REPEAT_NUM": 32, "SORT_LIST_NUM": 4, "PER_LOOP_NUM": 4096, "BLOCK_ELE_B32": 8,
                                "INVALID_VALUE": -1}
_MAX_REPEAT = UTIL_TIK_COMM_FUNC_CONSTANTS["MAX_REPEAT_NUM"]
_MOD = "impl.util.util_tik_comm_func"


def _static_len(helper: str, do_len) -> int:
    """The element count of a vector helper: CANN's helpers split it into instructions while tracing,
    so it must be a Python int."""
    if isinstance(do_len, bool) or not isinstance(do_len, int):
        raise IllegalOperand(f"{helper}: the element count must be a Python int (the helper splits it into "
                             f"instructions while the kernel is traced), got {do_len!r}", op=f"{_MOD}.{helper}",
                             operand="do_len", value=do_len, where=user_frame(),
                             hint="pass an int, or issue the vector instruction yourself for a run-time count")
    return do_len


def _chunks(count: int, per_repeat: int):
    """``(mask, repeat_times, repeats_before)`` instructions covering ``count`` elements: full
    repeats in runs of at most 255, then one repeat of the remainder."""
    full, tail = divmod(count, per_repeat)
    done = 0
    while full > 0:
        run = min(full, _MAX_REPEAT)
        yield per_repeat, run, done
        full -= run
        done += run
    if tail > 0:
        yield tail, 1, done


def _per_block(tensor) -> int:
    return _BLOCK_BYTES // get_data_size(tensor.dtype)


def ub_offset(input_ub):
    """Where an indexed multi-dim view starts, as a flat element index into its whole tensor (0 for a
    1-D view): TIK counts a flat index into a multi-dim view from the whole tensor's first element."""
    if len(input_ub.shape) in (0, 1):
        return 0
    off = input_ub.offset
    if isinstance(off, int):
        return off
    from .tik.scalar import Expr
    return Expr(off)


def _at(ub, flat):
    """``ub[flat]`` for a flat index the helper means as such (`ub_offset` + a count): TIK's rule, so the
    FlatIndexWarning a user's own one-index access of a multi-dim view gets is not raised for it."""
    from .tik.tensor import FlatIndexWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlatIndexWarning)
        return ub[flat]


@_skipped_in_dead_code
def tik_func_vector(tik_instance, _ub, value, dup_len) -> None:
    """``vector_dup`` of ``value`` into the first ``dup_len`` elements of ``_ub`` (a multi-dim view from
    where it starts, `ub_offset`, as the later CANN releases and this module's other helpers do)."""
    n = _static_len("tik_func_vector", dup_len)
    per_repeat = _per_block(_ub) * _REPEAT_BLOCKS
    start = ub_offset(_ub)
    for mask, repeat, done in _chunks(n, per_repeat):
        tik_instance.vector_dup(mask, _at(_ub, start + done * per_repeat), value, repeat, 1, 8)


def _single_with_scalar(tik_api, helper, dst_ub, src_ub, value, do_len, dst_blk, src_blk, dst_rep, src_rep):
    n = _static_len(helper, do_len)
    blk = _per_block(dst_ub)
    dst0, src0 = ub_offset(dst_ub), ub_offset(src_ub)
    for mask, repeat, done in _chunks(n, blk * _REPEAT_BLOCKS):
        tik_api(mask, _at(dst_ub, dst0 + done * blk * dst_rep), _at(src_ub, src0 + done * blk * src_rep), value,
                repeat, dst_blk, src_blk, dst_rep, src_rep)


@_skipped_in_dead_code
def tik_func_vmuls(tik_instance, dst_ub, src_ub, value, do_len, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8):
    """``dst = src * value`` over ``do_len`` elements (``vmuls`` split into repeats)."""
    _single_with_scalar(tik_instance.vmuls, "tik_func_vmuls", dst_ub, src_ub, value, do_len,
                        dst_blk, src_blk, dst_rep, src_rep)


@_skipped_in_dead_code
def tik_func_vadds(tik_instance, dst_ub, src_ub, value, do_len, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8):
    """``dst = src + value`` over ``do_len`` elements (``vadds`` split into repeats)."""
    _single_with_scalar(tik_instance.vadds, "tik_func_vadds", dst_ub, src_ub, value, do_len,
                        dst_blk, src_blk, dst_rep, src_rep)


@_skipped_in_dead_code
def tik_func_vmins(tik_instance, dst_ub, src_ub, value, do_len, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8):
    """``dst = min(src, value)`` over ``do_len`` elements (``vmins`` split into repeats; CANN's NMS
    files -- cnms_yolov3_ver, batch_multi_class_nms -- import it at the top)."""
    _single_with_scalar(tik_instance.vmins, "tik_func_vmins", dst_ub, src_ub, value, do_len,
                        dst_blk, src_blk, dst_rep, src_rep)


@_skipped_in_dead_code
def tik_func_vmaxs(tik_instance, dst_ub, src_ub, value, do_len, dst_blk=1, src_blk=1, dst_rep=8, src_rep=8):
    """``dst = max(src, value)`` over ``do_len`` elements (``vmaxs`` split into repeats)."""
    _single_with_scalar(tik_instance.vmaxs, "tik_func_vmaxs", dst_ub, src_ub, value, do_len,
                        dst_blk, src_blk, dst_rep, src_rep)


#: ``tik_func_vcomple`` function names and the TIK binary op each issues.
VCOMPLE_FUNCTIONS = ("vmin", "vmax", "vmul", "vadd", "vsub", "vdiv", "vor")


@_skipped_in_dead_code
def tik_func_vcomple(tik_instance, function, out_dst, src0, src1, copy_num, dst_blk=1, src0_blk=1, src1_blk=1,
                     dst_rep=8, src0_rep=8, src1_rep=8) -> None:
    """Binary vector op ``function`` (one of `VCOMPLE_FUNCTIONS`) over ``copy_num`` elements. ``"vdiv"``
    on a chip without ``tik.vdiv`` computes ``src0 * vrec(src1)`` with two Newton steps, as CANN does."""
    if function not in VCOMPLE_FUNCTIONS:
        raise UnknownName(f"tik_func_vcomple: unknown function {function!r}", op=f"{_MOD}.tik_func_vcomple",
                          operand="function", value=function, limit=list(VCOMPLE_FUNCTIONS), where=user_frame(),
                          hint="pass function as one of " + ", ".join(repr(f) for f in VCOMPLE_FUNCTIONS))
    n = _static_len("tik_func_vcomple", copy_num)
    blk = _per_block(out_dst)
    from .platform import api_check_support
    if function == "vdiv" and not api_check_support("tik.vdiv"):
        from .tik import scope_ubuf
        with tik_instance.new_stmt_scope():
            rec = tik_instance.Tensor(src0.dtype, ((n + blk - 1) // blk * blk,), name="vrec_data", scope=scope_ubuf)
            tik_func_vrec(tik_instance, rec, src1, n, src_blk=src1_blk, src_rep=src1_rep)
            tik_func_vcomple(tik_instance, "vmul", out_dst, src0, rec, n, dst_blk=dst_blk, src0_blk=src0_blk,
                             dst_rep=dst_rep, src0_rep=src0_rep)
        return
    api = getattr(tik_instance, function)
    d0, s0, s1 = ub_offset(out_dst), ub_offset(src0), ub_offset(src1)
    for mask, repeat, done in _chunks(n, blk * _REPEAT_BLOCKS):
        api(mask, _at(out_dst, d0 + done * blk * dst_rep), _at(src0, s0 + done * blk * src0_rep),
            _at(src1, s1 + done * blk * src1_rep), repeat, dst_blk, src0_blk, src1_blk, dst_rep, src0_rep, src1_rep)


@_skipped_in_dead_code
def tik_fuc_vrec_newton(tik_instance, vrec_ub, origin_ub, do_len, newton_iteration=2, block_num=16,
                        vrec_blk=1, origin_blk=1, vrec_rep=8, origin_rep=8) -> None:
    """Refine a ``vrec`` result in place: ``newton_iteration`` times ``r = r * (2 - r * x)``
    (CANN's spelling ``tik_fuc``)."""
    from .tik import scope_ubuf
    n = _static_len("tik_fuc_vrec_newton", do_len)
    size = (n + block_num - 1) // block_num * block_num
    with tik_instance.new_stmt_scope():
        t1 = tik_instance.Tensor(vrec_ub.dtype, (size,), name="vrec_newton_1", scope=scope_ubuf)
        t2 = tik_instance.Tensor(vrec_ub.dtype, (size,), name="vrec_newton_2", scope=scope_ubuf)
        for _ in range(newton_iteration):
            tik_func_vcomple(tik_instance, "vmul", t1, vrec_ub, origin_ub, n, src0_blk=vrec_blk, src0_rep=vrec_rep,
                             src1_blk=origin_blk, src1_rep=origin_rep)
            tik_func_vmuls(tik_instance, t2, t1, -1, n)
            tik_func_vadds(tik_instance, t1, t2, 2, n)
            tik_func_vcomple(tik_instance, "vmul", vrec_ub, t1, vrec_ub, n, dst_blk=vrec_blk, dst_rep=vrec_rep,
                             src1_blk=vrec_blk, src1_rep=vrec_rep)


@_skipped_in_dead_code
def tik_func_vrec(tik_instance, dst_ub, src_ub, do_len, newton_iteration=2, dst_blk=1, src_blk=1, dst_rep=8,
                  src_rep=8) -> None:
    """``dst = 1 / src`` over ``do_len`` elements: ``vrec`` per instruction, each refined by
    `tik_fuc_vrec_newton`."""
    n = _static_len("tik_func_vrec", do_len)
    blk = _per_block(dst_ub)
    d0, s0 = ub_offset(dst_ub), ub_offset(src_ub)
    for mask, repeat, done in _chunks(n, blk * _REPEAT_BLOCKS):
        dst, src = _at(dst_ub, d0 + done * blk * dst_rep), _at(src_ub, s0 + done * blk * src_rep)
        tik_instance.vrec(mask, dst, src, repeat, dst_blk, src_blk, dst_rep, src_rep)
        tik_fuc_vrec_newton(tik_instance, dst, src, mask * repeat,
                            newton_iteration=newton_iteration, block_num=blk, vrec_blk=dst_blk, origin_blk=src_blk,
                            vrec_rep=dst_rep, origin_rep=src_rep)


@_skipped_in_dead_code
def tik_func_vconcat(tik_instance, proposals_ub, _ub, trans_repeat, mode) -> None:
    """``vconcat(proposals_ub, _ub, trans_repeat, mode)``."""
    tik_instance.vconcat(proposals_ub, _ub, trans_repeat, mode)


@_skipped_in_dead_code
def tik_func_vextract(tik_instance, proposals_ub, _ub, trans_repeat, mode) -> None:
    """``vextract(_ub, proposals_ub, trans_repeat, mode)`` (proposals into ``_ub``)."""
    tik_instance.vextract(_ub, proposals_ub, trans_repeat, mode)


#: ``tik_func_vconv`` conversions: (src, dst) -> (dst repeat stride, src repeat stride, deqscale), 64
#: elements per repeat. f32->s32 and s32->f32 go through float16 on chips without the direct vconv.
VCONV_STRIDES = {("float32", "int32"): (8, 8, None), ("float32", "float16"): (4, 8, None),
                 ("float16", "int32"): (8, 4, None), ("int32", "float16"): (4, 8, 1.0),
                 ("float16", "float32"): (8, 4, None), ("int32", "float32"): (8, 8, None),
                 # the later CANN releases' pairs (64 elements per repeat: strides in 32-byte blocks)
                 ("int16", "float16"): (4, 4, None), ("int8", "float16"): (4, 2, None),
                 ("uint8", "float16"): (4, 2, None), ("float32", "bfloat16"): (4, 8, None),
                 ("bfloat16", "float32"): (8, 4, None)}


@_skipped_in_dead_code
def tik_func_vconv(tik_instance, dst_ub, src_ub, do_len, mode="", mini_mid_ub=None) -> None:
    """``vconv`` of ``do_len`` elements between the dtype pairs of `VCONV_STRIDES` (other pairs do
    nothing, as in CANN). ``mode`` is the TIK round mode."""
    from .platform import api_check_support
    from .tik import scope_ubuf
    n = _static_len("tik_func_vconv", do_len)
    pair = (src_ub.dtype, dst_ub.dtype)
    if pair not in VCONV_STRIDES:
        return
    if pair == ("float32", "int32") and not api_check_support("tik.vconv", "f322s32r"):
        _vconv_f32_s32_via_f16(tik_instance, dst_ub, src_ub, n, mode, mini_mid_ub)
        return
    if pair == ("int32", "float32") and not api_check_support("tik.vconv", "s322f32"):
        with tik_instance.new_stmt_scope():
            mid = tik_instance.Tensor("float16", ((n + 15) // 16 * 16,), name="tmp_fp16_ub", scope=scope_ubuf)
            tik_func_vconv(tik_instance, mid, src_ub, n)
            tik_func_vconv(tik_instance, dst_ub, mid, n)
        return
    dst_rep, src_rep, deq = VCONV_STRIDES[pair]
    d0, s0 = ub_offset(dst_ub), ub_offset(src_ub)
    for mask, repeat, done in _chunks(n, 64):
        tik_instance.vconv(mask, mode, _at(dst_ub, d0 + done * 64), _at(src_ub, s0 + done * 64), repeat, 1, 1,
                           dst_rep, src_rep, deqscale=deq)


def _vconv_f32_s32_via_f16(tik_instance, dst_ub, src_ub, n, mode, mini_mid_ub) -> None:
    """float32 -> int32 through float16 (chips without f322s32). For ``"floor"`` CANN corrects the
    result down by one where the float16 rounding went above the float32 value: the error
    ``max(int_as_f32 - x, 0)`` is clipped to 2**-126 and scaled by 2**126 to exactly 0 or 1."""
    from .tik import scope_ubuf
    size = (n + 15) // 16 * 16
    with tik_instance.new_stmt_scope():
        mid16 = tik_instance.Tensor("float16", (size,), name="tmp_fp16_ub", scope=scope_ubuf)
        tik_func_vconv(tik_instance, mid16, src_ub, n)
        tik_func_vconv(tik_instance, dst_ub, mid16, n, mode)
        if mode != "floor":
            return
        as_f32 = mini_mid_ub if mini_mid_ub is not None else \
            tik_instance.Tensor("float32", (size,), name="tmp_fp32_ub", scope=scope_ubuf)
        err = tik_instance.Tensor("float32", (size,), name="tmp_fp32_ub_error", scope=scope_ubuf)
        tik_func_vconv(tik_instance, mid16, dst_ub, n)
        tik_func_vconv(tik_instance, as_f32, mid16, n)
        tik_func_vcomple(tik_instance, "vsub", err, as_f32, src_ub, n)
        zero = tik_instance.Tensor("float32", (8,), name="tmp_zero", scope=scope_ubuf)
        tiny = tik_instance.Tensor("float32", (8,), name="tmp_minest_fp32", scope=scope_ubuf)
        tik_instance.vmuls(8, zero, zero, 0.0, 1, 1, 1, 8, 8)
        tik_instance.vector_dup(8, tiny, UTIL_TIK_COMM_FUNC_CONSTANTS["SCALAR_MIN_FP32"], 1, 1, 1)
        tik_func_vcomple(tik_instance, "vmax", err, zero, err, n, src0_rep=0, src0_blk=0)
        tik_func_vcomple(tik_instance, "vmin", err, tiny, err, n, src0_rep=0, src0_blk=0)
        for factor in ("SCALAR_MUL_FP32", "SCALAR_MUL_FP32", "SCALAR_MUL2_FP32"):
            tik_func_vmuls(tik_instance, err, err, UTIL_TIK_COMM_FUNC_CONSTANTS[factor], n)
        tik_func_vcomple(tik_instance, "vsub", as_f32, as_f32, err, n)
        tik_func_vconv(tik_instance, mid16, as_f32, n)
        tik_func_vconv(tik_instance, dst_ub, mid16, n, "round")


def ceil_div(int1, int2):
    """``ceil(int1 / int2)`` for ints or TIK Scalars."""
    return (int1 + int2 - 1) // int2


def ceil_align(count, base):
    """``count`` rounded up to a multiple of ``base``."""
    return ceil_div(count, base) * base


def floor_align(count, base):
    """``count`` rounded down to a multiple of ``base``."""
    return count // base * base


def _check_move(helper: str, dst, src, dst_scope: str, src_scope: str) -> None:
    where = user_frame()
    for role, t, want in (("dst", dst, dst_scope), ("src", src, src_scope)):
        if t.scope != want:
            raise IllegalOperand(f"{helper}: {role} must be in {want}, but it is in {t.scope}", op=f"{_MOD}.{helper}",
                                 operand=role, value=t.scope, limit=want, where=where,
                                 hint=f"pass a {role} tensor declared in scope {want}")
    if dst.dtype != src.dtype:
        raise IllegalOperand(f"{helper}: dst.dtype {dst.dtype} != src.dtype {src.dtype}", op=f"{_MOD}.{helper}",
                             operand="dst", value=dst.dtype, limit=src.dtype, where=where,
                             hint=f"pass dst and src of one dtype (convert with vec_conv first, or declare dst as "
                                  f"{src.dtype})")


def _burst_move(tik_instance, helper, dst, src, count, burst, repeat, src_stride, dst_stride, dst_scope,
                src_scope) -> None:
    """`gm2ub` / `ub2gm`: ``repeat`` bursts of ``ceil(count / block elements)`` blocks (or ``burst``)."""
    _check_move(helper, dst, src, dst_scope, src_scope)
    tik_instance.data_move(dst, src, 0, repeat, ceil_div(count, _per_block(src)) if burst is None else burst,
                           src_stride, dst_stride)


@_skipped_in_dead_code
def ub2ub(tik_instance, dst, src, count, tail_overlap=True) -> None:
    """Copy ``count`` elements UB -> UB. ``tail_overlap=True``: whole blocks, rounding up (up to a
    block past ``count`` is written); else whole blocks then the remaining elements one by one."""
    from .tik import scope_ubuf
    _check_move("ub2ub", dst, src, scope_ubuf, scope_ubuf)
    per_block = _per_block(src)
    if tail_overlap:
        tik_instance.data_move(dst, src, 0, 1, ceil_div(count, per_block), 0, 0)
        return
    bursts = count // per_block
    with tik_instance.if_scope(bursts != 0):
        tik_instance.data_move(dst, src, 0, 1, bursts, 0, 0)
    with tik_instance.for_range(per_block * bursts, count) as i:
        dst[i].set_as(src[i])


@_skipped_in_dead_code
def ub2gm(tik_instance, dst, src, count, burst=None, repeat=1, src_stride=0, dst_stride=0) -> None:
    """Copy ``count`` elements UB -> GM: ``repeat`` bursts (later CANN's keywords; default one) of
    ``ceil(count / block elements)`` blocks (or ``burst`` blocks) with the given block strides."""
    from .tik import scope_gm, scope_ubuf
    _burst_move(tik_instance, "ub2gm", dst, src, count, burst, repeat, src_stride, dst_stride, scope_gm, scope_ubuf)


@_skipped_in_dead_code
def gm2ub(tik_instance, dst, src, count, burst=None, repeat=1, src_stride=0, dst_stride=0) -> None:
    """Copy ``count`` elements GM -> UB: ``repeat`` bursts (later CANN's keywords; default one) of
    ``ceil(count / block elements)`` blocks (or ``burst`` blocks) with the given block strides."""
    from .tik import scope_gm, scope_ubuf
    _burst_move(tik_instance, "gm2ub", dst, src, count, burst, repeat, src_stride, dst_stride, scope_ubuf, scope_gm)


# CANN's v2-sort (vsort32 / vmrgsort) helpers of the NMS operators (cnms_yolov3_ver, batch_multi_class_nms).

def _sort_len(helper: str, operand: str, value, ok: bool, rule: str) -> None:
    """Refuse a size the helper splits while tracing: not a Python int, or breaking ``rule``."""
    if isinstance(value, bool) or not isinstance(value, int) or not ok:
        raise IllegalOperand(f"{helper}: {operand} must be a Python int {rule}, got {value!r}",
                             op=f"{_MOD}.{helper}", operand=operand, value=value, limit=rule, where=user_frame(),
                             hint="pass a trace-time int that satisfies the rule (CANN's helper raises RuntimeError)")


@_skipped_in_dead_code
def sort_score_idx_by_desc(tik_instance, score_idx, score_idx_out, do_lens, level=1, dtype="float16"):
    """Merge runs of score-descending v2 sort records (``vsort32`` output) of ``score_idx`` into one
    descending run of ``do_lens`` elements, left in ``score_idx_out``; returns ``INVALID_VALUE`` (-1).

    As CANN's helper: at ``level`` a run is ``32 * h * 4 ** level`` elements (``h`` = 2 for ``dtype``
    ``"float32"``, else 1; ``do_lens`` must be a multiple of it) holding ``run // (4 // h)`` records; each
    group of four runs is merged by one ``vmrgsort`` (non-exhausted, repeat 1) into the other tensor, a
    last group of two or three runs likewise, a single last run copied (`ub2ub`). While a group is
    shorter than ``do_lens`` the level goes up and the two tensors swap roles; at the last level an even
    level copies the merged result back into the other tensor, so ``score_idx_out`` ends with it and
    ``score_idx`` is scratch. Records and tie order: ``vmrgsort`` (migration_guide/tik_vector.md §5b)."""
    helper = "sort_score_idx_by_desc"
    _sort_len(helper, "level", level, isinstance(level, int) and level >= 0, ">= 0")
    half = 2 if dtype == "float32" else 1
    src, dst = score_idx, score_idx_out
    lists = UTIL_TIK_COMM_FUNC_CONSTANTS["SORT_LIST_NUM"]
    while True:
        run = UTIL_TIK_COMM_FUNC_CONSTANTS["REPEAT_NUM"] * half * lists ** level
        records = run // (lists // half)
        group = run * lists
        _sort_len(helper, "do_lens", do_lens, isinstance(do_lens, int) and do_lens % run == 0,
                  f"that is a multiple of 32 * {half} * 4 ** level = {run} (level {level})")
        groups, tail = divmod(do_lens, group)
        if groups > 0:
            with tik_instance.for_range(0, groups) as g:
                base = g * group
                tik_instance.vmrgsort(dst[base], [src[base + k * run:base + (k + 1) * run] for k in range(lists)],
                                      [records] * lists, False, 1)
        if tail:
            base = groups * group
            ways = tail // run
            if ways == 1:
                ub2ub(tik_instance, dst[base], src[base], tail)
            else:
                tik_instance.vmrgsort(dst[base], [src[base + k * run:base + (k + 1) * run] for k in range(ways)],
                                      [records] * ways, False, 1)
        if group >= do_lens:
            if level % 2 == 0:
                ub2ub(tik_instance, src, dst, do_lens)
            return UTIL_TIK_COMM_FUNC_CONSTANTS["INVALID_VALUE"]
        level += 1
        src, dst = dst, src


@_skipped_in_dead_code
def init_index(tik_instance, src, index, offset, do_lens, dtype="float16") -> None:
    """Fill the uint32 UB tensor ``index`` with ``do_lens`` indices for ``vsort32`` from the GM index
    table ``src`` (``do_lens`` a Python int, a multiple of 8, at most 4096). ``dtype`` ``"float16"``:
    copies ``src[offset:offset + do_lens]``; any other: copies ``src[0:do_lens]`` and adds ``offset``
    (int32 ``vadds`` of ``do_lens // 64`` whole repeats, as CANN: a partial last repeat is not added)."""
    helper = "init_index"
    per_loop = UTIL_TIK_COMM_FUNC_CONSTANTS["PER_LOOP_NUM"]
    block = UTIL_TIK_COMM_FUNC_CONSTANTS["BLOCK_ELE_B32"]
    _sort_len(helper, "do_lens", do_lens, isinstance(do_lens, int) and do_lens % block == 0 and do_lens <= per_loop,
              f"that is a multiple of {block} and at most {per_loop}")
    bursts = do_lens // block
    if dtype == "float16":
        tik_instance.data_move(index, src[offset], 0, 1, bursts, 0, 0)
        return
    from .tik import scope_ubuf
    with tik_instance.new_stmt_scope():
        base = tik_instance.Tensor("int32", (do_lens,), name="init_index", scope=scope_ubuf)
        shifted = tik_instance.Tensor("int32", (do_lens,), name="tmp", scope=scope_ubuf)
        src_i32 = src.reinterpret_cast_to("int32")
        tik_instance.data_move(base, src_i32, 0, 1, bursts, 0, 0)
        mask, _ = get_mask_rep_stride(src_i32)
        tik_instance.vadds(mask, shifted, base, offset, do_lens // mask, 1, 1, 8, 8)
        tik_instance.data_move(index, shifted, 0, 1, bursts, 0, 0)


#: Named choice (CANN fidelity): CANN's ``gm2ub_for_vsort32`` (and the ``_v300`` copy inside
#: cnms_yolov3_ver) fills the element tail ``dst[whole + i]`` from ``src[batch, class, box + i]``, i.e.
#: from the START of the run, not from ``box + whole + i``; a kernel calling CANN's helper gets that on
#: the device, so the simulator does the same (evident intent differs: open item, migration_guide/platform.md).
GM2UB_VSORT32_TAIL_FROM_START = True


@_skipped_in_dead_code
def gm2ub_for_vsort32(tik_instance, src, idx_list, dst, do_lens) -> None:
    """Copy ``do_lens`` scores of the 3-D GM tensor ``src`` from ``src[batch, class, box]``
    (``idx_list``) into the UB tensor ``dst``: whole blocks by one ``data_move``, then the remaining
    ``do_lens % block`` elements one by one, read as CANN reads them (`GM2UB_VSORT32_TAIL_FROM_START`)
    (``do_lens`` an int or a Scalar; nothing past ``do_lens`` is written)."""
    per_block = _per_block(src)
    bursts = do_lens // per_block
    tail = do_lens % per_block
    batch, cls, box = idx_list
    with tik_instance.if_scope(bursts > 0):
        tik_instance.data_move(dst, src[batch, cls, box], 0, 1, bursts, 0, 0)
    with tik_instance.for_range(0, tail) as i:
        first = box if GM2UB_VSORT32_TAIL_FROM_START else box + bursts * per_block
        dst[bursts * per_block + i].set_as(src[batch, cls, first + i])


class OpBase:
    """CANN's base class of dynamic-shape TIK operators: a ``Tik`` instance, the chip's core count and
    UB size, GM tensors from tensor dicts (`op_init_gm`), tiling-key dispatch (`regist_compute`,
    `run_compute`, `op_run_compute`) and `op_build_cce`."""

    def __init__(self, kernel_name=None):
        from .platform import get_soc_spec
        from .tik import Tik
        self.tik_instance = Tik()
        self.core_nums = get_soc_spec("CORE_NUM")
        self.ub_size_bytes = get_soc_spec("UB_SIZE")
        self.input_gm_list = []
        self.output_gm_list = []
        self.tiling_gm = None
        self.unknown_max_shape = (UTIL_TIK_COMM_FUNC_CONSTANTS["MAX_INT64"],)
        self.kernel_name = kernel_name          # later CANN takes it here (earlier: set by the subclass)
        self.opt_config = {"out_of_bound_sync_check": True, "enable_const_fold": True}
        self.tiling_key = None
        self.mode_compute = {}

    def op_init_gm(self, input_dict_list, output_dict_list, tiling_info=None, is_fused_1d=False):
        """GM tensors for the input and output dicts (None entries skipped; unknown shapes get
        `unknown_max_shape`; names from ``param_name`` or ``input_gm_<i>`` / ``output_gm_<i>``;
        ``is_atomic_add`` honoured), and ``tiling_gm`` from ``tiling_info`` (``shape``, ``dtype``)."""
        from .tik import scope_gm

        def make(d, kind, i):
            if is_unknown([d]):
                shape = self.unknown_max_shape
            else:
                shape = d.get("shape")
                if is_fused_1d:
                    total = 1
                    for dim in shape:
                        total *= dim
                    shape = [total]
            name = d.get("param_name", f"{kind}_gm_{i}")
            return self.tik_instance.Tensor(d.get("dtype"), shape, name=name, scope=scope_gm,
                                            is_atomic_add=d.get("is_atomic_add", False))

        for i, d in enumerate(input_dict_list):
            if d is not None:
                self.input_gm_list.append(make(d, "input", i))
        for i, d in enumerate(output_dict_list):
            if d is not None:
                self.output_gm_list.append(make(d, "output", i))
        if tiling_info is not None:
            self.tiling_gm = self.tik_instance.Tensor(tiling_info.get("dtype"), tiling_info.get("shape"),
                                                      name="tiling_gm", scope=scope_gm)

    def op_build_cce(self):
        """``BuildCCE`` with the GM lists, ``tiling_gm`` as flowtable and `opt_config`."""
        flowtable = [self.tiling_gm] if self.tiling_gm is not None else None
        return self.tik_instance.BuildCCE(kernel_name=self.kernel_name, inputs=self.input_gm_list,
                                          flowtable=flowtable, outputs=self.output_gm_list, config=self.opt_config)

    def regist_compute(self, tiling_key, tiling_func, *var_tuple, **var_key_value):
        """Record ``tiling_func(*var_tuple, **var_key_value)`` for ``tiling_key``, classified by the
        ``compute_classify`` keyword (default ``"default"``; the keywords are passed on to the call).
        Named choice: CANN's lookup reads the keyword ``"default"`` instead (a KeyError); the evident
        intent is modelled."""
        classify = var_key_value.get("compute_classify", "default")
        self.mode_compute.setdefault(classify, {})[tiling_key] = [tiling_func, var_tuple, var_key_value]

    def run_compute(self, tiling_key, compute_classify=None):
        """Each recorded compute inside ``if_scope(tiling_key == key)``."""
        for classify, computes in self.mode_compute.items():
            if compute_classify is not None and classify != compute_classify:
                continue
            for key, (func, args, kwargs) in computes.items():
                with self.tik_instance.if_scope(tiling_key == key):
                    with self.tik_instance.new_stmt_scope():
                        func(*args, **kwargs)

    def tiling_args(self):
        """Read the tiling arguments (subclasses override)."""

    def core_scedule_args(self, core_idx):
        """Per-core parameters (subclasses override; CANN's spelling)."""

    def op_run_compute(self):
        """One loop over the cores: `tiling_args`, `core_scedule_args`, `run_compute`."""
        with self.tik_instance.for_range(0, self.core_nums, block_num=self.core_nums) as core_index:
            self.tiling_args()
            self.core_scedule_args(core_index)
            self.run_compute(self.tiling_key)


def dsl_helpers(module: str, names) -> dict:
    """``{name: refusing callable}`` for a module's TBE-DSL helpers."""
    return {n: dsl_only(f"{module}.{n}") for n in names}
