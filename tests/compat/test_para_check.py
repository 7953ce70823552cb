"""para_check (check_op_params and the util checks), topi.cce.util and the
registration decorators: each check passes good input and rejects bad input with a
RuntimeError-compatible error naming the bad value and what is allowed."""
import pytest

from tbe_compat import para_check as pc
from tbe_compat import register, te_platform, tik_util, topi_util
from tbe_compat.para_check import ParamCheckError
from tbe_compat.platform import set_current_compile_soc_info


def tensor(shape=(2, 16), dtype="float16", fmt="ND", **extra):
    return {"shape": list(shape), "ori_shape": list(shape), "format": fmt, "ori_format": fmt, "dtype": dtype, **extra}


@pc.check_op_params(pc.REQUIRED_INPUT, pc.OPTION_INPUT, pc.DYNAMIC_INPUT, pc.REQUIRED_OUTPUT, pc.REQUIRED_ATTR_INT,
                    pc.OPTION_ATTR_FLOAT, pc.OPTION_ATTR_LIST_INT, pc.OPTION_ATTR_BOOL, pc.OPTION_ATTR_STR,
                    pc.OPTION_ATTR_TYPE, pc.OPTION_ATTR_LIST_LIST_INT, pc.KERNEL_NAME)
def op(x, bias, xs, y, axis, alpha=None, perm=None, flag=None, mode=None, dst_type=None, pads=None,
       kernel_name="op"):
    """An entry function decorated like real kernels."""
    return kernel_name


def call(**overrides):
    args = dict(x=tensor(), bias=None, xs=[tensor(), tensor((4,))], y=tensor(), axis=1, alpha=0.5, perm=[1, 0],
                flag=True, mode="r", dst_type="float32", pads=[[0, 1], [1, 0]], kernel_name="my_kernel_1")
    args.update(overrides)
    return op(**args)


def expect(match, **overrides):
    with pytest.raises(ParamCheckError, match=match) as info:
        call(**overrides)
    err = info.value
    assert isinstance(err, RuntimeError) and isinstance(err, ValueError)
    assert err.error_info["errCode"].startswith("E")
    assert err.args[0] is err.error_info or err.args[0] == err.error_info
    return err


def test_check_op_params_passes_good_arguments():
    assert call() == "my_kernel_1"
    assert op(tensor(), None, [tensor()], tensor(), 3) == "op"           # positional, defaults
    assert call(x=tensor(dtype="INT8"), bias=tensor(fmt="NC1HWC0"), alpha=None, kernel_name=None) is None


def test_wraps_keeps_the_entry_function_identity():
    assert op.__name__ == "op" and op.__doc__.startswith("An entry function")


@pytest.mark.parametrize("overrides, match", [
    (dict(x=None), r"mandatory parameter\[x\] is missing"),
    (dict(y=[1, 2]), r"parameter\[y\] must be a dict"),
    (dict(x={"shape": [2], "format": "ND", "ori_shape": [2], "dtype": "float16"}), r"lacks the item\[ori_format\]"),
    (dict(x=tensor(dtype="float8")), r"dtype of \[x\] is 'float8', it must be one of \[int4, int8"),
    (dict(x=tensor(dtype=16)), r"dtype of \[x\] must be a str"),
    (dict(x=tensor(fmt="NZ")), r"format of input\[x\] is 'NZ', it must be one of \[ND, NC"),
    (dict(x=tensor(shape=(2, 0.5))), r"must be an int, got float 0.5"),
    (dict(x=tensor(shape=(1,) * 9)), r"rank of x .* is 9, it must be in \[0, 8\]"),
    (dict(x=tensor(shape=(4, -3))), r"dim -3 of x .* must be >= 0"),
    (dict(bias=tensor(dtype="str")), r"dtype of \[bias\] is 'str'"),
    (dict(xs=[]), r"parameter\[xs\] is empty"),
    (dict(xs=tensor()), r"dynamic parameter\[xs\] must be a list or tuple"),
    (dict(xs=[tensor(), tensor(dtype="qint8")]), r"dtype of \[xs\] is 'qint8'"),
    (dict(axis=None), r"mandatory attribute\[axis\] is missing"),
    (dict(axis="1"), r"attribute\[axis\] must be int, got str '1'"),
    (dict(alpha=1), r"attribute\[alpha\] must be float, got int 1"),
    (dict(perm=(1, "0")), r"attribute\[perm\] must be int, got str '0'"),
    (dict(perm=5), r"attribute\[perm\] must be a list or tuple, got int 5"),
    (dict(flag="yes"), r"attribute\[flag\] must be bool"),
    (dict(mode=3), r"attribute\[mode\] must be str"),
    (dict(dst_type="fp32"), r"attribute\[dst_type\] is 'fp32', it must be a dtype name"),
    (dict(pads=[[0, 1], 2]), r"every item of attribute\[pads\] must be a list of int"),
    (dict(kernel_name="1kernel"), r"kernel_name '1kernel' may only contain letters"),
    (dict(kernel_name="my-kernel"), r"kernel_name 'my-kernel'"),
    (dict(kernel_name="k" * 201), r"201 characters long, it must be at most 200"),
    (dict(kernel_name=7), r"parameter\[kernel_name\] must be a str"),
])
def test_check_op_params_rejects(overrides, match):
    expect(match, **overrides)


