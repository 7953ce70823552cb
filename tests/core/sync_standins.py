"""Test-only stand-in ops, one per pipe, for the sync and hazard-verifier tests.

The real MTE / mad / FIXPIPE ops live on other branches; these rows exercise the same
`ExecContext` access paths (``ctx.read`` / ``ctx.write`` / unit-flag hooks) under each
pipe, so every edge and hazard kind can be built without them. Registered once per
process (module import is cached); names start with ``t_`` so they cannot collide
with real ops.

* ``t_<pipe>(src, dst, nbytes)``: dst bytes = src bytes + 1 (mod 256), on that pipe
  (``t_mte2``, ``t_mte1``, ``t_mte3``, ``t_vec``, ``t_fix``, ``t_cube``, ``t_scalar``).
* ``t_mad(a, b, c, nbytes, unit_flag=)``: pipe M, c = a + b bytewise; ``unit_flag``
  ``check_only`` / ``check_and_set`` like ``pto.mad``.
* ``t_fixpipe(src_l0c, dst, nbytes, unit_flag=)``: pipe FIX, dst = src;
  ``unit_flag`` ``check_only`` / ``check_and_clear`` like ``pto.mte_l0c_*``.
* ``t_read(src, nbytes)`` / ``t_write(dst, nbytes, value)`` on a pipe chosen by name
  (``t_read_v``, ``t_write_mte3`` ...): one access only, for exact-range tests;
  ``t_rmw_<pipe>(dst, nbytes, value)`` writes then reads back the same bytes (one op).
"""
from __future__ import annotations

from pto_core.ops.registry import OPS, Clause, Operand, OpSpec, register
from pto_core.pipes import PIPES

ANY = ("gm", "l1", "l0a", "l0b", "l0c", "ub", "bt", "fb")


def _copy_plus_one(ctx, src, dst, nbytes):
    data = ctx.read(src, nbytes, operand="src").copy()
    ctx.write(dst, nbytes, operand="dst")[:] = data + 1


def _mad(ctx, a, b, c, nbytes, unit_flag=None):
    va = ctx.read(a, nbytes, operand="lhs").copy()
    vb = ctx.read(b, nbytes, operand="rhs").copy()
    if unit_flag is not None:
        ctx.unit_flag_check(c, nbytes)
    ctx.write(c, nbytes, operand="dst")[:] = va + vb
    if unit_flag == "check_and_set":
        ctx.unit_flag_publish(c, nbytes)


def _fixpipe(ctx, src, dst, nbytes, unit_flag=None):
    if unit_flag is not None:
        ctx.unit_flag_consume(src, nbytes, clear=unit_flag == "check_and_clear")
    data = ctx.read(src, nbytes, operand="src").copy()
    ctx.write(dst, nbytes, operand="dst")[:] = data


def _read(ctx, src, nbytes):
    ctx.read(src, nbytes, operand="src")


def _write(ctx, dst, nbytes, value):
    ctx.write(dst, nbytes, operand="dst")[:] = value


def _write_then_read(ctx, dst, nbytes, value):
    ctx.write(dst, nbytes, operand="dst")[:] = value
    ctx.read(dst, nbytes, operand="dst")


_COPY_NAMES = {"MTE2": "t_mte2", "MTE1": "t_mte1", "MTE3": "t_mte3", "V": "t_vec", "FIX": "t_fix",
               "M": "t_cube", "S": "t_scalar"}


def _register_all():
    if "t_mad" in OPS:
        return
    buf = (Operand("src", "ptr", ANY), Operand("dst", "ptr", ANY), Operand("nbytes", "int"))
    for pipe, name in _COPY_NAMES.items():
        register(OpSpec(name, "test", pipe, buf, _copy_plus_one, doc=f"test copy on {pipe}"))
    for pipe in PIPES:
        register(OpSpec(f"t_read_{pipe.lower()}", "test", pipe,
                        (Operand("src", "ptr", ANY), Operand("nbytes", "int")), _read, doc="test read"))
        register(OpSpec(f"t_write_{pipe.lower()}", "test", pipe,
                        (Operand("dst", "ptr", ANY), Operand("nbytes", "int"), Operand("value", "int")), _write,
                        doc="test write"))
        register(OpSpec(f"t_rmw_{pipe.lower()}", "test", pipe,
                        (Operand("dst", "ptr", ANY), Operand("nbytes", "int"), Operand("value", "int")),
                        _write_then_read, doc="test write, then read back (one op)"))
    register(OpSpec("t_mad", "test", "M",
                    (Operand("lhs", "ptr", ("l0a",)), Operand("rhs", "ptr", ("l0b",)), Operand("dst", "ptr", ("l0c",)),
                     Operand("nbytes", "int")), _mad,
                    clauses=(Clause("unit_flag", "word", values=("check_only", "check_and_set")),),
                    doc="test mad: c = a + b bytewise"))
    register(OpSpec("t_fixpipe", "test", "FIX",
                    (Operand("src", "ptr", ("l0c",)), Operand("dst", "ptr", ANY), Operand("nbytes", "int")),
                    _fixpipe, clauses=(Clause("unit_flag", "word", values=("check_only", "check_and_clear")),),
                    doc="test FIXPIPE: dst = src"))


_register_all()
