"""Memory spaces, the Machine, pointers and the context every op executes in.

Model:

* A `Machine` has one global memory (GM) shared by all cores and, per core, one flat
  ``uint8`` buffer per on-chip space sized by the chip profile (``l1``, ``l0a``,
  ``l0b``, ``l0c``, ``bt``, ``fb``, MX scale spaces) plus ``vector_subcores`` unified
  buffers (``ub``; UB 0 and UB 1 are the AIV0/AIV1 buffers that FIXPIPE's dual
  destination writes).
* GM is a set of named *regions* (one per kernel argument or allocation) placed in
  one virtual byte-address space with unmapped guard gaps between them, so an
  access that runs past a tensor's allocation (`GM_TAIL_PAD`: the host pads it) is an
  `OutOfBounds` error, never a silent write into a neighbour.
* Every buffer keeps a per-byte *written* map for uninitialised-read detection.
* A `Ptr` is a typed byte address in one space (``!pto.ptr<f16, l0a>`` at 0x400).
  Pointers made by ``machine.ptr(...)`` are bound to a core (`ExecContext`) so the
  eager API (``pto.mad(a, b, c, ...)``) knows where to run.
* Ops never touch numpy buffers directly: they ask the `ExecContext` for byte or
  typed views, which checks bounds, records the access for the hazard verifier,
  checks/marks initialisation, and names the operand in any error.
"""
from __future__ import annotations

import bisect
import contextlib
import functools
import threading
from dataclasses import dataclass, field
from typing import Callable, Literal, Optional

import numpy as np

from .dtypes import DType, dtype as _dtype
from .errors import (ConfigError, IllegalOperand, Misaligned, OutOfBounds, PtoError, Provenance,
                     UninitializedRead, warn_at)
from .targets import ChipProfile, ON_CHIP_SPACES, get_target, space_name

# ----------------------------------------------------------------------------- options


@dataclass(frozen=True, kw_only=True)
class MachineOptions:
    """Checker and fill settings of a `Machine` (all checks on by default).

    Attributes:
        check_hazards: run the pipe hazard verifier (`pto_core.checks.hazards`);
            default True. Flag-protocol checks (a ``wait_flag`` no earlier
            ``set_flag`` raised, a second ``set_flag`` on a flag still set, flags
            left set at kernel end) stay on either way: they define what the sync
            ops do, not an optional lint.
        hazard_same_pipe: how the verifier orders two ops on the *same* pipe:
            ``"ordered"`` (default: program order within one pipe is a
            happens-before edge) or ``"barrier"`` (strict: like the CCE/AscendC
            rule that data-dependent instructions of one pipe need
            ``pipe_barrier(P)``; the scalar pipe S is always in order). See
            migration_guide/pto_sync.md.
        gm_races: what to do when two cores access the same GM bytes in one barrier phase
            (no ``pto.sync_all`` / TIK ``block_barrier`` between them) and one of them writes
            (`pto_core.checks.races`: read/write always; write/write when the later write
            stores different bytes; atomic writes race with plain accesses and with atomics of
            another op, never with atomics of the same op): ``"warn"`` (default: keep the
            first events in ``machine.reports`` and emit a `GmRaceWarning` per distinct race),
            ``"record"`` (reports only), ``"raise"`` (`GmRace`), ``"off"``. Machines with one
            core have no checker.
        uninitialized: what to do when an op reads bytes nothing wrote:
            ``"record"`` (default: keep the first events in ``machine.reports``),
            ``"warn"`` (also emit a Python warning), ``"raise"`` (`UninitializedRead`),
            ``"off"``.
        fill: initial content of on-chip buffers and uninitialised GM outputs:
            ``"pattern"`` (default: every byte = ``fill_byte``), ``"zero"`` or
            ``"random"`` (seeded by ``seed``).
        fill_byte: the pattern byte of on-chip buffers. Default 0x55: finite in every
            float format (f16 85.3, bf16/f32 1.47e13, fp8 finite) and recognisable
            (int32 1431655765), so stale on-chip data behaves like real stale data --
            the common idiom of zeroing a buffer with ``x * 0`` gives 0, as on hardware
            -- while still standing out in a dump.
        gm_fill_byte: the pattern byte of GM regions (uninitialised outputs and
            workspaces). Default 0xFF: NaN in float formats and -1 in signed integers, so
            an output element no op wrote is unmistakable (and never zero); ``None``
            means ``fill_byte``.
        overflow_mode: ``None`` (use the chip default), ``"saturation"`` or
            ``"inf_nan"``: the process-wide float overflow mode ops consult when a
            clause does not choose one.
        seed: seed for ``fill="random"`` and for randomised core order.
        max_reports: cap on recorded checker events; later ones are only counted
            (`Machine.reports_dropped`), so a capped list can hide the one report that matters.
    """

    check_hazards: bool = True
    hazard_same_pipe: Literal["ordered", "barrier"] = "ordered"
    gm_races: Literal["warn", "record", "raise", "off"] = "warn"
    uninitialized: Literal["record", "warn", "raise", "off"] = "record"
    fill: Literal["pattern", "zero", "random"] = "pattern"
    fill_byte: int = 0x55
    gm_fill_byte: Optional[int] = 0xFF
    overflow_mode: Optional[Literal["saturation", "inf_nan"]] = None
    seed: int = 0
    max_reports: int = 100

    def __post_init__(self):
        if self.hazard_same_pipe not in ("ordered", "barrier"):
            raise ConfigError(f"hazard_same_pipe={self.hazard_same_pipe!r} is not one of ordered, barrier",
                              hint="pass hazard_same_pipe=\"ordered\" or \"barrier\"")
        if self.gm_races not in ("warn", "record", "raise", "off"):
            raise ConfigError(f"gm_races={self.gm_races!r} is not one of warn, record, raise, off",
                              hint="pass gm_races=\"warn\", \"record\", \"raise\" or \"off\"")
        if self.uninitialized not in ("record", "warn", "raise", "off"):
            raise ConfigError(f"uninitialized={self.uninitialized!r} is not one of record, warn, raise, off",
                              hint="pass uninitialized=\"record\", \"warn\", \"raise\" or \"off\"")
        if self.fill not in ("pattern", "zero", "random"):
            raise ConfigError(f"fill={self.fill!r} is not one of pattern, zero, random",
                              hint="pass fill=\"pattern\", \"zero\" or \"random\"")
        if not 0 <= int(self.fill_byte) <= 255:
            raise ConfigError(f"fill_byte={self.fill_byte!r} is not a byte value 0..255",
                              hint="pass an int fill_byte in [0, 255]")
        if self.gm_fill_byte is not None and not 0 <= int(self.gm_fill_byte) <= 255:
            raise ConfigError(f"gm_fill_byte={self.gm_fill_byte!r} is not a byte value 0..255 (or None)",
                              hint="pass an int gm_fill_byte in [0, 255], or None")
        if self.overflow_mode not in (None, "saturation", "inf_nan"):
            raise ConfigError(f"overflow_mode={self.overflow_mode!r} is not None, 'saturation' or 'inf_nan'",
                              hint="pass overflow_mode=None (the chip's default), \"saturation\" or \"inf_nan\"")


# ----------------------------------------------------------------------------- buffers


class Buffer:
    """A flat byte array plus its per-byte written map.

    Attributes:
        space: canonical space name (``"ub"``); ``label`` adds the core/sub-block.
        data: ``uint8`` array of the buffer's bytes.
        written: ``bool`` array, True where some op (or an input load) wrote the byte. A buffer
            whose every byte is known to be written (a GM input region) holds a read-only
            all-True view instead (no memory: `mark_all_written`); the write paths of
            `ExecContext` leave it alone (nothing to add) and `flags_for_write` turns it into
            a real array before an op stores flags into it.
        known: byte ranges ``(lo, hi)`` whose flags are all known to be set (at most `_MAX_KNOWN`,
            newest last): ranges a dense write marked or a check found all set. Flags only ever
            go from set to clear through a writable flag view handed to an op
            (`ExecContext.span_tracked` with ``write=True``), which forgets the ranges it
            overlaps and, until the op ends, keeps them out of ``known`` (``held``); so a read
            inside a known range needs no scan of the map.
    """

    __slots__ = ("space", "label", "data", "written", "base", "known", "held")

    def __init__(self, space: str, size: int, *, label: str = "", fill: Optional[np.ndarray] = None,
                 base: int = 0, all_written: bool = False):
        self.space = space
        self.label = label or space
        self.base = base
        if fill is None:
            self.data = np.zeros(size, dtype=np.uint8)
        else:
            self.data = fill
        if all_written:
            self.written = np.broadcast_to(np.True_, self.data.shape)    # see `mark_all_written`
        else:
            self.written = np.zeros(size, dtype=np.bool_)
        self.known: list = []
        self.held: list = []

    def mark_all_written(self) -> None:
        """Every byte is initialised (input data, a zero-cleared output): the written map becomes a
        read-only all-True view of no memory."""
        self.written = np.broadcast_to(np.True_, self.data.shape)

    def flags_for_write(self) -> np.ndarray:
        """The written map as a writable array (materialises an all-True view)."""
        if not self.written.flags.writeable:
            self.written = np.ones(self.data.shape, dtype=np.bool_)
        return self.written

    @property
    def size(self) -> int:
        return self.data.shape[0]

    def __repr__(self) -> str:
        return f"<Buffer {self.label} {self.size} B>"


@dataclass(eq=False)
class GmRegion:
    """One GM allocation: a named byte range at a virtual base address."""

    name: str
    base: int
    buffer: Buffer
    dtype: Optional[DType] = None
    shape: tuple = ()
    #: names of the kernel arguments placed on this allocation in place (``run(alias=)``, TIK
    #: ``start_debug(inplace=)``): a kernel may reach these bytes through any of them
    aliases: tuple = ()
    #: the tensor's name as messages give it: ``name`` without the ``#2`` suffix a machine reused by a later
    #: run adds to keep region names unique (`Executable.run` with ``machine=``); empty: ``name``
    shown: str = ""

    def __post_init__(self):
        if not self.shown:
            self.shown = self.name

    @property
    def size(self) -> int:
        return self.buffer.size

    @property
    def label(self) -> str:
        """The tensor as messages name it: ``'x'``, or with outputs placed on it in place ``'y' (in place on
        'x')``, so a user who wrote through ``y`` finds the name of the call's tensor."""
        if not self.aliases:
            return repr(self.shown)
        return f"{', '.join(repr(n) for n in self.aliases)} (in place on {self.shown!r})"

    @property
    def end(self) -> int:
        return self.base + self.buffer.size

    @property
    def padded_size(self) -> int:
        """Bytes of the allocation the host makes for this tensor (`GM_TAIL_PAD`)."""
        return _round_up(self.buffer.size, 32) + GM_TAIL_PAD