def test_error_fields_name_the_operand_and_limit():
    err = expect(r"dtype of \[x\]", x=tensor(dtype="float8"))
    assert err.operand == "x" and err.op == "op" and err.value == "float8"
    assert "float16" in err.limit and err.error_info["errCode"] == pc.OP_ERROR_CODE_008


def test_dynamic_shapes_use_the_dynamic_rules():
    dyn = tensor(shape=(-1, 16), range=[(1, None), (16, 16)])
    assert call(x=dyn) == "my_kernel_1"
    unknown_rank = tensor(shape=(-2,))
    assert call(x=unknown_rank) == "my_kernel_1"
    assert unknown_rank["range"] == [(0, None)]                          # CANN fills the range for -2
    expect(r"dynamic input\[x\] lacks the item\[range\]", x=tensor(shape=(-1, 16)))
    expect(r"range entry \(8, 4\) must satisfy", x=tensor(shape=(-1,), range=[(8, 4)]))
    expect(r"the shape \(-1, 16\) has 2 dims but the range has 1", x=tensor(shape=(-1, 16), range=[(1, 2)]))
    expect(r"dim -3 of dynamic shape", x=tensor(shape=(-1, -3), range=[(1, 2), (1, 2)]))


def test_unknown_flags_leave_their_parameters_unchecked_as_in_cann():
    # CANN inplace_index_add: @op_utils.check_op_params(dict, dict, dict, dict, int, str)
    with pytest.warns(pc.UnknownParamFlagWarning, match=r"flags #0 <class 'dict'>, #1 <class 'int'> are not "
                                                        "para_check constants") as rec:
        @pc.check_op_params(dict, int, pc.KERNEL_NAME)
        def index_add(var, axis, kernel_name="k"):
            return axis
    assert len(rec) == 1 and rec[0].filename == __file__
    assert index_add({"shape": (2,)}, "not an int", kernel_name="k") == "not an int"
    with pytest.raises(ParamCheckError, match="kernel_name"):
        index_add(None, 0, kernel_name="1bad")          # known flags are still checked
    with pytest.warns(pc.UnknownParamFlagWarning, match="'REQUIRED_TENSOR'"):
        pc.check_op_params(pc.REQUIRED_INPUT, "REQUIRED_TENSOR")


def test_check_shape_and_dtype_and_format():
    pc.check_shape([1, 2, 3], param_name="x")
    pc.check_shape([], param_name="x")
    with pytest.raises(ParamCheckError, match=r"size \(product of dims\) of x .* is 0, it must be >= 1"):
        pc.check_shape([4, 0], min_size=1, param_name="x")
    with pytest.raises(ParamCheckError, match="must be a list or tuple, got int 3"):
        pc.check_shape(3, param_name="x")
    pc.check_dtype("FLOAT16", ("float16", "float32"))
    with pytest.raises(ParamCheckError, match=r"dtype of x is 'int8', it must be one of \[float16, float32\]"):
        pc.check_dtype("int8", ("float16", "float32"), param_name="x")
    with pytest.raises(ParamCheckError, match="dtype of x is None"):
        pc.check_dtype(None, param_name="x")
    pc.check_format("NCHW")
    with pytest.raises(ParamCheckError, match=r"format of x is 'NCHW', it must be one of \[ND\]"):
        pc.check_format("NCHW", ["ND"], param_name="x")


