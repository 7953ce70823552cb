"""TIK ``mmad``, ``matmul`` and ``conv2d`` lowered onto PTO cube ops.

==============  =====================================================================
TIK             PTO ops (see migration_guide/tik_cube.md for the parameter mapping)
==============  =====================================================================
``mmad``        ``pto.mad`` (``is_bias=0``) / ``pto.mad_acc`` (``is_bias=1``) /
                ``pto.mte_l1_bt`` + ``pto.mad_bias`` (``bias_tensor``, 910B/310B)
``matmul``      per tile: ``pto.mte_l1_l0a`` + ``pto.mte_l1_l0b`` (full-control fractal
                loads from the L1 ``[K1, M, K0]`` / ``[K1, N, K0]`` operands), then
                ``pto.mad`` for the first K tile (``init_l1out=True``) and ``pto.mad_acc``
                for the others (bias: ``pto.mte_l1_bt`` + ``pto.mad_bias`` first)
``conv2d``      the same with ``pto.img2col`` (Load3D) producing the L0A tiles of the
                im2col matrix; C04 weights also go through ``pto.img2col`` into L0B
==============  =====================================================================

Layouts (tik_api.md §8.0): L1 ``a`` = ``[K1, M, K0]`` (Nz of A), ``b`` = ``[K1, N, K0]``
(Nz of B^T), L0C ``[N1, M, 16]``; feature map ``[C1, H, W, C0]``; weight
``[C1, Kh, Kw, Cout, C0]`` (= ``[K1, Cout, K0]``). The row strides of ``a``, ``b`` and the
result come from ``m`` and ``n`` rounded up to 16 (as TIK computes them), not from the
tensors' shapes.

Tiles: the whole (16-rounded) M per mad when one K0 column of it fits L0A, K and N
tiles as large as the free L0A/L0B space allows (a small cost model prefers few, large
mads). When M does not fit, M is cut and N goes one 16-column block at a time (the
L0C tile of a mad must be contiguous). The scratch L0A/L0B tiles are freed when the
call returns. Numerics: each ``mad`` sums its K tile in f32 (cube.py), ``mad_acc``
adds it to L0C with one f32 rounding, so results depend on the K tiling like the
hardware's depend on TIK's.
"""
from __future__ import annotations

import contextlib

from pto_core import program as P
from pto_core.errors import OutOfBounds, UnsupportedOp
from pto_core.ops.mte import l0a_layout

from .. import platform
from .api import tik_api
from .cube_common import CubeBase, at, ceil_div, ceil_to, codes, l0c_align, refusal_records_nothing
from .scalar import float_immediate, option_is_off, py_number
from .vector_common import iadd, idiv, imul

#: mmad flags that the modelled chips do not support (tik_api.md §8.1): flag -> what it does in TIK.
MMAD_UNSUPPORTED = {"en_weight_offset": "weight offset (asymmetric int8 weights)", "smask": "sparse-matrix mask",
                    "en_small_channel": "small-channel (C04) mode", "en_small_k": "small-K mode",
                    "en_ssparse": "structured sparsity", "en_winograd_a": "winograd feature map",
                    "en_winograd_b": "winograd weight"}
#: chips whose conv2d/matmul/mmad accept an L1 bias (bias table): tik_api.md §8.1-§8.3.
BIAS_SOCS = ("Ascend910B", "Ascend910_93", "Ascend310B")
#: Named choice BIAS_L1_ALIGN (migration_guide/tik_cube.md, "mmad"): the L1 bias of ``mmad(bias_tensor=)``,
#: ``matmul(bias=)`` and ``conv2d(bias=)`` starts 32-byte aligned. The bias reaches the bias table through the
#: L1 -> BT move, whose source must be 32 B aligned (CCE ``copy_cbuf_to_bt``: "src: 32B aligned"; ``pto.mte_l1_bt``
#: checks %src so when it runs). TIK's mmad page gives no rule of its own for bias_tensor (tik_api.md §8.1), and
#: the general TIK table's 512 B for L1 describes where TIK places tensors, which the simulator does not apply to
#: L1 operand offsets (load2d / matmul sources use 32 B too). mmad's bias_tensor was not checked at the call (a
#: misaligned one stopped the run inside the lowering's pto.mte_l1_bt, k419).
BIAS_L1_ALIGN = 32
#: largest m, n, k of one pto.mad (12-bit fields)
MAD_K_MAX = 4095
#: Named choice MACRO_TILES_FIT_THREAD_COPIES: in the body of a ``for_range(..., thread_num=n)`` the scratch
#: L0A/L0B tiles of ``matmul``/``conv2d`` book ``n`` copies (THREAD_NUM_RESERVES_COPIES, container.py), so the
#: tiles are planned in 1/n of the free L0A/L0B. TIK's matmul sizes its tiles for two buffers of the whole
#: L0A/L0B (2020 te.tik ``matmul.py`` ``gen_best_tiling``: ``m_tile * k_tile * 16 * c0 * size * 2 <=
#: get_l0a_buffer_size()``), so such a call builds there. The tiles used the whole free space, and their
#: second copy then overflowed: IndexSDK ``l2_norm_typing_int8`` (dim 512, a 128 x 512 int8 matmul in a
#: thread_num=2 loop) was refused with CapacityExceeded.
MACRO_TILES_FIT_THREAD_COPIES = True
#: (a, b, dst) dtype codes ``tik.matmul`` may take on some chip (tik_api.md §8.3 and its support table) -> how a
#: matmul whose a and b differ names them in its Fix, listing those the selected chip has (`_matmul_dtype_fix`)
MATMUL_DTYPE_CODES = {"s8s8s32": "int8 -> int32", "f16f16f16": "float16 -> float16",
                      "f16f16f32": "float16 -> float32", "f32f32f32": "float32 -> float32"}


