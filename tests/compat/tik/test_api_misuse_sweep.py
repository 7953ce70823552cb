"""Property: a TIK call with one argument replaced by a wrong value (wrong type, out of range, a run-time
Scalar holding a bad value, a tensor of the wrong scope or dtype) either runs or raises the facade's
error at the calling line of this file with a fix -- never a bare Python exception from inside the
simulator, and never an error without the user's location. After an error in the call itself, the
same instance still builds and runs a kernel correctly (bad input does not corrupt its state). The
case table holds the most used APIs of tik_usage.md with valid arguments; hypothesis picks the API,
the argument and the bad value."""
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from pto_core.errors import PtoError
from tbe import tik
from tbe.common.platform import set_current_compile_soc_info
from tbe_compat import platform

HERE = __file__


def _tensors(ti, vector_core=False):
    t = {}
    for name, dtype, shape, scope in (
            ("gm16", "float16", (256,), tik.scope_gm), ("out16", "float16", (256,), tik.scope_gm),
            ("gmo", "float16", (16, 16, 16), tik.scope_gm),
            ("ub16", "float16", (256,), tik.scope_ubuf), ("ub16b", "float16", (256,), tik.scope_ubuf),
            ("ub32", "float32", (256,), tik.scope_ubuf), ("ubi32", "int32", (256,), tik.scope_ubuf),
            ("ubu16", "uint16", (256,), tik.scope_ubuf), ("l1", "float16", (256,), tik.scope_cbuf),
            ("l1a", "float16", (16, 16, 16), tik.scope_cbuf), ("l1b", "float16", (16, 16, 16), tik.scope_cbuf),
            ("l0a", "float16", (16, 16, 16), tik.scope_ca), ("l0b", "float16", (16, 16, 16), tik.scope_cb),
            ("l0c", "float32", (16, 16, 16), tik.scope_cc), ("l0c16", "float16", (16, 16, 16), tik.scope_cc),
            ("ubi32b", "int32", (256,), tik.scope_ubuf)):
        if scope in (tik.scope_gm, tik.scope_ubuf) or not vector_core:
            t[name] = ti.Tensor(dtype, shape, name=name, scope=scope)
    for name, dtype, value in (("s_two", "int32", 2), ("s_f16", "float16", 1.5), ("s_big", "int32", 2 ** 30),
                               ("s_neg", "int32", -5), ("s_zero", "int32", 0), ("s_i64", "int64", 300),
                               ("s_f32", "float32", 2.5)):
        t[name] = ti.Scalar(dtype, name=name, init_value=value)
    t["ub16_odd"] = t["ub16"][3:]            # not 32-byte aligned
    t["ub16_tail"] = t["ub16"][240:]         # 16 elements left
    t["ub16_dyn"] = t["ub16"][t["s_two"]:]   # run-time offset
    t["ub16_list"] = [t["ub16"][16 * j] for j in range(8)]      # scatter_v* block address lists
    t["ub16b_list"] = [t["ub16b"][16 * j] for j in range(8)]
    return t


#: wrong values: plain Python values, or the name of a tensor / Scalar made by `_tensors`
BAD_VALUES = (None, -1, 0, 1.5, "abc", 2 ** 40, -2 ** 33, [1], (1, 2), True, np.int64(3),
              "s_two", "s_f16", "s_big", "s_neg", "s_zero", "s_i64",
              "ub16", "ub32", "ubi32", "gm16", "l1", "l0a", "l0c", "gmo",
              "ub16_odd", "ub16_tail", "ub16_dyn")


def _loop(ti, t, a):
    with ti.for_range(*a) as i:
        t["s_two"].set_as(i)


def _vgather(ti, t, a):
    ti.vector_dup(64, t["ubi32b"], 4, 1, 1, 8)        # byte offsets into src
    ti.vector_dup(64, t["ub32"], 1.0, 1, 1, 8)
    ti.vgather(*a)


