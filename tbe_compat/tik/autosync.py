"""Automatic synchronisation: the ``set_flag``/``wait_flag`` pairs TIK inserts for the user.

TIK kernels contain no synchronisation; the TIK compiler inserts it. We do the same at
trace time so that the lowered program is correct for real hardware and the simulator's
hazard verifier (`pto_core.checks.hazards`, on by default) never trips on a correct
TIK kernel.

Model (the verifier's, evaluated statically): every op runs on one pipe and touches
byte ranges (its *footprint*). For each pipe Q we keep ``pend[Q]``: the accesses of
other pipes that Q does not yet know to be complete, keyed by ``(pipe P, region, is
write)`` with a conservative covering byte interval (32-byte granular, like the
verifier). Before an op of pipe X we look for entries in ``pend[X]`` that conflict with
the op's footprint (same region, overlapping 32-byte blocks, at least one write) and,
for each such pipe P, emit the adjacent pair

    pto.set_flag[<PIPE_P>, <PIPE_X>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_P>, <PIPE_X>, <EVENT_ID0>]

right before the op. ``set_flag`` fires once every earlier op of P completed and carries
what P itself knew, so afterwards X knows every access P knew of: ``pend[X]`` keeps
only entries that are not P's and are still in ``pend[P]``. When several pipes conflict,
the pair with the pipe that already knows most of the others' conflicting accesses comes
first and the conflicts are re-evaluated after each pair (load, vector op, store: the
store gets V -> MTE3 only, since V already waited for the load). Same-pipe program order is
an edge (the verifier's default ``hazard_same_pipe="ordered"``). Adjacent pairs never
leave a flag raised and never set one twice, so the flag protocol holds on every path,
and one event id (0) suffices. A pair is only emitted where a dependency exists, so
listings stay readable (GM->UB load, vector op, UB->GM store gives exactly the
MTE2->V and V->MTE3 pairs a CCE programmer writes).

Control flow:

* ``if``/``elif``/``else``: each branch is traced from the state before the ``if``; after
  the chain the state is the union of the branch states (plus the pre-state when there
  is no ``else``): an access is pending if it is pending on some path.
* loops (the body is traced once but runs many times): at the end of the body we emit,
  before the back edge, a pair P->Q for every access of P still pending for Q that
  conflicts with *any* access of Q in the body (the next iteration's accesses). What
  stays pending then conflicts with nothing Q does in the body, so every iteration is
  covered. After the loop the state is the union of the state at the end of the body and
  the state before the loop (zero trips).
* ``tik_break``/``tik_continue``/``tik_return``: a ``pto.barrier <PIPE_ALL>`` before the
  jump (rare in TIK kernels), so the jump carries no pending access.
* the multi-core loop is not a loop (each core runs the body once); GM accesses of
  different cores are not ordered by flags (TIK kernels use disjoint slices or atomic
  adds; the verifier checks cores separately).
"""
from __future__ import annotations

import operator

from pto_core import program as P
from pto_core.pipes import PIPES, pipe_name

BLOCK = 32
#: Pipes in a fixed order (deterministic emission order).
PIPE_ORDER = tuple(p for p in PIPES)
#: pipe -> the other pipes, in order
_OTHERS = {p: tuple(q for q in PIPE_ORDER if q != p) for p in PIPE_ORDER}
#: pipe -> a function of a state (``{pipe: entries}``) giving the other pipes' entries, in order (one C call)
_OTHER_STATES = {p: operator.itemgetter(*qs) for p, qs in _OTHERS.items()}
#: Named choice: move auto-sync pairs whose source pipe has no op in a for_range body to just before
#: the loop (module doc, "loop-invariant pairs"). False keeps every pair where it was emitted (the A/B
#: switch of the differential test in tests/compat/tik/test_autosync.py).
HOIST_LOOP_INVARIANT_PAIRS = True
_ALL = frozenset(PIPE_ORDER)
_CANONICAL_PIPES = frozenset(PIPES)         # names `pipe_name` returns as they are (ALL: only if allowed)
_SETS = frozenset({"set_flag", "set_flag_dyn"})
_WAITS = frozenset({"wait_flag", "wait_flag_dyn"})
_BARRIERS = frozenset({"pipe_barrier", "barrier"})


