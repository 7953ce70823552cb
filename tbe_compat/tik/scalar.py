"""TIK scalar values: ``Expr``, ``Scalar``, ``InputScalar`` and ``tik.all/any/negate``.

Each wraps a `pto_core.program` scalar expression (``.ir``); arithmetic builds new IR
nodes with the C semantics of `pto_core.scalars` (wrapping integers, truncating ``/``
and ``//`` on integers -- TIK maps both to TVM ``Div`` --, C remainder, IEEE floats
rounded once to the register type). A Python int combined with a TIK value takes the
TIK value's dtype; a Python float with an integer value makes a float32 expression (TVM's
type matching), which integer operands (loop bounds, counts) take by C conversion when it
is built from integer values and immediates only (`integer_rooted`). Nothing is computed
here: an ``Expr`` is evaluated by the interpreter where a statement uses it, with the
register values at that moment.

Truth value (CHECKLIST S8): ``a == b`` / ``a != b`` on TIK values answer a Python
``if`` by *identity* of the two operands (TVM's ``EqualOp``/``NotEqualOp`` rule, which
older TIK releases let through and shipped CANN ops rely on to build: ``if core_index ==
n - 1:`` is False unless both sides are the same object), with a `TracedComparisonWarning`
naming the line when the operands differ (newer CANN TIK raises there); any other TIK
value in a Python ``if``/``while``/``and``/``or`` raises a clear error naming ``if_scope``. Any comparison
whose sides differ by one constant for every run-time value is answered from it
(`COMPARISON_OF_CONSTANT_DIFFERENCE`).
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Optional

import numpy as np

from pto_core import program as P
from pto_core import scalars as S
from pto_core.dtypes import dtype as _dtype
from pto_core.errors import IllegalOperand, PtoError

from .errors import user_method

#: Scalar dtypes TIK accepts (tik_api.md §5.1).
SCALAR_DTYPES = ("uint8", "int8", "uint16", "int16", "float16", "bfloat16", "uint32", "int32", "float32",
                 "uint64", "int64")


def tik_dtype_name(d) -> str:
    """TIK's spelling of a dtype (``"float16"``) for a `DType` or any alias."""
    return _dtype(d).tik_name


