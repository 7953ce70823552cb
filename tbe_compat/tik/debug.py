"""``tik_instance.tikdb``: run a built kernel on the simulator (``start_debug``).

``start_debug(feed_dict, interactive=True, desc_tensor=None)`` -- the rules of
tik_usage.md:

* ``feed_dict`` keys are the ``name=`` of every BuildCCE input tensor plus every
  InputScalar (inputs and ``flowtable``); the key set must be exactly that. Tensor values
  are numpy arrays of the declared shape and dtype (dynamic dims evaluated with the fed
  InputScalar values), scalar values Python/numpy numbers. Anything else is a clear
  error naming the key, what was expected and what was given. ``int4`` / ``uint4`` tensors take
  their values or the packed ``uint8`` bytes and return their values (`PACKED_4BIT_FEED`).
* Runtime-sized GM tensors (declared ``(MAX_INT64,)``-style by CANN's dynamic-shape
  operators, `container.UNBOUNDED_GM_ELEMENTS`, or shaped by Scalars the kernel computes, such
  as tiling data it reads from GM): an input's array may have any shape (its
  size is the buffer); an output or workspace needs ``feed_dict[name]`` = its element count
  or an array of its size (simulator extension: on a device the framework allocates it)
  and is returned flat. Size feeds are keyed on the tensor (`_size_feeds`): a key that is an
  input's name is never read as another tensor's size. ``flowtable`` GM tensors (host tiling data) are fed like inputs.
* Returns a ``list`` of numpy arrays, one per BuildCCE output in ``outputs=`` order, with
  the output's shape and dtype (for a view: the view's).
* Input tensors the kernel overwrote: the caller's feed arrays receive the new contents
  (newer tikdb behaviour; read-only arrays are left alone).
* ``interactive=True`` (the TIK debugger prompt) never blocks: the run is the same as
  with ``interactive=False``.

The program is compiled once (on the first ``start_debug``) and reused. The machine is
the chip BuildCCE froze, with ``block_num`` cores. Initial memory:

* uninitialised GM outputs and workspaces: every byte ``0xFF`` (NaN for float dtypes, -1
  for signed integers) -- recognisable, never zero; ``is_atomic_add`` outputs: zero;
* on-chip buffers (UB, L1, L0A/B/C ...): every byte ``0x55`` (f16 85.3, f32 1.47e13,
  int32 1431655765): finite, so the common "zero a buffer with ``x * 0``" idiom
  (CHECKLIST §2.9.4) gives 0 as on hardware, where stale data is finite in practice.

Reads of bytes nothing wrote (an on-chip buffer never loaded, L0C never computed) are recorded in
``tikdb.reports`` with the op's ``file:line``. A run that returns output bytes the kernel never
stored, or stored from memory nothing wrote (typically: a GM tensor the kernel reads that BuildCCE
does not list as an input, so it is an unfed workspace), also emits one `UninitializedReadWarning`
(an output given to BuildCCE as a view counts only the view's bytes).

Errors while the kernel runs carry the TIK call's ``file:line`` and the core and loop
indices (``[at core=1, i=3]``).
"""
from __future__ import annotations

import sys
from typing import NamedTuple, Optional

import ml_dtypes
import numpy as np

from pto_core import program as P
from pto_core import scalars as S
from pto_core.errors import (CapacityExceeded, HazardError, IllegalOperand, PtoError, UninitializedRead,
                             UninitializedReadWarning, UnknownName)
from pto_core.memory import MachineOptions

from . import debug_print as _debug_print
from .errors import convert
from .control import MAX_BLOCK_NUM
from .scalar import Expr, InputScalar
from .tensor import Tensor

#: Named choice: initial byte of on-chip buffers in TIK runs (finite in every float format; the device leaves
#: them undefined, tik_core.md "memory at launch").
ON_CHIP_FILL_BYTE = 0x55
#: Named choice: initial byte of uninitialised GM outputs/workspaces (NaN in float formats, so a read of an
#: output the kernel never wrote shows; tik_core.md "memory at launch").
GM_FILL_BYTE = 0xFF

#: Named choice WORKSPACE_SIZE_FROM_FEED: a statically sized ``is_workspace`` GM tensor may be
#: given a smaller real size with ``feed_dict[name] = element count`` (on a device the framework
#: allocates workspaces from the op's tiling / compile info, not from the declaration: CANN's
#: dynamic sort declares three 2**30-element workspaces, its tiling asks for 1 GiB each); accesses
#: past the fed size are out of bounds. An unfed workspace larger than this many bytes is refused
#: before the run (allocating it would exhaust the host), with that feed as the fix.
MAX_UNFED_WORKSPACE_BYTES = 1 << 30

#: Callables ``fn(tik_instance, executable)`` told about every completed ``start_debug`` run (its checker reports:
#: ``executable.reports``, ``reports_dropped``, ``warned_reports``); cheap, nothing is copied. ``tik-run`` uses it
#: for its summary of the reports (`tbe_compat.cli.ReportSummary`).
REPORT_OBSERVERS: list = []

#: Callables ``fn(run: DebugRun)`` told about every completed ``start_debug`` (``tik-migrate --check``
#: and the pytest plugin's golden recording use it). Empty by default: then nothing is copied.
RUN_OBSERVERS: list = []


class DebugRun(NamedTuple):
    """One completed ``start_debug``: ``inputs`` ``{kernel argument name: array or number}`` as fed
    (copied before the run), ``results`` ``{GM argument name: array}`` of every ``out``/``inout``
    argument (the program's outputs, whole tensors), ``outputs`` the list start_debug returned (results
    and outputs are copies: the script changing its arrays later does not change the run),
    ``alias`` the run's ``{out argument: in argument}`` (``start_debug(inplace=)``; empty without):
    a replay must place those outputs on the inputs' memory too; ``block_dim`` the blocks launched
    (``start_debug(block_dim=)``; None: every block of ``block_num``), which a replay launches too;
    ``inplace`` the ``start_debug(inplace=)`` mapping as given (tensor names), for a replay through
    ``start_debug``; ``shapes`` ``{GM tensor name: shape}`` of the tensors whose shape depends on
    InputScalars, as this run's values made them (a replay's PTO-AS text declares these shapes)."""

    tik: object
    inputs: dict
    results: dict
    outputs: list
    alias: dict
    block_dim: Optional[int] = None
    inplace: Optional[dict] = None
    shapes: Optional[dict] = None


