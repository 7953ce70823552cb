"""pto.load2d, pto.img2col, pto.col2img, pto.copy_matrix_cc_to_ubuf / ubuf_to_cc, pto.broadcast_ub_to_cc:
eager runs against independent per-element references, chip gating, and every constraint."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core import Machine, MachineOptions, pto
from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fill(m, ptr, values):
    m.write(ptr, np.asarray(values))


# ----------------------------------------------------------------------------- load2d


@SETTINGS
@given(base=st.integers(0, 6), rep=st.integers(1, 5), ss=st.integers(0, 3), gap=st.integers(0, 2),
       transpose=st.booleans(), dec=st.booleans(), src_space=st.sampled_from(["l1", "gm"]))
def test_load2d_matches_per_fractal_reference(base, rep, ss, gap, transpose, dec, src_space):
    if src_space == "gm":
        transpose = False
    if dec and base - (rep - 1) * ss < 0:
        base += (rep - 1) * ss
    m = Machine("Ascend310P3")
    nsrc = base + (rep - 1) * ss + 1 + 2
    data = np.random.default_rng(base * 31 + rep).integers(0, 60000, nsrc * 256).astype(np.uint16)
    src = m.gm_tensor(data, dtype="u16") if src_space == "gm" else m.ptr("l1", "u16", 512)
    if src_space == "l1":
        fill(m, src, data)
    dst = m.ptr("l0a", "u16", 1024)
    fill(m, dst, np.zeros(rep * (1 + gap) * 256 + 256, np.uint16))
    pto.load2d(src, dst, base, rep, ss, gap, transpose=transpose or None, addr_dec=dec or None)
    got = m.read(dst, rep * (1 + gap) * 256).reshape(rep * (1 + gap), 256)
    frac = data.reshape(nsrc, 256)
    for r in range(rep):
        f = base - r * ss if dec else base + r * ss
        want = frac[f].reshape(16, 16).T.reshape(-1) if transpose else frac[f]
        np.testing.assert_array_equal(got[r * (1 + gap)], want)
        if gap:
            assert not got[r * (1 + gap) + 1].any()


def test_load2d_errors_and_zero_repeat():
    m = Machine("Ascend310")
    src, dst = m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0)
    fill(m, src, np.ones(256, np.float16))
    before = m.read(dst, 256).copy()
    pto.load2d(src, dst, 0, 0, 1, 0)                               # repeat 0: nothing
    np.testing.assert_array_equal(m.read(dst, 256), before)
    with pytest.raises(IllegalOperand, match="transpose works on 16-bit"):
        pto.load2d(m.ptr("l1", "s8", 0), m.ptr("l0a", "s8", 0), 0, 1, 1, 0, transpose=True)
    with pytest.raises(IllegalOperand, match="element sizes differ"):
        pto.load2d(src, m.ptr("l0a", "f32", 0), 0, 1, 1, 0)
    with pytest.raises(IllegalOperand, match="%repeat"):
        pto.load2d(src, dst, 0, 256, 1, 0)
    with pytest.raises(Misaligned, match="512-byte"):
        pto.load2d(src, m.ptr("l0a", "f16", 32), 0, 1, 1, 0)
    with pytest.raises(OutOfBounds, match="decreasing addresses reach fractal -1"):
        pto.load2d(src, dst, 1, 3, 1, 0, addr_dec=True)
    with pytest.raises(IllegalOperand, match="transpose applies to L1 -> L0A/L0B"):
        pto.load2d(m.gm_tensor(np.zeros(256, np.float16)), dst, 0, 1, 1, 0, transpose=True)
    with pytest.raises(OutOfBounds, match="outside l0a"):
        pto.load2d(src, m.ptr("l0a", "f16", 65536 - 512), 0, 2, 1, 0)


# ----------------------------------------------------------------------------- img2col


def im2col_loop(fm, c1n, h, w, c0, channels, kh, kw, sh, sw, dh, dw, pad, pv, m0, me, k0, ke):
    """Per-element reference of the im2col block (independent index arithmetic)."""
    pl, pr, pt, pb = pad
    wo = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((me, ke))
    for mi in range(me):
        m = m0 + mi
        ho_, wo_ = m // wo, m % wo
        for ki in range(ke):
            k = k0 + ki
            c1 = k // (kh * kw * c0)
            rem = k % (kh * kw * c0)
            tap, c = rem // c0, rem % c0
            i, j = tap // kw, tap % kw
            if k >= kh * kw * channels:
                out[mi, ki] = 0
                continue
            y, x = ho_ * sh - pt + i * dh, wo_ * sw - pl + j * dw
            out[mi, ki] = fm[c1, y, x, c] if 0 <= y < h and 0 <= x < w else pv
    return out


@SETTINGS
@given(c1n=st.integers(1, 3), h=st.integers(1, 6), w=st.integers(1, 6), kh=st.integers(1, 3),
       kw=st.integers(1, 3), sh=st.integers(1, 2), sw=st.integers(1, 3), dh=st.integers(1, 2),
       dw=st.integers(1, 2), pad=st.tuples(*[st.integers(0, 2)] * 4), small=st.booleans(),
       dst=st.sampled_from(["l0a", "l0b", "ub"]), seed=st.integers(0, 999))
def test_img2col_matches_loop_reference(c1n, h, w, kh, kw, sh, sw, dh, dw, pad, small, dst, seed):
    pl, pr, pt, pb = pad
    wo = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    if wo < 1 or ho < 1:
        return
    c0 = 4 if small else 16
    channels = 4 if small else 16 * c1n
    c1n = 1 if small else c1n
    rng = np.random.default_rng(seed)
    fm = rng.integers(-50, 50, (c1n, h, w, c0)).astype(np.float16)
    m = Machine("Ascend310P3")
    src = m.ptr("l1", "f16", 0)
    fill(m, src, fm.reshape(-1))
    ktot = -(-kh * kw * channels // 16) * 16
    k0 = 16 * int(rng.integers(0, ktot // 16))
    ke = 16 * int(rng.integers(1, (ktot - k0) // 16 + 2))
    me = 16 * int(rng.integers(1, 3))
    m0 = int(rng.integers(-3 * wo, ho * wo))        # rows ho < 0: windows above the padded map (Load3D v1)
    d = m.ptr(dst, "f16", 0)
    fi, fj = me // 16, ke // 16
    outer_rows = dst != "l0b"
    ds = fj + int(rng.integers(0, 2)) if outer_rows else fi + int(rng.integers(0, 2))
    pto.img2col(src, d, h, w, channels, k0, ke, m0, me, ds, stride=(sh, sw), filter=(kh, kw), dilation=(dh, dw),
                pad=pad, pad_value=(-7.0,))
    ref = im2col_loop(fm.astype(np.float64), c1n, h, w, c0, channels, kh, kw, sh, sw, dh, dw, pad, -7.0, m0, me,
                      k0, ke)
    n = (((fi - 1) * ds + fj) if outer_rows else ((fj - 1) * ds + fi)) * 256
    raw = m.read(d, n)
    for i in range(fi):
        for j in range(fj):
            f = i * ds + j if outer_rows else j * ds + i
            np.testing.assert_array_equal(raw[f * 256:(f + 1) * 256].reshape(16, 16),
                                          ref[16 * i:16 * i + 16, 16 * j:16 * j + 16])


def test_img2col_pad_value_sign_of_zero_is_kept_across_calls():
    """pad_value -0.0 and +0.0 compare equal (and hash alike); each call must pad with its own bits
    (h_cube119: a memo keyed by value gave +0.0 pads -0.0 after an earlier -0.0 call)."""
    m = Machine("Ascend310P3")
    src = m.ptr("l1", "f16", 0)
    fill(m, src, np.ones(16, np.float16))
    geo = dict(stride=(1, 1), filter=(1, 1), dilation=(1, 1), pad=(1, 1, 1, 1))
    for pv in (-0.0, 0.0, -0.0, np.float16(0.0), np.float16(-0.0), 0.0):
        d = m.ptr("ub", "f16", 0)
        pto.img2col(src, d, 1, 1, 16, 0, 16, 0, 16, 1, **geo, pad_value=(pv,))
        row0 = m.read(d, 16)                      # output pixel 0 lies in the padding
        assert (np.signbit(row0) == np.signbit(pv)).all(), pv


def test_img2col_int8_c0_32_and_errors():
    m = Machine("Ascend310")
    fm = np.arange(2 * 3 * 3 * 32).astype(np.int8).reshape(2, 3, 3, 32)
    src = m.ptr("l1", "s8", 0)
    fill(m, src, fm.reshape(-1))
    d = m.ptr("l0a", "s8", 0)
    geo = dict(stride=(1, 1), filter=(2, 2), dilation=(1, 1), pad=(0, 0, 0, 0))
    pto.img2col(src, d, 3, 3, 64, 0, 256, 0, 16, 8, **geo, pad_value=(5,))
    ref = im2col_loop(fm.astype(np.float64), 2, 3, 3, 32, 64, 2, 2, 1, 1, 1, 1, (0, 0, 0, 0), 5, 0, 16, 0, 256)
    raw = m.read(d, 16 * 256).reshape(8, 16, 32)
    got = raw.transpose(1, 0, 2).reshape(16, 256)
    np.testing.assert_array_equal(got[:4], ref[:4])               # 4 real pixels; the rest run past the map
    bad = [
        # channels mod 32 in {4, 8, 16} is a Load3D v2 channel count the simulator does not model (h_cube409:
        # 48 was refused as "not a multiple of C0"); 44 (mod 32 = 12) is none
        (dict(channels=48), UnsupportedOp, r"%channels 48 of a s8 map is a Load3D v2 channel count \(channels mod "
                                           r"32 in \{0, 4, 8, 16\}.* not modelled"),
        (dict(channels=4), UnsupportedOp, "%channels 4 of a s8 map is a Load3D v2 channel count"),
        (dict(channels=44), IllegalOperand, r"%channels 44 is not a Load3D channel count of s8 maps \(mod 32 = 12\)"),
        (dict(k_start=16), IllegalOperand, "%k_start 16 is not a multiple of 32"),
        (dict(m_ext=8), IllegalOperand, "%m_ext 8 is not a multiple of 16"),
        (dict(dst_stride=4), IllegalOperand, "%dst_stride 4 fractals is smaller than the 8"),
        (dict(filter=(4, 4)), IllegalOperand, "does not fit the padded 3 x 3 map"),
        (dict(stride=(0, 1)), IllegalOperand, r"stride\(%h\)"),
        (dict(stride=(1.0, 1)), IllegalOperand, r"stride\(%h\)"),     # not the memoised (1, 1) raster
        (dict(pad_value=(300,)), IllegalOperand, "pad value 300 does not fit s8"),
        (dict(m_start=-255 * 2 - 1), IllegalOperand, r"%m_start: value -511 is outside \[-510, 65535\].*>= -255"),  # -255 rows
    ]
    base = dict(channels=64, k_start=0, k_ext=256, m_start=0, m_ext=16, dst_stride=8, pad_value=(0,), **geo)
    for change, cls, match in bad:
        a = dict(base, **change)
        cl = {k: a[k] for k in ("stride", "filter", "dilation", "pad", "pad_value")}
        with pytest.raises(cls, match=match):
            pto.img2col(src, d, 3, 3, a["channels"], a["k_start"], a["k_ext"], a["m_start"], a["m_ext"],
                        a["dst_stride"], **cl)
    with pytest.raises(IllegalOperand, match=r"stride\(...\) is required"):
        pto.img2col(src, d, 3, 3, 64, 0, 32, 0, 16, 1, filter=(2, 2), dilation=(1, 1), pad=(0, 0, 0, 0))


def test_img2col_reports_uninitialised_pixels():
    m = Machine("Ascend310", options=MachineOptions(uninitialized="raise"))
    src = m.ptr("l1", "f16", 0)
    fill(m, src, np.ones(16 * 4 * 4, np.float16)[:16 * 4 * 3])      # the last row of the 4 x 4 map is unwritten
    with pytest.raises(Exception, match="nothing wrote"):
        pto.img2col(src, m.ptr("l0a", "f16", 0), 4, 4, 16, 0, 16, 0, 16, 1, stride=(1, 1), filter=(1, 1),
                    dilation=(1, 1), pad=(0, 0, 0, 0))


# ----------------------------------------------------------------------------- col2img


@pytest.mark.parametrize("lh", [1, -5])                 # -5: the walk starts above the padded map (pad top 1)
@pytest.mark.parametrize("dt", ["f16", "f32"])
def test_col2img_adds_fractals_at_their_pixels(dt, lh):
    m = Machine("Ascend910A")
    h, w, kh, kw = 4, 5, 3, 2
    pad, dil = (1, 0, 1, 1), (1, 1)
    rng = np.random.default_rng(0)
    npd = np.float16 if dt == "f16" else np.float32
    img0 = rng.integers(-9, 9, (h, w, 16)).astype(npd)
    col = rng.integers(-9, 9, (2, 16, 16)).astype(npd)
    src, dst = m.ptr("ub", dt, 0), m.ptr("ub", dt, 8192)
    fill(m, src, col.reshape(-1))
    fill(m, dst, img0.reshape(-1))
    pto.col2img(src, dst, h, w, 1, 2, -1, lh, 2, stride=(2, 1), filter=(kh, kw), dilation=dil, pad=pad)
    sh, sw = 2, 1
    pl, pr, pt, pb = pad
    wo = (w + pl + pr - (kw - 1) - 1) // sw + 1
    m0 = ((lh + pt) // sh) * wo + (-1 + pl) // sw
    want = img0.astype(np.float64).copy()
    for p in range(32):
        mm = m0 + p
        y, x = (mm // wo) * sh - pt + 2 * 1, (mm % wo) * sw - pl + 1 * 1
        if 0 <= y < h and 0 <= x < w:
            want[y, x] += col.reshape(32, 16)[p]
    np.testing.assert_array_equal(m.read(dst, h * w * 16).reshape(h, w, 16), want.astype(npd))


def test_col2img_saturates_and_gates():
    m = Machine("Ascend910A")
    src, dst = m.ptr("ub", "f16", 0), m.ptr("ub", "f16", 8192)
    fill(m, src, np.full(256, 60000, np.float16))
    fill(m, dst, np.full(16 * 16, 60000, np.float16))
    geo = dict(stride=(1, 1), filter=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0))
    pto.col2img(src, dst, 1, 16, 0, 0, 0, 0, 1, **geo)
    assert (m.read(dst, 256) == np.float16(65504)).all()         # saturation mode: clamp, not inf
    with pytest.raises(IllegalOperand, match="not the window origin"):
        pto.col2img(src, dst, 4, 4, 0, 0, 0, 0, 1, stride=(2, 2), filter=(1, 1), dilation=(1, 1), pad=(0, 0, 1, 0))
    with pytest.raises(IllegalOperand, match="f16 or f32"):
        pto.col2img(m.ptr("ub", "s32", 0), m.ptr("ub", "s32", 8192), 1, 16, 0, 0, 0, 0, 1, **geo)
    with pytest.raises(UnsupportedOp, match="pto.col2img does not exist on A2A3"):
        m2 = Machine("A2A3")
        pto.col2img(m2.ptr("ub", "f16", 0), m2.ptr("ub", "f16", 8192), 1, 16, 0, 0, 0, 0, 1, **geo)


# ----------------------------------------------------------------------------- L0C <-> UB


def test_copy_cc_to_ubuf_conversions_bit_exact():
    m = Machine("Ascend310")
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(512) * 3e4).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, -0.0, 7e4, 65519.0]
    c = m.ptr("l0c", "f32", 0)
    fill(m, c, x)
    u = m.ptr("ub", "f16", 0)
    pto.copy_matrix_cc_to_ubuf(c, u, 2, 1, 0, 0, relu=True)
    got = m.read(u, 512)
    sat = np.nan_to_num(np.clip(x.astype(np.float64), -65504, 65504), nan=0.0).astype(np.float16)
    want = np.where(sat > 0, sat, np.float16(0))
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))       # -0 -> +0
    # int32 deq: scalar and per-channel (vdeq), exact product then one rounding
    xi = rng.integers(-2 ** 31, 2 ** 31, 512, dtype=np.int64).astype(np.int32)
    ci = m.ptr("l0c", "s32", 4096)
    fill(m, ci, xi)
    pto.copy_matrix_cc_to_ubuf(ci, u, 2, 1, 0, 0, deq=(2.0 ** -20,))
    np.testing.assert_array_equal(m.read(u, 512), np.clip(xi * 2.0 ** -20, -65504, 65504).astype(np.float16))
    scales = rng.uniform(-1e-4, 1e-4, 16).astype(np.float16)
    sp = m.ptr("ub", "f16", 4096)
    fill(m, sp, scales)
    pto.copy_matrix_cc_to_ubuf(ci, u, 1, 2, 0, 0, deq=(sp,))
    want = np.clip(xi.reshape(32, 16) * scales.astype(np.float64), -65504, 65504).astype(np.float16)
    np.testing.assert_array_equal(m.read(u, 512), want.reshape(-1))


def test_copy_cc_to_ubuf_inf_nan_mode_and_units():
    m = Machine("Ascend310", options=MachineOptions(overflow_mode="inf_nan"))
    x = np.array([7e4, -7e4, np.nan, 1.0] * 64, np.float32)
    c = m.ptr("l0c", "f32", 0)
    fill(m, c, np.concatenate([x, x + 1, x + 2]))
    u = m.ptr("ub", "f16", 0)
    fill(m, u, np.zeros(1024, np.float16))
    # 2 bursts of 16 rows (row_mode), 1 fractal gap on the L0C side, 2 blocks gap in UB
    pto.copy_matrix_cc_to_ubuf(c, u, 2, 16, 1, 2, row_mode=True)
    got = m.read(u, 256 + 32 + 256)
    with np.errstate(over="ignore"):
        first, third = x.astype(np.float16), (x + 2).astype(np.float16)
    np.testing.assert_array_equal(got[:256], first)
    assert not got[256:288].any()
    np.testing.assert_array_equal(got[288:], third)


def test_copy_cc_to_ubuf_errors_and_gating():
    m = Machine("Ascend310")
    c, u = m.ptr("l0c", "s32", 0), m.ptr("ub", "f16", 0)
    with pytest.raises(IllegalOperand, match="s32 -> f16 needs deq"):
        pto.copy_matrix_cc_to_ubuf(c, u, 1, 1, 0, 0)
    with pytest.raises(IllegalOperand, match="deq applies to s32 -> f16, not f32 -> f32"):
        pto.copy_matrix_cc_to_ubuf(m.ptr("l0c", "f32", 0), m.ptr("ub", "f32", 0), 1, 1, 0, 0, deq=(1.0,))
    with pytest.raises(IllegalOperand, match="f32 -> UB s32 is not a copy"):
        pto.copy_matrix_cc_to_ubuf(m.ptr("l0c", "f32", 0), m.ptr("ub", "s32", 0), 1, 1, 0, 0)
    with pytest.raises(IllegalOperand, match="%nburst"):
        pto.copy_matrix_cc_to_ubuf(m.ptr("l0c", "f32", 0), m.ptr("ub", "f32", 0), 0, 1, 0, 0)
    fill(m, c, np.zeros(256, np.int32))
    with pytest.raises(IllegalOperand, match="16 f16 values in UB"):
        pto.copy_matrix_cc_to_ubuf(c, u, 1, 1, 0, 0, deq=(m.ptr("ub", "f32", 1024),))
    m2 = Machine("Ascend910B1")
    with pytest.raises(UnsupportedOp, match="copy_matrix_cc_to_ubuf does not exist on Ascend910B1"):
        pto.copy_matrix_cc_to_ubuf(m2.ptr("l0c", "f32", 0), m2.ptr("ub", "f32", 0), 1, 1, 0, 0)


def test_copy_ubuf_to_cc_and_broadcast():
    m = Machine("Ascend310P3")
    x = np.arange(3 * 256, dtype=np.float16)
    u = m.ptr("ub", "f16", 0)
    fill(m, u, x)
    c = m.ptr("l0c", "f32", 0)
    fill(m, c, np.zeros(4 * 256, np.float32))
    # 2 bursts of 1 fractal; UB gap 16 blocks (= 1 f16 fractal skipped), L0C gap 1 fractal
    pto.copy_matrix_ubuf_to_cc(u, c, 2, 1, 16, 1)
    got = m.read(c, 4 * 256).reshape(4, 256)
    np.testing.assert_array_equal(got[0], x[:256].astype(np.float32))
    assert not got[1].any()
    np.testing.assert_array_equal(got[2], x[512:].astype(np.float32))
    r = np.arange(64, dtype=np.float32)
    ub = m.ptr("ub", "f32", 4096)
    fill(m, ub, r)
    cc = m.ptr("l0c", "f32", 8192)
    pto.broadcast_ub_to_cc(ub, cc, 2, 1, 1, 1)       # rows 0 and 2 (gap 1 block = 8 f32), fractals 0 and 2
    got = m.read(cc, 3 * 256).reshape(3, 16, 16)
    np.testing.assert_array_equal(got[0], np.broadcast_to(r[:16], (16, 16)))
    np.testing.assert_array_equal(got[2], np.broadcast_to(r[24:40], (16, 16)))
    with pytest.raises(IllegalOperand, match="f16, f32 or s32 rows of one type"):
        pto.broadcast_ub_to_cc(m.ptr("ub", "s32", 0), cc, 1, 1, 0, 0)
    with pytest.raises(IllegalOperand, match="%burst_len"):
        pto.broadcast_ub_to_cc(ub, cc, 1, 256, 0, 0)
    with pytest.raises(IllegalOperand, match="not supported"):
        pto.copy_matrix_ubuf_to_cc(m.ptr("ub", "f32", 0), m.ptr("l0c", "f16", 0), 1, 1, 0, 0)


def test_legacy_ops_round_trip_through_pto_as_text():
    from pto_core.program import program
    from pto_core import asm
    with program("k", target="Ascend310") as k:
        pto.img2col(k.ptr("l1", "f16", 0), k.ptr("l0a", "f16", 0), 4, 4, 16, 0, 16, 0, 16, 1, stride=(1, 1),
                    filter=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), pad_value=(0.0,))
        pto.load2d(k.ptr("l1", "f16", 0), k.ptr("l0b", "f16", 0), 0, 1, 1, 0, transpose=True)
        pto.copy_matrix_cc_to_ubuf(k.ptr("l0c", "s32", 0), k.ptr("ub", "f16", 0), 1, 1, 0, 0, deq=(0.5,),
                                   relu=True)
        pto.col2img(k.ptr("ub", "f16", 0), k.ptr("ub", "f16", 4096), 4, 4, 0, 0, 0, 0, 1, stride=(1, 1),
                    filter=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0))
        pto.broadcast_ub_to_cc(k.ptr("ub", "f32", 0), k.ptr("l0c", "f32", 0), 1, 1, 0, 0)
        pto.copy_matrix_ubuf_to_cc(k.ptr("ub", "f32", 0), k.ptr("l0c", "f32", 0), 1, 1, 0, 0)
    text = k.program.to_asm()
    again = asm.parse(text)
    assert again.to_asm() == text
    for name in ("pto.img2col", "pto.load2d", "pto.copy_matrix_cc_to_ubuf", "pto.col2img", "pto.broadcast_ub_to_cc",
                 "pto.copy_matrix_ubuf_to_cc", "relu", "transpose", "deq("):
        assert name in text


# ----------------------------------------------------------------------------- broadcast repeat / f16 -> f32


@SETTINGS
@given(n=st.integers(1, 3), bl=st.integers(1, 3), sg=st.integers(0, 2), dg=st.integers(0, 2),
       repeat=st.booleans(), pair=st.sampled_from([("f16", "f16"), ("f32", "f32"), ("s32", "s32"), ("f16", "f32")]),
       seed=st.integers(0, 999))
def test_broadcast_repeat_and_widening_match_loop_reference(n, bl, sg, dg, repeat, pair, seed):
    sname, dname = pair
    snp = {"f16": np.float16, "f32": np.float32, "s32": np.int32}
    m = Machine("Ascend310P3")
    per_block = 32 // np.dtype(snp[sname]).itemsize
    nsrc = n * (16 * (1 if repeat else bl) + sg * per_block)
    x = (np.random.default_rng(seed).integers(-999, 999, nsrc) / (1 if sname == "s32" else 4)).astype(snp[sname])
    ub, cc = m.ptr("ub", sname, 0), m.ptr("l0c", dname, 0)
    fill(m, ub, x)
    nfrac = n * (bl + dg)
    fill(m, cc, np.full(nfrac * 256, -5, snp[dname]))
    pto.broadcast_ub_to_cc(ub, cc, n, bl, sg, dg, repeat=repeat or None)
    exp = np.full((nfrac, 16, 16), -5, np.float64)
    pos = 0
    for b in range(n):
        for j in range(bl):
            r = pos if repeat else pos + 16 * j
            exp[b * (bl + dg) + j] = x[r:r + 16].astype(np.float64)
        pos += (16 if repeat else 16 * bl) + sg * per_block
    np.testing.assert_array_equal(m.read(cc, nfrac * 256).reshape(nfrac, 16, 16), exp)


# ----------------------------------------------------------------------------- img2col transpose


def _transposed_img2col(space, h, w, kh, kw, pad, extra, seed):
    """Run ``pto.img2col(..., transpose=True)`` of a random block into ``space``; return the fractals it wrote
    as ``{(K block j, M block i): 16 x 16}`` and the block ``X`` (M pixels x K columns, float64) from the loop
    reference, or None when the window does not fit. Zz L0A: fractal (j, i) at ``j*ds + i`` (``ds`` = M
    fractals + extra); Nz L0B: fractal (i, j) at ``i*ds + j`` (``ds`` = K fractals + extra)."""
    pl, pr, pt, pb = pad
    wo, ho = w + pl + pr - kw + 1, h + pt + pb - kh + 1
    if wo < 1 or ho < 1:
        return None
    rng = np.random.default_rng(seed)
    fm = rng.integers(-50, 50, (2, h, w, 16)).astype(np.float16)
    m = Machine("Ascend910B1")
    src = m.ptr("l1", "f16", 0)
    fill(m, src, fm.reshape(-1))
    ktot = kh * kw * 32
    k0 = 16 * int(rng.integers(0, ktot // 16))
    ke = 16 * int(rng.integers(1, (ktot - k0) // 16 + 1))
    me = 16 * int(rng.integers(1, 3))
    m0 = int(rng.integers(0, ho * wo))
    d = m.ptr(space, "f16", 0)
    fk, fm_ = ke // 16, me // 16
    l0a = space == "l0a"
    ds = (fm_ if l0a else fk) + extra
    pto.img2col(src, d, h, w, 32, k0, ke, m0, me, ds, stride=(1, 1), filter=(kh, kw), dilation=(1, 1), pad=pad,
                pad_value=(9.0,), transpose=True)
    x = im2col_loop(fm.astype(np.float64), 2, h, w, 16, 32, kh, kw, 1, 1, 1, 1, pad, 9.0, m0, me, k0, ke)
    raw = m.read(d, ((fk - 1) * ds + fm_) * 256 if l0a else ((fm_ - 1) * ds + fk) * 256)
    frac = {(j, i): raw[f * 256:(f + 1) * 256].reshape(16, 16)
            for j in range(fk) for i in range(fm_) for f in [j * ds + i if l0a else i * ds + j]}
    return frac, x


TRANSPOSE_CASES = dict(h=st.integers(2, 6), w=st.integers(2, 6), kh=st.integers(1, 2), kw=st.integers(1, 3),
                       pad=st.tuples(*[st.integers(0, 1)] * 4), extra=st.integers(0, 1), seed=st.integers(0, 999))


@SETTINGS
@given(**TRANSPOSE_CASES)
def test_img2col_transpose_matches_transposed_loop_reference(h, w, kh, kw, pad, extra, seed):
    """Into a Zz L0A the block is written as X^T: fractal (J, I) of X^T (K block J, M block I) holds
    X^T[16J:16J+16, 16I:16I+16]."""
    got = _transposed_img2col("l0a", h, w, kh, kw, pad, extra, seed)
    if got is None:
        return
    frac, x = got
    for (j, i), block in frac.items():
        np.testing.assert_array_equal(block, x.T[16 * j:16 * j + 16, 16 * i:16 * i + 16])


@SETTINGS
@given(**TRANSPOSE_CASES)
def test_img2col_transpose_into_l0b_is_zn_of_the_block(h, w, kh, kw, pad, extra, seed):
    """Into L0B (Nz geometry) the transposed block X^T lands as Zn of X: fractal (I, J) of X (M block I,
    K block J) at dst + (I*dst_stride + J)*512 holding its 16 K rows x 16 M columns, i.e. the mmad operand
    B = X with K = the block's pixels (TIK load3dv1 into L0B, tik_cube.md)."""
    got = _transposed_img2col("l0b", h, w, kh, kw, pad, extra, seed)
    if got is None:
        return
    frac, x = got
    for (j, i), block in frac.items():
        np.testing.assert_array_equal(block, x[16 * i:16 * i + 16, 16 * j:16 * j + 16].T)


