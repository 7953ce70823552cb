"""TIK scalar extras: ``ScalarArray``, ``TensorAddrList`` and the bit-count scalar instructions
``scalar_countbit0``, ``scalar_countbit1``, ``scalar_countleading0`` (the other ``scalar_*``
instructions live in `container`).

* ``ScalarArray(dtype="int64", length=1, name="reg_buf", init_value=None)``: ``length``
  scalar registers. A constant index gives the register itself (a `Scalar`); a run-time
  index (Scalar/Expr) gives an element whose value is a select chain over the registers
  and whose ``set_as`` assigns the register the index names (an if/elif chain; an index
  outside ``[0, length)`` at run time leaves every register unchanged and reads 0).
* ``TensorAddrList(size, scope, name)``: an ``int64`` tensor of GM addresses in GM or UB
  (TIK's rules: ``size`` a positive int or integer Scalar/Expr; ``set_as`` takes ``int64``
  values; a GM list can only be read). It is an ordinary ``int64`` Tensor here; the
  instructions that dereference such addresses are not modelled.
* bit counts on 64-bit values (``dst`` a ``uint64`` Scalar, ``src`` a ``uint64`` Scalar or an
  int immediate), built from wrapping integer expressions (SWAR population count,
  binary-search leading-zero count); no new PTO op is needed.
* ``printf(format_string, *arg)``: ``pto.debug_print`` with the run-time values of up to six
  Scalars / Exprs / numbers (C format, printed during ``start_debug`` like TIK's debugger;
  ``Machine.printed`` keeps them). Tensor and ScalarArray arguments (TIK prints their
  contents) are not supported (`UnsupportedOp`).
"""
from __future__ import annotations

import numpy as np

from pto_core import program as P
from pto_core.errors import UnknownName, UnsupportedOp

from .. import platform
from .api import TikBase, tik_api
from .scalar import SCALAR_DTYPES, Expr, Scalar, static_int
from .tensor import Tensor

U64 = P.scalar_type("uint64")
_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101


class ScalarArray:
    """``tik_instance.ScalarArray(...)``: an indexable array of Scalar registers (see module doc)."""

    def __init__(self, tik, dtype, length, name, init_value):
        self.tik, self.dtype, self.name = tik, dtype, name
        values = list(init_value) if isinstance(init_value, (list, tuple)) else [init_value] * length
        if len(values) != length:
            raise tik._error(f"init_value has {len(values)} entries for a ScalarArray of length {length}",
                             api="tik.ScalarArray", operand="init_value", value=len(values), limit=length)
        self.regs = [Scalar(tik, dtype, f"{name}_{i}", v) for i, v in enumerate(values)]

    def __len__(self):
        return len(self.regs)

    def __getitem__(self, index):
        return self.tik._scalar_array_item(self, index)

    def __repr__(self):
        return f"tik.ScalarArray({self.name!r}: {self.dtype} x {len(self.regs)})"


class _ArrayElement(Expr):
    """``array[i]`` with a run-time index: reads select among the registers, ``set_as`` writes one."""

    __slots__ = ("array", "index")

    def __init__(self, array: ScalarArray, index):
        regs = array.regs
        value = P.Const(0, regs[0].ir.type)
        for k in range(len(regs) - 1, -1, -1):
            value = P.select(P.cmp("eq", P.cast(index, P.I64), k), regs[k].ir, value)
        Expr.__init__(self, value)
        self.array, self.index = array, index

    def set_as(self, value, src_offset=None):
        self.array.tik._scalar_array_store(self, value, src_offset)


