"""Cube-path instructions of the v100/v200 chip generation that the VPTO op set has no op for.

One execute function and one `OpSpec` row per instruction; each op is named after the
hardware instruction (CCE intrinsic family) it models:

=============================  ======  ===================================================================
op                             pipe    instruction (CCE)
=============================  ======  ===================================================================
``pto.load2d``                 MTE1/2  Load2D: whole 512-byte fractals GM/L1 -> L0A/L0B/L1
                                       (``load_cbuf_to_ca/cb``, ``load_gm_to_ca/cb/cbuf``)
``pto.img2col``                MTE1    Load3D: im2col fractals of an L1 feature map -> L0A/L0B/UB
                                       (``img2col_cbuf_to_ca/cb/ub``, ``img2colv2_cbuf_to_ca/cb``)
``pto.col2img``                V       col2img: im2col fractals scatter-added into a UB feature map
``pto.copy_matrix_cc_to_ubuf`` V       L0C -> UB fractal copy with on-the-fly conversion (deq, vdeq, relu)
``pto.copy_matrix_ubuf_to_cc`` V       UB -> L0C fractal copy
``pto.broadcast_ub_to_cc``     V       16-element UB rows broadcast to whole L0C fractals
=============================  ======  ===================================================================

Which chips have which instruction is data: `AVAILABILITY` maps each op to chip
families (`ChipProfile.family`: ``v100`` Ascend310/910, ``v200`` Ascend310P/610/...,
``v220`` Ascend910B, ``v300`` Ascend310B, and the PTO architecture names).

Units and semantics (sources and choices: ``migration_guide/pto_cube.md``, section
"Legacy cube-path instructions"):

* A *fractal* is 512 bytes (16 rows x 32 bytes) in L1/L0A/L0B; in L0C and in the
  L0C <-> UB copies it is 16 x 16 elements of the L0C type (512 B for 16-bit, 1 KiB
  for 32-bit types).
* Feature maps are ``[C1][H][W][C0]`` (``C0`` = 32 bytes of elements, or a small
  channel count such as 4 for the first-layer "C04" layout).
* The im2col matrix ``X[m, k]``: row ``m`` is output pixel ``(ho, wo) = divmod(m, Wo)``,
  column ``k = ((c1*Kh + kh)*Kw + kw)*C0 + c``; the value is
  ``fm[c1, ho*sh - pt + kh*dh, wo*sw - pl + kw*dw, c]``, or the pad value outside the map,
  or 0 for ``k >= Kh*Kw*channels``. ``Wo = (W + pl + pr - dw*(Kw-1) - 1) // sw + 1``.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import numpy as np

from ..dtypes import DType
from ..errors import IllegalOperand, OutOfBounds, UnsupportedOp
from ..memory import all_written
from .mte import FRACTAL, check_align, check_int, check_ptr, copy_fractals, l0a_layout, strided, tracking
from .registry import Clause, Operand, OpSpec, register, register_availability

U8, U16 = 0xFF, 0xFFFF
BLOCK = 32
ROW = 16                       # elements of one L0C row (N0) / pixels of one im2col fractal

#: op -> chip families (`ChipProfile.family`) that have the instruction.
AVAILABILITY = {
    "load2d": ("v100", "v200", "v220", "v300", "a2a3", "a5", "kirin9030", "kirinx90"),
    "img2col": ("v100", "v200", "v220", "v300", "a2a3", "a5", "kirin9030", "kirinx90"),
    "col2img": ("v100", "v200"),
    "copy_matrix_cc_to_ubuf": ("v100", "v200"),
    "copy_matrix_ubuf_to_cc": ("v100", "v200"),
    "broadcast_ub_to_cc": ("v100", "v200"),
}


for _op, _families in AVAILABILITY.items():              # for messages that name these ops (registry.move_op_hint)
    register_availability(_op, lambda target, families=_families: target.family in families)
del _op, _families


def available(op: str, target) -> bool:
    """Whether ``target`` has instruction ``op`` (a key of `AVAILABILITY`)."""
    return target.family in AVAILABILITY[op]


def _require(op: str, target) -> None:
    if not available(op, target):
        fams = ", ".join(AVAILABILITY[op])
        hint = {"copy_matrix_cc_to_ubuf": "newer chips move L0C results with FIXPIPE (pto.mte_l0c_gm / pto.mte_l0c_l1; on A5 also "
                                          "pto.mte_l0c_ub)",
                "copy_matrix_ubuf_to_cc": "initialise L0C with a mad (or a bias-table mad_bias) instead",
                "broadcast_ub_to_cc": "seed the accumulator with pto.mad_bias (bias table) instead",
                "col2img": "accumulate with vector adds instead"}.get(op, "pick a chip family that has it")
        raise UnsupportedOp(f"pto.{op} does not exist on {target.label} (family {target.family})", op=f"pto.{op}",
                            value=target.name, limit=f"families {fams}", hint=hint)


# ============================================================================ shared helpers


def _flags(written: np.ndarray, d: DType) -> np.ndarray:
    """Per-element flags (every byte of the element written) from byte flags."""
    size = d.bits // 8
    return written.reshape(-1, size).all(axis=1) if size > 1 else written


_PAD_VALUES: dict = {}


def _pad_value(value, d: DType):
    """The pad value as one element of ``d`` (float types round to nearest even; ints must fit),
    memoised per value, its sign bit, its type and ``d`` (the result is a read-only 0-d array).
    The sign bit is part of the key: -0.0 == 0.0 and both hash alike, so without it a +0.0 pad
    would reuse an earlier -0.0 entry (and vice versa)."""
    try:
        sign = math.copysign(1.0, value) < 0 if type(value) is float else bool(np.signbit(value))   # as np.signbit
        key = (value, sign, type(value), d.name)
        got = _PAD_VALUES.get(key)
    except (TypeError, ValueError):  # unhashable or not a scalar: converted (and checked) below
        got, key = None, None
    if got is None:
        got = _pad_value_uncached(value, d)
        got.setflags(write=False)
        if key is not None and len(_PAD_VALUES) < 1024:
            _PAD_VALUES[key] = got
    return got


def _pad_value_uncached(value, d: DType):
    if d.is_float:
        with np.errstate(over="ignore"):
            return np.asarray(value, dtype=np.float64).astype(d.storage)
    v = int(value)
    if not d.min <= v <= d.max:
        raise IllegalOperand(f"pad value {v} does not fit {d.name}", operand="pad_value", value=v,
                             limit=f"[{d.min}, {d.max}]", hint=f"pass a pad value in [{d.min}, {d.max}]")
    return np.asarray(v).astype(d.storage)


def _group(clauses: dict, name: str, op: str, n: int, *, required: bool = True, default=None):
    v = clauses.get(name)
    if v is None:
        if required:
            raise IllegalOperand(f"{name}(...) is required", op=op, operand=name,
                                 hint=f"add {name}=({', '.join(['...'] * n)})")
        return default
    return tuple(v[0])


# ============================================================================ raster geometry (im2col / col2img)


#: Lowest window origin row of a Load3D v1 walk (``left_top_h`` >= -255, tik_api.md §7.5).
WINDOW_ORIGIN_MIN = -255

#: Largest feature-map height / width of an img2col / col2img walk (the ``l1_h`` / ``l1_w`` fields of FMATRIX).
#: CANN TIK checks load3dv1 / load3dv2 / col2img ``l1_h`` and ``l1_w`` against [1, 32767] (``MAX_TENSOR_HEIGHT`` /
#: ``MAX_TENSOR_WIDTH``: "l1_h should be in the range of [1, 32767]"), the range the TIK facade checks at the call.
#: It was 4096 (the conv2d H / W limit of tik_api.md §8.2), so a TIK-legal 5000-row map passed the call and was
#: refused when the kernel ran (h_fuzz405).
FMATRIX_MAX_HW = 32767


class Raster:
    """Output-pixel raster of a convolution window walk (all ints, validated)."""

    __slots__ = ("h", "w", "kh", "kw", "sh", "sw", "dh", "dw", "pl", "pr", "pt", "pb", "ho", "wo")

    def __init__(self, op: str, h, w, stride, filt, dil, pad):
        self.h = check_int(op, "%fm_h", h, 1, FMATRIX_MAX_HW)
        self.w = check_int(op, "%fm_w", w, 1, FMATRIX_MAX_HW)
        self.sh, self.sw = (check_int(op, f"stride({n})", v, 1, 63) for n, v in zip(("%h", "%w"), stride))
        self.kh, self.kw = (check_int(op, f"filter({n})", v, 1, 255) for n, v in zip(("%h", "%w"), filt))
        self.dh, self.dw = (check_int(op, f"dilation({n})", v, 1, 255) for n, v in zip(("%h", "%w"), dil))
        self.pl, self.pr, self.pt, self.pb = (check_int(op, f"pad({n})", v, 0, 255)
                                              for n, v in zip(("%left", "%right", "%top", "%bottom"), pad))
        self.wo = (self.w + self.pl + self.pr - self.dw * (self.kw - 1) - 1) // self.sw + 1
        self.ho = (self.h + self.pt + self.pb - self.dh * (self.kh - 1) - 1) // self.sh + 1
        if self.wo < 1 or self.ho < 1:
            raise IllegalOperand(f"the dilated {self.kh} x {self.kw} filter does not fit the padded {self.h} x "
                                 f"{self.w} map (Ho = {self.ho}, Wo = {self.wo})", op=op, operand="filter",
                                 value=(self.kh, self.kw), hint="check fm size, padding, filter and dilation")

    def first_index(self) -> int:
        """Lowest raster index a walk may start at: the first row whose window origin ``ho*stride_h - pad_top``
        is still >= -255 (the Load3D v1 ``left_top_h`` range); rows ``ho < 0`` lie above the padded map."""
        return -((-WINDOW_ORIGIN_MIN - self.pt) // self.sh) * self.wo     # ceil((pt + MIN) / sh) rows, pt <= 255

    def pixel(self, m: np.ndarray) -> tuple:
        """Top-left input coordinates ``(h0, w0)`` of output pixels ``m`` (raster index)."""
        ho, wo = np.divmod(m, self.wo)
        return ho * self.sh - self.pt, wo * self.sw - self.pl

    def raster_index(self, op: str, left_top_h: int, left_top_w: int) -> int:
        """Raster index of the pixel whose window starts at ``(left_top_h, left_top_w)`` (must be on the raster).

        Window rows above the padded map (``left_top_h < -pad_top``, down to the instruction's -255) are raster
        rows ``ho < 0``: the index is negative and those rows' pixels outside the map read the pad value
        (named choice "rows above the padded map", pto_cube.md)."""
        dh, dw = left_top_h + self.pt, left_top_w + self.pl
        if left_top_h < WINDOW_ORIGIN_MIN or dw < 0 or dh % self.sh or dw % self.sw or dw // self.sw >= self.wo:
            raise IllegalOperand(f"(left_top_h, left_top_w) = ({left_top_h}, {left_top_w}) is not the window origin "
                                 f"of an output pixel (origins are (ho*{self.sh} - {self.pt}, wo*{self.sw} - "
                                 f"{self.pl}) with wo < {self.wo}, left_top_h >= {WINDOW_ORIGIN_MIN})", op=op,
                                 operand="%left_top_w",
                                 value=(left_top_h, left_top_w),
                                 hint="start the walk at an output pixel: left_top = (ho*stride_h - pad_top, "
                                      "wo*stride_w - pad_left)")
        return (dh // self.sh) * self.wo + dw // self.sw


_RASTERS: dict = {}


def _raster(op: str, clauses: dict, h, w) -> Raster:
    """The validated `Raster`, memoised per argument values *and types* (a float or bool never finds
    the entry of an equal int, so every check still runs for them). Rasters are not mutated."""
    args = (h, w, _group(clauses, "stride", op, 2), _group(clauses, "filter", op, 2),
            _group(clauses, "dilation", op, 2), _group(clauses, "pad", op, 4))
    key = (op,) + args + tuple(type(v) for v in (h, w) + sum(args[2:], ()))
    try:
        rs = _RASTERS.get(key)
    except TypeError:            # unhashable operand: Raster's checks reject it
        rs, key = None, None
    if rs is None:
        rs = Raster(op, *args)
        if key is not None and len(_RASTERS) < 1024:
            _RASTERS[key] = rs
    return rs


_GEOMETRY_CLAUSES = (
    Clause("stride", "args", params=("%h", "%w"), doc="window stride (required)"),
    Clause("filter", "args", params=("%h", "%w"), doc="kernel size Kh, Kw (required)"),
    Clause("dilation", "args", params=("%h", "%w"), doc="kernel dilation (required)"),
    Clause("pad", "args", params=("%left", "%right", "%top", "%bottom"), doc="padding (required)"),
)


# ============================================================================ pto.load2d


def _exec_load2d(ctx, src, dst, base_idx, repeat, src_stride, dst_gap, transpose=None, addr_dec=None):
    op = "pto.load2d"
    _require("load2d", ctx.target)
    _load2d_static(op, src, dst, transpose)
    base = check_int(op, "%base_idx", base_idx, 0, U16)
    rep = check_int(op, "%repeat", repeat, 0, U8)
    ss = check_int(op, "%src_stride", src_stride, 0, U16)
    gap = check_int(op, "%dst_gap", dst_gap, 0, U16)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, FRACTAL if dst.space in ("l0a", "l0b") else BLOCK, "%dst")
    if rep == 0:
        return
    if addr_dec:
        last = base - (rep - 1) * ss
        if last < 0:
            raise OutOfBounds(f"decreasing addresses reach fractal {last} (base_idx {base} - {rep - 1} x "
                              f"src_stride {ss})", op=op, operand="%base_idx", value=base, limit=">= 0",
                              hint="start at a higher base_idx or use fewer repeats")
        first = last
    else:
        first = base
    span = (rep - 1) * ss + 1
    sdata, sw, _ = ctx.span_tracked(src, first * FRACTAL, (first + span) * FRACTAL, operand="%src")
    sv = strided(sdata, (rep, FRACTAL), (ss * FRACTAL, 1))
    swv = strided(sw, (rep, FRACTAL), (ss * FRACTAL, 1))
    if addr_dec:
        sv, swv = sv[::-1], swv[::-1]
    dstep = (1 + gap) * FRACTAL
    ddata, dw, _ = ctx.span_tracked(dst, 0, (rep - 1) * dstep + FRACTAL, write=True, operand="%dst")
    dv = strided(ddata, (rep, FRACTAL), (dstep, 1), True)
    dwv = strided(dw, (rep, FRACTAL), (dstep, 1), True)
    if transpose:
        dv[...] = np.ascontiguousarray(sv).view(np.uint16).reshape(rep, 16, 16).transpose(0, 2, 1) \
            .reshape(rep, 256).view(np.uint8)
        dwv[...] = np.ascontiguousarray(swv).reshape(rep, 16, 16, 2).transpose(0, 2, 1, 3).reshape(rep, FRACTAL)
    else:
        copy_fractals(dv, sv)
        dwv[...] = swv


def _load2d_static(op, src, dst, transpose):
    check_ptr(op, "%src", src, ("gm", "l1"))
    check_ptr(op, "%dst", dst, ("l0a", "l0b", "l1"))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    ss, ds = getattr(src, "space", None), getattr(dst, "space", None)
    if ss == "gm" and ds == "gm" or (ss == "l1" and ds == "l1"):
        raise IllegalOperand(f"load2d moves GM -> L0A/L0B/L1 or L1 -> L0A/L0B, not {ss} -> {ds}", op=op,
                             operand="%dst", value=ds, hint="load to L0A/L0B/L1 from GM, or to L0A/L0B from L1")
    if sd is not None and dd is not None and sd.bits != dd.bits:
        raise IllegalOperand(f"source and destination element sizes differ ({sd.name} vs {dd.name})", op=op,
                             operand="%dst", value=dd.name, hint="use the same element type on both pointers")
    if transpose:
        if sd is not None and sd.bits != 16:
            raise IllegalOperand(f"transpose works on 16-bit fractals (16 x 16), got {sd.name}", op=op,
                                 operand="transpose", value=sd.name, limit="b16 element types",
                                 hint="transpose 8/32-bit data with the transposing mte_l1_l0a/b forms")
        if ss == "gm" or ds == "l1":
            raise IllegalOperand("transpose applies to L1 -> L0A/L0B loads only", op=op, operand="transpose",
                                 value=f"{ss}->{ds}",
                                 hint="move the fractals to L1 first (untransposed), then transpose them in "
                                      "the L1 -> L0A/L0B load")


def _verify_load2d(call, target):
    src, dst = call.operands[:2]
    _load2d_static(call.spec.asm_name, src, dst, call.clauses.get("transpose"))
    _require("load2d", target)


register(OpSpec(
    "load2d", "mte", lambda ops, cl: "MTE2" if getattr(ops[0], "space", "l1") == "gm" else "MTE1",
    operands=(Operand("src", "ptr", ("gm", "l1")), Operand("dst", "ptr", ("l0a", "l0b", "l1")),
              Operand("base_idx", "int", doc="first source fractal (512 B units) after %src"),
              Operand("repeat", "int", doc="fractals moved, 0..255 (0: nothing)"),
              Operand("src_stride", "int", doc="head-to-head source stride in fractals (0 repeats one fractal)"),
              Operand("dst_gap", "int", doc="fractals left free between destination fractals")),
    clauses=(Clause("transpose", "flag", doc="transpose each 16 x 16 b16 fractal (L1 -> L0 only)"),
             Clause("addr_dec", "flag", doc="source fractal index decreases: base_idx - r*src_stride")),
    execute=_exec_load2d, verify=_verify_load2d,
    doc="Load2D: repeat x 512-byte fractals, src fractal base_idx + r*src_stride -> dst + r*(1+dst_gap)*512"))


# ============================================================================ pto.img2col


#: The channel counts a Load3D v2 feature map may have, as ``channels mod C0`` per element width (bits):
#: CANN TIK ``check_load3dv2_channel_size`` ("ISA v7.9.3": float16 ``channel_size mod 16`` in {0, 4, 8}, b8
#: ``mod 32`` in {0, 4, 8, 16}) and Ascend C ``LoadData3DParamsV2.channelSize`` (half/bfloat16: 4, 8, N*16,
#: N*16+4, N*16+8; int8/uint8: 4, 8, 16, N*32, N*32+4, N*32+8, N*32+16; 32-bit: 4, N*8, N*8+4).
IMG2COL_CHANNEL_REMAINDERS = {8: (0, 4, 8, 16), 16: (0, 4, 8), 32: (0, 4)}

#: Named choice IMG2COL_MODELLED_CHANNELS (migration_guide/pto_cube.md, ``pto.img2col``): of those channel
#: counts only whole C0 blocks (``channels mod C0 == 0``, the ``[C1][H][W][C0]`` map) and the 16-bit 4-channel
#: "C04" map ``[1][H][W][4]`` (TIK conv2d's ``fm_shape [1, H, W, 4]``) are modelled. For the others (16-bit 8,
#: N*16+4, N*16+8; 8-bit 4, 8, 16, N*32+4/8/16; 32-bit 4, N*8+4) no public source says how the map lies in L1
#: (how the partial channel block is packed) and which K columns it fills, so they are `UnsupportedOp`, not
#: "illegal" (h_cube409; they were refused as "not a multiple of C0").
IMG2COL_MODELLED_CHANNELS = {16: (4,)}


def img2col_channel_status(d: DType, channels: int) -> str:
    """``"ok"`` (modelled), ``"unmodelled"`` (a Load3D v2 channel count the simulator does not model) or
    ``"illegal"`` for a ``channels``-channel map of ``d`` (`IMG2COL_CHANNEL_REMAINDERS`, `IMG2COL_MODELLED_CHANNELS`)."""
    r = channels % d.c0
    if r == 0 or channels in IMG2COL_MODELLED_CHANNELS.get(d.bits, ()):
        return "ok"
    return "unmodelled" if r in IMG2COL_CHANNEL_REMAINDERS.get(d.bits, ()) else "illegal"


def img2col_channel_rule(d: DType) -> str:
    """The allowed Load3D v2 channel counts of ``d``, in words (for error messages)."""
    return f"channels mod {d.c0} in {{{', '.join(map(str, IMG2COL_CHANNEL_REMAINDERS.get(d.bits, (0,))))}}}"


def img2col_matrix(src_elems: np.ndarray, d: DType, channels: int, rs: Raster, m0: int, m_ext: int, k0: int,
                   k_ext: int, pad, *, index_only: bool = False):
    """The ``m_ext x k_ext`` block of the im2col matrix starting at ``(m0, k0)``.

    ``src_elems`` is the whole feature map ``[C1][H][W][C0]`` flattened (typed). Returns
    ``(values, index, inside)``: values (``d`` storage), the source element index of
    each in-image entry and the in-image mask (for initialisation checks); ``index_only``: values None.
    The op itself gathers through `_img2col_plan` (this map, cached per call site, in fractal order).
    """
    c0 = d.c0 if channels % d.c0 == 0 else channels
    taps = rs.kh * rs.kw
    k = np.arange(k0, k0 + k_ext)
    cblk, r = np.divmod(k, taps * c0)
    p, c = np.divmod(r, c0)
    fh, fw = np.divmod(p, rs.kw)
    h0, w0 = rs.pixel(np.arange(m0, m0 + m_ext))
    h = h0[:, None] + (fh * rs.dh)[None, :]
    w = w0[:, None] + (fw * rs.dw)[None, :]
    valid_k = (k < taps * channels)[None, :]
    inside = (h >= 0) & (h < rs.h) & (w >= 0) & (w < rs.w) & valid_k
    index = ((cblk[None, :] * rs.h + h) * rs.w + w) * c0 + c[None, :]
    index = np.where(inside, index, 0)
    if index_only:
        return None, index, inside
    vals = np.where(inside, src_elems.take(index), np.where(valid_k, pad, np.zeros((), d.storage)))
    return vals.astype(d.storage, copy=False), index, inside


def _img2col_dst_outer(dst, target) -> str:
    if dst.space == "l0b":
        return "col"
    if dst.space == "l0a":
        return "row" if l0a_layout(target) == "Zz" else "col"
    return "row"


def _exec_img2col(ctx, src, dst, *args, **clauses):
    _img2col_apply(ctx, src, dst, _img2col_checks(ctx.target, src, dst, *args, **clauses), None)


def _img2col_checks(target, src, dst, fm_h, fm_w, channels, k_start, k_ext, m_start, m_ext, dst_stride, stride=None,
                    filter=None, dilation=None, pad=None, pad_value=None, transpose=None):  # noqa: A002 (clause name)
    """img2col's checks of its operands and clauses on ``target`` (they depend on nothing else), and what
    `_img2col_apply` needs: ``(d, lo, hi, plan arguments, pad value clause, fi, fj, strides)``."""
    op = "pto.img2col"
    _require("img2col", target)
    _img2col_static(op, src, dst, transpose)
    tr = bool(transpose)
    cl = {"stride": stride, "filter": filter, "dilation": dilation, "pad": pad}
    rs = _raster(op, cl, fm_h, fm_w)
    d = src.dtype
    ch = check_int(op, "%channels", channels, 1, 65535)
    status = img2col_channel_status(d, ch)
    if status == "illegal":
        raise IllegalOperand(f"%channels {ch} is not a Load3D channel count of {d.name} maps (mod {d.c0} = "
                             f"{ch % d.c0})", op=op, operand="%channels", value=ch, limit=img2col_channel_rule(d),
                             hint=f"store the map as [C1][H][W][{d.c0}] and pass %channels = C1*{d.c0}"
                                  + (" (or 4 for a 4-channel C04 map)" if d.bits == 16 else ""))
    if status == "unmodelled":
        raise UnsupportedOp(f"%channels {ch} of a {d.name} map is a Load3D v2 channel count ({img2col_channel_rule(d)}: "
                            f"Ascend C LoadData3DParamsV2.channelSize, CANN TIK check_load3dv2_channel_size) that is "
                            f"not modelled: no public source defines how such a map lies in L1 and which K columns "
                            f"it fills", op=op, operand="%channels", value=ch, limit=f"a multiple of {d.c0}"
                            + (" or 4" if d.bits == 16 else ""),
                            hint=f"pad the map's channels with zeros to {-(-ch // d.c0) * d.c0} ([C1][H][W][{d.c0}]) "
                                 f"and pass %channels = {-(-ch // d.c0) * d.c0}; zero channels add nothing to the "
                                 f"product when the matching weight rows are zero too")
    ks = check_int(op, "%k_start", k_start, 0, U16)
    ke = check_int(op, "%k_ext", k_ext, 1, U16)
    ms = check_int(op, "%m_start", m_start, rs.first_index(), U16,
                   hint=f"negative raster indices are rows above the padded map; the first row's window origin "
                        f"(ho*{rs.sh} - {rs.pt}) must be >= {WINDOW_ORIGIN_MIN}")
    me = check_int(op, "%m_ext", m_ext, 1, U16)
    ds = check_int(op, "%dst_stride", dst_stride, 1, U16)
    for name, v, unit in (("%k_start", ks, d.c0), ("%k_ext", ke, d.c0), ("%m_ext", me, 16)):
        if v % unit:
            raise IllegalOperand(f"{name} {v} is not a multiple of {unit}", op=op, operand=name, value=v,
                                 limit=f"multiple of {unit}", hint="the instruction writes whole fractals")
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, FRACTAL if dst.space in ("l0a", "l0b") else BLOCK, "%dst")
    outer = _img2col_dst_outer(dst, target)
    # fractal grid of the written matrix: X (M x K) or, transposed, X^T (K x M); `outer` walks its rows or columns
    rows_f, cols_f = (ke // d.c0, me // 16) if tr else (me // 16, ke // d.c0)
    inner_count = cols_f if outer == "row" else rows_f
    if ds < inner_count:
        block = ("K block row" if tr else "M block row") if outer == "row" else \
            ("M block column" if tr else "K block column")
        raise IllegalOperand(f"%dst_stride {ds} fractals is smaller than the {inner_count} fractals of one {block}",
                             op=op, operand="%dst_stride", value=ds, limit=f">= {inner_count}",
                             hint=f"pass %dst_stride >= {inner_count} (a {block} must not overlap the next)")
    c0 = d.c0 if ch % d.c0 == 0 else ch
    taps = rs.kh * rs.kw
    last_k = min(ks + ke, taps * ch) - 1
    cblocks = last_k // (taps * c0) + 1 if last_k >= ks else 1
    first_c = min(ks // (taps * c0), cblocks - 1)
    size = d.bits // 8
    plane = rs.h * rs.w * c0
    lo, hi = first_c * plane * size, cblocks * plane * size
    plan_args = (d.name, ch, (rs.h, rs.w, rs.kh, rs.kw, rs.sh, rs.sw, rs.dh, rs.dw, rs.pl, rs.pt, rs.wo),
                 ms, me, ks, ke, first_c * plane, outer, tr)
    fi, fj = (rows_f, cols_f) if outer == "row" else (cols_f, rows_f)
    return d, lo, hi, plan_args, pad_value, fi, fj, (ds * FRACTAL, FRACTAL)


def _img2col_apply(ctx, src, dst, checked: tuple, memo: Optional[list]) -> None:
    """img2col's data movement after `_img2col_checks` passed (``checked`` is its result); ``memo``: a bound
    op's list whose item 2 keeps the plan and pad value of the first run that got this far (None: made here)."""
    d, lo, hi, plan_args, pad_value, fi, fj, strides = checked
    data, written, _ = ctx.span_tracked(src, lo, hi, operand="%src")
    if memo is not None and memo[2] is not None:
        plan, pv = memo[2]
    else:
        plan = _img2col_plan(*plan_args)
        pv = _pad_value(0 if pad_value is None else pad_value[0][0], d) if plan.pad is not None else None
        if memo is not None:
            memo[2] = (plan, pv)
    if tracking(ctx) and not all_written(written):
        used = _flags(written, d).take(plan.index if plan.inside is None else plan.index[plan.inside])
        ctx.check_written(used, operand="%src", ptr=src, unit="element")
    hi = (fi - 1) * strides[0] + (fj - 1) * strides[1] + FRACTAL
    if IMG2COL_DENSE_DST and hi == fi * fj * FRACTAL:
        # fractals back to back (fractal (I, J) at (I * fj + J) * 512: the plan's order): gathered straight
        # into the destination, which is marked written as one known range (so the mad that reads the tile
        # needs no scan of its written map); the same bytes and flags as the general path below
        ddata, _ = ctx.span(dst, 0, hi, write=True, operand="%dst")
        _img2col_gather(data, plan, d, pv, ddata.view(d.storage))
        return
    vals = _img2col_gather(data, plan, d, pv, None)
    src_grid = vals.view(np.uint8).reshape(fi, fj, FRACTAL)
    ddata, dwr, _ = ctx.span_tracked(dst, 0, hi, write=True, operand="%dst")
    copy_fractals(strided(ddata, (fi, fj, FRACTAL), strides + (1,), True), src_grid)
    strided(dwr, (fi, fj, FRACTAL), strides + (1,), True)[...] = True


def _img2col_gather(data: np.ndarray, plan: "_Img2colPlan", d: DType, pv, out: Optional[np.ndarray]) -> np.ndarray:
    """The img2col block's elements in fractal order (``plan``), pad and zero lanes filled, from the source
    byte span ``data``; into ``out`` (C-contiguous, ``d.storage``, one entry per element) when given."""
    if plan.unit_index is not None:      # whole 32-byte channel vectors: gather C0 elements per index
        units = data.view(_C0_UNIT)
        if out is None:
            vals = units.take(plan.unit_index).view(d.storage)
        else:                            # mode="clip": no buffered copy (the plan's indices lie in the span)
            units.take(plan.unit_index, out=out.view(_C0_UNIT), mode="clip")
            vals = out
        rows = vals.reshape(-1, d.c0)
    else:
        elems = data.view(d.storage)
        if out is None:
            vals = elems.take(plan.index)
        else:
            elems.take(plan.index, out=out, mode="clip")
            vals = out
        rows = vals
    if plan.pad is not None:
        rows[plan.pad] = pv
    if plan.zero is not None:
        rows[plan.zero] = 0
    return vals


#: img2col whose destination fractals lie back to back marks the destination written as one known range
#: (`ExecContext.span` with ``write=True``) instead of through a strided view of its written map: the same
#: flags, and the mad that reads the tile next finds it written without a scan. Off: the general path
#: (tests/core/test_fast_paths.py compares the two).
IMG2COL_DENSE_DST = True

#: img2col with compile-time operands and clauses (`OpSpec.bind`) makes its checks once per target and keeps
#: its plan and pad value, instead of per run: the same checks (and errors, raised on every run that reaches
#: them), bytes, flags and reports. Off: every run goes through `_exec_img2col` (tests/core/test_fast_paths.py
#: compares the two).
IMG2COL_BIND = True


def _bind_img2col(args: tuple, clauses: dict):
    """`OpSpec.bind` of img2col: ``run(ctx)`` that checks once per target (`_img2col_checks`; a failing check
    is not memoised, so it raises again) and reuses the first successful run's plan."""
    if not IMG2COL_BIND:
        return None
    src, dst = args[0], args[1]
    memo = [None, None, None]               # target the checks passed for, their result, (plan, pad value)

    def run(ctx):
        if ctx.target is not memo[0]:
            checked = _img2col_checks(ctx.target, *args, **clauses)
            memo[0], memo[1], memo[2] = ctx.target, checked, None
        _img2col_apply(ctx, src, dst, memo[1], memo)
    return run

_C0_UNIT = np.dtype((np.void, BLOCK))    # one pixel's C0 channel vector (32 bytes) in a [C1][H][W][C0] map


class _Img2colPlan(NamedTuple):
    """Source element of every destination element of one img2col call, in destination fractal order.

    When every fractal row is one whole source channel vector (channels a multiple of C0, the
    usual case), ``unit_index`` gathers 32-byte vectors (C0 times fewer indices) and ``pad`` /
    ``zero`` count fractal rows; otherwise (C0 = 4 maps) ``unit_index`` is None and they count elements.
    """

    index: np.ndarray                  # int32 element index into the source span (0 where padding/zero)
    inside: Optional[np.ndarray]       # int32 positions whose value comes from the map (None: all of them)
    pad: Optional[np.ndarray]          # positions of padding pixels (None: none)
    zero: Optional[np.ndarray]         # positions of columns past the last channel (None: none)
    unit_index: Optional[np.ndarray]   # int32 32-byte vector index per fractal row (None: gather elements)


@functools.lru_cache(maxsize=64)
def _img2col_plan(dname: str, channels: int, geo: tuple, m0: int, m_ext: int, k0: int, k_ext: int, base: int,
                  outer: str, transpose: bool = False) -> _Img2colPlan:
    """`img2col_matrix`'s index map for one call site, permuted to the 16 x C0 fractals the call writes
    (``outer="row"``: fractal (I, J) = rows I, columns J in row-major fractal order, else column-major)
    and made relative to element ``base`` of the map; ``transpose`` (16-bit, C0 = 16): the fractals of
    the transposed block X^T, each fractal holding its 16 K rows x 16 M columns. At most 64 plans
    (<= 32 Ki int32 entries each for a 64 KiB L0A/L0B tile: ~10 MiB) are kept."""
    from ..dtypes import dtype as _dtype
    d = _dtype(dname)
    h, w, kh, kw, sh, sw, dh, dw, pl, pt, wo = geo
    rs = Raster.__new__(Raster)
    rs.h, rs.w, rs.kh, rs.kw, rs.sh, rs.sw, rs.dh, rs.dw, rs.pl, rs.pt, rs.wo = geo
    probe = np.zeros(1, d.storage)
    _, index, inside = img2col_matrix(probe, d, channels, rs, m0, m_ext, k0, k_ext, probe[0], index_only=True)
    c0 = d.c0
    valid_k = np.broadcast_to((np.arange(k0, k0 + k_ext) < kh * kw * channels)[None, :], inside.shape)
    fi, fj = m_ext // 16, k_ext // c0

    def frac(x):
        x = x.reshape(fi, 16, fj, c0)              # (M block, m, K block, k)
        if transpose:                              # X^T fractals: (K block, M block) order, k rows x m columns
            return (x.transpose(2, 0, 3, 1) if outer == "row" else x.transpose(0, 2, 3, 1)).reshape(-1)
        return (x.transpose(0, 2, 1, 3) if outer == "row" else x.transpose(2, 0, 1, 3)).reshape(-1)
    index, inside, valid_k = frac(np.where(inside, index - base, 0)), frac(inside), frac(valid_k)
    index = index.astype(np.int32)
    pad_mask, zero_mask = ~inside & valid_k, ~valid_k
    ins = None if inside.all() else np.flatnonzero(inside).astype(np.int32)
    rows = index.reshape(-1, c0)
    units = None
    if channels % c0 == 0 and base % c0 == 0 and not transpose:   # fractal rows are whole channel vectors
        in_rows = inside.reshape(-1, c0)[:, 0]
        uniform = all(np.array_equal(m.reshape(-1, c0), np.broadcast_to(m.reshape(-1, c0)[:, :1], (rows.shape)))
                      for m in (inside, valid_k))
        if uniform and np.array_equal(rows[in_rows], rows[in_rows, :1] + np.arange(c0, dtype=np.int32)) \
                and not (rows[in_rows, 0] % c0).any():
            units = (rows[:, 0] // c0).astype(np.int32)
            pad_mask, zero_mask = pad_mask.reshape(-1, c0)[:, 0], zero_mask.reshape(-1, c0)[:, 0]
    pad = np.flatnonzero(pad_mask).astype(np.int32)
    zero = np.flatnonzero(zero_mask).astype(np.int32)
    for a in (index, pad, zero) + (() if ins is None else (ins,)) + (() if units is None else (units,)):
        a.flags.writeable = False
    return _Img2colPlan(index, ins, pad if pad.size else None, zero if zero.size else None, units)


def _img2col_static(op, src, dst, transpose=None):
    check_ptr(op, "%src", src, ("l1",))
    check_ptr(op, "%dst", dst, ("l0a", "l0b", "ub"))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    if sd is not None and dd is not None and sd != dd:
        raise IllegalOperand(f"source and destination element types differ ({sd.name} vs {dd.name})", op=op,
                             operand="%dst", value=dd.name,
                             hint=f"declare %dst as {sd.name} (img2col copies elements without conversion)")
    if sd is not None and sd.bits not in (8, 16, 32):
        raise IllegalOperand(f"img2col moves 8/16/32-bit data, got {sd.name}", op=op, operand="%src", value=sd.name,
                             hint="img2col f16/bf16/f32 or 8-bit data")
    if transpose:
        ds = getattr(dst, "space", None)
        if ds is not None and ds not in ("l0a", "l0b"):
            raise IllegalOperand(f"transpose writes the transposed block into L0A or L0B only, not {ds}", op=op,
                                 operand="transpose", value=ds, limit="l0a, l0b",
                                 hint="drop transpose, or load into L0A / L0B")
        if sd is not None and sd.bits != 16:
            raise UnsupportedOp(f"transpose of {sd.name} im2col blocks is not modelled: only 16-bit data, whose "
                                f"16 x 16 fractals stay square when transposed, has a public definition",
                                op=op, operand="transpose", value=sd.name, limit="16-bit element types",
                                hint="transpose 8/32-bit matrices with the transposing load2d forms")


def _verify_img2col(call, target):
    op = call.spec.asm_name
    _img2col_static(op, *call.operands[:2], call.clauses.get("transpose"))
    for name in ("stride", "filter", "dilation", "pad"):
        _group(call.clauses, name, op, 2)
    _require("img2col", target)


register(OpSpec(
    "img2col", "mte", "MTE1",
    operands=(Operand("src", "ptr", ("l1",), doc="feature map [C1][H][W][C0] in L1"),
              Operand("dst", "ptr", ("l0a", "l0b", "ub")),
              Operand("fm_h", "int"), Operand("fm_w", "int"),
              Operand("channels", "int", doc="channels of the map (C1*C0), or 4 (C04 maps)"),
              Operand("k_start", "int", doc="first im2col column (multiple of C0)"),
              Operand("k_ext", "int", doc="columns written (multiple of C0)"),
              Operand("m_start", "int", doc="first output pixel (raster index)"),
              Operand("m_ext", "int", doc="rows (pixels) written, multiple of 16"),
              Operand("dst_stride", "int", doc="fractals between consecutive outer blocks of the destination")),
    clauses=_GEOMETRY_CLAUSES + (Clause("pad_value", "args", params=("%value",), doc="value of padding pixels"),
                                 Clause("transpose", "flag", doc="write X^T (K x M) instead of the M x K block, "
                                                                 "each 16 x 16 fractal transposed (16-bit data; "
                                                                 "L0A, or L0B: Zn of X)")),
    execute=_exec_img2col, verify=_verify_img2col, bind=_bind_img2col,
    doc="Load3D/img2col: an m_ext x k_ext block of the im2col matrix as 16 x C0 fractals (Zz in L0A/UB, Nz in L0B)"))


# ============================================================================ pto.col2img


def _exec_col2img(ctx, src, dst, fm_h, fm_w, fetch_w, fetch_h, left_top_w, left_top_h, repeat, stride=None,
                  filter=None, dilation=None, pad=None):  # noqa: A002
    op = "pto.col2img"
    _require("col2img", ctx.target)
    _col2img_static(op, src, dst)
    rs = _raster(op, {"stride": stride, "filter": filter, "dilation": dilation, "pad": pad}, fm_h, fm_w)
    fw = check_int(op, "%fetch_w", fetch_w, 0, rs.kw - 1)
    fh = check_int(op, "%fetch_h", fetch_h, 0, rs.kh - 1)
    lw = check_int(op, "%left_top_w", left_top_w, -255, 32767)
    lh = check_int(op, "%left_top_h", left_top_h, -255, 32767)
    rep = check_int(op, "%repeat", repeat, 0, U8)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    if rep == 0:
        return
    d = src.dtype
    m0 = rs.raster_index(op, lh, lw)
    pix, inside = col2img_walk(rs, fh, fw, m0, rep)
    n_src = rep * ROW * ROW
    sv = ctx.view(src, n_src, operand="%src").reshape(rep * ROW, ROW)[inside]
    pix = pix[inside]
    if pix.size == 0:
        return
    n_pix = int(pix.max()) + 1          # COL2IMG_DST_EXTENT_IS_WALK: only the pixels the walk adds into
    ddata, dwr, _ = ctx.span_tracked(dst, 0, d.nbytes(n_pix * ROW), write=True, operand="%dst")
    dv = ddata.view(d.storage).reshape(n_pix, ROW)
    if tracking(ctx):
        ctx.check_written(_flags(dwr, d).reshape(n_pix, ROW)[pix], operand="%dst", ptr=dst, unit="element")
    with np.errstate(over="ignore", invalid="ignore"):
        s = dv[pix].astype(np.float64) + sv.astype(np.float64)
    if ctx.machine.overflow_mode == "saturation":
        s = np.nan_to_num(np.clip(s, -float(d.max), float(d.max)), nan=0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        dv[pix] = s.astype(d.storage)


def col2img_walk(rs: Raster, fetch_h: int, fetch_w: int, m0: int, repeat: int) -> tuple:
    """The map pixels of a col2img walk: ``(pixel, inside)`` for the ``repeat * 16`` raster positions from
    raster index ``m0`` (kernel tap ``(fetch_h, fetch_w)``): ``pixel = h * W + w`` of each position and
    whether it lies in the map (positions outside are skipped)."""
    h0, w0 = rs.pixel(np.arange(m0, m0 + repeat * ROW))
    h, w = h0 + fetch_h * rs.dh, w0 + fetch_w * rs.dw
    return h * rs.w + w, (h >= 0) & (h < rs.h) & (w >= 0) & (w < rs.w)


def col2img_dst_elements(rs: Raster, fetch_h: int, fetch_w: int, m0: int, repeat: int) -> int:
    """Elements of the ``[H][W][16]`` UB map, from its start, that a col2img walk reads and writes: up to
    the last in-map pixel it adds into (0 when every position is outside the map). Named choice
    COL2IMG_DST_EXTENT_IS_WALK (tik_cube.md): the destination must hold these, not the whole map, as
    the instruction touches no other pixel (CANN's static col2im passes a one-row UB buffer with the
    full map height and a walk that stays in row 0)."""
    pix, inside = col2img_walk(rs, fetch_h, fetch_w, m0, repeat)
    return (int(pix[inside].max()) + 1) * ROW if inside.any() else 0


def _col2img_static(op, src, dst):
    check_ptr(op, "%src", src, ("ub",))
    check_ptr(op, "%dst", dst, ("ub",))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    for name, t in (("%src", sd), ("%dst", dd)):
        if t is not None and t.name not in ("f16", "f32"):
            raise IllegalOperand(f"col2img accumulates f16 or f32 data, got {t.name}", op=op, operand=name,
                                 value=t.name, limit="f16 | f32",
                                 hint="type the col2img pointers f16 or f32 (convert other data first)")
    if sd is not None and dd is not None and sd != dd:
        raise IllegalOperand(f"source and destination types differ ({sd.name} vs {dd.name})", op=op,
                             operand="%dst", value=dd.name, hint=f"declare %dst as {sd.name}")


def _verify_col2img(call, target):
    op = call.spec.asm_name
    _col2img_static(op, *call.operands[:2])
    for name in ("stride", "filter", "dilation", "pad"):
        _group(call.clauses, name, op, 2)
    _require("col2img", target)


register(OpSpec(
    "col2img", "vector", "V",
    operands=(Operand("src", "ptr", ("ub",), doc="repeat fractals of 16 pixels x 16 channels"),
              Operand("dst", "ptr", ("ub",), doc="feature map [H][W][16] (one C1 block), accumulated"),
              Operand("fm_h", "int"), Operand("fm_w", "int"),
              Operand("fetch_w", "int", doc="kernel column kw of the fractals"),
              Operand("fetch_h", "int", doc="kernel row kh of the fractals"),
              Operand("left_top_w", "int", doc="window origin (w) of the first pixel"),
              Operand("left_top_h", "int", doc="window origin (h) of the first pixel"),
              Operand("repeat", "int", doc="fractals (16 pixels each), 0..255")),
    clauses=_GEOMETRY_CLAUSES,
    execute=_exec_col2img, verify=_verify_col2img,
    doc="col2img: dst[h, w, :] += src pixel rows for one kernel tap (inverse of img2col), f16/f32"))


# ============================================================================ L0C <-> UB copies


#: (L0C type, UB type) -> conversion of `copy_matrix_cc_to_ubuf` (without / with deq).
CC_TO_UB = {("f32", "f32"): "copy", ("s32", "s32"): "copy", ("f16", "f16"): "copy", ("u32", "u32"): "copy",
            ("f32", "f16"): "f32_f16", ("f16", "f32"): "f16_f32", ("s32", "f16"): "deq"}


def _units(d: DType, row_mode: bool) -> tuple:
    """(burst unit, source gap unit) in bytes of a ``d`` L0C operand: fractal (or 16-element row) / fractal."""
    frac = 256 * (d.bits // 8)
    return (ROW * (d.bits // 8) if row_mode else frac), frac


def _relu(x: np.ndarray) -> np.ndarray:
    """``max(x, +0)``; NaN stays NaN (the vector ``vrelu`` rule)."""
    if x.dtype.kind in "iu":
        return np.maximum(x, 0).astype(x.dtype)
    return np.where(np.isnan(x) | (x > 0), x, np.zeros((), x.dtype))


def _round_to(x: np.ndarray, d: DType, ctx) -> np.ndarray:
    if ctx.machine.overflow_mode == "saturation":
        big = float(d.max)
        x = np.nan_to_num(np.clip(x, -big, big), nan=0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(d.storage)


def _exec_cc_to_ub(ctx, src, dst, nburst, burst_len, src_gap, dst_gap, row_mode=None, deq=None, relu=None):
    op = "pto.copy_matrix_cc_to_ubuf"
    _require("copy_matrix_cc_to_ubuf", ctx.target)
    conv = _cc_to_ub_static(op, src, dst, deq is not None)
    n = check_int(op, "%nburst", nburst, 1, 4095)
    bl = check_int(op, "%burst_len", burst_len, 1, U16)
    sg = check_int(op, "%src_gap", src_gap, 0, U16)
    dg = check_int(op, "%dst_gap", dst_gap, 0, U16)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    sd, dd = src.dtype, dst.dtype
    unit, gap_unit = _units(sd, bool(row_mode))
    row_src = bl * unit
    count = row_src // (sd.bits // 8)
    row_dst = dd.nbytes(count)
    s_step, d_step = row_src + sg * gap_unit, row_dst + dg * BLOCK
    sdata, sw, _ = ctx.span_tracked(src, 0, (n - 1) * s_step + row_src, operand="%src")
    x = np.ascontiguousarray(strided(sdata, (n, row_src), (s_step, 1))).view(sd.storage)
    if tracking(ctx):
        ctx.check_written(np.ascontiguousarray(strided(sw, (n, row_src), (s_step, 1))), operand="%src", ptr=src)
    if conv == "copy":
        y = x
    elif conv == "f16_f32":
        y = x.astype(np.float32)
    elif conv == "f32_f16":
        with np.errstate(over="ignore", invalid="ignore"):
            y = _round_to(x.astype(np.float64), dd, ctx)
    else:
        scale = _deq_scales(ctx, deq[0][0], op)
        with np.errstate(over="ignore", invalid="ignore"):
            prod = x.reshape(n, -1, ROW).astype(np.float64) * scale
            y = _round_to(prod, dd, ctx).reshape(n, -1)
    if relu:
        y = _relu(y)
    ddata, dw, _ = ctx.span_tracked(dst, 0, (n - 1) * d_step + row_dst, write=True, operand="%dst")
    strided(ddata, (n, row_dst), (d_step, 1), True)[...] = np.ascontiguousarray(y).view(np.uint8).reshape(n, row_dst)
    strided(dw, (n, row_dst), (d_step, 1), True)[...] = True


def _deq_scales(ctx, scale, op) -> np.ndarray:
    """One f16 scale (scalar deq) or the 16 per-channel f16 scales at a UB pointer (vdeq), as float64."""
    from ..memory import Ptr
    if isinstance(scale, Ptr):
        if scale.space != "ub" or scale.dtype.name != "f16":
            raise IllegalOperand(f"vector deq scales must be 16 f16 values in UB, got {scale.type_str}", op=op,
                                 operand="deq", value=scale.type_str, limit="!pto.ptr<f16, ub>",
                                 hint="pass the deq scales as a !pto.ptr<f16, ub> to 16 f16 values in UB")
        ctx.check_aligned(scale, BLOCK, "deq")
        return ctx.view(scale, ROW, operand="deq").astype(np.float64)
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.integer, np.floating)):
        raise IllegalOperand(f"deq scale must be a number or a UB pointer, got {scale!r}", op=op, operand="deq",
                             value=repr(scale), hint="pass deq as a Python float or a UB pointer to the f16 scales")
    with np.errstate(over="ignore"):
        return np.float64(np.float16(scale))


def _cc_to_ub_static(op, src, dst, has_deq: bool) -> Optional[str]:
    check_ptr(op, "%src", src, ("l0c",))
    check_ptr(op, "%dst", dst, ("ub",))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    if sd is None or dd is None:
        return None
    conv = CC_TO_UB.get((sd.name, dd.name))
    if conv is None:
        raise IllegalOperand(f"L0C {sd.name} -> UB {dd.name} is not a copy_matrix_cc_to_ubuf conversion", op=op,
                             operand="%dst", value=f"{sd.name}->{dd.name}",
                             limit=", ".join(f"{a}->{b}" for a, b in CC_TO_UB),
                             hint="type the L0C source and UB destination as one of the pairs " +
                                  ", ".join(f"{a}->{b}" for a, b in CC_TO_UB))
    if (conv == "deq") != has_deq:
        raise IllegalOperand("s32 -> f16 needs deq(scale) and deq applies only to s32 -> f16" if conv == "deq"
                             else f"deq applies to s32 -> f16, not {sd.name} -> {dd.name}", op=op, operand="deq",
                             value=f"{sd.name}->{dd.name}", hint="deq=(scale,) with an f16 scale or a UB pointer "
                                                                  "to 16 f16 per-channel scales")
    return conv


def _verify_cc_to_ub(call, target):
    _cc_to_ub_static(call.spec.asm_name, call.operands[0], call.operands[1], "deq" in call.clauses)
    _require("copy_matrix_cc_to_ubuf", target)


register(OpSpec(
    "copy_matrix_cc_to_ubuf", "mte", "V",
    operands=(Operand("src", "ptr", ("l0c",)), Operand("dst", "ptr", ("ub",)),
              Operand("nburst", "int", doc="bursts, 1..4095"),
              Operand("burst_len", "int", doc="source fractals (16 x 16 elements) per burst; rows with row_mode"),
              Operand("src_gap", "int", doc="source fractals skipped after each burst"),
              Operand("dst_gap", "int", doc="32-byte UB blocks skipped after each burst")),
    clauses=(Clause("row_mode", "flag", doc="burst unit = one 16-element L0C row (instead of a 16 x 16 fractal)"),
             Clause("deq", "args", params=("%scale",), doc="s32 -> f16: f16(x*scale); scale an f16 value, or a UB "
                                                            "pointer to 16 f16 per-channel scales (vdeq)"),
             Clause("relu", "flag", doc="max(x, +0) after the conversion")),
    execute=_exec_cc_to_ub, verify=_verify_cc_to_ub,
    doc="L0C -> UB fractal copy (v100/v200): plain, f32->f16, f16->f32, s32->f16 deq/vdeq, optional relu"))


def _exec_ub_to_cc(ctx, src, dst, nburst, burst_len, src_gap, dst_gap):
    op = "pto.copy_matrix_ubuf_to_cc"
    _require("copy_matrix_ubuf_to_cc", ctx.target)
    _ub_to_cc_static(op, src, dst)
    n = check_int(op, "%nburst", nburst, 1, 4095)
    bl = check_int(op, "%burst_len", burst_len, 1, U16)
    sg = check_int(op, "%src_gap", src_gap, 0, U16)
    dg = check_int(op, "%dst_gap", dst_gap, 0, U16)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    sd, dd = src.dtype, dst.dtype
    frac = 256 * (dd.bits // 8)
    count = bl * 256
    row_src, row_dst = sd.nbytes(count), bl * frac
    s_step, d_step = row_src + sg * BLOCK, row_dst + dg * frac
    sdata, sw, _ = ctx.span_tracked(src, 0, (n - 1) * s_step + row_src, operand="%src")
    x = np.ascontiguousarray(strided(sdata, (n, row_src), (s_step, 1)))
    fl = np.ascontiguousarray(strided(sw, (n, row_src), (s_step, 1)))
    if sd != dd:
        y = x.view(sd.storage).astype(np.float32).view(np.uint8).reshape(n, row_dst)
        fl = np.repeat(_flags(fl.reshape(-1), sd).reshape(n, count), 4, axis=1)
    else:
        y = x
    ddata, dw, _ = ctx.span_tracked(dst, 0, (n - 1) * d_step + row_dst, write=True, operand="%dst")
    strided(ddata, (n, row_dst), (d_step, 1), True)[...] = y
    strided(dw, (n, row_dst), (d_step, 1), True)[...] = fl if tracking(ctx) else True


def _ub_to_cc_static(op, src, dst):
    check_ptr(op, "%src", src, ("ub",))
    check_ptr(op, "%dst", dst, ("l0c",))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    if sd is not None and dd is not None and sd != dd and (sd.name, dd.name) != ("f16", "f32"):
        raise IllegalOperand(f"UB {sd.name} -> L0C {dd.name} is not supported", op=op, operand="%dst",
                             value=f"{sd.name}->{dd.name}", limit="same type, or f16 -> f32",
                             hint=f"declare the L0C destination as {sd.name} (or f32 for f16 data)")


def _verify_ub_to_cc(call, target):
    _ub_to_cc_static(call.spec.asm_name, *call.operands[:2])
    _require("copy_matrix_ubuf_to_cc", target)


register(OpSpec(
    "copy_matrix_ubuf_to_cc", "mte", "V",
    operands=(Operand("src", "ptr", ("ub",)), Operand("dst", "ptr", ("l0c",)),
              Operand("nburst", "int", doc="bursts, 1..4095"),
              Operand("burst_len", "int", doc="L0C fractals (16 x 16 elements) per burst"),
              Operand("src_gap", "int", doc="32-byte UB blocks skipped after each burst"),
              Operand("dst_gap", "int", doc="L0C fractals skipped after each burst")),
    execute=_exec_ub_to_cc, verify=_verify_ub_to_cc,
    doc="UB -> L0C fractal copy (v100/v200); f16 -> f32 widens exactly"))


#: (src, dst) element types of pto.broadcast_ub_to_cc: same type, or f16 rows widened exactly to f32
#: (the ``broadcast_ub_to_cc(float *dst, half *src, ...)`` form; TIK mmad_broadcast ``f32f16``).
BROADCAST_TYPES = (("f16", "f16"), ("f32", "f32"), ("s32", "s32"), ("f16", "f32"))


def _exec_broadcast(ctx, src, dst, nburst, burst_len, src_gap, dst_gap, repeat=None):
    op = "pto.broadcast_ub_to_cc"
    _require("broadcast_ub_to_cc", ctx.target)
    _broadcast_static(op, src, dst)
    n = check_int(op, "%nburst", nburst, 1, U8)
    bl = check_int(op, "%burst_len", burst_len, 1, U8)
    sg = check_int(op, "%src_gap", src_gap, 0, U8)
    dg = check_int(op, "%dst_gap", dst_gap, 0, U8)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    sd, dd = src.dtype, dst.dtype
    row = ROW * (sd.bits // 8)                     # one 16-element source row, in bytes
    frac = 256 * (dd.bits // 8)                    # one L0C fractal of the destination type
    rows_per_burst = 1 if repeat else bl           # repeat: one row per burst fills all its fractals
    s_step, d_step = rows_per_burst * row + sg * BLOCK, (bl + dg) * frac
    sdata, sw, _ = ctx.span_tracked(src, 0, (n - 1) * s_step + rows_per_burst * row, operand="%src")
    shape, steps = (n, rows_per_burst, row), (s_step, row, 1)
    rows = np.ascontiguousarray(strided(sdata, shape, steps)).view(sd.storage).reshape(n, rows_per_burst, ROW)
    if tracking(ctx):
        ctx.check_written(np.ascontiguousarray(strided(sw, shape, steps)), operand="%src", ptr=src)
    if sd != dd:
        rows = rows.astype(dd.storage)             # f16 -> f32 is exact
    rows = np.broadcast_to(rows, (n, bl, ROW))     # repeat: the burst's one row for each of its fractals
    ddata, dw, _ = ctx.span_tracked(dst, 0, (n - 1) * d_step + bl * frac, write=True, operand="%dst")
    out = strided(ddata, (n, bl, ROW, ROW * (dd.bits // 8)), (d_step, frac, ROW * (dd.bits // 8), 1), True)
    vals = np.ascontiguousarray(np.broadcast_to(rows[:, :, None, :], (n, bl, ROW, ROW)), dtype=dd.storage)
    out[...] = vals.view(np.uint8).reshape(out.shape)
    strided(dw, (n, bl, frac), (d_step, frac, 1), True)[...] = True


def _broadcast_static(op, src, dst):
    check_ptr(op, "%src", src, ("ub",))
    check_ptr(op, "%dst", dst, ("l0c",))
    sd, dd = getattr(src, "dtype", None), getattr(dst, "dtype", None)
    if sd is not None and dd is not None and (sd.name, dd.name) not in BROADCAST_TYPES:
        raise IllegalOperand(f"broadcast_ub_to_cc moves f16, f32 or s32 rows of one type (or f16 rows into f32), "
                             f"got {sd.name} -> {dd.name}", op=op, operand="%dst", value=f"{sd.name}->{dd.name}",
                             limit=", ".join(f"{a}->{b}" for a, b in BROADCAST_TYPES),
                             hint="type the UB source and L0C destination as one of the pairs " +
                                  ", ".join(f"{a}->{b}" for a, b in BROADCAST_TYPES))


def _verify_broadcast(call, target):
    _broadcast_static(call.spec.asm_name, *call.operands[:2])
    _require("broadcast_ub_to_cc", target)


register(OpSpec(
    "broadcast_ub_to_cc", "mte", "V",
    operands=(Operand("src", "ptr", ("ub",)), Operand("dst", "ptr", ("l0c",)),
              Operand("nburst", "int", doc="bursts, 1..255"),
              Operand("burst_len", "int", doc="L0C fractals per burst, 1..255; each is one 16-element row "
                                              "repeated over its 16 rows"),
              Operand("src_gap", "int", doc="32-byte UB blocks skipped after each burst's rows, 0..255"),
              Operand("dst_gap", "int", doc="L0C fractals skipped after each burst, 0..255")),
    clauses=(Clause("repeat", "flag", doc="one source row per burst fills all burst_len fractals (the config "
                                          "word's enable-repeat bit; TIK mmad_broadcast repeat_mode=1)"),),
    execute=_exec_broadcast, verify=_verify_broadcast,
    doc="UB -> L0C broadcast (v100/v200): each 16-element UB row fills all 16 rows of one L0C fractal "
        "(f16/f32/s32 rows, or f16 rows widened to f32)"))


__all__ = ["AVAILABILITY", "available", "Raster", "img2col_matrix", "CC_TO_UB", "BROADCAST_TYPES"]