def test_img2col_transpose_errors():
    m = Machine("Ascend910B1")
    geo = dict(stride=(1, 1), filter=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), transpose=True)
    with pytest.raises(IllegalOperand, match="transposed block into L0A or L0B only, not ub"):
        pto.img2col(m.ptr("l1", "f16", 0), m.ptr("ub", "f16", 0), 4, 4, 16, 0, 16, 0, 16, 1, **geo)
    with pytest.raises(UnsupportedOp, match="transpose of s8 im2col blocks is not modelled"):
        pto.img2col(m.ptr("l1", "s8", 0), m.ptr("l0a", "s8", 0), 4, 4, 32, 0, 32, 0, 16, 1, **geo)
    with pytest.raises(IllegalOperand, match="%dst_stride 1 fractals is smaller than the 2 fractals of one K block"):
        pto.img2col(m.ptr("l1", "f16", 0), m.ptr("l0a", "f16", 0), 8, 4, 16, 0, 16, 0, 32, 1, **geo)


def test_new_clauses_round_trip_through_pto_as_text():
    from pto_core.program import program
    from pto_core import asm
    with program("k", target="Ascend310P3") as k:
        pto.img2col(k.ptr("l1", "f16", 0), k.ptr("l0a", "f16", 0), 4, 4, 16, 0, 16, 0, 16, 1, stride=(1, 1),
                    filter=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), pad_value=(0.0,), transpose=True)
        pto.broadcast_ub_to_cc(k.ptr("ub", "f16", 0), k.ptr("l0c", "f32", 0), 1, 2, 0, 0, repeat=True)
    text = k.program.to_asm()
    assert asm.parse(text).to_asm() == text
    assert "transpose" in text and "repeat" in text


