"""Every user error of the CANN helper layer (para_check, topi util, platform, registration, legacy fixpipe,
tik-migrate) says what to do: each case below used to end at the rule, with no ` Fix: ` (audit k406, found by
running the suite with every formatted `PtoError` recorded). Cases marked `located` also name this file's line."""
import warnings

import numpy as np
import pytest

from tbe_compat import migrate, para_check as pc, platform as P, register, te_platform, topi_util
from tbe_compat.legacy_fixpipe import LegacyTensor, check_fixpipe_args
from pto_core.errors import PtoError


def _t(shape=(2, 16), dtype="float16", fmt="ND", **extra):
    return {"shape": list(shape), "ori_shape": list(shape), "format": fmt, "ori_format": fmt, "dtype": dtype, **extra}


@pc.check_op_params(pc.REQUIRED_INPUT, pc.DYNAMIC_INPUT, pc.REQUIRED_ATTR_INT, pc.OPTION_ATTR_LIST_INT,
                    pc.OPTION_ATTR_TYPE, pc.OPTION_ATTR_LIST_LIST_INT, pc.KERNEL_NAME)
def _op(x, xs, axis, perm=None, dst_type=None, pads=None, kernel_name="op"):
    return kernel_name


def _call(**kw):
    args = dict(x=_t(), xs=[_t()], axis=1, perm=[1, 0], dst_type="float32", pads=[[0, 1]], kernel_name="k")
    args.update(kw)
    return _op(**args)


@pc.check_input_type(dict, (list, tuple), str)
def _typed(x, axes, kernel_name="k"):
    return axes


def _soc(name, fn):
    def run():
        P.set_current_compile_soc_info(name)
        try:
            fn()
        finally:
            P.set_current_compile_soc_info("Ascend310")
    return run


def _l2_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        te_platform.te_set_l2_mode("x")


def _elewise():
    a = _t((-1, 3), range=[(1, 10), (3, 3)])
    c = _t((-1, 3), range=[(11, 20), (3, 3)])
    pc.check_elewise_shape_range([c, a])


