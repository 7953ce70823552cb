"""VA-register ("scatter") forms of the lane-wise vector ops: ``pto.ub.scatter_<x>``.

The v100/v200 address-list instructions (``scatter_vadd_f16`` ..., TIK ``scatter_v*``) are
the lane-wise ops of `vector_elementwise` with one change, the *addressing*: each operand
gives a list of up to 8 block addresses (the VA registers) instead of a base and a block
stride. Lane ``e`` of repeat ``r`` lives in block ``j = e // E`` (``E = 32 / itemsize``) at

    ``list[j] + r * rep_stride * 32 + (e % E) * itemsize``

(TIK's debugger and the CCE CPU emulation ``generic_*_va``: 8 VA blocks per repeat, mask bit
``j * E + e``). The lanes, the mask, the numerics (``Lanewise.compute``) and the dtype rules
are the rows of `vector_elementwise.LANEWISE`; only the engine's operand streams differ
(`vector_engine.va_stream` / `vector_engine.run_va`).

=======================================================  ===============================================
TIK                                                      PTO
=======================================================  ===============================================
``scatter_vadd(m, dl, s0l, s1l, r, dr, s0r, s1r)``        ``pto.ub.scatter_vadd(dl, s0l, s1l, r, mask=m,``
                                                         ``    rep_stride=(dr, s0r, s1r))``
``scatter_vadds(m, dl, sl, x, r, dr, sr)``                ``pto.ub.scatter_vadds(dl, sl, x, r, ...)``
``scatter_vector_mov(m, dl, sl, r, dr, sr)``              ``pto.ub.scatter_vector_mov(dl, sl, r, ...)``
=======================================================  ===============================================

A list may hold fewer than 8 addresses; a lane in a block the list does not give is an error
(named choice ``SCATTER_SHORT_LIST``: TIK pads the list with its first entry after checking a
constant mask against the list length; a mask that reaches past the list is refused here in
every case instead of aliasing block 0). Omitted ``rep_stride`` = 0 (every repeat on the same
blocks). ``counter`` is the engine's counter mode (``ceil(count / PAR)`` repeats, a tail mask), which TIK
offers for ``scatter_vadds``/``scatter_vmuls`` with full 8-address lists.
"""
from __future__ import annotations

from dataclasses import replace

from .. import vector_isa
from ..errors import IllegalOperand
from ..memory import Ptr
from .registry import Clause, OpSpec, Operand, register
from . import vector_engine as ve
from .vector_elementwise import (LANEWISE, Lanewise, _check_types, _hashable, _scalar_dtype, _scalar_value,
                                 _unary_exact)

_UB = ("ub",)
MAX_LIST = ve.BLOCKS_PER_REPEAT
REP_MAX = 65535
#: A mask lane in a block past the end of a shorter list is refused (see the module doc).
SCATTER_SHORT_LIST = "error"

_MOV = Lanewise("vector_mov", "vector_mov", ("dst", "src"), ("w", "r"), False, "pto.vmov",
                _unary_exact(lambda x: x), "dst = src (a copy)", blk_max=65535)

#: The lane-wise rows that have a VA form on some chip (`vector_isa.VA_FORMS_V200`), plus the copy.
VA_ROWS = tuple(replace(r, intrinsic="scatter_" + r.intrinsic) for r in LANEWISE
                if r.name in vector_isa.VA_FORMS_V200) + (replace(_MOV, intrinsic="scatter_vector_mov"),)


def _lists(row: Lanewise, operands, op: str) -> tuple:
    return check_lists(row.mem, operands, op)


def check_lists(names: tuple, operands, op: str) -> tuple:
    """Each operand a list of 1..8 UB block pointers of one dtype; returns them as tuples."""
    out = []
    for nm, lst in zip(names, operands):
        if not isinstance(lst, (tuple, list)) or not 1 <= len(lst) <= MAX_LIST:
            raise IllegalOperand(f"expects a list of 1..{MAX_LIST} UB block pointers", op=op, operand=nm + "_list",
                                 value=type(lst).__name__ if not isinstance(lst, (tuple, list)) else len(lst),
                                 limit=f"1..{MAX_LIST}", hint="give one 32-byte-aligned address per block of a repeat")
        for j, p in enumerate(lst):
            ve.check_ub(p, op=op, operand=f"{nm}_list[{j}]")
            if p.dtype is not lst[0].dtype:
                raise IllegalOperand(f"dtype {p.dtype.name} differs from {nm}_list[0] ({lst[0].dtype.name})", op=op,
                                     operand=f"{nm}_list[{j}]", value=p.dtype.name, limit=lst[0].dtype.name,
                                     hint="every address of a list has the list's element type")
        out.append(tuple(lst))
    return tuple(out)


