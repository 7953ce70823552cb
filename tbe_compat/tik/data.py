"""Data movement: ``data_move``, ``data_move_pad``, ``tensor_mov`` (plain moves), ``set_atomic_add``,
``mov_atomic_add_to_scalar``.

``data_move(dst, src, sid, nburst, burst, src_stride, dst_stride)`` moves ``nburst``
bursts of ``burst`` units; strides are *gaps* (tail of one burst to the head of the
next), tik_api.md §7.1. The lowering of each (src space, dst space) pair is one row
of `DATA_MOVE_PATHS`: the PTO op, the units, the chips. Families add rows (the cube
family adds the L0C <-> UB fractal paths) with `register_move_path`.

================  =================  ===============  =========================================
src -> dst        PTO op             pipe             units (burst / src gap / dst gap)
================  =================  ===============  =========================================
GM -> UB          pto.mte_gm_ub      MTE2             32 B / 32 B / 32 B (byte form, see below)
UB -> GM          pto.mte_ub_gm      MTE3             32 B / 32 B / 32 B (byte form)
GM -> L1          pto.mte_gm_l1      MTE2             32 B / 32 B / 32 B (byte form)
L1 -> UB          pto.mte_l1_ub      MTE1             32 B / 32 B / 32 B (byte form)
UB -> L1          pto.mte_ub_l1      MTE3             32 B units and gaps
UB -> UB          pto.mte_ub_ub      V                32 B units and gaps
L1 -> GM          pto.mte_l1_gm      MTE3             32 B units and gaps (910B/310B only)
================  =================  ===============  =========================================

Byte-form ops take ``len_burst`` bytes and start-to-start strides in bytes, so the TIK
call ``data_move(ub, gm, 0, n, b, sg, dg)`` is ``pto.mte_gm_ub %gm, %ub, 0, 32*b
nburst(n, 32*(b+sg), 32*(b+dg))``. data_move keeps ``pto.mte_gm_ub``/``mte_ub_gm`` rows
within 16-bit byte counts (the ops take up to 21-bit ones, ``data_move_pad``'s byte bursts): a
constant burst above 2047 blocks becomes rows of ``32*d`` bytes (``d`` the
largest divisor of the burst <= 2047) repeated by a ``loop`` group; a burst given as a
TIK expression becomes rows of one 32-byte block (any run-time value works).

The GM/L1/UB paths copy bytes, so src and dst dtypes may differ (``MovePath.byte_copy``):
the destination reinterprets them, as in CANN TIK. int32 -> float16 stays the documented
no-op quirk (tik_api.md §7.1); L0C paths convert and check their dtype pairs.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Optional

import ml_dtypes
import numpy as np

from pto_core import program as P
from pto_core.errors import IllegalOperand, PtoError, UnsupportedOp
from pto_core.memory import GM_TAIL_PAD
from pto_core.ops.mte import GM_OVERREAD_READS_UNKNOWN
from pto_core.ops.sync import barrier_pipe
from pto_core.pipes import event_id as _event_id, pipe_name
from pto_core.scalars import ROUNDERS, int_to_float

from .. import platform
from .api import Operand, TikBase, tik_api
from .scalar import Expr, Scalar, option_is_off, py_number, zero_d_value
from .tensor import SPACE_TIK_NAMES, Tensor

BLOCK = 32
#: tensor_mov block modes (tik_api.md §7.3); '' and None mean 32-byte blocks
_TENSOR_MOV_BLOCK_MODES = (None, "", "m", "v", "sc", "dp")


class IgnoredArgumentWarning(UserWarning):
    """A TIK call passed arguments that CANN TIK accepts and ignores on this path (the call runs without them)."""


def _space_name(t) -> str:
    return SPACE_TIK_NAMES.get(t.space, t.space) if isinstance(t, Tensor) else type(t).__name__
U16 = 0xFFFF
#: ``data_move_pad``'s argument ranges on the chips that have it (CANN 8.1 TIK
#: ``DataMoveCheck.check_mov_pad_instr_params``, its Ascend910B / 310B / 610Lite branch; tik_api.md §7.2 gives
#: nburst and burst): nburst [1, 4095], burst [1, 2**21 - 1] bytes, dst_gap / src_gap [0, 2**32 - 1] (GM bytes or
#: UB 32-byte blocks). An immediate outside is refused at the call; a TIK value is checked when the move runs.
PAD_NBURST_MAX = 4095
PAD_BURST_MAX = (1 << 21) - 1
PAD_GAP_MAX = (1 << 32) - 1
#: Named choice **PADDING_VALUE_CANN81_WARN**: CANN 8.1.RC1 TIK's ``DataMoveCheck._check_padding_value``
#: (tik_lib/tik_data_move_api/tik_data_move_check.py, called from ``check_mov_pad_instr_params`` on every chip
#: but the nano series) refuses a GM -> UB ``data_move_pad`` that gives (a) a ``padding_value`` with
#: ``left_padding == right_padding == 0`` ("When right_padding and left_padding is 0, padding_value must be set to
#: None") or (b) a nonzero ``left_padding`` / ``right_padding`` with ``padding_value=None`` ("When right_padding or
#: left_padding is not 0, padding_value cannot be set to None"). The TIK reference (tik_api.md §7.2) allows both: a
#: None padding_value pads with the MOV_PAD_VAL register's value (open question 9: 0 is assumed) and nothing bars a
#: padding value without padding counts. So both run as before -- (a) the value fills an unaligned burst's dummy
#: tail (a padding_value with zero paddings counts as padding, ``padded`` below), (b) the padding is 0 -- with a
#: `Cann81RuleWarning` once per call site naming the rule and the Fix, as USER_FLAG_CANN81_RULES_WARN's rules.
#: The same check first requires ``isinstance(padding_value, (int, float))`` ("When padding_value is not None, it can
#: be int or float"): a numpy scalar (``np.float32(1.5)``, ``np.int32(7)``; ``np.float64`` subclasses float) runs
#: with its value and a `Cann81RuleWarning` too (fix451; it ran silently).
#: False (or USER_FLAG_CANN81_RULES_WARN False): both are `IllegalOperand` at the call, as CANN 8.1 TIK.
#: migration_guide/tik_core.md (data_move_pad; §6 list of Cann81RuleWarning rules).
PADDING_VALUE_CANN81_WARN = True
#: largest burst (in 32-byte blocks) data_move puts in one mte_gm_ub / mte_ub_gm row (16-bit byte count)
_MAX_ROW_BLOCKS = U16 // BLOCK


@dataclass(frozen=True)
class MovePath:
    """One ``data_move`` scope pair.

    Attributes:
        lower: ``fn(tik, dst: Operand, src: Operand, nburst, burst, src_stride, dst_stride, mode)``
            records the PTO op(s); arguments are ints or integer IR values (already range-checked).
        socs: short SoC versions where the path exists (None = every chip whose buffers exist).
        src_unit / dst_unit: bytes of one burst unit and of one gap unit on each side, for the
            static bounds checks: an int, or ``fn(operand) -> int`` (e.g. one 16x16 fractal of
            the L0C dtype: 512 B for 16-bit, 1024 B for 32-bit elements), or None when burst and
            gap units differ on that side (the lowering checks extents itself; the auto-sync
            footprint is then the whole tensor from the view's start).
        doc: one line for error messages and docs.
        byte_copy: the move copies bytes unchanged (the DMA paths between GM, L1 and UB), so src
            and dst may have different dtypes: the destination reinterprets the bytes, as CANN TIK
            allows (its data_move check compares no dtypes on these paths; public operators such
            as strided_slice_two_turn_one move float32 GM data into a float16 UB buffer). False
            for paths that convert (L0C), where the dtypes must match the conversion table.
    """

    lower: Callable
    socs: Optional[tuple] = None
    src_unit: object = BLOCK
    dst_unit: object = BLOCK
    doc: str = ""
    byte_copy: bool = True


#: (src space, dst space) -> MovePath. Add rows with `register_move_path`.
DATA_MOVE_PATHS: dict = {}


def register_move_path(src: str, dst: str, path: MovePath) -> None:
    DATA_MOVE_PATHS[(src, dst)] = path


def _mul(a, k: int):
    return a * k if isinstance(a, int) else P.binop("mul", P.cast(a, P.I64), k)


def _add(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    return P.binop("add", P.cast(P.as_expr(a, P.I64), P.I64), P.cast(P.as_expr(b, P.I64), P.I64))


def _one_burst_gap(nburst, gap):
    """The gap a move uses: a run-time ``gap`` counts only when ``nburst`` is not 1. Named choice
    RUN_TIME_GAP_OF_ONE_BURST (tik_core.md): one burst never uses its gaps and the instruction takes them as
    16-bit fields, so a run-time gap of any value is harmless there (CANN's dynamic arg_max_v2 computes -21 for
    its single-burst moves of an f16 row of 16..112 elements); it is 0 then, and range-checked otherwise.
    Immediate gaps are range-checked at trace time whatever the count, as TIK does."""
    if isinstance(gap, int):
        return gap
    if isinstance(nburst, int):
        return 0 if nburst == 1 else gap
    return P.select(P.cast(nburst, P.I64) == 1, 0, P.cast(gap, P.I64))


def _move_extent(nburst, burst, gap, unit: int):
    """Bytes a move touches from its start, ``((nburst - 1) * (burst + gap) + burst) * unit``: an int,
    or an IR expression when any of the counts is a run-time value."""
    if all(isinstance(x, int) for x in (nburst, burst, gap)):
        return ((nburst - 1) * (burst + gap) + burst) * unit

    def i64(v):
        return P.cast(P.as_expr(v, P.I64), P.I64)
    rows = P.binop("mul", P.binop("sub", i64(nburst), 1), P.binop("add", i64(burst), i64(gap)))
    return P.binop("mul", P.binop("add", rows, i64(burst)), unit)


def _row_blocks(burst: int) -> int:
    """Largest divisor of ``burst`` that is at most `_MAX_ROW_BLOCKS`."""
    for d in range(min(burst, _MAX_ROW_BLOCKS), 0, -1):
        if burst % d == 0:
            return d
    return 1


def _byte_form(tik, op: str, dst: Operand, src: Operand, n, burst, ss, ds, *, limit16: bool, lead=(),
               footprint=()):
    """Emit a byte-form burst move (see module doc)."""
    s_step = _mul(_add(burst, ss), BLOCK)
    d_step = _mul(_add(burst, ds), BLOCK)
    if isinstance(burst, int) and (not limit16 or burst <= _MAX_ROW_BLOCKS):
        tik._emit(op, src.ptr, dst.ptr, *lead, BLOCK * burst, nburst=(n, s_step, d_step), footprint=footprint)
        return
    if isinstance(burst, int):
        d = _row_blocks(burst)
        inner = (burst // d, BLOCK * d, BLOCK * d)
        row = BLOCK * d
    else:
        inner = (burst, BLOCK, BLOCK)
        row = BLOCK
    loop = None if (isinstance(n, int) and n == 1) else [(n, s_step, d_step)]
    tik._emit(op, src.ptr, dst.ptr, *lead, row, nburst=inner, loop=loop, footprint=footprint)


def _lower_gm_ub(tik, dst, src, n, burst, ss, ds, mode, fp):
    _byte_form(tik, "mte_gm_ub", dst, src, n, burst, ss, ds, limit16=True, lead=(0,), footprint=fp)


def _lower_ub_gm(tik, dst, src, n, burst, ss, ds, mode, fp):
    _byte_form(tik, "mte_ub_gm", dst, src, n, burst, ss, ds, limit16=True, footprint=fp)


def _lower_gm_l1(tik, dst, src, n, burst, ss, ds, mode, fp):
    if not option_is_off(mode):
        raise tik._error(f"PadMode {mode} (GM -> L1 padding modes 1..8) is not modelled: the pad bytes come from "
                         f"the PADDING register, which data_move has no argument to set (its value is undefined "
                         f"in a TIK kernel), and the public copy_gm_to_cbuf table gives the fill layout of modes "
                         f"1..4 only (with conflicting register bits) and not of modes 5..8", operand="PadMode",
                         value=mode, cls=UnsupportedOp,
                         hint="use PadMode 0 and write the padding yourself (vector_dup in UB, then UB -> L1)")
    _byte_form(tik, "mte_gm_l1", dst, src, n, burst, ss, ds, limit16=False, footprint=fp)


def _lower_l1_ub(tik, dst, src, n, burst, ss, ds, mode, fp):
    _byte_form(tik, "mte_l1_ub", dst, src, n, burst, ss, ds, limit16=False, footprint=fp)


def _units_form(op):
    def lower(tik, dst, src, n, burst, ss, ds, mode, fp):
        tik._emit(op, src.ptr, dst.ptr, burst, nburst=(n, ss, ds), footprint=fp)
    return lower


register_move_path("gm", "ub", MovePath(_lower_gm_ub, doc="GM -> UB (copy_gm_to_ubuf, MTE2)"))
register_move_path("ub", "gm", MovePath(_lower_ub_gm, doc="UB -> GM (copy_ubuf_to_gm, MTE3)"))
register_move_path("gm", "l1", MovePath(_lower_gm_l1, doc="GM -> L1 (copy_gm_to_cbuf, MTE2)"))
register_move_path("l1", "ub", MovePath(_lower_l1_ub, doc="L1 -> UB (copy_cbuf_to_ubuf, MTE1)"))
register_move_path("ub", "l1", MovePath(_units_form("mte_ub_l1"), doc="UB -> L1 (copy_ubuf_to_cbuf, MTE3)"))
register_move_path("ub", "ub", MovePath(_units_form("mte_ub_ub"), doc="UB -> UB (copy_ubuf_to_ubuf, V)"))
register_move_path("l1", "gm", MovePath(_units_form("mte_l1_gm"), socs=("Ascend910B", "Ascend310B"),
                                        doc="L1 -> GM (copy_cbuf_to_gm, MTE3; Ascend910B/310B)"))

#: TIK set_atomic_add mode -> atomic type (tik_api.md §6.4; the SPR.CTRL encoding).
ATOMIC_MODES = {1: "float32", 2: "float16", 3: "int16", 4: "int32", 5: "int8", 6: "bfloat16"}
#: ``pto.get_spr "ATOMIC"``: ``type | op << ATOMIC_OP_SHIFT`` (op 0 = add), 0 when atomics are off
ATOMIC_OP_SHIFT = 3
#: Named choice: a run-time (Scalar) ``set_atomic_add`` mode is checked when the kernel runs: a value
#: outside 0..6, or a mode the chip lacks (tik_api.md §6.4 availability, e.g. 2 on Ascend910A), stops
#: the run with `IllegalOperand` at the call's line, as the same mode given as a number is refused when
#: traced (it used to leave the previous atomic state in force, so the move overwrote GM or accumulated
#: in the earlier type). The chips' supported modes are always 0..k; a mode above k is refused.
RUNTIME_ATOMIC_MODE_CHECKED = True
_ATOMIC_PTO = {"float32": "f32", "float16": "f16", "int16": "s16", "int32": "s32", "int8": "s8", "bfloat16": "bf16"}



#: Named choice TIK_USER_FLAGS_NO_EFFECT: ``tik_instance.set_flag(src, dst, id)`` / ``wait_flag(...)`` (TIK's
#: hand-written synchronisation, tik_api.md §6.3: "no functional effect in a sequential simulator") check their
#: pipes and event id and record nothing. Auto-sync already orders every op of a TIK kernel (its pairs use
#: EVENT_ID0, which CANN kernels also write by hand), so keeping the user's pairs could only add unmatched
#: waits. They used to raise "'Tik' object has no attribute 'set_flag'".
TIK_USER_FLAGS_NO_EFFECT = True

#: The pipes CANN 8.1.RC1 TIK's set_flag / wait_flag / pipe_barrier take (``_check_pipe_supported``,
#: tbe/tik/tik_lib/tik_ir_builder_lib.py); pipe_barrier also takes PIPE_ALL. Every TIK version spells a pipe as
#: one of these strings (they index the codegen's ``PIPELINES`` table: te ``cce_intrin``, CANN 8.1
#: ``pipe_line_dict``), so another spelling ("V", "pipe_v", "CUBE") is refused at the call.
CANN81_FLAG_PIPES = ("PIPE_S", "PIPE_V", "PIPE_M", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3")
#: Spellings of the pipes the hardware has that CANN 8.1 TIK refuses in these calls (FIX: 910B/310B).
_OTHER_TIK_PIPES = ("PIPE_FIX",)
#: Named choice USER_FLAG_CANN81_RULES_WARN: CANN 8.1.RC1 TIK's ``_check_set_wait_flag_params`` refuses a
#: ``set_flag`` / ``wait_flag`` outside a ``new_stmt_scope(disable_sync=True)`` body ("Only support call set_flag
#: api in new_stmt_scope with disable the sync"), an event id that is not a Python int (``np.int32(1)``), the same
#: pipe on both sides and PIPE_FIX; its ``pipe_barrier`` refuses PIPE_FIX. No other TIK version's set_flag is in the
#: public record (te.tik 2019 has no set_flag and no disable_sync), the CCE intrinsics take all of these (CCE
#: ``set_flag(pipe_t, pipe_t, event)``: any pipe but PIPE_ALL, ids 0..7; Ascend C lists same-pipe ``V_V`` and
#: FIX events), and the public CANN kernels seen (fused_bn2_reluv2_conv2d_bn1, a data_move_pad resize op) call
#: them only inside ``disable_sync=True`` scopes with int ids. So these calls keep running (they record nothing,
#: TIK_USER_FLAGS_NO_EFFECT) with a `Cann81RuleWarning` once per call site naming the CANN 8.1 rule, so a
#: kernel moving to CANN 8.x is told; False makes them errors. What no TIK version can compile is an error: an
#: unknown pipe or spelling, PIPE_ALL in set_flag / wait_flag, an event id outside 0..7, a str ("EVENT_ID1",
#: CANN 8.1 requires an int and te's codegen indexes ``EVENTS`` by it), float, bool, None or Scalar event id.
#: migration_guide/tik_core.md (synchronisation rows).
USER_FLAG_CANN81_RULES_WARN = True
_CANN81_WARNED: set = set()     # (file, line, rule) already warned


class Cann81RuleWarning(UserWarning):
    """A TIK call CANN 8.1 TIK refuses at compile time but the simulator runs (USER_FLAG_CANN81_RULES_WARN).

    Its text starts with the call site, as `pto_core`'s kernel warnings (``GmOverreadWarning`` ...) do, so the
    warning raised under ``-W error`` names the line; Python's ``file:line:`` prefix repeats it on screen
    (accepted: migration_guide/tik_core.md, synchronisation)."""


def warn_cann81_rule(rule: str, message: str, where, runs: str, fix: str) -> None:
    """A `Cann81RuleWarning` at ``where`` (the user's call site), once per (site, ``rule``): ``message`` says what
    CANN 8.1 TIK refuses, ``runs`` what the simulator does instead, ``fix`` what to write. Used by the named
    choices USER_FLAG_CANN81_RULES_WARN (here) and FLOAT_COMPARE_CANN81_WARN (`scalar`)."""
    key = (getattr(where, "file", None), getattr(where, "line", None), rule)
    if key in _CANN81_WARNED:
        return
    text = f"{where}: {message}. CANN 8.1 TIK refuses this call at compile time; the simulator runs it ({runs}). " \
           f"Fix: {fix}"
    if where is not None and getattr(where, "file", None):
        warnings.warn_explicit(text, Cann81RuleWarning, where.file, where.line)
    else:
        warnings.warn(text, Cann81RuleWarning, stacklevel=4)
    # marked only once the warning was shown: under ``-W error`` (or a filter that raises) the site raises every
    # time it is called, not only the first time
    _CANN81_WARNED.add(key)


class DataAPI(TikBase):
    """The data-movement family (mixin of `tbe_compat.tik.Tik`)."""

    @tik_api("data_move")
    def data_move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, *args, **argv):
        """``data_move(dst, src, sid, nburst, burst, src_stride, dst_stride[, mode])`` (tik_api.md §7.1)."""
        mode = None
        if args:
            if len(args) > 1:
                spaces = (getattr(src, "space", None), getattr(dst, "space", None))
                if "l0c" in spaces or spaces == ("gm", "l1"):
                    # the only paths whose extended argument TIK reads (check: "args length should be 1")
                    raise self._error(f"data_move takes at most 8 positional arguments, got {7 + len(args)}",
                                      operand="args", value=len(args) + 7,
                                      hint="pass one PadMode (GM -> L1) or ConvReluMode (L0C <-> UB)")
                where = self._where
                warnings.warn(f"{where or 'tik.data_move'}: data_move ignores the extra positional arguments "
                              f"{args!r}: no extended argument exists on a {spaces[0]} -> {spaces[1]} move (CANN "
                              f"TIK reads one only on GM -> L1 and L0C paths)", IgnoredArgumentWarning,
                              stacklevel=3)
            mode = args[0]
        for key in ("PadMode", "ConvReluMode", "pad_mode"):
            if key in argv:
                mode = argv.pop(key)
        if argv:
            raise self._error(f"unknown keyword argument(s) {', '.join(sorted(argv))}", operand=next(iter(argv)),
                              hint="data_move(dst, src, sid, nburst, burst, src_stride, dst_stride[, mode])")
        self._move(dst, src, sid, nburst, burst, src_stride, dst_stride, mode)

    def _move(self, dst, src, sid, nburst, burst, src_stride, dst_stride, mode):
        d = self._operand(dst, "dst")
        s = self._operand(src, "src")
        sid = self._int_arg(sid, "sid", 0, 15)
        n = self._int_arg(nburst, "nburst", 1, 4095)
        b = self._int_arg(burst, "burst", 1, U16)
        ss = self._int_arg(src_stride, "src_stride", 0, U16)
        ds = self._int_arg(dst_stride, "dst_stride", 0, U16)
        path = DATA_MOVE_PATHS.get((s.space, d.space))
        if path is None:
            known = ", ".join(f"{a}->{b}" for a, b in DATA_MOVE_PATHS)
            raise self._error(f"no data_move path from {s.space.upper()} to {d.space.upper()}", operand="dst",
                              value=f"{s.tensor.scope} -> {d.tensor.scope}", limit=known, cls=UnsupportedOp,
                              hint="move through UB (or use fixpipe / tensor_mov for L0C)")
        soc = platform.current_soc()
        if path.socs is not None and soc.short_soc_version not in path.socs:
            raise self._error(f"data_move {path.doc} is not available on {soc.soc_version}", operand="dst",
                              value=f"{s.space}->{d.space}", limit=", ".join(path.socs), cls=UnsupportedOp,
                              hint=f"select a chip that has this path ({', '.join(path.socs)}: "
                                   f"set_current_compile_soc_info), or on {soc.soc_version} move through UB: "
                                   f"data_move to a UB tensor, then from it to dst")
        if s.dt.name == "s32" and d.dt.name == "f16":
            return  # TIK emits no instruction for this pair (it is tensor_mov's deq path): tik_api.md §7.1
        ss, ds = _one_burst_gap(n, ss), _one_burst_gap(n, ds)
        # sid too (tik_api.md §7.1: [0, 15]; an immediate 16 was refused while a Scalar 16 ran)
        for value, name, lo, hi, unit in ((sid, "sid", 0, 15, "stream id"),
                                          (n, "nburst", 1, 4095, "bursts"), (b, "burst", 1, U16, "32-byte blocks"),
                                          (ss, "src_stride", 0, U16, "gap"),
                                          (ds, "dst_stride", 0, U16, "gap")):
            if not isinstance(value, int):              # a TIK value: its range is checked when the move runs
                self._emit("assert_in_range", P.cast(value, P.I64), lo, hi, what=f"{name} of tik.data_move ({unit})")
        if s.dt is not d.dt and not path.byte_copy:
            raise self._error(f"src dtype {s.tensor.dtype} and dst dtype {d.tensor.dtype} differ; data_move copies "
                              f"bytes of one dtype", operand="dst", value=d.tensor.dtype, limit=s.tensor.dtype,
                              hint="reinterpret_cast_to one of them, or convert with vconv/vec_conv")
        for op in (s, d):
            if op.space != "gm":
                op.check_aligned(BLOCK)
        fp = []
        for op, unit, gap, w in ((s, path.src_unit, ss, False), (d, path.dst_unit, ds, True)):
            unit = unit(op) if callable(unit) else unit
            ext = None
            # a GM access may run past the tensor into the host's allocation padding (named choice
            # "GM allocation padding": round32(size) + GM_TAIL_PAD bytes; reads get unknown bytes
            # there, writes are dropped -- pto_core.ops.mte read_span / _gm_tail_cut); an on-chip
            # tensor owns the rest of its last 32-byte block (placement aligns every tensor to 32 B),
            # so a one-block move into a (1,)-shaped UB tensor stays inside its allocation
            if op.space == "gm":
                nbytes = op.tensor.storage.nbytes
                slack = 0 if nbytes is None else -nbytes % BLOCK + GM_TAIL_PAD
            elif op.space in ("ub", "l1") and op.tensor.storage.nbytes is not None:
                slack = -op.tensor.storage.nbytes % BLOCK
            else:
                slack = 0
            if unit is not None and all(isinstance(x, int) for x in (n, b, gap)):
                ext = _move_extent(n, b, gap, unit)
                avail = op.available_bytes()
                tail_ok = avail is not None and 0 < ext - avail <= slack
                start = op.static_byte_offset
                if op.space == "gm" and not w and GM_OVERREAD_READS_UNKNOWN and start is not None and \
                        (nbytes is None or 0 <= start < nbytes):
                    tail_ok = True      # a GM read past its tensor reads unknown data, reported when it runs
                if not tail_ok:
                    op.check_extent(ext, f"{n} burst(s) of {b} x {unit} B with gap {gap} x {unit} B", slack=slack)
            elif unit is not None and w:
                # nburst, burst or the gap is a run-time value: the destination's extent is checked
                # when the move runs (a write past the tensor would clobber its neighbours)
                op.check_extent(_move_extent(n, b, gap, unit),
                                f"nburst/burst/gap computed at run time, in {unit}-byte units", slack=slack)
            fp.append(op.write(ext) if w else op.read(ext))
        path.lower(self, d, s, n, b, ss, ds, mode, fp)

    @tik_api("tensor_mov")
    def tensor_mov(self, dst, src, block_mode, nburst, burst_len, dst_stride, src_stride, deqscale=None,
                   sid_store_mode=0, relu=False, pad_mode=None, pad_value=None, onthefly_mode=0, src_onthefly=None,
                   src_onthefly_stride=0):
        """``tensor_mov`` as a plain move (no deq/relu/pad/on-the-fly): same units as data_move (note the
        argument order: dst_stride before src_stride).

        ``block_mode`` selects units on L0C paths only (the cube family's `tensor_mov`): on every other
        path CANN TIK's unit tables give 32-byte bursts and gaps whatever the mode (tik_api.md §7.3,
        "anything else"), so ``'m'``, ``'v'``, ``'sc'`` and ``'dp'`` move like ``''`` here."""
        if not (block_mode is None or (isinstance(block_mode, str) and block_mode in _TENSOR_MOV_BLOCK_MODES)):
            raise self._error(f"block_mode {block_mode!r} is not a tensor_mov block mode", operand="block_mode",
                              value=repr(block_mode), limit=", ".join(repr(m) for m in _TENSOR_MOV_BLOCK_MODES[1:]),
                              hint="pass one of the listed block_mode strs ('' for plain moves)")
        extras = {"deqscale": deqscale, "relu": relu, "pad_mode": pad_mode, "pad_value": pad_value,   # off: option_is_off
                  "onthefly_mode": onthefly_mode, "src_onthefly": src_onthefly, "sid_store_mode": sid_store_mode}
        used = [k for k, v in extras.items() if not option_is_off(v)]
        if used:
            raise self._error(f"tensor_mov with {', '.join(used)} between {_space_name(src)} and "
                              f"{_space_name(dst)} is not modelled: its conversions (deqscale, relu) are those "
                              f"of the L0C paths", operand=used[0], cls=UnsupportedOp,
                              hint="move the data plainly, then convert with vconv / vec_conv (or use an L0C path)")
        self._move(dst, src, 0, nburst, burst_len, src_stride, dst_stride, None)

    @tik_api("set_atomic_add")
    def set_atomic_add(self, mode):
        """``set_atomic_add(mode)``: 0 off; 1 float32, 2 float16, 3 int16, 4 int32, 5 int8, 6 bfloat16
        (or the dtype name, or an integer Scalar). While on, moves into GM accumulate."""
        if isinstance(mode, str):
            if mode not in _ATOMIC_PTO:
                raise self._error(f"atomic dtype {mode!r} is not one of {', '.join(_ATOMIC_PTO)}", operand="mode",
                                  value=mode, limit=", ".join(_ATOMIC_PTO),
                                  hint="pass a dtype name from the list, or the mode number 0..6")
            names = {1: mode}
            m = 1
        elif isinstance(mode, Expr):
            m = None
            names = ATOMIC_MODES
        else:
            m = self._int_arg(mode, "mode", 0, 6)
            names = ATOMIC_MODES
        if m == 0:
            self._emit("set_atomic_none")
            return
        if m is not None:
            dt = names[m]
            self._require_support("tik.set_atomic_add", dt)
            self._emit(f"set_atomic_{_ATOMIC_PTO[dt]}")
            self._emit("set_atomic_add")
            return
        # run-time mode: checked when the kernel runs (RUNTIME_ATOMIC_MODE_CHECKED), then one branch per
        # supported value
        v = P.cast(self._int_arg(mode, "mode"), P.I64)
        supported = [code for code, dt in ATOMIC_MODES.items() if platform.api_check_support("tik.set_atomic_add", dt)]
        top = 0
        while top + 1 in supported:
            top += 1
        soc = platform.current_soc()
        names = ", ".join(f"{c} {ATOMIC_MODES[c]}" for c in range(1, top + 1))
        if RUNTIME_ATOMIC_MODE_CHECKED:
            self._emit("assert_in_range", v, 0, top,
                       what=f"mode of tik.set_atomic_add ({soc.soc_version} {soc.core_type} supports 0 off"
                            f"{', ' + names if names else ''}; 0..6 are the modes of any chip)")
        b = self._builder
        with b.if_(P.cmp("eq", v, 0)):
            self._emit("set_atomic_none")
        for code in supported:
            dt = ATOMIC_MODES[code]
            with b.elif_(P.cmp("eq", v, code)):
                self._emit(f"set_atomic_{_ATOMIC_PTO[dt]}")
                self._emit("set_atomic_add")

    @tik_api("mov_atomic_add_to_scalar")
    def mov_atomic_add_to_scalar(self, scalar):
        """``scalar`` = the current atomic-add mode in ``set_atomic_add``'s numbering (0 off, 1 float32,
        2 float16, 3 int16, 4 int32, 5 int8, 6 bfloat16) -- TIK reads the atomic field of the CTRL
        register into a ``uint64`` Scalar; here ``pto.get_spr "ATOMIC"`` (an atomic max/min set by
        direct PTO ops reads as 0: atomic add is off). Returns ``scalar``."""
        if not isinstance(scalar, Scalar):
            raise self._error(f"input scalar should be Scalar, got {type(scalar).__name__}", operand="scalar",
                              value=repr(scalar), hint='create it with tik_instance.Scalar("uint64")')
        if scalar.dtype != "uint64":
            raise self._error(f"scalar must be uint64, got {scalar.dtype}", operand="scalar", value=scalar.dtype,
                              limit="uint64", hint='create it with tik_instance.Scalar("uint64")')
        self._require_support("tik.mov_atomic_add_to_scalar")
        word = self._builder.read_spr("ATOMIC")
        add_on = P.cmp("eq", P.binop("shr", word, ATOMIC_OP_SHIFT), 0)
        mode = P.select(add_on, P.binop("and", word, (1 << ATOMIC_OP_SHIFT) - 1), P.cast(0, P.I64))
        self._builder.assign(scalar.ir, P.cast(mode, scalar.ir.type))
        return scalar

    @tik_api("data_move_pad")
    def data_move_pad(self, dst, src, nburst, burst, dst_gap, src_gap, right_padding=0, left_padding=0,
                      padding_value=None):
        """GM <-> UB move with byte bursts and padding (tik_api.md §7.2; 910B/310B-class chips)."""
        d = self._operand(dst, "dst", spaces=("ub", "gm"))
        s = self._operand(src, "src", spaces=("ub", "gm"))
        if (s.space, d.space) not in (("gm", "ub"), ("ub", "gm")):
            raise self._error("data_move_pad moves GM -> UB or UB -> GM", operand="dst",
                              value=f"{s.space}->{d.space}", cls=UnsupportedOp,
                              hint="pass a GM dst with a UB src or a UB dst with a GM src (data_move covers the "
                                   "other paths)")
        if s.dt is not d.dt:
            raise self._error(f"src dtype {s.tensor.dtype} and dst dtype {d.tensor.dtype} differ", operand="dst",
                              value=d.tensor.dtype, limit=s.tensor.dtype,
                              hint="use src and dst tensors of one dtype (convert with vconv after the move)")
        self._require_support("tik.data_move_pad", d.tensor.dtype)
        size = max(1, d.dt.bits // 8)
        n = self._int_arg(nburst, "nburst", 1, PAD_NBURST_MAX)
        nb = self._int_arg(burst, "burst", 1, PAD_BURST_MAX)
        if isinstance(nb, int) and nb % size:
            raise self._error(f"burst {nb} B is not a multiple of the element size {size} B", operand="burst",
                              value=nb, limit=f"multiple of {size}",
                              hint=f"use a multiple of {size}: burst counts bytes of whole {d.tensor.dtype} "
                                   f"elements ({size} B each), e.g. burst={-(-nb // size) * size}")
        dg = _one_burst_gap(n, self._int_arg(dst_gap, "dst_gap", 0, PAD_GAP_MAX))
        sg = _one_burst_gap(n, self._int_arg(src_gap, "src_gap", 0, PAD_GAP_MAX))
        per_block = BLOCK // size
        rp = self._int_arg(right_padding, "right_padding", 0, per_block)
        lp = self._int_arg(left_padding, "left_padding", 0, per_block)
        if not (isinstance(rp, int) and isinstance(lp, int)):
            raise self._error("padding counts must be Python ints", operand="left_padding",
                              hint="pass left_padding / right_padding as Python ints")
        given = padding_value           # as written (PADDING_VALUE_CANN81_WARN: a numpy scalar)
        if padding_value is not None:
            padding_value = self._check_pad_value(padding_value, d.dt)
        self._pad_run_time_checks(n, nb, dg, sg, size)      # (dropped again if a check below refuses the call)
        if d.space == "ub":
            d.check_aligned(BLOCK)
            padded = lp or rp or padding_value is not None
            if isinstance(nb, int):
                row = -(-(lp * size + nb + rp * size) // BLOCK) * BLOCK
                d_step = _add(row, _mul(dg, BLOCK))
            else:
                row = None
                d_step = P.binop("add", P.binop("mul", P.binop("div", P.binop(
                    "add", P.cast(nb, P.I64), lp * size + rp * size + BLOCK - 1), BLOCK), BLOCK), _mul(dg, BLOCK))
            s_step = _add(nb, sg)
            if isinstance(n, int) and row is not None and isinstance(d_step, int):
                self._check_pad_extent(d, (n - 1) * d_step + row, n, "dst")
            else:
                # nburst, burst or dst_gap is a run-time value: the UB extent is checked when the move runs
                # (as data_move's; a write past the tensor would clobber its neighbours)
                last = row if row is not None else P.binop("mul", P.binop("div", P.binop(
                    "add", P.cast(nb, P.I64), lp * size + rp * size + BLOCK - 1), BLOCK), BLOCK)
                ext = _add(P.binop("mul", P.binop("sub", P.cast(P.as_expr(n, P.I64), P.I64), 1),
                                   P.cast(P.as_expr(d_step, P.I64), P.I64)), last)
                nbytes_t = d.tensor.storage.nbytes
                d.check_extent(ext, "nburst/burst/dst_gap computed at run time; bursts of whole 32-byte blocks "
                                    "incl. padding", slack=0 if nbytes_t is None else -nbytes_t % BLOCK,
                               hint="check nburst, burst, the gaps and the padding against the tensor's shape")
            if isinstance(n, int) and isinstance(s_step, int):
                self._check_pad_extent(s, (n - 1) * s_step + nb, n, "src")
            fp = [s.read(None if not isinstance(n, int) or row is None else (n - 1) * s_step + nb
                          if isinstance(s_step, int) else None),
                  d.write(None if row is None or not isinstance(d_step, int) or not isinstance(n, int)
                          else (n - 1) * d_step + row)]
            self._pad_value_rule(padding_value, lp, rp, given)
            pad = None
            if padded:
                value = 0 if padding_value is None else padding_value
                pad = (value, lp, rp) if (lp or rp) else (value,)
            self._emit("mte_gm_ub", s.ptr, d.ptr, 0, nb, nburst=(n, s_step, d_step), pad=pad, footprint=fp)
        else:
            s.check_aligned(BLOCK)
            if lp or rp:
                raise self._error("padding applies to GM -> UB moves only", operand="left_padding",
                                  hint="drop left_padding / right_padding (they apply to GM -> UB moves)")
            if padding_value is not None:
                # CANN TIK check_inter_key: "UB to OUT, padding_value must be None" (tik_api.md §7.2: UB -> GM
                # copies the burst bytes, no padding); it was accepted and ignored
                raise self._error("padding_value applies to GM -> UB moves only", operand="padding_value",
                                  value=repr(padding_value),
                                  hint="drop padding_value (a UB -> GM data_move_pad copies exactly burst bytes per "
                                       "burst)")
            if isinstance(nb, int):
                s_step = _add(-(-nb // BLOCK) * BLOCK, _mul(sg, BLOCK))
            else:
                s_step = P.binop("add", P.binop("mul", P.binop("div", P.binop(
                    "add", P.cast(nb, P.I64), BLOCK - 1), BLOCK), BLOCK), _mul(sg, BLOCK))
            d_step = _add(nb, dg)
            if isinstance(n, int) and isinstance(nb, int) and isinstance(s_step, int) and isinstance(d_step, int):
                self._check_pad_extent(s, (n - 1) * s_step + nb, n, "src")
                self._check_pad_extent(d, (n - 1) * d_step + nb, n, "dst")
            fp = [s.read(None), d.write(None)]
            self._emit("mte_ub_gm", s.ptr, d.ptr, nb, nburst=(n, s_step, d_step), footprint=fp)

    def _pad_value_rule(self, padding_value, lp: int, rp: int, given=None) -> None:
        """PADDING_VALUE_CANN81_WARN for a GM -> UB ``data_move_pad`` (see the constant); ``given``: the
        padding_value as the call wrote it (a numpy scalar is its own rule)."""
        if isinstance(given, np.generic) and not isinstance(given, (int, float)):
            message = (f"data_move_pad with padding_value={given!r}, a numpy {type(given).__name__} (CANN 8.1 TIK: "
                       f"\"When padding_value is not None, it can be int or float\")")
            fix = f"pass a Python number: padding_value={padding_value!r} (float(v) or int(v) of a numpy value)"
            if not PADDING_VALUE_CANN81_WARN:
                raise self._error(f"{message}; CANN 8.1 TIK refuses it", operand="padding_value",
                                  value=repr(given), hint=fix)
            self._cann81_rule("data_move_pad:padding_value:numpy", message,
                              does=f"it pads with its value, {padding_value!r}", fix=fix)
        if padding_value is not None and not (lp or rp):
            rule = "data_move_pad:padding_value"
            message = (f"data_move_pad with padding_value={padding_value!r} and left_padding = right_padding = 0 "
                       f"(CANN 8.1 TIK: \"When right_padding and left_padding is 0, padding_value must be set to "
                       f"None\")")
            does = "the value fills the 32-byte block after an unaligned burst, where no padding_value repeats " \
                   "the burst's first element"
            fix = "drop padding_value (if the kernel never reads the block's tail past the burst), or give " \
                  "right_padding / left_padding with it"
        elif padding_value is None and (lp or rp):
            rule = "data_move_pad:padding_value:none"
            message = (f"data_move_pad with left_padding={lp}, right_padding={rp} and padding_value=None (CANN 8.1 "
                       f"TIK: \"When right_padding or left_padding is not 0, padding_value cannot be set to None\")")
            does = "it pads with 0, the MOV_PAD_VAL value tik_api.md §7.2 assumes"
            fix = "pass padding_value=0 (the value the simulator pads with) or the value the kernel needs"
        else:
            return
        if not PADDING_VALUE_CANN81_WARN:
            raise self._error(f"{message}; CANN 8.1 TIK refuses it", operand="padding_value",
                              value=repr(padding_value), hint=fix)
        self._cann81_rule(rule, message, does=does, fix=fix)

    def _pad_run_time_checks(self, n, nb, dg, sg, size) -> None:
        """``data_move_pad``'s TIK values range-checked when the move runs (recorded before the run-time extent
        checks, so a bad count is named as such). A run-time nburst of 4096, a negative gap or an odd f16 burst ran; an nburst or
        burst of 0 stopped with the PTO op's operand names and limits."""
        for value, name, lo, hi, unit in ((n, "nburst", 1, PAD_NBURST_MAX, "bursts"),
                                          (nb, "burst", 1, PAD_BURST_MAX, "bytes"),
                                          (dg, "dst_gap", 0, PAD_GAP_MAX, "gap"),
                                          (sg, "src_gap", 0, PAD_GAP_MAX, "gap")):
            if not isinstance(value, int):
                self._emit("assert_in_range", P.cast(value, P.I64), lo, hi,
                           what=f"{name} of tik.data_move_pad ({unit})")
        if not isinstance(nb, int) and size > 1:
            # the trace-time refusal's words, with the value the kernel computed (k445: it showed "burst ... modulo
            # the element size 2 B = 1 is outside [0, 0]", the remainder instead of the burst)
            self._emit("assert_multiple", P.cast(nb, P.I64), size, what="burst", unit="B",
                       rule=f"a multiple of the element size {size} B", operand="burst",
                       hint=f"use a multiple of {size} (the value the kernel computed when it ran; check the tiling "
                            f"data or the Scalar arithmetic that gives it)")

    def _check_pad_extent(self, op, nbytes, n, side) -> None:
        """TIK's trace-time "tensor overflow" check of a ``data_move_pad`` side (bytes from the view's start;
        an on-chip tensor owns the rest of its last 32-byte block, a GM tensor its tail pad, as data_move)."""
        nbytes_t = op.tensor.storage.nbytes
        if op.space == "gm":
            slack = 0 if nbytes_t is None else -nbytes_t % BLOCK + GM_TAIL_PAD
        else:
            slack = 0 if nbytes_t is None else -nbytes_t % BLOCK
        avail = op.available_bytes()
        if avail is not None and 0 < nbytes - avail <= slack:
            return
        # slack also for a run-time start (checked when it runs): the same block tail a static start may use
        op.check_extent(nbytes, f"{n} burst(s) of data_move_pad ({side}: {nbytes} B incl. padding and gaps)",
                        slack=slack, hint="check nburst, burst, the gaps and the padding against the tensor's shape")

    def _check_pad_value(self, value, dt):
        """``data_move_pad``'s ``padding_value``: an immediate of the data's range (TIK reference: "in the
        range of the dst dtype"): an int for integer data, an int or a finite float for float data. Returns it
        as a Python number (a numpy scalar is its ``.item()``)."""
        name = dt.tik_name or dt.name
        value = py_number(value)     # a numpy scalar is its Python number (keeps -0.0's sign)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._error(f"padding_value should be an int or float immediate, got {type(value).__name__}",
                              operand="padding_value", value=repr(value),
                              hint="pass a Python number in the range of the data type")
        if dt.is_int:
            info = np.iinfo(dt.storage)
            if not isinstance(value, int) or not info.min <= value <= info.max:
                raise self._error(f"padding_value {value!r} is not an integer in the range of {name}",
                                  operand="padding_value", value=value, limit=f"[{info.min}, {info.max}]",
                                  hint=f"pass padding_value as a Python int in [{info.min}, {info.max}]")
        else:
            top = float(ml_dtypes.finfo(dt.storage).max)
            if not abs(value) <= top:      # an int compared exactly (float(value) overflowed past float64)
                raise self._error(f"padding_value {value!r} is outside the finite range of {name}",
                                  operand="padding_value", value=value, limit=f"[{-top:g}, {top:g}]",
                                  hint=f"pass a finite padding_value in [{-top:g}, {top:g}]")
            if isinstance(value, int) and dt.name in ROUNDERS:
                value = int_to_float(value, dt)    # rounded once (numpy took bfloat16 through float32: twice)
        return value

    @tik_api("block_barrier")
    def block_barrier(self, sync_workspace):
        """Cross-core barrier: every core of the launch reaches it before any continues. Lowered to
        ``pto.sync_all`` (the scheduler holds each core there; it also drains every pipe of the core).
        ``sync_workspace`` (the GM tensor TIK's software barrier counts in) is checked and not touched."""
        self._operand(sync_workspace, "sync_workspace", spaces=("gm",))
        if sync_workspace.dtype not in ("int64", "int32", "uint64", "uint32"):
            raise self._error(f"sync_workspace must be an integer tensor, got {sync_workspace.dtype}",
                              operand="sync_workspace", value=sync_workspace.dtype, limit="int64",
                              hint="declare sync_workspace with an integer dtype, e.g. tik_instance.Tensor(\"int64\", "
                                   "(n,), name=\"sync\", scope=tik.scope_gm, is_workspace=True, is_atomic_add=True)")
        self._sync.settle()
        self._record_sync("sync_all")
        self._sync.clear()

    @tik_api("pipe_barrier")
    def pipe_barrier(self, pipe):
        """An explicit in-core barrier (``PIPE_V``, ``PIPE_MTE2``, ``PIPE_MTE3``, ``PIPE_M``, ``PIPE_MTE1``,
        ``PIPE_ALL``; IndexSDK's distance ops issue ``pipe_barrier("PIPE_MTE3")`` before the flag write): later
        ops of that pipe start after its earlier ops complete. Lowered to ``pto.pipe_barrier``; ``PIPE_ALL`` also
        tells auto-sync that nothing is pending. Auto-sync still pairs the cross-pipe dependences (TIK inserts them
        as well). ``PIPE_FIX`` runs with a `Cann81RuleWarning` (USER_FLAG_CANN81_RULES_WARN)."""
        self._tik_pipe(pipe, "pipe", CANN81_FLAG_PIPES + ("PIPE_ALL",))
        if pipe == "PIPE_S":
            # CANN 8.1 TIK's _check_pipe_supported lets it through to ``cce.coproc_sync``; the device does not take
            # it (pto_core.ops.sync.barrier_pipe, migration_guide/pto_sync.md): say so in TIK's words.
            raise self._error("pipe_barrier(PIPE_S) is illegal on the device: CANN TIK passes it on, but CCE "
                              "documents a barrier on pipe S as an error (every instruction is issued through pipe "
                              "S, which is always in order; Ascend C: it causes a hardware error)", operand="pipe",
                              value=pipe, limit="PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL",
                              hint="drop the call: scalar code already runs in order and TIK's automatic "
                                   "synchronisation orders the other pipes against it; to wait for every pipe use "
                                   "pipe_barrier(\"PIPE_ALL\")")
        try:
            canon = barrier_pipe(pipe)
        except IllegalOperand as e:
            raise self._error(e.message, operand="pipe", value=pipe, limit=e.limit, hint=e.hint) from None
        if pipe in _OTHER_TIK_PIPES:
            self._cann81_rule("pipe_barrier:pipe", f"pipe_barrier({pipe}): CANN 8.1 TIK takes only "
                              f"{', '.join(CANN81_FLAG_PIPES)} or PIPE_ALL (\"Don't support call pipe_barrier api "
                              f"with param: pipe={pipe}\")")
        if canon == "ALL":
            self._sync.barrier_all()
        else:
            self._record_sync("pipe_barrier", canon)

    @tik_api("set_flag")
    def set_flag(self, pipe_src, pipe_dst, event_id):
        """Hand-written flag raise (``set_flag("PIPE_MTE2", "PIPE_V", 1)``, CANN ops written with
        ``new_stmt_scope(disable_sync=True)``): arguments checked, nothing recorded
        (`TIK_USER_FLAGS_NO_EFFECT`; CANN 8.1's extra rules warn: `USER_FLAG_CANN81_RULES_WARN`)."""
        self._user_flag("set_flag", pipe_src, pipe_dst, event_id)

    @tik_api("wait_flag")
    def wait_flag(self, pipe_src, pipe_dst, event_id):
        """Hand-written flag wait: arguments checked, nothing recorded (`TIK_USER_FLAGS_NO_EFFECT`,
        `USER_FLAG_CANN81_RULES_WARN`)."""
        self._user_flag("wait_flag", pipe_src, pipe_dst, event_id)

    def _tik_pipe(self, pipe, operand: str, allowed) -> None:
        """A TIK pipe argument: one of TIK's ``"PIPE_..."`` strings (`CANN81_FLAG_PIPES`, `_OTHER_TIK_PIPES`)."""
        limit = ", ".join(allowed + _OTHER_TIK_PIPES)
        if not isinstance(pipe, str):
            raise self._error(f"{operand} must be a pipe name such as 'PIPE_V', got {pipe!r}", operand=operand,
                              value=repr(pipe), limit=limit, hint="pass a pipe name str: 'PIPE_V', 'PIPE_MTE2', ...")
        if pipe not in allowed + _OTHER_TIK_PIPES:
            try:
                canon = pipe_name(pipe, allow_all=True)
            except PtoError:
                canon = None
            fix = f"write '{'PIPE_' + canon}'" if canon and "PIPE_" + canon in allowed + _OTHER_TIK_PIPES else \
                f"use one of {limit}"
            if pipe == "PIPE_ALL" or canon == "ALL":
                fix = "PIPE_ALL is only a pipe_barrier argument: name the two pipes the flag links"
            raise self._error(f"{operand} {pipe!r} is not a TIK pipe of this call", operand=operand, value=pipe,
                              limit=limit, hint=f"{fix} (TIK spells pipes as the strings of its PIPELINES table)")

    def _cann81_rule(self, rule: str, message: str, *, does: str = "it records nothing: auto-sync orders the kernel",
                     fix: str = "follow the CANN 8.1 rule before moving to CANN 8.x") -> None:
        """Named choice USER_FLAG_CANN81_RULES_WARN: warn once per call site (or raise when it is off). ``does``:
        what the simulator does instead; ``fix``: the warning's Fix."""
        if not USER_FLAG_CANN81_RULES_WARN:
            raise self._error(f"{message}; CANN 8.1 TIK refuses it", operand=rule.split(":")[1],
                              hint="follow the CANN 8.1 rule (see the message)")
        warn_cann81_rule(rule, message, self._where, does, fix)

    def _user_flag(self, api: str, pipe_src, pipe_dst, event_id) -> None:
        for operand, pipe in (("pipe_src", pipe_src), ("pipe_dst", pipe_dst)):
            self._tik_pipe(pipe, operand, CANN81_FLAG_PIPES)
        raw = event_id
        event_id = zero_d_value(event_id)       # np.int32(1) / np.array(1) is event id 1, as in pto.set_flag
        if isinstance(event_id, str):
            raise self._error(f"event id {event_id!r} is a str; TIK takes the int", operand="event_id",
                              value=event_id, limit="an int 0..7",
                              hint="pass the number: 1 for 'EVENT_ID1' (CANN 8.1 TIK requires an int event_id; "
                                   "TIK's codegen indexes its EVENT_IDn table by it)")
        if isinstance(event_id, bool) or not isinstance(event_id, (int, np.integer)):
            raise self._error(f"event id must be an int 0..7, got {type(raw).__name__} {raw!r}", operand="event_id",
                              value=repr(raw), limit="an int 0..7",
                              hint="pass the event number as a Python int (a TIK event id is a compile-time "
                                   "constant, not a Scalar)")
        try:
            _event_id(int(event_id))
        except PtoError as e:
            raise self._error(e.message, operand="event_id", value=event_id, limit=e.limit, hint=e.hint) from None
        if not any(sc.disable_sync for sc in self._scopes):
            self._cann81_rule(f"{api}:scope", f"{api} outside a new_stmt_scope(disable_sync=True) body (CANN 8.1 "
                                              f"TIK: \"Only support call set_flag api in new_stmt_scope with "
                                              f"disable the sync\")")
        if type(raw) is not int:
            self._cann81_rule(f"{api}:event_id", f"{api} event id {raw!r} is not a Python int (CANN 8.1 TIK: "
                                                 f"\"event_id should be int\"); write int(...)")
        for pipe in (pipe_src, pipe_dst):
            if pipe in _OTHER_TIK_PIPES:
                self._cann81_rule(f"{api}:pipe", f"{api} with {pipe}: CANN 8.1 TIK takes only "
                                                 f"{', '.join(CANN81_FLAG_PIPES)}")
        if pipe_src == pipe_dst:
            self._cann81_rule(f"{api}:same_pipe", f"{api}({pipe_src}, {pipe_dst}, ...): CANN 8.1 TIK refuses the "
                                                  f"same pipe on both sides (\"pipe and trigger_pipe cannot be "
                                                  f"the same\")")


__all__ = ["DataAPI", "DATA_MOVE_PATHS", "MovePath", "register_move_path"]
