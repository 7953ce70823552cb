"""``pto.ub.v4dtrans`` (TIK ``v4dtrans``, CCE ``v4dtrans``): CHW <-> HWC of one contiguous block.

``v4dtrans(dst, src, m, channels)``: ``src`` and ``dst`` hold ``m * channels`` contiguous
elements. With the ``chw2hwc`` flag ``src`` is ``(channels, m)`` row-major and
``dst[i*channels + c] = src[c*m + i]``; without it ``src`` is ``(m, channels)`` and
``dst[c*m + i] = src[i*channels + c]`` (TIK: ``chw2hwc`` True = CHW -> HWC, False = HWC -> CHW;
``m`` is the H*W extent). Limits (TIK ``tik_params``): ``m`` 1..4095, ``channels`` 1..4096.
The whole source is read before ``dst`` is written (named choice for overlapping operands).
"""
from __future__ import annotations

import numpy as np

from .. import vector_isa
from ..errors import IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve

EXPANDERS: dict = {}
_UB = ("ub",)
MAX_M = 4095
MAX_CHANNELS = 4096


def _check(target, dst, src, op):
    ve.check_ub(dst, op=op, operand="dst")
    ve.check_ub(src, op=op, operand="src")
    if dst.dtype is not src.dtype:
        raise IllegalOperand(f"dst dtype {dst.dtype.name} differs from src dtype {src.dtype.name}", op=op,
                             operand="src", value=src.dtype.name, limit=dst.dtype.name,
                             hint="use operands of one element type (convert with pto.ub.vconv first)")
    vector_isa.require(target, "v4dtrans", dst.dtype.name, op=op)


def _execute(ctx, dst, src, m, channels, *, chw2hwc=None):
    op = "pto.ub.v4dtrans"
    _check(ctx.target, dst, src, op)
    mm = ve.check_range(m, 1, MAX_M, op=op, operand="m", hint="m is the H*W extent, 1..4095")
    cc = ve.check_range(channels, 1, MAX_CHANNELS, op=op, operand="channels", hint="1..4096 channels")
    d = src.dtype
    n = mm * cc
    x = np.array(ctx.strided_view(src, (n,), (d.itemsize,), dtype=d, operand="src"))
    y = x.reshape(cc, mm).T if chw2hwc else x.reshape(mm, cc).T
    ctx.strided_view(dst, (n,), (d.itemsize,), dtype=d, write=True, operand="dst")[...] = y.reshape(-1)


register(OpSpec(
    name="ub.v4dtrans", family="vector", pipe="V",
    operands=(Operand("dst", "ptr", _UB, doc="destination, m*channels elements"),
              Operand("src", "ptr", _UB, doc="source, m*channels elements"),
              Operand("m", "int", doc="H*W extent, 1..4095"), Operand("channels", "int", doc="C, 1..4096")),
    clauses=(Clause("chw2hwc", "flag", doc="CHW -> HWC (default: HWC -> CHW)"),),
    execute=_execute,
    verify=lambda call, target: _check(target, *call.operands[:2], call.spec.asm_name)
    if all(isinstance(p, Ptr) for p in call.operands[:2]) else None,
    doc="CHW <-> HWC transpose of m x channels contiguous elements (TIK v4dtrans)"))
EXPANDERS["ub.v4dtrans"] = lambda call: [
    f"// {call.spec.asm_name}: {'CHW -> HWC' if call.clauses.get('chw2hwc') else 'HWC -> CHW'} of "
    f"{call.operands[2]} x {call.operands[3]} elements",
    "// register form: pto.vintlv / pto.vdintlv passes over the channel planes"]

__all__ = ["EXPANDERS"]
