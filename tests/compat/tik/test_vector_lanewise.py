"""TIK lane-wise vector APIs (binary, unary, vector-scalar, dup) through real kernels, against an
independent per-lane reference of tik_api.md §9.1 (masks, block/repeat strides, repeats,
tails, counter mode), and every argument-check error path."""
import numpy as np
import pytest

from pto_core.errors import IllegalOperand, Misaligned, OutOfBounds, UnsupportedOp

from .helpers import raises_tik
from .vec_helpers import ref_lanewise, rounded, vec_kernel

RNG = np.random.default_rng(7)


def data(dtype, n, lo=-8, hi=8, nonzero=False):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = RNG.uniform(lo, hi, n).astype(dt)
        if nonzero:
            x[np.abs(x) < 0.25] = dt.type(0.5)
        return x
    info = np.iinfo(dt)
    return RNG.integers(max(info.min, -1000), min(info.max, 1000) + 1, n).astype(dt)


BINARY_FNS = {
    "vadd": lambda a, b: a + b, "vsub": lambda a, b: a - b, "vmul": lambda a, b: a * b,
    "vdiv": lambda a, b: a / b, "vmax": max, "vmin": min,
    "vand": lambda a, b: a & b, "vor": lambda a, b: a | b,
    "vaddrelu": lambda a, b: max(a + b, 0.0), "vsubrelu": lambda a, b: max(a - b, 0.0),
}
# (api, dtype, chip)
BINARY_CASES = [("vadd", "float16", None), ("vadd", "float32", None), ("vadd", "int32", None),
                ("vsub", "float16", None), ("vsub", "int32", None), ("vmul", "float32", None),
                ("vmul", "int16", "Ascend310P3"), ("vdiv", "float16", "Ascend910B1"), ("vdiv", "float32", "Ascend910B1"),
                ("vmax", "float16", None), ("vmin", "float32", None), ("vmax", "int32", None),
                ("vand", "uint16", None), ("vor", "int16", None), ("vaddrelu", "float16", "Ascend310P3"),
                ("vsubrelu", "float32", "Ascend310P3")]
# (mask, repeat, blk strides (dst, src0, src1), rep strides) in terms of 16-bit operands (rescaled for 32-bit)
GEOMETRIES = [(None, 2, (1, 1, 1), (8, 8, 8)),
              ("bits", 3, (2, 1, 2), (16, 8, 16)),
              (37, 1, (1, 1, 1), (8, 8, 8)),
              (100, 4, (1, 3, 1), (9, 24, 8))]


def _mask(kind, par):
    if kind is None:
        return par
    if kind == "bits":
        return [0x00FF00FF00FF00F1, 0x8000000000000001] if par == 128 else [0, 0x8000F0F00000000F]
    return min(kind, par)


def _extent(repeat, blks, reps, E):
    return max((repeat - 1) * r * E + 7 * b * E + E for b, r in zip(blks, reps)) + E


@pytest.mark.parametrize("api,dtype,chip", BINARY_CASES)
@pytest.mark.parametrize("geo", range(len(GEOMETRIES)))
def test_classic_binary(api, dtype, chip, geo):
    kind, repeat, blks, reps = GEOMETRIES[geo]
    dt = np.dtype(dtype)
    par, E = 256 // dt.itemsize, 32 // dt.itemsize
    mask = _mask(kind, par)
    n = _extent(repeat, blks, reps, E)
    a, b = data(dt, n), data(dt, n, nonzero=api == "vdiv")
    d = data(dt, n)
    if dt.kind in "iu" and api not in ("vand", "vor"):
        a, b = (a % 200).astype(dt), (b % 200).astype(dt)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: getattr(ti, api)(
        mask, ub["d"], ub["a"], ub["b"], repeat, *blks, *reps), chip=chip)
    fn = BINARY_FNS[api]
    want = ref_lanewise(rounded(fn, dt) if api not in ("vmax", "vmin", "vand", "vor") else fn, d, [a, b],
                        repeat, mask, blks, reps)
    np.testing.assert_array_equal(out["d"], want)
    assert not np.array_equal(want, d)                           # the call changed something


VEC_BINARY = ["vec_add", "vec_sub", "vec_mul", "vec_max", "vec_min", "vec_and", "vec_or"]


@pytest.mark.parametrize("api", VEC_BINARY)
def test_vec_binary_repeat_strides(api):
    dt = np.dtype(np.uint16 if api in ("vec_and", "vec_or") else np.float16)
    repeat, reps = 3, (8, 16, 0)              # src1 re-read every repeat (rep stride 0)
    n = 16 * 128 * 3
    a, b, d = data(dt, n), data(dt, n), data(dt, n)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: getattr(ti, api)(120, ub["d"], ub["a"], ub["b"],
                                                                            repeat, *reps))
    fn = BINARY_FNS["v" + api[4:]]
    want = ref_lanewise(rounded(fn, dt) if api in ("vec_add", "vec_sub", "vec_mul") else fn, d, [a, b], repeat, 120,
                        (1, 1, 1), reps)
    np.testing.assert_array_equal(out["d"], want)


@pytest.mark.parametrize("api,fused", [("vmla", lambda a, b, d: a * b + d), ("vmadd", lambda a, b, d: a * d + b),
                                       ("vmaddrelu", lambda a, b, d: max(a * d + b, 0.0))])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_fused_ops_read_the_destination(api, fused, dtype):
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    n = 4 * par
    a, b, d = data(dt, n, -2, 2), data(dt, n, -2, 2), data(dt, n, -2, 2)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: getattr(ti, api)(
        par - 5, ub["d"], ub["a"], ub["b"], 4, 1, 1, 1, 8, 8, 8))
    want = ref_lanewise(rounded(fused, dt), d, [a, b], 4, par - 5, (1, 1, 1), (8, 8, 8), reads_dst=True)
    np.testing.assert_array_equal(out["d"], want)