def test_util_checks():
    pc.check_shape_rule([1, 2])
    with pytest.raises(ParamCheckError, match=r"has 0 dims, it must have \[1, 8\]"):
        pc.check_shape_rule([])
    with pytest.raises(ParamCheckError, match=r"dim 0 of shape \(2, 0\) must be in \[1, 200000000\]"):
        pc.check_shape_rule([2, 0])
    with pytest.raises(ParamCheckError, match="must be an int, got float"):
        pc.check_shape_rule([2.0])
    with pytest.raises(ParamCheckError, match="must be a list or tuple"):
        pc.check_shape_rule("2,2")
    pc.check_dtype_rule("Float16", ("float16",))
    with pytest.raises(ParamCheckError, match=r"dtype of x is 'int8', it must be one of \[float16\]"):
        pc.check_dtype_rule("int8", ("float16",), param_name="x")
    with pytest.raises(ParamCheckError, match="dtype is None"):
        pc.check_dtype_rule(None, ("float16",))
    assert pc.check_shape_size([2, 3]) == 6
    with pytest.raises(ParamCheckError, match="size of shape .* is 65536, it must be less than 65536"):
        pc.check_shape_size([256, 256], limit=65536)
    pc.check_kernel_name("_ok_1")
    pc.check_kernel_name(None)
    with pytest.raises(ParamCheckError, match="kernel_name 'a b'"):
        pc.check_kernel_name("a b")
    assert pc.is_scalar([1]) and not pc.is_scalar([2]) and not pc.is_scalar(1)
    with pytest.warns(DeprecationWarning):
        assert pc.check_tensor_shape_size([2, 5]) == 10


def test_check_elewise_shape_range():
    static = [tensor((2, 3)), tensor((2, 3))]
    pc.check_elewise_shape_range(static)                                # static inputs: nothing to check
    a = tensor((-1, 3), range=[(1, 10), (3, 3)])
    b = tensor((-1, 3), range=[(5, 20), (3, 3)])
    pc.check_elewise_shape_range([a, b])
    c = tensor((-1, 3), range=[(11, 20), (3, 3)])
    with pytest.raises(ParamCheckError, match=r"ranges \(1, 10\) and \(11, 20\) of dim -2 do not intersect"):
        pc.check_elewise_shape_range([c, a])
    one = tensor((1, 3), range=[(1, 1), (3, 3)])
    pc.check_elewise_shape_range([c, one], support_broadcast=True)


def test_check_input_type_decorator():
    @pc.check_input_type(dict, (list, tuple), str)
    def entry(x, axes, kernel_name="k"):
        return axes

    assert entry({"shape": (2,), "dtype": "float16"}, [0]) == [0]
    with pytest.raises(ParamCheckError, match=r"input axes must be list or tuple, got int 0"):
        entry({"shape": (2,)}, 0)
    with pytest.raises(ParamCheckError, match=r"input kernel_name must be str"):
        entry({}, [0], kernel_name=3)
    with pytest.raises(ParamCheckError, match="the dtype of x must be str, got int"):
        entry({"dtype": 16}, [0])


# ---------------------------------------------------------------------------- topi.cce.util


def test_topi_util_checks():
    assert topi_util.check_tensor_shape_size([4, 8]) == 32
    with pytest.raises(ParamCheckError, match="too large: 4294967296 elements, at most 2147483648"):
        topi_util.check_tensor_shape_size([65536, 65536])
    assert topi_util.check_shape_size([3, 3], 9) == 9
    topi_util.check_reduce_shape_rule([100, 100])
    with pytest.raises(ParamCheckError, match="reduce size .* is 400000000"):
        topi_util.check_reduce_shape_rule([20000, 20000])
    topi_util.compare_tensor_dict_key({"dtype": "Float16"}, {"dtype": "float16"}, "dtype")
    topi_util.compare_tensor_dict_key({"shape": (2, 3)}, {"shape": [2, 3]}, "shape")
    with pytest.raises(ParamCheckError, match=r"input one \[2, 3\] and input two \[3, 2\] are not equal"):
        topi_util.compare_tensor_dict_key({"shape": (2, 3)}, {"shape": (3, 2)}, "shape")
    with pytest.raises(ParamCheckError, match="has no key 'dtype'"):
        topi_util.compare_tensor_dict_key({"shape": [1]}, {"dtype": "f"}, "dtype")
    with pytest.raises(ParamCheckError, match="must be a dict"):
        topi_util.compare_tensor_dict_key([], {}, "dtype")


