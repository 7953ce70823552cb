"""Per-chip legality of the repeat-form vector instructions (``pto.ub.*``): hardware facts as data.

Each chip belongs to one *vector family*; each family maps an instruction name (the
CANN ``Intrinsic_<name>`` key, e.g. ``"vadd"``) to the dtype signatures it accepts:

* single-type instructions list dtype names (``"f16"``, ``"s32"``);
* mixed-type instructions list ``dst`` then sources (``"f32f16f16"`` = f32 dst, f16 srcs),
  in the CANN ini spelling;
* ``vconv`` lists ``"<src>2<dst>[r|a|f|c|z|o]"`` conversion codes (``"f322f16o"``) and
  ``"deq"``.

Sources: CANN 8.1.RC1 ``data/platform_config/*.ini`` ``[AICoreintrinsicDtypeMap]``
(Ascend310P3, Ascend910B1, Ascend310B1, Ascend910_95) and tik_api.md Appendix A
(Ascend310 / Ascend910A columns, which come from the same ini keys of older CANN
releases) plus Appendix B (``tik.vector_dup``). Where no table is public the
assignment is an assumption and says so in ``FAMILY_NOTES`` (migration_guide/pto_vector.md).
"""
from __future__ import annotations

from .errors import UnsupportedOp

F16, F32, S32, S16 = "f16", "f32", "s32", "s16"


def _fs(*codes: str) -> frozenset:
    return frozenset(codes)


def _cmp(names, codes):
    return {n: _fs(*codes) for n in names}


_CMP = ("eq", "ne", "lt", "gt", "ge", "le")

# ---------------------------------------------------------------- v100: Ascend310 (mini) / Ascend910A (cloud)

_V100_COMMON = {
    "vadd": _fs(F16, F32, S32), "vsub": _fs(F16, F32, S32), "vmul": _fs(F16, F32, S32),
    "vmax": _fs(F16, F32, S32), "vmin": _fs(F16, F32, S32),
    "vand": _fs(S16, "u16"), "vor": _fs(S16, "u16"), "vnot": _fs(S16, "u16"),
    "vrec": _fs(F16, F32), "vrsqrt": _fs(F16, F32), "vabs": _fs(F16, F32), "vrelu": _fs(F16),
    "vadds": _fs(F16, F32), "vmuls": _fs(F16, F32),
    "vaxpy": _fs("f16f16f16", "f32f32f32", "f32f16f16"),
    "vmla": _fs("f16f16f16", "f32f32f32", "f32f16f16"),
    "vmadd": _fs(F16, F32), "vmaddrelu": _fs(F16, F32),
    "vector_dup": _fs("u16", S16, F16, "u32", S32, F32),
    "vcadd": _fs(F16, F32), "vcmax": _fs(F16), "vcmin": _fs(F16), "vcgadd": _fs(F16), "vcgmax": _fs(F16),
    "vcgmin": _fs(F16), "vcpadd": _fs(F16),
    "vtranspose": _fs("u16", S16, F16),
    "vnchwconv": _fs(S16, "u16", "s8", "u8", F16),
    # proposal / NMS instructions: v100 proposals are fp16. Source: the Ascend C ProposalConcat / ProposalExtract
    # pages list half only for the training series (Ascend910A) and half/float for the 310P inference AI Core;
    # Ascend310 (same v100 ISA) is assumed equal to 910A (pub183, pub240)
    "vconcat": _fs(F16), "vextract": _fs(F16), "vbitsort": _fs(F16), "vmrgsort4": _fs(F16),
    "viou": _fs(F16), "vaadd": _fs(F16), "rpn_cor": _fs(F16), "vrpac": _fs(F16),
}

_V100_310 = dict(_V100_COMMON, **{
    "vexp": _fs(F16), "vln": _fs(F16), "vsel": _fs(F16), "vcmp": _fs(F16),
    **_cmp([f"vcmpv_{c}" for c in _CMP], (F16,)),
    "vconv": _fs("f322f16", "f162f32", "f162s8", "f162u8", "deq", "f162s32f", "f162s32c", "f162s32r", "u82f16",
                 "s82f16", "s322f16"),
})

