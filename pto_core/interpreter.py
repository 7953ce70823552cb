"""Interpreter: compiles a `Program` once into Python source, then runs it on a `Machine`.

Compilation (`compile_program`) turns the kernel into one Python *generator function*:
registers and loop variables are locals, loops are Python ``for ... in range``, ifs are
Python ``if``, expressions are inline Python expressions, and each op is a call of its
pre-bound ``execute`` function. An op whose operands and clauses are all compile-time
values is bound to them once (``_O3(ctx)``), and a stretch of such ops becomes one loop
over the bound calls (``for __op in _R4: yield; __op(ctx)``): kernels are mostly such ops,
and Python's ``compile`` of the source is most of the compile time. An op with run-time
operands is bound to its static ones and called with the others (``_D5(ctx, a0 + v3 * 512)``,
`_dyn_op`): one short line per op. Integer results are
wrapped to the register width only where needed (``if not lo <= r <= hi: r = wrap(r)``
after an assignment; add/sub/mul/and/or/xor/shl are evaluated exactly and wrapped once,
since wrapping commutes with them). The generator yields before every op and every
scalar GM access: these are the points where cores may interleave.

Running (`Executable.run`) allocates GM for the kernel's tensor arguments (copies of the
caller's arrays), starts one generator per core (each with its own `ExecContext`, i.e.
its own on-chip buffers; GM shared), and drives them either core by core
(``order="sequential"``, the default, deterministic) or interleaved op by op in a seeded
random order (``order="random"``), so cross-core races show up as differing outputs.
At the end it calls ``machine.end_kernel()`` and returns the output tensors as numpy
arrays.

Errors raised inside an op (or by scalar code) get the statement's provenance and the
loop indices at the time (``e.add_context(core=.., i=.., j=..)``), recovered from the
generated code's line number and frame locals at no run-time cost.
"""
from __future__ import annotations

import functools
import random
import re
import struct
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from . import scalars as S
from .errors import (BarrierCountWarning, ConfigError, IllegalOperand, PtoError, UninitializedRead, UnsupportedOp,
                     at_site)
from .memory import Machine, MachineOptions, Ptr, _forget_written
from .ops.ctrl import SPR_READERS
from .ops.sync import LaunchWider
from .program import (Assign, BinOp, Bitcast, BlockIdx, BlockNum, Break, Cast, Cmp, Const, Continue, Expr, For,
                      GmArg, If, Load, LoopVar, OpStmt, Program, PtrAdd, PtrCast, PtrExpr, PtrFromInt, PtrReg, PtrToInt,
                      ReadSpr, Reg, Return, ScalarArg, Select, Store, UnOp, Undef, clause_exprs, located_op_error,
                      offset_error, static_addr, stmt_exprs, walk, walk_stmts)


# ============================================================================= run-time helpers

def _undef(why=None):
    if why is not None:         # an undefined value with a reason (`Undef.why`): an error where it is used
        return S.UndefinedInt("", message=why, hint="keep the index inside [0, length) where the value is used")
    raise UninitializedRead("a value that was never defined (ub.poison) is used", operand="value",
                            hint="assign the register on every path before reading it")


def _step(s):
    if s <= 0:
        raise IllegalOperand(f"loop step {s} must be positive", operand="step", value=s, limit="> 0",
                             hint="loops count up: give the loop a step >= 1")
    return s


def _off64(n: int) -> int:
    """A pointer offset computed at run time, exactly (not wrapped): refused outside int64 (`program.offset_error`,
    as an int offset is when the kernel is written), else itself."""
    if -0x8000000000000000 <= n <= 0x7FFFFFFFFFFFFFFF:
        return n
    raise offset_error(n, run_time=True)


def _signed_wrapper(bits: int):
    """The run-time wrap of an integer into the signed ``bits``-bit type (`_Codegen.wrap`): the value itself when it
    is an int in range, else ``((n + half) & mask) - half`` -- the same value as that expression for every operand
    (an `UndefinedInt` stays undefined, a bool becomes its int)."""
    half = 1 << (bits - 1)
    mask, lo, hi = (1 << bits) - 1, -half, half - 1

    def wrap(n):
        if n.__class__ is int and lo <= n <= hi:
            return n
        return ((n + half) & mask) - half
    wrap.__name__ = wrap.__qualname__ = f"_ws{bits}"
    return wrap


#: Signed integer widths whose wrap the generated code calls as ``_ws<bits>(x)`` (`_signed_wrapper`) instead of
#: spelling out ``(((x + 2**(bits-1)) & (2**bits - 1)) - 2**(bits-1))``: the same value, a fraction of the source
#: (64-bit wraps were ~40 % of a real kernel's generated source, which Python's ``compile`` parses). 64 bits only:
#: an in-range s64 value costs about what the written-out big-int arithmetic did, while a call for the narrow
#: widths (rarer in the source, all small-int arithmetic) made loops computing them ~1.5-2x slower (review267).
#: Empty: every wrap is written out.
SIGNED_WRAP_HELPERS = (64,)


