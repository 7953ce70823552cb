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

import ast
import re
import sys

import numpy as np

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


# ----------------------------------------------------------------------------- pto.debug_eval
#: Names a ``pto.debug_eval`` expression may use without binding them (the restricted builtins, TIK's
#: ``tikdb.debug_print`` evaluates its text with Python's): numpy is ``np``.
EVAL_BUILTINS = {"str": str, "int": int, "float": float, "len": len, "list": list, "tuple": tuple, "sum": sum,
                 "min": min, "max": max, "abs": abs, "round": round, "bool": bool, "range": range, "np": np}
MAX_EVAL_VALUES = 64
MAX_EVAL_TENSORS = 8


class _Obj:
    """A namespace object standing for the root of an attribute chain (``self`` in ``self.x``)."""

    def __init__(self, name):
        self.__name = name

    def __repr__(self):
        return f"<{self.__name}>"


def _layout(text):
    """``bind`` attribute -> tuple of entries (see `_debug_eval`); ``ast.literal_eval`` only."""
    try:
        out = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        out = None
    if not isinstance(out, tuple) or not all(isinstance(e, tuple) and len(e) >= 2 and isinstance(e[0], str)
                                            for e in out):
        raise IllegalOperand("bind must be a tuple literal of (name, kind, ...) entries", op="pto.debug_eval",
                             operand="bind", value=repr(text)[:80])
    return out


def _set_path(ns: dict, path: str, value) -> None:
    parts = path.split(".")
    if len(parts) == 1:
        ns[path] = value
        return
    obj = ns.get(parts[0])
    if obj is None:
        obj = ns[parts[0]] = _Obj(parts[0])
    for p in parts[1:-1]:
        nxt = getattr(obj, p, None)
        if nxt is None:
            nxt = _Obj(p)
            setattr(obj, p, nxt)
        obj = nxt
    setattr(obj, parts[-1], value)


def _tensor_value(ctx, ptr, shape, strides):
    """The current data of a strided view at ``ptr`` as a new ndarray (no access is recorded)."""
    d = ptr.dtype
    if not shape or any(s == 0 for s in shape):
        return np.zeros(shape, d.storage)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    raw = ctx.peek(ptr, d.nbytes(span)).view(d.storage)
    item = raw.itemsize
    return np.lib.stride_tricks.as_strided(raw, shape, tuple(s * item for s in strides)).copy()


def _debug_eval(ctx, *, expr, bind, values=None, tensors=None, screen=True):
    vals = tuple(values[0]) if values else ()
    ptrs = tuple(tensors[0]) if tensors else ()
    ns = {}
    for entry in _layout(bind):
        path, kind = entry[0], entry[1]
        if kind == "s":
            v = vals[entry[2]]
        elif kind == "a":
            v = list(vals[entry[2]:entry[2] + entry[3]])
        elif kind == "t":
            v = _tensor_value(ctx, ptrs[entry[2]], tuple(entry[3]), tuple(entry[4]))
        else:
            v = entry[2]
        _set_path(ns, path, v)
    try:
        result = eval(compile(str(expr), "<debug_print>", "eval"), {"__builtins__": dict(EVAL_BUILTINS)}, ns)
    except Exception as e:        # the user's expression failed: report it at their line
        raise IllegalOperand(f"evaluating {str(expr)!r} raised {type(e).__name__}: {e}", op="pto.debug_eval",
                             operand="expr", value=str(expr)[:80],
                             hint="fix the expression (it sees the bound names, str int float len list tuple "
                                  "sum min max abs round bool range and numpy as np)") from None
    text = f"{result}\n"
    ctx.machine.printed.append((ctx.core.index, text))
    if screen:
        ctx.machine.outside(lambda: sys.stdout.write(text))


def _verify_eval(call, target):
    expr = call.clauses.get("expr")
    if not isinstance(expr, str) or not expr.strip():
        raise IllegalOperand("debug_eval needs a non-empty expr string", op="pto.debug_eval", operand="expr",
                             value=repr(expr))
    try:
        compile(expr, "<debug_print>", "eval")
    except SyntaxError as e:
        raise IllegalOperand(f"expr {expr!r} is not a Python expression: {e.msg}", op="pto.debug_eval",
                             operand="expr", value=expr[:80]) from None
    vals = call.clauses.get("values")
    tens = call.clauses.get("tensors")
    nv = len(vals[0]) if vals else 0
    nt = len(tens[0]) if tens else 0
    for entry in _layout(call.clauses.get("bind", "()")):
        kind = entry[1]
        ok = (kind == "s" and len(entry) == 3 and 0 <= entry[2] < nv) or \
             (kind == "a" and len(entry) == 4 and 0 <= entry[2] and entry[2] + entry[3] <= nv) or \
             (kind == "t" and len(entry) == 5 and 0 <= entry[2] < nt and len(entry[3]) == len(entry[4])) or \
             (kind == "c" and len(entry) == 3)
        if not ok:
            raise IllegalOperand(f"bind entry {entry!r} does not match the {nv} value(s) and {nt} tensor(s)",
                                 op="pto.debug_eval", operand="bind", value=repr(entry)[:80])


register(OpSpec(
    name="debug_eval", family="debug", pipe="S",
    operands=(),
    clauses=(Clause("values", "args", params=tuple(f"%v{i}" for i in range(MAX_EVAL_VALUES)), min_params=0,
                    doc="scalar values the expression's names are bound to (registers, expressions, constants)"),
             Clause("tensors", "args", params=tuple(f"%t{i}" for i in range(MAX_EVAL_TENSORS)), min_params=0,
                    doc="pointers to the tensor views the expression reads"),
             Clause("expr", "attr", doc="a Python expression"),
             Clause("bind", "attr", doc="tuple literal: (name, 's', value index) | (name, 'a', first value, count) | "
                                        "(name, 't', tensor index, shape, element strides) | (name, 'c', constant)"),
             Clause("screen", "attr", values=(True, False), doc="also write the text to stdout (default true)")),
    execute=_debug_eval, verify=_verify_eval,
    doc="evaluate a Python expression on run-time scalars and tensor contents and print its value "
        "(TIK tikdb.debug_print) to the machine console"))
