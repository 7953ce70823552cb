"""Legacy TIK ``fixpipe(dst, src, cburst_num, burst_len, dst_stride, src_stride, extend_params)``.

Semantics (seed 002, tik_api.md §8.4; the independent reference model is
``tbe_compat/legacy_fixpipe.py``)::

    howo = burst_len*32 / sizeof(src) / 16,  round_howo = ceil(howo/16)*16
    src block c at element c*(round_howo*16 + src_stride*256)      (src_stride: 256-element units)
    dst block c at element c*(howo*16 + dst_stride*32/sizeof(dst))  (dst_stride: 32-byte units)
    dst[c, p, j] = relu(quantize(src[c, p, j] + bias[c*16+j] + ewa[c, p, j]))   p < howo

Lowering (one choice per call, made from the call's static arguments; details and the
reasons in ``migration_guide/tik_cube.md``):

* **FIXPIPE** -- ``pto.mte_l0c_gm`` (normal NZ layout: ``m = howo`` rows, ``n = 16`` x
  blocks, ``%src_stride = round_howo + 16*src_stride`` L0C rows, ``%dst_stride = howo*16 +
  dst_stride*32/sizeof(dst)`` elements), at most 255 blocks per op: plain copies,
  ``fp322fp16`` (``pre_quant f32_f16``), ``int322fp16`` with an immediate scale that is a
  positive finite float16 (``deqf16_scalar``), and -- on the chips whose fixpipe *is* the
  FIXPIPE unit (Ascend910B/310B) -- ``relu`` (``pre_relu normal_relu``). These reproduce
  the legacy results bit for bit.
* **vector composition** (v100/v200 chips, as TIK's own fixpipe macro): L0C -> UB with
  ``pto.copy_matrix_cc_to_ubuf`` (with ``deq``/vector ``deq``/``relu`` fused when there is
  no addition), bias / element-wise-add with ``pto.ub.vadd``, the conversion with
  ``pto.ub.vconv``, UB -> GM with ``pto.mte_ub_gm``. Used where one FIXPIPE op differs
  from the legacy result: the bias / element-wise-add are applied *before* the
  conversion with their own rounding (FIXPIPE has no such stage, and a bias-table mad
  adds the bias inside the sum); float16 scales that are negative, zero or infinite
  (FIXPIPE scales are positive normal FP19 numbers); ``relu`` on v100/v200 (the legacy
  ReLU turns ``-0`` into ``+0``, FIXPIPE ``normal_relu`` keeps ``-0``); a float16
  ``Scalar`` scale (its sign is only known at run time).

Every PTO statement of one call carries the call's ``file:line`` and ``tik.fixpipe``;
`FixpipeCall` records (``tik_instance.fixpipe_calls``) give a comparison tool the
normalised arguments, the L0C source and destination byte ranges and the statements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pto_core.errors import OutOfBounds, Provenance, UnknownName, UnsupportedOp
from pto_core.ops import legacy_cube
from pto_core.ops.fixpipe import SAME_TYPE_SATURATES

from .. import platform
from .api import has_key, tik_api
from .cube_common import CubeBase, at, ceil_div, ceil_to, codes, l0c_align
from .scalar import Expr
from .tensor import Tensor

EXTEND_KEYS = ("bias", "element-wise-add", "quantize_params", "relu")
QUANT_MODES = {"int322fp16": ("s32", "f16"), "fp322fp16": ("f32", "f16")}
#: chips whose fixpipe may write UB (tik_api.md §8.4)
DST_UB_SOCS = ("Ascend310B", "Ascend610Lite", "Hi3796CV300CS", "SD3403")
HISI_SOCS = ("Hi3796CV300CS", "SD3403")
#: chip families whose TIK fixpipe is the FIXPIPE hardware unit (FixPipeImplV2): extend_params keys
#: quantize_params and relu only (CANN 8.1 fixpipe_v2.py)
FIXPIPE_FAMILIES = ("v220", "v300")
MAX_BLOCKS_PER_OP = 255          # n = 16 * blocks <= 4095 (FIXPIPE %n field)
#: The ``sat`` clause of a plain fixpipe (no quantize_params, no relu, no atomic add) whose L0C type is one that
#: PTO FIXPIPE converts even to the same type (``fixpipe.SAME_TYPE_SATURATES``: the float16 L0C of Hi3796CV300CS /
#: SD3403). Legacy TIK copies such a result: inf, NaN (with its payload) and -0 held in L0C reach dst unchanged,
#: as the reference model writes them (legacy_fixpipe.md choice 8, "a plain copy does no arithmetic"). Under the
#: chip's inherited ``sat`` (saturation mode) FIXPIPE would write +-65504 and 0 instead, so these copies are
#: lowered with ``nosat`` (``sat=False``), which keeps the bytes (fixpipe_semantics.md #8; review457).
PLAIN_COPY_SAT = False


#: the units of fixpipe's block arguments, said in the Fix of a src / dst extent overflow (user440: the
#: overflow's Fix was data_move's "check nburst/burst/strides" advice, which names none of fixpipe's arguments)
FIXPIPE_SRC_UNITS = ("cburst_num counts 16-channel blocks, burst_len 32-byte units of one block's L0C rows, "
                     "src_stride 256-element fractals between blocks (reserved: pass 0)")
FIXPIPE_DST_UNITS = ("dst_stride counts 32-byte units of dst between the end of one block (howo*16 elements) and "
                     "the start of the next: 0 writes the blocks back to back")


def fixpipe_src_fit_hint(cb: int, rh: int, ss: int, avail, ssize: int) -> str:
    """The Fix of a fixpipe whose L0C ``src`` is too small: what fits in the ``avail`` bytes from its
    start, for the call's own ``burst_len`` (how many blocks) and its own ``cburst_num`` (how many rows)."""
    if avail is None:
        return FIXPIPE_SRC_UNITS
    elems = avail // ssize
    blk = rh * 16 + ss * 256
    fits = []
    if elems >= rh * 16:
        fits.append(f"with this burst_len (round_howo {rh} rows) at most {(elems - rh * 16) // blk + 1} block(s) "
                    f"fit: cburst_num <= {(elems - rh * 16) // blk + 1}")
    rows = (elems - (cb - 1) * ss * 256) // (16 * cb) // 16 * 16 if elems > (cb - 1) * ss * 256 else 0
    if rows >= 16:
        fits.append(f"with cburst_num {cb}{'' if ss == 0 else f' and src_stride {ss}'} at most {rows} rows per "
                    f"block fit: burst_len <= {rows}*16*{ssize}/32 = {rows * 16 * ssize // 32}")
    if ss:
        fits.append("src_stride is documented as reserved: pass 0")
    where = f"src holds {elems} elements from its start"
    return f"{where}; " + ("; ".join(fits) if fits else "not one block of these rows fits") + f" ({FIXPIPE_SRC_UNITS})"


