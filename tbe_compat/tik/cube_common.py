"""Helpers shared by the cube API family (`cube_moves`, `cube_mm`, `cube_fixpipe`).

* TIK immediates (`imm`), dtype codes for the capability tables (`codes`), L0C
  alignment (`l0c_align`),
* scratch tensors that a lowering needs for the duration of one TIK call
  (`CubeBase._scratch`): placed like TIK's own internal tensors (TIK's ``matmul``,
  ``conv2d`` and ``fixpipe`` allocate L0A/L0B/UB tensors internally) and freed when the
  call returns, so user tensors placed later may reuse the bytes (auto-sync orders the
  accesses),
* the free space of a buffer (`CubeBase._free_bytes`), which sizes tiles.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Optional

from pto_core import program as P
from pto_core.errors import IllegalOperand, UnsupportedOp

from .. import platform
from .api import Operand, TikBase
from .autosync import _copy as _copy_pending
from .placement import buffer_capacity
from .tensor import _add
from .scalar import Expr, static_int

#: canonical space -> TIK scope string (for internal tensors)
SPACE_SCOPES = {"ub": "local.UB", "l1": "local.L1", "l0a": "local.L0A", "l0b": "local.L0B", "l0c": "local.L0C",
                "bt": "local.BT", "fb": "local.FB0"}
FRACTAL = 512


def codes(*dts) -> str:
    """CANN dtype-code string of operand dtypes (``"f16f16f32"``) for ``api_check_support``."""
    return "".join(d.name for d in dts)


def l0c_align(dt) -> int:
    """L0C operand alignment: one 16 x 16 fractal (1 KiB for 32-bit, 512 B for 16-bit types)."""
    return 256 * max(1, dt.bits // 8)


def ceil_to(a: int, b: int) -> int:
    return -(-a // b) * b


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def refusal_records_nothing(fn):
    """Decorator (under ``@tik_api``) of a TIK API whose checks record run-time checks before its last
    trace-time refusal: see `CubeBase._refusal_records_nothing`."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        with self._refusal_records_nothing():
            return fn(self, *args, **kwargs)
    return wrapper


