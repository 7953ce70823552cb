"""Legacy TIK ``fixpipe`` as an independent reference model (plain numpy, no simulator state).

``tik-compare-fixpipe`` runs a TIK kernel and, for every ``fixpipe`` call, compares what
this model writes with what the PTO FIXPIPE lowering (``pto_core/ops/fixpipe.py``) writes
from the same L0C contents. To make that a comparison of two implementations, this module
is written only from the legacy documentation (seed ``002``: the TIK ``fixpipe`` reference
page; ``tik_api.md`` §8.0, §8.2-§8.4, §10.1-§10.4, §11, Appendix B) and shares no code
with the PTO lowering or with `pto_core.numerics`: every conversion below is a numpy cast
whose rounding is stated next to it. Interpretation choices and their sources:
``migration_guide/legacy_fixpipe.md``.

The instruction (``fixpipe(dst, src, cburst_num, burst_len, dst_stride, src_stride,
extend_params)``) moves ``cburst_num`` blocks of 16 output channels from L0C to ``dst``::

    howo       = burst_len * 32 / sizeof(src) / 16        rows per block (burst_len in 32 B of src)
    round_howo = ceil(howo / 16) * 16                     rows per block in L0C
    src block c: element c * (round_howo*16 + src_stride*256) of src   (src_stride: 256-element units)
    dst block c: element c * (howo*16 + dst_stride*32/sizeof(dst)) of dst  (dst_stride: 32 B units)
    dst[c, p, j] = relu(quantize(src[c, p, j] + bias[c*16 + j] + ewa[c, p, j]))   for p < howo

Rows ``howo .. round_howo-1`` of each L0C block are dropped; the ``dst_stride`` gaps are not
written. `legacy_fixpipe` returns the destination elements from the dst operand's start
element to its last written element, with a mask of the written ones.

Operands are numpy arrays: ``src`` the L0C tensor as declared (any shape, row-major), the
``bias`` / ``element-wise-add`` / ``mode_param`` tensors likewise; wrap one in `LegacyTensor`
to give the TIK view's start element (``t[offset]``) or its scope. A ``mode_param``
*immediate* is a Python ``float``; a TIK *Scalar* is a numpy scalar (``np.float16(0.5)``).
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from pto_core.dtypes import DType, DTypeLike, dtype
from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnknownName, UnsupportedOp
from pto_core.targets import get_target

from .data.tik_api_map import ONLY_TIK_API_MAP
from .tik.scalar import static_bool

OP = "tik.fixpipe"

#: Documented ranges [seed 002 Table 1; tik_api.md §8.4].
CBURST_NUM_RANGE = (1, 4095)
BURST_LEN_RANGE = (1, 65535)
STRIDE_RANGE = (0, 65535)

BLOCK_BYTES = 32          # unit of burst_len and dst_stride
CHANNELS = 16             # output channels per block (N0 / C0 of the cube result)
SRC_STRIDE_UNIT = 256     # elements per src_stride unit (one 16x16 fractal) [§8.4]
L1_ALIGN = 32             # bias / element-wise-add start alignment in L1, bytes
#: L0C operand alignment in bytes by element size: one 16x16 fractal [tik_api.md §1.4, §8.4].
L0C_ALIGN = {4: 1024, 2: 512}

EXTEND_KEYS = ("bias", "element-wise-add", "quantize_params", "relu")
#: quantize mode -> (src, dst) canonical dtypes it converts [seed 002 Table 2].
QUANT_MODES = {"int322fp16": ("s32", "f16"), "fp322fp16": ("f32", "f16")}
CORE_TYPES = ("AiCore", "VectorCore")
#: SoCs whose fixpipe may also write UB [tik_api.md §8.4].
DST_UB_SOCS = ("Ascend310B", "Ascend610Lite", "Hi3796CV300CS", "SD3403")
#: SoCs with the Hi3796CS/SD3403 restrictions: no relu key, no bias/element-wise-add on
#: f32f16/s32f16, deqscale tensor float32 [2*Cout] [tik_api.md §8.4].
HISI_SOCS = ("Hi3796CV300CS", "SD3403")

_LEGACY_DTYPES = ("f32", "s32", "f16")


class ReservedArgumentWarning(UserWarning):
    """A documented-as-reserved argument has a non-default value (``src_stride != 0``)."""


# --------------------------------------------------------------------------------------
# Operands and the checked call
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LegacyTensor:
    """A TIK tensor operand: the declared tensor's contents, the view's start element and scope.

    Attributes:
        data: the whole declared tensor (any shape; read flat, row-major).
        offset: the operand's start element within ``data`` (TIK ``t[offset]``).
        scope: ``"l1"``, ``"l0c"``, ``"ub"``, ``"gm"``; None means "the scope the operand requires".
    """

    data: np.ndarray
    offset: int = 0
    scope: Optional[str] = None


@dataclass(frozen=True)
class FixpipeGeometry:
    """Where the legacy instruction reads and writes, in elements.

    Attributes:
        src_dtype / dst_dtype: canonical dtype names (``"f32"``, ``"s32"``, ``"f16"``).
        howo: valid rows per block (``burst_len * 32 / sizeof(src) / 16``).
        round_howo: rows per block in L0C (``howo`` rounded up to 16).
        src_block: elements between the starts of consecutive src blocks
            (``round_howo*16 + src_stride*256``).
        dst_gap: elements skipped between consecutive dst blocks (``dst_stride*32/sizeof(dst)``).
        dst_block: elements between the starts of consecutive dst blocks (``howo*16 + dst_gap``).
        src_extent: src elements the instruction needs from its start element.
        dst_extent: dst elements from the start element to the last written one.
    """

    src_dtype: str
    dst_dtype: str
    cburst_num: int
    burst_len: int
    dst_stride: int
    src_stride: int
    howo: int
    round_howo: int
    src_block: int
    dst_gap: int
    dst_block: int
    src_extent: int
    dst_extent: int

    def src_index(self) -> np.ndarray:
        """``[cburst_num, howo, 16]`` element offsets of the rows read, relative to the src start."""
        return _block_index(self.cburst_num, self.howo, self.src_block)

    def dst_index(self) -> np.ndarray:
        """``[cburst_num, howo, 16]`` element offsets written, relative to the dst start."""
        return _block_index(self.cburst_num, self.howo, self.dst_block)

    def src_blocks(self, window: np.ndarray) -> np.ndarray:
        """Read-only ``[cburst_num, howo, 16]`` strided view of the rows read from a src window."""
        return _blocks_view(window, self.cburst_num, self.howo, self.src_block, writeable=False)

    def dst_blocks(self, window: np.ndarray, writeable: bool = False) -> np.ndarray:
        """``[cburst_num, howo, 16]`` strided view of the written elements of a dst window."""
        return _blocks_view(window, self.cburst_num, self.howo, self.dst_block, writeable=writeable)


def _block_index(blocks: int, rows: int, block_stride: int) -> np.ndarray:
    c = np.arange(blocks, dtype=np.int64)[:, None, None] * block_stride
    p = np.arange(rows, dtype=np.int64)[None, :, None] * CHANNELS
    return c + p + np.arange(CHANNELS, dtype=np.int64)[None, None, :]


def _blocks_view(window: np.ndarray, blocks: int, rows: int, block_stride: int, *, writeable: bool) -> np.ndarray:
    """Zero-copy ``[blocks, rows, 16]`` view of a contiguous 1-D window (blocks never overlap:
    ``block_stride >= rows*16``)."""
    if window.ndim != 1 or not window.flags.c_contiguous or window.size < (blocks - 1) * block_stride + rows * CHANNELS:
        raise OutOfBounds(f"a {window.ndim}-D window of {window.size} elements does not hold the fixpipe footprint "
                          f"of {(blocks - 1) * block_stride + rows * CHANNELS} elements", op=OP, operand="window",
                          value=window.size, limit=(blocks - 1) * block_stride + rows * CHANNELS,
                          hint="pass a contiguous 1-D window starting at the operand's start element")
    item = window.itemsize
    return np.lib.stride_tricks.as_strided(window, shape=(blocks, rows, CHANNELS),
                                           strides=(block_stride * item, CHANNELS * item, item), writeable=writeable)


@dataclass(frozen=True, eq=False)
class FixpipePlan:
    """A checked ``fixpipe`` call: everything `legacy_fixpipe` needs, already normalised.

    Attributes:
        chip: the API-table key (short SoC version + core type, ``"Ascend310AiCore"``).
        geometry: see `FixpipeGeometry`.
        src: the flat source window: ``geometry.src_extent`` elements from the src start element.
        bias: ``[cburst_num*16]`` bias values (src dtype) or None.
        ewa: ``[cburst_num, round_howo, 16]`` element-wise-add values (src dtype) or None.
        quant_mode: ``"fp322fp16"``, ``"int322fp16"`` or None.
        scale_kind: ``"immediate"``, ``"scalar"``, ``"tensor"`` (int322fp16) or None.
        scale: the f16 scale, shape ``()`` (immediate/Scalar) or ``(16,)`` (tensor), or None.
        relu: whether ReLU runs.
        overflow_mode: ``"saturation"`` or ``"inf_nan"`` (float results).
        notes: documented caveats this call touches (reserved arguments, rounded immediates).
    """

    chip: str
    geometry: FixpipeGeometry
    src: np.ndarray
    bias: Optional[np.ndarray]
    ewa: Optional[np.ndarray]
    quant_mode: Optional[str]
    scale_kind: Optional[str]
    scale: Optional[np.ndarray]
    relu: bool
    overflow_mode: str
    notes: tuple = field(default=())


@dataclass(frozen=True, eq=False)
class LegacyFixpipeResult:
    """What the legacy instruction writes, relative to the dst operand's start element.

    Attributes:
        values: 1-D array (dst storage dtype) of length ``geometry.dst_extent``; elements
            where ``written`` is False are 0 and mean nothing.
        written: bool mask of the elements the instruction writes (False in dst_stride gaps).
        plan: the checked call.
    """

    values: np.ndarray
    written: np.ndarray
    plan: FixpipePlan

    @property
    def geometry(self) -> FixpipeGeometry:
        return self.plan.geometry

    def blocks(self) -> np.ndarray:
        """The written values as ``[cburst_num, howo, 16]`` (conv2d ``[cout_blocks, howo, 16]``,
        matmul ``[N1, m, N0]``)."""
        return self.geometry.dst_blocks(self.values)

    def write_into(self, dst: np.ndarray, offset: int = 0) -> np.ndarray:
        """A flat copy of ``dst`` with the written elements stored from element ``offset``."""
        out = np.array(dst, copy=True).reshape(-1)
        idx = offset + np.flatnonzero(self.written)
        if idx.size and idx[-1] >= out.size:
            raise OutOfBounds(f"dst has {out.size} elements, the fixpipe writes up to element {idx[-1]}",
                              op=OP, operand="dst", value=int(idx[-1]), limit=out.size,
                              hint="pass the whole declared dst tensor and the operand's start element")
        out[idx] = self.values[self.written].astype(out.dtype, copy=False)
        return out


# --------------------------------------------------------------------------------------
# Argument checks (one function per documented rule family)
# --------------------------------------------------------------------------------------


def _operand(value: Any, name: str) -> LegacyTensor:
    if isinstance(value, LegacyTensor):
        t = value
    elif isinstance(value, np.ndarray) and value.ndim >= 1:
        t = LegacyTensor(value)
    else:
        raise IllegalOperand(f"{name} must be a Tensor (numpy array or LegacyTensor), got {type(value).__name__}",
                             op=OP, operand=name, value=type(value).__name__, limit="a Tensor",
                             hint=f"pass the {name} tensor's contents as a numpy array")
    if not isinstance(t.data, np.ndarray):
        raise IllegalOperand(f"{name}.data must be a numpy array, got {type(t.data).__name__}", op=OP,
                             operand=name, value=type(t.data).__name__, limit="numpy array",
                             hint=f"build the LegacyTensor from a numpy array (np.asarray({name}_data))")
    if not _is_int(t.offset) or t.offset < 0:
        raise IllegalOperand(f"{name} start element {t.offset!r} must be a non-negative int", op=OP,
                             operand=name, value=t.offset, limit=">= 0",
                             hint=f"pass {name}'s start element as a Python int >= 0")
    return t


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _check_int(value: Any, name: str, lo: int, hi: int, hint: str) -> int:
    if not _is_int(value):
        raise IllegalOperand(f"{name} must be a Python int immediate, got {type(value).__name__} {value!r}",
                             op=OP, operand=name, value=value, limit="int", hint=hint)
    if not lo <= int(value) <= hi:
        raise IllegalOperand(f"{name}={value} is outside [{lo}, {hi}]", op=OP, operand=name, value=value,
                             limit=f"[{lo}, {hi}]", hint=hint)
    return int(value)


def _element_dtype(arr: np.ndarray, name: str) -> DType:
    try:
        d = dtype(arr.dtype)
    except UnknownName:
        d = None
    if d is None or d.storage != arr.dtype:
        raise IllegalOperand(f"{name} has numpy dtype {arr.dtype}, which is no TIK tensor dtype", op=OP,
                             operand=name, value=str(arr.dtype), limit="float32, int32 or float16",
                             hint="declare the tensor float16, float32 or int32")
    return d


def _resolve_chip(chip: Any, core_type: str):
    """(table key, short SoC, overflow default) of a TIK SoC name; errors for PTO targets/unknown names."""
    if core_type not in CORE_TYPES:
        raise UnknownName(f"unknown core type {core_type!r}", op=OP, operand="core_type", value=core_type,
                          limit="one of " + ", ".join(CORE_TYPES),
                          hint="pass core_type as one of " + ", ".join(repr(c) for c in CORE_TYPES))
    try:
        profile = get_target(chip)
    except UnknownName as err:
        raise UnknownName(f"unknown SoC {chip!r}", op=OP, operand="chip", value=chip, limit=err.limit,
                          hint="pass a TIK SoC name such as 'Ascend310', 'Ascend910B1' or 'SD3403'") from None
    if profile.kind != "soc":
        raise UnsupportedOp(f"{profile.name} is a PTO target: it has no legacy TIK fixpipe", op=OP,
                            operand="chip", value=profile.name, limit="a TIK SoC (Ascend310, Ascend910B1, ...)",
                            hint="compare against a TIK SoC; PTO kernels use pto.mte_l0c_* directly")
    key = profile.short_soc_version + core_type
    table = ONLY_TIK_API_MAP["fixpipe"]
    if key not in table:
        chips = sorted(table)
        raise UnsupportedOp(f"{profile.name} ({core_type}) has no tik.fixpipe (Appendix B tik.fixpipe table)",
                            op=OP, operand="chip", value=key, limit="one of " + ", ".join(chips),
                            hint="pick a SoC with a cube fixpipe, e.g. Ascend310 or Ascend910B1")
    return key, profile.short_soc_version, profile.overflow_mode


def _check_dtypes(key: str, src: DType, dst: DType) -> str:
    pair = src.name + dst.name
    legal = ONLY_TIK_API_MAP["fixpipe"][key]
    if pair not in legal:
        raise IllegalOperand(f"src {src.tik_name} -> dst {dst.tik_name} is not a fixpipe dtype combination on "
                             f"{key} (Table 2 / Appendix B)", op=OP, operand="dst", value=pair,
                             limit="one of " + ", ".join(legal),
                             hint="use f32->f16 with quantize 'fp322fp16', s32->f16 with 'int322fp16', "
                                  "or same-type f32->f32 / s32->s32")
    return pair


def _geometry(src: DType, dst: DType, cburst_num: int, burst_len: int, dst_stride: int,
              src_stride: int) -> FixpipeGeometry:
    row_bytes = CHANNELS * src.bits // 8
    if burst_len * BLOCK_BYTES % row_bytes:
        raise IllegalOperand(f"burst_len={burst_len} (32 B units of the {src.tik_name} source) is not a whole "
                             f"number of {CHANNELS}-channel rows of {row_bytes} B", op=OP, operand="burst_len",
                             value=burst_len, limit=f"a multiple of {row_bytes // BLOCK_BYTES}",
                             hint="burst_len = howo * 16 * sizeof(src) / 32 (2020 docs: even for 32-bit "
                                  "results); TIK's floor division would drop the half row")
    howo = burst_len * BLOCK_BYTES // row_bytes
    round_howo = -(-howo // CHANNELS) * CHANNELS
    src_block = round_howo * CHANNELS + src_stride * SRC_STRIDE_UNIT
    dst_gap = dst_stride * BLOCK_BYTES // (dst.bits // 8)
    dst_block = howo * CHANNELS + dst_gap
    return FixpipeGeometry(src.name, dst.name, cburst_num, burst_len, dst_stride, src_stride, howo, round_howo,
                           src_block, dst_gap, dst_block,
                           src_extent=(cburst_num - 1) * src_block + round_howo * CHANNELS,
                           dst_extent=(cburst_num - 1) * dst_block + howo * CHANNELS)


def _check_scope(t: LegacyTensor, name: str, allowed: tuple) -> None:
    if t.scope is not None and t.scope.lower() not in allowed:
        raise IllegalOperand(f"{name} is in scope {t.scope!r}; fixpipe needs it in {' or '.join(allowed)}", op=OP,
                             operand=name, value=t.scope, limit=" or ".join(allowed),
                             hint=f"declare {name} in L1 (scope_cbuf)" if allowed == ("l1",) else
                             "pass the L0C (L1OUT) matmul result as src")


def _check_align(t: LegacyTensor, name: str, itemsize: int, align: int, rule: str) -> None:
    if t.offset * itemsize % align:
        raise Misaligned(f"{name} starts at element {t.offset} = byte {t.offset * itemsize}, not {align} B aligned "
                         f"({rule})", op=OP, operand=name, value=t.offset * itemsize, limit=f"{align} B",
                         hint=f"start {name} at a multiple of {align // itemsize} elements")


def _check_extent(t: LegacyTensor, name: str, needed: int, formula: str) -> np.ndarray:
    """The flat window ``[offset, offset+needed)`` of ``t``; `OutOfBounds` if the tensor is shorter."""
    flat = t.data.reshape(-1)
    if t.offset + needed > flat.size:
        raise OutOfBounds(f"{name} tensor overflow: needs start element {t.offset} + {formula} = "
                          f"{t.offset + needed} elements, the tensor has {flat.size}", op=OP, operand=name,
                          value=t.offset + needed, limit=flat.size,
                          hint=f"declare {name} with at least {t.offset + needed} elements or lower cburst_num/"
                               f"burst_len/strides")
    return np.ascontiguousarray(flat[t.offset:t.offset + needed])


def _extend_params(extend_params: Any) -> dict:
    if extend_params is None:
        return {}
    if not isinstance(extend_params, dict):
        raise IllegalOperand(f"extend_params must be a dict or None, got {type(extend_params).__name__}", op=OP,
                             operand="extend_params", value=type(extend_params).__name__, limit="dict",
                             hint="pass extend_params as a dict (or None)")
    unknown = [k for k in extend_params if k not in EXTEND_KEYS]
    if unknown:
        raise UnknownName(f"extend_params has unknown key(s) {', '.join(map(repr, unknown))}", op=OP,
                          operand="extend_params", value=unknown[0], limit="keys " + ", ".join(EXTEND_KEYS),
                          hint="the supported keys are 'bias', 'element-wise-add', 'quantize_params', 'relu' "
                               "(note the hyphens in 'element-wise-add')")
    return extend_params


def _scale_operand(mode_param: Any, *, hisi: bool, cout: int, with_add: bool, notes: list):
    """(kind, f16 scale array) of an int322fp16 ``mode_param`` [seed 002 Table 1, quantize_params]."""
    if mode_param is None:
        raise IllegalOperand("quantize mode 'int322fp16' needs a mode_param (float immediate, float16 Scalar or "
                             "float16 Tensor [16])", op=OP, operand="quantize_params.mode_param", value=None,
                             limit="float / float16 Scalar / Tensor",
                             hint="pass quantize_params={'mode': 'int322fp16', 'mode_param': 1.0} (or a float16 Scalar "
                                  "/ L1 Tensor [16])")
    if isinstance(mode_param, (np.generic, np.ndarray)) and np.ndim(mode_param) == 0:
        if np.asarray(mode_param).dtype != np.float16:
            raise IllegalOperand(f"mode_param Scalar has dtype {np.asarray(mode_param).dtype}; int322fp16 needs a "
                                 f"Scalar of float16", op=OP, operand="quantize_params.mode_param",
                                 value=str(np.asarray(mode_param).dtype), limit="float16 Scalar",
                                 hint="declare the mode_param Scalar float16")
        return "scalar", np.asarray(mode_param, dtype=np.float16).reshape(())
    if isinstance(mode_param, float):
        # A float immediate becomes the f16 deqscale: nearest-even (numpy's f64 -> f16 cast
        # rounds once, directly from the double).
        with np.errstate(over="ignore"):
            scale = np.asarray(np.float16(mode_param))
        if math.isnan(mode_param):
            # NaN is a float16 value: nothing is rounded (NaN != NaN made this say "rounded to nan").
            notes.append("mode_param is NaN: every product x * NaN is NaN before the overflow mode "
                         "(saturation writes 0, inf_nan writes NaN)")
        elif float(scale) != mode_param:
            notes.append(f"mode_param {mode_param!r} is not a float16 value; the legacy deqscale is float16, "
                         f"so it is rounded (nearest-even) to {float(scale)!r}")
        return "immediate", scale.reshape(())
    if isinstance(mode_param, (np.ndarray, LegacyTensor)):
        if with_add:
            raise IllegalOperand("a Tensor mode_param is only allowed without bias and element-wise-add; with them "
                                 "use a float immediate or a float16 Scalar", op=OP,
                                 operand="quantize_params.mode_param", value="Tensor",
                                 limit="float / float16 Scalar when bias or element-wise-add is set",
                                 hint="pass mode_param as a float immediate or a float16 Scalar")
        t = _operand(mode_param, "quantize_params.mode_param")
        _check_scope(t, "quantize_params.mode_param", ("l1",))
        if hisi:
            if t.data.dtype != np.float32 or t.data.ndim < 1 or t.data.shape[0] != 2 * cout:
                raise IllegalOperand(f"on Hi3796CV300CS/SD3403 the mode_param Tensor must be float32 with shape "
                                     f"[2*Cout] = [{2 * cout}], got {t.data.dtype} {list(t.data.shape)}", op=OP,
                                     operand="quantize_params.mode_param", value=list(t.data.shape),
                                     limit=f"float32 [{2 * cout}]",
                                     hint=f"declare the mode_param Tensor float32 [{2 * cout}]")
            raise UnsupportedOp("the per-channel layout of the Hi3796CV300CS/SD3403 float32 [2*Cout] deqscale "
                                "tensor is not documented, so the reference model cannot compute it", op=OP,
                                operand="quantize_params.mode_param", value="float32 tensor",
                                hint="use a float immediate or a float16 Scalar scale on this SoC")
        if t.data.dtype != np.float16:
            raise IllegalOperand(f"mode_param Tensor has dtype {t.data.dtype}; int322fp16 needs a float16 Tensor "
                                 f"[16] in L1", op=OP, operand="quantize_params.mode_param", value=str(t.data.dtype),
                                 limit="float16", hint="declare the mode_param Tensor float16 [16] in L1")
        window = _check_extent(t, "quantize_params.mode_param", CHANNELS, "16")
        return "tensor", window.astype(np.float16)
    raise IllegalOperand(f"mode_param of type {type(mode_param).__name__} is not a float immediate, a float16 "
                         f"Scalar or a float16 Tensor", op=OP, operand="quantize_params.mode_param",
                         value=type(mode_param).__name__, limit="float / float16 Scalar / Tensor",
                         hint="an integer immediate must be written as a float (e.g. 2.0)")


def check_fixpipe_args(src: Any, *, dst_dtype: DTypeLike, cburst_num: Any, burst_len: Any, dst_stride: Any,
                       src_stride: Any, extend_params: Optional[dict] = None, chip: str = "Ascend310",
                       core_type: str = "AiCore", dst_size: Optional[int] = None, dst_offset: int = 0,
                       dst_scope: str = "gm", overflow_mode: Optional[str] = None) -> FixpipePlan:
    """Check every documented ``fixpipe`` restriction and return the normalised call.

    Args:
        src: the L0C tensor (numpy array as declared, float32 / int32 / float16) or a
            `LegacyTensor` giving the operand's start element.
        dst_dtype: the dst tensor's dtype (``"float16"``, ``"f32"``, ``np.int32`` ...).
        cburst_num, burst_len, dst_stride, src_stride: the instruction's immediates
            (burst_len and dst_stride in 32 B units, src_stride in 256-element units).
        extend_params: ``{"bias", "element-wise-add", "quantize_params", "relu"}`` or None.
        chip: a TIK SoC name (``"Ascend310"``, ``"Ascend910B1"``, ``"SD3403"`` ...).
        core_type: ``"AiCore"`` or ``"VectorCore"``.
        dst_size: elements of the declared dst tensor (None: not checked).
        dst_offset: the dst operand's start element in that tensor.
        dst_scope: ``"gm"`` (all chips) or ``"ub"`` (310B, 610Lite, Hi3796CS, SD3403).
        overflow_mode: float overflow behaviour, default the chip's (``"saturation"`` on
            v100/v200 SoCs, ``"inf_nan"`` on 910B/310B).

    Raises:
        IllegalOperand / UnknownName: a range, type, dtype, mode or combination rule is broken.
        OutOfBounds: src, dst, bias, element-wise-add or deqscale tensor overflow.
        Misaligned: src not fractal-aligned in L0C, bias / element-wise-add not 32 B aligned in L1.
        UnsupportedOp: the chip has no fixpipe or does not support the requested feature.
    """
    key, short_soc, chip_overflow = _resolve_chip(chip, core_type)
    hisi = short_soc in HISI_SOCS
    notes: list = []

    # ---- operands, dtypes, scopes [Table 1, Table 2, Appendix B] ----
    src_t = _operand(src, "src")
    _check_scope(src_t, "src", ("l0c", "cc", "l1out", "local.l0c"))
    src_dt = _element_dtype(src_t.data, "src")
    try:
        dst_dt = dtype(dst_dtype)
    except UnknownName as err:
        raise UnknownName(f"unknown dst dtype {dst_dtype!r}", op=OP, operand="dst", value=dst_dtype,
                          limit="float16, float32 or int32", hint=err.hint) from None
    pair = _check_dtypes(key, src_dt, dst_dt)
    scope = str(dst_scope).lower()
    allowed_scopes = ("gm", "ub") if short_soc in DST_UB_SOCS else ("gm",)
    if scope not in allowed_scopes:
        raise IllegalOperand(f"dst scope {dst_scope!r} is not allowed on {key}", op=OP, operand="dst",
                             value=dst_scope, limit=" or ".join(allowed_scopes),
                             hint="fixpipe writes GM (UB only on Ascend310B, Ascend610Lite, Hi3796CV300CS, SD3403)")
    _check_align(src_t, "src", src_dt.bits // 8, L0C_ALIGN[src_dt.bits // 8], "one L0C fractal")

    # ---- immediates [Table 1] ----
    cburst_num = _check_int(cburst_num, "cburst_num", *CBURST_NUM_RANGE,
                            hint="cburst_num = Cout/16 (conv2d) or N1 (matmul)")
    burst_len = _check_int(burst_len, "burst_len", *BURST_LEN_RANGE,
                           hint="burst_len = howo*16*sizeof(src)/32 (conv2d) or m*16*sizeof(src)/32 (matmul)")
    dst_stride = _check_int(dst_stride, "dst_stride", *STRIDE_RANGE, hint="dst_stride is in 32 B units")
    src_stride = _check_int(src_stride, "src_stride", *STRIDE_RANGE, hint="src_stride is reserved: pass 0")
    if src_stride:
        notes.append(f"src_stride={src_stride} is documented as reserved ('to ensure data accuracy, pass 0'); "
                     f"modelled as a gap of {src_stride}*256 elements between src blocks")
    geo = _geometry(src_dt, dst_dt, cburst_num, burst_len, dst_stride, src_stride)

    # ---- extend_params [Table 1 extend_params, Notes, §8.4] ----
    ext = _extend_params(extend_params)
    bias_arg = ext.get("bias")
    ewa_arg = ext.get("element-wise-add")
    quant = ext.get("quantize_params")
    has_add = bias_arg is not None or ewa_arg is not None
    if pair in ("s32f16", "f32f16"):
        if hisi and has_add:
            raise UnsupportedOp(f"{short_soc} does not support bias or element-wise-add with {pair} "
                                f"(quantizing) fixpipe", op=OP, operand="extend_params",
                                value="bias" if bias_arg is not None else "element-wise-add",
                                hint="add the bias with vector instructions after the fixpipe")
        if quant is None:
            mode = "int322fp16" if pair == "s32f16" else "fp322fp16"
            raise IllegalOperand(f"src {src_dt.tik_name} -> dst float16 needs extend_params['quantize_params'] "
                                 f"with mode {mode!r} (Table 2)", op=OP, operand="quantize_params", value=None,
                                 limit=f"mode {mode!r}",
                                 hint="pass "
                                      f"extend_params={{'quantize_params': {{'mode': {mode!r}, 'mode_param': ...}}}}")
    if bias_arg is not None and ewa_arg is not None:
        raise IllegalOperand("bias and element-wise-add cannot be enabled together", op=OP,
                             operand="extend_params", value="bias + element-wise-add",
                             limit="at most one of bias, element-wise-add",
                             hint="set only one of bias and element-wise-add")

    quant_mode = scale_kind = scale = None
    if quant is not None:
        if pair in ("s32s32", "f32f32", "f16f16"):
            raise IllegalOperand(f"quantize_params must be None when src and dst are both {src_dt.tik_name} "
                                 f"(Table 2)", op=OP, operand="quantize_params", value=quant, limit="None",
                                 hint="pass quantize_params=None (or leave it out)")
        if not isinstance(quant, dict):
            raise IllegalOperand(f"quantize_params must be a dict, got {type(quant).__name__}", op=OP,
                                 operand="quantize_params", value=type(quant).__name__, limit="dict",
                                 hint="pass quantize_params={'mode': ..., 'mode_param': ...}")
        if "mode" not in quant or "mode_param" not in quant:
            raise IllegalOperand("quantize_params must contain both 'mode' and 'mode_param'", op=OP,
                                 operand="quantize_params", value=sorted(quant), limit="keys 'mode', 'mode_param'",
                                 hint="give quantize_params both keys: {'mode': ..., 'mode_param': ...}")
        extra = sorted(set(quant) - {"mode", "mode_param"})
        if extra:
            notes.append(f"quantize_params keys {extra} are ignored (as by TIK)")
        quant_mode = quant["mode"]
        if quant_mode not in QUANT_MODES:
            raise UnknownName(f"quantize mode {quant_mode!r} is not supported", op=OP, operand="quantize_params.mode",
                              value=quant_mode, limit="one of " + ", ".join(QUANT_MODES),
                              hint="pass quantize_params={'mode': 'fp322fp16', 'mode_param': None} for float32 src "
                                   "or {'mode': 'int322fp16', 'mode_param': <scale>} for int32 src, or None")
        mode_src, mode_dst = QUANT_MODES[quant_mode]
        if (src_dt.name, dst_dt.name) != (mode_src, mode_dst):
            raise IllegalOperand(f"quantize mode {quant_mode!r} converts {mode_src} -> {mode_dst} but src/dst are "
                                 f"{src_dt.name} -> {dst_dt.name}", op=OP, operand="quantize_params.mode",
                                 value=quant_mode, limit=f"src {mode_src}, dst {mode_dst}",
                                 hint="use mode 'fp322fp16' for float32 src and 'int322fp16' for int32 src")
        if quant_mode == "fp322fp16":
            if quant["mode_param"] is not None:
                raise IllegalOperand("mode 'fp322fp16' takes mode_param=None", op=OP,
                                     operand="quantize_params.mode_param", value=type(quant["mode_param"]).__name__,
                                     limit="None", hint="pass {'mode': 'fp322fp16', 'mode_param': None}")
        else:
            scale_kind, scale = _scale_operand(quant["mode_param"], hisi=hisi, cout=cburst_num * CHANNELS,
                                               with_add=has_add, notes=notes)

    bias = ewa = None
    if bias_arg is not None:
        t = _operand(bias_arg, "bias")
        _check_scope(t, "bias", ("l1",))
        _check_align(t, "bias", src_dt.bits // 8, L1_ALIGN, "L1 operand")
        if t.data.dtype != src_dt.storage:
            raise IllegalOperand(f"bias has dtype {t.data.dtype}; it must have the src dtype {src_dt.tik_name}",
                                 op=OP, operand="bias", value=str(t.data.dtype), limit=src_dt.tik_name,
                                 hint=f"declare bias {src_dt.tik_name}")
        bias = _check_extent(t, "bias", cburst_num * CHANNELS, "cburst_num*16")
    if ewa_arg is not None:
        t = _operand(ewa_arg, "element-wise-add")
        _check_scope(t, "element-wise-add", ("l1",))
        _check_align(t, "element-wise-add", src_dt.bits // 8, L1_ALIGN, "L1 operand")
        if t.data.dtype != src_dt.storage:
            raise IllegalOperand(f"element-wise-add has dtype {t.data.dtype}; it must have the src dtype "
                                 f"{src_dt.tik_name}", op=OP, operand="element-wise-add", value=str(t.data.dtype),
                                 limit=src_dt.tik_name, hint=f"declare element-wise-add {src_dt.tik_name}")
        ewa = _check_extent(t, "element-wise-add", cburst_num * geo.round_howo * CHANNELS,
                            "cburst_num*round_howo*16").reshape(cburst_num, geo.round_howo, CHANNELS)

    relu = False
    if "relu" in ext:
        relu_arg = static_bool(ext["relu"])       # np.True_ / a 0-d bool array too, as the TIK fixpipe takes
        if relu_arg is None:
            raise IllegalOperand(f"relu must be a bool, got {type(ext['relu']).__name__}", op=OP, operand="relu",
                                 value=ext["relu"], limit="True or False", hint="pass relu True or False")
        if hisi:
            raise UnsupportedOp(f"{short_soc} fixpipe does not support the 'relu' key", op=OP, operand="relu",
                                value=relu_arg, hint="drop the 'relu' key; apply ReLU with vector instructions")
        if relu_arg and has_add:
            raise IllegalOperand("relu is only supported when bias and element-wise-add are disabled", op=OP,
                                 operand="relu", value=True, limit="relu=False with bias / element-wise-add",
                                 hint="drop relu, or apply it in a separate vector op after fixpipe")
        if relu_arg and scale_kind in ("immediate", "scalar"):
            raise IllegalOperand("relu is not supported with quantize mode 'int322fp16' and a Scalar/immediate "
                                 "mode_param", op=OP, operand="relu", value=True,
                                 limit="relu=False with a Scalar/immediate deqscale",
                                 hint="use a float16 Tensor [16] mode_param to combine deq and relu")
        relu = relu_arg

    # ---- overflow [§8.4 Errors] ----
    src_window = _check_extent(src_t, "src", geo.src_extent,
                               "(cburst_num-1)*(round_howo*16 + src_stride*256) + round_howo*16")
    if dst_size is not None:
        if not _is_int(dst_offset) or dst_offset < 0:
            raise IllegalOperand(f"dst start element {dst_offset!r} must be a non-negative int", op=OP,
                                 operand="dst", value=dst_offset, limit=">= 0",
                                 hint="pass dst's start element as a Python int >= 0")
        if dst_offset + geo.dst_extent > dst_size:
            raise OutOfBounds(f"dst tensor overflow: needs start element {dst_offset} + (cburst_num-1)*(howo*16 + "
                              f"dst_stride*32/sizeof(dst)) + howo*16 = {dst_offset + geo.dst_extent} elements, the "
                              f"tensor has {dst_size}", op=OP, operand="dst", value=dst_offset + geo.dst_extent,
                              limit=dst_size, hint="declare a larger dst or lower cburst_num/burst_len/dst_stride")

    mode = overflow_mode or chip_overflow
    if mode not in ("saturation", "inf_nan"):
        raise IllegalOperand(f"overflow_mode {overflow_mode!r} is not 'saturation' or 'inf_nan'", op=OP,
                             operand="overflow_mode", value=overflow_mode, limit="'saturation' or 'inf_nan'",
                             hint="pass overflow_mode=\"saturation\" or \"inf_nan\"")
    return FixpipePlan(key, geo, src_window, bias, ewa, quant_mode, scale_kind, scale, relu, mode, tuple(notes))


# --------------------------------------------------------------------------------------
# Numerics: one function per pipeline stage, each states its rounding
# --------------------------------------------------------------------------------------

_F16_MAX = float(np.finfo(np.float16).max)
_F32_MAX = float(np.finfo(np.float32).max)


def _saturate(x: np.ndarray, limit: float, mode: str) -> np.ndarray:
    """``saturation`` mode (v100/v200 SoCs): overflow and +/-inf clamp to +/-``limit``, NaN -> 0.
    ``inf_nan``: IEEE-754 values pass unchanged. Applied before the final narrowing cast so
    the cast itself only rounds."""
    if mode != "saturation":
        return x
    return np.nan_to_num(np.clip(x, -limit, limit), nan=0.0)


def add_stage(x: np.ndarray, addend: np.ndarray, mode: str) -> np.ndarray:
    """``x + addend`` as the legacy bias / element-wise-add (a vector add in UB).

    * int32: two's-complement wrap-around (numpy int32 array addition wraps; the vector
      unit's s32 add is not documented to saturate, §13 q12).
    * float32: IEEE single add, nearest-even (numpy float32 + float32), then the overflow mode.
    * float16: the exact sum (float64 holds any sum of two halves exactly: <= 40 bits) rounded
      once to nearest-even by numpy's direct float64 -> float16 cast, then the overflow mode.
    """
    if x.dtype == np.int32:
        return x + addend
    if x.dtype == np.float32:
        with np.errstate(over="ignore", invalid="ignore"):
            total = x + addend
        return _saturate(total, _F32_MAX, mode).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        total = x.astype(np.float64) + addend.astype(np.float64)
        return _saturate(total, _F16_MAX, mode).astype(np.float16)


def fp32_to_fp16(x: np.ndarray, mode: str) -> np.ndarray:
    """``fp322fp16``: float32 -> float16, round to nearest, ties to even [§8.4, verified by §10.2].

    The single is widened exactly to float64 (so the saturation clamp is exact), then
    numpy's direct float64 -> float16 cast rounds once (RNE): the same value as rounding
    the single directly. The overflow mode is applied first so the cast only rounds."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _saturate(x.astype(np.float64), _F16_MAX, mode).astype(np.float16)


