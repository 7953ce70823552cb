"""TIK matmul / mmad / load2dv1 / load2dv2 / L0C data paths against numpy references."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat.tik.cube_mm import plan_tiles

from .helpers import raises_tik, run

NP = {"float16": np.float16, "float32": np.float32, "int8": np.int8, "uint8": np.uint8, "int32": np.int32}


def nz(mat, rows_pad, k0):
    """``[K1, R, K0]`` of a ``rows x k`` matrix (rows padded to ``rows_pad`` with zeros, k to K0)."""
    r, k = mat.shape
    k1 = -(-k // k0)
    out = np.zeros((k1, rows_pad, k0), mat.dtype)
    padded = np.zeros((r, k1 * k0), mat.dtype)
    padded[:, :k] = mat
    out[:, :r, :] = padded.reshape(r, k1, k0).transpose(1, 0, 2)
    return out


def l0c_to_mat(c, m, n):
    """``[N1, M, 16]`` -> ``m x n``."""
    n1, M, _ = c.shape
    return c.transpose(1, 0, 2).reshape(M, n1 * 16)[:m, :n]


def matmul_kernel(m, k, n, a_dt="float16", c_dt="float32", init_twice=False, bias=False, chip=None):
    if chip:
        set_current_compile_soc_info(chip)
    ti = tik.Tik()
    k0 = 32 // np.dtype(NP[a_dt]).itemsize
    M, N, K1 = -(-m // 16) * 16, -(-n // 16) * 16, -(-k // k0)
    a_gm = ti.Tensor(a_dt, (K1, M, k0), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor(a_dt, (K1, N, k0), name="b_gm", scope=tik.scope_gm)
    a = ti.Tensor(a_dt, (K1, M, k0), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor(a_dt, (K1, N, k0), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor(c_dt, (N // 16, M, 16), name="c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor(c_dt, (N * M,), name="ub", scope=tik.scope_ubuf)
    out = ti.Tensor(c_dt, (N * M,), name="out", scope=tik.scope_gm)
    size = np.dtype(NP[a_dt]).itemsize
    ti.data_move(a, a_gm, 0, 1, K1 * M * k0 * size // 32, 0, 0)
    ti.data_move(b, b_gm, 0, 1, K1 * N * k0 * size // 32, 0, 0)
    inputs = [a_gm, b_gm]
    kw = {}
    if bias:
        bias_gm = ti.Tensor(c_dt, (N,), name="bias_gm", scope=tik.scope_gm)
        bias_l1 = ti.Tensor(c_dt, (N,), name="bias", scope=tik.scope_cbuf)
        ti.data_move(bias_l1, bias_gm, 0, 1, N * 4 // 32, 0, 0)
        inputs.append(bias_gm)
        kw["bias"] = bias_l1
    ti.matmul(c, a, b, m, k, n, **kw)
    if init_twice:
        ti.matmul(c, a, b, m, k, n, init_l1out=False)
    csize = np.dtype(NP[c_dt]).itemsize
    if csize == 4 and chip not in ("Ascend910B1", "Ascend310B1"):
        ti.data_move(ub, c, 0, 1, N * M // 256, 0, 0)
        ti.data_move(out, ub, 0, 1, N * M * csize // 32, 0, 0)
    else:
        ti.fixpipe(out, c, N // 16, M * 16 * csize // 32, 0, 0)
    ti.BuildCCE("mm", inputs, [out])
    return ti, (M, N, k0)


def _feed(m, k, n, a_dt, M, N, k0, rng, ints=True):
    if a_dt in ("int8", "uint8"):
        lo = 0 if a_dt == "uint8" else -128
        A = rng.integers(lo, 128, (m, k)).astype(NP[a_dt])
        B = rng.integers(-128, 128, (k, n)).astype(np.int8 if a_dt == "uint8" else NP[a_dt])
    elif ints:
        A = rng.integers(-4, 5, (m, k)).astype(NP[a_dt])
        B = rng.integers(-4, 5, (k, n)).astype(NP[a_dt])
    else:
        A = rng.standard_normal((m, k)).astype(NP[a_dt])
        B = rng.standard_normal((k, n)).astype(NP[a_dt])
    return A, B, {"a_gm": nz(A, M, k0), "b_gm": nz(B.T.copy(), N, k0)}


@pytest.mark.parametrize("m,k,n", [(16, 16, 16), (30, 64, 160), (1, 256, 256), (37, 300, 50), (128, 1000, 96),
                                   (2100, 16, 16)])
def test_matmul_fp16_exact_on_integer_data(m, k, n):
    rng = np.random.default_rng(m * 7 + k)
    ti, (M, N, k0) = matmul_kernel(m, k, n)
    A, B, feed = _feed(m, k, n, "float16", M, N, k0, rng)
    out, = run(ti, feed)
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n)
    np.testing.assert_array_equal(C, A.astype(np.float64) @ B.astype(np.float64))
    assert ti.tikdb.reports == []


def test_matmul_fp16_random_within_f32_accumulation_bound():
    m, k, n = 48, 700, 64
    rng = np.random.default_rng(3)
    ti, (M, N, k0) = matmul_kernel(m, k, n)
    A, B, feed = _feed(m, k, n, "float16", M, N, k0, rng, ints=False)
    out, = run(ti, feed)
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n).astype(np.float64)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    bound = (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)) * k * 2.0 ** -24
    assert np.all(np.abs(C - ref) <= bound)


@pytest.mark.parametrize("a_dt", ["int8"])
def test_matmul_int8_exact(a_dt):
    m, k, n = 40, 100, 48
    rng = np.random.default_rng(5)
    ti, (M, N, k0) = matmul_kernel(m, k, n, a_dt=a_dt, c_dt="int32")
    A, B, feed = _feed(m, k, n, a_dt, M, N, k0, rng)
    out, = run(ti, feed)
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n)
    np.testing.assert_array_equal(C, A.astype(np.int64) @ B.astype(np.int64))


def test_matmul_accumulate_init_l1out_false():
    m, k, n = 20, 48, 32
    rng = np.random.default_rng(9)
    ti, (M, N, k0) = matmul_kernel(m, k, n, init_twice=True)
    A, B, feed = _feed(m, k, n, "float16", M, N, k0, rng)
    out, = run(ti, feed)
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n)
    np.testing.assert_array_equal(C, 2 * (A.astype(np.float64) @ B.astype(np.float64)))


def test_matmul_bias_and_fp32_on_910b():
    m, k, n = 20, 40, 48
    rng = np.random.default_rng(11)
    ti, (M, N, k0) = matmul_kernel(m, k, n, a_dt="float32", bias=True, chip="Ascend910B1")
    A, B, feed = _feed(m, k, n, "float32", M, N, k0, rng)
    bias = rng.integers(-10, 10, N).astype(np.float32)
    feed["bias_gm"] = bias
    out, = run(ti, feed)
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n)
    np.testing.assert_array_equal(C, A.astype(np.float64) @ B.astype(np.float64) + bias[:n])


def test_matmul_fp16_accumulator_on_sd3403():
    """SD3403/Hi3796CS keep f16 results in L0C (scripts pick the L0C dtype from get_soc_spec)."""
    from tbe.common.platform import get_soc_spec
    set_current_compile_soc_info("SD3403")
    l0c_dt = "float16" if get_soc_spec("SOC_VERSION") in ("SD3403", "Hi3796CV300CS") else "float32"
    m, k, n = 32, 32, 32
    rng = np.random.default_rng(2)
    ti, (M, N, k0) = matmul_kernel(m, k, n, c_dt=l0c_dt, chip="SD3403")
    A, B, feed = _feed(m, k, n, "float16", M, N, k0, rng)
    out, = run(ti, feed)
    assert out.dtype == np.float16
    C = l0c_to_mat(out.reshape(N // 16, M, 16), m, n)
    np.testing.assert_array_equal(C, (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16))


def test_plan_tiles_fit_the_buffers():
    for M, N, K, k0, size in ((256, 256, 1024, 16, 2), (2112, 16, 16, 16, 2), (16, 4096, 4096, 32, 1),
                              (512, 512, 512, 8, 4)):
        t = plan_tiles(M, N, K, k0, size, 65536, 65536)
        assert t.mt * t.kt * size <= 65536 and t.kt * t.nt * size <= 65536
        assert t.kt % k0 == 0 and t.mt % 16 == 0 and t.nt % 16 == 0 and t.kt <= 4095
        assert t.mcut == (M * k0 * size > 65536)


# ----------------------------------------------------------------------------- matmul errors


def _mm_tensors(a_dt="float16", c_dt="float32", a_scope=tik.scope_cbuf, c_scope=tik.scope_cbuf_out, ashape=(4, 32, 16),
                bshape=(4, 32, 16), cshape=(2, 32, 16)):
    ti = tik.Tik()
    a = ti.Tensor(a_dt, ashape, name="a", scope=a_scope)
    b = ti.Tensor(a_dt, bshape, name="b", scope=tik.scope_cbuf)
    c = ti.Tensor(c_dt, cshape, name="c", scope=c_scope)
    return ti, a, b, c


@pytest.mark.parametrize("args,cls,match", [
    ((0, 64, 32), IllegalOperand, "m = 0 is outside \\[1, 4096\\]"),
    ((32, 20000, 32), IllegalOperand, "k = 20000 is outside \\[1, 16384\\]"),
    ((32, 64, 5000), IllegalOperand, "n = 5000 is outside"),
    ((32.5, 64, 32), IllegalOperand, "m must be a Python int"),
    ((32, 128, 32), OutOfBounds, "a \\[K1=8, M=32, K0=16\\]"),
    ((48, 64, 32), OutOfBounds, "tensor overflow"),
])
def test_matmul_range_and_extent_errors(args, cls, match):
    ti, a, b, c = _mm_tensors()
    with raises_tik(cls, match=match):
        ti.matmul(c, a, b, *args)


def test_matmul_operand_errors():
    ti, a, b, c = _mm_tensors(c_scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="matmul writes its result to L0C"):
        ti.matmul(c, a, b, 32, 64, 32)
    ti, a, b, c = _mm_tensors(a_dt="float16", c_dt="int32")
    with raises_tik(UnsupportedOp, match="tik.matmul with f16f16s32 is not supported on Ascend310"):
        ti.matmul(c, a, b, 32, 64, 32)
    ti, a, b, c = _mm_tensors(a_dt="float32", c_dt="float32", ashape=(8, 32, 8), bshape=(8, 32, 8))
    with raises_tik(UnsupportedOp, match="f32f32f32 is not supported on Ascend310"):
        ti.matmul(c, a, b, 32, 64, 32)
    ti, a, b, c = _mm_tensors()
    with raises_tik(Misaligned, match="a address is not 512-byte aligned"):
        ti.matmul(c, a[16:], b, 16, 16, 16)
    with raises_tik(IllegalOperand, match="init_l1out must be a bool"):
        ti.matmul(c, a, b, 32, 64, 32, init_l1out="yes")
    bias = ti.Tensor("float32", (32,), name="bias", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="bias is supported on Ascend910B/310B AI cores only"):
        ti.matmul(c, a, b, 32, 64, 32, bias=bias)
    set_current_compile_soc_info("Ascend910B1")
    ti, a, b, c = _mm_tensors()
    bias = ti.Tensor("float32", (32,), name="bias", scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="bias requires init_l1out=True"):
        ti.matmul(c, a, b, 32, 64, 32, init_l1out=False, bias=bias)


# ----------------------------------------------------------------------------- mmad + load2d


def _mmad_kernel(chip, m, k, n, is_bias, dyn=False, transpose_b=False, bool_flags=False):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    K1, M1, N1 = k // 16, m // 16, n // 16
    a_gm = ti.Tensor("float16", (K1 * M1 * 256,), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (K1 * N1 * 256,), name="b_gm", scope=tik.scope_gm)
    a1 = ti.Tensor("float16", (K1 * M1 * 256,), name="a1", scope=tik.scope_cbuf)
    b1 = ti.Tensor("float16", (K1 * N1 * 256,), name="b1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (M1 * K1 * 256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (K1 * N1 * 256,), name="l0b", scope=tik.scope_cb)
    c = ti.Tensor("float32", (N1 * m * 16,), name="c", scope=tik.scope_cc)
    ub = ti.Tensor("float32", (N1 * m * 16,), name="ub", scope=tik.scope_ubuf)
    out = ti.Tensor("float32", (N1 * m * 16,), name="out", scope=tik.scope_gm)
    ti.data_move(a1, a_gm, 0, 1, K1 * M1 * 16, 0, 0)
    ti.data_move(b1, b_gm, 0, 1, K1 * N1 * 16, 0, 0)
    load = ti.load2dv1 if chip.startswith(("Ascend310", "Ascend910A")) and chip != "Ascend310P3" else None
    # L1 a is [K1][M1][16][16] (Nz); L0A wants [M1][K1][16][16]: one load per M block, src stride M1
    for i in range(M1):
        if load is not None:
            ti.load2dv1(l0a[i * K1 * 256], a1[i * 256], 0, K1, M1, 0)
        else:
            ti.load2dv2(l0a[i * K1 * 256], a1[i * 256], 0, K1, 0, M1, 0)
    # L1 b holds B (k x n) as [K1][N1][16 k][16 n] when transpose_b (Zn needs n rows): transposing load
    if load is not None:
        ti.load2dv1(l0b, b1, 0, K1 * N1, 1, 0, transpose_b)
    else:
        ti.load2dv2(l0b, b1, 0, K1 * N1, 0, 1, 0, transpose_b)
    if dyn:
        mm = ti.Scalar("int32", name="mm", init_value=m)
        ib = ti.Scalar("int32", name="ib", init_value=0)
        ti.mmad(c, l0a, l0b, mm, k, n, ib)
        ib.set_as(1)
        ti.mmad(c, l0a, l0b, mm, k, n, ib)
    elif bool_flags:                 # Python bools are TIK ints (isinstance(True, int)): False = 0, True = 1
        ti.mmad(c, l0a, l0b, m, k, n, False)
        ti.mmad(c, l0a, l0b, m, k, n, is_bias > 0)
    else:
        ti.mmad(c, l0a, l0b, m, k, n, 0)
        if is_bias:
            ti.mmad(c, l0a, l0b, m, k, n, 1)
    ti.data_move(ub, c, 0, 1, N1 * m // 16, 0, 0)
    ti.data_move(out, ub, 0, 1, N1 * m * 16 * 4 // 32, 0, 0)
    ti.BuildCCE("mmad", [a_gm, b_gm], [out])
    return ti


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend310P3"])
@pytest.mark.parametrize("variant", ["plain", "acc", "dyn", "transpose", "bool"])
def test_mmad_with_load2d(chip, variant):
    m, k, n = 32, 48, 32
    ti = _mmad_kernel(chip, m, k, n, variant in ("acc", "bool"), dyn=variant == "dyn",
                      transpose_b=variant == "transpose", bool_flags=variant == "bool")
    rng = np.random.default_rng(4)
    A = rng.integers(-4, 5, (m, k)).astype(np.float16)
    B = rng.integers(-4, 5, (k, n)).astype(np.float16)
    a_l1 = nz(A, m, 16).reshape(-1)
    if variant == "transpose":
        # [K1][N1][16 k][16 n]: each fractal holds B's block untransposed; load2d transposes it into n x k
        b_l1 = B.reshape(k // 16, 16, n // 16, 16).transpose(0, 2, 1, 3).reshape(-1)
    else:
        b_l1 = nz(B.T.copy(), n, 16).reshape(-1)
    out, = run(ti, {"a_gm": a_l1, "b_gm": b_l1})
    C = l0c_to_mat(out.reshape(n // 16, m, 16), m, n)
    times = 2 if variant in ("acc", "dyn", "bool") else 1
    np.testing.assert_array_equal(C, times * (A.astype(np.float64) @ B.astype(np.float64)))


def test_mmad_zero_dims_and_flags():
    ti, a, b, c = _mm_tensors()
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    cc = ti.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
    n_before = len(ti._builder._blocks[-1])
    ti.mmad(cc, l0a, l0b, 0, 16, 16, 0)
    assert len(ti._builder._blocks[-1]) == n_before
    for flag in ("en_weight_offset", "en_small_channel", "en_small_k", "en_ssparse", "en_winograd_a",
                 "en_winograd_b"):
        with raises_tik(UnsupportedOp, match=f"mmad {flag}"):
            ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, **{flag: True})
    with raises_tik(UnsupportedOp, match="fm_offset"):
        ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, fm_offset=3)
    # smask is a tensor in TIK: the flag check must not compare it (that raised a confusing "comparing tensor
    # view ... needs a single element" about operand 'self'; h_author307)
    mask = ti.Tensor("float16", (16,), name="mask", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="mmad smask"):
        ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, smask=mask)
    ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, smask=None, en_small_k=0, en_ssparse=False)     # defaults stay legal
    with raises_tik(IllegalOperand, match="matrix_k = 5000 is outside"):
        ti.mmad(cc, l0a, l0b, 16, 5000, 16, 0)
    with raises_tik(IllegalOperand, match="is_bias = 2 is outside"):
        ti.mmad(cc, l0a, l0b, 16, 16, 16, 2)
    with raises_tik(IllegalOperand, match="is_bias = 2 is outside"):
        ti.mmad(cc, l0a, l0b, 16, 16, 16, True + True)       # a bool is an int (TIK), and so is its sum
    with raises_tik(IllegalOperand, match="src_fm must be in L0A"):
        ti.mmad(cc, l0b, l0b, 16, 16, 16, 0)
    with raises_tik(OutOfBounds, match="the left matrix tile"):
        ti.mmad(cc, l0a, l0b, 32, 16, 16, 0)
    bias = ti.Tensor("float32", (16,), name="bt", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="bias_tensor needs a bias table"):
        ti.mmad(cc, l0a, l0b, 16, 16, 16, 1, bias_tensor=bias)


def test_mmad_bias_tensor_on_910b():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (256,), name="a_gm", scope=tik.scope_gm)
    bias_gm = ti.Tensor("float32", (16,), name="bias_gm", scope=tik.scope_gm)
    a1 = ti.Tensor("float16", (256,), name="a1", scope=tik.scope_cbuf)
    bias = ti.Tensor("float32", (16,), name="bias", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    cc = ti.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
    out = ti.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(a1, a_gm, 0, 1, 16, 0, 0)
    ti.data_move(bias, bias_gm, 0, 1, 2, 0, 0)
    ti.load2dv2(l0a, a1, 0, 1, 0, 1, 0)
    ti.load2dv2(l0b, a1, 0, 1, 0, 1, 0)
    ti.mmad(cc, l0a, l0b, 16, 16, 16, 1, bias_tensor=bias)
    ti.fixpipe(out, cc, 1, 32, 0, 0)
    ti.BuildCCE("mmad_bias", [a_gm, bias_gm], [out])
    x = np.random.default_rng(0).integers(-3, 4, (16, 16)).astype(np.float16)
    bv = np.arange(16, dtype=np.float32)
    res, = run(ti, {"a_gm": x.reshape(-1), "bias_gm": bv})
    # L0A = x (m x k), L0B fractal = x read as B^T rows: C = x @ x^T + bias
    np.testing.assert_array_equal(res.reshape(16, 16), x.astype(np.float64) @ x.T.astype(np.float64) + bv)


@pytest.mark.parametrize("offset, ok", [(8, True), (4, False), (1, False)])
def test_mmad_bias_tensor_alignment_is_checked_at_the_call(offset, ok):
    """bias_tensor starts 32-byte aligned (cube_mm.BIAS_L1_ALIGN: CCE copy_cbuf_to_bt's source rule, as matmul's and
    conv2d's bias); it was unchecked at the call, and a misaligned one stopped the run inside the lowering."""
    from tbe_compat.tik import cube_mm
    assert cube_mm.BIAS_L1_ALIGN == 32
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (256,), name="a_gm", scope=tik.scope_gm)
    bias_gm = ti.Tensor("float32", (32,), name="bias_gm", scope=tik.scope_gm)
    a1 = ti.Tensor("float16", (256,), name="a1", scope=tik.scope_cbuf)
    bias = ti.Tensor("float32", (32,), name="bias", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
    cc = ti.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
    out = ti.Tensor("float32", (256,), name="out", scope=tik.scope_gm)
    ti.data_move(a1, a_gm, 0, 1, 16, 0, 0)
    ti.data_move(bias, bias_gm, 0, 1, 4, 0, 0)
    ti.load2dv2(l0a, a1, 0, 1, 0, 1, 0)
    ti.load2dv2(l0b, a1, 0, 1, 0, 1, 0)
    if not ok:
        with raises_tik(Misaligned, match=rf"test_tik_cube_matmul.py:\d+ in `tik.mmad`: operand bias_tensor: "
                                          rf"bias_tensor address is not 32-byte aligned: tensor 'bias' \+ "
                                          rf"{offset * 4} B.*Fix: start the view at an element offset that is a "
                                          rf"multiple of 8"):
            ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, bias_tensor=bias[offset:])
        return
    ti.mmad(cc, l0a, l0b, 16, 16, 16, 0, bias_tensor=bias[offset:])
    ti.fixpipe(out, cc, 1, 32, 0, 0)
    ti.BuildCCE("mmad_bias_off", [a_gm, bias_gm], [out])
    x = np.random.default_rng(1).integers(-3, 4, (16, 16)).astype(np.float16)
    bv = np.arange(32, dtype=np.float32) * 3 + 1
    res, = run(ti, {"a_gm": x.reshape(-1), "bias_gm": bv})
    np.testing.assert_array_equal(res.reshape(16, 16),
                                  x.astype(np.float64) @ x.T.astype(np.float64) + bv[offset:offset + 16])


