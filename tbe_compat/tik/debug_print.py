"""``tik_instance.tikdb.debug_print(expr)`` (TIK reference "debug_print"): the names of ``expr`` resolved in
the caller's frame at trace time, lowered to one ``pto.debug_eval`` that evaluates ``expr`` at run time.

Each Name and each attribute chain rooted at a Name (``self.tensor``) is looked up in the caller's locals, then
its globals, when ``debug_print`` is called (named choice ``DEBUG_PRINT_RESOLVES_AT_TRACE``); the chain is
followed until it reaches a TIK value, which becomes an operand of the op:

* a Scalar / Expr -> its run-time value (a Python int or float),
* a ScalarArray -> the list of its registers' values,
* a Tensor (or view; static shape, dtypes of 8 bits or more) -> a numpy.ndarray of the view's shape and
  dtype holding its current data,
* an int, float, str, bool or None (or numpy scalar) -> that constant.

Anything else (a module, a class instance the chain ends on) is an `IllegalOperand` at the user's line naming
it. Names a comprehension binds (inside that comprehension; Python's scoping) and the restricted builtins
(`pto_core.ops.debug.EVAL_BUILTINS`: str int float len list tuple sum min max abs round bool range, numpy as
``np``) need no binding. The value of ``expr`` is printed as Python prints it (``print(value)``), in core
order, kept in ``Machine.printed``, and honours ``set_printf_params(is_printf_to_screen=False)``.
"""
from __future__ import annotations

import ast
import builtins

import numpy as np

from pto_core.errors import IllegalOperand, UnsupportedOp
from pto_core.ops.debug import EVAL_BUILTINS, MAX_EVAL_TENSORS, MAX_EVAL_VALUES

from .scalar import Expr
from .scalar_extra import ScalarArray
from .tensor import Tensor

#: Named choice (tik_core.md "tikdb.debug_print"): names and attribute chains are resolved when debug_print is
#: called (trace time), not when the debugger reaches it; a later ``self.tensor = other`` does not change what an
#: earlier debug_print prints (TIK's debugger would print the new object).
DEBUG_PRINT_RESOLVES_AT_TRACE = True

_CONSTANTS = (int, float, str, bool, type(None))


class _Chains(ast.NodeVisitor):
    """Name / attribute chains the expression loads from the calling code: a name a comprehension binds is its
    own inside that comprehension only (``s, [s * 2 for s in xs]`` loads the caller's ``s`` and ``xs``)."""

    def __init__(self):
        self.chains, self._local = [], []

    def _load(self, name, attrs):
        if not any(name in names for names in self._local):
            self.chains.append((name, attrs))

    def visit_Attribute(self, node):
        attrs, v = [], node
        while isinstance(v, ast.Attribute):
            attrs.append(v.attr)
            v = v.value
        if isinstance(v, ast.Name) and isinstance(v.ctx, ast.Load):
            self._load(v.id, tuple(reversed(attrs)))
        else:
            self.visit(v)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self._load(node.id, ())

    def _comprehension(self, node):
        gens = node.generators
        self.visit(gens[0].iter)                 # the first iterable is evaluated in the enclosing scope
        self._local.append({n.id for g in gens for n in ast.walk(g.target) if isinstance(n, ast.Name)})
        for k, g in enumerate(gens):
            if k:
                self.visit(g.iter)
            for cond in g.ifs:
                self.visit(cond)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self.visit(getattr(node, part))
        self._local.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_Lambda(self, node):                # refused when the op is recorded (pto.debug_eval has no lambda)
        pass


def _is_builtin(name, obj) -> bool:
    return name in EVAL_BUILTINS and (obj is EVAL_BUILTINS[name] or obj is getattr(builtins, name, None)
                                      or (name == "np" and obj is np))      # the user's numpy: the curated np