def _canon(name, allow_all=False):
    if type(name) is str and name in _CANONICAL_PIPES:       # the common case (auto-sync's own pairs)
        return name
    try:
        return pipe_name(name, allow_all=allow_all)
    except Exception:        # an IR value or a misspelling (the builder reports those): any pipe
        return "ALL"


def pipes_used(body: list, known: dict = None) -> frozenset:
    """The pipes whose knowledge (the verifier's ``known[P]``, `pto_core.checks.vector_clock`) an execution
    of ``body`` (nested blocks included) may change: the pipe of every op, S for every scalar load/store
    and sync op, the destination of a wait, the pipe of a barrier (ALL: every pipe), every pipe for any
    other sync op or an op whose pipe is not known statically. ``known``: ``{id(loop body): (body, its
    pipes_used)}`` of nested loop bodies already walked (`AutoSync.hoist`), taken instead of walking them."""
    used = set()
    stack = [body]               # every nested block once (a set: the walk order does not matter)
    For, If, OpStmt, scalar = P.For, P.If, P.OpStmt, (P.Load, P.Store, P.ReadSpr)
    while stack:
        for st in stack.pop():
            t = type(st)
            if t is For:
                hit = known.get(id(st.body)) if known else None
                if hit is not None and hit[0] is st.body and hit[1] is not None:
                    if hit[1] is _ALL:
                        return _ALL
                    used.update(hit[1])
                else:
                    stack.append(st.body)
                continue
            if t is If:
                stack.append(st.then)
                if st.orelse:
                    stack.append(st.orelse)
                continue
            if t is OpStmt:
                call = st.call
                spec = call.spec
                if spec.family == "sync":
                    used.add("S")
                    name = spec.name
                    if name in _SETS:
                        continue
                    if name in _WAITS:
                        p = _canon(call.operands[1])
                    elif name in _BARRIERS:
                        p = _canon(call.operands[0], allow_all=True)
                    else:
                        return _ALL
                else:
                    try:
                        p = _canon(call.pipe)
                    except Exception:
                        return _ALL
                if p == "ALL":
                    return _ALL
                used.add(p)
            elif t in scalar:
                used.add("S")
    return frozenset(used)


class Access:
    """One footprint entry of an op: bytes ``[lo, hi)`` of ``region`` (a hashable key)."""

    __slots__ = ("region", "lo", "hi", "write")

    def __init__(self, region, lo: int, hi: int, write: bool):
        self.region = region
        self.lo, self.hi = lo // BLOCK * BLOCK, -(-hi // BLOCK) * BLOCK       # whole 32-byte blocks
        self.write = write

    def __repr__(self):
        return f"{'W' if self.write else 'R'}{self.region}[{self.lo:#x}, {self.hi:#x})"


def _conflicts(pend: dict, accesses, only=None) -> set:
    """Pipes with a pending access in ``pend`` that conflicts with ``accesses`` (same region, overlapping
    blocks, at least one write); ``only``: look at that pipe's entries only."""
    need = set()
    for (p, region, w), (lo, hi) in pend.items():
        if p in need or (only is not None and p != only):
            continue
        for a in accesses:
            if a.region == region and (w or a.write) and lo < a.hi and a.lo < hi:
                need.add(p)
                break
    return need


def _copy(state: dict) -> dict:
    return {q: dict(entries) for q, entries in state.items()}


def _join(states: list) -> dict:
    first = states[0] if states else {}
    out = {q: dict(first.get(q, ())) for q in PIPE_ORDER}      # (as merging it into empty dicts would)
    for st in states[1:]:
        for q, entries in st.items():
            dst = out[q]
            for key, (lo, hi) in entries.items():
                old = dst.get(key)
                dst[key] = (lo, hi) if old is None else (min(lo, old[0]), max(hi, old[1]))
    return out


class _Chain:
    __slots__ = ("pre", "branches", "has_else")

    def __init__(self, pre):
        self.pre, self.branches, self.has_else = pre, [], False


