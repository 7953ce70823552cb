"""TIK 1.5 whole-tensor vector APIs (``h_*``), lowered onto a few ``pto.ub.*`` ops each.

Semantics (CANN 8.1 ``tbe/tik/tik_lib/tik_h_vec_api``): every tensor argument is a UB
tensor or a slice of one; ``dst`` and the tensor sources have the same shape (no
broadcasting) and the same slicing steps; a source may be a scalar instead (an ``int``
for integer dtypes, a ``float`` for float dtypes, or a Scalar/Expr of the dst dtype);
tensors in one buffer must be the same view or not overlap. The TIK compiler expands
them (its expansion is not published); here:

* **element-wise** ops (``h_add h_sub h_mul h_div h_max h_min h_and h_or``, ``h_abs h_relu
  h_not h_exp h_ln h_rec h_rsqrt``, ``h_cast``, ``h_duplicate``): the views are cut into
  rows of contiguous elements (trailing dimensions merged while every operand is
  contiguous there). Rows with equal 32 B-multiple strides become the repeats of one op
  per column chunk of ``PAR`` lanes (mask = chunk width); a single row is ``L // PAR``
  full repeats plus one masked tail repeat. Row starts must be 32-byte aligned (else
  `Misaligned`, as for any vector instruction).
* tensor-scalar forms of ``h_add``/``h_mul``/``h_max``/``h_min`` use ``vadds``/``vmuls``/
  ``vmaxs``/``vmins`` where the chip has that row for the dtype. **SCALAR_COPIED** (named choice):
  the other scalar forms -- ``h_div``, ``h_sub``, ``h_and``, ``h_or`` always, and ``h_add``/``h_mul``/
  ``h_max``/``h_min`` where the chip lacks the scalar row (Ascend310/910: no ``vmaxs``/``vmins``, no int32
  ``vadds``/``vmuls``; Ascend310B1: no int8/uint8 ``vmaxs``/``vmins``) -- copy the scalar into a
  one-block (32 B, SCALAR_COPY_BYTES) scratch with ``vector_dup`` and run ``vdiv``/``vsub``/``vand``/``vor``/
  ``vadd``/``vmul``/``vmax``/``vmin`` reading that copy at block and repeat stride 0, the copy in the scalar's position: the same bits
  as the two-tensor form (TIK admits every scalar form on the two-tensor row alone).
* **reductions** ``h_reduce_sum/max/min(dst, src, axis)`` over trailing axes: a row of
  at most ``PAR`` elements is one ``vcadd`` (rows with aligned strides batched as
  repeats) or one ``reduce_max``/``reduce_min``; longer rows are first folded column
  chunk by column chunk into a ``PAR``-wide scratch row with ``vadd``/``vmax``/``vmin``
  (in order, each addition rounded to the dtype), then reduced. Reducing every axis
  needs a Scalar ``dst``. ``axis=0`` of a 2-D tensor folds rows element-wise.
  ``h_reduce_argmax/argmin`` give ``int32`` indices along the reduced axis (ties: the
  first). Scratch rows are facade-allocated UB tensors, freed right after the call.
* ``h_data_move(dst, src)``: UB <-> GM / UB <-> UB ``data_move`` bursts (rows must be
  whole 32 B blocks, starts 32 B aligned).
* **run-time lengths** (a view's dims are Scalar values: ``ub[0:n]``, a Tensor declared with a
  Scalar shape): the same instructions with run-time counts (TIK computes them from the Scalar
  when the kernel runs): a row of length ``L`` is groups of ``clamp(L // PAR - 255 g, 0, 255)``
  full repeats (as many groups as the longest row the tensors can hold needs) plus a tail of
  mask ``L % PAR`` run only if non-zero; reductions branch on ``L > PAR`` and loop over the
  column folds; a run-time number of rows is a ``for_range``. Nothing past ``L`` is touched.

* ``h_cmpv(mask_tensor, src0, src1, cmp_mode)`` / ``h_sel(dst, src0, src1, mask_tensor)``: the
  published contract (TIK 1.5 kernels: CANN scatter_max_with_argmax, rotated_feature_align_grad,
  IndexSDK distance_int8_cos_maxs_filter; the vcmpv/vsel pages of the TIK reference) is element-wise:
  ``mask = src0 <cmp_mode> src1`` (``LT GT GE EQ NE LE``, IEEE: NaN compares false except NE) into a UB
  ``bool`` tensor of the sources' shape, and ``dst = src0 where mask else src1``; one source may be a
  scalar (h_cmpv with a scalar src0 compares with the mirrored mode; h_sel with a scalar src0 selects
  from a one-block copy of it, SCALAR_COPY_BYTES). The bytes of the bool tensor are not published: **MASK_LAYOUT** (named
  choice) is the hardware's vcmpv/vsel bit layout, element ``p`` of the mask's storage at bit ``p % 8``
  of byte ``p // 8``, so h_cmpv is ``vcmpv`` (groups of MASK_GROUP repeats) plus, for a row's last
  ``L % PAR`` lanes, a masked ``vcmp`` into CMPMASK stored as whole 64-bit words, and h_sel is
  ``vsel`` mode 2 (mode 1 for a scalar src1) with the tail's bits copied to an aligned scratch. Each
  row of the mask must start on a 32-byte boundary of its bits (element offset a multiple of 256;
  whole tensors always do), else `Misaligned`. dtypes and chips: TIK's ``tik.h_cmpv``/``tik.h_sel``
  rows and those of ``vcmpv``/``vcmp``/``vsel``; where vsel has mode 0 only (Ascend310/910,
  **SEL_MODE0_ONLY**) h_sel is one ``vec_sel`` mode 0 per repeat on that repeat's mask bits.

Not lowered (`UnsupportedOp`, reason in the message): ``h_sin``/``h_cos`` (TIK's series and
its precision are not published), slices with steps other than 1, reductions over
non-trailing axes (other than ``axis=0`` of 2-D; that one with a static number of rows), and
whole-tensor reductions over a run-time number of strided rows.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pto_core import program as P
from pto_core.errors import Misaligned, UnsupportedOp

from .. import platform
from .api import has_key, tik_api
from .scalar import Expr, Scalar, all_, any_
from .tensor import Tensor, _add, _constant_difference, _mul, prod
from .vector_common import ROUND_MODES, SHORT, U8, ceil_div, idiv, irem, par_of
from .vector_reduce import INDEX_REPEAT_LIMIT

MAX_REPEAT = 255
#: h_ API -> (vector-vector instruction, vector-scalar instruction or None: none exists, SCALAR_COPIED)
DOUBLE = {"h_add": ("vadd", "vadds"), "h_sub": ("vsub", None), "h_mul": ("vmul", "vmuls"),
          "h_div": ("vdiv", None), "h_max": ("vmax", "vmaxs"), "h_min": ("vmin", "vmins"),
          "h_and": ("vand", None), "h_or": ("vor", None)}
SINGLE = {"h_abs": "vabs", "h_relu": "vrelu", "h_not": "vnot", "h_exp": "vexp", "h_ln": "vln", "h_rec": "vrec",
          "h_rsqrt": "vrsqrt"}
#: h_cmpv modes (TIK CMPMODE names, any case) and the mode that swaps the operands.
CMP_MODES = ("lt", "gt", "ge", "eq", "ne", "le")
MIRROR = {"lt": "gt", "gt": "lt", "ge": "le", "le": "ge", "eq": "eq", "ne": "ne"}
#: MASK_LAYOUT (named choice, see the module doc): the bytes of a bool mask tensor written by h_cmpv and
#: read by h_sel are the vcmpv/vsel result bits -- element ``p`` of the mask's storage is bit ``p % 8`` of
#: byte ``p // 8`` (LSB first); a row of the mask starts on a 32-byte boundary of those bits.
MASK_ROW_ALIGN = 256
#: SEL_MODE0_ONLY (named choice): chips whose vsel has mode 0 only (one CMPMASK for every repeat; TIK's
#: vsel/vec_sel pages) -- CANN 8.1 TIK admits h_sel there (``check_sel_ops_params``: the ``tik.h_sel`` row of
#: tik_api_map, Ascend310 float16, Ascend910 float16/float32) -- run h_sel one repeat at a time: the repeat's
#: PAR mask bits (MASK_LAYOUT) copied to an aligned scratch, then ``vec_sel`` mode 0 (a scalar source is a
#: one-block vector_dup copy, SCALAR_COPY_BYTES). The selection is exact, so the bits equal the vsel mode 1/2 lowering's.
SEL_MODE0_ONLY = ("Ascend310", "Ascend910")
#: Repeats per vcmpv/vsel in a mask row: 252 * PAR / 8 bytes of bits is a whole number of 32 B blocks.
MASK_GROUP = 252
REDUCE = {"h_reduce_sum": ("add", "vadd"), "h_reduce_max": ("max", "vmax"), "h_reduce_min": ("min", "vmin")}
#: SCALAR_COPIED (named choice): the scalar forms that run the vector-vector instruction on a one-block
#: ``vector_dup`` copy of the scalar (SCALAR_COPY_BYTES) read at block and repeat stride 0, the copy in the scalar's position (h_sel's scalar
#: src0 does the same): API -> ``"always"``, or ``"no_scalar_row"`` = only where the chip has no row of the
#: API's vector-scalar instruction (DOUBLE) for the dtype; elsewhere that instruction runs (`_h_has_row`).
#: Source: CANN 8.1 TIK (``tik_h_vec_api/tik_double_ops_api_.py``) emits one ``h_<op>`` intrinsic with the
#: scalar as an operand -- the compiler's expansion is not published -- and admits every form (tensor/tensor,
#: tensor/scalar, scalar/tensor) on the ``Intrinsic_v<op>`` row alone (``common_params_check_.py``
#: ``check_double_ops_params``; no vadds/vmuls/vmaxs/vmins row is asked), so the result is the two-tensor
#: instruction's own: one IEEE rounding (then the chip's saturation, numerics.md §3), ints wrap, max/min
#: exact -- exactly ``h_<op>`` with two tensors. ``"always"``: the vector unit has no vector-scalar divide,
#: reversed subtract, AND or OR (k460 h_div/h_sub: replaces ``src * (1/x)`` / ``vrec(src) * x`` (wrong when
#: the reciprocal overflows or is subnormal: f16 0.001 / 6e-8 gave inf, f32 -0 / 1e-45 NaN, 60000 / 30000
#: 1.999), ``x - src`` = ``vmuls(src, -1)`` then ``vadds(x)`` (the first step saturates on
#: Ascend310/910/310P: 100 - inf gave -65408, 100 - NaN gave 100) and ``src - x`` = ``vadds(src, -x)`` (an
#: integer ``x`` at its dtype's minimum was refused, -(-32768) does not fit int16; int32 on Ascend310/910
#: was refused); k463 h_and/h_or with a scalar were refused as "not lowered"). ``"no_scalar_row"`` (k463):
#: h_max/h_min with a scalar on Ascend310/910 (no vmaxs/vmins at all), int32 h_add/h_mul on Ascend310/910
#: (vadd/vmul int32, vadds/vmuls f16/f32 only) and int8/uint8 h_max/h_min on Ascend310B1 were refused
#: though TIK admits them. Where the scalar row exists the scalar instruction is kept: the simulator's
#: vadds/vmuls/vmaxs/vmins give the same bits as vadd/vmul/vmax/vmin with a copied scalar for every dtype
#: (the scalar is rounded to the dtype first in both; -0, inf, saturation, int wrap alike), except which
#: NaN payload survives when both operands are NaN with different payloads (inf_nan chips only; the
#: hardware's NaN payloads are not documented, numerics.md). vector_dup has every dtype these rows have
#: (Appendix A/B).
#: SCALAR_COPY_BYTES (named choice): the scalar copy of SCALAR_COPIED, h_sel and h_cmpv is ONE 32 B block
#: (``32 / itemsize`` lanes of ``vector_dup``) read at block stride 0 and repeat stride 0, not a PAR-lane
#: (256 B) row read at repeat stride 0: every lane of every repeat reads the same value either way, so the
#: bits are the same, and the kernel's UB keeps 224 B more (k472; a kernel whose tensors leave only 32 B of UB
#: free runs). Source: tik_api.md §9.1 -- legacy block strides 0..255, element e of repeat r at
#: ``base + r*rep_stride*E + (e // E)*blk_stride*E + e % E``; a source's block stride 0 re-reads one block on
#: every chip (``DST_BLOCK_STRIDE_ZERO_IS_ONE`` concerns written operands only, pto_vector.md).
SCALAR_COPY_BYTES = 32


def _scalar_copy_elems(dtype: str) -> int:
    """Lanes of the SCALAR_COPY_BYTES scratch for ``dtype`` (one 32 B block)."""
    return SCALAR_COPY_BYTES * 8 // max(8, _bits(dtype))


SCALAR_COPIED = {"h_div": "always", "h_sub": "always", "h_and": "always", "h_or": "always",
                 "h_add": "no_scalar_row", "h_mul": "no_scalar_row", "h_max": "no_scalar_row",
                 "h_min": "no_scalar_row"}


class _Layout:
    """Common row decomposition of equal-shaped views: rows of ``length`` contiguous elements
    (an int, or an ``index`` IR value for a run-time length).

    ``offsets[v]``: element offsets of the rows of view ``v`` from its start (int arrays) when
    the outer dims and strides are static, else None and the rows are ``outer_shape`` (ints or
    IR) with ``outer_strides[v]`` (ints or IR) per view."""

    __slots__ = ("length", "offsets", "outer_shape", "outer_strides")

    def __init__(self, length, offsets, outer_shape, outer_strides=None):
        self.length, self.offsets, self.outer_shape = length, offsets, outer_shape
        self.outer_strides = outer_strides

    @property
    def nrows(self):
        """Number of rows (int, or IR when an outer dim is a run-time value)."""
        if self.offsets is not None:
            return len(self.offsets[0])
        return prod(self.outer_shape)

    def stride(self, v: int) -> Optional[int]:
        """Constant static row stride of view ``v`` (elements), or None."""
        if self.offsets is None:
            return None
        o = self.offsets[v]
        if len(o) < 2:
            return 0
        d = np.diff(o)
        return int(d[0]) if (d == d[0]).all() else None


def _same(a, b) -> bool:
    """``a == b`` for ints, or provably equal IR values (their affine parts cancel)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return _constant_difference(b, a) == 0