class Expr:
    """A TIK scalar expression (``tik.Expr``): wraps a `pto_core.program.ScalarExpr`."""

    __slots__ = ("ir",)
    #: numpy scalars combined with a TIK value defer to its reflected operators (np.int64(3) * s)
    __array_ufunc__ = None

    def __init__(self, ir, dtype=None):
        if isinstance(ir, Expr):
            ir = ir.ir
        if not isinstance(ir, P.Expr):
            ir = P.as_expr(ir, P.scalar_type(dtype) if dtype is not None else None)
            if dtype is not None:
                ir = P.cast(ir, dtype)
        self.ir = ir

    def __pto_expr__(self):
        """The IR expression (`pto_core.program.PTO_EXPR_HOOK`): ``tensor.pto_ptr() + s`` moves by ``s``."""
        return self.ir

    def set_as(self, *args, **kwargs):
        """An expression or a ``for_range`` loop variable is not a register: a clear error (TIK's ``Expr`` has
        no ``set_as``; Python would say only "'Expr' object has no attribute 'set_as'")."""
        from .errors import exit_on_error_of, tik_error, user_frame
        w = user_frame()
        what = "a for_range loop variable" if isinstance(self.ir, P.LoopVar) else "an expression"
        raise tik_error(f"{self!r} is {what}, which cannot be assigned: set_as is a method of tik.Scalar (and of "
                        f"tensor elements)", api="tik.Expr.set_as",
                        where=None if w is None else type(w)(w.file, w.line, "tik.Expr.set_as"),
                        hint="copy it into a Scalar and change that: s = tik_instance.Scalar(dtype, init_value=i); "
                             "s.set_as(...)", cls=IllegalOperand, exit_on_error=exit_on_error_of(self))

    # -- properties
    @property
    def dtype(self) -> str:
        return tik_dtype_name(self.ir.type) if self.ir.type.name != "index" else "int64"

    @user_method("tik.Expr.astype")
    def astype(self, dtype) -> "Expr":
        """C value conversion (TIK ``Expr.astype``)."""
        with _expr_errors("tik.Expr.astype", self):
            return Expr(P.cast(self.ir, P.scalar_type(dtype)))

    @user_method("tik.Expr.reinterpret_cast_to")
    def reinterpret_cast_to(self, dtype) -> "Expr":
        """The same bits as another dtype of equal width."""
        with _expr_errors("tik.Expr.reinterpret_cast_to", self):
            return Expr(P.bitcast(self.ir, P.scalar_type(dtype)))

    # -- arithmetic
    def _bin(self, op, other, reflected=False):
        with _expr_errors(f"tik.Expr.__{op}__", self):
            o = ir_value(other, what=f"operand of {op!r}")
            # INT64_IMMEDIATE_BIT_PATTERN is for int immediates only: a float past int64 is refused (below)
            o = int64_immediate_bits(o, self.ir.type) if type(o) is not float else \
                float_immediate_to_int(o, self.ir.type, f"operand of {op!r}")
            _no_bf16_arith(op, self.ir, o)
            if not reflected and op in _SHIFT_OPS and S.is_int(self.ir.type):    # (a float: no shift at all)
                check_shift_count(o, op)
            check_immediate(o, self.ir.type, f"operand of {op!r}")
            a, b = (o, self.ir) if reflected else (self.ir, o)
            if op in _BITWISE_OPS:
                b = bitwise_right_operand(a, b)
            e = P.binop(op, a, b)
            if op in _V210_F32_OPS and e.type.name == "f16" and V210_VEC_F16_SCALAR_ARITH_IN_F32 and _v210_vec():
                e = P.BinOp(op, P.cast(e.a, P.F32), P.cast(e.b, P.F32))
            return Expr(e)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __floordiv__(self, o): return self._bin("div", o)
    def __rfloordiv__(self, o): return self._bin("div", o, True)
    def __mod__(self, o): return self._bin("rem", o)
    def __rmod__(self, o): return self._bin("rem", o, True)
    def __lshift__(self, o): return self._bin("shl", o)
    def __rlshift__(self, o): return self._bin("shl", o, True)
    def __rshift__(self, o): return self._bin("shr", o)
    def __rrshift__(self, o): return self._bin("shr", o, True)
    def __and__(self, o): return self._bin("and", o)
    def __rand__(self, o): return self._bin("and", o, True)
    def __or__(self, o): return self._bin("or", o)
    def __ror__(self, o): return self._bin("or", o, True)
    def __xor__(self, o): return self._bin("xor", o)
    def __rxor__(self, o): return self._bin("xor", o, True)
    def _un(self, op):
        with _expr_errors(f"tik.Expr.__{op}__", self):
            _no_bf16_arith(op, self.ir)
            if op == "neg" and self.ir.type.kind == "u":
                raise IllegalOperand(f"cannot negate an unsigned {self.dtype} value", operand="neg",
                                     value=self.dtype, hint="TIK has no negation of uint Scalars; subtract from a "
                                                            "signed value (s.astype('int64')) instead")
            if op == "neg" and self.ir.type.name == "f16" and V210_VEC_F16_SCALAR_ARITH_IN_F32 and _v210_vec():
                # TIK's ``-x`` is ``x * Expr(-1, x.dtype)``: on the v210 vector core a float32 product (exact)
                return Expr(P.unop(op, P.cast(self.ir, P.F32)))
            return Expr(P.unop(op, self.ir))

    def _no_python_op(self, *_, what: str = "", hint: str = ""):
        """A Python operator TIK scalars do not have: a TIK error at the user's line, not a bare TypeError."""
        from .errors import exit_on_error_of, tik_error, user_frame
        w = user_frame()
        raise tik_error(f"{self!r} has no Python {what} (TIK scalar expressions have + - * / // % << >> & | ^ ~ "
                        f"and comparisons)", api="tik.Expr", operand=repr(self), hint=hint,
                        where=None if w is None else type(w)(w.file, w.line, "tik.Expr"),
                        exit_on_error=exit_on_error_of(self))

    def __pow__(self, *args):
        self._no_python_op(what="power (**, pow())", hint="multiply (s * s), or compute the power with the vector "
                                                         "APIs (vec_ln, vec_muls, vec_exp) on tensors")

    __rpow__ = __pow__

    def __divmod__(self, _):
        self._no_python_op(what="divmod()", hint="compute both parts: q = a // b and r = a % b (C truncation)")

    __rdivmod__ = __divmod__

    def __round__(self, *_):
        self._no_python_op(what="round()", hint="convert with tik_instance.scalar_conv('round', dst, src), or "
                                               "s.astype(dtype) (C conversion)")

    def __abs__(self):
        # no TIK has it: te.tik 2019 and CANN 8.1.RC1 BasicExpr (tik_expr.py) define no __abs__, so abs(s) is
        # Python's TypeError there (h_review450); the scalar unit's absolute value is scalar_abs
        self._no_python_op(what="abs()", hint="write |x| into a Scalar with tik_instance.scalar_abs(dst, src): "
                                              "int64 Scalars (float32 too on chips after Ascend910); copy an "
                                              "expression into one first (tmp.set_as(expr))")

    def __neg__(self): return self._un("neg")
    def __pos__(self): return self
    def __invert__(self): return self._un("not")

    # -- comparisons
    def _cmp(self, pred, other, api_depth: int = 0):
        """``self <pred> other``; ``api_depth``: the TIK API depth of a user's comparison (1 when it comes through the
        ``Tensor.__<pred>__`` API, `Tik._tensor_compare`), deeper ones are a lowering's own (FLOAT_COMPARE_CANN81_WARN)."""
        from .tensor import Tensor
        if isinstance(other, Tensor):          # s < t[i]: the tensor side loads its element (t[i] > s)
            return getattr(other, _MIRRORED[pred])(self)
        with _expr_errors(f"tik.Expr.__{pred}__", self):
            other = _c_unsigned_compare_immediate(other, self.ir.type)
            o = float_immediate_to_int(ir_value(other, what="operand of a comparison"), self.ir.type,
                                       "operand of a comparison")
            _no_bf16_arith(pred, self.ir, o)
            check_immediate(o, self.ir.type, "operand of a comparison")
            c = _Comparison(P.cmp(pred, self.ir, o), pred, self, other)
        # TIK compares in the left operand's dtype after its type matching: the common type of two TIK values,
        # the TIK value's own dtype against an immediate (``i32 < 1.5`` stays int32 on the left)
        _float_compare_rule(pred, P.common_type(self.ir.type, o.type) if isinstance(other, Expr) else self.ir.type,
                            api_depth)
        return c

    def __lt__(self, o): return self._cmp("lt", o)
    def __le__(self, o): return self._cmp("le", o)
    def __gt__(self, o): return self._cmp("gt", o)
    def __ge__(self, o): return self._cmp("ge", o)
    def __eq__(self, o): return self._cmp("eq", o)
    def __ne__(self, o): return self._cmp("ne", o)
    __hash__ = object.__hash__

    # -- Python conversions TIK values do not have
    def __bool__(self):
        raise _no_python_value(self, "a Python truth value (if/while/and/or/not)",
                               "use `with tik_instance.if_scope(cond):` (tik.all / tik.any / tik.negate to combine)")

    def __index__(self):
        raise _no_python_value(self, "a Python integer (range(), list index, numpy shape)",
                               "use tik_instance.for_range(...) for loops; TIK values are only known when the "
                               "kernel runs")

    __int__ = __index__

    def __float__(self):
        raise _no_python_value(self, "a Python float", "keep the computation in TIK expressions")

    def __repr__(self):
        return f"tik.Expr({self.ir!r}: {self.dtype})"