def deq_int32_to_fp16(x: np.ndarray, scale: np.ndarray, mode: str) -> np.ndarray:
    """``int322fp16``: ``f16(x * scale)`` with a float16 ``scale`` [seed 002 quantize_params; §7.3, §9.6 deq].

    The product is formed exactly: an int32 (31 significant bits) times a float16 (11
    significant bits, exponent >= -24) has at most 42 significant bits and magnitude below
    2**47, so the float64 product is exact; it is then rounded once to float16 (nearest-even,
    numpy's direct float64 -> float16 cast) after the overflow mode. The seed only says
    "int32 to float16 quantization" with a float16 scale; this is the one-rounding reading
    (no intermediate f32 rounding of the int32 or of the product).
    ``scale`` is ``()`` (one factor) or ``(16,)`` (channel j of every block uses ``scale[j]``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        exact = x.astype(np.float64) * scale.astype(np.float64)
        return _saturate(exact, _F16_MAX, mode).astype(np.float16)


def relu_stage(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)``: negative values and -0 become +0, NaN stays NaN (as the vector ``vrelu``)."""
    if x.dtype.kind == "i":
        return np.maximum(x, 0)
    return np.where(np.isnan(x) | (x > 0), x, np.zeros((), dtype=x.dtype))


# --------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------


