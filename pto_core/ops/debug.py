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
import copy
import functools
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
                             value=repr(fmt), hint="pass fmt=\"...\" with one %-conversion per value")
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
#: The numpy functions and dtypes ``np.<name>`` offers there (a curated namespace, not the numpy module: no file
#: I/O such as ``np.save`` / ``np.load``, no ``np.lib`` / ``np.ctypeslib``).
EVAL_NUMPY_NAMES = ("abs", "all", "allclose", "any", "argmax", "argmin", "argsort", "array", "array_equal", "ceil",
                    "count_nonzero", "cumsum", "diff", "exp", "flatnonzero", "floor", "isclose", "isfinite", "isinf",
                    "isnan", "log", "max", "maximum", "mean", "median", "min", "minimum", "nonzero", "prod", "round",
                    "sign", "sort", "sqrt", "std", "sum", "unique", "var", "where",
                    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                    "uint64", "bool_", "nan", "inf", "pi")
EVAL_NUMPY = type("np", (), {n: staticmethod(getattr(np, n)) if callable(getattr(np, n)) else getattr(np, n)
                             for n in EVAL_NUMPY_NAMES if hasattr(np, n)})
EVAL_BUILTINS = {"str": str, "int": int, "float": float, "len": len, "list": list, "tuple": tuple, "sum": sum,
                 "min": min, "max": max, "abs": abs, "round": round, "bool": bool, "range": range, "np": EVAL_NUMPY}
#: Attributes an expression may read besides its bound dotted names and ``np.<name>``: the data-only ones of
#: ndarrays, numbers and lists. Anything else (``__class__``, ``gi_frame``, ``tofile``, ``format``, ...) is
#: refused when the op is recorded or parsed, so a PTO-AS file cannot reach the interpreter or the file system.
EVAL_ATTRIBUTES = frozenset((
    "T", "all", "any", "argmax", "argmin", "astype", "copy", "count", "cumsum", "dtype", "flatten", "imag", "index",
    "item", "max", "mean", "min", "ndim", "nonzero", "prod", "ravel", "real", "reshape", "round", "shape", "size",
    "sort", "std", "sum", "tolist", "transpose", "var", "view", "is_integer", "hex", "bit_length"))
#: Syntax an expression may use (no lambda, no walrus, no await / yield).
_EVAL_NODES = (ast.Expression, ast.Constant, ast.Name, ast.Load, ast.Store, ast.Attribute, ast.Subscript, ast.Slice,
               ast.Tuple, ast.List, ast.Dict, ast.Set, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
               ast.Call, ast.keyword, ast.Starred, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
               ast.comprehension, ast.JoinedStr, ast.FormattedValue, ast.operator, ast.unaryop, ast.boolop,
               ast.cmpop, ast.expr_context)