def _dyn(v) -> bool:
    return not isinstance(v, int)


def _rt(v) -> Expr:
    """A facade Expr of an int-or-IR count (for the API helpers that take TIK values)."""
    return Expr(P.cast(v, P.I64) if isinstance(v, P.Expr) else P.Const(int(v), P.I64))


class HVectorAPI:
    """The ``h_*`` family (mixin; needs the lane-wise, reduction and data families)."""

    # ------------------------------------------------------------------ checks
    def _h_tensor(self, t, name):
        if not isinstance(t, Tensor):
            raise self._error(f"{name} should be a tensor", operand=name, value=repr(t),
                              hint="pass a UB tensor (or a view of one) created by tik_instance.Tensor")
        return self._operand(t, name, spaces=("ub",))

    def _h_static(self, t: Tensor, name: str):
        """The view's dims and strides (ints, or IR values for run-time dims)."""
        dims = t._shape
        if not 1 <= len(dims) <= 8:
            raise self._error(f"length of {name} tensor shape should be in the range of [1, 8]", operand=name,
                              value=len(dims), limit="[1, 8]",
                              hint=f"reshape {name} to between 1 and 8 dimensions (merge adjacent axes)")
        return dims, t._strides

    def _h_check(self, views: list, names: list):
        """TIK's rules: same dtype (caller), same shape, no partial overlap in one buffer. A run-time dim
        that is not provably the destination's is compared when the op runs (``pto.assert_in_range``)."""
        shapes = [self._h_static(v, n)[0] for v, n in zip(views, names)]
        for n, sh in zip(names[1:], shapes[1:]):
            self._h_same_shape(sh, shapes[0], n, names[0])
        d = views[0]
        for v, n in zip(views[1:], names[1:]):
            if v.storage is not d.storage:
                continue
            ends = []
            for t in (d, v):
                if not all(isinstance(x, int) for x in (t.offset,) + t._shape + t._strides):
                    break
                ends.append((t.offset, t.offset + sum((k - 1) * s for k, s in zip(t._shape, t._strides))))
            if len(ends) == 2:
                (a0, a1), (b0, b1) = ends
                same = a0 == b0 and a1 == b1 and d._strides == v._strides
                if (a0 <= b0 <= a1 or b0 <= a0 <= b1) and not same:
                    raise self._error(f"{n} and {names[0]} tensor overlap error", operand=n,
                                      hint="use the same view (in place) or separate tensors")

    def _h_same_shape(self, got, want, name: str, ref: str, what: str = "tensor should be the same shape",
                      ref_shape=None) -> None:
        """``got`` == ``want`` (dims): static dims now, a run-time dim not provably equal when the op runs.
        ``ref_shape``: ``ref``'s own shape when ``want`` is derived from it (a reduction's dst), so the
        message names both real shapes and the wanted one instead of calling ``want`` ``ref``'s shape."""
        if len(got) != len(want) or any(isinstance(x, int) and isinstance(y, int) and x != y
                                        for x, y in zip(got, want)):
            shown = (f"got {_shape_str(got)} and {_shape_str(want)}" if ref_shape is None else
                     f"{name} is {_shape_str(got)} and {ref} is {_shape_str(ref_shape)}, so {name} should be "
                     f"{_shape_str(want)}")
            raise self._error(f"{name} and {ref} {what}, {shown}",
                              operand=name, value=_shape_str(got), limit=_shape_str(want),
                              hint=f"use views of the shape {_shape_str(want)} (slice or reshape the operands to "
                                   f"match)")
        # a reduction's want is not ref's shape: name it as derived from ref's own shape
        other = (f"{ref} {_shape_str(want)}" if ref_shape is None else
                 f"the wanted {_shape_str(want)} ({ref} is {_shape_str(ref_shape)})")
        for k, (x, y) in enumerate(zip(got, want)):
            if not _same(x, y):
                # the lengths themselves (k445: it showed their difference, "... minus ... = 16 is outside [0, 0]")
                self._emit("assert_in_range", P.cast(x, P.I64), P.cast(y, P.I64), P.cast(y, P.I64),
                           what=f"dim {k} of {name} {_shape_str(got)} (run-time lengths; "
                                f"{self._where.call if self._where else 'h_*'}: {name} and {ref} {what}, so it must "
                                f"equal dim {k} of {other})",
                           hint=(f"give {name} the run-time length of {ref} along dim {k}" if ref_shape is None else
                                 f"give {name} the shape the operation makes of {ref} (dim {k} differs when it runs)"))

    def _h_layout(self, views: list, names: list) -> _Layout:
        shape, _ = self._h_static(views[0], names[0])
        strides = [self._h_static(v, n)[1] for v, n in zip(views, names)]
        nd = len(shape)
        for v, n, st in zip(views, names, strides):
            if not (isinstance(shape[-1], int) and shape[-1] == 1) and not _same(st[-1], 1):
                raise self._error(f"{n}: slices with a step other than 1 are not lowered by the h_* APIs",
                                  operand=n, value=st[-1] if isinstance(st[-1], int) else "a run-time step",
                                  cls=UnsupportedOp, hint="use a step-1 slice or the vec_* APIs with block strides")
        length, k = shape[-1], nd - 1
        while k > 0 and ((isinstance(shape[k - 1], int) and shape[k - 1] == 1) or
                         all(_same(st[k - 1], length) for st in strides)):
            length = _mul(length, shape[k - 1])
            k -= 1
        outer = shape[:k]
        if not all(isinstance(x, int) for x in outer + tuple(s for st in strides for s in st[:k])):
            return _Layout(length, None, tuple(outer), [tuple(st[:k]) for st in strides])
        offsets = []
        for st in strides:
            grid = np.zeros((1,), dtype=np.int64)
            for n_, s_ in zip(outer, st[:k]):
                grid = (grid[:, None] + np.arange(n_, dtype=np.int64)[None, :] * s_).reshape(-1)
            offsets.append(grid)
        return _Layout(length, offsets, tuple(outer))

    def _h_for_rows(self, lay: _Layout, body) -> None:
        """Call ``body(rel)`` once per row, ``rel`` = the row's element offset from each view's start
        (ints; IR values when strides are run-time values; inside a ``for_range`` over the rows when
        their number is a run-time value)."""
        if lay.offsets is not None:
            for row in range(lay.nrows):
                body([int(o[row]) for o in lay.offsets])
            return
        dims = lay.outer_shape
        if all(isinstance(d, int) for d in dims):
            for idx in np.ndindex(*dims):
                body([_row_offset(idx, st) for st in lay.outer_strides])
            return
        with self.for_range(0, _rt(lay.nrows)) as r:
            r.ir.hidden = True              # not the user's loop: errors name no index of it (HIDDEN_LOOP_VARS)
            rem, idx = P.cast(r.ir, P.INDEX), []
            for d in reversed(dims):
                idx.append(P.binop("rem", rem, P.cast(P.as_expr(d, P.INDEX), P.INDEX)))
                rem = P.binop("div", rem, P.cast(P.as_expr(d, P.INDEX), P.INDEX))
            idx.reverse()
            body([_row_offset(idx, st) for st in lay.outer_strides])

    def _h_bound(self, views: list) -> int:
        """Static upper bound of a run-time row length: the fewest elements any view's storage holds
        from the view's start (the whole storage when the start is a run-time value)."""
        out = None
        for v in views:
            total = v.storage_elements
            if not isinstance(total, int):
                continue
            avail = total - v.offset if isinstance(v.offset, int) else total
            out = avail if out is None else min(out, avail)
        if out is None:
            raise self._error("h_* on views of run-time length needs a tensor with a static size (UB tensors "
                              "have one)", operand="dst", cls=UnsupportedOp,
                              hint="use a UB tensor (static size) or a view of static length")
        return max(out, 0)

    def _h_scalar(self, x, dtype: str, name: str):
        """TIK's h_* scalar rule: int for integer dtypes, float for float dtypes, or a Scalar/Expr of ``dtype``."""
        if isinstance(x, Expr):
            if x.dtype != dtype:
                raise self._error(f"{name} should be {dtype}, got a {x.dtype} Scalar/Expr", operand=name,
                                  value=x.dtype, limit=dtype,
                                  hint=f"pass a {dtype} Scalar, or convert the Expr with .astype({dtype!r})")
            return x.ir
        is_float = dtype.startswith(("float", "bfloat"))
        if isinstance(x, bool) or not isinstance(x, (int, float)) or (is_float and not isinstance(x, float)) or \
                (not is_float and not isinstance(x, int)):
            raise self._error(f"{name} should be {'float' if is_float else 'int'} for {dtype} tensors, got "
                              f"{type(x).__name__} {x!r}", operand=name, value=repr(x),
                              limit="float" if is_float else "int",
                              hint=f"pass {'a float' if is_float else 'an int'} (the tensors are {dtype})")
        if not is_float:
            from pto_core.dtypes import dtype as _dt
            d = _dt(dtype)
            if not d.min <= x <= d.max:
                raise self._error(f"{name} out of range of {dtype}", operand=name, value=x,
                                  limit=f"[{d.min}, {d.max}]",
                                  hint=f"pass a {name} between {d.min} and {d.max} (the range of {dtype})")
        return x

    @staticmethod
    def _h_view(t: Tensor, rel) -> Tensor:
        """A 1-D view of ``t``'s storage starting ``rel`` elements (int or IR) after ``t``'s start."""
        return t._view((1,), (1,), _add(t.offset, rel))

    # ------------------------------------------------------------------ element-wise emission
    def _h_rows(self, instr: str, views: list, names: list, *, scalar=None, has_scalar=False, extra=None,
                dtype_rule="same"):
        """Emit ``instr`` over equal-shaped ``views`` (dst first) cut into rows (see module doc)."""
        def emit(rel, mask, repeat, reps):
            vs = [self._h_view(v, r) for v, r in zip(views, rel)]
            self._lanewise(instr, mask, vs[0], [(t, n) for t, n in zip(vs[1:], names[1:])], repeat, None, reps,
                           scalar=scalar, has_scalar=has_scalar, blk_max=U8, extra=extra, dtype_rule=dtype_rule)
        self._h_each(views, names, emit)

    def _h_each(self, views: list, names: list, emit) -> None:
        """Drive ``emit(rel, mask, repeat, rep_strides)`` (one vector instruction; ``rel`` = start
        offsets from each view, ints or IR) over the rows of equal-shaped ``views``.

        Static rows with equal 32 B-multiple strides become repeats (one instruction per column
        chunk); else each row is ``L // PAR`` full repeats (groups of 255) and a masked tail
        repeat. A run-time ``L`` gives the same instructions with run-time repeat counts: as
        many groups as the longest row the tensors can hold needs, each ``clamp(L // PAR - 255 g,
        0, 255)`` repeats (0: nothing runs; groups after the first only run when ``L`` reaches them,
        RUNTIME_GROUPS_GUARDED), and a tail of mask ``L % PAR`` run once if non-zero
        -- what TIK computes from the Scalar when the kernel runs; nothing past ``L`` is touched."""
        lay = self._h_layout(views, names)
        sizes = [max(1, v.dt.bits // 8) for v in views]
        par = par_of(*[v.dt for v in views])
        L = lay.length
        strides = [lay.stride(i) for i in range(len(views))]
        batch = isinstance(L, int) and lay.offsets is not None and lay.nrows > 1 and \
            all(s is not None and (s * z) % 32 == 0 and 0 <= s * z // 32 <= 255 for s, z in zip(strides, sizes))
        if batch:
            for c in range(0, L, par):
                w = min(par, L - c)
                for g in range(0, lay.nrows, MAX_REPEAT):
                    k = min(MAX_REPEAT, lay.nrows - g)
                    emit([int(o[g]) + c for o in lay.offsets], w, k, [s * z // 32 for s, z in zip(strides, sizes)])
            return
        contiguous = [par * z // 32 for z in sizes]
        bound = self._h_bound(views) if _dyn(L) else None
        self._h_for_rows(lay, lambda base: self._h_row(emit, base, L, par, contiguous, bound))

    def _h_row(self, emit, base: list, L, par: int, reps: list, bound: Optional[int]) -> None:
        """One row of ``L`` (int or IR) contiguous elements at offsets ``base`` (see `_h_each`)."""
        if isinstance(L, int):
            full, tail = divmod(L, par)
            for start in range(0, full, MAX_REPEAT):
                k = min(MAX_REPEAT, full - start)
                emit([_add(b, start * par) for b in base], par, k, reps)
            if tail:
                emit([_add(b, full * par) for b in base], tail, 1, reps)
            return
        full, tail = idiv(L, par), irem(L, par)
        groups = max(1, -(-(bound // par) // MAX_REPEAT))
        emit(list(base), par, _rt(P.max_(P.min_(full, MAX_REPEAT), 0)), reps)
        # later groups run only when the row reaches them (RUNTIME_GROUPS_GUARDED): a group of 0 repeats runs
        # nothing, so skipping it changes no value or report -- it saves the op's dispatch and checks; more than
        # one later group is a for_range over the groups the length needs (tensors whose bound is far above
        # their run-time length, DYNAMIC_TENSOR_RUNTIME_CHAIN, would otherwise unroll many)
        if groups == 2:
            with self.if_scope(Expr(P.cmp("gt", full, MAX_REPEAT))):
                emit([_add(b, MAX_REPEAT * par) for b in base], par,
                     _rt(P.min_(P.binop("sub", full, MAX_REPEAT), MAX_REPEAT)), reps)
        elif groups > 2:
            with self.for_range(1, _rt(ceil_div(full, MAX_REPEAT))) as g:
                g.ir.hidden = True          # not the user's loop: errors name no index of it (HIDDEN_LOOP_VARS)
                first = P.binop("mul", P.cast(g.ir, P.I64), MAX_REPEAT)
                emit([_add(b, P.binop("mul", first, par)) for b in base], par,
                     _rt(P.min_(P.binop("sub", full, first), MAX_REPEAT)), reps)
        if groups <= 2 and bound // par >= groups * MAX_REPEAT:
            # tensors holding exactly `groups` full groups: a length needing more still runs the next group (past
            # the tensors), so it is refused there as in the for_range above -- not cut after `groups` and accepted
            # (otherwise the last group above reaches past the tensors for such a length and is refused)
            with self.if_scope(Expr(P.cmp("gt", full, groups * MAX_REPEAT))):
                emit([_add(b, groups * MAX_REPEAT * par) for b in base], par,
                     _rt(P.min_(P.binop("sub", full, groups * MAX_REPEAT), MAX_REPEAT)), reps)
        has_tail = P.cmp("gt", tail, 0)
        emit([_add(b, _mul(full, par)) for b in base], _rt(P.max_(tail, 1)), _rt(P.select(has_tail, 1, 0)), reps)

    def _h_elementwise_check(self, api, dst, tensors, names):
        d = self._h_tensor(dst, "dst")
        ops = [self._h_tensor(t, n) for t, n in zip(tensors, names)]
        for o in ops:
            if o.dt is not d.dt:
                raise self._error(f"{o.name} and dst tensor should be the same dtype, got {o.tensor.dtype} and "
                                  f"{d.tensor.dtype}", operand=o.name, value=o.tensor.dtype, limit=d.tensor.dtype,
                                  hint="use tensors of one dtype (convert with h_cast first)")
        self._h_check([dst] + list(tensors), ["dst"] + list(names))
        return d

    # ------------------------------------------------------------------ double / single ops
    def _h_double(self, api, dst, src0, src1):
        vv, vs = DOUBLE[api]
        t0, t1 = isinstance(src0, Tensor), isinstance(src1, Tensor)
        if t0 and t1:
            d = self._h_elementwise_check(api, dst, [src0, src1], ["src0", "src1"])
            self._require_instr(vv, d.tensor.dtype)
            self._h_rows(vv, [dst, src0, src1], ["dst", "src0", "src1"])
            return
        if not (t0 or t1):
            raise self._error(f"wrong src data type for Instruction {api}: one of src0/src1 must be a tensor",
                              operand="src0", value=f"{type(src0).__name__}, {type(src1).__name__}",
                              hint="pass a UB tensor as src0 or src1 (the other may be a Scalar or an immediate)")
        src, x, xname = (src0, src1, "src1") if t0 else (src1, src0, "src0")
        d = self._h_elementwise_check(api, dst, [src], ["src0" if t0 else "src1"])
        self._require_instr(vv, d.tensor.dtype)
        xv = self._h_scalar(x, d.tensor.dtype, xname)
        dt = d.tensor.dtype
        # SCALAR_COPIED: vv on a copy of x (a chip with no public ini whose assumed family has neither row keeps
        # vs, so its op verifier names the instruction, as vv would, not vector_dup)
        if SCALAR_COPIED[api] == "always" or (not self._h_has_row(vs, dt) and self._h_has_row(vv, dt)):
            self._h_scalar_copied(vv, dst, src, xv, xname)
        else:
            self._h_rows(vs, [dst, src], ["dst", "src"], scalar=xv, has_scalar=True)

    @staticmethod
    def _h_has_row(instr: str, dtype: str) -> bool:
        """Whether the selected chip has ``instr`` for ``dtype`` (its ini row; a chip with no public ini: the
        PTO family the simulator assumes for it, `pto_core.vector_isa`)."""
        try:
            return platform.intrinsic_check_support("Intrinsic_" + instr, dtype)
        except platform.PlatformDataMissing:
            from pto_core import vector_isa
            from pto_core.dtypes import dtype as _dt
            return _dt(dtype).name in vector_isa.supported(platform.current_soc().profile, instr)

    def _h_scalar_copied(self, instr: str, dst, src, xv, xname: str) -> None:
        """``dst = x <instr> src`` (``xname`` "src0") or ``src <instr> x`` ("src1") with ``x`` copied into a
        one-block (32 B) scratch by ``vector_dup`` and read at block and repeat stride 0 (SCALAR_COPIED,
        SCALAR_COPY_BYTES)."""
        tname = "src1" if xname == "src0" else "src0"
        with self.new_stmt_scope():
            n = _scalar_copy_elems(dst.dtype)
            xs = self._h_scratch(dst.dtype, n, f"h_{instr[1:]}_scalar")
            self._dup(n, xs, xv, 1, None, 8, 0)

            def emit(rel, mask, repeat, reps):
                sv = self._h_view(src, rel[1])
                srcs, blk, rep = ([(xs, xname), (sv, tname)], [1, 0, 1], [reps[0], 0, reps[1]]) \
                    if xname == "src0" else ([(sv, tname), (xs, xname)], [1, 1, 0], [reps[0], reps[1], 0])
                self._lanewise(instr, mask, self._h_view(dst, rel[0]), srcs, repeat, blk, rep, blk_max=U8)
            self._h_each([dst, src], ["dst", tname], emit)

    def _h_single(self, api, dst, src):
        d = self._h_elementwise_check(api, dst, [src], ["src"])
        self._require_instr(SINGLE[api], d.tensor.dtype)
        self._h_rows(SINGLE[api], [dst, src], ["dst", "src"])

    def _h_trig_unmodelled(self, name):
        """h_sin / h_cos: `UnsupportedOp` at the call, or, inside a run-time branch that may not run (one
        tiling key of a dynamic kernel, e.g. CANN rotated_feature_align's 5-point key), a ``pto.unmodelled``
        that raises only if the branch runs -- as the `UNMODELLED` vector instructions do (tik_vector.md §7)."""
        why = "TIK computes it with a series whose terms and precision are not published"
        hint = ("compute it from modelled ops (e.g. a range reduction and a Taylor/Chebyshev polynomial with "
                "vec_mul / vec_add / vec_axpy), or feed precomputed sin/cos values as an input tensor")
        if self._may_not_run():
            self._emit("unmodelled", what=f"tik.{name}", why=why, hint=hint)
            return None
        raise self._error(f"{name} is not modelled: {why}", operand="src", cls=UnsupportedOp, hint=hint)

    @tik_api("h_sin")
    def h_sin(self, dst, src):
        """Not lowered: TIK's sine series and its precision are not published (UnsupportedOp)."""
        return self._h_trig_unmodelled("h_sin")

    @tik_api("h_cos")
    def h_cos(self, dst, src):
        """Not lowered: TIK's cosine series and its precision are not published (UnsupportedOp)."""
        return self._h_trig_unmodelled("h_cos")

    # ------------------------------------------------------------------ cast / quant / duplicate
    @tik_api("h_cast")
    def h_cast(self, dst, src, round_mode):
        """Element conversion of whole views (vconv; not s322f16/s162s8/s162u8, which are h_quant)."""
        self._h_cast("h_cast", dst, src, round_mode)

    @tik_api("h_conv")
    def h_conv(self, dst, src, round_mode):
        self._h_cast("h_conv", dst, src, round_mode)

    def _h_cast(self, api, dst, src, round_mode):
        if not has_key(ROUND_MODES, round_mode):
            raise self._error(f"round_mode: {round_mode!r} is not supported", operand="round_mode", value=round_mode,
                              limit=", ".join(repr(k) for k in ROUND_MODES),
                              hint="pass one of the listed round_mode strs ('' or 'none' for the default rounding)")
        d = self._h_tensor(dst, "dst")
        s = self._h_tensor(src, "src")
        for t, name in ((s, "src"), (d, "dst")):
            if t.tensor.dtype not in SHORT:
                raise self._error(f"{api} does not convert {t.tensor.dtype} tensors", operand=name,
                                  value=t.tensor.dtype, limit=", ".join(SHORT), cls=UnsupportedOp,
                                  hint=f"use a {name} of one of the listed dtypes (vconv f162s4 is not modelled "
                                       f"by h_cast)")
        code = f"{SHORT[s.tensor.dtype]}2{SHORT[d.tensor.dtype]}{ROUND_MODES[round_mode]}"
        if code in ("s322f16", "s162s8", "s162u8"):
            hint = ("call h_quant(dst, src, deqscale) (deqscale 1.0 for a plain conversion)" if code == "s322f16" else
                    self._s16_to_8bit_hint(code))
            raise self._error(f"{api} does not convert {code}: use h_quant", operand="dst", value=code,
                              cls=UnsupportedOp, hint=hint)
        self._require_instr("vconv", code, what=f"src {s.tensor.dtype} dst {d.tensor.dtype} round_mode "
                                                f"{round_mode!r}")
        self._h_check([dst, src], ["dst", "src"])
        extra = {"round": ROUND_MODES[round_mode]} if ROUND_MODES[round_mode] else None
        self._h_rows("vconv", [dst, src], ["dst", "src"], extra=extra, dtype_rule="checked")

    @staticmethod
    def _s16_to_8bit_hint(code: str) -> str:
        """h_cast s162s8 / s162u8's Fix: the routes the selected chip has (its vconv table; both give the
        saturated values): through float16 (vconv s162f16 then f162s8/f162u8), or vec_conv's own vconv ``code``.
        Ascend910/310 have neither, Ascend310B1 no s162s8."""
        def has(c: str) -> bool:
            try:
                return platform.intrinsic_check_support("Intrinsic_vconv", c)
            except platform.PlatformDataMissing:
                return True
        routes = []
        if has("s162f16") and has("f162" + code[4:]):
            routes.append("convert through float16 (h_cast to float16, then to the 8-bit dtype)")
        if has(code):
            routes.append(f"use vec_conv ({code})")
        head = "h_quant's int16 -> int8/uint8 form (uint64 deqscale) is not modelled"
        if routes:
            return f"{head}: " + " or ".join(routes)
        return (f"{head}, and {platform.current_soc().soc_version} has no vconv from int16 (s162f16, {code}): "
                f"produce the values as float16 (vconv f162{code[4:]} exists) and h_cast those")

    @tik_api("h_quant")
    def h_quant(self, dst, src, deqscale):
        """int32 -> float16 with ``deqscale`` (float or float16 Scalar): ``dst = f16(src * f16(deqscale))``."""
        d = self._h_tensor(dst, "dst")
        s = self._h_tensor(src, "src")
        code = f"{SHORT[s.tensor.dtype]}2{SHORT[d.tensor.dtype]}"
        if code != "s322f16":
            raise self._error(f"h_quant converts int32 -> float16 here, got {code} (int16 -> int8 with a uint64 "
                              f"deqscale is not modelled)", operand="dst", value=code, cls=UnsupportedOp,
                              hint="quantize int32 -> float16 with h_quant; convert other types with h_cast")
        self._require_instr("vconv", "deq", what="deq (int32 -> float16)")
        self._h_check([dst, src], ["dst", "src"])
        q = self._h_scalar(deqscale, "float16", "deqscale") if isinstance(deqscale, Expr) else float(deqscale)
        self._h_rows("vconv", [dst, src], ["dst", "src"], extra={"deqscale": (q,)}, dtype_rule="checked")

    @tik_api("h_duplicate")
    def h_duplicate(self, dst, src):
        """``dst[...] = src`` (a scalar)."""
        d = self._h_tensor(dst, "dst")
        if isinstance(src, Tensor):
            raise self._error("wrong src data type for Instruction h_duplicate: src must be a scalar", operand="src",
                              hint="pass a number or a Scalar as src (h_data_move copies tensors)")
        xv = self._h_scalar(src, d.tensor.dtype, "src")
        if isinstance(src, Expr) and not isinstance(src, Scalar) and d.tensor.dtype == "float16":
            raise self._error("For instruction h_duplicate when dtype is float16, src cannot be Expr", operand="src",
                              hint="assign the expression to a float16 Scalar first and pass that Scalar")
        self._require_support("tik.vector_dup", d.tensor.dtype)
        self._h_check([dst], ["dst"])
        value = src if isinstance(src, Expr) else xv
        self._h_each([dst], ["dst"], lambda rel, mask, repeat, reps: self._dup(
            mask, self._h_view(dst, rel[0]), value, repeat, None, reps[0], 0))

    # ------------------------------------------------------------------ data move
    @tik_api("h_data_move")
    def h_data_move(self, dst, src):
        """Whole-view move UB <-> GM or UB -> UB as ``data_move`` bursts (rows of whole 32 B blocks)."""
        for t, n in ((dst, "dst"), (src, "src")):
            if not isinstance(t, Tensor):
                raise self._error(f"{n} should be tensor.", operand=n, value=repr(t),
                                  hint="pass a GM or UB tensor (or a view of one) created by tik_instance.Tensor")
        key = (src.space, dst.space)
        if key not in (("ub", "gm"), ("ub", "ub"), ("gm", "ub")):
            raise self._error(f"h_data_move doesn't support {src.space.upper()} to {dst.space.upper()}",
                              operand="dst", value=f"{src.space}->{dst.space}", limit="UB<->GM, UB->UB",
                              cls=UnsupportedOp,
                              hint="move GM <-> UB or UB -> UB with h_data_move; use data_move / load2d / fixpipe for "
                                   "the cube buffers")
        if src.dtype != dst.dtype:
            raise self._error("dst and src tensor should be the same dtype", operand="src", value=src.dtype,
                              limit=dst.dtype,
                              hint="use tensors of one dtype (convert with h_cast first)")
        if "bool" in (src.dtype, dst.dtype):
            raise self._error("h_data_move does not move bool tensors", operand="src", cls=UnsupportedOp,
                              hint="move the bytes of a uint8 view (tensor.reinterpret_cast_to with dtype uint8), or "
                                   "use data_move")
        self._h_check([dst, src], ["dst", "src"])
        lay = self._h_layout([dst, src], ["dst", "src"])
        size = max(1, dst.dt.bits // 8)
        L = lay.length
        if _dyn(L):
            self._emit("assert_multiple", P.cast(L, P.I64), 32 // size,
                       what=f"the run-time row length of src ({size}-byte elements)", unit="elements",
                       rule=f"a multiple of {32 // size} elements (32 B: "
                            f"{self._where.call if self._where else 'h_data_move'} moves whole 32-byte blocks)",
                       operand="src",
                       hint=f"make the row length a multiple of {32 // size} elements (32 bytes), or pad the rows")
        elif (L * size) % 32:
            raise self._error("The minimum continuous data block of src needs to be a multiple of 32B",
                              operand="src", value=L * size, limit="multiple of 32 B",
                              hint=f"make the last axis a multiple of {32 // size} elements (32 bytes), or pad it")
        if lay.offsets is not None and not _dyn(L):
            burst = L * size // 32
            sd, ss = lay.stride(0), lay.stride(1)
            if lay.nrows > 1 and sd is not None and ss is not None and sd >= L and ss >= L and \
                    ((sd - L) * size) % 32 == 0 and ((ss - L) * size) % 32 == 0 and lay.nrows <= 4095:
                self._move(self._h_view(dst, 0), self._h_view(src, 0), 0, lay.nrows, burst,
                           (ss - L) * size // 32, (sd - L) * size // 32, None)
                return
        burst = L * size // 32 if not _dyn(L) else _rt(idiv(P.binop("mul", P.cast(L, P.I64), size), 32))

        def row(rel):                       # one burst per row; a run-time length of 0 moves nothing
            if not _dyn(L):
                self._move(self._h_view(dst, rel[0]), self._h_view(src, rel[1]), 0, 1, burst, 0, 0, None)
                return
            with self.if_scope(_rt(L) > 0):
                self._move(self._h_view(dst, rel[0]), self._h_view(src, rel[1]), 0, 1, burst, 0, 0, None)
        self._h_for_rows(lay, row)

    # ------------------------------------------------------------------ reductions
    def _h_reduce(self, api, dst, src, axis):
        kind, fold = REDUCE[api]
        s = self._h_tensor(src, "src")
        shape, _ = self._h_static(src, "src")
        nd = len(shape)
        axes = self._h_axes(axis, nd)
        instr = {"add": "vcadd", "max": "vcmax", "min": "vcmin"}[kind]
        self._require_instr(instr, s.tensor.dtype)
        if len(axes) == nd:
            if not isinstance(dst, Scalar):
                raise self._error("dst should be Scalar when every axis is reduced", operand="dst",
                                  value=repr(dst),
                                  hint="pass a Scalar as dst, or reduce fewer axes")
            if dst.dtype != s.tensor.dtype:
                raise self._error("src's dtype and dst's dtype should be the same.", operand="dst", value=dst.dtype,
                                  limit=s.tensor.dtype, hint=f"pass a {s.tensor.dtype} Scalar as dst")
            self._h_reduce_all(kind, fold, dst, src)
            return
        d = self._h_tensor(dst, "dst")
        if d.dt is not s.dt:
            raise self._error("dst and src tensor should be the same dtype", operand="dst", value=d.tensor.dtype,
                              limit=s.tensor.dtype,
                              hint="use tensors of one dtype (convert with h_cast first)")
        want = [n for i, n in enumerate(shape) if i not in axes]
        dshape, _ = self._h_static(dst, "dst")
        self._h_same_shape(list(dshape), want, "dst", "src", "shapes: dst should be src without the reduced axes",
                           ref_shape=list(shape))
        if axes == tuple(range(nd - len(axes), nd)):
            self._h_reduce_rows(kind, fold, dst, src, len(axes))
        elif nd == 2 and axes == (0,):
            self._h_reduce_cols(kind, fold, dst, src)
        else:
            raise self._error(f"{api} over axis {axis} is not lowered (only trailing axes, or axis 0 of a 2-D "
                              f"tensor)", operand="axis", value=repr(axis), cls=UnsupportedOp,
                              hint="reduce trailing axes (lay the data out with the reduced axes last), or "
                                   "reshape a contiguous src to 2-D (leading reduced axes first) and pass axis=0")

    def _h_axes(self, axis, nd) -> tuple:
        if axis is None:
            return tuple(range(nd))
        items = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        out = []
        for a in items:
            if isinstance(a, bool) or not isinstance(a, int):
                raise self._error("axis's value should be int.", operand="axis", value=repr(a),
                                  hint="pass axis as an int, a list/tuple of ints, or None (every axis)")
            if not 0 <= a < nd:
                raise self._error(f"axis {axis} is out of bounds for src of dimension {nd}.", operand="axis",
                                  value=a, limit=f"[0, {nd - 1}]",
                                  hint=f"pass axes between 0 and {nd - 1} (negative axes are not accepted)")
            out.append(a)
        if len(set(out)) != len(out):
            raise self._error("duplicate value in 'axis'.", operand="axis", value=repr(axis),
                              hint="list each axis once")
        return tuple(sorted(out))

    def _h_scratch(self, dtype: str, n: int, name: str) -> Tensor:
        return self.Tensor(dtype, (max(n, 32 * 8 // max(8, _bits(dtype))),), scope="local.UB", name=name)

    def _h_row_result(self, kind, fold, out: Tensor, row: Tensor, length, scratch: Tensor, work: Tensor):
        """Reduce ``length`` (int, or IR for a run-time length) contiguous elements at ``row`` into
        ``out[0]`` (out 32 B aligned scratch/row). A run-time length runs the static lowering's
        instructions for that length: ``if L > PAR`` the column folds (a ``for_range`` over the
        chunks, the last one masked), else one reduction of mask ``L``; ``L`` = 0 is a run-time error."""
        par = par_of(row.dt)

        def final(src, mask):
            if kind == "add":
                self._whole("vcadd", mask, out, src, 1, 1, 1, 8)
            else:
                self._macro(kind, mask, out, src, work, 1, 8)

        if not _dyn(length):
            src = row
            if length > par:
                self._data_copy(scratch, row, par)
                for c in range(par, length, par):
                    self._h_fold(fold, scratch, self._h_view(row, c), min(par, length - c))
                src, length = scratch, par
            final(src, length)
            return
        L = P.cast(length, P.I64)
        self._emit("assert_in_range", L, 1, 2 ** 62,
                   what=f"the run-time length of a reduced row of src "
                        f"({self._where.call if self._where else 'h_reduce_*'} needs at least one element)")
        with self.if_scope(Expr(P.cmp("gt", L, par))):
            self._data_copy(scratch, row, par)
            with self.for_range(1, _rt(ceil_div(L, par))) as c:
                c.ir.hidden = True          # not the user's loop (HIDDEN_LOOP_VARS)
                start = P.binop("mul", P.cast(c.ir, P.I64), par)
                self._h_fold(fold, scratch, self._h_view(row, start), _rt(P.min_(P.binop("sub", L, start), par)))
            final(scratch, par)
        with self.else_scope():
            final(row, _rt(L))

    def _h_fold(self, fold, acc: Tensor, chunk: Tensor, width) -> None:
        """``acc[0:width] = fold(acc, chunk)`` (one masked repeat)."""
        self._lanewise(fold, width, acc, [(acc, "src0"), (chunk, "src1")], 1, None, [8, 8, 8], blk_max=U8)

    def _data_copy(self, dst: Tensor, src: Tensor, n: int):
        """Exact copy of ``n`` elements (a vector move of whole blocks)."""
        size = max(1, src.dt.bits // 8)
        self._move(dst, src, 0, 1, -(-n * size // 32), 0, 0, None)

    def _h_reduce_rows(self, kind, fold, dst, src, nred):
        shape, strides = src._shape, src._strides
        if not all(isinstance(x, int) for x in shape + strides + dst._shape + dst._strides):
            self._h_reduce_rows_dynamic(kind, fold, dst, src, nred)
            return
        lay = self._h_layout([src], ["src"])
        L = int(np.prod(shape[len(shape) - nred:]))
        if lay.length < L:
            raise self._error("the reduced axes of src are not contiguous; h_reduce_* needs them contiguous",
                              operand="src", cls=UnsupportedOp,
                              hint="reduce a contiguous tensor (copy the view into its own tensor first)")
        group = lay.length // L                      # rows merged into one contiguous run
        rows = [int(o) + g * L for o in lay.offsets[0] for g in range(group)]
        dlay = self._h_layout([dst], ["dst"])
        drows = [int(o) + i for o in dlay.offsets[0] for i in range(dlay.length)]
        par = par_of(src.dt)
        rstride = np.diff(rows) if len(rows) > 1 else np.array([0])
        size = max(1, src.dt.bits // 8)
        batch = (kind == "add" and L <= par and len(rows) > 1 and (rstride == rstride[0]).all() and
                 (int(rstride[0]) * size) % 32 == 0 and int(rstride[0]) * size // 32 <= 65535 and
                 drows == list(range(drows[0], drows[0] + len(drows))))
        if batch:
            for g in range(0, len(rows), MAX_REPEAT):
                k = min(MAX_REPEAT, len(rows) - g)
                self._whole("vcadd", L, self._h_view(dst, drows[g]), self._h_view(src, rows[g]), k, 1, 1,
                            int(rstride[0]) * size // 32)
            return
        with self.new_stmt_scope():
            scratch = self._h_scratch(src.dtype, par, "h_reduce_scratch")
            out = self._h_scratch(src.dtype, 16, "h_reduce_out")
            work = self._h_scratch(src.dtype, 16, "h_reduce_work")
            for r, dr in zip(rows, drows):
                if kind == "add" and L <= par:
                    self._whole("vcadd", L, self._h_view(dst, dr), self._h_view(src, r), 1, 1, 1, 8)
                    continue
                self._h_row_result(kind, fold, out, self._h_view(src, r), L, scratch, work)
                self._store_element(self._h_view(dst, dr), out[0:1])

    def _h_reduce_rows_dynamic(self, kind, fold, dst, src, nred):
        """Trailing-axes reduction with run-time dims: each outer row (a ``for_range`` when their number
        is a run-time value) is reduced into ``out`` by `_h_row_result` and stored into its dst element
        -- the static lowering's instructions row by row (vcadd then a store is the same value as a vcadd
        into dst)."""
        shape, strides = src._shape, src._strides
        k = len(shape) - nred
        L, expect = 1, 1
        for d, st in zip(reversed(shape[k:]), reversed(strides[k:])):
            if not ((isinstance(d, int) and d == 1) or _same(st, expect)):
                raise self._error("the reduced axes of src are not contiguous; h_reduce_* needs them contiguous",
                                  operand="src", cls=UnsupportedOp,
                                  hint="reduce a contiguous view (copy the slice into its own tensor first)")
            expect = _mul(expect, d)
            L = _mul(L, d)
        lay = _Layout(L, None, tuple(shape[:k]), [tuple(strides[:k]), tuple(dst._strides)])
        par = par_of(src.dt)
        with self.new_stmt_scope():
            scratch = self._h_scratch(src.dtype, par, "h_reduce_scratch")
            out = self._h_scratch(src.dtype, 16, "h_reduce_out")
            work = self._h_scratch(src.dtype, 16, "h_reduce_work")

            def row(rel):
                self._h_row_result(kind, fold, out, self._h_view(src, rel[0]), L, scratch, work)
                self._store_element(self._h_view(dst, rel[1]), out[0:1])
            self._h_for_rows(lay, row)

    def _h_reduce_cols(self, kind, fold, dst, src):
        n = src._shape[0]
        if _dyn(n):
            raise self._error("h_reduce_* over axis 0 of a src with a run-time number of rows is not lowered",
                              operand="src", cls=UnsupportedOp,
                              hint="fold the rows yourself in a for_range with h_add/h_max/h_min on row views")
        rows = [src[i, :] for i in range(n)]
        with self.new_stmt_scope():
            self._h_copy(dst, rows[0])
            for r in rows[1:]:
                self._h_rows(fold, [dst, dst, r], ["dst", "src0", "src1"])

    def _h_copy(self, dst: Tensor, src: Tensor):
        """Exact element copy of equal-shaped views: whole-block moves when the rows allow, else ``vmax`` of
        each element with itself (also for a run-time length: a block move would write past it). Not
        ``vmuls`` by 1: on the saturation-mode chips (numerics.md §3) a multiply turns +-inf into +-max and
        NaN into 0, so an ``axis=0`` reduction whose first row held inf/NaN lost it (k455)."""
        lay = self._h_layout([dst, src], ["dst", "src"])
        size = max(1, src.dt.bits // 8)
        if lay.offsets is not None and not _dyn(lay.length) and (lay.length * size) % 32 == 0:
            for row in range(lay.nrows):
                self._data_copy(self._h_view(dst, int(lay.offsets[0][row])),
                                self._h_view(src, int(lay.offsets[1][row])), lay.length)
            return
        self._h_rows("vmax", [dst, src, src], ["dst", "src0", "src1"])

    def _h_reduce_all(self, kind, fold, dst: Scalar, src):
        lay = self._h_layout([src], ["src"])
        par = par_of(src.dt)
        if lay.offsets is None and not all(isinstance(d, int) for d in lay.outer_shape):
            raise self._error("reducing every axis of a non-contiguous src with a run-time number of rows is not "
                              "lowered", operand="src", cls=UnsupportedOp,
                              hint="reduce a contiguous view, or reduce the last axis into a tensor first")
        n = lay.nrows
        with self.new_stmt_scope():
            parts = self._h_scratch(src.dtype, -(-n // par) * par, "h_reduce_parts")
            scratch = self._h_scratch(src.dtype, par, "h_reduce_scratch")
            work = self._h_scratch(src.dtype, 16, "h_reduce_work")
            out = self._h_scratch(src.dtype, 16, "h_reduce_out")
            i = [0]

            def row(rel):
                self._h_row_result(kind, fold, out, self._h_view(src, rel[0]), lay.length, scratch, work)
                if n > 1:
                    self._store_element(parts[i[0]:i[0] + 1], out[0:1])
                i[0] += 1
            self._h_for_rows(lay, row)
            if n > 1:
                self._h_row_result(kind, fold, out, parts, n, scratch, work)
            self._scalar_set(dst, out[0:1])

    def _h_arg(self, api, dst, src, axis):
        largest = api == "h_reduce_argmax"
        s = self._h_tensor(src, "src")
        shape, _ = self._h_static(src, "src")
        nd = len(shape)
        if axis is not None and (isinstance(axis, bool) or not isinstance(axis, int)):
            raise self._error("axis should be (int, None).", operand="axis", value=repr(axis),
                              hint="pass axis as an int or None")
        if isinstance(axis, int) and not 0 <= axis < nd:
            raise self._error(f"axis {axis} is out of bounds for src of dimension {nd}.", operand="axis", value=axis,
                              limit=f"[0, {nd - 1}]",
                              hint=f"pass an axis between 0 and {nd - 1}, or None for the whole tensor")
        self._require_instr("vcmax" if largest else "vcmin", s.tensor.dtype)
        whole = axis is None or nd == 1
        if whole:
            if not isinstance(dst, Scalar) or dst.dtype != "int32":
                raise self._error("dst should be an int32 Scalar when the index of the whole tensor is asked",
                                  operand="dst", value=repr(dst), hint="pass dst = tik_instance.Scalar(\"int32\")")
        else:
            d = self._h_tensor(dst, "dst")
            if d.tensor.dtype != "int32":
                raise self._error("dst's dtype should be int32.", operand="dst", value=d.tensor.dtype, limit="int32",
                                  hint="declare dst as an int32 tensor (it receives indices)")
            if axis != nd - 1:
                raise self._error(f"{api} over axis {axis} is not lowered (only the last axis)", operand="axis",
                                  value=axis, cls=UnsupportedOp,
                                  hint=f"pass axis={nd - 1} (the last axis) or axis=None (transpose src first for "
                                       "another axis)")
        lay = self._h_layout([src], ["src"])
        L = lay.length if whole else shape[-1]
        if whole and (lay.offsets is None or lay.nrows > 1):
            raise self._error(f"{api} of a whole non-contiguous view is not lowered", operand="src",
                              cls=UnsupportedOp, hint="copy the view into a contiguous tensor first")
        par = par_of(src.dt)
        dynamic = _dyn(L) or lay.offsets is None or _dyn(lay.length)
        if not whole:     # static rows too: a smaller dst was written past its end
            self._h_same_shape(list(dst._shape), list(shape[:-1]), "dst", "src",
                               "shapes: dst should be src without the last axis", ref_shape=list(shape))
        if not dynamic:
            rows = [(int(o) + g * L, k) for k, (o, g) in
                    enumerate((o, g) for o in lay.offsets[0] for g in range(lay.length // L))]
            longest = L
        else:
            longest = L if not _dyn(L) else self._h_bound([src])
        idx_t = "uint16" if src.dt.bits == 16 else "uint32"
        kind = "max" if largest else "min"
        with self.new_stmt_scope():
            out = self._h_scratch(src.dtype, 16, "h_arg_out")
            chunk = INDEX_REPEAT_LIMIT.get(src.dtype, 255)     # repeats per vec_reduce_max/min (index fits)
            work = self._h_scratch(src.dtype, self._work_need("max", True, max(1, min(longest // par, chunk)), src,
                                                                 four_terms=dynamic), "h_arg_work")
            regs = (self.Scalar(src.dtype, name="h_arg_value"), self.Scalar("int32", name="h_arg_index"),
                    self.Scalar(src.dtype, name="h_arg_tail_value"), self.Scalar("int32", name="h_arg_tail_index"))
            best_i = regs[1]

            def finish(dk):
                if whole:
                    self._builder.assign(dst.ir, best_i.ir)
                else:
                    self._store_element(self._h_view(dst, dk), best_i)
            if not dynamic:
                for r, k in rows:
                    self._h_arg_row(kind, largest, src, r, L, par, out, work, regs, idx_t)
                    finish(k if whole else self._h_row_offset(shape[:-1], dst._strides, k))
                return
            row_lay = _Layout(L, None, tuple(shape[:-1]), [tuple(src._strides[:-1]), tuple(dst._strides)
                                                            if not whole else ()])

            def row(rel):
                self._h_arg_row(kind, largest, src, rel[0], L, par, out, work, regs, idx_t)
                finish(rel[1] if not whole else None)
            self._h_for_rows(row_lay, row)

    @staticmethod
    def _h_row_offset(dims, strides, k: int):
        """Element offset of element ``k`` (row-major over the static ``dims``) of a view with ``strides``: a
        strided dst view of a reduction holds its rows apart, not back to back."""
        rel = 0
        for d, st in zip(reversed(dims), reversed(strides)):
            rel = _add(rel, _mul(k % d, st))
            k //= d
        return rel

    def _h_arg_row(self, kind, largest, src, r, L, par, out, work, regs, idx_t):
        """Index of the max/min of the ``L`` elements at ``src + r`` into ``regs[1]``: ``reduce_max/min
        (cal_index)`` over the full repeats, in chunks of at most `INDEX_REPEAT_LIMIT` repeats (the in-chunk
        index must fit the dtype: 511 repeats of f16), then the masked tail; a later chunk or the tail wins
        only if strictly better (ties: the first). A run-time ``L`` runs the same steps under ``if_scope``s
        and a loop over the chunks (``L`` = 0: error)."""
        best_v, best_i, tmp_v, tmp_i = regs
        idx_view = out.reinterpret_cast_to(idx_t)[1:2]
        chunk = INDEX_REPEAT_LIMIT.get(src.dtype, 255)

        def reduce_into(start, count, target_v, target_i):
            """``count`` full repeats from repeat ``start`` (ints, or facade Exprs) into the target registers."""
            at = r if isinstance(start, int) and start == 0 else \
                _add(r, _mul(start if isinstance(start, int) else P.cast(start.ir, P.INDEX), par))
            self._macro(kind, par, out, self._h_view(src, at), work, count, 8, True)
            self._scalar_set(target_v, out[0:1])
            self._scalar_set(target_i, idx_view)
            if not (isinstance(start, int) and start == 0):
                step = start * par if isinstance(start, int) else P.cast(P.binop("mul", start.ir, par),
                                                                           target_i.ir.type)
                self._builder.assign(target_i.ir, P.binop("add", target_i.ir, step))

        def full_part(full):
            if isinstance(full, int):
                reduce_into(0, min(full, chunk), best_v, best_i)
                for start in range(chunk, full, chunk):
                    reduce_into(start, min(chunk, full - start), tmp_v, tmp_i)
                    combine()
                return
            first = _rt(P.binop("min", P.cast(full.ir, P.I64), P.Const(chunk, P.I64)))
            reduce_into(0, first, best_v, best_i)
            with self.if_scope(full > chunk):
                with self.for_range(1, _rt(idiv(P.binop("add", P.cast(full.ir, P.I64), P.Const(chunk - 1, P.I64)),
                                                 chunk))) as c:
                    start = _rt(P.binop("mul", P.cast(c.ir, P.I64), P.Const(chunk, P.I64)))
                    count = _rt(P.binop("min", P.binop("sub", P.cast(full.ir, P.I64), start.ir),
                                        P.Const(chunk, P.I64)))
                    reduce_into(start, count, tmp_v, tmp_i)
                    combine()

        def tail_part(full, tail, target_v, target_i):
            self._macro(kind, tail, out, self._h_view(src, _add(r, _mul(full if isinstance(full, int) else
                                                                         P.cast(full.ir, P.INDEX), par))),
                        work, 1, 8, True)
            self._scalar_set(target_v, out[0:1])
            self._scalar_set(target_i, idx_view)
            step = full * par if isinstance(full, int) else P.cast(P.binop("mul", full.ir, par), target_i.ir.type)
            self._builder.assign(target_i.ir, P.binop("add", target_i.ir, step))

        def combine():
            # as one vec_reduce_max/min over the whole row: a NaN wins (the first NaN), else strictly better
            # wins (ties: the first) -- pto_vector.md "Reductions": "a NaN lane wins"
            better = any_((tmp_v > best_v) if largest else (tmp_v < best_v),
                          all_(tmp_v != tmp_v, best_v == best_v))
            with self.if_scope(better):
                self._scalar_set(best_v, tmp_v)
                self._scalar_set(best_i, tmp_i)

        if not _dyn(L):
            full, tail = divmod(L, par)
            if full:
                full_part(full)
            if tail:
                tail_part(full, tail, *((tmp_v, tmp_i) if full else (best_v, best_i)))
                if full:
                    combine()
            return
        n = P.cast(L, P.I64)
        self._emit("assert_in_range", n, 1, 2 ** 62,
                   what=f"the run-time length of src's last axis "
                        f"({self._where.call if self._where else 'h_reduce_arg*'} needs at least one element)")
        full, tail = _rt(idiv(n, par)), _rt(irem(n, par))
        with self.if_scope(full > 0):
            full_part(full)
        with self.if_scope(tail > 0):
            with self.if_scope(full > 0):
                tail_part(full, tail, tmp_v, tmp_i)
                combine()
            with self.else_scope():
                tail_part(full, tail, best_v, best_i)

    @tik_api("h_reduce_argmax")
    def h_reduce_argmax(self, dst, src, axis=None):
        """``int32`` index of the maximum along the last axis (or of the whole tensor into a Scalar)."""
        self._h_arg("h_reduce_argmax", dst, src, axis)

    @tik_api("h_reduce_argmin")
    def h_reduce_argmin(self, dst, src, axis=None):
        """``int32`` index of the minimum along the last axis (or of the whole tensor into a Scalar)."""
        self._h_arg("h_reduce_argmin", dst, src, axis)

    # ------------------------------------------------------------------ compare / select
    def _h_mask(self, mask_tensor, ref_shape, ref_name: str) -> Tensor:
        """The ``bool`` mask operand of h_cmpv/h_sel: a UB tensor of ``ref``'s shape."""
        self._h_tensor(mask_tensor, "mask_tensor")
        if mask_tensor.dtype != "bool":
            raise self._error(f"mask_tensor should be a bool tensor, got {mask_tensor.dtype}", operand="mask_tensor",
                              value=mask_tensor.dtype, limit="bool", hint="declare mask_tensor with dtype \"bool\"")
        self._h_same_shape(self._h_static(mask_tensor, "mask_tensor")[0], ref_shape, "mask_tensor", ref_name)
        return mask_tensor

    def _h_mask_bytes(self, mask: Tensor, rel, dtype_name: str = "uint8", row_start: bool = True) -> Tensor:
        """A 1-element ``dtype_name`` view of the mask's storage at the bits of element ``mask.offset + rel``
        (MASK_LAYOUT); a row start must be on a 32-byte boundary of the bits."""
        from pto_core.dtypes import dtype as _dt
        p = _add(mask.offset, rel)
        dt = _dt(dtype_name)
        per = dt.bits
        off = p // per if isinstance(p, int) else P.binop("div", P.cast(p, P.INDEX), per)
        view = Tensor(self, mask.storage, dt, (1,), (1,), off, False, mask._name)
        if not row_start:
            return view
        what = f"{self._where.call if self._where else 'h_cmpv/h_sel'}: a row of mask_tensor starts at element {{}}"
        if isinstance(p, int):
            if p % MASK_ROW_ALIGN:
                raise self._error(what.format(p) + f"; its bits (MASK_LAYOUT: 1 bit per element) must start on a "
                                  f"32-byte boundary, i.e. an element offset that is a multiple of {MASK_ROW_ALIGN}",
                                  operand="mask_tensor", value=p, limit=f"multiple of {MASK_ROW_ALIGN}", cls=Misaligned,
                                  hint="use whole (contiguous) tensors, or rows that are multiples of "
                                       f"{MASK_ROW_ALIGN} elements apart in the mask")
        else:
            self._emit("assert_multiple", P.cast(p, P.I64), MASK_ROW_ALIGN,
                       what=f"{self._where.call if self._where else 'h_cmpv/h_sel'}: the first element of a row of "
                            f"mask_tensor =",
                       rule=f"a multiple of {MASK_ROW_ALIGN} (MASK_LAYOUT: 1 bit per element; a row's bits start "
                            f"on a 32-byte boundary)",
                       operand="mask_tensor",
                       hint="use whole (contiguous) tensors, or rows that are multiples of "
                            f"{MASK_ROW_ALIGN} elements apart in the mask")
        return view

    def _h_mask_rows(self, views: list, names: list, full_part, tail_part) -> None:
        """Drive a bit-mask h_ op over the rows of equal-shaped ``views`` (mask last): per row,
        ``full_part(rel, k)`` for groups of ``k`` (int or facade Expr) full repeats of ``PAR`` lanes and
        ``tail_part(rel, t)`` for the last ``t`` lanes (``L % PAR``; run only if non-zero). Groups hold
        MASK_GROUP repeats so that every group's bits start on a 32-byte boundary."""
        lay = self._h_layout(views, names)
        par = par_of(*[v.dt for v in views[:-1]])
        L = lay.length
        bound = self._h_bound(views[:-1]) if _dyn(L) else None

        def row(base):
            self._h_mask_bytes(views[-1], base[-1])          # the row's bits start a 32 B block
            if isinstance(L, int):
                full, tail = divmod(L, par)
                for start in range(0, full, MASK_GROUP):
                    full_part([_add(b, start * par) for b in base], min(MASK_GROUP, full - start))
                if tail:
                    tail_part([_add(b, full * par) for b in base], tail)
                return
            full, tail = idiv(L, par), irem(L, par)
            groups = max(1, -(-(bound // par) // MASK_GROUP))
            for g in range(groups):
                k = P.max_(P.min_(P.binop("sub", full, g * MASK_GROUP), MASK_GROUP), 0)
                full_part([_add(b, g * MASK_GROUP * par) for b in base], _rt(k))
            if bound // par >= groups * MASK_GROUP:
                # views holding exactly `groups` full groups: a length needing more runs the next group (past the
                # views) and is refused there, not cut after `groups` and accepted (as `_h_row`)
                with self.if_scope(Expr(P.cmp("gt", full, groups * MASK_GROUP))):
                    full_part([_add(b, groups * MASK_GROUP * par) for b in base],
                              _rt(P.min_(P.binop("sub", full, groups * MASK_GROUP), MASK_GROUP)))
            with self.if_scope(_rt(tail) > 0):
                tail_part([_add(b, _mul(full, par)) for b in base], _rt(tail))
        self._h_for_rows(lay, row)

    @tik_api("h_cmpv")
    def h_cmpv(self, mask_tensor, src0, src1, cmp_mode):
        """``mask_tensor[...] = src0 <cmp_mode> src1`` element-wise (``cmp_mode`` one of ``LT GT GE EQ NE LE``;
        one source may be a scalar); the bool mask is for h_sel (bytes: MASK_LAYOUT)."""
        mode = cmp_mode.lower() if isinstance(cmp_mode, str) else None
        if mode not in CMP_MODES:
            raise self._error(f"cmp_mode should be one of {', '.join(m.upper() for m in CMP_MODES)}, got {cmp_mode!r}",
                              operand="cmp_mode", value=repr(cmp_mode), limit=", ".join(m.upper() for m in CMP_MODES),
                              hint="pass cmp_mode as one of the strings 'LT', 'GT', 'GE', 'EQ', 'NE', 'LE'")
        t0, t1 = isinstance(src0, Tensor), isinstance(src1, Tensor)
        if not (t0 or t1):
            raise self._error("wrong src data type for Instruction h_cmpv: one of src0/src1 must be a tensor",
                              operand="src0", value=f"{type(src0).__name__}, {type(src1).__name__}",
                              hint="pass a UB tensor as src0 or src1 (the other may be a Scalar or an immediate)")
        if not t0:                                            # x <op> t  ==  t <mirrored op> x
            src0, src1, mode = src1, src0, MIRROR[mode]
        s = self._h_tensor(src0, "src0" if t0 else "src1")
        if t0 and t1:
            o = self._h_tensor(src1, "src1")
            if o.dt is not s.dt:
                raise self._error(f"src1 and src0 tensor should be the same dtype, got {src1.dtype} and {src0.dtype}",
                                  operand="src1", value=src1.dtype, limit=src0.dtype,
                                  hint="use tensors of one dtype (convert with h_cast first)")
            self._h_check([src0, src1], ["src0", "src1"])
        self._require_support("tik.h_cmpv", src0.dtype)       # TIK's own check (check_cmpv_ops_params)
        self._require_instr(f"vcmpv_{mode}", src0.dtype)
        self._require_instr("vcmp", src0.dtype)
        mask = self._h_mask(mask_tensor, self._h_static(src0, "src0")[0], "src0")
        par = par_of(src0.dt)
        with self.new_stmt_scope():
            if t0 and t1:
                views, names, scalar = [src0, src1, mask], ["src0", "src1", "mask_tensor"], None
            else:
                xv = self._h_scalar(src1, src0.dtype, "src1" if t0 else "src0")   # after the swap
                n = _scalar_copy_elems(src0.dtype)
                scalar = self._h_scratch(src0.dtype, n, "h_cmpv_scalar")     # SCALAR_COPY_BYTES
                self._dup(n, scalar, xv, 1, None, 8, 0)
                views, names = [src0, mask], ["src0", "mask_tensor"]
            bits = self._h_scratch("uint64", 4, "h_cmpv_tail")

            def srcs(rel):
                a = self._h_view(src0, rel[0])
                b = self._h_view(src1, rel[1]) if scalar is None else scalar
                return a, b

            def full_part(rel, k):
                a, b = srcs(rel)
                self._cmpv(mode, self._h_mask_bytes(mask, rel[-1], row_start=False), [(a, "src0"), (b, "src1")], None,
                           k, None if scalar is None else [1, 0],
                           [8, 8 if scalar is None else 0], U8)

            def tail_part(rel, t):
                a, b = srcs(rel)
                self._vcmp(mode, t, a, b, 1, 1 if scalar is None else 0)   # masked-off lanes give 0 bits
                d = self._vec_operand(bits, "dst", align=16)
                self._vec_emit("mov_cmpmask_to_tensor", d.ptr, footprint=[self._vec_access(d, 2, True)])
                word = self._h_mask_bytes(mask, rel[-1], "uint64", row_start=False)  # a repeat's bits: PAR/64 words
                for w in range(par // 64):
                    self._store_element(word, bits[w:w + 1], dst_offset=w)
            self._h_mask_rows(views, names, full_part, tail_part)

    @tik_api("h_sel")
    def h_sel(self, dst, src0, src1, mask_tensor):
        """``dst[...] = src0 if mask_tensor else src1`` element-wise (one source may be a scalar); the mask as
        written by h_cmpv (MASK_LAYOUT)."""
        t0, t1 = isinstance(src0, Tensor), isinstance(src1, Tensor)
        if not (t0 or t1):
            raise self._error("wrong src data type for Instruction h_sel: one of src0/src1 must be a tensor",
                              operand="src0", value=f"{type(src0).__name__}, {type(src1).__name__}",
                              hint="pass a UB tensor as src0 or src1 (the other may be a Scalar or an immediate)")
        tensors = [t for t, ok in ((src0, t0), (src1, t1)) if ok]
        names = [n for n, ok in (("src0", t0), ("src1", t1)) if ok]
        d = self._h_elementwise_check("h_sel", dst, tensors, names)
        self._require_instr("vsel", d.tensor.dtype)
        self._require_support("tik.h_sel", d.tensor.dtype)     # TIK's own check (check_sel_ops_params)
        mode0 = platform.current_soc().short_soc_version in SEL_MODE0_ONLY
        mask = self._h_mask(mask_tensor, self._h_static(dst, "dst")[0], "dst")
        par = par_of(dst.dt)
        with self.new_stmt_scope():
            x = None
            if not t0 or (mode0 and not t1):                  # a one-block copy of the scalar (SCALAR_COPY_BYTES)
                xn = "src0" if not t0 else "src1"
                xv = self._h_scalar(src0 if not t0 else src1, dst.dtype, xn)
                n = _scalar_copy_elems(dst.dtype)
                x = self._h_scratch(dst.dtype, n, "h_sel_scalar")
                self._dup(n, x, xv, 1, None, 8, 0)
            elif not t1:
                x = self._h_scalar(src1, dst.dtype, "src1")
            views = [dst] + tensors + [mask]

            bits = self._h_scratch("uint64", 4, "h_sel_tail")

            def emit_mode0(rel, lanes, j):
                """SEL_MODE0_ONLY: repeat ``j`` (int or IR) of a row -- its PAR bits copied to an aligned scratch
                and loaded into CMPMASK by vec_sel mode 0, which selects one repeat."""
                off = j * par if isinstance(j, int) else P.binop("mul", P.cast(j, P.INDEX), par)
                r = [_add(o, off) for o in rel]
                word = self._h_mask_bytes(mask, r[-1], "uint64", row_start=False)
                for w in range(par // 64):
                    self._store_element(bits[w:w + 1], word, src_offset=w)
                a = self._h_view(src0, r[1]) if t0 else x
                b = self._h_view(src1, r[-2]) if t1 else x
                self._sel(lanes, 0, self._h_view(dst, r[0]), bits.reinterpret_cast_to("uint8"), a, b, 1,
                          [1, 1 if t0 else 0, 1 if t1 else 0], [8, 8, 8], vec_form=True)

            def emit(rel, lanes, k, tail=False):
                if mode0:
                    if isinstance(k, int):
                        for j in range(k):
                            emit_mode0(rel, lanes, j)
                    else:
                        with self.for_range(0, k) as j:
                            j.ir.hidden = True      # not the user's loop (HIDDEN_LOOP_VARS)
                            emit_mode0(rel, lanes, j.ir)
                    return
                dv, sel = self._h_view(dst, rel[0]), self._h_mask_bytes(mask, rel[-1], row_start=False)
                if tail:                                      # the tail's bits to a 32 B aligned scratch
                    word = self._h_mask_bytes(mask, rel[-1], "uint64", row_start=False)
                    for w in range(par // 64):
                        self._store_element(bits[w:w + 1], word, src_offset=w)
                    sel = bits.reinterpret_cast_to("uint8")
                if t0 and t1:
                    self._sel(lanes, 2, dv, sel, self._h_view(src0, rel[1]), self._h_view(src1, rel[2]), k, None,
                              [8, 8, 8], vec_form=True)
                elif t0:
                    self._sel(lanes, 1, dv, sel, self._h_view(src0, rel[1]), x, k, None, [8, 8, 0], vec_form=True)
                else:
                    self._sel(lanes, 2, dv, sel, x, self._h_view(src1, rel[1]), k, [1, 0, 1], [8, 0, 8],
                              vec_form=True)
            self._h_mask_rows(views, ["dst"] + names + ["mask_tensor"], lambda rel, k: emit(rel, par, k),
                              lambda rel, t: emit(rel, t, 1, True))


def _row_offset(idx, strides):
    """Element offset of outer index ``idx`` (ints or IR) with ``strides`` (ints or IR)."""
    off = 0
    for i, st in zip(idx, strides):
        off = _add(off, _mul(i if isinstance(i, int) else P.cast(i, P.INDEX), st))
    return off


def _shape_str(dims) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else "<run-time>" for d in dims) + "]"


def _bits(dtype: str) -> int:
    from pto_core.dtypes import dtype as _dt
    return _dt(dtype).bits


def _double_method(api: str):
    def method(self, dst, src0, src1):
        self._h_double(api, dst, src0, src1)
    method.__name__ = api
    method.__doc__ = f"``{api}(dst, src0, src1)``: element-wise over whole views (one of the sources may be a scalar)."
    return tik_api(api)(method)


def _single_method(api: str):
    def method(self, dst, src):
        self._h_single(api, dst, src)
    method.__name__ = api
    method.__doc__ = f"``{api}(dst, src)``: element-wise {SINGLE[api]} over whole views."
    return tik_api(api)(method)


def _reduce_method(api: str):
    def method(self, dst, src, axis=None):
        self._h_reduce(api, dst, src, axis)
    method.__name__ = api
    method.__doc__ = f"``{api}(dst, src, axis=None)``: reduction over ``axis`` (see the module doc)."
    return tik_api(api)(method)


for _n in DOUBLE:
    setattr(HVectorAPI, _n, _double_method(_n))
for _n in SINGLE:
    setattr(HVectorAPI, _n, _single_method(_n))
for _n in REDUCE:
    setattr(HVectorAPI, _n, _reduce_method(_n))
del _n

__all__ = ["HVectorAPI"]