def test_vmla_f32_dst_with_f16_sources():
    a, b = data(np.float16, 256, -2, 2), data(np.float16, 256, -2, 2)
    d = data(np.float32, 256, -2, 2)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vmla(64, ub["d"], ub["a"], ub["b"], 4, 1, 1, 1,
                                                                    8, 4, 4))
    want = ref_lanewise(rounded(lambda x, y, z: x * y + z, np.float32), d, [a, b], 4, 64, (1, 1, 1), (8, 4, 4),
                        reads_dst=True)
    np.testing.assert_array_equal(out["d"], want)


def test_stride_units_1_2_3():
    """stride_unit 1 (rep gap), 2 (blk gap, rep stride in elements), 3 (both gaps in elements)."""
    dt = np.dtype(np.float16)
    for unit, blks, reps in ((1, (1, 2, 1), (2, 0, 3)), (2, (0, 16, 0), (128, 200, 160)),
                             (3, (16, 0, 16), (0, 32, 16))):
        n = 4096
        a, b, d = data(dt, n), data(dt, n), data(dt, n)
        out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vadd(128, ub["d"], ub["a"], ub["b"], 3, *blks,
                                                                        *reps, stride_unit=unit))
        want = ref_lanewise(rounded(lambda x, y: x + y, dt), d, [a, b], 3, 128, blks, reps, unit=unit)
        np.testing.assert_array_equal(out["d"], want, err_msg=f"stride_unit {unit}")


UNARY = {"vabs": (abs, None), "vrelu": (lambda x: max(x, 0.0), None), "vexp": (np.exp, "Ascend310P3"),
         "vln": (np.log, "Ascend310P3"), "vrec": (lambda x: 1.0 / x, None), "vsqrt": (np.sqrt, "Ascend910B1"),
         "vrsqrt": (lambda x: 1.0 / np.sqrt(x), None)}


@pytest.mark.parametrize("api", sorted(UNARY))
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_classic_unary(api, dtype):
    fn, chip = UNARY[api]
    if api == "vrelu" and dtype == "float32":
        chip = "Ascend310P3"
    dt = np.dtype(dtype)
    par, E = 256 // dt.itemsize, 32 // dt.itemsize
    positive = api in ("vln", "vsqrt", "vrsqrt")
    n = 3 * 16 * E
    s = data(dt, n, 0.1 if positive else -4, 4, nonzero=api == "vrec")
    d = data(dt, n)
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: getattr(ti, api)(
        [0, 0xF0F0F0F0F0F0F0F0] if par == 64 else [0xFFFF0000FFFF0000, 0x00000000FFFFFFFF], ub["d"], ub["s"], 3,
        2, 1, 16, 8), chip=chip)
    mask = [0, 0xF0F0F0F0F0F0F0F0] if par == 64 else [0xFFFF0000FFFF0000, 0x00000000FFFFFFFF]
    exact = api in ("vabs", "vrelu")
    want = ref_lanewise(fn if exact else rounded(fn, dt), d, [s], 3, mask, (2, 1), (16, 8))
    np.testing.assert_array_equal(out["d"], want)


@pytest.mark.parametrize("api,instr", [("vec_relu", "vrelu"), ("vec_abs", "vabs"), ("vec_exp", "vexp"),
                                       ("vec_ln", "vln"), ("vec_rec", "vrec"), ("vec_rsqrt", "vrsqrt")])
def test_vec_unary(api, instr):
    dt = np.dtype(np.float16)
    s = data(dt, 512, 0.2, 3)
    d = data(dt, 512)
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: getattr(ti, api)(90, ub["d"], ub["s"], 3, 8, 8))
    fn = UNARY[instr][0]
    want = ref_lanewise(fn if instr in ("vabs", "vrelu") else rounded(fn, dt), d, [s], 3, 90, (1, 1), (8, 8))
    np.testing.assert_array_equal(out["d"], want)


def test_vnot_bitwise():
    s = data(np.uint16, 256)
    d = data(np.uint16, 256)
    out = vec_kernel({"d": d, "s": s}, lambda ti, ub: ti.vec_not(128, ub["d"], ub["s"], 2, 8, 8))
    np.testing.assert_array_equal(out["d"], ~s)


SCALAR_OPS = {"vadds": lambda x, s: x + s, "vmuls": lambda x, s: x * s, "vmaxs": max, "vmins": min,
              "vlrelu": lambda x, s: x if x >= 0 else x * s}


@pytest.mark.parametrize("api", sorted(SCALAR_OPS))
@pytest.mark.parametrize("dtype", ["float16", "float32", "int32"])
def test_classic_vector_scalar(api, dtype):
    if dtype == "int32" and api == "vlrelu":
        return
    dt = np.dtype(dtype)
    par = 256 // dt.itemsize
    x = data(dt, 4 * par)
    d = data(dt, 4 * par)
    k = dt.type(0.75) if dt.kind == "f" else 3
    out = vec_kernel({"d": d, "x": x}, lambda ti, ub: getattr(ti, api)(
        par - 1, ub["d"], ub["x"], float(k) if dt.kind == "f" else int(k), 2, 1, 2, 8, 16), chip="Ascend310P3")
    fn = SCALAR_OPS[api]
    exact = api in ("vmaxs", "vmins")
    want = ref_lanewise(lambda v: (fn(v, k) if exact else rounded(fn, dt)(v, k)), d, [x], 2, par - 1, (1, 2),
                        (8, 16))
    np.testing.assert_array_equal(out["d"], want)


