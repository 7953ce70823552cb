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
    """Raised flags of one core, keyed by ``(src, dst, event)``."""

    def __init__(self, core_index: int = 0):
        self.core_index = core_index
        self.raised: dict = {}
        self.last_wait: dict = {}   # key -> where of the wait that last lowered it (for messages)

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

    def end_kernel(self) -> list:
        """``("sync", message)`` for every flag still raised; clears the table."""
        reports = []
        for f in self.raised.values():
            reports.append(("sync", f"core{self.core_index}: {f.describe()} was never waited for (flag still set "
                                    f"at kernel end); pair it with {flag_text('wait_flag', f.src, f.dst, f.event)} "
                                    f"(loops that prime a flag must drain it after the loop)"))
        self.raised.clear()
        self.last_wait.clear()
        return reports


def flag_table(ctx) -> FlagTable:
    """The flag table of ``ctx``'s core (created on first use)."""
    table = ctx.sync_state
    if table is None:
        table = ctx.sync_state = FlagTable(ctx.core.index)
    return table
