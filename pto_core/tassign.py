"""Tiles, ``TASSIGN`` placement (seed 003) and an auto-placement allocator.

A `Tile` is a ``rows x cols`` block of one dtype living in the memory space of its
tile type (``Vec`` -> UB, ``Mat`` -> L1, ``Left`` -> L0A, ``Right`` -> L0B, ``Acc`` ->
L0C, ``Bias`` -> BT, ``Scaling`` -> FB, ``ScaleLeft``/``ScaleRight`` -> MX scale
spaces), in a fractal layout (default per tile type and target, pto_spec.md §2.3).

Two ways to bind a tile to an address, as in the C++ library:

* `tassign` (``TASSIGN(tile, addr)``, runtime form): no static checks; the address is
  checked for bounds only when an op uses the tile's pointer.
* `tassign_checked` (``TASSIGN<Addr>(tile)``, compile-time form): runs the four
  static checks and reports **every** violated one in a `TassignError`:

  ======= ============================ ====================================================
  SA-0351 ``capacity > 0``             Memory space is not available on this architecture.
  SA-0352 ``tile_size <= capacity``    Tile storage size exceeds memory space capacity.
  SA-0353 ``addr + tile_size <= cap``  addr + tile_size exceeds memory space capacity (out of bounds).
  SA-0354 ``addr % alignment == 0``    addr is not properly aligned for the target memory space.
  ======= ============================ ====================================================

``tile_size`` is the static ``rows * cols * sizeof(dtype)``, capacity and alignment
come from the chip profile. `TileAllocator` places tiles automatically (first fit)
and fails with a `CapacityExceeded` that lists what occupies the space.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .dtypes import DType, dtype as _dtype
from .errors import CapacityExceeded, IllegalOperand, TassignError, UnknownName
from .layout import inner_box, layout_name
from .memory import Ptr
from .targets import ChipProfile, get_target, space_name

#: TileType -> memory space.
TILE_SPACES = {
    "Vec": "ub", "Mat": "l1", "Left": "l0a", "Right": "l0b", "Acc": "l0c",
    "Bias": "bt", "Scaling": "fb", "ScaleLeft": "l0a_scale", "ScaleRight": "l0b_scale",
}

TASSIGN_CHECKS = {
    "SA-0351": "Memory space is not available on this architecture.",
    "SA-0352": "Tile storage size exceeds memory space capacity.",
    "SA-0353": "addr + tile_size exceeds memory space capacity (out of bounds).",
    "SA-0354": "addr is not properly aligned for the target memory space.",
}
#: Fractal size (bytes) of an MX scale tile (pto-isa ``TileConfig::fractalMxSize``). A tile declared with it
#: (``ScaleLeft``/``ScaleRight`` by default, or an L1 ``Mat`` scale tile given ``fractal=32``) is exempt from
#: the whole-inner-box row rule, as in the C++ Tile template.
MX_FRACTAL_BYTES = 32
#: Fractal size (bytes) -> the fixed inner box (rows, cols) the C++ Tile template checks shapes against,
#: whatever the layout (pto-isa pto_tile.hpp getInnerRow/getInnerCol: fixedRowSize x fixedColSize for the
#: 1024 B Acc fractal, fixedMxRowSize x fixedMxColSize for the MX one). The data layout of the tiles is
#: `layout.inner_box`'s; only the shape rule uses this box.
TEMPLATE_FIXED_BOX = {1024: (16, 16), MX_FRACTAL_BYTES: (16, 2)}
#: The fix recipe the C++ library points to (docs/coding/debug.md FIX-A12), in our words.
FIX_A12 = ("FIX-A12: use a smaller tile or split the work into several tiles (SA-0352), move the tile to a lower "
           "address or shrink it so addr + size fits (SA-0353), round the address to the space's alignment "
           "(SA-0354), or pick a target that has this memory space (SA-0351)")


def tile_type_name(name: str) -> str:
    for k in TILE_SPACES:
        if str(name).lower() == k.lower():
            return k
    raise UnknownName(f"unknown tile type {name!r}", value=name, limit="one of " + ", ".join(TILE_SPACES))


def default_layout(tile_type: str, target: ChipProfile) -> tuple:
    """``(layout, fractal bytes)`` a tile type uses by default on ``target`` (pto_spec.md §2.3)."""
    t = tile_type_name(tile_type)
    if t == "Left":
        return ("Zz" if target.arch in ("a2a3", "kirinx90") else "Nz"), 512
    if t == "Right":
        return "Zn", 512
    if t == "Acc":
        return "Nz", 1024
    if t == "Mat":
        return "Nz", 512
    if t == "ScaleLeft":
        return "Zz", 32
    if t == "ScaleRight":
        return "Nn", 32
    return "ND", 512


@dataclass
class Tile:
    """A tile: type, dtype, static shape and layout; ``addr`` is set by TASSIGN.

    Args:
        tile_type: ``"Vec"``, ``"Mat"``, ``"Left"``, ``"Right"``, ``"Acc"``, ``"Bias"``,
            ``"Scaling"``, ``"ScaleLeft"``, ``"ScaleRight"``.
        dtype: element type.
        rows, cols: static shape (the valid region may be smaller).
        layout: ``None`` for the tile type's default on the target, or a layout name.
        fractal: fractal size in bytes (512 / 1024 / 32) for boxed layouts.
    """

    tile_type: str
    dtype: DType
    rows: int
    cols: int
    layout: Optional[str] = None
    fractal: int = 512
    addr: Optional[int] = None
    name: str = ""

    def __post_init__(self):
        self.tile_type = tile_type_name(self.tile_type)
        self.dtype = _dtype(self.dtype)
        if self.rows <= 0 or self.cols <= 0:
            raise IllegalOperand(f"tile shape {self.rows}x{self.cols} must be positive", operand="shape",
                                 value=(self.rows, self.cols), hint="give rows and cols >= 1")
        if self.layout is not None:
            self.layout = layout_name(self.layout)

    @property
    def space(self) -> str:
        return TILE_SPACES[self.tile_type]

    @property
    def nbytes(self) -> int:
        """Static storage size ``rows * cols * sizeof(dtype)`` in bytes."""
        return self.dtype.nbytes(self.rows * self.cols)

    def resolved_layout(self, target) -> tuple:
        t = get_target(target)
        if self.layout is not None:
            return self.layout, self.fractal
        return default_layout(self.tile_type, t)

    def validate_shape(self, target) -> None:
        """The Tile template's static shape rules (pto_spec.md §2.1): a boxed layout needs ``cols`` a
        multiple of the inner box's columns and ``rows`` of its rows (the row rule is waived for Vec tiles,
        tiles with the 32-byte MX scale fractal and one-row tiles); an unboxed row-major (ND) tile needs ``cols * sizeof`` a multiple
        of 32 B, an unboxed column-major (DN) tile ``rows * sizeof``. Raises `IllegalOperand`."""
        layout, fractal = self.resolved_layout(target)
        bits = self.dtype.bits
        if fractal in TEMPLATE_FIXED_BOX:
            # pto_tile.hpp getInnerRow/getInnerCol: the 1024 B (Acc) and 32 B (MX) fractals have a fixed box
            # whatever the layout (checked before the boxed/unboxed distinction)
            self._check_box(layout, fractal, *TEMPLATE_FIXED_BOX[fractal])
        if layout in ("ND", "DN"):
            n, what = (self.cols, "columns") if layout == "ND" else (self.rows, "rows")
            if n * bits % 256:               # in bits: 63 packed 4-bit values are 31.5 B, not a whole block
                raise IllegalOperand(
                    f"{self}: an unboxed {'row' if layout == 'ND' else 'column'}-major ({layout}) tile needs its "
                    f"{what} to fill whole 32-byte blocks ({n} {what} x {self.dtype.name} = {n * bits / 8:g} B)",
                    operand="shape", value=(self.rows, self.cols), limit=f"{what} * sizeof % 32 == 0",
                    hint=f"pad the tile's {what} to a multiple of {256 // math.gcd(256, self.dtype.bits)} "
                         f"(valid rows/columns may be smaller)", where=_user_site())
            return
        if fractal not in TEMPLATE_FIXED_BOX:
            self._check_box(layout, fractal, *inner_box(layout, self.dtype, fractal))

    def _check_box(self, layout, fractal, ir, ic) -> None:
        # pto_tile.hpp: `Loc == Vec || SFractalSize == fractalMxSize || Rows == 1`: the MX waiver follows the
        # 32 B fractal (an L1 `Mat` scale tile too), not the tile type
        rows_waived = self.tile_type == "Vec" or fractal == MX_FRACTAL_BYTES or self.rows == 1
        if self.cols % ic or (self.rows % ir and not rows_waived):
            raise IllegalOperand(
                f"{self}: tile shape {self.rows}x{self.cols} is not a multiple of the {layout} inner box {ir}x{ic} "
                f"for {self.dtype.name} ({fractal} B fractals)", operand="shape", value=(self.rows, self.cols),
                limit=f"cols % {ic} == 0" + ("" if rows_waived else f" and rows % {ir} == 0"),
                hint=f"pad the tile to multiples of {ir} rows and {ic} columns (valid rows/columns may be "
                     f"smaller)", where=_user_site())

    def ptr(self, machine=None, *, core: int = 0, sub: int = 0) -> Ptr:
        """Pointer to the tile's first element (bound to ``machine``'s core if given)."""
        if self.addr is None:
            raise IllegalOperand(f"tile {self.name or self.tile_type} has no address; call tassign first",
                                 operand="tile", hint="TASSIGN(tile, addr) or use a TileAllocator")
        if machine is not None:
            return machine.ptr(self.space, self.dtype, self.addr, core=core, sub=sub)
        return Ptr(self.space, self.dtype, self.addr, sub)

    def __str__(self) -> str:
        return f"Tile<{self.tile_type}, {self.dtype.name}, {self.rows}, {self.cols}>"


def _user_site():
    """The user's ``file:line`` for a TASSIGN error (frames inside pto_core are skipped)."""
    from .ops.registry import user_frame
    return user_frame(3)


