"""``vec_expm1_high_preci``: TIK's ``e**x - 1`` macro (float16), traced instruction by instruction.

TIK documents the API (tik_api.md §9.3, hiascend TIK reference "vec_expm1_high_preci") as
``dst = e**src - 1`` "more precise than vec_exp" with a float16 ``work_tensor`` of
``11 * wk_size_unit`` elements, ``wk_size_unit = ceil16((repeat_times - 1) * rs * 16 + 128)``
where ``rs = 8`` if ``0 < src_rep_stride <= 8`` else ``src_rep_stride``. The result is fixed by
the instructions the macro issues, which the public TIK sources show (the API and its
debugger model, ``tik_vector_api`` / ``debug/simd.py`` ``Vexpm1HighPreci``). We issue the
same instructions on the same regions of ``work_tensor`` (``E`` = the 128-lane extent of
``src`` with stride ``rs``, rounded up to 16 elements)::

    work[0:E]   <- vector_dup 1.7;  work[E:2E]  (u16) <- vcmpv_lt(src, work[0:E])
    work[0:E]   <- vector_dup -0.7; work[2E:3E] (u16) <- vcmpv_gt(src, work[0:E])
    work[0:E]   (u16) <- vand(lt bits, gt bits)                 # -0.7 < x < 1.7, per lane
    work[2E:3E] <- vexp(src);  work[E:2E] <- vadds(work[2E:3E], -1)            # exp branch
    work[2E:3E] <- float16(taylor7(float32(src)))      # per 64-lane half, scratch work[3E:]
    for r in range(repeat_times):                      # one repeat at a time
        CMPMASK <- the 128 bits of repeat r;  dst(repeat r) <- vsel(work[2E:], work[E:])

``taylor7(x)`` (float32, each step one rounded instruction): ``s = x + 0``, ``t = (x*x) * 0.5``,
``s = t + s``, then for ``k = 3..7``: ``t = (t*x) * float32(1/k)``, ``s = s + t``.

So ``dst = float16(taylor7(float32(x)))`` where ``-0.7 < x < 1.7`` (the float16 constants
``1.7001953125`` / ``-0.7001953125``) and ``float16(float16(exp(x)) - 1)`` elsewhere,
with the core's ``vexp`` (correctly rounded, pto_vector.md §4) and its overflow mode. The
macro's side effects are reproduced too: every region of ``work_tensor`` it uses is
overwritten. The ``vand`` over whole 256-byte repeats of the compare bits (TIK's own layout)
reads bytes ``vcmpv`` does not write; TIK leaves them stale, we zero them first
(`EXPM1_ZERO_COMPARE_PADDING`), so no read of unwritten bytes is reported.

Checks (TIK's ``check_high_preci_param``, ``check_over_high_preci`` and the macro's slices):
UB operands, 32-byte aligned, one dtype (float16, ``api_check_support``), repeat and stride
ranges, dst/src extents, dst/src/work not overlapping, and ``work_tensor`` holding what the
macro touches: ``max(11 * ceil16(src extent), 3E + 4T)`` elements, ``T = 2 * ceil16(src
extent of a 64-lane half)`` (the documented ``11 * wk_size_unit`` always suffices).
Immediate masks and strides only (TIK's macro splits the mask in Python); ``repeat_times`` may
be a Scalar (the work size is then checked when the kernel runs).
"""
from __future__ import annotations

from pto_core.errors import OutOfBounds, UnsupportedOp

from .api import tik_api
from .scalar import Expr
from .vector_common import U8, VectorBase, ceil_div, imax, imul, iadd, max_offset