def test_load2d_index_strides_gap_and_errors():
    set_current_compile_soc_info("Ascend310P3")
    ti = tik.Tik()
    g = ti.Tensor("float16", (8 * 256,), name="g", scope=tik.scope_gm)
    l1 = ti.Tensor("float16", (8 * 256,), name="l1", scope=tik.scope_cbuf)
    l0a = ti.Tensor("float16", (8 * 256,), name="l0a", scope=tik.scope_ca)
    l0b = ti.Tensor("float16", (8 * 256,), name="l0b", scope=tik.scope_cb)
    l0c = ti.Tensor("float32", (8 * 256,), name="l0c", scope=tik.scope_cc)
    ub = ti.Tensor("float32", (8 * 256,), name="ub", scope=tik.scope_ubuf)
    out = ti.Tensor("float32", (8 * 256,), name="out", scope=tik.scope_gm)
    ti.data_move(l1, g, 0, 1, 8 * 16, 0, 0)
    # fractals 1, 3, 5 -> l0a fractals 0, 2, 4 (gap 1); GM -> L0B fractal 7 -> l0b fractal 0 directly
    ti.load2dv2(l0a, l1, 1, 3, 1, 2, 0)
    ti.load2dv2(l0b, g, 7, 1, 0, 1, 0)
    for bad, cls, match in ((lambda: ti.load2dv2(l0a, l1, 70000, 1, 0, 1, 0), IllegalOperand, "start_index"),
                            (lambda: ti.load2dv2(l0a, l1, 0, 0, 0, 1, 0), IllegalOperand, "repeat_times = 0"),
                            (lambda: ti.load2dv2(l0a, l1, 6, 4, 0, 1, 0), OutOfBounds, "fractals 6"),
                            (lambda: ti.load2dv2(l0a[16], l1, 0, 1, 0, 1, 0), Misaligned, "512-byte aligned"),
                            (lambda: ti.load2dv2(l0a, l1, 0, 1, 0, 1, 0, 1), IllegalOperand, "if_transpose must"),
                            (lambda: ti.load2dv2(l0a, l1, 0, 1, 0, 1, 0, False, 2), IllegalOperand, "addr_mode"),
                            (lambda: ti.load2dv1(l0a, l1, 0, 1, 1, 0), UnsupportedOp,
                             "tik.load2dv1 with float16 is not supported on Ascend310P3")):
        with raises_tik(cls, match=match):
            bad()
    # check the two loads through a mad-free path: L0A/L0B -> nothing reads them back in TIK, so use mmad
    ti.mmad(l0c, l0a, l0b, 16, 16, 16, 0)
    ti.data_move(ub, l0c, 0, 1, 1, 0, 0)
    ti.data_move(out, ub, 0, 1, 32, 0, 0)
    ti.BuildCCE("l2d", [g], [out])
    x = np.random.default_rng(1).integers(-3, 4, 8 * 256).astype(np.float16)
    res, = run(ti, {"g": x})
    A = x[256:512].reshape(16, 16).astype(np.float64)          # l0a fractal 0 = source fractal 1
    Bt = x[7 * 256:8 * 256].reshape(16, 16).astype(np.float64)  # l0b fractal 0 = source fractal 7 (n x k)
    np.testing.assert_array_equal(res[:256].reshape(16, 16), A @ Bt.T)


