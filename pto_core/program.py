"""Program IR: a kernel signature, PTO ops, scalar registers, loops, ifs, expressions.

A `Program` is plain data::

    Program(name, target, args=[GmArg | ScalarArg ...], body=[statement ...], block_num)

Statements (each carries ``where``, a `Provenance`):

====================  =====================================================================
`OpStmt`              one PTO op (`registry.OpCall`); operands/clause values may be `Expr`
`Assign`              ``reg = value`` (the value is converted to the register type)
`Load` / `Store`      one element read/write through a pointer (the S pipe's UB/GM traffic)
`ReadSpr`             ``reg = `` a special register an op wrote (``pto.get_spr``: `SPR_WORDS`)
`For`                 ``for var in range(lo, hi, step)`` (bounds evaluated once)
`If`                  ``if cond: then else: orelse`` (``elif`` = an `If` alone in ``orelse``)
`Break` `Continue`    innermost loop; `Return` ends the kernel on this core
====================  =====================================================================

Expressions (`Expr`) are immutable trees, typed with a register type (see
`pto_core.scalars`) or a `PtrType`. They are evaluated where a statement uses them,
with the register values at that moment (TIK ``Expr`` semantics). Leaves: `Const`,
`Reg` (mutable scalar register), `LoopVar`, `ScalarArg`, `GmArg` (pointer argument),
`BlockIdx`/`BlockNum`, `Undef`; nodes: `BinOp`, `UnOp`, `Cmp`, `Cast`, `Bitcast`,
`Select`, and pointer nodes `PtrFromInt` (``pto.castptr`` of an address), `PtrAdd`
(``pto.addptr``, element offset), `PtrCast` (element-type reinterpretation),
`PtrToInt`.

Operators build nodes with C's usual arithmetic conversions: Python numbers take the
other operand's type; mixed register types convert to the wider (float beats int,
unsigned beats signed of equal width, ``index`` beats 64-bit ints). ``/`` on integers
is the same truncating division as ``//`` (TIK). Comparisons return ``i1`` nodes, so
an `Expr` has no truth value: write ``k.if_(x > 0)``, never ``if x > 0``.

The builder records ``pto.<op>(...)`` calls (the eager spelling) through
`registry.push_recorder`::

    with program("add1", target="A2A3") as k:
        x = k.gm_arg("x", "s32", (16,))
        y = k.gm_arg("y", "s32", (16,), io="out")
        with k.for_(0, 16) as i:
            v = k.load(x, i)
            k.store(y, i, v + 1)
    outputs = k.program.run({"x": np.arange(16, dtype=np.int32)})
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import scalars as S
from .dtypes import DType, dtype as _dtype
from .errors import FencedProvenance, IllegalOperand, Provenance, PtoError, UnknownName, UnsupportedOp
from .memory import Ptr
from .ops import registry
from .pipes import event_id, pipe_name, sync_op_pipe
from .scalars import INDEX, scalar_type
from .targets import ChipProfile, get_target, space_name

BOOL = _dtype("bool")
I64 = _dtype("s64")
F32 = _dtype("f32")
U8 = _dtype("u8")


class PtrType:
    """``!pto.ptr<dtype, space>``."""

    __slots__ = ("dtype", "space")

    def __init__(self, dt, space: str):
        self.dtype = _dtype(dt)
        self.space = space_name(space)

    def __eq__(self, other):
        return isinstance(other, PtrType) and other.dtype is self.dtype and other.space == self.space

    def __hash__(self):
        return hash((self.dtype.name, self.space))

    def __str__(self):
        return f"!pto.ptr<{self.dtype.pto_name}, {self.space}>"

    __repr__ = __str__


def type_str(t) -> str:
    """PTO-AS spelling of a register type or pointer type."""
    return str(t) if isinstance(t, PtrType) else t.pto_name


# ============================================================================= expressions

_ids = iter(range(1, 1 << 62))


class Expr:
    """Base of every IR value. ``type`` is a register `DType` or a `PtrType`."""

    __slots__ = ("type", "name")
    is_ptr = False

    def __bool__(self):
        raise PtoError("a program expression has no Python truth value",
                       hint="use k.if_(cond) / k.for_(...) inside a program builder, not Python if/while")

    __hash__ = object.__hash__

    def children(self) -> tuple:
        return ()


class ScalarExpr(Expr):
    """A scalar value: arithmetic, comparison and bitwise operators build IR nodes."""

    __slots__ = ()

    # arithmetic
    def __add__(self, o): return binop("add", self, o)
    def __radd__(self, o): return binop("add", o, self)
    def __sub__(self, o): return binop("sub", self, o)
    def __rsub__(self, o): return binop("sub", o, self)
    def __mul__(self, o): return binop("mul", self, o)
    def __rmul__(self, o): return binop("mul", o, self)
    def __floordiv__(self, o): return binop("div", self, o)
    def __rfloordiv__(self, o): return binop("div", o, self)
    def __truediv__(self, o): return binop("div", self, o)
    def __rtruediv__(self, o): return binop("div", o, self)
    def __mod__(self, o): return binop("rem", self, o)
    def __rmod__(self, o): return binop("rem", o, self)
    def __lshift__(self, o): return binop("shl", self, o)
    def __rlshift__(self, o): return binop("shl", o, self)
    def __rshift__(self, o): return binop("shr", self, o)
    def __rrshift__(self, o): return binop("shr", o, self)
    def __and__(self, o): return binop("and", self, o)
    def __rand__(self, o): return binop("and", o, self)
    def __or__(self, o): return binop("or", self, o)
    def __ror__(self, o): return binop("or", o, self)
    def __xor__(self, o): return binop("xor", self, o)
    def __rxor__(self, o): return binop("xor", o, self)
    def __neg__(self): return unop("neg", self)
    def __pos__(self): return self
    def __invert__(self): return unop("not", self)
    def __abs__(self): return unop("abs", self)

    # comparisons (i1 results)
    def __lt__(self, o): return cmp("lt", self, o)
    def __le__(self, o): return cmp("le", self, o)
    def __gt__(self, o): return cmp("gt", self, o)
    def __ge__(self, o): return cmp("ge", self, o)
    def __eq__(self, o): return cmp("eq", self, o)
    def __ne__(self, o): return cmp("ne", self, o)
    __hash__ = object.__hash__

    def astype(self, t) -> "ScalarExpr":
        """C conversion to register type ``t``."""
        return cast(self, t)

    @property
    def dtype(self) -> DType:
        return self.type


class Const(ScalarExpr):
    """A constant of a register type (the value is normalised: ints wrap, floats round)."""

    __slots__ = ("value",)

    def __init__(self, value, t):
        if type(value) is int:                  # the common case: an in-range int of an integer register type
            hit = _INT_CONST_TYPES.get(id(t))
            if hit is not None and hit[0] is t and hit[1] <= value <= hit[2]:
                self.type, self.value, self.name = t, value, None
                return
        self.type = scalar_type(t)
        self.value = S.normalize(value, self.type)
        self.name = None

    def __repr__(self):
        return f"{self.value!r}:{self.type.pto_name}"


#: id(register type) -> (type, lo, hi) of the integer register types (`scalar_type` (t) is t): an int
#: constant inside the range is its own normalised value
_INT_CONST_TYPES = {id(t): (t, *S.int_bounds(t)) for t in
                    (scalar_type(n) for n in S.REGISTER_TYPES) if S.is_int(t) and not S.is_bool(t)}


class Undef(ScalarExpr):
    """An undefined value (``ub.poison``): what a register holds before its first assignment.
    ``why`` (optional; PTO-AS ``ub.poison {pto.why = "..."}``): the error where the value is used."""

    __slots__ = ("why",)

    def __init__(self, t, why: Optional[str] = None):
        self.type = scalar_type(t)
        self.name = None
        self.why = why

    def __repr__(self):
        return f"undef:{self.type.pto_name}"


class Reg(ScalarExpr):
    """A mutable scalar register. ``r.set(v)`` (or ``r += v``) records an assignment.

    ``owner``: the `Builder` whose kernel the register belongs to (``k.reg`` sets it; None: not
    checked); a statement of another builder that uses it is an error (it would read a register
    the other kernel never has)."""

    __slots__ = ("id", "owner", "declared")

    def __init__(self, t, name: Optional[str] = None, owner=None, declared: Optional[str] = None):
        self.type = scalar_type(t)
        self.name = name
        self.id = next(_ids)
        self.owner = owner
        self.declared = declared        # "file:line" of the front end's declaration, for error messages

    def set(self, value, *, where: Optional[Provenance] = None) -> "Reg":
        _active_builder("assign a register").assign(self, value, where=where)
        return self

    set_as = set

    def _inplace(self, op, o):
        self.set(binop(op, self, o))
        return self

    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("sub", o)
    def __imul__(self, o): return self._inplace("mul", o)
    def __ifloordiv__(self, o): return self._inplace("div", o)
    def __itruediv__(self, o): return self._inplace("div", o)
    def __imod__(self, o): return self._inplace("rem", o)
    def __ilshift__(self, o): return self._inplace("shl", o)
    def __irshift__(self, o): return self._inplace("shr", o)
    def __iand__(self, o): return self._inplace("and", o)
    def __ior__(self, o): return self._inplace("or", o)
    def __ixor__(self, o): return self._inplace("xor", o)

    def __repr__(self):
        return f"%{self.name or 'r'}{self.id}"


class LoopVar(ScalarExpr):
    """The induction variable of a `For`. ``hidden``: a loop a front end made for its own lowering (not one
    the user wrote); run-time errors leave it out of their ``[at core=.., i=..]`` context (`HIDDEN_LOOP_VARS`)."""

    __slots__ = ("id", "hidden")

    def __init__(self, t, name: str = "i"):
        self.type = scalar_type(t)
        self.name = name
        self.id = next(_ids)
        self.hidden = False

    def __repr__(self):
        return f"%{self.name}"


class ScalarArg(ScalarExpr):
    """A scalar kernel argument (TIK ``InputScalar``), read-only. ``owner``: as `Reg.owner`."""

    __slots__ = ("owner",)

    def __init__(self, name: str, t, owner=None):
        self.type = scalar_type(t)
        self.name = name
        self.owner = owner

    def __repr__(self):
        return f"%{self.name}"


class BlockIdx(ScalarExpr):
    """``pto.get_block_idx``: this core's index in ``[0, block_num)`` (i64)."""

    __slots__ = ()

    def __init__(self):
        self.type = I64
        self.name = None

    def __repr__(self):
        return "block_idx"