_V100_910 = dict(_V100_COMMON, **{
    "vexp": _fs(F16, F32), "vln": _fs(F16, F32), "vsqrt": _fs(F16, F32), "vdiv": _fs(F16, F32),
    "vsel": _fs(F16, F32), "vcmp": _fs(F16, F32),
    **_cmp([f"vcmpv_{c}" for c in _CMP], (F16, F32)),
    # tik_api.md Appendix A, Ascend910A column (Ascend310 has neither)
    "vadddeqrelu": _fs("f16s32s32"), "vmulconv": _fs("u8f16f16", "s8f16f16"),
    "vconv": _fs("f322f16", "f162f32", "f322f16o", "f162s8", "f162s8a", "f162s8f", "f162s8c", "f162s8z", "f162u8",
                 "f162u8a", "f162u8f", "f162u8c", "f162u8z", "deq", "s322f32", "f162s32r", "f162s32a", "f162s32f",
                 "f162s32c", "f162s32z", "f322s32r", "f322s32a", "f322s32f", "f322s32c", "f322s32z", "u82f16",
                 "s82f16", "s322f16"),
})

# ---------------------------------------------------------------- v200: Ascend310P / Ascend610 / BS9SX1A (AI core)

_V200 = {
    "vadd": _fs(F16, F32, S32, S16), "vsub": _fs(F16, F32, S32, S16), "vmul": _fs(F16, F32, S32, S16),
    "vdiv": _fs(F16, F32), "vmax": _fs(F16, F32, S32, S16), "vmin": _fs(F16, F32, S32, S16),
    "vand": _fs(S16, "u16"), "vor": _fs(S16, "u16"), "vnot": _fs(S16, "u16"),
    "vaddrelu": _fs(S16, F16, F32), "vsubrelu": _fs(S16, F16, F32),
    "vrec": _fs(F16, F32), "vrsqrt": _fs(F16, F32), "vsqrt": _fs(F16, F32), "vexp": _fs(F16, F32),
    "vln": _fs(F16, F32), "vabs": _fs(F16, F32), "vrelu": _fs(F16, F32, S32),
    "vadds": _fs(F16, F32, S32, S16), "vmuls": _fs(F16, F32, S32, S16), "vmaxs": _fs(F16, F32, S32, S16),
    "vmins": _fs(F16, F32, S32, S16), "vlrelu": _fs(F16, F32),
    "vaxpy": _fs("f16f16f16", "f32f32f32", "f32f16f16"), "vmla": _fs("f16f16f16", "f32f32f32", "f32f16f16"),
    "vmadd": _fs(F16, F32), "vmaddrelu": _fs(F16, F32),
    "vmulconv": _fs("u8f16f16", "s8f16f16"), "vadddeqrelu": _fs("f16s32s32"),
    "vector_dup": _fs("u16", S16, F16, "u32", S32, F32),
    "vsel": _fs(F16, F32), "vcmp": _fs(F16, F32),
    **_cmp([f"vcmpv_{c}" for c in _CMP], (F16, F32)),
    **_cmp([f"vcmpvs_{c}" for c in _CMP], (F16, F32)),
    "vcadd": _fs(F16, F32), "vcmax": _fs(F16, F32), "vcmin": _fs(F16, F32), "vcgadd": _fs(F16, F32),
    "vcgmax": _fs(F16, F32), "vcgmin": _fs(F16, F32), "vcpadd": _fs(F16, F32),
    "vtranspose": _fs("u16", S16, F16),
    "vnchwconv": _fs(S16, "u16", "s8", "u8", S32, "u32", F16, F32),
    "vreduce": _fs(S16, "u16", F16, F32, S32, "u32"),
    "vconcat": _fs(F16, F32), "vextract": _fs(F16, F32), "vbitsort": _fs(F16, F32), "vmrgsort4": _fs(F16, F32),
    "viou": _fs(F16, F32), "vaadd": _fs(F16, F32), "rpn_cor": _fs(F16, F32), "vrpac": _fs(F16, F32),
    "vconv": _fs("f322f16", "f162f32", "f322f16o", "f162s8", "f162s8a", "f162s8f", "f162s8c", "f162s8z", "f162u8",
                 "f162u8a", "f162u8f", "f162u8c", "f162u8z", "deq", "s322f32", "f162s32r", "f162s32a", "f162s32f",
                 "f162s32c", "f162s32z", "f322s32r", "f322s32a", "f322s32f", "f322s32c", "f322s32z", "u82f16",
                 "s82f16", "s322f16", "s162u8", "s162s8", "f162s4", "s162f16", "f162s16r"),
}