GM_BASE = 0x1000_0000
GM_ALIGN = 512
GM_GUARD = 4096
#: Named choice "GM allocation padding": the host allocates every GM tensor of ``n`` bytes as
#: ``round32(n) + GM_TAIL_PAD`` bytes, so a DMA may touch up to that end. Source: GE's
#: ``TensorUtils::GetTensorMemorySizeInBytes`` (metadef ``graph/utils/tensor_utils.cc``) sizes tensor
#: memory as ``((n + 2*32 - 1) / 32) * 32``; MindSpore's ``GetCommonAlignSize`` reserves at least as
#: much (``(n + 512 + 31) / 512 * 512``). The padding's bytes are unknown: reads there give unknown
#: data, writes there are dropped (``pto_core.ops.mte``). Must stay below `GM_GUARD`.
GM_TAIL_PAD = 32


class GlobalMemory:
    """All GM regions of a machine; resolves virtual addresses to (region, offset)."""

    def __init__(self, machine: "Machine"):
        self._machine = machine
        self.regions: list = []
        self._bases: list = []
        self._next = GM_BASE
        self._hint = None           # the region `find_padded` found last: `find` tries it first

    def alloc(self, nbytes: int, *, name: str = "", dtype=None, shape=(), data: Optional[np.ndarray] = None,
              fill: Optional[str] = None, shown: str = "") -> GmRegion:
        """Allocate a region of ``nbytes`` bytes; ``data`` (any array) initialises it and marks it written.
        0 bytes is an empty tensor (a framework passes one to a kernel that reads nothing of it): every
        access to it is out of bounds. ``shown``: the name messages give (`GmRegion.shown`; default ``name``)."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise IllegalOperand(f"GM allocation of {nbytes} bytes", operand=name or "gm", value=nbytes,
                                 limit=">= 0")
        name = name or f"gm{len(self.regions)}"
        if any(r.name == name for r in self.regions):
            raise IllegalOperand(f"GM region name {name!r} is already used", operand="name", value=name,
                                 hint="give every GM tensor a unique name")
        base = self._next
        self._next = _round_up(base + nbytes + GM_GUARD, GM_ALIGN)
        raw = None
        if data is not None:
            raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
            if raw.size != nbytes:
                raise IllegalOperand(f"initial data has {raw.size} bytes, region {name!r} has {nbytes}",
                                     operand=name, value=raw.size, limit=nbytes)
        if raw is None:
            content = self._machine._fill_array(nbytes, fill, gm=True)
        else:
            if (fill or self._machine.options.fill) == "random":
                self._machine.random_fill.reserve(nbytes)     # the same place in the stream as an unfed region
            content = raw.copy()
        shown = shown or name
        buf = Buffer("gm", nbytes, label=f"gm:{shown}", fill=content, base=base, all_written=raw is not None)
        region = GmRegion(name, base, buf, _dtype(dtype) if dtype is not None else None, tuple(shape), shown=shown)
        self.regions.append(region)
        self._bases.append(base)
        return region

    def region(self, name: str) -> GmRegion:
        for r in self.regions:
            if r.name == name:
                return r
        raise IllegalOperand(f"no GM region named {name!r}", operand="name", value=name,
                             limit=", ".join(r.name for r in self.regions) or "(none)")

    def find_padded(self, addr: int) -> Optional[tuple]:
        """``(region, offset)`` of the allocation whose padded extent (`GmRegion.padded_size`) holds
        byte ``addr``, or None (the offset may be past the region's size: a padding byte)."""
        i = bisect.bisect_right(self._bases, addr) - 1
        if i >= 0 and addr - self.regions[i].base < self.regions[i].padded_size:
            r = self._hint = self.regions[i]
            return r, addr - r.base
        return None

    def find(self, addr: int, nbytes: int) -> tuple:
        """Return ``(region, offset)`` holding ``[addr, addr + nbytes)`` or raise `OutOfBounds`."""
        r = self._hint              # a burst move looked its GM side up with find_padded just before
        if r is not None:
            off = addr - r.base
            if 0 <= off <= r.size and off + nbytes <= r.size:   # inside r: the region bisect finds too
                return r, off
        i = bisect.bisect_right(self._bases, addr) - 1
        if i >= 0:
            r = self.regions[i]
            off = addr - r.base
            if off + nbytes <= r.size:
                return r, off
            if off < r.padded_size:
                raise OutOfBounds(f"GM bytes [{off}, {off + nbytes}) run past the end of region {r.shown!r} "
                                  f"({r.size} B)", value=hex(addr), limit=f"{r.size} B",
                                  hint="check burst lengths, strides and offsets against the tensor's size")
        # The access starts outside every allocation (in a guard gap). When it reaches into the next
        # region it is almost always a negative offset into that tensor (``t[s]`` with s < 0): name it,
        # not the region whose guard gap the start address happens to fall in.
        if i + 1 < len(self.regions) and addr + nbytes > self.regions[i + 1].base:
            nxt = self.regions[i + 1]
            before = nxt.base - addr
            raise OutOfBounds(f"GM bytes [-{before}, {nbytes - before}) of region {nxt.shown!r}: the access starts "
                              f"{before} B before the region's first byte (a negative offset into it)",
                              value=hex(addr), limit="offset >= 0",
                              hint="check the offset expression: it is negative at this point")
        near = []                   # the neighbours, nearer first: which tensor the bad offset most likely meant
        if i >= 0:
            prev = self.regions[i]
            near.append((addr - prev.end, f"{addr - prev.end} B past the end of region {prev.shown!r}"))
        if i + 1 < len(self.regions):
            nxt = self.regions[i + 1]
            near.append((nxt.base - addr, f"{nxt.base - addr} B before region {nxt.shown!r}"))
        where = f" ({' and '.join(text for _, text in sorted(near))})" if near else ""
        raise OutOfBounds(f"GM address {addr:#x} is not inside any allocated region{where}", value=hex(addr),
                          hint="check the offset expression (a negative offset lands before its tensor; a loop or core "
                               "index can run past its end) and the burst/repeat counts; a PTO pointer into GM must "
                               "come from a kernel argument or gm allocation")


def note_pointer_dtype(e: OutOfBounds, ptr, region: Optional[GmRegion]) -> OutOfBounds:
    """Add to the `OutOfBounds` ``e`` of a GM access through ``ptr`` into ``region`` that the pointer's dtype is
    not the one the region was declared with (``out.pto_ptr().cast("f32")`` over a float16 output: the op counts
    f32 elements, twice the bytes): the overflow is then most likely the cast, which the bare "run past the end"
    did not say. Nothing when the dtypes agree, the region has none, or ``e`` says so already -- nor when the
    pointer's elements are no wider than the region's (an ``f16`` pointer over an ``f32`` or ``s16`` region): counts
    and offsets in them cover at most the bytes the region's dtype would, so the cast cannot be what overflowed, and
    the Fix (use the region's dtype) would reach further (review414). Returns ``e``."""
    if region is None or region.dtype is None or ptr.dtype == region.dtype or getattr(e, "pointer_dtype", None):
        return e
    pd, rd = ptr.dtype, region.dtype
    if pd.bits <= rd.bits:
        return e

    def width(d) -> str:
        return str(d.bits // 8) if d.bits >= 8 else str(d.bits / 8)
    e.pointer_dtype = pd
    size = f" ({width(pd)} byte(s) per element, not {width(rd)})"
    e.message += (f"; the pointer's dtype is {pd.name} but region {region.label} was declared {rd.name}{size}: "
                  f"an op that counts elements counts them in the pointer's dtype")
    e.hint = (f"if that dtype is a mistake (a .cast({pd.name!r}) of the region's {rd.name} pointer), use a "
              f"{rd.name} pointer (without the cast; in a TIK kernel: tensor.pto_ptr()) and let the op convert where "
              f"it can (FIXPIPE: a pre_quant mode such as f32_f16); otherwise "
              + (e.hint or "check burst lengths, strides and offsets against the tensor's size"))
    return e


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


# ----------------------------------------------------------------------------- pointers


@dataclass(frozen=True, slots=True)
class Ptr:
    """A typed byte address: ``!pto.ptr<dtype, space>`` at ``addr``.

    ``addr`` is a byte offset into the on-chip space, or a virtual GM address.
    ``sub`` selects the UB of vector sub-core 0/1 (only meaningful for ``ub``).
    ``ctx`` binds the pointer to a core for the eager API (None inside programs).
    Adding an int moves by that many *elements*; `byte_offset` moves by bytes.
    """

    space: str
    dtype: DType
    addr: int
    sub: int = 0
    ctx: Optional["ExecContext"] = field(default=None, compare=False, repr=False)

    def __add__(self, elements: int) -> "Ptr":
        return self.byte_offset(self.dtype.nbytes(int(elements)) if elements >= 0
                                else -self.dtype.nbytes(-int(elements)))

    # (direct construction: the same object `dataclasses.replace` would build, at a fraction of its cost)
    def byte_offset(self, nbytes: int) -> "Ptr":
        return Ptr(self.space, self.dtype, self.addr + int(nbytes), self.sub, self.ctx)

    def cast(self, new_dtype) -> "Ptr":
        """Same address, another element type (``pto.castptr``)."""
        return Ptr(self.space, _dtype(new_dtype), self.addr, self.sub, self.ctx)

    @property
    def type_str(self) -> str:
        """PTO-AS type: ``!pto.ptr<f16, l0a>``."""
        return f"!pto.ptr<{self.dtype.pto_name}, {self.space}>"

    def __str__(self) -> str:
        sub = f"[ub{self.sub}]" if self.space == "ub" and self.sub else ""
        return f"{self.type_str}@{self.addr:#x}{sub}"


# ----------------------------------------------------------------------------- cores & machine


#: On-chip buffers (L1, L0A/B/C, BT, FB, scale buffers and each vector sub-core's UB) are allocated and
#: filled on their first use instead of when the `Machine` is made (a kernel that never touches a 1 MiB L1
#: does not pay for filling it; a launch of thousands of blocks does not hold ~0.75 MiB of UB and UB
#: written-map per block before any block runs). The content is the same: ``fill`` "pattern" and "zero" do
#: not depend on when a buffer is made; with "random" each buffer's place in the seeded stream of random
#: bytes is reserved when the machine is made, in the order the draws always had (per core: the other
#: spaces, then UB 0, UB 1; then GM tensors as they are placed), and its bytes are drawn from that place on
#: first use (`RandomFill`): the same contents as drawing every buffer up front.
LAZY_BUFFERS = True

#: An op that writes in several steps (FIXPIPE ``loop3`` iterations / split halves / run groups, vector repeats
#: run in chunks, ops with two destinations, vnchwconv's 16 destination blocks, vmrgsort repeats, serial
#: vgatherb) is all or nothing: when a later step is refused (out of bounds, outside its tensor, an
#: uninitialised read under ``uninitialized="raise"``, a hazard), the bytes, written flags and special registers
#: its earlier steps changed are put back (`ExecContext.all_or_nothing`), so a caught `PtoError` leaves memory
#: as it was before the op (pto_api.md "A refused op changes nothing"). Ops that check their whole footprint
#: before writing need no journal. False: earlier steps' writes stay (the behaviour before h_fix326).
ALL_OR_NOTHING_WRITES = True

#: `ExecContext.span` and `ExecContext.span_tracked` of an on-chip buffer the core has already looked up, with
#: no fence to check (the running op is not confined to TIK tensors), do the bounds check themselves
#: (``0 <= off`` and ``off + n <= buffer size``, the test `ExecContext._locate_at` makes) instead of calling it;
#: a read of ``span_tracked`` (and the read / write bookkeeping of ``span``, `_on_read` / `_on_write`, of any
#: space) tests the buffer's known fully-written ranges (`Buffer.known`) inline before calling `_all_written`,
#: and ``span_tracked`` takes its all-True flags from the shared array (`_all_true`) directly. Anything else --
#: GM, a buffer not looked up yet, a fence, an out-of-bounds span, a range not known written -- goes the
#: general way, which raises the same errors and makes the same reports. The same checks, fewer Python calls
#: (perf428: conv2d's 365 ``span_tracked`` and 221 ``span`` calls per run; tests/core/test_span_fast_paths.py runs
#: both ways; migration_guide/pto_api.md "Machine, pointers, memory"). False: always the general way.
INLINE_ON_CHIP_SPANS = True

#: An op's report of bytes nothing wrote says which ops moved them there (h_user440: a pto.mte_gm_l1 given TIK's
#: 32-byte block count as its byte length left most of an L1 tile unwritten, and the report named only the
#: pto.mad that used the L0A copy of it, two moves later). Moves copy "nothing wrote" along with the bytes
#: (`span_tracked`), so the op that finally uses them is far from the cause: each tracked write of an op that
#: read such bytes is remembered (the last `CARRIED_KEPT` per buffer) and the report follows them back up to
#: `CARRIED_HOPS` moves. Costs nothing on kernels that read only written bytes (one attribute test per tracked
#: write). False: the reports name only the reading op.
CARRIED_NOTES = True
CARRIED_KEPT = 8
CARRIED_HOPS = 3

#: Named choice RMW_SPANS: `ExecContext.span_rmw` (an op reads bytes, checks the part it uses, then overwrites them
#: all: a ``mad_acc``'s L0C tile) on an on-chip buffer already looked up, inside it, with no fence, whose hazard
#: checks both pass on the verifier's fast path (`checks.hazards.HazardTracker.on_access_rmw`: nothing in the buffer
#: newer than the op knows) makes one bounds test and one hazard call instead of a `span_tracked` and a `span` (two
#: of each), then the same initialisation check and written marks. The same history is recorded (the read, then the
#: write); anything else -- GM, a fence, out of bounds, a possible conflict, a buffer with no history yet -- makes the
#: two calls, which check, raise and report as ever. tests/core/test_fast_paths.py runs both ways;
#: migration_guide/pto_api.md "Machine, pointers, memory". False: always the two calls.
RMW_SPANS = True


class RandomFill:
    """The bytes of ``fill="random"``: the stream ``numpy.random.default_rng(seed).integers(0, 256, n, uint8)``
    gives when called once per buffer in order, addressed by position so a buffer can be drawn late.

    numpy draws such bytes four at a time from 32-bit words (little-endian), each 64-bit PCG64 output giving
    two words (low half first), and a call for ``n`` bytes takes ``ceil(n / 4)`` words: a buffer's bytes are
    words ``[pos, pos + ceil(n / 4))`` of the word stream (`reserve` hands out ``pos``), reached with
    ``PCG64.advance``."""

    def __init__(self, seed):
        self._state = np.random.PCG64(seed).state
        self.pos = 0                # 32-bit words reserved so far

    def reserve(self, nbytes: int) -> int:
        """The stream position of the next ``nbytes`` bytes (taken from the stream now)."""
        pos = self.pos
        self.pos += -(-nbytes // 4)
        return pos

    def draw(self, pos: int, nbytes: int) -> np.ndarray:
        """The ``nbytes`` random bytes reserved at ``pos``."""
        bg = np.random.PCG64()
        bg.state = self._state
        bg.advance(pos // 2)
        lo, words = pos % 2, -(-nbytes // 4)
        raw = bg.random_raw(-(-(lo + words) // 2)).astype("<u8", copy=False)
        return raw.view("<u4")[lo:lo + words].view(np.uint8)[:nbytes]


class Core:
    """One AI core: its on-chip buffers (UB per vector sub-core)."""

    def __init__(self, machine: "Machine", index: int):
        self.machine = machine
        self.index = index
        t = machine.target
        self.buffers: dict = {}
        #: sizes of the on-chip buffers (UB aside) not allocated yet: `buffer` makes each on first use
        #: (LAZY_BUFFERS); with ``fill="random"`` all are made here, in a fixed order of random draws
        self._lazy: dict = {}
        lazy = LAZY_BUFFERS
        #: with ``fill="random"``: each buffer's place in the random stream (`RandomFill`), reserved now in
        #: the fixed order of draws ((space, sub) -> position)
        self._fill_pos: dict = {}
        random = machine.options.fill == "random"
        for space in ON_CHIP_SPACES:
            if space == "ub":
                continue
            size = t.sizes.of(space)
            if size > 0:
                if random:
                    self._fill_pos[space, 0] = machine.random_fill.reserve(size)
                if lazy:
                    self._lazy[space] = size
                else:
                    self.buffers[space] = self._make(space, size)
        subs = range(max(1, t.vector_subcores))
        if random:
            for s in subs:
                self._fill_pos["ub", s] = machine.random_fill.reserve(t.sizes.ub)
        #: the UB of each vector sub-core; None until its first use (LAZY_BUFFERS)
        self._ubs: list = [None if lazy else self._make_ub(s) for s in subs]

    def _make(self, space: str, size: int, sub: int = 0) -> Buffer:
        label = f"core{self.index}.ub{sub}" if space == "ub" else f"core{self.index}.{space}"
        fill = self.machine._fill_array(size, pos=self._fill_pos.get((space, sub)))
        return Buffer(space, size, label=label, fill=fill)

    def _make_ub(self, sub: int) -> Buffer:
        return self._make("ub", self.machine.target.sizes.ub, sub)

    @property
    def ubs(self) -> list:
        """The UB of every vector sub-core (each made now if not yet used)."""
        return [self.buffer("ub", s) for s in range(len(self._ubs))]

    def release(self) -> None:
        """Drop every on-chip buffer made so far (a block that has ended: RELEASE_FINISHED_BLOCKS in
        `pto_core.interpreter`); a later use makes it afresh, holding the launch fill again."""
        for space, buf in self.buffers.items():
            self._lazy[space] = buf.size
        self.buffers.clear()
        self._ubs = [None] * len(self._ubs)

    def buffer(self, space: str, sub: int = 0) -> Buffer:
        if space == "ub":
            ubs = self._ubs
            if not 0 <= sub < len(ubs):
                raise IllegalOperand(f"UB sub-block {sub} does not exist on {self.machine.target.name}",
                                     operand="sub_blockid", value=sub, limit=f"[0, {len(ubs) - 1}]",
                                     hint=f"pass a sub-block id in [0, {len(ubs) - 1}]")
            buf = ubs[sub]
            if buf is None:
                buf = ubs[sub] = self._make_ub(sub)
            return buf
        buf = self.buffers.get(space)
        if buf is None and space in self._lazy:
            buf = self.buffers[space] = self._make(space, self._lazy.pop(space))
        if buf is None:
            raise IllegalOperand(f"memory space {space!r} does not exist on {self.machine.target.name}",
                                 operand="space", value=space,
                                 hint="pick a target that has this space (e.g. A5 for MX scale buffers)")
        return buf


class _ThreadState(threading.local):
    """Per-thread state of eager execution: ``ctx`` is the `ExecContext` of the machine most recently
    created or activated in this thread (None before any; a class default, so reading it in a thread
    that never set it costs no failed attribute lookup -- the TIK facade reads it at every API call)."""
    ctx = None


_current = _ThreadState()


def _hazard_tracker_class():
    """The hazard verifier class (pto_core.checks.hazards.HazardTracker), or None before it exists."""
    try:
        from .checks.hazards import HazardTracker
    except ModuleNotFoundError as e:
        if e.name not in ("pto_core.checks.hazards", "pto_core.checks"):
            raise
        return None
    return HazardTracker


class Machine:
    """A simulated chip: GM plus ``cores`` cores of the target's buffers.

    Args:
        target: a profile name or `ChipProfile` (``"A2A3"``, ``"A5"``, ``"Ascend310"``).
        cores: number of cores to model (default 1).
        options: `MachineOptions`.

    The machine most recently created (or activated) is the default for eager
    ops that have no bound pointer (``pto.set_flag``).
    """

    def __init__(self, target="A2A3", *, cores: int = 1, options: Optional[MachineOptions] = None):
        self.target: ChipProfile = get_target(target)
        self.options = options or MachineOptions()
        if int(cores) < 1:
            raise ConfigError(f"cores={cores} must be >= 1", operand="cores", value=cores, hint="pass cores >= 1")
        #: the contents of ``fill="random"`` buffers, by their place in one seeded stream (`RandomFill`)
        self.random_fill = RandomFill(self.options.seed)
        self.gm = GlobalMemory(self)
        self.cores = [Core(self, i) for i in range(int(cores))]
        self.reports: list = []
        #: checker reports not recorded because `MachineOptions.max_reports` was reached
        self.reports_dropped = 0
        #: messages of the kept reports that were also emitted as a Python warning (``report(..., warned=True)``):
        #: a summary of the reports (``tik-run``) leaves them out, the user has seen them
        self.warned_reports: set = set()
        #: of `reports_dropped`, those also emitted as a Python warning (``report(..., warned=True)`` past the cap):
        #: a summary of the reports leaves them out too, the user has seen them
        self.warned_dropped = 0
        #: (region name, provenance) of the GM over-reads already reported (`pto_core.ops.mte`: one report each)
        self.gm_overread_sites: set = set()
        self.gm_padding_write_sites: set = set()    # (tensor, op site) pairs warned (GM_PADDING_WRITE_WARNS)
        self.cmpmask_unset_sites: set = set()       # op sites warned (CMPMASK_UNSET_BITS_WARN)
        self.printed: list = []           # (core, text) of every pto.debug_print
        self.launch_width = 1             # cores a run-time block count asked for (pto.launch_blocks)
        #: a run-time block count above ``len(cores)`` restarts the launch on a wider machine instead of
        #: failing (set by `Executable.run` on the machines it builds: RELAUNCH_WIDER)
        self.relaunch_wider = False
        #: drop a core's on-chip buffers when its block ends (set by `Executable.run` on the machines it
        #: builds: RELEASE_FINISHED_BLOCKS in `pto_core.interpreter`)
        self.release_finished = False
        #: effects outside the machine (``pto.debug_print`` text on stdout, warnings) of a launch that may
        #: still restart (RELAUNCH_WIDER): held as callables until its run-time block count is known
        #: (`release_held`); dropped if it restarts, so the aborted attempt prints and warns nothing
        self.held: Optional[list] = None
        #: keep holding them past a launch op that stands (a kernel whose launch op may run again and still
        #: restart the launch: RELAUNCH_WIDER in `pto_core.interpreter`); `Executable.run` releases them at the end
        self.hold_to_end = False
        #: a launch op (pto.launch_blocks) may still start cores: set by `Executable.run` for such a kernel
        #: until one stands; the provenance of the first all-core barrier the running cores passed (False: one
        #: without provenance): a launch op starting more cores after it restarts the launch (RELAUNCH_WIDER)
        self.launch_pending = False
        self.barrier_before_launch = None
        self._contexts = [ExecContext(self, c) for c in self.cores]
        if self.options.check_hazards:
            tracker_cls = _hazard_tracker_class()
            if tracker_cls is not None:
                for ctx in self._contexts:
                    ctx.hazards = tracker_cls(ctx)
        #: the cross-core GM race checker (`pto_core.checks.races`), shared by every core; None with one core
        self.gm_races = None
        if self.options.gm_races != "off" and len(self.cores) > 1:
            from .checks.races import GmRaceTracker
            self.gm_races = GmRaceTracker(self)
            for ctx in self._contexts:
                ctx.races = self.gm_races
        self.activate(0)

    def outside(self, effect) -> None:
        """Do ``effect()`` (a print or warning outside the machine) now, or hold it (`held`)."""
        if self.held is None:
            effect()
        else:
            self.held.append(effect)

    def warn(self, message: str, category: type, where, stacklevel: int = 2) -> None:
        """`warn_at` a kernel warning now, or hold it (`outside`) while a launch may still restart; without a
        provenance it is attributed ``stacklevel`` frames above the caller."""
        if self.held is None:
            warn_at(message, category, where, stacklevel=stacklevel + 1)
        else:
            self.held.append(lambda: warn_at(message, category, where))

    def release_held(self, keep: bool = True) -> None:
        """Stop holding outside effects: do the held ones (``keep``) or drop them (a restarted launch)."""
        held, self.held = self.held, None
        for effect in (held or ()) if keep else ():
            effect()

    def release_core(self, core: int) -> None:
        """Core ``core`` has ended its block (RELEASE_FINISHED_BLOCKS in `pto_core.interpreter`): drop its
        on-chip buffers (its results are in GM). The hazard verifier's end-of-kernel findings for the core
        are taken now and reported by `end_kernel` in their usual place; its flag table (flags still set) stays
        for `end_kernel`. The core's notes of moved never-written bytes (`CARRIED_NOTES`), which name its
        buffers and which only its own ops read, go with them (they kept every released block's buffers alive)."""
        ctx = self.context(core)
        if ctx.hazards is not None:
            ctx.ended_reports.extend(ctx.hazards.end_kernel())
        for buf in ctx._holding:
            buf.held.clear()
        ctx._holding.clear()
        ctx._buffers.clear()
        ctx._carried.clear()
        ctx._carry = None
        ctx.core.release()

    def begin_compiled_run(self) -> None:
        """A compiled run (`pto_core.interpreter.Executable.run`) starts: no op of it is refused and then gone
        past (its first error ends the run, `abort_kernel`), so the hazard verifiers may record accesses as they
        check them (`pto_core.checks.hazards.RECORD_AT_ONCE`) until `end_kernel` / `abort_kernel` reset them."""
        for ctx in self._contexts:
            begin = getattr(ctx.hazards, "begin_run", None)      # optional in the protocol
            if begin is not None:
                begin()

    def end_kernel(self) -> list:
        """Finish a kernel run on every core: report flags still set and other end-of-kernel findings.

        Every pipe drains at kernel end, so flag and verifier state start fresh afterwards.
        Returns the list of ``(kind, message)`` reports added.
        """
        before = len(self.reports)
        for ctx in self._contexts:
            if ctx.sync_state is not None:
                for kind, msg in ctx.sync_state.end_kernel():
                    self.report(kind, msg)
            ended, ctx.ended_reports = ctx.ended_reports, []
            for kind, msg in ended:
                self.report(kind, msg)
            if ctx.hazards is not None:
                for kind, msg in ctx.hazards.end_kernel():
                    self.report(kind, msg)
        if self.gm_races is not None:
            self.gm_races.end_kernel()
        return self.reports[before:]

    def abort_kernel(self) -> None:
        """A kernel run raised: forget its flag table, hazard history and race state without reporting them, so a
        later run on this machine starts as after `end_kernel` (pipes drain between kernels); its left-over
        findings belong to the failed run, not to the next one (a flag the failed run set was "already set"
        at the next run's first set_flag)."""
        for ctx in self._contexts:
            if ctx.sync_state is not None:
                ctx.sync_state.end_kernel()
            ctx.ended_reports = []
            if ctx.hazards is not None:
                ctx.hazards.reset()
        if self.gm_races is not None:
            self.gm_races.reset()

    # -- configuration
    @property
    def overflow_mode(self) -> str:
        return self.options.overflow_mode or self.target.overflow_mode

    def _fill_array(self, nbytes: int, fill: Optional[str] = None, *, gm: bool = False,
                    pos: Optional[int] = None) -> np.ndarray:
        """A new buffer's initial bytes; ``pos``: its reserved place in the random stream (else the next)."""
        mode = fill or self.options.fill
        if mode == "zero":
            return np.zeros(nbytes, dtype=np.uint8)
        if mode == "random":
            return self.random_fill.draw(self.random_fill.reserve(nbytes) if pos is None else pos, nbytes)
        byte = self.options.gm_fill_byte if gm and self.options.gm_fill_byte is not None else self.options.fill_byte
        return np.full(nbytes, byte, dtype=np.uint8)

    # -- contexts
    def context(self, core: int = 0) -> "ExecContext":
        if not 0 <= core < len(self.cores):
            raise IllegalOperand(f"core {core} does not exist (machine has {len(self.cores)})", operand="core",
                                 value=core, limit=f"[0, {len(self.cores) - 1}]")
        return self._contexts[core]

    def activate(self, core: int = 0) -> "ExecContext":
        """Make this machine (core ``core``) the default for eager ops without pointers."""
        ctx = self.context(core)
        _current.ctx = ctx
        return ctx

    # -- pointers and data
    def ptr(self, space: str, dtype, addr: int = 0, *, core: int = 0, sub: int = 0) -> Ptr:
        """A pointer bound to ``core``: ``m.ptr("l0a", "f16", 0x400)``."""
        space = space_name(space)
        d = _dtype(dtype)
        if space != "gm":
            self.context(core).core.buffer(space, sub)  # validates the space exists
        return Ptr(space, d, int(addr), sub, self.context(core))

    def gm_alloc(self, shape, dtype, *, name: str = "", data: Optional[np.ndarray] = None,
                 fill: Optional[str] = None, core: int = 0) -> Ptr:
        """Allocate a GM tensor; returns a bound pointer to its first element.

        ``data`` (converted to ``dtype``) initialises it; otherwise it holds the fill pattern.
        """
        d = _dtype(dtype)
        shape = tuple(int(s) for s in np.atleast_1d(np.asarray(shape, dtype=np.int64)))
        count = int(np.prod(shape)) if shape else 1
        raw = None
        if data is not None:
            arr = np.asarray(data)
            if d.bits >= 8 and arr.dtype != d.storage:
                arr = arr.astype(d.storage)
            raw = arr
        region = self.gm.alloc(d.nbytes(count), name=name, dtype=d, shape=shape, data=raw, fill=fill)
        return Ptr("gm", d, region.base, 0, self.context(core))

    def gm_tensor(self, data: np.ndarray, *, name: str = "", dtype=None) -> Ptr:
        """Copy a numpy array into a new GM region and return a pointer to it."""
        arr = np.asarray(data)
        return self.gm_alloc(arr.shape, dtype if dtype is not None else arr.dtype, name=name, data=arr)

    def read(self, ptr: Ptr, shape, dtype=None) -> np.ndarray:
        """Copy ``shape`` elements starting at ``ptr`` out of the machine (no checks recorded)."""
        d = _dtype(dtype) if dtype is not None else ptr.dtype
        shape = tuple(np.atleast_1d(shape))
        count = int(np.prod(shape))
        buf, off = self.resolve(ptr, d.nbytes(count), core=ptr.ctx.core.index if ptr.ctx else 0)
        raw = buf.data[off:off + d.nbytes(count)]
        if d.bits < 8:
            return raw.copy()
        return raw.view(d.storage).reshape(shape).copy()

    def write(self, ptr: Ptr, values, dtype=None) -> None:
        """Copy ``values`` into the machine at ``ptr`` and mark the bytes written (test/driver helper)."""
        d = _dtype(dtype) if dtype is not None else ptr.dtype
        arr = np.asarray(values)
        if d.bits >= 8 and arr.dtype != d.storage:
            arr = arr.astype(d.storage)
        raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        buf, off = self.resolve(ptr, raw.size, core=ptr.ctx.core.index if ptr.ctx else 0)
        buf.data[off:off + raw.size] = raw
        if buf.written.flags.writeable:
            buf.written[off:off + raw.size] = True
            _remember_written(buf, off, off + raw.size)

    def resolve(self, ptr: Ptr, nbytes: int, *, core: int = 0) -> tuple:
        """``(buffer, byte offset)`` for ``nbytes`` at ``ptr``; raises `OutOfBounds`."""
        if ptr.space == "gm":
            region, off = self.gm.find(ptr.addr, nbytes)
            return region.buffer, off
        buf = self.context(core).core.buffer(ptr.space, ptr.sub)
        if ptr.addr < 0 or ptr.addr + nbytes > buf.size:
            raise OutOfBounds(f"bytes [{ptr.addr}, {ptr.addr + nbytes}) are outside {ptr.space} "
                              f"({buf.size} B on {self.target.name})", value=hex(ptr.addr),
                              limit=f"{buf.size} B",
                              hint=f"keep the access inside the {buf.size} B of {ptr.space} (check its address and "
                                   f"length)")
        return buf, ptr.addr

    def report(self, kind: str, message: str, *, warned: bool = False) -> None:
        """Record the checker report ``(kind, message)`` (past ``max_reports``: only count it). ``warned``: the
        caller also emits it as a warning (`warned_reports`)."""
        if len(self.reports) < self.options.max_reports:
            self.reports.append((kind, message))
            if warned:
                self.warned_reports.add(message)
        else:
            self.reports_dropped += 1
            if warned:
                self.warned_dropped += 1

    def __repr__(self) -> str:
        return f"<Machine {self.target.name} cores={len(self.cores)}>"


def active_context() -> Optional["ExecContext"]:
    """The context eager ops without pointers would use now (the machine most recently created or
    activated in this thread), or None."""
    return _current.ctx


@contextlib.contextmanager
def keeping_active_context():
    """Run a block that creates (or runs eager ops on) machines of its own without changing which machine
    eager ops without pointers use afterwards: the active context is put back as it was when the block
    ends (a tool's throwaway machine -- ``tik-compare-fixpipe --new-fixpipe`` runs each replacing op on one
    -- would otherwise stay the default after it)."""
    saved = _current.ctx
    try:
        yield
    finally:
        _current.ctx = saved


def current_context() -> "ExecContext":
    """The default execution context for eager ops (set by `Machine` creation/activation)."""
    ctx = _current.ctx
    if ctx is None:
        raise PtoError("no active Machine: create one with pto_core.Machine(target) before issuing ops",
                       hint="m = Machine('A2A3'); then call pto ops on pointers from m.ptr(...)")
    return ctx


# ----------------------------------------------------------------------------- execution context


class HazardTrackerProtocol:
    """What `ExecContext` expects of a hazard verifier (implemented in ``pto_core.checks.hazards``).

    One tracker per core; it sees every access in program order, tagged with the pipe
    of the op being executed (``begin_op``), plus the sync ops' edges: ``flag_set``
    returns a token the flag table keeps until the matching ``flag_wait`` hands it
    back; ``barrier`` drains one pipe (or ``"ALL"``). Byte ranges are offsets into
    ``buf``; ``operand`` names the op operand for messages.
    """

    def __init__(self, ctx: "ExecContext"): ...
    def begin_op(self, op_name: str, pipe: str, where: Optional[Provenance]) -> None: ...
    def on_access(self, buf: Buffer, lo: int, hi: int, is_write: bool, operand: str = "") -> None: ...
    def on_access_runs(self, buf: Buffer, lo: int, count: int, run: int, stride: int, is_write: bool,
                       operand: str = "") -> None: ...     # optional: else one on_access per run
    def flag_set(self, src: str, dst: str): ...
    def flag_wait(self, src: str, dst: str, token) -> None: ...
    # the bound flag ops (ops.sync.FLAG_BIND): begin_op of a pipe-S op without accesses; flag_set / flag_wait
    # with pipe indices (pto_core.pipes.PIPE_INDEX)
    def begin_sync_op(self) -> None: ...
    def flag_release(self, src: int): ...
    def flag_acquire(self, dst: int, token) -> None: ...
    def barrier(self, pipe: str) -> None: ...
    def unit_flag_check(self, buf: Buffer, lo: int, hi: int) -> None: ...
    def unit_flag_publish(self, buf: Buffer, lo: int, hi: int) -> None: ...
    def unit_flag_consume(self, buf: Buffer, lo: int, hi: int, clear: bool) -> None: ...
    def end_kernel(self) -> list: ...
    def abort_op(self) -> None: ...                        # optional: the current op raised


#: What to check when a PTO op of a TIK kernel runs past its tensors (`ExecContext._check_fence`), per op: the
#: operands whose TIK spelling differs (h_user453: `pto.mad(a, b, c, m, k, n)` in TIK mmad's order was told to
#: "check the repeat, mask, strides"; a byte move given TIK's 32-byte block counts likewise).
_MAD_EXTENT = ("m, n, k and the offsets added to the pointers: pto.mad* take m, n, k in that order "
               "(TIK's mmad takes matrix_m, matrix_k, matrix_n: pto.mad(a, b, c, m, n, k))")
_BYTE_MOVE_EXTENT = ("len_burst, nburst=(count, src_stride, dst_stride) and the offsets added to the pointers: "
                     "lengths and strides are bytes, start to start (TIK's data_move counts 32-byte blocks and "
                     "its strides are gaps: burst b, gap g -> len_burst 32*b, stride 32*(b+g); tik_core.md §5)")
#: review457: the moves below count blocks / load units as TIK's data_move does; they had the byte moves' hint,
#: whose "len_burst 32*b" made the overrun 32 times larger.
_BLOCK_MOVE_EXTENT = ("len_burst, nburst=(n_burst, src_gap, dst_gap) and the offsets added to the pointers: "
                      "len_burst counts 32-byte blocks and the gaps are 32-byte blocks between bursts, as in TIK's "
                      "data_move (tik_core.md §5)")
_LOAD_UNIT_EXTENT = ("len_burst, nburst=(count, src_gap, dst_gap) and the offsets added to the pointers: len_burst "
                     "and the gaps count load units of {unit}")
FENCE_EXTENT_HINTS = {
    **{f"pto.{op}": _MAD_EXTENT for op in ("mad", "mad_acc", "mad_bias", "mad_mx", "mad_mx_acc", "mad_mx_bias")},
    **{f"pto.{op}": _BYTE_MOVE_EXTENT for op in ("mte_gm_l1", "mte_gm_ub", "mte_l1_ub", "mte_ub_gm")},
    **{f"pto.{op}": _BLOCK_MOVE_EXTENT for op in ("mte_l1_gm", "mte_ub_l1", "mte_ub_ub")},
    "pto.mte_l1_bt": _LOAD_UNIT_EXTENT.format(unit="64 B on A2A3-class targets, 32 B of source on A5"),
    "pto.mte_l1_fb": _LOAD_UNIT_EXTENT.format(unit="128 B"),
    "pto.load2d": ("repeat, src_stride, dst_gap and base_idx, all in 512-byte fractals, and the offsets added to "
                   "the pointers"),
}


def fence_extent_hint(op_name: str) -> str:
    """The operands to check when ``op_name`` ran past the TIK tensors of its pointers (`FENCE_EXTENT_HINTS`)."""
    return FENCE_EXTENT_HINTS.get(op_name, "the repeat, mask, strides and the offset added to the pointer")


class ExecContext:
    """What an op sees while it runs: one core of one machine.

    Ops read and write memory only through `read`, `write`, `view` and `span`, which
    bounds-check, check/mark initialisation, and report every access to the hazard
    verifier under the pipe of the op being executed (set by the dispatcher in
    `begin_op`).
    """

    def __init__(self, machine: Machine, core: Core):
        self.machine = machine
        self.core = core
        self.target = machine.target
        self.hazards = None          # set by pto_core.checks.hazards when enabled
        self.op_name: str = ""
        self.pipe: str = "S"
        self.where: Optional[Provenance] = None
        #: the running op's `FencedProvenance.fences` (None: its on-chip accesses are not confined)
        self.fences: Optional[tuple] = None
        self.sync_state = None       # set/wait flag table (pto_core.checks.flags), made by ops.sync
        self.races = None            # the machine's GM race checker (pto_core.checks.races) on multi-core machines
        #: the atomic op (``"add"``/``"max"``/``"min"``) of the GM read-modify-write the running op is doing, set
        #: by the op around its GM accesses (they are atomic for the race checker), else None
        self.gm_atomic: Optional[tuple] = None
        #: Per-core special-purpose registers by name, e.g. ``"CMPMASK"`` (16 bytes, uint8 array:
        #: vcmp result / vsel mode-0 selector), ``"VMS4_SR"`` (vmrgsort4 list counters),
        #: ``"RSVD_CNT"`` (vreduce count). Absent key = register never written.
        self.spr: dict = {}
        self._buffers: dict = {}     # (space, sub) -> on-chip Buffer, filled by `_locate_at`
        self._holding: list = []     # buffers whose writable flag views the running op holds (`Buffer.held`)
        #: end-of-kernel reports of a core whose buffers were released when its block ended (`Machine.release_core`)
        self.ended_reports: list = []
        #: the running op's undo journal (`begin_undo`): None (off) or a list of the bytes and written flags
        #: each write access is about to change
        self.undo: Optional[list] = None
        #: the running op's first tracked read of bytes nothing wrote (``(buffer, lo, hi)``), None if it read none
        #: (`CARRIED_NOTES`): its tracked writes then record where they moved such bytes from
        self._carry: Optional[tuple] = None
        #: buffer -> ``[(lo, hi, op_name, where, src buffer, src lo, src hi), ...]`` (the last `CARRIED_KEPT`):
        #: the ops that moved bytes nothing wrote into the buffer (`_carried_note`)
        self._carried: dict = {}

    # -- op bracketing (called by the dispatcher / interpreter)
    def begin_op(self, op_name: str, pipe: str, where: Optional[Provenance]) -> None:
        self.op_name = op_name
        self.pipe = pipe
        self.where = where
        self.fences = getattr(where, "fences", None) or None
        self._carry = None
        if self._holding:                  # the previous op is done with its writable flag views
            for buf in self._holding:
                buf.held.clear()
            self._holding.clear()
        if self.hazards is not None:
            self.hazards.begin_op(op_name, pipe, where)

    def begin_flag_op(self, op_name: str, where: Optional[Provenance]) -> None:
        """`begin_op` of a bound ``set_flag`` / ``wait_flag`` (pipe S, no memory access, `ops.sync.FLAG_BIND`):
        the same context state; the hazard verifier only counts the op on pipe S (`begin_sync_op`)."""
        self.op_name = op_name
        self.pipe = "S"
        self.where = where
        self.fences = getattr(where, "fences", None) or None
        self._carry = None
        if self._holding:                  # the previous op is done with its writable flag views
            for buf in self._holding:
                buf.held.clear()
            self._holding.clear()
        if self.hazards is not None:
            self.hazards.begin_sync_op()

    def abort_op(self) -> None:
        """The op begun last raised (eager dispatch): the hazard verifier and the GM race checker forget its
        accesses."""
        abort = getattr(self.hazards, "abort_op", None)
        if abort is not None:
            abort()
        if self.races is not None:
            self.races.abort_op()

    # -- all-or-nothing ops (ALL_OR_NOTHING_WRITES)
    def begin_undo(self) -> None:
        """From now until `end_undo`, every write access keeps the bytes and written flags it is about to
        change, so that an op whose later step is refused can put back what its earlier steps wrote."""
        self.undo = []

    def all_or_nothing(self, fn: Callable, *args) -> None:
        """``fn(*args)`` with its writes journalled (`begin_undo`): if it raises, the bytes, written flags and
        special-purpose registers it changed are put back before the error propagates. For ops that write in
        several steps (loop iterations, chunks of repeats, one block list after another), where a later step
        can be refused after an earlier one wrote; an op that checks its whole footprint first needs none."""
        if self.undo is not None or not ALL_OR_NOTHING_WRITES:    # journalled by an enclosing step, or off
            fn(*args)
            return
        spr = dict(self.spr)
        self.begin_undo()
        ok = False
        try:
            fn(*args)
            ok = True
        finally:
            self.end_undo(ok)
            if not ok:
                self.spr = spr

    def _keep(self, buf: Buffer, lo: int, hi: int) -> None:
        w = buf.written
        self.undo.append((buf, lo, buf.data[lo:hi].copy(), w[lo:hi].copy() if w.flags.writeable else None,
                          list(buf.known)))

    def end_undo(self, ok: bool) -> None:
        """Stop journalling; ``ok`` False (the op raised): restore, newest first, what its writes changed."""
        undo, self.undo = self.undo, None
        if ok or not undo:
            return
        for buf, lo, data, flags, known in reversed(undo):
            buf.data[lo:lo + data.size] = data
            if flags is not None:
                buf.flags_for_write()[lo:lo + flags.size] = flags
            buf.known = known

    # -- raw access
    def _locate(self, ptr: Ptr, nbytes: int, operand: str):
        try:
            return self._locate_at(ptr.space, ptr.sub, ptr.addr, nbytes, operand)
        except OutOfBounds as e:       # a GM pointer of another dtype than its tensor's: say so (note_pointer_dtype)
            if ptr.space == "gm":
                found = self.machine.gm.find_padded(ptr.addr)
                note_pointer_dtype(e, ptr, found[0] if found is not None else None)
            raise

    def _locate_at(self, space: str, sub: int, addr: int, nbytes: int, operand: str):
        """``(buffer, offset)`` of ``nbytes`` at byte address ``addr`` of ``space`` (UB ``sub``); bounds-checked."""
        if space == "gm":
            try:
                region, off = self.machine.gm.find(addr, nbytes)
            except OutOfBounds as e:
                e.operand = e.operand or operand
                e.op = e.op or self.op_name
                raise
            return region.buffer, off
        buf = self._buffers.get((space, sub))
        if buf is None:
            buf = self._buffers[(space, sub)] = self.core.buffer(space, sub)
        if addr < 0 or addr + nbytes > buf.data.shape[0]:
            raise OutOfBounds(f"bytes [{addr:#x}, {addr + nbytes:#x}) are outside {space} "
                              f"(capacity {buf.size} B on {self.target.name})", op=self.op_name,
                              operand=operand, value=hex(addr), limit=f"{buf.size} B",
                              hint="check the address, shape and strides of this operand")
        if self.fences is not None:
            self._check_fence(space, addr, nbytes, operand)
        return buf, addr

    def _check_fence(self, space: str, addr: int, nbytes: int, operand: str) -> None:
        """`OutOfBounds` unless ``[addr, addr + nbytes)`` of ``space`` lies inside one of the running op's
        fences of that space (`FencedProvenance`; spaces without a fence are free)."""
        mine = [f for f in self.fences if f[0] == space]
        if not mine or nbytes <= 0 or any(lo <= addr and addr + nbytes <= hi for _, lo, hi, _ in mine):
            return
        names = ", ".join(f"{label} ({space} bytes [{lo:#x}, {hi:#x}))" for _, lo, hi, label in mine)
        raise OutOfBounds(f"bytes [{addr:#x}, {addr + nbytes:#x}) of {space} run outside the tensor(s) its "
                          f"pointers come from: {names}", op=self.op_name, operand=operand, value=hex(addr),
                          limit=names,
                          hint="a PTO op in a TIK kernel must stay inside the TIK tensors of its pointer operands "
                               "(auto-sync orders whole tensors, tik_core.md §7): check "
                               + fence_extent_hint(self.op_name))

    def read(self, ptr: Ptr, nbytes: int, *, operand: str = "src") -> np.ndarray:
        """Byte view of ``[ptr, ptr + nbytes)`` for reading (records the read)."""
        buf, off = self._locate(ptr, nbytes, operand)
        self._on_read(buf, off, off + nbytes, operand)
        return buf.data[off:off + nbytes]

    def write(self, ptr: Ptr, nbytes: int, *, operand: str = "dst") -> np.ndarray:
        """Writable byte view of ``[ptr, ptr + nbytes)`` (records the write, marks bytes written)."""
        buf, off = self._locate(ptr, nbytes, operand)
        self._on_write(buf, off, off + nbytes, operand)
        return buf.data[off:off + nbytes]

    def peek(self, ptr: Ptr, nbytes: int, *, operand: str = "ptr") -> np.ndarray:
        """A copy of the bytes ``[ptr, ptr + nbytes)`` (bounds-checked). Not an access: nothing is reported
        to the checkers (``pto.debug_eval`` looks at a tensor's current data this way)."""
        buf, off = self._locate(ptr, nbytes, operand)
        return buf.data[off:off + nbytes].copy()

    def forget_written(self, ptr: Ptr, nbytes: int, *, operand: str = "ptr") -> None:
        """Clear the written flags of ``[ptr, ptr + nbytes)`` (bounds-checked; the bytes keep their values).

        Checker bookkeeping, not an access: nothing is reported to the hazard verifier or the GM race
        checker. A front end calls it (through ``pto.mark_unwritten``) where storage it used for its own
        scratch is freed, so that a later reader the user never wrote there is reported."""
        if nbytes <= 0:
            return
        buf, off = self._locate(ptr, nbytes, operand)
        if buf.known:
            _forget_written(buf, off, off + nbytes)
        buf.flags_for_write()[off:off + nbytes] = False

    def write_runs(self, ptr: Ptr, count: int, run_bytes: int, stride_bytes: int, *,
                   operand: str = "dst") -> Optional[np.ndarray]:
        """Writable ``(count, run_bytes)`` byte view of ``count`` runs of ``run_bytes`` bytes starting
        ``stride_bytes`` (>= ``run_bytes``) apart from ``ptr``: each run is reported to the hazard verifier
        and marked written, exactly as ``count`` calls of `write` would (the gaps are not touched).

        Returns None when the runs do not lie in one buffer (they span GM regions, or run past the
        space); the caller then writes them one by one, which reports what is wrong with which run.
        """
        extent = (count - 1) * stride_bytes + run_bytes
        try:
            buf, off = self._locate(ptr, extent, operand)
        except OutOfBounds:
            return None
        if self.hazards is not None:
            runs = getattr(self.hazards, "on_access_runs", None)     # optional in the protocol
            if runs is not None:
                runs(buf, off, count, run_bytes, stride_bytes, True, operand)
            else:
                for k in range(count):
                    lo = off + k * stride_bytes
                    self.hazards.on_access(buf, lo, lo + run_bytes, True, operand)
        if self.races is not None and buf.space == "gm":
            self.races.access(self, buf, off, off + extent, True, operand, ((count, run_bytes), (stride_bytes, 1)))
        if self.undo is not None:
            self._keep(buf, off, off + extent)
        if self._carried and buf in self._carried:     # written bytes replace moves of never-written ones
            if stride_bytes == run_bytes:
                self._forget_carried(buf, off, off + extent)
            else:
                for k in range(count):
                    self._forget_carried(buf, off + k * stride_bytes, off + k * stride_bytes + run_bytes)
        if buf.written.flags.writeable and not _known_written(buf, off, off + extent):
            np.ndarray((count, run_bytes), np.bool_, buf.written, off, (stride_bytes, 1))[...] = True
        return np.ndarray((count, run_bytes), np.uint8, buf.data, off, (stride_bytes, 1))

    def view(self, ptr: Ptr, count: int, *, write: bool = False, operand: str = "src",
             dtype: Optional[DType] = None) -> np.ndarray:
        """Typed 1-D view of ``count`` elements at ``ptr`` (raw bytes for packed dtypes)."""
        d = dtype or ptr.dtype
        n = d.nbytes(count)
        raw = self.write(ptr, n, operand=operand) if write else self.read(ptr, n, operand=operand)
        return raw if d.bits < 8 else raw.view(d.storage)

    def span(self, ptr: Ptr, lo: int, hi: int, *, write: bool = False, operand: str = "src"):
        """Byte view of ``[ptr + lo, ptr + hi)`` plus the byte offset of ``ptr`` inside it.

        For strided accesses: an op computes the lowest and highest byte it touches
        relative to ``ptr``, takes one span, then indexes inside it. Returns
        ``(view, origin)`` where ``view[origin]`` is the byte at ``ptr``.
        """
        n = hi - lo          # `write` / `read` of ``ptr.byte_offset(lo)``, without making that pointer
        off = ptr.addr + int(lo)
        buf = self._buffers.get((ptr.space, ptr.sub)) if INLINE_ON_CHIP_SPANS else None
        if buf is None or off < 0 or off + n > buf.data.shape[0] or self.fences is not None:
            buf, off = self._locate_at(ptr.space, ptr.sub, off, n, operand)
        if write:
            self._on_write(buf, off, off + n, operand)
        else:
            self._on_read(buf, off, off + n, operand)
        return buf.data[off:off + n], -lo

    def strided_view(self, ptr: Ptr, shape: tuple, strides: tuple, *, offset: int = 0,
                     dtype: Optional[DType] = None, write: bool = False, operand: str = "src",
                     active=None) -> np.ndarray:
        """Typed strided view of the elements at ``ptr + offset + sum(i_k * strides_k)`` (bytes, strides >= 0).

        For gapped or repeated footprints (vector block/repeat strides): bounds are checked
        on the whole ``[ptr + offset, ... + extent)`` range and that range is reported to the
        hazard verifier, but only the elements the view covers are checked for
        initialisation (reads) or marked written (writes). ``active`` (bool, broadcastable
        to ``shape``) narrows that further to the elements an op really uses (masked-off
        lanes). A write view may alias itself (zero or small strides); the op decides what
        to store.
        """
        d = dtype or ptr.dtype
        size = d.bits >> 3
        if 0 in shape:
            return np.empty(shape, dtype=d.storage)
        extent = size
        for n, s in zip(shape, strides):
            if s < 0:
                raise ValueError(f"negative stride in {strides}")
            extent += (n - 1) * s
        if ptr.space == "gm":
            if offset:
                ptr = Ptr(ptr.space, ptr.dtype, ptr.addr + offset, ptr.sub, ptr.ctx)
            buf, off = self._locate(ptr, extent, operand)
        else:                             # on-chip: the bounds check of `_locate`, without a new Ptr
            buf = self.core.buffer(ptr.space, ptr.sub)
            off = ptr.addr + offset
            if off < 0 or off + extent > buf.data.shape[0]:
                self._locate(Ptr(ptr.space, ptr.dtype, off, ptr.sub, ptr.ctx), extent, operand)
            elif self.fences is not None:
                self._check_fence(ptr.space, off, extent, operand)
        if self.hazards is not None:
            self.hazards.on_access(buf, off, off + extent, write, operand)
        if self.races is not None and buf.space == "gm":
            self.races.access(self, buf, off, off + extent, write, operand, (shape + (size,), tuple(strides) + (1,)))
        view = np.ndarray(shape, dtype=d.storage, buffer=buf.data, offset=off, strides=strides)
        dense = is_dense(shape, strides, size)
        if write:
            if self.undo is not None:
                self._keep(buf, off, off + extent)
            if active is None and dense and self._carried and buf in self._carried:    # (as `_on_write`)
                self._forget_carried(buf, off, off + extent)
            if not buf.written.flags.writeable:
                pass                    # all bytes already written (see `Buffer.mark_all_written`)
            elif active is None and dense:
                buf.written[off:off + extent] = True
                _remember_written(buf, off, off + extent)
            elif _all_written(buf, off, off + extent):
                pass                    # every byte in range is already marked: nothing to add
            else:
                wv = np.ndarray(shape + (size,), dtype=np.bool_, buffer=buf.written, offset=off,
                                strides=tuple(strides) + (1,))
                if active is None:
                    wv[...] = True
                else:
                    np.logical_or(wv, np.asarray(active, dtype=bool)[..., None], out=wv)
            return view
        view.flags.writeable = False
        if self.machine.options.uninitialized == "off":
            return view
        if _all_written(buf, off, off + extent):
            ok = True
        elif active is None and dense:
            ok = False
        else:
            wv = np.ndarray(shape + (size,), dtype=np.bool_, buffer=buf.written, offset=off,
                            strides=tuple(strides) + (1,))
            good = wv.all(axis=-1)
            if active is not None:
                good = good | ~np.asarray(active, dtype=bool)
            ok = bool(good.all())
        if not ok and not self._uninit_dropped():
            if active is None and dense:
                bad = off + int(np.argmin(buf.written[off:off + extent]))
            else:
                idx = np.argwhere(~np.broadcast_to(good, shape))[0]
                elem = off + sum(int(i) * s for i, s in zip(idx, strides))
                bad = elem + int(np.argmin(buf.written[elem:elem + size]))
            self._report_uninitialized(f"reads {buf.label} byte {bad:#x}, which nothing wrote"
                                       + (self._carried_note(buf, bad, bad + 1) if self._carried else ""), operand,
                                       hex(bad))
        return view

    def dense_view(self, ptr: Ptr, offset: int, nbytes: int, dtype: DType, write: bool, operand: str) -> np.ndarray:
        """`strided_view` of a contiguous footprint (``nbytes`` > 0 bytes at ``ptr + offset``, ``dtype`` of
        8 bits or more, every element active) as a 1-D view: the same bounds, fence, hazard, race and
        initialisation checks and the same written marks, without the generic shape arithmetic.
        For the vector engine's per-op fast path (streams whose geometry is known dense at plan time)."""
        if ptr.space == "gm":
            size = dtype.bits >> 3
            return self.strided_view(ptr, (nbytes // size,), (size,), offset=offset, dtype=dtype, write=write,
                                     operand=operand)
        buf = self.core.buffer(ptr.space, ptr.sub)
        off = ptr.addr + offset
        end = off + nbytes
        if off < 0 or end > buf.data.shape[0]:
            self._locate(Ptr(ptr.space, ptr.dtype, off, ptr.sub, ptr.ctx), nbytes, operand)
        elif self.fences is not None:
            self._check_fence(ptr.space, off, nbytes, operand)
        if self.hazards is not None:
            self.hazards.on_access(buf, off, end, write, operand)
        view = buf.data[off:end].view(dtype.storage)
        if write:
            if self.undo is not None:
                self._keep(buf, off, end)
            if self._carried and buf in self._carried:     # written bytes replace moves of never-written ones
                self._forget_carried(buf, off, end)
            if buf.written.flags.writeable:
                buf.written[off:end] = True
                _remember_written(buf, off, end)
            return view
        view.flags.writeable = False
        if self.machine.options.uninitialized != "off" and not _all_written(buf, off, end) \
                and not self._uninit_dropped():
            bad = off + int(np.argmin(buf.written[off:end]))
            self._report_uninitialized(f"reads {buf.label} byte {bad:#x}, which nothing wrote"
                                       + (self._carried_note(buf, bad, bad + 1) if self._carried else ""), operand,
                                       hex(bad))
        return view

    def _on_read(self, buf: Buffer, lo: int, hi: int, operand: str) -> None:
        if self.hazards is not None:
            self.hazards.on_access(buf, lo, hi, False, operand)
        if self.races is not None and buf.space == "gm":
            self.races.access(self, buf, lo, hi, False, operand)
        if self.machine.options.uninitialized == "off" or hi <= lo:
            return
        if INLINE_ON_CHIP_SPANS:
            for a, b in buf.known:             # `_known_written`, inline: `_all_written` answers True
                if a <= lo and hi <= b:
                    return
        if not _all_written(buf, lo, hi) and not self._uninit_dropped():
            bad = lo + int(np.argmin(buf.written[lo:hi]))
            self._report_uninitialized(f"reads {buf.label} byte {bad:#x}, which nothing wrote"
                                       + (self._carried_note(buf, bad, bad + 1) if self._carried else ""), operand,
                                       hex(bad))

    def _uninit_dropped(self) -> bool:
        """True, and the dropped report counted as `Machine.report` counts it, when the report of an
        uninitialised read would be dropped anyway (mode ``"record"`` with ``max_reports`` reports kept): the
        caller then skips locating the first unwritten byte and formatting the message (a kernel that keeps
        reading unwritten bytes pays that per access otherwise)."""
        m = self.machine
        if m.options.uninitialized == "record" and len(m.reports) >= m.options.max_reports:
            m.reports_dropped += 1
            return True
        return False

    def _report_uninitialized(self, what: str, operand: str, value) -> None:
        mode = self.machine.options.uninitialized
        if self._uninit_dropped():
            return
        msg = f"{self.op_name or 'op'} operand {operand} {what}" + (f" ({self.where})" if self.where else "")
        if mode == "raise":
            raise UninitializedRead(what, op=self.op_name, operand=operand, value=value, where=self.where,
                                    hint="load or initialise this data before reading it")
        self.machine.report("uninitialized", msg, warned=mode == "warn")
        if mode == "warn":
            self.machine.warn(msg, RuntimeWarning, self.where, stacklevel=4)

    # -- accesses whose initialisation the op tracks itself
    def span_tracked(self, ptr: Ptr, lo: int, hi: int, *, write: bool = False, operand: str = "src",
                     runs: Optional[tuple] = None):
        """Like `span`, but without the initialisation check/marking; also returns the written map.

        Returns ``(data, written, origin)``: the byte view of ``[ptr + lo, ptr + hi)``, the
        ``bool`` view of the same bytes' written flags, and the offset of ``ptr`` inside
        them. The access is reported to the hazard verifier as usual. For ops that move
        bytes (they copy the written flags along with the data, so moving undefined bytes
        is not a use) and for ops that use only part of what they touch (they check that
        part with `check_written`; a write must set the flags it produces). A read of a
        fully written span gets a shared read-only all-True array (`all_written` of any view
        of it is O(1)); an op that overwrites a whole span takes it with ``span(write=True)``
        instead, which marks it written without handing out flags.

        ``runs`` = ``(shape, strides)`` (bytes; the last axis one run of bytes, stride 1) names the
        bytes of the span the op really touches, from its first byte (burst rows without the
        gaps between them), for the cross-core GM race checker; default: the whole span.
        """
        n = hi - lo
        off = ptr.addr + int(lo)
        buf = self._buffers.get((ptr.space, ptr.sub)) if INLINE_ON_CHIP_SPANS else None
        if buf is None or off < 0 or off + n > buf.data.shape[0] or self.fences is not None:
            buf, off = self._locate_at(ptr.space, ptr.sub, off, n, operand)
        if self.hazards is not None:
            self.hazards.on_access(buf, off, off + n, write, operand)
        if self.races is not None and buf.space == "gm":
            self.races.access(self, buf, off, off + n, write, operand, runs)
        if write:
            if self.undo is not None:
                self._keep(buf, off, off + n)
            if self._carry is not None:
                self._remember_carried(buf, off, off + n)
            elif self._carried and buf in self._carried:     # written bytes moved in replace them
                self._forget_carried(buf, off, off + n)
            flags = buf.flags_for_write()[off:off + n]
            if buf.known:
                _forget_written(buf, off, off + n)
            if not buf.held:
                self._holding.append(buf)
            buf.held.append((off, off + n))
        else:
            flags = buf.written
            if not flags.flags.writeable:
                full = True
            elif self.machine.options.uninitialized == "off":
                full = False
            elif INLINE_ON_CHIP_SPANS:             # a known fully-written range holds it (`_known_written`)
                end = off + n
                for a, b in buf.known:
                    if a <= off and end <= b:
                        full = True
                        break
                else:
                    full = _all_written(buf, off, end)
            else:
                full = _all_written(buf, off, off + n)
            if not full:
                flags = flags[off:off + n]
                flags.flags.writeable = False      # a read's flags are not the op's to change
                if CARRIED_NOTES and self._carry is None and self.machine.options.uninitialized != "off":
                    self._carry = (buf, off, off + n)
            else:   # all written: a shared read-only all-True array (`all_written` answers in O(1) for its views)
                flags = _ALL_TRUE[0]
                flags = flags[:n] if INLINE_ON_CHIP_SPANS and flags.shape[0] >= n else _all_true(n)
        return buf.data[off:off + n], flags, -lo

    def span_rmw(self, ptr: Ptr, lo: int, hi: int, check, *, operand: str) -> np.ndarray:
        """`span_tracked` (a read) of ``[ptr + lo, ptr + hi)``, ``check(written)`` on its written map (the op's own
        initialisation check of the bytes it uses), then `span` ``(write=True)`` of the same bytes (the op overwrites
        them all: a ``mad_acc``'s L0C tile); returns the byte view. `RMW_SPANS`: an on-chip span with no fences,
        inside its buffer, that the hazard verifier passes on its fast path (`HazardTracker.on_access_rmw`) takes
        one bounds test and one hazard call for both; anything else the two calls, as before."""
        n = hi - lo
        off = ptr.addr + int(lo)
        buf = self._buffers.get((ptr.space, ptr.sub)) if RMW_SPANS and INLINE_ON_CHIP_SPANS else None
        h = self.hazards
        if buf is None or off < 0 or off + n > buf.data.shape[0] or self.fences is not None or (
                h is not None and not getattr(h, "on_access_rmw", _declines)(buf, off, off + n)):   # (optional)
            _, written, _ = self.span_tracked(ptr, lo, hi, operand=operand)
            check(written)
            return self.span(ptr, lo, hi, write=True, operand=operand)[0]
        end = off + n                           # the written map of the read, as `span_tracked` hands it out
        flags = buf.written
        if not flags.flags.writeable:
            full = True
        elif self.machine.options.uninitialized == "off":
            full = False
        else:
            for a, b in buf.known:
                if a <= off and end <= b:
                    full = True
                    break
            else:
                full = _all_written(buf, off, end)
        if not full:
            flags = flags[off:end]
            flags.flags.writeable = False
            if CARRIED_NOTES and self._carry is None and self.machine.options.uninitialized != "off":
                self._carry = (buf, off, end)
        else:
            flags = _ALL_TRUE[0]
            flags = flags[:n] if flags.shape[0] >= n else _all_true(n)
        check(flags)
        if self._carried and buf in self._carried:     # the write (`_on_write` after its hazard call)
            self._forget_carried(buf, off, end)
        if self.undo is not None:
            self._keep(buf, off, end)
        w = buf.written
        if w.flags.writeable:
            for a, b in buf.known:
                if a <= off and end <= b:
                    break
            else:
                w[off:end] = True
                _remember_written(buf, off, end)
        return buf.data[off:end]

    def check_written(self, written: np.ndarray, *, operand: str, ptr: Optional[Ptr] = None,
                      unit: str = "byte") -> None:
        """Report an uninitialised read (per ``MachineOptions.uninitialized``) unless all ``written`` are True.

        ``written`` is a selection (any shape) of a written map from `span_tracked`: the
        bytes (or, with ``unit="element"``, per-element flags) the op actually uses.
        """
        if self.machine.options.uninitialized == "off" or written.size == 0 or all_written(written):
            return
        count = int(written.size - np.count_nonzero(written))
        where = f"at {ptr}" if ptr is not None else ""
        note = ""
        if ptr is not None and self._carried:
            buf = self._buffers.get((ptr.space, ptr.sub))
            size = max(1, ptr.dtype.bits // 8) if unit == "element" else 1
            note = self._carried_note(buf, ptr.addr, ptr.addr + written.size * size) if buf is not None else ""
        self._report_uninitialized(f"uses {count} {unit}(s) {where} that nothing wrote{note}".replace("  ", " "),
                                   operand, str(ptr) if ptr is not None else count)

    def _remember_carried(self, buf, lo: int, hi: int) -> None:
        """The running op writes ``[lo, hi)`` of ``buf`` after reading bytes nothing wrote (`_carry`): keep
        where they came from, for the report of a later read of them (`CARRIED_NOTES`)."""
        src, slo, shi = self._carry
        if src is buf and slo < hi and lo < shi:
            return                              # an op updating its own buffer in place moves nothing
        kept = self._carried.setdefault(buf, [])
        kept.append((lo, hi, self.op_name, self.where, src, slo, shi))
        del kept[:-CARRIED_KEPT]

    def _forget_carried(self, buf, lo: int, hi: int) -> None:
        """A write of ``[lo, hi)`` of ``buf`` replaces the moves of never-written bytes it covers whole."""
        kept = self._carried[buf]
        kept[:] = [e for e in kept if not (lo <= e[0] and e[1] <= hi)]

    def _carried_note(self, buf, lo: int, hi: int) -> str:
        """`` (the last op that moved never-written bytes here: OP at FILE:LINE from BUF bytes [a, b)[; before it,
        into its source: ...]; check that the moves filling BUF cover what is read ...)``: the last op that moved
        bytes nothing wrote into
        ``[lo, hi)`` of ``buf``, then its source's mover, up to `CARRIED_HOPS` ops back; ``""`` when none did
        (the bytes were simply never written there)."""
        hops = []
        while buf is not None and len(hops) < CARRIED_HOPS:
            found = next((e for e in reversed(self._carried.get(buf, ())) if e[0] < hi and lo < e[1]), None)
            if found is None:
                break
            _, _, op, where, src, lo, hi = found
            at = f" at {where.file}:{where.line}" if where is not None and where.line else ""
            hops.append(f"{op}{at} from {src.label} bytes [{lo:#x}, {hi:#x})")
            buf = src
        if not hops:
            return ""
        return (" (the last op that moved never-written bytes here: " + "; before it, into its source: ".join(hops)
                + f"; check that the moves filling {buf.label} cover what is read -- PTO moves count bytes, TIK "
                  "data_move 32-byte blocks)")

    def _on_write(self, buf: Buffer, lo: int, hi: int, operand: str = "dst") -> None:
        if self.hazards is not None:
            self.hazards.on_access(buf, lo, hi, True, operand)
        if self._carried and buf in self._carried:
            self._forget_carried(buf, lo, hi)
        if self.races is not None and buf.space == "gm":
            self.races.access(self, buf, lo, hi, True, operand)
        if self.undo is not None:
            self._keep(buf, lo, hi)
        w = buf.written
        if w.flags.writeable:
            if INLINE_ON_CHIP_SPANS:
                for a, b in buf.known:         # `_known_written`, inline
                    if a <= lo and hi <= b:
                        return
            elif _known_written(buf, lo, hi):
                return
            w[lo:hi] = True
            _remember_written(buf, lo, hi)

    # -- unit-flag handshake (mad ``unit_flag(check_and_set)`` -> FIXPIPE ``unit_flag(check_*)``)
    #
    # Call order inside an op: a mad with ``unit_flag(check_only|check_and_set)`` calls
    # `unit_flag_check` on its L0C destination BEFORE writing it, and (check_and_set)
    # `unit_flag_publish` after; FIXPIPE with ``unit_flag(check_only|check_and_clear)``
    # calls `unit_flag_consume` BEFORE reading L0C. These hooks are part of the hazard
    # verifier (no-ops when it is off).
    def unit_flag_check(self, ptr: Ptr, nbytes: int) -> None:
        """Producer side: a ``pto.mad* unit_flag(check_*)`` waits until FIXPIPE cleared these L0C bytes."""
        if self.hazards is not None:
            buf, off = self._locate(ptr, nbytes, "dst")
            self.hazards.unit_flag_check(buf, off, off + nbytes)

    def unit_flag_publish(self, ptr: Ptr, nbytes: int) -> None:
        """Producer side: a ``pto.mad* unit_flag(check_and_set)`` publishes the L0C bytes it wrote."""
        if self.hazards is not None:
            buf, off = self._locate(ptr, nbytes, "dst")
            self.hazards.unit_flag_publish(buf, off, off + nbytes)

    def unit_flag_consume(self, ptr: Ptr, nbytes: int, *, clear: bool) -> None:
        """Consumer side: FIXPIPE ``unit_flag(check_only|check_and_clear)`` on the L0C bytes it reads."""
        if self.hazards is not None:
            buf, off = self._locate(ptr, nbytes, "src")
            self.hazards.unit_flag_consume(buf, off, off + nbytes, clear)

    # -- checks ops share
    def check_aligned(self, ptr: Ptr, alignment: int, operand: str) -> None:
        """Raise `Misaligned` unless ``ptr.addr`` is a multiple of ``alignment`` (GM is exempt)."""
        if ptr.space != "gm" and ptr.addr % alignment:
            raise Misaligned(f"address {ptr.addr:#x} in {ptr.space} is not {alignment}-byte aligned",
                             op=self.op_name, operand=operand, value=hex(ptr.addr), limit=f"{alignment} B",
                             hint=f"place the tile at a multiple of {alignment} bytes")


#: Ranges up to this many bytes are checked with a byte search instead of a numpy reduction
#: (cheaper below a few KiB: no ufunc set-up).
_SMALL_RANGE = 4096


_ALL_TRUE = [np.ones(0, dtype=np.bool_)]


def _all_true(n: int) -> np.ndarray:
    """A read-only contiguous all-True ``bool`` array of ``n`` entries (a slice of one shared array that
    grows to the largest span asked for: the written flags of spans of fully written buffers)."""
    arr = _ALL_TRUE[0]
    if arr.shape[0] < n:
        arr = np.ones(-(-n // 65536) * 65536, dtype=np.bool_)
        arr.flags.writeable = False
        _ALL_TRUE[0] = arr
    return arr[:n]


#: How many known fully-written ranges a `Buffer` keeps (``Buffer.known``).
_MAX_KNOWN = 16


def _declines(*args) -> bool:
    """The `span_rmw` answer of a hazard checker without ``on_access_rmw`` (it is optional in the protocol): the two
    `on_access` calls."""
    return False


def _known_written(buf: Buffer, lo: int, hi: int) -> bool:
    """True if a known fully-written range of ``buf`` holds bytes ``[lo, hi)`` (no scan)."""
    for a, b in buf.known:
        if a <= lo and hi <= b:
            return True
    return False


def _all_written(buf: Buffer, lo: int, hi: int) -> bool:
    """True if every written flag of bytes ``[lo, hi)`` of ``buf`` is set (empty ranges included).

    Answered from ``buf.known`` when a known range holds ``[lo, hi)``; otherwise scans the map
    and remembers the range if it is all set."""
    if _known_written(buf, lo, hi):
        return True
    flags = buf.written[lo:hi]
    ok = b"\x00" not in flags.tobytes() if hi - lo <= _SMALL_RANGE else bool(flags.all())
    if ok and hi > lo:
        _remember_written(buf, lo, hi)
    return ok


def _remember_written(buf: Buffer, lo: int, hi: int) -> None:
    """Note that the flags of bytes ``[lo, hi)`` of ``buf`` are all set."""
    if buf.held:
        for a, b in buf.held:
            if a < hi and lo < b:
                return                      # the running op holds writable flags of these bytes
    known = buf.known
    for i, (a, b) in enumerate(known):
        if a <= lo and hi <= b:
            return
        if lo <= a and b <= hi:             # the new range holds an old one: replace it
            known[i] = (lo, hi)
            return
        if a <= hi and lo <= b:             # overlapping or touching: one range covers both
            known[i] = (min(a, lo), max(b, hi))
            return
    known.append((lo, hi))
    if len(known) > _MAX_KNOWN:
        del known[0]


def _forget_written(buf: Buffer, lo: int, hi: int) -> None:
    """An op may clear flags of bytes ``[lo, hi)``: drop the known ranges that overlap them."""
    buf.known = [(a, b) for a, b in buf.known if b <= lo or hi <= a]


def all_written(flags: np.ndarray) -> bool:
    """True if every entry of a ``bool`` written-map selection is set: O(1) for views of the shared
    all-True array `ExecContext.span_tracked` hands out for fully written spans, else a scan
    (a byte search on small slices)."""
    if flags.base is _ALL_TRUE[0] or flags is _ALL_TRUE[0]:
        return True
    if flags.size <= _SMALL_RANGE:
        return b"\x00" not in flags.tobytes()
    return bool(flags.all())


@functools.lru_cache(maxsize=4096)
def is_dense(shape: tuple, strides: tuple, size: int) -> bool:
    """True if a view of ``shape``/``strides`` covers a contiguous byte range exactly once (C order)."""
    expect = size
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if s != expect:
            return False
        expect *= n
    return True


__all__ = ["MachineOptions", "Buffer", "GmRegion", "GlobalMemory", "Ptr", "Core", "Machine", "ExecContext",
           "current_context", "active_context", "keeping_active_context"]
