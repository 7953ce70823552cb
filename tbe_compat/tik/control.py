"""Control flow: ``for_range``, ``if_scope``/``elif_scope``/``else_scope``, ``new_stmt_scope``,
``tik_break``/``tik_continue``/``tik_return``.

Each returns a context manager; entering it records the PTO loop/if in the program
(`pto_core.program.Builder.for_` / ``if_``), leaving it closes the block, frees the
on-chip tensors the body declared (TIK scoping) and lets auto-sync handle the back edge
or the branch join. Python-level ``for``/``if`` in the script simply unroll at trace time.

``for_range(0, N, block_num=N)`` is the multi-core loop: the kernel runs on N simulated
cores, the loop variable is the core index (``pto.get_block_idx``). ``thread_num``
(double buffering) has no semantic effect and is accepted (0..4).

``block_num`` may also be a tik Scalar the kernel computes (CANN dynamic-shape operators
read it from their tiling tensor: ``for_range(0, core_num, block_num=core_num)``; the host
launches the block count its tiling chose, which the kernel reads back). The simulator starts
core 0 alone; where it reaches the loop, ``pto.launch_blocks`` starts cores 1..value-1 from the
kernel's beginning, so code outside the loop runs on exactly the launched cores (a kernel that
never reaches the loop runs on one core). The body runs on the cores whose index is below the
value (the loop spans ``CORE_NUM`` indices); a value above ``CORE_NUM`` (legal: TIK's block_num range
is [1, 65535] and the runtime runs the extra blocks in batches) relaunches the kernel on that many
cores (RELAUNCH_WIDER, `pto_core.interpreter`); a value outside ``[1, 65535]`` is a run-time
`IllegalOperand` (``pto.assert_in_range``).
"""
from __future__ import annotations

import math

import numpy as np

from pto_core import program as P
from pto_core import scalars as S
from pto_core.errors import PtoError, UnsupportedOp
from pto_core.interpreter import MAX_LAUNCH_BLOCKS

from .. import platform
from .api import TikBase, tik_api
from .errors import convert
from .scalar import FLOAT_COMPARE_BANNED, FLOAT_COMPARE_BANNED_DEFAULT, Expr, InputScalar, Scalar, static_int, \
    zero_d_value

#: Integer dtypes a for_range loop variable may have.
LOOP_DTYPES = ("int32", "int64", "uint32", "uint64", "int16", "uint16", "int8", "uint8")
#: TIK's loop kinds (CANN 8.1 ``TikIRBuilder._get_for_type_id`` / ``_get_attr_key``): no effect on results.
FOR_TYPES = ("serial",)
THREAD_TYPES = ("whole", "partial")
#: The largest block_num of a multi-core for_range (TIK reference: "an immediate in [1, 65535]"), the
#: bound the interpreter puts on every launch.
MAX_BLOCK_NUM = MAX_LAUNCH_BLOCKS