# ---------------------------------------------------------------- v220: Ascend910B / Ascend910_93 (and A2A3)

_V220_VCONV = _fs(
    "f322f32r", "f322f32f", "f322f32c", "deq", "f322f32a", "f322f32z", "f322f16", "f322f16r", "f322f16f", "f322f16c",
    "f322f16a", "f322f16z", "f322f16o", "f322s64r", "f322s64f", "f322s64c", "f322s64a", "f322s64z", "f322s32r",
    "f322s32f", "f322s32c", "f322s32a", "f322s32z", "f322s16r", "f322s16f", "f322s16c", "f322s16a", "f322s16z",
    "f162f32", "f162s32r", "f162s32f", "f162s32c", "f162s32a", "f162s32z", "f162s16r", "f162s16f", "f162s16c",
    "f162s16a", "f162s16z", "f162s8", "f162s8r", "f162s8f", "f162s8c", "f162s8a", "f162s8z", "f162u8", "f162u8r",
    "f162u8f", "f162u8c", "f162u8a", "f162u8z", "u82f16", "s82f16", "s162f16", "s162f16r", "s162f16f", "s162f16c",
    "s162f16a", "s162f16z", "s162f32", "s162s8", "s162u8", "s322f32", "s322f32r", "s322f32f", "s322f32c",
    "s322f32a", "s322f32z", "s322f16", "s322s64", "s322s16", "s642s32", "s642f32r", "s642f32f", "s642f32c",
    "s642f32a", "s642f32z", "f322bf16r", "f322bf16f", "f322bf16c", "f322bf16a", "f322bf16z", "bf162f32",
    "bf162s32r", "bf162s32f", "bf162s32c", "bf162s32a", "bf162s32z")

_V220 = {
    "vadd": _fs(F16, F32, S32, S16), "vsub": _fs(F16, F32, S32, S16), "vmul": _fs(F16, F32, S32, S16),
    "vdiv": _fs(F16, F32), "vmax": _fs(F16, F32, S32, S16), "vmin": _fs(F16, F32, S32, S16),
    "vand": _fs(S16, "u16"), "vor": _fs(S16, "u16"), "vnot": _fs(S16, "u16"),
    "vaddrelu": _fs(S16, F16, F32),
    "vrec": _fs(F16, F32), "vrsqrt": _fs(F16, F32), "vsqrt": _fs(F16, F32), "vexp": _fs(F16, F32),
    "vln": _fs(F16, F32), "vabs": _fs(F16, F32), "vrelu": _fs(F16, F32, S32),
    "vadds": _fs(F16, F32, S32, S16), "vmuls": _fs(F16, F32, S32, S16), "vmaxs": _fs(F16, F32, S32, S16),
    "vmins": _fs(F16, F32, S32, S16), "vlrelu": _fs(F16, F32),
    "vshl": _fs(S16, "u16", S32, "u32"), "vshr": _fs("u16", S16, "u32", S32),
    "vaxpy": _fs("f16f16f16", "f32f32f32", "f32f16f16"), "vmla": _fs("f16f16f16", "f32f32f32", "f32f16f16"),
    "vmadd": _fs(F16, F32), "vmaddrelu": _fs(F16, F32), "vmulconv": _fs("u8f16f16", "s8f16f16"),
    "vector_dup": _fs("u16", S16, F16, "u32", S32, F32, "bf16"),
    "vsel": _fs(F16, F32), "vcmp": _fs(F16, F32, S16),
    **_cmp([f"vcmpv_{c}" for c in _CMP], (F16, F32)),
    **_cmp([f"vcmpvs_{c}" for c in _CMP], (F16, F32)),
    "vcadd": _fs(F16, F32), "vcmax": _fs(F16, F32), "vcmin": _fs(F16, F32), "vcgadd": _fs(F16, F32),
    "vcgmax": _fs(F16, F32), "vcgmin": _fs(F16, F32), "vcpadd": _fs(F16, F32),
    "vtranspose": _fs("u16", S16, F16),
    "vnchwconv": _fs(S16, "u16", "s8", "u8", F16, S32, "u32", F32, "bf16"),
    "vreduce": _fs(S16, "u16", F16, F32, S32, "u32"),
    "vbitsort": _fs(F16), "vmrgsort4": _fs(F16),
    "vconv": _V220_VCONV,
}
_V220["vcmpv_eq"] = _fs(F16, F32, S32)
_V220["vcmpvs_eq"] = _fs(F16, F32, S32)

