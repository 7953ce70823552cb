"""One exception hierarchy for everything a kernel author can trigger.

Every error carries structured fields (the op, the operand, the offending value,
the limit it broke, a fix hint and the user's source location) and formats them
into one message of the form::

    kernel.py:42 in `tik_instance.matmul(...)`: pto.mad operand %m: value 5000 is
    outside [1, 4095]. Fix: split the matmul into tiles of at most 4095 rows.

`PtoError` subclasses also derive from the closest builtin (``IndexError`` for
bounds, ``ValueError`` for bad operands, ``RuntimeError`` for protocol errors) so
generic ``except`` clauses in user code keep working.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Provenance:
    """Where an op came from: the user's ``file:line`` and the high-level call.

    ``call`` is the text of the call that produced the op (``"tik.matmul"`` or
    ``"pto.mad"``); ``detail`` is optional extra context (loop indices, core id).
    """

    file: str
    line: int
    call: str = ""
    detail: str = ""
    #: not a field: `FencedProvenance` overrides it (read by `memory.ExecContext.begin_op` for every op)
    fences = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        if self.call:
            where += f" in `{self.call}`"
        if self.detail:
            where += f" ({self.detail})"
        return where


@dataclass(frozen=True)
class FencedProvenance(Provenance):
    """A `Provenance` that also confines the op's on-chip accesses to ``fences``: ``((space, lo, hi,
    label), ...)`` byte ranges (an access of an on-chip space must lie inside one range of that space;
    spaces without a range are not confined). Made by front ends for ops whose pointers stand for
    their own buffers (the TIK bridge: `tbe_compat.tik.bridge`); checked by `memory.ExecContext`."""

    fences: tuple = ()


def at_site(where: Optional["Provenance"], op_name: str = "") -> str:
    """`` at file:line`` of ``where`` plus the high-level call (`` (`tik.matmul`)``) when it is not the op
    ``op_name`` itself; ``""`` without a provenance. For messages naming an earlier op of a kernel."""
    if where is None:
        return ""
    call = f" (`{where.call}`)" if where.call and where.call != op_name else ""
    detail = f" ({where.detail})" if where.detail else ""       # e.g. the PTO-AS file's line (LOC_NAMES_TEXT_LINE)
    return f" at {where.file}:{where.line}{call}{detail}"


#: `warn_at`'s `warnings.warn_explicit` registries, one per user file as Python keeps one per module (a registry's
#: keys are (text, category, line) only: the "default" filter shows a message once per file:line, so one shared
#: registry hid the same message at the same line number of a second file)
_WARN_REGISTRY: dict = {}


def warn_at(message: str, category: type, where: Optional["Provenance"], stacklevel: int = 2) -> None:
    """Issue a warning about a user's kernel at ``where`` (its file:line, so Python prints the user's
    line, not the simulator module that noticed the problem); without a provenance, at ``stacklevel``."""
    import warnings
    if where is not None and getattr(where, "file", None) and getattr(where, "line", None):
        if len(_WARN_REGISTRY) >= 4096:
            _WARN_REGISTRY.clear()
        registry = _WARN_REGISTRY.setdefault(where.file, {})
        warnings.warn_explicit(message, category, where.file, where.line, registry=registry)
    else:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


#: (file, line, call) -> Provenance: provenances are immutable, so call sites share one object each
_SITES: dict = {}


def site_provenance(file: str, line: int, call: str) -> Provenance:
    """The shared `Provenance` of call ``call`` at ``file:line`` (one object per site: tracing a call
    site again, e.g. in a loop body or a rebuilt kernel, allocates nothing)."""
    key = (file, line, call)
    where = _SITES.get(key)
    if where is None:
        if len(_SITES) >= 65536:
            _SITES.clear()
        where = _SITES[key] = Provenance(file, line, call)
    return where


def limit_hint(limit: Any) -> Optional[str]:
    """The fix an error states when its raise site gives none: what its ``limit`` asks for, as an
    instruction (``[1, 255]`` -> ``pass a value in [1, 255]``, ``sat | nosat`` -> ``use one of sat, nosat``).
    None for limits that do not read as one."""
    if not isinstance(limit, str) or not limit:
        return None
    if limit[0] in "[(":
        return f"pass a value in {limit}"
    if limit.startswith(("one of ", "multiple of ")):
        return f"use {'a ' if limit.startswith('multiple') else ''}{limit}"
    if limit.startswith((">= ", "<= ", "> ", "< ")):
        return f"pass a value {limit}"
    for sep in (" | ", ", "):       # a list of legal words: "check_only, check_and_set", "sat | nosat"
        words = limit.split(sep)
        if len(words) > 1 and all(w and " " not in w for w in words):
            return "use one of " + ", ".join(words)
    return None


class PtoError(Exception):
    """Base class of all simulator errors.

    Args:
        message: what was wrong, in one sentence.
        op: the PTO op (``"pto.mad"``) or API (``"tik.data_move"``) that raised.
        operand: the operand or clause name (``"%m"``, ``"pre_quant"``).
        value: the offending value.
        limit: the rule or range broken (``"[1, 4095]"``).
        hint: what to do about it.
        where: the user's source location.
    """

    def __init__(self, message: str, *, op: Optional[str] = None, operand: Optional[str] = None,
                 value: Any = None, limit: Any = None, hint: Optional[str] = None,
                 where: Optional[Provenance] = None, context: Optional[dict] = None):
        self.message = message
        self.op = op
        self.operand = operand
        self.value = value
        self.limit = limit
        self.hint = hint if hint is not None else limit_hint(limit)
        self.where = where
        self.context = dict(context or {})
        super().__init__(message)

    def with_where(self, where: Optional[Provenance]) -> "PtoError":
        """Attach a source location unless one is already set; returns self."""
        if self.where is None and where is not None:
            self.where = where
        return self

    def add_context(self, **items: Any) -> "PtoError":
        """Attach runtime context (loop indices, core id); returns self."""
        for k, v in items.items():
            self.context.setdefault(k, v)
        return self

    def __str__(self) -> str:
        parts = []
        if self.where is not None:
            parts.append(f"{self.where}: ")
        head = []
        if self.op and not (self.where is not None and self.where.call == self.op):   # "in `op`" names it already
            head.append(self.op)
        if self.operand:
            head.append(f"operand {self.operand}")
        if head:
            parts.append(" ".join(head) + ": ")
        parts.append(self.message)
        if self.limit is not None and "limit" not in self.message and not _mentions(self.message, str(self.limit)):
            parts.append(f" (limit: {self.limit})")
        if self.context:
            ctx = ", ".join(f"{k}={v}" for k, v in self.context.items())
            parts.append(f" [at {ctx}]")
        if self.hint:
            parts.append(f" Fix: {self.hint}")
        return "".join(parts)


def _mentions(message: str, text: str) -> bool:
    """Whether ``message`` already states ``text`` as a whole token (a one-letter limit such as a kernel
    named ``e`` inside a word does not count, so the limit is still shown). A number is no mention of another:
    a limit ``1`` is not stated by ``-1``, nor ``16`` by ``16.5``."""
    import re
    before = "(?<![A-Za-z0-9_.-])" if text[:1].isdigit() else "(?<![A-Za-z0-9_.])"
    return re.search(rf"{before}{re.escape(text)}(?![A-Za-z0-9_]|\.\d)", message) is not None


class OutOfBounds(PtoError, IndexError):
    """An access falls outside its buffer, region or tensor."""


class Misaligned(PtoError, ValueError):
    """An address or size breaks the space's alignment rule."""