def _sub_byte_offset(addr: int, n: int, bits: int) -> int:
    return addr + ((n * bits + 7) // 8 if n >= 0 else -((-n * bits + 7) // 8))


#: Token a core's generator yields when it reaches an all-core barrier op (`BARRIER_OPS`):
#: the scheduler resumes it only once every running core has reached a barrier (or ended).
_BARRIER = object()
#: Ops that are all-core barriers (``pto.sync_all``; TIK ``block_barrier``).
BARRIER_OPS = frozenset({"sync_all"})
#: Token a core's generator yields right after a `LAUNCH_OPS` op: the scheduler starts the cores up to
#: ``Machine.launch_width`` it has not started yet. A program with such an op starts on core 0 alone.
_LAUNCH = object()
LAUNCH_OPS = frozenset({"launch_blocks"})
_SCHEDULING_OPS = BARRIER_OPS | LAUNCH_OPS

_HELPERS = {
    "_BARRIER": _BARRIER, "_LAUNCH": _LAUNCH,
    "_undef": _undef, "_step": _step, "_tdiv": S.tdiv, "_trem": S.trem, "_lnot": S.logical_not, "_shl": S.shl, "_shr": S.shr,
    "_r32": S.round_f32, "_r16": S.round_f16, "_rbf": S.round_bf16, "_fdiv": S.fdiv, "_frem": S.frem,
    "_fadd": S.fadd, "_fsub": S.fsub, "_fmul": S.fmul,
    "_fwiden": S.widen_float, "_fsqrt": S.fsqrt, "_fmax": S.fmax, "_fmin": S.fmin, "_f2i": S.float_to_int, "_i2f": S.int_to_float,
    "_bitcast": S.bitcast, "_sbo": _sub_byte_offset, "_off64": _off64, "_INF": S.INF, "_NINF": -S.INF, "_NAN": S.NAN,
    **{f"_RI_{k}": v for k, v in S.ROUND_TO_INTEGRAL.items()},
    **{f"_ws{b}": _signed_wrapper(b) for b in (8, 16, 32, 64)},      # those SIGNED_WRAP_HELPERS may name
}
_ROUND = {"f32": "_r32", "f16": "_r16", "bf16": "_rbf"}
#: Operand types whose values the generated code uses as they are.
_PLAIN = frozenset({int, bool, str, type(None)})


#: Compiled ``pto.load_scalar`` / ``pto.store_scalar`` read and write the element's bytes with ``struct``
#: (``unpack_from`` / ``pack_into`` on the buffer, no numpy slice and view per element) for the dtypes in
#: `_STRUCT_FORMATS`. Loads give the same Python value as the numpy path (the formats decode the stored bits
#: exactly; a NaN still takes the bit path). A store whose value is not a plain ``int`` (integer dtypes) or
#: ``float`` (f32, f16), or that ``struct`` refuses (out of range, overflow to inf, a read-only or
#: non-contiguous buffer), takes the numpy path, so results, errors and warnings stay those of numpy
#: (``struct``'s f32 / f16 packing rounds to nearest-even like numpy's cast). False: always the numpy path.
SCALAR_STRUCT = True
_STRUCT_FORMATS = {"f32": "<f", "f16": "<e", "s8": "<b", "u8": "<B", "s16": "<h", "u16": "<H", "s32": "<i",
                   "u32": "<I", "s64": "<q", "u64": "<Q", "bool": "<?"}
_STRUCT_ERRORS = (struct.error, OverflowError, TypeError, ValueError, BufferError)


def _struct_of(dt):
    """The ``struct.Struct`` of ``dt``'s element bytes (`SCALAR_STRUCT`), or None: the numpy path."""
    fmt = _STRUCT_FORMATS.get(dt.name) if SCALAR_STRUCT else None
    if fmt is None or struct.calcsize(fmt) != dt.nbytes(1) or np.dtype(dt.storage).itemsize != dt.nbytes(1):
        return None
    return struct.Struct(fmt)


def _make_load(space, dt, where):
    nb, sto = dt.nbytes(1), dt.storage
    conv = {"f": float, "b": bool}.get(dt.kind, int)
    nan_exact = dt.kind == "f" and dt.name in ("f32", "f16", "bf16")
    ust = np.dtype(f"u{nb}")
    st = _struct_of(dt)

    def element(buf, off):
        v = buf.data[off:off + nb].view(sto)[0]
        if nan_exact and v != v:                                    # NAN_BITS_KEPT (scalars.py): sign and payload
            return S.bits_float(int(buf.data[off:off + nb].view(ust)[0]), dt)
        return conv(v)

    if st is None:
        def load_scalar(ctx, addr):
            ctx.begin_op("pto.load_scalar", "S", where)
            buf, off = ctx._locate_at(space, 0, addr, nb, "src")      # ctx.read(Ptr(space, dt, addr), nb), inlined
            ctx._on_read(buf, off, off + nb, "src")
            return element(buf, off)
        return load_scalar
    unpack = st.unpack_from

    def load_scalar_struct(ctx, addr):
        ctx.begin_op("pto.load_scalar", "S", where)
        buf, off = ctx._locate_at(space, 0, addr, nb, "src")          # ctx.read(Ptr(space, dt, addr), nb), inlined
        ctx._on_read(buf, off, off + nb, "src")
        try:
            v, = unpack(buf.data, off)
        except _STRUCT_ERRORS:
            return element(buf, off)
        if v != v:                                                    # a NaN: its bits (NAN_BITS_KEPT)
            return element(buf, off)
        return v
    return load_scalar_struct


def _make_store(space, dt, where):
    nb, sto = dt.nbytes(1), dt.storage
    nan_exact = dt.kind == "f" and dt.name in ("f32", "f16", "bf16")
    ust = np.dtype(f"u{nb}")
    st = _struct_of(dt) if dt.kind in "su" or dt.name in ("f32", "f16") else None
    pack = st.pack_into if st is not None else None
    plain = int if dt.kind in "su" else float

    def store_scalar(ctx, addr, value):
        ctx.begin_op("pto.store_scalar", "S", where)
        buf, off = ctx._locate_at(space, 0, addr, nb, "dst")      # ctx.write(Ptr(space, dt, addr), nb), inlined
        ctx._on_write(buf, off, off + nb, "dst")
        if value.__class__ is plain and pack is not None and value == value:
            try:
                pack(buf.data, off, value)
                return
            except _STRUCT_ERRORS:
                pass                                                # the numpy path decides (SCALAR_STRUCT)
        if value.__class__ is S.UndefinedInt:
            # INT_DIV_BY_ZERO_UNDEFINED: the element now holds an undefined value -- its bytes count as
            # unwritten, so a later read of them is an uninitialised read (reported as such)
            buf.flags_for_write()[off:off + nb] = False
            _forget_written(buf, off, off + nb)
            return
        if nan_exact and value != value:                            # NAN_BITS_KEPT (scalars.py): sign and payload
            buf.data[off:off + nb].view(ust)[0] = S.float_bits(value, dt)
        else:
            buf.data[off:off + nb].view(sto)[0] = value
    return store_scalar


def _make_spr_read(spr: str, index: int, where):
    """``read(ctx)``: word ``index`` of this core's special register ``spr`` (`ReadSpr`) as a Python int;
    a register no op has written is an uninitialised read (reported per ``MachineOptions.uninitialized``;
    the value is then 0). Registers in ``ops.ctrl.SPR_READERS`` are derived from the core's control state."""
    derived = SPR_READERS.get(spr)
    if derived is not None:
        return derived

    def read_spr(ctx):
        value = ctx.spr.get(spr)
        if value is None:
            ctx.begin_op("pto.get_spr", "S", where)
            if ctx.machine.options.uninitialized != "off":
                ctx._report_uninitialized(f"reads special register {spr}, which no op has written (run the "
                                          f"op that sets it first)", "spr", spr)
            return 0
        return int(value[index] if isinstance(value, tuple) else value)
    return read_spr


def _bound_op(name: str, pipe, where, execute: Callable, args: tuple, clauses: dict,
              bind: Optional[Callable] = None) -> Callable:
    """``op(ctx)``: one op whose operands and clauses are all known at compile time, bound to them
    (``ctx.begin_op`` + ``execute``), so the generated kernel spends one short call on it.
    ``pipe`` is the pipe name or the spec's ``pipe(operands, clauses)`` function; ``bind`` the spec's
    hook (`OpSpec.bind`) that may specialise ``execute`` to ``args`` and ``clauses``.

    Each form is made by its own small factory, so a compile allocates only the closure cells the
    chosen form uses (a kernel's ops are bound at every compile: fewer objects for the collector)."""
    run = bind(args, clauses) if bind is not None and not callable(pipe) else None
    if run is not None:
        whole = getattr(run, "whole_op", None)       # the hook brackets the op itself (`OpSpec.bind`)
        if whole is not None:
            return whole(name, where)
        return _op_bound_run(name, pipe, where, run)
    if callable(pipe):
        return _op_pipe_fn(name, pipe, where, execute, args, clauses)
    if clauses:
        return _op_clauses(name, pipe, where, execute, args, clauses)
    return _op_plain(name, pipe, where, execute, args)


def _op_bound_run(name, pipe, where, run):
    def op(ctx):
        ctx.begin_op(name, pipe, where)
        run(ctx)
    return op


def _op_pipe_fn(name, pipe, where, execute, args, clauses):
    def op(ctx):
        ctx.begin_op(name, pipe(args, clauses), where)
        execute(ctx, *args, **clauses)
    return op


def _op_clauses(name, pipe, where, execute, args, clauses):
    def op(ctx):
        ctx.begin_op(name, pipe, where)
        execute(ctx, *args, **clauses)
    return op


def _op_plain(name, pipe, where, execute, args):
    def op(ctx):
        ctx.begin_op(name, pipe, where)
        execute(ctx, *args)
    return op


def _holes_op(name: str, pipe, where, run: Callable, convs: tuple) -> Callable:
    """``op(ctx, *values)`` of `_dyn_op` for a ``run(ctx, *operands)`` an `OpSpec.bind_holes` hook made:
    ``convs`` makes each operand of its value (None: the value)."""
    if len(convs) == 2 and None not in convs:          # the common case: two run-time pointers
        c0, c1 = convs

        def op(ctx, v0, v1):
            ctx.begin_op(name, pipe, where)
            run(ctx, c0(v0), c1(v1))
        return op

    if convs == (None,):                                # one run-time value used as is (a scalar)
        def op(ctx, v):
            ctx.begin_op(name, pipe, where)
            run(ctx, v)
        return op

    if all(c is None for c in convs):                  # run-time scalars used as they are
        def op(ctx, *values):
            ctx.begin_op(name, pipe, where)
            run(ctx, *values)
        return op

    def op(ctx, *values):
        ctx.begin_op(name, pipe, where)
        run(ctx, *[v if c is None else c(v) for c, v in zip(convs, values)])
    return op


def _dyn_keys_op(name: str, pipe, where, run: Callable, convs: tuple) -> Callable:
    """``op(ctx, *values)`` of `_dyn_op` for a ``run(ctx, *operands, *clause_values)`` an `OpSpec.bind_dyn`
    hook made: ``convs`` makes each run-time operand of its value (None: the value); the clause values follow
    as they are."""
    nh = len(convs)
    if nh == 1 and convs[0] is not None:               # the common case: one run-time pointer
        c0 = convs[0]

        def op(ctx, v, *clause_values):
            ctx.begin_op(name, pipe, where)
            run(ctx, c0(v), *clause_values)
        return op

    if all(c is None for c in convs):                  # no run-time operand, or scalars used as they are
        def op(ctx, *values):
            ctx.begin_op(name, pipe, where)
            run(ctx, *values)
        return op

    def op(ctx, *values):
        ctx.begin_op(name, pipe, where)
        run(ctx, *[v if c is None else c(v) for c, v in zip(convs, values[:nh])], *values[nh:])
    return op


def _dyn_op(name: str, pipe, where, execute: Callable, template: tuple, holes: tuple, clauses: dict,
            dyn_keys: tuple, bind_hole: Optional[Callable] = None,
            bind_holes: Optional[Callable] = None, bind_dyn: Optional[Callable] = None) -> Callable:
    """``op(ctx, *values)``: one op whose operands or clauses are partly computed at run time. ``values``
    are, in order, the operands at ``holes`` (``(index, conv)``: the operand is ``conv(value)``, or the
    value when ``conv`` is None; the other operands are ``template``'s) and then the clauses ``dyn_keys``
    (the others are ``clauses``). ``ctx.begin_op`` + ``execute``, like `_bound_op`. ``bind_hole``: the
    spec's hook (`OpSpec.bind_hole`) that may specialise ``execute`` when one operand is computed at run time;
    ``bind_holes`` (`OpSpec.bind_holes`), tried first, the same for one or more; ``bind_dyn``
    (`OpSpec.bind_dyn`) the same when clauses are computed at run time."""
    nh = len(holes)
    if bind_dyn is not None and not callable(pipe) and dyn_keys:
        run = bind_dyn(template, tuple(i for i, _ in holes), clauses, dyn_keys)
        if run is not None:
            return _dyn_keys_op(name, pipe, where, run, tuple(conv for _, conv in holes))
    if bind_holes is not None and not callable(pipe) and not dyn_keys:
        run = bind_holes(template, tuple(i for i, _ in holes), clauses)
        if run is not None:
            return _holes_op(name, pipe, where, run, tuple(conv for _, conv in holes))
    if not callable(pipe) and not dyn_keys and nh == 1:          # the common case: one run-time operand
        (i, conv), = holes
        run = bind_hole(template, i, clauses) if bind_hole is not None else None
        if run is not None:
            if conv is None:
                def op(ctx, v):
                    ctx.begin_op(name, pipe, where)
                    run(ctx, v)
            else:
                def op(ctx, v):
                    ctx.begin_op(name, pipe, where)
                    run(ctx, conv(v))
            return op
        pre, post = template[:i], template[i + 1:]
        if conv is None:
            def op(ctx, v):
                ctx.begin_op(name, pipe, where)
                execute(ctx, *pre, v, *post, **clauses)
        else:
            def op(ctx, v):
                ctx.begin_op(name, pipe, where)
                execute(ctx, *pre, conv(v), *post, **clauses)
        return op

    def op(ctx, *values):
        args = list(template)
        for (i, conv), v in zip(holes, values):
            args[i] = v if conv is None else conv(v)
        if callable(pipe):
            c = dict(clauses)
            for k, v in zip(dyn_keys, values[nh:]):
                c[k] = v
            a = tuple(args)
            ctx.begin_op(name, pipe(a, c), where)
            execute(ctx, *a, **c)
            return
        ctx.begin_op(name, pipe, where)
        if dyn_keys:
            execute(ctx, *args, **dict(zip(dyn_keys, values[nh:])), **clauses)
        else:
            execute(ctx, *args, **clauses)
    return op


# ============================================================================= code generation


@dataclass(frozen=True)
class Probe:
    """An observer call compiled into a kernel next to one statement (tools: comparisons, tracing).

    ``fn(ctx, values, loops)`` runs ``when="before"`` the statement (for an op: right before
    it executes, after the scheduling point) or ``"after"`` it (for an op: right after it
    executed; for a loop or if: after the whole statement). ``values`` is the tuple of
    ``exprs`` evaluated at that point (scalar expressions: their value; pointer expressions:
    their byte address), ``loops`` the ``((name, value), ...)`` of the enclosing loops,
    outermost first. A probe must not change machine state; it reads memory with
    `Machine.read`, which records no access. Probes cost nothing when absent.
    """

    stmt: object
    fn: Callable
    exprs: tuple = ()
    when: str = "before"

    def __post_init__(self):
        if self.when not in ("before", "after"):
            raise ConfigError(f"probe when={self.when!r} is not 'before' or 'after'", operand="when",
                              value=self.when, limit="'before' or 'after'",
                              hint="pass when=\"before\" or when=\"after\"")


def _parent_counts(exprs: list) -> tuple:
    """``({id(inner node): number of parents}, whether one has several)`` over the expressions' DAG
    (each node's children entered once; the branches of a `Select` are not entered; leaves, which
    `hoist_shared` never binds, are not counted)."""
    counts: dict = {}                   # inner nodes only: a leaf reached again is never hoisted
    stack = list(exprs)
    shared = False
    while stack:
        x = stack.pop()
        k = id(x)
        c = counts.get(k)
        if c is not None:
            counts[k] = c + 1
            shared = True
            continue
        kids = (x.c,) if type(x) is Select else x.children()
        if kids:
            counts[k] = 1
            stack.extend(kids)
    return counts, shared


#: The pointer expression classes (`static_operands` tests an operand's exact type first).
_PTR_TYPES = frozenset({PtrFromInt, PtrAdd, PtrCast, PtrReg, GmArg})
#: The statement types after which `_Codegen.block` emits nothing more of a block.
_TERMINATOR_TYPES = frozenset({Break, Continue, Return})


class _Codegen:
    """Emits the kernel generator function's source for one program."""

    def __init__(self, prog: Program, probes: tuple = ()):
        self.prog = prog
        self.probes: dict = {}           # (id(stmt), when) -> [Probe]
        for pr in probes:
            self.probes.setdefault((id(pr.stmt), pr.when), []).append(pr)
        self.lines: list = []
        self.line_info: dict = {}       # line number (1-based) -> (stmt, active loop vars)
        self.ns: dict = dict(_HELPERS)
        self.ns["Ptr"] = Ptr
        self.names: dict = {}            # Reg / LoopVar / arg -> Python identifier
        self.py_names: dict = {}         # Python identifier -> IR object
        self.loops: list = []
        self.loop_bounds: dict = {}      # LoopVar -> (lo, hi): every value the loop gives it
        self.nconst = 0
        self.ptr_factories: dict = {}
        self.ptrs: dict = {}             # (space, dtype name, byte address) -> Ptr (immutable: shared)
        self.static_ptrs: dict = {}      # id(pointer expression) -> (it, its `static_ptr`)
        self.bounds: dict = {}           # id(expr) -> (expr, raw_bounds(expr)): nested add/mul ask again
        self.shared: dict = {}           # id(expr) -> (expr, local): shared nodes of the statement being emitted
        self.nshared = 0
        self._int_div = None             # has_int_div, computed on first need

    def has_int_div(self) -> bool:
        """Whether the program divides integers anywhere: only then can a register hold an undefined
        quotient (`scalars.UndefinedInt`, INT_DIV_BY_ZERO_UNDEFINED), so only then does an assignment's
        range test need to let one through."""
        if self._int_div is None:
            self._int_div = any(isinstance(x, BinOp) and x.op in ("div", "rem") and S.is_int(x.type)
                                for st in walk_stmts(self.prog.body) for e in stmt_exprs(st)
                                if isinstance(e, Expr) for x in walk(e))
        return self._int_div

    # -- naming
    def _ident(self, obj, prefix: str) -> str:
        name = self.names.get(obj)
        if name is None:
            base = obj.name if obj.name and str(obj.name).isidentifier() else ""
            name = f"{prefix}{len(self.names)}" + (f"_{base}" if base else "")
            self.names[obj] = name
            self.py_names[name] = obj
        return name

    def const(self, value, hint: str = "k") -> str:
        name = f"_{hint}{self.nconst}"
        self.nconst += 1
        self.ns[name] = value
        return name

    def ptr_factory(self, dt, space) -> str:
        key = (dt.name, space)
        name = self.ptr_factories.get(key)
        if name is None:
            name = self.const(functools.partial(Ptr, space, dt), "P")
            self.ptr_factories[key] = name
        return name

    # -- emission
    def emit(self, indent: int, text: str, stmt=None):
        self.lines.append("    " * indent + text)
        if stmt is not None:
            self.line_info[len(self.lines)] = (stmt, tuple(self.loops))

    def generate(self) -> str:
        params = ["ctx", "__bi", "__bn"]
        for a in self.prog.args:
            params.append(self._ident(a, "a"))
        self.emit(0, f"def __kernel({', '.join(params)}):")
        self.block(self.prog.body, 1)
        self.emit(1, "return")
        self.emit(1, "yield")                 # makes this a generator even without ops
        return "\n".join(self.lines) + "\n"

    def block(self, stmts: list, ind: int):
        start = len(self.lines)
        run: list = []              # consecutive ops bound at compile time: (op, stmt)
        bind = None if self.probes else self.bound_op        # probes: every op is emitted by `op`
        for s in stmts:
            is_op = type(s) is OpStmt                        # (statement classes have no subclasses)
            op = bind(s) if is_op and bind is not None else None
            if op is not None and s.call.spec.name not in _SCHEDULING_OPS:
                run.append((op, s))
                continue
            if run:
                self.op_run(run, ind)
                run = []
            if op is None and is_op and bind is not None:
                self.op(s, ind, bound=False)         # bound_op said no: not asked again
            else:
                self.stmt(s, ind)
            if type(s) in _TERMINATOR_TYPES:
                break
        self.op_run(run, ind)
        if len(self.lines) == start:
            self.emit(ind, "pass")

    def op_run(self, run: list, ind: int):
        """Emit consecutive bound ops (`bound_op`): one call each, or, for several, one loop over
        them (a scheduling point before each). The loop's call line maps to ``{op: stmt}``, so an
        error is attributed to the op running (`Executable._decorate`)."""
        if len(run) == 1:
            (op, s), = run
            self.emit(ind, "yield", s)
            self.emit(ind, f"{self.const(op, 'O')}(ctx)", s)
        elif run:
            ops = self.const(tuple(op for op, _ in run), "R")
            self.emit(ind, f"for __op in {ops}:", run[0][1])
            self.emit(ind + 1, "yield", run[0][1])
            self.emit(ind + 1, "__op(ctx)", dict(run))

    def probe_calls(self, s, when: str, ind: int):
        """Emit the calls of the probes attached to ``s`` at ``when``."""
        for pr in self.probes.get((id(s), when), ()):
            fn = self.const(pr.fn, "PB")
            vals = "".join(self.need(e) + ", " for e in pr.exprs)
            loops = "".join(f"({(v.name or 'i')!r}, {self._ident(v, 'v')}), " for v in self.loops)
            self.emit(ind, f"{fn}(ctx, ({vals}), ({loops}))", s)

    def hoist_shared(self, exprs: list, ind: int, s) -> None:
        """Bind the inner nodes that the expressions of statement ``s`` reach more than once to locals
        (``__cN = <code>``, innermost first), so `ex` names them instead of repeating their code: a TIK
        expression built in a Python loop (``e = e + e``) is a DAG reaching one node by ``2**n`` paths,
        and inline code would have ``2**n`` copies. The branches of a `Select` are not entered (they are
        evaluated only when selected); the locals hold exact register values (`need`). Call
        `end_shared` before emitting anything the statement does not evaluate itself (a nested block)."""
        counts, shared = _parent_counts(exprs)
        if not shared:                  # the common case: a tree (leaves may repeat)
            return
        order: list = []
        done: set = set()
        stack2 = [(e, False) for e in reversed(exprs)]
        while stack2:                   # post-order: a shared node after the shared nodes below it
            x, closing = stack2.pop()
            if closing:
                order.append(x)
                continue
            if id(x) in done:
                continue
            done.add(id(x))
            kids = (x.c,) if type(x) is Select else x.children()
            if kids:
                stack2.append((x, True))
                stack2.extend((c, False) for c in reversed(kids))
        for x in order:
            if counts[id(x)] > 1 and not x.is_ptr:
                name = f"__c{self.nshared}"
                self.nshared += 1
                self.emit(ind, f"{name} = {_bare(self.need(x))}", s)
                self.shared[id(x)] = (x, name)

    def end_shared(self) -> None:
        if self.shared:
            self.shared = {}

    def stmt(self, s, ind: int):
        if self.probes:
            if not isinstance(s, OpStmt):
                self.probe_calls(s, "before", ind)
            self._stmt(s, ind)
            self.probe_calls(s, "after", ind)
        else:
            self._stmt(s, ind)

    def _stmt(self, s, ind: int):
        if isinstance(s, OpStmt):
            self.op(s, ind)
            return
        if isinstance(s, (Assign, Store, For, If, Load)):
            self.hoist_shared(stmt_exprs(s), ind, s)
        try:
            self._stmt_body(s, ind)
        finally:
            self.end_shared()

    def _stmt_body(self, s, ind: int):
        if isinstance(s, Assign):
            if isinstance(s.value, Undef):
                return                      # an undefined value leaves the register as it is
            r = self._ident(s.reg, "r")
            if s.carry and isinstance(s.value, (Reg, PtrReg)):
                # a carried value (scf.yield / iter_args): an unassigned source leaves the target as it is
                self.emit(ind, "try:", s)
                self.emit(ind + 1, f"{r} = {self._ident(s.value, 'r')}", s)
                self.emit(ind, "except NameError:", s)
                self.emit(ind + 1, "pass", s)
                return
            if isinstance(s.reg, PtrReg):
                self.emit(ind, f"{r} = {self.pex(s.value)}", s)
                return
            code, exact = self.ex(s.value)
            self.emit(ind, f"{r} = {_bare(code)}", s)
            if not exact:
                # a value computed from a quotient may be undefined (a division by zero, INT_DIV_BY_ZERO_UNDEFINED:
                # `q + 1` with q = x // 0 stays undefined): no range test then (it would be a use)
                guard = f"{r}.__class__ is int and " if self.has_int_div() else ""
                self.emit(ind, f"if {guard}not {self.wrap_test(r, s.reg.type)}: {r} = {self.wrap_inline(r, s.reg.type)}",
                          s)
        elif isinstance(s, Load):
            r = self._ident(s.reg, "r")
            ld = self.const(_make_load(s.ptr.space, s.ptr.dtype, s.where), "LD")
            if s.ptr.space == "gm":
                self.emit(ind, "yield", s)
            self.emit(ind, f"{r} = {ld}(ctx, {self.addr_at(s.ptr, s.offset)})", s)
        elif isinstance(s, ReadSpr):
            r = self._ident(s.reg, "r")
            rd = self.const(_make_spr_read(s.spr, s.index, s.where), "SPR")
            self.emit(ind, f"{r} = {rd}(ctx)", s)
            if s.reg.type.name not in ("s64", "index"):
                self.emit(ind, f"if not {self.wrap_test(r, s.reg.type)}: {r} = {self.wrap_inline(r, s.reg.type)}", s)
        elif isinstance(s, Store):
            st = self.const(_make_store(s.ptr.space, s.ptr.dtype, s.where), "ST")
            if s.ptr.space == "gm":
                self.emit(ind, "yield", s)
            self.emit(ind, f"{st}(ctx, {self.addr_at(s.ptr, s.offset)}, {self.need(s.value)})", s)
        elif isinstance(s, For):
            v = self._ident(s.var, "v")
            lo, hi = _bare(self.need(s.lo)), _bare(self.need(s.hi))
            if isinstance(s.step, Const) and s.step.value > 0:
                rng = f"range({lo}, {hi})" if s.step.value == 1 else f"range({lo}, {hi}, {s.step.value})"
            else:
                rng = f"range({lo}, {hi}, _step({self.need(s.step)}))"
            self.emit(ind, f"for {v} in {rng}:", s)
            self.end_shared()                   # the body may change what the shared nodes read
            (a0, a1), (b0, b1) = self.value_bounds(s.lo), self.value_bounds(s.hi)
            self.loop_bounds[s.var] = (min(a0, b0), max(a1, b1))     # range() stays between lo and hi
            self.bounds.clear()                                         # they may depend on it
            self.loops.append(s.var)
            self.block(s.body, ind + 1)
            self.loops.pop()
        elif isinstance(s, If):
            self.emit(ind, f"if {self.need(s.cond)}:", s)
            self.end_shared()
            self.block(s.then, ind + 1)
            orelse = s.orelse
            while orelse:
                if len(orelse) == 1 and isinstance(orelse[0], If) and not _parent_counts([orelse[0].cond])[1]:
                    nxt = orelse[0]           # (a condition sharing nodes goes in an else block: hoisted there)
                    self.emit(ind, f"elif {self.need(nxt.cond)}:", nxt)
                    self.block(nxt.then, ind + 1)
                    orelse = nxt.orelse
                else:
                    self.emit(ind, "else:")
                    self.block(orelse, ind + 1)
                    break
        elif isinstance(s, Break):
            self.emit(ind, "break", s)
        elif isinstance(s, Continue):
            self.emit(ind, "continue", s)
        elif isinstance(s, Return):
            self.emit(ind, "return", s)
        else:
            raise TypeError(f"unknown statement {s!r}")

    def op(self, s: OpStmt, ind: int, bound=None):
        """Emit op ``s``: ``yield`` and one call (`_bound_op` when all its values are static, else
        `_dyn_op` given the values computed at run time). ``bound``: `bound_op` (s) if the caller
        already tried it (`block`), so it is not tried twice."""
        call = s.call
        spec = call.spec
        yield_ = "yield _BARRIER" if spec.name in BARRIER_OPS else "yield"
        if bound is None:
            op = None if self.probes.get((id(s), "before")) else self.bound_op(s)
        else:
            op = bound or None
        if op is not None:
            self.emit(ind, yield_, s)
            self.emit(ind, f"{self.const(op, 'O')}(ctx)", s)
            if spec.name in LAUNCH_OPS:
                self.emit(ind, "yield _LAUNCH", s)
            return
        self.hoist_shared(stmt_exprs(s), ind, s)
        try:
            self._dyn_call(s, ind, yield_)
        finally:
            self.end_shared()

    def _dyn_call(self, s: OpStmt, ind: int, yield_: str):
        call = s.call
        spec = call.spec
        template, holes, codes = [], [], []
        for i, v in enumerate(call.operands):
            static, code, conv = self.operand_parts(v)
            if code is None:
                template.append(static)
            else:
                template.append(None)
                holes.append((i, conv))
                codes.append(code)
        static_clauses, dyn_keys = {}, []
        for k, v in call.clauses.items():
            code = self.clause(v)
            if code is None:
                static_clauses[k] = v
            else:
                dyn_keys.append(k)
                codes.append(code)
        fn = self.const(_dyn_op(spec.asm_name, spec.pipe, s.where, spec.execute, tuple(template), tuple(holes),
                                static_clauses, tuple(dyn_keys), spec.bind_hole, spec.bind_holes,
                                spec.bind_dyn), "D")
        self.emit(ind, yield_, s)
        if self.probes:
            self.probe_calls(s, "before", ind)
        self.emit(ind, f"{fn}({', '.join(['ctx'] + codes)})", s)
        if spec.name in LAUNCH_OPS:
            self.emit(ind, "yield _LAUNCH", s)

    def operand_parts(self, v) -> tuple:
        """``(value, None, None)`` for an operand whose run-time value is known now, else ``(None, code,
        conv)``: Python code computing it and the function (or None) making the operand of that value
        (the same values `operand` code evaluates to)."""
        if isinstance(v, (PtrExpr, PtrReg)):
            static = self.static_ptr(v)
            if static is not None:
                return static, None, None
            return None, _bare(self.pex(v)), functools.partial(Ptr, v.space, v.dtype)
        if isinstance(v, Const):
            x = v.value
            return (S.NAN if isinstance(x, float) and x != x else x), None, None
        if isinstance(v, Expr):
            return None, _bare(self.need(v)), None
        if isinstance(v, float):
            return (S.NAN if v != v else v), None, None
        if isinstance(v, (tuple, list)) and clause_exprs(v):
            return None, self.value_code(v), None
        return v, None, None

    def bound_op(self, s: OpStmt) -> Optional[Callable]:
        """`_bound_op` of ``s`` if all its operands and clauses are compile-time values, else None."""
        call = s.call
        operands = call.operands
        if _PLAIN.issuperset(map(type, operands)):     # all plain (sync pairs, int-only ops): one C-level test
            args = operands if type(operands) is tuple else tuple(operands)
        else:
            args = self.static_operands(operands)
            if args is None:
                return None
        clauses = call.clauses
        if clauses:
            for v in clauses.values():
                if type(v) not in _PLAIN and clause_exprs(v):
                    return None
        spec = call.spec
        return _bound_op(spec.asm_name, spec.pipe, s.where, spec.execute, args, dict(clauses), spec.bind)

    def static_ptr(self, p) -> Optional[Ptr]:
        """The `Ptr` pointer expression ``p`` evaluates to if its address is a constant, else None
        (remembered per expression node: programs reuse a few pointer nodes in many ops)."""
        hit = self.static_ptrs.get(id(p))
        if hit is not None and hit[0] is p:
            return hit[1]
        return self._static_ptr(p)

    def _static_ptr(self, p) -> Optional[Ptr]:
        """`static_ptr` of a pointer expression not seen before."""
        addr = static_addr(p)
        if addr is None:
            ptr = None
        else:
            key = (p.space, p.dtype.name, addr)
            ptr = self.ptrs.get(key)
            if ptr is None:
                ptr = self.ptrs[key] = Ptr(p.space, p.dtype, addr)
        self.static_ptrs[id(p)] = (p, ptr)     # (p kept: its id is not reused while the entry lives)
        return ptr

    def static_operands(self, operands) -> Optional[tuple]:
        """The run-time values of ``operands`` if none depends on the kernel's state, else None
        (the same values `operand` code evaluates to)."""
        if _PLAIN.issuperset(map(type, operands)):     # all plain (sync pairs, int-only ops): one C-level test
            return tuple(operands)
        out = []
        for v in operands:
            t = type(v)
            if t in _PLAIN:
                pass
            elif t in _PTR_TYPES or isinstance(v, (PtrExpr, PtrReg)):
                hit = self.static_ptrs.get(id(v))   # `static_ptr`, its memo read inline (most operands hit)
                v = hit[1] if hit is not None and hit[0] is v else self._static_ptr(v)
                if v is None:
                    return None
            elif isinstance(v, Const):
                v = v.value
                if isinstance(v, float) and v != v:
                    v = S.NAN
            elif isinstance(v, Expr):
                return None
            elif isinstance(v, float) and v != v:
                v = S.NAN
            elif isinstance(v, (tuple, list)) and clause_exprs(v):
                return None
            out.append(v)
        return tuple(out)

    def operand(self, v) -> str:
        if isinstance(v, (PtrExpr, PtrReg)):
            return self.ptr_object(v)
        if isinstance(v, Expr):
            return self.need(v)
        if isinstance(v, (int, bool, str)) or v is None:
            return repr(v)
        if isinstance(v, float):
            return self.float_lit(v)
        if isinstance(v, (tuple, list)) and clause_exprs(v):
            return self.value_code(v)
        return self.const(v, "V")

    def clause(self, v) -> Optional[str]:
        """Code for a clause value that holds expressions, or None when the value is static."""
        if not clause_exprs(v):
            return None
        return self.value_code(v)

    def value_code(self, v) -> str:
        if isinstance(v, Expr):
            return self.operand(v)
        if isinstance(v, tuple):
            return "(" + "".join(self.value_code(x) + ", " for x in v) + ")"
        if isinstance(v, list):
            return "[" + ", ".join(self.value_code(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {self.value_code(x)}" for k, x in v.items()) + "}"
        return self.operand(v)

    def ptr_object(self, p: PtrExpr) -> str:
        static = self.static_ptr(p)
        if static is not None:
            return self.const(static, "PC")
        return f"{self.ptr_factory(p.dtype, p.space)}({self.pex(p)})"

    def addr_at(self, p: PtrExpr, offset) -> str:
        if isinstance(offset, Const) and offset.value == 0:
            return self.pex(p)
        return self.pex(PtrAdd(p, offset))

    # -- expressions
    def float_lit(self, x: float) -> str:
        if x != x:
            return "_NAN"
        if x in (S.INF, -S.INF):
            return "_INF" if x > 0 else "_NINF"
        return repr(x)

    @staticmethod
    def wrap_test(code: str, t) -> str:
        lo, hi = S.int_bounds(t)
        return f"{lo} <= {code} <= {hi}"

    @staticmethod
    def wrap_inline(code: str, t) -> str:
        """`wrap` written out (no `SIGNED_WRAP_HELPERS` call): an assignment's guarded wrap, so a hot loop calls
        no helper."""
        if t.kind == "u":
            return f"({code} & {(1 << t.bits) - 1})"
        half = 1 << (t.bits - 1)
        return f"((({code} + {half}) & {(1 << t.bits) - 1}) - {half})"

    @staticmethod
    def wrap(code: str, t) -> str:
        """``code`` wrapped into integer type ``t``. ``code`` is what `ex`, `need` and `pex` return (a
        name, a literal, a call or a parenthesized expression) or an integer sum, difference or product
        without its parentheses (`_int_arith_code`): all bind tighter than ``+`` and ``&``."""
        if t.kind == "u":
            return f"({code} & {(1 << t.bits) - 1})"
        if t.bits in SIGNED_WRAP_HELPERS:
            return f"_ws{t.bits}({code})"
        half = 1 << (t.bits - 1)
        return f"((({code} + {half}) & {(1 << t.bits) - 1}) - {half})"

    def need(self, e: Expr) -> str:
        """Code for ``e`` with its exact register value (wrapped if needed)."""
        if e.is_ptr:
            return self.pex(e)
        code, exact = self.ex(e)
        if exact or not S.is_int(e.type):
            return code
        return self.wrap(code[1:-1] if _int_arith_code(e, code) else code, e.type)

    def pex(self, p: PtrExpr) -> str:
        """Code for a pointer expression's byte address (an int)."""
        if isinstance(p, GmArg):
            return self._ident(p, "a")
        if isinstance(p, PtrReg):
            return self._ident(p, "r")
        if isinstance(p, PtrFromInt):
            return self.need(p.a)
        if isinstance(p, PtrCast):
            return self.pex(p.p)
        if isinstance(p, PtrAdd):
            base, n = self.pex(p.p), self.offset(p.n)
            bits = p.dtype.bits
            if isinstance(p.n, Const):
                off = p.n.value * (bits // 8) if bits >= 8 else \
                    _sub_byte_offset(0, p.n.value, bits)
                return f"({base} + {off})" if off >= 0 else f"({base} - {-off})"
            if bits >= 8:
                size = bits // 8
                if n[0] == "(" and _PRODUCT_CODE.match(n):
                    n = n[1:-1]          # base + x * y * size: Python groups it so
                return f"({base} + {n})" if size == 1 else f"({base} + {n} * {size})"
            return f"_sbo({base}, {n}, {bits})"
        raise TypeError(f"unknown pointer expression {p!r}")

    def offset(self, n: Expr) -> str:
        """Code for a pointer offset (an ``index`` value): its exact value, refused at run time when it leaves
        int64 (`_off64`) instead of wrapped. Looks through conversions between signed 64-bit integer types; a u64
        value converted to the ``index`` offset >= 2**63 does not fit. An explicit conversion of a u64 value to s64
        (``cast(u, "s64")``) is C's: it wraps (2**64 - 1 is -1, the offset's exact value), as in any other place
        of the offset. Narrower integer arithmetic wraps in its own type first, as it should."""
        e = n
        while isinstance(e, Cast) and S.is_int(e.type) and S.is_int(e.a.type) and e.type.bits == 64 and \
                e.type.kind != "u" and e.a.type.bits == 64:
            if e.a.type.kind == "u":
                if e.type is S.INDEX:
                    return f"_off64({_bare(self.need(e.a))})"
                break                    # cast(u, "s64"): C conversion, an exact in-range value (`cast`)
            e = e.a
        if e is n and not (S.is_int(n.type) and n.type.bits == 64 and n.type.kind != "u"):
            return self.need(n)
        code, exact = self.ex(e)
        if exact:
            return code
        return f"_off64({_bare(code)})"

    def ex(self, e: Expr):
        """``(code, exact)``: Python code for scalar ``e``; exact=False if it may need wrapping."""
        hit = self.shared.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1], True
        t = e.type
        if isinstance(e, Const):
            if S.is_float(t):
                return self.float_lit(e.value), True
            return repr(e.value), True
        if isinstance(e, (Reg, LoopVar)):
            return self._ident(e, "r" if isinstance(e, Reg) else "v"), True
        if isinstance(e, ScalarArg):
            return self._ident(e, "a"), True
        if isinstance(e, BlockIdx):
            return "__bi", True
        if isinstance(e, BlockNum):
            return "__bn", True
        if isinstance(e, Undef):
            return ("_undef()" if e.why is None else f"_undef({e.why!r})"), True
        if isinstance(e, BinOp):
            return self.binop(e)
        if isinstance(e, UnOp):
            return self.unop(e)
        if isinstance(e, Cmp):
            sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[e.pred]
            return f"({self.need(e.a)} {sym} {self.need(e.b)})", True
        if isinstance(e, Cast):
            return self.cast(e)
        if isinstance(e, Bitcast):
            src = self.const(e.a.type, "T")
            dst = self.const(t, "T")
            return f"_bitcast({self.need(e.a)}, {src}, {dst})", True
        if isinstance(e, Select):
            a, ea = self.ex(e.a)
            b, eb = self.ex(e.b)
            return f"({a} if {self.need(e.c)} else {b})", ea and eb
        if isinstance(e, PtrToInt):
            return self.pex(e.p), True
        raise TypeError(f"unknown expression {e!r}")

    def binop(self, e: BinOp):
        op, t = e.op, e.type
        if S.is_bool(t):
            sym = {"and": "&", "or": "|", "xor": "^"}[op]
            return f"({self.need(e.a)} {sym} {self.need(e.b)})", True
        if S.is_float(t):
            a, b = self.need(e.a), self.need(e.b)
            r = _ROUND[t.name]
            if op in ("add", "sub", "mul"):           # host-independent NaNs: SCALAR_DEFAULT_NAN
                return f"{r}(_f{op}({a}, {b}))", True
            if op == "div":
                return f"{r}(_fdiv({a}, {b}))", True
            if op == "rem":
                return f"_frem({a}, {b})", True
            return f"{'_fmax' if op == 'max' else '_fmin'}({a}, {b})", True
        if op in _INT_ARITH:
            ea, eb = e.a, e.b
            a, _ = self.ex(ea)
            b, _ = self.ex(eb)
            if _int_arith_code(ea, a) and (op != "mul" or ea.op == "mul"):
                a = a[1:-1]              # (x + y) + b, (x * y) - b, (x * y) * b: Python groups them so
            elif a[0] == "(" and (_PRODUCT_CODE if op == "mul" else _SUM_CODE).match(a):
                a = a[1:-1]              # the same through a cast that keeps the code (a widening)
            if op != "mul" and b[0] == "(" and (_int_arith_code(eb, b) and eb.op == "mul" or _PRODUCT_CODE.match(b)):
                b = b[1:-1]              # a + (x * y)
            sym = _INT_ARITH[op]
            r = self.raw_bounds(e)
            lo, hi = S.int_bounds(t)
            return f"({a} {sym} {b})", r is not None and lo <= r[0] and r[1] <= hi   # cannot leave the type
        if op in ("and", "or", "xor"):
            a, ea = self.ex(e.a)
            b, eb = self.ex(e.b)
            sym = {"and": "&", "or": "|", "xor": "^"}[op]
            return f"({a} {sym} {b})", ea and eb
        if op == "shl":
            a, _ = self.ex(e.a)
            return f"_shl({_bare(a)}, {_bare(self.need(e.b))}, {t.bits})", False
        a, b = _bare(self.need(e.a)), _bare(self.need(e.b))
        if op == "shr":
            return f"_shr({a}, {b})", True
        if op == "div":
            if t.kind == "u":
                return f"_tdiv({a}, {b})", True
            return f"_tdiv({a}, {b})", False
        if op == "rem":
            return f"_trem({a}, {b})", True
        return f"{op}({a}, {b})", True

    # -- value ranges (integer add/sub/mul whose result provably fits its type need no wrap)
    def raw_bounds(self, e: Expr):
        """Inclusive bounds of the value `ex` computes for integer ``e`` (before any wrap), or None."""
        hit = self.bounds.get(id(e))
        if hit is None or hit[0] is not e:
            hit = self.bounds[id(e)] = (e, self._raw_bounds(e))
        return hit[1]

    def _raw_bounds(self, e: Expr):
        if isinstance(e, Const):
            return (e.value, e.value) if isinstance(e.value, int) else None
        if isinstance(e, BinOp) and e.op in ("add", "sub", "mul") and S.is_int(e.type) and not S.is_bool(e.type):
            a, b = self.raw_bounds(e.a), self.raw_bounds(e.b)
            if a is None or b is None:
                return None
            if e.op == "add":
                return a[0] + b[0], a[1] + b[1]
            if e.op == "sub":
                return a[0] - b[1], a[1] - b[0]
            p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
            return min(p), max(p)
        if isinstance(e, Cast) and S.is_int(e.type) and S.is_int(e.a.type) and not S.is_bool(e.a.type):
            lo, hi = S.int_bounds(e.type)         # int -> int casts yield in-range values (`cast`)
            a = self.value_bounds(e.a)
            return a if lo <= a[0] and a[1] <= hi else (lo, hi)
        if isinstance(e, LoopVar) and e in self.loop_bounds:
            return self.loop_bounds[e]
        if isinstance(e, (Reg, LoopVar, ScalarArg)) and S.is_int(e.type):
            return S.int_bounds(e.type)          # registers and arguments always hold in-range values
        return None

    def value_bounds(self, e: Expr) -> tuple:
        """Inclusive bounds of `need` (e) for an integer expression (its type's range if nothing better)."""
        lo, hi = S.int_bounds(e.type) if S.is_int(e.type) else (-(1 << 64), 1 << 64)
        r = self.raw_bounds(e)
        if r is not None and lo <= r[0] and r[1] <= hi:
            return r
        return lo, hi

    def unop(self, e: UnOp):
        op, t = e.op, e.type
        if S.is_bool(t):
            if self.has_int_div():       # a negated comparison of an undefined quotient stays undefined
                return f"_lnot({self.need(e.a)})", True
            return f"(not {self.need(e.a)})", True
        if S.is_float(t):
            a = self.need(e.a)
            if op == "neg":
                return f"(-{a})", True
            if op == "abs":
                return f"abs({a})", True
            if op == "sqrt":
                return f"{_ROUND[t.name]}(_fsqrt({a}))", True
            return f"_RI_{op}({a})", True
        if op == "neg":
            a, _ = self.ex(e.a)
            return f"(-{a})", False
        if op == "not":
            a, ea = self.ex(e.a)
            return f"(~{a})", ea and t.kind == "s"
        if op == "abs":
            return f"abs({self.need(e.a)})", t.kind == "u"
        raise TypeError(f"operator {op} on {t.pto_name}")

    def cast(self, e: Cast):
        src, dst = e.a.type, e.type
        if S.is_bool(dst):
            return f"({self.need(e.a)} != 0)", True
        if S.is_float(dst):
            if S.is_float(src):
                a = self.need(e.a)
                if src is dst:
                    return a, True
                if _float_widens(src, dst):
                    return f"_fwiden({a})", True         # exact; a NaN becomes the quiet NaN of its sign
                return f"{_ROUND[dst.name]}({a})", True
            if S.is_bool(src):
                return f"float({self.need(e.a)})", True
            return f"_i2f({self.need(e.a)}, {self.const(dst, 'T')})", True
        lo, hi = S.int_bounds(dst)
        if S.is_float(src):
            return f"_f2i({self.need(e.a)}, {self.const(dst, 'T')})", True
        if S.is_bool(src):
            return self.need(e.a), True
        slo, shi = S.int_bounds(src)
        if lo <= slo and shi <= hi:
            return self.need(e.a), True          # value-preserving widening
        if dst.bits >= src.bits:
            a = self.need(e.a)                   # sign change or sign-extension into unsigned
        else:
            a, _ = self.ex(e.a)                  # truncation commutes with wrapping
            if _int_arith_code(e.a, a):
                a = a[1:-1]
        return self.wrap(a, dst), True


#: `_Codegen.binop`'s integer add/sub/mul operators
_INT_ARITH = {"add": "+", "sub": "-", "mul": "*"}


def _bare(code: str) -> str:
    """``code`` (what `_Codegen.ex`, `need` or `pex` returns) without its outer parentheses, for a place
    that takes any expression (a call argument, an assignment's value): every such code that starts
    with ``(`` is one parenthesized group (`ex` returns names, literals, calls or ``(...)``)."""
    return code[1:-1] if code[0] == "(" else code


#: Code that is one parenthesized product of names and integer literals, ``(x * 256 * 16)``, and one that is a
#: sum, difference or product chain of them, ``(x * 16 + y - 4)`` (no inner parentheses, so no other grouping):
#: `_Codegen.binop` drops their parentheses where Python groups the code the same way -- a product as the left
#: operand of ``*`` or any operand of ``+``/``-`` right of it, a chain as the left operand of ``+``/``-`` -- so the
#: source parses to the same tree, with fewer tokens (the parser's cost of a kernel's offsets is mostly their
#: parentheses). `_int_arith_code` covers the codes `binop` itself made; these the ones a cast passes on as is.
_PRODUCT_CODE = re.compile(r"\((?:\w+ \* )+\w+\)\Z")
_SUM_CODE = re.compile(r"\(\w+(?: [-+*] \w+)+\)\Z")


def _int_arith_code(e, code: str) -> bool:
    """Whether ``code`` is `_Codegen.binop`'s ``(a + b)`` / ``(a - b)`` / ``(a * b)`` for ``e`` (not a
    hoisted local's name): its outer parentheses may go where Python groups the same way (the left
    operand of + - and of * for a product, the right operand of + - for a product, a wrap's operand).
    Python's parser spends a large part of a big kernel's compile on redundant parentheses; the code
    parses to the same tree."""
    return code[0] == "(" and type(e) is BinOp and e.op in _INT_ARITH and e.type.kind in ("s", "u")


def _float_widens(src, dst) -> bool:
    return (src.name, dst.name) in {("f16", "f32"), ("bf16", "f32")} or src is dst


# ============================================================================= executable


def _first_site(sites):
    """The first (by file and line) of a set of provenances, None values skipped: where a warning about
    them is issued."""
    return min((w for w in sites if w is not None), key=lambda w: (w.file, w.line), default=None)


#: Named choice RELAUNCH_WIDER: a kernel whose block count is computed at run time (``pto.launch_blocks``;
#: TIK ``for_range(0, s, block_num=s)`` with a Scalar ``s``) may ask for more blocks than the machine
#: `Executable.run` built for it (the chip's CORE_NUM). TIK accepts any ``block_num`` in [1, 65535] (its
#: for_range reference page, immediate or Scalar) and the runtime runs more blocks than cores in batches,
#: as it does for an immediate ``block_num`` above CORE_NUM; so run() starts the launch again on a machine
#: of that many cores (one per block, as for an immediate block_num) instead of refusing the kernel. The
#: first attempt's state is discarded (inputs are bound anew); a machine the caller passed, or an
#: explicit ``cores=``, is kept and the count stays an error there. Its prints and warnings are held until
#: no restart can follow: up to the launch op when the kernel has one launch point outside loops, else to
#: the end of the run (`_launch_repeats`: a later or repeated launch op may still ask for more blocks).
#: Core 0 alone runs up to the launch op; if it passed an all-core barrier (``pto.sync_all``, TIK
#: ``block_barrier`` before the block loop) there -- or the running cores passed one before a later launch op
#: asking for more of them --, the launch restarts with every launched core started at once,
#: so the barrier waits for all of them as on the device (with a caller's machine or ``cores=`` that is an
#: `UnsupportedOp` at the launch op instead: the cores it starts would pass the barrier after core 0).
RELAUNCH_WIDER = True

#: Named choice RELEASE_FINISHED_BLOCKS: in a launch of more blocks than the chip runs at once
#: (`ChipProfile.resident_blocks`: the device runs the rest in later batches on the same cores, whose
#: buffers the later blocks reuse), on a machine `Executable.run` builds, a block that has ended drops its
#: core's on-chip buffers (`Machine.release_core`): its results are in GM and nothing of the launch can
#: read that core's UB/L1/L0 again, so a launch of thousands of blocks (TIK's block_num up to 65535) holds
#: the buffers of the blocks still running, not of every block. End-of-kernel checks (flags still set,
#: unit-flag tiles never checked) are reported as before. A launch within the chip's cores, or a machine
#: the caller passes, keeps every buffer (on-chip contents stay inspectable after the run).
RELEASE_FINISHED_BLOCKS = True

#: The most blocks one launch starts (TIK's ``block_num`` range [1, 65535]; the same bound the TIK
#: facade checks a fed InputScalar against): checked before the launch allocates a core per block.
MAX_LAUNCH_BLOCKS = 65535

#: Run-time errors name the core and the loop indices of the loops the user wrote (``[at core=1, i=3]``);
#: a loop variable marked ``LoopVar.hidden`` -- one a front end made for its own lowering, e.g. the TIK
#: facade's loop over the groups of 255 repeats of a run-time-length h_* row (RUNTIME_GROUPS_GUARDED), its
#: loop over an h_* op's run-time rows, a run-time reduction's column folds and vec_expm1_high_preci's
#: per-repeat select -- is left out, so the message is the one the same op gives outside such a loop.
HIDDEN_LOOP_VARS = True

#: how many generated kernel sources `_compiled` keeps the byte code of (oldest dropped first): a
#: kernel traced again (a benchmark or tuning loop, a test rebuilding the same kernel) generates the
#: same source, and Python's ``compile`` of it is about a third of `Program.compile`
CODE_CACHE_SIZE = 64
_CODE_CACHE: dict = {}


def _compiled(source: str, filename: str):
    """``compile(source, filename, "exec")``, shared by equal (source, filename) pairs: a code object
    is immutable and each `Executable` ``exec``s it into its own namespace (fresh functions)."""
    key = (source, filename)
    code = _CODE_CACHE.get(key)
    if code is None:
        code = compile(source, filename, "exec")
        if len(_CODE_CACHE) >= CODE_CACHE_SIZE:
            del _CODE_CACHE[next(iter(_CODE_CACHE))]
        _CODE_CACHE[key] = code
    return code


def _launch_repeats(body: list) -> bool:
    """Whether ``body`` has more than one `LAUNCH_OPS` statement or one inside a loop (a launch op that may
    run again after an earlier one stood, e.g. a TIK Scalar block loop inside a serial ``for_range``)."""
    seen = 0
    stack = [(body, False)]
    while stack:
        stmts, in_loop = stack.pop()
        for st in stmts:
            t = type(st)
            if t is OpStmt:
                if st.call.spec.name in LAUNCH_OPS:
                    seen += 1
                    if in_loop or seen > 1:
                        return True
            elif t is For:
                stack.append((st.body, True))
            elif t is If:
                stack.append((st.then, in_loop))
                if st.orelse:
                    stack.append((st.orelse, in_loop))
    return False


def _has_launch_op(body: list) -> bool:
    """Whether any statement of ``body`` (nested blocks included, as `walk_stmts` visits them) is a
    `LAUNCH_OPS` op; one loop with a stack (every compile asks)."""
    stack = [body]
    while stack:
        for st in stack.pop():
            t = type(st)
            if t is OpStmt:
                if st.call.spec.name in LAUNCH_OPS:
                    return True
            elif t is For:
                stack.append(st.body)
            elif t is If:
                stack.append(st.then)
                if st.orelse:
                    stack.append(st.orelse)
    return False


#: Named choice: an executable run on a machine of another target than the one it was compiled for checks
#: every op against that target before it starts (`Executable._verify_on`), as recording it there would.
VERIFY_ON_ANOTHER_TARGET = True


class Executable:
    """A compiled program. ``run`` may be called many times.

    Attributes:
        program: the `Program`.
        source: the generated Python source (for inspection).
        machine: the `Machine` of the last run.
        reports: checker reports of the last run (``(kind, message)``; see `Machine.reports`).
    """

    def __init__(self, prog: Program, probes: tuple = ()):
        self.program = prog
        self.probes = tuple(probes)
        gen = _Codegen(prog, self.probes)
        filename = f"<pto kernel {prog.name}>"
        try:
            self.source = gen.generate()
            code = _compiled(self.source, filename)
        except (RecursionError, SyntaxError, MemoryError) as e:
            raise UnsupportedOp(f"kernel {prog.name!r} is too deeply nested to compile ({type(e).__name__}: {e})",
                                hint="split long expression chains through registers and flatten deep "
                                     "loop/if nests (Python allows about 20 nested blocks)") from None
        self._line_info = gen.line_info
        self._py_names = gen.py_names
        ns = gen.ns
        exec(code, ns)
        # taken out of its own globals: ``ns`` -> kernel -> ``ns`` would be a reference cycle, so every
        # dropped executable (a rebuilt kernel, a tuning loop) would wait for the cyclic collector, which
        # then walks its closures, constants and statements; without the cycle it is freed at once
        self._kernel = ns.pop("__kernel")
        self._code = self._kernel.__code__
        self._lazy_launch = _has_launch_op(self.program.body)
        self._verified_targets = [prog.target]      # targets every op's verifier accepted (`_verify_on`)
        self._launch_repeats = self._lazy_launch and _launch_repeats(self.program.body)
        self.machine: Optional[Machine] = None
        self.reports: list = []
        #: reports of the last run past `MachineOptions.max_reports` (counted, not recorded)
        self.reports_dropped = 0
        #: messages of the last run's reports that were also Python warnings (`Machine.warned_reports`)
        self.warned_reports: set = set()
        #: of `reports_dropped`, those that were also Python warnings (`Machine.warned_dropped`)
        self.warned_dropped = 0
        #: outputs of the last run with bytes the kernel did not write (`_unwritten_outputs`)
        self.unwritten_outputs: dict = {}
        #: per-byte written maps of those outputs (bool arrays, by output name)
        self.unwritten_maps: dict = {}

    # -- launching
    def _launch_width(self, inputs: dict, cores: Optional[int]) -> int:
        bn = self.program.block_num
        if cores is not None and (isinstance(cores, bool) or not isinstance(cores, (int, np.integer))):
            # int() of 4.5 / '4' / True ran 4 / 4 / 1 cores; of 'x' raised a bare ValueError
            raise ConfigError(f"cores = {cores!r} is not a core count", operand="cores", value=repr(cores)[:40],
                              hint="pass an int (pto-run: --cores N), or omit cores= to use the kernel's block_num")
        if bn is None:
            n = 1 if cores is None else int(cores)
        else:
            n = int(inputs[bn.name]) if isinstance(bn, ScalarArg) else int(bn)
            if cores is not None and int(cores) != n and n >= 1:      # n < 1: refused below as such
                what = f"runs block_num = {bn.name} = {n}" if isinstance(bn, ScalarArg) else f"declares block_num {n}"
                raise ConfigError(f"kernel {self.program.name!r} {what}; cannot run on {cores} "
                                  f"core{'' if int(cores) == 1 else 's'}", operand="cores", value=cores, limit=n,
                                  hint=f"omit cores= (pto-run: --cores) or pass {n}; to launch only blocks "
                                       f"0..N-1 of the {n}, pass block_dim=N (pto-run: --block-dim N)")
        if n < 1:
            raise ConfigError(f"the kernel needs at least one core, got {n}", operand="cores", value=n,
                              hint="pass cores >= 1, or a block_num scalar argument >= 1")
        if n > MAX_LAUNCH_BLOCKS:
            raise ConfigError(f"kernel {self.program.name!r} launches {n} blocks; a launch takes at most "
                              f"{MAX_LAUNCH_BLOCKS}", operand="cores", value=n, limit=f"[1, {MAX_LAUNCH_BLOCKS}]",
                              hint="launch at most 65535 blocks (TIK's block_num range; loop over more work "
                                   "inside each block)")
        return n

    def _block_dim(self, width: int, block_dim) -> int:
        """``run(block_dim=)`` checked against the launch width ``width`` (1 .. width)."""
        if self._lazy_launch:
            raise ConfigError(f"kernel {self.program.name!r} chooses its block count while it runs "
                              f"(pto.launch_blocks); block_dim does not apply", operand="block_dim", value=block_dim,
                              hint="omit block_dim: the kernel's own run-time count decides the launch")
        if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) or \
                not 1 <= int(block_dim) <= width:
            raise ConfigError(f"block_dim = {block_dim!r} is not a block count in [1, {width}] (the kernel's "
                              f"block_num)", operand="block_dim", value=repr(block_dim)[:40], limit=f"[1, {width}]",
                              hint=f"pass the number of blocks the host launches, 1 to {width}")
        return int(block_dim)

    @staticmethod
    def _end_step(machine, step) -> None:
        """``step()`` of a run's end (`Machine.release_held` re-raises a warning the run held back when warnings are
        errors): if it raises, the machine is reset as after any failed run (`Machine.abort_kernel`), so a caller's
        machine does not stay in the compiled runs' record-at-once mode (review429)."""
        try:
            step()
        except BaseException:
            machine.abort_kernel()
            raise

    def run(self, inputs: Optional[dict] = None, *, cores: Optional[int] = None, machine: Optional[Machine] = None,
            order: str = "sequential", seed: int = 0, options: Optional[MachineOptions] = None,
            write_back: bool = False, alias: Optional[dict] = None, block_dim: Optional[int] = None) -> dict:
        """Run the kernel; return ``{name: array}`` for every ``out``/``inout`` GM argument.

        Args:
            inputs: ``{name: array}`` for every ``in``/``inout`` GM argument (dtype and shape
                must match; packed 4-bit types are given as their ``uint8`` bytes) and
                ``{name: number}`` for every scalar argument. Arrays are copied.
            cores: number of cores (default: the kernel's ``block_num``, else 1).
            machine: run on this machine (default: a fresh one for the program's target).
            order: ``"sequential"`` (core 0 to the end, then core 1, ...) or ``"random"``
                (cores interleaved op by op in a random order seeded by ``seed``).
            options: `MachineOptions` for the fresh machine.
            write_back: also copy the final GM contents of ``in``/``inout`` tensors back
                into the caller's arrays (TIK debugger behaviour).
            alias: ``{out argument: in argument}``: the output shares the input's GM memory, as the
                framework places an in-place ("ref") operator's output (the kernel reads the input's
                data through it; it comes back as the output, in the output's dtype and shape).
            block_dim: launch only blocks ``0 .. block_dim-1`` of the kernel's ``block_num`` (a host whose
                tiling picks fewer blocks than the kernel was built for: CANN's ``block_dim``); the kernel's
                ``pto.get_block_num`` is then ``block_dim``. Default: the whole ``block_num``.
        """
        prog = self.program
        inputs = dict(inputs or {})
        if order not in ("sequential", "random"):
            raise ConfigError(f"order={order!r} is not 'sequential' or 'random'", operand="order", value=order,
                              hint="pass order=\"sequential\" or order=\"random\" (pto-run: --order)")
        self._check_inputs(inputs)
        n = self._launch_width(inputs, cores)
        if block_dim is not None:
            n = self._block_dim(n, block_dim)
        own = machine is None
        if not own and len(machine.cores) < n:
            raise ConfigError(f"machine has {len(machine.cores)} cores, the kernel needs {n}", operand="machine",
                              value=len(machine.cores), limit=n,
                              hint=f"pass a Machine with at least {n} cores (Machine(target, cores={n})), or omit "
                                   "machine=")
        if not own:
            self._verify_on(machine.target)
        aliases = self._aliases(alias or {})
        upfront = 0                        # cores a restarted launch starts at once (a barrier before its launch op)
        while True:
            if own:
                self.machine = None        # the previous run's machine can go before the new one is built
                machine = Machine(prog.target, cores=n, options=options)
                machine.relaunch_wider = RELAUNCH_WIDER and self._lazy_launch and cores is None
                machine.release_finished = RELEASE_FINISHED_BLOCKS and n > machine.target.resident_blocks
                if machine.relaunch_wider:
                    machine.held = []      # this attempt's prints and warnings wait for its launch to stand
                    machine.hold_to_end = self._launch_repeats     # ... or for the run to end
            else:                          # a machine the caller passes (maybe one an earlier run built and set
                machine.relaunch_wider = machine.release_finished = machine.hold_to_end = False   # these on)
            self.machine = machine
            args, regions = self._bind_args(machine, inputs, aliases)
            machine.launch_width = upfront or 1
            machine.launch_pending = self._lazy_launch and not upfront
            machine.barrier_before_launch = None
            self._launch_n = n
            self._start = lambda c, machine=machine, args=args, n=n: (c, self._kernel(machine.context(c), c, n,
                                                                                      *args))
            gens = [self._start(c) for c in range(upfront or 1 if self._lazy_launch else n)]
            try:
                # (inside the try: a run refused before this point, e.g. an argument that does not bind, leaves
                # a caller's machine recording as before; one refused after it is reset by `abort_kernel`)
                machine.begin_compiled_run()
                if order == "sequential":
                    self._sequential(gens)
                else:
                    self._interleave(gens, random.Random(seed))
            except LaunchWider as e:       # RELAUNCH_WIDER: again, on one core per block of the count
                machine.release_held(keep=False)
                if e.upfront:              # ... every launched core from the start (a barrier before the launch op)
                    upfront = e.count
                n = max(n, e.count)
                continue
            except BaseException:          # a machine the caller reuses starts its next run clean
                machine.abort_kernel()
                raise
            finally:                       # ended (or failed) before any launch op: its output stands
                self._end_step(machine, machine.release_held)
            break
        self._end_step(machine, machine.end_kernel)
        self.reports = list(machine.reports)
        self.reports_dropped = machine.reports_dropped
        self.warned_reports = set(machine.warned_reports)
        self.warned_dropped = machine.warned_dropped
        self.unwritten_outputs, self.unwritten_maps = self._unwritten_outputs(machine, regions, aliases)
        outputs = {}
        for a, (region, arr) in regions.items():
            data = region.buffer.data
            if a in aliases:                                 # the input's memory, in the output's dtype and shape
                data = data[:a.nbytes]
                final = data if a.dtype.bits < 8 else data.view(a.dtype.storage).reshape(a.shape)
            else:
                final = data if a.dtype.bits < 8 else data.view(a.dtype.storage).reshape(region.shape)
            if a.io in ("out", "inout"):
                outputs[a.name] = final = final.copy()
            if write_back and arr is not None and a.io in ("in", "inout"):     # no temporary copy of inputs
                np.copyto(arr, final.reshape(arr.shape), casting="unsafe")
        return outputs

    def _verify_on(self, target) -> None:
        """A run on a machine of another target than the program's: every op's verifier (dtype combinations,
        spaces, clauses the target has) checks the recorded call against that target first, once per target,
        raising the error recording it for that target would have raised (named choice
        `VERIFY_ON_ANOTHER_TARGET`). The bound ops' per-target checks (flags, lanewise vector ops, moves) ran
        on every target already; a mad of a dtype combination the target lacks ran unchecked."""
        if not VERIFY_ON_ANOTHER_TARGET or any(t is target for t in self._verified_targets):
            return
        for st in walk_stmts(self.program.body):
            if type(st) is OpStmt and st.call.spec.verify is not None:
                try:
                    st.call.spec.verify(st.call, target)
                except PtoError as e:
                    located_op_error(e, st.call.spec, st.call.operands, st.where, target)
                    raise
        self._verified_targets.append(target)

    @staticmethod
    def _unwritten_outputs(machine, regions: dict, aliases: dict) -> dict:
        """``{output name: (bytes not written, bytes, first such byte)}`` of the outputs whose bytes the
        kernel did not all write (never stored, or stored from data nothing wrote): they hold the launch
        fill, where hardware would return stale memory; and ``{output name: per-byte written map}`` of
        those outputs (a front end whose result is a view of the output narrows the count to it). Both
        empty with ``uninitialized="off"``."""
        found, maps = {}, {}
        if machine.options.uninitialized == "off":
            return found, maps
        for a, (region, _) in regions.items():
            written = region.buffer.written
            if a.io != "out" or a in aliases or not written.flags.writeable:
                continue
            missing = int(written.size - np.count_nonzero(written))
            if missing:
                found[a.name] = (missing, int(written.size), int(np.argmin(written)))
                maps[a.name] = written.copy()
        return found, maps

    def _check_inputs(self, inputs: dict):
        prog = self.program
        need = {a.name for a in prog.gm_args if a.io in ("in", "inout")} | {a.name for a in prog.scalar_args}
        missing = sorted(need - set(inputs))
        extra = sorted(set(inputs) - need)
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(missing))
            if extra:
                parts.append("unexpected " + ", ".join(extra))
            raise ConfigError(f"inputs of kernel {prog.name!r}: " + "; ".join(parts), operand="inputs",
                              limit="expected " + (", ".join(sorted(need)) or "no inputs"),
                              hint="pass every in/inout tensor and scalar argument by name, nothing else")

    def _aliases(self, alias: dict) -> dict:
        """``{out GmArg: in GmArg}`` of a ``run(alias=)`` mapping, checked: an output (not zero-filled,
        with a static shape) onto an ``in``/``inout`` argument of at least its size."""
        if not alias:
            return {}
        by_name = {a.name: a for a in self.program.gm_args}
        out = {}
        for o, i in alias.items():
            a, b = by_name.get(o), by_name.get(i)
            if a is None or b is None or a.io not in ("out", "workspace") or b.io not in ("in", "inout"):
                outs = ", ".join(x.name for x in self.program.gm_args if x.io in ("out", "workspace")) or "none"
                ins = ", ".join(x.name for x in self.program.gm_args if x.io in ("in", "inout")) or "none"
                raise ConfigError(f"alias {o!r} -> {i!r}: needs an out/workspace GM argument onto an in/inout one "
                                  f"(outputs: {outs}; inputs: {ins})",
                                  operand="alias", value=(o, i), limit=f"outputs: {outs}; inputs: {ins}",
                                  hint="map the output's name to the name of the input it shares memory with")
            if a.fill == "zero" or a.init is not None or a.shape is None:
                raise ConfigError(f"alias {o!r} -> {i!r}: {o!r} is cleared or initialised before launch (or has "
                                  f"no shape), so it cannot share the input's data", operand="alias", value=(o, i),
                                  hint="declare the output without fill=\"zero\" or init= and with a shape, or drop "
                                       "the alias")
            if b.shape is not None and a.nbytes > b.nbytes:
                raise ConfigError(f"alias {o!r} -> {i!r}: the output needs {a.nbytes} B, the input has {b.nbytes} B",
                                  operand="alias", value=(o, i), limit=f"<= {b.nbytes} B")
            out[a] = b
        return out

    def _bind_args(self, machine: Machine, inputs: dict, aliases: dict):
        regions = {}
        taken = {r.name for r in machine.gm.regions}
        ours = set()                # names this run has bound: a clash among them is shown with its suffix
        bound = {}
        for a in sorted(self.program.args, key=lambda x: x in aliases):     # aliased outputs after the rest
            if isinstance(a, ScalarArg):
                bound[a] = _scalar_input(a, inputs[a.name])
                continue
            if a in aliases:
                region, _ = regions[aliases[a]]
                if region.size < a.nbytes:
                    raise ConfigError(f"alias {a.name!r} -> {aliases[a].name!r}: the output needs {a.nbytes} B, "
                                      f"the input has {region.size} B", operand="alias", limit=f"<= {region.size} B")
                if a.name not in region.aliases:
                    region.aliases += (a.name,)
                regions[a] = (region, None)
                bound[a] = region.base
                continue
            name = a.name
            k = 1
            while name in taken:
                k += 1
                name = f"{a.name}#{k}"
            taken.add(name)
            shown = name if a.name in ours else a.shown or a.name      # an earlier run's 'x' here: still 'x'
            ours.add(a.name)
            arr = None
            data = None
            if a.io in ("in", "inout"):
                arr = inputs[a.name]
                data = _tensor_input(a, arr)
            elif a.init is not None:
                data = _init_data(a)
            fill = a.fill
            shape = a.shape if a.shape is not None else tuple(np.shape(arr))      # host buffer: the array's shape
            nbytes = a.nbytes if a.shape is not None else int(np.size(arr)) if a.dtype.bits < 8 else \
                a.dtype.nbytes(int(np.prod(shape)))
            region = machine.gm.alloc(nbytes, name=name, dtype=a.dtype, shape=shape, data=data, fill=fill,
                                      shown=shown)
            if fill == "zero":       # cleared by the framework before launch (TIK is_atomic_add): initialised data
                region.buffer.mark_all_written()
            regions[a] = (region, arr if isinstance(arr, np.ndarray) else None)
            bound[a] = region.base
        return [bound[a] for a in self.program.args], regions

    # -- scheduling
    def _launch(self, live: list) -> None:
        """Start the cores below ``machine.launch_width`` not started yet (`LAUNCH_OPS`); append them to ``live``."""
        started = self._started
        while started < self.machine.launch_width:
            live.append(self._start(started))
            started += 1
        self._started = started

    def _drive(self, core: int, gen, live: list) -> bool:
        """Run one core until it ends (False) or reaches an all-core barrier (True)."""
        try:
            for token in gen:
                if token is _BARRIER:
                    return True
                if token is _LAUNCH:
                    self._launch(live)
        except Exception as e:  # noqa: BLE001 - re-raised with context
            self._decorate(e, core)
            raise
        if self.machine.release_finished:
            self.machine.release_core(core)
        return False

    def _sequential(self, gens: list):
        """Core 0 to completion (or to the next barrier), then core 1, ...; repeated per barrier phase.
        Cores a launch op starts join the phase it was issued in."""
        live = list(gens)
        self._started = len(gens)
        self._barrier_mismatch_reported = self._barrier_batches_reported = False
        races = self.machine.gm_races
        while live:
            phase, live = live, []
            i = 0
            while i < len(phase):                       # `_launch` may append to the phase
                c, g = phase[i]
                if self._drive(c, g, phase):
                    live.append((c, g))
                i += 1
            if live and len(live) < len(phase):
                self._report_barrier_mismatch(live, [c for c, g in phase if all(c != w for w, _ in live)])
            if live:
                self._report_barrier_batches(live)
            if live and races is not None:
                races.next_phase()                      # every core reached the barrier (or ended)

    def _report_barrier_mismatch(self, waiting: list, ended: list) -> None:
        """A ``("sync", ...)`` report (once per run) when an all-core barrier releases cores only because
        the other cores of the launch ended without reaching it. Named choice BARRIER_COUNT_MISMATCH: the
        scheduler still releases them (``pto.sync_all`` waits for every core "or ended", pto_sync.md), but on
        the device TIK's ``block_barrier`` / AscendC ``SyncAll`` waits until every core of the launch has
        arrived, so such a kernel hangs: every core must pass the same number of barriers."""
        if self._barrier_mismatch_reported:
            return
        self._barrier_mismatch_reported = True
        sites = {self._paused_site(g) for _, g in waiting}
        site = "".join(sorted(at_site(w, "pto.sync_all") for w in sites if w is not None))
        waiting_cores, ended = sorted(c for c, _ in waiting), sorted(ended)
        cores = ", ".join(str(c) for c in waiting_cores[:8]) + (" ..." if len(waiting_cores) > 8 else "")
        gone = ", ".join(str(c) for c in ended[:8]) + (" ..." if len(ended) > 8 else "")
        msg = (f"pto.sync_all (TIK block_barrier){site}: core(s) {cores} wait at the all-core barrier while "
               f"core(s) {gone} ended without reaching it; on the device the barrier waits for every core of the "
               f"launch and the kernel hangs. Fix: make every core pass the same barriers (move block_barrier out "
               f"of if_scope / core-dependent loops)")
        self.machine.report("sync", msg, warned=True)
        self.machine.warn(msg, BarrierCountWarning, _first_site(sites), stacklevel=2)

    def _report_barrier_batches(self, waiting: list) -> None:
        """A ``("sync", ...)`` report and a `BarrierCountWarning` (once per run) when cores reach an all-core
        barrier in a launch of more blocks than the chip runs at once. Named choice
        BARRIER_NEEDS_RESIDENT_BLOCKS: the simulator runs every block of a launch at once, but the device
        runs the blocks beyond its core count (`ChipProfile.resident_blocks`) in later batches, which cannot
        start before the first batch ends -- and it waits at the barrier: the kernel hangs. Source:
        AscendC's inter-core sync pages (SyncAll, NotifyNextBlock / WaitPreBlock): the logical blockDim
        "must not exceed the number of AI cores that run the operator, otherwise the framework inserts
        abnormal synchronisation when it schedules several rounds and the kernel hangs"."""
        target = self.machine.target
        if self._barrier_batches_reported or self._launch_n <= target.resident_blocks:
            return
        self._barrier_batches_reported = True
        sites = {self._paused_site(g) for _, g in waiting}
        site = "".join(sorted(at_site(w, "pto.sync_all") for w in sites if w is not None))
        cores = target.resident_blocks
        msg = (f"pto.sync_all (TIK block_barrier){site}: the launch has {self._launch_n} blocks but "
               f"{target.name} runs {cores} at a time; the device runs the other blocks in later batches, "
               f"which never start while the first batch waits at this all-core barrier, so the kernel hangs. "
               f"Fix: launch at most {cores} blocks (block_num <= the chip's core count, e.g. "
               f"tbe_platform.get_soc_spec(\"CORE_NUM\")) and loop over the work inside each block, or pick "
               f"the chip the kernel is meant for (tik-run --soc)")
        self.machine.report("sync", msg, warned=True)
        self.machine.warn(msg, BarrierCountWarning, _first_site(sites), stacklevel=2)

    def _paused_site(self, g):
        """The provenance of the op a core's kernel generator is paused at (an all-core barrier), or None."""
        fr = getattr(g, "gi_frame", None)
        if fr is None:
            return None
        stmt, _ = self._line_info.get(fr.f_lineno, (None, ()))
        if isinstance(stmt, dict):
            stmt = stmt.get(fr.f_locals.get("__op"))
        return getattr(stmt, "where", None)

    def _interleave(self, gens: list, rng: random.Random):
        live = list(gens)
        self._started = len(gens)
        self._barrier_mismatch_reported = self._barrier_batches_reported = False
        waiting = []
        ended = []
        while live or waiting:
            if not live:                      # every running core reached the barrier: release them
                if ended:
                    self._report_barrier_mismatch(waiting, ended)
                self._report_barrier_batches(waiting)
                live, waiting, ended = waiting, [], []
                if self.machine.gm_races is not None:
                    self.machine.gm_races.next_phase()
            i = rng.randrange(len(live))
            c, g = live[i]
            try:
                token = next(g)
            except StopIteration:
                live.pop(i)
                ended.append(c)
                if self.machine.release_finished:
                    self.machine.release_core(c)
                continue
            except Exception as e:  # noqa: BLE001 - re-raised with context
                self._decorate(e, c)
                raise
            if token is _BARRIER:
                waiting.append(live.pop(i))
            elif token is _LAUNCH:
                self._launch(live)

    def _register_of(self, e: NameError):
        """The register (or other IR value) whose generated name a NameError is about, or None."""
        name = getattr(e, "name", None)
        if name is None:
            return next((v for k, v in self._py_names.items() if f"'{k}'" in str(e)), None)
        return self._py_names.get(name)

    def _decorate(self, e: BaseException, core: int):
        """Attach provenance, core and loop indices from the kernel frame where ``e`` was raised."""
        tb = e.__traceback__
        frame_tb = None
        while tb is not None:
            if tb.tb_frame.f_code is self._code:
                frame_tb = tb
            tb = tb.tb_next
        if frame_tb is None:
            if isinstance(e, PtoError):
                e.add_context(core=core)
            return
        stmt, loops = self._line_info.get(frame_tb.tb_lineno, (None, ()))
        f_locals = frame_tb.tb_frame.f_locals
        if isinstance(stmt, dict):          # the call line of a run of bound ops: the op that ran
            stmt = stmt.get(f_locals.get("__op"))
        context = {"core": core}
        for var in loops:
            if HIDDEN_LOOP_VARS and getattr(var, "hidden", False):
                continue
            py = next((k for k, v in self._py_names.items() if v is var), None)
            if py is not None and py in f_locals:
                key = var.name or "i"
                while key in context:
                    key += "'"
                context[key] = f_locals[py]
        where = getattr(stmt, "where", None)
        if isinstance(e, PtoError):
            if e.op is None and isinstance(stmt, OpStmt):
                e.op = stmt.call.spec.asm_name
            e.with_where(where)
            e.add_context(**context)
        elif isinstance(e, NameError) and self._register_of(e) is not None:
            # a register read before any assignment: on a path that skips it (UnboundLocalError), or one the
            # kernel never assigns at all (then the generated code has no such local: NameError)
            reg = self._register_of(e)
            name = f"%{reg.name}" if reg.name else repr(reg)
            decl = f" (declared at {reg.declared})" if getattr(reg, "declared", None) else ""
            err = UninitializedRead(f"register {name}{decl} is read before any assignment", operand=name,
                                    where=where, hint="give it a value before the read on every path (TIK: "
                                                      "Scalar(..., init_value=v) or s.set_as(v); PTO: "
                                                      "k.reg(dtype, init))")
            err.add_context(**context)
            raise err from None
        else:
            ctx = ", ".join(f"{k}={v}" for k, v in context.items())
            e.add_note(f"in PTO kernel {self.program.name!r} at {where} [{ctx}]")


