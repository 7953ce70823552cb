"""Synchronisation ops: ``set_flag`` / ``wait_flag`` (+ ``_dyn``) and ``pipe_barrier`` / ``barrier``.

Python and PTO-AS spellings::

    pto.set_flag("CUBE", "FIXP", 0)        pto.set_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
    pto.wait_flag("M", "FIX", "EVENT_ID0") pto.wait_flag[<PIPE_M>, <PIPE_FIX>, <EVENT_ID0>]
    pto.set_flag_dyn("M", "FIX", i)        pto.set_flag_dyn[<PIPE_M>, <PIPE_FIX>, %i]
    pto.pipe_barrier("ALL")                pto.pipe_barrier "PIPE_ALL"   (ISA docs)
    pto.barrier("V")                       pto.barrier <PIPE_V>          (PTOAS dialect)
    pto.get_buf("MTE2", 0)                 pto.get_buf "PIPE_MTE2", %c0_i64, %c0_i64 : i64, i64   (A5)
    pto.rls_buf("MTE2", 0, 0)              pto.rls_buf "PIPE_MTE2", %c0_i64, %c0_i64 : i64, i64

Pipes are names (``S V M MTE1 MTE2 MTE3 FIX``, aliases ``CUBE``/``FIXP``, with or
without ``PIPE_``); the two numeric encodings in the wild disagree (pto_core.pipes).
All sync ops are issued by the scalar unit: their ``pipe`` is ``"S"`` (they access no
memory); their effect is on the pipes they name. Protocol (flag table,
`pto_core.checks.flags`) is always checked; happens-before edges go to the hazard
verifier when it is on. Semantics and sources: migration_guide/pto_sync.md.
"""
from __future__ import annotations

import numpy as np

from ..checks.flags import flag_event, flag_pipe, flag_table
from ..errors import IllegalOperand, UnsupportedOp
from ..pipes import PIPE_INDEX, event_id, pipe_name, sync_op_pipe
from .registry import Operand, OpSpec, register

_FLAG_OPERANDS = (
    Operand("src", "pipe", doc="pipe whose earlier ops must complete (the producer)"),
    Operand("dst", "pipe", doc="pipe whose later ops wait (the consumer)"),
    Operand("event", "event", doc="event id 0..7 (int or 'EVENT_IDn')"),
)
_FLAG_DYN_OPERANDS = _FLAG_OPERANDS[:2] + (Operand("event", "int", doc="event id as a runtime i64 value"),)


# ----------------------------------------------------------------------------- checks

#: (src, dst, event, their types, target name) -> canonical (src, dst, event id) for operands that passed
#: `flag_pipe` / `flag_event` before; the types are in the key so ``True`` never hits the entry of ``1``.
_CANON: dict = {}


def as_int(v):
    """A numpy integer as a Python int; anything else unchanged (for the checks to name). Event and buffer
    ids are integers like every other integer operand (`registry.check_constant_operand` takes numpy
    integers), so ``np.int64(3)`` is id 3, not an id 'outside 0..7'."""
    return int(v) if isinstance(v, np.integer) else v


def _flag_operands(src, dst, event, target) -> tuple:
    """Canonical ``(src pipe, dst pipe, event id)`` of a flag op, validated (memoised per spelling and target)."""
    event = as_int(event)
    key = (src, dst, event, type(src), type(dst), type(event), target.name)
    try:
        hit = _CANON.get(key)
    except TypeError:        # unhashable operand: validate without the cache (raises)
        hit = None
        key = None
    if hit is not None:
        return hit
    out = (flag_pipe(src, "src"), flag_pipe(dst, "dst"), flag_event(event, target))
    if key is not None and len(_CANON) < 4096:
        _CANON[key] = out
    return out


#: Constants that are not an event id (numpy integers are: `as_int`): an eager ``set_flag`` given one is told
#: the id must be an int, not to use ``set_flag_dyn`` (which is for an IR value computed at run time).
_NOT_EVENT_CONSTANTS = (bool, float, complex, type(None), np.generic, np.ndarray, list, tuple, dict, set)