class CapacityExceeded(PtoError, MemoryError):
    """A tile or allocation does not fit in the memory space."""


class IllegalOperand(PtoError, ValueError):
    """An operand, clause, dtype combination or value is not legal for the op."""


class UnknownName(IllegalOperand, LookupError):
    """A name (target, dtype, space, pipe, op) is not known; lists the valid ones."""


class UnsupportedOp(PtoError, ValueError):
    """The op or API exists but the selected chip or this simulator does not support it."""


class SyncError(PtoError, RuntimeError):
    """A synchronisation protocol violation (deadlocked wait, unpaired flags, bad event id)."""


class HazardError(SyncError):
    """A data hazard: an access by one pipe to bytes another pipe wrote without a happens-before edge."""


class GmRace(SyncError):
    """Two cores access the same GM bytes in one barrier phase (no ``pto.sync_all`` between them) and
    at least one writes: the result depends on timing on hardware (``MachineOptions(gm_races="raise")``)."""


class GmOverreadWarning(RuntimeWarning):
    """A GM read that starts inside a tensor and runs past the host's allocation for it (named choice
    GM_OVERREAD_READS_UNKNOWN, `pto_core.ops.mte`): the bytes past it read as unknown data, as the device
    reads whatever memory follows. One warning per op site and tensor; the ``("gm-overread", ...)`` report
    names the line and the bytes."""


class GmPaddingWriteWarning(RuntimeWarning):
    """A GM write that runs past its tensor's last 32-byte block into the host's allocation padding (named
    choice GM_PADDING_WRITE_WARNS, `pto_core.ops.mte`): the bytes there are dropped (on the device they land
    in the padding, never in the output). One warning per op site and tensor; the ``("gm-tail", ...)``
    report names the bytes."""