def lower(tik, expr, frame) -> None:
    """Record the ``pto.debug_eval`` of ``tikdb.debug_print(expr)`` called from ``frame`` (see module doc)."""
    if not isinstance(expr, str) or not expr.strip():
        raise tik._error(f"expr must be a non-empty str holding a Python expression, got {expr!r}"[:200],
                         operand="expr", value=repr(expr)[:80], hint="pass the text, e.g. debug_print(\"x_ub\")")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as e:
        raise tik._error(f"expr {expr!r} is not a Python expression: {e.msg}", operand="expr", value=expr[:80],
                         hint="pass one Python expression as text, e.g. '\"i=\" + str(i)' or 'x_ub'") from None
    chains = _Chains()
    chains.visit(tree)
    values, tensors, footprint, bind, seen = [], [], [], [], set()
    for root, attrs in chains.chains:
        if root in frame.f_locals:
            obj = frame.f_locals[root]
        elif root in frame.f_globals:
            obj = frame.f_globals[root]
        elif root in EVAL_BUILTINS:
            continue
        else:
            raise tik._error(f"name {root!r} of expr {expr!r} is not defined where debug_print is called",
                             operand="expr", value=root,
                             hint="use the names of Scalars, ScalarArrays, Tensors and constants of the calling code")
        if _is_builtin(root, obj):
            continue
        path, k = root, 0
        while not isinstance(obj, (Expr, Tensor, _CONSTANTS, np.generic)) \
                and not isinstance(obj, ScalarArray) and k < len(attrs):
            try:
                obj = getattr(obj, attrs[k])
            except AttributeError:
                raise tik._error(f"{path} has no attribute {attrs[k]!r} (expr {expr!r})", operand="expr",
                                 value=f"{path}.{attrs[k]}",
                                 hint="print a name the kernel defines (a Scalar, Tensor or constant)") from None
            path += "." + attrs[k]
            k += 1
        if path in seen:
            continue
        seen.add(path)
        if isinstance(obj, Expr):
            bind.append((path, "s", len(values)))
            values.append(obj.ir)
        elif isinstance(obj, ScalarArray):
            bind.append((path, "a", len(values), len(obj.regs)))
            values.extend(r.ir for r in obj.regs)
        elif isinstance(obj, Tensor):
            op = tik._operand(obj, path)
            shape, strides = tuple(obj._shape), tuple(obj._strides)
            if not all(isinstance(x, int) for x in shape + strides):
                raise tik._error(f"debug_print of tensor {path} with run-time dims is not simulated", operand=path,
                                 value=repr(obj), cls=UnsupportedOp, hint="print a view with constant dims")
            if obj.dt.bits < 8:
                raise tik._error(f"debug_print of {obj.dtype} tensor {path} (packed sub-byte data) is not simulated",
                                 operand=path, value=obj.dtype, cls=UnsupportedOp,
                                 hint="move the data to a tensor of a byte-sized dtype and print that")
            bind.append((path, "t", len(tensors), shape, strides))
            tensors.append(op.ptr)
            footprint.append(op.read())
        elif isinstance(obj, np.generic) and isinstance(obj.item(), _CONSTANTS):
            bind.append((path, "c", obj.item()))
        elif isinstance(obj, _CONSTANTS):
            bind.append((path, "c", obj))
        else:
            raise tik._error(f"{path} in expr {expr!r} is a {type(obj).__name__}: debug_print can print Scalars, "
                             f"Exprs, ScalarArrays, Tensors and int/float/str/bool/None constants",
                             operand="expr", value=path,
                             hint="name the TIK value itself (e.g. self.x_ub rather than self)")
    if len(values) > MAX_EVAL_VALUES or len(tensors) > MAX_EVAL_TENSORS:
        raise tik._error(f"expr {expr!r} uses {len(values)} scalar value(s) and {len(tensors)} tensor(s)",
                         operand="expr", value=expr[:80],
                         limit=f"{MAX_EVAL_VALUES} scalar values (a ScalarArray counts its length) and "
                               f"{MAX_EVAL_TENSORS} tensors", cls=UnsupportedOp,
                         hint="split it into several debug_print calls")
    params = getattr(tik, "_printf_params", None)
    extra = {} if params is None or params.to_screen else {"screen": False}
    try:
        tik._emit("debug_eval", values=tuple(values) if values else None,
                  tensors=tuple(tensors) if tensors else None, expr=expr.strip(), bind=repr(tuple(bind)),
                  footprint=footprint, **extra)
    except IllegalOperand as e:
        raise tik._error(e.message, operand="expr", value=e.value, hint=e.hint) from None