def tik_machine_options(**overrides) -> MachineOptions:
    """The `MachineOptions` of TIK debugger runs (hazard verifier on; fills above)."""
    kw = dict(fill="pattern", fill_byte=ON_CHIP_FILL_BYTE, gm_fill_byte=GM_FILL_BYTE)
    kw.update(overrides)
    return MachineOptions(**kw)


#: How many unwritten element ranges of one output the `UninitializedReadWarning` names (the rest are counted).
UNWRITTEN_RANGES_SHOWN = 3


def _unwritten_ranges(written: np.ndarray, size: int) -> str:
    """``elements [40, 128)`` (or ``bytes [..)`` for sub-byte types, ``size`` 0): the runs of elements with a
    byte the kernel did not write, given the output's per-byte written map."""
    flat = np.asarray(written, np.bool_).reshape(-1)
    unit = "bytes"
    if size > 1 and flat.size % size == 0:
        flat = flat.reshape(-1, size).all(axis=1)
        unit = "elements"
    holes = np.concatenate(([0], (~flat).view(np.int8), [0]))
    edges = np.flatnonzero(np.diff(holes))
    runs = list(zip(edges[0::2].tolist(), edges[1::2].tolist()))
    shown = ", ".join(f"[{a}, {b})" for a, b in runs[:UNWRITTEN_RANGES_SHOWN])
    more = len(runs) - UNWRITTEN_RANGES_SHOWN
    return f"{unit} {shown}" + (f" and {more} more range(s)" if more > 0 else "")


#: How two tensors a hazard's bytes belong to came to share those bytes (`_explain_hazard_between_tik_calls`):
#: automatic placement never overlaps a live tensor, so without a ``start_addr=`` tensor in the pair the sharing
#: is in turn; with one, the user placed it there. "both": different pairs share bytes in different ways.
SHARED_BYTES_HOW = {
    "in turn": "in turn: a scope's end (for_range / if_scope / new_stmt_scope body) freed the earlier tensor's "
               "bytes for the later one",
    "start_addr": "by start_addr=, which places a tensor there even over a live one",
    "both": "in turn, as a scope's end frees its tensors' bytes for later ones, and by start_addr=",
}


def _explain_hazard_between_tik_calls(tik, e: PtoError) -> None:
    """A data hazard between two ops lowered from TIK calls: auto-sync orders every tensor a TIK call names, so
    the access reached bytes outside the tensors its call names (a run-time index or offset past a tensor's
    end) and TIK would not synchronise them either. Name the tensor those bytes belong to and replace the
    set_flag advice (which fits hand-written PTO) with that explanation. Other errors are left as they are."""
    first, second = getattr(e, "first", None), getattr(e, "second", None)
    byte_range, space = getattr(e, "byte_range", None), getattr(e, "space", None)
    if not isinstance(e, HazardError) or first is None or second is None or byte_range is None:
        return
    calls = [w.call if w is not None else "" for w in (first[2], second[2])]
    if not all(c.startswith("tik.") for c in calls):
        return
    lo, hi = byte_range
    owners: dict = {}       # label -> Storages so labelled
    for st in tik._on_chip_storages:
        if st.space == space and isinstance(st.addr, int) and st.addr < hi and lo < st.addr + (st.nbytes or 0):
            at = f" declared at {st.where.file}:{st.where.line}" if st.where is not None and st.where.line else ""
            owners.setdefault(f"tensor {st.name!r}{at}", []).append(st)
    groups = list(owners.values())  # two differently labelled tensors at the same bytes (not side by side)?
    # how each such pair came to share bytes: together when a start_addr= put one over the other while it was live
    # (`Storage.placed_over`; the allocator never does), else in turn (a scope's end freed the earlier one's bytes,
    # also when the earlier one had a start_addr=)
    ways = {"start_addr" if a in b.placed_over or b in a.placed_over else "in turn"
            for i, ga in enumerate(groups) for gb in groups[i + 1:] for a in ga for b in gb
            if a.addr < b.addr + (b.nbytes or 0) and b.addr < a.addr + (a.nbytes or 0)}
    if len(owners) > 1 and ways:    # which one held them at that point is not tracked
        how = SHARED_BYTES_HOW[min(ways) if len(ways) == 1 else "both"]
        held = f"; those bytes belong to one of {', '.join(owners)} (placed at the same bytes {how})"
    elif len(owners) > 1:           # side by side: the range covers parts of each
        held = f"; those bytes span {', '.join(owners)} (side by side)"
    elif owners:
        held = f"; those bytes belong to {next(iter(owners))}"
    elif any(st.space == space and not isinstance(st.addr, int) for st in tik._on_chip_storages):
        held = "; those bytes belong to no tensor placed at a fixed address in this space (maybe one placed at run time)"
    else:
        held = "; those bytes belong to no tensor declared in this space"
    e.message += (f"{held}. TIK's auto-sync orders the tensors each call names, so one of the two calls reached "
                  f"outside its own tensor")
    e.hint = ("check the run-time indices and offsets of both calls: an element index, slice start or repeat "
              "past its tensor's end reads or writes its neighbour (auto-sync adds no synchronisation for that); "
              "keep every access inside the tensor the call names (if both stay inside their tensors, auto-sync "
              "missed a pair: please report it with the kernel)")


#: How many store sites the warning of an output the kernel left partly unwritten names (`output_store_sites`;
#: h_user440: a fixpipe with burst_len in float16 units wrote half its output, and the warning, at the
#: start_debug line, named no store to check).
STORE_SITES_SHOWN = 3


def output_store_sites(program, name: str) -> list:
    """``["tik.fixpipe at k.py:23", ...]``: the distinct call sites of the ops of ``program`` whose destination
    operand (``dst`` / ``%dst``) is an address in GM argument ``name``, in program order."""
    sites: dict = {}
    for st in P.walk_stmts(program.body):
        if not isinstance(st, P.OpStmt) or st.where is None:
            continue
        call = st.call
        for o, v in zip(call.spec.operands, call.operands):
            if o.name.lstrip("%") == "dst" and isinstance(v, P.Expr) and \
                    any(isinstance(e, P.GmArg) and e.name == name for e in P.walk(v)):
                w = st.where
                sites.setdefault(f"{w.call or call.spec.asm_name} at {w.file.rsplit('/', 1)[-1]}:{w.line}", None)
                break
    return list(sites)


