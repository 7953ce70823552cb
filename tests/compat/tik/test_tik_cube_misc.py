"""TIK mmad_broadcast, data_move_quant and load3dv2(en_transpose=True) against independent numpy references,
and a failing kernel per restriction (plus the still-unmodelled forms: they must say why)."""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.data import IgnoredArgumentWarning

from .helpers import raises_tik, run
from .test_tik_cube_conv import _load3d_kernel, im2col_ref

NP = {"float16": np.float16, "float32": np.float32, "int32": np.int32}
SENTINEL = -77


# ----------------------------------------------------------------------------- mmad_broadcast


def broadcast_ref(src, init, nburst, burst_repeat, dst_gap, src_gap, repeat_mode, src_esize, dst_dt):
    """Per-fractal loop: burst b, fractal j <- 16-element row (b's first row, + j unless repeat_mode) x 16."""
    out = init.copy().reshape(-1, 16, 16)
    per_block = 32 // src_esize
    pos = 0                                            # source element of the current burst's first row
    for b in range(nburst):
        for j in range(burst_repeat):
            r = pos if repeat_mode else pos + 16 * j
            out[b * (burst_repeat + dst_gap) + j] = np.asarray(src[r:r + 16], dst_dt)[None, :]
        pos += (16 if repeat_mode else 16 * burst_repeat) + src_gap * per_block
    return out.reshape(-1)