@settings(max_examples=150, deadline=None)
@given(h=st.integers(1, 7), w=st.integers(1, 7), kh=st.integers(1, 3), kw=st.integers(1, 3), sh=st.integers(1, 2),
       sw=st.integers(1, 2), dh=st.integers(1, 2), dw=st.integers(1, 2), pads=st.tuples(*[st.integers(0, 2)] * 4),
       rep=st.integers(1, 4), data=st.data())
def test_col2img_dst_elements_is_the_last_touched_pixel(h, w, kh, kw, sh, sw, dh, dw, pads, rep, data):
    """COL2IMG_DST_EXTENT_IS_WALK: the destination extent is one past the last in-map pixel of the walk
    (reference: the walk position by position in plain Python)."""
    from pto_core.ops.legacy_cube import Raster, col2img_dst_elements
    pl, pr, pt, pb = pads
    wo = (w + pl + pr - dw * (kw - 1) - 1) // sw + 1
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    if wo < 1 or ho < 1:
        return
    rs = Raster("t", h, w, (sh, sw), (kh, kw), (dh, dw), (pl, pr, pt, pb))
    fh, fw = data.draw(st.integers(0, kh - 1)), data.draw(st.integers(0, kw - 1))
    m0 = data.draw(st.integers(0, ho * wo - 1))
    last = -1
    for m in range(m0, m0 + 16 * rep):
        r, c = m // wo, m % wo
        y, x = r * sh - pt + fh * dh, c * sw - pl + fw * dw
        if 0 <= y < h and 0 <= x < w:
            last = max(last, y * w + x)
    assert col2img_dst_elements(rs, fh, fw, m0, rep) == (last + 1) * 16