CASES = [   # (id, call, fix fragment, located)
    ("check_shape not a list", lambda: pc.check_shape(3, param_name="x"), "list or tuple of ints", True),
    ("dim not an int", lambda: _call(x=_t(shape=(2, 0.5))), "every dim as a Python int", True),
    ("range length", lambda: _call(x=_t(shape=(-1, 16), range=[(1, 2)])), "one (low, high) range entry per dim",
     True),
    ("range order", lambda: _call(x=_t(shape=(-1,), range=[(8, 4)])), "0 <= low <= high", True),
    ("check_dtype tuple", lambda: pc.check_dtype("int8", ("float16", "float32"), param_name="x"),
     "cast the input to one of the listed dtypes", True),
    ("check_format", lambda: pc.check_format("NCHW", ["ND"], param_name="x"), "one of the listed formats", True),
    ("elewise ranges", _elewise, "overlapping ranges", True),
    ("not a dict", lambda: _call(x=[1, 2]), "pass a tensor dict", True),
    ("lacks a key", lambda: _call(x={"shape": [2], "format": "ND", "ori_shape": [2], "dtype": "float16"}),
     "add the key 'ori_format'", True),
    ("dynamic without range", lambda: _call(x=_t(shape=(-1, 16))), "add 'range'", True),
    ("bad format", lambda: _call(x=_t(fmt="NZ")), "CANN format name", True),
    ("dtype not a str", lambda: _call(x=_t(dtype=16)), "dtype as a str", True),
    ("unknown dtype", lambda: _call(x=_t(dtype="float8")), "CANN dtype name", True),
    ("missing input", lambda: _call(x=None), "pass a tensor dict for x", True),
    ("dynamic not a list", lambda: _call(xs=_t()), "xs as a list of tensor dicts", True),
    ("dynamic empty", lambda: _call(xs=[]), "at least one tensor dict in xs", True),
    ("attr type", lambda: _call(axis="1"), "pass axis as an int", True),
    ("attr missing", lambda: _call(axis=None), "pass the attribute axis", True),
    ("attr dtype name", lambda: _call(dst_type="fp32"), "CANN dtype name", True),
    ("attr not a list", lambda: _call(perm=5), "perm as a list or tuple", True),
    ("attr list of lists", lambda: _call(pads=[[0, 1], 2]), "list of lists of ints", True),
    ("kernel_name type", lambda: _call(kernel_name=7), "kernel_name as a str", True),
    ("kernel_name chars", lambda: _call(kernel_name="1kernel"), "like a C identifier", True),
    ("input dict key type", lambda: _typed({"dtype": 16}, [0]), "pass the dtype as a str", True),
    ("typed input", lambda: _typed({}, 0), "pass axes as list or tuple", True),
    ("check_dtype_rule", lambda: pc.check_dtype_rule("int8", ("float16",), param_name="x"),
     "cast the input", True),
    ("check_shape_rule list", lambda: pc.check_shape_rule("2,2"), "list or tuple of ints", True),
    ("check_shape_rule dim", lambda: pc.check_shape_rule([2.0]), "every dim as a Python int", True),
    ("check_kernel_name", lambda: pc.check_kernel_name("a b"), "like a C identifier", True),
    # topi.cce.util
    ("compare not a dict", lambda: topi_util.compare_tensor_dict_key([], {}, "dtype"), "as a tensor dict", True),
    ("compare no key", lambda: topi_util.compare_tensor_dict_key({"shape": [1]}, {"dtype": "f"}, "dtype"),
     "the key 'dtype'", True),
    ("compare unequal", lambda: topi_util.compare_tensor_dict_key({"shape": (2, 3)}, {"shape": (3, 2)}, "shape"),
     "equal shape", True),
    ("axis not int", lambda: topi_util.axis_check(4, [1.0]), "axis as an int", True),
    ("produce_shapes", lambda: topi_util.produce_shapes([2, 3], [4, 3]), "equal or 1", True),
    ("broadcast_shapes", lambda: topi_util.broadcast_shapes([2, 3], [4, 3], "my_op", "x1", "x2"), "equal or 1", True),
    ("device api dtype", lambda: topi_util.get_device_api_dtype("int8"), "pass one of double, float16", True),
    ("input dict key", lambda: topi_util.check_input_type_dict({"fmt": "ND"}, ("shape",), "x"), "use only the keys",
     True),
    ("input dict value", lambda: topi_util.check_input_type_dict({"shape": 2}, ("shape",), "x"),
     "as a list or tuple", True),
    # platform / te_platform / registration
    ("soc spec missing", _soc("Ascend910B1", lambda: P.get_soc_spec("pipev2_constraints")),
     "do not ask Ascend910B1", True),
    ("soc spec empty", _soc("Ascend910B1", lambda: P.get_soc_spec("memory_type")), "do not ask Ascend910B1", True),
    ("intrinsic", lambda: P.CceProductParams().getParams("Intrinsic_vfoo"), "api_check_support", True),
    ("stream id", lambda: P.CceProductParams().getParams("Sid_copy_gm_to_cbuf"), "drop the Sid_* query", False),
    ("get_bit_len", lambda: P.get_bit_len(16), "dtype name as a str", False),
    ("l2 mode", _l2_mode, "l2_mode such as 0 or 1", True),
    ("status check", lambda: te_platform.set_status_check(1), "pass True or False", True),
    ("product version", _soc("Ascend910B1", te_platform.get_product_version), "whose family is listed", True),
    ("register a non-function", lambda: register.register_operator("X")(5), "on a def", False),
    ("fusion buildcfg", lambda: register.set_fusion_buildcfg("X", [1]), "build_config as a dict", False),
    ("migrate group", lambda: migrate.listing(None, group="random"), "group=\"site\"", False),
]