def test_vector_scalar_with_scalar_registers_and_input_scalar():
    x = data(np.float32, 128)
    d = data(np.float32, 128)

    def body(ti, ub):
        s = ti.Scalar("float32", init_value=-1.5)
        ti.vec_adds(64, ub["d"], ub["x"], s, 1, 8, 8)
        ti.vec_muls(64, ub["d"][64], ub["x"][64], ub["k"], 1, 8, 8)
    out = vec_kernel({"d": d, "x": x}, body, scalars={"k": ("float32", 2.5)})
    np.testing.assert_array_equal(out["d"][:64], (x[:64].astype(np.float64) - 1.5).astype(np.float32))
    np.testing.assert_array_equal(out["d"][64:], (x[64:].astype(np.float64) * 2.5).astype(np.float32))


def test_shifts_and_round():
    x = data(np.int16, 256)
    d = data(np.int16, 256)

    def body(ti, ub):
        ti.vshl(128, ub["d"], ub["x"], 3, 1, 1, 1, 8, 8)
        ti.vshr(128, ub["d"][128], ub["x"][128], 2, 1, 1, 1, 8, 8, round_en=True)
    out = vec_kernel({"d": d, "x": x}, body, chip="Ascend910B1")
    np.testing.assert_array_equal(out["d"][:128], (x[:128].astype(np.int64) << 3).astype(np.int16))
    np.testing.assert_array_equal(out["d"][128:], ((x[128:].astype(np.int64) + 2) >> 2).astype(np.int16))


@pytest.mark.parametrize("api", ["vaxpy", "vec_axpy"])
def test_axpy_f32_dst_f16_src(api):
    x = data(np.float16, 256, -2, 2)
    d = data(np.float32, 256, -2, 2)
    args = (1, 1, 8, 4) if api == "vaxpy" else (8, 4)
    out = vec_kernel({"d": d, "x": x}, lambda ti, ub: getattr(ti, api)(64, ub["d"], ub["x"], 0.5, 4, *args))
    want = ref_lanewise(rounded(lambda v, old: 0.5 * v + old, np.float32), d, [x], 4, 64, (1, 1), (8, 4),
                        reads_dst=True)
    np.testing.assert_array_equal(out["d"], want)


@pytest.mark.parametrize("count", [300, 128, 5])
def test_counter_mode(count):
    """mask_mode="counter": mask = elements in total, repeat_times ignored, the last repeat partial."""
    x = data(np.float16, 512)
    d = data(np.float16, 512)
    out = vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vec_adds(count, ub["d"], ub["x"], 1.0, 99, 8, 8,
                                                                mask_mode="counter"), chip="Ascend910B1")
    want = d.copy()
    want[:count] = (x[:count].astype(np.float64) + 1).astype(np.float16)
    np.testing.assert_array_equal(out["d"], want)


def test_counter_mode_is_a_normal_mask_on_v100():
    x = data(np.float16, 256)
    d = data(np.float16, 256)
    out = vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vadds(40, ub["d"], ub["x"], 1.0, 2, 1, 1, 8, 8,
                                                             mask_mode="counter"))
    want = ref_lanewise(rounded(lambda v: v + 1, np.float16), d, [x], 2, 40, (1, 1), (8, 8))
    np.testing.assert_array_equal(out["d"], want)
    with raises_tik(IllegalOperand, match="no counter mode"):
        vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vadds(300, ub["d"], ub["x"], 1.0, 2, 1, 1, 8, 8,
                                                           mask_mode="counter"), build_only=True)


@pytest.mark.parametrize("chip", ["Ascend310", "Ascend910A"])
@pytest.mark.parametrize("n", [0, 200])
def test_run_time_counter_out_of_range_on_v100_names_the_mask(chip, n):
    """Ascend310/910A have no counter mode: a Scalar mask with mask_mode="counter" is a normal-mode count 1..PAR,
    and one outside it is refused when the op runs naming the user's argument `mask` (not the PTO clause
    `counter`), at the user's line, with a Fix that says how the count is read."""
    x = data(np.float16, 256)
    d = data(np.float16, 256)
    with raises_tik(IllegalOperand, match=rf"operand mask: .*value {n} is outside \[1, 128\]") as info:
        vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vadds(ub["n"], ub["d"], ub["x"], 1.0, 1, 1, 1, 8, 8,
                                                           mask_mode="counter"),
                   chip=chip, scalars={"n": ("int32", n)})
    e = info.value
    assert e.operand == "mask" and f"{__file__}:" in str(e)
    assert 'no counter mode: the count (a TIK mask with mask_mode="counter") is read as a normal-mode count' in str(e)


def test_vector_dup_and_vec_dup():
    d = data(np.float32, 256)

    def body(ti, ub):
        ti.vector_dup([0, 0x00000000FFFF00FF], ub["d"], 3.5, 2, 2, 16, 0)
        ti.vec_dup(7, ub["d"][192], -2.0, 1, 8)
    out = vec_kernel({"d": d}, body)
    want = ref_lanewise(lambda: np.float32(3.5), d, [], 2, [0, 0x00000000FFFF00FF], (2,), (16,))
    want[192:199] = -2.0
    np.testing.assert_array_equal(out["d"], want)