@pytest.mark.parametrize("channels, cls, match", [
    (8, UnsupportedOp, r"%channels 8 of a f16 map is a Load3D v2 channel count \(channels mod 16 in \{0, 4, 8\}"),
    (20, UnsupportedOp, r"%channels 20 of a f16 map is a Load3D v2 channel count"),
    (12, IllegalOperand, r"%channels 12 is not a Load3D channel count of f16 maps \(mod 16 = 12\)")])
def test_img2col_unmodelled_channel_counts_round_trip_and_refuse_when_run(channels, cls, match):
    """h_cube409: a Load3D v2 channel count the simulator does not model (IMG2COL_MODELLED_CHANNELS) survives the
    PTO-AS text and is refused as UnsupportedOp when the program runs, like eagerly; a count no Load3D takes is
    IllegalOperand (both were "not a multiple of C0")."""
    from pto_core.program import program
    from pto_core import asm
    with program("k", target="Ascend310P3") as k:
        pto.img2col(k.ptr("l1", "f16", 0), k.ptr("ub", "f16", 0), 4, 4, channels, 0, 16, 0, 16, 1, stride=(1, 1),
                    filter=(3, 3), dilation=(1, 1), pad=(1, 1, 1, 1), pad_value=(0.0,))
    text = k.program.to_asm()
    again = asm.parse(text)
    assert again.to_asm() == text and f"%c4_i64, %c4_i64, %c{channels}_i64, %c0_i64" in text
    for prog in (k.program, again):
        with pytest.raises(cls, match=match):
            prog.run()
    m = Machine("Ascend310P3")
    src = m.ptr("l1", "f16", 0)
    fill(m, src, np.zeros(1024, np.float16))
    with pytest.raises(cls, match=match):
        pto.img2col(src, m.ptr("ub", "f16", 0), 4, 4, channels, 0, 16, 0, 16, 1, stride=(1, 1), filter=(3, 3),
                    dilation=(1, 1), pad=(1, 1, 1, 1), pad_value=(0.0,))