class BlockNum(ScalarExpr):
    """``pto.get_block_num``: the number of cores the kernel runs on (i64)."""

    __slots__ = ()

    def __init__(self):
        self.type = I64
        self.name = None

    def __repr__(self):
        return "block_num"


#: operator -> (allowed on ints, allowed on floats, allowed on i1)
BINOPS = {
    "add": (True, True, False), "sub": (True, True, False), "mul": (True, True, False),
    "div": (True, True, False), "rem": (True, True, False), "shl": (True, False, False),
    "shr": (True, False, False), "and": (True, False, True), "or": (True, False, True),
    "xor": (True, False, True), "min": (True, True, False), "max": (True, True, False),
}
UNOPS = {"neg": (True, True, False), "not": (True, False, True), "abs": (True, True, False),
         "sqrt": (False, True, False), "floor": (False, True, False), "ceil": (False, True, False),
         "trunc": (False, True, False), "roundeven": (False, True, False), "round": (False, True, False)}
CMPS = ("eq", "ne", "lt", "le", "gt", "ge")
_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "shl": "<<", "shr": ">>", "and": "&",
           "or": "|", "xor": "^", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


class BinOp(ScalarExpr):
    __slots__ = ("op", "a", "b")

    def __init__(self, op: str, a: ScalarExpr, b: ScalarExpr):
        self.op, self.a, self.b = op, a, b
        self.type = a.type
        self.name = None

    def children(self):
        return (self.a, self.b)

    def __repr__(self):
        if self.op in ("min", "max"):
            return f"{self.op}({self.a!r}, {self.b!r})"
        return f"({self.a!r} {_SYMBOL[self.op]} {self.b!r})"


class UnOp(ScalarExpr):
    __slots__ = ("op", "a")

    def __init__(self, op: str, a: ScalarExpr):
        self.op, self.a = op, a
        self.type = a.type
        self.name = None

    def children(self):
        return (self.a,)

    def __repr__(self):
        return f"{self.op}({self.a!r})"


class Cmp(ScalarExpr):
    __slots__ = ("pred", "a", "b")

    def __init__(self, pred: str, a: ScalarExpr, b: ScalarExpr):
        self.pred, self.a, self.b = pred, a, b
        self.type = BOOL
        self.name = None

    def children(self):
        return (self.a, self.b)

    def __repr__(self):
        return f"({self.a!r} {_SYMBOL[self.pred]} {self.b!r})"


class Cast(ScalarExpr):
    """C value conversion to ``type`` (see `pto_core.scalars.convert`)."""

    __slots__ = ("a",)

    def __init__(self, a: ScalarExpr, t):
        self.a = a
        self.type = scalar_type(t)
        self.name = None

    def children(self):
        return (self.a,)

    def __repr__(self):
        return f"{self.type.pto_name}({self.a!r})"


class Bitcast(ScalarExpr):
    """Bit reinterpretation to an equal-width type."""

    __slots__ = ("a",)

    def __init__(self, a: ScalarExpr, t):
        self.a = a
        self.type = scalar_type(t)
        self.name = None

    def children(self):
        return (self.a,)

    def __repr__(self):
        return f"bitcast<{self.type.pto_name}>({self.a!r})"


class Select(ScalarExpr):
    __slots__ = ("c", "a", "b")

    def __init__(self, c: ScalarExpr, a: ScalarExpr, b: ScalarExpr):
        self.c, self.a, self.b = c, a, b
        self.type = a.type
        self.name = None

    def children(self):
        return (self.c, self.a, self.b)

    def __repr__(self):
        return f"select({self.c!r}, {self.a!r}, {self.b!r})"


class PtrToInt(ScalarExpr):
    """The byte address of a pointer as an i64 (``pto.castptr %p : !pto.ptr<..> -> i64``)."""

    __slots__ = ("p",)

    def __init__(self, p: "PtrExpr"):
        self.p = p
        self.type = I64
        self.name = None

    def children(self):
        return (self.p,)

    def __repr__(self):
        return f"addr({self.p!r})"


# ----------------------------------------------------------------------------- pointers


class PtrExpr(Expr):
    """A pointer value (``!pto.ptr<T, space>``): ``p + n`` moves ``n`` elements.

    Has the `Ptr` attributes op verifiers read: ``dtype``, ``space``, ``sub`` (always 0),
    ``type_str``.
    """

    __slots__ = ()
    is_ptr = True
    sub = 0

    @property
    def dtype(self) -> DType:
        return self.type.dtype

    @property
    def space(self) -> str:
        return self.type.space

    @property
    def type_str(self) -> str:
        return str(self.type)

    def __add__(self, n):
        if isinstance(n, int) and not isinstance(n, bool) and n == 0:
            return self
        return PtrAdd(self, _user_offset(n))

    __radd__ = __add__

    def __sub__(self, n):
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            return self + (-int(n))
        return PtrAdd(self, UnOp("neg", _user_offset(n)))

    def cast(self, new_dtype) -> "PtrExpr":
        """Same address, another element type."""
        d = _dtype(new_dtype)
        return self if d is self.dtype else PtrCast(self, d)

    def byte_offset(self, nbytes) -> "PtrExpr":
        """Move by ``nbytes`` bytes."""
        return (self.cast(U8) + nbytes).cast(self.dtype)

    @property
    def addr(self):
        """The byte address: an int when it is a compile-time constant, else an i64 expression."""
        a = static_addr(self)
        return PtrToInt(self) if a is None else a


class PtrReg(PtrExpr):
    """A pointer-valued register (the PTO-AS parser's form of a loop-carried or computed pointer)."""

    __slots__ = ("id",)

    def __init__(self, t: PtrType, name: Optional[str] = None):
        self.type = t
        self.name = name
        self.id = next(_ids)

    def __repr__(self):
        return f"%{self.name or 'p'}{self.id}"


_I64_LIMIT = 1 << 63


def _gm_shape(name: str, shape) -> tuple:
    """A GM argument's shape as a tuple of ints >= 1 (a list/tuple/array of ints, or one int)."""
    dims = list(shape) if isinstance(shape, (list, tuple, np.ndarray)) else [shape]
    bad = next((d for d in dims if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer))
                or not 1 <= int(d) < _I64_LIMIT), None) if dims else shape
    if bad is not None or not dims:
        raise IllegalOperand(f"GM argument {name!r} has shape {shape!r}: dimensions must be ints >= 1",
                             operand=name, value=repr(shape), limit="dimensions in [1, 2**63)",
                             hint="give the shape as a list of positive ints, e.g. pto.shape = [16, 32]")
    return tuple(int(d) for d in dims)


def _gm_init(name: str, init) -> tuple:
    """The initial values of a GM argument: numbers (Python ints stay exact)."""
    values = np.asarray(init, dtype=object).reshape(-1).tolist() if not isinstance(init, str) else [init]
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise IllegalOperand(f"GM argument {name!r}: init value {v!r} is not a number", operand=name,
                                 value=repr(v), hint="give init as a list of numbers, one per element")
    return tuple(float(v) if isinstance(v, (float, np.floating)) else int(v) for v in values)