def test_topi_axis_check():
    assert topi_util.axis_check(4, -1) == 3
    assert topi_util.axis_check(4, [3, -4, 0, 1]) == [0, 1, 3]
    with pytest.raises(ParamCheckError, match=r"axis 4 is out of range for a rank-4 shape, it must be in \[-4, 3\]"):
        topi_util.axis_check(4, 4)
    with pytest.raises(ParamCheckError, match="axis value must be an int, got float"):
        topi_util.axis_check(4, [1.0])
    assert topi_util.refine_axis([0, -1], [1, 5, 7]) == [2]
    assert not topi_util.check_reduce_need_refine([1, 5], [0])
    assert topi_util.produce_shapes([2, 1, 3], [4, 1]) == ([2, 1, 3], [1, 4, 1], [2, 4, 3])
    with pytest.raises(ParamCheckError, match="do not broadcast"):
        topi_util.produce_shapes([2, 3], [4, 3])
    assert topi_util.scalar2tensor_one([]) == [1] and topi_util.get_divisors(12) == [1, 2, 3, 4, 6, 12]


def test_topi_product_version_follows_the_chip():
    assert topi_util.get_product_version() == "mini" and topi_util.is_mini_version()
    set_current_compile_soc_info("Ascend910")
    assert topi_util.is_cloud_version() and not topi_util.is_mini_or_lhisi_version()
    set_current_compile_soc_info("Ascend910B1")
    with pytest.raises(ParamCheckError, match="no product version for Ascend910B"):
        topi_util.get_product_version()


def test_param_check_errors_name_the_callers_file_and_line():
    """A failed CANN check raised from a helper the kernel calls (the 2020 topi
    get_product_version on a chip it does not know, a check_op_params decorator) names the
    caller's file:line and what to do, like every other PtoError (public MindSpore cube
    kernels call get_product_version at top level to pick a Dprofile)."""
    import inspect
    set_current_compile_soc_info("Ascend310P3")
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(ParamCheckError) as ei:
        topi_util.get_product_version()
    err = ei.value
    assert err.where is not None and err.where.file == __file__ and err.where.line == line
    assert str(err).startswith(f"{__file__}:{line}: ") and "Fix:" in str(err)
    with pytest.raises(ParamCheckError) as ei:    # raised by the decorator: the innermost user frame is call()
        call(x=tensor(dtype="float8"))
    assert ei.value.where is not None and ei.value.where.file == __file__


# ---------------------------------------------------------------------------- registration


def test_registration_decorators_record_and_return_the_function():
    def compute(x):
        return x

    def entry(x):
        return x + 1

    assert register.register_op_compute("AddTest", op_mode="static")(compute) is compute
    assert register.get_op_compute("AddTest", "static").func is compute
    assert register.get_op_compute("AddTest") is None                       # registered as static only
    assert register.register_operator("AddTest", pattern="ElemWise")(entry) is entry
    assert register.get_operator("AddTest").get_func()(1) == 2
    assert register.get_op_register_pattern()["AddTest"] == "ElemWise"
    assert register.fusion_manager.register("add_test")(compute) is compute
    assert register.fusion_manager.get_op_compute("add_test") is compute
    assert register.fusion_manager.has_op_compute("add_test")
    assert register.register_fusion_compute("FusedTest")(compute) is compute
    assert register.get_op_compute("FusedTest", "static").support_fusion
    register.add_compile_info("vars", {"ub_size": 1024})
    assert register.get_compile_info()["vars"] == {"ub_size": 1024}
    register.set_fusion_buildcfg("AddTest", {"x": 1})
    assert register.get_fusion_buildcfg("AddTest") == {"x": 1}
    register.reset()
    assert register.get_fusion_buildcfg("AddTest") is None
    before = len(register.get_all_fusion_pass())
    register.register_fusion_pass()(compute)
    assert len(register.get_all_fusion_pass()) == before + 1


def test_registration_errors_name_the_bad_value():
    with pytest.raises(Exception, match="op_type must be a non-empty str, got 3"):
        register.register_operator(3)
    with pytest.raises(Exception, match="decorates a function, got int"):
        register.register_operator("X")(5)
    with pytest.raises(Exception, match="build_config must be a dict"):
        register.set_fusion_buildcfg("X", [1])


# ---------------------------------------------------------------------------- small legacy utilities