# ---------------------------------------------------------------- v300: Ascend310B (AI core)

_V300 = {
    "vadd": _fs(F16, F32, S32, S16, "s8", "u8"), "vsub": _fs(F16, F32, S32, S16, "s8", "u8"),
    "vmul": _fs(F16, F32, S32, S16), "vdiv": _fs(F16, F32), "vmax": _fs(F16, F32, S32, S16, "s8", "u8"),
    "vmin": _fs(F16, F32, S32, S16), "vand": _fs(S16, "u16", "s8", "u8"), "vor": _fs(S16, "u16", "s8", "u8"),
    "vnot": _fs(S16, "u16"),
    "vrec": _fs(F16, F32), "vrsqrt": _fs(F16, F32), "vsqrt": _fs(F16, F32), "vexp": _fs(F16, F32),
    "vln": _fs(F16, F32), "vabs": _fs(F16, F32), "vrelu": _fs(F16, F32, S32),
    "vadds": _fs(F16, F32, S32, S16, "s8", "u8"), "vmuls": _fs(F16, F32, S32, S16),
    "vmaxs": _fs(F16, F32, S32, S16), "vmins": _fs(F16, F32, S32, S16), "vlrelu": _fs(F16, F32),
    "vshl": _fs(S16, "u16", S32, "u32"), "vshr": _fs(S16, "u16", S32, "u32"),
    "vaxpy": _fs("f16f16f16", "f32f32f32"), "vmla": _fs("f16f16f16", "f32f32f32"), "vmadd": _fs(F16, F32),
    "vector_dup": _fs("u8", "s8", "u16", S16, F16, "u32", S32, F32),
    "vsel": _fs(F16, F32, "s8", "u8"), "vcmp": _fs(F16, F32, "s8", "u8"),
    **_cmp([f"vcmpv_{c}" for c in _CMP], (F16, F32, "s8", "u8")),
    **_cmp([f"vcmpvs_{c}" for c in _CMP], (F16, F32, "s8", "u8")),
    "vcadd": _fs(F16, F32), "vcmax": _fs(F16, F32), "vcmin": _fs(F16, F32), "vcgadd": _fs(F16, F32),
    "vcgmax": _fs(F16, F32), "vcgmin": _fs(F16, F32), "vcpadd": _fs(F16, F32),
    "vtranspose": _fs("u16", S16, F16),
    "vnchwconv": _fs(F16, F32, S32, S16, "u32", "u16", "s8", "u8"),
    "vreduce": _fs(S16, "u16", F16, F32, S32, "u32", "s8", "u8"),
    "vconv": _V220_VCONV - {"s162s8"},
}
_V300["vcmpv_eq"] = _fs(F16, F32, S32, "s8", "u8")
_V300["vcmpvs_eq"] = _fs(F16, F32, S32, "s8", "u8")

# ---------------------------------------------------------------- A5 (Ascend950 / Ascend910_95 ini)

_A5 = dict(_V220)
for _k in ("vaddrelu", "vmaddrelu", "vmulconv", "vbitsort", "vmrgsort4"):
    _A5.pop(_k)
_A5.update({"vcmp": _fs(F16, F32), "vconcat": _fs(F16, F32),
            "vnchwconv": _fs(F16, F32, S32, S16, "u32", "u16", "s8", "u8")})