def broadcast_kernel(dst_dt, src_dt, nsrc, nfrac, call, chip="Ascend310P3"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    g = ti.Tensor(src_dt, (nsrc,), name="g", scope=tik.scope_gm)
    ginit = ti.Tensor(dst_dt, (nfrac * 256,), name="ginit", scope=tik.scope_gm)
    ub = ti.Tensor(src_dt, (nsrc,), name="ub", scope=tik.scope_ubuf)
    uinit = ti.Tensor(dst_dt, (nfrac * 256,), name="uinit", scope=tik.scope_ubuf)
    c = ti.Tensor(dst_dt, (nfrac * 256,), name="c", scope=tik.scope_cc)
    uout = ti.Tensor(dst_dt, (nfrac * 256,), name="uout", scope=tik.scope_ubuf)
    out = ti.Tensor(dst_dt, (nfrac * 256,), name="out", scope=tik.scope_gm)
    per = 32 // np.dtype(NP[src_dt]).itemsize
    dper = 32 // np.dtype(NP[dst_dt]).itemsize
    ti.data_move(ub, g, 0, 1, nsrc // per, 0, 0)
    ti.data_move(uinit, ginit, 0, 1, nfrac * 256 // dper, 0, 0)
    ti.data_move(c, uinit, 0, 1, nfrac, 0, 0)          # L0C starts as the sentinel (gaps must keep it)
    call(ti, c, ub)
    ti.data_move(uout, c, 0, 1, nfrac, 0, 0)
    ti.data_move(out, uout, 0, 1, nfrac * 256 // dper, 0, 0)
    ti.BuildCCE("mb", [g, ginit], [out])
    return ti


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nburst=st.integers(1, 3), burst_repeat=st.integers(1, 3), dst_gap=st.integers(0, 2),
       src_gap=st.integers(0, 2), repeat_mode=st.integers(0, 1),
       pair=st.sampled_from([("float16", "float16"), ("float32", "float32"), ("int32", "int32"),
                             ("float32", "float16")]), seed=st.integers(0, 9999))
def test_mmad_broadcast_matches_loop_reference(nburst, burst_repeat, dst_gap, src_gap, repeat_mode, pair, seed):
    dst_dt, src_dt = pair
    esize = np.dtype(NP[src_dt]).itemsize
    per_block = 32 // esize
    rows = 1 if repeat_mode else burst_repeat
    nsrc = nburst * (16 * rows + src_gap * per_block)
    nsrc = -(-nsrc // per_block) * per_block
    nfrac = nburst * (burst_repeat + dst_gap)
    rng = np.random.default_rng(seed)
    src = rng.integers(-1000, 1000, nsrc).astype(NP[src_dt])
    if src_dt != "int32":
        src = (src / 8).astype(NP[src_dt])              # fractional values: f16 -> f32 widening is exact
    init = np.full(nfrac * 256, SENTINEL, NP[dst_dt])
    ti = broadcast_kernel(dst_dt, src_dt, nsrc, nfrac,
                          lambda t, c, ub: t.mmad_broadcast(c, ub, repeat_mode, nburst, burst_repeat, dst_gap,
                                                            src_gap))
    res, = run(ti, {"g": src, "ginit": init})
    exp = broadcast_ref(src, init, nburst, burst_repeat, dst_gap, src_gap, repeat_mode, esize, NP[dst_dt])
    assert not np.array_equal(exp, init)
    np.testing.assert_array_equal(res, exp)


def test_mmad_broadcast_repeat_mode_reads_one_row_per_burst():
    # 2 bursts x 3 fractals, repeat_mode 1, src_gap 1 block: rows at elements 0 and 32 only
    src = np.arange(64, dtype=np.float32)
    init = np.full(6 * 256, SENTINEL, np.float32)
    ti = broadcast_kernel("float32", "float32", 64, 6, lambda t, c, ub: t.mmad_broadcast(c, ub, 1, 2, 3, 0, 2))
    res, = run(ti, {"g": src, "ginit": init})
    fr = res.reshape(6, 16, 16)
    for f in range(3):
        np.testing.assert_array_equal(fr[f], np.broadcast_to(src[:16], (16, 16)))
        np.testing.assert_array_equal(fr[3 + f], np.broadcast_to(src[32:48], (16, 16)))


def _mb_setup(chip="Ascend310P3", dst_dt="float32", src_dt="float32", src_scope=tik.scope_ubuf, n=64, nc=4 * 256):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    return ti, ti.Tensor(dst_dt, (nc,), name="c", scope=tik.scope_cc), ti.Tensor(src_dt, (n,), name="s",
                                                                                scope=src_scope)


def test_mmad_broadcast_errors():
    ti, c, ub = _mb_setup()
    with raises_tik(IllegalOperand, match=r"repeat_mode = 2 is outside \[0, 1\]"):
        ti.mmad_broadcast(c, ub, 2, 1, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"nburst = 256 is outside \[1, 255\]"):
        ti.mmad_broadcast(c, ub, 0, 256, 1, 0, 0)
    with raises_tik(IllegalOperand, match=r"burst_repeat = 0 is outside \[1, 255\]"):
        ti.mmad_broadcast(c, ub, 0, 1, 0, 0, 0)
    with raises_tik(IllegalOperand, match=r"src_gap = 256 is outside \[0, 255\]"):
        ti.mmad_broadcast(c, ub, 0, 1, 1, 0, 256)
    with raises_tik(OutOfBounds, match="the broadcast fractals"):       # 5 fractals into a 4-fractal tensor
        ti.mmad_broadcast(c, ub, 1, 1, 5, 0, 0)
    with raises_tik(OutOfBounds, match="the broadcast rows"):           # 5 rows of 16 from 64 elements
        ti.mmad_broadcast(c, ub, 0, 1, 5, 0, 0)
    with raises_tik(Misaligned):
        ti.mmad_broadcast(c[16], ub, 0, 1, 1, 0, 0)
    # CANN 8.1 MMadBroadCastApi.check_all takes "int or Scalar" for repeat_mode and passes it to the instruction:
    # a Scalar is a limit of the simulator (UnsupportedOp naming why), not an illegal kernel (fix438 item 5)
    with raises_tik(UnsupportedOp, match=r"repeat_mode as a TIK value \(Scalar or Expr\) is not supported: CANN TIK "
                                         r"accepts one .*whether a burst reads one row \(1\) or burst_repeat rows \(0\)"
                                         r".*Fix: pass repeat_mode as a Python int"):
        ti.mmad_broadcast(c, ub, ti.Scalar("int32", init_value=1), 1, 1, 0, 0)
    s = ti.Scalar("int32", init_value=1)
    ti.mmad_broadcast(c, ub, 1, s, s, 0, 0)                              # nburst / burst_repeat may be TIK values
    ti, c, ub = _mb_setup(dst_dt="int32", src_dt="float32")
    with raises_tik(UnsupportedOp, match="tik.mmad_broadcast with s32f32 is not supported"):
        ti.mmad_broadcast(c, ub, 0, 1, 1, 0, 0)
    ti, c, l1 = _mb_setup(src_scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="mmad_broadcast from L1 .* is not modelled"):
        ti.mmad_broadcast(c, l1, 0, 1, 1, 0, 0)
    ti, c, ub = _mb_setup(chip="Ascend910B1")
    with raises_tik(UnsupportedOp, match="Ascend910B1 does not have"):
        ti.mmad_broadcast(c, ub, 0, 1, 1, 0, 0)
    ti, c, ub = _mb_setup(chip="Hi3796CV300ES", dst_dt="float16", src_dt="float16")
    with raises_tik(UnsupportedOp, match="with f16f16 is not supported on Hi3796CV300ES"):
        ti.mmad_broadcast(c, ub, 0, 1, 1, 0, 0)


# ----------------------------------------------------------------------------- data_move_quant


def quant_kernel(nfrac, quant, relu_flag, src_stride=0, dst_stride=0, nburst=1, burst=None, chip="Ascend310P3"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    g = ti.Tensor("int32", (nfrac * 256,), name="g", scope=tik.scope_gm)
    u32 = ti.Tensor("int32", (nfrac * 256,), name="u32", scope=tik.scope_ubuf)
    c = ti.Tensor("int32", (nfrac * 256,), name="c", scope=tik.scope_cc)
    nout = nfrac * 256 + 16 * 32
    gi = ti.Tensor("float16", (nout,), name="gi", scope=tik.scope_gm)
    u16 = ti.Tensor("float16", (nout,), name="u16", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (nout,), name="out", scope=tik.scope_gm)
    ti.data_move(u32, g, 0, 1, nfrac * 32, 0, 0)
    ti.data_move(c, u32, 0, 1, nfrac, 0, 0)
    ti.data_move(u16, gi, 0, 1, nout // 16, 0, 0)
    inputs = [g, gi]
    q = quant
    if isinstance(quant, np.ndarray):
        gq = ti.Tensor("float16", (16,), name="gq", scope=tik.scope_gm)
        q = ti.Tensor("float16", (16,), name="uq", scope=tik.scope_ubuf)
        ti.data_move(q, gq, 0, 1, 1, 0, 0)
        inputs.append(gq)
    ti.data_move_quant(u16, c, 0, nburst, burst or nfrac, src_stride, dst_stride, q, relu_flag=relu_flag)
    ti.data_move(out, u16, 0, 1, nout // 16, 0, 0)
    ti.BuildCCE("dmq", inputs, [out])
    return ti


def test_data_move_quant_scalar_and_vector_scales():
    rng = np.random.default_rng(3)
    x = rng.integers(-3000, 3000, 3 * 256).astype(np.int32)
    init = np.full(3 * 256 + 512, SENTINEL, np.float16)
    # scalar scale: f16(x * f16(0.37)), no ReLU (ConvReluMode 3)
    res, = run(quant_kernel(3, 0.37, False), {"g": x, "gi": init})
    exp = (x.astype(np.float64) * np.float64(np.float16(0.37))).astype(np.float16)
    np.testing.assert_array_equal(res[:768], exp)
    np.testing.assert_array_equal(res[768:], init[768:])
    # per-channel scales from a UB tensor, with ReLU (ConvReluMode 7): scale of column n % 16
    scales = (rng.integers(1, 64, 16) / 16).astype(np.float16)
    res, = run(quant_kernel(3, scales, True), {"g": x, "gi": init, "gq": scales})
    y = x.reshape(-1, 16).astype(np.float64) * scales.astype(np.float64)[None, :]
    exp = np.maximum(y, 0).astype(np.float16).reshape(-1)
    assert not np.array_equal(exp, init[:768])
    np.testing.assert_array_equal(res[:768], exp)
    # 2 bursts of 1 fractal: L0C gap 1 fractal, UB gap 16 blocks (fractal units on the L0C side)
    res, = run(quant_kernel(3, 2.0, False, src_stride=1, dst_stride=16, nburst=2, burst=1), {"g": x, "gi": init})
    exp = (x.astype(np.float64) * 2).astype(np.float16)
    np.testing.assert_array_equal(res[:256], exp[:256])               # fractal 0
    np.testing.assert_array_equal(res[256:512], init[256:512])        # the 16-block UB gap
    np.testing.assert_array_equal(res[512:768], exp[512:768])         # fractal 2 (fractal 1 skipped)
    np.testing.assert_array_equal(res[768:], init[768:])


def test_data_move_quant_scalar_relu_flag_warns_and_moves_without_relu():
    x = np.arange(-128, 128, dtype=np.int32)
    init = np.full(256 + 512, SENTINEL, np.float16)
    with pytest.warns(IgnoredArgumentWarning, match="relu_flag has no effect with a scalar quant_param"):
        ti = quant_kernel(1, 1.0, True)
    res, = run(ti, {"g": x, "gi": init})
    np.testing.assert_array_equal(res[:256], x.astype(np.float16))     # negatives kept


def test_data_move_quant_errors():
    def setup(chip="Ascend310P3", core=None, src_dt="int32", dst_dt="float16", dst_scope=tik.scope_ubuf):
        set_current_compile_soc_info(chip, core) if core else set_current_compile_soc_info(chip)
        ti = tik.Tik()
        c = ti.Tensor(src_dt, (512,), name="c", scope=tik.scope_cc)
        u = ti.Tensor(dst_dt, (512,), name="u", scope=dst_scope)
        return ti, c, u
    ti, c, u = setup()
    with raises_tik(IllegalOperand, match="quant_param is required"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, None)
    with raises_tik(IllegalOperand, match="relu_flag must be a bool"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, 1.0, relu_flag=1)
    with raises_tik(IllegalOperand, match=r"sid = 16 is outside \[0, 15\]"):
        ti.data_move_quant(u, c, 16, 1, 1, 0, 0, 1.0)
    with raises_tik(IllegalOperand, match=r"burst = 0 is outside"):
        ti.data_move_quant(u, c, 0, 1, 0, 0, 0, 1.0)
    with raises_tik(OutOfBounds):
        ti.data_move_quant(u, c, 0, 1, 3, 0, 0, 1.0)                    # 3 fractals from a 2-fractal L0C tensor
    with raises_tik(IllegalOperand, match="a Scalar quant_param must be float16"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, ti.Scalar("float32", init_value=1.0))
    with raises_tik(UnsupportedOp, match="an integer quant_param selects the uint64"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, 3)
    ti, c, u = setup(dst_dt="float32")
    with raises_tik(IllegalOperand, match="dequantises int32 L0C data into float16"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, 1.0)
    ti, c, u = setup(dst_scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="dst"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, 1.0)
    ti, c, u = setup(chip="Ascend910B1")
    with raises_tik(UnsupportedOp, match="does not exist on Ascend910B1"):
        ti.data_move_quant(u, c, 0, 1, 1, 0, 0, 1.0)
    set_current_compile_soc_info("Ascend310P3", "VectorCore")
    ti = tik.Tik()
    u = ti.Tensor("float16", (512,), name="u", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="needs an AI Core"):
        ti.data_move_quant(u, u, 0, 1, 1, 0, 0, 1.0)
    set_current_compile_soc_info("Ascend310P3")


# ----------------------------------------------------------------------------- load3dv2 en_transpose


@pytest.mark.parametrize("block", [(48, 32, 16, 16), (32, 16, 0, 32), (16, 32, 48, 0)])
def test_load3dv2_en_transpose_writes_the_transposed_block(block):
    ke, me, ks, ms = block
    rng = np.random.default_rng(ke + me)
    x4 = rng.integers(-5, 6, (2, 6, 7, 16)).astype(np.float16)
    x = x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64)
    pad = [1, 1, 0, 2]
    X, ho, wo = im2col_ref(x, 2, 2, [1, 1], pad, [2, 1], 3.0, 16)
    args = (pad, 6, 7, 32, ke, me, ks, ms, 1, 1, 2, 2, 1, 2, True, False, 3.0)
    nfrac = ke * me // 256
    ti, via_mad = _load3d_kernel(2, tik.scope_ca, args, nfrac)
    assert via_mad
    out, = run(ti, {"g": x4, "ig": np.eye(16, dtype=np.float16).reshape(-1)})
    fr = out.reshape(nfrac, 16, 16)
    blockT = X[ms:ms + me, ks:ks + ke].T                     # K x M
    for j in range(ke // 16):                                # L0A Zz: K block rows of M/16 fractals each
        for i in range(me // 16):
            np.testing.assert_array_equal(fr[j * (me // 16) + i], blockT[16 * j:16 * j + 16, 16 * i:16 * i + 16])


def test_load3dv2_en_transpose_restrictions():
    args = ([0, 0, 0, 0], 6, 7, 32, 32, 32, 0, 0, 1, 1, 1, 1, 1, 1, True, False, 0)
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    for scope in (tik.scope_cb, tik.scope_ubuf):
        dst = ti.Tensor("float16", (4 * 256,), name=f"d{scope[-2:]}", scope=scope)
        with raises_tik(UnsupportedOp, match="en_transpose into .* is not modelled"):
            ti.load3dv2(dst, fm, *args)
    fm8 = ti.Tensor("int8", (1, 6, 7, 32), name="fm8", scope=tik.scope_cbuf)
    d8 = ti.Tensor("int8", (4 * 512,), name="d8", scope=tik.scope_ca)
    with raises_tik(UnsupportedOp, match="en_transpose of int8 is not modelled"):
        ti.load3dv2(d8, fm8, *args)
    dst = ti.Tensor("float16", (4 * 256,), name="da", scope=tik.scope_ca)
    bad = list(args)
    bad[14] = 1
    with raises_tik(IllegalOperand, match="en_transpose must be a bool"):
        ti.load3dv2(dst, fm, *bad)


# ----------------------------------------------------------------------------- still unmodelled: they say why


def test_unmodelled_forms_explain_why():
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("int8", (64,), name="g", scope=tik.scope_gm)
    l1 = ti.Tensor("int8", (64,), name="l1", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="PADDING register"):
        ti.data_move(l1, g, 0, 1, 1, 0, 0, 1)
    src = ti.Tensor("int16", (128,), name="s16", scope=tik.scope_ubuf)
    dst = ti.Tensor("int8", (256,), name="d8", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="rounding"):
        ti.vconv(128, "", dst, src, 1, 1, 1, 8, 8, deqscale=1, ldst_high_half=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert callable(ti.mmad_broadcast) and callable(ti.data_move_quant)
