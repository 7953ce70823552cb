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
  instructions that dereference such addresses are not modelled: ``lst[i].value`` (the buffer at
  entry i's address) raises `UnsupportedOp` (named choice ADDR_LIST_DEREF).
* bit counts on 64-bit values (``dst`` a ``uint64`` Scalar, ``src`` a ``uint64`` Scalar or an
  int immediate), built from wrapping integer expressions (SWAR population count,
  binary-search leading-zero count); no new PTO op is needed.
* ``printf(format_string, *arg)``: ``pto.debug_print`` with the run-time values of up to six
  Scalars / Exprs / numbers (C format, printed during ``start_debug`` like TIK's debugger;
  ``Machine.printed`` keeps them). Tensor and ScalarArray arguments (TIK prints their
  contents) are not supported (`UnsupportedOp`).
* ``set_printf_params(print_workspace_size=128, single_print_length=512, is_printf_to_screen=True,
  printf_file_path=None)`` (TIK reference "set_printf_params"): TIK's ranges and rules
  (`PrintfParams`; once per kernel, before every printf; a workspace of ``[1, 32768]`` MB split
  evenly over the cores, each printf taking ``single_print_length`` bytes, a multiple of 32 in
  ``[64, workspace / block_num - 32]``; the workspace a multiple of ``block_num`` and at least
  ``block_num * (32 + single_print_length)`` -- checked when ``BuildCCE`` knows ``block_num``).
  Effects here: format strings may have ``single_print_length - 32`` characters (128 without
  the call); ``is_printf_to_screen=False`` keeps the text off stdout (``pto.debug_print``
  ``screen = false``; ``Machine.printed`` still has it); ``printf_file_path`` makes every
  ``start_debug`` write the run's printf text to ``<printf_file_path>/<kernel_name>.txt``
  (the directory is created; the file is rewritten per run). The workspace is not a limit
  here: TIK does not document what a full print buffer does on the device.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from pto_core import program as P
from pto_core.errors import CapacityExceeded, UnknownName, UnsupportedOp

from .. import platform
from .api import TikBase, tik_api
from .errors import user_method
from .scalar import SCALAR_DTYPES, Expr, Scalar, static_int
from .tensor import Tensor

U64 = P.scalar_type("uint64")

#: printf format strings without set_printf_params (TIK reference "printf")
FORMAT_LIMIT = 128
#: Named choice (simulator limit, tik_core.md): the longest ScalarArray. The TIK reference gives no bound;
#: the simulator keeps one register per element, so an absurd length (2**31) would exhaust the host.
MAX_SCALAR_ARRAY = 65536
#: Named choice (tik_core.md §8): a run-time ScalarArray index outside [0, length) -- C's out-of-bounds
#: array access, which TIK's reference leaves undefined (it checks constant indices only) -- reads an
#: undefined value (an `UninitializedRead` where it is used, as INT_DIV_BY_ZERO_UNDEFINED's results: a
#: read that C's && / || skips is no error) and stops the run at a store (`pto.assert_in_range`). It used
#: to read 0 and drop the store silently.
SCALAR_ARRAY_RUNTIME_INDEX = True
#: set_printf_params: workspace range in MB, smallest record, bytes of a record that are not text
WORKSPACE_MB = (1, 32768)
MIN_PRINT_LENGTH = 64
PRINT_HEADER = 32
MB = 1 << 20


@dataclass(frozen=True)
class PrintfParams:
    """What ``set_printf_params`` fixed for one kernel (defaults: TIK's)."""

    workspace_mb: int = 128
    single_print_length: int = 512
    to_screen: bool = True
    file_path: Optional[str] = None
    where: object = None          # Provenance of the call

    @property
    def format_limit(self) -> int:
        return self.single_print_length - PRINT_HEADER

    def core_problem(self, block_num: int) -> Optional[str]:
        """Why ``block_num`` cores cannot share the workspace (TIK's rules), or None."""
        total = self.workspace_mb * MB
        if total % block_num:
            return f"print_workspace_size*1024*1024 = {total} is not divisible by block_num {block_num}"
        if total < block_num * (PRINT_HEADER + self.single_print_length):
            return (f"print_workspace_size*1024*1024 = {total} is less than block_num * (32 + single_print_length) "
                    f"= {block_num * (PRINT_HEADER + self.single_print_length)}")
        return None
_M1, _M2, _M4, _H01 = 0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x0101010101010101


class ScalarArray:
    """``tik_instance.ScalarArray(...)``: an indexable array of Scalar registers (see module doc)."""

    def __init__(self, tik, dtype, length, name, init_value):
        self.tik, self.dtype, self.name = tik, dtype, name
        values = list(init_value) if isinstance(init_value, (list, tuple)) else [init_value] * length
        if len(values) != length:
            raise tik._error(f"init_value has {len(values)} entries for a ScalarArray of length {length}",
                             api="tik.ScalarArray", operand="init_value", value=len(values), limit=length,
                             hint=f"give one initial value per entry ({length}), or a single value for all")
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
        # SCALAR_ARRAY_RUNTIME_INDEX: no register outside [0, length)
        value = P.Undef(regs[0].ir.type, f"a run-time index outside [0, {len(regs)}) of ScalarArray "
                                        f"{array.name!r} is read (C leaves the value undefined)")
        for k in range(len(regs) - 1, -1, -1):
            value = P.select(P.cmp("eq", P.cast(index, P.I64), k), regs[k].ir, value)
        Expr.__init__(self, value)
        self.array, self.index = array, index

    @user_method("tik.Scalar.set_as")
    def set_as(self, value, src_offset=None):
        self.array.tik._scalar_array_store(self, value, src_offset)


class TensorAddrList(Tensor):
    """``tik_instance.TensorAddrList(size, scope, name)``: an ``int64`` address list (a Tensor here)."""

    __slots__ = ()

    @property
    def value(self):
        """TIK's "address value" view. Of the whole list: the list itself (its int64 entries). Of one
        entry (``lst[i].value``, what IndexSDK and CANN ops pass to data_move, also as
        ``lst[i].value + offset``): the GM buffer at the address the entry holds -- not modelled
        (named choice ADDR_LIST_DEREF): the debugger feeds no device addresses, so there is no
        buffer to map an address to, and TIK does not document the element dtype or the unit of
        an offset added to such an address. Raises `UnsupportedOp` instead of reading the entry's
        own bytes as data."""
        if self._whole:
            return self
        with self.tik._api("tik.TensorAddrList.value"):
            raise self.tik._error(
                f"{self.name!r}[i].value is the GM buffer at the address stored in that entry; dereferencing "
                f"TensorAddrList addresses is not modelled (there is no device address space to look the address "
                f"up in, and TIK does not document the pointed-to dtype or offset units)",
                operand="self", value=self.name, cls=UnsupportedOp,
                hint="pass the buffers the addresses point to as GM tensors of the kernel (BuildCCE inputs/outputs) "
                     "and address them with Scalar offsets")

    def _view(self, shape, strides, offset, whole=False):
        return TensorAddrList(self.tik, self.storage, self._dt, shape, strides, offset, whole, self._name)

    @user_method("tik.Tensor.set_as")
    def set_as(self, value, dst_offset=0, src_offset=None):
        if isinstance(value, (Scalar, Tensor)) and value.dtype != "int64":
            raise self.tik._error(f"value's dtype should be int64, Instead of {value.dtype}",
                                  api="tik.TensorAddrList.set_as", operand="value", value=value.dtype,
                                  limit="int64", hint="set it from an int64 Scalar or Tensor address")
        if self.scope != "local.UB":
            raise self.tik._error(f"Dst TensorAddrList can only be UB Tensor but get {self.scope} TensorAddrList.",
                                  api="tik.TensorAddrList.set_as", operand="dst", value=self.scope,
                                  hint="declare the TensorAddrList with scope=tik.scope_ubuf")
        Tensor.set_as(self, value, dst_offset, src_offset)


class ScalarExtraAPI(TikBase):
    """ScalarArray, TensorAddrList, the bit-count scalar instructions and printf (mixin)."""

    @tik_api("set_printf_params")
    def set_printf_params(self, print_workspace_size=128, single_print_length=512, is_printf_to_screen=True,
                          printf_file_path=None):
        """Configure printf for this kernel (see module doc)."""
        prev = getattr(self, "_printf_params", None)
        if prev is not None:
            w = f" (first call at {prev.where.file}:{prev.where.line})" if prev.where else ""
            raise self._error(f"set_printf_params can be called only once in a kernel{w}",
                              operand="print_workspace_size",
                              hint="call set_printf_params once, at the start of the kernel")
        first = getattr(self, "_first_printf", None)
        if first is not None:
            raise self._error(f"set_printf_params must be called before every printf; a printf is at "
                              f"{first.file}:{first.line}", operand="print_workspace_size",
                              hint="move set_printf_params to the start of the kernel")
        for v, name in ((print_workspace_size, "print_workspace_size"), (single_print_length, "single_print_length")):
            if isinstance(v, bool) or not isinstance(v, int):
                raise self._error(f"{name} must be an immediate int, got {type(v).__name__} {v!r}", operand=name,
                                  value=repr(v), hint=f"pass {name} as a Python int")
        ws = self._int_arg(print_workspace_size, "print_workspace_size", *WORKSPACE_MB)
        spl = self._int_arg(single_print_length, "single_print_length", MIN_PRINT_LENGTH, ws * MB - PRINT_HEADER)
        if spl % 32:
            raise self._error(f"single_print_length {spl} must be a multiple of 32 bytes", operand="single_print_length",
                              value=spl, limit="multiple of 32",
                              hint=f"pass single_print_length={-(-spl // 32) * 32} (rounded up to a multiple of 32)")
        is_printf_to_screen = self._bool_arg(is_printf_to_screen, "is_printf_to_screen")
        if printf_file_path is not None and (not isinstance(printf_file_path, str) or not printf_file_path):
            raise self._error("printf_file_path must be None or a non-empty str (a directory)",
                              operand="printf_file_path", value=repr(printf_file_path),
                              hint="pass printf_file_path=None (print to the screen) or a directory path")
        params = PrintfParams(ws, spl, is_printf_to_screen, printf_file_path, self._where)
        bn = self._builder.program.block_num
        if isinstance(bn, int):
            self._check_printf_cores(params, bn)
        self._printf_params = params

    def _check_printf_cores(self, params: "PrintfParams", block_num: int) -> None:
        """TIK's rules between the print workspace and the number of cores (BuildCCE / start_debug)."""
        problem = params.core_problem(block_num)
        if problem is not None:
            raise self._error(f"set_printf_params: {problem}", api="tik.set_printf_params",
                              operand="print_workspace_size", value=params.workspace_mb,
                              hint="choose print_workspace_size and single_print_length for the kernel's block_num")

    def _write_printf_file(self, kernel_name: str, printed: list) -> None:
        """``printf_file_path``: this run's printf text into ``<path>/<kernel_name>.txt``."""
        params = getattr(self, "_printf_params", None)
        if params is None or params.file_path is None:
            return
        os.makedirs(params.file_path, exist_ok=True)
        with open(os.path.join(params.file_path, f"{kernel_name}.txt"), "w") as f:
            f.write("".join(text for _, text in printed))

    @tik_api("printf")
    def printf(self, format_string, *arg):
        """Print Scalars/Exprs/numbers with a C format at run time (see module doc)."""
        if not isinstance(format_string, str) or not format_string:
            raise self._error("format_string must be a non-empty str", operand="format_string",
                              value=repr(format_string),
                              hint="pass a str such as \"x=%d\\n\" first")
        params = getattr(self, "_printf_params", None)
        limit = FORMAT_LIMIT if params is None else params.format_limit
        if len(format_string) > limit:
            raise self._error(f"format_string has {len(format_string)} characters", operand="format_string",
                              value=len(format_string), limit=f"{limit} characters" + (
                                  "" if params is None else " (single_print_length - 32)"),
                                  hint="split the text over several printf calls" + ("" if params is None else ", or "
                                       "raise single_print_length in set_printf_params"))
        if len(arg) > 6:
            raise self._error(f"printf takes at most 6 values, got {len(arg)}", operand="arg", value=len(arg),
                              limit=6, hint="split the values over several printf calls of at most 6 each")
        values = []
        for k, a in enumerate(arg):
            if isinstance(a, (Tensor, ScalarArray)):
                raise self._error(f"printf of a {type(a).__name__} (its contents) is not simulated",
                                  operand=f"arg[{k}]", value=getattr(a, "name", repr(a)), cls=UnsupportedOp,
                                  hint="read the elements into Scalars and print those, or inspect the "
                                       "outputs of start_debug")
            if isinstance(a, bool) or not isinstance(a, (Expr, int, float, np.integer, np.floating)):
                raise self._error(f"printf value {k} must be a Scalar, Expr or number, got {type(a).__name__}",
                                  operand=f"arg[{k}]", value=repr(a),
                                  hint="pass Scalars, Exprs or numbers after the format string (one per %d/%f)")
            values.append(a.ir if isinstance(a, Expr) else a.item() if isinstance(a, np.generic) else a)
        if getattr(self, "_first_printf", None) is None:
            self._first_printf = self._where
        extra = {} if params is None or params.to_screen else {"screen": False}
        self._emit("debug_print", values=tuple(values) if values else None, fmt=format_string, **extra)

    @tik_api("ScalarArray")
    def ScalarArray(self, dtype="int64", length=1, name="reg_buf", init_value=None):  # noqa: N802 (TIK's name)
        if dtype not in SCALAR_DTYPES:
            raise self._error(f"dtype {dtype!r} is not a TIK scalar dtype", operand="dtype", value=dtype,
                              limit="one of " + ", ".join(SCALAR_DTYPES), cls=UnknownName,
                              hint="pass one of the listed dtype names as a str (e.g. 'int32')")
        n = static_int(length)
        if n is None or isinstance(length, bool) or n < 1:
            raise self._error(f"length should be a positive int, got {length!r}", operand="length",
                              value=repr(length), limit=">= 1", hint="pass the number of Scalars as a Python int")
        if n > MAX_SCALAR_ARRAY:
            raise self._error(f"ScalarArray length {n} is more than the simulator's {MAX_SCALAR_ARRAY}",
                              operand="length", value=n, limit=f"[1, {MAX_SCALAR_ARRAY}]", cls=CapacityExceeded,
                              hint="keep that many values in a tensor (UB or GM) and index it instead")
        return ScalarArray(self, dtype, n, name, init_value)

    def _scalar_array_item(self, arr: ScalarArray, index):
        with self._api("tik.ScalarArray.__getitem__"):
            i = static_int(index)
            if i is not None and not isinstance(index, Expr):
                if not -len(arr) <= i < len(arr):
                    raise self._error(f"index {i} is out of range of ScalarArray of length {len(arr)}",
                                      operand="index", value=i, limit=f"[0, {len(arr)})",
                                      hint=f"pass an index in [{-len(arr)}, {len(arr) - 1}], or declare the "
                                           f"ScalarArray with more entries")
                return arr.regs[i]
            if not isinstance(index, Expr) or index.ir.type.kind not in ("s", "u"):
                raise self._error(f"ScalarArray index should be an int or an integer Scalar/Expr, got {index!r}",
                                  operand="index", value=repr(index),
                                  hint="index with a Python int or an integer Scalar")
            return _ArrayElement(arr, index.ir)

    def _scalar_array_store(self, elem: _ArrayElement, value, src_offset):
        with self._api("tik.ScalarArray.set_as"):
            b = self._builder
            regs = elem.array.regs
            self._check_scalar_value(regs[0].ir.type, value, "value")
            idx = P.cast(elem.index, P.I64)
            if SCALAR_ARRAY_RUNTIME_INDEX:
                self._emit("assert_in_range", idx, 0, len(regs) - 1,
                           what=f"index of ScalarArray {elem.array.name!r} (length {len(regs)})")
            for k, reg in enumerate(regs):
                scope = b.if_(P.cmp("eq", idx, k)) if k == 0 else b.elif_(P.cmp("eq", idx, k))
                with scope:
                    self._scalar_set_api(reg, value, src_offset)

    @tik_api("TensorAddrList")
    def TensorAddrList(self, size=None, scope=None, name=None):  # noqa: N802 (TIK's name)
        if scope not in ("global", "local.UB"):
            raise self._error("scope out of TensorAddrList Scope", operand="scope", value=scope,
                              limit="scope_gm, scope_ubuf", hint="pass scope=tik.scope_ubuf (or tik.scope_gm)")
        if isinstance(size, Expr) and size.dtype.startswith("float"):
            raise self._error("When the size element is Scalar or Expr, it's dtype cannot be float",
                              operand="size", value=size.dtype, hint="pass size as an int or an integer Scalar")
        t = self.Tensor("int64", (size,), scope=scope, name=name)
        return TensorAddrList(self, t.storage, t.dt, t._shape, t._strides, t.offset, True, None)

    # ------------------------------------------------------------------ bit counts
    def _bit_args(self, api, dst, src):
        if not isinstance(dst, Scalar):
            raise self._error("dst should be Scalar", operand="dst", value=repr(dst),
                              hint="pass a tik Scalar as dst")
        if isinstance(src, Scalar):
            if src.dtype != dst.dtype:
                raise self._error(f"Intrinsic {api}'s src's dtype should be equal to dst's dtype", operand="src",
                                  value=src.dtype, limit=dst.dtype,
                                  hint="use a src of the dst Scalar's dtype")
            v = src.ir
        elif isinstance(src, int) and not isinstance(src, bool):
            v = src
        else:
            raise self._error("not support this type of src now", operand="src", value=repr(src),
                              hint="pass a Scalar or an integer Expr as src")
        instr = {"scalar_countbit0": "bcnt0", "scalar_countbit1": "bcnt1", "scalar_countleading0": "clz"}[api]
        try:
            ok = platform.intrinsic_check_support("Intrinsic_" + instr, dst.dtype)
        except platform.PlatformDataMissing:
            ok = dst.dtype == "uint64"
        if not ok:
            raise self._error(f"{api} does not support {dst.dtype}", operand="dst", value=dst.dtype,
                              limit="uint64", hint="declare dst a uint64 Scalar")
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


__all__ = ["ScalarExtraAPI", "ScalarArray", "TensorAddrList", "PrintfParams"]