del _k

# ---------------------------------------------------------------- index fill / gather / scatter
# vci: tik_api.md Appendix B (``tik.vci``; 310B adds s8); vgather / vscatter: the ini rows
# ``Intrinsic_vgather`` / ``Intrinsic_vscatter`` (B32SET6: s16 u16 f16 f32 s32 u32). 910B has
# vgather but no vscatter and no vci; the A5 table inherits the 910B rows (assumption).
_B32SET6 = _fs(S16, "u16", F16, F32, S32, "u32")
_V200["vci"] = _fs(S16, S32, F16, F32)
_V300["vci"] = _fs("s8", S16, S32, F16, F32)
for _fam in (_V200, _V220, _V300, _A5):
    _fam["vgather"] = _B32SET6
for _fam in (_V200, _V300):
    _fam["vscatter"] = _B32SET6
# vbcb: ini ``Intrinsic_vbrcb`` (u16u16 s16s16 f16f16 u32u32 s32s32 f32f32) on 910B and 310B;
# vgatherb: ini ``Intrinsic_vgatherb`` (the same six pairs) on 910B and 310B.
for _fam in (_V220, _V300, _A5):
    _fam["vbcb"] = _fs("u16", S16, F16, "u32", S32, F32)
    _fam["vgatherb"] = _fs("u16", S16, F16, "u32", S32, F32)
# v2 sort pair: ini ``Intrinsic_vbitsort32`` / ``Intrinsic_vmrgsort4v2`` (f16, f32) on 910B and 310B.
for _fam in (_V220, _V300):
    _fam["vsort32"] = _fs(F16, F32)
    _fam["vmrgsort"] = _fs(F16, F32)
del _fam
# v4dtrans: ini ``Intrinsic_v4dtrans`` of Ascend310P/610 (both core types); absent from 910B/310B.
_V200["v4dtrans"] = _fs("s8", "u8", S16, "u16", F16, F32, S32, "u32")
# vmergech (TIK ``vmrgch``): ini ``Intrinsic_vmergech`` of Ascend910A/Ascend310 (int8,uint8,int16,uint16,float16),
# Ascend310P3/610 (int8,uint8,float16, both core types) and Ascend310P1 (int8,uint8,int16,uint16,float16); absent
# from BS9SX1AA, 910B, 310B and A5. A bit copy: the v200 row is the union of 310P3's and 310P1's rows (one family
# holds both chips); the TIK facade checks each chip's own ini row (`tbe_compat.tik.vector_layout.vmrgch`).
_MERGECH = _fs("s8", "u8", S16, "u16", F16)
for _fam in (_V100_310, _V100_910, _V200):
    _fam["vmergech"] = _MERGECH
del _fam

# ---------------------------------------------------------------- v200 vector cores (TIK ``VectorCore``)
# Ascend310P1/P3 and Ascend610 ``[VectorCoreintrinsicDtypeMap]`` (CANN 8.1.RC1 inis; tik_api.md Appendix A
# column 310P-AIV) differ from the AI core map: int16 vabs / vcmp / vcmax / vcmin, vshl / vshr, three more
# conversions, and no ``deq``. The ini also lists float16/float32 for ``vshl``; what a left shift of a float
# does is documented nowhere, so those two stay rejected (named choice, migration_guide/tik_vector.md).
_V200_AIV = dict(_V200)
for _k in ("vabs", "vcmp", "vcmax", "vcmin"):
    _V200_AIV[_k] = _V200[_k] | {S16}
_V200_AIV["vshl"] = _fs(S16, "u16", S32, "u32")
_V200_AIV["vshr"] = _fs(S16, "u16", S32, "u32")
_V200_AIV["vconv"] = (_V200["vconv"] - {"deq"}) | {"f322s16r", "f322s16z", "s162f32"}
del _k
# Ascend310P1's vector-core map adds int16 ``vrelu`` (its ini row is f16,f32,s16,s32).
_V200_AIV_P1 = dict(_V200_AIV, vrelu=_V200_AIV["vrelu"] | {S16})

