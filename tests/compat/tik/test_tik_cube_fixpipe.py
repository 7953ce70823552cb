"""TIK ``fixpipe``: the lowering (FIXPIPE ops or the vector composition) against the independent
legacy reference model `tbe_compat.legacy_fixpipe` on the same L0C contents, bit for bit; the
lowering choice per call; the FixpipeCall records; every documented restriction."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from pto_core.errors import IllegalOperand, OutOfBounds, UnknownName, UnsupportedOp
from tbe_compat.legacy_fixpipe import LegacyTensor, legacy_fixpipe

from .helpers import raises_tik, run

NP = {"float32": np.float32, "int32": np.int32, "float16": np.float16}
UINT = {2: np.uint16, 4: np.uint32}


def _special_f32(rng, n):
    x = (rng.standard_normal(n) * rng.choice([1.0, 1e3, 1e5], n)).astype(np.float32)
    k = rng.integers(0, n, max(1, n // 10))
    x[k] = rng.choice(np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 7e4, -7e4, 65504.0, 65520.0, 1e-8,
                                -3e38, 3.4e38], np.float32), k.size)
    return x


def _fixpipe_kernel(*, src, dst_dt, cb, burst_len, dst_stride, src_stride, ext, l0c_data, dst_size, dst_off,
                    bias=None, ewa=None, scale=None):
    """A kernel: GM -> UB -> L0C (arbitrary bits), bias/ewa/scale GM -> L1, then the fixpipe into GM."""
    ti = tik.Tik()
    n = l0c_data.size
    feed = {"l0c_in": l0c_data}
    g = ti.Tensor(src, (n,), name="l0c_in", scope=tik.scope_gm)
    ub = ti.Tensor(src, (n,), name="ub", scope=tik.scope_ubuf)
    l0c = ti.Tensor(src, (n,), name="l0c", scope=tik.scope_cbuf_out)
    esize = np.dtype(NP[src]).itemsize
    ti.data_move(ub, g, 0, 1, n * esize // 32, 0, 0)
    ti.data_move(l0c, ub, 0, 1, n // 256, 0, 0)
    inputs = [g]
    params = dict(ext)
    for key, arr in (("bias", bias), ("element-wise-add", ewa)):
        if arr is not None:
            name = key.replace("-", "_")
            gt = ti.Tensor(src, (arr.size,), name=name + "_gm", scope=tik.scope_gm)
            lt = ti.Tensor(src, (arr.size,), name=name, scope=tik.scope_cbuf)
            ti.data_move(lt, gt, 0, 1, -(-arr.size * esize // 32), 0, 0)
            feed[name + "_gm"] = arr
            inputs.append(gt)
            params[key] = lt
    if scale is not None:
        kind, value = scale
        if kind == "tensor":
            gt = ti.Tensor("float16", (16,), name="deq_gm", scope=tik.scope_gm)
            lt = ti.Tensor("float16", (16,), name="deq", scope=tik.scope_cbuf)
            ti.data_move(lt, gt, 0, 1, 1, 0, 0)
            feed["deq_gm"] = value
            inputs.append(gt)
            mp = lt
        elif kind == "scalar":
            mp = ti.Scalar("float16", name="deq", init_value=float(value))
        else:
            mp = float(value)
        params["quantize_params"] = {"mode": "int322fp16", "mode_param": mp}
    dst = ti.Tensor(dst_dt, (dst_size,), name="dst", scope=tik.scope_gm)
    ti.fixpipe(dst[dst_off:] if dst_off else dst, l0c, cb, burst_len, dst_stride, src_stride, params or None)
    ti.BuildCCE(kernel_name="fixpipe_case", inputs=inputs, outputs=[dst])
    return ti, feed


def _expected(*, src, dst_dt, cb, burst_len, dst_stride, src_stride, ext, l0c_data, dst_size, dst_off, chip,
              bias=None, ewa=None, scale=None):
    params = dict(ext)
    if bias is not None:
        params["bias"] = LegacyTensor(bias, scope="l1")
    if ewa is not None:
        params["element-wise-add"] = LegacyTensor(ewa, scope="l1")
    if scale is not None:
        kind, value = scale
        mp = LegacyTensor(value, scope="l1") if kind == "tensor" else (np.float16(value) if kind == "scalar"
                                                                          else float(value))
        params["quantize_params"] = {"mode": "int322fp16", "mode_param": mp}
    r = legacy_fixpipe(LegacyTensor(l0c_data, scope="l0c"), dst_dtype=dst_dt, cburst_num=cb, burst_len=burst_len,
                       dst_stride=dst_stride, src_stride=src_stride, extend_params=params or None, chip=chip,
                       dst_size=dst_size, dst_offset=dst_off)
    init = np.full(dst_size * np.dtype(NP[dst_dt]).itemsize, 0xFF, np.uint8).view(NP[dst_dt])
    return r.write_into(init, dst_off)


def _same(out, exp):
    """Bitwise equal, or both NaN (NaN payloads after a conversion are not specified)."""
    u = UINT[out.dtype.itemsize]
    a, b = out.reshape(-1), exp.reshape(-1)
    same = a.view(u) == b.view(u)
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[0]}: got {a[bad[0]]!r} expected {b[bad[0]]!r}"


CASES = st.fixed_dictionaries({
    "chip": st.sampled_from(["Ascend310", "Ascend910A", "Ascend310P3"]),
    "pair": st.sampled_from(["f32f32", "f32f16", "s32s32", "s32f16"]),
    "cb": st.integers(1, 3), "howo": st.integers(1, 40), "dst_stride": st.integers(0, 3),
    "src_stride": st.integers(0, 1), "dst_off": st.integers(0, 20), "add": st.sampled_from([None, "bias", "ewa"]),
    "relu": st.booleans(), "scale": st.sampled_from(["immediate", "scalar", "tensor"]),
    "seed": st.integers(0, 2 ** 31)})


@pytest.mark.filterwarnings("ignore::tbe_compat.legacy_fixpipe.ReservedArgumentWarning")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CASES)
def test_fixpipe_matches_the_legacy_model(case):
    set_current_compile_soc_info(case["chip"])
    rng = np.random.default_rng(case["seed"])
    src, dst_dt = {"f32f32": ("float32", "float32"), "f32f16": ("float32", "float16"),
                   "s32s32": ("int32", "int32"), "s32f16": ("int32", "float16")}[case["pair"]]
    cb, howo = case["cb"], case["howo"]
    rh = -(-howo // 16) * 16
    src_blk = rh * 16 + case["src_stride"] * 256
    n = -(-((cb - 1) * src_blk + rh * 16) // 256) * 256
    data = _special_f32(rng, n) if src == "float32" else rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
    if src == "int32" and rng.random() < 0.5:
        data = rng.integers(-3000, 3000, n).astype(np.int32)
    dsize = np.dtype(NP[dst_dt]).itemsize
    dst_blk = howo * 16 + case["dst_stride"] * 32 // dsize
    dst_size = case["dst_off"] + (cb - 1) * dst_blk + howo * 16 + int(rng.integers(0, 20))
    kw = dict(src=src, dst_dt=dst_dt, cb=cb, burst_len=howo * 16 * 4 // 32, dst_stride=case["dst_stride"],
              src_stride=case["src_stride"], l0c_data=data, dst_size=dst_size, dst_off=case["dst_off"], ext={})
    if case["add"] == "bias":
        kw["bias"] = (_special_f32(rng, cb * 16) if src == "float32"
                      else rng.integers(-2 ** 31, 2 ** 31, cb * 16, dtype=np.int64).astype(np.int32))
    elif case["add"] == "ewa":
        kw["ewa"] = (_special_f32(rng, cb * rh * 16) if src == "float32"
                     else rng.integers(-2 ** 31, 2 ** 31, cb * rh * 16, dtype=np.int64).astype(np.int32))
    if case["pair"] == "f32f16":
        kw["ext"] = {"quantize_params": {"mode": "fp322fp16", "mode_param": None}}
    if case["pair"] == "s32f16":
        kind = case["scale"] if not (case["add"] and case["scale"] == "tensor") else "immediate"
        values = np.array([0.125, -0.2238, 3.0, 0.0, -1e-7, 2.0 ** -20, 60000.0, -0.5], np.float16)
        if kind == "tensor":
            kw["scale"] = (kind, rng.choice(values, 16).astype(np.float16))
        else:
            kw["scale"] = (kind, float(rng.choice(values)))
    if case["relu"] and not case["add"] and not (kw.get("scale") and kw["scale"][0] != "tensor"):
        kw["ext"] = dict(kw["ext"], relu=True)
    ti, feed = _fixpipe_kernel(**kw)
    out, = run(ti, feed)
    exp = _expected(chip=case["chip"], **kw)
    _same(out, exp)
    # NaN inputs written as 0 on saturation chips are recorded ("saturation" reports): expected here
    assert [r for r in ti.tikdb.reports if r[0] != "saturation"] == []


def _mm_kernel(chip, relu=False, quant=None, cb=2, m=20, dst_stride=0):
    """f16 matmul (integer-valued data: exact) then fixpipe: the L0C contents are known exactly."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    k, n = 32, cb * 16
    M = -(-m // 16) * 16
    a_gm = ti.Tensor("float16", (2, M, 16), name="a_gm", scope=tik.scope_gm)
    b_gm = ti.Tensor("float16", (2, n, 16), name="b_gm", scope=tik.scope_gm)
    a = ti.Tensor("float16", (2, M, 16), name="a", scope=tik.scope_cbuf)
    b = ti.Tensor("float16", (2, n, 16), name="b", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (cb, M, 16), name="c", scope=tik.scope_cbuf_out)
    dst_dt = "float16" if quant else "float32"
    dsize = 2 if quant else 4
    dst = ti.Tensor(dst_dt, (cb * (m * 16 + dst_stride * 32 // dsize),), name="dst", scope=tik.scope_gm)
    ti.data_move(a, a_gm, 0, 1, 2 * M * 16 * 2 // 32, 0, 0)
    ti.data_move(b, b_gm, 0, 1, 2 * n * 16 * 2 // 32, 0, 0)
    ti.matmul(c, a, b, m, k, n)
    ext = {}
    if quant:
        ext["quantize_params"] = {"mode": "fp322fp16", "mode_param": None}
    if relu:
        ext["relu"] = True
    ti.fixpipe(dst, c, cb, m * 16 * 4 // 32, dst_stride, 0, ext or None)
    ti.BuildCCE(kernel_name="mm_fp", inputs=[a_gm, b_gm], outputs=[dst])
    rng = np.random.default_rng(1)
    A = rng.integers(-8, 8, (m, k)).astype(np.float16)
    B = rng.integers(-8, 8, (k, n)).astype(np.float16)
    ap = np.zeros((2, M, 16), np.float16)
    ap[:, :m, :] = A.reshape(m, 2, 16).transpose(1, 0, 2)
    bp = B.T.reshape(n, 2, 16).transpose(1, 0, 2).copy()
    C = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)
    l0c = np.zeros((cb, M, 16), np.float32)
    l0c[:, :m, :] = C.reshape(m, cb, 16).transpose(1, 0, 2)
    return ti, {"a_gm": ap, "b_gm": bp}, l0c, dst_dt


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310B1", "Ascend310"])
@pytest.mark.parametrize("relu,quant", [(False, False), (True, False), (False, True), (True, True)])
def test_fixpipe_chips_with_matmul_results(chip, relu, quant):
    ti, feed, l0c, dst_dt = _mm_kernel(chip, relu, quant, dst_stride=2)
    out, = run(ti, feed)
    params = {}
    if quant:
        params["quantize_params"] = {"mode": "fp322fp16", "mode_param": None}
    if relu:
        params["relu"] = True
    dsize = np.dtype(NP[dst_dt]).itemsize
    r = legacy_fixpipe(LegacyTensor(l0c, scope="l0c"), dst_dtype=dst_dt, cburst_num=2, burst_len=40, dst_stride=2,
                       src_stride=0, extend_params=params or None, chip=chip)
    exp = r.write_into(np.full(out.size * dsize, 0xFF, np.uint8).view(NP[dst_dt]))
    _same(out, exp)
    unit = ti.fixpipe_calls[0].lowering
    assert unit == ("vector" if relu and chip == "Ascend310" else "fixpipe")


# ----------------------------------------------------------------------------- lowering choice and records


def test_lowering_choice_and_records():
    ti, feed, l0c, _ = _mm_kernel("Ascend310", quant=True)
    calls = ti.fixpipe_calls
    assert len(calls) == 1
    c = calls[0]
    assert c.lowering == "fixpipe" and c.howo == 20 and c.round_howo == 32 and c.cburst_num == 2
    assert c.extend_params["quantize_params"] == {"mode": "fp322fp16", "mode_param": None}
    assert c.where.call == "tik.fixpipe" and c.where.file == __file__
    ops = [s.call.spec.name for s in c.statements if hasattr(s, "call")]
    assert ops[-1] == "mte_l0c_gm" and all(s.call.where == c.where for s in c.statements if hasattr(s, "call"))
    storage, off, nbytes = c.src_bytes
    assert off == 0 and nbytes == (32 + 32) * 16 * 4


def test_more_than_255_blocks_split_into_several_fixpipe_ops():
    set_current_compile_soc_info("Ascend910A")
    ti = tik.Tik()
    cb = 256
    c = ti.Tensor("float32", (cb, 16, 16), name="c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float32", (cb * 256,), name="ub", scope=tik.scope_ubuf)
    g = ti.Tensor("float32", (cb * 256,), name="g", scope=tik.scope_gm)
    dst = ti.Tensor("float32", (cb * 4 * 16,), name="dst", scope=tik.scope_gm)
    ti.data_move(ub, g, 0, 1, cb * 256 * 4 // 32, 0, 0)
    ti.data_move(c, ub, 0, 1, cb, 0, 0)
    ti.fixpipe(dst, c, cb, 8, 0, 0)
    ti.BuildCCE(kernel_name="many", inputs=[g], outputs=[dst])
    ops = [s.call for s in ti.fixpipe_calls[0].statements if hasattr(s, "call") and
           s.call.spec.name == "mte_l0c_gm"]
    assert [op.operands[3] for op in ops] == [255 * 16, 16]
    x = np.arange(cb * 256, dtype=np.float32)
    out, = run(ti, {"g": x})
    np.testing.assert_array_equal(out, x.reshape(cb, 16, 16)[:, :4, :].reshape(-1))


# ----------------------------------------------------------------------------- errors


def _simple(chip="Ascend310", src="float32", dst_dt="float32", l0c_shape=(2, 32, 16), dst_n=2 * 16 * 16, ub=False):
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    c = ti.Tensor(src, l0c_shape, name="c", scope=tik.scope_cbuf_out)
    dst = ti.Tensor(dst_dt, (dst_n,), name="dst", scope=tik.scope_ubuf if ub else tik.scope_gm)
    return ti, c, dst


@pytest.mark.parametrize("kw,cls,match", [
    (dict(cburst_num=0), IllegalOperand, "cburst_num = 0 is outside"),
    (dict(cburst_num=2.5), IllegalOperand, "cburst_num must be a Python int"),
    (dict(burst_len=70000), IllegalOperand, "burst_len = 70000 is outside"),
    (dict(burst_len=3), IllegalOperand, "not a whole number of 64-byte rows"),
    (dict(dst_stride=-1), IllegalOperand, "dst_stride = -1 is outside"),
    (dict(src_stride=70000), IllegalOperand, "src_stride = 70000"),
    (dict(extend_params=[1]), IllegalOperand, "extend_params must be a dict"),
    (dict(extend_params={"bogus": 1}), UnknownName, "key 'bogus' is not supported"),
    (dict(extend_params={"relu": 1}), IllegalOperand, "relu must be a bool"),
    (dict(extend_params={"quantize_params": {"mode": "fp322fp16", "mode_param": None}}), IllegalOperand,
     "quantize_params must be None"),
    (dict(burst_len=64), OutOfBounds, "dst tensor overflow"),
    (dict(cburst_num=3), OutOfBounds, "tensor overflow"),
])
def test_fixpipe_argument_errors(kw, cls, match):
    ti, c, dst = _simple()
    args = dict(cburst_num=2, burst_len=32, dst_stride=0, src_stride=0, extend_params=None)
    args.update(kw)
    with raises_tik(cls, match=match):
        ti.fixpipe(dst, c, args["cburst_num"], args["burst_len"], args["dst_stride"], args["src_stride"],
                   args["extend_params"])


def test_fixpipe_dtype_and_mode_errors():
    ti, c, dst = _simple(dst_dt="float16")
    with raises_tik(IllegalOperand, match="needs extend_params\\['quantize_params'\\] with mode 'fp322fp16'"):
        ti.fixpipe(dst, c, 2, 32, 0, 0)
    with raises_tik(IllegalOperand, match="converts s32 -> f16 but src/dst are f32 -> f16"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 1.0}})
    with raises_tik(UnknownName, match="quantize mode 'x' is not supported"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "x", "mode_param": None}})
    with raises_tik(IllegalOperand, match="must contain both 'mode' and 'mode_param'"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "fp322fp16"}})
    with raises_tik(IllegalOperand, match="'fp322fp16' takes mode_param=None"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "fp322fp16", "mode_param": 1.0}})
    ti, c, dst = _simple(src="int32", dst_dt="float16")
    for bad, match in ((None, "needs a mode_param"), (2, "is not a float immediate"),
                       (ti.Scalar("float32", init_value=1.0), "needs a Scalar of float16")):
        with raises_tik(IllegalOperand, match=match):
            ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": bad}})
    with raises_tik(UnsupportedOp, match="f32s32 is not supported"):
        ti2, c2, dst2 = _simple(dst_dt="int32")
        ti2.fixpipe(dst2, c2, 2, 32, 0, 0)