def _scalar_input(a: ScalarArg, value):
    t = a.type
    if isinstance(value, np.generic):
        value = value.item()
    if S.is_float(t):
        if not isinstance(value, (int, float)):
            raise ConfigError(f"scalar argument {a.name!r} needs a number, got {value!r}", operand=a.name,
                              hint="pass a Python int or float (or numpy number) for a float scalar argument")
        return S.normalize(value, t)
    if isinstance(value, float) or not isinstance(value, (int, bool)):
        raise ConfigError(f"scalar argument {a.name!r} ({t.pto_name}) needs an integer, got {value!r}",
                          operand=a.name, value=value,
                          hint="pass a Python int (or numpy integer) for an integer scalar argument")
    lo, hi = S.int_bounds(t)
    if not lo <= int(value) <= hi:
        raise ConfigError(f"scalar argument {a.name!r} = {value} does not fit {t.pto_name}", operand=a.name,
                          value=value, limit=f"[{lo}, {hi}]")
    return bool(value) if S.is_bool(t) else int(value)


def _tensor_input(a: GmArg, arr):
    arr = np.asarray(arr)
    d = a.dtype
    if d.bits < 8 or d.storage == np.uint8 and d.name not in ("u8",):
        if arr.dtype != np.uint8 or (a.shape is not None and arr.size != a.nbytes):
            raise ConfigError(f"input {a.name!r} ({d.name}) is given as {a.nbytes} raw bytes (uint8), got "
                              f"{arr.dtype} with {arr.size} elements", operand=a.name, value=str(arr.dtype),
                              hint="pack the values first (two 4-bit values per byte, element 0 in the low nibble)")
        return arr
    if arr.dtype != d.storage:
        raise ConfigError(f"input {a.name!r} must have dtype {d.storage} ({d.name}), got {arr.dtype}",
                          operand=a.name, value=str(arr.dtype), limit=str(d.storage),
                          hint=f"convert it: arr.astype({d.storage.name!r})")
    if a.shape is not None and tuple(arr.shape) != a.shape:
        raise ConfigError(f"input {a.name!r} must have shape {a.shape}, got {tuple(arr.shape)}", operand=a.name,
                          value=tuple(arr.shape), limit=a.shape,
                          hint=f"pass an array of the declared shape (arr.reshape({a.shape}) if the size matches)")
    return arr