class BurstTailWarning(RuntimeWarning):
    """A ``pto.mte_gm_l1`` / ``pto.mte_l1_ub`` whose constant ``%len_burst`` is not a multiple of 32 (pto_spec
    §3.1: the destination is written in whole 32-byte blocks, so the bytes up to the next 32-byte boundary
    are copied from the source too). Issued when the op is checked (recorded into a program, parsed from
    PTO-AS, or called eagerly), at the user's line; Python's default filter shows it once per op site.
    Named choice BURST_TAIL_WARNS (`pto_core.ops.mte`)."""


class GmRaceWarning(RuntimeWarning):
    """The warning ``MachineOptions(gm_races="warn")`` (the default) emits for each distinct GM race."""


class BarrierCountWarning(RuntimeWarning):
    """An all-core barrier (``pto.sync_all``, TIK ``block_barrier``) the device cannot pass: some cores of
    the launch ended without reaching it (BARRIER_COUNT_MISMATCH), or the launch has more blocks than the
    chip runs at once (BARRIER_NEEDS_RESIDENT_BLOCKS). The run continues, but on the device the kernel
    hangs there (one warning per run and case; the ``("sync", ...)`` report names the barrier's line)."""


class CmpmaskUnsetBitsWarning(RuntimeWarning):
    """A select reads CMPMASK bits that the register's last write did not set (named choice
    CMPMASK_UNSET_BITS_WARN, `pto_core.ops.vector_cmpsel`): an 8-bit ``vsel`` mode 0 reads 256 bits after a
    16-byte ``mov_tensor_to_cmpmask`` or a 16/32-bit ``vcmp``. Those lanes take ``src1`` here (the bits read
    as 0); no source gives their value on the device. One warning per op site; a ``("cmpmask", ...)`` report."""


class UninitializedRead(PtoError, RuntimeError):
    """An op read bytes that nothing wrote since the buffer was created."""


class UninitializedReadWarning(RuntimeWarning):
    """A TIK ``start_debug`` run returned output bytes that the kernel never wrote (its
    ``unwritten-output`` reports; one warning per run)."""


class ConfigError(PtoError, ValueError):
    """A bad option value (machine options, CLI flags)."""


class AsmParseError(PtoError, ValueError):
    """PTO-AS text could not be parsed; carries line and column.

    A ``ValueError`` (as ``json.JSONDecodeError`` and ``tomllib.TOMLDecodeError`` are), not a ``SyntaxError``:
    SyntaxError's instance layout cannot be combined with ``SystemExit``'s, so the TIK facade's variant of the
    class (`tbe_compat.tik.errors.tik_error_class`, a ``SystemExit`` by default) could not be built."""

    def __init__(self, message: str, *, line: int, column: int, source_name: str = "<pto>", **kw: Any):
        super().__init__(message, **kw)
        self.line = line
        self.column = column
        self.source_name = source_name

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.column}: {PtoError.__str__(self)}"

    def __reduce__(self):
        """Pickled with its keyword-only fields: the default (``cls(*args)``) cannot rebuild it (``line`` and
        ``column`` are required), so a parse error raised in a multiprocessing worker killed the pool's result
        thread instead of reaching the parent."""
        return _rebuild_asm_parse_error, (type(self), self.message, self.line, self.column, self.source_name), \
            dict(self.__dict__)


def _rebuild_asm_parse_error(cls: type, message: str, line: int, column: int, source_name: str) -> AsmParseError:
    """Unpickling helper of `AsmParseError`; the other fields (hint, where, ...) come from the pickled state."""
    return cls(message, line=line, column=column, source_name=source_name)


class TassignError(CapacityExceeded):
    """One or more TASSIGN static checks (SA-0351..SA-0354) failed; ``violations`` lists them."""

    def __init__(self, message: str, *, violations: tuple = (), **kw: Any):
        super().__init__(message, **kw)
        self.violations = tuple(violations)


def expect_range(value: int, lo: int, hi: int, *, op: str, operand: str, hint: Optional[str] = None) -> int:
    """Return ``value`` if ``lo <= value <= hi``, else raise `IllegalOperand` naming the range."""
    if not (lo <= value <= hi):
        raise IllegalOperand(f"value {value} is outside [{lo}, {hi}]", op=op, operand=operand,
                             value=value, limit=f"[{lo}, {hi}]", hint=hint or f"pass {operand} between {lo} and {hi}")
    return value