def test_fixpipe_extend_param_restrictions():
    ti, c, dst = _simple(src="int32", dst_dt="float16")
    bias = ti.Tensor("int32", (32,), name="bias", scope=tik.scope_cbuf)
    ewa = ti.Tensor("int32", (512,), name="ewa", scope=tik.scope_cbuf)
    deq = ti.Tensor("float16", (16,), name="deq", scope=tik.scope_cbuf)
    q = {"mode": "int322fp16", "mode_param": 0.5}
    with raises_tik(IllegalOperand, match="bias and element-wise-add cannot be enabled together"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": bias, "element-wise-add": ewa, "quantize_params": q})
    with raises_tik(IllegalOperand, match="Tensor mode_param is only allowed without bias"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": bias, "quantize_params": {"mode": "int322fp16",
                                                                           "mode_param": deq}})
    with raises_tik(IllegalOperand, match="relu is only supported when bias and element-wise-add are disabled"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": bias, "relu": True, "quantize_params": q})
    with raises_tik(IllegalOperand, match="relu is not supported with quantize mode 'int322fp16' and a Scalar"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"relu": True, "quantize_params": q})
    small = ti.Tensor("int32", (16,), name="small", scope=tik.scope_cbuf)
    with raises_tik(OutOfBounds, match="cburst_num\\*16 = 32 elements"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": small, "quantize_params": q})
    fbias = ti.Tensor("float32", (32,), name="fbias", scope=tik.scope_cbuf)
    with raises_tik(IllegalOperand, match="bias has dtype float32; it must have the src dtype int32"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": fbias, "quantize_params": q})
    ubias = ti.Tensor("int32", (32,), name="ubias", scope=tik.scope_ubuf)
    with raises_tik(IllegalOperand, match="bias must be in L1"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": ubias, "quantize_params": q})
    with raises_tik(IllegalOperand, match="reads the cube result from L0C"):
        ti.fixpipe(dst, bias, 2, 32, 0, 0, {"quantize_params": q})


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310B1"])
def test_fixpipe_unit_scale_past_float16_range_says_so(chip):
    """h_fuzz435: 1e5 is positive but its float16 deqscale is inf; the refusal told the author to "use a
    positive scale". It now says the float16 value and the largest usable scale; a scale that rounds to
    65504 still runs."""
    ti, c, dst = _simple(chip=chip, src="int32", dst_dt="float16")
    with raises_tik(UnsupportedOp, match=r"100000\.0 is inf as the float16 deqscale.*Fix: use a positive scale of "
                                         r"at most 65504"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 1e5}})
    with raises_tik(UnsupportedOp, match=r"positive finite scales only Fix: use a positive scale\b(?! of)"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": -0.5}})
    ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 65519.0}})