def _matmul_dtype_fix(a: str, b: str) -> str:
    """The Fix of a matmul whose a and b differ (dtype codes ``a``, ``b``): the chip's (a, b -> dst) dtypes, and
    ``tik.mmad`` for a uint8 x int8 product where the chip's cube has u8s8s32."""
    soc = platform.current_soc()
    has = [t for c, t in MATMUL_DTYPE_CODES.items() if platform.api_check_support("tik.matmul", c)]
    fix = (f"declare a and b with one dtype tik.matmul takes on {soc.short_soc_version} ({', '.join(has)}); "
           f"convert the other operand with vec_conv in UB before moving it to L1") if has else \
        f"{soc.short_soc_version} has no tik.matmul: use tik.mmad with load2d, or select another chip"
    if {a, b} == {"u8", "s8"} and soc.profile.supports_mad("u8", "s8", "s32"):
        fix += "; a uint8 x int8 -> int32 product is a tik.mmad (u8s8s32) on this chip"
    return fix


#: cost model of the tile search (relative units: per op, per decoded element, per accumulated element)
_COST_OP, _COST_DECODE, _COST_ACC = 4000.0, 2.0, 1.0


# ============================================================================ tile planning


class Tiling:
    """Tiles of one cube macro call: ``mt`` rows (multiple of 16), ``kt`` columns (multiple of K0),
    ``nt`` output columns (multiple of 16); ``mcut`` = M is split (then ``nt == 16``)."""

    __slots__ = ("mt", "kt", "nt", "mcut")

    def __init__(self, mt, kt, nt, mcut):
        self.mt, self.kt, self.nt, self.mcut = mt, kt, nt, mcut

    def __repr__(self):
        return f"Tiling(mt={self.mt}, kt={self.kt}, nt={self.nt}, mcut={self.mcut})"


#: plan_tiles arguments -> its `Tiling` (a pure function of them; read-only results)
_PLANS: dict = {}


def plan_tiles(M: int, N: int, K: int, k0: int, size: int, l0a: int, l0b: int, max_nt: int = 4096) -> Tiling:
    """Choose tiles for an ``M x K`` by ``K x N`` product (M, N multiples of 16) in the free L0A/L0B bytes
    (memoised: callers only read the result)."""
    key = (M, N, K, k0, size, l0a, l0b, max_nt)
    tl = _PLANS.get(key)
    if tl is None:
        tl = _plan_tiles(*key)
        if len(_PLANS) >= 1024:
            _PLANS.clear()
        _PLANS[key] = tl
    return tl