def run_plan(plan: FixpipePlan) -> LegacyFixpipeResult:
    """Execute a checked call: gather the valid rows, bias -> element-wise-add -> quantize -> relu
    (the documented order), scatter into the strided destination."""
    geo = plan.geometry
    x = geo.src_blocks(plan.src)                                    # [cburst_num, howo, 16] view
    if plan.bias is not None:
        x = add_stage(x, plan.bias.reshape(geo.cburst_num, 1, CHANNELS), plan.overflow_mode)
    if plan.ewa is not None:
        x = add_stage(x, plan.ewa[:, :geo.howo, :], plan.overflow_mode)
    if plan.quant_mode == "fp322fp16":
        x = fp32_to_fp16(x, plan.overflow_mode)
    elif plan.quant_mode == "int322fp16":
        x = deq_int32_to_fp16(x, plan.scale, plan.overflow_mode)
    if plan.relu:
        x = relu_stage(x)
    storage = dtype(geo.dst_dtype).storage
    values = np.zeros(geo.dst_extent, dtype=storage)
    written = np.zeros(geo.dst_extent, dtype=bool)
    geo.dst_blocks(values, writeable=True)[...] = x
    geo.dst_blocks(written, writeable=True)[...] = True
    return LegacyFixpipeResult(values, written, plan)