#: Named choice V210_VEC_F16_SCALAR_ARITH_IN_F32: on the v210 vector core (BS9SX1AA, core type VectorCore: vector
#: family ``v210-aiv``) CANN 8.1.RC1 TIK builds ``+ - * / // %`` of two float16 operands (after its type matching: an
#: immediate is first a float16 constant) as the float32 operation of both converted to float32
#: (``check_and_update_dtype_float16``: ``cast(left, "float32"), cast(right, "float32")`` when
#: ``TikSocManager.is_v210_vec_soc()``, tbe/tik/tik_lib/tik_expr.py), so the result is a float32 Expr, rounded once
#: where it is stored (``f32.set_as(a * b)`` keeps the exact product; on other chips it is the float16 product).
#: Negation too (TIK's ``__neg__`` is ``self._mul(Expr(-1, self.dtype))``): ``-a`` is a float32 Expr there.
#: Comparisons there are unchanged (float16 to float32 is exact). te.tik 2019 has no such rule (no v210 chips).
#: False computes float16 arithmetic in float16 on every chip. migration_guide/tik_core.md (Scalar expressions).
V210_VEC_F16_SCALAR_ARITH_IN_F32 = True
_V210_F32_OPS = frozenset({"add", "sub", "mul", "div", "rem"})


def _v210_vec() -> bool:
    from pto_core import vector_isa
    from tbe_compat import platform
    return vector_isa.family_of(platform.current_soc().profile) == "v210-aiv"


#: Named choice FLOAT_COMPARE_CANN81_WARN: CANN 8.1.RC1 TIK refuses every Scalar/Expr comparison (``<`` ``<=`` ``>``
#: ``>=`` ``==`` ``!=``, wherever the comparison is written, also through a tensor element: ``Tensor.__lt__`` compares
#: its element register) whose left operand, after TIK's type matching (``change_dtype_of_expr_op``), is float16 --
#: and float32 too on the "mini" SoC -- with "floating-point operation is not allowed in compare"
#: (``BasicExpr.float_operation_ban`` / ``invalid_dtype_for_version``, tbe/tik/tik_lib/tik_expr.py). The compared
#: dtype is the common type of two TIK values, or the TIK value's own dtype against an immediate (so ``i32 < 1.5``
#: and ``i32 < f32`` on 910 pass, ``i32 < f16`` and ``1.0 < f16`` do not). ``Expr.equal`` has no such check. The
#: if_scope / elif_scope reference pages state the rule for conditions only ("Expr中不能含有float16类型的scalar";
#: float16 or float32 on Atlas 200/300/500 inference = Ascend310), and te.tik 2019's Expr compares any dtype. So a
#: float comparison outside a condition runs (C comparison of the values) with a `Cann81RuleWarning` once per call
#: site naming the rule, as USER_FLAG_CANN81_RULES_WARN does for set_flag; False makes it an `IllegalOperand` at the
#: line. A *condition* reading a float16 (Ascend310: float32) Scalar stays the error of if_scope / elif_scope
#: (control.py), as documented; the comparison inside it warns first. The facade's own lowerings are not checked.
#: migration_guide/tik_core.md (Scalar expressions).
FLOAT_COMPARE_CANN81_WARN = True
#: Float register types CANN 8.1 TIK compares in no Expr, per chip (``invalid_dtype_for_version``: float16 everywhere,
#: float16 and float32 on the mini SoC Ascend310); also the types a condition may not read (control.py).
FLOAT_COMPARE_BANNED = {"Ascend310": ("f16", "f32")}
FLOAT_COMPARE_BANNED_DEFAULT = ("f16",)
_CMP_SPELLING = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _float_compare_rule(pred: str, t, api_depth: int = 0) -> None:
    """FLOAT_COMPARE_CANN81_WARN for a comparison computed in register type ``t`` (see the constant). A user's
    comparison is written outside any TIK call (API depth 0) or is a tensor element's (``Tensor.__lt__``, depth 1,
    ``api_depth``); one made deeper is a lowering's own (``h_reduce_argmax`` compares float16 values)."""
    from tbe_compat import platform
    soc = platform.current_soc()
    if t.name not in FLOAT_COMPARE_BANNED.get(soc.short_soc_version, FLOAT_COMPARE_BANNED_DEFAULT):
        return
    from .registry import tracing_kernel
    tik = tracing_kernel()
    if tik is not None and getattr(tik, "_depth", 0) > api_depth:
        return                                  # a lowering's own comparison
    from .errors import exit_on_error_of, tik_error, user_frame
    from .data import warn_cann81_rule
    w = user_frame()
    where = None if w is None else type(w)(w.file, w.line, f"tik.Expr.__{pred}__")
    name = tik_dtype_name(t)
    only = "float16" if name == "float16" else f"float16 or float32 on {soc.soc_version}"
    message = (f"`{_CMP_SPELLING[pred]}` compares {name} values (CANN 8.1 TIK: \"floating-point operation is not "
               f"allowed in compare\", for any Scalar/Expr comparison in {only})")
    fix = ("compare integers, or convert the float16 values to float32 Scalars first (scalar_conv), or compare "
           "on the vector unit (vec_cmpv_* / vcmp_*)" if name == "float16" else
           "compare integers (convert the values with scalar_conv), or compare on the vector unit "
           "(vec_cmpv_* / vcmp_*)")
    if not FLOAT_COMPARE_CANN81_WARN:
        raise tik_error(f"{message}; CANN 8.1 TIK refuses it", api=f"tik.Expr.__{pred}__", operand=pred, value=name,
                        hint=fix, where=where, exit_on_error=exit_on_error_of(tik))
    warn_cann81_rule("float_compare", message, where, "it compares the values as C does", fix)


