"""``impl.util.util_select_op_base``: CANN operator files import it at module level (op_select_format /
get_op_support_info helpers); the names exist, build CANN's JSON, and such a kernel file runs."""
import importlib
import json
import sys

import numpy as np

import tbe_compat.aliases as aliases
from tbe_compat import op_select


def _alias():
    aliases.install()
    return importlib.import_module("impl.util.util_select_op_base")


def test_alias_is_the_tbe_compat_module_names():
    mod = _alias()
    for name in ("gen_param", "get_dynamic_param_in_json", "get_op_cal_info", "get_split_n_info",
                 "SplitInput", "SplitOutput", "ReduceInput", "ReduceOutput"):
        assert getattr(mod, name) is getattr(op_select, name)


def test_op_select_format_json():
    mod = _alias()
    params = [mod.gen_param(classify="input0", name="x", datatype="float16,float32", format="ND,ND"),
              mod.gen_param("output0", "y", "float16,float32", "ND,ND", unknownshape_format="ND,ND"),
              mod.gen_param("input1", "z", "int32", None)]
    got = json.loads(mod.get_dynamic_param_in_json(params))
    assert got == {"input0": {"name": "x", "dtype": "float16,float32", "format": "ND,ND"},
                   "output0": {"name": "y", "dtype": "float16,float32", "format": "ND,ND",
                               "unknownshape_format": "ND,ND"},
                   "input1": {"name": "z", "dtype": "int32"}}


def test_op_cal_info_json():
    mod = _alias()
    split = [[mod.SplitInput([0, [0], [-1], [-1]], [1, [0], [-1], [-1]]), mod.SplitOutput([0, [0]])]]
    reduce_ = [[mod.ReduceInput([0, [1]]), mod.ReduceOutput([0, 1, False])]]
    got = json.loads(mod.get_op_cal_info(split, reduce_, 0, 0))
    assert got == {"_op_slice_info": {
        "splitMaps": [{"inputList": [{"idx": 0, "axis": [0], "headOverLap": [-1], "tailOverLap": [-1]},
                                     {"idx": 1, "axis": [0], "headOverLap": [-1], "tailOverLap": [-1]}],
                       "outputList": [{"idx": 0, "axis": [0]}]}],
        "reduceMaps": [{"inputList": [{"idx": 0, "axis": [1]}],
                        "outputList": [{"idx": 0, "reduceType": 1, "isAtomic": False}]}],
        "l1FusionEnable": 0, "minTbeL1Space": 0}}
    n_info = json.loads(mod.get_split_n_info([0], [0]))["_op_slice_info"]["splitMaps"][0]
    assert n_info["inputList"][0]["axis"] == [0] and n_info["outputList"] == [{"idx": 0, "axis": [0]}]


KERNEL = '''
from tbe import tik
from impl.util.util_select_op_base import gen_param, get_dynamic_param_in_json
from impl.util.util_select_op_base import SplitInput, SplitOutput, get_op_cal_info


def op_select_format(x, y, kernel_name="neg_copy"):
    return get_dynamic_param_in_json([gen_param("input0", "x", "float16", "ND"),
                                      gen_param("output0", "y", "float16", "ND")])


def get_op_support_info(x, y, kernel_name="neg_copy"):
    return get_op_cal_info([[SplitInput([0, [0], [-1], [-1]]), SplitOutput([0, [0]])]])


def neg_copy(x, y, kernel_name="neg_copy"):
    ti = tik.Tik()
    xg = ti.Tensor("float16", (128,), name="x", scope=tik.scope_gm)
    yg = ti.Tensor("float16", (128,), name="y", scope=tik.scope_gm)
    ub = ti.Tensor("float16", (128,), name="ub", scope=tik.scope_ubuf)
    ti.data_move(ub, xg, 0, 1, 8, 0, 0)
    ti.vec_muls(128, ub, ub, -1.0, 1, 8, 8)
    ti.data_move(yg, ub, 0, 1, 8, 0, 0)
    ti.BuildCCE(kernel_name=kernel_name, inputs=[xg], outputs=[yg])
    return ti
'''


def test_kernel_file_importing_util_select_op_base_runs(tmp_path, monkeypatch):
    _alias()
    (tmp_path / "neg_copy_op.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("neg_copy_op", None)
    mod = importlib.import_module("neg_copy_op")
    assert json.loads(mod.op_select_format({}, {}))["input0"]["dtype"] == "float16"
    assert "_op_slice_info" in json.loads(mod.get_op_support_info({}, {}))
    x = np.arange(128, dtype=np.float16) - 64
    y, = mod.neg_copy({}, {}).tikdb.start_debug({"x": x}, interactive=False)
    assert np.array_equal(y, -x)