def legacy_fixpipe(src: Any, *, dst_dtype: DTypeLike, cburst_num: Any, burst_len: Any, dst_stride: Any,
                   src_stride: Any, extend_params: Optional[dict] = None, chip: str = "Ascend310",
                   core_type: str = "AiCore", dst_size: Optional[int] = None, dst_offset: int = 0,
                   dst_scope: str = "gm", overflow_mode: Optional[str] = None) -> LegacyFixpipeResult:
    """What legacy TIK ``fixpipe(dst, src, cburst_num, burst_len, dst_stride, src_stride,
    extend_params)`` writes to ``dst``, from the L0C contents ``src``.

    Arguments as in `check_fixpipe_args` (which runs first). Returns a `LegacyFixpipeResult`:
    ``values`` / ``written`` cover dst elements ``[dst start, dst start + dst_extent)``.
    Warns `ReservedArgumentWarning` when ``src_stride != 0`` (documented as reserved).
    """
    plan = check_fixpipe_args(src, dst_dtype=dst_dtype, cburst_num=cburst_num, burst_len=burst_len,
                              dst_stride=dst_stride, src_stride=src_stride, extend_params=extend_params,
                              chip=chip, core_type=core_type, dst_size=dst_size, dst_offset=dst_offset,
                              dst_scope=dst_scope, overflow_mode=overflow_mode)
    if plan.geometry.src_stride:
        warnings.warn(f"tik.fixpipe: src_stride={plan.geometry.src_stride} is documented as reserved (pass 0); "
                      f"modelled as a {plan.geometry.src_stride}*256-element gap between src blocks",
                      ReservedArgumentWarning, stacklevel=2)
    return run_plan(plan)


__all__ = ["LegacyTensor", "FixpipeGeometry", "FixpipePlan", "LegacyFixpipeResult", "ReservedArgumentWarning",
           "check_fixpipe_args", "legacy_fixpipe", "run_plan", "add_stage", "fp32_to_fp16", "deq_int32_to_fp16",
           "relu_stage", "EXTEND_KEYS", "QUANT_MODES", "CBURST_NUM_RANGE", "BURST_LEN_RANGE", "STRIDE_RANGE"]