class GmArg(PtrExpr):
    """A GM tensor kernel argument: pointer to its first element.

    ``io``: ``"in"`` (caller provides it), ``"out"`` (returned), ``"inout"`` (both) or
    ``"workspace"`` (neither). ``fill``: initial content of non-input tensors
    (``None`` = the machine's fill pattern, ``"zero"``, ``"pattern"``, ``"random"``);
    ``init``: explicit initial values (TIK ``init_value``).

    ``shape=None`` declares a *host buffer* (PTOAS kernels: ``%a: !pto.ptr<f32, gm>`` with no
    shape): the caller passes the array at every run, its shape is taken from that array, and
    the kernel's writes come back, so the argument must be ``in`` or ``inout``.

    ``shown``: the name messages give the argument's GM region (`GmRegion.shown`), when a front end had to
    give the argument another name than its user's (TIK workspaces: ``ws`` -> argument ``ws_ws``, kept apart
    from the kernel's inputs and outputs); empty: ``name``.
    """

    __slots__ = ("shape", "io", "fill", "init", "shown")

    def __init__(self, name: str, dt, shape, io: str = "in", fill: Optional[str] = None, init=None):
        self.type = PtrType(dt, "gm")
        self.name = name
        if shape is None:
            if io not in ("in", "inout") or fill is not None or init is not None:
                raise IllegalOperand(f"GM argument {name!r} has no shape, so the caller must pass it (io in or "
                                     f"inout, no fill/init), got io={io!r}", operand=name, value=io,
                                     limit="io in ('in', 'inout')",
                                     hint="give the shape (pto.shape = [...]) or pass the buffer as an input")
            self.shape = None
        elif type(shape) is tuple and shape and all(type(s) is int and 1 <= s < _I64_LIMIT for s in shape):
            self.shape = shape              # the common case (what the numpy round trip gives)
        else:
            self.shape = _gm_shape(name, shape)
        if io not in ("in", "out", "inout", "workspace"):
            raise IllegalOperand(f"io={io!r} is not one of in, out, inout, workspace", operand=name, value=io,
                                 hint="use pto.io = \"in\", \"out\", \"inout\" or \"workspace\"")
        if fill not in (None, "zero", "pattern", "random"):
            raise IllegalOperand(f"fill={fill!r} is not one of zero, pattern, random", operand=name, value=fill,
                                 hint="use fill=\"zero\", \"pattern\" or \"random\" (or leave fill out)")
        if init is not None and io in ("in", "inout"):
            raise IllegalOperand(f"GM argument {name!r} is an input; init= applies to out/workspace tensors",
                                 operand=name,
                                 hint="drop init= (inputs come from the caller), or declare the tensor io=\"out\" or "
                                      "\"workspace\"")
        self.io, self.fill = io, fill
        self.init = None if init is None else _gm_init(name, init)
        self.shown = ""

    @property
    def count(self) -> int:
        if self.shape is None:
            raise IllegalOperand(f"GM argument {self.name!r} is a host buffer: its size is known only at run time",
                                 operand=self.name,
                                 hint="give the GM argument a shape, or read its size from a scalar argument")
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.dtype.nbytes(self.count)

    def __repr__(self):
        return f"%{self.name}"


class PtrFromInt(PtrExpr):
    """``pto.castptr %addr : iN -> !pto.ptr<T, space>``: a pointer from a byte address."""

    __slots__ = ("a",)

    def __init__(self, a: ScalarExpr, t: PtrType):
        self.a, self.type, self.name = a, t, None

    def children(self):
        return (self.a,)

    def __repr__(self):
        return f"ptr<{self.dtype.pto_name},{self.space}>({self.a!r})"


class PtrAdd(PtrExpr):
    """``pto.addptr %p, %n``: ``p`` moved by ``n`` elements (n is an ``index`` value)."""

    __slots__ = ("p", "n")

    def __init__(self, p: PtrExpr, n: ScalarExpr):
        self.p, self.n, self.type, self.name = p, n, p.type, None

    def children(self):
        return (self.p, self.n)

    def __repr__(self):
        return f"({self.p!r} + {self.n!r})"


class PtrCast(PtrExpr):
    """``pto.castptr %p : !pto.ptr<S, sp> -> !pto.ptr<T, sp>``: same address, new element type."""

    __slots__ = ("p",)

    def __init__(self, p: PtrExpr, dt):
        self.p, self.type, self.name = p, PtrType(dt, p.space), None

    def children(self):
        return (self.p,)

    def __repr__(self):
        return f"cast<{self.dtype.pto_name}>({self.p!r})"


# ----------------------------------------------------------------------------- construction


LEAVES = (Const, Undef, Reg, PtrReg, LoopVar, ScalarArg, BlockIdx, BlockNum, GmArg)
#: Mutable registers (assigned by `Assign` / `Load`).
REGS = (Reg, PtrReg)
#: Leaves whose value is the same everywhere in one kernel run on one core.
INVARIANT_LEAVES = (Const, Undef, ScalarArg, BlockIdx, BlockNum, GmArg)


#: The method a front end's scalar value defines to give its IR expression (`as_expr` calls it):
#: TIK's ``Scalar``/``Expr``/loop index (``tbe_compat``) define it, so pointer arithmetic on a TIK
#: tensor's PTO pointer takes them (``t.pto_ptr() + s``, ``p.byte_offset(i * 64)``), as
#: ``t[s].pto_ptr()`` does. pto_core never imports the front end; the front end opts in.
PTO_EXPR_HOOK = "__pto_expr__"


def as_expr(v, t=None) -> Expr:
    """An `Expr` for a Python value (``t`` = the type to give a Python number)."""
    if isinstance(v, Expr):
        return v
    if isinstance(v, Ptr):
        return ptr_const(v)
    if isinstance(v, (bool, np.bool_)):
        return Const(bool(v), BOOL if t is None else t)
    if isinstance(v, (int, np.integer)):
        return Const(int(v), INDEX if t is None else t)
    if isinstance(v, (float, np.floating)):
        return Const(float(v), F32 if t is None or not S.is_float(t) else t)
    hook = getattr(type(v), PTO_EXPR_HOOK, None)
    if hook is not None:
        e = hook(v)
        if isinstance(e, Expr):
            return e
    raise IllegalOperand(f"cannot use {type(v).__name__} {v!r} as a program value", value=v,
                         hint="use ints, floats, registers, loop variables or expressions")


def ptr_const(p: Ptr) -> PtrExpr:
    """A constant pointer (from an eager `Ptr`, e.g. ``Machine.ptr``): ``castptr`` of its address."""
    if p.sub:
        raise IllegalOperand("pointers into the UB of vector sub-core 1 cannot be program constants",
                             operand="sub", value=p.sub, hint="address UB 1 through the op's dst_mode clause")
    return PtrFromInt(Const(p.addr, I64), PtrType(p.dtype, p.space))


def _float_rank(t: DType) -> int:
    return {"f16": 1, "bf16": 1, "f32": 2}[t.name]


def common_type(a: DType, b: DType) -> DType:
    """C's usual arithmetic conversions over register types."""
    if a is b:
        return a
    if S.is_float(a) or S.is_float(b):
        if not S.is_float(a):
            return b
        if not S.is_float(b):
            return a
        if _float_rank(a) == _float_rank(b):
            return F32          # f16 with bf16
        return a if _float_rank(a) > _float_rank(b) else b
    if S.is_bool(a):
        return b
    if S.is_bool(b):
        return a
    if a is INDEX or b is INDEX:
        return INDEX
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == "u" else b


