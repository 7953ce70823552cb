"""TIK 1.5 ``h_cmpv`` / ``h_sel`` against a numpy reference of the published element-wise contract
(``mask = src0 <cmp> src1``, ``dst = src0 where mask else src1``, one source may be a scalar), on
whole tensors, strided 2-D slices and run-time lengths (dynamic == static == numpy, nothing past
``n`` touched); MASK_LAYOUT (the vcmpv bit layout) where a kernel can see it; one failing kernel per
error."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pto_core.errors import IllegalOperand, Misaligned, UnsupportedOp
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info

from .helpers import raises_tik
from .test_vector_h_dynamic import SENTINEL, _check
from .vec_helpers import TIK_DTYPES as NAME, vec_kernel

CHIP = "Ascend310P3"
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = {"LT": np.less, "GT": np.greater, "GE": np.greater_equal, "EQ": np.equal, "NE": np.not_equal,
       "LE": np.less_equal}
SPECIAL = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]


def _values(rng, dt, n):
    """Small integers (many ties) with signed zeros, infinities and NaNs mixed in."""
    v = rng.integers(-3, 4, n).astype(dt)
    pick = rng.random(n) < 0.15
    v[pick] = rng.choice(np.array(SPECIAL, dt), int(pick.sum()))
    return v


def _ref_sel(mask, a, b):
    return np.where(mask, a, b)


@SETTINGS
@given(dt=st.sampled_from([np.float16, np.float32]),
       n=st.one_of(st.sampled_from([16, 64, 128, 144, 256, 1040]), st.integers(1, 70).map(lambda k: 16 * k)),
       mode=st.sampled_from(sorted(OPS)), form=st.sampled_from(["tt", "ts", "st"]), seed=st.integers(0, 2 ** 16))
def test_cmpv_then_sel_matches_numpy(dt, n, mode, form, seed):
    """Tensor-tensor, tensor-scalar and scalar-tensor compares, each selected three ways."""
    rng = np.random.default_rng(seed)
    a, b = _values(rng, dt, n), _values(rng, dt, n)
    x = float(rng.choice([-1.0, 0.0, 2.0, np.inf]))
    lhs, rhs = {"tt": (a, b), "ts": (a, x), "st": (x, b)}[form]
    mask = OPS[mode](np.asarray(lhs, dt), np.asarray(rhs, dt))
    z = np.zeros(n, dt)

    def body(ti, ub):
        m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
        s0 = {"tt": ub["a"], "ts": ub["a"], "st": x}[form]
        s1 = {"tt": ub["b"], "ts": x, "st": ub["b"]}[form]
        ti.h_cmpv(m, s0, s1, mode)
        ti.h_sel(ub["o1"], ub["a"], ub["b"], m)
        ti.h_sel(ub["o2"], ub["a"], -5.0, m)
        ti.h_sel(ub["o3"], 7.0, ub["b"], m)
    out = vec_kernel({"a": a, "b": b, "o1": z, "o2": z, "o3": z}, body, chip=CHIP)
    np.testing.assert_array_equal(out["o1"], _ref_sel(mask, a, b))
    np.testing.assert_array_equal(out["o2"], _ref_sel(mask, a, dt(-5)))
    np.testing.assert_array_equal(out["o3"], _ref_sel(mask, dt(7), b))


def test_scalar_operands_as_scalars_and_lowercase_mode():
    """Scalar registers as the scalar source (rotated_feature_align_grad), a lower-case mode."""
    n = 200 * 16
    a = np.arange(n, dtype=np.float32) % 7 - 3

    def body(ti, ub):
        m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
        lim = ti.Scalar("float32", init_value=1.0)
        ti.h_cmpv(m, ub["a"], lim, "ge")
        ti.h_sel(ub["o"], lim, ub["a"], m)              # clamp from above
    out = vec_kernel({"a": a, "o": np.zeros(n, np.float32)}, body, chip="Ascend910B1")["o"]
    np.testing.assert_array_equal(out, np.minimum(a, 1))


def test_strided_rows_and_in_place_select():
    M, W, N = 3, 512, 300
    rng = np.random.default_rng(3)
    a, b = _values(rng, np.float32, M * W), _values(rng, np.float32, M * W)

    def body(ti, ub):
        m = ti.Tensor("bool", (M, W), name="m", scope=tik.scope_ubuf)
        A, B = ub["a"].reshape((M, W)), ub["b"].reshape((M, W))
        ti.h_cmpv(m[0:M, 0:N], A[0:M, 0:N], B[0:M, 0:N], "GT")
        ti.h_sel(A[0:M, 0:N], A[0:M, 0:N], B[0:M, 0:N], m[0:M, 0:N])
    out = vec_kernel({"a": a, "b": b}, body, chip=CHIP)["a"].reshape(M, W)
    want = a.reshape(M, W).copy()
    bb = b.reshape(M, W)
    want[:, :N] = np.where(want[:, :N] > bb[:, :N], want[:, :N], bb[:, :N])
    np.testing.assert_array_equal(out, want)


def test_mask_layout_is_the_vcmpv_bit_layout():
    """MASK_LAYOUT: a kernel that reads the bool tensor's bytes sees vcmpv's bits, LSB first."""
    n = 128 * 3 + 48
    rng = np.random.default_rng(5)
    a, b = _values(rng, np.float16, n), _values(rng, np.float16, n)

    def body(ti, ub):
        m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
        ti.h_cmpv(m, ub["a"], ub["b"], "LT")
        ti.vec_cmpv_lt(ub["ref"], ub["a"], ub["b"], 3, 8, 8)
        u = m.reinterpret_cast_to("uint8")
        with ti.for_range(0, n // 8) as i:
            ub["got"][i].set_as(u[i])
    out = vec_kernel({"a": a, "b": b, "ref": np.zeros(64, np.uint8), "got": np.zeros(64, np.uint8)}, body,
                     chip=CHIP)
    want = np.packbits(a < b, bitorder="little")
    np.testing.assert_array_equal(out["got"][:n // 8], want)
    np.testing.assert_array_equal(out["ref"][:48], want[:48])


def test_lowering_shape():
    """One vcmpv and one vsel for whole repeats; a tail adds vcmp + CMPMASK store and word moves."""
    def ops(n):
        def body(ti, ub):
            m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
            ti.h_cmpv(m, ub["a"], ub["b"], "EQ")
            ti.h_sel(ub["a"], ub["a"], ub["b"], m)
        ti = vec_kernel({"a": np.zeros(n, np.float16), "b": np.zeros(n, np.float16)}, body, chip=CHIP,
                        build_only=True)
        asm = ti.program.to_asm()
        return [k for k in ("vcmpv_eq", "vcmp_eq", "mov_cmpmask_to_tensor", "vsel_bits") if f"ub.{k}(" in asm
                or f"ub.{k} " in asm]
    assert ops(1024) == ["vcmpv_eq", "vsel_bits"]
    assert ops(1040) == ["vcmpv_eq", "vcmp_eq", "mov_cmpmask_to_tensor", "vsel_bits"]


# ----------------------------------------------------------------------------- run-time lengths
N = 1040
A32 = np.random.default_rng(11).integers(-3, 4, N).astype(np.float32)
B32 = np.random.default_rng(12).integers(-3, 4, N).astype(np.float32)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.one_of(st.sampled_from([0, 1, 63, 64, 65, 128, 1024, N]), st.integers(0, N)))
def test_run_time_length(n):
    """``ub[0:n]`` with a Scalar ``n`` (scatter_max_with_argmax's Scalar-shaped tensors)."""
    def body(ti, ub, n):
        m = ti.Tensor("bool", (N,), name="m", scope=tik.scope_ubuf)
        ti.h_cmpv(m[0:n], ub["a"][0:n], ub["b"][0:n], "GT")
        ti.h_sel(ub["o"][0:n], ub["a"][0:n], ub["b"][0:n], m[0:n])
        ti.h_cmpv(m[0:n], ub["a"][0:n], 0.0, "LE")
        ti.h_sel(ub["a"][0:n], 0.0, ub["a"][0:n], m[0:n])

    def want(n):
        o = np.full(N, SENTINEL, np.float32)
        o[:n] = np.maximum(A32, B32)[:n]
        a = A32.copy()
        a[:n] = np.maximum(A32[:n], 0)
        return {"o": o, "a": a}
    _check({"a": A32, "b": B32, "o": np.full(N, SENTINEL, np.float32)}, body, n, want)


# ----------------------------------------------------------------------------- errors
def _err(body, cls, match, chip=CHIP, n=256):
    with raises_tik(cls, match=match):
        vec_kernel({"a": np.zeros(n, np.float16), "b": np.zeros(n, np.float16),
                    "i": np.zeros(n, np.int32)}, body, chip=chip, build_only=True)


def _mask(ti, shape=(256,), dtype="bool"):
    return ti.Tensor(dtype, shape, name="m", scope=tik.scope_ubuf)


@pytest.mark.parametrize("body, cls, match", [
    (lambda ti, ub: ti.h_cmpv(_mask(ti, dtype="uint8"), ub["a"], ub["b"], "LT"), IllegalOperand,
     "mask_tensor should be a bool tensor"),
    (lambda ti, ub: ti.h_cmpv(_mask(ti, (128,)), ub["a"], ub["b"], "LT"), IllegalOperand, "same shape"),
    (lambda ti, ub: ti.h_cmpv(_mask(ti), ub["a"], ub["b"], "less"), IllegalOperand, "cmp_mode should be"),
    (lambda ti, ub: ti.h_cmpv(_mask(ti), 1.0, 2.0, "LT"), IllegalOperand, "must be a tensor"),
    (lambda ti, ub: ti.h_cmpv(_mask(ti), ub["a"], 1, "LT"), IllegalOperand, "should be float"),
    (lambda ti, ub: ti.h_sel(ub["a"], ub["a"], ub["b"], ub["b"]), IllegalOperand, "should be a bool tensor"),
    (lambda ti, ub: ti.h_sel(ub["a"], 1.0, 2.0, _mask(ti)), IllegalOperand, "must be a tensor"),
    (lambda ti, ub: ti.h_sel(ub["i"], ub["i"], ub["i"], _mask(ti)), UnsupportedOp, "does not support int32"),
    (lambda ti, ub: ti.h_sel(ub["a"][0:128], ub["a"][0:128], ub["b"][0:128], _mask(ti)[128:256]), Misaligned,
     "multiple of 256"),
])
def test_errors(body, cls, match):
    _err(body, cls, match)


@pytest.mark.parametrize("chip, dt", [("Ascend310", np.float16), ("Ascend910A", np.float16),
                                      ("Ascend910A", np.float32)])
def test_h_sel_on_chips_whose_vsel_has_mode_0_only(chip, dt):
    """k463: h_sel was refused on Ascend310/910 ("vsel modes 1/2 ... this chip has vsel mode 0 only"), though
    CANN 8.1 TIK admits it there (check_sel_ops_params: the tik.h_sel row, Ascend310 float16, Ascend910
    float16/float32). Now SEL_MODE0_ONLY: one vec_sel mode 0 per repeat on that repeat's mask bits -- every
    form, full repeats, a tail, strided 2-D rows, in place; same result as numpy."""
    rng = np.random.default_rng(41)
    n = 128 * 3 + 48                                    # f16: 3 repeats + 48; f32: 6 repeats + 48
    a, b = _values(rng, dt, n), _values(rng, dt, n)
    M, W, C = 3, 512, 300
    c, e = _values(rng, dt, M * W), _values(rng, dt, M * W)

    def body(ti, ub):
        m = ti.Tensor("bool", (n,), name="m", scope=tik.scope_ubuf)
        ti.h_cmpv(m, ub["a"], ub["b"], "LT")
        ti.h_sel(ub["o1"], ub["a"], ub["b"], m)
        ti.h_sel(ub["o2"], ub["a"], -5.0, m)
        ti.h_sel(ub["o3"], ti.Scalar(NAME[np.dtype(dt)], init_value=7.0), ub["b"], m)
        m2 = ti.Tensor("bool", (M, W), name="m2", scope=tik.scope_ubuf)
        A, B = ub["c"].reshape((M, W)), ub["e"].reshape((M, W))
        ti.h_cmpv(m2[0:M, 0:C], A[0:M, 0:C], 0.0, "GE")
        ti.h_sel(A[0:M, 0:C], A[0:M, 0:C], B[0:M, 0:C], m2[0:M, 0:C])
    z = np.full(n, 3, dt)
    out = vec_kernel({"a": a, "b": b, "o1": z, "o2": z, "o3": z, "c": c, "e": e}, body, chip=chip)
    mask = a < b
    np.testing.assert_array_equal(out["o1"], np.where(mask, a, b))
    np.testing.assert_array_equal(out["o2"], np.where(mask, a, dt(-5)))
    np.testing.assert_array_equal(out["o3"], np.where(mask, dt(7), b))
    want = c.reshape(M, W).copy()
    ee = e.reshape(M, W)
    want[:, :C] = np.where(want[:, :C] >= 0, want[:, :C], ee[:, :C])
    assert out["c"].reshape(M, W).tobytes() == want.tobytes()


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 200, N])
def test_h_sel_mode_0_only_with_a_run_time_length(n):
    """SEL_MODE0_ONLY with ``ub[0:n]``, ``n`` a Scalar fed at run time (a for_range over the repeats)."""
    def body(ti, ub):
        k = ub["n"]
        m = ti.Tensor("bool", (N,), name="m", scope=tik.scope_ubuf)
        ti.h_cmpv(m[0:k], ub["a"][0:k], ub["b"][0:k], "GT")
        ti.h_sel(ub["o"][0:k], ub["a"][0:k], ub["b"][0:k], m[0:k])
        ti.h_sel(ub["p"][0:k], ub["a"][0:k], 0.5, m[0:k])
    out = vec_kernel({"a": A32, "b": B32, "o": np.full(N, SENTINEL, np.float32),
                      "p": np.full(N, SENTINEL, np.float32)}, body, chip="Ascend910A", scalars={"n": ("int32", n)})
    o, p = np.full(N, SENTINEL, np.float32), np.full(N, SENTINEL, np.float32)
    o[:n] = np.maximum(A32, B32)[:n]
    p[:n] = np.where(A32 > B32, A32, np.float32(0.5))[:n]
    np.testing.assert_array_equal(out["o"], o)
    np.testing.assert_array_equal(out["p"], p)


