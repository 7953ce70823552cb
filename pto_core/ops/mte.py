"""Data movement ops of the cube and vector data paths (``pto.mte_*``, ``pto.raw_fill_l1``).

One execute function and one `OpSpec` row per op; the shared engines are:

* **byte bursts** (`_copy_bursts`): ``nburst(count, src_stride, dst_stride)`` plus
  ``loop(...)*`` groups (inner to outer) of ``len_burst``-byte rows, as strided numpy
  views (one copy per op). Used by ``mte_gm_l1``, ``mte_l1_ub``, ``mte_gm_ub``,
  ``mte_ub_gm`` (byte strides) and ``mte_ub_l1``, ``mte_l1_bt``, ``mte_l1_fb`` (unit
  counts and gaps converted to byte strides).
* **ND/DN -> Nz repack** (``mte_gm_l1_frac``).
* **fractal blocks** (`move_fractals`): the L1 -> L0A/L0B loads move whole 512-byte
  fractals (16 rows x 32 bytes) of a source grid; ``transpose`` transposes the selected
  logical region at element level.
* **MX scale fragments** (32-byte, 16 x 2 E8M0) for ``mte_l1_l0a_mx``/``mte_l1_l0b_mx``.

Initialisation tracking: moves copy the per-byte *written* flags along with the bytes
(moving undefined bytes is not a use of them; `ExecContext.span_tracked`), and padding
they generate (zero lanes, pad values) counts as written. The consumers (``pto.mad*``,
FIXPIPE) check exactly the bytes they use.

Layouts (pto_spec.md §2): L1 cube tiles are Nz (``[c1][r1][r0][c0]``, 16 x C0 boxes, as
``mte_gm_l1_frac nd2nz`` writes them); L0A is Zz on A2A3/KirinX90-class targets and Nz
on A5/Kirin9030 (`pto_core.tassign.default_layout`); L0B is Zn (``K1 N1 N0 K0``). Every
unit, default and resolved ambiguity is documented in ``migration_guide/pto_cube.md``.

Fast paths (taken only where they produce the same bytes and written flags as the
general path; `FAST_PATHS = False` forces the general path, and
``tests/core/test_fast_paths.py`` runs both on the same inputs):

* byte bursts that are one row, or rows back to back on both sides: one slice copy;
* ``mte_gm_l1_frac nd2nz`` without padding: every destination C0 block is 32 contiguous
  source bytes, so the repack is one copy of 32-byte items (any element width);
* ``mte_gm_l1_frac`` from a fully written source: the destination flags are set over
  the footprint instead of being moved like the data.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..dtypes import DType
from ..errors import (BurstTailWarning, GmOverreadWarning, GmPaddingWriteWarning, IllegalOperand, Misaligned, OutOfBounds,
                      UnsupportedOp, warn_at)
from ..memory import all_written
from ..numerics.minmax import atomic_maxmin
from ..checks.races import wording_of
from .ctrl import atomic_mode
from .registry import Clause, Operand, OpSpec, register, register_availability

FRACTAL = 512          # bytes of one L0A/L0B/L1 cube fractal (16 rows x 32 bytes)
BLOCK = 32             # bytes of one C0 block
MX_FRAGMENT = 32       # bytes of one MX scale fragment (16 x 2 E8M0)
MX_ADDR_DIV = 16       # MX scale byte address = L0A/L0B data byte address / 16

#: Bias-table load unit in bytes of source data (``len_burst``/gaps of ``mte_l1_bt``), by arch.
#: A2A3-class: 64 B (pto-isa a2a3 TMovToBt ``BURST_LEN_UNIT = 64``, catlass ``ceil(n*4/64)``);
#: A5: 32 B (pto-isa a5 TMovToBt ``BURST_LEN_UNIT = 32``). Kirin chips follow A2A3.
BT_LOAD_UNIT = {"a2a3": 64, "kirinx90": 64, "kirin9030": 64, "a5": 32}
#: FIXPIPE-buffer load unit of ``mte_l1_fb`` in bytes (pto-isa TMovToFb ``FIXPIPE_BUFFER_UNIT = 128``).
FB_LOAD_UNIT = 128
#: Legal (L1 source dtype, BT destination dtype) pairs of ``mte_l1_bt`` -> destination bytes per value.
#: f16 -> f16 keeps the f16 value in the low half of a 32-bit bias slot (VPTO ``mte_l1_bt``).
BT_TYPE_PAIRS = {("f32", "f32"): 4, ("s32", "s32"): 4, ("f16", "f32"): 4, ("bf16", "f32"): 4, ("f16", "f16"): 4}

U16 = 0xFFFF
#: Largest ``len_burst`` of the byte-form vector DMA ``mte_gm_ub`` / ``mte_ub_gm``: a 21-bit byte
#: count (CCE ``copy_gm_to_ubuf_align_b*`` / ``copy_ubuf_to_gm_align_b*`` ``lenBurst``; TIK
#: ``data_move_pad`` ``burst`` "up to 2^21-1" bytes, tik_api.md §7.2).
LEN_BURST_BYTES_MAX = (1 << 21) - 1

# ============================================================================ operand checks (shared with cube.py)


def check_ptr(op: str, name: str, value, spaces: tuple) -> None:
    """Raise `IllegalOperand` unless ``value`` is a pointer into one of ``spaces``."""
    space = getattr(value, "space", None)
    if space is None:
        if isinstance(value, (int, float)):
            raise IllegalOperand(f"expects a pointer, got the number {value!r}", op=op, operand=name, value=value,
                                 limit="a pointer in " + " / ".join(spaces),
                                 hint="pass a pointer from machine.ptr(space, dtype, addr)")
        return  # an IR value whose space is not known statically
    if space not in spaces:
        raise IllegalOperand(f"must point into {' or '.join(spaces)}, got a pointer into {space}", op=op,
                             operand=name, value=str(value), limit=" / ".join(spaces),
                             hint=f"create it with machine.ptr({spaces[0]!r}, dtype, addr)")


def check_int(op: str, name: str, value, lo: Optional[int] = None, hi: Optional[int] = None,
              hint: Optional[str] = None) -> int:
    """Validate an integer operand that is known now (Python/numpy int); other values pass through."""
    if type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value                        # the common case: a plain int in range
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float):
            raise IllegalOperand(f"must be an integer, got {value!r}", op=op, operand=name, value=value,
                                 hint=hint or f"pass {name} as an int")
        return value
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        lim = f"[{lo if lo is not None else '-inf'}, {hi if hi is not None else 'inf'}]"
        raise IllegalOperand(f"value {v} is outside {lim}", op=op, operand=name, value=v, limit=lim, hint=hint)
    return v


def check_align(op: str, ptr, alignment: int, name: str) -> None:
    """Raise `Misaligned` unless an on-chip ``ptr`` is ``alignment``-byte aligned."""
    addr = getattr(ptr, "addr", None)
    if isinstance(addr, int) and ptr.space != "gm" and addr % alignment:
        raise Misaligned(f"address {addr:#x} in {ptr.space} is not {alignment}-byte aligned", op=op, operand=name,
                         value=hex(addr), limit=f"{alignment} B",
                         hint=f"place the tile at a multiple of {alignment} bytes")


def _dt(ptr) -> Optional[DType]:
    return getattr(ptr, "dtype", None)


def _args(call_clauses: dict, name: str):
    """Positional params of an ``args`` clause (``None`` when omitted)."""
    v = call_clauses.get(name)
    return None if v is None else v[0]


#: Fast paths that replace a general algorithm (same bytes, same written flags) are taken when True;
#: tests switch it off to compare both on the same inputs (tests/core/test_fast_paths.py).
FAST_PATHS = True


def tracking(ctx) -> bool:
    """Whether initialisation is tracked on this machine (``MachineOptions.uninitialized != "off"``).

    When it is not, moves skip copying the written flags (they are never consulted).
    """
    return ctx.machine.options.uninitialized != "off"


# ============================================================================ element views


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def to_elems(raw: np.ndarray, d: DType) -> np.ndarray:
    """One entry per element from bytes (last axis): unsigned ints of the element size, or nibble codes."""
    if d.bits >= 8:
        return np.ascontiguousarray(raw).view(_UINT[d.bits // 8])
    out = np.empty(raw.shape[:-1] + (raw.shape[-1] * 2,), np.uint8)
    out[..., 0::2] = raw & 0xF          # element 2i in the low nibble
    out[..., 1::2] = raw >> 4
    return out


def from_elems(el: np.ndarray, d: DType) -> np.ndarray:
    """Inverse of `to_elems`: bytes along the last axis."""
    if d.bits >= 8:
        return np.ascontiguousarray(el).view(np.uint8)
    return (el[..., 0::2] | (el[..., 1::2] << 4)).astype(np.uint8)


def flags_to_elems(w: np.ndarray, d: DType) -> np.ndarray:
    """Per-byte written flags as per-element entries (byte-exact for >= 8-bit types)."""
    if d.bits >= 8:
        return np.ascontiguousarray(w).view(_UINT[d.bits // 8])
    return np.repeat(w, 2, axis=-1)


def flags_from_elems(we: np.ndarray, d: DType) -> np.ndarray:
    if d.bits >= 8:
        return np.ascontiguousarray(we).view(np.bool_)
    return we[..., 0::2] & we[..., 1::2]


# ============================================================================ byte-burst engine


def _gm_padding_split(ctx, ptr, lo: int, hi: int, operand: str, reading: bool = False) -> Optional[int]:
    """For a GM access of bytes ``[ptr + lo, ptr + hi)`` that runs past its tensor into the host's
    allocation padding (`pto_core.memory.GM_TAIL_PAD`): how many of its bytes, from ``ptr + lo``, are
    inside the tensor (0 when it starts in the padding). None when it is not a GM access that
    starts inside a tensor's padded allocation and overruns the tensor (the caller's ordinary
    bounds check then applies). A write past the padding is `OutOfBounds` naming the padded extent;
    a read past it reads unknown data (`GM_OVERREAD_READS_UNKNOWN`)."""
    if ptr.space != "gm":
        return None
    found = ctx.machine.gm.find_padded(ptr.addr + lo)
    if found is None:
        return None
    region, off = found
    n = hi - lo
    if off + n <= region.size:
        return None
    if off + n > region.padded_size and reading and GM_OVERREAD_READS_UNKNOWN:
        _report_overread(ctx, region, off, n, ptr.dtype)
    elif off + n > region.padded_size:
        raise OutOfBounds(f"GM bytes [{off}, {off + n}) run past the end of region {region.label} "
                          f"({region.size} B) and of its allocation's padding (the host allocates "
                          f"{region.padded_size} B: the size rounded up to 32 B plus one 32-byte block)",
                          op=ctx.op_name, operand=operand, value=hex(ptr.addr + lo),
                          limit=f"{region.padded_size} B",
                          hint="check burst lengths, strides and offsets against the tensor's shape")
    return max(0, region.size - off)


#: Named choice GM_OVERREAD_READS_UNKNOWN: a GM read that starts inside a tensor's allocation (the tensor or
#: its "GM allocation padding") and runs past it is not an error: the bytes past the tensor read as unknown data
#: (zero, marked unwritten, so the uninitialised-data checks report them where the kernel uses them), with
#: one ``("gm-overread", ...)`` report and `GmOverreadWarning` per op site and tensor. The device has no
#: bounds check on a DMA read: it reads whatever memory follows (CANN TIK's data_move checks only its
#: parameters' ranges), and shipped CANN kernels read past small inputs and never use the bytes (dynamic
#: sort_v2 past its input; sparse_apply_ftrl_d 4 KiB of indices from an 8-byte tensor; diag / diag_part
#: 128 B of a 32-byte tiling tensor; in_top_k one 32-row group past its last row). A read that *starts*
#: outside every allocation (a wild or negative offset), and every write past the padding, stay `OutOfBounds`.
GM_OVERREAD_READS_UNKNOWN = True


def _doer(ctx, default: str) -> str:
    """Who made a GM access, for its warnings: the front end's call with the PTO op in parentheses
    (``"`tik.data_move` (pto.mte_ub_gm)"``), or the op itself (``default`` without one)."""
    op = ctx.op_name or default
    call = ctx.where.call if ctx.where is not None else ""
    return f"`{call}` ({op})" if call and call != op else op


def _elements(words, dt, lo: int, hi: int, what: str = "") -> str:
    """GM bytes ``[lo, hi)`` of a tensor of type ``dt`` as a front end's user counts them: ``float16 elements
    20..51 (bytes [40, 104))`` (then ``what``), or the bytes alone for a sub-byte type."""
    size = dt.bits // 8 if dt is not None else 0
    if size < 1:
        return f"bytes [{lo}, {hi})" + (f" {what}" if what else "")
    e0, e1 = lo // size, (hi - 1) // size
    name = getattr(dt, words.dtype_attr, None) or dt.name
    elems = f"{name} element{'s' if e1 > e0 else ''} {e0}" + (f"..{e1}" if e1 > e0 else "")
    return f"{elems} (bytes [{lo}, {hi}))" + (f" {what}" if what else "")


def _one_element(dt, lo: int, hi: int) -> bool:
    """Bytes ``[lo, hi)`` lie in one element of ``dt`` (the message then says "is dropped", "it", not "them")."""
    size = dt.bits // 8 if dt is not None else 0
    return size >= 1 and lo // size == (hi - 1) // size


def _count(words, dt, nbytes: int, what: str = "", bytes_in: str = " ({} B)") -> str:
    """``nbytes`` bytes as a front end's user counts them: ``40 elements (80 B)`` (``what`` after the count,
    ``bytes_in`` the form of the bytes), or ``80 B`` when they are not whole elements of ``dt``."""
    size = dt.bits // 8 if dt is not None else 0
    if size < 1 or nbytes % size:
        return f"{nbytes} B" + (f" {what}" if what else "")
    n = nbytes // size
    return f"{n} element{'s' if n != 1 else ''}{' ' + what if what else ''}{bytes_in.format(nbytes)}"


def _first_at_site(sites: set, region, where) -> bool:
    """True the first time ``(region, op site)`` is seen in ``sites`` (a machine's warned-once set), recording it."""
    key = (region.name, where)
    if key in sites:
        return False
    sites.add(key)
    return True


def _report_overread(ctx, region, off: int, n: int, ptr_dtype=None) -> None:
    machine = ctx.machine
    where = ctx.where
    if not _first_at_site(machine.gm_overread_sites, region, where):
        return
    site = f"{where}: " if where is not None else ""
    words = wording_of(where)
    if words.by_call and words.overread_fix and where.call:
        dt = region.dtype or ptr_dtype
        past = off + n - region.padded_size
        size = _count(words, dt, region.size, bytes_in=", {} B")
        them = "it" if _one_element(dt, region.padded_size, off + n) else "them"
        msg = (f"{site}{where.call} reads {_elements(words, dt, off, off + n)} of tensor {region.label} ({size}; "
               f"the host allocates {region.padded_size} B): the {_count(words, dt, past, 'past that allocation')} "
               f"read as unknown data (on the device: whatever memory follows). Harmless if the kernel never uses "
               f"{them} -- uses are reported as reads of unwritten data. Fix: {words.fix_of('overread', where.call)}")
        machine.report("gm-overread", msg, warned=True)
        machine.warn(msg, GmOverreadWarning, where, stacklevel=2)
        return
    msg = (f"{site}{_doer(ctx, 'a GM read')} reads GM bytes [{off}, {off + n}) of region {region.label} "
           f"({region.size} B; the host allocates {region.padded_size} B): the {off + n - region.padded_size} "
           f"byte(s) past that allocation read as unknown data (on the device: whatever memory follows). Harmless "
           f"if the kernel never uses them -- uses are reported as reads of unwritten data. Fix: read at most the "
           f"tensor's size (check burst lengths, counts and offsets against its shape)")
    machine.report("gm-overread", msg, warned=True)
    machine.warn(msg, GmOverreadWarning, where, stacklevel=2)      # at the user's line, as every kernel warning


def read_span(ctx, ptr, lo: int, hi: int, operand: str, runs: Optional[tuple] = None):
    """``(data, written)`` of ``[ptr+lo, ptr+hi)``; a GM read may run into its tensor's allocation padding.

    The host allocates every GM tensor with padding after it (named choice "GM allocation
    padding", `pto_core.memory.GM_TAIL_PAD`), and the DMA reads whole 32-byte blocks, so a
    burst may read bytes past the end of a GM tensor up to the end of that padding; those
    bytes are modelled as unknown: zero data, not written. Past the padding: `OutOfBounds`.
    ``runs``: the bytes really read (`ExecContext.span_tracked`).
    """
    inside = _gm_padding_split(ctx, ptr, lo, hi, operand, reading=True)
    if inside is not None:
        pdata = np.zeros(hi - lo, np.uint8)
        pwritten = np.zeros(hi - lo, np.bool_)
        if inside:
            data, written, _ = ctx.span_tracked(ptr, lo, lo + inside, operand=operand, runs=runs)
            pdata[:inside] = data
            pwritten[:inside] = written
        return pdata, pwritten
    data, written, _ = ctx.span_tracked(ptr, lo, hi, operand=operand, runs=runs)
    return data, written


def strided(arr: np.ndarray, shape: tuple, strides: tuple, writeable: bool = False) -> np.ndarray:
    """Strided view of a contiguous array (numpy validates the extent against the array's size).

    Cheaper than ``as_strided`` for the 1-D byte spans ops work on; falls back to it for
    non-contiguous inputs.
    """
    if arr.flags.c_contiguous:
        v = np.ndarray(shape, arr.dtype, buffer=arr, strides=strides)
        if not writeable:
            v.flags.writeable = False
        return v
    return as_strided(arr, shape, strides, writeable=writeable)


def _burst_view(arr: np.ndarray, groups, row: int, writeable: bool, side: int) -> np.ndarray:
    """Strided view ``(count_n, ..., count_0, row)`` of rows described by ``groups`` (inner first)."""
    shape = tuple(g[0] for g in reversed(groups)) + (row,)
    strides = tuple(g[side] for g in reversed(groups)) + (1,)
    return strided(arr, shape, strides, writeable)


def _extent(groups, side: int, row: int) -> int:
    return sum((g[0] - 1) * g[side] for g in groups) + row


def copy_bursts(ctx, src, dst, groups, *, src_row: int, dst_row: int, dst_offset: int = 0,
                fill_row: Optional[np.ndarray] = None, atomic: Optional[tuple] = None, fill_first: int = 0) -> None:
    """Copy rows described by ``groups`` = ``[(count, src_stride, dst_stride), ...]`` (innermost first).

    Each row copies ``src_row`` bytes from the source row start to ``dst_offset`` bytes
    after the destination row start; ``dst_row`` is the destination row footprint. When
    ``fill_row`` (``dst_row`` bytes) is given, each destination row is first filled with
    it (padding), so only the copied part comes from the source. A GM side may run into its
    tensor's allocation padding (`read_span`, `_gm_tail_cut`).
    ``atomic`` = ``(dtype name, op)`` (`pto_core.ops.ctrl.atomic_mode`) makes every row a
    read-modify-write ``dst = dst op src`` in that type (`atomic_rows`). ``fill_first`` (an
    element size in bytes) completes each destination row after the copied bytes with copies
    of the row's first element (the DMA's "dummy" data of an unpadded unaligned burst).
    """
    s_hi = _extent(groups, 1, src_row)
    races = ctx.races is not None           # the GM race checker wants the rows, not the span
    sdata, swritten = read_span(ctx, src, 0, s_hi, "%src", _gm_runs(src, groups, 1, src_row, s_hi) if races else None)
    d_hi = _extent(groups, 2, dst_row)
    cut = _gm_tail_cut(ctx, dst, d_hi)
    druns = _gm_runs(dst, groups, 2, dst_row, d_hi) if races else None
    if (cut is None and FAST_PATHS and atomic is None and fill_row is None and not fill_first and not dst_offset
            and len(groups) == 1 and src_row == dst_row and (groups[0][0] == 1 or groups[0][2] == dst_row)
            and groups[0][0] * dst_row == d_hi and all_written(swritten) and tracking(ctx)):
        # written bytes whose rows fill the destination span back to back (a GM -> L1 panel load): take the span
        # marked written whole (remembered: later reads need no scan) instead of copying its all-True flags
        real, _ = ctx.span(dst, 0, d_hi, write=True, operand="%dst")
        if groups[0][0] == 1 or groups[0][1] == src_row:
            real[...] = sdata[:d_hi]
        else:
            _burst_view(real, groups, src_row, True, 2)[...] = _burst_view(sdata, groups, src_row, False, 1)
        return
    if cut is None:
        real, real_written = _dst_span(ctx, dst, d_hi, atomic, druns)
        _copy_rows(ctx, sdata, swritten, real, real_written, groups, src_row, dst_row, dst_offset, fill_row, atomic,
                   dst, fill_first)
        return
    ddata = np.zeros(d_hi, np.uint8)
    dwritten = np.ones(d_hi, np.bool_)
    real = None
    if cut:
        real, real_written = _dst_span(ctx, dst, cut, atomic, druns)
        ddata[:cut] = real
        dwritten[:cut] = real_written
    _copy_rows(ctx, sdata, swritten, ddata, dwritten, groups, src_row, dst_row, dst_offset, fill_row, atomic, dst,
               fill_first)
    if real is not None:
        real[...] = ddata[:cut]
        real_written[...] = dwritten[:cut]
    _report_padding_write(ctx, dst, d_hi)


#: Named choice GM_PADDING_WRITE_WARNS: a GM write into the host's allocation padding (`GM_TAIL_PAD`; legal,
#: the bytes are dropped: on the device they land in the padding, never in the output) is always a
#: ``("gm-tail", ...)`` report, and also a `GmPaddingWriteWarning` at the op's line (once per op site and
#: tensor) when it reaches past the tensor's last 32-byte block. A whole-block store of a partial last
#: block (``burst = ceil(n / block)`` from a block-aligned start, bytes up to ``round32(size)``) is the
#: usual idiom and stays a report only; a write further (an offset or count one block too large, e.g.
#: ``data_move(y[8], ub, 0, 1, 16, 0, 0)`` on a 128-element float32 ``y``) stores data the output never
#: receives, which the user should see. A write past the padding is `OutOfBounds`.
GM_PADDING_WRITE_WARNS = True


def _report_padding_write(ctx, dst, d_hi: int) -> None:
    """The ``gm-tail`` report (and, past the tensor's last block, the warning) of a GM write of bytes
    ``[dst, dst + d_hi)`` that `_gm_tail_cut` cut at its tensor's end."""
    machine = ctx.machine
    region, off = machine.gm.find_padded(dst.addr)
    end = off + d_hi
    first = max(off, region.size)
    where = ctx.where
    site = f"{where}: " if where is not None else ""
    words = wording_of(where)
    dt = region.dtype or dst.dtype
    block_end = -(-region.size // 32) * 32
    if words.by_call and where is not None and where.call:
        # a front end's call (TIK): the call, the tensor and its elements in the front end's dtype spelling
        msg = (f"{site}{where.call} writes {_elements(words, dt, first, end, 'past the end of tensor')} "
               f"{region.label} ({_count(words, dt, region.size, bytes_in=', {} B')}); they land in the host's "
               f"allocation padding and are dropped"
               + (" (the rest of the tensor's last 32-byte block, stored whole: harmless)" if end <= block_end
                  else ""))
    else:
        msg = (f"{site}a write to GM region {region.label} ran {end - region.size} byte(s) past its end (bytes "
               f"{first}..{end - 1}); they land in the allocation's padding and are dropped")
    warns = GM_PADDING_WRITE_WARNS and end > block_end      # (a repeat at a warned site was shown by that warning)
    machine.report("gm-tail", msg, warned=warns)
    if not warns or not _first_at_site(machine.gm_padding_write_sites, region, where):
        return
    if words.by_call and words.padding_write_fix and where.call:
        size = _count(words, dt, region.size, bytes_in=", {} B")
        one = _one_element(dt, first, end)
        text = (f"{site}{where.call} writes {_elements(words, dt, off, end)} of tensor {region.label} ({size}): "
                f"the {_elements(words, dt, first, end, 'past its end')} {'is' if one else 'are'} dropped "
                f"({'it lands' if one else 'they land'} in the host's allocation padding of "
                f"{region.padded_size - region.size} B, never in the tensor; the output does not receive "
                f"{'it' if one else 'them'}). Fix: {words.fix_of('padding_write', where.call)}")
        machine.warn(text, GmPaddingWriteWarning, where, stacklevel=3)
        return
    size = max(1, dst.dtype.bits // 8)
    past = end - first
    elems = f", {past // size} {dst.dtype.name} element(s)," if size > 1 and not past % size else ""
    text = (f"{site}{_doer(ctx, 'a GM write')} writes GM bytes [{off}, {end}) of tensor {region.label} "
            f"({region.size} B): the {past} byte(s){elems} [{first}, {end}) past its end are dropped "
            f"(they land in the host's allocation padding of {region.padded_size - region.size} B, never in the "
            f"tensor; the output does not receive them). Fix: check the destination offset, burst length and "
            f"counts against the tensor's shape (store at most its size, or its last 32-byte block whole)")
    machine.warn(text, GmPaddingWriteWarning, where, stacklevel=3)   # held while a launch may restart


def _dst_span(ctx, dst, hi: int, atomic: Optional[tuple], runs: Optional[tuple]):
    """The destination's ``(data, written)`` views of ``[dst, dst + hi)`` for writing (atomic mode noted)."""
    if atomic is not None:
        ctx.gm_atomic = atomic              # (type, op): the GM race checker's atomic kind
    try:
        real, real_written, _ = ctx.span_tracked(dst, 0, hi, write=True, operand="%dst", runs=runs)
    finally:
        ctx.gm_atomic = None
    return real, real_written


def _gm_runs(ptr, groups, side: int, row: int, extent: int) -> Optional[tuple]:
    """The rows of a GM burst access as ``(shape, strides)`` for `ExecContext.span_tracked` ``runs=``, or
    None when they fill their span (or ``ptr`` is not in GM)."""
    if ptr.space != "gm":
        return None
    count = 1
    for g in groups:
        count *= g[0]
    if count * row == extent:
        return None
    return tuple(g[0] for g in reversed(groups)) + (row,), tuple(g[side] for g in reversed(groups)) + (1,)


def _gm_tail_cut(ctx, dst, d_hi: int) -> Optional[int]:
    """For a GM destination whose write runs past its tensor into the allocation's padding: the
    bytes that are inside (0 when it starts in the padding), else None.

    The host pads every GM allocation (named choice "GM allocation padding",
    `pto_core.memory.GM_TAIL_PAD`), so a kernel may store its last partial block whole (``burst =
    ceil(n / block)``); the bytes past the tensor land in that padding, never in another tensor,
    and are dropped. Longer overruns are `OutOfBounds`."""
    return _gm_padding_split(ctx, dst, 0, d_hi, "%dst")


def _copy_rows(ctx, sdata, swritten, ddata, dwritten, groups, src_row, dst_row, dst_offset, fill_row, atomic, dst,
               fill_first=0):
    track = tracking(ctx)
    if atomic is not None:
        dv = _burst_view(ddata[dst_offset:], groups, src_row, True, 2)
        dw = _burst_view(dwritten[dst_offset:], groups, src_row, True, 2)
        if track:
            ctx.check_written(dw, operand="%dst", ptr=dst)
        atomic_rows(dv, _burst_view(sdata, groups, src_row, False, 1), atomic)
        if track:
            dw[...] = _burst_view(swritten, groups, src_row, False, 1)
        return
    if fill_first and dst_row > dst_offset + src_row:
        _copy_rows(ctx, sdata, swritten, ddata, dwritten, groups, src_row, dst_row, dst_offset, fill_row, atomic, dst)
        tail = dst_row - dst_offset - src_row
        for arr in (ddata, dwritten) if track else (ddata,):
            rows = _burst_view(arr, groups, dst_row, True, 2)
            first = rows[..., dst_offset:dst_offset + fill_first]
            reps = (1,) * (first.ndim - 1) + (-(-tail // fill_first),)
            rows[..., dst_offset + src_row:] = np.tile(first, reps)[..., :tail]
        return
    if FAST_PATHS and fill_row is None and len(groups) == 1 and (
            groups[0][0] == 1 or groups[0][1] == groups[0][2] == src_row == dst_row):
        # one burst, or bursts back to back on both sides: a single contiguous copy (same bytes as the views below)
        nb = groups[0][0] * src_row
        ddata[dst_offset:dst_offset + nb] = sdata[:nb]
        if track:
            dwritten[dst_offset:dst_offset + nb] = swritten[:nb]
        return
    if fill_row is not None:
        _burst_view(ddata, groups, dst_row, True, 2)[...] = fill_row
        if track:
            _burst_view(dwritten, groups, dst_row, True, 2)[...] = True
    _burst_view(ddata[dst_offset:], groups, src_row, True, 2)[...] = _burst_view(sdata, groups, src_row, False, 1)
    if track:
        _burst_view(dwritten[dst_offset:], groups, src_row, True, 2)[...] = _burst_view(swritten, groups, src_row,
                                                                                       False, 1)


#: numpy type used to combine values of each GM atomic type (`atomic_rows`).
_ATOMIC_STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": None, "s32": np.int32, "s16": np.int16,
                   "s8": np.int8}


def atomic_rows(dst_rows: np.ndarray, src_rows: np.ndarray, atomic: tuple) -> None:
    """``dst = dst op src`` on byte rows (last axis) read as the atomic type, in place.

    Floats: the exact result rounded once to the type (f32 by numpy's IEEE f32 add, f16 and
    bf16 computed in f64, where the sum of two such values rounds to the same result),
    overflow to inf; max/min propagate NaN and order -0 below +0 (`numerics.minmax.ATOMIC_MAXMIN_SIGNED_ZERO`).
    Integers wrap (two's complement) -- an
    assumption: the sources do not say whether integer atomic adds saturate.
    """
    from ..dtypes import dtype as _dtype
    name, op = atomic
    d = _dtype(name)
    size = d.bits // 8
    row = dst_rows.shape[-1]
    if row % size:
        raise IllegalOperand(f"atomic {op} on {name} needs rows that are a multiple of {size} bytes, got {row}",
                             operand="%len_burst", value=row, limit=f"multiple of {size}",
                             hint="move whole elements while the atomic mode is enabled")
    dt = d.storage
    a = np.ascontiguousarray(dst_rows).view(dt)
    b = np.ascontiguousarray(src_rows).view(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        if op == "add":
            if name in ("f16", "bf16"):
                res = (a.astype(np.float64) + b.astype(np.float64)).astype(dt)
            elif d.kind == "f":
                res = a + b
            else:
                res = (a.astype(np.int64) + b.astype(np.int64)).astype(dt)
        elif op in ("max", "min"):
            res = atomic_maxmin(a, b, op)          # signed zeros: ATOMIC_MAXMIN_SIGNED_ZERO
        else:
            raise IllegalOperand(f"unknown atomic op {op!r}", operand="atomic", value=op, limit="add, max, min",
                                 hint="enable the GM atomic mode with pto.set_atomic_add, pto.set_atomic_max or "
                                      "pto.set_atomic_min (pto.set_atomic_none turns it off)")
    dst_rows[...] = np.ascontiguousarray(res).view(np.uint8).reshape(dst_rows.shape)


def _burst_groups(op: str, call_clauses: dict, *, count_max: int = None, loop_max: int = None) -> list:
    """``[(count, src_stride, dst_stride), ...]``: ``nburst`` then every ``loop`` (inner to outer), validated."""
    nb = _args(call_clauses, "nburst")
    if nb is None:
        raise IllegalOperand("nburst(%count, %src_stride, %dst_stride) is required", op=op, operand="nburst",
                             hint="add nburst=(count, src_stride, dst_stride)")
    groups = [tuple(nb)]
    for entry in call_clauses.get("loop") or ():
        groups.append(tuple(entry[0]))
    out = []
    for i, (c, s, d) in enumerate(groups):
        name = "nburst" if i == 0 else f"loop#{i}"
        c = check_int(op, f"{name}(%count)", c, 1, count_max if i == 0 else loop_max)
        s = check_int(op, f"{name}(%src_stride)", s, 0)
        d = check_int(op, f"{name}(%dst_stride)", d, 0)
        out.append((c, s, d))
    return out


#: Named choice STRIDE_FIELD_CHECKED_FOR_ONE_BURST: an on-chip (UB/L1) stride of a byte-burst move must be a multiple
#: of 32 bytes even in a group whose count is 1, where no second row uses it. The PTO-ISA pages of the underlying
#: DMA (copy_gm_to_ubuf / copy_ubuf_to_gm) describe the UB stride field itself as "bytes, 32B-aligned"; the grouped
#: pto.mte_gm_ub / mte_ub_gm pages say only that UB rows start 32-byte aligned, and none says the field is ignored
#: for one burst. So the field is checked (migration_guide/pto_cube.md, vector DMA).
STRIDE_FIELD_CHECKED_FOR_ONE_BURST = True


def _require_stride_alignment(op: str, groups, side: int, alignment: int, what: str) -> None:
    for i, g in enumerate(groups):
        v = g[side]
        if not isinstance(v, int) or v % alignment == 0 or (g[0] == 1 and not STRIDE_FIELD_CHECKED_FOR_ONE_BURST):
            continue
        name = ("nburst" if i == 0 else f"loop#{i}") + ("(%src_stride)" if side == 1 else "(%dst_stride)")
        raise Misaligned(f"{what} row starts must stay {alignment}-byte aligned, so the {what} stride (a byte "
                         f"count, start to start) must be a multiple of {alignment}"
                         f"{' (also with one burst, where it is not used)' if g[0] == 1 else ''}; "
                         f"stride {v} is not", op=op, operand=name, value=v, limit=f"{alignment} B",
                         hint=_stride_hint(v, alignment))


def _stride_hint(v: int, alignment: int) -> str:
    """The Fix of a misaligned byte stride: PTO counts bytes where TIK counts 32-byte blocks (the usual cause when
    migrating), the nearest legal stride to ``v`` and the byte stride ``v`` would be as a block count."""
    lo = v // alignment * alignment
    near = lo if v - lo < lo + alignment - v else lo + alignment
    return (f"PTO lengths and strides are BYTES (start to start), while TIK's data_move counts 32-byte blocks (its "
            f"strides are gaps, tail to head: a TIK burst of b blocks with gap g is the byte stride 32*(b+g)). "
            f"The nearest legal stride to {v} is {near} (the multiples of {alignment} around it are {lo} and "
            f"{lo + alignment}); if {v} is a count of 32-byte blocks, the byte stride is {v * 32}")


def _round32(n: int) -> int:
    return (n + BLOCK - 1) // BLOCK * BLOCK


#: Named choice MTE_BIND: a compiled program binds a byte-burst move whose operands and clauses are all
#: compile-time values to them (`OpSpec.bind`): its burst checks (counts, strides, alignment, lengths) and
#: burst groups are made when the op first runs on a target, then reused; a check that fails raises the
#: general path's error at the same op (it runs the same function, at run time, every time until it passes).
#: A GM operand computed at run time (a kernel argument, an offset) is bound too (`OpSpec.bind_hole`): the
#: checks and groups do not depend on a GM address (`check_align` exempts GM), so they are made once as well;
#: any other run-time operand takes the general path. Run-time clause values (a TIK data_move with a Scalar
#: burst count, `OpSpec.bind_dyn`) are bound too: the checks and groups are made per distinct value (plain
#: ints only; kept per target, at most BIND_DYN_PLANS) when the run-time pointers are in GM, else per op.
#: Bound: mte_gm_ub, mte_ub_gm, mte_gm_l1, mte_l1_ub and the
#: 32-byte-unit mte_ub_ub, mte_ub_l1 (mte_l1_gm is not).
MTE_BIND = True


def _bind_bursts(plan, atomic: bool = False):
    """``(bind, bind_hole, bind_dyn)`` (`OpSpec.bind`, `OpSpec.bind_hole`, `OpSpec.bind_dyn`) of a burst move
    whose checks and groups are ``plan(src, dst, *rest, **clauses) -> (groups, copy_bursts keywords)``;
    ``atomic``: the run adds the GM atomic mode (a run-time state)."""
    def bind(args, clauses):
        if not MTE_BIND:
            return None
        src, dst = args[0], args[1]
        memo = [None, None]                 # the target the plan was made for, and the plan

        def run(ctx):
            if ctx.target is not memo[0]:
                memo[1] = plan(*args, **clauses)
                memo[0] = ctx.target
            groups, kw = memo[1]
            if atomic:
                copy_bursts(ctx, src, dst, groups, atomic=atomic_mode(ctx), **kw)
            else:
                copy_bursts(ctx, src, dst, groups, **kw)
        return run

    def bind_hole(args, index, clauses):
        if not MTE_BIND or index > 1:
            return None
        other = args[1 - index]
        memo = [None, None]

        def run(ctx, ptr):
            operands = (ptr, other) if index == 0 else (other, ptr)
            if ptr.space != "gm":               # the plan may depend on an on-chip address: not memoised
                groups, kw = plan(*operands, *args[2:], **clauses)
            else:
                if ctx.target is not memo[0]:
                    memo[1] = plan(*operands, *args[2:], **clauses)
                    memo[0] = ctx.target
                groups, kw = memo[1]
            if atomic:
                copy_bursts(ctx, operands[0], operands[1], groups, atomic=atomic_mode(ctx), **kw)
            else:
                copy_bursts(ctx, operands[0], operands[1], groups, **kw)
        return run
    def bind_dyn(args, indices, clauses, dyn_keys):
        if not MTE_BIND or any(i > 1 for i in indices):
            return None
        nh = len(indices)
        memo = [None, {}]                   # the target the plans were made for; clause values -> plan

        def run(ctx, *values):
            operands = list(args)
            for i, v in zip(indices, values):
                operands[i] = v
            c = dict(clauses)
            c.update(zip(dyn_keys, values[nh:]))
            # memoised only when the run-time pointers are in GM (the plan does not depend on a GM address)
            # and every run-time clause value is a plain int (an equal float, bool or numpy value takes the
            # checks again, as in the general path)
            key = _clause_key(values[nh:]) if all(operands[i].space == "gm" for i in indices) else None
            if key is None:
                groups, kw = plan(*operands, **c)
            else:
                if ctx.target is not memo[0]:
                    memo[0], memo[1] = ctx.target, {}
                hit = memo[1].get(key)
                if hit is None:
                    hit = plan(*operands, **c)          # stored only once its checks passed
                    if len(memo[1]) >= BIND_DYN_PLANS:
                        memo[1].clear()
                    memo[1][key] = hit
                groups, kw = hit
            if atomic:
                copy_bursts(ctx, operands[0], operands[1], groups, atomic=atomic_mode(ctx), **kw)
            else:
                copy_bursts(ctx, operands[0], operands[1], groups, **kw)
        return run
    return bind, bind_hole, bind_dyn


#: the plans one bound move with run-time clause values keeps (per clause value; cleared when full)
BIND_DYN_PLANS = 1024


def _clause_key(values: tuple):
    """`_plain_key` of a bound move's run-time clause values, with a fast path for the common form (each an
    ``args`` clause of ints, ``((count, src_stride, dst_stride), {})``: keyed by its ints; such a key cannot
    equal a `_plain_key` tuple, whose first item is a type name)."""
    out = []
    for v in values:
        if type(v) is not tuple or len(v) != 2 or type(v[1]) is not dict or v[1] or type(v[0]) is not tuple:
            return _plain_key(values)
        for x in v[0]:
            if type(x) is not int:
                return _plain_key(values)
        out.append(v[0])
    return tuple(out)


def _plain_key(v):
    """A hashable key of a run-time clause value whose leaves are all Python ints, strings or None (tuples,
    lists and dicts of them), else None: an equal value of another type (True, 2.0, numpy ints) must take
    the checks of the general path again."""
    t = type(v)
    if t is int or t is str or v is None:
        return v
    if t is tuple or t is list:
        out = []
        for x in v:
            k = _plain_key(x)
            if k is None and x is not None:
                return None
            out.append(k)
        return (t.__name__,) + tuple(out)
    if t is dict:
        items = []
        for name, x in v.items():
            k = _plain_key(x)
            if k is None and x is not None:
                return None
            items.append((name, k))
        return ("dict",) + tuple(items)
    return None


# ============================================================================ pto.mte_gm_l1 / mte_l1_ub


def _exec_bytes_to_32b_blocks(op: str):
    """Execute function of a byte-burst move whose destination is written in whole 32-byte blocks."""
    def plan(src, dst, len_burst, nburst=None, loop=None):
        length = check_int(op, "%len_burst", len_burst, 1)
        groups = _burst_groups(op, {"nburst": nburst, "loop": loop})
        check_align(op, dst, BLOCK, "%dst")
        _require_stride_alignment(op, groups, 2, BLOCK, dst.space)
        check_align(op, src, BLOCK, "%src")     # on-chip sources are 32-byte aligned; GM is exempt
        row = _round32(length)   # the destination is written in whole 32-byte blocks, tail from the source
        return groups, {"src_row": row, "dst_row": row}

    def execute(ctx, src, dst, *args, **clauses):
        groups, kw = plan(src, dst, *args, **clauses)
        copy_bursts(ctx, src, dst, groups, **kw)
    return (execute,) + _bind_bursts(plan)


#: pto_spec §3.1: a ``pto.mte_gm_l1`` / ``pto.mte_l1_ub`` whose ``%len_burst`` is a constant that is not a
#: multiple of 32 gets a `BurstTailWarning` when the op is checked (the copy goes on: whole 32-byte blocks,
#: the tail bytes from the source). Only for ops a user wrote as PTO (the provenance names the op itself, or
#: none): a front end's lowering (TIK ``data_move``'s burst unit is 32 B; its FIXPIPE staging rows) chose
#: its lengths and does not warn. A run-time (SSA) length never warns.
BURST_TAIL_WARNS = True


def _warn_burst_tail(call, op: str, length: int) -> None:
    where = call.where
    if where is not None and where.call and where.call not in (op, op[len("pto."):]):
        return                                  # lowered by a front end, not written by the user
    tail = _round32(length) - length
    warn_at(f"{where}: {op} %len_burst = {length} is not a multiple of 32: the destination is written in "
            f"whole 32-byte blocks, so each row also copies the {tail} source byte(s) after it (pto_spec "
            f"§3.1). Fix: use a multiple of 32 if those bytes must keep their old value"
            if where is not None else
            f"{op} %len_burst = {length} is not a multiple of 32: each row also copies the {tail} source "
            f"byte(s) after it up to the next 32-byte boundary (pto_spec §3.1)", BurstTailWarning, where)


def _verify_bytes(src_spaces, dst_spaces):
    def verify(call, target):
        op = call.spec.asm_name
        check_ptr(op, "%src", call.operands[0], src_spaces)
        check_ptr(op, "%dst", call.operands[1], dst_spaces)
        length = check_int(op, "%len_burst", call.operands[2], 1)
        _burst_groups(op, call.clauses)
        if BURST_TAIL_WARNS and isinstance(length, (int, np.integer)) and not isinstance(length, bool) and length % BLOCK:
            _warn_burst_tail(call, op, int(length))
    return verify


_NBURST_STRIDES = Clause("nburst", "args", params=("%count", "%src_stride", "%dst_stride"),
                         doc="innermost burst group: count, start-to-start byte strides (required)")
_LOOP = Clause("loop", "args", params=("%count", "%src_stride", "%dst_stride"), repeat=True,
               doc="outer repetition groups, inner to outer; byte strides")

_MTE_GM_L1 = _exec_bytes_to_32b_blocks("pto.mte_gm_l1")
_MTE_L1_UB = _exec_bytes_to_32b_blocks("pto.mte_l1_ub")

register(OpSpec(
    "mte_gm_l1", "mte", "MTE2",
    operands=(Operand("src", "ptr", ("gm",)), Operand("dst", "ptr", ("l1",)),
              Operand("len_burst", "int", doc="bytes per burst row")),
    clauses=(_NBURST_STRIDES, _LOOP),
    execute=_MTE_GM_L1[0], bind=_MTE_GM_L1[1], bind_hole=_MTE_GM_L1[2], bind_dyn=_MTE_GM_L1[3], verify=_verify_bytes(("gm",), ("l1",)),
    doc="GM -> L1 byte bursts; L1 written in whole 32-byte blocks (tail bytes come from the source)"))

register(OpSpec(
    "mte_l1_ub", "mte", "MTE1",
    operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", ("ub",)),
              Operand("len_burst", "int", doc="bytes per burst row")),
    clauses=(_NBURST_STRIDES, _LOOP),
    execute=_MTE_L1_UB[0], bind=_MTE_L1_UB[1], bind_hole=_MTE_L1_UB[2], bind_dyn=_MTE_L1_UB[3], verify=_verify_bytes(("l1",), ("ub",)),
    doc="L1 -> UB byte bursts (AIC-side copy_cbuf_to_ubuf, MTE1); UB written in whole 32-byte blocks"))


# ============================================================================ pto.mte_ub_l1 (32-byte units)


def _plan_mte_ub_l1(src, dst, len_burst, nburst=None):
    """The checks and `copy_bursts` arguments ``(groups, keywords)`` of a `pto.mte_ub_l1`."""
    op = "pto.mte_ub_l1"
    length = check_int(op, "%len_burst", len_burst, 1, U16)
    if nburst is None:
        raise IllegalOperand("nburst(%n_burst, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(n_burst, src_gap, dst_gap)")
    n, sg, dg = nburst[0]
    n = check_int(op, "nburst(%n_burst)", n, 1, U16)
    sg = check_int(op, "nburst(%src_gap)", sg, 0, U16)
    dg = check_int(op, "nburst(%dst_gap)", dg, 0, U16)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    row = length * BLOCK
    return [(n, (length + sg) * BLOCK, (length + dg) * BLOCK)], {"src_row": row, "dst_row": row}


def _exec_mte_ub_l1(ctx, src, dst, *args, **clauses):
    groups, kw = _plan_mte_ub_l1(src, dst, *args, **clauses)
    copy_bursts(ctx, src, dst, groups, **kw)


_UB_L1_BIND = _bind_bursts(_plan_mte_ub_l1)


def _verify_mte_ub_l1(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%src", call.operands[0], ("ub",))
    check_ptr(op, "%dst", call.operands[1], ("l1",))
    if "nburst" not in call.clauses:
        raise IllegalOperand("nburst(%n_burst, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(n_burst, src_gap, dst_gap) (gaps in 32-byte units)")


register(OpSpec(
    "mte_ub_l1", "mte", "MTE3",
    operands=(Operand("src", "ptr", ("ub",)), Operand("dst", "ptr", ("l1",)),
              Operand("len_burst", "int", doc="32-byte blocks per burst")),
    clauses=(Clause("nburst", "args", params=("%n_burst", "%src_gap", "%dst_gap"),
                    doc="burst count and gaps after each burst, in 32-byte units (required)"),),
    execute=_exec_mte_ub_l1, verify=_verify_mte_ub_l1, bind=_UB_L1_BIND[0], bind_hole=_UB_L1_BIND[1], bind_dyn=_UB_L1_BIND[2],
    doc="UB -> L1 copy in 32-byte units (AIV-side copy_ubuf_to_cbuf, MTE3); no layout change"))


# ============================================================================ pto.mte_ub_ub, pto.mte_l1_gm (32-byte units)


def _exec_32b_units(op: str, src_space: str, dst_space: str, gm_atomic: bool = False):
    """``(execute, bind, bind_hole)`` of a ``len_32b nburst(%n_burst, %src_gap, %dst_gap)`` move (gaps: tail to
    head); ``bind`` / ``bind_hole`` (`_bind_bursts`) memoise the same checks and groups."""
    def plan(src, dst, len_burst, nburst=None):
        length = check_int(op, "%len_burst", len_burst, 1, U16)
        if nburst is None:
            raise IllegalOperand("nburst(%n_burst, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(n_burst, src_gap, dst_gap)")
        n, sg, dg = nburst[0]
        n = check_int(op, "nburst(%n_burst)", n, 1, 4095)
        sg = check_int(op, "nburst(%src_gap)", sg, 0, U16)
        dg = check_int(op, "nburst(%dst_gap)", dg, 0, U16)
        check_align(op, src, BLOCK, "%src")
        check_align(op, dst, BLOCK, "%dst")
        row = length * BLOCK
        return [(n, (length + sg) * BLOCK, (length + dg) * BLOCK)], {"src_row": row, "dst_row": row}

    def execute(ctx, src, dst, *args, **clauses):
        groups, kw = plan(src, dst, *args, **clauses)
        copy_bursts(ctx, src, dst, groups, atomic=atomic_mode(ctx) if gm_atomic else None, **kw)
    return (execute,) + _bind_bursts(plan, atomic=gm_atomic)


def _verify_32b_units(src_spaces, dst_spaces):
    def verify(call, target):
        op = call.spec.asm_name
        check_ptr(op, "%src", call.operands[0], src_spaces)
        check_ptr(op, "%dst", call.operands[1], dst_spaces)
        check_int(op, "%len_burst", call.operands[2], 1, U16)
        if "nburst" not in call.clauses:
            raise IllegalOperand("nburst(%n_burst, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                                 hint="add nburst=(n_burst, src_gap, dst_gap) (gaps in 32-byte units)")
        n, sg, dg = call.clauses["nburst"][0]
        check_int(op, "nburst(%n_burst)", n, 1, 4095)
        check_int(op, "nburst(%src_gap)", sg, 0, U16)
        check_int(op, "nburst(%dst_gap)", dg, 0, U16)
    return verify


_MTE_UB_UB = _exec_32b_units("pto.mte_ub_ub", "ub", "ub")

_NBURST_GAPS = Clause("nburst", "args", params=("%n_burst", "%src_gap", "%dst_gap"),
                      doc="burst count (1..4095) and gaps after each burst, in 32-byte units (required)")

register(OpSpec(
    "mte_ub_ub", "mte", "V",
    operands=(Operand("src", "ptr", ("ub",)), Operand("dst", "ptr", ("ub",)),
              Operand("len_burst", "int", doc="32-byte blocks per burst (1..65535)")),
    clauses=(_NBURST_GAPS,),
    execute=_MTE_UB_UB[0], bind=_MTE_UB_UB[1], bind_hole=_MTE_UB_UB[2], bind_dyn=_MTE_UB_UB[3], verify=_verify_32b_units(("ub",), ("ub",)),
    doc="UB -> UB copy in 32-byte units (copy_ubuf_to_ubuf; runs on PIPE_V per asc_copy_ub2ub)"))

register(OpSpec(
    "mte_l1_gm", "mte", "MTE3",
    operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", ("gm",)),
              Operand("len_burst", "int", doc="32-byte blocks per burst (1..65535)")),
    clauses=(_NBURST_GAPS,),
    execute=_exec_32b_units("pto.mte_l1_gm", "l1", "gm", gm_atomic=True)[0],
    verify=_verify_32b_units(("l1",), ("gm",)),
    doc="L1 -> GM copy in 32-byte units (copy_cbuf_to_gm, MTE3); honours the GM atomic mode"))


# ============================================================================ pto.mte_gm_ub / pto.mte_ub_gm


def _exec_mte_gm_ub(ctx, src, dst, *args, **clauses):
    groups, kw = _plan_mte_gm_ub(src, dst, *args, **clauses)
    copy_bursts(ctx, src, dst, groups, **kw)


def _plan_mte_gm_ub(src, dst, l2_cache_ctl, len_burst, nburst=None, loop=None, pad=None):
    """The checks and `copy_bursts` arguments ``(groups, keywords)`` of a `pto.mte_gm_ub`."""
    op = "pto.mte_gm_ub"
    check_int(op, "%l2_cache_ctl", l2_cache_ctl, 0, 3)
    length = check_int(op, "%len_burst", len_burst, 1, LEN_BURST_BYTES_MAX)
    groups = _burst_groups(op, {"nburst": nburst, "loop": loop}, count_max=U16, loop_max=(1 << 21) - 1)
    check_align(op, dst, BLOCK, "%dst")
    _require_stride_alignment(op, groups, 2, BLOCK, "UB")
    d = dst.dtype
    if pad is None and length % BLOCK == 0:
        return groups, {"src_row": length, "dst_row": length}
    if pad is None:
        # whole 32-byte UB blocks; an unaligned burst's tail is "dummy" data: copies of the burst's first
        # element (CCE copy_gm_to_ubuf_align_b8/16/32, cceapi_0093: "哑数据是在不进行padding的情况下,
        # 每个burst的第一个元素的复制")
        return groups, {"src_row": length, "dst_row": _round32(length), "fill_first": max(1, d.bits // 8)}
    params = pad[0]
    if d.bits < 8:
        raise IllegalOperand(f"pad(...) needs a byte-sized element type, got {d.name}", op=op, operand="pad",
                             value=d.name, hint="use a pointer of an 8/16/32-bit type for padded loads")
    size = d.bits // 8
    left = right = 0
    if len(params) == 2:
        raise IllegalOperand("pad(...) takes the value alone or the value with both padding counts", op=op,
                             operand="pad", value=params, hint="write pad=(value,) or pad=(value, left, right)")
    if len(params) == 3:
        left = check_int(op, "pad(%left_padding_count)", params[1], 0, 255)
        right = check_int(op, "pad(%right_padding_count)", params[2], 0, 255)
    word = np.asarray(params[0]).astype(d.storage).reshape(1).view(np.uint8)
    row = _round32(left * size + length + right * size)
    fill = np.tile(word, row // size)
    return groups, {"src_row": length, "dst_row": row, "dst_offset": left * size, "fill_row": fill}


def _verify_mte_gm_ub(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%gm_src", call.operands[0], ("gm",))
    check_ptr(op, "%ub_dst", call.operands[1], ("ub",))
    _burst_groups(op, call.clauses, count_max=U16, loop_max=(1 << 21) - 1)


def _exec_mte_ub_gm(ctx, src, dst, *args, **clauses):
    groups, kw = _plan_mte_ub_gm(src, dst, *args, **clauses)
    copy_bursts(ctx, src, dst, groups, atomic=atomic_mode(ctx), **kw)


def _plan_mte_ub_gm(src, dst, len_burst, nburst=None, l2_cache_ctl=None, loop=None):
    """The checks and `copy_bursts` arguments ``(groups, keywords)`` of a `pto.mte_ub_gm`."""
    op = "pto.mte_ub_gm"
    length = check_int(op, "%len_burst", len_burst, 1, LEN_BURST_BYTES_MAX)
    if l2_cache_ctl is not None:
        check_int(op, "l2_cache_ctl", l2_cache_ctl[0][0], 0, 15)
    groups = _burst_groups(op, {"nburst": nburst, "loop": loop}, count_max=U16, loop_max=(1 << 21) - 1)
    check_align(op, src, BLOCK, "%src")
    _require_stride_alignment(op, groups, 1, BLOCK, "UB")
    return groups, {"src_row": length, "dst_row": length}     # de-padding: only len_burst bytes


def _verify_mte_ub_gm(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%ub_src", call.operands[0], ("ub",))
    check_ptr(op, "%gm_dst", call.operands[1], ("gm",))
    _burst_groups(op, call.clauses, count_max=U16, loop_max=(1 << 21) - 1)


_GM_UB_BIND = _bind_bursts(_plan_mte_gm_ub)
_UB_GM_BIND = _bind_bursts(_plan_mte_ub_gm, atomic=True)

register(OpSpec(
    "mte_gm_ub", "mte", "MTE2",
    operands=(Operand("src", "ptr", ("gm",)), Operand("dst", "ptr", ("ub",)),
              Operand("l2_cache_ctl", "int", doc="L2 allocate hint 0..3 (no value effect)"),
              Operand("len_burst", "int", doc="bytes per burst row")),
    clauses=(_NBURST_STRIDES, _LOOP,
             Clause("pad", "args", params=("%pad_value", "%left_padding_count", "%right_padding_count"),
                    min_params=1, doc="pad value and optional left/right element counts")),
    execute=_exec_mte_gm_ub, verify=_verify_mte_gm_ub, bind=_GM_UB_BIND[0],
    bind_hole=_GM_UB_BIND[1], bind_dyn=_GM_UB_BIND[2],
    doc="GM -> UB byte bursts (vector DMA load); UB rows written in whole 32-byte blocks"))

register(OpSpec(
    "mte_ub_gm", "mte", "MTE3",
    operands=(Operand("src", "ptr", ("ub",)), Operand("dst", "ptr", ("gm",)),
              Operand("len_burst", "int", doc="bytes per burst row")),
    clauses=(_NBURST_STRIDES,
             Clause("l2_cache_ctl", "args", params=("%l2_cache_ctl",), doc="GM store L2 hint 0..15 (no value effect)"),
             _LOOP),
    execute=_exec_mte_ub_gm, verify=_verify_mte_ub_gm, bind=_UB_GM_BIND[0],
    bind_hole=_UB_GM_BIND[1], bind_dyn=_UB_GM_BIND[2],
    doc="UB -> GM byte bursts (vector DMA store); only len_burst bytes per row reach GM"))


# ============================================================================ pto.raw_fill_l1


def _exec_raw_fill_l1(ctx, dst, byte_offset, raw_value, repeat_times, block_num_32b, dst_gap_32b,
                      fill_word_bits=None):
    op = "pto.raw_fill_l1"
    if fill_word_bits is None:
        raise IllegalOperand("the fill_word_bits attribute (16 or 32) is required", op=op, operand="fill_word_bits",
                             hint="add fill_word_bits=16 or fill_word_bits=32")
    off = check_int(op, "%byte_offset", byte_offset, 0)
    reps = check_int(op, "%repeat_times", repeat_times, 0, 32767)
    blocks = check_int(op, "%block_num_32b", block_num_32b, 0, 32767)
    gap = check_int(op, "%dst_gap_32b", dst_gap_32b, 0, 32767)
    if off % BLOCK:
        raise Misaligned(f"byte offset {off} is not a multiple of 32", op=op, operand="%byte_offset", value=off,
                         limit="32 B", hint="fill whole 32-byte blocks")
    check_align(op, dst, BLOCK, "%dst")
    if reps == 0 or blocks == 0:
        return
    if fill_word_bits == 16:
        word = np.array([int(raw_value) & 0xFFFF], np.uint16)
    else:
        word = np.array([int(raw_value) & 0xFFFFFFFF], np.uint32)
    row = blocks * BLOCK
    pattern = np.tile(word.view(np.uint8), row // word.itemsize)
    start = dst.byte_offset(off)
    groups = [(reps, 0, (blocks + gap) * BLOCK)]
    ddata, dwritten, _ = ctx.span_tracked(start, 0, _extent(groups, 2, row), write=True, operand="%dst")
    _burst_view(ddata, groups, row, True, 2)[...] = pattern
    _burst_view(dwritten, groups, row, True, 2)[...] = True


def _verify_raw_fill_l1(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%dst", call.operands[0], ("l1",))
    if "fill_word_bits" not in call.clauses:
        raise IllegalOperand("the fill_word_bits attribute (16 or 32) is required", op=op, operand="fill_word_bits",
                             hint="add fill_word_bits=16 or fill_word_bits=32")


register(OpSpec(
    "raw_fill_l1", "mte", "MTE2",
    operands=(Operand("dst", "ptr", ("l1",)), Operand("byte_offset", "int"), Operand("raw_value", "int"),
              Operand("repeat_times", "int"), Operand("block_num_32b", "int"), Operand("dst_gap_32b", "int")),
    clauses=(Clause("fill_word_bits", "attr", values=(16, 32), doc="16: low 16 bits repeated; 32: all 32 bits"),),
    execute=_exec_raw_fill_l1, verify=_verify_raw_fill_l1,
    doc="fill strided runs of 32-byte L1 blocks with a raw 16/32-bit word"))


# ============================================================================ pto.mte_gm_l1_frac (ND/DN -> Nz)


def _exec_mte_gm_l1_frac(ctx, src, dst, nd2nz=None, dn2nz=None, shape=None, src_layout=None, dst_group=None,
                         ctrl=None):
    op = "pto.mte_gm_l1_frac"
    _frac_static(op, src, dst, {"nd2nz": nd2nz, "dn2nz": dn2nz, "shape": shape, "src_layout": src_layout,
                                "dst_group": dst_group, "ctrl": ctrl})
    n, dv = (check_int(op, f"shape({p})", v, 1) for p, v in zip(("%n_value", "%d_value"), shape[0]))
    inner = check_int(op, "src_layout(%src_inner_stride)", src_layout[0][0], 0)
    outer = check_int(op, "src_layout(%src_outer_stride)", src_layout[0][1], 0) if len(src_layout[0]) > 1 else 0
    g, l2, l3, l4 = (check_int(op, f"dst_group({p})", v, 1 if p == "%group_count" else 0)
                     for p, v in zip(("%group_count", "%dst_loop2_stride", "%dst_loop3_stride", "%dst_loop4_stride"),
                                     dst_group[0]))
    check_int(op, "ctrl(%l2_cache_ctrl)", ctrl[0][0], 0)
    small = bool(ctrl[0][1])
    if small and dv > 4:
        raise IllegalOperand(f"small-C0 mode packs at most 4 channels, d_value is {dv}", op=op,
                             operand="ctrl(%smallc0_en)", value=dv, limit="d_value <= 4",
                             hint="disable smallc0_en or load at most 4 channels")
    check_align(op, dst, BLOCK, "%dst")
    d = src.dtype
    mode = "nd2nz" if nd2nz else "dn2nz"
    c0 = d.c0

    # ---- source rows: (G, rows, row_bytes) with rows = N (nd2nz) or D (dn2nz)
    row_elems, rows = (dv, n) if mode == "nd2nz" else (n, dv)
    if d.bits < 8 and row_elems % 2:
        raise IllegalOperand(f"packed 4-bit rows must hold an even number of elements, got {row_elems}", op=op,
                             operand="shape", value=row_elems, hint="pad the 4-bit source rows to an even length")
    row_bytes = d.nbytes(row_elems)
    groups = [(rows, inner, 0), (g, outer, 0)]
    sdata, swritten, _ = ctx.span_tracked(src, 0, _extent(groups, 1, row_bytes), operand="%src")
    track = tracking(ctx)
    # Every source byte written (the usual case): every destination byte this op produces is
    # written too, so the flags are set over the footprint instead of being moved like the data.
    src_all_written = track and FAST_PATHS and bool(_burst_view(swritten, groups, row_bytes, False, 1).all())
    planes = [(sdata, False)] + ([(swritten, True)] if track and not src_all_written else [])
    d1 = -(-dv // c0)
    if not small:
        _check_frac_overlap(op, g, d1, n, l2, l3, l4)
        shape4 = (g, d1, n, BLOCK)
        strides4 = (l4 * BLOCK, l3 * BLOCK, l2 * BLOCK, 1)
        d_hi = sum((c - 1) * st for c, st in zip(shape4[:3], strides4[:3])) + BLOCK
    else:
        total = _round32(d.nbytes(n * 4))
        d_hi = (g - 1) * l4 * BLOCK + total
    ddata, dwritten, _ = ctx.span_tracked(dst, 0, d_hi, write=True, operand="%dst")
    for plane, is_flags in planes:
        target = dwritten if is_flags else ddata
        rows_view = _burst_view(plane, groups, row_bytes, False, 1)                 # (G, rows, row_bytes)
        if small:
            out = _small_c0_rows(rows_view, d, mode, n, dv, total, is_flags)
            _burst_view(target, [(g, 0, l4 * BLOCK)], total, True, 2)[...] = out
            continue
        if FAST_PATHS and mode == "nd2nz" and dv == d1 * c0:
            # row-major source without padding: each destination block is 32 contiguous source bytes,
            # so the repack is one copy of 32-byte items (any element width, 4-bit included)
            blocks = np.ndarray((g, d1, n), _BLOCK_ITEM, plane, 0, (outer, BLOCK, inner))
            np.ndarray((g, d1, n), _BLOCK_ITEM, target, 0, strides4[:3])[...] = blocks
            continue
        dstv = strided(target, shape4, strides4, True)
        if d.bits >= 8 and dv == d1 * c0:         # no padding: one strided element copy, no temporaries
            size = d.bits // 8
            el = rows_view.view(_UINT[size])                                      # (G, rows, row_elems)
            gs, rs, es = el.strides
            src4 = as_strided(el, (g, d1, n, c0), (gs, c0 * es, rs, es) if mode == "nd2nz" else (gs, c0 * rs, es, rs))
            dstv.view(_UINT[size])[...] = src4
            continue
        dstv[...] = _nz_blocks(rows_view, d, mode, n, dv, d1, is_flags).transpose(0, 2, 1, 3)
    if src_all_written:
        if small:
            _burst_view(dwritten, [(g, 0, l4 * BLOCK)], total, True, 2)[...] = True
        else:
            strided(dwritten, shape4, strides4, True)[...] = True


#: One 32-byte C0 block as a single numpy item (block copies move 32 bytes per element).
_BLOCK_ITEM = np.dtype((np.void, BLOCK))


def _logical_rows(rows_view: np.ndarray, d: DType, mode: str, is_flags: bool) -> np.ndarray:
    """(G, N, D) elements (or per-element written flags) from source rows."""
    el = (flags_to_elems if is_flags else to_elems)(rows_view, d)
    return el if mode == "nd2nz" else el.transpose(0, 2, 1)


def _padded(el: np.ndarray, d: DType, width: int, is_flags: bool) -> np.ndarray:
    """``el`` (G, N, D) padded to ``width`` elements with zeros (flags: with 'written')."""
    g, n, dv = el.shape
    if dv == width:
        return el
    if is_flags:
        out = flags_to_elems(np.ones((g, n, d.nbytes(width)), np.bool_), d).reshape(g, n, width)
    else:
        out = np.zeros((g, n, width), el.dtype)
    out[:, :, :dv] = el
    return out


def _nz_blocks(rows_view, d: DType, mode: str, n: int, dv: int, d1: int, is_flags: bool) -> np.ndarray:
    """(G, N, D1, 32) destination bytes: D padded with zero lanes to whole C0 blocks."""
    el = _padded(_logical_rows(rows_view, d, mode, is_flags), d, d1 * d.c0, is_flags)
    g = el.shape[0]
    back = flags_from_elems if is_flags else from_elems
    return back(el.reshape(g, n, d1, d.c0), d).reshape(g, n, d1, BLOCK)


def _small_c0_rows(rows_view, d: DType, mode: str, n: int, dv: int, total: int, is_flags: bool) -> np.ndarray:
    """Small-C0 packing: each row n as 4 channels (missing ones zero), rows contiguous, tail padded to 32 bytes."""
    el = _padded(_logical_rows(rows_view, d, mode, is_flags), d, 4, is_flags)
    g = el.shape[0]
    raw = (flags_from_elems if is_flags else from_elems)(el.reshape(g, n * 4), d)
    out = (np.ones if is_flags else np.zeros)((g, total), raw.dtype)
    out[:, :raw.shape[1]] = raw
    return out


def _check_frac_overlap(op, g, d1, n, l2, l3, l4) -> None:
    """Destination 32-byte blocks of different (group, d-block, row) must not coincide (spec: unstable result)."""
    if (n == 1 or l2 >= 1) and (d1 == 1 or l3 >= n * l2) and (g == 1 or l4 >= d1 * l3):
        return
    idx = (np.arange(g)[:, None, None] * l4 + np.arange(d1)[None, :, None] * l3
           + np.arange(n)[None, None, :] * l2).ravel()
    if np.unique(idx).size != idx.size:
        raise IllegalOperand(f"destination blocks overlap: dst_group(loop2={l2}, loop3={l3}, loop4={l4}) places "
                             f"{idx.size} 32-byte blocks on {np.unique(idx).size} distinct addresses", op=op,
                             operand="dst_group", value=(g, l2, l3, l4),
                             limit="non-overlapping blocks, e.g. loop2 >= 1, loop3 >= n_value*loop2, "
                                   "loop4 >= d_blocks*loop3",
                             hint="for one Nz tile of R rows use dst_group(1, 1, R, 0)")


def _frac_static(op, src, dst, clauses) -> None:
    check_ptr(op, "%src", src, ("gm",))
    check_ptr(op, "%dst", dst, ("l1",))
    if not clauses.get("nd2nz") and not clauses.get("dn2nz"):
        raise IllegalOperand("the mode keyword nd2nz or dn2nz is required", op=op, operand="nd2nz|dn2nz",
                             hint="pass nd2nz=True (row-major source) or dn2nz=True (column-major source)")
    for name in ("shape", "src_layout", "dst_group", "ctrl"):
        if clauses.get(name) is None:
            raise IllegalOperand(f"the {name}(...) group is required", op=op, operand=name,
                                 hint="write shape=(n, d), src_layout=(inner[, outer]), "
                                      "dst_group=(groups, loop2, loop3, loop4), ctrl=(l2_cache_ctrl, smallc0_en)")
    sd, dd = _dt(src), _dt(dst)
    if sd is not None and dd is not None and sd.bits != dd.bits:
        raise IllegalOperand(f"source and destination element types differ in size ({sd.name} vs {dd.name})", op=op,
                             operand="%dst", value=dd.name, hint="use the same element type on both pointers")


def _verify_mte_gm_l1_frac(call, target):
    _frac_static(call.spec.asm_name, call.operands[0], call.operands[1], call.clauses)


register(OpSpec(
    "mte_gm_l1_frac", "mte", "MTE2",
    operands=(Operand("src", "ptr", ("gm",)), Operand("dst", "ptr", ("l1",))),
    clauses=(Clause("nd2nz", "flag", group="mode", doc="source is row-major src[n, d]"),
             Clause("dn2nz", "flag", group="mode", doc="source is column-major src[d, n]"),
             Clause("shape", "args", params=("%n_value", "%d_value"), doc="logical N x D (elements)"),
             Clause("src_layout", "args", params=("%src_inner_stride", "%src_outer_stride"), min_params=1,
                    doc="source row / matrix byte strides (outer default 0)"),
             Clause("dst_group", "args",
                    params=("%group_count", "%dst_loop2_stride", "%dst_loop3_stride", "%dst_loop4_stride"),
                    doc="groups; destination strides in 32-byte units between rows (loop2), C0 column blocks "
                        "(loop3) and groups (loop4)"),
             Clause("ctrl", "args", params=("%l2_cache_ctrl", "%smallc0_en"), doc="cache hint, small-C0 packing")),
    execute=_exec_mte_gm_l1_frac, verify=_verify_mte_gm_l1_frac,
    doc="GM ND/DN -> L1 Nz repack; D padded with zeros to whole 32-byte C0 blocks"))


# ============================================================================ fractal block moves (L1 -> L0A / L0B)


def _grid(ctx, ptr, first: int, shape: tuple, strides: tuple, unit: int, *, write: bool, operand: str,
          flags: bool = True):
    """Strided ``shape + (unit,)`` byte view (and written view; None unless ``flags``) of a 2-D grid
    (``shape`` = (rows, columns), ``strides`` in bytes) of ``unit``-byte blocks."""
    (r, c), (sr, sc) = shape, strides
    hi = first + (r - 1) * sr + (c - 1) * sc + unit
    data, written, _ = ctx.span_tracked(ptr, first, hi, write=write, operand=operand)
    full = shape + (unit,)
    st = strides + (1,)
    return strided(data, full, st, write), strided(written, full, st, write) if flags else None


def transpose_fractals(blocks: np.ndarray, flags: np.ndarray, d: DType, op: str):
    """Element-level transpose of the logical matrix held by a ``(m_step, k_step, 512)`` fractal grid.

    Returns the transposed matrix as a ``(I, J, 512)`` grid of 16 x C0 fractals, and
    the written flags transposed alike (``flags=None`` skips them).
    """
    c0 = d.c0
    ms, ks = blocks.shape[:2]
    rows_x, cols_x = c0 * ks, 16 * ms
    if rows_x % 16 or cols_x % c0:
        need = "k_step even (16 x 16 granularity of 32-bit types)" if rows_x % 16 else (
            f"m_step a multiple of {c0 // 16} ({c0} x {c0} granularity of {d.name})")
        raise IllegalOperand(f"transpose needs whole destination fractals: the selected {16 * ms} x {c0 * ks} "
                             f"region of {d.name} transposes to {rows_x} x {cols_x}, which is not a multiple of "
                             f"16 x {c0}", op=op, operand="transpose", value=(ms, ks), limit=need,
                             hint="round the extents up to the transpose granularity")
    out = []
    for arr, conv, back in ((blocks, to_elems, from_elems), (flags, flags_to_elems, flags_from_elems)):
        if arr is None:
            out.append(None)
            continue
        e = conv(np.ascontiguousarray(arr), d).reshape(ms, ks, 16, c0)
        s = e.transpose(0, 2, 1, 3).reshape(16 * ms, c0 * ks)
        x = np.ascontiguousarray(s.T).reshape(rows_x // 16, 16, cols_x // c0, c0).transpose(0, 2, 1, 3)
        out.append(back(np.ascontiguousarray(x).reshape(rows_x // 16, cols_x // c0, 16 * c0), d)
                   .reshape(rows_x // 16, cols_x // c0, FRACTAL))
    return out[0], out[1]


def copy_fractals(dv: np.ndarray, sv: np.ndarray) -> None:
    """``dv[...] = sv`` for byte grids of whole fractals (last axis FRACTAL), moved as 8-byte words (the same bytes;
    about half the time of a byte-wise strided copy). Each fractal is 512 contiguous bytes in both."""
    try:
        dv.view(np.uint64)[...] = sv.view(np.uint64)
    except ValueError:           # a view numpy cannot reinterpret (never for whole fractals): copy bytes
        dv[...] = sv


def move_fractals(ctx, op: str, src, dst, ctl: tuple, transpose: bool, dst_outer: str) -> None:
    """The full-control L1 -> L0 load.

    Source grid: fractal ``(i, j)`` (i: 16-row block, j: 32-byte column block) at
    ``src + ((k_start + j) * src_stride + m_start + i) * 512`` (Nz geometry). The
    selected ``m_step x k_step`` region (or its transpose) is written as fractal
    ``(I, J)`` at ``dst + (J * dst_stride + I) * 512`` (``dst_outer="col"``: Nz) or
    ``dst + (I * dst_stride + J) * 512`` (``"row"``: Zz).
    """
    move_planned(ctx, op, src, dst, move_plan(ctl, transpose, dst_outer))


def _dst_geometry(rows: int, cols: int, dst_stride: int, dst_outer: str) -> tuple:
    """``(shape, strides, dense)`` of the destination grid of ``rows x cols`` fractals (`move_fractals`);
    ``dense``: the fractals lie back to back."""
    strides = (FRACTAL, dst_stride * FRACTAL, 1) if dst_outer == "col" else (dst_stride * FRACTAL, FRACTAL, 1)
    inner, outer = (rows, cols) if dst_outer == "col" else (cols, rows)
    return (rows, cols, FRACTAL), strides, dst_stride == inner or outer == 1


def move_plan(ctl: tuple, transpose: bool, dst_outer: str) -> tuple:
    """The byte geometry of one `move_fractals` (a bound load keeps it per op site): source span
    ``[first, hi)`` and its grid, the destination's (None when ``transpose``: it follows the
    transposed grid), and what `move_planned` needs besides."""
    m_start, k_start, m_step, k_step, src_stride, dst_stride = ctl
    first = (k_start * src_stride + m_start) * FRACTAL
    hi = first + (m_step - 1) * FRACTAL + (k_step - 1) * src_stride * FRACTAL + FRACTAL
    dst_geo = None if transpose else _dst_geometry(m_step, k_step, dst_stride, dst_outer)
    return first, hi, (m_step, k_step, FRACTAL), (FRACTAL, src_stride * FRACTAL, 1), transpose, dst_stride, \
        dst_outer, dst_geo


def move_planned(ctx, op: str, src, dst, plan: tuple) -> None:
    """`move_fractals` of a `move_plan`: the same spans, checks, bytes and written flags."""
    first, hi, sshape, sstrides, transpose, dst_stride, dst_outer, dst_geo = plan
    track = ctx.machine.options.uninitialized != "off"          # `tracking`
    data, written, _ = ctx.span_tracked(src, first, hi, write=False, operand="%src")
    sv = strided(data, sshape, sstrides)
    sw = strided(written, sshape, sstrides) if track else None
    if transpose:
        sv, sw = transpose_fractals(sv, sw, src.dtype, op)
        dst_geo = _dst_geometry(sv.shape[0], sv.shape[1], dst_stride, dst_outer)
    shape, strides, dense = dst_geo
    n = shape[0] * shape[1] * FRACTAL
    if track and dense and all_written(sw):
        # every source byte written, destination fractals back to back: one span marked written whole
        raw, _ = ctx.span(dst, 0, n, write=True, operand="%dst")
        copy_fractals(strided(raw, shape, strides, True), sv)
        return
    hi = (shape[0] - 1) * strides[0] + (shape[1] - 1) * strides[1] + FRACTAL
    data, written, _ = ctx.span_tracked(dst, 0, hi, write=True, operand="%dst")
    copy_fractals(strided(data, shape, strides, True), sv)
    if track:
        strided(written, shape, strides, True)[...] = sw


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


_SHAPE_CONTROLS: dict = {}


def _shape_form_control(op: str, side: str, d: DType, a: int, b: int, start_row: int, start_col: int,
                        transpose: bool, zz_dst: bool) -> tuple:
    """`_shape_form_control_uncached`, memoised per argument values *and types* (a float or bool never
    finds the entry of an equal int, so every check still runs for them)."""
    key = (op, side, d.name, a, b, start_row, start_col, transpose, zz_dst,
           type(a), type(b), type(start_row), type(start_col))
    try:
        ctl = _SHAPE_CONTROLS.get(key)
    except TypeError:            # unhashable operand: the checks below reject it
        ctl, key = None, None
    if ctl is None:
        ctl = _shape_form_control_uncached(op, side, d, a, b, start_row, start_col, transpose, zz_dst)
        if key is not None and len(_SHAPE_CONTROLS) < 4096:
            _SHAPE_CONTROLS[key] = ctl
    return ctl


def _check_transpose_fits(op: str, side: str, d: DType, names: tuple, rows: int, cols: int, r_al: int,
                          c_al: int, zz_dst: bool) -> None:
    """Named choice TRANSPOSE_SHAPE_FITS: a transposing shape-form load must fit the tile ``pto.mad`` reads.

    ``pto.mad`` has only m, n, k as geometry operands: it reads L0A as the ``round16(m) x
    round_C0(k)`` tile and L0B as ``round_C0(k) x round16(n)``. A transposing load moves
    whole ``g x g`` blocks (``g = max(16, C0)``) and strides its destination fractals by the
    ``g``-rounded extent. When that extent has more fractals than the mad's tile on the
    stride axis (8-bit types: m or n with ``x % 32`` in 1..16; 32-bit types on a Zz L0A: k
    with ``k % 16`` in 1..8) and more than one block is written along the other axis, the
    blocks after the first land where the mad reads something else. The VPTO text says the
    shape "must fit the dtype's transpose granularity": such shapes are rejected (a single
    block row/column still loads, its extra padding fractals going past the tile).
    """
    g = max(16, d.c0)
    if zz_dst:      # fractal rows strided by the column count
        ext, al, unit, other = cols, c_al, d.c0, r_al // 16
        name = names[1] if side == "a" else names[0]
    else:           # fractal columns strided by the row count
        ext, al, unit, other = rows, r_al, 16, c_al // d.c0
        name = names[0] if side == "a" else names[1]
    native = _ceil(ext, unit) * unit
    if al != native and other > 1:
        raise IllegalOperand(
            f"transpose moves whole {g} x {g} blocks of {d.name}: {name} = {ext} rounds up to {al}, but the "
            f"{'L0A' if side == 'a' else 'L0B'} tile that pto.mad reads for {name} = {ext} is {native} wide on "
            f"that axis, so the {other} transposed fractal blocks along the other axis would be laid out with a "
            f"stride the mad does not use (the shape must fit the dtype's transpose granularity)",
            op=op, operand=name, value=ext,
            limit=f"a multiple of {g}, or a value whose round-up to {unit} equals its round-up to {g}",
            hint=f"pad {name} to {al} (and pass {al} to pto.mad too), or load without transpose")


def _shape_form_control_uncached(op: str, side: str, d: DType, a: int, b: int, start_row: int, start_col: int,
                                 transpose: bool, zz_dst: bool) -> tuple:
    """Full-control tuple for the shape-derived ``mte_l1_l0a`` (a=m, b=k) / ``mte_l1_l0b`` (a=k, b=n) form.

    Derivation (PTOAS lowering of the shape form, A5): the source tile is addressed as
    an Nz grid exactly as tall as the selected extent, hence ``start_row`` must be 0 and
    ``start_col`` (elements) must be a multiple of C0.
    """
    c0 = d.c0
    names = ("%m", "%k") if side == "a" else ("%k", "%n")
    a = check_int(op, names[0], a, 1)
    b = check_int(op, names[1], b, 1)
    check_int(op, "%start_row", start_row, 0)
    check_int(op, "%start_col", start_col, 0)
    if start_row:
        raise IllegalOperand(f"start_row must be 0 in the shape-derived form (got {start_row}): it addresses a "
                             f"source Nz tile exactly as tall as the loaded extent (src_stride = that height in "
                             f"fractals), so a row offset would read the next column block", op=op,
                             operand="%start_row", value=start_row, limit="0",
                             hint="use the full-control form (m_start, k_start, m_step, k_step, src_stride, "
                                  "dst_stride) to extract rows of a taller L1 tile")
    if start_col % c0:
        raise IllegalOperand(f"start_col {start_col} is not a multiple of the {c0}-element C0 block of {d.name}",
                             op=op, operand="%start_col", value=start_col, limit=f"multiple of {c0}",
                             hint="start at a 32-byte column block")
    k_start = start_col // c0
    if side == "a":
        rows_dst, cols_dst = a, b       # destination logical M x K
    else:
        rows_dst, cols_dst = b, a       # L0B holds X = B^T (N x K) in Nz geometry
    if not transpose:
        m_step, k_step = _ceil(rows_dst, 16), _ceil(cols_dst, c0)
        src_stride = m_step
    else:
        g = max(16, c0)
        r_al, c_al = _ceil(rows_dst, g) * g, _ceil(cols_dst, g) * g
        _check_transpose_fits(op, side, d, names, rows_dst, cols_dst, r_al, c_al, zz_dst)
        m_step, k_step = c_al // 16, r_al // c0     # source grid is the transposed matrix (c_al x r_al)
        src_stride = m_step
        rows_dst, cols_dst = r_al, c_al
    dst_rows_f, dst_cols_f = _ceil(rows_dst, 16), _ceil(cols_dst, c0)
    dst_stride = dst_cols_f if zz_dst else dst_rows_f
    if m_step > 255 or k_step > 255:
        raise IllegalOperand(f"the extent needs {max(m_step, k_step)} fractal blocks on one axis (field limit 255)",
                             op=op, operand=f"{names[0]}/{names[1]}", value=(a, b), limit="255 blocks per axis",
                             hint="split the load into smaller tiles")
    return (0, k_start, m_step, k_step, src_stride, dst_stride)


_FULL_CONTROLS: dict = {}
_FULL_CONTROL_FIELDS = (("%m_start", 0, U16), ("%k_start", 0, U16), ("%m_step", 1, 255), ("%k_step", 1, 255),
                        ("%src_stride", 1, U16), ("%dst_stride", 1, U16))


_ONLY_INT = {int}


def _full_control(op: str, vals) -> tuple:
    """The six checked full-control fields; tuples of plain ints that passed once are remembered."""
    plain = set(map(type, vals)) == _ONLY_INT             # every value a plain int (not a bool, float, ...)
    ctl = _FULL_CONTROLS.get(vals) if plain else None
    if ctl is None:
        ctl = tuple(check_int(op, n, v, lo, hi) for v, (n, lo, hi) in zip(vals, _FULL_CONTROL_FIELDS))
        if len(_FULL_CONTROLS) < 4096 and plain:
            _FULL_CONTROLS[tuple(vals)] = ctl
    return ctl


def _l1_l0_static(op: str, operands: tuple, dst_space: str) -> None:
    check_ptr(op, "%src", operands[0], ("l1",))
    check_ptr(op, "%dst", operands[1], (dst_space,))
    n = len(operands) - 2
    if n not in (2, 4, 6):
        raise IllegalOperand(f"takes 2 or 4 shape operands or 6 full-control operands after the pointers, got {n}",
                             op=op, value=n, hint="shape form: (m, k[, start_row, start_col]); full-control: "
                                                  "(m_start, k_start, m_step, k_step, src_stride, dst_stride)")
    sd, dd = _dt(operands[0]), _dt(operands[1])
    if sd is not None and dd is not None and sd.bits != dd.bits:
        raise IllegalOperand(f"source and destination element types differ in size ({sd.name} vs {dd.name})", op=op,
                             operand="%dst", value=dd.name, hint="use the same element type on both pointers")


#: A full- or shape-form L1 -> L0A/L0B load whose operands are all compile-time values binds
#: (`OpSpec.bind`): its operand checks and control tuple run once per target and op site (a failing
#: check is not kept; the memory, initialisation and hazard checks of the move run every time).
MTE_L1_L0_BIND = True


def _exec_l1_l0(side: str):
    op = "pto.mte_l1_l0a" if side == "a" else "pto.mte_l1_l0b"
    dst_space = "l0a" if side == "a" else "l0b"

    def plan(target, src, dst, vals, transpose) -> tuple:
        """The checked `move_plan` of one load on ``target``."""
        if len(vals) not in (2, 4, 6):   # spaces and types were checked by verify()
            _l1_l0_static(op, (src, dst) + vals, dst_space)
        check_align(op, src, BLOCK, "%src")
        check_align(op, dst, BLOCK, "%dst")
        d = src.dtype
        zz = side == "a" and l0a_layout(target) == "Zz"
        if len(vals) == 6:
            ctl = _full_control(op, vals)
        else:
            a, b = vals[:2]
            sr, sc = vals[2:] if len(vals) == 4 else (0, 0)
            ctl = _shape_form_control(op, side, d, a, b, sr, sc, bool(transpose), zz)
        return move_plan(ctl, bool(transpose), "row" if zz else "col")

    def execute(ctx, src, dst, *vals, transpose=None):
        move_planned(ctx, op, src, dst, plan(ctx.target, src, dst, vals, transpose))

    def bind(args, clauses):
        """`OpSpec.bind`: a load whose operands are all compile-time values checks them once per target
        (a failing check is not kept, so it raises again on every run) and keeps its plan per op site."""
        if not MTE_L1_L0_BIND or not set(clauses) <= {"transpose"}:
            return None
        src, dst, vals, transpose = args[0], args[1], tuple(args[2:]), clauses.get("transpose")
        memo = [None, None]                 # the target the checks passed for, and the plan

        def run(ctx):
            if ctx.target is not memo[0]:
                checked = plan(ctx.target, src, dst, vals, transpose)
                memo[0], memo[1] = ctx.target, checked
            move_planned(ctx, op, src, dst, memo[1])
        return run
    return execute, bind


def _verify_l1_l0(side: str):
    def verify(call, target):
        _l1_l0_static(call.spec.asm_name, call.operands, "l0a" if side == "a" else "l0b")
    return verify


def l0a_layout(target) -> str:
    """Layout of L0A on ``target``: ``"Zz"`` (A2A3, KirinX90 and legacy SoCs) or ``"Nz"`` (A5, Kirin9030)."""
    return _l0a_layout_of_arch(target.arch, target)


_L0A_BY_ARCH: dict = {}


def _l0a_layout_of_arch(arch: str, target) -> str:
    lay = _L0A_BY_ARCH.get(arch)
    if lay is None:
        from ..tassign import default_layout   # the single source of the per-arch tile layouts
        lay = _L0A_BY_ARCH[arch] = default_layout("Left", target)[0]
    return lay


_TRANSPOSE = Clause("transpose", "attr", values=(True, False), doc="transpose the selected logical region")

_L1_L0 = {"a": _exec_l1_l0("a"), "b": _exec_l1_l0("b")}

for _side, _desc in (("a", ("m", "k", "left tile M x K into L0A (Zz on A2A3-class, Nz on A5-class)")),
                     ("b", ("k", "n", "right tile K x N into L0B (Zn)"))):
    register(OpSpec(
        f"mte_l1_l0{_side}", "mte", "MTE1",
        operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", (f"l0{_side}",)),
                  Operand(f"{_desc[0]}|m_start", "int", doc=f"shape form: {_desc[0]}; full form: m_start (blocks)"),
                  Operand(f"{_desc[1]}|k_start", "int", doc=f"shape form: {_desc[1]}; full form: k_start (blocks)"),
                  Operand("start_row|m_step", "int", optional=True, doc="shape form: start_row; full: m_step"),
                  Operand("start_col|k_step", "int", optional=True, doc="shape form: start_col; full: k_step"),
                  Operand("src_stride", "int", optional=True, doc="full form: source column stride (fractals)"),
                  Operand("dst_stride", "int", optional=True, doc="full form: destination outer stride (fractals)")),
        clauses=(_TRANSPOSE,),
        execute=_L1_L0[_side][0], bind=_L1_L0[_side][1], verify=_verify_l1_l0(_side),
        doc=f"L1 Nz -> {_desc[2]}; shape form or full-control fractal-block form"))


# ============================================================================ MX scale loads


def _mx_group(op: str, vals: tuple, clauses: dict) -> tuple:
    full = {k: clauses.get(k) for k in ("x_start", "y_start", "x_step", "y_step", "src_stride", "dst_stride")}
    have_full = [k for k, v in full.items() if v is not None]
    if vals and have_full:
        raise IllegalOperand("the shape-derived operands and the full MX group are mutually exclusive", op=op,
                             operand=have_full[0], hint="give either (m, k[, start_row, start_col]) or all six "
                                                        "x_start/y_start/x_step/y_step/src_stride/dst_stride")
    if have_full:
        missing = [k for k, v in full.items() if v is None]
        if missing:
            raise IllegalOperand(f"incomplete full MX group: missing {', '.join(missing)}", op=op,
                                 operand=missing[0], hint="give all of x_start, y_start, x_step, y_step, "
                                                          "src_stride, dst_stride")
        return ("full",) + tuple(full[k][0][0] for k in full)
    if len(vals) == 2:          # the VPTO form ``%src, %dst, %m, %k``: the fragments from (0, 0)
        vals = tuple(vals) + (0, 0)
    if len(vals) != 4:
        raise IllegalOperand(f"the shape-derived group takes 2 operands (extent, extent) or 4 (extent, extent, "
                             f"start_row, start_col), got {len(vals)}", op=op, value=len(vals),
                             hint="or give the full MX group clauses")
    return ("shape",) + tuple(vals)


def _exec_mx(side: str):
    op = f"pto.mte_l1_l0{side}_mx"
    scale_space = f"l0{side}_scale"

    def execute(ctx, src, dst, *vals, x_start=None, y_start=None, x_step=None, y_step=None, src_stride=None,
                dst_stride=None):
        grp = _mx_group(op, vals, {"x_start": x_start, "y_start": y_start, "x_step": x_step, "y_step": y_step,
                                   "src_stride": src_stride, "dst_stride": dst_stride})
        if not ctx.target.has_space(scale_space):
            raise UnsupportedOp(f"{ctx.target.label} has no MX scale buffer ({scale_space})", op=op, operand="%dst",
                                value=ctx.target.name, hint="MX matmul exists on A5-class targets")
        check_align(op, src, BLOCK, "%src")
        check_align(op, dst, MX_ADDR_DIV, "%dst")
        if grp[0] == "shape":
            names = ("%m", "%k") if side == "a" else ("%k", "%n")
            e0 = check_int(op, names[0], grp[1], 1)
            e1 = check_int(op, names[1], grp[2], 1)
            xs = check_int(op, "%start_row", grp[3], 0, U16)
            ys = check_int(op, "%start_col", grp[4], 0, U16)
            outer, k = (e0, e1) if side == "a" else (e1, e0)
            pairs = _ceil(_ceil(k, 32), 2)
            xst, yst = _ceil(outer, 16), pairs
            sst = dstr = pairs
        else:
            names = ("x_start", "y_start", "x_step", "y_step", "src_stride", "dst_stride")
            limits = ((0, U16), (0, U16), (1, 255), (1, 255), (1, U16), (1, U16))
            xs, ys, xst, yst, sst, dstr = (check_int(op, n, v, lo, hi)
                                           for n, v, (lo, hi) in zip(names, grp[1:], limits))
        if xst > 255 or yst > 255:
            raise IllegalOperand(f"the scale extent needs {max(xst, yst)} fragments on one axis (field limit 255)",
                                 op=op, operand="%m" if side == "a" else "%n", value=max(xst, yst), limit="255",
                                 hint="split the load")
        sv, sw = _grid(ctx, src, (xs * sst + ys) * MX_FRAGMENT, (xst, yst), (sst * MX_FRAGMENT, MX_FRAGMENT),
                       MX_FRAGMENT, write=False, operand="%src")
        sptr = replace(dst, space=scale_space, addr=dst.addr // MX_ADDR_DIV)
        dv, dw = _grid(ctx, sptr, 0, (xst, yst), (dstr * MX_FRAGMENT, MX_FRAGMENT), MX_FRAGMENT, write=True,
                       operand="%dst")
        dv[...] = sv
        dw[...] = sw
    return execute


def _verify_mx(side: str):
    def verify(call, target):
        op = call.spec.asm_name
        check_ptr(op, "%src", call.operands[0], ("l1",))
        check_ptr(op, "%dst", call.operands[1], (f"l0{side}",))
        _mx_group(op, call.operands[2:], call.clauses)
        if not target.has_space(f"l0{side}_scale"):
            raise UnsupportedOp(f"{target.label} has no MX scale buffer (l0{side}_scale)", op=op, operand="%dst",
                                value=target.name, hint="MX matmul exists on A5-class targets")
    return verify


def _mx_clause(name: str, doc: str) -> Clause:
    return Clause(name, "args", params=(f"%{name}",), doc=doc)


for _side, _ext in (("a", ("m", "k")), ("b", ("k", "n"))):
    register(OpSpec(
        f"mte_l1_l0{_side}_mx", "mte", "MTE1",
        operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", (f"l0{_side}",)),
                  Operand(_ext[0], "int", optional=True), Operand(_ext[1], "int", optional=True),
                  Operand("start_row", "int", optional=True, doc="MX-fragment row offset"),
                  Operand("start_col", "int", optional=True, doc="MX-fragment column offset")),
        clauses=(_mx_clause("x_start", "first source fragment row"), _mx_clause("y_start", "first fragment column"),
                 _mx_clause("x_step", "fragment rows (16 data rows/cols each)"),
                 _mx_clause("y_step", "fragment columns (2 K groups each)"),
                 _mx_clause("src_stride", "source fragments per row"),
                 _mx_clause("dst_stride", "destination fragments per row")),
        execute=_exec_mx(_side), verify=_verify_mx(_side),
        doc=f"L1 -> L0{_side.upper()} MX scale fragments (E8M0, one per 32 K) stored at data address / 16"))
    # (its verifier's rule; for messages that name moves, registry.move_op_hint: not on chips without MX)
    register_availability(f"mte_l1_l0{_side}_mx", lambda target, scale=f"l0{_side}_scale": target.has_space(scale))


# ============================================================================ pto.mte_l1_bt / pto.mte_l1_fb


def _nburst_gaps(op: str, nburst, len_burst):
    if nburst is None:
        raise IllegalOperand("nburst(%count, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(count, src_gap, dst_gap) (load units)")
    c, sg, dg = nburst[0]
    return (check_int(op, "%len_burst", len_burst, 1, U16), check_int(op, "nburst(%count)", c, 1, U16),
            check_int(op, "nburst(%src_gap)", sg, 0, U16), check_int(op, "nburst(%dst_gap)", dg, 0, U16))


def _exec_mte_l1_bt(ctx, src, dst, len_burst, nburst=None):
    op = "pto.mte_l1_bt"
    _bt_types(op, src, dst)
    length, count, sg, dg = _nburst_gaps(op, nburst, len_burst)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    unit = BT_LOAD_UNIT.get(ctx.target.arch, 64)
    sd, dd = src.dtype, dst.dtype
    ssize = sd.bits // 8
    slot = BT_TYPE_PAIRS[(sd.name, dd.name)]
    widen = slot // ssize
    row = length * unit        # a whole number of values: units are multiples of 4 bytes
    groups = [(count, (length + sg) * unit, (length + dg) * unit * widen)]
    sdata, swritten, _ = ctx.span_tracked(src, 0, _extent(groups, 1, row), operand="%src")
    vals = _burst_view(sdata, groups, row, False, 1)
    flags = _burst_view(swritten, groups, row, False, 1)
    n = row // ssize
    v = np.ascontiguousarray(vals).view(sd.storage)           # (count, n)
    f = np.ascontiguousarray(flags).reshape(count, n, ssize).all(-1)
    if (sd.name, dd.name) in (("f16", "f32"), ("bf16", "f32")):
        out = v.astype(np.float32).view(np.uint8).reshape(count, n * 4)
    elif sd.name == dd.name == "f16":
        slots = np.zeros((count, n, 2), np.uint16)
        slots[:, :, 0] = v.view(np.uint16)
        out = slots.view(np.uint8).reshape(count, n * 4)
    else:
        out = v.view(np.uint8).reshape(count, n * 4)
    oflags = np.repeat(f, slot, axis=-1)
    ddata, dwritten, _ = ctx.span_tracked(dst, 0, _extent(groups, 2, n * slot), write=True, operand="%dst")
    _burst_view(ddata, groups, n * slot, True, 2)[...] = out
    _burst_view(dwritten, groups, n * slot, True, 2)[...] = oflags


def _bt_types(op, src, dst) -> None:
    sd, dd = _dt(src), _dt(dst)
    if sd is not None and dd is not None and (sd.name, dd.name) not in BT_TYPE_PAIRS:
        raise IllegalOperand(f"type pair {sd.name} -> {dd.name} is not supported", op=op, operand="%dst",
                             value=f"{sd.name}->{dd.name}",
                             limit=", ".join(f"{a}->{b}" for a, b in BT_TYPE_PAIRS),
                             hint="load f32/s32 bias as is; f16 and bf16 bias widen to f32")


def _verify_mte_l1_bt(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%src", call.operands[0], ("l1",))
    check_ptr(op, "%dst", call.operands[1], ("bt",))
    _bt_types(op, call.operands[0], call.operands[1])
    if "nburst" not in call.clauses:
        raise IllegalOperand("nburst(%count, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(count, src_gap, dst_gap) (load units)")


def _exec_mte_l1_fb(ctx, src, dst, len_burst, nburst=None):
    op = "pto.mte_l1_fb"
    length, count, sg, dg = _nburst_gaps(op, nburst, len_burst)
    check_align(op, src, BLOCK, "%src")
    check_align(op, dst, BLOCK, "%dst")
    row = length * FB_LOAD_UNIT
    copy_bursts(ctx, src, dst, [(count, (length + sg) * FB_LOAD_UNIT, (length + dg) * FB_LOAD_UNIT)],
                src_row=row, dst_row=row)


def _verify_mte_l1_fb(call, target):
    op = call.spec.asm_name
    check_ptr(op, "%src", call.operands[0], ("l1",))
    check_ptr(op, "%dst", call.operands[1], ("fb",))
    if "nburst" not in call.clauses:
        raise IllegalOperand("nburst(%count, %src_gap, %dst_gap) is required", op=op, operand="nburst",
                             hint="add nburst=(count, src_gap, dst_gap) (load units)")


_NBURST_GAPS = Clause("nburst", "args", params=("%count", "%src_gap", "%dst_gap"),
                      doc="burst count and gaps after each burst, in load units (required)")

register(OpSpec(
    "mte_l1_bt", "mte", "MTE1",
    operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", ("bt",)),
              Operand("len_burst", "int", doc="load units per burst (64 B on A2A3-class, 32 B on A5 of source)")),
    clauses=(_NBURST_GAPS,),
    execute=_exec_mte_l1_bt, verify=_verify_mte_l1_bt,
    doc="L1 -> bias table; f16/bf16 widen to f32 (32-bit slots)"))

register(OpSpec(
    "mte_l1_fb", "mte", "FIX",
    operands=(Operand("src", "ptr", ("l1",)), Operand("dst", "ptr", ("fb",)),
              Operand("len_burst", "int", doc="128-byte load units per burst")),
    clauses=(_NBURST_GAPS,),
    execute=_exec_mte_l1_fb, verify=_verify_mte_l1_fb,
    doc="L1 -> FIXPIPE parameter buffer, raw bytes in 128-byte units"))