def _int_addr(addr) -> Optional[int]:
    """``addr`` as a Python int when it is an integer (Python or numpy, as every int operand), else None."""
    if isinstance(addr, (bool, np.bool_)) or not isinstance(addr, (int, np.integer)):
        return None
    return int(addr)


def tassign(tile: Tile, addr: int) -> Tile:
    """Runtime form ``TASSIGN(tile, addr)``: bind without static checks (bounds checked at use)."""
    value = _int_addr(addr)
    if value is None:
        raise IllegalOperand(f"address must be an integer, got {type(addr).__name__}", op="TASSIGN",
                             operand="addr", value=addr, hint="pass an int byte address",
                             where=_user_site())
    tile.addr = value
    return tile


def tassign_violations(tile: Tile, addr: int, target) -> list:
    """The list of ``(check id, message, detail)`` that ``TASSIGN<addr>(tile)`` violates on ``target``."""
    t = get_target(target)
    space = tile.space
    cap = t.sizes.of(space)
    size = tile.nbytes
    # TASSIGN's SA-0354 uses the space's 32 B alignment for every TileType, ScaleLeft/ScaleRight
    # included (pto-isa TASSIGN doc table, buffer_limits.hpp PTO_L0A/L0B_ALIGN_BYTES); the 16 B
    # `scale_alignment` is the MX scale-load operand rule, not a tile-placement rule.
    align = t.alignment
    out = []
    if not cap > 0:
        out.append(("SA-0351", TASSIGN_CHECKS["SA-0351"], f"{space} capacity on {t.name} is 0"))
    if not size <= cap:
        out.append(("SA-0352", TASSIGN_CHECKS["SA-0352"], f"tile_size {size} B > capacity {cap} B"))
    # tassign_check.hpp: `capacity == 0 || end_addr <= capacity`: a missing space is SA-0351 only
    if cap > 0 and not addr + size <= cap:
        out.append(("SA-0353", TASSIGN_CHECKS["SA-0353"], f"{addr:#x} + {size} B = {addr + size} B > {cap} B"))
    if addr % align != 0:
        out.append(("SA-0354", TASSIGN_CHECKS["SA-0354"], f"{addr:#x} % {align} = {addr % align}"))
    return out