# BS9SX1AA ``[VectorCoreintrinsicDtypeMap]`` (CANN 8.1.RC1 BS9SX1AA.ini, a dav-m210-vec register-ISA vector
# core; the ``Intrinsic_vectorized_*`` rows are not repeat-form instructions): no proposal / NMS instructions,
# no vaddrelu / vsubrelu / vadddeqrelu / v4dtrans, same-type vaxpy / vmla only, int8 vci, int32 vcmpv_eq,
# the v2 sort pair, vgatherb, int shifts, and its own conversion list (integer widen / narrow rows included;
# `pto_core.ops.vector_conv.UNDOCUMENTED` names the rows whose result the public sources leave open).
_V210_AIV = {k: v for k, v in _V200.items()
             if k not in ("rpn_cor", "v4dtrans", "vaadd", "vadddeqrelu", "vaddrelu", "vsubrelu", "vbitsort",
                          "vconcat", "vextract", "viou", "vmrgsort4", "vrpac", "vmergech")}
_V210_AIV.update({
    "vaxpy": _fs("f16f16f16", "f32f32f32"), "vmla": _fs("f16f16f16", "f32f32f32"),
    "vci": _V200["vci"] | {"s8"}, "vcmpv_eq": _fs(F16, F32, S32), "vcmpvs_eq": _fs(F16, F32, S32),
    "vsort32": _fs(F16, F32), "vmrgsort": _fs(F16, F32), "vgatherb": _B32SET6,
    "vshl": _fs(S16, "u16", S32, "u32"), "vshr": _fs(S16, "u16", S32, "u32"),
    "vconv": _fs("f162f32", "f322f16r", "f322f16", "f322f16o", "u82f16", "s82f16", "f162u8", "f162u8r", "f162u8a",
                 "f162u8f", "f162u8c", "f162u8z", "f162s8", "f162s8r", "f162s8a", "f162s8f", "f162s8c", "f162s8z",
                 "f162s16", "f162s32r", "f162s32a", "f162s32f", "f162s32c", "f162s32z", "s162f16", "s162f32",
                 "f322s16r", "f322s16z", "f322s32r", "f322s32a", "f322s32f", "f322s32c", "f322s32z", "s322f32",
                 "u82u16", "s82s16", "u162u8", "u162u32", "s162u32", "s162s32", "u322u16", "u322s16", "s322u16",
                 "s322s16"),
})

# Ascend910B1-B4 ``[VectorCoreintrinsicDtypeMap]``: ``vcmp`` without int16 (tik_api.md Appendix A 910B-AIV);
# everything else equals the AI core map.
_V220_AIV = dict(_V220, vcmp=_fs(F16, F32))

# Ascend310B1 ``[VectorCoreintrinsicDtypeMap]``: ``vmin`` adds int8 / uint8 (the AI core row has no int8).
_V300_AIV = dict(_V300, vmin=_V300["vmin"] | {"s8", "u8"})

# VA-register ("scatter") forms: CANN ini rows ``Intrinsic_scatter_<x>`` of Ascend910B.ini (v100 cloud)
# and Ascend310P3.ini (AI and vector core maps): every row is a subset of (here: equal to) the ``<x>`` row
# of the same map, so ``scatter_<x>`` inherits ``<x>``; Ascend310's follow its narrower ``<x>`` rows
# (tbe_compat/data/soc_v100.py).
# BS9SX1AA's vector core (a register-ISA core) and the v220+ inis have none. Modelled only with one
# element type: mixed forms (``f32f16f16`` vmla/vaxpy) are left out, see `pto_core.ops.vector_va`.
VA_FORMS = ("vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vmadd", "vmaddrelu", "vmla", "vabs", "vexp", "vln",
            "vrec", "vrsqrt", "vsqrt", "vrelu", "vadds", "vmuls", "vaxpy")