class CubeBase(TikBase):
    """Helpers of the cube family (mixed into `tbe_compat.tik.Tik` through `cube.CubeAPI`)."""

    def _cube_imm(self, v, name: str, lo: Optional[int] = None, hi: Optional[int] = None, *, hint: Optional[str] = None,
                  tik_takes_values: Optional[str] = None):
        """A Python int (range-checked) that the lowering needs when it traces the call.

        A TIK value (Scalar / Expr) is refused. ``tik_takes_values`` says why the simulator needs the int
        where CANN TIK itself accepts a Scalar or Expr for the argument (it goes to a register when the
        instruction runs): the refusal is then `UnsupportedOp` naming that reason (a limit of the simulator,
        not an illegal kernel); without it TIK wants an immediate too and the refusal is `IllegalOperand`."""
        if isinstance(v, (Expr, P.Expr)) and static_int(v) is None:
            if tik_takes_values:
                raise self._error(f"{name} as a TIK value (Scalar or Expr) is not supported: CANN TIK accepts one "
                                  f"(the value goes to a register when the instruction runs), but the simulator "
                                  f"{tik_takes_values}", operand=name, value=repr(v), cls=UnsupportedOp,
                                  hint=f"pass {name} as a Python int (branch on the value in Python, or with "
                                       f"if_scope over the few values it takes, each call with an int)")
            raise self._error(f"{name} must be an immediate Python int, got a TIK expression", operand=name,
                              value=repr(v), hint=hint or "compute it in Python (it fixes the instruction sequence)")
        i = static_int(v)
        if i is None or (isinstance(v, float) and not float(v).is_integer()):    # a bool is an int (TIK)
            raise self._error(f"{name} must be a Python int, got {type(v).__name__} {v!r}", operand=name,
                              value=repr(v), hint=hint or f"pass {name} as a Python int (an immediate of the "
                                                          f"instruction)")
        return self._int_arg(i, name, lo, hi, hint=hint)

    def _cube_ints(self, values, names, lo, hi):
        return tuple(self._cube_imm(v, n, lo, hi) for v, n in zip(values, names))

    def _cube_int_list(self, v, name: str, n: int, lo: int, hi: int) -> tuple:
        if not isinstance(v, (list, tuple)) or len(v) != n:
            raise self._error(f"{name} must be a list of {n} ints, got {v!r}", operand=name, value=repr(v),
                              limit=f"{n} ints", hint=f"pass {name} as a list of {n} Python ints")
        return tuple(self._cube_imm(x, f"{name}[{i}]", lo, hi) for i, x in enumerate(v))

    # ------------------------------------------------------------------ scratch tensors
    @contextlib.contextmanager
    def _cube_scratch(self):
        """``with self._cube_scratch() as alloc: t = alloc(dtype, count, space, name)``; freed on exit."""
        made = []

        def alloc(dtype: str, count: int, space: str, name: str):
            t = self.Tensor(dtype, (count,), scope=SPACE_SCOPES[space], name=name)
            made.append(t.storage)
            return t
        try:
            yield alloc
            self._forget_freed(made)         # the lowering's bytes are not the user's data
        finally:
            scope = self._scopes[-1].storages
            for st in made:
                if st in scope:
                    scope.remove(st)
            self._release(made)

    @contextlib.contextmanager
    def _refusal_records_nothing(self):
        """A call refused while it is traced leaves the kernel as it was (pto_api.md "A refused op changes
        nothing"): the run-time checks it recorded before the refusal (``pto.assert_in_range`` of a Scalar pad,
        the ``pto.unmodelled`` branch of a run-time channel_size, ...) are taken out again, and auto-sync's state
        is put back. They stayed in the trace (k419's caveat, review423): a caught refusal left e.g. the range
        check of a Scalar pad behind, which stopped the later, legal kernel at the refused line when the Scalar
        held another value there. Only for lowerings whose statements before the last refusal carry no
        footprint (checks, their ``if`` blocks) or whose data ops come after it: nothing is undone once an auto-sync
        pair was emitted."""
        block = self._builder._blocks[-1]
        sync = self._sync
        mark = (len(block), _copy_pending(sync.pend), sync._open_chain, len(sync._chains), sync.pairs,
                [len(log) for _, log in sync._loops])
        try:
            yield
        except BaseException:
            n, pend, chain, chains, pairs, logs = mark
            if sync.pairs == pairs and self._builder._blocks[-1] is block and len(sync._loops) == len(logs):
                del block[n:]
                sync.pend, sync._open_chain = pend, chain
                del sync._chains[chains:]
                for (_, log), k in zip(sync._loops, logs):
                    del log[k:]
            raise

    @contextlib.contextmanager
    def _cube_if(self, cond):
        """A run-time ``if`` inside a lowering (auto-sync sees it like an ``if_scope``)."""
        self._sync.begin_if()
        with self._builder.if_(cond):
            yield
            self._sync.end_branch()

    @contextlib.contextmanager
    def _cube_else(self):
        """The ``else`` of the `_if` block just closed."""
        self._sync.begin_elif(is_else=True)
        with self._builder.else_():
            yield
            self._sync.end_branch()

    def _cube_free_bytes(self, space: str, align: int = 512) -> int:
        """Largest free ``align``-aligned block of ``space`` now (bytes)."""
        cap = buffer_capacity(space)
        if cap <= 0:
            return 0
        a = self._placement.allocator(space, platform.current_soc().profile)
        best, pos = 0, 0
        for lo, size, _ in sorted(a.occupants()):
            start = ceil_to(pos, align)
            best = max(best, lo - start)
            pos = max(pos, lo + size)
        start = ceil_to(pos, align)
        return max(best, cap - start, 0)

    def _cube_need_static_tensor(self, op, what: str) -> int:
        """Static element offset of an operand (the cube macro APIs compute addresses at trace time)."""
        off = op.static_offset
        if off is None:
            raise self._error(f"{what} must start at a static element offset (a Python int index)", operand=op.name,
                              value=op.tensor.name, hint="index the tensor with Python ints for this API")
        return off


def bad(tik, message, operand, value=None, limit=None, hint=None, cls=IllegalOperand):
    return tik._error(message, operand=operand, value=value, limit=limit, hint=hint, cls=cls)


__all__ = ["CubeBase", "codes", "l0c_align", "ceil_to", "ceil_div", "SPACE_SCOPES", "FRACTAL"]


def at(tik, op, elems, name: str = None):
    """`Operand` of the element ``elems`` (int or IR) after operand ``op``'s start (same dtype)."""
    t = op.tensor
    view = t._view((1,), (1,), _add(t.offset, elems) if not (isinstance(elems, int) and elems == 0) else t.offset)
    return Operand(tik, view, name or op.name)