def _init_data(a: GmArg):
    # An integer tensor's values stay Python ints up to the one cast to its storage: numpy types a mix such as
    # (2**64 - 1, 3) as float64, which rounds 2**63 + 1 and turns 2**64 - 1 into 0 in the uint64 cast.
    vals = np.asarray(a.init) if a.dtype.is_float else np.asarray(a.init, dtype=object)
    if vals.size not in (1, a.count):
        raise ConfigError(f"init of {a.name!r} has {vals.size} values, the tensor has {a.count}", operand=a.name,
                          value=vals.size, limit=a.count)
    if a.dtype.bits < 8:
        raise ConfigError(f"init= is not supported for packed type {a.dtype.name}", operand=a.name,
                          hint="fill the packed tensor from a kernel input instead, or declare it with a byte-sized "
                               "dtype")
    if a.dtype.is_float and vals.dtype.kind in "biuf":
        # one round-to-nearest-even from the exact value (a bf16 cast through float32 would round twice, and
        # numpy warns on overflow where the conversion is simply inf), as a float Scalar's init_value rounds
        from .numerics.floats import float_to
        coded = float_to(vals.astype(np.float64), a.dtype, rounding="even", sat="nosat")
        return np.broadcast_to(coded.view(a.dtype.storage).reshape(-1), (a.count,)).copy()
    storage = np.dtype(a.dtype.storage)
    if storage.kind in "iu":
        info = np.iinfo(storage)
        bad = next((v for v in vals.reshape(-1).tolist() if not info.min <= int(v) <= info.max), None)
        if bad is not None:
            raise ConfigError(f"init of {a.name!r}: {bad!r} does not fit {a.dtype.name}", operand=a.name,
                              value=repr(bad)[:40], limit=f"[{info.min}, {info.max}]",
                              hint=f"give {a.dtype.name} values in [{info.min}, {info.max}] (values are never wrapped)")
        vals = np.array([int(v) for v in vals.reshape(-1).tolist()], dtype=storage)
    return np.broadcast_to(vals.astype(a.dtype.storage), (a.count,)).copy()


def compile_program(prog: Program, probes=()) -> Executable:
    """Compile ``prog`` into an `Executable` (generated Python; compiled once), with the
    observer `Probe` calls ``probes`` compiled in."""
    return Executable(prog, tuple(probes))


def run(prog: Program, inputs: Optional[dict] = None, **kw) -> dict:
    """``prog.compile().run(inputs, **kw)``."""
    return prog.compile().run(inputs, **kw)


__all__ = ["compile_program", "run", "Executable", "Probe"]
