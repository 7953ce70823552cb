"""TIK conv2d, load3dv1/v2 and col2img against numpy references (integer-valued data: exact)."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, OutOfBounds, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik, run

NP = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int32": np.int32}


def conv_ref(x, w, stride, pad, dil, pad_value):
    """x [C, H, W], w [Cout, C, Kh, Kw] -> [Cout, Ho, Wo] in float64 (tik_api.md §8.2)."""
    c, h, wd = x.shape
    co, _, kh, kw = w.shape
    pl, pr, pt, pb = pad
    sh, sw = stride
    dh, dw = dil
    xp = np.full((c, h + pt + pb, wd + pl + pr), float(pad_value))
    xp[:, pt:pt + h, pl:pl + wd] = x
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((co, ho, wo))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
            out += np.einsum("chw,oc->ohw", patch, w[:, :, i, j].astype(np.float64))
    return out


def conv_kernel(fm_dt, w_dt, dst_dt, fm_shape, k_shape, stride, pad, dil, pad_value, *, twice=False, bias=False):
    ti = tik.Tik()
    c1, h, wd, c0 = fm_shape
    _, kh, kw, cout, _ = k_shape
    ho = (h + pad[2] + pad[3] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + pad[0] + pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    howo = ho * wo
    rh = -(-howo // 16) * 16
    fm_gm = ti.Tensor(fm_dt, fm_shape, name="fm_gm", scope=tik.scope_gm)
    w_gm = ti.Tensor(w_dt, k_shape, name="w_gm", scope=tik.scope_gm)
    fm = ti.Tensor(fm_dt, fm_shape, name="fm", scope=tik.scope_cbuf)
    w = ti.Tensor(w_dt, k_shape, name="w", scope=tik.scope_cbuf)
    dst = ti.Tensor(dst_dt, (cout // 16, rh, 16), name="dst", scope=tik.scope_cbuf_out)
    out = ti.Tensor(dst_dt, (cout // 16, howo, 16), name="out", scope=tik.scope_gm)
    nfm = int(np.prod(fm_shape)) * np.dtype(NP[fm_dt]).itemsize
    nw = int(np.prod(k_shape)) * np.dtype(NP[w_dt]).itemsize
    ti.data_move(fm, fm_gm, 0, 1, -(-nfm // 32), 0, 0)
    ti.data_move(w, w_gm, 0, 1, -(-nw // 32), 0, 0)
    inputs = [fm_gm, w_gm]
    kw_ = {}
    if bias:
        b_gm = ti.Tensor(dst_dt, (cout,), name="bias_gm", scope=tik.scope_gm)
        b = ti.Tensor(dst_dt, (cout,), name="bias", scope=tik.scope_cbuf)
        ti.data_move(b, b_gm, 0, 1, cout * 4 // 32, 0, 0)
        inputs.append(b_gm)
        kw_["bias"] = b
    ti.conv2d(dst, fm, w, fm_shape, k_shape, stride, pad, dil, pad_value, **kw_)
    if twice:
        ti.conv2d(dst, fm, w, fm_shape, k_shape, stride, pad, dil, pad_value, init_l1out=False)
    size = np.dtype(NP[dst_dt]).itemsize
    ti.fixpipe(out, dst, cout // 16, howo * 16 * size // 32, 0, 0)
    ti.BuildCCE("conv", inputs, [out])
    return ti


def _data(fm_dt, w_dt, fm_shape, k_shape, rng):
    lo = {"uint8": (0, 8), "int8": (-8, 8), "float16": (-4, 5), "float32": (-4, 5)}
    fm = rng.integers(*lo[fm_dt], fm_shape).astype(NP[fm_dt])
    w = rng.integers(*lo[w_dt], k_shape).astype(NP[w_dt])
    c1, h, wd, c0 = fm_shape
    x = fm.transpose(0, 3, 1, 2).reshape(c1 * c0, h, wd).astype(np.float64)
    wt = w.transpose(3, 0, 4, 1, 2).reshape(k_shape[3], c1 * c0, k_shape[1], k_shape[2]).astype(np.float64)
    return fm, w, x, wt


def _check(out, ref):
    cout, ho, wo = ref.shape
    np.testing.assert_array_equal(out, ref.reshape(cout // 16, 16, ho * wo).transpose(0, 2, 1))


CONVS = [
    # fm_dt, w_dt, dst_dt, fm_shape, kernel_shape, stride, pad, dilation, pad_value
    ("float16", "float16", "float32", [2, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [2, 2], 0),
    ("float16", "float16", "float32", [3, 9, 7, 16], [3, 3, 3, 32, 16], [2, 1], [1, 2, 0, 1], [1, 2], 1.5),
    ("float16", "float16", "float32", [1, 20, 20, 16], [1, 5, 3, 48, 16], [1, 2], [2, 2, 2, 2], [1, 1], -2.0),
    ("int8", "int8", "int32", [2, 6, 6, 32], [2, 3, 3, 32, 32], [1, 1], [1, 1, 1, 1], [1, 1], -3),
    ("uint8", "int8", "int32", [1, 4, 4, 32], [1, 2, 2, 32, 32], [1, 1], [0, 0, 0, 0], [1, 1], 0),
    ("float16", "float16", "float32", [1, 8, 8, 4], [1, 3, 3, 32, 4], [1, 1], [1, 1, 1, 1], [1, 1], 0),  # C04
    ("float16", "float16", "float32", [1, 16, 15, 4], [1, 7, 7, 16, 4], [2, 2], [3, 3, 3, 3], [1, 1], 0),
]


@pytest.mark.parametrize("case", CONVS, ids=[f"{c[0]}-{c[3]}-{c[4]}" for c in CONVS])
def test_conv2d_matches_numpy(case):
    fm_dt, w_dt, dst_dt, fs, ks, st, pd, dl, pv = case
    ti = conv_kernel(fm_dt, w_dt, dst_dt, fs, ks, st, pd, dl, pv)
    rng = np.random.default_rng(sum(fs) + sum(ks))
    fm, w, x, wt = _data(fm_dt, w_dt, fs, ks, rng)
    out, = run(ti, {"fm_gm": fm, "w_gm": w})
    _check(out, conv_ref(x, wt, st, pd, dl, pv))
    assert ti.tikdb.reports == []


def test_conv2d_big_tiles_in_k_m_and_n():
    """K = 8*3*3*16 = 1152, Cout = 160, howo = 400: several K, N tiles per call."""
    fs, ks = [8, 20, 20, 16], [8, 3, 3, 160, 16]
    ti = conv_kernel("float16", "float16", "float32", fs, ks, [1, 1], [1, 1, 1, 1], [1, 1], 0)
    rng = np.random.default_rng(0)
    fm, w, x, wt = _data("float16", "float16", fs, ks, rng)
    out, = run(ti, {"fm_gm": fm, "w_gm": w})
    _check(out, conv_ref(x, wt, [1, 1], [1, 1, 1, 1], [1, 1], 0))
    mads = [s.call.spec.name for s in ti._builder.program.body if hasattr(s, "call") and
            s.call.spec.name.startswith("mad")]
    assert mads.count("mad") >= 1 and mads.count("mad_acc") >= 1


def test_conv2d_accumulate_and_bias_on_910b():
    fs, ks = [2, 5, 5, 16], [2, 3, 3, 32, 16]
    ti = conv_kernel("float16", "float16", "float32", fs, ks, [1, 1], [0, 0, 0, 0], [1, 1], 0, twice=True)
    rng = np.random.default_rng(1)
    fm, w, x, wt = _data("float16", "float16", fs, ks, rng)
    out, = run(ti, {"fm_gm": fm, "w_gm": w})
    _check(out, 2 * conv_ref(x, wt, [1, 1], [0, 0, 0, 0], [1, 1], 0))
    set_current_compile_soc_info("Ascend910B1")
    for fm_dt in ("float16", "float32"):
        c0 = 16 if fm_dt == "float16" else 8
        fs, ks = [2, 5, 5, c0], [2, 3, 3, 32, c0]
        ti = conv_kernel(fm_dt, fm_dt, "float32", fs, ks, [1, 1], [1, 0, 1, 0], [1, 1], 0, bias=True)
        fm, w, x, wt = _data(fm_dt, fm_dt, fs, ks, rng)
        b = rng.integers(-50, 50, 32).astype(np.float32)
        out, = run(ti, {"fm_gm": fm, "w_gm": w, "bias_gm": b})
        _check(out, conv_ref(x, wt, [1, 1], [1, 0, 1, 0], [1, 1], 0) + b[:, None, None])


def _conv_args():
    ti = tik.Tik()
    fm = ti.Tensor("float16", (2, 4, 4, 16), name="fm", scope=tik.scope_cbuf)
    w = ti.Tensor("float16", (2, 2, 2, 16, 16), name="w", scope=tik.scope_cbuf)
    dst = ti.Tensor("float32", (1, 16, 16), name="dst", scope=tik.scope_cbuf_out)
    return ti, fm, w, dst


@pytest.mark.parametrize("change,cls,match", [
    (dict(fm_shape=[2, 4, 4, 32]), IllegalOperand, "fm_shape C0 = 32 does not match float16"),
    (dict(kernel_shape=[1, 2, 2, 16, 16]), IllegalOperand, "kernel_shape C1, C0 = \\(1, 16\\) must equal"),
    (dict(kernel_shape=[2, 2, 2, 8, 16]), IllegalOperand, "Cout = 8 must be a multiple of 16"),
    (dict(stride=[0, 1]), IllegalOperand, "stride\\[0\\] = 0 is outside \\[1, 63\\]"),
    (dict(stride=[1, 64]), IllegalOperand, "stride\\[1\\] = 64 is outside"),
    (dict(pad=[0, 0, 0, 256]), IllegalOperand, "pad\\[3\\] = 256 is outside \\[0, 255\\]"),
    (dict(pad=[0, 0, 0]), IllegalOperand, "pad must be a list of 4 ints"),
    (dict(dilation=[0, 1]), IllegalOperand, "dilation\\[0\\] = 0 is outside"),
    (dict(dilation=[4, 4]), IllegalOperand, "does not fit the padded 4 x 4 feature map"),
    (dict(init_l1out=2), IllegalOperand, "init_l1out must be a bool"),
    (dict(pad_value="x"), IllegalOperand, "pad_value must be a number"),
    (dict(fm_shape=[2, 8, 8, 16]), OutOfBounds, "the feature map \\[2, 8, 8, 16\\]"),
])
def test_conv2d_errors(change, cls, match):
    ti, fm, w, dst = _conv_args()
    args = dict(fm_shape=[2, 4, 4, 16], kernel_shape=[2, 2, 2, 16, 16], stride=[1, 1], pad=[0, 0, 0, 0],
                dilation=[1, 1], pad_value=0, init_l1out=True)
    args.update(change)
    if "kernel_shape" in change and change["kernel_shape"][0] == 2 and "fm_shape" not in change:
        pass
    with raises_tik(cls, match=match):
        ti.conv2d(dst, fm, w, args["fm_shape"], args["kernel_shape"], args["stride"], args["pad"],
                  args["dilation"], args["pad_value"], init_l1out=args["init_l1out"])


def test_conv2d_dtype_chip_and_operand_errors():
    ti, fm, w, dst = _conv_args()
    geo = ([2, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], 0)
    big = ti.Tensor("float16", (2048,), name="big", scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="feature_map and weight overlap"):
        ti.conv2d(dst, big[0:256], big[128:], [1, 4, 4, 16], [1, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], 0)
    b = ti.Tensor("float32", (16,), name="b", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="bias is supported on Ascend910B/310B"):
        ti.conv2d(dst, fm, w, *geo, bias=b)
    d16 = ti.Tensor("float16", (1, 16, 16), name="d16", scope=tik.scope_cbuf_out)
    with raises_tik(UnsupportedOp, match="tik.conv2d with f16f16f16 is not supported on Ascend310"):
        ti.conv2d(d16, fm, w, *geo)
    fi = ti.Tensor("int8", (1, 4, 4, 32), name="fi", scope=tik.scope_cbuf)
    wi = ti.Tensor("int8", (1, 2, 2, 16, 32), name="wi", scope=tik.scope_cbuf)
    di = ti.Tensor("int32", (1, 16, 16), name="di", scope=tik.scope_cbuf_out)
    with raises_tik(IllegalOperand, match="pad_value = 200 is outside \\[-128, 127\\]"):
        ti.conv2d(di, fi, wi, [1, 4, 4, 32], [1, 2, 2, 16, 32], [1, 1], [0, 0, 0, 0], [1, 1], 200)
    f4 = ti.Tensor("int8", (1, 4, 4, 4), name="f4", scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="C04 .* needs float16"):
        ti.conv2d(di, f4, wi, [1, 4, 4, 4], [1, 2, 2, 16, 4], [1, 1], [0, 0, 0, 0], [1, 1], 0)
    with raises_tik(IllegalOperand, match="feature_map must be in L1"):
        ti.conv2d(dst, dst, w, *geo)


# ----------------------------------------------------------------------------- load3d / col2img


def im2col_ref(x, kh, kw, stride, pad, dil, pad_value, c0):
    """[m = ho*Wo + wo, k = ((c1*Kh + i)*Kw + j)*C0 + c] of x [C, H, W]."""
    c, h, wd = x.shape
    pl, pr, pt, pb = pad
    sh, sw = stride
    dh, dw = dil
    xp = np.full((c, h + pt + pb, wd + pl + pr), float(pad_value))
    xp[:, pt:pt + h, pl:pl + wd] = x
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    cols = []
    for c1 in range(c // c0):
        for i in range(kh):
            for j in range(kw):
                patch = xp[c1 * c0:(c1 + 1) * c0, i * dh:i * dh + sh * (ho - 1) + 1:sh,
                           j * dw:j * dw + sw * (wo - 1) + 1:sw]
                cols.append(patch.reshape(c0, ho * wo).T)
    return np.concatenate(cols, axis=1), ho, wo


def _load3d_kernel(v, dst_scope, args, nfrac, chip="Ascend310P3"):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    g = ti.Tensor("float16", (2, 6, 7, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    dst = ti.Tensor("float16", (nfrac * 256,), name="dst", scope=dst_scope)
    out = ti.Tensor("float16", (nfrac * 256,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 2 * 6 * 7, 0, 0)
    (ti.load3dv1 if v == 1 else ti.load3dv2)(dst, fm, *args)
    if dst_scope == tik.scope_ubuf:
        ti.data_move(out, dst, 0, 1, nfrac * 16, 0, 0)
    else:   # L0A -> UB has no path: read it back through a mad with an identity L0B
        one = ti.Tensor("float16", (256,), name="one", scope=tik.scope_cb)
        ig = ti.Tensor("float16", (256,), name="ig", scope=tik.scope_gm)
        il1 = ti.Tensor("float16", (256,), name="il1", scope=tik.scope_cbuf)
        ti.data_move(il1, ig, 0, 1, 16, 0, 0)
        if chip in ("Ascend310", "Ascend910A"):
            ti.load2dv1(one, il1, 0, 1, 1, 0)
        else:
            ti.load2dv2(one, il1, 0, 1, 0, 1, 0)
        acc = ti.Tensor("float32", (nfrac * 256,), name="acc", scope=tik.scope_cc)
        uh = ti.Tensor("float16", (nfrac * 256,), name="uh", scope=tik.scope_ubuf)
        for f in range(nfrac):                       # fractal f of L0A (16 x 16) times identity
            ti.mmad(acc[f * 256], dst[f * 256], one, 16, 16, 16, 0)
        ti.data_move(uh, acc, 0, 1, nfrac, 0, 0, 1)  # f32 -> f16 (exact for f16 values)
        ti.data_move(out, uh, 0, 1, nfrac * 16, 0, 0)
        ti.BuildCCE("l3d", [g, ig], [out])
        return ti, True
    ti.BuildCCE("l3d", [g], [out])
    return ti, False


@pytest.mark.parametrize("dst_scope", [tik.scope_ubuf, tik.scope_ca])
def test_load3dv1_repeat_modes(dst_scope):
    rng = np.random.default_rng(5)
    x4 = rng.integers(-5, 6, (2, 6, 7, 16)).astype(np.float16)
    x = x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64)
    pad, dl = [1, 0, 1, 1], [1, 1]
    X, ho, wo = im2col_ref(x, 2, 3, [2, 1], pad, dl, 0.0, 16)   # stride (h, w) = (2, 1)
    # mode 0: 5 K fractals from c1 0, tap (0, 1), pixels 3..18 (left_top = (ho=0, wo=3))
    args = (pad, 6, 7, 0, 1, 0, 3 * 1 - 1, 0 * 2 - 1, 1, 2, 3, 2, 1, 1, 1, 0, 5)
    ti, via_mad = _load3d_kernel(1, dst_scope, args, 5, "Ascend310")
    feed = {"g": x4}
    if via_mad:
        feed["ig"] = np.eye(16, dtype=np.float16).reshape(-1)
    out, = run(ti, feed)
    m0 = 0 * wo + 3
    exp = X[m0:m0 + 16, 16:16 + 5 * 16]
    got = out.reshape(5, 16, 16).transpose(1, 0, 2).reshape(16, 80)
    np.testing.assert_array_equal(got, exp)
    # mode 1: 3 M fractals of K block (c1=1, tap (1, 2)), jump_offset 2 (UB) / contiguous reading
    args = (pad, 6, 7, 1, 2, 1, -1, -1, 1, 2, 3, 2, 1, 1, 2 if dst_scope == tik.scope_ubuf else 1, 1, 3)
    nfrac = 5 if dst_scope == tik.scope_ubuf else 3
    ti, via_mad = _load3d_kernel(1, dst_scope, args, nfrac, "Ascend310")
    out, = run(ti, feed)
    kcol = ((1 * 2 + 1) * 3 + 2) * 16
    fr = out.reshape(nfrac, 16, 16)
    picks = [0, 2, 4] if dst_scope == tik.scope_ubuf else [0, 1, 2]
    for r, f in enumerate(picks[:2]):                  # pixels beyond Ho*Wo = 24 continue the raster: not compared
        rows = min(16, ho * wo - 16 * r)
        np.testing.assert_array_equal(fr[f][:rows], X[16 * r:16 * r + rows, kcol:kcol + 16])


def _l0b_kernel(mode, dtype="float16"):
    """load3dv1 into L0B, then mmad with a 16-row A from L0A: C = A @ B shows which matrix B L0B holds."""
    set_current_compile_soc_info("Ascend310")
    kf, n1 = (2, 2) if mode == 1 else (1, 4)
    fm_shape = (2, 6, 7, 16) if dtype == "float16" else (1, 6, 7, 32)
    ti = tik.Tik()
    g = ti.Tensor(dtype, fm_shape, name="g", scope=tik.scope_gm)
    ag = ti.Tensor("float16", (kf * 256,), name="ag", scope=tik.scope_gm)
    out = ti.Tensor("float32", (n1 * 256,), name="out", scope=tik.scope_gm)
    fm = ti.Tensor(dtype, fm_shape, name="fm", scope=tik.scope_cbuf)
    al1 = ti.Tensor("float16", (kf * 256,), name="al1", scope=tik.scope_cbuf)
    a = ti.Tensor("float16", (kf * 256,), name="a", scope=tik.scope_ca)
    b = ti.Tensor(dtype, (kf * n1 * 256,), name="b", scope=tik.scope_cb)
    c = ti.Tensor("float32", (n1 * 256,), name="c", scope=tik.scope_cc)
    ub = ti.Tensor("float32", (n1 * 256,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(fm, g, 0, 1, fm_shape[0] * 6 * 7, 0, 0)
    ti.data_move(al1, ag, 0, 1, kf * 16, 0, 0)
    ti.load2dv1(a, al1, 0, kf, 1, 0)
    if mode == 1:   # 1 x 1 filter: per channel block, 2 pixel groups (the K blocks of B), jump_offset = N1
        for c1 in range(2):
            ti.load3dv1(b[c1 * 256], fm, [0, 0, 0, 0], 6, 7, c1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, n1, 1, kf)
    else:           # 3 x 3 filter, pad 1: pixels 16..31 (origin (ho, wo) = (2, 2)), 4 K fractals (the N blocks)
        ti.load3dv1(b, fm, [1, 1, 1, 1], 6, 7, 0, 0, 0, 1, 1, 1, 1, 3, 3, 1, 1, 1, 0, 4)
    ti.mmad(c, a, b, 16, 16 * kf, 16 * n1, 0)
    ti.data_move(ub, c, 0, 1, n1, 0, 0)
    ti.data_move(out, ub, 0, 1, n1 * 32, 0, 0)
    ti.BuildCCE("l3d_l0b", [g, ag], [out])
    return ti, kf, n1


@pytest.mark.parametrize("mode", [0, 1])
def test_load3dv1_into_l0b_gives_mmad_operand_b_equal_to_the_im2col_block(mode):
    """CANN's fused_dbn_dw (dW = dY^T x im2col(x) on Ascend910) loads the feature map into L0B with
    load3dv1 (repeat_mode 1, jump_offset = N1, one call per channel block) and multiplies with K = the
    pixels: L0B holds B = X (K = pixels, N = im2col columns), pixel groups jump_offset fractals apart."""
    rng = np.random.default_rng(7 + mode)
    x4 = rng.integers(-4, 5, (2, 6, 7, 16)).astype(np.float16)
    ti, kf, n1 = _l0b_kernel(mode)
    amat = rng.integers(-3, 4, (16, 16 * kf)).astype(np.float16)
    out, = run(ti, {"g": x4, "ag": amat.reshape(16, kf, 16).transpose(1, 0, 2).reshape(-1)})
    x = x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64)
    if mode == 1:
        X, _, _ = im2col_ref(x, 1, 1, [1, 1], [0, 0, 0, 0], [1, 1], 0.0, 16)
        B = X[0:32, 0:32]
    else:
        X, _, _ = im2col_ref(x, 3, 3, [1, 1], [1, 1, 1, 1], [1, 1], 0.0, 16)
        B = X[16:32, 0:64]
    got = out.reshape(n1, 16, 16).transpose(1, 0, 2).reshape(16, 16 * n1)
    np.testing.assert_array_equal(got, amat.astype(np.float64) @ B)


def _l0b_v2_kernel(case):
    """load3dv2 into L0B, then mmad with a 16-row A from L0A: C = A @ B shows which matrix B L0B holds.
    ``"matmul"``: Ascend C's matmul B load (load_to_l0b_load3dv2.h): the Nz matrix B [N1][K][16] in L1 read as a
    1 x K map of N channels under a 1 x 1 filter, m = K rows, k = N columns. ``"conv"``: a 3 x 3 window (pad 1, 3 below),
    rows 16..47 (the K of the mmad), im2col columns 48..111 (its N)."""
    set_current_compile_soc_info("Ascend310P3")
    kf, n1 = 2, (2 if case == "matmul" else 4)
    fm_shape = (2, 1, 32, 16) if case == "matmul" else (2, 6, 7, 16)
    ti = tik.Tik()
    g = ti.Tensor("float16", fm_shape, name="g", scope=tik.scope_gm)
    ag = ti.Tensor("float16", (kf * 256,), name="ag", scope=tik.scope_gm)
    out = ti.Tensor("float32", (n1 * 256,), name="out", scope=tik.scope_gm)
    fm = ti.Tensor("float16", fm_shape, name="fm", scope=tik.scope_cbuf)
    al1 = ti.Tensor("float16", (kf * 256,), name="al1", scope=tik.scope_cbuf)
    a = ti.Tensor("float16", (kf * 256,), name="a", scope=tik.scope_ca)
    b = ti.Tensor("float16", (kf * n1 * 256,), name="b", scope=tik.scope_cb)
    c = ti.Tensor("float32", (n1 * 256,), name="c", scope=tik.scope_cc)
    ub = ti.Tensor("float32", (n1 * 256,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(fm, g, 0, 1, int(np.prod(fm_shape)) // 16, 0, 0)
    ti.data_move(al1, ag, 0, 1, kf * 16, 0, 0)
    ti.load2dv2(a, al1, 0, kf, 0, 1, 0)
    if case == "matmul":
        ti.load3dv2(b, fm, [0, 0, 0, 0], 1, 32, 32, 32, 32, 0, 0, 1, 1, 1, 1, 1, 1)
    else:
        ti.load3dv2(b, fm, [1, 1, 1, 3], 6, 7, 32, 64, 32, 48, 16, 1, 1, 3, 3, 1, 1)
    ti.mmad(c, a, b, 16, 16 * kf, 16 * n1, 0)
    ti.data_move(ub, c, 0, 1, n1, 0, 0)
    ti.data_move(out, ub, 0, 1, n1 * 32, 0, 0)
    ti.BuildCCE("l3d2_l0b", [g, ag], [out])
    return ti, kf, n1


@pytest.mark.parametrize("case", ["matmul", "conv"])
def test_load3dv2_into_l0b_gives_mmad_operand_b_equal_to_the_block(case):
    """L0B_LOAD3DV2_IS_ZN_OF_X: Ascend C's matmul loads its B matrix into L0B with an untransposed Load3Dv2
    (asc-devkit impl/matmul/stage/split/load_to_l0b/load_to_l0b_load3dv2.h: B [K x N] as a 1 x K map of N channels,
    mStep = K, kStep = N), so L0B holds B = X, the block itself (K = its rows), as load3dv1 into L0B does. The
    facade wrote X's fractals untransposed (B = X^T) until k419."""
    rng = np.random.default_rng(11)
    x4 = rng.integers(-4, 5, (2, 1, 32, 16) if case == "matmul" else (2, 6, 7, 16)).astype(np.float16)
    ti, kf, n1 = _l0b_v2_kernel(case)
    amat = rng.integers(-3, 4, (16, 16 * kf)).astype(np.float16)
    out, = run(ti, {"g": x4, "ag": amat.reshape(16, kf, 16).transpose(1, 0, 2).reshape(-1)})
    if case == "matmul":                     # Nz [N1][K][16] -> B [K][N]
        B = x4.reshape(2, 32, 16).transpose(1, 0, 2).reshape(32, 32).astype(np.float64)
    else:
        x = x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64)
        X, _, _ = im2col_ref(x, 3, 3, [1, 1], [1, 1, 1, 3], [1, 1], 0.0, 16)
        B = X[16:48, 48:112]
    got = out.reshape(n1, 16, 16).transpose(1, 0, 2).reshape(16, 16 * n1)
    np.testing.assert_array_equal(got, amat.astype(np.float64) @ B)