def _hoist_visit(block: list, auto: set, used: frozenset, seen: set, out: list, done: dict) -> None:
    """`AutoSync.hoist`'s walk of one block (nested blocks recursively; a module function, not a closure
    calling itself, which would be a reference cycle left for the cyclic collector at every loop).
    ``done``: the loop bodies `AutoSync.hoist` went through when their loop closed, which are not entered:
    a pair left there has its source pipe in that body's `pipes_used`, so in this enclosing body's too."""
    For, If, OpStmt = P.For, P.If, P.OpStmt
    keep, i, n, changed = [], 0, len(block), False
    while i < n:
        st = block[i]
        t = type(st)
        if t is For:
            hit = done.get(id(st.body))
            if hit is None or hit[0] is not st.body:
                _hoist_visit(st.body, auto, used, seen, out, done)
        elif t is If:
            _hoist_visit(st.then, auto, used, seen, out, done)
            if st.orelse:
                _hoist_visit(st.orelse, auto, used, seen, out, done)
        elif id(st) in auto and i + 1 < n:        # (auto holds set_flag statements only)
            wait = block[i + 1]
            ops = st.call.operands
            if type(wait) is OpStmt and wait.call.spec.name == "wait_flag" and \
                    wait.call.operands == ops and _canon(ops[0]) not in used:
                key = (_canon(ops[0]), _canon(ops[1]))
                if key not in seen:
                    seen.add(key)
                    out.extend((st, wait))
                i += 2
                changed = True
                continue
        keep.append(st)
        i += 1
    if changed:
        block[:] = keep