# ----------------------------------------------------------------------------- L0C <-> UB moves


def test_l0c_ub_moves_conv_relu_modes_and_tensor_mov_deq():
    ti = tik.Tik()
    g = ti.Tensor("float32", (512,), name="g", scope=tik.scope_gm)
    gi = ti.Tensor("int32", (256,), name="gi", scope=tik.scope_gm)
    gs = ti.Tensor("float16", (16,), name="gs", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (512,), name="ub", scope=tik.scope_ubuf)
    ubi = ti.Tensor("int32", (256,), name="ubi", scope=tik.scope_ubuf)
    uh = ti.Tensor("float16", (512,), name="uh", scope=tik.scope_ubuf)
    sc = ti.Tensor("float16", (16,), name="sc", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (512,), name="c", scope=tik.scope_cc)
    ci = ti.Tensor("int32", (256,), name="ci", scope=tik.scope_cc)
    o1 = ti.Tensor("float16", (256,), name="o1", scope=tik.scope_gm)
    o2 = ti.Tensor("float16", (256,), name="o2", scope=tik.scope_gm)
    o3 = ti.Tensor("float16", (256,), name="o3", scope=tik.scope_gm)
    ti.data_move(ub, g, 0, 1, 64, 0, 0)
    ti.data_move(ubi, gi, 0, 1, 32, 0, 0)
    ti.data_move(sc, gs, 0, 1, 1, 0, 0)
    ti.data_move(c, ub, 0, 2, 1, 0, 0)            # UB -> L0C: 2 fractals
    ti.data_move(ci, ubi, 0, 1, 1, 0, 0)
    ti.data_move(uh, c, 0, 1, 1, 0, 0, 2)         # ConvReluMode 2: f32 -> f16 + relu, first fractal
    ti.data_move(o1, uh, 0, 1, 16, 0, 0)
    ti.tensor_mov(uh, ci, 'm', 1, 1, 0, 0, deqscale=sc, relu=True)
    ti.data_move(o2, uh, 0, 1, 16, 0, 0)
    s = ti.Scalar("float16", init_value=0.5)
    ti.tensor_mov(uh, ci, 'v', 4, 4, 0, 0, deqscale=s)      # rows mode: 4 x 4 rows = 16 rows
    ti.data_move(o3, uh, 0, 1, 16, 0, 0)
    ti.BuildCCE("moves", [g, gi, gs], [o1, o2, o3])
    rng = np.random.default_rng(3)
    x = rng.standard_normal(512).astype(np.float32) * 100
    xi = rng.integers(-1000, 1000, 256).astype(np.int32)
    scales = rng.uniform(-1, 1, 16).astype(np.float16)
    r1, r2, r3 = run(ti, {"g": x, "gi": xi, "gs": scales})
    np.testing.assert_array_equal(r1, np.maximum(x[:256].astype(np.float16), np.float16(0)))
    exp2 = (xi.reshape(16, 16).astype(np.float64) * scales.astype(np.float64)).astype(np.float16).reshape(-1)
    np.testing.assert_array_equal(r2, np.where(exp2 > 0, exp2, np.float16(0)))
    np.testing.assert_array_equal(r3, (xi * 0.5).astype(np.float16))