def _verify_flag(call, target) -> None:
    """Static form: both pipes named, the event id a constant in range for the target."""
    src, dst, ev = call.operands
    ev = as_int(ev)
    if not isinstance(ev, (int, str)) or isinstance(ev, bool):
        flag_pipe(src, "src")
        flag_pipe(dst, "dst")
        if isinstance(ev, _NOT_EVENT_CONSTANTS):   # a constant of another type: a type mistake, named as the
            event_id(ev)                           # recorded form names it (pipes.event_id), not a run-time id
        raise IllegalOperand(f"event id must be a constant (int or 'EVENT_IDn'), got {ev!r}", operand="event",
                             value=ev, hint=f"use pto.{call.spec.name}_dyn for an event id computed at run time")
    _flag_operands(src, dst, ev, target)


def _verify_flag_dyn(call, target) -> None:
    """Dynamic form: both pipes named; the event id is checked when it is known (run time)."""
    flag_pipe(call.operands[0], "src")
    flag_pipe(call.operands[1], "dst")
    ev = as_int(call.operands[2])
    if isinstance(ev, int) and not isinstance(ev, bool):
        flag_event(ev, target)


def barrier_pipe(name) -> str:
    """Canonical pipe of a barrier; ``ALL`` allowed, ``S`` rejected (CCE: every op passes
    through pipe S, ``pipe_barrier(PIPE_S)`` is an error)."""
    canon = pipe_name(name, allow_all=True)
    if canon == "S":
        raise IllegalOperand("pipe_barrier(PIPE_S) is illegal: every instruction is issued through pipe S, "
                             "which is always in order", operand="pipe", value=name,
                             limit="V, M, MTE1, MTE2, MTE3, FIX, ALL",
                             hint="use set_flag/wait_flag from the producer pipe to PIPE_S to wait for a pipe")
    return canon


def _verify_barrier(call, target) -> None:
    barrier_pipe(call.operands[0])


# ----------------------------------------------------------------------------- execute

def _set_canon(ctx, src, dst, ev) -> None:
    """`_set_flag` on operands `_flag_operands` already made canonical."""
    table = ctx.sync_state or flag_table(ctx)
    token = ctx.hazards.flag_set(src, dst) if ctx.hazards is not None else None
    table.set(src, dst, ev, ctx.where, token)


def _wait_canon(ctx, src, dst, ev) -> None:
    """`_wait_flag` on operands `_flag_operands` already made canonical."""
    flag = (ctx.sync_state or flag_table(ctx)).wait(src, dst, ev, ctx.where)
    if ctx.hazards is not None:
        ctx.hazards.flag_wait(src, dst, flag.token)


def _set_flag(ctx, src, dst, event) -> None:
    _set_canon(ctx, *_flag_operands(src, dst, event, ctx.target))


def _wait_flag(ctx, src, dst, event) -> None:
    _wait_canon(ctx, *_flag_operands(src, dst, event, ctx.target))


def _bind_flag(canon_op):
    """`OpSpec.bind` of the flag ops: operands known at compile time are made canonical once per target
    (by `_flag_operands`, which raises the same errors as the general path when they are not valid)."""
    def bind(args, clauses):
        if clauses or len(args) != 3:
            return None
        # the target the canonical operands were made for, them, and the operands (one closure cell:
        # a compile binds every flag op of the kernel, so few objects each)
        memo = [None, None, args]

        def run(ctx):
            target = ctx.target
            if target is not memo[0]:
                canon = _flag_operands(*memo[2], target)
                memo[0], memo[1] = target, canon
            canon_op(ctx, *memo[1])
        return run
    return bind


#: Named choice FLAG_BIND: a compiled program's ``set_flag`` / ``wait_flag`` with compile-time operands (the cube
#: kernels' auto-sync: 40-60 % of the ops they run) are bound as whole ops (`OpSpec.bind`'s ``whole_op``): they
#: keep, per target, the canonical flag key and the pipe's clock index, begin with `ExecContext.begin_flag_op`
#: (the hazard verifier counts the op on pipe S and records the previous op's accesses at the next op, not
#: now: a flag op touches no memory) and run the flag table's and the verifier's work on them directly
#: (`FlagTable.set_key` / `wait_key`, `HazardTracker.flag_release` / `flag_acquire`): the same table entries,
#: snapshots, clocks, errors and reports as ``begin_op`` + `_set_canon` / `_wait_canon`
#: (tests/core/test_hazard_fast_paths.py runs both ways; migration_guide/pto_sync.md §5). False: every bound flag
#: op takes those.
FLAG_BIND = True