_MIRRORED = {"lt": "__gt__", "le": "__ge__", "gt": "__lt__", "ge": "__le__", "eq": "__eq__", "ne": "__ne__"}


class _Comparison(Expr):
    """A comparison: an ``Expr`` of type bool that also answers Python ``if`` for ``==``/``!=``
    by operand identity (see module doc)."""

    __slots__ = ("_pred", "_a", "_b")

    def __init__(self, ir, pred, a, b):
        super().__init__(ir)
        self._pred, self._a, self._b = pred, a, b

    def __bool__(self):
        same = self._a is self._b
        diff = constant_difference(self.ir.a, self.ir.b) if COMPARISON_OF_CONSTANT_DIFFERENCE and not same else None
        if diff is not None:
            return _ORDER_OF_DIFFERENCE[self._pred](diff)
        if self._pred not in ("eq", "ne"):
            return Expr.__bool__(self)
        if not same:
            from .errors import user_frame
            w = user_frame()
            result = (self._pred == "ne")
            warnings.warn(f"{f'{w.file}:{w.line}: ' if w else ''}a TIK `{'==' if self._pred == 'eq' else '!='}` "
                          f"used as a Python truth value compares its operands' identity while the kernel is "
                          f"traced (TVM's rule): it is {result} whatever the values are when the kernel runs "
                          f"(newer CANN TIK raises here); for a run-time test use `with tik_instance.if_scope(...)`",
                          TracedComparisonWarning, stacklevel=2)
        return same if self._pred == "eq" else not same


#: Named choice COMPARISON_OF_CONSTANT_DIFFERENCE: a comparison of two integer TIK values used as a Python
#: truth value is answered when their difference is the same constant whatever the run-time values are (both
#: sides are sums of the same registers / loop variables / block index times the same integers:
#: ``(i + 1) * n > i * n + 1`` is ``n - 1 > 0``), as integers (no wrap-around or narrowing: TIK's index
#: arithmetic stays far from its dtypes' limits). That holds only for signed types of 32 bits or more: a sum,
#: product or conversion of an 8/16-bit or unsigned type (``u8 + 1 > u8`` is False at 255, ``u32 - 1 < u32`` at
#: 0, ``(s + 256).astype("uint8") != s.astype("uint8")`` always) and a conversion that can change the value
#: (to unsigned, narrower -- int64 to int32, except the block index / count --, or unsigned to a signed type of the
#: same width) is a leaf by identity, and so is a node whose constant or a coefficient does not fit its dtype (it
#: wraps for every value: ``(s + 65536) * 65536`` is ``s * 65536`` in int32). What stays is exact unless a value
#: itself comes within the constant of the limits (``s + 1 > s`` is answered True; False at 2**31 - 1 on the
#: device, as TIK's own evaluation). Otherwise ``<``/``<=``/``>``/``>=`` are the usual error and
#: ``==``/``!=`` keep TVM's identity rule (module doc). CANN's 2021 static ``prod_virial_se_a`` (shipped with a
#: unit test) writes ``if end == start + 1: ... elif end > start + 1:`` with ``start = blk * n`` and
#: ``end = (blk + 1) * n``; TIK's 2019 Expr raises for every truth value and TVM's rule answers the ``==``
#: False even for n = 1 (no branch ran), so the release that built it evaluated such comparisons (its Expr
#: carries a sympy ``eval_value``).
COMPARISON_OF_CONSTANT_DIFFERENCE = True

_ORDER_OF_DIFFERENCE = {"lt": lambda d: d < 0, "le": lambda d: d <= 0, "gt": lambda d: d > 0, "ge": lambda d: d >= 0,
                        "eq": lambda d: d == 0, "ne": lambda d: d != 0}


def _affine(e, memo: dict, depth: int = 0) -> Optional[tuple]:
    """``(constant, {leaf key: integer coefficient})`` of ``e``, or None if ``e`` is not an integer sum of leaves
    times integers (a leaf: a register, loop variable, kernel argument, block index or any other node, by
    identity; the block index and block count by kind). A node shared in the expression's DAG is described once
    (``memo``: ``x = x + x`` repeated n times is n nodes, not 2**n paths)."""
    hit = memo.get(id(e))
    if hit is not None and hit[0] is e:
        return hit[1]
    r = _affine_node(e, memo, depth)
    if r is not None and not isinstance(e, P.Const) and not _form_fits(r, e.type):
        r = _leaf(e)                            # wraps for every value (or is widened wrapped): by identity
    memo[id(e)] = (e, r)
    return r


def _form_fits(r: tuple, t) -> bool:
    """The constant and every coefficient of the integer form ``r`` of a node lie in its dtype's range. Else the
    node wraps whatever the run-time values are -- ``(s + 65536) * 65536`` in int32 is ``s * 65536`` (constant
    2**32) -- and is a leaf by identity (`COMPARISON_OF_CONSTANT_DIFFERENCE`)."""
    lo, hi = S.int_bounds(t)
    return lo <= r[0] <= hi and all(lo <= v <= hi for v in r[1].values())