def _store_sites_text(program, name: str) -> str:
    if program is None:
        return ""
    sites = output_store_sites(program, name)
    if not sites:
        # not said. The scan finds every TIK call's store: the facade addresses a GM tensor as an expression of its
        # GmArg (offsets may be registers), never through a pointer register, and a TensorAddrList entry's buffer
        # (``lst[i].value``) is refused (ADDR_LIST_DEREF). Only a PTO-AS pointer register (`PtrReg`) or a pointer
        # cast from an integer (`PtrFromInt`) would hide the tensor, and no TIK kernel has one (fix451).
        return ""
    more = f" and {len(sites) - STORE_SITES_SHOWN} more" if len(sites) > STORE_SITES_SHOWN else ""
    return f"; stored by {', '.join(sites[:STORE_SITES_SHOWN])}{more}"


def _warn_unwritten_outputs(kernel_name: str, exe, unwritten: Optional[dict] = None, program=None) -> None:
    """One `UninitializedReadWarning` for a run that returns output bytes the kernel never stored (or
    stored from memory nothing wrote, ``exe.unwritten_outputs``): they are the launch fill here and
    stale memory on hardware. The two usual causes -- an output the kernel writes only part of (a
    dynamic-shape output of ``n`` elements), and a GM tensor the kernel reads but BuildCCE does not
    list as an input -- are otherwise silent; the message names the element ranges not written and
    what they hold. Points at the ``start_debug`` call (stacklevel 3: this helper, ``start_debug``, its
    caller). Reads of unwritten on-chip bytes by ops stay in ``tikdb.reports`` only: kernels compute
    on lanes they never store (tails under a full mask), so a warning there would be noise.
    ``unwritten``: ``{name: (missing, total, first[, per-byte written map, element size])}``; ``program``: the
    kernel's, to name the ops storing to each such output (`output_store_sites`)."""
    unwritten = exe.unwritten_outputs if unwritten is None else unwritten
    if not unwritten:
        return
    import warnings
    outs = []
    for name, entry in unwritten.items():
        missing, total, first = entry[:3]
        ranges = f"{_unwritten_ranges(entry[3], entry[4])} " if len(entry) > 3 and entry[3] is not None else ""
        outs.append(f"output {name!r}: {missing} of {total} bytes hold no data the kernel wrote: {ranges}"
                    f"(first at byte {first:#x}){_store_sites_text(program, name)}")
    reads = sum(kind == "uninitialized" for kind, _ in exe.reports)
    warnings.warn(f"kernel {kernel_name!r} returned output data it did not write: " + "; ".join(outs)
                  + (f" ({reads} read(s) of unwritten memory by ops are in tik_instance.tikdb.reports)" if reads
                     else "")
                  + f". Elements never stored keep the output buffer's initial contents: here start_debug's "
                    f"launch fill ({GM_FILL_BYTE:#04x} bytes: NaN in a float type, -1 in a signed integer one), on a "
                    "device whatever the buffer held (elements stored from memory nothing wrote hold that "
                    "memory's stale bytes). Fix: if the kernel writes only part of the output on purpose (e.g. "
                    "the first n elements of a dynamic shape), use only the elements it wrote (this warning is "
                    "then expected); otherwise store every output element (check the stores' offsets and counts) "
                    "and list every GM tensor the kernel reads in BuildCCE(inputs=[...]) (an unlisted one is an "
                    "unfed workspace: data copied from it counts as not written); to stop at the first read of "
                    "unwritten data: tik_instance.tikdb.options = "
                    "tbe_compat.tik.debug.tik_machine_options(uninitialized='raise')",
                  UninitializedReadWarning, stacklevel=3)