def test_destination_block_stride_0_acts_as_1_and_source_block_stride_0_broadcasts():
    """Named choice DST_BLOCK_STRIDE_ZERO_IS_ONE (tik_vector.md §3): CANN roi_pooling fills 64 f32 clamp lanes with
    ``vector_dup(64, t, v, 1, 0, 0, 0)``, which TIK's own overflow check and Huawei's CPU model of the intrinsic treat
    as block stride 1. A source block stride of 0 stays literal: every block reads the same 32 bytes."""
    d = data(np.float32, 64)
    out = vec_kernel({"d": d}, lambda ti, ub: ti.vector_dup(64, ub["d"], 2.5, 1, 0, 8))
    assert not np.array_equal(d, np.full(64, 2.5, np.float32))
    np.testing.assert_array_equal(out["d"], np.full(64, 2.5, np.float32))
    x = data(np.float32, 64, -2, 2)
    y = data(np.float32, 64, -2, 2)
    out = vec_kernel({"d": d, "x": x, "y": y},
                     lambda ti, ub: ti.vadd(64, ub["d"], ub["x"], ub["y"], 1, 0, 0, 1, 8, 8, 8))
    want = (np.tile(x[:8], 8).astype(np.float64) + y).astype(np.float32)      # x block 0 to every block
    np.testing.assert_array_equal(out["d"], want)
    via_reference = ref_lanewise(rounded(lambda a, b: a + b, np.float32), d, [x, y], 1, 64, (0, 0, 1), (8, 8, 8))
    np.testing.assert_array_equal(out["d"], via_reference)


def test_destination_block_stride_0_counts_every_block_in_the_overflow_check():
    """TIK checks a dst_blk_stride of 0 as 1 (its _MIN_DST_BLK_STRIDE): 64 f32 lanes need 64 elements."""
    from tbe import tik
    ti = tik.Tik()
    t = ti.Tensor("float32", (8,), name="t", scope=tik.scope_ubuf)
    with raises_tik(OutOfBounds, match="expected elements nums: 64, actual elements nums: 8"):
        ti.vector_dup(64, t, 1.0, 1, 0, 8)


@pytest.mark.parametrize("dtype, value, want", [("uint16", -1, 0xFFFF), ("uint16", -32768, 0x8000),
                                                 ("uint32", -1, 0xFFFFFFFF), ("uint32", -7, 2**32 - 7)])
def test_vec_dup_negative_immediate_into_unsigned_is_its_twos_complement(dtype, value, want):
    """Named choice UNSIGNED_DUP_NEGATIVE_IMMEDIATE: CANN roi_align builds an all-ones uint16 mask with
    ``vec_dup(128, u16_ub, -1, 1, 8)``; TIK converts the immediate to the dst dtype (C: modulo 2**bits)."""
    d = data(dtype, 128)
    n = 128 if dtype == "uint16" else 64
    out = vec_kernel({"d": d}, lambda ti, ub: ti.vec_dup(n - 3, ub["d"], value, 1, 8))
    want_arr = d.copy()
    want_arr[:n - 3] = want
    assert not np.array_equal(want_arr, d)
    np.testing.assert_array_equal(out["d"], want_arr)


@pytest.mark.parametrize("dtype, value", [("uint16", 70000), ("uint16", -32769), ("int16", 40000)])
def test_vec_dup_immediate_out_of_the_dtype_range_is_an_error(dtype, value):
    with pytest.raises(IllegalOperand, match=f"scalar {value} does not fit"):
        vec_kernel({"d": data(dtype, 128)}, lambda ti, ub: ti.vec_dup(128, ub["d"], value, 1, 8))


@pytest.mark.parametrize("api", ["vec_dup", "vector_dup"])
def test_dup_immediate_out_of_range_is_refused_at_the_call_even_in_a_branch_that_never_runs(api):
    """An immediate is checked where it is written (as TIK checks it when the call is made), not only when
    the op runs: a kernel that only builds, or whose branch never runs, still hears of it, at its line."""
    from tbe import tik
    ti = tik.Tik()
    t = ti.Tensor("int16", (128,), name="t", scope=tik.scope_ubuf)
    n = ti.InputScalar("int32", name="n")
    with ti.if_scope(n > 1000):
        call = (lambda: ti.vec_dup(128, t, 40000, 1, 8)) if api == "vec_dup" else \
            (lambda: ti.vector_dup(128, t, 40000, 1, 1, 8))
        with raises_tik(IllegalOperand, match="scalar 40000 does not fit s16"):
            call()


def test_block_stride_0_extent_counts_the_lanes_of_the_first_block_only():
    """Huawei's yuv444_2_yuv422 op fills an 8-element uint16 UB tensor with vector_dup(8, t, v, 1, 0, 0):
    the extent is 8 elements (not a whole 16-element block); 16 lanes there overflow."""
    from tbe import tik
    ti = tik.Tik()
    t = ti.Tensor("uint16", (8,), name="t", scope=tik.scope_ubuf)
    big = ti.Tensor("uint16", (16,), name="big", scope=tik.scope_ubuf)
    out = ti.Tensor("uint16", (16,), name="out", scope=tik.scope_gm)
    ti.vector_dup(16, big, 0, 1, 1, 8)
    ti.vector_dup(8, big, 0x5353, 1, 0, 0)
    ti.vector_dup(8, t, 7, 1, 0, 0)
    ti.data_move(out, big, 0, 1, 1, 0, 0)
    with raises_tik(OutOfBounds, match="expected elements nums: 16, actual elements nums: 8"):
        ti.vector_dup(16, t, 7, 1, 0, 0)
    ti.BuildCCE("dup0", [], [out])
    got, = ti.tikdb.start_debug({}, interactive=False)
    assert got.tolist() == [0x5353] * 8 + [0] * 8