def _affine_node(e, memo: dict, depth: int) -> Optional[tuple]:
    if depth > 64 or not e.type.is_int:
        return None
    if isinstance(e, P.Const):
        return int(e.value), {}
    if not _index_wide(e.type):                 # 8/16-bit or unsigned arithmetic wraps in reach: a leaf
        return _leaf(e)
    if isinstance(e, P.Cast):                   # to a wide signed type: the same integer unless it wraps
        src = e.a.type                          # (int64 -> int32 narrows: only the block index/count, < 2**16)
        if src.is_int and ((src.kind == "u" and src.bits < e.type.bits) or (src.kind == "s" and src.bits <= e.type.bits)
                           or isinstance(e.a, (P.BlockIdx, P.BlockNum))):
            return _affine(e.a, memo, depth + 1)
        return _leaf(e)
    if isinstance(e, P.BinOp):
        if e.op in ("add", "sub"):
            x = _affine(e.a, memo, depth + 1)
            y = None if x is None else _affine(e.b, memo, depth + 1)
            if y is None:
                return None
            sign = 1 if e.op == "add" else -1
            terms = dict(x[1])
            for k, v in y[1].items():
                terms[k] = terms.get(k, 0) + sign * v
            return x[0] + sign * y[0], terms
        if e.op == "mul":
            for k, other in ((e.a, e.b), (e.b, e.a)):
                if isinstance(k, P.Const):
                    x = _affine(other, memo, depth + 1)
                    f = int(k.value)
                    return None if x is None else (x[0] * f, {a: v * f for a, v in x[1].items()})
            return None
    return _leaf(e)


def _index_wide(t) -> bool:
    """A signed integer type of 32 bits or more (int32, int64, the loop index): sums in it are taken as integers
    (`COMPARISON_OF_CONSTANT_DIFFERENCE`); narrower or unsigned arithmetic wraps within reach (uint8 255 + 1,
    uint32 0 - 1), so such a node is a leaf."""
    return t.kind == "s" and t.bits >= 32


def _leaf(e) -> tuple:
    return 0, {type(e) if isinstance(e, (P.BlockIdx, P.BlockNum)) else id(e): 1}


def constant_difference(a, b) -> Optional[int]:
    """``a - b`` of two integer IR expressions if it is one constant for every run-time value, else None
    (see `COMPARISON_OF_CONSTANT_DIFFERENCE`)."""
    memo: dict = {}
    x = _affine(a, memo)
    return affine_difference(x, None if x is None else _affine(b, memo))


def affine_difference(x, y) -> Optional[int]:
    """``x - y`` of two affine forms ``(constant, {atom: coefficient})`` (None: not affine) when their atoms
    cancel, else None. Shared by `constant_difference` and the slice lengths of ``tensor.py``."""
    if x is None or y is None:
        return None
    terms = dict(x[1])
    for k, v in y[1].items():
        terms[k] = terms.get(k, 0) - v
    if any(terms.values()):
        return None
    return x[0] - y[0]


class TracedComparisonWarning(UserWarning):
    """A TIK ``==``/``!=`` of two different operands was used as a Python truth value (``if core == n - 1:``):
    it is decided by operand identity at trace time, not by the values the kernel will compute."""


class Scalar(Expr):
    """``tik_instance.Scalar(dtype="int64", name="reg_buf", init_value=None)``: a scalar register."""

    __slots__ = ("tik", "name")

    def __init__(self, tik, dtype="int64", name="reg_buf", init_value=None):
        from .errors import user_frame
        site = user_frame()
        Expr.__init__(self, P.Reg(P.scalar_type(dtype), name, owner=tik._builder,
                                  declared=None if site is None else f"{site.file}:{site.line}"))
        self.tik = tik
        self.name = name
        if init_value is not None:
            tik._scalar_set(self, init_value)

    @user_method("tik.Scalar.set_as")
    def set_as(self, value, src_offset=None):
        """Assign ``value`` (number, Scalar/Expr, or a one-element tensor view read from UB/GM)."""
        self.tik._scalar_set_api(self, value, src_offset)

    def __repr__(self):
        return f"tik.Scalar({self.name!r}: {self.dtype})"


class InputScalar(Expr):
    """``tik_instance.InputScalar(dtype="int64", name="input_scalar")``: a kernel argument,
    read-only; its value comes from ``feed_dict[name]``."""

    __slots__ = ("tik", "name")

    def __init__(self, tik, ir: P.ScalarArg, name: str):
        Expr.__init__(self, ir)
        self.tik = tik
        self.name = name

    def set_as(self, *args, **kwargs):
        self.tik._input_scalar_set_as(self, *args, **kwargs)

    def __repr__(self):
        return f"tik.InputScalar({self.name!r}: {self.dtype})"


class _expr_errors:
    """Convert simulator errors raised while building an expression into facade errors."""

    __slots__ = ("api", "owner")

    def __init__(self, api, owner=None):
        self.api, self.owner = api, owner       # owner: the value whose Tik's err_msg_level applies

    def __enter__(self):
        return self

    def __exit__(self, et, e, tb):
        if e is not None and isinstance(e, PtoError):
            from .errors import convert, exit_on_error_of, is_tik_error, user_frame
            if not is_tik_error(e):
                w = user_frame()
                where = None if w is None else type(w)(w.file, w.line, self.api)
                raise convert(e, api=self.api, where=where, exit_on_error=exit_on_error_of(self.owner)) from None
        return False


_SHIFT_OPS = frozenset({"shl", "shr"})