def test_l0c_ub_same_type_mode_moves_raw_l0c_elements_into_another_dtype():
    # DATA_MOVE_L0C_MODE_SELECTS_CONVERSION: ConvReluMode 0 / 5 never convert; a float16 UB tensor receives
    # the float32 L0C bytes (CANN basic_lstm_cell_weight_grad's float32 bias path); no mode: dtype pair converts
    ti = tik.Tik()
    g = ti.Tensor("float32", (256,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (256,), name="ub", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
    uh = ti.Tensor("float16", (512,), name="uh", scope=tik.scope_ubuf)
    o0 = ti.Tensor("float16", (512,), name="o0", scope=tik.scope_gm)
    o5 = ti.Tensor("float16", (512,), name="o5", scope=tik.scope_gm)
    oc = ti.Tensor("float16", (256,), name="oc", scope=tik.scope_gm)
    ti.data_move(ub, g, 0, 1, 32, 0, 0)
    ti.data_move(c, ub, 0, 1, 1, 0, 0)
    ti.data_move(uh, c, 0, 1, 1, 0, 0, 0)          # plain: 1024 raw bytes
    ti.data_move(o0, uh, 0, 1, 32, 0, 0)
    ti.data_move(uh, c, 0, 1, 1, 0, 0, 5)          # relu in float32, raw bytes
    ti.data_move(o5, uh, 0, 1, 32, 0, 0)
    ti.data_move(uh, c, 0, 1, 1, 0, 0)             # no mode: f32 -> f16 by the dtype pair
    ti.data_move(oc, uh, 0, 1, 16, 0, 0)
    ti.BuildCCE("raw", [g], [o0, o5, oc])
    x = (np.random.default_rng(5).standard_normal(256) * 1000).astype(np.float32)
    r0, r5, rc = run(ti, {"g": x})
    np.testing.assert_array_equal(np.asarray(r0).view(np.float32), x)
    np.testing.assert_array_equal(np.asarray(r5).view(np.float32), np.maximum(x, np.float32(0)))
    np.testing.assert_array_equal(rc, x.astype(np.float16))


def test_l0c_ub_same_type_mode_into_small_other_dtype_tensor_overflows():
    ti = tik.Tik()
    c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
    uh = ti.Tensor("float16", (256,), name="uh", scope=tik.scope_ubuf)   # 512 B: half a float32 fractal
    with raises_tik(OutOfBounds, match="tensor overflow"):
        ti.data_move(uh, c, 0, 1, 1, 0, 0, 0)


def test_l0c_move_errors():
    ti = tik.Tik()
    ub = ti.Tensor("float32", (512,), name="ub", scope=tik.scope_ubuf)
    uh = ti.Tensor("float16", (512,), name="uh", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (512,), name="c", scope=tik.scope_cc)
    ci = ti.Tensor("int32", (256,), name="ci", scope=tik.scope_cc)
    l1 = ti.Tensor("float32", (512,), name="l1", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="ConvReluMode 9"):
        ti.data_move(uh, c, 0, 1, 1, 0, 0, 9)
    with raises_tik(IllegalOperand, match="ConvReluMode converts f32 -> f16, but src/dst are f32 -> f32"):
        ti.data_move(ub, c, 0, 1, 1, 0, 0, 1)
    with raises_tik(IllegalOperand, match="needs a deqscale"):
        ti.data_move(uh, ci, 0, 1, 1, 0, 0, 3)
    with raises_tik(IllegalOperand, match="int32 -> float16 needs deqscale"):
        ti.tensor_mov(uh, ci, 'm', 1, 1, 0, 0)
    with raises_tik(UnsupportedOp, match="uint64 deq8/deq16"):
        ti.tensor_mov(uh, ci, 'm', 1, 1, 0, 0, deqscale=3)
    with raises_tik(IllegalOperand, match="block_mode 'x'"):
        ti.tensor_mov(uh, ci, 'x', 1, 1, 0, 0, deqscale=1.0)
    with raises_tik(OutOfBounds, match="tensor overflow"):
        ti.data_move(ub, c, 0, 1, 3, 0, 0)
    with raises_tik(UnsupportedOp, match="L0C -> L1 \\(FIXPIPE"):
        ti.data_move(l1, c, 0, 1, 1, 0, 0)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    ub = ti.Tensor("float32", (512,), name="ub", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (512,), name="c", scope=tik.scope_cc)
    with raises_tik(UnsupportedOp, match="no L0C <-> UB path on this chip"):
        ti.data_move(ub, c, 0, 1, 1, 0, 0)
    # the other direction (CANN attention_qkv_grad_x seeds L0C from UB): the hint names what replaces it
    with raises_tik(UnsupportedOp, match="UB -> L0C does not exist.*initialise L0C with mmad.*bias_tensor"):
        ti.data_move(c, ub, 0, 1, 1, 0, 0)
    with raises_tik(UnsupportedOp, match="L0C -> UB does not exist.*fixpipe"):
        ti.data_move(ub, c, 0, 1, 1, 0, 0)


def test_l0c_to_l1_on_910b_and_broadcast_ub_to_l0c():
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (256,), name="a_gm", scope=tik.scope_gm)
    a1 = ti.Tensor("float16", (256,), name="a1", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (2, 16, 16), name="c", scope=tik.scope_cbuf_out)
    l1 = ti.Tensor("float32", (2 * 256 + 64,), name="l1o", scope=tik.scope_cbuf)
    out = ti.Tensor("float32", (2 * 256 + 64,), name="out", scope=tik.scope_gm)
    ti.data_move(a1, a_gm, 0, 1, 16, 0, 0)
    b_gm = ti.Tensor("float16", (512,), name="b_gm", scope=tik.scope_gm)
    b1 = ti.Tensor("float16", (512,), name="b1", scope=tik.scope_cbuf)
    ti.data_move(b1, b_gm, 0, 1, 32, 0, 0)
    ti.matmul(c, a1, b1, 16, 16, 32)
    ti.data_move(l1, c, 0, 2, 1, 0, 2)             # 2 bursts of 1 fractal, 2 x 32 B gap in L1
    ti.data_move(out, l1, 0, 1, (2 * 256 + 64) * 4 // 32, 0, 0)
    ti.BuildCCE("l0c_l1", [a_gm, b_gm], [out])
    rng = np.random.default_rng(0)
    A = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    B = rng.integers(-3, 4, (16, 32)).astype(np.float16)
    res, = run(ti, {"a_gm": nz(A, 16, 16).reshape(-1), "b_gm": nz(B.T.copy(), 32, 16).reshape(-1)})
    C = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_array_equal(res[:256].reshape(16, 16), C[:, :16])
    np.testing.assert_array_equal(res[256 + 16:512 + 16].reshape(16, 16), C[:, 16:])
    # broadcast_ub_to_l0c on a v100 chip
    set_current_compile_soc_info("Ascend310")
    ti = tik.Tik()
    g = ti.Tensor("float32", (64,), name="g", scope=tik.scope_gm)
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (4 * 256,), name="c", scope=tik.scope_cc)
    u2 = ti.Tensor("float32", (4 * 256,), name="u2", scope=tik.scope_ubuf)
    out = ti.Tensor("float32", (4 * 256,), name="out", scope=tik.scope_gm)
    ti.data_move(ub, g, 0, 1, 8, 0, 0)
    ti.broadcast_ub_to_l0c(c, ub, 2, 2, 0, 0)    # rows 0..3 (16 elements each) -> fractals 0..3
    ti.data_move(u2, c, 0, 1, 4, 0, 0)
    ti.data_move(out, u2, 0, 1, 128, 0, 0)
    ti.BuildCCE("bcast", [g], [out])
    x = np.arange(64, dtype=np.float32)
    res, = run(ti, {"g": x})
    np.testing.assert_array_equal(res.reshape(4, 16, 16), np.broadcast_to(x.reshape(4, 1, 16), (4, 16, 16)))
    with raises_tik(IllegalOperand, match="takes \\(src_gap, dst_gap\\)"):
        ti.broadcast_ub_to_l0c(c, ub, 2, 2, 0)
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
    c = ti.Tensor("float32", (256,), name="c", scope=tik.scope_cc)
    with raises_tik(UnsupportedOp, match="broadcast_ub_to_l0c"):
        ti.broadcast_ub_to_l0c(c, ub, 1, 1, 0, 0)


def test_broadcast_ub_to_l0c_takes_its_gaps_by_position_or_by_their_appendix_c_names():
    """§7.6 gives ``(dst, src, nburst, burst_len, *strides)``, Appendix C ``(..., src_gap, dst_gap)``: both
    spellings run the same; a gap given twice, or a missing one, is an error at the line."""
    set_current_compile_soc_info("Ascend310")
    x = np.arange(64, dtype=np.float32)
    results = []
    for form in ("pos", "kw", "mixed"):
        ti = tik.Tik()
        g = ti.Tensor("float32", (64,), name="g", scope=tik.scope_gm)
        ub = ti.Tensor("float32", (64,), name="ub", scope=tik.scope_ubuf)
        c = ti.Tensor("float32", (6 * 256,), name="c", scope=tik.scope_cc)
        u2 = ti.Tensor("float32", (6 * 256,), name="u2", scope=tik.scope_ubuf)
        out = ti.Tensor("float32", (6 * 256,), name="out", scope=tik.scope_gm)
        ti.data_move(ub, g, 0, 1, 8, 0, 0)
        ti.vector_dup(64, u2, -1.0, 24, 1, 8)
        ti.data_move(c, u2, 0, 1, 6, 0, 0)
        if form == "pos":
            ti.broadcast_ub_to_l0c(c, ub, 2, 1, 2, 1)
        elif form == "kw":
            ti.broadcast_ub_to_l0c(c, ub, nburst=2, burst_len=1, src_gap=2, dst_gap=1)
        else:
            ti.broadcast_ub_to_l0c(c, ub, 2, 1, 2, dst_gap=1)
        ti.data_move(u2, c, 0, 1, 6, 0, 0)
        ti.data_move(out, u2, 0, 1, 6 * 256 * 4 // 32, 0, 0)
        ti.BuildCCE("bcast_kw", [g], [out])
        results.append(run(ti, {"g": x})[0].reshape(6, 16, 16))
        if form == "mixed":
            with raises_tik(IllegalOperand, match="got src_gap both by position and by keyword"):
                ti.broadcast_ub_to_l0c(c, ub, 2, 1, 2, src_gap=2)
            with raises_tik(IllegalOperand, match=r"needs dst_gap too \(got src_gap by keyword\)"):
                ti.broadcast_ub_to_l0c(c, ub, 2, 1, src_gap=2)
            with raises_tik(IllegalOperand, match=r"needs src_gap too \(got dst_gap by keyword\)"):
                ti.broadcast_ub_to_l0c(c, ub, 2, 1, dst_gap=0)
            with raises_tik(IllegalOperand, match=r"takes \(src_gap, dst_gap\) after burst_len, got 1 value"):
                ti.broadcast_ub_to_l0c(c, ub, 2, 1, 2)
    expect = np.full((6, 16, 16), -1.0, np.float32)
    expect[0] = x[0:16]          # burst 0: row 0 (64 B) -> fractal 0; then 2 blocks (64 B, row 1) skipped in UB
    expect[2] = x[32:48]         # burst 1: row 2 -> fractal 2 (after one fractal of dst gap)
    for r in results:
        np.testing.assert_array_equal(r, expect)


def test_matmul_in_a_double_buffered_loop_plans_tiles_for_each_copy():
    """MACRO_TILES_FIT_THREAD_COPIES: a matmul whose whole A (128 x 256 f16 = all of L0A) fits L0A once, called in
    a thread_num=2 loop, is split into tiles that fit twice (its scratch L0A/L0B books a copy per buffer), as TIK's
    matmul tiling does; it was refused with CapacityExceeded (IndexSDK l2_norm_typing_int8, dim 512)."""
    m, k, n, k0 = 128, 256, 16, 16
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (2, k // k0, m, k0), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (2, k // k0, n, k0), name="b_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (2, m * n), name="out", scope=tik.scope_gm)
    with ti.for_range(0, 2, thread_num=2) as i:
        a = ti.Tensor("float16", (k // k0, m, k0), name="a", scope=tik.scope_cbuf)
        b = ti.Tensor("float16", (k // k0, n, k0), name="b", scope=tik.scope_cbuf)
        c = ti.Tensor("float32", (n // 16, m, 16), name="c", scope=tik.scope_cbuf_out)
        ub = ti.Tensor("float32", (m * n,), name="ub", scope=tik.scope_ubuf)
        ti.data_move(a, a_gm[i, 0, 0, 0], 0, 1, k * m * 2 // 32, 0, 0)
        ti.data_move(b, b_gm[i, 0, 0, 0], 0, 1, k * n * 2 // 32, 0, 0)
        ti.matmul(c, a, b, m, k, n)
        ti.data_move(ub, c, 0, 1, m * n // 256, 0, 0)
        ti.data_move(out[i, 0], ub, 0, 1, m * n * 4 // 32, 0, 0)
    ti.BuildCCE("mm_db", [a_gm, b_gm], [out])
    rng = np.random.default_rng(17)
    A = rng.integers(-4, 5, (2, m, k)).astype(np.float16)
    B = rng.integers(-4, 5, (2, k, n)).astype(np.float16)
    feed = {"a_gm": np.stack([nz(A[j], m, k0) for j in range(2)]),
            "b_gm": np.stack([nz(B[j].T.copy(), n, k0) for j in range(2)])}
    res, = run(ti, feed)
    for j in range(2):
        C = l0c_to_mat(res[j].reshape(n // 16, m, 16), m, n)
        np.testing.assert_array_equal(C, A[j].astype(np.float64) @ B[j].astype(np.float64))


@pytest.mark.parametrize("n", [32, 300])
def test_matmul_with_bias_in_a_double_buffered_loop_halves_its_bias_table(n):
    """MACRO_TILES_FIT_THREAD_COPIES also for the bias table: in a thread_num=2 loop the matmul's scratch bias
    table (each buffer books a copy) takes half of the 1024-byte table and its n tiles at most 128 columns (was:
    CapacityExceeded on 'cube_bias', 2 x 1024 B, a tensor the user never declared)."""
    set_current_compile_soc_info("Ascend910B1")
    m, k, k0 = 16, 128, 16
    N = -(-n // 16) * 16
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (2, k // k0, m, k0), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (2, k // k0, N, k0), name="b_gm", scope=tik.scope_gm)
    bias_gm = ti.Tensor("float32", (N,), name="bias_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (2, m * N), name="out", scope=tik.scope_gm)
    with ti.for_range(0, 2, thread_num=2) as i:
        a = ti.Tensor("float16", (k // k0, m, k0), name="a", scope=tik.scope_cbuf)
        b = ti.Tensor("float16", (k // k0, N, k0), name="b", scope=tik.scope_cbuf)
        bias = ti.Tensor("float32", (N,), name="bias", scope=tik.scope_cbuf)
        c = ti.Tensor("float32", (N // 16, m, 16), name="c", scope=tik.scope_cbuf_out)
        ti.data_move(a, a_gm[i, 0, 0, 0], 0, 1, k * m * 2 // 32, 0, 0)
        ti.data_move(b, b_gm[i, 0, 0, 0], 0, 1, k * N * 2 // 32, 0, 0)
        ti.data_move(bias, bias_gm, 0, 1, N * 4 // 32, 0, 0)
        ti.matmul(c, a, b, m, k, n, bias=bias)
        ti.fixpipe(out[i, 0], c, N // 16, m * 16 * 4 // 32, 0, 0)
    ti.BuildCCE("mm_bias_db", [a_gm, b_gm, bias_gm], [out])
    rng = np.random.default_rng(3)
    A = rng.integers(-4, 5, (2, m, k)).astype(np.float16)
    B = rng.integers(-4, 5, (2, k, n)).astype(np.float16)
    bv = rng.integers(-9, 10, N).astype(np.float32)
    feed = {"a_gm": np.stack([nz(A[j], m, k0) for j in range(2)]),
            "b_gm": np.stack([nz(B[j].T.copy(), N, k0) for j in range(2)]), "bias_gm": bv}
    res, = run(ti, feed)
    for j in range(2):
        C = l0c_to_mat(res[j].reshape(N // 16, m, 16), m, n)
        np.testing.assert_array_equal(C, A[j].astype(np.float64) @ B[j].astype(np.float64) + bv[:n])


def test_mmad_bias_tensor_in_a_double_buffered_loop():
    """mmad's bias-table scratch in a thread_num=2 loop holds the round16(n) values it reads (was: 2 x 1024 B
    CapacityExceeded on 'mmad_bias_table')."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (2, 256), name="a_gm", scope=tik.scope_gm)
    bias_gm = ti.Tensor("float32", (16,), name="bias_gm", scope=tik.scope_gm)
    out = ti.Tensor("float32", (2, 256), name="out", scope=tik.scope_gm)
    with ti.for_range(0, 2, thread_num=2) as i:
        a1 = ti.Tensor("float16", (256,), name="a1", scope=tik.scope_cbuf)
        bias = ti.Tensor("float32", (16,), name="bias", scope=tik.scope_cbuf)
        l0a = ti.Tensor("float16", (256,), name="l0a", scope=tik.scope_ca)
        l0b = ti.Tensor("float16", (256,), name="l0b", scope=tik.scope_cb)
        cc = ti.Tensor("float32", (256,), name="cc", scope=tik.scope_cc)
        ti.data_move(a1, a_gm[i, 0], 0, 1, 16, 0, 0)
        ti.data_move(bias, bias_gm, 0, 1, 2, 0, 0)
        ti.load2dv2(l0a, a1, 0, 1, 0, 1, 0)
        ti.load2dv2(l0b, a1, 0, 1, 0, 1, 0)
        ti.mmad(cc, l0a, l0b, 16, 16, 16, 1, bias_tensor=bias)
        ti.fixpipe(out[i, 0], cc, 1, 32, 0, 0)
    ti.BuildCCE("mmad_bias_db", [a_gm, bias_gm], [out])
    x = np.random.default_rng(1).integers(-3, 4, (2, 16, 16)).astype(np.float16)
    bv = np.arange(16, dtype=np.float32)
    res, = run(ti, {"a_gm": x.reshape(2, -1), "bias_gm": bv})
    for j in range(2):
        np.testing.assert_array_equal(res[j].reshape(16, 16),
                                      x[j].astype(np.float64) @ x[j].T.astype(np.float64) + bv)