class TensorAddrList(Tensor):
    """``tik_instance.TensorAddrList(size, scope, name)``: an ``int64`` address list (a Tensor here)."""

    __slots__ = ()

    @property
    def value(self):
        """TIK's "address value" view (the list itself)."""
        return self

    def _view(self, shape, strides, offset, whole=False):
        return TensorAddrList(self.tik, self.storage, self._dt, shape, strides, offset, whole, self._name)

    def set_as(self, value, dst_offset=0, src_offset=None):
        if isinstance(value, (Scalar, Tensor)) and value.dtype != "int64":
            raise self.tik._error(f"value's dtype should be int64, Instead of {value.dtype}",
                                  api="tik.TensorAddrList.set_as", operand="value", value=value.dtype,
                                  limit="int64")
        if self.scope != "local.UB":
            raise self.tik._error(f"Dst TensorAddrList can only be UB Tensor but get {self.scope} TensorAddrList.",
                                  api="tik.TensorAddrList.set_as", operand="dst", value=self.scope)
        Tensor.set_as(self, value, dst_offset, src_offset)


class ScalarExtraAPI(TikBase):
    """ScalarArray, TensorAddrList, the bit-count scalar instructions and printf (mixin)."""

    @tik_api("printf")
    def printf(self, format_string, *arg):
        """Print Scalars/Exprs/numbers with a C format at run time (see module doc)."""
        if not isinstance(format_string, str) or not format_string:
            raise self._error("format_string must be a non-empty str", operand="format_string",
                              value=repr(format_string))
        if len(format_string) > 128:
            raise self._error(f"format_string has {len(format_string)} characters", operand="format_string",
                              value=len(format_string), limit="128 characters")
        if len(arg) > 6:
            raise self._error(f"printf takes at most 6 values, got {len(arg)}", operand="arg", value=len(arg),
                              limit=6)
        values = []
        for k, a in enumerate(arg):
            if isinstance(a, (Tensor, ScalarArray)):
                raise self._error(f"printf of a {type(a).__name__} (its contents) is not simulated",
                                  operand=f"arg[{k}]", value=getattr(a, "name", repr(a)), cls=UnsupportedOp,
                                  hint="read the elements into Scalars and print those, or inspect the "
                                       "outputs of start_debug")
            if isinstance(a, bool) or not isinstance(a, (Expr, int, float, np.integer, np.floating)):
                raise self._error(f"printf value {k} must be a Scalar, Expr or number, got {type(a).__name__}",
                                  operand=f"arg[{k}]", value=repr(a))
            values.append(a.ir if isinstance(a, Expr) else a.item() if isinstance(a, np.generic) else a)
        self._emit("debug_print", values=tuple(values) if values else None, fmt=format_string)

    @tik_api("ScalarArray")
    def ScalarArray(self, dtype="int64", length=1, name="reg_buf", init_value=None):  # noqa: N802 (TIK's name)
        if dtype not in SCALAR_DTYPES:
            raise self._error(f"dtype {dtype!r} is not a TIK scalar dtype", operand="dtype", value=dtype,
                              limit="one of " + ", ".join(SCALAR_DTYPES), cls=UnknownName)
        n = static_int(length)
        if n is None or isinstance(length, bool) or n < 1:
            raise self._error(f"length should be a positive int, got {length!r}", operand="length",
                              value=repr(length), limit=">= 1")
        return ScalarArray(self, dtype, n, name, init_value)

    def _scalar_array_item(self, arr: ScalarArray, index):
        with self._api("tik.ScalarArray.__getitem__"):
            i = static_int(index)
            if i is not None and not isinstance(index, Expr):
                if not -len(arr) <= i < len(arr):
                    raise self._error(f"index {i} is out of range of ScalarArray of length {len(arr)}",
                                      operand="index", value=i, limit=f"[0, {len(arr)})")
                return arr.regs[i]
            if not isinstance(index, Expr) or index.ir.type.kind not in ("s", "u"):
                raise self._error(f"ScalarArray index should be an int or an integer Scalar/Expr, got {index!r}",
                                  operand="index", value=repr(index))
            return _ArrayElement(arr, index.ir)

    def _scalar_array_store(self, elem: _ArrayElement, value, src_offset):
        with self._api("tik.ScalarArray.set_as"):
            b = self._builder
            regs = elem.array.regs
            idx = P.cast(elem.index, P.I64)
            for k, reg in enumerate(regs):
                scope = b.if_(P.cmp("eq", idx, k)) if k == 0 else b.elif_(P.cmp("eq", idx, k))
                with scope:
                    self._scalar_set_api(reg, value, src_offset)

    @tik_api("TensorAddrList")
    def TensorAddrList(self, size=None, scope=None, name=None):  # noqa: N802 (TIK's name)
        if scope not in ("global", "local.UB"):
            raise self._error("scope out of TensorAddrList Scope", operand="scope", value=scope,
                              limit="scope_gm, scope_ubuf")
        if isinstance(size, Expr) and size.dtype.startswith("float"):
            raise self._error("When the size element is Scalar or Expr, it's dtype cannot be float",
                              operand="size", value=size.dtype)
        t = self.Tensor("int64", (size,), scope=scope, name=name)
        return TensorAddrList(self, t.storage, t.dt, t._shape, t._strides, t.offset, True, None)

    # ------------------------------------------------------------------ bit counts
    def _bit_args(self, api, dst, src):
        if not isinstance(dst, Scalar):
            raise self._error("dst should be Scalar", operand="dst", value=repr(dst))
        if isinstance(src, Scalar):
            if src.dtype != dst.dtype:
                raise self._error(f"Intrinsic {api}'s src's dtype should be equal to dst's dtype", operand="src",
                                  value=src.dtype, limit=dst.dtype)
            v = src.ir
        elif isinstance(src, int) and not isinstance(src, bool):
            v = src
        else:
            raise self._error("not support this type of src now", operand="src", value=repr(src))
        instr = {"scalar_countbit0": "bcnt0", "scalar_countbit1": "bcnt1", "scalar_countleading0": "clz"}[api]
        try:
            ok = platform.intrinsic_check_support("Intrinsic_" + instr, dst.dtype)
        except platform.PlatformDataMissing:
            ok = dst.dtype == "uint64"
        if not ok:
            raise self._error(f"{api} does not support {dst.dtype}", operand="dst", value=dst.dtype,
                              limit="uint64")
        return P.cast(P.as_expr(v, U64), U64)

    def _popcount(self, x):
        b = self._builder
        r = P.Reg(U64, "popcnt")
        b.assign(r, P.binop("sub", x, P.binop("and", P.binop("shr", x, 1), _M1)))
        b.assign(r, P.binop("add", P.binop("and", r, _M2), P.binop("and", P.binop("shr", r, 2), _M2)))
        b.assign(r, P.binop("and", P.binop("add", r, P.binop("shr", r, 4)), _M4))
        b.assign(r, P.binop("shr", P.binop("mul", r, _H01), 56))
        return r

    @tik_api("scalar_countbit1")
    def scalar_countbit1(self, dst, src):
        """``dst`` = number of 1 bits of the 64-bit ``src``."""
        x = self._bit_args("scalar_countbit1", dst, src)
        self._builder.assign(dst.ir, P.cast(self._popcount(x), dst.ir.type))

    @tik_api("scalar_countbit0")
    def scalar_countbit0(self, dst, src):
        """``dst`` = number of 0 bits of the 64-bit ``src``."""
        x = self._bit_args("scalar_countbit0", dst, src)
        self._builder.assign(dst.ir, P.cast(P.binop("sub", 64, self._popcount(x)), dst.ir.type))

    @tik_api("scalar_countleading0")
    def scalar_countleading0(self, dst, src):
        """``dst`` = number of leading 0 bits of the 64-bit ``src`` (64 for 0)."""
        x = self._bit_args("scalar_countleading0", dst, src)
        b = self._builder
        v = P.Reg(U64, "clz_x")
        n = P.Reg(U64, "clz_n")
        b.assign(v, x)
        b.assign(n, 0)
        for s in (32, 16, 8, 4, 2, 1):
            empty = P.cmp("eq", P.binop("shr", v, 64 - s), 0)
            b.assign(n, P.select(empty, P.binop("add", n, s), n))
            b.assign(v, P.select(empty, P.binop("shl", v, s), v))
        b.assign(n, P.select(P.cmp("eq", x, 0), 64, n))
        b.assign(dst.ir, P.cast(n, dst.ir.type))


__all__ = ["ScalarExtraAPI", "ScalarArray", "TensorAddrList"]