#: Named choice **CONSTANT_NEGATIVE_SHIFT_REFUSED**: a negative immediate shift count (``s << -1``, ``s >> -2``) is
#: an `IllegalOperand` at the line that writes it, when the kernel is traced (also in code that never runs). C
#: leaves a shift by a negative count undefined (C11 6.5.7p3; the TIK scalar unit code is C compiled by ccec), and
#: TIK passes the immediate on unchecked (``Expr(other, self.dtype)`` into TVM's ``shift_left``/``shift_right``,
#: TIK ``tik_expr.py``), so no result is defined; a constant count is known before the kernel runs. A computed
#: negative count is still refused when it runs (`pto_core.scalars.shl` / ``shr``). False: only the run-time
#: refusal (the behaviour before fuzz424 reported it). migration_guide/tik_core.md, section 8.
CONSTANT_NEGATIVE_SHIFT_REFUSED = True


def check_shift_count(count, op: str) -> None:
    """Refuse a negative immediate count of shift ``op`` ("shl"/"shr"; CONSTANT_NEGATIVE_SHIFT_REFUSED) of an
    integer value (a float value is refused for the shift itself, whose Fix is to cast it: telling the author to
    shift the other way would lead to that second error)."""
    if CONSTANT_NEGATIVE_SHIFT_REFUSED and type(count) is int and count < 0:
        sym, other = ("<<", ">>") if op == "shl" else (">>", "<<")
        raise IllegalOperand(f"shift by the negative count {count} (x {sym} {count}): C leaves a shift by a "
                             f"negative count undefined", operand="shift count", value=count, limit=">= 0",
                             hint=f"shift by a count >= 0: write x {other} {-count} to shift the other way")


def _no_bf16_arith(op: str, *operands) -> None:
    """TIK's Scalar reference (note 3): a bfloat16 Scalar supports no arithmetic (+ - * /, shifts) and no
    comparisons; it only moves values (set_as, vector operands)."""
    if any(isinstance(x, P.Expr) and x.type.name == "bf16" for x in operands):
        raise IllegalOperand(f"operator {op!r} on a bfloat16 value: TIK bfloat16 Scalars support no arithmetic or "
                             f"comparison", operand=op, value="bfloat16",
                             hint="compute in a float32 Scalar and convert (s.astype('float32'))")


def _no_python_value(e: Expr, what: str, hint: str) -> PtoError:
    from .errors import exit_on_error_of, tik_error, user_frame
    w = user_frame()
    where = None if w is None else type(w)(w.file, w.line, "tik.Expr")
    return tik_error(f"{e!r} is evaluated when the kernel runs; it cannot be used as {what} while the "
                     f"kernel is traced",
                     api="tik.Expr", operand=repr(e), hint=hint, where=where, exit_on_error=exit_on_error_of(e))


def float_immediate(v, dt) -> float:
    """An int/float immediate for float data of `DType` ``dt`` as the float it stands for: an int rounded once from
    its exact value (`scalars.int_to_float`; past the format's range the signed inf, as a float past it gives),
    a float unchanged. ``float(v)`` raised OverflowError for an int past float64's range."""
    if isinstance(v, int) and not isinstance(v, bool):
        if dt.name in S.ROUNDERS:
            return S.int_to_float(v, dt)
        try:
            return float(v)
        except OverflowError:
            return float("inf") if v > 0 else float("-inf")
    return float(v)


def py_number(v):
    """A numpy number as the Python number it holds (``np.float16(-0.0)`` -> ``-0.0`` with its sign,
    ``np.longdouble`` -> float, ``np.int64`` -> int); anything else, numpy bools included, unchanged."""
    if isinstance(v, np.floating):
        return float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def zero_d_value(v):
    """A 0-d numpy array of a bool or number (``np.array(True)``, ``np.all(a == b)``) as its one numpy scalar;
    anything else unchanged (`ir_value`, `option_is_off`, ``if_scope`` conditions, ``addr_mode``)."""
    if isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "biuf":
        return v[()]
    return v


def option_is_off(v) -> bool:
    """An optional API argument left at its default: None, False or a zero number. Identity and type tests only:
    ``v in (None, False)`` compares with ``==``, which on a TIK Tensor or Scalar builds a comparison instead of
    answering (a tensor ``smask`` / ``deqscale`` raised "comparing tensor view ... needs a single element").
    A numpy bool (``np.False_``, not a `numbers.Number`) and a 0-d numpy array of a bool or number are their one
    value, as in `ir_value` (h_review314: they were refused as options set)."""
    v = zero_d_value(v)
    return v is None or (isinstance(v, (numbers.Number, np.bool_)) and v == 0)


def static_bool(v) -> Optional[bool]:
    """A bool-typed TIK option (``relu=``, ``if_transpose=``, ``cal_index=`` ...) as a Python bool, or None when
    ``v`` is not a bool (the caller refuses it naming the argument: `TikBase._bool_arg`). ``np.True_`` /
    ``np.False_`` and a 0-d bool array (``np.array(True)``, ``np.all(a == b)``) are their one value, as in
    `option_is_off` and ``if_scope``. Ints 0/1 are not bools here: tik_api.md types these options bool
    (``relu=False``, ``if_transpose=False``; fixpipe ``| relu | bool |``), so 1 stays refused (BOOL_OPTION_INTS)."""
    v = zero_d_value(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if BOOL_OPTION_INTS and isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    return None


#: Whether a bool-typed TIK option (`static_bool`) also takes the ints 0 and 1. False: the tik_api.md
#: prototypes and the fixpipe ``extend_params`` table give these options as bools only (h_fix322).
BOOL_OPTION_INTS = False


def ir_value(v, *, what: str = "value"):
    """The IR form of a TIK scalar operand: `Expr` -> its IR, Python/numpy numbers unchanged (a 0-d numpy
    array of a bool or number, such as ``np.array(True)``, is its one value, as in `if_scope`)."""
    if isinstance(v, Expr):
        return v.ir
    v = zero_d_value(v)
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (bool, int, float)):
        return v
    if isinstance(v, P.Expr) and not v.is_ptr:
        return v
    from .tensor import Tensor
    if isinstance(v, Tensor):
        raise IllegalOperand(f"a tensor view cannot be used as a scalar {what}", value=repr(v),
                             hint="read the element first: s = tik_instance.Scalar(dtype); s.set_as(tensor[i])")
    raise IllegalOperand(f"cannot use {type(v).__name__} {v!r} as a scalar {what}", value=repr(v),
                         hint="use ints, floats, Scalars, InputScalars or expressions of them")