class AutoSync:
    """Trace-time pending-access state of one kernel (see module doc).

    ``emit(src_pipe, dst_pipe)`` records one set_flag/wait_flag pair in the program;
    ``barrier()`` records a ``pipe_barrier(ALL)``.
    """

    def __init__(self, emit, barrier):
        self._emit = emit
        self._emit_barrier = barrier
        self.pend = {q: {} for q in PIPE_ORDER}
        self._loops: list = []        # (pre-state, [(pipe, (Access, ...)) per op]) per open loop
        self._open_chain = None       # an if-chain whose next branch may still follow
        self._chains: list = []       # chains whose branch is being traced
        self.pairs = 0                # number of pairs emitted (statistics / tests)
        self.hoisted = 0              # pairs moved out of a loop body (statistics / tests)
        self._auto: set = set()       # id() of the set_flag statements of the pairs emitted here
        #: id(loop body) -> (body, its `pipes_used` or None) of the loop bodies `hoist` went through (closed
        #: loops: an enclosing loop's hoist neither walks them again nor finds a pair to move in them)
        self._hoisted_bodies: dict = {}

    def mark(self, set_stmt) -> None:
        """``set_stmt`` (a `P.OpStmt`) is the ``set_flag`` of a pair auto-sync emitted (may be hoisted)."""
        self._auto.add(id(set_stmt))

    # ------------------------------------------------------------------ ops
    def op(self, pipe: str, accesses) -> None:
        """An op of ``pipe`` with footprint ``accesses`` is about to be recorded."""
        if self._open_chain is not None:
            self.settle()
        pend = self.pend
        need = _conflicts(pend[pipe], accesses) if pend[pipe] else None
        while need:
            # sync first with the pipe that already knows the most of the others' accesses: what it
            # knew travels with its flag, so the remaining pairs are only those still needed
            p = next(iter(need)) if len(need) == 1 else max(
                (q for q in PIPE_ORDER if q in need),
                key=lambda q: sum(r not in _conflicts(self.pend[q], accesses, only=r) for r in need if r != q))
            self._sync(p, pipe)
            need = _conflicts(self.pend[pipe], accesses)
        others = _OTHER_STATES[pipe](pend)          # the other pipes' dicts (``pend[pipe]`` above: a known pipe)
        for a in accesses:
            key = (pipe, a.region, a.write)
            lo, hi = a.lo, a.hi
            iv = (lo, hi)
            for entries in others:
                old = entries.setdefault(key, iv)    # a new entry is ``iv`` itself
                if old is not iv and (lo < old[0] or hi > old[1]):
                    entries[key] = (lo if lo < old[0] else old[0], hi if hi > old[1] else old[1])
        if self._loops:
            entry = (pipe, accesses if type(accesses) is tuple else tuple(accesses))
            for _, log in self._loops:
                log.append(entry)

    def _sync(self, src: str, dst: str) -> None:
        self._emit(src, dst)
        self.pairs += 1
        known_by_src = self.pend[src]
        self.pend[dst] = {k: v for k, v in self.pend[dst].items() if k[0] != src and k in known_by_src}

    def barrier_all(self) -> None:
        """A ``pipe_barrier(ALL)``: everything before is complete before anything after."""
        self.settle()
        self._emit_barrier()
        self.pend = {q: {} for q in PIPE_ORDER}

    def clear(self) -> None:
        """An op that completes every pipe was recorded (``pto.sync_all``): nothing is pending."""
        self.pend = {q: {} for q in PIPE_ORDER}

    # ------------------------------------------------------------------ if / elif / else
    def begin_if(self) -> None:
        self.settle()
        self._chains.append(_Chain(_copy(self.pend)))

    def end_branch(self) -> None:
        """The body of an if/elif/else branch ends."""
        self.settle()
        chain = self._chains.pop()
        chain.branches.append(self.pend)
        self._open_chain = chain
        if chain.has_else:
            self.settle()

    def begin_elif(self, is_else: bool = False) -> None:
        chain = self._open_chain
        if chain is None:        # the builder reports the misuse
            return
        self._open_chain = None
        chain.has_else = is_else
        self.pend = _copy(chain.pre)
        self._chains.append(chain)

    def settle(self) -> None:
        """Close a finished if-chain: the state is the union over its paths."""
        chain = self._open_chain
        if chain is None:
            return
        self._open_chain = None
        self.pend = _join(chain.branches + ([] if chain.has_else else [chain.pre]))

    # ------------------------------------------------------------------ loops
    def begin_loop(self) -> None:
        self.settle()
        self._loops.append((_copy(self.pend), []))

    def end_loop(self) -> None:
        """Called while the builder is still inside the loop body: emits back-edge pairs there."""
        self.settle()
        pre, log = self._loops.pop()
        by_pipe: dict = {}            # pipe -> region -> the body's accesses (in program order)
        for q, accesses in log:
            regions = by_pipe.get(q)
            if regions is None:
                regions = by_pipe[q] = {}
            for a in accesses:
                same = regions.get(a.region)
                if same is None:
                    regions[a.region] = [a]
                else:
                    same.append(a)
        for q in PIPE_ORDER:
            body = by_pipe.get(q)
            if not body:
                continue
            need = set()
            for (p, region, w), (lo, hi) in self.pend[q].items():
                if p in need:
                    continue
                for a in body.get(region, ()):
                    if (w or a.write) and lo < a.hi and a.lo < hi:
                        need.add(p)
                        break
            for p in PIPE_ORDER:
                if p in need:
                    self._sync(p, q)
        self.pend = _join([self.pend, pre])
        # (`op` logs every access in every open loop: the enclosing loops hold this body's already)

    def hoist(self, body: list) -> list:
        """Remove from a traced loop ``body`` (nested blocks included) the auto-sync pairs whose source pipe
        has no op in it (`pipes_used`); returns their statements (set, wait, set, wait, ...), one pair per
        (source, destination), in program order, for the caller to put just before the loop."""
        if not HOIST_LOOP_INVARIANT_PAIRS:
            return []
        done = self._hoisted_bodies
        if not self._auto:                # no pair anywhere yet, none in this body
            done[id(body)] = (body, None)
            return []
        used = pipes_used(body, done)
        if used == _ALL:
            done[id(body)] = (body, _ALL)
            return []
        out, seen = [], set()
        _hoist_visit(body, self._auto, used, seen, out, done)
        self.hoisted += len(out) // 2
        # what the body uses without the pairs moved out is not known without a new walk: not remembered then
        done[id(body)] = (body, None if out else used)
        return out


__all__ = ["AutoSync", "Access"]