def eval_expression_problem(expr: str, bound: tuple = ()) -> str:
    """Why ``expr`` may not be evaluated by ``pto.debug_eval`` ("" when it may): syntax outside `_EVAL_NODES`,
    a name starting with ``_``, or an attribute that is not part of a bound dotted name (``bound``), an
    ``np.<name>`` of `EVAL_NUMPY_NAMES` or one of `EVAL_ATTRIBUTES`."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        return f"it is not a Python expression: {e.msg}"
    # a bound dotted name is exempt only while its root names the bound value: a comprehension variable of the
    # same name (``[t.tofile(..) for t in [np.array(..)]]`` with ``t.tofile`` bound) could be any object
    stored = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    prefixes = {".".join(p.split(".")[:k]) for p in bound if p.split(".")[0] not in stored
                for k in range(1, p.count(".") + 2)}
    for node in ast.walk(tree):
        if not isinstance(node, _EVAL_NODES):
            return f"it uses {type(node).__name__} syntax"
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            return f"it uses the name {node.id!r} (names starting with '_' are not available)"
        if isinstance(node, ast.Attribute):
            chain, v = [node.attr], node.value
            while isinstance(v, ast.Attribute):
                chain.append(v.attr)
                v = v.value
            dotted = ".".join([v.id] + chain[::-1]) if isinstance(v, ast.Name) else None
            if dotted in prefixes or (isinstance(v, ast.Name) and v.id == "np" and "np" not in stored and len(chain) == 1
                                      and node.attr in EVAL_NUMPY_NAMES) or node.attr in EVAL_ATTRIBUTES:
                continue
            return f"it reads the attribute {node.attr!r} (only bound names, np.<function> and data attributes " \
                   f"such as shape, dtype, sum, max, astype, tolist)"
    return ""
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
                             operand="bind", value=repr(text)[:80],
                             hint="write bind=((\"name\", \"s\", 0), ...): a tuple literal of tuples")
    for e in out:
        parts = e[0].split(".")
        if not all(p.isidentifier() and not p.startswith("__") for p in parts) or parts[0].startswith("_"):
            raise IllegalOperand(f"bind name {e[0]!r} must be a dotted name of identifiers (no leading '_' name, "
                                 f"no '__' attribute)", op="pto.debug_eval", operand="bind", value=e[0][:80],
                                 hint="bind plain dotted names such as \"x\" or \"acc.scale\" (no leading underscore, "
                                      "no dunder)")
    return out


@functools.lru_cache(maxsize=256)
def _prepared(expr: str, bind: str) -> tuple:
    """``(bind entries, compiled expr)`` of a ``pto.debug_eval``, checked (`_layout`, `eval_expression_problem`)
    once per text: the op is checked when recorded or parsed and again before it runs, which in a loop is
    every iteration."""
    layout = _layout(bind)
    problem = eval_expression_problem(expr, tuple(e[0] for e in layout))
    if problem:
        raise IllegalOperand(f"expr {expr!r} cannot be evaluated: {problem}", op="pto.debug_eval",
                             operand="expr", value=expr[:80],
                             hint="print bound names with str int float len list tuple sum min max abs round bool "
                                  "range, np.<function> and data attributes (shape, dtype, sum, max, tolist, ...)")
    return layout, compile(expr, "<debug_print>", "eval")


def _set_path(ns: dict, path: str, value) -> None:
    parts = path.split(".")
    if len(parts) == 1:
        ns[path] = value
        return
    obj = ns.setdefault(parts[0], _Obj(parts[0]))
    for p in parts[1:-1]:                   # only namespaces made here are walked and set (never a value's class)
        obj = vars(obj).setdefault(p, _Obj(p)) if isinstance(obj, _Obj) else obj
    if not isinstance(obj, _Obj):
        raise IllegalOperand(f"bind name {path!r} extends the bound value {'.'.join(parts[:-1])!r}",
                             op="pto.debug_eval", operand="bind", value=path[:80],
                             hint=f"bind {path!r} and {'.'.join(parts[:-1])!r} under different names (a bound value "
                                  "has no attributes to set)")
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
    layout, code = _prepared(str(expr), str(bind))
    ns = {}
    for entry in layout:
        path, kind = entry[0], entry[1]
        if kind == "s":
            v = vals[entry[2]]
        elif kind == "a":
            v = list(vals[entry[2]:entry[2] + entry[3]])
        elif kind == "t":
            v = _tensor_value(ctx, ptrs[entry[2]], tuple(entry[3]), tuple(entry[4]))
        else:                     # a fresh copy: the layout is shared (`_prepared`) and `c.sort()` may mutate it
            v = copy.deepcopy(entry[2])
        _set_path(ns, path, v)
    # numpy's C code imports lazily through the running frame's builtins: __import__ must be there; the
    # expression itself cannot name it (`eval_expression_problem` refuses names starting with '_')
    builtins = dict(EVAL_BUILTINS, __import__=__import__)
    try:
        result = eval(code, {"__builtins__": builtins}, ns)
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
                             value=repr(expr), hint="pass expr=\"...\" with the Python expression to evaluate")
    layout, _ = _prepared(expr, str(call.clauses.get("bind", "()")))
    vals = call.clauses.get("values")
    tens = call.clauses.get("tensors")
    nv = len(vals[0]) if vals else 0
    nt = len(tens[0]) if tens else 0
    for entry in layout:
        kind = entry[1]
        ok = (kind == "s" and len(entry) == 3 and 0 <= entry[2] < nv) or \
             (kind == "a" and len(entry) == 4 and 0 <= entry[2] and entry[2] + entry[3] <= nv) or \
             (kind == "t" and len(entry) == 5 and 0 <= entry[2] < nt and len(entry[3]) == len(entry[4])) or \
             (kind == "c" and len(entry) == 3)
        if not ok:
            raise IllegalOperand(f"bind entry {entry!r} does not match the {nv} value(s) and {nt} tensor(s)",
                                 op="pto.debug_eval", operand="bind", value=repr(entry)[:80],
                                 hint="make each bind entry index an existing value (kind \"s\") or tensor (kind "
                                      "\"t\") of the call")


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