def _flag_key(memo, target, end: int) -> None:
    """Refresh ``memo`` = [target, key, pipe index, operands] of a bound flag op for ``target`` (``end`` 0: the
    index of the src pipe, 1: of the dst pipe); `_flag_operands` raises what the general path raises."""
    key = _flag_operands(*memo[3], target)
    memo[0], memo[1], memo[2] = target, key, PIPE_INDEX[key[end]]


def _bind_set(args, clauses):
    """`OpSpec.bind` of ``set_flag`` (`FLAG_BIND`)."""
    run = _bind_flag(_set_canon)(args, clauses)
    if run is None or not FLAG_BIND:
        return run
    memo = [None, None, 0, args]    # target, canonical key (src, dst, event), src pipe index, operands

    def whole_op(name, where):
        def op(ctx):
            ctx.begin_flag_op(name, where)
            if ctx.target is not memo[0]:
                _flag_key(memo, ctx.target, 0)
            hz = ctx.hazards
            (ctx.sync_state or flag_table(ctx)).set_key(memo[1], where,
                                                        None if hz is None else hz.flag_release(memo[2]))
        return op
    run.whole_op = whole_op
    return run


def _bind_wait(args, clauses):
    """`OpSpec.bind` of ``wait_flag`` (`FLAG_BIND`)."""
    run = _bind_flag(_wait_canon)(args, clauses)
    if run is None or not FLAG_BIND:
        return run
    memo = [None, None, 0, args]    # target, canonical key (src, dst, event), dst pipe index, operands

    def whole_op(name, where):
        def op(ctx):
            ctx.begin_flag_op(name, where)
            if ctx.target is not memo[0]:
                _flag_key(memo, ctx.target, 1)
            flag = (ctx.sync_state or flag_table(ctx)).wait_key(memo[1], where)
            hz = ctx.hazards
            if hz is not None:
                hz.flag_acquire(memo[2], flag.token)
        return op
    run.whole_op = whole_op
    return run


def _pipe_barrier(ctx, pipe) -> None:
    pipe = barrier_pipe(pipe)
    if ctx.hazards is not None:
        ctx.hazards.barrier(pipe)


# ----------------------------------------------------------------------------- table

register(OpSpec("set_flag", "sync", "S", _FLAG_OPERANDS, _set_flag, verify=_verify_flag, asm_form="bracket",
                bind=_bind_set,
                doc="Raise flag (src, dst, event) once every earlier op of src has completed."))
register(OpSpec("wait_flag", "sync", "S", _FLAG_OPERANDS, _wait_flag, verify=_verify_flag, asm_form="bracket",
                bind=_bind_wait,
                doc="Block later ops of dst until flag (src, dst, event) is raised, then lower it."))
register(OpSpec("set_flag_dyn", "sync", "S", _FLAG_DYN_OPERANDS, _set_flag, verify=_verify_flag_dyn,
                asm_form="bracket", bind=_bind_flag(_set_canon), doc="set_flag with the event id as a runtime value."))
register(OpSpec("wait_flag_dyn", "sync", "S", _FLAG_DYN_OPERANDS, _wait_flag, verify=_verify_flag_dyn,
                asm_form="bracket", bind=_bind_flag(_wait_canon),
                doc="wait_flag with the event id as a runtime value."))
register(OpSpec("pipe_barrier", "sync", "S", (Operand("pipe", "pipe", doc="pipe to drain, or ALL"),),
                _pipe_barrier, verify=_verify_barrier, asm_form="quoted",
                doc="Later ops of pipe start after all earlier ops of pipe complete (ALL: of every pipe)."))
def _sync_all(ctx) -> None:
    """The scheduler (pto_core.interpreter) holds this core until every core of the launch reached an
    all-core barrier or ended; the barrier also completes every pipe of this core."""
    m = ctx.machine
    if m.barrier_before_launch is None:     # the running cores passed it: a launch op starting more checks
        m.barrier_before_launch = ctx.where or False    # (`_launch_blocks`, RELAUNCH_WIDER)
    if ctx.hazards is not None:
        ctx.hazards.barrier("ALL")