VA_FORMS_V200 = VA_FORMS + ("vmaxs", "vmins")
for _fam, _names in ((_V100_310, VA_FORMS), (_V100_910, VA_FORMS), (_V200, VA_FORMS_V200),
                     (_V200_AIV, VA_FORMS_V200), (_V200_AIV_P1, VA_FORMS_V200)):
    # one element type only: a dtype name, or a dst+src+src code of three equal 3-letter names
    _fam.update({"scatter_" + _n: frozenset(c for c in _fam[_n] if len(c) <= 3 or c == c[:3] * 3)
                 for _n in _names if _n in _fam})
    _fam["scatter_vector_mov"] = _fs(S16, "u16", F16)
    # scatter_vsel / scatter_vcmp: the ini rows equal the vsel / vcmp rows of the same map
    _fam["scatter_vsel"] = _fam["vsel"]
    _fam["scatter_vcmp"] = _fam["vcmp"]
# Ascend310P1's vector-core ini keeps scatter_vrelu at f16/s32/f32 (its int16 is for plain vrelu only).
_V200_AIV_P1["scatter_vrelu"] = _V200_AIV["scatter_vrelu"]
del _fam, _names

FAMILIES: dict = {
    "v100-mini": _V100_310, "v100-cloud": _V100_910, "v200": _V200, "v220": _V220, "v300": _V300, "a5": _A5,
    "v200-aiv": _V200_AIV, "v200-aiv-p1": _V200_AIV_P1, "v210-aiv": _V210_AIV, "v220-aiv": _V220_AIV,
    "v300-aiv": _V300_AIV,
}

#: Core-type family -> the family whose chip-wide behaviour (counter mode, gather configuration, reduction
#: order, legacy-chip quirks) it shares; only the dtype tables differ.
FAMILY_BASE: dict = {"v200-aiv": "v200", "v200-aiv-p1": "v200", "v210-aiv": "v200", "v220-aiv": "v220",
                     "v300-aiv": "v300"}

#: Chip profile name -> vector family.
CHIP_FAMILY: dict = {
    "Ascend310": "v100-mini", "Ascend910A": "v100-cloud",
    "Ascend310P3": "v200", "Ascend310P1": "v200", "Ascend610": "v200", "BS9SX1AA": "v200",
    "Hi3796CV300ES": "v200", "Hi3796CV300CS": "v200", "SD3403": "v200",
    "Ascend910B1": "v220", "Ascend910B2": "v220", "Ascend910B3": "v220", "Ascend910B4": "v220", "A2A3": "v220",
    "Ascend310B1": "v300", "A5": "a5", "Kirin9030": "v220", "KirinX90": "v220",
}

#: Chip profile name -> vector family of its TIK ``VectorCore``: every chip whose ini has a
#: ``[VectorCoreintrinsicDtypeMap]`` that differs from its AI core map for a repeat-form instruction. Chips
#: not listed have no vector core, or one whose map equals the AI core's (the test
#: tests/compat/tik/test_vector_core_families.py compares every ini map of tbe_compat's SoC tables with these).
CHIP_FAMILY_AIV: dict = {
    "Ascend310P3": "v200-aiv", "Ascend310P1": "v200-aiv-p1", "Ascend610": "v200-aiv", "BS9SX1AA": "v210-aiv",
    "Ascend910B1": "v220-aiv", "Ascend910B2": "v220-aiv", "Ascend910B3": "v220-aiv", "Ascend910B4": "v220-aiv",
    "Ascend310B1": "v300-aiv",
}

#: Families whose chips lack the vector counter mode (TIK treats ``mask_mode="counter"`` as normal mode).
NO_COUNTER_MODE = frozenset({"v100-mini", "v100-cloud"})

#: Families whose gather-by-pattern (``vreduce``/``vreducev2``, Ascend C ``GatherMask``) runs counter mode
#: per repeat: ``repeat`` repeats of ``count`` elements each (Ascend C GatherMask "configuration 1", which
#: its page gives for Atlas A2/A3 = 910B/910_93; the dav_m300 (310B) and A5 emulations loop the same way;
#: CANN batch_multi_class_nms relies on it). Elsewhere (v200) ``count`` is the total and the repeat count
#: is ignored ("configuration 2", as CANN's YOLO detection-output op relies on). A named choice:
#: migration_guide/tik_vector.md §5c.
GATHER_COUNTER_PER_REPEAT = frozenset({"v220", "v300", "a5"})

