"""Fractal tile layouts: one formula per layout, as cached index maps and fast reshapes.

A 2-D logical tile of ``rows x cols`` elements is stored in one of six orders
(pto_spec.md §2.2; ``r1, r0 = divmod(r, IR)``, ``c1, c0 = divmod(c, IC)``, inner box
``IR x IC`` elements):

====  ==========================  ======================================================
name  storage order               element offset of logical (r, c)
====  ==========================  ======================================================
Nz    [c1][r1][r0][c0]            ``c1*rows*IC + r1*IR*IC + r0*IC + c0``
Zn    [r1][c1][c0][r0]            ``r1*cols*IR + c1*IR*IC + c0*IR + r0``
Zz    [r1][c1][r0][c0]            ``r1*cols*IR + c1*IR*IC + r0*IC + c0``
Nn    [c1][r1][c0][r0]            ``c1*rows*IC + r1*IR*IC + c0*IR + r0``
ND    row-major                   ``r*cols + c``
DN    column-major                ``c*rows + r``
====  ==========================  ======================================================

The inner box depends on the fractal size in bytes (pto_spec.md §2.1):

* 512 B (L1, L0A, L0B): row-major inner (Nz, Zz) ``16 x C0``; column-major inner
  (Zn, Nn) ``C0 x 16``, where ``C0 = 32 B / element size`` (16 for f16, 32 for 8-bit,
  8 for f32, 64 for packed 4-bit).
* 1024 B (L0C accumulator): ``16 x 16`` for every dtype.
* 32 B (MX scale): ``16 x 2`` row-major inner, ``2 x 16`` column-major inner.

Two equivalent implementations are provided and tested against each other:
`offset_map` (a cached, read-only int64 index array, for irregular windows) and
`pack` / `unpack` (reshape + transpose; what ops use on hot paths).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .dtypes import DType, dtype as _dtype
from .errors import IllegalOperand, UnknownName

LAYOUTS = ("Nz", "Zn", "Zz", "Nn", "ND", "DN")
BOXED = ("Nz", "Zn", "Zz", "Nn")
#: Inner-box order: row-major boxes (Nz, Zz) and column-major boxes (Zn, Nn).
_ROW_INNER = {"Nz": True, "Zz": True, "Zn": False, "Nn": False}
#: Outer (block) order: column-major blocks (Nz, Nn) vs row-major blocks (Zn, Zz).
_COL_OUTER = {"Nz": True, "Nn": True, "Zn": False, "Zz": False}

FRACTAL_SIZES = (512, 1024, 32)


def layout_name(name: str) -> str:
    """Canonical layout name, case-insensitive (``"nz"`` -> ``"Nz"``, ``"nd"`` -> ``"ND"``)."""
    for canon in LAYOUTS:
        if str(name).lower() == canon.lower():
            return canon
    raise UnknownName(f"unknown layout {name!r}", value=name, limit="one of " + ", ".join(LAYOUTS))


def inner_box(layout: str, dt, fractal: int = 512) -> tuple:
    """``(IR, IC)``: rows and columns of the inner box for ``layout``, dtype and fractal size."""
    layout = layout_name(layout)
    d: DType = _dtype(dt)
    if layout in ("ND", "DN"):
        return (1, 1)
    row_inner = _ROW_INNER[layout]
    if fractal == 1024:
        return (16, 16)
    if fractal == 32:
        return (16, 2) if row_inner else (2, 16)
    if fractal == 512:
        c0 = d.c0
        return (16, c0) if row_inner else (c0, 16)
    raise IllegalOperand(f"fractal size {fractal} is not one of 512, 1024, 32", operand="fractal", value=fractal,
                         hint="pass fractal=512 (the default), 1024 or 32")


def check_shape(layout: str, rows: int, cols: int, dt, fractal: int = 512) -> tuple:
    """Validate that ``rows x cols`` is a whole number of inner boxes; return ``(IR, IC)``."""
    ir, ic = inner_box(layout, dt, fractal)
    if rows <= 0 or cols <= 0:
        raise IllegalOperand(f"tile shape {rows}x{cols} must be positive", operand="shape", value=(rows, cols),
                             hint="give rows and cols >= 1")
    if rows % ir or cols % ic:
        raise IllegalOperand(f"tile shape {rows}x{cols} is not a multiple of the {layout} inner box {ir}x{ic} "
                             f"for {_dtype(dt).name} ({fractal} B fractals)", operand="shape", value=(rows, cols),
                             limit=f"rows % {ir} == 0 and cols % {ic} == 0",
                             hint=f"pad the tile to multiples of {ir} rows and {ic} columns")
    return ir, ic


@lru_cache(maxsize=512)
def _offset_map(layout: str, rows: int, cols: int, ir: int, ic: int) -> np.ndarray:
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    if layout == "ND":
        off = r * cols + c
    elif layout == "DN":
        off = c * rows + r
    else:
        r1, r0 = r // ir, r % ir
        c1, c0 = c // ic, c % ic
        inner = r0 * ic + c0 if _ROW_INNER[layout] else c0 * ir + r0
        outer = c1 * rows * ic + r1 * ir * ic if _COL_OUTER[layout] else r1 * cols * ir + c1 * ir * ic
        off = outer + inner
    off = np.ascontiguousarray(off)
    off.setflags(write=False)
    return off


def offset_map(layout: str, rows: int, cols: int, dt, fractal: int = 512) -> np.ndarray:
    """Read-only ``(rows, cols)`` int64 array: storage element offset of each logical element (cached)."""
    layout = layout_name(layout)
    ir, ic = check_shape(layout, rows, cols, dt, fractal)
    return _offset_map(layout, int(rows), int(cols), ir, ic)


def _storage_shape(layout: str, rows: int, cols: int, ir: int, ic: int):
    """Storage as a 4-D array and the transpose taking it to (r1, r0, c1, c0)."""
    r1, c1 = rows // ir, cols // ic
    if layout == "Nz":
        return (c1, r1, ir, ic), (1, 2, 0, 3)
    if layout == "Zn":
        return (r1, c1, ic, ir), (0, 3, 1, 2)
    if layout == "Zz":
        return (r1, c1, ir, ic), (0, 2, 1, 3)
    if layout == "Nn":
        return (c1, r1, ic, ir), (1, 3, 0, 2)
    raise AssertionError(layout)


def unpack(storage: np.ndarray, layout: str, rows: int, cols: int, dt=None, fractal: int = 512) -> np.ndarray:
    """Logical ``(rows, cols)`` array from the first ``rows*cols`` storage elements (a new array).

    ``dt`` defaults to ``storage.dtype``; it only matters for the inner-box size.
    """
    layout = layout_name(layout)
    dt = _dtype(dt if dt is not None else storage.dtype)
    ir, ic = check_shape(layout, rows, cols, dt, fractal)
    flat = storage.reshape(-1)[: rows * cols]
    if layout == "ND":
        return flat.reshape(rows, cols).copy()
    if layout == "DN":
        return flat.reshape(cols, rows).T.copy()
    shape4, perm = _storage_shape(layout, rows, cols, ir, ic)
    return flat.reshape(shape4).transpose(perm).reshape(rows, cols)


def pack(logical: np.ndarray, layout: str, dt=None, fractal: int = 512) -> np.ndarray:
    """Storage order (1-D, new array) of a logical ``(rows, cols)`` array."""
    layout = layout_name(layout)
    rows, cols = logical.shape
    dt = _dtype(dt if dt is not None else logical.dtype)
    ir, ic = check_shape(layout, rows, cols, dt, fractal)
    if layout == "ND":
        return np.ascontiguousarray(logical).reshape(-1).copy()
    if layout == "DN":
        return np.ascontiguousarray(logical.T).reshape(-1)
    shape4, perm = _storage_shape(layout, rows, cols, ir, ic)
    inv = np.argsort(perm)
    r1, c1 = rows // ir, cols // ic
    as4 = logical.reshape(r1, ir, c1, ic)
    return np.ascontiguousarray(as4.transpose(inv)).reshape(-1)