@pytest.mark.parametrize("name,call,fix,located", CASES, ids=[c[0] for c in CASES])
def test_helper_error_states_a_fix(name, call, fix, located):
    with pytest.raises(PtoError) as e:
        call()
    text = str(e.value)
    assert " Fix: " in text and fix in text.split(" Fix: ", 1)[1], text
    if located:
        assert "test_error_fixes_cann.py:" in text, text


SRC32 = np.zeros((2, 16, 16), np.float32)
SRC_S32 = np.zeros((2, 16, 16), np.int32)


def _fixpipe(src=SRC32, **kw):
    args = dict(dst_dtype="float32", cburst_num=1, burst_len=2, dst_stride=0, src_stride=0)
    args.update(kw)
    return check_fixpipe_args(src, **args)


def _q(mode, param=None):
    return {"quantize_params": {"mode": mode, "mode_param": param}}


FIXPIPE = [
    ("quantize required", lambda: _fixpipe(dst_dtype="float16"), "'mode': 'fp322fp16'"),
    ("extend_params type", lambda: _fixpipe(extend_params=[1]), "extend_params as a dict"),
    ("quantize_params type", lambda: _fixpipe(dst_dtype="float16", extend_params={"quantize_params": "x"}),
     "quantize_params={'mode'"),
    ("quantize_params keys", lambda: _fixpipe(dst_dtype="float16",
                                              extend_params={"quantize_params": {"mode": "fp322fp16"}}), "both keys"),
    ("quantize mode", lambda: _fixpipe(dst_dtype="float16", extend_params=_q("int322fp16", 1.0)),
     "'fp322fp16' for float32 src"),
    ("mode_param not None", lambda: _fixpipe(dst_dtype="float16", extend_params=_q("fp322fp16", 1.0)),
     "'mode_param': None"),
    ("mode_param missing", lambda: _fixpipe(SRC_S32, dst_dtype="float16", extend_params=_q("int322fp16")),
     "'mode_param': 1.0"),
    ("mode_param scalar dtype", lambda: _fixpipe(SRC_S32, dst_dtype="float16",
                                                 extend_params=_q("int322fp16", np.float32(0.5))),
     "Scalar float16"),
    ("mode_param tensor dtype", lambda: _fixpipe(SRC_S32, dst_dtype="float16",
                                                 extend_params=_q("int322fp16", np.ones(16, np.float32))),
     "float16 [16] in L1"),
    ("mode_param scope", lambda: _fixpipe(SRC_S32, dst_dtype="float16", extend_params=_q(
        "int322fp16", LegacyTensor(np.ones(16, np.float16), 0, "ub"))), "in L1 (scope_cbuf)"),
    ("same-type quantize", lambda: _fixpipe(extend_params=_q("fp322fp16")), "quantize_params=None"),
    ("overflow_mode", lambda: _fixpipe(overflow_mode="wrap"), "overflow_mode=\"saturation\""),
    ("src dtype", lambda: _fixpipe(np.zeros((2, 16, 16), np.float64)), "float16, float32 or int32"),
    ("src scope", lambda: _fixpipe(LegacyTensor(SRC32, 0, "ub")), "L0C (L1OUT) matmul result"),
    ("bias and ewa", lambda: _fixpipe(extend_params={"bias": np.zeros(16, np.float32),
                                                      "element-wise-add": np.zeros((2, 16, 16), np.float32)}),
     "only one of bias and element-wise-add"),
    ("bias dtype", lambda: _fixpipe(extend_params={"bias": np.zeros(16, np.int32)}), "declare bias float32"),
    ("relu with bias", lambda: _fixpipe(extend_params={"bias": np.zeros(16, np.float32), "relu": True}),
     "drop relu"),
]


@pytest.mark.parametrize("name,call,fix", FIXPIPE, ids=[c[0] for c in FIXPIPE])
def test_legacy_fixpipe_error_states_a_fix(name, call, fix):
    with pytest.raises(PtoError) as e:
        call()
    text = str(e.value)
    assert " Fix: " in text and fix in text.split(" Fix: ", 1)[1], text