def test_accumulate_idiom_dst_is_src1_with_zero_rep_strides():
    """vadd(acc, x, acc, r, rep strides (0, 8, 0)) sums the repeats of x (TIK's documented exception)."""
    x = data(np.float32, 64 * 5, -1, 1)
    acc = np.zeros(64, np.float32)
    out = vec_kernel({"acc": acc, "x": x}, lambda ti, ub: ti.vec_add(64, ub["acc"], ub["x"], ub["acc"], 5, 0, 8, 0))
    want = acc.copy()
    for r in range(5):
        want = (want.astype(np.float64) + x[r * 64:(r + 1) * 64]).astype(np.float32)
    np.testing.assert_array_equal(out["acc"], want)


def test_zero_repeat_at_run_time_with_an_out_of_range_view_is_a_no_op():
    """CHECKLIST S11: vsub(.., x[i + 1, 0], .., (127 - i) * r, ...) at the last row: a 0 repeat at run time."""
    d = data(np.float16, 128)
    x = data(np.float16, 128)

    def body(ti, ub):
        t = ub["d"].reshape((8, 16))
        with ti.for_range(0, 8) as i:
            ti.vsub(16, t[i + 1, 0], ub["d"], ub["x"], (7 - i), 1, 1, 1, 1, 1, 1)
    out = vec_kernel({"d": d, "x": x}, body)
    want = d.copy()
    for i in range(8):
        for r in range(7 - i):                     # repeat by repeat: the source may be an earlier result
            base = (i + 1) * 16 + r * 16
            want[base:base + 16] = (want[r * 16:r * 16 + 16].astype(np.float64) - x[r * 16:r * 16 + 16]
                                    ).astype(np.float16)
    np.testing.assert_array_equal(out["d"], want)


# ----------------------------------------------------------------------------- error paths


def _build(body, chip=None, dtype=np.float16, n=512):
    return vec_kernel({"d": data(dtype, n), "a": data(dtype, n), "b": data(dtype, n)}, body, chip=chip,
                      build_only=True)


@pytest.mark.parametrize("call,cls,match", [
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 0, 8, 8, 8), IllegalOperand, r"repeat_times = 0"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 256, 8, 8, 8), IllegalOperand, r"\[1, 255\]"),
    (lambda ti, ub: ti.vec_add(129, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), IllegalOperand, r"mask = 129"),
    (lambda ti, ub: ti.vec_add(0, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), IllegalOperand, r"mask = 0"),
    (lambda ti, ub: ti.vec_add([0, 0], ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), IllegalOperand, "all zero"),
    (lambda ti, ub: ti.vec_add([1, 2, 3], ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), IllegalOperand, "list of 2"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 1, 256, 8, 8), IllegalOperand, "dst_rep_stride"),
    (lambda ti, ub: ti.vadd(128, ub["d"], ub["a"], ub["b"], 1, 256, 1, 1, 8, 8, 8), IllegalOperand,
     "dst_blk_stride"),
    (lambda ti, ub: ti.vadd(128, ub["d"], ub["a"], ub["b"], 1, 1, 1, 1, 8, 8, 8, stride_unit=4), IllegalOperand,
     "stride_unit"),
    (lambda ti, ub: ti.vec_add(128, ub["d"][8], ub["a"], ub["b"], 1, 8, 8, 8), Misaligned, "32-byte aligned"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 5, 8, 8, 8), OutOfBounds, "tensor overflow"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"][448], 1, 8, 8, 8), OutOfBounds,
     "src1 tensor overflow, expected elements nums: 576, actual elements nums: 512"),
    (lambda ti, ub: ti.vec_adds(128, ub["d"], ub["a"], ti.Scalar("float32"), 1, 8, 8), IllegalOperand,
     "should be equal to the tensor dtype"),
    (lambda ti, ub: ti.vec_adds(128, ub["d"], ub["a"], "x", 1, 8, 8), IllegalOperand, "int, float, Scalar"),
    (lambda ti, ub: ti.vec_adds(128, ub["d"], ub["a"], 1.0, 1, 8, 8, mask_mode="fast"), IllegalOperand,
     "mask_mode"),
    (lambda ti, ub: ti.vdiv(128, ub["d"], ub["a"], ub["b"], 1, 1, 1, 1, 8, 8, 8), UnsupportedOp,
     "tik.vdiv does not support float16 on Ascend310"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], 5, 1, 8, 8, 8), IllegalOperand, "must be a tik Tensor"),
    (lambda ti, ub: ti.vec_exp(128, ub["d"], ub["d"][16], 1, 8, 8), IllegalOperand, "100 percent same"),
    (lambda ti, ub: ti.vec_exp(128, ub["d"][128], ub["d"], 2, 8, 8), IllegalOperand,
     "iteration N's destination is the source of next iteration"),
    (lambda ti, ub: ti.vec_add(128, ub["d"], ub["d"][16], ub["d"], 2, 0, 8, 0), IllegalOperand,
     "overlapping between src0 and src1"),
])
def test_argument_errors(call, cls, match):
    with raises_tik(cls, match=match):
        _build(call)