def test_h_cmpv_h_sel_follow_tik_s_own_dtype_rows():
    """TIK checks h_cmpv / h_sel against its tik_api_map rows (tik.h_cmpv / tik.h_sel: float16/float32; Ascend310,
    SD3403, Hi3796CV300 float16 only), not the vcmpv / vsel rows: Ascend310B1 int8 (vcmpv/vsel have it) was
    accepted, and Ascend310 float32 h_sel is refused (k463)."""
    def bufs(dt):
        return {"a": np.zeros(256, dt), "b": np.zeros(256, dt)}
    for chip, dt, call in (("Ascend310B1", np.int8, lambda ti, ub: ti.h_cmpv(_mask(ti), ub["a"], ub["b"], "LT")),
                           ("Ascend310B1", np.uint8, lambda ti, ub: ti.h_sel(ub["a"], ub["a"], 1, _mask(ti))),
                           ("SD3403", np.float32, lambda ti, ub: ti.h_cmpv(_mask(ti), ub["a"], 1.0, "GT")),
                           ("Ascend310", np.float32, lambda ti, ub: ti.h_sel(ub["a"], ub["a"], ub["b"], _mask(ti)))):
        name = np.dtype(dt).name
        with raises_tik(UnsupportedOp, match=f"(does not support|with) {name} (is not supported )?on {chip}"):
            vec_kernel(bufs(dt), call, chip=chip, build_only=True)