def _plan_tiles(M: int, N: int, K: int, k0: int, size: int, l0a: int, l0b: int, max_nt: int) -> Tiling:
    kr = min(ceil_to(K, k0), MAD_K_MAX // k0 * k0)
    best = None
    if M * k0 * size <= l0a:
        for nt in range(16, min(N, max_nt) + 1, 16):
            kt = min(kr, (l0a // (M * size)) // k0 * k0, (l0b // (nt * size)) // k0 * k0)
            if kt < k0:
                continue
            steps = ceil_div(kr, kt) * ceil_div(N, nt)
            cost = steps * (_COST_OP + (M * kt + kt * nt) * _COST_DECODE + M * nt * _COST_ACC)
            if best is None or cost < best[0]:
                best = (cost, Tiling(M, kt, nt, False))
    if best is not None:
        return best[1]
    kt = min(kr, (l0b // (16 * size)) // k0 * k0)
    while kt >= k0 and (l0a // (kt * size)) // 16 * 16 < 16:
        kt -= k0
    if kt < k0:
        raise ValueError("L0A/L0B too small")
    mt = min(M, (l0a // (kt * size)) // 16 * 16)
    return Tiling(mt, kt, 16, True)


class CubeMatmulAPI(CubeBase):
    """``mmad``, ``matmul``, ``conv2d`` (mixin of `tbe_compat.tik.Tik` through `cube.CubeAPI`)."""

    # ------------------------------------------------------------------ mmad
    @tik_api("mmad")
    @refusal_records_nothing
    def mmad(self, dst_fm, src_fm, src_filter, matrix_m, matrix_k, matrix_n, is_bias, fm_offset=0,
             en_weight_offset=False, smask=None, en_small_channel=False, en_small_k=False, en_ssparse=False,
             en_winograd_a=False, en_winograd_b=False, bias_tensor=None):
        """``C (= or +=) A @ B`` on L0A / L0B / L0C operands (tik_api.md §8.1)."""
        d = self._operand(dst_fm, "dst_fm", spaces=("l0c",))
        a = self._operand(src_fm, "src_fm", spaces=("l0a",))
        b = self._operand(src_filter, "src_filter", spaces=("l0b",))
        combo = codes(a.dt, b.dt, d.dt)
        self._require_support("tik.mmad", combo)
        soc = platform.current_soc()
        flags = {"en_weight_offset": en_weight_offset, "smask": smask, "en_small_channel": en_small_channel,
                 "en_small_k": en_small_k, "en_ssparse": en_ssparse, "en_winograd_a": en_winograd_a,
                 "en_winograd_b": en_winograd_b}
        for name, v in flags.items():
            if not option_is_off(v):
                raise self._error(f"mmad {name} ({MMAD_UNSUPPORTED[name]}) is not supported on {soc.soc_version}",
                                  operand=name, value=repr(v), cls=UnsupportedOp,
                                  hint="TIK documents it for v200-class chips only and its semantics are not "
                                       "published; leave it False")
        fo = self._int_arg(fm_offset, "fm_offset", -32768, 32767)
        if not (isinstance(fo, int) and fo == 0):
            raise self._error("mmad fm_offset (feature-map zero point) is not supported on "
                              f"{soc.soc_version}", operand="fm_offset", value=repr(fm_offset), cls=UnsupportedOp,
                              hint="pass fm_offset=0")
        m, k, n = (self._int_arg(v, nm, 0, 4095, run_time_api="tik.mmad")
                   for v, nm in ((matrix_m, "matrix_m"), (matrix_k, "matrix_k"), (matrix_n, "matrix_n")))
        ib = self._int_arg(is_bias, "is_bias", 0, 1, run_time_api="tik.mmad")
        for op, al in ((a, 512), (b, 512), (d, l0c_align(d.dt))):
            op.check_aligned(al)
        bt = None
        if bias_tensor is not None:
            if soc.short_soc_version not in BIAS_SOCS:
                raise self._error(f"mmad bias_tensor needs a bias table (Ascend910B/310B), not {soc.soc_version}",
                                  operand="bias_tensor", cls=UnsupportedOp,
                                  hint="initialise L0C with broadcast_ub_to_l0c and accumulate (is_bias=1)")
            bt = self._operand(bias_tensor, "bias_tensor", spaces=("l1",))
            if bt.dt is not d.dt:
                raise self._error(f"bias_tensor dtype {bt.tensor.dtype} must be the dst dtype {d.tensor.dtype}",
                                  operand="bias_tensor", value=bt.tensor.dtype, limit=d.tensor.dtype,
                                  hint=f"declare bias_tensor {d.tensor.dtype} (the L0C dst dtype)")
            bt.check_aligned(BIAS_L1_ALIGN)
            if isinstance(n, int) and n > 0:        # the mad adds bias[j] to column j < matrix_n (as matmul's bias)
                bt.check_extent(bt.dt.nbytes(n), f"{n} bias values (one per column, matrix_n = {n})",
                                hint="give bias_tensor at least matrix_n values (bias[j] is added to column j)")
        if any(isinstance(v, int) and v == 0 for v in (m, k, n)):
            return                                   # an empty product: TIK emits nothing useful
        fp_sizes = None
        if all(isinstance(v, int) for v in (m, k, n)):
            fp_sizes = (a.dt.nbytes(ceil_to(m, 16) * ceil_to(k, a.dt.c0)), b.dt.nbytes(ceil_to(k, b.dt.c0) *
                                                                                        ceil_to(n, 16)),
                        d.dt.nbytes(ceil_to(m, 16) * ceil_to(n, 16)))
            a.check_extent(fp_sizes[0], "the left matrix tile")
            b.check_extent(fp_sizes[1], "the right matrix tile")
            d.check_extent(fp_sizes[2], "the result tile")
        else:
            # a run-time m or n: the result tile (round16(m) x round16(n) elements) is checked when it runs;
            # reads of L0A/L0B past their tensors stay in the buffer (Operand.check_extent)
            rows, cols = (imul(idiv(iadd(v, 15), 16), 16) for v in (m, n))
            d.check_extent(imul(imul(rows, cols), d.dt.bits // 8), "the result tile")
        guard = [P.cmp("gt", P.cast(v, P.I64), 0) for v in (m, k, n) if not isinstance(v, int)]
        with (self._cube_if(P.all_(*guard)) if guard else contextlib.nullcontext()):
            if bt is not None:
                with self._cube_scratch() as alloc:
                    bias_bt = self._operand(alloc(d.tensor.dtype, self._bias_table_count(d.dt, n), "bt",
                                                  "mmad_bias_table"), "bias_table")
                    self._cube_load_bias(bt, bias_bt, n)
                    self._cube_mad("mad_bias", a, b, d, m, n, k, fp_sizes, bias=bias_bt)
            elif isinstance(ib, int):
                self._cube_mad("mad_acc" if ib else "mad", a, b, d, m, n, k, fp_sizes)
            else:
                with self._cube_if(P.cmp("ne", P.cast(ib, P.I64), 0)):
                    self._cube_mad("mad_acc", a, b, d, m, n, k, fp_sizes)
                with self._cube_else():
                    self._cube_mad("mad", a, b, d, m, n, k, fp_sizes)

    def _bias_table_count(self, dt, n=None) -> int:
        """Elements of a bias-table scratch tensor: the whole table (1024 B), in the body of a thread_num=c loop
        1/c of it (each buffer books a copy, MACRO_TILES_FIT_THREAD_COPIES), and no more than the round16(n)
        values a mad of a static ``n`` reads (the table of a thread_num=2 loop overflowed: CapacityExceeded)."""
        copies = self._buffer_copies() if MACRO_TILES_FIT_THREAD_COPIES else 1
        count = 1024 // copies // max(4, dt.bits // 8) // 16 * 16
        return min(count, ceil_to(n, 16)) if isinstance(n, int) and copies > 1 else count

    def _cube_mad(self, op: str, a, b, d, m, n, k, sizes=None, bias=None):
        """Record one ``pto.mad*`` (``disable_gemv``: TIK's L0A keeps 16-row fractals for m = 1 too)."""
        sa, sb, sd = sizes if sizes is not None else (None, None, None)
        fp = [a.read(sa), b.read(sb), d.write(sd)]
        if op == "mad_acc":
            fp.append(d.read(sd))
        ops = (a.ptr, b.ptr, d.ptr) + ((bias.ptr,) if bias is not None else ()) + (m, n, k)
        if bias is not None:
            fp.append(bias.read(4 * n if isinstance(n, int) else None))
        self._emit(op, *ops, footprint=fp, disable_gemv=True)

    def _cube_load_bias(self, src_l1, bt, n: int) -> None:
        """L1 bias values -> bias table (``pto.mte_l1_bt``; 64-byte source units on a2a3-class chips)."""
        from pto_core.ops.mte import BT_LOAD_UNIT
        unit = BT_LOAD_UNIT.get(platform.current_soc().profile.arch, 64)
        nbytes = src_l1.dt.nbytes(n) if isinstance(n, int) else None
        units = ceil_div(nbytes, unit) if nbytes is not None else P.binop(
            "div", P.binop("add", P.binop("mul", P.cast(n, P.I64), src_l1.dt.bits // 8), unit - 1), unit)
        self._emit("mte_l1_bt", src_l1.ptr, bt.ptr, units, nburst=(1, 0, 0),
                   footprint=[src_l1.read(units * unit if isinstance(units, int) else None),
                              bt.write(4 * n if isinstance(n, int) else None)])

    # ------------------------------------------------------------------ matmul
    @tik_api("matmul")
    def matmul(self, dst, a, b, m, k, n, init_l1out=True, bias=None):
        """``C = A(m x k) @ B(k x n)`` from L1 ``a`` [K1, M, K0] / ``b`` [K1, N, K0] into L0C ``dst``
        [N1, M, 16] (tik_api.md §8.3)."""
        if hasattr(dst, "space") and getattr(dst, "space", None) == "l1":
            raise self._error("matmul writes its result to L0C (scope_cbuf_out), not L1", operand="dst",
                              value=dst.name, hint="declare dst with scope=tik.scope_cbuf_out and move it out "
                                                   "with fixpipe (to GM) or data_move (to UB)")
        d = self._operand(dst, "dst", spaces=("l0c",))
        ao = self._operand(a, "a", spaces=("l1",))
        bo = self._operand(b, "b", spaces=("l1",))
        if ao.dt is not bo.dt:
            raise self._error(f"a ({ao.tensor.dtype}) and b ({bo.tensor.dtype}) must have the same dtype",
                              operand="b", value=bo.tensor.dtype, limit=ao.tensor.dtype,
                              hint=_matmul_dtype_fix(ao.dt.name, bo.dt.name))
        self._cube_dtypes("tik.matmul", ao.dt, bo.dt, d.dt)
        size = ao.dt.bits // 8
        mi = self._cube_imm(m, "m", 1, 4096)
        ni = self._cube_imm(n, "n", 1, 4096)
        ki = self._cube_imm(k, "k", 1, 32768 // size)
        init = self._cube_bool(init_l1out, "init_l1out")
        soc = platform.current_soc()
        ab_align = 512 if soc.short_soc_version in ("Ascend310", "Ascend910") else 32
        ao.check_aligned(ab_align)
        bo.check_aligned(ab_align)
        d.check_aligned(l0c_align(d.dt))
        k0 = ao.dt.c0
        M, N, K1 = ceil_to(mi, 16), ceil_to(ni, 16), ceil_div(ki, k0)
        def padded(name, dim, value, full):
            return (f"{name} holds [K1, {dim}, K0] = [{K1}, {full}, {k0}] elements: {dim.lower()}={value} is padded "
                    f"to a multiple of 16 ({full}) and k={ki} to K1={K1} blocks of K0={k0} (tik_api.md 8.3); "
                    f"declare {name} (and the data moved into it) with shape ({K1}, {full}, {k0})")
        ao.check_extent(ao.dt.nbytes(K1 * M * k0), f"a [K1={K1}, M={M}, K0={k0}]",
                        hint=padded("a", "M", mi, M))
        bo.check_extent(bo.dt.nbytes(K1 * N * k0), f"b [K1={K1}, N={N}, K0={k0}]",
                        hint=padded("b", "N", ni, N))
        d.check_extent(d.dt.nbytes(N * M), f"dst [N1={N // 16}, M={M}, 16]",
                       hint=f"dst holds [N1, M, 16] = [{N // 16}, {M}, 16] elements (m={mi} padded to a multiple "
                            f"of 16); declare it with shape ({N // 16}, {M}, 16)")
        bias_op = self._cube_bias(bias, d, ni, init)
        self._cube_product(d, ao, mi, ki, ni, k0, init, bias_op, a_tile=self._cube_matmul_a_loader(ao, M, k0),
                           b_tile=self._cube_nz_b_loader(bo, N, k0))

    # ------------------------------------------------------------------ conv2d
    @tik_api("conv2d")
    def conv2d(self, dst, feature_map, weight, fm_shape, kernel_shape, stride, pad, dilation, pad_value=0,
               init_l1out=True, bias=None):
        """2-D convolution of an L1 feature map [C1, H, W, C0] with L1 weights [C1, Kh, Kw, Cout, C0]
        into L0C [Cout/16, round_howo, 16] (tik_api.md §8.2)."""
        d = self._operand(dst, "dst", spaces=("l0c",))
        fm = self._operand(feature_map, "feature_map", spaces=("l1",))
        w = self._operand(weight, "weight", spaces=("l1",))
        self._cube_dtypes("tik.conv2d", fm.dt, w.dt, d.dt)
        c1, h, wd, c0 = self._cube_int_list(fm_shape, "fm_shape", 4, 1, 4096)
        kc1, kh, kw, cout, kc0 = self._cube_int_list(kernel_shape, "kernel_shape", 5, 1, 4096)
        sh, sw = self._cube_int_list(stride, "stride", 2, 1, 63)
        pl, pr, pt, pb = self._cube_int_list(pad, "pad", 4, 0, 255)
        dh, dw = self._cube_int_list(dilation, "dilation", 2, 1, 255)
        small = c0 == 4
        dc0 = fm.dt.c0
        if small:
            if fm.dt.name != "f16" or c1 != 1:
                raise self._error(f"the C0 = 4 (C04 first-layer) feature map needs float16 data and C1 = 1, got "
                                  f"{fm.tensor.dtype} C1 = {c1}", operand="fm_shape", value=list(fm_shape),
                                  limit="[1, H, W, 4] float16",
                                  hint=f"use C0 = 4 only for a float16 map with C1 = 1; otherwise declare the map "
                                       f"[C1, H, W, {dc0}] (C0 = 32 bytes of {fm.tensor.dtype})")
        elif c0 != dc0:
            raise self._error(f"fm_shape C0 = {c0} does not match {fm.tensor.dtype} (C0 = {dc0}; 4 for the C04 "
                              f"layout)", operand="fm_shape", value=c0, limit=f"{dc0} (or 4)",
                              hint=f"declare the feature map [C1, H, W, {dc0}] for {fm.tensor.dtype} (C0 = 32 bytes of "
                                   f"channels), or use C0 = 4 with C1 = 1 for a float16 first layer")
        if c1 > 256 or not (dc0 <= c1 * c0 <= 4096 or small):
            raise self._error(f"fm_shape C1 = {c1} x C0 = {c0} is outside the documented range", operand="fm_shape",
                              value=list(fm_shape), limit=f"C1 in [1, 256], C1*C0 in [{dc0}, 4096]",
                              hint="split the input channels over several conv2d calls (init_l1out=False "
                                   "accumulates into dst)")
        if (kc1, kc0) != (c1, c0):
            raise self._error(f"kernel_shape C1, C0 = ({kc1}, {kc0}) must equal fm_shape's ({c1}, {c0})",
                              operand="kernel_shape", value=list(kernel_shape), limit=f"C1 = {c1}, C0 = {c0}",
                              hint="the weight's input channels (C1, C0 of kernel_shape [C1, Kh, Kw, Cout, C0]) "
                                   "are the feature map's (fm_shape [C1, H, W, C0]): declare both with one Cin")
        if kh > 255 or kw > 255:
            raise self._error(f"kernel Kh, Kw = ({kh}, {kw}) must be in [1, 255]", operand="kernel_shape",
                              value=(kh, kw), limit="[1, 255]",
                              hint="pass Kh, Kw between 1 and 255 in kernel_shape [C1, Kh, Kw, Cout, C0]")
        if cout % 16:
            raise self._error(f"Cout = {cout} must be a multiple of 16", operand="kernel_shape", value=cout,
                              limit="multiple of 16 in [16, 4096]",
                              hint="pad Cout up to a multiple of 16 (zero weights) and drop the extra channels "
                                   "after fixpipe")
        ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
        wo = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
        if ho < 1 or wo < 1:
            raise self._error(f"the dilated {kh} x {kw} kernel does not fit the padded {h} x {wd} feature map "
                              f"(Ho = {ho}, Wo = {wo})", operand="kernel_shape", value=(kh, kw),
                              hint="check pad, dilation and kernel size")
        pv = self._cube_conv_pad_value(pad_value, fm.dt)
        init = self._cube_bool(init_l1out, "init_l1out")
        for op in (fm, w):
            op.check_aligned(32)
        d.check_aligned(l0c_align(d.dt))
        howo = ho * wo
        M = ceil_to(howo, 16)
        fm.check_extent(fm.dt.nbytes(c1 * h * wd * c0), f"the feature map {list(fm_shape)}")
        w.check_extent(w.dt.nbytes(c1 * kh * kw * cout * c0), f"the weight {list(kernel_shape)}")
        d.check_extent(d.dt.nbytes(cout * M), f"dst [{cout // 16}, {M}, 16]",
                       hint=f"dst holds [Cout/16, round16(Ho*Wo), 16] = [{cout // 16}, {M}, 16] elements (Ho*Wo = "
                            f"{howo} padded to a multiple of 16); declare it with shape ({cout // 16}, {M}, 16)")
        self._cube_check_no_overlap(fm, fm.dt.nbytes(c1 * h * wd * c0), w, w.dt.nbytes(c1 * kh * kw * cout * c0))
        bias_op = self._cube_bias(bias, d, cout, init)
        K = c1 * kh * kw * c0
        geo = dict(stride=(sh, sw), filter=(kh, kw), dilation=(dh, dw), pad=(pl, pr, pt, pb))
        a_tile = self._cube_img2col_loader(fm, h, wd, c1 * c0, geo, pv)
        if small:
            b_tile = self._cube_c04_weight_loader(w, kh * kw, cout)
        else:
            b_tile = self._cube_nz_b_loader(w, cout, dc0)
        self._cube_product(d, fm, howo, K, cout, dc0, init, bias_op, a_tile=a_tile, b_tile=b_tile, m_rows=M,
                           b_dtype=w.tensor.dtype)

    # ------------------------------------------------------------------ shared pieces
    def _cube_bool(self, v, name):
        """init_l1out: a bool (`_bool_arg`), or the int 0/1 this facade has always taken for it."""
        if isinstance(v, int) and not isinstance(v, bool) and v in (0, 1):
            return bool(v)
        return self._bool_arg(v, name)

    def _cube_dtypes(self, api: str, a, b, c) -> None:
        """The (a, b, dst) dtype triple against TIK's table; u8 x s8 -> s32 (the 2020 docs' conv2d/matmul
        combination, used by the fixpipe seed example) is accepted where the chip's cube has it."""
        combo = codes(a, b, c)
        if combo == "u8s8s32" and platform.current_soc().profile.supports_mad("u8", "s8", "s32"):
            return
        self._require_support(api, combo)

    def _cube_conv_pad_value(self, v, dt):
        v = py_number(v)         # a numpy scalar is its Python number (keeps -0.0's sign)
        if dt.is_int:
            pv = self._cube_imm(v, "pad_value", dt.min, dt.max)
            return pv
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self._error(f"pad_value must be a number, got {v!r}", operand="pad_value", value=repr(v),
                              hint="pass pad_value as an int or float immediate")
        return float_immediate(v, dt)

    def _cube_check_no_overlap(self, x, nx, y, ny):
        if x.tensor.storage is not y.tensor.storage:
            return
        bx, by = x.static_byte_offset, y.static_byte_offset
        if bx is None or by is None or bx < by + ny and by < bx + nx:
            raise self._error("feature_map and weight overlap in L1", operand="weight", value=y.tensor.name,
                              hint="give the feature map and the weights separate L1 tensors")

    def _cube_bias(self, bias, d, n: int, init: bool):
        if bias is None:
            return None
        soc = platform.current_soc()
        if soc.short_soc_version not in BIAS_SOCS:
            raise self._error(f"bias is supported on Ascend910B/310B AI cores only, not {soc.soc_version}",
                              operand="bias", cls=UnsupportedOp,
                              hint="add the bias with fixpipe extend_params={'bias': ...} or vector adds")
        if not init:
            raise self._error("bias requires init_l1out=True (the bias seeds the accumulator)", operand="bias",
                              value="init_l1out=False", limit="init_l1out=True",
                              hint="pass the bias only on the first (init_l1out=True) call; the accumulating calls "
                                   "take no bias")
        bo = self._operand(bias, "bias", spaces=("l1",))
        if bo.dt is not d.dt:
            raise self._error(f"bias dtype {bo.tensor.dtype} must be the dst dtype {d.tensor.dtype}", operand="bias",
                              value=bo.tensor.dtype, limit=d.tensor.dtype,
                              hint=f"declare bias {d.tensor.dtype} (the L0C dst dtype)")
        bo.check_aligned(BIAS_L1_ALIGN)
        bo.check_extent(bo.dt.nbytes(n), f"{n} bias values")
        return bo

    # -- tile loaders: fn(dst_operand, m0, mt, k0, kt) / fn(dst_operand, n0, nt, k0, kt) record one load
    def _cube_matmul_a_loader(self, ao, M: int, k0: int):
        zz = l0a_layout(platform.current_soc().profile) == "Zz"
        frac = k0 * 16

        def load(l0a, m0, mt, kb, kt):
            ms, ks = ceil_div(mt, 16), ceil_div(kt, k0)
            first = (kb // k0) * M * k0 + m0 * k0
            span = ((ks - 1) * M // 16 + ms) * frac
            src = at(self, ao, first)
            self._emit("mte_l1_l0a", src.ptr, l0a.ptr, 0, 0, ms, ks, M // 16, ks if zz else ms,
                       footprint=[src.read(ao.dt.nbytes(span)), l0a.write(ao.dt.nbytes(ms * ks * frac))])
        return load

    def _cube_nz_b_loader(self, bo, N: int, k0: int):
        frac = k0 * 16

        def load(l0b, n0, nt, kb, kt):
            ns, ks = ceil_div(nt, 16), ceil_div(kt, k0)
            first = (kb // k0) * N * k0 + n0 * k0
            span = ((ks - 1) * N // 16 + ns) * frac
            src = at(self, bo, first)
            self._emit("mte_l1_l0b", src.ptr, l0b.ptr, 0, 0, ns, ks, N // 16, ns,
                       footprint=[src.read(bo.dt.nbytes(span)), l0b.write(bo.dt.nbytes(ns * ks * frac))])
        return load

    def _cube_img2col_loader(self, fm, h, w, channels, geo, pv):
        zz = l0a_layout(platform.current_soc().profile) == "Zz"
        total = fm.dt.nbytes(channels * h * w if channels >= fm.dt.c0 else 4 * h * w)
        c0 = fm.dt.c0

        def load(l0a, m0, mt, kb, kt):
            ms, ks = ceil_div(mt, 16), ceil_div(kt, c0)
            self._emit("img2col", fm.ptr, l0a.ptr, h, w, channels, kb, ks * c0, m0, ms * 16, ks if zz else ms,
                       footprint=[fm.read(total), l0a.write(fm.dt.nbytes(ms * ks * 16 * c0))], **geo,
                       pad_value=(pv,))
        return load

    def _cube_c04_weight_loader(self, w, taps: int, cout: int):
        """C04 weights [1, Kh, Kw, Cout, 4]: the im2col of the map [1, Kh*Kw, Cout, 4] with a (Kh*Kw) x 1 window
        gives B^T (Cout x Kh*Kw*4) in the Nz geometry L0B holds."""
        total = w.dt.nbytes(taps * cout * 4)

        def load(l0b, n0, nt, kb, kt):
            ns, ks = ceil_div(nt, 16), ceil_div(kt, 16)
            self._emit("img2col", w.ptr, l0b.ptr, taps, cout, 4, kb, ks * 16, n0, ns * 16, ns,
                       footprint=[w.read(total), l0b.write(w.dt.nbytes(ns * ks * 256))], stride=(1, 1),
                       filter=(taps, 1), dilation=(1, 1), pad=(0, 0, 0, 0), pad_value=(0.0,))
        return load

    def _cube_product(self, d, ao, m: int, k: int, n: int, k0: int, init: bool, bias, *, a_tile, b_tile,
                      m_rows=None, b_dtype=None):
        """``dst[N1, M, 16] (=|+=) A @ B`` tile by tile (see module doc). ``m_rows``: the allocated M of dst."""
        M = m_rows or ceil_to(m, 16)
        N = ceil_to(n, 16)
        size = ao.dt.bits // 8
        l0a_free, l0b_free = self._cube_free_bytes("l0a"), self._cube_free_bytes("l0b")
        copies = self._buffer_copies() if MACRO_TILES_FIT_THREAD_COPIES else 1
        if copies > 1:      # each buffer of the thread_num loop holds its own tiles
            l0a_free, l0b_free = l0a_free // copies // 512 * 512, l0b_free // copies // 512 * 512
        # the bias table holds 256 32-bit values per mad, 1/copies of them in a thread_num loop
        max_nt = 256 // copies // 16 * 16 if bias is not None else 4096
        try:
            tl = plan_tiles(M, N, k, k0, size, l0a_free, l0b_free, max_nt)
        except ValueError:
            raise self._error(f"L0A/L0B have no room for one {16} x {k0} tile (free: L0A {l0a_free} B, L0B "
                              f"{l0b_free} B)", operand="dst", cls=OutOfBounds,
                              hint="free L0A/L0B tensors before calling the cube API") from None
        dt = ao.tensor.dtype
        with self._cube_scratch() as alloc:
            l0a = self._operand(alloc(dt, tl.mt * ceil_to(tl.kt, k0), "l0a", "cube_l0a"), "l0a")
            l0b = self._operand(alloc(b_dtype or dt, ceil_to(tl.kt, k0) * tl.nt, "l0b", "cube_l0b"), "l0b")
            bt = None
            if bias is not None:
                bt = self._operand(alloc(d.tensor.dtype, self._bias_table_count(d.dt), "bt", "cube_bias"), "bias")
            for n0 in range(0, n, tl.nt):
                nt = min(tl.nt, n - n0)
                if bt is not None:
                    self._cube_load_bias(at(self, bias, n0), bt, nt)
                for m0 in range(0, m, tl.mt):
                    mt = min(tl.mt, m - m0)
                    dtile = at(self, d, (n0 // 16) * M * 16 + m0 * 16)
                    for kb in range(0, k, tl.kt):
                        kt = min(tl.kt, k - kb)
                        a_tile(l0a, m0, mt, kb, kt)
                        b_tile(l0b, n0, nt, kb, kt)
                        sizes = (ao.dt.nbytes(ceil_to(mt, 16) * ceil_to(kt, k0)),
                                 ao.dt.nbytes(ceil_to(kt, k0) * ceil_to(nt, 16)),
                                 d.dt.nbytes(ceil_to(mt, 16) * ceil_to(nt, 16)))
                        if kb == 0 and bt is not None:
                            self._cube_mad("mad_bias", l0a, l0b, dtile, mt, nt, kt, sizes, bias=bt)
                        else:
                            self._cube_mad("mad" if kb == 0 and init else "mad_acc", l0a, l0b, dtile, mt, nt, kt, sizes)


__all__ = ["CubeMatmulAPI", "plan_tiles", "Tiling", "BIAS_SOCS"]