class Tikdb:
    """The debugger object of one Tik instance (``tik_instance.tikdb``)."""

    def __init__(self, tik):
        self._tik = tik
        #: the `pto_core.interpreter.Executable` of the last run (machine, reports) -- simulator extension
        self.executable = None
        #: options of the next runs (simulator extension; e.g. ``tik_machine_options(order=...)``)
        self.options: Optional[MachineOptions] = None
        self.order = "sequential"
        self._unpack_back: list = []

    @property
    def reports(self) -> list:
        """Checker reports of the last run (uninitialised reads, flags left set ...). When the run made
        more than ``MachineOptions.max_reports``, a last ``("reports-dropped", ...)`` entry says how many
        were only counted: the one that matters may be among them (`reports_dropped`)."""
        if self.executable is None:
            return []
        out = list(self.executable.reports)
        n = self.reports_dropped
        if n:
            out.append(("reports-dropped",
                        f"{n} more checker report(s) were not recorded: the run reached the cap of {len(out)} "
                        f"(MachineOptions.max_reports); later kinds and op sites may be among them. To see them: "
                        f"tik_instance.tikdb.options = tbe_compat.tik.debug.tik_machine_options(max_reports=...)"))
        return out

    @property
    def reports_dropped(self) -> int:
        """Checker reports of the last run past the ``max_reports`` cap (counted, not recorded)."""
        return getattr(self.executable, "reports_dropped", 0) if self.executable is not None else 0

    def debug_print(self, expr):
        """Print the value of the Python expression ``expr`` when the kernel runs (TIK's debugger; see
        `tbe_compat.tik.debug_print`). Names are resolved in the caller's frame now."""
        tik = self._tik
        frame = sys._getframe(1)
        try:
            with tik._api("tikdb.debug_print"):
                try:
                    _debug_print.lower(tik, expr, frame)
                except PtoError:
                    if tik._never_runs():            # code that never runs: dropped, as TIK's folding does
                        return None
                    raise
        finally:
            del frame

    def start_debug(self, feed_dict=None, interactive=True, desc_tensor=None, *, inplace=None, block_dim=None):
        """Run the kernel on ``feed_dict``; returns the outputs (see module doc).

        ``inplace`` (a simulator extension): ``{output name: input name}`` for in-place ("ref")
        operators whose output the framework places on an input's memory (CANN's
        ``inplace_index_add``, scatter ops): the kernel then reads the input's data through the
        output tensor, as on hardware.

        ``block_dim`` (a simulator extension): launch only blocks ``0 .. block_dim-1`` of the kernel's
        ``block_num``, as a host does whose tiling picks fewer blocks than the kernel was built for (CANN
        dynamic ops' ``block_dim``); 1 to block_num. Default: every block."""
        tik = self._tik
        with tik._api("tikdb.start_debug"):
            info = tik.build
            if info is None:
                raise tik._error("the kernel is not built yet", operand="feed_dict",
                                 hint="call tik_instance.BuildCCE(kernel_name=..., inputs=[...], outputs=[...]) first")
            if feed_dict is None:
                feed_dict = {}
            if not isinstance(feed_dict, dict):
                raise tik._error(f"feed_dict must be a dict, got {type(feed_dict).__name__}", operand="feed_dict",
                                 value=repr(feed_dict)[:80],
                                 hint="pass {input name: numpy array or number, ...}")
            self._check_key_types(feed_dict)
            scalars = self._scalar_values(info, feed_dict)
            self._check_block_num(scalars)
            inputs = self._tensor_values(info, feed_dict, scalars)
            inputs.update({s.name: v for s, v in scalars.items()})
            self._set_dynamic_shapes(scalars)
            alias = self._inplace(info, inplace)
            inputs.update(self._runtime_sizes(info, feed_dict, inputs, alias))
            exe = tik.program.compile()
            self.executable = exe
            printf_params = getattr(tik, "_printf_params", None)
            cores = tik.program.block_num
            if printf_params is not None and isinstance(cores, P.ScalarArg) and isinstance(inputs.get(cores.name), int):
                tik._check_printf_cores(printf_params, inputs[cores.name])
            fed = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()} \
                if RUN_OBSERVERS else None
            try:
                results = exe.run(inputs, write_back=True, options=self.options or tik_machine_options(),
                                  order=self.order, alias=alias, block_dim=block_dim)
            except PtoError as e:
                api = e.where.call if e.where is not None and e.where.call else "tikdb.start_debug"
                _explain_hazard_between_tik_calls(tik, e)
                raise convert(e, api=api, where=e.where, exit_on_error=tik._exit_on_error) from None
            for back, packed, signed in self._unpack_back:     # a values feed gets the new contents too
                np.copyto(back, _unpacked(packed, back.size, signed).reshape(back.shape), casting="unsafe")
            tik._write_printf_file(info.kernel_name, exe.machine.printed)
            _warn_unwritten_outputs(info.kernel_name, exe, self._unwritten_in_outputs(exe, info.outputs, scalars),
                                    program=tik.program)
            for observer in list(REPORT_OBSERVERS):
                observer(tik, exe)
            outputs = [self._output(x, results, scalars) for x in info.outputs]
            if fed is not None:
                shapes = {st.name: tuple(st.gm.shape) for st in tik._gm_tensors
                          if st.size_expr is not None and st.runtime_size is None}
                # copies: the script may change the arrays returned (views of results) in place afterwards
                kept = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in results.items()}
                outs = [v.copy() if isinstance(v, np.ndarray) else v for v in outputs]
                run = DebugRun(tik, fed, kept, outs, dict(alias), None if block_dim is None else int(block_dim),
                               dict(inplace or {}), shapes)
                for observer in list(RUN_OBSERVERS):
                    observer(run)
            return outputs

    def _check_block_num(self, scalars) -> None:
        """A fed InputScalar ``block_num`` gets the range of an immediate one, ``[1, MAX_BLOCK_NUM]`` (the TIK
        reference's [1, 65535]); checked before the launch allocates a core per block."""
        tik = self._tik
        bn = tik.program.block_num
        if not isinstance(bn, P.ScalarArg):
            return
        v = next((val for s, val in scalars.items() if s.name == bn.name), None)
        if isinstance(v, (int, np.integer)) and not 1 <= int(v) <= MAX_BLOCK_NUM:
            raise tik._error(f"block_num InputScalar {bn.name!r} = {int(v)} is outside [1, {MAX_BLOCK_NUM}]",
                             operand=bn.name, value=int(v), limit=f"[1, {MAX_BLOCK_NUM}]",
                             hint="feed the number of blocks to launch, 1 to 65535 (the runtime runs more blocks "
                                  "than cores in batches)")

    def _inplace(self, info, inplace) -> dict:
        """``start_debug(inplace=)`` as GM argument names: ``{output tensor name: input tensor name}``."""
        if not inplace:
            return {}
        tik = self._tik
        if not isinstance(inplace, dict):
            raise tik._error(f"inplace must be a dict {{output name: input name}}, got {type(inplace).__name__}",
                             operand="inplace", value=repr(inplace)[:80],
                             hint="pass inplace={'out_name': 'in_name'}")
        outs = {x.name: x for x in info.outputs if isinstance(x, Tensor)}
        ins = {x.name: x for x in info.inputs if isinstance(x, Tensor)}
        alias = {}
        for o, i in inplace.items():
            if not isinstance(o, str) or not isinstance(i, str) or o not in outs or i not in ins:
                raise tik._error(f"inplace {o!r} -> {i!r}: needs a BuildCCE output name mapped to an input name",
                                 operand="inplace", value=(o, i), cls=UnknownName,
                                 limit=f"outputs {sorted(outs)}, inputs {sorted(ins)}",
                                 hint="map the output tensor's name= to the name= of the input it overwrites")
            alias[outs[o].storage.gm.name] = ins[i].storage.gm.name
        return alias

    # ------------------------------------------------------------------ feed checks
    def _key_kind(self, info, key) -> str:
        """What an unexpected feed_dict key names, as `` (...)`` for the error (empty if nothing)."""
        if any(getattr(x, "name", None) == key for x in info.outputs):
            return " (a BuildCCE output: start_debug returns it, it is not fed)"
        if any(st.name == key for st in self._tik._gm_tensors):
            return " (a GM tensor BuildCCE does not list as an input: add it to inputs=[...] if the kernel reads it)"
        on_chip = next((st for st in getattr(self._tik._placement, "placed", ()) if st.name == key), None)
        if on_chip is not None:
            return f" (an on-chip {on_chip.space.upper()} tensor: the kernel fills it from GM, it is not fed)"
        return ""

    def _check_key_types(self, feed: dict) -> None:
        """feed_dict is keyed by the ``name=`` strings (tik_api.md §3.3). A key that is a TIK object itself (the
        Tensor, InputScalar or Scalar) is named here, before the key matching compares it with the names: ``==``
        on a TIK object builds a TIK comparison, which would report a comparison error instead. Other non-str
        keys reach the key matching (unexpected key, with the expected names)."""
        for key in feed:
            if isinstance(key, (Tensor, Expr)) and isinstance(getattr(key, "name", None), str):
                kind = "tensor" if isinstance(key, Tensor) else type(key).__name__
                raise self._tik._error(f"feed_dict key is the {kind} object {key.name!r}, not its name",
                                       operand="feed_dict", value=key.name, cls=UnknownName,
                                       hint=f"key the feed by the name= string: {{{key.name!r}: ...}}")
            if isinstance(key, Expr):       # s + 1, s.astype(...): no name; its == is a TIK comparison too
                raise self._tik._error("feed_dict key is a TIK scalar expression, not an input name",
                                       operand="feed_dict", value=repr(key)[:60], cls=UnknownName,
                                       hint="key the feed by the name= strings of the BuildCCE inputs; an "
                                            "expression of InputScalars is computed by the kernel, not fed")

    def _auto_name_note(self, tensors, name: str) -> str:
        """`` (the tensor declared at file:line without name=)`` for a name the simulator gave, else ''."""
        auto = next((t for t in tensors if t.name == name and t.storage in self._tik._auto_named), None)
        if auto is None:
            return ""
        w = auto.storage.where
        at = f" at {w.file}:{w.line}" if w is not None and w.line else ""
        return f" (the tensor declared{at} without name=: its default name)"

    def _scalar_values(self, info, feed: dict) -> dict:
        tik = self._tik
        expected_t = [x for x in info.inputs if isinstance(x, Tensor)]
        expected_s = [x for x in info.inputs if isinstance(x, InputScalar)]
        names = [x.name for x in expected_t] + [x.name for x in expected_s]
        sized = [st.name for st in tik._gm_tensors if (st.runtime_size is not None or _resizable_workspace(st, info))
                 and st.name not in names]
        missing = [n for n in dict.fromkeys(names) if n not in feed]
        extra = [k for k in feed if k not in names and k not in sized]
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(repr(k) + self._auto_name_note(expected_t, k) for k in missing))
            if extra:
                parts.append("unexpected " + ", ".join(repr(k) + self._key_kind(info, k) for k in extra))
            raise tik._error(f"feed_dict keys do not match the kernel inputs: {'; '.join(parts)}",
                             operand="feed_dict", value=sorted(map(str, feed)), cls=UnknownName,
                             limit="expected keys " + (", ".join(repr(n) for n in dict.fromkeys(names)) or "(none)"),
                             hint="feed every BuildCCE input tensor and InputScalar by its name=, and nothing else")
        out = {}
        for s in expected_s:
            v = feed[s.name]
            if isinstance(v, np.ndarray) and v.shape == ():
                v = v.item()
            if isinstance(v, np.generic):
                v = v.item()
            t = s.ir.type
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise tik._error(f"InputScalar {s.name!r} needs a number, got {type(v).__name__} {v!r}",
                                 operand=s.name, value=repr(v),
                                 hint=f"pass feed_dict[{s.name!r}] = an int or float")
            if S.is_int(t):
                if isinstance(v, float) and not v.is_integer():
                    raise tik._error(f"InputScalar {s.name!r} is {s.dtype}; got the float {v!r}", operand=s.name,
                                     value=v, hint="pass an int")
                v = int(v)
                lo, hi = S.int_bounds(t)
                if not lo <= v <= hi:
                    raise tik._error(f"InputScalar {s.name!r} = {v} does not fit {s.dtype}", operand=s.name,
                                     value=v, limit=f"[{lo}, {hi}]",
                                     hint=f"pass a value in [{lo}, {hi}], or declare the InputScalar with a wider "
                                          f"dtype")
            else:
                # rounded once to the dtype from the exact value (an int too: float(v) rounded an int past 53 bits
                # twice and overflowed past float64's range); past the format's range it is the signed inf
                v = S.normalize(v, t)
            out[s] = v
        return out

    def _tensor_values(self, info, feed: dict, scalars: dict) -> dict:
        tik = self._tik
        out = {}
        self._unpack_back = []       # (caller's 4-bit values array, packed bytes run, signed): written back after
        seen = set()
        for x in info.inputs:
            if not isinstance(x, Tensor) or id(x.storage) in seen:
                continue
            seen.add(id(x.storage))
            st = x.storage
            arr = feed[x.name]
            if not isinstance(arr, np.ndarray):
                raise tik._error(f"feed_dict[{x.name!r}] must be a numpy array, got {type(arr).__name__}",
                                 operand=x.name, value=repr(arr)[:60],
                                 hint=f"pass np.array(..., dtype=np.{np.dtype(st.dtype.storage).name})")
            shape = (arr.size,) if st.runtime_size is not None else self._static_shape(st, scalars)
            if st.runtime_size is not None:
                arr = arr.reshape(-1)
            if st.dtype.bits < 8:
                packed, back = _packed_feed(tik, x.name, st, arr, shape)
                if back is not None:
                    self._unpack_back.append((back, packed, st.dtype.kind == "s"))
                out[st.gm.name] = packed
                continue
            want = np.dtype(st.dtype.storage)
            if arr.dtype != want:
                raise tik._error(f"feed_dict[{x.name!r}] has dtype {arr.dtype}, tensor {x.name!r} is "
                                 f"{st.dtype.tik_name}", operand=x.name, value=str(arr.dtype), limit=str(want),
                                 hint=f"convert it: arr.astype(np.{want.name})")
            if tuple(arr.shape) != shape:
                raise tik._error(f"feed_dict[{x.name!r}] has shape {tuple(arr.shape)}, tensor {x.name!r} is "
                                 f"{list(shape)}", operand=x.name, value=tuple(arr.shape), limit=list(shape),
                                 hint="reshape the array (it must have the declared shape exactly)")
            if not arr.flags.writeable:
                arr = arr.copy()
            out[st.gm.name] = arr
        return out

    def _runtime_sizes(self, info, feed: dict, inputs: dict, alias: dict) -> dict:
        """Element counts of the runtime-sized GM tensors (declared ``(MAX_INT64,)``-style): an
        input's fed array, else ``feed_dict[name]`` (an array or an element count; a simulator
        extension -- the framework allocates these buffers; contents start as usual), else for an
        ``inplace=`` output the size of the input it is placed on."""
        tik = self._tik
        out = {}
        own, taken = self._size_feeds(info, feed)
        for st in tik._gm_tensors:
            if st.runtime_size is None:
                continue
            static = all(isinstance(d, int) for d in st.shape)
            declared = int(np.prod([int(d) for d in st.shape], dtype=object)) if static else None
            v = own.get(id(st))
            if v is None and st.gm.name in alias:      # the framework's ref output: the input's memory
                v = inputs[alias[st.gm.name]].nbytes * 8 // st.dtype.bits
            if isinstance(v, np.ndarray):
                n = v.size
            elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                n = int(v)
            else:
                how = f"is declared with {declared} elements (the dynamic-shape idiom)" if static else \
                    "has a shape computed by the kernel (Scalars read while it runs)"
                hint = f"pass feed_dict[{st.name!r}] = the array (inputs) or the element count / an array of the " \
                       f"real size (outputs, workspaces)"
                at = ""
                if id(st) in taken:         # its name is not its key: say which tensor is meant
                    at = self._declared_at(st)
                    hint = (f"give it a name= of its own and feed that: feed_dict[{st.name!r}] is {taken[id(st)]}, "
                            f"not this tensor's size")
                raise tik._error(f"GM tensor {st.name!r}{at} {how}; its real size comes from the caller",
                                 operand=st.name, value=None if v is None else repr(v)[:60], cls=UnknownName,
                                 hint=hint)
            if declared is None:
                declared = n
            if not 1 <= n <= declared:
                raise tik._error(f"GM tensor {st.name!r} gets {n} elements; it is declared with {declared}",
                                 operand=st.name, value=n, limit=f"[1, {declared}]",
                                 hint=f"feed {st.name!r} an element count between 1 and {declared}, or declare the "
                                      f"tensor with a larger max size")
            st.gm.shape = (n,)
            out[st.runtime_size.name] = n
        for st in tik._gm_tensors:
            if _resizable_workspace(st, info):
                self._workspace_size(st, own.get(id(st)))
        return out

    def _size_feeds(self, info, feed: dict) -> tuple:
        """The feed_dict entries that size GM tensors, keyed on the tensor, not its name (h_fix459): ``({id(storage):
        value}, {id(storage): whose key})``. A BuildCCE input tensor takes ``feed[its name]``. A runtime-sized tensor
        or a static workspace that is no input takes ``feed[its name]`` only if no input (tensor or InputScalar) has
        that name and no other such tensor shares it: otherwise the key is not its own (the second dict says whose),
        so an input's array is never read as a workspace's or another tensor's size (a workspace or plain GM tensor
        may share an input's name when INTERNAL_GM_NAMES_APART is off, a plain one always)."""
        inputs = {id(x.storage): x.name for x in info.inputs if isinstance(x, Tensor)}
        names = {x.name: ("BuildCCE input " + repr(x.name)) for x in info.inputs}
        sized = [st for st in self._tik._gm_tensors if id(st) not in inputs
                 and (st.runtime_size is not None or _resizable_workspace(st, info))]
        sharing = {}
        for st in sized:
            sharing.setdefault(st.name, []).append(st)
        own, taken = {}, {}
        for st in self._tik._gm_tensors:
            if id(st) in inputs:
                if inputs[id(st)] in feed:
                    own[id(st)] = feed[inputs[id(st)]]
            elif st.name in names:
                taken[id(st)] = f"the entry of {names[st.name]}"
            elif len(sharing.get(st.name, ())) > 1:
                where = ", ".join(self._declared_at(o)[len(" (declared at "):-1] or "?" for o in sharing[st.name])
                if st.name in feed:
                    raise self._tik._error(f"feed_dict[{st.name!r}] would size {len(sharing[st.name])} GM tensors "
                                           f"named {st.name!r} (declared at {where})", operand=st.name,
                                           value=repr(feed[st.name])[:60], cls=UnknownName,
                                           hint="give each of them a name= of its own and feed each by its name")
                taken[id(st)] = f"shared by the GM tensors declared at {where}"
            elif st.name in feed:
                own[id(st)] = feed[st.name]
        return own, taken

    @staticmethod
    def _declared_at(st) -> str:
        w = getattr(st, "where", None)
        return f" (declared at {w.file}:{w.line})" if w is not None and getattr(w, "line", None) else ""

    def _workspace_size(self, st, v) -> None:
        """Size the GM region of static workspace ``st`` (WORKSPACE_SIZE_FROM_FEED): the declared
        shape, or ``v`` elements when fed."""
        tik = self._tik
        declared = st.nbytes * 8 // st.dtype.bits
        if v is None:
            if st.nbytes > MAX_UNFED_WORKSPACE_BYTES:
                raise tik._error(f"workspace {st.name!r} is declared with {declared} elements ({st.nbytes} bytes); "
                                 f"the simulator allocates unfed workspaces whole, up to "
                                 f"{MAX_UNFED_WORKSPACE_BYTES} bytes", operand=st.name, value=st.nbytes,
                                 limit=MAX_UNFED_WORKSPACE_BYTES, cls=CapacityExceeded,
                                 hint=f"pass feed_dict[{st.name!r}] = the element count the kernel really uses "
                                      f"(the framework's workspace size); accesses past it are out of bounds")
            st.gm.shape = tuple(int(d) for d in st.shape)
            return
        if isinstance(v, np.ndarray) and v.ndim == 0:
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= int(v) <= declared:
            what = (f"an array of shape {list(v.shape)} (a workspace holds no data at launch: its contents would be "
                    f"ignored)" if isinstance(v, np.ndarray) else repr(v)[:60])
            raise tik._error(f"feed_dict[{st.name!r}] must be the workspace's element count in [1, {declared}], "
                             f"got {what}", operand=st.name, value=repr(v)[:60], limit=f"[1, {declared}]",
                             hint="give the number of elements the framework allocates for this workspace, e.g. "
                                  f"feed_dict[{st.name!r}] = 4096")
        st.gm.shape = (int(v),)

    def _static_shape(self, st, scalars: dict) -> tuple:
        try:
            return tuple(d if isinstance(d, int) else _evaluate(d, scalars) for d in st.shape)
        except UninitializedRead as e:              # a dimension divides by an InputScalar of 0
            raise self._tik._error(f"GM tensor {st.name!r}: a dimension of its shape is undefined with these "
                                   f"InputScalar values ({e.message})", operand=st.name, cls=UninitializedRead,
                                   hint="feed InputScalar values that make every dimension defined (no division "
                                        "by 0)") from None

    def _set_dynamic_shapes(self, scalars: dict) -> None:
        for st in self._tik._gm_tensors:
            if st.size_expr is not None and st.runtime_size is None:
                dims = self._static_shape(st, scalars)
                if any(d < 0 for d in dims):        # 0: an empty tensor, as a framework passes one
                    raise self._tik._error(f"GM tensor {st.name!r} has shape {list(dims)} with these InputScalar "
                                           f"values", operand=st.name, value=list(dims), limit="dimensions >= 0",
                                           hint="feed InputScalar values that make every dimension of the shape "
                                                ">= 0")
                st.gm.shape = dims
                st.nbytes = st.dtype.nbytes(int(np.prod(dims)))

    def _unwritten_in_outputs(self, exe, outputs: list, scalars: dict) -> dict:
        """``exe.unwritten_outputs`` narrowed to what start_debug returns: an output given to BuildCCE as
        a view (``out_gm[:n]``, e.g. over a tensor padded by one batch) counts only the view's bytes, and
        is left out when the kernel wrote all of them. Whole and runtime-sized outputs are as the run
        found them; the byte offset is then relative to the view. Each entry adds the per-byte written
        map of what is returned and the element size in bytes (0: sub-byte), for the warning's ranges."""
        found = {}
        for name, entry in exe.unwritten_outputs.items():
            views = [x for x in outputs if x.storage.gm.name == name]
            written = exe.unwritten_maps.get(name)
            esize = views[0]._dt.bits // 8 if views else 0
            if written is None or not views or any(self._is_whole(x, scalars) for x in views):
                found[name] = tuple(entry) + (written, esize)
                continue
            missing, total, first = 0, 0, None
            maps = []
            for x in views:
                size = max(1, x._dt.bits // 8)
                shape = tuple(int(d if isinstance(d, int) else _evaluate(d, scalars)) for d in x._shape)
                strides = tuple(int(t if isinstance(t, int) else _evaluate(t, scalars)) * size for t in x._strides)
                offset = int(x.offset if isinstance(x.offset, int) else _evaluate(x.offset, scalars)) * size
                flat = np.ascontiguousarray(written).reshape(-1).view(np.uint8)
                view = np.lib.stride_tricks.as_strided(flat[offset:], shape + (size,), strides + (1,)).reshape(-1)
                holes = np.flatnonzero(view == 0)
                if holes.size and first is None:
                    first = int(total + holes[0])
                missing += int(holes.size)
                total += int(view.size)
                maps.append(view != 0)
            if missing:
                found[name] = (missing, total, first, np.concatenate(maps) if len(maps) > 1 else maps[0], esize)
        return found

    def _is_whole(self, x: Tensor, scalars: dict) -> bool:
        """Whether BuildCCE output ``x`` is its whole GM tensor (or runtime-sized: returned from its start)."""
        st = x.storage
        if st.runtime_size is not None:
            return True
        shape = tuple(d if isinstance(d, int) else _evaluate(d, scalars) for d in x._shape)
        offset = x.offset if isinstance(x.offset, int) else _evaluate(x.offset, scalars)
        whole = tuple(d if isinstance(d, int) else _evaluate(d, scalars) for d in st.gm.shape)
        return x._dt is st.dtype and offset == 0 and shape == whole

    def _output(self, x: Tensor, results: dict, scalars: dict) -> np.ndarray:
        st = x.storage
        whole = results[st.gm.name]
        if x._dt.bits < 8:                   # packed 4-bit: the values, in the view's shape (PACKED_4BIT_FEED)
            raw = np.ascontiguousarray(whole).reshape(-1).view(np.uint8)
            vals = _values_4bit(_unpacked(raw, raw.size * 2, x._dt.kind == "s"), x._dt)
            offset = int(x.offset if isinstance(x.offset, int) else _evaluate(x.offset, scalars))
            if st.runtime_size is not None:  # runtime-sized: flat, from the view's start to the tensor's end
                return vals[offset:int(st.gm.shape[0])].copy()
            shape = tuple(int(d if isinstance(d, int) else _evaluate(d, scalars)) for d in x._shape)
            strides = tuple(int(s if isinstance(s, int) else _evaluate(s, scalars)) * vals.itemsize
                            for s in x._strides)
            return np.lib.stride_tricks.as_strided(vals[offset:], shape, strides).copy()
        if st.runtime_size is not None:      # runtime-sized: the flat buffer from the view's start
            offset = x.offset if isinstance(x.offset, int) else _evaluate(x.offset, scalars)
            raw = np.ascontiguousarray(whole).reshape(-1).view(np.uint8)[offset * x._dt.bits // 8:]
            return raw[:raw.size // max(1, x._dt.bits // 8) * max(1, x._dt.bits // 8)].view(x._dt.storage).copy()
        shape = tuple(d if isinstance(d, int) else _evaluate(d, scalars) for d in x._shape)
        offset = x.offset if isinstance(x.offset, int) else _evaluate(x.offset, scalars)
        strides = tuple(s if isinstance(s, int) else _evaluate(s, scalars) for s in x._strides)
        if x._dt is st.dtype and offset == 0 and shape == tuple(whole.shape):
            return whole
        raw = np.ascontiguousarray(whole).reshape(-1).view(np.uint8)
        return x.numpy_view(raw, shape=shape, strides=strides, offset=offset)


#: ml_dtypes' 4-bit integer types by TIK name (``{}`` if this ml_dtypes has none).
_ML_4BIT = {n: np.dtype(getattr(ml_dtypes, n)) for n in ("int4", "uint4") if hasattr(ml_dtypes, n)}

#: Named choice PACKED_4BIT_FEED: how start_debug takes and returns ``int4`` / ``uint4`` GM tensors
#: (the PTO side, ``Program.run``, keeps them as packed bytes: two values per byte, element 0 in the
#: low nibble). A feed is either the values -- an array of the declared shape, of dtype
#: ``ml_dtypes.int4`` / ``ml_dtypes.uint4`` or any numpy integer dtype whose values fit the tensor's
#: range -- or, for compatibility, the packed ``uint8`` bytes when the array's size is the packed byte
#: count and not the declared shape (a one-element tensor takes the values form). Runtime-sized
#: tensors take the values form only (the element count is the array's size). Outputs come back as the
#: values in the declared (view's) shape, as ml_dtypes.int4 / uint4 (int8 / uint8 without them).
PACKED_4BIT_FEED = "values of the declared shape, or the packed uint8 bytes"


def _unpacked(raw: np.ndarray, count: int, signed: bool) -> np.ndarray:
    """``count`` 4-bit values of the packed bytes ``raw`` (int8 if ``signed``, else uint8)."""
    from pto_core.numerics.packing import unpack_nibbles
    return unpack_nibbles(np.ascontiguousarray(raw).reshape(-1).view(np.uint8), count, signed=signed)


def _values_4bit(vals: np.ndarray, dt) -> np.ndarray:
    """int8/uint8 4-bit values as the output dtype of ``dt`` (ml_dtypes.int4 / uint4 when available)."""
    ml = _ML_4BIT.get(dt.tik_name)
    return vals.astype(ml) if ml is not None else vals


def _packed_feed(tik, name: str, st, arr: np.ndarray, shape: tuple):
    """The packed bytes of int4/uint4 feed ``arr`` for tensor ``st`` of ``shape`` (PACKED_4BIT_FEED), and the
    caller's array to write the kernel's changes back to (``None``: the bytes are the caller's own array, or
    it is read-only)."""
    dt = st.dtype
    count = int(np.prod(shape, dtype=np.int64))
    nbytes = dt.nbytes(count)
    lo, hi = (-8, 7) if dt.kind == "s" else (0, 15)
    is_ml = arr.dtype in _ML_4BIT.values()
    forms = (f"the values as an array of shape {list(shape)} (dtype ml_dtypes.{dt.tik_name}, or an integer dtype "
             f"holding values in [{lo}, {hi}])"
             + ("" if st.runtime_size is not None else
                f", or the packed bytes as a uint8 array of {nbytes} elements (two values per byte, element 0 in "
                f"the low nibble)"))
    if st.runtime_size is None and arr.dtype == np.uint8 and arr.size == nbytes and tuple(arr.shape) != shape:
        if arr.ndim == 1 and arr.flags.c_contiguous and arr.flags.writeable:
            return arr, None                 # the caller's bytes: the run writes the kernel's changes back into them
        return np.ascontiguousarray(arr).reshape(-1).copy(), None
    if not (is_ml or arr.dtype.kind in "iu") or tuple(arr.shape) != shape:
        raise tik._error(f"feed_dict[{name!r}] has dtype {arr.dtype} and shape {tuple(arr.shape)}; tensor {name!r} "
                         f"is {dt.tik_name} {list(shape)}", operand=name, value=f"{arr.dtype} {tuple(arr.shape)}",
                         limit=f"{dt.tik_name} values of shape {list(shape)} or {nbytes} packed uint8 bytes",
                         hint="pass " + forms)
    vals = arr.astype(np.int64)
    if vals.size and (int(vals.min()) < lo or int(vals.max()) > hi):
        bad = vals.reshape(-1)[np.flatnonzero((vals.reshape(-1) < lo) | (vals.reshape(-1) > hi))[0]]
        raise tik._error(f"feed_dict[{name!r}] holds {int(bad)}, which does not fit {dt.tik_name} [{lo}, {hi}]",
                         operand=name, value=int(bad), limit=f"[{lo}, {hi}]",
                         hint="pass " + forms + " (values are never wrapped)")
    from pto_core.numerics.packing import pack_nibbles
    return pack_nibbles(vals), (arr if arr.flags.writeable else None)


def _resizable_workspace(st, info) -> bool:
    """A statically sized ``is_workspace`` GM tensor that is neither a BuildCCE input nor an output
    (its size may come from the feed: WORKSPACE_SIZE_FROM_FEED)."""
    if not st.is_workspace or st.runtime_size is not None or st.size_expr is not None or st.nbytes is None:
        return False
    return not any(isinstance(x, Tensor) and x.storage is st for x in list(info.inputs) + list(info.outputs))


def _evaluate(e, scalars: dict) -> int:
    """Value of an integer IR expression over InputScalars (dynamic tensor dims)."""
    values = {s.ir: v for s, v in scalars.items()}
    memo: dict = {}      # id(node) -> (node, value): a shared node of a DAG expression is evaluated once

    def ev(x):
        hit = memo.get(id(x))
        if hit is not None and hit[0] is x:
            return hit[1]
        v = _ev(x)
        memo[id(x)] = (x, v)
        return v

    def _ev(x):
        if isinstance(x, P.Const):
            return x.value
        if isinstance(x, P.ScalarArg):
            if x not in values:
                raise IllegalOperand(f"dimension uses {x.name!r}, which is not an InputScalar of this kernel",
                                     hint="build the shape from ints and InputScalars of this kernel (declared with "
                                          "tik_instance.InputScalar, listed in BuildCCE inputs)")
            return values[x]
        if isinstance(x, P.Cast):
            return S.convert(ev(x.a), x.a.type, x.type)
        if isinstance(x, P.BinOp):
            a, b = ev(x.a), ev(x.b)
            f = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                 "div": lambda: S.tdiv(a, b) if S.is_int(x.type) else a / b,
                 "rem": lambda: S.trem(a, b), "shl": lambda: a << b, "shr": lambda: a >> b,
                 "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
                 "min": lambda: min(a, b), "max": lambda: max(a, b)}[x.op]
            return S.normalize(f(), x.type) if S.is_int(x.type) else f()
        raise IllegalOperand(f"cannot evaluate {x!r} before the kernel runs",
                             hint="tensor dimensions may use InputScalars and constants only")
    return int(ev(e))


__all__ = ["Tikdb", "tik_machine_options", "ON_CHIP_FILL_BYTE", "GM_FILL_BYTE", "RUN_OBSERVERS", "DebugRun"]