def _h_cmpv_sel(ti, t, a):
    m = ti.Tensor("bool", (256,), name="hmask", scope=tik.scope_ubuf)
    ti.h_cmpv(m, a[0], a[1], a[2])
    ti.h_sel(t["ub16"], a[0], a[1], m)


def _load_l0(ti, t):
    ti.data_move(t["l1a"], t["gm16"], 0, 1, 16, 0, 0)
    ti.data_move(t["l1b"], t["gm16"], 0, 1, 16, 0, 0)
    ti.load2dv1(t["l0a"], t["l1a"], 0, 16, 1, 0, False)
    ti.load2dv1(t["l0b"], t["l1b"], 0, 16, 1, 0, False)


def _mmad(ti, t, a):
    _load_l0(ti, t)
    ti.mmad(*a)


def _fixpipe(ti, t, a):
    _load_l0(ti, t)
    ti.mmad(t["l0c"], t["l0a"], t["l0b"], 16, 256, 16, 0)
    ti.fixpipe(*a)


_FP16_OUT = {"quantize_params": {"mode": "fp322fp16", "mode_param": None}}

#: name -> (call(ti, tensors, args), valid arguments; strings name entries of `_tensors`)
CASES = {
    "data_move": (lambda ti, t, a: ti.data_move(*a), ["ub16", "gm16", 0, 1, 8, 0, 0]),
    "vec_add": (lambda ti, t, a: ti.vec_add(*a), [128, "ub16", "ub16", "ub16", 2, 8, 8, 8]),
    "vadd": (lambda ti, t, a: ti.vadd(*a), [128, "ub16", "ub16", "ub16", 2, 1, 1, 1, 8, 8, 8]),
    "vmuls": (lambda ti, t, a: ti.vmuls(*a), [128, "ub16", "ub16", 2.0, 2, 1, 1, 8, 8]),
    "vec_muls": (lambda ti, t, a: ti.vec_muls(*a), [128, "ub16", "ub16", 2.0, 2, 8, 8]),
    "vector_dup": (lambda ti, t, a: ti.vector_dup(*a), [128, "ub16", 1.0, 2, 1, 8]),
    "vec_dup": (lambda ti, t, a: ti.vec_dup(*a), [128, "ub16", 1.0, 2, 8]),
    "vconv": (lambda ti, t, a: ti.vconv(*a), [64, "", "ub32", "ub16", 2, 1, 1, 8, 4]),
    "vec_conv": (lambda ti, t, a: ti.vec_conv(*a), [64, "none", "ub32", "ub16", 2, 8, 4]),
    "vcadd": (lambda ti, t, a: ti.vcadd(*a), [128, "ub16", "ub16", 1, 1, 1, 8]),
    "vcmax": (lambda ti, t, a: ti.vcmax(*a), [128, "ub16", "ub16", 1, 1, 1, 8]),
    "vexp": (lambda ti, t, a: ti.vexp(*a), [128, "ub16", "ub16", 2, 1, 1, 8, 8]),
    "vec_rec": (lambda ti, t, a: ti.vec_rec(*a), [128, "ub16", "ub16", 2, 8, 8]),
    "vmax": (lambda ti, t, a: ti.vmax(*a), [128, "ub16", "ub16", "ub16", 2, 1, 1, 1, 8, 8, 8]),
    "vec_reduce_add": (lambda ti, t, a: ti.vec_reduce_add(*a), [128, "ub16", "ub16", "ub16b", 2, 8]),
    "vcmpv_gt": (lambda ti, t, a: ti.vcmpv_gt(*a), ["ubu16", "ub16", "ub16", 1, 1, 1, 8, 8]),
    "vsel": (lambda ti, t, a: ti.vsel(*a), [128, 0, "ub16", "ubu16", "ub16", "ub16", 1, 1, 1, 1]),
    "tensor_mov": (lambda ti, t, a: ti.tensor_mov(*a), ["ub16", "gm16", "", 1, 8, 0, 0]),
    "Scalar": (lambda ti, t, a: ti.Scalar(*a), ["int32", "s", 3]),
    "Tensor": (lambda ti, t, a: ti.Tensor(*a), ["float16", (16,), tik.scope_ubuf, "t"]),
    "for_range": (_loop, [0, 4]),
    "set_as": (lambda ti, t, a: t["s_two"].set_as(*a), [5]),
    "getitem": (lambda ti, t, a: t["ub16"].__getitem__(*a), [3]),
    "reinterpret_cast_to": (lambda ti, t, a: t["ub16"].reinterpret_cast_to(*a), ["int16"]),
    "h_add": (lambda ti, t, a: ti.h_add(*a), ["ub16", "ub16", "ub16"]),
    "h_cast": (lambda ti, t, a: ti.h_cast(*a), ["ub32", "ub16", "none"]),
    "load2dv1": (lambda ti, t, a: ti.load2dv1(*a), ["l0a", "l1a", 0, 16, 1, 0, False]),
    "mmad": (_mmad, ["l0c", "l0a", "l0b", 16, 256, 16, 0]),
    "matmul": (lambda ti, t, a: ti.matmul(*a), ["l0c", "l1a", "l1b", 16, 256, 16]),
    "fixpipe": (_fixpipe, ["gmo", "l0c", 1, 2, 0, 0, _FP16_OUT]),
    "vec_sel": (lambda ti, t, a: ti.vec_sel(*a), [128, 0, "ub16", "ubu16", "ub16", "ub16", 1, 8, 8, 8]),
    "vcmpvs_gt": (lambda ti, t, a: ti.vcmpvs_gt(*a), ["ubu16", "ub16", 1.0, 1, 1, 8], "Ascend910B1"),
    "vcmp_lt": (lambda ti, t, a: ti.vcmp_lt(*a), [128, "ub16", "ub16", 1, 1]),
    "mov_tensor_to_cmpmask": (lambda ti, t, a: ti.mov_tensor_to_cmpmask(*a), ["ubu16"]),
    "vec_reduce_max": (lambda ti, t, a: ti.vec_reduce_max(*a), [128, "ub16", "ub16", "ub16b", 2, 8, False]),
    "vec_cpadd": (lambda ti, t, a: ti.vec_cpadd(*a), [128, "ub16", "ub16", 1, 8, 8]),
    "vnchwconv": (lambda ti, t, a: ti.vnchwconv(*a),
                  [False, False, ["ub16"] * 16, ["ub16b"] * 16, 1, 0, 0]),
    "vconcat": (lambda ti, t, a: ti.vconcat(*a), ["ub16", "ub16b", 1, 0]),
    "vextract": (lambda ti, t, a: ti.vextract(*a), ["ub16", "ub16b", 1, 0]),
    "vrpsort16": (lambda ti, t, a: ti.vrpsort16(*a), ["ub16", "ub16b", 1]),
    "vreduce": (lambda ti, t, a: ti.vreduce(*a), [128, "ub16", "ub16b", 1, 1, 1, 8, 0], "Ascend910B1"),
    "vci": (lambda ti, t, a: ti.vci(*a), [64, "ubi32", 0, 1, 1, 8], "Ascend310P3"),
    "vgather": (_vgather, [64, "ub32", "ub32", "ubi32b", 1, 8], "Ascend910B1"),
    "scalar_max": (lambda ti, t, a: ti.scalar_max(*a), ["s_i64", "s_i64", -5]),
    "scalar_conv": (lambda ti, t, a: ti.scalar_conv(*a), ["round", "s_two", "s_f32"], "Ascend910B1"),
    "ScalarArray": (lambda ti, t, a: ti.ScalarArray(*a), ["int32", 4, "arr", [1, 2, 3, 4]]),
    "set_atomic_add": (lambda ti, t, a: (ti.set_atomic_add(*a), ti.set_atomic_add(0)), [2], "Ascend910B1"),
    "h_reduce_max": (lambda ti, t, a: ti.h_reduce_max(*a), ["s_f16", "ub16", 0]),
    "h_data_move": (lambda ti, t, a: ti.h_data_move(*a), ["ub16", "gm16"]),
    "data_move_pad": (lambda ti, t, a: ti.data_move_pad(*a), ["ub16", "gm16", 1, 64, 0, 0], "Ascend910B1"),
    "broadcast_ub_to_l0c": (lambda ti, t, a: ti.broadcast_ub_to_l0c(*a), ["l0c", "ub32", 1, 1, 0, 0]),
    "tensor_mov_l0c": (lambda ti, t, a: (_mmad(ti, t, [t["l0c"], t["l0a"], t["l0b"], 16, 256, 16, 0]),
                                          ti.tensor_mov(*a)), ["ub32", "l0c", "m", 1, 1, 0, 0]),
    "load3dv2": (lambda ti, t, a: ti.load3dv2(*a),
                 # padded so that Ho*Wo = 16 covers the block (TIK refuses blocks past Ho*Wo; h_cube409)
                 ["l0a", "l1a", [1, 1, 1, 1], 4, 4, 16, 16, 16, 0, 0, 1, 1, 3, 3, 1, 1, False, False, 0], "Ascend910B1"),
    "conv2d": (lambda ti, t, a: ti.conv2d(*a),
               ["l0c", "l1a", "l1b", [1, 4, 4, 16], [1, 1, 1, 16, 16], [1, 1], [0, 0, 0, 0], [1, 1]]),
    "vec_ln": (lambda ti, t, a: ti.vec_ln(*a), [128, "ub16", "ub16", 2, 8, 8]),
    "vec_abs": (lambda ti, t, a: ti.vec_abs(*a), [128, "ub16", "ub16", 2, 8, 8]),
    "vrsqrt": (lambda ti, t, a: ti.vrsqrt(*a), [128, "ub16", "ub16", 2, 1, 1, 8, 8]),
    "vec_max": (lambda ti, t, a: ti.vec_max(*a), [128, "ub16", "ub16", "ub16", 2, 8, 8, 8]),
    "vec_cmpv_gt": (lambda ti, t, a: ti.vec_cmpv_gt(*a), ["ubu16", "ub16", "ub16", 1, 8, 8]),
    "vec_reduce_min": (lambda ti, t, a: ti.vec_reduce_min(*a), [128, "ub16", "ub16", "ub16b", 2, 8, True]),
    "vcgadd": (lambda ti, t, a: ti.vcgadd(*a), [128, "ub16", "ub16", 1, 1, 1, 8]),
    "vcmin": (lambda ti, t, a: ti.vcmin(*a), [128, "ub16", "ub16", 1, 1, 1, 8]),
    "vtranspose": (lambda ti, t, a: ti.vtranspose(*a), ["ub16", "ub16b"]),
    "vec_trans": (lambda ti, t, a: ti.vec_trans(*a), ["ub16", "ub16b", 1, 1, 1]),
    "h_sub": (lambda ti, t, a: ti.h_sub(*a), ["ub16", "ub16", "ub16b"]),
    "h_mul": (lambda ti, t, a: ti.h_mul(*a), ["ub16", "ub16", 2.0]),
    "h_exp": (lambda ti, t, a: ti.h_exp(*a), ["ub16", "ub16"]),
    "h_reduce_sum": (lambda ti, t, a: ti.h_reduce_sum(*a), ["s_f16", "ub16", 0]),
    "h_cmpv_sel": (lambda ti, t, a: _h_cmpv_sel(ti, t, a), ["ub16", "ub16b", "GT"], "Ascend910B1"),
    "data_move_l1": (lambda ti, t, a: ti.data_move(*a), ["l1", "gm16", 0, 1, 16, 0, 0]),
    "slice_step": (lambda ti, t, a: ti.vec_adds(128, t["ub16"][a[0]:a[1]:a[2]], t["ub16"][0:128], 1.0, 1, 8, 8),
                   [0, 256, 2]),
    "scatter_vadd": (lambda ti, t, a: ti.scatter_vadd(*a), [128, "ub16_list", "ub16_list", "ub16b_list", 2, 8, 8, 8]),
    "scatter_vmuls": (lambda ti, t, a: ti.scatter_vmuls(*a), [128, "ub16_list", "ub16b_list", 2.0, 1, 8, 8]),
    "scatter_vabs": (lambda ti, t, a: ti.scatter_vabs(*a), [64, "ub16_list", "ub16b_list", 1, 0, 0]),
    "load3dv1": (lambda ti, t, a: ti.load3dv1(*a),
                 ["l0a", "l1a", [0, 0, 0, 0], 4, 4, 0, 0, 0, 0, 0, 1, 1, 3, 3, 1, 1, 1, 0, 1]),
}