def _c_unsigned_compare_immediate(v, t):
    """A negative int compared with an unsigned TIK value converts to that dtype as in C (``u32 != -1`` is
    ``u32 != 0xFFFFFFFF``) when it fits the signed type of the same width; anything else is returned unchanged
    (and `check_immediate` refuses what does not fit). Named choice, tik_core.md: CANN's prod_env_mat_a compares
    its uint32 neighbour count with -1 (the host's "no neighbours" mark) and compiles in its Ascend710 UT."""
    if type(v) is int and v < 0 and S.is_int(t) and not S.is_bool(t) and t.kind == "u" \
            and v >= -(1 << (t.bits - 1)):
        return v + (1 << t.bits)
    return v


#: Named choice BITWISE_OPERAND_TAKES_LEFT_DTYPE (tik_core.md): ``a & b``, ``a | b`` and ``a ^ b`` on two integer TIK
#: values of different dtypes convert the right operand to the left one's dtype (C conversion: a wider value keeps
#: its low bits, a narrower one is sign- or zero-extended by its own signedness) and compute in that dtype, as
#: ``<<``/``>>`` already do. TIK's own ``__and__``/``__or__``/``__xor__`` build ``Expr(other, self.dtype)`` =
#: ``other.astype(self.dtype)`` and a ``bitwise_*`` intrinsic of ``self.dtype``, in TIK 2019 (``tik_expr.py``,
#: te.tik) and unchanged in CANN 8.1.RC1 (tbe.tik ``tik_expr.py``), whose ``+ - * / % < ...`` promote instead
#: (``change_dtype_of_expr_op``, which the simulator's common type already follows). Was: the common type
#: (``int8(-1) & uint16(0xFFFF)`` was uint16 65535; TIK: int8 -1). Loop variables (INDEX) and bools keep the old rule.
BITWISE_OPERAND_TAKES_LEFT_DTYPE = True

_BITWISE_OPS = ("and", "or", "xor")


def bitwise_right_operand(a, b):
    """BITWISE_OPERAND_TAKES_LEFT_DTYPE: the right operand ``b`` of a bitwise operator, converted to the left
    operand ``a``'s integer dtype when both are integer TIK values (IR expressions) of different dtypes; else ``b``."""
    if not BITWISE_OPERAND_TAKES_LEFT_DTYPE or not isinstance(a, P.Expr) or not isinstance(b, P.Expr):
        return b
    ta, tb = a.type, b.type
    if ta is tb or not all(t.kind in ("s", "u") and t.name != "index" and not S.is_bool(t) for t in (ta, tb)):
        return b
    return P.cast(b, ta)


#: Named choice INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED (tik_core.md): a Python float combined with (or compared
#: with) an integer TIK value takes that value's dtype, converted as C converts a double (toward zero):
#: ``n / 16.0`` is ``n / 16`` and ``n < 2.5`` is ``n < 2``. TIK's own Expr operators wrap the other operand as
#: ``Expr(other, self.dtype)``, i.e. ``tvm.const(16.0, "int32")`` (TIK ``tik_expr.py``, 2019), and shipped CANN
#: code relies on it: the dynamic pad / strided_slice_grad kernels (``pad_not_align``) round up with
#: ``BLOCK_SIZE / num_bit`` (16.0 under Python 3) and get 32-byte aligned UB offsets only this way. A NaN or
#: infinity, or a value outside the dtype, is refused (no integer holds it). Was: float32 arithmetic.
INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED = True

#: Named choice FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32 (tik_core.md): within INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED,
#: only an integral float (``16.0``) becomes the integer constant; a fractional one (``0.5 * n``, ``n - 0.5``,
#: ``n < 2.5``) makes the operation float32, the common type of an int and a float, as CANN 8.1.RC1 TIK does
#: (its Expr operators keep a fractional float a float32 constant). Shipped CANN ``grid_sampler_2d_for_mini_cihiw``
#: scales its grid by ``0.5 * in_w`` with int64 Scalars: truncated, the factor was 0 and every output wrong with
#: no error. False: truncate every float toward zero (TIK 2019).
FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32 = True


def float_immediate_to_int(v, t, what: str):
    """INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED: an integral Python float operand of an integer TIK value ``t`` as that
    int (a fractional one stays a float: FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32); anything else unchanged."""
    if type(v) is not float or not INT_EXPR_FLOAT_IMMEDIATE_TRUNCATED or not S.is_int(t) or S.is_bool(t):
        return v
    if FRACTIONAL_FLOAT_IMMEDIATE_IS_FLOAT32 and math.isfinite(v) and not v.is_integer():
        return v                                    # float32 arithmetic (the common type)
    if not math.isfinite(v):
        name = tik_dtype_name(t) if t.name != "index" else "int64"
        raise IllegalOperand(f"{v} ({what}) has no {name} value: TIK converts a float immediate to the other "
                             f"operand's integer dtype", value=v,
                             hint="use a finite number, or convert the TIK value to a float dtype first "
                                  "(.astype('float32'))")
    return int(v)                                   # toward zero; check_immediate then checks the range