def test_errors_per_chip_and_dtype():
    with raises_tik(UnsupportedOp, match="tik.vec_add does not support int16 on Ascend310"):
        _build(lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), dtype=np.int16)
    with raises_tik(UnsupportedOp, match="vmaxs"):
        _build(lambda ti, ub: ti.vmaxs(128, ub["d"], ub["a"], 1.0, 1, 1, 1, 8, 8))
    with raises_tik(IllegalOperand, match="src0's dtype float32 should be equal to dst's dtype float16"):
        vec_kernel({"d": data(np.float16, 128), "a": data(np.float32, 64), "b": data(np.float16, 128)},
                   lambda ti, ub: ti.vec_add(128, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), build_only=True)
    with raises_tik(IllegalOperand, match="mask_h should be 0 for 32-bit"):
        _build(lambda ti, ub: ti.vec_add([1, 1], ub["d"], ub["a"], ub["b"], 1, 8, 8, 8), dtype=np.float32)
    with raises_tik(IllegalOperand, match="vshr round_en should be False"):
        _build(lambda ti, ub: ti.vshr(128, ub["d"], ub["a"], 1, 1, 1, 1, 8, 8, round_en=True), chip="Ascend910B1",
               dtype=np.uint16)


def test_a_float_mask_is_refused_as_tik_refuses_it(monkeypatch):
    """FLOAT_MASK_REFUSED: TIK checks a mask immediate with ``isinstance(mask, int)`` ("mask should be int"), so
    ``8.0`` (a Python 3 ``/`` result) is refused with a Fix naming ``8``, in every mask form; it ran as 8 before."""
    for mask, mode in ((8.0, "normal"), (np.float64(8.0), "normal"), ([0, 255.0], "normal"), (8.0, "counter")):
        with raises_tik(IllegalOperand, match=r"test_vector_lanewise\.py:\d+ in `tik\.vec_adds`: operand mask: mask "
                                              r"should be int, got float.* Fix: write (8|255)"):
            _build(lambda ti, ub: ti.vec_adds(mask, ub["d"], ub["a"], 1.0, 1, 8, 8, mask_mode=mode),
                   chip="Ascend910B1")
    with raises_tik(IllegalOperand, match=r"mask should be int, got float 8\.5 .*Fix: pass a whole number"):
        _build(lambda ti, ub: ti.vec_add(8.5, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8))
    from tbe_compat.tik import vector_common
    monkeypatch.setattr(vector_common, "FLOAT_MASK_REFUSED", False)
    _build(lambda ti, ub: ti.vec_add(8.0, ub["d"], ub["a"], ub["b"], 1, 8, 8, 8))      # the old reading


def test_dynamic_offset_overflow_is_checked_at_run_time():
    d = data(np.float16, 256)

    def body(ti, ub):
        with ti.for_range(0, 2) as i:
            ti.vec_adds(128, ub["d"][i * 192], ub["d"][i * 192], 1.0, 1, 8, 8)
    with raises_tik(OutOfBounds, match=r"needs elements \[192, 320\) but the tensor has only 256"):
        vec_kernel({"d": d}, body)


def _run_time_bit_mask_dup(dtype, masks):
    """vec_dup(7) under run-time bit masks (words read from UB into Scalars, highest first) at
    d[i * half] for i = 0, 1: the pattern of CANN's arg_max_with_kd index scatter."""
    par = 128 if dtype == np.float16 else 64
    half = par // 2
    d = np.zeros(par, dtype)
    m = np.array(masks, np.uint64).reshape(-1)            # [hi0, lo0, hi1, lo1]

    def body(ti, ub):
        with ti.for_range(0, 2) as i:
            hi, lo = ti.Scalar("uint64"), ti.Scalar("uint64")
            hi.set_as(ub["m"][2 * i])
            lo.set_as(ub["m"][2 * i + 1])
            ti.vec_dup([hi, lo], ub["d"][i * half], 7, 1, 8)
    return vec_kernel({"d": d, "m": m}, body)["d"], half


@pytest.mark.parametrize("dtype", [np.float16, np.int32])
def test_run_time_bit_mask_inside_the_tensor(dtype):
    # lanes 0..half-1 of each repeat (bit 63 of the low word for 16-bit operands is lane 63)
    lo = (1 << 63) | 1 if dtype == np.float16 else (1 << 31) | 1
    got, half = _run_time_bit_mask_dup(dtype, [[0, lo], [0, lo]])
    want = np.zeros(2 * half, dtype)
    for base in (0, half):
        want[base] = want[base + lo.bit_length() - 1] = 7
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dtype, word, bits", [(np.float16, (1, 0), 65), (np.float16, (1 << 63, 5), 128),
                                               (np.int32, (0, 1 << 40), 41), (np.int32, (0, 1 << 32), 33),
                                               (np.int32, (0, 1 << 63), 64)])
def test_run_time_bit_mask_past_the_tensor_is_checked_when_it_runs(dtype, word, bits):
    # Regression: a bit mask held in Scalars gave the op no extent, so a write past the tensor went
    # unchecked into its neighbour (reported as a hazard with the neighbour's reader, or not at all)
    half = (128 if dtype == np.float16 else 64) // 2
    with raises_tik(OutOfBounds, match=rf"dst \(tensor 'd_ub'\) needs elements \[{half}, {half + bits}\) but "
                                       rf"the tensor has only {2 * half}"):
        _run_time_bit_mask_dup(dtype, [[0, 1], list(word)])


def test_run_time_all_zero_bit_mask_is_the_ops_error_not_an_overflow():
    # an all-zero run-time mask has no extent; the op itself rejects it (even at an offset past the tensor)
    with raises_tik(IllegalOperand, match="mask selects no lane"):
        _run_time_bit_mask_dup(np.float16, [[0, 3], [0, 0]])