def _verify(row: Lanewise):
    nmem = len(row.mem)

    def verify(call, target):
        op = call.spec.asm_name
        lists = call.operands[:nmem]
        if all(isinstance(lst, (tuple, list)) and lst and all(isinstance(p, Ptr) for p in lst) for lst in lists):
            lists = _lists(row, lists, op)
            _check_types(row, {nm: lst[0].dtype for nm, lst in zip(row.mem, lists)}, target, op)
    return verify


_PLANS = ve.PlanCache()


def _plan(row: Lanewise, target, dts, repeat, mask, counter, rep_stride, list_lens, op):
    repeat = ve.check_repeat(repeat, op=op)
    par = ve.par_of(*dts)
    lanes = ve.lanes_from_clauses({"mask": mask, "counter": counter}, par=par, repeat=repeat,
                                  counter_ok=vector_isa.has_counter_mode(target), op=op)
    reps = []
    for i, nm in enumerate(row.mem):
        reps.append(0 if rep_stride is None else
                    ve.check_range(rep_stride[0][i], 0, REP_MAX, op=op, operand=f"rep_stride({nm})"))
    streams = tuple(ve.va_stream(nm, d, role, par=par, lanes=lanes, rep=r)
                    for nm, d, role, r in zip(row.mem, dts, row.roles, reps))
    check_reach(streams, list_lens, repeat, op)
    return ve.Plan(lanes, streams)


def check_reach(streams: tuple, list_lens: tuple, repeat, op: str) -> None:
    """Every block the mask reaches has an address in its list (`SCATTER_SHORT_LIST`)."""
    for s, n in zip(streams, list_lens):
        if s.shape[1] > n and repeat:
            raise IllegalOperand(f"the mask selects lanes of block {s.shape[1] - 1} but {s.name}_list gives {n} "
                                 f"address(es)", op=op, operand=s.name + "_list", value=n,
                                 limit=f">= {s.shape[1]} addresses",
                                 hint=f"give one address per block the mask reaches ({s.shape[2]} {s.dtype.name} "
                                      f"elements per block), or narrow the mask")


def _execute(row: Lanewise):
    nmem = len(row.mem)
    op = "pto.ub.scatter_" + row.name

    def execute(ctx, *operands, mask=None, counter=None, rep_stride=None):
        lists = _lists(row, operands[:nmem], op)
        dts = tuple(lst[0].dtype for lst in lists)
        dt = dict(zip(row.mem, dts))
        _check_types(row, dt, ctx.target, op)
        scalar = _scalar_value(operands[nmem], _scalar_dtype(row, dt), op=op) if row.scalar else None
        repeat = operands[nmem + (1 if row.scalar else 0)]
        lens = tuple(len(lst) for lst in lists)
        key = _hashable((row.name, tuple(d.name for d in dts), type(repeat), repeat, mask, counter, rep_stride, lens,
                         ctx.target.name))
        plan = _PLANS.get(key, lambda: _plan(row, ctx.target, dts, repeat, mask, counter, rep_stride, lens, op))

        def compute(ins, r0, r1):
            return {"dst": row.compute(ctx, dt, ins, scalar)}

        ve.run_va(ctx, plan, lists, compute)
    return execute


def _expand(row: Lanewise):
    def expand(call) -> list:
        rep = call.operands[len(row.mem) + (1 if row.scalar else 0)]
        return [f"// {call.spec.asm_name}: {rep} repeats; block j of each operand at its list[j] (VA registers)",
                f"scf.for %r = %c0 to %c{rep} step %c1 {{",
                f"  // per block j: pto.vlds %list_j[%r * rep_stride * 32]; {row.vreg} on the active lanes; "
                "pto.vsts to dst_list[j]", "}"]
    return expand


EXPANDERS: dict = {}


def _register(row: Lanewise) -> None:
    operands = tuple(Operand(nm + "_list", "ptrs", _UB, doc=f"{nm}: up to 8 block addresses (one per 32 B block)")
                     for nm in row.mem)
    if row.scalar:
        operands += (Operand("scalar", "scalar", doc="scalar operand (converted to the element type)"),)
    operands += (Operand("repeat", "int", doc="repeats, 0..255 (0 = no-op)"),)
    clauses = ve.mask_clauses() + (
        Clause("rep_stride", "args", params=tuple("%" + n for n in row.mem), min_params=len(row.mem),
               doc="repeat stride per operand in 32 B blocks, added to every list address (default 0)"),)
    spec = OpSpec(name="ub.scatter_" + row.name, family="vector", pipe="V", operands=operands, clauses=clauses,
                  execute=_execute(row), verify=_verify(row), doc=row.doc + " (VA-register addressing)")
    register(spec)
    EXPANDERS[spec.name] = _expand(row)


for _row in VA_ROWS:
    _register(_row)
del _row

__all__ = ["VA_ROWS", "SCATTER_SHORT_LIST", "EXPANDERS", "check_lists", "check_reach"]

