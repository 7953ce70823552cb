"""Debug output a front end can place in a program: ``pto.debug_print``.

    pto.debug_print values(%i, %x) {fmt = "i=%d x=%f\\n"}

formats the run-time values of up to six scalar operands with a C ``printf`` format
(``%[flags][width][.precision]type``, types ``d i u o x X f e g c s %``) and writes the
text to the machine's console: ``Machine.printed`` keeps ``(core, text)`` pairs and the
text goes to ``sys.stdout`` (TIK's ``printf`` prints during ``start_debug`` the same way),
unless ``screen = false`` (TIK ``set_printf_params(is_printf_to_screen=False)``): then only
``Machine.printed`` gets it.
Like ``pto.assert_in_bounds`` it is a simulator facility on the scalar unit, not a
hardware instruction; it touches no memory.
"""
from __future__ import annotations

import re
import sys

from ..errors import IllegalOperand
from .registry import Clause, OpSpec, register

#: one C conversion: %[flags][width][.precision]type (``%%`` is a literal percent sign).
_CONVERSION = re.compile(r"%([#0\- +]*)(\d*)(?:\.(\d+))?([diuoxXfFeEgGcs%])")
MAX_VALUES = 6


def format_c(fmt: str, values: tuple) -> str:
    """``fmt`` with C printf conversions applied to ``values`` (ints and floats).

    Integer conversions of a float use its truncation; ``%o``/``%x`` of a negative int
    print the 64-bit two's complement (as C does for a 64-bit argument)."""
    out, pos, k = [], 0, 0
    for m in _CONVERSION.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, kind = m.groups()
        if kind == "%":
            out.append("%")
            continue
        if k >= len(values):
            raise IllegalOperand(f"format {fmt!r} has more conversions than the {len(values)} value(s) given",
                                 op="pto.debug_print", operand="fmt", value=fmt, limit=f"{len(values)} value(s)")
        v = values[k]
        k += 1
        spec = "%" + flags + width + (f".{prec}" if prec is not None else "")
        if kind in "diu":
            out.append((spec + "d") % int(v))
        elif kind in "oxX":
            iv = int(v)
            out.append((spec + kind) % (iv if iv >= 0 else iv + (1 << 64)))
        elif kind == "c":
            out.append((spec + "c") % chr(int(v) & 0xFF))
        elif kind == "s":
            out.append((spec + "s") % (v,))
        else:
            out.append((spec + kind) % float(v))
    out.append(fmt[pos:])
    if k != len(values):
        raise IllegalOperand(f"format {fmt!r} uses {k} of the {len(values)} value(s) given", op="pto.debug_print",
                             operand="values", value=len(values), limit=f"{k} conversion(s)")
    return "".join(out)


def _debug_print(ctx, *, fmt, values=None, screen=True):
    vals = tuple(values[0]) if values else ()
    text = format_c(str(fmt), vals)
    ctx.machine.printed.append((ctx.core.index, text))
    if screen:
        ctx.machine.outside(lambda: sys.stdout.write(text))


def _verify(call, target):
    vals = call.clauses.get("values")
    n = len(vals[0]) if vals else 0              # (the clause allows at most MAX_VALUES)
    fmt = call.clauses.get("fmt")
    if not isinstance(fmt, str) or not fmt:
        raise IllegalOperand("debug_print needs a non-empty fmt string", op="pto.debug_print", operand="fmt",
                             value=repr(fmt))
    wanted = sum(1 for m in _CONVERSION.finditer(fmt) if m.group(4) != "%")
    if wanted != n:
        raise IllegalOperand(f"format {fmt!r} has {wanted} conversion(s) for {n} value(s)", op="pto.debug_print",
                             operand="fmt", value=fmt, limit=f"{n} conversion(s)",
                             hint="give one value per %d/%f/... conversion (write %% for a percent sign)")


register(OpSpec(
    name="debug_print", family="debug", pipe="S",
    operands=(),
    clauses=(Clause("values", "args", params=tuple(f"%v{i}" for i in range(MAX_VALUES)), min_params=0,
                    doc="up to six scalar values (int or float registers, or constants)"),
             Clause("fmt", "attr", doc="C printf format string"),
             Clause("screen", "attr", values=(True, False), doc="also write the text to stdout (default true)")),
    execute=_debug_print, verify=_verify,
    doc="print scalar values with a C printf format to the machine console (Machine.printed and stdout)"))