@pytest.mark.parametrize("chip", ["Ascend910B1", "Ascend310B1"])
def test_fixpipe_unit_scale_below_float16_range_says_so(chip):
    """h_review443: 1e-9 is positive but its float16 deqscale is 0; the refusal told the author to "use a
    positive scale" (h_fuzz435 fixed only the scales past 65504). It now says the float16 value and the
    smallest usable scale; 3e-8 (which rounds to float16's smallest subnormal 2**-24) still runs."""
    ti, c, dst = _simple(chip=chip, src="int32", dst_dt="float16")
    with raises_tik(UnsupportedOp, match=r"1e-09 is 0 as the float16 deqscale.*Fix: use a scale of at least 6e-08"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 1e-9}})
    with raises_tik(UnsupportedOp, match=r"positive finite scales only Fix: use a positive scale\b(?! of)"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 0.0}})
    ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": 3e-8}})


def test_fixpipe_chip_rules():
    ti, c, dst = _simple(chip="Ascend910B1")
    bias = ti.Tensor("float32", (32,), name="bias", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="'bias' is not supported on Ascend910B1"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"bias": bias})
    ewa = ti.Tensor("float32", (2, 32, 16), name="ewa", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="'element-wise-add' is not supported on Ascend910B1.*Fix: add the tensor "
                                         "with vector instructions: fixpipe to float32, vec_add"):   # not "the bias"
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"element-wise-add": ewa})
    ti, c, dst = _simple(chip="Ascend910B1", src="int32", dst_dt="float16")
    with raises_tik(UnsupportedOp, match="FIXPIPE unit takes positive finite scales"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": -0.5}})
    scales = ti.Tensor("float16", (16,), name="scales", scope=tik.scope_cbuf)
    with raises_tik(UnsupportedOp, match="a Tensor mode_param is not supported on Ascend910B1.*Fix: use a float "
                                         "immediate scale .*for per-channel scales fixpipe the int32 result"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": scales}})
    ti, c, dst = _simple(chip="SD3403", src="int32", dst_dt="int32")
    with raises_tik(UnsupportedOp, match="does not support the 'relu' key"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"relu": False})
    ti, c, dst = _simple(chip="Ascend310", ub=True)
    with raises_tik(IllegalOperand, match="dst must be in GM"):
        ti.fixpipe(dst, c, 2, 32, 0, 0)
    set_current_compile_soc_info("Hi3796CV300ES")
    ti = tik.Tik()
    c = ti.Tensor("int32", (2, 16, 16), name="c", scope=tik.scope_cbuf_out)
    dst = ti.Tensor("int32", (512,), name="dst", scope=tik.scope_gm)
    with raises_tik(UnsupportedOp, match="tik.fixpipe with s32s32 is not supported on Hi3796CV300ES"):
        ti.fixpipe(dst, c, 2, 32, 0, 0)


@pytest.mark.parametrize("chip", ["SD3403", "Hi3796CV300CS"])
@pytest.mark.parametrize("to_ub", [False, True])
def test_plain_f16_fixpipe_on_a_saturation_chip_copies_inf_and_nan_as_the_legacy_model(chip, to_ub):
    """review457: a float16 L0C written by fixpipe to float16 (no quantize_params; Hi3796CV300CS / SD3403, whose
    overflow mode is saturation) is a copy in legacy TIK: inf, NaN and -0 held in L0C reach dst unchanged, as the
    reference model writes them (legacy_fixpipe.md choice 8). Since fixpipe.SAME_TYPE_SATURATES the PTO FIXPIPE
    converts an f16 accumulator under the inherited sat, so the lowering wrote +-65504 and 0 (tik-compare-fixpipe:
    'legacy inf (0x7c00) vs new 65504.0 (0x7bff)'); it now says nosat (cube_fixpipe.PLAIN_COPY_SAT)."""
    set_current_compile_soc_info(chip)
    ti = tik.Tik()
    n = 2 * 32 * 16
    g = ti.Tensor("float16", (n,), name="l0c_in", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (n,), name="ub", scope=tik.scope_ubuf)
    l0c = ti.Tensor("float16", (n,), name="l0c", scope=tik.scope_cbuf_out)
    ti.data_move(ub, g, 0, 1, n * 2 // 32, 0, 0)
    ti.data_move(l0c, ub, 0, 1, n // 256, 0, 0)
    dst = ti.Tensor("float16", (n,), name="dst", scope=tik.scope_gm)
    if to_ub:
        ub2 = ti.Tensor("float16", (n,), name="ub2", scope=tik.scope_ubuf)
        ti.fixpipe(ub2, l0c, 2, 32, 0, 0)
        ti.data_move(dst, ub2, 0, 1, n * 2 // 32, 0, 0)
    else:
        ti.fixpipe(dst, l0c, 2, 32, 0, 0)
    ti.BuildCCE(kernel_name="plain_f16", inputs=[g], outputs=[dst])
    x = (np.arange(n) % 97 - 40).astype(np.float16)
    x[[0, 1, 2, 3, 600, 1000]] = np.array([np.inf, -np.inf, np.nan, -0.0, np.nan, 65504], np.float16)
    x.view(np.uint16)[600] = 0x7E01                       # a NaN payload: a copy keeps it
    out, = run(ti, {"l0c_in": x})
    exp = legacy_fixpipe(LegacyTensor(x, scope="l0c"), dst_dtype="float16", cburst_num=2, burst_len=32,
                         dst_stride=0, src_stride=0, chip=chip, dst_size=n).values
    np.testing.assert_array_equal(exp.view(np.uint16), x.view(np.uint16))     # the model copies
    np.testing.assert_array_equal(out.view(np.uint16), exp.view(np.uint16))
    assert ti.fixpipe_calls[0].lowering == ("fixpipe_l1_ub" if to_ub else "fixpipe")


def test_fixpipe_to_ub_on_310b():
    """Ascend310B writes UB through L1 (FIXPIPE to an L1 scratch, then MTE1 L1 -> UB)."""
    set_current_compile_soc_info("Ascend310B1")
    ti = tik.Tik()
    a_gm = ti.Tensor("float16", (1, 16, 16), name="a_gm", scope=tik.scope_gm)
    a = ti.Tensor("float16", (1, 16, 16), name="a", scope=tik.scope_cbuf)
    c = ti.Tensor("float32", (1, 16, 16), name="c", scope=tik.scope_cbuf_out)
    ub = ti.Tensor("float16", (16 * 16,), name="ub", scope=tik.scope_ubuf)
    out = ti.Tensor("float16", (16 * 16,), name="out", scope=tik.scope_gm)
    ti.data_move(a, a_gm, 0, 1, 16, 0, 0)
    ti.matmul(c, a, a, 16, 16, 16)
    ti.fixpipe(ub, c, 1, 32, 0, 0, {"quantize_params": {"mode": "fp322fp16", "mode_param": None}})
    ti.data_move(out, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE(kernel_name="ub310b", inputs=[a_gm], outputs=[out])
    x = np.random.default_rng(0).integers(-3, 4, (1, 16, 16)).astype(np.float16)
    res, = run(ti, {"a_gm": x})
    C = x[0].astype(np.float64) @ x[0].T.astype(np.float64)
    np.testing.assert_array_equal(res.reshape(16, 16), C.astype(np.float16))
    assert ti.fixpipe_calls[0].lowering == "fixpipe_l1_ub"


def test_a_ub_destination_on_a_gm_only_chip_names_the_chips_that_allow_it():
    """msg270: the refusal says which SoCs' fixpipe may write UB (DST_UB_SOCS), not only 'must be in GM'."""
    ti, c, dst = _simple(chip="Ascend610", ub=True)
    with raises_tik(IllegalOperand, match=r"dst must be in GM \(scope_gm\) on Ascend610 AiCore, got tensor 'dst' in "
                                          r"UB .*fixpipe writes UB only on the Ascend310B, Ascend610Lite, "
                                          r"Hi3796CV300CS and SD3403 SoCs"):
        ti.fixpipe(dst, c, 2, 32, 0, 0)


def test_fixpipe_extent_overflow_fix_names_the_fixpipe_arguments_that_fit():
    """user440: a src / dst overflow's Fix was data_move's "check nburst/burst/strides (or repeat counts)",
    naming none of fixpipe's arguments; it now says what fits: cburst_num / burst_len for src (and that
    src_stride is reserved), the largest dst_stride for dst, with the arguments' units."""
    ti, c, dst = _simple(l0c_shape=(2, 48, 16), dst_n=2 * 48 * 16)
    with raises_tik(OutOfBounds, match=r"Fix: src holds 1536 elements from its start; with this burst_len "
                                       r"\(round_howo 64 rows\) at most 1 block\(s\) fit: cburst_num <= 1; with "
                                       r"cburst_num 2 at most 48 rows per block fit: burst_len <= 48\*16\*4/32 = 96 "
                                       r"\(cburst_num counts 16-channel blocks"):
        ti.fixpipe(dst, c, 2, 128, 0, 0)
    with raises_tik(OutOfBounds, match=r"with cburst_num 2 and src_stride 1 at most 32 rows per block fit: "
                                       r"burst_len <= 32\*16\*4/32 = 64; src_stride is documented as reserved"):
        ti.fixpipe(dst, c, 2, 96, 0, 1)
    with raises_tik(OutOfBounds, match=r"at most 2 block\(s\) fit: cburst_num <= 2 "):
        ti.fixpipe(dst, c, 32, 96, 0, 0)
    with raises_tik(OutOfBounds, match=r"Fix: dst holds 1536 elements from its start; with cburst_num 2 and "
                                       r"burst_len as given, dst_stride <= 0 \(it is 16: 128 elements of gap after "
                                       r"each block\); with this dst_stride at most 1 block\(s\) of 48 rows fit "
                                       r"\(dst_stride counts 32-byte units of dst"):
        ti.fixpipe(dst, c, 2, 96, 16, 0)
    ti, c, dst = _simple(l0c_shape=(2, 48, 16), dst_n=2 * 48 * 16 + 2 * 64)
    with raises_tik(OutOfBounds, match=r"dst_stride <= 16 \(it is 32: 256 elements"):
        ti.fixpipe(dst, c, 2, 96, 32, 0)


@pytest.mark.parametrize("sdt", ["float16", "float32"])
def test_fixpipe_unit_scalar_scale_is_refused_once_whatever_its_dtype(sdt):
    """user456: on Ascend910B1 a float16 Scalar was refused because "its FIXPIPE fixpipe takes a float32 Scalar",
    and a float32 Scalar because "int322fp16 needs a Scalar of float16" -- each Fix led to the other error. Both
    now get the one refusal, whose Fix names the immediate and the direct FIXPIPE op with the Scalar payload."""
    ti, c, dst = _simple(chip="Ascend910B1", src="int32", dst_dt="float16")
    sc = ti.Scalar(sdt, name="sc", init_value=0.5)
    with raises_tik(UnsupportedOp, match=rf"a Scalar mode_param \({sdt}\) is not supported on Ascend910B1: its "
                                         r"fixpipe is the FIXPIPE unit.*Fix: use a float immediate scale, or write "
                                         r"the FIXPIPE op .*pre_quant=\(scalar, \{'mode': 'deqf16_scalar'\}\)"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": sc}})
    ti, c, dst = _simple(chip="Ascend310", src="int32", dst_dt="float16")     # v100: float16 only, as before
    sc = ti.Scalar("float32", name="sc", init_value=0.5)
    with raises_tik(IllegalOperand, match="mode_param Scalar has dtype float32; int322fp16 needs a Scalar of float16"):
        ti.fixpipe(dst, c, 2, 32, 0, 0, {"quantize_params": {"mode": "int322fp16", "mode_param": sc}})