#: Named choice: the macro reads no work bytes it did not write, so it does not trip the
#: uninitialised-read check a user enables for their own kernel. TIK's ``vand`` reads whole
#: 256-byte repeats of the compare bits (``vcmpv`` writes 16 bytes per repeat) and its ``vcmpv``
#: compares all 128 lanes against bounds dup'ed under ``mask`` only; we zero the compare regions
#: first (two ``vector_dup`` more than TIK issues) and dup the bounds into all 128 lanes. The
#: extra lanes never reach ``dst`` (the final ``vsel`` uses ``mask``), so ``dst`` is unchanged.
EXPM1_ZERO_COMPARE_PADDING = True
#: the float16 bounds of the Taylor branch (TIK dups them into a float16 tensor)
TAYLOR_LOW, TAYLOR_HIGH = -0.7, 1.7
#: the last power of the Taylor series (``x**k / k!`` for ``k <= 7``)
TAYLOR_ORDER = 7
#: documented work size: ``WORK_UNITS * wk_size_unit`` float16 elements
WORK_UNITS = 11
#: float32 stage of one 64-lane half: source, result and two temporaries
F32_BUFFERS = 4
_F16_BLOCK = 16                   # float16 elements per 32-byte block
_HALF = 64                        # lanes of one float32 pass


def _ceil16(n):
    return imul(ceil_div(n, _F16_BLOCK), _F16_BLOCK)


def _extent(repeat, lanes: int, rep_stride: int):
    """Float16 elements from an operand's start to the end of what ``repeat`` repeats of ``lanes``
    lanes (block stride 1, repeat stride ``rep_stride`` blocks) touch (TIK ``vector_max_offset_cal``)."""
    return max_offset(repeat, lanes, 1, rep_stride, 0, _F16_BLOCK)


def _mask_length(mask) -> int:
    """Last active lane + 1 of an immediate float16 mask (int count or ``[high, low]`` bits)."""
    if isinstance(mask, int):
        return mask
    hi, lo = mask
    return 64 + hi.bit_length() if hi else lo.bit_length()


def _halves(mask) -> list:
    """TIK's float32 passes: ``(mask of the pass, first lane)``, the high 64 lanes first."""
    if isinstance(mask, int):
        return [(mask, 0)] if mask <= _HALF else [(mask - _HALF, _HALF), (_HALF, 0)]
    hi, lo = mask
    return ([([0, hi], _HALF)] if hi else []) + [([0, lo], 0)]


