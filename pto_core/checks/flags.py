"""The set/wait flag table of one core: the sync protocol, independent of the hazard verifier.

Semantics (one named choice each, sources in migration_guide/pto_sync.md):

* A flag is one bit per ``(src pipe, dst pipe, event id)``. ``set_flag`` raises it once
  every earlier op of ``src`` has completed; ``wait_flag`` blocks later ops of ``dst``
  until it is raised, then lowers it (AscendC SetFlag/WaitFlag: "set the flag to 1" /
  "if 1, set it to 0 and continue").
* A second ``set_flag`` on a flag that is still raised is a `SyncError` (CCE intrinsic
  reference: two ``set_flag`` with the same pipes and id and no ``wait_flag`` between
  are illegal; with a one-bit flag the second signal would be lost).
* A ``wait_flag`` whose flag no *earlier* ``set_flag`` raised is a `SyncError`
  (deadlock): the simulator runs the program in issue order, and the PTO ISA calls
  "waiting on state never established by a matching producer" an illegal program.
* Flags still raised when the kernel ends are reported (``("sync", message)``): every
  set must be paired with a wait (loops that prime reverse flags must drain them).

Event ids are 0..7 (``EVENT_ID0..EVENT_ID7``), except on chips listed in
`EVENT_ID_LIMITS`.

The same table holds the **buffer-id** tokens of ``pto.get_buf`` / ``pto.rls_buf`` (A5; AscendC
``asc_lock`` / ``asc_unlock``, ``Mutex::Lock`` / ``Unlock``):

* ``get_buf(P, id, mode=0)`` holds the token until ``rls_buf(P, id, mode)``. A token is held by
  at most one pair at a time: a ``get_buf`` of an id still held is a `SyncError` ("pairs on one
  id must not nest, whatever the pipe and mode"), as is an ``rls_buf`` without a held token, or
  one whose pipe or mode differ from its ``get_buf`` ("same mutex_id, mode (and pipe)").
* Ordering (hazard verifier): ``rls_buf`` publishes everything its pipe issued before it;
  ``get_buf(P, id, 0)`` (``ASC_LOCK_BLOCK``) makes P's later ops wait for every earlier
  ``rls_buf`` of ``id`` by another pipe (consecutive pairs on one pipe do not order, per
  ``asc_lock``: use ``pipe_barrier``); ``mode=1`` (``ASC_LOCK_NON_BLOCK``) does not block.
* Tokens still held when the kernel ends are reported.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import IllegalOperand, Provenance, SyncError
from ..pipes import NUM_EVENTS, asm_pipe, event_id, pipe_name

#: Chips with fewer than 8 event ids per pipe pair (AscendC SetFlag/WaitFlag: "Atlas
#: training series (Ascend 910): 0-3"; inference AI Core and A2/A3: 0-7).
EVENT_ID_LIMITS = {"Ascend910A": 4}


def num_events(target) -> int:
    """How many event ids ``target`` has per pipe pair."""
    return EVENT_ID_LIMITS.get(getattr(target, "name", ""), NUM_EVENTS)


_FLAG_PIPES: dict = {}   # spelling -> canonical pipe, for names already validated


def flag_pipe(name, operand: str) -> str:
    """Canonical pipe for a ``set_flag``/``wait_flag`` operand (``PIPE_ALL`` is not a flag endpoint)."""
    canon = _FLAG_PIPES.get(name) if isinstance(name, str) else None
    if canon is not None:
        return canon
    canon = pipe_name(name, allow_all=True)
    if canon == "ALL":
        raise IllegalOperand("PIPE_ALL cannot be a set_flag/wait_flag endpoint", operand=operand, value=name,
                             limit="S, V, M, MTE1, MTE2, MTE3, FIX",
                             hint="use pto.pipe_barrier('ALL') to wait for every pipe")
    if isinstance(name, str):
        _FLAG_PIPES[name] = canon
    return canon


def flag_event(value, target, operand: str = "event") -> int:
    """Validate an event id (int or ``"EVENT_IDn"``) against ``target``'s event count."""
    ev = event_id(value)
    limit = num_events(target)
    if ev >= limit:
        raise SyncError(f"event id {ev} does not exist on {target.name}", operand=operand, value=ev,
                        limit=f"[0, {limit - 1}]", hint=f"{target.name} has {limit} event ids per pipe pair")
    return ev