def _lit(v, t: DType) -> Const:
    """A Python number as a constant of register type ``t``."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) and not S.is_bool(t):
        v = int(v)
    return Const(v, t)


def _scalar_operand(x):
    if isinstance(x, Expr) and x.is_ptr:
        raise IllegalOperand(f"pointer {x!r} used in scalar arithmetic", value=repr(x),
                             hint="move pointers with p + n, or take p.addr for the byte address")
    if isinstance(x, np.generic):
        return x.item()
    return x


def _pair(a, b) -> tuple:
    """Both operands as expressions of one type (Python numbers adopt the other's type)."""
    a, b = _scalar_operand(a), _scalar_operand(b)
    ea, eb = isinstance(a, Expr), isinstance(b, Expr)
    if not ea and not eb:
        a, b = as_expr(a), as_expr(b)
        t = common_type(a.type, b.type)
        return cast(a, t), cast(b, t)
    if not ea:
        if isinstance(a, float) and not S.is_float(b.type):
            return Const(a, F32), cast(b, F32)
        return _lit(a, b.type), b
    if not eb:
        if isinstance(b, float) and not S.is_float(a.type):
            return cast(a, F32), Const(b, F32)
        return a, _lit(b, a.type)
    t = common_type(a.type, b.type)
    return cast(a, t), cast(b, t)


def binop(op: str, a, b) -> ScalarExpr:
    """``a <op> b`` with C conversions; ``op`` in `BINOPS`. Shifts keep the left operand's type."""
    if op in ("shl", "shr"):
        a, b = _scalar_operand(a), _scalar_operand(b)
        x = a if isinstance(a, Expr) else as_expr(a, b.type if isinstance(b, Expr) else None)
        y = b if isinstance(b, Expr) else _lit(b, x.type)
        a, b = x, cast(y, x.type)
    else:
        a, b = _pair(a, b)
    _check_kind(op, BINOPS[op], a.type)
    return BinOp(op, a, b)


def unop(op: str, a) -> ScalarExpr:
    a = as_expr(a)
    _check_kind(op, UNOPS[op], a.type)
    return UnOp(op, a)


def _check_kind(op, allowed, t):
    ok_int, ok_float, ok_bool = allowed
    if (S.is_int(t) and not ok_int) or (S.is_float(t) and not ok_float) or (S.is_bool(t) and not ok_bool):
        raise IllegalOperand(f"operator {op!r} does not apply to {t.pto_name} values", operand=op,
                             value=t.pto_name, hint="cast the operands first (x.astype('s32'))")


def cmp(pred: str, a, b) -> ScalarExpr:
    a, b = _pair(a, b)
    return Cmp(pred, a, b)


def cast(x, t) -> ScalarExpr:
    """C conversion to register type ``t`` (to ``bool``: ``x != 0``)."""
    if isinstance(x, ScalarExpr) and x.type is t:       # already of that type (the common case)
        return x
    t = scalar_type(t)
    x = as_expr(x, t)
    if x.is_ptr:
        raise IllegalOperand("cannot convert a pointer to a scalar type", value=repr(x),
                             hint="use p.addr (the byte address) where a number is meant")
    if x.type is t:
        return x
    if isinstance(x, Const):
        return Const(S.convert(x.value, x.type, t), t)
    if S.is_bool(t):
        return Cmp("ne", x, Const(0, x.type))
    return Cast(x, t)


def bitcast(x, t) -> ScalarExpr:
    """Reinterpret the bits of ``x`` as type ``t`` of the same width."""
    t = scalar_type(t)
    x = as_expr(x)
    if x.type.bits != t.bits or S.is_bool(t) or S.is_bool(x.type):
        raise IllegalOperand(f"bitcast from {x.type.pto_name} to {t.pto_name} needs equal widths",
                             operand="bitcast", value=t.pto_name,
                             hint=f"bitcast to a {x.type.bits}-bit type, or convert the value (astype) instead")
    return x if x.type is t else Bitcast(x, t)


def select(c, a, b) -> ScalarExpr:
    """``a if c else b`` (both arms converted to a common type)."""
    c = cast(as_expr(c, BOOL), BOOL)
    a, b = _pair(a, b)
    return Select(c, a, b)


def min_(a, b) -> ScalarExpr:
    return binop("min", a, b)


def max_(a, b) -> ScalarExpr:
    return binop("max", a, b)


def abs_(a) -> ScalarExpr:
    return unop("abs", a)


def sqrt(a) -> ScalarExpr:
    return unop("sqrt", a)


def floor(a) -> ScalarExpr:
    """Round a float toward -inf (result in the same float type; TIK ``scalar_conv`` 'floor')."""
    return unop("floor", a)


def ceil(a) -> ScalarExpr:
    return unop("ceil", a)


def trunc(a) -> ScalarExpr:
    return unop("trunc", a)


def round_even(a) -> ScalarExpr:
    """Nearest integral value, ties to even (TIK 'round')."""
    return unop("roundeven", a)


def round_away(a) -> ScalarExpr:
    """Nearest integral value, ties away from zero (TIK 'away-zero')."""
    return unop("round", a)


def all_(*conds) -> ScalarExpr:
    """Logical and of conditions (TIK ``tik.all``)."""
    out = cast(conds[0], BOOL)
    for c in conds[1:]:
        out = BinOp("and", out, cast(c, BOOL))
    return out


def any_(*conds) -> ScalarExpr:
    """Logical or of conditions (TIK ``tik.any``)."""
    out = cast(conds[0], BOOL)
    for c in conds[1:]:
        out = BinOp("or", out, cast(c, BOOL))
    return out


def not_(c) -> ScalarExpr:
    """Logical negation of a condition (TIK ``tik.negate``)."""
    return UnOp("not", cast(c, BOOL))


def offset_error(n: int, run_time: bool = False) -> IllegalOperand:
    """The error of a pointer offset ``n`` outside int64: an int offset when the kernel is written (`_offset`), an
    offset expression's exact value when it runs (``run_time``: `interpreter` `_off64`; its integer arithmetic
    would wrap it, e.g. ``ub[s * 4]`` with an int64 Scalar ``s = 2**62`` addressed ``ub[0]``)."""
    how = " (the exact value of its integer arithmetic, at run time)" if run_time else ""
    return IllegalOperand(f"pointer offset {n}{how} does not fit a 64-bit index (it would wrap around)",
                          operand="offset", value=n, limit="[-2**63, 2**63)",
                          hint="offset by the number of elements inside the buffer (an offset this large "
                               "is outside every memory space)")


def _offset(n) -> ScalarExpr:
    """An element offset as an ``index`` value. An int outside int64 is refused: ``index`` arithmetic wraps
    modulo 2**64, so ``p + 2**64`` would silently be ``p``."""
    if type(n) is int or (isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_))):
        if not -2 ** 63 <= int(n) < 2 ** 63:
            raise offset_error(int(n))
        if type(n) is int:
            return Const(n, INDEX)
    e = as_expr(n, INDEX)
    if e.is_ptr or not (S.is_int(e.type) or S.is_bool(e.type)):
        raise IllegalOperand(f"pointer offsets must be integers, got {type_str(e.type)}", operand="offset",
                             value=repr(e), hint="offset by a whole number of elements (an int, an integer "
                                                 "Scalar or loop index); for bytes: p.byte_offset(b) with an "
                                                 "integer b")
    return cast(e, INDEX)


def _user_offset(n) -> ScalarExpr:
    """`_offset` for ``p + n`` / ``p - n``: an error names the user's line (`p + 1.5`, `p - "x"`)."""
    try:
        return _offset(n)
    except PtoError as e:
        if e.op is None:
            e.op = "pointer arithmetic"
        raise e.with_where(registry.user_frame(2)) from None