#: Named choice STATIC_IF_CHAIN: after an ``if_scope``/``elif_scope`` whose condition is a Python
#: true value (``if_scope(window > 64)`` with a Python ``window``), the chain's later ``elif_scope`` /
#: ``else_scope`` bodies are code that never runs, like an ``if_scope`` on a Python False: a call
#: there whose immediate arguments fail a check is dropped (constant folding removes it), not an
#: error. CANN's moving_sum_with_sigmoid keeps ``vec_reduce_add(window, ...)`` in the else of
#: ``if_scope(window > 64)`` and its UT builds window 250 and 512 ("expect": "success");
#: migration_guide/tik_core.md (if_scope row).
STATIC_IF_CHAIN = True
#: Named choice FOR_RANGE_FLOAT_END_TRUNCATED: a Python float ``endt`` of ``for_range`` is truncated toward zero
#: (``for_range(0, 5.7)`` runs 5 times), as TIK's ``_init_for_range_params`` does ("if isinstance(endt, float):
#: endt = int(endt)  # for python3"; TIK tik_ir_builder.py, 2019); CANN's in_top_k passes a float end computed
#: with ``BLOCK_SIZE / element_bytes``. ``isinstance`` as in TIK: a ``np.float64`` (``np.ceil(n / 16)``) is a float
#: too; ``np.float32``/``np.float16`` are not. Other integer arguments still refuse a fraction. tik_core.md.
FOR_RANGE_FLOAT_END_TRUNCATED = True
#: Named choice SHORT_BUFFERED_LOOP_ACCEPTED: a constant ``for_range(lo, hi, thread_num=n)`` with
#: ``0 < hi - lo < n`` (``for_range(0, 1, thread_num=2)``) is accepted and runs its ``hi - lo`` iterations.
#: TIK versions differ: the te.tik ``TikIRBuilder._check_extent_num`` (tik_ir_builder.py, 2019-2020, ``from te
#: import tvm``) raised "for_range end-begin(%d) should be more than thread_num(%d)"; CANN 8.1.RC1's
#: (tbe/tik/api/tik_ir_builder.py) checks only ``extent >= 0``. The check did not protect hardware semantics:
#: both versions lower the buffered loop to ``for f in [0, ceil(extent / n)): for t in [0, n): if f*n+t <
#: extent: body`` (``_get_max_if_condition`` / ``_create_stmt_for_double_buffer``), so the buffer copies
#: past the extent are guarded off and the loop runs exactly ``extent`` iterations. The current CANN
#: behaviour is followed (False restores the old refusal). Tensors declared in the body still book ``n``
#: copies (THREAD_NUM_RESERVES_COPIES). tik_core.md (for_range row).
SHORT_BUFFERED_LOOP_ACCEPTED = True
#: Named choice FREED_TENSORS_UNWRITTEN: when a user scope (new_stmt_scope, a for_range / if body) ends, the bytes
#: of the on-chip tensors it declared are marked never written (``pto.mark_unwritten``), so a tensor declared
#: later over them and read before it is written is reported by the uninitialised-read check. tik_api.md only
#: says such tensors are freed ("using them after exit is an error in TIK") and that uninitialised buffers hold
#: random bytes in the debugger; whether a re-declared tensor sees its predecessor's bytes is not documented.
#: A lowering's own scratch is always marked (`_Scope.lowering`, `CubeBase._cube_scratch`). tik_core.md.
FREED_TENSORS_UNWRITTEN = False
#: Scalar types a condition Expr may not contain (if_scope / elif_scope reference: float16 on every chip, float16
#: and float32 on Ascend310, Atlas 200/300/500 inference): the table of FLOAT_COMPARE_CANN81_WARN (scalar.py)
_FLOAT_COND_BANNED = FLOAT_COMPARE_BANNED


def _reads_var(block, var) -> bool:
    """Whether any statement of ``block`` (nested blocks included) evaluates an expression that reads ``var``."""
    return any(node is var for st in P.walk_stmts(block) for e in P.stmt_exprs(st) for node in P.walk(e))


def _leaves(ir):
    """The registers, arguments and loop variables an IR scalar expression reads (shared nodes of a DAG
    entered once)."""
    if not isinstance(ir, P.ScalarExpr):
        if not isinstance(ir, P.Const):
            yield ir
        return
    for x in P.walk(ir):
        if not x.children() and not isinstance(x, P.Const):
            yield x