def test_scalar_repeat_and_scalar_mask():
    x = data(np.float16, 512)
    d = data(np.float16, 512)

    def body(ti, ub):
        r = ti.Scalar("int32", init_value=3)
        m = ti.Scalar("int32", init_value=50)
        ti.vec_muls(m, ub["d"], ub["x"], 2.0, r, 8, 8)
    out = vec_kernel({"d": d, "x": x}, body)
    want = ref_lanewise(rounded(lambda v: v * 2, np.float16), d, [x], 3, 50, (1, 1), (8, 8))
    np.testing.assert_array_equal(out["d"], want)


def test_lowering_is_one_pto_op_per_call():
    ti = _build(lambda ti, ub: ti.vadd([3, 1], ub["d"], ub["a"], ub["b"], 1, 2, 1, 1, 8, 8, 8))
    asm = ti.program.to_asm()
    line = next(x for x in asm.splitlines() if "pto.ub.vadd" in x)
    assert "mask(" in line and "blk_stride(" in line and "rep_stride(" in line
    assert asm.count("pto.ub.") == 1


def test_scalar_high_mask_word_of_32_bit_operands_selects_nothing():
    """vector_dup([m, m], int32_ub, ...) with a uint64 Scalar m (CANN's arg_max_with_value): the 64 lanes
    of a 32-bit op are the low word's bits; an immediate non-zero high word stays TIK's error."""
    from tbe import tik
    ti = tik.Tik()
    o = ti.Tensor("int32", (64,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("int32", (64,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(64, ub, 0, 1, 1, 8)
    m = ti.Scalar("uint64", name="m", init_value=0x0F0F)
    ti.vector_dup([m, m], ub, 7, 1, 1, 8)
    with raises_tik(IllegalOperand, match="mask_h should be 0 for 32-bit operands"):
        ti.vector_dup([1, 0x0F], ub, 7, 1, 1, 8)
    ti.data_move(o, ub, 0, 1, 8, 0, 0)
    ti.BuildCCE("mask_hi", [], [o])
    got, = ti.tikdb.start_debug({}, interactive=False)
    want = np.zeros(64, np.int32)
    want[[0, 1, 2, 3, 8, 9, 10, 11]] = 7
    assert np.array_equal(got, want)


def test_negative_int64_scalar_mask_words_are_their_bit_patterns():
    """TIK types run-time mask words as int64 Scalars, so bit 63 is only reachable through a negative value:
    the mask register takes the 64-bit pattern (CANN mat_mul_softmax_dropout_matmul's pad-column mask
    `-1 - sum(bits)`). A negative immediate word stays TIK's range error."""
    from tbe import tik
    ti = tik.Tik()
    o = ti.Tensor("float16", (256,), name="o", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (256,), name="ub", scope=tik.scope_ubuf)
    ti.vector_dup(128, ub, 1.0, 2, 1, 8)
    lo = ti.Scalar("int64", name="lo", init_value=-1 - 0b101 - 2 ** 40)     # all lanes but 0, 2, 40
    hi = ti.Scalar("int64", name="hi", init_value=-2 ** 63)                  # lane 127 only
    ti.vector_dup([hi, lo], ub, -3.0, 2, 1, 8)
    with raises_tik(IllegalOperand, match=r"mask = -1 is outside \[0, 18446744073709551615\]"):
        ti.vector_dup([-1, 3], ub, 7.0, 1, 1, 8)
    ti.data_move(o, ub, 0, 1, 16, 0, 0)
    ti.BuildCCE("mask_neg", [], [o])
    got, = ti.tikdb.start_debug({}, interactive=False)
    lane = np.arange(256) % 128
    want = np.where((lane < 64) & ~np.isin(lane, [0, 2, 40]) | (lane == 127), -3.0, 1.0).astype(np.float16)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("chip", ["Ascend910A", "Ascend310P3"])
def test_vadddeqrelu_on_every_chip_appendix_a_lists(chip):
    """tik_api.md Appendix A: vadddeqrelu f16s32s32 on 910A and 310P (found by differential round 4)."""
    a = np.arange(-64, 64, dtype=np.int32) * 7
    b = np.arange(128, dtype=np.int32)[::-1].copy() - 40
    d = np.full(128, 9.0, np.float16)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vadddeqrelu(
        64, ub["d"], 0.25, ub["a"], ub["b"], 2, 1, 1, 1, 4, 8, 8), chip=chip)
    v = ((a.astype(np.float64) + b) * 0.25).astype(np.float16)
    want = d.copy()
    want[0:64] = np.where(v[0:64] > 0, v[0:64], 0)
    want[64:128] = np.where(v[64:128] > 0, v[64:128], 0)
    np.testing.assert_array_equal(out["d"], want)


@pytest.mark.parametrize("chip", ["Ascend910A", "Ascend310P3", "Ascend910B1"])
def test_vmulconv_on_every_chip_appendix_a_lists(chip):
    a = (np.arange(128) % 16).astype(np.float16)
    b = (np.arange(128) % 13).astype(np.float16)
    d = np.full(128, 201, np.uint8)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vmulconv(
        128, ub["d"], ub["a"], ub["b"], 1, 1, 1, 1, 4, 8, 8), chip=chip)
    np.testing.assert_array_equal(out["d"], (a.astype(np.int64) * b.astype(np.int64)).astype(np.uint8))


def _int8_vmulconv(chip="Ascend910A"):
    a = np.array([1.5, -3.0, 2.5, -0.5, 200.0, -200.0, 3.5, -2.5] * 16, np.float16)
    b = np.array([1.0] * 64 + [2.0] * 64, np.float16)
    d = np.full(128, 99, np.int8)
    out = vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vmulconv(
        128, ub["d"], ub["a"], ub["b"], 1, 1, 1, 1, 4, 8, 8), chip=chip)
    prod = a.astype(np.float64) * b.astype(np.float64)            # exact in f16 for these values
    return out["d"], prod


def test_vmulconv_int8_keeps_negative_products():
    """Named choice VMULCONV_RELU = False (spec434): dst = convert(src0 * src1) with RINT rounding and
    saturation (asc-devkit asc_mul_cast_half2int8), not the ReLU of the CANN 8.5.0 cceapi_0020 revision."""
    from pto_core.ops import vector_elementwise as vew
    assert vew.VMULCONV_RELU is False
    got, prod = _int8_vmulconv()
    want = np.clip(np.rint(prod), -128, 127).astype(np.int8)
    assert want.min() == -128 and (want < 0).sum() > 20
    np.testing.assert_array_equal(got, want)


def test_vmulconv_relu_choice_clamps_at_zero(monkeypatch):
    """The other reading of the sources, selected by the named constant: negatives become 0."""
    from pto_core.ops import vector_elementwise as vew
    monkeypatch.setattr(vew, "VMULCONV_RELU", True)
    got, prod = _int8_vmulconv("Ascend310P3")
    np.testing.assert_array_equal(got, np.clip(np.rint(np.maximum(prod, 0)), 0, 127).astype(np.int8))


def test_vadddeqrelu_and_vmulconv_are_refused_on_ascend310():
    a, b = np.zeros(64, np.int32), np.zeros(64, np.int32)
    d = np.zeros(64, np.float16)
    with raises_tik(UnsupportedOp, match="vadddeqrelu"):
        vec_kernel({"d": d, "a": a, "b": b}, lambda ti, ub: ti.vadddeqrelu(
            64, ub["d"], 1.0, ub["a"], ub["b"], 1, 1, 1, 1, 4, 8, 8), chip="Ascend310", build_only=True)


def test_a_run_time_chip_refusal_names_the_core_type():
    """msg270: vshl on float16 passes Ascend610's TIK table and is refused by its VectorCore's vector table at
    run time; that message names the core type as the trace-time ones do."""
    from tbe import tik
    from tbe.common.platform import set_current_compile_soc_info
    set_current_compile_soc_info("Ascend610", "VectorCore")
    ti = tik.Tik()
    x = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    u = ti.Tensor("float16", (128,), name="u", scope=tik.scope_ubuf)
    ti.data_move(u, x, 0, 1, 8, 0, 0)
    ti.vshl(128, u, u, 1, 1, 1, 1, 8, 8)
    ti.data_move(y, u, 0, 1, 8, 0, 0)
    ti.BuildCCE("shl16", inputs=[x], outputs=[y])
    with raises_tik(UnsupportedOp, match="Ascend610 does not support vshl for f16 on its VectorCore"):
        ti.tikdb.start_debug({"x": np.ones(128, np.float16)}, interactive=False)


def test_counter_mode_run_time_zero_is_a_no_op():
    """COUNTER_ZERO_AT_RUN_TIME_IS_NOOP: a Scalar counter of 0 (CANN ProdEnvMatA: an atom without a neighbour of
    one type) processes nothing, between two legal counts in a for_range (the compiled / bound path) and eagerly;
    an immediate 0 is still refused at the user's line (TIK checks immediates)."""
    counts = [5, 0, 128, 3]
    x = data(np.float16, 512)
    d = data(np.float16, 512)

    def body(ti, ub):
        arr = ti.ScalarArray("int32", len(counts), init_value=counts)
        with ti.for_range(0, len(counts)) as i:
            n = ti.Scalar("int32", init_value=arr[i])
            ti.vadds(n, ub["d"][i * 128:], ub["x"][i * 128:], 1.0, 1, 1, 1, 8, 8, mask_mode="counter")
            ti.vec_muls(n, ub["x"][i * 128:], ub["x"][i * 128:], 2.0, 1, 8, 8, mask_mode="counter")

    out = vec_kernel({"d": d, "x": x}, body, chip="Ascend310P3")
    want_d, want_x = d.copy(), x.copy()
    for i, c in enumerate(counts):
        s = slice(i * 128, i * 128 + c)
        want_d[s] = (x[s].astype(np.float64) + 1).astype(np.float16)
        want_x[s] = (x[s].astype(np.float64) * 2).astype(np.float16)
    np.testing.assert_array_equal(out["d"], want_d)
    np.testing.assert_array_equal(out["x"], want_x)
    out = vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vmaxs(ub["n"], ub["d"], ub["x"], 0.0, 1, 1, 1, 8, 8,
                                                             mask_mode="counter"),
                     chip="Ascend910B1", scalars={"n": ("int32", 0)})
    np.testing.assert_array_equal(out["d"], d)
    np.testing.assert_array_equal(out["x"], x)
    with raises_tik(IllegalOperand, match=r"test_vector_lanewise.py:\d+ .*mask = 0 is outside .*skip the instr"):
        vec_kernel({"d": d, "x": x}, lambda ti, ub: ti.vadds(0, ub["d"], ub["x"], 1.0, 1, 1, 1, 8, 8,
                                                           mask_mode="counter"), chip="Ascend310P3", build_only=True)