def test_tik_util():
    assert tik_util.reduce_mul([2, 3, 4]) == 24 and tik_util.reduce_mul([]) == 1
    assert tik_util.ceil_div(33, 32) == 2 and tik_util.ceil_div(32, 32) == 1
    assert tik_util.DTYPE_SIZE["float16"] == 2 and tik_util.DTYPE_SIZE["int64"] == 8
    with pytest.raises(Exception, match="divisor must be positive, got 0"):
        tik_util.ceil_div(1, 0)
    assert topi_util.shape_to_list((2, 3)) == [2, 3]


def test_te_set_l2_mode_records_the_mode():
    from tbe_compat.platform import CceProductParams, PlatformError, TbeDeprecationWarning
    with pytest.warns(TbeDeprecationWarning, match="te_set_l2_mode"):
        te_platform.te_set_l2_mode(1)
    assert CceProductParams().get_build_option("l2_mode") == 1
    with pytest.warns(TbeDeprecationWarning), pytest.raises(PlatformError, match="l2_mode must be an int, got 'x'"):
        te_platform.te_set_l2_mode("x")


# --------------------------------------------------------------------------------------
# CANN's shape helpers (topi.cce.util, te.utils.op_utils / para_check, tbe.common.utils.shape_util)
# --------------------------------------------------------------------------------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
import numpy as np  # noqa: E402

_shapes = st.lists(st.integers(1, 4), min_size=1, max_size=5)


@st.composite
def _shape_and_axes(draw):
    shape = draw(_shapes)
    axes = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True))
    return shape, sorted(axes)


def _reduce_same(shape, axes, new_shape, new_axes):
    """Independent reference: summing over ``axes`` equals summing the reshaped data over ``new_axes``."""
    data = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    assert int(np.prod(new_shape)) == data.size
    want = data.sum(axis=tuple(axes)).ravel()
    got = data.reshape(new_shape).sum(axis=tuple(new_axes)).ravel() if new_axes else data.ravel()
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(_shape_and_axes())
def test_simplify_axis_shape_and_refine_shape_axes_keep_the_reduction(case):
    shape, axes = case
    new_shape, new_axes = topi_util.simplify_axis_shape(shape, axes)
    _reduce_same(shape, axes, new_shape, new_axes)
    # adjacent reduce axes and adjacent kept axes are fused: no two neighbours of the same kind
    kinds = [i in new_axes for i in range(len(new_shape))]
    assert all(a != b for a, b in zip(kinds, kinds[1:]))
    new_shape, _ = topi_util.refine_shape_axes(shape, [a - len(shape) for a in axes])
    if len(shape) > 1:
        assert int(np.prod(new_shape)) == int(np.prod(shape)) and (1 not in new_shape or new_shape == [1])


@settings(max_examples=60, deadline=None)
@given(_shape_and_axes())
def test_shape_refine_drops_ones_and_renumbers_axes(case):
    shape, axes = case
    new_shape, new_axes = topi_util.shape_refine(list(shape), axes)
    if any(shape[a] == 1 for a in axes):             # CANN leaves such shapes alone
        assert (new_shape, new_axes) == (shape, axes)
    else:
        assert new_shape == [d for d in shape if d > 1] or new_shape == [1]
        _reduce_same(shape, axes, new_shape, new_axes)
    assert topi_util.shape_refine([1, 3, 1, 2]) == [3, 2] and topi_util.shape_refine([1, 1]) == [1]


@settings(max_examples=60, deadline=None)
@given(_shapes, _shapes)
def test_broadcast_helpers_match_numpy(a, b):
    a = [d if d != 3 else 1 for d in a]               # make broadcastable pairs likely
    try:
        want = list(np.broadcast_shapes(tuple(a), tuple(b)))
    except ValueError:
        with pytest.raises(ParamCheckError, match="could not be broadcast"):
            topi_util.broadcast_shapes(a, b, "my_op", "x1", "x2")
        return
    pa, pb, out = topi_util.broadcast_shapes(a, b)
    assert out == want and len(pa) == len(pb) == len(want)
    assert topi_util.unify_broadcast_shapes([a, b])[-1] == want
    fa, fb = topi_util.refine_shapes_for_broadcast(a, b)
    xa, xb = np.ones(a, np.int64), np.arange(int(np.prod(b)), dtype=np.int64).reshape(b)
    np.testing.assert_array_equal((xa.reshape(fa) * xb.reshape(fb)).ravel(), (xa * xb).ravel())