def fixpipe_dst_fit_hint(cb: int, howo: int, ds: int, avail, dsize: int) -> str:
    """The Fix of a fixpipe whose ``dst`` is too small for ``cb`` blocks of ``howo`` rows ``ds`` apart."""
    if avail is None:
        return FIXPIPE_DST_UNITS
    elems = avail // dsize
    fits = []
    if cb > 1 and elems >= cb * howo * 16:
        gap = ((elems - howo * 16) // (cb - 1) - howo * 16) * dsize // 32
        fits.append(f"with cburst_num {cb} and burst_len as given, dst_stride <= {gap}"
                    + (f" (it is {ds}: {ds * 32 // dsize} elements of gap after each block)" if ds else ""))
    if elems >= howo * 16:
        fits.append(f"with this dst_stride at most {(elems - howo * 16) // (howo * 16 + ds * 32 // dsize) + 1} "
                    f"block(s) of {howo} rows fit")
    where = f"dst holds {elems} elements from its start"
    return f"{where}; " + ("; ".join(fits) if fits else f"not one block of {howo} rows fits") + f" ({FIXPIPE_DST_UNITS})"
MAX_TILE_ROWS = 512              # vector path: rows of 16 channels per UB tile


@dataclass
class FixpipeCall:
    """One traced TIK ``fixpipe`` call (simulator extension; ``tik_instance.fixpipe_calls``).

    Attributes:
        where: the call's provenance (``file:line``, ``tik.fixpipe``).
        chip: the selected SoC when the call was traced.
        src, dst: the TIK tensor views passed (``src.storage`` / ``dst.storage`` locate them).
        cburst_num, burst_len, dst_stride, src_stride: the immediates.
        extend_params: normalised ``{"bias", "element-wise-add", "quantize_params", "relu"}``
            (absent keys as None / False; ``quantize_params`` = ``{"mode", "mode_param"}`` or None;
            tensors as `Tensor` views, a Scalar ``mode_param`` as the TIK ``Scalar``/``Expr``, an
            immediate as the Python float).
        howo, round_howo: rows per block (valid / allocated).
        src_bytes / dst_bytes: ``(storage, first byte offset, byte count)`` the lowered ops read
            from L0C / may write (None offset when not static).
        lowering: ``"fixpipe"`` (``pto.mte_l0c_gm`` ops), ``"fixpipe_l1_ub"`` (FIXPIPE to L1, then
            ``pto.mte_l1_ub``) or ``"vector"`` (L0C -> UB copy, vector ops, UB -> GM/UB).
        statements: the program statements this call recorded, in order (including auto-sync
            flags); all carry ``where`` as provenance.
    """

    where: Provenance
    chip: str
    src: Any
    dst: Any
    cburst_num: int
    burst_len: int
    dst_stride: int
    src_stride: int
    extend_params: dict
    howo: int
    round_howo: int
    src_bytes: tuple
    dst_bytes: tuple
    lowering: str = ""
    statements: list = field(default_factory=list)


class _Args:
    """A checked call (internal)."""

    __slots__ = ("s", "d", "cb", "bl", "ds", "ss", "howo", "rh", "bias", "ewa", "mode", "scale", "scale_kind",
                 "relu", "src_blk", "dst_blk", "soc")


#: What to write instead of a legacy ``extend_params`` key the FIXPIPE unit (910B/310B) has no stage for.
FIXPIPE_UNIT_EXTRA_HINTS = {
    "bias": "add the bias in the matmul/conv2d (bias=...) or with vector instructions",
    "element-wise-add": "add the tensor with vector instructions: fixpipe to float32, vec_add, then vec_conv to "
                        "float16 (the legacy order is add, then quantize)",
}


#: What to write instead of a Scalar ``mode_param`` on the FIXPIPE unit (910B/310B): an immediate, or the new
#: FIXPIPE op written directly, which takes the TIK Scalar as its scale payload (used at FP19; a float16
#: Scalar's value exactly, fixpipe_semantics.md #4, #20).
FIXPIPE_UNIT_SCALAR_SCALE_HINT = ("use a float immediate scale, or write the FIXPIPE op in place of the fixpipe with "
                                  "the Scalar as its scale: pto.mte_l0c_gm(src.pto_ptr(), dst.pto_ptr(), m, n, "
                                  "src_stride, dst_stride, 0, 0, pre_quant=(scalar, {'mode': 'deqf16_scalar'})) "
                                  "(tik-compare-fixpipe --new-fixpipe prints that call for an immediate's fixpipe)")


#: What to write instead of a per-channel float16 Tensor ``mode_param`` on the FIXPIPE unit (910B/310B): one
#: scale for every channel is an immediate; per-channel scales are applied in UB (h_author290: the old hint
#: named only the immediate, which drops the per-channel scales).
FIXPIPE_UNIT_TENSOR_SCALE_HINT = ("use a float immediate scale (one for all channels); for per-channel scales "
                                  "fixpipe the int32 result without quantize_params and scale it in UB: vconv "
                                  "s322f32, vmul by the scales, vconv f322f16")


class FixpipeAPI(CubeBase):
    """The legacy ``fixpipe`` (mixin of `tbe_compat.tik.Tik` through `cube.CubeAPI`)."""

    @tik_api("fixpipe")
    def fixpipe(self, dst, src, cburst_num, burst_len, dst_stride, src_stride, extend_params=None):
        """Post-process an L0C cube result and write it to GM (see module doc)."""
        a = self._fixpipe_check(dst, src, cburst_num, burst_len, dst_stride, src_stride, extend_params)
        blk = self._builder._blocks[-1]
        first = len(blk)
        kind = self._fixpipe_kind(a)
        if kind == "fixpipe":
            self._fixpipe_direct(a)
        elif kind == "fixpipe_l1_ub":
            self._fixpipe_via_l1(a)
        else:
            self._fixpipe_vector(a)
        ext = {"bias": a.bias.tensor if a.bias is not None else None,
               "element-wise-add": a.ewa.tensor if a.ewa is not None else None,
               "quantize_params": None if a.mode is None else {
                   "mode": a.mode, "mode_param": a.scale.tensor if a.scale_kind == "tensor" else a.scale},
               "relu": a.relu}
        s_size, d_size = a.s.dt.bits // 8, a.d.dt.bits // 8
        src_n = ((a.cb - 1) * a.src_blk + a.rh * 16) * s_size
        dst_n = ((a.cb - 1) * a.dst_blk + a.howo * 16) * d_size
        call = FixpipeCall(self._where, a.soc.soc_version, a.s.tensor, a.d.tensor, a.cb, a.bl, a.ds, a.ss, ext,
                           a.howo, a.rh, (a.s.tensor.storage, a.s.static_byte_offset, src_n),
                           (a.d.tensor.storage, a.d.static_byte_offset, dst_n), kind, list(blk[first:]))
        self.fixpipe_calls.append(call)

    @property
    def fixpipe_calls(self) -> list:
        """Every traced ``fixpipe`` call, in program order (`FixpipeCall`)."""
        calls = self.__dict__.get("_fixpipe_calls")
        if calls is None:
            calls = self.__dict__["_fixpipe_calls"] = []
        return calls

    # ------------------------------------------------------------------ checks (seed 002, tik_api.md §8.4)
    def _fixpipe_check(self, dst, src, cburst_num, burst_len, dst_stride, src_stride, extend_params) -> _Args:
        soc = platform.current_soc()
        short = soc.short_soc_version
        if isinstance(src, Tensor) and src.space == "l1":
            raise self._error("fixpipe reads the cube result from L0C (scope_cbuf_out), not L1", operand="src",
                              value=src.name, hint="let matmul/conv2d write an L0C tensor and pass that one")
        s = self._operand(src, "src", spaces=("l0c",))
        if isinstance(dst, Tensor) and dst.tik is self and dst.space == "ub" and short not in DST_UB_SOCS:
            raise self._error(f"dst must be in GM (scope_gm) on {soc.soc_version} {soc.core_type}, got tensor "
                              f"{dst.name!r} in UB (scope_ubuf): fixpipe writes UB only on the "
                              f"{', '.join(DST_UB_SOCS[:-1])} and {DST_UB_SOCS[-1]} SoCs (e.g. Ascend310B1)",
                              operand="dst", value=dst.scope, limit="gm",
                              hint="pass a tensor declared in GM (scope_gm) and data_move it to UB, or select one "
                                   "of those SoCs")
        d = self._operand(dst, "dst", spaces=("gm", "ub") if short in DST_UB_SOCS else ("gm",))
        self._require_support("tik.fixpipe", codes(s.dt, d.dt))
        s.check_aligned(l0c_align(s.dt))
        a = _Args()
        a.s, a.d, a.soc = s, d, soc
        a.cb = self._cube_imm(cburst_num, "cburst_num", 1, 4095, hint="cburst_num = Cout/16 (conv2d) or N1 (matmul)")
        a.bl = self._cube_imm(burst_len, "burst_len", 1, 65535,
                         hint="burst_len = howo*16*sizeof(src)/32 (conv2d) or m*16*sizeof(src)/32 (matmul)")
        a.ds = self._cube_imm(dst_stride, "dst_stride", 0, 65535, hint="dst_stride is in 32-byte units")
        a.ss = self._cube_imm(src_stride, "src_stride", 0, 65535, hint="src_stride is reserved: pass 0")
        ssize, dsize = s.dt.bits // 8, d.dt.bits // 8
        row = 16 * ssize
        if (a.bl * 32) % row:
            raise self._error(f"burst_len {a.bl} x 32 B is not a whole number of {row}-byte rows of 16 "
                              f"{s.tensor.dtype} channels", operand="burst_len", value=a.bl,
                              limit=f"multiple of {row // 32 if row > 32 else 1}" if row >= 32 else "any",
                              hint=f"burst_len = rows * {row} / 32")
        a.howo = a.bl * 32 // row
        a.rh = ceil_to(a.howo, 16)
        a.src_blk = a.rh * 16 + a.ss * 256
        a.dst_blk = a.howo * 16 + a.ds * 32 // dsize
        ext = self._cube_extend_params(extend_params)
        fixpipe_unit = soc.profile.family in FIXPIPE_FAMILIES
        if fixpipe_unit:
            extra = [k for k in ("bias", "element-wise-add") if ext.get(k) is not None]
            if extra:
                raise self._error(f"fixpipe extend_params {extra[0]!r} is not supported on {soc.soc_version}: its "
                                  f"fixpipe is the FIXPIPE unit, which takes quantize_params and relu only",
                                  operand=extra[0], cls=UnsupportedOp, hint=FIXPIPE_UNIT_EXTRA_HINTS[extra[0]])
        pair = codes(s.dt, d.dt)
        a.bias = a.ewa = None
        a.mode = a.scale = a.scale_kind = None
        quant = ext.get("quantize_params")
        has_add = ext.get("bias") is not None or ext.get("element-wise-add") is not None
        hisi = short in HISI_SOCS
        if pair in ("s32f16", "f32f16"):
            if hisi and has_add:
                raise self._error(f"{short} fixpipe does not support bias or element-wise-add with {pair}",
                                  operand="extend_params", cls=UnsupportedOp,
                                  hint="add the bias with vector instructions after the fixpipe")
            if quant is None:
                mode = "int322fp16" if pair == "s32f16" else "fp322fp16"
                raise self._error(f"src {s.tensor.dtype} -> dst float16 needs extend_params['quantize_params'] "
                                  f"with mode {mode!r}", operand="quantize_params", limit=f"mode {mode!r}",
                                  hint=f"pass extend_params={{'quantize_params': {{'mode': {mode!r}, 'mode_param': "
                                       f"None}}}}")
        if ext.get("bias") is not None and ext.get("element-wise-add") is not None:
            raise self._error("bias and element-wise-add cannot be enabled together", operand="extend_params",
                              value="bias + element-wise-add", limit="at most one of bias, element-wise-add",
                              hint="keep one of them and add the other with vector instructions after the "
                                   "fixpipe")
        if quant is not None:
            self._cube_quant(a, quant, pair, has_add, hisi, fixpipe_unit)
        if ext.get("bias") is not None:
            a.bias = self._fixpipe_addend(ext["bias"], "bias", s, a.cb * 16, "cburst_num*16")
        if ext.get("element-wise-add") is not None:
            a.ewa = self._fixpipe_addend(ext["element-wise-add"], "element-wise-add", s, a.cb * a.rh * 16,
                                         "cburst_num*round_howo*16")
        a.relu = False
        if "relu" in ext:
            r = self._bool_arg(ext["relu"], "relu", hint="pass extend_params={'relu': True} (or False)")
            if hisi:
                raise self._error(f"{short} fixpipe does not support the 'relu' key", operand="relu", value=r,
                                  cls=UnsupportedOp, hint="drop the 'relu' key; apply ReLU with vector instructions")
            if r and has_add:
                raise self._error("relu is only supported when bias and element-wise-add are disabled",
                                  operand="relu", value=True, limit="relu=False with bias / element-wise-add",
                                  hint="drop 'relu' and apply ReLU to the fixpipe result with vector instructions")
            if r and a.scale_kind in ("immediate", "scalar"):
                raise self._error("relu is not supported with quantize mode 'int322fp16' and a Scalar/immediate "
                                  "mode_param", operand="relu", value=True,
                                  limit="relu=False with a Scalar/immediate deqscale",
                                  hint="use a float16 Tensor [16] mode_param to combine deq and relu")
            a.relu = r
        s.check_extent(((a.cb - 1) * a.src_blk + a.rh * 16) * ssize,
                       f"{a.cb} block(s) of round_howo={a.rh} rows (src_stride {a.ss})",
                       hint=fixpipe_src_fit_hint(a.cb, a.rh, a.ss, s.available_bytes(), ssize))
        need = ((a.cb - 1) * a.dst_blk + a.howo * 16) * dsize
        avail = d.available_bytes()
        if avail is not None and need > avail and a.ds == 0 and (avail // dsize) % (16 * a.cb) == 0:
            rows = avail // dsize // (16 * a.cb)
            raise self._error(f"dst tensor overflow: burst_len {a.bl} means howo = burst_len*32/(16*{ssize}) = "
                              f"{a.howo} rows per block ({need // dsize} elements), but dst has "
                              f"{avail // dsize} elements from its start ({a.cb} x {rows} x 16)", operand="dst",
                              value=need, limit=f"{avail} B", cls=OutOfBounds,
                              hint=f"burst_len counts 32-byte units of the L0C source rows: for {rows} rows pass "
                                   f"burst_len = {rows}*16*{ssize}/32 = {rows * 16 * ssize / 32:g}")
        d.check_extent(need, f"{a.cb} block(s) of howo={a.howo} rows (dst_stride {a.ds})",
                       hint=fixpipe_dst_fit_hint(a.cb, a.howo, a.ds, avail, dsize))
        if d.space == "ub":
            d.check_aligned(32)
        return a

    def _cube_extend_params(self, extend_params) -> dict:
        if extend_params is None:
            return {}
        if not isinstance(extend_params, dict):
            raise self._error(f"extend_params must be a dict or None, got {type(extend_params).__name__}",
                              operand="extend_params", value=type(extend_params).__name__, limit="dict",
                              hint="pass a dict such as {'relu': True} or None")
        unknown = [k for k in extend_params if k not in EXTEND_KEYS]
        if unknown:
            raise self._error(f"extend_params key {unknown[0]!r} is not supported", operand="extend_params",
                              value=unknown[0], limit="keys " + ", ".join(EXTEND_KEYS), cls=UnknownName,
                              hint="the supported keys are 'bias', 'element-wise-add', 'quantize_params', 'relu'")
        return extend_params

    def _cube_quant(self, a, quant, pair, has_add, hisi, fixpipe_unit):
        s = a.s
        if pair in ("s32s32", "f32f32", "f16f16"):
            raise self._error(f"quantize_params must be None when src and dst are both {s.tensor.dtype}",
                              operand="quantize_params", value=repr(quant), limit="None",
                              hint="pass quantize_params=None (or declare dst float16 to convert)")
        if not isinstance(quant, dict):
            raise self._error(f"quantize_params must be a dict, got {type(quant).__name__}",
                              operand="quantize_params", value=type(quant).__name__, limit="dict",
                              hint="pass {'mode': 'fp322fp16' or 'int322fp16', 'mode_param': ...}")
        if "mode" not in quant or "mode_param" not in quant:
            raise self._error("quantize_params must contain both 'mode' and 'mode_param'", operand="quantize_params",
                              value=sorted(quant), limit="keys 'mode', 'mode_param'",
                              hint="pass {'mode': 'fp322fp16', 'mode_param': None} (mode_param None unless the "
                                   "mode takes a scale)")
        mode = quant["mode"]
        if not has_key(QUANT_MODES, mode):
            raise self._error(f"quantize mode {mode!r} is not supported", operand="quantize_params.mode",
                              value=mode, limit="one of " + ", ".join(QUANT_MODES), cls=UnknownName,
                              hint="pass quantize_params={'mode': 'fp322fp16', 'mode_param': None} for float32 L0C "
                                   "or {'mode': 'int322fp16', 'mode_param': <float scale>} for int32 L0C (dst "
                                   "float16); leave quantize_params=None to keep the L0C type")
        ms, md = QUANT_MODES[mode]
        if (s.dt.name, a.d.dt.name) != (ms, md):
            raise self._error(f"quantize mode {mode!r} converts {ms} -> {md} but src/dst are {s.dt.name} -> "
                              f"{a.d.dt.name}", operand="quantize_params.mode", value=mode,
                              limit=f"src {ms}, dst {md}",
                              hint="mode 'fp322fp16' needs a float32 src, 'int322fp16' an int32 src; dst float16")
        a.mode = mode
        param = quant["mode_param"]
        if mode == "fp322fp16":
            if param is not None:
                raise self._error("mode 'fp322fp16' takes mode_param=None", operand="quantize_params.mode_param",
                                  value=type(param).__name__, limit="None",
                                  hint="pass 'mode_param': None (fp322fp16 takes no scale)")
            return
        if param is None:
            raise self._error("quantize mode 'int322fp16' needs a mode_param (float immediate, float16 Scalar or "
                              "float16 Tensor [16])", operand="quantize_params.mode_param",
                              limit="float / float16 Scalar / Tensor",
                              hint="pass a scale, e.g. 'mode_param': 1.0")
        if isinstance(param, Tensor):
            if has_add:
                raise self._error("a Tensor mode_param is only allowed without bias and element-wise-add; with them "
                                  "use a float immediate or a float16 Scalar", operand="quantize_params.mode_param",
                                  value="Tensor", limit="float / float16 Scalar when bias or element-wise-add is set",
                                  hint="pass a float immediate or a float16 Scalar scale, or apply the per-channel "
                                       "scales with vector instructions")
            t = self._operand(param, "quantize_params.mode_param", spaces=("l1",))
            if hisi:
                if t.tensor.dtype != "float32" or t.tensor.shape[0] != 2 * a.cb * 16:
                    raise self._error(f"on {a.soc.short_soc_version} the mode_param Tensor must be float32 with "
                                      f"shape [2*Cout] = [{2 * a.cb * 16}]", operand="quantize_params.mode_param",
                                      value=t.tensor.dtype, limit=f"float32 [{2 * a.cb * 16}]",
                                      hint=f"use a float immediate or a float16 Scalar scale on "
                                           f"{a.soc.short_soc_version} (its float32 [2*Cout] tensor form is not "
                                           f"modelled; the float16 [16] tensor is the Ascend310/910 form)")
                raise self._error("the per-channel layout of the float32 [2*Cout] deqscale tensor of "
                                  f"{a.soc.short_soc_version} is not documented", operand="quantize_params.mode_param",
                                  cls=UnsupportedOp, hint="use a float immediate or a float16 Scalar scale")
            if t.tensor.dtype != "float16":
                raise self._error(f"mode_param Tensor has dtype {t.tensor.dtype}; int322fp16 needs a float16 Tensor "
                                  f"[16] in L1", operand="quantize_params.mode_param", value=t.tensor.dtype,
                                  limit="float16", hint="declare the scale tensor float16 [16] in L1 (scope_cbuf)")
            t.check_aligned(32)
            t.check_extent(32, "16 float16 scales")
            if fixpipe_unit:
                raise self._error(f"a Tensor mode_param is not supported on {a.soc.soc_version} (its FIXPIPE fixpipe "
                                  f"takes float32 deq scales from GM)", operand="quantize_params.mode_param",
                                  cls=UnsupportedOp, hint=FIXPIPE_UNIT_TENSOR_SCALE_HINT)
            a.scale, a.scale_kind = t, "tensor"
        elif isinstance(param, Expr):
            if fixpipe_unit:        # first: whatever its dtype (user456: float16 was refused for "takes a float32
                #                     Scalar", float32 for "needs a Scalar of float16")
                raise self._error(f"a Scalar mode_param ({param.dtype}) is not supported on {a.soc.soc_version}: its "
                                  f"fixpipe is the FIXPIPE unit, whose TIK API takes a float32 Scalar there, which "
                                  f"the simulator does not model (the seed's float16 Scalar is the v100/v200 form)",
                                  operand="quantize_params.mode_param", cls=UnsupportedOp,
                                  hint=FIXPIPE_UNIT_SCALAR_SCALE_HINT)
            if param.dtype != "float16":
                raise self._error(f"mode_param Scalar has dtype {param.dtype}; int322fp16 needs a Scalar of float16",
                                  operand="quantize_params.mode_param", value=param.dtype, limit="float16 Scalar",
                                  hint="declare the Scalar float16: tik_instance.Scalar('float16', ...)")
            a.scale, a.scale_kind = param, "scalar"
        elif isinstance(param, float):
            a.scale, a.scale_kind = param, "immediate"
        else:
            raise self._error(f"mode_param of type {type(param).__name__} is not a float immediate, a float16 Scalar "
                              f"or a float16 Tensor", operand="quantize_params.mode_param",
                              value=type(param).__name__, limit="float / float16 Scalar / Tensor",
                              hint="an integer immediate must be written as a float (e.g. 2.0)")

    def _fixpipe_addend(self, t, name, s, need: int, formula: str):
        op = self._operand(t, name, spaces=("l1",))
        if op.dt is not s.dt:
            raise self._error(f"{name} has dtype {op.tensor.dtype}; it must have the src dtype {s.tensor.dtype}",
                              operand=name, value=op.tensor.dtype, limit=s.tensor.dtype,
                              hint=f"declare {name} as {s.tensor.dtype} (the L0C src dtype)")
        op.check_aligned(32)
        op.check_extent(op.dt.nbytes(need), f"{formula} = {need} elements")
        return op

    # ------------------------------------------------------------------ lowering choice
    def _fixpipe_kind(self, a) -> str:
        fam = a.soc.profile.family
        unit = fam in FIXPIPE_FAMILIES
        exact = a.bias is None and a.ewa is None and (not a.relu or unit)
        if a.scale_kind == "immediate":
            with np.errstate(over="ignore"):
                h = np.float16(a.scale)
            exact = exact and bool(np.isfinite(h) and h > 0)
        elif a.scale_kind is not None:
            exact = False
        if exact:
            return "fixpipe_l1_ub" if a.d.space == "ub" else "fixpipe"
        if not legacy_cube.available("copy_matrix_cc_to_ubuf", a.soc.profile):
            why, hint = "", "use a positive scale"
            if a.scale_kind == "immediate":
                with np.errstate(over="ignore"):
                    h = np.float16(a.scale)
                if not np.isfinite(h) and np.isfinite(float(a.scale)) and float(a.scale) > 0:
                    # h_fuzz435: a positive scale past float16's range was told to "use a positive scale"
                    why = f" ({a.scale!r} is {h} as the float16 deqscale, largest finite float16 65504)"
                    hint = "use a positive scale of at most 65504 (the scale is a float16 value)"
                elif h == 0 and float(a.scale) > 0:
                    # h_review443: a positive scale below float16's range (1e-9) was told to "use a positive scale"
                    why = f" ({a.scale!r} is 0 as the float16 deqscale, smallest positive float16 2**-24 = 5.96e-08)"
                    hint = ("use a scale of at least 6e-08 (the scale is a float16 value), or fixpipe the int32 "
                            "result without quantize_params and scale it in UB: vconv s322f32, vmuls, vconv f322f16")
            raise self._error(f"this fixpipe (int322fp16 scale {a.scale!r}) cannot run on {a.soc.soc_version}: "
                              f"its FIXPIPE unit takes positive finite scales only{why}", operand="quantize_params",
                              value=repr(a.scale), cls=UnsupportedOp, hint=hint)
        return "vector"

    # ------------------------------------------------------------------ FIXPIPE
    def _fixpipe_clauses(self, a) -> dict:
        cl = {}
        if a.mode == "fp322fp16":
            cl["pre_quant"] = (0.0, {"mode": "f32_f16"})
        elif a.mode == "int322fp16":
            cl["pre_quant"] = (float(np.float16(a.scale)), {"mode": "deqf16_scalar"})
        if a.relu:
            cl["pre_relu"] = {"mode": "normal_relu"}
        return cl

    def _plain_copy_sat(self, a, cl: dict) -> None:
        """Add ``sat=PLAIN_COPY_SAT`` to the clauses of a plain same-type copy FIXPIPE would convert."""
        if a.mode is None and not a.relu and a.s.dt is a.d.dt and a.s.dt.name in SAME_TYPE_SATURATES:
            cl["sat"] = PLAIN_COPY_SAT

    def _fixpipe_direct(self, a) -> None:
        cl = self._fixpipe_clauses(a)
        atomic = self._fixpipe_atomic(a)
        if atomic is not None:
            cl["atomic"] = atomic
        else:
            self._plain_copy_sat(a, cl)
        ssize, dsize = a.s.dt.bits // 8, a.d.dt.bits // 8
        for c0 in range(0, a.cb, MAX_BLOCKS_PER_OP):
            cnt = min(MAX_BLOCKS_PER_OP, a.cb - c0)
            s_op, d_op = at(self, a.s, c0 * a.src_blk), at(self, a.d, c0 * a.dst_blk)
            fp = [s_op.read(((cnt - 1) * a.src_blk + a.rh * 16) * ssize),
                  d_op.write(((cnt - 1) * a.dst_blk + a.howo * 16) * dsize)]
            self._emit("mte_l0c_gm", s_op.ptr, d_op.ptr, a.howo, 16 * cnt, a.src_blk // 16, a.dst_blk, 0, 0,
                       footprint=fp, **cl)

    def _fixpipe_atomic(self, a):
        mode = getattr(self, "_cube_atomic", None)
        if mode is None:
            return None
        if mode == "dynamic":
            raise self._error("fixpipe after set_atomic_add with a run-time mode is not supported",
                              operand="dst", cls=UnsupportedOp, hint="pass set_atomic_add an int or dtype name")
        if mode != a.d.tensor.dtype:
            raise self._error(f"the atomic add mode ({mode}) must be the fixpipe dst dtype ({a.d.tensor.dtype})",
                              operand="dst", value=a.d.tensor.dtype, limit=mode,
                              hint=f"call set_atomic_add with the dst dtype ({a.d.tensor.dtype}) before the fixpipe, "
                                   f"or write a {mode} dst")
        return {"type": a.d.dt.name, "op": "add"}

    def _fixpipe_via_l1(self, a) -> None:
        """dst in UB on a FIXPIPE chip (Ascend310B): FIXPIPE into an L1 scratch laid out like dst, then
        ``pto.mte_l1_ub`` of the valid rows of each block (the dst_stride gaps stay untouched)."""
        cl = self._fixpipe_clauses(a)
        self._plain_copy_sat(a, cl)
        dsize = a.d.dt.bits // 8
        span = (a.cb - 1) * a.dst_blk + a.howo * 16
        with self._cube_scratch() as alloc:
            tmp = self._operand(alloc(a.d.tensor.dtype, span, "l1", "fixpipe_l1"), "fixpipe_l1")
            for c0 in range(0, a.cb, MAX_BLOCKS_PER_OP):
                cnt = min(MAX_BLOCKS_PER_OP, a.cb - c0)
                s_op, t_op = at(self, a.s, c0 * a.src_blk), at(self, tmp, c0 * a.dst_blk)
                fp = [s_op.read(((cnt - 1) * a.src_blk + a.rh * 16) * a.s.dt.bits // 8),
                      t_op.write(((cnt - 1) * a.dst_blk + a.howo * 16) * dsize)]
                self._emit("mte_l0c_l1", s_op.ptr, t_op.ptr, a.howo, 16 * cnt, a.src_blk // 16, a.dst_blk,
                           footprint=fp, **cl)
            row = a.howo * 16 * dsize
            self._emit("mte_l1_ub", tmp.ptr, a.d.ptr, row, nburst=(a.cb, a.dst_blk * dsize, a.dst_blk * dsize),
                       footprint=[tmp.read(span * dsize), a.d.write(span * dsize)])

    # ------------------------------------------------------------------ vector composition (v100/v200)
    def _fixpipe_vector(self, a) -> None:
        s, d = a.s, a.d
        ssize, dsize = s.dt.bits // 8, d.dt.bits // 8
        add = a.bias is not None or a.ewa is not None
        xdt = s.tensor.dtype if add else d.tensor.dtype          # dtype of the L0C -> UB tile
        xsize = ssize if add else dsize
        convert_after = add and s.dt is not d.dt
        per_row = 16 * (xsize + (ssize if a.ewa is not None else 0) + (dsize if convert_after else 0))
        reserve = (ceil_to(a.cb * 16 * ssize, 32) if a.bias is not None else 0) + 32
        budget = self._cube_free_bytes("ub", 32) - reserve - 64
        rt = min(a.rh, MAX_TILE_ROWS)
        while rt > 16 and rt * per_row > budget:
            rt = ceil_to(rt // 2, 16)
        cbt = min(a.cb, max(0, budget // (rt * per_row)))
        if cbt < 1:
            raise self._error(f"fixpipe needs {rt * per_row + reserve} B of UB scratch for one tile, but only "
                              f"{budget + reserve} B are free", operand="dst", cls=OutOfBounds,
                              hint="free UB tensors before the fixpipe call")
        tile = cbt * rt * 16
        with self._cube_scratch() as alloc:
            x = self._operand(alloc(xdt, tile, "ub", "fixpipe_x"), "fixpipe_x")
            e = self._operand(alloc(s.tensor.dtype, tile, "ub", "fixpipe_ewa"), "fixpipe_ewa") \
                if a.ewa is not None else None
            y = self._operand(alloc(d.tensor.dtype, tile, "ub", "fixpipe_y"), "fixpipe_y") if convert_after else x
            bias = self._operand(alloc(s.tensor.dtype, ceil_to(a.cb * 16, 16), "ub", "fixpipe_bias"),
                                 "fixpipe_bias") if a.bias is not None else None
            scale = None
            if a.scale_kind == "tensor":
                scale = self._operand(alloc("float16", 16, "ub", "fixpipe_deqscale"), "fixpipe_deqscale")
                self._emit("mte_l1_ub", a.scale.ptr, scale.ptr, 32, nburst=(1, 32, 32),
                           footprint=[a.scale.read(32), scale.write(32)])
            if bias is not None:
                nb = a.cb * 16 * ssize
                self._emit("mte_l1_ub", a.bias.ptr, bias.ptr, ceil_to(nb, 32), nburst=(1, ceil_to(nb, 32), 0),
                           footprint=[a.bias.read(nb), bias.write(ceil_to(nb, 32))])
            for c0 in range(0, a.cb, cbt):
                cb = min(cbt, a.cb - c0)
                for r0 in range(0, a.howo, rt):
                    rows = min(rt, a.rh - r0)
                    valid = min(rows, a.howo - r0)
                    self._fixpipe_tile(a, x, e, y, bias, scale, c0, cb, r0, rows, valid, rt)

    def _fixpipe_tile(self, a, x, e, y, bias, scale, c0, cb, r0, rows, valid, rt):
        s, d = a.s, a.d
        ssize, dsize = s.dt.bits // 8, d.dt.bits // 8
        xsize = x.dt.bits // 8
        add = bias is not None or e is not None
        n = cb * rows * 16                                 # elements of the tile in UB ([cb][rows][16], dense)
        # 1. L0C -> UB (fractals: rows/16 per block, blocks src_blk/256 fractals apart)
        src0 = at(self, s, c0 * a.src_blk + r0 * 16)
        bfr, blk_fr = rows // 16, a.src_blk // 256
        deq = None
        fp = [src0.read(((cb - 1) * a.src_blk + rows * 16) * ssize), x.write(n * xsize)]
        if not add and a.mode == "int322fp16":
            if a.scale_kind == "tensor":
                deq = scale.ptr
                fp.append(scale.read(32))
            elif a.scale_kind == "scalar":
                deq = a.scale.ir
            else:
                deq = float(a.scale)
        self._emit("copy_matrix_cc_to_ubuf", src0.ptr, x.ptr, cb, bfr, blk_fr - bfr, 0,
                   deq=None if deq is None else (deq,), relu=True if a.relu else None, footprint=fp)
        # 2. bias / element-wise-add (in the L0C type, before the conversion)
        if bias is not None:
            self._fixpipe_bias_add(x, bias, c0, cb, rows)
        if e is not None:
            ew = at(self, a.ewa, c0 * a.rh * 16 + r0 * 16)
            row_b = rows * 16 * ssize
            self._emit("mte_l1_ub", ew.ptr, e.ptr, row_b, nburst=(cb, a.rh * 16 * ssize, row_b),
                       footprint=[ew.read(((cb - 1) * a.rh * 16 + rows * 16) * ssize), e.write(n * ssize)])
            self._cube_vector_chunks("ub.vadd", n, x, (x, e), x.dt)
        # 3. conversion after the addition
        out = x
        if add and s.dt is not d.dt:
            out = y
            clauses = {"deqscale": (a.scale.ir if a.scale_kind == "scalar" else float(a.scale),)} \
                if a.mode == "int322fp16" else {}
            self._cube_vector_chunks("ub.vconv", n, y, (x,), x.dt, **clauses)
        # 4. UB -> destination: the valid rows of each block
        osize = out.dt.bits // 8
        row_b = valid * 16 * osize
        d0 = at(self, d, c0 * a.dst_blk + r0 * 16)
        fp = [out.read(n * osize), d0.write(((cb - 1) * a.dst_blk + valid * 16) * dsize)]
        if d.space == "gm":
            self._emit("mte_ub_gm", out.ptr, d0.ptr, row_b, nburst=(cb, rows * 16 * osize, a.dst_blk * dsize),
                       footprint=fp)
        else:
            self._emit("mte_ub_ub", out.ptr, d0.ptr, row_b // 32,
                       nburst=(cb, (rows - valid) * 16 * osize // 32, (a.dst_blk - valid * 16) * dsize // 32),
                       footprint=fp)

    def _fixpipe_bias_add(self, x, bias, c0, cb, rows):
        """``x[b, r, j] += bias[(c0+b)*16 + j]`` with vadds whose bias operand re-reads one block (block stride 0)."""
        size = x.dt.bits // 8
        per_blk = 32 // size                       # elements per 32-byte block
        halves = 16 // per_blk                     # 32-byte blocks per 16-channel row (2 for 32-bit types)
        rows_per_rep = 8 // halves                 # rows a full repeat covers
        for b in range(cb):
            for h in range(halves):
                for r in range(0, rows, 255 * rows_per_rep):
                    cnt = min(255 * rows_per_rep, rows - r)
                    rep = ceil_div(cnt, rows_per_rep)
                    lanes = (8 // halves) * per_blk if cnt >= rows_per_rep else cnt * per_blk
                    xo = at(self, x, (b * rows + r) * 16 + h * per_blk)
                    bo = at(self, bias, (c0 + b) * 16 + h * per_blk)
                    nb = ((rep - 1) * 8 + (8 // halves - 1) * halves + 1) * 32
                    self._emit("ub.vadd", xo.ptr, xo.ptr, bo.ptr, rep, mask=lanes, blk_stride=(halves, halves, 0),
                               rep_stride=(8, 8, 0), footprint=[xo.read(nb), bo.read(32), xo.write(nb)])

    def _cube_vector_chunks(self, op, n, dst, srcs, src_dt, **clauses):
        """``op`` over ``n`` dense elements in repeats of 64 lanes (32-bit operands) / 128 (16-bit), <= 255 per op."""
        widest = max([dst.dt.bits] + [o.dt.bits for o in srcs]) // 8
        par = 256 // widest
        reps = ceil_div(n, par)
        rs = tuple(par * (o.dt.bits // 8) // 32 for o in (dst,) + tuple(srcs))
        for r0 in range(0, reps, 255):
            cnt = min(255, reps - r0)
            last = min(n, (r0 + cnt) * par) - r0 * par
            full, tail = divmod(last, par)
            ops = [at(self, o, r0 * par) for o in (dst,) + tuple(srcs)]
            fp = [o.read(last * (o.dt.bits // 8)) for o in ops[1:]] + [ops[0].write(last * (ops[0].dt.bits // 8))]
            if full:
                self._emit(op, ops[0].ptr, *(o.ptr for o in ops[1:]), full, footprint=fp,
                           **{**clauses, "rep_stride": rs})
            if tail:
                ops2 = [at(self, o, r0 * par + full * par) for o in (dst,) + tuple(srcs)]
                self._emit(op, ops2[0].ptr, *(o.ptr for o in ops2[1:]), 1,
                           footprint=[o.read(tail * (o.dt.bits // 8)) for o in ops2[1:]]
                           + [ops2[0].write(tail * (ops2[0].dt.bits // 8))], **{**clauses, "mask": tail, "rep_stride": rs})


__all__ = ["FixpipeAPI", "FixpipeCall", "EXTEND_KEYS"]