class LaunchWider(Exception):
    """Signal (not an error) of ``pto.launch_blocks``: the run-time block count ``count`` exceeds the cores of
    a machine that `Executable.run` built itself, or (``upfront``) core 0 passed an all-core barrier before the
    launch op; run() starts the launch again on ``count`` cores, with ``upfront`` every launched core from the
    start (named choice RELAUNCH_WIDER, `pto_core.interpreter`)."""

    def __init__(self, count: int, upfront: bool = False):
        super().__init__(count)
        self.count = count
        self.upfront = upfront


def _launch_blocks(ctx, count) -> None:
    """Record the number of cores the kernel asks the host to launch (a run-time block count); the
    scheduler (pto_core.interpreter) starts cores 1..count-1 once core 0 has issued it. A count above the
    cores of a machine `Executable.run` built (``Machine.relaunch_wider``) relaunches on ``count`` cores."""
    m = ctx.machine
    width = len(m.cores)
    n = int(count)
    # the running cores (core 0 before the first launch op stands) passed an all-core barrier before this op: the
    # cores it starts would pass it after them. A later launch op asking for more cores than run counts too (a
    # Scalar block loop in a serial loop whose later trip widens the launch: the cores it started ran late)
    running = m.launch_width
    barrier_first = m.barrier_before_launch is not None and n > running
    if n > width and m.relaunch_wider:
        from ..interpreter import MAX_LAUNCH_BLOCKS          # (the interpreter imports the op modules)
        if n <= MAX_LAUNCH_BLOCKS:
            raise LaunchWider(n, upfront=barrier_first)
        width = MAX_LAUNCH_BLOCKS
    if not 1 <= n <= width:
        raise IllegalOperand(f"the kernel asks for {n} cores; the machine has {width}", op="pto.launch_blocks",
                             operand="%count", value=n, limit=f"[1, {width}]",
                             hint="check the block count the kernel computes (e.g. read from its tiling data)")
    if barrier_first:
        if m.relaunch_wider:
            raise LaunchWider(n, upfront=True)
        where = m.barrier_before_launch
        site = f" at {where.file}:{where.line}" if where else ""
        who = "core 0" if running == 1 else f"cores 0-{running - 1}"
        raise UnsupportedOp(f"{who} passed the all-core barrier{site} before this launch point: the {n - running} "
                            f"core(s) it launches would pass that barrier after {who} (on the device every "
                            f"launched block starts at the kernel's beginning and the barrier waits for all)",
                            op="pto.launch_blocks", operand="%count", value=n,
                            hint="run without cores= / machine= (run() then starts every launched core up front), "
                                 "or move the barrier after the launch point (the TIK block loop)")
    m.launch_width = max(n, m.launch_width)
    m.launch_pending = False
    if not ctx.machine.hold_to_end:        # the launch stands: what core 0 printed before it is output
        ctx.machine.release_held()


register(OpSpec("launch_blocks", "sync", "S", (Operand("%count", "int", doc="cores to launch, 1..the machine's"),),
                _launch_blocks,
                doc="A run-time block count (TIK for_range(0, s, block_num=s) with a computed Scalar): only core 0 "
                    "starts; when it issues this op, cores 1..count-1 start from the kernel's beginning, as if "
                    "the host had launched count cores (the block count its tiling chose)."))
register(OpSpec("sync_all", "sync", "S", (), _sync_all,
                doc="All-core barrier: every core of the launch reaches it before any core continues "
                    "(AscendC SyncAll, TIK block_barrier); also a pipe_barrier(ALL) on each core."))
register(OpSpec("barrier", "sync", "S", (Operand("pipe", "pipe", doc="pipe to drain, or ALL"),),
                _pipe_barrier, verify=_verify_barrier, asm_form="angle",
                doc="PTOAS dialect spelling of pipe_barrier: pto.barrier <PIPE_X>."))


# ----------------------------------------------------------------------------- buffer ids (A5)