FAMILY_NOTES = {
    "Hi3796CV300ES": "no public intrinsic table; assumed equal to Ascend310P (v200)",
    "Hi3796CV300CS": "no public intrinsic table; assumed equal to Ascend310P (v200)",
    "SD3403": "no public intrinsic table; assumed equal to Ascend310P (v200)",
    "Kirin9030": "no public intrinsic table; assumed equal to Ascend910B (v220)",
    "KirinX90": "no public intrinsic table; assumed equal to Ascend910B (v220)",
}


def family_of(target) -> str:
    """Vector family of a `ChipProfile` (by name and core type, falling back to its TIK family)."""
    if getattr(target, "core_type", "AiCore") == "VectorCore" and target.name in CHIP_FAMILY_AIV:
        return CHIP_FAMILY_AIV[target.name]
    fam = CHIP_FAMILY.get(target.name)
    if fam is not None:
        return fam
    return {"v100": "v100-mini", "v200": "v200", "v220": "v220", "v300": "v300", "a5": "a5"}.get(
        getattr(target, "family", ""), "v220")


def base_family(target) -> str:
    """The family whose chip-wide behaviour ``target`` follows (its core type's dtype table aside)."""
    fam = family_of(target)
    return FAMILY_BASE.get(fam, fam)


def supported(target, instr: str) -> frozenset:
    """Dtype signatures ``instr`` accepts on ``target`` (empty if the chip lacks it)."""
    return FAMILIES[family_of(target)].get(instr, frozenset())


def has_counter_mode(target) -> bool:
    return base_family(target) not in NO_COUNTER_MODE


def gather_counter_per_repeat(target) -> bool:
    """Whether counter-mode ``vreduce`` on ``target`` processes ``count`` elements per repeat
    (`GATHER_COUNTER_PER_REPEAT`) rather than ``count`` in total."""
    return base_family(target) in GATHER_COUNTER_PER_REPEAT


def require(target, instr: str, signature: str, *, op: str, operand: str = "dtype") -> None:
    """Raise `UnsupportedOp` naming the chip unless ``instr`` accepts ``signature`` on ``target``."""
    legal = supported(target, instr)
    if signature in legal:
        return
    if not legal:
        raise UnsupportedOp(f"{target.name} has no {instr} instruction on its {_core(target)}", op=op, operand=operand, value=signature,
                            hint=_other_chips(instr))
    raise UnsupportedOp(f"{target.name} does not support {instr} for {signature} on its {_core(target)}", op=op, operand=operand,
                        value=signature, limit="one of " + ", ".join(sorted(legal)),
                        hint=_rounding_hint(instr, signature, legal)
                        or "use a supported dtype (convert with pto.ub.vconv) or another chip")


#: what each vconv rounding suffix means (pto_vector.md "vconv"), for the hint of a conversion given without one
VCONV_ROUNDING_LETTERS = {"r": "nearest-even", "a": "nearest-away", "f": "floor", "c": "ceil", "z": "toward zero",
                          "o": "round-to-odd"}


def _rounding_hint(instr: str, signature: str, legal) -> str:
    """The fix for a ``vconv`` the chip has only with a rounding suffix (``f162s32`` -> ``f162s32r`` ...)."""
    if instr != "vconv":
        return ""
    letters = sorted(code[len(signature):] for code in legal
                     if code.startswith(signature) and code[len(signature):] in VCONV_ROUNDING_LETTERS)
    if not letters:
        return ""
    modes = ", ".join(f"'{c}' ({VCONV_ROUNDING_LETTERS[c]})" for c in letters)
    return f"this conversion needs a rounding mode on this chip: give round= one of {modes}"


def _core(target) -> str:
    """The core type a chip-support message names (TIK's ``AiCore`` / ``VectorCore``: a VectorCore has its own
    vector tables, `CHIP_FAMILY_AIV`), as the TIK front end's trace-time checks name soc + core type."""
    return getattr(target, "core_type", "AiCore")


def _other_chips(instr: str) -> str:
    chips = sorted(c for c, f in CHIP_FAMILY.items() if instr in FAMILIES[f])
    if not chips:
        return "no modelled chip has this instruction"
    return "chips that have it: " + ", ".join(chips)