class Expm1API(VectorBase):
    """``vec_expm1_high_preci`` (mixin)."""

    @tik_api("vec_expm1_high_preci")
    def vec_expm1_high_preci(self, mask, dst, src, work_tensor, repeat_times, dst_rep_stride, src_rep_stride):
        """``dst = e**src - 1`` for float16, TIK's macro (module doc)."""
        repeat = self._vec_repeat(repeat_times)
        drs = self._vec_stride(dst_rep_stride, "dst_rep_stride", U8)
        srs = self._vec_stride(src_rep_stride, "src_rep_stride", U8)
        for v, name in ((drs, "dst_rep_stride"), (srs, "src_rep_stride")):
            if not isinstance(v, int):
                raise self._error(f"{name} must be an immediate int here: a run-time stride changes the "
                                  f"layout of TIK's macro in work_tensor, which is not modelled", operand=name,
                                  value=repr(v), cls=UnsupportedOp, hint="pass the stride as a Python int")
        d = self._vec_operand(dst, "dst")
        s = self._vec_operand(src, "src")
        w = self._vec_operand(work_tensor, "work_tensor")
        self._same_dtype(d, s)
        if w.dt is not d.dt:
            raise self._error(f"work_tensor's dtype must be same with dst's dtype: {w.tensor.dtype} vs "
                              f"{d.tensor.dtype}", operand="work_tensor", value=w.tensor.dtype,
                              limit=d.tensor.dtype, hint=f"declare work_tensor {d.tensor.dtype}")
        self._require_support("tik.vec_expm1_high_preci", d.tensor.dtype)
        m = self._vec_mask(mask, [d.dt])
        if isinstance(mask, Expr) or not m.static:
            raise self._error("vec_expm1_high_preci needs an immediate mask (an int or a list of two ints): TIK's "
                              "macro splits it into two 64-lane float32 passes while tracing", operand="mask",
                              value=repr(mask), hint="pass the mask as Python ints")
        imm = int(mask) if not isinstance(mask, (list, tuple)) else [int(mask[0]), int(mask[1])]
        if isinstance(imm, list) and imm[1] == 0:
            raise self._error(f"a bit mask with no low-64-lane bits ({[hex(v) for v in imm]}) is not accepted: "
                              f"TIK's macro runs its float32 pass on the low 64 lanes with an all-zero mask, which "
                              f"TIK rejects", operand="mask", value=[hex(v) for v in imm],
                              hint="select at least one of lanes 0..63, or use a contiguous mask")
        mlen = _mask_length(imm)
        # TIK check_over_high_preci: dst/src extents, work size, overlaps
        d_ext = _extent(repeat, mlen, drs)
        s_ext = _extent(repeat, mlen, srs)
        self._vec_access(d, d_ext, True)
        self._vec_access(s, s_ext, False)
        rs = 8 if 0 < srs < 8 else srs
        big = _ceil16(_extent(repeat, 128, rs))                   # E: one work region
        halves = _halves(imm)
        tmp = 0
        for hm, _ in halves:
            tmp = imax(tmp, imul(2, _ceil16(_extent(repeat, _mask_length(hm), srs))))
        need = imax(imul(WORK_UNITS, _ceil16(s_ext)), iadd(imul(3, big), imul(F32_BUFFERS, tmp)))
        self._check_work(w, need, repeat, rs)
        self._check_apart(d, d_ext, s, s_ext, "dst", "src")
        if isinstance(s_ext, int):
            self._check_apart(s, s_ext, w, WORK_UNITS * _ceil16(s_ext), "src", "work_tensor")
            self._check_apart(d, d_ext, w, WORK_UNITS * _ceil16(s_ext), "dst", "work_tensor")
        self._expm1_macro(imm, dst, src, work_tensor, repeat_times, repeat, drs, srs, big, halves)

    # ------------------------------------------------------------------ checks
    def _check_work(self, w, need, repeat, rs) -> None:
        have = w.tensor.size
        doc = f"{WORK_UNITS} * ceil16((repeat_times - 1) * {rs} * 16 + 128)"
        if isinstance(need, int) and isinstance(have, int):
            if need > have:
                raise self._error(f"work_tensor overflow, needed {need} but only {have} elements",
                                  operand="work_tensor", value=have, limit=f">= {need}", cls=OutOfBounds,
                                  hint=f"size work_tensor as documented: {doc} float16 elements "
                                       f"(= {WORK_UNITS * _ceil16(_extent(repeat, 128, rs))} here)")
            return
        self._record_check(0, need, have, f"work_tensor of tik.vec_expm1_high_preci (needs {doc} float16 "
                                          f"elements, tensor {w.tensor.name!r})")

    def _check_apart(self, a, a_ext, b, b_ext, an: str, bn: str) -> None:
        """TIK ``check_high_preci_overlap``: two operands in one tensor must not overlap at all."""
        if a.tensor.storage is not b.tensor.storage:
            return
        ao, bo = a.static_offset, b.static_offset
        if not all(isinstance(v, int) for v in (ao, bo, a_ext, b_ext)):
            return
        if ao + a_ext <= bo or bo + b_ext <= ao:
            return
        raise self._error(f"vec_expm1_high_preci doesn't support {an} and {bn} address overlapping fully or "
                          f"partially: {an} elements [{ao}, {ao + a_ext}) and {bn} elements [{bo}, {bo + b_ext}) "
                          f"of tensor {a.tensor.name!r}", operand=bn, hint="use separate tensors")

    # ------------------------------------------------------------------ the macro
    def _expm1_macro(self, mask, dst, src, work, repeat, rep_ir, drs: int, srs: int, big, halves) -> None:
        """``repeat``: the caller's repeat_times (int or TIK value); ``rep_ir``: it as int / IR (extents)."""
        e = big
        region = lambda k: work[imul(k, e):imul(k + 1, e)]          # noqa: E731
        and_t = region(0).reinterpret_cast_to("uint16")
        lt = region(1).reinterpret_cast_to("uint16")
        gt = region(2).reinterpret_cast_to("uint16")
        cmp_repeat, and_stride = (1, 0) if srs == 0 else (repeat, 8)
        # the Taylor range as CMPMASK bits, 128 per repeat: (src < 1.7) & (src > -0.7). The vand below
        # reads whole 256-byte repeats of the packed compare bits (16 bytes per repeat): zero what it
        # reads first (EXPM1_ZERO_COMPARE_PADDING), so the macro never reads bytes nothing wrote
        if EXPM1_ZERO_COMPARE_PADDING:
            self.vector_dup(128, lt, 0, repeat, 1, and_stride)
            self.vector_dup(128, gt, 0, repeat, 1, and_stride)
        bound_mask = 128 if EXPM1_ZERO_COMPARE_PADDING else mask     # vcmpv compares all 128 lanes
        self.vector_dup(bound_mask, region(0), TAYLOR_HIGH, repeat, 1, srs)
        self.vcmpv_lt(lt, src, region(0), cmp_repeat, 1, 1, srs, srs)
        self.vector_dup(bound_mask, region(0), TAYLOR_LOW, repeat, 1, srs)
        self.vcmpv_gt(gt, src, region(0), cmp_repeat, 1, 1, srs, srs)
        self.vand(128, and_t, lt, gt, repeat, 1, 1, 1, and_stride, and_stride, and_stride)
        # exp branch: work[E:2E] = float16(exp(x)) - 1
        self.vexp(mask, region(2), src, repeat, 1, 1, srs, srs)
        self.vadds(mask, region(1), region(2), -1, repeat, 1, 1, srs, srs)
        # Taylor branch: work[2E:3E] = float16(taylor7(float32(x))), one 64-lane half at a time
        f32_stride = srs * 2 if srs <= 4 else 8
        rest = work[imul(3, e):]
        for hm, lane in halves:
            t = imul(2, _ceil16(_extent(rep_ir, _mask_length(hm), srs)))
            self._taylor_half(hm, region(2)[lane:], src[lane:], rest, t, repeat, srs, f32_stride)
        # select one repeat at a time with that repeat's 128 bits in CMPMASK
        sel_step = 0 if srs == 0 else 8
        with self.for_range(0, repeat) as r:
            r.ir.hidden = True              # not the user's loop: errors name no index of it (HIDDEN_LOOP_VARS)
            i = r.ir
            cm = self.mov_tensor_to_cmpmask(and_t[imul(i, sel_step):])
            step = srs * _F16_BLOCK
            self.vsel(mask, 0, dst[imul(i, drs * _F16_BLOCK):], cm, work[iadd(imul(2, e), imul(i, step)):],
                      work[iadd(e, imul(i, step)):], 1, 1, 1, 1, drs, srs, srs)

    def _taylor_half(self, mask, dst16, src16, work, tmp, repeat, srs: int, fs: int) -> None:
        """TIK ``_fp162fp32_func_compute`` + ``_expm1_taylor``: float16 -> float32, the series, -> float16."""
        x = work[0:tmp].reinterpret_cast_to("float32")
        out = work[tmp:imul(2, tmp)].reinterpret_cast_to("float32")
        tmp32 = imul(tmp, 2) // 4 if isinstance(tmp, int) else ceil_div(imul(tmp, 2), 4)
        scratch = work[imul(2, tmp):].reinterpret_cast_to("float32")
        w1, w2 = scratch[0:tmp32], scratch[tmp32:imul(2, tmp32)]
        self.vconv(mask, "none", x, src16, repeat, 1, 1, fs, srs)
        self.vadds(mask, out, x, 0, repeat, 1, 1, fs, fs)                 # s = x
        self.vadds(mask, w1, x, 0, repeat, 1, 1, fs, fs)
        self.vmul(mask, w2, w1, x, repeat, 1, 1, 1, fs, fs, fs)          # x * x
        self.vmuls(mask, w1, w2, 1 / 2, repeat, 1, 1, fs, fs)            # t = x**2 / 2
        self.vadd(mask, w2, w1, out, repeat, 1, 1, 1, fs, fs, fs)         # s += t
        for k in range(3, TAYLOR_ORDER + 1):
            prod, acc, new = (out, w2, out) if k % 2 else (w2, out, w2)
            self.vmul(mask, prod, w1, x, repeat, 1, 1, 1, fs, fs, fs)     # t * x
            self.vmuls(mask, w1, prod, 1 / k, repeat, 1, 1, fs, fs)       # t = t * x / k
            self.vadd(mask, new, acc, w1, repeat, 1, 1, 1, fs, fs, fs)    # s += t
        self.vconv(mask, "none", dst16, out, repeat, 1, 1, srs, fs)


__all__ = ["Expm1API"]
