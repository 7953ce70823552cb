"""The repeat-form vector ops, ``pto.ub.*``: one op per TIK vector call.

Naming: ``pto.ub.<instruction>`` where ``<instruction>`` is the CCE/TIK instruction name
(``pto.ub.vadd``, ``pto.ub.vconv``, ``pto.ub.vcmpv_lt``, ``pto.ub.vnchwconv``). The
``ub.`` namespace follows PTOAS, whose A2/A3 backend lowers tile ops onto the same
UB-pointer, repeat/stride intrinsics under ``pto.ub.*``; it keeps these macro ops apart
from the register-level micro-ops ``pto.vadd``/``pto.vlds``/``pto.vsts`` that operate on
``!pto.vreg`` values. Unlike the PTOAS ops, which read the predicate from the MASK
special register, every call here carries its own mask, repeat count and stride
descriptor as clauses, so a TIK call lowers to exactly one op:

=======================================  =================================================
TIK                                      PTO
=======================================  =================================================
``vadd(m, d, a, b, r, db, ab, bb,``      ``pto.ub.vadd(d, a, b, r, mask=m,``
``     dr, ar, br, stride_unit=u)``      ``   blk_stride=(db, ab, bb), rep_stride=(dr, ar, br),``
                                         ``   stride_unit=u)``
``vec_add(m, d, a, b, r, dr, ar, br)``   ``pto.ub.vadd(d, a, b, r, mask=m, rep_stride=(dr, ar, br))``
``vadds(m, d, a, s, r, ...,``            ``pto.ub.vadds(d, a, s, r, counter=m, ...)``
``      mask_mode="counter")``
=======================================  =================================================

``mask`` is ``N`` (contiguous count) or ``(hi, lo)`` lane bits (``(w3, w2, w1, w0)`` for
8-bit operands) exactly as TIK spells it; omitted = all lanes.

Each op's meaning is the loop of ``pto.vlds`` / ``pto.v<op>`` / ``pto.vsts`` over the
repeats; `expand` prints that loop as PTO-AS text for the migration listing. The
interpreter runs the op as whole-array numpy on strided views (`vector_engine`).

Families: `vector_elementwise` (binary, unary, vector-scalar, fused, dup),
`vector_conv` (vconv), `vector_reduce` (vcadd ... and the vec_reduce_* macros),
`vector_cmpsel` (vcmpv, vcmpvs, vcmp, vsel, CMPMASK moves), `vector_layout`
(vtranspose, vnchwconv, vconcat, vextract, vreduce), `vector_proposal` (sort), `vector_nms`
(vrpac, viou, vaadd, rpn_cor, rpn_cor_diag and their special registers), `vector_index`
(vci, vgather, vgatherb, vscatter, vbcb), `vector_sort2` (vsort32, vmrgsort),
`vector_trans4d` (v4dtrans), `vector_va` (the VA-register ``scatter_*`` forms), `vector_va_cmpsel`
(their compares and selects).
Chip legality comes from `pto_core.vector_isa`.
"""
from __future__ import annotations

from . import vector_elementwise as _elementwise
from . import vector_conv as _conv
from . import vector_reduce as _reduce
from . import vector_cmpsel as _cmpsel
from . import vector_layout as _layout
from . import vector_proposal as _proposal
from . import vector_nms as _nms
from . import vector_index as _index
from . import vector_sort2 as _sort2
from . import vector_trans4d as _trans4d
from . import vector_va as _va
from . import vector_va_cmpsel as _va_cmpsel

EXPANDERS: dict = {}
for _m in (_elementwise, _conv, _reduce, _cmpsel, _layout, _proposal, _nms, _index, _sort2, _trans4d, _va, _va_cmpsel):
    EXPANDERS.update(_m.EXPANDERS)
del _m


def expand(call) -> list:
    """PTO-AS text (one string per line) of the vlds / v<op> / vsts loop a ``pto.ub.*`` call stands for."""
    fn = EXPANDERS.get(call.spec.name)
    if fn is None:
        raise KeyError(f"{call.spec.asm_name} is not a repeat-form vector op")
    return fn(call)


__all__ = ["expand", "EXPANDERS"]
