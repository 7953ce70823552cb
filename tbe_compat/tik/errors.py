"""What a TIK script sees when something is wrong.

Real TIK reports a user error by printing the offending source line and then, with the
default ``err_msg_level=0``, raising ``SystemExit``; with ``err_msg_level=1`` it raises
the check's exception type (mostly ``RuntimeError``). Scripts and test suites written
for CANN therefore catch ``SystemExit``, ``RuntimeError`` or both.

Our choice (one rule, here): every error the facade reports -- at a TIK call while the
kernel is traced, in ``BuildCCE`` or while ``tikdb.start_debug`` runs the kernel -- is
the simulator's own `pto_core.errors` class (``IllegalOperand``, ``OutOfBounds``,
``CapacityExceeded``, ``HazardError`` ...) combined with ``RuntimeError`` and, for
``err_msg_level=0`` (the default), ``SystemExit``. So

* ``except SystemExit``, ``except RuntimeError``, ``except (SystemExit, RuntimeError)``
  and ``pytest.raises(SystemExit)`` behave as on CANN;
* ``except IllegalOperand`` / ``except PtoError`` / ``except ValueError`` (for
  operand errors) work too, as everywhere else in the simulator;
* left uncaught with ``err_msg_level=0``, Python prints only the message (plus the
  user-level call stack) and exits with status 1 -- TIK's user-level report; with
  ``err_msg_level=1`` the exception is not a ``SystemExit`` and Python prints the
  full traceback.

Messages always say ``file:line`` of the script, the TIK API (``tik.data_move``), the
argument, the rule broken and a fix.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import linecache
import os
import runpy
import sys
from typing import Optional

from pto_core.checks import races as _races
from pto_core.errors import IllegalOperand, Provenance, PtoError, site_provenance
from pto_core.ops import registry as _registry

#: Directory of the facade; frames below it (and below pto_core) are not "user code".
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_registry.add_internal_package(_PACKAGE_ROOT)

_classes: dict = {}
#: standard-library helpers that sit between a user's call and the facade (importlib: import_module)
_SKIP_FILES = tuple(os.path.abspath(m.__file__) for m in (contextlib, runpy, importlib))


#: (file name, number of internal package roots) -> whether that file's frames are internal
_INTERNAL_FILES: dict = {}


def _is_internal(filename: str) -> bool:
    key = (filename, len(_registry._INTERNAL))      # roots are only ever added
    hit = _INTERNAL_FILES.get(key)
    if hit is None:
        hit = _INTERNAL_FILES[key] = _registry.is_internal_file(filename) or filename in _SKIP_FILES
    return hit


def _user_site(f=None) -> Optional[tuple]:
    """``(file, line)`` of the innermost frame of the user's script, or None. ``f``: the frame to start the
    walk from (default: the caller's); a caller that knows the frames between it and ``f`` are the facade's
    own passes ``f`` so that Python does not build frame objects for them (`api_site`)."""
    f = _user_frame_from(sys._getframe(1) if f is None else f)
    return None if f is None else _frame_site(f, f.f_code.co_filename)


def _user_frame_from(f):
    """The innermost frame of the user's script from frame ``f`` outwards, or None."""
    files, roots = _INTERNAL_FILES, len(_registry._INTERNAL)
    while f is not None:
        fn = f.f_code.co_filename
        hit = files.get((fn, roots))          # `_is_internal`'s memo, read inline (every TIK call walks here)
        if hit is None:
            hit = _is_internal(fn)
        if not hit:
            return f
        f = f.f_back
    return None


def api_site_and_self(api: str, frame, loop_exprs=None) -> tuple:
    """``(api_site(api, frame), owner, params)``: also the object the user's frame is a method of -- the value its first
    parameter holds now (``self``), or None when the frame is not a method's (a module, a plain or nested
    function). tik-migrate --format python proves with it that ``self.x_gm`` at a call is the tensor a declaration
    ``self.x_gm = ...`` assigned (`tbe_compat.migrate_python.ATTR_RULE`). A strong reference: the usual CANN
    operator object is dropped once its method has built the kernel (``return Op(...).build()``), and a weak
    reference would be dead by the time the tool asks. Reading the parameter builds the frame's locals dict:
    methods only -- and frames with parameters once the kernel has handed out a loop variable: ``params`` is the
    ``(name, value)`` of each parameter of the user's frame whose value now IS one of ``loop_exprs`` (id -> the
    `Expr`s ``with for_range(...) as i`` returned; identity), a loop variable passed into a helper
    (`tbe_compat.migrate_python.LOOP_PARAMETER_RULE`)."""
    f = _user_frame_from(frame)
    if f is None:
        return site_provenance("<unknown>", 0, api), None, ()
    code = f.f_code
    owner = None
    params = ()
    nargs = code.co_argcount + code.co_kwonlyargcount
    if nargs:
        qual = getattr(code, "co_qualname", "")
        dot = qual.rfind(".")
        method = dot > 0 and not qual.endswith("<locals>", 0, dot)    # Class.method, not f.<locals>.g or a function
        if method or loop_exprs:
            loc = f.f_locals
            if method:
                owner = loc.get(code.co_varnames[0])
            if loop_exprs:
                params = tuple((n, loc[n]) for n in code.co_varnames[:nargs]
                               if n in loc and loop_exprs.get(id(loc[n])) is loc[n])
    site = _frame_site(f, code.co_filename)
    return site_provenance(site[0], site[1], api), owner, params


#: (id(code object), instruction offset) -> (code object, (file, line)) of user frames `_user_site` found:
#: a frame's line follows from its code and its current instruction, and computing it walks the code's line
#: table from the start (a TIK call traced again at the same site -- a Python loop of TIK calls, a rebuilt
#: kernel -- reads it here). The code object is kept in the entry: its id is not reused while the entry lives.
_FRAME_SITES: dict = {}


def _frame_site(f, fn: str) -> tuple:
    """``(fn, f.f_lineno)`` of user frame ``f`` (whose file is ``fn``), memoised by code and instruction."""
    code = f.f_code
    key = (id(code), f.f_lasti)
    hit = _FRAME_SITES.get(key)
    if hit is not None and hit[0] is code and f.f_trace is None:
        return hit[1]
    site = (fn, f.f_lineno)
    if len(_FRAME_SITES) >= 65536:
        _FRAME_SITES.clear()
    _FRAME_SITES[key] = (code, site)
    return site


def user_frame() -> Optional[Provenance]:
    """``file:line`` of the innermost frame of the user's script (outside the simulator packages)."""
    site = _user_site()
    return None if site is None else Provenance(*site)


def api_site(api: str, frame=None) -> Provenance:
    """Provenance of a TIK API call: the user's ``file:line`` (``<unknown>:0`` if none) and ``api``.
    ``frame``: where the walk for the user's frame starts (default: the caller of `api_site`)."""
    site = _user_site(frame or sys._getframe(1)) or ("<unknown>", 0)
    return site_provenance(site[0], site[1], api)


def _user_stack(limit: int = 8) -> str:
    """The user's frames of the current call stack (innermost last), as a short report."""
    f = sys._getframe(1)
    frames = []
    while f is not None:
        fn = f.f_code.co_filename
        if not _is_internal(fn):
            frames.append((fn, f.f_lineno, f.f_code.co_name))
        f = f.f_back
    if not frames:
        return ""
    lines = ["TIK call stack (most recent call last):"]
    for fn, line, name in reversed(frames[:limit]):
        lines.append(f"  {fn}:{line} in {name}")
        src = linecache.getline(fn, line).strip()
        if src:
            lines.append(f"    {src}")
    return "\n".join(lines)


class _TikErrorMixin:
    """Common behaviour of the facade's exception classes (see module doc)."""

    user_stack: str = ""

    @property
    def code(self):  # SystemExit's exit code/message: Python prints it when uncaught
        text = str(self)            # the simulator class's message (AsmParseError's starts with source:line:column)
        return text + ("\n" + self.user_stack if self.user_stack else "")

    def __reduce__(self):
        """Pickled as (simulator base class, exit_on_error) + state: the class itself is built at run
        time, so pickle could not find it by name (a kernel run in a multiprocessing worker raises
        its error in the parent)."""
        return _rebuild_tik_error, (self._tik_base, self._tik_exit, self.args), dict(self.__dict__)


def _rebuild_tik_error(base: type, exit_on_error: bool, args: tuple):
    """Unpickling helper of `_TikErrorMixin`: an instance of ``tik_error_class(base, exit_on_error)``
    with ``args``; the attributes (message, op, where, ...) are restored from the pickled state."""
    cls = tik_error_class(base, exit_on_error=exit_on_error)
    err = BaseException.__new__(cls)   # not cls.__new__: for a MemoryError base that is MemoryError.__new__,
    #                                    which refuses the class (its instances are built by BaseException's)
    err.args = args
    return err


def tik_error_class(base: type, *, exit_on_error: bool = True) -> type:
    """The facade's variant of the `PtoError` subclass ``base`` (cached)."""
    key = (base, exit_on_error)
    cls = _classes.get(key)
    if cls is None:
        bases = (_TikErrorMixin, base) + (() if issubclass(base, RuntimeError) else (RuntimeError,)) + \
            ((SystemExit,) if exit_on_error else ())
        cls = type("Tik" + base.__name__, bases, {"__module__": __name__, "_tik_base": base,
                                                  "_tik_exit": exit_on_error})
        _classes[key] = cls
    return cls


def user_method(api: str):
    """Decorator of a public method of a TIK value (``Tensor.reshape``, ``Scalar.set_as``): a call with
    arguments the method does not take (an unknown keyword, too many values) is a TIK error naming the
    user's line and the method's parameters, as for `Tik` methods (`tik_api`), not a bare TypeError.
    A TypeError raised inside a correctly bound call propagates unchanged."""
    def deco(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            try:
                return fn(self, *args, **kwargs)
            except TypeError:
                try:
                    sig.bind(self, *args, **kwargs)
                except TypeError as bad:
                    shown = sig.replace(return_annotation=inspect.Signature.empty)
                    params = str(shown).replace("(self, ", "(", 1).replace("(self)", "()")
                    w = user_frame()
                    where = None if w is None else site_provenance(w.file, w.line, api)
                    raise tik_error(f"bad arguments: {bad}", api=api, where=where, hint=f"call it as {api}{params}",
                                    exit_on_error=exit_on_error_of(self)) from None
                raise
        return wrapper
    return deco


def exit_on_error_of(value=None) -> bool:
    """Whether a facade error about ``value`` (a Tensor, Scalar, ScalarArray element or expression) ends in
    SystemExit: the ``err_msg_level`` of its `Tik` (0: SystemExit; 1: RuntimeError-type errors, tik_api.md 3.1).
    An expression records no Tik (that would cost every operator): the Tik of the first Scalar or InputScalar
    register in it (`registry.owning_tik` of its builder, looked up only here, on the error path); else the instance
    being traced (`registry.tracing_kernel`); level 0 when none is known."""
    tik = getattr(value, "tik", None)
    if tik is None:
        tik = getattr(getattr(value, "array", None), "tik", None)
    if tik is None:
        tik = _owning_tik(getattr(value, "ir", None))
    if tik is None:
        from .registry import tracing_kernel
        tik = tracing_kernel()
    return getattr(tik, "_exit_on_error", True)


def _owning_tik(ir):
    """The `Tik` whose builder owns the first register or scalar argument of IR expression ``ir``, or None."""
    from pto_core.program import Expr as IrExpr, walk
    from .registry import owning_tik
    if not isinstance(ir, IrExpr):
        return None
    for node in walk(ir):
        owner = getattr(node, "owner", None)
        if owner is not None:
            return owning_tik(owner)
    return None


def is_tik_error(e: BaseException) -> bool:
    return isinstance(e, _TikErrorMixin)


#: ops the facade inserts to check run-time values (`pto_core.ops.assertions`); a failure is reported as
#: the TIK call's own error, without the ``pto.assert_... (lowered from tik....)`` prefix
CHECK_OPS_PREFIX = "pto.assert_"


@functools.lru_cache(maxsize=None)
def _api_params(api: str) -> frozenset:
    """Parameter names of the TIK API ``api`` (``"tik.data_move"``); empty when it is not a `Tik` method."""
    from .container import Tik
    fn = getattr(Tik, api.rpartition(".")[2], None)
    try:
        return frozenset(inspect.signature(fn).parameters) if callable(fn) else frozenset()
    except (TypeError, ValueError):
        return frozenset()


#: PTO clauses the facade fills from one TIK argument: a run-time error naming the clause names that argument
#: (``counter`` is TIK's ``mask`` with ``mask_mode="counter"``, `VectorBase._vec_mask`; on chips without
#: counter mode, Ascend310/910A, it is read as a normal-mode count 1..PAR).
PTO_CLAUSE_TIK_ARGUMENT = {"counter": "mask"}


def tik_operand_name(api: str, operand: Optional[str]) -> Optional[str]:
    """``operand`` of a PTO op lowered from ``api`` as the TIK user wrote it: ``%dst`` -> ``dst`` when the
    TIK call has a parameter of that name, a clause of `PTO_CLAUSE_TIK_ARGUMENT` -> the argument it came
    from; other PTO operand names are kept (they say which PTO operand)."""
    if operand and operand.startswith("%") and operand[1:] in _api_params(api):
        return operand[1:]
    arg = PTO_CLAUSE_TIK_ARGUMENT.get(operand or "")
    if arg is not None and arg in _api_params(api):
        return arg
    return operand


#: How a GM race report of a TIK kernel reads (`pto_core.checks.races.RaceWording`, registered below): the TIK
#: calls at the user's lines (``tik.data_move at k.py:12``), TIK argument names (``dst``, `tik_operand_name`), the
#: tensor's name and element range first, TIK dtype names (``float16``), ``tik.block_barrier``, and fixes in TIK
#: terms (a core's slice by its block index, ``set_atomic_add``, ``data_move_pad``). A race whose two accesses are
#: direct ``pto.*`` calls keeps the PTO wording. The GM padding-write and overread warnings of a TIK call
#: (`GmPaddingWriteWarning`, `GmOverreadWarning`) use it too: the call only, float16 elements first (bytes in
#: parentheses), and the fixes below; so do the ``gm-tail`` entries of ``tikdb.reports`` (the call, the tensor, the
#: elements dropped past its end).
TIK_RACE_WORDING = _races.RaceWording(
    call_prefix="tik.", region="tensor", barrier="tik.block_barrier", dtype_attr="tik_name", by_call=True,
    operand=lambda api, operand: tik_operand_name(api, operand),
    fixes={
        "write/write": "give each core its own elements of {region}: offset each core's slice by the block index "
                       "(the variable of for_range(0, n, block_num=n)), and end each slice's store at its end "
                       "(data_move_pad, or a shorter last burst, instead of a 32-byte-rounded data_move); if the "
                       "cores are to add into the same elements, store with set_atomic_add on; or order the two "
                       "stores with {barrier}",
        "read/write": "order the write before the read with {barrier} (every core calls it), or give each core "
                      "its own elements of {region} to write and read (offset by the block index of "
                      "for_range(0, n, block_num=n))",
        "atomic/plain": "make every core's store to these elements of {region} atomic too (set_atomic_add with the "
                        "same dtype before it, set_atomic_add(0) after), or keep plain data_move reads and stores "
                        "away from them until a {barrier}",
        "atomic/atomic": "accumulate into these elements of {region} with one atomic dtype on every core (the same "
                         "set_atomic_add mode, e.g. {dtype} for a {dtype} tensor), or put a {barrier} between the two "
                         "cores' accumulations",
    },
    padding_write_fix="check the destination offset and counts of {call} against the tensor's shape (data_move: "
                      "nburst and burst, where burst counts 32-byte blocks, so a store whose last block is partial "
                      "writes up to that block's end); end the store at the tensor's last element (data_move_pad on "
                      "chips that have it, or a shorter last burst)",
    overread_fix="read at most the tensor's elements: check the source offset and counts of {call} against the "
                 "tensor's shape (data_move: nburst and burst, where burst counts 32-byte blocks; a shorter last "
                 "burst, or data_move_pad on chips that have it)",
    # data_move_pad counts bytes (burst; the gaps on the GM side), not 32-byte blocks (tik_api.md section 7.2)
    call_fixes={
        ("padding_write", "tik.data_move_pad"):
            "check the destination offset and counts of {call} against the tensor's shape (data_move_pad: nburst "
            "bursts of burst bytes, dst_gap bytes apart in GM); end the last burst at the tensor's last element",
        ("overread", "tik.data_move_pad"):
            "read at most the tensor's elements: check the source offset and counts of {call} against the "
            "tensor's shape (data_move_pad: nburst bursts of burst bytes, src_gap bytes apart in GM)",
    })
_races.add_race_wording(TIK_RACE_WORDING)


def convert(e: PtoError, *, api: Optional[str] = None, where: Optional[Provenance] = None,
            exit_on_error: bool = True) -> PtoError:
    """``e`` as the facade's exception (same fields; ``api`` and ``where`` filled if missing)."""
    if is_tik_error(e):
        if where is not None:
            e.with_where(where)
        return e
    cls = tik_error_class(type(e), exit_on_error=exit_on_error)
    new = cls.__new__(cls)
    new.__dict__.update(e.__dict__)
    new.args = e.args
    if api is not None:
        if new.op is None:
            new.op = api
        elif new.op != api and not new.op.startswith("tik."):
            # a PTO-level check failed under a TIK call: name both (a facade-inserted run-time check,
            # pto.assert_*, is no instruction of the user's: its message already names the TIK call)
            if not new.op.startswith(CHECK_OPS_PREFIX):
                new.message = f"{new.op} (lowered from {api}): {new.message}"
            new.op = api
            new.operand = tik_operand_name(api, new.operand)
    if where is not None:
        new.with_where(where)
    new.user_stack = _user_stack()
    new.__cause__ = e.__cause__
    new.__traceback__ = e.__traceback__
    return new


def tik_error(message: str, *, api: str, operand: Optional[str] = None, value=None, limit=None,
              hint: Optional[str] = None, where: Optional[Provenance] = None, cls: type = IllegalOperand,
              exit_on_error: bool = True) -> PtoError:
    """A facade error: ``api`` is the TIK API (``"tik.data_move"``), ``operand`` the argument name."""
    err = tik_error_class(cls, exit_on_error=exit_on_error)(message, op=api, operand=operand, value=value,
                                                            limit=limit, hint=hint, where=where)
    err.user_stack = _user_stack()
    return err


__all__ = ["tik_error", "tik_error_class", "convert", "is_tik_error", "user_method", "exit_on_error_of"]