@pytest.mark.parametrize("chip, dtype", [("Ascend310P3", "int8"), ("Ascend910B1", "float32")])
def test_load3dv2_of_non_16_bit_data_into_l0b_is_unsupported(chip, dtype):
    """Their L0B fractals (32 x 16 for 8-bit, 8 x 16 for 32-bit: Ascend C LoadData) are not the block's 16 x C0
    ones, and no source says how a Load3D regroups them: UnsupportedOp naming that (they were written like L0A)."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    c0 = 32 if dtype == "int8" else 8
    fm = ti.Tensor(dtype, (1, 6, 6, c0), name="fm", scope=tik.scope_cbuf)
    b = ti.Tensor(dtype, (4096,), name="b", scope=tik.scope_cb)
    with raises_tik(UnsupportedOp, match=rf"load3dv2 of {dtype} into L0B is not modelled: .*no source says how they "
                                         rf"are regrouped.*Fix: load the block into L0A"):
        ti.load3dv2(b, fm, [1, 1, 1, 1], 6, 6, c0, c0, 16, 0, 0, 1, 1, 3, 3, 1, 1)


def test_load3dv1_int8_into_l0b_is_unsupported():
    with raises_tik(UnsupportedOp, match="load3dv1 of int8 into L0B is not modelled"):
        _l0b_kernel(1, "int8")


def test_load3dv2_block_and_errors():
    rng = np.random.default_rng(6)
    x4 = rng.integers(-5, 6, (2, 6, 7, 16)).astype(np.float16)
    x = x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64)
    pad = [1, 1, 0, 2]
    X, ho, wo = im2col_ref(x, 2, 2, [1, 1], pad, [2, 1], 3.0, 16)
    args = (pad, 6, 7, 32, 48, 32, 16, 16, 1, 1, 2, 2, 1, 2, False, False, 3.0)
    ti, _ = _load3d_kernel(2, tik.scope_ubuf, args, 6)
    out, = run(ti, {"g": x4})
    got = out.reshape(2, 3, 16, 16).transpose(0, 2, 1, 3).reshape(32, 48)
    np.testing.assert_array_equal(got, X[16:48, 16:64])
    for change in ({4: 40}, {5: 20}, {4: 33, 5: 17}):   # LOAD3DV2_EXTENSIONS_ROUNDED_UP: whole fractals
        a = list(args)
        for i, v in change.items():
            a[i] = v
        ti, _ = _load3d_kernel(2, tik.scope_ubuf, tuple(a), 6)
        again, = run(ti, {"g": x4})
        np.testing.assert_array_equal(again, out)
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    dst = ti.Tensor("float16", (6 * 256,), name="dst", scope=tik.scope_ubuf)
    for change, cls, match in (({14: True}, UnsupportedOp, "en_transpose"),
                               # TIK takes channel_size mod 16 in {0, 4, 8}; 24 is not modelled (h_cube409: it was
                               # refused as "must be a multiple of C0"), 12 is no load3dv2 channel count
                               ({3: 24}, UnsupportedOp, r"channel_size 24 \(float16, mod 16 = 8\) is a load3dv2 "
                                                        r"channel count CANN TIK accepts .* not model"),
                               ({3: 12}, IllegalOperand, r"channel_size 12 is not a load3dv2 channel count .* "
                                                         r"mod 16 in \{0, 4, 8\}"),
                               ({15: True}, IllegalOperand, "en_small_k packs 4-channel"),
                               ({4: 112}, OutOfBounds, "a 32 x 112 block")):
        a = list(args)
        for i, v in change.items():
            a[i] = v
        with raises_tik(cls, match=match):
            ti.load3dv2(dst, fm, *a)
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    dst = ti.Tensor("float16", (6 * 256,), name="dst", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="tik.load3dv2 with float16 is not supported on Ascend310"):
        ti.load3dv2(dst, fm, *args)


def test_load3dv1_errors():
    ti = tik.Tik()
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    dst = ti.Tensor("float16", (6 * 256,), name="dst", scope=tik.scope_ubuf)
    good = [[1, 0, 1, 1], 6, 7, 0, 1, 0, 2, -1, 1, 2, 3, 2, 1, 1, 1, 0, 5]
    for change, cls, match in (({4: 3}, IllegalOperand, "fetch position \\(fetch_filter_h, fetch_filter_w\\) = \\(0, 3\\) is outside"),
                               ({7: 0}, IllegalOperand, "is not the window origin of an output pixel"),
                               ({14: 0}, IllegalOperand, "jump_offset = 0 is outside \\[1, 127\\]"),
                               ({15: 2}, IllegalOperand, "repeat_mode = 2 is outside"),
                               ({16: 7}, OutOfBounds, "7 fractal"),
                               ({0: [1, 0, 1]}, IllegalOperand, "pad must be a list of 4 values")):
        a = list(good)
        for i, v in change.items():
            a[i] = v
        with raises_tik(cls, match=match):
            ti.load3dv1(dst, fm, *a)


@pytest.mark.parametrize("dtype", ["float32", "int16", "uint16"])
def test_load3dv1_moves_only_8_and_16_bit_feature_maps(dtype):
    """The load3dv1 page (and Ascend C Load3Dv1) list uint8/int8/float16 only; TIK's API table gives chips only."""
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    c0 = 32 // np.dtype(dtype).itemsize
    fm = ti.Tensor(dtype, (2, 6, 7, c0), name="fm", scope=tik.scope_cbuf)
    dst = ti.Tensor(dtype, (6 * 256,), name="dst", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match=f"load3dv1 moves uint8, int8, float16 data, not {dtype}"):
        ti.load3dv1(dst, fm, [1, 0, 1, 1], 6, 7, 0, 1, 0, 2, -1, 1, 2, 3, 2, 1, 1, 1, 0, 1)