def test_shape_helper_known_values_and_errors():
    assert topi_util.refine_shape_axes((2, 3, 4, 5, 6), (1, -3)) == ([2, 12, 30], [1])
    # CANN reports each fused reduce run by its first original index, even after fusing (kept as is)
    assert topi_util.refine_shape_axes((2, 3, 4, 5, 6), (3,)) == ([24, 5, 6], [3])
    assert topi_util.simplify_axis_shape([2, 3, 4, 5], [1, 2]) == ([2, 12, 5], [1])
    assert topi_util.simplify_axis_shape([7, 3], []) == ([7], [0])          # CANN's answer for no axes
    assert topi_util.squeeze_shape((1, 4, 1)) == [4]
    assert topi_util.wrap_axes_to_positive(-1, 3) == [2]
    with pytest.raises(ParamCheckError, match=r"axis 3 is out of range: axes must be in \[-3, 3\)"):
        topi_util.wrap_axes_to_positive([0, 3], 3)
    # 4-D axis -> NC1HWC0 axis (CANN's 2020 name is misspelt "transfrom")
    assert [topi_util.axis_transfrom_5d(a, "NHWC") for a in (0, 1, 2, 3, -1, -4)] == [0, 2, 3, 1, -4, -5]
    assert [topi_util.axis_transform_5d(a, "NCHW") for a in (1, -1)] == [1, -2]
    assert topi_util.axis_transform_5d(2, "ND") == 2
    assert topi_util.get_device_api_dtype("float16") == 1
    with pytest.raises(ParamCheckError, match="knows no dtype 'int8'"):
        topi_util.get_device_api_dtype("int8")
    topi_util.check_input_type_dict({"shape": [2], "dtype": "float16"}, ("shape", "dtype"), "x")
    with pytest.raises(ParamCheckError, match=r"x\['shape'\] must be a list or tuple"):
        topi_util.check_input_type_dict({"shape": 2}, ("shape",), "x")
    with pytest.raises(ParamCheckError, match="unexpected key 'fmt'"):
        topi_util.check_input_type_dict({"fmt": "ND"}, ("shape",), "x")
    five_hd = {"format": "NC1HWC0", "dtype": "float16", "ori_shape": [1], "ori_format": "NCHW"}
    assert topi_util.check_and_init_5hdc_reduce_support(five_hd, [1, 4], "k") is True


def test_dynamic_shape_checks_and_string_enums():
    pc.check_dynamic_shape([-1, 16, -2])
    with pytest.raises(ParamCheckError, match=r"should be in the range of \[-2, 2147483647\], but actually is \[-3\]"):
        pc.check_dynamic_shape([4, -3], param_name="x")
    pc.check_range([-1, 8], [(1, None), (8, 8)])
    with pytest.raises(ParamCheckError, match="must satisfy 0 <= low <= high"):
        pc.check_range([-1], [(9, 2)], param_name="x")
    # CANN's OpParamInfoKey / TensorFormat are plain string attributes
    assert tensor()[pc.OpParamInfoKey.SHAPE] == [2, 16] and pc.TensorFormat.NC1HWC0 == "NC1HWC0"
    assert pc.OP_ERROR_CODE_000 == "E80000" and pc.OP_ERROR_CODE_013 == "E80013" and pc.OP_ERROR_CODE_027 == "E80027"
    # CANN 2025's dtype and format lists
    assert call(x=tensor(dtype="hifloat8", fmt="FRACTAL_NZ_C0_32")) == "my_kernel_1"
    expect("dtype", x=tensor(dtype="float8_e4m3"))


def test_check_dtype_with_a_str_check_list_names_the_str():
    """CANN ops write ``check_list = ("float32")`` (a str, no trailing comma); CANN's ``in`` test then
    matches substrings, and so does the simulator. The refusal names the str, not its characters
    (sparse_apply_proximal_adagrad_d's accum check)."""
    pc.check_dtype("float32", ("float32"), param_name="accum")
    with pytest.raises(ParamCheckError, match=r"must be one of 'float32' \(check_list is a str.*trailing comma: "
                                              r"\('float32',\)") as info:
        pc.check_dtype("float16", ("float32"), param_name="accum")
    assert "[f, l, o" not in str(info.value)
    with pytest.raises(ParamCheckError, match=r"must be one of 'float16' \(check_list is a str"):
        pc.check_dtype_rule("int8", "float16", param_name="x")
