"""FIXPIPE write-back: ``pto.mte_l0c_l1``, ``pto.mte_l0c_gm``, ``pto.mte_l0c_ub`` (pipe FIX).

The three ops share one implementation (PTO micro-ISA "FIXPIPE MTE Ops",
pto_spec.md §5, seeds 000/001)::

    for r in range(loop3.count or 1):                      # loop3
        acc   = read L0C tile r in NZ order                # N1 x m x 16 accumulator rows
        value = pre_quant -> pre_relu -> clip -> convert   # pto_core.numerics.quant
        write value in the destination layout              # normal NZ / nz2nd / nz2dn / nz2nz
        apply destination effects                          # GM atomics, UB dual destination

Units (one choice each, see ``migration_guide/fixpipe_semantics.md``):

* ``%m``, ``%n``: logical rows and columns written (1..65535, 1..4095).
* ``%src_stride``, ``loop0_src_stride``, ``loop3`` ``%src_stride3``: in L0C rows of
  16 channels (C0 of the accumulator: 64 B for f32/s32). ``%src_stride`` is the
  start-to-start distance of consecutive 16-column fractal columns (N1 blocks) and
  must be a multiple of 16 (the allocated M of the accumulator tile).
* ``%dst_stride``, ``loop3`` ``%dst_stride3``: destination elements. ``nz2nd``: row
  stride; ``nz2dn``: column stride; normal/``nz2nz``: start-to-start distance of
  destination channel blocks.

Source element ``acc[i, j]`` lives at L0C element
``(row0 + (j // 16) * src_stride + i * loop0_src_stride) * 16 + j % 16`` of ``%src``.
The source footprint is one access for the hazard verifier; only the ``m x n`` logical
elements must have been written (uninitialised-read check), and only they are written.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

import pto_core.numerics as _nx  # resolved at call time (fp19, pack_nibbles)

from ..dtypes import DType, dtype as _dtype
from ..errors import IllegalOperand, UnsupportedOp
from ..memory import Ptr, all_written
from ..numerics import quant as Q
from ..numerics.minmax import atomic_maxmin
from .registry import Clause, Operand, OpSpec, register, register_availability

# ----------------------------------------------------------------------------- constants

ROW = 16                      #: channels per L0C row (N0), also the source-stride unit in rows
FLOAT_PAYLOAD_DTYPES = ("f16", "bf16", "f32")
ATOMIC_TYPES = ("f32", "f16", "bf16", "s32", "s16", "s8")
ATOMIC_OPS = ("add", "max", "min")
UB_SPLITS = ("split_m", "split_n")
#: Named choice: accumulator types whose same-type write-back (no pre_quant / activation / clip) still converts under
#: ``sat``: an f16 accumulator (Kirin) written to f16 under ``sat`` clamps +-inf to +-65504 and NaN to 0
#: (``sat(preserve_nan)`` keeps NaN), as every other f16 destination does (pto_spec.md §5.5, numerics.md §3,
#: fixpipe_semantics.md #7). Only f32 destinations pass exceptional values through whatever ``sat`` says (#8);
#: integers are exact. Before (fuzz452), such a write-back copied the accumulator's bytes, so ``sat`` clamped
#: only when a ``pre_relu`` or ``atomic`` clause was present.
SAME_TYPE_SATURATES = ("f16", "bf16")
QUANT_ROW_BYTES = 128         #: FB row consumed per 16 channels by vector pre_quant (8 B per channel)
RELU_ROW_BYTES = 64           #: FB row consumed per 16 channels by vector_relu (f32 alpha)

_M_MAX, _N_MAX, _STRIDE_MAX = 65535, 4095, 65535
_DST_STRIDE_MAX = (1 << 32) - 1

_CLIP_HINT = ("clip can appear only inside pre_relu(...): write "
              "pre_relu=(alpha, {'mode': 'scalar_relu', 'clip': c}) or pre_relu={'mode': 'normal_relu', 'clip': c}")


def _is_ptr(v) -> bool:
    return type(v) is Ptr or isinstance(v, Ptr)


def _is_int(v) -> bool:
    """A Python or numpy integer (not a bool)."""
    return type(v) is int or (isinstance(v, np.integer) and not isinstance(v, np.bool_)) or \
        (isinstance(v, int) and not isinstance(v, bool))


_CONCRETE = (int, float, str, bool, Ptr, tuple, dict, type(None))


def _known(v) -> bool:
    """A concrete value (not an IR value of a program being recorded)."""
    return type(v) in _CONCRETE or isinstance(v, (np.generic, *_CONCRETE))


# ----------------------------------------------------------------------------- clause table


#: The TIK ``fixpipe`` quantize_params modes a migrator may write as a FIXPIPE ``pre_quant`` mode, and the
#: Fix naming the PTO mode (tik_cube.md "fixpipe": fp322fp16 -> f32_f16; int322fp16 -> deqf16_scalar with
#: the float16 value of the scale, or deqf16_vec for a tensor of scales; fixpipe_compare.md item 2).
LEGACY_QUANT_MODE_HINTS = {
    "fp322fp16": "TIK fixpipe's 'fp322fp16' is pre_quant=(0.0, {'mode': 'f32_f16'}) (tik_cube.md, fixpipe)",
    "int322fp16": "TIK fixpipe's 'int322fp16' is pre_quant=(np.float16(scale), {'mode': 'deqf16_scalar'}) for an "
                  "immediate or Scalar scale, or pre_quant=(fb_ptr, {'mode': 'deqf16_vec'}) for a tensor of scales "
                  "(tik_cube.md, fixpipe; fixpipe_compare.md item 2)",
}


def _common_clauses(atomic: bool) -> tuple:
    clauses = [
        Clause("unit_flag", "word", values=("check_only", "check_and_clear"),
               doc="consumer side of the M->FIX unit-flag handshake on the L0C bytes read"),
        Clause("pre_quant", "args", params=("%payload",), min_params=0, keys={"mode": Q.QUANT_MODE_NAMES},
               value_hints=LEGACY_QUANT_MODE_HINTS,
               doc="pre_quant(%payload, mode = <mode>): scale/convert; payload: fb Ptr (_vec) or scalar"),
        Clause("pre_relu", "args", params=("%payload",), min_params=0,
               keys={"mode": Q.RELU_MODES, "clip": ()},
               doc="pre_relu([%payload, ]mode = <relu_mode>[, clip = %clip])"),
        Clause("nz2nd", "optarg", group="layout", doc="row-major destination, dst_stride = row stride"),
        Clause("nz2dn", "args", group="layout", params=("%loop0_src_stride",), min_params=0,
               doc="column-major destination, dst_stride = column stride"),
        Clause("nz2nz", "optarg", group="layout", params=("%split",),
               doc="f32 NZ destination; split=1 writes 8-channel blocks"),
        Clause("loop3", "args", params=("%count", "%src_stride3", "%dst_stride3"),
               doc="repeat the m x n write-back count times"),
        Clause("sat", "sat", group="sat", doc="sat / sat(preserve_nan) / nosat"),
    ]
    if atomic:
        clauses.append(Clause("atomic", "args", params=(), min_params=0,
                              keys={"type": ATOMIC_TYPES, "op": ATOMIC_OPS},
                              doc="atomic(type = <t>, op = add|max|min): GM read-modify-write"))
    return tuple(clauses)


_UB_DST_MODE = Clause("dst_mode", "word_or_arg", values=UB_SPLITS, params=("%sub_blockid",),
                      doc="dst_mode(%sub_blockid | split_m | split_n): which vector core's UB")

# ----------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class _Plan:
    """Everything one write-back needs, validated."""

    kind: str                 # "l1" | "gm" | "ub"
    acc: DType
    dst: DType
    m: int
    n: int
    src_stride: int
    dst_stride: int
    layout: str               # "normal" | "nz2nd" | "nz2dn" | "nz2nz"
    loop0: int                # loop0_src_stride in L0C rows (1 unless nz2dn)
    c0d: int                  # channels per destination block (normal / nz2nz)
    loop3: tuple              # (count, src_stride3, dst_stride3)
    mode: Optional[Q.QuantMode]
    payload: Any
    relu: str
    relu_payload: Any
    clip: Any
    sat: str
    atomic: Optional[tuple]   # (type, op)
    dst_mode: Any             # int sub-block, "split_m", "split_n" (ub) or None
    unit_flag: Optional[str]

    @property
    def n1(self) -> int:
        return -(-self.n // ROW)


def _err(message, operand=None, value=None, limit=None, hint=None):
    return IllegalOperand(message, operand=operand, value=value, limit=limit, hint=hint)


def _float_scalar_dtype(v) -> Optional[str]:
    """dtype name of a float scalar payload: numpy scalars by their type, Python floats are f32."""
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, np.generic):
        name = {np.dtype(np.float16): "f16", np.dtype(np.float32): "f32",
                np.dtype(_dtype("bf16").storage): "bf16", np.dtype(np.float64): "f32"}.get(v.dtype)
        return name
    if isinstance(v, float):
        return "f32"
    return None


def _check_float_scalar(v, operand: str, what: str, static: bool):
    if static and not _known(v):
        return
    if _float_scalar_dtype(v) is None:
        raise _err(f"{what} requires an f16, bf16 or f32 scalar payload, got {v!r} ({type(v).__name__})",
                   operand, v, "f16 | bf16 | f32 scalar",
                   "pass a Python float (an f32 constant) or np.float16/np.float32/ml_dtypes.bfloat16 value")


#: what a wrong ``pre_quant`` mode's Fix names for the plain conversions legacy ``fixpipe`` writes
#: (user440: an f32 -> f16 write-back given ``deqf16_scalar`` was told "qf322* for f32", which hid ``f32_f16``,
#: the bit-exact replacement of legacy ``fp322fp16``)
LEGACY_QUANT_NAMES = {"f32_f16": "legacy fixpipe fp322fp16", "deqf16_scalar": "legacy int322fp16 with one scale",
                      "deqf16_vec": "legacy int322fp16 with per-channel scales"}


def _modes_hint(target, acc: str, dst: str, given) -> str:
    """The ``pre_quant`` modes of ``target`` that take ``acc`` accumulators and write ``dst`` (those with the
    given mode's payload kind first), naming the legacy ``fixpipe`` mode each replaces; all of ``acc``'s modes
    when none writes ``dst``."""
    here = [q for q in Q.QUANT_MODES.values() if target.arch in q.archs and acc in q.acc]
    fit = [q for q in here if dst in (q.dst or (acc,))]
    if not fit:
        return (f"{acc} -> {dst} has no pre_quant mode on {target.label}; {acc} accumulators take "
                + ", ".join(q.name for q in here) + " (pto_fixpipe.md pre_quant table)")
    fit.sort(key=lambda q: (q.is_vector != given.is_vector, q.name not in LEGACY_QUANT_NAMES))
    names = [q.name + (f" ({LEGACY_QUANT_NAMES[q.name]})" if q.name in LEGACY_QUANT_NAMES else "") for q in fit]
    return f"{acc} -> {dst} is " + ", ".join(names)


def _check_fb_ptr(v, operand: str, what: str, static: bool, dtypes=FLOAT_PAYLOAD_DTYPES):
    if static and not _known(v):
        return
    if not _is_ptr(v) or v.space != "fb" or (dtypes and v.dtype.name not in dtypes):
        got = v.type_str if _is_ptr(v) else f"{v!r} ({type(v).__name__})"
        need = "!pto.ptr<f16|bf16|f32, fb>" if dtypes else "a fb pointer"
        raise _err(f"{what} requires a fb pointer with f16, bf16 or f32 elements, got {got}", operand, v, need,
                   "load the per-channel parameters with pto.mte_l1_fb and pass m.ptr('fb', 'f32', addr)")


def _resolve_sat(value, machine_mode: Optional[str]) -> str:
    if value is True:
        return "sat"
    if value is False:
        return "nosat"
    if value == "preserve_nan":
        return "preserve_nan"
    if machine_mode is None:
        return "nosat"
    return "sat" if machine_mode == "saturation" else "nosat"


def _dst_c0(dst: DType, split: bool) -> int:
    """Channels per destination block of the normal / nz2nz layouts."""
    if dst.bits == 32:
        return 8 if split else 16
    return 32 * 8 // dst.bits


#: The plan `verify` just built, reused by the execute that follows it in eager dispatch
#: (same operand and clause objects); values are compared by identity, so nothing stale is reused.
_LAST_VERIFIED: list = [None]


def _plan(kind: str, operands: tuple, clauses: dict, target, machine_mode=None, *, static: bool = False):
    """`_check_plan`; the execute right after an eager verify of the same call reuses its plan."""
    if static:
        plan = _check_plan(kind, operands, clauses, target, None, static=True)
        _LAST_VERIFIED[0] = (kind, target, operands, tuple(clauses.items()), plan) if plan is not None else None
        return plan
    last = _LAST_VERIFIED[0]
    _LAST_VERIFIED[0] = None
    if last is not None and last[0] == kind and last[1] is target and len(last[2]) == len(operands) \
            and all(a is b for a, b in zip(last[2], operands)) and len(last[3]) == len(clauses) \
            and all(k == k2 and v is v2 for (k, v), (k2, v2) in zip(last[3], clauses.items())):
        plan = last[4]
        if clauses.get("sat") is None and machine_mode is not None:
            sat = _resolve_sat(None, machine_mode)
            if sat != plan.sat:
                plan = replace(plan, sat=sat)
        return plan
    return _check_plan(kind, operands, clauses, target, machine_mode)


def _check_plan(kind: str, operands: tuple, clauses: dict, target, machine_mode=None, *,
                static: bool = False) -> Optional[_Plan]:
    """Validate operands and clauses; return the plan.

    ``static=True`` (``verify``) skips checks whose values are not known yet (IR values
    of a program being recorded); execute runs every check.
    """
    src, dst, m, n, src_stride, dst_stride = operands[:6]
    extra = operands[6:]
    # ---- pointers and dtypes
    if static and not (_is_ptr(src) and _is_ptr(dst)):
        acc = dst_t = None
    else:
        if not _is_ptr(src) or src.space != "l0c":
            raise _err(f"%src must be an l0c pointer, got {getattr(src, 'type_str', src)!r}", "%src", src,
                       "!pto.ptr<f32|i32, l0c>", "pass the L0C accumulator the mad wrote (an f32/i32 l0c pointer)")
        want = {"l1": "l1", "gm": "gm", "ub": "ub"}[kind]
        if not _is_ptr(dst) or dst.space != want:
            raise _err(f"%dst must be a {want} pointer, got {getattr(dst, 'type_str', dst)!r}", "%dst", dst,
                       f"!pto.ptr<T, {want}>", f"pass a {want} pointer as %dst (pto.mte_l0c_{kind} writes {want})")
        acc, dst_t = src.dtype, dst.dtype
        if acc.name not in target.acc_dtypes:
            raise _err(f"accumulator element type {acc.name} is not an L0C type of {target.label}", "%src",
                       acc.name, ", ".join(target.acc_dtypes),
                       f"type the L0C source pointer as one of {', '.join(target.acc_dtypes)} (the MAD's "
                       f"accumulator type)")
    if kind == "ub" and not target.fixpipe_to_ub:
        raise UnsupportedOp(f"pto.mte_l0c_ub (FIXPIPE L0C -> UB) does not exist on {target.label}",
                            limit="targets with fixpipe_to_ub (A5)",
                            hint="write to GM or L1 with pto.mte_l0c_gm / pto.mte_l0c_l1, or pick target A5")

    # ---- unit_flag
    unit_flag = clauses.get("unit_flag")

    # ---- pre_quant
    mode = payload = None
    if "pre_quant" in clauses:
        args, kw = clauses["pre_quant"]
        if len(args) != 1 or "mode" not in kw:
            raise _err("pre_quant requires payload and mode together", "pre_quant",
                       hint="write pre_quant=(payload, {'mode': 'qf322f16_pre_scalar'})")
        payload = args[0]
        mode = Q.QUANT_MODES[kw["mode"]]
        if target.arch not in mode.archs:
            here = sorted(q.name for q in Q.QUANT_MODES.values() if target.arch in q.archs and q.acc == mode.acc
                          and q.is_vector == mode.is_vector and set(q.dst or q.acc) & set(mode.dst or mode.acc))
            raise UnsupportedOp(f"pre_quant mode {mode.name} does not exist on {target.label}", operand="pre_quant",
                                value=mode.name, limit="architectures " + ", ".join(mode.archs),
                                hint=f"use a mode {target.name} has (pto_fixpipe.md pre_quant table"
                                     + (f"; same source and destination types: {', '.join(here)}" if here else "")
                                     + f") or run on a target of architecture {', '.join(mode.archs)}")
        if acc is not None:
            if acc.name not in ("f32", "s32"):
                raise _err(f"pre_quant source element type must be f32 or i32, got {acc.name}", "pre_quant",
                           acc.name, "f32 | i32", "type the L0C source pointer f32 or i32, or drop pre_quant")
            if acc.name not in mode.acc:
                raise _err(f"pre_quant mode {mode.name} takes {'/'.join(mode.acc)} accumulators, got {acc.name}",
                           "pre_quant", mode.name, "/".join(mode.acc),
                           "pick a mode of your accumulator type: " + _modes_hint(target, acc.name, dst_t.name, mode))
            legal = mode.dst or (acc.name,)
            if dst_t.name not in legal:
                raise _err(f"pre_quant mode {mode.name} writes {'/'.join(legal)}, not {dst_t.name}", "pre_quant",
                           dst_t.name, "/".join(legal), "make %dst's element type match the mode's destination, or "
                           "pick a mode that writes it: " + _modes_hint(target, acc.name, dst_t.name, mode))
        if mode.payload == "vec":
            _check_fb_ptr(payload, "pre_quant", f"vector pre_quant mode {mode.name}", static)
        elif mode.payload in ("scalar", "ignored"):
            _check_float_scalar(payload, "pre_quant", f"scalar pre_quant mode {mode.name}", static)
        elif mode.payload == "shift_vec":
            _check_fb_ptr(payload, "pre_quant", f"pre_quant mode {mode.name}", static, dtypes=())
        elif not (static and not _known(payload)):
            if not _is_int(payload) or not 1 <= int(payload) <= 16:
                raise _err(f"pre_quant mode {mode.name} takes an integer shift 1..16, got {payload!r}", "pre_quant",
                           payload, "[1, 16]", f"give the shift as pre_quant's payload, an int in 1..16: "
                           f"pre_quant(n, mode = {mode.name})")
    elif acc is not None and dst_t != acc:
        cast = {"f16": "f32_f16", "bf16": "f32_bf16"}.get(dst_t.name, "a scaling mode")
        raise _err(f"writing {acc.name} accumulators to a {dst_t.name} destination needs pre_quant", "%dst",
                   dst_t.name, f"{acc.name} without pre_quant",
                   f"add pre_quant=(0.0, {{'mode': '{cast}'}})" if cast != "a scaling mode"
                   else "add pre_quant with a mode of pto_spec.md §5.3")

    # ---- pre_relu / clip
    relu, relu_payload, clip = "no_relu", None, None
    if "pre_relu" in clauses:
        args, kw = clauses["pre_relu"]
        if "mode" not in kw:
            raise _err("pre_relu requires mode = no_relu | normal_relu | scalar_relu | vector_relu", "pre_relu",
                       hint="write pre_relu={'mode': 'normal_relu'} or pre_relu=(alpha, {'mode': 'scalar_relu'})")
        relu = kw["mode"]
        if relu in ("no_relu", "normal_relu"):
            if args:
                raise _err(f"{relu} does not accept a payload", "pre_relu", args[0],
                           hint=f"write pre_relu={{'mode': '{relu}'}}")
        else:
            if len(args) != 1:
                raise _err(f"{relu} requires a payload", "pre_relu",
                           hint="scalar_relu takes an f16/bf16/f32 alpha; vector_relu a fb pointer")
            relu_payload = args[0]
            if relu == "scalar_relu":
                _check_float_scalar(relu_payload, "pre_relu", "scalar_relu", static)
            else:
                _check_fb_ptr(relu_payload, "pre_relu", "vector_relu", static)
        if "clip" in kw:
            clip = kw["clip"]
            if dst_t is not None:
                _check_clip(clip, dst_t, static)

    # ---- layout
    layout, loop0, split = "normal", 1, False
    if "nz2nd" in clauses:
        layout = "nz2nd"
        if clauses["nz2nd"] is not True:
            raise _err("nz2nd does not accept %loop0_src_stride", "nz2nd", clauses["nz2nd"],
                       hint="write nz2nd=True; use nz2dn=(loop0_src_stride,) for a column-major destination")
    elif "nz2dn" in clauses:
        layout = "nz2dn"
        args, _ = clauses["nz2dn"]
        if len(args) != 1 or args[0] is True or args[0] is False:
            raise _err("nz2dn requires %loop0_src_stride", "nz2dn", args,
                       hint="write nz2dn=1 (the standard source walk) or nz2dn=(loop0_src_stride,)")
        loop0 = args[0]
        if not (static and not _known(loop0)):
            if not _is_int(loop0) or not 1 <= int(loop0) <= _STRIDE_MAX:
                raise _err(f"nz2dn %loop0_src_stride must be an integer in [1, {_STRIDE_MAX}] (L0C rows), "
                           f"got {loop0!r}", "nz2dn", loop0, f"[1, {_STRIDE_MAX}]",
                           f"pass %loop0_src_stride as an int in 1..{_STRIDE_MAX} (1: the rows are adjacent)")
            loop0 = int(loop0)
            if unit_flag is not None and loop0 != 1:
                raise _err(f"unit_flag must be omitted when nz2dn(%loop0_src_stride) is not 1 (got {loop0})",
                           "unit_flag", loop0, "nz2dn(1) with unit_flag",
                           hint="drop unit_flag and synchronise with set_flag/wait_flag(M -> FIX)")
    elif "nz2nz" in clauses:
        layout = "nz2nz"
        v = clauses["nz2nz"]
        if v is not True:
            if not (static and not _known(v)):
                if not (_is_int(v) or isinstance(v, (bool, np.bool_))) or int(v) not in (0, 1):
                    raise _err(f"nz2nz %split must be 0 or 1, got {v!r}", "nz2nz", v, "0 | 1",
                               "pass %split as 0 (no split) or 1 (split each f32 fractal in two)")
                split = bool(int(v))
        if dst_t is not None and dst_t.name != "f32":
            raise _err(f"nz2nz requires an f32 destination, got {dst_t.name}", "nz2nz", dst_t.name, "f32",
                       "omit the layout clause for the normal NZ write-back of other types")
        if "loop3" in clauses:
            raise _err("nz2nz does not accept loop3", "loop3", hint="loop3 repeats nz2nd or nz2dn write-backs")

    # ---- loop3
    loop3 = (1, 0, 0)
    if "loop3" in clauses:
        args, _ = clauses["loop3"]
        if layout not in ("nz2nd", "nz2dn"):
            raise _err("loop3 repeats nz2nd or nz2dn write-backs only", "loop3", layout,
                       "nz2nd | nz2dn", "add nz2nd=True or nz2dn=1, or issue one op per tile")
        if all(_known(a) for a in args) or not static:
            count, s3, d3 = args
            for name, val, lo, hi in (("%count", count, 1, 65535), ("%src_stride3", s3, 0, _STRIDE_MAX),
                                      ("%dst_stride3", d3, 0, _DST_STRIDE_MAX)):
                if not _is_int(val) or not lo <= int(val) <= hi:
                    raise _err(f"loop3 {name} must be an integer in [{lo}, {hi}], got {val!r}", "loop3", val,
                               f"[{lo}, {hi}]", f"pass loop3 {name} as an int in [{lo}, {hi}]")
            loop3 = (int(count), int(s3), int(d3))
        else:
            loop3 = tuple(args)

    # ---- UB destination mode
    dst_mode = None
    if kind == "ub":
        dst_mode = clauses.get("dst_mode")
        if dst_mode is None:
            raise _err("pto.mte_l0c_ub requires dst_mode(%sub_blockid | split_m | split_n)", "dst_mode",
                       hint="write dst_mode=0 (AIV0's UB), dst_mode=1, dst_mode='split_m' or dst_mode='split_n'")
        if dst_mode in UB_SPLITS:
            bad = [c for c in ("pre_quant", "pre_relu", "nz2dn", "nz2nz", "loop3") if c in clauses]
            if bad:
                raise _err(f"dual-destination {dst_mode} allows only the normal or nz2nd layout without pre_quant, "
                           f"pre_relu/clip or loop3; got {', '.join(bad)}", "dst_mode", dst_mode,
                           "normal | nz2nd, no pre_quant/pre_relu/loop3",
                           "write each half with dst_mode=0 / dst_mode=1 to combine splitting with quantisation")
        elif not (static and not _known(dst_mode)):
            if not _is_int(dst_mode) or not 0 <= int(dst_mode) < max(1, target.vector_subcores):
                raise _err(f"dst_mode %sub_blockid must be 0 or 1, got {dst_mode!r}", "dst_mode", dst_mode,
                           f"[0, {max(1, target.vector_subcores) - 1}]",
                           f"pass dst_mode %sub_blockid as an int in [0, {max(1, target.vector_subcores) - 1}] (the "
                           f"vector sub-core whose UB receives the result)")
            dst_mode = int(dst_mode)

    # ---- atomic
    atomic = None
    if "atomic" in clauses:
        args, kw = clauses["atomic"]
        if "type" not in kw or "op" not in kw:
            raise _err("atomic requires both type and op", "atomic", kw,
                       hint="write atomic={'type': 'f32', 'op': 'add'}")
        atomic = (kw["type"], kw["op"])
        if dst_t is not None and atomic[0] != dst_t.name:
            raise _err(f"atomic type {atomic[0]} must match the destination element type {dst_t.name}", "atomic",
                       atomic[0], dst_t.name,
                       hint=f"write atomic={{'type': '{dst_t.name}', 'op': '{atomic[1]}'}} (the type of %dst)")

    sat = _resolve_sat(clauses.get("sat"), machine_mode)

    if static and (acc is None or not all(_known(v) for v in (m, n, src_stride, dst_stride, loop0, dst_mode,
                                                               *loop3, *extra))):
        return None
    c0d = _dst_c0(dst_t, split) if layout in ("normal", "nz2nz") else 1
    plan = _Plan(kind, acc, dst_t, m, n, src_stride, dst_stride, layout, loop0, c0d, loop3, mode, payload, relu,
                 relu_payload, clip, sat, atomic, dst_mode, unit_flag)
    _check_values(plan, extra)
    return plan


def _check_clip(clip, dst: DType, static: bool):
    if dst.name not in Q.CLIP_DESTINATIONS:
        raise _err(f"clip is supported for f16, ui8 and signed 4/8/16-bit destinations, not {dst.name}",
                   "pre_relu(clip)", dst.name, "f16 | u8 | s4 | s8 | s16",
                   hint=f"drop clip ({dst.name} destinations take none), or convert to one of f16, u8, s4, s8, s16")
    if static and not _known(clip):
        return
    if dst.name == "f16":
        ok = (isinstance(clip, (float, int, np.floating, np.integer)) and not isinstance(clip, (bool, np.bool_))
              and (not isinstance(clip, np.generic) or clip.dtype == np.float16))
        need = "an f16 value (Python float or np.float16)"
    else:
        lo, hi = (0, 65535) if dst.name == "u8" else (dst.min, dst.max)
        width = {"u8": np.uint16, "s4": np.int8, "s8": np.int8, "s16": np.int16}[dst.name]
        ok = (_is_int(clip) and lo <= int(clip) <= hi
              and (not isinstance(clip, np.generic) or np.dtype(clip.dtype).itemsize <= np.dtype(width).itemsize))
        need = (f"an integer in [{lo}, {hi}] ("
                + ("16-bit unsigned" if dst.name == "u8" else f"i{dst.bits}") + " payload)")
    if not ok:
        raise _err(f"clip payload for a {dst.name} destination must be {need}, got {clip!r}", "pre_relu(clip)",
                   clip, need,
                   hint=(f"pass clip as {need}" if dst.name == "f16" else f"pass clip as a Python int in [{lo}, {hi}]"))


def _check_values(p: _Plan, extra: tuple) -> None:
    """Checks of the integer operands (known at run time)."""
    def need_int(name, v, lo, hi, hint=None):
        if not _is_int(v) or not lo <= int(v) <= hi:
            raise _err(f"{name} must be an integer in [{lo}, {hi}], got {v!r}", name, v, f"[{lo}, {hi}]", hint)

    need_int("%m", p.m, 1, _M_MAX)
    need_int("%n", p.n, 1, _N_MAX)
    need_int("%src_stride", p.src_stride, 0, _STRIDE_MAX)
    need_int("%dst_stride", p.dst_stride, 1, _DST_STRIDE_MAX)
    if p.kind == "gm":
        need_int("%sid", extra[0], 0, 3, "use 0 unless the memory system assigns stream hints")
        need_int("%l2_cache_ctrl", extra[1], 0, 15)
    m, n = int(p.m), int(p.n)
    if p.src_stride % ROW:
        raise _err(f"%src_stride must be a multiple of 16 L0C rows, got {p.src_stride}", "%src_stride",
                   p.src_stride, "multiple of 16",
                   "pass the allocated M of the accumulator tile (rows rounded up to 16)")
    span = (m - 1) * p.loop0 + 1
    if p.n1 > 1 and p.src_stride < span:
        raise _err(f"%src_stride {p.src_stride} is smaller than the {span} L0C rows one fractal column spans "
                   f"(m = {m})", "%src_stride", p.src_stride, f">= {span}",
                   "src_stride is counted in L0C rows of 16 channels: pass the tile's allocated M (>= m); if m is "
                   "the wrong one: it counts the tile's rows (legacy fixpipe's howo = burst_len*32/(16*sizeof(src))), "
                   "not burst_len")
    if p.dst_mode == "split_m" and m % 2:
        raise _err(f"dst_mode(split_m) needs an even %m, got {m}", "%m", m, "even",
                   "pad M to an even number of rows or use dst_mode=0 / dst_mode=1")
    if p.dst_mode == "split_n" and n % 32:
        raise _err(f"dst_mode(split_n) needs %n to be a multiple of 32, got {n}", "%n", n, "multiple of 32",
                   "pad N or use dst_mode=0 / dst_mode=1")
    rows, cols = _written_shape(p)
    runs, run_len = _run_shape(p, rows, cols)
    if runs > 1 and p.dst_stride < run_len:
        what = {"nz2nd": "row", "nz2dn": "column"}.get(p.layout, "channel block")
        raise _err(f"%dst_stride {p.dst_stride} is smaller than one destination {what} ({run_len} elements)",
                   "%dst_stride", p.dst_stride, f">= {run_len}",
                   f"%dst_stride is in destination elements: pass at least {run_len}")
    if p.dst.name == "s4":
        odd = []
        if runs > 1 and p.dst_stride % 2:
            odd.append("%dst_stride")
        if (rows if p.layout == "nz2dn" else cols) % 2:
            odd.append("%m" if p.layout == "nz2dn" else "%n")
        if p.loop3[2] % 2:
            odd.append("loop3 %dst_stride3")
        if odd:
            raise _err(f"s4 destinations are written in whole bytes: {', '.join(odd)} must be even", "%dst", "s4",
                       "even element offsets and lengths", "pad the tile (and the strides) to even element counts")


def _written_shape(p: _Plan) -> tuple:
    """``(rows, cols)`` of each written tile (split modes write halves)."""
    m, n = int(p.m), int(p.n)
    if p.dst_mode == "split_m":
        return m // 2, n
    if p.dst_mode == "split_n":
        return m, n // 2
    return m, n


def _run_shape(p: _Plan, rows: int, cols: int) -> tuple:
    """``(number of strided runs, elements per run)`` of the destination layout."""
    if p.layout == "nz2nd":
        return rows, cols
    if p.layout == "nz2dn":
        return cols, rows
    return -(-cols // p.c0d), rows * p.c0d


# ----------------------------------------------------------------------------- payloads


def _column_param(values: np.ndarray, n1: int, pad, order: str) -> np.ndarray:
    """Per-column values padded to ``n1 * 16`` and shaped to broadcast over the accumulator rows:
    ``(n1, 1, 16)`` against NZ ``(n1, m, 16)``, ``(n1, 16)`` against logical ``(m, n1, 16)``."""
    out = np.full(n1 * ROW, pad, dtype=values.dtype)
    out[: values.shape[0]] = values
    return out.reshape(n1, 1, ROW) if order == "nz" else out.reshape(n1, ROW)


def _scalar_f32(v) -> np.float32:
    """The payload's value as f32 (f16/bf16 exactly; a Python float rounds to nearest even)."""
    return np.float32(np.asarray(v).astype(np.float32))


def _fp19(values) -> np.ndarray:
    return np.asarray(_nx.fp19(np.asarray(values, dtype=np.float32)), dtype=np.float32)


_SCALAR_FP19: dict = {}


def _scalar_fp19(v) -> float:
    """FP19 value of a scalar payload (memoised per payload type and value)."""
    key = (type(v), v)
    try:
        return _SCALAR_FP19[key]
    except (KeyError, TypeError):
        pass
    out = float(_fp19(_scalar_f32(v)))
    if len(_SCALAR_FP19) < 1024 and out == out:
        _SCALAR_FP19[key] = out
    return out


#: The Fix of a refused ``pre_quant`` scale that is negative or zero, by sign: the migration advice of
#: migration_guide/fixpipe_compare.md differences item 3 and ``tik-compare-fixpipe --new-fixpipe``
#: (`tbe_compat.fixpipe_new.NEW_DIFF_REASONS`): legacy TIK ``fixpipe`` int322fp16 / ``deq`` accept negative and
#: zero float16 scales (the seed's conv example has negative per-channel scales), FIXPIPE does not (pto-spec
#: ADR-0085 decision 180), so a kernel moving to FIXPIPE changes the weights or keeps a vector dequantisation.
NON_POSITIVE_SCALE_FIX = {
    "negative": "FIXPIPE scales are positive: fold the sign into the weights (negate the channel's weights "
                "and write |scale|), or keep a vector deq after an unscaled write-back (the TIK "
                "fixpipe's vector lowering does this; fixpipe_compare.md differences item 3)",
    "zero": "FIXPIPE has no zero scale: write the channel's zeros another way (a vector op after the "
            "write-back, or keep a vector deq; fixpipe_compare.md differences item 3)",
}
_SCALE_FIX = "write positive normal FP19 values (the low 13 mantissa bits of an f32 are ignored)"


def _scale_fix(value: float, default: str = _SCALE_FIX) -> str:
    """The Fix for a refused scale ``value`` (`NON_POSITIVE_SCALE_FIX` for a negative or zero one)."""
    if value < 0:
        return NON_POSITIVE_SCALE_FIX["negative"]
    if value == 0:
        return NON_POSITIVE_SCALE_FIX["zero"]
    return default


def _bad_channel(mask: np.ndarray, values: np.ndarray, what: str, operand: str, rule: str, scale: bool = False):
    j = int(np.argmax(mask))
    v = float(values[j])
    return _err(f"{what} of channel {j} is {v!r}; it must be {rule}", operand, v,
                rule, _scale_fix(v) if scale else _SCALE_FIX)


def _load_args(ctx, p: _Plan, order: str) -> Q.QuantArgs:
    """Read the scalar / FB payloads and build the numerics arguments (column arrays shaped for NZ)."""
    n, n1 = int(p.n), p.n1
    kw: dict = {"dst": p.dst, "sat": p.sat, "relu": p.relu, "clip": p.clip}
    mode = p.mode
    if mode is not None:
        if mode.payload == "scalar":
            scale = _scalar_fp19(p.payload)
            if not (scale >= 2.0 ** -126 and scale != float("inf")):
                raise _err(f"pre_quant scale {scale!r} must be a positive normal FP19 number", "pre_quant",
                           scale, "positive normal FP19", _scale_fix(scale, "use a finite positive scale >= 2**-126"))
            kw["scale"] = scale
            kw["signed"] = p.dst.name != "u8"
        elif mode.payload == "vec":
            ctx.check_aligned(p.payload, QUANT_ROW_BYTES, "pre_quant")
            words = ctx.read(p.payload, 8 * n, operand="pre_quant").view(np.uint64)
            scale = Q.word_scale(words, p.payload.dtype)
            bad = Q.invalid_scale(scale)
            if bad.any():
                raise _bad_channel(bad, scale, "pre_quant vector scale", "pre_quant", "a positive normal FP19 number",
                                   scale=True)
            kw["scale"] = _column_param(scale.astype(np.float64), n1, 1.0, order)
            if mode.offset_bits:
                kw["offset"] = _column_param(Q.word_offset(words, mode.offset_bits), n1, 0, order)
            kw["signed"] = _column_param(Q.word_signed(words), n1, True, order) if mode.sign_from_payload \
                else p.dst.name != "u8"
        elif mode.payload == "shift_scalar":
            kw["shift"] = int(p.payload)
        elif mode.payload == "shift_vec":
            ctx.check_aligned(p.payload, QUANT_ROW_BYTES, "pre_quant")
            words = ctx.read(p.payload, 8 * n, operand="pre_quant").view(np.uint64)
            kw["shift"] = _column_param(Q.word_shift(words), n1, 1, order)
    if p.relu == "scalar_relu":
        alpha = _scalar_fp19(p.relu_payload)
        if Q.invalid_alpha(np.float32(alpha)):
            raise _err(f"scalar_relu alpha {alpha!r} must be +0 or a positive normal FP19 number", "pre_relu",
                       alpha, "+0 or positive normal FP19",
                       hint="pass a scalar_relu alpha that is +0.0 or a positive normal number (>= 2**-126)")
        kw["alpha"] = alpha
    elif p.relu == "vector_relu":
        ctx.check_aligned(p.relu_payload, RELU_ROW_BYTES, "pre_relu")
        raw = ctx.view(p.relu_payload, n, operand="pre_relu")
        alpha = _fp19(raw.astype(np.float32))
        bad = Q.invalid_alpha(alpha)
        if bad.any():
            raise _bad_channel(bad, alpha, "vector_relu alpha", "pre_relu", "+0 or a positive normal FP19 number")
        kw["alpha"] = _column_param(alpha.astype(np.float64), n1, 0.0, order)
    return Q.QuantArgs(**kw)


# ----------------------------------------------------------------------------- source


def _gather(ctx, src: Ptr, p: _Plan, row0: int) -> np.ndarray:
    """The accumulator tile in NZ order: a strided ``(n1, m, 16)`` view of L0C.

    One access covers the source footprint (reported to the hazard verifier); only
    the ``m x n`` logical elements must have been written (uninitialised-read check).
    """
    m, n1, ss, ls = int(p.m), p.n1, int(p.src_stride), p.loop0
    es = p.acc.itemsize
    base = src + row0 * ROW if row0 else src
    rows = (n1 - 1) * ss + (m - 1) * ls + 1
    nbytes = rows * ROW * es
    if p.unit_flag is not None:   # the handshake covers whole 16-row fractals of the tile read
        tile_rows = (n1 - 1) * ss + -(-((m - 1) * ls + 1) // ROW) * ROW
        ctx.unit_flag_consume(base, tile_rows * ROW * es, clear=p.unit_flag == "check_and_clear")
    data, written, _ = ctx.span_tracked(base, 0, nbytes, operand="%src")
    row_b = ROW * es
    acc = np.ndarray((n1, m, ROW), p.acc.storage, data, 0, (ss * row_b, ls * row_b, es))
    if ctx.machine.options.uninitialized != "off" and not all_written(written):
        flags = as_strided(written, (n1, m, row_b), (ss * row_b, ls * row_b, 1), writeable=False)
        last = (int(p.n) - (n1 - 1) * ROW) * es
        ctx.check_written(np.concatenate([flags[:n1 - 1].reshape(-1), flags[n1 - 1, :, :last].reshape(-1)]),
                          operand="%src", ptr=base)
    return acc


# ----------------------------------------------------------------------------- destination


def _groups(p: _Plan, res: np.ndarray, order: str, rows: int, cols: int, col0: int = 0, row0: int = 0):
    """Destination runs as ``(first element, run stride, array)``; ``array[k]`` is run ``k``.

    ``res`` is the converted tile, ``(n1, m, 16)`` in NZ ``order`` or ``(m, n1, 16)`` in
    ``"logical"`` order; the written part is rows ``[row0, row0 + rows)`` and columns
    ``[col0, col0 + cols)`` (split halves write two parts).
    """
    nz = order == "nz"
    m, n1 = (res.shape[1], res.shape[0]) if nz else (res.shape[0], res.shape[1])
    whole = row0 == 0 and col0 == 0 and rows == m

    def logical():
        lg = res.transpose(1, 0, 2).reshape(m, n1 * ROW) if nz else res.reshape(m, n1 * ROW)
        return lg[row0:row0 + rows, col0:col0 + cols]

    if p.layout == "nz2nd":
        if nz and whole and cols == n1 * ROW:
            return [(0, p.dst_stride, res.transpose(1, 0, 2))]
        return [(0, p.dst_stride, logical())]
    if p.layout == "nz2dn":
        return [(0, p.dst_stride, logical().T)]
    c0d = p.c0d
    full, rem = divmod(cols, c0d)
    if nz and c0d == ROW and whole:
        groups = [(0, p.dst_stride, res[:full])] if full else []
        if rem:
            groups.append((full * p.dst_stride, c0d, res[full, :, :rem]))
        return groups
    lg = logical()
    groups = []
    if full:
        groups.append((0, p.dst_stride, lg[:, :full * c0d].reshape(rows, full, c0d).transpose(1, 0, 2)))
    if rem:
        groups.append((full * p.dst_stride, c0d, lg[:, full * c0d:]))
    return groups


def _atomic_merge(old: np.ndarray, new: np.ndarray, dst: DType, op: str, sat: str) -> np.ndarray:
    """GM read-modify-write in the atomic type (= destination type)."""
    if dst.is_float:
        a, b = old.astype(np.float64), new.astype(np.float64)
        with np.errstate(all="ignore"):
            r = a + b if op == "add" else atomic_maxmin(a, b, op)      # signed zeros: ATOMIC_MAXMIN_SIGNED_ZERO
        return Q.encode_float(r, dst, sat)
    a, b = old.astype(np.int64), new.astype(np.int64)
    if op == "add":
        bits = dst.bits
        r = ((a + b + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))
    else:
        r = atomic_maxmin(a, b, op)
    return r.astype(dst.storage)


def _store(ctx, ptr: Ptr, values: np.ndarray, p: _Plan) -> None:
    """Write ``values`` (run order, any strides) at ``ptr`` through the context (atomics read first)."""
    count = values.size
    if p.dst.name == "s4":
        flat = np.ascontiguousarray(values).reshape(-1)
        ctx.write(ptr, p.dst.nbytes(count), operand="dst")[:] = _nx.pack_nibbles(flat.astype(np.uint8) & 0xF)
        return
    if p.atomic is not None:
        ctx.gm_atomic = tuple(p.atomic)     # (type, op); both accesses are the atomic's (GM race checker)
        try:
            old = ctx.view(ptr, count, operand="dst").reshape(values.shape)
            values = _atomic_merge(old, values, p.dst, p.atomic[1], p.sat)
            ctx.view(ptr, count, write=True, operand="dst").reshape(values.shape)[...] = values
        finally:
            ctx.gm_atomic = None
        return
    ctx.view(ptr, count, write=True, operand="dst").reshape(values.shape)[...] = values


def _write_groups(ctx, dst: Ptr, groups, p: _Plan) -> None:
    for first, stride, arr in groups:
        runs = arr.shape[0]
        run_len = int(np.prod(arr.shape[1:]))
        start = dst + first if first else dst
        if runs == 1 or stride == run_len:
            _store(ctx, start, arr, p)
            continue
        if p.atomic is None and p.dst.bits >= 8:      # plain stores: one strided write of all runs
            es = p.dst.bits >> 3
            view = ctx.write_runs(start, runs, run_len * es, stride * es, operand="dst")
            if view is not None:
                view.view(p.dst.storage)[...] = arr.reshape(runs, run_len)
                continue
        for k in range(runs):
            _store(ctx, dst + (first + k * stride), arr[k], p)


def _scatter(ctx, dst: Ptr, p: _Plan, res: np.ndarray, order: str) -> None:
    m, n = int(p.m), int(p.n)
    if p.dst_mode == "split_m":
        h = m // 2
        _write_groups(ctx, replace(dst, sub=0), _groups(p, res, order, h, n), p)
        _write_groups(ctx, replace(dst, sub=1), _groups(p, res, order, h, n, row0=h), p)
    elif p.dst_mode == "split_n":
        h = n // 2
        _write_groups(ctx, replace(dst, sub=0), _groups(p, res, order, m, h), p)
        _write_groups(ctx, replace(dst, sub=1), _groups(p, res, order, m, h, col0=h), p)
    else:
        if p.kind == "ub":
            dst = replace(dst, sub=p.dst_mode)
        _write_groups(ctx, dst, _groups(p, res, order, m, n), p)


# ----------------------------------------------------------------------------- execute


def _nz_runs_view(ctx, dst: Ptr, p: _Plan, shape: tuple) -> Optional[np.ndarray]:
    """Writable ``(n1, m, 16)`` destination view of an NZ write of whole 16-channel blocks, marked
    written and reported exactly as `_write_groups` would; None when the runs do not lie in one
    buffer (the caller then scatters them one by one, which reports the faulty run)."""
    n1, run_len, es = shape[0], shape[1] * shape[2], p.dst.bits >> 3
    if n1 == 1 or int(p.dst_stride) == run_len:
        return ctx.view(dst, n1 * run_len, write=True, operand="dst").reshape(shape)
    runs = ctx.write_runs(dst, n1, run_len * es, int(p.dst_stride) * es, operand="dst")
    return None if runs is None else runs.view(p.dst.storage).reshape(shape)


def _writeback(kind: str, ctx, operands: tuple, clauses: dict) -> None:
    p = _plan(kind, operands, clauses, ctx.target, ctx.machine.overflow_mode)
    src, dst = operands[0], operands[1]
    align = ctx.target.alignment
    ctx.check_aligned(src, align, "%src")
    ctx.check_aligned(dst, align, "%dst")
    plain = (p.mode is None and p.relu == "no_relu" and p.clip is None
             and (p.sat == "nosat" or p.dst.name not in SAME_TYPE_SATURATES))
    # Conversions run in logical (m, n1, 16) order unless the destination is the NZ
    # block layout of 16 channels, which is the accumulator's own order.
    order = "nz" if plain or (p.layout in ("normal", "nz2nz") and p.c0d == ROW and p.dst_mode is None) \
        else "logical"
    args = None if plain else _load_args(ctx, p, order)
    count, s3, d3 = p.loop3
    # A dense row-major destination takes the converted blocks directly (no staging copy).
    direct = (not plain and order == "logical" and p.layout == "nz2nd" and p.dst_mode is None
              and p.atomic is None and p.dst.bits >= 8 and int(p.n) == p.n1 * ROW
              and (int(p.m) == 1 or int(p.dst_stride) == int(p.n)))
    # So does an NZ destination of whole 16-channel blocks (one run of m x 16 per block).
    direct_nz = (not plain and order == "nz" and p.dst_mode is None and p.atomic is None
                 and p.dst.bits >= 8 and int(p.n) == p.n1 * ROW)
    # More than one write step (loop3 iterations, split halves, run groups): journal them, so that a step
    # refused after earlier ones wrote leaves memory as it was (memory.ALL_OR_NOTHING_WRITES). A single
    # dense write-back is one write: no journal.
    if count > 1 or not (direct or direct_nz):
        ctx.all_or_nothing(_writeback_loop, ctx, src, dst, p, plain, order, args, direct, direct_nz)
    else:
        _writeback_loop(ctx, src, dst, p, plain, order, args, direct, direct_nz)


def _writeback_loop(ctx, src, dst, p, plain: bool, order: str, args, direct: bool, direct_nz: bool) -> None:
    count, s3, d3 = p.loop3
    for r in range(count):
        acc = _gather(ctx, src, p, r * s3)
        dst_r = dst + r * d3 if r else dst
        if plain:
            _scatter(ctx, dst_r, p, acc, order)
            continue
        x = acc if order == "nz" else acc.transpose(1, 0, 2)
        view = None
        if direct:
            view = ctx.view(dst_r, int(p.m) * int(p.n), write=True, operand="dst").reshape(x.shape)
        elif direct_nz:
            view = _nz_runs_view(ctx, replace(dst_r, sub=p.dst_mode) if p.kind == "ub" else dst_r, p, x.shape)
        if view is not None:
            Q.convert(p.mode, x, args, axis=1 if order == "nz" else 0, out=view)
        else:
            _scatter(ctx, dst_r, p, Q.convert(p.mode, x, args, axis=1 if order == "nz" else 0), order)


def _exec_l1(ctx, src, dst, m, n, src_stride, dst_stride, **clauses):
    _writeback("l1", ctx, (src, dst, m, n, src_stride, dst_stride), clauses)


def _exec_gm(ctx, src, dst, m, n, src_stride, dst_stride, sid, l2_cache_ctrl, **clauses):
    _writeback("gm", ctx, (src, dst, m, n, src_stride, dst_stride, sid, l2_cache_ctrl), clauses)


def _exec_ub(ctx, src, dst, m, n, src_stride, dst_stride, **clauses):
    _writeback("ub", ctx, (src, dst, m, n, src_stride, dst_stride), clauses)


def _verifier(kind: str):
    def verify(call, target) -> None:
        _plan(kind, call.operands, call.clauses, target, static=True)
    verify.__name__ = f"verify_mte_l0c_{kind}"
    return verify


# ----------------------------------------------------------------------------- table rows

_SRC = Operand("%src", "ptr", ("l0c",), "accumulator tile (f32 / i32) in NZ order")
_SHAPE = (Operand("%m", "int", doc="logical rows written"), Operand("%n", "int", doc="logical columns written"),
          Operand("%src_stride", "int", doc="L0C rows (16 channels) between fractal columns; multiple of 16"),
          Operand("%dst_stride", "int", doc="destination elements between rows / columns / channel blocks"))
_HINTS = {"clip": _CLIP_HINT, "split_m": "write dst_mode='split_m'", "split_n": "write dst_mode='split_n'",
          "sub_blockid": "write dst_mode=<sub-block id>", "layout": "write nz2nd=True, nz2dn=1 or nz2nz=True",
          "nosat": "write sat=False", "preserve_nan": "write sat='preserve_nan'",
          "split": "write nz2nz=1 (channel split) or dst_mode='split_m'/'split_n' (UB dual destination)",
          "atomic": "atomic(...) exists only on pto.mte_l0c_gm (the GM read-modify-write path)"}

register(OpSpec("mte_l0c_l1", "fixpipe", "FIX",
                (_SRC, Operand("%dst", "ptr", ("l1",), "L1 destination"), *_SHAPE),
                _exec_l1, _common_clauses(atomic=False), _verifier("l1"),
                "FIXPIPE write-back L0C -> L1 with pre_quant / pre_relu / clip / layout / loop3 / sat",
                clause_hints=_HINTS))
register(OpSpec("mte_l0c_gm", "fixpipe", "FIX",
                (_SRC, Operand("%dst", "ptr", ("gm",), "GM destination"), *_SHAPE,
                 Operand("%sid", "int", doc="stream hint [0, 3]; no value effect"),
                 Operand("%l2_cache_ctrl", "int", doc="cache hint [0, 15]; no value effect")),
                _exec_gm, _common_clauses(atomic=True), _verifier("gm"),
                "FIXPIPE write-back L0C -> GM, optionally as an atomic add/max/min", clause_hints=_HINTS))
register(OpSpec("mte_l0c_ub", "fixpipe", "FIX",
                (_SRC, Operand("%dst", "ptr", ("ub",), "UB destination (origin in each written UB)"), *_SHAPE),
                _exec_ub, (_UB_DST_MODE,) + _common_clauses(atomic=False), _verifier("ub"),
                "FIXPIPE write-back L0C -> UB of one vector core, or split over both (split_m / split_n)",
                clause_hints=_HINTS))
register_availability("mte_l0c_ub", lambda target: target.fixpipe_to_ub)     # (its verifier's rule)

__all__ = ["ROW", "ATOMIC_TYPES", "ATOMIC_OPS", "UB_SPLITS"]