def test_col2img_scatter_adds_each_tap():
    """im2col of every tap then col2img back: each pixel receives its value times the number of windows
    that cover it (f16 exact for small integers)."""
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    h, w = 4, 8                                   # Ho*Wo = 32: whole fractals, no pixel past the raster
    pad = [1, 1, 1, 1]
    kh, kw = 3, 3
    ho, wo = h, w
    npx = -(-ho * wo // 16) * 16
    g = ti.Tensor("float16", (1, h, w, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, h, w, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (npx * 16,), name="col", scope=tik.scope_ubuf)
    img = ti.Tensor("float16", (h * w * 16,), name="img", scope=tik.scope_ubuf)
    zero_gm = ti.Tensor("float16", (h * w * 16,), name="zero_gm", scope=tik.scope_gm)
    out = ti.Tensor("float16", (h * w * 16,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, h * w, 0, 0)
    ti.data_move(img, zero_gm, 0, 1, h * w, 0, 0)
    for i in range(kh):
        for j in range(kw):
            ti.load3dv1(col, fm, pad, h, w, 0, j, i, -1, -1, 1, 1, kw, kh, 1, 1, 1, 1, npx // 16)
            ti.col2img(img, col, pad, h, w, j, i, -1, -1, 1, 1, kw, kh, 1, 1, npx // 16)
    ti.data_move(out, img, 0, 1, h * w, 0, 0)
    ti.BuildCCE("col2img", [g, zero_gm], [out])
    x = np.random.default_rng(0).integers(-3, 4, (1, h, w, 16)).astype(np.float16)
    res, = run(ti, {"g": x, "zero_gm": np.zeros(h * w * 16, np.float16)})
    cover = np.zeros((h, w))
    for a in range(ho):
        for b in range(wo):
            for i in range(kh):
                for j in range(kw):
                    y, z = a - 1 + i, b - 1 + j
                    if 0 <= y < h and 0 <= z < w:
                        cover[y, z] += 1
    np.testing.assert_array_equal(res.reshape(h, w, 16), (x[0] * cover[:, :, None]).astype(np.float16))
    with raises_tik(IllegalOperand, match="fetch position"):
        ti.col2img(img, col, pad, h, w, 3, 0, -1, -1, 1, 1, kw, kh, 1, 1, 1)
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    a = ti.Tensor("float16", (512,), name="a", scope=tik.scope_ubuf)
    with raises_tik(UnsupportedOp, match="tik.col2img with float16 is not supported on Ascend310"):
        ti.col2img(a, a, pad, h, w, 0, 0, -1, -1, 1, 1, kw, kh, 1, 1, 1)


def _dynamic_window_kernel(stride, pad, *, fetch_w_extra=0, bad_row_origin=False, rep_value=None,
                           scalar_map=False, left_w=None, scalar_pad=None):
    """im2col into UB with every window argument a TIK value: c1 and the filter tap from loops (``k % 3``,
    ``k // 3``), one output row per ``for_range`` step (``left_top_h = r*stride - pad_top``), and
    ``repeat_time`` from a Scalar. Output ``[C1, 9, Ho, 16 x 16]`` (row r's first 16 pixels per tap).
    ``scalar_pad``: the pad list passed as int8 Scalars set in an if_scope (CANN's fused_dbn_dw conv1
    branch), holding ``pad`` or the values of ``scalar_pad`` when it is a list."""
    set_current_compile_soc_info("Ascend910A")
    c1n, h, w = 2, 6, 7
    sh, sw = stride
    pl, pr, pt, pb = pad
    ho = (h + pt + pb - 3) // sh + 1
    ti = tik.Tik()
    g = ti.Tensor("float16", (c1n, h, w, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (c1n, h, w, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (c1n, 9, ho, 256), name="col", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (c1n, 9, ho, 256), name="out", scope=tik.scope_gm)
    rep = ti.Scalar("int32", name="rep", init_value=1 if rep_value is None else rep_value)
    ti.data_move(fm, g, 0, 1, c1n * h * w, 0, 0)
    l1_h, l1_w = h, w
    if scalar_map:             # CANN's max_pool_with_argmax_v2 (ResNet-50 branch) passes uint64 Scalar sizes
        l1_h = ti.Scalar("uint64", name="l1_h", init_value=h)
        l1_w = ti.Scalar("uint64", name="l1_w", init_value=w)
    pad_arg = pad
    if scalar_pad:
        held = pad if scalar_pad is True else scalar_pad
        pad_arg = [ti.Scalar("int8", name=f"pad_{side}", init_value=0) for side in "lrtb"]
        with ti.if_scope(rep >= 0):
            for s, v in zip(pad_arg, held):
                s.set_as(v)
    with ti.for_range(0, c1n) as c1:
        with ti.for_range(0, 9) as k:
            with ti.for_range(0, ho) as r:
                lh = r * sh - pt + (1 if bad_row_origin else 0)
                ti.load3dv1(col[c1, k, r, 0], fm, pad_arg, l1_h, l1_w, c1, k % 3 + fetch_w_extra, k // 3,
                            -pl if left_w is None else left_w, lh, sw, sh, 3, 3, 1, 1, 1, 0, rep)
    ti.data_move(out, col, 0, 1, c1n * 9 * ho * 16, 0, 0)
    ti.BuildCCE("l3d_dyn", [g], [out])
    return ti, ho


@pytest.mark.parametrize("scalar_map,scalar_pad", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("stride,pad", [((1, 1), (1, 1, 1, 1)), ((2, 2), (1, 0, 1, 0)), ((2, 1), (0, 1, 1, 1))])
def test_load3dv1_takes_tik_values_for_fetch_position_origin_c1_and_repeat(stride, pad, scalar_map, scalar_pad):
    """CANN TIK accepts int, Scalar or Expr for these (MindSpore's img2col_impl.py passes loop
    expressions; CANN's max_pool_with_argmax_v2 passes Scalar l1_h / l1_w; CANN's fused_dbn_dw passes
    int8 Scalar pads, FMATRIX fields); the values are checked when the instruction runs."""
    ti, ho = _dynamic_window_kernel(stride, pad, scalar_map=scalar_map, scalar_pad=scalar_pad)
    x4 = np.random.default_rng(9).integers(-8, 9, (2, 6, 7, 16)).astype(np.float16)
    out, = run(ti, {"g": x4})
    X, ho_ref, wo = im2col_ref(x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64), 3, 3,
                               stride, pad, (1, 1), 0.0, 16)
    assert ho_ref == ho
    got = out.reshape(2, 9, ho, 16, 16)
    for c1 in range(2):
        for k in range(9):
            for r in range(ho):
                rows = min(16, ho * wo - r * wo)            # pixels past the raster's end are not compared
                want = X[r * wo:r * wo + rows, (c1 * 9 + k) * 16:(c1 * 9 + k + 1) * 16]
                np.testing.assert_array_equal(got[c1, k, r, :rows], want, err_msg=f"c1 {c1} tap {k} row {r}")


@pytest.mark.parametrize("change,cls,match", [
    ({"fetch_w_extra": 1}, IllegalOperand, r"fetch_filter_w \(a position in the 3 x 3 filter\) of tik.load3dv1 = 3 "
                                           r"is outside \[0, 2\]"),
    ({"bad_row_origin": True}, IllegalOperand,
     r"left_top_h \+ pad_top of tik.load3dv1 = 1 is not a multiple of stride_h 2"),
    ({"rep_value": 300}, IllegalOperand, r"repeat_time of tik.load3dv1 = 300 is outside \[1, 255\]"),
    ({"rep_value": 200}, OutOfBounds, r"tensor overflow"),
    ({"scalar_map": True, "left_w": 5}, IllegalOperand, r"left_top_w \+ pad_left \(1\) \(the origin of an output "
                                                         r"column wo < Wo = a run-time value\) of tik.load3dv1 = 6 "
                                                         r"is outside \[0, 4\]"),
    ({"scalar_map": True, "bad_row_origin": True}, IllegalOperand,
     r"left_top_h \+ pad_top of tik.load3dv1 = \d+ is not a multiple of stride_h"),
    ({"scalar_pad": [1, 0, -1, 0]}, IllegalOperand, r"pad\[2\] \(top\) of tik.load3dv1 = -1 is outside \[0, 255\]"),
    ({"scalar_pad": [1, 0, 2, 0]}, IllegalOperand, r"left_top_h \+ pad_top of tik.load3dv1 = 1 is not a multiple of "
                                                   r"stride_h 2 \(window origins are ho\*2 - pad_top\)"),
    ({"scalar_pad": [2, 0, 1, 0]}, IllegalOperand,
     r"left_top_w \+ pad_left of tik.load3dv1 = 1 is not a multiple of stride_w 2"),
])
def test_load3dv1_tik_value_arguments_are_checked_when_they_run(change, cls, match):
    ti, _ = _dynamic_window_kernel((2, 2), (1, 0, 1, 0), **change)
    x4 = np.zeros((2, 6, 7, 16), np.float16)
    with pytest.raises(cls, match=match) as info:
        run(ti, {"g": x4})
    assert "test_tik_cube_conv.py" in str(info.value)          # the user's load3dv1 line


def _cover_3x3(h: int, w: int) -> np.ndarray:
    """How many 3 x 3 windows (stride 1, padding 1) cover each pixel of an h x w map: what col2img
    scatter-adds back for an all-ones im2col."""
    cover = np.zeros((h, w))
    for a in range(h):
        for b in range(w):
            for i in range(3):
                for j in range(3):
                    if 0 <= a - 1 + i < h and 0 <= b - 1 + j < w:
                        cover[a - 1 + i, b - 1 + j] += 1
    return cover


def _col2img_window_kernel(img_pixels: int = 32, scalar_map: bool = False, scalar_pad=None):
    """The scatter-add of `test_col2img_scatter_adds_each_tap` on a 4 x 8 map with the tap from a loop
    variable (and, ``scalar_map``, the map height and width as Scalars) into an ``img_pixels``-pixel
    destination. Returns ``(tik, h, w)``."""
    set_current_compile_soc_info("Ascend910A")
    h, w, pad = 4, 8, [1, 1, 1, 1]
    npx = h * w
    ti = tik.Tik()
    g = ti.Tensor("float16", (1, h, w, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, h, w, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (npx * 16,), name="col", scope=tik.scope_ubuf)
    img = ti.Tensor("float16", (img_pixels * 16,), name="img", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (h * w * 16,), name="out", scope=tik.scope_gm)
    mh, mw = (ti.Scalar("int32", name="sh", init_value=h), ti.Scalar("int32", name="sw", init_value=w)) \
        if scalar_map else (h, w)
    ti.data_move(fm, g, 0, 1, h * w, 0, 0)
    ti.vector_dup(128, img, 0.0, img_pixels * 16 // 128, 1, 8)
    cpad = pad
    if scalar_pad is not None:        # col2img's pad list as uint8 Scalars (FMATRIX fields, like load3dv1's)
        cpad = [ti.Scalar("uint8", name=f"cpad{i}", init_value=v) for i, v in enumerate(scalar_pad)]
    with ti.for_range(0, 9) as k:
        ti.load3dv1(col, fm, pad, mh, mw, 0, k % 3, k // 3, -1, -1, 1, 1, 3, 3, 1, 1, 1, 1, npx // 16)
        ti.col2img(img, col, cpad, mh, mw, k % 3, k // 3, -1, -1, 1, 1, 3, 3, 1, 1, npx // 16)
    ti.data_move(out, img, 0, 1, min(img_pixels, h * w), 0, 0)
    ti.BuildCCE("col2img_scalar_map" if scalar_map else "col2img_dyn", [g], [out])
    return ti, h, w


def test_col2img_takes_tik_values_for_the_window():
    ti, h, w = _col2img_window_kernel()
    x = np.random.default_rng(1).integers(-3, 4, (1, h, w, 16)).astype(np.float16)
    res, = run(ti, {"g": x})
    np.testing.assert_array_equal(res.reshape(h, w, 16), (x[0] * _cover_3x3(h, w)[:, :, None]).astype(np.float16))


def test_col2img_takes_scalar_map_sizes():
    ti, h, w = _col2img_window_kernel(scalar_map=True)
    x = np.random.default_rng(2).integers(-3, 4, (1, h, w, 16)).astype(np.float16)
    res, = run(ti, {"g": x})
    np.testing.assert_array_equal(res.reshape(h, w, 16), (x[0] * _cover_3x3(h, w)[:, :, None]).astype(np.float16))


def test_col2img_takes_scalar_pads():
    ti, h, w = _col2img_window_kernel(scalar_pad=[1, 1, 1, 1])
    x = np.random.default_rng(3).integers(-3, 4, (1, h, w, 16)).astype(np.float16)
    res, = run(ti, {"g": x})
    np.testing.assert_array_equal(res.reshape(h, w, 16), (x[0] * _cover_3x3(h, w)[:, :, None]).astype(np.float16))


def test_col2img_scalar_pad_off_the_raster_fails_when_it_runs():
    """A run-time pad_left of 0 puts left_top_w = -1 left of the padded map: rejected when it runs."""
    ti, h, w = _col2img_window_kernel(scalar_pad=[0, 1, 1, 1])
    with pytest.raises(IllegalOperand, match=r"\(left_top_h, left_top_w\) = \(-1, -1\) is not the window origin "
                                             r"of an output pixel") as info:
        run(ti, {"g": np.zeros((1, h, w, 16), np.float16)})
    assert "test_tik_cube_conv.py" in str(info.value)


def test_col2img_scalar_map_larger_than_its_destination_fails_when_it_runs():
    ti, h, w = _col2img_window_kernel(24, scalar_map=True)     # the 4 x 8 map needs 32 pixels of img
    x = np.zeros((1, h, w, 16), np.float16)
    with pytest.raises(OutOfBounds) as info:
        run(ti, {"g": x})
    assert "test_tik_cube_conv.py" in str(info.value)


def test_load3dv2_takes_tik_values_for_block_starts_and_extents():
    """m_start_pt / k_start_pt from loop variables and k_extension from a Scalar walk the im2col matrix
    block by block (CANN TIK evaluates them when they are known and accepts Exprs otherwise)."""
    set_current_compile_soc_info("Ascend310P3")
    pad = [1, 1, 1, 1]
    ti = tik.Tik()
    g = ti.Tensor("float16", (2, 6, 7, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    blk = ti.Tensor("float16", (2, 6, 16 * 48), name="blk", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (2, 6, 16 * 48), name="out", scope=tik.scope_gm)
    kext = ti.Scalar("int32", name="kext", init_value=48)
    ti.data_move(fm, g, 0, 1, 2 * 6 * 7, 0, 0)
    l1_h = ti.Scalar("int32", name="l1_h", init_value=6)        # the map size may be a TIK value too
    with ti.for_range(0, 2) as mi:                     # 32 of the 42 raster pixels (TIK refuses a block past
        with ti.for_range(0, 6) as ki:                 # Ho*Wo); K = 2 * 9 * 16 = 288 = 6 blocks of 48
            ti.load3dv2(blk[mi, ki, 0], fm, pad, l1_h, 7, 32, kext, 16, ki * 48, mi * 16, 1, 1, 3, 3, 1, 1)
    ti.data_move(out, blk, 0, 1, 2 * 6 * 48, 0, 0)
    ti.BuildCCE("l3dv2_dyn", [g], [out])
    x4 = np.random.default_rng(11).integers(-8, 9, (2, 6, 7, 16)).astype(np.float16)
    got, = run(ti, {"g": x4})
    X, ho, wo = im2col_ref(x4.transpose(0, 3, 1, 2).reshape(32, 6, 7).astype(np.float64), 3, 3, (1, 1), pad,
                           (1, 1), 0.0, 16)
    blocks = got.reshape(2, 6, 3, 16, 16).transpose(0, 3, 1, 2, 4).reshape(32, 288)   # Zz in UB: (m, k1, 16, 16)
    np.testing.assert_array_equal(blocks, X[:32])
    # checked when it runs, under the TIK argument's name (h_fuzz405; it was pto.img2col's "%k_start")
    with pytest.raises(IllegalOperand, match=r"k_start_pt of tik\.load3dv2 = 8 is not a multiple of 16") as info:
        ti2 = tik.Tik()
        fm2 = ti2.Tensor("float16", (2, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
        g2 = ti2.Tensor("float16", (2, 6, 7, 16), name="g", scope=tik.scope_gm)
        b2 = ti2.Tensor("float16", (16 * 48,), name="b2", scope=tik.scope_ubuf)
        o2 = ti2.Tensor("float16", (16 * 48,), name="o2", scope=tik.scope_gm)
        ti2.data_move(fm2, g2, 0, 1, 2 * 6 * 7, 0, 0)
        with ti2.for_range(1, 2) as k:
            ti2.load3dv2(b2, fm2, pad, 6, 7, 32, 48, 16, k * 8, 0, 1, 1, 3, 3, 1, 1)
        ti2.data_move(o2, b2, 0, 1, 48, 0, 0)
        ti2.BuildCCE("l3dv2_bad", [g2], [o2])
        run(ti2, {"g": x4})
    assert "test_tik_cube_conv.py" in str(info.value)


def _walk_ref(fm, lh, lw, kh_, kw_, pad, stride, npx, pad_value):
    """The load3dv1 pixel walk written out (tik_api.md §7.5): pixel p's window starts at (lh, lw) for p = 0 and
    advances by stride along the output row of Wo pixels, later rows from -pad_left; pixels outside the map read
    ``pad_value``. fm [C0-block map H x W x 16] -> [npx, 16]."""
    h, w = fm.shape[:2]
    pl, pr, _, _ = pad
    sh, sw = stride
    wo = (w + pl + pr - 3) // sw + 1
    col0 = (lw + pl) // sw
    out = np.full((npx, 16), pad_value)
    for p in range(npx):
        r, c = divmod(col0 + p, wo)
        y, x = lh + r * sh + kh_, c * sw - pl + kw_
        if 0 <= y < h and 0 <= x < w:
            out[p] = fm[y, x]
    return out


def _above_map_kernel(origins, runtime: bool):
    """load3dv1 (3 x 3 filter, stride 2, pad 1) into UB with window origins ``(lh, -1)`` for each ``lh`` in
    ``origins`` (static ints, or ``r*2 + origins[0]`` from a loop), two fractals per tap; output
    [len(origins), 9, 32 pixels, 16]."""
    set_current_compile_soc_info("Ascend910A")
    h, w, pad = 6, 7, [1, 1, 1, 1]
    n = len(origins)
    ti = tik.Tik()
    g = ti.Tensor("float16", (1, h, w, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, h, w, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (n, 9, 512), name="col", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (n, 9, 512), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, h * w, 0, 0)
    for k in range(9):
        if runtime:
            with ti.for_range(0, n) as r:
                ti.load3dv1(col[r, k, 0], fm, pad, h, w, 0, k % 3, k // 3, -1, r * 2 + origins[0], 2, 2, 3, 3, 1, 1,
                            1, 1, 2, pad_value=3.0)
        else:
            for r, lh in enumerate(origins):
                ti.load3dv1(col[r, k, 0], fm, pad, h, w, 0, k % 3, k // 3, -1, lh, 2, 2, 3, 3, 1, 1, 1, 1, 2,
                            pad_value=3.0)
    ti.data_move(out, col, 0, 1, n * 9 * 32, 0, 0)
    ti.BuildCCE("l3d_above", [g], [out])
    return ti


@pytest.mark.parametrize("runtime", [False, True])
def test_load3dv1_window_origin_above_the_padded_map(runtime):
    """left_top_h below -pad_top (MindSpore img2col_impl.py's 224 x 224 branch starts a 7 x 7 walk at -5 with pad
    3 so that tap 5 reads row 0): the walk continues row by row; pixels outside the map read pad_value."""
    origins = [-7, -5, -3, -1, 1]
    ti = _above_map_kernel(origins, runtime)
    x = np.random.default_rng(4).integers(-8, 9, (1, 6, 7, 16)).astype(np.float16)
    res, = run(ti, {"g": x})
    got = res.reshape(len(origins), 9, 32, 16)
    for r, lh in enumerate(origins):
        for k in range(9):
            want = _walk_ref(x[0].astype(np.float64), lh, -1, k // 3, k % 3, (1, 1, 1, 1), (2, 2), 32, 3.0)
            np.testing.assert_array_equal(got[r, k], want, err_msg=f"origin {lh} tap {k}")


def test_load3dv1_window_origin_below_minus_255_is_rejected():
    with raises_tik(IllegalOperand, match=r"left_top_h = -257 is outside \[-255, 32767\]"):
        _above_map_kernel([-257], runtime=False)
    ti = _above_map_kernel([-259, -257], runtime=True)        # on the stride-2 raster, but too far up
    with pytest.raises(IllegalOperand, match=r"left_top_h \(window origin row\) of tik.load3dv1 = -259 is outside "
                                             r"\[-255, 32767\]") as info:
        run(ti, {"g": np.zeros((1, 6, 7, 16), np.float16)})
    assert "test_tik_cube_conv.py" in str(info.value)


def test_load3dv2_negative_run_time_m_start_is_rejected():
    """pto.img2col takes negative raster indices (load3dv1's rows above the map); load3dv2's m_start_pt stays
    unsigned."""
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (1, 6, 7, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, 6, 7, 16), name="fm", scope=tik.scope_cbuf)
    blk = ti.Tensor("float16", (256,), name="blk", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 42, 0, 0)
    ms = ti.Scalar("int32", name="ms", init_value=-16)
    ti.load3dv2(blk, fm, [1, 1, 1, 1], 6, 7, 16, 16, 16, 0, ms, 1, 1, 3, 3, 1, 1)
    ti.data_move(out, blk, 0, 1, 16, 0, 0)
    ti.BuildCCE("l3d2_neg", [g], [out])
    with pytest.raises(IllegalOperand, match=r"m_start_pt of tik.load3dv2 = -16 is outside \[0, 65535\]"):
        run(ti, {"g": np.zeros((1, 6, 7, 16), np.float16)})


def _col2img_row_kernel(wo_cols: int):
    """CANN's static col2im pattern: one f32 map row in UB (``l1_w`` pixels) under a map of height 3, the
    1 x 3 kernel's column tap from a loop variable, one fractal (16 positions) per call. With ``wo_cols``
    = 16 output columns the walk stays in row 0; with fewer it wraps into row 1, past the buffer."""
    set_current_compile_soc_info("Ascend910A")
    w = wo_cols + 2
    ti = tik.Tik()
    g = ti.Tensor("float32", (3, 16, 16), name="g", scope=tik.scope_gm)
    out = ti.Tensor("float32", (w * 16,), name="out", scope=tik.scope_gm)
    row = ti.Tensor("float32", (w, 16), name="row", scope=tik.scope_ubuf)
    col = ti.Tensor("float32", (16, 16), name="col", scope=tik.scope_ubuf)
    ti.vector_dup(64, row, 0.0, w * 16 // 64, 1, 8)
    if w * 16 % 64:
        ti.vector_dup(w * 16 % 64, row[w * 16 // 64 * 64], 0.0, 1, 1, 8)
    with ti.for_range(0, 3) as k:
        ti.data_move(col, g[k, 0, 0], 0, 1, 32, 0, 0)
        ti.col2img(row, col, (0, 0, 0, 0), 3, w, k, 0, 0, 0, 1, 1, 3, 1, 1, 1, 1)
    ti.data_move(out, row, 0, 1, w * 2, 0, 0)
    ti.BuildCCE("col2img_row", [g], [out])
    return ti, w


def test_col2img_destination_needs_only_the_pixels_the_walk_touches():
    """COL2IMG_DST_EXTENT_IS_WALK: a walk that stays in map row 0 may add into a one-row buffer (the
    map is 3 rows high); f32 sums of the three taps in tap order, from +0."""
    ti, w = _col2img_row_kernel(16)
    x = np.random.default_rng(5).standard_normal((3, 16, 16)).astype(np.float32)
    res, = run(ti, {"g": x})
    ref = np.zeros((w, 16), np.float32)
    for k in range(3):
        ref[k:k + 16] = (ref[k:k + 16] + x[k]).astype(np.float32)
    np.testing.assert_array_equal(res.reshape(w, 16).view(np.uint32), ref.view(np.uint32))


def test_col2img_walk_wrapping_past_a_one_row_destination_fails():
    with raises_tik(OutOfBounds, match="map rows the walk reaches") as info:
        _col2img_row_kernel(8)       # Wo = 8: positions 8..15 land in map row 1, past the 10-pixel buffer
    assert "test_tik_cube_conv.py" in str(info.value)


def _load3dv1_padded_corner(pad_value):
    """A 4x4 f16 map of ones through load3dv1 with pad 1 and a 3x3 filter, ``pad_value`` as given: the im2col
    output (tap (0, 0) of pixel (0, 0) is the padded corner)."""
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    g = ti.Tensor("float16", (1, 4, 4, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, 4, 4, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (16 * 16,), name="col", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (16 * 16,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 16, 0, 0)
    ti.load3dv1(col, fm, [1, 1, 1, 1], 4, 4, 0, 0, 0, -1, -1, 1, 1, 3, 3, 1, 1, 1, 1, 1, pad_value=pad_value)
    ti.data_move(out, col, 0, 1, 16, 0, 0)
    ti.BuildCCE("npad", [g], [out])
    res, = run(ti, {"g": np.ones((1, 4, 4, 16), np.float16)})
    return res


@pytest.mark.parametrize("pad_value", [np.float16(-0.0), np.float32(2.5), np.int64(-3)])
def test_load3dv1_takes_a_numpy_scalar_pad_value(pad_value):
    """A numpy scalar pad_value is its Python number (np.float16(-0.0) keeps its sign), as numpy scalars are
    elsewhere in the facade (h_cube122: np.float16/np.int64 were refused as 'not a number')."""
    res = _load3dv1_padded_corner(pad_value)
    first = res[:16]                     # output pixel (0, 0), tap (0, 0): the padded corner
    want = np.float16(pad_value.item())
    assert (first.view(np.uint16) == want.view(np.uint16)).all()
    assert (res[16 * 5:16 * 6] == 1).all()      # pixel (1, 1) of tap (0, 0) reads the map


def test_an_int_pad_value_past_float64_is_inf_not_an_overflow_error():
    """An int pad_value for float16 data is converted from its exact value, as a float one is (1e300 pads
    inf): 2**1100 was a bare OverflowError from float(); the padded taps are inf (-inf for -2**1100)."""
    for pv, want in ((2 ** 1100, np.inf), (-2 ** 1100, -np.inf), (65519, 65504.0)):
        res = _load3dv1_padded_corner(pv)
        assert (res[:16] == np.float16(want)).all(), (pv, res[:2])
        ti, fm, w, dst = _conv_args()
        ti.conv2d(dst, fm, w, [2, 4, 4, 16], [2, 2, 2, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1], pv, init_l1out=True)


def test_a_run_time_c04_walk_start_names_the_start_not_its_remainder():
    """k445: a TIK-valued C04 (``_csize=1``) walk start off a whole fractal said "(fetch_filter_h*filter_w +
    fetch_filter_w) * 4 mod 16 of tik.load3dv1 ... = 4 is outside [0, 0]"; it names the start, 4, and the rule."""
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    g = ti.Tensor("float16", (1, 4, 4, 16), name="g", scope=tik.scope_gm)
    fm = ti.Tensor("float16", (1, 4, 4, 16), name="fm", scope=tik.scope_cbuf)
    col = ti.Tensor("float16", (256,), name="col", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(fm, g, 0, 1, 16, 0, 0)
    fw = ti.Scalar("int32", name="fw", init_value=1)
    ti.load3dv1(col, fm, [1, 1, 1, 1], 4, 4, 0, fw, 0, -1, -1, 1, 1, 3, 3, 1, 1, 1, 0, 1, _csize=1)
    ti.data_move(out, col, 0, 1, 16, 0, 0)
    ti.BuildCCE("c04_start", [g], [out])
    with raises_tik(IllegalOperand, match=r"operand fetch_filter_w: \(fetch_filter_h\*filter_w \+ fetch_filter_w\) "
                                          r"\* 4 of tik.load3dv1 = 4 is not a multiple of 16 \(the C04 walk must start "
                                          r"at a whole fractal\).*Fix: start the C04 walk"):
        run(ti, {"g": np.ones((1, 4, 4, 16), np.float16)})