class _Block:
    """Context manager of one TIK scope (see module doc)."""

    def __init__(self, tik, kind: str, where, enter, leave=None, conditional: bool = False, dead: bool = False,
                 taken: bool = False):
        self.tik, self.kind, self.where = tik, kind, where
        self._enter, self._leave = enter, leave
        self.conditional = conditional
        self.dead = dead
        #: if/elif: this branch or an earlier one of its chain is statically taken (a Python-true
        #: condition), so the chain's later elif/else branches never run (`STATIC_IF_CHAIN`)
        self.taken = taken
        self._scope = None
        self._value = None
        #: a for_range's thread_num (None: not a loop TIK's buffer manager tracks, e.g. multi_for_range's)
        self.thread_num = None
        #: opened by a lowering inside another API call (`_Scope.lowering`)
        self.lowering = False
        #: a new_stmt_scope(disable_sync=True) (`_Scope.disable_sync`)
        self.disable_sync = False

    def __enter__(self):
        tik = self.tik
        try:
            with tik._api_at(self.where):
                self._scope, _ = self._enter()
        except PtoError:
            if not any(sc.dead for sc in tik._scopes):
                raise
            self._drop()             # in code that never runs (an elif/else after a dropped if_scope)
        from .container import _Scope
        sc = _Scope(self.kind, self.conditional, self.dead)
        if self.thread_num is not None:      # TIK's _set_buffer_num (THREAD_NUM_RESERVES_COPIES)
            outer = next((s.buffer_num for s in reversed(tik._scopes) if s.buffer_num is not None), 1)
            sc.buffer_num = 1 if self.thread_num == 0 else max(outer, self.thread_num)
            sc.double_buffered = self.thread_num > 1
        sc.lowering = self.lowering
        sc.disable_sync = self.disable_sync
        tik._scopes.append(sc)
        if self._scope is None:
            return 0 if self.dead and self.kind == "for" else None
        value = self._scope.__enter__()
        if value is None:
            return None
        out = Expr(value)
        if tik._loop_exprs is not None:     # recording call owners (tik-migrate --format python)
            tik._loop_exprs[id(out)] = out
        return out

    def _drop(self):
        """Make this a dead block that records nothing (`_DroppedBlock`)."""
        self._scope, self._enter, self._leave = None, (lambda: (None, None)), None
        self.conditional = self.dead = True

    def __exit__(self, exc_type, exc, tb):
        tik = self.tik
        if self.kind in ("if", "elif"):
            tik._chain_taken = self.taken    # read by the elif_scope/else_scope that may follow
        scope = tik._scopes.pop()
        try:
            if exc_type is None:
                with tik._api_at(self.where):
                    if self._leave is not None:
                        self._leave()
                    if scope.storages and (scope.lowering or FREED_TENSORS_UNWRITTEN):
                        tik._forget_freed(scope.storages)
        finally:
            tik._release(scope.storages)
            if self._scope is not None:
                self._scope.__exit__(exc_type, exc, tb)
        return False


class _DroppedBlock(_Block):
    """The block of a ``for_range`` / ``if_scope`` / ... call dropped in code that never runs (its own
    checks failed there, e.g. an ``if_scope`` on a float16 Scalar under ``if_scope(False)``): a dead
    scope, so the calls in its body are dropped too; a loop's variable is 0 (never used at run time)."""

    def __init__(self, tik, kind: str, where):
        super().__init__(tik, kind, where, lambda: (None, None), None, conditional=True, dead=True)


#: TIK block APIs (``with tik_instance.<api>(...)``) -> the kind of scope they open
BLOCK_APIS = {"tik.for_range": "for", "tik.if_scope": "if", "tik.elif_scope": "elif", "tik.else_scope": "else",
              "tik.new_stmt_scope": "stmt", "tik.new_scope": "stmt"}


class _GuardedScope:
    """The block loop of a Scalar ``block_num``: enters the loop over the launched cores, checks
    the Scalar's run-time value and opens ``if block_idx < value``; leaves both."""

    def __init__(self, tik, loop, count, width, where):
        self.tik, self.loop, self.count, self.width, self.where = tik, loop, count, width, where
        self.guard = None

    def __enter__(self):
        idx = self.loop.__enter__()
        tik = self.tik
        with tik._api_at(self.where):
            tik._emit("assert_in_range", P.cast(self.count.ir, P.I64), 1, MAX_LAUNCH_BLOCKS,
                      what=f"block_num Scalar {self.count.name!r} (TIK's block_num range)")
            tik._emit("launch_blocks", P.cast(self.count.ir, P.I64))
            tik._sync.begin_if()
            self.guard = tik._builder.if_(P.cmp("lt", P.cast(idx, P.I64), P.cast(self.count.ir, P.I64)),
                                          where=self.where)
        self.guard.__enter__()
        return idx

    def __exit__(self, exc_type, exc, tb):
        try:
            if self.guard is not None:
                self.guard.__exit__(exc_type, exc, tb)
        finally:
            self.loop.__exit__(exc_type, exc, tb)
        return False