def test_a_run_time_mask_row_start_names_the_start_not_its_remainder():
    """k445: a mask_tensor row starting at a run-time element off the 32-byte bit boundary said "... starts at
    element <run-time> modulo 256 (MASK_LAYOUT) = 3 is outside [0, 0]"; it names the start element and the rule."""
    set_current_compile_soc_info("Ascend910B1")
    ti = tik.Tik()
    x = ti.Tensor("float16", (512,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (512,), name="y", scope=tik.scope_gm)
    a = ti.Tensor("float16", (512,), name="a", scope=tik.scope_ubuf)
    m = ti.Tensor("bool", (512,), name="m", scope=tik.scope_ubuf)
    ti.data_move(a, x, 0, 1, 32, 0, 0)
    k = ti.Scalar("int32", name="k", init_value=3)
    ti.h_cmpv(m[k:k + 64], a[0:64], a[64:128], "GT")
    ti.data_move(y, a, 0, 1, 32, 0, 0)
    ti.BuildCCE("mask_row_start", [x], [y])
    with raises_tik(IllegalOperand, match=r"operand mask_tensor: tik.h_cmpv: the first element of a row of "
                                          r"mask_tensor = 3 is not a multiple of 256 \(MASK_LAYOUT"):
        ti.tikdb.start_debug({"x": np.ones(512, np.float16)}, interactive=False)