def _value(t, v):
    if isinstance(v, list):
        return [_value(t, x) for x in v]
    return t[v] if isinstance(v, str) and v in t else v


def _attempt(name, index, bad, chip):
    """Build and run the case with argument ``index`` replaced by ``bad``; returns the error or None."""
    platform.reset_platform()
    set_current_compile_soc_info(*chip.split(":"))
    ti = tik.Tik()
    t = _tensors(ti, chip.endswith(":VectorCore"))
    call, valid = CASES[name][:2]
    args = [_value(t, v) for v in valid]
    if index is not None:
        args[index] = _value(t, bad)
    try:
        call(ti, t, args)
    except BaseException as e:    # the facade's errors are SystemExit too
        _still_usable(ti)
        return e
    try:
        ti.data_move(t["out16"], t["ub16"], 0, 1, 16, 0, 0)
        ti.BuildCCE(kernel_name="misuse", inputs=[t["gm16"]], outputs=[t["out16"]])
        ti.tikdb.start_debug({"gm16": np.arange(256).astype(np.float16)}, interactive=False)
    except BaseException as e:
        return e
    return None


def _still_usable(ti):
    """After an error in a TIK call, the same instance builds and runs a copy kernel correctly."""
    x = ti.Tensor("float16", (128,), name="after_x", scope=tik.scope_gm)
    y = ti.Tensor("float16", (128,), name="after_y", scope=tik.scope_gm)
    u = ti.Tensor("float16", (128,), name="after_u", scope=tik.scope_ubuf)
    ti.data_move(u, x, 0, 1, 8, 0, 0)
    ti.vec_adds(128, u, u, 1.0, 1, 8, 8)
    ti.data_move(y, u, 0, 1, 8, 0, 0)
    ti.BuildCCE(kernel_name="after_error", inputs=[x], outputs=[y])
    xs = np.arange(128).astype(np.float16)
    out, = ti.tikdb.start_debug({"after_x": xs}, interactive=False)
    assert np.array_equal(out, xs + np.float16(1)), "the instance computes wrongly after an error"


def _chip(name):
    return CASES[name][2] if len(CASES[name]) > 2 else "Ascend310"


def test_every_case_runs_with_its_valid_arguments():
    for name in CASES:
        assert _attempt(name, None, None, _chip(name)) is None, name


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_a_wrong_argument_is_a_located_error_or_runs(data):
    name = data.draw(st.sampled_from(sorted(CASES)), label="api")
    index = data.draw(st.integers(0, len(CASES[name][1]) - 1), label="argument")
    bad = data.draw(st.sampled_from(BAD_VALUES), label="value")
    assume(not (name == "for_range" and bad == "s_big"))     # a legal 2**30-trip loop: right, but slow
    e = _attempt(name, index, bad, _chip(name))
    if e is None:
        return
    assert isinstance(e, PtoError), f"{type(e).__name__}: {e}"
    assert e.where is not None and e.where.file == HERE, f"error not located in the kernel: {e}"
    assert e.hint, f"error without a fix: {e}"