def tassign_checked(tile: Tile, addr: int, target) -> Tile:
    """Compile-time form ``TASSIGN<addr>(tile)``: static checks SA-0351..SA-0354, all reported."""
    value = _int_addr(addr)
    if value is None or value < 0:
        raise IllegalOperand(f"address must be a non-negative integer, got {addr!r}", op="TASSIGN",
                             operand="addr", value=addr, hint="pass a non-negative int byte address",
                             where=_user_site())
    addr = value
    tile.validate_shape(target)          # the Tile template's own static rules come first, as in C++
    bad = tassign_violations(tile, addr, target)
    if bad:
        lines = "; ".join(f"{cid}: {msg} ({detail})" for cid, msg, detail in bad)
        raise TassignError(f"TASSIGN<{addr:#x}>({tile}) on {get_target(target).name} fails {len(bad)} static "
                           f"check(s): {lines}", op="TASSIGN", operand="addr", value=hex(addr),
                           violations=tuple(b[0] for b in bad), hint=FIX_A12, where=_user_site())
    tile.addr = addr
    return tile


class TileAllocator:
    """First-fit placement of named byte ranges in one memory space.

    Args:
        target: chip profile (name or object).
        space: memory space to place in.
        alignment: start-address alignment in bytes (default: the space's alignment).
        capacity: override the profile's capacity (e.g. reserve space).

    `alloc` returns the byte address; `free` releases by name; `mark`/`release_to`
    free everything allocated after a mark (scoped allocation, TIK ``new_stmt_scope``).
    """

    def __init__(self, target, space: str, *, alignment: Optional[int] = None, capacity: Optional[int] = None):
        self.target = get_target(target)
        self.space = space_name(space)
        self.capacity = self.target.sizes.of(self.space) if capacity is None else int(capacity)
        self.alignment = alignment or self.target.alignment
        self._live: list = []  # (addr, size, name, id) sorted by addr
        self._order: list = []  # ids in allocation order
        self._next_id = 0

    def alloc(self, nbytes: int, name: str = "", *, alignment: Optional[int] = None) -> int:
        """Place ``nbytes`` (first fit, ``alignment``-aligned) and return the byte address."""
        nbytes = int(nbytes)
        align = alignment or self.alignment
        if nbytes <= 0:
            raise IllegalOperand(f"allocation of {nbytes} bytes", operand=name or "size", value=nbytes, limit="> 0")
        cursor = 0
        for addr, size, _, _ in self._live:
            start = (cursor + align - 1) // align * align
            if start + nbytes <= addr:
                return self._place(start, nbytes, name)
            cursor = max(cursor, addr + size)
        start = (cursor + align - 1) // align * align
        if start + nbytes <= self.capacity:
            return self._place(start, nbytes, name)
        used = self.used
        occupants = ", ".join(f"{n or '?'} [{a:#x}, {a + s:#x}) {s} B" for a, s, n, _ in self._live) or "(empty)"
        raise CapacityExceeded(
            f"cannot place {name or 'a tile'} of {nbytes} B in {self.space} ({self.capacity} B on "
            f"{self.target.name}, {used} B in use, alignment {align} B); occupied by: {occupants}",
            operand=name or self.space, value=nbytes, limit=f"{self.capacity} B",
            hint="free tensors you no longer need (scope them), reduce tile sizes, or tile the computation")

    def _place(self, addr: int, nbytes: int, name: str) -> int:
        self._live.append((addr, nbytes, name, self._next_id))
        self._live.sort()
        self._order.append(self._next_id)
        self._next_id += 1
        return addr

    def _free_id(self, ident: int) -> None:
        self._live = [e for e in self._live if e[3] != ident]
        self._order.remove(ident)

    def free(self, name: str) -> None:
        """Release the most recent allocation called ``name``."""
        for ident in reversed(self._order):
            if any(e[3] == ident and e[2] == name for e in self._live):
                self._free_id(ident)
                return
        raise IllegalOperand(f"nothing named {name!r} is allocated in {self.space}", operand="name", value=name,
                             hint="free a name that alloc() returned and that is still allocated (see .occupants())")

    def mark(self) -> int:
        """A point to `release_to` later (scoped allocation)."""
        return len(self._order)

    def release_to(self, mark: int) -> None:
        """Free everything allocated after ``mark``."""
        for ident in list(self._order[mark:]):
            self._free_id(ident)

    @property
    def used(self) -> int:
        return sum(e[1] for e in self._live)

    def occupants(self) -> list:
        """``(addr, size, name)`` of every live allocation, by address."""
        return [(a, s, n) for a, s, n, _ in self._live]

    def place(self, tile: Tile) -> Tile:
        """Allocate room for ``tile`` and bind it (runtime TASSIGN)."""
        if tile.space != self.space:
            raise IllegalOperand(f"{tile} lives in {tile.space}, allocator places in {self.space}", operand="tile",
                                 hint=f"place the tile with the {tile.space} allocator, or declare the tile in "
                                      f"{self.space}")
        return tassign(tile, self.alloc(tile.nbytes, tile.name))
