"""Pipes (hardware issue queues) and event ids.

Canonical names follow the PTO-AS text form ``"PIPE_M"``; the short names used in
Python calls are ``S, V, M, MTE1, MTE2, MTE3, FIX, ALL`` and the seeds' aliases
``CUBE`` (= M) and ``FIXP`` (= FIX) are accepted everywhere.

Numeric values differ between the CCE headers and the PTOAS dialect (pto_spec.md
§6.1), so the simulator keys everything on names and keeps both numberings here.
"""
from __future__ import annotations

from .errors import UnknownName, SyncError

#: Pipes that run ops, in a fixed order (index = vector-clock slot).
PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
#: ``ALL`` is only valid in ``pipe_barrier``.
BARRIER_PIPES = PIPES + ("ALL",)
_CANONICAL = frozenset(PIPES)

_ALIASES = {
    "S": "S", "SCALAR": "S",
    "V": "V", "VEC": "V", "VECTOR": "V",
    "M": "M", "CUBE": "M", "MAD": "M",
    "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3",
    "FIX": "FIX", "FIXP": "FIX", "FIXPIPE": "FIX",
    "ALL": "ALL",
}

#: CCE numbering (pto-isa cpu_stub.hpp) and PTOAS dialect numbering (PTOAttrs.td).
CCE_CODE = {"S": 0, "V": 1, "MTE1": 2, "MTE2": 3, "MTE3": 4, "M": 5, "ALL": 6, "FIX": 7}
PTOAS_CODE = {"S": 0, "V": 1, "M": 2, "MTE1": 3, "MTE2": 4, "MTE3": 5, "ALL": 6, "FIX": 10}

NUM_EVENTS = 8


def pipe_name(name: str, *, allow_all: bool = False) -> str:
    """Canonical pipe name for ``"CUBE"``, ``"PIPE_M"``, ``"fixp"`` ...; raises `UnknownName`."""
    if type(name) is str and (name in _CANONICAL or (allow_all and name == "ALL")):   # already canonical
        return name
    key = str(name).upper()
    if key.startswith("PIPE_"):
        key = key[5:]
    canon = _ALIASES.get(key)
    if canon is None or (canon == "ALL" and not allow_all):
        valid = BARRIER_PIPES if allow_all else PIPES
        raise UnknownName(f"unknown pipe {name!r}", value=name, limit="one of " + ", ".join(valid),
                          hint="use S, V, M (CUBE), MTE1, MTE2, MTE3 or FIX (FIXP)")
    return canon


def asm_pipe(name: str) -> str:
    """PTO-AS spelling: ``"PIPE_M"``."""
    return "PIPE_" + name


def event_id(value) -> int:
    """Validate an event id (int or ``"EVENT_ID3"``); raises `SyncError` outside 0..7."""
    if isinstance(value, str):
        key = value.upper()
        if key.startswith("EVENT_ID") and key[8:].isdigit():
            value = int(key[8:])
        else:
            raise SyncError(f"bad event id {value!r}", operand="event", value=value, limit="EVENT_ID0..EVENT_ID7",
                            hint="write EVENT_ID0 .. EVENT_ID7 (or an int 0..7)")
    if not isinstance(value, int) or isinstance(value, bool):      # a type, not a range, mistake: say so
        raise SyncError(f"event id must be an int 0..{NUM_EVENTS - 1} or 'EVENT_IDn', got {type(value).__name__} "
                        f"{value!r}", operand="event", value=repr(value), limit=f"[0, {NUM_EVENTS - 1}]",
                        hint="write an int 0..7 known when the program is built (or EVENT_ID0 .. EVENT_ID7)")
    if not 0 <= value < NUM_EVENTS:
        raise SyncError(f"event id {value!r} is outside 0..{NUM_EVENTS - 1}", operand="event", value=value,
                        limit=f"[0, {NUM_EVENTS - 1}]",
                        hint="use an event id 0..7 (EVENT_ID0 .. EVENT_ID7): the hardware has 8 per pipe pair")
    return value


#: PTOAS ``SyncOpType`` (``#pto.pipe_event_type<TLOAD>``, ``#pto.sync_op_type<...>``) -> the pipe it
#: stands for (PTOAS ``lib/PTO/IR/PTOSyncUtils.cpp`` ``mapSyncOpTypeToPipe``). ``pto.get_buf`` /
#: ``pto.rls_buf`` accept these names where a pipe is expected, as PTOAS's verifier does.
SYNC_OP_TYPE_PIPES = {
    "TLOAD": "MTE2", "TSTORE_VEC": "MTE3", "TSTORE_ACC": "FIX", "TMOV_M2L": "MTE1", "TMOV_M2B": "MTE1",
    "TMOV_M2S": "FIX", "TMOV_M2V": "V", "TMOV_V2M": "FIX", "TMATMUL": "M", "TVEC": "V", "TVECWAIT_EVENT": "V",
}


def sync_op_pipe(name) -> str:
    """Canonical pipe of a pipe name (``"PIPE_MTE2"``, ``"MTE2"``) or of a PTOAS ``SyncOpType``
    (``"TLOAD"`` -> ``"MTE2"``); ``PIPE_ALL`` is not a concrete pipe. Raises `UnknownName`."""
    if isinstance(name, str) and name.upper() in SYNC_OP_TYPE_PIPES:
        return SYNC_OP_TYPE_PIPES[name.upper()]
    try:
        canon = pipe_name(name)
    except UnknownName:
        raise UnknownName(f"unknown pipe {name!r}", value=name,
                          limit="one of " + ", ".join(PIPES) + " or a PTOAS sync op type ("
                                + ", ".join(SYNC_OP_TYPE_PIPES) + ")",
                          hint="buffer-id sync names a concrete pipe, e.g. \"PIPE_MTE2\" (PIPE_ALL is not one)") from None
    return canon
