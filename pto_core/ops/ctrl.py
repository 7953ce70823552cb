"""Control-register ops: the GM atomic mode (``pto.set_atomic_<type>``, ``pto.set_atomic_<op>``).

The atomic mode is a per-core control register (``SPR.CTRL[8:6]`` type, ``[10:9]`` op,
pto_spec.md §5.6) that GM-writing moves consult: while it is enabled, ``pto.mte_ub_gm``
and ``pto.mte_l1_gm`` do ``gm[i] = gm[i] (op) data[i]`` element by element in the mode's
type instead of overwriting (TIK ``set_atomic_add``, AscendC ``SetAtomicAdd<T>`` /
``SetAtomicNone``). The two setters update disjoint fields, as in PTOAS/VPTO, whose
spelling we use::

    pto.set_atomic_f32()      // type field: f32 f16 s16 s32 s8 bf16
    pto.set_atomic_add()      // op field + enable: add | max | min
    pto.set_atomic_none()     // disable

Simulator state: ``ctx.spr["ATOMIC_TYPE"]`` (dtype name, default ``"f32"``) and
``ctx.spr["ATOMIC_OP"]`` (``"add"``/``"max"``/``"min"``, absent = disabled); read them
with `atomic_mode`. The ops are issued by the scalar unit (pipe S) and access no
memory. Encoding (type 1..6 = f32 f16 s16 s32 s8 bf16, op 0..2 = add max min) is TIK's
``set_atomic_add(mode)`` numbering too.

Read back: ``pto.get_spr "ATOMIC"[0]`` gives the mode as one word, the two fields of
``SPR.CTRL[10:6]`` shifted down: 0 while atomics are disabled (the state at kernel start),
else ``type | op << 3`` (f32 add = 1, f16 max = 10). TIK ``mov_atomic_add_to_scalar`` reads it.
"""
from __future__ import annotations

from typing import Optional

from .registry import OpSpec, register

#: type field code -> dtype (SPR.CTRL[8:6]; TIK set_atomic_add modes 1..6).
ATOMIC_TYPES = {1: "f32", 2: "f16", 3: "s16", 4: "s32", 5: "s8", 6: "bf16"}
ATOMIC_OPS = ("add", "max", "min")


def atomic_mode(ctx) -> Optional[tuple]:
    """``(dtype name, op)`` of the enabled GM atomic mode of this core, or None."""
    op = ctx.spr.get("ATOMIC_OP")
    if op is None:
        return None
    return ctx.spr.get("ATOMIC_TYPE", "f32"), op


def atomic_word(ctx) -> int:
    """The ``ATOMIC`` special-register word of this core (module doc): 0 when disabled."""
    mode = atomic_mode(ctx)
    if mode is None:
        return 0
    code = next(k for k, v in ATOMIC_TYPES.items() if v == mode[0])
    return code | ATOMIC_OPS.index(mode[1]) << 3


#: special registers `pto.get_spr` derives from this module's state (never "unwritten": atomics
#: start disabled)
SPR_READERS = {"ATOMIC": atomic_word}


def _set_type(dtype: str):
    def execute(ctx):
        ctx.spr["ATOMIC_TYPE"] = dtype
    return execute


def _set_op(op: str):
    def execute(ctx):
        ctx.spr["ATOMIC_OP"] = op
    return execute


def _set_none(ctx):
    ctx.spr.pop("ATOMIC_OP", None)


for _t in ATOMIC_TYPES.values():
    register(OpSpec(f"set_atomic_{_t}", "ctrl", "S", operands=(), execute=_set_type(_t),
                    doc=f"GM atomic type field = {_t} (does not enable atomics by itself)"))
for _o in ATOMIC_OPS:
    register(OpSpec(f"set_atomic_{_o}", "ctrl", "S", operands=(), execute=_set_op(_o),
                    doc=f"enable GM atomic {_o}: mte_ub_gm / mte_l1_gm do gm = gm {_o} data in the atomic type"))
register(OpSpec("set_atomic_none", "ctrl", "S", operands=(), execute=_set_none,
                doc="disable GM atomics: GM-writing moves overwrite again"))
del _t, _o
