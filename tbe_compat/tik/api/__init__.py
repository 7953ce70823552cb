"""Shared machinery of every TIK API family (data, control, vector, cube, ...).

A family is a mixin class of `pto_core`-lowering methods, each decorated with
`tik_api`::

    class DataAPI(TikBase):
        @tik_api("data_move")
        def data_move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **kwargs):
            d = self._operand(dst, "dst", spaces=("ub", "gm", ...))
            n = self._int_arg(nburst, "nburst", 1, 4095)
            self._emit("mte_gm_ub", s.ptr, d.ptr, 0, 32 * burst, nburst=(...),
                       footprint=[s.read(nbytes), d.write(nbytes)])

`tik_api` gives every call: argument binding against the Python signature (a wrong
arity is a TIK error naming the signature), the user's ``file:line`` and the API name
as provenance of every PTO statement it records, conversion of any simulator error
into the facade's error class (`errors`).

Helpers here (use them instead of re-deriving things):

* `TikBase._operand` -- a tensor argument as an `Operand`: PTO pointer expression, dtype,
  space, static offset, elements available, and footprint builders for auto-sync.
* `TikBase._int_arg` / `_scalar_arg` -- int/Scalar/Expr normalisation with range checks.
* `TikBase._emit` -- record one PTO op (with auto-sync before it).
* `TikBase._require_support` -- chip capability check from CANN's tables
  (``api_check_support``), re-checked when BuildCCE freezes the chip.
* `TikBase._error` -- a facade error with the current provenance.
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Optional

import numpy as np

from pto_core.errors import IllegalOperand, OutOfBounds, Misaligned, Provenance, PtoError, UnsupportedOp
from pto_core import program as P
from pto_core.program import INDEX
from pto_core.ops import registry

from ... import platform
from .. import registry as _registry
from ..autosync import Access
from ..errors import api_site, api_site_and_self, convert, tik_error
from ..scalar import Expr, integer_rooted, ir_value, static_bool, static_int
from ..tensor import SPACE_TIK_NAMES, Tensor


#: Named choice DEAD_CODE_DECLARATIONS_CHECKED: a declaration in code that never runs (a statically false
#: ``if_scope``, an empty constant ``for_range``) whose arguments fail a check raises its own error at its line,
#: as anywhere else; only the other calls failing there are dropped (`tik_api`). Source: CANN TIK's
#: ``if_scope`` / ``for_range`` (tik_ir_builder) push a statement list and trace the Python body as usual,
#: building the IfThenElse / For only at the scope's exit, so the body's ``Scalar`` / ``Tensor`` / ... constructor
#: checks run while tracing; constant folding removes the code later. The declarations' results are used by the
#: kernel's next lines: dropping them returned None and the kernel failed there with a bare Python TypeError
#: ("'NoneType' object is not subscriptable"), far from the cause. A tensor dimension <= 0 there is still an
#: empty tensor (not an error; see `Tik.Tensor`). Off: such declarations are dropped and return None (as before).
DEAD_CODE_DECLARATIONS_CHECKED = True
#: The TIK APIs `DEAD_CODE_DECLARATIONS_CHECKED` applies to: those that return an object the kernel keeps using.
DECLARATION_APIS = frozenset({"tik.Tensor", "tik.Scalar", "tik.InputScalar", "tik.ScalarArray", "tik.TensorAddrList",
                              "tik.Tensor.reshape", "tik.Tensor.flatten", "tik.Tensor.change_shape",
                              "tik.Tensor.reinterpret_cast_to"})


def _kept_in_dead_code(api: str, e: PtoError) -> bool:
    """True if error ``e`` of a call of ``api`` in code that never runs is raised, not dropped."""
    return getattr(e, "kept_in_dead_code", False) or (DEAD_CODE_DECLARATIONS_CHECKED and api in DECLARATION_APIS)


#: Named choice LEGACY_KEYWORDS: keyword names an older TIK release used for an argument TIK's current source
#: names otherwise (TIK API name -> {old keyword: current keyword}). A call passing the old keyword runs as if it
#: passed the current one; passing both is a bad-arguments error. vmrgsort4: the 2020 te/tik source names its
#: third parameter ``element_count_list``, while Huawei's 2019 CANN topk helper and TopkHelp pass
#: ``element_lengths=`` (shipped code, so the 2019 TIK accepted it); tik_api.md §9.11 names neither.
LEGACY_KEYWORDS = {
    "tik.vmrgsort4": {"element_lengths": "element_count_list"},
}


def _current_keywords(api: str, legacy: dict, args: tuple, kwargs: dict, names: tuple, where,
                      exit_on_error) -> dict:
    """``kwargs`` with `LEGACY_KEYWORDS` renamed to the current names (a new dict; the caller's is untouched).
    ``names``: the API's parameter names after ``self`` (an old keyword whose current parameter ``args`` already
    fills positionally is the same bad-arguments error as both keywords)."""
    kwargs = dict(kwargs)
    for old, new in legacy.items():
        if old in kwargs:
            if new in kwargs or new in names[:len(args)]:
                given = f"{new}=" if new in kwargs else f"{new} (positional argument {names.index(new) + 1})"
                raise tik_error(f"bad arguments: both {old}= and {given} given (they are the same argument: "
                                f"{old} is an older TIK release's name for {new})", api=api, where=where,
                                hint=f"pass only {new}" + ("=" if new in kwargs else " (drop " + old + "=)"),
                                exit_on_error=exit_on_error)
            kwargs[new] = kwargs.pop(old)
    return kwargs


def tik_api(name: str):
    """Decorator of a public TIK method: provenance, argument binding, error conversion.

    ``name`` is the TIK name without ``tik.`` (``"data_move"``, ``"Tensor.reshape"``).
    A call inside code that never runs (a statically false ``if_scope``, an empty constant
    ``for_range``; TIK's constant folding removes it) whose arguments fail a check is
    dropped instead of raising: e.g. ``vec_conv(n % 8, ...)`` under ``if_scope(n % 8 > 0)``
    with ``n`` a multiple of 8 (CANN's dynamic trace op). Declarations (`DECLARATION_APIS`) still
    raise there (`DEAD_CODE_DECLARATIONS_CHECKED`).
    """
    def deco(fn):
        sig = inspect.signature(fn)
        api = "tik." + name
        legacy = LEGACY_KEYWORDS.get(api)
        names = tuple(sig.parameters)[1:]           # the parameter names after self

        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            with self._api(api) as where:
                if legacy and kwargs:
                    kwargs = _current_keywords(api, legacy, args, kwargs, names, where, self._exit_on_error)
                try:
                    return fn(self, *args, **kwargs)
                except PtoError as e:
                    if not _kept_in_dead_code(api, e) and \
                            any(getattr(sc, "dead", False) for sc in getattr(self, "_scopes", ())):
                        return self._dropped_result(api, where)   # never executed: constant folding drops it
                    raise
                except TypeError:
                    try:                      # a wrong call of the API itself, or an error inside it?
                        sig.bind(self, *args, **kwargs)
                    except TypeError as bad:
                        shown = sig.replace(return_annotation=inspect.Signature.empty)
                        params = str(shown).replace("(self, ", "(", 1).replace("(self)", "()")
                        raise tik_error(f"bad arguments: {bad}", api=api, where=where,
                                        hint=f"call it as {api}{params}",
                                        exit_on_error=self._exit_on_error) from None
                    raise
        wrapper.tik_api_name = api
        return wrapper
    return deco


_UNSET = object()
#: op name -> `OpSpec` of the sync ops `TikBase._record_sync` records (a table lookup per pair otherwise)
_SYNC_SPECS: dict = {}


def sync_spec(op: str) -> registry.OpSpec:
    """``registry.get_op(op)``, memoised (the table row is re-read if the op was registered again)."""
    spec = _SYNC_SPECS.get(op)
    if spec is None or registry.OPS.get(op) is not spec:
        spec = _SYNC_SPECS[op] = registry.get_op(op)
    return spec


class Operand:
    """A tensor argument of a TIK call, resolved for lowering.

    Attributes:
        tensor: the `Tensor` view; ``name``: the argument name (``"dst"``).
        ptr: PTO pointer expression to the view's start (``!pto.ptr<dtype, space>``).
        dt: the view's `DType`; ``space``: canonical space.
        offset: the view's element offset (int when static).
    """

    __slots__ = ("tensor", "name", "ptr", "dt", "space", "tik", "_byte_offset")

    def __init__(self, tik, tensor: Tensor, name: str):
        self.tik, self.tensor, self.name = tik, tensor, name
        self.ptr = tensor.ptr()
        self.dt = tensor.dt
        self.space = tensor.space
        self._byte_offset = _UNSET

    @property
    def static_offset(self) -> Optional[int]:
        return self.tensor.static_offset

    @property
    def static_byte_offset(self) -> Optional[int]:
        b = self._byte_offset
        if b is _UNSET:                 # computed once: every check and footprint of the operand asks
            b = self.tensor.byte_offset()
            b = self._byte_offset = b if isinstance(b, int) else None
        return b

    @property
    def static_addr(self) -> Optional[int]:
        """Byte address of the view's start (on-chip, static offset), else None."""
        b = self.static_byte_offset
        st = self.tensor.storage
        return None if b is None or not isinstance(st.addr, int) else st.addr + b

    def available_bytes(self) -> Optional[int]:
        """Bytes from the view's start to the end of its storage (None if not static)."""
        b = self.static_byte_offset
        n = self.tensor.storage.nbytes
        return None if b is None or n is None else n - b

    def check_extent(self, nbytes, what: str = "", *, slack: int = 0, hint: str = "") -> None:
        """Raise TIK's "tensor overflow" error if an access of ``nbytes`` (int) from the view's start
        runs past the tensor (when both are known now). An on-chip destination whose start or length
        is a run-time value (an IR expression for ``nbytes``) gets a ``pto.assert_in_bounds`` instead,
        checked when it runs (the PTO op itself only sees the whole buffer): a write past the tensor
        would clobber its neighbours. Run-time over-reads of a source stay inside the buffer and are
        left alone (shipped kernels do them harmlessly, e.g. MindSpore's matmul_cube_dense_right reads
        one fractal past its last L1 tile and never uses it). ``None``: not checked. ``slack``: bytes
        past the tensor's end the access may still touch at run time (the rest of an on-chip tensor's
        last 32-byte block, which its 32-byte aligned placement owns); trace-time callers apply
        their own tail rules before calling. ``hint``: the fix to print (default: the data-move
        advice about bursts and strides)."""
        if nbytes is None:
            return
        room = self.tik._chain_room(self.tensor.storage) if self.name.startswith("dst") else None
        if room is not None:        # DYNAMIC_TENSOR_RUNTIME_CHAIN: the bytes up to the next tensor, known at run time
            self._check_extent_at_run_time(nbytes, what, 0, total=room[0], hint=room[1])
        if not isinstance(nbytes, int) or self.static_byte_offset is None:
            self._check_extent_at_run_time(nbytes, what, slack)
            return
        avail = self.available_bytes()
        b = self.static_byte_offset
        if b is not None and b < 0:
            raise self.tik._error(f"tensor overflow: {self.name} starts {-b} bytes before tensor "
                                  f"{self.tensor.name!r}", operand=self.name, cls=OutOfBounds,
                                  hint="index the tensor from offset 0 or later")
        if avail is not None and nbytes > avail:
            esize = max(1, self.dt.bits // 8)
            if self.tik._may_not_run():
                # Code that may never run (a run-time branch, a loop that may be empty): CANN compiles
                # it; the overflow is an error only if it executes (run-time check, same message).
                total = self.tensor.storage.nbytes
                alloc = "" if not slack else (f", {total + slack} B with its allocation's padding"
                                              if self.space == "gm" else
                                              f", {total + slack} B with the rest of its last 32-byte block")
                self.tik._emit("assert_in_bounds", b // esize, -(-(b + nbytes) // esize), (total + slack) // esize,
                               what=f"{self.name} of {self.tik._where.call if self.tik._where else 'tik'} "
                                    f"({what or 'the access'}, "
                                    f"tensor {self.tensor.name!r}{alloc})")
                return
            allowance = ""
            if slack:
                allowance = (f" ({avail + slack} B with its allocation's padding)" if self.space == "gm" else
                             f" ({avail + slack} B with the rest of its last 32-byte block)")
            raise self.tik._error(
                f"tensor overflow: {what or 'the access'} needs {nbytes} bytes ({nbytes // esize} elements) "
                f"from the start of {self.name}, but tensor {self.tensor.name!r} "
                f"({self.tensor.storage.nbytes} B) has only {avail} B ({avail // esize} elements) from there"
                f"{allowance}",
                operand=self.name, value=nbytes, limit=f"{avail + slack} B", cls=OutOfBounds,
                hint=hint or "check nburst/burst/strides (or repeat counts) against the tensor's shape")

    def _check_extent_at_run_time(self, nbytes, what: str, slack: int = 0, total=None, hint=None) -> None:
        """``total``: the tensor's bytes (default: its allocation; an I64 expression for a tensor placed
        by DYNAMIC_TENSOR_RUNTIME_CHAIN); ``hint``: the fix to print."""
        if total is None:
            total = self.tensor.storage.nbytes
            if not isinstance(total, int):
                return
        if self.space == "gm" or not self.name.startswith("dst"):
            return                                # GM regions are bounds-checked by the ops; reads: see above
        esize = max(1, self.dt.bits // 8)
        alloc = "" if not slack else f", {total + slack} B with the rest of its last 32-byte block"
        total = total + slack
        hint_kw = {"hint": hint} if hint else {}
        b = self.tensor.byte_offset()
        i64 = P.I64
        first = b // esize if isinstance(b, int) else P.binop("div", P.cast(b, i64), esize)
        end_b = b + nbytes if isinstance(b, int) and isinstance(nbytes, int) else \
            P.binop("add", P.cast(P.as_expr(b, i64), i64), P.cast(P.as_expr(nbytes, i64), i64))
        end = -(-end_b // esize) if isinstance(end_b, int) else P.binop("div", P.binop("add", end_b, esize - 1),
                                                                         esize)
        self.tik._emit("assert_in_bounds", first, end, total // esize,
                       what=f"{self.name} of {self.tik._where.call if self.tik._where else 'tik'} "
                            f"({what or 'the access'}, tensor {self.tensor.name!r}{alloc})", **hint_kw)

    def check_aligned(self, alignment: int) -> None:
        """Raise if the view's start (on-chip, static) is not ``alignment``-byte aligned."""
        addr = self.static_addr
        if addr is not None and addr % alignment:
            off = self.static_byte_offset
            raise self.tik._error(
                f"{self.name} address is not {alignment}-byte aligned: tensor {self.tensor.name!r} + {off} B "
                f"(element offset {self.static_offset}) in {SPACE_TIK_NAMES[self.space]}",
                operand=self.name, value=off, limit=f"multiple of {alignment} B", cls=Misaligned,
                hint=f"start the view at an element offset that is a multiple of {alignment * 8 // self.dt.bits}")

    # -- auto-sync footprints
    def _region(self, nbytes, write: bool) -> Access:
        st = self.tensor.storage
        region = ("gm", id(st.gm)) if st.space == "gm" else (st.space,)
        if st.chain_root is not None:       # a run-time address: anywhere in the chain root's reservation
            lo, hi = st.static_bounds()
            return Access(region, lo, hi, write)
        base = st.addr or 0
        b = self.static_byte_offset
        if b is not None and isinstance(nbytes, int) and b >= 0:
            return Access(region, base + b, base + b + max(nbytes, 1), write)
        size = st.nbytes if st.nbytes is not None else 1 << 62
        return Access(region, base, base + size, write)

    def read(self, nbytes=None) -> Access:
        """Footprint: this operand reads ``nbytes`` from its start (None / dynamic: to the tensor's end)."""
        return self._region(nbytes, False)

    def write(self, nbytes=None) -> Access:
        return self._region(nbytes, True)


def has_key(table, key) -> bool:
    """``key in table`` for a user-given ``key`` that may be unhashable (a list where a mode name belongs:
    then it is simply not a key, and the caller's error lists the legal ones)."""
    try:
        return key in table
    except TypeError:
        return False


def range_hint(name: str, lo: Optional[int], hi: Optional[int]) -> str:
    """The fix of an out-of-range integer argument."""
    if lo is not None and hi is not None:
        return f"pass {name} between {lo} and {hi}"
    return f"pass {name} >= {lo}" if lo is not None else f"pass {name} <= {hi}"


def int_type_hint(v) -> str:
    """The fix of an integer argument of another type."""
    if isinstance(v, bool):
        return "pass an int (0 or 1), not a bool"
    if isinstance(v, (float, np.floating)):
        return "pass a whole number as an int (round it first: int(...)), or an integer Scalar/Expr"
    if isinstance(v, Tensor):
        return "read the element into a Scalar first (s = tik_instance.Scalar('int32'); s.set_as(t[i])) and pass s"
    return "pass a Python int, or an integer tik Scalar/Expr for a value known only at run time"


def dtype_hint(name: str, dtypes) -> str:
    """The fix of a tensor argument of a dtype the API does not take."""
    return (f"pass a {' or '.join(dtypes)} tensor as {name} (convert the data with vconv/vec_conv/h_cast, or "
            f"view its bytes with reinterpret_cast_to)")


class _ApiCall:
    """The context of one TIK API call. The outermost call (``tik._depth`` 0) takes the user's
    ``file:line`` as provenance of everything recorded inside (`Builder.at`) and converts a
    simulator error into the facade's class; nested calls (an API lowering through another)
    keep the outer call's provenance."""

    __slots__ = ("tik", "api", "where", "at", "block", "mark")

    def __init__(self, tik, api: str):
        self.tik, self.api, self.where, self.at = tik, api, None, None

    def __enter__(self) -> Provenance:
        tik = self.tik
        if tik._depth:
            tik._depth += 1
            return tik._where
        # the walk for the user's line starts at the frame of the ``with`` (this method's and api_site's frames
        # are the facade's: skipped without building their frame objects)
        owners = tik._call_owners
        if owners is None:          # not recording owners (`registry._RECORD_CALL_OWNERS`): no f_locals read
            where = api_site(self.api, sys._getframe(1))
        else:
            where, owner, params = api_site_and_self(self.api, sys._getframe(1), tik._loop_exprs)
            owners.append(owner)
            tik._call_loop_params.append(params)
        self.where = where
        tik._depth, tik._where = 1, where
        tik._calls.append(where)
        _registry.note_tracing(tik)
        builder = tik._builder
        self.at = builder.at(where)
        self.at.__enter__()
        block = self.block = builder._blocks[-1]
        self.mark = len(block)
        return where

    def __exit__(self, exc_type, exc, tb) -> bool:
        tik = self.tik
        if self.at is None:            # a nested call
            tik._depth -= 1
            return False
        try:
            self.at.__exit__(exc_type, exc, tb)
            if exc is None and len(self.block) > self.mark:
                tik._call_starts.add(id(self.block[self.mark]))
            if isinstance(exc, PtoError):
                _drop_run_time_checks(tik, self.block, self.mark)
                raise convert(exc, api=self.api, where=self.where, exit_on_error=tik._exit_on_error) from None
        finally:
            tik._depth, tik._where = 0, None
        return False


#: The ops a TIK call records for its arguments' run-time checks before it may still refuse the call at trace time
#: (`TikBase._int_arg`'s ``pto.assert_in_range`` of a Scalar argument): a refused call takes them out again.
RUN_TIME_CHECK_OPS = frozenset({"assert_in_range", "assert_multiple"})


def _drop_run_time_checks(tik, block, mark: int) -> None:
    """A TIK call refused while it is traced leaves the kernel as it was (pto_api.md "A refused op changes nothing"):
    when everything it recorded into ``block`` from index ``mark`` on is a run-time argument check
    (`RUN_TIME_CHECK_OPS`, no footprint), those checks are removed with their entries in auto-sync's open loop logs.
    Otherwise a caught refusal left e.g. the range check of a Scalar ``nburst`` behind, which stopped the later, legal
    kernel at the refused line when the Scalar held another value there. Lowerings that record more before their
    last refusal restore their state themselves (`CubeBase._refusal_records_nothing`)."""
    builder = tik._builder
    n = len(block) - mark
    if n <= 0 or builder._blocks[-1] is not block:
        return
    added = block[mark:]
    if not all(type(st) is P.OpStmt and st.call.spec.name in RUN_TIME_CHECK_OPS for st in added):
        return
    del block[mark:]
    for _, log in tik._sync._loops:
        if len(log) >= n and all(not accesses for _, accesses in log[-n:]):
            del log[-n:]


class TikBase:
    """State and helpers shared by all API families (mixed into `tbe_compat.tik.Tik`)."""

    _exit_on_error = True
    #: per-kernel state set by ``set_printf_params`` / ``set_atomic_add`` for the cube (class defaults: a
    #: missing attribute would go through ``Tik.__getattr__``'s error path at every build)
    _printf_params = None
    _cube_atomic = None

    def _dropped_result(self, api: str, where):
        """What a call dropped in code that never runs returns (see `tik_api`): None, except for the
        block APIs (`ControlAPI`), which must still work in a ``with`` statement."""
        return None

    # ------------------------------------------------------------------ provenance & errors
    def _api(self, api: str) -> "_ApiCall":
        """``with self._api("tik.x") as where:`` -- one TIK API call (see `_ApiCall`)."""
        return _ApiCall(self, api)

    def _may_not_run(self) -> bool:
        """True inside a scope whose body may not execute (run-time if/elif/else branch, a
        for_range not known to iterate): static overflow errors there become run-time checks."""
        return any(s.conditional for s in self._scopes)

    def _never_runs(self) -> bool:
        """True inside code that never runs (a statically false ``if_scope``, an empty constant ``for_range``)."""
        return any(s.dead for s in self._scopes)

    def _error(self, message: str, *, api: Optional[str] = None, operand: Optional[str] = None, value=None,
               limit=None, hint: Optional[str] = None, cls: type = IllegalOperand) -> PtoError:
        """A facade error at the current TIK call (raise it); outside one (a helper a script calls
        directly), at the user's line that called it."""
        where = self._where
        if where is None:          # raised outside a TIK call's context (a view method): the user's line
            where = api_site(api or "tik")
        return tik_error(message, api=api or (where.call if where else "tik"), operand=operand, value=value,
                         limit=limit, hint=hint, where=where, cls=cls, exit_on_error=self._exit_on_error)

    # ------------------------------------------------------------------ arguments
    def _operand(self, t, name: str, *, spaces: Optional[tuple] = None, dtypes: Optional[tuple] = None) -> Operand:
        """Resolve tensor argument ``t`` (checks kind, scope and dtype)."""
        if not isinstance(t, Tensor):
            raise self._error(f"{name} must be a tik Tensor, got {type(t).__name__} {t!r}", operand=name,
                              value=repr(t), hint="pass a tensor created by tik_instance.Tensor(...) or a view of it")
        if t.tik is not self:
            raise self._error(f"{name} belongs to another Tik instance", operand=name, value=t.name,
                              hint="create all tensors of a kernel with the same tik.Tik()")
        if spaces is not None and t.space not in spaces:
            where = " or ".join(SPACE_TIK_NAMES[s] for s in spaces)
            raise self._error(f"{name} must be in {where}, got tensor {t.name!r} in {SPACE_TIK_NAMES[t.space]}",
                              operand=name, value=t.scope, limit=", ".join(spaces),
                              hint=f"pass a tensor declared in {where} (copy the data there first, e.g. with "
                                   f"data_move)")
        if dtypes is not None and t.dtype not in dtypes:
            raise self._error(f"{name} dtype {t.dtype} is not supported here", operand=name, value=t.dtype,
                              limit="one of " + ", ".join(dtypes), hint=dtype_hint(name, dtypes))
        self._check_alive(t, name)
        return Operand(self, t, name)

    def _bool_arg(self, v, name: str, *, hint: Optional[str] = None) -> bool:
        """A bool-typed option (``relu``, ``if_transpose``, ``cal_index`` ...) as a Python bool: True/False,
        ``np.True_``/``np.False_`` or a 0-d bool array, honoured as its value (`static_bool`); anything else
        (an int, a Scalar or Expr, a tensor, a string) is refused naming the argument, at the user's line."""
        b = static_bool(v)
        if b is not None:
            return b
        if isinstance(v, Expr):
            fix = (f"{name} is fixed when the instruction is built, so it cannot be a run-time Scalar/Expr: pass "
                   f"True or False (to choose at run time, call the API in both branches of an if_scope)")
        elif isinstance(v, Tensor):
            fix = f"{name} is an option, not an operand: pass True or False"
        else:
            fix = hint or f"pass {name}=True or {name}=False"
        raise self._error(f"{name} must be a bool, got {type(v).__name__} {v!r}", operand=name, value=repr(v),
                          limit="True or False", hint=fix)

    def _int_arg(self, v, name: str, lo: Optional[int] = None, hi: Optional[int] = None, *,
                 hint: Optional[str] = None, run_time_api: Optional[str] = None):
        """An integer argument: a Python int (range-checked) or an integer IR expression.

        A Python bool counts as the int it is (``True`` is 1): TIK checks integer arguments with
        ``isinstance(v, int)`` and ``check_integer_in_range``, which accept bools, so e.g.
        ``mmad(..., is_bias=k > 0)`` with a Python ``k`` builds on the real toolchain.
        ``run_time_api`` (``"tik.mmad"``): a TIK value is range-checked when the kernel runs too
        (``pto.assert_in_range``, reported as ``<name> of <api>`` at the call's line), so a Scalar
        outside ``[lo, hi]`` stops the run instead of running with a value the instruction cannot encode."""
        i = static_int(v)
        if i is not None and (not isinstance(v, float) or float(v).is_integer()):
            if (lo is not None and i < lo) or (hi is not None and i > hi):
                rng = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
                raise self._error(f"{name} = {i} is outside {rng}", operand=name, value=i, limit=rng,
                                  hint=hint or range_hint(name, lo, hi))
            return i
        if isinstance(v, Expr):
            t = v.ir.type
            if t.kind in ("s", "u") or t.name == "index":
                ir = v.ir
            elif integer_rooted(v.ir):      # int Scalar with float immediates: C conversion, as set_as does
                ir = P.cast(v.ir, INDEX)
            else:
                ir = None
            if ir is not None:
                if run_time_api is not None:
                    self._emit("assert_in_range", P.cast(ir, P.I64), lo if lo is not None else -2 ** 63,
                               hi if hi is not None else 2 ** 63 - 1, what=f"{name} of {run_time_api}",
                               hint=(hint or range_hint(name, lo, hi)) + " (the value the kernel computed when "
                                    "it ran; check the tiling data or the Scalar arithmetic that gives it)")
                return ir
            raise self._error(f"{name} must be an integer, got a {v.dtype} expression", operand=name,
                              value=repr(v), hint="convert it with .astype('int32')")
        raise self._error(f"{name} must be an int, Scalar or Expr, got {type(v).__name__} {v!r}", operand=name,
                          value=repr(v), hint=int_type_hint(v))

    def _scalar_arg(self, v, name: str):
        """A scalar value argument (number, Scalar, Expr) in IR form."""
        try:
            return ir_value(v, what=name)
        except IllegalOperand as e:
            raise self._error(e.message, operand=name, value=e.value, hint=e.hint) from None

    # ------------------------------------------------------------------ recording
    def _emit(self, op: str, *operands, footprint=(), **clauses) -> None:
        """Record ``pto.<op>(*operands, **clauses)`` after the auto-sync pairs its footprint needs."""
        spec = registry.get_op(op)
        call = registry.make_call(spec, operands, clauses, self._where)
        pipe = spec.pipe_of(call.operands, call.clauses)
        self._sync.op(pipe, footprint)
        self._builder.record(call)

    def _forget_freed(self, storages) -> None:
        """Record ``pto.mark_unwritten`` over the bytes of the freed on-chip ``storages`` (a lowering's scratch,
        `FREED_TENSORS_UNWRITTEN` user tensors), so the uninitialised-read check reports a later tensor placed
        there and read before it is written. Byte ranges that touch are merged into one op; tensors placed at a
        run-time address (DYNAMIC_TENSOR_RUNTIME_CHAIN) are skipped (their size is an upper bound). No
        auto-sync bookkeeping: the op touches no memory."""
        if any(sc.dead for sc in self._scopes):
            return
        runs: list = []
        for st in sorted((st for st in storages if st.space != "gm" and isinstance(st.addr, int)
                          and st.nbytes), key=lambda st: (st.space, st.addr)):
            last = runs[-1] if runs else None
            if last is not None and last[0] == st.space and last[2] >= st.addr:
                last[2] = max(last[2], st.addr + st.nbytes)
            else:
                runs.append([st.space, st, st.addr + st.nbytes])
        if not runs:
            return
        spec = registry.get_op("mark_unwritten")
        for _, st, end in runs:
            self._builder.record(registry.make_call(spec, (st.base_ptr(st.dtype), end - st.addr), {}, self._where))

    def _record_sync(self, op: str, *operands) -> None:
        """Record a sync op (no auto-sync bookkeeping)."""
        self._builder.record_constant(sync_spec(op), operands, self._where)

    def _require_support(self, api: str, dtype: str = "", also=None) -> None:
        """Raise `UnsupportedOp` unless the selected chip supports ``api`` (``"tik.vdiv"``) for ``dtype``
        (CANN's ``api_check_support``); re-checked with the chip frozen by BuildCCE. ``also``: the further
        per-dtype chip check the caller makes next (``dtype -> bool``, e.g. an ini row TIK's API table
        overstates), so a refusal's Fix lists only dtypes that pass both (`_supported_dtypes_hint`)."""
        if not platform.api_check_support(api, dtype):
            soc = platform.current_soc()
            # a dtype refusal of an API the chip lacks altogether says so: "with float16" alone reads as
            # "another dtype would do" (data_move_pad on Ascend910A)
            absent = bool(dtype) and not platform.api_check_support(api, "")
            raise self._error(f"{api}{f' with {dtype}' if dtype else ''} is not supported on "
                              f"{soc.soc_version} {soc.core_type}"
                              + (f": the chip has no {api} for any dtype" if absent else ""),
                              operand="dtype" if dtype else None,
                              value=dtype or None, cls=UnsupportedOp,
                              hint="select a chip that supports it (set_current_compile_soc_info) or use another API"
                              if absent or not dtype else _supported_dtypes_hint(api, dtype, also))
        self._support_checks.append((api, dtype, self._where))


#: Plain dtype names a dtype refusal lists the chip's supported ones from (mixed codes such as "s8s8s32" are not)
_PLAIN_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
                 "float32")


def _supported_dtypes_hint(api: str, dtype: str, also=None) -> str:
    """The Fix of a dtype refusal: the plain dtypes the selected chip has ``api`` for, when ``dtype`` is one
    (``also``: a further check each listed dtype must pass, see `TikBase._require_support`)."""
    has = [d for d in _PLAIN_DTYPES if platform.api_check_support(api, d) and (also is None or also(d))] \
        if dtype in _PLAIN_DTYPES else []
    how = _DTYPE_FIX_HOW.get(api, lambda has: "convert with vconv/vec_conv")(has)
    use = (f"the chip has {api} for {', '.join(has)}: use {'it' if len(has) == 1 else 'one of them'} "
           f"({how})" if has else
           "use a dtype the chip supports (convert with vconv/vec_conv; api_check_support tells)")
    return use + ", select a chip that supports it (set_current_compile_soc_info) or use another API"


def _atomic_modes_fix(has: list) -> str:
    from ..data import ATOMIC_MODES
    modes = ", ".join(f"set_atomic_add({m}) for {d}" for m, d in sorted(ATOMIC_MODES.items()) if d in has)
    return f"{modes}; convert the data to that dtype with vconv/vec_conv before the move"


#: How a dtype refusal's Fix says to get another dtype, where converting the operands alone is not the way
_DTYPE_FIX_HOW = {"tik.set_atomic_add": _atomic_modes_fix}


__all__ = ["tik_api", "TikBase", "Operand", "has_key", "tik_scalar", "tik_tensor"]


# CANN module paths under `tik.api` (re-exports; see their docstrings)
from . import tik_scalar, tik_tensor  # noqa: E402