class ControlAPI(TikBase):
    """The control-flow family (mixin of `tbe_compat.tik.Tik`)."""

    def _dropped_result(self, api: str, where):
        kind = BLOCK_APIS.get(api)
        return super()._dropped_result(api, where) if kind is None else _DroppedBlock(self, kind, where)

    def _api_at(self, where):
        """Re-enter the provenance of a ``with`` statement (for statements recorded at enter/exit)."""
        return _AtCall(self, where)

    @tik_api("for_range")
    def for_range(self, begint, endt, name="i", thread_num=1, thread_type="whole", block_num=1, dtype="int32",
                  for_type="serial", subblock_num=0, sub_dtype="int32", enable_subblk=False):
        """``with tik_instance.for_range(begin, end[, block_num=N][, thread_num=2]) as i:``"""
        where = self._where
        lo = self._int_arg(begint, "begint")
        if FOR_RANGE_FLOAT_END_TRUNCATED and isinstance(endt, float) and math.isfinite(endt):
            endt = int(endt)                        # TIK: `if isinstance(endt, float): endt = int(endt)` (np.float64 too)
        hi = self._int_arg(endt, "endt")
        tn = static_int(thread_num)
        if tn is None or not 0 <= tn <= 4:
            raise self._error(f"thread_num must be an int in [0, 4], got {thread_num!r}", operand="thread_num",
                              value=thread_num, limit="[0, 4]",
                              hint="pass 1 (no buffering), 2 (double buffering) ... 4, or 0")
        self._check_loop_kinds(for_type, thread_type if tn > 1 else None)
        self._scalar_dtype(dtype)
        if dtype not in LOOP_DTYPES:
            raise self._error(f"loop dtype must be an integer dtype, got {dtype}", operand="dtype", value=dtype,
                              limit=", ".join(LOOP_DTYPES), hint="pass dtype='int32' (TIK's default)")
        lo_b, hi_b = S.int_bounds(P.scalar_type(dtype))
        for v, nm in ((lo, "begint"), (hi, "endt")):
            if isinstance(v, int) and not lo_b <= v <= hi_b:
                # the loop variable could not hold it (the loop would wrap): TIK's 0 <= begint <= endt <= 2**31-1
                raise self._error(f"{nm} = {v} does not fit the loop's {dtype} variable", operand=nm, value=v,
                                  limit=f"[{lo_b}, {hi_b}]",
                                  hint=f"keep the bounds in [{lo_b}, {hi_b}] (split the loop), or pass a wider dtype")
        bn = block_num
        nb = static_int(bn)
        if nb is not None and not isinstance(bn, bool) and nb > MAX_BLOCK_NUM:
            raise self._error(f"block_num = {nb} is outside [1, {MAX_BLOCK_NUM}]", operand="block_num", value=nb,
                              limit=f"[1, {MAX_BLOCK_NUM}]",
                              hint="launch at most 65535 blocks (the runtime schedules more blocks than cores "
                                   "in batches)")
        if isinstance(bn, Scalar) and static_int(bn) is None:
            return self._dynamic_block_loop(lo, endt, bn, tn, name, dtype, where)
        multicore = isinstance(bn, InputScalar) or (static_int(bn) is not None and static_int(bn) > 1)
        if not multicore:
            if static_int(bn) is None or static_int(bn) < 1:
                raise self._error(f"block_num must be a positive int or an InputScalar, got {block_num!r}",
                                  operand="block_num", value=repr(block_num), limit=">= 1",
                                  hint="pass block_num=1 (one core) or the number of cores as an int")
            if isinstance(lo, int) and isinstance(hi, int) and hi < lo:
                raise self._error(f"for_range({lo}, {hi}): endt is below begint", operand="endt", value=hi,
                                  limit=f">= begint ({lo})",
                                  hint="TIK requires begint <= endt for constant bounds (end - begin >= 0); "
                                       "an empty loop is for_range(n, n)")
            short = isinstance(lo, int) and isinstance(hi, int) and 0 < hi - lo < tn
            if short and not SHORT_BUFFERED_LOOP_ACCEPTED:
                raise self._error(f"for_range({lo}, {hi}, thread_num={tn}): {hi - lo} iteration(s) cannot be split "
                                  f"into {tn} buffers", operand="thread_num", value=tn, limit=f"<= {hi - lo}",
                                  hint="te.tik (before CANN 8.x) requires end - begin >= thread_num when the loop "
                                       "runs; use thread_num=1 for short loops (`thread_num = 2 if n > 1 else 1`)")
            runs = isinstance(lo, int) and isinstance(hi, int) and hi > lo
            empty = isinstance(lo, int) and isinstance(hi, int) and hi == lo
            opened = []
            blk = _Block(self, "for", where, lambda: self._open_loop(lo, hi, name, dtype, where, opened),
                         lambda: self._close_loop(opened), conditional=not runs, dead=empty)
            blk.thread_num = tn
            return blk
        if tn not in (0, 1):
            raise self._error(f"thread_num must be 0 or 1 on the multi-core loop, got {tn}", operand="thread_num",
                              value=tn, limit="0 or 1",
                              hint="drop thread_num from the block_num loop; double-buffer an inner for_range instead")
        if not (isinstance(lo, int) and lo == 0):
            raise self._error("the multi-core loop (block_num > 1) must start at 0", operand="begint",
                              value=repr(begint), limit="0", hint="write for_range(0, n, block_num=n); the loop "
                              "variable is the core index 0..n-1 (add an offset inside the body)")
        if isinstance(bn, InputScalar):
            if endt is not bn:
                raise self._error("with block_num an InputScalar, endt must be the same InputScalar",
                                  operand="endt", value=repr(endt),
                                  hint="write for_range(0, n, block_num=n) with the same InputScalar n")
            bn_ir = bn.ir
        else:
            bn_ir = static_int(bn)
            if not (isinstance(hi, int) and hi == bn_ir):
                raise self._error(f"the multi-core loop must run 0..block_num: endt {endt!r} != block_num {bn_ir}",
                                  operand="endt", value=repr(endt), limit=f"== block_num ({bn_ir})",
                                  hint=f"write for_range(0, {bn_ir}, block_num={bn_ir}) (one iteration per core); "
                                       f"loop over each core's share in an inner for_range")
        blk = _Block(self, "block", where, lambda: self._open_block_loop(bn_ir, name, dtype, where), None)
        blk.thread_num = tn
        return blk

    @tik_api("multi_for_range")
    def _check_loop_kinds(self, for_type, thread_type=None) -> None:
        """CANN 8.1 TIK ``_get_for_type_id`` (every loop: only ``"serial"``, else "Unknown for_type") and
        ``_get_attr_key`` (a ``thread_num`` > 1 loop: ``"whole"`` or ``"partial"``). Neither changes results."""
        if not (isinstance(for_type, str) and for_type in FOR_TYPES):
            raise self._error(f"for_type {for_type!r} is not a TIK loop type", operand="for_type",
                              value=repr(for_type), limit=" or ".join(map(repr, FOR_TYPES)),
                              hint="drop for_type (TIK supports only serial loops: for_type='serial')")
        if thread_type is not None and not (isinstance(thread_type, str) and thread_type in THREAD_TYPES):
            raise self._error(f"thread_type {thread_type!r} is not a TIK double-buffer type", operand="thread_type",
                              value=repr(thread_type), limit=" or ".join(map(repr, THREAD_TYPES)),
                              hint="drop thread_type (default 'whole') or pass 'partial'")

    def multi_for_range(self, begint_list, endt_list, name="i", dtype="int32", for_type="serial"):
        """Nested loops in one statement: ``with tik_instance.multi_for_range([0, 0], [2, 3]) as (i, j):``
        (the first pair is the outermost loop)."""
        self._check_loop_kinds(for_type)
        if not isinstance(begint_list, (list, tuple)) or not isinstance(endt_list, (list, tuple)) or \
                len(begint_list) != len(endt_list) or not begint_list:
            raise self._error("begint_list and endt_list must be non-empty lists of the same length",
                              operand="endt_list", value=(begint_list, endt_list),
                              hint="pass one begin and one end per loop: multi_for_range([0, 0], [m, n])")
        loops = [self.for_range(b, e, name=f"{name}{k}", dtype=dtype)
                 for k, (b, e) in enumerate(zip(begint_list, endt_list))]
        for blk in loops:
            if isinstance(blk, _Block):
                blk.thread_num = None        # TIK's multi_for_range does not enter its buffer manager's loop stack
        return _Nested(loops)

    def _open_loop(self, lo, hi, name, dtype, where, opened):
        self._sync.begin_loop()
        scope = self._builder.for_(lo, hi, name=name if isinstance(name, str) and name.isidentifier() else "i",
                                   dtype=dtype, where=where)
        opened.append(self._builder._blocks[-1][-1])        # the `P.For` just recorded
        return scope, None

    def _close_loop(self, opened):
        self._sync.end_loop()
        if opened:
            self._reread_loop_end(opened[0])
            self._hoist_pairs(opened[0])

    def _hoist_pairs(self, loop):
        """Auto-sync pairs of the body that no iteration changes go just before the loop (autosync
        HOIST_LOOP_INVARIANT_PAIRS); called while the builder is still inside the body."""
        blocks = self._builder._blocks
        if len(blocks) < 2 or blocks[-1] is not loop.body:
            return
        parent = blocks[-2]
        for k in range(len(parent) - 1, -1, -1):
            if parent[k] is loop:
                moved = self._sync.hoist(loop.body)
                if moved:
                    parent[k:k] = moved
                return

    def _reread_loop_end(self, loop):
        """Named choice LOOP_END_REREAD: the end of a for_range is re-read before every iteration.

        TIK records ``For(i, 0, endt - begint)`` and the generated C loop tests ``i < extent`` before
        each iteration, reading the Scalars of ``endt`` anew; a body that assigns such a Scalar changes
        the trip count (CANN tabulate_fusion ends its neighbour loop by ``for_end_s.set_as(0)``, its
        ``break``). A PTO ``For`` evaluates its bounds once, so such a loop is recorded as ``for i in
        range(begint, <dtype max>)`` whose body starts with ``if not i < endt: break``. A body that
        assigns a Scalar of ``begint`` (and never reads the loop variable) is recorded as ``for c in
        range(0, <dtype max>)`` with ``if not c < endt - begint: break``. Loops whose bounds the body does
        not assign are unchanged."""
        end_regs = {id(r) for r in _leaves(loop.hi) if isinstance(r, P.Reg)}
        begin_regs = [r for r in _leaves(loop.lo) if isinstance(r, P.Reg)]
        if not end_regs and not begin_regs:
            return
        assigned = {id(s.reg) for s in P.walk_stmts(loop.body) if isinstance(s, (P.Assign, P.Load, P.ReadSpr))}
        begin_assigned = sorted({r.name or "?" for r in begin_regs if id(r) in assigned})
        if begin_assigned:
            if _reads_var(loop.body, loop.var):
                raise self._error(f"the for_range body assigns Scalar(s) {begin_assigned} of its begint and reads "
                                  f"the loop variable: TIK re-reads begint at every use of the loop variable "
                                  f"(i + begint), which is not modelled", operand="begint", cls=UnsupportedOp,
                                  hint="copy begint into a Scalar the body does not assign, or end the loop with "
                                       "tik_break()")
            # the body never reads the loop variable: only the trip test `count < endt - begint`, re-read
            # before every iteration, sees the new begint (CANN prod_env_mat_a's merge-pass loop).
            extent = P.binop("sub", loop.hi, loop.lo)
            loop.lo = P.Const(0, loop.var.type)
            loop.hi = P.Const(S.int_bounds(loop.var.type)[1], loop.var.type)
            loop.body.insert(0, P.If(P.not_(P.cmp("lt", loop.var, extent)), [P.Break(loop.where)], None,
                                     loop.where))
            return
        if not end_regs & assigned:
            return
        hi = loop.hi
        loop.hi = P.Const(S.int_bounds(loop.var.type)[1], loop.var.type)
        loop.body.insert(0, P.If(P.not_(P.cmp("lt", loop.var, hi)), [P.Break(loop.where)], None, loop.where))

    def _dynamic_block_loop(self, lo, endt, bn, tn, name, dtype, where):
        """``for_range(0, s, block_num=s)`` with a computed Scalar ``s`` (see module doc)."""
        if tn not in (0, 1):
            raise self._error(f"thread_num must be 0 or 1 on the multi-core loop, got {tn}", operand="thread_num",
                              value=tn, limit="0 or 1",
                              hint="drop thread_num from the block_num loop; double-buffer an inner for_range instead")
        if not (isinstance(lo, int) and lo == 0):
            raise self._error("the multi-core loop (block_num > 1) must start at 0", operand="begint",
                              value=repr(lo), limit="0", hint="write for_range(0, s, block_num=s); the loop "
                              "variable is the core index (add an offset inside the body)")
        if endt is not bn:
            raise self._error(f"with block_num the Scalar {bn.name!r}, endt must be the same Scalar",
                              operand="endt", value=repr(endt), hint="for_range(0, s, block_num=s)")
        width = platform.current_soc().core_num
        self._one_launch_only(where, "a Scalar block_num")

        def enter():
            loop, _ = self._open_block_loop(width, name, dtype, where)
            self._dynamic_block_loop_seen = True
            return _GuardedScope(self, loop, bn, width, where), None

        blk = _Block(self, "block", where, enter, self._sync.end_branch)
        blk.thread_num = tn
        return blk

    def _one_launch_only(self, where, what):
        """A kernel whose block count a computed Scalar chooses (``pto.launch_blocks``) has exactly one multi-core
        loop: a second launch point is not modelled (SEQUENTIAL_BLOCK_LOOPS covers static counts only)."""
        if self._dynamic_block_loop_seen or (what and self._builder._multicore):
            raise self._error("a kernel with a multi-core loop over a computed Scalar block_num may have no other "
                              "multi-core loop (its cores are launched where that loop starts)",
                              operand="block_num", cls=UnsupportedOp,
                              hint="put both bodies in one for_range(0, s, block_num=s)")

    def _open_block_loop(self, bn, name, dtype, where):
        self._one_launch_only(where, None)
        hi = bn if isinstance(bn, int) else bn
        scope = self._builder.for_(0, hi, block_num=bn, name=name if isinstance(name, str) else "i",
                                   dtype=dtype, where=where)
        return scope, None

    @tik_api("if_scope")
    def if_scope(self, cond):
        """``with tik_instance.if_scope(cond):`` (cond: TIK condition, or a Python bool)."""
        where = self._where
        c = self._cond(cond)
        always = isinstance(c, P.Const) and bool(c.value)
        never = isinstance(c, P.Const) and not bool(c.value)
        return _Block(self, "if", where, lambda: self._open_if(c, where), self._sync.end_branch,
                      conditional=not always, dead=never, taken=always)

    def _open_if(self, c, where):
        self._sync.begin_if()
        return self._builder.if_(c, where=where), None

    @tik_api("elif_scope")
    def elif_scope(self, cond):
        """``with tik_instance.elif_scope(cond):`` directly after an if_scope/elif_scope block."""
        where = self._where
        before = self._chain_taken
        c = self._cond(cond)
        static = isinstance(c, P.Const)
        return _Block(self, "elif", where, lambda: self._open_elif(c, where), self._sync.end_branch,
                      conditional=True, dead=(STATIC_IF_CHAIN and before) or (static and not bool(c.value)),
                      taken=before or (static and bool(c.value)))

    def _open_elif(self, c, where):
        self._check_follows_if("elif_scope")
        self._sync.begin_elif()
        return self._builder.elif_(c, where=where), None

    @tik_api("else_scope")
    def else_scope(self):
        """``with tik_instance.else_scope():`` directly after an if_scope/elif_scope block."""
        where = self._where
        return _Block(self, "else", where, self._open_else, self._sync.end_branch, conditional=True,
                      dead=STATIC_IF_CHAIN and self._chain_taken)

    def _open_else(self):
        self._check_follows_if("else_scope")
        self._sync.begin_elif(is_else=True)
        return self._builder.else_(), None

    def _check_follows_if(self, what):
        block = self._builder._blocks[-1]
        if not block or not isinstance(block[-1], P.If) or self._sync._open_chain is None:
            raise self._error(f"{what} must directly follow an if_scope (or elif_scope) block",
                              hint="put it right after the `with tik_instance.if_scope(...)` block")

    def _cond(self, cond):
        cond = zero_d_value(cond)               # a 0-d array (np.array(True), np.all(shape_a == shape_b))
        if isinstance(cond, (bool, int, float, np.bool_, np.integer, np.floating)) and not isinstance(cond, Expr):
            # a Python or numpy constant (``window > 64`` with a numpy ``window`` is a numpy bool): fixed at trace time
            return P.Const(bool(cond), P.BOOL)
        if isinstance(cond, Expr):
            banned = _FLOAT_COND_BANNED.get(platform.current_soc().short_soc_version, FLOAT_COMPARE_BANNED_DEFAULT)
            bad = [] if self._depth > 1 else \
                sorted({leaf.type.name for leaf in _leaves(cond.ir) if leaf.type.name in banned})
            if bad:
                names = " or ".join({"f16": "float16", "f32": "float32"}[b] for b in bad)
                raise self._error(f"the condition uses a {names} Scalar; TIK conditions cannot contain {names} "
                                  f"Scalars on {platform.current_soc().soc_version}", operand="cond",
                                  value=repr(cond), hint="compare in float32 (scalar_conv the value into a float32 "
                                                         "Scalar) or in integers" if bad == ["f16"] else
                                  "compare integers (convert with scalar_conv / vec_conv first)")
            return P.cast(cond.ir, P.BOOL)
        raise self._error(f"condition must be a TIK expression or a Python/numpy bool or number, got "
                          f"{type(cond).__name__}",
                          operand="cond", value=repr(cond),
                          hint="pass a comparison of Scalars/Exprs (s > 0), tik.all/tik.any of them, or a Python bool")

    @tik_api("new_stmt_scope")
    def new_stmt_scope(self, disable_sync=False):
        """A C-like block: tensors declared inside are freed at its end. ``disable_sync`` is
        accepted; synchronisation is still inserted (it is what makes the kernel correct). As the TIK
        reference page states, no new_stmt_scope may open inside a ``disable_sync=True`` one (at any depth:
        for_range / if_scope bodies in between do not lift the rule)."""
        blk = _Block(self, "stmt", self._where, lambda: (None, None), None)
        blk.lowering = self._depth > 1       # opened by another API's lowering for its scratch
        if not blk.lowering:
            outer = next((sc for sc in reversed(self._scopes) if sc.disable_sync), None)
            if outer is not None:
                raise self._error("new_stmt_scope inside a new_stmt_scope(disable_sync=True) body",
                                  operand="disable_sync", value=disable_sync,
                                  hint="close the disable_sync=True scope first, or open it inside this one; the "
                                       "TIK reference (new_stmt_scope): with disable_sync=True no new_stmt_scope "
                                       "may be nested in its scope")
            blk.disable_sync = isinstance(disable_sync, (bool, int, np.bool_, np.integer)) and bool(disable_sync)
        return blk

    @tik_api("new_scope")
    def new_scope(self):
        """TVM's ``ir_builder.new_scope()``, which ``tik.Tik`` inherits and public kernels call (OneCoreNMS,
        CANN's proposal / roi_align): a block like `new_stmt_scope`, freeing the tensors declared in it."""
        return _Block(self, "stmt", self._where, lambda: (None, None), None)

    @tik_api("tik_break")
    def tik_break(self):
        """Leave the innermost for_range at run time."""
        self._jump("break_")

    @tik_api("tik_continue")
    def tik_continue(self):
        self._jump("continue_")

    @tik_api("tik_return")
    def tik_return(self):
        """End the kernel on this core."""
        self._jump("return_")

    def _jump(self, kind):
        if kind != "return_":
            loop = next((sc.kind for sc in reversed(self._scopes) if sc.kind in ("for", "block")), None)
            if loop is None:
                raise self._error(f"tik_{kind[:-1]} outside a for_range", hint="use it inside a for_range body")
            if loop == "block":
                raise self._error(f"tik_{kind[:-1]} directly inside the multi-core for_range (block_num > 1)",
                                  hint=f"TIK allows tik_{kind[:-1]} only in serial loops: put it in a for_range "
                                       f"nested in the multi-core loop, or skip the work with if_scope")
        self._sync.barrier_all()
        getattr(self._builder, kind)(where=self._where)


class _Nested:
    """Several `_Block` loops entered in order and left in reverse (``multi_for_range``)."""

    def __init__(self, blocks):
        self.blocks = blocks
        self._entered = []

    def __enter__(self):
        out = []
        for b in self.blocks:
            out.append(b.__enter__())
            self._entered.append(b)
        return out

    def __exit__(self, *exc):
        while self._entered:
            self._entered.pop().__exit__(*exc)
        return False


class _AtCall:
    """Provenance (and error conversion) of a `with` statement's TIK call, re-entered at enter/exit."""

    def __init__(self, tik, where):
        self.tik, self.where = tik, where

    def __enter__(self):
        tik = self.tik
        self._outer = (tik._depth, tik._where)
        tik._depth, tik._where = max(1, tik._depth), self.where
        self._at = tik._builder.at(self.where)
        self._at.__enter__()
        return self.where

    def __exit__(self, exc_type, exc, tb):
        tik = self.tik
        self._at.__exit__(exc_type, exc, tb)
        tik._depth, tik._where = self._outer
        if exc is not None and isinstance(exc, PtoError):
            raise convert(exc, api=self.where.call, where=self.where, exit_on_error=tik._exit_on_error) from None
        return False


__all__ = ["ControlAPI"]