def flag_text(kind: str, src: str, dst: str, event) -> str:
    """PTO-AS spelling of one flag op: ``pto.set_flag[PIPE_M, PIPE_FIX, EVENT_ID0]``."""
    ev = f"EVENT_ID{event}" if isinstance(event, int) else str(event)
    return f"pto.{kind}[{asm_pipe(src)}, {asm_pipe(dst)}, {ev}]"


def buf_text(kind: str, pipe: str, buf_id, mode) -> str:
    """PTO-AS spelling of one buffer-id op: ``pto.get_buf "PIPE_V", 3, 0``."""
    return f'pto.{kind} "{asm_pipe(pipe)}", {buf_id}, {mode}'


def _at(where: Optional[Provenance]) -> str:
    return f" at {where.file}:{where.line}" if where is not None else ""


@dataclass
class RaisedFlag:
    """A flag that is set and not yet waited for."""

    src: str
    dst: str
    event: int
    where: Optional[Provenance]
    token: object = None   # hazard-verifier snapshot carried to the matching wait

    def describe(self) -> str:
        return flag_text("set_flag", self.src, self.dst, self.event) + _at(self.where)


class FlagTable:
    """Raised flags of one core, keyed by ``(src, dst, event)``, and its held buffer ids."""

    def __init__(self, core_index: int = 0):
        self.core_index = core_index
        self.raised: dict = {}
        self.last_wait: dict = {}   # key -> where of the wait that last lowered it (for messages)
        self.buf_held: dict = {}    # buffer id -> (pipe, mode, where) of the get_buf holding it
        self.buf_released: dict = {}   # buffer id -> {pipe: hazard snapshot of its latest rls_buf}

    def set(self, src: str, dst: str, event: int, where: Optional[Provenance], token=None) -> None:
        """Raise a flag; `SyncError` if it is already raised."""
        key = (src, dst, event)
        prev = self.raised.get(key)
        if prev is not None:
            free = self.free_event(src, dst)
            alt = f", or use a free event id (EVENT_ID{free})" if free is not None else ""
            raise SyncError(f"flag {asm_pipe(src)} -> {asm_pipe(dst)} EVENT_ID{event} is already set by "
                            f"{prev.describe()} and not yet waited for; a flag is one bit, so this second "
                            f"signal would be lost (two set_flags on one flag without a wait are illegal)",
                            value=f"EVENT_ID{event}", where=where,
                            hint=f"insert {flag_text('wait_flag', src, dst, event)} before setting it again{alt}")
        self.raised[key] = RaisedFlag(src, dst, event, where, token)

    def wait(self, src: str, dst: str, event: int, where: Optional[Provenance]) -> RaisedFlag:
        """Lower a raised flag and return it; `SyncError` (deadlock) if no earlier set raised it."""
        key = (src, dst, event)
        flag = self.raised.pop(key, None)
        if flag is None:
            raise SyncError(self._deadlock_message(src, dst, event), value=f"EVENT_ID{event}", where=where,
                            hint=f"issue {flag_text('set_flag', src, dst, event)} after the producer on "
                                 f"{asm_pipe(src)} and before this wait (loops: prime the flag before the "
                                 f"loop), or fix the pipes/event id")
        self.last_wait[key] = where
        return flag

    def set_key(self, key: tuple, where: Optional[Provenance], token=None) -> None:
        """`set` of ``key`` = ``(src, dst, event)`` already canonical (the bound flag ops, `ops.sync.FLAG_BIND`)."""
        raised = self.raised
        if key in raised:
            self.set(key[0], key[1], key[2], where, token)      # raises the already-set error
        raised[key] = RaisedFlag(key[0], key[1], key[2], where, token)

    def wait_key(self, key: tuple, where: Optional[Provenance]) -> RaisedFlag:
        """`wait` of ``key`` = ``(src, dst, event)`` already canonical (the bound flag ops, `ops.sync.FLAG_BIND`)."""
        flag = self.raised.pop(key, None)
        if flag is None:
            return self.wait(key[0], key[1], key[2], where)     # raises the deadlock error
        self.last_wait[key] = where
        return flag

    def _deadlock_message(self, src: str, dst: str, event: int) -> str:
        msg = (f"{flag_text('wait_flag', src, dst, event)} waits for a flag that no earlier "
               f"{flag_text('set_flag', src, dst, event)} raised: {asm_pipe(dst)} would block forever (deadlock)")
        if (dst, src, event) in self.raised:
            msg += (f"; {flag_text('set_flag', dst, src, event)} is raised: are src and dst swapped? "
                    f"(src is the producer pipe, dst the pipe that waits)")
        last = self.last_wait.get((src, dst, event), False)
        if last is not False:
            msg += f"; its last set was already consumed by the wait_flag{_at(last)}"
        same_pair = [f for f in self.raised.values() if (f.src, f.dst) == (src, dst)]
        others = [f for f in self.raised.values() if (f.src, f.dst) != (src, dst)]
        if same_pair:
            msg += "; raised on this pipe pair: " + ", ".join(f.describe() for f in same_pair)
        if others:
            msg += "; other raised flags: " + ", ".join(f.describe() for f in others[:8])
            if len(others) > 8:
                msg += f" (+{len(others) - 8} more)"
        if not self.raised:
            msg += "; no flag is raised on this core"
        return msg

    def free_event(self, src: str, dst: str, limit: int = NUM_EVENTS) -> Optional[int]:
        """Lowest event id not raised on ``src -> dst`` (None if all are)."""
        for ev in range(limit):
            if (src, dst, ev) not in self.raised:
                return ev
        return None

    # ------------------------------------------------------------------ buffer ids
    def get_buf(self, pipe: str, buf_id: int, mode: int, where: Optional[Provenance]) -> list:
        """Take token ``buf_id`` for ``pipe``; returns the hazard snapshots its later ops wait for
        (the latest release of the id by each other pipe; none with ``mode=1``)."""
        held = self.buf_held.get(buf_id)
        if held is not None:
            hp, hm, hw = held
            raise SyncError(f"{buf_text('get_buf', pipe, buf_id, mode)} while buffer id {buf_id} is still held by "
                            f"{buf_text('get_buf', hp, buf_id, hm)}{_at(hw)}: get_buf/rls_buf pairs on one id must "
                            f"not nest, whatever the pipe and mode (the hardware behaviour is unpredictable)",
                            value=buf_id, where=where,
                            hint=f"issue {buf_text('rls_buf', hp, buf_id, hm)} first, or use another buffer id")
        self.buf_held[buf_id] = (pipe, mode, where)
        if mode:
            return []
        return [tok for p, tok in self.buf_released.get(buf_id, {}).items() if p != pipe and tok is not None]

    def rls_buf(self, pipe: str, buf_id: int, mode: int, where: Optional[Provenance], token=None) -> None:
        """Release token ``buf_id``; `SyncError` unless ``get_buf(pipe, buf_id, mode)`` holds it."""
        held = self.buf_held.get(buf_id)
        this = buf_text("rls_buf", pipe, buf_id, mode)
        if held is None:
            raise SyncError(f"{this} releases buffer id {buf_id}, which no earlier get_buf holds: every rls_buf "
                            f"must follow its get_buf (same id, pipe and mode)", value=buf_id, where=where,
                            hint=f"issue {buf_text('get_buf', pipe, buf_id, mode)} before the ops this pair "
                                 f"protects, or fix the buffer id")
        hp, hm, hw = held
        if (hp, hm) != (pipe, mode):
            raise SyncError(f"{this} does not match {buf_text('get_buf', hp, buf_id, hm)}{_at(hw)}, which holds "
                            f"buffer id {buf_id}: a pair must use the same pipe and mode", value=buf_id, where=where,
                            hint=f"release it with {buf_text('rls_buf', hp, buf_id, hm)}")
        del self.buf_held[buf_id]
        self.buf_released.setdefault(buf_id, {})[pipe] = token

    def end_kernel(self) -> list:
        """``("sync", message)`` for every flag still raised and buffer id still held; clears the table."""
        reports = []
        for f in self.raised.values():
            reports.append(("sync", f"core{self.core_index}: {f.describe()} was never waited for (flag still set "
                                    f"at kernel end); pair it with {flag_text('wait_flag', f.src, f.dst, f.event)} "
                                    f"(loops that prime a flag must drain it after the loop)"))
        for bid, (pipe, mode, where) in self.buf_held.items():
            reports.append(("sync", f"core{self.core_index}: {buf_text('get_buf', pipe, bid, mode)}{_at(where)} "
                                    f"was never released (buffer id still held at kernel end); pair it with "
                                    f"{buf_text('rls_buf', pipe, bid, mode)}"))
        self.raised.clear()
        self.last_wait.clear()
        self.buf_held.clear()
        self.buf_released.clear()
        return reports


def flag_table(ctx) -> FlagTable:
    """The flag table of ``ctx``'s core (created on first use)."""
    table = ctx.sync_state
    if table is None:
        table = ctx.sync_state = FlagTable(ctx.core.index)
    return table