def int64_immediate_bits(v, t):
    """Named choice INT64_IMMEDIATE_BIT_PATTERN (tik_core.md): a Python int in [2**63, 2**64) stored into a
    64-bit signed register, or an operand of arithmetic with a 64-bit signed TIK value (``Expr._bin``), becomes
    its two's-complement pattern (``2**64-1`` -> ``-1``). TIK's ``set_as`` hands an int immediate to ``tvm.const``
    with no range check of its own (TIK ``tik_scalar.py``), and the FFI passes it in a 64-bit integer slot, which
    keeps exactly these 64 bits; CANN's dynamic concat (``concat_v2_d_tik``) builds its all-ones vadd masks as
    ``Scalar("int64", init_value=2**64-1)``, and CANN's dynamic arg_max_v2 its tail masks as
    ``MAX_MASK_INT64 - mask`` (its UT compiles that kernel for float16, expecting success). Anything else
    is returned unchanged (and `check_immediate` refuses what does not fit)."""
    if type(v) is int and S.is_int(t) and not S.is_bool(t) and t.kind == "s" and t.bits == 64 \
            and (1 << 63) <= v < (1 << 64):
        return v - (1 << 64)
    return v


def check_immediate(v, t, what: str, *, store: bool = False) -> None:
    """A Python int combined with (or stored into) an integer TIK value takes that value's dtype ``t``; raise
    `IllegalOperand` if it does not fit (TVM rejects such literals; wrapping it would silently compute
    something else). ``store``: ``v`` is converted into ``t`` (a register assignment), so a NaN or infinite
    float is refused too (a fraction converts as in C); an int stored into a bool (a bool tensor element,
    TENSOR_SET_AS_IMMEDIATE_CHECKED) must be 0 or 1. Other values are left alone."""
    if S.is_bool(t) and store and type(v) is int and v not in (0, 1):
        # a bool constant keeps only bit 0 (``scalars.normalize``: 2 was stored as False, 3 as True, while a
        # Scalar holding 2 converts to True); TVM refuses such a 1-bit literal too (its IntImm range check)
        raise IllegalOperand(f"the immediate {v} ({what}) is not a bool value", value=v, limit="0 or 1",
                             hint="store True or False (1 or 0), or declare the tensor with an integer dtype")
    if not S.is_int(t) or S.is_bool(t):
        return
    lo, hi = S.int_bounds(t)
    name = tik_dtype_name(t) if t.name != "index" else "int64"
    if store and type(v) is float and not math.isfinite(v):
        raise IllegalOperand(f"{v} ({what}) cannot be stored in {name}", value=v,
                             hint=f"integer values are finite, in [{lo}, {hi}]")
    if type(v) is not int:
        return
    if not lo <= v <= hi:
        fix = "declare the register (Scalar) with a wider dtype" if store else \
            "convert the TIK value to a wider dtype first (.astype('int64'))"
        raise IllegalOperand(f"the immediate {v} ({what}) does not fit {name}", value=v, limit=f"[{lo}, {hi}]",
                             hint=f"use a value in [{lo}, {hi}], or {fix}")


def static_int(v) -> Optional[int]:
    """``v`` as a Python int if it is known now (int, integral float, numpy int, constant IR), else None."""
    if type(v) is int:
        return v
    if isinstance(v, Expr):
        v = v.ir
    if isinstance(v, P.Const):
        return int(v.value) if not isinstance(v.value, float) or float(v.value).is_integer() else None
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    return None


def integer_rooted(ir) -> bool:
    """True if every non-constant leaf of the scalar IR ``ir`` is an integer value: an integer Scalar /
    loop variable / InputScalar combined with (possibly float) immediates. TIK accepts such an Expr where
    an integer is due even when a float immediate made it a float expression (tik_api.md §5.1; CANN
    cumsum_d loops to ``(n - shape[0] / block_num * block_i) / 256``); a float Scalar is not. A bit
    reinterpretation counts as integer when it goes to an integer type from integer values (``b.reinterpret_cast_to(
    "uint32")``); one into a float type, or of a float value's bits, does not."""
    for x in P.walk(ir):               # each shared node once (an expression built in a loop is a DAG)
        if isinstance(x, P.Const):
            continue
        if isinstance(x, P.Bitcast) and x.type.kind not in ("s", "u"):
            return False
        if not isinstance(x, P.ScalarExpr):
            return False
        if not x.children() and not (x.type.kind in ("s", "u") or x.type.name == "index"):
            return False
    return True


def _conds(conds, api):
    if len(conds) == 1 and isinstance(conds[0], (list, tuple)):
        conds = tuple(conds[0])
    if not conds:
        from .errors import api_site, exit_on_error_of, tik_error
        raise tik_error("needs at least one condition", api=api, where=api_site(api),
                        hint=f"pass one or more conditions: {api}(a > 0, b < n)", exit_on_error=exit_on_error_of())
    return [ir_value(c, what="condition") for c in conds]


def all_(*conds) -> Expr:
    """``tik.all(c1, c2, ...)``: logical and."""
    with _expr_errors("tik.all"):
        return Expr(P.all_(*_conds(conds, "tik.all")))


def any_(*conds) -> Expr:
    """``tik.any(c1, c2, ...)``: logical or."""
    with _expr_errors("tik.any"):
        return Expr(P.any_(*_conds(conds, "tik.any")))


def negate(cond) -> Expr:
    """``tik.negate(c)``: logical not."""
    with _expr_errors("tik.negate"):
        return Expr(P.not_(ir_value(cond, what="condition")))


__all__ = ["Expr", "Scalar", "InputScalar", "all_", "any_", "negate", "ir_value", "static_int", "SCALAR_DTYPES",
           "float_immediate"]