_BUF_OPERANDS = (
    Operand("pipe", "bufpipe", doc="the pipe the pair guards (or a PTOAS sync op type: TLOAD -> MTE2, ...)"),
    Operand("buf_id", "int", doc="buffer id (token) 0..31, an i64 value"),
    Operand("mode", "int", optional=True, doc="0 (default): blocking (ASC_LOCK_BLOCK); 1: non-blocking"),
)


def buf_operands(op: str, pipe, buf_id, mode, target) -> tuple:
    """Canonical ``(pipe, id, mode)`` of a get_buf/rls_buf, validated against ``target``."""
    if not target.buffer_ids:
        raise UnsupportedOp(f"{target.name} has no buffer-id synchronisation (get_buf/rls_buf exist on A5, "
                            f"Ascend 950)", op=op, value=target.name,
                            hint="use pto.set_flag/pto.wait_flag pairs on this target")
    canon = sync_op_pipe(pipe)
    buf_id, mode = as_int(buf_id), as_int(mode)
    limit = target.buffer_ids
    if not isinstance(buf_id, int) or isinstance(buf_id, bool) or not 0 <= buf_id < limit:
        raise IllegalOperand(f"buffer id {buf_id!r} does not exist on {target.name}", op=op, operand="buf_id",
                             value=buf_id, limit=f"[0, {limit - 1}]", hint="pick a free buffer id")
    if mode is None:
        mode = 0
    if mode not in (0, 1) or isinstance(mode, bool) or not isinstance(mode, int):
        raise IllegalOperand(f"mode must be 0 (blocking, ASC_LOCK_BLOCK) or 1 (non-blocking), got {mode!r}",
                             op=op, operand="mode", value=mode, limit="0, 1",
                             hint="the intrinsic's mode is a bool; omit it for the blocking default")
    return canon, buf_id, mode


def _verify_buf(call, target) -> None:
    """Record-time checks: a chip with buffer ids, a concrete pipe, constant id/mode in range."""
    pipe, bid = call.operands[0], as_int(call.operands[1])
    mode = as_int(call.operands[2]) if len(call.operands) > 2 else 0
    op = call.spec.asm_name
    if not target.buffer_ids:
        buf_operands(op, pipe, 0, 0, target)
    sync_op_pipe(pipe)
    if isinstance(bid, int):
        buf_operands(op, pipe, bid, mode if isinstance(mode, int) else 0, target)
    elif isinstance(mode, int):
        buf_operands(op, pipe, 0, mode, target)


def _buf_pipes(operands: tuple) -> tuple:
    """PTOAS also spells the ISA examples as ``pto.get_buf %bufid, "PIPE_MTE2"`` (id first, no mode)."""
    if len(operands) == 2 and not isinstance(operands[0], str) and isinstance(operands[1], str):
        return (operands[1], operands[0])
    return operands


def _get_buf(ctx, pipe, buf_id, mode=None) -> None:
    pipe, bid, mode = buf_operands("pto.get_buf", pipe, buf_id, mode, ctx.target)
    tokens = (ctx.sync_state or flag_table(ctx)).get_buf(pipe, bid, mode, ctx.where)
    if ctx.hazards is not None:
        ctx.hazards.buf_acquire(pipe, tokens)


def _rls_buf(ctx, pipe, buf_id, mode=None) -> None:
    pipe, bid, mode = buf_operands("pto.rls_buf", pipe, buf_id, mode, ctx.target)
    token = ctx.hazards.buf_release(pipe) if ctx.hazards is not None else None
    (ctx.sync_state or flag_table(ctx)).rls_buf(pipe, bid, mode, ctx.where, token)


register(OpSpec("get_buf", "sync", "S", _BUF_OPERANDS, _get_buf, verify=_verify_buf, asm_form="quoted",
                asm_operands=_buf_pipes,
                doc="Take buffer-id token buf_id for pipe (A5 buffer-id sync, AscendC asc_lock/Mutex::Lock): with "
                    "mode 0 the pipe's later ops wait until every earlier rls_buf of the id by another pipe "
                    "completed."))
register(OpSpec("rls_buf", "sync", "S", _BUF_OPERANDS, _rls_buf, verify=_verify_buf, asm_form="quoted",
                asm_operands=_buf_pipes,
                doc="Release buffer-id token buf_id once every earlier op of pipe completed (asc_unlock); the "
                    "pipe and mode must match the get_buf holding it."))