def static_addr(p) -> Optional[int]:
    """The byte address of a pointer expression made only of constants, else None."""
    if isinstance(p, PtrFromInt):
        return p.a.value if isinstance(p.a, Const) else None
    if isinstance(p, PtrCast):
        return static_addr(p.p)
    if isinstance(p, PtrAdd) and isinstance(p.n, Const):
        base = static_addr(p.p)
        if base is None:
            return None
        bits = p.dtype.bits
        n = p.n.value
        return base + (n * (bits // 8) if bits >= 8 else ((n * bits + 7) // 8 if n >= 0 else -((-n * bits + 7) // 8)))
    return None


def walk(e: Expr):
    """All nodes of an expression (pre-order). Expressions are DAGs (a TIK expression built in a Python
    loop can reach one node by 2**n paths): a shared inner node and what is below it are visited once."""
    stack = [e]
    seen = set()
    while stack:
        x = stack.pop()
        kids = x.children()
        if kids:
            if id(x) in seen:
                continue
            seen.add(id(x))
        yield x
        stack.extend(reversed(kids))


# ============================================================================= statements


class Stmt:
    __slots__ = ("where",)


class OpStmt(Stmt):
    """One PTO op. ``call.operands`` / ``call.clauses`` may hold `Expr` values."""

    __slots__ = ("call",)

    def __init__(self, call: registry.OpCall):
        self.call = call
        self.where = call.where

    def __repr__(self):
        return f"OpStmt({self.call.spec.asm_name})"


class Assign(Stmt):
    """``reg = value``; ``reg`` is a `Reg` (value of the same register type) or a `PtrReg`.

    ``carry=True`` marks a value carried along by ``scf.yield`` / ``iter_args`` / ``pto.break``
    (what the PTO-AS parser builds): copying a register that was never assigned is then no read --
    the target keeps what it holds, as an assignment of ``ub.poison`` does -- so a value that is
    undefined on one path is an error only where it is really used."""

    __slots__ = ("reg", "value", "carry")

    def __init__(self, reg: Reg, value: ScalarExpr, where=None, carry: bool = False):
        self.reg, self.value, self.where, self.carry = reg, value, where, carry

    def __repr__(self):
        return f"{self.reg!r} = {self.value!r}"


class Load(Stmt):
    """``reg = *(ptr + offset)`` (one element; ``reg.type`` is the pointer's element type)."""

    __slots__ = ("reg", "ptr", "offset")

    def __init__(self, reg: Reg, ptr: PtrExpr, offset: ScalarExpr, where=None):
        self.reg, self.ptr, self.offset, self.where = reg, ptr, offset, where

    def __repr__(self):
        return f"{self.reg!r} = load {self.ptr!r}[{self.offset!r}]"


#: Special registers a program may read into a scalar register (`ReadSpr`), with their number of
#: 64-bit words: ``RSVD_CNT`` (elements the last ``vreduce``/``vreduce_bits`` kept, over all repeats),
#: ``VMS4_SR`` (records ``vmrgsort4`` took from each of its four lists), ``ATOMIC`` (the GM atomic
#: mode, ``pto_core.ops.ctrl``: 0 off, else ``type | op << 3``).
SPR_WORDS = {"RSVD_CNT": 1, "VMS4_SR": 4, "ATOMIC": 1}


class ReadSpr(Stmt):
    """``reg = spr[index]``: word ``index`` of special register ``spr`` (`SPR_WORDS`) as the ops before it
    in program order left it on this core, converted to ``reg.type``."""

    __slots__ = ("reg", "spr", "index")

    def __init__(self, reg: Reg, spr: str, index: int = 0, where=None):
        self.reg, self.spr, self.index, self.where = reg, spr, index, where

    def __repr__(self):
        return f"{self.reg!r} = spr {self.spr}[{self.index}]"


class Store(Stmt):
    """``*(ptr + offset) = value`` (``value.type`` is the pointer's element type)."""

    __slots__ = ("ptr", "offset", "value")

    def __init__(self, ptr: PtrExpr, offset: ScalarExpr, value: ScalarExpr, where=None):
        self.ptr, self.offset, self.value, self.where = ptr, offset, value, where

    def __repr__(self):
        return f"store {self.ptr!r}[{self.offset!r}] = {self.value!r}"


class For(Stmt):
    __slots__ = ("var", "lo", "hi", "step", "body")

    def __init__(self, var: LoopVar, lo, hi, step, body: list, where=None):
        self.var, self.lo, self.hi, self.step, self.body, self.where = var, lo, hi, step, body, where

    def __repr__(self):
        return f"for {self.var!r} in range({self.lo!r}, {self.hi!r}, {self.step!r}) [{len(self.body)}]"


class If(Stmt):
    __slots__ = ("cond", "then", "orelse")

    def __init__(self, cond: ScalarExpr, then: list, orelse: Optional[list] = None, where=None):
        self.cond, self.then, self.orelse, self.where = cond, then, orelse, where

    def __repr__(self):
        return f"if {self.cond!r} [{len(self.then)}] else [{len(self.orelse or [])}]"


class Break(Stmt):
    __slots__ = ()

    def __init__(self, where=None):
        self.where = where


class Continue(Stmt):
    __slots__ = ()

    def __init__(self, where=None):
        self.where = where


class Return(Stmt):
    __slots__ = ()

    def __init__(self, where=None):
        self.where = where


TERMINATORS = (Break, Continue, Return)


def stmt_exprs(s: Stmt) -> list:
    """The expressions a statement evaluates (not those of nested blocks)."""
    if isinstance(s, OpStmt):
        out = []
        for vals in (s.call.operands, s.call.clauses.values()):
            for v in vals:
                if type(v) in _PLAIN:
                    continue
                if isinstance(v, Expr):
                    out.append(v)
                elif isinstance(v, (tuple, list, dict)):
                    out.extend(clause_exprs(v))
        return out
    if isinstance(s, Assign):
        return [s.value]
    if isinstance(s, Load):
        return [s.ptr, s.offset]
    if isinstance(s, Store):
        return [s.ptr, s.offset, s.value]
    if isinstance(s, For):
        return [s.lo, s.hi, s.step]
    if isinstance(s, If):
        return [s.cond]
    return []


#: Value types that hold no expression.
_PLAIN = frozenset({int, float, bool, str, type(None)})


def clause_exprs(v) -> list:
    """The expressions inside a (normalised) clause value: a value, ``(args, kw)``, or a tuple of those
    (depth first, in order)."""
    if isinstance(v, Expr):
        return [v]
    out: list = []
    if type(v) not in _PLAIN:
        _clause_exprs_into(v, out)
    return out


def _clause_exprs_into(v, out: list) -> None:
    """`clause_exprs` of a container ``v`` appended to ``out`` (plain items skipped without a call: fixpipe
    and img2col clauses hold dozens of ints)."""
    if isinstance(v, (tuple, list)):
        items = v
    elif isinstance(v, dict):
        items = v.values()
    else:
        return
    for x in items:
        if type(x) in _PLAIN:
            continue
        if isinstance(x, Expr):
            out.append(x)
        else:
            _clause_exprs_into(x, out)


def located_op_error(e: PtoError, spec, operands: tuple, where, target=None) -> None:
    """Complete an error an op's checks raised for the call at ``where``: the op's name, the space hint of an
    `IllegalOperand` (swapped pointers, or the move between the given spaces: `registry.space_error_hint`),
    and the user's line (recording, and `Executable._verify_on`, raise it then)."""
    if e.op is None:
        e.op = spec.asm_name
    if isinstance(e, IllegalOperand):
        e.hint = registry.space_error_hint(spec, operands, target) or e.hint
    e.with_where(where)


def walk_stmts(block: list):
    """Every statement in a block, depth first, in program order."""
    for s in block:
        yield s
        if isinstance(s, For):
            yield from walk_stmts(s.body)
        elif isinstance(s, If):
            yield from walk_stmts(s.then)
            if s.orelse:
                yield from walk_stmts(s.orelse)


# ============================================================================= program


class Program:
    """A kernel: signature (``args``), body, target and launch width.

    ``block_num``: ``None`` (launch width chosen at run time, default 1), an int, or a
    `ScalarArg` whose run-time value is the number of cores.
    """

    def __init__(self, name: str, target, args=(), body=None, block_num=None):
        self.name = name
        self.target: ChipProfile = get_target(target)
        self.args: list = list(args)
        self.body: list = body if body is not None else []
        self.block_num = block_num
        self._executable = None

    @property
    def gm_args(self) -> list:
        return [a for a in self.args if isinstance(a, GmArg)]

    @property
    def scalar_args(self) -> list:
        return [a for a in self.args if isinstance(a, ScalarArg)]

    def arg(self, name: str):
        for a in self.args:
            if a.name == name:
                return a
        names = ", ".join(a.name for a in self.args)
        raise UnknownName(f"kernel {self.name!r} has no argument {name!r} "
                          f"({'its arguments: ' + names if names else 'it has no arguments'})", value=name,
                          limit=names or "(no arguments)",
                          hint=f"name one of {names}" if names else "give the kernel arguments first")

    def to_asm(self, **kw) -> str:
        """PTO-AS text (see `pto_core.asm.print_program`)."""
        from .asm import print_program
        return print_program(self, **kw)

    def __str__(self):
        return self.to_asm()

    def compile(self, *, probes=None):
        """The compiled `pto_core.interpreter.Executable` (compiled once, then cached: finish
        building the program before the first run). ``probes`` (a sequence of
        `pto_core.interpreter.Probe`) compiles a new executable with those observer calls
        and caches it in place of the previous one, so later runs use it too."""
        if self._executable is None or probes is not None:
            from .interpreter import compile_program
            self._executable = compile_program(self, probes or ())
        return self._executable

    def run(self, inputs: Optional[dict] = None, **kw) -> dict:
        """Compile (once) and run; see `pto_core.interpreter.Executable.run`."""
        return self.compile().run(inputs, **kw)

    def __repr__(self):
        return f"<Program {self.name} {len(self.args)} args {sum(1 for _ in walk_stmts(self.body))} stmts>"


# ============================================================================= builder


_builders: list = []


def current_builder() -> Optional["Builder"]:
    """The innermost open program builder (or None)."""
    return _builders[-1] if _builders else None


def _active_builder(what: str) -> "Builder":
    b = current_builder()
    if b is None:
        raise PtoError(f"cannot {what} outside a program builder",
                       hint="write the kernel inside `with program('name') as k:`")
    return b


def _same_block_num(a, b) -> bool:
    """Whether two multi-core loops launch the same block count: equal ints, or the same scalar argument."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return a is b


class _Scope:
    """A context manager that closes a nested block on exit."""

    def __init__(self, builder, block, value=None, on_exit=None):
        self.builder, self.block, self.value, self.on_exit = builder, block, value, on_exit

    def __enter__(self):
        self.builder._blocks.append(self.block)
        return self.value

    def __exit__(self, *exc):
        if self.builder._blocks[-1] is not self.block:
            raise PtoError("program blocks closed out of order")
        self.builder._blocks.pop()
        if self.on_exit is not None:
            self.on_exit()
        return False


class _At:
    """Context manager of `Builder.at`: pushes a provenance on enter, pops it on exit."""

    __slots__ = ("stack", "where")

    def __init__(self, stack: list, where: Optional[Provenance]):
        self.stack, self.where = stack, where

    def __enter__(self):
        self.stack.append(self.where)

    def __exit__(self, *exc):
        self.stack.pop()
        return False


def _user_errors(call: str):
    """Decorator of the public `Builder` methods: a `PtoError` they raise without a location gets the
    user's ``file:line`` (the ``where=`` argument, else the open `Builder.at` provenance, else the user's
    frame: `Builder._prov`), tagged with the builder call ``call`` (``"k.load"``). One mechanism for every
    builder call, as `_user_offset` is for pointer arithmetic."""
    def deco(fn):
        def method(self, *args, **kw):
            try:
                return fn(self, *args, **kw)
            except PtoError as e:
                if e.where is None:
                    e.with_where(self._prov(kw.get("where"), call))
                raise
        method.__name__, method.__qualname__, method.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        method.__wrapped__ = fn
        return method
    return deco


class Builder:
    """Records a kernel. Use through `program`::

        with program("k", target="A2A3") as k:
            ...
        prog = k.program

    While open, ``pto.<op>(...)`` calls are recorded here (see `registry.push_recorder`).
    Provenance of each statement is the user's ``file:line`` (`registry.user_frame`),
    unless ``where=`` is given or a `at` block sets it (the TIK facade passes the TIK call).
    """

    def __init__(self, name: str, target="A2A3"):
        self.program = Program(name, target)
        self._blocks = [self.program.body]
        self._where: list = []
        self._loops = 0
        self._active_vars: set = set()
        # `_check_vars` memo: id -> expression node whose whole subtree passed the check, and per open serial
        # loop (outermost first, [0] = outside every loop) the ids found while it was the innermost one: a
        # subtree that passed stays valid until the loop of one of its loop variables closes (then its
        # level's ids are dropped); register owners never change
        self._vars_ok: dict = {}
        self._vars_ok_levels: list = [[]]
        self._elifs: dict = {}        # id -> If made by elif_ (an elif chain continues through them)
        self._multicore = False       # the kernel has had a multi-core loop (program.block_num is set)
        self._multicore_open = False  # ... and is inside it now
        self._names: set = set()
        self._open = False

    # -- recorder protocol
    def __enter__(self):
        registry.push_recorder(self)
        _builders.append(self)
        self._open = True
        return self

    def __exit__(self, *exc):
        registry.pop_recorder(self)
        _builders.remove(self)
        self._open = False
        if exc[0] is None and len(self._blocks) != 1:
            raise PtoError("a for_/if_ block is still open at the end of the program",
                           where=registry.user_frame(1),
                           hint="open every for_/if_ block with `with` so it closes with its body")
        return False

    @property
    def target(self) -> ChipProfile:
        return self.program.target

    # -- provenance
    def at(self, where: Optional[Provenance]) -> "_At":
        """``with k.at(where):`` statements recorded inside get provenance ``where`` (e.g. the TIK
        call that produced them)."""
        return _At(self._where, where)

    def _prov(self, where: Optional[Provenance], call: str = "") -> Optional[Provenance]:
        if where is not None:
            return where
        if self._where and self._where[-1] is not None:
            return self._where[-1]
        w = registry.user_frame(1)
        if w is not None and call:
            w = Provenance(w.file, w.line, call)
        return w

    def _emit(self, stmt: Stmt):
        self._check_vars(stmt)
        self._blocks[-1].append(stmt)
        return stmt

    def _check_vars(self, stmt: Stmt):
        """Raise if ``stmt`` uses a loop variable outside its loop (the first one in `walk` order)."""
        stack = stmt_exprs(stmt)
        stack.reverse()
        seen = {}                          # shared subexpressions (expressions are DAGs) are walked once
        ok = self._vars_ok                 # ... and those of earlier statements that passed, in still-open loops
        while stack:                       # `walk` over every expression, inlined (every op records this)
            x = stack.pop()
            t = type(x)
            if t is Const:
                continue
            i = id(x)
            if i in seen or i in ok:       # passed already (a node passes or fails the same way each time)
                continue
            if t is PtrFromInt and type(x.a) is Const:      # a constant address (most pointers)
                continue
            if t is PtrAdd and type(x.n) is Const and type(x.p) is PtrFromInt and type(x.p.a) is Const:
                continue                                    # a constant offset from one
            if isinstance(x, LoopVar) and x not in self._active_vars:
                raise IllegalOperand(f"loop variable %{x.name} is used outside its loop", where=stmt.where,
                                     hint="copy it into a register inside the loop (PTO: r = k.reg(dtype); "
                                          "r.set(i); TIK: s = tik_instance.Scalar('int32'); s.set_as(i))")
            if (t is Reg or t is ScalarArg) and x.owner is not None and x.owner is not self:
                what = "register" if t is Reg else "scalar argument"
                decl = f" (declared at {x.declared})" if t is Reg and x.declared else ""
                theirs, ours = x.owner.program.name, self.program.name
                other = f"another kernel ({theirs!r}), not to {ours!r}" if theirs != ours else \
                    f"another kernel that is also named {ours!r} (another builder / tik.Tik() instance)"
                raise IllegalOperand(f"{what} %{x.name}{decl} belongs to {other}", operand=f"%{x.name}",
                                     where=stmt.where,
                                     hint=f"create the {what} in this kernel (TIK: with this tik.Tik() instance; "
                                          f"PTO: k.reg / k.scalar_arg of this builder)")
            seen[i] = x
            kids = x.children()
            if kids:
                stack.extend(reversed(kids))
        if seen:                           # every node passed: remember the subtrees
            ok.update(seen)
            self._vars_ok_levels[-1].extend(seen)

    # -- signature
    def _check_name(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise IllegalOperand(f"argument name {name!r} is not an identifier", operand="name", value=name,
                                 hint="name the argument with a Python identifier (letters, digits, _; not "
                                      "starting with a digit)")
        if name in self._names:
            raise IllegalOperand(f"argument name {name!r} is used twice", operand="name", value=name,
                                 hint="give every kernel argument a unique name")
        self._names.add(name)

    @_user_errors("k.gm_arg")
    def gm_arg(self, name: str, dt, shape, *, io: str = "in", fill: Optional[str] = None, init=None) -> GmArg:
        """Declare a GM tensor argument; returns the pointer to its first element."""
        self._check_name(name)
        a = GmArg(name, dt, shape, io, fill, init)
        self.program.args.append(a)
        return a

    @_user_errors("k.scalar_arg")
    def scalar_arg(self, name: str, dt="s32") -> ScalarArg:
        """Declare a scalar kernel argument (TIK ``InputScalar``)."""
        self._check_name(name)
        a = ScalarArg(name, dt, owner=self)
        self.program.args.append(a)
        return a

    # -- values
    @_user_errors("k.reg")
    def reg(self, dt, init=None, *, name: Optional[str] = None, where: Optional[Provenance] = None) -> Reg:
        """A new scalar register; ``init`` (if given) is assigned here."""
        r = Reg(dt, name, owner=self)
        if init is not None:
            self.assign(r, init, where=self._prov(where, "reg"))
        return r

    @_user_errors("k.ptr")
    def ptr(self, space: str, dt, addr) -> PtrExpr:
        """``pto.castptr``: a pointer to byte address ``addr`` (int or expression) in ``space``."""
        t = PtrType(dt, space)
        a = as_expr(addr, I64)
        if a.is_ptr or not S.is_int(a.type):
            raise IllegalOperand("castptr needs an integer address", operand="addr", value=repr(a),
                                 hint="pass the byte address as an int or an integer register/expression "
                                      "(of a pointer: p.addr)")
        return PtrFromInt(a, t)

    @property
    def block_idx(self) -> ScalarExpr:
        return BlockIdx()

    @property
    def block_num(self) -> ScalarExpr:
        return BlockNum()

    # -- statements
    @_user_errors("k.assign")
    def assign(self, reg: Reg, value, *, where: Optional[Provenance] = None) -> None:
        if not isinstance(reg, Reg):
            raise IllegalOperand(f"can only assign to registers, not {reg!r}", value=repr(reg),
                                 hint="create one with k.reg(dtype)")
        self._emit(Assign(reg, cast(as_expr(value, reg.type), reg.type), self._prov(where, "assign")))

    @_user_errors("k.load")
    def load(self, ptr: PtrExpr, offset=0, *, into: Optional[Reg] = None,
             where: Optional[Provenance] = None) -> Reg:
        """Read element ``ptr[offset]`` into a register (``into``, or a new one of the element type)."""
        ptr = self._ptr_operand(ptr, "load")
        t = scalar_type(ptr.dtype)
        w = self._prov(where, "load_scalar")
        if into is not None and into.type is not t:
            tmp = Reg(t)
            self._emit(Load(tmp, ptr, _offset(offset), w))
            self._emit(Assign(into, cast(tmp, into.type), w))
            return into
        r = into if into is not None else Reg(t)
        self._emit(Load(r, ptr, _offset(offset), w))
        return r

    @_user_errors("k.read_spr")
    def read_spr(self, spr: str, index: int = 0, *, into: Optional[Reg] = None,
                 where: Optional[Provenance] = None) -> Reg:
        """``pto.get_spr``: word ``index`` of special register ``spr`` (`SPR_WORDS`) into a register
        (``into``, converted to its type, or a new i64 one). Reading one no op has written is an
        uninitialised read when the kernel runs."""
        words = SPR_WORDS.get(spr)
        if words is None:
            raise IllegalOperand(f"no readable special register {spr!r}", operand="spr", value=spr,
                                 limit=", ".join(SPR_WORDS))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < words:
            raise IllegalOperand(f"{spr} has {words} word(s); index {index!r} is outside [0, {words})",
                                 operand="index", value=repr(index), limit=f"[0, {words})")
        w = self._prov(where, "get_spr")
        if into is not None and into.type is not I64:
            tmp = Reg(I64)
            self._emit(ReadSpr(tmp, spr, index, w))
            self._emit(Assign(into, cast(tmp, into.type), w))
            return into
        r = into if into is not None else Reg(I64)
        self._emit(ReadSpr(r, spr, index, w))
        return r

    @_user_errors("k.store")
    def store(self, ptr: PtrExpr, offset, value, *, where: Optional[Provenance] = None) -> None:
        """Write ``value`` (converted to the element type) to ``ptr[offset]``."""
        ptr = self._ptr_operand(ptr, "store")
        t = scalar_type(ptr.dtype)
        self._emit(Store(ptr, _offset(offset), cast(as_expr(value, t), t), self._prov(where, "store_scalar")))

    def _ptr_operand(self, p, what):
        if isinstance(p, Ptr):
            p = ptr_const(p)
        if not isinstance(p, PtrExpr):
            raise IllegalOperand(f"{what} needs a pointer, got {p!r}", operand="ptr", value=repr(p),
                                 hint=_pointer_hint(p))
        if p.dtype.bits < 8 and p.dtype.name != "bool":
            raise IllegalOperand(f"scalar {what} of packed type {p.dtype.name} is not supported", operand="ptr",
                                 value=p.dtype.name, hint="cast the pointer to u8 and unpack the byte")
        return p

    @_user_errors("k.for_")
    def for_(self, lo, hi=None, step=1, *, name: str = "i", dtype=None, block_num=None,
             where: Optional[Provenance] = None) -> _Scope:
        """``with k.for_(lo, hi[, step]) as i:`` (``for_(n)`` = ``for_(0, n)``).

        ``block_num=N`` makes the multi-core loop (TIK ``for_range(0, N, block_num=N)``):
        the body runs once on each of N cores with the loop variable = the core index
        (``pto.get_block_idx``), with ``lo == 0`` and ``hi`` equal to ``block_num`` (an int or
        the same scalar argument). It is not a loop: the whole kernel runs on every core, so the
        multi-core loop may sit inside serial loops and ifs (CANN cummin and arg_max_with_value open
        it inside a ``for_range``, scatter_max_with_argmax inside an ``if_scope``); its body then
        runs on each core wherever control reaches it. A kernel has at most one.
        """
        if hi is None:
            lo, hi = 0, lo
        w = self._prov(where, "for")
        for b in (lo, hi, step):
            if not isinstance(b, (Expr, int, np.integer)) or isinstance(b, bool) or \
                    (isinstance(b, Expr) and b.is_ptr):
                raise IllegalOperand(f"loop bound {b!r} is not an integer", operand="for", value=repr(b),
                                     hint="loop bounds are ints, integer registers or expressions")
        bounds = [b for b in (lo, hi, step) if isinstance(b, Expr)]
        t = scalar_type(dtype) if dtype is not None else \
            (INDEX if not bounds else _common(*[b.type for b in bounds]))
        if not S.is_int(t):
            raise IllegalOperand(f"loop bounds must be integers, got {t.pto_name}", operand="for", value=t.pto_name,
                                 hint="give the loop integer bounds (cast float values to an integer type)")
        if block_num is not None:
            return self._multicore_loop(lo, hi, step, block_num, t, name)
        step_t = cast(as_expr(step, t), t)
        if isinstance(step, int) and step <= 0 or isinstance(step_t, Const) and step_t.value <= 0:
            wrapped = isinstance(step, int) and step != step_t.value
            raise IllegalOperand(f"loop step {step if isinstance(step, int) else step_t.value} must be positive"
                                 + (f" (it is {step_t.value} as {t.pto_name})" if wrapped else ""), operand="step",
                                 value=repr(step), limit="> 0", where=w,
                                 hint="loops count up: pass a step >= 1 that fits the loop type")
        var = LoopVar(t, name)
        loop = For(var, cast(as_expr(lo, t), t), cast(as_expr(hi, t), t), step_t, [], w)
        self._emit(loop)
        self._loops += 1
        self._active_vars.add(var)
        self._vars_ok_levels.append([])

        def done():
            self._loops -= 1
            self._active_vars.discard(var)
            ok = self._vars_ok
            for k in self._vars_ok_levels.pop():   # subtrees that may hold ``var``: walked again
                ok.pop(k, None)
        return _Scope(self, loop.body, var, done)

    def _multicore_loop(self, lo, hi, step, block_num, t, name):
        if self._multicore_open:
            raise IllegalOperand("a multi-core loop cannot be nested in another multi-core loop", operand="block_num",
                                 hint="TIK forbids nesting multi-core loops; close the outer block_num loop first "
                                      "(loops one after the other are fine)")
        if not (isinstance(lo, int) and lo == 0) or not (isinstance(step, int) and step == 1):
            raise IllegalOperand("the multi-core loop must start at 0 with step 1", operand="block_num",
                                 value=(lo, step), hint="write k.for_(0, N, block_num=N)")
        if isinstance(block_num, int):
            if block_num < 1 or not (isinstance(hi, int) and hi == block_num):
                raise IllegalOperand(f"multi-core loop: end {hi!r} must equal block_num {block_num}",
                                     operand="block_num", value=block_num,
                                     hint=f"write k.for_(0, {block_num}, block_num={block_num})")
        elif not (isinstance(block_num, ScalarArg) and hi is block_num):
            raise IllegalOperand("block_num must be an int or a scalar argument that is also the loop end",
                                 operand="block_num", value=repr(block_num),
                                 hint="write k.for_(0, n, block_num=n) with n an int or the same scalar argument")
        if self._multicore and not _same_block_num(self.program.block_num, block_num):
            raise UnsupportedOp(f"a second multi-core loop with block_num {block_num!r} after one with "
                                f"{self.program.block_num!r}: one launch has one block count, and how a kernel "
                                f"with loops of different counts is launched is not published",
                                operand="block_num", value=repr(block_num), limit=repr(self.program.block_num),
                                hint="give every multi-core loop of the kernel the same block_num (guard the "
                                     "surplus cores with an if), or split it into two kernels")
        # SEQUENTIAL_BLOCK_LOOPS (named choice, migration_guide/tik_core.md): multi-core loops one after the other
        # with the same block_num are one launch whose cores run each body in turn, with no barrier between them
        # (TIK resets its nesting flag when a block loop closes; each loop is a `thread_extent` of blockIdx.x).
        self._multicore = True
        self._multicore_open = True
        self.program.block_num = block_num
        var = cast(BlockIdx(), t)
        if var.name is None and not isinstance(var, BlockIdx):
            var.name = name

        def close():
            self._multicore_open = False
        return _Scope(self, self._blocks[-1], var, close)

    @_user_errors("k.if_")
    def if_(self, cond, *, where: Optional[Provenance] = None) -> _Scope:
        """``with k.if_(cond):``; follow with ``k.elif_(c)`` / ``k.else_()`` blocks."""
        stmt = If(self._cond(cond), [], None, self._prov(where, "if"))
        self._emit(stmt)
        return _Scope(self, stmt.then)

    def _trailing_if(self, what: str) -> If:
        block = self._blocks[-1]
        s = block[-1] if block else None
        if not isinstance(s, If):
            raise PtoError(f"{what} must directly follow an if_ block", hint="open k.if_(cond) first")
        while s.orelse is not None:
            if len(s.orelse) == 1 and id(s.orelse[0]) in self._elifs:
                s = s.orelse[0]
            else:
                raise PtoError(f"{what} after an else_ block", hint="else_ must be the last branch")
        return s

    @_user_errors("k.elif_")
    def elif_(self, cond, *, where: Optional[Provenance] = None) -> _Scope:
        last = self._trailing_if("elif_")
        stmt = If(self._cond(cond), [], None, self._prov(where, "elif"))
        self._check_vars(stmt)
        self._elifs[id(stmt)] = stmt
        last.orelse = [stmt]
        return _Scope(self, stmt.then)

    @_user_errors("k.else_")
    def else_(self) -> _Scope:
        last = self._trailing_if("else_")
        last.orelse = []
        return _Scope(self, last.orelse)

    def _cond(self, cond) -> ScalarExpr:
        c = as_expr(cond, BOOL)
        if c.is_ptr:
            raise IllegalOperand("a pointer is not a condition", value=repr(c),
                                 hint="compare its address instead (p.addr != 0) or test a loaded value")
        return cast(c, BOOL)

    @_user_errors("k.break_")
    def break_(self, *, where=None):
        self._need_loop("break_")
        self._emit(Break(self._prov(where, "break")))

    @_user_errors("k.continue_")
    def continue_(self, *, where=None):
        self._need_loop("continue_")
        self._emit(Continue(self._prov(where, "continue")))

    @_user_errors("k.return_")
    def return_(self, *, where=None):
        self._emit(Return(self._prov(where, "return")))

    def _need_loop(self, what):
        if not self._loops:
            raise PtoError(f"{what} outside a loop", hint="break_/continue_ apply to the innermost for_ loop")

    # -- ops
    def record(self, call: registry.OpCall) -> None:
        """Registry recorder hook: validate operand kinds, run the op's verifier, append an `OpStmt`."""
        spec = call.spec
        where = call.where
        if self._where and self._where[-1] is not None and not isinstance(where, FencedProvenance):
            where = self._where[-1]
        target = self.target
        key = (spec.name, id(target), call.operands) if spec.family == "sync" and not call.clauses and \
            _constants(call.operands) else None
        if key is not None:
            hit = _VERIFIED_SYNC.get(key)
            if hit is not None and hit[0] is spec and hit[1] is target:   # (constants: no loop variable)
                self._blocks[-1].append(OpStmt(registry.OpCall(spec, hit[2], {}, where)))
                return
        try:
            ops = tuple([v if type(v) is int and o.kind == "int" else _coerce_operand(o, v)
                         for o, v in zip(spec.operands, call.operands)])
            clauses = {k: v if type(v) in _PLAIN else _coerce_clause(v) for k, v in call.clauses.items()} \
                if call.clauses else {}
            rec = registry.OpCall(spec, ops, clauses, where)
            if spec.verify is not None:
                spec.verify(rec, target)
        except PtoError as e:
            located_op_error(e, spec, call.operands, where, target)
            raise
        if key is not None:
            if len(_VERIFIED_SYNC) >= 4096:
                _VERIFIED_SYNC.clear()
            _VERIFIED_SYNC[key] = (spec, target, ops)
        self._emit(OpStmt(rec))

    def record_constant(self, spec: registry.OpSpec, operands: tuple, where: Optional[Provenance] = None) -> None:
        """`record` of ``spec(*operands)`` without clauses (what ``record(make_call(spec, operands, {},
        where))`` does, same checks and errors): a sync op whose operands are int/str constants and that
        was verified before on this target is appended at once (auto-sync records a few such pairs over
        and over)."""
        if spec.family == "sync" and _constants(operands):
            target = self.program.target
            hit = _VERIFIED_SYNC.get((spec.name, id(target), operands))
            if hit is not None and hit[0] is spec and hit[1] is target:
                if self._where and self._where[-1] is not None:
                    where = self._where[-1]
                self._blocks[-1].append(OpStmt(registry.OpCall(spec, hit[2], {}, where)))
                return
        self.record(registry.make_call(spec, operands, {}, where))


#: (op name, id(target), operands) -> (spec, target, coerced operands) of recorded sync ops whose
#: operands are all int/str constants: the same call on the same target verifies the same way, so
#: it is coerced and verified once (auto-sync records a few such pairs over and over)
_VERIFIED_SYNC: dict = {}


def _constants(values) -> bool:
    """All of ``values`` are ints or strs (exact types: no bool/int or numpy aliasing in a cache key)."""
    return _INT_STR.issuperset(map(type, values))


_INT_STR = frozenset({int, str})


def _common(*types):
    t = types[0]
    for u in types[1:]:
        t = common_type(t, u)
    return t


def _pointer_hint(v) -> str:
    """The Fix for a non-pointer given as a pointer operand: a TIK tensor (anything with a ``pto_ptr()``
    method; pto_core does not import tbe_compat) is told to pass its PTO pointer (tik_core.md §7)."""
    name = getattr(v, "name", None)
    if callable(getattr(v, "pto_ptr", None)) and isinstance(name, str):   # not the Tik instance's pto_ptr(t)
        return (f"pass {name}.pto_ptr(), the TIK tensor's PTO pointer; for a view, the view's: {name}[i].pto_ptr() "
                f"(mixed kernels: tik_core.md §7)")
    return "pass a kernel GM argument, k.ptr(space, dtype, addr) or p + n"


def _coerce_operand(o: registry.Operand, v):
    """A recorded operand: Python constants stay constants, pointers become `PtrExpr`."""
    kind = o.kind
    if type(v) is int and kind == "int":          # the common case
        return v
    if isinstance(v, Ptr):
        v = ptr_const(v)
    if kind == "ptrs":
        if not isinstance(v, (tuple, list)):
            raise IllegalOperand(f"expects a list of pointers, got {v!r}", operand=o.name, value=repr(v),
                                 hint="pass a list or tuple of pointers: [p0, p1, ...]")
        return tuple(_coerce_operand(registry.Operand(o.name, "ptr", o.spaces), x) for x in v)
    if kind == "ptr":
        if not isinstance(v, PtrExpr):
            raise IllegalOperand(f"expects a pointer, got {v!r}", operand=o.name, value=repr(v),
                                 hint=_pointer_hint(v))
        if o.spaces and v.space not in o.spaces:
            raise IllegalOperand(f"pointer in {v.space} is not allowed", operand=o.name, value=v.space,
                                 limit="one of " + ", ".join(o.spaces))
        return v
    if kind in ("pipe", "bufpipe"):
        if isinstance(v, Expr):
            raise IllegalOperand("pipe operands must be constants", operand=o.name, value=repr(v),
                                 hint="pass the pipe by name (e.g. \"PIPE_MTE2\"), not a run-time value")
        return pipe_name(v, allow_all=True) if kind == "pipe" else sync_op_pipe(v)
    if kind == "event":
        if isinstance(v, Expr):
            return _int_expr(o, v)
        return event_id(int(v) if isinstance(v, np.integer) else v)   # np.int64(1) is event id 1
    if isinstance(v, Expr):
        if v.is_ptr:
            raise IllegalOperand("expects a scalar, got a pointer", operand=o.name, value=repr(v),
                                 hint="pass a scalar (an int or a scalar expression), not a pointer")
        if kind == "int":
            return _int_expr(o, v)
        if kind == "float":
            return cast(v, F32) if not S.is_float(v.type) else v
        return v
    if kind in ("int", "float", "scalar"):
        registry.check_constant_operand(None, o, v, Ptr)
    if isinstance(v, np.generic):
        v = v.item()
    if kind == "float" and isinstance(v, int) and not isinstance(v, bool):
        v = float(v)
    return v


def _int_expr(o, v: ScalarExpr):
    if not (S.is_int(v.type) or S.is_bool(v.type)):
        raise IllegalOperand(f"expects an integer, got a {v.type.pto_name} value", operand=o.name, value=repr(v),
                             hint="convert with x.astype('s64')")
    return cast(v, I64)


def _coerce_clause(v):
    """A recorded clause value: eager pointers become constants, numpy scalars Python numbers."""
    if type(v) in _PLAIN:
        return v
    if isinstance(v, Ptr):
        return ptr_const(v)
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return tuple([x if type(x) in _PLAIN else _coerce_clause(x) for x in v])
    if isinstance(v, list):
        return [x if type(x) in _PLAIN else _coerce_clause(x) for x in v]
    if isinstance(v, dict):
        return {k: x if type(x) in _PLAIN else _coerce_clause(x) for k, x in v.items()}
    return v


def program(name: str, target="A2A3") -> Builder:
    """Start recording a kernel: ``with program("name", target="A2A3") as k: ...``."""
    return Builder(name, target)


__all__ = ["program", "Builder", "Program", "PtrType", "Expr", "ScalarExpr", "PtrExpr", "Const", "Undef", "Reg",
           "LoopVar", "ScalarArg", "GmArg", "BlockIdx", "BlockNum", "BinOp", "UnOp", "Cmp", "Cast", "Bitcast",
           "Select", "PtrReg", "PtrFromInt", "PtrAdd", "PtrCast", "PtrToInt", "OpStmt", "Assign", "Load",
           "ReadSpr", "SPR_WORDS", "Store",
           "For", "If", "Break", "Continue", "Return", "cast", "bitcast", "select", "min_", "max_", "abs_", "sqrt",
           "all_", "any_", "not_", "floor", "ceil", "trunc", "round_even", "round_away", "as_expr", "type_str",
           "current_builder", "INDEX"]
